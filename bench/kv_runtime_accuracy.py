"""KV cache and runtime memory against published figures and engine logs.

``kv_section()`` and ``runtime_section()`` each return ``(rows, summary)``; ``bench/accuracy.py`` prints them,
and ``python -m bench.kv_runtime_accuracy`` prints them alone. Rows are dicts with ``check``, ``expected``,
``predicted``, ``error`` (relative, or None when the row is informational) and ``note``.

Model shapes are written here by hand from /work/shared/data/models.json (the record named in each comment);
measured values come from bench/data/*.csv. Logged weights are used as inputs, so a vLLM row tests the KV and
runtime model alone.
"""

from __future__ import annotations

import csv
import json
import statistics
from pathlib import Path

from bench import seed_catalog
from bench.model_specs import alternating_sliding, every_nth, uniform_layers
from reports.sizing.config_parser import parse_config
from reports.sizing.errors import SizingError
from reports.sizing.kv_cache import GIB, kv_cache
from reports.sizing.runtime import MIB, llama_cpp_buffers, runtime_memory, vllm_kv_capacity
from reports.sizing.specs import (
    AttentionShape,
    DsaIndexerShape,
    LayerSpec,
    LinearAttentionShape,
    MlaShape,
    ModelSpec,
    MoeShape,
    Scenario,
)

DATA = Path(__file__).resolve().parent / "data"
SEED_MODELS = Path(__file__).resolve().parents[1] / "catalog" / "seed" / "models.json"


def _dense(slug, layers, hidden, inter, heads, kv_heads, head_dim, vocab, **kw) -> ModelSpec:
    return ModelSpec(slug=slug, name=slug, architecture=kw.pop("arch", "llama"), hidden_size=hidden,
                     vocab_size=vocab, layers=kw.pop("layer_specs", None) or uniform_layers(layers),
                     attention=AttentionShape(heads, kv_heads, head_dim), intermediate_size=inter, **kw)


