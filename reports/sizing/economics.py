"""Money: cost per million generated tokens, monthly cloud and power cost, purchase break-even.

Pure functions on floats. Units: USD, hours, watts, tokens per second; "month" means
``DAYS_PER_MONTH`` days (see below). Nothing here knows about memory: the caller decides which cloud
offers fit a scenario (``cheapest_offer`` takes the fit predicate) and which throughput applies.

The seed pages' arithmetic (reverse-engineered in the project's seed notes) is reproduced exactly:
  cost / 1M tokens = 1e6 / tok/s / 3600 × hourly USD          ($3.536/h at 5.4 tok/s → $181.89)
  monthly cloud    = hourly × hours/day × 30.4                ($13.88 × 4 × 30.4 = $1,687.81)
  monthly power    = W / 1000 × hours/day × 30.4 × $/kWh      (1,000 W, 4 h, $0.175 → $21.28)
  break-even       = price / (monthly cloud − monthly power)  ($21,000 / $1,666.53 = 12.6 months)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from reports.sizing.errors import SizingError
from reports.sizing.fit import GIB
from reports.sizing.specs import CloudOfferSpec

# Days per month. The calendar mean is 365 / 12 = 30.42; the seed pages use 30.4 (their monthly
# column is hourly × hours/day × 30.4 to the cent: $13.88 × 4 × 30.4 = $1,687.81, $3.80 × 4 × 30.4 =
# $462.08). We keep 30.4 so our figures match theirs; the difference is 0.05 %.
DAYS_PER_MONTH = 30.4
SECONDS_PER_HOUR = 3600.0
TOKENS_PER_MILLION = 1_000_000.0
WATTS_PER_KILOWATT = 1000.0

# Defaults of the seed's rent-vs-buy panel: 4 h of active use per day, $0.175 per kWh.
DEFAULT_HOURS_PER_DAY = 4.0
DEFAULT_USD_PER_KWH = 0.175


def cost_per_million_tokens(tokens_per_s: float, hourly_usd: float) -> float:
    """USD to generate one million tokens at ``tokens_per_s`` on an instance billed ``hourly_usd``.

    Use the single-stream decode speed for the batch-1 cost, and the aggregate decode throughput of
    all streams for the cost at a batch size (the instance costs the same per hour either way).
    """
    _require_positive(tokens_per_s, "tokens_per_s")
    _require_non_negative(hourly_usd, "hourly_usd")
    seconds_per_million = TOKENS_PER_MILLION / tokens_per_s
    return seconds_per_million / SECONDS_PER_HOUR * hourly_usd


def monthly_cloud_cost(hourly_usd: float, hours_per_day: float = DEFAULT_HOURS_PER_DAY) -> float:
    """USD per month for renting the instance ``hours_per_day`` hours every day."""
    _require_non_negative(hourly_usd, "hourly_usd")
    _require_hours_per_day(hours_per_day)
    return hourly_usd * hours_per_day * DAYS_PER_MONTH


def monthly_power_cost(
    watts: float,
    hours_per_day: float = DEFAULT_HOURS_PER_DAY,
    usd_per_kwh: float = DEFAULT_USD_PER_KWH,
) -> float:
    """USD per month of electricity for local hardware drawing ``watts`` (e.g. its TDP) while in use."""
    _require_non_negative(watts, "watts")
    _require_hours_per_day(hours_per_day)
    _require_non_negative(usd_per_kwh, "usd_per_kwh")
    kilowatt_hours = watts / WATTS_PER_KILOWATT * hours_per_day * DAYS_PER_MONTH
    return kilowatt_hours * usd_per_kwh


def break_even_months(
    hardware_price_usd: float, monthly_cloud_usd: float, monthly_power_usd: float
) -> float | None:
    """Months of use after which buying costs less than renting; None when it never does.

    Buying saves (cloud − power) each month. When the cloud costs no more than the power bill, the
    saving is zero or negative and the purchase never pays back: None, never a negative or infinite
    month count.
    """
    _require_non_negative(hardware_price_usd, "hardware_price_usd")
    monthly_saving = monthly_cloud_usd - monthly_power_usd
    if monthly_saving <= 0:
        return None
    return hardware_price_usd / monthly_saving


def cheapest_offer(
    offers: Iterable[CloudOfferSpec], fits: Callable[[CloudOfferSpec], bool]
) -> CloudOfferSpec | None:
    """The offer with the lowest hourly price among those for which ``fits(offer)`` is true.

    ``fits`` belongs to the caller because fitting needs the memory engine (accelerator × count
    against the scenario). Ties are broken by fewer GPUs, then provider and instance name, so the
    choice does not depend on the catalog's order.
    """
    fitting = [offer for offer in offers if fits(offer)]
    if not fitting:
        return None
    return min(fitting, key=lambda o: (o.hourly_usd, o.gpu_count, o.provider, o.instance))


@dataclass(frozen=True)
class ServingCost:
    """Cost per million generated tokens on one cloud offer."""

    offer: CloudOfferSpec
    single_stream_usd_per_mtok: float  # batch 1, single-stream decode speed
    batch: int
    batch_usd_per_mtok: float  # ``batch`` streams, aggregate decode throughput
    decode_tok_s: float = 0.0  # the speed on the offer's accelerator that single_stream_usd_per_mtok is priced at
    accelerator_name: str = ""  # the offer's accelerator (the cheapest offer may be another one than the report's)
    aggregate_tok_s: float = 0.0  # all ``batch`` streams together on the offer: what batch_usd_per_mtok is priced at
    depth: int = 0  # cached tokens per stream the speeds are taken at (estimate.cost_depth: half the context)
    # The offer's own prefill speed (prompt tokens/s; None: its accelerator publishes no FP16 TFLOPS) and the prompt
    # length it is taken at: what a prompt (input) token costs there.
    prefill_tok_s: float | None = None
    prompt: int = 0

    @property
    def input_usd_per_mtok(self) -> float | None:
        """USD to process one million prompt (input) tokens on this offer: its hourly price over its own prefill
        speed, cost_per_million_tokens's arithmetic. None where the prefill speed is unknown."""
        if not self.prefill_tok_s or self.prefill_tok_s <= 0:
            return None
        return cost_per_million_tokens(self.prefill_tok_s, self.offer.hourly_usd)

    @classmethod
    def on_offer(
        cls,
        offer: CloudOfferSpec,
        *,
        decode_tok_s: float,
        batch: int = 1,
        aggregate_decode_tok_s: float | None = None,
        accelerator_name: str = "",
        depth: int = 0,
        prefill_tok_s: float | None = None,
        prompt: int = 0,
    ) -> ServingCost:
        """``aggregate_decode_tok_s`` defaults to ``decode_tok_s`` (batch 1)."""
        if batch < 1:
            raise SizingError(f"batch must be at least 1, got {batch}")
        aggregate = decode_tok_s if aggregate_decode_tok_s is None else aggregate_decode_tok_s
        return cls(
            offer=offer,
            single_stream_usd_per_mtok=cost_per_million_tokens(decode_tok_s, offer.hourly_usd),
            batch=batch,
            batch_usd_per_mtok=cost_per_million_tokens(aggregate, offer.hourly_usd),
            decode_tok_s=decode_tok_s,
            accelerator_name=accelerator_name,
            aggregate_tok_s=aggregate,
            depth=depth,
            prefill_tok_s=prefill_tok_s,
            prompt=prompt,
        )


