"""The report page's shortcuts must give exactly what the plain computation gives: the query strings of its links
(report.query_string against urllib's urlencode), the recommendations' searches (against asking every candidate),
the cloud table's verdicts (against asking fits of every offer), the neighbour links' scenarios (against
default_scenario)."""

from __future__ import annotations

from dataclasses import replace
from urllib.parse import urlencode

import pytest
from django.http import QueryDict

from reports.estimates import CatalogSnapshot
from reports.forms import COST_FIELDS
from reports.report import (
    STATE_FALLBACKS, ReportPage, ReportRoute, _opening_with, _text_pair, build_report, query_string,
)
from reports.sizing import estimate, recommend
from reports.sizing.errors import SizingError
from reports.sizing.estimate import (
    VLLM_ONLY_FORMATS, default_engine, default_scenario, engine_runs_on, fits, fitting_plan, format_runs_on,
    gpu_demand_floor_bytes, kv_cache_known, vllm_refuses,
)
from reports.sizing.fit import nominal_bytes
from reports.sizing.recommend import recommend_hardware
from reports.sizing.weights import format_applies_to
from reports.sizing.specs import Scenario

QUERIES = (
    [],
    [("quant", "Q4_K_M"), ("context", "32768"), ("engine", "llama.cpp"), ("kv_dtype", "q8_0"), ("offload", "auto")],
    [("name", "My RTX 4090 (modded)"), ("vendor", "NVIDIA & Co"), ("budget", "1,800"), ("hours", "0.5")],
    [("a b", "x+y=z"), ("path", "/en/report/"), ("tilde", "~_.-"), ("empty", ""), ("umlaut", "Größe"), ("pct", "50%")],
    [("gpus", 8), ("share", 0.95), ("usable_pct", 87.5), ("bytes", b"a b"), ("none", None)],
)


@pytest.mark.parametrize("pairs", QUERIES)
def test_query_string_is_urlencode(pairs):
    assert query_string(pairs) == urlencode(pairs)
    assert query_string(pairs) == urlencode(pairs)  # text pairs now from report._text_pair's cache


def test_a_text_pair_is_quoted_once():
    _text_pair.cache_clear()
    pairs = [("quant", "Q4_K_M"), ("name", "My RTX 4090 (modded)"), ("gpus", 2)]
    assert query_string(pairs) == query_string(pairs) == urlencode(pairs)
    assert (_text_pair.cache_info().misses, _text_pair.cache_info().hits) == (2, 2)  # gpus=2: an int, not cached


@pytest.fixture
def catalog_specs(db):
    snapshot = CatalogSnapshot()
    return [snapshot.model(slug) for slug in snapshot.model_slugs], snapshot.hardware_catalog, snapshot.offers


RECOMMENDATION_SCENARIOS = (
    Scenario(),
    Scenario(quant="Q8_0", context=131072, batch=4),
    Scenario(quant="Q2_K", context=32768, kv_dtype="q8_0", offload_pct=30.0),
    Scenario(quant="Q4_K_M", context=32768, engine="vllm", kv_dtype="fp8", batch=16),
)


@pytest.mark.parametrize("scenario", RECOMMENDATION_SCENARIOS, ids=lambda s: f"{s.engine}-{s.quant}-{s.context}")
def test_recommendations_skip_only_what_cannot_fit(catalog_specs, monkeypatch, scenario):
    """recommend._Sizer.plan rejects an accelerator below the demand floor without asking fits: the four
    recommendations are those of asking fitting_plan of every candidate."""
    models, hardware_catalog, offers = catalog_specs
    asked_below_floor = []

    def fitting_plan_above_floor(model, hardware, on_gpus):
        if nominal_bytes(hardware) < gpu_demand_floor_bytes(model, on_gpus):
            asked_below_floor.append((model.slug, hardware.slug, on_gpus.gpus))
        return fitting_plan(model, hardware, on_gpus)

    answers = []
    with monkeypatch.context() as patch:
        patch.setattr(recommend, "fitting_plan", fitting_plan_above_floor)
        for model in models:
            try:
                answers.append(recommend_hardware(model, scenario, hardware_catalog=hardware_catalog, offers=offers))
            except SizingError:
                answers.append(None)
    assert asked_below_floor == []
    with monkeypatch.context() as patch:
        patch.setattr(recommend._Sizer, "plan", lambda self, hardware, count: fitting_plan(
            self.model, hardware, replace(self.scenario, gpus=count)))
        for model, answer in zip(models, answers, strict=True):
            try:
                expected = recommend_hardware(model, scenario, hardware_catalog=hardware_catalog, offers=offers)
            except SizingError:
                expected = None
            assert answer == expected, model.slug
    assert sum(answer is not None and answer.best_value_multi.choice is not None for answer in answers) > 10


