"""Fine-tuning memory: exact values of our formula for Llama-3.1-8B, the issue's sanity anchors, MoE/MLA
adapter targets, GPU counts, and monotonic properties.

Llama-3.1-8B (bench/model_specs.py, from its config.json): 32 layers, hidden 4096, intermediate 14336,
32 heads / 8 KV heads × 128, vocab 128256, untied embeddings; 8,030,261,248 parameters:
  embeddings and lm_head 2 × 128256 × 4096 = 1,050,673,152
  per layer q 4096² + k, v 2 × 4096 × 1024 + o 4096² + MLP 3 × 4096 × 14336 = 218,103,808, + 2 norms 8,192
  32 × 218,112,000 + 1,050,673,152 + final norm 4,096 = 8,030,261,248
Scenario of the anchors: seq 2048, batch 1, gradient checkpointing, FlashAttention, LoRA rank 16 on all
linear layers.
"""

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.model_specs import LLAMA_3_1_8B, first_dense_then_moe
from reports.sizing.errors import SizingError
from reports.sizing.finetune import (
    METHODS,
    NF4_DOUBLE_QUANT_BITS,
    FinetuneOptions,
    finetune_memory,
    finetune_memory_all,
)
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

GIB = 2**30
LLAMA_PARAMS = 8_030_261_248

# LoRA r=16 on q, k, v, o, gate, up, down, per layer Σ(d_in + d_out):
#   q 4096+4096 + k 4096+1024 + v 4096+1024 + o 4096+4096 + 3 × (4096+14336) = 81,920
#   × 16 × 32 layers = 41,943,040 adapter parameters (0.52 % of the model)
LLAMA_ADAPTERS = 41_943_040

# Activations with checkpointing (bytes):
#   checkpoints 32 layers × 2048 tokens × 4096 × 2 B            =   536,870,912
#   loss head 2048 × 128256 × 12 B                               = 3,152,019,456
#     (HF's unfused loss at its backward peak: the fp32 log-softmax 4 B with nll_loss's fp32 gradient of it 4 B and
#      log-softmax's fp32 gradient of the logits 4 B; the forward holds 10 B; finetune.LOSS_HEAD_BYTES_PER_LOGIT)
#   one recomputed layer 2048 × 168,064 B = 344,195,072 (< loss head), where per token
#     attention 2 B × (norm 4096 + qkv input 4096 + Q 4096 + K 1024 + V 1024 + o input 4096)
#               + FlashAttention LSE 4 B × 32 heads = 36,992
#     MLP 2 B × (norm 4096 + input 4096) + 2 B × 4 × 14336                                         = 131,072
#   → 536,870,912 + max(3,152,019,456, 344,195,072)             = 3,688,890,368
LLAMA_ACTIVATIONS = 3_688_890_368
CUDA_CONTEXT = 1343 * 2**20  # 1,408,237,568 B (HF "Model training anatomy")


def test_nf4_double_quant_bits_per_weight():
    # QLoRA §3: 4 + 8/64 + 32/(64·256) = 4 + 0.125 + 0.001953125
    assert NF4_DOUBLE_QUANT_BITS == 4.126953125


def test_llama_qlora_exact_terms():
    result = finetune_memory(LLAMA_3_1_8B, LLAMA_PARAMS, "qlora")
    # 16-bit: embeddings + lm_head 1,050,673,152 + norms (2 × 32 + 1) × 4096 = 266,240 → 1,050,939,392
    # NF4: (8,030,261,248 − 1,050,939,392) = 6,979,321,856 × 4.126953125 / 8 = 3,600,416,768
    assert result.weights == 3_600_416_768 + 1_050_939_392 * 2  # 5,702,295,552 B = 5.31 GiB
    assert result.trainable_params == LLAMA_ADAPTERS
    assert result.adapters == LLAMA_ADAPTERS * 4  # fp32 adapters (PEFT autocast_adapter_dtype)
    assert result.gradients == LLAMA_ADAPTERS * 4
    assert result.optimizer == "paged_adamw8bit"
    assert result.optimizer_states == LLAMA_ADAPTERS * 2 * (1 + 4 / 256)  # 85,196,800
    assert result.master_weights == 0
    assert result.activations == LLAMA_ACTIVATIONS
    # CUDA context + one dequantized bf16 down/up matrix 4096 × 14336 × 2 = 117,440,512
    assert result.overhead == CUDA_CONTEXT + 117_440_512
    # 5,702,295,552 + 2 × 167,772,160 + 85,196,800 + 3,688,890,368 + 1,525,678,080 = 11,337,605,120
    assert result.total == 11_337_605_120  # 10.56 GiB


