"""Recommended hardware for one model × scenario, chosen from the catalog.

Four recommendations, as on the seed report pages ("Recommended Hardware for Current Configuration"); "fits" means
the verdict is not "exceeds" (the model runs without automatic offload). Each one prefers hardware that holds the
scenario comfortably: a candidate whose verdict is "tight" (less than fit.TIGHT_BUFFER of its memory to spare: a
longer prompt, a second program or a driver update away from failing) is passed over for the next one in the
order below that fits with room; only when every candidate that fits is tight is the first of those recommended,
and its card says so. (Before, the cheapest fit won even when tight: Llama 3.3 70B at Q4_K_M and 8K got an RTX A6000
with 7.7 % of its memory to spare, Qwen3 30B-A3B at 128K a Radeon AI PRO R9700 with 2.3 %.)

* ``best_single``: one discrete GPU or datacenter accelerator (unified-memory machines have their own card). Among
  those that fit, the cheapest by its latest new price (``HardwareSpec.price_usd``); equal prices: the faster
  decode. When none of the fitting ones has a price: the smallest memory that fits (equal memory: faster decode).
* ``best_value_multi``: ``count`` × one priced accelerator, count in MULTI_GPU_COUNTS, with the lowest total price
  (count × price) that fits under the scenario's engine (vLLM: a tensor-parallel split its divisibility rules
  accept; llama.cpp: layer split). Equal totals: fewer GPUs, then slug. Under llama.cpp none when one accelerator
  holds it with room: its layer split adds memory, not speed.
* ``unified``: the unified-memory machine (Apple Mac, DGX Spark, Ryzen AI Max) with the least memory that fits;
  equal memory: lower price.
* ``cloud``: the catalog cloud offer with the lowest hourly price whose accelerator × GPU count fits (tight
  included: the same rule as the report's offer table, cost per 1M tokens and rent vs. buy; unlike the hardware
  cards it does not pass over a tight fit), in economics.cheapest_offer's order (hourly price, fewer GPUs,
  provider, instance), of the offers whose rate is confirmed (specs.confirmed_offers); with its cost per 1M
  tokens there (which is not the cheapest per token: the report's cost card is).

An empty recommendation has ``choice`` None and a ``reason`` Note (codes in notes.py).

Speed: candidates are checked with estimate.fits (a hardware-independent lower bound rejects the hopeless ones,
the others share one plan per kind of accelerator) and tried cheapest first; a full plan is built only for the
answer. plan_memory caches plans across requests.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from .economics import ServingCost
from .estimate import (
    GIB, MemoryPlan, cost_depth, engine_runs_on, fits, fitting_plan,
    gpu_demand_floor_bytes, stream_decode_speed, validate_scenario,
)
from .fit import Verdict, nominal_bytes, usable_bytes
from .notes import Note
from .parameters import count_parameters
from .specs import CloudOfferSpec, HardwareSpec, ModelSpec, Scenario, confirmed_offers, scenario_with

# The counts the configurator offers up to one server (forms.GPU_COUNTS): 3 × MI300X ($37,500) held DeepSeek-V3 at
# less than 2 × MI325X ($42,000), which the card called the cheapest. vLLM refuses counts its tensor-parallel split
# does not divide (estimate.fits), so an odd count is only proposed where it runs.
MULTI_GPU_COUNTS = (2, 3, 4, 6, 8)

Choice = TypeVar("Choice")


@dataclass(frozen=True)
class HardwareChoice:
    """``count`` × ``hardware`` running the scenario. Bytes; totals in the catalog's decimal GB and USD."""

    hardware: HardwareSpec
    count: int
    verdict: Verdict
    required_bytes: float
    per_gpu_bytes: float  # what the fullest GPU holds
    usable_bytes_per_gpu: float
    decode_tok_s: float

    @property
    def total_memory_gb(self) -> float:
        return self.count * self.hardware.memory_gb

    @property
    def total_price_usd(self) -> float | None:
        price = self.hardware.price_usd
        return self.count * price if price is not None else None

    @property
    def required_gib(self) -> float:
        return self.required_bytes / GIB


