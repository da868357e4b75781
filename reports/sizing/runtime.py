"""Engine runtime memory besides weights and KV: llama.cpp buffers; vLLM's budget and its KV token capacity.

llama.cpp (sources: ``src/llama-context.cpp`` ``llama_context::llama_context`` → ``graph_reserve`` /
``ggml_backend_sched_reserve``; ``output_reserve``; ``src/llama-graph.cpp`` ``build_attn_mha``;
``ggml/src/ggml-alloc.c`` ``ggml_gallocr_reserve_n``): the compute buffer is the *peak* of live tensors of the
worst-case graph of ``n_ubatch`` tokens, so the logits phase and the attention phase do not add up:

* logits: ``4 · ub · (n_vocab + n_embd)`` B (f32 logits of every token of the ubatch + the last hidden state);
* flash attention off: the f32 score matrix ``KQ = n_kv × ub × n_head`` plus its softmax and a few
  ``ub × n_embd`` activations: ``4 · ub · (n_kv · (n_head + 1) + 4 · n_embd)``; with flash attention on, the
  scores are never materialised and the buffer is flat in the context;
* host compute buffer: token-embedding ``get_rows`` on the CPU and the f32 KQ mask: ``4 · ub · (n_embd + n_kv)``;
* output buffer (host): ``4 · n_vocab · n_seq`` (``output_reserve``, n_outputs_max = n_seq_max at start-up).

The formulas and the log lines that check them are in bench/data/llamacpp_runtime.csv (see its README).

vLLM (V1; ``vllm/v1/worker/gpu_worker.py`` ``Worker.determine_available_memory``; ``vllm/utils/mem_utils.py``
``memory_profiling``; ``vllm/v1/core/kv_cache_utils.py`` ``get_kv_cache_configs``): the worker requests
``gpu_memory_utilization × total`` and gives the KV cache what is left after weights, the profile run's torch
peak (activations) and non-torch memory (NCCL, cuBLAS, custom all-reduce), and — from v0.21.0 — the CUDA graph
memory estimate. We model **v0.21** by default (``VLLM_MODELLED_VERSION``); pass ``vllm_version=(0, 19)`` to
reproduce logs of versions that kept graphs outside the budget.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from math import ceil

from .errors import SizingError
from .explain import grouped, sequences
from .kv_cache import (
    GIB,
    KV_DTYPE_BYTES,
    VLLM_BLOCK_SIZE,
    VLLM_DSV4_BLOCK_TOKENS,
    KvBreakdown,
    KvTerm,
    dsv4_layer_counts,
    llama_cpp_dsv4_cells,
    llama_cpp_n_ctx,
    resolve_kv_dtype,
    stage_layers,
    vllm_blocks_per_request,
    vllm_group_size,
    vllm_model_dtype,
)
from .specs import ModelSpec, Scenario, scenario_with

MIB = 2**20
F32 = 4  # bytes; llama.cpp compute tensors, logits, masks and vLLM sampler logits are f32

# --- llama.cpp -----------------------------------------------------------------------------------------------
# FA-off attention activations besides KQ: 4 × ub × n_embd f32 tensors live at the peak. Fitted to nothing:
# logdetective PR #106 (n_embd 4096, ub 512) shows exactly 32 MiB = 4 × 4 × 512 × 4096 B on top of KQ at two
# context sizes (164 and 2144 MiB); Pythia (gptneox) shows 30 MiB (c ≈ 3), inside the 10 % check.
LLAMA_CPP_FA_OFF_EMBD_TENSORS = 4

# DeepSeek-V4's compute graph (src/models/deepseek4.cpp, src/llama-graph.cpp at llama.cpp 0c1e57098) is reserved
# for the whole padded caches, so tensors that span them are in the buffer at any context: the f16 masks over the
# raw, CSA, indexer and HCA cells (f32 without flash attention), the lightning indexer's head-summed f32 score over
# the CSA cells (the fused GGML_OP_LIGHTNING_INDEXER), a top-k mask and the concatenated raw + CSA mask and keys.
# ggml-alloc leaves gaps between them: ggml-org/llama.cpp#27680 reports a CUDA0 compute buffer of 2570.28 MiB for
# DeepSeek-V4-Flash at n_ctx 64000 and n_ubatch 4096 (its 4352-cell SWA cache is pad256(128 + 4096)), 1.19 × the
# 2154.0 MiB of tensors live together at the peak; the same graph on llama.cpp's CPU backend gives 1.02-1.26 ×
# (bench/data/dsv4_compute_buffer.csv). Flash attention off: the f32 KQ over raw + CSA cells × 64 heads dominates,
# 1.03 × (ibid.).
DSV4_ALLOCATOR_OVERHEAD = 1.2

# Device context created before any buffer: CUDA primary context, cuBLAS handle, kernel modules loaded lazily.
# Sourced range: llama.cpp PR #20595 "creation of a CUDA primary context (120-550 MB depending on GPU)";
# PR #23604 measured 107 MiB (RTX 4060 Ti, 34 SMs) to 555 MiB (RTX PRO 6000 Blackwell, 188 SMs) — it scales
# with the SM count, which HardwareSpec does not carry; unsloth PR #6718 reserves ~330 MiB on 24 GB cards.
# Assumption: 300 MiB for CUDA and ROCm (HIP contexts are of the same order), 0 where no such context exists
# (Metal/unified memory: the process heap is the budget) or no figure is sourced (Vulkan, SYCL, CANN, other).
DEVICE_CONTEXT_BYTES = {"cuda": 300 * MIB, "rocm": 300 * MIB}
# The libraries behind vLLM's non-torch memory, by backend: cuBLAS and NCCL on CUDA; on ROCm vLLM loads RCCL in
# NCCL's place (distributed/device_communicators/pynccl_wrapper.py: librccl.so.1 when torch.version.hip) and AMD's
# vLLM guide names hipBLASLt (rocm.docs.amd.com, "vLLM V1 performance optimization"). The size is the CUDA one.
VLLM_NON_TORCH_LIBRARIES = {"cuda": "cuBLAS/NCCL", "rocm": "hipBLASLt/RCCL"}

# --- vLLM ------------------------------------------------------------------------------------------------------
VLLM_MODELLED_VERSION = (0, 21)
# Graph memory estimate subtracted from the KV budget by default since v0.21.0 (PR #30515 added the estimate;
# the v0.21 log: "CUDA graph memory profiling is enabled (default since v0.21.0)").
VLLM_GRAPHS_IN_BUDGET_SINCE = (0, 21)

# EngineArgs.get_batch_defaults (vllm/engine/arg_utils.py), OPENAI_API_SERVER usage context:
# device memory >= 70 GiB and not an A100 (PR #17885: large budgets slow A100 down) → 8192 tokens / 1024 seqs,
# else 2048 / 256.
VLLM_LARGE_GPU_BYTES = 70 * GIB
VLLM_LARGE_GPU_DEFAULTS = (1024, 8192)  # (max_num_seqs, max_num_batched_tokens)
VLLM_SMALL_GPU_DEFAULTS = (256, 2048)

# Sampler warm-up (GPUModelRunner._dummy_sampler_run): bf16 logits of min(max_num_seqs, max_num_batched_tokens)
# requests × the vocabulary, sampled with top-p 0.9 and top-k = vocab − 1, so the top-k/top-p path runs.
# - Since v0.17 apply_top_k_top_p runs vLLM's Triton kernel for 8 rows or more (PR #33538: pivot search, no sort):
#   bf16 logits (2 B) + f32 logits (4 B) + probabilities and exponential noise (4 + 4 B) = 14 B per (request ×
#   vocab) element, plus the kernel's buffers: 16 B, fitted to the logs. The v0.19 H100 logs show 14.8-16 B per
#   element: Llama 1.89 GiB at vocab 128,256, Qwen 2.21 at 151,936, Gemma 3 3.89-3.99 at 262,208, phi-4 1.52 at
#   100,352 (NOTES-runtime.md); Qwen3-14B 2.23 GiB under v0.17 and v0.18 (llm-d-planner version sweep,
#   bench/data/vllm_memory.csv).
# - Before v0.17 it sorted the whole vocabulary with PyTorch (the FlashInfer sampler was optional or opt-in):
#   bf16 (2 B) and f32 (4 B) logits, the sort's values and int64 indices (12 B), PyTorch's int64 reverse indices
#   (8 B, aten SortStable.cu segmented_sort_pairs) and CUB's scratch copy of keys and values (12 B) = 38 B.
#   Checks: Qwen3-14B 5.64 GiB under v0.15 and v0.16 (38.9 B/element; the same sweep); gpt-oss-120b on one H100
#   under v0.11 leaves 1.71 GiB for the KV cache (vllm#27508; 1.73 predicted) and v0.10.1 −2.14 (vllm#23278).
VLLM_TRITON_SAMPLER_SINCE = (0, 17)
VLLM_SAMPLER_BYTES_PER_LOGIT = 16
VLLM_SORT_SAMPLER_BYTES_PER_LOGIT = 38
# Forward pass of the dummy run over max_num_batched_tokens: the FFN's gate+up output (2 × width) and the
# activated product (1 × width) plus ~4 hidden-size tensors (residual, norm output, attention output, input),
# in the activation dtype. Check: CodeLlama-7B (vocab 32k, so no sampler peak) 8192 × 2 B × (3 × 11008 +
# 4 × 4096) = 0.75 GiB vs 0.77 logged; Granite-8B 0.84 vs 0.85.
VLLM_FORWARD_FFN_TENSORS = 3
VLLM_FORWARD_HIDDEN_TENSORS = 4
# "non-torch forward increase" in the v0.19 logs (NOTES-runtime.md): ~0.24-0.27 GiB at TP 1 (cuBLAS workspace
# etc.), 2.06-2.21 GiB per rank at TP > 1 (NCCL buffers + custom all-reduce).
VLLM_NON_TORCH_TP1 = 0.25 * GIB
VLLM_NON_TORCH_TP = 2.1 * GIB
# CUDA graph pool: least-squares fit of "Graph capturing finished ... took X GiB" over the 43 single-stage
# v0.19 H100 rows (51 PIECEWISE + 51 FULL sizes up to 512): 0.51 GiB + 0.0135 GiB per decoder layer, median
# |error| 5.5 %, worst 45 % (MoE DeepSeek-V2-Lite). TP barely changes it (fit coefficient 0.007 GiB per
# doubling). The per-layer part scales with the number of captured sizes. The profiler's own estimate (what
# v0.21 subtracts) is within ±25 % of the actual value and overshoots on some runs.
VLLM_GRAPH_BASE = 0.51 * GIB
VLLM_GRAPH_PER_LAYER = 0.0135 * GIB
VLLM_GRAPH_REFERENCE_SIZES = 51
# "GPU KV cache size: N tokens". Up to v0.20 _report_kv_cache_config (vllm/v1/core/kv_cache_utils.py) printed
# num_blocks // len(kv_cache_groups) × the smallest block size, which for hybrid models counts a pool's tokens as if
# every KV group kept each of them (vllm#40691, v0.19.0: Qwen3.5-27B 290,864 tokens beside "33.04x" at 32,768).
# v0.21 prints int(max_concurrency × max_model_len) (get_kv_cache_capacity: max_concurrency = num_blocks / the blocks
# one request at max_model_len takes, summed over the groups, get_max_concurrency_for_kv_cache_config); the diff was
# proposed in vllm#38364 and vllm#40694. Dated by the logs: vllm#43308 (Gemma 4 31B, the same ~50 GB pool: ~55k tokens
# under v0.20.0, ~525k under v0.21.0) and vllm#42206 (merged 2026-05-10: "the startup log already reports the correct
# group-aware KV cache capacity"); v0.27.1 logs 302,921 tokens at 2.31x of 131,072 (kv_measured.csv, Qwen3.8-27B TP2,
# mitchross/talos-argocd-proxmox#1995). The PR that merged it was not identified.
VLLM_TOKENS_FROM_CONCURRENCY_SINCE = (0, 21)
# Quantized MoE under vLLM: the one published log of a quantized (non-MXFP4) MoE checkpoint with its KV budget,
# Qwen3-235B-A22B-FP8 on 4 × H100 at TP 4 and the default 0.9 (vllm-project/vllm#21348, 2025-07-22, so a v0.9/v0.10
# build: PyTorch-sort sampler, graphs outside the budget), logged "Available KV cache memory: 8.11 GiB" and 178,880
# tokens (11,180 blocks of 16 × 48,128 B = 8.02 GiB: the smallest worker's pool). This engine, for that version and
# its own FP8 weights (55.12 GiB per rank; the log shows none), sizes 0.9 × 79.19 − 55.12 − 5.51 (sampler) − 2.10
# (non-torch) = 8.54 GiB (bench/kv_runtime_accuracy.py). The 0.43 GiB per GPU (5 %) is not modelled: a candidate is
# the fused-MoE workspace (workspace13 + workspace2 of max_num_batched_tokens × top_k rows) that vLLM's
# WorkspaceManager (vllm/v1/worker/workspace.py, used by fused_moe/modular_kernel.py) keeps allocated through the
# profile run's sampler warm-up, but which MoE path and buffer lifetime that build had was not established. MXFP4
# checkpoints (gpt-oss) are outside it: their rows agree within 1 % (vllm#27508 at v0.11; llm-d-planner's v0.19
# gpt-oss-20b logs). The figures are the estimate's vllm_quantized_moe_gap note.
VLLM_QUANTIZED_MOE_LOGGED_KV_GIB = 8.11
VLLM_QUANTIZED_MOE_MODELLED_KV_GIB = 8.54
VLLM_QUANTIZED_MOE_SOURCE = "vllm-project/vllm#21348"
# vLLM attention backends need the KV block size to be a multiple of this when it is enlarged for hybrid
# Mamba models (HybridAttentionMambaModelConfig.verify_and_update_config; FlashAttention alignment 16).
VLLM_KERNEL_BLOCK_ALIGNMENT = 16


@dataclass(frozen=True)
class RuntimeTerm:
    name: str  # "compute buffer", "activation peak", ...
    bytes: float
    location: str  # "device" or "host"
    explanation: str
    inputs: dict = field(default_factory=dict, compare=False, hash=False)
    in_kv_budget: bool = True  # vLLM: inside gpu_memory_utilization × total (False: extra on top)


@dataclass(frozen=True)
class VllmKvCapacity:
    available_bytes: float  # "Available KV cache memory"
    page_bytes: float  # one block of one layer slot
    group_size: int  # layers sharing one memory pool (KVCacheTensor)
    num_groups: int  # KV cache groups (block tables)
    num_blocks: int
    blocks_per_request: int  # at max_model_len
    kv_tokens: int  # "GPU KV cache size: N tokens" as the modelled version prints it (vllm_printed_kv_tokens)
    max_concurrency: float  # "Maximum concurrency for L tokens per request"
    block_bytes: float = 0.0  # what one block of the pool costs (all the layers it serves)
    block_tokens: int = 0  # num_blocks // groups × smallest block size: the figure vLLM printed before v0.21

    @property
    def request_bytes(self) -> float:
        """What one request at max_model_len takes of the pool: its blocks, at what a block costs. Above the
        request's own KV bytes where the blocks round up, and for hybrid models, whose layer groups are padded to
        one size (a group of sliding-window layers takes blocks for layers it does not have)."""
        return self.blocks_per_request * self.block_bytes


@dataclass(frozen=True)
class RuntimeBreakdown:
    engine: str
    terms: tuple[RuntimeTerm, ...]
    device_bytes: float  # runtime terms on one GPU (not weights, not KV)
    host_bytes: float
    # vLLM only
    vllm_version: tuple[int, int] | None = None
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    preallocated_bytes: float | None = None  # gpu_memory_utilization × total, per GPU
    capacity: VllmKvCapacity | None = None
    # vLLM on Gaudi: (1 − gpu_memory_utilization) × the memory free after loading and profiling, which it leaves
    # unused, and the HPU-graph reserve it takes from the rest; the usable memory of the fit is the total less both
    # (CUDA: less (1 − utilization) × total instead), so "required" is the model's weights, KV and activations.
    unused_bytes: float = 0.0
    graph_reserve_bytes: float = 0.0
    # vLLM: one rank's weights and the memory the device reports. Weights beyond that memory fail while loading,
    # before vLLM measures anything or sizes a pool (torch's out-of-memory error on CUDA and Gaudi alike).
    weights_per_gpu_bytes: float | None = None
    device_memory_bytes: float | None = None

    @property
    def weights_exceed_device(self) -> bool:
        return (self.weights_per_gpu_bytes is not None and self.device_memory_bytes is not None
                and self.weights_per_gpu_bytes > self.device_memory_bytes)

    @property
    def device_bytes_in_kv_budget(self) -> float:
        """The device terms vLLM takes out of gpu_memory_utilization × total before its KV pool (activation peak,
        non-torch memory, CUDA graphs from v0.21): the device context and, before v0.21, the graph pool sit in the
        (1 − utilization) rest, outside what the pool is sized from."""
        return sum(t.bytes for t in self.terms if t.location == "device" and t.in_kv_budget)

    @property
    def device_bytes_outside_kv_budget(self) -> float:
        """What vLLM holds on a GPU besides gpu_memory_utilization × total (the device context; before v0.21 also the
        graph pool): a monitor shows it on top of that budget."""
        return self.device_bytes - self.device_bytes_in_kv_budget

    @property
    def device_bytes_at_start(self) -> float | None:
        """vLLM: what a monitor shows in use per GPU once it started (its budget and what it holds besides)."""
        if self.preallocated_bytes is None:
            return None
        return self.preallocated_bytes + self.device_bytes_outside_kv_budget

    @property
    def kv_capacity_tokens(self) -> int | None:
        return None if self.capacity is None else self.capacity.kv_tokens

    @property
    def max_concurrency(self) -> float | None:
        return None if self.capacity is None else self.capacity.max_concurrency

    def term(self, name: str) -> RuntimeTerm | None:
        return next((t for t in self.terms if t.name == name), None)


def runtime_memory(
    spec: ModelSpec,
    scenario: Scenario,
    *,
    weights_bytes_per_gpu: float,
    kv: KvBreakdown,
    hardware_memory_bytes: float | None,
    hardware_name: str = "",
    backend: str = "cuda",
    vllm_version: tuple[int, int] = VLLM_MODELLED_VERSION,
    enforce_eager: bool = False,
    hpu: bool = False,
) -> RuntimeBreakdown:
    """Runtime memory of ``scenario.engine`` for ``spec``.

    ``hardware_memory_bytes``: one device's total memory as the driver reports it (``cudaMemGetInfo`` total,
    e.g. 79.19 GiB on an H100 80GB); required for vLLM (its budget is a fraction of it), optional for llama.cpp.
    ``hardware_name`` only matters for vLLM's defaults (A100s get the small-GPU scheduler budget).
    ``weights_bytes_per_gpu`` and ``kv`` come from weights.py and kv_cache.kv_cache for the same scenario.
    ``hpu``: vLLM runs on Intel Gaudi through the vllm-gaudi plugin, which budgets its memory its own way.
    """
    if scenario.engine == "llama.cpp":
        return _llama_cpp_runtime(spec, scenario_with(scenario, **_NOT_READ_BY_LLAMA_CPP_RUNTIME), backend)
    if scenario.engine == "vllm":
        if not hardware_memory_bytes or hardware_memory_bytes <= 0:
            raise SizingError("vLLM sizing needs the accelerator's memory (--hardware)")
        if hpu:
            return _vllm_hpu_runtime(spec, scenario, weights_bytes_per_gpu, kv, hardware_memory_bytes, hardware_name,
                                     enforce_eager)
        return _vllm_runtime(spec, scenario, weights_bytes_per_gpu, kv, hardware_memory_bytes, hardware_name,
                             backend, vllm_version, enforce_eager)
    raise SizingError(f"unknown --engine {scenario.engine!r}")


# --- llama.cpp -------------------------------------------------------------------------------------------------

def _attention_heads(spec: ModelSpec) -> int:
    """Query heads of the widest softmax-attention layer (the KQ matrix has one slice per query head)."""
    heads = [shape.num_heads for shape in (spec.attention, spec.sliding_attention) if shape is not None]
    if spec.mla is not None:
        heads.append(spec.mla.num_heads)
    return max(heads, default=0)


def llama_cpp_buffers(spec: ModelSpec, scenario: Scenario) -> dict[str, tuple[float, str]]:
    """Compute (device), host compute and output buffers in bytes, each with its explanation."""
    n_ctx = llama_cpp_n_ctx(scenario.context, scenario.batch)
    ub = min(scenario.n_ubatch, n_ctx)
    # Worst-case graph: n_kv = the full cache (graph_reserve uses the whole KV size).
    n_kv = n_ctx
    n_vocab, n_embd = spec.vocab_size, spec.hidden_size
    logits = F32 * ub * (n_vocab + n_embd)
    compute = logits
    compute_how = f"4 B × ub {ub} × (n_vocab {grouped(n_vocab)} + n_embd {grouped(n_embd)}) logits peak"
    if not n_vocab:  # a model known only by its stated parameters, without a sourced family member
        compute_how = "vocabulary and width unknown (no config.json): the logits peak is not counted"
    n_head = _attention_heads(spec)
    if not scenario.flash_attention and n_head:
        attention = F32 * ub * (n_kv * (n_head + 1) + LLAMA_CPP_FA_OFF_EMBD_TENSORS * n_embd)
        if attention > logits:
            compute = attention
            compute_how = (f"flash attention off: 4 B × ub {ub} × (n_kv {grouped(n_kv)} × ({n_head} heads + 1) + "
                           f"{LLAMA_CPP_FA_OFF_EMBD_TENSORS} × n_embd {grouped(n_embd)}) KQ peak")
    if spec.compressed_attention is not None:
        attention, attention_how = _dsv4_compute_peak(spec, scenario, ub)
        if attention > compute:
            compute, compute_how = attention, attention_how
    host = F32 * ub * (n_embd + n_kv)
    output = F32 * n_vocab * scenario.batch
    host_how = f"4 B × ub {ub} × (n_embd {grouped(n_embd)} + n_kv {grouped(n_kv)}): embeddings + KQ mask"
    output_how = f"4 B × n_vocab {grouped(n_vocab)} × {sequences(scenario.batch)} (f32 logits)"
    if not n_embd:  # no config.json: a width of 0 would read as a fact
        host_how = (f"4 B × ub {ub} × n_kv {grouped(n_kv)}: the KQ mask (width unknown, no config.json: the "
                    "embeddings are not counted)")
    if not n_vocab:
        output_how = "vocabulary unknown (no config.json): the f32 logits are not counted"
    return {
        "compute buffer": (compute, compute_how),
        "host compute buffer": (host, host_how),
        "output buffer": (output, output_how),
    }


def _dsv4_compute_peak(spec: ModelSpec, scenario: Scenario, tokens: int) -> tuple[float, str]:
    """DeepSeek-V4's compute buffer at a CSA layer's attention (DSV4_ALLOCATOR_OVERHEAD names the sources): the
    graph inputs (token embeddings, the masks over the raw, CSA, indexer and HCA cells, the top-k leaves of every CSA
    layer) stay live; with them the two f32 hyper-connection residual streams, the f32 queries (heads × head_dim),
    the concatenated raw + CSA mask and keys, and either the attention output (flash attention: the larger of the
    point at the attention and the one at the concat, where the top-k mask is still live) or the f32 KQ scores.
    ``tokens``: the reserved graph's micro-batch (llama_cpp_buffers' ub: graph_reserve takes min(n_ctx, n_ubatch))."""
    ca, indexer = spec.compressed_attention, spec.dsa_indexer
    assert ca is not None
    raw, csa, hca = llama_cpp_dsv4_cells(spec, scenario)
    mask = 2 if scenario.flash_attention else F32  # f16 masks for flash attention
    _, csa_layers, _ = dsv4_layer_counts(spec)
    top_k = min(indexer.topk, csa) if indexer is not None else 0
    width = spec.hidden_size
    inputs = tokens * (F32 * width + mask * (raw + csa + hca) + 2 * csa) + csa_layers * mask * top_k * tokens
    streams = 2 * F32 * ca.hc_mult * width * tokens
    queries = F32 * ca.num_heads * ca.head_dim * tokens
    keys = KV_DTYPE_BYTES[resolve_kv_dtype(scenario.kv_dtype, "llama.cpp", spec)] * ca.head_dim * (raw + csa)
    cells = f"raw {grouped(raw)} + CSA {grouped(csa)} cells"
    if scenario.flash_attention:
        at_attention = inputs + streams + 2 * queries + mask * tokens * (raw + csa) + keys
        at_concat = at_attention - queries + mask * tokens * csa
        live = max(at_attention, at_concat)
        return live * DSV4_ALLOCATOR_OVERHEAD, (
            f"DeepSeek-V4 CSA attention: ub {tokens} × ({cells} f16 masks, indexer scores, {ca.num_heads} heads × "
            f"{ca.head_dim} f32 queries and output, {ca.hc_mult}-stream residuals) = {live / MIB:,.0f} MiB live "
            f"× {DSV4_ALLOCATOR_OVERHEAD} allocator gaps")
    live = inputs + streams + queries + F32 * ca.num_heads * (raw + csa) * tokens + 2 * keys
    return live, (f"flash attention off: DeepSeek-V4 CSA KQ 4 B × ub {tokens} × ({cells}) × {ca.num_heads} heads, "
                  f"plus masks, queries and residuals")


# The scenario's fields llama.cpp's runtime terms do not read (llama_cpp_buffers and _dsv4_compute_peak read the
# context, batch, -ub, flash attention, KV type and --swa-full; nor do they read the KV cache or the weights), at
# fixed values: the terms of one configuration are computed once for every weight format, GPU count and offload
# (a report's quantization matrix asks 15 formats, the searches over accelerators a handful of counts).
# tests/engine/test_runtime.py checks the memoized terms against the uncached ones with every field changed.
_NOT_READ_BY_LLAMA_CPP_RUNTIME = {"quant": "Q4_K_M", "gpus": 1, "offload_pct": None, "depth": 0, "prompt": 4096,
                                  "gpu_memory_utilization": 0.9, "max_num_seqs": None, "max_num_batched_tokens": None,
                                  "system_ram_bandwidth_gbs": None}


@lru_cache(maxsize=4096)
def _llama_cpp_runtime(spec: ModelSpec, scenario: Scenario, backend: str) -> RuntimeBreakdown:
    buffers = llama_cpp_buffers(spec, scenario)
    terms = [
        RuntimeTerm("compute buffer", *buffers["compute buffer"][:1], "device", buffers["compute buffer"][1],
                    {"n_ubatch": scenario.n_ubatch, "flash_attention": scenario.flash_attention}),
        RuntimeTerm("host compute buffer", buffers["host compute buffer"][0], "host",
                    buffers["host compute buffer"][1]),
        RuntimeTerm("output buffer", buffers["output buffer"][0], "host", buffers["output buffer"][1]),
    ]
    context_bytes = DEVICE_CONTEXT_BYTES.get(backend, 0)
    terms.append(RuntimeTerm(
        "device context", context_bytes, "device",
        f"{backend} context: {context_bytes / MIB:.0f} MiB (assumed; sourced range 107–555 MiB on CUDA)"
        if context_bytes else f"{backend}: no separate device context modelled", {"backend": backend}))
    return _breakdown("llama.cpp", terms)


def _breakdown(engine: str, terms: list[RuntimeTerm], **vllm) -> RuntimeBreakdown:
    return RuntimeBreakdown(
        engine=engine, terms=tuple(terms),
        device_bytes=sum(t.bytes for t in terms if t.location == "device"),
        host_bytes=sum(t.bytes for t in terms if t.location == "host"),
        **vllm)


# --- vLLM ----------------------------------------------------------------------------------------------------------

def vllm_scheduler_defaults(hardware_memory_bytes: float, hardware_name: str = "") -> tuple[int, int]:
    """(max_num_seqs, max_num_batched_tokens) of ``vllm serve`` on this GPU (EngineArgs.get_batch_defaults)."""
    if hardware_memory_bytes >= VLLM_LARGE_GPU_BYTES and "a100" not in hardware_name.lower():
        return VLLM_LARGE_GPU_DEFAULTS
    return VLLM_SMALL_GPU_DEFAULTS


def vllm_sampler_bytes_per_logit(version: tuple[int, int]) -> int:
    return VLLM_SAMPLER_BYTES_PER_LOGIT if version >= VLLM_TRITON_SAMPLER_SINCE else VLLM_SORT_SAMPLER_BYTES_PER_LOGIT


def vllm_activation_peak(spec: ModelSpec, *, max_num_seqs: int, max_num_batched_tokens: int, tp: int,
                         version: tuple[int, int] = VLLM_MODELLED_VERSION, quant: str | None = None) -> RuntimeTerm:
    """Torch peak increase of the profile run: the larger of the sampler warm-up and the forward pass, whose
    activations are in the model dtype of ``spec`` served at ``quant`` (kv_cache.vllm_model_dtype)."""
    requests = min(max_num_seqs, max_num_batched_tokens)
    per_logit = vllm_sampler_bytes_per_logit(version)
    sampler = requests * spec.vocab_size * per_logit
    act_bytes = int(KV_DTYPE_BYTES[vllm_model_dtype(spec, quant)])
    ffn = _ffn_width_per_token(spec) / tp
    forward = max_num_batched_tokens * act_bytes * (
        VLLM_FORWARD_FFN_TENSORS * ffn + VLLM_FORWARD_HIDDEN_TENSORS * spec.hidden_size)
    if sampler >= forward:
        how = (f"sampler warm-up: {grouped(requests)} requests × vocab {grouped(spec.vocab_size)} × "
               + (f"{per_logit} B (bf16 and f32 logits, probabilities, noise: vLLM's Triton top-k/top-p)"
                  if per_logit == VLLM_SAMPLER_BYTES_PER_LOGIT else
                  f"{per_logit} B (bf16 and f32 logits, PyTorch's sort with its indices and scratch)"))
    else:
        how = (f"forward pass: {grouped(max_num_batched_tokens)} tokens × {act_bytes} B × "
               f"({VLLM_FORWARD_FFN_TENSORS} × FFN width {grouped(round(ffn))} + "
               f"{VLLM_FORWARD_HIDDEN_TENSORS} × hidden {grouped(spec.hidden_size)})")
    return RuntimeTerm("activation peak", max(sampler, forward), "device", how,
                       {"sampler_bytes": sampler, "forward_bytes": forward, "requests": requests})


def _ffn_width_per_token(spec: ModelSpec) -> float:
    """FFN intermediate width one token activates (dense width, or top-k × expert width for MoE)."""
    widths = []
    ffns = {layer.ffn for layer in spec.layers}
    if "dense" in ffns and spec.intermediate_size:
        widths.append(spec.intermediate_size)
    if "moe" in ffns and spec.moe is not None:
        moe = spec.moe
        shared = moe.shared_expert_intermediate_size or moe.num_shared_experts * moe.expert_intermediate_size
        widths.append(moe.experts_per_token * moe.expert_intermediate_size + shared)
    return max(widths, default=4 * spec.hidden_size)


def vllm_cuda_graph_bytes(spec: ModelSpec, max_num_seqs: int) -> float:
    """CUDA graph pool of the default capture sizes (see VLLM_GRAPH_* for the fit and its error). A model known
    only by its parameter counts takes the layer count of the family member that stands in for its shapes."""
    return VLLM_GRAPH_BASE + VLLM_GRAPH_PER_LAYER * graph_layers(spec) * (
        len(vllm_capture_sizes(max_num_seqs)) / VLLM_GRAPH_REFERENCE_SIZES)


def graph_layers(spec: ModelSpec) -> int:
    """The layers vllm_cuda_graph_bytes counts: the model's, or its stand-in family member's (stated parameters
    only)."""
    return spec.num_layers or (spec.kv_proxy.num_layers if spec.kv_proxy is not None else 0)


def vllm_capture_sizes(max_num_seqs: int) -> list[int]:
    """Default cudagraph_capture_sizes: [1, 2, 4] + range(8, 256, 8) + range(256, max + 1, 16), with
    max_cudagraph_capture_size = min(2 × max_num_seqs, 512) (vllm/config/vllm.py)."""
    largest = min(2 * max_num_seqs, 512)
    sizes = [1, 2, 4] + list(range(8, 256, 8)) + list(range(256, largest + 1, 16))
    return [s for s in sizes if s <= largest]


def _vllm_scheduler(scenario: Scenario, kv: KvBreakdown, total: float, hardware_name: str) -> tuple[int, int]:
    """(max_num_seqs, max_num_batched_tokens): the scenario's, else `vllm serve`'s defaults on this GPU; SizingError
    for a utilization outside (0, 1] or a KV breakdown that is not vLLM's."""
    if not 0 < scenario.gpu_memory_utilization <= 1:
        raise SizingError(f"--gpu-memory-utilization must be in (0, 1] (got {scenario.gpu_memory_utilization})")
    if kv.engine != "vllm":
        raise SizingError("vLLM runtime needs the vLLM KV breakdown (kv_cache with engine vllm)")
    default_seqs, default_tokens = vllm_scheduler_defaults(total, hardware_name)
    return scenario.max_num_seqs or default_seqs, scenario.max_num_batched_tokens or default_tokens


