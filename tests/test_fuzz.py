"""Bad input never yields a 5xx: hypothesis throws random and hostile query strings and slugs at every public page.

Targets: the report page (full and its htmx partial), the model page, the hardware page, the search endpoint and
unknown URLs, through Django's test client (the whole middleware stack, no live server). The test client re-raises
a view's exception, so a 5xx fails with its traceback and hypothesis' shrunk example. Inputs: integers far outside
every range, negative numbers, floats and their NaN/inf spellings, unicode digits, 10,000-character strings, unicode
text, malformed percent-encoding, repeated keys, empty values, SQL/HTML/template injection and path traversal.

Each response must be 200, 301, 302, 400 or 404, and must not reflect a `<script>` the input carried: every
`<script` tag in the page is one the templates wrote (with src, nonce or type), and no input containing `<script`
appears verbatim. 2,050 cases in all (hypothesis' example database is off, so every run draws afresh); rendering
the pages takes most of the time, about a minute on 2 cores, so the expensive pages get fewer examples.
"""

from __future__ import annotations

import re
from functools import cache
from urllib.parse import quote

import pytest
from django.http import HttpResponse
from django.test import Client
from django.urls import NoReverseMatch, reverse
from django.utils import translation
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from catalog.models import Accelerator, LLMModel

pytestmark = pytest.mark.django_db

ALLOWED_STATUSES = {200, 301, 302, 400, 404}
LANGUAGES = ("en", "de")
FUZZ = settings(deadline=None, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                       HealthCheck.data_too_large])

# Query keys the pages read (reports/forms.py, reports/pages.py table state and search form), plus strangers.
PAGE_KEYS = ("quant", "context", "gpus", "batch", "kv_dtype", "engine", "offload", "gpu_memory_utilization", "hours",
             "budget", "kwh", "sort", "order", "vendor", "fits", "model", "hardware", "q", "page", "language", "next",
             "format")

SCRIPT = "<script>alert(1)</script>"
LONG = 10_000
HOSTILE_VALUES = (
    "", " ", "-1", "0", "-0", "1e308", "1e309", "-1e309", "1e-400", "9" * 400, "-" + "9" * 400, "NaN", "nan",
    "-nan", "inf", "-inf", "Infinity", "-Infinity", "0x10", "1_000", "1,5", "٣٢٧٦٨", "８１９２", "2147483648",
    "9223372036854775808", "-9223372036854775809", "4.5e3", ".5", "5.", "+8", " 8 ", "\t8\n",
    "8192.", "32768.0", "08192", "2.0",  # valid whole numbers as the integer fields read them, not as int() does
    "A" * LONG, "9" * LONG, "ü" * LONG, "😀" * 2_500, "%" * LONG,
    "' OR '1'='1", "1; DROP TABLE catalog_llmmodel; --", "\" OR \"\"=\"", "1 UNION SELECT password FROM auth_user",
    SCRIPT, f"\"><{SCRIPT[1:]}", f"'>{SCRIPT}", f"</textarea>{SCRIPT}", "<img src=x onerror=alert(1)>",
    "javascript:alert(1)", "{{ 7|add:7 }}", "{% debug %}", "${jndi:ldap://example.invalid/a}",
    "../../../../etc/passwd", "..%2f..%2fetc%2fpasswd", "%2e%2e%2f", "\x00", "a\x00b", "\r\nSet-Cookie: x=1",
    "\u202e\u0000\ufeff", "\ud7ff", "Q4_K_M\x00", "vllm ", "LLAMA.CPP", "auto\n",
)
# Raw query-string fragments, sent without encoding: malformed escapes, separators, invalid UTF-8 escapes.
RAW_FRAGMENTS = ("%", "%%", "%zz", "%ff%fe", "%c3%28", "%ed%a0%80", "%00", "&&&", "===", "a=1=2", ";", "+",
                 "context[]=1", "gpus=1&gpus=2&gpus=3", "=empty-key", "&=&", "%26%3d")
HOSTILE_SLUGS = ("", "a", "-", "_", "0", "a" * LONG, "x" * 300, "glm-4-5-", "GLM-4-5", "rtx-4090-", "h100 80gb",
                 "ü-modell", "模型", "..", "%2e%2e", "../../etc/passwd", "model/../../admin", SCRIPT, "' OR 1=1 --",
                 "null", "None", "undefined", "%00", "\x00", "a\nb", "9" * 400)


@cache
def catalog_slugs() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The seeded catalog's model and accelerator slugs (the test database holds the seed catalog)."""
    models = tuple(LLMModel.objects.order_by("slug").values_list("slug", flat=True))
    hardware = tuple(Accelerator.objects.order_by("slug").values_list("slug", flat=True))
    return models, hardware


