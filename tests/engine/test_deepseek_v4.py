"""DeepSeek-V4 (model_type deepseek_v4): compressed attention, sized from its config.json and the engines' code.

Every expected number below is derived by hand from the config.json the catalog keeps for DeepSeek-V4-Flash
(catalog/seed/models.json, a copy of deepseek-ai/DeepSeek-V4-Flash from ai-dynamo/aiconfigurator):
hidden 4096, 43 layers, 64 heads × head_dim 512 with one shared K=V head, q_lora 1024, o_groups 8 × o_lora 1024,
sliding window 128, compress_ratios = [0, 0, 4, 128, 4, 128, …, 4] (2 window-only, 21 CSA, 20 HCA layers + the MTP
entry), indexer 64 heads × 128 with top-512, 256 experts of 2048 top-6 + 1 shared, 3 hash layers, hc_mult 4,
vocab 129280. Module shapes: transformers models/deepseek_v4/modeling_deepseek_v4.py. KV layouts: docs/engine.md.
"""

from __future__ import annotations

import pytest

from reports.sizing.errors import SizingError
from reports.sizing.estimate import _kv_per_block, attention_kind, estimate, kv_bytes_read, plan_memory
from reports.sizing.kv_cache import kv_cache, vllm_dsv4_pool_block_bytes
from reports.sizing.parameters import count_parameters
from reports.sizing.runtime import DSV4_ALLOCATOR_OVERHEAD, llama_cpp_buffers
from reports.sizing.specs import Scenario
from reports.sizing.weights import weight_bytes
from bench import seed_catalog as catalog

FLASH = "deepseek-v4-flash"
H, HEADS, HEAD, Q_LORA, GROUPS, O_LORA = 4096, 64, 512, 1024, 8, 1024
IDX_HEADS, IDX_DIM, TOPK = 64, 128, 512
EXPERTS, WIDTH, TOP_K, VOCAB, HC = 256, 2048, 6, 129280, 4
LAYERS, CSA, HCA, WINDOW_ONLY, HASH = 43, 21, 20, 2, 3


def flash():
    return catalog.model(FLASH)


def test_the_config_parses_into_window_csa_and_hca_layers():
    spec = flash()
    mixers = [layer.mixer for layer in spec.layers]
    assert mixers[:4] == ["window", "window", "csa", "hca"] and mixers[-1] == "csa"
    assert (mixers.count("window"), mixers.count("csa"), mixers.count("hca")) == (WINDOW_ONLY, CSA, HCA)
    assert all(layer.ffn == "moe" for layer in spec.layers)
    ca = spec.compressed_attention
    assert (ca.num_heads, ca.head_dim, ca.qk_rope_head_dim, ca.q_lora_rank, ca.o_groups, ca.o_lora_rank) == (
        HEADS, HEAD, 64, Q_LORA, GROUPS, O_LORA)
    assert (ca.hc_mult, ca.hash_layers, spec.sliding_window, spec.mtp_layers) == (HC, HASH, 128, 1)
    assert (spec.dsa_indexer.num_heads, spec.dsa_indexer.head_dim, spec.dsa_indexer.topk) == (IDX_HEADS, IDX_DIM, TOPK)
    assert spec.native_dtype == "fp8_fp4"  # quantization_config fp8 + "expert_dtype": "fp4"
    assert spec.checkpoint_quant_method == "fp8"
    assert attention_kind(spec) == "compressed"


