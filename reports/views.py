"""Views stay thin: validate input, call a service, render a full page or an htmx partial."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache, wraps

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, HttpResponsePermanentRedirect, QueryDict
from django.utils.html import format_html
from django.utils.http import url_has_allowed_host_and_scheme
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.cache import set_response_etag
from django.utils.translation import get_language, gettext
from django.views.decorators.cache import cache_page
from django.views.decorators.gzip import gzip_page
from django.views.decorators.http import require_http_methods, require_safe
from django.views.decorators.vary import vary_on_headers

from catalog.models import Accelerator, LLMModel, SlugRedirect
from catalog.forms import MAX_CONFIG_BYTES
from reports import formatting, pages
from reports.estimates import CatalogSnapshot, catalog_version_key, current_catalog
from catalog.submissions import find_submitted, submit_config, submitted_spec
from reports.compare import MAX_COMPARED, compare_columns, compare_form, parse_choices, selection_from_query
from reports.forms import CUSTOM_HARDWARE_SLUG, REPLACED_PARAMETERS, ConfigSubmitForm, CustomHardwareForm
from reports.report import ReportPage, ReportRoute, build_report, url_pattern
from reports.sizing.estimate import kv_cache_known
from reports.sizing.specs import HardwareSpec, ModelSpec
from reports.templatetags.seo import absolute_url


def cache_per_catalog_version(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """cache_page whose keys include the catalog's version: an admin edit starts new keys, so a cached response
    never outlives the catalog it was computed from (the version itself is cached: a hit costs no query). The
    response is gzipped for clients that accept it before it is stored (Vary: Accept-Encoding).

    The ETag is set before the response is stored, so a cache hit is not hashed again on every request
    (ConditionalGetMiddleware computes one only when it is missing); the decorated view is built once per version.
    """
    @wraps(view)
    def with_etag(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        response = view(request, *args, **kwargs)
        if hasattr(response, "render") and callable(response.render) and not response.is_rendered:
            response.add_post_render_callback(set_response_etag)  # a TemplateResponse (the sitemaps): once rendered
        elif not response.streaming:
            set_response_etag(response)
        return response

    @lru_cache(maxsize=4)
    def for_version(version_key: str, seconds: int) -> Callable[..., HttpResponse]:
        # Compressed once, before the response is stored: a hit sends the stored gzip body (a report page: 61 KB
        # of HTML, 12 KB gzipped) instead of the proxy, or nobody, compressing it on every request. The ETag is
        # set first and made weak by GZipMiddleware. These GET pages carry no CSRF token or other secret that
        # BREACH could extract (GZipMiddleware also pads each compression against it).
        return cache_page(seconds, key_prefix=f"catalog-{version_key}")(gzip_page(with_etag))

    @wraps(view)
    def cached(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        response = for_version(catalog_version_key(), settings.PAGE_CACHE_SECONDS)(request, *args, **kwargs)
        # Browsers and proxies revalidate every time (a 304 for the same ETag costs no rendering): cache_page's
        # max-age (PAGE_CACHE_SECONDS) is how long the server keeps a page, and a browser that kept it as long
        # would show a report from before an admin's edit, which the server has already forgotten. Set after
        # cache_page has stored the response (it stores none marked no-cache): a TemplateResponse (the sitemaps)
        # is stored once rendered, so its headers change then too.
        if hasattr(response, "render") and callable(response.render) and not response.is_rendered:
            response.add_post_render_callback(revalidate_every_time)
        else:
            revalidate_every_time(response)
        return response
    return cached


def revalidate_every_time(response: HttpResponse) -> HttpResponse:
    response["Cache-Control"] = "no-cache"
    del response["Expires"]
    return response


def _home_crumb() -> tuple[str, str]:
    return gettext("Home"), url_pattern("reports:home")  # memoized reverse(): on every page


# A lower-case redirect longer than this is answered with the 404 page (Django refuses redirects over 16 KiB).
MAX_REDIRECT_LENGTH = 2000


def not_found(request: HttpRequest, missing: pages.NotFound, *, slugs_in_path: bool = False) -> HttpResponse:
    """The 404 page in the visitor's language, with the closest catalog pages. Catalog slugs are lower case: on
    a slug page (``slugs_in_path``) typed with capitals (/en/hardware/RTX-4090/) the visitor is redirected
    permanently to the lower-case path, query kept."""
    lowered = request.path.lower()
    if slugs_in_path and lowered != request.path and url_has_allowed_host_and_scheme(lowered, allowed_hosts=None):
        query = request.META.get("QUERY_STRING", "")
        location = lowered + (f"?{query}" if query else "")
        if len(location) <= MAX_REDIRECT_LENGTH:
            return HttpResponsePermanentRedirect(location)
    if slugs_in_path and (renamed := _renamed_location(request)):
        return HttpResponsePermanentRedirect(renamed)
    if slugs_in_path and len(query := request.GET.urlencode()) <= MAX_REDIRECT_LENGTH:
        missing = missing.keeping_query(query)  # the same page of another slug: the visitor's state still applies
    return render(request, "404.html", {"not_found": missing}, status=404)


# The URL keywords holding catalog slugs, and the kind of SlugRedirect that renames them.
SLUG_KWARGS = {"model_slug": "model", "hardware_slug": "hardware"}


def _renamed_location(request: HttpRequest) -> str | None:
    """The same page under the current slugs when a slug in the path is one an admin has since changed."""
    match = request.resolver_match
    if match is None:
        return None
    kwargs, renamed = dict(match.kwargs), False
    for name, kind in SLUG_KWARGS.items():
        if name in kwargs and (new := SlugRedirect.current(kind, kwargs[name])):
            kwargs[name], renamed = new, True
    if not renamed:
        return None
    query = request.META.get("QUERY_STRING", "")
    location = reverse(match.view_name, kwargs=kwargs) + (f"?{query}" if query else "")
    return location if len(location) <= MAX_REDIRECT_LENGTH else None


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """handler400. A body over DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MB; a config.json may have 256 KB) is refused
    before any view reads it, so the form cannot be shown again with the edit: say why, and that going back keeps
    it. The limit stays: raising it for the admin would raise it for every public form too."""
    if isinstance(exception, RequestDataTooBig):
        message = gettext("The form sent more than %(mb)s MB, so nothing was saved. A config.json may have at most "
                          "%(kb)d KB: go back (your browser keeps what you entered), shorten it and save again.") % {
            "mb": formatting.exact(settings.DATA_UPLOAD_MAX_MEMORY_SIZE / 2**20, get_language()),
            "kb": MAX_CONFIG_BYTES // 1024}
    else:
        message = gettext("Bad request.")
    return HttpResponseBadRequest(format_html("<!doctype html><title>400</title><h1>400</h1><p>{}</p>", message))


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """handler404: unknown URLs get suggestions from their last path segment."""
    _, catalog = current_catalog()
    return not_found(request, pages.page_not_found(catalog, request.path))


@require_safe
@cache_per_catalog_version
def home(request: HttpRequest) -> HttpResponse:
    _, catalog = current_catalog()
    return render(request, "reports/home.html", {"page": pages.home_page(catalog, get_language())})


@require_safe
@cache_per_catalog_version
@vary_on_headers("HX-Request")
def search(request: HttpRequest) -> HttpResponse:
    """Models and accelerators matching what the visitor typed: the htmx partial as they type, or a full page
    (the same list) when the form is submitted without JavaScript."""
    _, catalog = current_catalog()
    # ?q= (the usual name of a site search) looks for both a model and an accelerator.
    anything = request.GET.get("q", "")
    model_text, hardware_text = request.GET.get("model", ""), request.GET.get("hardware", "")
    # As you type, the first matches of each; the submitted page (or the link "all N") lists every one.
    results = pages.search(catalog, model_text or anything, hardware_text or anything,
                           limit=pages.SEARCH_LIMIT if request.htmx else None,
                           either=bool(anything) and not model_text and not hardware_text)
    template = "reports/search.html#results" if request.htmx else "reports/search.html"
    return render(request, template, {"results": results})


def _default_report(model_row: LLMModel, hardware: HardwareSpec, catalog: CatalogSnapshot) -> ReportPage:
    """The report of `model_row` on `hardware` at the configurator's defaults (no query string)."""
    return build_report(catalog.model(model_row.slug), hardware, QueryDict(), catalog,
                        route=ReportRoute(model_key=model_row.slug))