# models.json records (config.json copies unless said otherwise).
SPECS: dict[str, ModelSpec] = {
    "Llama-3.1-8B": _dense("llama-3.1-8b", 32, 4096, 14336, 32, 8, 128, 128256),
    "Qwen3-8B": _dense("qwen3-8b", 36, 4096, 12288, 32, 8, 128, 151936),
    "Qwen3-14B": _dense("qwen3-14b", 40, 5120, 17408, 40, 8, 128, 151936),
    # "Qwen2.5-72B-Instruct"; Kimi-Dev-72B is a Qwen2.5-72B fine-tune with the same shapes (its logged
    # activation peak equals Qwen2.5-72B's, i.e. the same 152,064 vocab).
    "Qwen2.5-72B": _dense("qwen2.5-72b", 80, 8192, 29568, 64, 8, 128, 152064),
    # "Llama 3.3 70B Instruct" / "Llama 3.x 70B dims".
    "Llama-3.3-70B": _dense("llama-3.3-70b", 80, 8192, 28672, 64, 8, 128, 128256),
    "Phi-4": _dense("phi-4", 40, 5120, 17920, 40, 10, 128, 100352),
    # "Mistral Small 3.2 24B (text part)" (derivative config; 3.1 shares the text shapes).
    "Mistral-Small-24B": _dense("mistral-small-24b", 40, 5120, 32768, 32, 8, 128, 131072),
    # "Gemma 3 27B (text config, fixtures)", "Gemma 3 12B", "Gemma 3 4B": every 6th layer global.
    "Gemma-3-27B": _dense("gemma-3-27b", 62, 5376, 21504, 32, 16, 128, 262208, arch="gemma3",
                          layer_specs=every_nth(62, 6, "full", "sliding"), sliding_window=1024),
    "Gemma-3-12B": _dense("gemma-3-12b", 48, 3840, 15360, 16, 8, 256, 262208, arch="gemma3",
                          layer_specs=every_nth(48, 6, "full", "sliding"), sliding_window=1024),
    "Gemma-3-4B": _dense("gemma-3-4b", 34, 2560, 10240, 8, 4, 256, 262208, arch="gemma3",
                         layer_specs=every_nth(34, 6, "full", "sliding"), sliding_window=1024),
    "Mixtral-8x7B": _dense("mixtral-8x7b", 32, 4096, None, 32, 8, 128, 32000, arch="mixtral",
                           layer_specs=uniform_layers(32, ffn="moe"), moe=MoeShape(8, 2, 14336)),
    # "Llama 4 Scout / Maverick" (re-implementation defaults): no_rope_layer_interval 4 → every 4th layer
    # is global (NoPE), the others chunked local attention of 8192.
    "Llama-4-Scout": _dense("llama-4-scout", 48, 5120, 16384, 40, 8, 128, 202048, arch="llama4",
                            layer_specs=every_nth(48, 4, "full", "chunked", ffn="moe"),
                            attention_chunk_size=8192, moe=MoeShape(16, 1, 8192, 1)),
    "Qwen3-235B-A22B": _dense("qwen3-235b-a22b", 94, 4096, None, 64, 4, 128, 151936, arch="qwen3_moe",
                              layer_specs=uniform_layers(94, ffn="moe"), moe=MoeShape(128, 8, 1536)),
    # "gpt-oss-120b" (doc record; window and alternation as gpt-oss-20b's config.json).
    "gpt-oss-120b": _dense("gpt-oss-120b", 36, 2880, None, 64, 8, 64, 201088, arch="gpt_oss",
                           layer_specs=alternating_sliding(36, "moe"),
                           sliding_window=128, moe=MoeShape(128, 4, 2880), native_dtype="mxfp4",
                           checkpoint_quant_method="mxfp4"),
    # "GLM-4.5 (355B-A32B)" (doc record; the seed's figures use it).
    "GLM-4.5": _dense("glm-4.5", 92, 5120, 12288, 96, 8, 128, 151552, arch="glm4_moe", mtp_layers=1),
    "DeepSeek-V3": ModelSpec(
        slug="deepseek-v3", name="DeepSeek-V3", architecture="deepseek_v3", hidden_size=7168, vocab_size=129280,
        layers=uniform_layers(61), attention=None, mla=MlaShape(128, 1536, 512, 128, 64, 128), native_dtype="fp8"),
    "GLM-5": ModelSpec(
        slug="glm-5", name="GLM-5", architecture="glm_moe_dsa", hidden_size=6144, vocab_size=154880,
        layers=uniform_layers(78), attention=None, mla=MlaShape(64, 2048, 512, 192, 64, 256),
        dsa_indexer=DsaIndexerShape(32, 128, 2048)),
    "Qwen3-Next-80B-A3B": _dense(
        "qwen3-next-80b-a3b", 48, 2048, 5120, 16, 2, 256, 151936, arch="qwen3_next",
        layer_specs=every_nth(48, 4, "full", "linear", ffn="moe"),
        linear_attention=LinearAttentionShape(16, 32, 128, 128, 4), moe=MoeShape(512, 10, 512, 1, 512)),
    # Pythia 2.8B (llamacpp_runtime.csv notes: n_vocab 50304, n_embd 2560, n_head 32; MHA, 32 layers).
    "Pythia-2.8B": _dense("pythia-2.8b", 32, 2560, 10240, 32, 32, 80, 50304, arch="gptneox"),
}

