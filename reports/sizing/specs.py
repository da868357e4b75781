"""Input dataclasses of the sizing engine.

The engine is pure Python: it never imports Django. ``catalog`` turns ORM rows into these specs
(``catalog/specs.py``) and ``reports.sizing.config_parser`` turns a Hugging Face config.json into a
``ModelSpec``. Every shape here is named as in config.json so a reader can check it against the file.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields
from typing import Literal

# Mixer of one decoder layer: what the layer does across tokens.
#   full     - softmax attention over the whole context (GQA/MHA/MQA, or MLA when ModelSpec.mla is set)
#   sliding  - softmax attention over the last `sliding_window` tokens (Gemma 2/3/4, gpt-oss, Step-3.5 ...)
#   chunked  - Llama 4 chunked local attention (attention_chunk_size)
#   linear   - gated delta-net / linear attention (Qwen3-Next, Qwen3.5): fixed recurrent state per sequence
#   mamba    - Mamba-2 SSM block (Nemotron-H): fixed conv + SSM state per sequence
#   conv     - short convolution block (LFM2): fixed conv state per sequence
#   none     - no token mixer in this block (Nemotron-H pure MLP/MoE blocks)
#   window   - DeepSeek-V4 layer that attends only over its sliding window (compress_ratios 0)
#   csa      - DeepSeek-V4 compressed sparse attention: window + a 4× compressed cache read through a lightning
#              indexer's top-k (compress_ratios 4)
#   hca      - DeepSeek-V4 heavily compressed attention: window + a 128× compressed cache read whole (ratio 128)
Mixer = Literal["full", "sliding", "chunked", "linear", "mamba", "conv", "none", "window", "csa", "hca"]
# Feed-forward of one layer: gated dense MLP, mixture of experts, or none (Nemotron-H mixer-only blocks).
Ffn = Literal["dense", "moe", "none"]
Confidence = Literal["config.json", "documentation", "estimated"]


@dataclass(frozen=True)
class LayerSpec:
    mixer: Mixer
    ffn: Ffn


@dataclass(frozen=True)
class AttentionShape:
    """Softmax-attention projections of one layer kind (GQA/MHA/MQA)."""

    num_heads: int
    num_kv_heads: int
    head_dim: int  # per-head K (and Q) width; config "head_dim", else hidden_size // num_attention_heads
    v_head_dim: int | None = None  # None: same as head_dim
    k_eq_v: bool = False  # Gemma 4 global layers store one tensor for K and V ("attention_k_eq_v")

    @property
    def v_dim(self) -> int:
        return self.head_dim if self.v_head_dim is None else self.v_head_dim


@dataclass(frozen=True)
class MlaShape:
    """Multi-head latent attention (DeepSeek-V2/V3, Kimi K2, GLM-5, GLM-4.7-Flash)."""

    num_heads: int
    q_lora_rank: int | None  # None: plain q_proj (DeepSeek-V2-Lite)
    kv_lora_rank: int
    qk_nope_head_dim: int
    qk_rope_head_dim: int
    v_head_dim: int


@dataclass(frozen=True)
class LinearAttentionShape:
    """Gated delta-net layers (Qwen3-Next / Qwen3.5 "linear_attention"), or Kimi Delta Attention (Kimi K3
    kimi_linear "kda_layers": q, k, v, output gate and a low-rank forget gate, the same conv and state shapes)."""

    num_key_heads: int
    num_value_heads: int
    key_head_dim: int
    value_head_dim: int
    conv_kernel: int
    kind: Literal["gated_delta_net", "kda"] = "gated_delta_net"
    gate_rank: int | None = None  # KDA: the forget gate's low-rank width (f_a: hidden → rank → heads × head_dim)


@dataclass(frozen=True)
class MambaShape:
    """Mamba-2 mixer (Nemotron-H): d_inner = num_heads × head_dim."""

    num_heads: int
    head_dim: int
    state_size: int
    n_groups: int
    conv_kernel: int


@dataclass(frozen=True)
class ConvShape:
    """LFM2 short-convolution block: state of (L_cache - 1) × hidden per sequence."""

    l_cache: int


@dataclass(frozen=True)
class CompressedAttentionShape:
    """DeepSeek-V4 attention (transformers models/deepseek_v4/modeling_deepseek_v4.py DeepseekV4Attention @0197608):
    low-rank q (q_a 'q_lora_rank', q_b to heads × head_dim), one shared K=V head of head_dim (its last
    qk_rope_head_dim rotary) over a sliding window on every layer, a grouped low-rank output projection (o_groups
    groups to o_lora_rank each, then to hidden), per-head sinks; CSA layers add a compressor (kv and gate
    projections to 2 × head_dim, window-slot bias) and a lightning indexer (its own compressor at
    index_head_dim and q_b from the q latent); HCA layers a compressor at head_dim. Residuals run over hc_mult
    hyper-connection streams, each block mixing them with two DeepseekV4HyperConnection modules."""

    num_heads: int
    head_dim: int
    qk_rope_head_dim: int
    q_lora_rank: int
    o_groups: int
    o_lora_rank: int
    csa_ratio: int  # compress_ratios value of the CSA layers (4)
    hca_ratio: int  # compress_ratios value of the HCA layers (128)
    hc_mult: int  # hyper-connection streams
    hash_layers: int  # num_hash_layers: the first MoE layers route by a token-id table (tid2eid)


@dataclass(frozen=True)
class DsaIndexerShape:
    """DeepSeek Sparse Attention "lightning indexer" (DeepSeek-V3.2, GLM-5): config index_n_heads,
    index_head_dim, index_topk. It keeps its own small key cache of index_head_dim per token per layer."""

    num_heads: int
    head_dim: int
    topk: int


@dataclass(frozen=True)
class MoeShape:
    num_experts: int  # routed experts per MoE layer
    experts_per_token: int
    expert_intermediate_size: int  # moe_intermediate_size
    num_shared_experts: int = 0
    shared_expert_intermediate_size: int | None = None  # None: num_shared × expert_intermediate_size
    # LatentMoE (Nemotron 3 Super/Ultra, moe_latent_size): the routed experts run in a latent of this width,
    # entered and left through two dense projections (hidden → latent → hidden); None: experts at hidden_size.
    latent_size: int | None = None

    def expert_width(self, hidden_size: int) -> int:
        """The width the routed experts read and write: the latent when there is one, else the hidden size."""
        return self.latent_size or hidden_size


class _RemembersItsHash:
    """Base of an immutable spec whose hash is computed once (ModelSpec.__hash__ says why). The hash is kept in a
    slot, outside the instance's __dict__ (which stays the fields, for ModelSpec(**spec.__dict__)), and left out of
    its pickled and copied state: a string's hash differs between processes, and a copy hashes its own fields."""

    __slots__ = ("_hash",)

    def __getstate__(self) -> dict[str, object]:
        return self.__dict__


