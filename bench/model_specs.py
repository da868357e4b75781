"""Hand-written ModelSpecs for the models in bench/data/gguf_sizes.csv.

Each value is copied from a config.json (or a source quoting it); the comment above each spec names the
source. The catalog will hold the same configs; these exist so the bench does not depend on the database or
on the config parser. Pure Python: no Django import.
"""

from __future__ import annotations

from dataclasses import replace

from reports.sizing.specs import AttentionShape, DsaIndexerShape, LayerSpec, MlaShape, ModelSpec, MoeShape


def uniform_layers(count: int, mixer: str = "full", ffn: str = "dense") -> tuple[LayerSpec, ...]:
    return tuple(LayerSpec(mixer=mixer, ffn=ffn) for _ in range(count))


def first_dense_then_moe(count: int, first_dense: int) -> tuple[LayerSpec, ...]:
    """DeepSeek/GLM "first_k_dense_replace": the first layers keep a dense FFN, the rest are MoE."""
    return tuple(LayerSpec(mixer="full", ffn="dense" if i < first_dense else "moe") for i in range(count))


def alternating_sliding(count: int, ffn: str) -> tuple[LayerSpec, ...]:
    """gpt-oss layer_types: even layers sliding_attention, odd layers full_attention."""
    return tuple(LayerSpec(mixer="sliding" if i % 2 == 0 else "full", ffn=ffn) for i in range(count))


def every_nth(count: int, period: int, mixer: str, other: str, ffn: str = "dense") -> tuple[LayerSpec, ...]:
    """Layer i (0-based) is ``mixer`` when (i + 1) % period == 0, else ``other`` (Gemma 3 sliding_window_pattern,
    Qwen3-Next full_attention_interval, Llama 4 chunked/global interleave)."""
    return tuple(LayerSpec(mixer=mixer if (i + 1) % period == 0 else other, ffn=ffn) for i in range(count))


def gemma3_layers(count: int) -> tuple[LayerSpec, ...]:
    """sliding_window_pattern 6: every 6th layer (1-based) is global, the other five slide."""
    return every_nth(count, 6, "full", "sliding")


# models.json "Llama-3.1-8B": github:citsjtu2020/LLM-Prof sglang/Model_Config.md (verbatim config.json).
# Llama-3-8B shares every shape (only rope_scaling/context differ).
LLAMA_3_1_8B = ModelSpec(
    slug="llama-3.1-8b",
    name="Llama-3.1-8B",
    architecture="llama",
    hidden_size=4096,
    vocab_size=128256,
    layers=uniform_layers(32),
    attention=AttentionShape(num_heads=32, num_kv_heads=8, head_dim=128),
    intermediate_size=14336,
)

# models.json "Llama 3.x 70B dims" (failspy/llama-3-70B-Instruct-abliterated config.json) and
# "Llama 3.3 70B Instruct" (relaxml QTIP copy): 80 layers, 8192 hidden, 28672 FFN, 64/8 heads, head_dim 128,
# vocab 128256. Llama-3-70B and Llama-3.1-70B share these shapes.
LLAMA_3_70B = ModelSpec(
    slug="llama-3-70b",
    name="Llama-3-70B",
    architecture="llama",
    hidden_size=8192,
    vocab_size=128256,
    layers=uniform_layers(80),
    attention=AttentionShape(num_heads=64, num_kv_heads=8, head_dim=128),
    intermediate_size=28672,
)

# volcengine/verl tests/utils/test_flops_counter.py CONFIG["llama"] ("llama2-7B"): vocab 32000, hidden 4096,
# FFN 11008, 32 layers, 32 heads, 32 KV heads (MHA).
LLAMA_2_7B = ModelSpec(
    slug="llama-2-7b",
    name="Llama-2-7B",
    architecture="llama",
    hidden_size=4096,
    vocab_size=32000,
    layers=uniform_layers(32),
    attention=AttentionShape(num_heads=32, num_kv_heads=32, head_dim=128),
    intermediate_size=11008,
)

# volcengine/verl tests/utils/test_flops_counter.py CONFIG["qwen2"] ("Qwen/Qwen2.5-7B-Instruct"): vocab 152064,
# hidden 3584, FFN 18944, 28 layers, 28 heads, 4 KV heads; tie_word_embeddings false (Qwen2.5-7B config copies in
# the same search). Qwen2 always has q/k/v biases (modeling_qwen2.py: bias=True). Qwen2.5-Coder-7B shares
# these shapes (Qwen2.5-Coder report, Table 1).
QWEN2_5_7B = ModelSpec(
    slug="qwen2.5-7b",
    name="Qwen2.5-7B",
    architecture="qwen2",
    hidden_size=3584,
    vocab_size=152064,
    layers=uniform_layers(28),
    attention=AttentionShape(num_heads=28, num_kv_heads=4, head_dim=128),
    intermediate_size=18944,
    attention_bias=True,
)

