"""The model, hardware, home and search pages and the 404 pages: both languages, sorting and filtering over GET,
htmx partials, suggestions, and a query count that does not grow with the catalog."""

import html
import re
from dataclasses import replace

import pytest
from django.http import QueryDict

from reports import estimates
from reports.pages import (FORMAT_LADDER, VERDICT_RANK as VERDICT_ORDER, AcceleratorRow, best_fitting_format,
                           default_accelerator)
from reports.sizing.estimate import plan_memory
from reports.sizing.specs import HardwareSpec, Scenario
from tests.factories import make_accelerator, make_model

pytestmark = pytest.mark.django_db

# A row sized with another engine than the table's (vLLM where llama.cpp has no backend) says so under its name.
ROW_NAMES = re.compile(r'<th scope="row"><a href="[^"]+">([^<]+)</a>(?:<br><span class="muted">[^<]*</span>)?</th>')
MAX_QUERIES = 12


@pytest.fixture
def cold_snapshot():
    """Every request after this one rebuilds the catalog snapshot, as the first request of a process does."""
    estimates._snapshot_cache.clear()
    yield
    estimates._snapshot_cache.clear()


def table_names(body: str) -> list[str]:
    return ROW_NAMES.findall(body.split('id="table"', 1)[1])


# ---- model page -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("lang", ["en", "de"])
def test_model_page_renders_in_both_languages(client, lang):
    response = client.get(f"/{lang}/model/glm-4-5/")
    assert response.status_code == 200
    body = response.content.decode()
    assert f'<html lang="{lang}">' in body
    for section in ('id="fit"', 'id="speed"', 'id="accelerators"', "huggingface.co/zai-org/GLM-4.5"):
        assert section in body
    assert len(table_names(body)) == 49  # every seed accelerator


@pytest.mark.parametrize("lang", ["en", "de"])
def test_model_page_has_the_reports_blocks_for_its_accelerator(client, lang):
    """Seed 001 shows, for the default accelerator, the same blocks as the report: how it was computed, recommended
    hardware, launch commands, the simulator, cloud prices with rent vs. buy, fine-tuning memory, engineering notes,
    memory by context and the quantization matrix; ids appear once."""
    body = client.get(f"/{lang}/model/glm-4-5/").content.decode()
    for section in ("fit", "speed", "how", "recommend", "launch", "simulator", "cloud", "finetune", "notes", "chart",
                    "matrix"):
        assert body.count(f'id="{section}"') == 1, section
    assert "llama-server -hf unsloth/GLM-4.5-GGUF:Q4_K_M" in body
    assert "js/report" in body  # the simulator's and copy buttons' script
    assert 'id="faq"' not in body  # the FAQ and its FAQPage JSON-LD stay on the report's own URL


def test_model_page_uses_german_number_format(client):
    # GLM-4.5 KV at 8K, FP16: 2 × 92 layers × 8 KV heads × 128 × 2 B × 8,192 tokens = 2.875 GiB
    german = client.get("/de/model/glm-4-5/").content.decode()
    english = client.get("/en/model/glm-4-5/").content.decode()
    assert "2,88 GiB" in german and "2.88 GiB" not in german
    assert "2.88 GiB" in english


def test_model_page_shows_the_seeds_default_accelerator(client):
    # The seed's model page shows GLM-4.5 on the Instinct MI325X 256GB: the smallest catalog accelerator on which
    # it fits comfortably (204 GiB of 243.2 GiB usable; the 256 GB Mac Studio has only 199.7 GiB usable).
    body = client.get("/en/model/glm-4-5/").content.decode()
    heading = re.search(r'<h2 id="default-heading">(.*?)</h2>', body).group(1)
    assert heading == "On Instinct MI325X 256GB"
    assert 'href="/en/report/glm-4-5/instinct-mi325x-256gb/"' in body


def _row(slug, memory_gb, verdict, price=None):
    hardware = HardwareSpec(slug=slug, name=slug, vendor="V", memory_gb=memory_gb, bandwidth_gbs=100.0,
                            price_usd=price)
    return AcceleratorRow(hardware, memory_gb * 2**30, 1.0, 2.0, 10.0, verdict, "", "")


def test_default_accelerator_prefers_the_smallest_comfortable_fit_then_tight_then_the_largest():
    rows = [_row("big", 80, "fits"), _row("small-tight", 24, "tight"), _row("mid", 48, "unified"),
            _row("tiny", 12, "exceeds")]
    assert default_accelerator(rows).slug == "mid"
    assert default_accelerator([_row("a", 24, "tight"), _row("b", 16, "exceeds")]).slug == "a"
    assert default_accelerator([_row("a", 24, "exceeds"), _row("b", 80, "exceeds")]).slug == "b"
    # equal memory: the cheaper one (known prices before unknown)
    assert default_accelerator([_row("dear", 24, "fits", 2000), _row("cheap", 24, "fits", 900),
                                _row("unpriced", 24, "fits")]).slug == "cheap"


def test_model_page_sorts_by_get_parameters(client):
    ascending = table_names(client.get("/en/model/llama-3-1-8b-instruct/?sort=memory&order=asc").content.decode())
    descending = table_names(client.get("/en/model/llama-3-1-8b-instruct/?sort=memory&order=desc").content.decode())
    assert ascending[-1] == "Mac Studio M3 Ultra 512GB" and descending[0] == "Mac Studio M3 Ultra 512GB"
    by_name = table_names(client.get("/en/model/llama-3-1-8b-instruct/?sort=name").content.decode())
    assert by_name == sorted(by_name, key=str.casefold)


def test_model_page_sorts_by_decode_speed(client):
    body = client.get("/en/model/llama-3-1-8b-instruct/?sort=decode&order=desc").content.decode()
    table = body.split('id="table"', 1)[1]
    speeds = [float(value.replace(",", "")) for value in re.findall(r'<td class="num">~([\d.,]+) tok/s</td>', table)]
    # All 49: the Ascend rows at the Q4_0/F16 llama.cpp's CANN backend runs there, the Gaudi, Cambricon, Kunlunxin
    # and MetaX rows under vLLM (estimate.default_scenario); each says so under its name.
    assert len(speeds) == 49 and speeds == sorted(speeds, reverse=True)
    assert table.count("format not supported") == 0


