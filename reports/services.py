"""Services behind the views: read the catalog, call the sizing engine, return plain data for templates."""

from __future__ import annotations

from catalog.models import Accelerator, LLMModel


def home_page() -> dict:
    """The catalog at a glance: every model and accelerator with its key facts."""
    models = LLMModel.objects.only(
        "name", "slug", "vendor", "stated_params_total", "stated_params_active", "attention_kind", "max_context",
        "confidence", "architecture", "native_dtype",
    )
    accelerators = Accelerator.objects.only(
        "name", "slug", "vendor", "memory_gb", "memory_type", "bandwidth_gbs", "fp16_tflops", "tdp_w", "kind",
        "usable_memory_factor",
    )
    return {"models": list(models), "accelerators": list(accelerators)}