def _vllm_runtime(spec: ModelSpec, scenario: Scenario, weights: float, kv: KvBreakdown, total: float,
                  hardware_name: str, backend: str, version: tuple[int, int], enforce_eager: bool) -> RuntimeBreakdown:
    max_num_seqs, mnbt = _vllm_scheduler(scenario, kv, total, hardware_name)
    requested = scenario.gpu_memory_utilization * total  # mem_utils.request_memory
    runtime_terms = _vllm_runtime_terms(spec, scenario.quant, max_num_seqs, mnbt, kv.tp, backend, version,
                                        enforce_eager)
    # What vLLM takes out of its budget before the pool: the weights and the terms inside it, summed in this order
    # (sum() compensates rounding, so a running total would differ in the last bit).
    available = requested - sum([weights] + [t.bytes for t in runtime_terms if t.in_kv_budget])
    capacity = vllm_kv_capacity(kv, available, max_model_len=scenario.context, max_num_batched_tokens=mnbt,
                                vllm_version=version)
    return _breakdown("vllm", list(runtime_terms), vllm_version=version, max_num_seqs=max_num_seqs,
                      max_num_batched_tokens=mnbt, preallocated_bytes=requested, capacity=capacity,
                      weights_per_gpu_bytes=weights, device_memory_bytes=total)


