"""Structured warnings: codes and params the web page translates; the contract keeps the English texts."""

from __future__ import annotations

from dataclasses import replace

import pytest

from reports.launch import vllm_command

from reports.sizing.estimate import GIB, engine_runs_on, estimate
from reports.sizing.notes import Note, documented_codes
from reports.sizing.recommend import recommend_hardware
from reports.sizing.specs import HardwareSpec, ModelSpec, Scenario
from bench import seed_catalog as catalog

RTX_4090 = catalog.accelerator("rtx-4090")
H100 = catalog.accelerator("h100-80gb-sxm")


def codes(result):
    return {note.code: note for note in result.warnings}


def test_moe_auto_offload_note_names_n_cpu_moe():
    result = estimate(catalog.model("glm-4-5"), RTX_4090, Scenario())
    note = codes(result)["offload_auto_experts"]
    placement = result.placement
    assert note.params == {"offloaded_gib": placement.offloaded_bytes / GIB, "n_cpu_moe": placement.n_cpu_moe,
                           "blocks": 93}  # 92 layers + the MTP block
    assert f"--n-cpu-moe {placement.n_cpu_moe}" in note.text
    assert note.text.startswith("does not fit in GPU memory: ")


def test_dense_auto_offload_note_counts_blocks():
    result = estimate(catalog.model("llama-3-1-405b-instruct"), RTX_4090, Scenario())
    params = codes(result)["offload_auto_layers"].params
    assert params["blocks"] == 126  # num_hidden_layers
    assert params["gpu_layers"] + params["cpu_blocks"] == 126
    assert params["gpu_layers"] == result.placement.gpu_layers
    assert params["n_cpu_moe"] == 0  # dense


def test_nothing_fits_note():
    tiny = HardwareSpec(slug="tiny", name="Tiny", vendor="x", memory_gb=0.3, bandwidth_gbs=100)
    result = estimate(catalog.model("llama-3-1-8b-instruct"), tiny, Scenario())
    assert "offload_auto_nothing_fits" in codes(result)
    assert codes(result)["prefill_unknown"].params == {"hardware": "Tiny"}


def test_vllm_explicit_offload_note_is_in_gib_per_gpu_rounded_up():
    """vLLM's --cpu-offload-gb is GiB per GPU (EngineArgs: "The space in GiB to offload to CPU, per GPU"); rounded up
    to 0.1 GiB so the server moves at least what the plan moves (the note once gave decimal GB, and the command a
    figure rounded down)."""
    scenario = Scenario(engine="vllm", quant="BF16", kv_dtype="auto", gpus=8, offload_pct=50)
    result = estimate(catalog.model("llama-3-1-405b-instruct"), H100, scenario)
    note = codes(result)["offload_explicit_vllm"]
    per_rank = result.memory.tensor_parallel.per_rank_bytes  # half of it moves: 50.735 GB = 47.251 GiB
    assert per_rank / 2 / 2**30 == pytest.approx(47.2509, abs=1e-4)
    assert note.params == {"offload_pct": 50, "cpu_offload_gb": 47.3}
    assert "--cpu-offload-gb 47.3 per GPU" in note.text
    command = vllm_command(catalog.model("llama-3-1-405b-instruct"), scenario, result.memory)
    assert "--cpu-offload-gb 47.3" in command.lines


def test_context_and_prompt_notes():
    scenario = Scenario(context=262_144, depth=200_000, prompt=100_000)
    result = estimate(catalog.model("llama-3-1-8b-instruct"), H100, scenario)
    notes = codes(result)
    assert notes["context_above_max"].params == {"context": 262_144, "max_context": 131_072}
    assert notes["prompt_beyond_context"].params == {"depth": 200_000, "prompt": 100_000, "tokens": 300_000,
                                                     "context": 262_144}
    assert notes["prompt_beyond_context"].text.startswith("depth + prompt (300,000 tokens) exceed --context 262,144")