# vllm_memory.csv model → SPECS key (rows for other models are listed as "no hand spec").
VLLM_MODELS = {
    "meta-llama/Llama-3.1-8B-Instruct": "Llama-3.1-8B",
    "RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w4a16": "Llama-3.1-8B",
    "RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w8a8": "Llama-3.1-8B",
    "Qwen/Qwen3-8B": "Qwen3-8B",
    "Qwen/Qwen3-14B": "Qwen3-14B",
    "Qwen/Qwen2.5-72B-Instruct": "Qwen2.5-72B",
    "moonshotai/Kimi-Dev-72B": "Qwen2.5-72B",
    "RedHatAI/Llama-3.3-70B-Instruct-fp8-dynamic": "Llama-3.3-70B",
    "redhatai/Llama-3.3-70B-Instruct-quantized.w8a8": "Llama-3.3-70B",
    "microsoft/phi-4": "Phi-4",
    "mistralai/Mistral-Small-3.1-24B-Instruct-2503": "Mistral-Small-24B",
    "RedHatAI/Mistral-Small-3.1-24B-Instruct-2503-quantized.w8a8": "Mistral-Small-24B",
    "google/gemma-3-27b-it": "Gemma-3-27B",
    "google/gemma-3-12b-it": "Gemma-3-12B",
    "google/gemma-3-4b-it": "Gemma-3-4B",
    "mistralai/Mixtral-8x7B-Instruct-v0.1": "Mixtral-8x7B",
    "meta-llama/Llama-4-Scout-17B-16E-Instruct": "Llama-4-Scout",
    "Qwen/Qwen3-235B-A22B-FP8": "Qwen3-235B-A22B",
}
H100_TOTAL_GIB = 79.19  # the llm-d v0.19 logs' total_memory (same H100-80GB for the v0.15-0.18 run JSONs)


def clipped(text: str, limit: int) -> str:
    """TEXT cut to at most LIMIT characters at a word boundary, with "…" when cut (labels of the methodology page's
    tables: "61+1 laye" read as a typo)."""
    if len(text) <= limit:
        return text
    cut = text[:limit - 1].rsplit(" ", 1)[0].rstrip(" ,;(")
    return cut + "…"


def _row(check: str, expected: float, predicted: float, note: str = "", *, scored: bool = True) -> dict:
    error = (predicted - expected) / expected if scored and expected else None
    return {"check": check, "expected": expected, "predicted": predicted, "error": error, "note": note}


def _summary(rows: list[dict]) -> dict:
    errors = [abs(r["error"]) for r in rows if r["error"] is not None]
    return {"rows": len(rows), "scored": len(errors),
            "median_abs_error": statistics.median(errors) if errors else None,
            "max_abs_error": max(errors) if errors else None}


# --- KV ---------------------------------------------------------------------------------------------------------

def kv_section() -> tuple[list[dict], dict]:
    rows = []
    llama_cpp = Scenario(engine="llama.cpp", kv_dtype="f16")
    for context, expected in ((8192, 2.875), (32768, 11.5)):
        kv = kv_cache(SPECS["GLM-4.5"], Scenario(context=context))
        rows.append(_row(f"seed GLM-4.5 KV GiB @ {context}", expected, kv.total_bytes / GIB, "seed-arithmetic.md"))
    for context, expected in ((8192, 0.686), (32768, 2.742)):
        kv = kv_cache(SPECS["GLM-5"], Scenario(context=context))
        rows.append(_row(f"seed GLM-5 MLA latent GiB @ {context}", expected, kv.term("mla").bytes / GIB,
                         f"+ DSA indexer {kv.term('dsa_indexer').bytes / GIB:.3f} GiB not in the seed"))
    rows.append(_row("Llama-3.1-8B B/token", 131072, kv_cache(SPECS["Llama-3.1-8B"], llama_cpp).bytes_per_token,
                     "kv_measured.csv (vllm#10517)"))
    qwen = kv_cache(SPECS["Qwen3-235B-A22B"], Scenario(engine="vllm", kv_dtype="bf16", gpus=4))
    rows.append(_row("Qwen3-235B-A22B TP4 B/token/GPU", 48128, qwen.bytes_per_token_per_rank, "vllm#21348"))
    rows += _real_vs_naive_rows()
    rows += _kv_measured_token_rows()
    rows += _deepseek_v4_rows()
    return rows, _summary(rows)


def _deepseek_v4_flash() -> ModelSpec:
    """DeepSeek-V4-Flash from the config.json the catalog keeps (catalog/seed/models.json, a copy of
    deepseek-ai/DeepSeek-V4-Flash): too many per-layer fields (compress_ratios) to retype here."""
    row = next(r for r in json.loads(SEED_MODELS.read_text()) if r["slug"] == "deepseek-v4-flash")
    return parse_config(row["config"], slug=row["slug"], name=row["name"])