def test_llama_lora_exact_terms():
    result = finetune_memory(LLAMA_3_1_8B, LLAMA_PARAMS, "lora")
    assert result.weights == LLAMA_PARAMS * 2  # 16,060,522,496 B bf16 frozen base
    assert result.optimizer == "adamw"
    assert result.optimizer_states == LLAMA_ADAPTERS * 8
    # 16,060,522,496 + 3 × 167,772,160 (adapters, grads) … + 335,544,320 (Adam) + activations + context
    assert result.total == 16_060_522_496 + 167_772_160 * 2 + 335_544_320 + LLAMA_ACTIVATIONS + CUDA_CONTEXT
    assert result.total == 21_828_739_072  # 20.33 GiB


def test_llama_full_exact_terms():
    result = finetune_memory(LLAMA_3_1_8B, LLAMA_PARAMS, "full")
    # 2 (bf16 weights) + 2 (bf16 grads) + 4 (fp32 master) + 8 (Adam m, v) = 16 B/param (ZeRO §3.1)
    assert (result.weights, result.gradients, result.master_weights, result.optimizer_states) == (
        LLAMA_PARAMS * 2, LLAMA_PARAMS * 2, LLAMA_PARAMS * 4, LLAMA_PARAMS * 8)
    assert result.adapters == 0
    assert result.trainable_params == LLAMA_PARAMS
    # 16 × 8,030,261,248 = 128,484,179,968 + 3,688,890,368 + 1,408,237,568
    assert result.total == 133_581_307_904  # 124.41 GiB


def test_llama_anchor_ranges():
    """The issue's sanity anchors for Llama-3.1-8B, seq 2048, batch 1, checkpointing. QLoRA's upper end is 11 GiB,
    not 9, and LoRA's 21, not 20: Hugging Face's unfused loss holds 2.9 GiB of logits at 2048 tokens at its backward
    peak (12 B × 128,256 per token); Unsloth's requirements table gives 22 GB (20.5 GiB) for 8B LoRA."""
    results = finetune_memory_all(LLAMA_3_1_8B, LLAMA_PARAMS)
    gib = {method: memory.total / GIB for method, memory in results.items()}
    assert 120 <= gib["full"] <= 130
    assert 16 <= gib["lora"] <= 21
    assert 6 <= gib["qlora"] <= 11


def test_full_fine_tuning_needs_14_bytes_per_param_beyond_the_weights_not_the_seeds_6_2():
    result = finetune_memory(LLAMA_3_1_8B, LLAMA_PARAMS, "full")
    beyond_weights = (result.gradients + result.master_weights + result.optimizer_states) / LLAMA_PARAMS
    assert beyond_weights == 14  # 2 + 4 + 8
    assert result.training_state / LLAMA_PARAMS == 14  # full fine-tuning has no adapters
    eight_bit = finetune_memory(LLAMA_3_1_8B, LLAMA_PARAMS, "full", FinetuneOptions(optimizer="adamw8bit"))
    # 2 + 2 + 4 + 2 × (1 + 4/256) = 10.03125 B/param
    assert eight_bit.sharded / LLAMA_PARAMS == 10.03125


def test_attention_only_targets():
    result = finetune_memory(LLAMA_3_1_8B, LLAMA_PARAMS, "lora", FinetuneOptions(target_modules="attention"))
    # 16 × 32 × (8192 + 5120 + 5120 + 8192) = 13,631,488
    assert result.trainable_params == 13_631_488


