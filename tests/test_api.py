"""/api/v1: the estimate contract over HTTP, validated against its own OpenAPI document."""

import io
import json

import pytest
from django.core.management import call_command
from jsonschema import Draft202012Validator

from api.openapi import openapi_document
from catalog.submissions import submit_config
from tests.factories import LLAMA_3_1_8B_CONFIG

pytestmark = pytest.mark.django_db

SCHEMAS = openapi_document()["components"]["schemas"]


def validate(payload: dict, schema: str) -> None:
    Draft202012Validator(SCHEMAS[schema]).validate(payload)


def test_the_openapi_document_is_served_and_its_schemas_are_valid(client):
    document = client.get("/api/v1/openapi.json").json()
    assert document["openapi"].startswith("3.1")
    for schema in document["components"]["schemas"].values():
        Draft202012Validator.check_schema(schema)
    assert set(document["paths"]) == {"/estimate", "/models", "/hardware"}


@pytest.mark.parametrize("query", [
    "model=llama-3-1-8b-instruct&gpu=rtx-4090",
    "model=glm-5&gpu=instinct-mi325x-256gb&context=32768",
    "model=deepseek-v3-0324&gpu=h200-141gb-sxm&gpus=8&engine=vllm&quant=FP8&kv-dtype=fp8",
    "model=kimi-k3-2-8t-a104b&gpu=b300-288gb",
    "model=gpt-oss-120b&gpu=mac-studio-m3-ultra-512gb&quant=MXFP4_MOE",
])
def test_estimates_match_the_command_exactly(client, query):
    response = client.get(f"/api/v1/estimate?{query}")
    assert response.status_code == 200, response.content
    payload = response.json()
    validate(payload, "Estimate")
    args = []
    for pair in query.split("&"):
        key, value = pair.split("=")
        args += [f"--{key.replace('_', '-')}", value]
    out = io.StringIO()
    call_command("estimate", *args, "--format", "json", stdout=out)
    assert payload == json.loads(out.getvalue())
    assert set(response["Cache-Control"].split(", ")) == {"public", "max-age=300"}
    assert response.has_header("ETag")


def test_your_own_hardware_by_its_fields(client):
    response = client.get("/api/v1/estimate?model=llama-3-1-8b-instruct&memory_gb=24&bandwidth_gbs=1008"
                          "&fp16_tflops=165.2&kind=discrete&backend=cuda&tdp_w=450&name=My%204090")
    assert response.status_code == 200
    payload = response.json()
    validate(payload, "Estimate")
    assert payload["hardware"]["name"] == "My 4090"
    # a 24 GB card: usable 24 × 0.95 = 22.8 GiB, as the catalog's RTX 4090
    assert payload["hardware"]["usable_gib"] == pytest.approx(22.8)


def test_a_submitted_config_is_estimated_by_its_hash(client):
    submitted = submit_config(LLAMA_3_1_8B_CONFIG)
    by_hash = client.get(f"/api/v1/estimate?config={submitted.short_hash}&gpu=rtx-4090").json()
    by_slug = client.get("/api/v1/estimate?model=llama-3-1-8b-instruct&gpu=rtx-4090").json()
    validate(by_hash, "Estimate")
    assert by_hash["memory_gib"] == by_slug["memory_gib"]


@pytest.mark.parametrize("query, status, option", [
    ("model=llama-3-1-8b-instruct&gpu=rtx-4090&context=abc", 400, "--context"),
    ("model=llama-3-1-8b-instruct&gpu=rtx-4090&gpus=0", 400, "--gpus"),
    ("model=llama-3-1-8b-instruct&gpu=rtx-4090&kv-dtype=fp9", 400, "--kv-dtype"),
    ("model=llama-3-1-8b-instruct&gpu=rtx-4090&gpus=3&engine=vllm", 400, "--gpus"),
    ("model=llama-3-1-8b-instruct&memory_gb=-4&bandwidth_gbs=100", 400, "--hardware"),
    ("model=llama-3-1-8b-instruct", 400, None),
    ("gpu=rtx-4090", 400, None),
    ("model=no-such-model&gpu=rtx-4090", 404, "--model"),
    ("model=llama-3-1-8b-instruct&gpu=no-such-gpu", 404, "--gpu"),
    ("config=0123456789abcdef&gpu=rtx-4090", 404, "--config"),
])
def test_errors_are_json_with_the_option_named(client, query, status, option):
    response = client.get(f"/api/v1/estimate?{query}")
    assert response.status_code == status
    payload = response.json()
    validate(payload, "Error")
    assert payload["option"] == option


def test_listings_validate_and_match_the_command(client):
    models = client.get("/api/v1/models").json()
    hardware = client.get("/api/v1/hardware").json()
    validate(models, "Models")
    validate(hardware, "Hardware")
    out = io.StringIO()
    call_command("estimate", "--list", "--format", "json", stdout=out)
    assert {"models": models["models"], "hardware": hardware["hardware"]} == json.loads(out.getvalue())


@pytest.mark.parametrize("method", ["post", "put", "patch", "delete"])
def test_only_safe_methods_and_the_refusal_is_json(method):
    """With CSRF checks on, as a real client meets them (the test client skips them by default): a POST got Django's
    HTML 403 page before the API's JSON 405."""
    from django.test import Client

    response = getattr(Client(enforce_csrf_checks=True), method)("/api/v1/estimate?model=x&gpu=y")
    assert response.status_code == 405 and response["Allow"] == "GET, HEAD"
    assert response.json()["error"].startswith(f"method {method.upper()} is not allowed")


def test_the_page_shows_the_figures_the_api_returns(client):
    """One engine call behind both faces: the report's required memory and decode speed are the API's, formatted."""
    from reports import formatting

    payload = client.get("/api/v1/estimate?model=glm-4-5&gpu=instinct-mi325x-256gb&context=32768").json()
    body = client.get("/en/report/glm-4-5/instinct-mi325x-256gb/?context=32768").content.decode()
    required = formatting.number(payload["memory_gib"]["required"], "en", 2)
    decode = formatting.significant(payload["decode_tok_s"], "en")
    assert f'<dt>Required memory</dt><dd class="big">{required} GiB</dd>' in body
    assert f"~{decode} tok/s" in body


def test_step_3_5_flash_counts_its_kv_cache(client):
    """Step-3.5 Flash was an estimated model without a KV cache, so 8 × 256K on 2 × RTX PRO 6000 "fit" with +34.8 GiB.
    Its config (catalog seed): 12 full-attention layers and 33 sliding (window 512), 8 KV groups × 128 on both.
    llama.cpp f16: full 12 × (8 × 128 × 2 × 2 B = 4,096 B) × n_ctx 2,097,152 (8 × 262,144) = 96 GiB exactly;
    sliding 33 × 4,096 B × pad256(min(n_ctx, 512 × 8 + 512 ubatch)) = 4,608 cells = 622,854,144 B;
    together 103,702,069,248 B = 96.580078125 GiB."""
    payload = client.get("/api/v1/estimate?model=step-3-5-flash&gpu=rtx-pro-6000-blackwell&gpus=2&context=262144"
                         "&batch=8&quant=Q4_K_M").json()
    assert payload["memory_gib"]["kv_cache"] == 96.580078125
    assert payload["verdict"] != "fits" and payload["headroom_gib"] < 0
    assert not any(w.startswith("KV cache unknown") for w in payload["warnings"])
