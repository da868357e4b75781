"""The report page's data: one model × one accelerator × one configurator state.

Every figure comes from the sizing engine (reports.sizing) or the catalog; this module only decides which engine
calls a section needs and packs their results for the templates. Formatting happens in the templates.
"""

from __future__ import annotations

import hashlib

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from urllib.parse import quote_plus

from django import forms
from django.core.exceptions import NON_FIELD_ERRORS
from django.http import QueryDict
from django.urls import get_script_prefix, get_urlconf, reverse
from django.utils.safestring import mark_safe
from django.utils.translation import get_language

from reports.charts import VramChart, stacked_bar, vram_chart
from reports.estimates import CatalogSnapshot
from reports.forms import (
    CONTEXT_PRESETS, COST_FIELDS, CUSTOM_HARDWARE_SLUG, KV_OF_ENGINE, ConfiguratorForm, CustomHardwareForm, backend_label,
    engine_backend_labels, field_for_error, scenario_query,
)
from reports.launch import HF_MAX_FILE_BYTES, LaunchCommand, llama_cpp_command, vllm_command
from reports.sizing.economics import DAYS_PER_MONTH, RentComparison, RentVsBuy, monthly_cloud_cost, rent_comparison
from reports.sizing.finetune import FinetuneOptions
from reports.sizing.fit import usable_bytes, usable_factor
from reports.sizing.errors import SizingError
from reports.sizing.advice import FitOption, LongestContext, fit_options, longest_context
from reports.engine_messages import sizing_error_text
from reports.sizing.estimate import (
    GGUF_OF_NATIVE_FORMAT, GPUS_PER_SERVER, VLLM_CHECKPOINT_FORMATS, Estimate, MemoryPlan, Speeds, attention_kind,
    VLLM_ONLY_FORMATS, backend_formats, default_engine, default_kv_dtype, default_quant,
    default_engine_for, default_scenario, engine_runs_on, engines_on, estimate_speeds, finetune_memory, fits, format_runs_on,
    gpu_demand_bytes, kv_cache_known, native_format, native_format_on, offer_order, plan_memory, sizable_on,
    stock_moe_qlora_memory, stream_decode_speed, validate_scenario, vllm_fp8_kv_flag, vllm_lacks_compressed_attention,
    vllm_largest_memory_share, vllm_memory_share, vllm_parallel_sizes, vllm_platform, vllm_refuses,
)
from reports.sizing.kv_cache import resolve_kv_dtype
from reports.sizing.weights import format_applies_to
from reports.methodology import accuracy
from reports.sizing.parameters import ParameterCount, count_parameters
from reports.sizing.quant import quant_format
from reports.sizing.recommend import Recommendations
from reports.sizing.specs import CloudOfferSpec, HardwareSpec, ModelSpec, Scenario, scenario_with

GIB = 2**30
SIXTEEN_BIT_OR_WIDER_KV = frozenset({"f32", "f16", "bf16", "auto"})
SUMMARY_CONTEXTS = (8192, 32768)
# Shared sections that read ReportPage.summary (its configuration is part of their cache key).
# ttm.pages_limit counts 4 KiB pages (noamsto/nix-amd-ai PR #96: pages = GiB × 262144, measured).
TTM_PAGES_PER_GIB = 2**30 // 4096
# The neighbour links (in the details, which an htmx change fetches second): shared per state (shared_section_key).
LINKS_TEMPLATES = frozenset({"reports/report/_links.html"})
SUMMARY_TEMPLATES = frozenset({"reports/report/_summary.html", "reports/report/_description.html"})  # the title sentence and the FAQ quote memory at 8K and 32K, as the seed does
# The quantization matrix: the formats people actually download, best quality first (native row added per model).
MATRIX_FORMATS = ("Q8_0", "Q6_K", "Q5_K_M", "Q4_K_M", "IQ4_XS", "Q3_K_M", "IQ3_XXS", "Q2_K", "UD-Q2_K_XL",
                  "IQ2_XXS", "IQ1_M")
FINETUNE_MODELLED_BACKENDS = frozenset({"cuda", "rocm"})  # bitsandbytes and FlashAttention builds exist for both
CARD_COUNT_TOLERANCE = 0.05  # a model card's parameter counts are rounded (3.6 B, 5.1 B)
CHART_MIN_CONTEXT = 4096
CHART_MIN_MAX_CONTEXT = 131072  # the chart reaches at least 128K even for short-context models (issue 5 §13)


@lru_cache(maxsize=2048)
def _reversed(url_name: str, kwargs: tuple[tuple[str, str], ...], language: str, prefix: str, urlconf) -> str:
    return reverse(url_name, kwargs=dict(kwargs))


def url_pattern(url_name: str, **kwargs: str) -> str:
    """reverse() in the active language, memoized: a report links to ~150 reports and one reverse() costs
    0.13–0.15 ms (timeit). Callers pass placeholders (MODEL-SLUG, HARDWARE-SLUG) and substitute them, one pattern for many links."""
    return _reversed(url_name, tuple(sorted(kwargs.items())), get_language(), get_script_prefix(), get_urlconf())


# What quote_plus leaves as it is (urllib.parse's always-safe characters): a value made only of them is its own
# encoding, as the configurator's are (Q4_K_M, 32768, llama.cpp).
URL_SAFE_CHARACTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-~")


def query_string(pairs: Iterable[tuple[str, object]]) -> str:
    """urllib's urlencode(pairs), quoting only what needs it: urlencode runs quote_plus's four calls on every name
    and value, ~2 µs a pair (timeit), and a report builds ~25 query strings of ~9 pairs."""
    return "&".join([_text_pair(name, value) if type(name) is str and type(value) is str
                     else f"{_quoted(name)}={_quoted(value)}" for name, value in pairs])


@lru_cache(maxsize=4096)
def _text_pair(name: str, value: str) -> str:
    """One name=value of text, quoted once: a page joins ~220 pairs, most of them the same few (gpus=1, hours=4)."""
    return f"{_quoted(name)}={_quoted(value)}"


def _quoted(value: object) -> str:
    """quote_plus(value) as urlencode applies it (to str() of what is neither text nor bytes)."""
    if type(value) is str and URL_SAFE_CHARACTERS.issuperset(value):
        return value
    return quote_plus(value if isinstance(value, (str, bytes)) else str(value))


def report_path(model_slug: str, hardware_slug: str) -> str:
    """The catalog report URL of a model on an accelerator, in the active language."""
    pattern = url_pattern("reports:report", model_slug="MODEL-SLUG", hardware_slug="HARDWARE-SLUG")
    return pattern.replace("MODEL-SLUG", model_slug, 1).replace("HARDWARE-SLUG", hardware_slug, 1)


@dataclass(frozen=True)
class ContextPoint:
    context: int
    required_bytes: float
    kv_bytes: float | None  # None: the KV cache is not known (shown as such, not as 0.00 GiB)
    gpu_bytes: float  # what the GPUs must hold (FitResult.gpu_demand_bytes): the chart plots this against usable
    verdict: str  # the plan's verdict (fit.verdict), as the report's own fit card gives it at this context
    beyond_limit: bool = False  # above the model's max_context (the chart reaches 128K for every model)

    @property
    def fits(self) -> bool:
        """Held by the GPUs, tightly or not (FitResult.fits)."""
        return self.verdict != "exceeds"


