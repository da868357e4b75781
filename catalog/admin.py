from __future__ import annotations

import json

from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from catalog.architecture import ARCHITECTURE_FIELDS
from catalog.forms import (
    ConcurrencyCheckedForm, ConcurrencyCheckedFormSet, ConfigImportForm, LLMModelAdminForm, StaleEdit,
)
from catalog.models import (
    Accelerator, CloudOffer, HardwarePrice, LLMModel, PriceRecord, PublishedFileSize, QuantFormat, SlugRedirect,
    SubmittedConfig,
)
from catalog.submissions import promote_submitted_config


class ConcurrencyCheckedAdmin(admin.ModelAdmin):
    """Change forms and list_editable rows refuse to save over a newer save (ConcurrencyCheckedForm)."""

    form = ConcurrencyCheckedForm

    def get_changelist_form(self, request, **kwargs):
        kwargs.setdefault("form", ConcurrencyCheckedForm)
        return super().get_changelist_form(request, **kwargs)

    def get_changelist_formset(self, request, **kwargs):
        kwargs.setdefault("formset", ConcurrencyCheckedFormSet)
        return super().get_changelist_formset(request, **kwargs)

    def save_model(self, request, obj, form, change):
        if isinstance(form, ConcurrencyCheckedForm):
            form.claim_row()
        super().save_model(request, obj, form, change)

    def save_formset(self, request, form, formset, change):
        stale = []
        for inline_form in formset.forms:
            if isinstance(inline_form, ConcurrencyCheckedForm) and inline_form.has_changed():
                try:
                    inline_form.claim_row()
                except StaleEdit as error:
                    stale += error.objects
        if stale:
            raise StaleEdit(stale)
        super().save_formset(request, form, formset, change)

    # The admin saves a change form (with its inlines) and a changelist's rows in one transaction: a StaleEdit from
    # claim_row rolls all of it back, and the page says so instead of answering 500.
    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except StaleEdit as error:
            return self._refuse_stale(request, error)

    def changelist_view(self, request, extra_context=None):
        try:
            return super().changelist_view(request, extra_context)
        except StaleEdit as error:
            return self._refuse_stale(request, error)

    def _refuse_stale(self, request, error: StaleEdit) -> HttpResponse:
        messages.error(request, _("Changed by someone else while you were saving, so nothing was saved: %(objects)s. "
                                  "The page shows the current values; make your changes again.")
                       % {"objects": "; ".join(error.objects)})
        return HttpResponseRedirect(request.get_full_path())


class PublishedFileSizeInline(admin.TabularInline):
    model = PublishedFileSize
    form = ConcurrencyCheckedForm  # an inline row saved by someone else since the page was opened is not overwritten
    extra = 0
    fields = ("quant", "size_bytes", "source", "edit_base")


@admin.register(LLMModel)
class LLMModelAdmin(ConcurrencyCheckedAdmin):
    form = LLMModelAdminForm
    list_display = ("name", "vendor", "architecture", "attention_kind", "params_display", "max_context",
                    "confidence", "updated_at")
    list_filter = ("confidence", "attention_kind", "vendor", "native_dtype")
    search_fields = ("name", "slug", "hf_repo", "family", "vendor")
    prepopulated_fields = {"slug": ("name",)}
    readonly_fields = ARCHITECTURE_FIELDS + ("updated_at",)
    inlines = [PublishedFileSizeInline]
    fieldsets = (
        (None, {"fields": ("name", "slug", "family", "vendor", "license", "release_date")}),
        (_("Sources"), {"fields": ("hf_repo", "gguf_repo", "gguf_repo_quants", "source", "confidence", "notes")}),
        (_("Parameters as published"), {"fields": ("stated_params_total", "stated_params_active")}),
        (_("config.json"), {"fields": ("config",)}),
        (_("Derived architecture (from config.json)"), {"classes": ("collapse",), "fields": ARCHITECTURE_FIELDS}),
        (None, {"fields": ("updated_at", "edit_base")}),
    )
    change_list_template = "admin/catalog/llmmodel/change_list.html"

    @admin.display(description=_("parameters (stated)"), ordering="stated_params_total")
    def params_display(self, obj: LLMModel) -> str:
        if not obj.stated_params_total:
            return "—"
        total = f"{obj.stated_params_total / 1e9:g} B"
        if obj.stated_params_active and obj.stated_params_active != obj.stated_params_total:
            return f"{total} / {obj.stated_params_active / 1e9:g} B"
        return total

    def get_urls(self):
        return [
            path("import-config/", self.admin_site.admin_view(self.import_config_view),
                 name="catalog_llmmodel_import_config"),
        ] + super().get_urls()

    def import_config_view(self, request: HttpRequest) -> HttpResponse:
        """Paste or upload a config.json: preview the derived architecture, then create the model in one step."""
        if not self.has_add_permission(request):
            return HttpResponseRedirect(reverse("admin:index"))
        form = ConfigImportForm(request.POST or None, request.FILES or None)
        preview = None
        if request.method == "POST" and form.is_valid():
            if "save" in request.POST:
                with transaction.atomic():
                    model = form.save()
                self.log_addition(request, model, [{"added": {}}])
                messages.success(request, _("Imported %(name)s from its config.json.") % {"name": model.name})
                return HttpResponseRedirect(reverse("admin:catalog_llmmodel_change", args=[model.pk]))
            preview = form.preview()
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": _("Import a model from config.json"),
            "form": form,
            "preview": preview,
            "preview_json": json.dumps(form.cleaned_config, indent=1) if preview else "",
        }
        return TemplateResponse(request, "admin/catalog/llmmodel/import_config.html", context)


