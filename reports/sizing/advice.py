"""What to change so the configuration fits: ranked options, each re-sized by the engine.

When an estimate's verdict is "exceeds" (or "tight"), ``fit_options`` tries one change at a time and re-runs the
memory plan (and, for the change it proposes, the whole estimate) with it:

=====================  ===========================================================================================
code                   change (``FitOption.params``)
=====================  ===========================================================================================
``memory_share``       vLLM: a larger ``--gpu-memory-utilization`` (VLLM_ADVISED_UTILIZATIONS up to the largest it
                       starts with here, the smallest that reaches the goal, else the largest), what vLLM's own
                       start-up error suggests. params: utilization, previous, flags
``kv_8bit``            8-bit KV cache: llama.cpp ``-ctk q8_0 -ctv q8_0`` (q8_0 = 34 bytes per 32 values, ggml-common.h
                       block_q8_0), vLLM ``--kv-cache-dtype fp8`` (1 byte per value). Offered while the cache is
                       16/32-bit. params: kv_dtype, flags, kv_gib_before, kv_gib_after
``shorter_context``    the largest preset context (CONTEXT_PRESETS, 2K … 1M) below the current one that reaches the
                       goal; none when even 2K does not. params: context, previous
``smaller_format``     the best-quality format that reaches the goal, walking a ladder of decreasing size (GGUF for
                       llama.cpp, FP8 then AWQ for vLLM); only formats whose weights are smaller than the current
                       ones. params: quant, previous
``moe_offload``        llama.cpp, MoE model, discrete GPUs: routed experts of the first N blocks in system RAM
                       (``--n-cpu-moe N``, the smallest N that reaches the goal; fit.place_llama_cpp). Decode then
                       reads those experts at system-RAM speed. params: n_cpu_moe, blocks, flags, offloaded_gib
``more_offload``       an offload the visitor set (``--offload-pct``) that leaves the GPUs short: the smallest of the
                       configurator's presets (OFFLOAD_STEPS) above it that reaches the goal. Not on unified
                       memory (one pool). params: offload_pct, previous
``more_gpus``          the smallest count of the same accelerator, up to MAX_ADVISED_GPUS, that reaches the goal
                       (vLLM: counts its tensor-parallel split rejects are skipped). params: gpus, added
``larger_accelerator`` one GPU of the catalog accelerator with more usable memory that reaches the goal: smallest
                       memory first, then lowest price (unpriced last). params: slug, name, memory_gb, price_usd
=====================  ===========================================================================================

The goal: from "exceeds", any verdict that runs without automatic offload (tight included); from "tight", a verdict
with at least fit.TIGHT_BUFFER of the usable memory to spare (fits / unified). An option that only helps (8-bit KV
that is not enough) is still listed, with ``resolves`` False, when it closes at least MIN_SHARE_OF_GAP of the
fullest GPU's gap to the goal; the other options are the smallest change that reaches the goal, or absent.

Ranking (``rank_options``): options that reach the goal first; within each group the faster expected decode
(tokens/s of one stream, the engine's speed model on the changed configuration) first; then the table's order.
Rationale: a change that does not make it run is worth less than any that does, and among those that do, the
visitor's next question is how fast it will be (quality loss of a smaller format and the price of hardware are shown
with each option, not folded into one score).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from .estimate import (
    GIB,
    Estimate,
    engine_usable_bytes,
    estimate,
    estimate_speeds,
    fits,
    fitting_plan,
    gpu_demand_bytes,
    plan_memory,
    vllm_fp8_kv_flag,
    vllm_largest_memory_share,
    vllm_platform,
)
from .fit import TIGHT_BUFFER, Verdict, first_true, usable_factor, verdict_for
from .kv_cache import LLAMA_CPP_CTX_PAD
from .parameters import count_parameters
from .quant import quant_format
from .specs import HardwareSpec, ModelSpec, Scenario, scenario_with

# The configurator's context presets (tokens), 2K … 1M.
CONTEXT_PRESETS = tuple(2**n for n in range(11, 21))
# Decreasing quality and size; llama.cpp runs GGUF only (estimate.VLLM_ONLY_FORMATS), vLLM serves FP8 and 4-bit
# AWQ/GPTQ checkpoints. GPTQ has AWQ's size and TP rules (int4, group 128: quant.py, parallelism.VLLM_QUANT_BLOCK),
# so AWQ stands for both.
FORMAT_LADDER = {
    "llama.cpp": ("Q8_0", "Q6_K", "Q5_K_M", "Q4_K_M", "IQ4_XS", "Q3_K_M", "IQ3_XXS", "Q2_K", "IQ2_XXS", "IQ1_M"),
    "vllm": ("FP8", "AWQ"),
}
# 8-bit KV cache per engine: (kv dtype, launch flags). llama.cpp common/arg.cpp -ctk/-ctv; vLLM --kv-cache-dtype.
KV_8BIT = {"llama.cpp": ("q8_0", "-ctk q8_0 -ctv q8_0"), "vllm": ("fp8", "--kv-cache-dtype fp8")}
# KV dtypes already at 8 bits or below: no 8-bit option.
KV_8BIT_OR_LESS = frozenset({"q8_0", "q4_0", "fp8", "fp8_e4m3", "fp8_e5m2"})
# "N more GPUs" stops here: beyond one 8-GPU node pair, buying a larger accelerator is the realistic advice.
MAX_ADVISED_GPUS = 16
# vLLM refuses to start with "Try increasing `gpu_memory_utilization` or decreasing `max_model_len`" (vllm/v1/core/
# kv_cache_utils.py) when its budget (default 0.9 of the memory) holds no request; 0.95 is the common raised value
# (the command in vllm#15617, for one). Beyond it the (1 − utilization) rest, which must hold the CUDA context, the
# cuBLAS/NCCL workspaces and whatever else runs on the GPU, gets thin: too high a value crashes with out-of-memory
# instead (vllm#5274), so the advice stops at 0.95.
# 0.9 is vLLM's default (a lower share the visitor set is restored first).
VLLM_ADVISED_UTILIZATIONS = (0.9, 0.92, 0.95)
# A change that does not reach the goal is worth naming when it closes at least this share of the gap: DeepSeek-V3.2
# on one Gaudi 3 is 516 GiB short, and "8-bit KV cache: 0.60 → 0.37 GiB, still does not run" was noise beside
# "8 GPUs". A quarter: two such changes together can close half of it, which is a direction worth showing.
MIN_SHARE_OF_GAP = 0.25
# The configurator's offload presets in percent (forms.OFFLOAD_CHOICES without "auto" and 0).
OFFLOAD_STEPS = tuple(range(10, 100, 10))
OPTION_ORDER = ("memory_share", "kv_8bit", "shorter_context", "smaller_format", "moe_offload", "more_offload",
                "more_gpus", "larger_accelerator")


@dataclass(frozen=True)
class FitOption:
    """One change and its effect, as the engine sizes it. Bytes; ``*_gib`` properties for display."""

    code: str  # OPTION_ORDER
    params: Mapping[str, Any] = field(hash=False)
    hardware: HardwareSpec  # the accelerator of the changed configuration
    scenario: Scenario  # the changed configuration (a configurator link can be built from it)
    verdict: Verdict
    resolves: bool  # reaches the goal (module doc)
    required_bytes: float  # weights + KV + runtime, all GPUs and host-side pieces
    per_gpu_bytes: float  # what the fullest GPU must hold (the verdict's basis)
    usable_bytes_per_gpu: float
    kv_bytes: float
    offloaded_bytes: float  # in system RAM (moe_offload; or what automatic offload would move)
    decode_tok_s: float
    runs: bool = True  # MemoryPlan.runs of the changed configuration (False: decode_tok_s is not a speed it has)

    @property
    def required_gib(self) -> float:
        return self.required_bytes / GIB

    @property
    def per_gpu_gib(self) -> float:
        return self.per_gpu_bytes / GIB


def fit_options(model: ModelSpec, hardware: HardwareSpec, scenario: Scenario, *,
                hardware_catalog: Sequence[HardwareSpec]) -> tuple[FitOption, ...]:
    """Ranked changes that make ``model`` fit ``scenario.gpus`` × ``hardware`` (empty when it already fits well).

    ``hardware_catalog`` supplies the larger accelerators. SizingError for input the engine cannot size, as
    ``estimate``. Options carry no cloud cost: the recommendations (recommend.py) price the configuration.
    """
    current = estimate(model, hardware, scenario)
    if current.fit.verdict not in ("exceeds", "tight"):
        return ()
    goal = _Goal(current.fit.verdict)
    candidates = (
        _memory_share(current, goal),
        _kv_8bit(current, goal),
        _shorter_context(current, goal),
        _smaller_format(current, goal),
        _moe_offload(current, goal),
        _more_offload(current, goal),
        _more_gpus(current, goal),
        _larger_accelerator(current, goal, hardware_catalog),
    )
    gap = goal.gap(max(current.fit.placement.demand_per_gpu), current.fit.usable_bytes_per_gpu)
    return rank_options(option for option in candidates if option is not None and (
        option.resolves or gap - goal.gap(option.per_gpu_bytes, option.usable_bytes_per_gpu) >= MIN_SHARE_OF_GAP * gap))


def rank_options(options: Iterable[FitOption]) -> tuple[FitOption, ...]:
    """Reaching the goal first, then faster decode, then OPTION_ORDER (module doc)."""
    return tuple(sorted(options, key=lambda o: (not o.resolves, -o.decode_tok_s, OPTION_ORDER.index(o.code))))


@dataclass(frozen=True)
class _Goal:
    """What counts as fixed, given the current verdict (module doc)."""

    current: Verdict

    def reached(self, verdict: Verdict) -> bool:
        if self.current == "tight":
            return verdict in ("fits", "unified")
        return verdict != "exceeds"

    def gap(self, per_gpu_bytes: float, usable_bytes_per_gpu: float) -> float:
        """How far the fullest GPU is from the goal (bytes): from "exceeds" what it lacks, from "tight" what it
        lacks of the buffer (fit.verdict_for)."""
        if self.current == "tight":
            return per_gpu_bytes - (1 - TIGHT_BUFFER) * usable_bytes_per_gpu
        return per_gpu_bytes - usable_bytes_per_gpu


def _reaches(model: ModelSpec, hardware: HardwareSpec, scenario: Scenario, goal: _Goal) -> bool:
    # Every goal excludes "exceeds", so candidates that do not fit are rejected by estimate.fits without a plan.
    plan = fitting_plan(model, hardware, scenario)
    return plan is not None and goal.reached(plan.fit.verdict)


def _option(code: str, params: Mapping[str, Any], result: Estimate, goal: _Goal) -> FitOption:
    fit = result.fit
    return FitOption(code, params, result.hardware, result.scenario, fit.verdict, goal.reached(fit.verdict),
                     fit.required_bytes, max(fit.placement.demand_per_gpu), fit.usable_bytes_per_gpu,
                     result.memory.kv_bytes, fit.placement.offloaded_bytes, result.decode.tokens_per_s,
                     result.memory.runs)


def _changed(current: Estimate, *, hardware: HardwareSpec | None = None, **changes: Any) -> Estimate:
    """The full estimate of the current configuration with ``changes``."""
    return estimate(current.model, hardware or current.hardware, scenario_with(current.scenario, **changes))


# --------------------------------------------------------------------------------------------------------------
# The options
# --------------------------------------------------------------------------------------------------------------


def _memory_share(current: Estimate, goal: _Goal) -> FitOption | None:
    """The smallest advised --gpu-memory-utilization above the current one that reaches the goal; when none does,
    the largest, as a change that only helps (as an 8-bit cache that is not enough). Never above what vLLM starts
    with on this accelerator (estimate.vllm_largest_memory_share: on unified memory, what the system leaves free)."""
    scenario = current.scenario
    if scenario.engine != "vllm":
        return None
    largest = vllm_largest_memory_share(current.hardware)
    advised = sorted({value for value in VLLM_ADVISED_UTILIZATIONS if value <= largest}
                     | ({largest} if largest < VLLM_ADVISED_UTILIZATIONS[-1] else set()))
    larger = [value for value in advised if value > scenario.gpu_memory_utilization]
    if not larger:
        return None
    chosen = next((value for value in larger if _reaches(current.model, current.hardware,
                                                          scenario_with(scenario, gpu_memory_utilization=value), goal)),
                  larger[-1])
    params = {"utilization": chosen, "previous": scenario.gpu_memory_utilization,
              "flags": f"--gpu-memory-utilization {chosen:g}"}
    return _option("memory_share", params, _changed(current, gpu_memory_utilization=chosen), goal)


def _kv_8bit(current: Estimate, goal: _Goal) -> FitOption | None:
    kv = current.kv
    if kv is None or kv.kv_dtype in KV_8BIT_OR_LESS or kv.total_bytes == 0:
        return None
    kv_dtype, flags = KV_8BIT[current.scenario.engine]
    if current.scenario.engine == "vllm":
        flags = vllm_fp8_kv_flag(vllm_platform(current.hardware))  # Gaudi: fp8_inc, as its launch line has it
    result = _changed(current, kv_dtype=kv_dtype)
    params = {"kv_dtype": kv_dtype, "flags": flags, "kv_gib_before": kv.total_bytes / GIB,
              "kv_gib_after": result.memory.kv_bytes / GIB}
    return _option("kv_8bit", params, result, goal)


def _shorter_context(current: Estimate, goal: _Goal) -> FitOption | None:
    """Largest preset below the current context that reaches the goal (memory grows with context: bisect)."""
    scenario = current.scenario
    presets = [context for context in reversed(CONTEXT_PRESETS) if context < scenario.context]  # largest first
    first = first_true(0, len(presets) - 1, lambda i: _reaches(current.model, current.hardware,
                                                               _with_context(scenario, presets[i]), goal))
    if first is None:
        return None
    changed = _with_context(scenario, presets[first])
    result = _changed(current, context=changed.context, depth=changed.depth)
    return _option("shorter_context", {"context": changed.context, "previous": scenario.context}, result, goal)


def _with_context(scenario: Scenario, context: int) -> Scenario:
    # The decode depth must stay inside the cache (validate_scenario): at most a full context.
    return scenario_with(scenario, context=context, depth=min(scenario.depth, context - 1))


def _smaller_format(current: Estimate, goal: _Goal) -> FitOption | None:
    """Best-quality ladder format below the current one's nominal bits per weight that reaches the goal.

    Along the ladder the weights shrink, so "reaches the goal" turns true once and stays true: bisect (each probe
    of a new format sizes every tensor of the model once, ~15 ms for a 1,500-tensor MoE, then cached).
    """
    scenario, model = current.scenario, current.model
    current_bpw = quant_format(scenario.quant).bits_per_weight
    ladder = [quant for quant in FORMAT_LADDER[scenario.engine] if quant_format(quant).bits_per_weight < current_bpw]
    first = first_true(0, len(ladder) - 1, lambda i: _reaches(model, current.hardware,
                                                              scenario_with(scenario, quant=ladder[i]), goal))
    if first is None:
        return None
    quant = ladder[first]
    return _option("smaller_format", {"quant": quant, "previous": current.weights.quant},
                   _changed(current, quant=quant), goal)


def _moe_offload(current: Estimate, goal: _Goal) -> FitOption | None:
    """--n-cpu-moe N: fit.place_llama_cpp's automatic offload, aimed at the goal's usable memory.

    From "tight" (and first from "exceeds") the placement aims at (1 − TIGHT_BUFFER) of the usable memory, so the
    GPUs keep the buffer; from "exceeds" it falls back to the whole usable memory. The aim is set through the
    accelerator's usable factor, so the plan is plan_memory's own.
    """
    model, hardware, scenario = current.model, current.hardware, current.scenario
    if (scenario.engine != "llama.cpp" or model.moe is None or hardware.kind == "unified"
            or scenario.offload_pct is not None):
        return None
    aims = [1 - TIGHT_BUFFER] if goal.current == "tight" else [1 - TIGHT_BUFFER, 1.0]
    for aim in aims:
        plan = plan_memory(model, replace(hardware, usable_memory_factor=usable_factor(hardware) * aim), scenario)
        placement = plan.placement
        blocks = len(plan.layout.blocks) if plan.layout is not None else 0
        experts_only = placement.n_cpu_moe and placement.gpu_layers == blocks + 1
        if not experts_only:
            continue
        if current.placement.mode == "auto" and placement.n_cpu_moe == current.placement.n_cpu_moe:
            continue  # the report's automatic offload already runs exactly this: not a change to offer
        usable = current.fit.usable_bytes_per_gpu
        verdict = verdict_for(placement.per_gpu_bytes, usable, unified=False)
        if not goal.reached(verdict):
            continue
        speeds = estimate_speeds(model, hardware, scenario, plan, count_parameters(model))
        params = {"n_cpu_moe": placement.n_cpu_moe, "blocks": blocks, "flags": f"--n-cpu-moe {placement.n_cpu_moe}",
                  "offloaded_gib": placement.offloaded_bytes / GIB}
        return FitOption("moe_offload", params, hardware, scenario, verdict, True, plan.fit.required_bytes,
                         placement.per_gpu_bytes, usable, plan.kv_bytes, placement.offloaded_bytes,
                         speeds.decode.tokens_per_s)
    return None


def _more_offload(current: Estimate, goal: _Goal) -> FitOption | None:
    """A larger share of the weights in system RAM than the one the visitor set, the smallest preset that reaches
    the goal (the weights decode at system-RAM speed, which the option's speed shows)."""
    scenario, hardware = current.scenario, current.hardware
    if scenario.offload_pct is None or hardware.kind == "unified":
        return None
    for pct in OFFLOAD_STEPS:
        if pct > scenario.offload_pct and _reaches(current.model, hardware,
                                                   scenario_with(scenario, offload_pct=float(pct)), goal):
            return _option("more_offload", {"offload_pct": pct, "previous": scenario.offload_pct},
                           _changed(current, offload_pct=float(pct)), goal)
    return None


def _more_gpus(current: Estimate, goal: _Goal) -> FitOption | None:
    scenario, hardware = current.scenario, current.hardware
    if hardware.kind == "unified":
        return None  # one machine, one memory pool
    for gpus in range(scenario.gpus + 1, MAX_ADVISED_GPUS + 1):
        if _reaches(current.model, hardware, scenario_with(scenario, gpus=gpus), goal):
            params = {"gpus": gpus, "added": gpus - scenario.gpus}
            return _option("more_gpus", params, _changed(current, gpus=gpus), goal)
    return None


def _larger_accelerator(current: Estimate, goal: _Goal, catalog: Sequence[HardwareSpec]) -> FitOption | None:
    scenario = scenario_with(current.scenario, gpus=1)
    own_usable = engine_usable_bytes(current.hardware, scenario)
    larger = [spec for spec in catalog
              if spec.slug != current.hardware.slug and engine_usable_bytes(spec, scenario) > own_usable]
    larger.sort(key=lambda spec: (spec.memory_gb, spec.price_usd is None, spec.price_usd or 0.0, spec.slug))
    for spec in larger:
        if _reaches(current.model, spec, scenario, goal):
            params = {"slug": spec.slug, "name": spec.name, "memory_gb": spec.memory_gb, "price_usd": spec.price_usd}
            return _option("larger_accelerator", params, _changed(current, hardware=spec, gpus=1), goal)
    return None


# --------------------------------------------------------------------------------------------------------------
# The longest context that fits
# --------------------------------------------------------------------------------------------------------------

# The search steps by llama.cpp's context padding (kv_cache.LLAMA_CPP_CTX_PAD: n_ctx is padded to 256, so a context
# between two multiples takes the larger one's memory); vLLM's --max-model-len takes any value, and 256-token steps
# leave at most 255 tokens of it unused.
CONTEXT_STEP = LLAMA_CPP_CTX_PAD


@dataclass(frozen=True)
class LongestContext:
    """The longest context (tokens per sequence) at which the scenario runs without automatic offload."""

    tokens: int
    limit: int | None  # the model's maximum context; None when not published (the search stops at 1M tokens)
    at_limit: bool  # the model's whole context fits


def longest_context(model: ModelSpec, hardware: HardwareSpec, scenario: Scenario) -> LongestContext | None:
    """The longest context, in steps of CONTEXT_STEP up to the model's limit, at which ``scenario`` (its format, KV
    precision, GPUs, sequences, engine, offload) fits ``hardware`` as the verdict counts it (anything but
    "exceeds"; under vLLM, its pool holds one request of that length, the check vLLM makes at start-up). None when
    not even one step fits. Cached on everything but the context."""
    return _longest_context(model, hardware, scenario_with(scenario, context=CONTEXT_STEP, depth=0))


# Interpolation rounds before the search falls back to bisection (see _longest_context).
INTERPOLATION_ROUNDS = 4


@lru_cache(maxsize=2048)
def _longest_context(model: ModelSpec, hardware: HardwareSpec, scenario: Scenario) -> LongestContext | None:
    limit = model.max_context or CONTEXT_PRESETS[-1]

    def fits_at(context: int) -> bool:
        return fits(model, hardware, scenario_with(scenario, context=context))

    if fits_at(limit):
        return LongestContext(limit, model.max_context, bool(model.max_context))
    if limit <= CONTEXT_STEP or not fits_at(CONTEXT_STEP):
        return None
    # The largest GPU's demand grows with the context piecewise linearly (the KV cache and the attention buffers
    # by the token, a sliding window's cache up to its window), so the crossing with the usable memory is
    # interpolated from the bracket's two demands and checked with its neighbour: 5.4 plans where bisection takes
    # 9.4, both with the two end checks (60 catalog cases whose answer lies inside, cold caches). Each round narrows the bracket [low fits, high does not]; if the demand bends too much
    # for that, bisection finishes. vLLM on Gaudi sizes its usable memory from the weights (fits has no demand to
    # compare there): bisection only.
    low, high = CONTEXT_STEP, limit  # contexts: low fits, high does not
    usable = engine_usable_bytes(hardware, scenario)
    interpolate = not (scenario.engine == "vllm" and vllm_platform(hardware) == "intel-gaudi")
    for _ in range(INTERPOLATION_ROUNDS if interpolate else 0):
        if high - low <= CONTEXT_STEP:
            break
        demand_low = gpu_demand_bytes(model, hardware, scenario_with(scenario, context=low))
        demand_high = gpu_demand_bytes(model, hardware, scenario_with(scenario, context=high))
        if demand_low is None or demand_high is None or demand_high <= demand_low:
            break
        crossing = low + (usable - demand_low) / (demand_high - demand_low) * (high - low)
        guess = min(max(int(crossing) // CONTEXT_STEP * CONTEXT_STEP, low + CONTEXT_STEP), high - CONTEXT_STEP)
        if fits_at(guess):
            low = guess
            if guess + CONTEXT_STEP < high and not fits_at(guess + CONTEXT_STEP):
                high = guess + CONTEXT_STEP
        else:
            high = guess
            if guess - CONTEXT_STEP > low and fits_at(guess - CONTEXT_STEP):
                low = guess - CONTEXT_STEP
    # Bisection over the steps left between low (fits) and high (does not).
    steps = (high - 1) // CONTEXT_STEP
    first_short = first_true(low // CONTEXT_STEP + 1, steps, lambda n: not fits_at(n * CONTEXT_STEP))
    longest = steps if first_short is None else first_short - 1
    return LongestContext(longest * CONTEXT_STEP, model.max_context, False)
