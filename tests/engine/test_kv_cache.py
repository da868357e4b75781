"""KV cache and recurrent state against hand derivations (shapes from /work/shared/data/models.json)."""

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.model_specs import (
    DEEPSEEK_V3,
    GEMMA_3_27B,
    GLM_4_5,
    GLM_5,
    GPT_OSS_120B,
    LLAMA_3_1_8B,
    LLAMA_3_70B,
    QWEN3_235B_A22B,
    every_nth,
    uniform_layers,
)
from reports.sizing.errors import SizingError
from reports.sizing.kv_cache import kv_cache
from reports.sizing.specs import (
    AttentionShape,
    ConvShape,
    LayerSpec,
    LinearAttentionShape,
    MambaShape,
    ModelSpec,
    Scenario,
)

GIB = 2**30


def spec(slug, layer_specs, hidden=4096, vocab=32000, attention=None, **kw):
    return ModelSpec(slug=slug, name=slug, architecture=slug, hidden_size=hidden, vocab_size=vocab,
                     layers=layer_specs, attention=attention, **kw)


# The published models' shapes are those of bench/model_specs.py (config.json values from models.json):
# Llama-3.1-8B 32 layers × 8 KV heads × 128; GLM-4.5 92 layers (+1 MTP, not cached) × 8 KV heads × 128;
# GLM-5 78 layers of MLA kv_lora 512 + rope 64 and a DSA indexer of head_dim 128; DeepSeek-V3 61 layers of
# MLA 512 + 64 (128 heads, nope 128, v 128), no indexer; Qwen3-235B-A22B 94 layers × 4 KV heads × 128;
# Gemma 3 27B 62 layers, every 6th global, window 1024, 16 KV heads × 128 on every layer; gpt-oss-120b
# 36 layers alternating sliding (128) / full, 8 KV heads × 64.

# models.json "Qwen3-Next-80B-A3B": 48 layers, 1 full in 4 (12 full, 36 gated delta-net), full: 2 KV heads ×
# 256; linear: 16 key heads, 32 value heads, 128 × 128, conv kernel 4.
QWEN3_NEXT = spec("qwen3-next", every_nth(48, 4, "full", "linear"), hidden=2048, attention=AttentionShape(16, 2, 256),
                  linear_attention=LinearAttentionShape(16, 32, 128, 128, 4))
# models.json "Gemma 4 31B (text config, fixtures)": 60 layers, every 6th global; sliding 16 KV × 256,
# global 4 KV × 512 with attention_k_eq_v; window 1024.
GEMMA4_31B = spec("gemma-4-31b", every_nth(60, 6, "full", "sliding"), hidden=5376,
                  attention=AttentionShape(32, 4, 512, k_eq_v=True), sliding_attention=AttentionShape(32, 16, 256),
                  sliding_window=1024)
# models.json "LFM2-350M": 16 blocks, 10 conv (L_cache 3) + 6 attention (8 KV heads × 64), hidden 1024.
LFM2_350M = spec("lfm2-350m", tuple(LayerSpec(m, "dense") for m in
                                    ["conv", "conv", "full", "conv", "conv", "full", "conv", "conv", "full", "conv",
                                     "full", "conv", "full", "conv", "full", "conv"]),
                 hidden=1024, attention=AttentionShape(16, 8, 64), conv=ConvShape(3))
# models.json "NVIDIA Nemotron 3 Nano 30B-A3B (config, fixture copy)" Mamba-2 mixer: 64 heads × 64,
# state 128, 8 groups, conv 4 (one layer here: the per-layer state is what is checked).
MAMBA = spec("mamba-layer", uniform_layers(1, "mamba"), hidden=2688,
             mamba=MambaShape(num_heads=64, head_dim=64, state_size=128, n_groups=8, conv_kernel=4))

LLAMA_CPP = Scenario(engine="llama.cpp", kv_dtype="f16")


def vllm(**kw):
    return Scenario(engine="vllm", kv_dtype=kw.pop("kv_dtype", "bf16"), **kw)


# --- required figures -----------------------------------------------------------------------------------------