@dataclass(frozen=True)
class RentComparison:
    """The cloud offer a purchase is compared with, and how many rented hours one hour of local use stands for."""

    offer: CloudOfferSpec
    basis: str  # "same_hardware": the purchase's accelerator × count; "same_tokens": another offer, per token
    cloud_hours_per_local_hour: float  # 1 for the same hardware; local tok/s ÷ offer tok/s for another one
    offer_tok_s: float | None = None  # "same_tokens": the offer's decode throughput the hours are scaled by


def rent_comparison(
    offers: Iterable[CloudOfferSpec],
    *,
    accelerator_slug: str,
    gpus: int,
    hours_per_day: float,
    local_tok_s: float | None,
    cheapest_per_token: ServingCost | None,
) -> RentComparison | None:
    """What buying ``gpus`` × ``accelerator_slug`` is compared with: renting the same thing, else the same tokens.

    A break-even is only honest between like and like. Renting the purchase's own accelerator × count gives the same
    memory and speed: the cheapest such offer per month at ``hours_per_day`` (reserved capacity billed 24 h/day),
    hour for hour. Without such an offer, another instance does different work per hour (DeepSeek-V3 on one H100
    with CPU offload decodes ~5.5 tok/s, the cheapest offer that holds it, 8 × A100, ~58.5 tok/s; Llama 3.1 8B
    bought on an RTX 4090 was compared with an RTX 3090 rental), so the comparison is per token: the offer where a
    token costs least (``cheapest_per_token``, the estimate's batch cost), rented
    local tok/s ÷ offer tok/s hours for each hour of local use, i.e. as long as it takes to generate what the
    purchase generates. None when neither exists, or the purchase has no speed to compare (it does not run).
    Only offers whose rate is confirmed count (``CloudOfferSpec.confirmed``).
    """
    same = [offer for offer in offers if offer.confirmed and offer.accelerator_slug == accelerator_slug
            and offer.gpu_count == gpus]
    if same:
        offer = min(same, key=lambda o: (monthly_cloud_cost(o.hourly_usd, o.billed_hours_per_day or hours_per_day),
                                         o.hourly_usd, o.gpu_count, o.provider, o.instance))
        return RentComparison(offer, "same_hardware", 1.0)
    if cheapest_per_token is None or not local_tok_s or local_tok_s <= 0 or cheapest_per_token.aggregate_tok_s <= 0:
        return None
    return RentComparison(cheapest_per_token.offer, "same_tokens",
                          local_tok_s / cheapest_per_token.aggregate_tok_s, cheapest_per_token.aggregate_tok_s)


