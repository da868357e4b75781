"""Money: the seed pages' figures reproduced from the seed's own inputs, plus edge cases.

Seed inputs (pages of the product we re-create):
  GLM-5 on MI325X: ~5.4 tok/s, "Cloud from Vast.ai · $3.54/h", cost $181.89 / 1M tokens,
  break-even ~12.6 months, power $21.28/month (MI325X 1,000 W, 4 h/day, $0.175/kWh).
  GLM-4.5 on MI325X: ~115.1 tok/s, "Cloud from DigitalOcean · $3.80/h", cost $9.17 / 1M tokens.
  GLM-5 on Ryzen AI Max+ 395 (120 W): power $2.55/month.
"""

import pytest

from reports.sizing.economics import (
    DAYS_PER_MONTH,
    RentVsBuy,
    ServingCost,
    break_even_months,
    cheapest_offer,
    cost_per_million_tokens,
    monthly_cloud_cost,
    monthly_power_cost,
    rent_comparison,
)
from reports.sizing.errors import SizingError
from reports.sizing.specs import CloudOfferSpec, confirmed_offers

# The Vast.ai 8× A100 rate behind the seed's "$3.54/h" is $3.536/h: its monthly column says
# $429.98 = 3.536 × 4 × 30.4 (= 429.9776), whereas 3.54 × 4 × 30.4 would be $430.46. With $3.536 the
# cost per 1M tokens is the printed $181.89; with $3.54 it would be $182.10.
VAST_8X_A100_HOURLY = 3.536


def test_days_per_month_is_the_seeds():
    assert DAYS_PER_MONTH == 30.4


def test_seed_cost_per_million_tokens_glm5_on_mi325x():
    # 1e6 / 5.4 tok/s = 185,185.19 s = 51.440 h; × $3.536/h = $181.893
    assert round(cost_per_million_tokens(5.4, VAST_8X_A100_HOURLY), 2) == 181.89


def test_seed_cost_per_million_tokens_glm5_on_ryzen_page():
    # Same offer at the Ryzen page's ~2.7 tok/s: 1e6 / 2.7 / 3600 × 3.536 = $363.786
    assert round(cost_per_million_tokens(2.7, VAST_8X_A100_HOURLY), 2) == 363.79


def test_seed_cost_per_million_tokens_glm45_on_mi325x():
    # 1e6 / 115.1 / 3600 = 2.41335 h; × $3.80/h = $9.1707
    assert round(cost_per_million_tokens(115.1, 3.80), 2) == 9.17


def test_cost_halves_when_throughput_doubles():
    # Aggregate throughput of a batch: same instance, twice the tokens per hour.
    single = cost_per_million_tokens(50.0, 2.0)
    assert cost_per_million_tokens(100.0, 2.0) == pytest.approx(single / 2)
    # 1e6 / 50 / 3600 × 2 = $11.111
    assert single == pytest.approx(11.1111111, rel=1e-9)


def test_seed_monthly_cloud_costs():
    # $13.88 × 4 h × 30.4 days = $1,687.808; $3.80 × 121.6 = $462.08; $6.94 × 121.6 = $843.904
    assert round(monthly_cloud_cost(13.88, 4), 2) == 1687.81
    assert round(monthly_cloud_cost(3.80, 4), 2) == 462.08
    assert round(monthly_cloud_cost(6.94, 4), 2) == 843.90
    assert round(monthly_cloud_cost(VAST_8X_A100_HOURLY, 4), 2) == 429.98


def test_seed_monthly_power_costs():
    # 1,000 W / 1000 × 4 h × 30.4 = 121.6 kWh × $0.175 = $21.28
    assert monthly_power_cost(1000, 4, 0.175) == pytest.approx(21.28, abs=1e-9)
    # 120 W → 14.592 kWh × $0.175 = $2.5536
    assert round(monthly_power_cost(120, 4, 0.175), 2) == 2.55


def test_seed_break_even_months():
    # $21,000 / ($1,687.81 − $21.28) = 21,000 / 1,666.53 = 12.601
    months = break_even_months(21_000, monthly_cloud_cost(13.88, 4), monthly_power_cost(1000, 4, 0.175))
    assert round(months, 1) == 12.6
    # GLM-4.5 page: $21,000 / ($843.90 − $21.28) = 25.53
    months = break_even_months(21_000, monthly_cloud_cost(6.94, 4), monthly_power_cost(1000, 4, 0.175))
    assert round(months, 1) == 25.5


