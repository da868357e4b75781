"""Launch commands with the estimate's numbers filled in (llama.cpp llama-server, vLLM vllm serve).

Flags as the engines document them: llama.cpp tools/server/README.md (-hf, -c, -np, -ngl, -fa, -ctk/-ctv,
--n-cpu-moe, -ts) and vLLM's engine arguments (--tensor-parallel-size, --max-model-len,
--gpu-memory-utilization, --kv-cache-dtype, --max-num-seqs, --quantization, --cpu-offload-gb, --trust-remote-code).
"""

from __future__ import annotations

from dataclasses import dataclass

from reports.sizing.estimate import (
    GGUF_NATIVE_NAMES, GPUS_PER_SERVER, MemoryPlan, vllm_fp8_kv_flag, vllm_parallel_sizes,
)
from reports.sizing.fit import vllm_cpu_offload_gib
from reports.sizing.kv_cache import VLLM_DTYPE_FORMATS, vllm_model_dtype
from reports.sizing.quant import quant_format
from reports.sizing.specs import ModelSpec, Scenario

GIB = 2**30
# vllm serve --dtype values of the FP32/FP16/BF16 formats (vLLM engine arguments: --dtype auto, bfloat16, float,
# float16, float32, half).
VLLM_DTYPE_NAMES = {"F32": "float32", "FP32": "float32", "FP16": "float16", "BF16": "bfloat16"}
# llama.cpp takes any -ngl above the layer count as "all layers"; 999 is the documented idiom.
ALL_LAYERS = 999


@dataclass(frozen=True)
class LaunchCommand:
    engine: str
    lines: tuple[str, ...]
    note_codes: tuple[str, ...] = ()  # why details differ from the scenario, for the page to explain (translated)

    @property
    def text(self) -> str:
        return " \\\n  ".join(self.lines)

    @property
    def model_argument(self) -> str:
        """What the command loads: the last word of its first line (a repository, a file or a directory)."""
        return self.lines[0].rsplit(" ", 1)[-1]


def gguf_weights(model: ModelSpec, quant: str, *, bare_repo_allowed: bool = True) -> tuple[str, str]:
    """The GGUF to load, as llama.cpp's -hf repo[:tag] ("hf") or a local file ("file"), and the note that explains
    a local file: "no_gguf_repo" (the catalog knows no repo) or "gguf_not_in_repo" (the repo's listing, catalog
    field gguf_repo_quants, has no file of this type: a -hf tag would fail). A repo that publishes one file type
    is named without a tag (its manifest resolves to that file, as llama.cpp's own guides write it) when
    ``bare_repo_allowed``; vLLM needs repo_id:quant_type always."""
    if not model.gguf_repo:
        return f"./{model.slug}-{quant}.gguf", "no_gguf_repo"
    published = model.gguf_repo_quants
    if published and quant not in published:
        return f"./{model.slug}-{quant}.gguf", "gguf_not_in_repo"
    if published == (quant,) and bare_repo_allowed:
        return model.gguf_repo, ""
    return f"{model.gguf_repo}:{quant}", ""


def gguf_tag_unverified(model: ModelSpec) -> bool:
    """Whether a command's ``-hf repo:quant`` is asked without knowing that the repo has that file: the catalog
    names the repo (sourced) but not its file listing (gguf_repo_quants empty), so the tag is the format chosen here,
    not one seen in the repo. The page says so (note "gguf_tag_unverified") instead of hiding the command."""
    return bool(model.gguf_repo) and not model.gguf_repo_quants


# Hugging Face stores files of at most 50 GB (hub-docs, storage limits: "Per file: 50GB max"): a larger GGUF is
# published in parts made by llama-gguf-split (NAME-00001-of-0000N.gguf). llama.cpp loads the parts from the first
# (and -hf downloads them all); vLLM loads one file, so the parts are merged first.
HF_MAX_FILE_BYTES = 50e9


def gguf_in_parts(plan: MemoryPlan) -> bool:
    """Whether the GGUF of this plan's format is larger than one Hugging Face file (the weights are its bulk)."""
    return plan.weights.total_bytes > HF_MAX_FILE_BYTES


# rpc-server's default port (llama.cpp tools/rpc/README.md): the other machines of a multi-machine split.
RPC_PORT = 50052


