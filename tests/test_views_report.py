"""The report page: full page, htmx partial, GET state, validation, both languages, the catalog's hard cases."""

import html
import re

import pytest

from reports.templatetags.labels import kv_dtype_label


# The seed catalog is in the test database (conftest.django_db_setup loads it once per session).
pytestmark = pytest.mark.django_db

# Dense GQA, MoE+GQA, MLA+DSA, sliding window, hybrid linear attention, an estimated model without config.json.
SAMPLE_PAIRS = [
    ("llama-3-1-8b-instruct", "rtx-4090"),
    ("glm-4-5", "instinct-mi325x-256gb"),
    ("glm-5", "instinct-mi325x-256gb"),
    ("gemma-3-27b-it", "rtx-3090"),
    ("qwen3-next-80b-a3b-instruct", "h100-80gb-sxm"),
    ("gpt-oss-120b", "mac-studio-m3-ultra-512gb"),
    ("kimi-k3-2-8t-a104b", "b300-288gb"),  # MLA + Kimi Delta Attention, latent MoE
    ("ernie-4-5-300b-a47b", "b300-288gb"),  # estimated: no config.json
    ("cohere-command-a-111b", "a100-80gb-sxm"),  # no config.json and no family member: KV unknown
    ("deepseek-v4-flash", "b200-180gb"),  # DeepSeek-V4 compressed attention (CSA/HCA)
]


def url(model, hardware, lang="en", query=""):
    return f"/{lang}/report/{model}/{hardware}/" + (f"?{query}" if query else "")


@pytest.mark.parametrize("model, hardware", SAMPLE_PAIRS)
@pytest.mark.parametrize("lang", ["en", "de"])
def test_every_section_renders_for_the_hard_cases(client, db, model, hardware, lang):
    response = client.get(url(model, hardware, lang))
    assert response.status_code == 200, response.content[:500]
    body = response.content.decode()
    for section in ("fit", "speed", "how", "launch", "simulator", "cloud", "finetune", "notes", "chart", "matrix",
                    "faq", "links"):
        assert f'id="{section}"' in body, section
    assert f'<html lang="{lang}">' in body


def test_page_shows_the_engines_figures(client, db):
    body = client.get(url("glm-4-5", "instinct-mi325x-256gb")).content.decode()
    # GLM-4.5 at 8K with FP16 KV: 2 × 92 layers × 8 KV heads × 128 × 2 B × 8,192 = 2.875 GiB (seed: 2.88)
    assert "2.88 GiB" in body
    assert "Fits with safe headroom" in body
    assert "llama-server -hf unsloth/GLM-4.5-GGUF:Q4_K_M" in body


@pytest.mark.parametrize("lang, labels, total", [
    ("en", ("Sliding window (every layer)", "Compressed cache, 4× (CSA)", "Indexer keys (CSA)",
            "Compressed cache, 128× (HCA)", "Compressor state"), "0.88 GiB"),
    ("de", ("Gleitendes Fenster (jede Schicht)", "Komprimierter Cache, 4× (CSA)", "Indexer-Schlüssel (CSA)",
            "Komprimierter Cache, 128× (HCA)", "Kompressor-Zustand"), "0,88 GiB"),
])
def test_deepseek_v4_kv_cache_is_derived_by_layer_kind(client, db, lang, labels, total):
    """DeepSeek-V4 Flash at 131,072 tokens under llama.cpp: 947,798,016 B = 0.88 GiB (tests/engine/test_deepseek_v4)
    in five parts, each named in the page's language; vLLM's 16-bit cache is refused beside the field."""
    body = client.get(url("deepseek-v4-flash", "h100-80gb-sxm", lang, "gpus=8&context=131072")).content.decode()
    for label in labels:
        assert label in body, label
    assert total in body
    refused = client.get(url("deepseek-v4-flash", "h100-80gb-sxm", lang,
                             "gpus=8&engine=vllm&kv_dtype=f16&quant=FP8_FP4"))
    assert refused.status_code == 400
    assert ("own FP8 layout" if lang == "en" else "eigenen FP8-Format") in refused.content.decode()
    # vLLM has no DeepSeek-V4 GGUF loader: a GGUF format under vLLM is refused, and the page's vLLM command serves
    # the released checkpoint instead of the GGUF file.
    gguf = client.get(url("deepseek-v4-flash", "h100-80gb-sxm", lang, "gpus=8&engine=vllm&kv_dtype=fp8&quant=Q4_K_M"))
    assert gguf.status_code == 400
    assert "FP8_FP4" in gguf.content.decode()
    assert "vllm serve deepseek-ai/DeepSeek-V4-Flash" in body and "vllm serve ./deepseek-v4-flash" not in body


def _section(body: str, section_id: str) -> str:
    start = body.index(f'id="{section_id}"')
    return body[start:body.index("</section>", start)]


def test_the_quantization_matrix_lists_only_formats_the_engine_loads(client, db):
    """llama.cpp runs GGUF files: DeepSeek-V4's released FP8_FP4 checkpoint is a vLLM row only, and vLLM has no
    DeepSeek-V4 GGUF loader, so its matrix has no GGUF rows."""
    llama = _section(client.get(url("deepseek-v4-flash", "h100-80gb-sxm", query="gpus=8")).content.decode(), "matrix")
    vllm = _section(client.get(url("deepseek-v4-flash", "h100-80gb-sxm",
                                   query="gpus=8&engine=vllm&kv_dtype=fp8&quant=FP8_FP4")).content.decode(), "matrix")
    assert "FP8_FP4" not in llama and "Q4_K_M" in llama
    assert "FP8_FP4" in vllm and "Q4_K_M" not in vllm


def test_german_page_uses_german_number_format(client, db):
    body = client.get(url("glm-4-5", "instinct-mi325x-256gb", "de")).content.decode()
    assert "2,88 GiB" in body
    assert "Passt mit sicherer Reserve" in body


def test_htmx_request_gets_only_the_results_partial(client, db):
    full = client.get(url("llama-3-1-8b-instruct", "rtx-4090", query="context=32768"))
    partial = client.get(url("llama-3-1-8b-instruct", "rtx-4090", query="context=32768"),
                         headers={"HX-Request": "true"})
    assert partial.status_code == 200
    assert "<html" not in partial.content.decode()
    assert 'id="fit"' in partial.content.decode()
    assert 'id="configurator"' not in partial.content.decode()
    # The neighbour links keep the configuration: swapped out of band by the second request (part=details), so
    # that the first answer stays small (bench/web.py: a quarter of the page at most).
    assert 'id="links"' not in partial.content.decode()
    assert len(partial.content) < len(full.content) / 4
    assert "HX-Request" in partial["Vary"]


def test_query_string_changes_the_numbers(client, db):
    base = client.get(url("llama-3-1-8b-instruct", "rtx-4090")).content.decode()
    longer = client.get(url("llama-3-1-8b-instruct", "rtx-4090", query="context=131072")).content.decode()
    # Llama-3.1-8B KV: 131,072 B/token → 1.00 GiB at 8K, 16.00 GiB at 128K
    assert "1.00 GiB" in base and "16.00 GiB" in longer


