from django.core.management.base import BaseCommand

from catalog.seed_loader import load_catalog


class Command(BaseCommand):
    help = "Load the seed catalog (catalog/seed/*.json): create what is missing, keep every admin edit."

    def handle(self, *args, **options) -> None:
        report = load_catalog()
        self.stdout.write(f"Catalog: {report.summary()}")
        for kept in report.kept_admin_edits:
            self.stdout.write(f"  kept admin edit: {kept}")
