"""Visitors' config.json files: validated, stored by content hash, turned into engine specs."""

from __future__ import annotations

import hashlib
import json

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _
from django.utils.text import slugify

from catalog.models import LLMModel, SubmittedConfig
from reports.sizing.config_parser import parse_config
from reports.sizing.parameters import count_parameters
from reports.sizing.specs import ModelSpec

# URLs carry the first 16 hex digits (64 bits): collisions are out of reach for any realistic number of configs,
# and the full hash stays unique in the database.
URL_HASH_LENGTH = 16
DEFAULT_NAME = "Custom model"


def canonical_json(config: dict) -> str:
    """One text per config whatever its key order or spacing, so the same config always gets the same URL."""
    return json.dumps(config, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def config_hash(config: dict) -> str:
    return hashlib.sha256(canonical_json(config).encode("utf-8")).hexdigest()


def display_name(config: dict) -> str:
    """The model's name as the config gives it (`_name_or_path`, e.g. "Qwen/Qwen3-8B" → "Qwen3-8B")."""
    raw = config.get("_name_or_path")
    if isinstance(raw, str) and raw.strip():
        return raw.strip().rstrip("/").rsplit("/", 1)[-1][:120]
    return DEFAULT_NAME


def submit_config(config: dict) -> SubmittedConfig:
    """Store a validated config (see catalog.forms.load_config_json) once; the same content returns the same row."""
    digest = config_hash(config)
    existing = SubmittedConfig.objects.filter(sha256=digest).first()
    if existing:
        return existing
    try:
        with transaction.atomic():
            return SubmittedConfig.objects.create(sha256=digest, config=config, name=display_name(config))
    except IntegrityError:  # submitted concurrently by someone else — or a database check failed
        concurrent = SubmittedConfig.objects.filter(sha256=digest).first()
        if concurrent is None:
            raise
        return concurrent


def find_submitted(short_hash: str) -> SubmittedConfig | None:
    if len(short_hash) < URL_HASH_LENGTH or any(c not in "0123456789abcdef" for c in short_hash):
        return None
    return SubmittedConfig.objects.filter(sha256__startswith=short_hash[:64]).first()


def submitted_spec(row: SubmittedConfig) -> ModelSpec:
    return parse_config(row.config, slug=f"config-{row.short_hash}", name=row.name)


def catalog_name(submitted: SubmittedConfig) -> str:
    """The name a promoted config gets: its own (`_name_or_path`), or, for a config without one, its architecture,
    size and hash ("llama 8.03B (config 1a2b3c4d)"), so that promoted configs are told apart."""
    if submitted.name != DEFAULT_NAME:
        return submitted.name
    params = count_parameters(submitted_spec(submitted))
    architecture = str(submitted.config.get("model_type") or "model")[:40]
    return f"{architecture} {params.total / 1e9:.3g}B (config {submitted.short_hash[:8]})"


def promote_submitted_config(submitted: SubmittedConfig) -> LLMModel:
    """A catalog model from a submitted config (ValidationError when it was promoted already, its slug is taken or
    the config is invalid)."""
    if submitted.promoted_to_id is not None:
        raise ValidationError(_("It is in the catalog already, as %(name)s.") % {"name": submitted.promoted_to})
    name = catalog_name(submitted)
    base = slugify(name) or f"config-{submitted.short_hash}"
    slug = base if not LLMModel.objects.filter(slug=base).exists() else f"{base}-{submitted.short_hash[:8]}"
    model = LLMModel(
        name=name, slug=slug, confidence=LLMModel.Confidence.CONFIG, config=submitted.config,
        source=f"config.json submitted on the site (sha256 {submitted.sha256}), promoted in the admin",
    )
    model.full_clean()
    model.save()
    submitted.promoted_to = model
    submitted.save(update_fields=["promoted_to"])
    return model
