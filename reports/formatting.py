"""Number, currency and date formatting: the one place the site formats figures, through Babel (CLDR).

Templates reach it through the filters in `reports/templatetags/fmt.py`; the active Django language picks the
locale (German: 1.234,56 $; English: $1,234.56).

Babel stays the single source of CLDR data (patterns, symbols, currency signs), but `NumberPattern.apply`
costs 7-25 µs a call and a report page formats some 330 figures. So each (pattern, locale, currency) is
compiled once into a `_Formatter` from Babel's own parsed pattern and locale: the prefixes and suffixes with
the currency sign substituted, the decimal and group symbols of the "latn" numbering system (what `apply` uses
by default), the fraction digits, the grouping sizes and the percent scale. Formatting then takes Babel's
steps for a plain pattern (the same `Decimal(str(value))`, scaling, half-even rounding of that decimal,
fraction trimming) without its per-call lookups, in 2-4 µs. What the compiled path does not reproduce exactly
(scientific or significant-digit patterns, quoted text or a "'" group symbol, the plural currency name,
non-finite values, anything Decimal cannot quantize) is left to `pattern.apply` itself.
`tests/test_formatting_fast_path.py` checks the output byte for byte against Babel's for every function here,
on edge cases and random values.
Dates repeat across a page (offer verification dates), so each (date, language) is formatted once; figures repeat
too (offer prices, memory sizes), and the quick path's text is cached per formatter and number (_plain_text).
"""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal, localcontext
from functools import lru_cache

from babel import Locale
from babel.dates import format_date as babel_format_date
from babel.dates import format_skeleton as babel_format_skeleton
from babel.numbers import (
    NumberPattern,
    get_currency_symbol,
    get_decimal_quantum,
    get_decimal_symbol,
    get_group_symbol,
    parse_pattern,
)


@lru_cache(maxsize=8)
def babel_locale(language: str) -> Locale:
    return Locale.parse(language or "en", sep="-")


@lru_cache(maxsize=8)
def decimal_symbol(language: str) -> str:
    """The language's decimal separator ("," in German), for numbers already written into text (formulas)."""
    return get_decimal_symbol(babel_locale(language))


@lru_cache(maxsize=64)
def _pattern(pattern: str) -> NumberPattern:
    """Parsed CLDR number patterns: parsing costs more than applying, and a page formats hundreds of figures."""
    return parse_pattern(pattern)


