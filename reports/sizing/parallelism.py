"""Multi-GPU weight placement: vLLM tensor parallelism and llama.cpp's layer split.

vLLM tensor parallel (TP): every rank holds a slice of each sharded tensor and a full copy of each
replicated one. Which is which, from ``vllm/model_executor/models/deepseek_v2.py`` and ``llama.py`` (read at
vllm-project/vllm commit 002d6073) and ``vllm/model_executor/layers/linear.py``:

* sharded by attention heads: q/q_b projections (``ColumnParallelLinear``), o_proj (``RowParallelLinear``),
  MLA kv_b_proj (``ColumnParallelLinear``; llama.cpp stores it as attn_k_b + attn_v_b);
* K/V projections (``QKVParallelLinear``): split over KV heads, and when TP exceeds the KV heads every rank
  keeps one whole head (``num_kv_head_replicas = tp // num_kv_heads``);
* sharded by intermediate size: dense MLP gate/up (``MergedColumnParallelLinear``) and down
  (``RowParallelLinear``), shared experts (``DeepseekV2MLP``), routed experts (``FusedMoE``:
  ``intermediate_size_per_partition = divide(intermediate_size, tp)``);
* sharded by vocabulary: ``VocabParallelEmbedding`` and ``ParallelLMHead`` (vocab padded to a multiple of 64,
  ``vocab_parallel_embedding.py`` DEFAULT_VOCAB_PADDING_SIZE);
* replicated: norms, routers (``GateLinear``), MLA's latent down-projections ``q_a_proj`` and
  ``kv_a_proj_with_mqa`` (``ReplicatedLinear``, or ``DeepSeekV2FusedQkvAProjLinear`` with ``disable_tp=True``),
  the DSA indexer (``wq_b`` ``ReplicatedLinear``; ``wk_weights_proj`` ``disable_tp=True``), the MTP glue
  ``eh_proj``, LatentMoE's ``fc1_latent_proj``/``fc2_latent_proj`` (``ReplicatedLinear``, nemotron_h.py; llama.cpp
  ffn_latent_down/up), and row-parallel biases (added once, held whole).

vLLM's ``divide(numerator, denominator)`` asserts exact division, so heads, KV heads (or TP a multiple of them)
and every intermediate size must divide by TP; ``check_tensor_parallel`` turns that assert into a message.

llama.cpp ``--split-mode layer`` (the default; ``src/llama-model.cpp`` ``llama_model::load_tensors``): the input
embedding always stays on the CPU ("there is very little benefit to offloading the input layer"), the last
``-ngl`` of the ``n_layer + 1`` slots (blocks, then the output head) go to the GPUs, and slot ``il`` lands on the
first device whose cumulative ``--tensor-split`` share exceeds ``(il - i_gpu_start) / act_gpu_layers``
(``std::upper_bound``). The default split is each device's free memory, i.e. even for identical GPUs. There is
no divisibility rule. A tied output head is duplicated onto the output device (``TENSOR_DUPLICATED``).
Evidence: bench/data/llamacpp_runtime.csv GLM-4-32B row, "CPU model buffer 499.50" MiB = token_embd
151,552 × 6,144 at q4_K (144 B / 256) = 523,763,712 B.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from functools import cached_property, lru_cache

from .errors import SizingError
from .parameters import Tensor, tensor_inventory
from .quant import quant_format
from .runtime import VLLM_MODELLED_VERSION
from .specs import AttentionShape, ModelSpec
from .weights import SizedTensor, sized_tensors

# vllm/model_executor/layers/vocab_parallel_embedding.py: DEFAULT_VOCAB_PADDING_SIZE.
VLLM_VOCAB_PADDING = 64
# Block-quantized checkpoints need every per-rank intermediate slice to be whole blocks: vLLM fp8.py
# validate_block_quant_shapes ("... is not divisible by weight quantization block_n = 128"); AWQ/GPTQ
# group_size 128 along the input of the row-parallel down projection (awq.py / gptq.py "input_size_per_partition
# is not aligned with quantized weight shape").
VLLM_QUANT_BLOCK = {"FP8": 128, "FP8_FP4": 128, "AWQ": 128, "GPTQ": 128}

# How one rank's share of a tensor is determined (vLLM TP).
_HEAD_SHARDED = frozenset({"attn_q", "attn_q.bias", "attn_output", "attn_q_b", "attn_k_b", "attn_v_b", "attn_sinks",
                           # DeepSeek-V4's grouped output projection, split by heads like DeepSeek-V3's o_proj
                           # (assumed: vLLM's deepseek_v4 sharding was not read)
                           "attn_output_a", "attn_output_b"})
_KV_HEAD_SHARDED = frozenset({"attn_k", "attn_v", "attn_k.bias", "attn_v.bias"})
_VOCAB_SHARDED = frozenset({"token_embd", "output"})
# Gated delta-net, Mamba-2 and short-conv mixers: every projection, conv kernel and per-head vector is split over
# heads/channels (vLLM qwen3_next.py, mamba_mixer2.py, short_conv.py use Column/RowParallelLinear and shard the
# conv weights and A/D/dt_bias).
_CHANNEL_SHARDED = frozenset({
    "attn_qkv", "attn_gate", "ssm_ba", "ssm_conv1d", "ssm_conv1d.bias", "ssm_dt", "ssm_dt.bias", "ssm_a", "ssm_d",
    "ssm_out", "ssm_in", "shortconv.in_proj", "shortconv.conv", "shortconv.out_proj",
    # Kimi Delta Attention (vLLM models/kimi_k3 kda.py: column/row-parallel by heads; f_a, the low-rank input of the
    # forget gate, and o_norm over head_dim are whole on every rank)
    "kda_q", "kda_k", "kda_v", "kda_g", "kda_f_b", "kda_b", "kda_dt_bias", "kda_a_log", "kda_conv1d", "kda_out",
})
_FFN_SHARDED_PREFIXES = ("ffn_gate", "ffn_up", "ffn_down")
_REPLICATED_FFN = frozenset({"ffn_gate_inp", "ffn_gate_inp.bias", "ffn_gate_inp_shexp", "ffn_down_exps.bias",
                             "ffn_gate_tid2eid"})

# vLLM allocates the routed experts of an MXFP4 checkpoint (gpt-oss) padded to what its MoE kernel needs:
# Mxfp4MoEMethod.create_weights (vllm/model_executor/layers/quantization/mxfp4.py, read at vllm-project/vllm commit
# 007d5005) makes w13 [E, 2·I′, H′/2] with scales [E, 2·I′, H′/32] and w2 [E, H′, I′/2] with [E, H′, I′/32], where
# I′ = round_up(intermediate_size_per_partition, a_I) and H′ = round_up(hidden_size, a_H). (a_I, a_H) by backend:
#   * CUDA Hopper (SM90): Triton (OpenAI's triton_kernels matmul_ogs). vLLM bundles triton_kernels since PR #28788
#     (vllm/third_party/triton_kernels, "Fixes #27672"), and get_mxfp4_backend picks Triton on 9.0 ≤ capability
#     < 11.0 unless VLLM_MXFP4_USE_MARLIN is set (v0.14.0 quantization/mxfp4.py; v0.33 fused_moe/oracle/mxfp4.py
#     still ranks TRITON first). Its padding is (64, 1), and the layout adds to it: HopperMXScaleLayout swizzles the
#     scales with their rows (2·I′ for w13, H′ for w2) padded to a multiple of 256 (2 × num_warps 8 × 2 × 8), the
#     checkpoint-shaped uint8 scales stay allocated beside them (only w13_weight and w2_weight are deleted; PR #46549,
#     merged 2026-06-24, frees them later, after the v0.21 modelled here), and the expert biases become fp32.
#     HopperMXValueLayout pads the packed values to 16 rows and 32 bytes, which gpt-oss's widths already are.
#   * CUDA otherwise: Marlin, (128, 256) ("n % 256 == 0 and k % 128 == 0"): Ampere and Ada are below Triton's 9.0,
#     and consumer Blackwell (SM120) above v0.14's 11.0.
#   * CUDA SM100 (B200, B300): FlashInfer MXFP4 BF16, (256, 256); flashinfer-python is in requirements/cuda.txt.
#   * ROCm: Triton with mxfp4_utils.get_padding_alignment(): 256 on gfx950 (MI355X, CDNA 4), else 128, for both.
# Evidence: gpt-oss-120b on an H100 logged "Model loading took 65.9651 GiB" under v0.10.1 with Marlin
# (vllm-project/vllm#23278) and "Using Triton backend … Model loading took 64.38 GiB" under v0.14.1
# (vllm-project/vllm#33155); the checkpoint's tensors are 60.77 GiB. Marlin's 2880 → 2944 × 3072 adds 5.12 GiB; the
# Triton layout adds 0.12 GiB of swizzle padding, 3.34 GiB of kept scales and 0.07 GiB of fp32 biases (3.53 GiB:
# 64.30 GiB, the YaRN cache and small buffers aside).
@dataclass(frozen=True)
class Mxfp4ExpertPadding:
    """How vLLM allocates MXFP4 routed experts on one accelerator: the kernel, the multiples its sizes are padded to
    and, for Triton's Hopper layout, the scale swizzle's row multiple, the checkpoint scales it keeps beside the
    swizzled ones and its fp32 biases (see above)."""

    kernel: str  # "Marlin" | "FlashInfer" | "Triton"
    intermediate_multiple: int
    hidden_multiple: int
    scale_row_multiple: int = 1  # > 1: the scales are swizzled into rows padded to this multiple
    keeps_checkpoint_scales: bool = False
    fp32_biases: bool = False


# The MXFP4 block: 32 four-bit values share one 8-bit scale (OCP Microscaling Formats v1.0).
MXFP4_BLOCK = 32
_VLLM_MXFP4_PADDING_BY_ARCHITECTURE = {
    ("cuda", "hopper"): Mxfp4ExpertPadding("Triton", 64, 1, scale_row_multiple=256, keeps_checkpoint_scales=True,
                                           fp32_biases=True),
    ("cuda", "blackwell-datacenter"): Mxfp4ExpertPadding("FlashInfer", 256, 256),
    ("rocm", "cdna4"): Mxfp4ExpertPadding("Triton", 256, 256),
}
_VLLM_MXFP4_PADDING_BY_BACKEND = {
    "cuda": Mxfp4ExpertPadding("Marlin", 128, 256),
    "rocm": Mxfp4ExpertPadding("Triton", 128, 128),
}


# vLLM ships triton_kernels from PR #28788 (merged late November 2025): the first minor release after it is taken
# as the first whose Hopper GPUs run Triton; v0.10.1 still logged Marlin there (vllm#23278).
VLLM_TRITON_MXFP4_ON_HOPPER_SINCE = (0, 12)


def vllm_mxfp4_expert_padding(backend: str, architecture: str, version: tuple[int, int] = VLLM_MODELLED_VERSION
                              ) -> Mxfp4ExpertPadding | None:
    """How vLLM pads MXFP4 routed experts on this accelerator under vLLM ``version``; None where the backend's
    MXFP4 path is not read (Intel XPU's IPEX method, CANN, others): no padding is counted there."""
    if (backend, architecture) == ("cuda", "hopper") and version < VLLM_TRITON_MXFP4_ON_HOPPER_SINCE:
        return _VLLM_MXFP4_PADDING_BY_BACKEND["cuda"]
    return _VLLM_MXFP4_PADDING_BY_ARCHITECTURE.get((backend, architecture),
                                                   _VLLM_MXFP4_PADDING_BY_BACKEND.get(backend))


def _round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


def _mxfp4_padding_ratio(spec: ModelSpec, tensor: Tensor, tp: int, padding: Mxfp4ExpertPadding) -> float:
    """Padded bytes / checkpoint bytes of one rank's slice of an MXFP4 routed-expert tensor (see above), where the
    values and their scales grow alike (no scale layout of their own)."""
    assert spec.moe is not None
    intermediate = spec.moe.expert_intermediate_size // tp
    hidden = spec.moe.expert_width(spec.hidden_size)  # LatentMoE experts are created at the latent width
    padded_intermediate = _round_up(intermediate, padding.intermediate_multiple)
    padded_hidden = _round_up(hidden, padding.hidden_multiple)
    if tensor.name in ("ffn_gate_exps.bias", "ffn_up_exps.bias"):
        return padded_intermediate / intermediate
    if tensor.name == "ffn_down_exps.bias":
        return padded_hidden / hidden
    return padded_intermediate * padded_hidden / (intermediate * hidden)


def _mxfp4_swizzled_rank_bytes(spec: ModelSpec, tensor: Tensor, tp: int, padding: Mxfp4ExpertPadding) -> float:
    """What one rank allocates for an MXFP4 routed-expert tensor in a layout with swizzled scales (Triton on
    Hopper, see above): 4-bit values at the padded sizes, the scales in rows padded to scale_row_multiple (w13's
    2·I′ rows are shared by the gate and up tensors), the checkpoint-shaped scales when they are kept, and the
    biases in fp32."""
    assert spec.moe is not None
    experts = spec.moe.num_experts
    intermediate = _round_up(spec.moe.expert_intermediate_size // tp, padding.intermediate_multiple)
    hidden = _round_up(spec.moe.expert_width(spec.hidden_size), padding.hidden_multiple)
    bias_bytes = 4 if padding.fp32_biases else 2
    if tensor.name in ("ffn_gate_exps.bias", "ffn_up_exps.bias"):
        return experts * intermediate * bias_bytes
    if tensor.name == "ffn_down_exps.bias":
        return experts * hidden * bias_bytes
    if tensor.name == "ffn_down_exps":  # w2: [E, H′, I′]
        rows, columns, swizzled_rows = hidden, intermediate, _round_up(hidden, padding.scale_row_multiple)
    else:  # w13 [E, 2·I′, H′] holds the gate and up rows together (up only without a gate), padded together
        rows, columns = intermediate, hidden
        fused = 2 if spec.ffn_gated else 1
        swizzled_rows = _round_up(fused * intermediate, padding.scale_row_multiple) / fused
    scale_columns = columns // MXFP4_BLOCK
    values = experts * rows * columns / 2
    scales = experts * swizzled_rows * _round_up(scale_columns, 2)
    kept = experts * rows * scale_columns if padding.keeps_checkpoint_scales else 0
    return values + scales + kept


# --------------------------------------------------------------------------------------------------------------
# vLLM tensor parallel
# --------------------------------------------------------------------------------------------------------------


def check_tensor_parallel(spec: ModelSpec, tp: int, quant: str | None = None) -> None:
    """Raise SizingError naming --gpus when vLLM cannot split ``spec`` over ``tp`` GPUs."""
    if tp < 1:
        raise SizingError(f"--gpus must be at least 1 (got {tp})")
    if not spec.has_shapes and spec.kv_proxy is not None and spec.kv_proxy.has_shapes:
        # Stated parameters only: the heads are the stand-in family member's (GLM-5.3 took 6 GPUs, which GLM-5's
        # 64 heads refuse).
        spec = spec.kv_proxy
    if tp == 1 or not spec.has_shapes:
        return
    for shape in _attention_shapes(spec):
        _require_divides(shape.num_heads, tp, "attention heads")
        _check_kv_heads(shape.num_kv_heads, tp)
    if spec.mla is not None:
        _require_divides(spec.mla.num_heads, tp, "attention heads")
    if spec.compressed_attention is not None:
        _require_divides(spec.compressed_attention.num_heads, tp, "attention heads")
    fmt_name = quant_format(quant).name if quant else ""
    block = VLLM_QUANT_BLOCK.get(fmt_name)
    if fmt_name == "FP8" and spec.native_dtype != "fp8":
        # FP8 of a BF16 checkpoint is vLLM's online quantization (--quantization fp8, launch.py): one scale per
        # tensor (fp8.py Fp8LinearMethod without weight_block_size), so no 128-wide blocks to keep whole.
        block = None
    for width, what in _intermediate_sizes(spec):
        if width % tp:
            raise SizingError(f"--gpus {tp}: the {what} {width} is not divisible by {tp}",
                              code="tp_width_not_divisible", params={"gpus": tp, "what": what, "count": width})
        if block and (width // tp) % block:
            raise SizingError(
                f"--gpus {tp}: {what} {width} / {tp} = {width // tp} is not a multiple of the {block}-wide "
                f"{fmt_name} blocks", code="tp_block", params={"gpus": tp, "what": what, "count": width,
                                                               "block": block, "quant": fmt_name})
    if spec.linear_attention is not None:
        _require_divides(spec.linear_attention.num_key_heads, tp, "linear-attention key heads")
        _require_divides(spec.linear_attention.num_value_heads, tp, "linear-attention value heads")
    if spec.mamba is not None:
        _require_divides(spec.mamba.num_heads, tp, "Mamba heads")


# Both walk every layer and depend on the spec alone: cached, as a page checks ~85 tensor-parallel splits.
@lru_cache(maxsize=512)
def _attention_shapes(spec: ModelSpec) -> tuple[AttentionShape, ...]:
    """The softmax-attention shapes some layer uses (MLA layers are checked through spec.mla)."""
    mixers = {layer.mixer for layer in spec.layers}
    uses_main = ("full" in mixers and spec.mla is None) or "chunked" in mixers or (
        "sliding" in mixers and spec.sliding_attention is None)
    shapes = [spec.attention] if uses_main and spec.attention is not None else []
    if "sliding" in mixers and spec.sliding_attention is not None:
        shapes.append(spec.sliding_attention)
    return tuple(shapes)


@lru_cache(maxsize=512)
def _intermediate_sizes(spec: ModelSpec) -> tuple[tuple[int, str], ...]:
    ffns = {layer.ffn for layer in spec.layers}
    sizes = []
    if "dense" in ffns and spec.intermediate_size:
        sizes.append((spec.intermediate_size, "FFN intermediate size"))
    if spec.moe is not None and ("moe" in ffns or spec.mtp_layers):
        moe = spec.moe
        sizes.append((moe.expert_intermediate_size, "expert intermediate size"))
        shared = moe.shared_expert_intermediate_size or moe.num_shared_experts * moe.expert_intermediate_size
        if shared:
            sizes.append((shared, "shared-expert intermediate size"))
    return tuple(sizes)


def _require_divides(count: int, tp: int, what: str) -> None:
    if count % tp:
        raise SizingError(f"--gpus {tp}: {count} {what} are not divisible by {tp}",
                          code="tp_not_divisible", params={"gpus": tp, "what": what, "count": count})


def _check_kv_heads(kv_heads: int, tp: int) -> None:
    if tp <= kv_heads:
        _require_divides(kv_heads, tp, "KV heads")
    elif tp % kv_heads:
        raise SizingError(
            f"--gpus {tp}: more GPUs than the {kv_heads} KV heads must be a multiple of them "
            "(vLLM replicates whole KV heads)", code="tp_kv_heads_multiple", params={"gpus": tp, "count": kv_heads})


def kv_heads_per_rank(kv_heads: int, tp: int) -> int:
    """KV heads one rank holds: a slice when TP ≤ heads, one replicated head when TP > heads."""
    return max(1, kv_heads // tp)


@dataclass(frozen=True)
class TensorParallelWeights:
    """Weights one vLLM rank holds under TP (bytes). ``per_rank × tp`` is what all GPUs hold together."""

    tp: int
    per_rank_bytes: float
    sharded_bytes: float  # whole-model bytes of the tensors split over ranks
    replicated_bytes: float  # whole-model bytes of the tensors every rank holds in full
    per_rank_expert_bytes: float  # routed experts on one rank
    estimated: bool = False  # no shapes: assumed fully sharded
    # Bytes one rank allocates beyond the checkpoint's tensors: vLLM's MXFP4 expert padding (part of per_rank_bytes
    # and per_rank_expert_bytes; not of sharded/replicated, which are the checkpoint's).
    per_rank_padding_bytes: float = 0.0
    mxfp4_padding: Mxfp4ExpertPadding | None = None  # set when per_rank_padding_bytes > 0

    @property
    def all_ranks_bytes(self) -> float:
        return self.per_rank_bytes * self.tp

    @property
    def per_rank_non_expert_bytes(self) -> float:
        return self.per_rank_bytes - self.per_rank_expert_bytes

    @property
    def per_rank_checkpoint_bytes(self) -> float:
        """One rank's share of the checkpoint's tensors, without the kernel padding."""
        return self.per_rank_bytes - self.per_rank_padding_bytes

    @property
    def all_ranks_checkpoint_bytes(self) -> float:
        return self.per_rank_checkpoint_bytes * self.tp

    @property
    def head_replica_bytes(self) -> float:
        """All ranks' bytes beyond one copy of the split tensors and a whole copy of the replicated ones per rank:
        the K/V projections that several ranks hold in full where there are fewer KV heads than ranks
        (num_kv_head_replicas). Qwen3-235B at FP8 on TP 8 (4 KV heads): 0.37 GiB."""
        return max(0.0, self.all_ranks_checkpoint_bytes - self.sharded_bytes - self.replicated_bytes * self.tp)


def tensor_parallel_weights(
    spec: ModelSpec, quant: str, tp: int, *, total_bytes: float, include_mtp: bool = False,
    mxfp4_padding: Mxfp4ExpertPadding | None = None,
) -> TensorParallelWeights:
    """Per-rank weights of ``spec`` in ``quant`` over ``tp`` ranks.

    ``total_bytes``: the whole model's weight bytes (weights.weight_bytes total, which may be a published size);
    the per-tensor rule split is scaled to it. ``mxfp4_padding`` (``vllm_mxfp4_expert_padding``): the padding
    vLLM allocates MXFP4 routed experts with, added on top. Raises SizingError (naming --gpus) when TP cannot split
    the model.
    """
    return _tensor_parallel_weights(spec, quant, tp, total_bytes, include_mtp, mxfp4_padding)


@lru_cache(maxsize=4096)  # a vLLM configuration's split: its plan, the demand ``fits`` shares, the matrix's formats
def _tensor_parallel_weights(spec: ModelSpec, quant: str, tp: int, total_bytes: float, include_mtp: bool,
                             mxfp4_padding: Mxfp4ExpertPadding | None) -> TensorParallelWeights:
    check_tensor_parallel(spec, tp, quant)
    if not spec.has_shapes:
        # Stated parameters only: no tensor list, so assume every byte is split (an "estimated" lower bound).
        return TensorParallelWeights(tp, total_bytes / tp, total_bytes, 0.0, 0.0, estimated=True)
    name = quant_format(quant).name
    split = _rank_split(spec, name, tp, include_mtp)
    rule_total = split[0] + split[1]
    scale = total_bytes / rule_total if rule_total else 1.0
    sharded, replicated, per_rank, per_rank_experts = (value * scale for value in split)
    padding = _mxfp4_rank_padding(spec, tp, include_mtp, mxfp4_padding) if name == "MXFP4" and mxfp4_padding else 0.0
    return TensorParallelWeights(tp, per_rank + padding, sharded, replicated, per_rank_experts + padding,
                                 per_rank_padding_bytes=padding, mxfp4_padding=mxfp4_padding if padding else None)


@lru_cache(maxsize=1024)
def _rank_split(spec: ModelSpec, quant: str, tp: int, include_mtp: bool) -> tuple[float, float, float, float]:
    """(sharded bytes, replicated bytes, one rank's bytes, one rank's routed-expert bytes) by the rules above.

    Each tensor's rank_share, through its split rule (_split_rules: one per tensor, whatever the format and the
    rank count) and the share of each distinct rule at ``tp``: the same floats, summed in the same order."""
    sized = sized_tensors(spec, quant, include_mtp=include_mtp)
    rules = _split_rules(spec, include_mtp) if tp > 1 else (_WHOLE,) * len(sized)
    share_of = {rule: _rule_share(spec, rule, tp) for rule in set(rules)}
    sharded = replicated = per_rank = per_rank_experts = 0.0
    for item, rule in zip(sized, rules, strict=True):
        share = share_of[rule]
        if share >= 1.0:
            replicated += item.nbytes
        else:
            sharded += item.nbytes
        per_rank += item.nbytes * share
        if item.tensor.is_expert:
            per_rank_experts += item.nbytes * share
    return sharded, replicated, per_rank, per_rank_experts


@lru_cache(maxsize=256)
def _mxfp4_rank_padding(spec: ModelSpec, tp: int, include_mtp: bool, padding: Mxfp4ExpertPadding) -> float:
    """Bytes one rank allocates beyond the checkpoint for MXFP4 routed experts (vLLM's kernel padding)."""
    added = 0.0
    for item in sized_tensors(spec, "MXFP4", include_mtp=include_mtp):
        if item.tensor.is_expert:
            share = rank_share(spec, item.tensor, tp)
            if padding.scale_row_multiple > 1:
                added += _mxfp4_swizzled_rank_bytes(spec, item.tensor, tp, padding) - item.nbytes * share
            else:
                added += item.nbytes * share * (_mxfp4_padding_ratio(spec, item.tensor, tp, padding) - 1.0)
    return added


def rank_share(spec: ModelSpec, tensor: Tensor, tp: int) -> float:
    """Fraction of ``tensor``'s bytes that one TP rank holds (1.0 = replicated)."""
    if tp == 1:
        return 1.0
    return _rule_share(spec, _split_rule(spec, tensor), tp)


# How vLLM splits a tensor over TP ranks, whatever their number (_split_rule): its vocabulary rows, its heads or
# channels, its KV heads (with their count), or not at all.
_BY_VOCAB, _SPLIT, _WHOLE = ("vocab",), ("split",), ("whole",)


def _split_rule(spec: ModelSpec, tensor: Tensor) -> tuple:
    name = tensor.name
    if name in _VOCAB_SHARDED:
        return _BY_VOCAB
    if name in _HEAD_SHARDED or name in _CHANNEL_SHARDED:
        return _SPLIT
    if name in _KV_HEAD_SHARDED:
        return ("kv_heads", _layer_attention(spec, tensor.layer).num_kv_heads)
    if name == "ssm_norm" and spec.mamba is not None and tensor.shape[0] == spec.mamba.num_heads * spec.mamba.head_dim:
        return _SPLIT  # Mamba-2 gated RMSNorm over d_inner is sharded (mamba_mixer2.py Mixer2RMSNormGated)
    if name in _REPLICATED_FFN:
        return _WHOLE
    if name.startswith(_FFN_SHARDED_PREFIXES) and name != "ffn_norm":
        return _SPLIT
    return _WHOLE  # norms, routers, MLA q_a / kv_a, the DSA indexer, MTP glue, row-parallel biases


def _rule_share(spec: ModelSpec, rule: tuple, tp: int) -> float:
    """The fraction one of ``tp`` ranks holds of a tensor split by ``rule`` (_split_rule)."""
    if tp == 1 or rule == _WHOLE:
        return 1.0
    if rule == _BY_VOCAB:
        padded = math.ceil(spec.vocab_size / VLLM_VOCAB_PADDING) * VLLM_VOCAB_PADDING
        return min(1.0, math.ceil(padded / tp) / spec.vocab_size)
    if rule == _SPLIT:
        return 1.0 / tp
    kv_heads = rule[1]
    return kv_heads_per_rank(kv_heads, tp) / kv_heads


@lru_cache(maxsize=256)
def _split_rules(spec: ModelSpec, include_mtp: bool) -> tuple[tuple, ...]:
    """Each tensor's _split_rule in sized_tensors' order (tensor_inventory's, less the MTP blocks unless included:
    the same tensors in every format), so that _rank_split finds a tensor's share at any rank count by lookup."""
    return tuple(_split_rule(spec, tensor) for tensor in tensor_inventory(spec) if include_mtp or not tensor.is_mtp)


def _layer_attention(spec: ModelSpec, layer: int | None) -> AttentionShape:
    if layer is not None and layer < spec.num_layers and spec.layers[layer].mixer == "sliding" and spec.sliding_attention:
        return spec.sliding_attention
    assert spec.attention is not None
    return spec.attention


# --------------------------------------------------------------------------------------------------------------
# llama.cpp layer split
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BlockWeights:
    """One decoder block (or MTP block) as llama.cpp places it: routed experts vs everything else."""

    index: int
    expert_bytes: float
    other_bytes: float
    is_mtp: bool = False
    is_moe: bool = False

    @property
    def total_bytes(self) -> float:
        return self.expert_bytes + self.other_bytes


@dataclass(frozen=True)
class LlamaCppLayout:
    """Weights by llama.cpp placement unit. The input embedding is host-resident (dev_input = CPU)."""

    embedding_bytes: float  # token_embd: always in system RAM
    output_bytes: float  # output head + output_norm on the output slot (a tied head: the duplicated token_embd)
    output_is_tied_copy: bool  # True: output_bytes is an extra copy of token_embd, not part of the file's bytes
    blocks: tuple[BlockWeights, ...]
    estimated: bool = False  # no shapes: one pseudo-block holding every weight

    @cached_property
    def file_bytes(self) -> float:
        """The model's weight bytes (the tied copy excluded). Cached: the layout is immutable."""
        copy = self.embedding_bytes if self.output_is_tied_copy else 0.0
        return self.embedding_bytes + self.output_bytes - copy + sum(b.total_bytes for b in self.blocks)

    @cached_property
    def other_bytes_by_block(self) -> tuple[float, ...]:
        """Each block's bytes other than its routed experts, in block order (fit._loads sums runs of them)."""
        return tuple(block.other_bytes for block in self.blocks)

    @cached_property
    def expert_bytes_by_block(self) -> tuple[float, ...]:
        return tuple(block.expert_bytes for block in self.blocks)


@lru_cache(maxsize=4096)  # a plan per accelerator kind and context asks the same layout of (model, format)
def llama_cpp_layout(spec: ModelSpec, quant: str, *, total_bytes: float, include_mtp: bool = False,
                     active_bytes: float | None = None) -> LlamaCppLayout:
    """Per-block weights scaled so the layout adds up to ``total_bytes`` (a published file size wins).

    Without shapes there is one pseudo-block; ``active_bytes`` (bytes one token reads) then marks the share that
    is always read as "other" so decode can still tell active from idle bytes.
    """
    if not spec.has_shapes:
        active = total_bytes if active_bytes is None else min(active_bytes, total_bytes)
        block = BlockWeights(0, expert_bytes=total_bytes - active, other_bytes=active, is_moe=active < total_bytes)
        return LlamaCppLayout(0.0, 0.0, False, (block,), estimated=True)
    raw = _raw_layout(spec, quant_format(quant).name, include_mtp)
    scale = total_bytes / raw.file_bytes if raw.file_bytes else 1.0
    if scale == 1.0:
        return raw
    return LlamaCppLayout(
        raw.embedding_bytes * scale, raw.output_bytes * scale, raw.output_is_tied_copy,
        tuple(BlockWeights(b.index, b.expert_bytes * scale, b.other_bytes * scale, b.is_mtp, b.is_moe)
              for b in raw.blocks))


@lru_cache(maxsize=1024)
def _raw_layout(spec: ModelSpec, quant: str, include_mtp: bool) -> LlamaCppLayout:
    sized: tuple[SizedTensor, ...] = sized_tensors(spec, quant, include_mtp=include_mtp)
    n_blocks = spec.num_layers + (spec.mtp_layers if include_mtp else 0)
    experts = [0.0] * n_blocks
    others = [0.0] * n_blocks
    embedding = output = 0.0
    for item in sized:
        tensor = item.tensor
        if tensor.layer is None:
            if tensor.group == "embedding":
                embedding += item.nbytes
            else:
                output += item.nbytes  # output head and output_norm
        elif tensor.is_expert:
            experts[tensor.layer] += item.nbytes
        else:
            others[tensor.layer] += item.nbytes
    tied = spec.tie_word_embeddings
    if tied:
        output += embedding  # llama.cpp TENSOR_DUPLICATED: the tied head is a second copy on the output device
    blocks = tuple(
        BlockWeights(i, experts[i], others[i], is_mtp=i >= spec.num_layers,
                     is_moe=experts[i] > 0)
        for i in range(n_blocks))
    return LlamaCppLayout(embedding, output, tied, blocks)


def tensor_split_points(weights: tuple[float, ...]) -> tuple[float, ...]:
    """Cumulative, normalized split points of ``--tensor-split`` (llama_model::load_tensors)."""
    total = float(sum(weights))
    if total <= 0:
        raise SizingError("--tensor-split shares must be positive")
    points, running = [], 0.0
    for weight in weights:
        running += weight
        points.append(running / total)
    return tuple(points)


# Placement asks this for every plan (and a dozen times while searching an offload split); the answer depends only
# on the three numbers, so it is computed once.
@lru_cache(maxsize=4096)
def assign_slots(n_blocks: int, gpu_layers: int, split_points: tuple[float, ...]) -> tuple[int | None, ...]:
    """Device of each of the ``n_blocks + 1`` slots (blocks, then the output head); None = CPU.

    ``i_gpu_start = max(n_layer - ngl, 0)``, ``act_gpu_layers = min(ngl, n_layer + 1)``; a slot on the GPUs goes to
    ``upper_bound(splits, (il - i_gpu_start) / act_gpu_layers)`` (llama_model::load_tensors get_layer_buft_list).
    """
    start = max(n_blocks - gpu_layers, 0)
    active = min(gpu_layers, n_blocks + 1)
    devices: list[int | None] = []
    last = len(split_points) - 1
    for slot in range(n_blocks + 1):
        if slot < start or slot - start >= active:
            devices.append(None)
        else:
            devices.append(min(bisect.bisect_right(split_points, (slot - start) / active), last))
    return tuple(devices)
