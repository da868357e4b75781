"""Data for the model, hardware, home and search pages (and the 404 suggestions).

Like `reports.report`, this module only decides which engine calls a page needs and packs their results; every
figure comes from the sizing engine or the catalog, and formatting happens in the templates. All catalog reads go
through a `CatalogSnapshot`, so a page that sizes one model on every accelerator (or every model on one
accelerator) makes the same small number of queries whatever the catalog's size.
"""

from __future__ import annotations

import difflib
import unicodedata
import weakref
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any
from urllib.parse import urlencode

from django.http import QueryDict
from django.urls import NoReverseMatch, reverse
from django.utils.translation import gettext_lazy as _

from catalog.models import LLMModel
from reports.estimates import CatalogSnapshot
from reports.forms import MAX_GPUS, scenario_query
from reports.report import SUMMARY_CONTEXTS, ReportPage, report_path
from reports.sizing.errors import SizingError
from reports.sizing.estimate import (
    VLLM_CHECKPOINT_FORMATS, MemoryPlan, attention_kind, backend_formats, default_engine, default_scenario,
    engine_usable_bytes, engines_on, fitting_plan, format_runs_on, gpu_demand_floor_bytes,
    kv_cache_known, native_format, plan_memory, sizable_on, stream_decode_speed, vllm_memory_share,
)
from reports.sizing.runtime import DEVICE_CONTEXT_BYTES
from reports.sizing.quant import quant_format
from reports.sizing.parameters import ParameterCount, count_parameters
from reports.sizing.specs import HardwareSpec, ModelSpec, Scenario, scenario_with

# The configuration every overview quotes: the report's defaults (Q4_K_M weights, FP16 KV cache, one sequence,
# llama.cpp, one GPU), at 8K and at 32K context as the seed's model page does. On an accelerator llama.cpp has no
# backend for, the report's defaults are vLLM's (estimate.default_scenario), and so are the overviews'.
DEFAULT_SCENARIO = Scenario()
SHORT_CONTEXT, LONG_CONTEXT = SUMMARY_CONTEXTS
# The hardware page's "best format that fits": the highest-quality GGUF format of this ladder that fits at 8K with
# headroom (a tight fit only where none does: best_fitting_format).
# These are the formats people download for a fixed memory budget, best quality (most bits per weight) first;
# recipes below Q2_K (IQ2/IQ1, UD dynamic quants) are left out because their quality loss is severe.
FORMAT_LADDER = ("Q8_0", "Q6_K", "Q5_K_M", "Q4_K_M", "IQ4_XS", "Q3_K_M", "Q2_K")
# Every format a hardware table may choose, by quality (runnable_ladder adds F16 and Q4_0 for llama.cpp's CANN).
QUALITY_ORDER = ("BF16", "FP16", "F16", "FP8", "Q8_0", "Q6_K", "Q5_K_M", "Q4_K_M", "MXFP4", "FP8_FP4", "AWQ", "GPTQ",
                 "Q4_0", "IQ4_XS", "Q3_K_M", "Q2_K")
# Sorting by verdict puts the comfortable fits first.
# "unsupported": memory would hold it, but the engine's backend does not run the format (MemoryPlan.format_runs).
VERDICT_RANK = {"fits": 0, "unified": 1, "tight": 2, "exceeds": 3, "unsupported": 4, "unsizable": 5}
MAX_QUERY_LENGTH = 100  # search input beyond this is cut (nobody types a longer model name)


# --------------------------------------------------------------------------------------------------------------
# Sorting and filtering tables from the query string (works without JavaScript; htmx only swaps the table)
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Column:
    key: str
    value: Callable[[Any], Any]  # the row's sort value; None sorts last in both directions
    descending_first: bool = False  # speeds: a first click shows the fastest


@dataclass(frozen=True)
class TableState:
    """The table's sort column and direction and its filters, as parsed from GET (unknown values → defaults)."""

    sort: str
    descending: bool
    vendor: str  # "" = every vendor
    fits_only: bool
    gpus: int = 1  # the hardware page: how many of the accelerator the table sizes for
    engine: str = ""  # the hardware page: the engine chosen ("" = the accelerator's default)
    # (parameter, value) of each value in the query the table does not offer: read as its default, and the page
    # answers 400 with a message, as the report does (an absent value is no error).
    refused: tuple[tuple[str, str], ...] = ()

    def query(self, **changes: Any) -> str:
        """The query string of this state with `changes` applied; defaults are left out to keep URLs short."""
        state = replace(self, **changes)
        query = QueryDict(mutable=True)
        query["sort"] = state.sort
        query["order"] = "desc" if state.descending else "asc"
        if state.vendor:
            query["vendor"] = state.vendor
        if state.fits_only:
            query["fits"] = "1"
        if state.gpus != 1:
            query["gpus"] = str(state.gpus)
        if state.engine:
            query["engine"] = state.engine
        return query.urlencode()


def table_state(query: QueryDict, columns: Sequence[Column], *, default_sort: str, vendors: Iterable[str],
                gpu_counts: Iterable[int] | None = None, engines: Iterable[str] | None = None) -> TableState:
    """The table's state from GET; a value it does not offer (a vendor, GPU count or engine) reads as the default,
    as a filter link would have it. A parameter the table does not read (gpu_counts or engines None: the model
    page's table is sized at one configuration) is ignored whatever its value: report pages link with their state,
    and a shared link with ?engine=llama.cpp or ?quant=… is no bad request to a page that does not use it."""
    keys = {column.key: column for column in columns}
    refused = []

    def offered(name: str, choices) -> str:
        value = query.get(name, "")
        if value == "" or value in choices:
            return value
        refused.append((name, value[:MAX_QUERY_LENGTH]))
        return ""

    sort = offered("sort", keys) or default_sort
    order = offered("order", ("asc", "desc"))
    descending = order == "desc" if order else keys[sort].descending_first
    vendor = offered("vendor", set(vendors))
    gpus = offered("gpus", {str(count) for count in gpu_counts}) if gpu_counts is not None else ""
    engine = offered("engine", set(engines)) if engines is not None else ""
    fits = offered("fits", ("1", "on", "true", "0", "off", "false"))
    return TableState(sort, descending, vendor, fits in ("1", "on", "true"), int(gpus) if gpus else 1, engine,
                      tuple(refused))


# What a refused value's message calls its parameter: the filter's label, as the form shows it ("fits": the page's
# own checkbox label, refused_fields).
TABLE_FIELD_LABELS = {"sort": _("Sort column"), "order": _("Sort order"), "vendor": _("Vendor"),
                      "gpus": _("GPU count"), "engine": _("Inference engine")}


