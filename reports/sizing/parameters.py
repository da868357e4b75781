"""Tensor inventory and parameter counts, derived from a ModelSpec's shapes.

The inventory lists every weight tensor the way llama.cpp's GGUF files name and shape them
(``gguf-py/gguf/constants.py`` TENSOR_NAMES, ``src/llama-arch.cpp`` LLM_TENSOR_NAMES), so the per-tensor
quantization rules of ``src/llama-quant.cpp`` (see ``quant.py``) can be applied to it one tensor at a time.

Shapes are in ggml order: ``shape[0]`` is the row length (the input width of a matrix), ``shape[1]`` the
number of rows (output width), ``shape[2]`` the number of experts of a merged expert tensor. llama-quantize
requires ``shape[0]`` to be a multiple of the block size of a type and falls back otherwise, so the order
matters.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from .errors import SizingError
from .specs import AttentionShape, LayerSpec, ModelSpec

# Where a tensor's bytes are reported in a WeightBreakdown.
#   attention: every token mixer (softmax attention, MLA, gated delta-net, Mamba-2, LFM2 short conv)
#   other:     norms, biases, routers, attention sinks, the MTP glue projection
TensorGroup = Literal[
    "embedding", "output", "attention", "dense_ffn", "routed_experts", "shared_experts", "other"
]

# model_type values whose attention carries per-head RMSNorm on q and k (attn_q_norm / attn_k_norm):
# Qwen3 (modeling_qwen3.py q_norm/k_norm), Qwen3-Next / Qwen3.5, Gemma 3/4, OLMo 2, LFM2.
_QK_NORM_ARCHITECTURES = frozenset(
    {
        "qwen3",
        "qwen3_moe",
        "qwen3_next",
        "qwen3_5",
        "qwen3_5_moe",
        "gemma3",
        "gemma3_text",
        "gemma4",
        "gemma4_text",
        "olmo2",
        "olmoe",
        "lfm2",
        "glm4_moe_lite",
    }
)
# Gemma 2/3/4 have sandwich norms: post_attention_norm and post_ffw_norm besides the two pre-norms.
_SANDWICH_NORM_ARCHITECTURES = frozenset({"gemma2", "gemma3", "gemma3_text", "gemma4", "gemma4_text"})
# Qwen3-Next / Qwen3.5 full-attention layers project q and an output gate together (q_proj is 2 × wide).
_GATED_ATTENTION_ARCHITECTURES = frozenset({"qwen3_next", "qwen3_5", "qwen3_5_moe"})
# gpt-oss: o_proj has a bias too, each head has a learned attention sink, routers and experts have biases.
_GPT_OSS_ARCHITECTURES = frozenset({"gpt_oss"})
# Sigmoid-scored routers with a per-expert correction bias (DeepSeek-V3 e_score_correction_bias → exp_probs_b).
_ROUTER_BIAS_ARCHITECTURES = frozenset(
    {
        "deepseek_v3",
        "deepseek_v32",
        "glm4_moe",
        "glm4_moe_lite",
        "glm_moe_dsa",
        "kimi_k2",
        "minimax_m2",
        "nemotron_h",
        "nemotron_h_moe",
        "deepseek_v4",
    }
)
# Kimi K3 (kimi_linear): MLA output gate, attention residuals (attn_res_block_size: per layer a norm and a hidden → 1
# score projection before the attention and before the MLP, and once before the head; vLLM models/kimi_k3), the
# latent MoE's RMSNorm at the latent width (latent_moe_use_norm).
_KIMI_K3_ARCHITECTURES = frozenset({"kimi_linear"})
# Shared expert with its own sigmoid gate (Qwen2-MoE / Qwen3-Next shared_expert_gate → ffn_gate_inp_shexp).
_SHARED_EXPERT_GATE_ARCHITECTURES = frozenset({"qwen2_moe", "qwen3_next", "qwen3_5_moe"})


@dataclass(frozen=True)
class Tensor:
    """One weight tensor of a GGUF file (``blk.{layer}.{name}.weight`` or a global ``{name}.weight``)."""

    name: str  # GGUF tensor class, e.g. "attn_q", "ffn_down_exps", "token_embd"; biases end in ".bias"
    layer: int | None  # block index; None for token_embd, output, output_norm
    shape: tuple[int, ...]  # ggml order: (row length, rows[, experts])
    elements: int
    group: TensorGroup
    is_expert: bool = False  # routed expert tensor (3-D, one slice per expert)
    is_mtp: bool = False  # part of a multi-token-prediction (nextn) layer: optional to load
    # llama-quantize only quantizes 2-D/3-D ``*.weight`` tensors that are not routers or conv kernels
    # (src/llama-quant.cpp tensor_allows_quantization); convert_hf_to_gguf.py stores those others in F32.
    quantizable: bool = True

    @property
    def is_1d(self) -> bool:
        return len(self.shape) == 1

    @property
    def row_length(self) -> int:
        return self.shape[0]


@dataclass(frozen=True)
class ParameterCount:
    """Parameter counts of a model. ``total`` excludes MTP layers (they are counted in ``mtp``)."""

    total: float
    active: float  # per token: everything but the (1 - k/E) unused share of the routed experts
    embedding: float  # token_embd
    output: float  # output head (0 when tied to the embedding)
    attention: float
    dense_ffn: float
    routed_experts: float
    shared_experts: float
    other: float  # norms, biases, routers
    mtp: float  # extra next-token-prediction layers, not in total
    estimated: bool = False  # True: stated counts of a model without shapes
    source: str = "tensor shapes"

    @property
    def total_with_mtp(self) -> float:
        return self.total + self.mtp

    @property
    def active_excluding_embedding(self) -> float:
        """Active count without the token-embedding table (a lookup), as OpenAI counts gpt-oss (5.13 B)."""
        return self.active - self.embedding

    @property
    def matmul_active(self) -> float:
        """Active parameters each token is multiplied by: the input embedding is a row lookup (llama.cpp
        get_rows), not a matrix product, unless the output head is tied to it (output == 0), whose logits
        multiply the same table once per token. 2 × this is the FLOPs per token of the weights, the basis the
        speed constants are fitted on (bench/throughput_accuracy.py)."""
        return self.active - self.embedding if self.output else self.active


def _tensor(
    name: str,
    layer: int | None,
    shape: tuple[int, ...],
    group: TensorGroup,
    *,
    is_expert: bool = False,
    is_mtp: bool = False,
    quantizable: bool | None = None,
) -> Tensor:
    elements = 1
    for dim in shape:
        elements *= dim
    if quantizable is None:
        quantizable = len(shape) >= 2 and not name.endswith(".bias")
    return Tensor(name, layer, shape, elements, group, is_expert, is_mtp, quantizable)


def _norm(name: str, layer: int | None, width: int, is_mtp: bool) -> Tensor:
    return _tensor(name, layer, (width,), "other", is_mtp=is_mtp)


def _attention_shape(spec: ModelSpec, layer: LayerSpec) -> AttentionShape:
    shape = spec.sliding_attention if layer.mixer == "sliding" and spec.sliding_attention else spec.attention
    if shape is None:
        raise SizingError(f"model {spec.slug}: a {layer.mixer}-attention layer has no attention shape")
    return shape


def _softmax_attention(spec: ModelSpec, layer: LayerSpec, i: int, mtp: bool) -> list[Tensor]:
    """attn_q/k/v/output of GQA/MHA/MQA (llama.cpp LLM_TENSOR_ATTN_Q/K/V/OUT)."""
    shape = _attention_shape(spec, layer)
    hidden = spec.hidden_size
    q_width = shape.num_heads * shape.head_dim
    if spec.architecture in _GATED_ATTENTION_ARCHITECTURES:
        q_width *= 2  # Qwen3-Next q_proj also yields the sigmoid output gate (modeling_qwen3_next.py)
    k_width = shape.num_kv_heads * shape.head_dim
    v_width = shape.num_kv_heads * shape.v_dim
    tensors = [
        _tensor("attn_q", i, (hidden, q_width), "attention", is_mtp=mtp),
        _tensor("attn_k", i, (hidden, k_width), "attention", is_mtp=mtp),
    ]
    if not shape.k_eq_v:  # Gemma 4 global layers reuse K as V: no v_proj
        tensors.append(_tensor("attn_v", i, (hidden, v_width), "attention", is_mtp=mtp))
    tensors.append(
        _tensor("attn_output", i, (shape.num_heads * shape.v_dim, hidden), "attention", is_mtp=mtp)
    )
    if spec.attention_bias:
        # HF attention_bias / Qwen2's fixed qkv bias: one bias per projection output.
        tensors += [
            _tensor("attn_q.bias", i, (q_width,), "other", is_mtp=mtp),
            _tensor("attn_k.bias", i, (k_width,), "other", is_mtp=mtp),
        ]
        if not shape.k_eq_v:
            tensors.append(_tensor("attn_v.bias", i, (v_width,), "other", is_mtp=mtp))
    if spec.architecture in _GPT_OSS_ARCHITECTURES:
        tensors += [
            _tensor("attn_output.bias", i, (hidden,), "other", is_mtp=mtp),
            _tensor("attn_sinks", i, (shape.num_heads,), "other", is_mtp=mtp),
        ]
    if spec.architecture in _QK_NORM_ARCHITECTURES:
        tensors += [
            _norm("attn_q_norm", i, shape.head_dim, mtp),
            _norm("attn_k_norm", i, shape.head_dim, mtp),
        ]
    return tensors


def _mla_attention(spec: ModelSpec, i: int, mtp: bool) -> list[Tensor]:
    """Multi-head latent attention as current llama.cpp stores it (convert_hf_to_gguf.py DeepseekV2Model).

    kv_b_proj is split into attn_k_b (per head, transposed: rows of qk_nope_head_dim) and attn_v_b
    (rows of kv_lora_rank) for the absorbed MLA path; both are 3-D with one slice per head.
    """
    mla = spec.mla
    assert mla is not None
    hidden, heads = spec.hidden_size, mla.num_heads
    qk_head = mla.qk_nope_head_dim + mla.qk_rope_head_dim
    tensors: list[Tensor] = []
    if mla.q_lora_rank:
        tensors += [
            _tensor("attn_q_a", i, (hidden, mla.q_lora_rank), "attention", is_mtp=mtp),
            _norm("attn_q_a_norm", i, mla.q_lora_rank, mtp),
            _tensor("attn_q_b", i, (mla.q_lora_rank, heads * qk_head), "attention", is_mtp=mtp),
        ]
    else:  # DeepSeek-V2-Lite: plain q_proj
        tensors.append(_tensor("attn_q", i, (hidden, heads * qk_head), "attention", is_mtp=mtp))
    tensors += [
        _tensor(
            "attn_kv_a_mqa", i, (hidden, mla.kv_lora_rank + mla.qk_rope_head_dim), "attention", is_mtp=mtp
        ),
        _norm("attn_kv_a_norm", i, mla.kv_lora_rank, mtp),
        _tensor("attn_k_b", i, (mla.qk_nope_head_dim, mla.kv_lora_rank, heads), "attention", is_mtp=mtp),
        _tensor("attn_v_b", i, (mla.kv_lora_rank, mla.v_head_dim, heads), "attention", is_mtp=mtp),
        _tensor("attn_output", i, (heads * mla.v_head_dim, hidden), "attention", is_mtp=mtp),
    ]
    if spec.architecture in _KIMI_K3_ARCHITECTURES:
        # Kimi K3's MLA: a sigmoid output gate (g_proj, hidden → heads × v_head_dim) before o_proj (mla_use_output_gate).
        tensors.append(_tensor("attn_gate", i, (hidden, heads * mla.v_head_dim), "attention", is_mtp=mtp))
    if spec.dsa_indexer is not None:
        tensors += _dsa_indexer(spec, i, mtp)
    return tensors


def _dsa_indexer(spec: ModelSpec, i: int, mtp: bool) -> list[Tensor]:
    """DeepSeek Sparse Attention lightning indexer (DeepSeek-V3.2 inference/model.py Indexer: wq_b from the q
    latent to index_n_heads × index_head_dim, wk hidden → index_head_dim, k_norm LayerNorm, weights_proj hidden →
    index_n_heads); named as llama.cpp's indexer.* tensors."""
    indexer, mla = spec.dsa_indexer, spec.mla
    assert indexer is not None and mla is not None
    q_in = mla.q_lora_rank or spec.hidden_size
    hidden = spec.hidden_size
    return [
        _tensor("indexer.attn_q_b", i, (q_in, indexer.num_heads * indexer.head_dim), "attention", is_mtp=mtp),
        _tensor("indexer.attn_k", i, (hidden, indexer.head_dim), "attention", is_mtp=mtp),
        _norm("indexer.k_norm", i, indexer.head_dim, mtp),
        _tensor("indexer.k_norm.bias", i, (indexer.head_dim,), "other", is_mtp=mtp),
        _tensor("indexer.proj", i, (hidden, indexer.num_heads), "attention", is_mtp=mtp),
    ]


