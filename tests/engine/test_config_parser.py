"""config.json → ModelSpec, one test per family from real configs, plus hostile input.

Every config below is copied (architecture keys only) from a real config.json or documentation record; the
source of each is named above it. Expected values are derived by hand in the comments.
"""

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reports.sizing.config_parser import parse_config
from reports.sizing.errors import ConfigError
from reports.sizing.parameters import count_parameters
from reports.sizing.specs import AttentionShape, DsaIndexerShape, LinearAttentionShape, MambaShape, MlaShape, ModelSpec, MoeShape


def mixer_counts(spec):
    counts = {}
    for layer in spec.layers:
        counts[(layer.mixer, layer.ffn)] = counts.get((layer.mixer, layer.ffn), 0) + 1
    return counts


# github:citsjtu2020/LLM-Prof@8434c8d sglang/Model_Config.md "Llama-3.1-8B" (verbatim HF config.json)
LLAMA_31_8B = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_hidden_layers": 32, "hidden_size": 4096,
    "intermediate_size": 14336, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256,
    "tie_word_embeddings": False, "max_position_embeddings": 131072, "rope_theta": 500000.0,
    "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                     "original_max_position_embeddings": 8192, "rope_type": "llama3"},
    "torch_dtype": "bfloat16", "attention_bias": False,
}


def test_llama_dense_gqa_head_dim_from_hidden():
    spec = parse_config(LLAMA_31_8B, slug="llama-3-1-8b", name="Llama 3.1 8B")
    # no head_dim key: 4096 / 32 heads = 128
    assert spec.attention == AttentionShape(num_heads=32, num_kv_heads=8, head_dim=128)
    assert mixer_counts(spec) == {("full", "dense"): 32}
    assert (spec.hidden_size, spec.intermediate_size, spec.vocab_size) == (4096, 14336, 128256)
    assert (spec.max_context, spec.native_dtype, spec.tie_word_embeddings) == (131072, "bf16", False)
    assert (spec.slug, spec.name, spec.architecture, spec.moe, spec.mla) == ("llama-3-1-8b", "Llama 3.1 8B", "llama", None, None)
    assert spec.sliding_window is None


# https://huggingface.co/microsoft/phi-4/blob/refs%2Fpr%2F10/config.json
PHI_4 = {
    "architectures": ["Phi3ForCausalLM"], "model_type": "phi3", "num_hidden_layers": 40, "hidden_size": 5120,
    "intermediate_size": 17920, "num_attention_heads": 40, "num_key_value_heads": 10, "vocab_size": 100352,
    "tie_word_embeddings": False, "max_position_embeddings": 16384, "rope_theta": 250000, "sliding_window": None,
    "torch_dtype": "bfloat16",
}


def test_phi4_null_sliding_window_is_full_attention():
    spec = parse_config(PHI_4)
    # 5120 / 40 = 128; GQA 40:10
    assert spec.attention == AttentionShape(40, 10, 128)
    assert mixer_counts(spec) == {("full", "dense"): 40}


# https://huggingface.co/ai-team-20/qwen3-coder-480b-3/commit/6e6b0cb (config.json of Qwen/Qwen2.5-Coder-32B-Instruct)
QWEN25_CODER_32B = {
    "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "num_hidden_layers": 64, "hidden_size": 5120,
    "intermediate_size": 27648, "num_attention_heads": 40, "num_key_value_heads": 8, "vocab_size": 152064,
    "tie_word_embeddings": False, "max_position_embeddings": 32768, "rope_theta": 1000000.0,
    "sliding_window": 131072, "use_sliding_window": False, "max_window_layers": 64, "torch_dtype": "bfloat16",
}


def test_qwen2_ignores_sliding_window_when_disabled_and_has_qkv_bias():
    spec = parse_config(QWEN25_CODER_32B)
    assert mixer_counts(spec) == {("full", "dense"): 64}
    assert spec.sliding_window is None  # use_sliding_window false: the 131072 window applies to no layer
    assert spec.attention_bias is True  # Qwen2Attention always has q/k/v bias
    enabled = dict(QWEN25_CODER_32B, use_sliding_window=True, max_window_layers=60)
    # layers 60..63 slide (index >= max_window_layers)
    assert mixer_counts(parse_config(enabled)) == {("full", "dense"): 60, ("sliding", "dense"): 4}


# github:alibaba/InferSim@f2293da hf_configs/qwen3-30B-A3B_config.json
QWEN3_30B_A3B = {
    "architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "num_hidden_layers": 48, "hidden_size": 2048,
    "intermediate_size": 6144, "moe_intermediate_size": 768, "num_attention_heads": 32, "num_key_value_heads": 4,
    "head_dim": 128, "vocab_size": 151936, "tie_word_embeddings": False, "max_position_embeddings": 40960,
    "sliding_window": None, "use_sliding_window": False, "num_experts": 128, "num_experts_per_tok": 8,
    "torch_dtype": "bfloat16", "mlp_only_layers": [], "decoder_sparse_step": 1, "attention_bias": False,
}