def _report(slug: str, hardware_slug: str, query: str) -> ReportPage:
    catalog = CatalogSnapshot()
    model = catalog.model(slug)
    return build_report(model, catalog.accelerator(hardware_slug), QueryDict(query), catalog,
                        route=ReportRoute(model_key=model.slug))


@pytest.mark.parametrize("query", ["", "quant=Q8_0&context=131072&gpus=2&offload=30",
                                   "engine=vllm&kv_dtype=fp8&quant=BF16&batch=16"])
def test_offer_table_asks_each_accelerator_and_count_once(db, monkeypatch, query):
    """The cloud table's verdicts are those of fits on each offer, asked once per accelerator × GPU count."""
    page = _report("llama-3-3-70b-instruct", "h100-80gb-sxm", query)
    asked = []
    fits_on = ReportPage._fits_on
    monkeypatch.setattr(ReportPage, "_fits_on", lambda self, accelerator, gpus: asked.append((accelerator.slug, gpus))
                        or fits_on(self, accelerator, gpus))
    rows = page.offers
    assert len(asked) == len(set(asked)) < len(rows)
    scenario = page.estimate.scenario
    for row in rows:
        assert row.fits == (row.accelerator is not None and fits(
            page.model, row.accelerator, replace(scenario, gpus=row.offer.gpu_count, offload_pct=None)))
    assert any(row.fits for row in rows) and not all(row.fits for row in rows)


OPENING_VALUES = (
    {},
    {"quant": "AWQ", "gpus": "8"},
    {"context": "131072", "batch": "16", "kv_dtype": "fp8", "gpu_memory_utilization": "0.95"},
    {"quant": "Q4_K_M", "kv_dtype": "f16", "gpus": "2", "context": "4096"},
)


@pytest.mark.parametrize("values", OPENING_VALUES, ids=lambda values: "-".join(values) or "defaults")
def test_neighbour_link_scenario_is_the_opening_with_the_kept_fields(catalog_specs, values):
    """report._opening_with, made at once for every neighbour link, is default_scenario with the link's fields."""
    models, hardware_catalog, _ = catalog_specs
    for model in models:
        for hardware in hardware_catalog:
            opening = default_scenario(model, hardware, "vllm")
            expected = replace(
                opening, quant=values.get("quant", opening.quant), kv_dtype=values.get("kv_dtype", opening.kv_dtype),
                context=int(values.get("context", opening.context)), batch=int(values.get("batch", opening.batch)),
                gpus=int(values.get("gpus", opening.gpus)),
                gpu_memory_utilization=float(values.get("gpu_memory_utilization", opening.gpu_memory_utilization)))
            assert _opening_with(model, hardware, "vllm", values) == expected, (model.slug, hardware.slug)


