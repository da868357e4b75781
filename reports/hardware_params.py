"""An accelerator described by text fields (API query, the configurator's "my hardware" fields) → HardwareSpec,
with the same validation and limits as the estimate command's --hardware file (estimate.hardware_from_dict)."""

from __future__ import annotations

import math
from collections.abc import Mapping

from reports.sizing.errors import SizingError
from reports.sizing.estimate import hardware_from_dict
from reports.sizing.specs import HardwareSpec

NUMBER_PARAMS = ("memory_gb", "bandwidth_gbs", "fp16_tflops", "fp16_acc_tflops", "fp8_tflops", "tdp_w",
                 "usable_memory_factor", "interconnect_gbs", "price_usd")
INTEGER_PARAMS = ("interconnect_mesh_peers",)
TEXT_PARAMS = ("name", "vendor", "kind", "backend", "interconnect", "architecture")
HARDWARE_PARAMS = NUMBER_PARAMS + INTEGER_PARAMS + TEXT_PARAMS
DEFAULT_NAME = "My hardware"


def hardware_from_params(params: Mapping[str, str], *, option: str) -> HardwareSpec:
    """Numbers parsed from text, then the --hardware file's validation (SizingError naming the field)."""
    data: dict[str, object] = {"name": params.get("name") or DEFAULT_NAME}
    for key in NUMBER_PARAMS:
        raw = params.get(key)
        if raw in (None, ""):
            continue
        try:
            value = float(raw)
        except (TypeError, ValueError):
            raise SizingError(f"{option}: {key!r} must be a number (got {raw!r})") from None
        if not math.isfinite(value):
            raise SizingError(f"{option}: {key!r} must be a finite number (got {raw!r})")
        data[key] = value
    for key in INTEGER_PARAMS:
        raw = params.get(key)
        if raw in (None, ""):
            continue
        try:
            data[key] = int(raw)
        except (TypeError, ValueError):
            raise SizingError(f"{option}: {key!r} must be a whole number (got {raw!r})") from None
    for key in ("vendor", "kind", "backend", "interconnect", "architecture"):
        if params.get(key):
            data[key] = params[key]
    return hardware_from_dict(data, slug="custom", option=option)
