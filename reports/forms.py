"""The configurator: a GET form whose every state is a plain URL (htmx swaps the results; without JS it reloads)."""

from __future__ import annotations

import re

from django import forms
from django.core.validators import MaxValueValidator
from django.utils.translation import gettext_lazy as _

from reports.sizing.specs import Scenario
from reports.widgets import FastSelect

ENGINES = [("llama.cpp", "llama.cpp"), ("vllm", "vLLM")]
# KV-cache types each engine offers: llama.cpp -ctk/-ctv (f16, bf16, q8_0, q4_0, …), vLLM --kv-cache-dtype (auto, fp8).
KV_DTYPES = [("f16", "FP16"), ("bf16", "BF16"), ("q8_0", "Q8_0 (8-bit)"), ("q4_0", "Q4_0 (4-bit)"),
             ("fp8", "FP8 (8-bit)")]
CONTEXT_PRESETS = (2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288, 1048576)
GPU_COUNTS = (1, 2, 3, 4, 6, 8, 16)
BATCH_PRESETS = (1, 2, 4, 8, 16, 32, 64, 128, 256)
OFFLOAD_CHOICES = [("auto", _("automatic (only what does not fit)"))] + [
    (str(pct), f"{pct} %") for pct in range(0, 100, 10)]
MIN_CONTEXT = 256
MAX_GPUS = 64
MAX_BATCH = 1024
DEFAULT_HOURS_PER_DAY = 4.0
DEFAULT_USD_PER_KWH = 0.175  # the seed pages' electricity rate


def context_label(tokens: int) -> str:
    """8192 → "8K", 1048576 → "1M"."""
    if tokens % (1024 * 1024) == 0:
        return f"{tokens // (1024 * 1024)}M"
    if tokens % 1024 == 0:
        return f"{tokens // 1024}K"
    return str(tokens)


SCENARIO_FIELDS = ("quant", "context", "gpus", "batch", "kv_dtype", "engine", "offload")
COST_FIELDS = ("hours", "budget", "kwh")


def _select(presets, labels=str) -> FastSelect:
    return FastSelect(choices=[(n, labels(n)) for n in presets])


class ConfiguratorForm(forms.Form):
    """Preset values fill the selects; any integer in range is a valid state too (a shared ?context=12000)."""

    quant = forms.ChoiceField(label=_("Weights & quantization"), widget=FastSelect)
    context = forms.IntegerField(label=_("Context window"), min_value=MIN_CONTEXT, widget=FastSelect)
    gpus = forms.IntegerField(label=_("GPU count"), min_value=1, max_value=MAX_GPUS, widget=_select(GPU_COUNTS))
    batch = forms.IntegerField(label=_("Parallel sequences (batch)"), min_value=1, max_value=MAX_BATCH,
                               widget=_select(BATCH_PRESETS))
    kv_dtype = forms.ChoiceField(label=_("KV-cache precision"), choices=KV_DTYPES, widget=FastSelect)
    engine = forms.ChoiceField(label=_("Inference engine"), choices=ENGINES, widget=FastSelect)
    offload = forms.ChoiceField(label=_("System-RAM offload"), choices=OFFLOAD_CHOICES, widget=FastSelect)
    hours = forms.FloatField(label=_("Active use (hours/day)"), min_value=0.5, max_value=24)
    budget = forms.FloatField(label=_("Hardware budget (USD)"), min_value=0, max_value=1e8, required=False)
    kwh = forms.FloatField(label=_("Electricity (USD/kWh)"), min_value=0, max_value=5)

    def __init__(self, data, *, quant_names: list[str], max_context: int | None, default_budget: float | None):
        defaults = {"quant": "Q4_K_M" if "Q4_K_M" in quant_names else quant_names[0], "context": 8192, "gpus": 1,
                    "batch": 1, "kv_dtype": "f16", "engine": "llama.cpp", "offload": "auto",
                    "hours": DEFAULT_HOURS_PER_DAY, "budget": default_budget, "kwh": DEFAULT_USD_PER_KWH}
        if max_context:
            defaults["context"] = min(8192, max_context)
        # Missing keys take their defaults, so a partial URL (?context=32768) is a complete state.
        merged = {key: value for key, value in defaults.items() if value is not None}
        merged.update({key: data[key] for key in data if key in self.base_fields and data[key] != ""})
        super().__init__(merged)
        self.fields["quant"].choices = [(name, name) for name in quant_names]
        context = self.fields["context"]
        if max_context:
            context.max_value = max_context
            context.validators.append(MaxValueValidator(
                max_context, _("This model supports at most %(limit_value)s tokens.")))
        presets = [n for n in CONTEXT_PRESETS if max_context is None or n <= max_context]
        if max_context and max_context not in presets:
            presets.append(max_context)
        self._keep_current_value(context, presets, context_label)
        self._keep_current_value(self.fields["gpus"], list(GPU_COUNTS), str)
        self._keep_current_value(self.fields["batch"], list(BATCH_PRESETS), str)

    def _keep_current_value(self, field: forms.Field, presets: list[int], label) -> None:
        """Show a valid non-preset value (from a shared URL) as a selected option instead of dropping it."""
        current = self.data.get(next(name for name, f in self.fields.items() if f is field))
        try:
            value = int(str(current))
        except (TypeError, ValueError):
            value = None
        if value is not None and value > 0 and value not in presets:
            presets = sorted([*presets, value])
        field.widget.choices = [(n, label(n)) for n in presets]

    def scenario_fields(self) -> list[forms.BoundField]:
        return [self[name] for name in SCENARIO_FIELDS]

    def cost_fields(self) -> list[forms.BoundField]:
        return [self[name] for name in COST_FIELDS]

    def clean(self) -> dict:
        data = super().clean()
        engine, kv_dtype = data.get("engine"), data.get("kv_dtype")
        if engine == "vllm" and kv_dtype in ("q8_0", "q4_0"):
            self.add_error("kv_dtype", _("vLLM has no %(dtype)s KV cache; choose FP8.") % {"dtype": kv_dtype})
        if engine == "llama.cpp" and kv_dtype == "fp8":
            self.add_error("kv_dtype", _("llama.cpp has no FP8 KV cache; choose Q8_0 (-ctk q8_0 -ctv q8_0)."))
        return data

    def scenario(self) -> Scenario:
        data = self.cleaned_data
        offload = None if data["offload"] == "auto" else float(data["offload"])
        return Scenario(quant=data["quant"], context=data["context"], batch=data["batch"],
                        kv_dtype=data["kv_dtype"], engine=data["engine"], gpus=data["gpus"], offload_pct=offload)


OPTION_FIELDS = {"--gpus": "gpus", "--context": "context", "--batch": "batch", "--kv-dtype": "kv_dtype",
                 "--quant": "quant", "--engine": "engine", "--offload-pct": "offload"}


def field_for_error(message: str) -> str | None:
    """The form field an engine error names ("--gpus 3: …" → "gpus"), so the message shows beside it."""
    match = re.match(r"\s*(--[a-z-]+)", message)
    return OPTION_FIELDS.get(match.group(1)) if match else None
