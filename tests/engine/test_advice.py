"""What to change to fit: each option re-sized by the engine, the smallest change that reaches the goal, ranking."""

from __future__ import annotations

from dataclasses import replace

import pytest

from reports.sizing.advice import CONTEXT_STEP, OPTION_ORDER, LongestContext, fit_options, longest_context
from reports.sizing.errors import SizingError
from reports.sizing.estimate import (
    GIB, estimate, fits, plan_memory, vllm_largest_memory_share, vllm_memory_share,
)
from reports.sizing.fit import TIGHT_BUFFER
from reports.sizing.specs import Scenario
from bench import seed_catalog as catalog

CATALOG = catalog.accelerators()
LLAMA_8B = "llama-3-1-8b-instruct"
RTX_3060 = catalog.accelerator("rtx-3060-12gb")  # 12 GB → 12 × 0.95 = 11.4 GiB usable
# The CUDA context vLLM holds outside its budget (runtime.DEVICE_CONTEXT_BYTES: 300 MiB assumed).
CUDA_CONTEXT = 300 * 2**20
RTX_4090 = catalog.accelerator("rtx-4090")  # 24 GB → 22.8 GiB usable


def options(slug, hardware, scenario):
    return {option.code: option for option in fit_options(catalog.model(slug), hardware, scenario,
                                                           hardware_catalog=CATALOG)}


def test_llama_8b_q4_at_8k_fits_a_12gb_card_and_needs_no_advice():
    # Weights 4.58 GiB (Q4_K_M) + KV 2 × 32 layers × 8 KV heads × 128 × 2 B = 131,072 B/token × 8,192 = 1 GiB
    # + runtime ≈ 0.6 GiB ≈ 6.1 GiB, far below 11.4 GiB usable.
    result = estimate(catalog.model(LLAMA_8B), RTX_3060, Scenario())
    assert result.fit.verdict == "fits"
    assert fit_options(catalog.model(LLAMA_8B), RTX_3060, Scenario(), hardware_catalog=CATALOG) == ()


# --- Llama 3.1 8B at 128K on a 12 GB card: exceeds ------------------------------------------------------------
# The GPU holds the Q4_K_M weights less the input embedding llama.cpp keeps on the host (4.576 − 0.275 GiB), the
# CUDA compute buffer and context (0.545 GiB) and the KV cache, 131,072 B/token: need(context) ≈ 4.85 GiB +
# context × 131,072 B. At 128K: 4.85 + 16 = 20.85 GiB > 11.4 usable.
BASE_GIB = 4.5755 - 0.2752 + 0.5454


def test_8bit_kv_cache_halves_the_kv_term_llama_cpp():
    option = options(LLAMA_8B, RTX_3060, Scenario(context=131_072))["kv_8bit"]
    # q8_0 stores 32 values in 34 bytes (ggml-common.h block_q8_0) instead of 64: 16 GiB × 34 / 64 = 8.5 GiB.
    assert option.params["kv_gib_before"] == 16.0
    assert option.params["kv_gib_after"] == 8.5
    assert option.kv_bytes == 8.5 * GIB
    assert option.params["flags"] == "-ctk q8_0 -ctv q8_0"
    assert option.scenario.kv_dtype == "q8_0"
    # 20.85 − 7.5 GiB = 13.35 GiB still exceeds 11.4: listed, but not as a fix.
    assert option.verdict == "exceeds" and not option.resolves


def test_8bit_kv_cache_halves_the_kv_term_vllm():
    scenario = Scenario(engine="vllm", quant="BF16", kv_dtype="auto", context=131_072)
    option = options(LLAMA_8B, RTX_4090, scenario)["kv_8bit"]
    # Llama 3.1 8B: 32 layers × 8 KV heads × 128 × 2 (K, V) × 2 B = 131,072 B/token × 131,072 = 16 GiB; fp8 = 1 B:
    # half. Not enough (≈ 24.6 GiB for the GPU against vLLM's 0.9 × 23.64), but it closes most of the gap: listed.
    assert option.params["kv_gib_before"] == 16.0
    assert option.params["kv_gib_after"] == 8.0
    assert option.params["flags"] == "--kv-cache-dtype fp8"
    assert not option.resolves


