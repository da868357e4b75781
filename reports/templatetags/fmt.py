"""Template filters over `reports.formatting` in the active language: {{ x|num:2 }}, {{ p|usd }}, {{ d|day }}."""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Mapping
from functools import lru_cache
from types import MappingProxyType

from django import template
from django.utils.html import conditional_escape, escape
from django.utils.safestring import SafeData, SafeString
from django.utils.translation import get_language, gettext

from reports import formatting
from reports.forms import context_label
from reports.sizing.specs import CloudOfferSpec
from reports.templatetags.labels import billing_label_text, offer_instance_text

register = template.Library()


# A figure is digits, the locale's symbols and a unit: text with nothing to escape in HTML, which the template
# escaped all the same (some 400 figures a report page). Marked safe where it has none of the characters HTML
# escapes, the template writes it as it is; a figure with one ("<0.01 GiB") is left to the template's escaping.
_HTML_SPECIAL = re.compile(r"[&<>\"']")


def _figure(text: str) -> str:
    return text if _HTML_SPECIAL.search(text) else SafeString(text)


def _or_not_published(text: str | None) -> str:
    if text is None:
        text = gettext("not published")
    return text if _HTML_SPECIAL.search(text) else SafeString(text)  # _figure, inline: some 170 figures a page


@register.filter
def num(value, digits: int = 0) -> str:
    return _or_not_published(None if value == "" else formatting.number(value, get_language(), int(digits)))


@register.filter
def up_to(value, digits: int = 3) -> str:
    """At most `digits` decimals, trailing zeros left out: hours a line multiplies out (1.784 h/day, 8 h/day)."""
    return _or_not_published(None if value == "" else formatting.up_to(value, get_language(), int(digits)))


@register.filter
def exact(value) -> str:
    """A value as entered, without decimals that are zero: 8 hours a day read "8,0 Std./Tag"; 4.5 stays "4,5"."""
    return _or_not_published(None if value in (None, "") else formatting.exact(value, get_language()))


@register.filter
def tenths_down(value) -> str:
    """A count of sequences to a tenth, rounded down (vLLM's pool holds 3.16 of them: "3.1", not "3.2"), as
    ReportPage.vllm_pool_sequences gives it beside the same pool."""
    if value in (None, ""):
        return _or_not_published(None)
    return _figure(formatting.number(math.floor(float(value) * 10) / 10, get_language(), 1))


@register.filter
def sig(value) -> str:
    return _or_not_published(None if value == "" else formatting.significant(value, get_language()))


@register.filter
def usd(value, digits: int = 2) -> str:
    return usd_text(value, get_language(), int(digits))


def usd_text(value, language: str, digits: int = 2) -> str:
    """|usd in a given language."""
    return _or_not_published(None if value == "" else formatting.usd(value, language, digits))


@register.filter
def usd_rate(value) -> str:
    """A cost per 1M tokens: formatting.usd_rate (three significant digits below $1: $0.0386, not $0.04)."""
    return _or_not_published(None if value == "" else formatting.usd_rate(value, get_language()))


@register.filter
def pct(value, digits: int = 0) -> str:
    """A fraction as a percentage: {{ 0.8|pct }} → 80 %, {{ 0.00045|pct:2 }} → 0.04 % (0,04 % in German). A value
    that rounds to zero reads 0 %, not "-0.00 %"."""
    if isinstance(value, int | float) and round(value * 100, int(digits)) == 0:
        value = 0.0
    return _or_not_published(None if value == "" else formatting.percent(value, get_language(), int(digits)))


@register.filter
def signed_pct(value, digits: int = 0) -> str:
    """A signed fraction as a percentage, as errors read: +11 %, -1 %, 0 %."""
    text = pct(value, digits)
    return f"+{text}" if isinstance(value, int | float) and round(value * 100, int(digits)) > 0 else text


@register.filter
def day(value) -> str:
    """A date (or ISO date string) in the locale's medium format: 04.11.2026 / Nov 4, 2026."""
    return _day(value, get_language())


def _day(value: dt.date | str | None, language: str) -> str:
    if isinstance(value, str) and value:
        value = dt.date.fromisoformat(value)  # an ISO string on a spec, a date on a catalog row
    return _or_not_published(formatting.date(value or None, language))


@register.filter
def verified_on(offer) -> str:
    """An offer's verification date, as precise as its source: a day (as |day), or only the month when the source
    gave no day (the catalog stores the 1st of that month). Takes a CloudOffer row or a CloudOfferSpec. A rate
    its source does not confirm has no verification date: "rate not confirmed by its source"."""
    return _verified_on(bool(getattr(offer, "price_doubt", "")), offer.verified, offer.verified_month_only,
                        get_language())