def test_qwen3_moe_every_layer_sparse_and_mlp_only_layers():
    spec = parse_config(QWEN3_30B_A3B)
    # head_dim 128 explicit (32 × 128 = 4096 ≠ hidden 2048)
    assert spec.attention == AttentionShape(32, 4, 128)
    assert spec.moe == MoeShape(num_experts=128, experts_per_token=8, expert_intermediate_size=768)
    assert mixer_counts(spec) == {("full", "moe"): 48}
    assert spec.intermediate_size is None  # no dense layer
    # decoder_sparse_step 2: layer i is MoE when (i + 1) % 2 == 0 → 24 MoE; layer 0 listed dense anyway
    variant = dict(QWEN3_30B_A3B, decoder_sparse_step=2, mlp_only_layers=[1])
    # odd layers 1,3,..,47 are MoE (24) minus layer 1 → 23 MoE, 25 dense of 6144
    spec = parse_config(variant)
    assert mixer_counts(spec) == {("full", "moe"): 23, ("full", "dense"): 25}
    assert spec.intermediate_size == 6144


# https://huggingface.co/mistralai/Mixtral-8x7B-Instruct-v0.1/blob/eba9230/config.json
MIXTRAL_8X7B = {
    "architectures": ["MixtralForCausalLM"], "model_type": "mixtral", "num_hidden_layers": 32, "hidden_size": 4096,
    "intermediate_size": 14336, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": None,
    "vocab_size": 32000, "tie_word_embeddings": False, "max_position_embeddings": 32768, "rope_theta": 1000000.0,
    "sliding_window": None, "num_local_experts": 8, "num_experts_per_tok": 2, "torch_dtype": "bfloat16",
}


def test_mixtral_expert_width_is_intermediate_size():
    spec = parse_config(MIXTRAL_8X7B)
    assert spec.moe == MoeShape(num_experts=8, experts_per_token=2, expert_intermediate_size=14336)
    assert mixer_counts(spec) == {("full", "moe"): 32}
    assert spec.attention == AttentionShape(32, 8, 128)  # head_dim null → 4096 / 32


# github:alibaba/InferSim@f2293da hf_configs/deepseek_v3_config.json (expert keys under their official names)
DEEPSEEK_V3 = {
    "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "num_hidden_layers": 61,
    "hidden_size": 7168, "intermediate_size": 18432, "moe_intermediate_size": 2048, "num_attention_heads": 128,
    "num_key_value_heads": 128, "vocab_size": 129280, "tie_word_embeddings": False,
    "max_position_embeddings": 163840, "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_rope_head_dim": 64,
    "qk_nope_head_dim": 128, "v_head_dim": 128, "n_routed_experts": 256, "n_shared_experts": 1,
    "num_experts_per_tok": 8, "first_k_dense_replace": 3, "moe_layer_freq": 1, "num_nextn_predict_layers": 1,
    "torch_dtype": "bfloat16",
    "quantization_config": {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8",
                            "weight_block_size": [128, 128]},
}


def test_deepseek_v3_mla_moe_mtp_and_fp8():
    spec = parse_config(DEEPSEEK_V3)
    assert spec.attention is None
    assert spec.mla == MlaShape(num_heads=128, q_lora_rank=1536, kv_lora_rank=512, qk_nope_head_dim=128,
                                qk_rope_head_dim=64, v_head_dim=128)
    # first_k_dense_replace 3: layers 0-2 dense (18432), 3-60 MoE → 58
    assert mixer_counts(spec) == {("full", "dense"): 3, ("full", "moe"): 58}
    assert spec.moe == MoeShape(256, 8, 2048, num_shared_experts=1, shared_expert_intermediate_size=2048)
    assert (spec.intermediate_size, spec.mtp_layers, spec.native_dtype) == (18432, 1, "fp8")


# Kimi K2: model_type kimi_k2 with DeepSeek-V3 keys (data record "Kimi K2 (Instruct)", README + K2.5/K2.6 configs)
def test_kimi_k2_uses_deepseek_rules():
    config = dict(DEEPSEEK_V3, model_type="kimi_k2", num_attention_heads=64, num_key_value_heads=64,
                  n_routed_experts=384, first_k_dense_replace=1, vocab_size=163840)
    del config["quantization_config"]
    spec = parse_config(config)
    assert mixer_counts(spec) == {("full", "dense"): 1, ("full", "moe"): 60}
    assert spec.mla.num_heads == 64 and spec.moe.num_experts == 384 and spec.native_dtype == "bf16"


# https://huggingface.co/zai-org/GLM-5-FP8/blob/main/config.json (data record "GLM-5 (744B-A40B)")
GLM_5 = {
    "architectures": ["GlmMoeDsaForCausalLM"], "model_type": "glm_moe_dsa", "num_hidden_layers": 78,
    "hidden_size": 6144, "intermediate_size": 12288, "moe_intermediate_size": 2048, "num_attention_heads": 64,
    "num_key_value_heads": 64, "head_dim": 64, "vocab_size": 154880, "tie_word_embeddings": False,
    "max_position_embeddings": 202752, "q_lora_rank": 2048, "kv_lora_rank": 512, "qk_rope_head_dim": 64,
    "qk_nope_head_dim": 192, "qk_head_dim": 256, "v_head_dim": 256, "index_topk": 2048, "index_head_dim": 128,
    "index_n_heads": 32, "n_routed_experts": 256, "num_experts_per_tok": 8, "n_shared_experts": 1,
    "first_k_dense_replace": 3, "moe_layer_freq": 1, "num_nextn_predict_layers": 1, "attention_bias": False,
    "torch_dtype": "bfloat16",
}


