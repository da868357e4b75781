"""Translatable notes: a warning or a reason the engine states, as a stable code, its English text and its values.

The contract JSON (docs/estimate-contract.md) and ``manage.py estimate`` print ``Note.text``, the English sentence.
The web page looks the note up by ``code`` and renders its own (translated) template with ``params``; the params
are plain numbers and names (sizes in GiB as floats, token counts as ints), never pre-formatted strings, so each
locale formats them itself. A code's params never change meaning; a new wording gets a new code.

Codes and their params
======================

Warnings of an estimate (``Estimate.warnings``, built in estimate.py ``_warnings`` / ``_fit_warnings``):

``context_above_max``          context: int, max_context: int
    --context is above the model's maximum context (max_position_embeddings).
``prompt_beyond_context``      depth: int, prompt: int, tokens: int (depth + prompt), context: int
    The prefill figures assume a cache larger than --context.
``weights_estimated``          model: str (model name), params_total: float (stated parameters)
    No config.json: weights are stated parameters × the format's bits per weight.
``kv_from_proxy``              proxy: str (the family member's name)
    No config.json: KV cache and per-layer speed terms come from the nearest sourced family member.
``kv_unknown``                 (none)
    No config.json and no family member: KV cache excluded, kv_cache is null.
``speed_upper_bound``          (none)
    No layer count (no config.json, no family member): speeds leave out the per-layer kernel time (upper bounds).
``weights_published_size``     quant: str
    Weights taken from the published file size of that quant.
``weights_rule_from``          quant: str, rule_from: str (the llama-quantize type used instead)
    A per-layer recipe (unsloth UD-*) without a published size, sized with the nearest type's rules.
``mtp_included``               layers: int, mtp_gib: float
    The GGUF keeps the MTP (nextn) layers and llama.cpp loads them.
``vllm_gguf_experimental``     (none)
    vLLM with a GGUF format.
``format_not_on_backend``      quant: str, formats: str, engine: str
    llama.cpp's CANN backend does not run this weight format (it runs the listed ones): the plan does not run.
``gguf_experts_not_on_backend`` quant: str, model: str, hardware: str
    llama.cpp's CANN backend has no kernel for the MXFP4 experts every GGUF of the model keeps: no format of it runs
    there under llama.cpp (estimate.gguf_experts_run_on).
``vllm_format_not_on_platform`` quant: str, platform: str ("amd-gpu" | "intel-gpu" | "intel-gaudi"), hardware: str
    vLLM's quantization table lists no kernels for this weight format on the accelerator's platform: the plan
    does not run (estimate.VLLM_FORMATS_WITHOUT_KERNELS).
``vllm_format_not_published``  quant: str, hardware: str
    vLLM runs on the accelerator only through its vendor's build, which publishes no support for this format:
    only BF16 and FP16 count as running.
``vllm_vendor_build_runtime``  hardware: str
    vLLM through a vendor's build (Cambricon, MetaX, Kunlunxin, Moore Threads, Hygon): its runtime memory is modelled
    as vLLM's on CUDA, because the build publishes none of its own.
``vllm_gaudi_budget``          utilization: float, graphs_gib: float, unused_gib: float, usable_gib: float,
                               usual_share: float (the usable share of memory other engines get there)
    vLLM on Gaudi (vllm-gaudi) budgets the memory free after loading: utilization of it for HPU graphs and the KV
    cache, the rest unused; the usable memory per device is the total less that unused share.
``vllm_mxfp4_padding``         kernel: str ("Marlin" | "FlashInfer" | "Triton"), intermediate_multiple: int,
                               hidden_multiple: int, padding_gib: float (all GPUs), checkpoint_gib: float
    vLLM allocates an MXFP4 checkpoint's routed experts padded for its MoE kernel (parallelism.py).
``vllm_mxfp4_layout``          kernel: str ("Triton"), scale_row_multiple: int, padding_gib: float (all GPUs),
                               checkpoint_gib: float
    vLLM's Triton MoE kernel on Hopper swizzles the MXFP4 scales (rows padded), keeps the checkpoint's scales beside
    them and holds the expert biases in fp32 (parallelism.py).
``vllm_share_capped_unified``  utilization: float (asked), share: float (launched with), free_gib: float
    vLLM on a unified-memory machine: the share it is launched with is what the system leaves free
    (estimate.vllm_memory_share), not the larger one asked for, at which it would not start.
``vllm_quantized_moe_gap``     logged_gib: float, modelled_gib: float, gap_pct: float, source: str
    vLLM on a MoE model in a quantized format (not an MXFP4 checkpoint's own): the one published log of such a KV
    budget had less KV memory than this engine sizes for its version (runtime.VLLM_QUANTIZED_MOE_*).
``vllm_vision_encoder``        (none)
    vLLM on a vision-language checkpoint: it loads the vision encoder, which the estimate does not count.
``offload_pct_unified``        offload_pct: float
    --offload-pct on unified memory (no separate system RAM): ignored.
``explicit_offload_exceeds``   offload_pct: float
    llama.cpp with an explicit --offload-pct that still exceeds GPU memory: it does not run (no speed).
``system_ram_beyond_desktop``  ram_gb: float, desktop_gb: float, assumed_gbs: float
    more system RAM than a desktop takes (throughput.DESKTOP_MAX_RAM_BYTES) at the desktop's assumed bandwidth.
``unified_exceeds``            usable_gib: float
    Exceeds unified memory: there is no separate system RAM to offload to, so it does not run (no speed).
``offload_auto_experts``       offloaded_gib: float, n_cpu_moe: int, blocks: int
    Does not fit: routed experts of the first n_cpu_moe blocks in system RAM (llama.cpp --n-cpu-moe).
``offload_auto_layers``        offloaded_gib: float, gpu_layers: int (-ngl), cpu_blocks: int, blocks: int,
                               n_cpu_moe: int (0 for dense models; = blocks when every routed expert moved too)
    Does not fit: whole blocks (and the output head) in system RAM.
``offload_auto_nothing_fits``  offloaded_gib: float
    Even the compute buffers do not fit: everything runs from system RAM (-ngl 0).
``offload_auto_estimated``     offloaded_gib: float, share_pct: float (share of the weights moved)
    Does not fit, and the model has no layer shapes: a share of the weights in RAM, -ngl unknown.
``offload_explicit_layers``    offload_pct: float, experts_gib: float, dense_gib: float, gpu_layers: int (-ngl),
                               n_cpu_moe: int (0: none)
    --offload-pct under llama.cpp: routed experts first, then -ngl's slots, rounded up to whole layers (the flags).
``offload_explicit_estimated`` offload_pct: float, unread_gib: float, read_gib: float
    --offload-pct under llama.cpp on a model without shapes: the share of the bytes a token does not read and of
    those it reads, in proportion (-ngl unknown).
``offload_explicit_vllm``      offload_pct: float, cpu_offload_gb: float (GiB per GPU, rounded up to 0.1: vLLM's unit)
    --offload-pct under vLLM: --cpu-offload-gb.
``vllm_will_not_start``        (none)
    vLLM exceeds GPU memory and does not offload automatically.
``vllm_kv_pool_below_context`` capacity: int (tokens), context: int, concurrency: float (requests)
    vLLM's KV pool is smaller than one request (max concurrency < 1): vLLM refuses this --context.
``vllm_kv_pool_below_batch``   capacity: int (tokens), batch: int, context: int, concurrency: float
    Fewer than --batch full sequences fit in vLLM's KV pool at once (max concurrency < batch).
``prefill_unknown``            hardware: str (accelerator name)
    The accelerator has no published FP16 TFLOPS.
``no_offer_fits``              (none)
    No catalog cloud offer fits: cost per 1M tokens unknown.
``finetune_unknown``           (none)
    Fine-tuning memory needs the layer shapes.
``dsv4_compute_buffer``        ubatch: int, gib: float, larger_ubatch: int, larger_gib: float
    DeepSeek-V4 under llama.cpp: the compute buffer (counted) at this -ub and at -ub 4096, which long prompts use.
``finetune_not_modeled``       (none)
    DeepSeek-V4's compressed attention is not modeled for fine-tuning.

Reasons a recommendation is empty (recommend.py ``Recommendation.reason``):

``multi_gpu_required``         largest: str (name of the largest single accelerator), memory_gb: float
    No single accelerator of the catalog holds the configuration, but several of one priced kind do.
``no_single_fits``             largest: str, memory_gb: float
    No single accelerator of the catalog holds it (and no priced multi-GPU set does either).
``no_priced_multi_gpu``        counts: str (the GPU counts tried, e.g. "2, 4, 8")
    No accelerator with a known price fits at any of those counts.
``multi_gpu_not_needed``       single: str (the single accelerator recommended)
    Under llama.cpp one accelerator holds it with room; more GPUs would add memory, not decode speed.
``exceeds_largest_unified``    largest: str, memory_gb: float, engine: str (the machines it runs on), usable_gib: float
    Not even the largest unified-memory machine of the catalog holds it.
``no_unified_for_engine``      engine: str
    The catalog has no unified-memory machine this engine runs on (vLLM has no Metal backend).
``no_offers``                  (none)
    The catalog has no active cloud offers.
``no_offer_fits_any``          (none)
    No cloud offer's accelerator × GPU count holds the configuration.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any


@dataclass(frozen=True)
class Note:
    """One warning or reason: ``code`` (stable, for translation), the English ``text``, the values in it."""

    code: str
    text: str
    params: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def __str__(self) -> str:
        return self.text


@cache
def documented_codes() -> Mapping[str, frozenset[str]]:
    """Every code this module's documentation lists, with the names of its params (for template coverage tests).

    A code's entry is its line ````code``   name: type, …`` plus continuation lines indented past the description
    (which is indented four spaces).
    """
    codes: dict[str, set[str]] = {}
    current: set[str] | None = None
    for line in (__doc__ or "").splitlines():
        header = re.match(r"``(\w+)``\s+(.*)", line)
        if header:
            current = codes.setdefault(header.group(1), set())
            current.update(_param_names(header.group(2)))
        elif current is not None and line.startswith(" " * 8):
            current.update(_param_names(line))
        else:
            current = None
    return {code: frozenset(names) for code, names in codes.items()}


def _param_names(text: str) -> list[str]:
    """``name: type`` pairs outside parentheses."""
    return re.findall(r"(\w+): ", re.sub(r"\([^)]*\)", "", text))
