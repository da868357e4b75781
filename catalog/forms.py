from __future__ import annotations

import json
import math
from datetime import datetime

from django import forms
from django.core.exceptions import NON_FIELD_ERRORS, ValidationError
from django.db import router, transaction
from django.utils.text import slugify
from django.utils.translation import gettext_lazy as _

from catalog.architecture import architecture_fields
from catalog.models import LLMModel
from reports.sizing.config_parser import parse_config
from reports.sizing.errors import ConfigError

# A real config.json is a few KB (DeepSeek-V3's is ~1.7 KB; the largest with per-layer lists ~20 KB).
MAX_CONFIG_BYTES = 256 * 1024


# Real configs nest 3–4 levels (text_config → rope_scaling → …); databases refuse JSON past ~1,000 (SQLite's
# JSON_VALID), so anything deeper than this is refused up front, with a message.
MAX_CONFIG_DEPTH = 32


def _nesting_depth(value) -> int:
    """Deepest nesting of dicts and lists, without recursion (a hostile body may nest thousands of levels)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth)
            if deepest > MAX_CONFIG_DEPTH:
                return deepest
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return deepest


def _finite_float(text: str) -> float:
    """JSON numbers only: 1e999 would become infinity, which no database JSON column (and no config) holds."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text} is out of range")
    return value


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number")


# Integers in configs are counts and token ids (vocab_size 262,144; a uint64 seed has 20 digits); Python refuses to
# read one past 4,300 digits with an error naming its own internals.
MAX_INTEGER_DIGITS = 100


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INTEGER_DIGITS:
        raise ValueError(f"a number has more than {MAX_INTEGER_DIGITS} digits")
    return int(text)


