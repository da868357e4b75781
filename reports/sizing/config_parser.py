"""Hugging Face config.json (a parsed JSON object) → ``ModelSpec``.

Only shapes that change memory or speed are read: layer count and per-layer kind, attention heads and head
widths, MLA ranks, MoE layout, sliding windows, recurrent-state shapes, vocabulary, tied embeddings, context,
and the checkpoint's native dtype. Key names and defaults follow the ``transformers`` configuration classes
(``src/transformers/models/<model_type>/configuration_<model_type>.py``); where a key is optional there, the
default used here is the one from that file and is named in a comment.

Every malformed input raises ``ConfigError`` with a one-line message naming the key; the parser never raises
anything else, whatever JSON it is given (the tests fuzz it with arbitrary nesting).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from .errors import ConfigError
from .specs import (
    AttentionShape,
    ConvShape,
    CompressedAttentionShape,
    DsaIndexerShape,
    LayerSpec,
    LinearAttentionShape,
    MambaShape,
    MlaShape,
    ModelSpec,
    MoeShape,
)

# Plausibility bounds. Real configs sit far inside them (largest seen: 126 layers, hidden 16384, 512 experts,
# vocab 262,208, context 10M); they exist so a hostile or mistyped file fails here with a clear message instead
# of producing astronomically large numbers downstream.
MAX_LAYERS = 1024
MAX_WIDTH = 1 << 18  # hidden / intermediate / rank widths
MAX_HEADS = 4096
MAX_HEAD_DIM = 8192
MAX_VOCAB = 1 << 23
MAX_EXPERTS = 8192
MAX_CONTEXT = 1 << 28
MAX_KERNEL = 64
# 100 T parameters: ~60× the largest open-weight model on record; above this the file is not a real model.
MAX_PLAUSIBLE_PARAMS = 1e14

_MISSING = object()


class _Config:
    """Typed, bounds-checked access to one config object; every error names the key."""

    def __init__(self, data: Mapping[str, Any], outer: Mapping[str, Any] | None = None):
        self._data = data
        self._outer = outer or {}

    def raw(self, key: str) -> Any:
        """The value of key (text_config first, then the wrapper), or None when absent or null."""
        value = self._data.get(key)
        if value is None:
            value = self._outer.get(key)
        return value

    def has(self, key: str) -> bool:
        return self.raw(key) is not None

    def int(self, key: str, *, lo: int = 1, hi: int = MAX_WIDTH, default: Any = _MISSING) -> int:
        value = self.raw(key)
        if value is None:
            if default is _MISSING:
                raise ConfigError(f"config.json has no '{key}'")
            return default
        return _as_int(value, key, lo, hi)

    def opt_int(self, key: str, *, lo: int = 1, hi: int = MAX_WIDTH) -> int | None:
        return self.int(key, lo=lo, hi=hi, default=None)

    def first_int(self, keys: tuple[str, ...], *, lo: int = 1, hi: int = MAX_WIDTH, default: Any = _MISSING) -> int:
        for key in keys:
            if self.has(key):
                return self.int(key, lo=lo, hi=hi)
        if default is _MISSING:
            raise ConfigError(f"config.json has no '{keys[0]}'")
        return default

    def bool(self, key: str, default: bool) -> bool:
        value = self.raw(key)
        if value is None:
            return default
        if isinstance(value, bool):
            return value
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        raise ConfigError(f"config.json '{key}' must be true or false, got {_show(value)}")

    def str(self, key: str) -> str | None:
        value = self.raw(key)
        if value is None:
            return None
        if not isinstance(value, str):
            raise ConfigError(f"config.json '{key}' must be a string, got {_show(value)}")
        return value

    def list(self, key: str) -> list | None:
        value = self.raw(key)
        if value is None:
            return None
        if not isinstance(value, list):
            raise ConfigError(f"config.json '{key}' must be a list, got {_show(value)}")
        return value

    def mapping(self, key: str) -> Mapping[str, Any] | None:
        value = self.raw(key)
        if value is None:
            return None
        if not isinstance(value, Mapping):
            raise ConfigError(f"config.json '{key}' must be an object, got {_show(value)}")
        return value


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _as_int(value: Any, key: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"config.json '{key}' must be an integer, got {_show(value)}")
    if isinstance(value, float):
        if not math.isfinite(value) or not value.is_integer():
            raise ConfigError(f"config.json '{key}' must be an integer, got {_show(value)}")
        value = int(value)
    if not lo <= value <= hi:
        raise ConfigError(f"config.json '{key}' must be between {lo} and {hi}, got {value}")
    return value


# --------------------------------------------------------------------------------------------------- entry


def parse_config(config: Any, *, slug: str = "", name: str = "") -> ModelSpec:
    """Normalise a Hugging Face config.json object into the engine's ``ModelSpec``.

    Multimodal wrappers (Gemma 3/4, Llama 4, Qwen3.5) keep the language model under ``text_config``; its keys
    win over the wrapper's, and the wrapper still supplies ``quantization_config`` and the dtype.
    """
    if not isinstance(config, Mapping):
        raise ConfigError(f"config.json must be a JSON object, got {type(config).__name__}")
    text = config.get("text_config")
    if text is not None and not isinstance(text, Mapping):
        raise ConfigError(f"config.json 'text_config' must be an object, got {_show(text)}")
    cfg = _Config(text, config) if text is not None else _Config(config)
    model_type = _model_type(config, text)
    builder = _BUILDERS.get(model_type)
    if builder is None:
        raise ConfigError(f"unknown architecture '{model_type}' (model_type)")
    fields = builder(cfg)
    spec = ModelSpec(
        slug=slug,
        name=name,
        architecture=model_type,
        hidden_size=cfg.int("hidden_size"),
        vocab_size=cfg.int("vocab_size", hi=MAX_VOCAB),
        tie_word_embeddings=_tied_embeddings(cfg, model_type),
        max_context=_max_context(cfg),
        native_dtype=_native_dtype(cfg),
        checkpoint_quant_method=_checkpoint_quant_method(cfg),
        attention_bias=cfg.bool("attention_bias", _DEFAULT_ATTENTION_BIAS.get(model_type, False)),
        hf_repo=_hf_repo(config),
        multimodal=_multimodal(config, text),
        **fields,
    )
    _check_layer_shapes(spec)
    _check_plausible_size(spec)
    return spec


# The shape each kind of layer needs (ModelSpec fields), so a layer_types entry naming a kind the family has no
# shape for is refused here, with its name, instead of failing later in the engine.
_MIXER_SHAPES = {"full": ("attention", "mla"), "sliding": ("attention",), "chunked": ("attention",),
                 "linear": ("linear_attention",), "mamba": ("mamba",), "conv": ("conv",),
                 "window": ("compressed_attention",), "csa": ("compressed_attention",),
                 "hca": ("compressed_attention",)}
_MIXER_KEYS = {"full": "full_attention", "sliding": "sliding_attention", "chunked": "chunked_attention",
               "linear": "linear_attention", "mamba": "mamba", "conv": "conv", "window": "sliding_attention",
               "csa": "compressed_sparse_attention", "hca": "heavily_compressed_attention"}


def _check_layer_shapes(spec: ModelSpec) -> None:
    for mixer in sorted({layer.mixer for layer in spec.layers}):
        shapes = _MIXER_SHAPES.get(mixer)
        if shapes and all(getattr(spec, shape) is None for shape in shapes):
            raise ConfigError(f"config.json 'layer_types' has {_MIXER_KEYS[mixer]!r} layers, but this "
                              f"'{spec.architecture}' config has no shape for them")
    mixers = {layer.mixer for layer in spec.layers}
    if "sliding" in mixers and not spec.sliding_window:
        raise ConfigError("config.json has sliding-attention layers but no 'sliding_window'")
    if "chunked" in mixers and not spec.attention_chunk_size:
        raise ConfigError("config.json has chunked-attention layers but no 'attention_chunk_size'")
    ffns = {layer.ffn for layer in spec.layers}
    if "moe" in ffns and spec.moe is None:
        raise ConfigError("config.json has MoE layers but no expert shapes")
    if "dense" in ffns and not spec.intermediate_size:
        raise ConfigError("config.json has dense feed-forward layers but no 'intermediate_size'")


def _model_type(config: Mapping[str, Any], text: Mapping[str, Any] | None) -> str:
    for source in (text or {}, config):
        value = source.get("model_type")
        if value is not None:
            if not isinstance(value, str) or not value.strip():
                raise ConfigError(f"config.json 'model_type' must be a non-empty string, got {_show(value)}")
            return _ALIASES.get(value.strip().lower(), value.strip().lower())
    # A config.json always names model_type; documentation-only records may carry just "architectures".
    architectures = config.get("architectures")
    if isinstance(architectures, list):
        for architecture in architectures:
            if isinstance(architecture, str) and architecture in _ARCHITECTURE_MODEL_TYPES:
                return _ARCHITECTURE_MODEL_TYPES[architecture]
    raise ConfigError("config.json has no 'model_type'")


def _multimodal(config: Mapping[str, Any], text: Any) -> bool:
    """A vision-language checkpoint: the language model nested under text_config, a vision_config, or an
    architecture named *ForConditionalGeneration (the catalog's text-only extractions keep that name in a note)."""
    architectures = config.get("architectures")
    named = isinstance(architectures, list) and any(
        isinstance(name, str) and "ForConditionalGeneration" in name for name in architectures)
    return text is not None or "vision_config" in config or named


def _hf_repo(config: Mapping[str, Any]) -> str:
    value = config.get("_name_or_path")
    return value if isinstance(value, str) and value.count("/") == 1 and len(value) < 200 else ""


def _max_context(cfg: _Config) -> int | None:
    # step3p5 names it max_seq_len; a few older configs seq_length.
    for key in ("max_position_embeddings", "max_seq_len", "seq_length"):
        if cfg.has(key):
            return cfg.int(key, hi=MAX_CONTEXT)
    return None


# torch dtype names as written by transformers (PretrainedConfig.torch_dtype, renamed "dtype" in v4.56+).
_TORCH_DTYPES = {
    "bfloat16": "bf16", "bf16": "bf16",
    "float16": "fp16", "half": "fp16", "fp16": "fp16",
    "float32": "fp32", "float": "fp32", "fp32": "fp32",
}
# quantization_config.quant_method values whose checkpoint weights are stored natively in that format.
_NATIVE_QUANT_METHODS = {"fp8": "fp8", "fbgemm_fp8": "fp8", "mxfp4": "mxfp4"}


def _checkpoint_quant_method(cfg: _Config) -> str:
    quant = cfg.mapping("quantization_config")
    method = quant.get("quant_method") if quant is not None else None
    return method if isinstance(method, str) and _native_dtype(cfg) in ("fp8", "mxfp4", "fp8_fp4") else ""


def _native_dtype(cfg: _Config) -> str:
    quant = cfg.mapping("quantization_config")
    if quant is not None:
        method = quant.get("quant_method")
        if method is not None and not isinstance(method, str):
            raise ConfigError(f"config.json 'quantization_config.quant_method' must be a string, got {_show(method)}")
        if method == "compressed-tensors" and quant.get("format") == "mxfp4-pack-quantized":
            # Kimi K3: the routed experts in MXFP4 (group 32, e8m0 scales); attention, shared experts, the dense MLP
            # and the head are in its ignore list and stay BF16: gpt-oss's layout.
            return "mxfp4"
        if method == "fp8" and cfg.str("expert_dtype") == "fp4":
            # DeepSeek-V4: routed experts in FP4 (e2m1, one ue8m0 scale per 32), everything else block FP8.
            return "fp8_fp4"
        if method in _NATIVE_QUANT_METHODS:
            return _NATIVE_QUANT_METHODS[method]
        # AWQ/GPTQ/bitsandbytes copies are derivatives; the engine sizes those as quant formats, so the
        # checkpoint dtype below (the unquantized tensors' dtype) is what describes the model.
    for key in ("torch_dtype", "dtype"):
        name = cfg.str(key)
        if name is not None:
            dtype = _TORCH_DTYPES.get(name.lower().removeprefix("torch."))
            if dtype is None:
                raise ConfigError(f"config.json '{key}' {name!r} is not a supported dtype (bfloat16, float16, float32)")
            return dtype
    return "bf16"


# Families whose transformers config class defaults tie_word_embeddings to True (Gemma*Config, Lfm2Config,
# Cohere2Config); every other supported class defaults it to False.
_TIED_BY_DEFAULT = {"gemma3", "gemma4", "lfm2", "cohere2"}
# Qwen2 puts a bias on q/k/v without an attention_bias key (modeling_qwen2.py Qwen2Attention, bias=True).
_DEFAULT_ATTENTION_BIAS = {"qwen2": True}


def _tied_embeddings(cfg: _Config, model_type: str) -> bool:
    default = model_type in _TIED_BY_DEFAULT
    if cfg.has("tie_embedding"):  # Lfm2Config spells it without "word"
        return cfg.bool("tie_embedding", default)
    return cfg.bool("tie_word_embeddings", default)


def _check_plausible_size(spec: ModelSpec) -> None:
    """Reject shapes that multiply out to an impossible model (a rough upper bound, not the parameter count)."""
    width = spec.hidden_size
    ffn = max(spec.intermediate_size or 0, spec.moe.expert_intermediate_size if spec.moe else 0)
    experts = (spec.moe.num_experts + spec.moe.num_shared_experts) if spec.moe else 1
    per_layer = 8.0 * width * width + 3.0 * width * ffn * experts
    rough = spec.num_layers * per_layer + 2.0 * spec.vocab_size * width
    if rough > MAX_PLAUSIBLE_PARAMS:
        raise ConfigError(f"config.json describes an implausible model (~{rough:.1e} parameters)")


# ------------------------------------------------------------------------------------------ shared pieces


def _num_layers(cfg: _Config) -> int:
    return cfg.int("num_hidden_layers", hi=MAX_LAYERS)


def _attention(cfg: _Config, *, heads_key: str = "num_attention_heads", kv_key: str = "num_key_value_heads",
               head_dim_key: str = "head_dim") -> AttentionShape:
    """GQA/MHA/MQA projections. No num_key_value_heads means MHA (transformers default: = num_attention_heads)."""
    heads = cfg.int(heads_key, hi=MAX_HEADS)
    kv_heads = cfg.int(kv_key, hi=MAX_HEADS, default=heads)
    if kv_heads > heads or heads % kv_heads:
        raise ConfigError(f"config.json '{heads_key}' ({heads}) is not a multiple of '{kv_key}' ({kv_heads})")
    head_dim = cfg.opt_int(head_dim_key, hi=MAX_HEAD_DIM)
    if head_dim is None:
        hidden = cfg.int("hidden_size")
        if hidden % heads:
            raise ConfigError(f"config.json has no '{head_dim_key}' and hidden_size {hidden} "
                              f"is not divisible by {heads_key} {heads}")
        head_dim = hidden // heads
    return AttentionShape(num_heads=heads, num_kv_heads=kv_heads, head_dim=head_dim)


# layer_types values used by transformers configs → (mixer, whether the layer has its own FFN).
_LAYER_TYPES = {
    "full_attention": "full",
    "attention": "full",
    "global": "full",
    "sliding_attention": "sliding",
    "local": "sliding",
    "chunked_attention": "chunked",
    "linear_attention": "linear",
    "conv": "conv",
    "mamba": "mamba",
    "mamba2": "mamba",
}


def _mixers_from_layer_types(cfg: _Config, num_layers: int) -> list[str] | None:
    layer_types = cfg.list("layer_types")
    if layer_types is None:
        return None
    if len(layer_types) != num_layers:
        raise ConfigError(f"config.json 'layer_types' has {len(layer_types)} entries for {num_layers} layers")
    mixers = []
    for index, layer_type in enumerate(layer_types):
        mixer = _LAYER_TYPES.get(layer_type) if isinstance(layer_type, str) else None
        if mixer is None:
            raise ConfigError(f"config.json 'layer_types[{index}]' {_show(layer_type)} is not a known layer type")
        mixers.append(mixer)
    return mixers


def _sliding_window(cfg: _Config, mixers: list[str]) -> int | None:
    if "sliding" not in mixers:
        # Qwen2.5 configs carry sliding_window 131072 with use_sliding_window false: no layer uses it.
        return None
    if not cfg.has("sliding_window"):
        raise ConfigError("config.json has sliding-window layers but no 'sliding_window'")
    return cfg.int("sliding_window", hi=MAX_CONTEXT)


def _layers(mixers: list[str], ffns: list[str]) -> tuple[LayerSpec, ...]:
    return tuple(LayerSpec(mixer=mixer, ffn=ffn) for mixer, ffn in zip(mixers, ffns, strict=True))


def _moe(cfg: _Config, *, experts: tuple[str, ...], top_k: tuple[str, ...], width: tuple[str, ...],
         shared_count: int = 0, shared_width: int | None = None) -> MoeShape:
    num_experts = cfg.first_int(experts, hi=MAX_EXPERTS)
    experts_per_token = cfg.first_int(top_k, hi=MAX_EXPERTS)
    if experts_per_token > num_experts:
        raise ConfigError(f"config.json '{top_k[0]}' ({experts_per_token}) exceeds the number of experts ({num_experts})")
    return MoeShape(
        num_experts=num_experts,
        experts_per_token=experts_per_token,
        expert_intermediate_size=cfg.first_int(width),
        num_shared_experts=shared_count,
        shared_expert_intermediate_size=shared_width if shared_count else None,
    )


def _mtp_layers(cfg: _Config, *keys: str) -> int:
    return cfg.first_int(keys, lo=0, hi=MAX_LAYERS, default=0)


def _layer_index_list(cfg: _Config, key: str, num_layers: int) -> set[int]:
    values = cfg.list(key) or []
    indexes = set()
    for value in values:
        indexes.add(_as_int(value, f"{key}[]", 0, num_layers - 1))
    return indexes


# ----------------------------------------------------------------------------------------- dense families


def _dense(cfg: _Config) -> dict:
    """llama, mistral, qwen2, qwen3, phi3 (Phi-4), glm4: every layer attention + gated MLP."""
    num_layers = _num_layers(cfg)
    mixers = _mixers_from_layer_types(cfg, num_layers) or _default_sliding_layout(cfg, num_layers)
    return dict(
        layers=_layers(mixers, ["dense"] * num_layers),
        attention=_attention(cfg),
        intermediate_size=cfg.int("intermediate_size"),
        sliding_window=_sliding_window(cfg, mixers),
    )


def _default_sliding_layout(cfg: _Config, num_layers: int) -> list[str]:
    """Sliding-window use without layer_types.

    Qwen2/Qwen3 configs carry sliding_window but apply it only when use_sliding_window is true, and then only
    from layer max_window_layers on (configuration_qwen2.py). Mistral/Mixtral/Phi-3 apply a non-null
    sliding_window to every layer (Mistral 7B v0.1); a null window means full attention everywhere.
    """
    if cfg.has("use_sliding_window"):
        if not cfg.bool("use_sliding_window", False):
            return ["full"] * num_layers
        first_sliding = cfg.int("max_window_layers", lo=0, hi=MAX_LAYERS, default=0)
        return ["full" if index < first_sliding else "sliding" for index in range(num_layers)]
    if cfg.has("sliding_window"):
        return ["sliding"] * num_layers
    return ["full"] * num_layers


def _mixtral(cfg: _Config) -> dict:
    """Mixtral: every layer MoE; intermediate_size is each expert's width (configuration_mixtral.py)."""
    num_layers = _num_layers(cfg)
    mixers = _mixers_from_layer_types(cfg, num_layers) or _default_sliding_layout(cfg, num_layers)
    return dict(
        layers=_layers(mixers, ["moe"] * num_layers),
        attention=_attention(cfg),
        sliding_window=_sliding_window(cfg, mixers),
        moe=_moe(cfg, experts=("num_local_experts",), top_k=("num_experts_per_tok",), width=("intermediate_size",)),
    )


# -------------------------------------------------------------------------------------------------- Qwen MoE


def _qwen_sparse_ffns(cfg: _Config, num_layers: int) -> list[str]:
    """Qwen2-MoE/Qwen3-MoE/Qwen3-Next rule (modeling_qwen3_moe.py Qwen3MoeDecoderLayer): layer i is MoE when
    it is not in mlp_only_layers, num_experts > 0 and (i + 1) % decoder_sparse_step == 0."""
    step = cfg.int("decoder_sparse_step", hi=MAX_LAYERS, default=1)
    dense_only = _layer_index_list(cfg, "mlp_only_layers", num_layers)
    return ["moe" if index not in dense_only and (index + 1) % step == 0 else "dense" for index in range(num_layers)]


def _qwen_shared_expert(cfg: _Config) -> tuple[int, int | None]:
    # Qwen2-MoE / Qwen3-Next / Qwen3.5 have one gated shared expert of shared_expert_intermediate_size;
    # Qwen3-MoE has none (the key is absent or 0).
    width = cfg.int("shared_expert_intermediate_size", lo=0, default=0)
    return (1, width) if width else (0, None)


def _qwen_moe(cfg: _Config) -> dict:
    num_layers = _num_layers(cfg)
    mixers = _mixers_from_layer_types(cfg, num_layers) or _default_sliding_layout(cfg, num_layers)
    ffns = _qwen_sparse_ffns(cfg, num_layers)
    shared_count, shared_width = _qwen_shared_expert(cfg)
    return dict(
        layers=_layers(mixers, ffns),
        attention=_attention(cfg),
        intermediate_size=cfg.int("intermediate_size") if "dense" in ffns else None,
        sliding_window=_sliding_window(cfg, mixers),
        moe=_moe(cfg, experts=("num_experts",), top_k=("num_experts_per_tok",), width=("moe_intermediate_size",),
                 shared_count=shared_count, shared_width=shared_width),
    )


def _qwen_hybrid(cfg: _Config) -> dict:
    """Qwen3-Next / Qwen3.5: gated delta-net ("linear_attention") layers with a full-attention layer every
    full_attention_interval layers (configuration_qwen3_next.py: layer i is full when (i + 1) % interval == 0),
    unless layer_types lists them. Qwen3.5 dense models (qwen3_5) have a dense MLP instead of MoE."""
    num_layers = _num_layers(cfg)
    mixers = _mixers_from_layer_types(cfg, num_layers)
    if mixers is None:
        interval = cfg.int("full_attention_interval", hi=MAX_LAYERS, default=4)
        mixers = ["full" if (index + 1) % interval == 0 else "linear" for index in range(num_layers)]
    fields = dict(
        attention=_attention(cfg),
        linear_attention=LinearAttentionShape(
            num_key_heads=cfg.int("linear_num_key_heads", hi=MAX_HEADS),
            num_value_heads=cfg.int("linear_num_value_heads", hi=MAX_HEADS),
            key_head_dim=cfg.int("linear_key_head_dim", hi=MAX_HEAD_DIM),
            value_head_dim=cfg.int("linear_value_head_dim", hi=MAX_HEAD_DIM),
            conv_kernel=cfg.int("linear_conv_kernel_dim", hi=MAX_KERNEL),
        ),
        sliding_window=_sliding_window(cfg, mixers),
        mtp_layers=_mtp_layers(cfg, "mtp_num_hidden_layers", "num_nextn_predict_layers"),
    )
    if cfg.has("num_experts"):
        ffns = _qwen_sparse_ffns(cfg, num_layers)
        shared_count, shared_width = _qwen_shared_expert(cfg)
        fields["moe"] = _moe(cfg, experts=("num_experts",), top_k=("num_experts_per_tok",),
                             width=("moe_intermediate_size",), shared_count=shared_count, shared_width=shared_width)
        fields["intermediate_size"] = cfg.int("intermediate_size") if "dense" in ffns else None
    else:
        ffns = ["dense"] * num_layers
        fields["intermediate_size"] = cfg.int("intermediate_size")
    fields["layers"] = _layers(mixers, ffns)
    return fields


def _qwen3_5(cfg: _Config) -> dict:
    """Qwen3.5: Qwen3-Next's layout, and vLLM's Qwen3_5ForConditionalGenerationConfig keeps the delta-net state in
    the config's mamba_ssm_dtype (Qwen3-Next has no such hook: its state stays in the model dtype)."""
    return dict(_qwen_hybrid(cfg), vllm_ssm_state_dtype=_ssm_state_dtype(cfg, "mamba_ssm_dtype", default=None))


# ------------------------------------------------------------------------------- DeepSeek / Kimi / GLM MoE


def _deepseek_ffns(cfg: _Config, num_layers: int) -> list[str]:
    """DeepSeek-V2/V3 rule (modeling_deepseek_v3.py): layer i is MoE when n_routed_experts is set,
    i >= first_k_dense_replace and i % moe_layer_freq == 0. GLM-4.5/4.7/5 use the same keys."""
    first_dense = cfg.int("first_k_dense_replace", lo=0, hi=MAX_LAYERS, default=0)
    frequency = cfg.int("moe_layer_freq", hi=MAX_LAYERS, default=1)
    return ["moe" if index >= first_dense and index % frequency == 0 else "dense" for index in range(num_layers)]


def _deepseek_moe(cfg: _Config) -> MoeShape:
    shared = cfg.int("n_shared_experts", lo=0, hi=MAX_EXPERTS, default=0)
    width = cfg.int("moe_intermediate_size")
    # DeepSeek/GLM shared experts are one MLP of n_shared_experts × moe_intermediate_size (DeepseekV3MoE).
    return _moe(cfg, experts=("n_routed_experts",), top_k=("num_experts_per_tok",), width=("moe_intermediate_size",),
                shared_count=shared, shared_width=shared * width if shared else None)


def _mla(cfg: _Config) -> MlaShape:
    return MlaShape(
        num_heads=cfg.int("num_attention_heads", hi=MAX_HEADS),
        q_lora_rank=cfg.opt_int("q_lora_rank"),  # null in DeepSeek-V2-Lite: plain q_proj
        kv_lora_rank=cfg.int("kv_lora_rank"),
        qk_nope_head_dim=cfg.int("qk_nope_head_dim", hi=MAX_HEAD_DIM),
        qk_rope_head_dim=cfg.int("qk_rope_head_dim", hi=MAX_HEAD_DIM),
        v_head_dim=cfg.int("v_head_dim", hi=MAX_HEAD_DIM),
    )


def _dsa_indexer(cfg: _Config) -> DsaIndexerShape | None:
    if not cfg.has("index_n_heads"):
        return None
    return DsaIndexerShape(
        num_heads=cfg.int("index_n_heads", hi=MAX_HEADS),
        head_dim=cfg.int("index_head_dim", hi=MAX_HEAD_DIM),
        topk=cfg.int("index_topk", hi=MAX_CONTEXT),
    )


def _deepseek(cfg: _Config) -> dict:
    """deepseek_v2/v3/v32, kimi_k2, glm4_moe_lite (GLM-4.7-Flash), glm_moe_dsa (GLM-5): MLA + MoE."""
    num_layers = _num_layers(cfg)
    ffns = _deepseek_ffns(cfg, num_layers) if cfg.has("n_routed_experts") else ["dense"] * num_layers
    return dict(
        layers=_layers(["full"] * num_layers, ffns),
        attention=None,
        mla=_mla(cfg),
        intermediate_size=cfg.int("intermediate_size") if "dense" in ffns else cfg.opt_int("intermediate_size"),
        moe=_deepseek_moe(cfg) if "moe" in ffns else None,
        mtp_layers=_mtp_layers(cfg, "num_nextn_predict_layers"),
        dsa_indexer=_dsa_indexer(cfg),
    )


def _glm4_moe(cfg: _Config) -> dict:
    """GLM-4.5 / 4.6 / 4.7: GQA with partial rotary (partial_rotary_factor does not change shapes) + DeepSeek-style MoE."""
    num_layers = _num_layers(cfg)
    ffns = _deepseek_ffns(cfg, num_layers)
    return dict(
        layers=_layers(["full"] * num_layers, ffns),
        attention=_attention(cfg),
        intermediate_size=cfg.int("intermediate_size") if "dense" in ffns else cfg.opt_int("intermediate_size"),
        moe=_deepseek_moe(cfg),
        mtp_layers=_mtp_layers(cfg, "num_nextn_predict_layers"),
    )


# DeepSeek-V4's compress_ratios values: 0 = sliding window only, 4 = CSA, 128 = HCA (transformers
# configuration_deepseek_v4.py compress_rates; llama.cpp src/llama-kv-cache-dsv4.cpp DSV4_CSA_RATIO/DSV4_HCA_RATIO).
DSV4_CSA_RATIO = 4
DSV4_HCA_RATIO = 128
_DSV4_MIXERS = {0: "window", DSV4_CSA_RATIO: "csa", DSV4_HCA_RATIO: "hca"}


def _deepseek_v4(cfg: _Config) -> dict:
    """DeepSeek-V4 (transformers models/deepseek_v4, DeepseekV4Config): every layer attends over a sliding window
    with one shared K=V head; compress_ratios adds, per layer, a 4× compressed cache read through the lightning
    indexer (CSA) or a 128× compressed cache (HCA). Every layer is MoE (the first num_hash_layers route by a
    token-id table); the list has one more entry than layers, for the MTP layer."""
    num_layers = _num_layers(cfg)
    ratios = cfg.list("compress_ratios")
    if ratios is None or len(ratios) < num_layers:
        raise ConfigError(f"config.json 'compress_ratios' must list one ratio per layer ({num_layers})")
    mixers = []
    for index, value in enumerate(ratios[:num_layers]):
        ratio = _as_int(value, f"compress_ratios[{index}]", 0, MAX_CONTEXT)
        if ratio not in _DSV4_MIXERS:
            raise ConfigError(f"config.json 'compress_ratios[{index}]' is {ratio}; DeepSeek-V4 layers use "
                              "0 (sliding window), 4 (CSA) or 128 (HCA)")
        mixers.append(_DSV4_MIXERS[ratio])
    if cfg.int("num_key_value_heads", hi=MAX_HEADS, default=1) != 1:
        raise ConfigError("config.json 'num_key_value_heads' must be 1: DeepSeek-V4 shares one K=V head")
    indexer = _dsa_indexer(cfg)
    if "csa" in mixers and indexer is None:
        raise ConfigError("config.json has CSA layers (compress_ratios 4) but no 'index_n_heads'")
    head_dim = cfg.int("head_dim", hi=MAX_HEAD_DIM)
    heads = cfg.int("num_attention_heads", hi=MAX_HEADS)
    o_groups = cfg.int("o_groups", hi=MAX_HEADS)
    if heads % o_groups:
        raise ConfigError(f"config.json 'o_groups' ({o_groups}) must divide num_attention_heads ({heads})")
    return dict(
        layers=_layers(mixers, ["moe"] * num_layers),
        attention=None,
        sliding_window=cfg.int("sliding_window", hi=MAX_CONTEXT),
        moe=_deepseek_moe(cfg),
        mtp_layers=_mtp_layers(cfg, "num_nextn_predict_layers"),
        dsa_indexer=indexer,
        compressed_attention=CompressedAttentionShape(
            num_heads=heads,
            head_dim=head_dim,
            qk_rope_head_dim=cfg.int("qk_rope_head_dim", hi=MAX_HEAD_DIM),
            q_lora_rank=cfg.int("q_lora_rank"),
            o_groups=o_groups,
            o_lora_rank=cfg.int("o_lora_rank"),
            csa_ratio=DSV4_CSA_RATIO,
            hca_ratio=DSV4_HCA_RATIO,
            hc_mult=cfg.int("hc_mult", lo=1, hi=64, default=1),
            hash_layers=cfg.int("num_hash_layers", lo=0, hi=num_layers, default=0),
        ),
    )


def _kimi_linear(cfg: _Config) -> dict:
    """Kimi K3 (kimi_linear under KimiK3ForConditionalGeneration): MLA on linear_attn_config.full_attn_layers and Kimi
    Delta Attention on kda_layers, both 1-based (vLLM transformers_utils/configs/kimi_linear.py "(layer_idx + 1) in
    kda_layers"; llama.cpp conversion/kimi_k3.py "the layer lists are 1-indexed"); a latent MoE whose 896 experts run
    at routed_expert_hidden_size, the first first_k_dense_replace layers dense. KDA (vLLM models/kimi_k3 kda.py,
    llama.cpp src/models/kimi-k3.cpp): q, k, v and an output gate of heads × head_dim, a forget gate through a
    head_dim-wide low rank, short convolutions on q, k, v. vLLM keeps the recurrent state in float32
    (mamba_utils.kda_state_dtype) and the conv state in the model dtype."""
    num_layers = _num_layers(cfg)
    linear = cfg.mapping("linear_attn_config")
    if linear is None:
        raise ConfigError("config.json has no 'linear_attn_config' (kimi_linear)")
    if cfg.opt_int("q_lora_rank") is None:
        # Kimi-Linear-48B-A3B: plain q_proj and a low-rank output gate (g_a/g_b), not the K3 layout sized here.
        raise ConfigError("kimi_linear without q_lora_rank (Kimi-Linear-48B-A3B's layout) is not supported yet")
    sub = _Config(linear)
    full = _layer_index_list_1_based(sub, "full_attn_layers", num_layers)
    kda = _layer_index_list_1_based(sub, "kda_layers", num_layers)
    if full & kda or len(full) + len(kda) != num_layers:
        raise ConfigError("config.json 'linear_attn_config' must name every layer once in full_attn_layers or "
                          "kda_layers")
    heads = sub.int("num_heads", hi=MAX_HEADS)
    head_dim = sub.int("head_dim", hi=MAX_HEAD_DIM)
    shared = cfg.int("num_shared_experts", lo=0, default=0)  # at full width: moe_intermediate_size each
    moe = _moe(cfg, experts=("num_experts",), top_k=("num_experts_per_token", "num_experts_per_tok"),
               width=("moe_intermediate_size",), shared_count=shared,
               shared_width=shared * cfg.int("moe_intermediate_size"))
    latent = cfg.opt_int("routed_expert_hidden_size")
    if latent is not None and latent != cfg.int("hidden_size"):
        moe = replace(moe, latent_size=latent)
    ffns = _deepseek_ffns(cfg, num_layers)
    return dict(
        layers=_layers(["full" if index in full else "linear" for index in range(num_layers)], ffns),
        attention=None,
        mla=_mla(cfg),
        linear_attention=LinearAttentionShape(
            num_key_heads=heads, num_value_heads=heads, key_head_dim=head_dim, value_head_dim=head_dim,
            conv_kernel=sub.int("short_conv_kernel_size", hi=MAX_KERNEL), kind="kda", gate_rank=head_dim),
        intermediate_size=cfg.int("intermediate_size") if "dense" in ffns else None,
        moe=moe,
        mtp_layers=_mtp_layers(cfg, "num_nextn_predict_layers"),
        vllm_ssm_state_dtype="float32",
    )


def _layer_index_list_1_based(cfg: _Config, key: str, num_layers: int) -> set[int]:
    values = cfg.list(key) or []
    return {_as_int(value, f"{key}[]", 1, num_layers) - 1 for value in values}


# ------------------------------------------------------------------------------------------- other MoE


def _gpt_oss(cfg: _Config) -> dict:
    """gpt-oss: every layer MoE (intermediate_size = expert width), alternating sliding/full attention.
    Without layer_types, GptOssConfig sets layer i to sliding when (i + 1) % 2 == 1 (even 0-based index)."""
    num_layers = _num_layers(cfg)
    mixers = _mixers_from_layer_types(cfg, num_layers)
    if mixers is None:
        mixers = ["sliding" if (index + 1) % 2 else "full" for index in range(num_layers)]
    return dict(
        layers=_layers(mixers, ["moe"] * num_layers),
        attention=_attention(cfg),
        sliding_window=_sliding_window(cfg, mixers),
        moe=_moe(cfg, experts=("num_local_experts",), top_k=("num_experts_per_tok", "experts_per_token"),
                 width=("intermediate_size",)),
    )


def _minimax_m2(cfg: _Config) -> dict:
    """MiniMax-M2/M2.1/M2.5: full attention everywhere, 256 experts of intermediate_size, no shared expert.
    attn_type_list entry 0 would be MiniMax-01 lightning (linear) attention, which M2 does not use."""
    num_layers = _num_layers(cfg)
    attn_types = cfg.list("attn_type_list")
    if attn_types is not None and any(value != 1 for value in attn_types):
        raise ConfigError("config.json 'attn_type_list' has lightning-attention layers, which are not supported")
    shared_width = cfg.int("shared_intermediate_size", lo=0, default=0)
    return dict(
        layers=_layers(["full"] * num_layers, ["moe"] * num_layers),
        attention=_attention(cfg),
        moe=_moe(cfg, experts=("num_local_experts",), top_k=("num_experts_per_tok",), width=("intermediate_size",),
                 shared_count=1 if shared_width else 0, shared_width=shared_width or None),
        mtp_layers=_mtp_layers(cfg, "num_mtp_modules"),
    )


def _per_layer_int(cfg: _Config, key: str, default: Any = _MISSING, lo: int = 1) -> int:
    """Hunyuan writes some MoE settings as one value per layer; the engine needs them uniform."""
    value = cfg.raw(key)
    if isinstance(value, list):
        if not value:
            raise ConfigError(f"config.json '{key}' is an empty list")
        values = {_as_int(item, f"{key}[]", lo, MAX_WIDTH) for item in value}
        if len(values) != 1:
            raise ConfigError(f"config.json '{key}' differs between layers, which is not supported")
        return values.pop()
    return cfg.int(key, lo=lo, default=default)


def _hunyuan(cfg: _Config) -> dict:
    """Hunyuan-A13B (HunYuanMoEV1): every layer MoE plus a shared MLP of intermediate_size × num_shared_expert."""
    if cfg.bool("use_mla", False) or cfg.bool("use_cla", False):
        raise ConfigError("config.json 'use_mla'/'use_cla' (Hunyuan MLA / cross-layer attention) is not supported")
    num_layers = _num_layers(cfg)
    num_experts = cfg.int("num_experts", hi=MAX_EXPERTS)
    top_k = _per_layer_int(cfg, "moe_topk") if cfg.has("moe_topk") else cfg.int("num_experts_per_tok", hi=MAX_EXPERTS)
    if top_k > num_experts:
        raise ConfigError(f"config.json 'moe_topk' ({top_k}) exceeds the number of experts ({num_experts})")
    shared = _per_layer_int(cfg, "num_shared_expert", default=0, lo=0)
    width = _per_layer_int(cfg, "moe_intermediate_size")
    return dict(
        layers=_layers(["full"] * num_layers, ["moe"] * num_layers),
        attention=_attention(cfg),
        moe=MoeShape(num_experts=num_experts, experts_per_token=top_k, expert_intermediate_size=width,
                     num_shared_experts=shared,
                     shared_expert_intermediate_size=shared * cfg.int("intermediate_size") if shared else None),
    )


def _step3p5_sliding_attention(cfg: _Config) -> AttentionShape:
    """The sliding layers' heads. Step-3.5-Flash's config.json gives them in attention_other_setting
    ({"attention_type": "sliding_attention", "num_attention_heads": 96, "num_attention_groups": 8, "head_dim": 128});
    vLLM (vllm/model_executor/models/step3p5.py, Step3p5DecoderLayer) uses it for the layers whose layer_types entry
    equals its attention_type and falls back to the top-level num_attention_heads / num_attention_groups / head_dim
    for a key it lacks. Flat sliding_attention_heads / sliding_attention_groups (data-record spelling) also work."""
    other = cfg.mapping("attention_other_setting")
    if other is not None and other.get("attention_type", "sliding_attention") == "sliding_attention":
        return _attention(_Config(other, cfg._data), kv_key="num_attention_groups")
    return _attention(cfg, heads_key="sliding_attention_heads", kv_key="sliding_attention_groups")


def _step3p5(cfg: _Config) -> dict:
    """Step-3.5: full-attention layers (num_attention_heads / num_attention_groups KV heads) and sliding layers
    with their own head count (attention_other_setting, _step3p5_sliding_attention); MoE on moe_layers_enum."""
    num_layers = _num_layers(cfg)
    mixers = _mixers_from_layer_types(cfg, num_layers)
    if mixers is None:
        raise ConfigError("config.json has no 'layer_types'")
    moe_layers = cfg.raw("moe_layers_enum")
    if isinstance(moe_layers, str):
        moe_layers = [part for part in moe_layers.split(",") if part.strip()]
    if not isinstance(moe_layers, list):
        raise ConfigError("config.json has no 'moe_layers_enum'")
    moe_indexes = set()
    for item in moe_layers:
        try:
            item = int(item.strip()) if isinstance(item, str) else item
        except ValueError:
            raise ConfigError(f"config.json 'moe_layers_enum' entry {_show(item)} is not an integer") from None
        moe_indexes.add(_as_int(item, "moe_layers_enum[]", 0, num_layers - 1))
    ffns = ["moe" if index in moe_indexes else "dense" for index in range(num_layers)]
    shared_width = cfg.int("share_expert_dim", lo=0, default=0)
    return dict(
        layers=_layers(mixers, ffns),
        attention=_attention(cfg, kv_key="num_attention_groups"),
        sliding_attention=_step3p5_sliding_attention(cfg),
        sliding_window=_sliding_window(cfg, mixers),
        intermediate_size=cfg.int("intermediate_size") if "dense" in ffns else None,
        moe=_moe(cfg, experts=("moe_num_experts",), top_k=("moe_top_k",), width=("moe_intermediate_size",),
                 shared_count=1 if shared_width else 0, shared_width=shared_width or None) if moe_indexes else None,
    )


# ------------------------------------------------------------------------------- Gemma / Cohere / Llama 4


def _pattern_layout(cfg: _Config, num_layers: int, default_pattern: int | None) -> list[str]:
    """sliding_window_pattern p: layer i is global when (i + 1) % p == 0, sliding otherwise
    (Gemma3TextConfig: default 6; Cohere2Config: default 4)."""
    mixers = _mixers_from_layer_types(cfg, num_layers)
    if mixers is not None:
        return mixers
    key = "sliding_window_pattern" if cfg.has("sliding_window_pattern") else "_sliding_window_pattern"
    pattern = cfg.int(key, hi=MAX_LAYERS, default=default_pattern)
    if pattern is None:
        raise ConfigError("config.json has no 'layer_types' or 'sliding_window_pattern'")
    return ["full" if (index + 1) % pattern == 0 else "sliding" for index in range(num_layers)]


def _gemma3(cfg: _Config) -> dict:
    num_layers = _num_layers(cfg)
    mixers = _pattern_layout(cfg, num_layers, default_pattern=6)
    return dict(
        layers=_layers(mixers, ["dense"] * num_layers),
        attention=_attention(cfg),
        intermediate_size=cfg.int("intermediate_size"),
        sliding_window=_sliding_window(cfg, mixers),
    )


def _gemma4(cfg: _Config) -> dict:
    """Gemma 4: sliding layers use num_key_value_heads × head_dim; global layers num_global_key_value_heads ×
    global_head_dim, with one shared K/V projection when attention_k_eq_v is set.

    enable_moe_block (Gemma 4 26B-A4B): every layer keeps its dense MLP of intermediate_size and adds, in parallel,
    a routed block of num_experts experts of moe_intermediate_size, top_k_experts per token (transformers
    Gemma4TextDecoderLayer: the MLP's output and the experts' are summed before the residual). The dense MLP is
    read for every token like a shared expert, so it is sized as one: MoE layers with a shared expert of
    intermediate_size. The router's per-expert scales and the block's three extra norms (a few hundred thousand
    parameters) are left out."""
    if cfg.int("num_kv_shared_layers", lo=0, hi=MAX_LAYERS, default=0):
        raise ConfigError("config.json 'num_kv_shared_layers' (Gemma 4 KV sharing) is not supported yet")
    if cfg.int("hidden_size_per_layer_input", lo=0, default=0):
        raise ConfigError("config.json 'hidden_size_per_layer_input' (Gemma 4 per-layer embeddings) is not supported yet")
    num_layers = _num_layers(cfg)
    mixers = _pattern_layout(cfg, num_layers, default_pattern=None)
    sliding = _attention(cfg)
    global_kv_key = "num_global_key_value_heads" if cfg.has("num_global_key_value_heads") else "num_key_value_heads"
    global_dim_key = "global_head_dim" if cfg.has("global_head_dim") else "head_dim"
    full = _attention(cfg, kv_key=global_kv_key, head_dim_key=global_dim_key)
    full = AttentionShape(num_heads=full.num_heads, num_kv_heads=full.num_kv_heads, head_dim=full.head_dim,
                          k_eq_v=cfg.bool("attention_k_eq_v", False))
    attention = dict(attention=full, sliding_attention=sliding if sliding != full else None,
                     sliding_window=_sliding_window(cfg, mixers))
    if cfg.bool("enable_moe_block", False):
        return dict(attention, layers=_layers(mixers, ["moe"] * num_layers),
                    moe=_moe(cfg, experts=("num_experts",), top_k=("top_k_experts", "num_experts_per_tok"),
                             width=("moe_intermediate_size", "expert_intermediate_size"),
                             shared_count=1, shared_width=cfg.int("intermediate_size")))
    return dict(attention, layers=_layers(mixers, ["dense"] * num_layers), intermediate_size=cfg.int("intermediate_size"))


def _cohere2(cfg: _Config) -> dict:
    num_layers = _num_layers(cfg)
    mixers = _pattern_layout(cfg, num_layers, default_pattern=4)
    return dict(
        layers=_layers(mixers, ["dense"] * num_layers),
        attention=_attention(cfg),
        intermediate_size=cfg.int("intermediate_size"),
        sliding_window=_sliding_window(cfg, mixers),
    )


def _llama4(cfg: _Config) -> dict:
    """Llama 4 (Llama4TextConfig): MoE on layers interleave_moe_layer_step - 1, 2·step - 1, … (128 routed
    experts of intermediate_size + one shared expert of the same width); other layers a dense MLP of
    intermediate_size_mlp. RoPE layers use chunked attention (attention_chunk_size); NoPE layers — every
    no_rope_layer_interval-th layer, default 4, or the zeros of no_rope_layers — attend globally."""
    num_layers = _num_layers(cfg)
    step = cfg.int("interleave_moe_layer_step", hi=MAX_LAYERS, default=1)
    ffns = ["moe" if (index + 1) % step == 0 else "dense" for index in range(num_layers)]
    rope_flags = cfg.list("no_rope_layers")
    if rope_flags:
        if len(rope_flags) != num_layers:
            raise ConfigError(f"config.json 'no_rope_layers' has {len(rope_flags)} entries for {num_layers} layers")
        uses_rope = [bool(_as_int(flag, "no_rope_layers[]", 0, 1)) for flag in rope_flags]
    else:
        interval = cfg.int("no_rope_layer_interval", hi=MAX_LAYERS, default=4)
        uses_rope = [(index + 1) % interval != 0 for index in range(num_layers)]
    chunk = cfg.opt_int("attention_chunk_size", hi=MAX_CONTEXT)
    mixers = ["chunked" if rope and chunk else "full" for rope in uses_rope]
    width = cfg.int("intermediate_size")
    return dict(
        layers=_layers(mixers, ffns),
        attention=_attention(cfg),
        attention_chunk_size=chunk,
        intermediate_size=cfg.int("intermediate_size_mlp") if "dense" in ffns else None,
        moe=_moe(cfg, experts=("num_local_experts",), top_k=("num_experts_per_tok",), width=("intermediate_size",),
                 shared_count=1, shared_width=width),
    )


# ---------------------------------------------------------------------------------- recurrent hybrids


# hybrid_override_pattern letters (configuration_nemotron_h.py): M = Mamba-2 mixer, E = MoE FFN,
# * = attention, - = MLP. Each letter is one block with a single sub-layer.
_NEMOTRON_BLOCKS = {"M": ("mamba", "none"), "E": ("none", "moe"), "*": ("full", "none"), "-": ("none", "dense")}


# layers_block_type entries (the list newer Nemotron-H configs carry instead of the pattern string).
_NEMOTRON_BLOCK_TYPES = {"mamba": "M", "moe": "E", "attention": "*", "mlp": "-"}


def _nemotron_pattern(cfg: _Config) -> str:
    """hybrid_override_pattern, or the same letters from layers_block_type (Nemotron 3 Ultra's config has only
    the list, and no num_hidden_layers: the list's length is the depth)."""
    pattern = cfg.str("hybrid_override_pattern")
    if pattern is not None:
        unknown = sorted(set(pattern) - set(_NEMOTRON_BLOCKS))
        if unknown:
            raise ConfigError(f"config.json 'hybrid_override_pattern' has unknown block {unknown[0]!r}")
        return pattern
    types = cfg.list("layers_block_type")
    if not types:
        raise ConfigError("config.json has no 'hybrid_override_pattern' or 'layers_block_type'")
    if len(types) > MAX_LAYERS:
        raise ConfigError(f"config.json 'layers_block_type' has {len(types)} entries (at most {MAX_LAYERS})")
    letters = []
    for kind in types:
        if kind not in _NEMOTRON_BLOCK_TYPES:
            raise ConfigError(f"config.json 'layers_block_type' has unknown block {_show(kind)}")
        letters.append(_NEMOTRON_BLOCK_TYPES[kind])
    return "".join(letters)


# vllm/model_executor/models/config.py: with vLLM's --mamba-ssm-cache-dtype left at "auto", two config hooks set
# it from the checkpoint's config: NemotronHForCausalLMConfig.update_mamba_ssm_cache_dtype from
# mamba_ssm_cache_dtype, else DEFAULT_MAMBA_SSM_CACHE_DTYPE "float32" ("Only float32 is known to have no accuracy
# issues by default"); Qwen3_5ForConditionalGenerationConfig from the text config's mamba_ssm_dtype, if any.
_SSM_STATE_DTYPES = ("float32", "float16", "bfloat16")


def _ssm_state_dtype(cfg: _Config, key: str, *, default: str | None) -> str | None:
    dtype = cfg.str(key) or default
    if dtype is not None and dtype not in _SSM_STATE_DTYPES:
        raise ConfigError(f"config.json '{key}' {_show(dtype)} is not one of {', '.join(_SSM_STATE_DTYPES)}")
    return dtype


def _nemotron_h(cfg: _Config) -> dict:
    pattern = _nemotron_pattern(cfg)
    num_layers = _num_layers(cfg) if cfg.has("num_hidden_layers") else len(pattern)
    if len(pattern) != num_layers:
        raise ConfigError(f"config.json 'hybrid_override_pattern' has {len(pattern)} blocks for {num_layers} layers")
    blocks = [_NEMOTRON_BLOCKS[letter] for letter in pattern]
    fields: dict = dict(
        layers=tuple(LayerSpec(mixer=mixer, ffn=ffn) for mixer, ffn in blocks),
        attention=_attention(cfg),
        # Nemotron-H MLPs and experts are up/down projections with relu² (mlp_hidden_act), not gated SwiGLU.
        ffn_gated=False,
    )
    if "M" in pattern:
        fields["mamba"] = MambaShape(
            num_heads=cfg.int("mamba_num_heads", hi=MAX_HEADS),
            head_dim=cfg.int("mamba_head_dim", hi=MAX_HEAD_DIM),
            state_size=cfg.int("ssm_state_size", hi=MAX_HEAD_DIM),
            n_groups=cfg.int("n_groups", hi=MAX_HEADS, default=1),
            conv_kernel=cfg.int("conv_kernel", hi=MAX_KERNEL),
        )
        fields["vllm_ssm_state_dtype"] = _ssm_state_dtype(cfg, "mamba_ssm_cache_dtype", default="float32")
    if "-" in pattern:
        fields["intermediate_size"] = cfg.int("intermediate_size")
    if "E" in pattern:
        shared = cfg.int("n_shared_experts", lo=0, hi=MAX_EXPERTS, default=0)
        shared_width = cfg.int("moe_shared_expert_intermediate_size", default=0) if shared else None
        moe = _moe(cfg, experts=("n_routed_experts",), top_k=("num_experts_per_tok",),
                   width=("moe_intermediate_size",), shared_count=shared, shared_width=shared_width)
        # LatentMoE (Nemotron 3 Super/Ultra): the router reads the hidden state, fc1_latent_proj takes it to
        # moe_latent_size, the routed experts run there, fc2_latent_proj brings the sum back; the shared expert
        # stays at hidden_size (vLLM nemotron_h.py NemotronHMoE; llama.cpp ffn_latent_down/up).
        latent = cfg.opt_int("moe_latent_size")
        fields["moe"] = MoeShape(moe.num_experts, moe.experts_per_token, moe.expert_intermediate_size,
                                 moe.num_shared_experts, moe.shared_expert_intermediate_size, latent_size=latent)
    return fields


def _lfm2(cfg: _Config) -> dict:
    """LFM2: short-convolution ("conv") and GQA blocks, each followed by a gated MLP.

    Lfm2MLP (modeling_lfm2.py) shrinks the configured width when block_auto_adjust_ff_dim is true (the
    Lfm2Config default): int(2 × ff / 3), × block_ffn_dim_multiplier, rounded up to block_multiple_of.
    Check: LFM2-350M 6656 → 4437 → 4608, which gives its published 354 M parameters.
    """
    num_layers = _num_layers(cfg)
    mixers = _mixers_from_layer_types(cfg, num_layers)
    if mixers is None:
        raise ConfigError("config.json has no 'layer_types'")
    width = cfg.first_int(("block_ff_dim", "intermediate_size"))
    if cfg.bool("block_auto_adjust_ff_dim", True):
        width = int(2 * width / 3)
        multiplier = cfg.raw("block_ffn_dim_multiplier")
        if multiplier is not None:
            if isinstance(multiplier, bool) or not isinstance(multiplier, (int, float)) or not 0 < multiplier <= 64:
                raise ConfigError(f"config.json 'block_ffn_dim_multiplier' must be a positive number, got {_show(multiplier)}")
            width = int(multiplier * width)
        multiple_of = cfg.int("block_multiple_of", default=256)
        width = max(multiple_of, multiple_of * ((width + multiple_of - 1) // multiple_of))
    return dict(
        layers=_layers(mixers, ["dense"] * num_layers),
        attention=_attention(cfg),
        intermediate_size=width,
        conv=ConvShape(l_cache=cfg.int("conv_L_cache", hi=MAX_KERNEL)),
    )


# ------------------------------------------------------------------------------------------------ tables

_BUILDERS: dict[str, Callable[[_Config], dict]] = {
    "llama": _dense,
    "mistral": _dense,
    "qwen2": _dense,
    "qwen3": _dense,
    "phi3": _dense,
    "glm4": _dense,
    "mixtral": _mixtral,
    "qwen2_moe": _qwen_moe,
    "qwen3_moe": _qwen_moe,
    "qwen3_next": _qwen_hybrid,
    "qwen3_5": _qwen3_5,
    "qwen3_5_moe": _qwen3_5,
    "deepseek_v2": _deepseek,
    "deepseek_v3": _deepseek,
    "deepseek_v32": _deepseek,
    "kimi_k2": _deepseek,
    "glm4_moe_lite": _deepseek,
    "glm_moe_dsa": _deepseek,
    "glm4_moe": _glm4_moe,
    "deepseek_v4": _deepseek_v4,
    "kimi_linear": _kimi_linear,
    "gpt_oss": _gpt_oss,
    "minimax_m2": _minimax_m2,
    "hunyuan": _hunyuan,
    "step3p5": _step3p5,
    "gemma3": _gemma3,
    "gemma4": _gemma4,
    "cohere2": _cohere2,
    "llama4": _llama4,
    "nemotron_h": _nemotron_h,
    "lfm2": _lfm2,
}

# Text-model names used inside multimodal wrappers, and variant names with the same shapes.
_ALIASES = {
    "gemma3_text": "gemma3",
    "gemma4_text": "gemma4",
    "llama4_text": "llama4",
    "qwen3_5_text": "qwen3_5",
    "qwen3_5_moe_text": "qwen3_5_moe",
    "hunyuan_v1_moe": "hunyuan",
}

# For records that give only "architectures" (documentation excerpts): the class → model_type it belongs to.
_ARCHITECTURE_MODEL_TYPES = {
    "LlamaForCausalLM": "llama",
    "MistralForCausalLM": "mistral",
    "MixtralForCausalLM": "mixtral",
    "Qwen2ForCausalLM": "qwen2",
    "Qwen3ForCausalLM": "qwen3",
    "Qwen3MoeForCausalLM": "qwen3_moe",
    "Qwen3NextForCausalLM": "qwen3_next",
    "Phi3ForCausalLM": "phi3",
    "Glm4ForCausalLM": "glm4",
    "Glm4MoeForCausalLM": "glm4_moe",
    "GlmMoeDsaForCausalLM": "glm_moe_dsa",
    "DeepseekV3ForCausalLM": "deepseek_v3",
    "GptOssForCausalLM": "gpt_oss",
    "MiniMaxM2ForCausalLM": "minimax_m2",
    "Gemma3ForCausalLM": "gemma3",
    "NemotronHForCausalLM": "nemotron_h",
    "Lfm2ForCausalLM": "lfm2",
    "Llama4ForConditionalGeneration": "llama4",
}