def test_model_page_filters_by_vendor_and_fit(client):
    apple = table_names(client.get("/en/model/glm-4-5/?vendor=Apple").content.decode())
    assert apple and all(name.startswith("Mac") for name in apple)
    body = client.get("/en/model/glm-4-5/?fits=1").content.decode()
    fitting = table_names(body)
    assert 0 < len(fitting) < 49
    assert "Instinct MI325X 256GB" in fitting and "RTX 4090" not in fitting
    assert "verdict-exceeds" not in body.split('id="table"', 1)[1]


@pytest.mark.parametrize("query", ["sort=DROP TABLE", "order=sideways", "vendor=<script>", "fits=maybe",
                                   "sort=" + "x" * 5000])
def test_model_page_refuses_unknown_table_parameters_and_shows_the_default_table(client, query):
    response = client.get(f"/en/model/glm-4-5/?{query}")
    assert response.status_code == 400 and "is not a value this table offers" in response.content.decode()
    assert len(table_names(response.content.decode())) == 49


def test_model_page_htmx_gets_the_table_partial(client):
    response = client.get("/en/model/glm-4-5/?sort=decode", headers={"HX-Request": "true"})
    body = response.content.decode()
    assert response.status_code == 200 and "<html" not in body and 'id="fit"' not in body
    assert len(table_names('id="table"' + body)) == 49
    assert "HX-Request" in response["Vary"]


# ---- hardware page ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("lang", ["en", "de"])
def test_hardware_page_renders_in_both_languages(client, lang):
    response = client.get(f"/{lang}/hardware/rtx-4090/")
    assert response.status_code == 200
    body = response.content.decode()
    assert f'<html lang="{lang}">' in body
    for section in ('id="specs"', 'id="prices"', 'id="models"', "gfxspeak.com", "RunPod"):
        assert section in body
    assert len(table_names(body)) == 83  # every seed model


@pytest.mark.parametrize("lang, slug, memory", [
    ("de", "arc-pro-b60-24gb", "24 GB (Typ nicht veröffentlicht)"),  # the catalog has no memory type: it said "24 GB "
    ("en", "arc-pro-b60-24gb", "24 GB (type not published)"),
    ("de", "dgx-spark-gb10-128gb", '128 GB <span lang="en">LPDDR5X unified</span>'),  # catalog words, in English
])
def test_the_hardware_page_says_when_the_memory_type_is_not_published(client, lang, slug, memory):
    body = client.get(f"/{lang}/hardware/{slug}/").content.decode()
    assert f"<dd>{memory}</dd>" in body


@pytest.mark.parametrize("lang, sentence, reason", [
    ("en", "Vast.ai, 8 × A100 80GB SXM at $3.54/h: the rate is not confirmed by its source.", '<span lang="en">'),
    ("de", "Vast.ai, 8 × A100 80GB SXM zu 3,54\xa0$/Std.: Die Quelle bestätigt diesen Tarif nicht.",
     '<summary>Begründung (englisch)</summary><p lang="en">'),
])
def test_the_hardware_page_says_why_a_rate_is_not_confirmed(client, lang, sentence, reason):
    """The offer listed first on the A100's page said only "rate not confirmed by its source"; the reports said why."""
    body = html.unescape(client.get(f"/{lang}/hardware/a100-80gb-sxm/").content.decode())
    assert sentence in body
    doubt = body.split(sentence, 1)[1][:400]
    assert reason in doubt and "0.44" in doubt


def test_hardware_page_opens_on_the_largest_models_that_fit(client):
    """Sorted by size alone, an RTX 4090's table opened on 1-2.8 T models that exceed it: fits first, then tight,
    exceeds, each group largest first; the verdict header shows the sort."""
    from django.http import QueryDict

    from catalog.models import Accelerator
    from reports.pages import hardware_page

    body = client.get("/en/hardware/rtx-4090/").content.decode()
    _, catalog = estimates.current_catalog()
    row = Accelerator.objects.prefetch_related("prices", "cloud_offers").get(slug="rtx-4090")
    table = hardware_page(row, QueryDict(""), catalog).table
    order = [(VERDICT_ORDER[r.verdict], -(r.params_total or 0)) for r in table]
    assert order == sorted(order) and table[0].verdict == "fits" and table[-1].verdict != "fits"
    assert [r.model_row.name for r in table] == table_names(body)
    assert ('<th scope="col" aria-sort="ascending" data-sort-status="Sorted by Verdict, ascending."><a id="sort-verdict"'
            in body)


def test_hardware_page_sizes_for_a_gpu_count_and_engine(client):
    """"What runs on 8 × H100" under vLLM: the table is sized for the GPUs and the engine chosen, its report links
    open on them, its sort links keep them, and the home page's entry links to it with the same count."""
    from reports.pages import entry_point

    path = "/en/hardware/h100-80gb-sxm/"
    body = client.get(f"{path}?gpus=8&engine=vllm").content.decode()
    _, catalog = estimates.current_catalog()
    entry = entry_point(catalog, "8xh100", catalog.hardware["h100-80gb-sxm"], 8, "vllm")
    assert entry.hardware_url == f"{path}?gpus=8&engine=vllm"
    assert f"of all 83 fit on 8 × H100 80GB SXM." in body
    assert re.search(rf"(\d+) of all 83 fit on 8", body).group(1) == str(entry.fitting_count)
    table = body.split('id="table"', 1)[1]
    reports = re.findall(r'href="(/en/report/[^"]+)"', table)
    assert reports and all("gpus=8" in link and "engine=vllm" in link for link in reports)
    sorts = re.findall(r'id="sort-\w+" class="[^"]+" href="\?([^"]+)"', table)
    assert len(sorts) == 6 and all("gpus=8" in query and "engine=vllm" in query for query in sorts)
    assert '<option value="8" selected>8</option>' in body and '<option value="vllm" selected>vLLM</option>' in body
    # The lead above the table counts for the same GPUs and engine, and the table's htmx answer brings it along.
    lead = re.search(r'<p class="lead" id="hardware-lead">\s*(.*?)\s*</p>', body, re.S).group(1)
    assert lead.startswith(f"8 × H100 80GB SXM (80 GB, 3,350 GB/s each): {entry.fitting_count} of 83 ")
    assert "under vLLM" in lead
    assert "<title>8 × H100 80GB SXM — which LLMs fit" in body
    assert '<h1 id="hardware-title">8 × H100 80GB SXM — which LLMs fit' in body
    partial = client.get(f"{path}?gpus=8&engine=vllm", headers={"HX-Request": "true"}).content.decode()
    assert '<p class="lead" id="hardware-lead" hx-swap-oob="true">' in partial
    assert '<h1 id="hardware-title" hx-swap-oob="true">8 × H100 80GB SXM' in partial
    one = client.get(path).content.decode()
    assert int(re.search(r"(\d+) of all 83 fit\.", one).group(1)) < entry.fitting_count
    # A count or engine the table does not offer reads as the default, as an unknown vendor does.
    for query in ("gpus=abc", "gpus=-1", "gpus=0", "gpus=65", "engine=sglang", "gpus=99999999999999999999"):
        assert re.sub(r"\s+", " ", client.get(f"{path}?{query}").content.decode()).count("of all 83 fit.") == 1
    # A unified-memory machine is one machine: no GPU count to choose.
    mac = client.get("/en/hardware/mac-studio-m3-ultra-512gb/").content.decode()
    assert 'id="filter-gpus"' not in mac and 'id="filter-engine"' not in mac  # nor vLLM (no Metal backend)


