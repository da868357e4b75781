"""Size anything: a pasted config.json, your own hardware, a comparison of accelerators; admin promotion."""

import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from catalog.models import LLMModel, SubmittedConfig
from catalog.submissions import config_hash
from tests.factories import LLAMA_3_1_8B_CONFIG

pytestmark = pytest.mark.django_db


def field_error(body: str, field: str) -> str:
    match = re.search(rf'<div id="id_{field}_error" class="field-error" role="alert">(.*?)</div>', body, re.S)
    return match.group(1).strip() if match else ""


@pytest.mark.parametrize("lang", ["en", "de"])
def test_the_config_page_renders(client, lang):
    response = client.get(f"/{lang}/config/")
    assert response.status_code == 200
    assert 'name="config_text"' in response.content.decode()


def test_a_pasted_config_opens_its_report_under_a_stable_url(client):
    response = client.post("/en/config/", {"config_text": json.dumps(LLAMA_3_1_8B_CONFIG)})
    assert response.status_code == 302
    digest = config_hash(LLAMA_3_1_8B_CONFIG)
    assert response["Location"].startswith(f"/en/config/{digest[:16]}/")
    report = client.get(response["Location"])
    assert report.status_code == 200
    body = report.content.decode()
    # the same engine: Llama-3.1-8B KV at 8K = 131,072 B/token × 8,192 = 1.00 GiB, as the catalog model's report
    assert "1.00 GiB" in body and 'id="matrix"' in body
    # the same content with other key order and spacing is the same config
    reordered = json.dumps(dict(reversed(list(LLAMA_3_1_8B_CONFIG.items()))), indent=4)
    again = client.post("/en/config/", {"config_text": reordered})
    assert again["Location"] == response["Location"]
    assert SubmittedConfig.objects.count() == 1


def test_an_uploaded_config_works_too(client):
    upload = SimpleUploadedFile("config.json", json.dumps(LLAMA_3_1_8B_CONFIG).encode(), "application/json")
    response = client.post("/de/config/", {"config_file": upload})
    assert response.status_code == 302 and response["Location"].startswith("/de/config/")


@pytest.mark.parametrize("text, field, message", [
    ("{not json", "config_text", "not valid JSON"),
    ("[1, 2]", "config_text", "JSON object"),
    (json.dumps({"model_type": "llama", "hidden_size": 4096}), "config_text", "num_hidden_layers"),
    (json.dumps({**LLAMA_3_1_8B_CONFIG, "model_type": "no_such_arch", "architectures": ["NoSuchForCausalLM"]}),
     "config_text", "no_such_arch"),
    (json.dumps({**LLAMA_3_1_8B_CONFIG, "num_hidden_layers": -3}), "config_text", "num_hidden_layers"),
    ("", "config_text", "Paste a config.json"),
    ("{" + " " * (300 * 1024) + "}", "config_text", "larger than"),
])
def test_bad_configs_get_a_precise_message_and_nothing_is_stored(client, text, field, message):
    response = client.post("/en/config/", {"config_text": text})
    assert response.status_code == 400
    assert message in field_error(response.content.decode(), field)
    assert SubmittedConfig.objects.count() == 0


def test_unknown_config_hash_is_404(client):
    assert client.get("/en/config/0123456789abcdef/rtx-4090/").status_code == 404


CUSTOM = "memory_gb=24&bandwidth_gbs=1008&fp16_tflops=165.2&tdp_w=450&kind=discrete&backend=cuda&name=My+card"


def test_your_own_hardware_replaces_a_catalog_entry(client):
    response = client.get(f"/en/report/llama-3-1-8b-instruct/custom/?{CUSTOM}&context=32768")
    assert response.status_code == 200
    body = response.content.decode()
    assert "My card" in body and 'name="memory_gb"' in body
    # same figures as the catalog's RTX 4090 (24 GB, 1,008 GB/s, 165.2 TFLOPS, 450 W)
    catalog = client.get("/en/report/llama-3-1-8b-instruct/rtx-4090/?context=32768").content.decode()
    required = re.search(r'<dt>Required memory</dt><dd class="big">(.*?)</dd>', catalog).group(1)
    assert f'<dt>Required memory</dt><dd class="big">{required}</dd>' in body


@pytest.mark.parametrize("query, field", [
    ("memory_gb=-3&bandwidth_gbs=1008", "memory_gb"),
    ("memory_gb=99999&bandwidth_gbs=1008", "memory_gb"),
    ("memory_gb=24", "bandwidth_gbs"),
    ("memory_gb=24&bandwidth_gbs=abc", "bandwidth_gbs"),
    ("memory_gb=24&bandwidth_gbs=900&kind=quantum", "kind"),
])
def test_invalid_hardware_gets_messages_beside_the_fields(client, query, field):
    response = client.get(f"/de/report/llama-3-1-8b-instruct/custom/?{query}")
    assert response.status_code == 400
    assert field_error(response.content.decode(), field)


