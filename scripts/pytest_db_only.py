"""pytest plugin for the PostgreSQL run of `make test`: keep only the tests that touch the database.

Loaded with `python -m pytest -p scripts.pytest_db_only` (the repository root is on sys.path under `python -m`).
The SQLite run stays complete; re-running the pure engine tests on PostgreSQL would only cost time.

A test touches the database when pytest-django would open it for the test: it carries the `django_db` marker
(pytest-django's autouse fixture then requests `_django_db_helper`) or its fixture closure contains
`_django_db_helper` (the `db`, `transactional_db`, `admin_client`, `live_server` … fixtures all depend on it).
Tests marked `postgres` are kept as well.
"""

from __future__ import annotations

import pytest

DB_FIXTURE = "_django_db_helper"


# The fuzz tests hammer input validation with thousands of requests; what they test does not depend on the database
# engine, and repeating them would double the suite's longest part (issue: keep `make test` under 10 minutes).
SQLITE_ONLY_MODULES = ("test_fuzz",)


def touches_database(item: pytest.Item) -> bool:
    if item.path.stem.startswith(SQLITE_ONLY_MODULES):
        return False
    if item.get_closest_marker("django_db") or item.get_closest_marker("postgres"):
        return True
    return DB_FIXTURE in getattr(item, "fixturenames", ())


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    kept = [item for item in items if touches_database(item)]
    deselected = [item for item in items if not touches_database(item)]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = kept
