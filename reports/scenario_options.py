"""A Scenario from textual options — the command line's ``--context 8192`` and the API's ``?context=8192``.

Every value arrives as text; a bad one raises SizingError naming the option (``--context must be a whole
number (got 'abc')``), which the command turns into exit status 2 and the API into a 400.
"""

from __future__ import annotations

import math
from typing import Any

from reports.sizing.errors import SizingError
from reports.sizing.specs import Scenario

DEFAULT_SCENARIO = Scenario()


def _int_option(options: dict[str, Any], key: str) -> int:
    raw = options.get(key)
    if raw in (None, ""):
        return getattr(DEFAULT_SCENARIO, key)
    option = "--" + key.replace("_", "-")
    try:
        return int(str(raw).strip().replace("_", ""))
    except ValueError:
        raise SizingError(f"{option} must be a whole number (got {raw!r})") from None


def _optional_int(options: dict[str, Any], key: str) -> int | None:
    return None if options.get(key) in (None, "") else _int_option(options, key)


def _float_option(raw: str, option: str) -> float:
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise SizingError(f"{option} must be a number (got {raw!r})") from None
    if not math.isfinite(value):
        raise SizingError(f"{option} must be a finite number (got {raw!r})")
    return value


def scenario_from_options(options: dict[str, Any]) -> Scenario:
    """A Scenario from the command's text options (SizingError naming the option on a bad value)."""
    offload = options.get("offload_pct", "auto")
    ram = options.get("ram_bandwidth")
    return Scenario(
        quant=str(options.get("quant") or DEFAULT_SCENARIO.quant),
        context=_int_option(options, "context"),
        batch=_int_option(options, "batch"),
        kv_dtype=str(options.get("kv_dtype") or DEFAULT_SCENARIO.kv_dtype),
        engine=str(options.get("engine") or DEFAULT_SCENARIO.engine),  # type: ignore[arg-type]  # validated by the engine
        gpus=_int_option(options, "gpus"),
        offload_pct=None if str(offload).lower() == "auto" else _float_option(offload, "--offload-pct"),
        depth=_int_option(options, "depth"),
        prompt=_int_option(options, "prompt"),
        gpu_memory_utilization=(DEFAULT_SCENARIO.gpu_memory_utilization
                                if options.get("gpu_memory_utilization") in (None, "")
                                else _float_option(options["gpu_memory_utilization"], "--gpu-memory-utilization")),
        max_num_seqs=_optional_int(options, "max_num_seqs"),
        max_num_batched_tokens=_optional_int(options, "max_num_batched_tokens"),
        system_ram_bandwidth_gbs=None if ram in (None, "") else _float_option(ram, "--ram-bandwidth"),
    )


