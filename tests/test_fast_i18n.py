"""reports/templatetags/fast_i18n.py: Django's {% translate %} and {% blocktranslate %} with less work per render.
Every form of both tags must render exactly what Django's own tags render, in both languages."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

import pytest
from django.template import Context, TemplateSyntaxError, engines
from django.test import override_settings
from django.utils import translation
from django.utils.safestring import SafeString

from reports.templatetags import fast_i18n

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"

# Each form of the tags; messages of the site's catalog (German exists), one that is not in it, percent signs, a
# message context found and one not found, "as", noop, a variable msgid, a filter on the literal, autoescape off,
# blocktranslate with a count, trimmed, with a context, as a variable and with a value that needs escaping.
FORMS = [
    '{% translate "Billing" %}',
    '{% trans "Billing" %}',
    '{% translate "no such message, 100 % left" %}',
    '{% translate "50%% and 7 %" %}',
    '{% translate "none" context "longest context" %}',
    '{% translate "none" context "no such context" %}',
    '{% translate "none" %}',
    '{% translate "Billing" as word %}[{{ word }}]{{ word }}',
    '{% translate "Billing" context "longest context" as word %}{{ word }}',
    '{% translate "Billing" noop %}',
    '{% translate message %}',
    '{% translate "Billing"|upper %}',
    '{% translate "Deploy" context ctx %}',
    '{% translate "it\'s <b>" %}',
    "{% translate 'Billing' %}",
    '{% autoescape off %}{% translate "Billing" %}{% translate "a < b" %}{% endautoescape %}',
    '{% translate "" %}',
    '{% blocktranslate %}Cloud per month{% endblocktranslate %}',
    '{% blocktranslate with years=years %}~{{ years }} years{% endblocktranslate %}',
    '{% blocktranslate with price=markup %}hardware budget {{ price }}{% endblocktranslate %}',
    '{% blocktranslate count n=count %}{{ n }} more offer{% plural %}{{ n }} more offers{% endblocktranslate %}',
    '{% blocktranslate count n=one %}{{ n }} more offer{% plural %}{{ n }} more offers{% endblocktranslate %}',
    '{% blocktranslate trimmed with x=years %}\n  a   {{ x }}\n  b 10 %\n{% endblocktranslate %}',
    '{% blocktranslate context "longest context" %}none{% endblocktranslate %}',
    '{% blocktranslate with x=years asvar text %}~{{ x }} years{% endblocktranslate %}<{{ text }}>',
    '{% blocktranslate with a=markup %}{{ a }} and {{ missing }}{% endblocktranslate %}',
    '{% blocktranslate with a=markup %}{{ a }}, {{ years }} and {{ message }}{% endblocktranslate %}',
    '{% blocktranslate with years=markup %}{{ years }}{% endblocktranslate %}{{ years }}',
    '{% blocktranslate with x=years context ctx %}~{{ x }} years{% endblocktranslate %}',
    '{% autoescape off %}{% blocktranslate with a=markup %}{{ a }}{% endblocktranslate %}{% endautoescape %}',
    '{% blocktranslate trimmed %}\n  Cloud per\n  month\n{% endblocktranslate %}',
    # Counts: with values, a filter, a context (found and not), a float and a Decimal, as a variable, a name the
    # block also sets, one that reads the block's own values (resolved after they are pushed), trimmed, zero.
    '{% blocktranslate count n=count with x=markup %}{{ n }} more offer{% plural %}{{ n }} more offers{{ x }}'
    '{% endblocktranslate %}',
    '{% blocktranslate count n=count|add:"-2" %}{{ n }} more offer{% plural %}{{ n }} more offers{% endblocktranslate %}',
    '{% blocktranslate count n=count context "longest context" %}{{ n }} more offer{% plural %}{{ n }} more offers'
    '{% endblocktranslate %}',
    '{% blocktranslate count n=count context ctx %}{{ n }} more offer{% plural %}{{ n }} more offers'
    '{% endblocktranslate %}',
    '{% blocktranslate count n=half %}{{ n }} more offer{% plural %}{{ n }} more offers{% endblocktranslate %}',
    '{% blocktranslate count n=decimal %}{{ n }} more offer{% plural %}{{ n }} more offers{% endblocktranslate %}',
    '{% blocktranslate count n=count asvar text %}{{ n }} more offer{% plural %}{{ n }} more offers'
    '{% endblocktranslate %}<{{ text }}>{{ n }}',
    '{% blocktranslate count n=count with n=markup %}{{ n }} more offer{% plural %}{{ n }} more offers'
    '{% endblocktranslate %}',
    '{% blocktranslate count n=years|add:count with count=one %}{{ n }} more offer{% plural %}{{ n }} more offers'
    '{% endblocktranslate %}',
    '{% blocktranslate trimmed count n=zero with total=years %}\n  {{ n }} of {{ total }} catalog cloud offers'
    ' fits this configuration, cheapest per hour first.\n{% plural %}\n  {{ n }} of {{ total }} catalog cloud'
    ' offers fit this configuration, cheapest per hour first.\n{% endblocktranslate %}',
    '{% blocktranslate count n=one %}{{ n }} and {{ missing }}{% plural %}{{ n }}, {{ years }}{% endblocktranslate %}',
    # Values of every type a block renders: safe text, text, ints (large, negative), a float, a bool, None, a date.
    '{% blocktranslate with a=safe b=markup c=big d=-3 e=half f=yes g=nothing h=date %}{{ a }} {{ b }} {{ c }} {{ d }}'
    ' {{ e }} {{ f }} {{ g }} {{ h }}{% endblocktranslate %}',
    '{% autoescape off %}{% blocktranslate with a=safe b=markup c=big e=half %}{{ a }} {{ b }} {{ c }} {{ e }}'
    '{% endblocktranslate %}{% endautoescape %}',
    '{% load l10n %}{% localize off %}{% blocktranslate with c=big e=half h=date %}{{ c }} {{ e }} {{ h }}{% endblocktranslate %}'
    '{% endlocalize %}',
]
VALUES = {"message": "Billing", "ctx": "longest context", "years": 7, "markup": "<b>&", "count": 3, "one": 1,
          "zero": 0, "half": 1.5, "decimal": Decimal("2.50"), "safe": SafeString("1,5 <b>GiB</b>"), "big": 1234567,
          "yes": True, "nothing": None, "date": dt.date(2026, 5, 3)}


def _render(source: str, language: str, libraries: str) -> str:
    template = engines["django"].from_string(f"{{% load {libraries} %}}{source}")
    with translation.override(language):
        return template.render(dict(VALUES))


@pytest.mark.parametrize("language", ["en", "de"])
@pytest.mark.parametrize("source", FORMS)
def test_renders_what_djangos_tags_render(source, language):
    assert _render(source, language, "i18n fast_i18n") == _render(source, language, "i18n")


@override_settings(USE_THOUSAND_SEPARATOR=True)
@pytest.mark.parametrize("language", ["en", "de"])
def test_ints_are_grouped_as_in_django_when_the_site_groups_thousands(language):
    source = '{% blocktranslate with c=big n=count %}{{ c }} {{ n }}{% endblocktranslate %}'
    assert _render(source, language, "i18n fast_i18n") == _render(source, language, "i18n")


def test_the_german_catalog_is_used():
    assert _render('{% translate "none" context "longest context" %}', "de", "i18n fast_i18n") == "keiner"


def test_constant_texts_take_the_short_path_and_other_forms_djangos():
    def node(source):
        return engines["django"].from_string("{% load i18n fast_i18n %}" + source).template.nodelist[-1]

    assert type(node('{% translate "Billing" %}')) is fast_i18n.TranslateNode
    assert type(node('{% translate "none" context "longest context" as x %}')) is fast_i18n.TranslateNode
    assert type(node('{% translate message %}')) is not fast_i18n.TranslateNode
    assert type(node('{% translate "Billing" noop %}')) is not fast_i18n.TranslateNode
    assert type(node('{% translate "Billing"|upper %}')) is not fast_i18n.TranslateNode
    assert type(node('{% translate "Deploy" context ctx %}')) is not fast_i18n.TranslateNode
    assert type(node('{% blocktranslate %}x{% endblocktranslate %}')) is fast_i18n.BlockTranslateNode


def test_every_site_template_that_translates_loads_the_fast_tags():
    """A template that loads only `i18n` still renders the same, only slower: the report's templates load both."""
    slow = []
    for path in TEMPLATES.rglob("*.html"):
        text = path.read_text()
        if "admin" not in path.parts and "{% load" in text and "translate" in text and "fast_i18n" not in text:
            slow.append(str(path.relative_to(TEMPLATES)))
    assert slow == []