@dataclass(frozen=True)
class CloudChoice:
    offer: CloudOfferSpec
    hardware: HardwareSpec
    verdict: Verdict
    required_bytes: float
    per_gpu_bytes: float
    decode_tok_s: float  # one stream, empty cache (the speed the other cards show)
    cost_per_mtok_usd: float  # one stream (batch 1), as the estimate contract's cost_per_mtok_usd
    priced_tok_s: float  # the speed that cost is priced at: one stream at priced_depth cached tokens
    priced_depth: int

    @property
    def total_memory_gb(self) -> float:
        return self.offer.gpu_count * self.hardware.memory_gb


@dataclass(frozen=True)
class Recommendation(Generic[Choice]):
    choice: Choice | None
    reason: Note | None = None  # why there is no choice


@dataclass(frozen=True)
class Recommendations:
    best_single: Recommendation[HardwareChoice]
    best_value_multi: Recommendation[HardwareChoice]
    unified: Recommendation[HardwareChoice]
    cloud: Recommendation[CloudChoice]


def recommend_hardware(model: ModelSpec, scenario: Scenario, *, hardware_catalog: Sequence[HardwareSpec],
                       offers: Sequence[CloudOfferSpec]) -> Recommendations:
    """The four recommendations of the module doc for ``model`` under ``scenario`` (its ``gpus`` is ignored)."""
    validate_scenario(scenario)
    sizer = _Sizer(model, scenario)
    runnable = [spec for spec in hardware_catalog if engine_runs_on(scenario.engine, spec)]
    discrete = [spec for spec in runnable if spec.kind != "unified"]
    multi = _best_value_multi(sizer, discrete)
    single = _best_single(sizer, discrete, multi)
    if (scenario.engine == "llama.cpp" and single.choice is not None and single.choice.verdict != "tight"
            and (multi.choice is None or single.choice.hardware.price_usd is None
                 or multi.choice.total_price_usd >= single.choice.hardware.price_usd)):
        # llama.cpp's layer split has the GPUs take turns on a token: a second card only adds memory, which one card
        # already has (Llama 3.1 8B: 2 × RTX 3060 for $658 at the ~62.5 tok/s of one). Cheaper cards together still
        # count (Llama 3.3 70B: 2 × Radeon AI PRO R9700 for $2,600 against one RTX PRO 6000 for $8,500).
        multi = Recommendation(None, Note("multi_gpu_not_needed", f"not needed: one {single.choice.hardware.name} "
                                          "holds it, and more GPUs would not decode faster under llama.cpp",
                                          {"single": single.choice.hardware.name}))
    return Recommendations(
        best_single=single,
        best_value_multi=multi,
        unified=_unified(sizer, runnable, scenario.engine),
        cloud=_cloud(sizer, offers, hardware_catalog),
    )


