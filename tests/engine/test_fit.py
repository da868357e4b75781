"""Usable memory, verdicts and placement (automatic and explicit offload), on small hand-made layouts."""

from __future__ import annotations

import pytest

from reports.sizing.errors import SizingError
from reports.sizing.fit import (
    GIB,
    LlamaCppDemand,
    Placement,
    assess_fit,
    place_llama_cpp,
    place_tensor_parallel,
    usable_bytes,
    verdict_for,
)
from reports.sizing.parallelism import BlockWeights, LlamaCppLayout
from reports.sizing.specs import HardwareSpec, Scenario

MI325X = HardwareSpec(slug="mi325x", name="MI325X", vendor="AMD", memory_gb=256, bandwidth_gbs=6000,
                      kind="accelerator", backend="rocm")
SPARK = HardwareSpec(slug="spark", name="DGX Spark", vendor="NVIDIA", memory_gb=128, bandwidth_gbs=273,
                     kind="unified")


def test_usable_memory_follows_the_seed_pages():
    # 256 × 0.95 = 243.2 GiB (accelerator); 128 × 0.78 = 99.84 GiB (unified).
    assert usable_bytes(MI325X) / GIB == pytest.approx(243.2)
    assert usable_bytes(SPARK) / GIB == pytest.approx(99.84)


def test_verdict_thresholds():
    usable = 100.0
    assert verdict_for(92.0, usable, unified=False) == "fits"  # exactly 8 % left
    assert verdict_for(92.5, usable, unified=False) == "tight"  # 7.5 % left
    assert verdict_for(100.0, usable, unified=False) == "tight"
    assert verdict_for(100.5, usable, unified=False) == "exceeds"
    assert verdict_for(50.0, usable, unified=True) == "unified"
    assert verdict_for(95.0, usable, unified=True) == "tight"


def moe_demand() -> LlamaCppDemand:
    """4 MoE blocks of 10 expert + 2 other bytes, 1 byte of KV each, output head 3, fixed 1 per GPU, host 0.5."""
    blocks = tuple(BlockWeights(i, 10.0, 2.0, is_moe=True) for i in range(4))
    return LlamaCppDemand(LlamaCppLayout(4.0, 3.0, False, blocks), (1.0,) * 4, 1.0, 0.5)


def dense_demand() -> LlamaCppDemand:
    blocks = tuple(BlockWeights(i, 0.0, 10.0) for i in range(4))
    return LlamaCppDemand(LlamaCppLayout(4.0, 3.0, False, blocks), (1.0,) * 4, 1.0, 0.5)


def test_everything_fits_on_one_gpu():
    # 1 fixed + 4 × (12 + 1) + 3 output = 56.
    placement = place_llama_cpp(moe_demand(), gpus=1, usable_per_gpu=60.0, unified=False, offload_pct=None)
    assert placement.device_bytes == (56.0,)
    assert placement.offloaded_bytes == 0.0 and placement.gpu_layers == 5 and placement.mode == "none"
    assert placement.host_bytes == 4.0 + 0.5  # input embedding + host buffers


def test_moe_experts_leave_the_gpu_first():
    # 56 − 10 N ≤ 30 → N = 3 (--n-cpu-moe 3): 26 on the GPU, 30 bytes of experts in RAM, attention stays.
    placement = place_llama_cpp(moe_demand(), gpus=1, usable_per_gpu=30.0, unified=False, offload_pct=None)
    assert placement.n_cpu_moe == 3 and placement.gpu_layers == 5
    assert placement.device_bytes == (26.0,)
    assert placement.offloaded_expert_bytes == 30.0 and placement.offloaded_dense_bytes == 0.0
    assert placement.demand_per_gpu == (56.0,)


def test_moe_falls_back_to_whole_layers_when_experts_are_not_enough():
    # All experts off: 1 + 4 × 3 + 3 = 16 > 12. Without the output head and with n blocks: 1 + 3 n ≤ 12 → n = 3.
    placement = place_llama_cpp(moe_demand(), gpus=1, usable_per_gpu=12.0, unified=False, offload_pct=None)
    assert placement.n_cpu_moe == 4 and placement.gpu_layers == 3
    assert placement.device_bytes == (10.0,)
    assert placement.offloaded_expert_bytes == 40.0
    assert placement.offloaded_dense_bytes == 2.0 + 3.0  # block 0's attention and the output head
    assert placement.offloaded_kv_bytes == 1.0


def test_dense_model_offloads_whole_layers():
    # 1 + 4 × 11 + 3 = 48 > 30. -ngl n (output head off): 1 + 11 n ≤ 30 → n = 2: 23 on the GPU.
    placement = place_llama_cpp(dense_demand(), gpus=1, usable_per_gpu=30.0, unified=False, offload_pct=None)
    assert placement.gpu_layers == 2 and placement.n_cpu_moe is None
    assert placement.device_bytes == (23.0,)
    assert placement.offloaded_dense_bytes == 2 * 10.0 + 3.0 and placement.offloaded_kv_bytes == 2.0


