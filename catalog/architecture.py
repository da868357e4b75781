"""Normalized architecture columns of an LLMModel, derived from its config.json by the engine's parser."""

from __future__ import annotations

from collections import Counter

from reports.sizing.config_parser import parse_config
from reports.sizing.errors import ConfigError
from reports.sizing.estimate import attention_kind

ARCHITECTURE_FIELDS = (
    "architecture", "attention_kind", "num_layers", "hidden_size", "intermediate_size", "num_attention_heads",
    "num_kv_heads", "head_dim", "q_lora_rank", "kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim",
    "num_experts", "experts_per_token", "num_shared_experts", "moe_intermediate_size", "first_dense_layers",
    "sliding_window", "layer_pattern", "linear_attention", "vocab_size", "tie_word_embeddings", "max_context",
    "native_dtype", "mtp_layers",
)


def architecture_fields(config: dict | None, *, slug: str = "", name: str = "") -> dict:
    """Column values for `config`; all empty when there is no config or it cannot be parsed (clean() reports that)."""
    empty = {field: None for field in ARCHITECTURE_FIELDS} | {"architecture": "", "attention_kind": "",
                                                             "native_dtype": ""}
    if config is None:
        return empty
    try:
        spec = parse_config(config, slug=slug, name=name)
    except ConfigError:
        return empty
    first_dense = 0
    for layer in spec.layers:
        if layer.ffn != "dense":
            break
        first_dense += 1
    attention = spec.attention
    mla, moe, linear, compressed = spec.mla, spec.moe, spec.linear_attention, spec.compressed_attention
    if compressed is not None:  # DeepSeek-V4: one shared K=V head
        heads, kv_heads, head_dim = compressed.num_heads, 1, compressed.head_dim
    else:
        heads = attention.num_heads if attention else (mla.num_heads if mla else None)
        kv_heads = attention.num_kv_heads if attention else (1 if mla else None)
        head_dim = attention.head_dim if attention else None
    return {
        "architecture": spec.architecture,
        "attention_kind": attention_kind(spec),
        "num_layers": spec.num_layers,
        "hidden_size": spec.hidden_size,
        "intermediate_size": spec.intermediate_size,
        "num_attention_heads": heads,
        "num_kv_heads": kv_heads,
        "head_dim": head_dim,
        "q_lora_rank": mla.q_lora_rank if mla else (compressed.q_lora_rank if compressed else None),
        "kv_lora_rank": mla.kv_lora_rank if mla else None,
        "qk_rope_head_dim": mla.qk_rope_head_dim if mla else (compressed.qk_rope_head_dim if compressed else None),
        "qk_nope_head_dim": mla.qk_nope_head_dim if mla else None,
        "v_head_dim": mla.v_head_dim if mla else None,
        "num_experts": moe.num_experts if moe else None,
        "experts_per_token": moe.experts_per_token if moe else None,
        "num_shared_experts": moe.num_shared_experts if moe else None,
        "moe_intermediate_size": moe.expert_intermediate_size if moe else None,
        "first_dense_layers": first_dense if moe else None,
        "sliding_window": spec.sliding_window,
        "layer_pattern": dict(Counter(f"{layer.mixer}/{layer.ffn}" for layer in spec.layers)),
        "linear_attention": (
            {"num_key_heads": linear.num_key_heads, "num_value_heads": linear.num_value_heads,
             "key_head_dim": linear.key_head_dim, "value_head_dim": linear.value_head_dim,
             "conv_kernel": linear.conv_kernel} if linear else None),
        "vocab_size": spec.vocab_size,
        "tie_word_embeddings": spec.tie_word_embeddings,
        "max_context": spec.max_context,
        "native_dtype": spec.native_dtype,
        "mtp_layers": spec.mtp_layers,
    }
