"""The methodology page: how every figure is computed, with its sources and the measured accuracy."""

from __future__ import annotations

from functools import lru_cache

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils.safestring import SafeString
from django.urls import reverse
from django.utils.translation import get_language, gettext
from django.views.decorators.http import require_safe

from reports.methodology import methodology_page


@require_safe
def methodology(request: HttpRequest) -> HttpResponse:
    # The body shows these two crumbs itself (it is rendered once per language); base.html gives their JSON-LD.
    crumbs = [(gettext("Home"), reverse("reports:home")), (gettext("Methodology"), request.path)]
    return render(request, "reports/methodology.html", {"body": methodology_body(get_language()),
                                                        "breadcrumbs": crumbs})


@lru_cache(maxsize=len(settings.LANGUAGES))
def methodology_body(language: str) -> SafeString:
    """The page body for one language. It depends only on the code and the committed accuracy snapshot, which
    change together with a deploy, so each process renders it once per language (about 0.3 s: some 2,000
    numbers formatted) instead of once per request. The surrounding page (language links) stays per request."""
    return render_to_string("reports/methodology.html#body", {"page": methodology_page()})
