from reports.sizing.specs import Scenario


def test_default_scenario_matches_contract_defaults():
    scenario = Scenario()
    assert (scenario.quant, scenario.context, scenario.batch, scenario.kv_dtype, scenario.engine) == (
        "Q4_K_M", 8192, 1, "f16", "llama.cpp")
