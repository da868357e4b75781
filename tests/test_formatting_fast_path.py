"""`reports.formatting` compiles Babel's number patterns into a fast path: its output must be Babel's.

The reference below is the formatting as it was done before the fast path: the pattern parsed by Babel and
applied by `NumberPattern.apply` (or `format_percent`) on every call.
"""

from __future__ import annotations

import datetime as dt
import decimal
from decimal import Decimal

import pytest
from babel import Locale
from babel.dates import format_date
from babel.numbers import format_percent, parse_pattern
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from reports import formatting

LANGUAGES = ("de", "en")
DIGITS = (0, 1, 2, 3)
# Locales with other symbols, currency patterns and groupings (hi_IN: #,##,##0; de_CH: "'" as group symbol,
# which Babel's quote stripping eats; ar_EG, fa: other minus and percent texts; sv, fr: narrow spaces).
OTHER_LANGUAGES = (
    "hi-IN", "de-CH", "fr-CH", "fr", "sv", "ar-EG", "fa", "es", "pt-BR", "ja", "bn", "en-IN", "nl",
)


def _locale(language: str) -> Locale:
    return Locale.parse(language or "en", sep="-")


def _with_decimals(pattern: str, digits: int) -> str:
    if digits <= 0:
        return pattern
    last_zero = pattern.rindex("0")
    return pattern[:last_zero + 1] + "." + "0" * digits + pattern[last_zero + 1:]


def babel_number(value, language: str, digits: int) -> str:
    return parse_pattern("#,##0" + ("." + "0" * digits if digits > 0 else "")).apply(value, _locale(language))


def babel_significant(value, language: str) -> str:
    magnitude = abs(value)
    digits = 0 if magnitude >= 100 else 1 if magnitude >= 10 else 2 if magnitude >= 1 else 3
    return parse_pattern("#,##0" + ("." + "#" * digits if digits else "")).apply(value, _locale(language))


def babel_usd(value, language: str, digits: int) -> str:
    locale = _locale(language)
    whole = locale.currency_formats["standard"].pattern.split(";")[0].replace(".00", "")
    pattern = parse_pattern(_with_decimals(whole, digits))
    return pattern.apply(value, locale, currency="USD", currency_digits=False)


def babel_percent(value, language: str, digits: int) -> str:
    locale = _locale(language)
    if digits <= 0:
        return format_percent(value, locale=locale)
    whole = locale.percent_formats[None].pattern.split(";")[0]
    return parse_pattern(_with_decimals(whole, digits)).apply(value, locale)


def assert_same(ours, reference, *args) -> None:
    """The same text as Babel, or the same exception where Babel raises (a bool). Where Babel's default decimal
    context is too narrow (1e30 with decimals: decimal.InvalidOperation), the text Babel gives with a wider one
    (a mistyped catalog figure must not take a page down)."""
    try:
        expected = reference(*args)
    except ArithmeticError as error:
        try:
            with decimal.localcontext() as context:
                context.prec = 400
                expected = reference(*args)
        except ArithmeticError:  # not a number at all ("abc")
            with pytest.raises(type(error)):
                ours(*args)
            return
    except Exception as error:
        with pytest.raises(type(error)):
            ours(*args)
        return
    assert ours(*args) == expected, args


def assert_all_equal_babel(value, language: str) -> None:
    for digits in DIGITS:
        assert_same(formatting.number, babel_number, value, language, digits)
        assert_same(formatting.usd, babel_usd, value, language, digits)
        assert_same(formatting.percent, babel_percent, value, language, digits)
    assert_same(formatting.significant, babel_significant, value, language)