def test_hardware_tables_under_vllm_tell_refusals_and_float16_apart(client):
    """Final review: the Atlas 300I Duo's vLLM table read "0 of 83 fit" (its ladder had no FP16, the only format
    vLLM runs there) beside reports that fit; on 8 × H100 models whose heads 8 GPUs do not divide read "exceeds";
    an estimated MoE model under vLLM read every weight per token (GLM-5.3 Flash ~47 tok/s on 8 × H100)."""
    from reports.pages import hardware_page
    from catalog.models import Accelerator
    from django.http import QueryDict

    _, catalog = estimates.current_catalog()

    def table(slug, query):
        row = Accelerator.objects.prefetch_related("prices", "cloud_offers").get(slug=slug)
        return {r.model_row.slug: r for r in hardware_page(row, QueryDict(query), catalog).rows}

    atlas = table("atlas-300i-duo-96gb", "engine=vllm")
    assert atlas["llama-3-1-8b-instruct"].quant == "FP16" and atlas["llama-3-1-8b-instruct"].verdict == "fits"
    h100 = table("h100-80gb-sxm", "gpus=8&engine=vllm")
    assert h100["glm-4-7-flash"].verdict == "unsizable"  # 20 attention heads over 8 GPUs
    flash, glm47 = h100["glm-5-3-flash-320b-a18b"], h100["glm-4-7"]
    assert flash.decode_tok_s > glm47.decode_tok_s  # 18 B active read per token, not 320 B
    rtx = table("rtx-4090", "gpus=2&engine=vllm")
    assert rtx["deepseek-v4-flash"].verdict == "unsizable"  # vLLM's V4 attention needs Hopper or Blackwell


def test_an_estimated_model_is_split_only_as_its_stand_in_allows():
    """GLM-5.3 (stated parameters, GLM-5's shapes) was recommended on 6 GPUs under vLLM, which GLM-5's 64 attention
    heads refuse: an estimated model's tensor-parallel split is checked on its stand-in's heads."""
    from reports.sizing.errors import SizingError
    from reports.sizing.parallelism import check_tensor_parallel

    _, catalog = estimates.current_catalog()
    glm53 = catalog.model("glm-5-3-753b")
    assert not glm53.has_shapes and glm53.kv_proxy.slug == "glm-5"
    with pytest.raises(SizingError, match="not divisible by 6"):
        check_tensor_parallel(glm53, 6)
    choice = catalog.recommendations(glm53, Scenario(engine="vllm", quant="AWQ", kv_dtype="auto")).best_value_multi
    assert choice.choice is None or 64 % choice.choice.count == 0


def test_hardware_page_german_formats_prices_and_dates(client):
    german = client.get("/de/hardware/rtx-4090/").content.decode()
    english = client.get("/en/hardware/rtx-4090/").content.decode()
    # The seed's RTX 4090 launch MSRP, $1,599 as of 2026-11-29 (catalog/seed)
    assert re.search(r"1\.599\s\$", german) and "29.11.2026" in german  # Babel puts a no-break space before $
    assert "$1,599" in english and "Nov 29, 2026" in english


def test_hardware_page_says_not_published_for_unknown_specs(client):
    body = client.get("/en/hardware/ascend-910b-64gb/").content.decode()  # no published TDP in the seed
    tdp = re.search(r"<dt>TDP</dt><dd>(.*?)</dd>", body).group(1)
    assert tdp == "not published"


@pytest.mark.parametrize("model_slug", ["llama-3-1-8b-instruct", "gemma-3-27b-it", "qwen3-30b-a3b-instruct-2507",
                                        "llama-3-3-70b-instruct", "glm-4-5"])
def test_best_fitting_format_is_the_first_ladder_format_that_fits(model_slug):
    """The first ladder format that fits with headroom; only where none does, the first that fits tightly."""
    _, catalog = estimates.current_catalog()
    model, hardware = catalog.model(model_slug), catalog.accelerator("rtx-4090")
    verdicts = {quant: plan_memory(model, hardware, replace(Scenario(), quant=quant)).fit.verdict
                for quant in FORMAT_LADDER}
    brute_force = next((quant for quant in FORMAT_LADDER if verdicts[quant] not in ("exceeds", "tight")),
                       next((quant for quant in FORMAT_LADDER if verdicts[quant] == "tight"), None))
    best = best_fitting_format(model, hardware)
    assert (best[0] if best else None) == brute_force


def test_hardware_page_prefers_a_format_with_headroom_to_a_tight_higher_one(client):
    # Qwen3 Coder 30B-A3B on one RTX 4090 (22.8 GiB usable): Q5_K_M needs 21.58 GiB, under 8 % left (tight);
    # Q4_K_M fits with headroom, and the table lists that. GLM-4.5 Air on the Ryzen AI Max+ 395 (99.8 GiB
    # usable): Q6_K needs 93.01 GiB (tight), a smaller format fits in unified memory with headroom.
    rtx = client.get("/en/hardware/rtx-4090/").content.decode()
    coder = re.search(r'<a href="/en/model/qwen3-coder-30b-a3b/">.*?</tr>', rtx, re.S).group(0)
    assert "<td>Q4_K_M</td>" in coder and "tight" not in coder
    assert 'href="/en/report/qwen3-coder-30b-a3b/rtx-4090/?quant=Q4_K_M"' in coder
    ryzen = client.get("/en/hardware/ryzen-ai-max-plus-395-128gb/").content.decode()
    air = re.search(r'<a href="/en/model/glm-4-5-air/">.*?</tr>', ryzen, re.S).group(0)
    assert "<td>Q6_K</td>" not in air and "tight" not in air
    assert "A format that fits only tightly (less than 8% of the usable memory left)" in rtx


