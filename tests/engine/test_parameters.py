"""Parameter counts from shapes against hand derivations and the publishers' totals.

The published models' specs are the hand-written ones of bench/model_specs.py (config.json values from
/work/shared/data/models.json, each with its source), independent of the config parser.
"""

import pytest

from bench.model_specs import (
    DEEPSEEK_V3,
    GEMMA_3_4B,
    GLM_4_5,
    GPT_OSS_120B,
    LLAMA_3_1_8B,
    QWEN3_30B_A3B,
    QWEN3_235B_A22B,
)
from reports.sizing.errors import SizingError
from reports.sizing.parameters import count_parameters, tensor_inventory
from reports.sizing.specs import (
    AttentionShape,
    ConvShape,
    LayerSpec,
    LinearAttentionShape,
    MambaShape,
    ModelSpec,
)
from tests.engine.specs import stated_parameters_only


def within(value, published, tolerance=0.01):
    return abs(value - published) / published <= tolerance


def test_llama_3_1_8b_exact():
    # embeddings: 2 × 128256 × 4096 = 1,050,673,152 (untied)
    # per layer: q 4096² + k 4096×1024 + v 4096×1024 + o 4096² = 41,943,040; FFN 3 × 4096 × 14336 = 176,160,768;
    #            2 norms × 4096 = 8,192 → 218,112,000; plus output_norm 4,096
    count = count_parameters(LLAMA_3_1_8B)
    assert count.total == 1_050_673_152 + 32 * 218_112_000 + 4_096 == 8_030_261_248
    assert count.active == count.total
    assert within(count.total, 8.03e9)


def test_qwen3_30b_a3b_total_and_active():
    # embeddings 2 × 151936 × 2048 = 622,329,856
    # per layer: attention 2048×4096 + 2×2048×512 + 4096×2048 = 18,874,368; q/k norms 2×128; 2 norms × 2048;
    #            router 2048 × 128 = 262,144; experts 128 × 3 × 2048 × 768 = 603,979,776 → 623,120,640
    count = count_parameters(QWEN3_30B_A3B)
    assert count.total == 622_329_856 + 48 * 623_120_640 + 2_048
    # active: the 120 unused experts of 128 drop out: 48 × 603,979,776 × 120/128
    assert count.active == count.total - 48 * 603_979_776 * 120 // 128
    assert within(count.total, 30.5e9)
    # Qwen states "3.3B activated"; we count 3.353 B (embedding included, as Qwen does): 1.6 % above the rounded
    # figure, which is as close as a 2-significant-digit statement allows.
    assert within(count.active, 3.3e9, 0.02)


def test_qwen3_235b_a22b():
    count = count_parameters(QWEN3_235B_A22B)
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
    count = count_parameters(GLM_4_5)
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
    count = count_parameters(GEMMA_3_4B)
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
    assert not any(t.name == "output" for t in tensor_inventory(GEMMA_3_4B))
    assert any(t.name == "output" for t in tensor_inventory(LLAMA_3_1_8B))


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
    spec = stated_parameters_only(total=100e9, active=10e9)
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
