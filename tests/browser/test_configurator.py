"""The configurator in a real browser: htmx swaps in place and pushes the URL, the URL reproduces the state,
the language switch keeps it, the form works without JavaScript, and invalid input gets a message beside the field.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.report_page import (LANGUAGES, choose, field_error, figure, figures, is_htmx, mark_document,
                                       months, number, query, report_path, still_same_document, type_refused)

pytestmark = [pytest.mark.browser, pytest.mark.django_db]

OTHER_LANGUAGE = {"en": "de", "de": "en"}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_each_configurator_change_updates_the_numbers_in_place_and_the_url(page, lang):
    page.goto(report_path(lang))
    mark_document(page)
    required = figure(page, "required")
    start = number(required.inner_text(), lang)

    # Llama-3.1-8B's KV cache is 131,072 B/token (2 × 32 layers × 8 KV heads × 128 × 2 B): 8K → 128K adds
    # 15 GiB of FP16 KV, so the requirement grows by more than 14 GiB whatever the runtime buffers do.
    at_128k = number(choose(page, "context", "131072", changes=required), lang)
    assert at_128k - start > 14, (start, at_128k)

    # Two GPUs: the usable figure reads "… × 2".
    usable = choose(page, "gpus", "2", changes=figure(page, "usable"))
    assert re.search(r"×\s*2$", usable), usable

    # Q8_0 weights (8.5 bpw) against Q4_K_M's (~4.9 bpw): 8.03 B × 3.6 bits / 8 ≈ 3.6 GB = 3.4 GiB more.
    at_q8 = number(choose(page, "quant", "Q8_0", changes=required), lang)
    assert at_q8 - at_128k > 3, (at_128k, at_q8)

    # An 8-bit KV cache (q8_0: 34 B per 32 values, against 64 B at FP16) saves 16 GiB × (1 − 34/64) = 7.5 GiB
    # of the FP16 KV at 128K.
    at_kv8 = number(choose(page, "kv_dtype", "q8_0", changes=required), lang)
    assert 7 < at_q8 - at_kv8 < 9, (at_q8, at_kv8)

    assert still_same_document(page), "a configurator change reloaded the page instead of swapping #results"
    state = query(page)
    assert (state["context"], state["gpus"], state["quant"], state["kv_dtype"]) == ("131072", "2", "Q8_0", "q8_0")
    assert page.locator(f'html[lang="{lang}"]').count() == 1


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_pushed_url_opened_fresh_shows_the_same_results(page, open_context, lang):
    page.goto(report_path(lang))
    choose(page, "context", "32768", changes=figure(page, "required"))
    choose(page, "kv_dtype", "q8_0", changes=figure(page, "required"))
    lead_before = page.locator("#summary").inner_text()
    choose(page, "quant", "Q8_0", changes=figure(page, "required"))
    after_swap = figures(page)
    results_after_swap = page.locator("#results").inner_text()
    # The lead above the configurator names the format too: it is swapped with the results (it kept "Q4_K_M").
    lead_after_swap = page.locator("#summary").inner_text()
    assert "Q8_0" in lead_after_swap and "Q4_K_M" not in lead_after_swap and lead_after_swap != lead_before

    fresh, _ = open_context()
    response = fresh.goto(page.url)
    assert response.status == 200
    assert figures(fresh) == after_swap
    # The full page and the htmx partial render the same template, so the whole results region matches.
    assert fresh.locator("#results").inner_text() == results_after_swap
    assert fresh.locator("#summary").inner_text() == lead_after_swap


@pytest.mark.parametrize("lang", LANGUAGES)
def test_rent_vs_buy_inputs_update_the_break_even_in_place(page, lang):
    page.goto(report_path(lang))
    mark_document(page)
    break_even = figure(page, "break_even")
    power = figure(page, "power")

    def type_into(field: str, value: str) -> None:
        before = break_even.inner_text()
        page.fill(f"#id_{field}", value)  # the input event: htmx waits 400 ms, then swaps
        expect(break_even).not_to_have_text(before)
        expect(page).to_have_url(re.compile(rf"[?&]{field}={re.escape(value)}(&|$)"))

    at_start = months(break_even.inner_text(), lang)
    # More hours a day make renting dearer, so buying pays off sooner.
    type_into("hours", "12")
    sooner = months(break_even.inner_text(), lang)
    assert sooner < at_start, (at_start, sooner)
    # A dearer purchase takes longer to pay off.
    type_into("budget", "3000")
    later = months(break_even.inner_text(), lang)
    assert later > sooner, (sooner, later)
    # Dearer electricity raises the local power cost and delays the break-even.
    power_before = number(power.inner_text(), lang)
    type_into("kwh", "0.4")
    assert number(power.inner_text(), lang) > power_before
    assert months(break_even.inner_text(), lang) > later  # ~17 years: beyond ten years it reads in years

    assert still_same_document(page)
    assert {key: value for key, value in query(page).items() if key in ("hours", "budget", "kwh")} == {
        "hours": "12", "budget": "3000", "kwh": "0.4"}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_language_switch_keeps_the_configurator_state(page, lang):
    other = OTHER_LANGUAGE[lang]
    page.goto(report_path(lang))
    choose(page, "context", "32768", changes=figure(page, "required"))
    choose(page, "kv_dtype", "q8_0", changes=figure(page, "required"))
    state = query(page)
    required = number(figure(page, "required").inner_text(), lang)

    with page.expect_navigation():
        page.click(f'.lang-switch a[hreflang="{other}"]')

    assert page.url.split("?")[0].endswith(report_path(other))
    assert page.locator(f'html[lang="{other}"]').count() == 1
    assert query(page) == state
    assert page.input_value("#id_context") == "32768" and page.input_value("#id_kv_dtype") == "q8_0"
    assert number(figure(page, "required").inner_text(), other) == required


@pytest.mark.parametrize("lang", LANGUAGES)
def test_without_javascript_the_form_reloads_the_page_with_the_new_numbers(open_context, lang):
    page, _ = open_context(java_script_enabled=False)
    page.goto(report_path(lang))
    before = number(figure(page, "required").inner_text(), lang)
    assert page.locator(".sim-start").is_hidden()  # the simulator's Play button needs JavaScript
    assert page.locator("#launch button.copy").count() and page.locator("#launch button.copy").first.is_hidden()
    expect(page.locator(".sim-static")).to_be_visible()

    page.select_option("#id_context", "32768")
    page.wait_for_timeout(300)
    assert page.url.split("?")[0].endswith(report_path(lang)) and "?" not in page.url  # nothing happened yet
    with page.expect_navigation():
        # Focus and Enter, as from the keyboard (the button can sit below a desktop viewport: see test_layout).
        page.locator("#configurator button[type=submit]").press("Enter")

    assert query(page)["context"] == "32768"
    after = number(figure(page, "required").inner_text(), lang)
    # 24K more tokens of FP16 KV at 131,072 B/token = 3 GiB more.
    assert after - before >= 3, (before, after)

    reference, _ = open_context()
    reference.goto(page.url)
    assert figures(reference) == figures(page)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_an_invalid_value_in_the_url_shows_the_error_beside_the_field(page, lang):
    response = page.goto(report_path(lang, "context=99999999"))
    assert response.status == 400
    expect(page.locator(".field.has-error")).to_have_count(1)
    message = field_error(page, "context")
    # "This model supports at most 131072 tokens." — Llama 3.1's max_position_embeddings
    expect(message).to_have_text(re.compile(r"131[.,\u00a0\u202f]?072"))
    expect(page.locator(".field.has-error #id_context")).to_have_count(1)
    # Screen readers reach the message from the control.
    described_by = (page.get_attribute("#id_context", "aria-describedby") or "").split()
    assert message.get_attribute("id") in described_by
    expect(page.locator("#invalid-input")).to_be_visible()
    expect(page.locator("#fit")).to_have_count(0)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_an_invalid_combination_chosen_with_htmx_shows_the_error_and_the_page_recovers(page, lang):
    page.goto(report_path(lang, "engine=vllm&kv_dtype=auto"))
    mark_document(page)
    gpus_error = field_error(page, "gpus")
    expect(gpus_error).to_be_empty()

    with page.expect_response(is_htmx) as answer:
        page.select_option("#id_gpus", "3")  # vLLM splits Llama 3.1's 32 attention heads evenly: not over 3 GPUs
    assert answer.value.status == 400
    expect(gpus_error).to_contain_text("32")
    expect(page.locator("#invalid-input")).to_be_visible()
    expect(page.locator("#fit")).to_have_count(0)

    # Choosing what the message suggests brings the results back and clears the message.
    with page.expect_response(is_htmx):
        page.select_option("#id_gpus", "2")
    expect(page.locator("#fit")).to_be_visible()
    expect(gpus_error).to_be_empty()
    assert still_same_document(page)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_switching_a_vllm_awq_report_to_llama_cpp_takes_the_nearest_gguf(page, lang):
    """AWQ under vLLM, then llama.cpp: the report was refused under the format field; now the select shows Q4_K_M
    (the nearest GGUF of a 4-bit checkpoint), a sentence says why, and the pushed URL is the state shown."""
    page.goto(report_path(lang, "engine=vllm&quant=AWQ&kv_dtype=auto"))
    mark_document(page)
    expect(page.locator("#id_quant")).to_have_value("AWQ")
    with page.expect_response(is_htmx) as answer:
        page.select_option("#id_engine", "llama.cpp")
    assert answer.value.status == 200
    expect(page.locator("#quant-replaced")).to_be_visible()
    expect(page.locator("#quant-replaced")).to_contain_text("AWQ")
    expect(page.locator("#quant-replaced")).to_contain_text("Q4_K_M")
    expect(page.locator("#id_quant")).to_have_value("Q4_K_M")
    expect(page).to_have_url(re.compile(r"[?&]quant=Q4_K_M(&|$)"))
    state = query(page)
    assert (state["engine"], state["quant"]) == ("llama.cpp", "Q4_K_M") and "quant_replaced" not in state
    expect(field_error(page, "quant")).to_be_empty()
    expect(page.locator("#fit")).to_be_visible()
    expect(page.locator("#launch")).to_contain_text("Q4_K_M")
    assert still_same_document(page)
    # Another change keeps the replacement and drops the sentence.
    choose(page, "context", "16384", changes=figure(page, "required"))
    expect(page.locator("#quant-replaced")).to_have_count(0)
    assert query(page)["quant"] == "Q4_K_M"
    # Back restores the vLLM state with its own select values.
    page.go_back()
    page.go_back()
    expect(page.locator("#id_engine")).to_have_value("vllm")
    expect(page.locator("#id_quant")).to_have_value("AWQ")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_without_javascript_the_engine_switch_lands_on_the_nearest_gguf(open_context, lang):
    page, _ = open_context(java_script_enabled=False)
    page.goto(report_path(lang, "engine=vllm&quant=AWQ&kv_dtype=auto"))
    page.select_option("#id_engine", "llama.cpp")
    with page.expect_navigation():
        page.locator("#configurator button[type=submit]").press("Enter")
    expect(page.locator("#quant-replaced")).to_be_visible()
    expect(page.locator("#id_quant")).to_have_value("Q4_K_M")
    state = query(page)
    assert (state["engine"], state["quant"], state["quant_replaced"]) == ("llama.cpp", "Q4_K_M", "AWQ")
    expect(page.locator("#fit")).to_be_visible()


@pytest.mark.parametrize("lang", LANGUAGES)
def test_switching_the_engine_keeps_an_8_bit_kv_cache_in_the_engines_type(page, lang):
    """Q8_0 KV under llama.cpp, then vLLM: the report was refused under the KV field; now the select shows FP8, a
    sentence says why, and the pushed URL is the state shown."""
    page.goto(report_path(lang))
    mark_document(page)
    choose(page, "kv_dtype", "q8_0", changes=figure(page, "required"))
    with page.expect_response(is_htmx) as answer:
        page.select_option("#id_engine", "vllm")
    assert answer.value.status == 200
    expect(page.locator("#kv-replaced")).to_be_visible()
    expect(page.locator("#id_kv_dtype")).to_have_value("fp8")
    expect(page).to_have_url(re.compile(r"[?&]kv_dtype=fp8(&|$)"))
    expect(page.locator("#fit")).to_be_visible()
    expect(page.locator("#launch")).to_contain_text("--kv-cache-dtype fp8")
    assert still_same_document(page)
    # Back restores the llama.cpp state with its own select values.
    page.go_back()
    expect(page.locator("#id_engine")).to_have_value("llama.cpp")
    expect(page.locator("#id_kv_dtype")).to_have_value("q8_0")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_vllms_memory_share_resizes_its_budget_in_place_and_a_value_above_one_is_refused(page, lang):
    page.goto(report_path(lang, "engine=vllm&kv_dtype=auto"))
    mark_document(page)
    usable = figure(page, "usable")
    at_default = number(usable.inner_text(), lang)
    expect(page.locator("#launch")).to_contain_text("--gpu-memory-utilization 0.9")

    before = usable.inner_text()
    with page.expect_response(is_htmx):
        page.fill("#id_gpu_memory_utilization", "0.8")  # the input event: htmx waits 400 ms, then swaps
    expect(usable).not_to_have_text(before)
    expect(page).to_have_url(re.compile(r"[?&]gpu_memory_utilization=0\.8(&|$)"))
    # vLLM's budget is the share of the memory the driver reports (an RTX 4090: 24 × 79.19/80 = 23.76 GiB), so a
    # tenth less is 2.38 GiB less (21.38 → 19.01 GiB).
    assert 2.0 < at_default - number(usable.inner_text(), lang) < 2.5, (at_default, usable.inner_text())
    expect(page.locator("#launch")).to_contain_text("--gpu-memory-utilization 0.8")

    assert still_same_document(page)

    # Above 1 the server's message stands beside the field, typed (the form does not let the browser's own
    # check hold the request back in silence) or from a shared URL.
    type_refused(page, "gpu_memory_utilization", "1.5")
    response = page.goto(page.url.replace("gpu_memory_utilization=0.8", "gpu_memory_utilization=1.5"))
    assert response.status == 400
    expect(field_error(page, "gpu_memory_utilization")).not_to_be_empty()
    expect(page.locator("#fit")).to_have_count(0)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_an_invalid_number_gets_the_servers_message_instead_of_blocking_every_update(page, lang):
    """The browser's own check (min/max of the number input) made htmx drop the request without a word: the
    select showed Q8_0 beside Q4_K_M's results, and every later change was blocked until the number was fixed."""
    page.goto(report_path(lang))
    with page.expect_response(is_htmx):
        page.fill("#id_hours", "30")  # above the 24 hours of a day
    expect(field_error(page, "hours")).to_contain_text("24")
    expect(page.locator(".field.has-error #id_hours")).to_have_attribute("aria-invalid", "true")
    page.fill("#id_hours", "4")
    expect(field_error(page, "hours")).to_have_text(re.compile(r"^\s*$"))
    expect(page.locator("#id_hours")).not_to_have_attribute("aria-invalid", "true")
    required = figure(page, "required")
    choose(page, "quant", "Q8_0", changes=required)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_back_and_forward_show_the_controls_of_the_url_they_restore(page, lang):
    errors = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.goto(report_path(lang))
    required = figure(page, "required")
    choose(page, "quant", "Q8_0", changes=required)
    choose(page, "context", "32768", changes=required)
    choose(page, "gpus", "2", changes=figure(page, "usable"))
    page.go_back()
    expect(page).to_have_url(re.compile(r"context=32768"))
    expect(page).not_to_have_url(re.compile(r"gpus=2"))
    # The URL is the state: every control shows it (the snapshot's selects showed the first page's values).
    for field, value in query(page).items():
        if page.locator(f"select#id_{field}").count():
            expect(page.locator(f"#id_{field}")).to_have_value(value)
    page.go_back()
    expect(page.locator("#id_context")).to_have_value("8192")
    expect(page.locator("#id_quant")).to_have_value("Q8_0")
    page.go_forward()
    expect(page.locator("#id_context")).to_have_value("32768")
    # The restored snapshots carry no inline style (the held heights): nothing for the CSP to block.
    assert errors == []


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_history_entry_missing_from_htmxs_cache_comes_back_as_the_whole_page(page, lang):
    """htmx asked for a restored entry it had not cached as an htmx request, and the view answered with the results
    partial: the page became a bare fragment without header, configurator or footer."""
    page.goto(report_path(lang))
    choose(page, "context", "32768", changes=figure(page, "required"))
    choose(page, "context", "65536", changes=figure(page, "required"))
    page.evaluate("sessionStorage.clear()")  # htmx's history cache: the next Back is a miss
    page.go_back()
    expect(page).to_have_url(re.compile(r"context=32768"))
    expect(page.locator("#configurator")).to_have_count(1)
    expect(page.locator("h1")).to_have_count(1)
    expect(page.locator("footer")).to_have_count(1)
    expect(page.locator("#id_context")).to_have_value("32768")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_reader_scrolled_to_the_chart_stays_there_while_the_details_reload(page, lang):
    """The longer sections come in a second request; their placeholder had no height, so a change made while
    reading the chart threw the reader ~2,000 px up the page until they arrived."""
    import time

    def slow_details(route):
        time.sleep(1.0)
        route.continue_()

    page.route(re.compile(r".*part=details.*"), slow_details)
    page.goto(report_path(lang))
    page.locator("#chart").scroll_into_view_if_needed()
    before = page.evaluate("window.scrollY")
    assert before > 1000
    with page.expect_response(is_htmx):
        # As the reader's own choice would (Playwright's select_option first scrolls the select into view).
        page.evaluate("""() => { const select = document.querySelector('#id_quant'); select.value = 'Q8_0';
                                 select.dispatchEvent(new Event('change', {bubbles: true})); }""")
    expect(page.locator("#details[aria-busy='true']")).to_have_count(1)  # the sections have not arrived yet
    assert page.evaluate("window.scrollY") >= before * 0.9
    expect(page.locator("#details #chart")).to_have_count(1)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_typed_number_is_sent_once_and_pushed_once(page, lang):
    """Typing 8 into "Active use" sent the results and details once the input rested and again when the field
    lost focus (the change event, same value), and pushed two history entries."""
    page.goto(report_path(lang))
    mark_document(page)
    entries = page.evaluate("history.length")
    sent = []
    page.on("request", lambda request: sent.append(request.url) if "hours=8" in request.url else None)
    break_even = figure(page, "break_even")
    before = break_even.inner_text()
    page.fill("#id_hours", "8")
    expect(break_even).not_to_have_text(before)
    expect(page).to_have_url(re.compile(r"[?&]hours=8(&|$)"))
    page.wait_for_timeout(300)  # the details request
    page.locator("#id_hours").press("Tab")  # "change" with the value already sent
    page.wait_for_timeout(900)
    assert len(sent) == 2, sent  # the results and the details, once
    page.locator("#id_hours").press("Enter")  # "submit" with the value already sent
    page.wait_for_timeout(900)
    assert len(sent) == 2, sent
    assert page.evaluate("history.length") == entries + 1  # one pushed state
    # A new value after the field left focus is sent again; Enter at once with it sends it once.
    page.fill("#id_hours", "9")
    page.locator("#id_hours").press("Enter")
    expect(page).to_have_url(re.compile(r"[?&]hours=9(&|$)"))
    page.wait_for_timeout(900)
    assert still_same_document(page)
    nine = [url for url in page.evaluate("performance.getEntriesByType('resource').map(e => e.name)")
            if "hours=9" in url and "part=details" not in url]
    assert len(nine) == 1, nine