def test_rent_vs_buy_carries_every_figure():
    result = RentVsBuy.compute(hourly_usd=13.88, power_w=1000, hardware_price_usd=21_000)
    assert (result.hours_per_day, result.usd_per_kwh) == (4.0, 0.175)  # the seed's defaults
    assert round(result.monthly_cloud_usd, 2) == 1687.81
    assert round(result.monthly_power_usd, 2) == 21.28
    assert round(result.break_even_months, 1) == 12.6


def test_break_even_is_none_when_cloud_is_not_dearer_than_power():
    assert break_even_months(5_000, monthly_cloud_usd=20.0, monthly_power_usd=21.28) is None
    assert break_even_months(5_000, monthly_cloud_usd=21.28, monthly_power_usd=21.28) is None
    # 0.10 $/h × 4 h × 30.4 = $12.16 < $21.28 of power: never pays back
    result = RentVsBuy.compute(hourly_usd=0.10, power_w=1000, hardware_price_usd=21_000)
    assert result.break_even_months is None


def test_break_even_is_none_without_a_price_and_zero_for_free_hardware():
    no_price = RentVsBuy.compute(hourly_usd=13.88, power_w=1000, hardware_price_usd=None)
    assert no_price.break_even_months is None
    assert break_even_months(0, 100.0, 21.28) == 0.0


def _offer(provider, hourly, slug="h100", count=1, instance=""):
    return CloudOfferSpec(provider=provider, instance=instance or f"{count}x {slug}",
                          accelerator_slug=slug, gpu_count=count, hourly_usd=hourly)


def test_cheapest_offer_is_the_cheapest_that_fits():
    offers = [
        _offer("RunPod", 13.88, "b300", 2),
        _offer("Vast.ai", 3.536, "a100", 8),
        _offer("DigitalOcean", 1.99, "mi300x", 1),  # cheapest, but does not fit below
    ]
    fits = lambda offer: offer.accelerator_slug != "mi300x"  # noqa: E731
    assert cheapest_offer(offers, fits).provider == "Vast.ai"


def test_cheapest_offer_is_none_when_nothing_fits():
    assert cheapest_offer([_offer("RunPod", 2.0)], lambda offer: False) is None
    assert cheapest_offer([], lambda offer: True) is None


def test_cheapest_offer_breaks_ties_independently_of_order():
    a = _offer("Zeta", 4.0, count=2)
    b = _offer("Alpha", 4.0, count=2)
    c = _offer("Mid", 4.0, count=1)
    assert cheapest_offer([a, b, c], lambda o: True) is c  # fewer GPUs first
    assert cheapest_offer([a, b], lambda o: True) is b
    assert cheapest_offer([b, a], lambda o: True) is b


def test_serving_cost_at_batch_one_and_at_a_batch():
    offer = _offer("DigitalOcean", 3.80, "mi325x")
    cost = ServingCost.on_offer(offer, decode_tok_s=115.1, batch=8, aggregate_decode_tok_s=600.0)
    assert round(cost.single_stream_usd_per_mtok, 2) == 9.17
    # 1e6 / 600 / 3600 × 3.80 = $1.7593
    assert cost.batch_usd_per_mtok == pytest.approx(1.759259259, rel=1e-9)
    batch_one = ServingCost.on_offer(offer, decode_tok_s=115.1)
    assert batch_one.batch_usd_per_mtok == cost.single_stream_usd_per_mtok


@pytest.mark.parametrize(
    ("call", "option"),
    [
        (lambda: cost_per_million_tokens(0, 3.0), "tokens_per_s"),
        (lambda: cost_per_million_tokens(10, -1.0), "hourly_usd"),
        (lambda: monthly_cloud_cost(3.0, 25), "hours_per_day"),
        (lambda: monthly_cloud_cost(3.0, 0), "hours_per_day"),
        (lambda: monthly_power_cost(-5, 4), "watts"),
        (lambda: monthly_power_cost(100, 4, -0.1), "usd_per_kwh"),
        (lambda: break_even_months(-1, 100, 10), "hardware_price_usd"),
        (lambda: ServingCost.on_offer(_offer("x", 1.0), decode_tok_s=10, batch=0), "batch"),
    ],
)
def test_bad_inputs_name_the_option(call, option):
    with pytest.raises(SizingError, match=option):
        call()


# ---- rent vs. buy compares like with like (economics.rent_comparison)