def _deepseek_v4_rows() -> list[dict]:
    """llama.cpp's DeepSeek-V4 caches as its logs print them. ggml-org/llama.cpp#25468 (-lv 6 at load,
    --ctx-size 131072 --ubatch-size 512, f16): "SWA 32.25 MiB, CSA 672 MiB, HCA 20 MiB, lightning-indexer 168 MiB".
    ggml-org/llama.cpp#27680 (DeepSeek-V4-Flash-0731, one sequence): compressor states "csa … 8 x 1024 … 1.31 MiB",
    "hca … 128 x 512 … 10.00 MiB", "lid … 8 x 256 … 0.33 MiB" (rounded to 0.01 MiB in the log)."""
    spec = _deepseek_v4_flash()
    kv = kv_cache(spec, Scenario(context=131072, kv_dtype="f16", n_ubatch=512))
    rows = [_row(f"DeepSeek-V4-Flash llama.cpp {name} MiB @ 131072", expected, kv.term(kind).bytes / MIB,
                 "llama.cpp#25468")
            for name, kind, expected in (("SWA", "dsv4_window", 32.25), ("CSA", "csa", 672.0), ("HCA", "hca", 20.0),
                                         ("indexer", "csa_indexer", 168.0))]
    state = kv.term("dsv4_state")
    csa_layers, hca_layers = spec.layers.count(LayerSpec("csa", "moe")), spec.layers.count(LayerSpec("hca", "moe"))
    csa_state = 2 * 8 * 1024 * 4 * csa_layers  # the kv + score tensors of the CSA compressor
    rows.append(_row("DeepSeek-V4-Flash llama.cpp compressor states MiB", 1.31 + 10.00 + 0.33, state.bytes / MIB,
                     f"llama.cpp#27680 (CSA {csa_state / MIB:.2f}, HCA and indexer in the rest; "
                     f"{csa_layers} CSA, {hca_layers} HCA layers)"))
    return rows


def _real_vs_naive_rows() -> list[dict]:
    """Informational: the engines' real cache against the naive 2 × layers × kv_heads × head_dim × context."""
    cases = [("Gemma-3-27B", 131072), ("DeepSeek-V3", 32768), ("Qwen3-Next-80B-A3B", 32768),
             ("gpt-oss-120b", 131072)]
    rows = []
    for name, context in cases:
        spec = SPECS[name]
        real = kv_cache(spec, Scenario(context=context)).total_bytes / GIB
        if spec.mla is not None:
            naive_per_token = spec.num_layers * spec.mla.num_heads * (
                spec.mla.qk_nope_head_dim + spec.mla.qk_rope_head_dim + spec.mla.v_head_dim) * 2
        else:
            naive_per_token = 2 * spec.num_layers * spec.attention.num_kv_heads * spec.attention.head_dim * 2
        rows.append(_row(f"{name} llama.cpp f16 GiB @ {context} (real vs naive)", naive_per_token * context / GIB,
                         real, "informational: naive formula applied to every layer", scored=False))
    return rows


