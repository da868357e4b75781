"""Views stay thin: validate input, call a service, render a full page or an htmx partial."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_safe
from django.views.decorators.vary import vary_on_headers

from catalog.models import Accelerator, LLMModel
from reports import services
from reports.estimates import current_catalog
from reports.report import build_report


@require_safe
def home(request: HttpRequest) -> HttpResponse:
    return render(request, "reports/home.html", services.home_page())


@require_safe
@vary_on_headers("HX-Request")
def report(request: HttpRequest, model_slug: str, hardware_slug: str) -> HttpResponse:
    """One model on one accelerator. The configurator state is the query string; htmx gets the results partial."""
    model_row = get_object_or_404(LLMModel, slug=model_slug)
    hardware_row = get_object_or_404(Accelerator, slug=hardware_slug)
    _, catalog = current_catalog()
    page = build_report(model_row, hardware_row, request.GET, catalog)
    template = "reports/report.html#results" if request.htmx else "reports/report.html"
    return render(request, template, {"page": page}, status=200 if page.estimate else 400)