@pytest.mark.parametrize("query, field, message", [
    ("context=99999999", "context", "at most"),
    ("gpus=abc", "gpus", "whole number"),
    ("quant=NOPE", "quant", "valid choice"),
    ("gpus=3&engine=vllm", "gpus", "divisible"),
    ("engine=vllm&gpu_memory_utilization=1.5", "gpu_memory_utilization", "less than or equal to 1"),
    ("engine=vllm&gpu_memory_utilization=0", "gpu_memory_utilization", "greater than or equal to 0.1"),
    ("gpu_memory_utilization=most", "gpu_memory_utilization", "Enter a number"),
])
def test_invalid_values_get_a_message_beside_the_field_and_a_400(client, db, query, field, message):
    response = client.get(url("llama-3-1-8b-instruct", "rtx-4090", query=query))
    assert response.status_code == 400
    body = response.content.decode()
    error = re.search(rf'<div id="id_{field}_error" class="field-error" role="alert">(.*?)</div>', body, re.S)
    assert error and message in error.group(1), body[:2000]


@pytest.mark.parametrize("htmx", [False, True])
def test_a_refused_cost_input_keeps_the_report_and_flags_only_rent_vs_buy(client, db, htmx):
    """hours=30 replaced memory, speed and launch commands with "This configuration cannot be computed": the
    configuration does not read the rent-vs-buy inputs, so the report stays (at Q8_0, as asked) and the cloud section
    says which hours it used; the answer is still a 400 with the message beside the field."""
    headers = {"HX-Request": "true"} if htmx else {}
    response = client.get(url("llama-3-1-8b-instruct", "rtx-4090", query="hours=30&kwh=0.3&quant=Q8_0"), headers=headers)
    assert response.status_code == 400
    body = response.content.decode()
    assert 'id="fit"' in body and "cannot be computed" not in body
    assert re.search(r'<div id="id_hours_error" class="field-error" role="alert"[^>]*>[^<]*less than or equal to 24',
                     body)
    if htmx:  # the cloud section comes in the second request, which carries the same query
        body = client.get(url("llama-3-1-8b-instruct", "rtx-4090", query="hours=30&kwh=0.3&quant=Q8_0&part=details"),
                          headers=headers).content.decode()
    assert "until it is corrected, these figures use 4 h/day and $0.300/kWh" in body  # the valid kwh is kept
    assert "of weights at Q8_0" in client.get(url("llama-3-1-8b-instruct", "rtx-4090",
                                                  query="hours=30&quant=Q8_0")).content.decode()
    # Links to other configurations leave the refused value out (the language switch keeps the URL as it is).
    assert "hours=30" not in body[body.index('id="cloud"' if htmx else 'id="fit"'):]
    if not htmx:  # "describe your own hardware" too: that page would refuse it again
        configurator = body[body.index('id="configurator"'):body.index('id="results"')]
        assert "/custom/" in configurator and "hours=30" not in configurator


@pytest.mark.parametrize("query, asked, used", [("engine=vllm&kv_dtype=q8_0", "q8_0", "fp8"),
                                                ("engine=vllm&kv_dtype=q4_0", "q4_0", "fp8"),
                                                ("engine=llama.cpp&kv_dtype=fp8", "fp8", "q8_0")])
def test_the_other_engines_kv_type_becomes_this_engines(client, db, query, asked, used):
    """Switching the engine with a quantized KV cache chosen refused the whole report under the field the visitor
    had not touched ("vLLM has no q8_0 KV cache"): the cache takes the engine's own 8-bit type. A plain GET is sent
    to the URL of that state; htmx gets the results, the select showing it, a sentence and that URL to push."""
    path = url("llama-3-1-8b-instruct", "rtx-4090", query=query)
    response = client.get(path)
    assert response.status_code == 302
    state = path.replace(f"kv_dtype={asked}", f"kv_dtype={used}")
    assert response["Location"] == f"{state}&kv_replaced={asked}"
    # Without JavaScript the page redirected to says why its select shows another type, as the htmx answer does.
    landed = client.get(response["Location"]).content.decode()
    notice = re.search(r'id="kv-replaced"[^>]*>(.*?)</p>', landed, re.S)
    # The type asked for by its short name ("vLLM has no Q8_0 KV cache: the configuration uses FP8 (8-bit) instead";
    # it read "has no Q8_0 (8-bit) KV cache: … its FP8 (8-bit) cache").
    assert notice and f"has no {asked.upper()} KV cache: the configuration uses {kv_dtype_label(used)} instead" in notice[1]
    assert 'hx-swap-oob' not in landed and 'id="kv-replaced"' not in client.get(state).content.decode()
    assert_htmx_replacement(client, path, state, "kv", used)


def assert_htmx_replacement(client, path: str, state: str, kind: str, used: str) -> str:
    """An htmx change that replaced the KV type ("kv") or the format ("quant"): the results with the notice, the
    replaced select swapped out of band showing what is used, the state's URL pushed; the details request pushes
    nothing. The results partial."""
    field = {"kv": "kv_dtype", "quant": "quant"}[kind]
    htmx = client.get(path, headers={"HX-Request": "true"})
    partial = htmx.content.decode()
    assert htmx.status_code == 200 and htmx["HX-Push-Url"] == state
    assert 'id="fit"' in partial and f'id="{kind}-replaced"' in partial
    assert re.search(rf'<select hx-swap-oob="true" id="id_{field}" name="{field}">.*?value="{used}" selected',
                     partial, re.S)
    details = client.get(path + "&part=details", headers={"HX-Request": "true"})
    assert details.status_code == 200 and "HX-Push-Url" not in details  # the second request pushes nothing
    return partial


QUANT_NOTICE = {
    "en": "llama.cpp runs GGUF files, not {asked} (a vLLM checkpoint format): the configuration uses {used}, the "
          "nearest GGUF format, instead. To size {asked}, choose the vLLM engine, then {asked} again.",
    "de": "llama.cpp führt GGUF-Dateien aus, kein {asked} (ein Checkpoint-Format für vLLM): Die Konfiguration "
          "verwendet stattdessen {used}, das nächstliegende GGUF-Format. Um {asked} zu berechnen, wählen Sie die "
          "Engine vLLM und dann wieder {asked}.",
}


# The nearest GGUF of each vLLM-only format (forms.QUANT_OF_ENGINE): AWQ and GPTQ (4-bit integer weights, group
# 128) → Q4_K_M, FP8 (8 bits) → Q8_0.
@pytest.mark.parametrize("lang", ["en", "de"])
@pytest.mark.parametrize("asked, used", [("AWQ", "Q4_K_M"), ("GPTQ", "Q4_K_M"), ("FP8", "Q8_0")])
def test_switching_to_llama_cpp_replaces_a_vllm_checkpoint_format_with_the_nearest_gguf(client, db, lang, asked,
                                                                                         used):
    """A vLLM report in AWQ, GPTQ or FP8 switched to llama.cpp was refused ("AWQ is a vLLM checkpoint format") under
    the format field the visitor had not touched: the format becomes the nearest GGUF, as the KV type does. A plain
    GET is sent to the URL of that state; htmx gets the results, the select showing it, a sentence and that URL."""
    path = url("llama-3-1-8b-instruct", "rtx-4090", lang, f"engine=llama.cpp&quant={asked}&kv_dtype=auto")
    response = client.get(path)
    assert response.status_code == 302
    state = path.replace(f"quant={asked}", f"quant={used}")
    assert response["Location"] == f"{state}&quant_replaced={asked}"
    landed = client.get(response["Location"])
    assert landed.status_code == 200
    body = landed.content.decode()
    notice = re.search(r'<p class="card notice" id="quant-replaced" role="status">(.*?)</p>', body, re.S)
    assert notice and 'id="fit"' in body and 'hx-swap-oob' not in body
    assert re.search(rf'<select id="id_quant" name="quant"[^>]*>.*?value="{used}" selected', body, re.S)
    assert f"at {used}" in body or f"in {used}" in body  # the report is sized in the replacement
    assert 'id="quant-replaced"' not in client.get(state).content.decode()  # the state itself says nothing
    partial = assert_htmx_replacement(client, path, state, "quant", used)
    assert 'id="id_kv_dtype"' not in partial  # only the replaced select is swapped
    assert html.unescape(notice[1]) == QUANT_NOTICE[lang].format(asked=asked, used=used)


