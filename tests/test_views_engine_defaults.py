"""Pages on accelerators llama.cpp has no backend for open with vLLM, and a partial URL opens with what its engine
runs (estimate.default_scenario), in both languages."""

import re

import pytest

pytestmark = pytest.mark.django_db

def selected(field: str, body: str) -> str:
    """The selected option of the configurator's select FIELD."""
    select = re.search(rf'<select [^>]*name="{field}"[^>]*>(.*?)</select>', body, re.S).group(1)
    return re.search(r'<option value="([^"]+)"[^>]*selected', select).group(1)


@pytest.mark.parametrize("lang", ["en", "de"])
@pytest.mark.parametrize("hardware", ["gaudi-3-128gb", "mlu590-80gb"])
def test_report_on_an_accelerator_without_llama_cpp_opens_with_vllm(client, lang, hardware):
    response = client.get(f"/{lang}/report/llama-3-1-8b-instruct/{hardware}/")
    assert response.status_code == 200
    body = response.content.decode()
    assert selected("engine", body) == "vllm"
    assert selected("quant", body) == "BF16"  # vLLM there runs no GGUF
    assert "vllm serve" in body
    assert "llama-server" not in body and "llama-cli" not in body


@pytest.mark.parametrize("lang, text", [
    ("en", "llama.cpp does not run on Gaudi 3 128GB HBM2e: it has no backend for this accelerator. Choose vLLM."),
    ("de", "llama.cpp läuft nicht auf Gaudi 3 128GB HBM2e: Es hat kein Backend für diesen Beschleuniger. "
           "Wählen Sie vLLM."),
])
def test_asking_for_llama_cpp_there_is_a_400_that_names_vllm(client, lang, text):
    response = client.get(f"/{lang}/report/llama-3-1-8b-instruct/gaudi-3-128gb/?engine=llama.cpp&quant=Q4_K_M")
    assert response.status_code == 400
    assert text in response.content.decode()


@pytest.mark.parametrize("lang", ["en", "de"])
def test_engine_vllm_alone_on_deepseek_v4_opens_the_released_checkpoint(client, lang):
    # Before: a 400, because the omitted format and cache took llama.cpp's defaults (Q4_K_M, F16), which vLLM refuses
    # for DeepSeek-V4.
    response = client.get(f"/{lang}/report/deepseek-v4-flash/b200-180gb/?engine=vllm")
    assert response.status_code == 200
    body = response.content.decode()
    assert selected("quant", body) == "FP8_FP4"
    assert selected("kv_dtype", body) == "fp8"


def test_explicit_choices_are_kept_and_refused_with_a_message(client):
    response = client.get("/en/report/deepseek-v4-flash/b200-180gb/?engine=vllm&quant=Q4_K_M")
    assert response.status_code == 400
    assert "vLLM cannot load DeepSeek-V4 GGUF files" in response.content.decode()


@pytest.mark.parametrize("lang, text", [
    ("en", "For each model under vLLM (llama.cpp does not run here): its released checkpoint or, where that does not "
           "run or fit, the highest-quality of BF16, FP8, AWQ, GPTQ that fits"),
    ("de", "Für jedes Modell unter vLLM (llama.cpp läuft hier nicht)"),
])
def test_hardware_page_sizes_with_vllm_where_llama_cpp_does_not_run(client, lang, text):
    body = client.get(f"/{lang}/hardware/gaudi-3-128gb/").content.decode()
    assert text in body
    assert "?quant=BF16" in body  # the rows' links open the report at the format they sized
    assert "?quant=Q4_K_M" not in body
    # Llama 3.3 70B at FP8 (INC on Gaudi), as its BF16 exceeds one card; gpt-oss-20b as BF16, since neither
    # vllm-gaudi nor the MLU590's vendor build runs its MXFP4 release.
    assert re.search(r'Llama 3.3 70B Instruct</a></th>\s*<td class="num">[^<]+</td>\s*<td>FP8</td>', body)
    assert re.search(r'gpt-oss-20b</a></th>\s*<td class="num">[^<]+</td>\s*<td>BF16</td>', body)
    mlu = client.get(f"/{lang}/hardware/mlu590-80gb/").content.decode()
    assert re.search(r'gpt-oss-20b</a></th>\s*<td class="num">[^<]+</td>\s*<td>BF16</td>', mlu)