@dataclass(frozen=True)
class RentVsBuy:
    """Renting a cloud instance versus buying the hardware and paying its power bill."""

    hourly_usd: float
    hours_per_day: float  # of use: the power bill
    cloud_hours_per_day: float  # billed by the cloud: hours_per_day, or 24 for reserved capacity
    monthly_cloud_usd: float
    power_w: float
    usd_per_kwh: float
    monthly_power_usd: float
    hardware_price_usd: float | None
    break_even_months: float | None  # None: no price given, or renting costs no more than power

    @property
    def break_even_years(self) -> float | None:
        return None if self.break_even_months is None else self.break_even_months / 12

    @classmethod
    def compute(
        cls,
        *,
        hourly_usd: float,
        power_w: float,
        hardware_price_usd: float | None,
        hours_per_day: float = DEFAULT_HOURS_PER_DAY,
        usd_per_kwh: float = DEFAULT_USD_PER_KWH,
        billed_hours_per_day: float | None = None,
        cloud_hours_per_local_hour: float = 1.0,
    ) -> RentVsBuy:
        """Compare against the hourly rate of the offer the caller chose.

        Pass the cheapest offer that fits (``cheapest_offer``). The seed compared against the first
        offer it listed (RunPod 2× B300 at $13.88/h, not its cheapest), which flatters the purchase.
        ``billed_hours_per_day``: the offer's billed hours when they do not follow use
        (CloudOfferSpec.billed_hours_per_day: 24 for reserved capacity).
        ``cloud_hours_per_local_hour``: RentComparison's factor (another instance than the purchase: rented for as
        long as it takes to generate the purchase's tokens).
        """
        if not cloud_hours_per_local_hour > 0:
            raise SizingError(f"cloud_hours_per_local_hour must be positive, got {cloud_hours_per_local_hour}")
        cloud_hours = (hours_per_day if billed_hours_per_day is None else billed_hours_per_day) \
            * cloud_hours_per_local_hour
        _require_non_negative(hourly_usd, "hourly_usd")
        # The offer's bill at its base hours (≤ 24), × the rented hours per hour of local use, which may take the
        # product past 24 h a day (a slower instance rented for a faster purchase's tokens).
        base_hours = hours_per_day if billed_hours_per_day is None else billed_hours_per_day
        monthly_cloud = monthly_cloud_cost(hourly_usd, base_hours) * cloud_hours_per_local_hour
        monthly_power = monthly_power_cost(power_w, hours_per_day, usd_per_kwh)
        months = (
            None
            if hardware_price_usd is None
            else break_even_months(hardware_price_usd, monthly_cloud, monthly_power)
        )
        return cls(
            hourly_usd=hourly_usd,
            hours_per_day=hours_per_day,
            cloud_hours_per_day=cloud_hours,
            monthly_cloud_usd=monthly_cloud,
            power_w=power_w,
            usd_per_kwh=usd_per_kwh,
            monthly_power_usd=monthly_power,
            hardware_price_usd=hardware_price_usd,
            break_even_months=months,
        )


def _require_positive(value: float, option: str) -> None:
    if not value > 0:
        raise SizingError(f"{option} must be positive, got {value}")


def _require_non_negative(value: float, option: str) -> None:
    if not value >= 0:
        raise SizingError(f"{option} must not be negative, got {value}")


def _require_hours_per_day(hours_per_day: float) -> None:
    if not 0 < hours_per_day <= 24:
        raise SizingError(f"hours_per_day must be in (0, 24], got {hours_per_day}")


def price_per_usable_gib(*, price_usd: float | None, gpus: int, usable_bytes_per_gpu: float) -> float | None:
    """Purchase price of `gpus` accelerators per GiB (2^30 bytes, the unit of every memory figure beside it) of the
    memory a model can use on them (None: no price)."""
    if price_usd is None or usable_bytes_per_gpu <= 0:
        return None
    return price_usd * gpus / (usable_bytes_per_gpu * gpus / GIB)


def fleet_price_usd(*, price_usd: float | None, gpus: int) -> float | None:
    """Purchase price of `gpus` accelerators at the catalog price (None when no price is known)."""
    return None if price_usd is None else price_usd * gpus


def fleet_power_w(*, tdp_w: float | None, gpus: int) -> float | None:
    """Board power of `gpus` accelerators at their rated TDP (None when the TDP is not published)."""
    return None if tdp_w is None else tdp_w * gpus
