"""The quantization matrix's rows (reports/report/_matrix.html), written in one pass.

A matrix has some 13 formats of eight cells each; as a {% for %} loop that was ~230 template nodes and their
filters, ~1 ms of an uncached report. ``matrix_rows`` writes the same markup from the page's rows
(report.ReportPage.matrix) with the same formatting functions (fmt's |gib, |gb, |at_least, |toks, labels'
|quant_quality and verdict_pill), escaped as the template escaped them. tests/test_render_cost.py renders both and
compares them.
"""

from __future__ import annotations

from django import template
from django.utils.html import conditional_escape
from django.utils.safestring import SafeString
from django.utils.translation import gettext

from reports.templatetags.fmt import at_least, gb, gib, toks
from reports.templatetags.labels import quant_quality, verdict_pill

register = template.Library()


@register.filter
def matrix_rows(page) -> SafeString:
    """Each format's row: weights, KV cache, total (GiB and GB), one stream's decode, the verdict here, the
    smallest accelerator that holds it on one GPU, and where the weights' size comes from."""
    model, lower_bound, upper_bound = page.model, page.total_lower_bound, page.speed_upper_bound
    # Constant texts are written as they are translated, as {% translate %} writes them.
    published_size, tensor_shapes = gettext("published size"), gettext("tensor shapes")
    rows = []
    for row in page.matrix:
        quality = quant_quality(row.quant, model)
        quality_html = f'<br><span class="muted quant-quality">{conditional_escape(quality)}</span>' if quality else ""
        decode = (conditional_escape(toks(row.decode_tok_s, upper_bound)) if row.runs
                  else gettext("does not run"))
        smallest = (f'<a href="{conditional_escape(row.smallest_fit_url)}">{conditional_escape(row.smallest_fit.name)}'
                    f'</a>' if row.smallest_fit else gettext("none (multi-GPU)"))
        if row.source == "published file size":
            source = published_size
        elif row.rule_from:  # {% blocktranslate with rule=… %}: its value escaped, the translation as it is
            source = gettext("≈ %(rule)s rules (size not published)") % {"rule": conditional_escape(row.rule_from)}
        elif row.source == "per-tensor rule":
            source = tensor_shapes
        else:
            source = gettext("estimated")
        current = ' class="current" aria-current="true"' if row.is_current else ""
        rows.append(
            f'\n      <tr{current}>\n'
            f'        <th scope="row">{conditional_escape(row.quant)}{quality_html}</th>\n'
            f'        <td class="num">{conditional_escape(gib(row.weights_bytes))}</td>\n'
            f'        <td class="num">{conditional_escape(gib(row.kv_bytes))}</td>\n'
            f'        <td class="num">{conditional_escape(at_least(gib(row.required_bytes), lower_bound))}<br>'
            f'<span class="muted">{conditional_escape(at_least(gb(row.required_bytes), lower_bound))}</span></td>\n'
            f'        <td class="num">{decode}</td>\n'
            f'        <td>{conditional_escape(verdict_pill(row.verdict))}</td>\n'
            f'        <td>{smallest}</td>\n'
            f'        <td>{source}</td>\n'
            f'      </tr>\n    ')
    return SafeString("".join(rows))