def test_llama_3_1_8b_bytes_per_token_matches_vllm_log():
    # 2 × 8 kv heads × 128 × 2 B × 32 layers = 131,072 B/token (vllm#10517); × 8,192 = 1 GiB.
    kv = kv_cache(LLAMA_3_1_8B, LLAMA_CPP)
    assert kv.bytes_per_token == 131_072
    assert kv.total_bytes == 131_072 * 8192 == GIB
    assert "2 × 8 kv heads × 128 × 2 B × 32 layers = 131\u202f072 B/token × 8\u202f192 cells" in kv.terms[0].explanation


@pytest.mark.parametrize("context, gib", [(8192, 2.875), (32768, 11.5)])
def test_seed_glm_4_5(context, gib):
    # 2 × 92 layers × 8 kv heads × 128 × 2 B = 376,832 B/token; × 8,192 = 3,087,007,744 B = 2.875 GiB.
    assert kv_cache(GLM_4_5, Scenario(context=context)).total_bytes == gib * GIB


@pytest.mark.parametrize("context, gib", [(8192, 0.686), (32768, 2.742)])
def test_seed_glm_5_mla_latent(context, gib):
    # 78 layers × (512 + 64) × 2 B = 89,856 B/token; × 8,192 = 736,100,352 B = 0.6855 GiB (seed prints 0.686).
    mla = kv_cache(GLM_5, Scenario(context=context)).term("mla")
    assert mla.bytes == 89_856 * context
    assert mla.bytes / GIB == pytest.approx(gib, abs=0.0005)


def test_glm_5_indexer_cache_is_a_separate_term():
    # llama.cpp llama_kv_cache_dsa: indexer keys 1 head × 128 × 2 B × 78 layers = 19,968 B/token, K only.
    kv = kv_cache(GLM_5, Scenario(context=8192))
    assert kv.term("dsa_indexer").bytes == 19_968 * 8192
    assert kv.bytes_per_token == 89_856 + 19_968
    # vLLM: indexer 128 fp8 + 4 B scale = 132 B × 78 = 10,296 B/token; fp8 cache → fp8_ds_mla 656 B × 78.
    bf16 = kv_cache(GLM_5, vllm(context=8192))
    assert bf16.bytes_per_token == 89_856 + 10_296
    fp8 = kv_cache(GLM_5, vllm(context=8192, kv_dtype="fp8"))
    assert fp8.bytes_per_token == 656 * 78 + 10_296


def test_qwen3_235b_tp4_bytes_per_token_per_gpu():
    # 4 KV heads / TP4 = 1 per GPU: 2 × 1 × 128 × 2 B × 94 layers = 48,128 B/token/GPU (vllm#21348).
    kv = kv_cache(QWEN3_235B_A22B, vllm(gpus=4))
    assert kv.bytes_per_token_per_rank == 48_128
    assert kv.bytes_per_token == 4 * 48_128


def test_gemma_3_27b_at_128k_keeps_only_the_window_on_sliding_layers():
    # Global: 10 layers × 2 × 16 × 128 × 2 B = 81,920 B/token × 131,072 = 10 GiB.
    # Sliding: pad256(min(131,072, 1,024 × 1 + 512 ubatch)) = 1,536 cells × 52 × 8,192 B = 654,311,424 B.
    # Naive (every layer full): 62 × 8,192 × 131,072 = 62 GiB.
    kv = kv_cache(GEMMA_3_27B, Scenario(context=131072))
    assert kv.term("full").bytes == 10 * GIB
    assert kv.term("sliding").cells == 1536
    assert kv.term("sliding").bytes == 654_311_424
    assert kv.total_bytes == 10 * GIB + 654_311_424  # 10.61 GiB, not 62


def test_gemma_3_swa_full_and_batch():
    # --swa-full: sliding layers keep n_ctx cells. Batch 4 × 8,192: n_ctx 32,768 shared (unified cache), SWA
    # cache pad256(min(32,768, 1,024 × 4 + 512)) = 4,608 cells.
    assert kv_cache(GEMMA_3_27B, Scenario(context=8192, swa_full=True)).term("sliding").cells == 8192
    kv = kv_cache(GEMMA_3_27B, Scenario(context=8192, batch=4))
    assert kv.term("full").cells == 32768
    assert kv.term("sliding").cells == 4608


