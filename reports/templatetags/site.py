"""Site-wide template helpers: language switch links that keep the visitor on the same page and state, link lists,
form fields."""

from __future__ import annotations

from functools import lru_cache

from django import template
from django.conf import settings
from django.utils.html import conditional_escape
from django.utils.safestring import SafeData, SafeString
from django.utils.translation import get_language

from reports.templatetags.seo import translated_full_path
from reports.widgets import escaped_text

register = template.Library()


@register.simple_tag(takes_context=True)
def language_links(context) -> list[dict]:
    """One entry per language: the current URL (path and query) translated into that language."""
    request = context["request"]
    current = get_language()
    full_path = request.get_full_path()
    return [
        {"code": code, "name": name, "url": translated_full_path(full_path, code), "active": code == current}
        for code, name in settings.LANGUAGES
    ]


@register.filter
def field_group(field) -> SafeString:
    """One form field as the site writes it: a div naming the field (has-error when refused), its label, its widget
    and the slot its errors go in (htmx swaps that slot when the field is refused; report.js reads it).

    Written here rather than as an included template: a report's configurator has 11 fields, and an include of seven
    variable nodes and their escaping cost ~40 µs a field, ~0.45 ms of an uncached page; this writes the same markup
    (tests/test_render_cost.py compares it with the template it replaced) in a few µs.
    """
    errors = field.errors
    has_error = " has-error" if errors else ""
    error_text = "".join(f"{conditional_escape(error)} " for error in errors)
    return SafeString(
        f'<div class="field field-{conditional_escape(field.name)}{has_error}">\n'
        f'  <label for="{conditional_escape(field.id_for_label)}">{conditional_escape(field.label)}</label>\n'
        f"  {conditional_escape(str(field))}\n"
        f'  <div id="{conditional_escape(field.auto_id)}_error" class="field-error" role="alert">{error_text}</div>\n'
        f"</div>\n")


@register.filter
def link_items(links) -> SafeString:
    """`<li><a href="url">name</a></li>` for each (name, url) pair, escaped as the template would escape them.

    A report's neighbour clouds hold ~200 links, each carrying the visitor's state: written by a {% for %} loop they
    cost ~1.5 ms of an uncached page (two variable nodes and their escaping per link); one join costs ~0.1 ms. Of a
    link, the name and the path are the same on every configuration of the report, and its ~200 queries are a few
    distinct ones: each is escaped once (html.escape, ~0.8 µs, was ~0.35 ms of the page for ~580 texts).
    """
    queries: dict[str, str] = {}
    items = []
    for name, url in links:
        path, _mark, query = url.partition("?")
        if isinstance(url, SafeData):
            href = url  # written as it is, as the template writes safe text
        elif query:
            escaped_query = queries.get(query)
            if escaped_query is None:
                escaped_query = queries[query] = escaped_text(query)
            href = f"{_escaped_constant(path)}?{escaped_query}"
        else:
            href = _escaped_constant(url)
        items.append(f'<li><a href="{href}">{_escaped_constant(name)}</a></li>')
    return SafeString("".join(items))


# typed: a text marked safe and the same text unmarked are two entries (one is written as it is, one escaped)
@lru_cache(maxsize=4096, typed=True)
def _escaped_constant(text) -> str:
    """escaped_text of a text every page repeats (a catalog name, a report's path): ~200 a page, a few thousand in
    all."""
    return escaped_text(text)
