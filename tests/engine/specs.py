"""Hand-written ModelSpecs shared by several engine tests (the published models live in bench/model_specs.py)."""

from reports.sizing.specs import ModelSpec


def stated_parameters_only(total: float, active: float) -> ModelSpec:
    """A model known only by its stated parameter counts (no config.json): the engine must estimate from them."""
    return ModelSpec(
        slug="x",
        name="x",
        architecture="unknown",
        hidden_size=0,
        vocab_size=0,
        layers=(),
        attention=None,
        stated_params_total=total,
        stated_params_active=active,
        confidence="estimated",
    )
