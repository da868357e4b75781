"""Search presence: canonical and hreflang links, titles and descriptions, Open Graph, JSON-LD, sitemap, robots."""

import datetime as dt
import json
import re
import struct
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from django.conf import settings
from django.template import Context, Template
from django.utils import timezone

from catalog.models import Accelerator, LLMModel
from reports.estimates import VERSIONED_MODELS
from reports.templatetags.seo import QuestionsAndAnswers

pytestmark = pytest.mark.django_db

REPORT = "/report/glm-4-5/instinct-mi325x-256gb/"
PAGES = ["/", "/model/glm-4-5/", "/hardware/rtx-4090/", REPORT]
SITEMAP = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
XHTML = "{http://www.w3.org/1999/xhtml}"


def head_links(body: str) -> dict[str, str]:
    return dict(re.findall(r'<link rel="alternate" hreflang="([^"]+)" href="([^"]+)">', body))


def meta(body: str, name: str) -> str:
    match = re.search(rf'<meta (?:name|property)="{re.escape(name)}" content="([^"]*)">', body)
    return match.group(1) if match else ""


def jsonld_blocks(response) -> list[dict]:
    body = response.content.decode()
    blocks = re.findall(r'<script type="application/ld\+json">(.*?)</script>', body, re.S)
    assert blocks
    return [json.loads(text) for text in blocks]


@pytest.mark.parametrize("lang", ["de", "en"])
@pytest.mark.parametrize("page", PAGES)
def test_every_page_has_canonical_hreflang_and_open_graph(client, lang, page):
    body = client.get(f"/{lang}{page}").content.decode()
    canonical = re.search(r'<link rel="canonical" href="([^"]+)">', body).group(1)
    assert canonical == f"http://testserver/{lang}{page}"
    assert head_links(body) == {"de": f"http://testserver/de{page}", "en": f"http://testserver/en{page}",
                                "x-default": f"http://testserver{page}"}
    assert meta(body, "og:url") == canonical
    assert meta(body, "og:locale") == {"de": "de_DE", "en": "en_US"}[lang]
    assert meta(body, "og:title") and meta(body, "og:title") == re.search(r"<title>(.*?)</title>", body).group(1)
    assert meta(body, "og:description") == meta(body, "description") != ""
    # Open Graph's required og:image: absolute, in the page's language, a 1200 × 630 PNG that exists.
    image = meta(body, "og:image")
    assert image.startswith("http://testserver/static/img/og-card-" + lang)
    assert (meta(body, "og:image:width"), meta(body, "og:image:height")) == ("1200", "630")
    assert meta(body, "og:image:alt")
    png = (Path(settings.BASE_DIR) / "static" / "img" / f"og-card-{lang}.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", png[16:24]) == (1200, 630)


def test_configurator_variants_point_to_the_base_report(client):
    body = client.get(f"/en{REPORT}?context=32768&gpus=2&quant=Q8_0").content.decode()
    assert '<link rel="canonical" href="http://testserver/en/report/glm-4-5/instinct-mi325x-256gb/">' in body
    assert head_links(body)["de"] == "http://testserver/de/report/glm-4-5/instinct-mi325x-256gb/"


def test_table_states_point_to_the_base_page(client):
    body = client.get("/de/model/glm-4-5/?sort=decode&vendor=AMD").content.decode()
    assert '<link rel="canonical" href="http://testserver/de/model/glm-4-5/">' in body


@pytest.mark.parametrize("accept, lang", [("de-DE,de;q=0.9", "de"), ("en-US", "en")])
def test_x_default_redirects_by_accept_language(client, accept, lang):
    for page in PAGES[1:]:
        response = client.get(page, headers={"Accept-Language": accept})
        assert response.status_code == 302 and response["Location"] == f"/{lang}{page}"


def test_titles_and_descriptions_are_unique_and_in_the_pages_language(client):
    titles, descriptions = set(), set()
    for lang in ("de", "en"):
        for page in PAGES:
            body = client.get(f"/{lang}{page}").content.decode()
            titles.add(re.search(r"<title>(.*?)</title>", body).group(1))
            descriptions.add(meta(body, "description"))
    assert len(titles) == len(descriptions) == 2 * len(PAGES)
    german = client.get(f"/de{REPORT}").content.decode()
    assert "GLM-4.5 (355B-A32B) auf Instinct MI325X 256GB" in re.search(r"<title>(.*?)</title>", german).group(1)
    assert re.search(r"\d+,\d\d GiB", meta(german, "description"))  # German decimal comma