def test_a_catalog_report_links_to_describing_your_own_hardware(client):
    body = client.get("/en/report/llama-3-1-8b-instruct/rtx-4090/").content.decode()
    assert "/en/report/llama-3-1-8b-instruct/custom/?" in body and "memory_gb=24" in body


@pytest.mark.parametrize("lang", ["en", "de"])
def test_compare_three_accelerators(client, lang):
    response = client.get(f"/{lang}/compare/glm-4-5/?hw0=h100-80gb-sxm&n0=4&hw1=instinct-mi325x-256gb"
                          "&hw2=b200-180gb&n2=2")
    assert response.status_code == 200
    body = response.content.decode()
    table = body[body.index('id="compare-table"'):]
    assert table.count('<th scope="col" class="num"><a href=') == 3
    assert "4 × H100 80GB SXM" in table and "2 × B200 180GB" in table


def test_compare_accepts_shared_links_and_caps_at_four(client):
    query = "&".join(f"hw={slug}" for slug in ("rtx-4090", "rtx-3090", "rtx-5090", "a100-80gb-sxm", "h100-80gb-sxm"))
    body = client.get(f"/en/compare/llama-3-1-8b-instruct/?{query}").content.decode()
    table = body[body.index('id="compare-table"'):]
    assert table.count('<th scope="col" class="num"><a href=') == 4


def test_compare_reports_unknown_accelerators(client):
    response = client.get("/en/compare/glm-4-5/?hw=nope&hw=h100-80gb-sxm:99")
    assert response.status_code == 400
    assert "nope" in response.content.decode()


def test_compare_htmx_gets_the_table_only(client):
    response = client.get("/en/compare/glm-4-5/?hw0=h100-80gb-sxm", headers={"HX-Request": "true"})
    assert response.status_code == 200 and "<html" not in response.content.decode()


def test_admin_promotes_a_submitted_config_in_one_step(admin_client, client):
    client.post("/en/config/", {"config_text": json.dumps({**LLAMA_3_1_8B_CONFIG, "_name_or_path": "acme/Tiny-8B"})})
    submitted = SubmittedConfig.objects.get()
    response = admin_client.post("/admin/catalog/submittedconfig/", {
        "action": "promote", "_selected_action": [submitted.pk]})
    assert response.status_code == 302
    model = LLMModel.objects.get(slug="tiny-8b")
    assert model.num_layers == 32 and model.confidence == "config.json"
    submitted.refresh_from_db()
    assert submitted.promoted_to == model
    assert admin_client.get("/admin/catalog/submittedconfig/").status_code == 200


@pytest.mark.parametrize("depth, message", [
    (100, "deeper than 32"),  # parsed, then refused by the depth check
    # Python 3.13's parser reads this (3.12 stops with a recursion error: "not valid JSON"); SQLite's JSON_VALID
    # refuses it past 1,000 levels, so it must never reach the database
    (2000, ""),
])
def test_deeply_nested_json_is_refused_with_a_message(client, depth, message):
    text = json.dumps(LLAMA_3_1_8B_CONFIG)[:-1] + ', "extra": ' + "[" * depth + "]" * depth + "}"
    response = client.post("/en/config/", {"config_text": text})
    assert response.status_code == 400
    error = field_error(response.content.decode(), "config_text")
    assert message in error and error
    assert SubmittedConfig.objects.count() == 0


def _section(body: str, section_id: str) -> str:
    return re.search(rf'<section class="card" id="{section_id}".*?</section>', body, re.S).group(0)


def _my_hardware_link(body: str) -> str:
    return re.search(r'<a href="([^"]*/custom/\?[^"]*)"[^>]*>', body).group(1).replace("&amp;", "&")


@pytest.mark.parametrize("lang", ["en", "de"])
def test_a_copy_of_an_accelerator_without_llama_cpp_opens_with_vllm_as_its_catalog_page_does(client, lang):
    """The copy keeps the vendor: llama.cpp has no backend for Cambricon's MLUs (estimate.engine_runs_on)."""
    catalog = client.get(f"/{lang}/report/qwen3-8b/mlu590-80gb/").content.decode()
    copy_url = _my_hardware_link(catalog)
    assert "vendor=Cambricon" in copy_url
    copy = client.get(copy_url)
    assert copy.status_code == 200
    body = copy.content.decode()
    assert '<option value="vllm" selected>' in body
    assert _section(body, "speed") == _section(catalog, "speed")