def test_a_format_and_a_kv_type_of_vllm_are_replaced_together(client, db):
    """vLLM's GPTQ with an FP8 cache, switched to llama.cpp: both selects take llama.cpp's nearest, in one URL."""
    path = url("llama-3-1-8b-instruct", "rtx-4090", query="engine=llama.cpp&quant=GPTQ&kv_dtype=fp8")
    response = client.get(path)
    assert response.status_code == 302
    assert response["Location"] == url("llama-3-1-8b-instruct", "rtx-4090", query=(
        "engine=llama.cpp&quant=Q4_K_M&kv_dtype=q8_0&kv_replaced=fp8&quant_replaced=GPTQ"))
    landed = client.get(response["Location"]).content.decode()
    assert 'id="quant-replaced"' in landed and 'id="kv-replaced"' in landed
    partial = client.get(path, headers={"HX-Request": "true"})
    body = partial.content.decode()
    assert partial["HX-Push-Url"] == url("llama-3-1-8b-instruct", "rtx-4090",
                                         query="engine=llama.cpp&quant=Q4_K_M&kv_dtype=q8_0")
    assert body.count('hx-swap-oob="true"') >= 2
    assert 'hx-swap-oob="true" id="id_quant"' in body and 'hx-swap-oob="true" id="id_kv_dtype"' in body


def test_deepseek_v4s_fp8_fp4_release_becomes_the_mxfp4_moe_gguf(client, db):
    """FP8_FP4 (FP4 experts in the MXFP4 layout, the rest FP8) → MXFP4_MOE (MXFP4 experts, the rest Q8_0)."""
    from reports.forms import ConfiguratorForm
    from reports.estimates import current_catalog

    _, catalog = current_catalog()
    model = next(catalog.model(slug) for slug in catalog.model_slugs
                 if catalog.model(slug).native_dtype == "fp8_fp4")
    form = ConfiguratorForm({"engine": "llama.cpp", "quant": "FP8_FP4"}, quant_names=catalog.quant_names,
                            max_context=model.max_context, default_budget=None, model=model,
                            hardware=catalog.hardware["h100-80gb-sxm"])
    assert form.is_valid(), form.errors
    assert form.cleaned_data["quant"] == "MXFP4_MOE" and form.replaced == {"quant": ("FP8_FP4", "MXFP4_MOE")}


def test_an_unknown_format_stays_refused_beside_its_field(client, db):
    response = client.get(url("llama-3-1-8b-instruct", "rtx-4090", query="engine=llama.cpp&quant=NOPE"))
    assert response.status_code == 400 and "quant_replaced" not in response.get("Location", "")
    assert 'id="id_quant_error"' in response.content.decode()


def test_vllms_memory_share_is_advised_applied_and_kept_by_every_link(client, db):
    """Llama 3.3 70B at FP8 misses one H100 under vLLM's default budget (0.9) and fits at 0.95: the advice says so
    and links to it; at 0.95 the launch line, the summary and every link to another configuration keep it."""
    path = url("llama-3-3-70b-instruct", "h100-80gb-sxm")
    at_default = client.get(path + "?engine=vllm&quant=FP8").content.decode()
    advice = at_default[at_default.index('id="advice"'):at_default.index('id="recommend"')]
    assert "--gpu-memory-utilization 0.95" in advice
    assert "gpu_memory_utilization=0.95" in advice
    assert "gpu_memory_utilization=" not in at_default[at_default.index('id="matrix"'):]  # the default stays out
    raised = client.get(path + "?engine=vllm&quant=FP8&gpu_memory_utilization=0.95")
    assert raised.status_code == 200
    body = raised.content.decode()
    assert "--gpu-memory-utilization 0.95" in body and "--gpu-memory-utilization 0.9 " not in body
    if 'id="advice"' in body:  # tight at 0.95: the other options remain, a larger share is not among them
        assert "--gpu-memory-utilization" not in body[body.index('id="advice"'):body.index('id="recommend"')]
    links = re.findall(r'href="(/en/report/[^"]+\?[^"]+)"', body)
    configured = [link for link in links if "engine=vllm" in link]
    assert configured and all("gpu_memory_utilization=0.95" in link for link in configured), configured[:5]


def test_the_format_list_offers_expert_only_formats_to_models_with_experts(client, db):
    def offered(html: str) -> set[str]:
        select = html[html.index('name="quant"'):]
        return set(re.findall(r'<option value="([^"]+)"', select[:select.index("</select>")]))

    dense = offered(client.get(url("llama-3-1-8b-instruct", "rtx-4090")).content.decode())
    assert {"Q4_K_M", "FP8", "Q8_0"} <= dense and not {"MXFP4", "FP8_FP4", "MXFP4_MOE"} & dense
    assert {"MXFP4", "FP8_FP4", "MXFP4_MOE"} <= offered(client.get(url("gpt-oss-20b", "rtx-4090")).content.decode())
    # A URL that asks for one anyway keeps it selected beside the engine's reason.
    asked = client.get(url("llama-3-1-8b-instruct", "rtx-4090", query="quant=MXFP4"))
    assert asked.status_code == 400
    body = asked.content.decode()
    assert "MXFP4" in offered(body) and "quantize MoE experts" in body


@pytest.mark.parametrize("lang, tokens, question", [
    ("en", "53,504 tokens", "What is the longest context Llama 3.1 8B Instruct can use on RTX 3060 12GB?"),
    ("de", "53.504 Tokens", "Wie lang darf der Kontext von Llama 3.1 8B Instruct auf RTX 3060 12GB höchstens sein?"),
])
def test_the_longest_context_that_fits_is_shown_linked_and_answered(client, db, lang, tokens, question):
    response = client.get(f"/{lang}/report/llama-3-1-8b-instruct/rtx-3060-12gb/?context=8192")
    body = response.content.decode()
    stat = body[body.index('id="longest-context"'):]
    stat = stat[:stat.index("</div>")]
    assert tokens in stat
    assert "context=53504" in stat  # "apply": the same configuration at that context
    assert question in body
    applied = client.get(re.search(r'href="([^"]+context=53504[^"]*)"', stat).group(1).replace("&amp;", "&"))
    assert applied.status_code == 200
    applied_body = applied.content.decode()
    assert 'class="card fit verdict-tight"' in applied_body or 'class="card fit verdict-fits"' in applied_body
    # The context select shows that value with the visitor's grouping (it read "53504").
    grouped = {"en": "53,504", "de": "53.504"}[lang]
    assert f'<option value="53504" selected>{grouped}</option>' in applied_body