def refused_fields(state: TableState, fits_label: str) -> list[tuple[str, str]]:
    """(label, value) of each refused value, for the message above the table."""
    labels = {**TABLE_FIELD_LABELS, "fits": fits_label}
    return [(labels[name], value) for name, value in state.refused]


def sorted_rows(rows: Iterable[Any], column: Column, *, descending: bool) -> list[Any]:
    """Rows ordered by `column`; rows without a value (unknown) come last in both directions."""
    rows = list(rows)
    known = [row for row in rows if column.value(row) is not None]
    unknown = [row for row in rows if column.value(row) is None]
    return sorted(known, key=column.value, reverse=descending) + unknown


@dataclass(frozen=True)
class SortLink:
    """One sortable column header: where a click goes and what aria-sort says now."""

    key: str
    query: str
    aria_sort: str  # "ascending" | "descending" | "none"


def sort_links(state: TableState, columns: Sequence[Column]) -> dict[str, SortLink]:
    links = {}
    for column in columns:
        if column.key == state.sort:
            links[column.key] = SortLink(column.key, state.query(descending=not state.descending),
                                         "descending" if state.descending else "ascending")
        else:
            links[column.key] = SortLink(column.key, state.query(sort=column.key, descending=column.descending_first),
                                         "none")
    return links


def _rank(verdict: str | None) -> int | None:
    return None if verdict is None else VERDICT_RANK.get(verdict)


# --------------------------------------------------------------------------------------------------------------
# Model page: one model on every accelerator
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AcceleratorRow:
    hardware: HardwareSpec
    usable_bytes: float
    total_short_bytes: float | None  # required at SHORT_CONTEXT (None: the engine cannot size it)
    total_long_bytes: float | None
    decode_tok_s: float | None  # one stream at SHORT_CONTEXT, with automatic offload when it does not fit
    verdict: str | None  # at SHORT_CONTEXT
    report_url: str
    hardware_url: str
    runs: bool = True  # MemoryPlan.runs at SHORT_CONTEXT (decode_tok_s is None when it does not)
    opening: Scenario = DEFAULT_SCENARIO  # the report's defaults there (vLLM where llama.cpp does not run)
    table: Scenario = DEFAULT_SCENARIO  # the table's configuration (table_scenario: the model's own llama.cpp format)

    @property
    def differs_from_table(self) -> bool:
        """This row is sized with another engine or format than the table's heading names: llama.cpp has no backend
        here (vLLM), or its backend does not run the table's format (CANN: Q4_0, Q8_0, F16)."""
        return (self.opening.engine, self.opening.quant) != (self.table.engine, self.table.quant)

    @property
    def fits(self) -> bool:
        return self.verdict is not None and self.verdict not in ("exceeds", "unsupported", "unsizable")


MODEL_TABLE_COLUMNS = (
    Column("name", lambda row: row.hardware.name.casefold()),
    Column("memory", lambda row: row.usable_bytes),
    Column("bandwidth", lambda row: row.hardware.bandwidth_gbs, descending_first=True),
    Column("total_short", lambda row: row.total_short_bytes),
    Column("total_long", lambda row: row.total_long_bytes),
    Column("decode", lambda row: row.decode_tok_s, descending_first=True),
    Column("verdict", lambda row: _rank(row.verdict)),
)


def table_scenario(model: ModelSpec) -> Scenario:
    """The model table's configuration: the model's own default llama.cpp format on any accelerator
    (estimate.default_quant: Q4_K_M, or the file the catalog's GGUF repository publishes where it has no Q4_K_M,
    as gpt-oss's MXFP4_MOE), an FP16 KV cache, one sequence. Rows whose report opens otherwise say why."""
    return default_scenario(model, None, "llama.cpp")


def accelerator_row(model: ModelSpec, hardware: HardwareSpec, params: ParameterCount, *, report_url: str,
                    hardware_url: str) -> AcceleratorRow:
    plans: dict[int, MemoryPlan | None] = {}
    opening = default_scenario(model, hardware)
    for context in (SHORT_CONTEXT, LONG_CONTEXT):
        try:
            plans[context] = plan_memory(model, hardware, scenario_with(opening, context=context))
        except SizingError:
            plans[context] = None
    short, long_ = plans[SHORT_CONTEXT], plans[LONG_CONTEXT]
    decode = None
    if short is not None and short.runs:
        decode = stream_decode_speed(model, hardware, scenario_with(opening, context=SHORT_CONTEXT), short,
                                     params).tokens_per_s
    return AcceleratorRow(
        hardware=hardware, usable_bytes=engine_usable_bytes(hardware, opening),  # the engine the row is sized under
        total_short_bytes=short.fit.required_bytes if short else None,
        total_long_bytes=long_.fit.required_bytes if long_ else None,
        decode_tok_s=decode, verdict=_row_verdict(short) or _unsizable(model, hardware), report_url=report_url,
        hardware_url=hardware_url, runs=short.runs if short else True, opening=opening,
        table=table_scenario(model))


def _unsizable(model: ModelSpec, hardware: HardwareSpec) -> str | None:
    """"unsizable" where no engine sizes the model (vLLM without its layer shapes, no llama.cpp backend)."""
    return None if sizable_on(model, hardware) else "unsizable"


def _row_verdict(plan: MemoryPlan | None) -> str | None:
    if plan is None:
        return None
    return plan.fit.verdict if plan.format_runs else "unsupported"


def default_accelerator(rows: Sequence[AcceleratorRow]) -> HardwareSpec:
    """The accelerator the model page shows the model on.

    The smallest accelerator (by memory) on which the model fits comfortably ("fits" or unified memory), as the
    cheapest way to run it at the default configuration; failing that the smallest with a tight fit; and when
    nothing holds it, the largest accelerator, whose report shows how far off it is and what to change. For GLM-4.5
    this is the Instinct MI325X 256GB, the accelerator the seed page shows. Accelerators sized at the table's engine
    and format come first (see the loop).

    Among accelerators of the same memory (equally suitable: the same verdict tier and size), one whose FP16 TFLOPS
    are published comes first, so the page can show the prefill speed and time to first token (the Arc Pro B60's
    "Prefill: not published" hid them on 17 model pages beside an RTX 4090 of the same 24 GB); then the cheaper (a
    known price before an unknown one), the faster (bandwidth), and the slug, so the choice is deterministic.
    """
    def size(row: AcceleratorRow) -> tuple:
        hardware = row.hardware
        price = hardware.price_usd
        return (hardware.memory_gb, hardware.fp16_tflops is None, price is None, price or 0.0,
                -hardware.bandwidth_gbs, hardware.slug)

    # Rows sized at the table's own engine and format first: the page says "holds it … at Q4_K_M", and an
    # accelerator whose backend runs only Q4_0 (Ascend under CANN) would show other figures than that sentence.
    same_format = [row for row in rows if not row.differs_from_table]
    for candidates in (same_format, rows):
        for acceptable in (("fits", "unified"), ("tight",)):
            fitting = [row for row in candidates if row.verdict in acceptable]
            if fitting:
                return min(fitting, key=size).hardware
    return max(rows, key=lambda row: (row.hardware.memory_gb, row.hardware.bandwidth_gbs)).hardware


