"""estimate() keeps two of the costs on the fitting offers, the one where a token of one stream costs least and the
one where a token of --batch streams does, and computes only their prefill (estimate._cheapest_costs). Neither may
ever differ from the minimum over every offer's full cost (offer_costs, what the compare page lists): checked on
every catalog model for scenarios of both engines, batches, contexts and GPU counts."""

from __future__ import annotations

import pytest

from reports.estimates import CatalogSnapshot
from reports.sizing import estimate as estimate_module
from reports.sizing.errors import SizingError
from reports.sizing.estimate import _cheapest_costs, estimate, offer_costs, offer_order, validate_scenario
from reports.sizing.specs import Scenario

SCENARIOS = (
    Scenario(),
    Scenario(quant="Q8_0", context=32768, batch=16),
    Scenario(quant="Q4_K_M", context=131072, batch=4, kv_dtype="q8_0", offload_pct=30.0),
    Scenario(quant="BF16", context=8192, engine="vllm", kv_dtype="f16", batch=16),
    Scenario(quant="FP8", context=65536, engine="vllm", kv_dtype="fp8", gpus=2),
)


@pytest.fixture
def seed_catalog(db):
    snapshot = CatalogSnapshot()
    return snapshot, [snapshot.model(slug) for slug in snapshot.model_slugs]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: f"{s.engine}-{s.quant}-{s.context}-b{s.batch}")
def test_the_cheapest_costs_are_the_minimum_over_every_fitting_offer(seed_catalog, scenario):
    snapshot, models = seed_catalog
    hardware = snapshot.hardware_catalog[0]
    priced = 0
    for model in models:
        try:
            validate_scenario(scenario)
            every = offer_costs(model, hardware, scenario, snapshot.offers, snapshot.hardware_catalog)
        except SizingError:
            continue
        single, batch = _cheapest_costs(model, hardware, scenario, snapshot.offers, snapshot.hardware_catalog)
        assert single == min(every, key=lambda c: (c.single_stream_usd_per_mtok, *offer_order(c.offer)),
                             default=None), model.name
        assert batch == min(every, key=lambda c: (c.batch_usd_per_mtok, *offer_order(c.offer)),
                            default=None), model.name
        priced += single is not None
    assert priced > 20  # the grid prices most models, not only those no offer holds


def test_an_estimate_computes_the_prefill_of_its_two_cheapest_offers_only(seed_catalog, monkeypatch):
    """~15 offer groups hold Qwen3 30B-A3B at 32K: their costs per token are compared on decode speeds alone."""
    snapshot, _ = seed_catalog
    model, hardware = snapshot.model("qwen3-30b-a3b-instruct-2507"), snapshot.accelerator("rtx-4090")
    scenario = Scenario(quant="Q4_K_M", context=32768, batch=4)
    calls = []
    prefill = estimate_module._prefill_speed
    monkeypatch.setattr(estimate_module, "_prefill_speed", lambda *args: calls.append(args) or prefill(*args))
    result = estimate(model, hardware, scenario, offers=snapshot.offers, hardware_catalog=snapshot.hardware_catalog)
    # estimate_speeds' own prefill, the cheapest single-stream offer's and the cheapest batch offer's.
    assert len(calls) <= 3
    every = offer_costs(model, hardware, scenario, snapshot.offers, snapshot.hardware_catalog)
    assert len(every) > 5 and result.cost is not None and result.batch_cost is not None


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: f"{s.engine}-{s.quant}-{s.context}-b{s.batch}")
def test_the_visitors_gpu_count_does_not_change_a_cost_on_the_offers(seed_catalog, scenario):
    """Each offer runs on its own GPU count, so the offers' costs are cached without the visitor's
    (estimate._offer_pricing_inputs): computed afresh at every GPU count, they are the same costs."""
    from dataclasses import replace

    snapshot, _ = seed_catalog
    model, hardware = snapshot.model("qwen3-30b-a3b-instruct-2507"), snapshot.hardware_catalog[0]
    offers, catalog = tuple(estimate_module.confirmed_offers(snapshot.offers)), tuple(snapshot.hardware_catalog)
    answers = set()
    for gpus in (1, 2, 4, 8):
        on_gpus = replace(scenario, gpus=gpus, offload_pct=None, depth=estimate_module.cost_depth(scenario))
        estimate_module._costs_on_offers.cache_clear()
        estimate_module._speeds_on_offers.cache_clear()
        # The key as it was before the GPU count was left out of it: the scenario with the visitor's count.
        answers.add(estimate_module._costs_on_offers(model, on_gpus, offers, catalog))
    assert len(answers) == 1 and len(next(iter(answers))) > 5
    assert offer_costs(model, hardware, replace(scenario, gpus=8), snapshot.offers, catalog) == next(iter(answers))


def test_a_report_at_another_gpu_count_reads_the_offers_speeds_from_the_cache(seed_catalog):
    """The configurator's GPU count changes the report, not the costs on the cloud offers: not computed again."""
    snapshot, _ = seed_catalog
    model, hardware = snapshot.model("qwen3-30b-a3b-instruct-2507"), snapshot.accelerator("rtx-4090")
    estimate_module._speeds_on_offers.cache_clear()
    first = _cheapest_costs(model, hardware, Scenario(context=32768, gpus=1), snapshot.offers,
                            snapshot.hardware_catalog)
    misses = estimate_module._speeds_on_offers.cache_info().misses
    again = _cheapest_costs(model, hardware, Scenario(context=32768, gpus=4), snapshot.offers,
                            snapshot.hardware_catalog)
    assert again == first and estimate_module._speeds_on_offers.cache_info().misses == misses
