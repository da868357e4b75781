"""Translated labels for engine codes (verdicts, memory segments, layer kinds), as tags: cheaper than includes
in the report's loops."""

from __future__ import annotations

import re
from functools import lru_cache

from django import template
from django.utils.html import escape, format_html
from django.utils.translation import get_language, gettext, pgettext, pgettext_lazy
from django.utils.translation import gettext_lazy as _

from catalog.models import AttentionKind
from reports import formatting, quant_labels
from reports.sizing.fit import TIGHT_BUFFER

register = template.Library()

# The engines' display names: "vllm" reads "vLLM" (also the configurator's choices, forms.ENGINES).
ENGINE_NAMES = {"llama.cpp": "llama.cpp", "vllm": "vLLM"}

VERDICT_SHORT = {"fits": _("fits"), "tight": _("tight"), "unified": _("fits (unified)"), "exceeds": _("exceeds"),
                 "unsupported": _("format not supported"), "unsizable": _("not sizable here")}
# The fit card's banner; also the FAQ's verdict sentence (a sentence reads right in FAQPage JSON-LD, a pill does not).
VERDICT_TEXT = {"fits": _("Fits with safe headroom"), "tight": _("Tight headroom (< %(spare)s buffer)"),
                "unified": _("Fits in unified memory (bandwidth-limited)"), "exceeds": _("Exceeds available GPU memory")}
SEGMENTS = {"weights": _("Model weights"), "weights_kept": _("Model weights not offloaded"), "kv": _("KV cache & state"),
            "kv_kept": _("KV cache & state on the GPU"), "runtime": _("Runtime & activation buffers"),
            "offload": _("System-RAM offload")}
# Runtime terms as the engine names them (runtime.RuntimeTerm.name: llama.cpp's and vLLM's own words).
RUNTIME_TERMS = {"compute buffer": _("compute buffer"), "host compute buffer": _("host compute buffer"),
                 "output buffer": _("output buffer"), "device context": _("device context"),
                 "activation peak": _("activation peak"), "weights": _("weights"),
                 "non-torch memory": _("non-torch memory"), "CUDA graphs": _("CUDA graphs")}
# Billing terms of the catalog's cloud offers (CloudOffer.billing); others are shown as entered in the admin.
BILLING = {"per-second": _("per second"), "on-demand": _("on demand"), "spot": _("spot"),
           "spot / on-demand": _("spot / on demand"), "hourly": _("hourly"), "reserved": _("reserved")}
# Accelerator.architecture slugs as the vendors name the architectures (product names: not translated).
ARCHITECTURES = {"ampere": "Ampere", "ada": "Ada Lovelace", "hopper": "Hopper", "blackwell": "Blackwell",
                 "blackwell-datacenter": _("Blackwell (data center)"), "cdna3": "CDNA 3", "cdna4": "CDNA 4",
                 "rdna3": "RDNA 3", "rdna3.5": "RDNA 3.5", "rdna4": "RDNA 4", "xe2": "Xe2", "gaudi3": "Gaudi 3",
                 "ascend-310p": "Ascend 310P"}
LAYER_KINDS = {"full": _("Full attention"), "sliding": _("Sliding-window attention"),
               "chunked": _("Chunked local attention"), "mla": _("Latent attention (MLA)"),
               "dsa_indexer": _("Sparse-attention indexer"), "linear": _("Linear attention state"),
               "mamba": _("Mamba state"), "conv": _("Convolution state"),
               "dsv4_window": _("Sliding window (every layer)"), "csa": _("Compressed cache, 4× (CSA)"),
               "csa_indexer": _("Indexer keys (CSA)"), "hca": _("Compressed cache, 128× (HCA)"),
               "dsv4_state": _("Compressor state"), "dsv4_window_state": _("Sliding window and compressor state"),
               "group_padding": _("Padded layer slots (vLLM groups)")}


# The qualifiers the providers' instance names carry in the catalog (CloudOffer.instance, English as the providers
# write them), longest first so that "cheapest verified host" is not read as "Verified Host". Product names
# (Community Cloud, Secure Cloud, p5.48xlarge) stay as they are; a qualifier not listed here is shown as entered.
INSTANCE_TERMS = (
    ("p5.48xlarge is sold as 8 GPUs", _("p5.48xlarge is sold as 8 GPUs")),
    ("cheapest verified host", _("cheapest verified host")),
    ("Dedicated Instance", _("Dedicated Instance")),
    ("with InfiniBand", _("with InfiniBand")),
    ("per GPU-hour", _("per GPU-hour")),
    ("Verified Host", _("Verified Host")),
    ("marketplace", _("marketplace")),
    ("on-demand", _("on demand")),
    ("reserved", _("reserved")),
)
_INSTANCE_TERM = re.compile("|".join(re.escape(term) for term, _label in INSTANCE_TERMS))


