"""Numbers inside the engine's formula texts (the "how it was computed" tables, in both languages).

The formulas are code-like English in every language, so their numbers cannot follow one locale: "98,304 B/token"
reads as 98.3 on a German page, "98.304" as 98.3 on an English one. Digits are grouped with a narrow no-break
space instead, the SI/ISO 80000-1 convention that reads the same in both ("98 304 B/token"); decimals keep the
point, as code does.
"""

from __future__ import annotations

GROUP_SEPARATOR = "\u202f"  # NARROW NO-BREAK SPACE


def grouped(value: float) -> str:
    """12345 → "12 345" (narrow no-break spaces); 0.5625 → "0.5625"; 1234.5 → "1 234" (4 significant digits)."""
    if float(value).is_integer():
        return f"{int(value):,}".replace(",", GROUP_SEPARATOR)
    return f"{value:,.4g}".replace(",", GROUP_SEPARATOR)


def sequences(count: int) -> str:
    """'1 sequence', '4 sequences' (the batch in a formula cell)."""
    return f"{count} sequence" if count == 1 else f"{count} sequences"


def times_gpus(tp: int) -> str:
    """' × 8 GPUs' when a per-GPU figure is summed over tensor-parallel ranks, else ''."""
    return f" × {tp} GPUs" if tp > 1 else ""
