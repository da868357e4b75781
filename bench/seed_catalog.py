"""Engine specs straight from the catalog's seed files (catalog/seed/*.json), for pure engine tests and the benchmarks
(no DB).

Mirrors what catalog/specs.py and reports/estimates.py build from the database: a model's spec is its config.json
through config_parser; an accelerator's price is its latest "new" price (reports/estimates.py _latest_new_price).
"""

from __future__ import annotations

import json
from dataclasses import fields
from functools import cache
from pathlib import Path

from reports.sizing.config_parser import parse_config
from reports.sizing.specs import CloudOfferSpec, HardwareSpec, ModelSpec

SEED = Path(__file__).resolve().parents[1] / "catalog" / "seed"
_HARDWARE_FIELDS = {f.name for f in fields(HardwareSpec)}
_OFFER_FIELDS = {f.name for f in fields(CloudOfferSpec)}


@cache
def _rows(name: str) -> tuple[dict, ...]:
    return tuple(json.loads((SEED / name).read_text()))


@cache
def model(slug: str) -> ModelSpec:
    row = next(row for row in _rows("models.json") if row["slug"] == slug)
    return parse_config(row["config"], slug=slug, name=row["name"])


def _latest_new_price(row: dict) -> float | None:
    prices = [price for price in row.get("prices", ()) if price["condition"] == "new"]
    return float(max(prices, key=lambda price: price["as_of"])["usd"]) if prices else None


@cache
def accelerators() -> tuple[HardwareSpec, ...]:
    specs = []
    for row in _rows("accelerators.json"):
        values = {key: value for key, value in row.items() if key in _HARDWARE_FIELDS and value is not None}
        specs.append(HardwareSpec(**values, price_usd=_latest_new_price(row)))
    return tuple(specs)


def accelerator(slug: str) -> HardwareSpec:
    return next(spec for spec in accelerators() if spec.slug == slug)


@cache
def offers() -> tuple[CloudOfferSpec, ...]:
    return tuple(CloudOfferSpec(**{key: value for key, value in row.items() if key in _OFFER_FIELDS})
                 for row in _rows("cloud_offers.json"))