def _remembered_hash(spec: _RemembersItsHash) -> int:
    """The hash of an immutable spec's fields, computed on the first call and read from its slot after."""
    try:
        return spec._hash  # type: ignore[no-any-return]
    except AttributeError:
        value = hash(tuple(getattr(spec, f.name) for f in fields(spec)))  # type: ignore[arg-type]
        object.__setattr__(spec, "_hash", value)  # frozen: its own __setattr__ refuses every name
        return value


@dataclass(frozen=True)
class ModelSpec(_RemembersItsHash):
    slug: str
    name: str
    architecture: str  # config "model_type", e.g. "llama", "deepseek_v3", "qwen3_next"
    hidden_size: int
    vocab_size: int
    layers: tuple[LayerSpec, ...]
    attention: AttentionShape | None  # full-attention layers (None when every full layer is MLA)
    intermediate_size: int | None = None  # dense FFN width
    tie_word_embeddings: bool = False
    max_context: int | None = None
    native_dtype: str = "bf16"  # bf16 | fp16 | fp32 | fp8 | mxfp4 | fp8_fp4 (the checkpoint's weight dtype)
    # quantization_config.quant_method of the released checkpoint ("" when unquantized): the same MXFP4 weights load
    # through different vLLM code ("mxfp4": Mxfp4MoEMethod, which pads the experts; "compressed-tensors") and cover
    # different tensors.
    checkpoint_quant_method: str = ""
    # The checkpoint wraps the language model with a vision encoder (text_config / *ForConditionalGeneration):
    # vLLM loads that encoder too; its shapes are not parsed, so the estimate names it instead of counting it.
    multimodal: bool = False
    sliding_attention: AttentionShape | None = None  # when sliding layers differ from full ones
    sliding_window: int | None = None
    attention_chunk_size: int | None = None
    mla: MlaShape | None = None
    linear_attention: LinearAttentionShape | None = None
    mamba: MambaShape | None = None
    conv: ConvShape | None = None
    moe: MoeShape | None = None
    mtp_layers: int = 0  # DeepSeek/GLM "num_nextn_predict_layers": extra layers, optional to load
    dsa_indexer: DsaIndexerShape | None = None  # DeepSeek-V3.2 / GLM-5 sparse-attention indexer (and V4's CSA)
    compressed_attention: CompressedAttentionShape | None = None  # DeepSeek-V4 window / csa / hca layers
    # False for up/down-only FFNs (Nemotron-H relu2 MLP and experts): two matrices per FFN, not three.
    ffn_gated: bool = True
    attention_bias: bool = False
    # What the publisher states (for comparison and for "estimated" models without shapes).
    stated_params_total: float | None = None
    stated_params_active: float | None = None
    confidence: Confidence = "config.json"
    hf_repo: str = ""
    gguf_repo: str = ""
    gguf_repo_quants: tuple[str, ...] = ()  # the file types gguf_repo publishes; () when not known
    # For models without shapes ("estimated"): the nearest sourced family member, whose per-layer attention
    # shapes stand in for the KV cache. Every figure resting on it is marked "estimated".
    kv_proxy: ModelSpec | None = None
    # Published file sizes in bytes by quant name (GGUF listings): used for recipes shapes cannot predict (UD-*).
    published_sizes: tuple[tuple[str, int], ...] = ()
    # The dtype vLLM keeps the recurrent (temporal) state of Mamba-2 / gated delta-net layers in, when the model's
    # vLLM config hook sets mamba_ssm_cache_dtype from its config (NemotronH: mamba_ssm_cache_dtype, float32 when
    # absent; Qwen3.5: mamba_ssm_dtype); None: the model dtype, like the conv state.
    vllm_ssm_state_dtype: str | None = None

    # The engine's lru_caches key on specs, and the generated hash walks every LayerSpec of the tuple (~300 hash
    # calls for a 92-layer model) on each lookup; a spec is immutable, so its hash is computed once
    # (_RemembersItsHash: in a slot, outside the fields).
    __hash__ = _remembered_hash

    @property
    def num_layers(self) -> int:
        return len(self.layers)

    @property
    def has_shapes(self) -> bool:
        """False for catalog models known only by their stated parameter counts."""
        return bool(self.layers)

    @property
    def layer_count_known(self) -> bool:
        """Whether the speed model knows the layers (its own shapes or a sourced family member's). Without them the
        fixed per-layer kernel time (throughput.decode_speed's overhead_s: 3.3 of 5.55 ms per token for
        Qwen3.5-35B-A3B on an RTX 4090) is left out, and the speeds are upper bounds."""
        return self.has_shapes or self.kv_proxy is not None