def test_8bit_kv_cache_is_fp8_inc_on_gaudi():
    """vllm-gaudi's FP8 cache is fp8_inc (its launch line says so); "What to change" said --kv-cache-dtype fp8."""
    scenario = Scenario(engine="vllm", quant="FP8", kv_dtype="auto", context=131_072)
    option = options("llama-3-3-70b-instruct", catalog.accelerator("gaudi-3-128gb"), scenario)["kv_8bit"]
    assert option.params["flags"] == "--kv-cache-dtype fp8_inc" and option.resolves


def test_a_change_that_closes_little_of_the_gap_is_not_listed():
    """405B in BF16 on 4 × H100 lacks ≈ 120 GiB per GPU; an 8-bit cache saves 0.5 GiB of it. Listed, it read as a
    direction ("8-bit KV cache → still exceeds") beside changes that work."""
    scenario = Scenario(engine="vllm", quant="BF16", kv_dtype="auto", gpus=4)
    ranked = options("llama-3-1-405b-instruct", catalog.accelerator("h100-80gb-sxm"), scenario)
    assert "kv_8bit" not in ranked and "more_gpus" in ranked


def test_shorter_context_is_the_largest_preset_that_fits():
    option = options(LLAMA_8B, RTX_3060, Scenario(context=131_072))["shorter_context"]
    # 32K → 4.85 + 4 = 8.85 GiB fits 11.4 (with more than 8 % spare); 64K → 12.85 GiB does not.
    assert option.params == {"context": 32_768, "previous": 131_072}
    assert option.verdict == "fits" and option.resolves
    assert option.per_gpu_bytes == pytest.approx((BASE_GIB + 4) * GIB, rel=1e-4)
    assert estimate(catalog.model(LLAMA_8B), RTX_3060, Scenario(context=65_536)).fit.verdict == "exceeds"


def test_larger_accelerator_is_the_smallest_memory_then_cheapest():
    option = options(LLAMA_8B, RTX_3060, Scenario(context=131_072))["larger_accelerator"]
    # ≈ 20.85 GiB: no 16 GB card (15.2 GiB usable); among the 24 GB cards (22.8 GiB) the Arc Pro B60 is the
    # cheapest ($500; RTX 3090 $1,499, RTX 4090 $1,599, RX 7900 XTX $999, L4 unpriced).
    assert option.params["slug"] == "arc-pro-b60-24gb"
    assert option.hardware.slug == "arc-pro-b60-24gb" and option.scenario.gpus == 1
    assert option.resolves


def test_more_gpus_is_the_smallest_count_that_reaches_the_goal():
    by_code = options(LLAMA_8B, RTX_3060, Scenario(context=131_072))
    # 2 × 12 GB: layer split halves the weights and KV (each GPU keeps its own 0.545 GiB of buffers), each GPU
    # ≈ 11.1 GiB of 11.4: tight, which reaches the goal from "exceeds".
    assert by_code["more_gpus"].params == {"gpus": 2, "added": 1}
    assert by_code["more_gpus"].verdict == "tight" and by_code["more_gpus"].resolves


# --- GLM-4.5 Q4_K_M (≈ 200 GiB of weights) on one 24 GB GPU ---------------------------------------------------


@pytest.fixture(scope="module")
def glm45_on_4090():
    return options("glm-4-5", RTX_4090, Scenario())