@register.filter
def offer_instance(instance: str) -> str:
    """A cloud offer's instance name with its qualifiers in the page's language (Verified Host → Verifizierter
    Host, as seed 000 writes them); the GPU and product names are kept."""
    return offer_instance_text(instance, get_language())


# The labels below are cached per (text, language), and escaped for HTML there (as safe text, which the template
# writes as it is): a report page repeats the same ones (some 30 offers in the cloud table, a dozen verdicts in the
# matrix) and each translation looks through every message catalog.
@lru_cache(maxsize=512)
def offer_instance_text(instance: str, language: str) -> str:
    """|offer_instance in a given language."""
    labels = {term: label for term, label in INSTANCE_TERMS}
    return escape(_INSTANCE_TERM.sub(lambda match: str(labels[match.group(0)]), instance))


@register.simple_tag
def verdict_pill(verdict: str) -> str:
    return _verdict_pill(verdict, get_language())


@lru_cache(maxsize=64)
def _verdict_pill(verdict: str, language: str) -> str:
    return format_html('<span class="verdict-pill verdict-{}">{}</span>', verdict, VERDICT_SHORT.get(verdict, verdict))


@register.filter
def verdict_text(verdict: str) -> str:
    if verdict == "tight":  # the engine's threshold (fit.TIGHT_BUFFER), in the visitor's number format
        return str(VERDICT_TEXT["tight"]) % {"spare": formatting.percent(TIGHT_BUFFER, get_language())}
    return str(VERDICT_TEXT.get(verdict, verdict))


@register.filter
def segment_label(key: str) -> str:
    return _segment_label(key, get_language())


@lru_cache(maxsize=64)
def _segment_label(key: str, language: str) -> str:
    return escape(str(SEGMENTS.get(key, key)))


# The catalog cites the product's earlier pages (catalog/seed/README.md: "seed page …") where no vendor source was
# found; visitors cannot follow "../seeds/ 001", so those citations read as what they are.
EARLIER_EDITION = _("the earlier edition of this site (unverified: no vendor datasheet found)")


@register.filter
def public_source(text: str) -> str:
    """A catalog source or price note as a visitor can read it: internal seed-page citations become
    EARLIER_EDITION; anything else is shown as entered."""
    if isinstance(text, str) and text.lower().startswith("seed page"):
        return str(EARLIER_EDITION)
    return text


# The status word that starts some benchmark rows' notes (reports/data/accuracy.json: "skipped: …"); the rest of
# the note is the benchmark's English detail.
NOTE_STATUS = {"skipped": _("skipped"), "informational": _("informational"),
               "published size used": _("published size used"), "excluded": _("excluded")}


_NOTE_STATUS_PATTERN = re.compile(r"^(" + "|".join(map(re.escape, NOTE_STATUS)) + r")\b([^:]*: )")


def _note_parts(note: str) -> tuple[str, str]:
    """("übersprungen: ", "no KV token figure …") from "skipped: no KV token figure …": the status word translated,
    with what stands between it and its colon ("excluded (-6.6 %): …"); ("", note) for any other note."""
    match = _NOTE_STATUS_PATTERN.match(note)
    if not match:
        return "", note
    # The figures between the status and its colon in the visitor's number format ("ausgeschlossen (-6,6 %): ").
    between = _NOTE_NUMBER.sub(lambda m: m.group(1) + formatting.number(
        float(m.group(2)), get_language(), len(m.group(3))), match.group(2))
    return str(NOTE_STATUS[match.group(1)]) + between, note[match.end():]


_NOTE_NUMBER = re.compile(r"([+-]?)(\d+\.(\d+))")


@register.filter
def note_status(note: str) -> str:
    """The translated status of a benchmark row's note with its colon ("skipped: " → "übersprungen: "), or ""."""
    return _note_parts(note or "")[0]


@register.filter
def note_detail(note: str) -> str:
    """A benchmark row's note without its status word (stays in the benchmark's English)."""
    return _note_parts(note or "")[1]


