"""Weight bytes per format: block sizes, llama-quantize per-tensor rules, native formats, accuracy vs real files."""

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.accuracy import weights_section
from bench.model_specs import DEEPSEEK_V3, GLM_5, GPT_OSS_20B, LLAMA_3_1_8B, QWEN3_30B_A3B
from reports.sizing.errors import SizingError
from reports.sizing.parameters import count_parameters
from reports.sizing.quant import GGML_TYPES, QUANT_FORMATS, quant_format
from reports.sizing.specs import AttentionShape, LayerSpec, ModelSpec, MoeShape
from reports.sizing.weights import GGUF_HEADER_BYTES_PER_VOCAB_ENTRY, layer_bytes, sized_tensors, weight_bytes
from tests.engine.specs import stated_parameters_only

GIB = 2**30

# A tiny dense model whose bytes can be derived by hand: hidden 256, 1 layer, 2 heads × 128, 1 KV head,
# FFN 512, vocab 1000, untied.
TINY = ModelSpec(
    slug="tiny",
    name="tiny",
    architecture="llama",
    hidden_size=256,
    vocab_size=1000,
    layers=(LayerSpec("full", "dense"),),
    attention=AttentionShape(2, 1, 128),
    intermediate_size=512,
)
# Matrices of TINY (n_in, n_out): q 256×256, k 256×128, v 256×128, o 256×256, gate/up 256×512, down 512×256,
# token_embd and output 256×1000; norms 3 × 256.
TINY_MATRIX_PARAMS = 65_536 + 32_768 + 32_768 + 65_536 + 2 * 131_072 + 131_072
TINY_PARAMS = TINY_MATRIX_PARAMS + 2 * 256_000 + 768


@pytest.mark.parametrize(
    "name, bpw",
    [
        ("q4_K", 4.5),
        ("q6_K", 6.5625),
        ("q8_0", 8.5),
        ("q2_K", 2.625),
        ("iq4_xs", 4.25),
        ("iq1_s", 1.5625),
        ("mxfp4", 4.25),
        ("q3_K", 3.4375),
        ("iq2_xxs", 2.0625),
        ("q5_K", 5.5),
    ],
)
def test_block_bits_per_weight(name, bpw):
    # ggml-common.h: e.g. block_q4_K = 2 halves + 12 scale bytes + 128 quant bytes = 144 B per 256 weights
    assert GGML_TYPES[name].bits_per_weight == bpw


def test_every_llama_quantize_file_type_is_known():
    for name in [
        "Q2_K",
        "Q2_K_S",
        "Q3_K_S",
        "Q3_K_M",
        "Q3_K_L",
        "Q4_0",
        "Q4_1",
        "Q4_K_S",
        "Q4_K_M",
        "Q5_0",
        "Q5_1",
        "Q5_K_S",
        "Q5_K_M",
        "Q6_K",
        "Q8_0",
        "IQ1_S",
        "IQ1_M",
        "IQ2_XXS",
        "IQ2_XS",
        "IQ2_S",
        "IQ2_M",
        "IQ3_XXS",
        "IQ3_XS",
        "IQ3_S",
        "IQ3_M",
        "IQ4_NL",
        "IQ4_XS",
        "F16",
        "BF16",
        "MXFP4",
        "MXFP4_MOE",
        "FP8",
        "FP16",
        "AWQ",
        "GPTQ",
        "UD-Q4_K_XL",
    ]:
        fmt = quant_format(name)
        assert fmt.quality and fmt.bits_per_weight > 0
    assert quant_format("q4_k_m").name == "Q4_K_M"


def test_unknown_quant_names_the_option():
    with pytest.raises(SizingError, match="--quant 'Q9_K'"):
        weight_bytes(TINY, "Q9_K")


def test_llama_3_1_8b_q4_k_m_tensor_by_tensor():
    # Q4_K_M (llama-quant.cpp): output → Q6_K; attn_v and ffn_down → Q6_K where use_more_bits(i, 32):
    # i < 4, i >= 28, or (i - 4) % 3 == 2 → 16 of 32 layers; everything else Q4_K; norms F32.
    q4k_row = 4096 // 256 * 144  # 2,304 B per 4096-wide row
    q6k_row = 4096 // 256 * 210  # 3,360 B
    q4k_down, q6k_down = 14336 // 256 * 144, 14336 // 256 * 210  # ffn_down rows are 14336 wide
    expected = (
        128256 * q4k_row
        + 128256 * q6k_row  # token_embd Q4_K, output Q6_K
        + 32 * (4096 * q4k_row + 1024 * q4k_row + 4096 * q4k_row + 2 * 14336 * q4k_row)  # q, k, o, gate, up
        + 16 * (1024 * q6k_row + 4096 * q6k_down)
        + 16 * (1024 * q4k_row + 4096 * q4k_down)  # v, down
        + 65 * 4096 * 4
    )  # 65 norms in F32
    breakdown = weight_bytes(LLAMA_3_1_8B, "Q4_K_M")
    assert breakdown.total_bytes == expected
    assert breakdown.effective_bpw == pytest.approx(4.8944, abs=1e-4)  # quantize README table: 4.8944
    assert breakdown.source == "per-tensor rule"
    assert breakdown.output_bytes == 128256 * q6k_row


