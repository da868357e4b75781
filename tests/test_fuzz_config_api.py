"""Size anything under hostile input: config.json bodies, the JSON API, "my hardware", compare: never a 5xx.

Hypothesis sends, through Django's test client (the whole middleware stack; it re-raises a view's exception,
so a 5xx fails with its traceback and the shrunk example):

- config.json bodies POSTed to /en/config/: real catalog configs with their architecture keys set to random,
  extreme, negative, float, string, null or nested values, keys deleted, random model_type and layer_types,
  and text_config wrappers; arbitrary JSON (non-objects, unicode, nesting); raw texts (truncated JSON, nesting
  100,000 deep, huge arrays, oversize bodies, control characters); uploads that are not UTF-8; bodies that are
  not a form. A body is either accepted (302 to /<lang>/config/<hash>/<hardware>/, and the API then estimates
  it) or refused with 400 and a message beside the field.
- query strings to /api/v1/estimate, /models, /hardware and /openapi.json: 200 with JSON valid against the
  OpenAPI document's schema, or 400/404 whose body is exactly {"error": str, "option": str|null}.
- query strings to the custom-hardware report (/<lang>/report/<model>/custom/), the report of a submitted
  config on custom hardware, and the compare page: 200, 400 or 404.

1,425 cases in all (hypothesis' example database is off, so every run draws afresh), 40-50 s on 2 cores.
The defects this file found (non-finite numbers, lone surrogates, layer kinds without their shapes) are fixed;
regression tests for each stand at the end, and the strategies draw those inputs again.
"""

from __future__ import annotations

import copy
import json
import re
from functools import cache
from typing import Any
from urllib.parse import quote, urlsplit

import pytest
from django.conf import settings as django_settings
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from hypothesis import HealthCheck, assume, currently_in_test_context, event, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from api.openapi import openapi_document
from catalog.forms import MAX_CONFIG_BYTES, load_config_json
from catalog.models import Accelerator, LLMModel, SubmittedConfig
from catalog.submissions import URL_HASH_LENGTH, submit_config
from reports.forms import HARDWARE_BACKENDS, HARDWARE_KINDS, KV_DTYPES
from reports.estimates import CatalogSnapshot
from tests.factories import LLAMA_3_1_8B_CONFIG

pytestmark = pytest.mark.django_db

FUZZ = settings(deadline=None, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                       HealthCheck.data_too_large, HealthCheck.filter_too_much])
LANGUAGES = ("en", "de")
SCHEMAS = openapi_document()["components"]["schemas"]
ESTIMATE_SCHEMA = Draft202012Validator(SCHEMAS["Estimate"])
ERROR_SCHEMA = Draft202012Validator(SCHEMAS["Error"])
ACCEPTED_CONFIG_URL = re.compile(rf"^/en/config/[0-9a-f]{{{URL_HASH_LENGTH}}}/[-a-z0-9]+/$")
SCRIPT = "<script>alert(1)</script>"


@pytest.fixture
def client() -> Client:
    return Client(raise_request_exception=True)


@cache
def catalog() -> tuple[tuple[dict, ...], tuple[str, ...], tuple[str, ...]]:
    """The seeded catalog's configs, model slugs and accelerator slugs (the test database holds the seed)."""
    models = LLMModel.objects.order_by("slug")
    configs = tuple(config for config in models.values_list("config", flat=True) if isinstance(config, dict))
    return (configs, tuple(models.values_list("slug", flat=True)),
            tuple(Accelerator.objects.order_by("slug").values_list("slug", flat=True)))


# --- values -------------------------------------------------------------------------------------------------

