"""Reading the report page in a browser: its URL, the figures the tests compare, and waiting for htmx swaps.

The figures are found by the section ids and the order of the ``<dl class="stats">`` entries in the templates
(templates/reports/report/_fit.html, _speed.html, _cloud.html), so the selectors hold in both languages.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

from playwright.sync_api import Locator, Page, Response, expect

LANGUAGES = ["en", "de"]
MODEL = "llama-3-1-8b-instruct"
HARDWARE = "rtx-4090"

# (section, position of the entry in its <dl class="stats">) → the big figure of that entry
FIGURES = {
    "required": ("#fit", 1),
    "usable": ("#fit", 2),
    "headroom": ("#fit", 3),
    "decode": ("#speed", 1),
    "break_even": ("#cloud", 1),
    "power": ("#cloud", 3),
}

_NUMBER = re.compile(r"\d[\d.,\u00a0\u202f]*")


def report_path(lang: str, query: str = "", model: str = MODEL, hardware: str = HARDWARE) -> str:
    return f"/{lang}/report/{model}/{hardware}/" + (f"?{query}" if query else "")


def figure(page: Page, name: str) -> Locator:
    section, position = FIGURES[name]
    return page.locator(f"{section} .stats > div:nth-child({position}) > dd.big")


def figures(page: Page) -> dict[str, str]:
    return {name: figure(page, name).inner_text().strip() for name in FIGURES}


def number(text: str, lang: str) -> float:
    """The first number in a formatted figure: "21,38 GiB" (de) → 21.38, "$1,599" (en) → 1599."""
    match = _NUMBER.search(text)
    assert match, f"no number in {text!r}"
    digits = re.sub(r"[\u00a0\u202f]", "", match.group()).rstrip(".,")
    if lang == "de":
        digits = digits.replace(".", "").replace(",", ".")
    else:
        digits = digits.replace(",", "")
    return float(digits)


def months(text: str, lang: str) -> float:
    """A break-even in months: "~58.2 months" → 58.2, "~17 years" / "~17 Jahre" → 204."""
    value = number(text, lang)
    return value * 12 if re.search(r"\b(years|Jahre)\b", text) else value


def query(page: Page) -> dict[str, str]:
    """The page's query string as one value per key; a key repeated by a swap is a defect and fails here."""
    values = parse_qs(urlsplit(page.url).query, keep_blank_values=True)
    repeated = {key: found for key, found in values.items() if len(found) > 1}
    assert not repeated, f"the query string repeats {sorted(repeated)}: {page.url}"
    return {key: found[0] for key, found in values.items()}


def mark_document(page: Page) -> None:
    """A marker that only survives while no full page load happens."""
    page.evaluate("window.__sameDocument = true")


def still_same_document(page: Page) -> bool:
    return page.evaluate("window.__sameDocument === true")


def field_error(page: Page, field: str) -> Locator:
    """The message box beside a configurator field (in the same ``.field`` wrapper as the control)."""
    return page.locator(".field", has=page.locator(f"#id_{field}")).locator(".field-error")


def is_htmx(response: Response) -> bool:
    """The configurator's answer to a change (not the follow-up request for the longer sections, part=details)."""
    return response.request.headers.get("hx-request") == "true" and "part=details" not in response.url


def type_refused(page: Page, field: str, value: str) -> None:
    """Type a value the field refuses: htmx sends it (the forms leave the check to the server) and the answer puts
    the server's message beside the field in place of the results."""
    with page.expect_response(lambda response: response.request.headers.get("hx-request") == "true"
                              and "part=details" not in response.url):
        page.fill(f"#id_{field}", value)
    expect(field_error(page, field)).not_to_be_empty()
    expect(page.locator("#fit")).to_have_count(0)


def choose(page: Page, field: str, value: str, *, changes: Locator | None = None) -> str | None:
    """Select ``value`` in the configurator's ``field``, wait for the htmx swap and the pushed URL, and
    return the new text of ``changes`` after checking that the swap changed it."""
    before = changes.inner_text() if changes else None
    with page.expect_response(is_htmx):
        page.select_option(f"#id_{field}", value)
    expect(page).to_have_url(re.compile(rf"[?&]{re.escape(field)}={re.escape(value)}(&|$)"))
    if changes is None:
        return None
    expect(changes).not_to_have_text(before)
    return changes.inner_text()
