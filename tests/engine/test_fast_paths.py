"""The engine's shortcuts on its hot paths (an uncached report page sizes ~50 plans): each gives exactly what the
plain computation it replaces gives."""

from dataclasses import fields, replace

import pytest

from reports.sizing.estimate import memory_scenario
from reports.sizing.specs import Scenario, scenario_with

# A value of the right type for every field, each different from its default.
CHANGED = {"quant": "BF16", "context": 32768, "batch": 4, "kv_dtype": "q8_0", "engine": "vllm", "gpus": 2,
           "offload_pct": 25.0, "depth": 1000, "prompt": 512, "gpu_memory_utilization": 0.8, "max_num_seqs": 64,
           "max_num_batched_tokens": 4096, "flash_attention": False, "n_ubatch": 1024, "swa_full": True,
           "system_ram_bandwidth_gbs": 60.0}


def test_changed_covers_every_field():
    assert set(CHANGED) == {f.name for f in fields(Scenario)}


@pytest.mark.parametrize("name", sorted(CHANGED))
def test_scenario_with_is_dataclasses_replace(name):
    base = Scenario(quant="Q8_0", context=4096, offload_pct=10.0)
    fast, plain = scenario_with(base, **{name: CHANGED[name]}), replace(base, **{name: CHANGED[name]})
    assert type(fast) is Scenario
    assert fast.__dict__ == plain.__dict__ and fast == plain and hash(fast) == hash(plain)
    assert base == Scenario(quant="Q8_0", context=4096, offload_pct=10.0)  # the original is untouched


def test_scenario_with_all_fields_at_once_and_none():
    base = Scenario()
    assert scenario_with(base, **CHANGED).__dict__ == replace(base, **CHANGED).__dict__
    assert scenario_with(base) == base and scenario_with(base) is not base


def test_scenario_with_refuses_an_unknown_field():
    with pytest.raises(TypeError, match="no field depht"):
        scenario_with(Scenario(), depht=5)


def test_memory_scenario_keeps_a_scenario_at_the_speed_defaults():
    scenario = Scenario(context=65536, gpus=2)
    assert memory_scenario(scenario) is scenario
    at_depth = scenario_with(scenario, depth=100, prompt=512, system_ram_bandwidth_gbs=80.0)
    assert memory_scenario(at_depth) == scenario
    assert memory_scenario(scenario_with(scenario, system_ram_bandwidth_gbs=80.0)) == scenario


def test_cached_calibrations_follow_swapped_constants(monkeypatch):
    """The fits (bench/throughput_accuracy.py, bench/vllm_prefill_accuracy.py) swap the calibration constants: the
    cached calibrations are keyed on them, so a swapped constant is never answered from the cache."""
    from reports.sizing import throughput
    from reports.sizing.specs import HardwareSpec

    gpu = HardwareSpec(slug="g", name="G", vendor="NVIDIA", memory_gb=24, bandwidth_gbs=1000, architecture="ada")
    mi300x = HardwareSpec(slug="m", name="M", vendor="AMD", memory_gb=192, bandwidth_gbs=5300, backend="rocm",
                          architecture="cdna3")
    assert throughput.vllm_calibration(gpu).compute_efficiency == throughput.VLLM_PREFILL_EFFICIENCY
    monkeypatch.setattr(throughput, "VLLM_PREFILL_EFFICIENCY", 0.31)
    assert throughput.vllm_calibration(gpu).compute_efficiency == 0.31
    swapped = replace(throughput.CALIBRATION["cuda"], layer_overhead_s=987e-6)
    monkeypatch.setitem(throughput.CALIBRATION, "cuda", swapped)
    assert throughput.calibration_for(gpu) is swapped
    assert throughput.vllm_calibration(gpu) == replace(swapped, compute_efficiency=0.31)
    rocm = throughput.calibration_for(mi300x)
    assert rocm == replace(throughput.CALIBRATION["rocm"], compute_efficiency=(
        throughput.ROCBLAS_FALLBACK_EFFICIENCY.get("cdna3", throughput.CALIBRATION["rocm"].compute_efficiency)))


