"""Predicted vs measured llama.cpp speed on bench/data/throughput_calibration.csv (issue 4, "Speed").

    python -m bench.throughput_accuracy          # per-row table and medians (targets: decode <= 20 %, prefill <= 30 %)
    python -m bench.throughput_accuracy --fit    # refit the constants of reports/sizing/throughput.py
    python -m bench.throughput_accuracy --cross-validate   # leave one publication out
    python -m bench.throughput_accuracy --validate-rocm    # held-out AMD rows (bench/data/validation_rocm.csv)

``speed_section()`` returns the rows and the summary for bench/accuracy.py; ``rocm_validation_section()`` the same
for the held-out AMD rows, which nothing here fits on.

Inputs per row: the GPU's public specs (bench/calibration_hardware.py), the model's shapes
(bench/model_specs.py) and its published GGUF size (bench/data/throughput_models.csv). Bytes one decode token
reads = file bytes - input embedding table (one row is gathered, llama.cpp get_rows) - the routed experts a token
does not use ((1 - k/E) of them). The token-embedding type follows llama-quantize's default for the file type
(F16 -> F16, Q8_0 -> Q8_0, Q4_0 -> Q4_0, Q4_K_M -> Q4_K: src/llama-quant.cpp has no token_embd rule for these);
gpt-oss experts are MXFP4 (ggml block_mxfp4: 17 bytes per 32 weights = 4.25 bits) and its other tensors take
what is left of the file, at their average bytes per parameter.

Rows that are not llama-bench runs ("tg (avg eval)", "pp (avg prompt eval)": ./main averages over prompts of
unknown length) are shown but kept out of the fit and the medians.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import math
import statistics
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from bench.calibration_hardware import hardware_spec
from bench.model_specs import GPT_OSS_20B, GPT_OSS_120B, LLAMA_2_7B, LLAMA_3_1_8B, LLAMA_3_70B
from reports.sizing import throughput
from reports.sizing.parameters import count_parameters
from reports.sizing.specs import HardwareSpec, ModelSpec

DATA = Path(__file__).resolve().parent / "data"
GIB = 2**30
DECODE_TARGET = 0.20
PREFILL_TARGET = 0.30

MODEL_SPECS: dict[str, ModelSpec] = {
    "Llama-2-7B": LLAMA_2_7B,
    "Llama-3-8B": LLAMA_3_1_8B,  # Llama-3-8B and 3.1-8B share every shape
    "Llama-3-70B": LLAMA_3_70B,
    "gpt-oss-20b": GPT_OSS_20B,
    "gpt-oss-120b": GPT_OSS_120B,
}
KV_BYTES_PER_ELEMENT = 2  # llama-bench default KV cache type f16


@dataclass(frozen=True)
class ModelFile:
    """What the speed model needs to know about one GGUF file."""

    spec: ModelSpec
    decode_weight_bytes: float  # weights one decode token reads
    resident_weight_bytes: float  # weights a prefill micro-batch may read (all but the input embedding)
    routed_expert_bytes: float
    flops_per_token: float  # 2 x (active parameters - input embedding)
    routed_expert_flops_per_token: float


@dataclass(frozen=True)
class Measurement:
    backend: str
    gpu: str
    model: str
    quant: str
    test: str
    measured: float
    source: str

    @property
    def is_decode(self) -> bool:
        return self.test.startswith("tg")

    @property
    def is_llama_bench(self) -> bool:
        return "avg" not in self.test

    @property
    def tokens_and_depth(self) -> tuple[int, int]:
        """'tg128' -> (128, 0); 'pp512 @ d32768' -> (512, 32768); ./main averages -> (512, 0)."""
        head, _, depth = self.test.replace(" ", "").partition("@d")
        digits = "".join(ch for ch in head if ch.isdigit())
        return (int(digits) if digits else 512), (int(depth) if depth else 0)


@dataclass(frozen=True)
class Prediction:
    row: Measurement
    predicted: float | None
    detail: str

    @property
    def error(self) -> float | None:
        """Signed relative error (predicted - measured) / measured."""
        return None if self.predicted is None else (self.predicted - self.row.measured) / self.row.measured


@lru_cache(maxsize=None)
def model_file(model: str, quant: str) -> ModelFile:
    spec = MODEL_SPECS[model]
    counts = count_parameters(spec)
    with (DATA / "throughput_models.csv").open() as handle:
        row = next(r for r in csv.DictReader(handle) if r["model"] == model and r["quant"] == quant)
    file_bytes = float(row["file_size_gib"]) * GIB
    routed_bytes = counts.routed_experts * float(row["routed_expert_bits"] or 0) / 8
    if row["embedding_type_bits"]:
        embedding_bytes = counts.embedding * float(row["embedding_type_bits"]) / 8
    else:  # the rest of the file is spread evenly over the non-expert parameters
        embedding_bytes = counts.embedding * (file_bytes - routed_bytes) / (counts.total - counts.routed_experts)
    experts_per_token, num_experts = (spec.moe.experts_per_token, spec.moe.num_experts) if spec.moe else (0, 0)
    unused_share = 1 - experts_per_token / num_experts if num_experts else 0.0
    return ModelFile(
        spec=spec,
        decode_weight_bytes=throughput.weight_bytes_per_token(
            resident_bytes=file_bytes, embedding_bytes=embedding_bytes, routed_expert_bytes=routed_bytes,
            experts_per_token=experts_per_token, num_experts=num_experts),
        resident_weight_bytes=file_bytes - embedding_bytes,
        routed_expert_bytes=routed_bytes,
        flops_per_token=2 * (counts.active - counts.embedding),
        routed_expert_flops_per_token=2 * counts.routed_experts * (1 - unused_share),
    )


def kv_bytes_per_token(spec: ModelSpec, depth: float) -> float:
    """f16 K and V read by one token at `depth`: 2 x kv_heads x head_dim x 2 B per full layer and cached token;
    sliding layers read at most their window."""
    total = 0.0
    for layer in spec.layers:
        shape = spec.sliding_attention if layer.mixer == "sliding" and spec.sliding_attention else spec.attention
        seen = min(depth, spec.sliding_window) if layer.mixer == "sliding" and spec.sliding_window else depth
        total += shape.num_kv_heads * (shape.head_dim + shape.v_dim) * KV_BYTES_PER_ELEMENT * seen
    return total


def load_measurements(filename: str = "throughput_calibration.csv") -> list[Measurement]:
    """The calibration rows (the only ones fitted on), or another file of the same columns."""
    with (DATA / filename).open() as handle:
        return [
            Measurement(r["backend"], r["gpu"], r["model"], r["quant"], r["test"], float(r["tokens_per_s"]), r["source"])
            for r in csv.DictReader(handle)
        ]


def predict(row: Measurement) -> Prediction:
    hardware, gpus = hardware_spec(row.gpu, row.backend)
    model = model_file(row.model, row.quant)
    tokens, depth = row.tokens_and_depth
    moe_layers = sum(layer.ffn == "moe" for layer in model.spec.layers)
    if row.is_decode:
        speed = throughput.decode_speed(
            weight_bytes_gpu=model.decode_weight_bytes,
            kv_bytes_read=kv_bytes_per_token(model.spec, depth + tokens / 2),
            hardware=hardware, gpus=gpus, num_layers=model.spec.num_layers, moe_layers=moe_layers,
        )
        detail = f"{model.decode_weight_bytes / 1e9:.2f} GB/token, {speed.bound}-bound"
        return Prediction(row, speed.tokens_per_s, detail)
    moe = model.spec.moe
    speed = throughput.prefill_speed(
        flops_per_token=model.flops_per_token,
        attention_flops_per_token=throughput.attention_flops_per_token(model.spec, context=depth + tokens / 2),
        routed_expert_flops_per_token=model.routed_expert_flops_per_token,
        routed_expert_bytes=model.routed_expert_bytes,
        experts_per_token=moe.experts_per_token if moe else 0,
        num_experts=moe.num_experts if moe else 0,
        weight_bytes=model.resident_weight_bytes, prompt=tokens, hardware=hardware, gpus=gpus,
        num_layers=model.spec.num_layers,
    )
    if speed.tokens_per_s is None:
        return Prediction(row, None, "FP16 TFLOPS not published")
    detail = f"{model.flops_per_token / 1e9:.1f} GFLOP/token, {speed.peak_tflops:.1f} TFLOPS peak, {speed.bound}-bound"
    return Prediction(row, speed.tokens_per_s, detail)


def _median_abs(predictions: list[Prediction]) -> float:
    errors = [abs(p.error) for p in predictions if p.error is not None]
    return statistics.median(errors) if errors else math.nan


def speed_section() -> dict:
    """Rows (one dict per CSV row) and the summary: medians over llama-bench rows, worst rows, constants used."""
    return _section(load_measurements())


VALIDATION_ROCM = "validation_rocm.csv"


def rocm_validation_section() -> dict:
    """The same table for bench/data/validation_rocm.csv: public llama-bench rows of AMD GPUs held out of the fit
    (issue 4 calibrates on throughput_calibration.csv only), a check of the per-architecture shares."""
    return _section(load_measurements(VALIDATION_ROCM))


def _section(measurements: list[Measurement]) -> dict:
    predictions = [predict(row) for row in measurements]
    scored = [p for p in predictions if p.row.is_llama_bench and p.error is not None]
    decode = [p for p in scored if p.row.is_decode]
    prefill = [p for p in scored if not p.row.is_decode]
    rows = [
        {
            "backend": p.row.backend, "gpu": p.row.gpu, "model": p.row.model, "quant": p.row.quant,
            "test": p.row.test, "measured_tok_s": p.row.measured, "predicted_tok_s": p.predicted,
            "error": p.error, "scored": p in scored, "detail": p.detail,
        }
        for p in predictions
    ]
    summary = {
        "decode_median_abs_error": _median_abs(decode),
        "prefill_median_abs_error": _median_abs(prefill),
        "decode_rows": len(decode),
        "prefill_rows": len(prefill),
        "decode_target": DECODE_TARGET,
        "prefill_target": PREFILL_TARGET,
        "not_scored": len(predictions) - len(scored),
        "worst_decode": _worst(decode),
        "worst_prefill": _worst(prefill),
        "fitted_parameters": fitted_parameters(),
    }
    return {"rows": rows, "summary": summary}


def _worst(predictions: list[Prediction], count: int = 5) -> list[str]:
    ranked = sorted(predictions, key=lambda p: -abs(p.error))[:count]
    return [f"{p.row.backend} {p.row.gpu} {p.row.model} {p.row.quant} {p.row.test}: {p.error:+.0%}" for p in ranked]


def fitted_parameters() -> dict[str, float]:
    """The constants fitted on this data set (shared/borrowed ones are listed once, under the class they were
    fitted on). The AMD tensor shares (throughput.AMD_MATRIX_BALANCE) are datasheet arithmetic, not fitted."""
    params: dict[str, float] = {}
    for name in FITTED_CLASSES:
        c = throughput.CALIBRATION[name]
        params[f"{name}.bandwidth_efficiency"] = c.bandwidth_efficiency
        if name != "rocm":  # one decode row: ROCm borrows CUDA's layer overhead
            params[f"{name}.layer_overhead_us"] = round(c.layer_overhead_s * 1e6, 1)
        if name != "rocm":  # HIP runs ggml-cuda's MMQ: ROCm borrows CUDA's compute efficiency
            params[f"{name}.compute_efficiency"] = c.compute_efficiency
        if name in MOE_CLASSES:  # only CUDA and Metal rows hold MoE models
            params[f"{name}.moe_layer_overhead_factor"] = c.moe_layer_overhead_factor
            params[f"{name}.gemm_half_width"] = c.gemm_half_width
    for architecture, efficiency in throughput.ROCBLAS_FALLBACK_EFFICIENCY.items():
        params[f"rocm.{architecture}.rocblas_compute_efficiency"] = efficiency
    return params


# ------------------------------------------------------------------------------------------------------ fit


FITTED_CLASSES = ("cuda", "metal", "vulkan", "rocm")
# Starting point of a cross-validation fold: no MoE penalty, no GEMM-width penalty, round efficiencies.
NEUTRAL = throughput.BackendCalibration(0.8, 50e-6, 0.5, 1.0, 0.0, decode_rows=0, prefill_rows=0)
MOE_CLASSES = ("cuda", "metal")


@contextlib.contextmanager
def _calibration(name: str, calibration: throughput.BackendCalibration):
    """Temporarily replace one backend class's constants (fitting only)."""
    saved = throughput.CALIBRATION[name]
    throughput.CALIBRATION[name] = calibration
    try:
        yield
    finally:
        throughput.CALIBRATION[name] = saved


