"""Render every report page (each catalog model × accelerator, in every language) and report errors and time."""

from __future__ import annotations

import time

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.test import Client

from catalog.models import Accelerator, LLMModel


class Command(BaseCommand):
    help = "Render the report page of every model × accelerator in every language; exit 1 if any fails."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--language", action="append", help="only these languages (repeatable)")
        parser.add_argument("--model", action="append", help="only these model slugs (repeatable)")
        parser.add_argument("--hardware", action="append", help="only these accelerator slugs (repeatable)")

    def handle(self, *args, **options) -> None:
        languages = options["language"] or [code for code, _ in settings.LANGUAGES]
        models = LLMModel.objects.order_by("slug").values_list("slug", flat=True)
        if options["model"]:
            models = models.filter(slug__in=options["model"])
        accelerators = Accelerator.objects.order_by("slug").values_list("slug", flat=True)
        if options["hardware"]:
            accelerators = accelerators.filter(slug__in=options["hardware"])
        client = Client(SERVER_NAME=(settings.ALLOWED_HOSTS or ["localhost"])[0].lstrip("."))
        failures, pages, started = [], 0, time.perf_counter()
        for language in languages:
            for model in models:
                for hardware in accelerators:
                    url = f"/{language}/report/{model}/{hardware}/"
                    response = client.get(url)
                    pages += 1
                    if response.status_code != 200:
                        failures.append(f"{url} → {response.status_code}")
        elapsed = time.perf_counter() - started
        self.stdout.write(f"rendered {pages} report pages in {elapsed:.1f} s "
                          f"({elapsed / max(pages, 1) * 1000:.1f} ms per page), {len(failures)} failed")
        for failure in failures:
            self.stdout.write(f"  {failure}")
        if failures:
            raise CommandError(f"{len(failures)} report pages failed to render", returncode=1)