# models.json "Qwen2.5-Coder-32B-Instruct" and "DeepSeek-R1-Distill-Qwen-32B" (base Qwen2.5-32B): 64 layers,
# hidden 5120, FFN 27648, 40/8 heads, vocab 152064, untied. Qwen2 q/k/v biases.
QWEN2_5_32B = ModelSpec(
    slug="qwen2.5-32b",
    name="Qwen2.5-32B",
    architecture="qwen2",
    hidden_size=5120,
    vocab_size=152064,
    layers=uniform_layers(64),
    attention=AttentionShape(num_heads=40, num_kv_heads=8, head_dim=128),
    intermediate_size=27648,
    attention_bias=True,
)

# models.json "Qwen3-30B-A3B" (alibaba/InferSim hf_configs/qwen3-30B-A3B_config.json) and
# "Qwen3-Coder-30B-A3B-Instruct" (same dims): 48 layers, hidden 2048, 32/4 heads × 128, 128 experts top-8,
# moe_intermediate 768, vocab 151936, untied, every layer MoE (mlp_only_layers []).
QWEN3_30B_A3B = ModelSpec(
    slug="qwen3-30b-a3b",
    name="Qwen3-30B-A3B",
    architecture="qwen3_moe",
    hidden_size=2048,
    vocab_size=151936,
    layers=uniform_layers(48, ffn="moe"),
    attention=AttentionShape(num_heads=32, num_kv_heads=4, head_dim=128),
    moe=MoeShape(num_experts=128, experts_per_token=8, expert_intermediate_size=768),
)

# models.json "Qwen3-235B-A22B" (InferSim qwen3-235B-A22B_config.json): 94 layers, hidden 4096, 64/4 heads × 128,
# 128 experts top-8, moe_intermediate 1536, vocab 151936.
QWEN3_235B_A22B = ModelSpec(
    slug="qwen3-235b-a22b",
    name="Qwen3-235B-A22B",
    architecture="qwen3_moe",
    hidden_size=4096,
    vocab_size=151936,
    layers=uniform_layers(94, ffn="moe"),
    attention=AttentionShape(num_heads=64, num_kv_heads=4, head_dim=128),
    moe=MoeShape(num_experts=128, experts_per_token=8, expert_intermediate_size=1536),
)

# models.json "Gemma 3 4B (text config)": 34 layers, hidden 2560, FFN 10240, 8/4 heads × 256, vocab 262208,
# tied embeddings (Gemma default), 5 sliding : 1 global. llama.cpp reports n_vocab 262208 and "model params
# 3.88 B" for gemma-3-4b-it-qat (unslothai/unsloth issue #2744 log).
GEMMA_3_4B = ModelSpec(
    slug="gemma-3-4b",
    name="Gemma 3 4B",
    architecture="gemma3_text",
    hidden_size=2560,
    vocab_size=262208,
    layers=gemma3_layers(34),
    attention=AttentionShape(num_heads=8, num_kv_heads=4, head_dim=256),
    intermediate_size=10240,
    tie_word_embeddings=True,
    sliding_window=1024,
)

# models.json "Gemma 3 27B (text config, fixtures)": 62 layers, hidden 5376, FFN 21504, 32/16 heads × 128,
# vocab 262208, tied, pattern 6.
GEMMA_3_27B = ModelSpec(
    slug="gemma-3-27b",
    name="Gemma 3 27B",
    architecture="gemma3_text",
    hidden_size=5376,
    vocab_size=262208,
    layers=gemma3_layers(62),
    attention=AttentionShape(num_heads=32, num_kv_heads=16, head_dim=128),
    intermediate_size=21504,
    tie_word_embeddings=True,
    sliding_window=1024,
)