@contextlib.contextmanager
def _rocblas_efficiencies(efficiencies: dict[str, float]):
    """Temporarily replace throughput.ROCBLAS_FALLBACK_EFFICIENCY (fitting only)."""
    saved = dict(throughput.ROCBLAS_FALLBACK_EFFICIENCY)
    throughput.ROCBLAS_FALLBACK_EFFICIENCY.clear()
    throughput.ROCBLAS_FALLBACK_EFFICIENCY.update(efficiencies)
    try:
        yield
    finally:
        throughput.ROCBLAS_FALLBACK_EFFICIENCY.clear()
        throughput.ROCBLAS_FALLBACK_EFFICIENCY.update(saved)


def _loss(rows: list[Measurement]) -> float:
    """Sum of |log(predicted / measured)|: symmetric in over- and under-estimation, robust to outliers."""
    total = 0.0
    for row in rows:
        predicted = predict(row).predicted
        if predicted is not None:
            total += abs(math.log(predicted / row.measured))
    return total


def _frange(start: float, stop: float, step: float) -> list[float]:
    return [round(start + i * step, 6) for i in range(int(round((stop - start) / step)) + 1)]


def _best(name: str, rows: list[Measurement], candidates) -> throughput.BackendCalibration:
    def loss(candidate):
        with _calibration(name, candidate):
            return _loss(rows)
    return min(candidates, key=loss)