def _kv_measured_token_rows() -> list[dict]:
    """Tokens from a logged KV budget: tests the per-token page model alone."""
    spec = SPECS["Qwen3-235B-A22B"]
    kv = kv_cache(spec, Scenario(engine="vllm", kv_dtype="bf16", gpus=4))
    # Both logs predate v0.21 (2025-07 and 2025-10), whose token figure is num_blocks × block size for one group.
    capacity = vllm_kv_capacity(kv, 8.11 * GIB, max_model_len=40960, max_num_batched_tokens=8192,
                                vllm_version=(0, 10))
    rows = [_row("Qwen3-235B TP4 vLLM tokens from 8.11 GiB", 178880, capacity.kv_tokens, "vllm#21348")]
    qwen14 = kv_cache(SPECS["Qwen3-14B"], Scenario(engine="vllm", kv_dtype="bf16", context=32768))
    capacity = vllm_kv_capacity(qwen14, 6.51 * GIB, max_model_len=32768, max_num_batched_tokens=8192,
                                vllm_version=(0, 11))
    rows.append(_row("Qwen3-14B vLLM tokens from 6.51 GiB", 42656, capacity.kv_tokens, "vllm_memory.csv V1 (2025-10)"))
    # kv_measured.csv: "Qwen3.8-27B-FP8" (16 of 64 layers full attention, 4 KV heads × 256, fp8 KV) on 2 × RTX 3090,
    # TP2, 0.92, max_model_len 131,072, vLLM 0.27.1: 302,921 tokens, 2.31x, pool 4.99 GiB per GPU. Its config is not
    # published; Qwen3.5-27B (catalog) has that layout and stands in for its delta-net state. The v0.21 figure is
    # max_concurrency × max_model_len; the row's 90 blocks per request (302,921 = int(208 / 90 × 131,072)) are 3 more
    # than the 84 + 3 modelled: two pages per delta-net group, prefix caching's "align" mode (vllm#50991 made it the
    # default for hybrid models after v0.21), which is not modelled.
    hybrid = kv_cache(seed_catalog.model("qwen3-5-27b"), Scenario(engine="vllm", kv_dtype="fp8", gpus=2, context=131072,
                                                      quant="FP8"), max_num_batched_tokens=2048)
    capacity = vllm_kv_capacity(hybrid, 4.99 * GIB, max_model_len=131072, max_num_batched_tokens=2048)
    rows.append(_row("Qwen3.8-27B TP2 vLLM tokens from 4.99 GiB (Qwen3.5-27B shapes)", 302921, capacity.kv_tokens,
                     "kv_measured.csv (mitchross/talos-argocd-proxmox#1995, v0.27.1); prefix-caching align mode "
                     "not modelled"))
    sglang_k = 367404 * kv.bytes_per_token_per_rank / 2 / GIB
    rows.append(_row("Qwen3-235B TP4 SGLang K size GiB at 367,404 tokens", 8.23, sglang_k, "vllm#21348 (SGLang)"))
    return rows


# --- runtime ----------------------------------------------------------------------------------------------------

def runtime_section() -> tuple[list[dict], dict]:
    rows = _llama_cpp_rows() + _dsv4_compute_rows() + _vllm_rows()
    summary = _summary(rows)
    # Every row in exactly one group (tests/test_methodology.py checks that the groups add up to the table).
    vllm_tokens = [r for r in rows if r["check"].startswith("vLLM")]  # skipped rows too: they count as unscored
    dsv4 = [r for r in rows if r["check"].startswith("llama.cpp DeepSeek-V4")]
    buffers = [r for r in rows if r["check"].startswith("llama.cpp") and r not in dsv4]
    summary["vllm_kv_tokens"] = _summary(vllm_tokens)
    summary["llama_cpp_buffers"] = _summary(buffers)
    # DeepSeek-V4's buffer carries ggml-alloc's gaps, which move by hundreds of MiB between neighbouring contexts
    # (dsv4_compute_buffer.csv): a median and a worst row of their own.
    summary["llama_cpp_dsv4_compute"] = _summary(dsv4)
    # The published vLLM logs of quantized MoE models (gpt-oss-120b MXFP4, Qwen3-235B FP8): weights and the memory
    # left for the KV cache, in GiB, where the quantized-MoE gap the report notes shows.
    grouped = {id(r) for group in (vllm_tokens, dsv4, buffers) for r in group}
    summary["vllm_quantized_moe"] = _summary([r for r in rows if id(r) not in grouped])
    return rows, summary


def _read(name: str) -> list[dict]:
    with open(DATA / name, newline="") as handle:
        return list(csv.DictReader(handle))