def test_glm5_mla_with_dsa_indexer():
    spec = parse_config(GLM_5)
    assert spec.mla == MlaShape(64, 2048, 512, 192, 64, 256)
    assert spec.dsa_indexer == DsaIndexerShape(num_heads=32, head_dim=128, topk=2048)
    # 78 layers, first 3 dense → 75 MoE
    assert mixer_counts(spec) == {("full", "dense"): 3, ("full", "moe"): 75}
    assert spec.moe == MoeShape(256, 8, 2048, 1, 2048)
    assert spec.max_context == 202752


# https://huggingface.co/zai-org/GLM-4.7/blob/refs%2Fpr%2F49/config.json (same dims as GLM-4.5 355B-A32B)
GLM_47 = {
    "architectures": ["Glm4MoeForCausalLM"], "model_type": "glm4_moe", "num_hidden_layers": 92, "hidden_size": 5120,
    "intermediate_size": 12288, "moe_intermediate_size": 1536, "num_attention_heads": 96, "num_key_value_heads": 8,
    "head_dim": 128, "vocab_size": 151552, "tie_word_embeddings": False, "max_position_embeddings": 202752,
    "partial_rotary_factor": 0.5, "n_routed_experts": 160, "num_experts_per_tok": 8, "n_shared_experts": 1,
    "first_k_dense_replace": 3, "num_nextn_predict_layers": 1, "torch_dtype": "bfloat16", "attention_bias": True,
}


def test_glm4_moe_gqa_with_dense_prefix():
    spec = parse_config(GLM_47)
    # head_dim 128 explicit: 96 × 128 = 12288 ≠ hidden 5120
    assert spec.attention == AttentionShape(96, 8, 128)
    assert mixer_counts(spec) == {("full", "dense"): 3, ("full", "moe"): 89}
    assert spec.moe == MoeShape(160, 8, 1536, 1, 1536)
    assert (spec.mtp_layers, spec.attention_bias, spec.mla) == (1, True, None)


def test_glm45_documentation_record_without_model_type_uses_architectures():
    # Megatron-Bridge doc record for GLM-4.5: no model_type, architectures Glm4MoeForCausalLM
    config = {k: v for k, v in GLM_47.items() if k not in ("model_type", "attention_bias", "torch_dtype")}
    spec = parse_config(dict(config, max_position_embeddings=131072))
    assert spec.architecture == "glm4_moe"
    assert mixer_counts(spec) == {("full", "dense"): 3, ("full", "moe"): 89}


# github:EchoCog/gpt-oss-20b@52971a1 config.json (mirror; quantization_config restored to the official mxfp4)
GPT_OSS_20B = {
    "architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "num_hidden_layers": 24, "hidden_size": 2880,
    "intermediate_size": 2880, "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64,
    "vocab_size": 201088, "tie_word_embeddings": False, "max_position_embeddings": 131072, "sliding_window": 128,
    "num_local_experts": 32, "num_experts_per_tok": 4, "experts_per_token": 4, "attention_bias": True,
    "quantization_config": {"quant_method": "mxfp4"},
}


def test_gpt_oss_alternating_sliding_and_mxfp4():
    spec = parse_config(GPT_OSS_20B)
    # no layer_types: GptOssConfig default makes even (0-based) layers sliding → 12 sliding + 12 full
    assert mixer_counts(spec) == {("sliding", "moe"): 12, ("full", "moe"): 12}
    assert spec.layers[0].mixer == "sliding" and spec.layers[1].mixer == "full"
    assert (spec.sliding_window, spec.native_dtype) == (128, "mxfp4")
    assert spec.moe == MoeShape(32, 4, 2880)
    explicit = dict(GPT_OSS_20B, layer_types=["full_attention", "sliding_attention"] * 12)
    assert parse_config(explicit).layers[0].mixer == "full"


# https://huggingface.co/Creekside/gemma-3/blame/main/config.json (text-only extraction of gemma-3-4b)
GEMMA3_4B_TEXT = {
    "architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text", "num_hidden_layers": 34, "hidden_size": 2560,
    "intermediate_size": 10240, "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256,
    "vocab_size": 262208, "max_position_embeddings": 131072, "sliding_window": 1024, "sliding_window_pattern": 6,
    "torch_dtype": "bfloat16",
}


def test_gemma3_pattern_six_and_tied_default():
    spec = parse_config(GEMMA3_4B_TEXT)
    # layer i is global when (i + 1) % 6 == 0: layers 5, 11, 17, 23, 29 → 5 global, 29 sliding
    assert mixer_counts(spec) == {("sliding", "dense"): 29, ("full", "dense"): 5}
    assert (spec.sliding_window, spec.tie_word_embeddings, spec.architecture) == (1024, True, "gemma3")
    assert spec.attention == AttentionShape(8, 4, 256)