class _Sizer:
    """Fit and decode speed of the model on count × accelerator, scenario fixed."""

    def __init__(self, model: ModelSpec, scenario: Scenario) -> None:
        self.model = model
        self.scenario = scenario
        self._on_counts: dict[int, Scenario] = {}
        self._floors: dict[int, float] = {}

    def on(self, count: int) -> Scenario:
        """The scenario on ``count`` GPUs: one per count, as ~40 candidates per search share a handful of counts (a
        dataclass replace of Scenario is ~15 calls)."""
        scenario = self._on_counts.get(count)
        if scenario is None:
            scenario = self._on_counts[count] = scenario_with(self.scenario, gpus=count)
        return scenario

    def plan(self, hardware: HardwareSpec, count: int) -> MemoryPlan | None:
        """The memory plan when it fits, else None. An accelerator whose nominal memory is below the demand floor of
        ``count`` GPUs is rejected without asking ``fits`` (smallest_fitting's bound: no accelerator holds more than
        its nominal memory): most of a search's ~40 candidates are, and ``fits`` costs ~40 calls even then."""
        if nominal_bytes(hardware) < self.floor(count):
            return None
        return fitting_plan(self.model, hardware, self.on(count))

    def floor(self, count: int) -> float:
        """gpu_demand_floor_bytes on ``count`` GPUs: what each of them holds at least, on any accelerator."""
        floor = self._floors.get(count)
        if floor is None:
            floor = self._floors[count] = gpu_demand_floor_bytes(self.model, self.on(count))
        return floor

    def choice(self, hardware: HardwareSpec, count: int, plan: MemoryPlan) -> HardwareChoice:
        fit = plan.fit
        return HardwareChoice(hardware, count, fit.verdict, fit.required_bytes, max(fit.placement.demand_per_gpu),
                              fit.usable_bytes_per_gpu, self.decode_tok_s(hardware, count, plan))

    def decode_tok_s(self, hardware: HardwareSpec, count: int, plan: MemoryPlan) -> float:
        decode = stream_decode_speed(self.model, hardware, self.on(count), plan, count_parameters(self.model))
        return decode.tokens_per_s

    def first_fitting(self, candidates: Iterable[tuple[HardwareSpec, int]]
                      ) -> tuple[HardwareSpec, int, MemoryPlan] | None:
        """The first candidate that holds the scenario with room (any verdict but "tight"); when every one that
        holds it is tight, the first of those."""
        first_tight = None
        for hardware, count in candidates:
            plan = self.plan(hardware, count)
            if plan is None:
                continue
            if plan.fit.verdict != "tight":
                return hardware, count, plan
            first_tight = first_tight or (hardware, count, plan)
        return first_tight

    def fastest_of_ties(self, first: tuple[HardwareSpec, int, MemoryPlan], candidates: Sequence[HardwareSpec],
                        tie_key: Callable[[HardwareSpec], object]) -> HardwareChoice:
        """The fastest-decoding fitting accelerator among ``candidates`` whose tie_key equals the first fit's (and
        that holds it with room, when the first fit does)."""
        hardware, count, plan = first
        choices = [self.choice(hardware, count, plan)]
        with_room = plan.fit.verdict != "tight"
        for other in candidates:
            if other is not hardware and tie_key(other) == tie_key(hardware):
                other_plan = self.plan(other, count)
                if other_plan is not None and (other_plan.fit.verdict != "tight" or not with_room):
                    choices.append(self.choice(other, count, other_plan))
        return max(choices, key=lambda choice: choice.decode_tok_s)


def _best_single(sizer: _Sizer, discrete: list[HardwareSpec],
                 multi: Recommendation[HardwareChoice]) -> Recommendation[HardwareChoice]:
    priced = sorted((spec for spec in discrete if spec.price_usd is not None),
                    key=lambda spec: (spec.price_usd, spec.slug))
    first = sizer.first_fitting((spec, 1) for spec in priced)
    if first is not None:
        return Recommendation(sizer.fastest_of_ties(first, priced, lambda spec: spec.price_usd))
    unpriced = sorted((spec for spec in discrete if spec.price_usd is None),
                      key=lambda spec: (spec.memory_gb, spec.slug))
    first = sizer.first_fitting((spec, 1) for spec in unpriced)
    if first is not None:
        return Recommendation(sizer.fastest_of_ties(first, unpriced, lambda spec: spec.memory_gb))
    largest = max(discrete, key=lambda spec: spec.memory_gb, default=None)
    params = {"largest": largest.name if largest else "", "memory_gb": largest.memory_gb if largest else 0.0}
    if multi.choice is not None:
        return Recommendation(None, Note("multi_gpu_required", "no single accelerator holds it: multi-GPU "
                                         f"required (largest: {params['largest']}; unified-memory machines are "
                                         "recommended separately)", params))
    return Recommendation(None, Note("no_single_fits", "no single accelerator of the catalog holds it (largest: "
                                     f"{params['largest']})", params))


def _best_value_multi(sizer: _Sizer, discrete: list[HardwareSpec]) -> Recommendation[HardwareChoice]:
    candidates = sorted(((spec, count) for spec in discrete if spec.price_usd is not None
                         for count in MULTI_GPU_COUNTS),
                        key=lambda pair: (pair[1] * pair[0].price_usd, pair[1], pair[0].slug))
    first = sizer.first_fitting(candidates)
    if first is None:
        counts = ", ".join(str(count) for count in MULTI_GPU_COUNTS)
        return Recommendation(None, Note("no_priced_multi_gpu", f"no priced accelerator holds it at {counts} GPUs",
                                         {"counts": counts}))
    return Recommendation(sizer.choice(*first))