@register.filter
def kv_dtype_label(kv_dtype: str) -> str:
    """The configurator's name of a KV-cache type (FP16, Q8_0 (8-bit), …)."""
    from reports.forms import KV_DTYPES

    return str(dict(KV_DTYPES).get(kv_dtype, kv_dtype))


@register.filter
def runtime_term_label(name: str) -> str:
    return str(RUNTIME_TERMS.get(name, name))


# throughput.backend_class: the calibrated classes by name; "other" (SYCL, CANN, ...) borrows Vulkan's constants.
BACKEND_CLASSES = {"cuda": "CUDA", "rocm": "ROCm", "metal": "Metal", "vulkan": "Vulkan",
                   "other": _("Vulkan, whose constants stand in for backends without measurements")}


@register.filter
def backend_class_label(name: str) -> str:
    return str(BACKEND_CLASSES.get(name, name))


@register.filter
def billing_label(billing: str) -> str:
    return billing_label_text(billing, get_language())


def billing_label_text(billing: str, language: str) -> str:
    """|billing_label in a given language."""
    return _billing_label(billing, language) if billing else "—"



@lru_cache(maxsize=64)
def _billing_label(billing: str, language: str) -> str:
    return escape(str(BILLING.get(billing, billing)))


@register.filter
def architecture_label(slug: str) -> str:
    if not slug:
        return str(_("not published"))
    return str(ARCHITECTURES.get(slug, slug))


@register.filter
def layer_kind_label(kind: str) -> str:
    return str(LAYER_KINDS.get(kind, kind))


@register.filter
def attention_label(kind: str) -> str:
    """The engine's attention kind (mla, hybrid, sliding, gqa, mha, mqa) as the catalog names it."""
    return str(dict(AttentionKind.choices).get(kind, "")) if kind else str(_("attention type not published"))


@register.filter
def model_architecture_label(page) -> str:
    """The attention kind, and "mixture of experts" for MoE models (seed: "MLA MoE", "Sparse MoE + GQA")."""
    attention = attention_label(page.attention)
    return gettext("%(attention)s, mixture of experts (MoE)") % {"attention": attention} if page.is_moe else attention


@register.filter
def gpu_count(name: str, gpus) -> str:
    """"8 × H100 80GB SXM" for a configuration of several accelerators; one is its name."""
    return f"{gpus} × {name}" if gpus and int(gpus) > 1 else name


@register.filter
def recommendation_url(page, choice) -> str:
    """A recommended accelerator's report in the configuration it was recommended for (ReportPage)."""
    return page.recommendation_url(choice.hardware, choice.count)


@register.filter
def engine_label(engine: str) -> str:
    return ENGINE_NAMES.get(engine, engine)


# The columns of vLLM's quantization table (estimate.vllm_platform).
VLLM_PLATFORM_NAMES = {"amd-gpu": _("AMD GPUs"), "intel-gpu": _("Intel GPUs"), "intel-gaudi": _("Intel Gaudi")}


@register.filter
def vllm_platform_label(platform: str) -> str:
    return VLLM_PLATFORM_NAMES.get(platform, platform)