def test_a_count_that_is_not_a_number_is_refused_as_in_django():
    source = '{% blocktranslate count n=message %}{{ n }} offer{% plural %}{{ n }} offers{% endblocktranslate %}'
    for libraries in ("i18n fast_i18n", "i18n"):
        with pytest.raises(TemplateSyntaxError, match="'n' argument to 'blocktranslate' tag must be a number."):
            _render(source, "en", libraries)


def test_a_count_takes_the_short_path_unless_it_reads_the_blocks_own_values():
    def node(source):
        return engines["django"].from_string("{% load i18n fast_i18n %}" + source).template.nodelist[-1]

    plural = "{{ n }} offer{% plural %}{{ n }} offers{% endblocktranslate %}"
    assert not node("{% blocktranslate count n=x|add:y with z=1 %}" + plural).count_reads_own_values
    assert node("{% blocktranslate count n=x|add:y with y=1 %}" + plural).count_reads_own_values
    assert node("{% blocktranslate count n=y.z with y=1 %}" + plural).count_reads_own_values


def test_context_pops_after_blocktranslate():
    template = engines["django"].from_string(
        "{% load i18n fast_i18n %}{% blocktranslate with years=1 %}~{{ years }} years{% endblocktranslate %}{{ years }}")
    with translation.override("en"):
        assert template.template.render(Context({"years": 5})) == "~1 years5"


