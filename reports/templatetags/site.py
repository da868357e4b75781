"""Site-wide template helpers: language switch links that keep the visitor on the same page and state."""

from __future__ import annotations

from django import template
from django.conf import settings
from django.utils.translation import get_language

from reports.templatetags.seo import translated_full_path

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