def test_hardware_page_lists_the_best_format_and_links_the_report_with_it(client):
    body = client.get("/en/hardware/rtx-4090/").content.decode()
    # Llama-3.1-8B Q8_0 ≈ 8.5 GB of weights: fits a 24 GB card at the top of the ladder.
    assert 'href="/en/report/llama-3-1-8b-instruct/rtx-4090/?quant=Q8_0"' in body
    # GLM-4.5 needs ~100 GiB even at Q2_K: no format fits, and its report link carries no format.
    glm = re.search(r'<a href="/en/model/glm-4-5/">.*?</tr>', body, re.S).group(0)
    assert "<td>none</td>" in glm and 'href="/en/report/glm-4-5/rtx-4090/"' in glm


def test_hardware_page_sorts_and_filters(client):
    fitting = table_names(client.get("/en/hardware/rtx-4090/?fits=1&sort=name").content.decode())
    assert fitting == sorted(fitting, key=str.casefold)
    assert "Llama 3.1 8B Instruct" in fitting and "GLM-4.5 (355B-A32B)" not in fitting
    meta = table_names(client.get("/en/hardware/rtx-4090/?vendor=Meta").content.decode())
    assert meta and all("Llama" in name for name in meta)


# ---- home and search --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("lang", ["en", "de"])
def test_home_page_has_the_picker_and_computed_entry_points(client, lang):
    body = client.get(f"/{lang}/").content.decode()
    assert 'id="pick-model"' in body and 'id="pick-hardware"' in body
    assert f'action="/{lang}/search/"' in body and f'hx-get="/{lang}/search/"' in body
    for key in ("24gb", "128gb-unified", "8xh100"):
        assert f'id="entry-{key}"' in body
    # The fastest 24 GB graphics card (RTX 4090 and 4090 D share 1,008 GB/s; the shorter name wins), listing the
    # largest models that fit on it at Q4_K_M and 8K, each linking to its report.
    card = body.split('id="entry-24gb"', 1)[1].split("</section>", 1)[0]
    assert len(re.findall(rf'href="/{lang}/report/[a-z0-9-]+/rtx-4090/"', card)) >= 5
    assert f'href="/{lang}/report/gemma-3-27b-it/rtx-4090/"' in card  # 27B at ~4.9 bits: ~16.5 GB
    eight = body.split('id="entry-8xh100"', 1)[1].split("</section>", 1)[0]
    # The server under vLLM, tensor parallel over its eight GPUs (llama.cpp's layer split has them take turns:
    # Llama 3.1 405B read ~11.5 tok/s there), each model in the best format of vLLM's ladder that fits.
    links = re.findall(rf'href="(/{lang}/report/[a-z0-9-]+/h100-80gb-sxm/\?[^"]+)"', eight)
    assert links and all("gpus=8" in link and "engine=vllm" in link for link in links)
    assert re.search(r"Llama 3.1 405B Instruct</a> <span class=\"muted\">FP8 · ", eight)
    # The hardware page sizes one GPU under llama.cpp: linked from the single-GPU entries only.
    assert f'href="/{lang}/hardware/h100-80gb-sxm/"' not in eight and f'href="/{lang}/hardware/rtx-4090/"' in card
    assert "Qwen3 Coder 480B" in eight  # FP8 fits; its AWQ does not split over 8 GPUs, which hid it
    assert f'href="/{lang}/model/glm-4-5/"' in body and f'href="/{lang}/hardware/rtx-4090/"' in body


def test_search_without_javascript_lists_matches_and_reports(client):
    response = client.get("/en/search/", {"model": "llama 3.1 8b", "hardware": "4090"})
    body = response.content.decode()
    assert response.status_code == 200 and "<html" in body
    assert 'href="/en/report/llama-3-1-8b-instruct/rtx-4090/"' in body
    assert 'href="/en/model/llama-3-1-8b-instruct/"' in body and 'href="/en/hardware/rtx-4090-d/"' in body
    assert '<meta name="robots" content="noindex, follow">' in body


def test_search_as_you_type_returns_a_small_partial(client):
    response = client.get("/de/search/", {"model": "qwen3 coder"}, headers={"HX-Request": "true"})
    body = response.content.decode()
    assert response.status_code == 200 and "<html" not in body and len(body) < 5000
    assert 'href="/de/model/qwen3-coder-30b-a3b/"' in body
    assert "HX-Request" in response["Vary"]


def test_search_finds_typos(client):
    body = client.get("/en/search/", {"hardware": "rtx4900"}).content.decode()
    assert 'href="/en/hardware/rtx-4090/"' in body


@pytest.mark.parametrize("side, query, first, absent", [
    # Names typed without their spaces and dots, as Ollama writes them: nothing matched.
    ("model", "llama3.1", "llama-3-1-8b-instruct", "llama-3-3-70b-instruct"),
    ("model", "llama3.3", "llama-3-3-70b-instruct", "llama-3-1-8b-instruct"),
    ("model", "llama4", "llama-4-scout-17b-16e", "llama-3-1-8b-instruct"),
    ("model", "llama3.1:8b", "llama-3-1-8b-instruct", "llama-3-1-405b-instruct"),
    ("model", "Qwén3 coder", "qwen3-coder-30b-a3b", "gemma-3-27b-it"),  # accents folded
    ("model", "r1", "deepseek-r1-0528", "glm-4-5-air"),  # a word's start, not "Ai[r 1]06B"
    # The memory as visitors type it ranked RTX 3060 12GB and RTX 5070 12GB (difflib) above the RTX 4090.
    ("hardware", "rtx 4090 24gb", "rtx-4090", "rtx-3060-12gb"),
    ("hardware", "4090 D", "rtx-4090-d", "rtx-4090/"),  # "d" is not inside "NVIDIA"
])
def test_search_matches_what_visitors_type(client, side, query, first, absent):
    body = client.get("/en/search/", {side: query}, headers={"HX-Request": "true"}).content.decode()
    kind = "model" if side == "model" else "hardware"
    links = re.findall(rf'href="/en/{kind}/([a-z0-9-]+/)"', body)
    assert links and links[0] == first + "/", links
    assert absent.rstrip("/") + "/" not in links