@register.filter
def verified_label(offer) -> str:
    """"verified Nov 4, 2026", or "verified in November 2026" when the source gave only the month (verified_on).
    One filter instead of a branch and a blocktranslate in each row of the cloud table (some 30 rows a page)."""
    return verified_label_text(offer, get_language())


def verified_label_text(offer, language: str) -> str:
    """|verified_label in a given language."""
    return _verified_label(bool(getattr(offer, "price_doubt", "")), offer.verified, offer.verified_month_only,
                           language)


# Both labels are cached by what they are made of (a CloudOffer row can be edited; these values cannot): the offers
# of a report page repeat a few dates, and each label takes two translations and a Babel date.
@lru_cache(maxsize=1024)
def _verified_on(doubted: bool, verified: dt.date | str, month_only: bool, language: str) -> str:
    if doubted:
        return gettext("rate not confirmed by its source")
    if not month_only or not verified:
        return _day(verified, language)
    if isinstance(verified, str):
        verified = dt.date.fromisoformat(verified)
    return formatting.month(verified, language)


@lru_cache(maxsize=1024)
def _verified_label(doubted: bool, verified: dt.date | str, month_only: bool, language: str) -> str:
    # Escaped here, once per label, not by the template in every row.
    if doubted:
        return escape(gettext("rate not confirmed by its source"))  # never "verified" for a rate its note doubts
    when = _verified_on(doubted, verified, month_only, language)
    if month_only and verified:
        return escape(gettext("verified in %(month)s") % {"month": when})
    return escape(f"{gettext('verified')} {when}")


@register.filter
def offer_texts(offer: CloudOfferSpec) -> Mapping[str, str | bool]:
    """What the cloud table writes of an offer itself, in the page's language and escaped as the template would:
    provider, instance (|offer_instance), hourly (|usd), billing (|billing_label), verified (|verified_label), url,
    and whether it is billed around the clock (reserved). One filter a row instead of five (some 30 rows a page,
    each filter reading the language again); the row's memory and monthly bill depend on the configuration and stay
    in the template."""
    return _offer_texts(offer, get_language())


# Keyed on the whole (frozen) spec: an admin edit of the offer makes another spec, so another entry.
@lru_cache(maxsize=256)
def _offer_texts(offer: CloudOfferSpec, language: str) -> Mapping[str, str | bool]:
    return MappingProxyType({
        "provider": escape(offer.provider),
        "instance": offer_instance_text(offer.instance, language),
        "hourly": conditional_escape(usd_text(offer.hourly_usd, language)),
        "billing": billing_label_text(offer.billing, language),
        "verified": verified_label_text(offer, language),
        "url": escape(offer.url) if offer.url else "",
        "reserved": bool(offer.billed_hours_per_day),
    })


@register.filter
def offer_row(row, deploy: str) -> SafeString:
    """One row of the report's cloud table (reports/report/_cloud.html; ``row`` a report.OfferRow, ``deploy`` the
    link's translated label), escaped as the template escaped it. Written here, not as a partial: a page has some 30
    rows, and the partial's ten variable nodes, two conditions and its `with` cost ~40 µs a row (1.2 ms of an
    uncached report), this ~5 µs. tests/test_render_cost.py renders both and compares them."""
    language = get_language()
    offer = _offer_texts(row.offer, language)
    # A constant's translation is written as it is, as {% translate %} writes it.
    reserved = f'<br><span class="muted">{gettext("reserved: 24 h/day")}</span>' if offer["reserved"] else ""
    link = (f'<a href="{offer["url"]}" rel="noopener external nofollow">{conditional_escape(deploy)} ↗</a>'
            if offer["url"] else "")
    return SafeString(
        f'<tr>\n        <th scope="row">{offer["provider"]}<br><span class="muted">{offer["instance"]}</span></th>\n'
        f'        <td class="num">{conditional_escape(num(row.total_memory_gb))} GB</td>'
        f'<td class="num">{offer["hourly"]}</td>\n'
        f'        <td class="num">{conditional_escape(usd_text(row.monthly_usd, language))}{reserved}</td>\n'
        f'        <td>{offer["billing"]}<br><span class="muted">{offer["verified"]}</span></td>\n'
        f'        <td>{link}</td>\n      </tr>')


@register.filter
def billions(value) -> str:
    """Parameters in billions in the page's language: 8.03e9 → "8.03 B", German "8,03 Mrd."."""
    if value is None or value == "":  # a missing attribute renders as "" in templates
        return gettext("not published")
    return _figure(formatting.billions(value, get_language()))


GIB = 2**30


