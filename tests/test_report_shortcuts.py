"""The report page's shortcuts must give exactly what the plain computation gives: the query strings of its links
(report.query_string against urllib's urlencode), ..."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from reports.report import query_string

QUERIES = (
    [],
    [("quant", "Q4_K_M"), ("context", "32768"), ("engine", "llama.cpp"), ("kv_dtype", "q8_0"), ("offload", "auto")],
    [("name", "My RTX 4090 (modded)"), ("vendor", "NVIDIA & Co"), ("budget", "1,800"), ("hours", "0.5")],
    [("a b", "x+y=z"), ("path", "/en/report/"), ("tilde", "~_.-"), ("empty", ""), ("umlaut", "Größe"), ("pct", "50%")],
    [("gpus", 8), ("share", 0.95), ("usable_pct", 87.5), ("bytes", b"a b"), ("none", None)],
)


@pytest.mark.parametrize("pairs", QUERIES)
def test_query_string_is_urlencode(pairs):
    assert query_string(pairs) == urlencode(pairs)
