"""Admin input that used to be accepted and then broke pages (500s) or lost data, as a reviewer reproduced it."""

import datetime as dt
import json
from decimal import Decimal

import pytest

from catalog.models import Accelerator, CloudOffer, HardwarePrice, LLMModel, PriceRecord
from tests.admin_forms import change_form_data, changelist_data
from tests.factories import LLAMA_3_1_8B_CONFIG, make_accelerator, make_model, make_offer, make_price

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("empty_catalog")]


def change_url(row) -> str:
    return f"/admin/catalog/{row._meta.model_name}/{row.pk}/change/"


# 1. Prices ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("make_row, field, value, bound, kept", [
    (lambda: make_price(make_accelerator()), "usd", "1000000000", "10000000", Decimal("1599.00")),
    (lambda: make_offer(make_accelerator()), "hourly_usd", "9999999.999", "100000", Decimal("0.690")),
])
def test_a_price_beyond_its_bound_is_refused_with_a_message(admin_client, make_row, field, value, bound, kept):
    """A billion-dollar accelerator and a ten-million-dollar hour: refused beside the field, the price unchanged."""
    row = make_row()
    response = admin_client.post(change_url(row), change_form_data(admin_client, change_url(row), **{field: value}))
    assert response.status_code == 200
    assert f"less than or equal to {bound}" in response.content.decode()
    row.refresh_from_db()
    assert getattr(row, field) == kept


def test_price_history_reads_back_every_price_a_hardware_price_can_hold(admin_client):
    """PriceRecord.usd has the ten integer digits of HardwarePrice.usd: with nine (max_digits=12, decimal_places=3)
    SQLite stored 9,999,999,999.99 but reading it raised decimal.InvalidOperation (500 on the history pages)."""
    accelerator = make_accelerator()
    PriceRecord.objects.create(accelerator=accelerator, label="New", usd=Decimal("9999999999.99"),
                               as_of=dt.date(2026, 1, 1))
    assert admin_client.get("/admin/catalog/pricerecord/").status_code == 200
    assert admin_client.get(f"/admin/catalog/accelerator/{accelerator.pk}/price-history/").status_code == 200
    assert PriceRecord.objects.get().usd == Decimal("9999999999.99")


# 2. gguf_repo_quants -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("tags", ["Q4_KM", "Q4_K_XL", "TQ1_0", "<script>"])
def test_unknown_gguf_tags_are_refused_in_the_admin(admin_client, tags):
    model = make_model()
    response = admin_client.post(change_url(model), change_form_data(admin_client, change_url(model),
                                                                     gguf_repo_quants=f"Q8_0, {tags}"))
    assert response.status_code == 200
    assert "Not a known quantization format" in response.content.decode()
    model.refresh_from_db()
    assert model.gguf_repo_quants == ""


def test_gguf_tags_are_saved_in_the_engines_spelling(admin_client):
    model = make_model()
    response = admin_client.post(change_url(model), change_form_data(admin_client, change_url(model),
                                                                     gguf_repo_quants="q4_k_m,Q8_0, q4_k_m, f16"))
    assert response.status_code == 302
    model.refresh_from_db()
    assert model.gguf_repo_quants == "Q4_K_M, Q8_0, F16"


@pytest.mark.parametrize("lang", ["en", "de"])
def test_an_unknown_tag_saved_before_validation_does_not_take_the_home_page_down(client, lang):
    make_price(make_accelerator())
    model = make_model(gguf_repo="example/Test-GGUF")
    model.gguf_repo_quants = "Q4_KM, Q8_0"  # saved without full_clean, as rows from before the validation
    model.save()
    assert client.get(f"/{lang}/").status_code == 200


# 5. config.json in the admin ---------------------------------------------------------------------------------------

def _config_text(**extra) -> str:
    return json.dumps(LLAMA_3_1_8B_CONFIG | extra)


def _deep(depth: int) -> str:
    return _config_text()[:-1] + ', "deep": ' + "[" * depth + "]" * depth + "}"