@register.filter
def gib(value, digits: int = 2) -> str:
    """Bytes as GiB (2^30) with `digits` decimals: 4.58 GiB. A positive amount below the last digit reads "<0.01 GiB",
    not "0.00 GiB" (a shape-less model's automatic offload moves exactly the excess, which can be a few MiB)."""
    if value is None or value == "":  # a missing attribute renders as "" in templates
        return gettext("not published")
    digits = int(digits)
    step = 10 ** -digits
    if 0 < value / GIB < step / 2:
        return f"<{formatting.number(step, get_language(), digits)} GiB"
    return _figure(f"{formatting.number(value / GIB, get_language(), digits)} GiB")


@register.filter
def coordinate(value, spec: str = ".1f") -> str:
    """A chart's pixel coordinate as SVG text: 152.9 (`spec`: "d" for whole pixels). Digits, a point and a sign only,
    so marked safe (|stringformat's text was escaped again), and not localized: SVG reads a point in every language."""
    return SafeString(format(value, spec))


@register.filter
def magnitude(value):
    """|value|: a shortfall stated as "lacks 1.21 GiB", from a headroom of −1.21 GiB."""
    return abs(value) if isinstance(value, int | float) else value


@register.filter
def gib_rounds_nonzero(value) -> bool:
    """Whether {{ value|gib }} shows something other than 0.00 GiB (a part worth naming)."""
    return isinstance(value, int | float) and abs(value) >= 0.005 * GIB


@register.filter
def gb(value, digits: int = 2) -> str:
    """Bytes as decimal GB (10^9): 4.91 GB."""
    if value is None or value == "":  # a missing attribute renders as "" in templates
        return gettext("not published")
    return _figure(f"{formatting.number(value / 1e9, get_language(), int(digits))} GB")


@register.filter
def toks(value, upper_bound=False) -> str:
    """Tokens per second: ~115 tok/s, ~2.7 tok/s; {{ x|toks:page.speed_upper_bound }} gives "≤ 494 tok/s" for a
    model whose layer count is unknown (ModelSpec.layer_count_known)."""
    if value is None or value == "":  # a missing attribute renders as "" in templates
        return gettext("not published")
    return _figure(f"{'≤ ' if upper_bound else '~'}{formatting.significant(value, get_language())} tok/s")


@register.filter
def at_least(text, lower_bound=False) -> str:
    """A formatted figure that is a lower bound ("≥ $0.13"): costs derived from an upper-bound speed (see toks). A
    figure that is not there ("not published", "n/a") is no bound: "≥ not published" read as a lower bound of nothing."""
    if not (lower_bound and any(char.isdigit() for char in str(text))):
        return text
    # "≥ " adds nothing HTML escapes: a figure that needed no escaping still needs none.
    return SafeString(f"≥ {text}") if isinstance(text, SafeData) else f"≥ {text}"


@register.filter
def ms(value, lower_bound=False) -> str:
    """Milliseconds: ~488 ms; from a second on seconds, ~5.1 s, and ~110 s from 10 s on; ≥ 189 ms when the time
    leaves out the per-layer kernel time (see toks). "~5,129 ms" asked the reader to count digits."""
    if value is None or value == "":  # a missing attribute renders as "" in templates
        return gettext("not published")
    prefix = "≥ " if lower_bound else "~"
    if value >= 9_950:  # a prefill of minutes reads as whole seconds: "~110 s", not "~109,546 ms"
        return _figure(f"{prefix}{formatting.number(value / 1000, get_language(), 0)} s")
    if value >= 999.5:  # what rounds to 1,000 ms or more
        return _figure(f"{prefix}{formatting.number(value / 1000, get_language(), 1)} s")
    return _figure(f"{prefix}{formatting.number(value, get_language(), 0)} ms")


@register.filter
def tokens(value) -> str:
    """A token count with grouping: 131.072 (de) / 131,072 (en)."""
    return _or_not_published(formatting.number(value, get_language(), 0))


@register.filter
def ctx(value) -> str:
    """A context size the short way: 8K, 128K, 1M; a size that has no short form (68864) with the locale's
    grouping, as |tokens writes it."""
    if value in (None, ""):
        return gettext("not published")
    label = context_label(int(value))
    return tokens(int(value)) if label.isdigit() else _figure(label)


@register.filter
def percent_of(value, total) -> str:
    """value / total as a percentage with no decimals (utilization)."""
    if value is None or value == "" or not total:
        return gettext("not published")
    return _figure(formatting.percent(value / total, get_language()))


@register.filter
def pct_value(value) -> str:
    """A number that already is a percentage (80.2 → 80 %)."""
    if value is None or value == "":  # a missing attribute renders as "" in templates
        return gettext("not published")
    return _figure(formatting.percent(value / 100, get_language()))