@pytest.mark.parametrize("lang, text", [
    ("en", "No llama.cpp command for Gaudi 3 128GB HBM2e: llama.cpp has no backend for this accelerator."),
    ("de", "Kein llama.cpp-Befehl für Gaudi 3 128GB HBM2e: llama.cpp hat kein Backend für diesen Beschleuniger."),
])
def test_launch_section_says_why_there_is_no_llama_cpp_command(client, lang, text):
    body = client.get(f"/{lang}/report/llama-3-1-8b-instruct/gaudi-3-128gb/").content.decode()
    assert text in body and "llama-server" not in body


def test_the_llama_cpp_command_stays_beside_a_vllm_page_with_the_auto_cache(client):
    # "auto" is llama.cpp's F16 in the other engine's command, not a refusal that drops the command.
    body = client.get("/en/report/llama-3-1-8b-instruct/h100-80gb-sxm/?engine=vllm&kv_dtype=auto&quant=Q8_0")
    assert "llama-server" in body.content.decode() and "vllm serve" in body.content.decode()


@pytest.mark.parametrize("lang, vllm, cann", [
    ("en", "vLLM, BF16: llama.cpp does not run here", "llama.cpp runs no Q4_K_M here"),
    ("de", "vLLM, BF16: llama.cpp läuft hier nicht", "llama.cpp führt hier kein Q4_K_M aus"),
])
def test_model_page_marks_the_rows_sized_otherwise(client, lang, vllm, cann):
    """Rows at another opening configuration than the table's Q4_K_M under llama.cpp say which: vLLM where llama.cpp
    has no backend, Q4_0 or F16 where llama.cpp's CANN backend runs no Q4_K_M (the Atlas 300I's 310P: F16 only)."""
    body = client.get(f"/{lang}/model/llama-3-1-8b-instruct/").content.decode()
    rows = dict(re.findall(r'<th scope="row"><a href="[^"]+">([^<]+)</a><br><span class="muted">([^<]+)</span>',
                           body))
    assert rows == {"Gaudi 3 128GB HBM2e": vllm, "MLU590 80GB": vllm, "Kunlunxin P800 64GB": vllm,
                    "MetaX C500 64GB": vllm, "Ascend 910B 64GB": f"Q4_0: {cann}", "Ascend 910C 128GB": f"Q4_0: {cann}",
                    "Atlas 300I Duo 96GB (310P)": f"F16: {cann}"}


@pytest.mark.parametrize("lang", ["en", "de"])
def test_kv_dtype_auto_is_the_engines_default(client, lang):
    """vLLM's --kv-cache-dtype auto (its default: the model's dtype, BF16 for Llama 3.1) and llama.cpp's F16 were
    a 400 ("Select a valid choice"); both are the same 16-bit cache as the explicit choice."""
    base = f"/{lang}/report/llama-3-1-8b-instruct/h100-80gb-sxm/?context=32768&quant=Q8_0"
    for engine, explicit in (("vllm", "bf16"), ("llama.cpp", "f16")):
        auto = client.get(f"{base}&engine={engine}&kv_dtype=auto")
        assert auto.status_code == 200
        kv_row = re.compile(r'seg-kv" aria-hidden="true"></span>[^<]*<strong>([^<]+)</strong>')
        same = client.get(f"{base}&engine={engine}&kv_dtype={explicit}").content.decode()
        assert kv_row.search(auto.content.decode()).group(1) == kv_row.search(same).group(1)
        assert selected("kv_dtype", auto.content.decode()) == "auto"