# Ties at 0-3 decimals (as typed: 2.675 is 2.67499999… in binary, but Babel rounds str(2.675) half-even), ties
# once scaled to percent, zeros, values that round to (negative) zero, the significant() thresholds, and
# magnitudes on both sides of the fast path's 1e15 bound.
EDGE_VALUES = [
    0, 1, -1, 7, 999, 1000, -1000, 999_999, 1_000_000, 123_456_789, -987_654_321,
    10**15 - 1, 10**15, 10**18, 10**20, 2**53 + 1, 10**27, 10**30,
    0.0, -0.0, 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.125, 0.375, -0.125, 2.675, 1.005, 1.015, 1.025,
    0.045, 0.0045, 0.00045, 0.000045, 0.0135, 0.0125, 0.01125, 0.001, 0.0005, 0.0015, 0.0025, -0.0005,
    999.995, 999.9995, 99.995, 9.9995, 99.95, 9.995, 0.9995, 0.99995, 999.5, 9999.5, -999.995,
    1234567.891, -1234567.891, 1234.5678, 123456789.125, 0.1, 0.2, 0.3, 1 / 3, 2 / 3,
    1e-9, -1e-9, 1e-4, 5e-4, -5e-4, 4.9999e-4, 5e-5, 1e-300, 5e-324,
    1e15 - 0.5, 999_999_999_999_999.9, 1e15, -1e15, 1e15 + 0.5, 1e16, 1.5e16, 1e20, -1e20, 1e23,
    1.7976931348623157e308, 100.0, 99.99, 10.0, 9.99, 1.0, 0.99999, 115.3, 10619.3, 2.7,
    Decimal("2.675"), Decimal("-0"), Decimal("0.00"), Decimal("1E+3"), Decimal("1234.5650"),
    Decimal("-0.0049"), Decimal("0.12345678901234567890123456789"), Decimal("1E+40"), Decimal("1.135"),
    True, False,
]


@pytest.mark.parametrize("language", LANGUAGES + OTHER_LANGUAGES)
@pytest.mark.parametrize("value", EDGE_VALUES, ids=repr)
def test_edge_values_equal_babel(value, language):
    assert_all_equal_babel(value, language)


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("value", ["abc", "1234.565", float("nan"), float("inf"), -float("inf")], ids=repr)
def test_what_babel_renders_specially_is_left_to_babel(value, language):
    for digits in DIGITS:
        assert_same(formatting.number, babel_number, value, language, digits)
        assert_same(formatting.usd, babel_usd, value, language, digits)
        assert_same(formatting.percent, babel_percent, value, language, digits)


FLOATS = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False, min_value=-1e22, max_value=1e22),
    st.floats(allow_nan=False, allow_infinity=False, min_value=-2.0, max_value=2.0),
    # Short decimals, as typed into a catalog: many are exact ties at some number of decimals.
    st.builds(lambda units, places: units / 10**places, st.integers(-10**12, 10**12), st.integers(0, 6)),
)


@pytest.mark.parametrize("language", LANGUAGES)
@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=FLOATS)
@example(value=2.675)
@example(value=-0.0)
def test_random_floats_equal_babel(language, value):
    assert_all_equal_babel(value, language)


@pytest.mark.parametrize("language", LANGUAGES + OTHER_LANGUAGES)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=st.one_of(
    FLOATS,
    st.integers(-10**17, 10**17),
    st.decimals(allow_nan=False, allow_infinity=False, places=5, min_value=-10**9, max_value=10**9),
))
def test_random_values_equal_babel_in_other_locales(language, value):
    assert_all_equal_babel(value, language)


@pytest.mark.parametrize("pattern, language", [
    ("#,##,##0.00", "hi_IN"),   # Indian grouping: the step-by-step path, not Decimal's grouping by three
    ("#,##,##0", "en_IN"),
    ("#,###0.##", "en"),         # groups of four
    ("000.0#", "en"),            # minimum integer digits
    ("#,##0.0##", "de"),         # optional decimals after a required one
    ("#.##", "de"),              # no grouping, no minimum integer digit
    ("0.###E0", "en"),           # scientific: Babel itself
    ("@@#", "en"),               # significant digits: Babel itself
    ("#,##0.00", "de_CH"),       # "'" group symbol, which Babel's quote stripping removes: Babel itself
    ("'#'#,##0.0", "en"),        # quoted text: Babel itself
    ("#,##0.0‰", "en"),          # per mille: scale 3
    ("#,##0.00;(#,##0.00)", "en"),  # a negative subpattern
])
@pytest.mark.parametrize("value", [0.0, -0.0, 0.125, -2.675, 1234567.891, -98765.4321, 1e-9, 12, 10**12, 1e20,
                                   Decimal("12345678.9050")], ids=repr)