def test_report_has_breadcrumbs_and_faq_json_ld_matching_the_visible_faq(client):
    response = client.get(f"/de{REPORT}")
    blocks = {block["@type"]: block for block in jsonld_blocks(response)}
    crumbs = blocks["BreadcrumbList"]["itemListElement"]
    assert [item["item"] for item in crumbs] == ["http://testserver/de/", "http://testserver/de/model/glm-4-5/",
                                                 f"http://testserver/de{REPORT}"]
    assert [item["position"] for item in crumbs] == [1, 2, 3]
    body = response.content.decode()
    faq_html = body.split('id="faq"', 1)[1].split("</section>", 1)[0]
    visible = [" ".join(re.sub(r"<[^>]+>", "", q).split()) for q in re.findall(r"<h3>(.*?)</h3>", faq_html, re.S)]
    questions = blocks["FAQPage"]["mainEntity"]
    assert [q["name"] for q in questions] == visible and len(visible) >= 3
    # The answers carry the engine's numbers in the page's language (GLM-4.5 KV at 32K: 11,50 GiB).
    assert all(q["acceptedAnswer"]["text"] for q in questions)
    assert "GiB" in questions[0]["acceptedAnswer"]["text"] and "," in questions[0]["acceptedAnswer"]["text"]


@pytest.mark.parametrize("page, names", [("/model/glm-4-5/", ["Home", "GLM-4.5 (355B-A32B)"]),
                                         ("/hardware/rtx-4090/", ["Home", "RTX 4090"]),
                                         ("/methodology/", ["Home", "Methodology"])])  # it showed them only
def test_model_and_hardware_pages_have_breadcrumbs(client, page, names):
    blocks = jsonld_blocks(client.get(f"/en{page}"))
    assert [item["name"] for item in blocks[0]["itemListElement"]] == names


def test_jsonld_tag_escapes_like_json_script():
    data = {"name": "</script><script>alert(1)</script> & more"}
    html = Template("{% load seo %}{% jsonld data %}").render(Context({"data": data}))
    assert html.startswith('<script type="application/ld+json">')
    inner = html.removeprefix('<script type="application/ld+json">').removesuffix("</script>")
    assert "<" not in inner and ">" not in inner and "&" not in inner
    assert "\\u003C/script\\u003E" in inner and json.loads(inner) == data
    # The same text as json_script's str.translate escaping, non-ASCII text (kept as it is) included.
    data = {"name": "Größe <8 GiB> & „mehr“", "n": [1, "a&b"]}
    inner = Template("{% load seo %}{% jsonld data %}").render(Context({"data": data})).removeprefix(
        '<script type="application/ld+json">').removesuffix("</script>")
    escapes = {ord("<"): "\\u003C", ord(">"): "\\u003E", ord("&"): "\\u0026"}
    assert inner == json.dumps(data, ensure_ascii=False, separators=(",", ":")).translate(escapes)
    assert "Größe" in inner


def test_faq_parser_pairs_each_question_with_its_paragraphs():
    parser = QuestionsAndAnswers()
    parser.feed("<h2>FAQ</h2><h3>Q1?</h3><p>A <b>one</b>\n  more.</p><p>And <span>x</span></p><h3>Q2?</h3><p>Two.</p>"
                "<h3>No answer</h3>")
    assert parser.pairs() == [("Q1?", "A one more. And x"), ("Q2?", "Two.")]


# ---- sitemap and robots.txt ------------------------------------------------------------------------------------

def sitemap_urls(client, url: str) -> list[ET.Element]:
    response = client.get(url)
    assert response.status_code == 200 and response["Content-Type"].startswith("application/xml")
    return ET.fromstring(response.content).findall(f"{SITEMAP}url")


