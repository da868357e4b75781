"""Size anything in a real browser: a pasted config.json (good and bad) opens a shareable report; three
accelerators compared side by side through the slots (htmx swaps the table and pushes the URL, the language
switch keeps the selection); "my hardware" typed into the configurator replaces the catalog accelerator.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator

import pytest
from django.db import connections
from django.test.testcases import LiveServerThread
from django.utils import translation
from playwright.sync_api import Page, expect

from catalog.submissions import URL_HASH_LENGTH, config_hash
from tests.browser.report_page import (LANGUAGES, MODEL, field_error, figure, figures, is_htmx, mark_document,
                                       number, query, report_path, still_same_document, type_refused)
from tests.factories import LLAMA_3_1_8B_CONFIG

pytestmark = [pytest.mark.browser, pytest.mark.django_db]

OTHER_LANGUAGE = {"en": "de", "de": "en"}
# Chromium logs "Failed to load resource: … 404/400" for every failed response; ConsoleLog.failed_responses
# holds those (each test checks them), so only the page's own errors are compared here.
RESOURCE_FAILURE = "Failed to load resource:"


def translated(lang: str, message: str) -> str:
    """The translation of a msgid up to its first placeholder (the part the page shows verbatim)."""
    with translation.override(lang):
        return translation.gettext(message).split("%(")[0]


def page_errors(log) -> list[str]:
    return [error for error in log.errors if not error.startswith(RESOURCE_FAILURE)]


@pytest.fixture
def server_writes_in_the_test_transaction(browser) -> Iterator[None]:
    """Let the live server write (a submitted config) inside this test's transaction, rolled back afterwards.

    conftest's ``site`` hands the server the connection the main thread had before Playwright started. Once
    Playwright's event loop runs in the main thread, Django's connection handler (asgiref's thread-critical
    Local) gives the test another wrapper, and the test's transaction (``django_db``) is open on that one.
    Reads work either way (the seed catalog is committed), but a server write then waits on the test's
    ``BEGIN IMMEDIATE`` lock and fails with "database table is locked". So, for the tests that submit a
    form, the server's request threads get the test's own connection, as Django's LiveServerTestCase intends.
    """
    server = next(thread for thread in threading.enumerate() if isinstance(thread, LiveServerThread))
    shared = server.connections_override  # the dict ThreadedWSGIServer reads for each request thread
    before, test_connection = shared["default"], connections["default"]
    test_connection.inc_thread_sharing()
    shared["default"] = test_connection
    yield
    shared["default"] = before
    # The test's browser contexts are closed by now (this fixture is set up before them), but their request
    # threads may still be closing the connection (ThreadedWSGIServer.close_request), which must be shareable.
    for thread in threading.enumerate():
        if thread.name.endswith("(process_request_thread)"):  # Thread.name is "Thread-N (target)"
            thread.join(timeout=5)
    test_connection.dec_thread_sharing()


# --- paste a config.json ------------------------------------------------------------------------------------

CONFIG_PAGE_URL = re.compile(r"/(?P<lang>en|de)/config/(?P<hash>[0-9a-f]+)/(?P<hardware>[-a-z0-9]+)/$")


def submit_config_text(page: Page, text: str):
    """Paste TEXT into the config.json field and submit the form; the response to the POST."""
    page.fill("#id_config_text", text)
    with page.expect_response(lambda response: response.request.method == "POST") as answer:
        with page.expect_navigation():
            page.locator("#config-form button[type=submit]").click()
    return answer.value


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.usefixtures("server_writes_in_the_test_transaction")
def test_a_pasted_config_opens_its_report_under_a_url_that_can_be_shared(page_and_log, open_context, lang):
    page, log = page_and_log
    assert page.goto(f"/{lang}/config/").status == 200
    posted = submit_config_text(page, json.dumps(LLAMA_3_1_8B_CONFIG, indent=2))
    assert posted.status == 302

    landed = CONFIG_PAGE_URL.search(page.url.split("?")[0])
    assert landed, page.url
    assert landed["lang"] == lang and landed["hash"] == config_hash(LLAMA_3_1_8B_CONFIG)[:URL_HASH_LENGTH]
    assert page.locator(f'html[lang="{lang}"]').count() == 1
    shown = figures(page)
    # The same engine as the catalog's Llama 3.1 8B: at the default 8K context and Q4_K_M, weights (~4.6 GiB)
    # plus 1 GiB of FP16 KV (131,072 B/token × 8,192) plus runtime buffers land between 5 and 8 GiB.
    assert 5 < number(shown["required"], lang) < 8, shown
    expect(page.locator("#matrix")).to_be_visible()
    expect(page.locator("#matrix table")).to_have_count(1)

    # Shareable: the URL alone reproduces the report in a browser that never saw the form.
    fresh, _ = open_context()
    response = fresh.goto(page.url)
    assert response.status == 200
    assert figures(fresh) == shown
    assert fresh.locator("#matrix").inner_text() == page.locator("#matrix").inner_text()

    # The report's configurator works on a submitted config too (htmx swaps, URL pushed).
    mark_document(page)
    required = figure(page, "required")
    before = required.inner_text()
    with page.expect_response(is_htmx):
        page.select_option("#id_context", "32768")
    expect(required).not_to_have_text(before)
    expect(page).to_have_url(re.compile(r"[?&]context=32768(&|$)"))
    assert still_same_document(page)
    # 24K more tokens of FP16 KV at 131,072 B/token = 3 GiB more.
    assert number(required.inner_text(), lang) - number(before, lang) >= 3

    assert page_errors(log) == []
    assert log.failed_responses == []


BAD_CONFIGS = {
    # text, the message's translated start (what the page shows), a fragment naming the fault
    "malformed JSON": ('{"model_type": "llama", "num_hidden_layers": 32,',
                       "This is not valid JSON: %(error)s", "line 1"),
    "no num_hidden_layers": (
        json.dumps({key: value for key, value in LLAMA_3_1_8B_CONFIG.items() if key != "num_hidden_layers"}),
        "This config.json cannot be sized: %(reason)s", "'num_hidden_layers'"),
}


@pytest.mark.parametrize("bad", BAD_CONFIGS)
@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.usefixtures("server_writes_in_the_test_transaction")
def test_a_bad_config_gets_its_message_beside_the_field_and_the_form_recovers(page_and_log, lang, bad):
    page, log = page_and_log
    text, message, fault = BAD_CONFIGS[bad]
    page.goto(f"/{lang}/config/")

    posted = submit_config_text(page, text)
    assert posted.status == 400
    assert page.url.split("?")[0].endswith(f"/{lang}/config/")
    error = field_error(page, "config_text")
    expect(error).to_contain_text(translated(lang, message))
    expect(error).to_contain_text(fault)
    # Only that field is marked, the visitor's text is still there to correct, and no report was made.
    expect(page.locator(".field.has-error")).to_have_count(1)
    expect(page.locator(".field.has-error #id_config_text")).to_have_count(1)
    expect(field_error(page, "config_file")).to_be_empty()
    assert page.input_value("#id_config_text") == text
    expect(page.locator("#fit")).to_have_count(0)

    # Nothing else broken: the corrected config goes through from the same page.
    assert submit_config_text(page, json.dumps(LLAMA_3_1_8B_CONFIG)).status == 302
    assert CONFIG_PAGE_URL.search(page.url.split("?")[0]), page.url
    expect(figure(page, "required")).to_be_visible()

    assert page_errors(log) == []
    assert [failure.split()[0] for failure in log.failed_responses] == ["400"]


# --- compare three accelerators -----------------------------------------------------------------------------

COMPARED = [("rtx-4090", "1"), ("h100-80gb-sxm", "2"), ("instinct-mi325x-256gb", "1")]


def compare_path(lang: str, model: str = MODEL) -> str:
    return f"/{lang}/compare/{model}/"


def compared_columns(page: Page) -> list[str]:
    return [cell.strip() for cell in page.locator("#compare-table table thead th a").all_inner_texts()]


def compared_row(page: Page, position: int) -> list[str]:
    """The cells (without the row header) of the table's POSITION-th body row: 2 = required memory."""
    return page.locator(f"#compare-table tbody tr:nth-child({position}) td").all_inner_texts()