# Keys reports/sizing/config_parser.py reads (and their usual companions), the targets of the mutations.
ARCHITECTURE_KEYS = (
    "model_type", "architectures", "num_hidden_layers", "hidden_size", "intermediate_size",
    "num_attention_heads",
    "num_key_value_heads", "head_dim", "vocab_size", "max_position_embeddings", "max_seq_len", "seq_length",
    "tie_word_embeddings", "tie_embedding", "torch_dtype", "dtype", "quantization_config", "text_config",
    "layer_types", "sliding_window", "use_sliding_window", "max_window_layers", "sliding_window_pattern",
    "attention_bias", "attention_chunk_size", "num_local_experts", "num_experts", "n_routed_experts",
    "moe_num_experts", "num_experts_per_tok", "moe_top_k", "moe_topk", "moe_intermediate_size",
    "shared_expert_intermediate_size", "n_shared_experts", "first_k_dense_replace", "moe_layer_freq",
    "decoder_sparse_step", "kv_lora_rank", "q_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim",
    "v_head_dim",
    "index_head_dim", "index_n_heads", "index_topk", "linear_num_key_heads", "linear_num_value_heads",
    "linear_key_head_dim", "linear_value_head_dim", "linear_conv_kernel_dim", "full_attention_interval",
    "mamba_num_heads", "mamba_head_dim", "ssm_state_size", "n_groups", "conv_kernel", "conv_L_cache",
    "hybrid_override_pattern", "global_head_dim", "num_kv_shared_layers", "no_rope_layers", "mlp_only_layers",
    "block_ff_dim", "block_ffn_dim_multiplier", "block_multiple_of", "_name_or_path",
)
MODEL_TYPES = ("llama", "mistral", "qwen2", "qwen3", "phi3", "glm4", "mixtral", "qwen2_moe", "qwen3_moe",
               "qwen3_next", "qwen3_5", "qwen3_5_moe", "deepseek_v2", "deepseek_v3", "deepseek_v32",
               "kimi_k2",
               "glm4_moe_lite", "glm_moe_dsa", "glm4_moe", "deepseek_v4", "gpt_oss", "minimax_m2", "hunyuan",
               "step3p5", "gemma3", "gemma4", "cohere2", "llama4", "nemotron_h", "lfm2", "gemma3_text",
               "llama4_text", "hunyuan_v1_moe", "LLAMA", " llama ", "bert", "gpt2", "", "__proto__")
LAYER_TYPES = ("full_attention", "attention", "global", "sliding_attention", "local", "chunked_attention",
               "linear_attention", "conv", "mamba", "mamba2", "moe", "", "FULL_ATTENTION", "dense")
EXTREME_INTS = (0, -1, 1, 2, 3, 7, 255, 4096, 2**31 - 1, 2**31, 2**53 + 1, 2**63, -(2**63), 10**100,
                -(10**100),
                int("9" * 4_000))  # 4,000 digits: under Python's int_max_str_digits, so json parses it
HOSTILE_STRINGS = ("", " ", "32", "0x20", "1e3", "NaN", "null", "true", "[]", "{}", SCRIPT, "' OR 1=1 --",
                   "{{ 7|add:7 }}", "../../etc/passwd", "\x00", "ü" * 300, "😀" * 100, "\u202e\ufeff",
                   "a" * 5_000)

# NaN and ±Infinity included: json.dumps writes them as NaN/Infinity, which load_config_json must refuse.
finite_floats = st.floats()
json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70), st.sampled_from(EXTREME_INTS),
    finite_floats, st.sampled_from((0.5, -0.0, 32.0, 1e308, -1e308, 5e-324, 4096.000001)),
    st.text(max_size=20), st.sampled_from(HOSTILE_STRINGS),
)
json_values = st.recursive(
    json_scalars,
    lambda children: (st.lists(children, max_size=6)
                      | st.dictionaries(st.text(max_size=12), children, max_size=6)),
    max_leaves=25,
)


def near(value: Any) -> st.SearchStrategy:
    """Values close to a real one: off by a little or by powers of two, negated, as float or string."""
    if isinstance(value, bool) or not isinstance(value, int):
        return json_values
    return st.one_of(
        st.integers(min_value=-3, max_value=3).map(lambda delta: value + delta),
        st.integers(min_value=-12, max_value=40).map(
            lambda shift: value * 2**shift if shift >= 0 else value >> -shift),
        st.just(-value), st.just(float(value)), st.just(value + 0.5), st.just(str(value)), st.just([value]),
    )