@pytest.mark.parametrize("lang, stat_text, answer", [
    ("en", "not even 256 tokens fit in GPU memory without offload",
     "It runs only with part of the model in system RAM (llama.cpp's automatic offload), more slowly."),
    ("de", "ohne Auslagerung passen nicht einmal 256 Tokens in den GPU-Speicher",
     "Es läuft nur mit einem Teil des Modells im System-RAM (automatische Auslagerung von llama.cpp), langsamer."),
])
def test_no_longest_context_on_an_offloaded_page_says_without_offload(client, db, lang, stat_text, answer):
    """Llama 3.3 70B on an RTX 3060 runs with 31 GiB in system RAM; "none" beside that read as a contradiction, and
    the FAQ went on "Longer contexts run with part of the model in system RAM" after "none"."""
    body = html.unescape(client.get(f"/{lang}/report/llama-3-3-70b-instruct/rtx-3060-12gb/").content.decode())
    stat = body[body.index('id="longest-context"'):]
    assert stat_text in stat[:stat.index("</div>")]
    assert answer in body and "Longer contexts run" not in body and "Längere Kontexte laufen" not in body


def test_the_shares_range_is_written_in_the_visitors_number_format(client, db):
    body = client.get("/de/report/llama-3-1-8b-instruct/rtx-4090/?engine=vllm&kv_dtype=auto"
                      "&gpu_memory_utilization=0.05").content.decode()
    error = re.search(r'<div id="id_gpu_memory_utilization_error"[^>]*>(.*?)</div>', body, re.S).group(1)
    assert "0,1" in error and "0.1" not in error


@pytest.mark.parametrize("query, field, message", [
    ("hours=0", "hours", "größer oder gleich 0,5"),  # was "0.5"
    ("budget=1e12", "budget", "kleiner oder gleich 100.000.000"),  # was "100000000.0"
    ("kwh=0,30", "kwh", "Nachkommastellen mit Punkt (0.3, nicht 0,3)"),  # was "Bitte eine Zahl eingeben."
])
def test_number_limits_and_formats_are_told_in_the_visitors_language(client, db, query, field, message):
    response = client.get(f"/de/report/llama-3-1-8b-instruct/rtx-4090/?{query}")
    assert response.status_code == 400
    error = re.search(rf'<div id="id_{field}_error"[^>]*>(.*?)</div>', response.content.decode(), re.S).group(1)
    assert message in error


def test_custom_hardwares_limits_are_in_the_visitors_number_format(client, db):
    body = client.get("/de/report/llama-3-1-8b-instruct/custom/?memory_gb=0&bandwidth_gbs=1000").content.decode()
    error = re.search(r'<div id="id_memory_gb_error"[^>]*>(.*?)</div>', body, re.S).group(1)
    assert "0,1" in error and "0.1" not in error


def test_refused_select_values_stay_selected_beside_their_message(client, db):
    """?gpus=0&batch=abc showed "1" selected under "must be at least 1": the message was about a value the field
    did not show. The summary counted "the highlighted field" for three."""
    response = client.get("/en/report/llama-3-1-8b-instruct/rtx-4090/?gpus=0&batch=abc&context=99999999")
    assert response.status_code == 400
    body = response.content.decode()
    for name, value in (("gpus", "0"), ("batch", "abc"), ("context", "99999999")):
        select = re.search(rf'<select[^>]*name="{name}".*?</select>', body, re.S).group(0)
        assert re.findall(r'<option value="([^"]*)" selected', select) == [value]
    assert "Please correct the 3 highlighted fields." in body


def test_the_budget_placeholder_is_digits_the_input_takes(client, db):
    body = client.get("/de/report/llama-3-1-8b-instruct/rtx-4090/").content.decode()
    placeholder = re.search(r'<input[^>]*name="budget"[^>]*placeholder="([^"]*)"', body).group(1)
    assert placeholder == "1599 je GPU"  # "1.599 $ je GPU" invited "21.000", which the number input reads as 21


def test_unknown_slugs_are_404(client, db):
    assert client.get(url("no-such-model", "rtx-4090")).status_code == 404
    assert client.get(url("llama-3-1-8b-instruct", "no-such-gpu")).status_code == 404


def test_an_estimated_model_is_marked_estimated(client, db):
    body = client.get(url("ernie-4-5-300b-a47b", "b300-288gb")).content.decode()
    assert "badge-estimated" in body
    # Kimi K3 has its config.json now (kimi_linear: MLA + Kimi Delta Attention): derived, not estimated.
    assert "badge-estimated" not in client.get(url("kimi-k3-2-8t-a104b", "b300-288gb")).content.decode()


def test_a_model_without_shapes_says_what_is_unknown(client, db):
    """DeepSeek V4.1 Flash has no config.json and no sourced family member: its KV cache, the split of its weights
    by tensor class and vLLM's pool are unknown, and the page says so instead of showing zeros."""
    body = client.get(url("deepseek-v4-1-flash-552b-a16b", "h100-80gb-sxm", query="gpus=8")).content.decode()
    legend = body[body.index('class="legend"'):body.index("</ul>", body.index('class="legend"'))]
    assert "<strong>unknown</strong>" in legend
    assert "The split by tensor class is unknown" in body and "Norms, biases, routers" not in body
    assert "the logits peak is not counted" in body
    assert "KV pool cannot be sized without the model" in body  # why there is no vLLM command
    hardware = client.get("/en/hardware/b300-288gb/").content.decode()  # where a format fits
    row = hardware[hardware.index("DeepSeek V4.1 Flash"):]
    assert row[:row.index("</tr>")].count("≥ ") == 1  # the total, without its KV cache, is a lower bound


def test_fine_tuning_memory_does_not_depend_on_the_serving_engine(client):
    """Training does not run inside vLLM: its gpu_memory_utilization budget must not change the fine-tuning verdicts
    (the section is the same for every configuration of a report)."""
    def section(query: str) -> str:
        html = client.get(f"/en/report/hunyuan-a13b-instruct/l40s-48gb/?{query}").content.decode()
        start = html.index('id="finetune"')
        return html[start:html.index("</section>", start)]

    # QLoRA of Hunyuan-A13B needs 44.36 GiB: within an L40S's usable 45.6 GiB, above the 43.06 GiB vLLM can use
    # (0.9 × 47.51 GiB reported + 0.29 GiB of CUDA context).
    llama = section("engine=llama.cpp&kv_dtype=f16")
    assert section("engine=vllm&kv_dtype=f16&context=32768") == llama
    assert "Fits on 1 × L40S 48GB" in llama.split("</article>")[0]


@pytest.mark.parametrize("lang, caption_text, more_text", [("en", "{n} of {n} catalog", "{more} more offers"),
                                                           ("de", "{n} von {n} Cloud-Angeboten", "{more} weitere Angebote")])
