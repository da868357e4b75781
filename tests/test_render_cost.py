"""What a report page repeats is made once: the labels of its cloud offers and verdicts are translated once per
(text, language), not once a row; cached, they still follow the language and what the offer says."""

import datetime as dt
from unittest import mock

import pytest
from django.utils import translation

from reports.sizing.specs import CloudOfferSpec
from reports.templatetags import fmt, labels

OFFER = CloudOfferSpec(provider="RunPod", instance="1x RTX 4090 (Verified Host)", accelerator_slug="rtx-4090",
                       gpu_count=1, hourly_usd=0.34, billing="per-second", verified="2026-05-03")


def _translations(call):
    """How many gettext lookups `call` makes (through django.utils.translation, as the filters do)."""
    with mock.patch("django.utils.translation._trans.gettext", wraps=translation._trans.gettext) as spy:
        call()
    return spy.call_count


@pytest.mark.parametrize("label", [
    lambda: fmt.verified_label(OFFER), lambda: labels.billing_label(OFFER.billing),
    lambda: labels.offer_instance(OFFER.instance), lambda: labels.verdict_pill("fits"),
    lambda: labels.segment_label("weights"),
])
def test_a_repeated_label_is_translated_once_per_language(label):
    with translation.override("de"):
        label()
        assert _translations(label) == 0
    with translation.override("en"):
        assert _translations(label) <= 2  # first in English: its own lookups
        assert _translations(label) == 0


def test_cached_labels_follow_the_language():
    for _round in range(2):  # the second round reads the cache
        with translation.override("de"):
            assert fmt.verified_label(OFFER) == "geprüft am 03.05.2026"
            assert labels.billing_label("per-second") == "pro Sekunde"
            assert labels.offer_instance(OFFER.instance) == "1x RTX 4090 (Verifizierter Host)"
            assert "verdict-fits" in labels.verdict_pill("fits") and ">passt<" in labels.verdict_pill("fits")
        with translation.override("en"):
            assert fmt.verified_label(OFFER) == "verified May 3, 2026"
            assert labels.billing_label("per-second") == "per second"
            assert labels.offer_instance(OFFER.instance) == "1x RTX 4090 (Verified Host)"
            assert labels.verdict_pill("fits") == '<span class="verdict-pill verdict-fits">fits</span>'


@pytest.mark.django_db
def test_an_edited_offer_row_shows_its_new_date():
    """The cache is keyed on the date and its precision, not on the row: an admin edit shows at once."""
    from catalog.models import CloudOffer

    offer = CloudOffer.objects.get(provider="RunPod", accelerator__slug="rtx-4090", gpu_count=1)
    with translation.override("en"):
        assert fmt.verified_on(offer) == "March 2026"
        offer.verified, offer.verified_precision = dt.date(2026, 4, 9), "day"
        assert fmt.verified_on(offer) == "Apr 9, 2026"
        offer.price_doubt = "the provider's page shows another rate"
        assert fmt.verified_on(offer) == "rate not confirmed by its source"


@pytest.mark.django_db
def test_the_format_list_labels_each_format_as_one_label_would():
    """quant_option_labels looks the released format and the language up once for the list: the same options."""
    from reports.estimates import current_catalog
    from reports.quant_labels import quant_option_label, quant_option_labels

    _, catalog = current_catalog()
    names = ["BF16", "FP8", "Q8_0", "Q4_K_M", "IQ4_XS", "UD-Q2_K_XL", "MXFP4_MOE", "unknown"]
    for slug in ("qwen3-30b-a3b-instruct-2507", "gpt-oss-20b"):
        model = catalog.model(slug)
        for language in ("en", "de"):
            with translation.override(language):
                assert quant_option_labels(names, model) == [(n, quant_option_label(n, model=model)) for n in names]
    with translation.override("de"):
        assert quant_option_labels(["Q4_K_M"]) == [("Q4_K_M", "Q4_K_M (4 Bit – empfohlen)")]


