"""Parameter counts from shapes against hand derivations and the publishers' totals.

Specs are written by hand from /work/shared/data/models.json (config.json values), independent of the config
parser and of bench/model_specs.py.
"""

import pytest

from reports.sizing.errors import SizingError
from reports.sizing.parameters import count_parameters, tensor_inventory
from reports.sizing.specs import (
    AttentionShape,
    ConvShape,
    LayerSpec,
    LinearAttentionShape,
    MambaShape,
    MlaShape,
    ModelSpec,
    MoeShape,
)


def layers(n, mixer="full", ffn="dense", first_dense=0):
    return tuple(LayerSpec(mixer, "dense" if i < first_dense else ffn) for i in range(n))


# Llama-3.1-8B config.json (LLM-Prof copy): 32 layers, 4096 hidden, 14336 FFN, 32/8 heads, vocab 128256, untied.
LLAMA_8B = ModelSpec(
    slug="llama-3.1-8b",
    name="Llama-3.1-8B",
    architecture="llama",
    hidden_size=4096,
    vocab_size=128256,
    layers=layers(32),
    attention=AttentionShape(32, 8, 128),
    intermediate_size=14336,
)
# Qwen3-30B-A3B config.json (InferSim): 48 MoE layers, 2048 hidden, 32/4 heads × 128, 128 experts top-8 × 768.
QWEN3_30B = ModelSpec(
    slug="qwen3-30b-a3b",
    name="Qwen3-30B-A3B",
    architecture="qwen3_moe",
    hidden_size=2048,
    vocab_size=151936,
    layers=layers(48, ffn="moe"),
    attention=AttentionShape(32, 4, 128),
    moe=MoeShape(num_experts=128, experts_per_token=8, expert_intermediate_size=768),
)
# Qwen3-235B-A22B config.json (InferSim): 94 MoE layers, 4096 hidden, 64/4 heads × 128, 128 experts top-8 × 1536.
QWEN3_235B = ModelSpec(
    slug="qwen3-235b-a22b",
    name="Qwen3-235B-A22B",
    architecture="qwen3_moe",
    hidden_size=4096,
    vocab_size=151936,
    layers=layers(94, ffn="moe"),
    attention=AttentionShape(64, 4, 128),
    moe=MoeShape(num_experts=128, experts_per_token=8, expert_intermediate_size=1536),
)
# DeepSeek-V3 config.json (InferSim, expert keys restored): 61 layers (3 dense × 18432), MLA, 256+1 experts × 2048.
DEEPSEEK_V3 = ModelSpec(
    slug="deepseek-v3",
    name="DeepSeek-V3",
    architecture="deepseek_v3",
    hidden_size=7168,
    vocab_size=129280,
    layers=layers(61, ffn="moe", first_dense=3),
    attention=None,
    intermediate_size=18432,
    mla=MlaShape(128, 1536, 512, 128, 64, 128),
    moe=MoeShape(256, 8, 2048, num_shared_experts=1),
    mtp_layers=1,
)
# GLM-4.7 config.json (= GLM-4.5 355B-A32B dims): 92 layers (3 dense × 12288), 96/8 heads × 128, qkv bias,
# 160+1 experts top-8 × 1536, vocab 151552, 1 MTP layer.
GLM_45 = ModelSpec(
    slug="glm-4.5",
    name="GLM-4.5",
    architecture="glm4_moe",
    hidden_size=5120,
    vocab_size=151552,
    layers=layers(92, ffn="moe", first_dense=3),
    attention=AttentionShape(96, 8, 128),
    intermediate_size=12288,
    moe=MoeShape(160, 8, 1536, num_shared_experts=1),
    mtp_layers=1,
    attention_bias=True,
)
# gpt-oss-120b (Megatron-Bridge docs + 20b config.json): 36 layers alternating sliding/full, 2880 hidden,
# 64/8 heads × 64, attention bias, 128 experts top-4 × 2880, vocab 201088.
GPT_OSS_120B = ModelSpec(
    slug="gpt-oss-120b",
    name="gpt-oss-120b",
    architecture="gpt_oss",
    hidden_size=2880,
    vocab_size=201088,
    layers=tuple(LayerSpec("sliding" if i % 2 == 0 else "full", "moe") for i in range(36)),
    attention=AttentionShape(64, 8, 64),
    moe=MoeShape(128, 4, 2880),
    attention_bias=True,
    sliding_window=128,
    native_dtype="mxfp4",
)
# Gemma 3 4B text config.json: 34 layers (5 sliding : 1 global), 2560 hidden, 10240 FFN, 8/4 heads × 256,
# vocab 262208, tied embeddings.
GEMMA3_4B = ModelSpec(
    slug="gemma-3-4b",
    name="Gemma 3 4B",
    architecture="gemma3_text",
    hidden_size=2560,
    vocab_size=262208,
    layers=tuple(LayerSpec("full" if (i + 1) % 6 == 0 else "sliding", "dense") for i in range(34)),
    attention=AttentionShape(8, 4, 256),
    intermediate_size=10240,
    tie_word_embeddings=True,
)


