"""The OpenAPI 3.1 description of /api/v1 (its schemas are JSON Schema 2020-12, which the tests validate against)."""

from __future__ import annotations

from reports.sizing.specs import Scenario

_DEFAULTS = Scenario()

NUMBER_OR_NULL = {"type": ["number", "null"]}
MEMORY_FIELDS = ("weights", "kv_cache", "runtime", "offloaded", "required", "per_gpu")

ESTIMATE_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["model", "hardware", "scenario", "memory_gib", "headroom_gib", "utilization_pct", "verdict",
                 "decode_tok_s", "aggregate_decode_tok_s", "prefill_tok_s", "ttft_ms", "cost_per_mtok_usd",
                 "kv_tokens_capacity", "finetune_gib", "warnings"],
    "properties": {
        "model": {"type": "object", "additionalProperties": False,
                  "required": ["slug", "name", "params_total", "params_active", "attention"],
                  "properties": {"slug": {"type": "string"}, "name": {"type": "string"},
                                 "params_total": {"type": "number", "minimum": 0},
                                 "params_active": {"type": "number", "minimum": 0},
                                 "attention": {"type": "string"}}},
        "hardware": {"type": "object", "additionalProperties": False,
                     "required": ["slug", "name", "count", "memory_gb", "usable_gib", "bandwidth_gbs"],
                     "properties": {"slug": {"type": "string"}, "name": {"type": "string"},
                                    "count": {"type": "integer", "minimum": 1},
                                    "memory_gb": {"type": "number", "exclusiveMinimum": 0},
                                    "usable_gib": {"type": "number", "exclusiveMinimum": 0},
                                    "bandwidth_gbs": {"type": "number", "exclusiveMinimum": 0}}},
        "scenario": {"type": "object", "additionalProperties": False,
                     "required": ["quant", "context", "batch", "kv_dtype", "engine", "offload_pct", "depth", "prompt"],
                     "properties": {"quant": {"type": "string"}, "context": {"type": "integer", "minimum": 1},
                                    "batch": {"type": "integer", "minimum": 1}, "kv_dtype": {"type": "string"},
                                    "engine": {"enum": ["llama.cpp", "vllm"]},
                                    "offload_pct": {"type": "number", "minimum": 0, "maximum": 100},
                                    "depth": {"type": "integer", "minimum": 0},
                                    "prompt": {"type": "integer", "minimum": 1}}},
        "memory_gib": {"type": "object", "additionalProperties": False, "required": list(MEMORY_FIELDS),
                       "properties": {name: {"type": ["number", "null"], "minimum": 0} for name in MEMORY_FIELDS}},
        "headroom_gib": {"type": "number"},
        "utilization_pct": {"type": "number", "minimum": 0},
        "verdict": {"enum": ["fits", "tight", "unified", "exceeds"]},
        "decode_tok_s": {"type": "number", "minimum": 0},
        "aggregate_decode_tok_s": {"type": "number", "minimum": 0},
        "prefill_tok_s": NUMBER_OR_NULL,
        "ttft_ms": NUMBER_OR_NULL,
        "cost_per_mtok_usd": NUMBER_OR_NULL,
        "kv_tokens_capacity": {"type": ["integer", "null"], "minimum": 0},
        "finetune_gib": {"type": "object", "additionalProperties": False, "required": ["qlora", "lora", "full"],
                         "properties": {m: NUMBER_OR_NULL for m in ("qlora", "lora", "full")}},
        "warnings": {"type": "array", "items": {"type": "string"}},
    },
}

ERROR_SCHEMA = {"type": "object", "additionalProperties": False, "required": ["error", "option"],
                "properties": {"error": {"type": "string"}, "option": {"type": ["string", "null"]}}}

LISTING_SCHEMAS = {
    "models": {"type": "object", "required": ["models"], "properties": {"models": {"type": "array", "items": {
        "type": "object", "required": ["slug", "name", "hf_repo"],
        "properties": {"slug": {"type": "string"}, "name": {"type": "string"}, "hf_repo": {"type": "string"}}}}}},
    "hardware": {"type": "object", "required": ["hardware"], "properties": {"hardware": {"type": "array", "items": {
        "type": "object", "required": ["slug", "name", "vendor", "memory_gb"],
        "properties": {"slug": {"type": "string"}, "name": {"type": "string"}, "vendor": {"type": "string"},
                       "memory_gb": {"type": "number"}}}}}},
}


def _param(name: str, description: str, schema: dict) -> dict:
    return {"name": name, "in": "query", "required": False, "description": description, "schema": schema}