def default_hardware_for(model: ModelSpec, catalog: CatalogSnapshot) -> HardwareSpec:
    """default_accelerator's choice for any model spec (a submitted config.json has no model page)."""
    params = count_parameters(model)
    return default_accelerator([accelerator_row(model, hardware, params, report_url="", hardware_url="")
                                for hardware in catalog.hardware.values()])


@dataclass
class ModelPage:
    model_row: LLMModel
    model: ModelSpec
    params: ParameterCount
    rows: list[AcceleratorRow]  # every catalog accelerator, catalog order
    state: TableState
    report: ReportPage  # the model on the default accelerator, for the report's fit and speed blocks

    @property
    def attention(self) -> str:
        return attention_kind(self.model)

    @property
    def speed_upper_bound(self) -> bool:
        return self.report.speed_upper_bound

    @property
    def hardware(self) -> HardwareSpec:
        return self.report.hardware

    @property
    def default_report_url(self) -> str:
        return report_path(self.model.slug, self.hardware.slug)

    @cached_property
    def table_quant(self) -> str:
        """The format the table's heading, status line and the default accelerator's sentence name."""
        return table_scenario(self.model).quant

    @property
    def total_lower_bound(self) -> bool:
        """The KV cache is unknown: every total leaves it out, and is shown as a lower bound ("≥")."""
        return not kv_cache_known(self.model)

    @cached_property
    def vendors(self) -> list[str]:
        return sorted({row.hardware.vendor for row in self.rows}, key=str.casefold)

    @cached_property
    def table(self) -> list[AcceleratorRow]:
        """The rows as the visitor filtered and sorted them."""
        rows = [row for row in self.rows
                if (not self.state.vendor or row.hardware.vendor == self.state.vendor)
                and (not self.state.fits_only or row.fits)]
        column = next(c for c in MODEL_TABLE_COLUMNS if c.key == self.state.sort)
        return sorted_rows(rows, column, descending=self.state.descending)

    @cached_property
    def sort_links(self) -> dict[str, SortLink]:
        return sort_links(self.state, MODEL_TABLE_COLUMNS)

    @cached_property
    def fitting_count(self) -> int:
        return sum(row.fits for row in self.rows)

    @property
    def refused(self) -> list[tuple[str, str]]:
        return refused_fields(self.state, _("Only where it fits"))


def model_page(model_row: LLMModel, query: QueryDict, catalog: CatalogSnapshot,
               report_for: Callable[[HardwareSpec], ReportPage]) -> ModelPage:
    """`report_for(hardware)` builds the report of this model on `hardware` at the default configuration."""
    model = catalog.model(model_row.slug)
    params = count_parameters(model)
    report_url = report_path(model.slug, "HARDWARE-SLUG")
    hardware_url = _path_template("reports:hardware", hardware_slug="HARDWARE-SLUG")
    rows = [accelerator_row(model, hardware, params, report_url=report_url.replace("HARDWARE-SLUG", hardware.slug, 1),
                            hardware_url=hardware_url(hardware.slug))
            for hardware in catalog.hardware.values()]
    vendors = {row.hardware.vendor for row in rows}
    state = table_state(query, MODEL_TABLE_COLUMNS, default_sort="memory", vendors=vendors)
    return ModelPage(model_row, model, params, rows, state, report_for(default_accelerator(rows)))


# --------------------------------------------------------------------------------------------------------------
# Hardware page: every model on one accelerator
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelRow:
    model_row: LLMModel
    params_total: float | None
    quant: str | None  # the best FORMAT_LADDER format that fits at SHORT_CONTEXT; None = none does
    required_bytes: float | None
    decode_tok_s: float | None
    verdict: str | None
    report_url: str  # with ?quant= when a format fits
    model_url: str
    speed_upper_bound: bool = False  # ModelSpec.layer_count_known is False: "≤" before the decode speed
    total_lower_bound: bool = False  # the KV cache is unknown (no shapes, no family member): "≥" before the total
    # Where no format fits: the opening format's decode when llama.cpp's automatic offload keeps it running (what
    # the model page's table shows for the same pair), with the bytes it moves to system RAM.
    offload_quant: str | None = None
    offload_decode_tok_s: float | None = None
    offload_bytes: float | None = None
    # The engine the row is sized under when it is not the table's: the accelerator's default engine runs no format
    # of this model (estimate.default_scenario: gpt-oss's MXFP4 experts under llama.cpp on CANN, so vLLM).
    other_engine: str | None = None

    @property
    def fits(self) -> bool:
        return self.quant is not None

    @property
    def ladder_rank(self) -> int | None:
        """Best quality first (QUALITY_ORDER: F16 and Q4_0 where a backend runs few formats)."""
        if not self.quant:
            return None
        return QUALITY_ORDER.index(self.quant) if self.quant in QUALITY_ORDER else None


HARDWARE_TABLE_COLUMNS = (
    Column("name", lambda row: row.model_row.name.casefold()),
    Column("params", lambda row: row.params_total, descending_first=True),
    Column("format", lambda row: row.ladder_rank),
    Column("total", lambda row: row.required_bytes),
    # An upper bound ("≤", layer count unknown) sorts by its value among the estimates: the "≤" beside it already
    # says what it is, and listed after every estimate in both directions a 427 tok/s bound read as the slowest.
    Column("decode", lambda row: row.decode_tok_s or row.offload_decode_tok_s, descending_first=True),
    # Within a verdict the larger models first: the table opens on the largest models that fit (sorted by size
    # alone it opened on 1-2.8 T models that exceed a 24 GB card).
    Column("verdict", lambda row: _verdict_then_size(row)),
)


def _verdict_then_size(row) -> tuple[int, float] | None:
    rank = _rank(row.verdict)
    return None if rank is None else (rank, -(row.params_total or 0))


