"""Smaller input and method checks a review found: methods, byte-order marks, offer dates, launch years."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from catalog.models import CloudOffer, SubmittedConfig
from tests.admin_forms import change_form_data
from tests.factories import LLAMA_3_1_8B_CONFIG, make_accelerator, make_offer

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("method", ["post", "options", "trace"])
@pytest.mark.parametrize("url", ["/sitemap.xml", "/sitemap-models.xml"])
def test_the_sitemap_answers_get_and_head_only(client, method, url):
    assert getattr(client, method)(url).status_code == 405
    assert client.head(url).status_code == 200


def test_a_refused_api_method_is_told_in_json(client):
    response = client.post("/api/v1/estimate?model=qwen3-14b&gpu=rtx-4090")
    assert response.status_code == 405
    assert response["Content-Type"] == "application/json"
    assert response["Allow"] == "GET, HEAD"
    assert json.loads(response.content)["error"] == "method POST is not allowed here; use GET"


def test_a_config_with_a_byte_order_mark_is_accepted_on_the_public_page(client):
    upload = SimpleUploadedFile("config.json", "\ufeff".encode() + json.dumps(LLAMA_3_1_8B_CONFIG).encode(),
                                "application/json")
    response = client.post("/en/config/", {"config_file": upload})
    assert response.status_code == 302
    assert SubmittedConfig.objects.get().config == LLAMA_3_1_8B_CONFIG


@pytest.mark.usefixtures("empty_catalog")
@pytest.mark.parametrize("changes, message", [
    ({"verified_precision": "month", "verified": "2026-03-17"}, "entered as the 1st of the month (2026-03-01)"),
    ({"verified": "9999-12-31"}, "This date lies in the future."),
])
def test_offer_dates_a_source_cannot_give_are_refused(admin_client, changes, message):
    offer = make_offer(make_accelerator())
    url = f"/admin/catalog/cloudoffer/{offer.pk}/change/"
    response = admin_client.post(url, change_form_data(admin_client, url, **changes))
    assert response.status_code == 200
    assert message in response.content.decode()
    assert CloudOffer.objects.get().verified == offer.verified


def test_a_body_over_the_upload_limit_is_told_why(admin_client, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 2_621_440  # Django's default, 2.5 MB
    response = admin_client.post("/admin/catalog/llmmodel/add/", {"config": "x" * 5_000_000, "name": "big"})
    assert response.status_code == 400
    assert "The form sent more than 2.5 MB, so nothing was saved. A config.json may have at most 256 KB" in (
        response.content.decode())
