import pytest
from django.utils import translation

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("accept, target", [("de-DE,de;q=0.9", "/de/"), ("en-US,en;q=0.9", "/en/"),
                                            ("fr-FR", "/en/")])
def test_root_redirects_by_accept_language(client, accept, target):
    response = client.get("/", headers={"Accept-Language": accept})
    assert response.status_code == 302
    assert response["Location"] == target


@pytest.mark.parametrize("prefix, lang", [("/de/", "de"), ("/en/", "en")])
def test_both_languages_are_served(client, prefix, lang):
    response = client.get(prefix)
    assert response.status_code == 200
    assert f'<html lang="{lang}">' in response.content.decode()


def test_language_switch_keeps_the_page_and_its_query(client):
    body = client.get("/en/?context=32768").content.decode()
    assert 'href="/de/?context=32768"' in body
    body = client.get("/de/?context=32768").content.decode()
    assert 'href="/en/?context=32768"' in body


def test_german_translations_are_compiled():
    with translation.override("de"):
        assert translation.gettext("Accelerators") == "Beschleuniger"
