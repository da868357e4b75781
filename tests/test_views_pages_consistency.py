"""What the model and hardware pages say agrees with the report and with itself: the memory-by-context table's
verdicts, lower-bound totals, the model table's format and notes, and the default accelerator."""

import html
import re

import pytest

pytestmark = pytest.mark.django_db

CHART_ROW = re.compile(r'<tr><th scope="row">[^<]*\(([\d,]+)\)</th>.*?</td><td>(.*?)</td></tr>', re.S)


def chart_marks(body: str) -> dict[int, str]:
    """Context → the memory-by-context table's mark: "tight", "fits", "does not fit" or "beyond"."""
    table = body.split('id="chart"', 1)[1].split("</table>", 1)[0]
    marks = {}
    for context, cell in CHART_ROW.findall(table):
        if "limit" in cell:
            mark = "beyond"
        else:
            mark = re.sub(r"<[^>]+>|[✓✗!]", " ", cell).split()
            mark = " ".join(mark)
        marks[int(context.replace(",", ""))] = mark
    return marks


def banner(body: str) -> str:
    return re.search(r'<section class="card fit verdict-(\w+)"', body).group(1)


def test_the_context_table_marks_a_tight_fit_as_the_report_does(client):
    """The table read "16K … 22.58 GiB ✓ fits" on the RTX 4090's 22.8 GiB, where ?context=16384 says "Tight
    headroom": each row carries the plan's own verdict (fit.verdict), as the report at that context gives it."""
    marks = chart_marks(client.get("/en/report/qwen3-32b/rtx-4090/").content.decode())
    assert marks[16384] == "tight"
    for context, mark in marks.items():
        if mark == "beyond":
            continue  # beyond the model's limit: the configurator refuses that context
        verdict = banner(client.get(f"/en/report/qwen3-32b/rtx-4090/?context={context}").content.decode())
        assert mark == {"tight": "tight", "fits": "fits", "unified": "fits", "exceeds": "does not fit"}[verdict], (
            context, mark, verdict)


def test_a_model_pages_context_table_agrees_with_its_verdict(client):
    """DeepSeek-R1-0528's page said "Tight headroom" above a table reading "8K … 377.54 GiB ✓ fits"."""
    body = client.get("/en/model/deepseek-r1-0528/").content.decode()
    assert banner(body) == "tight"
    assert chart_marks(body)[8192] == "tight"
    assert 'circle class="tight"' in body


@pytest.mark.parametrize("lang, slug", [("en", "gpt-oss-120b"), ("de", "gpt-oss-20b")])
def test_a_model_table_is_sized_at_the_models_own_format_and_notes_only_real_differences(client, lang, slug):
    """gpt-oss's catalog GGUF repository publishes MXFP4_MOE only (estimate.default_quant): every one of its 49 rows
    said "MXFP4_MOE: llama.cpp runs no Q4_K_M here" under a Q4_K_M heading. The table names the model's own format,
    and a row's note appears only where its report opens at another engine or format, because the table's does not
    run there."""
    from reports.estimates import current_catalog
    from reports.pages import table_scenario
    from reports.sizing.estimate import default_scenario, format_runs_on

    body = client.get(f"/{lang}/model/{slug}/").content.decode()
    heading = re.search(r'<h2 id="table-heading">(.*?)</h2>', body).group(1)
    assert heading.endswith("(MXFP4_MOE)"), heading
    status = html.unescape(re.search(r'<p class="muted table-summary">(.*?)</p>', body, re.S).group(1))
    assert ("Totals at MXFP4_MOE" if lang == "en" else "MXFP4_MOE") in status and "Q4_K_M" not in status
    assert "Q4_K_M" not in re.search(r'id="default-heading".*?</p>', body, re.S).group(0)
    table = body.split('id="table"', 1)[1]
    notes = dict(re.findall(r'<th scope="row"><a href="/\w+/hardware/([^/]+)/">[^<]+</a><br><span class="muted">'
                            r'([^<]*)</span>', table))
    _, catalog = current_catalog()
    model = catalog.model(slug)
    table_format = table_scenario(model)
    assert table_format.quant == "MXFP4_MOE"
    differing = {}
    for hardware in catalog.hardware.values():
        opening = default_scenario(model, hardware)
        if (opening.engine, opening.quant) != (table_format.engine, table_format.quant):
            differing[hardware.slug] = opening
            # the note's reason is true: llama.cpp does not run there, or its backend runs no MXFP4_MOE
            assert opening.engine == "vllm" or not format_runs_on("llama.cpp", "MXFP4_MOE", hardware)
    assert set(notes) == set(differing) and 0 < len(notes) < 49
    assert all("Q4_K_M" not in note for note in notes.values())
    for slug_, note in notes.items():
        assert note.startswith(f"vLLM, {differing[slug_].quant}:" if differing[slug_].engine == "vllm"
                               else f"{differing[slug_].quant}: "), note


def test_a_q4_k_m_model_table_is_unchanged(client):
    body = client.get("/en/model/qwen3-32b/").content.decode()
    assert re.search(r'<h2 id="table-heading">(.*?)</h2>', body).group(1).endswith("(Q4_K_M)")


# ---- lower-bound totals (a model whose KV cache is unknown) ------------------------------------------------------

def page_text(client, path: str) -> str:
    response = client.get(path)
    assert response.status_code == 200
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", response.content.decode())))


def description(client, path: str) -> str:
    body = client.get(path).content.decode()
    return html.unescape(re.search(r'<meta name="description" content="([^"]*)"', body).group(1))


