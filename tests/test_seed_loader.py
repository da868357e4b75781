import json
from decimal import Decimal

import pytest

from catalog.models import Accelerator, CloudOffer, HardwarePrice, LLMModel, PublishedFileSize, QuantFormat
from catalog.seed_loader import load_catalog
from tests.factories import LLAMA_3_1_8B_CONFIG

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("empty_catalog")]


def write_seed(directory, *, bandwidth=1008, hourly=0.69, model_name="Tiny Llama", model_extra=None):
    files = {
        "quant_formats.json": [{"name": "Q4_K_M", "family": "gguf", "quality_note_en": "recommended",
                                "quality_note_de": "empfohlen", "sort_order": 10, "source": "llama.cpp"}],
        "accelerators.json": [{
            "slug": "rtx-4090", "vendor": "NVIDIA", "name": "RTX 4090", "memory_gb": 24, "memory_type": "GDDR6X",
            "bandwidth_gbs": bandwidth, "fp16_tflops": 165.2, "fp8_tflops": None, "tdp_w": 450, "kind": "discrete",
            "usable_memory_factor": None, "backend": "cuda", "interconnect": "PCIe 4.0 x16",
            "interconnect_gbs": None, "launch_year": 2022, "spec_sources": "whitepaper", "notes": "",
            "prices": [{"condition": "new", "usd": 1599, "as_of": "2022-10-12", "source": "launch MSRP"}]}],
        "models.json": [{
            "slug": "tiny-llama", "name": model_name, "family": "Llama", "vendor": "Meta",
            "hf_repo": "meta-llama/Llama-3.1-8B", "gguf_repo": "", "license": "llama3.1", "release_date": None,
            "stated_params_total": 8.03e9, "stated_params_active": 8.03e9, "confidence": "config.json",
            "source": "config.json copy", "notes": "", "config": LLAMA_3_1_8B_CONFIG,
            "published_sizes": [{"quant": "Q4_K_M", "bytes": 4920000000, "source": "HF listing"}],
            **(model_extra or {})}],
        "cloud_offers.json": [{"provider": "RunPod", "instance": "1x RTX 4090", "accelerator_slug": "rtx-4090",
                               "gpu_count": 1, "hourly_usd": hourly, "billing": "per second",
                               "verified": "2026-11-04", "url": "https://www.runpod.io/pricing",
                               "source": "seed page"}],
    }
    for name, rows in files.items():
        (directory / name).write_text(json.dumps(rows), encoding="utf-8")
    return directory


def table_counts():
    return [m.objects.count() for m in (QuantFormat, Accelerator, HardwarePrice, LLMModel, PublishedFileSize,
                                        CloudOffer)]


def test_load_is_idempotent(tmp_path):
    seed = write_seed(tmp_path)
    first = load_catalog(seed)
    assert table_counts() == [1, 1, 1, 1, 1, 1]
    assert sum(first.created.values()) == 6
    second = load_catalog(seed)
    assert table_counts() == [1, 1, 1, 1, 1, 1]
    assert second.created == {} and second.updated == {}


def test_new_seed_values_update_untouched_fields(tmp_path):
    load_catalog(write_seed(tmp_path))
    load_catalog(write_seed(tmp_path, bandwidth=1010, hourly=0.59))
    assert Accelerator.objects.get().bandwidth_gbs == 1010
    assert CloudOffer.objects.get().hourly_usd == Decimal("0.59")


def test_admin_edits_survive_a_reload_even_when_the_seed_changes(tmp_path):
    load_catalog(write_seed(tmp_path))
    accelerator = Accelerator.objects.get()
    accelerator.bandwidth_gbs = 1000  # an admin corrects the figure
    accelerator.save()
    model = LLMModel.objects.get()
    model.name = "Llama 3.1 8B (renamed by admin)"
    model.save()
    report = load_catalog(write_seed(tmp_path, bandwidth=1012, model_name="Tiny Llama v2"))
    assert Accelerator.objects.get().bandwidth_gbs == 1000
    assert LLMModel.objects.get().name == "Llama 3.1 8B (renamed by admin)"
    assert len(report.kept_admin_edits) == 2


def test_a_reload_gives_seeded_models_their_newly_sourced_gguf_repo_and_license(tmp_path):
    """Databases seeded before GGUF repos and licenses were sourced (gguf_repo "", no gguf_repo_quants key, license "")
    take them on the next load_catalog; a license an admin wrote in the meantime stays."""
    load_catalog(write_seed(tmp_path, model_extra={"license": ""}))
    sourced = {"gguf_repo": "ggml-org/tiny-llama-GGUF", "gguf_repo_quants": "Q4_K_M, Q8_0, F16", "license": "llama3.1"}
    report = load_catalog(write_seed(tmp_path, model_extra=sourced))
    model = LLMModel.objects.get()
    assert (model.gguf_repo, model.gguf_repo_quants, model.license) == (
        "ggml-org/tiny-llama-GGUF", "Q4_K_M, Q8_0, F16", "llama3.1")
    assert report.updated and not report.kept_admin_edits
    model.license = "Llama 3.1 Community License (admin)"
    model.save()
    load_catalog(write_seed(tmp_path, model_extra={**sourced, "license": "Llama 3.1 Community License"}))
    assert LLMModel.objects.get().license == "Llama 3.1 Community License (admin)"


def test_rows_created_in_the_admin_are_left_alone(tmp_path):
    Accelerator.objects.create(slug="rtx-4090", vendor="NVIDIA", name="My 4090", memory_gb=24, bandwidth_gbs=999,
                               kind="discrete", backend="cuda", spec_sources="admin")
    load_catalog(write_seed(tmp_path))
    assert Accelerator.objects.get().name == "My 4090"


def test_the_shipped_seed_catalog_loads_and_holds_the_promised_rows():
    load_catalog()
    assert Accelerator.objects.count() >= 49
    assert LLMModel.objects.count() >= 60
    assert CloudOffer.objects.count() >= 10
    assert not Accelerator.objects.filter(name__icontains="M4 Ultra").exists()
    assert Accelerator.objects.filter(name__icontains="M3 Ultra 256").exists()
    for slug in ("glm-4-5", "glm-5"):
        model = LLMModel.objects.get(slug=slug)
        assert model.config and model.num_layers and model.hidden_size, slug
    assert not Accelerator.objects.filter(spec_sources="").exists()
    assert not LLMModel.objects.filter(source="").exists()
    assert not CloudOffer.objects.filter(source="").exists()
    assert load_catalog().created == {}
