"""Rendered pages are cached per catalog version (an admin edit shows at once), per language and per HX-Request,
and revalidate cheaply with ETags."""

import re

import pytest

from catalog.models import Accelerator, QuantFormat

pytestmark = pytest.mark.django_db

REPORT = "/en/report/llama-3-1-8b-instruct/rtx-4090/"


def test_a_repeated_page_comes_from_the_cache(client, django_assert_max_num_queries):
    first = client.get(REPORT)
    with django_assert_max_num_queries(0):  # the catalog version is cached too
        second = client.get(REPORT)
    assert second.content == first.content


def test_an_admin_edit_is_visible_at_once(client):
    before = client.get("/en/hardware/rtx-4090/").content.decode()
    assert "1,008" in before
    accelerator = Accelerator.objects.get(slug="rtx-4090")
    accelerator.bandwidth_gbs = 1234
    accelerator.save()
    after = client.get("/en/hardware/rtx-4090/").content.decode()
    assert "1,234" in after and "1,008" not in after


def test_partial_and_page_are_cached_apart(client):
    page = client.get(REPORT)
    partial = client.get(REPORT, headers={"HX-Request": "true"})
    page_again = client.get(REPORT)
    assert "<html" in page.content.decode() and "<html" not in partial.content.decode()
    assert page_again.content == page.content
    assert "HX-Request" in partial["Vary"]


def test_languages_are_cached_apart(client):
    english = client.get(REPORT).content.decode()
    german = client.get("/de/report/llama-3-1-8b-instruct/rtx-4090/").content.decode()
    assert '<html lang="en">' in english and '<html lang="de">' in german


def test_conditional_get_answers_304(client):
    response = client.get(REPORT)
    assert response.has_header("ETag")
    # Kept, but revalidated on every use: an admin's edit shows at once (README), at the cost of a 304.
    assert response["Cache-Control"] == "no-cache" and not response.has_header("Expires")
    again = client.get(REPORT, headers={"If-None-Match": response["ETag"]})
    assert again.status_code == 304 and not again.content


@pytest.mark.parametrize("encoding", ["", "gzip"])
def test_a_page_rendered_again_has_the_same_etag(client, encoding):
    """Each gunicorn worker renders a page for itself, and renders it again when its cache entry expires: the ETag
    must not change with the render, or a browser's If-None-Match misses (a CSP nonce in the page made each
    render's bytes differ: 304s came from one worker in two)."""
    import gzip

    from django.core.cache import cache

    headers = {"Accept-Encoding": encoding} if encoding else {}
    first = client.get(REPORT, headers=headers)
    cache.clear()
    second = client.get(REPORT, headers=headers)
    body = gzip.decompress if encoding else bytes  # GZipMiddleware pads each compression (BREACH)
    assert first["ETag"] == second["ETag"] and body(first.content) == body(second.content)
    cache.clear()
    assert client.get(REPORT, headers={**headers, "If-None-Match": first["ETag"]}).status_code == 304


def test_invalid_configurations_are_not_cached(client):
    bad = f"{REPORT}?context=99999999"
    assert client.get(bad).status_code == 400
    assert client.get(bad).status_code == 400


def test_the_catalog_version_follows_saves_and_deletes():
    from reports.estimates import catalog_version

    before = catalog_version()
    accelerator = Accelerator.objects.get(slug="rtx-4090")
    accelerator.notes = "edited"
    accelerator.save()
    edited = catalog_version()
    assert edited != before
    accelerator.cloud_offers.first().delete()
    assert catalog_version() != edited


def test_a_quantization_format_edit_reaches_the_configurator(client):
    """The configurator's format choices come from the catalog snapshot: an admin edit of a format shows at once."""
    url = "/en/report/llama-3-1-8b-instruct/rtx-4090/"
    assert client.get(url).status_code == 200
    options = _quant_options(client.get(url).content.decode())
    assert options.index('value="Q8_0"') < options.index('value="IQ1_S"')  # best quality first (forms.quant_choices)
    row = QuantFormat.objects.get(name="IQ1_S")
    row.sort_order = 10_000  # last in the catalog's order: first in the list now
    row.save()
    options = _quant_options(client.get(url).content.decode())
    assert options.index('value="IQ1_S"') < options.index('value="Q8_0"')


def _quant_options(html: str) -> str:
    start = html.index('name="quant"')
    return html[start:html.index("</select>", start)]


def test_shared_report_sections_follow_catalog_edits(client):
    """The links section is shared by every configuration of a report; renaming a model shows at once."""
    from catalog.models import LLMModel

    base = "/en/report/llama-3-1-8b-instruct/rtx-4090/"
    other = LLMModel.objects.exclude(slug="llama-3-1-8b-instruct").order_by("slug").first()
    assert other.name in client.get(base + "?context=4096").content.decode()
    other.name = "Renamed Model 9000"
    other.save()
    html = client.get(base + "?context=16384").content.decode()
    links = html[html.index('id="links"'):]
    assert "Renamed Model 9000" in links


def test_a_shared_section_is_read_from_the_cache_once_a_page(client, monkeypatch):
    """The title and the description appear twice in <head> (<title>, og:title): the second use is the first's
    HTML, not a second cache read."""
    from django.core.cache import cache

    client.get(REPORT + "?context=4096")  # renders the shared sections and stores them
    reads = []
    get = cache.get
    monkeypatch.setattr(cache, "get", lambda key, *args, **kwargs: reads.append(key) or get(key, *args, **kwargs))
    html = client.get(REPORT + "?context=16384").content.decode()
    section_reads = [key for key in reads if key.startswith("report-section")]
    assert section_reads and len(section_reads) == len(set(section_reads))
    assert any(key.endswith("_title.html") for key in section_reads)
    assert html.count(re.search(r"<title>([^<]+)</title>", html).group(1)) >= 2  # <title> and og:title


