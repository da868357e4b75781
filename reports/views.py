"""Views stay thin: validate input, call a service, render a full page or an htmx partial."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from functools import wraps

from django.conf import settings
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import get_language, gettext
from django.views.decorators.cache import cache_page
from django.views.decorators.http import require_safe
from django.views.decorators.vary import vary_on_headers

from catalog.models import Accelerator, LLMModel
from reports import pages
from reports.estimates import CatalogSnapshot, catalog_version, current_catalog
from reports.report import ReportPage, ReportRoute, build_report
from reports.sizing.specs import HardwareSpec
from reports.templatetags.seo import absolute_url


def _home_crumb() -> tuple[str, str]:
    return gettext("Home"), reverse("reports:home")


def not_found(request: HttpRequest, missing: pages.NotFound) -> HttpResponse:
    """The 404 page in the visitor's language, with the closest catalog pages."""
    return render(request, "404.html", {"not_found": missing}, status=404)


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """handler404: unknown URLs get suggestions from their last path segment."""
    _, catalog = current_catalog()
    return not_found(request, pages.page_not_found(catalog, request.path))


@require_safe
def home(request: HttpRequest) -> HttpResponse:
    _, catalog = current_catalog()
    return render(request, "reports/home.html", {"page": pages.home_page(catalog, get_language())})


@require_safe
@vary_on_headers("HX-Request")
def search(request: HttpRequest) -> HttpResponse:
    """Models and accelerators matching what the visitor typed: the htmx partial as they type, or a full page
    (the same list) when the form is submitted without JavaScript."""
    _, catalog = current_catalog()
    results = pages.search(catalog, request.GET.get("model", ""), request.GET.get("hardware", ""))
    template = "reports/search.html#results" if request.htmx else "reports/search.html"
    return render(request, template, {"results": results})


def _default_report(model_row: LLMModel, hardware: HardwareSpec, catalog: CatalogSnapshot) -> ReportPage:
    """The report of `model_row` on `hardware` at the configurator's defaults (no query string)."""
    return build_report(catalog.model(model_row.slug), hardware, QueryDict(), catalog,
                        route=ReportRoute(model_key=model_row.slug))


def _catalog_model_row(catalog: CatalogSnapshot, slug: str) -> LLMModel | None:
    return next((row for row in catalog.model_rows if row.slug == slug), None)


@require_safe
@vary_on_headers("HX-Request")
def model(request: HttpRequest, model_slug: str) -> HttpResponse:
    """One model on every accelerator; htmx (sorting, filtering) gets the table partial."""
    _, catalog = current_catalog()
    model_row = _catalog_model_row(catalog, model_slug)
    if model_row is None:
        return not_found(request, pages.model_not_found(catalog, model_slug))
    page = pages.model_page(model_row, request.GET, catalog,
                            report_for=lambda hardware: _default_report(model_row, hardware, catalog))
    template = "reports/model.html#table" if request.htmx else "reports/model.html"
    crumbs = [_home_crumb(), (model_row.name, request.path)]
    return render(request, template, {"page": page, "breadcrumbs": crumbs})


@require_safe
@vary_on_headers("HX-Request")
def hardware(request: HttpRequest, hardware_slug: str) -> HttpResponse:
    """One accelerator: specs, prices, cloud offers and every model on it; htmx gets the table partial."""
    _, catalog = current_catalog()
    hardware_row = (Accelerator.objects.prefetch_related("prices", "cloud_offers")
                    .filter(slug=hardware_slug).first())
    if hardware_row is None or hardware_slug not in catalog.hardware:
        return not_found(request, pages.hardware_not_found(catalog, hardware_slug))
    page = pages.hardware_page(hardware_row, request.GET, catalog)
    template = "reports/hardware.html#table" if request.htmx else "reports/hardware.html"
    crumbs = [_home_crumb(), (hardware_row.name, request.path)]
    return render(request, template, {"page": page, "breadcrumbs": crumbs})


@require_safe
@vary_on_headers("HX-Request")
def report(request: HttpRequest, model_slug: str, hardware_slug: str) -> HttpResponse:
    """One model on one accelerator. The configurator state is the query string; htmx gets the results partial."""
    _, catalog = current_catalog()
    if model_slug not in catalog.model_slugs or hardware_slug not in catalog.hardware:
        return not_found(request, pages.report_not_found(catalog, model_slug, hardware_slug))
    page = build_report(catalog.model(model_slug), catalog.accelerator(hardware_slug), request.GET, catalog,
                        route=ReportRoute(model_key=model_slug))
    template = "reports/report.html#results" if request.htmx else "reports/report.html"
    crumbs = [_home_crumb(), (page.model.name, reverse("reports:model", kwargs={"model_slug": model_slug})),
              (page.hardware.name, request.path)]
    return render(request, template, {"page": page, "breadcrumbs": crumbs}, status=200 if page.estimate else 400)


def cache_per_catalog_version(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """cache_page whose keys include the catalog's version: an admin edit starts new keys, so a cached response
    never outlives the catalog it was computed from (one query per request to read the version)."""
    @wraps(view)
    def cached(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        version = hashlib.sha256(repr(catalog_version()).encode()).hexdigest()[:16]
        return cache_page(settings.PAGE_CACHE_SECONDS, key_prefix=f"catalog-{version}")(view)(
            request, *args, **kwargs)
    return cached


@require_safe
def robots_txt(request: HttpRequest) -> HttpResponse:
    """Crawl everything but the admin and the search results (noindex anyway); the sitemap index lists the rest."""
    lines = ["User-agent: *", "Disallow: /admin/", "Disallow: /search/"]
    lines += [f"Disallow: /{code}/search/" for code, _ in settings.LANGUAGES]
    lines += ["", f"Sitemap: {absolute_url(request, reverse('sitemap-index'))}"]
    return HttpResponse("\n".join(lines) + "\n", content_type="text/plain; charset=utf-8")
