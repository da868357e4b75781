"""Short quality labels of the weight formats, for the configurator's format list and the quantization matrix (the
seed's "Q4_K_M (4-Bit — Empfohlen)", "Q8_0 (8-Bit — Nahezu verlustfrei)", "Q3_K_M (3-Bit — Wenig VRAM)").

A label is the format's nominal bit width and, where one applies, a word for its quality. The words follow llama.cpp's
own table of perplexity increases (ggml-org/llama.cpp tools/quantize/quantize.cpp, QUANT_OPTIONS, "ppl @
Llama-3-8B"): Q8_0 +0.0026, Q6_K +0.0217, Q5_K_M +0.0569, Q4_K_M +0.1754, Q4_K_S +0.2689, Q3_K_L +0.5562, Q3_K_M
+0.6569, Q3_K_S +1.6321, Q2_K +3.5199 (F16 +0.0020 and BF16 -0.0050 on Mistral-7B). Formats that table gives no
perplexity for (i-quants, Unsloth's dynamic mixes, vLLM's checkpoints) take the word of the K-quant of their bit width,
as the catalog's quality notes describe them (catalog/seed/quant_formats.json). Q4_K_M is "recommended": the format
most GGUF repositories lead with and this site's default (reports.sizing.specs.Scenario.quant).

The width is the nominal class for every format ("4-bit" for Q4_K_M, IQ4_XS, AWQ alike), not the effective bits per
weight (Q4_K_M 4.89, IQ4_XS 4.46 on Llama-3.1-8B: reports.sizing.quant): IQ4_XS read "4.25-bit" beside Q4_K_M's
"4-bit", as if it were the larger one. A mixed checkpoint without a measured perplexity (FP8_FP4: FP4 experts, FP8
elsewhere) is "lossless" only as the model's released format (DeepSeek-V4), where it is the reference itself; any
format is when it is the model's native one (reports.sizing.estimate.native_format).
"""

from __future__ import annotations

import re
from functools import lru_cache

from django.utils.translation import get_language, gettext, gettext_lazy as _

from reports import formatting
from reports.sizing.estimate import native_format
from reports.sizing.specs import ModelSpec

QUALITY_WORDS = {
    "lossless": _("lossless"),  # F16 +0.0020, BF16 -0.0050 ppl
    "near-lossless": _("near-lossless"),  # Q8_0 +0.0026 ppl
    "high": _("high precision"),  # Q6_K +0.0217 ppl
    "balanced": _("balanced"),  # Q5_K_M +0.0569 ppl
    "recommended": _("recommended"),  # Q4_K_M +0.1754 ppl
    "compact": _("compact"),  # IQ4_XS: 4.46 bits per weight on Llama-3.1-8B, Q4_K_M 4.89
    "low-memory": _("low VRAM"),  # Q3_K_M +0.6569 ppl
    "extreme": _("extreme"),  # Q2_K +3.5199 ppl; 1-bit i-quants are worse
}

# Formats whose name does not start with their bit width (the others: "Q4_K_M" → 4, "IQ2_XXS" → 2, "UD-Q2_K_XL" → 2).
NAMED_BITS = {"F32": "32", "F16": "16", "BF16": "16", "FP16": "16", "FP8": "8", "MXFP4": "4", "MXFP4_MOE": "4",
              "FP8_FP4": "4/8", "AWQ": "4", "GPTQ": "4"}
# The quality word of a format, by name; otherwise by bit width (BITS_QUALITY); the model's released format: lossless.
NAMED_QUALITY = {"Q4_K_M": "recommended", "IQ4_XS": "compact"}
BITS_QUALITY = {"32": "lossless", "16": "lossless", "8": "near-lossless", "6": "high", "5": "balanced",
                "3": "low-memory", "2": "extreme", "1": "extreme"}  # 4 bits: only Q4_K_M and IQ4_XS have a word


def quant_bits(name: str) -> str | None:
    """The nominal bit width of a format as text ("4", "4.25", "16"), None when the name does not tell."""
    if name in NAMED_BITS:
        return NAMED_BITS[name]
    match = re.match(r"(?:UD-)?I?Q(\d)", name)
    return match.group(1) if match else None


def quant_quality(name: str, model: ModelSpec | None = None) -> str:
    """"4-bit — recommended", "3-bit — low VRAM", "4-bit" (in the active language; German "4 Bit – empfohlen");
    "" for an unknown format. `model`: the model the format is offered for (its released format is lossless)."""
    # A page labels ~50 formats in its select and matrix: one label per (format, released?, language).
    return _quality(name, model is not None and native_format(model) == name, get_language())


@lru_cache(maxsize=1024)
def _quality(name: str, native: bool, language: str) -> str:
    bits = quant_bits(name)
    if bits is None:
        return ""
    word = "lossless" if native else NAMED_QUALITY.get(name) or BITS_QUALITY.get(bits)
    shown = "/".join(formatting.exact(float(part), language) for part in bits.split("/"))
    width = gettext("%(bits)s-bit") % {"bits": shown}
    if not word:
        return width
    # The dash as each language writes it: English "—", German "–" with spaces.
    return gettext("%(width)s — %(quality)s") % {"width": width, "quality": QUALITY_WORDS[word]}


def quant_option_label(name: str, display_name: str | None = None, model: ModelSpec | None = None) -> str:
    """The format list's option: "Q4_K_M (4-bit — recommended)"."""
    return _option_label(display_name or name, quant_quality(name, model))


def quant_option_labels(names: list[str], model: ModelSpec | None = None) -> list[tuple[str, str]]:
    """(name, option) for each format of the list, as quant_option_label gives them: the model's released format
    and the language are looked up once for the list (some 40 formats), not once per format."""
    native, language = native_format(model) if model is not None else None, get_language()
    return [(name, _option_label(name, _quality(name, name == native, language))) for name in names]


def _option_label(shown: str, quality: str) -> str:
    return f"{shown} ({quality})" if quality else shown
