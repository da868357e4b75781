"""GPU memory to fine-tune a model: QLoRA, LoRA and full fine-tuning, term by term.

Every method is the sum of seven terms (bytes):

  weights           the model being trained or adapted, as it sits in GPU memory
  adapters          LoRA A and B matrices (0 for full fine-tuning)
  gradients         gradients of the trainable parameters
  optimizer_states  Adam first and second moments of the trainable parameters
  master_weights    fp32 copy of bf16 trainable weights (full fine-tuning only, see below)
  activations       tensors kept for the backward pass, for batch × sequence tokens
  overhead          CUDA context and kernels, plus (QLoRA) one dequantized weight matrix

Per-parameter bytes (P = parameters of the model, A = LoRA adapter parameters):

  full,  AdamW       2 (bf16 weights) + 2 (bf16 grads) + 4 (fp32 master) + 8 (fp32 m, v) = 16 B × P.
                     ZeRO (Rajbhandari et al. 2020, §3.1): mixed-precision Adam holds "2Ψ + 2Ψ + 12Ψ =
                     16Ψ bytes". 8-bit Adam (bitsandbytes): m and v in 1 byte each plus one fp32 absmax per
                     256 values per state (bitsandbytes optim/optimizer.py, Optimizer2State.init_state:
                     ``blocks = n // 256``) = 2.03125 B, so 10.03 B × P in all.
  lora               2 B × P frozen bf16 base + 16 B × A: PEFT casts bf16/fp16 adapter weights to fp32
                     (``get_peft_model(..., autocast_adapter_dtype=True)``, the default: "typically
                     required for stable training"), so the adapters are their own fp32 master copy:
                     4 (fp32 adapter) + 4 (fp32 grad) + 8 (AdamW m, v). Same 16 B as "bf16 adapter + bf16
                     grad + fp32 master + Adam"; master_weights is therefore 0 here.
  qlora              NF4 base with double quantization (Dettmers et al. 2023, "QLoRA", §3): 4-bit codes,
                     one 8-bit absmax per 64 weights, one fp32 second-level scale per 256 blocks:
                     4 + 8/64 + 32/(64·256) = 4.127 bits per weight. Only linear layers are quantized:
                     bitsandbytes replaces nn.Linear modules, and transformers keeps the output head in
                     its original dtype (``get_keys_to_not_convert``); token embeddings (nn.Embedding) and
                     norms stay bf16. We keep them bf16 as the QLoRA reference script does after its setup
                     (artidoro/qlora ``qlora.py`` casts lm_head/embed_tokens back to bf16); note that PEFT's
                     ``prepare_model_for_kbit_training`` alone upcasts them to fp32, which costs another
                     2 B × (embedding + head parameters), 2.1 GB for Llama-3.1-8B. Adapters as for LoRA;
                     the default optimizer is bitsandbytes' paged 8-bit AdamW (the issue's choice; the
                     QLoRA paper introduced paged optimizers). Paged states may be evicted to CPU under
                     memory pressure; we count them resident.

Activations follow Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer
Models", §4.1: every matmul keeps its input, every nonlinearity its input, in 16-bit (2 B per value).
Their GPT layer totals s·b·h·(34 + 5·a·s/h) bytes; we apply the same accounting to the real shapes
(GQA, SwiGLU, MLA, MoE routed copies; no dropout, as in every current open-weight config), which gives
41·s·b·h for Llama-3.1-8B instead of 34. With FlashAttention the 5·a·s²·b score/softmax term is not
stored (Dao et al. 2022 keep only the output and the log-sum-exp). Gradient checkpointing (HF: one
checkpoint per decoder layer) keeps each layer's input (2·b·s·h bytes) and recomputes one layer at a
time in the backward pass, so the stored activations are

    layers × 2·b·s·h  +  max(loss head, largest recomputed layer)

without checkpointing every layer's activations stay alive together with the loss head. For 128K-256K
vocabularies the loss head holds the largest tensors of training ("Cut Your Losses in Large-Vocabulary
Language Models", Wijmans et al. 2024, reports it dominating memory). We count Hugging Face's unfused loss,
what a transformers + PEFT run does by default: LlamaForCausalLM.forward computes
``logits = self.lm_head(hidden_states)`` (bf16, 2 B per logit) and passes them to ``self.loss_function``,
i.e. ForCausalLMLoss (huggingface/transformers src/transformers/loss/loss_utils.py, v4.47.0 and later),
which does ``logits = logits.float()`` (an fp32 copy, 4 B) and ``nn.functional.cross_entropy``, whose
log-softmax output (fp32, 4 B) is kept for the backward pass. At the end of the forward pass all three are
alive: b·s·vocab × (2 + 4 + 4) = 10 B. The backward pass goes higher: the Trainer has dropped the model's
outputs (the bf16 logits) and the upcast copy is not saved (``.float()``'s backward needs only the dtype), but
nll_loss's backward writes a dense fp32 gradient of the log-probabilities (4 B) while they are still held (4 B),
and log-softmax's backward a dense fp32 gradient of the logits (4 B) beside both: 12 B per logit, 3 × one fp32
logits tensor, the loss head's peak. Fused/chunked cross-entropy (Liger, Unsloth, CCE) never materializes them
and holds far less.

Overhead: 1,343 MiB for the CUDA context and kernels (Hugging Face transformers docs, "Model training
anatomy": "the kernels alone take up 1.3GB", 1-2 GB depending on GPU and CUDA version). QLoRA adds one
dequantized bf16 copy of the largest quantized weight matrix (bitsandbytes ``MatMul4Bit`` dequantizes
the NF4 weight to the compute dtype for each matmul).

Why the seed's "6.2 bytes/param" for full fine-tuning is wrong: mixed-precision AdamW needs 2 B of bf16
gradients, 4 B of fp32 master weights and 8 B of fp32 Adam moments per parameter on top of the 2 B bf16
weights, 14 B beyond the weights (ZeRO §3.1), not 6.2. Even 8-bit Adam needs 8 B beyond the weights.
The seed's full fine-tuning figures are therefore about half the real requirement.

Several GPUs (``FinetuneMemory.gpus_needed``): FSDP / ZeRO-3 style. Weights, adapters, gradients,
optimizer states and master weights are sharded evenly; activations and overhead are per GPU (each
GPU runs its own micro-batch of ``batch`` sequences). FSDP all-gathers one decoder layer at a time
and prefetches the next one in the backward pass (PyTorch FSDP ``BackwardPrefetch.BACKWARD_PRE``), so
each GPU also holds two unsharded layers of weights, and for full fine-tuning one unsharded layer of
gradients before its reduce-scatter. The root unit is gathered too: transformers' FSDP auto-wrap wraps each decoder
layer (``transformer_auto_wrap_policy`` over the model's ``_no_split_modules``, the ``--fsdp_transformer_layer_cls_to_wrap``
classes), so the token embeddings, final norm and lm_head stay in the root FSDP unit, and FSDP keeps the root unsharded
from forward through backward (torch ``fully_shard``: "The root FSDP state has its value specially set to ``False``
[reshard_after_forward] as a heuristic since its parameters would typically be immediately all-gathered for
backward"): Llama-3.1-8B's 1.05 B root parameters are 1.96 GiB of bf16 on every GPU. Full fine-tuning also holds the
root's unsharded gradients until the root's reduce-scatter after the whole backward pass: the lm_head's from the
first backward op on (alongside the gathered layers), the embeddings' at the end. Routed experts are assumed expert-parallel (each GPU keeps its share
and tokens travel to them by all-to-all, as DeepSpeed-MoE, Megatron and torchtitan do), so they are never
gathered: wrapping a 256-expert DeepSeek-V3 layer whole would put ~68 GB of gathered weights on every
GPU. QLoRA shards the same way (FSDP + QLoRA, Answer.AI 2024).

LoRA targets: "attention+mlp" (the default, PEFT's "all-linear", as the QLoRA paper and Unsloth do)
adapts every token-mixer projection (q, k, v, o; the MLA projections q_a, q_b, kv_a, kv_b, o; the
in/out projections of linear-attention, Mamba and short-conv mixers) and the dense MLP and shared-expert
gate/up/down projections. "attention" adapts the token-mixer projections only.

MoE models: one assumption for QLoRA and LoRA, the stock Hugging Face stack of today (transformers v5 +
PEFT + bitsandbytes). In transformers v5 every MoE model stores its routed experts as fused 3-D
nn.Parameter tensors (``Qwen3MoeExperts.gate_up_proj`` [experts, 2·width, hidden] and ``down_proj``,
``DeepseekV3NaiveMoe``, ``GptOssExperts``; "Collection of expert weights stored as 3D tensors",
src/transformers/integrations/moe.py) and its router as a bare nn.Parameter (``Qwen3MoeTopKRouter.weight``).
transformers v4 (up to 4.57) still had ``nn.ModuleList`` of nn.Linear experts and an nn.Linear router
for Qwen3-MoE and DeepSeek-V3 (modeling_qwen3_moe.py ``Qwen3MoeSparseMoeBlock``); gpt-oss was fused from
its first release. Consequences in v5, and here:
  * bitsandbytes' 4-bit conversion replaces nn.Linear modules only, so the fused experts and routers stay
    bf16 under QLoRA (bitsandbytes issue #1849, "the experts silently stay 16-bit"; the Experts4bit PR #1965
    is not merged). Only the attention, shared-expert and dense projections are NF4.
  * PEFT's "all-linear" collects nn.Linear/Conv1D modules (peft tuners_utils
    ``_maybe_include_all_linear_layers``), so routed experts and routers get no adapters; reaching them needs
    ``target_parameters`` (PEFT 0.17+), which no default recipe sets.
Unsloth patches the loader to quantize the fused experts (unsloth issue #4032, unsloth-zoo PR #527) and so
fine-tunes Qwen3-30B-A3B in about 17.5 GB (Qwen docs, training/unsloth.md); its own docs advise against MoE
QLoRA on stock bitsandbytes ("MoE QLoRA 4-bit is not recommended due to BitsandBytes limitations",
unsloth.ai/docs/models/qwen3.5/fine-tune). The default sizes the experts in NF4 as Unsloth does, without adapters
(FinetuneOptions.moe_experts="nf4": what "4-bit QLoRA" promises and what the seed pages show, GLM-4.5's 200.75 GiB
of 4-bit weights); the page also gives the stock stack's figure (moe_experts="bf16").
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal, get_args

from reports.sizing.errors import SizingError
from reports.sizing.specs import AttentionShape, LayerSpec, MlaShape, ModelSpec

Method = Literal["qlora", "lora", "full"]
TargetModules = Literal["attention", "attention+mlp"]
Optimizer = Literal["adamw", "adamw8bit", "paged_adamw8bit"]

METHODS: tuple[Method, ...] = get_args(Method)

BF16_BYTES = 2
FP32_BYTES = 4
ACTIVATION_BYTES = 2  # bf16 activations under autocast
# Bytes per logit at the peak of Hugging Face's unfused loss (module doc): the forward pass holds the lm_head's bf16
# logits, ForCausalLMLoss's fp32 upcast and cross_entropy's fp32 log-softmax (10 B); its backward holds the fp32
# log-softmax with nll_loss's fp32 gradient of it and log-softmax's fp32 gradient of the logits (12 B).
LOSS_HEAD_FORWARD_BYTES_PER_LOGIT = BF16_BYTES + FP32_BYTES + FP32_BYTES
LOSS_HEAD_BYTES_PER_LOGIT = max(LOSS_HEAD_FORWARD_BYTES_PER_LOGIT, 3 * FP32_BYTES)

# QLoRA paper §3 "Double Quantization": 4-bit NF4 codes, 8-bit absmax per 64-weight block, fp32 scale
# per 256 absmax values.
NF4_BLOCK = 64
NF4_SECOND_LEVEL_BLOCK = 256
NF4_DOUBLE_QUANT_BITS = 4 + 8 / NF4_BLOCK + 32 / (NF4_BLOCK * NF4_SECOND_LEVEL_BLOCK)  # 4.126953125

# AdamW keeps two fp32 moments; bitsandbytes 8-bit AdamW keeps two uint8 moments plus one fp32 absmax
# per 256 values each (optim/optimizer.py Optimizer2State.init_state).
ADAM_STATES = 2
BNB_OPTIMIZER_BLOCK = 256
OPTIMIZER_BYTES_PER_PARAM: dict[Optimizer, float] = {
    "adamw": ADAM_STATES * FP32_BYTES,
    "adamw8bit": ADAM_STATES * (1 + FP32_BYTES / BNB_OPTIMIZER_BLOCK),
    "paged_adamw8bit": ADAM_STATES * (1 + FP32_BYTES / BNB_OPTIMIZER_BLOCK),
}
DEFAULT_OPTIMIZER: dict[Method, Optimizer] = {"qlora": "paged_adamw8bit", "lora": "adamw", "full": "adamw"}

# Hugging Face "Model training anatomy": nvidia-smi shows 1343 MB (MiB, pynvml used // 1024**2) after
# the first CUDA tensor, "the kernels alone take up 1.3GB".
CUDA_CONTEXT_BYTES = 1343 * 2**20

# FSDP holds the current and the prefetched next decoder layer unsharded.
FSDP_UNSHARDED_LAYERS = 2

# FlashAttention keeps the fp32 log-sum-exp per head and token for its backward pass.
FLASH_LSE_BYTES = 4
# Korthikanti §4.1 without FlashAttention: softmax output (2) + dropout mask (1) + dropout output (2)
# bytes per head per (query, key) pair.
ATTENTION_SCORE_BYTES = 5
# Router probabilities are kept in fp32 (one value per expert and token).
ROUTER_PROB_BYTES = 4


@dataclass(frozen=True)
class FinetuneOptions:
    rank: int = 16
    target_modules: TargetModules = "attention+mlp"
    batch: int = 1  # sequences per GPU per step (micro-batch)
    seq_len: int = 2048
    gradient_checkpointing: bool = True
    optimizer: Optimizer | None = None  # None: the method's usual one (QLoRA paged 8-bit, else AdamW)
    flash_attention: bool = True
    # MoE QLoRA: "nf4" (default) — the routed experts in NF4 as Unsloth's loader quantizes them (and transformers v4's
    # nn.Linear experts were), the planning figure the QLoRA name promises; "bf16" — the stock transformers v5 +
    # bitsandbytes stack, which leaves the fused experts and routers 16-bit (module doc). Neither adapts them.
    moe_experts: Literal["nf4", "bf16"] = "nf4"


@dataclass(frozen=True)
class FinetuneMemory:
    """Bytes of one fine-tuning method, term by term, and how many GPUs it needs."""

    method: Method
    optimizer: Optimizer
    trainable_params: float
    weights: float
    adapters: float
    gradients: float
    optimizer_states: float
    master_weights: float
    activations: float
    overhead: float
    fsdp_buffers: float  # per GPU when sharded over 2+ GPUs: unsharded layers FSDP gathers

    @property
    def total(self) -> float:
        """Bytes on one GPU that holds everything."""
        return self.sharded + self.replicated

    @property
    def sharded(self) -> float:
        """Model states that FSDP / ZeRO-3 splits evenly over the GPUs."""
        return self.weights + self.adapters + self.gradients + self.optimizer_states + self.master_weights

    @property
    def training_state(self) -> float:
        """What training adds to the weights: adapters, gradients, optimizer states and master weights."""
        return self.sharded - self.weights

    @property
    def replicated(self) -> float:
        """Bytes every GPU holds whatever the GPU count."""
        return self.activations + self.overhead

    def per_gpu(self, gpus: int) -> float:
        if gpus < 1:
            raise SizingError(f"gpus must be at least 1, got {gpus}")
        if gpus == 1:
            return self.total
        return self.sharded / gpus + self.replicated + self.fsdp_buffers

    def gpus_needed(self, memory_bytes_per_gpu: float) -> int | None:
        """Fewest GPUs of this (usable) memory that hold the run; None when no count does."""
        if self.total <= memory_bytes_per_gpu:
            return 1
        room_for_shards = memory_bytes_per_gpu - self.replicated - self.fsdp_buffers
        if room_for_shards <= 0:
            return None
        gpus = max(2, math.ceil(self.sharded / room_for_shards))
        while self.per_gpu(gpus) > memory_bytes_per_gpu:  # float rounding at the boundary
            gpus += 1
        return gpus


def finetune_memory(
    spec: ModelSpec, params_total: float, method: Method, options: FinetuneOptions = FinetuneOptions()
) -> FinetuneMemory:
    """Memory to fine-tune ``spec`` with ``method``.

    ``params_total``: parameters the training framework loads (transformers drops DeepSeek/GLM MTP
    layers at load time, so pass the count without them).
    """
    _validate(spec, params_total, method, options)
    inventory = _inventory(spec)
    optimizer = options.optimizer or DEFAULT_OPTIMIZER[method]
    activations = _activation_bytes(spec, inventory, options)
    if method == "full":
        return _full_memory(spec, inventory, params_total, optimizer, activations)
    return _adapter_memory(spec, inventory, params_total, method, optimizer, activations, options)


def _full_memory(
    spec: ModelSpec, inventory: _Inventory, params_total: float, optimizer: Optimizer, activations: float
) -> FinetuneMemory:
    root = _root_unit_params(spec)
    head = spec.vocab_size * spec.hidden_size  # the lm_head's gradient (tied: the shared matrix's)
    # During backward: two gathered layers + one layer's unsharded gradients + the lm_head's gradient; at its end
    # the root's whole gradient. Either way on top of the gathered root (module doc).
    layers = (FSDP_UNSHARDED_LAYERS + 1) * inventory.largest_gathered_params
    gradient_peak = max(layers + head, root) * BF16_BYTES
    return FinetuneMemory(
        method="full",
        optimizer=optimizer,
        trainable_params=params_total,
        weights=params_total * BF16_BYTES,
        adapters=0.0,
        gradients=params_total * BF16_BYTES,
        optimizer_states=params_total * OPTIMIZER_BYTES_PER_PARAM[optimizer],
        master_weights=params_total * FP32_BYTES,
        activations=activations,
        overhead=float(CUDA_CONTEXT_BYTES),
        fsdp_buffers=root * BF16_BYTES + gradient_peak,
    )


def _adapter_memory(
    spec: ModelSpec,
    inventory: _Inventory,
    params_total: float,
    method: Method,
    optimizer: Optimizer,
    activations: float,
    options: FinetuneOptions,
) -> FinetuneMemory:
    """LoRA and QLoRA: a frozen base plus fp32 adapters, their fp32 gradients and optimizer states."""
    adapter_params = options.rank * _adapter_width_sum(inventory, options.target_modules)
    if method == "lora":
        weights = params_total * BF16_BYTES
        gathered_layer_bytes = inventory.largest_gathered_params * BF16_BYTES
        overhead = float(CUDA_CONTEXT_BYTES)
    else:  # qlora
        stock = options.moe_experts == "bf16"
        unquantized = _unquantized_params(spec) + (inventory.fused_params if stock else 0)
        if params_total <= unquantized:
            raise SizingError(
                f"params_total {params_total:.4g} is not larger than the embeddings and norms of {spec.slug}"
            )
        weights = (params_total - unquantized) * NF4_DOUBLE_QUANT_BITS / 8 + unquantized * BF16_BYTES
        gathered_layer_bytes = inventory.largest_gathered_params * NF4_DOUBLE_QUANT_BITS / 8
        # One weight matrix dequantized to bf16 at a time: the largest NF4 one (the experts' too where they are NF4).
        largest = inventory.largest_matrix_params if stock else inventory.largest_any_matrix_params
        overhead = CUDA_CONTEXT_BYTES + largest * BF16_BYTES
    return FinetuneMemory(
        method=method,
        optimizer=optimizer,
        trainable_params=float(adapter_params),
        weights=weights,
        adapters=adapter_params * FP32_BYTES,
        gradients=adapter_params * FP32_BYTES,
        optimizer_states=adapter_params * OPTIMIZER_BYTES_PER_PARAM[optimizer],
        master_weights=0.0,
        activations=activations,
        overhead=overhead,
        # two gathered layers plus the root unit (embeddings, final norm, head), frozen bf16 in LoRA and QLoRA
        fsdp_buffers=FSDP_UNSHARDED_LAYERS * gathered_layer_bytes + _root_unit_params(spec) * BF16_BYTES,
    )


def finetune_memory_all(
    spec: ModelSpec, params_total: float, options: FinetuneOptions = FinetuneOptions()
) -> dict[Method, FinetuneMemory]:
    """QLoRA, LoRA and full fine-tuning for the same options (the estimate's ``finetune_gib``)."""
    return {method: finetune_memory(spec, params_total, method, options) for method in METHODS}


# --- linear layers of the model ----------------------------------------------------------------

Role = Literal["mixer", "mlp", "expert", "router"]
# Roles that transformers v5 builds as nn.Linear (bitsandbytes quantizes them, all-linear adapts them); routed
# experts and routers are fused nn.Parameter tensors (module doc).
_LINEAR_ROLES: tuple[Role, ...] = ("mixer", "mlp")


@dataclass(frozen=True)
class _Linear:
    """``count`` weight matrices of d_in × d_out with one role."""

    role: Role
    d_in: int
    d_out: int
    count: int = 1

    @property
    def params(self) -> int:
        return self.d_in * self.d_out * self.count


@dataclass(frozen=True)
class _LayerKind:
    layer: LayerSpec
    count: int  # layers of this kind in the model
    linears: tuple[_Linear, ...]
    recompute_bytes_per_token: float  # activations of one layer (FlashAttention), bytes per token
    attention_heads: int  # softmax-attention query heads (0 when the mixer has no score matrix)


@dataclass(frozen=True)
class _Inventory:
    kinds: tuple[_LayerKind, ...]
    largest_gathered_params: int  # weights FSDP gathers for the biggest layer (routed experts excluded)
    largest_matrix_params: int  # biggest single nn.Linear weight inside the layers (what stock QLoRA dequantizes)
    largest_any_matrix_params: int  # biggest weight matrix of any role (experts included)
    fused_params: int  # routed experts and routers: nn.Parameter in transformers v5, never NF4 (module doc)


@lru_cache(maxsize=256)
def _inventory(spec: ModelSpec) -> _Inventory:
    kinds = tuple(
        _layer_kind(spec, layer, count) for layer, count in Counter(spec.layers).items()
    )
    largest_gathered = max(
        sum(linear.params for linear in kind.linears if linear.role != "expert") for kind in kinds
    )
    largest_matrix = max(
        (linear.d_in * linear.d_out for kind in kinds for linear in kind.linears if linear.role in _LINEAR_ROLES),
        default=0,
    )
    largest_any = max((linear.d_in * linear.d_out for kind in kinds for linear in kind.linears), default=0)
    fused = sum(kind.count * linear.params for kind in kinds for linear in kind.linears
                if linear.role not in _LINEAR_ROLES)
    return _Inventory(
        kinds=kinds, largest_gathered_params=largest_gathered, largest_matrix_params=largest_matrix,
        largest_any_matrix_params=largest_any, fused_params=fused,
    )


def _layer_kind(spec: ModelSpec, layer: LayerSpec, count: int) -> _LayerKind:
    mixer_linears, mixer_bytes, heads = _mixer(spec, layer)
    ffn_linears, ffn_bytes = _ffn(spec, layer)
    return _LayerKind(
        layer=layer,
        count=count,
        linears=mixer_linears + ffn_linears,
        recompute_bytes_per_token=mixer_bytes + ffn_bytes,
        attention_heads=heads,
    )


def _mixer(spec: ModelSpec, layer: LayerSpec) -> tuple[tuple[_Linear, ...], float, int]:
    """Projections of the token mixer, its activation bytes per token, and its softmax query heads.

    Activation bytes per token (×2 B per value, Korthikanti accounting): the norm input, the shared
    projection input, each projection output that a later op keeps, and the output projection input.
    """
    h = spec.hidden_size
    mixer = layer.mixer
    if mixer == "none":
        return (), 0.0, 0
    if mixer in ("window", "csa", "hca"):
        raise SizingError(f"{spec.slug}: fine-tuning memory of DeepSeek-V4's compressed attention is not modeled")
    if mixer in ("full", "sliding", "chunked"):
        shape = _attention_shape(spec, layer)
        if isinstance(shape, MlaShape):
            return _mla(h, shape)
        return _gqa(h, shape)
    if mixer == "linear":
        la = spec.linear_attention
        if la is None:
            raise SizingError(f"{spec.slug}: linear-attention layers need linear_attention shapes")
        key_dim = la.num_key_heads * la.key_head_dim
        value_dim = la.num_value_heads * la.value_head_dim
        if la.kind == "kda":
            # Kimi Delta Attention (parameters._kimi_delta_attention): q, k, v, g, f_a and b from the hidden state,
            # f_b from the gate's rank, o_proj back to hidden.
            rank = la.gate_rank or la.value_head_dim
            in_width = 2 * key_dim + 2 * value_dim + rank + la.num_value_heads
            linears = (_Linear("mixer", h, in_width), _Linear("mixer", rank, value_dim), _Linear("mixer", value_dim, h))
            return linears, _generic_mixer_bytes(h, in_width, value_dim), 0
        # Qwen3-Next GatedDeltaNet: in_proj_qkvz, in_proj_ba, out_proj
        in_width = 2 * key_dim + 2 * value_dim + 2 * la.num_value_heads
        linears = (_Linear("mixer", h, in_width), _Linear("mixer", value_dim, h))
        return linears, _generic_mixer_bytes(h, in_width, value_dim), 0
    if mixer == "mamba":
        m = spec.mamba
        if m is None:
            raise SizingError(f"{spec.slug}: Mamba layers need mamba shapes")
        d_inner = m.num_heads * m.head_dim
        # Mamba-2 in_proj: z, x, B, C, dt; out_proj from d_inner
        in_width = 2 * d_inner + 2 * m.n_groups * m.state_size + m.num_heads
        linears = (_Linear("mixer", h, in_width), _Linear("mixer", d_inner, h))
        return linears, _generic_mixer_bytes(h, in_width, d_inner), 0
    if mixer == "conv":
        # LFM2 short convolution: in_proj h → 3h (B, C, x), out_proj h → h
        linears = (_Linear("mixer", h, 3 * h), _Linear("mixer", h, h))
        return linears, _generic_mixer_bytes(h, 3 * h, h), 0
    raise SizingError(f"{spec.slug}: unknown mixer {mixer!r}")


def _attention_shape(spec: ModelSpec, layer: LayerSpec) -> AttentionShape | MlaShape:
    if layer.mixer == "full":
        shape = spec.mla or spec.attention
    else:
        shape = spec.sliding_attention or spec.attention or spec.mla
    if shape is None:
        raise SizingError(f"{spec.slug}: {layer.mixer} attention layers need attention shapes")
    return shape


def _gqa(h: int, shape: AttentionShape) -> tuple[tuple[_Linear, ...], float, int]:
    q_width = shape.num_heads * shape.head_dim
    k_width = shape.num_kv_heads * shape.head_dim
    v_width = 0 if shape.k_eq_v else shape.num_kv_heads * shape.v_dim
    o_width = shape.num_heads * shape.v_dim
    linears = [_Linear("mixer", h, q_width), _Linear("mixer", h, k_width)]
    if v_width:
        linears.append(_Linear("mixer", h, v_width))
    linears.append(_Linear("mixer", o_width, h))
    a = ACTIVATION_BYTES
    # norm input, q/k/v shared input, Q and K after RoPE, V, attention output (o_proj input), LSE
    stored = a * (2 * h + q_width + k_width + v_width + o_width) + FLASH_LSE_BYTES * shape.num_heads
    return tuple(linears), stored, shape.num_heads


def _mla(h: int, shape: MlaShape) -> tuple[tuple[_Linear, ...], float, int]:
    heads = shape.num_heads
    qk_head = shape.qk_nope_head_dim + shape.qk_rope_head_dim
    a = ACTIVATION_BYTES
    linears: list[_Linear] = []
    stored = a * 2 * h  # norm input, shared input of q_a / q_proj and kv_a
    if shape.q_lora_rank:
        linears += [
            _Linear("mixer", h, shape.q_lora_rank),  # q_a_proj
            _Linear("mixer", shape.q_lora_rank, heads * qk_head),  # q_b_proj
        ]
        stored += a * 2 * shape.q_lora_rank  # q_a output (q_a_layernorm input) and q_b input
    else:
        linears.append(_Linear("mixer", h, heads * qk_head))
    kv_a_width = shape.kv_lora_rank + shape.qk_rope_head_dim
    linears += [
        _Linear("mixer", h, kv_a_width),  # kv_a_proj_with_mqa
        _Linear("mixer", shape.kv_lora_rank, heads * (shape.qk_nope_head_dim + shape.v_head_dim)),  # kv_b
        _Linear("mixer", heads * shape.v_head_dim, h),  # o_proj
    ]
    # kv_a output (norm input), kv_b input, Q and K per head, V per head, o_proj input, LSE
    stored += a * (kv_a_width + shape.kv_lora_rank + 2 * heads * qk_head + 2 * heads * shape.v_head_dim)
    stored += FLASH_LSE_BYTES * heads
    return tuple(linears), stored, heads


def _generic_mixer_bytes(h: int, in_width: int, out_in_width: int) -> float:
    """Recurrent / conv mixers: norm input, in_proj input, in_proj output and its conv/activation
    output, out_proj input (chunked-scan internals not counted)."""
    return ACTIVATION_BYTES * (2 * h + 2 * in_width + out_in_width)


def _ffn(spec: ModelSpec, layer: LayerSpec) -> tuple[tuple[_Linear, ...], float]:
    h = spec.hidden_size
    a = ACTIVATION_BYTES
    gated = getattr(spec, "ffn_gated", True)
    if layer.ffn == "none":
        return (), 0.0
    if layer.ffn == "dense":
        if not spec.intermediate_size:
            raise SizingError(f"{spec.slug}: dense FFN layers need intermediate_size")
        linears = _mlp_linears("mlp", h, spec.intermediate_size, gated)
        # norm input, gate/up shared input, then per token of the MLP width
        return linears, a * 2 * h + _mlp_bytes(spec.intermediate_size, gated)
    moe = spec.moe
    if moe is None:
        raise SizingError(f"{spec.slug}: MoE layers need moe shapes")
    k = moe.experts_per_token
    width = moe.expert_width(h)  # LatentMoE experts read and write the latent
    linears = list(_mlp_linears("expert", width, moe.expert_intermediate_size, gated, moe.num_experts))
    linears.append(_Linear("router", h, moe.num_experts))
    shared_width = (
        moe.shared_expert_intermediate_size or moe.num_shared_experts * moe.expert_intermediate_size
    )
    stored = (
        a * 2 * h  # norm input, router and expert input
        + ROUTER_PROB_BYTES * moe.num_experts
        + a * 2 * k * width  # each token copied to k experts, and the k expert outputs kept for weighting
        + k * _mlp_bytes(moe.expert_intermediate_size, gated)
    )
    if moe.latent_size:
        # the latent projections' inputs: the normed hidden state (already kept) and the combined latent
        linears += [_Linear("mlp", h, width), _Linear("mlp", width, h)]
        stored += a * width
    if shared_width:
        linears += _mlp_linears("mlp", h, shared_width, gated)
        stored += _mlp_bytes(shared_width, gated)
    return tuple(linears), stored


def _mlp_linears(role: Role, h: int, width: int, gated: bool, count: int = 1) -> tuple[_Linear, ...]:
    up = _Linear(role, h, width, count)
    ups = (up, up) if gated else (up,)  # gate and up projections share the shape
    return ups + (_Linear(role, width, h, count),)


def _mlp_bytes(width: int, gated: bool) -> float:
    """Per token: SwiGLU keeps gate output, up output, act(gate), and the product (down input) = 4
    values of the MLP width; an ungated MLP keeps the up output and the activation output = 2."""
    return ACTIVATION_BYTES * (4 if gated else 2) * width


def _adapter_width_sum(inventory: _Inventory, target_modules: TargetModules) -> int:
    """Σ over adapted matrices of (d_in + d_out): LoRA adds A (r × d_in) and B (d_out × r)."""
    roles = {"attention": ("mixer",), "attention+mlp": ("mixer", "mlp")}[target_modules]
    return sum(
        kind.count * linear.count * (linear.d_in + linear.d_out)
        for kind in inventory.kinds
        for linear in kind.linears
        if linear.role in roles
    )


def _unquantized_params(spec: ModelSpec) -> int:
    """Token embeddings, output head (unless tied) and RMSNorm weights: bitsandbytes leaves them 16-bit (and, on the
    stock transformers v5 stack, a MoE's fused experts and routers: FinetuneOptions.moe_experts).

    Norms: two per layer plus the final one (Llama layout); MLA/QK-norms add < 0.01 % and are left out.
    """
    embedding = spec.vocab_size * spec.hidden_size
    head = 0 if spec.tie_word_embeddings else embedding
    norms = (2 * spec.num_layers + 1) * spec.hidden_size
    return embedding + head + norms


def _root_unit_params(spec: ModelSpec) -> int:
    """What FSDP's root unit holds once the decoder layers are wrapped: token embeddings, the final norm and the
    lm_head (unless tied to the embeddings)."""
    embedding = spec.vocab_size * spec.hidden_size
    return embedding + (0 if spec.tie_word_embeddings else embedding) + spec.hidden_size


# --- activations -------------------------------------------------------------------------------


def _activation_bytes(spec: ModelSpec, inventory: _Inventory, options: FinetuneOptions) -> float:
    tokens = options.batch * options.seq_len
    loss_head = tokens * spec.vocab_size * LOSS_HEAD_BYTES_PER_LOGIT
    layer_bytes = [(kind.count, _layer_activation_bytes(kind, options)) for kind in inventory.kinds]
    if options.gradient_checkpointing:
        checkpoints = spec.num_layers * tokens * spec.hidden_size * ACTIVATION_BYTES
        largest_layer = max(bytes_ for _, bytes_ in layer_bytes)
        return checkpoints + max(loss_head, largest_layer)
    return sum(count * bytes_ for count, bytes_ in layer_bytes) + loss_head


def _layer_activation_bytes(kind: _LayerKind, options: FinetuneOptions) -> float:
    tokens = options.batch * options.seq_len
    stored = kind.recompute_bytes_per_token * tokens
    if not options.flash_attention and kind.attention_heads:
        # Korthikanti §4.1: 5·a·s²·b bytes of scores, softmax and dropout per layer
        stored += ATTENTION_SCORE_BYTES * kind.attention_heads * options.seq_len**2 * options.batch
    return stored


def _validate(spec: ModelSpec, params_total: float, method: str, options: FinetuneOptions) -> None:
    if method not in METHODS:
        raise SizingError(f"method must be one of {', '.join(METHODS)}; got {method!r}")
    if not spec.has_shapes:
        raise SizingError(
            f"fine-tuning memory needs layer shapes; {spec.slug} has only stated parameter counts"
        )
    if not params_total > 0:
        raise SizingError(f"params_total must be positive, got {params_total}")
    if options.rank < 1:
        raise SizingError(f"rank must be at least 1, got {options.rank}")
    if options.batch < 1:
        raise SizingError(f"batch must be at least 1, got {options.batch}")
    if options.seq_len < 1:
        raise SizingError(f"seq_len must be at least 1, got {options.seq_len}")
    if options.target_modules not in get_args(TargetModules):
        raise SizingError(
            f"target_modules must be one of {', '.join(get_args(TargetModules))}; "
            f"got {options.target_modules!r}"
        )
    if options.optimizer is not None and options.optimizer not in OPTIMIZER_BYTES_PER_PARAM:
        raise SizingError(
            f"optimizer must be one of {', '.join(OPTIMIZER_BYTES_PER_PARAM)}; got {options.optimizer!r}"
        )
