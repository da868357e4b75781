import pytest
from django.core.cache import caches

from catalog.models import Accelerator, CloudOffer, HardwarePrice, LLMModel, PriceRecord, QuantFormat, SeedKey
from catalog.seed_loader import load_catalog


@pytest.fixture(autouse=True)
def _fresh_page_cache():
    """Each test starts with an empty cache: cached pages from an earlier test would hide what a test measures."""
    caches["default"].clear()
    yield
    caches["default"].clear()


@pytest.fixture(autouse=True)
def _english_by_default(settings):
    """Tests choose their language through the URL prefix; the fallback stays English."""
    settings.LANGUAGE_CODE = "en"


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """The test database holds the shipped seed catalog, loaded once per session (every django_db test
    runs in a transaction that is rolled back, so the catalog is the same for each)."""
    with django_db_blocker.unblock():
        load_catalog()


@pytest.fixture
def empty_catalog(db):
    """For tests that build their own rows: the seeded catalog removed inside the test's transaction."""
    CloudOffer.objects.all().delete()
    PriceRecord.objects.all().delete()
    HardwarePrice.objects.all().delete()
    Accelerator.objects.all().delete()
    LLMModel.objects.all().delete()
    QuantFormat.objects.all().delete()
    SeedKey.objects.all().delete()  # the seed's rows are gone, not deleted by an admin: a test may load them again