class _Formatter:
    """A Babel `NumberPattern` applied in one locale (and currency), compiled once from Babel's own data.

    `format(value)` equals `pattern.apply(value, locale)` (with `currency=..., currency_digits=False` when a
    currency is given); patterns or values it cannot reproduce exactly are handed to `pattern.apply`.
    """

    __slots__ = ("pattern", "locale", "currency", "fast", "scale", "quantum", "min_frac", "max_frac",
                 "min_int", "group_sizes", "group", "decimal", "prefixes", "suffixes", "spec", "trim")

    def __init__(self, pattern: NumberPattern, locale: Locale, currency: str | None = None) -> None:
        self.pattern = pattern
        self.locale = locale
        self.currency = currency
        self.spec = None  # the Decimal format spec of the quickest path, when it applies
        try:
            self.fast = self._compile()
        except Exception:  # any Babel data the compiled path does not understand: Babel itself formats
            self.fast = False

    def _compile(self) -> bool:
        pattern, locale, currency = self.pattern, self.locale, self.currency
        if pattern.exp_prec or "@" in pattern.pattern or not pattern.number_pattern:
            return False  # scientific notation, significant digits, or no number at all: not a plain pattern
        self.scale = pattern.scale
        self.min_frac, self.max_frac = pattern.frac_prec
        self.quantum = get_decimal_quantum(self.max_frac)
        self.min_int = pattern.int_prec[0]
        self.group_sizes = pattern.grouping
        self.decimal = get_decimal_symbol(locale)  # Babel's default numbering system, "latn", as in apply()
        self.group = get_group_symbol(locale)
        prefixes, suffixes = list(pattern.prefix), list(pattern.suffix)
        if currency is not None:
            for affixes in (prefixes, suffixes):
                for i, text in enumerate(affixes):
                    if "¤¤¤" in text:
                        return False  # the currency's plural name depends on the value
                    affixes[i] = text.replace("¤¤", currency.upper()).replace(
                        "¤", get_currency_symbol(currency, locale))
        # Babel strips single quotes from the whole result (a group symbol "'" included, as in de_CH), and
        # substitutes "¤" in it: leave any of that to Babel.
        texts = prefixes + suffixes + [self.decimal, self.group]
        if any("'" in text for text in texts) or any("¤" in text for text in (self.decimal, self.group)):
            return False
        self.prefixes, self.suffixes = tuple(prefixes), tuple(suffixes)
        # Floats and ints below 1e15 stay well inside the default context's 28 digits (str(float) has at most
        # 17), so Babel's normalize() and quantize() round only once, as Decimal's own "f" format does (by the
        # context's rounding, half-even); that format also groups by three, as "#,##0" does.
        self.trim = self.min_frac < self.max_frac
        if self.min_int <= 1 and self.max_frac <= 10 and self.group_sizes in ((3, 3), (1000, 1000)):
            self.spec = f"{',' if self.group_sizes == (3, 3) else ''}.{self.max_frac}f"
        return True

    def babel(self, value) -> str:
        try:
            return self._apply(value)
        except ArithmeticError:
            # Babel quantizes in the default context (28 digits): a figure beyond 1e28 (a mistyped catalog value,
            # 1e50 GB) raised decimal.InvalidOperation and took the page down. Enough digits for any float
            # (1.8e308 has 309) format it in full, as Babel would with a wider context.
            with localcontext() as context:
                context.prec = 400
                return self._apply(value)

    def _apply(self, value) -> str:
        if self.currency is None:
            return self.pattern.apply(value, self.locale)
        return self.pattern.apply(value, self.locale, currency=self.currency, currency_digits=False)

    def format(self, value) -> str:
        if self.spec is not None and (type(value) is float or type(value) is int) and -1e15 < value < 1e15:
            return _plain_text(self, str(value))
        return self._format(value)

    def plain(self, text: str) -> str:
        """The quickest path, for the text of a float or int below 1e15 (str(value): what Babel reads too)."""
        number = Decimal(text)
        if self.scale:
            number = number.scaleb(self.scale)
        negative = number.is_signed()
        integer, _, fraction = format(number.copy_abs(), self.spec).partition(".")
        if self.trim:
            fraction = fraction[:self.min_frac] + fraction[self.min_frac:].rstrip("0")
        return (self.prefixes[negative] + integer.replace(",", self.group)
                + (self.decimal + fraction if fraction else "") + self.suffixes[negative])

    def _format(self, value) -> str:
        """NumberPattern.apply's plain-pattern path, step by step, with the symbols looked up once."""
        if not self.fast:
            return self.babel(value)
        # NumberPattern.apply: Decimal(str(value)), scaleb(scale), the sign apart, abs().normalize(), then
        # _quantize_value: quantize to the maximum fraction digits (the context's half-even rounding).
        try:
            number = value if isinstance(value, Decimal) else Decimal(str(value))
            number = number.scaleb(self.scale)
            negative = number.is_signed()
            rounded = abs(number).normalize().quantize(self.quantum)
        except ArithmeticError:  # invalid input or too many digits: Babel raises (or copes) its own way
            return self.babel(value)
        if not rounded.is_finite():
            return self.babel(value)
        integer, _, fraction = f"{rounded:f}".partition(".")
        # _format_int: pad to the minimum integer digits, then group from the right.
        if len(integer) < self.min_int:
            integer = "0" * (self.min_int - len(integer)) + integer
        size, later_size = self.group_sizes
        if len(integer) > size:
            groups = []
            while len(integer) > size:
                groups.append(integer[-size:])
                integer = integer[:-size]
                size = later_size
            groups.append(integer)
            integer = self.group.join(reversed(groups))
        # _format_frac: pad to the minimum, drop an all-zero optional fraction, trim optional trailing zeros.
        fraction = fraction or "0"
        minimum, maximum = self.min_frac, self.max_frac
        if len(fraction) < minimum:
            fraction += "0" * (minimum - len(fraction))
        if maximum == 0 or (minimum == 0 and int(fraction) == 0):
            fraction = ""
        else:
            if len(fraction) > minimum:
                fraction = fraction[:minimum] + fraction[minimum:].rstrip("0")
            fraction = self.decimal + fraction
        return self.prefixes[negative] + integer + fraction + self.suffixes[negative]


# A page formats the same figures again and again, and so do the pages of one report (offer prices, memory sizes,
# the weights of each format): the quick path's text is cached by all it depends on, the formatter (pattern, locale,
# currency) and the number's own text (str(value) tells -0.0 from 0.0 and 1 from 1.0, which compare equal).
@lru_cache(maxsize=4096)
def _plain_text(formatter: _Formatter, text: str) -> str:
    return formatter.plain(text)


@lru_cache(maxsize=64)
def _number_formatter(language: str, digits: int, optional: bool = False) -> _Formatter:
    """"#,##0.00" (`digits` decimals, "#,##0.##" when they are optional) in the locale."""
    decimals = "." + ("#" if optional else "0") * digits if digits > 0 else ""
    return _Formatter(_pattern("#,##0" + decimals), babel_locale(language))


