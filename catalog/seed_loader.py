"""Load catalog/seed/*.json into the database: create what is missing, never overwrite an admin's edit.

Each seeded row keeps `seed_snapshot`, the values the seed last gave it. On a later load a field is updated only
when its current value still equals that snapshot (nobody changed it since); a field that differs was edited in
the admin and is kept. Rows an admin created by hand (empty snapshot) are never touched.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

from django.db import models, transaction

from catalog.models import Accelerator, CloudOffer, HardwarePrice, LLMModel, PublishedFileSize, QuantFormat

SEED_DIR = Path(__file__).resolve().parent / "seed"


@dataclass
class LoadReport:
    created: dict[str, int] = field(default_factory=dict)
    updated: dict[str, int] = field(default_factory=dict)
    kept_admin_edits: list[str] = field(default_factory=list)

    def count(self, bucket: dict[str, int], label: str) -> None:
        bucket[label] = bucket.get(label, 0) + 1

    def summary(self) -> str:
        created = ", ".join(f"{n} {label}" for label, n in sorted(self.created.items())) or "nothing"
        updated = ", ".join(f"{n} {label}" for label, n in sorted(self.updated.items())) or "nothing"
        return (f"created {created}; updated {updated}; "
                f"kept {len(self.kept_admin_edits)} field(s) edited in the admin")


def _comparable(value):
    """A JSON-safe form of a field value, equal for equal values (Decimal('1.50') == Decimal('1.5'))."""
    if isinstance(value, Decimal):
        return format(value.normalize(), "f")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, (dict, list)):
        return json.loads(json.dumps(value, sort_keys=True))
    return value


def _to_python(model_field: models.Field, raw):
    if raw is None:
        return None
    if isinstance(model_field, models.DecimalField) and isinstance(raw, float):
        raw = repr(raw)  # 0.69 stays 0.69, not the binary float's 0.68999999999999994671
    return model_field.to_python(raw)


def upsert(report: LoadReport, model_cls: type[models.Model], lookup: dict, values: dict) -> models.Model:
    """Create the row identified by `lookup`, or merge `values` into it field by field (see module doc)."""
    label = model_cls._meta.verbose_name_plural
    python_values = {name: _to_python(model_cls._meta.get_field(name), raw) for name, raw in values.items()}
    obj = model_cls.objects.filter(**lookup).first()
    if obj is None:
        obj = model_cls(**lookup, **python_values)
        obj.seed_snapshot = {name: _comparable(value) for name, value in python_values.items()}
        obj.full_clean()
        obj.save()
        report.count(report.created, label)
        return obj
    if not obj.seed_snapshot:
        return obj  # created by an admin: theirs
    snapshot, changed = dict(obj.seed_snapshot), False
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
        upsert(report, QuantFormat, {"name": row["name"]}, {
            "family": row["family"], "quality_note_en": _text(row, "quality_note_en"),
            "quality_note_de": _text(row, "quality_note_de"), "sort_order": row.get("sort_order", 100),
            "source": _text(row, "source")})

    accelerators: dict[str, Accelerator] = {}
    for row in _read("accelerators.json", seed_dir):
        values = {name: row.get(name) for name in ACCELERATOR_FIELDS}
        for text_field in ("memory_type", "architecture", "interconnect", "spec_sources", "notes"):
            values[text_field] = values[text_field] or ""
        accelerator = upsert(report, Accelerator, {"slug": row["slug"]}, values)
        accelerators[row["slug"]] = accelerator
        for price in row.get("prices") or []:
            upsert(report, HardwarePrice, {
                "accelerator": accelerator, "condition": price["condition"], "as_of": price["as_of"],
            }, {"usd": price["usd"], "source": price["source"], "note": _text(price, "note")[:200]})

    for row in _read("models.json", seed_dir):
        values = {name: row.get(name) for name in MODEL_FIELDS}
        for text_field in ("family", "vendor", "hf_repo", "gguf_repo", "gguf_repo_quants", "license", "notes"):
            values[text_field] = values[text_field] or ""
        model = upsert(report, LLMModel, {"slug": row["slug"]}, values)
        for size in row.get("published_sizes") or []:
            upsert(report, PublishedFileSize, {"model": model, "quant": size["quant"]},
                   {"size_bytes": int(size["bytes"]), "source": size["source"]})

    for row in _read("cloud_offers.json", seed_dir):
        slug = row["accelerator_slug"]
        accelerator = accelerators.get(slug) or Accelerator.objects.get(slug=slug)
        upsert(report, CloudOffer, {
            "provider": row["provider"], "instance": row["instance"], "accelerator": accelerator,
            "gpu_count": row.get("gpu_count", 1),
        }, {"hourly_usd": row["hourly_usd"], "billing": _text(row, "billing"), "verified": row["verified"],
            "verified_precision": row.get("verified_precision", "day"), "url": _text(row, "url"), "source": row["source"], "price_doubt": _text(row, "price_doubt"),
            "is_active": row.get("is_active", True)})
    return report
