"""vLLM on Intel Gaudi budgets its memory as vllm-gaudi does (runtime._vllm_hpu_runtime), not as vLLM on CUDA.

vllm_gaudi/v1/worker/hpu_worker.py determine_available_memory: free = memory free after loading the weights and the
profiling run; usable = gpu_memory_utilization × free; HPU graphs = VLLM_GRAPH_RESERVED_MEM (0.1) × usable; KV cache
= the rest; (1 − utilization) × free stays unused.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from bench import seed_catalog as catalog
from reports.sizing.estimate import GIB, fits, plan_memory, reported_memory_bytes
from reports.sizing.runtime import runtime_memory
from reports.sizing.specs import Scenario

GAUDI_3 = catalog.accelerator("gaudi-3-128gb")
BF16_VLLM = Scenario(quant="BF16", engine="vllm")


def test_gaudi_budget_is_a_share_of_the_free_memory_not_of_the_total():
    plan = plan_memory(catalog.model("llama-3-1-8b-instruct"), GAUDI_3, BF16_VLLM)
    total = reported_memory_bytes(GAUDI_3)
    assert total == 128 * GIB * 79.19 / 80
    weights = plan.tensor_parallel.per_rank_bytes
    activation = plan.runtime.term("activation peak").bytes
    free = total - weights - activation
    assert plan.runtime.graph_reserve_bytes == pytest.approx(0.1 * 0.9 * free, rel=1e-12)
    assert plan.runtime.term("CUDA graphs") is None and plan.runtime.term("non-torch memory") is None
    # The reserve lowers the usable memory like CUDA's headroom; the model requires weights, KV and activations.
    assert [term.name for term in plan.runtime.terms] == ["activation peak"]
    assert plan.runtime.capacity.available_bytes == pytest.approx(0.9 * 0.9 * free, rel=1e-12)
    assert plan.runtime.unused_bytes == pytest.approx(0.1 * free, rel=1e-12)
    # No usable-memory factor on top: vllm-gaudi's budget is all of it (the pool above is sized from it alone).
    assert plan.fit.usable_bytes_per_gpu == pytest.approx(total - 0.1 * free - 0.09 * free, rel=1e-12)
    # Llama 3.1 8B: 128 KiB of KV per token (32 layers × 8 KV heads × 128 × 2 × 2 B), in blocks of 16 tokens (vLLM's
    # CUDA default; vllm-gaudi's 128-token blocks round to at most 112 tokens fewer).
    per_token = 32 * 8 * 128 * 2 * 2
    assert plan.runtime.capacity.kv_tokens == int(0.81 * free // (per_token * 16)) * 16 == 728_496


def test_enforce_eager_reserves_no_graphs():
    plan = plan_memory(catalog.model("llama-3-1-8b-instruct"), GAUDI_3, BF16_VLLM)
    eager = runtime_memory(catalog.model("llama-3-1-8b-instruct"), BF16_VLLM,
                           weights_bytes_per_gpu=plan.tensor_parallel.per_rank_bytes, kv=plan.kv,
                           hardware_memory_bytes=reported_memory_bytes(GAUDI_3), hardware_name=GAUDI_3.name,
                           backend=GAUDI_3.backend, enforce_eager=True, hpu=True)
    assert eager.graph_reserve_bytes == 0
    free = reported_memory_bytes(GAUDI_3) - plan.tensor_parallel.per_rank_bytes - eager.term("activation peak").bytes
    assert eager.capacity.available_bytes == pytest.approx(0.9 * free, rel=1e-12)


@pytest.mark.parametrize("slug, context", [("llama-3-3-70b-instruct", 8192), ("llama-3-3-70b-instruct", 131072),
                                           ("qwen3-32b", 32768), ("llama-3-1-8b-instruct", 131072)])
def test_fits_agrees_with_the_plan_on_gaudi(slug, context):
    model = catalog.model(slug)
    for gpus in (1, 2):
        scenario = replace(BF16_VLLM, context=context, gpus=gpus)
        assert fits(model, GAUDI_3, scenario) == (plan_memory(model, GAUDI_3, scenario).fit.verdict != "exceeds")


def test_a_70b_bf16_model_exceeds_one_gaudi_3_and_fits_two():
    # 70.6 B parameters × 2 B = 131 GiB of weights: more than 128 GB.
    model = catalog.model("llama-3-3-70b-instruct")
    assert not fits(model, GAUDI_3, BF16_VLLM)
    assert fits(model, GAUDI_3, replace(BF16_VLLM, gpus=2))


@pytest.mark.parametrize("slug, quant, context, gpus", [("minimax-m2-5", "MXFP4", 8192, 1),
                                                        ("mistral-large-2-123b", "BF16", 32768, 2)])
def test_the_verdict_agrees_with_the_pool_when_the_weights_nearly_fill_the_memory(slug, quant, context, gpus):
    """A pool that holds a full-context sequence starts; the 0.95 usable-memory factor of other accelerators said
    "exceeds" here beside a pool of 17,184 tokens (MiniMax M2.5 at 8K on one Gaudi 3)."""
    plan = plan_memory(catalog.model(slug), GAUDI_3, replace(BF16_VLLM, quant=quant, context=context, gpus=gpus))
    capacity = plan.runtime.capacity
    assert capacity.kv_tokens >= context
    assert plan.fit.verdict != "exceeds"


def test_the_page_note_gives_the_gaudi_budget():
    from reports.sizing.estimate import estimate

    result = estimate(catalog.model("llama-3-1-8b-instruct"), GAUDI_3, BF16_VLLM)
    note = next(n for n in result.warnings if n.code == "vllm_gaudi_budget")
    assert note.params["graphs_gib"] == result.memory.runtime.graph_reserve_bytes / GIB
    assert note.params["usable_gib"] == result.memory.fit.usable_bytes_per_gpu / GIB
    assert note.params["unused_gib"] == result.memory.runtime.unused_bytes / GIB