def test_without_checkpointing_every_layer_is_kept():
    options = FinetuneOptions(gradient_checkpointing=False)
    result = finetune_memory(LLAMA_3_1_8B, LLAMA_PARAMS, "lora", options)
    # 32 × 344,195,072 + 3,152,019,456 = 14,166,261,760
    assert result.activations == 14_166_261_760


def test_without_flash_attention_the_score_matrix_appears():
    options = FinetuneOptions(seq_len=16384, flash_attention=False)
    result = finetune_memory(LLAMA_3_1_8B, LLAMA_PARAMS, "lora", options)
    # one layer: 16384 × 168,064 = 2,753,560,576 + 5 B × 32 heads × 16384² = 42,949,672,960 → 45,703,233,536
    # > loss head 16384 × 128256 × 12 = 25,216,155,648; checkpoints 32 × 16384 × 4096 × 2 = 4,294,967,296
    assert result.activations == 4_294_967_296 + 45_703_233_536
    with_flash = finetune_memory(LLAMA_3_1_8B, LLAMA_PARAMS, "lora", FinetuneOptions(seq_len=16384))
    assert with_flash.activations == 4_294_967_296 + 25_216_155_648


# DeepSeek-V2-Lite shapes: hidden 2048, 27 layers (layer 0 dense, intermediate 10944), MLA with no
# q_lora, kv_lora 512, nope 128, rope 64, v 128, 16 heads; 64 routed experts (top-6, width 1408) and
# 2 shared experts; vocab 102400.
V2_LITE = ModelSpec(
    slug="deepseek-v2-lite",
    name="DeepSeek-V2-Lite",
    architecture="deepseek_v2",
    hidden_size=2048,
    vocab_size=102400,
    layers=first_dense_then_moe(27, 1),
    attention=None,
    intermediate_size=10944,
    mla=MlaShape(num_heads=16, q_lora_rank=None, kv_lora_rank=512, qk_nope_head_dim=128,
                 qk_rope_head_dim=64, v_head_dim=128),
    moe=MoeShape(num_experts=64, experts_per_token=6, expert_intermediate_size=1408, num_shared_experts=2),
)
# Parameters from these shapes: embeddings + head 2 × 102400 × 2048 = 419,430,400; per layer MLA
# 6,291,456 + 1,179,648 + 2,097,152 + 4,194,304 + kv norm 512 + 2 norms 4,096 = 13,767,168 (× 27);
# dense MLP 3 × 2048 × 10944 = 67,239,936; MoE 64 × 3 × 2048 × 1408 + shared 3 × 2048 × 2816
# + router 64 × 2048 = 571,080,704 (× 26); final norm 2,048 → 15,706,484,224 (the published count)
V2_LITE_PARAMS = 15_706_484_224


def test_moe_mla_adapters_skip_routed_experts():
    result = finetune_memory(V2_LITE, V2_LITE_PARAMS, "lora")
    # MLA Σ(d_in + d_out): q_proj 2048+3072, kv_a 2048+576, kv_b 512+4096, o 2048+2048 = 16,448
    # layer 0 dense MLP 3 × (2048 + 10944) = 38,976; MoE layers: shared 3 × (2048 + 2 × 1408) = 14,592
    # (16,448 + 38,976) + 26 × (16,448 + 14,592) = 862,464; × rank 16 = 13,799,424
    assert result.trainable_params == 13_799_424