def test_gemma3_nested_text_config():
    # Gemma 3 27B (data record "Gemma 3 27B (text config, fixtures)"): multimodal wrapper, fields in text_config
    text = dict(GEMMA3_4B_TEXT, num_hidden_layers=62, hidden_size=5376, intermediate_size=21504,
                num_attention_heads=32, num_key_value_heads=16, head_dim=128, query_pre_attn_scalar=168)
    wrapper = {"architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3", "text_config": text,
               "vision_config": {"hidden_size": 1152}}
    spec = parse_config(wrapper)
    # 62 layers: globals at 5, 11, ..., 59 → 10 global, 52 sliding
    assert mixer_counts(spec) == {("sliding", "dense"): 52, ("full", "dense"): 10}
    assert (spec.hidden_size, spec.attention) == (5376, AttentionShape(32, 16, 128))


# Gemma 4 31B, data record "Gemma 4 31B (text config, fixtures)" (GEMMA4_31B_CONFIG test fixtures)
GEMMA4_31B = {
    "architectures": ["Gemma4ForConditionalGeneration"], "model_type": "gemma4",
    "text_config": {
        "model_type": "gemma4_text", "num_hidden_layers": 60, "hidden_size": 5376, "intermediate_size": 21504,
        "num_attention_heads": 32, "num_key_value_heads": 16, "head_dim": 256, "num_global_key_value_heads": 4,
        "global_head_dim": 512, "attention_k_eq_v": True, "vocab_size": 262144, "max_position_embeddings": 262144,
        "sliding_window": 1024, "tie_word_embeddings": True, "enable_moe_block": False, "num_kv_shared_layers": 0,
        "hidden_size_per_layer_input": 0,
        "layer_types": (["sliding_attention"] * 5 + ["full_attention"]) * 10,
    },
}


def test_gemma4_per_layer_type_kv_shapes():
    spec = parse_config(GEMMA4_31B)
    assert mixer_counts(spec) == {("sliding", "dense"): 50, ("full", "dense"): 10}
    assert spec.attention == AttentionShape(32, 4, 512, k_eq_v=True)  # global layers
    assert spec.sliding_attention == AttentionShape(32, 16, 256)
    assert spec.sliding_window == 1024


def test_gemma4_moe_block_keeps_the_dense_mlp_beside_the_experts():
    # Gemma 4 26B-A4B (catalog/seed/models.json, ai-dynamo/aiconfigurator copy): every layer has the dense MLP of
    # 2112 and 128 experts of 704, top-8 — sized as MoE layers with a 2112-wide shared expert. Per layer, by hand:
    # experts 128 × 2816 × 704 = 253,755,392 each for gate, up and down; MLP 2816 × 2112 = 5,947,392 each;
    # router 2816 × 128 = 360,448. Sliding layer: q 2816 × 16·256, k and v 2816 × 8·256; global layer (layer 5):
    # q 2816 × 16·512, k 2816 × 2·512 and no v (k_eq_v).
    from reports.sizing.parameters import count_parameters, tensor_inventory
    from bench.seed_catalog import model
    spec = model("gemma-4-26b-a4b-it")
    assert mixer_counts(spec) == {("sliding", "moe"): 25, ("full", "moe"): 5}
    assert spec.moe == MoeShape(128, 8, 704, 1, 2112) and spec.intermediate_size is None
    assert spec.attention == AttentionShape(16, 2, 512, k_eq_v=True)
    assert spec.sliding_attention == AttentionShape(16, 8, 256)
    sliding = {t.name: t.elements for t in tensor_inventory(spec) if t.layer == 0}
    assert sliding["ffn_gate_exps"] == sliding["ffn_up_exps"] == sliding["ffn_down_exps"] == 253_755_392
    assert sliding["ffn_gate_shexp"] == sliding["ffn_down_shexp"] == 5_947_392
    assert sliding["ffn_gate_inp"] == 360_448
    assert (sliding["attn_q"], sliding["attn_k"], sliding["attn_v"]) == (2816 * 4096, 2816 * 2048, 2816 * 2048)
    full = {t.name: t.elements for t in tensor_inventory(spec) if t.layer == 5}
    assert (full["attn_q"], full["attn_k"], "attn_v" in full) == (2816 * 8192, 2816 * 1024, False)
    # The name's 26 B total and 4 B active (the seed's stated figures) within 5 %: 25.23 B and 3.82 B.
    count = count_parameters(spec)
    assert abs(count.total / 26e9 - 1) < 0.05 and abs(count.active / 4e9 - 1) < 0.05
    dense = dict(GEMMA4_31B, text_config=dict(GEMMA4_31B["text_config"], enable_moe_block=True, num_experts=4,
                                                top_k_experts=2, moe_intermediate_size=64))
    assert parse_config(dense).moe == MoeShape(4, 2, 64, 1, 21504)


