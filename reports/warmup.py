"""What a gunicorn worker loads before its first request, and why it then freezes the garbage collector.

A worker holds about 110,000 long-lived objects once it has served a report: the imports, the URLconf, the compiled
templates, the translation catalogs and the catalog snapshot (every model's and accelerator's spec). CPython's
cyclic garbage collector walks the old ones again at every full collection, and an uncached report allocates enough
to trigger about two collections: 3.2 ms of a 66 ms page (Python 3.12.1, 60 report states, gc.callbacks timing).
``gc.freeze()`` moves the objects alive at that moment into a permanent generation the collector skips (Python docs,
"gc.freeze"); after it the same pages spent 1.2–1.5 ms in the collector. The catalog snapshot is loaded after the
freeze: it is replaced when an admin edits the catalog, and a frozen object is never collected. Raising the collection thresholds instead
made pages slower (fewer but longer collections over cold memory), so the thresholds stay CPython's.

The warm-up also moves work off the first request each worker serves: that visitor no longer waits for the
templates to compile and the catalog to load.
"""

from __future__ import annotations

import gc
import logging
from pathlib import Path

from django.conf import settings
from django.db import DatabaseError, connections
from django.template import engines
from django.urls import get_resolver
from django.utils import translation

from reports.estimates import current_catalog

logger = logging.getLogger(__name__)


def project_template_names() -> list[str]:
    """The names of the project's own templates (settings.TEMPLATES' DIRS), as get_template takes them."""
    names = []
    for directory in engines["django"].dirs:
        root = Path(directory)
        names += sorted(str(path.relative_to(root)) for path in root.rglob("*.html"))
    return names


def warm_worker() -> int:
    """Load what every request needs, freeze the objects that live as long as the worker, then load the catalog
    snapshot (not frozen: an admin edit replaces it, and a frozen snapshot's reference cycles would never be
    collected). The objects frozen."""
    get_resolver().url_patterns  # noqa: B018 -- importing the URLconf imports the views and their modules
    for code, _name in settings.LANGUAGES:
        with translation.override(code):
            translation.gettext("Total")  # reads the language's compiled catalog
    engine = engines["django"]
    for name in project_template_names():
        engine.get_template(name)  # the cached loader keeps the compiled template for the worker's life
    gc.collect()
    gc.freeze()
    frozen = gc.get_freeze_count()
    try:
        _version, snapshot = current_catalog()
        snapshot.hardware_by_memory, snapshot.offers, snapshot.quant_names  # noqa: B018 -- cached properties
        for slug in snapshot.model_slugs:
            snapshot.model(slug)
    except DatabaseError:
        # A worker started before `migrate` (or against an unreachable database) still serves: the first request
        # loads the catalog, or shows the error page it would have shown anyway.
        logger.warning("catalog not loaded before the first request", exc_info=True)
    finally:
        # Requests run on gthread's pool threads, each with its own connection: this thread's would stay idle.
        connections.close_all()
    return frozen