def test_deepseek_v3_caches_the_latent_not_heads():
    # 61 × (512 + 64) × 2 B = 70,272 B/token (llama.cpp after PR #19067, vLLM MLAAttentionSpec); the naive
    # MHA figure 61 × 128 heads × (192 K + 128 V) × 2 B = 4,997,120 B/token is 71× larger.
    kv = kv_cache(DEEPSEEK_V3, Scenario(context=32768))
    assert kv.bytes_per_token == 70_272
    assert kv.total_bytes == 70_272 * 32768
    # vLLM fp8 without a sparse indexer: plain 576 × 1 B, and the latent is not split by TP (8 GPUs).
    assert kv_cache(DEEPSEEK_V3, vllm(kv_dtype="fp8", gpus=8)).bytes_per_token_per_rank == 61 * 576


def test_qwen3_next_state_is_per_sequence():
    # Full: 12 layers × 2 × 2 × 256 × 2 B = 24,576 B/token.
    # Linear (llama.cpp, f32): conv (4 - 1) × (2 × 16 × 128 + 32 × 128) = 24,576 + state 32 × 128 × 128 =
    # 524,288 → 548,864 elements × 4 B × 36 layers = 79,036,416 B per sequence, whatever the context.
    kv = kv_cache(QWEN3_NEXT, Scenario(context=32768))
    assert kv.bytes_per_token == 24_576
    assert kv.recurrent_bytes_per_sequence == 79_036_416
    assert kv.total_bytes == 24_576 * 32768 + 79_036_416
    longer = kv_cache(QWEN3_NEXT, Scenario(context=65536))
    assert longer.term("linear").bytes == kv.term("linear").bytes
    # vLLM keeps the state in the model dtype: 548,864 × 2 B × 36 = 39,518,208 B per sequence; 2 sequences.
    assert kv_cache(QWEN3_NEXT, vllm(context=32768, batch=2)).term("linear").bytes == 2 * 39_518_208


def test_gpt_oss_120b_sliding_layers():
    # Full: 18 × 2 × 8 × 64 × 2 B = 36,864 B/token × 131,072 = 4.5 GiB.
    # Sliding (llama.cpp): pad256(min(131,072, 128 + 512)) = 768 cells × 18 × 2,048 B = 28,311,552 B.
    kv = kv_cache(GPT_OSS_120B, Scenario(context=131072))
    assert kv.term("full").bytes == 4.5 * GIB
    assert kv.term("sliding").bytes == 768 * 18 * 2048
    # vLLM SlidingWindowSpec with max_num_batched_tokens 8192: cdiv(min(127 + 8,192, 131,072), 16) + 1 = 521
    # pages = 8,336 tokens per request.
    assert kv_cache(GPT_OSS_120B, vllm(context=131072), max_num_batched_tokens=8192).term("sliding").cells == 8336


def test_gemma_4_k_eq_v_stores_k_and_v_and_pads_v_without_flash_attention():
    # Global: 2 × 4 × 512 × 2 B = 8,192 B/token/layer; sliding: 2 × 16 × 256 × 2 B = 16,384.
    kv = kv_cache(GEMMA4_31B, Scenario(context=8192))
    assert kv.term("full").bytes_per_token_per_layer == 8192
    assert kv.term("sliding").bytes_per_token_per_layer == 16384
    # FA off: V is padded to the widest V row (16 × 256 = 4,096): global (2,048 K + 4,096 V) × 2 B = 12,288.
    no_fa = kv_cache(GEMMA4_31B, Scenario(context=8192, flash_attention=False))
    assert no_fa.term("full").bytes_per_token_per_layer == 12_288


def test_lfm2_conv_and_mamba2_state():
    # LFM2: 6 attention layers × 2 × 8 × 64 × 2 B = 12,288 B/token; conv state (3 - 1) × 1,024 × 4 B × 10.
    kv = kv_cache(LFM2_350M, Scenario(context=4096))
    assert kv.bytes_per_token == 12_288
    assert kv.recurrent_bytes_per_sequence == 2 * 1024 * 4 * 10
    # Mamba-2: d_inner 64 × 64 = 4,096; conv 3 × (4,096 + 2 × 8 × 128) = 18,432; ssm 128 × 4,096 = 524,288;
    # × 4 B (llama.cpp f32) = 2,170,880 B per layer and sequence.
    assert kv_cache(MAMBA, Scenario()).recurrent_bytes_per_sequence == 2_170_880


# --- dtypes, padding, TP --------------------------------------------------------------------------------------