def test_moe_qlora_holds_the_experts_in_nf4_and_the_stock_stack_in_bf16():
    """The default sizes a MoE's routed experts in NF4, as Unsloth's patched loader holds them (and as "4-bit QLoRA"
    and the seed pages' GLM-4.5 figure promise); transformers v5 with stock bitsandbytes stores them as fused
    nn.Parameter tensors it does not quantize (bitsandbytes #1849): moe_experts="bf16" sizes that stack."""
    default = finetune_memory(V2_LITE, V2_LITE_PARAMS, "qlora")
    # 16-bit: embeddings + head 419,430,400 + norms (2 × 27 + 1) × 2048 = 112,640 → 419,543,040
    # NF4: 15,706,484,224 − 419,543,040 = 15,286,941,184 × 4.126953125 / 8 = 7,886,061,211.0
    assert default.weights == 15_286_941_184 * 4.126953125 / 8 + 419_543_040 * 2
    # one dequantized matrix at a time, the largest of any role: layer 0's dense up/gate 2048 × 10944 × 2 B
    assert default.overhead == CUDA_CONTEXT + 44_826_624
    stock = finetune_memory(V2_LITE, V2_LITE_PARAMS, "qlora", FinetuneOptions(moe_experts="bf16"))
    # 16-bit also: routed experts 26 × 64 × 3 × 2048 × 1408 = 14,394,851,328 + routers 26 × 64 × 2048 = 3,407,872
    #   → 14,817,802,240; NF4: 15,706,484,224 − 14,817,802,240 = 888,681,984 × 4.126953125 / 8 = 458,443,611.375
    assert stock.weights == 458_443_611.375 + 14_817_802_240 * 2  # 30,094,048,091.375 B = 28.03 GiB
    # the same adapters either way, and as LoRA's: none on the routed experts or routers
    assert default.trainable_params == stock.trainable_params == 13_799_424
    # one dequantized nn.Linear: layer 0's dense up/gate 2048 × 10944 × 2 B = 44,826,624 (experts are not NF4)
    assert stock.overhead == CUDA_CONTEXT + 44_826_624


def test_moe_recomputed_layer_counts_routed_copies():
    options = FinetuneOptions(gradient_checkpointing=False, seq_len=1)
    result = finetune_memory(V2_LITE, V2_LITE_PARAMS, "lora", options)
    # One token, no checkpointing: Σ layers + loss head 102400 × 12 = 1,228,800 B. Per token:
    #   MLA 2 × (2·2048 + 576 + 512 + 2·16·192 + 2·16·128) + 4 × 16 = 2 × 15,424 + 64 = 30,912
    #   dense 2 × 2 × 2048 + 2 × 4 × 10944 = 95,744
    #   MoE 2 × 2 × 2048 + 4 × 64 + 2 × 2 × 6 × 2048 + 6 × 2 × 4 × 1408 + 2 × 4 × 2816
    #       = 8,192 + 256 + 49,152 + 67,584 + 22,528 = 147,712
    #   30,912 × 27 + 95,744 + 26 × 147,712 = 834,624 + 95,744 + 3,840,512 = 4,770,880
    assert result.activations == 4_770_880 + 1_228_800


def test_fsdp_gathers_layers_without_their_routed_experts():
    result = finetune_memory(V2_LITE, V2_LITE_PARAMS, "full")
    # Largest gathered layer: layer 0, MLA 13,762,560 + dense MLP 67,239,936 = 81,002,496 parameters
    # (an MoE layer gathers MLA + shared 17,301,504 + router 131,072 = 31,195,136; its 553,648,128
    # routed-expert parameters stay expert-parallel). Full: 2 gathered layers + 1 of gradients, bf16 = 486,014,976 B,
    # plus the root unit (embeddings + head 419,430,400 + final norm 2,048 = 419,432,448 params) gathered,
    # 838,864,896 B, and the gradient peak max(3 layers + lm_head 209,715,200, root 419,432,448) × 2 B = 905,445,376.
    assert result.fsdp_buffers == 838_864_896 + (3 * 81_002_496 + 209_715_200) * 2  # 1,744,310,272


# A hybrid of every token mixer, hidden 1024 (shapes invented for the arithmetic).
HYBRID = ModelSpec(
    slug="hybrid",
    name="Hybrid",
    architecture="test",
    hidden_size=1024,
    vocab_size=32000,
    layers=(LayerSpec("mamba", "none"), LayerSpec("linear", "dense"), LayerSpec("conv", "dense"),
            LayerSpec("full", "dense")),
    attention=AttentionShape(num_heads=8, num_kv_heads=2, head_dim=128),
    intermediate_size=4096,
    mamba=MambaShape(num_heads=32, head_dim=64, state_size=128, n_groups=8, conv_kernel=4),
    linear_attention=LinearAttentionShape(num_key_heads=4, num_value_heads=8, key_head_dim=64,
                                          value_head_dim=64, conv_kernel=4),
    conv=ConvShape(l_cache=3),
)