def test_other_patterns_equal_babel(pattern, language, value):
    parsed, locale = parse_pattern(pattern), Locale.parse(language)
    assert formatting._Formatter(parsed, locale).format(value) == parsed.apply(value, locale)


def test_unsupported_patterns_fall_back_to_babel():
    """Patterns the compiled path cannot reproduce are applied by Babel, not approximated."""
    def compiled(pattern, language, currency=None):
        return formatting._Formatter(parse_pattern(pattern), Locale.parse(language), currency)

    assert not compiled("0.###E0", "en").fast
    assert not compiled("@@#", "en").fast
    assert not compiled("#,##0.00", "de_CH").fast
    assert not compiled("#,##0.00 ¤¤¤", "en", "USD").fast
    assert compiled("#,##,##0.00", "hi_IN").spec is None  # not grouped by three: the step-by-step path
    assert compiled("#,##0.00", "de").spec == ",.2f"
    # de_CH's group symbol is "'", and Babel's quote stripping eats pairs of them: kept as Babel does.
    assert compiled("#,##0.00", "de_CH").format(1234567.891) == parse_pattern("#,##0.00").apply(
        1234567.891, Locale.parse("de_CH"))


def test_known_renderings():
    assert formatting.number(1234.5678, "de", 2) == "1.234,57"
    assert formatting.number(1234.5678, "en", 2) == "1,234.57"
    assert formatting.number(2.675, "en", 2) == "2.68"  # str(2.675) rounded half-even, not the binary value
    assert formatting.number(-0.0, "en", 0) == "-0"     # as Babel prints it
    assert formatting.number(-0.001, "en", 2) == "-0.00"
    assert formatting.usd(1234.5, "de", 2) == "1.234,50\xa0$"
    assert formatting.usd(-1234.5, "en", 2) == "-$1,234.50"
    assert formatting.percent(0.0134, "de", 2) == "1,34\xa0%"
    assert formatting.percent(0.8, "en") == "80%"
    assert formatting.significant(2.7, "en") == "2.7"
    assert formatting.significant(10619.3, "de") == "10.619"
    assert formatting.significant(0.5, "de") == "0,5"
    assert formatting.number(None, "de", 2) is None


@pytest.mark.parametrize("language", LANGUAGES + OTHER_LANGUAGES)
def test_dates_equal_babel(language):
    dates = (dt.date(2026, 11, 4), dt.date(1999, 1, 31), dt.datetime(2024, 2, 29, 23, 59),
             dt.date(2026, 11, 4))
    for value in dates:  # twice the same date: the second comes from the cache
        expected = format_date(value, format="medium", locale=_locale(language))
        assert formatting.date(value, language) == expected
    assert formatting.date(None, language) is None


def test_figures_that_compare_equal_keep_their_own_text_through_the_cache():
    """The quick path is cached by the number's text: -0.0 == 0.0 and 1 == 1.0 (same hash, too) must not share an
    entry, whichever comes first. A figure formatted again is a cache hit."""
    formatting._plain_text.cache_clear()
    for language in LANGUAGES:
        for values in ((0.0, -0.0), (-0.0, 0.0), (1, 1.0), (1.0, 1), (2.5, 2.50)):
            for digits in (0, 1, 2):
                for value in values:
                    pattern = parse_pattern("#,##0" + ("." + "0" * digits if digits else ""))
                    assert formatting.number(value, language, digits) == pattern.apply(value, _locale(language))
    hits = formatting._plain_text.cache_info().hits
    formatting.number(1234.5, "de", 1)
    formatting.number(1234.5, "de", 1)
    assert formatting._plain_text.cache_info().hits == hits + 1