@pytest.mark.parametrize("lang", LANGUAGES)
def test_sections_the_reader_opened_stay_open_after_a_change(page, lang):
    page.goto(report_path(lang))
    page.locator("#how > details > summary").click()
    page.locator("#chart details > summary").click()
    expect(page.locator("#how > details")).to_have_attribute("open", "")
    required = figure(page, "required")
    choose(page, "context", "32768", changes=required)
    expect(page.locator('#details[aria-busy="true"]')).to_have_count(0)  # the details have come in
    expect(page.locator("#how > details")).to_have_attribute("open", "")
    expect(page.locator("#chart details").first).to_have_attribute("open", "")
    assert page.locator("#cloud details[open]").count() == 0  # one the reader left closed stays closed


@pytest.mark.parametrize("lang", LANGUAGES)
def test_on_a_phone_a_change_shows_its_verdict_in_sight(open_context, lang):
    """On one column the results are below the form: a change there updated them out of sight (the banner at y=1486
    on a 390 × 844 screen). The verdict the update announces shows at the foot of the screen, then goes."""
    page, _ = open_context(viewport={"width": 390, "height": 844})
    page.goto(report_path(lang))
    status = page.locator("#results-status")
    assert status.inner_text() == ""
    choose(page, "context", "131072", changes=figure(page, "required"))
    expect(status).not_to_be_empty()
    box = status.bounding_box()
    assert box and box["height"] > 10 and 0 <= box["y"] and box["y"] + box["height"] <= 844
    assert status.inner_text() == page.locator("#results .verdict-banner").inner_text().strip()
    expect(status).to_be_empty(timeout=8000)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_state_whose_request_failed_can_be_asked_for_again(page, lang):
    """A state is asked for once (test_a_typed_number_is_sent_once_and_pushed_once), unless its answer never came:
    then Enter asks again."""
    page.goto(report_path(lang))
    failed = []

    def drop_once(route):
        if not failed:
            failed.append(route.request.url)
            route.abort()
        else:
            route.continue_()

    page.route(re.compile(r".*hours=8(&|$).*"), drop_once)
    with page.expect_request(lambda request: "hours=8" in request.url):
        page.fill("#id_hours", "8")
    page.wait_for_timeout(500)
    assert failed
    with page.expect_response(lambda response: "hours=8" in response.url and response.ok):
        page.locator("#id_hours").press("Enter")
