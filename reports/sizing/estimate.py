"""One estimate: memory, fit, speed, cost and fine-tuning for a model × hardware × scenario.

This module only orchestrates; every formula lives in its own module (see docs/engine.md). ``estimate`` returns
an ``Estimate`` that keeps each module's breakdown (for the "how was this computed" panels) and renders the
stable JSON of docs/estimate-contract.md with ``to_contract_json``.

Decisions made here (each with its reason):

* ``weights``: the tensor bytes the engine loads. GLM-4.5/4.6/4.7 GGUFs keep their MTP (nextn) block
  (convert_hf_to_gguf.py ``Glm4MoeModel``: block_count = num_hidden_layers + num_nextn_predict_layers) and
  llama.cpp loads it ("preserved but unused", src/llama-model.cpp LLM_ARCH_GLM4_MOE), so it is counted for
  llama.cpp; DeepSeek-style converters (``DeepseekV2Model``, which ``GlmMoeDsaModel`` subclasses) drop it, and vLLM
  skips MTP weights unless speculative decoding is on.
* Under vLLM tensor parallel ``weights`` is what all ranks hold together (replicated tensors once per rank), so
  ``required = weights + kv_cache + runtime`` stays the sum of the GPUs' bytes.
* ``runtime``: the engine's runtime terms on every GPU (compute buffer and device context per GPU for llama.cpp;
  activation peak, non-torch memory, CUDA graphs and context per rank for vLLM), the host buffers, and the copy
  of a tied output head llama.cpp duplicates onto the output GPU.
* vLLM's usable memory is the budget it takes, ``gpu_memory_utilization`` × the memory the driver reports
  (vllm_memory_share: on unified memory no more than the system leaves free; check_vllm_memory_share refuses a
  share that leaves no room for the device context).
* Fine-tuning memory uses finetune.py's defaults (sequence 2,048, micro-batch 1, gradient checkpointing): it
  answers "can I adapt this model on this GPU", independent of the serving context.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from functools import lru_cache
from operator import attrgetter
from typing import Any

from .economics import ServingCost, cost_per_million_tokens
from .errors import SizingError
from .finetune import FinetuneMemory, FinetuneOptions, finetune_memory as finetune_memory_one, finetune_memory_all
from .fit import (
    FitResult,
    LlamaCppDemand,
    Placement,
    assess_fit,
    check_offload_pct,
    layer_split_holds,
    place_llama_cpp,
    place_tensor_parallel,
    usable_bytes,
    usable_factor,
    vllm_cpu_offload_gib,
)
from .kv_cache import (  # noqa: F401  # GPUS_PER_SERVER, vllm_parallel_sizes: the launch line and pages use them
    DSV4_STATE_BYTES, GPUS_PER_SERVER, VLLM_DTYPE_FORMATS, KvBreakdown, kv_cache, resolve_kv_dtype,
    vllm_parallel_sizes,
)
from .notes import Note
from .parallelism import (
    LlamaCppLayout,
    TensorParallelWeights,
    check_tensor_parallel,
    llama_cpp_layout,
    tensor_parallel_weights,
    vllm_mxfp4_expert_padding,
)
from .parameters import ParameterCount, count_parameters
from .quant import quant_format
from .runtime import (
    DEVICE_CONTEXT_BYTES, VLLM_LARGE_GPU_DEFAULTS, VLLM_QUANTIZED_MOE_LOGGED_KV_GIB,
    VLLM_QUANTIZED_MOE_MODELLED_KV_GIB, VLLM_QUANTIZED_MOE_SOURCE, VLLM_SMALL_GPU_DEFAULTS, RuntimeBreakdown,
    llama_cpp_buffers, runtime_memory, vllm_scheduler_defaults, vllm_start_bytes,
)
from .specs import CloudOfferSpec, HardwareSpec, ModelSpec, Scenario, confirmed_offers, scenario_with
from .throughput import (
    DEFAULT_RAM_BANDWIDTH_GBS,
    DESKTOP_MAX_RAM_BYTES,
    AggregateDecode,
    BackendCalibration,
    DecodeSpeed,
    PrefillSpeed,
    TensorPeaks,
    aggregate_decode,
    attention_flops_per_token,
    decode_speed,
    host_link_gbs,
    prefill_speed,
    vllm_calibration,
    vllm_tensor_peaks,
)
from .weights import WeightBreakdown, weight_bytes

GIB = 2**30
ENGINES = ("llama.cpp", "vllm")
# GGUF converters that keep the MTP/nextn block in the file (see the module doc).
GGUF_KEEPS_MTP_ARCHITECTURES = frozenset({"glm4_moe"})
# Formats llama.cpp cannot load: vLLM checkpoint formats without a GGUF counterpart.
VLLM_ONLY_FORMATS = frozenset({"FP8", "FP8_FP4", "AWQ", "GPTQ"})
# The checkpoints vLLM usually serves (its GGUF loading is experimental), most bits per weight first: what a vLLM
# page's quantization matrix and a hardware table under vLLM try.
VLLM_CHECKPOINT_FORMATS = ("BF16", "FP8", "AWQ", "GPTQ")
# cudaMemGetInfo total of an H100 80GB is 79.19 GiB (bench/data/vllm_memory.csv, NOTES-runtime.md): the driver
# reports ~99 % of the nominal size read as GiB. vLLM's gpu_memory_utilization applies to that total.
DRIVER_REPORTED_SHARE = 79.19 / 80
# Bytes of one activation element exchanged by tensor-parallel all-reduces (bf16).
ALLREDUCE_ELEMENT_BYTES = 2

# Input limits shared by the command line and the web form (beyond them the arithmetic is meaningless).
MAX_CONTEXT = 16 * 2**20  # 16M tokens (Llama 4 Scout advertises 10M)
MAX_BATCH = 65_536
MAX_GPUS = 1_024


# --------------------------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------------------------


# Every field of a scenario.
_SCENARIO_FIELD_NAMES = tuple(f.name for f in fields(Scenario))
_SCENARIO_VALUES = attrgetter(*_SCENARIO_FIELD_NAMES)


def validate_scenario(scenario: Scenario) -> None:
    """Raise SizingError naming the option for any value the engine cannot size.

    A page validates the same scenario for many of its links: a valid one is remembered, keyed on the scenario and
    the exact type of each field, since equal values of another type may be refused (8192.0 == 8192 is no whole
    number of tokens, True == 1 no batch). The key is the tuple of its values, which hashes and compares without the
    Scenario's Python __hash__ and __eq__ (~70 validations a page)."""
    values = _SCENARIO_VALUES(scenario)
    try:
        hash(values)
    except TypeError:  # an unhashable value (no form or option makes one): checked uncached, refused by its option
        _validate_scenario(scenario)
        return
    _validate_values(values, tuple(map(type, values)))  # a TypeError of the checks is not taken for unhashability


@lru_cache(maxsize=4096)  # lru_cache keeps no exception: a refused scenario is checked again, with its message
def _validate_values(values: tuple, types: tuple[type, ...]) -> None:
    _validate_scenario(Scenario(**dict(zip(_SCENARIO_FIELD_NAMES, values))))


def _validate_scenario(scenario: Scenario) -> None:
    _require_int_range(scenario.context, "--context", 1, MAX_CONTEXT)
    _require_int_range(scenario.batch, "--batch", 1, MAX_BATCH)
    _require_int_range(scenario.gpus, "--gpus", 1, MAX_GPUS)
    _require_int_range(scenario.prompt, "--prompt", 1, MAX_CONTEXT)
    _require_int_range(scenario.depth, "--depth", 0, MAX_CONTEXT)
    _require_int_range(scenario.n_ubatch, "--n-ubatch", 1, MAX_CONTEXT)
    if scenario.depth >= scenario.context:
        raise SizingError(f"--depth {scenario.depth} must be below --context {scenario.context} "
                          "(the cache holds at most context tokens)")
    if scenario.engine not in ENGINES:
        raise SizingError(f"--engine {scenario.engine!r} is not known; choose one of {', '.join(ENGINES)}")
    fmt = quant_format(scenario.quant)
    if scenario.engine == "llama.cpp" and fmt.name in VLLM_ONLY_FORMATS:
        raise SizingError(f"--quant {fmt.name} is a vLLM checkpoint format; llama.cpp runs GGUF files "
                          "(choose a GGUF type such as Q4_K_M, or --engine vllm)",
                          code="vllm_format_on_llama_cpp", params={"quant": fmt.name})
    resolve_kv_dtype(scenario.kv_dtype, scenario.engine)
    check_offload_pct(scenario.offload_pct)
    if not 0 < scenario.gpu_memory_utilization <= 1:
        raise SizingError(
            f"--gpu-memory-utilization must be in (0, 1] (got {scenario.gpu_memory_utilization})")
    for value, option in ((scenario.max_num_seqs, "--max-num-seqs"),
                          (scenario.max_num_batched_tokens, "--max-num-batched-tokens")):
        if value is not None:
            _require_int_range(value, option, 1, MAX_CONTEXT)
    if scenario.system_ram_bandwidth_gbs is not None and not scenario.system_ram_bandwidth_gbs > 0:
        raise SizingError(f"--ram-bandwidth must be positive (got {scenario.system_ram_bandwidth_gbs})")


