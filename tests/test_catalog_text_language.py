"""Free text from the catalog (sources, price notes) is kept in English in the admin; on a German page it is
marked lang="en", so screen readers and translation tools read it as English, not as German."""

import re

import pytest

pytestmark = pytest.mark.django_db


def test_german_hardware_page_marks_english_catalog_text(client):
    html = client.get("/de/hardware/rtx-4090/").content.decode()
    assert '<html lang="de"' in html
    assert re.search(r'<span lang="en">launch MSRP</span>', html)
    sources = re.search(r'<ul class="sources" lang="en">(.*?)</ul>', html, re.S)
    assert sources and "gfxspeak.com" in sources.group(1)


def _cloud_section(html):
    return re.search(r'<section class="card" id="cloud".*?</section>', html, re.S).group(0)


def test_german_report_keeps_the_english_price_doubt_out_of_its_german_sentence(client):
    """The translated sentence is the statement; the catalog's English reason sits behind a collapsed <details>,
    marked lang="en", instead of running on after the German sentence in the same paragraph."""
    cloud = _cloud_section(client.get("/de/report/glm-5/rtx-5090/").content.decode())
    statement = re.search(r'<p class="muted">(Vast\.ai, 8 × A100 80GB SXM zu 3,54\s\$/Std\.:.*?)</p>', cloud, re.S)
    assert statement and "GPU-hour" not in statement.group(1) and 'lang="en"' not in statement.group(1)
    details = re.search(r'<details class="muted catalog-prose"><summary>(.*?)</summary><p lang="en">(.*?)</p>'
                        r'</details>', cloud[statement.end():], re.S)
    assert details and "$0.44 per GPU-hour" in details.group(2)
    assert "<details open" not in cloud


def test_german_report_names_the_english_reason_in_german(client):
    cloud = _cloud_section(client.get("/de/report/glm-5/rtx-5090/").content.decode())
    assert "<summary>Begründung (englisch)</summary>" in cloud


def test_english_report_keeps_the_price_doubt_inline(client):
    cloud = _cloud_section(client.get("/en/report/glm-5/rtx-5090/").content.decode())
    assert re.search(r'<p class="muted">Vast\.ai, 8 × A100 80GB SXM at \$3\.54/h: [^<]*<span lang="en">[^<]*'
                     r'\$0\.44 per GPU-hour[^<]*</span></p>', cloud)
    assert "catalog-prose" not in cloud
