import pytest


@pytest.fixture(autouse=True)
def _english_by_default(settings):
    """Tests choose their language through the URL prefix; the fallback stays English."""
    settings.LANGUAGE_CODE = "en"