def test_row_length_not_multiple_of_256_falls_back():
    # gpt-oss hidden 2880 = 11.25 × 256: Q4_K → Q5_0 (tensor_type_fallback); 2880 / 32 × 22 = 1,980 B per row
    sized = {(s.tensor.layer, s.tensor.name): s for s in sized_tensors(GPT_OSS_20B, "Q4_K_M")}
    attn_q = sized[(0, "attn_q")]
    assert attn_q.storage == "q5_0" and attn_q.nbytes == 4096 * 1980  # 64 heads × 64 = 4096 rows
    assert sized[(None, "output")].storage == "q8_0"  # Q6_K → Q8_0 fallback
    assert sized[(0, "ffn_down_exps")].storage == "mxfp4"
    q4 = weight_bytes(GPT_OSS_20B, "Q4_K_M")
    q2 = weight_bytes(GPT_OSS_20B, "Q2_K")
    # experts stay MXFP4 whatever the file type: 24 layers × 32 experts × 3 × 2880 × 2880 × 17/32 B
    experts = 24 * 32 * 3 * 2880 * (2880 // 32 * 17) + 24 * 32 * (2 * 2880 + 2880) * 4  # + F32 expert biases
    assert q4.routed_expert_bytes == q2.routed_expert_bytes == experts
    layers = layer_bytes(GPT_OSS_20B, "Q4_K_M")
    assert layers[0].layer is None and layers[1].layer == 0
    assert sum(layer.expert_bytes for layer in layers) == experts


def test_tied_embedding_gets_output_type():
    tied = replace(TINY, architecture="gemma3_text", tie_word_embeddings=True)
    # llama-quant.cpp: with no output.weight, token_embd is quantized like the output (Q4_0 file → Q6_K)
    assert weight_bytes(tied, "Q4_0").embedding_bytes == 1000 * 210


def test_mxfp4_moe_file_type():
    # ggml-org gpt-oss-20b GGUF (llama-quantize MXFP4_MOE): 11.27 GiB published
    assert weight_bytes(GPT_OSS_20B, "MXFP4_MOE").total_bytes / GIB == pytest.approx(11.27, rel=0.002)


def test_native_bf16_fp8_awq_on_tiny_model():
    bf16 = weight_bytes(TINY, "BF16")
    assert bf16.total_bytes == 2 * TINY_PARAMS and bf16.file_bytes == bf16.total_bytes
    # FP8: matrices 1 B/weight + an fp32 scale per 128×128 block; q 2×2, k 2×1, v 2×1, o 2×2, gate/up 2×4 each,
    # down 4×2 = 4+2+2+4+8+8+8 = 36 blocks; embeddings, output and norms BF16.
    fp8 = weight_bytes(TINY, "FP8")
    assert fp8.total_bytes == TINY_MATRIX_PARAMS + 36 * 4 + 2 * (2 * 256_000 + 768)
    # AWQ: 0.5 B/weight + 2.5 B per (128-input group × output column): q 2×256, k 2×128, v 2×128, o 2×256,
    # gate/up 2×512 each, down 4×256 = 512+256+256+512+1024+1024+1024 = 4,608 groups
    awq = weight_bytes(TINY, "AWQ")
    assert awq.total_bytes == 0.5 * TINY_MATRIX_PARAMS + 2.5 * 4608 + 2 * (2 * 256_000 + 768)


def test_fp8_deepseek_keeps_embeddings_bf16():
    fp8 = weight_bytes(DEEPSEEK_V3, "FP8")
    assert fp8.embedding_bytes == 2 * 129280 * 7168 and fp8.output_bytes == 2 * 129280 * 7168
    # ~671 B weights at 1 B + scales: 632–700 GB
    assert 6.3e11 < fp8.total_bytes < 7.0e11


def test_native_mxfp4_needs_experts():
    with pytest.raises(SizingError, match="--quant MXFP4"):
        weight_bytes(TINY, "MXFP4")


def test_active_bytes_per_token_moe():
    w = weight_bytes(QWEN3_30B_A3B, "Q8_0")
    embd_row = w.embedding_bytes / 151936  # one row of token_embd per token
    expected = (
        (w.total_bytes - w.routed_expert_bytes - w.embedding_bytes)
        + w.routed_expert_bytes * 8 / 128
        + embd_row
    )
    assert w.active_bytes_per_token == pytest.approx(expected)
    assert w.active_bytes_per_token < 0.15 * w.total_bytes


def test_mtp_is_optional():
    without = weight_bytes(DEEPSEEK_V3, "Q4_K_M")
    with_mtp = weight_bytes(DEEPSEEK_V3, "Q4_K_M", include_mtp=True)
    assert without.mtp_bytes == 0 and with_mtp.mtp_bytes > 0
    # Counting the MTP block shifts llama-quantize's layer counters (n_layer_all 61 → 62), so the main layers'
    # mix changes slightly; the main-model bytes stay within 0.5 %.
    assert with_mtp.total_bytes - with_mtp.mtp_bytes == pytest.approx(without.total_bytes, rel=5e-3)


def test_published_size_wins_and_says_so():
    published = 1.0e9
    w = weight_bytes(LLAMA_3_1_8B, "UD-Q4_K_XL", published_bytes=published)
    assert w.source == "published file size"
    assert w.file_bytes == published
    assert w.total_bytes == published - GGUF_HEADER_BYTES_PER_VOCAB_ENTRY * 128256
    parts = (
        w.embedding_bytes
        + w.output_bytes
        + w.attention_bytes
        + w.dense_ffn_bytes
        + w.routed_expert_bytes
        + w.shared_expert_bytes
        + w.other_bytes
    )
    assert parts == pytest.approx(w.total_bytes)


def test_dynamic_quant_without_size_uses_nearest_rule():
    w = weight_bytes(LLAMA_3_1_8B, "UD-Q4_K_XL")
    assert w.rule_from == "Q4_K_M"
    assert w.total_bytes == weight_bytes(LLAMA_3_1_8B, "Q4_K_M").total_bytes


def test_estimated_model_uses_stated_parameters():
    spec = stated_parameters_only(total=100e9, active=10e9)
    w = weight_bytes(spec, "Q8_0")
    assert w.source == "stated parameters × format bpw (estimated)"
    assert w.total_bytes == 100e9 * QUANT_FORMATS["Q8_0"].bits_per_weight / 8
    assert w.active_bytes_per_token == 10e9 * QUANT_FORMATS["Q8_0"].bits_per_weight / 8


ORDERED_BY_BITS = ["IQ1_S", "IQ2_XXS", "Q2_K", "Q3_K_M", "Q4_K_M", "Q5_K_M", "Q6_K", "Q8_0", "F16"]


@settings(max_examples=40, deadline=None)
@given(
    hidden_blocks=st.integers(1, 12),
    layers=st.integers(1, 12),
    kv_heads=st.sampled_from([1, 2, 4]),
    ffn_mult=st.integers(2, 6),
    moe=st.booleans(),
)
def test_weights_fall_with_fewer_bits(hidden_blocks, layers, kv_heads, ffn_mult, moe):
    hidden = 256 * hidden_blocks
    spec = ModelSpec(
        slug="h",
        name="h",
        architecture="llama",
        hidden_size=hidden,
        vocab_size=4096,
        layers=tuple(LayerSpec("full", "moe" if moe else "dense") for _ in range(layers)),
        attention=AttentionShape(4 * kv_heads, kv_heads, 64),
        intermediate_size=ffn_mult * hidden,
        moe=MoeShape(8, 2, hidden) if moe else None,
    )
    sizes = [weight_bytes(spec, quant).total_bytes for quant in ORDERED_BY_BITS]
    assert sizes == sorted(sizes)


def test_accuracy_against_published_gguf_sizes():
    # The same comparison bench/accuracy.py prints: regression guard on the per-tensor rules.
    checks, summary = weights_section()
    assert summary.count >= 90
    assert summary.median_abs_error_pct <= 1.0
    assert summary.max_abs_error_pct <= 4.0
    assert all(check.note for check in checks if check.error_pct is None)  # every exclusion says why


def test_spec_published_sizes_used_for_dynamic_quants_only():
    spec = replace(LLAMA_3_1_8B, published_sizes=(("UD-Q4_K_XL", 5_000_000_000), ("Q4_K_M", 1)))
    dynamic = weight_bytes(spec, "UD-Q4_K_XL")
    assert dynamic.source == "published file size" and dynamic.file_bytes == 5_000_000_000
    # a standard file type is predicted by the rules even when a listing exists
    assert weight_bytes(spec, "Q4_K_M").source == "per-tensor rule"


def test_dsa_indexer_is_counted():
    # GLM-5 indexer per layer: wq_b 2048 × 32 × 128 + wk 6144 × 128 + weights_proj 6144 × 32 + k_norm 2 × 128
    per_layer = 2048 * 4096 + 6144 * 128 + 6144 * 32 + 256
    without = count_parameters(replace(GLM_5, dsa_indexer=None))
    assert count_parameters(GLM_5).total - without.total == 78 * per_layer
