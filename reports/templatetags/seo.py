"""Search presence in <head>: canonical and hreflang links, Open Graph URL and locales, JSON-LD.

Every page has one URL per language (/de/…, /en/…); the unprefixed URL is the x-default, which LocaleMiddleware
redirects by Accept-Language. Query strings (configurator states, table sorting) never make a new canonical page.
"""

from __future__ import annotations

import html
import json
from functools import lru_cache
from html.parser import HTMLParser

from django import template
from django.conf import settings
from django.http import HttpRequest
from django.templatetags.static import static
from django.urls import get_script_prefix, get_urlconf, translate_url
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language, gettext

from reports.templatetags.sections import render_faq

register = template.Library()

# Open Graph wants language_TERRITORY; the territory where each of the site's languages is mostly read.
OG_LOCALES = {"de": "de_DE", "en": "en_US"}
# The escapes django.utils.html.json_script applies, so "</script>" in a model name cannot end the element.
JSON_SCRIPT_ESCAPES = (("<", "\\u003C"), (">", "\\u003E"), ("&", "\\u0026"))


def absolute_url(request: HttpRequest, path: str) -> str:
    """`path` on the public site: SITE_URL when configured (behind a proxy), else the request's scheme and host."""
    if settings.SITE_URL:
        return settings.SITE_URL.rstrip("/") + path
    return request.build_absolute_uri(path)


# The link-preview card per language (static/img/og-card-<lang>.png, drawn by scripts/og_cards.py).
OG_IMAGE_SIZE = (1200, 630)


@register.simple_tag(takes_context=True)
def og_image(context) -> SafeString:
    """og:image (absolute, as Open Graph requires) with its size and alternative text, in the page's language."""
    language = get_language() if get_language() in dict(settings.LANGUAGES) else settings.LANGUAGE_CODE
    url = absolute_url(context["request"], static(f"img/og-card-{language}.png"))
    width, height = OG_IMAGE_SIZE
    return format_html('<meta property="og:image" content="{}">\n  <meta property="og:image:width" content="{}">'
                       '\n  <meta property="og:image:height" content="{}">\n  <meta property="og:image:alt" content="{}">',
                       url, width, height, gettext("LLM Sizer: can this hardware run this LLM?"))


def unprefixed(path: str, language: str) -> str:
    """/de/model/x/ → /model/x/: the x-default URL, which redirects by the visitor's Accept-Language."""
    prefix = f"/{language}/"
    return "/" + path[len(prefix):] if path.startswith(prefix) else path


def language_paths(path: str) -> dict[str, str]:
    """The same page in every language of the site."""
    return {code: translated_path(path, code) for code, _ in settings.LANGUAGES}


def translated_path(path: str, language: str) -> str:
    """translate_url(path, language), memoized: it resolves and reverses (~0.13 ms), and every page asks it four
    times (canonical, hreflang, the language switch). Resolving an i18n_patterns path depends on the active
    language, reversing on the URLconf and script prefix: they are part of the key."""
    return _translated_path(path, language, get_language(), get_urlconf(), get_script_prefix())


@lru_cache(maxsize=4096)
def _translated_path(path: str, language: str, active_language: str | None, urlconf: str | None,
                     script_prefix: str) -> str:
    translated = translate_url(path, language)
    prefix = f"{script_prefix}{active_language}/"
    if translated == path and language != active_language and path.startswith(prefix):
        # A path that resolves to nothing (the 404 page of /de/gibtsnicht/) comes back unchanged: its language
        # switch then led to the same German page. The other language's prefix gives that language's 404 page.
        return f"{script_prefix}{language}/{path[len(prefix):]}"
    return translated


def translated_full_path(full_path: str, language: str) -> str:
    """translate_url of a path with a query string: the path translated (translated_path), the query kept."""
    path, question_mark, query = full_path.partition("?")
    return translated_path(path, language) + question_mark + query


@register.simple_tag(takes_context=True)
def canonical_links(context) -> SafeString:
    """<link rel=canonical>, hreflang alternates (each language and x-default) and og:url / og:locale."""
    request = context["request"]
    language = get_language()
    path = request.path  # without the query string: configurator variants point to the base page
    alternates = language_paths(path)
    canonical = absolute_url(request, alternates.get(language, path))
    links = [format_html('<link rel="canonical" href="{}">', canonical)]
    links += [format_html('<link rel="alternate" hreflang="{}" href="{}">', code, absolute_url(request, url))
              for code, url in alternates.items()]
    links.append(format_html('<link rel="alternate" hreflang="x-default" href="{}">',
                             absolute_url(request, unprefixed(path, language))))
    links.append(format_html('<meta property="og:url" content="{}">', canonical))
    links.append(format_html('<meta property="og:locale" content="{}">', OG_LOCALES.get(language, language)))
    links += [format_html('<meta property="og:locale:alternate" content="{}">', OG_LOCALES.get(code, code))
              for code in alternates if code != language]
    return mark_safe("\n  ".join(links))