@pytest.mark.parametrize("query", ["", "<script>alert(1)</script>", "ü" * 500, "%00", "' OR 1=1 --"])
def test_search_survives_hostile_input(client, query):
    response = client.get("/en/search/", {"model": query, "hardware": query}, headers={"HX-Request": "true"})
    assert response.status_code == 200
    assert "<script>alert" not in response.content.decode()


# ---- 404 --------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("url, suggestion, lang_text", [
    ("/en/model/glm-45/", 'href="/en/model/glm-4-5/"', "No model “glm-45” in the catalog"),
    ("/de/model/glm-45/", 'href="/de/model/glm-4-5/"', "Kein Modell „glm-45“ im Katalog"),
    ("/en/hardware/rtx4090/", 'href="/en/hardware/rtx-4090/"', "No accelerator “rtx4090” in the catalog"),
    ("/de/report/glm-4-5/rtx4090/", 'href="/de/report/glm-4-5/rtx-4090/"', "Kein Beschleuniger „rtx4090“ im Katalog"),
    ("/en/report/lama-3-1-8b/rtx-4090/", 'href="/en/report/llama-3-1-8b-instruct/rtx-4090/"', "No model"),
    ("/de/whatever/llama-3-1-8b-instruct/", 'href="/de/model/llama-3-1-8b-instruct/"', "Seite nicht gefunden"),
])
def test_unknown_slugs_get_a_404_with_suggestions_in_the_visitors_language(client, url, suggestion, lang_text):
    response = client.get(url)
    assert response.status_code == 404
    body = response.content.decode()
    assert suggestion in body and lang_text in body
    assert '<meta name="robots" content="noindex">' in body and 'rel="canonical"' not in body


@pytest.mark.parametrize("url, suggestion", [
    # A typo in a slug of a configured report suggested the report without its configuration.
    ("/de/report/llama-3-1-8b/rtx-4090/?quant=Q8_0&context=32768",
     'href="/de/report/llama-3-1-8b-instruct/rtx-4090/?quant=Q8_0&amp;context=32768"'),
    ("/en/model/glm-45/?sort=decode&order=desc", 'href="/en/model/glm-4-5/?sort=decode&amp;order=desc"'),
    # An unknown model of a comparison suggested model pages, not comparisons.
    ("/de/compare/qwen3-33b/?hardware=rtx-4090", 'href="/de/compare/qwen3-32b/?hardware=rtx-4090"'),
])
def test_a_404s_suggestions_are_the_same_page_with_the_same_query(client, url, suggestion):
    response = client.get(url)
    assert response.status_code == 404
    assert suggestion in response.content.decode()


@pytest.mark.parametrize("url, other", [("/de/gibtsnicht/", "/en/gibtsnicht/"), ("/en/foo/bar/", "/de/foo/bar/"),
                                        ("/de/model/gibtsnicht/", "/en/model/gibtsnicht/")])
def test_a_404s_language_switch_leads_to_the_other_language(client, url, other):
    """A path that resolves to nothing came back unchanged from translate_url: "EN" on /de/gibtsnicht/ linked the
    German page itself."""
    body = client.get(url).content.decode()
    language = other.split("/")[1]
    assert f'<a href="{other}" hreflang="{language}"' in body
    assert client.get(other).status_code == 404


# ---- query counts -----------------------------------------------------------------------------------------------

PAGES = ["/en/report/glm-4-5/instinct-mi325x-256gb/", "/en/model/glm-4-5/", "/en/hardware/rtx-4090/", "/en/"]


@pytest.mark.parametrize("url", PAGES)
def test_pages_make_a_small_number_of_queries_even_with_a_cold_snapshot(client, django_assert_max_num_queries,
                                                                         cold_snapshot, url):
    with django_assert_max_num_queries(MAX_QUERIES):
        assert client.get(url).status_code == 200


@pytest.mark.parametrize("url", PAGES[:3])
def test_query_count_does_not_grow_with_the_catalog(client, django_assert_num_queries, cold_snapshot, url):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as before:
        client.get(url)
    for number in range(3):
        accelerator = make_accelerator(name=f"Extra GPU {number}", slug=f"extra-gpu-{number}")
        make_model(name=f"Extra Llama {number}", slug=f"extra-llama-{number}")
        accelerator.prices.create(usd=1000 + number, as_of="2026-01-01", source="tests")
    estimates._snapshot_cache.clear()
    with django_assert_num_queries(len(before.captured_queries)):
        assert client.get(url).status_code == 200


@pytest.mark.parametrize("lang, expected", [("en", "launch MSRP · recorded"), ("de", "launch MSRP · erfasst am")])
def test_hardware_price_says_when_it_was_recorded_not_that_it_is_current(client, lang, expected):
    """A launch MSRP recorded in 2026 is not the price "as of" 2026: the note comes first, then the recording date."""
    body = re.sub(r"<[^>]+>", "", client.get(f"/{lang}/hardware/rtx-4090/").content.decode())
    assert expected in body


def test_listings_mark_speeds_of_models_without_layer_count(client):
    """On the hardware page and the home page a model without layer count shows "≤ … tok/s", the others "~"."""
    body = re.sub(r"\s+", " ", client.get("/en/hardware/rtx-4090/").content.decode())
    estimated = re.search(r">ERNIE 4.5 21B-A3B</a></th>(.*?)</tr>", body).group(1)
    sourced = re.search(r">Qwen3.5 35B-A3B</a></th>(.*?)</tr>", body).group(1)
    assert "≤ " in estimated and "~" not in estimated
    assert "~" in sourced and "≤" not in sourced
    home = re.sub(r"\s+", " ", client.get("/en/").content.decode())
    assert re.search(r">Cohere Command A 111B</a> <span class=\"muted\">[^<]*≤ ", home)