def test_two_gpus_split_the_layers():
    # 5 slots on 2 GPUs: slots 0, 1, 2 (il/5 < 0.5) on GPU 0, slot 3 and the output on GPU 1.
    # GPU 0: 1 + 3 × 11 = 34; GPU 1: 1 + 11 + 3 = 15.
    placement = place_llama_cpp(dense_demand(), gpus=2, usable_per_gpu=40.0, unified=False, offload_pct=None)
    assert placement.device_bytes == (34.0, 15.0)
    assert placement.per_gpu_bytes == 34.0


def test_explicit_offload_moves_that_share_of_the_weights_in_whole_layers():
    # Weights: 4 (embedding) + 3 (output) + 4 × 12 = 55; 50 % → 27.5 bytes, from routed experts (40 available),
    # rounded up to whole layers: the experts of the first 3 (30 bytes), --n-cpu-moe 3 with every layer on the GPU.
    placement = place_llama_cpp(moe_demand(), gpus=1, usable_per_gpu=100.0, unified=False, offload_pct=50)
    assert placement.mode == "explicit"
    assert placement.offloaded_expert_bytes == 30.0 and placement.offloaded_dense_bytes == 0.0
    assert (placement.n_cpu_moe, placement.gpu_layers) == (3, 5)
    assert placement.device_bytes == (56.0 - 30.0,)
    # 90 % → 49.5: all 40 expert bytes, then 9.5 in -ngl's order: the head (3), then blocks of 2:
    # 3 + 2 + 2 + 2 = 9 < 9.5, so all 5 slots → -ngl 0, every block's KV in RAM too.
    most = place_llama_cpp(moe_demand(), gpus=1, usable_per_gpu=100.0, unified=False, offload_pct=90)
    assert (most.n_cpu_moe, most.gpu_layers) == (4, 0)
    assert most.offloaded_dense_bytes == 11.0 and most.offloaded_kv_bytes == 4.0
    assert most.device_bytes == (1.0,)


def test_explicit_offload_of_a_dense_model_moves_whole_layers_with_their_kv():
    # Weights 4 + 3 + 4 × 10 = 47; 30 % → 14.1 bytes. -ngl lowers the output head first (3), then block 0 (10),
    # block 1 (10): 23 ≥ 14.1 → -ngl 2, blocks 0 and 1 with their KV (2 × 1) in RAM.
    placement = place_llama_cpp(dense_demand(), gpus=1, usable_per_gpu=100.0, unified=False, offload_pct=30)
    assert (placement.n_cpu_moe, placement.gpu_layers) == (None, 2)
    assert placement.offloaded_dense_bytes == 23.0 and placement.offloaded_kv_bytes == 2.0
    assert placement.device_bytes == (1.0 + 2 * 11.0,)
    nothing = place_llama_cpp(dense_demand(), gpus=1, usable_per_gpu=100.0, unified=False, offload_pct=0)
    assert (nothing.gpu_layers, nothing.offloaded_bytes) == (5, 0.0)


def test_unified_memory_has_no_offload_split():
    placement = place_llama_cpp(moe_demand(), gpus=1, usable_per_gpu=10.0, unified=True, offload_pct=None)
    assert placement.offloaded_bytes == 0.0
    assert placement.device_bytes == (56.0 + 4.5,)  # the host-side pieces share the pool
    fit = assess_fit(placement, required_bytes=60.5, hardware=SPARK, gpus=1, usable_per_gpu=10.0)
    assert fit.verdict == "exceeds"


def test_assess_fit_figures():
    placement = place_llama_cpp(moe_demand(), gpus=1, usable_per_gpu=60.0, unified=False, offload_pct=None)
    fit = assess_fit(placement, required_bytes=200 * GIB, hardware=MI325X, gpus=1)
    assert fit.utilization_pct == pytest.approx(200 / 256 * 100)
    assert fit.headroom_bytes == usable_bytes(MI325X) - 56.0
    assert fit.verdict == "fits"


def test_headroom_is_the_fullest_gpus_as_the_verdict_judges_it():
    """Two GPUs of 30 GiB usable: 31.5 GiB on the first, 28 GiB on the second. The sum (60 − 59.5 = +0.5 GiB) read
    as room to spare next to "exceeds"; the fullest GPU lacks 1.5 GiB."""
    placement = Placement(engine="llama.cpp", mode="auto", demand_per_gpu=(31.5 * GIB, 28.0 * GIB),
                          device_bytes=(30.0 * GIB, 28.0 * GIB), host_bytes=0.0, offloaded_dense_bytes=0.0,
                          offloaded_expert_bytes=1.5 * GIB, offloaded_kv_bytes=0.0)
    fit = assess_fit(placement, required_bytes=59.5 * GIB, hardware=MI325X, gpus=2, usable_per_gpu=30.0 * GIB)
    assert fit.verdict == "exceeds"
    assert fit.headroom_bytes == -1.5 * GIB


