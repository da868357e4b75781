import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from catalog.models import CloudOffer, LLMModel, PriceRecord
from tests.factories import LLAMA_3_1_8B_CONFIG, make_accelerator, make_model, make_offer, make_price

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("empty_catalog")]


@pytest.mark.parametrize("url", [
    "/admin/", "/admin/catalog/llmmodel/", "/admin/catalog/accelerator/", "/admin/catalog/hardwareprice/",
    "/admin/catalog/cloudoffer/", "/admin/catalog/pricerecord/", "/admin/catalog/quantformat/",
    "/admin/catalog/publishedfilesize/", "/admin/catalog/llmmodel/import-config/",
    "/admin/catalog/llmmodel/?q=llama", "/admin/catalog/accelerator/?kind__exact=discrete",
])
def test_admin_pages_render_for_a_superuser(admin_client, url):
    make_model()
    make_offer(make_accelerator())
    assert admin_client.get(url).status_code == 200


def test_admin_requires_login(client):
    response = client.get("/admin/catalog/llmmodel/")
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]


def test_change_pages_render(admin_client):
    model, accelerator = make_model(), make_accelerator()
    assert admin_client.get(f"/admin/catalog/llmmodel/{model.pk}/change/").status_code == 200
    assert admin_client.get(f"/admin/catalog/accelerator/{accelerator.pk}/change/").status_code == 200


def test_hourly_rates_are_editable_in_the_list_and_recorded(admin_client):
    offer = make_offer(make_accelerator())
    data = {
        "form-TOTAL_FORMS": "1", "form-INITIAL_FORMS": "1", "form-MIN_NUM_FORMS": "0", "form-MAX_NUM_FORMS": "1000",
        "form-0-id": str(offer.pk), "form-0-hourly_usd": "0.590", "form-0-verified": "2026-11-20",
        "form-0-is_active": "on", "_save": "Save",
    }
    response = admin_client.post("/admin/catalog/cloudoffer/", data)
    assert response.status_code == 302
    offer.refresh_from_db()
    assert str(offer.hourly_usd) == "0.590"
    assert list(PriceRecord.objects.filter(cloud_offer=offer).order_by("id").values_list("usd", flat=True)) == [
        offer.hourly_usd.__class__("0.690"), offer.hourly_usd]


def test_price_history_view_lists_every_record(admin_client):
    accelerator = make_accelerator()
    price = make_price(accelerator)
    price.usd = 1499
    price.save()
    make_offer(accelerator)
    response = admin_client.get(f"/admin/catalog/accelerator/{accelerator.pk}/price-history/")
    assert response.status_code == 200
    body = response.content.decode()
    assert "1599" in body and "1499" in body and "TestCloud" in body


def import_post(admin_client, **fields):
    data = {"name": "Imported Llama", "slug": "", "hf_repo": "meta-llama/Llama-3.1-8B", "source": "pasted in a test",
            "confidence": "config.json", "config_text": json.dumps(LLAMA_3_1_8B_CONFIG)} | fields
    return admin_client.post("/admin/catalog/llmmodel/import-config/", data)


def test_config_import_previews_then_saves(admin_client):
    preview = import_post(admin_client, preview="Preview")
    assert preview.status_code == 200
    assert b'id="config-preview"' in preview.content
    assert LLMModel.objects.count() == 0
    saved = import_post(admin_client, save="Save model")
    assert saved.status_code == 302
    model = LLMModel.objects.get(slug="imported-llama")
    assert (model.num_layers, model.num_kv_heads, model.hidden_size) == (32, 8, 4096)


def test_config_import_accepts_an_uploaded_file(admin_client):
    upload = SimpleUploadedFile("config.json", json.dumps(LLAMA_3_1_8B_CONFIG).encode(), "application/json")
    response = admin_client.post("/admin/catalog/llmmodel/import-config/", {
        "name": "Uploaded", "source": "upload", "confidence": "config.json", "config_file": upload, "save": "1"})
    assert response.status_code == 302
    assert LLMModel.objects.filter(slug="uploaded").exists()


@pytest.mark.parametrize("config_text, message", [
    ("{not json", "not valid JSON"),
    ("[1, 2, 3]", "JSON object"),
    (json.dumps({"model_type": "llama", "hidden_size": 4096}), "cannot be sized"),
    ("", "Paste a config.json"),
])
def test_config_import_rejects_bad_input_and_saves_nothing(admin_client, config_text, message):
    response = import_post(admin_client, config_text=config_text, save="Save model")
    assert response.status_code == 200
    assert message in response.content.decode()
    assert LLMModel.objects.count() == 0


def test_config_import_refuses_a_duplicate_slug(admin_client):
    make_model(slug="imported-llama")
    response = import_post(admin_client, save="Save model")
    assert response.status_code == 200
    assert "exists already" in response.content.decode()
    assert LLMModel.objects.count() == 1


def test_cloud_offer_unique_constraint_is_reported_in_the_admin(admin_client):
    accelerator = make_accelerator()
    make_offer(accelerator)
    response = admin_client.post("/admin/catalog/cloudoffer/add/", {
        "provider": "TestCloud", "instance": "1x Test GPU", "accelerator": accelerator.pk, "gpu_count": 1,
        "hourly_usd": "0.5", "verified": "2026-11-04", "source": "x", "billing": "", "url": "",
        "is_active": "on"})
    assert response.status_code == 200
    assert CloudOffer.objects.count() == 1