def _catalog_model_row(catalog: CatalogSnapshot, slug: str) -> LLMModel | None:
    return catalog.model_row(slug)


@require_safe
@cache_per_catalog_version
@vary_on_headers("HX-Request")
def model(request: HttpRequest, model_slug: str) -> HttpResponse:
    """One model on every accelerator; htmx (sorting, filtering) gets the table partial."""
    _, catalog = current_catalog()
    model_row = _catalog_model_row(catalog, model_slug)
    if model_row is None:
        return not_found(request, pages.model_not_found(catalog, model_slug), slugs_in_path=True)
    page = pages.model_page(model_row, request.GET, catalog,
                            report_for=lambda hardware: _default_report(model_row, hardware, catalog))
    template = "reports/model.html#table" if request.htmx else "reports/model.html"
    crumbs = [_home_crumb(), (model_row.name, request.path)]
    # A value the table does not offer (?sort=bogus) is a 400 with the page and a message, as the report's.
    return render(request, template, {"page": page, "breadcrumbs": crumbs}, status=400 if page.state.refused else 200)


@require_safe
@cache_per_catalog_version
@vary_on_headers("HX-Request")
def hardware(request: HttpRequest, hardware_slug: str) -> HttpResponse:
    """One accelerator: specs, prices, cloud offers and every model on it; htmx gets the table partial."""
    _, catalog = current_catalog()
    hardware_row = (Accelerator.objects.prefetch_related("prices", "cloud_offers")
                    .filter(slug=hardware_slug).first())
    if hardware_row is None or hardware_slug not in catalog.hardware:
        return not_found(request, pages.hardware_not_found(catalog, hardware_slug), slugs_in_path=True)
    page = pages.hardware_page(hardware_row, request.GET, catalog)
    template = "reports/hardware.html#table" if request.htmx else "reports/hardware.html"
    crumbs = [_home_crumb(), (hardware_row.name, request.path)]
    return render(request, template, {"page": page, "breadcrumbs": crumbs}, status=400 if page.state.refused else 200)


