"""Billions follow the page's language: English "8.03 B", German "8,03 Mrd." (Milliarden; "B" is not German).
The unit comes from CLDR's short compact pattern for 10^9 through Babel, in reports/formatting.py, the one place
that formats figures; the template filter |billions and every page use it."""

import re

import pytest

from reports import formatting

# A figure followed by a bare "B" that is not bytes ("2 B ×", "B/token" and "B per" are bytes in formulas).
BARE_B = re.compile(r"\d[\s\u00a0\u202f]B(?![/\w])(?! ×)(?! per)(?! pro)")


def test_the_unit_of_billions_follows_the_language():
    assert formatting.billions(8.03e9, "en") == "8.03 B"
    assert formatting.billions(8.03e9, "de") == "8,03 Mrd."
    assert formatting.billions(744e9, "de") == "744 Mrd."
    assert formatting.billions(2779e9, "de") == "2.779 Mrd."
    assert formatting.billions(32.8e9, "en") == "32.8 B"
    assert formatting.billions(None, "de") is None


@pytest.mark.django_db
@pytest.mark.parametrize("path, german", [
    ("/report/glm-5/rtx-5090/", ("744 Mrd. gesamt, 41,8 Mrd. aktiv", "Q4_K_M: 744 Mrd. Parameter",
                                  "41,8 Mrd. aktive Parameter", "Modell 744 Mrd. / 41,8 Mrd. aktiv")),
    ("/model/glm-5/", ("744 Mrd. gesamt, 41,8 Mrd. aktiv",)),
    ("/hardware/rtx-5090/", ('<td class="num">32,8 Mrd.</td>', '<td class="num">8,03 Mrd.</td>')),
    ("/model/llama-3-1-8b-instruct/", ('content="Llama 3.1 8B Instruct (8,03 Mrd. Parameter',)),
])
def test_german_pages_write_billions_as_mrd(client, path, german):
    html = client.get("/de" + path).content.decode()
    for text in german:
        assert text in html
    assert not BARE_B.findall(html)
    english = client.get("/en" + path).content.decode()
    assert "Mrd." not in english and BARE_B.search(english)
