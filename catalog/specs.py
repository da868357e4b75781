"""Turn catalog rows into the sizing engine's specs. The engine never sees the ORM.

Specs are cached per row and `updated_at`, so a page that sizes one model on fifty accelerators parses the
model's config.json once.
"""

from __future__ import annotations

import dataclasses
import json
import math
from functools import lru_cache

from catalog.models import Accelerator, CloudOffer, LLMModel, known_gguf_quants
from reports.sizing.config_parser import parse_config
from reports.sizing.parameters import count_parameters
from reports.sizing.specs import CloudOfferSpec, HardwareSpec, ModelSpec


@lru_cache(maxsize=512)
def _parsed(config_json: str, slug: str, name: str) -> ModelSpec:
    return parse_config(json.loads(config_json), slug=slug, name=name)


def _published_sizes(row: LLMModel) -> tuple[tuple[str, int], ...]:
    # Uses the prefetch cache when the caller prefetched `published_sizes`.
    return tuple(sorted((size.quant, size.size_bytes) for size in row.published_sizes.all()))


def model_spec(row: LLMModel, *, kv_proxy: LLMModel | None = None) -> ModelSpec:
    """The engine's view of a catalog model. Models without a config.json carry only their stated parameters
    and, when given, the nearest sourced family member as KV-cache proxy."""
    common = {
        "stated_params_total": row.stated_params_total,
        "stated_params_active": row.stated_params_active or row.stated_params_total,
        "confidence": row.confidence,
        "hf_repo": row.hf_repo,
        "gguf_repo": row.gguf_repo,
        # Known formats only: an unknown tag saved before the field was validated would make every page that
        # picks a model's default format fail.
        "gguf_repo_quants": known_gguf_quants(row.gguf_repo_quants),
        "published_sizes": _published_sizes(row),
    }
    if row.config is not None:
        spec = _parsed(json.dumps(row.config, sort_keys=True), row.slug, row.name)
        return dataclasses.replace(spec, **common)
    proxy = model_spec(kv_proxy) if kv_proxy is not None and kv_proxy.config is not None else None
    if row.stated_params_active is None and proxy is not None and proxy.moe is not None and row.stated_params_total:
        # No active count published, but the family member it is sized from is MoE (GLM-5.3 753B from GLM-5,
        # 744B-A40B): take that member's active share rather than reading every weight per token as if dense
        # (0.2 tok/s on an H100 instead of ~5). Estimated like everything else resting on the proxy.
        proxy_params = count_parameters(proxy)
        common["stated_params_active"] = row.stated_params_total * proxy_params.active / proxy_params.total
    return ModelSpec(
        slug=row.slug, name=row.name, architecture="", hidden_size=proxy.hidden_size if proxy else 0,
        vocab_size=proxy.vocab_size if proxy else 0, layers=(), attention=None, kv_proxy=proxy, **common,
    )


def kv_proxy_for(row: LLMModel, candidates: list[LLMModel]) -> LLMModel | None:
    """The sourced model of the same family closest in stated size (log ratio), for a model without config."""
    if row.config is not None or not row.family or not row.stated_params_total:
        return None
    family = [c for c in candidates if c.config is not None and c.family == row.family and c.stated_params_total]
    if not family:
        return None
    return min(family, key=lambda c: abs(math.log(c.stated_params_total / row.stated_params_total)))


def hardware_spec(row: Accelerator, *, price_usd: float | None = None) -> HardwareSpec:
    return HardwareSpec(
        slug=row.slug, name=row.name, vendor=row.vendor, memory_gb=row.memory_gb, bandwidth_gbs=row.bandwidth_gbs,
        kind=row.kind, backend=row.backend, fp16_tflops=row.fp16_tflops, fp16_acc_tflops=row.fp16_acc_tflops,
        fp8_tflops=row.fp8_tflops, tdp_w=row.tdp_w, architecture=row.architecture,
        usable_memory_factor=row.effective_usable_factor, interconnect=row.interconnect,
        interconnect_gbs=row.interconnect_gbs, interconnect_mesh_peers=row.interconnect_mesh_peers, price_usd=price_usd,
    )


def offer_spec(row: CloudOffer) -> CloudOfferSpec:
    return CloudOfferSpec(
        provider=row.provider, instance=row.instance, accelerator_slug=row.accelerator.slug,
        gpu_count=row.gpu_count, hourly_usd=float(row.hourly_usd), billing=row.billing,
        verified=row.verified.isoformat(), verified_month_only=row.verified_month_only, url=row.url,
        price_doubt=row.price_doubt,
    )