def _render_report(request: HttpRequest, page: ReportPage, crumbs: list[tuple[str, str]]) -> HttpResponse:
    """The full page; for htmx the answer (fit, speed, advice, commands) and, in a second request
    (part=details), the longer sections (cloud, fine-tuning, notes, chart, matrix, FAQ)."""
    if request.htmx:
        part = "details" if request.GET.get("part") == "details" else "results"
        template = f"reports/report.html#{part}"
    else:
        template = "reports/report.html"
    replaced = page.form.replaced
    used = {name: pair[1] for name, pair in replaced.items()}
    if replaced and not request.htmx:
        # The other engine's KV type or weight format in the URL: the page of the state it stands for (each state is
        # one URL), told which value was asked for, so that it says why the select shows another.
        asked = {REPLACED_PARAMETERS[name]: pair[0] for name, pair in replaced.items()}
        return redirect(_with_query(request, **used, **asked))
    # A refused field is a 400 even where the report is still computed (only a rent-vs-buy input was refused).
    status = 200 if (page.estimate or page.not_sizable_here) and not page.form.errors else 400
    response = render(request, template, {"page": page, "breadcrumbs": crumbs}, status=status)
    if replaced and request.GET.get("part") != "details":
        response["HX-Push-Url"] = _with_query(request, **used)  # the state shown, not the one asked
    return response


