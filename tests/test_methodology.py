"""The methodology page: fresh accuracy snapshot, chart geometry, both languages, constants read from the engine."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest
from django.urls import reverse

from bench import accuracy as accuracy_bench
from bench import throughput_accuracy
from reports import formatting, methodology
from reports.sizing import throughput
from tests.test_deploy_settings import blocked_inline_code


# ------------------------------------------------------------------------------------------------- snapshot


def test_committed_accuracy_snapshot_equals_a_fresh_run_of_the_benchmarks():
    """The page must never show stale numbers: when the engine or bench/data changes, this fails until
    `.venv/bin/python bench/accuracy.py --json reports/data/accuracy.json` is run and the file committed."""
    assert accuracy_bench.SNAPSHOT_PATH == methodology.ACCURACY_PATH
    committed = methodology.load_snapshot()
    fresh = accuracy_bench.snapshot()
    for section in ("weights", "kv", "runtime", "speed"):
        assert committed[section]["summary"] == fresh[section]["summary"], (
            f"{section} summary is stale: run bench/accuracy.py --json reports/data/accuracy.json")
        assert committed[section]["rows"] == fresh[section]["rows"], (
            f"{section} rows are stale: run bench/accuracy.py --json reports/data/accuracy.json")
    assert committed == fresh


def test_snapshot_json_round_trips_exactly():
    """snapshot() holds only JSON types (no tuples, NaN or numpy floats), so file == fresh can hold at all."""
    fresh = accuracy_bench.snapshot()
    assert json.loads(json.dumps(fresh, allow_nan=False)) == fresh


def test_snapshot_rows_carry_predicted_and_measured_values():
    snapshot = methodology.load_snapshot()
    weights = snapshot["weights"]["rows"]
    scored = [r for r in weights if r["error"] is not None]
    assert len(scored) == snapshot["weights"]["summary"]["scored"]
    for row in scored:
        # error = (predicted - published) / published, to the snapshot's 12 significant digits
        expected = (row["predicted_bytes"] - row["published_bytes"]) / row["published_bytes"]
        assert row["error"] == pytest.approx(expected, abs=1e-10)
    speed = snapshot["speed"]["rows"]
    assert all(r["source"] for r in speed)
    scored_speed = [r for r in speed if r["scored"]]
    assert len(scored_speed) == snapshot["speed"]["summary"]["decode_rows"] + snapshot["speed"]["summary"]["prefill_rows"]


def test_summaries_are_the_snapshot_figures_split_by_metric():
    page = methodology.accuracy()
    snapshot = methodology.load_snapshot()
    assert page.summary("weights").median_abs_error == snapshot["weights"]["summary"]["median_abs_error"]
    assert page.summary("vllm_kv_tokens").scored == snapshot["runtime"]["summary"]["vllm_kv_tokens"]["scored"]
    decode = page.summary("decode")
    decode_rows = [r for r in snapshot["speed"]["rows"] if r["test"].startswith("tg")]
    assert decode.scored == sum(r["scored"] for r in decode_rows)
    assert decode.scored + decode.unscored == len(decode_rows)
    assert decode.max_abs_error == max(abs(r["error"]) for r in decode_rows if r["scored"])
    assert decode.target == throughput_accuracy.DECODE_TARGET
    assert page.summary("prefill").target == throughput_accuracy.PREFILL_TARGET


@pytest.mark.parametrize("section, lines", [
    ("runtime", ("llama_cpp_buffers", "llama_cpp_dsv4_compute", "vllm_kv_tokens", "vllm_quantized_moe")),
])
def test_a_tables_summary_lines_add_up_to_the_table(section, lines):
    """"Runtime memory: 100 rows" was summed up by lines covering 74: the 21 skipped vLLM rows counted nowhere (the
    vLLM line said 0 unscored) and four scored rows in no line (Qwen3-235B FP8 at +5.34 % above that line's
    "max 3.9 %")."""
    page = methodology.accuracy()
    rows = methodology.load_snapshot()[section]["rows"]
    summaries = [page.summary(key) for key in lines]
    assert sum(s.scored + s.unscored for s in summaries) == len(rows)
    assert sum(s.scored for s in summaries) == sum(r["error"] is not None for r in rows)
    assert max(s.max_abs_error for s in summaries) == max(abs(r["error"]) for r in rows if r["error"] is not None)


# ---------------------------------------------------------------------------------------------- chart geometry


def test_log_scatter_maps_decades_onto_a_square_with_the_diagonal_corner_to_corner():
    # values 1.87 .. 282 → whole decades 10^0 .. 10^3 (span 3) over a 420 px square at left 64, top 12:
    # 10 is one decade of three → offset 140 px → x = 64 + 140 = 204, y = 12 + 420 - 140 = 292.
    chart = methodology.log_scatter({"weights": [("a", 1.87, 2.0, 0.07), ("b", 282.0, 10.0, -0.96)]}, size=420)
    assert (chart.left, chart.top, chart.plot_size) == (64, 12, 420)
    assert chart.diagonal == (64.0, 432.0, 484.0, 12.0)
    ten = next(t for t in chart.ticks if t.value == 10)
    assert (ten.x, ten.y) == (204.0, 292.0)
    point = chart.series[0].points[1]  # measured 282 → x = 64 + log10(282)/3 × 420 = 64 + 343.1; predicted 10 → y 292
    assert point.x == round(64 + 2.4502491083193609 / 3 * 420, 1)
    assert point.y == 292.0
    # span ≤ 3 decades: 1-2-5 ticks from 1 to 1000 = 3 × 3 + 1 = 10 ticks
    assert [t.value for t in chart.ticks] == [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]


def test_log_scatter_over_many_decades_ticks_only_decades_and_draws_the_band():
    # 7.9 .. 12,000 tok/s → 10^0 .. 10^5 (span 5): decade ticks only.
    chart = methodology.log_scatter({"decode": [("x", 7.9, 8.4, 0.06)], "prefill": [("y", 12000.0, 11000.0, -0.08)]},
                                    band=0.2, size=500)
    assert [t.value for t in chart.ticks] == [1, 10, 100, 1000, 10000, 100000]
    upper, lower = chart.band
    # y = 1.2 x starts at (1, 1.2): x = left, y = top + 500 - log10(1.2)/5 × 500 = 12 + 500 - 7.918 = 504.1
    assert upper[:2] == (64.0, 504.1)
    # y = 0.8 x ends at (10^5, 0.8 × 10^5): y = 12 + 500 - (5 + log10 0.8)/5 × 500 = 12 + 9.691 = 21.7
    assert lower[2:] == (564.0, 21.7)
    assert [s.key for s in chart.series] == ["decode", "prefill"]


# ------------------------------------------------------------------------------------------------- constants


def test_engine_constants_are_read_from_the_modules_not_retyped(monkeypatch):
    """A changed constant shows up on the page: the layer overhead of CUDA set to 987 µs is printed."""
    monkeypatch.setitem(throughput.CALIBRATION, "cuda", replace(throughput.CALIBRATION["cuda"], layer_overhead_s=987e-6))
    constants = methodology.engine_constants(methodology.accuracy().fitted_parameters)
    cuda = next(row for row in constants.calibration if row.backend == "cuda")
    assert cuda.layer_overhead_us == pytest.approx(987)
    assert cuda.borrowed == ()  # every CUDA constant is fitted on CUDA rows


def test_borrowed_constants_are_the_ones_the_fit_does_not_determine():
    fitted = frozenset({"vulkan.bandwidth_efficiency", "vulkan.layer_overhead_us", "vulkan.compute_efficiency"})
    rows = {row.backend: row for row in methodology.engine_constants(fitted).calibration}
    assert rows["vulkan"].borrowed == ("moe_layer_overhead_factor", "gemm_half_width")
    assert len(rows["other"].borrowed) == 5  # no rows at all: everything from Vulkan


def test_percent_filter_takes_decimals_in_the_locale_pattern():
    assert formatting.percent(0.0134, "en", 2) == "1.34%"
    assert formatting.percent(0.0134, "de", 2) == "1,34\xa0%"
    assert formatting.percent(0.0134, "de") == "1\xa0%"


# ---------------------------------------------------------------------------------------------------- page


@pytest.fixture
def page_html(client):
    def get(language: str) -> str:
        url = reverse("reports:methodology").replace("/en/", f"/{language}/", 1)
        response = client.get(url)
        assert response.status_code == 200
        assert blocked_inline_code(response) == []
        return response.content.decode()
    return get


@pytest.mark.parametrize("language", ["en", "de"])
def test_page_renders_the_medians_in_the_visitors_locale(page_html, language):
    html = page_html(language)
    assert f'<html lang="{language}">' in html
    for summary in methodology.accuracy().summaries:
        median = formatting.percent(summary.median_abs_error, language, 2)
        assert re.search(rf'<tr id="summary-{summary.key}">.*?{re.escape(median)}', html, re.S), summary.key
    decode = methodology.accuracy().summary("decode").median_abs_error
    other = "de" if language == "en" else "en"
    assert formatting.percent(decode, other, 2) not in html  # 3.10% is English, 3,10 % German


@pytest.mark.parametrize("language", ["en", "de"])
def test_page_has_both_scatter_plots_with_every_scored_row(page_html, language):
    html = page_html(language)
    assert html.count('<svg class="chart scatter"') == 2
    snapshot = methodology.load_snapshot()
    scored = (sum(r["error"] is not None for r in snapshot["weights"]["rows"])
              + sum(r["scored"] for r in snapshot["speed"]["rows"]))
    assert html.count("<circle ") == scored
    assert 'class="diagonal"' in html and 'class="band"' in html


def test_svg_coordinates_are_not_localized(page_html):
    """German decimal commas inside SVG attributes would break the drawing."""
    html = page_html("de")
    svg = html[html.index('<svg class="chart scatter"'):html.rindex("</svg>")]
    assert not re.search(r'(?:cx|cy|x1|x2|y1|y2|x|y)="[^"]*,', svg)


def test_text_alternative_lists_every_row_in_details(page_html):
    html = page_html("en")
    details = re.findall(r'<details class="accuracy-rows">(.*?)</details>', html, re.S)
    assert len(details) == 4
    snapshot = methodology.load_snapshot()
    for block, section in zip(details, ("weights", "kv", "runtime", "speed")):
        assert block.count("<tr") - 1 == len(snapshot[section]["rows"]), section  # minus the header row


def test_page_shows_the_fitted_constants_and_the_sources(page_html):
    html = page_html("de")
    metal = throughput.CALIBRATION["metal"]
    row = re.search(r"<th scope=\"row\">metal</th>(.*?)</tr>", html, re.S).group(1)
    assert formatting.percent(metal.bandwidth_efficiency, "de") in row
    assert formatting.number(metal.layer_overhead_s * 1e6, "de") in row
    assert 'href="https://github.com/ggml-org/llama.cpp/blob/007dbbf/src/llama-quant.cpp"' in html
    assert 'href="https://arxiv.org/abs/2305.14314"' in html


def test_methodology_page_answers_get_only(client):
    assert client.post(reverse("reports:methodology")).status_code == 405


def test_vllm_prefill_paragraph_figures_come_from_the_snapshot_rows():
    rows = tuple(methodology.load_snapshot()["vllm_prefill"]["rows"])
    fit = methodology.vllm_prefill_fit(rows)
    fit_rows = sorted((r for r in rows if r["role"] == "fit"), key=lambda r: r["prompt_tokens"])
    assert (fit.shortest_prompt, fit.longest_prompt) == (fit_rows[0]["prompt_tokens"], fit_rows[-1]["prompt_tokens"])
    assert (fit.error_at_shortest, fit.error_at_longest) == (fit_rows[0]["error"], fit_rows[-1]["error"])
    # Other publications: four rows of the fit's own model and GPU, two independent ones (AWQ on an A100, a
    # four-GPU MoE), listed worst last.
    assert fit.same_setup_checks == 4
    assert [(r["model"], r["accelerator"]) for r in fit.independent_checks] == [
        ("qwen3-14b", "a100-80gb-sxm"), ("qwen3-235b-a22b-instruct-2507", "rtx-pro-6000-blackwell")]


def test_signed_percentages_read_as_errors():
    from django.utils import translation

    from reports.templatetags.fmt import signed_pct
    with translation.override("de"):
        assert (signed_pct(0.106), signed_pct(-0.46), signed_pct(0.0004)) == ("+11\xa0%", "-46\xa0%", "0\xa0%")  # Babel: no-break space before %


@pytest.mark.parametrize("language, skipped, published", [("en", "skipped: ", "published size used: "),
                                                          ("de", "übersprungen: ", "veröffentlichte Größe verwendet: ")])
def test_row_notes_say_their_status_in_the_page_language(page_html, language, skipped, published):
    """Benchmark notes like "skipped: no KV token figure in the log": the status word in the visitor's language,
    the benchmark's detail marked English."""
    html = page_html(language)
    assert f'<td>{skipped}<span lang="en">no KV token figure in the log</span></td>' in html
    assert f'<td>{published}<span lang="en">unsloth dynamic quant:' in html
    excluded = {"en": "excluded", "de": "ausgeschlossen"}[language]
    figure = {"en": "-6.6", "de": "-6,6"}[language]  # the visitor's number format
    assert f'<td>{excluded} ({figure} %): <span lang="en">Google QAT export' in html
    if language == "de":
        assert ">skipped: " not in html


