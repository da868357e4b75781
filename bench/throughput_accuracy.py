"""Predicted vs measured llama.cpp speed on bench/data/throughput_calibration.csv (issue 4, "Speed").

    python -m bench.throughput_accuracy          # per-row table and medians (targets: decode <= 20 %, prefill <= 30 %)
    python -m bench.throughput_accuracy --fit    # refit the constants of reports/sizing/throughput.py

``speed_section()`` returns the rows and the summary for bench/accuracy.py.

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


def load_measurements() -> list[Measurement]:
    with (DATA / "throughput_calibration.csv").open() as handle:
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
    detail = f"{model.flops_per_token / 1e9:.1f} GFLOP/token, {hardware.fp16_tflops} TFLOPS, {speed.bound}-bound"
    return Prediction(row, speed.tokens_per_s, detail)


def _median_abs(predictions: list[Prediction]) -> float:
    errors = [abs(p.error) for p in predictions if p.error is not None]
    return statistics.median(errors) if errors else math.nan


def speed_section() -> dict:
    """Rows (one dict per CSV row) and the summary: medians over llama-bench rows, worst rows, constants used."""
    predictions = [predict(row) for row in load_measurements()]
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
    params: dict[str, float] = {}
    for name in ("cuda", "metal", "vulkan", "rocm"):
        c = throughput.CALIBRATION[name]
        params[f"{name}.bandwidth_efficiency"] = c.bandwidth_efficiency
        params[f"{name}.layer_overhead_us"] = round(c.layer_overhead_s * 1e6, 1)
        params[f"{name}.compute_efficiency"] = c.compute_efficiency
    params["moe_layer_overhead_factor"] = throughput.MOE_LAYER_OVERHEAD_FACTOR
    params["gemm_half_width"] = throughput.GEMM_HALF_WIDTH
    return params


# ------------------------------------------------------------------------------------------------------ fit


@contextlib.contextmanager
def _constants(calibration: dict | None = None, **module_constants):
    """Temporarily swap reports.sizing.throughput constants (fitting only)."""
    saved_calibration = dict(throughput.CALIBRATION)
    saved = {name: getattr(throughput, name) for name in module_constants}
    try:
        if calibration:
            throughput.CALIBRATION.update(calibration)
        for name, value in module_constants.items():
            setattr(throughput, name, value)
        yield
    finally:
        throughput.CALIBRATION.clear()
        throughput.CALIBRATION.update(saved_calibration)
        for name, value in saved.items():
            setattr(throughput, name, value)


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


def fit() -> dict[str, throughput.BackendCalibration]:
    """Grid-search the constants: per backend class (bandwidth efficiency, layer overhead) on its dense decode
    rows, the MoE overhead factor on the MoE decode rows, then per backend the compute efficiency and the global
    GEMM half width on the prefill rows. Classes with fewer than 3 decode rows keep the CUDA layer overhead
    (same discrete-GPU launch model) and fit only their bandwidth efficiency."""
    rows = [r for r in load_measurements() if r.is_llama_bench]
    classes = {r: throughput.backend_class(hardware_spec(r.gpu, r.backend)[0]) for r in rows}
    is_moe = {r: MODEL_SPECS[r.model].moe is not None for r in rows}
    fitted: dict[str, throughput.BackendCalibration] = {}
    order = ["cuda", "metal", "vulkan", "rocm"]
    for name in order:
        decode = [r for r in rows if r.is_decode and classes[r] == name and not is_moe[r]]
        overheads = _frange(0, 300e-6, 5e-6) if len(decode) >= 3 else [fitted["cuda"].layer_overhead_s]
        best = None
        for overhead in overheads:
            for efficiency in _frange(0.40, 1.0, 0.01):
                trial = replace(throughput.CALIBRATION[name], bandwidth_efficiency=efficiency,
                                layer_overhead_s=overhead, decode_rows=len(decode))
                with _constants({name: trial}):
                    loss = _loss(decode)
                if best is None or loss < best[0]:
                    best = (loss, trial)
        fitted[name] = best[1]
    moe_decode = [r for r in rows if r.is_decode and is_moe[r]]
    with _constants(fitted):
        factor = min(_frange(1.0, 6.0, 0.1), key=lambda f: _with(moe_decode, MOE_LAYER_OVERHEAD_FACTOR=f))
    prefill = [r for r in rows if not r.is_decode]
    best_prefill = None
    for half_width in _frange(0, 256, 8):
        trial_set = {}
        total = 0.0
        for name in order:
            class_rows = [r for r in prefill if classes[r] == name and hardware_spec(r.gpu, r.backend)[0].fp16_tflops]
            best = None
            for efficiency in _frange(0.02, 1.5, 0.01):
                trial = replace(fitted[name], compute_efficiency=efficiency, prefill_rows=len(class_rows))
                with _constants({name: trial}, GEMM_HALF_WIDTH=half_width, MOE_LAYER_OVERHEAD_FACTOR=factor):
                    loss = _loss(class_rows)
                if best is None or loss < best[0]:
                    best = (loss, trial)
            trial_set[name] = best[1]
            total += best[0]
        if best_prefill is None or total < best_prefill[0]:
            best_prefill = (total, half_width, trial_set)
    _, half_width, fitted = best_prefill
    print(f"MOE_LAYER_OVERHEAD_FACTOR = {factor}")
    print(f"GEMM_HALF_WIDTH = {half_width}")
    for name, calibration in fitted.items():
        print(f'"{name}": {calibration}')
    return fitted


def _with(rows: list[Measurement], **module_constants) -> float:
    with _constants(**module_constants):
        return _loss(rows)


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
    args = parser.parse_args()
    if args.fit:
        fit()
        return
    print_report(speed_section())


if __name__ == "__main__":
    main()