def _llama_cpp_rows() -> list[dict]:
    rows = []
    for record in _read("llamacpp_runtime.csv"):
        if not record["model"].startswith("Pythia"):
            rows.append({"check": f"llama.cpp {clipped(record['model'], 40)}", "expected": None, "predicted": None,
                         "error": None, "note": "skipped: shapes not in the log excerpt (inferred or encoder)"})
            continue
        spec = SPECS["Pythia-2.8B"]
        scenario = Scenario(context=int(record["n_ctx"]), n_ubatch=int(record["n_ubatch"]),
                            flash_attention=record["flash_attn"] == "1", kv_dtype=record["type_k"])
        buffers = llama_cpp_buffers(spec, scenario)
        label = f"llama.cpp Pythia FA{'on' if scenario.flash_attention else 'off'} ({record['file_type'][:8]})"
        for column, key in (("compute_buffer_mib", "compute buffer"), ("host_compute_buffer_mib", "host compute buffer"),
                            ("output_buffer_mib", "output buffer")):
            rows.append(_row(f"{label} {key} MiB", float(record[column]), buffers[key][0] / MIB, clipped(record["source"], 40)))
        kv = kv_cache(spec, scenario)
        rows.append(_row(f"{label} KV MiB", float(record["kv_buffer_mib"]), kv.total_bytes / MIB))
    return rows


def _dsv4_compute_rows() -> list[dict]:
    """DeepSeek-V4-Flash's llama.cpp compute buffer (dsv4_compute_buffer.csv: #27680's CUDA log and the CPU-backend
    reproductions of bench/dsv4_compute_buffer)."""
    spec = _deepseek_v4_flash()
    rows = []
    for record in _read("dsv4_compute_buffer.csv"):
        scenario = Scenario(context=int(record["n_ctx"]), n_ubatch=int(record["n_ubatch"]), kv_dtype="f16",
                            flash_attention=record["flash_attn"] == "1")
        predicted = llama_cpp_buffers(spec, scenario)["compute buffer"][0] / MIB
        label = (f"llama.cpp DeepSeek-V4-Flash compute MiB @ {int(record['n_ctx']):,} ub {record['n_ubatch']} "
                 f"FA{'on' if scenario.flash_attention else 'off'} ({record['backend'].split(' ')[0]})")
        rows.append(_row(label, float(record["compute_buffer_mib"]), predicted, clipped(record["source"], 40)))
    return rows


def _vllm_rows() -> list[dict]:
    rows = []
    for record in _read("vllm_memory.csv"):
        name = VLLM_MODELS.get(record["model"])
        skip = _vllm_skip_reason(record, name)
        if skip:
            rows.append({"check": f"vLLM {clipped(record['model'], 44)}", "expected": None, "predicted": None,
                         "error": None, "note": f"skipped: {skip}"})
            continue
        rows.append(_vllm_row(record, SPECS[name]))
    rows += _vllm_kv_measured_rows()
    return rows


def _vllm_skip_reason(record: dict, name: str | None) -> str:
    if name is None:
        return "no hand-written spec from models.json"
    if record["non_torch_gib"] == "0.07":
        return "pipeline-parallel stage (not modelled)"
    if not record["kv_tokens"]:
        return "no KV token figure in the log"
    if not record["weights_gib"] or not record["gpu_memory_utilization"]:
        return "budget inputs missing; see the KV-only rows"
    return ""