@register.simple_tag
def jsonld(data) -> SafeString:
    """`data` as <script type="application/ld+json">, escaped like json_script.

    JSON-LD is a data block, which browsers never execute, so the CSP does not govern it (no nonce: see SECURE_CSP).
    """
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    # str.replace, not str.translate with a dict as json_script does: translate looks each character up in the dict,
    # 0.18 ms for a report's 1.4 KB FAQ, the three replaces 0.002 ms (no replacement holds a character replaced).
    for character, escaped in JSON_SCRIPT_ESCAPES:
        text = text.replace(character, escaped)
    return format_html('<script type="application/ld+json">{}</script>', mark_safe(text))


def breadcrumb_list(request: HttpRequest, crumbs) -> dict:
    """schema.org BreadcrumbList of (name, path) pairs, in the order shown on the page."""
    return {
        "@context": "https://schema.org",
        "@type": "BreadcrumbList",
        "itemListElement": [
            {"@type": "ListItem", "position": position, "name": str(name), "item": absolute_url(request, path)}
            for position, (name, path) in enumerate(crumbs, start=1)
        ],
    }


@register.simple_tag(takes_context=True)
def breadcrumbs_jsonld(context, crumbs) -> SafeString:
    return jsonld(breadcrumb_list(context["request"], crumbs))


class QuestionsAndAnswers(HTMLParser):
    """(question, answer) text pairs of a rendered FAQ section: each <h3> and the <p> paragraphs after it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[tuple[str, str]] = []
        self._tag: str | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs) -> None:
        if tag in ("h3", "p"):
            self._tag, self._text = tag, []

    def handle_endtag(self, tag: str) -> None:
        if tag == self._tag:
            self.blocks.append((tag, " ".join("".join(self._text).split())))
            self._tag = None

    def handle_data(self, data: str) -> None:
        if self._tag is not None:
            self._text.append(data)

    def pairs(self) -> list[tuple[str, str]]:
        pairs: list[tuple[str, list[str]]] = []
        for tag, text in self.blocks:
            if tag == "h3":
                pairs.append((text, []))
            elif pairs and text:
                pairs[-1][1].append(text)
        return [(question, " ".join(answer)) for question, answer in pairs if question and answer]


def faq_page(questions_and_answers: list[tuple[str, str]]) -> dict:
    return {
        "@context": "https://schema.org",
        "@type": "FAQPage",
        "mainEntity": [
            {"@type": "Question", "name": question, "acceptedAnswer": {"@type": "Answer", "text": answer}}
            for question, answer in questions_and_answers
        ],
    }


@register.simple_tag(takes_context=True)
def report_faq_jsonld(context, page) -> SafeString:
    """FAQPage for the report's visible Q&A: the FAQ section's HTML (rendered once, sections.render_faq) is read
    back, so the structured data says exactly what the page shows (no second copy of the texts)."""
    if page.estimate is None:
        return mark_safe("")
    faq_html = render_faq(context, page)
    parser = QuestionsAndAnswers()
    parser.feed(faq_html)
    pairs = parser.pairs()
    return jsonld(faq_page(pairs)) if pairs else mark_safe("")



# Search engines show about this many characters of a meta description and cut the rest (Google: ~155-160).
SNIPPET_CHARS = 160


class FirstWithinNode(template.Node):
    def __init__(self, limit: int, alternatives: list[template.NodeList]) -> None:
        self.limit = limit
        self.alternatives = alternatives

    def render(self, context) -> str:
        rendered = ""
        for nodelist in self.alternatives:
            rendered = nodelist.render(context).strip()
            # Counted as the reader sees it: "&amp;" is one character of the snippet.
            if len(html.unescape(rendered)) <= self.limit:
                return rendered
        return rendered  # none is short enough: the last, shortest by construction


@register.tag
def first_within(parser, token) -> FirstWithinNode:
    """``{% first_within 160 %}long{% or %}shorter{% or %}shortest{% endfirst_within %}``: the first alternative
    whose text (entities counted as one character) is at most that long, else the last. For meta descriptions,
    whose length depends on a model's and an accelerator's names and on the figures: the most informative one that
    a search result shows whole."""
    bits = token.split_contents()
    if len(bits) != 2 or not bits[1].isdigit():
        raise template.TemplateSyntaxError(f"{bits[0]} takes one number, the character limit")
    alternatives = []
    while True:
        alternatives.append(parser.parse(("or", "endfirst_within")))
        if parser.next_token().contents == "endfirst_within":
            break
    return FirstWithinNode(int(bits[1]), alternatives)
