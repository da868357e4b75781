"""sitemap.xml: a sitemap index with one section per page kind, every URL in both languages.

`i18n` lists each page once per language, `alternates` adds its hreflang links and `x_default` the unprefixed URL
(which redirects by Accept-Language); see django/contrib/sitemaps/__init__.py. `lastmod` is the latest change
(`updated_at`) of the catalog rows a page shows:

- a report: its model (with its published file sizes) and its accelerator (with its prices and cloud offers);
- a model page: the model and every accelerator (its table lists them all);
- a hardware page: the accelerator and every model;
- the home and methodology pages: the whole catalog.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.sitemaps import Sitemap
from django.db.models import Max
from django.urls import NoReverseMatch, reverse
from django.utils.translation import get_language

from catalog.models import Accelerator, CloudOffer, HardwarePrice, LLMModel, PublishedFileSize
from reports.estimates import catalog_version, current_catalog
from reports.sizing.estimate import sizable_on


@dataclass(frozen=True)
class CatalogLastmods:
    models: dict[str, dt.datetime]  # slug → latest change of the model and its published sizes
    hardware: dict[str, dt.datetime]  # slug → latest change of the accelerator, its prices and offers
    latest: dt.datetime | None  # the whole catalog


def _latest_per_parent(rows, parent_slug: str) -> dict[str, dt.datetime]:
    return dict(rows.values(parent_slug).annotate(latest=Max("updated_at")).values_list(parent_slug, "latest"))


def _merge_latest(target: dict[str, dt.datetime], more: dict[str, dt.datetime]) -> None:
    for slug, when in more.items():
        if slug in target and when is not None:
            target[slug] = max(target[slug], when)


def read_catalog_lastmods() -> CatalogLastmods:
    """Five aggregate queries, whatever the catalog's size."""
    models = dict(LLMModel.objects.values_list("slug", "updated_at"))
    _merge_latest(models, _latest_per_parent(PublishedFileSize.objects, "model__slug"))
    hardware = dict(Accelerator.objects.values_list("slug", "updated_at"))
    _merge_latest(hardware, _latest_per_parent(HardwarePrice.objects, "accelerator__slug"))
    _merge_latest(hardware, _latest_per_parent(CloudOffer.objects, "accelerator__slug"))
    return CatalogLastmods(models, hardware, max([*models.values(), *hardware.values()], default=None))


_lastmods_cache: dict[str, tuple[tuple, CatalogLastmods]] = {}


def catalog_lastmods() -> CatalogLastmods:
    """read_catalog_lastmods(), re-read only when the catalog's version changes (one query to check)."""
    version = catalog_version()
    cached = _lastmods_cache.get("lastmods")
    if cached is None or cached[0] != version:
        cached = _lastmods_cache["lastmods"] = (version, read_catalog_lastmods())
    return cached[1]


class CatalogSitemap(Sitemap):
    i18n = True
    alternates = True
    x_default = True

    @cached_property
    def lastmods(self) -> CatalogLastmods:
        return catalog_lastmods()

    # The pages' URLs use SITE_URL when it is set, like their canonical links (reports/templatetags/seo.py).
    def get_protocol(self, protocol: str | None = None) -> str:
        if settings.SITE_URL:
            return urlsplit(settings.SITE_URL).scheme
        return super().get_protocol(protocol)

    def get_domain(self, site=None) -> str:
        if settings.SITE_URL:
            return urlsplit(settings.SITE_URL).netloc
        return super().get_domain(site)

    def get_latest_lastmod(self) -> dt.datetime | None:
        return self.lastmods.latest

    def _path_template(self, name: str, **placeholders: str) -> Callable[..., str]:
        """reverse() once per language, then fill the slugs in by replacement: the reports section has 8,000
        locations × 4 (loc, two alternates, x-default), and reverse() costs far more than str.replace."""
        cache = self.__dict__.setdefault("_templates", {})
        key = (name, get_language())
        if key not in cache:
            cache[key] = reverse(name, kwargs={kwarg: marker for kwarg, marker in placeholders.items()})
        pattern = cache[key]

        def fill(**values: str) -> str:
            path = pattern
            for kwarg, marker in placeholders.items():
                path = path.replace(marker, values[kwarg], 1)
            return path
        return fill


class ReportSitemap(CatalogSitemap):
    # 4,000 pairs × 2 languages: several pages of the section keep each response small and quick.
    limit = 2500

    def items(self) -> list[tuple[str, str]]:
        # Pairs no engine sizes (estimate.sizable_on) are "not sizable here" pages marked noindex: not listed.
        _, catalog = current_catalog()
        known = set(catalog.model_slugs)
        return [(model, hardware) for model in sorted(self.lastmods.models)
                for hardware in sorted(self.lastmods.hardware)
                if model not in known or hardware not in catalog.hardware
                or sizable_on(catalog.model(model), catalog.hardware[hardware])]

    def location(self, item: tuple[str, str]) -> str:
        model, hardware = item
        fill = self._path_template("reports:report", model_slug="MODEL-SLUG", hardware_slug="HARDWARE-SLUG")
        return fill(model_slug=model, hardware_slug=hardware)

    def lastmod(self, item: tuple[str, str]) -> dt.datetime:
        model, hardware = item
        return max(self.lastmods.models[model], self.lastmods.hardware[hardware])


class ModelSitemap(CatalogSitemap):
    def items(self) -> list[str]:
        return sorted(self.lastmods.models)

    def location(self, item: str) -> str:
        return self._path_template("reports:model", model_slug="MODEL-SLUG")(model_slug=item)

    def lastmod(self, item: str) -> dt.datetime:
        return max([self.lastmods.models[item], *self.lastmods.hardware.values()])


class HardwareSitemap(CatalogSitemap):
    def items(self) -> list[str]:
        return sorted(self.lastmods.hardware)

    def location(self, item: str) -> str:
        return self._path_template("reports:hardware", hardware_slug="HARDWARE-SLUG")(hardware_slug=item)

    def lastmod(self, item: str) -> dt.datetime:
        return max([self.lastmods.hardware[item], *self.lastmods.models.values()])


STATIC_PAGES = ("reports:home", "reports:methodology")


class StaticSitemap(CatalogSitemap):
    def items(self) -> list[str]:
        names = []
        for name in STATIC_PAGES:
            try:
                reverse(name)
            except NoReverseMatch:  # the methodology page may not exist yet: no dead links
                continue
            names.append(name)
        return names

    def location(self, item: str) -> str:
        return reverse(item)

    def lastmod(self, item: str) -> dt.datetime | None:
        return self.lastmods.latest


SITEMAPS = {"reports": ReportSitemap, "models": ModelSitemap, "hardware": HardwareSitemap, "pages": StaticSitemap}