# --- config.json bodies -------------------------------------------------------------------------------------

@st.composite
def mutated_configs(draw) -> Any:
    """A real catalog config with one to four hostile edits (its text_config as often as the wrapper)."""
    configs, _, _ = catalog()
    config = copy.deepcopy(draw(st.sampled_from(configs)))
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        target = config
        if isinstance(config.get("text_config"), dict) and draw(st.booleans()):
            target = config["text_config"]
        edit = draw(st.sampled_from(("set", "set", "near", "delete", "model_type", "layer_types", "wrap")))
        key = draw(st.sampled_from(sorted(set(ARCHITECTURE_KEYS) | set(target))))
        if edit == "set":
            target[key] = draw(json_values)
        elif edit == "near" and key in target:
            target[key] = draw(near(target[key]))
        elif edit == "delete":
            target.pop(key, None)
        elif edit == "model_type":
            target["model_type"] = draw(
                st.one_of(st.sampled_from(MODEL_TYPES), st.text(max_size=15), json_scalars))
        elif edit == "layer_types":
            layers = target.get("num_hidden_layers")
            real = isinstance(layers, int) and 0 < layers < 2_000
            length = layers + draw(st.integers(-2, 2)) if real else 0
            length = draw(st.one_of(st.just(max(length, 0)), st.integers(min_value=0, max_value=300)))
            target["layer_types"] = draw(
                st.lists(st.sampled_from(LAYER_TYPES), min_size=length, max_size=length))
        elif edit == "wrap":
            config = {"model_type": draw(st.sampled_from(MODEL_TYPES)),
                      "text_config": draw(st.one_of(st.just(config), json_values)),
                      "torch_dtype": draw(st.sampled_from(("bfloat16", "float16", "float8", None)))}
    return config


def count(outcome: str) -> None:
    """Tally an outcome for `pytest --hypothesis-show-statistics` (how many cases reach the engine)."""
    if currently_in_test_context():  # the negative controls call the checks outside hypothesis
        event(outcome)


def post_config(client: Client, body: str | bytes, *, upload: bool = False, lang: str = "en"):
    if upload:
        raw = body.encode("utf-8") if isinstance(body, str) else body
        data = {"config_file": SimpleUploadedFile("config.json", raw, "application/json")}
    else:
        data = {"config_text": body}
    return client.post(f"/{lang}/config/", data)


def field_error(body: str) -> str:
    """The text of the config form's field messages (empty when there is none)."""
    return " ".join(re.findall(r'class="field-error" role="alert">([^<]*)<', body)).strip()


def assert_accepted_or_refused(client: Client, response, hardware: str) -> None:
    """302 to the config's report (then the API estimates it on HARDWARE), or 400 with a message."""
    assert response.status_code in (302, 400), response.status_code
    count(f"config.json answered {response.status_code}")
    if response.status_code == 400:
        assert field_error(response.content.decode()), "a refused config.json got no message beside the field"
        return
    location = response["Location"]
    assert ACCEPTED_CONFIG_URL.match(location), location
    config_hash = location.split("/")[3]
    assert_api_answer(client.get(f"/api/v1/estimate?config={config_hash}&gpu={hardware}"))


@settings(FUZZ, max_examples=250)
@given(config=mutated_configs(),
       upload=st.booleans(), ascii_only=st.booleans(), data=st.data())
def test_mutated_real_configs(client, config, upload, ascii_only, data):
    body = json.dumps(config, ensure_ascii=ascii_only)
    response = post_config(client, body, upload=upload)
    assert_accepted_or_refused(client, response, data.draw(st.sampled_from(catalog()[2])))


@settings(FUZZ, max_examples=200)
@given(value=json_values, upload=st.booleans())
def test_arbitrary_json(client, value, upload):
    response = post_config(client, json.dumps(value, ensure_ascii=False), upload=upload)
    assert_accepted_or_refused(client, response, "rtx-4090")


def nested(depth: int, opener: str, closer: str, leaf: str = "1") -> str:
    return opener * depth + leaf + closer * depth


