"""Every visible string has German; every engine note code has a translated rendering."""

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


@pytest.mark.parametrize("code, params", sorted(documented_codes().items()))
def test_every_note_code_has_its_own_german_text(code, params):
    values = {name: 1 for name in params}
    note = Note(code, f"ENGLISH FALLBACK {code}", values)
    with translation.override("de"):
        rendered = render_to_string("reports/report/_note.html", {"note": note}).strip()
    assert rendered and "ENGLISH FALLBACK" not in rendered