def vllm_start_bytes(spec: ModelSpec, scenario: Scenario, *, kv: KvBreakdown, hardware_memory_bytes: float,
                     hardware_name: str, backend: str) -> tuple[float, float]:
    """What a vLLM plan's fit reads of runtime_memory (the modelled version, CUDA graphs, not vllm-gaudi), without
    the memory its KV pool is given: (RuntimeBreakdown.device_bytes_in_kv_budget, its capacity's request_bytes).
    Of the accelerator only the scheduler's defaults (by its memory's class and name) and the backend are read."""
    if not hardware_memory_bytes or hardware_memory_bytes <= 0:
        raise SizingError("vLLM sizing needs the accelerator's memory (--hardware)")
    max_num_seqs, mnbt = _vllm_scheduler(scenario, kv, hardware_memory_bytes, hardware_name)
    terms = _vllm_runtime_terms(spec, scenario.quant, max_num_seqs, mnbt, kv.tp, backend, VLLM_MODELLED_VERSION,
                                False)
    in_budget = sum(t.bytes for t in terms if t.location == "device" and t.in_kv_budget)  # as the breakdown sums
    pool = vllm_kv_pool(kv, scenario.context, mnbt)
    return in_budget, 0.0 if pool is None else pool.request_bytes


@lru_cache(maxsize=4096)
def _vllm_runtime_terms(spec: ModelSpec, quant: str, max_num_seqs: int, mnbt: int, tp: int, backend: str,
                        version: tuple[int, int], enforce_eager: bool) -> tuple[RuntimeTerm, ...]:
    """vLLM's device terms besides the weights (activation peak, non-torch memory, CUDA graphs, device context):
    none reads the accelerator's memory, the weights, the context or the KV cache, so one configuration's terms
    serve every accelerator, weight size and context (a report plans ~25 vLLM configurations: the matrix's formats,
    the searches over accelerators). tests/engine/test_runtime.py checks them against a fresh computation."""
    activation = vllm_activation_peak(spec, max_num_seqs=max_num_seqs, max_num_batched_tokens=mnbt, tp=tp,
                                      version=version, quant=quant)
    non_torch = VLLM_NON_TORCH_TP1 if tp == 1 else VLLM_NON_TORCH_TP
    graphs_in_budget = version >= VLLM_GRAPHS_IN_BUDGET_SINCE
    graphs = 0.0 if enforce_eager else vllm_cuda_graph_bytes(spec, max_num_seqs)
    context_bytes = DEVICE_CONTEXT_BYTES.get(backend, 0)
    return (
        activation,
        RuntimeTerm("non-torch memory", non_torch, "device",
                    f"{non_torch / GIB:.2f} GiB: {VLLM_NON_TORCH_LIBRARIES.get(backend, 'BLAS and collectives')}"
                    f"{' + custom all-reduce' if tp > 1 else ''} (v0.19 CUDA logs, TP {tp})", {"tp": tp}),
        RuntimeTerm("CUDA graphs", graphs, "device",
                    "enforce_eager: no graphs" if enforce_eager else
                    f"{VLLM_GRAPH_BASE / GIB:.2f} GiB + {VLLM_GRAPH_PER_LAYER / GIB:.4f} GiB × {graph_layers(spec)} "
                    f"layers ({len(vllm_capture_sizes(max_num_seqs))} capture sizes); "
                    + ("subtracted from the KV budget (vLLM ≥ 0.21)" if graphs_in_budget else
                       "outside the budget, in the (1 − utilization) headroom (vLLM < 0.21)"),
                    in_kv_budget=graphs_in_budget),
        RuntimeTerm("device context", context_bytes, "device",
                    f"{backend} context {context_bytes / MIB:.0f} MiB (assumed), before vLLM's memory snapshot"
                    if context_bytes else f"{backend}: no separate device context modelled",
                    in_kv_budget=False),
    )


