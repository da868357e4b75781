"""estimate.fits and fitting_plan prune with a hardware-independent floor of the GPU demand and share one plan's
demand among accelerators with the same demand traits; neither may ever change an answer. Checked against the
unpruned plan on every catalog model × accelerator for scenarios that stress each term of the floor (long contexts,
batches, both engines, tensor parallel, explicit offload)."""

from __future__ import annotations

import pytest

from reports.estimates import CatalogSnapshot
from reports.sizing.errors import SizingError
from reports.sizing.estimate import ENGINE_BACKENDS, fits, fitting_plan, gpu_demand_floor_bytes, plan_memory
from reports.sizing.specs import Scenario

SCENARIOS = (
    Scenario(),
    Scenario(quant="Q8_0", context=131072, batch=4),
    Scenario(quant="Q2_K", context=32768, gpus=2, kv_dtype="q8_0"),
    Scenario(quant="Q4_K_M", context=8192, offload_pct=30.0),
    Scenario(quant="Q4_K_M", context=32768, gpus=1, engine="vllm", kv_dtype="f16"),
    Scenario(quant="Q6_K", context=131072, gpus=4, engine="vllm", kv_dtype="fp8", batch=16),
    Scenario(quant="Q4_K_M", context=8192, gpus=2, engine="vllm", kv_dtype="f16", offload_pct=50.0),
)


def _unpruned(model, hardware, scenario):
    if hardware.backend not in ENGINE_BACKENDS[scenario.engine]:
        return None
    try:
        plan = plan_memory(model, hardware, scenario)
    except SizingError:
        return None
    return plan if plan.fit.fits and plan.format_runs else None  # llama.cpp's CANN backend runs few formats


@pytest.fixture
def seed_catalog_specs(db):
    snapshot = CatalogSnapshot()
    return [snapshot.model(slug) for slug in snapshot.model_slugs], list(snapshot.hardware.values())


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: f"{s.engine}-{s.quant}-{s.context}-{s.gpus}-{s.offload_pct}")
def test_pruning_never_changes_the_answer(seed_catalog_specs, scenario):
    models, accelerators = seed_catalog_specs
    pruned = checked = 0
    for model in models:
        try:
            floor = gpu_demand_floor_bytes(model, scenario)
        except SizingError:
            continue
        for hardware in accelerators:
            expected = _unpruned(model, hardware, scenario)
            assert fitting_plan(model, hardware, scenario) is expected, (model.name, hardware.name)
            assert fits(model, hardware, scenario) is (expected is not None), (model.name, hardware.name)
            if expected is not None:
                # The floor is a lower bound of what the largest GPU holds.
                assert floor <= max(expected.fit.placement.demand_per_gpu) * (1 + 1e-12), (model.name, hardware.name)
            checked += 1
            pruned += floor > 0 and expected is None
    assert checked > 1000 and pruned > 100  # the grid exercises the pruning, not only plans that fit