def test_tensor_parallel_placement():
    placement = place_tensor_parallel(per_rank_weights=40.0, per_rank_kv=5.0, per_rank_runtime=3.0, gpus=4,
                                      unified=False, offload_pct=25)
    assert placement.device_bytes == (38.0,) * 4  # 40 − 10 + 5 + 3
    assert placement.offloaded_dense_bytes == 40.0
    auto = place_tensor_parallel(per_rank_weights=40.0, per_rank_kv=5.0, per_rank_runtime=3.0, gpus=2,
                                 unified=False, offload_pct=None)
    assert auto.offloaded_bytes == 0.0 and auto.mode == "none"


@pytest.mark.parametrize("pct", [-1, 100.5])
def test_offload_pct_out_of_range(pct):
    with pytest.raises(SizingError, match="--offload-pct"):
        place_llama_cpp(moe_demand(), gpus=1, usable_per_gpu=60.0, unified=False, offload_pct=pct)


def test_explicit_offload_of_a_tied_head_counts_only_the_layers():
    # A tied output head is a GPU copy of the embedding (4 bytes here): moving it frees the GPU but puts no weight
    # in system RAM. Weights 4 + 4 × 10 = 44; 5 % → 2.2: the head slot (4 bytes, but 0 moved) is not enough, block 0
    # (10) is → -ngl 3. Counting the head's 4 bytes stopped at -ngl 4 with nothing in system RAM.
    blocks = tuple(BlockWeights(i, 0.0, 10.0) for i in range(4))
    tied = LlamaCppDemand(LlamaCppLayout(4.0, 4.0, True, blocks), (1.0,) * 4, 1.0, 0.5)
    placement = place_llama_cpp(tied, gpus=1, usable_per_gpu=100.0, unified=False, offload_pct=5)
    assert placement.gpu_layers == 3 and placement.offloaded_weight_bytes == 10.0


def test_several_gpus_split_a_moe_model_by_layer_size_before_moving_experts():
    """--n-cpu-moe moves the experts of the first blocks, which an even -ts puts on the first GPUs: Qwen3-235B-A22B
    on 4 × RTX 3090 once held ~2 GiB on three of them and sent 108 GiB to system RAM. Split by the blocks' sizes,
    every GPU is filled, fewer experts move and it decodes about twice as fast as on one card."""
    from reports.launch import llama_cpp_command
    from reports.sizing.estimate import estimate, plan_memory
    from reports.sizing.fit import place_llama_cpp
    from bench import seed_catalog as catalog

    model, gpu = catalog.model("qwen3-235b-a22b-instruct-2507"), catalog.accelerator("rtx-3090")
    scenario = Scenario(gpus=4)
    plan = plan_memory(model, gpu, scenario)
    placement, usable = plan.placement, plan.fit.usable_bytes_per_gpu
    n_blocks = len(plan.layout.blocks)
    assert len(placement.tensor_split) == 4 and sum(placement.tensor_split) == n_blocks + 1
    assert max(placement.device_bytes) <= usable and min(placement.device_bytes) > 0.9 * usable
    even = place_llama_cpp(_demand_of(plan), gpus=4, usable_per_gpu=usable, unified=False, offload_pct=None,
                           tensor_split=(1.0, 1.0, 1.0, 1.0))
    assert min(even.device_bytes) < 0.1 * usable  # the even split left GPUs almost empty
    assert placement.offloaded_bytes < 0.5 * even.offloaded_bytes
    assert placement.n_cpu_moe < even.n_cpu_moe
    four = estimate(model, gpu, scenario).decode.tokens_per_s
    one = estimate(model, gpu, Scenario()).decode.tokens_per_s
    assert four > 1.7 * one
    lines = llama_cpp_command(model, scenario, plan).lines
    assert f"-ts {','.join(str(c) for c in placement.tensor_split)}" in lines
    assert f"--n-cpu-moe {placement.n_cpu_moe}" in lines


def test_a_split_by_layer_size_can_avoid_offload_altogether():
    """Gemma 3 27B at Q5_K_M and 128K on 2 × 16 GB: the even split overfills the GPU with the output head; 33 and
    30 slots fit both GPUs, so nothing moves to system RAM and the verdict is taken on that split."""
    from reports.sizing.estimate import plan_memory
    from bench import seed_catalog as catalog

    plan = plan_memory(catalog.model("gemma-3-27b-it"), catalog.accelerator("rtx-4060-ti-16gb"),
                       Scenario(quant="Q5_K_M", context=131_072, gpus=2))
    assert plan.placement.tensor_split == (33, 30) and plan.placement.offloaded_bytes == 0
    assert plan.fit.verdict in ("fits", "tight")
    assert plan.placement.demand_per_gpu == plan.placement.device_bytes


def _demand_of(plan):
    """The LlamaCppDemand a plan was placed from (estimate._plan_llama_cpp's inputs)."""
    from reports.sizing.estimate import _kv_per_block
    from reports.sizing.fit import LlamaCppDemand
    from bench import seed_catalog as catalog

    model = catalog.model("qwen3-235b-a22b-instruct-2507")
    return LlamaCppDemand(plan.layout, _kv_per_block(model, plan.kv, plan.layout), plan.runtime.device_bytes,
                          plan.runtime.host_bytes)
