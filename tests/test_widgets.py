"""The Python-rendered widgets produce the markup of Django's template-based ones (the same HTML elements,
attributes and text; whitespace between elements aside)."""

from __future__ import annotations

import pytest
from django import forms
from django.test.html import parse_html

from reports.widgets import FastNumberInput, FastSelect

CHOICES = [("Q4_K_M", "Q4_K_M"), ("Q8_0", "Q8_0 <8-bit>"), (8192, "8K"), ("a&b", "\"quoted\"")]


@pytest.mark.parametrize("value", [None, "", "Q8_0", 8192, "8192", "a&b", ["Q4_K_M"]])
@pytest.mark.parametrize("attrs", [None, {"id": "id_quant"}, {"id": "id_q", "aria-invalid": "true", "required": True}])
def test_fast_select_matches_django(value, attrs):
    assert parse_html(FastSelect(choices=CHOICES).render("quant", value, attrs)) == parse_html(
        forms.Select(choices=CHOICES).render("quant", value, attrs))


GROUPED = [("GGUF <llama.cpp>", [("Q8_0", "Q8_0 (8-bit — near-lossless)"), ("Q4_K_M", "Q4_K_M")]),
           ("vLLM", [("FP8", "FP8 & co")]), ("BF16", "BF16")]


@pytest.mark.parametrize("value", [None, "Q4_K_M", "FP8", "BF16"])
def test_fast_select_renders_option_groups_as_django(value):
    assert parse_html(FastSelect(choices=GROUPED).render("quant", value, {"id": "id_quant"})) == parse_html(
        forms.Select(choices=GROUPED).render("quant", value, {"id": "id_quant"}))


@pytest.mark.parametrize("value", [None, "", 4, 4.5, "0.15", "1e3", "<script>", 1e8])
@pytest.mark.parametrize("attrs", [None, {"id": "id_hours", "min": 0.5, "max": 24, "step": "any"},
                                   {"id": "id_kwh", "required": True, "disabled": False, "aria-describedby": "x y"}])
def test_fast_number_input_matches_django(value, attrs):
    assert parse_html(FastNumberInput().render("hours", value, attrs)) == parse_html(
        forms.NumberInput().render("hours", value, attrs))


def test_bound_fields_of_the_configurator_render_like_django():
    """The widget as a form field renders it (min/max/step from the field), compared with the stock widget."""
    class Stock(forms.Form):
        hours = forms.FloatField(min_value=0.5, max_value=24)

    class Fast(forms.Form):
        hours = forms.FloatField(min_value=0.5, max_value=24, widget=FastNumberInput)

    for data in ({"hours": "4"}, {"hours": "x"}, {}):
        assert parse_html(str(Fast(data)["hours"])) == parse_html(str(Stock(data)["hours"]))


def test_fast_select_options_follow_their_choices_and_language():
    """The escaped options are cached per choice list: a safe label, a value of another type with the same text
    hash, and a lazy label in another language each get their own markup."""
    from django.utils.safestring import mark_safe
    from django.utils.translation import gettext_lazy, override

    def markup(choices, value):
        return FastSelect(choices=choices).render("x", value)

    assert "&lt;b&gt;" in markup([("a", "<b>")], "a") and "<b>" in markup([("a", mark_safe("<b>"))], "a")
    assert 'value="1.0" selected' in markup([(1.0, "one")], "1.0") and 'value="1" selected' in markup(
        [(1, "one")], "1")
    with override("de"):
        german = markup([("auto", gettext_lazy("other"))], "auto")
    with override("en"):
        english = markup([("auto", gettext_lazy("other"))], "auto")
    assert ">other<" in english and ">other<" not in german



@pytest.mark.parametrize("attrs", [
    {"id": "id_q", "data-x": "a&b \"c\" <d> 'e'", "required": True, "disabled": False, "hidden": None},
    {"zeta": 1, "alpha": 0.5, "b": True, "a": True},
])
def test_flat_attributes_match_flatatt(attrs):
    """The attributes are written as django.forms.utils.flatatt writes them: sorted, escaped, true booleans last;
    safe text is kept, a lazy translation is escaped as text."""
    from django.forms.utils import flatatt
    from django.utils.safestring import mark_safe
    from django.utils.translation import gettext_lazy

    from reports.widgets import flat_attributes

    assert flat_attributes(attrs) == flatatt(attrs)
    other = {"title": mark_safe("<b>&amp;</b>"), "aria-label": gettext_lazy("Deploy")}
    assert flat_attributes(other) == flatatt(other)


def test_plain_choices_around_an_option_group_keep_their_order():
    choices = [("a", "A"), ("b", "B"), ("Group", [("c", "C & c")]), ("d", "D"), ("e", "E")]
    for value in ("a", "c", "e", None):
        assert parse_html(FastSelect(choices=choices).render("x", value, {"id": "id_x"})) == parse_html(
            forms.Select(choices=choices).render("x", value, {"id": "id_x"}))


def test_configurator_forms_share_their_choice_lists_and_nothing_they_change(db):
    """Each ConfiguratorForm copies its fields (forms.ChoicesSharedOnCopy) without copying their choice lists, which
    it only ever replaces; a form's attributes, validators, messages and replaced choices stay its own."""
    from django.http import QueryDict

    from reports.forms import ConfiguratorForm
    from reports.estimates import CatalogSnapshot

    catalog = CatalogSnapshot()
    model, hardware = catalog.model("gemma-3-27b-it"), catalog.accelerator("rtx-3090")

    def form(query):
        return ConfiguratorForm(QueryDict(query), quant_names=catalog.quant_names, max_context=model.max_context,
                                default_budget=hardware.price_usd, hardware=hardware, model=model)

    class_validators = list(ConfiguratorForm.base_fields["context"].validators)
    first, second = form("context=12000&gpus=3"), form("context=abc")
    for name in ("kv_dtype", "engine", "offload"):
        assert first.fields[name].choices is second.fields[name].choices is ConfiguratorForm.base_fields[name].choices
        assert first.fields[name].widget is not second.fields[name].widget
    first.fields["engine"].widget.attrs["data-x"] = "1"
    first.fields["engine"].error_messages["required"] = "x"
    assert "data-x" not in second.fields["engine"].widget.attrs | ConfiguratorForm.base_fields["engine"].widget.attrs
    assert second.fields["engine"].error_messages["required"] != "x"
    assert ConfiguratorForm.base_fields["context"].validators == class_validators  # the model's limit is the form's
    assert "12000" in str(first["context"]) and "12000" not in str(second["context"])
    assert ">abc<" in str(second["context"]) and ">abc<" not in str(first["context"])
    assert first.fields["context"].validators is not second.fields["context"].validators
    assert ConfiguratorForm.base_fields["quant"].choices == [] and first.fields["quant"].choices