def test_the_limits_messages_follow_the_language():
    from reports.forms import ConfiguratorForm

    def messages(language):
        with translation.override(language):
            form = ConfiguratorForm({"hours": "0.1", "kwh": "9"}, quant_names=["Q4_K_M"], max_context=None,
                                    default_budget=None)
            form.is_valid()
            return form.errors["hours"][0], form.errors["kwh"][0]

    for _round in range(2):
        assert messages("en") == ("Ensure this value is greater than or equal to 0.5.",
                                  "Ensure this value is less than or equal to 5.")
        assert messages("de") == ("Dieser Wert muss größer oder gleich 0,5 sein.",
                                  "Dieser Wert muss kleiner oder gleich 5 sein.")


def test_figures_are_marked_safe_only_when_html_escapes_nothing_in_them():
    """A template writes a safe figure as it is (no escaping pass per figure); one with "<" is escaped as before, and
    an escaped label is not escaped twice."""
    from django.template import Context, Template
    from django.utils.safestring import SafeData

    with translation.override("de"):
        assert isinstance(fmt.num(1234.5, 1), SafeData) and fmt.num(1234.5, 1) == "1.234,5"
        assert isinstance(fmt.usd(1599), SafeData) and isinstance(fmt.gib(3 * 2**30), SafeData)
        assert isinstance(fmt.num(None), SafeData)  # "nicht veröffentlicht"
        assert not isinstance(fmt.gib(1024), SafeData)  # "<0,01 GiB"
        html = Template("{% load fmt labels %}{{ tiny|gib }} {{ billing|billing_label }} {{ key|segment_label }}").render(
            Context({"tiny": 1024, "billing": "spot & <reserved>", "key": "kv"}))
    assert html == "&lt;0,01 GiB spot &amp; &lt;reserved&gt; KV-Cache &amp; Zustand"


@pytest.mark.parametrize("value, spec", [(152.94, ".1f"), (16.0, ".1f"), (-0.04, ".1f"), (50, ".1f"), (56, "d"),
                                         (-6, "d"), (1024, "d")])
def test_a_chart_coordinate_is_what_stringformat_wrote_and_needs_no_escaping(value, spec):
    from django.template.defaultfilters import stringformat
    from django.utils.safestring import SafeData

    for language in ("en", "de"):  # SVG coordinates are not localized
        with translation.override(language):
            text = fmt.coordinate(value, spec)
            assert text == stringformat(value, spec) and isinstance(text, SafeData)


def test_an_offers_verified_label_comes_escaped_once_from_its_cache():
    """The cloud table writes it in each of some 30 rows: escaped with the cached label, not by the template each
    time. Safe text, with what HTML escapes escaped (a doubted rate's label as well)."""
    from django.utils.safestring import SafeData

    doubted = CloudOfferSpec(provider="X", instance="y", accelerator_slug="rtx-4090", gpu_count=1, hourly_usd=1.0,
                             billing="hourly", verified="2026-05-03", price_doubt="<no source>")
    for language in ("en", "de"):
        with translation.override(language):
            for offer in (OFFER, doubted):
                label = fmt.verified_label(offer)
                assert isinstance(label, SafeData) and "<" not in label
            assert fmt.verified_label(OFFER).startswith("verified" if language == "en" else "geprüft")


def test_a_lower_bound_keeps_a_figure_safe_and_leaves_one_that_needs_escaping_to_the_template():
    from django.utils.safestring import SafeData

    with translation.override("en"):
        bound = fmt.at_least(fmt.gib(3 * 2**30), True)
        assert bound == "≥ 3.00 GiB" and isinstance(bound, SafeData)
        tiny = fmt.at_least(fmt.gib(1), True)
        assert tiny == "≥ <0.01 GiB" and not isinstance(tiny, SafeData)
        assert fmt.at_least(fmt.gib(3 * 2**30), False) == "3.00 GiB"