def vllm_format_ladder(model: ModelSpec) -> tuple[str, ...]:
    """The formats a hardware table tries under vLLM, in order: the model's released format; BF16, its lossless
    upcast, where vLLM has no kernels for the release (estimate.default_quant opens there too); then the formats of
    estimate.VLLM_CHECKPOINT_FORMATS with fewer bits per weight than the release (an upcast gains no quality)."""
    native = native_format(model)
    bits = quant_format(native).bits_per_weight
    smaller = (quant for quant in VLLM_CHECKPOINT_FORMATS if quant_format(quant).bits_per_weight < bits)
    # FP16 last: the same size as BF16, chosen only where vLLM runs nothing else (the Atlas 300I's float16: its
    # vLLM table read "0 of 83 fit" beside reports that fit in FP16).
    return tuple(dict.fromkeys((native, "BF16", *smaller, "FP16")))


def runnable_ladder(hardware: HardwareSpec, engine: str, ladder: Sequence[str] | None = None) -> tuple[str, ...]:
    """The formats a hardware table chooses from: `ladder` (the engine's: FORMAT_LADDER or VLLM_CHECKPOINT_FORMATS),
    or where the backend runs only a few formats (estimate.backend_formats: llama.cpp's CANN runs F16, Q8_0, Q4_0)
    those of 8 bits and below, and F16 only where it runs nothing smaller (the Ascend 310P); under vLLM the
    formats it has kernels for there (estimate.format_runs_on: BF16 only on Gaudi and on vendor builds)."""
    if ladder is None:
        ladder = VLLM_CHECKPOINT_FORMATS if engine == "vllm" else FORMAT_LADDER
    if engine == "vllm":
        return tuple(quant for quant in ladder if format_runs_on(engine, quant, hardware))
    formats = backend_formats(engine, hardware)
    if formats is None:
        return tuple(ladder)
    runnable = tuple(quant for quant in QUALITY_ORDER if quant in formats and quant != "F16")
    return runnable or tuple(quant for quant in ("F16",) if quant in formats)


def best_fitting_format(model: ModelSpec, hardware: HardwareSpec, scenario: Scenario | None = None,
                        ladder: Sequence[str] | None = None) -> tuple[str, MemoryPlan] | None:
    """The highest-quality format of `ladder` that fits with headroom ("fits" or "unified"), with its plan; only
    where none does, the highest-quality one that fits tightly (less than fit.TIGHT_BUFFER of the usable memory
    left). A tight fit leaves no room for a longer prompt or the engine's own growth, so the RTX 4090's table
    listed Qwen3 Coder 30B-A3B at a tight Q5_K_M (ranked below "fits" rows) although Q4_K_M fits with headroom.

    fitting_plan rejects hopeless formats on a lower bound (weights and KV) without planning them, and when even
    the smallest format's bound is above the GPUs' usable memory the ladder is not walked at all: a model too large
    for the accelerator costs one lookup.
    """
    if scenario is None:
        scenario = default_scenario(model, hardware)

    def fitting(quant: str) -> MemoryPlan | None:
        try:
            return fitting_plan(model, hardware, scenario_with(scenario, quant=quant))
        except SizingError:
            return None  # e.g. vLLM loads no DeepSeek-V4 in this format

    if ladder is None and scenario.engine == "vllm":
        ladder = vllm_format_ladder(model)
    ladder = runnable_ladder(hardware, scenario.engine, ladder)
    if not ladder:
        return None
    # If even the smallest format's lower bound of the GPUs' demand exceeds what they hold, none fits. Only the bound:
    # a plan of the smallest format can fail for a reason of its own (vLLM cannot split AWQ's expert width of 2560
    # over 8 GPUs in 128-wide blocks), which says nothing about the larger formats (Qwen3 Coder 480B fits at FP8).
    smallest = scenario_with(scenario, quant=min(ladder, key=lambda quant: quant_format(quant).bits_per_weight))
    try:
        if gpu_demand_floor_bytes(model, smallest) > engine_usable_bytes(hardware, smallest):
            return None
    except SizingError:
        pass  # the engine refuses that format here: try the ladder
    tight = None
    for quant in ladder:
        plan = fitting(quant)
        if plan is None:
            continue
        if plan.fit.verdict != "tight":
            return quant, plan
        tight = tight or (quant, plan)
    return tight  # None: the smallest format fits, but the engine refuses it for this model (an MXFP4 dense model)


def model_row_on(row: LLMModel, model: ModelSpec, hardware: HardwareSpec, *, report_url: str,
                 model_url: str, gpus: int = 1, engine: str | None = None) -> ModelRow:
    """The model on `gpus` × `hardware` under `engine` (the accelerator's default when None): the best format that
    fits, or the offload speed where none does; its report link opens on that configuration."""
    params = count_parameters(model)
    opening = scenario_with(default_scenario(model, hardware, engine), gpus=gpus)
    other_engine = opening.engine if engine is None and opening.engine != default_engine(hardware) else None
    # The report link opens on the table's configuration: its GPU count and the engine chosen (defaults left out).
    configured = {"gpus": str(gpus)} if gpus != 1 else {}
    if engine:
        configured["engine"] = engine
    best = best_fitting_format(model, hardware, opening)
    if best is None:
        ladder = vllm_format_ladder(model) if opening.engine == "vllm" else None
        verdict = "exceeds" if runnable_ladder(hardware, opening.engine, ladder) else "unsupported"
        if opening.engine == "vllm" and not kv_cache_known(model):
            verdict = "unsizable"  # vLLM's pool needs the layer shapes (a table sized under vLLM by choice)
        elif verdict == "exceeds" and _refused(model, hardware, opening):
            verdict = "unsizable"  # not memory: 8 GPUs do not divide Phi-4's 10 KV heads, V4 needs Hopper
        verdict = _unsizable(model, hardware) or verdict
        offload = _offload_speed(model, hardware, opening, params) if verdict == "exceeds" else None
        return ModelRow(row, params.total or None, None, None, None, verdict,
                        f"{report_url}?{urlencode(configured)}" if configured else report_url, model_url,
                        not model.layer_count_known, **(offload or {}), other_engine=other_engine)
    quant, plan = best
    scenario = scenario_with(opening, quant=quant)
    decode = stream_decode_speed(model, hardware, scenario, plan, params).tokens_per_s
    return ModelRow(row, params.total or None, quant, plan.fit.required_bytes, decode, plan.fit.verdict,
                    f"{report_url}?{urlencode({'quant': quant, **configured})}", model_url,
                    not model.layer_count_known, plan.kv is None, other_engine=other_engine)