# The words of the engine's formula strings (RuntimeTerm.explanation, KvTerm.explanation: sizing/runtime.py,
# sizing/kv_cache.py), which stay English in the engine (no Django there) and are translated here, word by word:
# numbers, units, flags and code names (n_vocab, max_num_batched_tokens, q8_0) stay as they are. Longest first, so
# "kv heads/rank" is one phrase before "kv heads"; a phrase matches whole words only ("tokens" is not the end of
# max_num_batched_tokens).
FORMULA_PHRASES = {
    # kv_cache.vllm_group_padding_terms: "vLLM groups layers 10 to a group: 52 sliding layers take 6 groups = …"
    "vLLM groups layers": pgettext_lazy("formula", "vLLM groups layers"),
    "to a group": pgettext_lazy("formula", "to a group"),
    "sliding layers": pgettext_lazy("formula", "sliding layers"),
    "full layers": pgettext_lazy("formula", "full layers"),
    "chunked layers": pgettext_lazy("formula", "chunked layers"),
    "on each of": pgettext_lazy("formula", "on each of"),
    "pipeline stages": pgettext_lazy("formula", "pipeline stages"),
    "take": pgettext_lazy("formula", "take"),
    "groups": pgettext_lazy("formula", "groups"),
    "slots": pgettext_lazy("formula", "slots"),
    "without a layer": pgettext_lazy("formula", "without a layer"),
    "vLLM's config hook for this model sets mamba_ssm_cache_dtype from its config": pgettext_lazy(
        "formula", "vLLM's config hook for this model sets mamba_ssm_cache_dtype from its config"),
    "vLLM's start-up check reserves more for the tokens in flight": pgettext_lazy(
        "formula", "vLLM's start-up check reserves more for the tokens in flight"),
    "llama.cpp keeps recurrent state in": pgettext_lazy("formula", "llama.cpp keeps recurrent state in"),
    "recurrent state in": pgettext_lazy("formula", "recurrent state in"),
    "no separate device context modelled": pgettext_lazy("formula", "no separate device context modelled"),
    "sliding window and compressor states": pgettext_lazy("formula", "sliding window and compressor states"),
    "the logits peak is not counted": pgettext_lazy("formula", "the logits peak is not counted"),
    "vocabulary and width unknown": pgettext_lazy("formula", "vocabulary and width unknown"),
    "before vLLM's memory snapshot": pgettext_lazy("formula", "before vLLM's memory snapshot"),
    "subtracted from the KV budget": pgettext_lazy("formula", "subtracted from the KV budget"),
    "outside the budget, in the (1 − utilization) headroom": pgettext_lazy(
        "formula", "outside the budget, in the (1 − utilization) headroom"),
    "enforce_eager: no graphs": pgettext_lazy("formula", "enforce_eager: no graphs"),
    "independent of context": pgettext_lazy("formula", "independent of context"),
    "not split by TP": pgettext_lazy("formula", "not split by TP"),
    "layers per rank": pgettext_lazy("formula", "layers per rank"),
    "per sequence": pgettext_lazy("formula", "per sequence"),
    "sequences": pgettext_lazy("formula", "sequences"),
    "sequence": pgettext_lazy("formula", "sequence"),
    "kv heads/rank": pgettext_lazy("formula", "kv heads/rank"),
    "kv heads": pgettext_lazy("formula", "kv heads"),
    "latent head": pgettext_lazy("formula", "latent head"),
    "layers": pgettext_lazy("formula", "layers"),
    "B/token/GPU": pgettext_lazy("formula", "B/token/GPU"),
    "B/token": pgettext_lazy("formula", "B/token"),
    "tokens": pgettext_lazy("formula", "tokens"),
    "cells": pgettext_lazy("formula", "cells"),
    "window": pgettext_lazy("formula", "window"),
    "pages of": pgettext_lazy("formula", "pages of"),
    "with max_num_batched_tokens": pgettext_lazy("formula", "with max_num_batched_tokens"),
    "logits peak": pgettext_lazy("formula", "logits peak"),
    "KQ mask": pgettext_lazy("formula", "KQ mask"),
    "sampler warm-up": pgettext_lazy("formula", "sampler warm-up"),
    "requests": pgettext_lazy("formula", "requests"),
    "vocab": pgettext_lazy("formula", "vocab"),
    "probabilities": pgettext_lazy("formula", "probabilities"),
    "noise": pgettext_lazy("formula", "noise"),
    "conv elements": pgettext_lazy("formula", "conv elements"),
    "state elements": pgettext_lazy("formula", "state elements"),
    "elements": pgettext_lazy("formula", "elements"),
    "state": pgettext_lazy("formula", "state"),
    "model dtype": pgettext_lazy("formula", "model dtype"),
    "capture sizes": pgettext_lazy("formula", "capture sizes"),
    "entries": pgettext_lazy("formula", "entries"),
    "per": pgettext_lazy("formula", "per"),
    "page": pgettext_lazy("formula", "page"),
    "blocks": pgettext_lazy("formula", "blocks"),
    "forward pass": pgettext_lazy("formula", "forward pass"),
    "FFN width": pgettext_lazy("formula", "FFN width"),
    "custom all-reduce": pgettext_lazy("formula", "custom all-reduce"),
    "CUDA logs": pgettext_lazy("formula", "CUDA logs"),
    "BLAS and collectives": pgettext_lazy("formula", "BLAS and collectives"),
    "DSA indexer key": pgettext_lazy("formula", "DSA indexer key"),
    "indexer keys": pgettext_lazy("formula", "indexer keys"),
    "indexer key": pgettext_lazy("formula", "indexer key"),
    "scales": pgettext_lazy("formula", "scales"),
    "assumed": pgettext_lazy("formula", "assumed"),
    "sourced range": pgettext_lazy("formula", "sourced range"),
    "on CUDA": pgettext_lazy("formula", "on CUDA"),
    "context": pgettext_lazy("formula", "context"),
    "K only, no V": pgettext_lazy("formula", "K only, no V"),
    "GiB per GPU": pgettext_lazy("formula", "GiB per GPU"),
    "and": pgettext_lazy("formula", "and"),
    "as": pgettext_lazy("formula", "as"),
    "vLLM's Triton top-k/top-p": pgettext_lazy("formula", "vLLM's Triton top-k/top-p"),
    "logits": pgettext_lazy("formula", "logits"),
    "cuda context": pgettext_lazy("formula", "cuda context"),
    "rocm context": pgettext_lazy("formula", "rocm context"),
    "pool blocks of": pgettext_lazy("formula", "pool blocks of"),
    "steady decode": pgettext_lazy("formula", "steady decode"),
    "scale": pgettext_lazy("formula", "scale"),
    "raw": pgettext_lazy("formula", "raw"),
    "masks": pgettext_lazy("formula", "masks"),
    "indexer scores": pgettext_lazy("formula", "indexer scores"),
    "heads": pgettext_lazy("formula", "heads"),
    "head": pgettext_lazy("formula", "head"),
    "queries and output": pgettext_lazy("formula", "queries and output"),
    "stream residuals": pgettext_lazy("formula", "stream residuals"),
    "MiB live": pgettext_lazy("formula", "MiB live"),
    "allocator gaps": pgettext_lazy("formula", "allocator gaps"),
    "compressor kv": pgettext_lazy("formula", "compressor kv"),
    "score in": pgettext_lazy("formula", "score in"),
    "no config.json": pgettext_lazy("formula", "no config.json"),
    "CSA attention": pgettext_lazy("formula", "CSA attention"),
    "hidden": pgettext_lazy("formula", "hidden"),
    "embeddings": pgettext_lazy("formula", "embeddings"),
    "CSA layers": pgettext_lazy("formula", "CSA layers"),
    "HCA layers": pgettext_lazy("formula", "HCA layers"),
}
# "replicated on 2 ranks": German puts the verb last ("auf 2 Rängen repliziert").
REPLICATED_ON_RANKS = re.compile(r"\breplicated on (\d+) ranks\b")
# A decimal point between digits (0.51 GiB), not in a version (v0.19, "vLLM ≥ 0.21") or a dotted name.
FORMULA_DECIMAL = re.compile(r"(?<![\w.])(?<!vLLM ≥ )(?<!vLLM < )(\d+)\.(\d+)(?![\w.])")