# The cloud table's row before offer_texts, and with it: the same markup for every kind of offer, in both languages.
_ROW_BY_FILTERS = (
    "{{ offer.provider }}|{{ offer.instance|offer_instance }}|{{ offer.hourly_usd|usd }}|"
    "{% if offer.billed_hours_per_day %}reserved{% endif %}|{{ offer.billing|billing_label }}|"
    "{{ offer|verified_label }}|{% if offer.url %}{{ offer.url }}{% endif %}")
_ROW_BY_TEXTS = (
    "{% with offer=offer|offer_texts %}{{ offer.provider }}|{{ offer.instance }}|{{ offer.hourly }}|"
    "{% if offer.reserved %}reserved{% endif %}|{{ offer.billing }}|{{ offer.verified }}|"
    "{% if offer.url %}{{ offer.url }}{% endif %}{% endwith %}")
_OFFERS = [
    OFFER,
    CloudOfferSpec(provider="A & B <Cloud>", instance="8x H100 on-demand, \"marketplace\"", accelerator_slug="h100",
                   gpu_count=8, hourly_usd=1234.5, billing="reserved", verified="2026-03-01",
                   verified_month_only=True, url="https://example.com/?a=1&b='2'"),
    CloudOfferSpec(provider="Vast.ai", instance="8x A100", accelerator_slug="a100", gpu_count=8, hourly_usd=3.54,
                   billing="", verified="2026-01-20", price_doubt="below every A100 spot rate", url=""),
    CloudOfferSpec(provider="X", instance="Custom plan", accelerator_slug="a100", gpu_count=1, hourly_usd=0.004,
                   billing="weekly", verified=""),
]


@pytest.mark.parametrize("language", ["en", "de"])
@pytest.mark.parametrize("offer", _OFFERS)
def test_an_offers_texts_render_what_its_filters_render(offer, language):
    from django.template import engines

    def render(source):
        template = engines["django"].from_string("{% load fmt labels %}" + source)
        with translation.override(language):
            return template.render({"offer": offer})

    for _round in range(2):  # the second round reads the cache
        assert render(_ROW_BY_TEXTS) == render(_ROW_BY_FILTERS)


# The cloud table's row as the partial of reports/report/_cloud.html wrote it before fmt.offer_row.
_OFFER_ROW_PARTIAL = """{% load i18n fast_i18n fmt labels %}{% with offer=row.offer|offer_texts %}<tr>
        <th scope="row">{{ offer.provider }}<br><span class="muted">{{ offer.instance }}</span></th>
        <td class="num">{{ row.total_memory_gb|num }} GB</td><td class="num">{{ offer.hourly }}</td>
        <td class="num">{{ row.monthly_usd|usd }}{% if offer.reserved %}<br><span class="muted">{% translate "reserved: 24 h/day" %}</span>{% endif %}</td>
        <td>{{ offer.billing }}<br><span class="muted">{{ offer.verified }}</span></td>
        <td>{% if offer.url %}<a href="{{ offer.url }}" rel="noopener external nofollow">{{ deploy }} ↗</a>{% endif %}</td>
      </tr>{% endwith %}"""


@pytest.mark.parametrize("language", ["en", "de"])
@pytest.mark.parametrize("offer", _OFFERS)
def test_an_offer_row_is_what_the_partial_wrote(offer, language):
    """fmt.offer_row writes the cloud table's row as the template partial it replaced: each kind of offer (reserved,
    without a link, with text HTML escapes), a memory and a bill that are figures, and one that is not published."""
    from django.template import engines

    from reports.report import OfferRow

    partial = engines["django"].from_string(_OFFER_ROW_PARTIAL)
    by_filter = engines["django"].from_string("{% load i18n fast_i18n fmt %}{% translate \"Deploy\" as deploy %}"
                                              "{{ row|offer_row:deploy }}")
    for row in (OfferRow(offer, None, 1536.0, 2_345.678, True), OfferRow(offer, None, 24.5, "", True)):
        with translation.override(language):
            deploy = translation.gettext("Deploy")
            assert by_filter.render({"row": row}) == partial.render({"row": row, "deploy": deploy})