def test_contract_json_keeps_the_english_texts():
    result = estimate(catalog.model("glm-4-5"), RTX_4090, Scenario())
    assert result.to_contract_json()["warnings"] == [note.text for note in result.warnings]
    assert all(isinstance(text, str) for text in result.to_contract_json()["warnings"])
    assert str(result.warnings[0]) == result.warnings[0].text


def test_shapeless_model_notes():
    proxy = catalog.model("llama-3-1-8b-instruct")
    model = ModelSpec(slug="x", name="X 9B", architecture="", hidden_size=4096, vocab_size=128_256, layers=(),
                      attention=None, stated_params_total=9e9, confidence="estimated", kv_proxy=proxy)
    notes = codes(estimate(model, H100, Scenario()))
    assert notes["weights_estimated"].params == {"model": "X 9B", "params_total": 9e9}
    assert notes["kv_from_proxy"].params == {"proxy": proxy.name}
    assert "finetune_unknown" in notes
    assert "kv_unknown" in codes(estimate(replace(model, kv_proxy=None), H100, Scenario()))
    assert "speed_upper_bound" not in notes  # the family member's layers give the per-layer kernel time


def test_speed_without_a_layer_count_is_an_upper_bound():
    """No shapes and no family member: the per-layer kernel time is left out (overhead 0), so the speed is the
    bandwidth bound alone and the estimate says so. With the family member's 32 layers the kernel time counts."""
    without = estimate(_shapeless(kv_proxy=False), H100, Scenario())
    with_proxy = estimate(_shapeless(kv_proxy=True), H100, Scenario())
    assert "speed_upper_bound" in codes(without) and "speed_upper_bound" not in codes(with_proxy)
    assert without.decode.num_layers == 0 and without.decode.overhead_s == 0.0
    assert without.decode.ms_per_token == pytest.approx(without.decode.transfer_ms)
    assert with_proxy.decode.num_layers == 32 and with_proxy.decode.overhead_ms > 0
    assert with_proxy.decode.ms_per_token == pytest.approx(with_proxy.decode.transfer_ms + with_proxy.decode.overhead_ms)
    assert not _shapeless(kv_proxy=False).layer_count_known and _shapeless(kv_proxy=True).layer_count_known


def _shapeless(kv_proxy: bool, params: float = 90e9) -> ModelSpec:
    return ModelSpec(slug="x", name="X", architecture="", hidden_size=4096, vocab_size=128_256, layers=(),
                     attention=None, stated_params_total=params, confidence="estimated",
                     kv_proxy=catalog.model("llama-3-1-8b-instruct") if kv_proxy else None)


def _published() -> ModelSpec:
    return replace(catalog.model("llama-3-1-8b-instruct"), published_sizes=(("UD-Q4_K_XL", 5_000_000_000),))


TINY = HardwareSpec(slug="tiny", name="Tiny", vendor="x", memory_gb=0.3, bandwidth_gbs=100)