# Cohere Command A 111B has no config.json and no sourced family member: its totals leave the KV cache out
# (63.25 GiB of Q4_K_M weights + 0.31 GiB runtime buffers = 63.55 GiB at 8K on the H100; 63.60 GiB at 32K).
BARE = {"en": re.compile(r"(?<!≥ )(?<!at least )\b63\.(?:55|60) GiB"),
        "de": re.compile(r"(?<!≥ )(?<!mindestens )\b63,(?:55|60) GiB")}


@pytest.mark.parametrize("lang", ["en", "de"])
@pytest.mark.parametrize("path", ["/{lang}/model/cohere-command-a-111b/",
                                  "/{lang}/report/cohere-command-a-111b/h100-80gb-sxm/"])
def test_a_total_without_the_kv_cache_is_marked_as_a_lower_bound_wherever_it_is_shown(client, lang, path):
    """The hardware table said "≥ 63.55 GiB" and the FAQ "needs at least 63.55 GiB", but the model table, the
    summary and the meta description showed the same total bare."""
    path = path.format(lang=lang)
    text = page_text(client, path)
    assert text.count("63.55 GiB" if lang == "en" else "63,55 GiB") >= 3
    assert BARE[lang].findall(text) == []
    assert "≥ 63" in description(client, path)


def test_the_model_table_marks_every_total_of_such_a_model(client):
    body = client.get("/en/model/cohere-command-a-111b/").content.decode()
    table = body.split('id="table"', 1)[1]
    totals = re.findall(r'<td class="num">([^<]*GiB)</td>', table)
    assert len(totals) > 80 and all(total.startswith("≥ ") for total in totals)  # unsizable rows: "not published"
    # A row that is not sizable there has no figure to bound: "≥ not published" read as a bound of nothing.
    assert "≥ not published" not in table and "not published" in table
    assert "≥ nicht veröffentlicht" not in client.get("/de/model/cohere-command-a-111b/").content.decode()
    known = client.get("/en/model/qwen3-32b/").content.decode().split('id="table"', 1)[1]
    assert "≥" not in known  # a model whose KV cache is known: exact totals


@pytest.mark.parametrize("lang, listed", [("de", ["Cohere Command A 111B ≥ 63,3 GiB", "Qwen3.8 Flash Next (125B-A6B) ≥ 71,2 GiB"]),
                                          ("en", ["Cohere Command A 111B ≥ 63.3 GiB"])])
def test_the_home_pages_entry_lists_mark_lower_bound_totals(client, lang, listed):
    text = page_text(client, f"/{lang}/")
    for entry in listed:
        assert entry in text
    assert "Llama 3.3 70B Instruct ≥" not in text  # known KV cache: exact


def test_the_compare_page_marks_a_lower_bound_total(client):
    text = page_text(client, "/en/compare/cohere-command-a-111b/?hw=h100-80gb-sxm&hw=rtx-4090")
    assert "≥ 63.55 GiB" in text and BARE["en"].findall(text) == []


# ---- the model page's default accelerator -------------------------------------------------------------------------

def _accelerator_row(slug, memory_gb, verdict, *, price=None, tflops=None, bandwidth=100.0):
    from reports.pages import AcceleratorRow
    from reports.sizing.specs import HardwareSpec

    hardware = HardwareSpec(slug=slug, name=slug, vendor="V", memory_gb=memory_gb, bandwidth_gbs=bandwidth,
                            price_usd=price, fp16_tflops=tflops)
    return AcceleratorRow(hardware, memory_gb * 2**30, 1.0, 2.0, 10.0, verdict, "", "")


def test_among_equally_suitable_accelerators_one_with_published_compute_is_shown():
    """The Arc Pro B60 (24 GB, FP16 TFLOPS not published, cheaper) was the default accelerator of 17 model pages,
    whose speed card then said "Prefill: not published" beside an RTX 4090 of the same 24 GB."""
    from reports.pages import default_accelerator

    unpublished = _accelerator_row("b60", 24, "fits", price=600)
    published = _accelerator_row("rtx", 24, "fits", price=1600, tflops=165.2)
    assert default_accelerator([unpublished, published]).slug == "rtx"
    assert default_accelerator([published, unpublished]).slug == "rtx"  # deterministic: not the catalog order
    # Not at any cost: a smaller accelerator, or a better verdict tier, still comes first.
    assert default_accelerator([_accelerator_row("small", 16, "fits"), published]).slug == "small"
    assert default_accelerator([_accelerator_row("b60", 24, "fits"),
                                _accelerator_row("tight", 24, "tight", tflops=1.0)]).slug == "b60"
    # Between two published ones, the cheaper as before.
    assert default_accelerator([published, _accelerator_row("cheap", 24, "fits", price=900, tflops=1.0)]
                               ).slug == "cheap"


def test_a_model_page_shows_prefill_on_its_default_accelerator(client):
    body = client.get("/en/model/qwen3-32b/").content.decode()
    speed = body.split('id="speed"', 1)[1].split("</section>", 1)[0]
    assert "not published" not in speed and "TTFT" in speed


def test_the_model_tables_decode_column_sorts_upper_bounds_by_value(client):
    """A model without its layer count has "≤" on every row of its own table: they sort by value too."""
    body = client.get("/en/model/cohere-command-a-111b/?sort=decode&order=desc").content.decode()
    table = body.split('id="table"', 1)[1]
    speeds = [float(value.replace(",", "")) for value in re.findall(r'<td class="num">≤ ([\d.,]+) tok/s</td>', table)]
    assert len(speeds) > 40 and speeds == sorted(speeds, reverse=True)