# The VRAM chart's loops in reports/report/_chart.html before the vram_chart filters.
_CHART_LOOPS = (
    '{% load i18n fast_i18n fmt %}{% translate "fits" as fits %}{% translate "does not fit" as does_not_fit %}'
    '{% translate "tight" as tight %}{% with left=c.left|coordinate:"d" right=c.plot_right|coordinate:"d" %}'
    + '{% with label_x=c.left|add:-6|coordinate:"d" %}{% for t in c.y_ticks %}{% with y=t.position|coordinate %}<line class="grid" x1="{{ left }}" x2="{{ right }}" y1="{{ y }}" y2="{{ y }}"/><text class="tick" x="{{ label_x }}" y="{{ y }}" text-anchor="end" dominant-baseline="middle">{{ t.value|num }}</text>{% endwith %}{% endfor %}{% endwith %}'
    + "|" + '{% with label_y=c.label_y|coordinate:"d" %}{% for t in c.x_ticks %}<text class="tick" x="{{ t.position|coordinate }}" y="{{ label_y }}" text-anchor="middle">{{ t.value|ctx }}</text>{% endfor %}{% endwith %}'
    + "|" + '{% for p in c.points %}<circle class="{% if p.verdict == "tight" %}tight{% elif p.fits %}fit{% else %}nofit{% endif %}" cx="{{ p.x|coordinate }}" cy="{{ p.y|coordinate }}" r="4"><title>{{ p.context|ctx }}: {{ p.gib|num:2 }} GiB, {% if p.verdict == "tight" %}{{ tight }}{% elif p.fits %}{{ fits }}{% else %}{{ does_not_fit }}{% endif %}</title></circle>{% endfor %}'
    + "|{% endwith %}" + '<tbody>{% for p in page.context_points %}<tr><th scope="row">{{ p.context|ctx }} ({{ p.context|tokens }})</th><td class="num">{{ p.kv_bytes|gib }}</td><td class="num">{{ p.required_bytes|gib|at_least:page.total_lower_bound }}</td><td class="num">{{ p.gpu_bytes|gib|at_least:page.total_lower_bound }}</td><td>{% if p.beyond_limit %}<span aria-hidden="true">✗</span> {% if p.fits %}{% blocktranslate with limit=page.model.max_context|tokens %}(the memory would hold it, but it is beyond the model\'s {{ limit }}-token limit){% endblocktranslate %}{% else %}{% blocktranslate with limit=page.model.max_context|tokens %}(beyond the model\'s {{ limit }}-token limit){% endblocktranslate %}{% endif %}{% elif p.verdict == "tight" %}<span aria-hidden="true">!</span> {{ tight }}{% elif p.fits %}<span aria-hidden="true">✓</span><span class="visually-hidden">{{ fits }}</span>{% else %}<span aria-hidden="true">✗</span><span class="visually-hidden">{{ does_not_fit }}</span>{% endif %}</td></tr>{% endfor %}</tbody>')
_CHART_FILTERS = "{% load vram_chart %}{{ c|y_grid }}|{{ c|x_labels }}|{{ c|points }}|<tbody>{{ page|context_rows }}</tbody>"


@pytest.mark.parametrize("language", ["en", "de"])
def test_the_vram_charts_marks_and_rows_are_what_its_loops_wrote(language):
    """vram_chart's filters write the chart's ticks, points and table rows as the loops they replaced: every verdict,
    a KV cache that is not known, lower bounds, and both reasons a context beyond the model's limit is refused."""
    from types import SimpleNamespace

    from django.template import engines

    from reports.charts import vram_chart
    from reports.report import ContextPoint

    gib = 2**30
    points = [ContextPoint(4096, 9.5 * gib, 0.5 * gib, 9.5 * gib, "fits"),
              ContextPoint(32768, 23.1 * gib, None, 23.1 * gib, "tight"),
              ContextPoint(65536, 30.2 * gib, 12.0 * gib, 30.2 * gib, "unified", beyond_limit=True),
              ContextPoint(131072, 1234.567 * gib, 1000.0 * gib, 1234.567 * gib, "exceeds", beyond_limit=True),
              ContextPoint(68864, 1024.0, 0.0, 1024.0, "exceeds")]
    chart = vram_chart([(p.context, p.gpu_bytes / gib, p.verdict) for p in points], 24.0)
    for lower_bound in (False, True):
        page = SimpleNamespace(context_points=points, total_lower_bound=lower_bound,
                               model=SimpleNamespace(max_context=40960))
        with translation.override(language):
            loops = engines["django"].from_string(_CHART_LOOPS).render({"c": chart, "page": page})
            filters = engines["django"].from_string(_CHART_FILTERS).render({"c": chart, "page": page})
        assert filters == loops
        limit = "40,960" if language == "en" else "40.960"  # the model's limit, in both beyond-limit reasons
        assert loops.count("<circle") == 5 and loops.count("<tr>") == 5 and loops.count(f"{limit}") == 2