@pytest.mark.parametrize("lang, note", [
    ("en", "On Gaudi, FP8 runs through Intel Neural Compressor"),
    ("de", "Auf Gaudi läuft FP8 über Intel Neural Compressor"),
])
def test_gaudi_fp8_command_uses_inc(client, lang, note):
    """vllm-gaudi quantizes to FP8 with INC (--quantization inc, --kv-cache-dtype fp8_inc, QUANT_CONFIG from a
    calibration run); the same configuration on an H100 keeps vLLM's own fp8."""
    query = "engine=vllm&quant=FP8&kv_dtype=fp8"
    body = client.get(f"/{lang}/report/llama-3-3-70b-instruct/gaudi-3-128gb/?{query}").content.decode()
    assert "--kv-cache-dtype fp8_inc" in body and "--quantization inc" in body and note in body
    bf16 = client.get(f"/{lang}/report/llama-3-3-70b-instruct/gaudi-3-128gb/?engine=vllm&quant=FP8").content.decode()
    assert "<code>--kv-cache-dtype fp8_inc</code>" in bf16  # the 8-bit cache tip names Gaudi's flag too
    h100 = client.get(f"/{lang}/report/llama-3-3-70b-instruct/h100-80gb-sxm/?{query}&gpus=2").content.decode()
    assert "--kv-cache-dtype fp8 " in h100.replace("\\", " ") and "--quantization fp8" in h100
    assert "fp8_inc" not in h100 and note not in h100


def test_hardware_page_says_which_models_no_engine_sizes_there(client):
    body = client.get("/en/hardware/gaudi-3-128gb/").content.decode()
    row = re.search(r'Cohere Command A 111B</a></th>(.*?)</tr>', body, re.S).group(1)
    assert "verdict-unsizable" in row and "not sizable here" in row
    assert "verdict-exceeds" not in row


def test_launch_commands_lead_with_the_pages_engine(client):
    vllm_page = client.get("/en/report/llama-3-1-8b-instruct/h100-80gb-sxm/?engine=vllm&quant=Q8_0").content.decode()
    assert vllm_page.index("vllm serve") < vllm_page.index("llama-server")
    llama_page = client.get("/en/report/llama-3-1-8b-instruct/h100-80gb-sxm/?quant=Q8_0").content.decode()
    assert llama_page.index("llama-server") < llama_page.index("vllm serve")


def test_compare_page_opens_deepseek_v4_under_vllm_at_its_release(client):
    """The compare page has no single accelerator: only the model's own limits set the defaults there."""
    response = client.get("/en/compare/deepseek-v4-flash/?hw=b200-180gb:2&hw=h200-141gb-sxm:2&engine=vllm")
    assert response.status_code == 200
    body = response.content.decode()
    assert selected("quant", body) == "FP8_FP4" and selected("kv_dtype", body) == "fp8"
    assert "vLLM cannot load DeepSeek-V4 GGUF" not in body


@pytest.mark.parametrize("hardware, link, mesh", [
    ("instinct-mi300x-192gb", "64 GB/s", "each of the 2 GPUs reaches the others over 1 of its 7 links"),
    ("h100-80gb-sxm", "450 GB/s", None),
])
def test_decode_text_shows_the_all_reduces_and_the_link_they_use(client, hardware, link, mesh):
    """Llama 3.3 70B on 2 GPUs: 2 all-reduces per layer × 80 layers of 8,192 × 2 B = 16 KiB; MI300X's Infinity
    Fabric is a full mesh of 7 links (896 GB/s in all), so two GPUs share one: 64 GB/s per direction, where NVSwitch
    gives the H100s all 450."""
    body = re.sub(r"\s+", " ", client.get(
        f"/en/report/llama-3-3-70b-instruct/{hardware}/?gpus=2&engine=vllm&quant=BF16").content.decode())
    assert f"the 160 all-reduces of 16 KiB each take" in body
    assert f"µs of latency each plus the transfer at {link} per direction over the interconnect" in body
    assert (mesh in body) if mesh else ("full mesh" not in body)


@pytest.mark.parametrize("hardware, said", [("gaudi-3-128gb", True), ("mac-studio-m3-ultra-256gb", True),
                                            ("rtx-4090", False), ("instinct-mi300x-192gb", False)])
def test_fine_tuning_says_where_its_cuda_libraries_are_not_the_stack(client, hardware, said):
    for lang, text in (("en", "trains with its own stack, whose memory is not published"),
                       ("de", "trainiert mit einem eigenen Software-Stack")):
        body = re.sub(r"\s+", " ", client.get(f"/{lang}/report/llama-3-1-8b-instruct/{hardware}/").content.decode())
        assert (text in body) == said
