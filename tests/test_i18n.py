import re

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


def test_formulas_of_the_how_panel_read_in_german(client, db):
    """The formula column of "How it was computed" was English on German pages ("2 × 8 kv heads × 128 × 2 B × 64
    layers = 262 144 B/token × 8 192 cells", "cuda context: 300 MiB (assumed; …)"): its words are translated, its
    decimals take the comma; numbers, units and code names stay."""
    from django.utils import translation

    from reports.templatetags.labels import formula

    english = ("2 × 1 kv heads/rank × 256 × 1 B × 16 layers = 8 192 B/token/GPU, replicated on 2 ranks × 8 192 tokens "
               "× 1 sequence × 8 GPUs (window 128: 513 pages of 16 with max_num_batched_tokens 8 192)")
    with translation.override("de"):
        assert formula(english) == (
            "2 × 1 KV-Heads/Rang × 256 × 1 B × 16 Schichten = 8 192 B/Token/GPU, auf 2 Rängen repliziert × 8 192 Tokens "
            "× 1 Sequenz × 8 GPUs (Fenster 128: 513 Seiten zu 16 bei max_num_batched_tokens 8 192)")
        assert formula("2.10 GiB: cuBLAS/NCCL + custom all-reduce (v0.19 CUDA logs, TP 2)") == (
            "2,10 GiB: cuBLAS/NCCL + Custom-All-Reduce (v0.19 CUDA-Logs, TP 2)")  # a version keeps its dot
        assert formula("0.51 GiB; subtracted from the KV budget (vLLM ≥ 0.21)") == (
            "0,51 GiB; vom KV-Budget abgezogen (vLLM ≥ 0.21)")
        assert formula("cuda context: 300 MiB (assumed; sourced range 107–555 MiB on CUDA)") == (
            "CUDA-Kontext: 300 MiB (angenommen; Spanne laut Quellen 107–555 MiB auf CUDA)")
    with translation.override("en"):
        assert formula(english) == english
    body = client.get("/de/report/llama-3-1-8b-instruct/rtx-4090/").content.decode()
    how = body[body.index('id="how"'):body.index('id="launch"')]
    cells = re.findall(r"<td><code>(.*?)</code></td>", how)
    assert cells and "Schichten" in cells[0]
    assert not [cell for cell in cells if re.search(r"\b(layers|sequences?|cells|assumed|kv heads)\b", cell)], cells


def test_an_accuracy_notes_figure_takes_the_visitors_number_format():
    """The methodology's accuracy table read "ausgeschlossen (-6.6 %): …" on the German page."""
    from reports.templatetags.labels import note_status

    with translation.override("de"):
        assert note_status("excluded (-6.6 %): Google QAT export") == "ausgeschlossen (-6,6 %): "
    with translation.override("en"):
        assert note_status("excluded (+12.25 %): x") == "excluded (+12.25 %): "