@dataclass(frozen=True)
class Fit:
    calibrations: dict[str, throughput.BackendCalibration]
    rocblas_efficiencies: dict[str, float]  # throughput.ROCBLAS_FALLBACK_EFFICIENCY


def fit(rows: list[Measurement] | None = None) -> Fit:
    """Grid-search each backend class's constants on its llama-bench rows, in physical order:
    (bandwidth efficiency, layer overhead) on dense decode rows; the MoE overhead factor on MoE decode rows;
    (compute efficiency, GEMM half width) on prefill rows. Constants a class has no rows for are borrowed from
    CUDA (see reports/sizing/throughput.py). ROCm's compute efficiency is CUDA's (same MMQ kernels); its prefill
    rows fit the rocBLAS-path efficiency of their architecture instead. Returns the fit; does not edit the module."""
    rows = [r for r in (rows or load_measurements()) if r.is_llama_bench]
    classes = {r: throughput.backend_class(hardware_spec(r.gpu, r.backend)[0]) for r in rows}
    is_moe = {r: MODEL_SPECS[r.model].moe is not None for r in rows}
    has_tflops = {r: bool(hardware_spec(r.gpu, r.backend)[0].fp16_tflops) for r in rows}
    fitted: dict[str, throughput.BackendCalibration] = {}
    for name in FITTED_CLASSES:
        mine = [r for r in rows if classes[r] == name]
        dense_decode = [r for r in mine if r.is_decode and not is_moe[r]]
        moe_decode = [r for r in mine if r.is_decode and is_moe[r]]
        prefill = [r for r in mine if not r.is_decode and has_tflops[r]]
        start = fitted.get("cuda", throughput.CALIBRATION[name])
        base = replace(throughput.CALIBRATION[name], moe_layer_overhead_factor=start.moe_layer_overhead_factor,
                       gemm_half_width=start.gemm_half_width, decode_rows=len(dense_decode) + len(moe_decode),
                       prefill_rows=len(prefill))
        overheads = _frange(0, 300e-6, 5e-6) if len(dense_decode) >= 3 else [start.layer_overhead_s]
        base = _best(name, dense_decode, [replace(base, bandwidth_efficiency=e, layer_overhead_s=t)
                                          for t in overheads for e in _frange(0.40, 1.0, 0.01)])
        if moe_decode:
            base = _best(name, moe_decode, [replace(base, moe_layer_overhead_factor=f) for f in _frange(0.5, 4.0, 0.1)])
        if name == "rocm":
            base = replace(base, compute_efficiency=fitted["cuda"].compute_efficiency, prefill_rows=0)
            with _calibration(name, base):
                rocblas = _fit_rocblas_efficiencies(prefill)
            fitted[name] = base
            continue
        widths = _frange(0, 256, 8) if any(is_moe[r] for r in prefill) else [base.gemm_half_width]
        # An efficiency is a share of the usable tensor peak (throughput.tensor_peak_tflops), so at most 1.
        base = _best(name, prefill, [replace(base, compute_efficiency=e, gemm_half_width=h)
                                     for h in widths for e in _frange(0.02, 1.0, 0.01)])
        fitted[name] = base
    for name, calibration in fitted.items():
        print(f'"{name}": {calibration},')
    print(f"ROCBLAS_FALLBACK_EFFICIENCY = {rocblas}")
    return Fit(fitted, rocblas)