def test_a_copy_of_an_accelerator_keeps_its_links_and_multi_gpu_speed(client):
    """Two H100 SXM over NVLink: the copy's all-reduces use the same 900 GB/s, not a PCIe fallback."""
    catalog = client.get("/en/report/llama-3-1-8b-instruct/h100-80gb-sxm/?gpus=2&engine=vllm&quant=BF16")
    copy_url = _my_hardware_link(catalog.content.decode())
    assert "interconnect_gbs=900" in copy_url
    copy = client.get(copy_url).content.decode()
    assert _section(copy, "speed") == _section(catalog.content.decode(), "speed")
    without_links = re.sub(r"&interconnect[^&]*", "", copy_url)
    slower = client.get(without_links).content.decode()
    assert _section(slower, "speed") != _section(copy, "speed")


def test_vendor_names_match_in_any_case(client):
    query = "memory_gb=80&bandwidth_gbs=2600&kind=accelerator&backend=other&vendor=cambricon&name=MLU"
    body = client.get(f"/en/report/qwen3-8b/custom/?{query}").content.decode()
    assert '<option value="vllm" selected>' in body


@pytest.mark.parametrize("value", ["0", "64", "2.5", "x"])
def test_mesh_peers_must_be_a_small_whole_number(client, value):
    response = client.get(f"/en/report/llama-3-1-8b-instruct/custom/?{CUSTOM}&interconnect_mesh_peers={value}")
    assert response.status_code == 400
    assert field_error(response.content.decode(), "interconnect_mesh_peers")


@pytest.mark.parametrize("htmx", [False, True])
def test_compare_with_an_invalid_combination_says_so_instead_of_asking_to_choose(client, htmx):
    """A refused field with two accelerators chosen (once KV q8_0 under vLLM, which now takes FP8: a context beyond
    the model's): the table made way for "Choose up to four accelerators", and the htmx answer carried no message
    for the field."""
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    response = client.get("/en/compare/gemma-3-27b-it/?hw0=rtx-4090&hw1=h100-80gb-sxm&context=99999999",
                          **headers)
    assert response.status_code == 400
    body = response.content.decode()
    assert "This configuration cannot be computed: please correct the highlighted field." in body
    assert "Choose up to four accelerators" not in body
    error = re.search(r'<div id="id_context_error"[^>]*>(.*?)</div>', body, re.S).group(1)
    assert "at most" in error
    if htmx:
        assert 'id="id_context_error" class="field-error" role="alert" hx-swap-oob="true"' in body


def test_compare_takes_the_engines_own_kv_type(client):
    """KV q8_0 with vLLM (the visitor switched the engine): vLLM caches 8 bits as FP8, which the table uses."""
    body = client.get("/en/compare/gemma-3-27b-it/?hw0=rtx-4090&hw1=h100-80gb-sxm&kv_dtype=q8_0&engine=vllm"
                      ).content.decode()
    assert 'value="fp8" selected' in body and "cannot be computed" not in body


def test_the_own_hardware_form_opens_empty_without_errors(client):
    """Opened with nothing described it said "This field is required" four times, with a 400."""
    response = client.get("/en/report/llama-3-1-8b-instruct/custom/")
    assert response.status_code == 200
    body = response.content.decode()
    assert "This field is required" not in body and 'id="hardware-errors"' not in body
    assert 'name="memory_gb"' in body
    described = client.get("/en/report/llama-3-1-8b-instruct/custom/?memory_gb=24")  # half described: the messages
    assert described.status_code == 400 and "This field is required" in described.content.decode()


def test_promoting_twice_skips_the_promoted_config_and_unnamed_configs_get_distinct_names(admin_client, client):
    for layers in (30, 31):  # no _name_or_path: both were "Custom model"
        client.post("/en/config/", {"config_text": json.dumps({**LLAMA_3_1_8B_CONFIG, "num_hidden_layers": layers})})
    pks = list(SubmittedConfig.objects.values_list("pk", flat=True))
    promote = {"action": "promote", "_selected_action": pks}
    assert admin_client.post("/admin/catalog/submittedconfig/", promote).status_code == 302
    names = sorted(LLMModel.objects.filter(submitted_configs__isnull=False).values_list("name", flat=True))
    # Llama-3.1-8B's shapes: 8.03e9 parameters with 32 layers; one layer holds 218,112,000 (the difference per
    # layer count), so 30 layers: 7.59e9 → "7.59B", 31 layers: 7.81e9 → "7.81B".
    assert [name.split(" (config ")[0] for name in names] == ["llama 7.59B", "llama 7.81B"]
    linked = dict(SubmittedConfig.objects.values_list("pk", "promoted_to"))
    response = admin_client.post("/admin/catalog/submittedconfig/", promote, follow=True)
    assert "It is in the catalog already, as llama" in response.content.decode()
    assert LLMModel.objects.filter(submitted_configs__isnull=False).count() == 2
    assert dict(SubmittedConfig.objects.values_list("pk", "promoted_to")) == linked
