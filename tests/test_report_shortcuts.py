"""The report page's shortcuts must give exactly what the plain computation gives: the query strings of its links
(report.query_string against urllib's urlencode), the cloud table's verdicts (against asking fits of every offer)."""

from __future__ import annotations

from dataclasses import replace
from urllib.parse import urlencode

import pytest
from django.http import QueryDict

from reports.estimates import CatalogSnapshot
from reports.report import ReportPage, ReportRoute, build_report, query_string
from reports.sizing.estimate import fits

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
