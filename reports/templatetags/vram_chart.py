"""The VRAM chart's repeated marks and its table's rows (reports/report/_chart.html), each list written in one pass.

The chart's ticks, grid lines and points and the rows of the table under it are some 40 elements of four to seven
figures each; as {% for %} loops they were ~190 template nodes and their filters, ~1 ms of an uncached report. These
filters write the same markup from the chart (reports.charts.VramChart) and the page's context points with the same
formatting functions (fmt's |coordinate, |num, |ctx, |tokens, |gib, |at_least), escaped as the template escaped
them. tests/test_render_cost.py renders both and compares them.
"""

from __future__ import annotations

from django import template
from django.utils.html import conditional_escape
from django.utils.safestring import SafeString
from django.utils.translation import gettext

from reports.charts import VramChart
from reports.templatetags.fmt import at_least, ctx, gib, num, tokens

register = template.Library()


@register.filter
def y_grid(chart: VramChart) -> SafeString:
    """Each y tick: a grid line across the plot and its GiB label left of it."""
    left, right, label_x = format(chart.left, "d"), format(chart.plot_right, "d"), format(chart.left - 6, "d")
    marks = []
    for tick in chart.y_ticks:
        y = format(tick.position, ".1f")
        marks.append(f'<line class="grid" x1="{left}" x2="{right}" y1="{y}" y2="{y}"/><text class="tick" '
                     f'x="{label_x}" y="{y}" text-anchor="end" dominant-baseline="middle">'
                     f'{conditional_escape(num(tick.value))}</text>')
    return SafeString("".join(marks))


@register.filter
def x_labels(chart: VramChart) -> SafeString:
    """Each x tick's context label under the plot."""
    label_y = format(chart.label_y, "d")
    return SafeString("".join(
        f'<text class="tick" x="{format(tick.position, ".1f")}" y="{label_y}" text-anchor="middle">'
        f'{conditional_escape(ctx(tick.value))}</text>' for tick in chart.x_ticks))


def _verdict_words() -> tuple[str, str, str]:
    """Constant texts, written as they are translated, as {% translate %} writes them."""
    return gettext("tight"), gettext("fits"), gettext("does not fit")


@register.filter
def points(chart: VramChart) -> SafeString:
    """Each context's point, coloured by its verdict, its title the context, the GiB and the verdict."""
    tight, fits, does_not_fit = _verdict_words()
    marks = []
    for point in chart.points:
        if point.verdict == "tight":
            css, word = "tight", tight
        elif point.fits:
            css, word = "fit", fits
        else:
            css, word = "nofit", does_not_fit
        marks.append(f'<circle class="{css}" cx="{format(point.x, ".1f")}" cy="{format(point.y, ".1f")}" r="4"><title>'
                     f'{conditional_escape(ctx(point.context))}: {conditional_escape(num(point.gib, 2))} GiB, {word}'
                     f'</title></circle>')
    return SafeString("".join(marks))


@register.filter
def context_rows(page) -> SafeString:
    """The table's row for each of the page's context points (report.ReportPage.context_points): the context, the KV
    cache, the total and what the GPUs hold (lower bounds where the page's total is one), and the verdict, or why a
    context beyond the model's limit does not count as fitting."""
    tight, fits, does_not_fit = _verdict_words()
    lower_bound = page.total_lower_bound
    limit = None
    rows = []
    for point in page.context_points:
        if point.beyond_limit:
            if limit is None:  # {% blocktranslate with limit=… %} writes its value escaped
                limit = conditional_escape(tokens(page.model.max_context))
            text = (gettext("(the memory would hold it, but it is beyond the model's %(limit)s-token limit)")
                    if point.fits else gettext("(beyond the model's %(limit)s-token limit)"))
            verdict = f'<span aria-hidden="true">✗</span> {text % {"limit": limit}}'
        elif point.verdict == "tight":
            verdict = f'<span aria-hidden="true">!</span> {tight}'
        elif point.fits:
            verdict = f'<span aria-hidden="true">✓</span><span class="visually-hidden">{fits}</span>'
        else:
            verdict = f'<span aria-hidden="true">✗</span><span class="visually-hidden">{does_not_fit}</span>'
        rows.append(
            f'<tr><th scope="row">{conditional_escape(ctx(point.context))} '
            f'({conditional_escape(tokens(point.context))})</th><td class="num">{conditional_escape(gib(point.kv_bytes))}</td>'
            f'<td class="num">{conditional_escape(at_least(gib(point.required_bytes), lower_bound))}</td>'
            f'<td class="num">{conditional_escape(at_least(gib(point.gpu_bytes), lower_bound))}</td>'
            f'<td>{verdict}</td></tr>')
    return SafeString("".join(rows))
