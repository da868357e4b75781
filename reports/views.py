"""Views stay thin: validate input, call a service, render a full page or an htmx partial."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from reports import services


@require_safe
def home(request: HttpRequest) -> HttpResponse:
    return render(request, "reports/home.html", services.home_page())