@dataclass(frozen=True)
class MatrixRow:
    quant: str
    is_current: bool
    weights_bytes: float
    kv_bytes: float | None
    required_bytes: float
    verdict: str
    decode_tok_s: float
    smallest_fit: HardwareSpec | None
    smallest_fit_url: str  # its report in this row's configuration on one GPU ("" without one)
    source: str  # "per-tensor rule" | "published file size" | ...
    rule_from: str | None = None  # another file type's rules stood in (UD-* without a published size)
    runs: bool = True  # MemoryPlan.runs: a row that does not run has no speed


@dataclass(frozen=True)
class OfferRow:
    offer: CloudOfferSpec
    accelerator: HardwareSpec | None
    total_memory_gb: float
    monthly_usd: float
    fits: bool


@dataclass(frozen=True)
class FinetuneRow:
    method: str
    total_bytes: float
    weights_bytes: float
    trainable_state_bytes: float  # adapters + gradients + optimizer + master weights
    activations_bytes: float
    overhead_bytes: float
    fits: bool
    gpus_needed: int | None


@dataclass(frozen=True)
class ReportRoute:
    """Where a report lives: the catalog model's URL, or a submitted config's (by hash)."""

    url_name: str = "reports:report"
    model_kwarg: str = "model_slug"
    model_key: str = ""

    def path_on(self, hardware_slug: str) -> str:
        """The report URL of this model on `hardware_slug` in the active language."""
        pattern = url_pattern(self.url_name, **{self.model_kwarg: self.model_key, "hardware_slug": "HARDWARE-SLUG"})
        return pattern.replace("HARDWARE-SLUG", hardware_slug, 1)


