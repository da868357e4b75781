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