def number(value: float | int | None, language: str, digits: int = 0) -> str | None:
    """A number with exactly `digits` decimals and the locale's grouping."""
    if value is None:
        return None
    return _number_formatter(language, digits).format(value)


def up_to(value: float | int | None, language: str, digits: int) -> str | None:
    """A number with at most `digits` decimals, none written when they are zero (8 → 8, 1.7837 → 1.784)."""
    if value is None:
        return None
    return _number_formatter(language, digits, True).format(value)


def exact(value: float | int | None, language: str) -> str | None:
    """A limit as it is, in the locale (0.5 → 0,5; 1e8 → 100.000.000): up to six decimals, none written when zero."""
    return up_to(value, language, 6)


def significant(value: float | None, language: str) -> str | None:
    """Up to three significant decimals for small values, none for large ones (a speed: 2.7, 115, 10,619)."""
    if value is None:
        return None
    magnitude = abs(value)
    digits = 0 if magnitude >= 100 else 1 if magnitude >= 10 else 2 if magnitude >= 1 else 3
    return _number_formatter(language, digits, True).format(value)


@lru_cache(maxsize=8)
def billions_unit(language: str) -> str:
    """The locale's short word for 10^9 from CLDR's short compact pattern ("0B" in English, "0 Mrd'.'" in German):
    English keeps "B", German writes "Mrd." (Milliarden), as "744 Mrd. Parameter" reads in German."""
    pattern = babel_locale(language).compact_decimal_formats["short"]["other"]["1000000000"].pattern
    return pattern.replace("0", "").replace("'", "").strip() or "B"


def billions(value: float | None, language: str) -> str | None:
    """A count in billions (parameters, FLOPs per token) with significant() digits and the locale's unit:
    8.03e9 → "8.03 B" (en), "8,03 Mrd." (de)."""
    if value is None:
        return None
    return f"{significant(value / 1e9, language)} {billions_unit(language)}"


def usd(value: float | None, language: str, digits: int = 2) -> str | None:
    """US dollars in the locale's currency pattern with `digits` decimals (de: 1.234,56 $; en: $1,234.56)."""
    if value is None:
        return None
    return _usd_formatter(language, digits).format(value)


# Significant digits of a small per-unit price (cost per 1M tokens): 2 decimals turned $0.0386 into "$0.04", a
# rounding of 4 %, and two costs 30 % apart into the same figure.
USD_RATE_SIGNIFICANT = 3
USD_RATE_MAX_DECIMALS = 6


def usd_rate(value: float | None, language: str) -> str | None:
    """A per-unit price: cents as usd() gives them, and below $1 at least USD_RATE_SIGNIFICANT significant digits
    (en: $0.0386, $0.827, $12.18; de: 0,0386 $)."""
    if value is None:
        return None
    digits = 2
    if 0 < abs(value) < 1:
        digits = min(USD_RATE_MAX_DECIMALS, max(2, USD_RATE_SIGNIFICANT - 1 - math.floor(math.log10(abs(value)))))
    return usd(value, language, digits)


@lru_cache(maxsize=32)
def _usd_formatter(language: str, digits: int) -> _Formatter:
    return _Formatter(_currency_pattern(language, digits), babel_locale(language), currency="USD")


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
    return _percent_formatter(language, max(digits, 0)).format(value)


@lru_cache(maxsize=16)
def _percent_formatter(language: str, digits: int) -> _Formatter:
    """digits 0: the locale's own percent pattern, whole (what `babel.numbers.format_percent` applies)."""
    locale = babel_locale(language)
    pattern = locale.percent_formats[None] if digits <= 0 else _percent_pattern(language, digits)
    return _Formatter(pattern, locale)


@lru_cache(maxsize=16)
def _percent_pattern(language: str, digits: int) -> NumberPattern:
    whole_pattern = babel_locale(language).percent_formats[None].pattern.split(";")[0]
    return _pattern(_with_decimals(whole_pattern, digits))


def date(value: dt.date | None, language: str) -> str | None:
    if value is None:
        return None
    return _date(value, language)


@lru_cache(maxsize=1024)
def _date(value: dt.date, language: str) -> str:
    """The locale's medium date format; dates repeat across a page (offer verification dates)."""
    return babel_format_date(value, format="medium", locale=babel_locale(language))


def month(value: dt.date | None, language: str) -> str | None:
    """A month and year in the locale ("March 2026", "März 2026"): for dates whose source gives no day."""
    if value is None:
        return None
    return _month(value.replace(day=1), language)


@lru_cache(maxsize=256)
def _month(value: dt.date, language: str) -> str:
    return babel_format_skeleton("yMMMM", value, locale=babel_locale(language))
