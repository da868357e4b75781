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
    ("en", "one sequence (vLLM), and its decode speed"),
    ("de", "einer Sequenz (vLLM) passt"),
])
def test_hardware_page_sizes_with_vllm_where_llama_cpp_does_not_run(client, lang, text):
    body = client.get(f"/{lang}/hardware/gaudi-3-128gb/").content.decode()
    assert text in body
    assert "?quant=BF16" in body  # the rows' links open the report at the format they sized
    assert "?quant=Q4_K_M" not in body


@pytest.mark.parametrize("lang, text", [("en", "vLLM, BF16: llama.cpp does not run here"),
                                        ("de", "vLLM, BF16: llama.cpp läuft hier nicht")])
def test_model_page_marks_the_rows_sized_with_vllm(client, lang, text):
    body = client.get(f"/{lang}/model/llama-3-1-8b-instruct/").content.decode()
    rows = re.findall(r'<th scope="row"><a href="[^"]+">([^<]+)</a><br><span class="muted">([^<]+)</span>', body)
    assert {name for name, _ in rows} == {"Gaudi 3 128GB HBM2e", "MLU590 80GB", "Kunlunxin P800 64GB",
                                          "MetaX C500 64GB"}
    assert {note for _, note in rows} == {text}


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
