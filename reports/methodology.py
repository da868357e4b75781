"""Data of the methodology page: the engine's constants and the measured accuracy.

Constants are read from the engine modules on every call (never retyped), so the page shows what the engine
computes with. Measured accuracy comes from ``reports/data/accuracy.json``, written by
``bench/accuracy.py --json`` from the same section functions the benchmark prints; the web process only reads
it (the benchmarks take about a second). ``tests/test_methodology.py`` regenerates it in-process and fails when
it differs from the committed file. Chart geometry (log-log scatter) is computed here; templates only format.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from reports.sizing import (
    config_parser, economics, estimate, finetune, fit, kv_cache, parallelism, runtime, throughput, weights,
)
from reports.sizing.quant import GGML_TYPES, QUANT_FORMATS

ACCURACY_PATH = Path(__file__).resolve().parent / "data" / "accuracy.json"
WORST_ROWS_SHOWN = 8
GIB = 2**30
MIB = 2**20


# --------------------------------------------------------------------------------------------- accuracy


@dataclass(frozen=True)
class AccuracySummary:
    """One line of the accuracy table: a metric, how many rows were scored, median and max |error|."""

    key: str  # "weights", "kv", "llama_cpp_buffers", "llama_cpp_dsv4_compute", "vllm_kv_tokens", "vllm_quantized_moe",
    #           "decode", "prefill", "vllm_prefill", "vllm_decode"
    scored: int
    unscored: int  # rows shown for reference (custom recipes, informational, skipped, ./main averages)
    median_abs_error: float  # fraction
    max_abs_error: float  # fraction
    target: float | None = None  # the target for the median, where one is set


@dataclass(frozen=True)
class Tick:
    x: float  # pixel x of the value on the horizontal axis
    y: float  # pixel y of the value on the vertical axis
    value: float


@dataclass(frozen=True)
class ScatterPoint:
    x: float  # pixels
    y: float
    label: str  # what was measured (model, format, GPU, test): data, not prose
    measured: float  # in the chart's unit
    predicted: float
    error: float  # signed fraction


@dataclass(frozen=True)
class ScatterSeries:
    key: str  # css class suffix and label key: "weights", "decode", "prefill"
    points: tuple[ScatterPoint, ...]


@dataclass(frozen=True)
class ScatterChart:
    """Predicted (y) against measured (x) on equal log axes: the diagonal is a perfect prediction."""

    width: int
    height: int
    left: int
    top: int
    plot_size: int
    ticks: tuple[Tick, ...]  # the same values on both axes
    diagonal: tuple[float, float, float, float]  # x1, y1, x2, y2
    band: tuple[tuple[float, float, float, float], ...]  # ± band lines (same form), empty without a band
    band_fraction: float | None
    series: tuple[ScatterSeries, ...]

    @property
    def bottom(self) -> int:
        return self.top + self.plot_size

    @property
    def right(self) -> int:
        return self.left + self.plot_size


def log_scatter(series: dict[str, list[tuple[str, float, float, float]]], *, band: float | None = None,
                size: int = 420) -> ScatterChart:
    """Geometry of a log-log predicted-vs-measured scatter.

    ``series``: key → [(label, measured, predicted, signed error)], values > 0 in one unit. Both axes span the
    same whole decades around every value, so y = x is the square's diagonal; ``band`` draws y = (1 ± band)·x.
    """
    left, top, right, bottom = 64, 12, 28, 44  # room for the tick labels (the last x label is centred on the edge)
    values = [v for points in series.values() for _, measured, predicted, _ in points for v in (measured, predicted)]
    low = math.floor(math.log10(min(values)))
    high = max(math.ceil(math.log10(max(values))), low + 1)
    span = high - low

    def offset(value: float) -> float:
        return (math.log10(value) - low) / span * size

    def to_x(value: float) -> float:
        return round(left + offset(value), 1)

    def to_y(value: float) -> float:
        return round(top + size - offset(value), 1)

    multiples = (1, 2, 5) if span <= 3 else (1,)
    tick_values = [m * 10.0**d for d in range(low, high + 1) for m in multiples if m * 10.0**d <= 10.0**high]
    ticks = tuple(Tick(to_x(v), to_y(v), v) for v in tick_values)
    lo_value, hi_value = 10.0**low, 10.0**high
    diagonal = (to_x(lo_value), to_y(lo_value), to_x(hi_value), to_y(hi_value))
    band_lines: tuple[tuple[float, float, float, float], ...] = ()
    if band:
        band_lines = tuple(_clipped_line(factor, lo_value, hi_value, to_x, to_y) for factor in (1 + band, 1 - band))
    chart_series = tuple(
        ScatterSeries(key, tuple(ScatterPoint(to_x(m), to_y(p), label, m, p, e) for label, m, p, e in points))
        for key, points in series.items()
    )
    return ScatterChart(size + left + right, size + top + bottom, left, top, size, ticks, diagonal, band_lines,
                        band, chart_series)


def _clipped_line(factor: float, lo: float, hi: float, to_x, to_y) -> tuple[float, float, float, float]:
    """y = factor·x inside the square [lo, hi]²."""
    x1, x2 = (lo, hi / factor) if factor > 1 else (lo / factor, hi)
    return (to_x(x1), to_y(x1 * factor), to_x(x2), to_y(x2 * factor))


@dataclass(frozen=True)
class WeightRow:
    """A weights check in the unit its source published (GiB rows compare tensor data, GB/bytes whole files)."""

    model: str
    quant: str
    unit: str  # "GiB", "GB" or "B"
    digits: int  # decimals shown: 2, or 0 for exact byte counts
    published: float  # in `unit`
    predicted: float | None
    error: float | None  # signed fraction; None = not scored
    note: str


_WEIGHT_UNITS = {"GiB": ("GiB", GIB, 2), "GB": ("GB", 1e9, 2), "bytes": ("B", 1, 0)}


def _weight_row(row: dict) -> WeightRow:
    symbol, scale, digits = _WEIGHT_UNITS[row["unit"]]
    predicted = None if row["predicted_bytes"] is None else row["predicted_bytes"] / scale
    return WeightRow(row["model"], row["quant"], symbol, digits, row["published_bytes"] / scale, predicted,
                     row["error"], row["note"])


@dataclass(frozen=True)
class Publication:
    """Where measurement rows come from: a URL, a repository ("github:owner/name") or a tool name."""

    label: str
    url: str  # "" when the source is not an address
    rows: int


def _publications(sources: list[str]) -> tuple[Publication, ...]:
    """Rows per publication (the first word of each row's source), most rows first."""
    counts: dict[str, int] = {}
    for source in sources:
        label = source.split(" ")[0]
        counts[label] = counts.get(label, 0) + 1
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return tuple(Publication(label, _source_url(label), rows) for label, rows in ranked)


def _source_url(label: str) -> str:
    if label.startswith(("https://", "http://")):
        return label
    if label.startswith("github:"):
        return "https://github.com/" + label.removeprefix("github:")
    return ""


@dataclass(frozen=True)
class VllmPrefillFit:
    """What the methodology page says about vLLM's fitted prefill efficiency, from the snapshot's rows."""

    model_name: str  # the fit rows' model and accelerator (one setup)
    accelerator_name: str
    shortest_prompt: int
    longest_prompt: int
    error_at_shortest: float
    error_at_longest: float
    same_setup_checks: int  # check rows of the fit rows' model on their accelerator (another publication)
    independent_checks: tuple[dict, ...]  # the other check rows, worst last


def vllm_prefill_fit(rows: tuple[dict, ...]) -> VllmPrefillFit:
    fit = sorted((r for r in rows if r["role"] == "fit"), key=lambda r: r["prompt_tokens"])
    setups = {(r["model"], r["accelerator"]) for r in fit}
    checks = [r for r in rows if r["role"] == "check"]
    independent = [r for r in checks if (r["model"], r["accelerator"]) not in setups]
    return VllmPrefillFit(fit[0]["model_name"], fit[0]["accelerator_name"], fit[0]["prompt_tokens"],
                          fit[-1]["prompt_tokens"], fit[0]["error"], fit[-1]["error"],
                          len(checks) - len(independent), tuple(sorted(independent, key=lambda r: abs(r["error"]))))


@dataclass(frozen=True)
class Accuracy:
    summaries: tuple[AccuracySummary, ...]
    weights_chart: ScatterChart
    speed_chart: ScatterChart
    weights_rows: tuple[WeightRow, ...]
    kv_rows: tuple[dict, ...]
    runtime_rows: tuple[dict, ...]
    speed_rows: tuple[dict, ...]
    worst_speed_rows: tuple[dict, ...]  # the largest |error| among scored decode and prefill rows, worst first
    fitted_parameters: frozenset[str]  # "cuda.bandwidth_efficiency", ...: constants fitted, not borrowed
    weight_sources: tuple[Publication, ...]
    speed_sources: tuple[Publication, ...]
    vllm_prefill_summary: dict  # bench/vllm_prefill_accuracy.section()'s summary: fit and check rows, errors
    vllm_prefill_rows: tuple[dict, ...]
    vllm_prefill_fit: VllmPrefillFit
    vllm_decode_summary: dict  # bench/vllm_decode_accuracy.section()'s summary: check rows, errors, dense rows
    vllm_decode_rows: tuple[dict, ...]

    def summary(self, key: str) -> AccuracySummary:
        return next(s for s in self.summaries if s.key == key)


def load_snapshot(path: Path = ACCURACY_PATH) -> dict:
    with path.open(encoding="utf-8") as handle:
        return json.load(handle)


@lru_cache(maxsize=1)
def accuracy() -> Accuracy:
    """The committed snapshot turned into summaries, charts and table rows (read once per process)."""
    return build_accuracy(load_snapshot())


def build_accuracy(snapshot: dict) -> Accuracy:
    weights_data, kv_data = snapshot["weights"], snapshot["kv"]
    runtime_data, speed_data = snapshot["runtime"], snapshot["speed"]
    speed_summary = speed_data["summary"]
    speed_rows = tuple(speed_data["rows"])
    scored_speed = [r for r in speed_rows if r["scored"]]
    summaries = (
        _summary("weights", weights_data["summary"]["scored"], weights_data["summary"]["excluded"],
                 weights_data["summary"]),
        _section_summary("kv", kv_data["summary"]),
        _section_summary("llama_cpp_buffers", runtime_data["summary"]["llama_cpp_buffers"]),
        _section_summary("llama_cpp_dsv4_compute", runtime_data["summary"]["llama_cpp_dsv4_compute"]),
        _section_summary("vllm_kv_tokens", runtime_data["summary"]["vllm_kv_tokens"]),
        _section_summary("vllm_quantized_moe", runtime_data["summary"]["vllm_quantized_moe"]),
        _speed_summary("decode", speed_summary, speed_rows, speed_summary["decode_target"]),
        _speed_summary("prefill", speed_summary, speed_rows, speed_summary["prefill_target"]),
        _section_summary("vllm_prefill", snapshot["vllm_prefill"]["summary"]),
        _section_summary("vllm_decode", snapshot["vllm_decode"]["summary"]),
    )
    weights_points = [
        (f"{r['model']} {r['quant']}", r["published_bytes"] / GIB, r["predicted_bytes"] / GIB, r["error"])
        for r in weights_data["rows"] if r["error"] is not None
    ]
    speed_points = {
        kind: [(f"{r['gpu']} · {r['model']} {r['quant']} {r['test']} ({r['backend']})", r["measured_tok_s"],
                r["predicted_tok_s"], r["error"])
               for r in scored_speed if _is_decode(r) == (kind == "decode")]
        for kind in ("decode", "prefill")
    }
    return Accuracy(
        summaries=summaries,
        weights_chart=log_scatter({"weights": weights_points}),
        speed_chart=log_scatter(speed_points, band=speed_summary["decode_target"]),
        weights_rows=tuple(_weight_row(r) for r in weights_data["rows"]),
        kv_rows=tuple(kv_data["rows"]),
        runtime_rows=tuple(runtime_data["rows"]),
        speed_rows=speed_rows,
        worst_speed_rows=tuple(sorted(scored_speed, key=lambda r: -abs(r["error"]))[:WORST_ROWS_SHOWN]),
        fitted_parameters=frozenset(speed_summary["fitted_parameters"]),
        weight_sources=_publications([r["source"] for r in weights_data["rows"]]),
        speed_sources=_publications([r["source"] for r in speed_rows]),
        vllm_prefill_summary=snapshot["vllm_prefill"]["summary"],
        vllm_prefill_rows=tuple(snapshot["vllm_prefill"]["rows"]),
        vllm_prefill_fit=vllm_prefill_fit(tuple(snapshot["vllm_prefill"]["rows"])),
        vllm_decode_summary=snapshot["vllm_decode"]["summary"],
        vllm_decode_rows=tuple(snapshot["vllm_decode"]["rows"]),
    )


def _summary(key: str, scored: int, unscored: int, data: dict, target: float | None = None) -> AccuracySummary:
    return AccuracySummary(key, scored, unscored, data["median_abs_error"], data["max_abs_error"], target)


def _section_summary(key: str, data: dict) -> AccuracySummary:
    return _summary(key, data["scored"], data["rows"] - data["scored"], data)


def _is_decode(row: dict) -> bool:
    return row["test"].startswith("tg")  # llama-bench tgN / ./main "tg (avg eval)"; pp rows are prefill


def _speed_summary(kind: str, summary: dict, rows: tuple[dict, ...], target: float) -> AccuracySummary:
    mine = [r for r in rows if _is_decode(r) == (kind == "decode")]
    errors = [abs(r["error"]) for r in mine if r["scored"]]
    return AccuracySummary(kind, summary[f"{kind}_rows"], len(mine) - len(errors),
                           summary[f"{kind}_median_abs_error"], max(errors), target)


# -------------------------------------------------------------------------------------------- constants


@dataclass(frozen=True)
class BlockTypeRow:
    name: str
    block_weights: int
    block_bytes: int
    bits_per_weight: float


@dataclass(frozen=True)
class FormatRow:
    name: str
    base_type: str  # ggml block type of most matrices ("" for native formats)
    bits_per_weight: float  # whole-model figure (GGUF: llama.cpp's Llama-3.1-8B table)


@dataclass(frozen=True)
class CalibrationRow:
    backend: str
    bandwidth_efficiency: float
    layer_overhead_us: float
    compute_efficiency: float
    moe_layer_overhead_factor: float
    gemm_half_width: float
    decode_rows: int
    prefill_rows: int
    borrowed: tuple[str, ...]  # fields taken from another backend class (no rows to fit them on)


@dataclass(frozen=True)
class EngineConstants:
    """Every figure the page quotes, converted to display units (formatting stays in the template)."""

    block_types: tuple[BlockTypeRow, ...]
    gguf_formats: tuple[FormatRow, ...]
    native_formats: tuple[FormatRow, ...]
    gguf_header_bytes_per_vocab_entry: int
    fp8_block: int
    int4_group: int
    kv_dtype_bytes: tuple[tuple[str, float], ...]
    llama_cpp_kv_dtypes: tuple[str, ...]
    vllm_kv_dtypes: tuple[str, ...]
    llama_cpp_ctx_pad: int
    vllm_block_size: int
    recurrent_state_bytes_llama_cpp: float
    fa_off_embd_tensors: int
    device_context_mib: float
    dsv4_allocator_overhead: float
    vllm_version: str
    vllm_sampler_bytes_per_logit: int
    vllm_sort_sampler_bytes_per_logit: int
    vllm_triton_sampler_since: str
    vllm_forward_ffn_tensors: int
    vllm_forward_hidden_tensors: int
    vllm_non_torch_tp1_gib: float
    vllm_non_torch_tp_gib: float
    vllm_graph_base_gib: float
    vllm_graph_per_layer_gib: float
    vllm_large_gpu_gib: float
    vllm_large_gpu_defaults: tuple[int, int]
    vllm_small_gpu_defaults: tuple[int, int]
    vllm_hpu_graph_share: float
    usable_factor_discrete: float
    usable_factor_unified: float
    tight_buffer: float
    calibration: tuple[CalibrationRow, ...]
    ram_bandwidth_gbs: float
    pcie_gbs: float
    cann_formats: str
    cann_310p_formats: str
    mxfp4_marlin: parallelism.Mxfp4ExpertPadding
    mxfp4_hopper: parallelism.Mxfp4ExpertPadding
    mxfp4_sm100: parallelism.Mxfp4ExpertPadding
    mxfp4_rocm: parallelism.Mxfp4ExpertPadding
    mxfp4_gfx950: parallelism.Mxfp4ExpertPadding
    pcie5_gbs: float
    pcie6_gbs: float
    hopper_tensor_peak_share: float
    default_ubatch: int
    vllm_prefill_efficiency: float
    allreduces_per_layer: int
    nvlink_allreduce_latency_us: float
    pcie_allreduce_latency_us: float
    days_per_month: float
    hours_per_day: float
    usd_per_kwh: float
    optimizer_bytes: tuple[tuple[str, float], ...]
    default_optimizers: tuple[tuple[str, str], ...]  # (method, optimizer)
    nf4_bits: float
    finetune_cuda_context_mib: float
    loss_head_bytes_per_logit: int
    loss_head_forward_bytes_per_logit: int
    dsv4_csa_ratio: int
    dsv4_hca_ratio: int
    dsv4_vllm_entry_bytes: int
    dsv4_vllm_indexer_entry_bytes: int
    dsv4_vllm_block_tokens: int
    dsv4_vllm_page_alignment: int


# Constants of a backend class that it takes from another class instead of fitting them (see the comment above
# throughput.CALIBRATION): the snapshot's fitted_parameters says which ones were fitted.
_CALIBRATION_FIELDS = ("bandwidth_efficiency", "layer_overhead_us", "compute_efficiency",
                       "moe_layer_overhead_factor", "gemm_half_width")


def _calibration_rows(fitted: frozenset[str]) -> tuple[CalibrationRow, ...]:
    rows = []
    for backend, c in throughput.CALIBRATION.items():
        borrowed = tuple(f for f in _CALIBRATION_FIELDS if f"{backend}.{f}" not in fitted)
        rows.append(CalibrationRow(backend, c.bandwidth_efficiency, c.layer_overhead_s * 1e6, c.compute_efficiency,
                                   c.moe_layer_overhead_factor, c.gemm_half_width, c.decode_rows, c.prefill_rows,
                                   borrowed))
    return tuple(rows)


def engine_constants(fitted_parameters: frozenset[str] = frozenset()) -> EngineConstants:
    """The engine's constants as they are now (cheap: a few dozen attribute reads)."""
    formats = QUANT_FORMATS.values()
    return EngineConstants(
        block_types=tuple(sorted((BlockTypeRow(t.name, t.block_weights, t.block_bytes, t.bits_per_weight)
                                  for t in GGML_TYPES.values()), key=lambda t: -t.bits_per_weight)),
        gguf_formats=tuple(FormatRow(f.name, f.base_type or "", f.bits_per_weight)
                           for f in formats if f.family == "gguf"),
        native_formats=tuple(FormatRow(f.name, "", f.bits_per_weight)
                             for f in formats if f.family in ("native", "awq-gptq")),
        gguf_header_bytes_per_vocab_entry=weights.GGUF_HEADER_BYTES_PER_VOCAB_ENTRY,
        fp8_block=weights.FP8_BLOCK,
        int4_group=weights.INT4_GROUP,
        kv_dtype_bytes=tuple(kv_cache.KV_DTYPE_BYTES.items()),
        llama_cpp_kv_dtypes=tuple(sorted(kv_cache.ENGINE_KV_DTYPES["llama.cpp"])),
        vllm_kv_dtypes=tuple(sorted(kv_cache.ENGINE_KV_DTYPES["vllm"])),
        llama_cpp_ctx_pad=kv_cache.LLAMA_CPP_CTX_PAD,
        vllm_block_size=kv_cache.VLLM_BLOCK_SIZE,
        recurrent_state_bytes_llama_cpp=kv_cache.LLAMA_CPP_RECURRENT_STATE_BYTES,
        fa_off_embd_tensors=runtime.LLAMA_CPP_FA_OFF_EMBD_TENSORS,
        device_context_mib=runtime.DEVICE_CONTEXT_BYTES["cuda"] / MIB,
        dsv4_allocator_overhead=runtime.DSV4_ALLOCATOR_OVERHEAD,
        vllm_version=".".join(str(part) for part in runtime.VLLM_MODELLED_VERSION),
        vllm_sampler_bytes_per_logit=runtime.VLLM_SAMPLER_BYTES_PER_LOGIT,
        vllm_sort_sampler_bytes_per_logit=runtime.VLLM_SORT_SAMPLER_BYTES_PER_LOGIT,
        vllm_triton_sampler_since=".".join(str(part) for part in runtime.VLLM_TRITON_SAMPLER_SINCE),
        vllm_forward_ffn_tensors=runtime.VLLM_FORWARD_FFN_TENSORS,
        vllm_forward_hidden_tensors=runtime.VLLM_FORWARD_HIDDEN_TENSORS,
        vllm_non_torch_tp1_gib=runtime.VLLM_NON_TORCH_TP1 / GIB,
        vllm_non_torch_tp_gib=runtime.VLLM_NON_TORCH_TP / GIB,
        vllm_graph_base_gib=runtime.VLLM_GRAPH_BASE / GIB,
        vllm_graph_per_layer_gib=runtime.VLLM_GRAPH_PER_LAYER / GIB,
        vllm_large_gpu_gib=runtime.VLLM_LARGE_GPU_BYTES / GIB,
        vllm_large_gpu_defaults=runtime.VLLM_LARGE_GPU_DEFAULTS,
        vllm_small_gpu_defaults=runtime.VLLM_SMALL_GPU_DEFAULTS,
        vllm_hpu_graph_share=runtime.VLLM_HPU_GRAPH_RESERVED_SHARE,
        usable_factor_discrete=fit.DEFAULT_USABLE_FACTOR["discrete"],
        usable_factor_unified=fit.DEFAULT_USABLE_FACTOR["unified"],
        tight_buffer=fit.TIGHT_BUFFER,
        calibration=_calibration_rows(fitted_parameters),
        ram_bandwidth_gbs=throughput.DEFAULT_RAM_BANDWIDTH_GBS,
        pcie_gbs=throughput.PCIE_X16_ACHIEVED_GBS[4],
        cann_formats=", ".join(sorted(estimate.CANN_LLAMA_CPP_FORMATS)),
        cann_310p_formats=", ".join(sorted(estimate.CANN_310P_LLAMA_CPP_FORMATS)),
        mxfp4_marlin=parallelism.vllm_mxfp4_expert_padding("cuda", ""),
        mxfp4_hopper=parallelism.vllm_mxfp4_expert_padding("cuda", "hopper"),
        mxfp4_sm100=parallelism.vllm_mxfp4_expert_padding("cuda", "blackwell-datacenter"),
        mxfp4_rocm=parallelism.vllm_mxfp4_expert_padding("rocm", ""),
        mxfp4_gfx950=parallelism.vllm_mxfp4_expert_padding("rocm", "cdna4"),
        pcie5_gbs=throughput.PCIE_X16_ACHIEVED_GBS[5],
        pcie6_gbs=throughput.PCIE_X16_ACHIEVED_GBS[6],
        hopper_tensor_peak_share=throughput.LLAMA_CPP_TENSOR_PEAK_SHARE["hopper"],
        default_ubatch=throughput.DEFAULT_UBATCH,
        vllm_prefill_efficiency=throughput.VLLM_PREFILL_EFFICIENCY,
        allreduces_per_layer=throughput.ALLREDUCES_PER_LAYER,
        nvlink_allreduce_latency_us=throughput.NVLINK_ALLREDUCE_LATENCY_S * 1e6,
        pcie_allreduce_latency_us=throughput.PCIE_ALLREDUCE_LATENCY_S * 1e6,
        days_per_month=economics.DAYS_PER_MONTH,
        hours_per_day=economics.DEFAULT_HOURS_PER_DAY,
        usd_per_kwh=economics.DEFAULT_USD_PER_KWH,
        optimizer_bytes=tuple(finetune.OPTIMIZER_BYTES_PER_PARAM.items()),
        default_optimizers=tuple(finetune.DEFAULT_OPTIMIZER.items()),
        nf4_bits=finetune.NF4_DOUBLE_QUANT_BITS,
        finetune_cuda_context_mib=finetune.CUDA_CONTEXT_BYTES / MIB,
        loss_head_bytes_per_logit=finetune.LOSS_HEAD_BYTES_PER_LOGIT,
        loss_head_forward_bytes_per_logit=finetune.LOSS_HEAD_FORWARD_BYTES_PER_LOGIT,
        dsv4_csa_ratio=config_parser.DSV4_CSA_RATIO,
        dsv4_hca_ratio=config_parser.DSV4_HCA_RATIO,
        dsv4_vllm_entry_bytes=kv_cache.VLLM_DSV4_ENTRY_BYTES,
        dsv4_vllm_indexer_entry_bytes=kv_cache.VLLM_DSV4_INDEXER_ENTRY_BYTES,
        dsv4_vllm_block_tokens=kv_cache.VLLM_DSV4_BLOCK_TOKENS,
        dsv4_vllm_page_alignment=kv_cache.VLLM_DSV4_PAGE_ALIGNMENT,
    )


# ---------------------------------------------------------------------------------------------- sources


@dataclass(frozen=True)
class Source:
    label: str  # a file path or a paper title: the same in every language
    url: str


def _llama_cpp(path: str, ref: str = "master") -> Source:
    return Source(f"llama.cpp {path}", f"https://github.com/ggml-org/llama.cpp/blob/{ref}/{path}")


def _vllm(path: str, ref: str = "main") -> Source:
    return Source(f"vLLM {path}", f"https://github.com/vllm-project/vllm/blob/{ref}/{path}")


def _arxiv(title: str, number: str) -> Source:
    return Source(f"{title} (arXiv:{number})", f"https://arxiv.org/abs/{number}")


# The files and papers the engine's comments cite, per page section. Commits are the ones the comments name
# (quant.py: llama.cpp 007dbbf; kv_cache.py: vLLM 001cabc; parallelism.py: vLLM 002d6073); else the default branch.
SOURCES: dict[str, tuple[Source, ...]] = {
    "parameters": (
        _llama_cpp("gguf-py/gguf/constants.py"),
        _llama_cpp("src/llama-arch.cpp"),
    ),
    "weights": (
        _llama_cpp("ggml/src/ggml-common.h", "007dbbf"),
        _llama_cpp("src/llama-quant.cpp", "007dbbf"),
        _llama_cpp("tools/quantize/README.md", "311c2c9"),
        _llama_cpp("ggml/src/ggml.c"),
        Source("DeepSeek-V3 config.json (weight_block_size)",
               "https://huggingface.co/deepseek-ai/DeepSeek-V3/blob/main/config.json"),
        _arxiv("AWQ: Activation-aware Weight Quantization", "2306.00978"),
        _arxiv("GPTQ: Accurate Post-Training Quantization for Generative Pre-trained Transformers", "2210.17323"),
    ),
    "kv": (
        _llama_cpp("src/llama-kv-cache.cpp"),
        _llama_cpp("src/llama-kv-cache-iswa.cpp"),
        _llama_cpp("src/llama-kv-cache-dsv4.cpp"),
        _vllm("vllm/model_executor/models/deepseek_v4/attention.py", "v0.33.0"),
        _llama_cpp("src/llama-context.cpp"),
        _llama_cpp("src/llama-hparams.cpp"),
        _vllm("vllm/v1/kv_cache_interface.py", "001cabc"),
        _vllm("vllm/model_executor/layers/linear.py"),
        _arxiv("GQA: Training Generalized Multi-Query Transformer Models", "2305.13245"),
        _arxiv("DeepSeek-V2 (Multi-head Latent Attention)", "2405.04434"),
        _arxiv("Efficient Memory Management for LLM Serving with PagedAttention", "2309.06180"),
        _arxiv("Mamba: Linear-Time Sequence Modeling with Selective State Spaces", "2312.00752"),
        _arxiv("Gated Delta Networks", "2412.06464"),
    ),
    "runtime": (
        _llama_cpp("src/llama-context.cpp"),
        _llama_cpp("src/llama-graph.cpp"),
        _llama_cpp("ggml/src/ggml-alloc.c"),
        _vllm("vllm/v1/worker/gpu_worker.py"),
        _vllm("vllm/utils/mem_utils.py"),
        _vllm("vllm/v1/core/kv_cache_utils.py"),
        _vllm("vllm/engine/arg_utils.py"),
        Source("vllm-gaudi vllm_gaudi/v1/worker/hpu_worker.py",
               "https://github.com/vllm-project/vllm-gaudi/blob/main/vllm_gaudi/v1/worker/hpu_worker.py"),
    ),
    "fit": (
        _llama_cpp("src/llama-model.cpp"),
        _llama_cpp("common/fit.cpp"),
        _vllm("vllm/model_executor/layers/linear.py", "002d6073"),
        _vllm("vllm/model_executor/layers/vocab_parallel_embedding.py", "002d6073"),
    ),
    "speed": (
        Source("Williams, Waterman, Patterson: Roofline (CACM 2009)", "https://doi.org/10.1145/1498765.1498785"),
        _llama_cpp("ggml/src/ggml-cuda/mmq.cuh"),
        _llama_cpp("ggml/src/ggml-cuda/mma.cuh"),
        _llama_cpp("ggml/src/ggml-cuda/ggml-cuda.cu"),
        _llama_cpp("src/llama-graph.cpp"),
        _arxiv("Dissecting the NVIDIA Hopper Architecture through Microbenchmarking", "2501.12084"),
        _arxiv("Megatron-LM: Training Multi-Billion Parameter Language Models Using Model Parallelism",
               "1909.08053"),
        _arxiv("PaLM: Scaling Language Modeling with Pathways", "2204.02311"),
    ),
    "finetune": (
        _arxiv("ZeRO: Memory Optimizations Toward Training Trillion Parameter Models", "1910.02054"),
        _arxiv("QLoRA: Efficient Finetuning of Quantized LLMs", "2305.14314"),
        _arxiv("Reducing Activation Recomputation in Large Transformer Models", "2205.05198"),
        _arxiv("FlashAttention", "2205.14135"),
        _arxiv("Cut Your Losses in Large-Vocabulary Language Models", "2411.09009"),
        Source("Hugging Face transformers: Model training anatomy",
               "https://huggingface.co/docs/transformers/model_memory_anatomy"),
        Source("bitsandbytes optim/optimizer.py",
               "https://github.com/bitsandbytes-foundation/bitsandbytes/blob/main/bitsandbytes/optim/optimizer.py"),
    ),
}


# ------------------------------------------------------------------------------------------------- page


@dataclass(frozen=True)
class MethodologyPage:
    constants: EngineConstants
    accuracy: Accuracy
    sources: dict[str, tuple[Source, ...]]


def methodology_page() -> MethodologyPage:
    measured = accuracy()
    return MethodologyPage(engine_constants(measured.fitted_parameters), measured, SOURCES)