def _fit_rocblas_efficiencies(prefill: list[Measurement]) -> dict[str, float]:
    """One compute efficiency per architecture of the ROCm prefill rows (see throughput.ROCBLAS_FALLBACK_EFFICIENCY)."""
    architectures = sorted({hardware_spec(r.gpu, r.backend)[0].architecture for r in prefill})
    fitted: dict[str, float] = {}
    for architecture in architectures:
        mine = [r for r in prefill if hardware_spec(r.gpu, r.backend)[0].architecture == architecture]

        def loss(efficiency: float) -> float:
            with _rocblas_efficiencies({**fitted, architecture: efficiency}):
                return _loss(mine)
        fitted[architecture] = min(_frange(0.02, 1.0, 0.01), key=loss)
    return fitted


def source_of(row: Measurement) -> str:
    """The publication a row comes from (its URL or repository), without the transcription notes."""
    return row.source.split(" ")[0]


def cross_validate() -> dict[str, tuple[int, float, int, float]]:
    """Leave one publication out: refit on the others, score the held-out rows.

    Returns {source: (decode rows, decode median |error|, prefill rows, prefill median |error|)}. Every fold
    starts from NEUTRAL constants, so nothing fitted on the held-out rows leaks in: a constant the remaining rows
    cannot determine (e.g. the MoE ones when the only MoE publication is held out) stays neutral."""
    rows = [r for r in load_measurements() if r.is_llama_bench]
    results = {}
    saved = dict(throughput.CALIBRATION)
    for source in sorted({source_of(r) for r in rows}):
        held_out = [r for r in rows if source_of(r) == source]
        try:
            throughput.CALIBRATION.update({name: NEUTRAL for name in FITTED_CLASSES})
            with _rocblas_efficiencies({}):
                fold = fit([r for r in rows if source_of(r) != source])
                throughput.CALIBRATION.update(fold.calibrations)
                with _rocblas_efficiencies(fold.rocblas_efficiencies):
                    predictions = [predict(r) for r in held_out]
        finally:
            throughput.CALIBRATION.update(saved)
        decode = [p for p in predictions if p.row.is_decode and p.error is not None]
        prefill = [p for p in predictions if not p.row.is_decode and p.error is not None]
        results[source] = (len(decode), _median_abs(decode), len(prefill), _median_abs(prefill))
        print(f"held out {source}: decode {len(decode)} rows median {_median_abs(decode):.1%}; "
              f"prefill {len(prefill)} rows median {_median_abs(prefill):.1%}")
    return results