def within(value, published, tolerance=0.01):
    return abs(value - published) / published <= tolerance


def test_llama_3_1_8b_exact():
    # embeddings: 2 × 128256 × 4096 = 1,050,673,152 (untied)
    # per layer: q 4096² + k 4096×1024 + v 4096×1024 + o 4096² = 41,943,040; FFN 3 × 4096 × 14336 = 176,160,768;
    #            2 norms × 4096 = 8,192 → 218,112,000; plus output_norm 4,096
    count = count_parameters(LLAMA_8B)
    assert count.total == 1_050_673_152 + 32 * 218_112_000 + 4_096 == 8_030_261_248
    assert count.active == count.total
    assert within(count.total, 8.03e9)


def test_qwen3_30b_a3b_total_and_active():
    # embeddings 2 × 151936 × 2048 = 622,329,856
    # per layer: attention 2048×4096 + 2×2048×512 + 4096×2048 = 18,874,368; q/k norms 2×128; 2 norms × 2048;
    #            router 2048 × 128 = 262,144; experts 128 × 3 × 2048 × 768 = 603,979,776 → 623,120,640
    count = count_parameters(QWEN3_30B)
    assert count.total == 622_329_856 + 48 * 623_120_640 + 2_048
    # active: the 120 unused experts of 128 drop out: 48 × 603,979,776 × 120/128
    assert count.active == count.total - 48 * 603_979_776 * 120 // 128
    assert within(count.total, 30.5e9)
    # Qwen states "3.3B activated"; we count 3.353 B (embedding included, as Qwen does): 1.6 % above the rounded
    # figure, which is as close as a 2-significant-digit statement allows.
    assert within(count.active, 3.3e9, 0.02)


def test_qwen3_235b_a22b():
    count = count_parameters(QWEN3_235B)
    assert within(count.total, 235e9)
    assert within(count.active, 22e9)


def test_deepseek_v3_total_active_and_mtp():
    count = count_parameters(DEEPSEEK_V3)
    assert within(count.total, 671e9)
    # MLA attention per layer: q_a 7168×1536 + q_b 1536×128×192 + kv_a 7168×576 + k_b/v_b 512×128×(128+128)
    #   + o 128×128×7168 = 187,105,280, plus q_a_norm 1536 and kv_a_norm 512
    attention = [t for t in tensor_inventory(DEEPSEEK_V3) if t.layer == 0 and t.group == "attention"]
    assert sum(t.elements for t in attention) == 187_105_280
    # active: DeepSeek states "37B activated", two significant digits; we count 37.55 B with the embedding
    # table and 36.63 B without it: both round to 37 B, each ≈ 1.5 % / 1.0 % from the rounded figure.
    assert within(count.active, 37e9, 0.015)
    assert within(count.active_excluding_embedding, 37e9, 0.015)
    # The MTP layer (one MoE decoder layer + eh_proj 14336×7168 + 3 norms) is 11.61 B, kept out of total.
    # HF's 685 B also holds the MTP layer's copies of embed_tokens and shared_head.head (2 × 129280 × 7168).
    assert count.mtp == pytest.approx(11.61e9, rel=1e-3)
    assert within(count.total_with_mtp + 2 * 129_280 * 7_168, 685e9)


def test_glm_4_5():
    count = count_parameters(GLM_45)
    assert within(count.total, 355e9)  # 352.8 B without the MTP layer (−0.6 %), 356.8 B with it
    # GLM's "32B active" leaves out embedding and output head: 33.63 − 2 × 0.776 = 32.08 B
    assert within(count.active - count.embedding - count.output, 32e9)
    assert count.mtp == pytest.approx(3.988e9, rel=1e-3)


def test_gpt_oss_120b():
    count = count_parameters(GPT_OSS_120B)
    assert within(count.total, 116.83e9, 0.001)
    # OpenAI's model card: 5.13 B active, the embedding table not counted (the unembedding is)
    assert within(count.active_excluding_embedding, 5.13e9)


def test_gemma_3_4b_text_part():
    # Compared with llama.cpp's "model params = 3.88 B" for the text GGUF (no vision tower):
    # tied embedding 262208 × 2560 = 671,252,480; per layer q 2560×2048 + k,v 2560×1024 + o 2048×2560
    # = 15,728,640, FFN 3 × 2560 × 10240 = 78,643,200, q/k norms 2 × 256, 4 norms × 2560 → 94,382,592
    count = count_parameters(GEMMA3_4B)
    assert count.total == 671_252_480 + 34 * 94_382_592 + 2_560
    assert count.output == 0
    assert within(count.total, 3.88e9)