def llama_cpp_command(model: ModelSpec, scenario: Scenario, plan: MemoryPlan, *,
                      separate_machines: bool = False) -> LaunchCommand:
    """The llama-server command of a memory plan (a command needs the plan, not the speeds or the cost).
    ``separate_machines``: each "GPU" is a machine of its own (unified memory: one device per Mac), reached through
    llama.cpp's RPC backend."""
    placement = plan.placement
    quant = plan.weights.quant
    weights, note = gguf_weights(model, quant)
    if note and gguf_in_parts(plan):
        # A local file this large comes in parts (note gguf_in_parts): -m names the first, N for their count.
        weights = f"./{model.slug}-{quant}-00001-of-0000N.gguf"
    first = f"llama-server -m {weights}" if note else f"llama-server -hf {weights}"
    # -np pins the slots the plan sizes: without it llama-server starts 4 slots on one unified cache (-np auto,
    # PR #17997), whose sliding-window part holds 4 windows (kv_cache.llama_cpp_swa_cells). Several sequences share
    # one unified cache as the plan sizes it, so -c is the total (context × sequences) and --kv-unified is named:
    # an explicit -np turns the unified cache off otherwise (issue #23652: each slot would get -c / -np cells).
    lines = [first, f"-c {scenario.context * scenario.batch}", f"-np {scenario.batch}"]
    if scenario.batch > 1:
        lines.append("--kv-unified")
    lines.append(f"-ngl {placement.gpu_layers if placement.gpu_layers is not None else ALL_LAYERS}")
    lines.append("-fa on" if scenario.flash_attention else "-fa off")
    kv_dtype = plan.kv.kv_dtype if plan.kv is not None else scenario.kv_dtype
    if kv_dtype not in ("f16",):
        lines.append(f"-ctk {kv_dtype} -ctv {kv_dtype}")
    if placement.n_cpu_moe:
        lines.append(f"--n-cpu-moe {placement.n_cpu_moe}")
    notes = [note] if note else []
    if not note and gguf_tag_unverified(model):
        notes.append("gguf_tag_unverified")
    if note and gguf_in_parts(plan):
        notes.append("gguf_in_parts")
    if scenario.gpus > 1 and separate_machines:
        # One llama-server drives its own device and one rpc-server per other machine (--rpc host:port,…).
        lines.append("--rpc " + ",".join(f"MACHINE-{n}:{RPC_PORT}" for n in range(2, scenario.gpus + 1)))
        notes.append("rpc_machines")
    elif scenario.gpus > GPUS_PER_SERVER:
        # More GPUs than a server holds (estimate.GPUS_PER_SERVER): llama.cpp reaches the other servers' GPUs through
        # its RPC backend, one rpc-server each, and splits the layers over all devices as it does locally.
        notes.append("rpc_servers")
    if scenario.gpus > 1:
        split = placement.tensor_split or (1,) * scenario.gpus  # the plan's split by layer sizes, or an even one
        lines.append("-ts " + ",".join(str(share) for share in split))
    if not quant_format(quant).family.startswith("gguf") and quant not in GGUF_NATIVE_NAMES:
        notes.append("not_gguf")  # llama.cpp loads GGUF files only (a BF16 GGUF is one)
    if not model.has_shapes and placement.offloaded_bytes > 0:
        notes.append("ngl_unknown")  # no layer shapes: how many layers fit is not known
    if placement.mode == "explicit" and plan.fit.verdict == "exceeds":
        notes.append("offload_short")  # the share the visitor set leaves more on the GPUs than they hold
    return LaunchCommand("llama.cpp", tuple(lines), tuple(notes))


# Moonshot's Kimi models ship their tokenizer (and config classes) as remote code: the Kimi-K2 deploy guidance and
# vLLM's recipes (vllm-project/recipes moonshotai/Kimi-K2.md, Kimi-Linear.md) serve them with --trust-remote-code.
VLLM_TRUST_REMOTE_CODE_ARCHITECTURES = frozenset({"kimi_k2", "kimi_linear"})