def test_glm45_moe_offload_names_the_smallest_n_cpu_moe(glm45_on_4090):
    option = glm45_on_4090["moe_offload"]
    n = option.params["n_cpu_moe"]
    assert option.params["flags"] == f"--n-cpu-moe {n}"
    assert option.params["blocks"] == 93  # 92 layers + the MTP block the GGUF keeps
    # Independently: moving the routed experts of the first n blocks leaves the GPU with the full demand less those
    # experts, which must keep the 8 % buffer (≤ 0.92 × 22.8 GiB), and n − 1 blocks must not be enough.
    plan = plan_memory(catalog.model("glm-4-5"), RTX_4090, Scenario())
    full = plan.placement.demand_per_gpu[0]
    blocks = plan.layout.blocks

    def need(moved_blocks):
        return full - sum(block.expert_bytes for block in blocks[:moved_blocks])

    target = (1 - TIGHT_BUFFER) * 22.8 * GIB
    assert need(n) <= target < need(n - 1)
    assert option.per_gpu_bytes == pytest.approx(need(n))
    assert n == 90  # the value the check above pins (3 dense leading layers; the experts of 90 of 90 MoE blocks)
    assert option.verdict == "fits" and option.resolves
    # Decode now reads k/E of the experts from system RAM: far below the all-on-GPU speed.
    assert option.decode_tok_s < 10


def test_glm45_more_gpus_is_the_smallest_count(glm45_on_4090):
    option = glm45_on_4090["more_gpus"]
    # ≈ 204 GiB plus ≈ 0.6 GiB of buffers per GPU: 9 × 22.8 = 205.2 GiB is short, 10 × 22.8 = 228 GiB holds it.
    assert option.params == {"gpus": 10, "added": 9}
    nine = estimate(catalog.model("glm-4-5"), RTX_4090, Scenario(gpus=9))
    assert nine.fit.verdict == "exceeds"


def test_glm45_has_no_format_that_fits_one_24gb_gpu(glm45_on_4090):
    # Even IQ1_M is ≈ 355 B × 2.15 / 8 ≈ 89 GiB: no smaller format, no shorter context fixes it.
    assert "smaller_format" not in glm45_on_4090
    assert "shorter_context" not in glm45_on_4090


def test_options_are_ranked_fixes_first_then_by_decode(glm45_on_4090):
    ranked = fit_options(catalog.model("glm-4-5"), RTX_4090, Scenario(), hardware_catalog=CATALOG)
    keys = [(not option.resolves, -option.decode_tok_s, OPTION_ORDER.index(option.code)) for option in ranked]
    assert keys == sorted(keys)
    # 8-bit KV saves 1.3 GiB of ≈ 180 GiB missing: less than MIN_SHARE_OF_GAP of it, so not listed; all others fix.
    assert "kv_8bit" not in [option.code for option in ranked]
    assert all(option.resolves for option in ranked) and len(ranked) >= 3


# --- other cases ----------------------------------------------------------------------------------------------


def test_smaller_format_is_the_best_quality_that_fits():
    scenario = Scenario(quant="Q5_K_M", context=16_384)
    model = catalog.model("qwen3-32b")
    option = options("qwen3-32b", RTX_4090, scenario)["smaller_format"]
    # Qwen3-32B: Q5_K_M ≈ 21.7 GiB of weights + 4 GiB KV at 16K exceeds 22.8; the next rung, Q4_K_M (≈ 18.6 GiB),
    # fits (tight).
    assert option.params == {"quant": "Q4_K_M", "previous": "Q5_K_M"}
    assert estimate(model, RTX_4090, scenario).fit.verdict == "exceeds"
    assert option.resolves and option.verdict == "tight"


def test_vllm_more_gpus_skips_counts_tensor_parallel_rejects():
    scenario = Scenario(engine="vllm", quant="BF16", kv_dtype="auto", gpus=4)
    option = options("llama-3-1-405b-instruct", catalog.accelerator("h100-80gb-sxm"), scenario)["more_gpus"]
    # BF16 405B ≈ 756 GiB; vLLM's budget per H100 is 0.9 × 79.19 = 71.3 GiB: 8 GPUs (570 GiB) are short and
    # 128 = 2**7 attention heads divide over none of 9 … 15 GPUs, so 16 it is.
    assert option.params == {"gpus": 16, "added": 12}
    model = catalog.model("llama-3-1-405b-instruct")
    with pytest.raises(SizingError, match="--gpus 12"):
        estimate(model, catalog.accelerator("h100-80gb-sxm"), replace(scenario, gpus=12))


