"""Public specs of the GPUs named in ``bench/data/throughput_calibration.csv``.

Only what the speed model needs: peak memory bandwidth (decimal GB/s), dense FP16 tensor/matrix throughput
(TFLOPS, FP32 accumulate where the vendor distinguishes it, as in ``HardwareSpec.fp16_tflops``), the dense FP16
rate with FP16 accumulate where it differs (``HardwareSpec.fp16_acc_tflops``: GeForce), the architecture
family (``HardwareSpec.architecture``: NVIDIA and AMD families, which select llama.cpp's usable tensor share), whether memory is unified, and how many GPUs the row used. Each entry
names its source. ``None`` TFLOPS means no public figure was found (the speed model then reports prefill as "not
published"); ``None`` FP16-accumulate TFLOPS means the part runs both accumulate modes at one rate.

Rules used for derived figures (stated per entry):
- NVIDIA whitepaper method (GA10x / AD10x / GB20x): dense FP16 tensor FLOPs with FP16 accumulate =
  SMs x 1024 FLOPs/clock x boost clock; GeForce runs FP32 accumulate at half that, professional SKUs at full
  rate. It reproduces the whitepaper figures for RTX 3090 (71/142), RTX 4090 (165.2/330.3) and RTX 5090
  (209.5/419) (see /work/shared/data/NOTES-accelerators.md, "Whitepaper method"). Full rate on a professional
  Blackwell part is also measured: an mma.sync rate probe on the RTX PRO 6000 Blackwell Max-Q gives 1023.7
  FLOPs/SM/clock with FP16 accumulate and 1023.8 with FP32 accumulate (github:waynehacking8/
  blackwell-tensorcore-kernels results/mma_rate_probe.csv).
- Hopper: NVIDIA's H100 table lists the same dense FP16 tensor peak with FP16 and with FP32 accumulate (1000
  TFLOPS SXM5, 800 PCIe; "NVIDIA Hopper Architecture In-Depth" table 3, quoted in
  https://forums.developer.nvidia.com/t/theoretical-tflops-for-fp16-bf16-and-tf32-for-tensor-and-non-tensor/218102/3).
- Apple GPUs: FP16 = FP32 rate (philipturner/metal-benchmarks README, "F16/I16 arithmetic is not faster than
  32-bit counterparts"; per-core table "FP16/FP32 Ratio 1"), 128 FP32 ALUs per core, one FMA = 2 FLOPs:
  TFLOPS = cores x 128 x 2 x GPU clock.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from reports.sizing.specs import HardwareSpec

ACCELERATORS_CSV = "/work/shared/data/accelerators.csv (row '{}'; spec_sources column of that row)"
METAL_BENCHMARKS = (
    "github:philipturner/metal-benchmarks README.md 'Overview of Apple-designed GPUs' "
    "(M1 1278 MHz; M1 Pro/Max/Ultra 1296 MHz; M2 family 1398 MHz; 128 ALUs/core; F16 = F32 rate)"
)
HMC_M3_MAX = "https://hmc-tech.com/gpu/apple-8-core-m4-fl-vs-apple-40-core-m3-max (40-core M3 Max: 1398 MHz, 14.32 TFLOPS FP16)"
HMC_M4 = "https://hmc-tech.com/gpu/apple-10-core-m4-fl-vs-apple-8-core-m4-fl (10-core M4: 1470 MHz, 3.76 TFLOPS FP16)"
HMC_M4_PRO = "https://hmc-tech.com/gpu/apple-16-core-m4-pro-vs-intel-hd-620-1000mhz (16-core M4 Pro: 1470 MHz, 6.02 TFLOPS FP16)"
HMC_M4_MAX = "https://hmc-tech.com/gpu/apple-32-core-m4-max-vs-apple-40-core-m3-max (32-core M4 Max: 1678 MHz, 13.74 TFLOPS FP16)"
APPLE_BANDWIDTH_IN_NAME = "bandwidth as printed in the llama.cpp discussion #4167 GPU label (Apple's figure for that chip)"


@dataclass(frozen=True)
class CalibrationGpu:
    bandwidth_gbs: float
    fp16_tflops: float | None
    kind: str = "discrete"  # "unified" for Apple, DGX Spark, Ryzen AI Max
    count: int = 1
    source: str = ""
    fp16_acc_tflops: float | None = None  # None: same rate as fp16_tflops
    architecture: str = ""  # NVIDIA or AMD family (HardwareSpec.architecture); "" elsewhere


def _apple(cores: int, clock_ghz: float, bandwidth_gbs: float, clock_source: str) -> CalibrationGpu:
    """Apple GPU: cores x 128 ALUs x 2 FLOPs (FMA) x clock; FP16 runs at the FP32 rate."""
    return CalibrationGpu(
        bandwidth_gbs=bandwidth_gbs,
        fp16_tflops=round(cores * 128 * 2 * clock_ghz / 1000, 2),
        kind="unified",
        source=f"TFLOPS = {cores} cores x 128 x 2 x {clock_ghz} GHz; clock: {clock_source}; {APPLE_BANDWIDTH_IN_NAME}",
    )


def _nvidia_geforce(sms: int, boost_ghz: float, bandwidth_gbs: float, architecture: str,
                    source: str) -> CalibrationGpu:
    """GeForce: dense FP16 tensor with FP16 accumulate = SMs x 1024 x clock, FP32 accumulate half that
    (whitepaper method)."""
    fp16_acc = sms * 1024 * boost_ghz / 1000
    return CalibrationGpu(
        bandwidth_gbs=bandwidth_gbs,
        fp16_tflops=round(fp16_acc / 2, 1),
        fp16_acc_tflops=round(fp16_acc, 1),
        architecture=architecture,
        source=f"DERIVED: {sms} SM x 1024 x {boost_ghz} GHz (FP16 accumulate), / 2 (GeForce FP32 accumulate); "
               f"{source}",
    )


# GeForce rows of accelerators.csv: fp16_bf16_dense_tflops / fp16_dense_tflops_fp16acc.
_RTX_4090 = CalibrationGpu(1008, 165.2, fp16_acc_tflops=330.3, architecture="ada",
                           source=ACCELERATORS_CSV.format("RTX 4090"))
_RTX_3090 = CalibrationGpu(936, 71, fp16_acc_tflops=142, architecture="ampere",
                           source=ACCELERATORS_CSV.format("RTX 3090") + " (GA102 whitepaper)")
_RTX_5090 = CalibrationGpu(1792, 209.5, fp16_acc_tflops=419.2, architecture="blackwell",
                           source=ACCELERATORS_CSV.format("RTX 5090"))
_RTX_5080 = CalibrationGpu(960, 112.6, fp16_acc_tflops=225.1, architecture="blackwell",
                           source=ACCELERATORS_CSV.format("RTX 5080"))
_RTX_PRO_6000 = CalibrationGpu(
    1792,
    503.8,
    architecture="blackwell",
    source=ACCELERATORS_CSV.format("RTX PRO 6000 Blackwell 96GB") + " for bandwidth; TFLOPS DERIVED: 188 SM x 1024 x "
    "2.617 GHz (professional SKU: FP32 accumulate at full rate, whitepaper method; the full rate is measured, "
    "see the module docstring)",
)
_M2_ULTRA_76 = _apple(76, 1.398, 800, METAL_BENCHMARKS)

# Keys are the `gpu` column of throughput_calibration.csv, verbatim.
CALIBRATION_GPUS: dict[str, CalibrationGpu] = {
    # --- NVIDIA (CUDA and Vulkan rows) ---
    "RTX 4090 24GB": _RTX_4090,
    "RTX 4080 16GB": _nvidia_geforce(76, 2.505, 716.8, "ada", "NVIDIA Ada Lovelace whitepaper, RTX 4080 (16GB) column: 76 SM, "
                                     "2505 MHz boost, 22.4 Gbps x 256-bit = 716.8 GB/s; published 97.5 / 194.9 TFLOPS"),
    "RTX 4070 Ti 12GB": _nvidia_geforce(60, 2.61, 504, "ada", "RTX 4070 Ti: 7680 CUDA cores = 60 SM, 2610 MHz boost, 21 Gbps x 192-bit = 504 GB/s "
                                        "(https://purespecs.click/nvidia-geforce-rtx-4070-ti-gpu-specs/)"),
    "RTX 3070 8GB": _nvidia_geforce(46, 1.725, 448, "ampere", "NVIDIA GA102 whitepaper appendix, RTX 3070 column: 46 SM, 1725 MHz, "
                                    "14 Gbps x 256-bit = 448 GB/s"),
    "RTX 3090": _RTX_3090,
    "2x RTX 3090": replace(_RTX_3090, count=2),
    "RTX 5090": _RTX_5090,
    "RTX 5090 32GB": _RTX_5090,
    "RTX 5080": _RTX_5080,
    "RTX 5080 16GB": _RTX_5080,
    "RTX 5070 Ti 16GB": CalibrationGpu(896, 87.9, fp16_acc_tflops=175.8, architecture="blackwell",
                                       source=ACCELERATORS_CSV.format("RTX 5070 Ti")),
    "RTX 5060 Ti": _nvidia_geforce(36, 2.572, 448, "blackwell", "RTX 5060 Ti 16GB: 36 SM, 2572 MHz boost, 28 Gbps x 128-bit = 448 GB/s "
                                   "(https://prepmusiclog.com/nvidia-rtx-5060-5060-ti-review-you-can-have-"
                                   "affordable-or-future-proof-pick-one spec table; SM count: intopress.info "
                                   "review table)"),
    "RTX PRO 6000 Blackwell": _RTX_PRO_6000,
    "RTX PRO 6000 96GB": _RTX_PRO_6000,
    # Max-Q: same memory (1792 GB/s), lower power limit; only a decode row uses it, TFLOPS not needed.
    "RTX PRO 6000 Max-Q 96GB": CalibrationGpu(1792, None, architecture="blackwell",
                                              source=ACCELERATORS_CSV.format("RTX PRO 6000 Blackwell 96GB")),
    # nvidia-smi names the SXM part "H100 80GB HBM3" (the PCIe part is "H100 PCIe"), so the row is taken as SXM.
    "H100 80GB": CalibrationGpu(3350, 989.4, architecture="hopper", source=ACCELERATORS_CSV.format("H100 80GB SXM")),
    "DGX Spark (GB10)": CalibrationGpu(273, None, kind="unified", architecture="blackwell", source=ACCELERATORS_CSV.format("DGX Spark (GB10 128GB)")
                                       + "; FP16 dense not published (only 1 PFLOP FP4 sparse)"),
    # --- AMD / Intel (Vulkan, HIP rows) ---
    "RX 9070 XT": CalibrationGpu(640, 194.7, architecture="rdna4", source="640 GB/s = 20 Gbps x 256-bit (multiplayer.it / purepc.pl launch "
                                 "specs); TFLOPS DERIVED: AMD 779 INT8 TOPS with sparsity (purepc.pl) / 2 (dense) / 2 "
                                 "(FP16 WMMA = half the INT8 rate) = 194.7; equals 64 CU x 1024 x 2.97 GHz"),
    "RX 9070": CalibrationGpu(640, 144.5, architecture="rdna4", source="640 GB/s (multiplayer.it launch specs); TFLOPS DERIVED as for the "
                              "RX 9070 XT per CU and clock: 56 CU x 1024 x 2.52 GHz boost (pocketmags Linux Format, RDNA 4)"),
    "Radeon AI PRO R9700": CalibrationGpu(640, None, architecture="rdna4", source=ACCELERATORS_CSV.format("Radeon AI PRO R9700 32GB")
                                          + "; FP16 not sourced"),
    "Arc B580": CalibrationGpu(456, 109.4, source="456 GB/s (techpowerup / fpsbench B580 spec); TFLOPS DERIVED: "
                               "437.45 INT4 XMX TOPS (hmc-tech.com/gpu/intel-arc-b580-vs-intel-arc-a580) / 4"),
    "AMD Ryzen AI Max+ 395 (Radeon 8060S)": CalibrationGpu(
        256, 59.4, kind="unified", architecture="rdna3.5",
        source=ACCELERATORS_CSV.format("Ryzen AI Max+ 395 128GB") + " for bandwidth; FP16 59.4 = 512 ops/clk/CU x 40 CU "
        "x 2.9 GHz (https://whylucian.github.io/softab/docs/hardware-specs.html)"),
    # --- Apple (Metal rows; unified memory) ---
    "Apple M1 7c 68GB/s": _apple(7, 1.278, 68.25, METAL_BENCHMARKS),
    "Apple M1 7c GPU 8GB": _apple(7, 1.278, 68.25, METAL_BENCHMARKS),
    "Apple M1 8c 68GB/s": _apple(8, 1.278, 68.25, METAL_BENCHMARKS),
    "Apple M1 Pro 14c 200GB/s": _apple(14, 1.296, 200, METAL_BENCHMARKS),
    "Apple M1 Pro 16c 200GB/s": _apple(16, 1.296, 200, METAL_BENCHMARKS),
    "Apple M1 Max 24c 400GB/s": _apple(24, 1.296, 400, METAL_BENCHMARKS),
    "Apple M1 Max 32c 400GB/s": _apple(32, 1.296, 400, METAL_BENCHMARKS),
    "Apple M1 Max 32c 64GB": _apple(32, 1.296, 400, METAL_BENCHMARKS),
    "Apple M1 Ultra 64c 800GB/s": _apple(64, 1.296, 800, METAL_BENCHMARKS),
    "Apple M2 8c 100GB/s": _apple(8, 1.398, 100, METAL_BENCHMARKS),
    "Apple M2 Pro 16c 200GB/s": _apple(16, 1.398, 200, METAL_BENCHMARKS),
    "Apple M2 Pro 19c 200GB/s": _apple(19, 1.398, 200, METAL_BENCHMARKS),
    "Apple M2 Max 30c 400GB/s": _apple(30, 1.398, 400, METAL_BENCHMARKS),
    "Apple M2 Max 38c 400GB/s": _apple(38, 1.398, 400, METAL_BENCHMARKS),
    "Apple M2 Ultra 76c 192GB": _M2_ULTRA_76,
    "Apple M2 Ultra 76c": _M2_ULTRA_76,
    # GPU core count not printed; the row is decode only, which needs the bandwidth (800 GB/s for every M2 Ultra).
    "Apple M2 Ultra 192GB": CalibrationGpu(800, None, kind="unified", source=METAL_BENCHMARKS),
    "Apple M3 Max 40c 64GB": _apple(40, 1.398, 400, HMC_M3_MAX),
    "Apple M3 Ultra 60c 800GB/s": _apple(60, 1.398, 819, HMC_M3_MAX + "; 819 GB/s: Apple M3 Ultra spec (accelerators.csv "
                                         "'Mac Studio M3 Ultra 256GB')"),
    "Apple M3 Ultra 80c 800GB/s": _apple(80, 1.398, 819, HMC_M3_MAX + "; 819 GB/s: Apple M3 Ultra spec (accelerators.csv "
                                         "'Mac Studio M3 Ultra 256GB')"),
    "Apple M4 10c 120GB/s": _apple(10, 1.47, 120, HMC_M4),
    "Apple M4 Pro 16c 273GB/s": _apple(16, 1.47, 273, HMC_M4_PRO),
    "Apple M4 Max 32c 410GB/s": _apple(32, 1.678, 410, HMC_M4_MAX),
    "Apple M4 Max 40c 546GB/s": _apple(40, 1.678, 546, HMC_M4_MAX),
    # The 36 GB M4 Max is the 32-core-GPU, 410 GB/s configuration (Apple MacBook Pro / Mac Studio tech specs).
    "Apple M4 Max (36GB)": _apple(32, 1.678, 410, HMC_M4_MAX),
}

# Held-out AMD GPUs of bench/data/validation_rocm.csv. They are never fitted on (bench/throughput_accuracy.py
# fits on throughput_calibration.csv only); their specs are public datasheet arithmetic like the ones above.
ROCM_SPECS = "https://rocm.docs.amd.com/en/7.13.0-preview/reference/gpu-specs.html (architecture, CU count)"
VALIDATION_GPUS: dict[str, CalibrationGpu] = {
    "Instinct MI300X": CalibrationGpu(5300, 1307.4, architecture="cdna3", source=ROCM_SPECS + "; 1307.4 TFLOPS dense "
                                      "FP16 = 304 CU x 2048 x 2.1 GHz, 5.3 TB/s HBM3 (catalog row instinct-mi300x-192gb)"),
    "Instinct MI210": CalibrationGpu(1638.4, 181.0, architecture="cdna2", source="AMD MI210 (product-page figures, not re-fetched this pass): 104 CU, 1.7 GHz peak, "
                                     "181.0 TFLOPS dense FP16 matrix (104 x 1024 x 1.7), 64 GB HBM2e 1.6384 TB/s"),
    "Radeon RX 7900 XTX": CalibrationGpu(960, 122.8, architecture="rdna3", source="catalog row radeon-rx-7900-xtx-24gb "
                                         "(96 CU x 512 x 2.5 GHz WMMA FP16; 960 GB/s)"),
    "Radeon RX 7900 XT": CalibrationGpu(800, 103.2, architecture="rdna3", source="AMD RX 7900 XT (product-page figures, not re-fetched this pass): 84 CU, 2.4 GHz boost "
                                        "-> 84 x 512 x 2.4 = 103.2 TFLOPS WMMA FP16; 20 Gbps x 320-bit = 800 GB/s"),
    "Radeon Pro W7900": CalibrationGpu(864, 122.6, architecture="rdna3", source="AMD Radeon PRO W7900 (product-page figures, not re-fetched this pass): 96 CU, 2.495 GHz "
                                       "boost -> 96 x 512 x 2.495 = 122.6 TFLOPS WMMA FP16; 18 Gbps x 384-bit = 864 GB/s"),
}

# `backend` column of the CSV -> HardwareSpec.backend
CSV_BACKENDS = {"CUDA": "cuda", "Metal": "metal", "Vulkan": "vulkan", "HIP+WMMA+FA": "rocm", "ROCm": "rocm"}


def hardware_spec(gpu: str, csv_backend: str) -> tuple[HardwareSpec, int]:
    """The HardwareSpec of one CSV row's GPU under that row's backend, and the number of GPUs it used
    (calibration GPUs first, then the held-out validation GPUs)."""
    entry = CALIBRATION_GPUS.get(gpu) or VALIDATION_GPUS[gpu]
    spec = HardwareSpec(
        slug=gpu.lower().replace(" ", "-"),
        name=gpu,
        vendor="",
        memory_gb=0,
        bandwidth_gbs=entry.bandwidth_gbs,
        kind=entry.kind,  # type: ignore[arg-type]
        backend=CSV_BACKENDS[csv_backend],  # type: ignore[arg-type]
        fp16_tflops=entry.fp16_tflops,
        fp16_acc_tflops=entry.fp16_acc_tflops,
        architecture=entry.architecture,
    )
    return spec, entry.count