# Scenarios that between them raise most notes (model, accelerator, scenario, offers); every note raised must be
# documented with exactly its params. (vLLM's KV-pool notes need a pool smaller than the request while the
# memory fits, which the seed catalog does not produce.)
GRID = [
    (lambda: catalog.model("glm-4-5"), RTX_4090, Scenario(), ()),
    (lambda: catalog.model("glm-4-5"), RTX_4090, Scenario(gpus=3, quant="UD-Q2_K_XL", offload_pct=20), ()),
    (lambda: catalog.model("llama-3-1-405b-instruct"), RTX_4090,
     Scenario(context=300_000, depth=10, prompt=400_000), catalog.offers()),
    (lambda: catalog.model("llama-3-1-405b-instruct"), H100,
     Scenario(engine="vllm", quant="BF16", kv_dtype="auto", gpus=8, offload_pct=50), ()),
    (lambda: catalog.model("llama-3-1-8b-instruct"), H100, Scenario(engine="vllm", quant="Q4_K_M",
                                                                    kv_dtype="auto"), ()),
    (lambda: catalog.model("llama-3-1-8b-instruct"), catalog.accelerator("rtx-3060-12gb"),
     Scenario(engine="vllm", quant="AWQ", kv_dtype="auto", context=131_072), ()),
    (lambda: catalog.model("llama-3-1-8b-instruct"), catalog.accelerator("mac-studio-m3-ultra-256gb"),
     Scenario(offload_pct=30), ()),
    # 377 GiB of DeepSeek at Q4_K_M on a 64 GB Mac mini: unified memory, nothing to offload to.
    (lambda: catalog.model("deepseek-r1-0528"), catalog.accelerator("mac-mini-m4-pro-64gb"), Scenario(), ()),
    (lambda: catalog.model("llama-3-1-8b-instruct"), TINY, Scenario(), ()),
    (lambda: _shapeless(kv_proxy=True), RTX_4090, Scenario(), ()),
    (lambda: _shapeless(kv_proxy=True), RTX_4090, Scenario(offload_pct=30), ()),
    # 5 T parameters: ≈ 2.8 TiB at Q4_K_M, more than any offer's GPUs hold.
    (lambda: _shapeless(kv_proxy=False, params=5e12), RTX_4090, Scenario(), catalog.offers()),
    (_published, RTX_4090, Scenario(quant="UD-Q4_K_XL"), ()),
    (lambda: catalog.model("gemma-3-27b-it"), H100, Scenario(engine="vllm", quant="BF16"), ()),
    (lambda: catalog.model("llama-3-3-70b-instruct"), RTX_4090, Scenario(offload_pct=0), ()),
    (lambda: catalog.model("qwen3-8b"), catalog.accelerator("atlas-300i-duo-96gb"), Scenario(), ()),
    # gpt-oss's GGUF at F16 still holds MXFP4 experts, which llama.cpp's CANN backend does not multiply.
    (lambda: catalog.model("gpt-oss-20b"), catalog.accelerator("atlas-300i-duo-96gb"), Scenario(quant="F16"), ()),
    (lambda: catalog.model("gpt-oss-120b"), H100, Scenario(engine="vllm", quant="MXFP4", kv_dtype="auto"), ()),
    (lambda: catalog.model("qwen3-235b-a22b-instruct-2507"), H100,
     Scenario(engine="vllm", quant="FP8", kv_dtype="auto", gpus=4, context=40960), ()),  # quantized MoE gap
    (lambda: catalog.model("llama-3-1-8b-instruct"), catalog.accelerator("dgx-spark-gb10-128gb"),
     Scenario(engine="vllm", quant="BF16", kv_dtype="auto"), ()),  # vLLM's share capped on unified memory
    (lambda: catalog.model("gpt-oss-120b"), catalog.accelerator("a100-80gb-sxm"),
     Scenario(engine="vllm", quant="MXFP4", kv_dtype="auto"), ()),  # Marlin's padding (Hopper: Triton's layout)
    (lambda: catalog.model("deepseek-v4-flash"), H100, Scenario(gpus=8), ()),
    (lambda: catalog.model("llama-3-1-8b-instruct"), catalog.accelerator("instinct-mi300x-192gb"),
     Scenario(engine="vllm", quant="AWQ", kv_dtype="auto"), ()),
    (lambda: catalog.model("llama-3-1-8b-instruct"), catalog.accelerator("mlu590-80gb"),
     Scenario(engine="vllm", quant="FP8", kv_dtype="auto"), ()),
    (lambda: catalog.model("llama-3-1-8b-instruct"), catalog.accelerator("gaudi-3-128gb"),
     Scenario(engine="vllm", quant="BF16", kv_dtype="auto"), ()),
]
EXPECTED_CODES = set(documented_codes()) - {"vllm_kv_pool_below_context", "vllm_kv_pool_below_batch"} - {
    "multi_gpu_required", "no_single_fits", "no_priced_multi_gpu", "multi_gpu_not_needed", "exceeds_largest_unified",
    "no_unified_for_engine", "no_offers", "no_offer_fits_any"}  # the recommendation reasons, tested below


