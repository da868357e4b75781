"""Plain factory functions (djangoproject.com's `make_*` style): small valid catalog rows for view and admin tests."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from catalog.models import Accelerator, CloudOffer, HardwarePrice, LLMModel

# Llama-3.1-8B's config.json (meta-llama/Llama-3.1-8B; the architecture keys only).
LLAMA_3_1_8B_CONFIG = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_hidden_layers": 32, "hidden_size": 4096,
    "intermediate_size": 14336, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
    "vocab_size": 128256, "tie_word_embeddings": False, "max_position_embeddings": 131072,
    "torch_dtype": "bfloat16", "rms_norm_eps": 1e-05, "rope_theta": 500000.0,
}


def make_model(**overrides) -> LLMModel:
    values = {
        "name": "Test Llama 8B", "slug": "test-llama-8b", "source": "tests", "confidence": "config.json",
        "config": dict(LLAMA_3_1_8B_CONFIG), "stated_params_total": 8.03e9, "stated_params_active": 8.03e9,
    } | overrides
    model = LLMModel(**values)
    model.full_clean()
    model.save()
    return model


def make_accelerator(**overrides) -> Accelerator:
    values = {
        "vendor": "NVIDIA", "name": "Test GPU 24GB", "slug": "test-gpu-24gb", "memory_gb": 24, "bandwidth_gbs": 1008,
        "fp16_tflops": 165.2, "tdp_w": 450, "kind": "discrete", "backend": "cuda", "spec_sources": "tests",
    } | overrides
    accelerator = Accelerator(**values)
    accelerator.full_clean()
    accelerator.save()
    return accelerator


def make_price(accelerator: Accelerator, **overrides) -> HardwarePrice:
    values = {"accelerator": accelerator, "condition": "new", "usd": Decimal("1599.00"),
              "as_of": dt.date(2026, 1, 1), "source": "tests"} | overrides
    return HardwarePrice.objects.create(**values)


def make_offer(accelerator: Accelerator, **overrides) -> CloudOffer:
    values = {"provider": "TestCloud", "instance": "1x Test GPU", "accelerator": accelerator, "gpu_count": 1,
              "hourly_usd": Decimal("0.690"), "verified": dt.date(2026, 11, 4), "source": "tests"} | overrides
    return CloudOffer.objects.create(**values)