def _refused(model: ModelSpec, hardware: HardwareSpec, scenario: Scenario) -> bool:
    """Whether the engine refuses the configuration for a reason other than memory (its plan raises)."""
    try:
        plan_memory(model, hardware, scenario)
    except SizingError:
        return True
    return False


def _offload_speed(model: ModelSpec, hardware: HardwareSpec, opening: Scenario, params: ParameterCount
                   ) -> dict | None:
    """The opening configuration's decode where it runs only by moving weights to system RAM (llama.cpp's automatic
    offload; vLLM offloads nothing by itself), for a table row where no format fits."""
    try:
        plan = plan_memory(model, hardware, opening)
    except SizingError:
        return None
    if not plan.runs or not plan.placement.offloaded_bytes:
        return None
    decode = stream_decode_speed(model, hardware, opening, plan, params).tokens_per_s
    return {"offload_quant": opening.quant, "offload_decode_tok_s": decode,
            "offload_bytes": plan.placement.offloaded_bytes}


@dataclass(frozen=True)
class UsableMemory:
    engine: str
    bytes: float  # per GPU
    share: float  # llama.cpp: of the nominal memory; vLLM: its budget, of the memory the driver reports
    device_context_bytes: float = 0.0  # vLLM: held outside its budget (runtime.DEVICE_CONTEXT_BYTES), counted in


@dataclass
class HardwarePage:
    hardware_row: Any  # catalog.models.Accelerator with `prices` and `cloud_offers` prefetched
    hardware: HardwareSpec
    rows: list[ModelRow]
    state: TableState

    @property
    def usable_bytes(self) -> float:
        """The usable memory per GPU this page's table judges its rows against (its engine's)."""
        return engine_usable_bytes(self.hardware, Scenario(engine=self.engine))  # type: ignore[arg-type]

    @property
    def usable_memory(self) -> list[UsableMemory]:
        """Usable memory per GPU under each engine that runs here, the table's first where two do: llama.cpp's
        share of the memory (fit.usable_bytes), vLLM's budget and device context (estimate.engine_usable_bytes: the
        H100's 71.56 GiB, not llama.cpp's 76.0, is what a vLLM row is judged against)."""
        usable = []
        for engine in sorted(self.engines, key=lambda engine: engine != self.engine):
            scenario = Scenario(engine=engine)  # type: ignore[arg-type]  # one of ENGINES
            vllm = engine == "vllm"
            usable.append(UsableMemory(
                engine, engine_usable_bytes(self.hardware, scenario),
                vllm_memory_share(self.hardware, scenario) if vllm else self.hardware_row.effective_usable_factor,
                DEVICE_CONTEXT_BYTES.get(self.hardware.backend, 0) if vllm else 0.0))
        return usable

    @property
    def ladder(self) -> str:
        """The formats this page's table chooses from (fewer where llama.cpp's backend runs only some)."""
        return ", ".join(runnable_ladder(self.hardware, self.engine))

    @property
    def engine(self) -> str:
        """The engine this page's table sizes with: the visitor's, else vLLM where llama.cpp has no backend."""
        return self.state.engine or default_engine(self.hardware)

    @property
    def gpu_counts(self) -> tuple[int, ...]:
        """The select's counts: 1, 2, 4, 8, and the count a link asked for where it is another (3)."""
        return tuple(sorted({*hardware_gpu_counts(self.hardware), self.state.gpus}))

    @property
    def engines(self) -> tuple[str, ...]:
        """The engines that run here (one alone needs no choice)."""
        return engines_on(self.hardware)

    @property
    def spec_sources(self) -> list[str]:
        """The catalog's "url (what); url (what)" source list, one entry per source."""
        return split_sources(self.hardware_row.spec_sources)

    @cached_property
    def latest_prices(self) -> list:
        """The latest new and the latest used price (each with its as-of date and source)."""
        latest = {}
        for price in self.hardware_row.prices.all():
            current = latest.get(price.condition)
            if current is None or price.as_of > current.as_of:
                latest[price.condition] = price
        return [latest[condition] for condition in ("new", "used") if condition in latest]

    @cached_property
    def offers(self) -> list:
        return sorted((offer for offer in self.hardware_row.cloud_offers.all() if offer.is_active),
                      key=lambda offer: (offer.hourly_usd / offer.gpu_count, offer.provider))

    @cached_property
    def vendors(self) -> list[str]:
        return sorted({row.model_row.vendor for row in self.rows if row.model_row.vendor}, key=str.casefold)

    @cached_property
    def table(self) -> list[ModelRow]:
        rows = [row for row in self.rows
                if (not self.state.vendor or row.model_row.vendor == self.state.vendor)
                and (not self.state.fits_only or row.fits)]
        column = next(c for c in HARDWARE_TABLE_COLUMNS if c.key == self.state.sort)
        return sorted_rows(rows, column, descending=self.state.descending)

    @cached_property
    def sort_links(self) -> dict[str, SortLink]:
        return sort_links(self.state, HARDWARE_TABLE_COLUMNS)

    @cached_property
    def fitting_count(self) -> int:
        return sum(row.fits for row in self.rows)

    @property
    def refused(self) -> list[tuple[str, str]]:
        return refused_fields(self.state, _("Only models that fit"))


# GPU counts a hardware page's table offers: a server's 1, 2, 4 or 8 of a discrete or datacenter accelerator (the
# configurator takes others); a unified-memory machine is one machine.
HARDWARE_PAGE_GPU_COUNTS = (1, 2, 4, 8)


def hardware_gpu_counts(hardware: HardwareSpec) -> tuple[int, ...]:
    return (1,) if hardware.kind == "unified" else HARDWARE_PAGE_GPU_COUNTS


def hardware_gpu_counts_taken(hardware: HardwareSpec) -> Iterable[int]:
    """The GPU counts a hardware page's table sizes for when a link asks: any count the report's configurator takes
    (1 to forms.MAX_GPUS) on a discrete or datacenter accelerator, so a shared link for 3 × RTX 4090 shows 3 GPUs,
    as its report does, rather than a 400 or another count's table; a unified-memory machine is one machine."""
    return (1,) if hardware.kind == "unified" else range(1, MAX_GPUS + 1)


