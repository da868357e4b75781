"""Template context shared by every page."""

from __future__ import annotations

from django.http import HttpRequest

from reports.forms import context_label
from reports.pages import FORMAT_LADDER
from reports.report import SUMMARY_CONTEXTS
from reports.sizing.fit import TIGHT_BUFFER
from reports.sizing.specs import Scenario


def default_configuration(request: HttpRequest) -> dict:
    """The configuration the catalog tables and entry points use (the estimate contract's defaults), so page
    texts name it instead of repeating "Q4_K_M" and "8K" (and the share of memory below which a fit is "tight")."""
    scenario = Scenario()
    return {"defaults": {"quant": scenario.quant, "context": context_label(SUMMARY_CONTEXTS[0]),
                         "long_context": context_label(SUMMARY_CONTEXTS[1]), "ladder": ", ".join(FORMAT_LADDER),
                         "tight_buffer": TIGHT_BUFFER}}