@pytest.mark.parametrize("text, message", [
    (_config_text()[:-1] + ', "x": NaN}', "NaN is not a JSON number"),
    (_config_text()[:-1] + ', "x": [Infinity]}', "Infinity is not a JSON number"),
    (_deep(5000), "deeper than 32 levels"),
    (_deep(500), "deeper than 32 levels"),
    (_config_text()[:-1] + ', "x": ' + "9" * 5000 + "}", "more than 100 digits"),
    ('"just a string"', "JSON object"),
    ("[1, 2]", "JSON object"),
])
def test_the_admins_config_field_has_the_public_checks(admin_client, text, message):
    model = make_model()
    response = admin_client.post(change_url(model), change_form_data(admin_client, change_url(model), config=text))
    assert response.status_code == 200
    body = response.content.decode()
    assert message in body
    assert "set_int_max_str_digits" not in body and "JSONString" not in body
    model.refresh_from_db()
    assert model.config == LLAMA_3_1_8B_CONFIG


def test_the_admins_config_field_accepts_a_byte_order_mark_and_emptying(admin_client):
    model = make_model()
    response = admin_client.post(change_url(model), change_form_data(
        admin_client, change_url(model), config="\ufeff" + _config_text(vocab_size=1000)))
    assert response.status_code == 302
    model.refresh_from_db()
    assert model.config["vocab_size"] == 1000


# 6. Extreme accelerator figures ------------------------------------------------------------------------------------

@pytest.mark.parametrize("field, value", [
    ("memory_gb", "1e50"), ("tdp_w", "1e50"), ("bandwidth_gbs", "1e100"), ("fp16_tflops", "1e308"),
    ("interconnect_gbs", "1e308"), ("usable_memory_factor", "1e-300"), ("memory_gb", "1e308"), ("memory_gb", "2049"),
    ("launch_year", "99999999"),
])
def test_extreme_accelerator_figures_are_refused(admin_client, field, value):
    accelerator = make_accelerator()
    response = admin_client.post(change_url(accelerator), change_form_data(
        admin_client, change_url(accelerator), **{field: value}))
    assert response.status_code == 200
    assert "errorlist" in response.content.decode()
    assert Accelerator.objects.get().updated_at == accelerator.updated_at


def test_the_database_refuses_figures_beyond_the_bounds():
    from django.db import IntegrityError, transaction

    accelerator = make_accelerator()
    with pytest.raises(IntegrityError), transaction.atomic():
        Accelerator.objects.filter(pk=accelerator.pk).update(memory_gb=1e50)


@pytest.mark.parametrize("value, english", [(1e50, "100,000,000,000,000,000,000,000,000,000,000,000,000,000,000,000,000"),
                                            (float("inf"), "∞")])
def test_formatting_copes_with_figures_past_decimals_default_precision(value, english):
    from reports import formatting

    assert formatting.number(value, "en") == english
    assert formatting.usd(value, "de").endswith("\xa0$")
    assert formatting.significant(value, "en") == english


def test_the_api_never_answers_with_non_finite_json():
    from api.views import _json

    response = _json({"memory_gb": float("inf")})
    assert response.status_code == 422
    assert json.loads(response.content)["error"].startswith("the estimate has a figure")


# 4. Concurrent edits -----------------------------------------------------------------------------------------------

def test_a_stale_change_form_does_not_overwrite_a_newer_save(admin_client, client, django_user_model):
    price = make_price(make_accelerator())
    url = change_url(price)
    admin2 = change_form_data(admin_client, url)  # admin 2 opens the form
    first = admin_client.post(url, change_form_data(admin_client, url, usd="4100"))  # admin 1 opens and saves
    assert first.status_code == 302
    stale = admin_client.post(url, admin2 | {"note": "checked"})  # admin 2 changes only the note
    assert stale.status_code == 200
    assert "was changed by someone else" in stale.content.decode()
    price.refresh_from_db()
    assert (price.usd, price.note) == (Decimal("4100.00"), "")


def test_a_stale_changelist_does_not_overwrite_a_newer_save(admin_client):
    offer = make_offer(make_accelerator())
    stale = changelist_data(admin_client, "/admin/catalog/cloudoffer/")
    assert stale["form-0-edit_base"]
    offer.hourly_usd = Decimal("0.590")
    offer.save()
    response = admin_client.post("/admin/catalog/cloudoffer/", stale | {"form-0-is_active": ""})
    assert response.status_code == 200
    assert "Changed by someone else after you opened this list" in response.content.decode()
    offer.refresh_from_db()
    assert (offer.hourly_usd, offer.is_active) == (Decimal("0.590"), True)
    fresh = changelist_data(admin_client, "/admin/catalog/cloudoffer/")
    assert admin_client.post("/admin/catalog/cloudoffer/", fresh | {"form-0-is_active": ""}).status_code == 302
    offer.refresh_from_db()
    assert offer.is_active is False