def _require_int_range(value: Any, option: str, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SizingError(f"{option} must be a whole number (got {value!r})")
    if not low <= value <= high:
        raise SizingError(f"{option} must be between {low:,} and {high:,} (got {value:,})")


# --------------------------------------------------------------------------------------------------------------
# Memory plan (cached: offers re-use it for every accelerator of a grid)
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MemoryPlan:
    """Everything memory-related for one model × hardware × scenario."""

    weights: WeightBreakdown
    include_mtp: bool
    tensor_parallel: TensorParallelWeights | None  # vLLM only
    layout: LlamaCppLayout | None  # llama.cpp only
    kv: KvBreakdown | None  # None: no shapes and no sourced family member
    runtime: RuntimeBreakdown
    weights_loaded_bytes: float  # all GPUs and the host (TP: replicated tensors once per rank)
    runtime_bytes: float  # all GPUs + host buffers + tied-head copy
    fit: FitResult
    format_runs: bool = True  # the engine's backend runs this weight format (format_runs_on)

    @property
    def kv_bytes(self) -> float:
        return self.kv.total_bytes if self.kv is not None else 0.0

    @property
    def placement(self) -> Placement:
        return self.fit.placement

    @property
    def runs(self) -> bool:
        """Whether the configuration runs at all: it fits, or llama.cpp's automatic offload moved what does not fit
        to system RAM. "exceeds" on unified memory (no separate RAM) or under vLLM (no automatic offload) does not
        run, so it has no speed."""
        placement = self.placement
        # llama.cpp's automatic offload runs it when what stays on the GPUs fits (for a tied head it may move only
        # the output layer, 0 bytes of offloaded weights); an explicit share that still exceeds fails.
        # A layout without shapes moves exactly the excess (fit._continuous_offload): the sums may land a rounding
        # error above the usable bytes, so one byte of slack.
        offload_runs = placement.mode == "auto" and placement.per_gpu_bytes <= self.fit.usable_bytes_per_gpu + 1.0
        return (self.fit.fits or offload_runs) and self.format_runs

    @property
    def not_running_reason(self) -> str | None:
        """Why the configuration does not run (None when it runs): "format" (the backend does not run the weight
        format), "explicit_offload" (the chosen offload share still exceeds; more would make it run) or "no_offload"
        (it exceeds and nothing moves to system RAM on its own: unified memory, or vLLM)."""
        if self.runs:
            return None
        if not self.format_runs:
            return "format"
        return "explicit_offload" if self.placement.mode == "explicit" else "no_offload"

    @property
    def tied_output_copy_bytes(self) -> float:
        """The copy of a tied output head (token_embd) llama.cpp puts on the output GPU; part of runtime_bytes."""
        return tied_output_copy_bytes(self.layout, self.placement)

    @property
    def weights_in_gpu_memory_bytes(self) -> float:
        """Weights not moved to system RAM (the memory bar's weights segment)."""
        return max(self.weights_loaded_bytes - self.placement.offloaded_weight_bytes, 0.0)

    @property
    def kv_in_gpu_memory_bytes(self) -> float:
        """KV cache and state of the blocks that stay on the GPUs."""
        return max(self.kv_bytes - self.placement.offloaded_kv_bytes, 0.0)

    @property
    def usable_bytes_all_gpus(self) -> float:
        return self.fit.usable_bytes_per_gpu * self.fit.gpus


def engine_usable_bytes(hardware: HardwareSpec, scenario: Scenario) -> float:
    """Usable memory per GPU for this engine. vLLM: what its process may hold, the budget it takes
    (vllm_budget_bytes, which its KV pool is sized from) and the device context it allocated before measuring the
    free memory, outside that budget (runtime.DEVICE_CONTEXT_BYTES). Counting the context on both sides, here and
    in what the GPU holds, keeps usable − required = headroom on every page, as for llama.cpp."""
    if scenario.engine == "vllm":
        return vllm_budget_bytes(hardware, scenario) + DEVICE_CONTEXT_BYTES.get(hardware.backend, 0)
    return usable_bytes(hardware)


def vllm_budget_bytes(hardware: HardwareSpec, scenario: Scenario) -> float:
    """The memory vLLM takes per GPU (mem_utils.request_memory): vllm_memory_share × the memory the driver reports."""
    return vllm_memory_share(hardware, scenario) * reported_memory_bytes(hardware)


def vllm_memory_share(hardware: HardwareSpec, scenario: Scenario) -> float:
    """The --gpu-memory-utilization vLLM runs with on this accelerator: the scenario's, except on unified memory.

    vLLM asks for that share of the whole memory at start-up and refuses to start when less is free
    (mem_utils.request_memory: "Free memory on device … on startup is less than desired GPU memory utilization").
    On a unified-memory machine the system keeps what usable_bytes leaves (the fit's rule for every engine), so the
    page launches vLLM with at most vllm_largest_memory_share; check_vllm_memory_share refuses a share a discrete
    GPU cannot give."""
    share = scenario.gpu_memory_utilization
    if hardware.kind == "unified":
        share = min(share, vllm_largest_memory_share(hardware))
    return share


# Whatever the backend, its runtime holds some device memory before vLLM measures what is free, so the whole memory
# is never free: where no device context is modelled (DEVICE_CONTEXT_BYTES), the largest share is still below 1.
VLLM_LARGEST_SHARE = 0.99


@lru_cache(maxsize=1024)  # the accelerator's own figure: every vLLM fit on it asks
def vllm_largest_memory_share(hardware: HardwareSpec) -> float:
    """The largest two-decimal --gpu-memory-utilization vLLM starts with here: on a discrete GPU the share must leave
    the device context (runtime.DEVICE_CONTEXT_BYTES), allocated before vLLM measures the free memory, outside it;
    on unified memory it is what the system leaves free (usable_bytes)."""
    total = reported_memory_bytes(hardware)
    context = DEVICE_CONTEXT_BYTES.get(hardware.backend, 0)
    if hardware.kind == "unified":
        return math.floor((usable_bytes(hardware) - context) / total * 100) / 100
    beside_context = math.floor((total - context) / total * 100) / 100
    return min(beside_context, VLLM_LARGEST_SHARE)


def vllm_memory_share_refused(hardware: HardwareSpec, scenario: Scenario) -> bool:
    """Whether vLLM would ask a discrete GPU for more than is free beside its device context (not under vllm-gaudi,
    which takes its share of the memory free after loading; unified memory is capped by vllm_memory_share)."""
    return scenario.engine == "vllm" and scenario.gpu_memory_utilization > _vllm_refused_above(hardware)


@lru_cache(maxsize=1024)  # one lookup for each of the ~100 vLLM fits a page asks
def _vllm_refused_above(hardware: HardwareSpec) -> float:
    """The share above which vllm_memory_share_refused refuses on this accelerator (none: infinity)."""
    if hardware.kind == "unified" or vllm_platform(hardware) == "intel-gaudi":
        return math.inf
    return vllm_largest_memory_share(hardware)


def check_vllm_memory_share(hardware: HardwareSpec, scenario: Scenario) -> None:
    """SizingError naming --gpu-memory-utilization when vllm_memory_share_refused."""
    if vllm_memory_share_refused(hardware, scenario):
        largest = vllm_largest_memory_share(hardware)
        total = reported_memory_bytes(hardware)
        raise SizingError(
            f"--gpu-memory-utilization {scenario.gpu_memory_utilization:g}: vLLM would ask for "
            f"{_gib(scenario.gpu_memory_utilization * total)} of {hardware.name}'s {_gib(total)}, but the device "
            f"runtime ({hardware.backend}) holds some of it before vLLM measures what is free: it does not start "
            f"(at most {largest:g})", code="vllm_share_above_free",
            params={"utilization": scenario.gpu_memory_utilization, "hardware": hardware.name,
                    "requested_gib": scenario.gpu_memory_utilization * total / GIB, "total_gib": total / GIB,
                    "largest": largest})


def reported_memory_bytes(hardware: HardwareSpec) -> float:
    return hardware.memory_gb * GIB * DRIVER_REPORTED_SHARE


# Backends each engine is sized on. vLLM's memory model here (gpu_memory_utilization, CUDA graphs, the paged KV
# pool) is its CUDA/ROCm one; on Apple GPUs vLLM runs only through the separate vllm-metal plugin on MLX
# (docs.vllm.ai/projects/vllm-metal: dense GGUF Q8_0/Q4_0/Q4_1, no MoE, no k-quants), whose memory is not modelled.
ENGINE_BACKENDS = {
    "llama.cpp": frozenset({"cuda", "rocm", "metal", "vulkan", "sycl", "cann", "other"}),
    "vllm": frozenset({"cuda", "rocm", "sycl", "cann", "other"}),
}


# Accelerators of the "other" backend that ggml has no backend for, so llama.cpp does not run on them at all.
# ggml's backends (ggml CMakeLists ggml_add_backend, 2026-08: BLAS, CANN, CUDA, HIP, Metal, MUSA, SYCL, Vulkan,
# OpenCL, WebGPU, RPC, ...; llama.cpp README "Supported backends") include none for Intel Gaudi's HPUs, Cambricon's
# MLUs (BANG) or Kunlunxin's XPUs (llama.cpp issue #18274, open), and MetaX's MACA backend is an open pull request
# (llama.cpp #22212, not merged). Moore Threads GPUs run llama.cpp through ggml-musa. A visitor's own "other"
# accelerator of another vendor is not restricted: nothing is published either way. Vendors are compared
# case-folded (vendor_is_one_of): a visitor's "my hardware" copy may spell them in any case.
LLAMA_CPP_WITHOUT_BACKEND_VENDORS = frozenset({"cambricon", "kunlunxin", "metax"})
LLAMA_CPP_WITHOUT_BACKEND_ARCHITECTURES = ("gaudi",)  # prefixes: gaudi2, gaudi3


def vendor_is_one_of(hardware: HardwareSpec, casefolded_vendors: frozenset[str]) -> bool:
    return hardware.vendor.strip().casefold() in casefolded_vendors


def engine_runs_on(engine: str, hardware: HardwareSpec) -> bool:
    """Whether the engine is sized on the accelerator's backend (ENGINE_BACKENDS; False for vLLM on Apple GPUs)
    and, for llama.cpp, whether ggml has a backend for it at all (LLAMA_CPP_WITHOUT_BACKEND_*)."""
    if hardware.backend not in ENGINE_BACKENDS.get(engine, frozenset()):
        return False
    if engine == "llama.cpp" and hardware.backend == "other":
        return not (vendor_is_one_of(hardware, LLAMA_CPP_WITHOUT_BACKEND_VENDORS)
                    or hardware.architecture.startswith(LLAMA_CPP_WITHOUT_BACKEND_ARCHITECTURES))
    return True


def engines_on(hardware: HardwareSpec) -> tuple[str, ...]:
    """The engines that run on this accelerator, in ENGINES' order (llama.cpp first)."""
    return tuple(engine for engine in ENGINES if engine_runs_on(engine, hardware))


def default_engine(hardware: HardwareSpec) -> str:
    """The engine a page on this accelerator opens with: llama.cpp, which runs every GGUF format from one file,
    unless it has no backend there (Gaudi, Cambricon, Kunlunxin, MetaX: vLLM through their builds)."""
    for engine in ENGINES:  # the first of engines_on, without asking the others (a page asks this ~75 times)
        if engine_runs_on(engine, hardware):
            return engine
    return ENGINES[0]


# The weight format of a model's released checkpoint (ModelSpec.native_dtype), as --quant names it; an FP32 release
# is served in BF16.
NATIVE_FORMAT = {"bf16": "BF16", "fp16": "FP16", "fp32": "BF16", "fp8": "FP8", "mxfp4": "MXFP4", "fp8_fp4": "FP8_FP4"}
DEFAULT_QUANT = Scenario.quant  # Q4_K_M: the GGUF most people download
LLAMA_CPP_FALLBACK_QUANTS = ("Q4_0", "Q8_0", "F16")  # where a backend runs few formats, the nearest to Q4_K_M first


def native_format(model: ModelSpec) -> str:
    return NATIVE_FORMAT.get(model.native_dtype, "BF16")


# The GGUF file type that keeps a release's own precision: convert_hf_to_gguf.py writes gpt-oss's MXFP4 experts as
# they are, and llama-quantize names that file type MXFP4_MOE (llama.cpp ftype 38: routed experts MXFP4, other
# matrices Q8_0; there is no plain MXFP4 file type); a 16-bit release becomes an F16 GGUF (--outtype f16) or a BF16
# one (--outtype bf16, ftype MOSTLY_BF16), so BF16 keeps its name.
GGUF_OF_NATIVE_FORMAT = {"MXFP4": "MXFP4_MOE", "FP16": "F16"}
GGUF_NATIVE_NAMES = frozenset({"BF16"})  # formats of a release that are llama.cpp file types under the same name


def native_format_on(model: ModelSpec, engine: str) -> str:
    """The released checkpoint's format as the engine loads it: under llama.cpp its GGUF counterpart, if it has
    one (GGUF_OF_NATIVE_FORMAT)."""
    native = native_format(model)
    return GGUF_OF_NATIVE_FORMAT.get(native, native) if engine == "llama.cpp" else native


def default_quant(model: ModelSpec, hardware: HardwareSpec | None, engine: str) -> str:
    """The format a configuration opens with when it names none. llama.cpp: Q4_K_M, the GGUF most people download,
    or where its backend runs few formats (CANN) Q4_0, Q8_0 or F16, the first it runs. vLLM: the released
    checkpoint's format where vLLM has kernels for it there (what `vllm serve <repo>` loads; its GGUF loading is
    experimental and has no DeepSeek-V4 or gpt-oss mapping), else BF16 or FP16 (an FP8 or MXFP4 release on a vendor
    build, the 310P's FP16-only vllm-ascend), else the released format, which the page marks as not running.
    Without an accelerator (the compare page) only the model's own limits apply."""
    def runs(quant: str) -> bool:
        return hardware is None or format_runs_on(engine, quant, hardware, model)

    if engine == "vllm":
        native = native_format(model)
        return next((quant for quant in (native, "BF16", "FP16") if runs(quant)), native)
    if engine == "llama.cpp" and not runs(DEFAULT_QUANT):
        # llama.cpp's CANN backend runs F16, Q8_0 and Q4_0 (F16 only on the 310P): the nearest to Q4_K_M.
        return next((quant for quant in LLAMA_CPP_FALLBACK_QUANTS if runs(quant)), DEFAULT_QUANT)
    published = model.gguf_repo_quants
    if engine == "llama.cpp" and published and DEFAULT_QUANT not in published:
        # The catalog's GGUF repository has no Q4_K_M (ggml-org's gpt-oss repos publish MXFP4_MOE only): its file.
        return next((quant for quant in published if runs(quant)), DEFAULT_QUANT)
    return DEFAULT_QUANT


def default_kv_dtype(model: ModelSpec, engine: str) -> str:
    """The KV-cache type a configuration opens with when it names none: F16, except DeepSeek-V4 under vLLM, which
    caches only in its FP8 layout (kv_cache._vllm_dsv4_kv_dtype)."""
    return "fp8" if engine == "vllm" and model.compressed_attention is not None else Scenario.kv_dtype


@lru_cache(maxsize=4096)  # a page opens ~50 links on the defaults of their model × accelerator
def default_engine_for(model: ModelSpec, hardware: HardwareSpec) -> str:
    """The engine a page of this model on this accelerator opens with: default_engine, or vLLM where llama.cpp runs
    no GGUF of the model there (its MXFP4 experts on CANN: gguf_experts_run_on)."""
    engine = default_engine(hardware)
    if (engine == "llama.cpp" and not gguf_experts_run_on(model, hardware) and engine_runs_on("vllm", hardware)
            and kv_cache_known(model)):
        return "vllm"
    return engine


def default_scenario(model: ModelSpec, hardware: HardwareSpec | None, engine: str | None = None) -> Scenario:
    """The configuration a page of this model on this accelerator opens with (default_engine, default_quant,
    default_kv_dtype; Scenario's defaults otherwise); hardware None: any accelerator (llama.cpp unless named)."""
    if engine is None and hardware is not None:
        engine = default_engine_for(model, hardware)
    engine = engine or ENGINES[0]
    return Scenario(quant=default_quant(model, hardware, engine), kv_dtype=default_kv_dtype(model, engine),
                    engine=engine)  # type: ignore[arg-type]  # one of ENGINES


def check_engine_runs_on(engine: str, hardware: HardwareSpec) -> None:
    """SizingError naming the engine that does run there when engine_runs_on is False."""
    if not engine_runs_on(engine, hardware):
        # Every accelerator runs one of the two: llama.cpp is missing only where vLLM's builds run (Gaudi, vendors).
        other = default_engine(hardware)
        raise SizingError(f"--engine {engine}: {engine} does not run on {hardware.name} ({hardware.backend}); "
                          f"choose {other}", code="engine_not_on_backend",
                          params={"engine": engine, "hardware": hardware.name, "other": other})


def fitting_plan(model: ModelSpec, hardware: HardwareSpec, scenario: Scenario) -> MemoryPlan | None:
    """The memory plan when the scenario runs without automatic offload (any verdict but "exceeds"), else None
    (also when the engine cannot run on this backend or cannot split the model over this GPU count)."""
    return plan_memory(model, hardware, scenario) if fits(model, hardware, scenario) else None


def fits(model: ModelSpec, hardware: HardwareSpec, scenario: Scenario) -> bool:
    """Whether the scenario runs on ``scenario.gpus`` × ``hardware`` without automatic offload: the verdict of
    plan_memory is not "exceeds", i.e. the largest GPU's demand is within its usable memory (fit.verdict_for).

    Searches over the catalog ("the smallest accelerator that holds it", "which cloud offers fit") ask this of
    dozens of accelerators per configuration. The hardware-independent floor of ``gpu_demand_floor_bytes`` rejects
    the ones that are too small with one cached lookup; the others share the demand of every accelerator with the
    same ``_demand_traits`` (one plan per kind of accelerator, not per accelerator).
    """
    card = _fit_traits(hardware, scenario.engine)
    if card is None or not format_runs_on(scenario.engine, scenario.quant, hardware, model):
        return False
    if scenario.gpu_memory_utilization > card.share_refused_above:  # vllm_memory_share_refused
        return False  # the share is refused on this accelerator alone: the demand shared by its kind says nothing
    if card.vllm_gaudi:
        # vllm-gaudi's usable memory depends on the weights (runtime._vllm_hpu_runtime): no shared shortcut.
        try:
            return plan_memory(model, hardware, scenario).fit.verdict != "exceeds"
        except SizingError:
            return False
    usable = card.usable_bytes if card.usable_bytes is not None else engine_usable_bytes(hardware, scenario)
    at_memory = memory_scenario(scenario)
    if _gpu_demand_floor_bytes(model, at_memory) > usable:  # gpu_demand_floor_bytes
        return False
    demand = _largest_gpu_demand(model, at_memory, card.demand_key)
    if demand is None:
        return False
    if demand.fullest_bytes <= usable:
        return True
    # The even -ts exceeds this accelerator; an -ts by the layers' sizes may still hold it, and then the plan's
    # verdict is on that split's fullest GPU, whose bytes depend on this accelerator's memory (fit._balanced_split):
    # only its own plan says. Where no such split holds it, the plan moves layers to system RAM: "exceeds".
    return (demand.layer_split is not None and layer_split_holds(demand.layer_split, scenario.gpus, usable)
            and plan_memory(model, hardware, scenario).fit.verdict != "exceeds")


@dataclass(frozen=True)
class _FitTraits:
    """What ``fits`` reads of an accelerator under an engine that runs there, one lookup for its ~90 calls a page."""

    share_refused_above: float  # vLLM's --gpu-memory-utilization refused above this (_vllm_refused_above); llama.cpp: ∞
    vllm_gaudi: bool  # vllm-gaudi sizes its memory by the weights: a plan of its own
    usable_bytes: float | None  # engine_usable_bytes; None under vLLM, whose budget is the scenario's share
    demand_key: _Traits


@lru_cache(maxsize=1024)
def _fit_traits(hardware: HardwareSpec, engine: str) -> _FitTraits | None:
    """None when the engine does not run on the accelerator (engine_runs_on)."""
    if not engine_runs_on(engine, hardware):
        return None
    if engine == "vllm":
        return _FitTraits(_vllm_refused_above(hardware), vllm_platform(hardware) == "intel-gaudi", None,
                          _demand_key(hardware, engine))
    return _FitTraits(math.inf, False, usable_bytes(hardware), _demand_key(hardware, engine))


def gpu_demand_bytes(model: ModelSpec, hardware: HardwareSpec, scenario: Scenario) -> float | None:
    """What the fullest GPU must hold before automatic offload (fit.Placement.demand_per_gpu) with llama.cpp's even
    -ts, on any amount of memory, which ``fits`` compares with engine_usable_bytes first; None when the engine
    cannot plan the scenario (e.g. a tensor-parallel split it refuses). Shared by every accelerator with the same
    ``_demand_traits``."""
    demand = _largest_gpu_demand(model, memory_scenario(scenario), _demand_key(hardware, scenario.engine))
    return None if demand is None else demand.fullest_bytes


@lru_cache(maxsize=1024)  # the accelerator's own traits: every fit on it under the engine asks them
def _demand_key(hardware: HardwareSpec, engine: str) -> _Traits:
    return _Traits(_demand_traits(hardware, engine), hardware)


def _demand_traits(hardware: HardwareSpec, engine: str) -> tuple:
    """What of an accelerator the GPUs' demand (fit.Placement.demand_per_gpu: before automatic offload) depends
    on; the rest is the model and the scenario. llama.cpp: the backend (device context, runtime.py) and unified
    memory (the host-side pieces share the pool, fit.place_llama_cpp). vLLM also the scheduler defaults it picks by
    the GPU's memory and name (runtime.vllm_scheduler_defaults: activation peak and CUDA-graph pool), and whether it
    runs DeepSeek-V4's attention (VLLM_DSV4_UNSUPPORTED_CUDA_ARCHITECTURES), how its MoE kernel pads MXFP4
    experts (parallelism.vllm_mxfp4_expert_padding) and whether vllm-gaudi runs it (a runtime of its own). The
    usable memory is compared afterwards.
    tests/test_fitting_plan.py checks this against every plan of the grid."""
    unified = hardware.kind == "unified"
    if engine == "vllm":
        # The architecture only as far as vLLM refuses DeepSeek-V4 on it or pads MXFP4 experts for it (_plan_vllm).
        return (hardware.backend, unified, vllm_scheduler_defaults(reported_memory_bytes(hardware), hardware.name),
                vllm_lacks_compressed_attention(hardware),
                vllm_mxfp4_expert_padding(hardware.backend, hardware.architecture),
                vllm_platform(hardware) == "intel-gaudi")
    return (hardware.backend, unified)


@dataclass(frozen=True)
class _Traits:
    """A cache key that compares by an accelerator's demand traits and carries one accelerator to plan with."""

    traits: tuple
    hardware: HardwareSpec = field(compare=False, hash=False)


@dataclass(frozen=True)
class _GpuDemand:
    """The GPUs' demand shared by the accelerators with the same ``_demand_traits``: independent of their memory."""

    fullest_bytes: float  # the fullest GPU's demand before automatic offload, llama.cpp's layers split evenly
    # llama.cpp on several GPUs, automatic offload: where the even split exceeds, place_llama_cpp tries an -ts by
    # the layers' sizes first (fit.layer_split_holds), whose fullest GPU is what the verdict then judges.
    layer_split: LlamaCppDemand | None


@lru_cache(maxsize=8192)
def _largest_gpu_demand(model: ModelSpec, scenario: Scenario, key: _Traits) -> _GpuDemand | None:
    hardware = key.hardware
    try:
        if scenario.engine == "vllm":
            if vllm_platform(hardware) == "intel-gaudi":  # its runtime reads the weights and the memory
                plan = plan_memory(model, hardware, scenario)
                return _GpuDemand(max(plan.placement.demand_per_gpu, default=0.0), None)
            # Like llama.cpp's below: what the fit weighs, without the plan of a stand-in accelerator.
            return _GpuDemand(_vllm_gpu_demand(model, hardware, scenario), None)
        # llama.cpp: the GPUs' demand is the placement's before automatic offload, which place_llama_cpp makes on
        # unbounded memory without searching what to move (the search is most of a plan, and the accelerator a kind
        # is first asked on is often too small: the searches go up from the smallest); an explicit --offload-pct
        # and unified memory place the same on any memory. No verdict, no plan.
        include_mtp = includes_mtp(model, scenario)
        weights = weight_bytes(model, scenario.quant, include_mtp=include_mtp)
        *_, layout, demand = _llama_cpp_parts(model, hardware, scenario, weights, include_mtp)
        unified = hardware.kind == "unified"
        placement = place_llama_cpp(demand, gpus=scenario.gpus, usable_per_gpu=math.inf, unified=unified,
                                    offload_pct=scenario.offload_pct)
    except SizingError:
        return None  # e.g. vLLM cannot split the heads over this GPU count (the same for every accelerator)
    splits_by_size = not layout.estimated and scenario.gpus > 1 and scenario.offload_pct is None and not unified
    return _GpuDemand(max(placement.demand_per_gpu, default=0.0), demand if splits_by_size else None)


def gpu_demand_floor_bytes(model: ModelSpec, scenario: Scenario) -> float:
    """A lower bound of the largest GPU's demand (fit.Placement.demand_per_gpu) on any accelerator.

    The GPUs hold at least the weights less llama.cpp's host-side input embedding (vLLM keeps it on the GPUs and
    replicates more under tensor parallelism) plus the KV cache of the scenario; the largest GPU holds at least
    the average. Runtime buffers, which depend on the accelerator, only add to it. An explicit --offload-pct under
    vLLM moves that share of each rank's weights, so it is subtracted whole; under llama.cpp it moves whole layers
    (fit._explicit_llama_cpp), so the same placement is made without any accelerator's buffers and what it leaves
    on the GPUs is the bound. The automatic offload of llama.cpp does not lower the demand: the verdict is taken
    before it. tests/test_fitting_plan.py checks the bound against the plans of the catalog grid.
    """
    return _gpu_demand_floor_bytes(model, memory_scenario(scenario))


@lru_cache(maxsize=4096)
def _gpu_demand_floor_bytes(model: ModelSpec, scenario: Scenario) -> float:
    include_mtp = includes_mtp(model, scenario)
    weights = weight_bytes(model, scenario.quant, include_mtp=include_mtp)
    # vLLM's sliding-window pages grow with the scheduler's token budget, whose default depends on the accelerator:
    # the smallest default bounds them from below.
    smallest_budget = (scenario.max_num_batched_tokens or min(VLLM_SMALL_GPU_DEFAULTS[1], VLLM_LARGE_GPU_DEFAULTS[1])
                       if scenario.engine == "vllm" else None)
    try:
        kv = _kv_or_none(model, scenario, max_num_batched_tokens=smallest_budget)
    except SizingError:
        kv = None  # plan_memory refuses the scenario with the message
    kv_bytes = 0.0 if kv is None else kv.total_bytes
    if scenario.engine == "llama.cpp" and scenario.offload_pct:
        layout = llama_cpp_layout(model, scenario.quant, total_bytes=weights.total_bytes, include_mtp=include_mtp,
                                  active_bytes=weights.active_bytes_per_token)
        bare = LlamaCppDemand(layout, _kv_per_block(model, kv, layout), 0.0, 0.0)  # no accelerator's buffers
        placed = place_llama_cpp(bare, gpus=1, usable_per_gpu=math.inf, unified=False,
                                 offload_pct=scenario.offload_pct)
        return placed.device_bytes[0] / max(scenario.gpus, 1)
    moved = (scenario.offload_pct or 0.0) / 100 * weights.total_bytes
    if scenario.engine == "vllm":
        kv_bytes /= scenario.batch  # vLLM's fit holds one sequence and queues the rest (_plan_vllm)
    on_gpus = weights.total_bytes - weights.embedding_bytes - moved + kv_bytes
    return max(on_gpus, 0.0) / max(scenario.gpus, 1)


def includes_mtp(model: ModelSpec, scenario: Scenario) -> bool:
    """Whether the weights include the MTP block: llama.cpp's GGUF keeps it for these architectures."""
    return scenario.engine == "llama.cpp" and model.architecture in GGUF_KEEPS_MTP_ARCHITECTURES


_SPEED_ONLY_DEFAULTS = {"depth": Scenario.depth, "prompt": Scenario.prompt, "system_ram_bandwidth_gbs": None}
_SPEED_ONLY_FIELDS = attrgetter(*_SPEED_ONLY_DEFAULTS)
_SPEED_ONLY_DEFAULT_VALUES = tuple(_SPEED_ONLY_DEFAULTS.values())


def memory_scenario(scenario: Scenario) -> Scenario:
    """The scenario as memory sees it: the cached depth, the prompt length and the host RAM's bandwidth set speeds
    (throughput.py) and never a byte of the plan (no module of weights, kv_cache, runtime or fit reads them), so the
    plans of one configuration at different depths (the speed cards at the visitor's --depth, the cost priced at
    half the context) are one plan, computed once. tests/test_fitting_plan.py checks that they are equal."""
    # One tuple comparison: a page asks this of ~250 scenarios, most of them already at the defaults.
    if _SPEED_ONLY_FIELDS(scenario) == _SPEED_ONLY_DEFAULT_VALUES:
        return scenario
    return scenario_with(scenario, **_SPEED_ONLY_DEFAULTS)


def plan_memory(model: ModelSpec, hardware: HardwareSpec, scenario: Scenario) -> MemoryPlan:
    """Weights, KV, runtime, placement and verdict. SizingError for scenarios the engine cannot run."""
    return _plan_memory(model, hardware, memory_scenario(scenario))


@lru_cache(maxsize=8192)
def _plan_memory(model: ModelSpec, hardware: HardwareSpec, scenario: Scenario) -> MemoryPlan:
    check_engine_runs_on(scenario.engine, hardware)
    include_mtp = includes_mtp(model, scenario)
    weights = weight_bytes(model, scenario.quant, include_mtp=include_mtp)
    if scenario.engine == "vllm":
        plan = _plan_vllm(model, hardware, scenario, weights)
    else:
        plan = _plan_llama_cpp(model, hardware, scenario, weights, include_mtp)
    return (plan if format_runs_on(scenario.engine, scenario.quant, hardware, model)
            else replace(plan, format_runs=False))


# llama.cpp's CANN backend (Ascend NPUs): "CANN backend only supports FP16/Q4_0/Q8_0 models currently", and the
# 310P (Atlas 300I Duo) F16 and F32 ("2024.11: Support F16 and F32 data type model for Ascend 310P NPU"), both in
# github:ggml-org/llama.cpp docs/backend/CANN.md.
CANN_LLAMA_CPP_FORMATS = frozenset({"F16", "F32", "Q8_0", "Q4_0"})
CANN_310P_LLAMA_CPP_FORMATS = frozenset({"F16", "F32"})
# vllm-ascend on the 310P (Atlas 300I series): "Currently, the 310I series only supports eager mode and the float16
# data type" (docs.vllm.ai/projects/ascend v0.11.0, tutorials/single_node_300i).
CANN_310P_VLLM_FORMATS = frozenset({"FP16"})
# vllm-ascend on the Atlas A2/A3 parts (Ascend 910B, 910C): the 16-bit checkpoints and AWQ ("resolved in the latest
# version", vllm-ascend issue #4378, 2026-06-11). No FP8 ("for FP8 you will need the A5, for A2/A3 it's a no go",
# issue #1526, 2026-05-26; MXFP4 likewise only on the Ascend 950, issue #11216), no GGUF ("gguf is not the high
# priority one now, since llama.cpp support it on Ascend", roadmap issue #5318, 2026-01-22) and no GPTQ (PR #6603
# closed unmerged; "No specific support plan is available", issue #6974, 2026-05-28). Its own ModelSlim W8A8/W4A8
# checkpoints are no catalog format.
CANN_VLLM_FORMATS = frozenset({"BF16", "FP16", "AWQ"})


# vLLM's quantization kernels by platform, from its table "Supported Hardware" (docs.vllm.ai/en/v0.14.0/features/
# quantization/): AMD GPUs have no AWQ or GPTQ kernels; Intel GPUs no GGUF. Intel Gaudi runs vLLM through the
# vllm-gaudi plugin, whose quantization backends are INC (FP8 weights and KV cache after a calibration run), AutoAWQ
# and GPTQModel (vllm-gaudi docs/configuration/quantization/quantization.md, 2026-08): no GGUF, and no MXFP4 or FP4
# experts (its validated gpt-oss checkpoints are the BF16 ones, lmsys/gpt-oss-*-bf16, docs/getting_started/
# validated_models.md). The upstream table's ❌ for Gaudi's AWQ, GPTQ and FP8 predates the plugin. The table's
# "FP8 (W8A8) ❌" for Intel GPUs is
# FP8 compute: FP8 weights run there ("Mixed precision support for BF16, FP16, INT4 and FP8 vLLM recipes", FP8
# models on 8 × Arc Pro B60 in its Figure 1: Intel vLLM team, blog.vllm.ai 2025-11-11 "Fast and Affordable LLMs
# serving on Intel Arc Pro B-Series GPUs with vLLM"). NVIDIA GPUs from Ampere on run all of them: Ampere runs FP8
# checkpoints as weight-only W8A16 ("FP8 models will run on compute capability >= 7.5 (Turing) as weight-only
# W8A16, utilizing FP8 Marlin", the FP8 W8A8 page). "GGUF" stands for every GGUF type. Formats the table has no
# row for (MXFP4, FP8_FP4) are left to the checks of their own.
VLLM_QUANT_TABLE_SOURCE = "docs.vllm.ai/en/v0.14.0/features/quantization/ (Supported Hardware)"
VLLM_GAUDI_QUANT_SOURCE = "vllm-gaudi docs/configuration/quantization/quantization.md: INC, AutoAWQ, GPTQModel"
VLLM_FORMATS_WITHOUT_KERNELS = {
    "amd-gpu": frozenset({"AWQ", "GPTQ"}),
    "intel-gpu": frozenset({"GGUF"}),
    "intel-gaudi": frozenset({"GGUF", "MXFP4", "FP8_FP4"}),
}
# Vendors whose accelerators vLLM reaches only through their own build or plugin (vLLM-MLU, vllm-metax, vLLM-Kunlun,
# vLLM-MUSA, Hygon's DTK build): no column of vLLM's quantization table is theirs, and what those builds run beyond
# the 16-bit checkpoint every vLLM build loads is not published, so only that is counted as running there.
VLLM_VENDOR_BUILD_VENDORS = frozenset({"cambricon", "metax", "kunlunxin", "moore threads", "hygon"})  # case-folded
VLLM_SIXTEEN_BIT_FORMATS = frozenset({"BF16", "FP16"})


def vllm_fp8_kv_flag(platform: str | None) -> str:
    """vLLM's FP8 KV cache flag: fp8_inc through Intel Neural Compressor on Gaudi (vllm-gaudi
    docs/configuration/quantization/inc.md), fp8 elsewhere. ``platform``: vllm_platform of the accelerator."""
    return "--kv-cache-dtype fp8_inc" if platform == "intel-gaudi" else "--kv-cache-dtype fp8"


@lru_cache(maxsize=1024)  # asked several times per fit (formats, memory share, vllm-gaudi's plan)
def vllm_platform(hardware: HardwareSpec) -> str | None:
    """The column of vLLM's quantization table the accelerator is in ("vendor-build" for a catalog vendor that has
    none); None for the platforms whose formats are checked elsewhere (NVIDIA, Ascend: backend_formats) and for
    hardware the catalog does not know (a visitor's own "other" accelerator: nothing is published either way)."""
    if vendor_is_one_of(hardware, VLLM_VENDOR_BUILD_VENDORS):
        return "vendor-build"
    if hardware.backend == "rocm":
        return "amd-gpu"
    if hardware.backend == "sycl":
        return "intel-gpu"
    if hardware.backend == "other" and hardware.architecture.startswith("gaudi"):
        return "intel-gaudi"
    return None


@lru_cache(maxsize=4096)  # ~90 a page: every vLLM fit and plan asks it
def vllm_runs_format(quant: str, hardware: HardwareSpec) -> bool:
    """Whether vLLM has kernels for the weight format on this accelerator's platform (vllm_platform)."""
    platform = vllm_platform(hardware)
    if platform is None:
        return True
    try:
        fmt = quant_format(quant)
    except SizingError:
        return True  # an unknown format is refused by validate_scenario with its own message
    if platform == "vendor-build":
        return fmt.name in VLLM_SIXTEEN_BIT_FORMATS
    names = {"GGUF"} if fmt.family in ("gguf", "gguf-dynamic") else {fmt.name}
    if fmt.name == "FP8_FP4":
        names.add("FP8")  # FP8 attention and dense layers beside its FP4 experts: refused wherever FP8 is
    return not names & VLLM_FORMATS_WITHOUT_KERNELS[platform]


def backend_formats(engine: str, hardware: HardwareSpec) -> frozenset[str] | None:
    """The only weight formats the engine's backend runs on this accelerator; None when it runs every format."""
    if hardware.backend != "cann":
        return None
    if engine == "vllm":
        return CANN_310P_VLLM_FORMATS if hardware.architecture == "ascend-310p" else CANN_VLLM_FORMATS
    return CANN_310P_LLAMA_CPP_FORMATS if hardware.architecture == "ascend-310p" else CANN_LLAMA_CPP_FORMATS


# llama.cpp's CANN backend multiplies F16, F32, Q8_0 and Q4_0 weights only (Q8_0 and Q4_0 not on the 310P):
# ggml_backend_cann_supports_op, cases GGML_OP_MUL_MAT and GGML_OP_MUL_MAT_ID, github:ggml-org/llama.cpp
# ggml/src/ggml-cann/ggml-cann.cpp. A model released with MXFP4 experts (gpt-oss, Kimi K3) keeps them in MXFP4 in
# every GGUF, F16 and Q8_0 included (quant.GgufModelFacts.experts_stay_mxfp4): the backend has no kernel for them,
# and llama.cpp would keep those weights in system RAM and multiply them on the CPU, which no plan here models.
LLAMA_CPP_CANN_EXPERT_TYPES_SOURCE = "ggml/src/ggml-cann/ggml-cann.cpp ggml_backend_cann_supports_op (MUL_MAT_ID)"


def gguf_experts_run_on(model: ModelSpec, hardware: HardwareSpec) -> bool:
    """Whether llama.cpp's backend on this accelerator multiplies the routed experts of the model's GGUF files:
    False for MXFP4 experts (kept in every GGUF) on CANN."""
    return not (hardware.backend == "cann" and model.native_dtype == "mxfp4" and model.moe is not None)


def format_runs_on(engine: str, quant: str, hardware: HardwareSpec, model: ModelSpec | None = None) -> bool:
    """Whether the engine's backend on this accelerator runs the weight format (backend_formats; for vLLM also
    vllm_runs_format); with `model`, also whether llama.cpp's backend runs the tensor types its GGUF of that format
    holds (gguf_experts_run_on)."""
    if model is not None and engine == "llama.cpp" and not gguf_experts_run_on(model, hardware):
        return False
    if engine == "vllm" and not vllm_runs_format(quant, hardware):
        return False
    formats = backend_formats(engine, hardware)
    if formats is None:
        return True
    try:
        name = quant_format(quant).name  # the canonical name ("f16" on the command line is F16)
    except SizingError:
        return True  # an unknown format is refused by validate_scenario with its own message
    return name in formats


def kv_cache_known(model: ModelSpec) -> bool:
    """Whether the KV cache can be sized: the model's shapes, or a sourced family member's."""
    return model.has_shapes or model.kv_proxy is not None


def sizable_on(model: ModelSpec, hardware: HardwareSpec) -> bool:
    """Whether an engine modelled here sizes the model on this accelerator: llama.cpp estimates without layer
    shapes but has no backend everywhere (engine_runs_on); vLLM runs there but needs the shapes (kv_cache_known)."""
    return engine_runs_on("llama.cpp", hardware) or kv_cache_known(model)


def _kv_or_none(model: ModelSpec, scenario: Scenario, *, max_num_batched_tokens: int | None = None
                ) -> KvBreakdown | None:
    if not kv_cache_known(model):
        return None
    return kv_cache(model, scenario, max_num_batched_tokens=max_num_batched_tokens)


def _speed_gpus(scenario: Scenario) -> int:
    """The GPUs the speed model shares one token's reads among: llama.cpp's (its layer split takes turns, which
    throughput's "layer" parallelism models) and, under vLLM, one tensor-parallel group, since its pipeline stages
    take turns too (vllm_parallel_sizes)."""
    return vllm_parallel_sizes(scenario.gpus)[0] if scenario.engine == "vllm" else scenario.gpus


def vllm_max_num_batched_tokens(hardware: HardwareSpec, scenario: Scenario) -> int:
    """The scheduler's token budget on this accelerator: the scenario's, else `vllm serve`'s default there
    (runtime.vllm_scheduler_defaults: 8192 from 70 GiB, 2048 below). It sizes the sliding-window layers' pages
    (SlidingWindowSpec.max_memory_usage_bytes: window − 1 + max_num_batched_tokens tokens per request)."""
    return scenario.max_num_batched_tokens or vllm_scheduler_defaults(reported_memory_bytes(hardware),
                                                                       hardware.name)[1]


def _plan_llama_cpp(model: ModelSpec, hardware: HardwareSpec, scenario: Scenario, weights: WeightBreakdown,
                    include_mtp: bool) -> MemoryPlan:
    gpus = scenario.gpus
    kv, runtime, layout, demand = _llama_cpp_parts(model, hardware, scenario, weights, include_mtp)
    usable = engine_usable_bytes(hardware, scenario)
    placement = place_llama_cpp(demand, gpus=gpus, usable_per_gpu=usable, unified=hardware.kind == "unified",
                                offload_pct=scenario.offload_pct)
    runtime_bytes = runtime.device_bytes * gpus + runtime.host_bytes + tied_output_copy_bytes(layout, placement)
    kv_bytes = kv.total_bytes if kv is not None else 0.0
    required = weights.total_bytes + kv_bytes + runtime_bytes
    fit = assess_fit(placement, required_bytes=required, hardware=hardware, gpus=gpus, usable_per_gpu=usable)
    return MemoryPlan(weights, include_mtp, None, layout, kv, runtime, weights.total_bytes, runtime_bytes, fit)


def _llama_cpp_parts(model: ModelSpec, hardware: HardwareSpec, scenario: Scenario, weights: WeightBreakdown,
                     include_mtp: bool
                     ) -> tuple[KvBreakdown | None, RuntimeBreakdown, LlamaCppLayout, LlamaCppDemand]:
    """The KV cache, runtime buffers and layer layout of a llama.cpp plan, and what fit.place_llama_cpp places: the
    blocks with their KV, the buffers on each GPU and the host's. Of the accelerator only its backend is read (the
    runtime's device context): _demand_traits."""
    kv = _kv_or_none(model, scenario)
    runtime = runtime_memory(model, scenario, weights_bytes_per_gpu=weights.total_bytes / scenario.gpus,
                             kv=kv,  # type: ignore[arg-type]  # llama.cpp's buffers do not read it
                             hardware_memory_bytes=reported_memory_bytes(hardware), hardware_name=hardware.name,
                             backend=hardware.backend)
    layout = llama_cpp_layout(model, scenario.quant, total_bytes=weights.total_bytes, include_mtp=include_mtp,
                              active_bytes=weights.active_bytes_per_token)
    demand = LlamaCppDemand(layout, _kv_per_block(model, kv, layout), runtime.device_bytes, runtime.host_bytes)
    return kv, runtime, layout, demand


def tied_output_copy_bytes(layout: LlamaCppLayout | None, placement: Placement) -> float:
    """llama.cpp keeps token_embd in system RAM and copies a tied output head onto the output GPU
    (llama-model.cpp: the output tensor is created as a duplicate of token_embd when the config ties them). With
    the output layer left on the CPU (-ngl up to the block count) the head is the mmapped embedding itself: no copy
    (fit._loads places it so)."""
    if layout is None or not layout.output_is_tied_copy:
        return 0.0
    output_on_gpu = placement.gpu_layers is None or placement.gpu_layers > len(layout.blocks)
    return layout.embedding_bytes if output_on_gpu else 0.0


def _kv_per_block(model: ModelSpec, kv: KvBreakdown | None, layout: LlamaCppLayout) -> tuple[float, ...]:
    """Each block's share of the KV cache (its layer kind's bytes per layer); MTP blocks keep none."""
    if kv is None:
        return (0.0,) * len(layout.blocks)
    if layout.estimated:
        return (kv.total_bytes,)
    per_layer = {term.kind: term.bytes / term.layers for term in kv.terms if term.layers}
    if model.compressed_attention is not None:
        by_mixer = _dsv4_kv_per_layer(kv, per_layer)
    else:
        by_mixer = {
            "full": per_layer.get("full", 0.0) + per_layer.get("mla", 0.0) + per_layer.get("dsa_indexer", 0.0),
            "sliding": per_layer.get("sliding", 0.0),
            "chunked": per_layer.get("chunked", 0.0),
            "linear": per_layer.get("linear", 0.0),
            "mamba": per_layer.get("mamba", 0.0),
            "conv": per_layer.get("conv", 0.0),
            "none": 0.0,
        }
    by_mixer[""] = 0.0  # MTP blocks keep no KV cache
    return tuple(map(by_mixer.__getitem__, _block_mixers(model, len(layout.blocks))))


@lru_cache(maxsize=1024)
def _block_mixers(model: ModelSpec, n_blocks: int) -> tuple[str, ...]:
    """Each llama.cpp block's mixer (parallelism._raw_layout numbers the blocks 0…n-1; MTP blocks past the model's
    layers: "")."""
    layers = model.layers
    return tuple(layers[i].mixer if i < len(layers) else "" for i in range(n_blocks))


def _dsv4_kv_per_layer(kv: KvBreakdown, per_layer: dict[str, float]) -> dict[str, float]:
    """DeepSeek-V4 under llama.cpp: every layer holds its sliding window; CSA layers add the compressed cache, the
    indexer keys and their compressor states, HCA layers the compressed cache and its state (kv_cache.py)."""
    state = kv.term("dsv4_state")
    csa_state = hca_state = 0.0
    if state is not None:
        csa_state = state.inputs["csa_elements"] * DSV4_STATE_BYTES * kv.batch
        hca_state = state.inputs["hca_elements"] * DSV4_STATE_BYTES * kv.batch
    window = per_layer.get("dsv4_window", 0.0)
    return {
        "window": window,
        "csa": window + per_layer.get("csa", 0.0) + per_layer.get("csa_indexer", 0.0) + csa_state,
        "hca": window + per_layer.get("hca", 0.0) + hca_state,
    }


# A larger llama.cpp micro-batch (-ub, with -b at least as large: llama.cpp caps n_ubatch at n_batch, 2048 by
# default, and both at n_ctx) speeds up prompts and grows DeepSeek-V4's compute buffer with the context
# (runtime._dsv4_compute_peak); ggml-org/llama.cpp#27680 ran -ub 4096. The note gives the buffer at that size.
DSV4_LARGE_UBATCH = 4096

# vLLM's DeepSeek-V4 attention backends (0.33.0, models/deepseek_v4): FlashMLA sparse for compute capability 9.x and
# 10.x, FlashInfer for 10.x and 12.x; no backend for the CUDA architectures before Hopper (Ampere 8.0/8.6, Ada 8.9).
VLLM_DSV4_UNSUPPORTED_CUDA_ARCHITECTURES = frozenset({"ampere", "ada", "turing", "volta"})


# The 16- and 32-bit formats vLLM serves unquantized: a MoE model in any other --quant is a quantized MoE.
VLLM_UNQUANTIZED_FORMATS = frozenset({"BF16", "FP16", "FP32"})


def vllm_quantized_moe(model: ModelSpec, quant: str) -> bool:
    """A MoE model served in a quantized format other than an MXFP4 checkpoint's own (runtime.VLLM_QUANTIZED_MOE_*:
    the one such log leaves less KV memory than modelled; gpt-oss's MXFP4 logs agree with the model)."""
    has_moe = model.moe is not None and any(layer.ffn == "moe" for layer in model.layers)
    mxfp4_checkpoint = quant == "MXFP4" and model.checkpoint_quant_method == "mxfp4"
    return has_moe and quant not in VLLM_UNQUANTIZED_FORMATS and not mxfp4_checkpoint


def vllm_lacks_compressed_attention(hardware: HardwareSpec) -> bool:
    """vLLM has no DeepSeek-V4 attention backend for this GPU (VLLM_DSV4_UNSUPPORTED_CUDA_ARCHITECTURES)."""
    return hardware.backend == "cuda" and hardware.architecture in VLLM_DSV4_UNSUPPORTED_CUDA_ARCHITECTURES


def vllm_refuses(model: ModelSpec, hardware: HardwareSpec, scenario: Scenario) -> bool:
    """Whether vLLM refuses the scenario before sizing anything: the checks _plan_vllm raises first (DeepSeek-V4's
    attention and GGUF, the memory share, the tensor-parallel split) and a model without layer shapes. A page links
    many reports at once (its neighbours keep the visitor's state): this answers without planning each one."""
    try:
        validate_scenario(scenario)
        _check_vllm_startup(model, hardware, scenario)
        check_tensor_parallel(model, scenario.gpus, scenario.quant)
    except SizingError:
        return True
    return not kv_cache_known(model)


def _check_vllm_startup(model: ModelSpec, hardware: HardwareSpec, scenario: Scenario) -> None:
    _check_vllm_runs_model(model, hardware, scenario)
    check_vllm_memory_share(hardware, scenario)


def _check_vllm_runs_model(model: ModelSpec, hardware: HardwareSpec, scenario: Scenario) -> None:
    """vLLM's refusals of the model on this kind of accelerator (_demand_traits), not of its memory share."""
    if model.compressed_attention is not None and vllm_lacks_compressed_attention(hardware):
        raise SizingError(f"--engine vllm: vLLM's DeepSeek-V4 attention backends need Hopper or Blackwell GPUs, not "
                          f"{hardware.name} ({hardware.architecture}); choose llama.cpp",
                          code="dsv4_vllm_needs_hopper", params={"hardware": hardware.name})
    if model.compressed_attention is not None and quant_format(scenario.quant).family in ("gguf", "gguf-dynamic"):
        # vllm-gguf-plugin maps no deepseek_v4 model type ("Unknown gguf model_type: deepseek_v4", its issue #114).
        raise SizingError(f"--quant {scenario.quant}: vLLM cannot load DeepSeek-V4 GGUF files; it serves the released "
                          "checkpoint (--quant FP8_FP4)", code="dsv4_vllm_no_gguf", params={"quant": scenario.quant})


def _plan_vllm(model: ModelSpec, hardware: HardwareSpec, scenario: Scenario, weights: WeightBreakdown) -> MemoryPlan:
    _check_vllm_startup(model, hardware, scenario)
    gpus = scenario.gpus
    tp, kv = _vllm_weights_and_kv(model, hardware, scenario, weights)
    unified = hardware.kind == "unified"
    offloaded_per_rank = 0.0 if unified or scenario.offload_pct is None else (
        scenario.offload_pct / 100 * tp.per_rank_bytes)
    share = vllm_memory_share(hardware, scenario)  # unified memory: what the system leaves free
    at_share = scenario if share == scenario.gpu_memory_utilization else scenario_with(
        scenario, gpu_memory_utilization=share)
    runtime = runtime_memory(model, at_share,
                             weights_bytes_per_gpu=tp.per_rank_bytes - offloaded_per_rank, kv=kv,
                             hardware_memory_bytes=reported_memory_bytes(hardware), hardware_name=hardware.name,
                             backend=hardware.backend, hpu=vllm_platform(hardware) == "intel-gaudi")
    # The fit weighs what vLLM sizes its pool from (RuntimeBreakdown.device_bytes_in_kv_budget) and the device
    # context outside it against its budget, gpu_memory_utilization × total, and that context (engine_usable_bytes),
    # so "it starts" here is "its pool holds one request" there; vllm-gaudi's budget is a share of the memory free
    # after loading, which the device context has already left.
    per_rank_runtime = runtime.device_bytes if runtime.unused_bytes else (
        runtime.device_bytes_in_kv_budget + DEVICE_CONTEXT_BYTES.get(hardware.backend, 0))
    placement = _place_vllm(hardware, scenario, tp, kv, per_rank_runtime,
                            None if runtime.capacity is None else runtime.capacity.request_bytes)
    runtime_bytes = runtime.device_bytes * gpus + runtime.host_bytes
    required = tp.all_ranks_bytes + kv.total_bytes + runtime_bytes
    usable = engine_usable_bytes(hardware, scenario)
    if runtime.unused_bytes:
        # vllm-gaudi leaves (1 − utilization) of the memory free after loading unused, not of the total; the rest is
        # its budget (no usable-memory factor on top: the pool it reports is sized from that budget alone).
        usable = reported_memory_bytes(hardware) - runtime.unused_bytes - runtime.graph_reserve_bytes
    fit = assess_fit(placement, required_bytes=required, hardware=hardware, gpus=gpus, usable_per_gpu=usable)
    return MemoryPlan(weights, False, tp, None, kv, runtime, tp.all_ranks_bytes, runtime_bytes, fit)


def _vllm_weights_and_kv(model: ModelSpec, hardware: HardwareSpec, scenario: Scenario, weights: WeightBreakdown
                         ) -> tuple[TensorParallelWeights, KvBreakdown]:
    """One rank's weights and the KV cache of a vLLM plan. Of the accelerator only its MoE kernel's MXFP4 padding
    and the scheduler's token budget are read (_demand_traits)."""
    # The padding is Mxfp4MoEMethod's (quant_method "mxfp4", gpt-oss); an MXFP4 checkpoint in another container
    # (Kimi K3's compressed-tensors mxfp4-pack-quantized) loads through other MoE code, whose padding was not read.
    padding = (vllm_mxfp4_expert_padding(hardware.backend, hardware.architecture)
               if model.checkpoint_quant_method == "mxfp4" else None)
    tp = tensor_parallel_weights(model, scenario.quant, scenario.gpus, total_bytes=weights.total_bytes,
                                 mxfp4_padding=padding)
    kv = _kv_or_none(model, scenario, max_num_batched_tokens=vllm_max_num_batched_tokens(hardware, scenario))
    if kv is None:
        llama_cpp_runs = engine_runs_on("llama.cpp", hardware)
        raise SizingError(f"--engine vllm: {model.name} has no layer shapes and no sourced family member, so "
                          "vLLM's KV pool cannot be sized " + (
                              "(use --engine llama.cpp)" if llama_cpp_runs else
                              f"(and llama.cpp has no backend for {hardware.name}: no engine sizes it there)"),
                          code="vllm_needs_shapes",
                          params={"model": model.name, "hardware": hardware.name, "llama_cpp_runs": llama_cpp_runs})
    return tp, kv


def _place_vllm(hardware: HardwareSpec, scenario: Scenario, tp: TensorParallelWeights, kv: KvBreakdown,
                per_rank_runtime: float, request_bytes: float | None) -> Placement:
    """Every rank holds its weights, one request's KV and its runtime (fit.place_tensor_parallel)."""
    # vLLM starts when its pool holds one request at max_model_len (kv_cache_utils.check_enough_kv_cache_memory);
    # sequences beyond what the pool holds wait in its queue (the vllm_kv_pool_below_batch note, and the aggregate
    # decode runs at the pool's concurrency). So the fit judges one sequence's KV, not --batch of them.
    # The pool hands a request whole blocks (VllmKvCapacity.request_bytes): at least the sequence's KV, more where a
    # hybrid model's padded layer groups take blocks for layers they do not have.
    one_request = kv.per_rank_bytes / scenario.batch
    if request_bytes is not None:
        one_request = max(one_request, request_bytes)
    return place_tensor_parallel(per_rank_weights=tp.per_rank_bytes, per_rank_kv=one_request,
                                 per_rank_runtime=per_rank_runtime, gpus=scenario.gpus,
                                 unified=hardware.kind == "unified", offload_pct=scenario.offload_pct)


def _vllm_gpu_demand(model: ModelSpec, hardware: HardwareSpec, scenario: Scenario) -> float:
    """One rank's demand in _plan_vllm's placement (every rank holds the same), without the plan: its weights, one
    request's blocks and the runtime inside vLLM's budget plus the device context, none of which depends on the
    accelerator's memory beyond _demand_traits (runtime.vllm_start_bytes; the budget sizes only the pool's number
    of blocks). The memory share is refused per accelerator (``fits`` asks first), not here. Not for vllm-gaudi,
    whose runtime reads the weights and the memory (runtime._vllm_hpu_runtime)."""
    _check_vllm_runs_model(model, hardware, scenario)
    tp, kv = _vllm_weights_and_kv(model, hardware, scenario, weight_bytes(model, scenario.quant, include_mtp=False))
    in_budget, request_bytes = vllm_start_bytes(model, scenario, kv=kv,
                                                hardware_memory_bytes=reported_memory_bytes(hardware),
                                                hardware_name=hardware.name, backend=hardware.backend)
    placement = _place_vllm(hardware, scenario, tp, kv, in_budget + DEVICE_CONTEXT_BYTES.get(hardware.backend, 0),
                            request_bytes)
    return max(placement.demand_per_gpu, default=0.0)


# --------------------------------------------------------------------------------------------------------------
# Speed
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _ReadBytes:
    """Bytes one decode token reads, split by where they live (all GPUs summed)."""

    gpu_weights: float
    ram_weights: float
    gpu_kv: float
    ram_kv: float
    resident_weights: float  # weights held in GPU memory (prefill's memory floor)
    resident_experts: float
    routed_experts_total: float  # every routed expert, GPU and RAM, all ranks


def _read_bytes(model: ModelSpec, plan: MemoryPlan, depth: int) -> _ReadBytes:
    share = _expert_read_share(model)
    placement = plan.placement
    if plan.tensor_parallel is not None and plan.tensor_parallel.estimated:
        # Stated parameters only (no tensor list): a token reads the active share, as llama_cpp_layout's pseudo-block
        # has it; the rest is "experts" that no token reads (GLM-5.3 Flash under vLLM read all 298 GiB a token).
        tp = plan.tensor_parallel
        active = min(plan.weights.active_bytes_per_token or tp.all_ranks_bytes, tp.all_ranks_bytes)
        experts, dense, share = tp.all_ranks_bytes - active, active, 0.0
    elif plan.tensor_parallel is not None:
        tp = plan.tensor_parallel
        experts = tp.per_rank_expert_bytes * tp.tp
        lookup = 0.0 if model.tie_word_embeddings else plan.weights.embedding_bytes  # a gather, not a matmul
        dense = tp.all_ranks_bytes - experts - lookup
    else:
        layout = plan.layout
        assert layout is not None
        # The layout's cached per-block tuples (fit._loads reads them too): the same sums, without a generator.
        experts = sum(layout.expert_bytes_by_block)
        dense = sum(layout.other_bytes_by_block) + layout.output_bytes
        if layout.estimated:
            share = 0.0  # the pseudo-block's "experts" are the bytes a token does not read
    kv_read = kv_bytes_read(plan.kv, depth)
    kv_ram_share = placement.offloaded_kv_bytes / plan.kv_bytes if plan.kv_bytes else 0.0
    off_dense, off_experts = placement.offloaded_dense_bytes, placement.offloaded_expert_bytes
    layout = plan.layout
    if (layout is not None and layout.output_is_tied_copy and placement.gpu_layers is not None
            and placement.gpu_layers <= len(layout.blocks)):
        # The output slot is off the GPUs: llama.cpp makes no GPU copy of a tied head and computes the logits on
        # the CPU from the embedding in system RAM (fit._loads leaves it out of the offloaded bytes, which are
        # memory); its per-token read is at system-RAM speed.
        off_dense += layout.output_bytes
    return _ReadBytes(
        gpu_weights=max(0.0, dense - off_dense) + max(0.0, experts - off_experts) * share,
        ram_weights=off_dense + off_experts * share,
        gpu_kv=kv_read * (1 - kv_ram_share),
        ram_kv=kv_read * kv_ram_share,
        resident_weights=max(0.0, dense - off_dense) + max(0.0, experts - off_experts),
        resident_experts=max(0.0, experts - off_experts),
        routed_experts_total=experts if share else 0.0,
    )


def _expert_read_share(model: ModelSpec) -> float:
    moe = model.moe
    return moe.experts_per_token / moe.num_experts if moe else 0.0


def kv_bytes_read(kv: KvBreakdown | None, depth: int) -> float:
    """KV bytes one decode step of one sequence reads with ``depth`` tokens cached (all TP ranks summed):
    growing layers read depth tokens, windowed layers at most their window, recurrent layers their state."""
    if kv is None:
        return 0.0
    ranks = kv.tp if kv.engine == "vllm" else 1
    total = 0.0
    for term in kv.terms:
        if term.padding:
            continue  # blocks of layer slots without a layer: held, never read
        if term.per_sequence:
            total += term.bytes / kv.batch
        else:
            seen = depth if term.window_tokens is None else min(depth, term.window_tokens)
            if term.read_tokens_cap is not None:
                seen = min(seen, term.read_tokens_cap)
            total += term.bytes_per_token_per_layer * term.layers * seen * ranks
    return total


@lru_cache(maxsize=8192)
def _attention_flops(shapes: ModelSpec | None, context: float) -> float:
    """throughput.attention_flops_per_token, cached (it walks every layer; estimates repeat the same context)."""
    return attention_flops_per_token(shapes, context=context) if shapes is not None else 0.0


def _shape_source(model: ModelSpec) -> ModelSpec | None:
    """The spec whose layer shapes stand in for the speed model's per-layer terms."""
    return model if model.has_shapes else model.kv_proxy


@dataclass(frozen=True)
class Speeds:
    decode: DecodeSpeed
    aggregate: AggregateDecode
    prefill: PrefillSpeed


def concurrent_sequences(scenario: Scenario, plan: MemoryPlan) -> int:
    """How many of --batch sequences decode at once: all of them under llama.cpp (-np allocates every slot), as
    many full-context sequences as vLLM's KV pool holds (at least one; the rest wait in its queue)."""
    concurrency = plan.runtime.max_concurrency
    if scenario.engine != "vllm" or concurrency is None:
        return scenario.batch
    return max(1, min(scenario.batch, math.floor(concurrency)))


def offloaded_read_gbs(hardware: HardwareSpec, scenario: Scenario) -> float:
    """How fast a decode step reads the weights kept in system RAM. llama.cpp computes those layers on the CPU,
    which reads them at the RAM's bandwidth. vLLM's --cpu-offload-gb keeps them in pinned host memory that the GPU
    kernels read through unified virtual addressing (vllm/model_executor/models/utils.py, maybe_offload_to_cpu):
    every step they cross each GPU's PCIe host link, and the RAM caps the links together."""
    ram_gbs = scenario.system_ram_bandwidth_gbs or DEFAULT_RAM_BANDWIDTH_GBS
    if scenario.engine == "vllm":
        return min(ram_gbs, host_link_gbs(hardware) * _speed_gpus(scenario))
    return ram_gbs


@dataclass(frozen=True)
class _SpeedInputs:
    """What decode and prefill share: the bytes a token reads and the per-layer terms of the shapes."""

    reads: _ReadBytes
    shapes: ModelSpec | None
    num_layers: int
    moe_layers: int
    parallelism: str
    allreduce: float
    experts_per_token: int
    num_experts: int
    flops: float


def _speed_inputs(model: ModelSpec, scenario: Scenario, plan: MemoryPlan, params: ParameterCount) -> _SpeedInputs:
    shapes = _shape_source(model)
    moe = model.moe
    return _SpeedInputs(
        reads=_read_bytes(model, plan, scenario.depth), shapes=shapes,
        num_layers=shapes.num_layers if shapes is not None else 0, moe_layers=_moe_layer_count(shapes),
        parallelism="tensor" if scenario.engine == "vllm" else "layer",
        allreduce=model.hidden_size * ALLREDUCE_ELEMENT_BYTES,
        experts_per_token=moe.experts_per_token if moe else 0, num_experts=moe.num_experts if moe else 0,
        flops=2 * params.matmul_active)  # the embedding lookup is no matmul (ParameterCount.matmul_active)


@lru_cache(maxsize=1024)
def _moe_layer_count(shapes: ModelSpec | None) -> int:
    return sum(layer.ffn == "moe" for layer in shapes.layers) if shapes is not None else 0


def decode_speeds(model: ModelSpec, hardware: HardwareSpec, scenario: Scenario, plan: MemoryPlan,
                  params: ParameterCount, inputs: _SpeedInputs | None = None) -> tuple[DecodeSpeed, AggregateDecode]:
    """One stream's decode and all concurrent streams' together (what a cost per token needs; no prefill)."""
    i = inputs or _speed_inputs(model, scenario, plan, params)
    reads = i.reads
    offload_gbs = offloaded_read_gbs(hardware, scenario)
    # vLLM's batched decode steps multiply on cuBLAS/CUTLASS like its prefill (throughput.py, "vLLM prefill").
    kernels: dict[str, Any] = {}
    if scenario.engine == "vllm":
        calibration, peaks = _vllm_kernels(hardware, scenario)
        kernels = {"calibration": calibration, "peak_tflops": peaks.gemm}
    decode = _stream_decode(hardware, scenario, i, offload_gbs)
    aggregate = aggregate_decode(
        batch=concurrent_sequences(scenario, plan), weight_bytes_gpu=reads.gpu_weights,
        flops_per_token=i.flops + _attention_flops(i.shapes, scenario.depth),
        hardware=hardware, num_layers=i.num_layers, kv_bytes_read_per_stream=reads.gpu_kv + reads.ram_kv,
        weight_bytes_ram=reads.ram_weights, routed_expert_bytes_total=reads.routed_experts_total,
        experts_per_token=i.experts_per_token, num_experts=i.num_experts, gpus=_speed_gpus(scenario),
        parallelism=i.parallelism, tp_allreduce_bytes_per_token=i.allreduce, ram_bandwidth_gbs=offload_gbs,
        moe_layers=i.moe_layers, **kernels)
    return decode, aggregate


def stream_decode_speed(model: ModelSpec, hardware: HardwareSpec, scenario: Scenario, plan: MemoryPlan,
                        params: ParameterCount) -> DecodeSpeed:
    """One stream's decode alone: decode_speeds without the aggregate of all concurrent streams, which costs as much
    again and which a figure of one stream (the quantization matrix's rows, a recommendation, the model and hardware
    pages' tables) does not read."""
    return _stream_decode(hardware, scenario, _speed_inputs(model, scenario, plan, params),
                          offloaded_read_gbs(hardware, scenario))


def _stream_decode(hardware: HardwareSpec, scenario: Scenario, i: _SpeedInputs, offload_gbs: float) -> DecodeSpeed:
    reads = i.reads
    return decode_speed(
        weight_bytes_gpu=reads.gpu_weights, weight_bytes_ram=reads.ram_weights, kv_bytes_read=reads.gpu_kv,
        kv_bytes_read_ram=reads.ram_kv, hardware=hardware, num_layers=i.num_layers, gpus=_speed_gpus(scenario),
        parallelism=i.parallelism, tp_allreduce_bytes_per_token=i.allreduce,
        ram_bandwidth_gbs=offload_gbs, moe_layers=i.moe_layers)


def _vllm_kernels(hardware: HardwareSpec, scenario: Scenario) -> tuple[BackendCalibration, TensorPeaks]:
    """vLLM's GEMM efficiency and tensor peaks for the scenario's weight format (throughput.py, "vLLM prefill")."""
    return vllm_calibration(hardware), vllm_tensor_peaks(hardware, quant_format(scenario.quant).name)


def estimate_speeds(model: ModelSpec, hardware: HardwareSpec, scenario: Scenario, plan: MemoryPlan,
                    params: ParameterCount) -> Speeds:
    i = _speed_inputs(model, scenario, plan, params)
    decode, aggregate = decode_speeds(model, hardware, scenario, plan, params, i)
    return Speeds(decode, aggregate, _prefill_speed(model, hardware, scenario, plan, params, i))


def _prefill_speed(model: ModelSpec, hardware: HardwareSpec, scenario: Scenario, plan: MemoryPlan,
                   params: ParameterCount, inputs: _SpeedInputs | None = None) -> PrefillSpeed:
    """The prefill of estimate_speeds alone (an offer's prompt price needs no decode at an empty cache)."""
    i = inputs or _speed_inputs(model, scenario, plan, params)
    k, experts = i.experts_per_token, i.num_experts
    mean_context = scenario.depth + scenario.prompt / 2
    # vLLM prefills in chunks of max_num_batched_tokens rows on its own kernels (throughput.py, "vLLM prefill");
    # llama.cpp in micro-batches of -ub rows on the calibrated ones.
    engine_prefill: dict[str, Any] = {"n_ubatch": scenario.n_ubatch}
    if scenario.engine == "vllm":
        chunk = vllm_max_num_batched_tokens(hardware, scenario)
        calibration, peaks = _vllm_kernels(hardware, scenario)
        engine_prefill = {"n_ubatch": chunk, "n_batch": chunk, "calibration": calibration,
                          "peak_tflops": peaks.gemm, "attention_peak_tflops": peaks.attention,
                          "expert_peak_tflops": peaks.experts}
    return prefill_speed(
        flops_per_token=i.flops, prompt=scenario.prompt, hardware=hardware,
        weight_bytes=i.reads.resident_weights, num_layers=i.num_layers,
        attention_flops_per_token=_attention_flops(i.shapes, mean_context),
        routed_expert_flops_per_token=2 * params.routed_experts * (k / experts if experts else 0.0),
        routed_expert_bytes=i.reads.resident_experts, experts_per_token=k, num_experts=experts,
        weight_bytes_ram=plan.placement.offloaded_weight_bytes, gpus=_speed_gpus(scenario), parallelism=i.parallelism,
        tp_allreduce_bytes_per_token=i.allreduce, ram_bandwidth_gbs=scenario.system_ram_bandwidth_gbs,
        **engine_prefill)


# --------------------------------------------------------------------------------------------------------------
# The estimate
# --------------------------------------------------------------------------------------------------------------


def attention_kind(model: ModelSpec) -> str:
    """compressed (DeepSeek-V4 CSA/HCA), mla, hybrid (linear/SSM layers), sliding (mixed windows), gqa, mha or
    mqa; "" when unknown."""
    shapes = _shape_source(model)
    if shapes is None:
        return ""
    mixers = {layer.mixer for layer in shapes.layers}
    if shapes.compressed_attention is not None:
        return "compressed"
    if mixers & {"linear", "mamba", "conv"}:
        return "hybrid"
    if shapes.mla is not None:
        return "mla"
    if mixers & {"sliding", "chunked"}:
        return "sliding"
    if shapes.attention is None:
        return ""
    if shapes.attention.num_kv_heads == 1:
        return "mqa"
    return "mha" if shapes.attention.num_kv_heads == shapes.attention.num_heads else "gqa"


@dataclass(frozen=True)
class Estimate:
    """Every breakdown of one estimate; ``to_contract_json`` is the stable JSON face."""

    model: ModelSpec
    hardware: HardwareSpec
    scenario: Scenario
    params: ParameterCount
    memory: MemoryPlan
    decode: DecodeSpeed
    aggregate_decode: AggregateDecode
    prefill: PrefillSpeed
    cost: ServingCost | None  # the fitting offer where one stream's token costs least (the contract's cost)
    finetune: Mapping[str, FinetuneMemory] | None
    kv_tokens_capacity: int | None
    warnings: tuple[Note, ...]  # notes.py: code, English text, params
    # The fitting offer where a token costs least with scenario.batch streams: at batch 1 the same as ``cost``;
    # with more streams an accelerator whose aggregate speed grows more (a larger KV pool, more bandwidth) can win.
    batch_cost: ServingCost | None = None
    # All scenario.batch streams together on this hardware (with its offload) at cost_depth: what a purchase
    # generates per hour, against which rent vs. buy scales another instance's hours (economics.rent_comparison).
    cost_depth_aggregate_tok_s: float = 0.0

    @property
    def fit(self) -> FitResult:
        return self.memory.fit

    @property
    def experts_refused(self) -> bool:
        """No format of the model runs under this engine here, whatever the format: llama.cpp's backend has no kernel
        for the experts its GGUFs keep (gguf_experts_run_on; the note gguf_experts_not_on_backend says so)."""
        return self.scenario.engine == "llama.cpp" and not gguf_experts_run_on(self.model, self.hardware)

    @property
    def placement(self) -> Placement:
        return self.memory.placement

    @property
    def weights(self) -> WeightBreakdown:
        return self.memory.weights

    @property
    def kv(self) -> KvBreakdown | None:
        return self.memory.kv

    @property
    def runtime(self) -> RuntimeBreakdown:
        return self.memory.runtime

    @property
    def effective_offload_pct(self) -> float:
        """Share of the weights in system RAM (explicit, or what automatic offload moved)."""
        loaded = self.memory.weights_loaded_bytes
        return self.placement.offloaded_weight_bytes / loaded * 100 if loaded else 0.0

    def to_contract_json(self) -> dict[str, Any]:
        """The JSON of docs/estimate-contract.md: memory in GiB (unrounded floats), speeds in tokens/s, USD."""
        model, hardware, scenario, fit = self.model, self.hardware, self.scenario, self.fit
        memory = self.memory
        kv_gib = memory.kv.total_bytes / GIB if memory.kv is not None else None
        return {
            "model": {"slug": model.slug, "name": model.name, "params_total": self.params.total,
                      "params_active": self.params.active, "attention": attention_kind(model)},
            "hardware": {"slug": hardware.slug, "name": hardware.name, "count": scenario.gpus,
                         "memory_gb": hardware.memory_gb, "usable_gib": fit.usable_bytes_per_gpu / GIB,
                         "bandwidth_gbs": hardware.bandwidth_gbs},
            "scenario": {"quant": memory.weights.quant, "context": scenario.context, "batch": scenario.batch,
                         "kv_dtype": memory.kv.kv_dtype if memory.kv is not None else scenario.kv_dtype,
                         "engine": scenario.engine, "offload_pct": self.effective_offload_pct,
                         "depth": scenario.depth, "prompt": scenario.prompt},
            "memory_gib": {"weights": memory.weights_loaded_bytes / GIB, "kv_cache": kv_gib,
                           "runtime": memory.runtime_bytes / GIB,
                           "offloaded": self.placement.offloaded_bytes / GIB,
                           "required": fit.required_bytes / GIB, "per_gpu": self.placement.per_gpu_bytes / GIB},
            "headroom_gib": fit.headroom_bytes / GIB,
            "utilization_pct": fit.utilization_pct,
            "verdict": fit.verdict,
            "decode_tok_s": self.decode.tokens_per_s,
            "aggregate_decode_tok_s": self.aggregate_decode.tokens_per_s,
            "prefill_tok_s": self.prefill.tokens_per_s,
            "ttft_ms": self.prefill.ttft_ms,
            "cost_per_mtok_usd": self.cost.single_stream_usd_per_mtok if self.cost else None,
            "kv_tokens_capacity": self.kv_tokens_capacity,
            "finetune_gib": ({method: memory_.total / GIB for method, memory_ in self.finetune.items()}
                             if self.finetune else {"qlora": None, "lora": None, "full": None}),
            "warnings": [note.text for note in self.warnings],
        }


def estimate(
    model: ModelSpec,
    hardware: HardwareSpec,
    scenario: Scenario,
    *,
    offers: Sequence[CloudOfferSpec] = (),
    hardware_catalog: Sequence[HardwareSpec] = (),
) -> Estimate:
    """Memory, fit, speed, cost and fine-tuning for ``model`` on ``scenario.gpus`` × ``hardware``.

    ``offers``: cloud offers to price the scenario on (of those whose accelerator × count fits, the one with the
    lowest cost per token wins);
    ``hardware_catalog``: the accelerators those offers refer to (looked up by slug; ``hardware`` is always known).
    Raises SizingError (one line, naming the option) on input it cannot size.
    """
    validate_scenario(scenario)
    params = count_parameters(model)
    plan = plan_memory(model, hardware, scenario)
    speeds = estimate_speeds(model, hardware, scenario, plan, params)
    cost, batch_cost = _cheapest_costs(model, hardware, scenario, offers, hardware_catalog)
    _, local = decode_speeds(model, hardware, scenario_with(scenario, depth=cost_depth(scenario)), plan, params)
    finetune = _finetune(model, params.total)
    capacity = _kv_tokens_capacity(scenario, plan)
    warnings = _warnings(model, hardware, scenario, plan, speeds, cost, offers, finetune, capacity)
    return Estimate(model, hardware, scenario, params, plan, speeds.decode, speeds.aggregate, speeds.prefill, cost,
                    finetune, capacity, warnings, batch_cost, local.tokens_per_s)


def _kv_tokens_capacity(scenario: Scenario, plan: MemoryPlan) -> int | None:
    if scenario.engine == "vllm":
        return plan.runtime.kv_capacity_tokens
    return scenario.context * scenario.batch if plan.kv is not None else None


def finetune_memory(model: ModelSpec) -> Mapping[str, FinetuneMemory] | None:
    """QLoRA, LoRA and full fine-tuning memory of the model (finetune.py's defaults); None without layer shapes."""
    return _finetune(model, count_parameters(model).total)


def stock_moe_qlora_memory(model: ModelSpec) -> FinetuneMemory | None:
    """QLoRA of a MoE model on the stock transformers v5 + bitsandbytes stack, whose fused experts stay bf16
    (finetune.FinetuneOptions.moe_experts): the figure beside the default's NF4 experts. None for dense models."""
    if model.moe is None:
        return None
    return _finetune_qlora_stock(model, count_parameters(model).total)


@lru_cache(maxsize=1024)
def _finetune(model: ModelSpec, params_total: float) -> Mapping[str, FinetuneMemory] | None:
    if not model.has_shapes:
        return None
    try:
        return finetune_memory_all(model, params_total)
    except SizingError:
        return None


@lru_cache(maxsize=256)
def _finetune_qlora_stock(model: ModelSpec, params_total: float) -> FinetuneMemory | None:
    if not model.has_shapes:
        return None
    try:
        return finetune_memory_one(model, params_total, "qlora", FinetuneOptions(moe_experts="bf16"))
    except SizingError:
        return None


def _costs_on_fitting_offers(model: ModelSpec, hardware: HardwareSpec, scenario: Scenario,
                             offers: Sequence[CloudOfferSpec], catalog: Sequence[HardwareSpec]
                             ) -> tuple[ServingCost, ...]:
    """Cost per 1M tokens on each fitting offer, for ``estimate`` to pick the one where a token costs least: each
    offer's hourly price over its own decode speed, one stream's and ``scenario.batch`` streams'. The cheapest offer
    per hour is often not it: for GLM-4.5 at Q4_K_M, 8 × A100 at $3.54/h decode ~54 tok/s ($18.13 per 1M tokens),
    one MI325X at $3.80/h ~87 tok/s ($12.17).

    Ties go to economics.cheapest_offer's order (hourly price, fewer GPUs, provider, instance). An offer whose GPUs
    cannot hold the scenario is rejected before its speed is computed (``fits``: one plan per kind of accelerator).

    The offers run on their own accelerators, so the answer depends on the report's ``hardware`` only when an offer
    names its slug and the catalog does not hold it; a cloud offer is priced holding the whole model on its GPUs
    (the visitor's --offload-pct is for their own hardware: it made an RTX PRO 6000 offer decode at a third of its
    speed). Each offer runs on its own GPU count, so the visitor's GPU count does not enter either. What is left is
    the model, the scenario without its offload and GPU count, and the catalog: cached on those, as every report of
    the model on another accelerator, and at another GPU count, asks the same.
    """
    return _costs_on_offers(*_offer_pricing_inputs(model, hardware, scenario, offers, catalog))


def _cheapest_costs(model: ModelSpec, hardware: HardwareSpec, scenario: Scenario, offers: Sequence[CloudOfferSpec],
                    catalog: Sequence[HardwareSpec]) -> tuple[ServingCost | None, ServingCost | None]:
    """Of _costs_on_fitting_offers, the offer where one stream's token costs least and the one where a token of
    ``scenario.batch`` streams does (ties: offer_order), the same ServingCosts: what ``estimate`` keeps."""
    return _cheapest_on_offers(*_offer_pricing_inputs(model, hardware, scenario, offers, catalog))


def _offer_pricing_inputs(model: ModelSpec, hardware: HardwareSpec, scenario: Scenario,
                          offers: Sequence[CloudOfferSpec], catalog: Sequence[HardwareSpec]
                          ) -> tuple[ModelSpec, Scenario, tuple[CloudOfferSpec, ...], tuple[HardwareSpec, ...]]:
    """What a price on the offers depends on (see _costs_on_fitting_offers): the model, the scenario without its
    offload and GPU count (each offer sets its own) at cost_depth, the confirmed offers and the catalog holding the
    report's accelerator."""
    offers = confirmed_offers(offers)  # a rate its source does not support is never the cheapest
    catalog = tuple(catalog)
    if any(offer.accelerator_slug == hardware.slug for offer in offers) and hardware not in catalog:
        catalog = (*(spec for spec in catalog if spec.slug != hardware.slug), hardware)
    return model, scenario_with(scenario, offload_pct=None, gpus=1, depth=cost_depth(scenario)), offers, catalog


def offer_costs(model: ModelSpec, hardware: HardwareSpec, scenario: Scenario, offers: Sequence[CloudOfferSpec],
                hardware_catalog: Sequence[HardwareSpec] = ()) -> tuple[ServingCost, ...]:
    """Cost per 1M tokens on each of ``offers`` that holds the model, priced as the report's cost card prices them
    (_costs_on_fitting_offers: the whole model on the offer's GPUs, no --offload-pct, at cost_depth): for a page that
    prices a chosen set of offers (the compare page: the offers of exactly one accelerator × count)."""
    return _costs_on_fitting_offers(model, hardware, scenario, offers, hardware_catalog)


def cost_depth(scenario: Scenario) -> int:
    """The cached tokens per stream a cost per 1M tokens is priced at: half the context, i.e. the mean over streams
    that fill their context from empty to full. Decoding is memory-bound: a token's time is the weight reads plus
    the KV reads, which grow linearly with the cached tokens (throughput.decode_speed), so the mean time per token
    over depths 0 … context is the time at context / 2, and so is the mean cost. The empty cache priced Llama 3.1
    8B FP8 on an H100 with 32 streams at 7,233 tok/s; with 4K of its 8K cached per stream vLLM's aggregate falls
    to about half of that. (The visitor's --depth sets the speed cards, not the cost.)"""
    return scenario.context // 2


@dataclass(frozen=True)
class _OfferSpeeds:
    """One fitting offer group's decode on its own accelerator: what its costs per token are priced at."""

    offer: CloudOfferSpec  # the group's cheapest per hour (offer_order)
    accelerator: HardwareSpec
    scenario: Scenario  # on the offer's GPU count
    plan: MemoryPlan
    decode_tok_s: float
    aggregate_tok_s: float

    def cost(self, model: ModelSpec, scenario: Scenario) -> ServingCost:
        """The offer's ServingCost. A prompt (input) token is priced at the offer's own prefill speed of the
        scenario's prompt from an empty cache, as the output token is at its own decode speed (None without
        published FP16 TFLOPS)."""
        prefill = _prefill_speed(model, self.accelerator, scenario_with(self.scenario, depth=0), self.plan,
                                 count_parameters(model))
        return ServingCost.on_offer(self.offer, decode_tok_s=self.decode_tok_s, batch=scenario.batch,
                                    aggregate_decode_tok_s=self.aggregate_tok_s,
                                    accelerator_name=self.accelerator.name, depth=scenario.depth,
                                    prefill_tok_s=prefill.tokens_per_s, prompt=scenario.prompt)


@lru_cache(maxsize=1024)
def _speeds_on_offers(model: ModelSpec, scenario: Scenario, offers: tuple[CloudOfferSpec, ...],
                      catalog: tuple[HardwareSpec, ...]) -> tuple[_OfferSpeeds, ...]:
    by_slug = {spec.slug: spec for spec in catalog}
    params = count_parameters(model)
    # Offers of the same accelerator × count decode at the same speed, so of each such group only the cheapest
    # per hour can make a token cheapest, at any batch: one plan and one speed per group.
    cheapest_per_group: dict[tuple[str, int], CloudOfferSpec] = {}
    for offer in sorted(offers, key=offer_order):
        cheapest_per_group.setdefault((offer.accelerator_slug, offer.gpu_count), offer)
    speeds = []
    for offer in cheapest_per_group.values():
        accelerator = by_slug.get(offer.accelerator_slug)
        if not _offer_fits(model, accelerator, scenario, offer):
            continue
        on_offer = scenario_with(scenario, gpus=offer.gpu_count)
        plan = plan_memory(model, accelerator, on_offer)
        decode, aggregate = decode_speeds(model, accelerator, on_offer, plan, params)
        speeds.append(_OfferSpeeds(offer, accelerator, on_offer, plan, decode.tokens_per_s, aggregate.tokens_per_s))
    return tuple(speeds)


@lru_cache(maxsize=1024)
def _costs_on_offers(model: ModelSpec, scenario: Scenario, offers: tuple[CloudOfferSpec, ...],
                     catalog: tuple[HardwareSpec, ...]) -> tuple[ServingCost, ...]:
    return tuple(speeds.cost(model, scenario) for speeds in _speeds_on_offers(model, scenario, offers, catalog))


@lru_cache(maxsize=1024)
def _cheapest_on_offers(model: ModelSpec, scenario: Scenario, offers: tuple[CloudOfferSpec, ...],
                        catalog: tuple[HardwareSpec, ...]) -> tuple[ServingCost | None, ServingCost | None]:
    """The cheapest per token of _costs_on_offers, one stream's and ``scenario.batch`` streams'. Both costs per
    token are hourly_usd over a decode speed (economics.cost_per_million_tokens), so they are compared on the
    speeds, and only the (at most two) winners' prefill, which no comparison reads, is computed (a page's report
    prices ~15 fitting offer groups)."""
    speeds = _speeds_on_offers(model, scenario, offers, catalog)
    if not speeds:
        return None, None
    single = min(speeds, key=lambda s: (cost_per_million_tokens(s.decode_tok_s, s.offer.hourly_usd),
                                        *offer_order(s.offer)))
    batch = min(speeds, key=lambda s: (cost_per_million_tokens(s.aggregate_tok_s, s.offer.hourly_usd),
                                       *offer_order(s.offer)))
    single_cost = single.cost(model, scenario)
    return single_cost, single_cost if batch is single else batch.cost(model, scenario)


def offer_order(offer: CloudOfferSpec) -> tuple:
    """Cheapest per hour first, then fewer GPUs, provider and instance (economics.cheapest_offer's order)."""
    return (offer.hourly_usd, offer.gpu_count, offer.provider, offer.instance)


def _offer_fits(model: ModelSpec, accelerator: HardwareSpec | None, scenario: Scenario,
                offer: CloudOfferSpec) -> bool:
    if accelerator is None:
        return False  # the offer names an accelerator outside the catalog
    return fits(model, accelerator, scenario_with(scenario, gpus=offer.gpu_count))


def _gib(value: float) -> str:
    return f"{value / GIB:,.2f} GiB"


def _warnings(model: ModelSpec, hardware: HardwareSpec, scenario: Scenario, plan: MemoryPlan, speeds: Speeds,
              cost: ServingCost | None, offers: Sequence[CloudOfferSpec],
              finetune: Mapping[str, FinetuneMemory] | None, capacity: int | None) -> tuple[Note, ...]:
    """The estimate's caveats as Notes (codes and params documented in notes.py; the text is the contract's)."""
    notes: list[Note] = []
    if model.max_context and scenario.context > model.max_context:
        notes.append(Note("context_above_max", f"context exceeds the model's {model.max_context} maximum",
                          {"context": scenario.context, "max_context": model.max_context}))
    tokens = scenario.depth + scenario.prompt
    if tokens > scenario.context:
        notes.append(Note("prompt_beyond_context",
                          f"depth + prompt ({tokens:,} tokens) exceed --context {scenario.context:,}: the prefill "
                          "figures assume a cache that could hold them",
                          {"depth": scenario.depth, "prompt": scenario.prompt, "tokens": tokens,
                           "context": scenario.context}))
    if not model.has_shapes:
        notes += _estimated_model_notes(model)
    weights = plan.weights
    if weights.source == "published file size":
        notes.append(Note("weights_published_size", f"weights from the published {weights.quant} file size",
                          {"quant": weights.quant}))
    elif weights.rule_from:
        notes.append(Note("weights_rule_from",
                          f"{weights.quant} is a per-layer recipe without a published size for this model; "
                          f"sized with the {weights.rule_from} rules (approximate)",
                          {"quant": weights.quant, "rule_from": weights.rule_from}))
    if plan.include_mtp:
        notes.append(Note("mtp_included",
                          f"includes the {model.mtp_layers} MTP layer(s) the GGUF stores ({_gib(weights.mtp_bytes)})",
                          {"layers": model.mtp_layers, "mtp_gib": weights.mtp_bytes / GIB}))
    if (scenario.engine == "vllm" and quant_format(scenario.quant).family.startswith("gguf")
            and scenario.quant not in VLLM_DTYPE_FORMATS):  # F32 is the checkpoint served at --dtype float32
        notes.append(Note("vllm_gguf_experimental", "vLLM's GGUF support is experimental; vLLM usually serves "
                          "BF16, FP8, AWQ or GPTQ checkpoints"))
    if not plan.format_runs and scenario.engine == "vllm" and not vllm_runs_format(scenario.quant, hardware):
        platform = vllm_platform(hardware)
        if platform == "vendor-build":
            notes.append(Note("vllm_format_not_published",
                              f"{hardware.name} runs vLLM through its vendor's build, which publishes no support for "
                              f"{scenario.quant} checkpoints: only BF16 and FP16 are counted as running there",
                              {"quant": scenario.quant, "hardware": hardware.name}))
        else:
            source = VLLM_GAUDI_QUANT_SOURCE if platform == "intel-gaudi" else VLLM_QUANT_TABLE_SOURCE
            notes.append(Note("vllm_format_not_on_platform",
                              f"vLLM has no {scenario.quant} kernels for {hardware.name}'s platform ({platform}; "
                              f"{source}): --quant {scenario.quant} does not run there",
                              {"quant": scenario.quant, "platform": platform, "hardware": hardware.name}))
    elif not plan.format_runs and scenario.engine == "llama.cpp" and not gguf_experts_run_on(model, hardware):
        notes.append(Note("gguf_experts_not_on_backend",
                          f"every GGUF of {model.name} keeps its routed experts in MXFP4, which llama.cpp's "
                          f"{hardware.backend.upper()} backend does not multiply ({LLAMA_CPP_CANN_EXPERT_TYPES_SOURCE}): "
                          f"--quant {scenario.quant} does not run on {hardware.name}; vLLM may",
                          {"quant": scenario.quant, "model": model.name, "hardware": hardware.name}))
    elif not plan.format_runs:
        formats = sorted(backend_formats(scenario.engine, hardware) or ())
        notes.append(Note("format_not_on_backend",
                          f"{scenario.engine} runs only {', '.join(formats)} models on {hardware.name}: "
                          f"--quant {scenario.quant} does not run there",
                          {"quant": scenario.quant, "formats": ", ".join(formats), "engine": scenario.engine}))
    if scenario.engine == "vllm" and vllm_platform(hardware) == "vendor-build":
        notes.append(Note("vllm_vendor_build_runtime",
                          f"{hardware.name} runs vLLM through its vendor's build, which publishes no memory figures "
                          "of its own: graphs, non-torch memory and scheduler defaults are vLLM's on CUDA",
                          {"hardware": hardware.name}))
    if plan.runtime.unused_bytes:
        graphs = plan.runtime.graph_reserve_bytes
        notes.append(Note("vllm_gaudi_budget",
                          f"vllm-gaudi budgets the memory free after loading and profiling: "
                          f"{scenario.gpu_memory_utilization:g} of it for HPU graphs ({_gib(graphs)}) and the "
                          f"KV cache, {_gib(plan.runtime.unused_bytes)} unused; usable "
                          f"{_gib(plan.fit.usable_bytes_per_gpu)} per device, not the {usable_factor(hardware):.0%} "
                          "of the accelerator's memory other engines get",
                          {"utilization": scenario.gpu_memory_utilization, "graphs_gib": graphs / GIB,
                           "unused_gib": plan.runtime.unused_bytes / GIB,
                           "usable_gib": plan.fit.usable_bytes_per_gpu / GIB,
                           "usual_share": usable_factor(hardware)}))
    tp = plan.tensor_parallel
    if tp is not None and tp.mxfp4_padding is not None:
        padding = tp.mxfp4_padding
        added = f"{_gib(tp.per_rank_padding_bytes * tp.tp)} more than the checkpoint's {_gib(weights.total_bytes)}"
        amounts = {"kernel": padding.kernel, "padding_gib": tp.per_rank_padding_bytes * tp.tp / GIB,
                   "checkpoint_gib": weights.total_bytes / GIB}
        if padding.scale_row_multiple > 1:
            notes.append(Note("vllm_mxfp4_layout",
                              f"vLLM's {padding.kernel} MoE kernel keeps the MXFP4 experts' scales twice (swizzled, "
                              f"in rows padded to a multiple of {padding.scale_row_multiple}, and as in the "
                              f"checkpoint) and their biases in fp32: {added}",
                              {**amounts, "scale_row_multiple": padding.scale_row_multiple}))
        else:
            notes.append(Note("vllm_mxfp4_padding",
                              f"vLLM's {padding.kernel} MoE kernel holds the MXFP4 experts padded (intermediate size "
                              f"to a multiple of {padding.intermediate_multiple}, hidden size to "
                              f"{padding.hidden_multiple}): {added}",
                              {**amounts, "intermediate_multiple": padding.intermediate_multiple,
                               "hidden_multiple": padding.hidden_multiple}))
    share = vllm_memory_share(hardware, scenario)
    if scenario.engine == "vllm" and share < scenario.gpu_memory_utilization:
        notes.append(Note("vllm_share_capped_unified",
                          f"on unified memory vLLM can take only what the system leaves free "
                          f"({_gib(usable_bytes(hardware))}): --gpu-memory-utilization {share:g}, not "
                          f"{scenario.gpu_memory_utilization:g}, which would ask for more and not start",
                          {"utilization": scenario.gpu_memory_utilization, "share": share,
                           "free_gib": usable_bytes(hardware) / GIB}))
    if scenario.engine == "vllm" and vllm_quantized_moe(model, scenario.quant):
        logged, modelled = VLLM_QUANTIZED_MOE_LOGGED_KV_GIB, VLLM_QUANTIZED_MOE_MODELLED_KV_GIB
        notes.append(Note("vllm_quantized_moe_gap",
                          f"quantized MoE under vLLM: the one published log of such a KV budget "
                          f"({VLLM_QUANTIZED_MOE_SOURCE}, Qwen3-235B-A22B-FP8 on 4 × H100) had {logged:.2f} GiB per "
                          f"GPU where this engine sizes {modelled:.2f} for that model, setup and version; the difference is not "
                          "modelled: expect up to that share less KV memory than shown",
                          {"logged_gib": logged, "modelled_gib": modelled,
                           "gap_pct": (modelled - logged) / logged * 100, "source": VLLM_QUANTIZED_MOE_SOURCE}))
    if scenario.engine == "vllm" and model.multimodal:
        notes.append(Note("vllm_vision_encoder", "vLLM also loads the model's vision encoder, which this estimate "
                          "does not count (its shapes are not parsed): expect somewhat less KV memory"))
    notes += _fit_warnings(hardware, scenario, plan, capacity)
    if speeds.prefill.tokens_per_s is None:
        notes.append(Note("prefill_unknown",
                          f"prefill speed and TTFT unknown: {hardware.name} has no published FP16 TFLOPS",
                          {"hardware": hardware.name}))
    if offers and cost is None:
        notes.append(Note("no_offer_fits", "no catalog cloud offer fits this scenario: cost per 1M tokens unknown"))
    if (note := _dsv4_compute_buffer_note(model, scenario, plan)) is not None:
        notes.append(note)
    if finetune is None and model.compressed_attention is not None:
        notes.append(Note("finetune_not_modeled",
                          "fine-tuning memory unknown: DeepSeek-V4's compressed attention is not modeled for "
                          "training (its adapters, activations and optimizer states)"))
    elif finetune is None:
        notes.append(Note("finetune_unknown",
                          "fine-tuning memory unknown: it needs the model's layer shapes (config.json)"))
    return tuple(notes)


def _dsv4_compute_buffer_note(model: ModelSpec, scenario: Scenario, plan: MemoryPlan) -> Note | None:
    """DeepSeek-V4 under llama.cpp: the compute buffer here and at -ub DSV4_LARGE_UBATCH, when that is larger (a
    micro-batch is at most the context, so below it the two are the same)."""
    if (model.compressed_attention is None or scenario.engine != "llama.cpp"
            or scenario.n_ubatch >= DSV4_LARGE_UBATCH):
        return None
    here = plan.runtime.term("compute buffer").bytes / GIB
    larger = llama_cpp_buffers(model, scenario_with(scenario, n_ubatch=DSV4_LARGE_UBATCH))["compute buffer"][0] / GIB
    if larger <= here:
        return None
    return Note("dsv4_compute_buffer",
                f"llama.cpp's compute buffer for DeepSeek-V4 spans its whole compressed cache: {here:.2f} GiB per "
                f"GPU at -ub {scenario.n_ubatch}, {larger:.2f} GiB with -b and -ub {DSV4_LARGE_UBATCH}",
                {"ubatch": scenario.n_ubatch, "gib": here, "larger_ubatch": DSV4_LARGE_UBATCH, "larger_gib": larger})


def _estimated_model_notes(model: ModelSpec) -> list[Note]:
    stated = model.stated_params_total or 0
    notes = [Note("weights_estimated",
                  f"estimated: no config.json for {model.name}; weights are the stated {stated:.3g} parameters × "
                  "the format's bits per weight", {"model": model.name, "params_total": stated})]
    if model.kv_proxy is not None:
        notes.append(Note("kv_from_proxy",
                          f"estimated: KV cache and per-layer speed terms from {model.kv_proxy.name}, the nearest "
                          "sourced family member", {"proxy": model.kv_proxy.name}))
    else:
        notes.append(Note("kv_unknown", "KV cache unknown: no config.json and no sourced family member; memory "
                          "figures exclude it and kv_cache is null"))
    if not model.layer_count_known:
        notes.append(Note("speed_upper_bound", "layer count unknown: decode and prefill speeds leave out the fixed "
                          "per-layer kernel time and are upper bounds (TTFT a lower bound)"))
    return notes


def _fit_warnings(hardware: HardwareSpec, scenario: Scenario, plan: MemoryPlan, capacity: int | None) -> list[Note]:
    notes = []
    placement = plan.placement
    if hardware.kind == "unified" and scenario.offload_pct:
        notes.append(Note("offload_pct_unified",
                          "unified memory has no separate system RAM: --offload-pct does not apply",
                          {"offload_pct": scenario.offload_pct}))
    if hardware.kind == "unified" and plan.fit.verdict == "exceeds":
        usable_gib = plan.fit.usable_bytes_per_gpu / GIB
        notes.append(Note("unified_exceeds",
                          f"does not fit in {usable_gib:.1f} GiB of unified memory, and there is no separate system "
                          "RAM to offload to: it does not run (speeds are what it would do if it fit)",
                          {"usable_gib": usable_gib}))
    if placement.mode == "auto":
        notes.append(_auto_offload_note(plan))
    elif placement.mode == "explicit":
        notes.append(_explicit_offload_note(scenario, placement))
        if scenario.engine == "llama.cpp" and hardware.kind != "unified" and plan.fit.verdict == "exceeds":
            notes.append(Note("explicit_offload_exceeds",
                              f"does not fit with --offload-pct {scenario.offload_pct:g}: llama.cpp would run out of "
                              "GPU memory; raise it or leave the offload automatic (speeds are what it would do "
                              "if it fit)", {"offload_pct": scenario.offload_pct}))
    in_system_ram = placement.host_bytes + placement.offloaded_bytes
    if (hardware.kind != "unified" and placement.offloaded_bytes > 0 and scenario.system_ram_bandwidth_gbs is None
            and in_system_ram > DESKTOP_MAX_RAM_BYTES):
        # In GB, as memory modules are sold: "250 GiB … more than 256 GB" read as a contradiction.
        ram_gb, desktop_gb = in_system_ram / 1e9, DESKTOP_MAX_RAM_BYTES / 1e9
        notes.append(Note("system_ram_beyond_desktop",
                          f"{ram_gb:.0f} GB in system RAM is more than a desktop takes ({desktop_gb:.0f} GB): it "
                          f"needs a workstation or server, whose memory channels read faster than the "
                          f"{DEFAULT_RAM_BANDWIDTH_GBS:g} GB/s of a desktop assumed here (--ram-bandwidth sets yours)",
                          {"ram_gb": ram_gb, "desktop_gb": desktop_gb, "assumed_gbs": DEFAULT_RAM_BANDWIDTH_GBS}))
    if scenario.engine == "vllm":
        # vLLM refuses to start when one request at max_model_len needs more KV memory than the pool
        # (kv_cache_utils.check_enough_kv_cache_memory) and logs "Maximum concurrency for L tokens per request".
        # Both count pages per request, and so does v0.21's "GPU KV cache size: N tokens" line (capacity
        # = max_concurrency × max_model_len); before v0.21 it divided the blocks by the number of KV groups, so for
        # sliding-window and hybrid models N was far below what one request needs (runtime.vllm_printed_kv_tokens).
        concurrency = plan.runtime.max_concurrency
        if plan.fit.verdict == "exceeds":
            notes.append(Note("vllm_will_not_start",
                              "vLLM does not offload automatically and will not start; add GPUs, a smaller "
                              "--quant, or --offload-pct (vLLM --cpu-offload-gb)"))
        elif capacity is not None and concurrency is not None and concurrency < 1:
            notes.append(Note("vllm_kv_pool_below_context",
                              f"vLLM's KV pool holds {concurrency:.2f} of one {scenario.context:,}-token request "
                              f"(its log: {capacity:,} tokens): vLLM will refuse this --context",
                              {"capacity": capacity, "context": scenario.context, "concurrency": concurrency}))
        elif capacity is not None and concurrency is not None and concurrency < scenario.batch:
            notes.append(Note("vllm_kv_pool_below_batch",
                              # Tenths rounded down, as the page gives them: a pool holds 2.28 sequences, not 2.3.
                              f"vLLM's KV pool holds {math.floor(concurrency * 10) / 10:.1f} full "
                              f"{scenario.context:,}-token sequences "
                              f"at once (its log: {capacity:,} tokens), fewer than --batch {scenario.batch}",
                              {"capacity": capacity, "batch": scenario.batch, "context": scenario.context,
                               "concurrency": concurrency}))
    return notes


def _auto_offload_note(plan: MemoryPlan) -> Note:
    """fit.place_llama_cpp's automatic offload, classified by what it moved (the text keeps its explanation)."""
    placement, layout = plan.placement, plan.layout
    assert layout is not None  # automatic offload is llama.cpp's
    offloaded_gib = placement.offloaded_bytes / GIB
    text = f"does not fit in GPU memory: {_gib(placement.offloaded_bytes)} in system RAM; {placement.explanation}"
    blocks = len(layout.blocks)
    if placement.gpu_layers is None:  # no layer shapes: a continuous share of the weights moved
        weights = sum(block.total_bytes for block in layout.blocks) + layout.output_bytes
        share = placement.offloaded_weight_bytes / weights * 100 if weights else 0.0
        return Note("offload_auto_estimated", text, {"offloaded_gib": offloaded_gib, "share_pct": share})
    if placement.gpu_layers == blocks + 1:  # every block and the head stay: only routed experts moved
        return Note("offload_auto_experts", text, {"offloaded_gib": offloaded_gib,
                                                   "n_cpu_moe": placement.n_cpu_moe or 0, "blocks": blocks})
    if placement.gpu_layers == 0 and placement.per_gpu_bytes > plan.fit.usable_bytes_per_gpu:
        return Note("offload_auto_nothing_fits", text, {"offloaded_gib": offloaded_gib})
    return Note("offload_auto_layers", text, {
        "offloaded_gib": offloaded_gib, "gpu_layers": placement.gpu_layers,
        "cpu_blocks": blocks - placement.gpu_layers, "blocks": blocks, "n_cpu_moe": placement.n_cpu_moe or 0})


def _explicit_offload_note(scenario: Scenario, placement: Placement) -> Note:
    offload_pct = scenario.offload_pct or 0.0
    if placement.engine == "vllm":
        return Note("offload_explicit_vllm", placement.explanation,
                    {"offload_pct": offload_pct,
                     "cpu_offload_gb": vllm_cpu_offload_gib(placement.offloaded_weight_bytes, scenario.gpus)})
    if placement.gpu_layers is None:  # no layer shapes: a continuous share, read and unread bytes in proportion
        return Note("offload_explicit_estimated", placement.explanation,
                    {"offload_pct": offload_pct, "unread_gib": placement.offloaded_expert_bytes / GIB,
                     "read_gib": placement.offloaded_dense_bytes / GIB})
    return Note("offload_explicit_layers", placement.explanation,
                {"offload_pct": offload_pct, "experts_gib": placement.offloaded_expert_bytes / GIB,
                 "dense_gib": placement.offloaded_dense_bytes / GIB, "gpu_layers": placement.gpu_layers,
                 "n_cpu_moe": placement.n_cpu_moe or 0})


def hardware_from_dict(data: Any, *, slug: str = "custom", option: str = "--hardware") -> HardwareSpec:
    """An accelerator described as in docs/estimate-contract.md (``--hardware`` file, web form); SizingError
    naming the field on anything missing, mistyped or out of range."""
    if not isinstance(data, Mapping):
        raise SizingError(f"{option}: expected a JSON object, got {type(data).__name__}")
    known = set(HARDWARE_NUMBER_LIMITS) | {"name", "vendor", "kind", "backend", "interconnect", "slug", "architecture",
                                           "interconnect_mesh_peers"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise SizingError(f"{option}: unknown field {unknown[0]!r}")
    for key in ("name", "memory_gb", "bandwidth_gbs"):
        if data.get(key) is None:
            raise SizingError(f"{option}: {key!r} is required")
    values: dict[str, Any] = {}
    for key in ("name", "vendor", "interconnect", "slug", "architecture"):
        value = data.get(key, "")
        if not isinstance(value, str) or len(value) > 120 or (key == "name" and not value.strip()):
            raise SizingError(f"{option}: {key!r} must be a text of 1 to 120 characters")
        values[key] = value.strip()
    # The architecture matters where llama.cpp reaches only part of the tensor peak (throughput.
    # LLAMA_CPP_TENSOR_PEAK_SHARE: hopper, the AMD families); other names are kept and change nothing.
    values["architecture"] = values["architecture"].lower()
    for key, (low, high) in HARDWARE_NUMBER_LIMITS.items():
        value = data.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise SizingError(f"{option}: {key!r} must be a number (got {value!r})")
        if not low < value <= high:
            raise SizingError(f"{option}: {key!r} must be above {low:g} and at most {high:g} (got {value:g})")
        values[key] = float(value)
    peers = data.get("interconnect_mesh_peers")
    if peers is not None:
        if isinstance(peers, bool) or not isinstance(peers, int) or not 1 <= peers <= 63:
            raise SizingError(f"{option}: 'interconnect_mesh_peers' must be a whole number from 1 to 63 "
                              f"(got {peers!r})")
        values["interconnect_mesh_peers"] = peers
    kind = data.get("kind", "discrete")
    if kind not in ("discrete", "accelerator", "unified"):
        raise SizingError(f"{option}: 'kind' must be discrete, accelerator or unified (got {kind!r})")
    backend = data.get("backend", "cuda")
    if backend not in ("cuda", "rocm", "metal", "vulkan", "sycl", "cann", "other"):
        raise SizingError(f"{option}: 'backend' must be cuda, rocm, metal, vulkan, sycl, cann or other "
                          f"(got {backend!r})")
    return HardwareSpec(
        slug=values.pop("slug") or slug, name=values.pop("name"), vendor=values.pop("vendor"),
        kind=kind, backend=backend, **values)


# Numeric --hardware fields: (exclusive lower bound, inclusive upper bound). Upper bounds are far above any
# product (a 2 TB accelerator, 100 TB/s, 100 PFLOPS, 100 kW) but keep the arithmetic finite.
HARDWARE_NUMBER_LIMITS: dict[str, tuple[float, float]] = {
    "memory_gb": (0.0, 2048.0),
    "bandwidth_gbs": (0.0, 100_000.0),
    "fp16_tflops": (0.0, 100_000.0),
    "fp16_acc_tflops": (0.0, 200_000.0),  # GeForce: the FP16-accumulate rate, twice the FP32-accumulate one
    "fp8_tflops": (0.0, 200_000.0),
    "tdp_w": (0.0, 100_000.0),
    "usable_memory_factor": (0.0, 1.0),
    "interconnect_gbs": (0.0, 100_000.0),
    "price_usd": (0.0, 10_000_000.0),
}
