"""Tensor-parallel sharding (vLLM) and layer split (llama.cpp), checked against hand derivations."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bench.model_specs import LLAMA_3_1_8B
from reports.sizing.errors import SizingError
from reports.sizing.parallelism import (
    assign_slots,
    check_tensor_parallel,
    llama_cpp_layout,
    rank_share,
    tensor_parallel_weights,
    tensor_split_points,
)
from reports.sizing.parameters import tensor_inventory
from reports.sizing.specs import AttentionShape, LayerSpec, MlaShape, ModelSpec, MoeShape
from reports.sizing.weights import weight_bytes


def deepseek_like() -> ModelSpec:
    """DeepSeek-V3 shapes, 4 layers (1 dense + 3 MoE) to keep the test small."""
    return ModelSpec(
        slug="ds", name="DeepSeek-like", architecture="deepseek_v3", hidden_size=7168, vocab_size=129_280,
        layers=(LayerSpec("full", "dense"),) + (LayerSpec("full", "moe"),) * 3, attention=None,
        intermediate_size=18_432, mla=MlaShape(128, 1536, 512, 128, 64, 128),
        moe=MoeShape(256, 8, 2048, num_shared_experts=1), native_dtype="fp8")  # DeepSeek-V3 ships block FP8


def bf16_total(spec: ModelSpec) -> float:
    return weight_bytes(spec, "BF16").total_bytes


def test_llama_8b_tp2_shards_everything_but_the_norms():
    # Llama 3.1 8B has 8,030,261,248 parameters, of which 65 × 4096 = 266,240 are RMSNorm weights
    # (2 per block × 32 + output_norm) and stay whole on every rank. Everything else splits in two: q/o by
    # heads (32/2), k/v by KV heads (8/2), the MLP by intermediate (14,336/2), embedding and lm_head by
    # vocabulary (128,256 is a multiple of 64: 64,128 rows per rank).
    # One rank: (8,030,261,248 − 266,240) / 2 + 266,240 = 4,015,263,744 parameters × 2 B = 8,030,527,488 B.
    spec = LLAMA_3_1_8B
    split = tensor_parallel_weights(spec, "BF16", 2, total_bytes=bf16_total(spec))
    assert split.per_rank_bytes == 8_030_527_488
    assert split.replicated_bytes == 266_240 * 2
    assert split.all_ranks_bytes == 2 * 8_030_527_488


def test_kv_projections_are_replicated_when_gpus_exceed_kv_heads():
    # TP 16 over 8 KV heads: every rank keeps 1 whole KV head, i.e. 1/8 of attn_k and attn_v (not 1/16).
    spec = LLAMA_3_1_8B
    k_proj = next(t for t in tensor_inventory(spec) if t.name == "attn_k")
    q_proj = next(t for t in tensor_inventory(spec) if t.name == "attn_q")
    assert rank_share(spec, k_proj, 16) == 1 / 8
    assert rank_share(spec, q_proj, 16) == 1 / 16
    # Per rank, per block: q, o: 2 × 4096² / 16; k, v: 2 × 4096 × 1024 / 8; MLP: 3 × 4096 × 14,336 / 16;
    # norms 2 × 4096. Globals: embedding + lm_head 2 × ceil(128,256 / 16) × 4096 = 2 × 8,016 × 4096, output_norm.
    per_block = 2 * 4096**2 // 16 + 2 * 4096 * 1024 // 8 + 3 * 4096 * 14_336 // 16 + 2 * 4096
    expected = (32 * per_block + 2 * 8_016 * 4096 + 4096) * 2
    split = tensor_parallel_weights(spec, "BF16", 16, total_bytes=bf16_total(spec))
    assert split.per_rank_bytes == expected


def test_mla_latent_projections_and_router_are_replicated():
    # vLLM deepseek_v2.py: q_a_proj / kv_a_proj_with_mqa are ReplicatedLinear (or the fused qkv_a with
    # disable_tp=True), q_b_proj and kv_b_proj are ColumnParallelLinear, the router gate is replicated.
    spec = deepseek_like()
    shares = {t.name: rank_share(spec, t, 8) for t in tensor_inventory(spec) if t.layer == 1}
    assert shares["attn_q_a"] == shares["attn_kv_a_mqa"] == shares["ffn_gate_inp"] == 1.0
    assert shares["attn_q_b"] == shares["attn_k_b"] == shares["attn_v_b"] == shares["attn_output"] == 1 / 8
    assert shares["ffn_up_exps"] == shares["ffn_down_shexp"] == 1 / 8


def test_published_size_scales_the_per_tensor_split():
    spec = LLAMA_3_1_8B
    rule = tensor_parallel_weights(spec, "BF16", 2, total_bytes=bf16_total(spec))
    doubled = tensor_parallel_weights(spec, "BF16", 2, total_bytes=2 * bf16_total(spec))
    assert doubled.per_rank_bytes == pytest.approx(2 * rule.per_rank_bytes)


@pytest.mark.parametrize(("spec", "gpus", "message"), [
    (LLAMA_3_1_8B, 3, "--gpus 3: 32 attention heads are not divisible by 3"),
    (replace(LLAMA_3_1_8B, attention=AttentionShape(48, 8, 128)), 12,
     "--gpus 12: more GPUs than the 8 KV heads must be a multiple of them"),
    (replace(LLAMA_3_1_8B, attention=AttentionShape(48, 48, 128), intermediate_size=14_400), 6, None),
    (replace(LLAMA_3_1_8B, intermediate_size=14_337), 2, "--gpus 2: the FFN intermediate size 14337 is not divisible by 2"),
    (deepseek_like(), 3, "--gpus 3: 128 attention heads are not divisible by 3"),
])
def test_non_dividing_tensor_parallel_is_a_clear_error(spec, gpus, message):
    if message is None:
        check_tensor_parallel(spec, gpus)
        return
    with pytest.raises(SizingError, match=message):
        check_tensor_parallel(spec, gpus)


def test_block_quantized_experts_need_whole_blocks_per_rank():
    # FP8 with 128-wide blocks (vLLM fp8.py validate_block_quant_shapes): at TP 32 the dense MLP's
    # 18,432 / 32 = 576 is 4.5 blocks. At TP 16: 18,432 / 16 = 1,152 = 9 blocks, experts 2,048 / 16 = 128 = 1.
    with pytest.raises(SizingError, match="FFN intermediate size 18432 / 32 = 576 is not a multiple of the 128"):
        check_tensor_parallel(deepseek_like(), 32, "FP8")
    check_tensor_parallel(deepseek_like(), 16, "FP8")
    check_tensor_parallel(deepseek_like(), 32, "BF16")  # no blocks: only divisibility


def test_online_fp8_of_a_bf16_checkpoint_has_no_blocks_to_keep_whole():
    """vLLM quantizes a BF16 checkpoint to FP8 per tensor (--quantization fp8): Qwen2.5-72B's FFN 29,568 / 2 =
    14,784 is not a multiple of 128, which only block-FP8 checkpoints (DeepSeek's) require."""
    bf16 = replace(deepseek_like(), native_dtype="bf16")
    check_tensor_parallel(bf16, 32, "FP8")
    with pytest.raises(SizingError, match="not a multiple of the 128"):
        check_tensor_parallel(deepseek_like(), 32, "FP8")


def test_layer_split_two_equal_gpus():
    # 32 blocks + output = 33 slots, splits [0.5, 1.0]: slot il goes to upper_bound(splits, il / 33), so
    # slots 0..16 (16/33 = 0.485) on GPU 0 and 17..32 (17/33 = 0.515) on GPU 1, the output head last.
    devices = assign_slots(32, 33, tensor_split_points((1.0, 1.0)))
    assert devices == (0,) * 17 + (1,) * 16


def test_partial_offload_keeps_the_top_blocks_and_drops_the_output_head():
    # -ngl 16 on 32 blocks: i_gpu_start = 16, act_gpu_layers = 16: blocks 16..31 on the GPU, output on the CPU.
    devices = assign_slots(32, 16, (1.0,))
    assert devices == (None,) * 16 + (0,) * 16 + (None,)


def test_uneven_tensor_split():
    # -ts 3,1 with all 5 slots (4 blocks + output): splits [0.75, 1.0]; slot/5 = 0, .2, .4, .6 → GPU 0, .8 → GPU 1.
    assert assign_slots(4, 5, tensor_split_points((3.0, 1.0))) == (0, 0, 0, 0, 1)


def test_layout_keeps_the_input_embedding_on_the_host_and_copies_a_tied_head():
    spec = replace(LLAMA_3_1_8B, tie_word_embeddings=True)
    total = bf16_total(spec)
    layout = llama_cpp_layout(spec, "BF16", total_bytes=total)
    embedding = 128_256 * 4096 * 2
    assert layout.embedding_bytes == embedding
    # Tied: the output slot holds a duplicate of token_embd plus output_norm (4096 × 2 B).
    assert layout.output_is_tied_copy and layout.output_bytes == embedding + 4096 * 2
    assert layout.file_bytes == total


def test_shapeless_model_splits_evenly_and_says_estimated():
    spec = ModelSpec(slug="x", name="X", architecture="", hidden_size=0, vocab_size=0, layers=(), attention=None,
                     stated_params_total=10e9, confidence="estimated")
    split = tensor_parallel_weights(spec, "BF16", 4, total_bytes=20e9)
    assert split.per_rank_bytes == 5e9 and split.estimated


# ---- vLLM's MXFP4 expert padding (parallelism.py, vllm mxfp4.py Mxfp4MoEMethod.create_weights) ----------------

def _gpt_oss_120b_mxfp4():
    from bench.model_specs import GPT_OSS_120B
    return GPT_OSS_120B, weight_bytes(GPT_OSS_120B, "MXFP4").total_bytes


def test_marlin_pads_gpt_oss_experts_to_the_logged_load():
    # gpt-oss-120b: 36 MoE layers × 128 experts, hidden 2880, expert intermediate 2880, MXFP4 = 17 B per 32 weights.
    # Marlin pads I 2880 → 2944 (multiple of 128) and H 2880 → 3072 (multiple of 256). Per expert:
    #   gate + up + down weights: 3 × (2944 × 3072 − 2880 × 2880) × 17/32 = 1,195,776 × 3 × 17/32 B
    #   gate + up biases (BF16): 2 × (2944 − 2880) × 2 B = 256 B; down bias: (3072 − 2880) × 2 B = 384 B.
    from reports.sizing.parallelism import vllm_mxfp4_expert_padding
    spec, total = _gpt_oss_120b_mxfp4()
    marlin = vllm_mxfp4_expert_padding("cuda", "hopper", (0, 10))  # v0.10.1, before vLLM bundled triton_kernels
    assert (marlin.kernel, marlin.intermediate_multiple, marlin.hidden_multiple) == ("Marlin", 128, 256)
    assert vllm_mxfp4_expert_padding("cuda", "ampere") == marlin
    split = tensor_parallel_weights(spec, "MXFP4", 1, total_bytes=total, mxfp4_padding=marlin)
    per_expert = 3 * (2944 * 3072 - 2880 * 2880) * 17 / 32 + 256 + 384
    assert split.per_rank_padding_bytes == pytest.approx(36 * 128 * per_expert, rel=1e-12)
    assert split.per_rank_bytes == pytest.approx(total + 36 * 128 * per_expert, rel=1e-12)
    # vllm-project/vllm#23278 (H100, Marlin): "Model loading took 65.9651 GiB"; we load 65.90 GiB (−0.1 %).
    assert split.per_rank_bytes / 2**30 == pytest.approx(65.9651, rel=0.002)
    unpadded = tensor_parallel_weights(spec, "MXFP4", 1, total_bytes=total)
    assert unpadded.per_rank_bytes == total and unpadded.mxfp4_padding is None
    assert split.per_rank_expert_bytes - unpadded.per_rank_expert_bytes == pytest.approx(split.per_rank_padding_bytes)


def test_triton_on_hopper_keeps_the_scales_twice_and_the_biases_in_fp32():
    # From v0.12 vLLM runs gpt-oss on Hopper with Triton: I′ = round_up(2880, 64) = 2880, H unpadded, so the values
    # are the checkpoint's. The scales (one byte per 32 values) are swizzled with their rows padded to 256 — w13's
    # 2 × 2880 = 5760 → 5888 rows, w2's 2880 → 3072, each row 2880 / 32 = 90 scales — and the checkpoint's
    # 3 × 2880 × 90 B stay allocated beside them: per expert 5888 × 90 + 3072 × 90 = 806,400 B more. The biases
    # turn fp32: 3 × 2880 × (4 − 2) = 17,280 B more.
    from reports.sizing.parallelism import vllm_mxfp4_expert_padding
    spec, total = _gpt_oss_120b_mxfp4()
    triton = vllm_mxfp4_expert_padding("cuda", "hopper")
    assert (triton.kernel, triton.intermediate_multiple, triton.scale_row_multiple) == ("Triton", 64, 256)
    assert triton.keeps_checkpoint_scales and triton.fp32_biases
    assert vllm_mxfp4_expert_padding("cuda", "hopper", (0, 12)) == triton
    split = tensor_parallel_weights(spec, "MXFP4", 1, total_bytes=total, mxfp4_padding=triton)
    assert split.per_rank_padding_bytes == pytest.approx(36 * 128 * (806_400 + 17_280), rel=1e-12)
    # vllm-project/vllm#33155 (v0.14.1, H100, "Using Triton backend"): "Model loading took 64.38 GiB"; 64.30 here.
    assert split.per_rank_bytes / 2**30 == pytest.approx(64.38, rel=0.002)
    # Two GPUs: each rank's I = 1440 pads to 1472 (23 × 64). Allocated per expert: gate and up values 1472 × 2880
    # / 2 each, their swizzled scales 3072 (2 × 1472 = 2944 rounded to 256) × 90 together and the kept ones
    # 2 × 1472 × 90; down values 2880 × 1472 / 2, swizzled 3072 × 46 (1472 / 32) and kept 2880 × 46; fp32 biases
    # 2 × 1472 and the whole 2880 of down (replicated) × 4 B. Against the rank's checkpoint share: half of the three
    # 2880 × 2880 × 17/32 B weights and of the gate and up biases, all of the down bias, in bf16.
    halves = tensor_parallel_weights(spec, "MXFP4", 2, total_bytes=total, mxfp4_padding=triton)
    allocated = (2 * 1472 * 2880 / 2 + 3072 * 90 + 2 * 1472 * 90 + 2880 * 1472 / 2 + 3072 * 46 + 2880 * 46
                 + (2 * 1472 + 2880) * 4)
    checkpoint_share = 3 * 2880 * 2880 * 17 / 32 / 2 + 2 * 2880 * 2 / 2 + 2880 * 2
    assert halves.per_rank_padding_bytes == pytest.approx(36 * 128 * (allocated - checkpoint_share), rel=1e-12)


def test_mxfp4_padding_is_per_partition_and_by_backend():
    from reports.sizing.parallelism import vllm_mxfp4_expert_padding
    spec, total = _gpt_oss_120b_mxfp4()
    # TP 2: I per rank 1440 → 1536 (multiple of 128), H 2880 → 3072; gate/up/down per expert and rank
    # 3 × (1536 × 3072 − 1440 × 2880) × 17/32, biases (1536 − 1440) × 2 × 2 and (3072 − 2880) × 2 (down bias whole).
    marlin = vllm_mxfp4_expert_padding("cuda", "ampere")
    split = tensor_parallel_weights(spec, "MXFP4", 2, total_bytes=total, mxfp4_padding=marlin)
    per_expert = 3 * (1536 * 3072 - 1440 * 2880) * 17 / 32 + 96 * 2 * 2 + 192 * 2
    assert split.per_rank_padding_bytes == pytest.approx(36 * 128 * per_expert, rel=1e-12)
    # B200 (FlashInfer) and MI355X (gfx950) pad both to 256: 2880 → 3072 each; MI300X to 128: 2944 each.
    assert vllm_mxfp4_expert_padding("cuda", "blackwell-datacenter").intermediate_multiple == 256
    assert vllm_mxfp4_expert_padding("rocm", "cdna4").hidden_multiple == 256
    assert vllm_mxfp4_expert_padding("rocm", "cdna3").hidden_multiple == 128
    assert vllm_mxfp4_expert_padding("sycl", "xe2") is None
    # Only MXFP4 checkpoints are padded: the same padding argument leaves BF16 as the checkpoint.
    bf16 = tensor_parallel_weights(spec, "BF16", 1, total_bytes=bf16_total(spec), mxfp4_padding=marlin)
    assert bf16.per_rank_padding_bytes == 0 and bf16.per_rank_bytes == bf16_total(spec)


def test_latent_projections_are_replicated_under_tensor_parallelism():
    # vLLM nemotron_h.py NemotronHMoE: fc1_latent_proj / fc2_latent_proj are ReplicatedLinear; the experts split.
    from bench.seed_catalog import model
    spec = model("nemotron-3-super-120b-a12b")
    latent = next(t for t in tensor_inventory(spec) if t.name == "ffn_latent_down")
    experts = next(t for t in tensor_inventory(spec) if t.name == "ffn_up_exps")
    assert rank_share(spec, latent, 4) == 1.0 and rank_share(spec, experts, 4) == 1 / 4


def test_mxfp4_padding_of_latent_experts_uses_the_latent_width():
    # Nemotron 3 Super's experts are 1024 (latent) × 2688: Marlin pads 2688 → 2688 (a multiple of 128) and the
    # latent 1024 → 1024 (a multiple of 256), so nothing; padding the 4096 hidden size instead would add nothing
    # either, but a 992-wide latent must round to 1024, not to the hidden size's multiple.
    from reports.sizing.parallelism import vllm_mxfp4_expert_padding
    from reports.sizing.specs import MoeShape
    from bench.seed_catalog import model
    spec = model("nemotron-3-super-120b-a12b")
    marlin = vllm_mxfp4_expert_padding("cuda", "ampere")
    total = weight_bytes(spec, "MXFP4").total_bytes
    assert tensor_parallel_weights(spec, "MXFP4", 1, total_bytes=total, mxfp4_padding=marlin).per_rank_padding_bytes == 0
    odd = replace(spec, moe=MoeShape(512, 22, 2688, 1, 5376, latent_size=992))
    padded = tensor_parallel_weights(odd, "MXFP4", 1, total_bytes=weight_bytes(odd, "MXFP4").total_bytes,
                                     mxfp4_padding=marlin)
    # up and down experts: 512 × (1024 − 992) × 2688 × 17/32 each, 40 MoE layers.
    assert padded.per_rank_padding_bytes == pytest.approx(40 * 2 * 512 * 32 * 2688 * 17 / 32, rel=1e-12)
