"""Translated labels for engine codes (verdicts, memory segments, layer kinds), as tags: cheaper than includes
in the report's loops."""

from __future__ import annotations

from django import template
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from catalog.models import AttentionKind

register = template.Library()

VERDICT_SHORT = {"fits": _("fits"), "tight": _("tight"), "unified": _("fits (unified)"), "exceeds": _("exceeds")}
# The fit card's banner; also the FAQ's verdict sentence (a sentence reads right in FAQPage JSON-LD, a pill does not).
VERDICT_TEXT = {"fits": _("Fits with safe headroom"), "tight": _("Tight headroom (< 8 % buffer)"),
                "unified": _("Fits in unified memory (bandwidth-limited)"), "exceeds": _("Exceeds available GPU memory")}
SEGMENTS = {"weights": _("Model weights"), "kv": _("KV cache & state"), "runtime": _("Runtime & activation buffers"),
            "offload": _("System-RAM offload")}
LAYER_KINDS = {"full": _("Full attention"), "sliding": _("Sliding-window attention"),
               "chunked": _("Chunked local attention"), "mla": _("Latent attention (MLA)"),
               "dsa_indexer": _("Sparse-attention indexer"), "linear": _("Linear attention state"),
               "mamba": _("Mamba state"), "conv": _("Convolution state")}


@register.simple_tag
def verdict_pill(verdict: str) -> str:
    return format_html('<span class="verdict-pill verdict-{}">{}</span>', verdict, VERDICT_SHORT.get(verdict, verdict))


@register.filter
def verdict_text(verdict: str) -> str:
    return str(VERDICT_TEXT.get(verdict, verdict))


@register.filter
def segment_label(key: str) -> str:
    return str(SEGMENTS.get(key, key))


@register.filter
def layer_kind_label(kind: str) -> str:
    return str(LAYER_KINDS.get(kind, kind))


@register.filter
def attention_label(kind: str) -> str:
    """The engine's attention kind (mla, hybrid, sliding, gqa, mha, mqa) as the catalog names it."""
    return str(dict(AttentionKind.choices).get(kind, "")) if kind else str(_("not published"))


@register.filter
def report_url(page, hardware_slug: str) -> str:
    """The same report (catalog model or submitted config) on another accelerator."""
    return page.path_on(hardware_slug)