# vllm-gaudi (vllm_gaudi/v1/worker/hpu_worker.py determine_available_memory, 2026-08, and docs/features/warmup.md):
# after loading the weights and a profiling run, of the memory still free (torch.hpu.mem_get_info) it takes
# gpu_memory_utilization (default 0.9), reserves VLLM_GRAPH_RESERVED_MEM (default 0.1; 0 with enforce_eager) of
# that for HPU graphs, and gives the rest to the KV cache (less one dummy block of all layers, not modelled: tens
# of MiB at most).
VLLM_HPU_GRAPH_RESERVED_SHARE = 0.1


def _vllm_hpu_runtime(spec: ModelSpec, scenario: Scenario, weights: float, kv: KvBreakdown, total: float,
                      hardware_name: str, enforce_eager: bool) -> RuntimeBreakdown:
    max_num_seqs, mnbt = _vllm_scheduler(scenario, kv, total, hardware_name)
    utilization = scenario.gpu_memory_utilization
    # The profiling run's workspace is still allocated when free memory is read; its size is the CUDA estimate.
    activation = vllm_activation_peak(spec, max_num_seqs=max_num_seqs, max_num_batched_tokens=mnbt, tp=kv.tp,
                                      quant=scenario.quant)
    free = max(0.0, total - weights - activation.bytes)
    usable = utilization * free
    graph_share = 0.0 if enforce_eager else VLLM_HPU_GRAPH_RESERVED_SHARE
    graphs = graph_share * usable
    # The HPU-graph reserve is a share of what is left, like CUDA's (1 − utilization) headroom a share of the total:
    # it lowers the usable memory (graph_reserve_bytes) rather than adding to what the model requires. HCCL and
    # Gaudi's runtime memory are not published and not added.
    capacity = vllm_kv_capacity(kv, usable - graphs, max_model_len=scenario.context, max_num_batched_tokens=mnbt)
    return _breakdown("vllm", [activation], vllm_version=VLLM_MODELLED_VERSION, max_num_seqs=max_num_seqs,
                      max_num_batched_tokens=mnbt, preallocated_bytes=min(weights + activation.bytes + usable, total),
                      capacity=capacity, unused_bytes=free - usable, graph_reserve_bytes=graphs,
                      weights_per_gpu_bytes=weights, device_memory_bytes=total)


