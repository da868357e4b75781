from django.core.management.base import BaseCommand

from catalog.seed_loader import load_catalog


class Command(BaseCommand):
    help = ("Load the seed catalog (catalog/seed/*.json): create new seed rows, keep every admin edit, "
            "rename and deletion.")

    def handle(self, *args, **options) -> None:
        report = load_catalog()
        self.stdout.write(f"Catalog: {report.summary()}")
        for kept in report.kept_admin_edits:
            self.stdout.write(f"  kept admin edit: {kept}")
        for removed in report.removed_by_admin:
            self.stdout.write(f"  not re-created (deleted in the admin): {removed}")