@pytest.mark.parametrize("query", ["", "quant=Q8_0&context=32768&batch=4", "engine=vllm&kv_dtype=fp8&context=16384"])
def test_matrix_reuses_the_pages_plans(db, monkeypatch, query):
    """The matrix's own row is the estimate's plan and decode; on one GPU its smallest-fit searches plan no
    accelerator with this one's demand traits (the row's plan on this one is their demand), and the rows are those
    of planning every format and searching the catalog afresh."""
    page = _report("llama-3-3-70b-instruct", "h100-80gb-sxm", query)
    estimate._largest_gpu_demand.cache_clear()
    planned = []
    plan = estimate._plan_memory  # what plan_memory calls for every plan, cached or not
    monkeypatch.setattr(estimate, "_plan_memory", lambda model, hardware, scenario: planned.append(hardware)
                        or plan(model, hardware, scenario))
    rows = page.matrix
    own_traits = estimate._demand_traits(page.hardware, page.estimate.scenario.engine)
    others = [hardware for hardware in planned if hardware != page.hardware]  # its own plans: the rows'
    # The spy sees the rows' plans on this accelerator; fits plans no stand-in accelerator any more (llama.cpp places
    # on unbounded memory, vLLM adds up one rank's demand: estimate._largest_gpu_demand), so `others` may be empty.
    assert page.hardware in planned
    assert all(estimate._demand_traits(hardware, page.estimate.scenario.engine) != own_traits for hardware in others)
    e = page.estimate
    current = next(row for row in rows if row.is_current)
    assert (current.required_bytes, current.decode_tok_s) == (e.memory.fit.required_bytes, e.decode.tokens_per_s)
    estimate._largest_gpu_demand.cache_clear()  # searched again, each kind of accelerator planned on another card
    for row in rows:
        on_one_gpu = replace(e.scenario, quant=row.quant, gpus=1)
        assert row.smallest_fit == recommend.smallest_fitting(page.model, on_one_gpu, page.catalog.hardware_by_memory)


def _runnable_state_plain(model, hardware, engine, pairs):
    """report._runnable_state without its shortcuts: every fallback asked of vLLM in turn."""
    if engine != "vllm" or not pairs:
        return pairs
    for dropped in ((), *STATE_FALLBACKS):
        kept = [pair for pair in pairs if pair[0] not in dropped]
        if not vllm_refuses(model, hardware, _opening_with(model, hardware, engine, dict(kept))):
            return kept
    return [pair for pair in pairs if pair[0] not in STATE_FALLBACKS[-1]]


def _model_link_query_plain(page, model):
    """ReportPage.state_query_for_model as one loop per model (before the links shared their state per kind)."""
    chosen = page.chosen_fields
    engine = chosen.get("engine")
    if engine == "vllm" and not kv_cache_known(model):
        engine = None
    effective = engine or default_engine(page.hardware)
    pairs = []
    for name, value in chosen.items():
        if name == "quant" and not (format_applies_to(model, value) and format_runs_on(effective, value, page.hardware)
                                    and not (effective == "llama.cpp" and value in VLLM_ONLY_FORMATS)):
            continue
        if name == "context" and model.max_context and int(value) > model.max_context:
            continue
        if name == "engine":
            if engine is not None:
                pairs.append((name, value))
            continue
        if name == "kv_dtype":
            pairs += page._chosen_kv_as(effective)
            continue
        pairs.append((name, value))
    costs = [pair for pair in pairs if pair[0] in COST_FIELDS]
    pairs = _runnable_state_plain(model, page.hardware, effective, [pair for pair in pairs if pair[0] not in COST_FIELDS])
    return query_string(pairs + costs)


def _hardware_link_query_plain(page, hardware):
    chosen = page.chosen_fields
    engine = chosen.get("engine")
    if engine is not None and not engine_runs_on(engine, hardware):
        engine = None
    effective = engine or default_engine(hardware)
    pairs = []
    quant = chosen.get("quant")
    if quant is not None and format_runs_on(effective, quant, hardware) and not (
            effective == "llama.cpp" and quant in VLLM_ONLY_FORMATS):
        pairs.append(("quant", quant))
    pairs += [(name, chosen[name]) for name in ("context", "batch") if name in chosen]
    pairs += page._chosen_kv_as(effective)
    if engine is not None:
        pairs.append(("engine", engine))
        if engine == "vllm" and "gpu_memory_utilization" in chosen:
            pairs.append(("gpu_memory_utilization", chosen["gpu_memory_utilization"]))
    pairs = _runnable_state_plain(page.model, hardware, effective, pairs)
    pairs += [(name, chosen[name]) for name in ("hours", "kwh") if name in chosen]
    return query_string(pairs)


LINK_STATES = (
    "quant=Q8_0&context=131072&gpus=2&batch=4&kv_dtype=q8_0&hours=6",
    "engine=vllm&kv_dtype=fp8&quant=AWQ&gpus=8&context=32768&gpu_memory_utilization=0.95&kwh=0.3",
    "engine=vllm&context=65536&batch=16&budget=30000",
    "engine=vllm&quant=FP8&gpus=4&offload=30",
    "engine=vllm&gpus=8&batch=4",  # no format: a refused split still falls back
)