def test_rent_comparison_rents_the_purchased_hardware_when_an_offer_exists():
    same_dear = CloudOfferSpec("Dear", "1x 4090", "rtx-4090", 1, 0.60)
    same_cheap = CloudOfferSpec("Cheap", "1x 4090", "rtx-4090", 1, 0.34)
    other = CloudOfferSpec("Other", "1x 3090", "rtx-3090", 1, 0.22)  # cheaper per hour, but not what is bought
    two = CloudOfferSpec("Two", "2x 4090", "rtx-4090", 2, 0.50)  # another count
    doubted = CloudOfferSpec("Doubt", "1x 4090", "rtx-4090", 1, 0.01, price_doubt="no source")
    per_token = ServingCost.on_offer(other, decode_tok_s=100.0)
    c = rent_comparison([same_dear, other, two, same_cheap, doubted], accelerator_slug="rtx-4090", gpus=1,
                        hours_per_day=4, local_tok_s=120.0, cheapest_per_token=per_token)
    assert (c.offer, c.basis, c.cloud_hours_per_local_hour) == (same_cheap, "same_hardware", 1.0)


def test_without_the_same_hardware_rent_vs_buy_compares_the_same_tokens():
    # DeepSeek-V3 bought as one H100 with CPU offload: ~5.5 tok/s; the offer where a token costs least, 8 × A100,
    # ~58.5 tok/s at $19.18/h. Generating the purchase's tokens takes 5.5 / 58.5 = 0.094017 h of the rental per hour
    # of local use: at 4 h/day, 0.376068 h/day × 30.4 days × $19.18 = $219.27 a month (not 4 h × 30.4 × $19.18 =
    # $2,332.29 for ten times the tokens).
    a100 = CloudOfferSpec("Vultr", "8x A100", "a100-80gb-sxm", 8, 19.18)
    per_token = ServingCost.on_offer(a100, decode_tok_s=58.5)
    c = rent_comparison([a100], accelerator_slug="h100-80gb-sxm", gpus=1, hours_per_day=4, local_tok_s=5.5,
                        cheapest_per_token=per_token)
    assert (c.offer, c.basis, c.offer_tok_s) == (a100, "same_tokens", 58.5)
    assert c.cloud_hours_per_local_hour == pytest.approx(5.5 / 58.5, rel=1e-12)
    rvb = RentVsBuy.compute(hourly_usd=19.18, power_w=700, hardware_price_usd=30_000, hours_per_day=4,
                            cloud_hours_per_local_hour=c.cloud_hours_per_local_hour)
    assert rvb.cloud_hours_per_day == pytest.approx(0.3760684, rel=1e-6)
    assert rvb.monthly_cloud_usd == pytest.approx(219.27494, rel=1e-6)  # 0.3760684 × 30.4 = 11.432479; × 19.18
    # Power: 700 W × 4 h × 30.4 × $0.175 / 1000 = $14.896; break-even 30,000 / (219.27494 − 14.896) = 146.79 months.
    assert rvb.break_even_months == pytest.approx(146.786, rel=1e-5)
    # Nothing to compare: no speed here (it does not run) and no offer of the same hardware.
    assert rent_comparison([a100], accelerator_slug="h100-80gb-sxm", gpus=1, hours_per_day=4, local_tok_s=None,
                           cheapest_per_token=per_token) is None


def test_a_faster_purchase_rents_more_hours_than_it_uses():
    # The purchase generates twice the offer's tokens: 2 rented hours per hour of use, 24 h/day → 48 h/day
    # (two instances), $0.40 × 48 × 30.4 = $583.68.
    rvb = RentVsBuy.compute(hourly_usd=0.40, power_w=450, hardware_price_usd=1_600, hours_per_day=24,
                            cloud_hours_per_local_hour=2.0)
    assert rvb.monthly_cloud_usd == pytest.approx(583.68, rel=1e-12)
    with pytest.raises(SizingError, match="cloud_hours_per_local_hour"):
        RentVsBuy.compute(hourly_usd=0.40, power_w=450, hardware_price_usd=1_600, cloud_hours_per_local_hour=0)


def test_confirmed_offers_leave_out_a_doubted_rate():
    good = CloudOfferSpec("A", "x", "a", 1, 1.0)
    doubted = CloudOfferSpec("B", "y", "a", 1, 0.5, price_doubt="seed page only")
    assert confirmed_offers([good, doubted]) == (good,)
    assert not doubted.confirmed and good.confirmed