@dataclass
class ReportPage:
    model: ModelSpec
    hardware: HardwareSpec
    form: ConfiguratorForm
    catalog: CatalogSnapshot
    route: ReportRoute
    estimate: Estimate | None = None
    hardware_form: CustomHardwareForm | None = None  # "my hardware": the visitor's own accelerator, not a catalog one
    # Sections rendered once per request and reused (templatetags/sections.py: the FAQ and its JSON-LD).
    rendered_sections: dict[str, str] = field(default_factory=dict)
    # Why no engine sizes this model on this accelerator at all (not a fault of the query): shown instead of the
    # results, with status 200.
    not_sizable_here: str | None = None
    # The request's query: which configurator fields the visitor set (the form fills the others with defaults).
    query: QueryDict | None = None

    # Cached: every speed and total of the page (each matrix row) asks these two.
    @cached_property
    def speed_upper_bound(self) -> bool:
        """Speeds leave out the per-layer kernel time (no layer count): shown as "≤" (TTFT "≥")."""
        return not self.model.layer_count_known

    @cached_property
    def total_lower_bound(self) -> bool:
        """The KV cache is not known (no shapes, no sourced family member): every total leaves it out and is shown
        as a lower bound ("≥ 63.55 GiB"), as the hardware table and the FAQ's "needs at least" do."""
        return not kv_cache_known(self.model)

    @property
    def hf_max_file_bytes(self) -> float:
        """The largest file Hugging Face stores (launch.HF_MAX_FILE_BYTES): larger GGUFs come in parts."""
        return HF_MAX_FILE_BYTES

    @property
    def replaced_selects_oob(self) -> str:
        """The selects whose value this request replaced (the other engine's KV type or weight format: the form's
        `replaced`), as htmx swaps them in out of band, showing the value the page uses."""
        return mark_safe("".join(self.form[name].as_widget(attrs={"hx-swap-oob": "true"})
                                 for name in self.form.replaced))

    @property
    def invalid_field_count(self) -> int:
        """Fields with a message beside them (an engine's refusal of a valid form is a message of the form's own)."""
        return sum(1 for name in self.form.errors if name != NON_FIELD_ERRORS)

    @property
    def custom_hardware(self) -> bool:
        return self.hardware_form is not None

    @cached_property
    def unified_memory_share(self) -> dict | None:
        """On unified memory: the share of the pool this page counts as usable for the model, and where the
        operating system sets the real one (the fit card says how to describe another share).

        Sources of the fit card's sentences: macOS caps GPU-wired memory at Metal's recommendedMaxWorkingSetSize,
        which follows `sysctl iogpu.wired_limit_mb` and which llama-server --list-devices prints (whichllm issue
        #152, llmfit PR #754, gpustack issue #1375). On Linux an AMD APU's GPU allocates from GTT, half the memory
        by default (rjmalagon/ollama-linux-amd-apu issue #4); amdgpu.gttsize is deprecated for ttm.pages_limit
        (ROCm/legacy-rocm-build issue #5595), in 4 KiB pages: GiB × 262144 (noamsto/nix-amd-ai PR #96, measured)."""
        if self.hardware.kind != "unified":
            return None
        return {"share": usable_factor(self.hardware), "usable_bytes": usable_bytes(self.hardware),
                "memory_gb": self.hardware.memory_gb, "backend": self.hardware.backend,
                "default": self.hardware.usable_memory_factor is None,
                "pages_per_gib": TTM_PAGES_PER_GIB}

    def shared_section_key(self, template_name: str, language: str) -> str | None:
        """Cache key of a section that depends only on model, accelerator, language and catalog (title,
        description, summary, fine-tuning, links): every configuration of this report shares it. None for the
        visitor's own hardware (its specs are in the query) and for snapshots that do not know their catalog
        version."""
        if self.custom_hardware or not self.catalog.version_key:
            return None
        parts = ["report-section", self.catalog.version_key, language, self.route.url_name, self.route.model_key,
                 self.hardware.slug, template_name]
        if template_name in LINKS_TEMPLATES and self.chosen_fields:
            # Its links keep the visitor's state (chosen_fields) and nothing else of it: shared by every request
            # with the same chosen values (the links are ~140 reports' URLs, each checked for what runs there).
            parts.append(hashlib.sha256(query_string(sorted(self.chosen_fields.items())).encode()).hexdigest()[:16])
        if template_name in SUMMARY_TEMPLATES:  # they follow summary_scenario
            s = self.summary_scenario
            parts.append(f"{s.quant}-{s.gpus}-{s.kv_dtype}-{s.engine}-{s.offload_pct}-{s.gpu_memory_utilization:g}"
                         + ("-not-sizable" if self.not_sizable_here else ""))
        return ":".join(parts)

    @cached_property
    def my_hardware_url(self) -> str:
        """This report on "custom" hardware, starting from the current accelerator's specs and configuration."""
        query = CustomHardwareForm.initial_for(self.hardware)
        for name in self.form.fields:
            if self.form.data.get(name) not in (None, "") and name not in self.form.errors:
                query[name] = str(self.form.data[name])  # a refused value would refuse that page too
        if "budget" not in query and self.catalog_budget_usd is not None:
            # A copy of this accelerator starts with its price, as it starts with its specs (custom hardware has no
            # catalog price of its own, so an empty budget there would read "no price known").
            query["budget"] = f"{self.catalog_budget_usd:g}"
        return f"{self.path_on(CUSTOM_HARDWARE_SLUG)}?{query_string(query.items())}"

    # ---- section 1: the summary sentence at the default configuration (scenario-independent, as the seed)
    @cached_property
    def summary(self) -> dict:
        base = self.summary_scenario
        short = self._sized(scenario_with(base, context=SUMMARY_CONTEXTS[0]))
        plan_long = self._planned(scenario_with(base, context=SUMMARY_CONTEXTS[1]))  # its total only: no speeds
        if short is None or plan_long is None:
            return {}
        plan_short, speeds = short
        params = count_parameters(self.model)
        return {"plan": plan_short, "speeds": speeds, "params": params,
                "card_active_without_embedding": self._card_active_without_embedding(params),
                "total_8k": plan_short.fit.required_bytes, "total_32k": plan_long.fit.required_bytes,
                "short_context": SUMMARY_CONTEXTS[0], "long_context": SUMMARY_CONTEXTS[1],
                "gpus": base.gpus, "kv_dtype": base.kv_dtype, "engine": base.engine,
                "where": f"{base.gpus} × {self.hardware.name}" if base.gpus > 1 else self.hardware.name,
                "share_too_small": self._share_too_small(base, plan_short)}

    def _share_too_small(self, scenario: Scenario, plan: MemoryPlan) -> dict | None:
        """Under vLLM, when the visitor's --gpu-memory-utilization is why it does not start and the largest share
        vLLM starts with here would hold it: that share and the budget the current one gives."""
        if scenario.engine != "vllm" or plan.runs:
            return None
        largest = vllm_largest_memory_share(self.hardware)
        if scenario.gpu_memory_utilization >= largest:
            return None
        if not fits(self.model, self.hardware, scenario_with(scenario, gpu_memory_utilization=largest)):
            return None
        return {"share": scenario.gpu_memory_utilization, "budget": plan.fit.usable_bytes_per_gpu, "largest": largest}

    def _card_active_without_embedding(self, params: ParameterCount) -> float | None:
        """The model card's active-parameter count where it leaves out the input embedding, which a token looks up
        rather than multiplies (OpenAI's gpt-oss cards: 3.6 B of our 4.19 B), so the page can say why the two differ;
        most cards count it (DeepSeek-V3 37 B, Qwen3-235B-A22B 22 B). None where they agree or the gap has another
        cause."""
        stated = self.model.stated_params_active
        if not stated or abs(params.active - stated) <= CARD_COUNT_TOLERANCE * stated:
            return None
        return stated if abs(params.matmul_active - stated) <= CARD_COUNT_TOLERANCE * stated else None

    @cached_property
    def summary_scenario(self) -> Scenario:
        """The lead's configuration: the visitor's format, GPU count, engine, KV precision, offload and vLLM's memory
        share, one sequence at the summary's contexts (a link from "what runs on 8 × H100" or a hardware page's Q8_0
        row must not open on a lead about 1 GPU at Q4_K_M); the defaults when the page is not configured or not
        valid."""
        e = self.estimate
        if e is None:
            return default_scenario(self.model, self.hardware)
        s = e.scenario
        return Scenario(quant=s.quant, gpus=s.gpus, kv_dtype=s.kv_dtype, engine=s.engine, offload_pct=s.offload_pct,
                        gpu_memory_utilization=s.gpu_memory_utilization)

    def _sized(self, scenario: Scenario) -> tuple[MemoryPlan, Speeds] | None:
        """Memory plan and speeds of a variant of the configuration (no cost or fine-tuning: cheaper than estimate)."""
        plan = self._planned(scenario)
        if plan is None:
            return None
        return plan, estimate_speeds(self.model, self.hardware, scenario, plan, count_parameters(self.model))

    def _planned(self, scenario: Scenario) -> MemoryPlan | None:
        """The memory plan of a variant of the configuration; None where the engine refuses it."""
        try:
            validate_scenario(scenario)  # e.g. a vLLM checkpoint format under llama.cpp is no variant of it
            return plan_memory(self.model, self.hardware, scenario)
        except SizingError:
            return None

    @cached_property
    def parameters(self):
        """Total and active parameters from the shapes (stated counts for a model without config.json)."""
        return count_parameters(self.model)

    @property
    def attention(self) -> str:
        return attention_kind(self.model)

    @property
    def is_moe(self) -> bool:
        return self.model.moe is not None

    @property
    def vllm_memory_share(self) -> float | None:
        """The --gpu-memory-utilization vLLM runs with here (estimate.vllm_memory_share: capped on unified memory)."""
        if self.estimate is None or self.estimate.scenario.engine != "vllm":
            return None
        return vllm_memory_share(self.hardware, self.estimate.scenario)

    @property
    def vllm_pool_sequences(self) -> float | None:
        """Full-context sequences vLLM's KV pool holds at once, to a tenth and rounded down: 4.99 reads "4.9", as
        the page's "4 of the 8 sequences at a time" counts them, not "5.0"."""
        capacity = self.estimate.runtime.capacity if self.estimate is not None else None
        if capacity is None:
            return None
        return math.floor(capacity.max_concurrency * 10) / 10

    @property
    def fixed_size_layer_kinds(self) -> str | None:
        """Which of the model's cached layers keep a fixed size however long a request grows, for the vLLM pool's
        note: "window" (sliding-window or chunked attention), "recurrent" (Mamba, gated delta-net, conv state) or
        "both"; None when every layer grows with the context. The note named recurrent layers for Gemma 3, which has
        none."""
        kv = self.estimate.kv if self.estimate is not None else None
        if kv is None:
            return None
        window = any(t.window_tokens is not None and not t.padding for t in kv.terms)
        recurrent = any(t.per_sequence and not t.padding for t in kv.terms)
        return "both" if window and recurrent else "window" if window else "recurrent" if recurrent else None

    @property
    def vllm_moe_decode_ratio(self) -> float | None:
        """On a vLLM page of a mixture-of-experts model: at most how many times the measured speed the methodology's
        single-request vLLM decode checks of such models predicted (bench/vllm_decode_accuracy.py)."""
        if self.estimate is None or self.estimate.scenario.engine != "vllm" or not self.is_moe:
            return None
        return accuracy().vllm_decode_summary["moe_max_ratio"]

    @cached_property
    def license(self) -> str:
        """The license as the catalog records it; "" when it does not (or for a pasted config.json)."""
        row = self.catalog.model_row(self.model.slug)
        return row.license if row is not None else ""

    # ---- section 3: the memory bar
    @cached_property
    def memory_bar(self) -> dict:
        memory = self.estimate.memory
        # With offload the weights segment is only what was not moved: labelled so, it does not contradict the
        # weights section's full size.
        weights_key = "weights_kept" if memory.placement.offloaded_bytes > 0 else "weights"
        # So is the KV cache when blocks computed on the CPU keep theirs in system RAM (-ngl below the block count):
        # "KV cache 0.62 GiB" beside "What to change: KV cache 2.50 → 1.33 GiB" read as a contradiction.
        kv_key = "kv_kept" if memory.placement.offloaded_kv_bytes > 0 else "kv"
        parts = [(weights_key, memory.weights_in_gpu_memory_bytes / GIB), (kv_key, memory.kv_in_gpu_memory_bytes / GIB),
                 ("runtime", memory.runtime_bytes / GIB), ("offload", memory.placement.offloaded_bytes / GIB)]
        usable_total = memory.usable_bytes_all_gpus / GIB
        segments, marker = stacked_bar(parts, usable_total)
        # Without a KV estimate (no shapes, no sourced family member) the KV segment is absent, not zero.
        return {"segments": segments, "marker": marker, "usable_gib": usable_total,
                "kv_unknown": self.estimate.kv is None}

    # ---- section 4: decode at a full cache
    @cached_property
    def speeds_full_context(self) -> Speeds:
        """Decode with every sequence's cache full (depth = context): one stream, and the streams together."""
        e = self.estimate
        full = scenario_with(e.scenario, depth=e.scenario.context)
        return estimate_speeds(self.model, self.hardware, full, e.memory, e.params)

    @property
    def decode_full_context(self):
        return self.speeds_full_context.decode

    @property
    def aggregate_full_context(self):
        return self.speeds_full_context.aggregate

    # ---- section 8
    @property
    def backend_label(self) -> str:
        return backend_label(self.hardware.backend)

    @property
    def vllm_backends(self) -> str:
        return engine_backend_labels("vllm")

    @property
    def vllm_needs_shapes(self) -> bool:
        """vLLM's KV pool cannot be sized: no layer shapes and no sourced family member (estimate._plan_vllm)."""
        return not kv_cache_known(self.model)

    @property
    def vllm_refused_architecture(self) -> bool:
        """vLLM has no DeepSeek-V4 attention backend for this GPU's architecture (estimate._plan_vllm)."""
        return self.model.compressed_attention is not None and vllm_lacks_compressed_attention(self.hardware)

    @property
    def vllm_streams_share_a_pool(self) -> bool:
        """vLLM with several sequences and a known KV cache: the page's totals count every sequence at full context,
        its verdicts what vLLM starts with (one full-context sequence), and it says so."""
        e = self.estimate
        return e is not None and e.scenario.engine == "vllm" and e.scenario.batch > 1 and e.kv is not None

    @property
    def finetune_stack_modelled(self) -> bool:
        """The fine-tuning memory models PyTorch with CUDA/ROCm libraries (finetune.py: bitsandbytes NF4 and paged
        AdamW, FlashAttention, the CUDA context): other backends train with their own stacks."""
        return self.hardware.backend in FINETUNE_MODELLED_BACKENDS

    @property
    def llama_cpp_unavailable(self) -> bool:
        """ggml has no backend for this accelerator (Gaudi, Cambricon, ...): the launch section says so."""
        return not engine_runs_on("llama.cpp", self.hardware)

    @property
    def vllm_unavailable(self) -> bool:
        """vLLM has no backend for this accelerator (Apple GPUs): the launch section says so instead of a command."""
        return not engine_runs_on("vllm", self.hardware)

    @cached_property
    def commands(self) -> tuple[LaunchCommand, LaunchCommand]:
        llama, vllm = self._plan_on_engine("llama.cpp"), self._plan_on_engine("vllm")
        if self.vllm_alternative_exceeds or self.vllm_alternative_format_refused:
            vllm = None
        return (llama_cpp_command(self.model, *llama, separate_machines=self.hardware.kind == "unified")
                if llama else None,
                vllm_command(self.model, *vllm, platform=vllm_platform(self.hardware),
                             memory_share=vllm_memory_share(self.hardware, vllm[0])) if vllm else None)

    gpus_per_server = GPUS_PER_SERVER

    @property
    def vllm_parallel_sizes(self) -> tuple[int, int]:
        """(tensor-parallel size, pipeline stages) of the page's GPUs under vLLM: GPUs per server and servers."""
        return vllm_parallel_sizes(self.estimate.scenario.gpus)

    @property
    def commands_in_page_order(self) -> tuple[LaunchCommand | None, LaunchCommand | None]:
        """The page's own engine first (a vLLM page leads with vllm serve)."""
        llama, vllm = self.commands
        return (vllm, llama) if self.estimate.scenario.engine == "vllm" else (llama, vllm)

    @cached_property
    def vllm_alternative_exceeds(self) -> bool:
        """On a llama.cpp page, the vLLM variant of the configuration would not start: vLLM offloads nothing by
        itself, and its plan does not fit (a command for it would fail at start-up)."""
        if self.estimate.scenario.engine == "vllm" or self.vllm_alternative_format_refused:
            return False  # a format vLLM does not run here is the first reason, and the one the page gives
        vllm = self._plan_on_engine("vllm")
        return vllm is not None and vllm[1].fit.verdict == "exceeds"

    @cached_property
    def vllm_alternative_format_refused(self) -> str:
        """On a llama.cpp page, the format vLLM would be asked to serve when vLLM's backend here does not run it
        (vllm-ascend loads no GGUF): the page says so instead of a command that fails; "" otherwise."""
        if self.estimate.scenario.engine == "vllm":
            return ""
        vllm = self._plan_on_engine("vllm")
        return vllm[0].quant if vllm is not None and not vllm[1].format_runs else ""

    @property
    def vllm_formats_here(self) -> str:
        """The formats vLLM's backend runs on this accelerator where it runs only some ("" where it runs all)."""
        return ", ".join(sorted(backend_formats("vllm", self.hardware) or ()))

    @cached_property
    def vllm_alternative_budget(self) -> dict | None:
        """What vLLM would take on this page's configuration (its share and bytes per GPU), for the "no vLLM
        command" sentence of a llama.cpp page."""
        vllm = self._plan_on_engine("vllm")
        if vllm is None:
            return None
        scenario, plan = vllm
        return {"share": vllm_memory_share(self.hardware, scenario), "budget": plan.fit.usable_bytes_per_gpu,
                "demand": plan.fit.fullest_gpu_demand_bytes}

    def _plan_on_engine(self, engine: str) -> tuple[Scenario, MemoryPlan] | None:
        """The configuration on `engine` (its KV type where the other engine has none) and its memory plan: all a
        launch command needs, without the other engine's speeds and cloud costs."""
        e = self.estimate
        if e.scenario.engine == engine:
            return e.scenario, e.memory
        kv_dtype = {"llama.cpp": {"fp8": "q8_0", "auto": "f16"}, "vllm": {"q8_0": "fp8", "q4_0": "fp8"}}[engine].get(
            e.scenario.kv_dtype, e.scenario.kv_dtype)
        quant = e.scenario.quant
        if engine == "llama.cpp":
            quant = GGUF_OF_NATIVE_FORMAT.get(quant, quant)  # gpt-oss's MXFP4 checkpoint is its MXFP4_MOE GGUF
        elif native_format(self.model) in GGUF_OF_NATIVE_FORMAT and quant == GGUF_OF_NATIVE_FORMAT[
                native_format(self.model)]:
            # The GGUF of the released precision (gpt-oss's MXFP4_MOE, an FP16 release's F16): vLLM serves the
            # release itself (vllm serve openai/gpt-oss-20b), not that GGUF through its experimental plugin.
            quant = native_format(self.model)
        if engine == "vllm" and self.model.compressed_attention is not None:
            kv_dtype = default_kv_dtype(self.model, engine)  # fp8_ds_mla only (kv_cache._vllm_dsv4_kv_dtype)
            if quant_format(quant).family.startswith("gguf"):
                quant = native_format(self.model)  # no DeepSeek-V4 GGUF in vLLM
        scenario = scenario_with(e.scenario, engine=engine, kv_dtype=kv_dtype, quant=quant)
        try:
            validate_scenario(scenario)
            return scenario, plan_memory(self.model, self.hardware, scenario)
        except SizingError:
            return None

    # ---- section 10: cloud offers and rent vs buy
    @cached_property
    def fitting_offers(self) -> list[OfferRow]:
        return [row for row in self.offers if row.fits]

    @cached_property
    def doubted_fitting_offers(self) -> list[OfferRow]:
        """The fitting offers whose rate its source does not confirm: each has its price-doubt note under the table."""
        return [row for row in self.fitting_offers if row.offer.price_doubt]

    @cached_property
    def offers(self) -> list[OfferRow]:
        rows = []
        hours = self.cost_inputs["hours"]
        # Whether the model fits depends on the accelerator and the GPU count, not on the provider: each pair is
        # asked once (the seed catalog's 32 offers are 18 pairs).
        fitting: dict[tuple[str, int], bool] = {}
        for offer in sorted(self.catalog.offers, key=offer_order):
            accelerator = self.catalog.hardware.get(offer.accelerator_slug)
            pair = (offer.accelerator_slug, offer.gpu_count)
            if pair not in fitting:
                fitting[pair] = accelerator is not None and self._fits_on(accelerator, offer.gpu_count)
            rows.append(OfferRow(offer, accelerator, (accelerator.memory_gb if accelerator else 0) * offer.gpu_count,
                                 monthly_cloud_cost(offer.hourly_usd, offer.billed_hours_per_day or hours),
                                 fitting[pair]))
        return rows

    def _fits_on(self, accelerator: HardwareSpec, gpus: int) -> bool:
        """Whether `gpus` × `accelerator` hold the configuration without offload (a cloud offer holds the whole
        model: the visitor's offload share is for their own hardware)."""
        return fits(self.model, accelerator, scenario_with(self.estimate.scenario, gpus=gpus, offload_pct=None))

    @cached_property
    def rent_comparison(self) -> RentComparison | None:
        """What the purchase (this accelerator × the configuration's GPU count) is compared with: renting the same,
        else the offer where a token costs least for the same tokens (economics.rent_comparison)."""
        e = self.estimate
        if e is None:
            return None
        # Where it does not run, only the same hardware compares (the card then says there is no break-even).
        return rent_comparison(self.catalog.offers, accelerator_slug=self._purchased_slug, gpus=e.scenario.gpus,
                               hours_per_day=self.cost_inputs["hours"],
                               local_tok_s=e.cost_depth_aggregate_tok_s if self.runs_here else None,
                               cheapest_per_token=e.batch_cost or e.cost)

    @cached_property
    def _purchased_slug(self) -> str:
        """The catalog accelerator a purchase rents like for like: this one, or for "my hardware" the catalog card it
        copies (same name, memory and bandwidth: the "describe your own hardware" link starts from them), so a copy
        whose usable share or power was changed still rents that card's offers."""
        if not self.custom_hardware:
            return self.hardware.slug
        own = self.hardware
        return next((spec.slug for spec in self.catalog.hardware.values()
                     if (spec.name, spec.memory_gb, spec.bandwidth_gbs) == (own.name, own.memory_gb, own.bandwidth_gbs)),
                    own.slug)

    @cached_property
    def rent_offer(self) -> OfferRow | None:
        """The table row of the offer rent vs. buy compares with (rent_comparison)."""
        comparison = self.rent_comparison
        if comparison is None:
            return None
        return next((row for row in self.offers if row.offer == comparison.offer), None)

    @cached_property
    def rent_vs_buy(self) -> RentVsBuy | None:
        e, comparison = self.estimate, self.rent_comparison
        if comparison is None:
            return None
        data = self.cost_inputs
        power = (self.hardware.tdp_w or 0.0) * e.scenario.gpus
        budget = data["budget"]
        if budget is None:
            budget = self.catalog_budget_usd
        return RentVsBuy.compute(hourly_usd=comparison.offer.hourly_usd, power_w=power, hardware_price_usd=budget,
                                 hours_per_day=data["hours"], usd_per_kwh=data["kwh"],
                                 billed_hours_per_day=comparison.offer.billed_hours_per_day,
                                 cloud_hours_per_local_hour=comparison.cloud_hours_per_local_hour)

    @cached_property
    def cost_inputs(self) -> dict[str, float | None]:
        return self.form.cost_inputs()

    @cached_property
    def catalog_budget_usd(self) -> float | None:
        """The default purchase budget: the catalog price of one accelerator × the configuration's GPU count (the
        budget field left empty); None without a price or a valid configuration."""
        if self.hardware.price_usd is None or self.estimate is None:
            return None
        return self.hardware.price_usd * self.estimate.scenario.gpus

    @cached_property
    def runs_here(self) -> bool:
        """Whether the configuration runs on this hardware at all: it fits, or llama.cpp's automatic offload moved
        the rest to system RAM. Buying hardware it does not run on has no break-even."""
        return self.estimate.memory.runs

    days_per_month = DAYS_PER_MONTH
    finetune_options = FinetuneOptions()

    # ---- section 11
    @cached_property
    def finetune(self) -> list[FinetuneRow]:
        """Fine-tuning memory against the accelerator's usable memory. Training does not run inside an inference
        engine, so vLLM's serving budget (gpu_memory_utilization) does not apply: the section is the same for every
        configuration of the report (a shared section)."""
        memories = finetune_memory(self.model)
        if not memories:
            return []
        usable = usable_bytes(self.hardware)
        rows = []
        for method, memory in memories.items():
            gpus_needed = memory.gpus_needed(usable)
            rows.append(FinetuneRow(method, memory.total, memory.weights, memory.training_state, memory.activations,
                                    memory.overhead, gpus_needed == 1, gpus_needed))
        return rows

    @cached_property
    def finetune_stock_moe_qlora(self) -> dict | None:
        """A MoE model's QLoRA on the stock transformers v5 stack (experts kept bf16), beside the default's NF4
        experts: its total and the GPUs it needs here."""
        memory = stock_moe_qlora_memory(self.model)
        if memory is None:
            return None
        return {"total": memory.total, "gpus": memory.gpus_needed(usable_bytes(self.hardware))}

    # ---- section 12: KV growth and 8-bit savings
    @cached_property
    def kv_notes(self) -> dict:
        e = self.estimate
        short, long_ = SUMMARY_CONTEXTS
        eight_bit = "fp8" if e.scenario.engine == "vllm" else "q8_0"
        try:
            at_short = plan_memory(self.model, self.hardware, scenario_with(e.scenario, context=short))
            at_long = plan_memory(self.model, self.hardware, scenario_with(e.scenario, context=long_))
            long_8bit = plan_memory(self.model, self.hardware, scenario_with(e.scenario, context=long_, kv_dtype=eight_bit))
        except SizingError:
            return {}
        if at_long.kv is None or long_8bit.kv is None or at_short.kv is None:
            return {}
        notes = {"kv_short": at_short.kv.total_bytes, "kv_long": at_long.kv.total_bytes,
                 "saving": at_long.kv.total_bytes - long_8bit.kv.total_bytes,
                 "total_long_8bit": long_8bit.fit.required_bytes, "eight_bit": eight_bit,
                 "vllm_flag": vllm_fp8_kv_flag(vllm_platform(self.hardware)),
                 "short": short, "long": long_, "compact_in_use": None}
        if e.scenario.kv_dtype not in SIXTEEN_BIT_OR_WIDER_KV:
            # The cache is already 8-bit or smaller: say what it saves against 16 bits, not "saves 0.00 GiB".
            try:
                long_16bit = plan_memory(self.model, self.hardware, scenario_with(e.scenario, context=long_, kv_dtype="f16"))
            except SizingError:
                return {}
            if long_16bit.kv is None:
                return {}
            notes.update(compact_in_use=e.scenario.kv_dtype,
                         saving=long_16bit.kv.total_bytes - at_long.kv.total_bytes,
                         total_long_8bit=at_long.fit.required_bytes)
        return notes

    # ---- section 13: memory against context
    @cached_property
    def context_points(self) -> list[ContextPoint]:
        e = self.estimate
        top = max(self.model.max_context or CHART_MIN_MAX_CONTEXT, CHART_MIN_MAX_CONTEXT)
        contexts = [c for c in CONTEXT_PRESETS if CHART_MIN_CONTEXT <= c <= top]
        # An offload the visitor chose holds at every context, as on the rest of the page; automatic offload is
        # what the GPUs cannot hold, and the chart shows where that starts: without it.
        offload_pct = e.scenario.offload_pct or 0.0
        points = []
        for context in contexts:
            try:
                plan = plan_memory(self.model, self.hardware, scenario_with(e.scenario, context=context,
                                                                      offload_pct=offload_pct))
            except SizingError:
                continue
            points.append(ContextPoint(context, plan.fit.required_bytes,
                                       plan.kv.total_bytes if plan.kv is not None else None,
                                       plan.fit.gpu_demand_bytes, plan.fit.verdict,
                                       bool(self.model.max_context) and context > self.model.max_context))
        return points

    @cached_property
    def chart(self) -> VramChart | None:
        points = self.context_points
        if len(points) < 2:
            return None
        usable = self.estimate.memory.usable_bytes_all_gpus / GIB
        return vram_chart([(p.context, p.gpu_bytes / GIB, p.verdict) for p in points], usable)

    # ---- section 14
    @cached_property
    def matrix(self) -> list[MatrixRow]:
        e = self.estimate
        formats = [native_format_on(self.model, e.scenario.engine), *MATRIX_FORMATS]
        if e.scenario.engine == "vllm":
            formats[1:1] = VLLM_CHECKPOINT_FORMATS  # before vLLM's experimental GGUF
        if e.scenario.quant not in formats:
            formats.append(e.scenario.quant)
        formats += sorted(backend_formats(e.scenario.engine, self.hardware) or ())  # a backend that runs few
        rows = []
        for quant in dict.fromkeys(formats):
            if quant == e.scenario.quant:
                scenario, plan, decode = e.scenario, e.memory, e.decode  # the page's own row: its estimate has it
            else:
                scenario = scenario_with(e.scenario, quant=quant)
                plan = self._planned(scenario)
                if plan is None:
                    continue
                # A row shows one stream's decode: without the prefill estimate_speeds adds or the streams' aggregate.
                decode = stream_decode_speed(self.model, self.hardware, scenario, plan, self.parameters)
            on_one_gpu = scenario_with(scenario, gpus=1)
            if scenario.gpus == 1:
                # Every accelerator with this one's demand traits needs what this row's plan gives (fits shares the
                # demand by estimate._demand_traits, planning on the first such accelerator a search meets): asked
                # here first, the smallest-fit search reads it from this plan instead of planning another card.
                gpu_demand_bytes(self.model, self.hardware, on_one_gpu)
            smallest = self.catalog.smallest_fitting(self.model, on_one_gpu)
            rows.append(MatrixRow(quant, quant == e.scenario.quant, plan.weights_loaded_bytes,
                                  plan.kv.total_bytes if plan.kv is not None else None, plan.fit.required_bytes,
                                  plan.fit.verdict if plan.format_runs else "unsupported", decode.tokens_per_s,
                                  smallest, self.configured_url(smallest, on_one_gpu) if smallest else "",
                                  plan.weights.source,
                                  plan.weights.rule_from, plan.runs))
        return rows

    # ---- section 2: the longest context that fits
    @cached_property
    def longest_context(self) -> LongestContext | None:
        """The longest context at which this configuration runs without automatic offload (advice.longest_context);
        None when not even 256 tokens fit, the format does not run here or the KV cache is not known."""
        e = self.estimate
        if e is None or not e.memory.format_runs or e.kv is None:
            return None  # without the KV cache the context costs nothing here: no longest context to give
        return longest_context(self.model, self.hardware, e.scenario)

    @cached_property
    def longest_context_url(self) -> str:
        """This configuration at the longest context that fits ("" when that is the current one, none fits or the
        model's limit is not published)."""
        longest, scenario = self.longest_context, self.estimate.scenario if self.estimate else None
        if longest is None or scenario is None or longest.tokens == scenario.context:
            return ""
        if longest.limit is None:
            return ""  # the model's own limit is not known: a link could ask for more than the model takes
        return self.configured_url(self.hardware, scenario_with(scenario, context=longest.tokens))

    # ---- sections 6 and 7
    @cached_property
    def fit_options(self) -> tuple[FitOption, ...]:
        return fit_options(self.model, self.hardware, self.estimate.scenario,
                           hardware_catalog=self.catalog.hardware_catalog)

    @cached_property
    def fit_option_links(self) -> list[tuple[FitOption, str]]:
        return [(option, self.configured_url(option.hardware, option.scenario)) for option in self.fit_options]

    def configured_url(self, hardware: HardwareSpec, scenario: Scenario) -> str:
        """The report URL of `scenario` on `hardware`, keeping the visitor's cost inputs."""
        # Plain pairs and one query_string: the page builds ~20 of these (the matrix's smallest-fit links, the
        # recommendations, what to change), and a QueryDict per link cost ~1 ms of the page.
        pairs = [*scenario_query(scenario), *self._cost_query_on(hardware)]
        if self.hardware_form is not None and hardware.slug == self.hardware.slug:
            pairs += CustomHardwareForm.initial_for(hardware).items()
        return f"{self.path_on(hardware.slug)}?{query_string(pairs)}"

    @cached_property
    def _cost_query(self) -> tuple[tuple[str, str], ...]:
        """The visitor's cost inputs, which every configured link keeps."""
        return tuple((name, self.form.data[name]) for name in COST_FIELDS
                     if self.form.data.get(name) not in (None, "") and name not in self.form.errors)

    def _cost_query_on(self, hardware: HardwareSpec) -> tuple[tuple[str, str], ...]:
        """The cost inputs a link to a report on `hardware` keeps: the hours and the electricity price always, the
        purchase budget only on this accelerator. The budget is the price of the hardware shown (empty: its catalog
        price × the GPU count), so $1,800 for an RTX 4090 read as the price of eight H100s on a recommendation."""
        if hardware.slug == self.hardware.slug:
            return self._cost_query
        return tuple(pair for pair in self._cost_query if pair[0] != "budget")

    @cached_property
    def chosen_fields(self) -> dict[str, str]:
        """The configurator fields the visitor set to other values than the page opens with (valid ones, in the
        form's order), as the form reads them (a KV type replaced for the engine is the replacement): what
        neighbour links keep. A value equal to this page's default is left to the linked page's own default (the
        form sends every field, and Q4_K_M under llama.cpp is not a choice to carry to vLLM's Gaudi)."""
        if self.query is None:
            return {}
        defaults = self.form.default_values
        chosen = {}
        for name, field in self.form.fields.items():
            if self.query.get(name) in (None, "") or name in self.form.errors or self.form.data.get(name) in (None, ""):
                continue
            # A whole number as the form read it: "32768." and "08192" are valid input, and int() of the text
            # answered 500 where a link was built from it. (FloatField and DecimalField subclass IntegerField:
            # their text is kept as typed, "8" hours stays "8".)
            whole = isinstance(field, forms.IntegerField) and not isinstance(field, forms.FloatField | forms.DecimalField)
            value = (str(self.form.cleaned_data[name]) if whole and name in self.form.cleaned_data
                     else str(self.form.data[name]))
            if value != defaults.get(name):
                chosen[name] = value
        return chosen

    def _kv_for(self, engine: str) -> tuple[tuple[str, str], ...]:
        """The chosen KV type as `engine` caches it (llama.cpp's q8_0 is vLLM's fp8: forms.KV_OF_ENGINE),
        or nothing where that engine has no such type. Once per engine: ~130 neighbour links ask."""
        cache = self.__dict__.setdefault("_kv_of_engine", {})
        if engine not in cache:
            cache[engine] = self._chosen_kv_as(engine)
        return cache[engine]

    def _chosen_kv_as(self, engine: str) -> tuple[tuple[str, str], ...]:
        kv = self.chosen_fields.get("kv_dtype")
        if kv is None:
            return ()
        kv = KV_OF_ENGINE.get(engine, {}).get(kv, (kv,))[0]
        try:
            resolve_kv_dtype(kv, engine)
        except SizingError:
            return ()
        return (("kv_dtype", kv),)

    def state_query_on_hardware(self, hardware: HardwareSpec) -> str:
        """The visitor's state as a link to this model on another accelerator keeps it: the format, context, batch,
        KV type and engine where they run there (else that accelerator's defaults) and the hours and electricity
        price (and vLLM's memory share with vLLM); not the GPU count or offload (the hardware one has) nor the
        budget (the price of this accelerator)."""
        chosen = self.chosen_fields
        engine = chosen.get("engine")
        if engine is not None and not engine_runs_on(engine, hardware):
            engine = None
        effective = engine or default_engine_for(self.model, hardware)
        pairs = []
        quant = chosen.get("quant")
        if quant is not None and _quant_runs(quant, effective, hardware, self.model):
            pairs.append(("quant", quant))
        pairs += [(name, chosen[name]) for name in ("context", "batch") if name in chosen]
        pairs += self._kv_for(effective)
        if engine is not None:
            pairs.append(("engine", engine))
            if engine == "vllm" and "gpu_memory_utilization" in chosen:
                pairs.append(("gpu_memory_utilization", chosen["gpu_memory_utilization"]))  # an engine setting
        pairs = _runnable_state(self.model, hardware, effective, pairs)
        pairs += [(name, chosen[name]) for name in ("hours", "kwh") if name in chosen]
        return self._encoded(tuple(pairs))

    def _encoded(self, pairs: tuple[tuple[str, str], ...]) -> str:
        """query_string, once per distinct state: the ~140 neighbour links of a page share a handful of them."""
        cache = self.__dict__.setdefault("_encoded_states", {})
        if pairs not in cache:
            cache[pairs] = query_string(pairs)
        return cache[pairs]

    def state_query_for_model(self, model: ModelSpec) -> str:
        """The visitor's state as a link to another model on this accelerator keeps it: everything but a format the
        model does not come in, a context beyond its limit, and vLLM for a model whose layer shapes it lacks."""
        chosen = self.chosen_fields
        quant, context = chosen.get("quant"), chosen.get("context")
        effective, pairs, costs = self._model_link_state(
            keeps_engine=not (chosen.get("engine") == "vllm" and not kv_cache_known(model)),
            keeps_quant=quant is not None and format_applies_to(model, quant),
            keeps_context=context is not None and not (model.max_context and int(context) > model.max_context))
        return self._encoded(tuple(_runnable_state(model, self.hardware, effective, pairs) + costs))

    def _model_link_state(self, *, keeps_engine: bool, keeps_quant: bool, keeps_context: bool
                          ) -> tuple[str, list[tuple[str, str]], list[tuple[str, str]]]:
        """The engine, the configurator pairs and the cost pairs a link to another model keeps, given what of the
        state applies to that model: ~80 model links share a few such answers, made once each."""
        key = (keeps_engine, keeps_quant, keeps_context)
        cache = self.__dict__.setdefault("_model_link_states", {})
        if key in cache:
            return cache[key]
        engine = self.chosen_fields.get("engine") if keeps_engine else None
        effective = engine or self._default_engine_here
        pairs = []
        for name, value in self.chosen_fields.items():
            if name == "quant" and not (keeps_quant and self._chosen_quant_runs_here(effective)):
                continue
            if name == "context" and not keeps_context:
                continue
            if name == "engine":
                if engine is not None:
                    pairs.append((name, value))
                continue
            if name == "kv_dtype":
                pairs += self._kv_for(effective)
                continue
            pairs.append((name, value))  # the same accelerator: its GPU count, offload, share and budget too
        cache[key] = (effective, [pair for pair in pairs if pair[0] not in COST_FIELDS],
                      [pair for pair in pairs if pair[0] in COST_FIELDS])
        return cache[key]

    @cached_property
    def _default_engine_here(self) -> str:
        return default_engine(self.hardware)

    def _chosen_quant_runs_here(self, engine: str) -> bool:
        """_quant_runs of the chosen format under `engine` on this accelerator: once per engine, as every model
        link asks."""
        cache = self.__dict__.setdefault("_quant_runs_here", {})
        if engine not in cache:
            cache[engine] = _quant_runs(self.chosen_fields["quant"], engine, self.hardware)
        return cache[engine]

    @cached_property
    def hardware_page_url(self) -> str:
        """Every model on this accelerator, in the GPU count and engine of this configuration where its table
        takes them (pages.hardware_gpu_counts_taken: any count on a discrete card; an engine choice only where two
        run)."""
        from reports.pages import hardware_gpu_counts_taken  # pages imports this module
        url = url_pattern("reports:hardware", hardware_slug=self.hardware.slug)
        chosen = self.chosen_fields
        pairs = []
        gpus = int(chosen["gpus"]) if "gpus" in chosen else None  # as the form read it (chosen_fields)
        if gpus is not None and gpus != 1 and gpus in hardware_gpu_counts_taken(self.hardware):
            pairs.append(("gpus", str(gpus)))
        if "engine" in chosen and len(engines_on(self.hardware)) > 1:
            pairs.append(("engine", chosen["engine"]))
        return f"{url}?{query_string(pairs)}" if pairs else url

    @cached_property
    def recommendation_scenario(self) -> Scenario:
        # Hardware to buy or rent holds the model: the visitor's offload share is for the hardware they have. Each
        # recommendation picks its own GPU count (recommend_hardware ignores the scenario's): one count for every
        # configuration that differs only in it, so they share the catalog's cached recommendations.
        return scenario_with(self.estimate.scenario, offload_pct=None, gpus=1)

    @cached_property
    def recommendations(self) -> Recommendations:
        return self.catalog.recommendations(self.model, self.recommendation_scenario)

    @cached_property
    def compare_url(self) -> str | None:
        """The compare page with this accelerator × GPU count preselected in this configuration (the visitor's cost
        inputs kept); None for a config.json model or custom hardware, which the compare page does not hold."""
        if self.route.url_name != "reports:report" or self.custom_hardware or self.estimate is None:
            return None
        scenario = self.estimate.scenario
        pairs = [("hw0", self.hardware.slug), ("n0", str(scenario.gpus)),
                 *((name, value) for name, value in scenario_query(scenario) if name != "gpus"), *self._cost_query]
        return f"{url_pattern('reports:compare', model_slug=self.model.slug)}?{query_string(pairs)}"

    def recommendation_url(self, hardware: HardwareSpec, count: int) -> str:
        """The report of a recommended `count` × `hardware` in the configuration it was chosen for."""
        return self.configured_url(hardware, scenario_with(self.recommendation_scenario, gpus=count))

    # ---- section 16
    @cached_property
    def other_hardware_links(self) -> list[tuple[str, str]]:
        """This model on every other accelerator, keeping the visitor's state where it applies there."""
        pattern = self.route.path_on("HARDWARE-SLUG")
        links = []
        for h in self.catalog.hardware.values():
            if h.slug == self.hardware.slug:
                continue
            query = self.state_query_on_hardware(h) if self.chosen_fields else ""
            url = pattern.replace("HARDWARE-SLUG", h.slug, 1)
            links.append((h.name, f"{url}?{query}" if query else url))
        return links

    @cached_property
    def other_model_links(self) -> list[tuple[str, str]]:
        """Every other model on this accelerator, keeping the visitor's state where it applies to that model."""
        if self.custom_hardware:
            return []  # the catalog's reports are for catalog accelerators
        pattern = report_path("MODEL-SLUG", self.hardware.slug)
        links = []
        for row in self.catalog.model_rows:
            if row.slug == self.model.slug:
                continue
            query = self.state_query_for_model(self.catalog.model(row.slug)) if self.chosen_fields else ""
            url = pattern.replace("MODEL-SLUG", row.slug, 1)
            links.append((row.name, f"{url}?{query}" if query else url))
        return links

    def path_on(self, hardware_slug: str) -> str:
        return self._path_pattern.replace("HARDWARE-SLUG", hardware_slug, 1)

    @cached_property
    def _path_pattern(self) -> str:
        """This report's URL with a HARDWARE-SLUG placeholder: a page renders in one language, and links ~20 reports
        of its model (url_pattern looks up the language, script prefix and URLconf each time)."""
        return self.route.path_on("HARDWARE-SLUG")


