"""Bytes of a model's weights in a given format, split by tensor class, and bytes read per decoded token.

GGUF file types are sized tensor by tensor with llama-quantize's rules (``quant.gguf_tensor_types``):
bytes = rows × ggml_row_size(type, row length) (ggml.c ``ggml_nbytes``). Native formats follow the
checkpoint layouts named in ``quant.py``. ``total_bytes`` is the tensor data, which is what llama-bench
prints as "size" and what a runtime holds; ``file_bytes`` adds the GGUF header (tokenizer and metadata).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from .errors import SizingError
from .parameters import Tensor, count_parameters, tensor_inventory
from .quant import GGML_TYPES, GgufModelFacts, QuantFormat, gguf_tensor_types, quant_format
from .specs import ModelSpec

WeightSource = Literal["per-tensor rule", "published file size", "stated parameters × format bpw (estimated)"]

# GGUF header size per vocabulary entry. The header is dominated by the tokenizer (token strings, scores or
# types, BPE merges), so it scales with the vocabulary. Calibrated on one exact file: Llama-3-8B-Instruct BF16
# is 16,068,890,912 bytes (bench/data/gguf_sizes.csv, ddh0/UnquantizedEmbeddingTesting sizes.txt) while its
# tensors hold 16,061,054,976 bytes (8,030,261,248 params × 2 B + 266,240 F32 norm weights × 2 B more):
# 7,835,936 B of header for 128,256 tokens = 61 B per token.
GGUF_HEADER_BYTES_PER_VOCAB_ENTRY = 61

# FP8 checkpoints (DeepSeek-V3 config quantization_config weight_block_size [128, 128]): one fp32
# weight_scale_inv per 128 × 128 block of each linear weight.
FP8_BLOCK = 128
FP8_SCALE_BYTES = 4
# AutoAWQ / GPTQ (w_bit 4, q_group_size 128): per group of 128 input channels and per output channel, an fp16
# scale (2 B) and an int4 zero point packed 8 per int32 (0.5 B); weights packed 8 per int32 (0.5 B each).
INT4_GROUP = 128
INT4_GROUP_BYTES = 2 + 0.5


@dataclass(frozen=True)
class WeightBreakdown:
    """Weights of one model in one format. Bytes; ``by class`` fields add up to ``total_bytes``."""

    quant: str
    total_bytes: float  # tensor data (llama-bench "size"; what the runtime loads)
    file_bytes: float  # total + GGUF header estimate (equal to total for native formats)
    embedding_bytes: float
    output_bytes: float
    attention_bytes: float  # every token mixer: attention, MLA, delta-net, Mamba, short conv
    dense_ffn_bytes: float
    routed_expert_bytes: float
    shared_expert_bytes: float
    other_bytes: float  # norms, biases, routers
    mtp_bytes: float  # part of total only when include_mtp
    # Read from memory per decoded token: every non-expert tensor, the experts_per_token / num_experts share
    # of the routed experts, and one row of token_embd (a lookup, not a matrix product).
    active_bytes_per_token: float
    parameters: float  # parameters in total_bytes
    source: WeightSource
    rule_from: str | None = (
        None  # set when another file type's rules stood in (UD-* without a published size)
    )

    @property
    def is_gguf(self) -> bool:
        """Sized by llama-quantize's per-tensor rules (GGUF), not by a checkpoint format's storage (FP8, AWQ, …)."""
        return quant_format(self.quant).family in ("gguf", "gguf-dynamic")

    @property
    def effective_bpw(self) -> float:
        return 8 * self.total_bytes / self.parameters if self.parameters else 0.0

    @property
    def expert_bytes(self) -> float:
        """Routed experts: what llama.cpp --n-cpu-moe / -ot exps=CPU moves to system RAM."""
        return self.routed_expert_bytes

    @property
    def non_expert_bytes(self) -> float:
        return self.total_bytes - self.routed_expert_bytes


@dataclass(frozen=True)
class LayerBytes:
    layer: int | None  # None: global tensors (token_embd, output, output_norm)
    expert_bytes: float
    non_expert_bytes: float
    is_mtp: bool = False

    @property
    def total_bytes(self) -> float:
        return self.expert_bytes + self.non_expert_bytes


def _gguf_facts(spec: ModelSpec, n_layer_all: int) -> GgufModelFacts:
    if spec.attention is not None:
        n_gqa = spec.attention.num_heads // max(1, spec.attention.num_kv_heads)
    elif spec.mla is not None:
        n_gqa = spec.mla.num_heads  # MLA is converted as MQA (one KV head) by convert_hf_to_gguf.py
    else:
        n_gqa = 0
    is_llama_70b = (
        spec.architecture == "llama"
        and spec.num_layers == 80
        and spec.attention is not None
        and spec.attention.num_heads != spec.attention.num_kv_heads
    )
    return GgufModelFacts(
        architecture=spec.architecture,
        n_expert=spec.moe.num_experts if spec.moe else 0,
        n_gqa=n_gqa,
        n_layer_all=n_layer_all,
        is_llama_70b=is_llama_70b,
        experts_stay_mxfp4=spec.native_dtype == "mxfp4",
    )


def _gguf_bytes(tensor: Tensor, ggml_type: str) -> float:
    block = GGML_TYPES[ggml_type]
    return tensor.elements // tensor.row_length * block.row_bytes(tensor.row_length)


def _matrices(tensor: Tensor) -> int:
    return tensor.shape[2] if len(tensor.shape) == 3 else 1


def _fp8_bytes(tensor: Tensor) -> float:
    if not tensor.quantizable or tensor.group in ("embedding", "output"):
        return 2.0 * tensor.elements
    n_in, n_out = tensor.shape[0], tensor.shape[1]
    scales = math.ceil(n_in / FP8_BLOCK) * math.ceil(n_out / FP8_BLOCK) * _matrices(tensor)
    return tensor.elements + FP8_SCALE_BYTES * scales


def _int4_bytes(tensor: Tensor) -> float:
    if not tensor.quantizable or tensor.group in ("embedding", "output"):
        return 2.0 * tensor.elements
    n_in, n_out = tensor.shape[0], tensor.shape[1]
    groups = math.ceil(n_in / INT4_GROUP) * n_out * _matrices(tensor)
    return 0.5 * tensor.elements + INT4_GROUP_BYTES * groups


def _mxfp4_native_bytes(tensor: Tensor) -> float:
    block = GGML_TYPES["mxfp4"]
    if tensor.is_expert and tensor.quantizable and tensor.row_length % block.block_weights == 0:
        return _gguf_bytes(tensor, "mxfp4")
    return 2.0 * tensor.elements


# Tensors besides the routed experts that an MXFP4 checkpoint quantizes, by its quant_method: compressed-tensors
# quantizes every Linear outside the config's ignore list; Kimi K3's (the catalog's one such checkpoint) names the
# attention, shared experts, dense MLP and head, which leaves the latent MoE's down/up projections in MXFP4 too.
MXFP4_ALSO_QUANTIZED = {"compressed-tensors": frozenset({"ffn_latent_down", "ffn_latent_up"})}


def _native_bytes(fmt: QuantFormat, tensors: tuple[Tensor, ...], quant_method: str = "") -> list[float]:
    if fmt.name in ("BF16", "FP16"):
        return [2.0 * t.elements for t in tensors]
    if fmt.name == "FP8":
        return [_fp8_bytes(t) for t in tensors]
    if fmt.name == "MXFP4":
        also = MXFP4_ALSO_QUANTIZED.get(quant_method, frozenset())
        return [_gguf_bytes(t, "mxfp4") if t.name in also else _mxfp4_native_bytes(t) for t in tensors]
    if fmt.name == "FP8_FP4":
        return [_mxfp4_native_bytes(t) if t.is_expert else _fp8_bytes(t) for t in tensors]
    return [_int4_bytes(t) for t in tensors]  # AWQ, GPTQ


@dataclass(frozen=True)
class SizedTensor:
    tensor: Tensor
    storage: str  # ggml type for GGUF ("q4_K"); the format name for native formats ("FP8")
    nbytes: float


# Formats that quantize the routed experts only (gpt-oss's MXFP4; DeepSeek-V4's FP4 experts beside FP8): a model
# without experts has no checkpoint in them (the engine refuses those). llama.cpp's MXFP4_MOE file type stores
# every other matrix as Q8_0, so a model without experts would be a Q8_0 file under another name: not offered either.
EXPERT_ONLY_FORMATS = frozenset({"MXFP4", "FP8_FP4", "MXFP4_MOE"})


def format_applies_to(spec: ModelSpec, quant: str) -> bool:
    """Whether ``spec`` can come in format ``quant`` at all (the configurator offers only those)."""
    return spec.moe is not None or quant_format(quant).name not in EXPERT_ONLY_FORMATS


@lru_cache(maxsize=2048)
def _sized_tensors(
    spec: ModelSpec,
    quant: str,
    include_mtp: bool,
    token_embedding_type: str | None,
    output_tensor_type: str | None,
) -> tuple[SizedTensor, ...]:
    fmt = quant_format(quant)
    tensors = tuple(t for t in tensor_inventory(spec) if include_mtp or not t.is_mtp)
    if fmt.family in ("gguf", "gguf-dynamic"):
        n_layer_all = spec.num_layers + (spec.mtp_layers if include_mtp else 0)
        types = gguf_tensor_types(
            tensors,
            fmt.name,
            _gguf_facts(spec, n_layer_all),
            token_embedding_type=token_embedding_type,
            output_tensor_type=output_tensor_type,
        )
        return tuple(
            SizedTensor(t, ggml_type, _gguf_bytes(t, ggml_type)) for t, ggml_type in zip(tensors, types)
        )
    if not format_applies_to(spec, fmt.name):
        raise SizingError(
            f"--quant {fmt.name}: {spec.slug} has no MoE experts ({fmt.name} checkpoints quantize experts)",
            code="mxfp4_needs_moe", params={"model": spec.name, "quant": fmt.name})
    return tuple(SizedTensor(t, fmt.name, nbytes)
                 for t, nbytes in zip(tensors, _native_bytes(fmt, tensors, spec.checkpoint_quant_method)))


def sized_tensors(spec: ModelSpec, quant: str, *, include_mtp: bool = False) -> tuple[SizedTensor, ...]:
    """Every tensor with its storage type and bytes (cached per spec and format): the per-tensor derivation."""
    if not spec.has_shapes:
        raise SizingError(
            f"model {spec.slug}: per-tensor sizes need layer shapes (confidence {spec.confidence})"
        )
    return _sized_tensors(spec, quant_format(quant).name, include_mtp, None, None)


def _active_share(spec: ModelSpec) -> float:
    return spec.moe.experts_per_token / spec.moe.num_experts if spec.moe else 1.0


def _per_token_bytes(tensor: Tensor, nbytes: float, routed_share: float) -> float:
    if tensor.is_mtp:
        return 0.0
    if tensor.group == "embedding":
        return nbytes / tensor.shape[1]  # get_rows: one row of token_embd per token
    if tensor.is_expert:
        return nbytes * routed_share
    return nbytes


def _breakdown_from_tensors(
    spec: ModelSpec, fmt: QuantFormat, sized: tuple[SizedTensor, ...]
) -> WeightBreakdown:
    by_group = {
        "embedding": 0.0,
        "output": 0.0,
        "attention": 0.0,
        "dense_ffn": 0.0,
        "routed_experts": 0.0,
        "shared_experts": 0.0,
        "other": 0.0,
    }
    mtp = active = 0.0
    parameters = 0
    share = _active_share(spec)
    for item in sized:
        tensor, nbytes = item.tensor, item.nbytes
        by_group[tensor.group] += nbytes
        parameters += tensor.elements
        mtp += nbytes if tensor.is_mtp else 0.0
        active += _per_token_bytes(tensor, nbytes, share)
    total = sum(by_group.values())
    header = GGUF_HEADER_BYTES_PER_VOCAB_ENTRY * spec.vocab_size if fmt.family.startswith("gguf") else 0.0
    return WeightBreakdown(
        quant=fmt.name,
        total_bytes=total,
        file_bytes=total + header,
        embedding_bytes=by_group["embedding"],
        output_bytes=by_group["output"],
        attention_bytes=by_group["attention"],
        dense_ffn_bytes=by_group["dense_ffn"],
        routed_expert_bytes=by_group["routed_experts"],
        shared_expert_bytes=by_group["shared_experts"],
        other_bytes=by_group["other"],
        mtp_bytes=mtp,
        active_bytes_per_token=active,
        parameters=float(parameters),
        source="per-tensor rule",
        rule_from=fmt.rule_from,
    )


def _scaled_to_published(rule: WeightBreakdown, published_bytes: float) -> WeightBreakdown:
    """Keep the rule's split by class, scaled so the total is the published file's tensor bytes."""
    header = rule.file_bytes - rule.total_bytes
    total = max(published_bytes - header, 0.0)
    k = total / rule.total_bytes
    return WeightBreakdown(
        quant=rule.quant,
        total_bytes=total,
        file_bytes=published_bytes,
        embedding_bytes=rule.embedding_bytes * k,
        output_bytes=rule.output_bytes * k,
        attention_bytes=rule.attention_bytes * k,
        dense_ffn_bytes=rule.dense_ffn_bytes * k,
        routed_expert_bytes=rule.routed_expert_bytes * k,
        shared_expert_bytes=rule.shared_expert_bytes * k,
        other_bytes=rule.other_bytes * k,
        mtp_bytes=rule.mtp_bytes * k,
        active_bytes_per_token=rule.active_bytes_per_token * k,
        parameters=rule.parameters,
        source="published file size",
        rule_from=rule.rule_from,
    )


def _estimated(spec: ModelSpec, fmt: QuantFormat) -> WeightBreakdown:
    counts = count_parameters(spec)
    total = counts.total * fmt.bits_per_weight / 8
    return WeightBreakdown(
        quant=fmt.name,
        total_bytes=total,
        file_bytes=total,
        embedding_bytes=0.0,
        output_bytes=0.0,
        attention_bytes=0.0,
        dense_ffn_bytes=0.0,
        routed_expert_bytes=0.0,
        shared_expert_bytes=0.0,
        other_bytes=total,
        mtp_bytes=0.0,
        active_bytes_per_token=counts.active * fmt.bits_per_weight / 8,
        parameters=counts.total,
        source="stated parameters × format bpw (estimated)",
    )


@lru_cache(maxsize=4096)
def weight_bytes(
    spec: ModelSpec,
    quant: str,
    *,
    published_bytes: float | None = None,
    include_mtp: bool = False,
    token_embedding_type: str | None = None,
    output_tensor_type: str | None = None,
) -> WeightBreakdown:
    """Weights of ``spec`` in format ``quant`` (a --quant value). SizingError naming --quant when unknown.

    ``published_bytes``: the real file size (bytes) when the caller knows it; it wins over the rules and
    the result says "published file size". Without it, ``spec.published_sizes`` is used for the formats shapes
    cannot predict (UD-* dynamic quants) and for models without shapes.
    ``include_mtp``: count the MTP/nextn layers (GLM GGUFs store them; llama.cpp does not load them).
    ``token_embedding_type`` / ``output_tensor_type``: llama-quantize overrides (ggml names, e.g. "f16").
    """
    fmt = quant_format(quant)
    if published_bytes is not None and published_bytes <= 0:
        raise SizingError(f"--quant {quant}: published size must be positive, got {published_bytes}")
    if published_bytes is None and (fmt.family == "gguf-dynamic" or not spec.has_shapes):
        published_bytes = dict(spec.published_sizes).get(fmt.name)
    if not spec.has_shapes:
        estimate = _estimated(spec, fmt)
        return estimate if published_bytes is None else _scaled_to_published(estimate, published_bytes)
    sized = _sized_tensors(spec, fmt.name, include_mtp, token_embedding_type, output_tensor_type)
    rule = _breakdown_from_tensors(spec, fmt, sized)
    return rule if published_bytes is None else _scaled_to_published(rule, published_bytes)


def layer_bytes(spec: ModelSpec, quant: str, *, include_mtp: bool = False) -> tuple[LayerBytes, ...]:
    """Bytes per block (routed experts vs the rest), global tensors first, for offload planning."""
    layers: dict[int | None, list[float]] = {}
    mtp_layers: set[int | None] = set()
    for item in sized_tensors(spec, quant, include_mtp=include_mtp):
        tensor = item.tensor
        bucket = layers.setdefault(tensor.layer, [0.0, 0.0])
        bucket[0 if tensor.is_expert else 1] += item.nbytes
        if tensor.is_mtp:
            mtp_layers.add(tensor.layer)
    return tuple(
        LayerBytes(layer, experts, rest, layer in mtp_layers) for layer, (experts, rest) in layers.items()
    )
