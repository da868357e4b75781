"""What a report page repeats is made once: the labels of its cloud offers and verdicts are translated once per
(text, language), not once a row; cached, they still follow the language and what the offer says."""

import datetime as dt
from unittest import mock

import pytest
from django.utils import translation

from reports.sizing.specs import CloudOfferSpec
from reports.templatetags import fmt, labels

OFFER = CloudOfferSpec(provider="RunPod", instance="1x RTX 4090 (Verified Host)", accelerator_slug="rtx-4090",
                       gpu_count=1, hourly_usd=0.34, billing="per-second", verified="2026-05-03")


def _translations(call):
    """How many gettext lookups `call` makes (through django.utils.translation, as the filters do)."""
    with mock.patch("django.utils.translation._trans.gettext", wraps=translation._trans.gettext) as spy:
        call()
    return spy.call_count


@pytest.mark.parametrize("label", [
    lambda: fmt.verified_label(OFFER), lambda: labels.billing_label(OFFER.billing),
    lambda: labels.offer_instance(OFFER.instance), lambda: labels.verdict_pill("fits"),
    lambda: labels.segment_label("weights"),
])
def test_a_repeated_label_is_translated_once_per_language(label):
    with translation.override("de"):
        label()
        assert _translations(label) == 0
    with translation.override("en"):
        assert _translations(label) <= 2  # first in English: its own lookups
        assert _translations(label) == 0


def test_cached_labels_follow_the_language():
    for _round in range(2):  # the second round reads the cache
        with translation.override("de"):
            assert fmt.verified_label(OFFER) == "geprüft am 03.05.2026"
            assert labels.billing_label("per-second") == "pro Sekunde"
            assert labels.offer_instance(OFFER.instance) == "1x RTX 4090 (Verifizierter Host)"
            assert "verdict-fits" in labels.verdict_pill("fits") and ">passt<" in labels.verdict_pill("fits")
        with translation.override("en"):
            assert fmt.verified_label(OFFER) == "verified May 3, 2026"
            assert labels.billing_label("per-second") == "per second"
            assert labels.offer_instance(OFFER.instance) == "1x RTX 4090 (Verified Host)"
            assert labels.verdict_pill("fits") == '<span class="verdict-pill verdict-fits">fits</span>'


@pytest.mark.django_db
def test_an_edited_offer_row_shows_its_new_date():
    """The cache is keyed on the date and its precision, not on the row: an admin edit shows at once."""
    from catalog.models import CloudOffer

    offer = CloudOffer.objects.get(provider="RunPod", accelerator__slug="rtx-4090", gpu_count=1)
    with translation.override("en"):
        assert fmt.verified_on(offer) == "March 2026"
        offer.verified, offer.verified_precision = dt.date(2026, 4, 9), "day"
        assert fmt.verified_on(offer) == "Apr 9, 2026"
        offer.price_doubt = "the provider's page shows another rate"
        assert fmt.verified_on(offer) == "rate not confirmed by its source"
