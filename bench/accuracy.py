"""Accuracy of the sizing engine against published measurements (bench/data/*.csv).

Run: ``.venv/bin/python bench/accuracy.py``. Pure Python (no Django). Each section is a function returning
its rows and a summary so other sections (KV cache, speed) can be added beside ``weights_section``.

``.venv/bin/python bench/accuracy.py --json reports/data/accuracy.json`` writes the same sections as JSON
(``snapshot()``): the methodology page renders that file, and tests/test_methodology.py fails when it no longer
equals a fresh ``snapshot()``, i.e. whenever the engine or the data changed without regenerating it.
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench import model_specs as specs
from reports.sizing.specs import ModelSpec
from reports.sizing.weights import weight_bytes

DATA = REPO / "bench" / "data"
GIB = 2**30
UNIT_BYTES = {"GiB": GIB, "GB": 1e9, "bytes": 1.0}


@dataclass(frozen=True)
class BenchModel:
    spec: ModelSpec
    include_mtp: bool  # whether this model's GGUF files store the MTP/nextn layers


# gguf_sizes.csv model column (prefix match) → spec. GLM GGUFs keep the nextn layer (convert_hf_to_gguf.py
# Glm4MoeModel: block_count = num_hidden_layers + num_nextn_predict_layers); DeepSeek's drop it
# (DeepseekV2Model skip_mtp).
BENCH_MODELS: list[tuple[str, BenchModel]] = [
    ("Llama-3.1-8B", BenchModel(specs.LLAMA_3_1_8B, False)),
    ("Llama-3-8B", BenchModel(specs.LLAMA_3_1_8B, False)),
    ("Llama-3.1-70B", BenchModel(specs.LLAMA_3_70B, False)),
    ("Llama-3-70B", BenchModel(specs.LLAMA_3_70B, False)),
    ("Llama-2-7B", BenchModel(specs.LLAMA_2_7B, False)),
    ("gpt-oss-20b", BenchModel(specs.GPT_OSS_20B, False)),
    ("gpt-oss-120b", BenchModel(specs.GPT_OSS_120B, False)),
    ("Qwen3-Coder-30B-A3B", BenchModel(specs.QWEN3_30B_A3B, False)),
    ("Qwen2.5-Coder-7B", BenchModel(specs.QWEN2_5_7B, False)),
    ("Qwen2.5-7B", BenchModel(specs.QWEN2_5_7B, False)),
    ("Qwen2.5-32B", BenchModel(specs.QWEN2_5_32B, False)),
    ("gemma-3-4b", BenchModel(specs.GEMMA_3_4B, False)),
    ("gemma-3-27b", BenchModel(specs.GEMMA_3_27B, False)),
    ("DeepSeek-V3", BenchModel(specs.DEEPSEEK_V3, False)),
    ("DeepSeek-R1", BenchModel(specs.DEEPSEEK_V3, False)),
    ("GLM-4.6", BenchModel(specs.GLM_4_5, True)),
]

# Files not made by llama-quantize's standard recipe: their size is a lookup value, not a prediction.
CUSTOM_RECIPES = {
    "UD-": "unsloth dynamic quant: per-layer recipe, not predictable from shapes",
    "Q2_K_XS (unsloth": "unsloth custom recipe (Q4 embed, Q6 lm_head)",
    "Q2_K_L (unsloth": "unsloth custom recipe (Q3 down_proj)",
}
# Rows whose file came from another tool than llama-quantize (the rule prediction is printed for reference).
NON_LLAMA_QUANTIZE = {
    (
        "gemma-3-4b-it-qat",
        "Q4_0",
    ): "Google QAT export, not llama-quantize: its tensor types are not the Q4_0 rules'",
}
# unsloth's README/blog "GB" for the large DeepSeek files is GiB (NOTES-sizes-and-kv.md §1: R1 UD-IQ1_S shards sum
# to 140.2 GB decimal = 130.6 GiB, advertised as "131GB").
UNIT_IS_GIB = {("DeepSeek-V3", "Q3_K_M"), ("DeepSeek-V3", "Q2_K_XS (unsloth: Q2 all, Q4 embed, Q6 lm_head)"),
               ("DeepSeek-V3", "Q2_K_L (unsloth: Q3 down_proj)")}


@dataclass(frozen=True)
class SizeRow:
    model: str
    quant_label: str
    value: float
    unit: str
    source: str

    @property
    def published_bytes(self) -> float:
        unit = "GiB" if (self.model, self.quant_label) in UNIT_IS_GIB else self.unit
        return self.value * UNIT_BYTES[unit]

    @property
    def compares_tensor_bytes(self) -> bool:
        # llama-bench and the quantize README print tensor bytes in GiB; HF listings are whole files (header too).
        return self.unit == "GiB" or (self.model, self.quant_label) in UNIT_IS_GIB


@dataclass(frozen=True)
class WeightCheck:
    row: SizeRow
    quant: str  # the --quant value used ("" when the row is a custom recipe)
    predicted_bytes: float | None
    error_pct: float | None  # None: excluded from the statistics
    note: str = ""


@dataclass(frozen=True)
class Summary:
    count: int
    median_abs_error_pct: float
    max_abs_error_pct: float
    excluded: int


def load_gguf_sizes(path: Path = DATA / "gguf_sizes.csv") -> list[SizeRow]:
    with path.open(newline="") as handle:
        return [
            SizeRow(r["model"], r["quant"], float(r["bytes_or_GB"]), r["unit"], r["source"])
            for r in csv.DictReader(handle)
        ]


def bench_model(name: str) -> BenchModel | None:
    for prefix, model in BENCH_MODELS:
        if name.startswith(prefix):
            return model
    return None


def parse_quant(label: str) -> tuple[str, dict[str, str]]:
    """Row quant label → (--quant value, llama-quantize overrides)."""
    overrides: dict[str, str] = {}
    if "token_embd+output F16" in label:
        overrides = {"token_embedding_type": "f16", "output_tensor_type": "f16"}
    base = label.split(" (")[0].strip()
    if base.startswith("MXFP4"):
        return "MXFP4_MOE", overrides  # ggml-org gpt-oss GGUF: llama-quantize MXFP4_MOE layout
    if base == "BF16":
        return "F16", overrides  # a GGUF BF16 file: 2 bytes per weight like F16, norms F32
    return base, overrides


def _custom_reason(label: str) -> str | None:
    for prefix, reason in CUSTOM_RECIPES.items():
        if label.startswith(prefix):
            return reason
    return None


def check_row(row: SizeRow, model: BenchModel) -> WeightCheck:
    reason = _custom_reason(row.quant_label)
    if reason:
        return WeightCheck(row, "", None, None, f"published size used: {reason}")
    quant, overrides = parse_quant(row.quant_label)
    breakdown = weight_bytes(model.spec, quant, include_mtp=model.include_mtp, **overrides)
    predicted = breakdown.total_bytes if row.compares_tensor_bytes else breakdown.file_bytes
    error = 100.0 * (predicted - row.published_bytes) / row.published_bytes
    other_tool = NON_LLAMA_QUANTIZE.get((row.model, row.quant_label))
    if other_tool:
        return WeightCheck(row, quant, predicted, None, f"excluded ({error:+.1f} %): {other_tool}")
    return WeightCheck(row, quant, predicted, error)


def weights_section(rows: list[SizeRow] | None = None) -> tuple[list[WeightCheck], Summary]:
    """Predicted vs published GGUF sizes for every row whose model has a spec."""
    checks = []
    for row in rows if rows is not None else load_gguf_sizes():
        model = bench_model(row.model)
        if model is not None:
            checks.append(check_row(row, model))
    errors = [abs(c.error_pct) for c in checks if c.error_pct is not None]
    summary = Summary(
        count=len(errors),
        median_abs_error_pct=statistics.median(errors),
        max_abs_error_pct=max(errors),
        excluded=sum(1 for c in checks if c.error_pct is None),
    )
    return checks, summary


def _format_size(nbytes: float, unit: str) -> str:
    if unit == "bytes":
        return f"{nbytes:,.0f} B"
    return f"{nbytes / UNIT_BYTES[unit]:.2f} {unit}"


def print_weights_section(checks: list[WeightCheck], summary: Summary) -> None:
    print("== Weights: predicted vs published GGUF sizes (bench/data/gguf_sizes.csv) ==")
    print(f"{'model':<44} {'quant':<32} {'published':>18} {'predicted':>18} {'error':>8}")
    for check in checks:
        row = check.row
        unit = "GiB" if row.compares_tensor_bytes else row.unit
        published = _format_size(row.published_bytes, unit)
        predicted = _format_size(check.predicted_bytes, unit) if check.predicted_bytes is not None else "-"
        error = f"{check.error_pct:+.2f}%" if check.error_pct is not None else "-"
        print(
            f"{row.model[:44]:<44} {row.quant_label[:32]:<32} {published:>18} {predicted:>18} {error:>8}"
            + (f"  {check.note}" if check.note else "")
        )
    print(
        f"summary: {summary.count} rows compared, median |error| {summary.median_abs_error_pct:.2f} %, "
        f"max |error| {summary.max_abs_error_pct:.2f} %, {summary.excluded} rows excluded (reason printed)"
    )


# Significant digits kept in the JSON snapshot: enough for exact byte counts (11 digits), far below any error the
# page shows, and the file stays stable against last-bit floating-point noise.
SNAPSHOT_DIGITS = 12
SNAPSHOT_PATH = REPO / "reports" / "data" / "accuracy.json"


def _weights_snapshot() -> dict:
    checks, summary = weights_section()
    rows = [
        {
            "model": c.row.model,
            "quant": c.row.quant_label,
            # the unit the comparison is made in: GiB rows compare tensor bytes, GB/bytes rows whole files
            "unit": "GiB" if c.row.compares_tensor_bytes else c.row.unit,
            "published_bytes": c.row.published_bytes,
            "predicted_bytes": c.predicted_bytes,
            "error": None if c.error_pct is None else c.error_pct / 100,
            "note": c.note,
            "source": c.row.source,
        }
        for c in checks
    ]
    return {
        "rows": rows,
        "summary": {
            "scored": summary.count,
            "excluded": summary.excluded,
            "median_abs_error": summary.median_abs_error_pct / 100,
            "max_abs_error": summary.max_abs_error_pct / 100,
        },
    }


def snapshot() -> dict:
    """Every section as JSON-ready data: rows with predicted and measured values, signed relative errors
    (fractions; None = not scored) and the summaries. Floats keep SNAPSHOT_DIGITS significant digits."""
    from bench import kv_runtime_accuracy, vllm_decode_accuracy, vllm_prefill_accuracy

    kv_rows, kv_summary = kv_runtime_accuracy.kv_section()
    runtime_rows, runtime_summary = kv_runtime_accuracy.runtime_section()
    data = {
        "generated_by": "bench/accuracy.py --json reports/data/accuracy.json",
        "weights": _weights_snapshot(),
        "kv": {"rows": kv_rows, "summary": kv_summary},
        "runtime": {"rows": runtime_rows, "summary": runtime_summary},
        "speed": _speed_snapshot(),
        "vllm_prefill": vllm_prefill_accuracy.section(),
        "vllm_decode": vllm_decode_accuracy.section(),
    }
    return _json_ready(data)


def _speed_snapshot() -> dict:
    """speed_section() with each row's publication (speed_section builds its rows in load_measurements() order)."""
    from bench import throughput_accuracy

    section = throughput_accuracy.speed_section()
    measurements = throughput_accuracy.load_measurements()
    assert len(measurements) == len(section["rows"])
    for row, measurement in zip(section["rows"], measurements):
        row["source"] = throughput_accuracy.source_of(measurement)
    return section