@pytest.mark.parametrize(("changes", "message"), [
    ({"context": 8192.0}, "--context must be a whole number"),
    ({"batch": True}, "--batch must be a whole number"),
    ({"gpus": 2.0}, "--gpus must be a whole number"),
    ({"context": [8192]}, "--context must be a whole number"),  # unhashable: checked without the cache
])
def test_a_validated_scenario_does_not_validate_an_equal_one_of_other_types(changes, message):
    """validate_scenario remembers valid scenarios keyed on each field's type too: 8192.0 == 8192 and True == 1,
    but neither is a whole number of tokens, sequences or GPUs."""
    from reports.sizing.errors import SizingError
    from reports.sizing.estimate import validate_scenario

    valid = Scenario(context=8192, batch=1, gpus=2)
    validate_scenario(valid)
    validate_scenario(valid)  # remembered
    with pytest.raises(SizingError, match=message):
        validate_scenario(scenario_with(valid, **changes))
    with pytest.raises(SizingError, match=message):  # a refusal is never remembered as valid
        validate_scenario(scenario_with(valid, **changes))


@pytest.mark.parametrize("engine", ["llama.cpp", "vllm"])
def test_an_offers_prefill_is_the_estimates(engine):
    """_costs_on_offers prices a prompt with _prefill_speed alone: the prefill estimate_speeds computes."""
    from bench.model_specs import QWEN3_30B_A3B
    from reports.sizing.estimate import _prefill_speed, estimate_speeds, plan_memory
    from reports.sizing.parameters import count_parameters
    from reports.sizing.specs import HardwareSpec

    h100 = HardwareSpec(slug="h100", name="H100", vendor="NVIDIA", memory_gb=80, bandwidth_gbs=3350,
                        fp16_tflops=989, architecture="hopper", interconnect_gbs=900)
    params = count_parameters(QWEN3_30B_A3B)
    for scenario in (Scenario(engine=engine, quant="BF16" if engine == "vllm" else "Q4_K_M", gpus=2, batch=8),
                     Scenario(engine=engine, quant="FP8" if engine == "vllm" else "Q8_0", context=32768, depth=0,
                              prompt=8192, offload_pct=20.0)):
        plan = plan_memory(QWEN3_30B_A3B, h100, scenario)
        assert _prefill_speed(QWEN3_30B_A3B, h100, scenario, plan, params) == estimate_speeds(
            QWEN3_30B_A3B, h100, scenario, plan, params).prefill


def test_quant_format_is_cached_by_name_and_an_unknown_name_raises_every_time():
    from reports.sizing.errors import SizingError
    from reports.sizing.quant import QUANT_FORMATS, quant_format

    assert quant_format(" q4_k_m ") is quant_format("Q4_K_M") is QUANT_FORMATS["Q4_K_M"]
    for _ in range(2):
        with pytest.raises(SizingError, match="--quant 'Q5_Z' is not a known format"):
            quant_format("Q5_Z")


def test_a_hardware_specs_hash_is_its_fields_hash_computed_once(monkeypatch):
    """HardwareSpec remembers its hash like ModelSpec (the engine's caches look accelerators up ~600 times a page):
    equal specs hash equal, a spec walks its fields once, and its __dict__ stays its fields."""
    from dataclasses import fields

    from reports.sizing import specs
    from reports.sizing.specs import HardwareSpec

    spec = HardwareSpec(slug="h100", name="H100", vendor="NVIDIA", memory_gb=80, bandwidth_gbs=3350)
    twin = HardwareSpec(**spec.__dict__)
    assert spec == twin and hash(spec) == hash(twin) == hash(tuple(getattr(spec, f.name) for f in fields(spec)))
    walks = []
    monkeypatch.setattr(specs, "fields", lambda obj: walks.append(obj) or fields(obj))
    other = HardwareSpec(slug="b200", name="B200", vendor="NVIDIA", memory_gb=180, bandwidth_gbs=8000)
    assert len({hash(other) for _ in range(5)}) == 1 and walks == [other]
    assert set(other.__dict__) == {f.name for f in fields(other)}


def test_a_remembered_hash_stays_with_its_spec():
    """The hash a spec remembers (in a slot, outside its fields) is not carried by a copy, a pickle or a replace:
    each hashes its own fields (a string's hash differs between processes, so a pickled hash would be stale)."""
    import copy
    import pickle

    from reports.sizing.specs import HardwareSpec

    spec = HardwareSpec(slug="h100", name="H100", vendor="NVIDIA", memory_gb=80, bandwidth_gbs=3350)
    hash(spec)
    for twin in (copy.copy(spec), copy.deepcopy(spec), pickle.loads(pickle.dumps(spec))):
        assert twin == spec and not hasattr(twin, "_hash") and hash(twin) == hash(spec)
    assert pickle.dumps(spec) == pickle.dumps(HardwareSpec(**spec.__dict__))
    changed = replace(spec, memory_gb=94)
    assert hash(changed) == hash(tuple(getattr(changed, f.name) for f in fields(changed))) != hash(spec)