# Llama 4 Maverick: data record "Llama 4 Maverick 17B-128E Instruct (text_config)" (TensorRT-LLM test + GGUF metadata)
LLAMA4_MAVERICK = {
    "architectures": ["Llama4ForConditionalGeneration"], "model_type": "llama4",
    "text_config": {
        "model_type": "llama4_text", "num_hidden_layers": 48, "hidden_size": 5120, "intermediate_size": 8192,
        "intermediate_size_mlp": 16384, "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128,
        "vocab_size": 202048, "max_position_embeddings": 1048576, "num_local_experts": 128,
        "num_experts_per_tok": 1, "interleave_moe_layer_step": 2, "attention_chunk_size": 8192,
        "torch_dtype": "bfloat16",
    },
}


def test_llama4_interleaved_moe_and_chunked_attention():
    spec = parse_config(LLAMA4_MAVERICK)
    # MoE on odd layers (step 2) → 24 MoE + 24 dense; NoPE (global) every 4th layer (default interval 4) → 12
    # full, 36 chunked. Layer 3 (4th) is MoE and NoPE; layer 1 MoE and chunked.
    assert mixer_counts(spec) == {("chunked", "dense"): 24, ("chunked", "moe"): 12, ("full", "moe"): 12}
    assert spec.attention_chunk_size == 8192 and spec.intermediate_size == 16384
    assert spec.moe == MoeShape(128, 1, 8192, 1, 8192)


# github:alibaba/InferSim@f2293da hf_configs/qwen3-next-80B-A3B_config.json
QWEN3_NEXT = {
    "architectures": ["Qwen3NextForCausalLM"], "model_type": "qwen3_next", "num_hidden_layers": 48,
    "hidden_size": 2048, "intermediate_size": 5120, "moe_intermediate_size": 512,
    "shared_expert_intermediate_size": 512, "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 256,
    "vocab_size": 151936, "tie_word_embeddings": False, "max_position_embeddings": 262144, "num_experts": 512,
    "num_experts_per_tok": 10, "full_attention_interval": 4, "linear_num_key_heads": 16,
    "linear_num_value_heads": 32, "linear_key_head_dim": 128, "linear_value_head_dim": 128,
    "linear_conv_kernel_dim": 4, "torch_dtype": "bfloat16", "mlp_only_layers": [], "decoder_sparse_step": 1,
}


def test_qwen3_next_hybrid_linear_attention():
    spec = parse_config(QWEN3_NEXT)
    # full when (i + 1) % 4 == 0 → 12 full, 36 gated delta-net
    assert mixer_counts(spec) == {("linear", "moe"): 36, ("full", "moe"): 12}
    assert spec.layers[3].mixer == "full" and spec.layers[0].mixer == "linear"
    assert spec.linear_attention == LinearAttentionShape(16, 32, 128, 128, 4)
    assert spec.moe == MoeShape(512, 10, 512, 1, 512)
    assert spec.attention == AttentionShape(16, 2, 256)


def test_qwen35_nested_with_mtp():
    # github:alibaba/InferSim hf_configs/qwen3.5-35B-A3B_config.json: text fields under text_config
    text = {k: v for k, v in QWEN3_NEXT.items() if k not in ("architectures", "model_type", "torch_dtype")}
    text.update(num_hidden_layers=40, num_experts=256, num_experts_per_tok=8, vocab_size=248320,
                mtp_num_hidden_layers=1, dtype="bfloat16")
    spec = parse_config({"architectures": ["Qwen3_5MoeForConditionalGeneration"], "model_type": "qwen3_5_moe",
                         "text_config": text})
    assert mixer_counts(spec) == {("linear", "moe"): 30, ("full", "moe"): 10}
    assert (spec.mtp_layers, spec.architecture) == (1, "qwen3_5_moe")


# Nemotron 3 Nano 30B-A3B, data record "(config, fixture copy)" (verbatim config.json in a JAX test)
NEMOTRON_3_NANO = {
    "architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h", "num_hidden_layers": 52,
    "hidden_size": 2688, "intermediate_size": 1856, "moe_intermediate_size": 1856,
    "moe_shared_expert_intermediate_size": 3712, "num_attention_heads": 32, "num_key_value_heads": 2,
    "head_dim": 128, "vocab_size": 131072, "tie_word_embeddings": False, "max_position_embeddings": 262144,
    "n_routed_experts": 128, "n_shared_experts": 1, "num_experts_per_tok": 6, "mamba_num_heads": 64,
    "mamba_head_dim": 64, "ssm_state_size": 128, "n_groups": 8, "conv_kernel": 4, "mlp_hidden_act": "relu2",
    "hybrid_override_pattern": "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME",
    "torch_dtype": "bfloat16",
}


def test_nemotron_h_pattern_blocks():
    spec = parse_config(NEMOTRON_3_NANO)
    # 52 letters: 23 M, 23 E, 6 *
    assert mixer_counts(spec) == {("mamba", "none"): 23, ("none", "moe"): 23, ("full", "none"): 6}
    assert spec.mamba == MambaShape(num_heads=64, head_dim=64, state_size=128, n_groups=8, conv_kernel=4)
    assert spec.moe == MoeShape(128, 6, 1856, 1, 3712)
    assert spec.ffn_gated is False and spec.attention == AttentionShape(32, 2, 128)


