"""Engine errors a visitor reaches through the configurator read in the page's language and with the
configurator's words, not as command-line messages ("--quant FP8 is …, or --engine vllm")."""

import html
import re

import pytest

from reports.sizing.errors import SizingError

pytestmark = pytest.mark.django_db


def field_errors(client, path):
    response = client.get(path)
    assert response.status_code == 400
    return [html.unescape(e).strip() for e in re.findall(r'class="field-error"[^>]*>(.*?)</div>',
                                                           response.content.decode(), re.S) if e.strip()]


@pytest.mark.parametrize("lang, expected", [
    ("en", "FP8 is a vLLM checkpoint format; llama.cpp runs GGUF files. Choose a GGUF format such as Q4_K_M, or the "
           "vLLM engine."),
    ("de", "FP8 ist ein Checkpoint-Format für vLLM; llama.cpp führt GGUF-Dateien aus."),
])
def test_a_vllm_format_under_llama_cpp_is_worded_for_the_page(lang, expected):
    """The configurator now replaces such a format with the nearest GGUF (forms.QUANT_OF_ENGINE); the engine's
    refusal keeps its page wording for any other way in."""
    from django.utils import translation

    from reports.engine_messages import sizing_error_text
    from reports.sizing.estimate import validate_scenario
    from reports.sizing.specs import Scenario

    with pytest.raises(SizingError) as caught:
        validate_scenario(Scenario(quant="FP8"))
    with translation.override(lang):
        assert sizing_error_text(caught.value).startswith(expected)


@pytest.mark.parametrize("lang, query, expected", [
    ("de", "engine=vllm&quant=BF16&gpus=3", "3 GPUs können das Modell nicht gleichmäßig aufteilen: Seine 32 "
                                            "Attention-Köpfe sind nicht durch 3 teilbar"),
    ("de", "quant=MXFP4", "MXFP4-Checkpoints quantisieren MoE-Experten, und Llama 3.1 8B Instruct hat keine."),
])
def test_configurator_errors_are_worded_for_the_page(client, lang, query, expected):
    errors = field_errors(client, f"/{lang}/report/llama-3-1-8b-instruct/rtx-4090/?{query}")
    assert len(errors) == 1 and errors[0].startswith(expected)
    assert "--" not in errors[0]


def test_the_command_line_keeps_the_contracts_message():
    from reports.sizing.estimate import validate_scenario
    from reports.sizing.specs import Scenario

    with pytest.raises(SizingError) as caught:
        validate_scenario(Scenario(quant="FP8"))
    assert str(caught.value).startswith("--quant FP8 is a vLLM checkpoint format")
    assert caught.value.code == "vllm_format_on_llama_cpp" and caught.value.params == {"quant": "FP8"}


def test_vllm_only_formats_say_so_in_the_configurator(client):
    body = client.get("/en/report/llama-3-1-8b-instruct/rtx-4090/").content.decode()
    vllm = re.search(r'<optgroup label="vLLM checkpoints">(.*?)</optgroup>', body, re.S).group(1)
    assert '<option value="FP8">FP8 (8-bit — near-lossless)</option>' in vllm
    assert '<option value="Q4_K_M" selected>Q4_K_M (4-bit — recommended)</option>' in body


def test_kv_dtype_message_lists_the_engines_own_choices():
    from django.utils import translation

    from reports.engine_messages import sizing_error_text
    from reports.sizing.kv_cache import resolve_kv_dtype

    with pytest.raises(SizingError) as caught:
        resolve_kv_dtype("fp8", "llama.cpp")
    with translation.override("de"):
        text = sizing_error_text(caught.value)
    assert text == "Diese KV-Cache-Genauigkeit gibt es in llama.cpp nicht; es speichert bf16, f16, f32, q4_0, q8_0."
