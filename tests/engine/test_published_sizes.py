"""The catalog's published GGUF sizes against their sources' units and against the per-tensor rules."""

import json
import re
from pathlib import Path

import pytest

from bench import seed_catalog
from reports.sizing.errors import SizingError
from reports.sizing.quant import quant_format
from reports.sizing.weights import weight_bytes

GIB = 2**30
SEED = Path(__file__).resolve().parents[2] / "catalog" / "seed" / "models.json"
UNITS = {"GiB": GIB, "GB": 1e9}
# Published files that are not what llama-quantize makes of the model's checkpoint, so the rules size them apart.
NOT_LLAMA_QUANTIZE = {
    # The QAT checkpoint's Q4_0 (llama.cpp benches/dgx-spark.md, 2.35 GiB of tensors): 0.15 GiB above the rules'
    # 2.195 GiB, whose token embedding is llama-quantize's Q6_K for a tied output.
    ("gemma-3-4b-it", "Q4_0"),
}


def _published():
    models = json.loads(SEED.read_text())
    models = models if isinstance(models, list) else models["models"]
    return [(m["slug"], p) for m in models for p in m.get("published_sizes", [])]


@pytest.mark.parametrize("slug, size", _published(), ids=lambda v: v if isinstance(v, str) else v["quant"])
def test_published_size_is_its_source_figure_in_its_unit(slug, size):
    # Each source ends with the figure it gives and that figure's unit ("— 298 GiB", "— 11.5 GB"); the bytes are
    # that figure to its last digit, so a GB figure stored as GiB (×1.0737) cannot pass.
    value, unit = re.findall(r"(\d+(?:\.\d+)?) (GiB|GB)\b", size["source"])[-1]
    half_digit = 0.5 * 10 ** -len(value.partition(".")[2]) * UNITS[unit]
    assert abs(size["bytes"] - float(value) * UNITS[unit]) <= half_digit


@pytest.mark.parametrize("slug, size", _published(), ids=lambda v: v if isinstance(v, str) else v["quant"])
def test_published_size_of_a_standard_type_matches_the_rules(slug, size):
    """Where llama.cpp's per-tensor rules size the same type, a published file agrees with them within 1 %
    (all do within 0.6 %), so the unit read for a source is the one the file has: DeepSeek-V3's Q3_K_M, "298 GB"
    in unsloth's README, is 298 GiB = 319,975,063,552 B against 297.34 GiB by the rules; read as 298 × 10⁹ B it
    would be 6.7 % below them."""
    spec = seed_catalog.model(slug)
    try:
        fmt = quant_format(size["quant"])
    except SizingError:
        pytest.skip("a recipe the rules do not know (unsloth's Q2_K_L, Q2_K_XS)")
    if fmt.family != "gguf" or not spec.has_shapes or (slug, size["quant"]) in NOT_LLAMA_QUANTIZE:
        pytest.skip("no rule for this file")
    rule = weight_bytes(spec, size["quant"]).file_bytes
    assert size["bytes"] / rule == pytest.approx(1, abs=0.01)
    if (slug, size["quant"]) == ("deepseek-v3-0324", "Q3_K_M"):
        assert size["bytes"] == 298 * GIB and 298e9 / rule < 0.94


def test_the_qat_file_is_the_only_standard_type_apart_from_its_rules():
    # gemma-3-4b-it Q4_0: published 2.35 GiB (tensor bytes, llama-bench) vs the rules' 2.195 GiB tensor bytes:
    # Q6_K token embedding 262,208 × 2,560 × 6.5625 / 8 B = 550,636,800 B; a Q8_0 one (8.5 bits) would add
    # 671,252,480 × 1.9375 / 8 = 162,569,460 B = 0.151 GiB → 2.346 GiB, the published figure to its digits.
    spec = seed_catalog.model("gemma-3-4b-it")
    tensors = weight_bytes(spec, "Q4_0").total_bytes
    assert round(tensors / GIB, 3) == 2.195
    assert round((tensors + 671_252_480 * 1.9375 / 8) / GIB, 2) == 2.35