LLAMA_TEXT = json.dumps(LLAMA_3_1_8B_CONFIG)


def inside_llama(key: str, value_text: str) -> str:
    """The Llama 3.1 8B config with one more key whose value is the raw JSON text VALUE_TEXT."""
    return LLAMA_TEXT[:-1] + f', "{key}": {value_text}}}'


DEPTHS = (10, 500, 900, 990, 1_000, 2_000, 5_000, 100_000)
raw_texts = st.one_of(
    # truncated or spliced real JSON
    st.integers(min_value=0, max_value=len(LLAMA_TEXT)).map(lambda cut: LLAMA_TEXT[:cut]),
    st.tuples(st.integers(0, len(LLAMA_TEXT)), st.text(max_size=5)).map(
        lambda cut: LLAMA_TEXT[:cut[0]] + cut[1] + LLAMA_TEXT[cut[0]:]),
    # nesting, as the whole body or inside a valid config
    st.sampled_from(DEPTHS).map(lambda depth: nested(depth, "[", "]")),
    st.sampled_from(DEPTHS).map(lambda depth: nested(depth, '{"a":', "}")),
    st.sampled_from(DEPTHS[:6]).map(lambda depth: inside_llama("extra", nested(depth, "[", "]"))),
    st.sampled_from(DEPTHS[:6]).map(lambda depth: inside_llama("text_config", nested(depth, '{"a":', "}"))),
    # huge arrays and strings, up to and over the size limit
    st.sampled_from((32, 1_000, 14_000, 20_000)).map(
        lambda n: inside_llama("layer_types", json.dumps(["full_attention"] * n))),
    st.sampled_from((1_000, 60_000, 200_000)).map(
        lambda n: inside_llama("architectures", json.dumps([0] * n))),
    st.sampled_from((MAX_CONFIG_BYTES - len(LLAMA_TEXT) - 30, MAX_CONFIG_BYTES, 3 * 1024 * 1024)).map(
        lambda n: inside_llama("padding", json.dumps("x" * n))),
    # numbers JSON allows but Python limits, and non-objects
    st.sampled_from(("1" * 4_301, "-" + "9" * 5_000, "1e999999", "-1e-999999", "0." + "0" * 5_000 + "1")).map(
        lambda number: inside_llama("num_hidden_layers", number)),
    st.sampled_from(("[]", "1", '"config"', "null", "true", "[{}]", '""', " ", "\n\t")),
    # unicode, control characters, a byte-order mark
    st.text(max_size=200), st.text(alphabet=st.characters(codec="utf-8"), max_size=200),
    st.just("\ufeff" + LLAMA_TEXT), st.just(LLAMA_TEXT.replace('"llama"', '"ll\\u0000ama"')),
    st.just(LLAMA_TEXT.replace('"llama"', '"\\u006c\\u006c\\u0061\\u006d\\u0061"')),
)


@settings(FUZZ, max_examples=150)
@given(text=raw_texts, upload=st.booleans())
def test_raw_texts(client, text, upload):
    response = post_config(client, text, upload=upload)
    if not upload and len(text.encode("utf-8")) > django_settings.DATA_UPLOAD_MAX_MEMORY_SIZE:
        # Django refuses the request body before the form sees it (RequestDataTooBig): its plain 400 page.
        assert response.status_code == 400
        return
    assert_accepted_or_refused(client, response, "h100-80gb-sxm")


not_utf8 = st.one_of(
    st.binary(max_size=300).map(lambda raw: raw + b"\xff"),  # 0xFF is never part of UTF-8
    st.sampled_from((b"\xff\xfe" + LLAMA_TEXT.encode("utf-16-le"), LLAMA_TEXT.encode("utf-16"),
                     LLAMA_TEXT.encode("utf-8")[:40] + b"\xc3\x28" + LLAMA_TEXT.encode("utf-8")[40:],
                     LLAMA_TEXT.encode("latin-1").replace(b"llama", b"ll\xe4ma"), b"\xed\xa0\x80")),
)


