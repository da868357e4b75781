"""Engine runtime memory: llama.cpp buffers against CI logs, vLLM budget and KV capacity against start-up logs."""

import csv
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reports.sizing.errors import SizingError
from reports.sizing.kv_cache import kv_cache
from reports.sizing.runtime import (
    llama_cpp_buffers,
    runtime_memory,
    vllm_activation_peak,
    vllm_capture_sizes,
    vllm_kv_capacity,
    vllm_printed_kv_tokens,
    vllm_scheduler_defaults,
)
from reports.sizing.specs import AttentionShape, LayerSpec, ModelSpec, Scenario

GIB = 2**30
MIB = 2**20
DATA = Path(__file__).resolve().parents[2] / "bench" / "data"


def dense(slug, layers, hidden, inter, heads, kv_heads, head_dim, vocab, mixers=None, **kw):
    layer_specs = tuple(LayerSpec(m, "dense") for m in mixers) if mixers else tuple(
        LayerSpec("full", "dense") for _ in range(layers))
    return ModelSpec(slug=slug, name=slug, architecture=slug, hidden_size=hidden, vocab_size=vocab,
                     layers=layer_specs, attention=AttentionShape(heads, kv_heads, head_dim),
                     intermediate_size=inter, **kw)


# llamacpp_runtime.csv notes: Pythia 2.8B n_vocab 50304, n_embd 2560, n_head 32 (MHA, head 80), 32 layers.
PYTHIA = dense("pythia-2.8b", 32, 2560, 10240, 32, 32, 80, 50304)
# models.json "Llama-3.1-8B".
LLAMA_8B = dense("llama-3.1-8b", 32, 4096, 14336, 32, 8, 128, 128256)
# models.json "Gemma 3 27B (text config, fixtures)": every 6th layer global, window 1024.
GEMMA3_27B = dense("gemma-3-27b", 62, 5376, 21504, 32, 16, 128, 262208,
                   mixers=["full" if (i + 1) % 6 == 0 else "sliding" for i in range(62)], sliding_window=1024)
H100 = 79.19 * GIB  # torch's total_memory on an H100 80GB (llm-d v0.19 logs)


# --- llama.cpp ---------------------------------------------------------------------------------------------

def llamacpp_rows():
    with open(DATA / "llamacpp_runtime.csv", newline="") as handle:
        for row in csv.DictReader(handle):
            if row["model"].startswith("Pythia"):
                yield pytest.param(row, id=f"pythia-fa{row['flash_attn']}-{row['file_type'][:6]}")
            else:
                reason = ("model marked unknown: shapes inferred, not in the log" if "unknown" in row["model"]
                          else "shapes (vocab/heads) not in the log excerpt, or an encoder model")
                yield pytest.param(row, id=row["model"][:30], marks=pytest.mark.skip(reason=reason))


@pytest.mark.parametrize("row", list(llamacpp_rows()))
def test_llama_cpp_buffers_within_10_percent_of_logs(row):
    scenario = Scenario(context=int(row["n_ctx"]), n_ubatch=int(row["n_ubatch"]),
                        flash_attention=row["flash_attn"] == "1", kv_dtype=row["type_k"])
    buffers = llama_cpp_buffers(PYTHIA, scenario)
    for column, key in (("compute_buffer_mib", "compute buffer"), ("host_compute_buffer_mib", "host compute buffer"),
                        ("output_buffer_mib", "output buffer")):
        assert buffers[key][0] / MIB == pytest.approx(float(row[column]), rel=0.10, abs=0.01), key
    assert kv_cache(PYTHIA, scenario).total_bytes / MIB == float(row["kv_buffer_mib"])