# The quantization matrix's loop in reports/report/_matrix.html before quant_matrix.matrix_rows.
_MATRIX_LOOP = (
    '{% load i18n fast_i18n fmt labels %}{% translate "published size" as published_size %}'
    '{% translate "tensor shapes" as tensor_shapes %}' + '{% with model=page.model lower_bound=page.total_lower_bound upper_bound=page.speed_upper_bound %}{% for row in page.matrix %}\n      <tr{% if row.is_current %} class="current" aria-current="true"{% endif %}>\n        <th scope="row">{{ row.quant }}{% with quality=row.quant|quant_quality:model %}{% if quality %}<br><span class="muted quant-quality">{{ quality }}</span>{% endif %}{% endwith %}</th>\n        <td class="num">{{ row.weights_bytes|gib }}</td>\n        <td class="num">{{ row.kv_bytes|gib }}</td>\n        <td class="num">{{ row.required_bytes|gib|at_least:lower_bound }}<br><span class="muted">{{ row.required_bytes|gb|at_least:lower_bound }}</span></td>\n        <td class="num">{% if row.runs %}{{ row.decode_tok_s|toks:upper_bound }}{% else %}{% translate "does not run" %}{% endif %}</td>\n        <td>{% verdict_pill row.verdict %}</td>\n        <td>{% if row.smallest_fit %}<a href="{{ row.smallest_fit_url }}">{{ row.smallest_fit.name }}</a>{% else %}{% translate "none (multi-GPU)" %}{% endif %}</td>\n        <td>{% if row.source == "published file size" %}{{ published_size }}{% elif row.rule_from %}{% blocktranslate with rule=row.rule_from %}≈ {{ rule }} rules (size not published){% endblocktranslate %}{% elif row.source == "per-tensor rule" %}{{ tensor_shapes }}{% else %}{% translate "estimated" %}{% endif %}</td>\n      </tr>\n    {% endfor %}{% endwith %}')


@pytest.mark.parametrize("language", ["en", "de"])
def test_the_matrix_rows_are_what_its_loop_wrote(language):
    """quant_matrix.matrix_rows writes the matrix as the loop it replaced: the current row, a format with a quality
    word, every source of the weights' size, a format that does not run, no smallest fit, bounds on both figures, and
    text HTML escapes (an accelerator name and a URL)."""
    from types import SimpleNamespace

    from django.template import engines

    from reports.report import MatrixRow
    from reports.sizing.specs import HardwareSpec

    gib = 2**30
    card = HardwareSpec(slug="x", name="RTX <A&B>", vendor="NVIDIA", memory_gb=24, bandwidth_gbs=1008)
    rows = [MatrixRow("Q4_K_M", True, 17.3 * gib, 2.5 * gib, 21.0 * gib, "fits", 165.4, card, "/en/r/?a=1&b=2",
                      "per-tensor rule"),
            MatrixRow("Q8_0", False, 30.1 * gib, None, 33.0 * gib, "exceeds", 0.0, None, "", "published file size",
                      runs=False),
            MatrixRow("UD-Q2_K_XL", False, 11.0 * gib, 2.5 * gib, 14.0 * gib, "tight", 210.0, card, "/en/r/",
                      "per-tensor rule", rule_from="Q2_K"),
            MatrixRow("MXFP4", False, 1024.0, 0.0, 2048.0, "unified", 12345.6, None, "",
                      "stated parameters × format bpw (estimated)")]
    for lower_bound, upper_bound in ((False, False), (True, True)):
        page = SimpleNamespace(matrix=rows, model=None, total_lower_bound=lower_bound, speed_upper_bound=upper_bound)
        with translation.override(language):
            loop = engines["django"].from_string(_MATRIX_LOOP).render({"page": page})
            written = engines["django"].from_string("{% load quant_matrix %}{{ page|matrix_rows }}").render(
                {"page": page})
        assert written == loop
        assert loop.count("<tr") == 4 and "RTX &lt;A&amp;B&gt;" in loop and "a=1&amp;b=2" in loop