def _json_ready(value):
    """Rounded floats, lists for tuples; NaN/inf refused (json.dumps(allow_nan=False) would fail later anyway)."""
    if isinstance(value, float):
        return float(f"{value:.{SNAPSHOT_DIGITS}g}")
    if isinstance(value, dict):
        return {str(key): _json_ready(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_ready(item) for item in value]
    return value


def write_snapshot(path: Path = SNAPSHOT_PATH) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(snapshot(), indent=1, ensure_ascii=False, allow_nan=False)
    path.write_text(text + "\n", encoding="utf-8")


def main() -> None:
    """Every section: weights (GGUF sizes), KV cache, runtime memory (llama.cpp buffers, vLLM KV capacity), speed
    (llama.cpp tokens/s, vLLM time to first token)."""
    from bench import kv_runtime_accuracy, throughput_accuracy, vllm_decode_accuracy, vllm_prefill_accuracy

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, metavar="PATH",
                        help=f"write the sections as JSON instead of printing them (the page's file: {SNAPSHOT_PATH.relative_to(REPO)})")
    args = parser.parse_args()
    if args.json:
        write_snapshot(args.json)
        print(f"wrote {args.json}")
        return
    print_weights_section(*weights_section())
    print()
    print(kv_runtime_accuracy.format_rows("== KV cache ==", *kv_runtime_accuracy.kv_section()))
    print()
    print(kv_runtime_accuracy.format_rows("== Runtime memory ==", *kv_runtime_accuracy.runtime_section()))
    print()
    print("== Speed: predicted vs measured llama.cpp tokens/s ==")
    throughput_accuracy.print_report(throughput_accuracy.speed_section())
    print()
    print("== vLLM time to first token (bench/vllm_prefill_accuracy.py) ==")
    vllm_prefill = vllm_prefill_accuracy.section()["summary"]
    print(f"efficiency {vllm_prefill['efficiency']:.2f}: {vllm_prefill['fit_rows']} fit rows, median |error| "
          f"{vllm_prefill['fit_median_abs_error']:.1%}; {vllm_prefill['scored']} check rows, median |error| "
          f"{vllm_prefill['median_abs_error']:.1%}, max {vllm_prefill['max_abs_error']:.1%}")
    print()
    print("== vLLM single-stream decode (bench/vllm_decode_accuracy.py) ==")
    vllm_decode = vllm_decode_accuracy.section()["summary"]
    print(f"{vllm_decode['scored']} check rows, median |error| {vllm_decode['median_abs_error']:.1%}, max "
          f"{vllm_decode['max_abs_error']:.1%}; dense models ({vllm_decode['dense_scored']}): median "
          f"{vllm_decode['dense_median_abs_error']:.1%}")


if __name__ == "__main__":
    main()
