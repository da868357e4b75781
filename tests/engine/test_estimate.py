"""The orchestrated estimate: the seed's GLM figures, the contract JSON, validation and properties."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.model_specs import LLAMA_3_1_8B
from reports.sizing.config_parser import parse_config
from reports.sizing.errors import SizingError
from reports.sizing.estimate import GIB, estimate, hardware_from_dict, validate_scenario
from reports.sizing.specs import CloudOfferSpec, HardwareSpec, ModelSpec, Scenario

SEED_MODELS = Path(__file__).resolve().parents[2] / "catalog" / "seed" / "models.json"

# Seed page accelerator (accelerators.json instinct-mi325x-256gb: 256 GB HBM3E, 6,000 GB/s, 1,307.4 TFLOPS).
MI325X = HardwareSpec(slug="instinct-mi325x-256gb", name="Instinct MI325X", vendor="AMD", memory_gb=256,
                      bandwidth_gbs=6000, kind="accelerator", backend="rocm", fp16_tflops=1307.4, tdp_w=1000)
H100 = HardwareSpec(slug="h100", name="H100 80GB", vendor="NVIDIA", memory_gb=80, bandwidth_gbs=3350,
                    kind="accelerator", backend="cuda", fp16_tflops=989.4, interconnect_gbs=900)
RTX_4090 = HardwareSpec(slug="rtx-4090", name="RTX 4090", vendor="NVIDIA", memory_gb=24, bandwidth_gbs=1008,
                        backend="cuda", fp16_tflops=165.2)


def seed_model(slug: str) -> ModelSpec:
    rows = {row["slug"]: row for row in json.loads(SEED_MODELS.read_text())}
    return parse_config(rows[slug]["config"], slug=slug, name=rows[slug]["name"])


@pytest.fixture(scope="module")
def glm5() -> ModelSpec:
    return seed_model("glm-5")


@pytest.fixture(scope="module")
def glm45() -> ModelSpec:
    return seed_model("glm-4-5")


# Llama-3.1-8B with its 128K context window (config.json max_position_embeddings 131072).
LLAMA_8B = replace(LLAMA_3_1_8B, max_context=131_072)


# --- the seed's figures --------------------------------------------------------------------------------------------
# Seed (seed-arithmetic.md), Q4_K_M on MI325X: GLM-5 421.71 GiB at 8K / 423.76 at 32K (420.45 weights + 0.69 / 2.74
# KV + 0.57 runtime), GLM-4.5 204.19 / 212.81 (200.75 + 2.88 / 11.5 + 0.56), usable 243.2, 165 % / 80 %.
# Term by term (ours):
# - KV GLM-4.5: 2 × 92 layers × 8 KV heads × 128 × 2 B × 8,192 = 3,087,007,744 B = 2.875 GiB (seed 2.875).
# - KV GLM-5: 78 × (512 + 64) × 2 B × 8,192 = 0.6855 GiB of MLA latent (seed 0.686) + the DSA indexer keys the seed
#   omits, 78 × 128 × 2 B × 8,192 = 0.1523 GiB (llama-kv-cache-dsa.cpp): 0.8379 GiB.
# - Weights: per-tensor llama-quantize rules, not a flat bpw. GLM-5 417.61 GiB (4.82 bpw over 743.9 B; the GGUF
#   drops the MTP block) vs the seed's 420.45 (744 B × 4.854): −0.68 %. GLM-4.5 200.51 GiB including the MTP block
#   its GGUF stores (2.40 GiB) vs 200.75: −0.12 %.
# - Runtime: llama.cpp compute buffer 4 × 512 × (vocab + hidden) + 300 MiB ROCm context + host buffers ≈ 0.62 GiB
#   (seed 0.56-0.57 flat); at 32K the host KQ mask adds 4 × 512 × 24,576 B = 0.047 GiB.
SEED_TOTALS = [("glm-5", 8192, 421.71), ("glm-5", 32768, 423.76), ("glm-4-5", 8192, 204.19),
               ("glm-4-5", 32768, 212.81)]


@pytest.mark.parametrize(("slug", "context", "seed_gib"), SEED_TOTALS)
def test_seed_required_memory_within_one_percent(slug, context, seed_gib):
    result = estimate(seed_model(slug), MI325X, Scenario(context=context)).to_contract_json()
    assert result["memory_gib"]["required"] == pytest.approx(seed_gib, rel=0.01)
    assert result["hardware"]["usable_gib"] == pytest.approx(243.2)


def test_glm5_terms(glm5):
    result = estimate(glm5, MI325X, Scenario(context=8192))
    memory = result.to_contract_json()["memory_gib"]
    assert memory["kv_cache"] == 78 * (512 + 64 + 128) * 2 * 8192 / GIB
    assert memory["weights"] == pytest.approx(420.45, rel=0.01)
    assert result.fit.verdict == "exceeds"
    assert round(result.fit.utilization_pct) == pytest.approx(165, abs=1.5)  # seed: 165 %
    # It does not fit: the routed experts of the first blocks go to system RAM (--n-cpu-moe) until it does.
    assert result.placement.n_cpu_moe and result.placement.per_gpu_bytes <= result.fit.usable_bytes_per_gpu
    assert result.placement.offloaded_bytes > (memory["required"] - 243.2) * GIB


def test_glm45_terms(glm45):
    result = estimate(glm45, MI325X, Scenario(context=32768))
    json_ = result.to_contract_json()
    assert json_["memory_gib"]["kv_cache"] == 2 * 92 * 8 * 128 * 2 * 32768 / GIB == 11.5
    assert json_["verdict"] == "fits"
    assert round(estimate(glm45, MI325X, Scenario()).fit.utilization_pct) == 80
    assert json_["memory_gib"]["offloaded"] == 0.0


# --- the contract's JSON ----------------------------------------------------------------------------------------------

CONTRACT_KEYS = {"model", "hardware", "scenario", "memory_gib", "headroom_gib", "utilization_pct", "verdict",
                 "decode_tok_s", "aggregate_decode_tok_s", "prefill_tok_s", "ttft_ms", "cost_per_mtok_usd",
                 "kv_tokens_capacity", "finetune_gib", "warnings"}


def test_contract_json_shape():
    result = estimate(LLAMA_8B, RTX_4090, Scenario()).to_contract_json()
    assert set(result) == CONTRACT_KEYS
    assert set(result["model"]) == {"slug", "name", "params_total", "params_active", "attention"}
    assert set(result["hardware"]) == {"slug", "name", "count", "memory_gb", "usable_gib", "bandwidth_gbs"}
    assert set(result["scenario"]) == {"quant", "context", "batch", "kv_dtype", "engine", "offload_pct", "depth",
                                       "prompt"}
    assert set(result["memory_gib"]) == {"weights", "kv_cache", "runtime", "offloaded", "required", "per_gpu"}
    assert set(result["finetune_gib"]) == {"qlora", "lora", "full"}
    memory = result["memory_gib"]
    assert memory["required"] == pytest.approx(memory["weights"] + memory["kv_cache"] + memory["runtime"])
    # Llama 3.1 8B KV: 2 × 32 × 8 × 128 × 2 B = 131,072 B/token × 8,192 = 1 GiB.
    assert memory["kv_cache"] == 1.0
    assert result["model"]["attention"] == "gqa"
    assert result["kv_tokens_capacity"] == 8192
    assert result["ttft_ms"] == pytest.approx(4096 / result["prefill_tok_s"] * 1000)
    json.dumps(result, allow_nan=False)  # plain JSON, finite numbers


def test_vllm_tensor_parallel_estimate():
    result = estimate(LLAMA_8B, H100, Scenario(quant="BF16", engine="vllm", gpus=2))
    json_ = result.to_contract_json()
    assert json_["kv_tokens_capacity"] == result.runtime.kv_capacity_tokens > 8192
    # Per rank: half of every weight except the norms (tests/engine/test_parallelism.py) + its KV + runtime.
    assert result.memory.tensor_parallel.per_rank_bytes == 8_030_527_488
    assert json_["memory_gib"]["weights"] == 2 * 8_030_527_488 / GIB
    assert result.decode.allreduce_s > 0


# --- cost ---------------------------------------------------------------------------------------------------------------


def test_cheapest_fitting_offer_prices_the_scenario():
    model = LLAMA_8B
    offers = [
        CloudOfferSpec("Cheap", "too small", "tiny", 1, 0.10),  # 4 GB card: does not fit
        CloudOfferSpec("Mid", "4090", "rtx-4090", 1, 0.40),
        CloudOfferSpec("Dear", "h100", "h100", 1, 2.50),
        CloudOfferSpec("Ghost", "unknown accelerator", "not-in-catalog", 1, 0.01),
    ]
    tiny = replace(RTX_4090, slug="tiny", memory_gb=4)
    result = estimate(model, H100, Scenario(), offers=offers, hardware_catalog=[tiny, RTX_4090])
    assert result.cost is not None and result.cost.offer.provider == "Mid"
    # $ per 1M tokens = 1e6 / (tok/s on the 4090) / 3600 × $0.40/h, the speed with half the 8K context cached
    # (estimate.cost_depth: the mean over a context that fills from empty to full).
    on_4090 = estimate(model, RTX_4090, Scenario(depth=4096)).decode.tokens_per_s
    assert result.to_contract_json()["cost_per_mtok_usd"] == pytest.approx(1e6 / on_4090 / 3600 * 0.40)


def test_a_prompt_token_is_priced_at_the_offers_own_prefill_speed():
    """Input tokens: the offer's hourly price over its own accelerator's prefill speed (of the scenario's prompt from
    an empty cache), as output tokens are over its decode speed; unknown where the accelerator has no FP16 TFLOPS."""
    offers = [CloudOfferSpec("Mid", "4090", "rtx-4090", 1, 0.40)]
    result = estimate(LLAMA_8B, H100, Scenario(), offers=offers, hardware_catalog=[RTX_4090])
    on_4090 = estimate(LLAMA_8B, RTX_4090, Scenario()).prefill.tokens_per_s  # 4,096-token prompt, depth 0
    assert result.cost.prefill_tok_s == on_4090 and result.cost.prompt == 4096
    # $ per 1M prompt tokens = 1e6 / prefill tok/s / 3600 × $0.40/h
    assert result.cost.input_usd_per_mtok == pytest.approx(1e6 / on_4090 / 3600 * 0.40)
    assert result.cost.input_usd_per_mtok < result.cost.single_stream_usd_per_mtok  # prefill is far faster
    no_tflops = replace(RTX_4090, fp16_tflops=None)
    unknown = estimate(LLAMA_8B, H100, Scenario(), offers=offers, hardware_catalog=[no_tflops])
    assert unknown.cost.prefill_tok_s is None and unknown.cost.input_usd_per_mtok is None
    assert unknown.cost.single_stream_usd_per_mtok > 0  # the output cost needs only the bandwidth


def test_with_several_streams_the_offer_is_chosen_by_their_cost():
    # Llama 3.1 8B in BF16 under vLLM, 16 streams of 8K: one RTX 4090's KV pool holds 4 of them (aggregate 218.5
    # tok/s from 54.6 for one stream), an H100's all 16 (2,374 from 148.4). At $0.40/h against $2.50/h the 4090 is
    # the cheaper token for one stream (0.40 / 54.6 < 2.50 / 148.4), the H100 with 16 (2.50 / 2,374 < 0.40 / 218.5).
    offers = [CloudOfferSpec("Mid", "4090", "rtx-4090", 1, 0.40), CloudOfferSpec("Dear", "h100", "h100", 1, 2.50)]
    scenario = Scenario(quant="BF16", engine="vllm", batch=16)
    result = estimate(LLAMA_8B, RTX_4090, scenario, offers=offers, hardware_catalog=[RTX_4090, H100])
    # Priced with 4K of each stream's 8K cached (estimate.cost_depth).
    on_4090 = estimate(LLAMA_8B, RTX_4090, replace(scenario, depth=4096))
    on_h100 = estimate(LLAMA_8B, H100, replace(scenario, depth=4096))
    assert on_4090.aggregate_decode.tokens_per_s < 4 * on_4090.decode.tokens_per_s * 1.01  # the queue: 4 streams
    assert result.cost.offer.provider == "Mid"  # one stream: the contract's cost_per_mtok_usd
    assert result.to_contract_json()["cost_per_mtok_usd"] == pytest.approx(1e6 / on_4090.decode.tokens_per_s
                                                                           / 3600 * 0.40)
    assert result.batch_cost.offer.provider == "Dear"
    assert result.batch_cost.batch_usd_per_mtok == pytest.approx(1e6 / on_h100.aggregate_decode.tokens_per_s
                                                                 / 3600 * 2.50)
    assert result.batch_cost.batch_usd_per_mtok < result.cost.batch_usd_per_mtok
    # One stream: both choices are the same offer.
    single = estimate(LLAMA_8B, RTX_4090, replace(scenario, batch=1), offers=offers, hardware_catalog=[RTX_4090, H100])
    assert single.batch_cost == single.cost


def test_no_fitting_offer_is_null_with_a_warning():
    result = estimate(LLAMA_8B, RTX_4090, Scenario(), offers=[CloudOfferSpec("A", "x", "tiny", 1, 1.0)],
                      hardware_catalog=[replace(RTX_4090, slug="tiny", memory_gb=2)]).to_contract_json()
    assert result["cost_per_mtok_usd"] is None
    assert any("no catalog cloud offer fits" in w for w in result["warnings"])


# --- validation ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("changes", "option"), [
    ({"context": 0}, "--context"), ({"batch": 0}, "--batch"), ({"gpus": 0}, "--gpus"),
    ({"offload_pct": 101.0}, "--offload-pct"), ({"offload_pct": -1.0}, "--offload-pct"),
    ({"quant": "Q9_K"}, "--quant"), ({"kv_dtype": "fp8"}, "--kv-dtype"), ({"kv_dtype": "int3"}, "--kv-dtype"),
    ({"engine": "tgi"}, "--engine"), ({"depth": 8192}, "--depth"), ({"prompt": 0}, "--prompt"),
    ({"quant": "FP8"}, "--quant"), ({"gpu_memory_utilization": 1.5}, "--gpu-memory-utilization"),
    ({"max_num_seqs": 0}, "--max-num-seqs"), ({"context": 2.5}, "--context"),
])
def test_invalid_scenarios_name_the_option(changes, option):
    with pytest.raises(SizingError, match=option):
        validate_scenario(replace(Scenario(), **changes))


def test_context_beyond_the_model_maximum_is_a_warning():
    result = estimate(LLAMA_8B, H100, Scenario(context=262_144))
    note = next(note for note in result.warnings if note.code == "context_above_max")
    assert note.params == {"context": 262_144, "max_context": 131_072}
    assert "context exceeds the model's 131072 maximum" in result.to_contract_json()["warnings"]


def test_vllm_gpus_that_do_not_divide_the_heads():
    with pytest.raises(SizingError, match="--gpus 3: 32 attention heads are not divisible by 3"):
        estimate(LLAMA_8B, H100, Scenario(quant="BF16", engine="vllm", gpus=3))


def test_shapeless_model_is_estimated_with_warnings():
    model = ModelSpec(slug="llama-9b", name="Llama 9B", architecture="", hidden_size=4096, vocab_size=128_256,
                      layers=(), attention=None, stated_params_total=9e9, confidence="estimated", kv_proxy=LLAMA_8B)
    result = estimate(model, H100, Scenario())
    json_ = result.to_contract_json()
    assert json_["finetune_gib"] == {"qlora": None, "lora": None, "full": None}
    assert json_["memory_gib"]["kv_cache"] == 1.0  # the proxy's 131,072 B/token × 8,192
    assert any(w.startswith("estimated: KV cache") for w in json_["warnings"])
    assert any(w.startswith("fine-tuning memory unknown") for w in json_["warnings"])
    assert json_["decode_tok_s"] > 0


@pytest.mark.parametrize(("data", "message"), [
    ({"name": "X", "memory_gb": 24}, "'bandwidth_gbs' is required"),
    ({"name": "X", "memory_gb": -1, "bandwidth_gbs": 1}, "'memory_gb' must be above 0"),
    ({"name": "X", "memory_gb": "24", "bandwidth_gbs": 1}, "'memory_gb' must be a number"),
    ({"name": "X", "memory_gb": 24, "bandwidth_gbs": 1, "kind": "quantum"}, "'kind' must be"),
    ({"name": "X", "memory_gb": 24, "bandwidth_gbs": 1, "backend": "opencl"}, "'backend' must be"),
    ({"name": "X", "memory_gb": 24, "bandwidth_gbs": 1, "colour": "red"}, "unknown field 'colour'"),
    ([1, 2], "expected a JSON object"),
    ({"name": "X", "memory_gb": 24, "bandwidth_gbs": 1, "interconnect_mesh_peers": 7.5}, "'interconnect_mesh_peers'"),
    ({"name": "X", "memory_gb": 24, "bandwidth_gbs": 1, "interconnect_mesh_peers": 0}, "'interconnect_mesh_peers'"),
])
def test_hardware_file_validation(data, message):
    with pytest.raises(SizingError, match=message):
        hardware_from_dict(data)


def test_hardware_file_as_in_the_contract():
    spec = hardware_from_dict({"name": "RTX 4090", "vendor": "NVIDIA", "memory_gb": 24, "bandwidth_gbs": 1008,
                               "fp16_tflops": 165.2, "kind": "discrete", "backend": "cuda", "tdp_w": 450})
    assert (spec.memory_gb, spec.bandwidth_gbs, spec.kind, spec.backend) == (24.0, 1008.0, "discrete", "cuda")
    assert spec.interconnect_mesh_peers is None
    mesh = hardware_from_dict({"name": "MI300X", "memory_gb": 192, "bandwidth_gbs": 5300, "backend": "rocm",
                               "interconnect_gbs": 896, "interconnect_mesh_peers": 7})
    assert (mesh.interconnect_mesh_peers, mesh.mesh_link_gbs) == (7, 128.0)


# --- properties ----------------------------------------------------------------------------------------------------------

QUANTS_BY_SIZE = ["BF16", "Q8_0", "Q6_K", "Q5_K_M", "Q4_K_M", "Q3_K_M", "Q2_K", "IQ1_S"]


@settings(max_examples=40, deadline=None)
@given(context=st.integers(1, 200_000), extra=st.integers(1, 50_000), batch=st.integers(1, 64))
def test_kv_grows_with_context_and_batch(context, extra, batch):
    model = LLAMA_8B
    base = estimate(model, H100, Scenario(context=context + 1, batch=batch, prompt=1)).kv.total_bytes
    longer = estimate(model, H100, Scenario(context=context + 1 + extra, batch=batch, prompt=1)).kv.total_bytes
    wider = estimate(model, H100, Scenario(context=context + 1, batch=batch + 1, prompt=1)).kv.total_bytes
    # llama.cpp pads its cell count to 256, so growth below one pad step may not show.
    assert longer >= base and wider >= base
    if extra >= 256:
        assert longer > base
    if context + 1 >= 256:
        assert wider > base


@settings(max_examples=25, deadline=None)
@given(gpus=st.integers(1, 7), context=st.integers(1024, 65_536))
def test_per_gpu_memory_falls_with_more_gpus(gpus, context):
    model, scenario = LLAMA_8B, Scenario(quant="BF16", context=context)
    # Whole layers per GPU: one more GPU never adds to the largest share, twice the GPUs always shrinks it.
    fewer = estimate(model, H100, replace(scenario, gpus=gpus)).placement.per_gpu_bytes
    more = estimate(model, H100, replace(scenario, gpus=gpus + 1)).placement.per_gpu_bytes
    double = estimate(model, H100, replace(scenario, gpus=2 * gpus)).placement.per_gpu_bytes
    assert more <= fewer and double < fewer
    tp = [estimate(model, H100, replace(scenario, engine="vllm", gpus=n)).placement.per_gpu_bytes
          for n in (1, 2, 4, 8)]
    assert tp == sorted(tp, reverse=True)


@settings(max_examples=10, deadline=None)
@given(index=st.integers(0, len(QUANTS_BY_SIZE) - 2))
def test_weights_fall_with_fewer_bits(index):
    model = LLAMA_8B
    bigger = estimate(model, H100, Scenario(quant=QUANTS_BY_SIZE[index])).weights.total_bytes
    smaller = estimate(model, H100, Scenario(quant=QUANTS_BY_SIZE[index + 1])).weights.total_bytes
    assert smaller < bigger


@settings(max_examples=30, deadline=None)
@given(context=st.integers(-5, 0) | st.integers(16 * 2**20 + 1, 2**40), batch=st.integers(-3, 0))
def test_invalid_inputs_raise_clear_errors(context, batch):
    with pytest.raises(SizingError, match="--context"):
        validate_scenario(Scenario(context=context))
    with pytest.raises(SizingError, match="--batch"):
        validate_scenario(Scenario(batch=batch))


def test_decode_slows_when_offloaded():
    model = LLAMA_8B
    fits = estimate(model, RTX_4090, Scenario(quant="Q8_0"))
    tight = estimate(model, replace(RTX_4090, memory_gb=6), Scenario(quant="Q8_0"))
    assert tight.placement.mode == "auto" and tight.placement.gpu_layers < 33
    assert tight.decode.tokens_per_s < fits.decode.tokens_per_s
    assert math.isfinite(tight.decode.tokens_per_s)


def test_prefill_counts_the_flops_of_matrix_products_not_the_embedding_lookup():
    """The speed constants are fitted on 2 × (active − input embedding) FLOPs per token (bench/throughput_accuracy.py:
    the embedding is a row lookup); the engine used 2 × active, 7 % more for Llama 3.1 8B and 16 % for gpt-oss-20b,
    so the site's prefill was slower than the calibrated model it publishes.
    Llama 3.1 8B: active 8,030,261,248, embedding 128,256 × 4,096 = 525,336,576 (untied: the head is counted apart):
    2 × 7,504,924,672 = 15,009,849,344. A tied head multiplies the table once per token, so it stays in:
    Gemma 3 27B (tie_word_embeddings) keeps 2 × active."""
    result = estimate(LLAMA_8B, RTX_4090, Scenario())
    assert result.prefill.flops_per_token == 15_009_849_344
    assert result.params.matmul_active == 8_030_261_248 - 525_336_576
    gemma = seed_model("gemma-3-27b-it")
    tied = estimate(gemma, RTX_4090, Scenario())
    assert tied.params.output == 0
    assert tied.prefill.flops_per_token == 2 * tied.params.active


def test_vllm_starts_when_its_pool_holds_one_request_and_queues_the_rest():
    """Llama 3.1 8B in BF16 at 32K on an RTX 4090 under vLLM: the pool holds 1.19 requests of 32,768 tokens. vLLM
    starts (its check is one request at max_model_len) and serves one sequence at a time, so --batch 4 has the
    verdict of --batch 1 and the aggregate decode of one stream; it said "will not start"."""
    one = estimate(LLAMA_8B, RTX_4090, Scenario(quant="BF16", context=32_768, engine="vllm"))
    four = estimate(LLAMA_8B, RTX_4090, Scenario(quant="BF16", context=32_768, engine="vllm", batch=4))
    assert 1 <= four.memory.runtime.max_concurrency < 2
    assert four.fit.verdict == one.fit.verdict != "exceeds"
    assert four.fit.headroom_bytes == pytest.approx(one.fit.headroom_bytes)
    assert four.memory.kv.total_bytes == pytest.approx(4 * one.memory.kv.total_bytes)  # what 4 at once would need
    assert four.aggregate_decode.batch == 1
    assert four.aggregate_decode.tokens_per_s == pytest.approx(one.decode.tokens_per_s)
    assert [note.code for note in four.warnings] == ["vllm_kv_pool_below_batch"]


def test_llama_cpp_allocates_every_slot_of_the_batch():
    """llama.cpp's -np 4 -c 4 × context allocates all four sequences' KV up front: the fit counts all of them."""
    one = estimate(LLAMA_8B, RTX_4090, Scenario(quant="BF16", context=32_768))
    four = estimate(LLAMA_8B, RTX_4090, Scenario(quant="BF16", context=32_768, batch=4))
    assert four.fit.placement.demand_per_gpu[0] - one.fit.placement.demand_per_gpu[0] == pytest.approx(
        3 * one.memory.kv.total_bytes, rel=0.02)
    assert four.aggregate_decode.batch == 4


def test_shapeless_model_takes_its_proxys_layer_count_for_vllms_graph_memory():
    """0.51 GiB + 0.0135 GiB × 32 layers at the default 256 sequences (51 capture sizes) = 0.942 GiB, as for the
    proxy itself; with 0 layers it was 0.51 GiB, so Kimi-Dev-72B's pool was 44 % larger than Qwen2.5-72B's."""
    from reports.sizing.runtime import vllm_cuda_graph_bytes

    model = ModelSpec(slug="llama-9b", name="Llama 9B", architecture="", hidden_size=4096, vocab_size=128_256,
                      layers=(), attention=None, stated_params_total=9e9, confidence="estimated", kv_proxy=LLAMA_8B)
    assert vllm_cuda_graph_bytes(model, 256) == vllm_cuda_graph_bytes(LLAMA_8B, 256)
    assert vllm_cuda_graph_bytes(LLAMA_8B, 256) == pytest.approx((0.51 + 0.0135 * 32) * GIB)


def test_hardware_file_carries_the_fp16_accumulate_rate_and_the_architecture():
    """A GeForce card's llama.cpp prefill runs at its FP16-accumulate rate, and Hopper's at a share of its peak: a
    --hardware file could carry neither, so an RTX 4090 file prefilled at half the catalog card's speed."""
    card = {"name": "RTX 4090", "memory_gb": 24, "bandwidth_gbs": 1008, "fp16_tflops": 165.2}
    plain = hardware_from_dict(card)
    geforce = hardware_from_dict({**card, "fp16_acc_tflops": 330.3, "architecture": "Ada"})
    assert (geforce.fp16_acc_tflops, geforce.architecture) == (330.3, "ada")
    fast, slow = (estimate(LLAMA_8B, spec, Scenario()).prefill for spec in (geforce, plain))
    assert fast.peak_tflops == 330.3 and slow.peak_tflops == 165.2
    hopper = hardware_from_dict({**card, "architecture": "hopper"})
    assert estimate(LLAMA_8B, hopper, Scenario()).prefill.peak_tflops < 165.2
    with pytest.raises(SizingError, match="'fp16_acc_tflops' must be a number"):
        hardware_from_dict({**card, "fp16_acc_tflops": "fast"})