def test_llama_cpp_compute_buffer_by_hand():
    # FA on: 4 B × 512 × (50,304 + 2,560) = 108,265,472 B = 103.25 MiB (the log prints 103.25).
    on = llama_cpp_buffers(PYTHIA, Scenario(context=2048, flash_attention=True))
    assert on["compute buffer"][0] == 4 * 512 * (50304 + 2560)
    # FA off, 32 heads, n_kv 2,048: 4 × 512 × (2,048 × 33 + 4 × 2,560) = 159,383,552 B (152 MiB; log 162).
    off = llama_cpp_buffers(PYTHIA, Scenario(context=2048, flash_attention=False))
    assert off["compute buffer"][0] == 4 * 512 * (2048 * 33 + 4 * 2560)
    # Host: 4 × 512 × (2,560 + 2,048) = 9.0 MiB; output: 4 × 50,304 × 1 sequence.
    assert on["host compute buffer"][0] == 9 * MIB
    assert on["output buffer"][0] == 4 * 50304


def test_fa_off_compute_grows_with_context_fa_on_does_not():
    # logdetective PR #106 (7B, 32 heads, n_embd 4096, vocab 32000): FA off, n_kv 2,048 → 164 MiB and 32,768 →
    # 2,144 MiB = 4 × 512 × (n_kv × 33 + 4 × 4,096) exactly.
    mistral_like = dense("7b", 32, 4096, 14336, 32, 8, 128, 32000)
    for n_ctx, mib in ((2048, 164), (32768, 2144)):
        off = llama_cpp_buffers(mistral_like, Scenario(context=n_ctx, flash_attention=False))
        assert off["compute buffer"][0] == mib * MIB
    on = [llama_cpp_buffers(mistral_like, Scenario(context=c))["compute buffer"][0] for c in (2048, 32768)]
    assert on[0] == on[1]


def test_llama_cpp_runtime_breakdown_and_device_context():
    scenario = Scenario(context=8192)
    kv = kv_cache(LLAMA_8B, scenario)
    cuda = runtime_memory(LLAMA_8B, scenario, weights_bytes_per_gpu=4.58 * GIB, kv=kv, hardware_memory_bytes=None)
    # Device: logits 4 × 512 × (128,256 + 4,096) = 271,056,896 B + 300 MiB assumed CUDA context.
    assert cuda.device_bytes == 4 * 512 * (128256 + 4096) + 300 * MIB
    # Host: 4 × 512 × (4,096 + 8,192) + 4 × 128,256.
    assert cuda.host_bytes == 4 * 512 * (4096 + 8192) + 4 * 128256
    metal = runtime_memory(LLAMA_8B, scenario, weights_bytes_per_gpu=0, kv=kv, hardware_memory_bytes=None,
                           backend="metal")
    assert metal.term("device context").bytes == 0


# --- vLLM ----------------------------------------------------------------------------------------------------

def vllm_llama(**kw):
    scenario = Scenario(engine="vllm", kv_dtype="auto", gpu_memory_utilization=0.95, **kw)
    return scenario, kv_cache(LLAMA_8B, scenario)


def test_vllm_scheduler_defaults_follow_gpu_memory_and_name():
    # EngineArgs.get_batch_defaults: >= 70 GiB and not an A100 → 1024 seqs / 8192 tokens, else 256 / 2048.
    assert vllm_scheduler_defaults(H100, "H100-80GB") == (1024, 8192)
    assert vllm_scheduler_defaults(79.2 * GIB, "NVIDIA A100-SXM4-80GB") == (256, 2048)
    assert vllm_scheduler_defaults(23.58 * GIB, "RTX 3090") == (256, 2048)