def load_config_json(text: str) -> dict:
    """Parse pasted or uploaded config.json text into a dict, or raise ValidationError saying what is wrong."""
    text = text.removeprefix("\ufeff")  # a byte-order mark some editors write (UTF-8 with BOM)
    if len(text.encode("utf-8", "surrogatepass")) > MAX_CONFIG_BYTES:
        raise ValidationError(_("config.json is larger than %(kb)d KB.") % {"kb": MAX_CONFIG_BYTES // 1024})
    try:
        config = json.loads(text, parse_float=_finite_float, parse_int=_bounded_int, parse_constant=_no_constant)
    except RecursionError as exc:
        raise ValidationError(_("config.json nests objects and lists deeper than %(depth)d levels.") % {
            "depth": MAX_CONFIG_DEPTH}) from exc
    except ValueError as exc:  # JSONDecodeError, an overlong integer, NaN/Infinity, a number beyond 1e308
        raise ValidationError(_("This is not valid JSON: %(error)s") % {"error": exc}) from exc
    try:
        json.dumps(config, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate escape such as "\ud800" is not text
        raise ValidationError(_("This is not valid JSON: %(error)s") % {"error": exc}) from exc
    if not isinstance(config, dict):
        raise ValidationError(_("A config.json is a JSON object ({…}), not a list or a single value."))
    if _nesting_depth(config) > MAX_CONFIG_DEPTH:
        raise ValidationError(_("config.json nests objects and lists deeper than %(depth)d levels.") % {
            "depth": MAX_CONFIG_DEPTH})
    try:
        parse_config(config)
    except ConfigError as exc:
        raise ValidationError(_("This config.json cannot be sized: %(reason)s") % {"reason": exc}) from exc
    return config


class ConfigJSONField(forms.JSONField):
    """The admin's config.json field with the public page's checks (load_config_json): no NaN or Infinity, no
    nesting past MAX_CONFIG_DEPTH, no overlong numbers, at most MAX_CONFIG_BYTES, a JSON object the engine sizes.
    Empty is allowed (a model sized from its stated parameters)."""

    def to_python(self, value):
        if self.disabled:
            return value
        if value in self.empty_values:
            return None
        if isinstance(value, dict):
            return value
        if not isinstance(value, str):
            raise ValidationError(_("A config.json is a JSON object ({…}), not a list or a single value."))
        if value.strip() in ("", "null"):
            return None
        return load_config_json(value)

    def bound_data(self, data, initial):
        if self.disabled:
            return initial
        if data is None:
            return None
        try:
            return load_config_json(data) if data.strip() not in ("", "null") else None
        except ValidationError:
            return forms.fields.InvalidJSONInput(data)


class ConfigImportForm(forms.Form):
    name = forms.CharField(label=_("Name"), max_length=120)
    slug = forms.SlugField(label=_("Slug"), max_length=120, required=False,
                           help_text=_("Leave empty to derive it from the name."))
    hf_repo = forms.CharField(label=_("Hugging Face repo"), max_length=200, required=False)
    source = forms.CharField(label=_("Source of this config.json"), widget=forms.Textarea(attrs={"rows": 2}))
    confidence = forms.ChoiceField(
        label=_("Confidence"),
        choices=[(LLMModel.Confidence.CONFIG, _("config.json")),
                 (LLMModel.Confidence.DOCUMENTATION, _("documentation"))])
    stated_params_total = forms.FloatField(label=_("Stated total parameters"), required=False, min_value=1)
    stated_params_active = forms.FloatField(label=_("Stated active parameters"), required=False, min_value=1)
    config_text = forms.CharField(label=_("config.json (paste)"), required=False,
                                  widget=forms.Textarea(attrs={"rows": 16, "spellcheck": "false"}))
    config_file = forms.FileField(label=_("…or upload config.json"), required=False)

    cleaned_config: dict | None = None

    def clean_slug(self) -> str:
        return self.cleaned_data.get("slug", "")

    def clean(self) -> dict:
        data = super().clean()
        upload = data.get("config_file")
        text = data.get("config_text") or ""
        if upload:
            if upload.size > MAX_CONFIG_BYTES:
                raise ValidationError({"config_file": _("config.json is larger than %(kb)d KB.") % {
                    "kb": MAX_CONFIG_BYTES // 1024}})
            try:
                text = upload.read().decode("utf-8-sig")
            except UnicodeDecodeError:
                raise ValidationError({"config_file": _("The file is not UTF-8 text.")}) from None
        if not text.strip():
            raise ValidationError({"config_text": _("Paste a config.json or upload the file.")})
        try:
            self.cleaned_config = load_config_json(text)
        except ValidationError as exc:
            raise ValidationError({"config_file" if upload else "config_text": exc.messages}) from None
        slug = data.get("slug") or slugify(data.get("name", ""))
        if not slug:
            raise ValidationError({"slug": _("Enter a slug (the name gives none).")})
        if LLMModel.objects.filter(slug=slug).exists():
            raise ValidationError({"slug": _("A model with the slug “%(slug)s” exists already.") % {"slug": slug}})
        data["slug"] = slug
        total, active = data.get("stated_params_total"), data.get("stated_params_active")
        if total and active and active > total:
            raise ValidationError({"stated_params_active": _("Active parameters cannot exceed total parameters.")})
        return data

    def preview(self) -> dict:
        """The derived architecture columns, as they would be saved."""
        data = self.cleaned_data
        return architecture_fields(self.cleaned_config, slug=data["slug"], name=data["name"])

    def build_instance(self) -> LLMModel:
        data = self.cleaned_data
        return LLMModel(
            name=data["name"], slug=data["slug"], hf_repo=data.get("hf_repo", ""), source=data["source"],
            confidence=data["confidence"], config=self.cleaned_config,
            stated_params_total=data.get("stated_params_total"),
            stated_params_active=data.get("stated_params_active"),
        )

    def save(self) -> LLMModel:
        model = self.build_instance()
        model.full_clean()
        model.save()
        return model


STALE_EDIT = "stale_edit"


class StaleEdit(Exception):
    """A row was saved by someone else between the form's check and its own save (ConcurrencyCheckedForm.claim_row);
    the admin rolls the whole save back and says which rows."""

    def __init__(self, objects: list[str]) -> None:
        super().__init__("; ".join(objects))
        self.objects = objects


class ConcurrencyCheckedForm(forms.ModelForm):
    """Optimistic concurrency for the admin: the form carries the row's `updated_at` as it was when the page was
    opened, and refuses to save when the row has been saved since (by another admin, or by load_catalog), instead
    of silently writing the stale values of every other field back over the newer ones.

    Checked twice. clean() refuses with the form and the visitor's input on the page (under a transaction, as the
    change form and its inlines are validated, it also locks the row until the save commits, on databases that lock
    rows). The save itself first claims the row (claim_row: an UPDATE that matches only the updated_at the form was
    opened with), which closes the window between check and save everywhere, including the changelist (validated
    outside its transaction) and SQLite (no row locks). A post without the field (a script, not the admin's pages)
    is not checked."""

    edit_base = forms.CharField(required=False, widget=forms.HiddenInput)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk and getattr(self.instance, "updated_at", None):
            self.fields["edit_base"].initial = self.instance.updated_at.isoformat()

    @property
    def stale(self) -> bool:
        return any(error.code == STALE_EDIT for error in self.errors.as_data().get(NON_FIELD_ERRORS, []))

    def _opened_at(self) -> datetime | None:
        base = (self.cleaned_data or {}).get("edit_base")
        if not (self.instance.pk and base):
            return None
        try:
            return datetime.fromisoformat(base)
        except ValueError:
            return None  # not a value this form wrote: clean() refused it

    def clean(self) -> dict:
        data = super().clean()
        base = data.get("edit_base")
        if self.instance.pk and base:
            rows = type(self.instance)._default_manager.filter(pk=self.instance.pk)
            if transaction.get_connection(router.db_for_write(type(self.instance))).in_atomic_block:
                rows = rows.select_for_update()
            current = rows.values_list("updated_at", flat=True).first()
            if current is not None and current.isoformat() != base:
                raise ValidationError(
                    _("%(object)s was changed by someone else after you opened this page. Your changes were not "
                      "saved: reload the page to see the current values, then make your changes again."),
                    code=STALE_EDIT, params={"object": str(self.instance)})
        return data

    def claim_row(self) -> None:
        """Right before the save, inside its transaction: take the row only if it is still as the form found it
        (an UPDATE matching the updated_at the page was opened with, atomic on every database); StaleEdit if
        someone saved it after clean() looked."""
        opened_at = self._opened_at()
        if opened_at is None:
            return
        model = type(self.instance)
        claimed = model._default_manager.filter(pk=self.instance.pk, updated_at=opened_at).update(updated_at=opened_at)
        if not claimed:  # saved by someone else since, or deleted (a save would insert the deleted row again)
            raise StaleEdit([str(self.instance)])


class ConcurrencyCheckedFormSet(forms.BaseModelFormSet):
    """The changelist's list_editable formset: it shows no error of a single row's form, so a row changed since the
    list was opened is named in the formset's own errors (shown above the list)."""

    def clean(self) -> None:
        super().clean()
        stale = [str(form.instance) for form in self.forms if getattr(form, "stale", False)]
        if stale:
            raise ValidationError(
                _("Changed by someone else after you opened this list, so nothing was saved: %(objects)s. Reload the "
                  "page to see the current values, then make your changes again."),
                code=STALE_EDIT, params={"objects": "; ".join(stale)})


class LLMModelAdminForm(ConcurrencyCheckedForm):
    config = ConfigJSONField(
        label=_("config.json"), required=False,
        help_text=_("The model's Hugging Face config.json. The architecture fields below are derived from it."))

    class Meta:
        model = LLMModel
        fields = "__all__"