# --- vLLM KV capacity (kv_cache_utils.get_kv_cache_configs) ---------------------------------------------------

@dataclass(frozen=True)
class _LayerKind:
    kind: str
    layers: int
    page_bytes_per_token: float  # attention: bytes per token per layer; state: 0
    state_page_bytes: float  # state: bytes per layer per sequence; attention: 0
    window: int | None


def _vllm_layer_kinds(kv: KvBreakdown) -> list[_LayerKind]:
    """The layer kinds one GPU caches: a pipeline stage's share of each (stage_layers); every stage sizes its pool
    from its own layers and vLLM takes the smallest pool, the fullest stage's."""
    kinds = []
    for term in kv.terms:
        if term.padding:
            continue  # the padded slots are the groups' own (_hybrid_capacity counts them)
        layers = stage_layers(term.layers, kv.pp)
        if term.per_sequence:
            kinds.append(_LayerKind(term.kind, layers, 0.0, term.bytes_per_rank / (term.layers * kv.batch), None))
        else:
            kinds.append(_LayerKind(term.kind, layers, term.bytes_per_token_per_layer, 0.0, term.window_tokens))
    return kinds


def vllm_kv_capacity(kv: KvBreakdown, available_bytes: float, *, max_model_len: int, max_num_batched_tokens: int,
                     vllm_version: tuple[int, int] = VLLM_MODELLED_VERSION) -> VllmKvCapacity:
    """Blocks, reported tokens and max concurrency for ``available_bytes`` of KV budget on one rank; the token figure
    is what ``vllm_version`` prints (vllm_printed_kv_tokens)."""
    pool = vllm_kv_pool(kv, max_model_len, max_num_batched_tokens)
    if pool is None:  # nothing to cache: no blocks, and any number of requests
        return VllmKvCapacity(available_bytes, 0.0, 0, 0, 0, 0, 0, float("inf"), 0.0, 0)
    blocks = max(0.0, available_bytes)
    for divisor in pool.blocks_divisors:
        blocks //= divisor
    num_blocks = int(blocks) if pool.blocks_divisors else 0
    block_tokens = num_blocks // pool.num_groups * pool.tokens_per_block
    return VllmKvCapacity(available_bytes, pool.page_bytes, pool.group_size, pool.num_groups, num_blocks,
                          pool.blocks_per_request,
                          _printed_kv_tokens(num_blocks, pool.blocks_per_request, block_tokens, max_model_len,
                                             vllm_version),
                          num_blocks / pool.blocks_per_request, pool.block_bytes, block_tokens)