def test_nemotron_h_pattern_must_match_layer_count():
    with pytest.raises(ConfigError, match="hybrid_override_pattern' has 51 blocks for 52 layers"):
        parse_config(dict(NEMOTRON_3_NANO, hybrid_override_pattern=NEMOTRON_3_NANO["hybrid_override_pattern"][:-1]))


def test_nemotron_latent_moe_runs_the_experts_in_the_latent():
    # Nemotron 3 Super (catalog/seed/models.json): 40 LatentMoE blocks of 512 experts, up 1024 → 2688 and down
    # 2688 → 1024 (relu², no gate), the latent projections 4096 ↔ 1024, the shared expert 4096 ↔ 5376, router
    # 4096 × 512. Per block: experts 512 × 2 × 1024 × 2688 = 2,818,572,288; latent 2 × 4096 × 1024 = 8,388,608;
    # shared 2 × 4096 × 5376 = 44,040,192; router 2,097,152.
    from reports.sizing.parameters import tensor_inventory
    from bench.seed_catalog import model
    spec = model("nemotron-3-super-120b-a12b")
    assert spec.moe == MoeShape(512, 22, 2688, 1, 5376, latent_size=1024)
    block = [t for t in tensor_inventory(spec) if t.layer == 1]  # "E" is the second letter of the pattern
    by_name = {t.name: t.elements for t in block}
    assert by_name["ffn_up_exps"] == by_name["ffn_down_exps"] == 512 * 1024 * 2688
    assert by_name["ffn_latent_down"] == by_name["ffn_latent_up"] == 4096 * 1024
    assert by_name["ffn_up_shexp"] == 4096 * 5376 and by_name["ffn_gate_inp"] == 4096 * 512
    assert "ffn_gate_exps" not in by_name
    count = count_parameters(spec)
    assert round(count.total / 1e9, 1) == 120.7 and round(count.active / 1e9, 1) == 12.8


def test_nemotron_blocks_from_layers_block_type_without_num_hidden_layers():
    # Nemotron 3 Ultra's config.json lists its 108 blocks in layers_block_type and has no num_hidden_layers.
    from bench.seed_catalog import model
    spec = model("nemotron-3-ultra-550b-a55b")
    assert spec.num_layers == 108 and mixer_counts(spec)[("full", "none")] == 12
    assert round(count_parameters(spec).total / 1e9, 1) == 549.3
    listed = dict(NEMOTRON_3_NANO, layers_block_type=["mamba", "moe", "attention"], num_hidden_layers=3)
    del listed["hybrid_override_pattern"]
    assert mixer_counts(parse_config(listed)) == {("mamba", "none"): 1, ("none", "moe"): 1, ("full", "none"): 1}
    with pytest.raises(ConfigError, match="'layers_block_type' has unknown block 'conv'"):
        parse_config(dict(listed, layers_block_type=["mamba", "conv", "attention"]))


# https://huggingface.co/Thorge-AI/lfm2-web-runtime-weights Models/350M/config.json (LiquidAI/LFM2-350M)
LFM2_350M = {
    "architectures": ["Lfm2ForCausalLM"], "model_type": "lfm2", "num_hidden_layers": 16, "hidden_size": 1024,
    "intermediate_size": 6656, "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 64,
    "vocab_size": 65536, "max_position_embeddings": 128000, "conv_L_cache": 3, "block_auto_adjust_ff_dim": True,
    "layer_types": ["conv", "conv", "full_attention", "conv", "conv", "full_attention", "conv", "conv",
                    "full_attention", "conv", "full_attention", "conv", "full_attention", "conv", "full_attention",
                    "conv"],
    "torch_dtype": "bfloat16",
}


def test_lfm2_conv_blocks_and_auto_adjusted_ffn():
    spec = parse_config(LFM2_350M)
    assert mixer_counts(spec) == {("conv", "dense"): 10, ("full", "dense"): 6}
    # int(2 × 6656 / 3) = 4437 → rounded up to a multiple of 256 = 4608
    assert spec.intermediate_size == 4608
    assert spec.conv.l_cache == 3 and spec.tie_word_embeddings is True
    assert parse_config(dict(LFM2_350M, block_auto_adjust_ff_dim=False)).intermediate_size == 6656


# github:tianyu1412/Hunyuan-A13B@df832eb models/config.json (per-layer lists as in the original)
HUNYUAN_A13B = {
    "architectures": ["HunYuanMoEV1ForCausalLM"], "model_type": "hunyuan", "num_hidden_layers": 32,
    "hidden_size": 4096, "intermediate_size": 3072, "moe_intermediate_size": [3072] * 32,
    "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 128167,
    "tie_word_embeddings": True, "max_position_embeddings": 32768, "num_experts": 64, "moe_topk": [8] * 32,
    "num_shared_expert": [1] * 32, "use_mixed_mlp_moe": True, "use_cla": False, "use_mla": False,
    "torch_dtype": "bfloat16",
}