def _compressed_attention(spec: ModelSpec, layer: LayerSpec, i: int, mtp: bool) -> list[Tensor]:
    """DeepSeek-V4 attention of one layer, as llama.cpp's loader names it (src/models/deepseek4.cpp @00395eb) with the
    shapes of transformers' DeepseekV4Attention / CSA and HCA compressors / Indexer (modeling_deepseek_v4.py):
    q_a → q_a_norm → q_b, one K=V head (attn_kv + its norm), the grouped output projection (attn_output_a: each of
    o_groups groups of heads × head_dim / o_groups to o_lora_rank; attn_output_b: o_groups × o_lora_rank to hidden),
    per-head sinks. CSA (ratio 4) compressors project to 2 × head_dim (two overlapping series), HCA to head_dim;
    the window-slot bias (ape) is ratio × that width. The CSA lightning indexer has its own compressor at 2 ×
    index_head_dim, a q_b from the q latent and a per-head weight projection."""
    ca = spec.compressed_attention
    assert ca is not None
    hidden, heads, head = spec.hidden_size, ca.num_heads, ca.head_dim
    tensors = [
        _tensor("attn_q_a", i, (hidden, ca.q_lora_rank), "attention", is_mtp=mtp),
        _norm("attn_q_a_norm", i, ca.q_lora_rank, mtp),
        _tensor("attn_q_b", i, (ca.q_lora_rank, heads * head), "attention", is_mtp=mtp),
        _tensor("attn_kv", i, (hidden, head), "attention", is_mtp=mtp),
        _norm("attn_kv_a_norm", i, head, mtp),
        _tensor("attn_output_a", i, (heads * head // ca.o_groups, ca.o_groups * ca.o_lora_rank), "attention",
                is_mtp=mtp),
        _tensor("attn_output_b", i, (ca.o_groups * ca.o_lora_rank, hidden), "attention", is_mtp=mtp),
        _tensor("attn_sinks", i, (heads,), "other", is_mtp=mtp),
    ]
    if layer.mixer in ("csa", "hca"):
        ratio = ca.csa_ratio if layer.mixer == "csa" else ca.hca_ratio
        width = (2 if layer.mixer == "csa" else 1) * head
        tensors += [
            _tensor("attn_compressor_kv", i, (hidden, width), "attention", is_mtp=mtp),
            _tensor("attn_compressor_gate", i, (hidden, width), "attention", is_mtp=mtp),
            # The window-slot bias is added to the gate logits, not multiplied: kept unquantized (F32) here;
            # llama-quant.cpp has no rule naming it (not verified), and it is under 0.01 % of the weights.
            _tensor("attn_compressor_ape", i, (width, ratio), "other", is_mtp=mtp, quantizable=False),
            _norm("attn_compressor_norm", i, head, mtp),
        ]
    if layer.mixer == "csa":
        indexer = spec.dsa_indexer
        assert indexer is not None
        width = 2 * indexer.head_dim
        tensors += [
            _tensor("indexer.attn_q_b", i, (ca.q_lora_rank, indexer.num_heads * indexer.head_dim), "attention",
                    is_mtp=mtp),
            _tensor("indexer.proj", i, (hidden, indexer.num_heads), "attention", is_mtp=mtp),
            _tensor("indexer_compressor_kv", i, (hidden, width), "attention", is_mtp=mtp),
            _tensor("indexer_compressor_gate", i, (hidden, width), "attention", is_mtp=mtp),
            _tensor("indexer_compressor_ape", i, (width, ca.csa_ratio), "other", is_mtp=mtp, quantizable=False),
            _norm("indexer_compressor_norm", i, indexer.head_dim, mtp),
        ]
    return tensors


def _hyper_connections(spec: ModelSpec, i: int, mtp: bool) -> list[Tensor]:
    """DeepSeek-V4 manifold-constrained hyper-connections around the attention and the FFN of a block
    (DeepseekV4HyperConnection: fn (2 + hc) × hc outputs from the hc × hidden streams, base, 3 scales; llama.cpp
    hc_attn_* / hc_ffn_*). Computed in f32 by transformers; kept unquantized (F32) here, as small as they are."""
    ca = spec.compressed_attention
    assert ca is not None
    hc = ca.hc_mult
    mixes = (2 + hc) * hc
    tensors = []
    for site in ("attn", "ffn"):
        tensors += [
            _tensor(f"hc_{site}_fn", i, (hc * spec.hidden_size, mixes), "other", is_mtp=mtp, quantizable=False),
            _tensor(f"hc_{site}_base", i, (mixes,), "other", is_mtp=mtp),
            _tensor(f"hc_{site}_scale", i, (3,), "other", is_mtp=mtp),
        ]
    return tensors


def _kimi_delta_attention(spec: ModelSpec, i: int) -> list[Tensor]:
    """Kimi Delta Attention of Kimi K3 (vLLM models/kimi_k3/nvidia/kda.py, llama.cpp src/models/kimi-k3.cpp): q, k, v
    and the output gate g_proj, each hidden → heads × head_dim; the forget gate f_a (hidden → rank) and f_b (rank →
    heads × head_dim); beta b_proj (hidden → heads); dt_bias per channel and A_log per head (f32); short convolutions
    on q, k and v (f32 in vLLM); o_norm over head_dim; o_proj back to hidden. Named after the projections (llama.cpp's
    GGUF names were not read; no llama-quantize rule names them, so all get the file type's base type)."""
    la = spec.linear_attention
    assert la is not None
    hidden, width = spec.hidden_size, la.num_value_heads * la.value_head_dim
    rank = la.gate_rank or la.value_head_dim
    return [
        _tensor("kda_q", i, (hidden, width), "attention"),
        _tensor("kda_k", i, (hidden, width), "attention"),
        _tensor("kda_v", i, (hidden, width), "attention"),
        _tensor("kda_g", i, (hidden, width), "attention"),
        _tensor("kda_f_a", i, (hidden, rank), "attention"),
        _tensor("kda_f_b", i, (rank, width), "attention"),
        _tensor("kda_b", i, (hidden, la.num_value_heads), "attention"),
        _tensor("kda_dt_bias", i, (width,), "other"),
        _tensor("kda_a_log", i, (la.num_value_heads,), "other"),
        _tensor("kda_conv1d", i, (la.conv_kernel, 3 * width), "attention", quantizable=False),
        _norm("kda_o_norm", i, la.value_head_dim, False),
        _tensor("kda_out", i, (width, hidden), "attention"),
    ]


def _gated_delta_net(spec: ModelSpec, i: int) -> list[Tensor]:
    """Qwen3-Next linear-attention layer (modeling_qwen3_next.py Qwen3NextGatedDeltaNet; llama.cpp qwen3next).

    in_proj_qkvz is stored as attn_qkv (q, k, v) and attn_gate (z); in_proj_ba as ssm_ba.
    """
    la = spec.linear_attention
    assert la is not None
    hidden = spec.hidden_size
    key_dim = la.num_key_heads * la.key_head_dim
    value_dim = la.num_value_heads * la.value_head_dim
    conv_dim = 2 * key_dim + value_dim
    return [
        _tensor("attn_qkv", i, (hidden, conv_dim), "attention"),
        _tensor("attn_gate", i, (hidden, value_dim), "attention"),
        _tensor("ssm_ba", i, (hidden, 2 * la.num_value_heads), "attention"),
        _tensor("ssm_conv1d", i, (la.conv_kernel, conv_dim), "attention", quantizable=False),
        _tensor("ssm_dt", i, (la.num_value_heads,), "other"),
        _tensor("ssm_a", i, (la.num_value_heads,), "other"),
        _norm("ssm_norm", i, la.value_head_dim, False),
        _tensor("ssm_out", i, (value_dim, hidden), "attention"),
    ]


def _mamba2(spec: ModelSpec, i: int) -> list[Tensor]:
    """Mamba-2 mixer (modeling_nemotron_h.py NemotronHMamba2Mixer; llama.cpp ssm_* tensors)."""
    mamba = spec.mamba
    assert mamba is not None
    hidden = spec.hidden_size
    d_inner = mamba.num_heads * mamba.head_dim
    conv_dim = d_inner + 2 * mamba.n_groups * mamba.state_size
    in_width = 2 * d_inner + 2 * mamba.n_groups * mamba.state_size + mamba.num_heads  # z, x, B, C, dt
    return [
        _tensor("ssm_in", i, (hidden, in_width), "attention"),
        _tensor("ssm_conv1d", i, (mamba.conv_kernel, conv_dim), "attention", quantizable=False),
        _tensor("ssm_conv1d.bias", i, (conv_dim,), "other"),
        _tensor("ssm_dt.bias", i, (mamba.num_heads,), "other"),
        _tensor("ssm_a", i, (mamba.num_heads,), "other"),
        _tensor("ssm_d", i, (mamba.num_heads,), "other"),
        _norm("ssm_norm", i, d_inner, False),
        _tensor("ssm_out", i, (d_inner, hidden), "attention"),
    ]


def _short_conv(spec: ModelSpec, i: int) -> list[Tensor]:
    """LFM2 short-convolution block (modeling_lfm2.py Lfm2ShortConv: in_proj 3×hidden, depthwise conv)."""
    conv = spec.conv
    assert conv is not None
    hidden = spec.hidden_size
    return [
        _tensor("shortconv.in_proj", i, (hidden, 3 * hidden), "attention"),
        _tensor("shortconv.conv", i, (conv.l_cache, hidden), "attention", quantizable=False),
        _tensor("shortconv.out_proj", i, (hidden, hidden), "attention"),
    ]


def _mixer(spec: ModelSpec, layer: LayerSpec, i: int, mtp: bool) -> list[Tensor]:
    if layer.mixer in ("window", "csa", "hca"):
        if spec.compressed_attention is None:
            raise SizingError(f"model {spec.slug}: layer {i} is a {layer.mixer} layer but the spec has no "
                              "compressed_attention shape")
        return _compressed_attention(spec, layer, i, mtp)
    if layer.mixer in ("full", "sliding", "chunked"):
        if spec.mla is not None and layer.mixer == "full":
            return _mla_attention(spec, i, mtp)
        return _softmax_attention(spec, layer, i, mtp)
    missing = {"linear": spec.linear_attention, "mamba": spec.mamba, "conv": spec.conv}
    if layer.mixer in missing and missing[layer.mixer] is None:
        raise SizingError(
            f"model {spec.slug}: layer {i} is a {layer.mixer} layer but the spec has no {layer.mixer} shape"
        )
    if layer.mixer == "linear":
        if spec.linear_attention.kind == "kda":
            return _kimi_delta_attention(spec, i)
        return _gated_delta_net(spec, i)
    if layer.mixer == "mamba":
        return _mamba2(spec, i)
    if layer.mixer == "conv":
        return _short_conv(spec, i)
    return []  # "none": Nemotron-H MLP/MoE-only block


def _gated_mlp(
    prefix: str,
    suffix: str,
    i: int,
    hidden: int,
    width: int,
    group: TensorGroup,
    gated: bool,
    mtp: bool,
    experts: int | None = None,
) -> list[Tensor]:
    tail = (experts,) if experts else ()
    is_expert = experts is not None
    tensors = [
        _tensor(f"{prefix}_up{suffix}", i, (hidden, width, *tail), group, is_expert=is_expert, is_mtp=mtp),
        _tensor(f"{prefix}_down{suffix}", i, (width, hidden, *tail), group, is_expert=is_expert, is_mtp=mtp),
    ]
    if gated:
        tensors.insert(
            0,
            _tensor(
                f"{prefix}_gate{suffix}", i, (hidden, width, *tail), group, is_expert=is_expert, is_mtp=mtp
            ),
        )
    return tensors


def _ffn(spec: ModelSpec, layer: LayerSpec, i: int, mtp: bool) -> list[Tensor]:
    hidden = spec.hidden_size
    gated = spec.ffn_gated  # False: Nemotron-H squared-ReLU MLP and experts (up → down, no gate)
    if layer.ffn == "none":
        return []
    if layer.ffn == "dense":
        if not spec.intermediate_size:
            raise SizingError(
                f"model {spec.slug}: layer {i} has a dense FFN but intermediate_size is missing"
            )
        return _gated_mlp("ffn", "", i, hidden, spec.intermediate_size, "dense_ffn", gated, mtp)
    moe = spec.moe
    if moe is None:
        raise SizingError(f"model {spec.slug}: layer {i} is a MoE layer but the spec has no moe shape")
    experts = moe.num_experts
    tensors = [_tensor("ffn_gate_inp", i, (hidden, experts), "other", is_mtp=mtp, quantizable=False)]
    hash_routed = spec.compressed_attention is not None and not mtp and i < spec.compressed_attention.hash_layers
    if hash_routed:
        # DeepSeek-V4's first num_hash_layers pick experts from a token-id table (DeepseekV4HashRouter.tid2eid:
        # vocab × top-k expert ids, llama.cpp ffn_gate_tid2eid) instead of a correction bias.
        tensors.append(_tensor("ffn_gate_tid2eid", i, (moe.experts_per_token, spec.vocab_size), "other",
                               is_mtp=mtp, quantizable=False))
    elif spec.architecture in _ROUTER_BIAS_ARCHITECTURES:
        tensors.append(_tensor("exp_probs_b", i, (experts,), "other", is_mtp=mtp))
    if moe.latent_size:
        # LatentMoE: llama.cpp ffn_latent_down {n_embd, moe_n_embd} and ffn_latent_up {moe_n_embd, n_embd}
        # (src/llama-model.cpp), read for every token like any dense projection.
        tensors += [_tensor("ffn_latent_down", i, (hidden, moe.latent_size), "dense_ffn", is_mtp=mtp),
                    _tensor("ffn_latent_up", i, (moe.latent_size, hidden), "dense_ffn", is_mtp=mtp)]
    tensors += _gated_mlp(
        "ffn", "_exps", i, moe.expert_width(hidden), moe.expert_intermediate_size, "routed_experts", gated, mtp,
        experts=experts,
    )
    if spec.architecture in _GPT_OSS_ARCHITECTURES:
        width = moe.expert_intermediate_size
        tensors += [
            _tensor("ffn_gate_inp.bias", i, (experts,), "other", is_mtp=mtp),
            _tensor("ffn_gate_exps.bias", i, (width, experts), "routed_experts", is_expert=True, is_mtp=mtp),
            _tensor("ffn_up_exps.bias", i, (width, experts), "routed_experts", is_expert=True, is_mtp=mtp),
            _tensor("ffn_down_exps.bias", i, (hidden, experts), "routed_experts", is_expert=True, is_mtp=mtp),
        ]
    shared_width = moe.shared_expert_intermediate_size
    if shared_width is None:
        shared_width = moe.num_shared_experts * moe.expert_intermediate_size
    if shared_width:
        tensors += _gated_mlp("ffn", "_shexp", i, hidden, shared_width, "shared_experts", gated, mtp)
        if spec.architecture in _SHARED_EXPERT_GATE_ARCHITECTURES:
            tensors.append(
                _tensor("ffn_gate_inp_shexp", i, (hidden, 1), "other", is_mtp=mtp, quantizable=False)
            )
    return tensors


def _block(spec: ModelSpec, layer: LayerSpec, i: int, mtp: bool) -> list[Tensor]:
    hidden = spec.hidden_size
    tensors = [_norm("attn_norm", i, hidden, mtp)] if layer.mixer != "none" else []
    tensors += _mixer(spec, layer, i, mtp)
    if layer.ffn != "none":
        tensors.append(_norm("ffn_norm", i, hidden, mtp))
    if spec.architecture in _SANDWICH_NORM_ARCHITECTURES:
        tensors += [_norm("post_attention_norm", i, hidden, mtp), _norm("post_ffw_norm", i, hidden, mtp)]
    tensors += _ffn(spec, layer, i, mtp)
    if spec.compressed_attention is not None:
        tensors += _hyper_connections(spec, i, mtp)
    if spec.architecture in _KIMI_K3_ARCHITECTURES:
        tensors += [_norm("attn_res_norm", i, hidden, mtp), _tensor("attn_res_proj", i, (hidden, 1), "other",
                                                                    is_mtp=mtp, quantizable=False),
                    _norm("ffn_res_norm", i, hidden, mtp), _tensor("ffn_res_proj", i, (hidden, 1), "other",
                                                                   is_mtp=mtp, quantizable=False)]
        if layer.ffn == "moe" and spec.moe is not None and spec.moe.latent_size:
            tensors.append(_norm("ffn_latent_norm", i, spec.moe.latent_size, mtp))
    return tensors


def _mtp_block(spec: ModelSpec, i: int) -> list[Tensor]:
    """One next-token-prediction layer (DeepSeek-V3 §2.2, GLM-4.5 / Qwen3-Next "mtp"/"nextn").

    A full decoder layer (MoE when the model is MoE) plus the glue llama.cpp names nextn.*: eh_proj
    concatenates the embedding and hidden state (2 × hidden → hidden), enorm/hnorm normalize them.
    The embedding and the output head are shared with the main model (DeepSeek-V3 paper §2.2); some
    checkpoints store copies of them, which this inventory does not count.
    """
    # DeepSeek-V4's MTP layer attends over the window only (its compress_ratios entry is 0).
    layer = LayerSpec(mixer="window" if spec.compressed_attention else "full", ffn="moe" if spec.moe else "dense")
    hidden = spec.hidden_size
    return _block(spec, layer, i, True) + [
        _tensor("nextn.eh_proj", i, (2 * hidden, hidden), "other", is_mtp=True),
        _norm("nextn.enorm", i, hidden, True),
        _norm("nextn.hnorm", i, hidden, True),
        _norm("nextn.shared_head_norm", i, hidden, True),
    ]


@lru_cache(maxsize=512)
def tensor_inventory(spec: ModelSpec) -> tuple[Tensor, ...]:
    """Every weight tensor of the model in GGUF order (global tensors, then block by block, then MTP blocks).

    Cached per spec (ModelSpec is frozen and hashable). Raises SizingError for a spec without shapes.
    """
    if not spec.has_shapes:
        raise SizingError(
            f"model {spec.slug}: no layer shapes (confidence {spec.confidence}); "
            "only stated parameter counts are known"
        )
    hidden = spec.hidden_size
    tensors = [
        _tensor("token_embd", None, (hidden, spec.vocab_size), "embedding"),
        _norm("output_norm", None, hidden, False),
    ]
    if not spec.tie_word_embeddings:
        tensors.append(_tensor("output", None, (hidden, spec.vocab_size), "output"))
    if spec.architecture in _KIMI_K3_ARCHITECTURES:
        tensors += [_norm("output_res_norm", None, hidden, False),
                    _tensor("output_res_proj", None, (hidden, 1), "other", quantizable=False)]
    if spec.compressed_attention is not None:
        # DeepseekV4HyperHead: collapses the hc streams before the final norm (llama.cpp hc_head_*).
        hc = spec.compressed_attention.hc_mult
        tensors += [_tensor("hc_head_fn", None, (hc * hidden, hc), "other", quantizable=False),
                    _tensor("hc_head_base", None, (hc,), "other"),
                    _tensor("hc_head_scale", None, (1,), "other")]
    for i, layer in enumerate(spec.layers):
        tensors += _block(spec, layer, i, False)
    for j in range(spec.mtp_layers):
        tensors += _mtp_block(spec, spec.num_layers + j)
    return tuple(tensors)


def _routed_active_share(spec: ModelSpec) -> float:
    if spec.moe is None:
        return 1.0
    return spec.moe.experts_per_token / spec.moe.num_experts


@lru_cache(maxsize=512)
def count_parameters(spec: ModelSpec) -> ParameterCount:
    """Total / active / per-class parameter counts; the stated counts (flagged estimated) without shapes."""
    if not spec.has_shapes:
        return _stated_count(spec)
    sums: dict[str, int] = {
        "embedding": 0,
        "output": 0,
        "attention": 0,
        "dense_ffn": 0,
        "routed_experts": 0,
        "shared_experts": 0,
        "other": 0,
    }
    mtp = 0
    for tensor in tensor_inventory(spec):
        if tensor.is_mtp:
            mtp += tensor.elements
        else:
            sums[tensor.group] += tensor.elements
    total = sum(sums.values())
    routed = sums["routed_experts"]
    active = total - routed + routed * _routed_active_share(spec)
    return ParameterCount(
        total=float(total),
        active=float(active),
        embedding=float(sums["embedding"]),
        output=float(sums["output"]),
        attention=float(sums["attention"]),
        dense_ffn=float(sums["dense_ffn"]),
        routed_experts=float(routed),
        shared_experts=float(sums["shared_experts"]),
        other=float(sums["other"]),
        mtp=float(mtp),
    )


def _stated_count(spec: ModelSpec) -> ParameterCount:
    if not spec.stated_params_total:
        raise SizingError(f"model {spec.slug}: neither layer shapes nor a stated parameter count")
    total = spec.stated_params_total
    active = spec.stated_params_active or total
    # Without shapes the split by class is unknown: only total and active are meaningful.
    return ParameterCount(
        total=total,
        active=active,
        embedding=0.0,
        output=0.0,
        attention=0.0,
        dense_ffn=0.0,
        routed_experts=0.0,
        shared_experts=0.0,
        other=0.0,
        mtp=0.0,
        estimated=True,
        source="stated by the publisher (no shapes)",
    )
