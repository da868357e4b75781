"""Template filters over `reports.formatting` in the active language: {{ x|num:2 }}, {{ p|usd }}, {{ d|day }}."""

from __future__ import annotations

from django import template
from django.utils.translation import get_language, gettext

from reports import formatting

register = template.Library()


def _or_not_published(text: str | None) -> str:
    return gettext("not published") if text is None else text


@register.filter
def num(value, digits: int = 0) -> str:
    return _or_not_published(formatting.number(value, get_language(), int(digits)))


@register.filter
def sig(value) -> str:
    return _or_not_published(formatting.significant(value, get_language()))


@register.filter
def usd(value, digits: int = 2) -> str:
    return _or_not_published(formatting.usd(value, get_language(), int(digits)))


@register.filter
def pct(value) -> str:
    return _or_not_published(formatting.percent(value, get_language()))


@register.filter
def day(value) -> str:
    return _or_not_published(formatting.date(value, get_language()))


@register.filter
def billions(value) -> str:
    """Parameters in billions: 8.03e9 → "8.03 B"."""
    if value is None:
        return gettext("not published")
    return f"{formatting.significant(value / 1e9, get_language())} B"