def page_path(name: str, language: str, *slug_names: str) -> str | None:
    """The page's URL in LANGUAGE with a placeholder per slug (None when this checkout has no such page)."""
    try:
        with translation.override(language):
            return reverse(name, kwargs={key: placeholder(key) for key in slug_names})
    except NoReverseMatch:
        return None


def placeholder(slug_name: str) -> str:
    return "SLUG-" + slug_name.replace("_", "-")


def fill(path: str, **slugs: str) -> str:
    for key, slug in slugs.items():
        path = path.replace(placeholder(key), slug, 1)
    return path


# --- strategies -----------------------------------------------------------------------------------------------------

numbers = st.one_of(
    st.integers(min_value=-(10**40), max_value=10**40).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.floats(allow_nan=True, allow_infinity=True).map(str),
)
values = st.one_of(
    st.sampled_from(HOSTILE_VALUES),
    numbers,
    st.text(max_size=40),
    st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=20).map(lambda text: text * 500),
)
keys = st.one_of(st.sampled_from(PAGE_KEYS), st.sampled_from(HOSTILE_VALUES[:40]), st.text(max_size=12))


@st.composite
def query_strings(draw) -> tuple[str, list[str]]:
    """A query string and the decoded inputs it carries. Pairs are percent-encoded (UTF-8), sent raw, or
    replaced by a raw fragment; keys repeat freely."""
    pairs = draw(st.lists(st.tuples(keys, values), max_size=8))
    parts, inputs = [], []
    for key, value in pairs:
        style = draw(st.sampled_from(("encoded", "encoded", "raw", "fragment")))
        if style == "fragment":
            parts.append(draw(st.sampled_from(RAW_FRAGMENTS)))
            continue
        inputs += [key, value]
        if style == "encoded":
            parts.append(f"{quote(key, safe='')}={quote(value, safe='')}")
        else:  # raw: whatever a client could put on the wire unescaped (a '#' would start the fragment)
            parts.append(f"{key}={value}".replace("#", "%23"))
    return "&".join(parts), inputs


def slugs(known: tuple[str, ...]) -> st.SearchStrategy[str]:
    """A third catalog slugs (upper-cased in another sixth), so the query string often reaches the page; the rest
    hostile or unknown."""
    return st.one_of(
        st.sampled_from(known), st.sampled_from(known),
        st.sampled_from(HOSTILE_SLUGS),
        st.from_regex(r"[-a-zA-Z0-9_]{1,80}", fullmatch=True),
        st.sampled_from(known).map(lambda slug: slug.upper()),
        st.text(max_size=30),
    )


def in_path(slug: str, encoding: str) -> str:
    """A slug as a path segment: percent-encoded, or raw (a raw '/', '?' or '#' changes the URL: also hostile)."""
    return quote(slug, safe="") if encoding == "encoded" else slug


# --- the checks -----------------------------------------------------------------------------------------------------

TEMPLATE_SCRIPT = re.compile(r"<script\s+(src|nonce|type)=\"", re.IGNORECASE)
ANY_SCRIPT = re.compile(r"<script(?=[\s>/])", re.IGNORECASE)


def assert_safe_response(client: Client, url: str, inputs: list[str], htmx: bool = False) -> None:
    headers = {"HX-Request": "true"} if htmx else {}
    response = client.get(url, headers=headers)
    assert response.status_code in ALLOWED_STATUSES, f"GET {url!r} → {response.status_code}"
    body = response.content.decode("utf-8", errors="replace")
    for match in ANY_SCRIPT.finditer(body):
        assert TEMPLATE_SCRIPT.match(body, match.start()), (
            f"GET {url!r}: a <script> the templates did not write: {body[match.start():match.start() + 120]!r}")
    for value in inputs:
        if "<script" in value.lower():
            assert value not in body, f"GET {url!r} reflects {value[:80]!r} unescaped"


@pytest.fixture
def client() -> Client:
    # raise_request_exception: a view's exception fails the test with its traceback instead of a bare 500.
    return Client(raise_request_exception=True)


# --- the pages ------------------------------------------------------------------------------------------------------

@settings(FUZZ, max_examples=500)
@given(data=st.data(), query=query_strings(), language=st.sampled_from(LANGUAGES), htmx=st.booleans())
def test_report_page_and_partial(client, data, query, language, htmx):
    models, hardware = catalog_slugs()
    model_slug, hardware_slug = data.draw(slugs(models)), data.draw(slugs(hardware))
    encoding = data.draw(st.sampled_from(("encoded", "raw")))
    path = fill(page_path("reports:report", language, "model_slug", "hardware_slug"),
                model_slug=in_path(model_slug, encoding), hardware_slug=in_path(hardware_slug, encoding))
    query_string, inputs = query
    assert_safe_response(client, f"{path}?{query_string}", inputs + [model_slug, hardware_slug], htmx=htmx)