def test_offers_beyond_the_first_eight_are_counted_in_the_visitors_language(client, db, lang, caption_text, more_text):
    """Llama 3.1 8B at Q4_K_M and 8K fits on every catalog cloud offer: 8 in the table, the rest behind "more"
    (the German text once said "Alle 25 Modelle", a msgmerge guess kept by mistake)."""
    from catalog.models import CloudOffer

    offers = CloudOffer.objects.filter(is_active=True).count()
    assert offers > 9
    body = client.get(url("llama-3-1-8b-instruct", "rtx-4090", lang)).content.decode()
    caption = re.search(r"<caption>(.*?)</caption>", body[body.index('id="cloud"'):], re.S).group(1)
    assert caption_text.format(n=offers) in caption
    assert f"<summary>{more_text.format(more=offers - 8)}</summary>" in body
    # The further offers' table has the column headers of the first (a table of bare cells to a screen reader).
    more = body[body.index(f"<summary>{more_text.format(more=offers - 8)}</summary>"):]
    assert re.match(r"</summary>\s*<div class=\"table-wrap\"><table class=\"data\"><thead><tr><th scope=\"col\">",
                    more[more.index("</summary>"):])


@pytest.mark.parametrize("lang, gpus, expected", [
    ("en", 1, "One RTX 4090 (22.8 GiB usable) runs Llama"), ("en", 2, "2 × RTX 4090 (22.8 GiB usable each) run Llama"),
    ("de", 1, "Auf 1 × RTX 4090 (22,8 GiB nutzbar) läuft Llama"), ("de", 2, "Auf 2 × RTX 4090 (je 22,8 GiB nutzbar) läuft Llama"),
])
def test_verdict_note_agrees_with_the_gpu_count(client, db, lang, gpus, expected):
    """German keeps "1 ×" in the singular: an article would need each accelerator's gender (die RTX, der Mac)."""
    body = client.get(url("llama-3-1-8b-instruct", "rtx-4090", lang, f"gpus={gpus}")).content.decode()
    notes = body[body.index('id="notes"'):]
    assert expected in re.sub(r"\s+", " ", notes[:3000])


@pytest.mark.parametrize("lang, product", [("en", "= 131\u202f072 B/token × 8\u202f192 cells"),
                                           ("de", "= 131\u202f072 B/Token × 8\u202f192 Zellen")])
def test_formula_numbers_read_the_same_in_both_languages(client, db, lang, product):
    """"131,072 B/token" would read as 131.072 in German, so the formulas group digits by narrow no-break spaces
    (reports/sizing/explain.py) in both languages; their words are the page's language (labels.formula)."""
    body = client.get(url("llama-3-1-8b-instruct", "rtx-4090", lang)).content.decode()
    formulas = " ".join(re.findall(r"<code[^>]*>(.*?)</code>", body[body.index('id="how"'):body.index('id="recommend"')]))
    assert product in formulas
    assert not re.search(r"\d[,.]\d{3}\b", formulas)  # no locale's group separator in any formula


@pytest.mark.parametrize("lang, expected", [("en", "on RunPod, 1 × RTX 3090 at"), ("de", "bei RunPod, 1 × RTX 3090 zu")])
def test_cost_line_counts_the_offers_gpus(client, db, lang, expected):
    body = client.get(url("llama-3-1-8b-instruct", "rtx-4090", lang)).content.decode()
    assert expected in body and "GPU(s)" not in body


@pytest.mark.parametrize("lang", ["en", "de"])
def test_speeds_of_a_model_without_layer_count_are_bounds(client, db, lang):
    """ERNIE 4.5 21B-A3B has no config.json and no sourced family member: its speeds leave out the per-layer kernel
    time (Qwen3.5-35B-A3B on the same card: 3.30 of 5.55 ms per token), so the page shows bounds, never "~"."""
    body = re.sub(r"\s+", " ", client.get(url("ernie-4-5-21b-a3b", "rtx-4090", lang)).content.decode())
    speed = body[body.index('id="speed"'):body.index('id="how"')]
    assert "≤ " in speed and "≥ " in speed and "~" not in speed.replace("~$", "")
    assert "tok/s" in speed
    # the cost per 1M tokens is derived from the upper-bound speed, so it is a lower bound
    assert re.search(r"≥ \$\d" if lang == "en" else r"≥ \d[\d.,]* \$", speed)
    sourced = re.sub(r"\s+", " ", client.get(url("qwen3-5-35b-a3b", "rtx-4090", lang)).content.decode())
    assert "≤ " not in sourced[sourced.index('id="speed"'):sourced.index('id="how"')]


@pytest.mark.parametrize("quant, source", [("Q4_K_M", "llama.cpp's per-tensor quantization rules"),
                                           ("FP8", "the FP8 checkpoint's storage of each tensor")])
def test_weights_source_names_the_formats_own_rules(client, db, quant, source):
    """GGUF files are sized by llama-quantize's rules; FP8/AWQ checkpoints by their own storage, not llama.cpp's."""
    body = client.get(url("llama-3-1-8b-instruct", "h100-80gb-sxm", query=f"quant={quant}&engine=vllm&kv_dtype=fp8"
                          if quant == "FP8" else f"quant={quant}")).content.decode()
    how = body[body.index('id="how"'):body.index('id="recommend"')]
    assert source in how


@pytest.mark.parametrize("lang, refusal, note", [
    ("en", "vLLM is not sized on Mac Studio M3 Ultra 256GB (Metal): this calculator models it on CANN, CUDA, "
           "ROCm/HIP, SYCL. Choose llama.cpp.",
     "No vLLM command for Mac Studio M3 Ultra 256GB: this calculator sizes vLLM on CANN, CUDA, ROCm/HIP, SYCL, "
     "not on Metal. Serve it with llama.cpp."),
    ("de", "vLLM wird auf Mac Studio M3 Ultra 256GB (Metal) nicht berechnet: LLM Sizer bildet es auf CANN, "
           "CUDA, ROCm/HIP, SYCL ab. Wählen Sie llama.cpp.",
     "Kein vLLM-Befehl für Mac Studio M3 Ultra 256GB: Diese Seite berechnet vLLM auf CANN, CUDA, ROCm/HIP, "
     "SYCL, nicht auf Metal. Betreiben Sie das Modell mit llama.cpp."),
])
def test_vllm_is_refused_on_apple_gpus(client, db, lang, refusal, note):
    """vLLM is sized with its CUDA/ROCm memory model (CUDA graphs, the paged KV pool); on Apple GPUs it runs only
    through the vllm-metal plugin on MLX, which is not modelled. Choosing it on a Mac is a field error (400, the
    other choices kept), and the default report shows the llama.cpp command with a note instead of a vLLM command."""
    refused = client.get(url("gpt-oss-120b", "mac-studio-m3-ultra-256gb", lang, "engine=vllm&kv_dtype=f16&context=16384"))
    assert refused.status_code == 400
    body = refused.content.decode()
    assert refusal in body and 'value="16384" selected' in body
    page = re.sub(r"\s+", " ", client.get(url("gpt-oss-120b", "mac-studio-m3-ultra-256gb", lang)).content.decode())
    launch = page[page.index('id="launch"'):page.index('id="simulator"')]
    assert note in launch and "vllm serve" not in launch and "llama-server" in launch