def test_vllm_reads_offloaded_weights_over_pcie_llama_cpp_at_ram_speed():
    """vLLM's --cpu-offload-gb leaves weights in pinned host memory that the GPU reads over its PCIe link at every
    step (vllm/model_executor/models/utils.py maybe_offload_to_cpu, UVA); llama.cpp computes those layers on the
    CPU at the RAM's 60 GB/s. A PCIe 4.0 x16 card reads them at 25 GB/s; two cards at 2 × 25."""
    from reports.sizing.estimate import offloaded_read_gbs

    card = replace(RTX_4090, interconnect="PCIe 4.0 x16")
    assert offloaded_read_gbs(card, Scenario(engine="vllm", offload_pct=30.0)) == 25.0
    assert offloaded_read_gbs(card, Scenario(engine="vllm", gpus=2, offload_pct=30.0)) == 50.0
    assert offloaded_read_gbs(card, Scenario(offload_pct=30.0)) == 60.0
    result = estimate(LLAMA_8B, card, Scenario(quant="BF16", engine="vllm", offload_pct=30.0))
    assert result.decode.ram_bandwidth_gbs == 25.0
    assert result.decode.ram_memory_s == pytest.approx(result.decode.weight_bytes_ram / 25e9)


def test_an_explicit_offload_that_still_exceeds_does_not_run():
    """Llama 3 70B at Q4_K_M with --offload-pct 0 on one RTX 4090 (42 GiB on a 22.8 GiB card): llama.cpp with fixed
    layers runs out of memory, so the plan does not run and a note says so; automatic offload runs it."""
    from bench.model_specs import LLAMA_3_70B

    fixed = estimate(LLAMA_3_70B, RTX_4090, Scenario(offload_pct=0))
    assert fixed.fit.verdict == "exceeds" and not fixed.memory.runs
    assert fixed.memory.not_running_reason == "explicit_offload"
    assert "explicit_offload_exceeds" in [note.code for note in fixed.warnings]
    automatic = estimate(LLAMA_3_70B, RTX_4090, Scenario())
    assert automatic.memory.runs and automatic.placement.automatic_offload