@pytest.mark.parametrize("language", ["en", "de"])
def test_vllm_decode_is_checked_against_other_publications(page_html, language):
    """vLLM's decode borrows llama.cpp's calibration; the page states how far that lands from single-request vLLM
    measurements (bench/data/vllm_decode.csv), with the snapshot's figures, and lists every row."""
    from bench import vllm_decode_accuracy

    section = methodology.load_snapshot()["vllm_decode"]
    summary = section["summary"]
    assert summary["scored"] >= 7 and len(section["rows"]) == len(vllm_decode_accuracy.load())
    assert summary["dense_max_abs_error"] <= 0.10  # dense models on NVIDIA: the borrowed calibration holds
    html = page_html(language)
    median = formatting.percent(summary["median_abs_error"], language, 1)
    assert re.search(rf'{re.escape(median)}', html)
    assert html.count('<td>sariekr-') == 3 and "bench/data/vllm_decode.csv" in html


def test_both_vllm_check_tables_name_models_and_accelerators(page_html):
    """One row partial for both vLLM check tables: the time-to-first-token table showed slugs
    ("h100-80gb-sxm", "llama-3-1-8b-instruct") where the decode table showed names."""
    html = page_html("en")
    assert '<th scope="row">1 × H100 80GB SXM</th><td>Llama 3.1 8B Instruct</td>' in html
    assert '<th scope="row">1 × H100 80GB SXM</th><td>Qwen3 8B</td>' in html
    assert "<td>llama-3-1-8b-instruct</td>" not in html