def test_engine_refuses_vllm_without_a_backend():
    from reports.estimates import current_catalog
    from reports.sizing.errors import SizingError
    from reports.sizing.estimate import plan_memory
    from reports.sizing.specs import Scenario

    _, catalog = current_catalog()
    with pytest.raises(SizingError, match=r"--engine vllm: vllm does not run on Mac Studio M3 Ultra 256GB \(metal\); "
                                          r"choose llama.cpp"):
        plan_memory(catalog.model("gpt-oss-120b"), catalog.hardware["mac-studio-m3-ultra-256gb"],
                    Scenario(engine="vllm", kv_dtype="f16"))


def test_vllm_command_for_a_gguf_format_serves_the_gguf_file(client, db):
    """The vLLM estimate of a GGUF format is sized on that file, so the command serves it (vLLM's GGUF docs:
    repo_id:quant_type or a local file, with the base model's tokenizer), not the 16-bit repository."""
    body = client.get(url("gemma-3-27b-it", "h100-80gb-sxm", query="engine=vllm&kv_dtype=fp8&quant=Q4_K_M")).content.decode()
    launch = body[body.index('id="launch"'):body.index('id="simulator"')]
    assert "vllm serve ggml-org/gemma-3-27b-it-GGUF:Q4_K_M \\\n  --tokenizer google/gemma-3-27b-it" in launch
    # GLM-4.5's 213 GB file comes in parts, which vLLM cannot load: it serves the merged local file.
    body = client.get(url("glm-4-5", "h100-80gb-sxm", query="gpus=8&engine=vllm&kv_dtype=fp8&quant=Q4_K_M")).content.decode()
    launch = body[body.index('id="launch"'):body.index('id="simulator"')]
    assert "vllm serve ./glm-4-5-Q4_K_M.gguf \\\n  --tokenizer zai-org/GLM-4.5" in launch
    plain = client.get(url("llama-3-3-70b-instruct", "h100-80gb-sxm", query="engine=vllm&quant=AWQ&kv_dtype=fp8"))
    awq = plain.content.decode()
    assert "vllm serve ./llama-3-3-70b-instruct-AWQ" in awq and "--tokenizer" not in awq


def test_decode_explanation_parts_add_up_to_the_time_per_token(client, db):
    """The decode paragraph splits the time per token into reading (with the all-reduces of tensor parallelism) and
    the fixed kernel time of the layers; it once called the total "per-layer kernel time"."""
    body = re.sub(r"\s+", " ", client.get(url("glm-4-5", "h100-80gb-sxm",
                                               query="gpus=8&engine=vllm&kv_dtype=fp8")).content.decode())
    found = re.search(r"takes ([\d.]+) ms per token and the fixed kernel time of 92 layers ([\d.]+) ms: "
                      r"([\d.]+) ms per token", body)
    transfer, overhead, total = (float(x) for x in found.groups())
    assert overhead > 0 and abs(transfer + overhead - total) <= 0.011


@pytest.mark.parametrize("lang", ["en", "de"])
def test_several_streams_also_show_their_speed_with_full_caches(client, db, lang):
    """The streams' total speed at empty caches (depth 0) reads only the weights; with every sequence's cache full it
    reads their KV too. Both are the engine's figures (estimate_speeds at depth 0 and at depth = context)."""
    from dataclasses import replace

    from django.utils import translation

    from reports.estimates import current_catalog
    from reports.sizing.estimate import estimate_speeds
    from reports.sizing.specs import Scenario
    from reports.templatetags.fmt import toks

    _, catalog = current_catalog()
    model, hardware = catalog.model("llama-3-1-8b-instruct"), catalog.hardware["rtx-4090"]
    scenario = Scenario(engine="vllm", batch=16, quant="Q4_K_M", context=32768)
    estimate = catalog.estimate(model, hardware, scenario)
    full = estimate_speeds(model, hardware, replace(scenario, depth=32768), estimate.memory, estimate.params).aggregate
    assert full.batch == estimate.aggregate_decode.batch == 3  # the KV pool holds 3 full-context sequences
    assert full.tokens_per_s < estimate.aggregate_decode.tokens_per_s
    body = re.sub(r"\s+", " ", client.get(url("llama-3-1-8b-instruct", "rtx-4090", lang,
                                             "engine=vllm&batch=16&quant=Q4_K_M&context=32768")).content.decode())
    with translation.override(lang):
        total, each = toks(full.tokens_per_s), toks(full.per_stream_tokens_per_s)
    expected = {"en": f"{total} ({each} per stream) with 32K tokens cached in each",
                "de": f"{total} ({each} pro Sequenz) mit 32K Tokens im Cache jeder Sequenz"}[lang]
    assert expected in body


def _section_links(body: str, section_id: str) -> list[str]:
    section = re.search(rf'<section class="card[^"]*" id="{section_id}".*?</section>', body, re.S).group(0)
    return [href.replace("&amp;", "&") for href in re.findall(r'<a href="(/[^"]+)"', section)]


@pytest.mark.parametrize("lang", ["en", "de"])
@pytest.mark.parametrize("path, kept", [
    ("/report/gpt-oss-20b/rtx-4090/?engine=vllm&context=32768", ("engine=vllm", "context=32768")),
    ("/report/gemma-3-27b-it/rtx-5090/?context=131072&engine=vllm&kv_dtype=fp8", ("engine=vllm", "context=131072",
                                                                                   "kv_dtype=fp8")),
    ("/report/qwen3-32b/rtx-4090/?context=16384&batch=4&kv_dtype=q8_0", ("engine=llama.cpp", "context=16384",
                                                                          "batch=4", "kv_dtype=q8_0")),
])
def test_matrix_and_recommendation_links_open_the_configuration_they_were_sized_in(client, db, lang, path, kept):
    """"Smallest that fits" and the recommended hardware open their report in the row's configuration: a vLLM-only
    format linked without its engine was a 400 (AWQ under the llama.cpp default), and the context fell back to 8K."""
    body = client.get(f"/{lang}{path}").content.decode()
    links = _section_links(body, "matrix") + _section_links(body, "recommend")
    assert len(links) >= 3
    for link in links:
        assert all(part in link for part in kept), link
        assert client.get(link).status_code == 200, link


def _matrix_formats(body: str) -> list[str]:
    section = re.search(r'<section class="card" id="matrix".*?</section>', body, re.S).group(0)
    return re.findall(r'<th scope="row">([^<]+)(?:<br><span class="muted quant-quality">[^<]*</span>)?</th>', section)


@pytest.mark.parametrize("lang", ["en", "de"])
def test_gpt_oss_opens_with_the_gguf_its_repository_publishes_and_its_release_under_vllm(client, db, lang):
    """ggml-org publishes gpt-oss as MXFP4_MOE only (llama.cpp's file type for the MXFP4 release; it has no plain
    MXFP4 one): the llama.cpp page opens there and its matrix lists it, not the checkpoint format. vLLM serves the
    MXFP4 release itself (`vllm serve openai/gpt-oss-120b`), not a GGUF, and its page's llama.cpp line is the GGUF."""
    body = client.get(f"/{lang}/report/gpt-oss-20b/rtx-4090/").content.decode()
    assert '<option value="MXFP4_MOE" selected>' in body
    assert "llama-server -hf ggml-org/gpt-oss-20b-GGUF" in body
    # The llama.cpp page's vLLM line serves the release too, not that GGUF through vLLM's plugin.
    assert "vllm serve openai/gpt-oss-20b" in body and "vllm serve ggml-org" not in body
    formats = _matrix_formats(body)
    assert formats[0] == "MXFP4_MOE" and "MXFP4" not in formats
    vllm = client.get(f"/{lang}/report/gpt-oss-120b/h100-80gb-sxm/?engine=vllm&context=32768").content.decode()
    assert '<option value="MXFP4" selected>' in vllm
    assert "vllm serve openai/gpt-oss-120b" in vllm and ".gguf" not in vllm
    assert "llama-server -hf ggml-org/gpt-oss-120b-GGUF" in vllm