@lru_cache(maxsize=8)
def _formula_translation(language: str) -> tuple[re.Pattern | None, dict[str, str], str, str]:
    """The phrase pattern, the phrases in `language` (evaluated while it is active), its decimal symbol and its
    "replicated on N ranks"."""
    words = {english: str(translated) for english, translated in FORMULA_PHRASES.items()}
    words = {english: translated for english, translated in words.items() if translated != english}
    pattern = re.compile(r"(?<![\w/])(" + "|".join(re.escape(english) for english in sorted(words, key=len, reverse=True))
                         + r")(?![\w/])") if words else None
    return (pattern, words, formatting.decimal_symbol(language),
            pgettext("formula", "replicated on %(n)s ranks"))


@register.filter
def formula(text: str) -> str:
    """An engine formula in the visitor's language: its words translated (FORMULA_PHRASES), decimals with the
    language's decimal symbol; English is returned unchanged."""
    language = get_language()
    if not text or language == "en":
        return text
    pattern, words, decimal, replicated = _formula_translation(language)
    text = REPLICATED_ON_RANKS.sub(lambda match: replicated % {"n": match.group(1)}, text)
    if pattern is not None:
        text = pattern.sub(lambda match: words[match.group(1)], text)
    return FORMULA_DECIMAL.sub(lambda match: f"{match.group(1)}{decimal}{match.group(2)}", text) if decimal != "." \
        else text


@register.filter
def with_vendor(hardware) -> str:
    """"NVIDIA RTX 4090", but "MetaX C500 64GB" where the catalog's name already starts with the vendor (it read
    "MetaX MetaX C500 64GB", "Kunlunxin Kunlunxin P800 64GB")."""
    name, vendor = hardware.name, hardware.vendor
    return name if not vendor or name.casefold().startswith(vendor.casefold()) else f"{vendor} {name}"


@register.filter
def quant_quality(name: str, model=None) -> str:
    """A format's bit width and quality word: "4-bit — recommended" (reports.quant_labels); `model` (a ModelSpec):
    the model whose released format is lossless."""
    return quant_labels.quant_quality(str(name), model)