def test_sitemap_index_lists_every_section_with_lastmod(client):
    response = client.get("/sitemap.xml")
    assert response.status_code == 200
    root = ET.fromstring(response.content)
    entries = {item.findtext(f"{SITEMAP}loc"): item.findtext(f"{SITEMAP}lastmod")
               for item in root.findall(f"{SITEMAP}sitemap")}
    for section in ("reports", "models", "hardware", "pages"):
        assert f"http://testserver/sitemap-{section}.xml" in entries
    assert "http://testserver/sitemap-reports.xml?p=2" in entries  # 83 × 49 × 2 URLs over several pages
    assert all(entries.values())


def test_every_report_is_in_the_sitemap_in_both_languages_with_alternates(client):
    """Every sizable pair: the 9 models without layer shapes (or a sourced family member's) on the 4 accelerators llama.cpp has no backend for
    are "not sizable here" pages, marked noindex and left out."""
    models, accelerators = LLMModel.objects.count(), Accelerator.objects.count()
    index = ET.fromstring(client.get("/sitemap.xml").content)
    pages = [item.findtext(f"{SITEMAP}loc").removeprefix("http://testserver")
             for item in index.findall(f"{SITEMAP}sitemap") if "sitemap-reports" in item.findtext(f"{SITEMAP}loc")]
    urls = [url for page in pages for url in sitemap_urls(client, page)]
    locations = {url.findtext(f"{SITEMAP}loc") for url in urls}
    assert len(locations) == len(urls) == 2 * (models * accelerators - 9 * 4)
    assert "http://testserver/en/report/cohere-command-a-111b/gaudi-3-128gb/" not in locations
    assert "http://testserver/en/report/cohere-command-a-111b/rtx-4090/" in locations
    assert "http://testserver/en/report/llama-3-1-8b-instruct/gaudi-3-128gb/" in locations
    unsizable = client.get("/en/report/cohere-command-a-111b/gaudi-3-128gb/").content.decode()
    assert '<meta name="robots" content="noindex, follow">' in unsizable
    assert "noindex" not in client.get("/en/report/llama-3-1-8b-instruct/gaudi-3-128gb/").content.decode()
    assert "http://testserver/de/report/glm-4-5/instinct-mi325x-256gb/" in locations
    assert "http://testserver/en/report/glm-4-5/instinct-mi325x-256gb/" in locations
    sample = next(url for url in urls if url.findtext(f"{SITEMAP}loc").endswith("/de/report/glm-4-5/rtx-4090/"))
    alternates = {link.get("hreflang"): link.get("href") for link in sample.findall(f"{XHTML}link")}
    assert alternates == {"de": "http://testserver/de/report/glm-4-5/rtx-4090/",
                          "en": "http://testserver/en/report/glm-4-5/rtx-4090/",
                          "x-default": "http://testserver/report/glm-4-5/rtx-4090/"}
    assert sample.findtext(f"{SITEMAP}lastmod")


@pytest.mark.parametrize("section, count", [("models", LLMModel), ("hardware", Accelerator)])
def test_model_and_hardware_sections_list_both_languages(client, section, count):
    urls = sitemap_urls(client, f"/sitemap-{section}.xml")
    assert len(urls) == 2 * count.objects.count()
    locations = [url.findtext(f"{SITEMAP}loc") for url in urls]
    assert any("/de/" in loc for loc in locations) and any("/en/" in loc for loc in locations)
    assert all(url.findtext(f"{SITEMAP}lastmod") for url in urls)


def test_static_section_lists_the_home_page(client):
    locations = {url.findtext(f"{SITEMAP}loc") for url in sitemap_urls(client, "/sitemap-pages.xml")}
    assert {"http://testserver/de/", "http://testserver/en/"} <= locations


def test_lastmod_follows_catalog_changes_through_the_cache(client):
    def lastmod_of(slug: str) -> str:
        for url in sitemap_urls(client, "/sitemap-hardware.xml"):
            if url.findtext(f"{SITEMAP}loc") == f"http://testserver/en/hardware/{slug}/":
                return url.findtext(f"{SITEMAP}lastmod")
        raise AssertionError(slug)

    for table in VERSIONED_MODELS:  # the catalog as it was last year (update() leaves auto_now alone)
        table.objects.update(updated_at=dt.datetime(2025, 6, 1, tzinfo=dt.UTC))
    before = lastmod_of("rtx-4090")
    assert before == "2025-06-01"
    model = LLMModel.objects.get(slug="llama-3-1-8b-instruct")
    model.save()  # an admin edit: every hardware page lists this model, so their lastmod moves
    assert lastmod_of("rtx-4090") == timezone.now().date().isoformat()