def test_the_memory_bar_says_when_the_kv_segment_is_only_the_gpus_part(client, db):
    """Llama 3.3 70B on an RTX 3060: 31 GiB offloaded with whole blocks, whose KV cache stays in system RAM; the bar
    showed "KV cache & state: 0.62 GiB" beside "What to change: KV cache 2.50 → 1.33 GiB"."""
    offloaded = client.get("/en/report/llama-3-3-70b-instruct/rtx-3060-12gb/").content.decode()
    assert "KV cache &amp; state on the GPU:" in offloaded and 'class="swatch seg-kv_kept"' in offloaded
    fits = client.get("/en/report/llama-3-1-8b-instruct/rtx-4090/").content.decode()
    assert "KV cache &amp; state:" in fits and "on the GPU:" not in fits


def test_the_gguf_f16_is_told_apart_from_the_fp16_checkpoint(client, db):
    body = client.get("/en/report/llama-3-1-8b-instruct/rtx-4090/").content.decode()
    select = re.search(r'<select[^>]*name="quant".*?</select>', body, re.S).group(0)
    gguf = re.search(r'<optgroup label="GGUF files \(llama.cpp\)">(.*?)</optgroup>', select, re.S).group(1)
    released = re.search(r'<optgroup label="Checkpoints \(safetensors\)">(.*?)</optgroup>', select, re.S).group(1)
    assert '<option value="F16">F16 (16-bit — lossless)</option>' in gguf and 'value="FP16"' not in gguf
    assert '<option value="FP16">FP16 (16-bit — lossless)</option>' in released


def test_formats_carry_their_quality_in_the_list_and_the_matrix(client, db):
    """The seed's "Q4_K_M (4-Bit — Empfohlen)", "Q8_0 (8-Bit — Nahezu verlustfrei)": the bit width and a quality
    word (llama.cpp's perplexity table, reports.quant_labels), best quality first within each group."""
    body = client.get("/en/report/llama-3-1-8b-instruct/rtx-4090/").content.decode()
    select = re.search(r'<select[^>]*name="quant".*?</select>', body, re.S).group(0)
    options = re.findall(r'<option value="([^"]+)"[^>]*>([^<]*)</option>', select)
    labels = dict(options)
    assert labels["Q8_0"] == "Q8_0 (8-bit — near-lossless)" and labels["Q3_K_M"] == "Q3_K_M (3-bit — low VRAM)"
    # The nominal class for every format: IQ4_XS read "4.25-bit" beside Q4_K_M's "4-bit", as if it were the larger.
    assert labels["IQ4_XS"] == "IQ4_XS (4-bit — compact)" and labels["Q6_K"] == "Q6_K (6-bit — high precision)"
    assert labels["Q4_K_M"] == "Q4_K_M (4-bit — recommended)"
    order = [value for value, _ in options]
    assert order.index("Q8_0") < order.index("Q6_K") < order.index("Q4_K_M") < order.index("Q3_K_M") < order.index("Q2_K")
    matrix = _section(body, "matrix")
    assert re.search(r'<th scope="row">Q4_K_M<br><span class="muted quant-quality">4-bit — recommended</span></th>', matrix)
    german = client.get("/de/report/llama-3-1-8b-instruct/rtx-4090/").content.decode()
    # German writes "4 Bit" (as "8 Bit" elsewhere on the site) and its dash with spaces ("–", not "—").
    assert "IQ4_XS (4 Bit – kompakt)" in german and "Q4_K_M (4 Bit – empfohlen)" in german


def test_a_checkpoint_format_is_lossless_only_as_the_models_released_format(client, db):
    """Qwen3-30B-A3B (released in BF16) offered "FP8_FP4 (4/8-bit — lossless)": DeepSeek-V4's released format, lossless
    only there. Elsewhere it is its bit width alone; the group of safetensors formats is named for what it is (it was
    "Released weights", with FP16 and MXFP4 in it for a BF16-only model)."""
    def quant_options(slug, lang="en"):
        body = client.get(f"/{lang}/report/{slug}/h100-80gb-sxm/?engine=vllm").content.decode()
        select = re.search(r'<select[^>]*name="quant".*?</select>', body, re.S).group(0)
        return dict(re.findall(r'<option value="([^"]+)"[^>]*>([^<]*)</option>', select)), select, body

    qwen, select, _ = quant_options("qwen3-30b-a3b-instruct-2507")
    assert qwen["FP8_FP4"] == "FP8_FP4 (4/8-bit)"
    assert qwen["BF16"] == "BF16 (16-bit — lossless)"
    assert "Released weights" not in select and '<optgroup label="Checkpoints (safetensors)">' in select
    v4, _, v4_body = quant_options("deepseek-v4-flash")
    assert v4["FP8_FP4"] == "FP8_FP4 (4/8-bit — lossless)"
    assert re.search(r'<th scope="row">FP8_FP4<br><span class="muted quant-quality">4/8-bit — lossless</span></th>',
                     _section(v4_body, "matrix"))


def _links_section(body: str) -> str:
    start = body.index('id="links"')
    return html.unescape(body[start:body.index("</section>", start)])


def test_neighbour_links_keep_the_configuration_where_it_applies(client, db):
    """The review's state: 64K context, a Q8_0 KV cache, 8 hours a day. Another accelerator keeps them (Gaudi 3,
    where vLLM is the engine, as vLLM's FP8 cache); another model keeps them, less a context beyond its limit
    (Phi-4 takes 16K, Qwen3 8B 40K); the hardware page link keeps what its table offers (none of these: bare)."""
    body = client.get(url("qwen3-coder-30b-a3b", "rtx-4090", query="context=65536&kv_dtype=q8_0&hours=8")).content.decode()
    links = _links_section(body)
    assert 'href="/en/report/qwen3-coder-30b-a3b/rtx-3090/?context=65536&kv_dtype=q8_0&hours=8"' in links
    assert 'href="/en/report/qwen3-coder-30b-a3b/gaudi-3-128gb/?context=65536&kv_dtype=fp8&hours=8"' in links
    assert 'href="/en/report/gpt-oss-20b/rtx-4090/?context=65536&kv_dtype=q8_0&hours=8"' in links
    assert 'href="/en/report/phi-4-14b/rtx-4090/?kv_dtype=q8_0&hours=8"' in links
    assert 'href="/en/hardware/rtx-4090/"' in links
    # A GPU count and engine the hardware table offers go to its link; the other accelerators do not take the count.
    body = client.get(url("qwen3-8b", "rtx-4090", query="gpus=2&engine=vllm")).content.decode()
    links = _links_section(body)
    assert 'href="/en/hardware/rtx-4090/?gpus=2&engine=vllm"' in links
    assert 'href="/en/report/qwen3-8b/rtx-3090/?engine=vllm"' in links
    # The default state links bare (and shares its rendering between configurations).
    assert 'href="/en/report/qwen3-8b/rtx-3090/"' in _links_section(client.get(url("qwen3-8b", "rtx-4090")).content.decode())