@pytest.mark.parametrize("kv_dtype, per_token", [
    ("f16", 131_072), ("bf16", 131_072),
    ("q8_0", 2 * 32 * 1024 * 34 // 32),  # 34 B per 32 elements → 69,632
    ("q4_0", 2 * 32 * 1024 * 18 // 32),  # 18 B per 32 elements → 36,864
])
def test_llama_cpp_kv_dtypes(kv_dtype, per_token):
    assert kv_cache(LLAMA_3_1_8B, Scenario(kv_dtype=kv_dtype)).bytes_per_token == per_token


def test_vllm_fp8_halves_the_cache():
    assert kv_cache(LLAMA_3_1_8B, vllm(kv_dtype="fp8")).bytes_per_token == 65_536


@pytest.mark.parametrize("native, quant, dtype", [
    ("bf16", "F32", "f32"),  # --dtype float32 (--quant FP32): vllm_memory.csv's float32 row caches 4 B
    ("bf16", "BF16", "bf16"),
    ("bf16", "FP16", "f16"),  # --dtype float16
    ("bf16", "FP8", "bf16"),  # online FP8 weights: activations and cache stay in the model dtype
    ("fp8", "FP8", "bf16"),  # an FP8 checkpoint's cache is bf16 unless --kv-cache-dtype fp8
    ("fp16", "AWQ", "f16"),  # an fp16 release keeps fp16
    ("fp32", "AWQ", "bf16"),  # --dtype auto downcasts a float32 checkpoint (vllm/config/model.py)
])
def test_vllm_auto_kv_dtype_is_the_served_model_dtype(native, quant, dtype):
    spec = replace(LLAMA_3_1_8B, native_dtype=native)
    kv = kv_cache(spec, vllm(kv_dtype="auto", quant=quant))
    assert kv.kv_dtype == dtype
    assert kv.bytes_per_token == 2 * 8 * 128 * 32 * (4 if dtype == "f32" else 2)


def test_llama_cpp_pads_the_context_to_256():
    assert kv_cache(LLAMA_3_1_8B, Scenario(context=1000)).terms[0].cells == 1024


def test_tp_beyond_kv_heads_replicates_one_head_per_rank():
    assert kv_cache(QWEN3_235B_A22B, vllm(gpus=8)).bytes_per_token_per_rank == 48_128


@pytest.mark.parametrize("kv_dtype, engine", [("fp8", "llama.cpp"), ("q8_0", "vllm"), ("q3_k", "llama.cpp")])
def test_kv_dtype_the_engine_cannot_cache(kv_dtype, engine):
    with pytest.raises(SizingError, match="--kv-dtype"):
        kv_cache(LLAMA_3_1_8B, Scenario(engine=engine, kv_dtype=kv_dtype))


def test_tp_must_divide_kv_heads():
    with pytest.raises(SizingError, match="--gpus 3"):
        kv_cache(QWEN3_235B_A22B, vllm(gpus=3))


@pytest.mark.parametrize("field, value, option", [("context", -1, "--context"), ("context", 0, "--context"),
                                                   ("batch", 0, "--batch")])
def test_invalid_scenario(field, value, option):
    with pytest.raises(SizingError, match=option):
        kv_cache(LLAMA_3_1_8B, Scenario(**{field: value}))


# --- properties ---------------------------------------------------------------------------------------------

MODELS = [LLAMA_3_1_8B, GEMMA_3_27B, QWEN3_NEXT, GPT_OSS_120B, DEEPSEEK_V3, GLM_5]
ENGINES = st.sampled_from([("llama.cpp", "f16"), ("llama.cpp", "q8_0"), ("vllm", "bf16"), ("vllm", "fp8")])


@settings(max_examples=60, deadline=None)
@given(model=st.sampled_from(MODELS), engine=ENGINES, context=st.integers(1, 300_000),
       extra=st.integers(1, 50_000), batch=st.integers(1, 16))
def test_kv_grows_with_context_and_batch(model, engine, context, extra, batch):
    name, dtype = engine
    base = kv_cache(model, Scenario(engine=name, kv_dtype=dtype, context=context, batch=batch)).total_bytes
    assert kv_cache(model, Scenario(engine=name, kv_dtype=dtype, context=context + extra, batch=batch)).total_bytes >= base
    # >= only: llama.cpp pads n_ctx to 256 cells, so one more tiny sequence can fit in the padding.
    assert kv_cache(model, Scenario(engine=name, kv_dtype=dtype, context=context, batch=batch + 1)).total_bytes >= base
    assert kv_cache(model, Scenario(engine=name, kv_dtype=dtype, context=context + 256, batch=2 * batch)
                    ).total_bytes > base


@settings(max_examples=40, deadline=None)
@given(model=st.sampled_from([LLAMA_3_1_8B, QWEN3_235B_A22B, DEEPSEEK_V3, GEMMA_3_27B]), context=st.integers(1, 200_000),
       tp_pair=st.sampled_from([(1, 2), (2, 4), (4, 8), (1, 8), (8, 16)]))
def test_per_rank_kv_falls_or_stays_with_more_tp(model, context, tp_pair):
    low, high = tp_pair
    per_rank = [kv_cache(model, vllm(context=context, gpus=tp)).per_rank_bytes for tp in (low, high)]
    assert per_rank[1] <= per_rank[0]


@settings(max_examples=30, deadline=None)
@given(context=st.integers(-10**6, 0))
def test_non_positive_context_raises(context):
    with pytest.raises(SizingError):
        kv_cache(LLAMA_3_1_8B, Scenario(context=context))


@settings(max_examples=30, deadline=None)
@given(kv_dtype=st.text(min_size=1, max_size=8).filter(
    lambda s: s.lower() not in {"f32", "f16", "bf16", "q8_0", "q4_0", "fp16", "float16", "bfloat16", "float32"}))
def test_unknown_kv_dtype_raises(kv_dtype):
    with pytest.raises(SizingError, match="--kv-dtype"):
        kv_cache(LLAMA_3_1_8B, Scenario(kv_dtype=kv_dtype))


def test_model_without_shapes_uses_its_kv_proxy_and_says_so():
    estimated = ModelSpec(slug="llama-x", name="Llama X", architecture="llama", hidden_size=0, vocab_size=0,
                          layers=(), attention=None, confidence="estimated", kv_proxy=LLAMA_3_1_8B)
    kv = kv_cache(estimated, LLAMA_CPP)
    assert kv.bytes_per_token == 131_072
    assert any("estimated" in note for note in kv.notes)
    with pytest.raises(SizingError, match="no layer shapes"):
        kv_cache(ModelSpec(slug="x", name="x", architecture="x", hidden_size=0, vocab_size=0, layers=(),
                           attention=None), LLAMA_CPP)


def test_qwen3_5_27b_charges_only_its_16_full_attention_layers():
    # catalog/seed/models.json Qwen3.5-27B (ai-dynamo/aiconfigurator copy of its config.json): 64 layers, 1 full in 4,
    # full layers 4 KV heads × 256; 48 gated delta-net layers with 16 key heads and 48 value heads of 128, conv 4.
    # Full: 16 × 2 × 4 × 256 × 2 B = 65,536 B/token → 17,179,869,184 B at 262,144 tokens (16.00 GiB, the figure
    # unsloth/unsloth#4757 gives as correct against the 53.25 GB a formula charging all 64 layers gives).
    # Linear (llama.cpp, f32) per layer: conv (4 - 1) × (2 × 16 × 128 + 48 × 128) × 4 B = 122,880
    # + state 48 × 128 × 128 × 4 B = 3,145,728; × 48 layers = 156,893,184 B per sequence.
    from bench.seed_catalog import model
    kv = kv_cache(model("qwen3-5-27b"), Scenario(context=262_144))
    assert kv.total_bytes == 17_179_869_184 + 156_893_184


def test_gemma_4_26b_a4b_at_128k_is_three_gigabytes():
    # ollama/ollama#16958: Gemma 4 26B-A4B KV at 128K "56.37 GB" estimated, 3.00 GB correct.
    # Global: 5 layers × 2 KV heads × 512 × 2 (K and V both cached, k_eq_v shares only the projection) × 2 B
    # = 20,480 B/token × 131,072 = 2,684,354,560 B. Sliding (llama.cpp): pad256(1024 + 512) = 1,536 cells ×
    # 25 layers × 8 × 256 × 2 × 2 B = 314,572,800 B. Together 2,998,927,360 B = 3.00 GB.
    from bench.seed_catalog import model
    kv = kv_cache(model("gemma-4-26b-a4b-it"), Scenario(context=131_072))
    assert kv.total_bytes == 2_684_354_560 + 314_572_800


def test_vllm_keeps_nemotron_ssm_state_in_the_configs_float32():
    # vLLM NemotronHForCausalLMConfig sets mamba_ssm_cache_dtype from the config ("float32" in Nemotron 3 Super's,
    # also the default); the conv state stays in the model dtype (BF16). Per Mamba-2 layer and sequence:
    # conv (4 - 1) × (128 × 64 + 2 × 8 × 128) = 30,720 elements × 2 B = 61,440 B;
    # SSM 128 × 64 × 128 = 1,048,576 elements × 4 B = 4,194,304 B; × 40 Mamba layers = 170,229,760 B.
    from bench.seed_catalog import model
    spec = model("nemotron-3-super-120b-a12b")
    assert spec.vllm_ssm_state_dtype == "float32"
    mamba = kv_cache(spec, vllm(context=8192)).term("mamba")
    assert mamba.bytes == 170_229_760
    half = replace(spec, vllm_ssm_state_dtype="bfloat16")
    assert kv_cache(half, vllm(context=8192)).term("mamba").bytes == (61_440 + 2 * 1_048_576) * 40


def test_vllm_keeps_qwen3_5_delta_state_in_its_mamba_ssm_dtype():
    # vLLM Qwen3_5ForConditionalGenerationConfig sets mamba_ssm_cache_dtype from the text config's mamba_ssm_dtype
    # ("float32" for Qwen3.5-27B); Qwen3-Next has no such hook (model dtype). Per delta-net layer and sequence:
    # conv (4 - 1) × (2 × 16 × 128 + 48 × 128) = 30,720 elements × 2 B; state 48 × 128 × 128 = 786,432 × 4 B;
    # × 48 layers = (61,440 + 3,145,728) × 48 = 153,944,064 B.
    from bench.seed_catalog import model
    spec = model("qwen3-5-27b")
    assert spec.vllm_ssm_state_dtype == "float32" and QWEN3_NEXT.vllm_ssm_state_dtype is None
    assert kv_cache(spec, vllm(context=8192)).term("linear").bytes == 153_944_064
    assert kv_cache(QWEN3_NEXT, vllm(context=32768, batch=2)).term("linear").bytes == 2 * 39_518_208


@pytest.mark.parametrize("model, per_layer, layers", [
    # DeepSeek-V3 MLA: (kv_lora_rank 512 + rope 64) × 2 B = 1,152 B per token and layer, the latent on every rank.
    (DEEPSEEK_V3, 1_152, 61),
    # Llama 3 70B: 8 KV heads over TP 8, one head per rank: 2 × 1 × 128 × 2 B = 512 B per token and layer.
    (LLAMA_3_70B, 512, 80),
])
def test_vllm_beyond_one_server_caches_each_stages_layers(model, per_layer, layers):
    """16 GPUs under vLLM are `--tensor-parallel-size 8 --pipeline-parallel-size 2` (one stage per 8-GPU server):
    each GPU caches its stage's half of the layers. Splitting every layer over all 16 replicated the MLA latent and
    the 8 KV heads twice: DeepSeek-V3 read 70,272 B/token/GPU (8.58 GiB at 8K in all) instead of 35,712 (4.29)."""
    context = 8192
    one_server = kv_cache(model, Scenario(engine="vllm", gpus=8, kv_dtype="auto", context=context, quant="BF16"))
    two = kv_cache(model, Scenario(engine="vllm", gpus=16, kv_dtype="auto", context=context, quant="BF16"))
    assert (two.tp, two.pp) == (8, 2)
    assert one_server.total_bytes == two.total_bytes == per_layer * layers * 8 * context  # every layer on 8 ranks
    assert one_server.per_rank_bytes == per_layer * layers * context
    assert two.per_rank_bytes == per_layer * -(-layers // 2) * context  # the fuller stage: 31 of DeepSeek's 61
    assert two.bytes_per_token_per_rank == per_layer * -(-layers // 2)


def test_vllm_counts_the_padded_slots_of_its_layer_groups():
    # vLLM's hybrid allocator groups Gemma 3 27B's layers 10 to a group (its 10 full-attention layers): the 52
    # sliding layers fill 6 groups = 60 slots, and a request holds sliding-window blocks in all of them.
    # bf16, one GPU, 8,192 tokens, max_num_batched_tokens 8,192: 2 × 16 kv heads × 128 × 2 B = 8,192 B/token/layer;
    # sliding cells (cdiv(min(1,023 + 8,192, 8,192), 16) + 1) × 16 = 8,208; padding 8 slots × 8,192 × 8,208
    # = 537,919,488 B. All together (10 × 8,192 + 60 × 8,208) × 8,192 B = 4,705,484,800 B = 3,590 blocks × 16 tokens
    # × 8,192 B × 10 layers, what one request takes of the pool (runtime.VllmKvCapacity.request_bytes).
    from reports.sizing.runtime import vllm_kv_capacity

    kv = kv_cache(GEMMA_3_27B, vllm(context=8192), max_num_batched_tokens=8192)
    padding = kv.term("group_padding")
    assert (padding.layers, padding.cells, padding.bytes) == (8, 8208, 537_919_488)
    assert kv.total_bytes == kv.per_rank_bytes == 4_705_484_800
    assert kv.bytes_per_token == 10 * 8192 and kv.windowed_bytes_per_token == 52 * 8192  # padding is never read
    capacity = vllm_kv_capacity(kv, 20 * 2**30, max_model_len=8192, max_num_batched_tokens=8192)
    assert (capacity.group_size, capacity.num_groups) == (10, 7)  # the groups do not count the padding twice
    assert capacity.request_bytes == kv.per_rank_bytes
    # Gemma 3 4B: 5 full, 29 sliding → 6 groups of 5 = 30 slots, 1 padded: 2 × 4 × 256 × 2 B × 8,208 = 33,619,968 B.
    from bench.model_specs import GEMMA_3_4B
    small = kv_cache(GEMMA_3_4B, vllm(context=8192), max_num_batched_tokens=8192)
    assert (small.term("group_padding").layers, small.term("group_padding").bytes) == (1, 33_619_968)
    # llama.cpp keeps no groups; a uniform vLLM model has one group of every layer.
    assert kv_cache(GEMMA_3_27B, Scenario(context=8192)).term("group_padding") is None
    assert kv_cache(LLAMA_3_1_8B, vllm(context=8192)).term("group_padding") is None


@pytest.mark.parametrize("changes", [
    {}, {"quant": "Q8_0"}, {"quant": "BF16", "engine": "vllm", "kv_dtype": "auto"},
    {"quant": "FP16", "engine": "vllm", "kv_dtype": "auto"},
    {"gpus": 4}, {"offload_pct": 30.0}, {"depth": 4096, "prompt": 512}, {"gpu_memory_utilization": 0.8},
    {"max_num_seqs": 8}, {"max_num_batched_tokens": 4096, "engine": "vllm", "kv_dtype": "fp8"},
    {"system_ram_bandwidth_gbs": 90.0}, {"context": 131072, "batch": 4}, {"kv_dtype": "q8_0"},
    {"flash_attention": False}, {"n_ubatch": 2048}, {"swa_full": True},
])
def test_kv_cache_is_memoized_on_the_fields_it_reads(changes):
    """kv_cache keeps one breakdown per model and the values of the fields it reads: looked up after every other
    case was cached, it equals the breakdown computed from the whole scenario (the unmemoized _kv_cache), on a
    sliding-window model, a MoE, a hybrid delta-net model and DeepSeek-V4, with and without the vLLM arguments."""
    from bench import seed_catalog
    from bench.model_specs import GEMMA_3_27B, QWEN3_30B_A3B
    from reports.sizing.kv_cache import _kv_cache
    from reports.sizing.specs import scenario_with

    specs = (GEMMA_3_27B, QWEN3_30B_A3B, seed_catalog.model("qwen3-5-27b"), seed_catalog.model("deepseek-v4-flash"))
    cases = [(spec, scenario_with(Scenario(context=32768), **changes), extra)
             for spec in specs for extra in ({}, {"tp": 2, "max_num_batched_tokens": 2048})]
    for spec, scenario, extra in cases:
        kv_cache(spec, scenario, **extra)
    for spec, scenario, extra in reversed(cases):
        memoized = kv_cache(spec, scenario, **extra)
        assert memoized == _kv_cache(spec, scenario, **extra), (spec.name, extra)
        assert [t.inputs for t in memoized.terms] == [t.inputs for t in _kv_cache(spec, scenario, **extra).terms]