def test_vllm_memory_share_is_the_smallest_advised_utilization_that_holds_it():
    model = catalog.model("llama-3-3-70b-instruct")
    h100 = catalog.accelerator("h100-80gb-sxm")
    scenario = Scenario(engine="vllm", quant="FP8", kv_dtype="auto")
    # The GPU holds the FP8 weights (67.68 GiB), 8K of BF16 KV (80 layers × 8 KV heads × 128 × 2 × 2 B = 320 KiB a
    # token: 2.5 GiB) and vLLM's runtime terms: 73.98 GiB in its budget, and the CUDA context (300 MiB) outside it:
    # 74.27 GiB. vLLM's budget is the utilization × 79.19 GiB the driver reports: 0.9 → 71.27 GiB and
    # 0.92 → 72.85 GiB fall short, 0.95 → 75.23 GiB holds it with under 8 % to spare.
    current = estimate(model, h100, scenario)
    assert current.fit.verdict == "exceeds"
    assert max(current.fit.placement.demand_per_gpu) == pytest.approx(73.98 * GIB + CUDA_CONTEXT, abs=0.005 * GIB)
    assert estimate(model, h100, replace(scenario, gpu_memory_utilization=0.92)).fit.verdict == "exceeds"
    option = options("llama-3-3-70b-instruct", h100, scenario)["memory_share"]
    assert option.params == {"utilization": 0.95, "previous": 0.9, "flags": "--gpu-memory-utilization 0.95"}
    assert option.scenario == replace(scenario, gpu_memory_utilization=0.95)
    assert option.resolves and option.verdict == "tight"
    assert option.usable_bytes_per_gpu == pytest.approx(0.95 * 79.19 * GIB + CUDA_CONTEXT)
    # Nothing larger is advised from 0.95, and llama.cpp has no such budget.
    assert "memory_share" not in options("llama-3-3-70b-instruct", h100,
                                         replace(scenario, gpu_memory_utilization=0.95))
    assert "memory_share" not in options(LLAMA_8B, RTX_3060, Scenario(context=131_072))


def test_from_tight_the_goal_is_the_8_percent_buffer():
    # 49,152 tokens: GPU need 4.85 + 6 = 10.85 GiB of 11.4 usable: 0.55 GiB spare < 8 % (0.91 GiB): tight.
    scenario = Scenario(context=49_152)
    assert estimate(catalog.model(LLAMA_8B), RTX_3060, scenario).fit.verdict == "tight"
    by_code = options(LLAMA_8B, RTX_3060, scenario)
    assert all(option.verdict == "fits" for option in by_code.values() if option.resolves)
    assert by_code["kv_8bit"].params["kv_gib_after"] == 6 * 34 / 64  # 3.1875 GiB
    assert by_code["kv_8bit"].resolves  # 10.85 − 2.8125 ≈ 8.0 GiB
    assert by_code["shorter_context"].params["context"] == 32_768
    # The smallest card above 12 GB: the 16 GB ones (15.2 GiB usable), cheapest first: RTX 4060 Ti 16GB ($499).
    assert by_code["larger_accelerator"].params["slug"] == "rtx-4060-ti-16gb"


def test_unified_memory_gets_no_more_gpus_or_expert_offload():
    by_code = options("glm-4-5", catalog.accelerator("mac-studio-m3-ultra-256gb"), Scenario())
    # 256 GB × 0.78 = 199.7 GiB < ≈ 204 GiB needed.
    assert "more_gpus" not in by_code and "moe_offload" not in by_code
    assert by_code["smaller_format"].params["quant"] == "IQ4_XS"  # ≈ 185 GiB
    assert by_code["larger_accelerator"].params["slug"] == "instinct-mi325x-256gb"


# --- The longest context that fits ---------------------------------------------------------------------------------