@settings(FUZZ, max_examples=60)
@given(raw=not_utf8)
def test_uploads_that_are_not_utf8(client, raw):
    response = post_config(client, raw, upload=True)
    assert response.status_code == 400
    assert field_error(response.content.decode())


@settings(FUZZ, max_examples=40)
@given(body=st.one_of(st.binary(max_size=500), st.sampled_from((LLAMA_TEXT.encode(), b"config_text=%ff%fe%00",
                                                                   b"config_text=" + b"%7B" * 50_000))),
       content_type=st.sampled_from(("application/json", "text/plain", "application/x-www-form-urlencoded",
                                     "multipart/form-data; boundary=x", "multipart/form-data", "")))
def test_bodies_that_are_not_the_form(client, body, content_type):
    response = client.post("/en/config/", data=body, content_type=content_type)
    assert response.status_code == 400


@settings(FUZZ, max_examples=15)
@given(config=mutated_configs(),
       lang=st.sampled_from(LANGUAGES), htmx=st.booleans(), data=st.data())
def test_report_pages_of_accepted_hostile_configs(client, config, lang, htmx, data):
    """What the config form accepts, its report renders (on a random accelerator, at a random context)."""
    try:
        load_config_json(json.dumps(config))
    except ValidationError:
        assume(False)
    submitted = submit_config(config)
    hardware = data.draw(st.sampled_from(catalog()[2]))
    context = data.draw(st.sampled_from(("", "2048", "131072", "1048576", "99999999")))
    response = client.get(f"/{lang}/config/{submitted.short_hash}/{hardware}/?context={context}",
                          headers={"HX-Request": "true"} if htmx else {})
    assert response.status_code in (200, 400)


# --- query strings ------------------------------------------------------------------------------------------

HOSTILE_QUERY_VALUES = (
    "", " ", "-1", "0", "-0", "1e308", "1e309", "-1e309", "9" * 400, "NaN", "nan", "inf", "-inf", "Infinity",
    "0x10", "1_000", "1,5", "٣٢٧٦٨", "８１９２", "2147483648", "9223372036854775808", ".5", "+8", " 8 ",
    "\t8\n", "A" * 10_000, "ü" * 3_000, SCRIPT, "' OR '1'='1", "{{ 7|add:7 }}", "../../../../etc/passwd",
    "\x00", "a\x00b", "\r\nSet-Cookie: x=1", "auto", "AUTO", "llama.cpp", "vllm", "VLLM", "rtx-4090:2",
    "rtx-4090:0", "rtx-4090:-1",
    "rtx-4090:99", "rtx-4090:1.5", "rtx-4090:", ":2", "h100-80gb-sxm:8", "custom",
)
RAW_FRAGMENTS = ("%", "%%", "%zz", "%ff%fe", "%c3%28", "%ed%a0%80", "%00", "&&&", "===", "a=1=2", ";", "+",
                 "hw=a&hw=b&hw=c&hw=d&hw=e&hw=f", "=empty-key", "&=&", "%26%3d", "context[]=1")