# models.json "gpt-oss-20b" (EchoCog mirror of the HF config.json): 24 layers, hidden 2880, 64/8 heads × 64,
# 32 experts top-4, expert width 2880, vocab 201088, untied, attention_bias true, alternating sliding(128)/full.
# Experts are MXFP4 in the checkpoint (quantization_config modules_to_not_convert: attention, router, embeddings).
GPT_OSS_20B = ModelSpec(
    slug="gpt-oss-20b",
    name="gpt-oss-20b",
    architecture="gpt_oss",
    hidden_size=2880,
    vocab_size=201088,
    layers=alternating_sliding(24, "moe"),
    attention=AttentionShape(num_heads=64, num_kv_heads=8, head_dim=64),
    moe=MoeShape(num_experts=32, experts_per_token=4, expert_intermediate_size=2880),
    attention_bias=True,
    sliding_window=128,
    native_dtype="mxfp4",
    checkpoint_quant_method="mxfp4",  # gpt-oss's config: quantization_config.quant_method "mxfp4"
)

# models.json "gpt-oss-120b" (Megatron-Bridge docs): 36 layers, 128 experts top-4, other dims as gpt-oss-20b.
GPT_OSS_120B = replace(
    GPT_OSS_20B,
    slug="gpt-oss-120b",
    name="gpt-oss-120b",
    layers=alternating_sliding(36, "moe"),
    moe=MoeShape(num_experts=128, experts_per_token=4, expert_intermediate_size=2880),
)

# models.json "DeepSeek-V3 (671B)" (InferSim deepseek_v3_config.json, expert keys restored): 61 layers, first 3
# dense (FFN 18432), hidden 7168, MLA 128 heads q_lora 1536 kv_lora 512 nope 128 rope 64 v 128, 256 routed
# experts top-8 + 1 shared, moe_intermediate 2048, vocab 129280, 1 MTP layer, native FP8 128×128 blocks.
DEEPSEEK_V3 = ModelSpec(
    slug="deepseek-v3",
    name="DeepSeek-V3",
    architecture="deepseek_v3",
    hidden_size=7168,
    vocab_size=129280,
    layers=first_dense_then_moe(61, 3),
    attention=None,
    intermediate_size=18432,
    mla=MlaShape(
        num_heads=128,
        q_lora_rank=1536,
        kv_lora_rank=512,
        qk_nope_head_dim=128,
        qk_rope_head_dim=64,
        v_head_dim=128,
    ),
    moe=MoeShape(num_experts=256, experts_per_token=8, expert_intermediate_size=2048, num_shared_experts=1),
    mtp_layers=1,
    native_dtype="fp8",
)

# models.json "GLM-4.7" (zai-org/GLM-4.7 config.json, same architecture as GLM-4.5/4.6 355B-A32B): 92 layers, first
# 3 dense (FFN 12288), hidden 5120, 96/8 heads × 128, qkv bias, 160 routed experts top-8 + 1 shared,
# moe_intermediate 1536, vocab 151552, 1 MTP layer. (use_qk_norm is true in GLM-4.7; not counted, 0.0003 %.)
GLM_4_5 = ModelSpec(
    slug="glm-4.5",
    name="GLM-4.5",
    architecture="glm4_moe",
    hidden_size=5120,
    vocab_size=151552,
    layers=first_dense_then_moe(92, 3),
    attention=AttentionShape(num_heads=96, num_kv_heads=8, head_dim=128),
    intermediate_size=12288,
    moe=MoeShape(num_experts=160, experts_per_token=8, expert_intermediate_size=1536, num_shared_experts=1),
    mtp_layers=1,
    attention_bias=True,
)

# models.json "GLM-5 (744B-A40B)" (zai-org/GLM-5-FP8 config.json): 78 layers, first 3 dense (FFN 12288), hidden
# 6144, MLA 64 heads q_lora 2048 kv_lora 512 nope 192 rope 64 v 256, 256 experts top-8 + 1 shared,
# moe_intermediate 2048, vocab 154880, 1 MTP layer, DSA indexer 32 heads × 128 (index_topk 2048).
GLM_5 = ModelSpec(
    slug="glm-5",
    name="GLM-5",
    architecture="glm_moe_dsa",
    hidden_size=6144,
    vocab_size=154880,
    layers=first_dense_then_moe(78, 3),
    attention=None,
    intermediate_size=12288,
    mla=MlaShape(
        num_heads=64,
        q_lora_rank=2048,
        kv_lora_rank=512,
        qk_nope_head_dim=192,
        qk_rope_head_dim=64,
        v_head_dim=256,
    ),
    moe=MoeShape(num_experts=256, experts_per_token=8, expert_intermediate_size=2048, num_shared_experts=1),
    mtp_layers=1,
    dsa_indexer=DsaIndexerShape(num_heads=32, head_dim=128, topk=2048),
)
