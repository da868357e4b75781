"""Widgets rendered in Python. Django's template-based widgets render three templates per <input> and one per
<option>: ~40 ms for the configurator's ~90 options and ~0.4 ms per number field on every report page. The output
is the same markup Django's templates produce (tests/test_widgets.py compares them)."""

from __future__ import annotations

from django import forms
from django.forms.utils import flatatt
from django.utils.html import conditional_escape, escape, format_html
from django.utils.safestring import mark_safe


class FastSelect(forms.Select):
    def render(self, name, value, attrs=None, renderer=None):
        final_attrs = self.build_attrs(self.attrs, {**(attrs or {}), "name": name})
        selected = set(self.format_value(value))
        # Values and labels escaped as Django's template escapes them; one join instead of format_html_join, which
        # costs ~8 µs per option (the configurator renders ~90 options per page).
        options = "".join(
            f'<option value="{escape(option_value)}"{" selected" if str(option_value) in selected else ""}>'
            f"{conditional_escape(label)}</option>"
            for option_value, label in self.choices)
        return format_html("<select{}>{}</select>", flatatt(final_attrs), mark_safe(options))


class FastNumberInput(forms.NumberInput):
    """django/forms/widgets/input.html, in Python: type, name, value (when there is one), then the attributes."""

    def render(self, name, value, attrs=None, renderer=None):
        final_attrs = {"type": self.input_type, "name": name}
        value = self.format_value(value)
        if value is not None:
            final_attrs["value"] = value
        final_attrs.update(self.build_attrs(self.attrs, attrs))
        return format_html("<input{}>", flatatt(final_attrs))