@pytest.mark.parametrize("query", LINK_STATES)
def test_neighbour_links_are_those_of_working_out_each_link_alone(db, query):
    """The model links share their state per kind of model (what of the visitor's state applies to it), and a link
    with nothing a fallback drops is not asked of vLLM: every link is what one loop per link gives."""
    page = _report("qwen3-30b-a3b-instruct-2507", "h100-80gb-sxm", query)
    expected = [_model_link_query_plain(page, page.catalog.model(row.slug)) for row in page.catalog.model_rows
                if row.slug != page.model.slug]
    assert [url.partition("?")[2] for _, url in page.other_model_links] == expected
    assert len(page.__dict__["_model_link_states"]) <= 8 < len(expected)
    expected = [_hardware_link_query_plain(page, hardware) for hardware in page.catalog.hardware.values()
                if hardware != page.hardware]
    assert [url.partition("?")[2] for _, url in page.other_hardware_links] == expected


def test_a_report_request_reverses_no_url_its_language_already_reversed(client, db, monkeypatch):
    """The report view's breadcrumbs and the link to the hardware page come from report.url_pattern (reverse()
    memoized per language, script prefix and URLconf): a second state of a report reverses nothing in Python."""
    from reports import report, views

    path = "/de/report/gemma-3-27b-it/rtx-3090/"
    assert client.get(path + "?context=4096&gpus=2").status_code == 200
    reversed_urls = []
    for module in (views, report):
        monkeypatch.setattr(module, "reverse", lambda *args, **kwargs: reversed_urls.append(args) or "/")
    response = client.get(path + "?context=16384&gpus=2")
    assert response.status_code == 200 and reversed_urls == []
    assert b'href="/de/hardware/rtx-3090/?gpus=2"' in response.content


@pytest.mark.parametrize("slug", ["qwen3-30b-a3b-instruct-2507", "llama-3-3-70b-instruct"])
def test_the_pages_bound_flags_are_worked_out_once(db, slug):
    """Every total and speed of a page (two a matrix row) asks whether it is a bound: the answer is kept."""
    page = _report(slug, "rtx-4090", "")
    assert (page.total_lower_bound, page.speed_upper_bound) == (not kv_cache_known(page.model),
                                                               not page.model.layer_count_known)
    assert {"total_lower_bound", "speed_upper_bound"} <= page.__dict__.keys()


def test_the_summary_times_only_its_short_context(db, monkeypatch):
    """The lead quotes speeds at 8K and only the memory at 32K: the long context is planned, not timed."""
    from reports import report

    page = _report("gemma-3-27b-it", "rtx-3090", "quant=Q8_0&context=65536")
    timed = []
    estimate_speeds = report.estimate_speeds
    monkeypatch.setattr(report, "estimate_speeds", lambda model, hardware, scenario, *rest: timed.append(
        scenario.context) or estimate_speeds(model, hardware, scenario, *rest))
    summary = page.summary
    assert timed == [8192] and summary["total_32k"] > summary["total_8k"] > 0


def test_reports_at_other_gpu_counts_share_the_recommendations(db):
    """Each recommendation picks its own GPU count: a report at 4 GPUs recommends what one at 1 GPU does, read from
    the catalog's cache, and that is what recommend_hardware answers for the 4-GPU scenario itself."""
    from reports.sizing.recommend import recommend_hardware

    catalog = CatalogSnapshot()
    model, hardware = catalog.model("llama-3-3-70b-instruct"), catalog.accelerator("h100-80gb-sxm")
    pages = [build_report(model, hardware, QueryDict(f"quant=Q8_0&context=32768&gpus={gpus}"), catalog,
                          route=ReportRoute(model_key=model.slug)) for gpus in (1, 4)]
    first = pages[0].recommendations
    misses = catalog.recommendations.cache_info().misses
    assert pages[1].recommendations == first and catalog.recommendations.cache_info().misses == misses
    on_four = pages[1].estimate.scenario
    assert on_four.gpus == 4 and recommend_hardware(
        model, replace(on_four, offload_pct=None), hardware_catalog=catalog.hardware_catalog,
        offers=catalog.offers) == first
