"""Compare up to four accelerators (or GPU counts) for one model, side by side, from the engine's estimates."""

from __future__ import annotations

from dataclasses import dataclass, replace
from urllib.parse import urlencode

from django.http import QueryDict

from reports.engine_messages import sizing_error_text
from reports.estimates import CatalogSnapshot
from reports.forms import COST_FIELDS, ConfiguratorForm, scenario_query
from reports.sizing.errors import SizingError
from reports.sizing.estimate import Estimate, engine_usable_bytes, offer_costs, offer_order
from reports.sizing.economics import fleet_power_w, fleet_price_usd, monthly_cloud_cost, price_per_usable_gib, rent_comparison
from reports.sizing.specs import CloudOfferSpec, HardwareSpec, ModelSpec

MAX_COMPARED = 4
MAX_COUNT = 16


@dataclass(frozen=True)
class Choice:
    """One compared column as the URL gives it: `slug` or `slug:count` (?hw=h100-80gb-sxm:2)."""

    slug: str
    count: int

    @property
    def token(self) -> str:
        return self.slug if self.count == 1 else f"{self.slug}:{self.count}"


@dataclass(frozen=True)
class Column:
    choice: Choice
    hardware: HardwareSpec
    estimate: Estimate | None
    error: str  # why this column could not be sized (e.g. heads not divisible by the GPU count)
    # The catalog offer of exactly this accelerator × count where a token costs least (one stream), priced as the
    # report's cost card prices an offer: the whole model on its GPUs (no offload), at estimate.cost_depth; else the
    # cheapest such offer per hour (it does not hold the model: cost_per_mtok_usd is None).
    offer: CloudOfferSpec | None
    cost_per_mtok_usd: float | None  # on that offer, one stream
    price_per_usable_gib: float | None  # purchase price of the GPUs ÷ the memory the engine uses (GiB, as the rows)
    power_w: float | None
    report_query: str  # this column's report in the compared configuration
    purchase_usd: float | None = None  # GPU count × the catalog price of one (None: no price published)
    # The exact-count offer with the smallest bill at the visitor's hours (reserved: 24 h/day), as the report's rent
    # vs. buy picks it (economics.rent_comparison), and that bill.
    monthly_offer: CloudOfferSpec | None = None
    monthly_cloud_usd: float | None = None
    # GPU counts the catalog rents this accelerator in when no offer has exactly this count. Those are other
    # machines: GPUs of separate instances would exchange activations over the network, not NVLink/PCIe, so the
    # column's speeds do not hold for them and no cost is made up from them.
    other_offer_counts: tuple[int, ...] = ()


def selection_from_query(query: QueryDict) -> list[str]:
    """The compared accelerators as `slug[:count]` texts: the form's slots (hw0 + n0 … hw3 + n3), then any
    `hw=slug:count` values of a shared link."""
    values = []
    for slot in range(MAX_COMPARED):
        slug = query.get(f"hw{slot}", "").strip()
        if slug:
            count = query.get(f"n{slot}", "").strip()
            values.append(f"{slug}:{count}" if count else slug)
    return values + query.getlist("hw")


def parse_choices(values: list[str], catalog: CatalogSnapshot) -> tuple[list[Choice], list[str]]:
    """Valid choices (at most four, in order, duplicates dropped) and the rejected values."""
    choices, problems = [], []
    for raw in values[:4 * MAX_COMPARED]:
        slug, _, count_text = raw.strip().partition(":")
        if slug not in catalog.hardware:
            problems.append(raw)
            continue
        try:
            count = int(count_text) if count_text else 1
        except ValueError:
            problems.append(raw)
            continue
        if not 1 <= count <= MAX_COUNT:
            problems.append(raw)
            continue
        choice = Choice(slug, count)
        if choice not in choices:
            choices.append(choice)
    return choices[:MAX_COMPARED], problems


def compare_columns(model: ModelSpec, choices: list[Choice], form: ConfiguratorForm,
                    catalog: CatalogSnapshot) -> list[Column]:
    scenario = form.scenario()
    hours = form.cost_inputs()["hours"]
    cost_pairs = [(name, form.data[name]) for name in COST_FIELDS
                  if form.data.get(name) not in (None, "") and name not in form.errors]
    columns = []
    for choice in choices:
        hardware = catalog.accelerator(choice.slug)
        try:
            estimate = catalog.estimate(model, hardware, replace(scenario, gpus=choice.count))
            error = ""
        except SizingError as exc:
            estimate, error = None, sizing_error_text(exc)
        confirmed = [o for o in catalog.offers if o.confirmed and o.accelerator_slug == choice.slug]
        exact = [o for o in confirmed if o.gpu_count == choice.count]
        offer = min(exact, key=offer_order, default=None)
        other_counts = () if offer else tuple(sorted({o.gpu_count for o in confirmed}))
        cost = price = monthly_offer = monthly = None
        if estimate is not None:
            costs = offer_costs(model, hardware, replace(scenario, gpus=choice.count), exact,
                                tuple(catalog.hardware.values()))
            cheapest = min(costs, key=lambda c: (c.single_stream_usd_per_mtok, *offer_order(c.offer)), default=None)
            if cheapest is not None:
                offer, cost = cheapest.offer, cheapest.single_stream_usd_per_mtok
            # What the engine uses of each GPU: under vLLM its --gpu-memory-utilization budget.
            price = price_per_usable_gib(price_usd=hardware.price_usd, gpus=choice.count,
                                         usable_bytes_per_gpu=engine_usable_bytes(hardware, scenario))
            rent = rent_comparison(exact, accelerator_slug=choice.slug, gpus=choice.count, hours_per_day=hours,
                                   local_tok_s=None, cheapest_per_token=None)
            if rent is not None:
                monthly_offer = rent.offer
                monthly = monthly_cloud_cost(rent.offer.hourly_usd, rent.offer.billed_hours_per_day or hours)
        columns.append(Column(choice, hardware, estimate, error, offer, cost, price,
                              fleet_power_w(tdp_w=hardware.tdp_w, gpus=choice.count),
                              urlencode([*scenario_query(replace(scenario, gpus=choice.count)), *cost_pairs]),
                              purchase_usd=fleet_price_usd(price_usd=hardware.price_usd, gpus=choice.count),
                              monthly_offer=monthly_offer, monthly_cloud_usd=monthly,
                              other_offer_counts=other_counts))
    return columns


def compare_form(model: ModelSpec, query: QueryDict, catalog: CatalogSnapshot) -> ConfiguratorForm:
    return ConfiguratorForm(query, quant_names=catalog.quant_names, max_context=model.max_context, default_budget=None,
                            model=model)