def _unified(sizer: _Sizer, runnable: list[HardwareSpec], engine: str) -> Recommendation[HardwareChoice]:
    machines = sorted((spec for spec in runnable if spec.kind == "unified"),
                      key=lambda spec: (spec.memory_gb, spec.price_usd is None, spec.price_usd or 0.0, spec.slug))
    if not machines:
        return Recommendation(None, Note("no_unified_for_engine",
                                         f"the catalog has no unified-memory machine {engine} runs on",
                                         {"engine": engine}))
    first = sizer.first_fitting((spec, 1) for spec in machines)
    if first is None:
        largest = machines[-1]
        # Its usable memory beside the nominal size: "512 GB" next to 450 GB required read as if it fitted.
        usable_gib = usable_bytes(largest) / GIB
        return Recommendation(None, Note("exceeds_largest_unified",
                                         f"exceeds the largest unified-memory machine {engine} runs on "
                                         f"({largest.name}, {largest.memory_gb:g} GB, {usable_gib:.1f} GiB usable)",
                                         {"largest": largest.name, "memory_gb": largest.memory_gb, "engine": engine,
                                          "usable_gib": usable_gib}))
    return Recommendation(sizer.choice(*first))


def _cloud(sizer: _Sizer, offers: Sequence[CloudOfferSpec],
           catalog: Sequence[HardwareSpec]) -> Recommendation[CloudChoice]:
    offers = confirmed_offers(offers)  # a rate its source does not support is never the cheapest
    if not offers:
        return Recommendation(None, Note("no_offers", "the catalog has no active cloud offers"))
    by_slug = {spec.slug: spec for spec in catalog}
    # economics.cheapest_offer's order: the first that fits, tight included. The page's one rule for "fits" (the
    # offer table, rent vs. buy and the cost per 1M tokens use it too): the offer's GPUs hold the configuration
    # without offload. Skipping tight offers here made this card name packet.ai at $0.66/h on the Llama 3.3 70B /
    # H100 page while the table listed Vast.ai's L40S at $0.40/h as fitting; the card marks a tight choice instead.
    ordered = sorted(offers, key=lambda offer: (offer.hourly_usd, offer.gpu_count, offer.provider, offer.instance))
    chosen = None
    for offer in ordered:
        hardware = by_slug.get(offer.accelerator_slug)
        plan = sizer.plan(hardware, offer.gpu_count) if hardware is not None else None
        if plan is not None:
            chosen = (offer, hardware, plan)
            break
    if chosen is not None:
        offer, hardware, plan = chosen
        decode = sizer.decode_tok_s(hardware, offer.gpu_count, plan)
        # Priced as the report's cost card: one stream at estimate.cost_depth (half the context cached).
        at_depth = scenario_with(sizer.scenario, gpus=offer.gpu_count, depth=cost_depth(sizer.scenario))
        priced = stream_decode_speed(sizer.model, hardware, at_depth, plan, count_parameters(sizer.model))
        cost = ServingCost.on_offer(offer, decode_tok_s=priced.tokens_per_s, depth=at_depth.depth)
        return Recommendation(CloudChoice(offer, hardware, plan.fit.verdict, plan.fit.required_bytes,
                                          max(plan.fit.placement.demand_per_gpu), decode,
                                          cost.single_stream_usd_per_mtok, priced.tokens_per_s, at_depth.depth))
    return Recommendation(None, Note("no_offer_fits_any", "no catalog cloud offer holds it"))


def by_memory(hardware_catalog: Iterable[HardwareSpec]) -> tuple[HardwareSpec, ...]:
    """The catalog's accelerators, least memory first (then the lowest price): ``smallest_fitting``'s order."""
    return tuple(sorted(hardware_catalog, key=lambda spec: (spec.memory_gb, spec.price_usd or 0.0)))


def smallest_fitting(model: ModelSpec, scenario: Scenario,
                     hardware_by_memory: Sequence[HardwareSpec]) -> HardwareSpec | None:
    """The first accelerator of ``hardware_by_memory`` (``by_memory``'s order) on which ``scenario.gpus`` of it
    run the scenario without automatic offload (the report's quantization matrix: "smallest single accelerator").

    No accelerator holds more than its nominal memory, so the ones whose nominal memory is below the scenario's
    demand floor are skipped by bisection, without looking at each.
    """
    floor = gpu_demand_floor_bytes(model, scenario)
    start = bisect_left(hardware_by_memory, floor, key=nominal_bytes)
    for hardware in hardware_by_memory[start:]:
        if fits(model, hardware, scenario):
            return hardware
    return None