def plausible_values(key: str) -> st.SearchStrategy[str]:
    """Values a form or the API could take for KEY, so many cases reach the engine."""
    # Deferred: the catalog is read from the test database, which only a running test may open.
    models = st.deferred(lambda: st.sampled_from(catalog()[1]))
    hardware = st.deferred(lambda: st.sampled_from(catalog()[2]))
    quants = st.deferred(lambda: st.sampled_from(CatalogSnapshot().quant_names))
    kv_dtypes = st.sampled_from([code for code, _ in KV_DTYPES])
    numbers = st.one_of(st.integers(min_value=-5, max_value=2_000_000).map(str),
                        finite_floats.map(lambda number: f"{number:g}"))
    by_key = {
        "model": models, "gpu": hardware, "hw0": hardware, "hw1": hardware, "hw2": hardware, "hw3": hardware,
        "hw": hardware, "quant": quants, "kv_dtype": kv_dtypes, "kv-dtype": kv_dtypes,
        "engine": st.sampled_from(("llama.cpp", "vllm")),
        "kind": st.sampled_from([code for code, _ in HARDWARE_KINDS]),
        "backend": st.sampled_from([code for code, _ in HARDWARE_BACKENDS]),
        "context": st.sampled_from(("256", "2048", "8192", "32768", "131072", "1048576", "12000")),
        "gpus": st.sampled_from(("1", "2", "3", "4", "8", "16", "64")),
        "offload": st.sampled_from(("auto", "0", "50", "90")),
        "offload_pct": st.sampled_from(("auto", "0", "50")),
        "memory_gb": st.sampled_from(("0.1", "8", "24", "80", "192", "512", "2048")),
        "bandwidth_gbs": st.sampled_from(("0.1", "100", "1008", "3350", "8000")),
        "fp16_tflops": st.sampled_from(("0.01", "35", "165.2", "989", "100000")),
        "tdp_w": st.sampled_from(("1", "65", "450", "1000")), "name": st.text(max_size=40),
        "batch": st.sampled_from(("1", "4", "64", "1024")), "hours": st.sampled_from(("0.5", "4", "24")),
        "budget": st.sampled_from(("", "0", "1599", "250000")), "kwh": st.sampled_from(("0", "0.175", "5")),
        "n0": st.sampled_from(("1", "2", "4", "8")), "n1": st.sampled_from(("1", "2", "4", "8")),
    }
    return by_key.get(key, numbers)


def weighted(likely: st.SearchStrategy, unlikely: st.SearchStrategy, tenths: int) -> st.SearchStrategy:
    """LIKELY in TENTHS of ten draws, else UNLIKELY (st.one_of merges repeated branches: it cannot weigh)."""
    return st.integers(min_value=0, max_value=9).flatmap(lambda n: likely if n < tenths else unlikely)


def hostile_values(key: str) -> st.SearchStrategy[str]:
    """Half plausible, half hostile."""
    hostile = st.one_of(st.sampled_from(HOSTILE_QUERY_VALUES), st.text(max_size=30),
                        st.integers(min_value=-(10**40), max_value=10**40).map(str), st.floats().map(repr))
    return weighted(plausible_values(key), hostile, 5)


@st.composite
def query_strings(draw, keys: tuple[str, ...], base: dict[str, st.SearchStrategy[str]] | None = None) -> str:
    """Up to six pairs over KEYS (and strangers), encoded, sent raw or replaced by a raw fragment. BASE pairs
    come first: all of them half the time (so that many queries are complete and reach the engine), else each
    by chance; a later pair with the same key overrides a base pair (QueryDict.get returns the last value)."""
    complete = draw(st.booleans())
    pairs = [(key, draw(strategy)) for key, strategy in (base or {}).items()
             if complete or draw(st.booleans())]
    for _ in range(draw(st.integers(min_value=0, max_value=6))):
        key = draw(weighted(st.sampled_from(keys),
                            st.one_of(st.text(max_size=12), st.sampled_from(HOSTILE_QUERY_VALUES[:30])), 8))
        pairs.append((key, draw(hostile_values(key))))
    parts = []
    for key, value in pairs:
        style = draw(st.sampled_from(("encoded", "encoded", "encoded", "raw", "fragment")))
        if style == "fragment":
            parts.append(draw(st.sampled_from(RAW_FRAGMENTS)))
        elif style == "encoded":
            parts.append(f"{quote(key, safe='')}={quote(value, safe='')}")
        else:  # what a client could put on the wire unescaped ('#' would start the fragment)
            parts.append(f"{key}={value}".replace("#", "%23"))
    return "&".join(parts)


def assert_api_answer(response) -> None:
    """200 with the contract's JSON, or 400/404 with exactly {"error": str, "option": str|null}."""
    assert response.status_code in (200, 400, 404), response.status_code
    count(f"API answered {response.status_code}")
    assert response["Content-Type"] == "application/json"
    payload = json.loads(response.content)
    validator = ESTIMATE_SCHEMA if response.status_code == 200 else ERROR_SCHEMA
    errors = [error.message for error in validator.iter_errors(payload)]
    assert not errors, (errors, payload)