def test_longest_context_on_a_12gb_card_is_where_the_kv_cache_meets_the_usable_memory():
    # need(context) = 4.8457 GiB + context × 131,072 B (above) ≤ 11.4 GiB usable: context ≤ 6.5543 GiB / 128 KiB =
    # 53,692 tokens, and in llama.cpp's 256-token steps 53,504 (209 × 256); 53,760 exceeds.
    model = catalog.model(LLAMA_8B)
    longest = longest_context(model, RTX_3060, Scenario(context=4096))
    assert longest == LongestContext(53_504, 131_072, False)
    assert estimate(model, RTX_3060, Scenario(context=53_504)).fit.verdict != "exceeds"
    assert estimate(model, RTX_3060, Scenario(context=53_760)).fit.verdict == "exceeds"
    # The context of the scenario it is asked for does not matter; the KV precision does: q8_0 is 34/64 of FP16.
    assert longest_context(model, RTX_3060, Scenario(context=131_072)) == longest
    assert longest_context(model, RTX_3060, Scenario(kv_dtype="q8_0")).tokens > 53_692 * 64 / 34 * 0.95


def test_longest_context_is_the_whole_context_or_none():
    assert longest_context(catalog.model(LLAMA_8B), RTX_4090, Scenario()) == LongestContext(131_072, 131_072, True)
    # gpt-oss-120b's MXFP4 weights alone (~59 GiB) exceed a 24 GB card: no context fits without offload.
    assert longest_context(catalog.model("gpt-oss-120b"), RTX_4090, Scenario(quant="MXFP4_MOE")) is None


def test_longest_context_under_vllm_is_the_kv_pool_it_starts_with():
    # Llama 3.3 70B FP8 on one H100 at --gpu-memory-utilization 0.95: vLLM's pool holds 12,288 tokens, and vLLM
    # starts only when the pool holds one request of --max-model-len (its start-up check).
    model, h100 = catalog.model("llama-3-3-70b-instruct"), catalog.accelerator("h100-80gb-sxm")
    scenario = Scenario(engine="vllm", quant="FP8", kv_dtype="auto", gpu_memory_utilization=0.95)
    pool = estimate(model, h100, scenario).runtime.capacity.kv_tokens
    assert pool == 12_288
    assert longest_context(model, h100, scenario) == LongestContext(12_288, 131_072, False)


@pytest.mark.parametrize("slug, hardware, changes", [
    ("gemma-3-27b-it", "rtx-4090", {}),  # sliding-window layers: the demand bends at the window
    ("qwen3-5-27b", "rtx-4090", {}),  # gated delta-net: a constant state beside the full-attention KV
    ("qwen3-30b-a3b-instruct-2507", "rtx-4090", {"batch": 4}),
    ("deepseek-v3-0324", "h100-80gb-sxm", {"gpus": 8, "quant": "Q2_K"}),  # MLA
    ("gpt-oss-20b", "rtx-4060-ti-16gb", {"quant": "MXFP4_MOE"}),
    ("llama-3-1-8b-instruct", "rtx-3060-12gb", {"offload_pct": 30.0}),
    ("qwen3-32b", "rtx-5090", {"engine": "vllm", "quant": "AWQ", "kv_dtype": "auto"}),
    ("gemma-3-27b-it", "a100-80gb-sxm", {"engine": "vllm", "quant": "BF16", "kv_dtype": "auto"}),
])
def test_the_interpolated_search_finds_what_bisection_finds(slug, hardware, changes):
    """The search interpolates the demand between its bracket's ends; bisection over every 256-token step checks it,
    on the attention kinds where the demand is not one straight line."""
    model, accelerator = catalog.model(slug), catalog.accelerator(hardware)
    scenario = replace(Scenario(context=4096), **changes)
    limit = model.max_context

    def runs(context: int) -> bool:
        return estimate(model, accelerator, replace(scenario, context=context)).fit.verdict != "exceeds"

    found = longest_context(model, accelerator, scenario)
    if runs(limit):
        assert found == LongestContext(limit, limit, True)
        return
    steps = (limit - 1) // CONTEXT_STEP
    last = max((n for n in range(1, steps + 1) if runs(n * CONTEXT_STEP)), default=None)
    assert (found.tokens if found else None) == (last * CONTEXT_STEP if last else None)


# --- vLLM's memory share ---------------------------------------------------------------------------------------