def test_robots_txt_points_to_the_sitemap_index(client):
    response = client.get("/robots.txt")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/plain")
    lines = response.content.decode().splitlines()
    assert "Sitemap: http://testserver/sitemap.xml" in lines
    assert "User-agent: *" in lines and "Disallow: /admin/" in lines
    # The search pages are noindex, follow: a crawler must be allowed to read that.
    assert not any("search" in line for line in lines)
    search = client.get("/de/search/?q=llama").content.decode()
    assert '<meta name="robots" content="noindex, follow">' in search


def test_unknown_sitemap_section_is_404(client):
    assert client.get("/sitemap-nope.xml").status_code == 404
    assert client.get("/sitemap-reports.xml?p=999").status_code == 404


TITLE_LIMIT = 65  # about what a search result shows of a title (the report's _head_title.html)


@pytest.mark.parametrize("lang", ["en", "de"])
def test_model_and_hardware_titles_stay_within_a_search_results_width_over_the_catalog(lang):
    """Every model and accelerator of the catalog (eight of an accelerator too), in both languages: the <title> is at
    most 65 characters and unique; "Llama 4 Maverick 17B-128E (400B) — VRAM requirements, KV cache & GPU
    recommendations" (84) gave way to a shorter form that still names the model."""
    from types import SimpleNamespace

    from django.template.loader import get_template
    from django.utils import translation

    model_title = get_template("reports/model.html#head_title")
    hardware_title = get_template("reports/hardware.html#head_title")
    titles = []
    with translation.override(lang):
        for row in LLMModel.objects.all():
            titles.append(model_title.render({"page": SimpleNamespace(model=SimpleNamespace(name=row.name))}).strip())
        for accelerator in Accelerator.objects.all():
            for gpus in (1, 8):
                page = SimpleNamespace(hardware=SimpleNamespace(name=accelerator.name), state=SimpleNamespace(gpus=gpus))
                titles.append(hardware_title.render({"page": page}).strip())
    import html as html_module
    too_long = [title for title in map(html_module.unescape, titles) if len(title) > TITLE_LIMIT]
    assert not too_long, too_long
    assert len(set(titles)) == len(titles)
    assert any("Llama 4 Maverick 17B-128E (400B) —" in title for title in titles)


@pytest.mark.parametrize("lang", ["en", "de"])
def test_the_methodology_title_is_short(client, lang):
    body = client.get(f"/{lang}/methodology/").content.decode()
    title = re.search(r"<title>(.*?)</title>", body, re.S).group(1).strip()
    assert len(title) <= TITLE_LIMIT and "LLM Sizer" in title


@pytest.mark.parametrize("path, indexed", [
    ("/en/methodology/", True), ("/en/config/", True), ("/en/search/?q=llama", False),
    ("/en/compare/qwen3-8b/", False), ("/en/compare/qwen3-8b/?hw0=rtx-4090", False),
    ("/en/report/qwen3-8b/custom/", False),
    ("/en/report/qwen3-8b/custom/?memory_gb=24&bandwidth_gbs=1000&kind=discrete&backend=cuda", False),
])
def test_secondary_pages_have_their_own_open_graph_and_thin_ones_are_not_indexed(client, path, indexed):
    """og:title and og:description of their own (they read "LLM Sizer" and the site's default); the compare picker
    and the visitor's own hardware are "noindex, follow", as the search pages are."""
    body = client.get(path).content.decode()
    title = re.search(r"<title>(.*?)</title>", body, re.S).group(1).strip()
    assert meta(body, "og:title") == title != "LLM Sizer"
    assert meta(body, "og:description") == meta(body, "description")
    assert meta(body, "description") != "How much memory an open-weight LLM needs, how fast it runs on your hardware, what it costs and how to launch it."
    assert ('<meta name="robots" content="noindex, follow">' in body) is not indexed
