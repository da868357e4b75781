"""Decode and prefill speed: a roofline with efficiencies calibrated on llama.cpp measurements.

Decode (one stream) is memory-bound: every token streams the active weights and the KV cache once.

    time/token = GPU bytes / (bandwidth x bandwidth_efficiency)          memory roofline
               + RAM bytes / system RAM bandwidth                        offloaded share, CPU-computed
               + layers x layer_overhead (x MoE factor for MoE layers)   launch/sync floor per layer
               + tensor-parallel all-reduces                             2 per layer (ring)

Prefill is compute-bound: 2 FLOPs per active parameter per token plus attention FLOPs that grow with the
context, over the tensor peak llama.cpp's kernels can use (``tensor_peak_tflops``) x compute_efficiency x a
GEMM-width factor; it can never beat reading the weights once per micro-batch (memory floor).

The tensor peak is the dense FP16 rate with FP16 accumulate, not the FP32-accumulate figure datasheets lead
with: llama.cpp's prefill GEMMs are int8 MMQ kernels (int32 accumulate, ggml/src/ggml-cuda/mmq.cuh) or, for F16
weights, cuBLAS with FP16 accumulate (ggml-cuda.cu batched_mul_mat_traits<GGML_TYPE_F16>: CUBLAS_COMPUTE_16F,
except on Volta, RDNA4 and CDNA). Neither pays the GeForce half-rate penalty on FP32 accumulate, so on GeForce
parts the usable peak is twice ``fp16_tflops``; professional and datacenter parts run both accumulate modes at
one rate. Measuring efficiency against the FP32-accumulate figure made the fitted CUDA efficiency exceed 1 and
over-predicted every full-rate part (H100 +539 %, RTX PRO 6000 +117 %).

ROCm is the same ggml-cuda code built with HIP, so it shares CUDA's compute efficiency; each AMD architecture
instead gets the share of its datasheet peak that MMQ can use (``AMD_MATRIX_BALANCE``: bounded by the CU's
vector ALUs on datacenter CDNA parts). Only the one measured HIP row's own path (rocBLAS on RDNA3.5) has a
fitted efficiency of its own (``ROCBLAS_FALLBACK_EFFICIENCY``).

The efficiencies and overheads in ``CALIBRATION`` are fitted by ``bench/throughput_accuracy.py --fit`` on
``bench/data/throughput_calibration.csv`` only (llama.cpp llama-bench rows); that script prints the fit, the
per-row errors and the medians. Everything here is a pure function of its keyword arguments.

Units: bytes, FLOPs, seconds inside; tokens/s and milliseconds in the results. Bandwidths are decimal GB/s
(vendor convention), TFLOPS are 10**12 FLOP/s.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Literal

from reports.sizing.errors import SizingError
from reports.sizing.specs import HardwareSpec, ModelSpec

BackendClass = Literal["cuda", "rocm", "metal", "vulkan", "other"]
Parallelism = Literal["layer", "tensor"]
Bound = Literal["memory", "compute", "latency", "ram"]

GB = 1e9
TFLOP = 1e12


@dataclass(frozen=True)
class BackendCalibration:
    """Fitted constants of one backend class (see ``bench/throughput_accuracy.py --fit``)."""

    bandwidth_efficiency: float  # share of peak memory bandwidth a decode step reaches
    layer_overhead_s: float  # fixed time per dense decoder layer per decode step (kernel launches, syncs)
    compute_efficiency: float  # share of tensor_peak_tflops() that wide prefill GEMMs reach (<= 1)
    # An MoE layer launches more kernels than a dense one (router GEMM, softmax, top-k, expert gather, three
    # mul_mat_id, weighted sum: llama.cpp src/llama-graph.cpp build_moe_ffn), so its fixed cost is this many
    # dense layers'.
    moe_layer_overhead_factor: float
    # GEMM width (token rows) at which a matmul reaches half of compute_efficiency: efficiency scales by
    # m / (m + gemm_half_width), m = micro-batch for dense weights, micro-batch x k / E per routed expert.
    # It reflects the backend's matmul tile height (wide tensor-core tiles on CUDA, narrower simdgroup tiles
    # on Metal).
    gemm_half_width: float
    decode_rows: int  # calibration rows behind the decode constants
    prefill_rows: int  # calibration rows behind the prefill constants


# Fitted on bench/data/throughput_calibration.csv (llama.cpp). Regenerate with
# `python -m bench.throughput_accuracy --fit`; the test suite fails if the medians drift past the targets.
# Vulkan and ROCm rows hold no MoE model, so those classes take CUDA's MoE factor and GEMM half width
# (same discrete-GPU launch model, similar tile heights); ROCm has one decode row, so it also takes CUDA's
# layer overhead and fits only its bandwidth efficiency. Its compute efficiency is CUDA's too: HIP runs
# ggml-cuda's MMQ kernels, and the AMD architectures differ by the usable share of their peak
# (AMD_MATRIX_BALANCE); its one prefill row fits ROCBLAS_FALLBACK_EFFICIENCY instead (prefill_rows=0 here).
CALIBRATION: dict[str, BackendCalibration] = {
    "cuda": BackendCalibration(0.90, 55e-6, 0.51, 1.5, 96.0, decode_rows=20, prefill_rows=18),
    "metal": BackendCalibration(0.91, 190e-6, 0.68, 1.1, 0.0, decode_rows=65, prefill_rows=64),
    "vulkan": BackendCalibration(0.84, 40e-6, 0.39, 1.5, 96.0, decode_rows=7, prefill_rows=6),
    "rocm": BackendCalibration(0.83, 55e-6, 0.51, 1.5, 96.0, decode_rows=1, prefill_rows=0),
}
# Backends without calibration data (SYCL, CANN, anything else) borrow the Vulkan constants: like Vulkan they
# are portable llama.cpp backends without vendor-tuned kernels. This is a stated assumption, not a fit.
CALIBRATION["other"] = CALIBRATION["vulkan"]

# System RAM read by the CPU for offloaded weights: desktop dual-channel DDR5-4800 = 76.8 GB/s theoretical
# (2 channels x 8 B x 4800 MT/s), sustained 65-85 % of that (/work/shared/data/NOTES-accelerators.md, "CPU offload");
# 60 GB/s is ~78 % of it, inside the notes' "desktop dual-channel DDR5 ~60-80 GB/s sustained".
DEFAULT_RAM_BANDWIDTH_GBS = 60.0
# The most system RAM a desktop takes: four 64 GB DDR5 modules, 256 GB, on Intel Z790 and AMD X670E boards since
# 2023 (Tom's Hardware, 2023-12-15, "New desktop PC chips now support an incredible 256GB of memory"). An offload
# beyond it needs a workstation or server, whose 8-12 memory channels read faster than the desktop assumed above.
DESKTOP_MAX_RAM_BYTES = 256e9

# Tensor-parallel link when HardwareSpec.interconnect_gbs is unknown: PCIe 4.0 x16 achieves ~22-25 GB/s per
# direction (NOTES-accelerators.md "PCIe x16 per direction": Inspur MLPerf notes ~22 GB/s measured per GPU).
DEFAULT_PCIE_GBS = 25.0
# Per all-reduce launch + synchronisation latency at decode's payloads (a few KiB to a few hundred KiB), as vLLM runs
# it under CUDA/HIP graphs with its custom all-reduce:
# - NVLink: 8.5-11.8 us on 2/4/8 x H100 at 512 B-32 KiB (vLLM custom all-reduce, sglang PR #2904), 7 us at 512 KiB on
#   2 x H100 and 13 us on 6 (vLLM PR #24111, CUDA-graph timing); plain NCCL from PyTorch is 19-25 us on 8 x H100
#   (ByteDance-Seed/Triton-distributed #57), which vLLM's custom all-reduce avoids.
# - Infinity Fabric: 7.1-7.7 us on 2 and 4 x MI300X up to 64 KiB, 6.3-7.6 us on 8 x MI355X (vLLM's custom
#   all-reduce on ROCm, vLLM PR #19744); 10 us is on the safe side.
# - PCIe without NVLink (NCCL, vLLM disables its custom all-reduce beyond two PCIe-only GPUs or without P2P):
#   6-17 us on 2 GPUs at 8 B-16 KiB, 15-16 us on 4, 25-42 us on 8 (nccl-tests, eager: nccl-tests #333 explains why
#   single-process runs read high); 25 us is fair for 4-8 GPUs and conservative for 2.
# - Gaudi (HCCL) and Ascend (HCCL over HCCS) publish no small-message latency: they take NVLink's 10 us unverified.
NVLINK_ALLREDUCE_LATENCY_S = 10e-6
PCIE_ALLREDUCE_LATENCY_S = 25e-6
# Activations exchanged by tensor-parallel all-reduces are 16-bit (bf16/fp16).
ACTIVATION_BYTES = 2
# Two all-reduces per decoder layer: after the attention output projection and after the FFN down projection
# (Megatron-LM tensor parallelism, Shoeybi et al. 2019, section 3).
ALLREDUCES_PER_LAYER = 2

# llama.cpp default micro-batch (llama-bench / llama-server -ub 512).
DEFAULT_UBATCH = 512


# Share of the datasheet tensor peak that llama.cpp's CUDA kernels can reach on an architecture family, when
# it is below 1 for want of the instructions that peak needs.
# Hopper: the dense FP16 peak (989 TFLOPS on H100 SXM) needs the asynchronous warpgroup instruction wgmma; the
# synchronous per-warp mma.sync reaches about 65 % of it (Luo et al., "Dissecting the NVIDIA Hopper
# Architecture through Microbenchmarking and Multiple Level Analysis", arXiv:2501.12084: FP16 mma 494 TFLOPS
# vs wgmma 729 TFLOPS on an H800 with a 757 TFLOPS peak). llama.cpp's CUDA tensor-core code emits only
# mma.sync (ggml/src/ggml-cuda/mma.cuh: every NVIDIA path is an `mma.sync.aligned` asm; no wgmma/TMA), so
# its usable Hopper peak is the mma.sync rate. (F16/BF16 weights go through cuBLAS, which does use wgmma; for
# them this share is pessimistic. The quantized MMQ path is the common case and the one calibrated.)
# Datacenter Blackwell (B200/B300) likewise needs tcgen05 for its peak, but no measured mma.sync share was
# found; it is left at 1 (an over-estimate of llama.cpp prefill there, stated rather than guessed).
LLAMA_CPP_TENSOR_PEAK_SHARE: dict[str, float] = {"hopper": 494 / 757}


# ---- AMD (HIP build of ggml-cuda) ------------------------------------------------------------------------
# llama.cpp's ROCm backend is ggml-cuda compiled with hipcc, and prefill on every AMD architecture in the
# catalog runs the same MMQ kernels as on NVIDIA (ggml/src/ggml-cuda/mmq.cu ggml_cuda_should_use_mmq: CDNA3
# "return true" because "rocblas/tensile performs very poorly on CDNA3"; RDNA3/3.5 and RDNA4 take MMQ for the
# common quant types, RDNA4 "consistently faster than dequantization + hipBLAS"). Only the matrix instruction
# differs (ggml-cuda/mma.cuh: MFMA __builtin_amdgcn_mfma_i32_16x16x32_i8 on CDNA3/CDNA4, WMMA
# __builtin_amdgcn_wmma_i32_16x16x16_iu8 on RDNA3/RDNA4). So HIP takes CUDA's fitted compute efficiency
# (CALIBRATION["rocm"]) and each AMD architecture gets the share of its FP16 peak those kernels can use.
#
# What bounds MMQ there is not the matrix cores alone: besides the MMA, every tile is dequantized, scaled
# and converted on the vector ALUs, a fixed amount of vector work per matrix FLOP for a given tile shape. The
# CUDA efficiency is fitted on GeForce/professional Ampere, Ada and Blackwell parts, all of which pair 1024
# dense FP16 matrix FLOPs (FP16 accumulate; the whitepaper method of bench/calibration_hardware.py) with 256
# FP32 vector FLOPs (128 FP32 lanes) per SM and clock: a matrix-to-vector ratio of 4. A part with a
# larger ratio runs out of vector throughput first, so only REFERENCE_MATRIX_TO_VECTOR / ratio of its matrix
# peak is usable. Datacenter CDNA parts have ratios of 8-32, which is why one ROCm constant fitted on an
# RDNA3.5 iGPU mis-scaled them. Evidence, not fit: the same rule predicts the held-out MI300X and MI210
# llama-bench rows within about +-20 % (bench/data/validation_rocm.csv, `python -m bench.throughput_accuracy
# --validate-rocm`), and would move the in-sample H100 row from +109 % to -20 % (Hopper: 4096 matrix /
# 256 vector FLOPs per SM-clock = 16). It is not applied to "hopper" because that key also covers the H20,
# whose matrix units are cut to ~1/7 of the H100's (148 dense FP16 TFLOPS vs 44 FP32), so a per-architecture
# ratio would under-estimate it 2.6x; a per-part FP32 vector figure in the catalog would let the rule apply
# per part.
REFERENCE_MATRIX_TO_VECTOR = 1024 / 256


@dataclass(frozen=True)
class MatrixBalance:
    """Per-CU, per-clock throughput of one AMD architecture, from datasheet arithmetic."""

    matrix_flops_per_clock: int  # dense FP16 matrix FLOPs (MFMA/WMMA), no sparsity
    # FP32 vector FLOPs, one FMA per lane: without packed FP32 (CDNA) or dual issue (RDNA), which MMQ's
    # integer and scalar dequantization work does not use
    vector_flops_per_clock: int
    # share of the matrix rate the instruction llama.cpp emits reaches (1 = the full-rate instruction)
    instruction_share: float = 1.0

    @property
    def matrix_to_vector(self) -> float:
        return self.matrix_flops_per_clock / self.vector_flops_per_clock

    @property
    def usable_share(self) -> float:
        return min(self.instruction_share, REFERENCE_MATRIX_TO_VECTOR / self.matrix_to_vector)


AMD_MATRIX_BALANCE: dict[str, MatrixBalance] = {
    # MI210 (no catalog row; validation only): 181.0 TFLOPS FP16 = 104 CU x 1.7 GHz x 1024; FP32 vector 22.6
    # TFLOPS = 104 x 1.7 x 128 (AMD's 45.3 is packed FP32).
    "cdna2": MatrixBalance(1024, 128),
    # MI300X/MI325X: 1307.4 TFLOPS FP16 = 304 CU x 2.1 GHz x 2048; FP32 vector 81.7 TFLOPS = 304 x 2.1 x 128
    # (AMD's 163.4 is packed FP32; CU counts: rocm.docs.amd.com reference/gpu-specs.html).
    "cdna3": MatrixBalance(2048, 128),
    # MI355X: 2516.6 TFLOPS FP16 = 256 CU x 2.4 GHz x 4096; FP32 vector 78.6 = 256 x 2.4 x 128 (157.3 packed).
    # MMQ emits the CDNA3 instruction on CDNA4 too (mma.cuh: "#if defined(CDNA4) || defined(CDNA3)"
    # mfma_i32_16x16x32_i8), 16384 ops in 16 cycles, half the rate of gfx950's mfma_i32_16x16x64_i8 (32768 ops
    # in 16 cycles: AMD HIP docs, CDNA4 matrix instruction throughput table). The vector bound (1/8) is tighter.
    "cdna4": MatrixBalance(4096, 128, instruction_share=0.5),
    # RX 7900 XTX: 122.8 TFLOPS = 96 CU x 2.5 GHz x 512 (WMMA FP16 512 FLOPs/clk/CU: AMD GPUOpen "Using the
    # Matrix Cores of AMD RDNA 4 architecture GPUs", FLOPS/clock/CU table); FP32 61.4 TFLOPS with dual issue,
    # 128 per CU-clock without. Strix Halo (RDNA3.5) has the same CU: 59.4 = 40 x 2.9 GHz x 512.
    "rdna3": MatrixBalance(512, 128),
    "rdna3.5": MatrixBalance(512, 128),
    # RX 9070 XT: 194.7 TFLOPS = 64 CU x 2.97 GHz x 1024 (same GPUOpen table); FP32 48.7 with dual issue.
    "rdna4": MatrixBalance(1024, 128),
}
LLAMA_CPP_TENSOR_PEAK_SHARE.update({name: balance.usable_share for name, balance in AMD_MATRIX_BALANCE.items()})

# Architectures whose calibration rows ran a different prefill path than MMQ, with the compute efficiency
# fitted on those rows. The only HIP rows (Ryzen AI Max+ 395, gfx1151, llama.cpp b5392, May 2025) predate
# WMMA MMQ on RDNA3.x (llama.cpp pull 17576, Nov 2025): prefill then dequantized to FP16 and called rocBLAS
# ("Since we dont have any kernels that can make use of wmma or mfma, we convert to fp16 and use rocblas",
# llama.cpp issue 13565), and gfx1151's rocBLAS ran hgemm 2.5-6x slower than gfx1100's (ROCm issue 4748).
# This constant therefore describes that build on that chip, not RDNA3.x MMQ; other RDNA parts use MMQ's.
# Fitted by `python -m bench.throughput_accuracy --fit` like CALIBRATION.
ROCBLAS_FALLBACK_EFFICIENCY: dict[str, float] = {"rdna3.5": 0.09}


def tensor_peak_tflops(hardware: HardwareSpec) -> float | None:
    """Dense FP16 tensor TFLOPS llama.cpp's prefill GEMMs can use: the FP16-accumulate peak (the larger of the
    two published figures; ``fp16_acc_tflops`` None means the part runs both at one rate), times the share of
    it llama.cpp's CUDA/HIP kernels reach on the architecture (``LLAMA_CPP_TENSOR_PEAK_SHARE``).
    None when no TFLOPS figure is published."""
    if not hardware.fp16_tflops:
        return None
    peak = max(hardware.fp16_tflops, hardware.fp16_acc_tflops or 0.0)
    if hardware.backend in ("cuda", "rocm"):
        peak *= LLAMA_CPP_TENSOR_PEAK_SHARE.get(hardware.architecture, 1.0)
    return peak


# ------------------------------------------------------------------------------------------------ vLLM prefill
# vLLM's prefill runs other kernels than llama.cpp's: cuBLAS/CUTLASS GEMMs (Hopper's wgmma included), FP8 W8A8
# GEMMs where the tensor cores have FP8, FlashAttention, and chunks of max_num_batched_tokens rows (8,192 for
# `vllm serve` on GPUs of 70 GiB or more except A100s, else 2,048: runtime.vllm_scheduler_defaults) instead of
# 512-token micro-batches. llama.cpp's calibration made vLLM's prefill 2.2-2.4× too slow on an H100
# (bench/data/vllm_prefill.csv).
#
# Architectures with FP8 tensor cores at twice the FP16/BF16 rate at the same (FP32) accumulation: Ada, Hopper and
# Blackwell (NVIDIA architecture whitepapers: RTX 4090 165.2 → 330.3 dense TFLOPS with FP32 accumulate, H100 SXM
# 989.4 → 1,978.9), CDNA3 and CDNA4 (AMD: MI300X 1,307.4 → 2,614.9). vLLM runs FP8 W8A8 on them (its quantization
# table: Ada, Hopper, AMD GPUs); Ampere runs FP8 checkpoints weight-only (W8A16, FP8 Marlin) at the BF16 rate.
# Attention (FlashAttention over a BF16 cache) stays at the BF16 rate; so do an FP8_FP4 checkpoint's FP4 routed
# experts on GPUs without FP4 tensor cores (Hopper runs them weight-only, W4A16), while Blackwell multiplies FP4
# natively: counted at its FP8 rate there, a lower bound.
FP8_TENSOR_ARCHITECTURES = frozenset({"ada", "hopper", "blackwell", "blackwell-datacenter", "cdna3", "cdna4"})
FP4_TENSOR_ARCHITECTURES = frozenset({"blackwell", "blackwell-datacenter"})
VLLM_FP8_COMPUTE_FORMATS = frozenset({"FP8", "FP8_FP4"})
# Share of vllm_tensor_peak_tflops() vLLM's prefill reaches (dense GEMMs and attention together), fitted on the
# H100 single-request TTFTs of bench/data/vllm_prefill.csv by `python -m bench.vllm_prefill_accuracy --fit`. Only
# CUDA rows were found; ROCm and the other backends take it too (stated on the methodology page, not measured).
VLLM_PREFILL_EFFICIENCY = 0.62


def vllm_tensor_peak_tflops(hardware: HardwareSpec, quant: str) -> float | None:
    """Dense tensor TFLOPS vLLM's prefill GEMMs run at: the BF16/FP16 rate with FP32 accumulation (``fp16_tflops``;
    cuBLAS and CUTLASS accumulate in FP32, so a GeForce card's doubled FP16-accumulate rate does not apply), twice
    that for FP8 checkpoints on FP8_TENSOR_ARCHITECTURES. AWQ/GPTQ/GGUF/MXFP4 weights are dequantized into BF16
    GEMMs. None when no TFLOPS figure is published."""
    if not hardware.fp16_tflops:
        return None
    if quant in VLLM_FP8_COMPUTE_FORMATS and hardware.architecture in FP8_TENSOR_ARCHITECTURES:
        return 2 * hardware.fp16_tflops
    return hardware.fp16_tflops


@dataclass(frozen=True)
class TensorPeaks:
    """Dense tensor TFLOPS per kind of multiplication (None: no TFLOPS figure published)."""

    gemm: float | None  # the weights' dense GEMMs
    attention: float | None  # scores and values over the KV cache
    experts: float | None  # routed experts' GEMMs


def vllm_tensor_peaks(hardware: HardwareSpec, quant: str) -> TensorPeaks:
    """vllm_tensor_peak_tflops for the GEMMs; the BF16 rate for attention; for FP8_FP4 the BF16 rate for its FP4
    experts except on FP4_TENSOR_ARCHITECTURES."""
    gemm = vllm_tensor_peak_tflops(hardware, quant)
    bf16 = vllm_tensor_peak_tflops(hardware, "BF16")
    experts = gemm
    if quant == "FP8_FP4" and hardware.architecture not in FP4_TENSOR_ARCHITECTURES:
        experts = bf16
    return TensorPeaks(gemm, bf16, experts)


def vllm_calibration(hardware: HardwareSpec) -> BackendCalibration:
    """The backend's calibration with vLLM's GEMM efficiency (VLLM_PREFILL_EFFICIENCY, the only one measured: its
    batched decode steps multiply with the same kernels)."""
    return _with_compute_efficiency(calibration_for(hardware), VLLM_PREFILL_EFFICIENCY)


def backend_class(hardware: HardwareSpec) -> BackendClass:
    return hardware.backend if hardware.backend in ("cuda", "rocm", "metal", "vulkan") else "other"  # type: ignore[return-value]


def calibration_for(hardware: HardwareSpec) -> BackendCalibration:
    """The fitted constants of the hardware's backend class; on ROCm, with the rocBLAS-path compute efficiency
    where its architecture was only measured on that path (``ROCBLAS_FALLBACK_EFFICIENCY``)."""
    name = backend_class(hardware)
    calibration = CALIBRATION[name]
    if name == "rocm" and hardware.architecture in ROCBLAS_FALLBACK_EFFICIENCY:
        calibration = _with_compute_efficiency(calibration, ROCBLAS_FALLBACK_EFFICIENCY[hardware.architecture])
    return calibration


# Keyed on the constants themselves, not on the accelerator, so that a fit that swaps them (bench/
# throughput_accuracy.py, bench/vllm_prefill_accuracy.py) is never answered from the cache. A page asks this of
# every vLLM speed it computes.
@lru_cache(maxsize=64)
def _with_compute_efficiency(calibration: BackendCalibration, efficiency: float) -> BackendCalibration:
    return replace(calibration, compute_efficiency=efficiency)


# --------------------------------------------------------------------------------------------------- helpers


def attention_flops_per_token(spec: ModelSpec, *, context: float) -> float:
    """Attention-score FLOPs of one token that attends to `context` earlier tokens.

    Per softmax-attention layer: QK^T costs 2 x heads x d_qk x context and the weighted sum of V costs
    2 x heads x d_v x context (PaLM, Chowdhery et al. 2022, appendix B: 4 x layers x heads x head_dim x context
    per token in the forward pass when d_qk = d_v). Sliding/chunked layers see at most their window. Linear,
    Mamba and conv mixers carry a fixed state, so they add nothing that grows with the context.
    """
    total = 0.0
    if spec.compressed_attention is not None:
        return _compressed_attention_flops(spec, context)
    for layer in spec.layers:
        if layer.mixer in ("full", "sliding", "chunked"):
            width = _attention_width(spec, layer.mixer)
            seen = context
            if layer.mixer == "sliding" and spec.sliding_window:
                seen = min(context, spec.sliding_window)
            elif layer.mixer == "chunked" and spec.attention_chunk_size:
                seen = min(context, spec.attention_chunk_size)
            total += 2 * width * seen
    return total


def _compressed_attention_flops(spec: ModelSpec, context: float) -> float:
    """DeepSeek-V4: every layer attends over its window; a CSA layer also over the indexer's top-k of its
    context / 4 compressed entries, after the indexer scores all of them (index heads × index_head_dim each); an
    HCA layer over all context / 128 compressed entries (DeepseekV4Attention, CSA/HCA compressors, Indexer)."""
    ca, indexer = spec.compressed_attention, spec.dsa_indexer
    assert ca is not None
    width = ca.num_heads * 2 * ca.head_dim  # K = V: one 512-wide head read for the scores and for the values
    window = min(context, spec.sliding_window or 0)
    total = 0.0
    for layer in spec.layers:
        seen = window
        if layer.mixer == "csa":
            entries = context / ca.csa_ratio
            seen += min(entries, indexer.topk if indexer else entries)
            if indexer is not None:
                total += 2 * indexer.num_heads * indexer.head_dim * entries
        elif layer.mixer == "hca":
            seen += context / ca.hca_ratio
        total += 2 * width * seen
    return total


def _attention_width(spec: ModelSpec, mixer: str) -> int:
    """heads x (d_qk + d_v) of one attention layer kind."""
    if spec.mla is not None and mixer == "full":
        mla = spec.mla
        return mla.num_heads * (mla.qk_nope_head_dim + mla.qk_rope_head_dim + mla.v_head_dim)
    shape = spec.sliding_attention if mixer == "sliding" and spec.sliding_attention else spec.attention
    if shape is None:
        return 0
    return shape.num_heads * (shape.head_dim + shape.v_dim)


def experts_touched_fraction(*, experts_per_token: int, num_experts: int, tokens: int) -> float:
    """Expected share of routed experts hit by at least one of `tokens` tokens, each picking k of E.

    With uniform routing each expert is missed by one token with probability 1 - k/E, so it is touched by a
    batch with probability 1 - (1 - k/E)^tokens. One token touches exactly k/E of them.
    """
    if num_experts <= 0 or experts_per_token <= 0:
        return 1.0
    return 1.0 - (1.0 - experts_per_token / num_experts) ** tokens


def weight_bytes_per_token(
    *, resident_bytes: float, embedding_bytes: float = 0.0, routed_expert_bytes: float = 0.0,
    experts_per_token: int = 0, num_experts: int = 0,
) -> float:
    """Weight bytes one decode token reads: everything resident except the input embedding table (llama.cpp
    gathers one row, ggml_get_rows) and, for MoE, the routed experts the token does not use (1 - k/E of them).
    Tied embeddings are still read in full as the output head, so pass embedding_bytes=0 for tied models."""
    unused = 1.0 - experts_per_token / num_experts if num_experts else 0.0
    return resident_bytes - embedding_bytes - routed_expert_bytes * unused


def _gemm_width_factor(rows: float, half_width: float) -> float:
    return rows / (rows + half_width)


def _check_positive(name: str, value: float) -> None:
    if value is None or value <= 0:
        raise SizingError(f"{name} must be positive (got {value!r})")


# ------------------------------------------------------------------------------------------------ all-reduce


def allreduce_payload_bytes(hidden_size: int) -> int:
    """Bytes of one tensor-parallel all-reduce for one token: the hidden state in 16-bit activations."""
    return hidden_size * ACTIVATION_BYTES


@dataclass(frozen=True)
class AllReduceCost:
    seconds: float  # all all-reduces of one forward step
    link_gbs: float  # per direction
    latency_s: float  # per all-reduce
    link: str  # "interconnect", "PCIe default" or "none"
    count: int = 0  # all-reduces in the step
    payload_bytes: float = 0.0  # each all-reduce's (hidden x 2 B x the step's tokens)
    mesh_links: int | None = None  # a full mesh: the links each GPU of the group uses (gpus - 1, of its peers)

    @property
    def ms(self) -> float:
        return self.seconds * 1000

    @property
    def payload_kib(self) -> float:
        return self.payload_bytes / 1024

    @property
    def latency_us(self) -> float:
        return self.latency_s * 1e6


def allreduce_time(
    *, gpus: int, payload_bytes: float, num_layers: int, hardware: HardwareSpec
) -> AllReduceCost:
    """Ring all-reduces of one forward step: `payload_bytes` each (hidden x 2 B x tokens in the step), 2 per layer.

    Ring all-reduce moves 2 (n-1)/n x payload over each GPU's link (Patarasuk & Yuan 2009; NCCL docs,
    "bus bandwidth"). HardwareSpec.interconnect_gbs is read as the vendor's bidirectional aggregate
    (NVIDIA quotes 900 GB/s for H100 NVLink = 450 per direction), so half of it is used per direction.

    Behind a switch (NVSwitch) every GPU reaches any peer at that bandwidth. In a full mesh (MI300X: 7 Infinity
    Fabric links of 128 GB/s; Gaudi 3: 21 RoCE ports, 3 per peer) a group of n GPUs has only n-1 of the peers'
    links between its members, so it moves its all-reduce over (n-1)/peers of the bandwidth: one link for two
    GPUs, all of them for eight (ROCm workload tuning guide: "In the case of 2- or 4-GPU collective operations ...
    you can only use a fraction of the potential bandwidth on the node"). Measured on 8 x MI300X with a 4 GiB
    all-reduce (github stas00/ml-engineering network/README.md): bus bandwidth 47.7 GB/s with 2 GPUs, 312.9 with 8,
    6.6 x apart; this rule gives 64 and 448 GB/s, 7 x apart.
    """
    if gpus <= 1:
        return AllReduceCost(0.0, 0.0, 0.0, "none")
    mesh_links = None
    if hardware.interconnect_gbs:
        link_gbs, latency, link = hardware.interconnect_gbs / 2, NVLINK_ALLREDUCE_LATENCY_S, "interconnect"
        if hardware.interconnect_mesh_peers:
            mesh_links = min(gpus - 1, hardware.interconnect_mesh_peers)
            link_gbs *= mesh_links / hardware.interconnect_mesh_peers
    else:
        link_gbs, latency, link = DEFAULT_PCIE_GBS, PCIE_ALLREDUCE_LATENCY_S, "PCIe default"
    one = 2 * (gpus - 1) / gpus * payload_bytes / (link_gbs * GB) + latency
    count = ALLREDUCES_PER_LAYER * num_layers
    return AllReduceCost(count * one, link_gbs, latency, link, count, payload_bytes, mesh_links)


# ---------------------------------------------------------------------------------------------------- decode


@dataclass(frozen=True)
class DecodeSpeed:
    """One stream's generation speed and how it was computed (all inputs echoed)."""

    tokens_per_s: float
    ms_per_token: float
    # time split per token (seconds)
    gpu_memory_s: float
    ram_memory_s: float
    overhead_s: float
    # inputs
    weight_bytes_gpu: float
    weight_bytes_ram: float
    kv_bytes_read: float
    gpus: int
    parallelism: str
    bandwidth_gbs: float
    ram_bandwidth_gbs: float
    backend_class: str
    bandwidth_efficiency: float
    layer_overhead_s: float
    num_layers: int
    moe_layers: int
    allreduce: AllReduceCost | None = None  # tensor parallelism: the link, its bandwidth and latency

    @property
    def allreduce_s(self) -> float:
        """Per token: the tensor-parallel all-reduces (0 without tensor parallelism)."""
        return self.allreduce.seconds if self.allreduce is not None else 0.0

    @property
    def transfer_ms(self) -> float:
        """Per token: reading weights and KV from GPU memory and system RAM, plus tensor-parallel all-reduces."""
        return (self.gpu_memory_s + self.ram_memory_s + self.allreduce_s) * 1000

    @property
    def overhead_ms(self) -> float:
        """Per token: the fixed kernel time of every layer (0 when the layer count is unknown)."""
        return self.overhead_s * 1000

    @property
    def ram_ms(self) -> float:
        """Per token: reading the offloaded weights and KV from system RAM."""
        return self.ram_memory_s * 1000

    @property
    def bound(self) -> Bound:
        parts = {"memory": self.gpu_memory_s + self.ram_memory_s, "latency": self.overhead_s + self.allreduce_s}
        return max(parts, key=parts.get)  # type: ignore[return-value,arg-type]


def decode_speed(
    *,
    weight_bytes_gpu: float,
    hardware: HardwareSpec,
    num_layers: int,
    weight_bytes_ram: float = 0.0,
    kv_bytes_read: float = 0.0,
    kv_bytes_read_ram: float = 0.0,
    gpus: int = 1,
    parallelism: Parallelism = "layer",
    tp_allreduce_bytes_per_token: float = 0.0,
    ram_bandwidth_gbs: float | None = None,
    moe_layers: int = 0,
    calibration: BackendCalibration | None = None,
) -> DecodeSpeed:
    """Tokens/s of one stream at a given KV depth.

    weight_bytes_gpu: weight bytes one token streams from GPU memory, summed over all GPUs: every resident
        tensor except the input embedding table (one row is gathered); for MoE only the routed experts one
        token uses (k of E) plus the always-on tensors.
    weight_bytes_ram: the same for weights kept in system RAM (offload, --n-cpu-moe; disjoint from
        weight_bytes_gpu); llama.cpp computes
        those layers on the CPU, so they run at `ram_bandwidth_gbs` after the GPU part (sequential per token).
        On unified-memory machines there is no split: RAM bytes are read at the unified bandwidth.
    kv_bytes_read: KV cache bytes read per token at the current depth (kv bytes per token x depth), GPU side;
        kv_bytes_read_ram: the same for layers whose KV lives in system RAM.
    parallelism: "layer" (llama.cpp default --split-mode layer: GPUs run their layers one after the other, so
        one stream sees one GPU's bandwidth at a time) or "tensor" (each GPU reads 1/gpus of every layer, plus
        two all-reduces of `tp_allreduce_bytes_per_token` = hidden x 2 B per layer).
    moe_layers: how many of `num_layers` are MoE layers (their fixed launch cost is larger).
    calibration: override the fitted constants of the hardware's backend class (what-if, tests).
    """
    ram_gbs = _checked_decode_inputs(hardware, gpus, ram_bandwidth_gbs, weight_bytes_gpu, weight_bytes_ram,
                                     kv_bytes_read, kv_bytes_read_ram)
    calibration = calibration or calibration_for(hardware)

    gpu_bytes = weight_bytes_gpu + kv_bytes_read
    ram_bytes = weight_bytes_ram + kv_bytes_read_ram
    if hardware.kind == "unified":  # one memory pool: nothing is read over a slower path
        gpu_bytes, ram_bytes = gpu_bytes + ram_bytes, 0.0

    # Layer split: the GPUs work in turn, so the stream sees one GPU's bandwidth; tensor split: all at once.
    parallel_gpus = gpus if parallelism == "tensor" else 1
    effective_bandwidth = hardware.bandwidth_gbs * GB * calibration.bandwidth_efficiency * parallel_gpus
    gpu_memory_s = gpu_bytes / effective_bandwidth
    ram_memory_s = ram_bytes / (ram_gbs * GB)
    overhead_s = _layer_overhead_s(calibration, num_layers, moe_layers)
    allreduce = None
    if parallelism == "tensor":
        allreduce = allreduce_time(
            gpus=gpus, payload_bytes=tp_allreduce_bytes_per_token, num_layers=num_layers, hardware=hardware
        )
    seconds = gpu_memory_s + ram_memory_s + overhead_s + (allreduce.seconds if allreduce is not None else 0.0)
    return DecodeSpeed(
        tokens_per_s=1.0 / seconds,
        ms_per_token=seconds * 1e3,
        gpu_memory_s=gpu_memory_s,
        ram_memory_s=ram_memory_s,
        overhead_s=overhead_s,
        weight_bytes_gpu=weight_bytes_gpu,
        weight_bytes_ram=weight_bytes_ram,
        kv_bytes_read=kv_bytes_read + kv_bytes_read_ram,
        gpus=gpus,
        parallelism=parallelism,
        bandwidth_gbs=hardware.bandwidth_gbs,
        ram_bandwidth_gbs=ram_gbs,
        backend_class=backend_class(hardware),
        bandwidth_efficiency=calibration.bandwidth_efficiency,
        layer_overhead_s=calibration.layer_overhead_s,
        num_layers=num_layers,
        moe_layers=moe_layers,
        allreduce=allreduce,
    )


def _checked_decode_inputs(hardware: HardwareSpec, gpus: int, ram_bandwidth_gbs: float | None,
                           *byte_counts: float) -> float:
    """decode_speed's checks of its inputs (SizingError naming the bad one); the system RAM's bandwidth."""
    _check_positive("bandwidth_gbs", hardware.bandwidth_gbs)
    _check_positive("gpus", gpus)
    if min(byte_counts) < 0:
        raise SizingError("decode bytes must not be negative")
    ram_gbs = ram_bandwidth_gbs or DEFAULT_RAM_BANDWIDTH_GBS
    _check_positive("system_ram_bandwidth_gbs", ram_gbs)
    return ram_gbs


def _layer_overhead_s(calibration: BackendCalibration, num_layers: int, moe_layers: int) -> float:
    """A decode step's fixed per-layer cost (kernel launches), MoE layers at their larger factor."""
    return calibration.layer_overhead_s * (
        num_layers - moe_layers + calibration.moe_layer_overhead_factor * moe_layers
    )


# --------------------------------------------------------------------------------------------------- prefill

# llama.cpp computes a large-batch matmul whose weights sit in system RAM on the GPU, copying the weights over
# PCIe once per micro-batch ("op offload": ggml/src/ggml-cuda/ggml-cuda.cu ggml_backend_cuda_device_offload_op,
# batch >= 32), at the accelerator's host link (host_link_gbs).

# Host link per direction, x16, achieved: PCIe 4.0 achieves 22-25 of its 32 GB/s (DEFAULT_PCIE_GBS's sources);
# PCIe 5.0 and 6.0 double and quadruple the theoretical 32 GB/s (64 and 128 GB/s, NOTES-accelerators.md "PCIe x16
# per direction", glennklockwood's H100 and B200 host links), taken at the same achieved share.
PCIE_X16_ACHIEVED_GBS = {3: DEFAULT_PCIE_GBS / 2, 4: DEFAULT_PCIE_GBS, 5: 2 * DEFAULT_PCIE_GBS, 6: 4 * DEFAULT_PCIE_GBS}
_PCIE = re.compile(r"PCIe (\d)\.0(?: x(\d+))?")


def host_link_gbs(hardware: HardwareSpec) -> float:
    """The host link's achieved GB/s per direction, from the PCIe generation and lanes that HardwareSpec.interconnect
    names ("PCIe 5.0 x16", "NVLink 4 / PCIe 5.0"); PCIe 4.0 x16 (DEFAULT_PCIE_GBS) when it names none."""
    match = _PCIE.search(hardware.interconnect or "")
    if match is None:
        return DEFAULT_PCIE_GBS
    x16 = PCIE_X16_ACHIEVED_GBS.get(int(match.group(1)), DEFAULT_PCIE_GBS)
    lanes = int(match.group(2) or 16)
    return x16 * min(lanes, 16) / 16
# llama.cpp pipelines the micro-batches of one logical batch across GPUs in layer-split mode (PR #6017,
# "pipeline parallelism"), so at most n_batch / n_ubatch micro-batches are in flight (default 2048 / 512 = 4).
DEFAULT_BATCH = 2048


@dataclass(frozen=True)
class PrefillSpeed:
    """Prompt-processing speed and TTFT; tokens_per_s is None when the hardware's TFLOPS are not published."""

    tokens_per_s: float | None
    ttft_ms: float | None
    bound: Bound | None  # what limits one micro-batch
    # time split per micro-batch (seconds)
    compute_s: float | None
    memory_s: float
    transfer_s: float  # offloaded weights over PCIe + tensor-parallel all-reduces
    # inputs
    prompt: int
    micro_batch: int
    chunk_tokens: int  # the micro-batch / chunk limit (llama.cpp -ub, vLLM max_num_batched_tokens); micro_batch ≤ it
    flops_per_token: float
    attention_flops_per_token: float
    routed_expert_flops_per_token: float
    weight_bytes_read: float  # weights one micro-batch reads from GPU memory (all GPUs)
    gpus: int
    parallelism: str
    fp16_tflops: float | None
    backend_class: str
    compute_efficiency: float  # asymptotic, before the GEMM-width factor
    dense_gemm_factor: float
    expert_gemm_factor: float | None
    bandwidth_efficiency: float
    note: str = ""
    peak_tflops: float | None = None  # tensor_peak_tflops(): the peak compute_efficiency applies to
    weight_bytes_ram: float = 0.0  # offloaded weights copied to the GPU once per micro-batch
    host_link_gbs: float = DEFAULT_PCIE_GBS  # the link they cross (host_link_gbs())
    ram_bandwidth_gbs: float | None = None  # set when system RAM bounds the pipelined transfers (bound "ram")

    @property
    def ram_ms(self) -> float | None:
        """Per micro-batch: the offloaded weights read from system RAM, when that bounds the prompt speed."""
        if not self.ram_bandwidth_gbs:
            return None
        return self.weight_bytes_ram / (self.ram_bandwidth_gbs * GB) * 1e3

    @property
    def transfer_ms(self) -> float:
        """Per micro-batch: offloaded weights over the host link, plus tensor-parallel all-reduces."""
        return self.transfer_s * 1e3

    @property
    def micro_batch_ms(self) -> float | None:
        if self.compute_s is None:
            return None
        return (max(self.compute_s, self.memory_s) + self.transfer_s) * 1e3

    @property
    def compute_tokens_per_s(self) -> float | None:
        """Tokens per second the arithmetic alone allows (micro-batch rows / compute_s): peak × efficiency × the
        GEMM-width factor over the FLOPs per token, what the page's explanation multiplies out before the memory
        and transfer bounds."""
        if not self.compute_s:
            return None
        return self.micro_batch / self.compute_s


def prefill_speed(
    *,
    flops_per_token: float,
    prompt: int,
    hardware: HardwareSpec,
    weight_bytes: float,
    num_layers: int,
    attention_flops_per_token: float = 0.0,
    routed_expert_flops_per_token: float = 0.0,
    routed_expert_bytes: float = 0.0,
    experts_per_token: int = 0,
    num_experts: int = 0,
    weight_bytes_ram: float = 0.0,
    gpus: int = 1,
    parallelism: Parallelism = "layer",
    tp_allreduce_bytes_per_token: float = 0.0,
    n_ubatch: int = DEFAULT_UBATCH,
    n_batch: int = DEFAULT_BATCH,
    calibration: BackendCalibration | None = None,
    ram_bandwidth_gbs: float | None = None,
    peak_tflops: float | None = None,
    attention_peak_tflops: float | None = None,
    expert_peak_tflops: float | None = None,
) -> PrefillSpeed:
    """Prompt tokens/s for a `prompt`-token prompt, and the time to first token.

    flops_per_token: 2 x active parameters (weights of one token's forward pass; MoE: k of E experts).
    attention_flops_per_token: score/value FLOPs at the prompt's mean context (``attention_flops_per_token(spec,
        context=depth + prompt / 2)``).
    routed_expert_flops_per_token: the part of flops_per_token spent in routed experts; those GEMMs only see
        micro-batch x k / E tokens each, so they run narrower (and slower) than the dense ones.
    weight_bytes: weight bytes resident in GPU memory that a micro-batch reads (all GPUs; MoE: including every
        routed expert, of which `routed_expert_bytes` are routed experts: only the touched share is read).
    weight_bytes_ram: offloaded weights; llama.cpp streams them to the GPU over PCIe once per micro-batch. Every
        GPU reads them from the same system RAM (``ram_bandwidth_gbs``, DEFAULT_RAM_BANDWIDTH_GBS when None), so
        micro-batches pipelined over several GPUs (layer split) stream at most that fast together.
    peak_tflops: the tensor peak the GEMMs run at; tensor_peak_tflops() (llama.cpp's kernels) when None.
    attention_peak_tflops, expert_peak_tflops: the peaks of attention and of the routed experts when they differ
        from the GEMMs' (vLLM: vllm_tensor_peaks); peak_tflops when None.
    """
    _check_positive("prompt", prompt)
    _check_positive("n_ubatch", n_ubatch)
    _check_positive("gpus", gpus)
    _check_positive("bandwidth_gbs", hardware.bandwidth_gbs)
    calibration = calibration or calibration_for(hardware)
    rows = min(prompt, n_ubatch)

    touched = experts_touched_fraction(experts_per_token=experts_per_token, num_experts=num_experts, tokens=rows)
    bytes_read = weight_bytes - routed_expert_bytes * (1.0 - touched)
    transfer_s = 0.0
    if hardware.kind == "unified":  # one memory pool: "offloaded" weights are read like the rest
        bytes_read += weight_bytes_ram
    else:
        transfer_s = weight_bytes_ram / (host_link_gbs(hardware) * GB)
    parallel_gpus = gpus if parallelism == "tensor" else 1
    memory_s = bytes_read / (hardware.bandwidth_gbs * GB * calibration.bandwidth_efficiency * parallel_gpus)
    if parallelism == "tensor":
        transfer_s += allreduce_time(
            gpus=gpus, payload_bytes=tp_allreduce_bytes_per_token * rows, num_layers=num_layers, hardware=hardware
        ).seconds

    dense_factor = _gemm_width_factor(rows, calibration.gemm_half_width)
    expert_factor = None
    if routed_expert_flops_per_token and num_experts:
        expert_factor = _gemm_width_factor(rows * experts_per_token / num_experts, calibration.gemm_half_width)

    result = dict(
        prompt=prompt, micro_batch=rows, chunk_tokens=n_ubatch, flops_per_token=flops_per_token,
        attention_flops_per_token=attention_flops_per_token,
        routed_expert_flops_per_token=routed_expert_flops_per_token, weight_bytes_read=bytes_read, gpus=gpus,
        parallelism=parallelism, fp16_tflops=hardware.fp16_tflops, backend_class=backend_class(hardware),
        compute_efficiency=calibration.compute_efficiency, dense_gemm_factor=dense_factor,
        expert_gemm_factor=expert_factor, bandwidth_efficiency=calibration.bandwidth_efficiency,
        memory_s=memory_s, transfer_s=transfer_s, weight_bytes_ram=weight_bytes_ram,
        host_link_gbs=host_link_gbs(hardware),
    )
    peak_tflops = tensor_peak_tflops(hardware) if peak_tflops is None else peak_tflops
    if peak_tflops is None:
        return PrefillSpeed(tokens_per_s=None, ttft_ms=None, bound=None, compute_s=None,
                            note="FP16 TFLOPS not published for this hardware", **result)

    def rate(tflops: float | None) -> float:  # FLOP/s at the calibrated share of a peak (the GEMMs' by default)
        return (tflops or peak_tflops) * TFLOP * calibration.compute_efficiency * parallel_gpus

    gemm_flops = (flops_per_token - routed_expert_flops_per_token) * rows
    compute_s = (gemm_flops / rate(peak_tflops) + attention_flops_per_token * rows / rate(attention_peak_tflops)
                 ) / dense_factor
    if expert_factor is not None:
        compute_s += routed_expert_flops_per_token * rows / (rate(expert_peak_tflops) * expert_factor)

    micro_batch_s = max(compute_s, memory_s) + transfer_s
    pipeline = _layer_split_pipeline_speedup(gpus, prompt, n_ubatch, n_batch) if parallelism == "layer" else 1.0
    tokens_per_s = rows / micro_batch_s * pipeline
    bound: Bound = "compute" if compute_s >= memory_s else "memory"
    ram_gbs = None
    if transfer_s and pipeline > 1.0:
        ram_s = weight_bytes_ram / ((ram_bandwidth_gbs or DEFAULT_RAM_BANDWIDTH_GBS) * GB)
        if rows / ram_s < tokens_per_s:  # the pipelined GPUs together cannot pull faster than system RAM gives
            tokens_per_s, bound = rows / ram_s, "ram"
            ram_gbs = ram_bandwidth_gbs or DEFAULT_RAM_BANDWIDTH_GBS
    return PrefillSpeed(
        tokens_per_s=tokens_per_s,
        ttft_ms=prompt / tokens_per_s * 1e3,
        bound=bound,
        compute_s=compute_s,
        peak_tflops=peak_tflops,
        ram_bandwidth_gbs=ram_gbs,
        **result,
    )


def _layer_split_pipeline_speedup(gpus: int, prompt: int, n_ubatch: int, n_batch: int) -> float:
    """Speed-up of g pipelined GPUs over one: u micro-batches flow through g stages in (u + g - 1) stage times
    instead of u x g, so the gain is g u / (u + g - 1); u is capped by the micro-batches of one logical batch."""
    if gpus <= 1:
        return 1.0
    in_flight = max(1, min(math.ceil(prompt / n_ubatch), max(1, n_batch // n_ubatch)))
    return gpus * in_flight / (in_flight + gpus - 1)


# ------------------------------------------------------------------------------------------- batched decode


@dataclass(frozen=True)
class AggregateDecode:
    """All `batch` streams together: tokens/s summed over streams, and what bounds one decode step."""

    tokens_per_s: float
    per_stream_tokens_per_s: float
    batch: int
    bound: Bound
    step_memory_s: float
    step_compute_s: float | None
    step_fixed_s: float  # layer overheads + all-reduces + RAM-resident share
    weight_bytes_per_step: float
    kv_bytes_per_step: float
    compute_efficiency: float
    bandwidth_efficiency: float
    note: str = ""


def aggregate_decode(
    *,
    batch: int,
    weight_bytes_gpu: float,
    flops_per_token: float,
    hardware: HardwareSpec,
    num_layers: int,
    kv_bytes_read_per_stream: float = 0.0,
    weight_bytes_ram: float = 0.0,
    routed_expert_bytes_total: float = 0.0,
    experts_per_token: int = 0,
    num_experts: int = 0,
    gpus: int = 1,
    parallelism: Parallelism = "layer",
    tp_allreduce_bytes_per_token: float = 0.0,
    ram_bandwidth_gbs: float | None = None,
    moe_layers: int = 0,
    calibration: BackendCalibration | None = None,
    peak_tflops: float | None = None,
) -> AggregateDecode:
    """Decode throughput of `batch` concurrent streams (continuous batching, one token per stream per step).

    Per step the weights are read once for all streams (MoE: the experts touched by any of the `batch` tokens,
    ``experts_touched_fraction``), each stream's KV cache is read, and the GEMMs cost batch x flops_per_token;
    the step takes the longer of the memory and compute times (roofline) plus the fixed per-layer costs.
    weight_bytes_gpu / weight_bytes_ram are the one-token bytes as for ``decode_speed``;
    routed_expert_bytes_total is every routed expert's bytes (GPU and RAM), used to scale MoE reads with batch.
    peak_tflops: the tensor peak the GEMMs run at; tensor_peak_tflops() (llama.cpp's kernels) when None.
    """
    _check_positive("batch", batch)
    # One stream's checks, fixed per-layer cost and RAM bandwidth (decode_speed's, which this took from a whole
    # single-stream decode: its times and all-reduce were not read).
    ram_gbs = _checked_decode_inputs(hardware, gpus, ram_bandwidth_gbs, weight_bytes_gpu, weight_bytes_ram,
                                     kv_bytes_read_per_stream)
    calibration = calibration or calibration_for(hardware)
    growth = 1.0  # how much more weight one step reads than one token does
    if routed_expert_bytes_total and num_experts:
        one = experts_per_token / num_experts
        many = experts_touched_fraction(experts_per_token=experts_per_token, num_experts=num_experts, tokens=batch)
        single_weights = weight_bytes_gpu + weight_bytes_ram
        routed_one = routed_expert_bytes_total * one
        growth = (single_weights - routed_one + routed_expert_bytes_total * many) / single_weights

    parallel_gpus = gpus if parallelism == "tensor" else 1
    bandwidth = hardware.bandwidth_gbs * GB * calibration.bandwidth_efficiency * parallel_gpus
    weight_gpu_bytes = weight_bytes_gpu * growth
    ram_bytes = weight_bytes_ram * growth
    if hardware.kind == "unified":
        weight_gpu_bytes, ram_bytes = weight_gpu_bytes + ram_bytes, 0.0
    kv_bytes = kv_bytes_read_per_stream * batch
    memory_s = (weight_gpu_bytes + kv_bytes) / bandwidth
    fixed_s = _layer_overhead_s(calibration, num_layers, moe_layers) + ram_bytes / (ram_gbs * GB)
    if parallelism == "tensor":
        fixed_s += allreduce_time(
            gpus=gpus, payload_bytes=tp_allreduce_bytes_per_token * batch, num_layers=num_layers, hardware=hardware
        ).seconds

    compute_s = None
    note = ""
    peak_tflops = tensor_peak_tflops(hardware) if peak_tflops is None else peak_tflops
    if peak_tflops is not None:
        # The GPUs multiply only the weights they hold: llama.cpp runs the layers (or experts) left in system RAM
        # on the CPU, whose time is the RAM term of fixed_s (ggml's CPU backend, memory-bound at decode). Charging
        # the whole model's FLOPs to the GPU made batch 1 slower than the single-stream decode it must equal.
        gpu_share = weight_gpu_bytes / (weight_gpu_bytes + ram_bytes) if weight_gpu_bytes + ram_bytes else 1.0
        compute_s = batch * flops_per_token * gpu_share / (
            peak_tflops * TFLOP * calibration.compute_efficiency * parallel_gpus)
    else:
        note = "FP16 TFLOPS not published: memory-bound estimate only"
    step_s = max(memory_s, compute_s or 0.0) + fixed_s
    bound: Bound = "compute" if compute_s and compute_s > memory_s else "memory"
    if fixed_s > max(memory_s, compute_s or 0.0):
        bound = "latency"
    return AggregateDecode(
        tokens_per_s=batch / step_s,
        per_stream_tokens_per_s=1.0 / step_s,
        batch=batch,
        bound=bound,
        step_memory_s=memory_s,
        step_compute_s=compute_s,
        step_fixed_s=fixed_s,
        weight_bytes_per_step=weight_gpu_bytes + ram_bytes,
        kv_bytes_per_step=kv_bytes,
        compute_efficiency=calibration.compute_efficiency,
        bandwidth_efficiency=calibration.bandwidth_efficiency,
        note=note,
    )
