"""What the model and hardware pages say agrees with the report and with itself: the memory-by-context table's
verdicts, lower-bound totals, the model table's format and notes, and the default accelerator."""

import html
import re

import pytest

pytestmark = pytest.mark.django_db

CHART_ROW = re.compile(r'<tr><th scope="row">[^<]*\(([\d,]+)\)</th>.*?</td><td>(.*?)</td></tr>', re.S)


def chart_marks(body: str) -> dict[int, str]:
    """Context → the memory-by-context table's mark: "tight", "fits", "does not fit" or "beyond"."""
    table = body.split('id="chart"', 1)[1].split("</table>", 1)[0]
    marks = {}
    for context, cell in CHART_ROW.findall(table):
        if "limit" in cell:
            mark = "beyond"
        else:
            mark = re.sub(r"<[^>]+>|[✓✗!]", " ", cell).split()
            mark = " ".join(mark)
        marks[int(context.replace(",", ""))] = mark
    return marks


def banner(body: str) -> str:
    return re.search(r'<section class="card fit verdict-(\w+)"', body).group(1)


def test_the_context_table_marks_a_tight_fit_as_the_report_does(client):
    """The table read "16K … 22.58 GiB ✓ fits" on the RTX 4090's 22.8 GiB, where ?context=16384 says "Tight
    headroom": each row carries the plan's own verdict (fit.verdict), as the report at that context gives it."""
    marks = chart_marks(client.get("/en/report/qwen3-32b/rtx-4090/").content.decode())
    assert marks[16384] == "tight"
    for context, mark in marks.items():
        if mark == "beyond":
            continue  # beyond the model's limit: the configurator refuses that context
        verdict = banner(client.get(f"/en/report/qwen3-32b/rtx-4090/?context={context}").content.decode())
        assert mark == {"tight": "tight", "fits": "fits", "unified": "fits", "exceeds": "does not fit"}[verdict], (
            context, mark, verdict)


def test_a_model_pages_context_table_agrees_with_its_verdict(client):
    """DeepSeek-R1-0528's page said "Tight headroom" above a table reading "8K … 377.54 GiB ✓ fits"."""
    body = client.get("/en/model/deepseek-r1-0528/").content.decode()
    assert banner(body) == "tight"
    assert chart_marks(body)[8192] == "tight"
    assert 'circle class="tight"' in body