def _vllm_row(record: dict, spec: ModelSpec) -> dict:
    tp = int(record["tp"] or 1)
    total = float(record["total_gpu_gib"] or H100_TOTAL_GIB) * GIB
    version = _version(record["vllm_version"])
    kv_dtype = "fp8" if record["kv_cache_dtype"] == "fp8" else "auto"
    # --dtype float32 / float16 rows: the served format sets vLLM's model dtype (kv_cache.vllm_model_dtype).
    quant = {"float32": "FP32", "float16": "FP16"}.get(record["dtype"], "BF16")
    scenario = Scenario(engine="vllm", kv_dtype=kv_dtype, gpus=tp, context=int(record["max_model_len"]), quant=quant,
                        gpu_memory_utilization=float(record["gpu_memory_utilization"]),
                        max_num_seqs=int(record["max_num_seqs"]) if record["max_num_seqs"] else None,
                        max_num_batched_tokens=int(record["max_num_batched_tokens"]) if record["max_num_batched_tokens"] else None)
    kv = kv_cache(spec, scenario, max_num_batched_tokens=scenario.max_num_batched_tokens)
    runtime = runtime_memory(spec, scenario, weights_bytes_per_gpu=float(record["weights_gib"]) * GIB, kv=kv,
                             hardware_memory_bytes=total, hardware_name=record["gpu"], vllm_version=version,
                             enforce_eager=record["enforce_eager"] == "True")
    activation = runtime.term("activation peak").bytes / GIB
    note = f"{record['vllm_version']} TP{tp}; act {activation:.2f} vs {record['activation_peak_gib'] or '?'} GiB"
    return _row(f"vLLM {clipped(record['model'], 44)} @{record['max_model_len']} tokens",
                float(record["kv_tokens"]), runtime.kv_capacity_tokens, note)


