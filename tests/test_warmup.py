"""The gunicorn worker's warm-up (reports/warmup.py): it loads what requests need, then freezes it out of the
garbage collector's walks."""

import gc
import weakref

import pytest
from django.template import engines

from reports import estimates
from reports.warmup import project_template_names, warm_worker

pytestmark = pytest.mark.django_db


@pytest.fixture
def unfrozen():
    estimates._snapshot_cache.clear()
    yield
    gc.unfreeze()


def test_warm_up_loads_templates_and_catalog_then_freezes(unfrozen):
    names = project_template_names()
    assert "reports/report.html" in names and "reports/report/_matrix.html" in names
    frozen = warm_worker()
    assert frozen > 10_000 and gc.get_freeze_count() <= frozen  # frozen objects still die when nothing refers to them
    _version, snapshot = estimates._snapshot_cache["catalog"]
    assert "rtx-4090" in snapshot.hardware and snapshot._model_specs  # the specs, not only the rows
    # The snapshot is not frozen: once an admin edit replaces it, the collector frees it, cycles and all.
    gone = weakref.ref(snapshot)
    del snapshot
    estimates._snapshot_cache.clear()
    gc.collect()
    assert gone() is None
    loaders = engines["django"].engine.template_loaders
    cached = {key for loader in loaders for key in getattr(loader, "get_template_cache", {})}
    assert {"reports/report.html", "reports/report/_cloud.html"} <= {str(key) for key in cached}