def test_inventory_names_follow_gguf():
    names = {t.name for t in tensor_inventory(DEEPSEEK_V3) if t.layer == 5}
    assert {
        "attn_q_a",
        "attn_q_b",
        "attn_kv_a_mqa",
        "attn_k_b",
        "attn_v_b",
        "attn_output",
        "ffn_gate_inp",
        "exp_probs_b",
        "ffn_gate_exps",
        "ffn_up_exps",
        "ffn_down_exps",
        "ffn_gate_shexp",
        "ffn_up_shexp",
        "ffn_down_shexp",
    } <= names
    first = {t.name for t in tensor_inventory(DEEPSEEK_V3) if t.layer == 0}
    assert {"ffn_gate", "ffn_up", "ffn_down"} <= first and "ffn_gate_exps" not in first
    mtp = [t for t in tensor_inventory(DEEPSEEK_V3) if t.is_mtp]
    assert {t.layer for t in mtp} == {61} and any(t.name == "nextn.eh_proj" for t in mtp)
    down = next(t for t in tensor_inventory(DEEPSEEK_V3) if t.name == "ffn_down_exps")
    assert down.shape == (2048, 7168, 256) and down.is_expert  # ggml order: row length first


def test_tied_embeddings_have_no_output_tensor():
    assert not any(t.name == "output" for t in tensor_inventory(GEMMA3_4B))
    assert any(t.name == "output" for t in tensor_inventory(LLAMA_8B))


def test_hybrid_mixers():
    # Qwen3-Next-like: 3 gated delta-net layers then 1 full; linear dims 16 key heads, 32 value heads × 128, conv 4.
    spec = ModelSpec(
        slug="hybrid",
        name="hybrid",
        architecture="qwen3_next",
        hidden_size=2048,
        vocab_size=1000,
        layers=(LayerSpec("linear", "dense"),) * 3 + (LayerSpec("full", "dense"),),
        attention=AttentionShape(16, 2, 256),
        intermediate_size=512,
        linear_attention=LinearAttentionShape(16, 32, 128, 128, 4),
    )
    linear = {t.name: t for t in tensor_inventory(spec) if t.layer == 0}
    # conv_dim = 2 × 16 × 128 + 32 × 128 = 8192
    assert linear["attn_qkv"].shape == (2048, 8192)
    assert linear["ssm_conv1d"].shape == (4, 8192) and not linear["ssm_conv1d"].quantizable
    assert linear["ssm_out"].shape == (4096, 2048)
    full = {t.name: t for t in tensor_inventory(spec) if t.layer == 3}
    assert full["attn_q"].shape == (2048, 2 * 16 * 256)  # q and its output gate


def test_mamba_and_conv_mixers():
    # Mamba-2: 8 heads × 64 = d_inner 512, state 128, 1 group, kernel 4: in_proj 2×512 + 2×128 + 8 = 1288 wide
    mamba = ModelSpec(
        slug="m",
        name="m",
        architecture="nemotron_h",
        hidden_size=256,
        vocab_size=100,
        layers=(LayerSpec("mamba", "none"), LayerSpec("none", "dense")),
        attention=None,
        intermediate_size=512,
        mamba=MambaShape(8, 64, 128, 1, 4),
        ffn_gated=False,
    )
    tensors = {(t.layer, t.name): t for t in tensor_inventory(mamba)}
    assert tensors[(0, "ssm_in")].shape == (256, 1288)
    assert tensors[(0, "ssm_conv1d")].shape == (4, 768)
    assert (1, "ffn_gate") not in tensors and tensors[(1, "ffn_up")].shape == (256, 512)  # squared-ReLU MLP
    conv = ModelSpec(
        slug="c",
        name="c",
        architecture="lfm2",
        hidden_size=256,
        vocab_size=100,
        layers=(LayerSpec("conv", "dense"),),
        attention=None,
        intermediate_size=512,
        conv=ConvShape(3),
        tie_word_embeddings=True,
    )
    names = {t.name: t for t in tensor_inventory(conv)}
    assert names["shortconv.in_proj"].shape == (256, 768) and names["shortconv.conv"].shape == (3, 256)


def test_spec_without_shapes_returns_stated_counts_flagged():
    spec = ModelSpec(
        slug="x",
        name="x",
        architecture="unknown",
        hidden_size=0,
        vocab_size=0,
        layers=(),
        attention=None,
        stated_params_total=100e9,
        stated_params_active=10e9,
        confidence="estimated",
    )
    count = count_parameters(spec)
    assert (count.total, count.active, count.estimated) == (100e9, 10e9, True)
    with pytest.raises(SizingError, match="no layer shapes"):
        tensor_inventory(spec)


def test_missing_shapes_raise_clear_errors():
    spec = ModelSpec(
        slug="bad",
        name="bad",
        architecture="llama",
        hidden_size=64,
        vocab_size=10,
        layers=(LayerSpec("full", "moe"),),
        attention=AttentionShape(2, 1, 32),
    )
    with pytest.raises(SizingError, match="no moe shape"):
        count_parameters(spec)
