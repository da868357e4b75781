"""Catalog → engine: the one code path the web pages and ``manage.py estimate`` share.

The catalog queries live here; the engine (``reports.sizing``) only sees specs. A ``CatalogSnapshot`` loads the
accelerators and cloud offers once, so a page (or the grid test) that sizes many pairs does not re-query them.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cached_property, lru_cache

from django.core.cache import cache
from django.db import connection

from catalog.models import Accelerator, CloudOffer, HardwarePrice, LLMModel, PublishedFileSize, QuantFormat
from catalog.specs import hardware_spec, kv_proxy_for, model_spec, offer_spec
from reports.sizing.errors import SizingError
from reports.sizing.estimate import Estimate, estimate
from reports.sizing.quant import QUANT_FORMATS
from reports.sizing.recommend import Recommendations, by_memory, recommend_hardware, smallest_fitting
from reports.sizing.specs import CloudOfferSpec, HardwareSpec, ModelSpec, Scenario


def _latest_new_price(row: Accelerator) -> float | None:
    prices = [p for p in row.prices.all() if p.condition == HardwarePrice.Condition.NEW]
    latest = max(prices, key=lambda p: p.as_of, default=None)
    return float(latest.usd) if latest is not None else None


class CatalogSnapshot:
    """Specs of the catalog's accelerators and active cloud offers, read once.

    ``version_key``: the catalog version it was read at (``catalog_version_key``), when the caller knows it;
    cache keys of what is computed from the snapshot include it, so an admin edit starts new keys.
    """

    def __init__(self, version_key: str = "") -> None:
        self._model_specs: dict[str, ModelSpec] = {}
        self.version_key = version_key
        # Searches over the whole catalog depend on the model and the scenario, not on the accelerator of the
        # report that asks: the reports of one model on its 49 accelerators (a crawler's walk, the hardware
        # table's links) ask the same ones. Memoized for this snapshot's version; an admin edit makes a new one.
        self.smallest_fitting = lru_cache(maxsize=4096)(self._smallest_fitting)
        self.recommendations = lru_cache(maxsize=1024)(self._recommendations)

    @cached_property
    def hardware(self) -> dict[str, HardwareSpec]:
        rows = Accelerator.objects.prefetch_related("prices")
        return {row.slug: hardware_spec(row, price_usd=_latest_new_price(row)) for row in rows}

    @cached_property
    def quant_names(self) -> list[str]:
        """Catalog formats the engine can size, in the catalog's order (the configurator's choices)."""
        names = QuantFormat.objects.order_by("sort_order", "name").values_list("name", flat=True)
        return [name for name in names if name.upper() in QUANT_FORMATS]

    @cached_property
    def hardware_catalog(self) -> tuple[HardwareSpec, ...]:
        """The accelerators as the engine's ``hardware_catalog`` argument (one tuple, hashed by its caches)."""
        return tuple(self.hardware.values())

    @cached_property
    def hardware_by_memory(self) -> tuple[HardwareSpec, ...]:
        return by_memory(self.hardware.values())

    @cached_property
    def offers(self) -> tuple[CloudOfferSpec, ...]:
        rows = CloudOffer.objects.filter(is_active=True).select_related("accelerator")
        return tuple(offer_spec(row) for row in rows)

    @cached_property
    def _models(self) -> dict[str, LLMModel]:
        return {row.slug: row for row in LLMModel.objects.prefetch_related("published_sizes")}

    def model(self, slug: str) -> ModelSpec:
        """The engine spec of a catalog model (with its KV proxy when it has no config.json)."""
        row = self._models.get(slug)
        if row is None:
            raise SizingError(f"--model {slug!r} is not in the catalog (see --list)")
        if slug not in self._model_specs:
            proxy = kv_proxy_for(row, list(self._models.values()))
            self._model_specs[slug] = model_spec(row, kv_proxy=proxy)
        return self._model_specs[slug]

    def accelerator(self, slug: str) -> HardwareSpec:
        spec = self.hardware.get(slug)
        if spec is None:
            raise SizingError(f"--gpu {slug!r} is not in the catalog (see --list)")
        return spec

    def model_row(self, slug: str) -> LLMModel | None:
        """The catalog row of a model (its license, repos and notes); None for a model not in the catalog."""
        return self._models.get(slug)

    @property
    def model_slugs(self) -> list[str]:
        return list(self._models)

    @property
    def model_rows(self) -> list[LLMModel]:
        return list(self._models.values())

    def estimate(self, model: ModelSpec, hardware: HardwareSpec, scenario: Scenario) -> Estimate:
        return estimate(model, hardware, scenario, offers=self.offers, hardware_catalog=self.hardware_catalog)

    def _smallest_fitting(self, model: ModelSpec, scenario: Scenario) -> HardwareSpec | None:
        """The catalog's smallest accelerator on which ``scenario.gpus`` of it run the scenario (the matrix)."""
        return smallest_fitting(model, scenario, self.hardware_by_memory)

    def _recommendations(self, model: ModelSpec, scenario: Scenario) -> Recommendations:
        """Hardware to buy or rent for the scenario (SizingError for a scenario the engine refuses)."""
        return recommend_hardware(model, scenario, hardware_catalog=self.hardware_catalog, offers=self.offers)