def vllm_command(model: ModelSpec, scenario: Scenario, plan: MemoryPlan, platform: str | None = None,
                 memory_share: float | None = None) -> LaunchCommand:
    """The vllm serve command of a memory plan (``platform``: estimate.vllm_platform of the accelerator;
    ``memory_share``: estimate.vllm_memory_share, the --gpu-memory-utilization it runs with, when it is not the
    scenario's)."""
    quant = plan.weights.quant
    # F32 is served from the checkpoint with --dtype float32 (the 32-bit weights vLLM holds), not as a GGUF file.
    gguf = quant_format(quant).family.startswith("gguf") and quant not in VLLM_DTYPE_FORMATS
    notes: list[str] = []
    if gguf:
        # vLLM docs, features/quantization/gguf.md: a single-file GGUF as repo_id:quant_type (or a local file),
        # with the base model's tokenizer; GGUF loading lives in the vllm-gguf-plugin.
        weights, _ = gguf_weights(model, quant, bare_repo_allowed=False)
        if gguf_in_parts(plan):
            weights = f"./{model.slug}-{quant}.gguf"  # the parts merged into one file (note gguf_merge_for_vllm)
        elif gguf_tag_unverified(model):
            notes.append("gguf_tag_unverified")
        lines = [f"vllm serve {weights}"]
        if model.hf_repo:
            lines.append(f"--tokenizer {model.hf_repo}")
        else:
            notes.append("no_tokenizer_repo")
    else:
        # Without a Hugging Face id a bare slug would be looked up on the Hub and fail: a local directory instead.
        lines = [f"vllm serve {model.hf_repo or './' + model.slug}"]
    if model.architecture in VLLM_TRUST_REMOTE_CODE_ARCHITECTURES:
        lines.append("--trust-remote-code")
    tensor_parallel, pipeline_parallel = vllm_parallel_sizes(scenario.gpus)
    if tensor_parallel > 1:
        lines.append(f"--tensor-parallel-size {tensor_parallel}")
    if pipeline_parallel > 1:
        lines.append(f"--pipeline-parallel-size {pipeline_parallel}")
        notes.append("multi_server")
    lines.append(f"--max-model-len {scenario.context}")
    share = scenario.gpu_memory_utilization if memory_share is None else memory_share
    lines.append(f"--gpu-memory-utilization {share:g}")
    # vllm-gaudi quantizes to FP8 through Intel Neural Compressor: --quantization inc and the fp8_inc cache, with
    # QUANT_CONFIG naming the files of a calibration run (vllm-gaudi docs/configuration/quantization/inc.md).
    gaudi = platform == "intel-gaudi"
    if scenario.kv_dtype == "fp8":
        lines.append(vllm_fp8_kv_flag(platform))
    if scenario.max_num_seqs:
        # Only when the scenario sets it: the runtime figures (sampler warm-up, CUDA-graph sizes) are vLLM's
        # defaults otherwise, and a --max-num-seqs below them would make the page's memory differ from the server's.
        lines.append(f"--max-num-seqs {scenario.max_num_seqs}")
    if not (model.hf_repo or gguf or quant in ("AWQ", "GPTQ")):  # AWQ/GPTQ: the quantized_repo note says where
        notes.append("no_hf_repo")
    if quant in ("AWQ", "GPTQ"):
        # An AWQ/GPTQ checkpoint names its method in its config and vLLM picks the fast Marlin kernel for it;
        # --quantization awq/gptq would force the generic kernel ("you specified quantization=awq explicitly, so
        # forcing awq", vllm awq_marlin.py). The catalog names no quantized repository: a local directory.
        lines[0] = f"vllm serve ./{model.slug}-{quant}"
        notes.append("quantized_repo")
    elif quant in VLLM_DTYPE_FORMATS and VLLM_DTYPE_FORMATS[quant] != vllm_model_dtype(model):
        # --dtype auto would serve the checkpoint's dtype (float32 downcast to bfloat16); the estimate's weights, KV
        # cache and activations are in the chosen one (kv_cache.vllm_model_dtype).
        lines.append(f"--dtype {VLLM_DTYPE_NAMES[quant]}")
    elif quant == "FP8" and model.native_dtype != "fp8":
        lines.append("--quantization inc" if gaudi else "--quantization fp8")  # vLLM quantizes BF16 to FP8 on load
    elif gguf:
        notes.append("gguf_in_vllm")
        if gguf_in_parts(plan):
            notes.append("gguf_merge_for_vllm")  # vLLM loads a single GGUF file
    if gaudi and (scenario.kv_dtype == "fp8" or (quant == "FP8" and model.native_dtype != "fp8")):
        notes.append("gaudi_inc_calibration")
    offloaded = plan.placement.offloaded_weight_bytes if scenario.engine == "vllm" else 0.0
    if offloaded > 0:
        lines.append(f"--cpu-offload-gb {vllm_cpu_offload_gib(offloaded, scenario.gpus):g}")
    return LaunchCommand("vllm", tuple(lines), tuple(notes))