def test_vllm_llama_8b_h100_capacity_by_hand():
    # requested 0.95 × 79.19 GiB; activation = sampler 1,024 × 128,256 × 16 B = 1.95703125 GiB; non-torch 0.25;
    # weights 14.99 (logged). v0.19: graphs outside the budget.
    # available = 75.2305 − 14.99 − 1.957 − 0.25 = 58.0335 GiB; blocks = ⌊avail / (16 × 131,072 B)⌋ = 29,713;
    # tokens = 29,713 × 16 = 475,408 (log: 476,016, −0.13 %); concurrency 29,713 / 512 = 58.03 (log 58.11).
    scenario, kv = vllm_llama(context=8192)
    runtime = runtime_memory(LLAMA_8B, scenario, weights_bytes_per_gpu=14.99 * GIB, kv=kv,
                             hardware_memory_bytes=H100, hardware_name="H100-80GB", vllm_version=(0, 19))
    assert runtime.term("activation peak").bytes == 1024 * 128256 * 16
    available = 0.95 * H100 - 14.99 * GIB - 1024 * 128256 * 16 - 0.25 * GIB
    assert runtime.capacity.available_bytes == pytest.approx(available)
    assert runtime.capacity.num_blocks == int(available // (16 * 131072)) == 29713
    assert runtime.kv_capacity_tokens == 475_408
    assert runtime.max_concurrency == pytest.approx(29713 / 512)
    assert runtime.kv_capacity_tokens == pytest.approx(476_016, rel=0.01)


def test_vllm_llama_8b_float32_caches_in_float32():
    # bench/data/vllm_memory.csv, llm-d v0.19.0 "-dtf32" log: Llama-3.1-8B with --dtype float32 on one H100, 0.95,
    # max_model_len 8,192: weights 29.98 GiB, 175,296 tokens in 42.8 GiB = 256 KiB/token, so "auto" is float32:
    # 2 × 8 kv heads × 128 × 4 B × 32 layers = 262,144 B/token (bf16 gave twice the tokens, 345,424).
    # Activation: the sampler 1,024 × 128,256 × 16 B = 1.957 GiB still beats the f32 forward pass
    # 8,192 × 4 B × (3 × 14,336 + 4 × 4,096) = 1.8125 GiB. available = 0.95 × 79.19 − 29.98 − 1.957 − 0.25
    # = 43.0435 GiB; blocks = ⌊avail / (16 × 262,144 B)⌋ = 11,019; tokens 176,304 (log 175,296, +0.6 %).
    scenario, _ = vllm_llama(context=8192)
    scenario = Scenario(**{**scenario.__dict__, "quant": "F32"})
    kv = kv_cache(LLAMA_8B, scenario)
    assert kv.kv_dtype == "f32" and kv.bytes_per_token == 262_144
    runtime = runtime_memory(LLAMA_8B, scenario, weights_bytes_per_gpu=29.98 * GIB, kv=kv,
                             hardware_memory_bytes=H100, hardware_name="H100-80GB", vllm_version=(0, 19))
    assert runtime.term("activation peak").inputs["forward_bytes"] == 8192 * 4 * (3 * 14336 + 4 * 4096)
    assert runtime.capacity.num_blocks == 11_019 and runtime.kv_capacity_tokens == 176_304
    assert runtime.kv_capacity_tokens == pytest.approx(175_296, rel=0.01)


def test_vllm_0_21_subtracts_the_cuda_graph_estimate():
    # 0.51 GiB + 0.0135 GiB × 32 layers = 0.942 GiB leaves the budget from v0.21 on; enforce_eager: no graphs.
    scenario, kv = vllm_llama(context=8192)
    args = dict(weights_bytes_per_gpu=14.99 * GIB, kv=kv, hardware_memory_bytes=H100, hardware_name="H100")
    old = runtime_memory(LLAMA_8B, scenario, vllm_version=(0, 19), **args)
    new = runtime_memory(LLAMA_8B, scenario, **args)
    eager = runtime_memory(LLAMA_8B, scenario, enforce_eager=True, **args)
    graphs = (0.51 + 0.0135 * 32) * GIB
    assert new.term("CUDA graphs").bytes == pytest.approx(graphs)
    assert old.capacity.available_bytes - new.capacity.available_bytes == pytest.approx(graphs)
    assert eager.capacity.available_bytes == old.capacity.available_bytes
    assert new.preallocated_bytes == pytest.approx(0.95 * H100)


def test_vllm_gemma_3_27b_hybrid_groups():
    # 52 sliding + 10 full layers → group size 10: 1 full group + ⌈52/10⌉ = 6 sliding groups = 7 groups.
    # Page = 16 tokens × 2 × 16 × 128 × 2 B = 131,072 B. available = 0.95 × 79.19 − 51.45 − sampler
    # (1,024 × 262,208 × 16 B = 4.0010 GiB) − 0.25 = 19.53 GiB → ⌊avail / 131,072 / 10⌋ = 15,998 blocks;
    # tokens = 15,998 // 7 × 16 = 36,560 (log: 36,560). Per request at 8,192: 512 full + 6 × 513 sliding
    # (cdiv(min(1,023 + 8,192, 8,192), 16) + 1) = 3,590 blocks → concurrency 15,998 / 3,590 = 4.456 (log 4.46).
    scenario = Scenario(engine="vllm", kv_dtype="auto", context=8192, gpu_memory_utilization=0.95)
    kv = kv_cache(GEMMA3_27B, scenario, max_num_batched_tokens=8192)
    runtime = runtime_memory(GEMMA3_27B, scenario, weights_bytes_per_gpu=51.45 * GIB, kv=kv,
                             hardware_memory_bytes=H100, vllm_version=(0, 19))
    capacity = runtime.capacity
    assert (capacity.group_size, capacity.num_groups, capacity.page_bytes) == (10, 7, 131072)
    assert capacity.num_blocks == 15998
    assert capacity.blocks_per_request == 512 + 6 * 513
    assert capacity.kv_tokens == capacity.block_tokens == 36_560
    assert capacity.max_concurrency == pytest.approx(4.456, abs=0.001)


def test_vllm_0_21_prints_max_concurrency_times_max_model_len():
    # The same pool as above under v0.21's "GPU KV cache size" line (runtime.VLLM_TOKENS_FROM_CONCURRENCY_SINCE):
    # int(15,998 / 3,590 × 8,192) = int(36,505.74) = 36,505 tokens, where v0.19 printed 15,998 // 7 × 16 = 36,560.
    scenario = Scenario(engine="vllm", kv_dtype="auto", context=8192, gpu_memory_utilization=0.95)
    kv = kv_cache(GEMMA3_27B, scenario, max_num_batched_tokens=8192)
    available = 0.95 * H100 - 51.45 * GIB - 1024 * 262208 * 16 - 0.25 * GIB
    old = vllm_kv_capacity(kv, available, max_model_len=8192, max_num_batched_tokens=8192, vllm_version=(0, 19))
    new = vllm_kv_capacity(kv, available, max_model_len=8192, max_num_batched_tokens=8192, vllm_version=(0, 21))
    assert (old.num_blocks, old.blocks_per_request) == (new.num_blocks, new.blocks_per_request) == (15_998, 3_590)
    assert old.kv_tokens == 36_560
    assert new.kv_tokens == 36_505 and new.block_tokens == 36_560
    assert vllm_kv_capacity(kv, available, max_model_len=8192, max_num_batched_tokens=8192).kv_tokens == 36_505


def test_vllm_hybrid_delta_net_row_of_v0_27():
    # kv_measured.csv (mitchross/talos-argocd-proxmox#1995, vLLM 0.27.1): "Qwen3.8-27B-FP8", 16 of 64 layers full
    # attention (4 KV heads × 256), fp8 KV, 2 × RTX 3090 TP2, max_model_len 131,072: pool 4.99 GiB per GPU,
    # "GPU KV cache size: 302,921 tokens", 2.31x. Its config is not published; Qwen3.5-27B has the layout.
    # Per rank: attention 2 heads × (256 + 256) × 1 B = 1,024 B/token/layer; a delta-net layer's state (conv bf16
    # 61,440 B + state f32 3,145,728 B, test_kv_cache) = 3,207,168 B / 2 ranks = 1,603,584 B. Attention block enlarged
    # to hold it: 16 × ⌈1,603,584 / (16 × 1,024)⌉ = 1,568 tokens, page 1,568 × 1,024 = 1,605,632 B. Groups of 16 layers:
    # 1 full + 3 delta-net = 4. Blocks ⌊4.99 GiB / 1,605,632 B / 16⌋ = ⌊208.56⌋ = 208. Per request at 131,072:
    # ⌈131,072 / 1,568⌉ = 84 + 3 × 1 state page = 87 → int(208 / 87 × 131,072) = 313,367 (v0.21; v0.19 printed
    # 208 // 4 × 1,568 = 81,536). The log's 302,921 = int(208 / 90 × 131,072): 2 pages per delta-net group, prefix
    # caching's "align" mode (default for hybrid models since vllm#50991, after the modelled v0.21; not modelled).
    from bench.seed_catalog import model
    kv = kv_cache(model("qwen3-5-27b"), Scenario(engine="vllm", kv_dtype="fp8", gpus=2, context=131_072, quant="FP8"),
                  max_num_batched_tokens=2048)
    capacity = vllm_kv_capacity(kv, 4.99 * GIB, max_model_len=131_072, max_num_batched_tokens=2048)
    assert (capacity.page_bytes, capacity.group_size, capacity.num_groups) == (1_605_632, 16, 4)
    assert (capacity.num_blocks, capacity.blocks_per_request) == (208, 87)
    assert capacity.kv_tokens == 313_367 and capacity.block_tokens == 81_536
    align = replace(capacity, blocks_per_request=84 + 3 * 2)
    assert vllm_printed_kv_tokens(align, 131_072, (0, 27)) == 302_921  # the log, to the token
    assert vllm_printed_kv_tokens(align, 131_072, (0, 19)) == capacity.block_tokens


def test_vllm_activation_forward_floor_for_small_vocab():
    # CodeLlama-7B shapes (vocab 32,016, hidden 4,096, FFN 11,008): sampler 1,024 × 32,016 × 16 B = 0.49 GiB <
    # forward 8,192 × 2 B × (3 × 11,008 + 4 × 4,096) = 809,500,672 B = 0.754 GiB (logged 0.77).
    codellama = dense("codellama-7b", 32, 4096, 11008, 32, 32, 128, 32016)
    peak = vllm_activation_peak(codellama, max_num_seqs=1024, max_num_batched_tokens=8192, tp=1)
    assert peak.bytes == 8192 * 2 * (3 * 11008 + 4 * 4096)
    assert peak.bytes / GIB == pytest.approx(0.77, rel=0.05)


def test_vllm_sampler_warm_up_sorted_the_vocabulary_before_v0_17():
    # Qwen3-14B shapes (vocab 151,936, hidden 5,120, FFN 17,408) with the H100 defaults (1,024 sequences, 8,192
    # batched tokens). v0.15/v0.16 sort: 1,024 × 151,936 × 38 B = 5.51 GiB (logged 5.64); v0.17's Triton kernel:
    # × 16 B = 2.32 GiB (logged 2.23). The forward pass, 8,192 × 2 B × (3 × 17,408 + 4 × 5,120) = 1.12 GiB, is lower.
    qwen = dense("qwen3-14b", 40, 5120, 17408, 40, 8, 128, 151936)
    for version, per_logit, logged in (((0, 15), 38, 5.64), ((0, 16), 38, 5.64), ((0, 17), 16, 2.23),
                                       ((0, 21), 16, None)):
        peak = vllm_activation_peak(qwen, max_num_seqs=1024, max_num_batched_tokens=8192, tp=1, version=version)
        assert peak.bytes == 1024 * 151936 * per_logit
        assert f"{per_logit} B" in peak.explanation
        if logged:
            assert peak.bytes / GIB == pytest.approx(logged, rel=0.05)


def test_gpt_oss_120b_on_one_h100_under_v0_11_leaves_what_vllm_logged():
    """vllm#27508: v0.11.0, --gpu-memory-utilization 0.95 --max-num-batched-tokens 1024 → "Available KV cache
    memory: 1.71 GiB". 0.95 × 79.19 GiB − 65.9651 GiB weights − 0.25 GiB non-torch − 1,024 × 201,088 × 38 B
    (7.287 GiB, the sampler's sort) = 1.728 GiB. At 16 B per logit (v0.17 on) it would be 5.947 GiB."""
    from bench.kv_runtime_accuracy import runtime_section

    rows, _ = runtime_section()
    row = next(r for r in rows if r["check"] == "gpt-oss-120b H100 available KV GiB")
    sampler = 1024 * 201088 * 38 / GIB
    assert row["predicted"] == pytest.approx(0.95 * 79.19 - 65.9651 - 0.25 - sampler, abs=1e-9)
    assert row["predicted"] == pytest.approx(1.728, abs=0.001)
    assert abs(row["error"]) < 0.02


def test_vllm_capture_sizes_default():
    # [1, 2, 4] + range(8, 256, 8) + range(256, 513, 16) = 3 + 31 + 17 = 51 sizes (the v0.19 logs' "51").
    assert len(vllm_capture_sizes(1024)) == 51
    assert max(vllm_capture_sizes(64)) == 128


def test_vllm_kv_capacity_median_error_against_logs():
    from bench.kv_runtime_accuracy import runtime_section

    _, summary = runtime_section()
    vllm = summary["vllm_kv_tokens"]
    assert vllm["scored"] >= 30
    assert vllm["median_abs_error"] <= 0.10
    assert summary["llama_cpp_buffers"]["max_abs_error"] <= 0.10
    # DeepSeek-V4 (10 rows: #27680's CUDA log and CPU-backend reproductions): the allocator's gaps vary with the
    # context (2232, 2551, 2876, 2622 MiB at 32K, 64K, 80K, 128K and -ub 4096), so the worst row is further out.
    dsv4 = summary["llama_cpp_dsv4_compute"]
    assert dsv4["scored"] == 10
    assert dsv4["median_abs_error"] <= 0.03
    assert dsv4["max_abs_error"] <= 0.20


def test_vllm_needs_hardware_memory_and_a_valid_utilization():
    scenario, kv = vllm_llama()
    with pytest.raises(SizingError, match="--hardware"):
        runtime_memory(LLAMA_8B, scenario, weights_bytes_per_gpu=0, kv=kv, hardware_memory_bytes=None)
    bad = Scenario(engine="vllm", kv_dtype="auto", gpu_memory_utilization=1.5)
    with pytest.raises(SizingError, match="--gpu-memory-utilization"):
        runtime_memory(LLAMA_8B, bad, weights_bytes_per_gpu=0, kv=kv, hardware_memory_bytes=H100)


@settings(max_examples=40, deadline=None)
@given(util=st.floats(0.5, 0.98), context=st.integers(1024, 131072))
def test_vllm_capacity_grows_with_utilization(util, context):
    scenario = Scenario(engine="vllm", kv_dtype="auto", context=context, gpu_memory_utilization=util)
    kv = kv_cache(LLAMA_8B, scenario)
    args = dict(weights_bytes_per_gpu=14.99 * GIB, kv=kv, hardware_memory_bytes=H100)
    low = runtime_memory(LLAMA_8B, scenario, **args).kv_capacity_tokens
    higher = Scenario(engine="vllm", kv_dtype="auto", context=context, gpu_memory_utilization=min(1.0, util + 0.01))
    assert runtime_memory(LLAMA_8B, higher, **args).kv_capacity_tokens >= low


@pytest.mark.parametrize("backend, libraries, context_mib", [
    ("cuda", "cuBLAS/NCCL", 300), ("rocm", "hipBLASLt/RCCL", 300), ("other", "BLAS and collectives", 0)])
def test_vllm_rows_name_the_platforms_libraries(backend, libraries, context_mib):
    """On ROCm vLLM loads RCCL where CUDA has NCCL, and AMD's guide names hipBLASLt; the sizes stay CUDA's."""
    scenario, kv = vllm_llama(context=8192)
    runtime = runtime_memory(LLAMA_8B, scenario, weights_bytes_per_gpu=14.99 * GIB, kv=kv,
                             hardware_memory_bytes=H100, hardware_name="H100-80GB", backend=backend)
    non_torch = runtime.term("non-torch memory")
    assert non_torch.bytes == 0.25 * GIB
    assert non_torch.explanation.startswith(f"0.25 GiB: {libraries} ")
    assert runtime.term("device context").bytes == context_mib * 2**20
    assert ("no separate device context" in runtime.term("device context").explanation) == (context_mib == 0)


def test_quantized_moe_gap_constants_are_the_bench_row():
    """The note's figures are vllm#21348's logged 8.11 GiB and the engine's pool for that log's vLLM: 0.9 × 79.19 GiB
    − 55.12 GiB FP8 weights per rank − 1,024 × 151,936 × 38 B (5.506 GiB, the sort sampler) − 2.10 GiB non-torch
    (TP 4) = 8.543 GiB; graphs are outside the budget before v0.21."""
    from bench.kv_runtime_accuracy import runtime_section
    from reports.sizing.runtime import VLLM_QUANTIZED_MOE_LOGGED_KV_GIB, VLLM_QUANTIZED_MOE_MODELLED_KV_GIB

    rows, _ = runtime_section()
    row = next(r for r in rows if r["check"].startswith("Qwen3-235B-A22B-FP8 TP4 H100 available KV GiB"))
    assert row["expected"] == VLLM_QUANTIZED_MOE_LOGGED_KV_GIB == 8.11
    assert row["predicted"] == pytest.approx(0.9 * 79.19 - 55.1217 - 1024 * 151936 * 38 / GIB - 2.1, abs=1e-3)
    assert round(row["predicted"], 2) == VLLM_QUANTIZED_MOE_MODELLED_KV_GIB == 8.54


def test_buffers_of_a_model_without_config_say_what_is_unknown():
    """A model known only by its stated parameters has no vocabulary or width: the formulas read "n_embd 0" and
    "n_vocab 0" as if the config said so. Host buffer: the f32 KQ mask alone, 4 B × 512 × 8,192 = 16 MiB."""
    from tests.engine.specs import stated_parameters_only

    buffers = llama_cpp_buffers(stated_parameters_only(111e9, 111e9), Scenario(context=8192))
    assert buffers["host compute buffer"][0] == 4 * 512 * 8192
    assert buffers["output buffer"][0] == 0
    explained = " ".join(how for _, how in buffers.values())
    assert "n_embd 0" not in explained and "n_vocab 0" not in explained
    assert "width unknown" in buffers["host compute buffer"][1] and "unknown" in buffers["output buffer"][1]


@pytest.mark.parametrize("changes", [
    {"quant": "Q8_0"}, {"quant": "BF16", "gpus": 4}, {"offload_pct": 30.0}, {"depth": 4096, "prompt": 512},
    {"gpu_memory_utilization": 0.8, "max_num_seqs": 8, "max_num_batched_tokens": 4096},
    {"system_ram_bandwidth_gbs": 90.0},
    {"context": 131072, "batch": 4}, {"n_ubatch": 2048}, {"flash_attention": False}, {"kv_dtype": "q8_0"},
    {"swa_full": True},
])
def test_llama_cpp_runtime_is_memoized_on_the_fields_it_reads(changes):
    """runtime_memory keeps llama.cpp's terms of one configuration for every weight format, GPU count and offload:
    with any field changed they equal the terms computed from the whole scenario (the uncached function), on a
    sliding-window model, a MoE and DeepSeek-V4 (whose compute buffer reads the KV type, -ub and --swa-full)."""
    from bench.model_specs import GEMMA_3_27B, QWEN3_30B_A3B
    from bench import seed_catalog
    from reports.sizing.runtime import _llama_cpp_runtime
    from reports.sizing.specs import scenario_with

    for spec in (GEMMA_3_27B, QWEN3_30B_A3B, seed_catalog.model("deepseek-v4-flash")):
        scenario = scenario_with(Scenario(context=32768), **changes)
        kv = kv_cache(spec, scenario)
        for backend in ("cuda", "metal"):
            memoized = runtime_memory(spec, scenario, weights_bytes_per_gpu=1e9, kv=kv, hardware_memory_bytes=None,
                                      backend=backend)
            assert memoized == _llama_cpp_runtime.__wrapped__(spec, scenario, backend), (spec.name, backend)


@pytest.mark.parametrize("changes", [
    {}, {"quant": "FP8"}, {"quant": "BF16", "gpus": 4}, {"offload_pct": 30.0}, {"depth": 4096, "prompt": 512},
    {"gpu_memory_utilization": 0.8}, {"max_num_seqs": 8}, {"max_num_batched_tokens": 4096},
    {"system_ram_bandwidth_gbs": 90.0}, {"context": 131072, "batch": 4}, {"kv_dtype": "fp8"},
])
def test_vllm_runtime_terms_and_pool_are_memoized_on_what_they_read(changes):
    """runtime_memory keeps vLLM's terms besides the weights per configuration (model, format, scheduler, TP,
    backend, version) and the KV pool's shape per cache, context and token budget: with every other scenario's,
    accelerator's and weight size's results cached first, each result equals the one computed with empty caches,
    on a dense model, a sliding-window model, a MoE, a hybrid delta-net model and DeepSeek-V4."""
    from bench import seed_catalog
    from bench.model_specs import GEMMA_3_27B, QWEN3_30B_A3B
    from reports.sizing.runtime import _vllm_runtime_terms, vllm_kv_pool
    from reports.sizing.specs import scenario_with

    specs = (LLAMA_8B, GEMMA_3_27B, QWEN3_30B_A3B, seed_catalog.model("qwen3-5-27b"),
             seed_catalog.model("deepseek-v4-flash"))
    memories = ((H100, "H100-80GB", "cuda", (0, 19)), (23.58 * GIB, "RTX 3090", "cuda", (0, 21)),
                (190 * GIB, "MI300X", "rocm", (0, 33)), (79.2 * GIB, "A100 80GB", "other", (0, 21)))

    def runtime(spec, memory, name, backend, version, weights):
        scenario = scenario_with(Scenario(engine="vllm", kv_dtype="auto", quant="BF16", context=32768), **changes)
        mnbt = scenario.max_num_batched_tokens or vllm_scheduler_defaults(memory, name)[1]
        return runtime_memory(spec, scenario, weights_bytes_per_gpu=weights,
                              kv=kv_cache(spec, scenario, max_num_batched_tokens=mnbt), hardware_memory_bytes=memory,
                              hardware_name=name, backend=backend, vllm_version=version)

    cases = [(spec, *memory, weights) for spec in specs for memory in memories for weights in (1e9, 60 * GIB)]
    for case in cases:
        runtime(*case)
    warm = [runtime(*case) for case in reversed(cases)]  # each looked up after all the others were cached
    fresh = []
    for case in reversed(cases):
        _vllm_runtime_terms.cache_clear()
        vllm_kv_pool.cache_clear()
        fresh.append(runtime(*case))
    assert warm == fresh
    assert [(t.explanation, t.inputs) for r in warm for t in r.terms] == [
        (t.explanation, t.inputs) for r in fresh for t in r.terms]
