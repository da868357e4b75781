"""KV cache and recurrent state: bytes per layer kind, per engine, per KV dtype, per tensor-parallel rank.

Scenario semantics: ``scenario.batch`` sequences of ``scenario.context`` tokens each.

llama.cpp (``src/llama-context.cpp`` ``llama_context::llama_context``; ``src/llama-kv-cache.cpp``
``llama_kv_cache::llama_kv_cache``): one unified cache of ``n_ctx`` cells shared by all ``-np`` sequences, so to
hold ``batch`` full sequences llama.cpp needs ``n_ctx = context × batch`` (``-c`` is the total, not per slot).
``n_ctx`` is padded to a multiple of 256 (``cparams.n_ctx = GGML_PAD(cparams.n_ctx, 256)``). Recurrent state
(Mamba, gated delta-net, LFM2 conv) lives in ``llama_memory_recurrent``: one row per sequence, kept in f32
(``llama_model::create_memory`` passes ``GGML_TYPE_F32`` for ``type_r``/``type_s``).

vLLM (``vllm/v1/kv_cache_interface.py`` @001cabc): per-layer ``KVCacheSpec`` pages of ``block_size`` (16)
tokens, heads split over tensor-parallel ranks; sliding-window and chunked-local layers only keep their window;
``MambaSpec`` state (also gated delta-net, short conv) is one page per request, not per token, in the model
dtype (``MambaStateDtypeCalculator._mamba_state_dtype``: ``mamba_ssm_cache_dtype`` "auto" = conv dtype =
model dtype) — except where the model's vLLM config hook sets ``mamba_ssm_cache_dtype`` from its config
(Nemotron-H, float32 by default; Qwen3.5's mamba_ssm_dtype): then the recurrent state takes that dtype and the
conv state keeps the model's (``ModelSpec.vllm_ssm_state_dtype``).

All byte counts are floats (exact: every dtype size here is a dyadic fraction); GiB only at the edges.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from functools import lru_cache
from operator import attrgetter

from .errors import SizingError
from .explain import grouped, sequences, times_gpus
from .specs import AttentionShape, ModelSpec, Scenario

GIB = 2**30
# Bytes of one recurrent-state element by vLLM's mamba_ssm_cache_dtype (ModelSpec.vllm_ssm_state_dtype).
VLLM_SSM_STATE_BYTES = {"float32": 4.0, "float16": 2.0, "bfloat16": 2.0}

# Bytes per cached element. ggml block types from ggml/src/ggml-common.h: q8_0 = 34 B per 32 elements
# (f16 scale + 32 int8), q4_0 = 18 B per 32 (f16 scale + 16 B of nibbles). fp8: 1 B (vLLM fp8_e4m3/e5m2,
# per-tensor scale kept outside the cache).
KV_DTYPE_BYTES: dict[str, float] = {
    "f32": 4.0,
    "f16": 2.0,
    "bf16": 2.0,
    "fp8": 1.0,
    "fp8_e4m3": 1.0,
    "fp8_e5m2": 1.0,
    "q8_0": 34 / 32,
    "q4_0": 18 / 32,
}
KV_DTYPE_ALIASES = {"fp16": "f16", "float16": "f16", "bfloat16": "bf16", "float32": "f32"}

# Which cache types each engine can actually allocate.
# llama.cpp -ctk/-ctv (common/arg.cpp kv_cache_types): f32, f16, bf16, q8_0, q4_0 (and q4_1/iq4_nl/q5_*,
# not offered here). llama.cpp has no fp8 KV type, so "fp8" under llama.cpp is an error rather than a silent
# q8_0: q8_0 is 6 % larger than fp8 and has a different quality profile, and the user asked for something
# the engine does not have. vLLM --kv-cache-dtype: auto, bfloat16, float16, fp8, fp8_e4m3, fp8_e5m2; no ggml
# block types.
ENGINE_KV_DTYPES: dict[str, frozenset[str]] = {
    "llama.cpp": frozenset({"f32", "f16", "bf16", "q8_0", "q4_0"}),
    "vllm": frozenset({"auto", "f32", "f16", "bf16", "fp8", "fp8_e4m3", "fp8_e5m2"}),
}

# llama.cpp src/llama-context.cpp: n_ctx padded to 256; src/llama-kv-cache-iswa.cpp: SWA cache padded to 256.
LLAMA_CPP_CTX_PAD = 256
# vLLM CacheConfig.block_size default on CUDA.
VLLM_BLOCK_SIZE = 16
# vLLM EngineArgs.get_batch_defaults (vllm/engine/arg_utils.py), OpenAI server on a >= 70 GiB GPU other than
# A100. Only the sliding-window / chunked page count depends on it here; runtime.py resolves the real default.
VLLM_DEFAULT_MAX_NUM_BATCHED_TOKENS = 8192
# vLLM MLAAttentionSpec.real_page_size_bytes: "fp8_ds_mla" (FlashMLA sparse, DeepSeek-V3.2 / GLM-5 with an fp8
# KV cache) stores 656 B per token per layer (fp8 latent 512 + 4 fp32 scales + bf16 rope 64).
VLLM_FP8_DS_MLA_BYTES = 656
# vLLM deepseek_v2.py Indexer: k_cache head_dim = index_head_dim + index_head_dim // quant_block_size * 4
# (fp8 values + one fp32 scale per 128), stored as uint8 in DeepseekV32IndexerCache (MLAAttentionSpec, 1 head).
VLLM_INDEXER_QUANT_BLOCK = 128
# llama.cpp llama_model::create_memory: recurrent r/s state tensors are GGML_TYPE_F32.
LLAMA_CPP_RECURRENT_STATE_BYTES = 4.0

# DeepSeek-V4 compressed attention (docs/engine.md). Compressor states keep a kv and a score tensor in f32, over
# 2 × ratio rows for CSA (the overlapping windows; the indexer's compressor too) and ratio rows for HCA, each row
# coff × width wide (coff 2 for CSA, 1 for HCA): llama.cpp src/llama-kv-cache-dsv4.cpp llama_dsv4_comp_state
# (@035aa95b), vLLM models/deepseek_v4 compressor state_dim = 2 · coff · head_dim (0.33.0).
DSV4_STATE_BYTES = 4.0
# vLLM 0.33.0 (models/deepseek_v4/attention.py, v1/core/kv_cache_planning.py): the cache is fp8_ds_mla, 584 B per
# entry ("448B NoPE + 128B RoPE + 8B fp8 scale"); the indexer key 128 fp8 + one fp32 scale = 132 B; pages padded
# to multiples of 576 B ("FlashMLA requires 576B alignment"); the compressed caches use blocks of 256 tokens
# (get_supported_kernel_block_sizes), the sliding window blocks of 64, the CSA / HCA compressor states blocks of
# 4 / 8 tokens. Every group is packed into pool blocks the size of the largest group's block (the compressed KV
# and indexer keys of all layers), and the caches are not split by tensor parallelism (max_tp_shards=1).
VLLM_DSV4_ENTRY_BYTES = 584
VLLM_DSV4_INDEXER_ENTRY_BYTES = 132
VLLM_DSV4_PAGE_ALIGNMENT = 576
VLLM_DSV4_BLOCK_TOKENS = 256
VLLM_DSV4_SWA_BLOCK_TOKENS = 64
VLLM_DSV4_STATE_BLOCK_TOKENS = {"csa": 4, "hca": 8}
VLLM_DSV4_KV_DTYPES = frozenset({"auto", "fp8", "fp8_e4m3"})


@dataclass(frozen=True)
class KvTerm:
    """One layer kind's cache, with the numbers that produced it (for the "how computed" panel)."""

    kind: str  # "full", "sliding", "chunked", "mla", "dsa_indexer", "linear", "mamba", "conv", and DeepSeek-V4's
    # "dsv4_window", "csa", "csa_indexer", "hca", "dsv4_state" (llama.cpp) and "dsv4_window_state" (vLLM)
    layers: int
    bytes_per_token_per_layer: float  # per TP rank; 0 for recurrent state
    cells: int  # cached tokens per sequence (llama.cpp: per whole cache) that this term holds; 0 for state
    bytes: float  # this term, all ranks, whole scenario
    bytes_per_rank: float
    explanation: str  # "2 × 8 kv heads × 128 × 2 B × 32 layers = 131,072 B/token"
    inputs: dict = field(default_factory=dict, compare=False, hash=False)
    per_sequence: bool = False  # recurrent state: a fixed size per sequence, not per token
    # vLLM block accounting (pages per request; state terms: 1 page). Used by runtime.vllm_kv_capacity.
    window_tokens: int | None = None  # sliding window or attention chunk; None = grows with the context
    # A decode step reads at most this many tokens' worth of a growing term (DeepSeek-V4 CSA: the indexer's top-k
    # compressed entries, top-k × ratio tokens); None = all it holds. Memory is not capped by it.
    read_tokens_cap: int | None = None
    # vLLM's hybrid allocator: blocks a padded layer group holds for layer slots it has no layer for (kind
    # "group_padding"; vllm_group_padding_terms). Held in the pool, never read; not a layer kind of its own.
    padding: bool = False


