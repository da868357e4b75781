"""Report sections rendered once and reused.

``{% shared_section "…/_links.html" %}``: a section that depends only on the model, the accelerator, the language
and the catalog (not on the configurator's state) is rendered once per catalog version and then served from the
cache for every configuration of that report; the key (ReportPage.shared_section_key) includes the catalog version,
so an admin edit starts new keys. Reports on the visitor's own hardware are not shared.

``{% faq_section %}``: the FAQ section, rendered once per request; the FAQPage JSON-LD in the page head reads the
same HTML back (seo.report_faq_jsonld), so the structured data is what the page shows, at the cost of one render.

Both keep what they rendered in ReportPage.rendered_sections for the rest of the request: the title and the
description appear twice in <head> (<title>, og:title), the FAQ in the body and in the JSON-LD.
"""

from __future__ import annotations

from django import template
from django.conf import settings
from django.core.cache import cache
from django.template import Context
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language

register = template.Library()

FAQ_TEMPLATE = "reports/report/_faq.html"


@register.simple_tag(takes_context=True)
def shared_section(context: Context, template_name: str) -> SafeString:
    page = context["page"]
    # The title and the description each appear twice in <head> (<title> and og:title): one cache read a page.
    if (html := page.rendered_sections.get(template_name)) is not None:
        return mark_safe(html)
    key = page.shared_section_key(template_name, get_language())
    if key is None or (html := cache.get(key)) is None:
        html = str(context.template.engine.get_template(template_name).render(context))
        if key is not None:
            cache.set(key, html, settings.PAGE_CACHE_SECONDS)
    page.rendered_sections[template_name] = html
    return mark_safe(html)


def render_faq(context: Context, page) -> SafeString:
    """The FAQ section of `page` (its estimate as ``e``), rendered at most once per request."""
    html = page.rendered_sections.get(FAQ_TEMPLATE)
    if html is None:
        with context.push(page=page, e=page.estimate):
            html = context.template.engine.get_template(FAQ_TEMPLATE).render(context)
        page.rendered_sections[FAQ_TEMPLATE] = html
    return mark_safe(html)


@register.simple_tag(takes_context=True)
def faq_section(context: Context) -> SafeString:
    return render_faq(context, context["page"])