def test_hunyuan_per_layer_lists():
    spec = parse_config(HUNYUAN_A13B)
    assert spec.moe == MoeShape(64, 8, 3072, 1, 3072)
    assert mixer_counts(spec) == {("full", "moe"): 32}
    with pytest.raises(ConfigError, match="'moe_topk' differs between layers"):
        parse_config(dict(HUNYUAN_A13B, moe_topk=[8] * 31 + [4]))


# https://huggingface.co/QuixiAI/MiniMax-M2.1-bf16/blob/main/config.json
MINIMAX_M21 = {
    "architectures": ["MiniMaxM2ForCausalLM"], "model_type": "minimax_m2", "num_hidden_layers": 62,
    "hidden_size": 3072, "intermediate_size": 1536, "num_attention_heads": 48, "num_key_value_heads": 8,
    "head_dim": 128, "vocab_size": 200064, "tie_word_embeddings": False, "max_position_embeddings": 196608,
    "num_local_experts": 256, "num_experts_per_tok": 8, "num_mtp_modules": 3,
}


def test_minimax_m2():
    spec = parse_config(MINIMAX_M21)
    assert spec.moe == MoeShape(256, 8, 1536) and spec.mtp_layers == 3
    assert mixer_counts(spec) == {("full", "moe"): 62}


def test_step3p5_split_head_counts():
    # Step-3.5-Flash (catalog seed): 45 layers, full 64 heads / 8 groups, sliding 96 heads / 8 groups, window 512;
    # the sliding heads come in config.json's attention_other_setting, as vLLM's step3p5.py reads them.
    config = {
        "model_type": "step3p5", "num_hidden_layers": 8, "hidden_size": 4096, "intermediate_size": 11264,
        "moe_intermediate_size": 1280, "share_expert_dim": 1280, "num_attention_heads": 64,
        "num_attention_groups": 8, "head_dim": 128,
        "attention_other_setting": {"attention_type": "sliding_attention", "num_attention_heads": 96,
                                    "num_attention_groups": 8, "head_dim": 128},
        "vocab_size": 128896, "max_seq_len": 262144, "moe_num_experts": 288, "moe_top_k": 8,
        "moe_layers_enum": "3,4,5,6,7", "sliding_window": 512,
        "layer_types": ["full_attention", "sliding_attention", "sliding_attention", "sliding_attention"] * 2,
    }
    spec = parse_config(config)
    assert mixer_counts(spec) == {("full", "dense"): 1, ("sliding", "dense"): 2, ("sliding", "moe"): 4,
                                  ("full", "moe"): 1}
    assert spec.sliding_attention == AttentionShape(96, 8, 128) and spec.attention == AttentionShape(64, 8, 128)
    assert spec.moe == MoeShape(288, 8, 1280, 1, 1280) and spec.max_context == 262144
    with pytest.raises(ConfigError, match="sliding-window layers but no 'sliding_window'"):
        parse_config({k: v for k, v in config.items() if k != "sliding_window"})
    # The flat spelling of the data record gives the same shape; a key attention_other_setting lacks falls back to
    # the top-level one (vLLM: "num_kv_heads=num_attention_groups if num_attention_groups else config...").
    flat = {k: v for k, v in config.items() if k != "attention_other_setting"}
    assert parse_config({**flat, "sliding_attention_heads": 96, "sliding_attention_groups": 8}).sliding_attention \
        == AttentionShape(96, 8, 128)
    partial = {**config, "attention_other_setting": {"attention_type": "sliding_attention", "num_attention_heads": 96}}
    assert parse_config(partial).sliding_attention == AttentionShape(96, 8, 128)


def test_cohere2_pattern_four():
    config = {"model_type": "cohere2", "num_hidden_layers": 8, "hidden_size": 512, "intermediate_size": 1024,
              "num_attention_heads": 8, "num_key_value_heads": 1, "vocab_size": 1000, "sliding_window": 4096}
    spec = parse_config(config)
    # default pattern 4: layers 3 and 7 global
    assert mixer_counts(spec) == {("sliding", "dense"): 6, ("full", "dense"): 2}
    assert spec.tie_word_embeddings is True


def test_glm4_dense_partial_rotary():
    # GLM-4-32B-0414 (data record, from fine-tune configs)
    config = {"architectures": ["Glm4ForCausalLM"], "model_type": "glm4", "num_hidden_layers": 61,
              "hidden_size": 6144, "intermediate_size": 23040, "num_attention_heads": 48, "num_key_value_heads": 2,
              "head_dim": 128, "vocab_size": 151552, "partial_rotary_factor": 0.5, "torch_dtype": "bfloat16"}
    spec = parse_config(config)
    assert spec.attention == AttentionShape(48, 2, 128) and mixer_counts(spec) == {("full", "dense"): 61}