def hardware_page(hardware_row, query: QueryDict, catalog: CatalogSnapshot) -> HardwarePage:
    hardware = catalog.accelerator(hardware_row.slug)
    vendors = {row.vendor for row in catalog.model_rows if row.vendor}
    engines = engines_on(hardware)
    state = table_state(query, HARDWARE_TABLE_COLUMNS, default_sort="verdict", vendors=vendors,
                        gpu_counts=hardware_gpu_counts_taken(hardware), engines=engines if len(engines) > 1 else None)
    report_url = report_path("MODEL-SLUG", hardware.slug)
    model_url = _path_template("reports:model", model_slug="MODEL-SLUG")
    rows = [model_row_on(row, catalog.model(row.slug), hardware,
                         report_url=report_url.replace("MODEL-SLUG", row.slug, 1), model_url=model_url(row.slug),
                         gpus=state.gpus, engine=state.engine or None)
            for row in catalog.model_rows]
    return HardwarePage(hardware_row, hardware, rows, state)


# --------------------------------------------------------------------------------------------------------------
# Home page: entry points computed from the catalog
# --------------------------------------------------------------------------------------------------------------

# Editorial: one widely used open-weight model per family and size class, from laptop to datacenter. Slugs that
# are not (or no longer) in the catalog are skipped.
POPULAR_MODELS = ("llama-3-1-8b-instruct", "qwen3-30b-a3b-instruct-2507", "gpt-oss-20b", "gemma-3-27b-it",
                  "gpt-oss-120b", "llama-3-3-70b-instruct", "glm-4-5-air", "qwen3-235b-a22b-instruct-2507",
                  "glm-4-5", "deepseek-v3-2", "kimi-k2-instruct")
# "What runs on …": a 24 GB graphics card, a 128 GB unified-memory machine and an 8-GPU H100 server, each
# picked from the catalog by its properties (largest bandwidth among the matches) rather than by slug.
# The server runs vLLM: its tensor parallelism has all eight GPUs work on each token, where llama.cpp's layer split
# has them take turns (Llama 3.1 405B: ~11.5 tok/s under llama.cpp at Q4_K_M, ~38 under vLLM at FP8), and a server is
# served from the released checkpoint (or FP8, then AWQ: vllm_format_ladder), not a GGUF.
ENTRY_POINTS = (
    ("24gb", {"memory_gb": 24, "kind": "discrete"}, 1, "llama.cpp"),
    ("128gb-unified", {"memory_gb": 128, "kind": "unified"}, 1, "llama.cpp"),
    ("8xh100", {"slug": "h100-80gb-sxm"}, 8, "vllm"),
)
ENTRY_POINT_LIMIT = 12  # models listed per entry point (the largest that fit)


@dataclass(frozen=True)
class FittingModel:
    name: str
    quant: str
    required_bytes: float
    decode_tok_s: float
    verdict: str
    report_url: str
    speed_upper_bound: bool = False  # ModelSpec.layer_count_known is False: "≤" before the decode speed
    total_lower_bound: bool = False  # the KV cache is unknown (no shapes, no family member): "≥" before the total


@dataclass(frozen=True)
class EntryPoint:
    key: str
    hardware: HardwareSpec
    gpus: int
    models: tuple[FittingModel, ...]  # the largest models that fit at 8K (llama.cpp: Q4_K_M), largest first
    fitting_count: int
    engine: str = "llama.cpp"
    hardware_url: str = ""  # the hardware page, which lists every model (at the best format that fits)


def _entry_hardware(catalog: CatalogSnapshot, criteria: dict) -> HardwareSpec | None:
    """The fastest match (memory bandwidth sets decode speed); among equals the cheaper, then the shorter name
    (the RTX 4090 rather than its China-market 4090 D)."""
    matches = [h for h in catalog.hardware.values() if all(getattr(h, k) == v for k, v in criteria.items())]
    return min(matches, key=lambda h: (-h.bandwidth_gbs, h.price_usd is None, h.price_usd or 0.0, len(h.name), h.slug),
               default=None)


def entry_point(catalog: CatalogSnapshot, key: str, hardware: HardwareSpec, gpus: int,
                engine: str = "llama.cpp") -> EntryPoint:
    template = report_path("MODEL-SLUG", hardware.slug)
    fitting = []
    for row in catalog.model_rows:
        model = catalog.model(row.slug)
        if engine == "vllm":
            # The best format of vLLM's ladder that fits the GPUs (the released checkpoint first).
            scenario = scenario_with(default_scenario(model, hardware, "vllm"), gpus=gpus)
            best = best_fitting_format(model, hardware, scenario)  # an estimated model: its relative's shapes
            if best is None:
                continue
            quant, plan = best
            scenario = scenario_with(scenario, quant=quant)
        else:
            # The report's opening configuration there (vLLM and its format where llama.cpp has no backend), so
            # the link opens on what the entry lists.
            scenario = scenario_with(default_scenario(model, hardware), gpus=gpus)
            plan = fitting_plan(model, hardware, scenario)
            if plan is None:
                continue
        suffix = "?" + urlencode(scenario_query(scenario)) if engine == "vllm" else (f"?gpus={gpus}" if gpus > 1
                                                                                      else "")
        params = count_parameters(model)
        decode = stream_decode_speed(model, hardware, scenario, plan, params).tokens_per_s
        fitting.append((params.total, FittingModel(row.name, scenario.quant, plan.fit.required_bytes, decode,
                                                   plan.fit.verdict,
                                                   template.replace("MODEL-SLUG", row.slug, 1) + suffix,
                                                   not model.layer_count_known, plan.kv is None)))
    fitting.sort(key=lambda item: (-item[0], item[1].name))
    # The hardware page lists every model in the same configuration (its table's GPU count and engine).
    configured = urlencode({"gpus": gpus, "engine": engine}) if gpus > 1 else ""
    return EntryPoint(key, hardware, gpus, tuple(item for _, item in fitting[:ENTRY_POINT_LIMIT]), len(fitting),
                      engine, reverse("reports:hardware", kwargs={"hardware_slug": hardware.slug})
                      + (f"?{configured}" if configured else ""))


@dataclass(frozen=True)
class Link:
    name: str
    url: str
    detail: str = ""


@dataclass(frozen=True)
class HomePage:
    popular: tuple[Link, ...]
    entry_points: tuple[EntryPoint, ...]
    models: tuple[Link, ...]  # every model page
    hardware_by_vendor: tuple[tuple[str, tuple[Link, ...]], ...]  # every hardware page, grouped
    methodology_url: str | None
    model_count: int
    hardware_count: int


def methodology_url() -> str | None:
    """The methodology page, when it exists (another part of the site): never a dead link."""
    try:
        return reverse("reports:methodology")
    except NoReverseMatch:
        return None


