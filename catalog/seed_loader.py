"""Load catalog/seed/*.json into the database: create what is missing, never overwrite an admin's edit.

Each seeded row keeps `seed_snapshot`, the values the seed last gave it. On a later load a field is updated only
when its current value still equals that snapshot (nobody changed it since); a field that differs was edited in
the admin and is kept. Rows an admin created by hand (empty snapshot) are never touched.

Each seed row is created once: its key (`SeedKey`: the slug, or for a price the accelerator's slug, condition and
date) is recorded with the row it became, and later loads find that row by its id. So a row an admin renamed is
updated where it still holds the seed's values and is not created a second time, and a row an admin deleted stays
deleted. Seed rows whose key was never applied are created as before.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

from django.db import models, transaction

from catalog.models import (
    Accelerator, CloudOffer, HardwarePrice, LLMModel, PublishedFileSize, QuantFormat, SeedKey,
)

SEED_DIR = Path(__file__).resolve().parent / "seed"


@dataclass
class LoadReport:
    created: dict[str, int] = field(default_factory=dict)
    updated: dict[str, int] = field(default_factory=dict)
    kept_admin_edits: list[str] = field(default_factory=list)
    removed_by_admin: list[str] = field(default_factory=list)

    def count(self, bucket: dict[str, int], label: str) -> None:
        bucket[label] = bucket.get(label, 0) + 1

    def summary(self) -> str:
        created = ", ".join(f"{n} {label}" for label, n in sorted(self.created.items())) or "nothing"
        updated = ", ".join(f"{n} {label}" for label, n in sorted(self.updated.items())) or "nothing"
        return (f"created {created}; updated {updated}; "
                f"kept {len(self.kept_admin_edits)} field(s) edited in the admin; "
                f"left {len(self.removed_by_admin)} row(s) deleted in the admin")


def _comparable(value):
    """A JSON-safe form of a field value, equal for equal values (Decimal('1.50') == Decimal('1.5'))."""
    if isinstance(value, Decimal):
        return format(value.normalize(), "f")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, (dict, list)):
        return _json_numbers_as_floats(json.loads(json.dumps(value, sort_keys=True)))
    return value


# Beyond 2**53 an integer in JSON is a float's value written out: PostgreSQL's jsonb stores numbers as numeric and
# writes 1e+308 (Nemotron-H's time_step_limit) back as its 309 digits, which Python reads as an int unequal to the
# float. Compared as floats, a config loaded into PostgreSQL equals its seed, and a second load updates nothing.
_EXACT_FLOAT_INT = 2 ** 53


def _json_numbers_as_floats(value):
    if isinstance(value, dict):
        return {key: _json_numbers_as_floats(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_json_numbers_as_floats(item) for item in value]
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > _EXACT_FLOAT_INT:
        return float(value)
    return value


def _to_python(model_field: models.Field, raw):
    if raw is None:
        return None
    if isinstance(model_field, models.DecimalField) and isinstance(raw, float):
        raw = repr(raw)  # 0.69 stays 0.69, not the binary float's 0.68999999999999994671
    return model_field.to_python(raw)


def price_key(accelerator_slug: str, price: dict) -> str:
    return f"{accelerator_slug}|{price['condition']}|{price['as_of']}"


def size_key(model_slug: str, size: dict) -> str:
    return f"{model_slug}|{size['quant']}"


def offer_key(row: dict) -> str:
    return f"{row['provider']}|{row['instance']}|{row['accelerator_slug']}|{row.get('gpu_count', 1)}"


def upsert(report: LoadReport, model_cls: type[models.Model], key: str, lookup: dict,
           values: dict) -> models.Model | None:
    """Create the row of seed key `key` (identified by `lookup` the first time), or merge `values` into the row it
    became, field by field; None when an admin deleted that row (see module doc)."""
    label = model_cls._meta.verbose_name_plural
    kind = model_cls._meta.model_name
    python_values = {name: _to_python(model_cls._meta.get_field(name), raw) for name, raw in values.items()}
    applied = SeedKey.objects.filter(kind=kind, key=key).first()
    if applied is not None:
        obj = model_cls.objects.filter(pk=applied.object_id).first() if applied.object_id is not None else None
        if obj is None:
            report.removed_by_admin.append(f"{model_cls.__name__} {key}")
            return None
    else:
        obj = model_cls.objects.filter(**lookup).first()
        if obj is None:
            obj = model_cls(**lookup, **python_values)
            obj.seed_snapshot = {name: _comparable(value) for name, value in python_values.items()}
            obj.full_clean()
            obj.save()
            SeedKey.objects.create(kind=kind, key=key, object_id=obj.pk)
            report.count(report.created, label)
            return obj
        SeedKey.objects.create(kind=kind, key=key, object_id=obj.pk)
    if not obj.seed_snapshot:
        return obj  # created by an admin: theirs
    # The snapshot itself is jsonb on PostgreSQL: its large numbers come back as ints too.
    snapshot, changed = {name: _json_numbers_as_floats(value) for name, value in obj.seed_snapshot.items()}, False
    for name, new in python_values.items():
        current, new_cmp = _comparable(getattr(obj, name)), _comparable(new)
        if current == new_cmp:
            if snapshot.get(name) != new_cmp:
                snapshot[name], changed = new_cmp, True
            continue
        if name in snapshot and current != snapshot[name]:
            report.kept_admin_edits.append(f"{model_cls.__name__} {lookup}: {name}")
            continue
        setattr(obj, name, new)
        snapshot[name], changed = new_cmp, True
    if changed:
        obj.seed_snapshot = snapshot
        obj.full_clean()
        obj.save()
        report.count(report.updated, label)
    return obj


def _read(name: str, seed_dir: Path) -> list[dict]:
    with (seed_dir / name).open(encoding="utf-8") as handle:
        data = json.load(handle)
    return data if isinstance(data, list) else data["rows"]


ACCELERATOR_FIELDS = ("vendor", "name", "memory_gb", "memory_type", "bandwidth_gbs", "fp16_tflops",
                      "fp16_acc_tflops", "fp8_tflops", "tdp_w", "kind", "usable_memory_factor", "backend",
                      "architecture", "interconnect", "interconnect_gbs", "interconnect_mesh_peers", "launch_year",
                      "spec_sources", "notes")
MODEL_FIELDS = ("name", "family", "vendor", "hf_repo", "gguf_repo", "gguf_repo_quants", "license", "release_date",
                "config", "stated_params_total", "stated_params_active", "source", "confidence", "notes")


def _text(row: dict, key: str) -> str:
    return row.get(key) or ""


@transaction.atomic
def load_catalog(seed_dir: Path = SEED_DIR) -> LoadReport:
    report = LoadReport()
    for row in _read("quant_formats.json", seed_dir):
        upsert(report, QuantFormat, row["name"], {"name": row["name"]}, {
            "family": row["family"], "quality_note_en": _text(row, "quality_note_en"),
            "quality_note_de": _text(row, "quality_note_de"), "sort_order": row.get("sort_order", 100),
            "source": _text(row, "source")})

    accelerators: dict[str, Accelerator] = {}
    for row in _read("accelerators.json", seed_dir):
        values = {name: row.get(name) for name in ACCELERATOR_FIELDS}
        for text_field in ("memory_type", "architecture", "interconnect", "spec_sources", "notes"):
            values[text_field] = values[text_field] or ""
        accelerator = upsert(report, Accelerator, row["slug"], {"slug": row["slug"]}, values)
        if accelerator is None:
            continue  # deleted in the admin, with its prices
        accelerators[row["slug"]] = accelerator
        for price in row.get("prices") or []:
            upsert(report, HardwarePrice, price_key(row["slug"], price), {
                "accelerator": accelerator, "condition": price["condition"], "as_of": price["as_of"],
            }, {"usd": price["usd"], "source": price["source"], "note": _text(price, "note")[:200]})

    for row in _read("models.json", seed_dir):
        values = {name: row.get(name) for name in MODEL_FIELDS}
        for text_field in ("family", "vendor", "hf_repo", "gguf_repo", "gguf_repo_quants", "license", "notes"):
            values[text_field] = values[text_field] or ""
        model = upsert(report, LLMModel, row["slug"], {"slug": row["slug"]}, values)
        if model is None:
            continue
        for size in row.get("published_sizes") or []:
            upsert(report, PublishedFileSize, size_key(row["slug"], size), {"model": model, "quant": size["quant"]},
                   {"size_bytes": int(size["bytes"]), "source": size["source"]})

    for row in _read("cloud_offers.json", seed_dir):
        slug = row["accelerator_slug"]
        accelerator = accelerators.get(slug) or Accelerator.objects.filter(slug=slug).first()
        if accelerator is None:
            report.removed_by_admin.append(f"CloudOffer {offer_key(row)} (its accelerator was deleted)")
            continue
        upsert(report, CloudOffer, offer_key(row), {
            "provider": row["provider"], "instance": row["instance"], "accelerator": accelerator,
            "gpu_count": row.get("gpu_count", 1),
        }, {"hourly_usd": row["hourly_usd"], "billing": _text(row, "billing"), "verified": row["verified"],
            "verified_precision": row.get("verified_precision", "day"), "url": _text(row, "url"), "source": row["source"], "price_doubt": _text(row, "price_doubt"),
            "is_active": row.get("is_active", True)})
    return report


def seed_rows(seed_dir: Path) -> list[tuple[str, str, dict]]:
    """Every row of the seed files as (model name, seed key, lookup that finds the row a load created). Migration
    0009 keeps a frozen copy made with it (catalog/migrations/_seed_rows_0009.py), so a database migrated later
    records the keys of that seed only, never rows added to the seed since (load_catalog creates those)."""
    rows: list[tuple[str, str, dict]] = []
    for row in _read("quant_formats.json", seed_dir):
        rows.append(("QuantFormat", row["name"], {"name": row["name"]}))
    for row in _read("accelerators.json", seed_dir):
        rows.append(("Accelerator", row["slug"], {"slug": row["slug"]}))
        for price in row.get("prices") or []:
            rows.append(("HardwarePrice", price_key(row["slug"], price), {
                "accelerator__slug": row["slug"], "condition": price["condition"], "as_of": price["as_of"]}))
    for row in _read("models.json", seed_dir):
        rows.append(("LLMModel", row["slug"], {"slug": row["slug"]}))
        for size in row.get("published_sizes") or []:
            rows.append(("PublishedFileSize", size_key(row["slug"], size),
                         {"model__slug": row["slug"], "quant": size["quant"]}))
    for row in _read("cloud_offers.json", seed_dir):
        rows.append(("CloudOffer", offer_key(row), {
            "provider": row["provider"], "instance": row["instance"], "accelerator__slug": row["accelerator_slug"],
            "gpu_count": row.get("gpu_count", 1)}))
    return rows