def vllm_printed_kv_tokens(capacity: VllmKvCapacity, max_model_len: int, version: tuple[int, int]) -> int:
    """The "GPU KV cache size: N tokens" of ``version`` (VLLM_TOKENS_FROM_CONCURRENCY_SINCE): from v0.21
    int(num_blocks / blocks per request × max_model_len), in vLLM's float order; before, ``capacity.block_tokens``
    (num_blocks // groups × block size)."""
    return _printed_kv_tokens(capacity.num_blocks, capacity.blocks_per_request, capacity.block_tokens, max_model_len,
                              version)


def _printed_kv_tokens(num_blocks: int, blocks_per_request: int, block_tokens: int, max_model_len: int,
                       version: tuple[int, int]) -> int:
    if version < VLLM_TOKENS_FROM_CONCURRENCY_SINCE or not blocks_per_request:
        return block_tokens
    max_concurrency = num_blocks / blocks_per_request
    return int(max_concurrency * max_model_len)


@dataclass(frozen=True)
class VllmKvPool:
    """vLLM's KV pool for one cache, max_model_len and token budget before any memory is given to it: what a block
    costs and holds and what one request takes. Only the number of blocks depends on the memory (vllm_kv_capacity),
    so a configuration's pool serves every accelerator and weight size."""

    page_bytes: float
    group_size: int
    num_groups: int
    blocks_per_request: int
    block_bytes: float
    tokens_per_block: int  # the smallest block size: num_blocks // groups × this is what vLLM printed before v0.21
    # The available bytes floor-divided by each in turn (vLLM's order) give the number of blocks; none: no blocks.
    blocks_divisors: tuple[float, ...]

    @property
    def request_bytes(self) -> float:
        """VllmKvCapacity.request_bytes, which does not depend on the memory."""
        return self.blocks_per_request * self.block_bytes


