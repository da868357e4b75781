"""The catalog seed files (catalog/seed/*.json): well-formed, sourced, consistent, and every config parses."""

import json
import re
from pathlib import Path

import pytest

from reports.sizing.config_parser import parse_config

SEED_DIR = Path(__file__).resolve().parents[2] / "catalog" / "seed"
SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


def load(name):
    with (SEED_DIR / name).open(encoding="utf-8") as handle:
        return json.load(handle)


ACCELERATORS = load("accelerators.json")
MODELS = load("models.json")
OFFERS = load("cloud_offers.json")
QUANTS = load("quant_formats.json")
MODELS_WITH_CONFIG = [model for model in MODELS if model["config"] is not None]


@pytest.mark.parametrize("rows", [ACCELERATORS, MODELS, OFFERS], ids=["accelerators", "models", "offers"])
def test_slugs_unique_and_url_safe(rows):
    slugs = [row["slug"] for row in rows]
    assert len(slugs) == len(set(slugs))
    assert [slug for slug in slugs if not SLUG.match(slug)] == []


def test_counts_meet_the_issue():
    # 49 seed accelerators with the fictional M4 Ultra replaced by the real M3 Ultra 256GB
    assert len(ACCELERATORS) >= 49
    assert len(MODELS) >= 60
    assert len(OFFERS) >= 10


def test_no_fictional_m4_ultra():
    assert [a["name"] for a in ACCELERATORS if "m4 ultra" in (a["name"] + a["slug"]).lower().replace("-", " ")] == []
    assert any(a["slug"] == "mac-studio-m3-ultra-256gb" for a in ACCELERATORS)


def test_every_row_has_a_source():
    for row in ACCELERATORS + MODELS + OFFERS + QUANTS:
        assert row["source"].strip(), row.get("slug") or row.get("name")
    for accelerator in ACCELERATORS:
        for price in accelerator["prices"]:
            assert price["source"].strip() and price["condition"] in ("new", "used") and price["usd"] > 0
            assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", price["as_of"])
    for model in MODELS:
        for size in model["published_sizes"]:
            assert size["source"].strip() and size["bytes"] > 0


def test_accelerator_fields():
    for a in ACCELERATORS:
        assert a["memory_gb"] > 0 and a["bandwidth_gbs"] > 0, a["slug"]
        assert a["kind"] in ("discrete", "accelerator", "unified")
        assert a["backend"] in ("cuda", "rocm", "metal", "vulkan", "sycl", "cann", "other")
        for key in ("fp16_tflops", "fp8_tflops", "tdp_w", "interconnect_gbs", "usable_memory_factor"):
            assert a[key] is None or a[key] > 0, (a["slug"], key)
    by_slug = {a["slug"]: a for a in ACCELERATORS}
    # seed 001: "Instinct MI325X 256GB | 256 GB | 6000 GB/s"; the M3 Ultra stands in for the M4 Ultra row's 256 / 819
    assert (by_slug["instinct-mi325x-256gb"]["memory_gb"], by_slug["instinct-mi325x-256gb"]["bandwidth_gbs"]) == (256, 6000)
    assert (by_slug["mac-studio-m3-ultra-256gb"]["memory_gb"], by_slug["mac-studio-m3-ultra-256gb"]["kind"]) == (256, "unified")


def test_every_offer_names_a_catalog_accelerator():
    slugs = {a["slug"] for a in ACCELERATORS}
    for offer in OFFERS:
        assert offer["accelerator_slug"] in slugs, offer["slug"]
        assert offer["gpu_count"] >= 1 and offer["hourly_usd"] > 0
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", offer["verified"]) and offer["url"].startswith("https://")


def test_model_fields():
    for model in MODELS:
        assert model["confidence"] in ("config.json", "documentation", "estimated"), model["slug"]
        assert (model["config"] is None) == (model["confidence"] == "estimated"), model["slug"]
        assert model["stated_params_total"] is None or model["stated_params_total"] > 0
        if model["config"] is None:
            assert model["notes"], model["slug"]  # say why there is no config


@pytest.mark.parametrize("model", MODELS_WITH_CONFIG, ids=[m["slug"] for m in MODELS_WITH_CONFIG])
def test_every_catalog_config_parses(model):
    spec = parse_config(model["config"], slug=model["slug"], name=model["name"])
    assert spec.has_shapes and spec.slug == model["slug"]