def test_compare_table_headers_name_every_column(client):
    """axe: the compare table's top-left header cell was empty."""
    body = client.get("/en/compare/llama-3-1-8b-instruct/?hw=rtx-4090&hw=h100-80gb-sxm").content.decode()
    head = re.search(r"<thead><tr>(.*?)</tr></thead>", body, re.S).group(1)
    assert all(re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<th[^>]*>(.*?)</th>", head, re.S))


def test_compare_column_that_cannot_be_sized_shows_dashes_not_not_published(client):
    """A column the engine refuses (vLLM on an Apple GPU) shows the reason once and "—" in its other cells; "not
    published" would claim a published-data gap where nothing was computed."""
    body = re.sub(r"\s+", " ", client.get("/en/compare/llama-3-1-8b-instruct/?hw=rtx-4090&hw=mac-mini-m4-pro-64gb"
                                          "&engine=vllm&kv_dtype=fp8").content.decode())
    assert "vLLM does not run on Mac mini M4 Pro 64GB; choose llama.cpp." in body  # worded for the page
    required = re.search(r'Required memory</th><td class="num">([^<]*)</td><td class="num">([^<]*)</td>', body)
    assert required.group(1).endswith("GiB") and required.group(2) == "—"


@pytest.mark.parametrize("lang, speed, ram", [("en", "~7.83 tok/s", "Q4_K_M, 103.83 GiB in system RAM"),
                                              ("de", "~7,83 tok/s", "Q4_K_M, 103,83 GiB im System-RAM")])
def test_hardware_and_model_pages_give_the_same_offloaded_speed(client, lang, speed, ram):
    """Qwen3-235B-A22B on an RTX 5090 fits in no format, but runs with llama.cpp's automatic offload: the model page's
    table gave its speed, the hardware page's a dash, so the two pages answered "how fast" differently."""
    _, catalog = estimates.current_catalog()
    model, hardware = catalog.model("qwen3-235b-a22b-instruct-2507"), catalog.hardware["rtx-5090"]
    plan = plan_memory(model, hardware, Scenario())
    assert plan.runs and plan.placement.offloaded_bytes > 100 * 2**30
    hardware_page = client.get(f"/{lang}/hardware/rtx-5090/").content.decode()
    row = re.search(r'Qwen3 235B-A22B Instruct 2507</a>.*?</tr>', hardware_page, re.S).group(0)
    assert speed in row and ram in row
    model_page = client.get(f"/{lang}/model/qwen3-235b-a22b-instruct-2507/").content.decode()
    model_row = re.search(r'>RTX 5090</a>.*?</tr>', model_page, re.S).group(0)
    assert speed in model_row


@pytest.mark.parametrize("query, kept, left_out", [("llama", "pick-model", "found-hardware"),
                                                    ("h100", "pick-hardware", "found-models")])
def test_a_site_search_leaves_out_the_side_it_matches_nothing_of(client, query, kept, left_out):
    """?q=llama filled the accelerator field with "llama" too and said "No accelerator matches “llama”"."""
    body = client.get(f"/de/search/?q={query}").content.decode()
    assert re.search(rf'id="{kept}" name="\w+" value="{query}"', body)
    assert len(re.findall(rf'value="{query}"', body)) == 1
    assert f'id="{left_out}"' not in body and "gefunden für" not in body
    nothing = client.get("/de/search/?q=xyzzy").content.decode()  # neither side: both say so
    assert "Kein Modell gefunden für „xyzzy“." in nothing and "Kein Beschleuniger gefunden für „xyzzy“." in nothing


def test_the_search_as_you_type_says_how_many_more_match_and_the_page_lists_them_all(client):
    """?q=qwen matches some 27 models: the list as you type showed 8 and stopped, without a word about the rest."""
    typed = client.get("/en/search/?q=qwen", HTTP_HX_REQUEST="true").content.decode()
    shown = len(re.findall(r'<li><a href="/en/model/', typed))
    more = re.search(r'<a href="/en/search/\?q=qwen">(\d+) more models match: all results</a>', typed)
    assert shown == 8 and more
    submitted = client.get("/en/search/?q=qwen").content.decode()
    assert len(re.findall(r'<li><a href="/en/model/', submitted)) == shown + int(more.group(1))
    assert "more models match" not in submitted


@pytest.mark.parametrize("path", ["/de/report/llama-3-3-70b-instruct/h100-80gb-sxm/", "/de/hardware/a100-80gb-sxm/"])
def test_cloud_offer_qualifiers_are_in_the_pages_language(client, path):
    """"(Verified Host · SXM4)", "(Dedicated Instance)" on German pages; seed 000 writes them in German."""
    body = client.get(path).content.decode()
    for english in ("Verified Host", "Dedicated Instance", "(on-demand)", "cheapest verified host"):
        assert english not in body
    assert "Verifizierter Host" in body or "Dedizierte Instanz" in body or "günstigster verifizierter Host" in body


def test_offer_instance_keeps_product_names():
    from django.utils import translation

    from reports.templatetags.labels import offer_instance

    with translation.override("de"):
        assert offer_instance("8x A100 80GB SXM (Verified Host · SXM4)") == "8x A100 80GB SXM (Verifizierter Host · SXM4)"
        assert offer_instance("1x H100 SXM (cheapest verified host)") == "1x H100 SXM (günstigster verifizierter Host)"
        assert offer_instance("1x B300 288GB Blackwell Ultra (Community Cloud)").endswith("(Community Cloud)")
    with translation.override("en"):
        assert offer_instance("1x H100 80GB (on-demand)") == "1x H100 80GB (on demand)"


def test_default_accelerator_prefers_one_sized_at_the_tables_format(client):
    """Qwen3-Next's page opened on an Ascend 910B at Q4_0 (CANN runs no Q4_K_M) under "holds it comfortably at
    Q4_K_M": an accelerator sized at the table's format comes first; another format only when none of those fits."""
    from dataclasses import replace as replaced

    from reports.sizing.specs import Scenario

    q4_0 = replaced(_row("ascend", 64, "fits"), opening=Scenario(quant="Q4_0"))
    assert default_accelerator([q4_0, _row("larger", 80, "fits")]).slug == "larger"
    assert default_accelerator([q4_0, _row("larger", 80, "exceeds")]).slug == "ascend"
    heading = re.search(r'<h2 id="default-heading">(.*?)</h2>',
                        client.get("/en/model/qwen3-next-80b-a3b-instruct/").content.decode()).group(1)
    assert heading != "On Ascend 910B 64GB"


def test_a_unified_memory_hardware_page_does_not_promise_offload(client):
    """The Mac pages said "where none fits, the speed with llama.cpp's automatic offload" beside rows showing "—"."""
    mac = html.unescape(client.get("/en/hardware/macbook-pro-m4-max-128gb/").content.decode())
    assert "has no separate system RAM to offload to" in mac and "automatic offload to system RAM" not in mac
    gpu = html.unescape(client.get("/en/hardware/rtx-4090/?vendor=Meta&fits=1").content.decode())
    assert "automatic offload to system RAM" in gpu
    assert re.search(r"\d+ of 83 models shown; \d+ of all 83 fit\.", gpu)


@pytest.mark.parametrize("path", ["/en/model/glm-4-5/", "/de/hardware/rtx-4090/", "/en/compare/gemma-3-27b-it/", "/de/"])
def test_every_page_links_the_methodology_its_footer_vouches_for(client, path):
    """The footer says the figures are checked against measurements; model, hardware and compare pages had no link
    to where that is shown."""
    language = path.split("/")[1]
    assert f'href="/{language}/methodology/"' in client.get(path).content.decode().split('class="site-footer"')[1]


def test_best_fitting_format_tries_the_larger_formats_when_the_smallest_is_refused():
    """vLLM cannot split Qwen3 Coder 480B's AWQ experts (width 2560) over 8 GPUs in 128-wide blocks; the shortcut
    "the smallest format does not fit, so none does" hid its FP8, which fits 8 × H100."""
    from reports.estimates import current_catalog
    from reports.pages import best_fitting_format
    from reports.sizing.estimate import default_scenario

    _, catalog = current_catalog()
    model, h100 = catalog.model("qwen3-coder-480b-a35b"), catalog.hardware["h100-80gb-sxm"]
    scenario = replace(default_scenario(model, h100, "vllm"), gpus=8)
    quant, plan = best_fitting_format(model, h100, scenario)
    assert quant == "FP8" and plan.fit.verdict in ("fits", "tight")
    assert best_fitting_format(model, catalog.hardware["rtx-4090"], replace(scenario, gpus=1)) is None  # floor


@pytest.mark.parametrize("lang", ["en", "de"])
@pytest.mark.parametrize("path", ["/", "/model/qwen3-30b-a3b-instruct-2507/", "/hardware/rtx-4090/", "/methodology/",
                                  "/compare/qwen3-30b-a3b-instruct-2507/", "/model/no-such-model/",
                                  "/report/gpt-oss-120b/h100-80gb-sxm/?engine=vllm&gpus=2&batch=8&quant=MXFP4"])
def test_no_template_syntax_reaches_a_page(client, lang, path):
    """A "{# … #}" comment over two lines is text to Django's template language, not a comment."""
    response = client.get(f"/{lang}{path}")
    assert response.status_code in (200, 404)
    leaked = re.search(r".{0,60}(?:\{[#%]|[#%]\}|\{\{|\}\}(?!\s*</script>)).{0,60}",
                       re.sub(r"<script.*?</script>", "", response.content.decode(), flags=re.S))
    assert leaked is None, leaked.group(0)


def test_german_hardware_pages_mark_english_catalog_text_and_name_the_vendor_once(client):
    a40 = client.get("/de/hardware/a40-48gb/").content.decode()
    assert '<span lang="en">PCIe 4.0 (NVLink bridge)</span>' in a40
    # The GeForce remark only beside a GeForce's rates; an AMD or Apple page has the plain label.
    assert "GeForce" in client.get("/en/hardware/rtx-4090/").content.decode()
    for slug in ("radeon-rx-7900-xtx-24gb", "mac-studio-m3-ultra-512gb", "h100-80gb-sxm"):
        body = client.get(f"/en/hardware/{slug}/").content.decode()
        assert "<dt>FP8 TFLOPS (dense)</dt>" in body and "GeForce" not in body
    compare = client.get("/en/compare/qwen3-8b/").content.decode()
    assert ">MetaX C500 64GB</option>" in compare and "MetaX MetaX" not in compare
    assert "Kunlunxin Kunlunxin" not in compare and ">NVIDIA RTX 4090</option>" in compare


def test_the_methodology_accuracy_checks_are_marked_english(client):
    body = client.get("/de/methodology/").content.decode()
    assert re.search(r'<th scope="row" lang="en">[^<]*vLLM', body)


@pytest.mark.parametrize("path, value", [("/en/hardware/rtx-4090/?gpus=abc", "abc"), ("/en/model/qwen3-8b/?sort=bogus", "bogus"),
                                         ("/en/hardware/rtx-4090/?vendor=Nobody", "Nobody"),
                                         ("/en/hardware/mac-studio-m3-ultra-512gb/?gpus=2", "2")])
def test_a_value_the_table_does_not_offer_is_a_400_with_the_page_and_a_message(client, path, value):
    response = client.get(path)
    body = response.content.decode()
    assert response.status_code == 400 and "<table" in body
    assert f"“{value}” is not a value this table offers" in body
    htmx = client.get(path, headers={"HX-Request": "true"})
    assert htmx.status_code == 400 and 'id="table-refused"' in htmx.content.decode()


def test_absent_and_offered_values_are_200(client):
    for path in ("/en/hardware/rtx-4090/", "/en/hardware/rtx-4090/?gpus=2&engine=vllm&sort=name&order=desc&vendor=&fits=1",
                 "/en/model/qwen3-8b/?sort=decode&vendor=AMD"):
        assert client.get(path).status_code == 200, path


def test_the_hardware_pages_tables_have_accessible_names(client):
    body = client.get("/en/hardware/rtx-4090/").content.decode()
    for table in re.findall(r"<table[^>]*>", body):
        assert "aria-labelledby" in table, table


# ---- state from report links and shared URLs -------------------------------------------------------------------

@pytest.mark.parametrize("path", [
    "/de/model/qwen3-8b/?engine=llama.cpp", "/de/model/qwen3-8b/?engine=vllm", "/de/model/qwen3-8b/?gpus=2",
    "/en/model/qwen3-8b/?quant=Q8_0&context=32768&kv_dtype=q8_0&batch=4&hours=8&offload=20&sort=decode",
    "/en/hardware/rtx-4090/?quant=Q8_0&context=32768&kv_dtype=q8_0&hours=8&gpus=2",
    # One engine runs there: the table reads no engine, so a shared link naming either is no bad request.
    "/en/hardware/mac-studio-m3-ultra-512gb/?engine=vllm", "/en/hardware/mac-studio-m3-ultra-512gb/?engine=llama.cpp",
])
def test_a_page_ignores_query_parameters_its_table_does_not_read(client, path):
    """Review: ?engine=llama.cpp on a model page answered 400 ("not a value this table offers for engine"), though
    the model page's table reads no engine, GPU count, format or context."""
    response = client.get(path)
    assert response.status_code == 200 and 'id="table-refused"' not in response.content.decode()


def test_a_gpu_count_the_select_does_not_list_is_sized_as_the_report_sizes_it(client):
    """A shared link for 3 × RTX 4090 shows 3 GPUs (the report's configurator takes 1 to 64), listed in the select,
    with report links on 3 GPUs: not a 400, nor another count's table under a notice."""
    response = client.get("/en/hardware/rtx-4090/?gpus=3")
    body = response.content.decode()
    assert response.status_code == 200 and "fit on 3 × RTX 4090." in body
    assert '<option value="3" selected>3</option>' in body and '<option value="8">8</option>' in body
    reports = re.findall(r'href="(/en/report/[^"]+)"', body.split('id="table"', 1)[1])
    assert reports and all("gpus=3" in link for link in reports)


@pytest.mark.parametrize("path, label", [("/en/hardware/rtx-4090/?gpus=abc", "GPU count"),
                                         ("/en/hardware/h100-80gb-sxm/?engine=sglang", "Inference engine"),
                                         ("/en/model/qwen3-8b/?sort=bogus", "Sort column"),
                                         ("/en/model/qwen3-8b/?order=up", "Sort order"),
                                         ("/en/model/qwen3-8b/?fits=maybe", "Only where it fits"),
                                         ("/en/hardware/rtx-4090/?fits=maybe", "Only models that fit")])
def test_a_refused_value_is_named_by_its_fields_label(client, path, label):
    response = client.get(path)
    body = html.unescape(response.content.decode())
    assert response.status_code == 400 and f"is not a value this table offers for “{label}”" in body


@pytest.mark.parametrize("report", [
    "/en/report/qwen3-8b/rtx-4090/", "/de/report/qwen3-8b/rtx-4090/?gpus=2&engine=vllm&quant=AWQ&context=32768",
    "/en/report/qwen3-8b/rtx-4090/?gpus=3&quant=Q8_0&kv_dtype=q8_0&batch=2",
    "/en/report/llama-3-1-8b-instruct/h100-80gb-sxm/?gpus=8&engine=vllm",
    "/en/report/llama-3-1-8b-instruct/mlu590-80gb/", "/en/report/gpt-oss-20b/mac-studio-m3-ultra-512gb/?context=32768",
])
def test_every_link_a_report_builds_to_a_model_or_hardware_page_answers_200(client, report):
    response = client.get(report)
    assert response.status_code == 200, report
    lang = report[1:3]
    links = set(re.findall(rf'href="(/{lang}/(?:model|hardware)/[^"#]+)', response.content.decode()))
    assert any("/model/" in link for link in links) and any("/hardware/" in link for link in links)
    for link in links:
        assert client.get(html.unescape(link)).status_code == 200, link


def test_usable_memory_is_the_engine_the_rows_are_sized_under(client):
    """Review: the H100's page under vLLM said "Usable for a model 76.0 GiB (95%)" (llama.cpp's 0.95 × 80 GiB)
    while its rows are judged against vLLM's 71.56 GiB: 0.9 × the memory the driver reports (vllm_budget_bytes,
    71.27 GiB) + the CUDA device context (300 MiB = 0.29 GiB). Each engine's figure is named, the table's first."""
    from reports.sizing.estimate import engine_usable_bytes

    _, catalog = estimates.current_catalog()
    h100 = catalog.hardware["h100-80gb-sxm"]
    vllm = engine_usable_bytes(h100, Scenario(engine="vllm"))
    assert round(vllm / 2**30, 2) == 71.56
    body = client.get("/en/hardware/h100-80gb-sxm/?engine=vllm").content.decode()
    usable = re.search(r'<div id="usable-memory">(.*?)</div>', body, re.S).group(1)
    assert re.findall(r"<dd>([\d.]+ GiB under [^ :]+)", usable) == ["71.6 GiB under vLLM", "76.0 GiB under llama.cpp"]
    body = client.get("/en/hardware/h100-80gb-sxm/").content.decode()
    usable = re.search(r'<div id="usable-memory">(.*?)</div>', body, re.S).group(1)
    assert re.findall(r"<dd>([\d.]+ GiB under [^ :]+)", usable) == ["76.0 GiB under llama.cpp", "71.6 GiB under vLLM"]
    # The htmx answer to an engine switch brings the order along.
    partial = client.get("/en/hardware/h100-80gb-sxm/?engine=vllm", headers={"HX-Request": "true"}).content.decode()
    assert '<div id="usable-memory" hx-swap-oob="true">' in partial


def test_a_model_pages_row_sized_under_vllm_shows_vllms_usable_memory(client):
    """Review: Llama 3.1 8B's MLU590 row (vLLM: llama.cpp has no backend there) read 76.0 GiB, llama.cpp's share,
    beside the 71.3 GiB it is sized against."""
    from reports.pages import model_page
    from reports.sizing.estimate import engine_usable_bytes

    _, catalog = estimates.current_catalog()
    page = model_page(catalog.model_row("llama-3-1-8b-instruct"), QueryDict(), catalog, report_for=lambda h: None)
    rows = {row.hardware.slug: row for row in page.rows}
    for row in rows.values():
        assert row.usable_bytes == engine_usable_bytes(row.hardware, row.opening)
    mlu = rows["mlu590-80gb"]
    assert mlu.opening.engine == "vllm" and round(mlu.usable_bytes / 2**30, 1) == 71.3
    body = client.get("/en/model/llama-3-1-8b-instruct/").content.decode()
    assert "71.3 GiB (vLLM)" in body and "76.0 GiB (vLLM)" not in body


def test_the_reports_every_model_link_keeps_a_gpu_count_the_hardware_page_sizes(client):
    """The hardware page sizes any GPU count the configurator takes (3 × RTX 4090 from a shared link): the report's
    "every model on …" link keeps the visitor's 3 as it keeps 2, 4 or 8."""
    body = html.unescape(client.get("/en/report/qwen3-8b/rtx-4090/?gpus=3").content.decode())
    assert 'href="/en/hardware/rtx-4090/?gpus=3"' in body
    unified = html.unescape(client.get("/en/report/qwen3-8b/mac-studio-m3-ultra-256gb/").content.decode())
    assert 'href="/en/hardware/mac-studio-m3-ultra-256gb/"' in unified