def _vllm_kv_measured_rows() -> list[dict]:
    """kv_measured.csv's V0 RTX 3090 rows (vllm#10517): V0 had no chunked prefill, so the profile run's
    max_num_batched_tokens = max_model_len and max_num_seqs defaulted to 256."""
    rows = []
    spec = SPECS["Llama-3.1-8B"]
    for max_len, tokens in ((20000, 31232), (29000, 23648)):
        scenario = Scenario(engine="vllm", kv_dtype="auto", context=max_len, gpu_memory_utilization=0.90,
                            max_num_seqs=256, max_num_batched_tokens=max_len)
        kv = kv_cache(spec, scenario)
        runtime = runtime_memory(spec, scenario, weights_bytes_per_gpu=14.9888 * GIB, kv=kv,
                                 hardware_memory_bytes=23.58 * GIB, hardware_name="RTX 3090", vllm_version=(0, 6))
        rows.append(_row(f"vLLM V0 Llama-3.1-8B RTX 3090 @{max_len} tokens", tokens, runtime.kv_capacity_tokens,
                         "kv_measured.csv; V0 scheduler settings"))
    # gpt-oss-120b on one H100 (Marlin MXFP4 weights 65.9651 GiB, vllm#23278), under the PyTorch-sort sampler of
    # v0.10/v0.11 (runtime.VLLM_SORT_SAMPLER_BYTES_PER_LOGIT): its 201,088-token vocabulary × 1,024 warm-up requests
    # is the profile run's peak. vllm#23278's GPU is an H100 PCIe whose total memory is not logged (the SXM's is
    # taken): informational.
    spec = SPECS["gpt-oss-120b"]
    for title, utilization, mnbt, version, available, note, scored in (
            ("gpt-oss-120b H100 available KV GiB", 0.95, 1024, (0, 11), 1.71,
             "vllm#27508 (v0.11.0 by its log's line numbers; H100 80GB HBM3)", True),
            ("gpt-oss-120b H100 PCIe available KV GiB (informational)", 0.90, 8192, (0, 10), -2.14,
             "vllm#23278 (v0.10.1; the H100 PCIe's total memory is not logged)", False)):
        scenario = Scenario(engine="vllm", kv_dtype="auto", context=131072, gpu_memory_utilization=utilization,
                            max_num_batched_tokens=mnbt)
        kv = kv_cache(spec, scenario)
        runtime = runtime_memory(spec, scenario, weights_bytes_per_gpu=65.9651 * GIB, kv=kv,
                                 hardware_memory_bytes=H100_TOTAL_GIB * GIB, hardware_name="H100",
                                 vllm_version=version)
        rows.append(_row(title, available, runtime.capacity.available_bytes / GIB, note, scored=scored))
    # Qwen3-235B-A22B-FP8 on 4 × H100, TP 4, the default 0.9 (vllm#21348, 2025-07-22: a v0.9/v0.10 build, PyTorch's
    # sort in the sampler warm-up, graphs outside the budget), "Available KV cache memory: 8.11 GiB". Its log shows
    # no weights, so the row takes this engine's FP8 weights (tensor_parallel_weights of the catalog's Qwen3-235B,
    # whose 2507 release has the same shapes) and tests weights and runtime together. The gap is the estimate's
    # vllm_quantized_moe_gap note (runtime.VLLM_QUANTIZED_MOE_*).
    from reports.sizing.parallelism import tensor_parallel_weights as _tp_weights
    from reports.sizing.weights import weight_bytes as _weight_bytes
    qwen = seed_catalog.model("qwen3-235b-a22b-instruct-2507")
    scenario = Scenario(engine="vllm", kv_dtype="auto", quant="FP8", gpus=4, context=40960,
                        gpu_memory_utilization=0.90)
    weights = _tp_weights(qwen, "FP8", 4, total_bytes=_weight_bytes(qwen, "FP8").total_bytes).per_rank_bytes
    runtime = runtime_memory(qwen, scenario, weights_bytes_per_gpu=weights, kv=kv_cache(qwen, scenario),
                             hardware_memory_bytes=H100_TOTAL_GIB * GIB, hardware_name="H100", vllm_version=(0, 10))
    rows.append(_row("Qwen3-235B-A22B-FP8 TP4 H100 available KV GiB (weights modelled)", 8.11,
                     runtime.capacity.available_bytes / GIB,
                     f"vllm#21348 (v0.9/v0.10; weights {weights / GIB:.2f} GiB per rank modelled): quantized MoE gap "
                     "not modelled"))
    # The weights themselves: the checkpoint's MXFP4 experts as vLLM's MoE kernel allocates them (parallelism.py):
    # Marlin's padding under v0.10.1, Triton's Hopper layout under v0.14.1 (its log: "Using Triton backend").
    from bench.model_specs import GPT_OSS_120B
    from reports.sizing.parallelism import tensor_parallel_weights, vllm_mxfp4_expert_padding
    from reports.sizing.weights import weight_bytes
    checkpoint = weight_bytes(GPT_OSS_120B, "MXFP4").total_bytes
    for kernel, version, logged, source in (
            ("Marlin", (0, 10), 65.9651, "kv_measured.csv, vllm#23278 \"Model loading took\" (v0.10.1)"),
            ("Triton", (0, 14), 64.38, "kv_measured.csv, vllm#33155 \"Model loading took\" (v0.14.1)")):
        padding = vllm_mxfp4_expert_padding("cuda", "hopper", version)
        assert padding is not None and padding.kernel == kernel
        loaded = tensor_parallel_weights(GPT_OSS_120B, "MXFP4", 1, total_bytes=checkpoint, mxfp4_padding=padding)
        rows.append(_row(f"gpt-oss-120b H100 vLLM weights GiB ({kernel})", logged, loaded.per_rank_bytes / GIB,
                         source))
    return rows


def _version(text: str) -> tuple[int, int]:
    digits = text.lstrip("v").split(".")
    try:
        return int(digits[0]), int(digits[1])
    except (ValueError, IndexError):
        return (0, 19)


def format_rows(title: str, rows: list[dict], summary: dict) -> str:
    lines = [title, f"{'check':<66} {'expected':>12} {'predicted':>12} {'error':>8}  note"]
    for row in rows:
        expected = "" if row["expected"] is None else f"{row['expected']:,.4g}"
        predicted = "" if row["predicted"] is None else f"{row['predicted']:,.4g}"
        error = "" if row["error"] is None else f"{row['error']:+.2%}"
        lines.append(f"{row['check'][:66]:<66} {expected:>12} {predicted:>12} {error:>8}  {row['note']}")
    lines.append(f"summary: {summary}")
    return "\n".join(lines)


def main() -> None:
    try:
        kv_rows, kv_summary = kv_section()
        rt_rows, rt_summary = runtime_section()
    except SizingError as error:
        raise SystemExit(f"error: {error}")
    print(format_rows("== KV cache ==", kv_rows, kv_summary))
    print()
    print(format_rows("== Runtime memory ==", rt_rows, rt_summary))


if __name__ == "__main__":
    main()