def _with_query(request: HttpRequest, **changes: str) -> str:
    query = request.GET.copy()
    for name, value in changes.items():
        query[name] = value
    return f"{request.path}?{query.urlencode()}"


def _hardware_or_form(request: HttpRequest, hardware_slug: str, catalog: CatalogSnapshot
                      ) -> tuple[HardwareSpec | None, CustomHardwareForm | None]:
    """A catalog accelerator, or the visitor's own hardware from the query ("custom" in the URL)."""
    if hardware_slug != CUSTOM_HARDWARE_SLUG:
        return catalog.hardware.get(hardware_slug), None
    if not any(request.GET.get(name) for name in CustomHardwareForm.FIELDS):
        return None, CustomHardwareForm()  # nothing described yet: the empty form, not "This field is required"
    form = CustomHardwareForm(request.GET)
    return (form.hardware if form.is_valid() else None), form


def _invalid_hardware(request: HttpRequest, form: CustomHardwareForm, model: ModelSpec) -> HttpResponse:
    template = "reports/custom_hardware.html#form" if request.htmx else "reports/custom_hardware.html"
    return render(request, template, {"form": form, "model": model}, status=400 if form.is_bound else 200)


@require_safe
@cache_per_catalog_version
@vary_on_headers("HX-Request")
def report(request: HttpRequest, model_slug: str, hardware_slug: str) -> HttpResponse:
    """One model on one accelerator (or on "custom" hardware described in the query). The configurator state is
    the query string; htmx gets the results partial."""
    _, catalog = current_catalog()
    hardware, hardware_form = _hardware_or_form(request, hardware_slug, catalog)
    if model_slug not in catalog.model_slugs or (hardware is None and hardware_form is None):
        return not_found(request, pages.report_not_found(catalog, model_slug, hardware_slug), slugs_in_path=True)
    model = catalog.model(model_slug)
    if hardware is None:
        return _invalid_hardware(request, hardware_form, model)
    page = build_report(model, hardware, request.GET, catalog, route=ReportRoute(model_key=model_slug),
                        hardware_form=hardware_form)
    crumbs = [_home_crumb(), (page.model.name, url_pattern("reports:model", model_slug=model_slug)),
              (page.hardware.name, request.path)]
    return _render_report(request, page, crumbs)


@require_http_methods(["GET", "HEAD", "POST"])
def config_new(request: HttpRequest) -> HttpResponse:
    """Paste or upload a config.json; a valid one is stored by its hash and opens its report (a shareable URL)."""
    form = ConfigSubmitForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        submitted = submit_config(form.cleaned_data["config"])
        _, catalog = current_catalog()
        hardware = pages.default_hardware_for(submitted_spec(submitted), catalog)
        return redirect("reports:config_report", config_hash=submitted.short_hash, hardware_slug=hardware.slug)
    status = 400 if request.method == "POST" else 200
    return render(request, "reports/config_new.html", {"form": form}, status=status)


@require_safe
@cache_per_catalog_version
@vary_on_headers("HX-Request")
def config_report(request: HttpRequest, config_hash: str, hardware_slug: str) -> HttpResponse:
    """The full report of a submitted config.json on a catalog accelerator (or custom hardware)."""
    _, catalog = current_catalog()
    submitted = find_submitted(config_hash)
    hardware, hardware_form = _hardware_or_form(request, hardware_slug, catalog)
    if submitted is None or (hardware is None and hardware_form is None):
        return not_found(request, pages.page_not_found(catalog, request.path))
    model = submitted_spec(submitted)
    if hardware is None:
        return _invalid_hardware(request, hardware_form, model)
    route = ReportRoute(url_name="reports:config_report", model_kwarg="config_hash", model_key=submitted.short_hash)
    page = build_report(model, hardware, request.GET, catalog, route=route, hardware_form=hardware_form)
    crumbs = [_home_crumb(), (gettext("Your config.json"), reverse("reports:config_new")),
              (page.hardware.name, request.path)]
    return _render_report(request, page, crumbs)


