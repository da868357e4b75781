"""The GGUF repositories and their file types in catalog/seed/models.json are sourced, not guessed: a launch command
asks the repo for `repo:TYPE`, so a repo name or a type nobody read would print a command that fails."""

import json
from pathlib import Path

import pytest

from reports.sizing.quant import QUANT_FORMATS

ROWS = json.loads((Path(__file__).resolve().parents[1] / "catalog" / "seed" / "models.json").read_text("utf-8"))


def quants(row: dict) -> list[str]:
    return [tag.strip() for tag in (row.get("gguf_repo_quants") or "").split(",") if tag.strip()]


@pytest.mark.parametrize("row", [row for row in ROWS if row.get("gguf_repo")], ids=lambda row: row["slug"])
def test_every_gguf_repo_has_a_source_naming_it(row):
    """The repo id appears in the row's source or notes, next to where it was read (README, model card, listing)."""
    assert row["gguf_repo"] in row["source"] + " " + row["notes"]


@pytest.mark.parametrize("row", [row for row in ROWS if row.get("gguf_repo_quants")], ids=lambda row: row["slug"])
def test_gguf_repo_quants_are_known_file_types_of_a_named_repo(row):
    """Each tag is a format the engine knows by that exact name (reports/sizing/quant.py QUANT_FORMATS: the tag is
    both llama.cpp's -hf tag and the page's quant), listed once, and the listing belongs to a repo."""
    tags = quants(row)
    assert row["gguf_repo"]
    assert [tag for tag in tags if tag not in QUANT_FORMATS] == []
    assert len(tags) == len(set(tags))
    assert row["gguf_repo"] in row["notes"] and all(tag in row["notes"] for tag in tags)  # the listing is cited


def test_the_seed_names_gguf_repos_for_the_popular_models():
    """The families a visitor sizes most have a repo to download from (was 6 of 83 models)."""
    with_repo = {row["slug"] for row in ROWS if row.get("gguf_repo")}
    assert {"qwen3-32b", "qwen3-8b", "qwen3-coder-30b-a3b", "llama-3-3-70b-instruct", "deepseek-v3-0324",
            "deepseek-r1-0528", "gpt-oss-20b", "gemma-3-4b-it", "kimi-k2-instruct", "glm-4-5-air"} <= with_repo
    assert len(with_repo) >= 28