def test_cann_formats_are_matched_by_their_canonical_name():
    from reports.sizing.estimate import format_runs_on

    atlas = HardwareSpec(slug="atlas", name="Atlas 300I Duo", vendor="Huawei", memory_gb=96, bandwidth_gbs=408,
                         backend="cann", architecture="ascend-310p")
    assert format_runs_on("llama.cpp", "f16", atlas) and format_runs_on("llama.cpp", "F16", atlas)
    assert not format_runs_on("llama.cpp", "q4_k_m", atlas) and not format_runs_on("llama.cpp", "Q8_0", atlas)
    assert format_runs_on("llama.cpp", "Q8_0", replace(atlas, architecture=""))  # other Ascend cards run Q8_0
    # vllm-ascend runs the 310P in float16 only; the 910B/910C the 16-bit checkpoints and AWQ: no FP8 (the Ascend
    # 950's), no GGUF, no GPTQ (estimate.CANN_VLLM_FORMATS).
    assert not format_runs_on("vllm", "Q4_K_M", atlas) and format_runs_on("vllm", "FP16", atlas)
    a2 = replace(atlas, architecture="")
    assert [f for f in ("BF16", "FP16", "AWQ", "FP8", "Q4_K_M", "GPTQ", "MXFP4") if format_runs_on("vllm", f, a2)] == [
        "BF16", "FP16", "AWQ"]
    plan = estimate(LLAMA_8B, atlas, Scenario()).memory
    assert plan.fit.fits and plan.not_running_reason == "format"


