"""The engine's errors in the visitor's language and the configurator's words.

The engine's messages name command-line options ("--gpus 3: …", "--engine vllm"), as the estimate contract wants.
The configurator reaches some of them; those carry a code and params (reports.sizing.errors.SizingError), and this
module words them for the page. Any other error is shown as the engine wrote it.
"""

from __future__ import annotations

from django.utils.translation import get_language, gettext, gettext_lazy as _

from reports import formatting
from reports.forms import ENGINES
from reports.sizing.errors import SizingError

# parallelism.py's names for what tensor parallelism splits.
SPLIT_PARTS = {
    "attention heads": _("attention heads"), "KV heads": _("KV heads"),
    "linear-attention key heads": _("linear-attention key heads"),
    "linear-attention value heads": _("linear-attention value heads"), "Mamba heads": _("Mamba heads"),
    "FFN intermediate size": _("FFN width"), "expert intermediate size": _("expert width"),
    "shared-expert intermediate size": _("shared-expert width"),
}


def sizing_error_text(error: SizingError) -> str:
    """The page's wording of an engine error (the engine's own message when it has no code)."""
    p = dict(error.params)
    for key in ("engine", "other"):
        if key in p:
            p[key] = dict(ENGINES).get(p[key], p[key])
    what = str(SPLIT_PARTS.get(p.get("what", ""), p.get("what", "")))
    texts = {
        "vllm_format_on_llama_cpp": lambda: gettext(
            "%(quant)s is a vLLM checkpoint format; llama.cpp runs GGUF files. Choose a GGUF format such as Q4_K_M, "
            "or the vLLM engine.") % p,
        "kv_dtype_not_for_engine": lambda: gettext(
            "This KV-cache precision is not available in %(engine)s; it caches %(choices)s.") % p,
        "dsv4_vllm_needs_hopper": lambda: gettext(
            "vLLM's DeepSeek-V4 attention backends need an NVIDIA Hopper or Blackwell GPU, not %(hardware)s. Choose "
            "llama.cpp.")
        % p,
        "vllm_share_above_free": lambda: gettext(
            "vLLM would ask for %(requested)s GiB of the %(total)s GiB of %(hardware)s, but the GPU driver (the CUDA "
            "or ROCm context) holds some of it before vLLM measures what is free: it does not start. Choose at most "
            "%(largest)s.") % {
                **p, "requested": formatting.number(p["requested_gib"], get_language(), 2),
                "total": formatting.number(p["total_gib"], get_language(), 2), "largest": f"{p['largest']:g}"},
        "dsv4_vllm_no_gguf": lambda: gettext(
            "vLLM cannot load DeepSeek-V4 GGUF files; it serves the released checkpoint. Choose FP8_FP4.") % p,
        "dsv4_vllm_kv_fp8": lambda: gettext(
            "vLLM caches DeepSeek-V4 in its own FP8 layout only; choose the FP8 KV cache.") % p,
        "engine_not_on_backend": lambda: gettext("%(engine)s does not run on %(hardware)s; choose %(other)s.") % p,
        "vllm_needs_shapes": lambda: (gettext(
            "vLLM's KV pool cannot be sized for %(model)s: its layer shapes are not known. Choose llama.cpp.")
            if p.get("llama_cpp_runs", True) else gettext(
            "vLLM's KV pool cannot be sized for %(model)s: its layer shapes are not published. llama.cpp, which "
            "estimates without them, has no backend for %(hardware)s, so no engine this calculator models sizes "
            "%(model)s there.")) % p,
        "mxfp4_needs_moe": lambda: gettext(
            "%(quant)s checkpoints quantize MoE experts, and %(model)s has none. Choose another format.") % p,
        "tp_not_divisible": lambda: gettext(
            "%(gpus)s GPUs cannot split the model evenly: its %(count)s %(what)s are not divisible by %(gpus)s "
            "(vLLM splits them across the GPUs). Choose another GPU count.") % {**p, "what": what},
        "tp_width_not_divisible": lambda: gettext(
            "%(gpus)s GPUs cannot split the model evenly: its %(what)s of %(count)s is not divisible by %(gpus)s "
            "(vLLM splits it across the GPUs). Choose another GPU count.") % {**p, "what": what},
        "tp_block": lambda: gettext(
            "%(gpus)s GPUs cannot split the %(quant)s weights: the %(what)s %(count)s / %(gpus)s is not a multiple of "
            "the %(block)s-wide blocks. Choose another GPU count.") % {**p, "what": what},
        "tp_kv_heads_multiple": lambda: gettext(
            "With more GPUs than its %(count)s KV heads, the GPU count must be a multiple of them (vLLM copies whole "
            "KV heads). Choose another GPU count.") % p,
    }
    text = texts.get(error.code)
    return text() if text is not None else str(error)
