"""Browser-test fixtures: one live server and one Chromium for the whole package, a fresh context per test.

Why not pytest-django's ``live_server`` fixture: requesting it makes every test ``transactional_db``, which
flushes the database after each test and so drops the seed catalog that tests/conftest.py loads once per
session (reloading it takes about 3 s). The tests here are plain ``django_db`` tests instead (which also makes
pytest-django create the test database when only they are selected), and the same ``LiveServer`` helper that
pytest-django uses serves the pages and static files; with SQLite's in-memory test database its threads share
the test's connection, so they see the seeded catalog.

Chromium is Debian's /usr/bin/chromium (``make browser-deps``): Playwright's own browser download cannot work
on the build machines. Without it, every test here is skipped with the reason.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings
from playwright import sync_api

CHROMIUM = Path("/usr/bin/chromium")
# No sandbox (containers without user namespaces), no GPU, and none of Chromium's background traffic.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run"]
DESKTOP = {"width": 1280, "height": 900}
# Generous waits: `make test` shares two cores between the server, Chromium and pytest.
TIMEOUT_MS = 10_000
sync_api.expect.set_options(timeout=TIMEOUT_MS)


@pytest.fixture(scope="package", autouse=True)
def _database_calls_beside_playwright() -> Iterator[None]:
    """Playwright's sync API keeps an asyncio event loop in the test thread, so Django's async-safety check would
    refuse the test's own synchronous database setup and teardown (SynchronousOnlyOperation). Nothing here runs
    inside that loop, so the check is switched off for this package only (Django's documented escape hatch);
    the live server answers from its own threads either way."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        yield


@pytest.fixture(scope="package")
def site(django_db_setup, django_db_blocker) -> Iterator[str]:
    """The base URL of a live server on the test database (which holds the seed catalog)."""
    from catalog.models import LLMModel
    from catalog.seed_loader import load_catalog
    from pytest_django.live_server_helper import LiveServer

    with django_db_blocker.unblock():
        if not LLMModel.objects.exists():  # a transactional test that ran earlier flushed the session's catalog
            load_catalog()
    server = LiveServer("localhost")
    server._live_server_modified_settings.enable()
    yield server.url
    server._live_server_modified_settings.disable()
    server.stop()


@pytest.fixture(scope="package")
def browser(site) -> Iterator[sync_api.Browser]:
    """One headless Chromium for the package. It depends on ``site`` so that it closes first: a server stopped
    under Chromium's open keep-alive connections would close the shared database connection from its threads."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing: run `make browser-deps` (Debian's chromium package)")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


class ConsoleLog:
    """What the page reported: console errors, uncaught exceptions and failed (≥ 400) responses."""

    def __init__(self, page: sync_api.Page) -> None:
        self.errors: list[str] = []
        self.failed_responses: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.errors.append(f"uncaught: {error}"))
        page.on("response", self._response)

    def _console(self, message: sync_api.ConsoleMessage) -> None:
        if message.type == "error":
            self.errors.append(f"{message.text} ({message.location.get('url', '?')})")

    def _response(self, response: sync_api.Response) -> None:
        if response.status >= 400:
            self.failed_responses.append(f"{response.status} {response.url}")


def new_page(browser: sync_api.Browser, site: str, **context_options) -> tuple[sync_api.Page, ConsoleLog]:
    options = {"base_url": site, "viewport": DESKTOP} | context_options
    context = browser.new_context(**options)
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    return page, ConsoleLog(page)


@pytest.fixture
def open_context(browser, site) -> Iterator:
    """A factory for fresh browser contexts (JavaScript off, reduced motion, phone size …), closed afterwards."""
    contexts = []

    def factory(**context_options) -> tuple[sync_api.Page, ConsoleLog]:
        page, log = new_page(browser, site, **context_options)
        contexts.append(page.context)
        return page, log

    yield factory
    for context in contexts:
        context.close()


@pytest.fixture
def page_and_log(open_context) -> tuple[sync_api.Page, ConsoleLog]:
    return open_context()


@pytest.fixture
def page(page_and_log) -> sync_api.Page:
    return page_and_log[0]


@pytest.fixture(scope="session")
def screenshot_dir() -> Path:
    directory = Path(settings.VAR_DIR) / "screenshots"
    directory.mkdir(parents=True, exist_ok=True)
    return directory