# Accelerators one server joins on its scale-up fabric: NVIDIA's HGX baseboards (H100, H200, B200, B300) hold 8 GPUs,
# AMD's Instinct platforms 8 OAM modules, Intel's Gaudi 3 servers 8 cards, Huawei's Atlas 800 8 NPUs. vLLM runs more
# as pipeline stages, one per server, each a tensor-parallel group (vLLM docs, "Distributed inference and serving":
# "the tensor parallel size should be the number of GPUs in each node, and the pipeline parallel size should be the
# number of nodes").
GPUS_PER_SERVER = 8


def vllm_parallel_sizes(gpus: int) -> tuple[int, int]:
    """(--tensor-parallel-size, --pipeline-parallel-size) of vLLM on `gpus` accelerators: beyond one server's
    GPUS_PER_SERVER, a tensor-parallel group per server and the servers as pipeline stages. The KV cache follows
    that layout (each stage caches its own layers, split over its tensor-parallel ranks); the weights are split over
    all GPUs (tensor_parallel_weights), which holds the same bytes per GPU up to the replicated pieces."""
    if gpus > GPUS_PER_SERVER and gpus % GPUS_PER_SERVER == 0:
        return GPUS_PER_SERVER, gpus // GPUS_PER_SERVER
    return gpus, 1


