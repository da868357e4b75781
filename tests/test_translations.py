"""Every visible string has German; every engine note code has a translated rendering."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from babel.messages.pofile import read_po
from django.template.loader import render_to_string
from django.utils import translation

from reports.sizing.notes import Note, documented_codes

LOCALE = Path(__file__).resolve().parent.parent / "locale"


def test_every_german_message_is_translated():
    with (LOCALE / "de" / "LC_MESSAGES" / "django.po").open("rb") as handle:
        catalog = read_po(handle)
    untranslated = [message.id for message in catalog
                    if message.id and (not all(message.string if isinstance(message.string, tuple)
                                               else [message.string]) or message.fuzzy)]
    assert untranslated == []


PLACEHOLDER = re.compile(r"%\((\w+)\)[sdif]")


def test_german_messages_keep_every_placeholder():
    """A translation that drops a placeholder shows a fixed value where the English shows the computed one (it
    happened: "at %(quant)s with %(context)s context" had become "in Q4_K_M mit 8K Kontext"). The singular of a
    plural may leave out the count ("Ein Modell")."""
    with (LOCALE / "de" / "LC_MESSAGES" / "django.po").open("rb") as handle:
        catalog = read_po(handle)
    mismatched = []
    for message in catalog:
        if not message.id:
            continue
        ids = message.id if isinstance(message.id, tuple) else (message.id,)
        forms = message.string if isinstance(message.string, tuple) else (message.string,)
        expected = set().union(*(PLACEHOLDER.findall(text) for text in ids))
        for index, form in enumerate(forms):
            # The singular may leave out the count, and must leave out what only the plural's English has (babel's
            # check, test_babel_finds_no_error_in_either_catalog).
            optional = ({"n", "count"} | set(PLACEHOLDER.findall(ids[-1])) - set(PLACEHOLDER.findall(ids[0]))
                        if len(forms) > 1 and index == 0 else set())
            found = set(PLACEHOLDER.findall(form))
            if found - expected or (expected - optional) - found:
                mismatched.append((ids[0], form))
    assert mismatched == []


def test_babel_finds_no_error_in_either_catalog():
    """What `pybabel compile` (make run) checks: a German singular used the plural's %(sequences)s, which its English
    singular lacks; compile reported "1 errors encountered" and went on."""
    errors = []
    for language in ("de", "en"):
        with (LOCALE / language / "LC_MESSAGES" / "django.po").open("rb") as handle:
            catalog = read_po(handle, locale=language)
        errors += [(language, message.id, [str(error) for error in found]) for message, found in catalog.check()]
    assert errors == []


@pytest.mark.parametrize("code, params", sorted(documented_codes().items()))
def test_every_note_code_has_its_own_german_text(code, params):
    values = {name: 1 for name in params}
    note = Note(code, f"ENGLISH FALLBACK {code}", values)
    with translation.override("de"):
        rendered = render_to_string("reports/report/_note.html", {"note": note}).strip()
    assert rendered and "ENGLISH FALLBACK" not in rendered


def _message_keys(path: Path) -> set[tuple]:
    with path.open("rb") as handle:
        return {(message.id, message.context) for message in read_po(handle) if message.id}


@pytest.mark.skipif(shutil.which("xgettext") is None,
                    reason="GNU gettext (xgettext) is missing: `make test` installs Debian's gettext")
def test_the_catalogs_hold_exactly_what_makemessages_extracts(tmp_path):
    """Every message of the code and the templates is in both catalogs, and no catalog keeps one the code no longer
    has. test_every_german_message_is_translated only sees the .po as committed: a {% translate %} added without
    running makemessages showed English on the German page and passed it. makemessages runs on a copy of the tree
    (it rewrites the .po files it finds) as README.md's "Translations" runs it."""
    root = LOCALE.parent
    copy = tmp_path / "tree"
    ignore = shutil.ignore_patterns(".*", "var", "node_modules", "__pycache__", "*.mo")
    shutil.copytree(root, copy, ignore=ignore)
    environment = {**os.environ, "SECRET_KEY": "makemessages-" + "x" * 40, "DJANGO_SETTINGS_MODULE": "sizer_site.settings"}
    environment.pop("DATABASE_URL", None)
    run = subprocess.run([sys.executable, "manage.py", "makemessages", "-l", "de", "-l", "en", "--no-obsolete"],
                         cwd=copy, env=environment, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    for language in ("de", "en"):
        relative = Path(language) / "LC_MESSAGES" / "django.po"
        committed, extracted = _message_keys(LOCALE / relative), _message_keys(copy / "locale" / relative)
        assert sorted(map(str, extracted - committed)) == [], f"{language}: not in the catalog (run makemessages)"
        assert sorted(map(str, committed - extracted)) == [], f"{language}: no longer in the code (obsolete)"