REQUIRED_ROW, USABLE_ROW, DECODE_ROW = 2, 3, 5


def choose_in_compare(page: Page, select: str, value: str) -> None:
    """Pick VALUE in one of the compare form's selects and wait for htmx's table and the pushed URL."""
    with page.expect_response(is_htmx):
        page.select_option(f"#id_{select}", value)
    expect(page).to_have_url(re.compile(rf"[?&]{select}={re.escape(value)}(&|$)"))


def choose_three_accelerators(page: Page) -> None:
    for slot, (slug, count) in enumerate(COMPARED):
        choose_in_compare(page, f"hw{slot}", slug)
        if count != "1":
            choose_in_compare(page, f"n{slot}", count)
        expect(page.locator("#compare-table table thead th a")).to_have_count(slot + 1)


def assert_three_columns_with_figures(page: Page, lang: str) -> None:
    headers = compared_columns(page)
    assert len(headers) == 3, headers
    assert (headers[0].endswith("4090") and headers[1].startswith("2 × H100")
            and "MI325X" in headers[2]), headers
    required = [number(cell, lang) for cell in compared_row(page, REQUIRED_ROW)]
    decode = [number(cell, lang) for cell in compared_row(page, DECODE_ROW)]
    # One model at one scenario needs about the same memory everywhere (engines' buffers differ a little) …
    assert len(required) == 3 and max(required) - min(required) < 2, required
    # … and decodes faster on 2 × H100 (2 × 3.35 TB/s) or an MI325X (6 TB/s) than on an RTX 4090 (1 TB/s).
    assert decode[1] > decode[0] and decode[2] > decode[0], decode
    usable = compared_row(page, USABLE_ROW)
    assert re.search(r"×\s*2$", usable[1].strip()), usable