def stage_layers(layers: int, pp: int) -> int:
    """The layers of a kind on the fullest pipeline stage: vLLM's get_pp_indices splits the layers evenly and gives
    the remainder to some stages, so one holds at most ceil(layers / pp) (of each kind: an upper bound for the
    stage that holds most layers of every kind)."""
    return -(-layers // pp)


@dataclass(frozen=True)
class KvBreakdown:
    engine: str
    kv_dtype: str
    context: int
    batch: int
    tp: int
    bytes_per_token: float  # whole model (all ranks), layers whose cache grows with the context
    bytes_per_token_per_rank: float  # vLLM: one TP rank's row; llama.cpp: total / GPUs (even layer split)
    windowed_bytes_per_token: float  # sliding/chunked layers, per token inside their window (all ranks)
    recurrent_bytes_per_sequence: float  # whole model (all ranks)
    total_bytes: float  # KV + recurrent state for the scenario, all ranks
    per_rank_bytes: float  # what one GPU holds
    terms: tuple[KvTerm, ...]
    notes: tuple[str, ...] = ()
    # vLLM's pipeline stages (vllm_parallel_sizes): a term's rows are a tensor-parallel rank's for all its layers;
    # one GPU holds the layers of its stage (stage_layers), which per_rank_bytes counts.
    pp: int = 1

    @property
    def total_gib(self) -> float:
        return self.total_bytes / GIB

    def term(self, kind: str) -> KvTerm | None:
        return next((t for t in self.terms if t.kind == kind), None)


# The scenario fields the KV cache does not read (offload, the speed inputs): a page sizes the same model and cache
# for a dozen formats and dozens of accelerators, and computes the cache once. Of the weights' format it reads only
# vLLM's model dtype (vllm_model_dtype: FP32, FP16 and BF16 set it; every other format leaves the checkpoint's).
_NOT_READ_BY_KV_CACHE = {"offload_pct": None, "depth": 0, "prompt": 4096,
                         "gpu_memory_utilization": 0.9, "max_num_seqs": None, "system_ram_bandwidth_gbs": None}
_KV_NEUTRAL_QUANT = "Q4_K_M"
# The other fields, which it reads: the memo is keyed on their values in a plain tuple, which hashes and compares
# without a Python call (a normalized Scenario copy cost the copy, its __hash__ and its __eq__; ~80 lookups a page).
_READ_BY_KV_CACHE = tuple(f.name for f in fields(Scenario) if f.name not in _NOT_READ_BY_KV_CACHE and f.name != "quant")
_fields_read_by_kv_cache = attrgetter(*_READ_BY_KV_CACHE)


def kv_cache(
    spec: ModelSpec,
    scenario: Scenario,
    *,
    tp: int | None = None,
    max_num_batched_tokens: int | None = None,
) -> KvBreakdown:
    """KV cache and recurrent state of ``scenario.batch`` sequences of ``scenario.context`` tokens.

    Memoized on the fields it reads (the result is immutable); see ``_kv_cache``.
    """
    quant = scenario.quant if scenario.engine == "vllm" and scenario.quant in VLLM_DTYPE_FORMATS else _KV_NEUTRAL_QUANT
    return _memoized_kv_cache(spec, quant, _fields_read_by_kv_cache(scenario), tp, max_num_batched_tokens)


@lru_cache(maxsize=4096)
def _memoized_kv_cache(spec: ModelSpec, quant: str, fields_read: tuple, tp: int | None,
                       max_num_batched_tokens: int | None) -> KvBreakdown:
    scenario = Scenario(quant=quant, **dict(zip(_READ_BY_KV_CACHE, fields_read)), **_NOT_READ_BY_KV_CACHE)
    return _kv_cache(spec, scenario, tp=tp, max_num_batched_tokens=max_num_batched_tokens)


def _kv_cache(
    spec: ModelSpec,
    scenario: Scenario,
    *,
    tp: int | None = None,
    max_num_batched_tokens: int | None = None,
) -> KvBreakdown:
    """kv_cache, for a scenario whose fields the cache does not read are at their defaults.

    ``tp``: tensor-parallel degree; default ``scenario.gpus`` for vLLM and 1 for llama.cpp (llama.cpp splits
    multi-GPU work by layers, so every layer's cache stays whole; per-GPU bytes are then total / gpus).
    ``max_num_batched_tokens``: vLLM scheduler budget, which sizes sliding-window pages; default
    ``scenario.max_num_batched_tokens`` or 8192.
    """
    engine = scenario.engine
    if not spec.has_shapes and spec.kv_proxy is not None:
        # Catalog models known only by stated parameters: the nearest sourced family member's shapes stand in.
        proxy = kv_cache(spec.kv_proxy, scenario, tp=tp, max_num_batched_tokens=max_num_batched_tokens)
        return replace(proxy, notes=proxy.notes + (
            f"estimated: KV cache from the shapes of {spec.kv_proxy.name}, the nearest sourced family member.",))
    _check_scenario(spec, scenario)
    kv_dtype = resolve_kv_dtype(scenario.kv_dtype, engine, spec, scenario.quant)
    if spec.compressed_attention is not None and engine == "vllm":
        kv_dtype = _vllm_dsv4_kv_dtype(scenario.kv_dtype)
    gpus = max(1, scenario.gpus)
    pp = 1
    if engine == "vllm" and tp is None:
        tp, pp = vllm_parallel_sizes(gpus)
    tp = 1 if tp is None else tp
    if tp < 1:
        raise SizingError(f"--gpus must be at least 1 (got tensor parallel {tp})")
    if engine == "vllm":
        mnbt = max_num_batched_tokens or scenario.max_num_batched_tokens or VLLM_DEFAULT_MAX_NUM_BATCHED_TOKENS
        terms = (_vllm_dsv4_terms(spec, scenario, tp) if spec.compressed_attention is not None
                 else _vllm_terms(spec, scenario, kv_dtype, tp, mnbt))
        terms += vllm_group_padding_terms(terms, tp=tp, pp=pp, batch=scenario.batch)
        ranks = tp
    else:
        terms = (_llama_cpp_dsv4_terms(spec, scenario, kv_dtype) if spec.compressed_attention is not None
                 else _llama_cpp_terms(spec, scenario, kv_dtype))
        ranks = gpus
    total = sum(t.bytes for t in terms)
    if engine == "vllm":
        # Each GPU of a pipeline stage holds its stage's layers (1/pp of each kind, the fullest stage rounded up).
        per_rank = sum(t.bytes_per_rank * stage_layers(t.layers, pp) / t.layers if t.layers else t.bytes_per_rank
                       for t in terms)
        rank_share = tp
    else:
        # Layer split: each GPU keeps the cache of its own layers; assume an even split.
        per_rank = total / ranks
        rank_share = 1
    growing = [t for t in terms if t.window_tokens is None and not t.per_sequence and not t.padding]
    windowed = [t for t in terms if t.window_tokens is not None and not t.padding]
    return KvBreakdown(
        engine=engine,
        kv_dtype=kv_dtype,
        context=scenario.context,
        batch=scenario.batch,
        tp=tp,
        # vLLM rows are per rank and every rank holds one (split heads, replicated heads or the MLA latent).
        bytes_per_token=rank_share * sum(t.bytes_per_token_per_layer * t.layers for t in growing),
        bytes_per_token_per_rank=sum(t.bytes_per_token_per_layer * (stage_layers(t.layers, pp) if engine == "vllm"
                                                                      else t.layers / ranks) for t in growing),
        windowed_bytes_per_token=rank_share * sum(t.bytes_per_token_per_layer * t.layers for t in windowed),
        recurrent_bytes_per_sequence=sum(t.bytes / scenario.batch for t in terms if t.per_sequence),
        total_bytes=total,
        per_rank_bytes=per_rank,
        terms=tuple(terms),
        notes=_notes(spec, engine, kv_dtype),
        pp=pp,
    )


# vLLM's model dtype (--dtype), which its "auto" KV cache (CacheConfig cache_dtype "auto" = the model dtype), its
# activations and its Mamba state follow. vllm/config/model.py _resolve_auto_dtype: --dtype auto takes the
# checkpoint's torch_dtype and downcasts float32 to the platform's first supported dtype (bfloat16 on CUDA). The
# F32 (--quant FP32), FP16 and BF16 formats are served from the checkpoint with --dtype float32/float16/bfloat16
# (reports/launch.py); quantized formats
# (FP8, AWQ, GPTQ, MXFP4, GGUF) keep the checkpoint's activation dtype, fp16 for an fp16 release and else bf16 —
# an FP8 checkpoint's KV cache stays bf16 unless --kv-cache-dtype says fp8. Check: Llama-3.1-8B under --dtype
# float32 on one H100 caches 175,296 tokens in 42.8 GiB = 256 KiB a token = 32 layers × 8 × 128 × 2 × 4 B
# (bench/data/vllm_memory.csv, llm-d-planner v0.19.0 "-dtf32" log).
VLLM_DTYPE_FORMATS = {"F32": "f32", "FP32": "f32", "FP16": "f16", "BF16": "bf16"}


def vllm_model_dtype(spec: ModelSpec | None, quant: str | None = None) -> str:
    """The dtype vLLM runs ``spec`` in when served at ``quant`` (f32, f16 or bf16)."""
    if quant in VLLM_DTYPE_FORMATS:
        return VLLM_DTYPE_FORMATS[quant]
    return "f16" if spec is not None and spec.native_dtype == "fp16" else "bf16"


def resolve_kv_dtype(kv_dtype: str, engine: str, spec: ModelSpec | None = None, quant: str | None = None) -> str:
    """Canonical KV dtype name, or SizingError naming --kv-dtype when the engine cannot cache that type. vLLM's
    "auto" is the model dtype of ``spec`` served at ``quant`` (vllm_model_dtype)."""
    name = KV_DTYPE_ALIASES.get(kv_dtype.lower(), kv_dtype.lower())
    allowed = ENGINE_KV_DTYPES.get(engine)
    if allowed is None:
        raise SizingError(f"unknown --engine {engine!r}; expected one of {sorted(ENGINE_KV_DTYPES)}")
    if name not in allowed:
        hint = " (llama.cpp has no fp8 KV cache; use q8_0)" if engine == "llama.cpp" and name.startswith("fp8") else ""
        raise SizingError(f"--kv-dtype {kv_dtype!r} is not a {engine} KV cache type{hint}; "
                          f"choose one of {', '.join(sorted(allowed))}",
                          code="kv_dtype_not_for_engine",
                          params={"kv_dtype": kv_dtype, "engine": engine, "choices": ", ".join(sorted(allowed))})
    if name == "auto":
        name = vllm_model_dtype(spec, quant)
    return name


def _check_scenario(spec: ModelSpec, scenario: Scenario) -> None:
    if scenario.context < 1:
        raise SizingError(f"--context must be a positive number of tokens (got {scenario.context})")
    if scenario.batch < 1:
        raise SizingError(f"--batch must be at least 1 sequence (got {scenario.batch})")
    if scenario.n_ubatch < 1:
        raise SizingError(f"--n-ubatch must be at least 1 (got {scenario.n_ubatch})")
    if not spec.has_shapes:
        raise SizingError(f"model {spec.slug!r} has no layer shapes; its KV cache cannot be derived")


# --- layer inventory (cached per spec: a spec is immutable and estimates repeat it) ----------------------

@lru_cache(maxsize=512)
def _mixer_counts(spec: ModelSpec) -> dict[str, int]:
    counts: dict[str, int] = {}
    for layer in spec.layers:
        counts[layer.mixer] = counts.get(layer.mixer, 0) + 1
    return counts


def _full_attention(spec: ModelSpec) -> AttentionShape:
    if spec.attention is None:
        raise SizingError(f"model {spec.slug!r} has full-attention layers but no attention shape")
    return spec.attention


def _sliding_attention(spec: ModelSpec) -> AttentionShape:
    shape = spec.sliding_attention or spec.attention
    if shape is None:
        raise SizingError(f"model {spec.slug!r} has sliding layers but no attention shape")
    if not spec.sliding_window:
        raise SizingError(f"model {spec.slug!r} has sliding layers but no sliding_window")
    return shape


def _attention_kinds(spec: ModelSpec) -> list[tuple[str, int, AttentionShape, int | None]]:
    """(kind, layers, shape, window) for every softmax-attention kind that is not MLA."""
    counts = _mixer_counts(spec)
    kinds = []
    if counts.get("full") and spec.mla is None:
        kinds.append(("full", counts["full"], _full_attention(spec), None))
    if counts.get("sliding"):
        kinds.append(("sliding", counts["sliding"], _sliding_attention(spec), spec.sliding_window))
    if counts.get("chunked"):
        if not spec.attention_chunk_size:
            raise SizingError(f"model {spec.slug!r} has chunked layers but no attention_chunk_size")
        kinds.append(("chunked", counts["chunked"], _full_attention(spec), spec.attention_chunk_size))
    return kinds


def _dtype_label(kv_dtype: str) -> str:
    size = KV_DTYPE_BYTES[kv_dtype]
    return f"{grouped(size)} B" if float(size).is_integer() else f"{int(size * 32)}/32 B ({kv_dtype})"


# --- llama.cpp ----------------------------------------------------------------------------------------------

def llama_cpp_n_ctx(context: int, batch: int) -> int:
    """Cells of the unified cache: every sequence's tokens, padded to 256 (llama_context::llama_context)."""
    return _pad(context * batch, LLAMA_CPP_CTX_PAD)


def llama_cpp_swa_cells(n_ctx: int, window: int, n_seq: int, n_ubatch: int, swa_full: bool) -> int:
    """src/llama-kv-cache-iswa.cpp: size_swa = GGML_PAD(min(n_ctx, n_swa*n_seq_max + n_ubatch), 256) for the
    unified cache; --swa-full keeps n_ctx cells. Llama 4 chunked attention uses the same iSWA cache."""
    if swa_full:
        return n_ctx
    return _pad(min(n_ctx, window * n_seq + n_ubatch), LLAMA_CPP_CTX_PAD)


def _pad(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


def _llama_cpp_terms(spec: ModelSpec, scenario: Scenario, kv_dtype: str) -> list[KvTerm]:
    size = KV_DTYPE_BYTES[kv_dtype]
    n_ctx = llama_cpp_n_ctx(scenario.context, scenario.batch)
    terms = []
    kinds = _attention_kinds(spec)
    # [TAG_V_CACHE_VARIABLE] in llama_kv_cache::llama_kv_cache: without flash attention V is stored transposed
    # and every layer's V row is padded to the widest one (hparams.n_embd_v_gqa_max()).
    v_width_max = max((shape.num_kv_heads * shape.v_dim for _, _, shape, _ in kinds), default=0)
    for kind, layers, shape, window in kinds:
        k_width = shape.num_kv_heads * shape.head_dim
        v_width = shape.num_kv_heads * shape.v_dim
        if not scenario.flash_attention:
            v_width = v_width_max
        per_layer = (k_width + v_width) * size
        cells = n_ctx if window is None else llama_cpp_swa_cells(
            n_ctx, window, scenario.batch, scenario.n_ubatch, scenario.swa_full)
        total = per_layer * layers * cells
        if k_width == v_width:
            head = f"2 × {shape.num_kv_heads} kv heads × {shape.head_dim}"
        else:
            head = f"{shape.num_kv_heads} kv heads × ({shape.head_dim} K + {v_width // shape.num_kv_heads} V)"
        explanation = (f"{head} × {_dtype_label(kv_dtype)} × {layers} layers = "
                       f"{grouped(per_layer * layers)} B/token × {grouped(cells)} cells")
        if window is not None:
            explanation += (" (n_ctx, --swa-full)" if scenario.swa_full else
                            f" (pad256(min(n_ctx {grouped(n_ctx)}, {grouped(window)} × {scenario.batch} seq + "
                            f"{scenario.n_ubatch} ubatch)))")
        terms.append(KvTerm(
            kind=kind, layers=layers, bytes_per_token_per_layer=per_layer, cells=cells, bytes=total,
            bytes_per_rank=total, explanation=explanation, window_tokens=window,
            inputs={"kv_heads": shape.num_kv_heads, "head_dim": shape.head_dim, "v_head_dim": shape.v_dim,
                    "dtype_bytes": size, "n_ctx": n_ctx, "window": window}))
    terms += _llama_cpp_mla_terms(spec, size, kv_dtype, n_ctx)
    terms += _recurrent_terms(spec, scenario.batch, LLAMA_CPP_RECURRENT_STATE_BYTES, tp=1,
                              dtype_note="f32 (llama.cpp keeps recurrent state in f32)")
    return terms


def _llama_cpp_mla_terms(spec: ModelSpec, size: float, kv_dtype: str, n_ctx: int) -> list[KvTerm]:
    layers = _mixer_counts(spec).get("full", 0)
    mla = spec.mla
    if mla is None or layers == 0:
        return []
    # Since llama.cpp PR #19067 the MLA cache is V-less: llama_kv_cache keeps only K (has_v = !is_mla), one
    # "head" of kv_lora_rank + n_rot (the rope part) per layer and token.
    row = mla.kv_lora_rank + mla.qk_rope_head_dim
    per_layer = row * size
    terms = [KvTerm(
        kind="mla", layers=layers, bytes_per_token_per_layer=per_layer, cells=n_ctx,
        bytes=per_layer * layers * n_ctx, bytes_per_rank=per_layer * layers * n_ctx,
        explanation=(f"1 latent head × ({mla.kv_lora_rank} kv_lora_rank + {mla.qk_rope_head_dim} rope) × "
                     f"{_dtype_label(kv_dtype)} × {layers} layers = {grouped(per_layer * layers)} B/token "
                     f"× {grouped(n_ctx)} cells (K only, no V)"),
        inputs={"kv_lora_rank": mla.kv_lora_rank, "qk_rope_head_dim": mla.qk_rope_head_dim,
                "dtype_bytes": size, "n_ctx": n_ctx})]
    if spec.dsa_indexer is not None:
        # src/llama-kv-cache-dsa.cpp: a second llama_kv_cache for the lightning-indexer keys, one head of
        # indexer_head_size, K only (MLA hparams), same type_k and cell count as the main cache.
        index_dim = spec.dsa_indexer.head_dim
        per_layer_idx = index_dim * size
        terms.append(KvTerm(
            kind="dsa_indexer", layers=layers, bytes_per_token_per_layer=per_layer_idx, cells=n_ctx,
            bytes=per_layer_idx * layers * n_ctx, bytes_per_rank=per_layer_idx * layers * n_ctx,
            explanation=(f"DSA indexer key: 1 head × {index_dim} × {_dtype_label(kv_dtype)} × "
                         f"{layers} layers = {grouped(per_layer_idx * layers)} B/token × {grouped(n_ctx)} cells"),
            inputs={"index_head_dim": index_dim, "dtype_bytes": size, "n_ctx": n_ctx}))
    return terms


# --- DeepSeek-V4 compressed attention (both engines) ------------------------------------------------------

def dsv4_layer_counts(spec: ModelSpec) -> tuple[int, int, int]:
    """(all decoder layers, CSA layers, HCA layers): every layer keeps the sliding window."""
    counts = _mixer_counts(spec)
    return spec.num_layers, counts.get("csa", 0), counts.get("hca", 0)


def _csa_read_cap(spec: ModelSpec) -> int | None:
    """A CSA query attends to the indexer's top-k compressed entries (DeepseekV4Indexer, index_topk): at most
    top-k × ratio tokens' worth of the compressed cache per decode step; the indexer keys are all scored."""
    ca, indexer = spec.compressed_attention, spec.dsa_indexer
    return indexer.topk * ca.csa_ratio if ca is not None and indexer is not None else None


def _dsv4_state_elements(spec: ModelSpec) -> tuple[int, int]:
    """f32 elements of the compressor states of one CSA layer (its own and its indexer's) and one HCA layer, per
    sequence: kv + score tensors of (2 × ratio) rows × (2 × width) for CSA, ratio rows × width for HCA."""
    ca, indexer = spec.compressed_attention, spec.dsa_indexer
    assert ca is not None
    index_dim = indexer.head_dim if indexer is not None else 0
    csa = 2 * (2 * ca.csa_ratio) * (2 * ca.head_dim + 2 * index_dim)
    hca = 2 * ca.hca_ratio * ca.head_dim
    return csa, hca


def llama_cpp_dsv4_cells(spec: ModelSpec, scenario: Scenario) -> tuple[int, int, int]:
    """Cells per sequence of llama.cpp's DeepSeek-V4 caches (src/llama-kv-cache-dsv4.cpp, dsv4_comp_size and the
    iSWA size): the raw sliding cache GGML_PAD(min(n_ctx, n_swa + n_ubatch), 256) (n_ctx with --swa-full), the CSA
    and indexer caches GGML_PAD(⌈n_ctx / 4⌉, 256), the HCA cache GGML_PAD(⌈n_ctx / 128⌉, 256). The compute graph is
    reserved for these sizes too (runtime.llama_cpp_buffers)."""
    ca = spec.compressed_attention
    assert ca is not None
    kv_size, window = scenario.context, spec.sliding_window or 0
    raw = kv_size if scenario.swa_full else _pad(min(kv_size, window + scenario.n_ubatch), LLAMA_CPP_CTX_PAD)
    csa = _pad(max(1, -(-kv_size // ca.csa_ratio)), LLAMA_CPP_CTX_PAD)
    hca = _pad(max(1, -(-kv_size // ca.hca_ratio)), LLAMA_CPP_CTX_PAD)
    return raw, csa, hca


def _llama_cpp_dsv4_terms(spec: ModelSpec, scenario: Scenario, kv_dtype: str) -> list[KvTerm]:
    """src/llama-kv-cache-dsv4.cpp (@035aa95b; sizes checked to the byte against the log of ggml-org/llama.cpp#27680):
    K-only caches (no V; the MLA-style hparams make has_v false) in --cache-type-k, one stream per sequence
    (unified_compressed = false): the raw sliding cache on every layer, GGML_PAD(n_swa + n_ubatch, 256) cells
    (n_ctx with --swa-full); the CSA cache of GGML_PAD(ceil(n_ctx/4), 256) cells × head_dim and the lightning
    indexer's key cache of as many cells × index_head_dim on the ratio-4 layers; the HCA cache of
    GGML_PAD(ceil(n_ctx/128), 256) cells × head_dim on the ratio-128 layers; the compressors' f32 states."""
    ca = spec.compressed_attention
    assert ca is not None
    size = KV_DTYPE_BYTES[kv_dtype]
    layers, csa_layers, hca_layers = dsv4_layer_counts(spec)
    head, index_dim = ca.head_dim, spec.dsa_indexer.head_dim if spec.dsa_indexer else 0
    seqs, kv_size = scenario.batch, scenario.context
    window = spec.sliding_window or 0
    raw_cells, csa_cells, hca_cells = llama_cpp_dsv4_cells(spec, scenario)
    label = _dtype_label(kv_dtype)
    each = f" × {sequences(seqs)}" if seqs > 1 else ""

    def term(kind, n_layers, width, cells, per_token_divisor, how, window_tokens=None, what="1 K=V head"):
        total = width * size * n_layers * cells * seqs
        return KvTerm(kind=kind, layers=n_layers, bytes_per_token_per_layer=width * size / per_token_divisor,
                      cells=cells, bytes=total, bytes_per_rank=total, window_tokens=window_tokens,
                      explanation=(f"{what} × {grouped(width)} × {label} × {n_layers} layers × "
                                   f"{grouped(cells)} cells ({how}){each}"),
                      inputs={"width": width, "dtype_bytes": size, "cells": cells, "layers": n_layers})

    terms = [term("dsv4_window", layers, head, raw_cells, 1,
                  "n_ctx, --swa-full" if scenario.swa_full else
                  f"pad256(window {window} + ubatch {scenario.n_ubatch})", window_tokens=window)]
    if csa_layers:
        csa_how = f"pad256(⌈{grouped(kv_size)} / {ca.csa_ratio}⌉)"
        terms += [replace(term("csa", csa_layers, head, csa_cells, ca.csa_ratio, csa_how),
                          read_tokens_cap=_csa_read_cap(spec)),
                  term("csa_indexer", csa_layers, index_dim, csa_cells, ca.csa_ratio, csa_how, what="1 indexer key")]
    if hca_layers:
        terms.append(term("hca", hca_layers, head, hca_cells, ca.hca_ratio,
                          f"pad256(⌈{grouped(kv_size)} / {ca.hca_ratio}⌉)"))
    terms += _dsv4_state_terms(spec, seqs)
    return terms


def _dsv4_state_terms(spec: ModelSpec, seqs: int) -> list[KvTerm]:
    """llama.cpp's compressor states (f32 kv + score), a fixed size per sequence."""
    _, csa_layers, hca_layers = dsv4_layer_counts(spec)
    csa, hca = _dsv4_state_elements(spec)
    per_seq = (csa * csa_layers + hca * hca_layers) * DSV4_STATE_BYTES
    if not per_seq:
        return []
    return [KvTerm(
        kind="dsv4_state", layers=csa_layers + hca_layers, bytes_per_token_per_layer=0.0, cells=0,
        bytes=per_seq * seqs, bytes_per_rank=per_seq * seqs, per_sequence=True,
        explanation=(f"compressor kv + score in f32: ({grouped(csa)} elements × {csa_layers} CSA layers + "
                     f"{grouped(hca)} × {hca_layers} HCA layers) × 4 B = {grouped(per_seq)} B per "
                     f"sequence × {sequences(seqs)}, independent of context"),
        inputs={"csa_elements": csa, "hca_elements": hca})]


def _vllm_dsv4_kv_dtype(kv_dtype: str) -> str:
    """vLLM stores DeepSeek-V4's cache as fp8_ds_mla: "auto" and "fp8" resolve to it, another dtype is refused
    (models/deepseek_v4 _resolve_dsv4_kv_cache_dtype, 0.33.0; only the opt-in FlashInfer SM100 backend differs)."""
    name = KV_DTYPE_ALIASES.get(kv_dtype.lower(), kv_dtype.lower())
    if name not in VLLM_DSV4_KV_DTYPES:
        raise SizingError(f"--kv-dtype {kv_dtype}: vLLM caches DeepSeek-V4 in its fp8 layout (fp8_ds_mla) only; "
                          "choose fp8", code="dsv4_vllm_kv_fp8", params={"kv_dtype": kv_dtype})
    return "fp8"


def _padded_page(entry_bytes: float) -> int:
    return -(-int(entry_bytes) // VLLM_DSV4_PAGE_ALIGNMENT) * VLLM_DSV4_PAGE_ALIGNMENT


def vllm_dsv4_pool_block_bytes(spec: ModelSpec) -> int:
    """Bytes of one vLLM pool block: the largest group's, the compressed KV and indexer keys of every layer for
    256 tokens (CSA: 64 entries of 584 B + 64 of 132 B; HCA: 2 entries of 584 B; each page padded to 576 B)."""
    ca = spec.compressed_attention
    assert ca is not None
    _, csa_layers, hca_layers = dsv4_layer_counts(spec)
    block = VLLM_DSV4_BLOCK_TOKENS
    csa = _padded_page(block // ca.csa_ratio * VLLM_DSV4_ENTRY_BYTES)
    idx = _padded_page(block // ca.csa_ratio * VLLM_DSV4_INDEXER_ENTRY_BYTES)
    hca = _padded_page(block // ca.hca_ratio * VLLM_DSV4_ENTRY_BYTES)
    return csa_layers * (csa + idx) + hca_layers * hca


def _vllm_dsv4_fixed_blocks(spec: ModelSpec) -> tuple[int, str]:
    """Pool blocks one sequence holds for its windows in steady decode: each sliding-window group cdiv(128, 64) + 1
    blocks, the CSA-state group cdiv(8, 4) + 1, the HCA-state group cdiv(128, 8) + 1; a group that does not fit one
    pool block is split into as many groups as it takes (V4-Flash: the 43 windows in 2 groups of 22 and 21)."""
    ca = spec.compressed_attention
    assert ca is not None
    layers, csa_layers, hca_layers = dsv4_layer_counts(spec)
    pool = vllm_dsv4_pool_block_bytes(spec)
    head, index_dim = ca.head_dim, spec.dsa_indexer.head_dim if spec.dsa_indexer else 0
    window = spec.sliding_window or 0
    swa_page = _padded_page(VLLM_DSV4_SWA_BLOCK_TOKENS * VLLM_DSV4_ENTRY_BYTES)
    csa_tokens, hca_tokens = VLLM_DSV4_STATE_BLOCK_TOKENS["csa"], VLLM_DSV4_STATE_BLOCK_TOKENS["hca"]
    csa_state_page = (_padded_page(csa_tokens * 2 * 2 * head * DSV4_STATE_BYTES)
                      + _padded_page(csa_tokens * 2 * 2 * index_dim * DSV4_STATE_BYTES))
    hca_state_page = _padded_page(hca_tokens * 2 * head * DSV4_STATE_BYTES)
    groups = [  # (name, layers × page bytes per block, blocks per sequence)
        ("window", layers * swa_page, -(-window // VLLM_DSV4_SWA_BLOCK_TOKENS) + 1),
        ("CSA state", csa_layers * csa_state_page, -(-2 * ca.csa_ratio // csa_tokens) + 1),
        ("HCA state", hca_layers * hca_state_page, -(-ca.hca_ratio // hca_tokens) + 1),
    ]
    blocks, parts = 0, []
    for name, group_bytes, per_group in groups:
        if not group_bytes:
            continue
        count = -(-group_bytes // pool)
        blocks += count * per_group
        parts.append(f"{name} {count} × {per_group}")
    return blocks, " + ".join(parts)


def _vllm_dsv4_terms(spec: ModelSpec, scenario: Scenario, tp: int) -> list[KvTerm]:
    ca = spec.compressed_attention
    assert ca is not None
    _, csa_layers, hca_layers = dsv4_layer_counts(spec)
    seqs, block = scenario.batch, VLLM_DSV4_BLOCK_TOKENS
    blocks = -(-scenario.context // block)
    cells = blocks * block
    tail = f" × {sequences(seqs)}{times_gpus(tp)} (not split by TP)"

    def term(kind, n_layers, entry_bytes, ratio, what):
        page = _padded_page(block // ratio * entry_bytes)
        per_rank = page * n_layers * blocks * seqs
        return KvTerm(kind=kind, layers=n_layers, bytes_per_token_per_layer=page / block, cells=cells,
                      bytes=per_rank * tp, bytes_per_rank=per_rank,
                      explanation=(f"{what}: {block // ratio} entries × {entry_bytes} B per {block} tokens "
                                   f"(page {grouped(page)} B) × {n_layers} layers × {grouped(blocks)} blocks{tail}"),
                      inputs={"entry_bytes": entry_bytes, "page_bytes": page, "blocks": blocks, "tp": tp})

    terms = []
    if csa_layers:
        terms += [replace(term("csa", csa_layers, VLLM_DSV4_ENTRY_BYTES, ca.csa_ratio, "fp8_ds_mla entries"),
                          read_tokens_cap=_csa_read_cap(spec)),
                  term("csa_indexer", csa_layers, VLLM_DSV4_INDEXER_ENTRY_BYTES, ca.csa_ratio,
                       "indexer keys, 128 fp8 + fp32 scale")]
    if hca_layers:
        terms.append(term("hca", hca_layers, VLLM_DSV4_ENTRY_BYTES, ca.hca_ratio, "fp8_ds_mla entries"))
    fixed, parts = _vllm_dsv4_fixed_blocks(spec)
    pool = vllm_dsv4_pool_block_bytes(spec)
    per_seq = fixed * pool
    terms.append(KvTerm(
        kind="dsv4_window_state", layers=spec.num_layers, bytes_per_token_per_layer=0.0, cells=0,
        bytes=per_seq * seqs * tp, bytes_per_rank=per_seq * seqs, per_sequence=True,
        explanation=(f"sliding window and compressor states: {parts} = {fixed} pool blocks of {grouped(pool)} B = "
                     f"{grouped(per_seq)} B per sequence × {sequences(seqs)}{times_gpus(tp)}, independent of context "
                     "(steady decode; vLLM's start-up check reserves more for the tokens in flight)"),
        inputs={"pool_blocks": fixed, "pool_block_bytes": pool, "tp": tp}))
    return terms


# --- recurrent state (both engines; dtype and TP differ) -------------------------------------------------

def recurrent_state_elements(spec: ModelSpec, kind: str, tp: int = 1) -> tuple[int, int]:
    """(conv/shift elements, ssm/delta-state elements) per layer and sequence, per TP rank.

    llama.cpp src/llama-hparams.cpp n_embd_r()/n_embd_s(); vLLM mamba_utils.py MambaStateShapeCalculator.
    """
    if kind == "linear":
        la = spec.linear_attention
        if la is None:
            raise SizingError(f"model {spec.slug!r} has linear-attention layers but no linear_attention shape")
        # gated_delta_net_state_shape: conv over q, k, v channels; state (v_heads, v_dim, k_dim).
        conv_dim = 2 * la.num_key_heads * la.key_head_dim + la.num_value_heads * la.value_head_dim
        _check_divides(la.num_value_heads, tp, "linear-attention value heads")
        return ((la.conv_kernel - 1) * conv_dim // tp,
                la.num_value_heads // tp * la.value_head_dim * la.key_head_dim)
    if kind == "mamba":
        m = spec.mamba
        if m is None:
            raise SizingError(f"model {spec.slug!r} has Mamba layers but no mamba shape")
        d_inner = m.num_heads * m.head_dim
        _check_divides(m.num_heads, tp, "Mamba heads")
        # vLLM mamba2_state_shape replicates groups when n_groups does not divide TP.
        groups = m.n_groups if m.n_groups % tp == 0 else m.n_groups + (tp - m.n_groups % tp)
        conv = (m.conv_kernel - 1) * (d_inner + 2 * groups * m.state_size) // tp
        return conv, m.num_heads // tp * m.head_dim * m.state_size
    if kind == "conv":
        if spec.conv is None:
            raise SizingError(f"model {spec.slug!r} has conv layers but no conv shape")
        # LFM2: n_embd_r = n_embd * (L_cache - 1); vLLM short_conv_state_shape (L_cache - 1, hidden / tp).
        return (spec.conv.l_cache - 1) * spec.hidden_size // tp, 0
    raise ValueError(kind)


def _check_divides(count: int, tp: int, what: str) -> None:
    if tp > 1 and count % tp:
        raise SizingError(f"--gpus {tp}: tensor parallel must divide the {count} {what}")


def _recurrent_terms(spec: ModelSpec, batch: int, state_bytes: float, *, tp: int, dtype_note: str,
                     ssm_state_bytes: float | None = None, ssm_dtype_note: str = "") -> list[KvTerm]:
    """``ssm_state_bytes``: a different element size for the recurrent (temporal) state of Mamba-2 and gated
    delta-net layers (vLLM's mamba_ssm_cache_dtype); the conv state keeps ``state_bytes``."""
    counts = _mixer_counts(spec)
    terms = []
    for kind in ("linear", "mamba", "conv"):
        layers = counts.get(kind, 0)
        if not layers:
            continue
        conv, ssm = recurrent_state_elements(spec, kind, tp)
        ssm_bytes = ssm_state_bytes if kind in ("mamba", "linear") and ssm_state_bytes is not None else state_bytes
        per_seq_rank = (conv * state_bytes + ssm * ssm_bytes) * layers
        total = per_seq_rank * batch * tp
        if ssm_bytes == state_bytes:
            elements = f"({grouped(conv)} conv + {grouped(ssm)} state) elements × {grouped(state_bytes)} B"
            note = dtype_note
        else:
            elements = (f"({grouped(conv)} conv elements × {grouped(state_bytes)} B + {grouped(ssm)} state elements "
                        f"× {grouped(ssm_bytes)} B)")
            note = f"{dtype_note}; {ssm_dtype_note}"
        terms.append(KvTerm(
            kind=kind, layers=layers, bytes_per_token_per_layer=0.0, cells=0, bytes=total,
            bytes_per_rank=per_seq_rank * batch, per_sequence=True,
            explanation=(f"{elements} × {layers} layers"
                         f"{f' per rank (TP {tp})' if tp > 1 else ''} = {grouped(per_seq_rank)} B per sequence "
                         f"× {sequences(batch)}{times_gpus(tp)}, independent of context; {note}"),
            inputs={"conv_elements": conv, "state_elements": ssm, "state_bytes": state_bytes,
                    "ssm_state_bytes": ssm_bytes, "tp": tp}))
    return terms


# --- vLLM -----------------------------------------------------------------------------------------------------

def vllm_kv_heads_per_rank(kv_heads: int, tp: int) -> int:
    """vLLM splits KV heads over TP ranks and replicates them (one per rank) when TP exceeds the head count
    (model_executor/layers/linear.py QKVParallelLinear: num_kv_head_replicas = tp // total_num_kv_heads)."""
    if tp <= kv_heads:
        if kv_heads % tp:
            raise SizingError(f"--gpus {tp}: tensor parallel must divide the {kv_heads} KV heads")
        return kv_heads // tp
    if tp % kv_heads:
        raise SizingError(f"--gpus {tp}: with more GPUs than KV heads ({kv_heads}) TP must be a multiple of them")
    return 1


def vllm_blocks_per_request(window: int | None, context: int, mnbt: int, block_size: int = VLLM_BLOCK_SIZE,
                            *, kind: str = "full") -> int:
    """Pages one request needs (kv_cache_interface.py max_memory_usage_bytes / page_size_bytes):
    full: cdiv(max_model_len, block); SlidingWindowSpec: cdiv(min(window - 1 + mnbt, len), block) + 1;
    ChunkedLocalAttentionSpec: cdiv(min(chunk + mnbt, len), block)."""
    if window is None:
        return -(-context // block_size)
    if kind == "chunked":
        return -(-min(window + mnbt, context) // block_size)
    return -(-min(window - 1 + mnbt, context) // block_size) + 1


def _vllm_terms(spec: ModelSpec, scenario: Scenario, kv_dtype: str, tp: int, mnbt: int) -> list[KvTerm]:
    size = KV_DTYPE_BYTES[kv_dtype]
    context, batch = scenario.context, scenario.batch
    terms = []
    for kind, layers, shape, window in _attention_kinds(spec):
        heads = vllm_kv_heads_per_rank(shape.num_kv_heads, tp)
        # FullAttentionSpec.real_page_size_bytes: block × kv_heads × (head_size + head_size_v) × dtype.
        per_layer = heads * (shape.head_dim + shape.v_dim) * size
        blocks = vllm_blocks_per_request(window, context, mnbt, kind=kind)
        cells = blocks * VLLM_BLOCK_SIZE
        per_rank = per_layer * layers * cells * batch
        replicated = f", replicated on {tp // shape.num_kv_heads} ranks" if tp > shape.num_kv_heads else ""
        head = (f"2 × {heads} kv heads/rank × {shape.head_dim}" if shape.head_dim == shape.v_dim else
                f"{heads} kv heads/rank × ({shape.head_dim} K + {shape.v_dim} V)")
        window_note = "" if window is None else (
            f" (window {grouped(window)}: {blocks} pages of {VLLM_BLOCK_SIZE} with max_num_batched_tokens "
            f"{grouped(mnbt)})")
        terms.append(KvTerm(
            kind=kind, layers=layers, bytes_per_token_per_layer=per_layer, cells=cells, bytes=per_rank * tp,
            bytes_per_rank=per_rank, window_tokens=window,
            explanation=(f"{head} × {_dtype_label(kv_dtype)} × {layers} layers = {grouped(per_layer * layers)} "
                         f"B/token/GPU{replicated} × {grouped(cells)} tokens × {sequences(batch)}{times_gpus(tp)}"
                         f"{window_note}"),
            inputs={"kv_heads": shape.num_kv_heads, "kv_heads_per_rank": heads, "head_dim": shape.head_dim,
                    "v_head_dim": shape.v_dim, "dtype_bytes": size, "tp": tp, "window": window, "blocks": blocks}))
    terms += _vllm_mla_terms(spec, kv_dtype, tp, context, batch)
    state_bytes = KV_DTYPE_BYTES[vllm_model_dtype(spec, scenario.quant)]
    ssm_dtype = spec.vllm_ssm_state_dtype
    terms += _recurrent_terms(spec, batch, state_bytes, tp=tp,
                              dtype_note=f"{grouped(state_bytes)} B model dtype (vLLM mamba_cache_dtype auto)",
                              ssm_state_bytes=VLLM_SSM_STATE_BYTES[ssm_dtype] if ssm_dtype else None,
                              ssm_dtype_note=f"recurrent state in {ssm_dtype}, as vLLM's config hook for this "
                                             "model sets mamba_ssm_cache_dtype from its config")
    return terms


def vllm_group_size(layer_counts: list[int]) -> int:
    """Layers per KV cache group of vLLM's hybrid allocator (kv_cache_utils._get_kv_cache_groups_uniform_page_size):
    the smallest count of a layer kind, or the largest when no kind has 1.5 × the layers of another; every kind is
    split into groups of that many layer slots, the last group of a kind padded."""
    group_size = min(layer_counts)
    if max(layer_counts) < 1.5 * min(layer_counts):
        group_size = max(layer_counts)
    return group_size


def vllm_group_padding_terms(terms: list[KvTerm], *, tp: int, pp: int, batch: int) -> list[KvTerm]:
    """The layer slots vLLM reserves blocks for beyond a model's layers. Its hybrid allocator (attention kinds of
    different windows; get_kv_cache_config_from_groups) splits each kind into groups of vllm_group_size layers, and
    a request takes its kind's blocks in every slot of a group: Gemma 3 27B's 52 sliding layers fill 6 groups of 10,
    so each request holds sliding-window blocks for 60 slots (runtime.VllmKvCapacity.request_bytes; the 15,998-block
    pool of its v0.19 log, bench/data/vllm_memory.csv, is sized that way). Attention-only hybrids here: a model with
    recurrent state pads its pages as well (runtime._hybrid_capacity), which this does not count."""
    attention = [t for t in terms if not t.per_sequence and t.layers]
    if len(attention) < 2 or len(attention) != len(terms) or all(t.window_tokens is None for t in attention):
        return []  # one group of every layer (UniformTypeKVCacheSpecs), or state pages this does not pad
    counts = [stage_layers(t.layers, pp) for t in attention]
    group = vllm_group_size(counts)
    padding = []
    for term, count in zip(attention, counts):
        groups = -(-count // group)
        slots = groups * group - count
        if not slots:
            continue
        per_rank = term.bytes_per_token_per_layer * slots * pp * term.cells * batch
        stage = f" on each of {pp} pipeline stages" if pp > 1 else ""
        padding.append(KvTerm(
            kind="group_padding", layers=slots * pp, bytes_per_token_per_layer=term.bytes_per_token_per_layer,
            cells=term.cells, bytes=per_rank * tp, bytes_per_rank=per_rank, window_tokens=term.window_tokens,
            padding=True,
            explanation=(f"vLLM groups layers {group} to a group: {count} {term.kind} layers{stage} take {groups} "
                         f"groups = {groups * group} slots, {slots} without a layer × "
                         f"{grouped(term.bytes_per_token_per_layer)} B/token/GPU × {grouped(term.cells)} tokens × "
                         f"{sequences(batch)}{times_gpus(tp)}"),
            inputs={"group_size": group, "kind": term.kind, "layers": count, "groups": groups, "slots": slots}))
    return padding


def _vllm_mla_terms(spec: ModelSpec, kv_dtype: str, tp: int, context: int, batch: int) -> list[KvTerm]:
    layers = _mixer_counts(spec).get("full", 0)
    mla = spec.mla
    if mla is None or layers == 0:
        return []
    cells = vllm_blocks_per_request(None, context, 0) * VLLM_BLOCK_SIZE
    row = mla.kv_lora_rank + mla.qk_rope_head_dim
    sparse_fp8 = kv_dtype.startswith("fp8") and spec.dsa_indexer is not None
    if sparse_fp8:
        per_layer = float(VLLM_FP8_DS_MLA_BYTES)
        how = f"fp8_ds_mla {VLLM_FP8_DS_MLA_BYTES} B"
    else:
        per_layer = row * KV_DTYPE_BYTES[kv_dtype]
        how = f"1 latent head × ({mla.kv_lora_rank} + {mla.qk_rope_head_dim} rope) × {_dtype_label(kv_dtype)}"
    # MLAAttentionSpec: no ×2 for K and V; the latent is one "head", identical on every TP rank.
    per_rank = per_layer * layers * cells * batch
    terms = [KvTerm(
        kind="mla", layers=layers, bytes_per_token_per_layer=per_layer, cells=cells, bytes=per_rank * tp,
        bytes_per_rank=per_rank,
        explanation=(f"{how} × {layers} layers = {grouped(per_layer * layers)} B/token/GPU (not split by TP) × "
                     f"{grouped(cells)} tokens × {sequences(batch)}{times_gpus(tp)}"),
        inputs={"kv_lora_rank": mla.kv_lora_rank, "qk_rope_head_dim": mla.qk_rope_head_dim, "tp": tp})]
    if spec.dsa_indexer is not None:
        index_dim = spec.dsa_indexer.head_dim
        idx = index_dim + index_dim // VLLM_INDEXER_QUANT_BLOCK * 4
        idx_rank = idx * layers * cells * batch
        terms.append(KvTerm(
            kind="dsa_indexer", layers=layers, bytes_per_token_per_layer=float(idx), cells=cells,
            bytes=idx_rank * tp, bytes_per_rank=idx_rank,
            explanation=(f"DSA indexer key: {index_dim} fp8 + {idx - index_dim} B scales = "
                         f"{idx} B × {layers} layers = {grouped(idx * layers)} B/token/GPU × {grouped(cells)} "
                         f"tokens × {sequences(batch)}{times_gpus(tp)}"),
            inputs={"index_head_dim": index_dim, "tp": tp}))
    return terms


def _notes(spec: ModelSpec, engine: str, kv_dtype: str) -> tuple[str, ...]:
    notes = []
    if engine == "llama.cpp":
        notes.append("llama.cpp: one unified cache; n_ctx = context × batch, padded to 256 cells.")
    shapes = [s for s in (spec.attention, spec.sliding_attention) if s is not None]
    if any(s.k_eq_v for s in shapes):
        # Gemma 4 k_eq_v: V = rms_norm(K before k_norm/RoPE) is a different tensor from the cached K, so both
        # engines still store K and V (llama.cpp src/models/gemma4-iswa.cpp passes Kcur and Vcur to build_attn).
        notes.append("attention_k_eq_v shares the projection, not the cache: K and V are both stored.")
    if kv_dtype in ("q8_0", "q4_0"):
        notes.append("quantized V cache needs flash attention in llama.cpp (-fa).")
    return tuple(notes)