def _quant_runs(quant: str, engine: str, hardware: HardwareSpec, model: ModelSpec | None = None) -> bool:
    """Whether a link may carry the format to a report under `engine` on `hardware` (the form refuses a vLLM
    checkpoint format under llama.cpp; a backend that runs few formats would show it as unsupported; with `model`,
    also the tensor types of its GGUF: format_runs_on)."""
    return (format_runs_on(engine, quant, hardware, model)
            and not (engine == "llama.cpp" and quant in VLLM_ONLY_FORMATS))


# What a neighbour link gives up, in this order, when vLLM refuses the state for that model or accelerator (it cannot
# split AWQ's expert width over 8 GPUs, 8 GPUs do not divide Phi-4's 10 KV heads): the format, then the GPU split.
STATE_FALLBACKS = (("quant",), ("quant", "gpus", "gpu_memory_utilization"))


def _runnable_state(model: ModelSpec, hardware: HardwareSpec, engine: str,
                    pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """`pairs` (configurator fields), less what vLLM refuses for this model there (STATE_FALLBACKS), so that a link
    opens on a report and not on a refusal; under llama.cpp every kept field runs (its checks are the form's)."""
    if engine != "vllm" or dict(pairs).keys().isdisjoint(STATE_FALLBACKS[-1]):
        return pairs  # nothing a fallback drops: kept whole whatever vLLM answers
    for dropped in ((), *STATE_FALLBACKS):
        kept = [pair for pair in pairs if pair[0] not in dropped]
        try:
            scenario = _opening_with(model, hardware, engine, dict(kept))
        except ValueError:
            continue
        if not vllm_refuses(model, hardware, scenario):
            return kept
    return [pair for pair in pairs if pair[0] not in STATE_FALLBACKS[-1]]


def _opening_with(model: ModelSpec, hardware: HardwareSpec, engine: str, values: dict[str, str]) -> Scenario:
    """The configuration the report of `model` on `hardware` under `engine` opens with (default_scenario), with
    the configurator fields in `values`: one Scenario, made at once (a default_scenario and a dataclass replace per
    link were a third of a page's neighbour links), and the defaults looked up only for what `values` leaves out."""
    return Scenario(
        quant=values["quant"] if "quant" in values else default_quant(model, hardware, engine),
        kv_dtype=values["kv_dtype"] if "kv_dtype" in values else default_kv_dtype(model, engine),
        engine=engine,  # type: ignore[arg-type]  # one of ENGINES
        context=int(values["context"]) if "context" in values else Scenario.context,
        batch=int(values["batch"]) if "batch" in values else Scenario.batch,
        gpus=int(values["gpus"]) if "gpus" in values else Scenario.gpus,
        gpu_memory_utilization=(float(values["gpu_memory_utilization"]) if "gpu_memory_utilization" in values
                                else Scenario.gpu_memory_utilization))


def build_report(model: ModelSpec, hardware: HardwareSpec, query: QueryDict, catalog: CatalogSnapshot, *,
                 route: ReportRoute, hardware_form: CustomHardwareForm | None = None) -> ReportPage:
    """The report of `model` on `hardware` for the configurator state in `query` (errors stay on the form)."""
    form = ConfiguratorForm(query, quant_names=catalog.quant_names, max_context=model.max_context,
                            default_budget=hardware.price_usd, hardware=hardware, model=model)
    page = ReportPage(model, hardware, form, catalog, route, hardware_form=hardware_form, query=query)
    if not form.is_valid() and not form.only_cost_fields_invalid:
        return page
    try:
        page.estimate = catalog.estimate(model, hardware, form.scenario())
    except SizingError as exc:
        if exc.code == "vllm_needs_shapes" and not sizable_on(model, hardware):
            page.not_sizable_here = sizing_error_text(exc)
        else:
            form.add_error(field_for_error(str(exc)), sizing_error_text(exc))
    return page
