"""Number, currency and date formatting: the one place the site formats figures, through Babel (CLDR).

Templates reach it through the filters in `reports/templatetags/fmt.py`; the active Django language picks the
locale (German: 1.234,56 $; English: $1,234.56).
"""

from __future__ import annotations

import datetime as dt
from functools import lru_cache

from babel import Locale
from babel.dates import format_date as babel_format_date
from babel.numbers import NumberPattern, format_percent, parse_pattern



@lru_cache(maxsize=8)
def babel_locale(language: str) -> Locale:
    return Locale.parse(language or "en", sep="-")


@lru_cache(maxsize=64)
def _pattern(pattern: str) -> NumberPattern:
    """Parsed CLDR number patterns: parsing costs more than applying, and a page formats hundreds of figures."""
    return parse_pattern(pattern)


def number(value: float | int | None, language: str, digits: int = 0) -> str | None:
    """A number with exactly `digits` decimals and the locale's grouping."""
    if value is None:
        return None
    pattern = _pattern("#,##0" + ("." + "0" * digits if digits > 0 else ""))
    return pattern.apply(value, babel_locale(language))


def significant(value: float | None, language: str) -> str | None:
    """Up to three significant decimals for small values, none for large ones (a speed: 2.7, 115, 10,619)."""
    if value is None:
        return None
    magnitude = abs(value)
    digits = 0 if magnitude >= 100 else 1 if magnitude >= 10 else 2 if magnitude >= 1 else 3
    pattern = _pattern("#,##0" + ("." + "#" * digits if digits else ""))
    return pattern.apply(value, babel_locale(language))


def usd(value: float | None, language: str, digits: int = 2) -> str | None:
    """US dollars in the locale's currency pattern with `digits` decimals (de: 1.234,56 $; en: $1,234.56)."""
    if value is None:
        return None
    locale = babel_locale(language)
    return _currency_pattern(language, digits).apply(value, locale, currency="USD", currency_digits=False)


@lru_cache(maxsize=32)
def _currency_pattern(language: str, digits: int) -> NumberPattern:
    whole_pattern = babel_locale(language).currency_formats["standard"].pattern.split(";")[0].replace(".00", "")
    return _pattern(_with_decimals(whole_pattern, digits))


def _with_decimals(pattern: str, digits: int) -> str:
    """Put `digits` decimals after the last 0 of a CLDR number pattern ("#,##0 ¤" → "#,##0.00 ¤")."""
    if digits <= 0:
        return pattern
    last_zero = pattern.rindex("0")
    return pattern[:last_zero + 1] + "." + "0" * digits + pattern[last_zero + 1:]


def percent(value: float | None, language: str, digits: int = 0) -> str | None:
    """`value` is a fraction (0.8 → 80 %); `digits` decimals in the locale's percent pattern (de: 0,04 %)."""
    if value is None:
        return None
    if digits <= 0:
        return format_percent(value, locale=babel_locale(language))
    return _percent_pattern(language, digits).apply(value, babel_locale(language))


@lru_cache(maxsize=16)
def _percent_pattern(language: str, digits: int) -> NumberPattern:
    whole_pattern = babel_locale(language).percent_formats[None].pattern.split(";")[0]
    return _pattern(_with_decimals(whole_pattern, digits))


def date(value: dt.date | None, language: str) -> str | None:
    if value is None:
        return None
    return babel_format_date(value, format="medium", locale=babel_locale(language))