def test_adapters_on_every_mixer_kind():
    # Σ(d_in + d_out) per layer:
    #   mamba: d_inner 2048; in_proj 1024 → 2·2048 + 2·8·128 + 32 = 6176 (7,200); out_proj 2048 → 1024 (3,072)
    #   linear: key 4 × 64 = 256, value 8 × 64 = 512; in 1024 → 2·256 + 2·512 + 2·8 = 1552 (2,576);
    #           out 512 → 1024 (1,536)
    #   conv: in 1024 → 3072 (4,096); out 1024 → 1024 (2,048)
    #   attention: q 1024+1024, k 1024+256, v 1024+256, o 1024+1024 = 6,656
    # mixers 10,272 + 4,112 + 6,144 + 6,656 = 27,184; 3 dense MLPs × 3 × (1024 + 4096) = 46,080
    attention_only = FinetuneOptions(target_modules="attention")
    assert finetune_memory(HYBRID, 1e9, "lora", attention_only).trainable_params == 27_184 * 16
    assert finetune_memory(HYBRID, 1e9, "lora").trainable_params == (27_184 + 46_080) * 16


def test_fsdp_root_unit_is_gathered_on_every_gpu():
    """transformers wraps each decoder layer as an FSDP unit; the embeddings, final norm and lm_head stay in the root
    unit, which FSDP does not reshard after forward: on every GPU, whatever the count."""
    # root: 2 × 128256 × 4096 + final norm 4096 = 1,050,677,248 params × 2 B = 2,101,354,496 B (1.96 GiB)
    root = 2_101_354_496
    lora = finetune_memory(LLAMA_3_1_8B, LLAMA_PARAMS, "lora")
    assert lora.fsdp_buffers == 2 * 218_103_808 * 2 + root  # two gathered bf16 layers + the root
    qlora = finetune_memory(LLAMA_3_1_8B, LLAMA_PARAMS, "qlora")
    assert qlora.fsdp_buffers == 2 * 218_103_808 * 4.126953125 / 8 + root  # NF4 layers, bf16 root
    full = finetune_memory(LLAMA_3_1_8B, LLAMA_PARAMS, "full")
    # + the gradient peak: 3 layers (2 gathered + 1 of gradients) 654,311,424 + the lm_head's gradient 525,336,576
    # = 1,179,648,000 params (> the root's whole gradient at the end, 1,050,677,248) × 2 B = 2,359,296,000
    assert full.fsdp_buffers == root + 2_359_296_000  # 4,460,650,496 B


def test_gpus_needed():
    full = finetune_memory(LLAMA_3_1_8B, LLAMA_PARAMS, "full")
    # replicated: activations 3,688,890,368 + context 1,408,237,568 = 5,097,127,936
    # FSDP buffers (root unit, layers, gradients; test above) 4,460,650,496 → 9,557,778,432 on every GPU
    # 80 GB × 0.95 = 76e9 B: room 76e9 − 9,557,778,432 = 66,442,221,568; 128,484,179,968 / room = 1.93 → 2
    assert full.gpus_needed(76e9) == 2
    # 24 GB × 0.95 = 22.8e9: room 13,242,221,568 → 9.70 → 10 (8 without the root unit)
    assert full.gpus_needed(22.8e9) == 10
    assert full.per_gpu(10) == pytest.approx(128_484_179_968 / 10 + 9_557_778_432)
    # Too small for the per-GPU activations and buffers at any count.
    assert full.gpus_needed(4e9) is None
    qlora = finetune_memory(LLAMA_3_1_8B, LLAMA_PARAMS, "qlora")
    assert qlora.gpus_needed(11.4e9) == 1  # 9.24e9 B fits one 12 GB card