@lru_cache(maxsize=4096)
def vllm_kv_pool(kv: KvBreakdown, max_model_len: int, max_num_batched_tokens: int) -> VllmKvPool | None:
    """The pool of ``kv`` (kv_cache_utils.get_kv_cache_configs); None when no layer caches anything."""
    if kv.term("dsv4_window_state") is not None:
        return _dsv4_pool(kv, max_model_len)
    kinds = _vllm_layer_kinds(kv)
    if not kinds:
        return None
    attention = [k for k in kinds if not k.state_page_bytes]
    if all(k.window is None for k in attention) and len(attention) == len(kinds):
        # All layers need the same token slots (is_kv_cache_spec_uniform / UniformTypeKVCacheSpecs): one group,
        # each layer its own tensor: num_blocks = available // Σ page sizes.
        page_all = sum(k.page_bytes_per_token * k.layers for k in kinds) * VLLM_BLOCK_SIZE
        per_request = vllm_blocks_per_request(None, max_model_len, max_num_batched_tokens)
        return VllmKvPool(page_all, 1, 1, per_request, page_all, VLLM_BLOCK_SIZE, (page_all,))
    return _hybrid_pool(kinds, max_model_len, max_num_batched_tokens)


def _dsv4_pool(kv: KvBreakdown, max_model_len: int) -> VllmKvPool:
    """DeepSeek-V4 (kv_cache._vllm_dsv4_terms): one pool of equal blocks, each the compressed KV and indexer keys
    of every layer for 256 tokens; a request holds cdiv(len, 256) of them plus its windows' and states' blocks."""
    growing = [t for t in kv.terms if not t.per_sequence]
    block_tokens = VLLM_DSV4_BLOCK_TOKENS
    pool_block = sum(t.bytes_per_token_per_layer * stage_layers(t.layers, kv.pp) for t in growing) * block_tokens
    fixed = kv.term("dsv4_window_state")
    fixed_blocks = fixed.inputs["pool_blocks"] if fixed is not None else 0
    per_request = -(-max_model_len // block_tokens) + fixed_blocks
    return VllmKvPool(pool_block, len(growing), 1, per_request, pool_block, block_tokens,
                      (pool_block,) if pool_block else ())


def _hybrid_pool(kinds: list[_LayerKind], max_model_len: int, mnbt: int) -> VllmKvPool:
    """Hybrid models: one page size for all layers, layers split into equal-size groups
    (unify_kv_cache_spec_page_size, _get_kv_cache_groups_uniform_page_size, get_kv_cache_config_from_groups)."""
    block_sizes = {k.kind: VLLM_BLOCK_SIZE for k in kinds}
    state_pages = [k.state_page_bytes for k in kinds if k.state_page_bytes]
    if state_pages:
        # HybridAttentionMambaModelConfig: enlarge the attention block so one attention page holds at least one
        # Mamba state page, then pad the state page to the attention page.
        widest_token = max(k.page_bytes_per_token for k in kinds if not k.state_page_bytes)
        align = VLLM_KERNEL_BLOCK_ALIGNMENT
        attn_block = align * ceil(max(state_pages) / (align * widest_token))
        block_sizes = {k.kind: attn_block for k in kinds}
    pages = {k.kind: k.state_page_bytes or k.page_bytes_per_token * block_sizes[k.kind] for k in kinds}
    page = max(pages.values())
    for k in kinds:
        if not k.state_page_bytes:
            # unify_kv_cache_spec_page_size: smaller pages get a proportionally larger block size.
            block_sizes[k.kind] = int(block_sizes[k.kind] * page // pages[k.kind])
    counts = [k.layers for k in kinds]
    group_size = vllm_group_size(counts)
    num_groups = sum(-(-count // group_size) for count in counts)
    per_request = sum(
        -(-k.layers // group_size) * _pages_per_request(k, block_sizes[k.kind], max_model_len, mnbt) for k in kinds)
    # num_blocks = available // page // group_size
    return VllmKvPool(page, group_size, num_groups, per_request, page * group_size, min(block_sizes.values()),
                      (page, group_size))


def _pages_per_request(kind: _LayerKind, block_size: int, max_model_len: int, mnbt: int) -> int:
    if kind.state_page_bytes:
        return 1  # MambaSpec default mamba_cache_mode: 1 (+ speculative blocks) page per request
    return vllm_blocks_per_request(kind.window, max_model_len, mnbt, block_size, kind=kind.kind)
