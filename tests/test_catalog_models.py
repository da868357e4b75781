import datetime as dt
from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from catalog.models import Accelerator, LLMModel, PriceRecord
from tests.factories import LLAMA_3_1_8B_CONFIG, make_accelerator, make_model, make_offer, make_price

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("empty_catalog")]


def test_model_derives_architecture_columns_from_config():
    model = make_model()
    assert (model.architecture, model.num_layers, model.num_kv_heads, model.head_dim, model.vocab_size) == (
        "llama", 32, 8, 128, 128256)
    assert model.attention_kind == "gqa"
    assert model.layer_pattern == {"full/dense": 32}


def test_slug_is_unique_in_the_database():
    make_model()
    with pytest.raises(IntegrityError), transaction.atomic():
        LLMModel.objects.create(name="Other", slug="test-llama-8b", source="x", confidence="estimated",
                                stated_params_total=1e9)


def test_database_rejects_active_above_total():
    with pytest.raises(IntegrityError), transaction.atomic():
        LLMModel.objects.create(name="Bad", slug="bad", source="x", confidence="estimated",
                                stated_params_total=1e9, stated_params_active=2e9)


def test_database_rejects_a_model_with_neither_config_nor_parameters():
    with pytest.raises(IntegrityError), transaction.atomic():
        LLMModel.objects.create(name="Empty", slug="empty", source="x", confidence="estimated")


def test_clean_explains_a_config_that_cannot_be_sized():
    model = LLMModel(name="Broken", slug="broken", source="x", confidence="config.json",
                     config={"model_type": "llama", "hidden_size": 4096})
    with pytest.raises(ValidationError) as excinfo:
        model.full_clean()
    assert "config" in excinfo.value.message_dict
    assert "cannot be sized" in excinfo.value.message_dict["config"][0]


def test_clean_rejects_estimated_confidence_with_a_real_config():
    model = LLMModel(name="M", slug="m", source="x", confidence="estimated", config=dict(LLAMA_3_1_8B_CONFIG))
    with pytest.raises(ValidationError) as excinfo:
        model.full_clean()
    assert "confidence" in excinfo.value.message_dict


@pytest.mark.parametrize("field, value", [("memory_gb", 0), ("bandwidth_gbs", -1), ("fp16_tflops", 0),
                                          ("tdp_w", -5), ("usable_memory_factor", 1.5)])
def test_database_rejects_non_positive_accelerator_figures(field, value):
    values = {"vendor": "X", "name": "X", "slug": "x", "memory_gb": 24, "bandwidth_gbs": 100, "kind": "discrete",
              "backend": "cuda", "spec_sources": "x", field: value}
    with pytest.raises(IntegrityError), transaction.atomic():
        Accelerator.objects.create(**values)


def test_usable_factor_defaults_by_kind():
    assert make_accelerator().effective_usable_factor == 0.95
    assert make_accelerator(slug="mac", name="Mac", kind="unified", backend="metal").effective_usable_factor == 0.78
    assert make_accelerator(slug="x2", name="X2", usable_memory_factor=0.9).effective_usable_factor == 0.9


def test_database_rejects_non_positive_prices():
    accelerator = make_accelerator()
    with pytest.raises(IntegrityError), transaction.atomic():
        make_price(accelerator, usd=Decimal("0"))
    with pytest.raises(IntegrityError), transaction.atomic():
        make_offer(accelerator, hourly_usd=Decimal("-1"))


def test_every_price_change_is_recorded_and_unchanged_saves_are_not():
    accelerator = make_accelerator()
    price = make_price(accelerator)
    price.save()  # no change: no new record
    price.usd = Decimal("1499.00")
    price.as_of = dt.date(2026, 6, 1)
    price.save()
    offer = make_offer(accelerator)
    offer.hourly_usd = Decimal("0.590")
    offer.save()
    history = list(PriceRecord.objects.filter(accelerator=accelerator).order_by("id").values_list("usd", flat=True))
    assert history == [Decimal("1599.000"), Decimal("1499.000"), Decimal("0.690"), Decimal("0.590")]


def test_price_history_survives_deleting_the_price():
    accelerator = make_accelerator()
    make_price(accelerator).delete()
    assert PriceRecord.objects.filter(accelerator=accelerator).count() == 1
