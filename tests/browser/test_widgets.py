"""The report page's scripted widgets (static/js/report.js): copy buttons and the token-speed simulator."""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import expect

from tests.browser.report_page import LANGUAGES, choose, report_path

pytestmark = [pytest.mark.browser, pytest.mark.django_db]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_copy_button_copies_the_launch_command(open_context, lang):
    page, _ = open_context(permissions=["clipboard-read", "clipboard-write"])
    page.goto(report_path(lang))
    button = page.locator("#launch button.copy").first
    expect(button).to_be_visible()
    command = page.locator(f"#{button.get_attribute('data-copy-target')}")
    expect(command).to_contain_text("llama-server")

    button.click()
    expect(button).to_have_text(button.get_attribute("data-copied-label"))  # "Copied" / "Kopiert"
    try:
        copied = page.evaluate("navigator.clipboard.readText()")
    except PlaywrightError as error:  # headless Chromium without a clipboard
        pytest.skip(f"the clipboard cannot be read in this browser: {error.message.splitlines()[0]}")
    assert copied == command.inner_text()
    assert "-c 8192" in copied


@pytest.mark.parametrize("lang", LANGUAGES)
def test_copy_buttons_work_in_a_swapped_results_region(open_context, lang):
    page, _ = open_context(permissions=["clipboard-read", "clipboard-write"])
    page.goto(report_path(lang))
    choose(page, "context", "32768", changes=page.locator("#launch pre").first)
    button = page.locator("#launch button.copy").first
    button.click()
    expect(button).to_have_text(button.get_attribute("data-copied-label"))
    assert "-c 32768" in page.evaluate("navigator.clipboard.readText()")


def simulator_data(page) -> tuple[float, float, list[str]]:
    box = page.locator("#simulator .simulator")
    return (float(box.get_attribute("data-ttft-ms")), float(box.get_attribute("data-tokens-per-s")),
            box.get_attribute("data-sample").split())


def open_with_paused_clock(page, lang: str) -> None:
    """The report with Playwright's fake clock stopped, so the test, not the machine's load, says how much time
    passes while the simulator runs."""
    page.clock.install()
    page.goto(report_path(lang))
    page.clock.pause_at(time.time() + 5)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_play_waits_for_the_first_token_then_streams_at_the_computed_rate(page, lang):
    open_with_paused_clock(page, lang)
    expect(page.locator("#simulator .sim-static")).to_be_visible()  # the no-JavaScript sentence stays
    play = page.locator("#simulator .sim-start")
    expect(play).to_be_visible()  # hidden in the markup, shown by the script
    output, counter = page.locator("#simulator .sim-output"), page.locator("#simulator .sim-counter")
    box = page.locator("#simulator .simulator")
    ttft_ms, tokens_per_s, words = simulator_data(page)
    assert ttft_ms > 100 and tokens_per_s > 10  # an 8B model on an RTX 4090: ~0.5 s to the first token

    play.click()
    page.clock.run_for(int(ttft_ms) - 50)
    expect(output).to_have_text("")
    expect(counter).to_have_text(box.get_attribute("data-label-waiting"))

    page.clock.run_for(250)  # 200 ms into decoding
    shown = output.inner_text().split()
    # report.js shows words at tokens_per_s / 1.3 per second (~1.3 tokens per English word)
    expected = 0.2 * tokens_per_s / 1.3
    assert 0 < len(shown) < len(words) and abs(len(shown) - expected) <= 0.3 * expected + 2, (len(shown), expected)
    assert shown == words[:len(shown)]

    page.clock.run_for(60_000)
    expect(output).to_have_text(" ".join(words))
    expect(counter).to_have_text(box.get_attribute("data-label-done"))


@pytest.mark.parametrize("lang", LANGUAGES)
def test_play_with_reduced_motion_shows_the_whole_text_at_once(open_context, lang):
    page, _ = open_context(reduced_motion="reduce")
    open_with_paused_clock(page, lang)
    _, _, words = simulator_data(page)
    page.locator("#simulator .sim-start").click()  # no time passes
    expect(page.locator("#simulator .sim-output")).to_have_text(" ".join(words))
    expect(page.locator("#simulator .sim-counter")).to_have_text(
        page.locator("#simulator .simulator").get_attribute("data-label-done"))


@pytest.mark.parametrize("lang", LANGUAGES)
def test_without_the_clipboard_the_copy_button_selects_the_command(open_context, lang):
    """Over plain HTTP (no clipboard API) the button did nothing at all: now it selects the command for Ctrl+C and
    says so."""
    page, _ = open_context()
    page.add_init_script("Object.defineProperty(navigator, 'clipboard', {value: undefined})")
    page.goto(report_path(lang))
    button = page.locator("#launch button.copy").first
    button.click()
    expect(button).to_have_text(button.get_attribute("data-selected-label"))
    command = page.locator(f"#{button.get_attribute('data-copy-target')}").inner_text()
    assert page.evaluate("window.getSelection().toString()").strip() == command.strip()