ESTIMATE_KEYS = ("model", "config", "gpu", "quant", "context", "batch", "kv_dtype", "kv-dtype", "engine",
                 "gpus", "offload_pct", "depth", "prompt", "gpu_memory_utilization", "max_num_seqs",
                 "max_num_batched_tokens", "ram_bandwidth", "memory_gb", "bandwidth_gbs", "fp16_tflops",
                 "fp8_tflops", "tdp_w", "usable_memory_factor", "interconnect_gbs", "price_usd", "name",
                 "vendor", "kind", "backend", "interconnect")


@settings(FUZZ, max_examples=330)
@given(data=st.data())
def test_api_estimate(client, data):
    submitted = submit_config(LLAMA_3_1_8B_CONFIG)
    by_hash = st.sampled_from((submitted.short_hash, submitted.sha256, submitted.short_hash.upper()))
    model = data.draw(weighted(st.just({"model": plausible_values("model")}),
                               st.just({"config": by_hash}), 7))
    base = model | {"gpu": plausible_values("gpu")}
    query = data.draw(query_strings(ESTIMATE_KEYS, base))
    assert_api_answer(client.get(f"/api/v1/estimate?{query}"))


@settings(FUZZ, max_examples=60)
@given(endpoint=st.sampled_from(("models", "hardware", "openapi.json")), data=st.data())
def test_api_listings_ignore_any_query(client, endpoint, data):
    response = client.get(f"/api/v1/{endpoint}?{data.draw(query_strings(ESTIMATE_KEYS))}")
    assert response.status_code == 200
    schema = {"models": "Models", "hardware": "Hardware"}.get(endpoint)
    payload = response.json()
    if schema:
        Draft202012Validator(SCHEMAS[schema]).validate(payload)
    else:
        assert payload["openapi"].startswith("3.1")


def assert_page(client: Client, url: str, htmx: bool, statuses=(200, 301, 302, 400, 404)) -> None:
    response = client.get(url, headers={"HX-Request": "true"} if htmx else {})
    assert response.status_code in statuses, (url, response.status_code)
    if response.status_code == 301:  # a slug typed with capitals: the same site path, lower-cased
        location = response["Location"]
        assert location.startswith("/") and not location.startswith("//"), location
        assert location.split("?")[0] == urlsplit(url).path.lower(), (url, location)
    if response.status_code == 302:  # the other engine's KV type or format replaced: the page of that state
        location = response["Location"]
        assert not htmx and location.split("?")[0] == urlsplit(url).path, (url, location)
        assert "kv_replaced=" in location or "quant_replaced=" in location, location
    count(f"page answered {response.status_code}")
    assert SCRIPT not in response.content.decode("utf-8", errors="replace"), f"{url} reflects a <script>"


HARDWARE_KEYS = ("name", "memory_gb", "bandwidth_gbs", "fp16_tflops", "tdp_w", "kind", "backend",
                 "quant", "context", "gpus", "batch", "kv_dtype", "engine", "offload", "hours", "budget",
                 "kwh")
# A complete custom accelerator half the time, so the hostile keys often reach the engine and the template.
CUSTOM_BASE = {"memory_gb": plausible_values("memory_gb"), "bandwidth_gbs": plausible_values("bandwidth_gbs"),
               "kind": plausible_values("kind"), "backend": plausible_values("backend")}
# The full page of a valid custom accelerator takes ~0.4 s to render, its htmx partial ~0.05 s: mostly htmx.
mostly_htmx = weighted(st.just(True), st.just(False), 8)


@settings(FUZZ, max_examples=150)
@given(data=st.data(), lang=st.sampled_from(LANGUAGES), htmx=mostly_htmx)
def test_custom_hardware_report(client, data, lang, htmx):
    _, models, _ = catalog()
    model = data.draw(weighted(st.sampled_from(models), st.text(max_size=20), 8))
    query = data.draw(query_strings(HARDWARE_KEYS, CUSTOM_BASE))
    assert_page(client, f"/{lang}/report/{quote(model, safe='')}/custom/?{query}", htmx)