def test_vllm_sliding_window_pages_follow_the_gpus_scheduler_budget():
    """vLLM reserves window − 1 + max_num_batched_tokens tokens per request for a sliding-window layer
    (SlidingWindowSpec.max_memory_usage_bytes), and `vllm serve` defaults that budget by the GPU: 2,048 below 70 GiB,
    8,192 from it (EngineArgs.get_batch_defaults). Gemma 3 27B's 52 local layers (window 1,024) at 128K, f16:
    32 GB card: ceil((1,023 + 2,048) / 16) + 1 = 193 pages = 3,088 tokens × 52 layers × 8,192 B = 1.225 GiB;
    an 80 GB card: ceil((1,023 + 8,192) / 16) + 1 = 577 pages = 9,232 tokens."""
    from bench.model_specs import GEMMA_3_27B
    from reports.sizing.estimate import plan_memory

    scenario = Scenario(engine="vllm", quant="BF16", context=131072, kv_dtype="f16")
    small = HardwareSpec(slug="c32", name="32 GB card", vendor="x", memory_gb=32, bandwidth_gbs=1792)
    large = HardwareSpec(slug="c80", name="80 GB card", vendor="x", memory_gb=80, bandwidth_gbs=3350)
    for hardware, cells in ((small, 3088), (large, 9232)):
        sliding = next(t for t in plan_memory(GEMMA_3_27B, hardware, scenario).kv.terms if t.kind == "sliding")
        assert (sliding.layers, sliding.cells) == (52, cells)
        assert sliding.bytes == 52 * 8192 * cells
    assert 52 * 8192 * 3088 / GIB == pytest.approx(1.225, abs=0.001)
    # An explicit budget is the visitor's, on any GPU.
    explicit = replace(scenario, max_num_batched_tokens=4096)
    sliding = next(t for t in plan_memory(GEMMA_3_27B, small, explicit).kv.terms if t.kind == "sliding")
    assert sliding.cells == (-(-(1023 + 4096) // 16) + 1) * 16



def test_an_offload_beyond_a_desktops_ram_says_it_needs_a_server():
    """GLM-5 on one RTX 4090: ≈ 401 GiB of experts in system RAM, read at the 60 GB/s of a desktop's dual-channel
    DDR5, which holds at most 256 GB (four 64 GB modules): the speed rests on a machine that cannot exist."""
    from bench import seed_catalog

    glm5 = estimate(seed_catalog.model("glm-5"), RTX_4090, Scenario())
    note = next(note for note in glm5.warnings if note.code == "system_ram_beyond_desktop")
    in_ram = glm5.placement.host_bytes + glm5.placement.offloaded_bytes
    assert in_ram > 256e9 and note.params["ram_gb"] == in_ram / 1e9 and note.params["desktop_gb"] == 256
    # 31 GiB in RAM (Llama 3.3 70B on an RTX 3060) fits a desktop; a bandwidth the visitor set is theirs to know.
    small = estimate(seed_catalog.model("llama-3-3-70b-instruct"), seed_catalog.accelerator("rtx-3060-12gb"),
                     Scenario())
    assert small.placement.offloaded_bytes > 0
    assert "system_ram_beyond_desktop" not in [note.code for note in small.warnings]
    own = estimate(seed_catalog.model("glm-5"), RTX_4090, Scenario(system_ram_bandwidth_gbs=400.0))
    assert "system_ram_beyond_desktop" not in [note.code for note in own.warnings]


def test_cost_is_the_mean_over_a_context_that_fills():
    # A decode step reads the weights plus the KV of the cached tokens: its time is affine in the depth, so the mean
    # time per token over a stream whose cache fills from 0 to the context is the time at half of it. Priced at
    # depth 4,096 of 8,192, the cost equals the mean of the costs at depths 0 and 8,191 (mean 4,095.5: 1e-4).
    offer = CloudOfferSpec("Mid", "4090", "rtx-4090", 1, 0.40)
    result = estimate(LLAMA_8B, RTX_4090, Scenario(), offers=[offer], hardware_catalog=[RTX_4090])
    def cost_at(depth):
        return 1e6 / estimate(LLAMA_8B, RTX_4090, Scenario(depth=depth)).decode.tokens_per_s / 3600 * 0.40
    assert result.cost.depth == 4096
    assert result.cost.single_stream_usd_per_mtok == pytest.approx(cost_at(4096), rel=1e-12)
    assert result.cost.single_stream_usd_per_mtok == pytest.approx((cost_at(0) + cost_at(8191)) / 2, rel=1e-4)
    assert result.cost.single_stream_usd_per_mtok > cost_at(0)  # the empty cache's speed flattered it
    # The purchase's own throughput for rent vs. buy is taken at the same depth.
    assert result.cost_depth_aggregate_tok_s == pytest.approx(
        estimate(LLAMA_8B, RTX_4090, Scenario(depth=4096)).aggregate_decode.tokens_per_s, rel=1e-12)
