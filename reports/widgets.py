"""Widgets rendered in Python. Django's template-based widgets render three templates per <input> and one per
<option>: ~40 ms for the configurator's ~90 options and ~0.4 ms per number field on every report page. The output
is the same markup Django's templates produce (tests/test_widgets.py compares them)."""

from __future__ import annotations

from django import forms
from django.forms.utils import flatatt
from django.utils.html import format_html, format_html_join


class FastSelect(forms.Select):
    def render(self, name, value, attrs=None, renderer=None):
        final_attrs = self.build_attrs(self.attrs, {**(attrs or {}), "name": name})
        selected = set(self.format_value(value))
        options = format_html_join(
            "", '<option value="{}"{}>{}</option>',
            ((option_value, " selected" if str(option_value) in selected else "", label)
             for option_value, label in self.choices),
        )
        return format_html("<select{}>{}</select>", flatatt(final_attrs), options)


class FastNumberInput(forms.NumberInput):
    """django/forms/widgets/input.html, in Python: type, name, value (when there is one), then the attributes."""

    def render(self, name, value, attrs=None, renderer=None):
        final_attrs = {"type": self.input_type, "name": name}
        value = self.format_value(value)
        if value is not None:
            final_attrs["value"] = value
        final_attrs.update(self.build_attrs(self.attrs, attrs))
        return format_html("<input{}>", flatatt(final_attrs))
