"""The engine's shortcuts checked on every catalog model (the seed catalog): each gives, to the last bit, what the
plain computation it replaces gives."""

from __future__ import annotations

import pytest

from reports.estimates import CatalogSnapshot
from reports.sizing.errors import SizingError
from reports.sizing.parallelism import _rank_split, rank_share
from reports.sizing.weights import sized_tensors


@pytest.fixture
def seed_models(db):
    snapshot = CatalogSnapshot()
    return [snapshot.model(slug) for slug in snapshot.model_slugs]


def _rank_split_tensor_by_tensor(spec, quant, tp, include_mtp):
    """parallelism._rank_split as it was: rank_share of each tensor, summed in tensor order."""
    sharded = replicated = per_rank = per_rank_experts = 0.0
    for item in sized_tensors(spec, quant, include_mtp=include_mtp):
        share = rank_share(spec, item.tensor, tp)
        if share >= 1.0:
            replicated += item.nbytes
        else:
            sharded += item.nbytes
        per_rank += item.nbytes * share
        if item.tensor.is_expert:
            per_rank_experts += item.nbytes * share
    return sharded, replicated, per_rank, per_rank_experts


@pytest.mark.parametrize("quant", ["BF16", "FP8", "Q4_K_M", "MXFP4"])
def test_rank_split_by_rules_is_the_tensor_by_tensor_sum(seed_models, quant):
    """_rank_split looks each tensor's share up by its split rule (one per tensor for every format and rank count);
    the four sums must be the same floats as rank_share's, tensor by tensor (GLM's MTP block included)."""
    compared = 0
    for spec in seed_models:
        if not spec.has_shapes:
            continue
        for include_mtp in (False, True) if spec.mtp_layers else (False,):
            for tp in (1, 2, 3, 4, 8, 16):
                try:
                    expected = _rank_split_tensor_by_tensor(spec, quant, tp, include_mtp)
                except SizingError:
                    continue  # e.g. MXFP4 of a model without experts
                assert _rank_split.__wrapped__(spec, quant, tp, include_mtp) == expected, (spec.slug, quant, tp)
                compared += 1
    assert compared > 150