def test_neighbour_links_drop_what_vllm_refuses_for_that_model(client, db):
    # vLLM cannot split AWQ's expert width of 2560 over 8 GPUs in 128-wide blocks (Qwen3 Coder 30B-A3B), nor 8 GPUs
    # divide Phi-4's 10 KV heads: those links give up the format, then the split, rather than open on a refusal.
    body = client.get(url("qwen3-8b", "h100-80gb-sxm", query="engine=vllm&gpus=8&quant=AWQ&kv_dtype=fp8")).content.decode()
    for link in re.findall(r'href="(/en/report/[^"]+)"', _links_section(body)):
        assert client.get(link).status_code == 200, link


def test_a_budget_is_not_carried_to_another_accelerator(client, db):
    """A budget is the price of the hardware shown: a recommendation of another accelerator, or this model on
    another one, does not read $1,800 as its price; another model on this RTX 4090 keeps it."""
    body = html.unescape(client.get(url("qwen3-coder-30b-a3b", "rtx-4090",
                                        query="context=65536&kv_dtype=q8_0&hours=8&budget=1800")).content.decode())
    links = re.findall(r'href="(/en/report/[^"]+)"', body)
    elsewhere = [link for link in links if "/rtx-4090/" not in link and "/custom/" not in link]
    assert elsewhere and not [link for link in elsewhere if "budget=" in link]
    assert any("budget=1800" in link for link in links if "/rtx-4090/" in link)
    recommend = body[body.index('id="recommend"'):]
    assert re.search(r'href="/en/report/qwen3-coder-30b-a3b/(?!rtx-4090/)[^"]*hours=8', recommend)


def test_an_htmx_change_swaps_the_neighbour_links_too(client, db):
    response = client.get(url("qwen3-8b", "rtx-4090", query="context=32768&part=details"),
                          headers={"HX-Request": "true"})
    body = html.unescape(response.content.decode())
    assert body.index('id="details"') < body.index('id="links" aria-labelledby="links-heading"')  # swapped with it
    assert 'href="/en/report/qwen3-8b/rtx-3090/?context=32768"' in body


def test_how_it_was_computed_tables_and_the_chart_have_accessible_names(client, db):
    body = client.get(url("llama-3-1-8b-instruct", "rtx-4090")).content.decode()
    how = _section(body, "how")
    for heading in ("how-weights", "how-kv", "how-runtime"):
        assert f'id="{heading}"' in how and f'aria-labelledby="{heading}"' in how
    chart = _section(body, "chart")
    assert re.search(r"<title>[^<]*GiB, fits</title>", chart)  # not by colour alone
    assert '<span class="visually-hidden">fits</span>' in chart
    assert "does not fit" in _section(client.get(url("llama-3-3-70b-instruct", "rtx-4090")).content.decode(), "chart")


@pytest.mark.parametrize("lang, sentence, how", [
    ("en", "so this page counts 78% of it as usable for the model (199.68 GiB of 256 GiB)", "iogpu.wired_limit_mb"),
    ("de", "daher zählt diese Seite 78\u00a0% davon als für das Modell nutzbar (199,68 GiB von 256 GiB)",
     "iogpu.wired_limit_mb"),
])
def test_unified_memory_pages_say_which_share_they_count_and_how_to_describe_another(client, lang, sentence, how):
    """A Mac or Strix Halo owner read "usable 199.7 GiB (78 %)" with no word on where the share comes from, how the
    system sets it or how to count another one: the fit card says so, and its link opens "my hardware" with the
    accelerator's specs, where a usable share can be typed."""
    body = client.get(url("qwen3-30b-a3b-instruct-2507", "mac-studio-m3-ultra-256gb", lang)).content.decode()
    text = html.unescape(re.sub(r"<[^>]+>", "", body))
    assert sentence in text and how in text
    link = html.unescape(re.search(r'id="unified-share".*?<a href="([^"]+)"', body, re.S).group(1))
    assert "/custom/?" in link and "memory_gb=256" in link and "kind=unified" in link
    # 90 % of 256 GiB instead of 78 %: the usable memory follows the typed share.
    custom = client.get(link + "&usable_pct=90").content.decode()
    assert ("230.4 GiB" if lang == "en" else "230,4 GiB") in html.unescape(re.sub(r"<[^>]+>", "", custom))
    assert client.get(link + "&usable_pct=120").status_code == 400
    discrete = client.get(url("qwen3-30b-a3b-instruct-2507", "rtx-4090", lang)).content.decode()
    assert 'id="unified-share"' not in discrete


def test_the_vllm_pool_note_names_only_the_layer_kinds_the_model_has(client, db):
    """Gemma 3 27B under vLLM read "its sliding-window and recurrent layers keep a fixed number of tokens …, so one
    request alone can be longer": Gemma has no recurrent layers, and the sentence was a comma splice."""
    body = client.get(url("gemma-3-27b-it", "h100-80gb-sxm", query="engine=vllm")).content.decode()
    note = re.search(r'id="vllm-pool">(.*?)</p>', body, re.S).group(1)
    assert "at full context times the context. Its sliding-window layers keep a fixed number of tokens" in note
    assert "recurrent" not in note


@pytest.mark.parametrize("model", ["kimi-k2-instruct", "qwen3-5-397b-a17b", "nemotron-3-ultra-550b-a55b"])
def test_a_moe_too_large_for_any_number_of_small_cards_renders(client, model):
    """The stock stack's QLoRA of a 1 T MoE fits on no count of RTX 3060 (gpus_needed None), and the sentence's
    plural count was None: a 500 (bench/web.py's new-pair rows found three)."""
    response = client.get(url(model, "rtx-3060-12gb"))
    assert response.status_code == 200
    assert "more than any number of RTX 3060 12GB holds" in response.content.decode()


def test_a_gpu_count_written_with_a_trailing_dot_is_read_as_the_form_reads_it(client, db):
    """"gpus=5." is 5 to the integer field; the link to the accelerator's page parsed the query's text and failed
    with a 500 (found by tests/test_fuzz.py)."""
    response = client.get(url("cohere-command-a-111b", "a100-80gb-sxm", query="gpus=5."))
    assert response.status_code == 200
    assert 'href="/en/hardware/a100-80gb-sxm/?gpus=5"' in response.content.decode()


@pytest.mark.parametrize("query", ["context=32768.", "context=32768.0", "context=032768", "batch=4.", "gpus=2.0"])
def test_whole_numbers_written_as_decimals_are_read_as_the_form_reads_them(client, db, query):
    """The integer fields take "32768." and "032768" (Django's IntegerField); the links that keep the visitor's state
    parsed the query's text with int() and answered 500 (the GPU count's link was fixed alone before)."""
    response = client.get(url("llama-3-1-8b-instruct", "rtx-4090", query=query))
    assert response.status_code == 200
    name, value = query.split("=")
    body = response.content.decode()
    assert re.search(rf'{name}={int(float(value))}(&amp;|")', body)  # a neighbour link keeps the number