def _clean_looked_before_the_other_save(monkeypatch):
    """Another save lands between the form's check (clean) and its own save. One test connection cannot interleave
    two transactions, so the other save is made first and clean() is made to find the row as the page was opened."""
    from django import forms

    from catalog.forms import ConcurrencyCheckedForm

    monkeypatch.setattr(ConcurrencyCheckedForm, "clean", forms.ModelForm.clean)


def test_a_save_between_check_and_save_is_not_overwritten(admin_client, monkeypatch):
    price = make_price(make_accelerator())
    url = change_url(price)
    data = change_form_data(admin_client, url, note="checked")
    HardwarePrice.objects.filter(pk=price.pk).update(usd=Decimal("4100"),
                                                    updated_at=price.updated_at + dt.timedelta(seconds=1))
    _clean_looked_before_the_other_save(monkeypatch)
    response = admin_client.post(url, data, follow=True)
    assert response.status_code == 200
    assert "Changed by someone else while you were saving" in response.content.decode()
    price.refresh_from_db()
    assert (price.usd, price.note) == (Decimal("4100.00"), "")


def test_a_changelist_save_in_the_window_rolls_back_every_row(admin_client, monkeypatch):
    first, second = make_offer(make_accelerator()), make_offer(make_accelerator(name="Second GPU", slug="second-gpu"))
    data = changelist_data(admin_client, "/admin/catalog/cloudoffer/",
                           **{"form-0-is_active": "", "form-1-is_active": ""})
    CloudOffer.objects.filter(pk=second.pk).update(hourly_usd=Decimal("0.590"),
                                                   updated_at=second.updated_at + dt.timedelta(seconds=1))
    _clean_looked_before_the_other_save(monkeypatch)
    response = admin_client.post("/admin/catalog/cloudoffer/", data, follow=True)
    assert "Changed by someone else while you were saving" in response.content.decode()
    assert sorted(CloudOffer.objects.values_list("is_active", flat=True)) == [True, True]  # neither row saved
    assert CloudOffer.objects.get(pk=second.pk).hourly_usd == Decimal("0.590")


def test_a_row_deleted_between_check_and_save_is_not_saved_back(admin_client, monkeypatch):
    """A row another admin deleted after the form's check was inserted again by the save (its claim found no row
    and let the save go on). One connection cannot interleave two transactions: the deletion runs in the admin's
    own, which the refused save rolls back, so the row is left as it was, without the edit."""
    from catalog.forms import ConcurrencyCheckedForm

    price = make_price(make_accelerator())
    url = change_url(price)
    data = change_form_data(admin_client, url, note="checked")
    clean = ConcurrencyCheckedForm.clean

    def clean_then_delete(self):
        cleaned = clean(self)
        HardwarePrice.objects.filter(pk=price.pk).delete()
        return cleaned

    monkeypatch.setattr(ConcurrencyCheckedForm, "clean", clean_then_delete)
    response = admin_client.post(url, data, follow=True)
    assert "Changed by someone else while you were saving" in response.content.decode()
    assert list(HardwarePrice.objects.values_list("note", flat=True)) == [""]


def test_a_stale_inline_price_does_not_overwrite_a_newer_save(admin_client):
    accelerator = make_accelerator()
    price = make_price(accelerator)
    url = change_url(accelerator)
    stale = change_form_data(admin_client, url)
    assert stale["prices-0-edit_base"]
    HardwarePrice.objects.filter(pk=price.pk).update(usd=Decimal("4100"),
                                                    updated_at=price.updated_at + dt.timedelta(seconds=1))
    response = admin_client.post(url, stale | {"prices-0-note": "checked", "name": "Renamed"})
    assert response.status_code == 200
    assert "was changed by someone else" in response.content.decode()
    price.refresh_from_db()
    accelerator.refresh_from_db()
    assert (price.usd, price.note, accelerator.name) == (Decimal("4100.00"), "", "Test GPU 24GB")


def test_an_unchanged_change_form_saves(admin_client):
    offer = make_offer(make_accelerator())
    url = change_url(offer)
    assert admin_client.post(url, change_form_data(admin_client, url, hourly_usd="0.7")).status_code == 302
    assert CloudOffer.objects.get().hourly_usd == Decimal("0.700")
    assert HardwarePrice.objects.count() == 0
    assert LLMModel.objects.count() == 0