class HardwarePriceInline(admin.TabularInline):
    model = HardwarePrice
    form = ConcurrencyCheckedForm
    extra = 0
    fields = ("condition", "usd", "as_of", "source", "note", "edit_base")


@admin.register(Accelerator)
class AcceleratorAdmin(ConcurrencyCheckedAdmin):
    list_display = ("name", "vendor", "memory_gb", "bandwidth_gbs", "fp16_tflops", "tdp_w", "kind", "backend",
                    "price_history_link")
    list_filter = ("vendor", "kind", "backend", "memory_type")
    search_fields = ("name", "slug", "vendor")
    prepopulated_fields = {"slug": ("name",)}
    readonly_fields = ("updated_at",)
    inlines = [HardwarePriceInline]

    @admin.display(description=_("prices"))
    def price_history_link(self, obj: Accelerator) -> str:
        url = reverse("admin:catalog_accelerator_price_history", args=[obj.pk])
        return format_html('<a href="{}">{}</a>', url, _("history"))

    def get_urls(self):
        return [
            path("<int:pk>/price-history/", self.admin_site.admin_view(self.price_history_view),
                 name="catalog_accelerator_price_history"),
        ] + super().get_urls()

    def price_history_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        accelerator = get_object_or_404(Accelerator, pk=pk)
        if not self.has_view_permission(request, accelerator):
            return HttpResponseRedirect(reverse("admin:index"))
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "original": accelerator,
            "title": _("Price history of %(name)s") % {"name": accelerator.name},
            "records": accelerator.price_records.select_related("hardware_price", "cloud_offer"),
        }
        return TemplateResponse(request, "admin/catalog/accelerator/price_history.html", context)


@admin.register(HardwarePrice)
class HardwarePriceAdmin(ConcurrencyCheckedAdmin):
    list_display = ("accelerator", "condition", "usd", "as_of", "source_short")
    list_display_links = ("accelerator",)
    list_editable = ("usd", "as_of")
    list_filter = ("condition", "accelerator__vendor")
    search_fields = ("accelerator__name", "source")
    list_select_related = ("accelerator",)
    autocomplete_fields = ("accelerator",)
    ordering = ("accelerator__name", "condition", "-as_of", "id")

    @admin.display(description=_("source"))
    def source_short(self, obj: HardwarePrice) -> str:
        return obj.source[:80]


@admin.register(CloudOffer)
class CloudOfferAdmin(ConcurrencyCheckedAdmin):
    list_display = ("provider", "instance", "accelerator", "gpu_count", "hourly_usd", "verified",
                    "verified_precision", "billing", "is_active")
    list_display_links = ("provider",)
    list_editable = ("hourly_usd", "verified", "is_active")
    list_filter = ("provider", "is_active", "accelerator__vendor")
    search_fields = ("provider", "instance", "accelerator__name")
    list_select_related = ("accelerator",)
    autocomplete_fields = ("accelerator",)
    ordering = ("provider", "accelerator__name", "gpu_count", "id")


@admin.register(PriceRecord)
class PriceRecordAdmin(admin.ModelAdmin):
    """Read-only: the history is written by saving prices and offers, never edited."""

    list_display = ("recorded_at", "accelerator", "label", "usd", "as_of")
    list_filter = ("accelerator__vendor",)
    search_fields = ("accelerator__name", "label")
    list_select_related = ("accelerator",)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


@admin.register(QuantFormat)
class QuantFormatAdmin(admin.ModelAdmin):
    list_display = ("name", "family", "sort_order", "quality_note_en")
    list_editable = ("sort_order",)
    list_filter = ("family",)
    search_fields = ("name",)


@admin.register(PublishedFileSize)
class PublishedFileSizeAdmin(admin.ModelAdmin):
    list_display = ("model", "quant", "size_bytes", "source")
    list_select_related = ("model",)
    search_fields = ("model__name", "quant")
    autocomplete_fields = ("model",)


@admin.register(SlugRedirect)
class SlugRedirectAdmin(admin.ModelAdmin):
    """Written when a slug changes; an admin may delete one to free an old URL."""

    list_display = ("kind", "old_slug", "new_slug", "created_at")
    list_filter = ("kind",)
    search_fields = ("old_slug", "new_slug")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


admin.site.site_header = _("LLM Sizer catalog")
admin.site.site_title = _("LLM Sizer admin")


@admin.register(SubmittedConfig)
class SubmittedConfigAdmin(admin.ModelAdmin):
    """Configs visitors pasted. Promote one to the catalog in one step (it stays linked to the model it became)."""

    list_display = ("name", "short_hash", "architecture_display", "created_at", "promoted_to")
    list_filter = ("created_at",)
    search_fields = ("name", "sha256")
    readonly_fields = ("sha256", "name", "config", "created_at", "promoted_to")
    actions = ["promote"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # configs arrive through the public /config/ page

    @admin.display(description=_("architecture"))
    def architecture_display(self, obj: SubmittedConfig) -> str:
        return str(obj.config.get("model_type", "")) if isinstance(obj.config, dict) else ""

    @admin.action(description=_("Promote to catalog models"), permissions=["change"])
    def promote(self, request: HttpRequest, queryset) -> None:
        for submitted in queryset:
            try:
                with transaction.atomic():
                    model = promote_submitted_config(submitted)
            except ValidationError as error:
                messages.error(request, _("%(name)s was not promoted: %(errors)s") % {
                    "name": submitted.name, "errors": "; ".join(error.messages)})
                continue
            self.log_addition(request, model, [{"added": {}}])
            messages.success(request, format_html(
                '{} <a href="{}">{}</a>', _("Promoted to the catalog:"),
                reverse("admin:catalog_llmmodel_change", args=[model.pk]), model.name))