def test_long_labels_are_cut_at_a_word_with_an_ellipsis():
    from bench.kv_runtime_accuracy import clipped

    assert clipped("llama.cpp GLM-4-0414 32B (from PR title; 61+1 layers)", 44) == "llama.cpp GLM-4-0414 32B (from PR title…"
    assert clipped("short", 44) == "short"
    assert all(len(clipped("word " * 30, n)) <= n for n in (10, 40, 44))


def test_every_methodology_table_has_an_accessible_name(client):
    import re as re_module
    body = client.get("/en/methodology/").content.decode()
    for table in re_module.findall(r"<table[^>]*>.*?</table>", body, re_module.S):
        opening = table[:table.index(">") + 1]
        assert "aria-labelledby" in opening or "<caption" in table, opening


def test_the_methodology_describes_the_rent_comparison_and_the_cost_depth_the_reports_use(client):
    """It said rent vs. buy takes "the one with the smallest monthly bill" of all offers; the reports rent the same
    accelerator × count where an offer exists and otherwise compare the same tokens (economics.rent_comparison),
    and price a token at half the context cached (estimate.cost_depth) and a prompt token at the prefill speed."""
    text = re.sub(r"\s+", " ", client.get("/en/methodology/").content.decode())
    assert "Rent vs. buy rents what you would buy: the same accelerator in the same count" in text
    assert "local tokens per second ÷ the offer's tokens per second for every hour of local use" in text
    assert "That speed is taken with half the context cached in every stream." in text
    assert "A prompt (input) token is priced the same way at the offer's own prefill speed." in text
    assert "usable memory under vLLM is the budget plus the device context" in text
