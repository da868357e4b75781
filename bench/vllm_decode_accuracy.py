"""Predicted vs measured vLLM single-stream decode on bench/data/vllm_decode.csv.

    python -m bench.vllm_decode_accuracy          # per-row table and the check rows' median error

vLLM's decode is not fitted on vLLM measurements: it takes llama.cpp's bandwidth efficiency and per-layer time of the
backend (throughput.py). These rows check that borrowing against other publications: one request at a time
(concurrency 1), the time per output token after the first (TPOT) or the per-request output speed after the first
token, on the catalog's seed specs of the model and the accelerator (bench/seed_catalog.py), with vLLM's defaults, the
row's GPU count as tensor parallelism and the KV cache holding the request's mean context while it decodes (the input
and half the output). Nothing is fitted on them.

"check" rows are scored; "info" rows (GPU variant, engine or lengths not stated) are listed, not scored.
"""

from __future__ import annotations

import csv
import statistics
from dataclasses import dataclass
from pathlib import Path

from bench import seed_catalog
from reports.sizing.estimate import estimate
from reports.sizing.specs import Scenario

DATA = Path(__file__).resolve().parent / "data" / "vllm_decode.csv"


@dataclass(frozen=True)
class Measurement:
    set: str
    role: str  # "check" (scored) or "info"
    accelerator: str
    gpus: int
    model: str
    quant: str
    vllm: str
    input_tokens: int
    output_tokens: int
    tok_s: float
    metric: str
    source: str

    @property
    def depth(self) -> int:
        """Tokens cached while the request decodes, on average: its input and half its output."""
        return self.input_tokens + self.output_tokens // 2


@dataclass(frozen=True)
class Prediction:
    row: Measurement
    tok_s: float

    @property
    def error(self) -> float:
        """Signed relative error of the predicted decode speed."""
        return self.tok_s / self.row.tok_s - 1


def load() -> list[Measurement]:
    with DATA.open(newline="") as handle:
        return [Measurement(**{**row, "gpus": int(row["gpus"]), "input_tokens": int(row["input_tokens"]),
                               "output_tokens": int(row["output_tokens"]), "tok_s": float(row["tok_s"])})
                for row in csv.DictReader(handle)]


def predict(row: Measurement) -> Prediction:
    context = 1 << (row.input_tokens + row.output_tokens - 1).bit_length()  # a power of two that holds the request
    scenario = Scenario(engine="vllm", quant=row.quant, kv_dtype="auto", gpus=row.gpus, context=context,
                        depth=row.depth)
    result = estimate(seed_catalog.model(row.model), seed_catalog.accelerator(row.accelerator), scenario)
    return Prediction(row, result.decode.tokens_per_s)


def section() -> dict:
    """Rows and summary for bench/accuracy.py's snapshot (the methodology page)."""
    predictions = [predict(row) for row in load()]
    scored = [p for p in predictions if p.row.role == "check"]
    dense = [p for p in scored if seed_catalog.model(p.row.model).moe is None]
    moe = [p for p in scored if seed_catalog.model(p.row.model).moe is not None]
    rows = [{"set": p.row.set, "role": p.row.role, "accelerator": p.row.accelerator,
             "accelerator_name": seed_catalog.accelerator(p.row.accelerator).name, "gpus": p.row.gpus,
             "model": p.row.model, "model_name": seed_catalog.model(p.row.model).name, "quant": p.row.quant,
             "vllm": p.row.vllm, "input_tokens": p.row.input_tokens, "output_tokens": p.row.output_tokens,
             "depth": p.row.depth,
             "measured_tok_s": p.row.tok_s, "predicted_tok_s": p.tok_s, "error": p.error,
             "scored": p.row.role == "check", "metric": p.row.metric, "source": p.row.source}
            for p in predictions]
    return {"rows": rows, "summary": {
        "rows": len(rows), "scored": len(scored),
        "median_abs_error": statistics.median(abs(p.error) for p in scored),
        "max_abs_error": max(abs(p.error) for p in scored),
        "dense_scored": len(dense), "dense_median_abs_error": statistics.median(abs(p.error) for p in dense),
        "dense_max_abs_error": max(abs(p.error) for p in dense),
        # How many times faster than measured the mixture-of-experts rows are predicted at most (report pages say it).
        "moe_scored": len(moe), "moe_max_ratio": max(p.tok_s / p.row.tok_s for p in moe)}}


def main() -> None:
    result = section()
    print(f"{'set':<22} {'role':<5} {'accelerator':<24} {'n':>2} {'model':<30} {'quant':<6} {'depth':>6} "
          f"{'measured':>9} {'predicted':>9} {'error':>7}")
    for row in result["rows"]:
        print(f"{row['set']:<22} {row['role']:<5} {row['accelerator']:<24} {row['gpus']:>2} {row['model']:<30} "
              f"{row['quant']:<6} {row['depth']:>6,} {row['measured_tok_s']:>9.1f} {row['predicted_tok_s']:>9.1f} "
              f"{row['error']:>+7.1%}")
    s = result["summary"]
    print(f"\n{s['scored']} check rows: median |error| {s['median_abs_error']:.1%}, max {s['max_abs_error']:.1%}; "
          f"dense models ({s['dense_scored']}): median {s['dense_median_abs_error']:.1%}, "
          f"max {s['dense_max_abs_error']:.1%}")


if __name__ == "__main__":
    main()