@pytest.mark.parametrize("slug", ["glm-4-5", "glm-5"])
def test_glm_45_and_glm5_carry_architecture_fields(slug):
    model = next(m for m in MODELS if m["slug"] == slug)
    spec = parse_config(model["config"])
    if slug == "glm-4-5":
        # Megatron-Bridge doc record: 92 layers (3 dense + 89 MoE), GQA 96 heads / 8 KV × 128, 160 experts top-8
        assert (spec.num_layers, spec.attention.num_kv_heads, spec.attention.head_dim) == (92, 8, 128)
        assert (spec.moe.num_experts, spec.moe.experts_per_token) == (160, 8)
    else:
        # zai-org/GLM-5-FP8 config: 78 layers, MLA kv_lora_rank 512 + rope 64, 256 experts top-8
        assert (spec.num_layers, spec.mla.kv_lora_rank, spec.mla.qk_rope_head_dim) == (78, 512, 64)
        assert (spec.moe.num_experts, spec.moe.experts_per_token) == (256, 8)


def rough_parameter_count(spec):
    """Independent, approximate count (weights of projections, experts and embeddings; norms and biases left
    out) used only to catch a config that does not describe the stated model."""
    hidden = spec.hidden_size
    mats = 3 if spec.ffn_gated else 2
    total = spec.vocab_size * hidden * (1 if spec.tie_word_embeddings else 2)
    for layer in spec.layers:
        if layer.mixer in ("full", "sliding", "chunked"):
            if spec.mla is not None:
                mla = spec.mla
                q = hidden * mla.q_lora_rank + mla.q_lora_rank * mla.num_heads * (mla.qk_nope_head_dim + mla.qk_rope_head_dim) \
                    if mla.q_lora_rank else hidden * mla.num_heads * (mla.qk_nope_head_dim + mla.qk_rope_head_dim)
                kv = hidden * (mla.kv_lora_rank + mla.qk_rope_head_dim) + mla.kv_lora_rank * mla.num_heads * (mla.qk_nope_head_dim + mla.v_head_dim)
                total += q + kv + mla.num_heads * mla.v_head_dim * hidden
            else:
                shape = spec.sliding_attention if layer.mixer == "sliding" and spec.sliding_attention else spec.attention
                v = 0 if shape.k_eq_v else shape.num_kv_heads * shape.v_dim
                total += hidden * (shape.num_heads * shape.head_dim + shape.num_kv_heads * shape.head_dim + v)
                total += shape.num_heads * shape.v_dim * hidden
        elif layer.mixer == "linear":
            la = spec.linear_attention
            keys, values = la.num_key_heads * la.key_head_dim, la.num_value_heads * la.value_head_dim
            total += hidden * (2 * keys + 2 * values + 2 * la.num_value_heads) + values * hidden
        elif layer.mixer == "mamba":
            m = spec.mamba
            inner = m.num_heads * m.head_dim
            total += hidden * (2 * inner + 2 * m.n_groups * m.state_size + m.num_heads) + inner * hidden
        elif layer.mixer == "conv":
            total += 4 * hidden * hidden
        if layer.ffn == "dense":
            total += mats * hidden * spec.intermediate_size
        elif layer.ffn == "moe":
            moe = spec.moe
            shared = moe.shared_expert_intermediate_size or 0
            # LatentMoE: the experts read and write the latent, reached through two hidden × latent projections
            expert_width = moe.latent_size or hidden
            total += mats * (expert_width * moe.num_experts * moe.expert_intermediate_size + hidden * shared)
            total += 2 * hidden * (moe.latent_size or 0)
    return total


CHECKED = [m for m in MODELS_WITH_CONFIG if m["stated_params_total"]]


@pytest.mark.parametrize("model", CHECKED, ids=[m["slug"] for m in CHECKED])
def test_parameter_totals_near_stated(model):
    """A sane range, not the 1 % accuracy check (that is parameters.py's): stated figures are rounded names,
    and multimodal models state vision towers the text config does not describe."""
    spec = parse_config(model["config"])
    ratio = rough_parameter_count(spec) / model["stated_params_total"]
    assert 0.8 <= ratio <= 1.2, f"{model['slug']}: {ratio:.3f}"


def test_unsloths_deepseek_gb_are_stored_as_gib():
    """unsloth's DeepSeek README "298 GB" (Q3_K_M) is GiB: stored as 298e9 B it read 7 % below the file, whose
    tensor shapes give 297.34 GiB (weights.weight_bytes)."""
    from bench import seed_catalog
    from reports.sizing.weights import weight_bytes

    sizes = {row["quant"]: row["bytes"] for row in next(m for m in MODELS if m["slug"] == "deepseek-v3-0324")
             ["published_sizes"]}
    assert sizes == {"Q2_K_L": 228 * 2**30, "Q2_K_XS": 207 * 2**30, "Q3_K_M": 298 * 2**30}
    from_shapes = weight_bytes(seed_catalog.model("deepseek-v3-0324"), "Q3_K_M").total_bytes
    assert abs(from_shapes / sizes["Q3_K_M"] - 1) < 0.005