@settings(FUZZ, max_examples=250)
@given(query=query_strings(), language=st.sampled_from(LANGUAGES), htmx=st.booleans(), data=st.data())
def test_report_page_of_a_catalog_pair(client, query, language, htmx, data):
    # Only the query string is hostile: every case reaches the configurator form and, when valid, the engine.
    models, hardware = catalog_slugs()
    path = fill(page_path("reports:report", language, "model_slug", "hardware_slug"),
                model_slug=data.draw(st.sampled_from(models)), hardware_slug=data.draw(st.sampled_from(hardware)))
    query_string, inputs = query
    assert_safe_response(client, f"{path}?{query_string}", inputs, htmx=htmx)


@settings(FUZZ, max_examples=100)
@given(data=st.data(), query=query_strings(), language=st.sampled_from(LANGUAGES), htmx=st.booleans())
def test_model_page(client, data, query, language, htmx):
    template = page_path("reports:model", language, "model_slug")
    if template is None:
        pytest.skip("no model page (reports:model) in this checkout")
    slug = data.draw(slugs(catalog_slugs()[0]))
    path = fill(template, model_slug=in_path(slug, data.draw(st.sampled_from(("encoded", "raw")))))
    query_string, inputs = query
    assert_safe_response(client, f"{path}?{query_string}", inputs + [slug], htmx=htmx)


@settings(FUZZ, max_examples=80)
@given(data=st.data(), query=query_strings(), language=st.sampled_from(LANGUAGES), htmx=st.booleans())
def test_hardware_page(client, data, query, language, htmx):
    template = page_path("reports:hardware", language, "hardware_slug")
    if template is None:
        pytest.skip("no hardware page (reports:hardware) in this checkout")
    slug = data.draw(slugs(catalog_slugs()[1]))
    path = fill(template, hardware_slug=in_path(slug, data.draw(st.sampled_from(("encoded", "raw")))))
    query_string, inputs = query
    assert_safe_response(client, f"{path}?{query_string}", inputs + [slug], htmx=htmx)


@settings(FUZZ, max_examples=620)
@given(query=query_strings(), language=st.sampled_from(LANGUAGES), htmx=st.booleans())
def test_search(client, query, language, htmx):
    path = page_path("reports:search", language)
    if path is None:
        pytest.skip("no search endpoint (reports:search) in this checkout")
    query_string, inputs = query
    assert_safe_response(client, f"{path}?{query_string}", inputs, htmx=htmx)


@settings(FUZZ, max_examples=500)
@given(segments=st.lists(st.one_of(st.sampled_from(HOSTILE_SLUGS), st.text(max_size=30)), min_size=1, max_size=4),
       prefix=st.sampled_from(("", "/en", "/de", "/fr", "/en/model", "/de/hardware", "/en/report/glm-4-5")),
       query=query_strings())
def test_unknown_urls(client, segments, prefix, query):
    path = prefix + "/" + "/".join(quote(segment, safe="") for segment in segments) + "/"
    query_string, inputs = query
    assert_safe_response(client, f"{path}?{query_string}", inputs + segments)


# --- negative controls: the checks above can fail -------------------------------------------------------------------

class StubClient:
    """Answers every GET with one canned response, to show what assert_safe_response rejects."""

    def __init__(self, body: str, status: int = 200):
        self.response = HttpResponse(body, status=status)

    def get(self, url, headers=None):
        return self.response


@pytest.mark.parametrize("body, status", [
    ("<p>No model matches “<script>alert(1)</script>”.</p>", 200),  # reflected unescaped
    ("<input value=\"\"><script>alert(1)</script>\">", 400),
    ('<script nonce="x">alert(1)</script><p><script >1</script></p>', 200),  # a tag no template writes
    ("<p>fine</p>", 500),
    ("<p>fine</p>", 403),
])
def test_the_checks_reject_reflected_scripts_and_unexpected_statuses(body, status):
    with pytest.raises(AssertionError):
        assert_safe_response(StubClient(body, status), "/en/search/?model=x", [SCRIPT])


def test_the_checks_accept_escaped_input_and_the_templates_scripts():
    body = ('<script src="/static/js/report.js" defer></script><script nonce="abc">init()</script>'
            "<p>No model matches “&lt;script&gt;alert(1)&lt;/script&gt;”.</p>")
    assert_safe_response(StubClient(body, 404), "/en/search/?model=x", [SCRIPT])
