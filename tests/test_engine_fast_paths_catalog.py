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


@pytest.mark.parametrize("scenario", [
    {"quant": "Q4_K_M", "context": 8192},
    {"quant": "Q8_0", "context": 32768, "batch": 4, "gpus": 2, "offload_pct": 30.0},
    {"quant": "BF16", "context": 131072, "engine": "vllm", "kv_dtype": "fp8", "batch": 16, "gpus": 8, "depth": 4096},
], ids=["default", "offload", "vllm"])
def test_one_streams_decode_is_decode_speeds_first_answer(seed_models, scenario):
    """stream_decode_speed (the matrix's rows, recommendations, the model and hardware pages) leaves out the
    aggregate of the streams: its one-stream decode is decode_speeds' own, to the last bit, on every catalog model."""
    from reports.sizing.estimate import decode_speeds, plan_memory, stream_decode_speed
    from reports.sizing.parameters import count_parameters
    from reports.sizing.specs import Scenario

    snapshot = CatalogSnapshot()
    compared = 0
    for spec in seed_models:
        for hardware in (snapshot.accelerator("rtx-4090"), snapshot.accelerator("h100-80gb-sxm")):
            try:
                plan = plan_memory(spec, hardware, Scenario(**scenario))
            except SizingError:
                continue
            params = count_parameters(spec)
            decode, _ = decode_speeds(spec, hardware, Scenario(**scenario), plan, params)
            assert stream_decode_speed(spec, hardware, Scenario(**scenario), plan, params) == decode, spec.slug
            compared += 1
    assert compared > 50
