"""Predicted vs measured vLLM time to first token on bench/data/vllm_prefill.csv.

    python -m bench.vllm_prefill_accuracy          # per-row table, the fit rows' and the check rows' median errors
    python -m bench.vllm_prefill_accuracy --fit    # refit throughput.VLLM_PREFILL_EFFICIENCY on the fit rows

Every row is one request alone on the server (concurrency 1, no prefix-cache hit): its TTFT is the prompt's prefill.
The prediction is the whole engine's (reports/sizing/estimate.py), on the catalog's seed specs of the model and the
accelerator (bench/seed_catalog.py), with vLLM's defaults (max_num_batched_tokens of `vllm serve` for that GPU, gpu_memory_utilization
0.9), the row's GPU count as tensor parallelism and a context that holds the prompt.

Rows marked "fit" set the one constant; "check" rows are other publications, other models, other GPUs, and nothing is
fitted on them. Few rows were found (all CUDA): the summary says how few.
"""

from __future__ import annotations

import argparse
import csv
import math
import statistics
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

from bench import seed_catalog
from reports.sizing import throughput
from reports.sizing.estimate import estimate
from reports.sizing.specs import Scenario

DATA = Path(__file__).resolve().parent / "data" / "vllm_prefill.csv"


@dataclass(frozen=True)
class Measurement:
    set: str
    role: str  # "fit" or "check"
    accelerator: str
    gpus: int
    model: str
    quant: str
    vllm: str
    prompt_tokens: int
    ttft_ms: float
    reading: str  # "printed" by the source, or read off its "chart"
    source: str


@dataclass(frozen=True)
class Prediction:
    row: Measurement
    ttft_ms: float
    bound: str
    chunk: int

    @property
    def error(self) -> float:
        """Signed relative error of the predicted TTFT."""
        return self.ttft_ms / self.row.ttft_ms - 1


def load() -> list[Measurement]:
    with DATA.open(newline="") as handle:
        return [Measurement(**{**row, "gpus": int(row["gpus"]), "prompt_tokens": int(row["prompt_tokens"]),
                               "ttft_ms": float(row["ttft_ms"])}) for row in csv.DictReader(handle)]


def predict(row: Measurement) -> Prediction:
    context = 1 << (row.prompt_tokens + 1024 - 1).bit_length()  # a power of two that holds the prompt
    scenario = Scenario(engine="vllm", quant=row.quant, kv_dtype="auto", gpus=row.gpus, context=context,
                        prompt=row.prompt_tokens)
    prefill = estimate(seed_catalog.model(row.model), seed_catalog.accelerator(row.accelerator), scenario).prefill
    return Prediction(row, prefill.ttft_ms, prefill.bound, prefill.micro_batch)


def median_abs_error(predictions: list[Prediction]) -> float:
    return statistics.median(abs(p.error) for p in predictions)


def summary() -> dict:
    predictions = [predict(row) for row in load()]
    fit_rows = [p for p in predictions if p.row.role == "fit"]
    check_rows = [p for p in predictions if p.row.role == "check"]
    return {
        "efficiency": throughput.VLLM_PREFILL_EFFICIENCY,
        "fit_rows": len(fit_rows), "fit_median_abs_error": median_abs_error(fit_rows),
        "check_rows": len(check_rows), "check_median_abs_error": median_abs_error(check_rows),
        "check_max_abs_error": max(abs(p.error) for p in check_rows),
        "predictions": predictions,
    }


def section() -> dict:
    """Rows and summary for bench/accuracy.py's snapshot (the methodology page). The check rows are scored; the
    fit rows, which set the constant, are listed with their errors but not scored."""
    result = summary()
    rows = [{"set": p.row.set, "role": p.row.role, "accelerator": p.row.accelerator,
             "accelerator_name": seed_catalog.accelerator(p.row.accelerator).name, "gpus": p.row.gpus,
             "model": p.row.model, "model_name": seed_catalog.model(p.row.model).name, "quant": p.row.quant, "vllm": p.row.vllm, "prompt_tokens": p.row.prompt_tokens,
             "chunk": p.chunk, "measured_ttft_ms": p.row.ttft_ms, "predicted_ttft_ms": p.ttft_ms, "error": p.error,
             "scored": p.row.role == "check", "reading": p.row.reading, "source": p.row.source}
            for p in result["predictions"]]
    return {"rows": rows, "summary": {
        "rows": len(rows), "scored": result["check_rows"], "median_abs_error": result["check_median_abs_error"],
        "max_abs_error": result["check_max_abs_error"], "fit_rows": result["fit_rows"],
        "fit_median_abs_error": result["fit_median_abs_error"], "efficiency": result["efficiency"]}}


def fit() -> float:
    """The efficiency (two decimals) that minimizes the fit rows' median absolute log error of TTFT."""
    rows = [row for row in load() if row.role == "fit"]

    def loss(efficiency: float) -> float:
        with mock.patch.object(throughput, "VLLM_PREFILL_EFFICIENCY", efficiency):
            return statistics.median(abs(math.log(predict(row).ttft_ms / row.ttft_ms)) for row in rows)

    return min((round(0.30 + step / 100, 2) for step in range(61)), key=loss)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fit", action="store_true", help="refit VLLM_PREFILL_EFFICIENCY on the fit rows")
    args = parser.parse_args()
    if args.fit:
        print(f"VLLM_PREFILL_EFFICIENCY = {fit():.2f}  (now {throughput.VLLM_PREFILL_EFFICIENCY})")
        return
    result = summary()
    print(f"{'set':<22} {'role':<5} {'accelerator':<24} {'n':>2} {'model':<30} {'quant':<5} {'prompt':>7} "
          f"{'chunk':>6} {'measured':>9} {'predicted':>9} {'error':>7}  bound")
    for p in result["predictions"]:
        r = p.row
        print(f"{r.set:<22} {r.role:<5} {r.accelerator:<24} {r.gpus:>2} {r.model:<30} {r.quant:<5} "
              f"{r.prompt_tokens:>7,} {p.chunk:>6,} {r.ttft_ms:>7,.0f}ms {p.ttft_ms:>7,.0f}ms {p.error:>+7.1%}  {p.bound}")
    print(f"\nefficiency {result['efficiency']:.2f}: fit rows {result['fit_rows']}, median |error| "
          f"{result['fit_median_abs_error']:.1%}; check rows {result['check_rows']}, median |error| "
          f"{result['check_median_abs_error']:.1%}, max {result['check_max_abs_error']:.1%}")


if __name__ == "__main__":
    main()