def _grid_notes():
    for model, hardware, scenario, offers in GRID:
        yield from estimate(model(), hardware, scenario, offers=offers,
                            hardware_catalog=catalog.accelerators()).warnings


def test_every_note_is_documented_with_its_params():
    documented = documented_codes()
    notes = list(_grid_notes())
    for note in notes:
        assert isinstance(note, Note)
        assert note.code in documented, note.code
        assert set(note.params) == documented[note.code], note.code
    assert {note.code for note in notes} == EXPECTED_CODES  # the grid reaches every warning it can


def test_recommendation_reasons_are_documented():
    documented = documented_codes()
    tiny = HardwareSpec(slug="tiny", name="Tiny", vendor="x", memory_gb=1, bandwidth_gbs=100, price_usd=10)
    seen = set()
    for model, catalog_, offers in (("glm-5", (tiny,), ()), ("glm-5", (tiny,), catalog.offers()),
                                    ("glm-5", catalog.accelerators(), ()),
                                    ("llama-3-1-8b-instruct", catalog.accelerators(), ())):
        result = recommend_hardware(catalog.model(model), Scenario(), hardware_catalog=catalog_, offers=offers)
        for recommendation in (result.best_single, result.best_value_multi, result.unified, result.cloud):
            if recommendation.reason is not None:
                note = recommendation.reason
                assert set(note.params) == documented[note.code], note.code
                seen.add(note.code)
    assert "multi_gpu_not_needed" in seen


def test_vllm_on_the_310p_runs_float16_only():
    """vllm-ascend: "the 310I series only supports eager mode and the float16 data type" (docs v0.11.0); an FP8 or
    AWQ plan there is marked as a format the backend does not run, and the catalog searches skip the card."""
    duo = catalog.accelerator("atlas-300i-duo-96gb")
    llama = catalog.model("llama-3-1-8b-instruct")
    fp8 = estimate(llama, duo, Scenario(engine="vllm", quant="FP8", kv_dtype="auto"))
    assert not fp8.memory.format_runs
    assert codes(fp8)["format_not_on_backend"].params == {"quant": "FP8", "formats": "FP16", "engine": "vllm"}
    assert estimate(llama, duo, Scenario(engine="vllm", quant="FP16", kv_dtype="auto")).memory.format_runs
    # Llama 3.3 70B at AWQ: the 96 GB card was the cheapest single accelerator that holds it.
    picks = recommend_hardware(catalog.model("llama-3-3-70b-instruct"), Scenario(engine="vllm", quant="AWQ",
                               kv_dtype="auto"), hardware_catalog=catalog.accelerators(), offers=catalog.offers())
    best = picks.best_single.choice.hardware
    assert best.slug != "atlas-300i-duo-96gb"
    assert estimate(catalog.model("llama-3-3-70b-instruct"), best,
                    Scenario(engine="vllm", quant="AWQ", kv_dtype="auto")).memory.format_runs


