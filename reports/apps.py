from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ReportsConfig(AppConfig):
    name = "reports"
    verbose_name = _("Reports")

    def ready(self) -> None:
        # Pages are cached per catalog version: every catalog save or delete starts a new version.
        from django.db.models.signals import post_delete, post_save

        from reports.estimates import VERSIONED_MODELS, forget_catalog_version

        for model in VERSIONED_MODELS:
            post_save.connect(forget_catalog_version, sender=model, dispatch_uid=f"catalog-version-{model.__name__}")
            post_delete.connect(forget_catalog_version, sender=model,
                                dispatch_uid=f"catalog-version-delete-{model.__name__}")