@pytest.mark.parametrize("lang", LANGUAGES)
def test_compare_three_accelerators_in_place_then_reload_and_switch_language(page_and_log, open_context,
                                                                             lang):
    page, log = page_and_log
    assert page.goto(compare_path(lang)).status == 200
    mark_document(page)
    expect(page.locator("#compare-table table")).to_have_count(0)

    choose_three_accelerators(page)
    assert still_same_document(page), "a compare change reloaded the page instead of swapping #compare-table"
    assert_three_columns_with_figures(page, lang)
    state = query(page)
    assert [(state[f"hw{slot}"], state[f"n{slot}"]) for slot in range(3)] == COMPARED
    table = page.locator("#compare-table").inner_text()

    # The pushed URL is the selection: reloaded (and opened in a fresh browser) it shows the same table.
    assert page.reload().status == 200
    assert page.locator("#compare-table").inner_text() == table
    for slot, (slug, count) in enumerate(COMPARED):
        assert page.input_value(f"#id_hw{slot}") == slug and page.input_value(f"#id_n{slot}") == count
    fresh, _ = open_context()
    assert fresh.goto(page.url).status == 200
    assert fresh.locator("#compare-table").inner_text() == table

    # The header's language link carries the selection into the other language.
    other = OTHER_LANGUAGE[lang]
    with page.expect_navigation():
        page.click(f'.lang-switch a[hreflang="{other}"]')
    assert page.url.split("?")[0].endswith(compare_path(other))
    assert page.locator(f'html[lang="{other}"]').count() == 1
    assert query(page) == state
    assert_three_columns_with_figures(page, other)
    assert [number(cell, other) for cell in compared_row(page, REQUIRED_ROW)] == [
        number(cell, lang) for cell in compared_row(fresh, REQUIRED_ROW)]

    assert page_errors(log) == []
    assert log.failed_responses == []


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_language_switch_keeps_a_compare_selection_made_with_htmx(page, lang):
    """Without a reload in between: the header was rendered before htmx pushed the selection into the URL."""
    page.goto(compare_path(lang))
    choose_three_accelerators(page)
    state = query(page)

    other = OTHER_LANGUAGE[lang]
    with page.expect_navigation():
        page.click(f'.lang-switch a[hreflang="{other}"]')
    assert page.url.split("?")[0].endswith(compare_path(other))
    assert query(page) == state, f"the language link dropped the selection: {page.url}"
    assert_three_columns_with_figures(page, other)