def estimate_for(model_slug: str, hardware_slug: str, scenario: Scenario,
                 catalog: CatalogSnapshot | None = None) -> Estimate:
    """The estimate for a catalog model on a catalog accelerator (SizingError naming the bad option)."""
    catalog = catalog or CatalogSnapshot()
    return catalog.estimate(catalog.model(model_slug), catalog.accelerator(hardware_slug), scenario)


@dataclass(frozen=True)
class Listing:
    models: list[dict]
    hardware: list[dict]

    def as_json(self) -> dict:
        return {"models": self.models, "hardware": self.hardware}


def catalog_listing() -> Listing:
    """``manage.py estimate --list``: every model (slug, name, hf_repo) and accelerator (slug, name, vendor, GB)."""
    models = [{"slug": m.slug, "name": m.name, "hf_repo": m.hf_repo}
              for m in LLMModel.objects.only("slug", "name", "hf_repo").order_by("name")]
    hardware = [{"slug": a.slug, "name": a.name, "vendor": a.vendor, "memory_gb": a.memory_gb}
                for a in Accelerator.objects.only("slug", "name", "vendor", "memory_gb")]
    return Listing(models, hardware)


# Every table a page reads (QuantFormat: the configurator's choices).
VERSIONED_MODELS = (LLMModel, PublishedFileSize, Accelerator, HardwarePrice, CloudOffer, QuantFormat)


CATALOG_VERSION_KEY = "catalog-version"
# How long an app server trusts the version it cached. Saves and deletes in the admin clear it at once in the shared
# cache (Redis); app servers with only a per-process cache see another server's admin edit within this time.
CATALOG_VERSION_SECONDS = 5


def catalog_version() -> tuple:
    """Changes whenever a catalog row is added, edited or deleted. Read from the cache (a cached page then costs no
    query); computed by one query over the catalog tables when the cache has none."""
    version = cache.get(CATALOG_VERSION_KEY)
    if version is None:
        version = catalog_version_from_database()
        cache.set(CATALOG_VERSION_KEY, version, CATALOG_VERSION_SECONDS)
    return version


def catalog_version_key(version: tuple | None = None) -> str:
    """A short, cache-key-safe digest of the catalog version (the current one when none is given)."""
    return hashlib.sha256(repr(catalog_version() if version is None else version).encode()).hexdigest()[:16]


def catalog_version_from_database() -> tuple:
    parts = []
    for model in VERSIONED_MODELS:
        table = connection.ops.quote_name(model._meta.db_table)
        parts.append(f"(SELECT MAX(updated_at) FROM {table}), (SELECT COUNT(*) FROM {table})")
    with connection.cursor() as cursor:
        cursor.execute("SELECT " + ", ".join(parts))
        return tuple(cursor.fetchone())


def forget_catalog_version(**kwargs) -> None:
    """Signal receiver: a catalog row was saved or deleted."""
    cache.delete(CATALOG_VERSION_KEY)


_snapshot_cache: dict[str, tuple[tuple, CatalogSnapshot]] = {}


def current_catalog() -> tuple[tuple, CatalogSnapshot]:
    """The catalog snapshot of this process, rebuilt when the catalog's version changes (admin edits)."""
    version = catalog_version()
    cached = _snapshot_cache.get("catalog")
    if cached is None or cached[0] != version:
        cached = (version, CatalogSnapshot(version_key=catalog_version_key(version)))
        _snapshot_cache["catalog"] = cached
    return cached