def test_vllm_takes_its_share_of_what_the_driver_reports_and_refuses_more_than_is_free():
    """The verdict, the headroom and the KV pool count from one budget: share × the 79.19 GiB an H100 reports (the
    usable memory adds the CUDA context vLLM holds outside it, which the GPU's demand counts too). A share that
    leaves no room for the CUDA context (0.29 GiB) does not start: 0.99 is the largest."""
    model, h100 = catalog.model("llama-3-3-70b-instruct"), catalog.accelerator("h100-80gb-sxm")
    assert vllm_largest_memory_share(h100) == 0.99  # (79.19 − 0.29) / 79.19 = 0.9963
    for share in (0.9, 0.95, 0.98, 0.99):
        result = estimate(model, h100, Scenario(engine="vllm", quant="FP8", kv_dtype="auto", context=16_384,
                                                gpu_memory_utilization=share))
        assert result.fit.usable_bytes_per_gpu == pytest.approx(share * 79.19 * GIB + CUDA_CONTEXT)
        assert result.runtime.preallocated_bytes == pytest.approx(share * 79.19 * GIB)
        # usable − what the GPU holds is the headroom, as the page adds it up.
        assert result.fit.headroom_bytes == pytest.approx(result.fit.usable_bytes_per_gpu - result.fit.required_bytes)
        # It starts exactly when the pool holds one request of the context (vLLM's own check).
        assert (result.fit.verdict != "exceeds") == (result.runtime.capacity.kv_tokens >= 16_384), share
    with pytest.raises(SizingError, match=r"--gpu-memory-utilization 1: .*\(at most 0\.99\)") as refused:
        estimate(model, h100, Scenario(engine="vllm", quant="FP8", kv_dtype="auto", gpu_memory_utilization=1.0))
    assert refused.value.code == "vllm_share_above_free"


def test_on_unified_memory_vllm_launches_with_what_the_system_leaves_free():
    # DGX Spark: usable 0.78 × 128 GiB = 99.84 GiB of the 126.70 GiB reported: share 0.78, not the default 0.9.
    spark, model = catalog.accelerator("dgx-spark-gb10-128gb"), catalog.model(LLAMA_8B)
    scenario = Scenario(engine="vllm", quant="BF16", kv_dtype="auto")
    assert vllm_memory_share(spark, scenario) == 0.78
    result = estimate(model, spark, scenario)
    assert result.runtime.preallocated_bytes == pytest.approx(0.78 * 128 * 79.19 / 80 * GIB)
    # (99.84 − 0.29 GiB of CUDA context) / 126.70 = 0.786: budget and context stay within what the system leaves.
    assert result.fit.usable_bytes_per_gpu == pytest.approx(result.runtime.preallocated_bytes + CUDA_CONTEXT)
    assert result.fit.usable_bytes_per_gpu < 99.84 * GIB
    assert [n.params for n in result.warnings if n.code == "vllm_share_capped_unified"] == [
        {"utilization": 0.9, "share": 0.78, "free_gib": pytest.approx(99.84)}]
    assert vllm_memory_share(spark, replace(scenario, gpu_memory_utilization=0.5)) == 0.5
    # At the default 0.9 the share is already capped: there is no larger one to advise.
    assert "memory_share" not in options(LLAMA_8B, spark, replace(scenario, context=131_072, batch=64))


def test_memory_share_advice_restores_the_default_first_and_helps_when_nothing_reaches():
    model, h100 = "llama-3-3-70b-instruct", catalog.accelerator("h100-80gb-sxm")
    low = options(model, h100, Scenario(engine="vllm", quant="AWQ", kv_dtype="auto", gpu_memory_utilization=0.5))
    assert low["memory_share"].params["utilization"] == 0.9 and low["memory_share"].resolves
    # gpt-oss-120b at 8K is tight at 0.9 (64.30 GiB of weights in 71.27): 0.95 leaves the 8 % buffer.
    tight = options("gpt-oss-120b", h100, Scenario(engine="vllm", quant="MXFP4", kv_dtype="auto"))["memory_share"]
    assert (tight.params["utilization"], tight.verdict, tight.resolves) == (0.95, "fits", True)
    # Llama 3.3 70B FP8 at 32K needs 10 GiB of KV beside 67.68 GiB of weights: 0.95 gives 3.96 GiB more room but
    # not enough; it is listed as a change that helps, as an 8-bit cache that is not enough would be.
    far = options(model, h100, Scenario(engine="vllm", quant="FP8", kv_dtype="auto", context=32_768))["memory_share"]
    assert (far.params["utilization"], far.verdict, far.resolves) == (0.95, "exceeds", False)


