"""The URLs the web benchmarks request, resolved with Django's own URL configuration and the catalog.

Call ``Site.load()`` after Django is configured (``ProductionServer.setup_django``). Pages that may not exist yet
(model, hardware, search, sitemap) are looked up by URL name; a page whose name does not reverse, or whose URL does
not resolve, is ``None`` and the benchmarks print it as "not present".

Configurator states are what the report's form offers (reports/forms.py): the preset contexts up to the model's
limit, GPU counts, batch sizes, engine with a KV-cache type that engine has, offload, and common GGUF formats.
``state(index)`` is deterministic, and distinct for every index below ``DISTINCT_STATES``: the cost field
``hours`` (0.5 … 24 h/day in half hours, 48 values) multiplies the scenario combinations, so a page cache keyed on
the URL never sees the same query twice within a run.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from html.parser import HTMLParser
from urllib.parse import urlencode

COMMON_FORMATS = ("Q4_K_M", "Q8_0", "Q6_K", "Q5_K_M", "IQ4_XS", "Q3_K_M", "Q2_K")
GPU_COUNTS = (1, 2, 4, 8)
BATCHES = (1, 4, 16)
ENGINE_KV = (("llama.cpp", "f16"), ("llama.cpp", "q8_0"), ("llama.cpp", "q4_0"), ("vllm", "f16"), ("vllm", "fp8"))
OFFLOADS = ("auto", "0", "30")
HOURS = tuple(n / 2 for n in range(1, 49))  # 0.5 … 24.0
SCENARIO_CONTEXTS = (4096, 8192, 32768, 131072)
DISTINCT_STATES = (len(COMMON_FORMATS) * len(GPU_COUNTS) * len(BATCHES) * len(ENGINE_KV) * len(OFFLOADS)
                   * len(SCENARIO_CONTEXTS) * len(HOURS))

# Names another part of the project may give these pages; the first that reverses wins.
MODEL_PAGE_NAMES = ("reports:model", "reports:model_page", "reports:model_detail", "catalog:model")
HARDWARE_PAGE_NAMES = ("reports:hardware", "reports:hardware_page", "reports:hardware_detail", "reports:accelerator",
                       "catalog:hardware")
SEARCH_NAMES = ("reports:search", "search")
SITEMAP_PATH = "/sitemap.xml"


@dataclass(frozen=True)
class CatalogModel:
    slug: str
    name: str
    max_context: int | None


def configurator_state(index: int, max_context: int | None) -> dict[str, str]:
    """The INDEX-th configurator state (mixed radix over the option lists; contexts clipped to the model)."""
    digits = []
    for options in (HOURS, COMMON_FORMATS, GPU_COUNTS, BATCHES, ENGINE_KV, OFFLOADS, SCENARIO_CONTEXTS):
        index, digit = divmod(index, len(options))
        digits.append(options[digit])
    hours, quant, gpus, batch, (engine, kv_dtype), offload, context = digits
    if max_context:
        context = min(context, max_context)
    return {"quant": quant, "context": str(context), "gpus": str(gpus), "batch": str(batch), "engine": engine,
            "kv_dtype": kv_dtype, "offload": offload, "hours": f"{hours:g}"}


class Site:
    """Catalog slugs and URL builders for one language."""

    def __init__(self, language: str, models: list[CatalogModel], hardware: list[str], paths: dict[str, str | None]):
        self.language = language
        self.models = models
        self.hardware = hardware
        self._paths = paths  # URL templates with MODEL-SLUG / HARDWARE-SLUG placeholders, or None

    @classmethod
    def load(cls, language: str = "en") -> Site:
        from django.utils import translation

        from catalog.models import Accelerator, LLMModel

        models = [CatalogModel(row.slug, row.name, row.max_context)
                  for row in LLMModel.objects.order_by("slug").only("slug", "name", "max_context")]
        hardware = list(Accelerator.objects.order_by("slug").values_list("slug", flat=True))
        with translation.override(language):
            paths = {
                "report": _reverse_template(("reports:report",), ("MODEL-SLUG", "HARDWARE-SLUG")),
                "model": _reverse_template(MODEL_PAGE_NAMES, ("MODEL-SLUG",)),
                "hardware": _reverse_template(HARDWARE_PAGE_NAMES, ("HARDWARE-SLUG",)),
                "search": _reverse_template(SEARCH_NAMES, ()),
                "sitemap": SITEMAP_PATH if _resolves(SITEMAP_PATH) else None,
            }
        return cls(language, models, hardware, paths)

    def has(self, page: str) -> bool:
        return self._paths.get(page) is not None

    def describe(self, page: str) -> str:
        template = self._paths.get(page)
        return template if template is not None else "not present"

    def report(self, model_slug: str, hardware_slug: str, query: dict[str, str] | None = None) -> str:
        path = self._paths["report"].replace("MODEL-SLUG", model_slug).replace("HARDWARE-SLUG", hardware_slug)
        return f"{path}?{urlencode(query)}" if query else path

    def model_page(self, model_slug: str) -> str:
        return self._paths["model"].replace("MODEL-SLUG", model_slug)

    def hardware_page(self, hardware_slug: str) -> str:
        return self._paths["hardware"].replace("HARDWARE-SLUG", hardware_slug)

    def search(self, query: dict[str, str]) -> str:
        return f"{self._paths['search']}?{urlencode(query)}"

    def search_path(self) -> str:
        return self._paths["search"]

    def sitemap(self) -> str:
        return self._paths["sitemap"]

    def model(self, slug: str) -> CatalogModel:
        return next(model for model in self.models if model.slug == slug)

    def random_report(self, rng: random.Random) -> str:
        """A report for a random model × accelerator: half at the default state (landing pages), half configured."""
        model = rng.choice(self.models)
        query = configurator_state(rng.randrange(DISTINCT_STATES), model.max_context) if rng.random() < 0.5 else None
        return self.report(model.slug, rng.choice(self.hardware), query)


class _FormInputs(HTMLParser):
    """Names of the text inputs of the forms whose action is ACTION."""

    def __init__(self, action: str):
        super().__init__()
        self.action, self.inside, self.names = action, False, []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "form":
            self.inside = attributes.get("action") == self.action
        elif tag == "input" and self.inside and attributes.get("type", "text") in ("text", "search"):
            if attributes.get("name") and attributes["name"] not in self.names:
                self.names.append(attributes["name"])

    def handle_endtag(self, tag):
        if tag == "form":
            self.inside = False


def search_fields(search_page_html: str, search_path: str) -> list[str]:
    """The text inputs of the search form on the search page, in order ("q" when the page has no such form)."""
    parser = _FormInputs(search_path)
    parser.feed(search_page_html)
    return parser.names or ["q"]


def search_queries(site: Site, fields: list[str]) -> list[dict[str, str]]:
    """What people type: 2 to 6 first characters of model names (and of accelerator slugs in a second field)."""
    model_prefixes = sorted({model.name[:n] for model in site.models for n in range(2, 7)})
    hardware_prefixes = sorted({slug[:n] for slug in site.hardware for n in range(2, 7)})
    queries = []
    for i, prefix in enumerate(model_prefixes):
        query = {fields[0]: prefix}
        if len(fields) > 1:
            query[fields[1]] = hardware_prefixes[i % len(hardware_prefixes)] if i % 2 else ""
        queries.append(query)
    return queries


def _reverse_template(names: tuple[str, ...], placeholders: tuple[str, ...]) -> str | None:
    """The first NAME that reverses with len(PLACEHOLDERS) arguments, whatever its parameters are called."""
    from django.urls import NoReverseMatch, reverse

    for name in names:
        for keywords in _parameter_names(name):
            if len(keywords) != len(placeholders):
                continue
            try:
                return reverse(name, kwargs=dict(zip(keywords, placeholders)))
            except NoReverseMatch:
                continue
    return None


def _parameter_names(name: str) -> list[tuple[str, ...]]:
    """The parameter names of every pattern registered under NAME ("ns:name"), from the resolver's reverse table."""
    from django.urls import get_resolver

    resolver = get_resolver()
    *namespaces, view_name = name.split(":")
    for namespace in namespaces:
        if namespace not in resolver.namespace_dict:
            return []
        resolver = resolver.namespace_dict[namespace][1]
    found = []
    for possibilities, *_ in resolver.reverse_dict.getlist(view_name):
        found.extend(tuple(params) for _, params in possibilities)
    return found


def _resolves(path: str) -> bool:
    from django.urls import Resolver404, resolve

    try:
        resolve(path)
    except Resolver404:
        return False
    return True