# --- my hardware --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("lang", LANGUAGES)
def test_my_hardware_from_a_catalog_report_updates_the_figures_in_place(page_and_log, open_context, lang):
    page, log = page_and_log
    page.goto(report_path(lang))
    catalog_figures = figures(page)
    with page.expect_navigation():
        page.locator('#configurator a[href*="/custom/?"]').click()

    assert page.url.split("?")[0].endswith(report_path(lang, hardware="custom"))
    # It starts from the RTX 4090's specs, so the figures are the catalog entry's.
    state = query(page)
    assert (state["memory_gb"], state["bandwidth_gbs"]) == ("24", "1008"), state
    assert page.input_value("#id_memory_gb") == "24"
    assert figures(page) == catalog_figures

    mark_document(page)
    usable, headroom = figure(page, "usable"), figure(page, "headroom")
    before_usable, before_headroom = usable.inner_text(), headroom.inner_text()
    with page.expect_response(is_htmx):
        page.fill("#id_memory_gb", "48")  # the input event: htmx waits 400 ms, then swaps #results
    expect(usable).not_to_have_text(before_usable)
    expect(page).to_have_url(re.compile(r"[?&]memory_gb=48(&|$)"))
    assert still_same_document(page)
    # Usable memory is a fixed share of the nominal memory, so twice the memory is twice the usable memory;
    # the requirement does not depend on the card, so the headroom grows by what the usable memory grew.
    usable_24, usable_48 = number(before_usable, lang), number(usable.inner_text(), lang)
    assert usable_48 == pytest.approx(2 * usable_24, rel=0.01), (usable_24, usable_48)
    assert figure(page, "required").inner_text() == catalog_figures["required"]
    grown = number(headroom.inner_text(), lang) - number(before_headroom, lang)
    assert grown == pytest.approx(usable_48 - usable_24, abs=0.1), grown
    at_48 = figures(page)

    # A value outside the field's limits (min 0.1) gets the server's message beside the field, typed (the browser's
    # own check used to hold the request back in silence, leaving the last figures standing) or from a URL.
    type_refused(page, "memory_gb", "-3")

    # The same value from a shared URL (no browser check in between) gets the server's message beside the
    # field, and correcting it there brings the report back.
    response = page.goto(page.url.replace("memory_gb=48", "memory_gb=-3"))
    assert response.status == 400
    expect(field_error(page, "memory_gb")).not_to_be_empty()
    expect(page.locator(".field.has-error")).to_have_count(1)
    expect(page.locator("#fit")).to_have_count(0)
    page.fill("#id_memory_gb", "48")
    with page.expect_navigation():
        page.locator("form.configurator button[type=submit]").press("Enter")
    assert query(page)["memory_gb"] == "48"
    assert figures(page) == at_48

    fresh, _ = open_context()
    assert fresh.goto(page.url).status == 200
    assert figures(fresh) == at_48
    assert page_errors(log) == []
    # The two refusals of memory_gb=-3: typed (htmx) and from the URL.
    assert [failure.split()[0] for failure in log.failed_responses] == ["400", "400"]
