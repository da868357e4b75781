"""The model and hardware pages' tables and the search as you type, in a real browser: htmx swaps the table and
pushes the URL, the state survives the language switch, keyboard users keep their place, and without JavaScript
the same links and forms reload the page with the same result."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.report_page import LANGUAGES, mark_document, number, query, still_same_document

pytestmark = [pytest.mark.browser, pytest.mark.django_db]


def decode_column(page) -> list[str]:
    return [cell.strip() for cell in page.locator("#table tbody tr td:nth-child(6)").all_inner_texts()]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_sorting_a_model_table_by_keyboard_swaps_it_in_place_and_keeps_the_focus(page, lang):
    """The sort headers lost focus with the swapped table: the next Tab started at the top of the page."""
    page.goto(f"/{lang}/model/llama-3-1-8b-instruct/")
    mark_document(page)
    header = page.locator("#sort-decode")
    header.focus()
    with page.expect_response(lambda response: response.request.headers.get("hx-request") == "true"):
        page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"[?&]sort=decode"))
    expect(page.locator("#sort-decode")).to_be_focused()
    speeds = [number(text, lang) for text in decode_column(page) if re.search(r"\d", text)]
    assert speeds == sorted(speeds) or speeds == sorted(speeds, reverse=True), speeds
    assert still_same_document(page)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_filtering_a_hardware_table_keeps_its_state_across_the_language_switch(page, lang):
    """The hardware page did not load the script that carries the pushed state into the language links."""
    page.goto(f"/{lang}/hardware/rtx-4090/")
    rows = page.locator("#table tbody tr")
    all_rows = rows.count()
    with page.expect_response(lambda response: response.request.headers.get("hx-request") == "true"):
        page.check("#filter-fits")
    expect(page).to_have_url(re.compile(r"[?&]fits=1"))
    expect(rows).not_to_have_count(all_rows)
    assert all(not re.search(r"exceeds|übersteigt", text, re.I) for text in rows.all_inner_texts())
    other = "de" if lang == "en" else "en"
    with page.expect_navigation():
        page.locator(f'.lang-switch a[hreflang="{other}"]').click()
    assert page.url.split("?")[0].endswith(f"/{other}/hardware/rtx-4090/")
    assert query(page).get("fits") == "1"
    expect(page.locator("#filter-fits")).to_be_checked()


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_table_sorted_without_javascript_is_the_same_table(open_context, page, lang):
    page.goto(f"/{lang}/hardware/h100-80gb-sxm/")
    with page.expect_response(lambda response: response.request.headers.get("hx-request") == "true"):
        page.locator("#sort-total").click()
    expect(page).to_have_url(re.compile(r"[?&]sort=total"))
    swapped = page.locator("#table tbody").inner_text()
    plain, _ = open_context(java_script_enabled=False)
    plain.goto(page.url)
    assert plain.locator("#table tbody").inner_text() == swapped


@pytest.mark.parametrize("lang", LANGUAGES)
def test_search_as_you_type_lists_matches_a_keyboard_can_reach(page, lang):
    page.goto(f"/{lang}/")
    page.locator("#pick-model").fill("qwen3 30")
    first = page.locator("#search-results a").first
    expect(first).to_contain_text("Qwen3")
    page.locator("#pick-model").focus()
    for _ in range(10):  # Tab through the form to the results
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.closest('#search-results') !== null"):
            break
    assert page.evaluate("document.activeElement.closest('#search-results') !== null")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert re.search(rf"/{lang}/(model|report|search)/", page.url)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_enter_in_the_search_sends_one_request(page, lang):
    """Enter in a search field fires "search" and submits the form, and the typed input's request follows 250 ms
    later: with all of them as triggers the same query went two or three times."""
    page.goto(f"/{lang}/")
    sent = []
    page.on("request", lambda request: sent.append(request.url) if "/search/" in request.url else None)
    page.locator("#pick-model").type("gemma")
    page.locator("#pick-model").press("Enter")  # before the input's delay has passed
    expect(page.locator("#search-results a").first).to_contain_text("Gemma")
    page.wait_for_timeout(800)
    assert len(sent) == 1, sent


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_hardware_table_for_eight_gpus_under_vllm_swaps_in_place(page, lang):
    page.goto(f"/{lang}/hardware/h100-80gb-sxm/")
    status = page.locator("#table .table-summary")
    before = status.inner_text()
    with page.expect_response(lambda response: "gpus=8" in response.url):
        page.select_option("#filter-gpus", "8")
    expect(status).not_to_have_text(before)
    assert "8 × H100 80GB SXM" in status.inner_text()
    expect(page.locator("#table-status")).to_contain_text("8 × H100 80GB SXM")  # and announced
    expect(page.locator("h1")).to_contain_text("8 × H100 80GB SXM")  # the heading and the lead come along
    expect(page.locator("#hardware-lead")).to_contain_text("8 × H100 80GB SXM")
    with page.expect_response(lambda response: "engine=vllm" in response.url):
        page.select_option("#filter-engine", "vllm")
    expect(page).to_have_url(re.compile(r"gpus=8.*engine=vllm|engine=vllm.*gpus=8"))
    first_report = page.locator("#table tbody a[href*='/report/']").first.get_attribute("href")
    assert "gpus=8" in first_report and "engine=vllm" in first_report
    # Sorting keeps the configuration.
    with page.expect_response(lambda response: "sort=decode" in response.url):
        page.locator("#sort-decode").click()
    assert "gpus=8" in page.url and "engine=vllm" in page.url


@pytest.mark.parametrize("lang", LANGUAGES)
def test_enter_after_the_typed_search_was_sent_asks_for_nothing_more(page, lang):
    """Typing "qwen", waiting, then Enter sent the same query twice (the input's request, then the submit's)."""
    page.goto(f"/{lang}/")
    sent = []
    page.on("request", lambda request: sent.append(request.url) if "/search/" in request.url else None)
    page.locator("#pick-model").type("qwen")
    expect(page.locator("#search-results a").first).to_contain_text("Qwen")
    page.wait_for_timeout(600)
    before = len(sent)
    page.locator("#pick-model").press("Enter")
    page.wait_for_timeout(800)
    assert len(sent) == before, sent[before:]
    with page.expect_request(lambda request: "model=qwen%203" in request.url):  # a new query is asked for
        page.locator("#pick-model").type(" 3")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_back_from_a_search_result_shows_the_search_again(page, lang):
    """Typing "gemma 3 27" and "5090", opening a result and pressing Back left both fields and the results empty:
    the typed search is kept in the URL (replaced as it is typed, not a history entry per key)."""
    page.goto(f"/{lang}/")
    entries = page.evaluate("history.length")
    page.locator("#pick-model").type("gemma 3 27")
    page.locator("#pick-hardware").type("5090")
    expect(page).to_have_url(re.compile(r"model=gemma(\+|%20)3(\+|%20)27&hardware=5090"))
    assert page.evaluate("history.length") == entries  # replaced, not pushed
    first = page.locator("#search-results a[href*='/report/']").first
    expect(first).to_be_visible()
    with page.expect_navigation():
        first.click()
    page.go_back()
    expect(page.locator("#pick-model")).to_have_value("gemma 3 27")
    expect(page.locator("#pick-hardware")).to_have_value("5090")
    expect(page.locator("#search-results a[href*='/report/']").first).to_be_visible()


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_language_switch_keeps_a_typed_search(page, lang):
    """The search as you type replaced the URL with /<lang>/search/?model=…, but the language links still pointed
    to the other language's home page: switching lost the search."""
    other = "de" if lang == "en" else "en"
    page.goto(f"/{lang}/")
    page.locator("#pick-model").type("gemma 3 27")
    expect(page).to_have_url(re.compile(rf"/{lang}/search/\?model=gemma"))
    link = page.locator(f'.lang-switch a[hreflang="{other}"]')
    expect(link).to_have_attribute("href", re.compile(rf"^/{other}/search/\?model=gemma(\+|%20)3(\+|%20)27(&hardware=)?$"))
    with page.expect_navigation():
        link.click()
    assert re.search(rf"/{other}/search/\?model=gemma", page.url)
    expect(page.locator("#pick-model")).to_have_value("gemma 3 27")
    expect(page.locator("main a[href*='/model/gemma-3-27b-it/']").first).to_be_visible()


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_filtered_table_is_announced_from_a_live_region_that_stays(page, lang):
    """The table's role="status" line was swapped out with the table: screen readers often announce nothing from
    a live region inserted with its text. The region now stays outside the table and takes each new summary."""
    page.goto(f"/{lang}/model/llama-3-1-8b-instruct/")
    status = page.locator("#table-status")
    expect(status).to_have_count(1)
    handle = status.element_handle()
    with page.expect_response(lambda response: response.request.headers.get("hx-request") == "true"):
        page.locator(".table-filter input[type=checkbox]").first.check()
    summary = page.locator("#table .table-summary")
    sort_status = page.locator("#table th[data-sort-status]").get_attribute("data-sort-status")
    expect(status).to_have_text(re.sub(r"\s+", " ", summary.inner_text()).strip() + " " + sort_status)
    assert page.evaluate("(element) => element.isConnected", handle)  # the same element, not a new one
    assert page.locator("#table [role=status]").count() == 0


SORTED_BY_DECODE = {"en": "Sorted by Decode, descending.", "de": "Sortiert nach Decode, absteigend."}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_new_sort_is_announced_though_the_summary_stays_the_same(page, lang):
    """Sorting changes no count in the summary line: the live region got the same text again and announced
    nothing. The sorted column and its direction follow the summary."""
    page.goto(f"/{lang}/hardware/rtx-4090/")
    status = page.locator("#table-status")
    summary_before = page.locator("#table .table-summary").inner_text()
    with page.expect_response(lambda response: "sort=decode" in response.url):
        page.locator("#sort-decode").click()
    expect(page.locator("#table th[aria-sort=descending] #sort-decode")).to_have_count(1)
    assert page.locator("#table .table-summary").inner_text() == summary_before  # the summary alone said nothing new
    expect(status).to_contain_text(SORTED_BY_DECODE[lang])
    expect(status).to_contain_text(re.sub(r"\s+", " ", summary_before).strip())