@pytest.mark.parametrize("slug, runs, does_not_run", [
    # vLLM's quantization table (docs v0.14.0 "Supported Hardware"): AMD GPU ❌ AWQ, GPTQ; ✅ FP8, GGUF.
    ("instinct-mi300x-192gb", ("BF16", "FP8", "Q4_K_M"), ("AWQ", "GPTQ")),
    # Intel GPU: ✅ AWQ, GPTQ; ❌ GGUF. FP8 weights run (the Intel vLLM team's FP8 recipes on Arc Pro B60).
    ("arc-pro-b60-24gb", ("BF16", "AWQ", "GPTQ", "FP8"), ("Q4_K_M", "Q8_0")),
    # Intel Gaudi through vllm-gaudi: INC (FP8), AutoAWQ, GPTQModel; no GGUF (the upstream table's ❌ for AWQ, GPTQ
    # and FP8 predates the plugin).
    ("gaudi-3-128gb", ("BF16", "FP16", "FP8", "AWQ", "GPTQ"), ("Q8_0", "Q4_K_M")),
    # No column: a vendor's build (Cambricon) runs what is published, the 16-bit checkpoint.
    ("mlu590-80gb", ("BF16", "FP16"), ("AWQ", "FP8", "Q4_K_M")),
    # NVIDIA Ampere runs FP8 checkpoints weight-only (FP8 Marlin): every format.
    ("a100-80gb-sxm", ("BF16", "FP8", "AWQ", "GPTQ", "Q4_K_M"), ()),
])
def test_vllm_formats_follow_its_quantization_table(slug, runs, does_not_run):
    hardware = catalog.accelerator(slug)
    llama = catalog.model("llama-3-1-8b-instruct")
    for quant in runs:
        assert estimate(llama, hardware, Scenario(engine="vllm", quant=quant, kv_dtype="auto")).memory.format_runs, quant
    for quant in does_not_run:
        result = estimate(llama, hardware, Scenario(engine="vllm", quant=quant, kv_dtype="auto"))
        assert not result.memory.format_runs, quant
        note = codes(result).get("vllm_format_not_on_platform") or codes(result)["vllm_format_not_published"]
        assert note.params["quant"] == quant
        # llama.cpp is not vLLM: its GGUF files run there where ggml has a backend (not on Gaudi or Cambricon).
        if engine_runs_on("llama.cpp", hardware):
            assert estimate(llama, hardware, Scenario(quant="Q4_K_M")).memory.format_runs
        else:
            assert slug in ("gaudi-3-128gb", "mlu590-80gb")


def test_vllm_recommendations_skip_accelerators_without_the_formats_kernels():
    """Qwen3 32B at GGUF Q4_K_M under vLLM: the best-value multi-GPU pick was 2 × Arc Pro B60, an Intel GPU, for
    which vLLM's table lists no GGUF kernels. Now it is NVIDIA."""
    for quant in ("Q4_K_M",):
        scenario = Scenario(engine="vllm", quant=quant, kv_dtype="auto")
        picks = recommend_hardware(catalog.model("qwen3-32b"), scenario, hardware_catalog=catalog.accelerators(),
                                   offers=catalog.offers())
        multi = picks.best_value_multi.choice
        assert multi.hardware.slug != "arc-pro-b60-24gb" and multi.hardware.backend == "cuda", quant
        assert estimate(catalog.model("qwen3-32b"), multi.hardware, replace(scenario, gpus=multi.count)
                        ).memory.format_runs


def test_vllm_format_rules_for_fp8_fp4_hygon_and_hardware_the_catalog_does_not_know():
    # DeepSeek-V4's FP8_FP4 holds FP4 experts, and gpt-oss's MXFP4 is FP4 too: vllm-gaudi quantizes with INC,
    # AutoAWQ and GPTQModel only (it validates gpt-oss as a BF16 checkpoint).
    gaudi = catalog.accelerator("gaudi-3-128gb")
    assert not estimate(catalog.model("deepseek-v4-flash"), gaudi,
                        Scenario(engine="vllm", quant="FP8_FP4", kv_dtype="auto", gpus=4)).memory.format_runs
    gpt_oss = estimate(catalog.model("gpt-oss-120b"), gaudi, Scenario(engine="vllm", quant="MXFP4", kv_dtype="auto"))
    assert not gpt_oss.memory.format_runs
    assert codes(gpt_oss)["vllm_format_not_on_platform"].params["platform"] == "intel-gaudi"
    # Hygon's DCU runs a ROCm-like stack, but vLLM reaches it through Hygon's own build: not "AMD GPUs".
    dcu = catalog.accelerator("dcu-k100-ai-64gb")
    assert codes(estimate(catalog.model("llama-3-1-8b-instruct"), dcu,
                          Scenario(engine="vllm", quant="AWQ", kv_dtype="auto")))["vllm_format_not_published"]
    # A visitor's own accelerator with backend "other": nothing is published either way, so nothing is refused.
    own = HardwareSpec(slug="custom", name="My box", vendor="", memory_gb=48, bandwidth_gbs=800, backend="other")
    assert estimate(catalog.model("llama-3-1-8b-instruct"), own,
                    Scenario(engine="vllm", quant="AWQ", kv_dtype="auto")).memory.format_runs