def _hand_parameter_count() -> tuple[int, int]:
    """(total without MTP, routed-expert parameters), tensor by tensor."""
    attention = (H * Q_LORA + Q_LORA + Q_LORA * HEADS * HEAD  # q_a, q_a_norm, q_b
                 + H * HEAD + HEAD  # the K=V head and its norm
                 + (HEADS * HEAD // GROUPS) * (GROUPS * O_LORA) + GROUPS * O_LORA * H  # output a (grouped), b
                 + HEADS)  # sinks
    csa = (2 * H * 2 * HEAD + 4 * 2 * HEAD + HEAD  # compressor kv + gate (2 × head), ape 4 × 1024, norm
           + Q_LORA * IDX_HEADS * IDX_DIM + H * IDX_HEADS  # indexer q_b, weights projection
           + 2 * H * 2 * IDX_DIM + 4 * 2 * IDX_DIM + IDX_DIM)  # indexer compressor kv + gate, ape, norm
    hca = 2 * H * HEAD + 128 * HEAD + HEAD  # compressor kv + gate (head), ape 128 × 512, norm
    hyper = 2 * (HC * H * (2 + HC) * HC + (2 + HC) * HC + 3)  # attn_hc and ffn_hc: fn, base, scale
    routed = EXPERTS * 3 * H * WIDTH
    moe = routed + 3 * H * WIDTH + H * EXPERTS  # experts, the shared expert, the router
    norms = 2 * H
    per_layer = attention + hyper + moe + norms
    total = LAYERS * per_layer + CSA * csa + HCA * hca
    total += HASH * TOP_K * VOCAB + (LAYERS - HASH) * EXPERTS  # tid2eid tables; correction biases elsewhere
    total += 2 * VOCAB * H + H  # embedding, output head, final norm
    total += HC * H * HC + HC + 1  # the hyper-connection head
    return total, LAYERS * routed


def test_parameters_match_a_count_by_hand_and_the_published_284b_13b():
    params = count_parameters(flash())
    total, routed = _hand_parameter_count()
    assert params.total == total
    assert params.routed_experts == routed
    assert params.active == total - routed + routed * TOP_K / EXPERTS
    # Hugging Face's V4 post and the model card: 284 B total, 13 B active.
    assert round(params.total / 1e9) == 284
    assert round(params.active_excluding_embedding / 1e9) == 13


def test_llama_cpp_kv_cache_at_131072_tokens():
    """src/llama-kv-cache-dsv4.cpp: K-only caches in f16 (2 B): the raw window on all 43 layers,
    pad256(128 + 512) = 768 cells; CSA pad256(131072 / 4) = 32768 cells × 512 on 21 layers and the indexer's keys
    × 128 on the same layers; HCA pad256(131072 / 128) = 1024 cells × 512 on 20 layers; f32 compressor states."""
    kv = kv_cache(flash(), Scenario(context=131_072, kv_dtype="f16"))
    expected = {
        "dsv4_window": 768 * LAYERS * HEAD * 2,
        "csa": 32_768 * CSA * HEAD * 2,
        "csa_indexer": 32_768 * CSA * IDX_DIM * 2,
        "hca": 1_024 * HCA * HEAD * 2,
        # kv + score: CSA 8 rows × (2 × 512) and the indexer's 8 × (2 × 128); HCA 128 rows × 512
        "dsv4_state": (2 * 8 * 2 * HEAD + 2 * 8 * 2 * IDX_DIM) * 4 * CSA + 2 * 128 * HEAD * 4 * HCA,
    }
    assert {term.kind: term.bytes for term in kv.terms} == expected
    assert kv.total_bytes == 947_798_016  # 903.9 MiB
    # 6,880 B per token of context in the compressed caches (512 × 2 / 4 × 21 + 128 × 2 / 4 × 21 + 1024 / 128 × 20)
    assert kv.bytes_per_token == 6_880


def test_llama_cpp_sizes_match_the_upstream_log():
    """ggml-org/llama.cpp#27680 (DeepSeek-V4-Flash, -ub 4096): "4352 cells … 182.75 MiB" for the sliding cache and
    compressor states of 1.31 / 10.00 / 0.33 MiB (CSA, HCA, indexer)."""
    kv = kv_cache(flash(), Scenario(context=131_072, kv_dtype="f16", n_ubatch=4096))
    assert kv.term("dsv4_window").cells == 4_352
    assert kv.term("dsv4_window").bytes / 2**20 == 182.75
    state = kv.term("dsv4_state")
    csa_and_indexer = state.inputs["csa_elements"] * 4 * CSA / 2**20  # the log's 1.31 + 0.33 MiB, each rounded
    assert csa_and_indexer == pytest.approx(1.31 + 0.33, abs=0.01)
    assert state.inputs["hca_elements"] * 4 * HCA / 2**20 == 10.0


def test_llama_cpp_q8_0_cache_and_swa_full():
    kv = kv_cache(flash(), Scenario(context=131_072, kv_dtype="q8_0", swa_full=True))
    assert kv.term("dsv4_window").cells == 131_072  # --swa-full keeps the whole context in the raw cache
    assert kv.term("csa").bytes == 32_768 * CSA * HEAD * 34 / 32  # q8_0: 34 B per 32 elements
    kv_two = kv_cache(flash(), Scenario(context=131_072, batch=2, kv_dtype="f16"))
    assert kv_two.total_bytes == 2 * 947_798_016  # one stream per sequence


def test_llama_cpp_compute_buffer_spans_the_compressed_cache():
    """src/models/deepseek4.cpp (llama.cpp 0c1e57098): the graph is reserved for the whole padded caches. At a CSA
    layer's attention, 131072 tokens, -ub 512, flash attention on, these are live (bytes):
    inputs: embeddings 512 × 4 × 4096; f16 masks over raw 768 + CSA 32768 + HCA 1024 cells and the indexer's f16
    mask over 32768; a 512-wide f16 top-k leaf per CSA layer; two f32 residual streams of 4 × 4096; f32 queries and
    attention output of 64 × 512; the concatenated f16 mask and f16 keys over 768 + 32768 cells.
    × DSV4_ALLOCATOR_OVERHEAD (1.2) for ggml-alloc's gaps (#27680: 2570.28 MiB against a live peak of 2154)."""
    inputs = 512 * (4 * H + 2 * (768 + 32_768 + 1_024) + 2 * 32_768) + CSA * 2 * TOPK * 512
    streams = 2 * 4 * HC * H * 512
    queries = 4 * HEADS * HEAD * 512
    live = inputs + streams + 2 * queries + 2 * 512 * (768 + 32_768) + 2 * HEAD * (768 + 32_768)
    assert live == 358_350_848
    compute, how = llama_cpp_buffers(flash(), Scenario(context=131_072, kv_dtype="f16"))["compute buffer"]
    assert compute == live * DSV4_ALLOCATOR_OVERHEAD  # 410.1 MiB; reproduced on the CPU backend: 413.13 MiB
    assert "CSA 32" in how and "allocator" in how
    # At 4096 tokens the logits of the micro-batch are larger: 4 × 512 × (vocabulary + width), as for every model.
    small, _ = llama_cpp_buffers(flash(), Scenario(context=4_096, kv_dtype="f16"))["compute buffer"]
    assert small == 4 * 512 * (VOCAB + H)


def test_llama_cpp_compute_buffer_at_the_upstream_micro_batch_and_without_flash_attention():
    """#27680 ran -ub 4096 at n_ctx 64000: CUDA0 2570.28 MiB. Without flash attention the f32 KQ of 64 heads over
    raw + CSA cells dominates: at 64000 tokens and -ub 512, 4 × 64 × (768 + 16128) × 512 B plus f32 masks (raw 768,
    CSA 16128, HCA 512, indexer f16), leaves, residuals, queries and two f16 key copies."""
    upstream, _ = llama_cpp_buffers(flash(), Scenario(context=64_000, n_ubatch=4096, kv_dtype="f16"))["compute buffer"]
    assert upstream / 2**20 == pytest.approx(2570.28, rel=0.01)
    no_fa, how = llama_cpp_buffers(flash(), Scenario(context=64_000, kv_dtype="f16", flash_attention=False)
                                   )["compute buffer"]
    kq = 4 * HEADS * (768 + 16_128) * 512
    inputs = 512 * (4 * H + 4 * (768 + 16_128 + 512) + 2 * 16_128) + CSA * 4 * TOPK * 512
    assert no_fa == inputs + 2 * 4 * HC * H * 512 + 4 * HEADS * HEAD * 512 + kq + 2 * 2 * HEAD * (768 + 16_128)
    assert no_fa == 2_465_988_608  # 2351.8 MiB; reproduced on the CPU backend: 2422.88 MiB
    assert how.startswith("flash attention off")


def test_the_note_gives_the_buffer_here_and_at_the_larger_micro_batch():
    gpu = catalog.accelerator("rtx-4090")
    scenario = Scenario(context=65_536)
    notes = {note.code: note for note in estimate(flash(), gpu, scenario).warnings}
    params = notes["dsv4_compute_buffer"].params
    here = llama_cpp_buffers(flash(), scenario)["compute buffer"][0]
    larger = llama_cpp_buffers(flash(), Scenario(context=65_536, n_ubatch=4096))["compute buffer"][0]
    assert (params["ubatch"], params["larger_ubatch"]) == (512, 4096)
    assert (params["gib"], params["larger_gib"]) == (here / 2**30, larger / 2**30)
    assert 0.3 < params["gib"] < 0.4 and 2.4 < params["larger_gib"] < 2.6
    at_4096 = estimate(flash(), gpu, Scenario(context=65_536, n_ubatch=4096)).warnings
    assert "dsv4_compute_buffer" not in {note.code for note in at_4096}


def test_vllm_kv_pool_at_131072_tokens():
    """vLLM 0.33.0 fp8_ds_mla: per 256 tokens a CSA layer keeps 64 entries of 584 B (37,376 → 37,440 B page after
    the 576-B alignment) and 64 indexer keys of 132 B (8,448 → 8,640), an HCA layer 2 × 584 = 1,168 → 1,728 B;
    the pool block is all of them: 21 × (37,440 + 8,640) + 20 × 1,728 = 1,002,240 B. One sequence of 131,072
    tokens: 512 blocks, plus its windows (43 × 37,440 B pages: 2 groups × 3 blocks), CSA states (1 group × 3) and
    HCA states (1 × 17) = 538 blocks."""
    spec = flash()
    assert vllm_dsv4_pool_block_bytes(spec) == 21 * (37_440 + 8_640) + 20 * 1_728 == 1_002_240
    kv = kv_cache(spec, Scenario(engine="vllm", context=131_072, kv_dtype="fp8"))
    assert kv.kv_dtype == "fp8"
    assert kv.total_bytes == 538 * 1_002_240
    assert kv.bytes_per_token == 1_002_240 / 256  # 3,915 B per token of context
    # Not split by tensor parallelism: every rank holds the whole cache.
    kv8 = kv_cache(spec, Scenario(engine="vllm", context=131_072, kv_dtype="auto", gpus=8))
    assert kv8.per_rank_bytes == 538 * 1_002_240 and kv8.total_bytes == 8 * 538 * 1_002_240


def test_vllm_refuses_a_16_bit_cache():
    with pytest.raises(SizingError) as error:
        kv_cache(flash(), Scenario(engine="vllm", context=8192, kv_dtype="f16"))
    assert error.value.code == "dsv4_vllm_kv_fp8"


def test_the_kv_cache_is_a_fraction_of_what_mla_or_gqa_arithmetic_gives():
    """Sized as MLA (576 × 2 B per layer) it would be 6.05 GiB at 131,072 tokens, as GQA with one 512-wide K and V
    head 10.75 GiB; the engines hold 0.88 GiB (llama.cpp f16) and 0.50 GiB (vLLM)."""
    llama = kv_cache(flash(), Scenario(context=131_072, kv_dtype="f16")).total_bytes
    vllm = kv_cache(flash(), Scenario(engine="vllm", context=131_072, kv_dtype="fp8")).total_bytes
    assert 576 * 2 * LAYERS * 131_072 / llama > 6.8
    assert 2 * HEAD * 2 * LAYERS * 131_072 / vllm > 20


def test_decode_reads_the_top_k_of_the_csa_cache_and_all_of_the_hca_cache():
    kv = kv_cache(flash(), Scenario(context=131_072, kv_dtype="f16"))
    depth = 100_000
    expected = (LAYERS * HEAD * 2 * 128  # every layer's window
                + CSA * HEAD * 2 * TOPK  # the indexer's top-512 compressed entries
                + CSA * IDX_DIM * 2 * depth / 4  # the indexer scores every compressed key
                + HCA * HEAD * 2 * depth / 128  # HCA reads all its compressed entries
                + kv.term("dsv4_state").bytes)
    assert kv_bytes_read(kv, depth) == pytest.approx(expected, rel=1e-12)


def test_fp8_fp4_native_weights_keep_experts_at_17_bytes_per_32():
    spec = flash()
    weights = weight_bytes(spec, "FP8_FP4")
    _, routed = _hand_parameter_count()
    assert weights.routed_expert_bytes == routed * 17 / 32


def test_llama_cpp_offload_places_each_layers_cache_with_it():
    spec = flash()
    plan = plan_memory(spec, catalog.accelerator("h100-80gb-sxm"), Scenario(context=131_072, gpus=2))
    per_block = _kv_per_block(spec, plan.kv, plan.layout)
    assert sum(per_block) == pytest.approx(plan.kv.total_bytes, rel=1e-12)
    window = 768 * HEAD * 2
    assert per_block[0] == window  # a window-only layer
    assert per_block[3] == window + 1_024 * HEAD * 2 + 2 * 128 * HEAD * 4  # an HCA layer with its state


def test_vllm_refuses_the_gpus_without_a_deepseek_v4_attention_backend():
    """vLLM 0.33.0: FlashMLA sparse on compute capability 9.x/10.x, FlashInfer on 10.x/12.x; nothing for Ampere."""
    scenario = Scenario(engine="vllm", quant="FP8_FP4", kv_dtype="fp8", gpus=8)
    with pytest.raises(SizingError) as error:
        plan_memory(flash(), catalog.accelerator("a100-80gb-sxm"), scenario)
    assert error.value.code == "dsv4_vllm_needs_hopper"
    assert plan_memory(flash(), catalog.accelerator("h100-80gb-sxm"), scenario).fit.fits
    # No DeepSeek-V4 GGUF loader in vLLM (vllm-gguf-plugin issue #114: "Unknown gguf model_type: deepseek_v4").
    with pytest.raises(SizingError) as error:
        plan_memory(flash(), catalog.accelerator("h100-80gb-sxm"), Scenario(engine="vllm", quant="Q4_K_M",
                                                                         kv_dtype="fp8", gpus=8))
    assert error.value.code == "dsv4_vllm_no_gguf"


def test_v4_pro_parses_with_its_own_layer_mix():
    spec = catalog.model("deepseek-v4-pro")
    mixers = [layer.mixer for layer in spec.layers]
    assert (len(mixers), mixers.count("csa"), mixers.count("hca"), mixers.count("window")) == (61, 30, 31, 0)
    params = count_parameters(spec)
    # The model card: 1.6T total, 49B activated.
    assert round(params.total / 1e11) == 16 and round(params.active_excluding_embedding / 1e9) == 49
    # vLLM pool block: 30 × (37,440 + 8,640) + 31 × 1,728 = 1,435,968 B per 256 tokens.
    assert vllm_dsv4_pool_block_bytes(spec) == 1_435_968


def test_compute_buffer_accepts_the_kv_type_aliases():
    """The keys' copy is in the cache type, named as --kv-dtype accepts it (fp16, float16, BF16, Q8_0 once raised
    KeyError: a 500 on the API)."""
    def buffer(kv_dtype: str) -> float:
        return llama_cpp_buffers(flash(), Scenario(context=131_072, kv_dtype=kv_dtype))["compute buffer"][0]

    assert buffer("fp16") == buffer("float16") == buffer("f16")
    assert buffer("BF16") == buffer("bf16") == buffer("f16")
    assert buffer("Q8_0") == buffer("q8_0") < buffer("f16")
