"""The JSON API: the estimate contract over HTTP. Same engine call, same JSON as `manage.py estimate --format json`.

Parameters are the command's options without the dashes (`kv-dtype` or `kv_dtype`); errors are JSON with the
message and the option it names, status 400 for a bad value and 404 for an unknown model, accelerator or config.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.http import HttpRequest, HttpResponse, HttpResponsePermanentRedirect, JsonResponse
from django.views.decorators.cache import cache_control
from django.views.decorators.csrf import csrf_exempt

from api.openapi import openapi_document
from catalog.models import SlugRedirect
from catalog.submissions import find_submitted, submitted_spec
from reports.estimates import catalog_listing, current_catalog
from reports.hardware_params import HARDWARE_PARAMS, hardware_from_params
from reports.scenario_options import scenario_from_options
from reports.sizing.errors import SizingError
from reports.sizing.estimate import validate_scenario

# Same freshness as the pages: the figures change only when the catalog does (ETag revalidation in between).
API_MAX_AGE = 300
SCENARIO_PARAMS = ("quant", "context", "batch", "kv_dtype", "engine", "gpus", "offload_pct", "depth", "prompt",
                   "gpu_memory_utilization", "max_num_seqs", "max_num_batched_tokens", "ram_bandwidth")


class NotFound(SizingError):
    """A slug or config hash the catalog does not know (404, not 400)."""


def _params(request: HttpRequest) -> dict[str, str]:
    """Query parameters with `kv-dtype` and `kv_dtype` as one name; a repeated key keeps its last value."""
    return {key.replace("-", "_"): request.GET.getlist(key)[-1] for key in request.GET}


def _error(message: str, status: int) -> JsonResponse:
    option = message.split()[0] if message.startswith("--") else None
    return JsonResponse({"error": message, "option": option.rstrip(":") if option else None}, status=status)


def require_safe(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """GET and HEAD only, as Django's require_safe, but a refused method is told so in JSON (Django's answer is an
    empty text/html body), with the Allow header. CSRF-exempt: the API changes nothing, and the CSRF check ran first,
    so a POST without a token got Django's HTML 403 page instead of this JSON 405."""
    @csrf_exempt
    @wraps(view)
    def safe_only(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if request.method not in ("GET", "HEAD"):
            response = _error(f"method {request.method} is not allowed here; use GET", 405)
            response["Allow"] = "GET, HEAD"
            return response
        return view(request, *args, **kwargs)
    return safe_only


def _json(payload: dict) -> JsonResponse:
    """Strict JSON: a figure that is not a finite number (NaN, Infinity) is no JSON and would break the client's
    parser; the answer is then an error naming the cause instead."""
    try:
        return JsonResponse(payload, json_dumps_params={"ensure_ascii": False, "allow_nan": False})
    except ValueError:
        return _error("the estimate has a figure that is not a finite number; check the hardware's values", 422)


@require_safe
@cache_control(public=True, max_age=API_MAX_AGE)
def estimate(request: HttpRequest) -> HttpResponse:
    params = _params(request)
    if renamed := _renamed_query(request, params):
        return HttpResponsePermanentRedirect(f"{request.path}?{renamed}")
    try:
        scenario = scenario_from_options(params)
        validate_scenario(scenario)
        _, catalog = current_catalog()
        model = _model(params, catalog)
        hardware = _hardware(params, catalog)
        result = catalog.estimate(model, hardware, scenario)
    except NotFound as error:
        return _error(str(error), 404)
    except SizingError as error:
        return _error(str(error), 400)
    return _json(result.to_contract_json())


def _renamed_query(request: HttpRequest, params: dict[str, str]) -> str | None:
    """The query with a model or accelerator slug an admin has since changed replaced by the current one (the pages'
    old URLs answer 301 likewise), or None when no slug was renamed."""
    _, catalog = current_catalog()
    renames = {"model": SlugRedirect.renamed("model", params.get("model"), catalog.model_slugs),
               "gpu": SlugRedirect.renamed("hardware", params.get("gpu"), catalog.hardware)}
    renames = {name: new for name, new in renames.items() if new}
    if not renames:
        return None
    query = request.GET.copy()
    for name, new in renames.items():
        query[name] = new
    return query.urlencode()


def _model(params: dict[str, str], catalog):
    slug, config = params.get("model"), params.get("config")
    if bool(slug) == bool(config):
        raise SizingError("give exactly one of --model or --config")
    if config:
        row = find_submitted(config.lower())
        if row is None:
            raise NotFound(f"--config {config!r}: no submitted config.json has this hash")
        return submitted_spec(row)
    if slug not in catalog.model_slugs:
        raise NotFound(f"--model {slug!r} is not in the catalog (see /api/v1/models)")
    return catalog.model(slug)


def _hardware(params: dict[str, str], catalog):
    gpu = params.get("gpu")
    custom = [key for key in HARDWARE_PARAMS if key in params]
    if bool(gpu) == bool(custom):
        raise SizingError("give exactly one of --gpu or the hardware fields (memory_gb, bandwidth_gbs, …)")
    if custom:
        return hardware_from_params(params, option="--hardware")
    if gpu not in catalog.hardware:
        raise NotFound(f"--gpu {gpu!r} is not in the catalog (see /api/v1/hardware)")
    return catalog.accelerator(gpu)


@require_safe
@cache_control(public=True, max_age=API_MAX_AGE)
def models(request: HttpRequest) -> JsonResponse:
    return _json({"models": catalog_listing().models})


@require_safe
@cache_control(public=True, max_age=API_MAX_AGE)
def hardware(request: HttpRequest) -> JsonResponse:
    return _json({"hardware": catalog_listing().hardware})


@require_safe
@cache_control(public=True, max_age=3600)
def openapi(request: HttpRequest) -> JsonResponse:
    return _json(openapi_document())
