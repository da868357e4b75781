"""Weight formats: ggml block types, llama-quantize file types with their per-tensor rules, native formats.

Sources (llama.cpp, read at commit 007dbbf):
- block sizes: ``ggml/src/ggml-common.h`` struct layouts (block_q4_K = 2 halves + 12 scales + 128 quants ...);
- which type each tensor of a file type gets: ``src/llama-quant.cpp`` ``llama_tensor_get_type_impl``
  (category rules), ``tensor_type_fallback`` (row length not a multiple of the block),
  ``tensor_allows_quantization`` (1-D, routers, conv kernels stay as converted: F32),
  ``llama_ftype_get_default_type`` (the base type of each file type).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Literal, Protocol

from .errors import SizingError


@dataclass(frozen=True)
class BlockType:
    """A ggml tensor type: ``block_bytes`` bytes hold ``block_weights`` weights (ggml-common.h)."""

    name: str  # ggml_type_name, e.g. "q4_K"
    block_weights: int
    block_bytes: int

    @property
    def bits_per_weight(self) -> float:
        return 8 * self.block_bytes / self.block_weights

    def row_bytes(self, row_length: int) -> int:
        """ggml_row_size: bytes of one row (row_length must be a multiple of the block)."""
        return row_length // self.block_weights * self.block_bytes


def _block(name: str, weights: int, nbytes: int) -> tuple[str, BlockType]:
    return name, BlockType(name, weights, nbytes)


# ggml/src/ggml-common.h; QK_K = 256, half = 2 bytes. Layout in the comment of each line.
GGML_TYPES: dict[str, BlockType] = dict(
    [
        _block("f32", 1, 4),
        _block("f16", 1, 2),
        _block("bf16", 1, 2),
        _block("q8_0", 32, 34),  # d + 32 int8
        _block("q5_1", 32, 24),  # d, m + qh[4] + 16
        _block("q5_0", 32, 22),  # d + qh[4] + 16
        _block("q4_1", 32, 20),  # d, m + 16
        _block("q4_0", 32, 18),  # d + 16
        _block("iq4_nl", 32, 18),  # d + 16
        _block("mxfp4", 32, 17),  # e8m0 scale + 16
        _block("q6_K", 256, 210),  # ql 128 + qh 64 + scales 16 + d
        _block("q5_K", 256, 176),  # d, dmin + scales 12 + qh 32 + qs 128
        _block("q4_K", 256, 144),  # d, dmin + scales 12 + qs 128
        _block("iq4_xs", 256, 136),  # d + scales_h 2 + scales_l 4 + qs 128
        _block("q3_K", 256, 110),  # hmask 32 + qs 64 + scales 12 + d
        _block("iq3_s", 256, 110),  # d + qs 64 + qh 8 + signs 32 + scales 4
        _block("iq3_xxs", 256, 98),  # d + 96
        _block("q2_K", 256, 84),  # scales 16 + qs 64 + d, dmin
        _block("iq2_s", 256, 82),  # d + qs 64 + qh 8 + scales 8
        _block("iq2_xs", 256, 74),  # d + 64 + scales 8
        _block("iq2_xxs", 256, 66),  # d + 64
        _block("iq1_m", 256, 56),  # qs 32 + qh 16 + scales 8
        _block("iq1_s", 256, 50),  # d + qs 32 + qh 16
    ]
)

Family = Literal["gguf", "gguf-dynamic", "native", "awq-gptq"]


@dataclass(frozen=True)
class QuantFormat:
    """One value of ``--quant``.

    ``bits_per_weight`` is the typical whole-model figure, used only for models known by their stated
    parameter count (no shapes). For GGUF file types it is llama.cpp's measured Llama-3.1-8B value
    (tools/quantize/README.md table) where published, else the base block type's bpw.
    """

    name: str
    family: Family
    bits_per_weight: float
    quality: str
    base_type: str | None = None  # gguf: llama_ftype_get_default_type(ftype)
    rule_from: str | None = None  # gguf-dynamic: the llama-quantize file type used when no size is published


def _gguf(name: str, base_type: str, bpw: float, quality: str) -> QuantFormat:
    return QuantFormat(name, "gguf", bpw, quality, base_type=base_type)


_GGUF_FORMATS = [
    _gguf(
        "F32",
        "f32",
        32.0,
        "Lossless, twice the size of the 16-bit checkpoint; only useful as a conversion step.",
    ),
    _gguf("F16", "f16", 16.0005, "Lossless for fp16/bf16-trained weights (GGUF, norms in F32)."),
    _gguf("Q8_0", "q8_0", 8.5008, "Practically lossless; the reference 8-bit GGUF."),
    _gguf("Q6_K", "q6_K", 6.5633, "Near-lossless; the quality ceiling of the k-quants."),
    _gguf("Q5_K_M", "q5_K", 5.7036, "Very good; hard to tell from 8-bit in most use."),
    _gguf("Q5_K_S", "q5_K", 5.5704, "Very good, slightly below Q5_K_M."),
    _gguf("Q5_1", "q5_1", 6.0, "Legacy 5-bit with offset; superseded by Q5_K."),
    _gguf("Q5_0", "q5_0", 5.5, "Legacy 5-bit; superseded by Q5_K."),
    _gguf("Q4_K_M", "q4_K", 4.8944, "Good; the usual default balance of size and quality."),
    _gguf("Q4_K_S", "q4_K", 4.6672, "Good, a little below Q4_K_M."),
    _gguf("Q4_1", "q4_1", 5.0, "Legacy 4-bit with offset; superseded by Q4_K."),
    _gguf("Q4_0", "q4_0", 4.5, "Legacy 4-bit; fast on CPUs and ARM, lower quality than Q4_K_M."),
    _gguf(
        "IQ4_XS", "iq4_xs", 4.4597, "Good; close to Q4_K_S at a smaller size (needs an importance matrix)."
    ),
    _gguf("IQ4_NL", "iq4_nl", 4.6818, "Good; non-linear 4-bit in 32-weight blocks."),
    _gguf("Q3_K_L", "q3_K", 4.2979, "Fair; noticeable loss on small models."),
    _gguf("Q3_K_M", "q3_K", 3.91, "Fair; noticeable loss on small models."),
    _gguf("Q3_K_S", "q3_K", 3.6429, "Weak on small models; usable on very large ones."),
    _gguf("IQ3_M", "iq3_s", 3.7628, "Fair; better than Q3_K_S at a similar size."),
    _gguf("IQ3_S", "iq3_s", 3.6606, "Fair to weak."),
    _gguf("IQ3_XS", "iq3_s", 3.4977, "Weak on small models."),
    _gguf("IQ3_XXS", "iq3_xxs", 3.2548, "Weak; for very large models only."),
    _gguf("Q2_K", "q2_K", 3.1593, "Poor on small models; large MoE models stay usable."),
    _gguf("Q2_K_S", "q2_K", 2.9697, "Poor; needs an importance matrix."),
    _gguf("IQ2_M", "iq2_s", 2.9294, "Poor; for very large models only."),
    _gguf("IQ2_S", "iq2_xs", 2.7403, "Poor; for very large models only."),
    _gguf("IQ2_XS", "iq2_xs", 2.5882, "Very lossy; for very large models only."),
    _gguf("IQ2_XXS", "iq2_xxs", 2.3824, "Very lossy; for very large models only."),
    _gguf("IQ1_M", "iq1_m", 2.1460, "Extremely lossy; a last resort for huge MoE models."),
    _gguf("IQ1_S", "iq1_s", 2.0042, "Extremely lossy; a last resort for huge MoE models."),
    # MXFP4_MOE (llama-quantize "MXFP4_MOE"): routed experts MXFP4, every other matrix Q8_0.
    _gguf(
        "MXFP4_MOE",
        "mxfp4",
        4.63,
        "MoE experts in 4-bit floating point (as gpt-oss was trained), the rest 8-bit; lossless for gpt-oss.",
    ),
]

# Native (safetensors) formats as vLLM / transformers load them.
_NATIVE_FORMATS = [
    QuantFormat("BF16", "native", 16.0, "Lossless: the released 16-bit checkpoint."),
    QuantFormat("FP16", "native", 16.0, "Lossless for most models (fp16 range can overflow on a few)."),
    QuantFormat(
        "FP8",
        "native",
        8.0 + 32 / (128 * 128),
        "Near-lossless: e4m3 weights with one fp32 scale per 128×128 block (DeepSeek-V3 style); "
        "embeddings, output head, norms and routers stay BF16.",
    ),
    QuantFormat(
        "MXFP4",
        "native",
        4.25,
        "gpt-oss native: MoE experts in MXFP4 (32 weights share an e8m0 scale), all other tensors BF16.",
    ),
    # DeepSeek-V4's released checkpoints (config.json quantization_config fp8 with 128×128 ue8m0-scaled blocks,
    # "expert_dtype": "fp4"): routed experts in FP4 e2m1 with one ue8m0 scale per 32 weights, the MXFP4 layout
    # (17 B per 32 weights); every other matrix as FP8 above.
    QuantFormat(
        "FP8_FP4",
        "native",
        4.25,
        "DeepSeek-V4 native: MoE experts in 4-bit floating point (one shared scale per 32 weights), the other "
        "matrices FP8 with 128×128 block scales; embeddings, output head and norms BF16.",
    ),
    # AutoAWQ / GPTQ: int4 weights, one fp16 scale and one packed int4 zero point per group of 128 inputs.
    QuantFormat(
        "AWQ",
        "awq-gptq",
        4.0 + (16 + 4) / 128,
        "Good: 4-bit with activation-aware scaling, group 128; embeddings and output head stay FP16.",
    ),
    QuantFormat(
        "GPTQ",
        "awq-gptq",
        4.0 + (16 + 4) / 128,
        "Good: 4-bit with error-compensating rounding, group 128; embeddings and output head stay FP16.",
    ),
]

QUANT_FORMATS: dict[str, QuantFormat] = {fmt.name: fmt for fmt in _GGUF_FORMATS + _NATIVE_FORMATS}

# Aliases users type for the same thing.
_ALIASES = {
    "FP32": "F32",
    "Q4_K": "Q4_K_M",
    "Q5_K": "Q5_K_M",
    "Q3_K": "Q3_K_M",
    "MXFP4_MOE": "MXFP4_MOE",
    "GGUF-F16": "F16",
}

# unsloth "Dynamic 2.0" (UD-*) files: per-layer recipes, not predictable from shapes. Without a published
# size the nearest llama-quantize file type is used (and the result says so).
_DYNAMIC_RULE_FROM = {
    "UD-IQ1_S": "IQ1_S",
    "UD-IQ1_M": "IQ1_M",
    "UD-IQ2_XXS": "IQ2_XXS",
    "UD-IQ2_M": "IQ2_M",
    "UD-IQ3_XXS": "IQ3_XXS",
    "UD-Q2_K_XL": "Q2_K",
    "UD-Q3_K_XL": "Q3_K_M",
    "UD-Q4_K_XL": "Q4_K_M",
    "UD-Q5_K_XL": "Q5_K_M",
    "UD-Q6_K_XL": "Q6_K",
    "UD-Q8_K_XL": "Q8_0",
}
for _name, _rule in _DYNAMIC_RULE_FROM.items():
    _base = QUANT_FORMATS[_rule]
    QUANT_FORMATS[_name] = QuantFormat(
        _name,
        "gguf-dynamic",
        _base.bits_per_weight,
        f"unsloth dynamic mix around {_rule}: important layers kept at higher "
        "precision; quality usually above plain " + _rule + ".",
        base_type=_base.base_type,
        rule_from=_rule,
    )


@lru_cache(maxsize=512)  # ~320 lookups per page of a dozen names; an unknown name raises and is not kept
def quant_format(name: str) -> QuantFormat:
    """The format for a ``--quant`` value (case-insensitive); SizingError naming --quant when unknown."""
    key = name.strip().upper()
    key = _ALIASES.get(key, key)
    try:
        return QUANT_FORMATS[key]
    except KeyError:
        known = ", ".join(sorted(QUANT_FORMATS))
        raise SizingError(f"--quant {name!r} is not a known format (known: {known})") from None


# ---------------------------------------------------------------------------------------------------------
# llama-quantize per-tensor rules (src/llama-quant.cpp)
# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GgufModelFacts:
    """The model hyper-parameters llama_tensor_get_type_impl consults."""

    architecture: str
    n_expert: int  # hparams.n_expert (0 for dense models)
    n_gqa: int  # n_head / n_head_kv of layer 0
    n_layer_all: int  # blocks in the file, MTP blocks included (init_quantize_state_counters)
    is_llama_70b: bool  # LLM_TYPE_70B: llama arch, 80 layers, GQA (llama_quant_model_from_metadata)
    # None: an importance matrix is used exactly when the file type requires one (IQ1/IQ2/IQ3_XXS, Q2_K_S:
    # tensor_requires_imatrix). This reproduces llama.cpp's tools/quantize/README.md Llama-3.1-8B table to
    # 4 decimals of bpw (its IQ4_NL/IQ4_XS rows carry the no-imatrix ffn_down bump to Q5_K).
    has_imatrix: bool | None = None
    experts_stay_mxfp4: bool = False  # gpt-oss: GGUF experts are converted MXFP4 and kept as such


class _TensorLike(Protocol):
    """What the rules read of a tensor (parameters.Tensor provides it)."""

    name: str
    layer: int | None
    shape: tuple[int, ...]
    quantizable: bool
    is_expert: bool


# tensor_requires_imatrix: these file types refuse to run without an importance matrix.
_REQUIRES_IMATRIX = frozenset(
    {"IQ1_S", "IQ1_M", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ2_M", "IQ3_XXS", "IQ3_XS", "Q2_K_S"}
)
_IQ_LOW = frozenset({"IQ2_XXS", "IQ2_XS", "IQ1_S", "IQ2_S", "IQ2_M", "IQ1_M"})
_OUTPUT_Q5K = frozenset({"IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S", "IQ2_S", "IQ2_M", "IQ1_M"})
_MOE8_ATTN_OUTPUT_Q5K = frozenset(
    {
        "Q2_K",
        "IQ3_XS",
        "IQ3_XXS",
        "Q3_K_S",
        "Q3_K_M",
        "IQ4_NL",
        "Q4_K_S",
        "Q4_K_M",
        "IQ3_S",
        "IQ3_M",
        "IQ4_XS",
    }
)
# tensor_type_fallback: block-256 types → a 32-block type of similar size.
_FALLBACK = {
    "iq1_s": "iq4_nl",
    "iq1_m": "iq4_nl",
    "iq2_xxs": "iq4_nl",
    "iq2_xs": "iq4_nl",
    "iq2_s": "iq4_nl",
    "iq3_xxs": "iq4_nl",
    "iq3_s": "iq4_nl",
    "iq4_xs": "iq4_nl",
    "q2_K": "q4_0",
    "q3_K": "q4_0",
    "q4_K": "q5_0",
    "q5_K": "q5_1",
    "q6_K": "q8_0",
}


def _category(name: str) -> str:
    """tensor_get_category on ``blk.N.<name>.weight`` (substring tests in the same order)."""
    if name == "output":
        return "output"
    if name == "token_embd":
        return "token_embd"
    for category in ("attn_qkv", "attn_kv_b", "attn_v", "attn_k", "attn_q", "attn_output"):
        if name == category:
            return category
    for category in ("ffn_up", "ffn_gate", "ffn_down"):
        if category in name:
            return category
    return "other"


def _use_more_bits(i_layer: int, n_layers: int) -> bool:
    # llama_tensor_get_type_impl lambda use_more_bits: first and last eighth, and every third layer between.
    return i_layer < n_layers // 8 or i_layer >= 7 * n_layers // 8 or (i_layer - n_layers // 8) % 3 == 2


class _Counters:
    def __init__(self) -> None:
        self.attention_wv = 0
        self.ffn_down = 0
        self.ffn_gate = 0
        self.ffn_up = 0


def _layer_of(tensor: _TensorLike, counter: int, facts: GgufModelFacts) -> int:
    # layer_info: with experts the layer comes from the tensor name, else from the running counter.
    if facts.n_expert > 1 and tensor.layer is not None:
        return tensor.layer
    return counter


def _output_type(ftype: str, base: str, row_length: int, facts: GgufModelFacts) -> str:
    if ftype == "MXFP4_MOE":
        return "q8_0"
    if facts.architecture == "falcon" or row_length % GGML_TYPES[base].block_weights:
        return "q8_0"
    if ftype in _OUTPUT_Q5K:
        return "q5_K"
    return base if base == "q8_0" else "q6_K"


def _token_embd_type(ftype: str, base: str) -> str:
    if ftype in ("IQ2_XXS", "IQ2_XS", "IQ1_S", "IQ1_M"):
        return "q2_K"
    if ftype in ("IQ2_S", "IQ2_M", "IQ3_XXS"):
        return "iq3_s"
    return base


def _low_iq_type(
    ftype: str, category: str, base: str, facts: GgufModelFacts, n: _Counters, n_ffn_down: int
) -> str:
    """The IQ1/IQ2 branch of llama_tensor_get_type_impl."""
    iq2s_or_m = ftype in ("IQ2_S", "IQ2_M")
    if category in ("attn_v", "attn_qkv", "attn_kv_b"):
        n.attention_wv += 1
        if facts.n_gqa >= 4 or facts.n_expert >= 4:
            return "q4_K"
        return "iq3_s" if iq2s_or_m else "q2_K"
    if facts.n_expert == 8 and category == "attn_k":
        return "q4_K"
    if category == "ffn_down":
        below = n.ffn_down < n_ffn_down // 8
        n.ffn_down += 1
        if below:
            return "iq3_s" if iq2s_or_m else "q2_K"
        return base
    if category == "attn_output":
        if facts.n_expert == 8:
            return "q5_K"
        if ftype in ("IQ1_S", "IQ1_M"):
            return "iq2_xxs"
        if iq2s_or_m:
            return "iq3_s"
    return base


def _attn_v_type(ftype: str, base: str, facts: GgufModelFacts, i: int, n: int) -> str:
    gqa4 = facts.n_gqa >= 4
    new = base
    if ftype == "Q2_K":
        new = "q4_K" if gqa4 else "q3_K"
    elif ftype == "Q2_K_S" and gqa4:
        new = "q4_K"
    elif ftype == "IQ3_XXS":
        new = "q4_K" if gqa4 else ("iq3_xxs" if facts.has_imatrix else "iq3_s")
    elif ftype in ("IQ3_XS", "IQ3_S") and gqa4:
        new = "q4_K"
    elif ftype == "IQ3_M":
        new = "q4_K"
    elif ftype == "Q3_K_M":
        new = "q5_K" if i < 2 else "q4_K"
    elif ftype == "Q3_K_L":
        new = "q5_K"
    elif ftype in ("IQ4_NL", "IQ4_XS") and gqa4:
        new = "q5_K"
    elif ftype in ("Q4_K_M", "Q5_K_M") and _use_more_bits(i, n):
        new = "q6_K"
    elif ftype == "Q4_K_S" and i < 4:
        new = "q5_K"
    if facts.is_llama_70b and new in ("q3_K", "q4_K"):
        new = "q5_K"  # 8 heads share attn_v in the 70B: more bits for almost no size
    if facts.n_expert == 8:
        new = "q8_0"
    return new


def _ffn_down_type(ftype: str, base: str, facts: GgufModelFacts, i: int, n: int) -> str:
    falcon = facts.architecture == "falcon"
    if ftype == "Q2_K":
        return "q3_K"
    if ftype == "Q2_K_S":
        return "q4_K" if i < n // 8 else base
    if ftype == "IQ3_XXS" and not facts.has_imatrix:
        return "q4_K" if i < n // 8 else "q3_K"
    if ftype == "Q3_K_M":
        if i < n // 16:
            return "q5_K"
        return "q4_K" if not falcon or _use_more_bits(i, n) else "q3_K"
    if ftype == "IQ3_M" and (i < n // 8 or (facts.n_expert == 8 and _use_more_bits(i, n))):
        return "q4_K"
    if ftype == "Q3_K_L":
        return "q4_K" if falcon else "q5_K"
    if ftype == "Q4_K_M":
        if falcon:
            return "q6_K" if i < n // 16 else "q5_K" if _use_more_bits(i, n) else "q4_K"
        return "q6_K" if _use_more_bits(i, n) else base
    if i < n // 8 and ftype in ("IQ4_NL", "IQ4_XS") and not facts.has_imatrix:
        return "q5_K"
    if ftype == "Q5_K_M" and _use_more_bits(i, n):
        return "q6_K"
    if ftype == "Q4_K_S" and not falcon and i < n // 8:
        return "q5_K"
    if ftype in ("Q4_0", "Q5_0") and facts.has_imatrix and i < n // 8:
        return "q4_1" if ftype == "Q4_0" else "q5_1"
    return base


def _attn_output_type(ftype: str, base: str, facts: GgufModelFacts) -> str:
    if facts.architecture == "falcon":
        return "q4_K" if ftype == "Q3_K_L" else base
    if facts.n_expert == 8:
        return "q5_K" if ftype in _MOE8_ATTN_OUTPUT_Q5K else base
    return {"Q2_K": "q3_K", "IQ3_XXS": "iq3_s", "Q3_K_M": "q4_K", "Q3_K_L": "q5_K", "IQ3_M": "q4_K"}.get(
        ftype, base
    )


def _rule_type(
    tensor: _TensorLike,
    ftype: str,
    base: str,
    facts: GgufModelFacts,
    tied: bool,
    n: _Counters,
    n_attention_wv: int,
) -> str:
    """llama_tensor_get_type_impl for one quantizable tensor (counters advance as in llama.cpp)."""
    category = _category(tensor.name)
    n_layer = facts.n_layer_all
    if category == "output" or (tied and category == "token_embd"):
        return _output_type(ftype, base, tensor.shape[0], facts)
    if ftype == "MXFP4_MOE":
        return "mxfp4" if len(tensor.shape) == 3 else "q8_0"
    if category == "token_embd":
        return _token_embd_type(ftype, base)
    if ftype in _IQ_LOW:
        return _low_iq_type(ftype, category, base, facts, n, n_layer)
    if category in ("attn_v", "attn_qkv", "attn_kv_b"):
        new = _attn_v_type(ftype, base, facts, n.attention_wv, n_attention_wv)
        n.attention_wv += 1
        return new
    if category == "attn_k":
        if facts.n_expert == 8:
            return "q8_0"
        return {"IQ3_XS": "iq3_xxs", "IQ3_XXS": "iq2_s"}.get(ftype, base)
    if category == "attn_q":
        return {"IQ3_XS": "iq3_xxs", "IQ3_XXS": "iq2_s"}.get(ftype, base)
    if category == "ffn_down":
        new = _ffn_down_type(ftype, base, facts, _layer_of(tensor, n.ffn_down, facts), n_layer)
        n.ffn_down += 1
        return new
    if category == "attn_output":
        return _attn_output_type(ftype, base, facts)
    if category in ("ffn_gate", "ffn_up"):
        counter = n.ffn_gate if category == "ffn_gate" else n.ffn_up
        i = _layer_of(tensor, counter, facts)
        if category == "ffn_gate":
            n.ffn_gate += 1
        else:
            n.ffn_up += 1
        if ftype == "IQ3_XS" and n_layer // 8 <= i < 7 * n_layer // 8:
            return "iq3_xxs"
    return base


def _fallback(ggml_type: str, row_length: int) -> str:
    """tensor_type_fallback: a row must hold whole blocks, else use a compatible type (or F16)."""
    if row_length % GGML_TYPES[ggml_type].block_weights == 0:
        return ggml_type
    replacement = _FALLBACK.get(ggml_type, "f16")
    if row_length % GGML_TYPES[replacement].block_weights:
        return "f16"
    return replacement


def gguf_tensor_types(
    tensors: Sequence[_TensorLike],
    ftype: str,
    facts: GgufModelFacts,
    *,
    token_embedding_type: str | None = None,
    output_tensor_type: str | None = None,
) -> tuple[str, ...]:
    """The ggml type llama-quantize gives each tensor of a file of type ``ftype`` (e.g. "Q4_K_M").

    ``tensors`` must be in file order (global tensors, then block by block: llama_model_loader sorts
    tensor names by block number), because the attn_v / ffn_down rules count tensors as they come.
    ``token_embedding_type`` / ``output_tensor_type`` are llama-quantize's --token-embedding-type /
    --output-tensor-type overrides (ggml type names, e.g. "f16").
    """
    fmt = quant_format(ftype)
    if fmt.family not in ("gguf", "gguf-dynamic"):
        raise SizingError(f"--quant {ftype}: not a GGUF file type")
    ftype = fmt.rule_from or fmt.name
    base = fmt.base_type or "f16"
    if facts.has_imatrix is None:
        facts = replace(facts, has_imatrix=ftype in _REQUIRES_IMATRIX)
    quantized = base not in ("f32", "f16", "bf16")
    tied = not any(t.name == "output" for t in tensors)
    n_attention_wv = sum(1 for t in tensors if _category(t.name) in ("attn_v", "attn_qkv", "attn_kv_b"))
    counters = _Counters()
    types = []
    for tensor in tensors:
        if not tensor.quantizable:
            types.append("f32")  # 1-D, biases, routers, conv kernels: kept as converted
        elif facts.experts_stay_mxfp4 and tensor.is_expert:
            types.append("mxfp4")
        elif tensor.name == "token_embd" and token_embedding_type:
            types.append(token_embedding_type)
        elif tensor.name == "output" and output_tensor_type:
            types.append(output_tensor_type)
        elif not quantized:
            types.append(base)
        else:
            chosen = _rule_type(tensor, ftype, base, facts, tied, counters, n_attention_wv)
            types.append(_fallback(chosen, tensor.shape[0]))
    return tuple(types)