# Per snapshot (a catalog change makes a new one) and language (the links carry the language prefix).
_home_pages: weakref.WeakKeyDictionary[CatalogSnapshot, dict[str, HomePage]] = weakref.WeakKeyDictionary()


def home_page(catalog: CatalogSnapshot, language: str) -> HomePage:
    """Computed once per catalog snapshot and language: the entry points size every model three times."""
    pages = _home_pages.setdefault(catalog, {})
    if language not in pages:
        pages[language] = _build_home_page(catalog)
    return pages[language]


def _build_home_page(catalog: CatalogSnapshot) -> HomePage:
    rows = {row.slug: row for row in catalog.model_rows}
    model_url = _path_template("reports:model", model_slug="SLUG")
    hardware_url = _path_template("reports:hardware", hardware_slug="SLUG")
    popular = tuple(Link(rows[slug].name, model_url(slug)) for slug in POPULAR_MODELS if slug in rows)
    entry_points = []
    for key, criteria, gpus, engine in ENTRY_POINTS:
        hardware = _entry_hardware(catalog, criteria)
        if hardware is not None:
            entry_points.append(entry_point(catalog, key, hardware, gpus, engine))
    by_vendor: dict[str, list[Link]] = {}
    for hardware in catalog.hardware.values():
        by_vendor.setdefault(hardware.vendor, []).append(Link(hardware.name, hardware_url(hardware.slug)))
    return HomePage(
        popular=popular, entry_points=tuple(entry_points),
        models=tuple(Link(row.name, model_url(row.slug)) for row in sorted(rows.values(), key=lambda r: r.name.casefold())),
        hardware_by_vendor=tuple((vendor, tuple(links)) for vendor, links in by_vendor.items()),
        methodology_url=methodology_url(), model_count=len(rows), hardware_count=len(catalog.hardware))


def _path_template(name: str, **placeholder: str) -> Callable[[str], str]:
    """reverse() once, then fill the slug in by string replacement (one reverse per page, not per link)."""
    (kwarg, marker), = placeholder.items()
    pattern = reverse(name, kwargs={kwarg: marker})
    return lambda slug: pattern.replace(marker, slug, 1)


# --------------------------------------------------------------------------------------------------------------
# Search (home page, as you type) and suggestions (404 pages)
# --------------------------------------------------------------------------------------------------------------

SEARCH_LIMIT = 8
SUGGESTION_LIMIT = 5
SUGGESTION_CUTOFF = 0.6  # difflib ratio: below this, "suggestions" are mostly noise (llama-3-8b ~ Gaudi 3 128GB)
REPORT_PAIRS_LIMIT = 3  # the search offers reports for the top 3 models × top 3 accelerators


@dataclass(frozen=True)
class Candidate:
    slug: str
    name: str
    vendor: str
    keywords: str = ""  # what else a visitor types for it and its name omits ("24gb" for the RTX 4090)


def _normalized(text: str) -> str:
    """Case- and accent-folded words ("Qwén" finds Qwen), hyphens and underscores as spaces."""
    folded = "".join(char for char in unicodedata.normalize("NFKD", text.casefold())
                     if not unicodedata.combining(char))
    return " ".join(folded.replace("-", " ").replace("_", " ").split())


def _compact(text: str) -> str:
    """Letters and digits only: "llama3.1" is "Llama 3.1" written without its space and dot."""
    return "".join(char for char in text if char.isalnum())


def _word_starts(haystack: str) -> tuple[str, ...]:
    """The haystack from each of its words on, letters and digits only: a typed word matches where a word starts,
    with or without the spaces and dots between ("llama3.1" is "llama 3.1 …"), never inside one ("r1" is no match
    for "Air 106B", "d" none for "NVIDIA")."""
    words = haystack.split()
    return tuple(_compact("".join(words[index:])) for index in range(len(words)))


def _matches(word: str, starts: tuple[str, ...]) -> bool:
    typed = _compact(word)
    return bool(typed) and any(start.startswith(typed) for start in starts)


def rank_matches(query: str, candidates: Iterable[Candidate], limit: int | None) -> list[Candidate]:
    """Candidates matching `query`: every word at the start of a word of the name, slug, vendor or keywords (best:
    the name starts with it), then, when nothing matches that way, the closest names by difflib (typos: "lama 70b",
    "rtx4900")."""
    words = _normalized(query[:MAX_QUERY_LENGTH]).split()
    if not words:
        return []
    candidates = list(candidates)
    scored = []
    for candidate in candidates:
        starts = _word_starts(_normalized(f"{candidate.name} {candidate.slug} {candidate.vendor} {candidate.keywords}"))
        if all(_matches(word, starts) for word in words):
            name = _normalized(candidate.name)
            scored.append(((not _compact(name).startswith(_compact(words[0])), len(name), name), candidate))
    if scored:
        return [candidate for _, candidate in sorted(scored, key=lambda item: item[0])[:limit]]
    return closest(" ".join(words), candidates, limit)


def closest(text: str, candidates: Iterable[Candidate], limit: int | None) -> list[Candidate]:
    """The candidates whose slug or name is closest to `text` (difflib ratio), best first."""
    text = _normalized(text[:MAX_QUERY_LENGTH])
    scored = []
    for candidate in candidates:
        score = max(difflib.SequenceMatcher(None, text, _normalized(candidate.slug)).ratio(),
                    difflib.SequenceMatcher(None, text, _normalized(candidate.name)).ratio())
        if score >= SUGGESTION_CUTOFF:
            scored.append((-score, candidate.name, candidate))
    return [candidate for *_, candidate in sorted(scored, key=lambda item: item[:2])[:limit]]


def model_candidates(catalog: CatalogSnapshot) -> list[Candidate]:
    return [Candidate(row.slug, row.name, row.vendor) for row in catalog.model_rows]


def hardware_candidates(catalog: CatalogSnapshot) -> list[Candidate]:
    # The memory as visitors type it ("4090 24gb"): most names carry it ("RTX 3060 12GB"), some do not ("RTX 4090").
    return [Candidate(h.slug, h.name, h.vendor, f"{h.memory_gb:g}gb") for h in catalog.hardware.values()]