def test_a_share_one_accelerator_refuses_is_not_taken_from_another_of_its_kind():
    """0.98 starts vLLM on an RTX 4090 ((23.76 − 0.29) / 23.76 GiB = 0.9876) but not on an RTX 3060 12GB (0.9753):
    the 3060 must not borrow the 4090's demand (both are CUDA cards under 70 GiB, one kind for the shared demand),
    or a recommendation sized it and the plan then refused it (a 500 on the page)."""
    scenario = Scenario(engine="vllm", quant="Q4_K_M", kv_dtype="auto", gpu_memory_utilization=0.98)
    model = catalog.model(LLAMA_8B)
    assert vllm_largest_memory_share(RTX_4090) == 0.98 and vllm_largest_memory_share(RTX_3060) == 0.97
    assert fits(model, RTX_4090, scenario) and not fits(model, RTX_3060, scenario)
    # No device context is modelled for SYCL: the whole memory is still never free.
    assert vllm_largest_memory_share(catalog.accelerator("arc-pro-b60-24gb")) == 0.99


def test_a_request_takes_whole_pool_blocks_so_hybrid_models_start_only_when_the_pool_holds_one():
    """Gemma 3 27B (52 sliding-window layers beside 10 global ones) and Qwen3.5 27B (gated delta-net beside full
    attention): vLLM pads their layer groups to one size, so a request takes more of the pool than its own KV bytes.
    The verdict counts the blocks, so "starts" is "the pool holds one request" there too, and the longest context
    is where that stops."""
    for slug in ("gemma-3-27b-it", "qwen3-5-27b"):
        model = catalog.model(slug)
        scenario = Scenario(engine="vllm", quant="AWQ", kv_dtype="auto")
        longest = longest_context(model, RTX_4090, scenario)
        for context in (longest.tokens, longest.tokens + CONTEXT_STEP):
            result = estimate(model, RTX_4090, replace(scenario, context=context))
            assert (result.fit.verdict != "exceeds") == (result.runtime.capacity.max_concurrency >= 1), context
        assert estimate(model, RTX_4090, replace(scenario, context=longest.tokens)).fit.verdict != "exceeds"
        assert estimate(model, RTX_4090, replace(scenario, context=longest.tokens + CONTEXT_STEP)).fit.verdict == (
            "exceeds")


def test_on_unified_memory_the_advice_raises_the_share_to_what_the_system_leaves_free():
    spark = catalog.accelerator("dgx-spark-gb10-128gb")
    low = options("gpt-oss-120b", spark, Scenario(engine="vllm", quant="MXFP4", kv_dtype="auto",
                                                    gpu_memory_utilization=0.5))
    assert low["memory_share"].params["utilization"] == 0.78 and low["memory_share"].resolves


def test_an_offload_the_visitor_set_too_low_gets_the_smallest_preset_that_holds_it():
    """Llama 3.3 70B Q4_K_M on an RTX 3090 with 30 % of the weights in system RAM still needs 29.44 GiB on the GPU
    (22.8 GiB usable); 40 % is not enough either, 50 % fits."""
    model, rtx_3090 = catalog.model("llama-3-3-70b-instruct"), catalog.accelerator("rtx-3090")
    scenario = Scenario(offload_pct=30.0)
    assert estimate(model, rtx_3090, scenario).fit.verdict == "exceeds"
    option = options("llama-3-3-70b-instruct", rtx_3090, scenario)["more_offload"]
    assert option.params == {"offload_pct": 50, "previous": 30.0} and option.resolves
    assert estimate(model, rtx_3090, replace(scenario, offload_pct=40.0)).fit.verdict == "exceeds"
    assert "more_offload" not in options("llama-3-3-70b-instruct", rtx_3090, Scenario())  # automatic: no share set