@pytest.mark.parametrize("scenario", SCENARIOS[::2], ids=lambda s: f"{s.engine}-{s.quant}-{s.context}-{s.gpus}")
def test_speed_only_inputs_never_change_a_plan(seed_catalog_specs, scenario):
    """plan_memory computes one plan for a configuration at any cached depth, prompt length and host RAM bandwidth
    (estimate.memory_scenario): each planned from scratch with them set equals the plan without them."""
    from dataclasses import replace

    from reports.sizing.estimate import _plan_memory, memory_scenario

    models, accelerators = seed_catalog_specs
    at_depth = replace(scenario, depth=scenario.context // 2, prompt=512, system_ram_bandwidth_gbs=60.0)
    assert memory_scenario(at_depth) == scenario
    compared = 0
    for model in models[::3]:
        for hardware in accelerators[::4]:
            try:
                plain = _plan_memory.__wrapped__(model, hardware, scenario)
            except SizingError:
                continue
            assert _plan_memory.__wrapped__(model, hardware, at_depth) == plain, (model.name, hardware.name)
            compared += 1
    assert compared > 100


def test_a_split_by_layer_sizes_fits_whichever_accelerator_was_asked_first(seed_catalog_specs):
    """8 × RTX 4060 Ti 16GB hold DeepSeek-R1-Distill-Qwen-14B at Q6_K, 128K, 4 sequences under llama.cpp with an -ts
    by the layers' sizes (fit.place_llama_cpp; -ts 6,6,6,6,6,6,6,7: 14.45 GiB on the fullest GPU of 15.2 usable),
    while the even -ts puts 16.07 GiB on the last GPU, beside the output head. ``fits`` shares one demand among the
    CUDA cards; asked on an RTX 4090 first (the even split holds it there: its demand), it answered "exceeds" for
    every 16 GB card after it (the offers and the multi-GPU card ask in price order, not by memory)."""
    from reports.sizing import estimate

    _, accelerators = seed_catalog_specs
    by_slug = {hardware.slug: hardware for hardware in accelerators}
    model = CatalogSnapshot().model("deepseek-r1-distill-qwen-14b")
    scenario = Scenario(quant="Q6_K", context=131072, gpus=8, batch=4)
    estimate._largest_gpu_demand.cache_clear()
    assert fits(model, by_slug["rtx-4090"], scenario) is True
    plan = plan_memory(model, by_slug["rtx-4060-ti-16gb"], scenario)
    assert (plan.fit.verdict, plan.placement.tensor_split) == ("tight", (6, 6, 6, 6, 6, 6, 6, 7))
    assert fits(model, by_slug["rtx-4060-ti-16gb"], scenario) is True
    assert fitting_plan(model, by_slug["rtx-4060-ti-16gb"], scenario) is plan


def test_llama_cpp_fits_without_a_plan(seed_catalog_specs):
    """Under llama.cpp ``fits`` places the blocks on unbounded memory instead of planning the first accelerator of
    a kind (its automatic-offload search was most of the work): the searches ask ~40 of them a page and keep only
    the answer. An RTX 4060 Ti 16GB exceeds Gemma 3 27B at Q3_K_M and 32K (the floor alone does not reject it; its
    plan moves layers to system RAM, -ngl 61)."""
    from reports.sizing import estimate

    _, accelerators = seed_catalog_specs
    by_slug = {hardware.slug: hardware for hardware in accelerators}
    model = CatalogSnapshot().model("gemma-3-27b-it")
    scenario = Scenario(quant="Q3_K_M", context=32768)
    estimate._largest_gpu_demand.cache_clear()
    estimate._plan_memory.cache_clear()
    assert gpu_demand_floor_bytes(model, scenario) < estimate.engine_usable_bytes(by_slug["rtx-4060-ti-16gb"], scenario)
    assert fits(model, by_slug["rtx-4060-ti-16gb"], scenario) is False
    assert fits(model, by_slug["rtx-4090"], scenario) is True
    assert estimate._plan_memory.cache_info().currsize == 0
    assert plan_memory(model, by_slug["rtx-4060-ti-16gb"], scenario).fit.verdict == "exceeds"


def test_vllm_fits_without_a_plan(seed_catalog_specs):
    """Under vLLM ``fits`` adds up one rank's weights, one request's KV blocks and the runtime inside vLLM's budget
    (runtime.vllm_start_bytes) instead of planning the first accelerator of a kind: none of them depends on the
    memory, which sizes only the pool's number of blocks. Llama 3.3 70B at FP8 and 32K on 2 GPUs: an H100 80GB
    holds it; an L40S 48GB does not (43.31 GiB a rank of 43.06 usable), though the floor alone (37.86) does not
    reject it."""
    from reports.sizing import estimate

    _, accelerators = seed_catalog_specs
    by_slug = {hardware.slug: hardware for hardware in accelerators}
    model = CatalogSnapshot().model("llama-3-3-70b-instruct")
    scenario = Scenario(quant="FP8", context=32768, gpus=2, engine="vllm", kv_dtype="auto")
    estimate._largest_gpu_demand.cache_clear()
    estimate._plan_memory.cache_clear()
    small = by_slug["l40s-48gb"]
    assert gpu_demand_floor_bytes(model, scenario) < estimate.engine_usable_bytes(small, scenario)
    assert fits(model, small, scenario) is False
    assert fits(model, by_slug["h100-80gb-sxm"], scenario) is True
    assert estimate._plan_memory.cache_info().currsize == 0
    assert plan_memory(model, small, scenario).fit.verdict == "exceeds"


VLLM_SCENARIOS = (
    Scenario(quant="BF16", context=32768, engine="vllm", kv_dtype="auto"),
    Scenario(quant="FP8", context=131072, gpus=2, engine="vllm", kv_dtype="fp8", batch=8, max_num_seqs=16),
    Scenario(quant="AWQ", context=8192, gpus=4, engine="vllm", kv_dtype="auto", offload_pct=30.0,
             gpu_memory_utilization=0.95, max_num_batched_tokens=16384),
    Scenario(quant="MXFP4", context=65536, engine="vllm", kv_dtype="auto", gpu_memory_utilization=0.8),
)


@pytest.mark.parametrize("scenario", VLLM_SCENARIOS, ids=lambda s: f"{s.quant}-{s.context}-{s.gpus}")
def test_vllm_demand_of_a_kind_is_each_accelerators_own(seed_catalog_specs, scenario):
    """The demand ``fits`` shares among accelerators with the same traits, computed on whichever was asked first
    (catalog orders shuffled), equals each one's own plan's (vllm-gaudi aside: ``fits`` plans it), and ``fits``
    answers as that plan's verdict does."""
    import random

    from reports.sizing import estimate
    from reports.sizing.estimate import gpu_demand_bytes, vllm_platform

    models, accelerators = seed_catalog_specs
    compared = 0
    for seed in range(3):
        order = accelerators[:]
        random.Random(seed).shuffle(order)
        estimate._largest_gpu_demand.cache_clear()
        for model in models[seed::3]:
            try:
                gpu_demand_floor_bytes(model, scenario)
            except SizingError:
                continue  # the format does not apply to the model (MXFP4 without experts): fits raises it
            for hardware in order:
                expected = _unpruned(model, hardware, scenario)
                assert fits(model, hardware, scenario) is (expected is not None), (model.name, hardware.name)
                if hardware.backend not in ENGINE_BACKENDS["vllm"] or vllm_platform(hardware) == "intel-gaudi":
                    continue
                try:
                    plan = estimate._plan_memory.__wrapped__(model, hardware, scenario)
                except SizingError:
                    continue
                assert gpu_demand_bytes(model, hardware, scenario) == max(plan.placement.demand_per_gpu), (
                    model.name, hardware.name)
                compared += 1
    assert compared > 500


def test_vllm_memory_share_refused_on_every_accelerator(seed_catalog_specs):
    """vllm_memory_share_refused looks one threshold up per accelerator: a discrete GPU outside vllm-gaudi refuses
    a share above vllm_largest_memory_share, unified memory (capped instead) and vllm-gaudi (a share of the memory
    free after loading) refuse none, and llama.cpp has no share."""
    from reports.sizing.estimate import vllm_largest_memory_share, vllm_memory_share_refused, vllm_platform

    _, accelerators = seed_catalog_specs
    kinds = set()
    for hardware in accelerators:
        capped = hardware.kind == "unified" or vllm_platform(hardware) == "intel-gaudi"
        kinds.add(capped)
        for share in (0.5, 0.9, 0.95, 0.97, 0.98, 0.99, 1.0):
            expected = not capped and share > vllm_largest_memory_share(hardware)
            vllm = Scenario(engine="vllm", kv_dtype="auto", gpu_memory_utilization=share)
            assert vllm_memory_share_refused(hardware, vllm) is expected, (hardware.name, share)
            assert vllm_memory_share_refused(hardware, Scenario(gpu_memory_utilization=share)) is False
    assert kinds == {True, False}