def test_tied_embeddings_are_counted_once_in_qlora():
    tied = replace(LLAMA_3_1_8B, slug="tied", tie_word_embeddings=True)
    head_params = 128256 * 4096  # 525,336,576
    untied = finetune_memory(LLAMA_3_1_8B, LLAMA_PARAMS, "qlora")
    # Without its own head the model has 525,336,576 fewer parameters, all of them 16-bit; the NF4
    # part is unchanged, so the weights shrink by exactly 525,336,576 × 2 B = 1,050,673,152 B.
    tied_weights = finetune_memory(tied, LLAMA_PARAMS - head_params, "qlora").weights
    assert untied.weights - tied_weights == 1_050_673_152


@pytest.mark.parametrize(
    ("kwargs", "option"),
    [
        ({"method": "dora"}, "method"),
        ({"params_total": 0}, "params_total"),
        ({"options": FinetuneOptions(rank=0)}, "rank"),
        ({"options": FinetuneOptions(batch=0)}, "batch"),
        ({"options": FinetuneOptions(seq_len=0)}, "seq_len"),
        ({"options": FinetuneOptions(target_modules="mlp")}, "target_modules"),
        ({"options": FinetuneOptions(optimizer="sgd")}, "optimizer"),
        ({"params_total": 1e9, "method": "qlora"}, "params_total"),  # smaller than the embeddings
    ],
)
def test_bad_options_name_the_option(kwargs, option):
    call = {"spec": LLAMA_3_1_8B, "params_total": LLAMA_PARAMS, "method": "lora", **kwargs}
    with pytest.raises(SizingError, match=option):
        finetune_memory(**call)


def test_model_without_shapes_is_refused():
    shapeless = ModelSpec(slug="estimated", name="Estimated", architecture="llama", hidden_size=0,
                          vocab_size=0, layers=(), attention=None, confidence="estimated")
    with pytest.raises(SizingError, match="layer shapes"):
        finetune_memory(shapeless, 7e9, "lora")


# --- properties ------------------------------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(rank=st.integers(1, 512), extra=st.integers(1, 512), method=st.sampled_from(["qlora", "lora"]))
def test_more_rank_needs_more_memory(rank, extra, method):
    low = finetune_memory(LLAMA_3_1_8B, LLAMA_PARAMS, method, FinetuneOptions(rank=rank))
    high = finetune_memory(LLAMA_3_1_8B, LLAMA_PARAMS, method, FinetuneOptions(rank=rank + extra))
    assert high.total > low.total
    assert high.trainable_params > low.trainable_params


@settings(max_examples=40, deadline=None)
@given(
    seq_len=st.integers(1, 65536),
    extra=st.integers(1, 65536),
    checkpointing=st.booleans(),
    flash=st.booleans(),
    method=st.sampled_from(METHODS),
)
def test_longer_sequences_need_more_activation_memory(seq_len, extra, checkpointing, flash, method):
    def activations(length):
        options = FinetuneOptions(seq_len=length, gradient_checkpointing=checkpointing, flash_attention=flash)
        return finetune_memory(V2_LITE, V2_LITE_PARAMS, method, options).activations

    assert activations(seq_len + extra) > activations(seq_len)


@settings(max_examples=30, deadline=None)
@given(method=st.sampled_from(METHODS), eight_bit=st.sampled_from(["adamw8bit", "paged_adamw8bit"]),
       rank=st.integers(1, 256))
def test_eight_bit_adam_needs_less_than_adamw(method, eight_bit, rank):
    def memory(optimizer):
        options = FinetuneOptions(rank=rank, optimizer=optimizer)
        return finetune_memory(LLAMA_3_1_8B, LLAMA_PARAMS, method, options)

    adamw, small = memory("adamw"), memory(eight_bit)
    assert small.optimizer_states < adamw.optimizer_states
    assert small.total < adamw.total


@settings(max_examples=40, deadline=None)
@given(memory=st.floats(5e9, 2e11), more=st.floats(0, 2e11), method=st.sampled_from(METHODS))
def test_bigger_gpus_never_need_more_of_them(memory, more, method):
    result = finetune_memory(V2_LITE, V2_LITE_PARAMS, method)
    fewer = result.gpus_needed(memory + more)
    count = result.gpus_needed(memory)
    if count is not None:
        assert fewer is not None and fewer <= count
        assert result.per_gpu(count) <= memory