@require_safe
@cache_per_catalog_version
@vary_on_headers("HX-Request")
def compare(request: HttpRequest, model_slug: str) -> HttpResponse:
    """Up to four accelerators (or GPU counts) for one model side by side; the URL holds the selection."""
    _, catalog = current_catalog()
    model_row = _catalog_model_row(catalog, model_slug)
    if model_row is None:
        return not_found(request, pages.model_not_found(catalog, model_slug, "reports:compare"), slugs_in_path=True)
    model = catalog.model(model_slug)
    if renamed := _renamed_compare_query(request, catalog):
        return HttpResponsePermanentRedirect(f"{request.path}?{renamed}")
    choices, rejected = parse_choices(selection_from_query(request.GET), catalog)
    form = compare_form(model, request.GET, catalog)
    columns = compare_columns(model, choices, form, catalog) if form.is_valid() else []
    # The budget and the kWh price price no row here, but are the visitor's state: the form carries them as hidden
    # inputs (and the column links to the report), so a submit does not reset them to the defaults; a refused one is
    # shown with its error instead, for the visitor to correct.
    kept = [form[name] for name in ("budget", "kwh")]
    context = {"model": model, "model_row": model_row, "form": form, "choices": choices, "rejected": rejected,
               # The GPU count is chosen per accelerator; of the cost inputs only the hours a day price a row
               # (the monthly cloud bill).
               "shown_fields": [*(field for field in form.scenario_fields() if field.name != "gpus"), form["hours"],
                                *(field for field in kept if field.errors)],
               "hidden_fields": [field for field in kept if not field.errors and field.value() not in (None, "")],
               "cost_inputs": form.cost_inputs() if form.is_valid() else {},
               "speed_upper_bound": not model.layer_count_known,
               "total_lower_bound": not kv_cache_known(model),  # its totals leave the KV cache out: "≥"
               "columns": columns, "hardware": sorted(catalog.hardware.values(), key=lambda h: (h.vendor, h.name)),
               "slots": [(slot, choices[slot] if slot < len(choices) else None) for slot in range(MAX_COMPARED)],
               "counts": (1, 2, 4, 8),
               "breadcrumbs": [_home_crumb(), (model.name, reverse("reports:model", kwargs={"model_slug": model_slug})),
                               (gettext("Compare"), request.path)]}
    template = "reports/compare.html#table" if request.htmx else "reports/compare.html"
    return render(request, template, context, status=400 if rejected or not form.is_valid() else 200)


def _renamed_compare_query(request: HttpRequest, catalog: CatalogSnapshot) -> str | None:
    """The compare query with accelerator slugs an admin has since changed replaced by the current ones (hw=slug:n
    and the form's hw0…hw3), so a shared comparison keeps its columns; None when none was renamed."""
    query, renamed = request.GET.copy(), False
    for name in ("hw", *(f"hw{slot}" for slot in range(MAX_COMPARED))):
        values = []
        for value in query.getlist(name):
            slug, colon, count = value.strip().partition(":")
            if new := SlugRedirect.renamed("hardware", slug, catalog.hardware):
                value, renamed = f"{new}{colon}{count}", True
            values.append(value)
        if values:
            query.setlist(name, values)
    return query.urlencode() if renamed else None


@require_safe
def robots_txt(request: HttpRequest) -> HttpResponse:
    """Crawl everything but the admin; the sitemap index lists the pages. The search pages are crawled so that
    their "noindex, follow" is read: a URL robots.txt disallows can still be indexed from links to it ("all
    results" links one), without the crawler ever seeing that it should not be."""
    lines = ["User-agent: *", "Disallow: /admin/"]
    lines += ["", f"Sitemap: {absolute_url(request, reverse('sitemap-index'))}"]
    return HttpResponse("\n".join(lines) + "\n", content_type="text/plain; charset=utf-8")
