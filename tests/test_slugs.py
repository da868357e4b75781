"""Slugs are URLs: a changed slug keeps its old URLs (301), and slugs the site could never serve are refused."""

import pytest

from catalog.models import Accelerator, LLMModel
from tests.admin_forms import change_form_data
from tests.factories import make_accelerator, make_model

pytestmark = pytest.mark.django_db


def test_old_urls_of_a_renamed_model_and_accelerator_redirect_permanently(client):
    model, accelerator = LLMModel.objects.get(slug="qwen3-14b"), Accelerator.objects.get(slug="rtx-4090")
    model.slug = "qwen3-14b-instruct"
    model.save()
    accelerator.slug = "geforce-rtx-4090"
    accelerator.save()
    cases = {
        "/en/model/qwen3-14b/": "/en/model/qwen3-14b-instruct/",
        "/de/hardware/rtx-4090/": "/de/hardware/geforce-rtx-4090/",
        "/en/report/qwen3-14b/rtx-4090/?context=4096": "/en/report/qwen3-14b-instruct/geforce-rtx-4090/?context=4096",
        "/en/report/qwen3-14b/custom/?memory_gb=24": "/en/report/qwen3-14b-instruct/custom/?memory_gb=24",
        "/en/compare/qwen3-14b/": "/en/compare/qwen3-14b-instruct/",
    }
    for old, new in cases.items():
        response = client.get(old)
        assert (response.status_code, response["Location"]) == (301, new), old
    # A shared comparison keeps its columns, and the API its answer (the old slugs were a 400 and a 404).
    compare = client.get("/en/compare/qwen3-14b-instruct/?hw=rtx-4090:2&hw0=rtx-4090&n0=1&hw=h100-80gb-sxm")
    assert compare.status_code == 301
    assert compare["Location"] == ("/en/compare/qwen3-14b-instruct/?hw=geforce-rtx-4090%3A2&hw=h100-80gb-sxm"
                                   "&hw0=geforce-rtx-4090&n0=1")
    assert client.get(compare["Location"]).status_code == 200
    api = client.get("/api/v1/estimate?model=qwen3-14b&gpu=rtx-4090&context=4096")
    assert (api.status_code, api["Location"]) == (
        301, "/api/v1/estimate?model=qwen3-14b-instruct&gpu=geforce-rtx-4090&context=4096")
    assert client.get(api["Location"]).status_code == 200
    model.slug = "qwen3-14b-2"  # renamed again: the first URL leads to the newest
    model.save()
    assert client.get("/en/model/qwen3-14b/")["Location"] == "/en/model/qwen3-14b-2/"
    assert client.get("/en/model/no-such-model/").status_code == 404


@pytest.mark.usefixtures("empty_catalog")
@pytest.mark.parametrize("admin_model, factory, slug, message", [
    ("llmmodel", make_model, "Test-Llama-8B", "Use lower-case letters only"),
    ("accelerator", make_accelerator, "RTX-4090", "Use lower-case letters only"),
    ("accelerator", make_accelerator, "custom", "is reserved"),
])
def test_slugs_the_site_could_not_serve_are_refused(admin_client, admin_model, factory, slug, message):
    row = factory()
    url = f"/admin/catalog/{admin_model}/{row.pk}/change/"
    response = admin_client.post(url, change_form_data(admin_client, url, slug=slug))
    assert response.status_code == 200
    assert message in response.content.decode()
    row.refresh_from_db()
    assert row.slug != slug