# ----------------------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(("config", "message"), [
    ({k: v for k, v in LLAMA_31_8B.items() if k != "num_hidden_layers"}, "config.json has no 'num_hidden_layers'"),
    (dict(LLAMA_31_8B, model_type="foo"), "unknown architecture 'foo' (model_type)"),
    (dict(LLAMA_31_8B, num_hidden_layers="32"), "'num_hidden_layers' must be an integer, got '32'"),
    (dict(LLAMA_31_8B, num_hidden_layers=-1), "'num_hidden_layers' must be between 1 and 1024, got -1"),
    (dict(LLAMA_31_8B, num_hidden_layers=10**12), "'num_hidden_layers' must be between 1 and 1024"),
    (dict(LLAMA_31_8B, num_hidden_layers=True), "'num_hidden_layers' must be an integer, got True"),
    (dict(LLAMA_31_8B, hidden_size=4096.5), "'hidden_size' must be an integer, got 4096.5"),
    (dict(LLAMA_31_8B, num_key_value_heads=5), "'num_attention_heads' (32) is not a multiple of 'num_key_value_heads' (5)"),
    (dict(LLAMA_31_8B, hidden_size=4000, num_attention_heads=48, num_key_value_heads=8),
     "has no 'head_dim' and hidden_size 4000 is not divisible by num_attention_heads 48"),
    (dict(LLAMA_31_8B, torch_dtype="int3"), "'torch_dtype' 'int3' is not a supported dtype"),
    (dict(LLAMA_31_8B, text_config=[1]), "'text_config' must be an object"),
    (dict(LLAMA_31_8B, quantization_config="fp8"), "'quantization_config' must be an object"),
    (dict(QWEN3_30B_A3B, num_experts_per_tok=200), "'num_experts_per_tok' (200) exceeds the number of experts (128)"),
    (dict(GPT_OSS_20B, layer_types=["sliding_attention"] * 3), "'layer_types' has 3 entries for 24 layers"),
    (dict(GPT_OSS_20B, layer_types=["warp"] * 24), "'layer_types[0]' 'warp' is not a known layer type"),
    ({"model_type": "deepseek_v4", "hidden_size": 4096, "num_hidden_layers": 2, "compress_ratios": [0]},
     "'compress_ratios' must list one ratio per layer (2)"),
    ({"model_type": "deepseek_v4", "hidden_size": 4096, "num_hidden_layers": 2, "compress_ratios": [0, 8]},
     "'compress_ratios[1]' is 8; DeepSeek-V4 layers use 0 (sliding window), 4 (CSA) or 128 (HCA)"),
    ([], "config.json must be a JSON object, got list"),
    ({}, "config.json has no 'model_type'"),
])
def test_bad_input_is_a_precise_config_error(config, message):
    with pytest.raises(ConfigError, match=None) as error:
        parse_config(config)
    assert message in str(error.value)
    assert "\n" not in str(error.value)


def test_implausible_totals_are_rejected():
    # every field in bounds, but 1024 layers × 8192 experts × 3 × 2^18 × 2^18 is ~10^18 parameters
    config = dict(MIXTRAL_8X7B, num_hidden_layers=1024, hidden_size=1 << 18, intermediate_size=1 << 18,
                  num_local_experts=8192, num_attention_heads=1024, num_key_value_heads=1024)
    with pytest.raises(ConfigError, match="implausible model"):
        parse_config(config)


# JSON values of any shape: the parser may only return a ModelSpec or raise ConfigError.
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(10**15), max_value=10**15)
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=12),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)
REAL_CONFIGS = [LLAMA_31_8B, QWEN3_30B_A3B, DEEPSEEK_V3, GLM_5, GLM_47, GPT_OSS_20B, GEMMA3_4B_TEXT, GEMMA4_31B,
                LLAMA4_MAVERICK, QWEN3_NEXT, NEMOTRON_3_NANO, LFM2_350M, HUNYUAN_A13B, MINIMAX_M21, MIXTRAL_8X7B]


def _outcome(config):
    try:
        return parse_config(config)
    except ConfigError as error:
        return error


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=json_values)
def test_arbitrary_json_gives_spec_or_config_error(value):
    assert isinstance(_outcome(value), (ModelSpec, ConfigError))


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(base=st.sampled_from(REAL_CONFIGS), key=st.text(max_size=30), value=json_values, data=st.data())
def test_real_config_with_one_hostile_value(base, key, value, data):
    config = json.loads(json.dumps(base))
    target = config["text_config"] if "text_config" in config and data.draw(st.booleans()) else config
    key = data.draw(st.sampled_from(sorted(target))) if data.draw(st.booleans()) else key
    target[key] = value
    outcome = _outcome(config)
    assert isinstance(outcome, (ModelSpec, ConfigError))
    if isinstance(outcome, ModelSpec):
        assert 1 <= outcome.num_layers <= 1024 and outcome.hidden_size >= 1
        assert all(math.isfinite(x) for x in (outcome.hidden_size, outcome.vocab_size))


@pytest.mark.parametrize("config, multimodal", [
    ({"architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3",
      "text_config": {"model_type": "gemma3_text"}}, True),
    ({"architectures": ["LlamaForCausalLM"], "model_type": "llama"}, False),
])
def test_vision_language_checkpoints_are_marked_multimodal(config, multimodal):
    """vLLM loads the vision encoder of a *ForConditionalGeneration checkpoint; the estimate says it leaves it out."""
    from reports.sizing.config_parser import _multimodal

    assert _multimodal(config, config.get("text_config")) is multimodal