@settings(FUZZ, max_examples=50)
@given(data=st.data(), htmx=mostly_htmx)
def test_submitted_config_on_custom_hardware(client, data, htmx):
    submitted = submit_config(LLAMA_3_1_8B_CONFIG)
    short_hash = data.draw(st.one_of(st.just(submitted.short_hash), st.just(submitted.sha256),
                                     st.from_regex(r"[0-9a-fA-F]{0,70}", fullmatch=True)))
    query = data.draw(query_strings(HARDWARE_KEYS, CUSTOM_BASE))
    assert_page(client, f"/en/config/{short_hash}/custom/?{query}", htmx)


COMPARE_KEYS = ("hw0", "hw1", "hw2", "hw3", "n0", "n1", "n2", "n3", "hw", "quant", "context", "kv_dtype",
                "engine", "offload", "batch")


@settings(FUZZ, max_examples=120)
@given(data=st.data(), lang=st.sampled_from(LANGUAGES), htmx=st.booleans())
def test_compare(client, data, lang, htmx):
    _, models, _ = catalog()
    model = data.draw(weighted(st.sampled_from(models), st.text(max_size=20), 8))
    base = {"hw0": plausible_values("hw0"), "hw1": plausible_values("hw1"), "n1": plausible_values("gpus")}
    query = data.draw(query_strings(COMPARE_KEYS, base))
    assert_page(client, f"/{lang}/compare/{quote(model, safe='')}/?{query}", htmx)


# --- the checks can fail ------------------------------------------------------------------------------------

class CannedResponse(dict):
    """A response stand-in: status, headers (the dict) and content."""

    def __init__(self, status: int, content: bytes, content_type: str = "application/json"):
        super().__init__({"Content-Type": content_type})
        self.status_code, self.content = status, content


@pytest.mark.parametrize("response", [
    CannedResponse(500, b'{"error": "boom", "option": null}'),
    CannedResponse(400, b'{"error": "bad", "option": null, "detail": "extra"}'),  # not the Error schema
    CannedResponse(404, b'{"message": "not found"}'),
    CannedResponse(400, b"<h1>Bad Request</h1>", "text/html"),
    CannedResponse(200, b'{"model": {}}'),  # not the Estimate schema
])
def test_the_api_check_rejects_what_the_contract_forbids(response):
    with pytest.raises((AssertionError, ValueError)):
        assert_api_answer(response)


def test_the_config_check_rejects_a_refusal_without_a_message_and_a_stray_redirect(client):
    with pytest.raises(AssertionError):
        assert_accepted_or_refused(client, CannedResponse(400, b"<p>no</p>", "text/html"), "rtx-4090")
    stray = CannedResponse(302, b"", "text/html")
    stray["Location"] = "/en/"
    with pytest.raises(AssertionError):
        assert_accepted_or_refused(client, stray, "rtx-4090")


# --- defects this file found, now fixed: regression tests ---------------------------------------------------

@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_numbers_in_a_config_are_refused(client, constant):
    response = post_config(client, inside_llama("rope_scaling_factor", constant))
    assert response.status_code == 400 and "JSON" in field_error(response.content.decode())


@pytest.mark.parametrize("text", [inside_llama("_name_or_path", '"\\ud800"'), inside_llama("\\udfff", "1")])
def test_a_lone_surrogate_in_a_config_is_refused(client, text):
    response = post_config(client, text)
    assert response.status_code == 400 and field_error(response.content.decode())


@pytest.mark.parametrize("layer_type", ["conv", "mamba", "linear_attention"])
def test_layer_types_without_their_shape_are_refused(client, layer_type):
    config = {**LLAMA_3_1_8B_CONFIG, "layer_types": [layer_type] * LLAMA_3_1_8B_CONFIG["num_hidden_layers"]}
    response = post_config(client, json.dumps(config))
    assert response.status_code == 400 and "layer_types" in field_error(response.content.decode())