def test_a_translation_that_does_not_fit_its_block_falls_back_as_in_django():
    """A translation with a placeholder its block lacks: Django renders the block again in the default language."""
    from unittest import mock

    real = translation.gettext
    broken = mock.patch("django.utils.translation.gettext",
                        side_effect=lambda message: "%(nope)s" if translation.get_language() else real(message))
    source = '{% blocktranslate with x=years %}~{{ x }} years{% endblocktranslate %}'
    with broken:
        assert _render(source, "de", "i18n fast_i18n") == _render(source, "de", "i18n") == "~7 years"


def test_a_constant_text_is_looked_up_once_per_language_and_forgotten_with_the_settings(monkeypatch):
    """The tags remember a constant msgid's translation per language: a second render asks gettext nothing, each
    language keeps its own text, and a change of the settings translations come from (LANGUAGES, LOCALE_PATHS, …)
    forgets them."""
    template = engines["django"].from_string(
        '{% load i18n fast_i18n %}{% translate "Billing" %}|{% blocktranslate %}Billing{% endblocktranslate %}')
    fast_i18n._translated.clear()
    calls = []
    gettext = translation.gettext
    monkeypatch.setattr(translation, "gettext", lambda message: calls.append(message) or gettext(message))
    rendered = {}
    for language in ("de", "en", "de", "en"):
        with translation.override(language):
            rendered.setdefault(language, set()).add(template.render({}))
    assert calls == ["Billing", "Billing"]  # once in German, once in English
    assert rendered == {"de": {"Abrechnung|Abrechnung"}, "en": {"Billing|Billing"}}
    with override_settings(LANGUAGES=[("de", "German"), ("en", "English")]):
        assert fast_i18n._translated == {}