# ----------------------------------------------------------------------------------------------------- main


def print_report(section: dict) -> None:
    print(f"{'backend':12} {'gpu':38} {'model':13} {'quant':7} {'test':22} {'measured':>9} {'predicted':>9} {'error':>7}")
    for r in section["rows"]:
        predicted = "n/p" if r["predicted_tok_s"] is None else f"{r['predicted_tok_s']:.1f}"
        error = "" if r["error"] is None else f"{r['error']:+.0%}"
        mark = "" if r["scored"] else "  (not scored)"
        print(f"{r['backend']:12} {r['gpu'][:38]:38} {r['model']:13} {r['quant']:7} {r['test']:22} "
              f"{r['measured_tok_s']:9.1f} {predicted:>9} {error:>7}{mark}")
    s = section["summary"]
    print()
    print(f"decode : median |error| {s['decode_median_abs_error']:.1%} over {s['decode_rows']} rows "
          f"(target <= {s['decode_target']:.0%})")
    print(f"prefill: median |error| {s['prefill_median_abs_error']:.1%} over {s['prefill_rows']} rows "
          f"(target <= {s['prefill_target']:.0%})")
    print(f"not scored (./main averages or TFLOPS not published): {s['not_scored']}")
    print("worst decode rows:  " + "; ".join(s["worst_decode"]))
    print("worst prefill rows: " + "; ".join(s["worst_prefill"]))
    print(f"fitted parameters ({len(s['fitted_parameters'])}): {s['fitted_parameters']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fit", action="store_true", help="refit the constants and print them")
    parser.add_argument("--cross-validate", action="store_true", help="leave-one-publication-out errors")
    parser.add_argument("--validate-rocm", action="store_true", help="held-out AMD rows (never fitted on)")
    args = parser.parse_args()
    if args.fit:
        fit()
        return
    if args.cross_validate:
        cross_validate()
        return
    print_report(rocm_validation_section() if args.validate_rocm else speed_section())


if __name__ == "__main__":
    main()