def test_quantized_moe_under_vllm_states_the_measured_gap():
    """vllm#21348 (Qwen3-235B-A22B-FP8, 4 × H100, TP 4, 0.9): 8.11 GiB logged for the KV cache, 8.54 sized here for
    that log's vLLM (bench/kv_runtime_accuracy.py): a quantized MoE under vLLM says so; the BF16 checkpoint of the
    same model, gpt-oss's own MXFP4 (its logs agree) and llama.cpp do not."""
    qwen = catalog.model("qwen3-235b-a22b-instruct-2507")
    vllm = Scenario(engine="vllm", quant="FP8", kv_dtype="auto", gpus=4, context=40960)
    notes = [n for n in estimate(qwen, H100, vllm).warnings if n.code == "vllm_quantized_moe_gap"]
    assert len(notes) == 1
    assert notes[0].params == {"logged_gib": 8.11, "modelled_gib": 8.54, "gap_pct": pytest.approx(5.302, abs=1e-3),
                               "source": "vllm-project/vllm#21348"}  # (8.54 − 8.11) / 8.11 = 5.30 %
    for model, scenario in ((qwen, replace(vllm, quant="BF16", gpus=8)),
                            (catalog.model("gpt-oss-120b"), Scenario(engine="vllm", quant="MXFP4", kv_dtype="auto")),
                            (qwen, Scenario(quant="Q4_K_M", gpus=4))):
        assert "vllm_quantized_moe_gap" not in {n.code for n in estimate(model, H100, scenario).warnings}


def test_mxfp4_experts_run_in_no_gguf_on_cann():
    """Every GGUF of gpt-oss and Kimi K3 keeps the routed experts in MXFP4 (F16 and Q8_0 too), and llama.cpp's CANN
    backend multiplies F16, F32, Q8_0 and Q4_0 only (ggml-cann.cpp supports_op, MUL_MAT_ID): the 310P's F16, which it
    runs for every other model, does not run gpt-oss; vLLM (FP16 on the 310P) is where its page opens. Elsewhere
    (CUDA) the same GGUFs run, and on CANN a model without MXFP4 experts keeps its formats."""
    from reports.sizing.estimate import default_scenario, fits, format_runs_on, plan_memory

    gpt_oss, qwen = catalog.model("gpt-oss-20b"), catalog.model("qwen3-8b")
    for slug in ("atlas-300i-duo-96gb", "ascend-910b-64gb", "ascend-910c-128gb"):
        cann = catalog.accelerator(slug)
        for quant in ("F16", "Q8_0", "Q4_0", "F32"):
            assert not format_runs_on("llama.cpp", quant, cann, gpt_oss), (slug, quant)
            assert not plan_memory(gpt_oss, cann, Scenario(quant=quant)).format_runs
            assert not fits(gpt_oss, cann, Scenario(quant=quant))
        assert format_runs_on("llama.cpp", "F16", cann, qwen) and format_runs_on("llama.cpp", "F16", cann)
        assert format_runs_on("vllm", "FP16", cann, gpt_oss)
        opening = default_scenario(gpt_oss, cann)
        assert (opening.engine, opening.quant) == ("vllm", "FP16" if slug.startswith("atlas") else "BF16")
        assert default_scenario(qwen, cann).engine == "llama.cpp"
    assert format_runs_on("llama.cpp", "F16", H100, gpt_oss) and fits(gpt_oss, H100, Scenario(quant="F16"))
    refused = estimate(gpt_oss, catalog.accelerator("atlas-300i-duo-96gb"), Scenario(quant="F16"))
    assert refused.experts_refused and not refused.memory.runs
    assert not estimate(qwen, catalog.accelerator("atlas-300i-duo-96gb"), Scenario(quant="F16")).experts_refused