ESTIMATE_PARAMETERS = [
    _param("model", "catalog model slug (GET /api/v1/models); or give `config`", {"type": "string"}),
    _param("config", "hash of a submitted config.json (the /config/ page's URL); or give `model`", {"type": "string"}),
    _param("gpu", "catalog accelerator slug (GET /api/v1/hardware); or describe one with memory_gb, bandwidth_gbs, …",
           {"type": "string"}),
    _param("memory_gb", "your accelerator: memory in GB", {"type": "number"}),
    _param("bandwidth_gbs", "your accelerator: memory bandwidth in GB/s", {"type": "number"}),
    _param("fp16_tflops", "your accelerator: dense FP16/BF16 TFLOPS (FP32 accumulate)", {"type": "number"}),
    _param("tdp_w", "your accelerator: power in W", {"type": "number"}),
    _param("fp8_tflops", "your accelerator: dense FP8 TFLOPS", {"type": "number"}),
    _param("usable_memory_factor", "your accelerator: share of the memory a model may use (default 0.95; 0.78 "
           "unified)", {"type": "number", "exclusiveMinimum": 0, "maximum": 1}),
    _param("price_usd", "your accelerator: purchase price in USD (rent vs. buy)", {"type": "number"}),
    _param("kind", "your accelerator: discrete | accelerator | unified", {"enum": ["discrete", "accelerator", "unified"]}),
    _param("backend", "your accelerator: cuda | rocm | metal | vulkan | sycl | cann | other",
           {"enum": ["cuda", "rocm", "metal", "vulkan", "sycl", "cann", "other"]}),
    _param("name", "your accelerator: a name", {"type": "string"}),
    _param("vendor", "your accelerator: its vendor (decides which engines run on backend `other`)", {"type": "string"}),
    _param("architecture", "your accelerator: architecture family, e.g. hopper, cdna3, gaudi3", {"type": "string"}),
    _param("fp16_acc_tflops", "your accelerator: dense FP16 TFLOPS with FP16 accumulate (GeForce)", {"type": "number"}),
    _param("interconnect", "your accelerator: its links as text; a PCIe generation in it sets the host link",
           {"type": "string"}),
    _param("interconnect_gbs", "your accelerator: GPU-to-GPU bandwidth, GB/s both directions", {"type": "number"}),
    _param("interconnect_mesh_peers", "your accelerator: peers of a full mesh sharing interconnect_gbs",
           {"type": "integer", "minimum": 1, "maximum": 63}),
    _param("gpus", "GPU count (tensor parallel for vLLM)", {"type": "integer", "default": _DEFAULTS.gpus}),
    _param("quant", "weight format, e.g. Q4_K_M, BF16, FP8, AWQ", {"type": "string", "default": _DEFAULTS.quant}),
    _param("context", "context tokens the KV cache holds", {"type": "integer", "default": _DEFAULTS.context}),
    _param("batch", "parallel sequences", {"type": "integer", "default": _DEFAULTS.batch}),
    _param("kv-dtype", "f16 | bf16 | fp8 | q8_0 | q4_0", {"type": "string", "default": _DEFAULTS.kv_dtype}),
    _param("engine", "llama.cpp | vllm", {"enum": ["llama.cpp", "vllm"], "default": _DEFAULTS.engine}),
    _param("offload-pct", "share of weights in system RAM (0–100), or auto", {"type": "string", "default": "auto"}),
    _param("depth", "tokens cached when decode is measured", {"type": "integer", "default": _DEFAULTS.depth}),
    _param("prompt", "prompt tokens for prefill and TTFT", {"type": "integer", "default": _DEFAULTS.prompt}),
    _param("gpu-memory-utilization", "vLLM: share of each GPU's memory vLLM takes (at most what leaves room for "
           "the device context; capped on unified memory)",
           {"type": "number", "default": _DEFAULTS.gpu_memory_utilization}),
    _param("max-num-seqs", "vLLM max_num_seqs (default: vLLM's)", {"type": "integer"}),
    _param("max-num-batched-tokens", "vLLM max_num_batched_tokens (default: vLLM's)", {"type": "integer"}),
]


def _json(schema_ref: str) -> dict:
    return {"application/json": {"schema": {"$ref": f"#/components/schemas/{schema_ref}"}}}


def openapi_document() -> dict:
    return {
        "openapi": "3.1.0",
        "info": {"title": "LLM Sizer API", "version": "1",
                 "description": "Memory, fit, speed, cost and fine-tuning estimates: the same JSON as "
                                "`manage.py estimate --format json` (docs/estimate-contract.md)."},
        "servers": [{"url": "/api/v1"}],
        "paths": {
            "/estimate": {"get": {
                "operationId": "estimate", "summary": "Estimate a model on an accelerator",
                "parameters": ESTIMATE_PARAMETERS,
                "responses": {"200": {"description": "the estimate", "content": _json("Estimate")},
                              "400": {"description": "a bad parameter (named in `option`)", "content": _json("Error")},
                              "404": {"description": "unknown model, accelerator or config", "content": _json("Error")}},
            }},
            "/models": {"get": {"operationId": "models", "summary": "Catalog models",
                                "responses": {"200": {"description": "models", "content": _json("Models")}}}},
            "/hardware": {"get": {"operationId": "hardware", "summary": "Catalog accelerators",
                                  "responses": {"200": {"description": "accelerators", "content": _json("Hardware")}}}},
        },
        "components": {"schemas": {"Estimate": ESTIMATE_SCHEMA, "Error": ERROR_SCHEMA,
                                   "Models": LISTING_SCHEMAS["models"], "Hardware": LISTING_SCHEMAS["hardware"]}},
    }