HardwareKind = Literal["discrete", "accelerator", "unified"]
Backend = Literal["cuda", "rocm", "metal", "vulkan", "sycl", "cann", "other"]


@dataclass(frozen=True)
class HardwareSpec(_RemembersItsHash):
    slug: str
    name: str
    vendor: str
    memory_gb: float  # nominal, decimal GB as the vendor states it
    bandwidth_gbs: float  # peak memory bandwidth, decimal GB/s
    kind: HardwareKind = "discrete"
    backend: Backend = "cuda"
    fp16_tflops: float | None = None  # dense FP16/BF16 tensor, FP32 accumulate; None = not published
    fp8_tflops: float | None = None
    tdp_w: float | None = None
    usable_memory_factor: float | None = None  # None: 0.95, or 0.78 for unified memory (seed pages)
    interconnect: str = ""
    interconnect_gbs: float | None = None  # bidirectional aggregate of one accelerator's GPU-to-GPU links
    # A full mesh of direct links (Infinity Fabric, Gaudi's RoCE ports): the number of peers sharing
    # interconnect_gbs equally; None = a switch, every peer at the full bandwidth (throughput.allreduce_time).
    interconnect_mesh_peers: int | None = None
    price_usd: float | None = None
    # Dense FP16 tensor peak with FP16 accumulate. GeForce parts run FP32 accumulate at half their tensor rate,
    # so for them this is 2 x fp16_tflops (NVIDIA GA102/AD102/GB202 whitepapers); professional and datacenter
    # parts run both at the same rate. None = same as fp16_tflops.
    fp16_acc_tflops: float | None = None
    # GPU micro-architecture family, lower case ("ampere", "ada", "hopper", "blackwell", ...); "" = unknown.
    # The speed model uses it where an engine's kernels cannot reach the datasheet peak on a family
    # (reports/sizing/throughput.py, LLAMA_CPP_TENSOR_PEAK_SHARE).
    architecture: str = ""

    # Every fit and plan looks an accelerator up in the engine's lru_caches (~600 lookups a report page), and the
    # generated hash walks its 19 fields each time: computed once, as ModelSpec's.
    __hash__ = _remembered_hash

    @property
    def mesh_link_gbs(self) -> float | None:
        """Bidirectional bandwidth of the direct link to one peer in a full mesh (None: a switch or unknown)."""
        if not self.interconnect_gbs or not self.interconnect_mesh_peers:
            return None
        return self.interconnect_gbs / self.interconnect_mesh_peers