@dataclass(frozen=True)
class SearchResults:
    model_query: str
    hardware_query: str
    models: tuple[Link, ...]
    hardware: tuple[Link, ...]
    reports: tuple[Link, ...]  # model × accelerator reports for the best matches of both queries
    more_models: int = 0  # matches beyond the limit
    more_hardware: int = 0
    either: bool = False  # one text looked for in both (?q=)

    @property
    def all_results_query(self) -> str:
        """The query string of the search page that lists every match (one ?q= when both queries are one)."""
        if self.either or self.model_query == self.hardware_query:
            return urlencode({"q": self.model_query or self.hardware_query})
        return urlencode({key: value for key, value in (("model", self.model_query),
                                                        ("hardware", self.hardware_query)) if value})

    @property
    def searched(self) -> bool:
        return bool(self.model_query or self.hardware_query)

    @property
    def query_text(self) -> str:
        """What was searched for, as one phrase (for the title)."""
        return " · ".join(dict.fromkeys(query for query in (self.model_query, self.hardware_query) if query))


def search(catalog: CatalogSnapshot, model_query: str, hardware_query: str,
           limit: int | None = SEARCH_LIMIT, *, either: bool = False) -> SearchResults:
    """Matches of both queries, at most ``limit`` of each (None: all, the submitted search page), with how many
    more there are, so the list as you type can say so and link to all of them.

    ``either``: one text looked for in both (the site search's ?q=): a side it matches nothing of is left out, so
    ?q=llama lists models without "No accelerator matches “llama”" and an accelerator field filled with "llama"."""
    model_query, hardware_query = model_query.strip()[:MAX_QUERY_LENGTH], hardware_query.strip()[:MAX_QUERY_LENGTH]
    all_models = rank_matches(model_query, model_candidates(catalog), None)
    all_hardware = rank_matches(hardware_query, hardware_candidates(catalog), None)
    if either and all_models and not all_hardware:
        hardware_query = ""
    elif either and all_hardware and not all_models:
        model_query = ""
    models, hardware = all_models[:limit], all_hardware[:limit]
    model_url = _path_template("reports:model", model_slug="SLUG")
    hardware_url = _path_template("reports:hardware", hardware_slug="SLUG")
    report = report_path("MODEL-SLUG", "HARDWARE-SLUG")
    reports = tuple(
        Link(f"{m.name} × {h.name}", report.replace("MODEL-SLUG", m.slug, 1).replace("HARDWARE-SLUG", h.slug, 1))
        for m in models[:REPORT_PAIRS_LIMIT] for h in hardware[:REPORT_PAIRS_LIMIT])
    return SearchResults(model_query, hardware_query,
                         tuple(Link(m.name, model_url(m.slug), m.vendor) for m in models),
                         tuple(Link(h.name, hardware_url(h.slug), h.vendor) for h in hardware), reports,
                         len(all_models) - len(models), len(all_hardware) - len(hardware), either)


@dataclass(frozen=True)
class NotFound:
    """What the 404 page says was not found and which pages come closest."""

    kind: str  # "model" | "hardware" | "page"
    slug: str
    suggestions: tuple[Link, ...]

    def keeping_query(self, query: str) -> NotFound:
        """The suggestions with the visitor's query string (a report's configuration, a table's sort): a typo in
        a slug of /de/report/llama-3-1-8b/rtx-4090/?quant=Q8_0&context=32768 suggested the report without them."""
        if not query:
            return self
        return replace(self, suggestions=tuple(replace(link, url=f"{link.url}?{query}") for link in self.suggestions))


def suggest_models(catalog: CatalogSnapshot, slug: str, url_for: Callable[[str], str]) -> tuple[Link, ...]:
    return tuple(Link(c.name, url_for(c.slug)) for c in rank_matches(slug, model_candidates(catalog),
                                                                       SUGGESTION_LIMIT))


def suggest_hardware(catalog: CatalogSnapshot, slug: str, url_for: Callable[[str], str]) -> tuple[Link, ...]:
    return tuple(Link(c.name, url_for(c.slug)) for c in rank_matches(slug, hardware_candidates(catalog),
                                                                       SUGGESTION_LIMIT))


def model_not_found(catalog: CatalogSnapshot, slug: str, page: str = "reports:model") -> NotFound:
    """An unknown model slug on a model page (or another page of one model: ``page``, e.g. "reports:compare"),
    with the same page of the closest models."""
    return NotFound("model", slug, suggest_models(catalog, slug, _path_template(page, model_slug="SLUG")))


def hardware_not_found(catalog: CatalogSnapshot, slug: str) -> NotFound:
    return NotFound("hardware", slug,
                    suggest_hardware(catalog, slug, _path_template("reports:hardware", hardware_slug="SLUG")))


def report_not_found(catalog: CatalogSnapshot, model_slug: str, hardware_slug: str) -> NotFound:
    """The unknown part of a report URL, with reports for its closest matches (keeping the part that is known)."""
    known_models = {row.slug for row in catalog.model_rows}
    report = report_path("MODEL-SLUG", "HARDWARE-SLUG")
    if model_slug not in known_models:
        fill = lambda slug: report.replace("MODEL-SLUG", slug, 1).replace("HARDWARE-SLUG", hardware_slug, 1)  # noqa: E731
        if hardware_slug not in catalog.hardware:
            return model_not_found(catalog, model_slug)
        return NotFound("model", model_slug, suggest_models(catalog, model_slug, fill))
    fill = lambda slug: report.replace("MODEL-SLUG", model_slug, 1).replace("HARDWARE-SLUG", slug, 1)  # noqa: E731
    return NotFound("hardware", hardware_slug, suggest_hardware(catalog, hardware_slug, fill))


def page_not_found(catalog: CatalogSnapshot, path: str) -> NotFound:
    """Any other unknown URL: suggestions from its last path segment among models and accelerators."""
    segment = next((part for part in reversed(path.strip("/").split("/")) if part), "")[:MAX_QUERY_LENGTH]
    if not segment:
        return NotFound("page", "", ())
    model_url = _path_template("reports:model", model_slug="SLUG")
    hardware_url = _path_template("reports:hardware", hardware_slug="SLUG")
    suggestions = suggest_models(catalog, segment, model_url) + suggest_hardware(catalog, segment, hardware_url)
    return NotFound("page", segment, suggestions[:SUGGESTION_LIMIT])


def split_sources(text: str) -> list[str]:
    """The "; "-separated sources of a spec_sources field, one per item: a ";" inside parentheses belongs to the
    source it explains ("… (575W; FP16 sparse 838.4)")."""
    sources, depth, current = [], 0, []
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == ";" and depth <= 0:
            sources.append("".join(current))
            current = []
        else:
            current.append(char)
    sources.append("".join(current))
    return [source.strip() for source in sources if source.strip()]