# reports/_field.html, the template site.field_group replaced (its file ended with a newline).
_FIELD_TEMPLATE = """<div class="field field-{{ field.name }}{% if field.errors %} has-error{% endif %}">
  <label for="{{ field.id_for_label }}">{{ field.label }}</label>
  {{ field }}
  <div id="{{ field.auto_id }}_error" class="field-error" role="alert">{% for error in field.errors %}{{ error }} {% endfor %}</div>
</div>
"""


@pytest.mark.parametrize("language", ["en", "de"])
@pytest.mark.parametrize("data", [None, {}, {"name": "<b>&", "count": "x", "kind": "nope", "notes": "a < b"}])
def test_a_form_field_is_what_its_template_wrote(language, data):
    """site.field_group writes a field as reports/_field.html did: label and name escaped, the widget as Django
    renders it (a select, a textarea, a file input), has-error and every error message (escaped) when refused."""
    from django import forms
    from django.template import engines

    from reports.widgets import FastSelect

    class Form(forms.Form):
        name = forms.CharField(label="Name <&> \"x\"", max_length=2)
        count = forms.IntegerField(label="GPU count", min_value=1)
        kind = forms.ChoiceField(choices=[("a", "A & B"), ("b", "<B>")], widget=FastSelect)
        notes = forms.CharField(widget=forms.Textarea, required=False)
        config = forms.FileField(required=False)

    template = engines["django"].from_string(_FIELD_TEMPLATE)
    by_filter = engines["django"].from_string("{% load site %}{{ field|field_group }}")
    rendered = []
    with translation.override(language):
        form = Form(data) if data is not None else Form()
        for field in form:
            rendered.append(by_filter.render({"field": field}))
            assert rendered[-1] == template.render({"field": field}), field.name
    # An unbound form shows no error; a refused one marks its refused fields and writes their messages.
    refused = [html for html in rendered if " has-error" in html]
    assert (not refused) if data is None else (len(refused) >= 2 and all("_error\" class=\"field-error\" role=\"alert\">"
                                                                          "</div>" not in html for html in refused))


def test_a_link_list_is_what_the_for_loop_wrote_escaped_once():
    """link_items writes the neighbour clouds as the {% for %} loop it replaced did: names and URLs escaped (a
    query's & as &amp;, a name's < and quotes), an already-safe name not escaped twice."""
    from django.template import Context, Template
    from django.utils.safestring import mark_safe

    links = [("Radeon <RX> \"7900\"", "/en/report/m/h/?quant=Q8_0&context=8192"), (mark_safe("A & B"), "/x/'y'"),
             ("A & B", "/en/report/m/h2/?quant=Q8_0&context=8192"), ("C", "/x/'y'?a=<b>&c"),
             ("D", mark_safe("/x/?a=1&amp;b=2"))]
    loop = Template('{% for name, link in links %}<li><a href="{{ link }}">{{ name }}</a></li>{% endfor %}')
    joined = Template("{% load site %}{{ links|link_items }}")
    expected = loop.render(Context({"links": links}))
    assert joined.render(Context({"links": links})) == expected
    assert "quant=Q8_0&amp;context=8192" in expected and "&lt;RX&gt; &quot;7900&quot;" in expected