@dataclass(frozen=True)
class CloudOfferSpec:
    provider: str
    instance: str
    accelerator_slug: str
    gpu_count: int
    hourly_usd: float  # for the whole instance
    billing: str = ""
    verified: str = ""  # ISO date
    verified_month_only: bool = False  # the source dates the price by month: `verified` is its 1st day
    url: str = ""
    price_doubt: str = ""  # why the rate is not confirmed by its source ("": confirmed); see ``confirmed_offers``

    @property
    def billed_hours_per_day(self) -> float | None:
        """Reserved capacity is billed around the clock on a term contract, whatever the hours of use; None for
        offers billed by use (per second, per hour, spot, on demand)."""
        return 24.0 if self.billing == "reserved" else None

    @property
    def confirmed(self) -> bool:
        """Whether the rate is confirmed by its source: only confirmed offers are picked as the cheapest."""
        return not self.price_doubt


def confirmed_offers(offers: Iterable[CloudOfferSpec]) -> tuple[CloudOfferSpec, ...]:
    """The offers whose rate its source confirms: the only ones a "cheapest offer" is picked from (cost per 1M
    tokens, rent vs. buy, the cloud recommendation). A doubted rate (the seed pages' Vast.ai 8× A100 at $3.54/h,
    $0.44 per GPU-hour against a lowest A100 spot rate of $0.86 in the price data) would otherwise win every pick
    it fits."""
    return tuple(offer for offer in offers if offer.confirmed)


@dataclass(frozen=True)
class Scenario:
    """One configurator state / one `manage.py estimate` call."""

    quant: str = "Q4_K_M"
    context: int = 8192
    batch: int = 1
    kv_dtype: str = "f16"
    engine: Literal["llama.cpp", "vllm"] = "llama.cpp"
    gpus: int = 1
    offload_pct: float | None = None  # None = auto (only what does not fit)
    depth: int = 0
    prompt: int = 4096
    gpu_memory_utilization: float = 0.9
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    flash_attention: bool = True
    n_ubatch: int = 512
    swa_full: bool = False
    system_ram_bandwidth_gbs: float | None = None


_SCENARIO_FIELDS = frozenset(f.name for f in fields(Scenario))


def scenario_with(scenario: Scenario, **changes: object) -> Scenario:
    """``dataclasses.replace(scenario, **changes)``, about seven times faster: an uncached page derives
    hundreds of scenarios (each accelerator × count, format and depth it sizes), and replace reads every field through its
    Field objects and then runs the frozen __init__, which sets each field through object.__setattr__. Scenario has
    no __post_init__ and no init=False field, so its instance dict is exactly what __init__ stores: a copy of it with
    the changes is the same scenario (every field is immutable: the copies share nothing that could change)."""
    if not changes.keys() <= _SCENARIO_FIELDS:
        raise TypeError(f"Scenario has no field {', '.join(sorted(changes.keys() - _SCENARIO_FIELDS))}")
    new = object.__new__(Scenario)
    state = new.__dict__
    state.update(scenario.__dict__)
    state.update(changes)
    return new