def test_sections_of_the_visitors_own_hardware_are_not_shared(client):
    """Custom hardware has its specs in the query: its summary (decode speed at the defaults) follows them."""
    path = ("/en/report/llama-3-1-8b-instruct/custom/?name=Box&memory_gb=48&bandwidth_gbs={bandwidth}&fp16_tflops=100"
            "&tdp_w=300&kind=discrete&backend=cuda")

    def summary(bandwidth: int) -> str:
        response = client.get(path.format(bandwidth=bandwidth))
        assert response.status_code == 200
        html = response.content.decode()
        start = html.index('class="lead summary"')
        return html[start:html.index("</p>", start)]

    slow, fast = summary(100), summary(2000)
    assert "tok/s" in slow and slow != fast


def test_pages_are_gzipped_once_before_they_are_cached(client, django_assert_max_num_queries):
    """A client that accepts gzip gets the stored compressed body (the page is compressed before caching, not on
    every hit); one that does not gets the plain HTML. The compressed variant revalidates with its weak ETag."""
    import gzip

    plain = client.get(REPORT)
    zipped = client.get(REPORT, headers={"Accept-Encoding": "gzip, deflate, br"})
    assert "Content-Encoding" not in plain and zipped["Content-Encoding"] == "gzip"
    assert "Accept-Encoding" in zipped["Vary"]
    assert gzip.decompress(zipped.content) == plain.content
    assert len(zipped.content) < len(plain.content) / 3
    with django_assert_max_num_queries(0):
        again = client.get(REPORT, headers={"Accept-Encoding": "gzip, deflate, br"})
    assert again.content == zipped.content  # the stored bytes, not a new compression
    assert zipped["ETag"].startswith('W/"')  # GZipMiddleware weakens the ETag of the content it compressed
    revalidated = client.get(REPORT, headers={"Accept-Encoding": "gzip, deflate, br", "If-None-Match": zipped["ETag"]})
    assert revalidated.status_code == 304



def _matrix_row(html: str, quant: str) -> str:
    matrix = html[html.index('id="matrix"'):]
    start = matrix.index(f'<th scope="row">{quant}<')  # its quality label follows the name
    return matrix[start:matrix.index("</tr>", start)]


def _cost_per_mtok(html: str) -> str:
    start = html.index("Cost per 1M tokens")
    return html[start:html.index("</dd>", html.index("</dd>", start) + 1)]


def test_catalog_wide_searches_follow_catalog_edits(client):
    """The matrix's smallest fitting accelerator and the cheapest cloud offer do not depend on the report's own
    accelerator: they are memoized per catalog snapshot and shared by the model's reports on every accelerator. An
    admin edit shows on the next report, whichever accelerator it is for."""
    from catalog.models import CloudOffer

    query = "?quant=Q4_K_M&context=8192"
    first = client.get("/en/report/llama-3-1-8b-instruct/rtx-4090/" + query).content.decode()
    smallest = Accelerator.objects.get(slug="rtx-3060-12gb")  # the catalog's smallest GPU holds 8B at Q4_K_M
    assert smallest.name in _matrix_row(first, "Q4_K_M")
    smallest.memory_gb = 1
    smallest.save()
    CloudOffer.objects.filter(is_active=True).update(hourly_usd=999)
    second = client.get("/en/report/llama-3-1-8b-instruct/h100-80gb-sxm/" + query).content.decode()
    assert smallest.name not in _matrix_row(second, "Q4_K_M")
    assert "$999.00/h" in _cost_per_mtok(second) and "$999.00/h" not in _cost_per_mtok(first)


def test_the_neighbour_links_are_shared_per_state_and_never_across_states(client):
    """The ~140 neighbour links keep the visitor's state, so the links section is cached per chosen state: the same
    state reuses it (page and htmx answer alike), another state never gets its links."""
    from django.core.cache import cache

    def links(query: str, htmx: bool = False) -> str:
        body = client.get(f"{REPORT}?{query}&part=details" if htmx else f"{REPORT}?{query}",
                          headers={"HX-Request": "true"} if htmx else {}).content.decode()
        start = body.index('id="links"')
        return body[start:body.index("</section>", start)]

    cache.clear()
    long_context = links("context=32768")
    assert "context=32768" in long_context and "context=16384" not in long_context
    shorter = links("context=16384")
    assert "context=16384" in shorter and "context=32768" not in shorter
    assert "context=32768" in links("context=32768&hours=4", htmx=True)
    assert links("context=32768") == long_context


@pytest.mark.parametrize("path", ["/sitemap.xml", "/sitemap-models.xml", REPORT])
def test_pages_are_stored_in_the_page_cache_and_revalidated_by_browsers(client, path):
    """Django stores no response marked no-cache, and a TemplateResponse (the sitemaps) is stored once rendered:
    marking it before that kept every sitemap out of the cache (bench/web.py: 179 req/s, was 1,148)."""
    from django.core.cache import cache

    cache.clear()
    response = client.get(path)
    assert response.status_code == 200 and response["Cache-Control"] == "no-cache"
    stored = [key for key in cache._cache if "cache_page" in key]  # locmem's own dict (the test settings' cache)
    assert stored, path
