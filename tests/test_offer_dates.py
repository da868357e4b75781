"""An offer's verification date is as precise as its source: sources that give only a month ("March 2026") are
stored as the 1st and shown as the month, never as a day the source did not give."""

import datetime as dt
import re

import pytest

from catalog.models import CloudOffer
from reports import formatting

pytestmark = pytest.mark.django_db


def test_month_only_sources_are_marked_in_the_seed():
    offer = CloudOffer.objects.get(provider="RunPod", accelerator__slug="rtx-4090", gpu_count=1)
    assert offer.verified == dt.date(2026, 3, 1) and offer.verified_precision == "month"
    dated = CloudOffer.objects.get(provider="Spheron", accelerator__slug="rtx-4090")
    assert dated.verified == dt.date(2026, 5, 3) and dated.verified_precision == "day"


@pytest.mark.parametrize("lang, month, day, wrong", [
    ("en", "verified in March 2026", "verified May 3, 2026", "Mar 1, 2026"),
    ("de", "geprüft im März 2026", "geprüft am 03.05.2026", "01.03.2026"),
])
def test_report_cloud_table_shows_the_month_of_a_month_only_source(client, lang, month, day, wrong):
    html = client.get(f"/{lang}/report/qwen3-30b-a3b-instruct-2507/rtx-4090/").content.decode()
    text = " ".join(re.sub(r"<[^>]+>", " ", html).split())
    assert month in text and day in text
    assert wrong not in text


@pytest.mark.parametrize("lang, month, wrong", [("en", "March 2026", "Mar 1, 2026"), ("de", "März 2026", "01.03.2026")])
def test_hardware_page_offers_show_the_month_of_a_month_only_source(client, lang, month, wrong):
    html = client.get(f"/{lang}/hardware/rtx-4090/").content.decode()
    assert month in html and wrong not in html


def test_month_format_follows_the_locale():
    assert formatting.month(dt.date(2026, 3, 17), "en") == "March 2026"
    assert formatting.month(dt.date(2026, 3, 17), "de") == "März 2026"
    assert formatting.month(None, "de") is None
