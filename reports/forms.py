"""The configurator: a GET form whose every state is a plain URL (htmx swaps the results; without JS it reloads)."""

from __future__ import annotations

import copy
import re
from functools import lru_cache

from django import forms
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.utils.translation import get_language, gettext
from django.utils.translation import gettext_lazy as _

from catalog.forms import MAX_CONFIG_BYTES, load_config_json
from catalog.models import CUSTOM_HARDWARE_SLUG  # noqa: F401  (the views and templates import it from here)
from reports import formatting
from reports.hardware_params import hardware_from_params
from reports.quant_labels import quant_option_labels
from reports.sizing.quant import quant_format
from reports.sizing.errors import SizingError
from reports.sizing.estimate import (
    ENGINE_BACKENDS, HARDWARE_NUMBER_LIMITS, VLLM_ONLY_FORMATS, default_engine, default_scenario, engine_runs_on,
    format_runs_on,
)
from reports.sizing.specs import HardwareSpec, ModelSpec, Scenario
from reports.sizing.weights import format_applies_to
from reports.templatetags.labels import ARCHITECTURES, ENGINE_NAMES
from reports.widgets import FastNumberInput, FastSelect

ENGINES = list(ENGINE_NAMES.items())
# KV-cache types each engine offers: llama.cpp -ctk/-ctv (f16, bf16, q8_0, q4_0, …), vLLM --kv-cache-dtype (auto, fp8).
# "auto" is the engine's default: vLLM's --kv-cache-dtype auto (the model's dtype), llama.cpp's F16 (-ctk f16).
KV_DTYPES = [("f16", "FP16"), ("bf16", "BF16"), ("q8_0", _("Q8_0 (8-bit)")), ("q4_0", _("Q4_0 (4-bit)")),
             ("fp8", _("FP8 (8-bit)")), ("auto", _("auto (the engine's default)"))]
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
# vLLM's --gpu-memory-utilization: its default (vllm/config/cache.py gpu_memory_utilization = 0.9) and the range
# the configurator accepts: vLLM takes any value in (0, 1]; the field starts at a tenth, which keeps a slip such as
# 0.009 from being sized (the engine refuses more than a GPU can give: estimate.check_vllm_memory_share).
DEFAULT_GPU_MEMORY_UTILIZATION = Scenario.gpu_memory_utilization
MIN_GPU_MEMORY_UTILIZATION = 0.1


def context_label(tokens: int) -> str:
    """8192 → "8K", 1048576 → "1M"; limits that model cards give in thousands read as they do: 128000 → "128K"
    (not "125K", although 128,000 = 125 × 1,024), 200000 → "200K"."""
    if tokens % (1024 * 1024) == 0:
        return f"{tokens // (1024 * 1024)}M"
    if tokens % 1_000_000 == 0:
        return f"{tokens // 1_000_000}M"
    if tokens % 1000 == 0:
        return f"{tokens // 1000}K"
    if tokens % 1024 == 0:
        return f"{tokens // 1024}K"
    return str(tokens)


def context_choice_label(tokens: int) -> str:
    """An option of the context select: the short form, or the number with the visitor's grouping where there is
    none ("53,504" after "apply" the longest context, which read "53504")."""
    label = context_label(tokens)
    return formatting.number(tokens, get_language()) if label.isdigit() else label


MIN_BUDGET_USD = 100
# The format list in groups (<optgroup>), best quality first within each, every option with its bit width and quality
# (reports.quant_labels): the safetensors checkpoints either engine loads (named for what they are: "Released weights"
# listed FP16 and MXFP4 for a model released in BF16 only), llama.cpp's GGUF files (F16 among them, apart from the
# FP16 checkpoint, or the two read as one format twice), and the checkpoints only vLLM loads.
FORMAT_GROUPS = (("released", _("Checkpoints (safetensors)")), ("gguf", _("GGUF files (llama.cpp)")),
                 ("vllm", _("vLLM checkpoints")))


def _format_group(name: str) -> str:
    if name in VLLM_ONLY_FORMATS:
        return "vllm"
    return "gguf" if quant_format(name).family.startswith("gguf") else "released"


def quant_choices(names: list[str], model: ModelSpec | None = None) -> list[tuple[str, list[tuple[str, str]]]]:
    """The format select's grouped choices for `names`, given in the catalog's order (QuantFormat.sort_order: the
    smallest first), listed best quality first; `model`'s released format is the lossless one."""
    groups: dict[str, list[str]] = {}
    for name in reversed(names):
        groups.setdefault(_format_group(name), []).append(name)
    return [(label, quant_option_labels(groups[key], model)) for key, label in FORMAT_GROUPS if key in groups]
MAX_SHOWN_INPUT = 40  # characters of a refused select value shown back as its option

SCENARIO_FIELDS = ("quant", "context", "gpus", "batch", "kv_dtype", "engine", "offload", "gpu_memory_utilization")
COST_FIELDS = ("hours", "budget", "kwh")


def _number_field(**kwargs) -> forms.FloatField:
    # The query is the same in every language (a shared URL, the language switch), so decimals take a dot; the
    # number input sends them so, and a hand-edited "0,30" is told why it is refused.
    return forms.FloatField(widget=FastNumberInput, error_messages={"invalid": _(
        "Enter a number, with a dot before any decimals (0.3, not 0,3).")}, **kwargs)


def _select(presets, labels=str) -> FastSelect:
    return FastSelect(choices=[(n, labels(n)) for n in presets])


def localize_limits(form: forms.Form) -> None:
    """Every number field's range in the visitor's number format ("mindestens 0,5", "höchstens 100.000.000"):
    Django's own messages, with the limit formatted here (its validators write the Python value as it is:
    "0.5", "100000000.0"). New validators, not edited ones: a form's fields copy the list, not the validators."""
    language = get_language()
    for field in form.fields.values():
        if not isinstance(field, forms.IntegerField | forms.FloatField | forms.DecimalField):
            continue
        kept = [v for v in field.validators if type(v) not in (MinValueValidator, MaxValueValidator)]
        added = []
        if field.min_value is not None:
            added.append(MinValueValidator(field.min_value, _minimum_message(field.min_value, language)))
        if field.max_value is not None:
            added.append(MaxValueValidator(field.max_value, _maximum_message(field.max_value, language)))
        field.validators = kept + added


# The messages of the same few limits, in two languages, on every configurator: made once (typed: 1 and 1.0 are
# the same key otherwise, and a limit is shown as it is).
@lru_cache(maxsize=64, typed=True)
def _minimum_message(limit, language: str) -> str:
    return gettext("Ensure this value is greater than or equal to %(limit_value)s.") % {
        "limit_value": formatting.exact(limit, language)}


@lru_cache(maxsize=64, typed=True)
def _maximum_message(limit, language: str) -> str:
    return gettext("Ensure this value is less than or equal to %(limit_value)s.") % {
        "limit_value": formatting.exact(limit, language)}


# Not fields: the page a plain GET is redirected to after a replacement (ConfiguratorForm.clean: the other engine's KV
# type or weight format) names the value asked for in it, by the field it replaced.
KV_REPLACED_PARAMETER = "kv_replaced"
QUANT_REPLACED_PARAMETER = "quant_replaced"
REPLACED_PARAMETERS = {"kv_dtype": KV_REPLACED_PARAMETER, "quant": QUANT_REPLACED_PARAMETER}

# The other engine's KV cache type, per engine: vLLM caches 8 bits as FP8 (--kv-cache-dtype fp8; no integer types),
# llama.cpp as Q8_0 (-ctk q8_0 -ctv q8_0; no FP8). A switch of engine keeps a cache this small, in its own type.
KV_OF_ENGINE = {"vllm": {"q8_0": ("fp8",), "q4_0": ("fp8",)}, "llama.cpp": {"fp8": ("q8_0",)}}
# The other engine's weight format, per engine: the formats llama.cpp cannot load (estimate.VLLM_ONLY_FORMATS, vLLM
# checkpoints with no GGUF of that name) become the nearest GGUF file type, candidates in order, the first the
# model comes in and the accelerator's llama.cpp backend runs (CANN runs only F16, Q8_0 and Q4_0). "Nearest" is the
# same bits per weight and the same kind of file where one exists:
# - AWQ and GPTQ are 4-bit integer weights in groups of 128 (4.16 bpw, reports/sizing/quant.py): Q4_K_M, the 4-bit
#   GGUF most people download (4.89 bpw), then the legacy Q4_0 (4.5 bpw), then 8 and 16 bits where no 4-bit runs.
# - FP8 is 8 bits per weight with block scales: Q8_0, llama.cpp's 8-bit type (8.5 bpw), then F16.
# - FP8_FP4 (DeepSeek-V4's release: FP4 experts in the MXFP4 layout, other matrices FP8): MXFP4_MOE, the GGUF of MXFP4
#   experts with the other matrices in Q8_0, i.e. the same split; then Q4_K_M.
# BF16, FP16 and MXFP4 need no replacement: llama.cpp sizes them (a 16-bit GGUF has the released checkpoint's bytes,
# quant.py). vLLM runs every format of the list (its GGUF loading included), so nothing is replaced the other way.
QUANT_OF_ENGINE = {"llama.cpp": {
    "AWQ": ("Q4_K_M", "Q4_0", "Q8_0", "F16"),
    "GPTQ": ("Q4_K_M", "Q4_0", "Q8_0", "F16"),
    "FP8": ("Q8_0", "F16", "Q4_K_M", "Q4_0"),
    "FP8_FP4": ("MXFP4_MOE", "Q4_K_M", "Q4_0", "Q8_0", "F16"),
}}
REPLACEMENTS = {"kv_dtype": KV_OF_ENGINE, "quant": QUANT_OF_ENGINE}


class ChoicesSharedOnCopy:
    """A field whose per-form copy shares its choice lists. Every form deep-copies its class's fields, and Django's
    ChoiceField and Select copy and re-normalize their choices each time (~1,000 calls of a request for the
    configurator's selects). This is Field.__deepcopy__ (a widget with attributes of its own, new message and
    validator containers) without that: the configurator assigns new choice lists (quant_choices,
    _keep_current_value) and changes none in place."""

    def __deepcopy__(self, memo):
        result = copy.copy(self)
        memo[id(self)] = result
        result.widget = copy.copy(self.widget)
        result.widget.attrs = self.widget.attrs.copy()
        result.error_messages = self.error_messages.copy()
        result.validators = self.validators[:]
        return result


class SelectChoiceField(ChoicesSharedOnCopy, forms.ChoiceField):
    pass


class SelectIntegerField(ChoicesSharedOnCopy, forms.IntegerField):
    """A whole number picked from presets (a Select) or typed into a shared URL."""


class ConfiguratorForm(forms.Form):
    """Preset values fill the selects; any integer in range is a valid state too (a shared ?context=12000)."""

    # {field: (asked, used)}: the other engine's KV type or weight format, replaced in this request (clean).
    replaced: dict[str, tuple[str, str]]
    # {field: (asked, used)} of a replacement made by the request that redirected here (REPLACED_PARAMETERS): a page
    # without JavaScript says so as the htmx answer does.
    replaced_before: dict[str, tuple[str, str]]

    quant = SelectChoiceField(label=_("Weights & quantization"), widget=FastSelect)
    context = SelectIntegerField(label=_("Context window"), min_value=MIN_CONTEXT, widget=FastSelect)
    gpus = SelectIntegerField(label=_("GPU count"), min_value=1, max_value=MAX_GPUS, widget=_select(GPU_COUNTS))
    batch = SelectIntegerField(label=_("Parallel sequences (batch)"), min_value=1, max_value=MAX_BATCH,
                               widget=_select(BATCH_PRESETS))
    kv_dtype = SelectChoiceField(label=_("KV-cache precision"), choices=KV_DTYPES, widget=FastSelect)
    engine = SelectChoiceField(label=_("Inference engine"), choices=ENGINES, widget=FastSelect)
    offload = SelectChoiceField(label=_("System-RAM offload"), choices=OFFLOAD_CHOICES, widget=FastSelect)
    # Only vLLM reads it (llama.cpp allocates what the model needs); shown for both engines, as the KV types are,
    # because htmx swaps the results and not the form when the engine changes.
    # Two decimals, as the input's step: a shared URL with 0.925 would leave a value the browser's constraint
    # validation refuses, which blocks every htmx request of the form; here it gets a message beside the field.
    gpu_memory_utilization = forms.DecimalField(
        label=_("vLLM: share of GPU memory (--gpu-memory-utilization)"), min_value=MIN_GPU_MEMORY_UTILIZATION,
        max_value=1, max_digits=3, decimal_places=2, widget=FastNumberInput)
    hours = _number_field(label=_("Active use (hours/day)"), min_value=0.5, max_value=24)
    # No accelerator costs less than $100: a smaller budget is a German "2.500" that the number input read as 2.5
    # (its break-even then read "~0.1 months"), refused with the range instead.
    budget = _number_field(label=_("Hardware budget (USD)"), min_value=MIN_BUDGET_USD, max_value=1e8, required=False)
    kwh = _number_field(label=_("Electricity (USD/kWh)"), min_value=0, max_value=5)

    def __init__(self, data, *, quant_names: list[str], max_context: int | None, default_budget: float | None,
                 hardware: HardwareSpec | None = None, model: ModelSpec | None = None):
        self.hardware = hardware  # the accelerator the engine must run on (None: not checked here)
        self.model = model
        self.quant_names = quant_names
        self.replaced, self.replaced_before = {}, {}
        # Not fields: read before the fields are kept.
        self.asked_before = {name: data.get(parameter) for name, parameter in REPLACED_PARAMETERS.items()}
        defaults = {"quant": "Q4_K_M" if "Q4_K_M" in quant_names else quant_names[0], "context": 8192, "gpus": 1,
                    "batch": 1, "kv_dtype": "f16", "engine": "llama.cpp", "offload": "auto",
                    "gpu_memory_utilization": DEFAULT_GPU_MEMORY_UTILIZATION,
                    "hours": DEFAULT_HOURS_PER_DAY, "kwh": DEFAULT_USD_PER_KWH}
        if model is not None:
            # What the page opens with follows the engine, so a partial URL (?engine=vllm) is a state that runs where
            # one exists: vLLM on Gaudi or DeepSeek-V4 under vLLM take the released checkpoint (and its FP8 cache).
            # Without an accelerator (the compare page) only the model's own limits apply.
            engine = data.get("engine")
            opening = default_scenario(model, hardware, engine if engine in ENGINE_BACKENDS else None)
            defaults["engine"] = default_scenario(model, hardware).engine
            defaults["kv_dtype"] = opening.kv_dtype
            if opening.quant in quant_names:
                defaults["quant"] = opening.quant
        if max_context:
            defaults["context"] = min(8192, max_context)
        # Missing keys take their defaults, so a partial URL (?context=32768) is a complete state. Numbers as
        # short text ("4", not "4.0") because the inputs show them as they are.
        merged = {key: f"{value:g}" if isinstance(value, float) else value
                  for key, value in defaults.items() if value is not None}
        self.default_values = {key: str(value) for key, value in merged.items()}  # what an absent field reads as
        merged.update({key: data[key] for key in data if key in self.base_fields and data[key] != ""})
        super().__init__(merged)
        if default_budget is not None:
            # An empty budget is the catalog price of one accelerator × the GPU count (ReportPage.rent_vs_buy), so
            # it follows the GPU count as the power does; a typed budget is kept as typed.
            # Digits as the input takes them: "1.599 $" on a German page invited "21.000", which is 21.
            self.fields["budget"].widget.attrs["placeholder"] = _("%(price)s per GPU") % {
                "price": f"{default_budget:.0f}"}
        # vLLM's checkpoint formats say so in the list: under llama.cpp they are refused with a message. Formats
        # the model cannot come in (MXFP4 without experts) are left out, unless a URL asks for one: then the
        # engine's message says why.
        submitted = self.data.get("quant")
        self.fields["quant"].choices = quant_choices(
            [name for name in quant_names if model is None or name == submitted or format_applies_to(model, name)],
            model)
        localize_limits(self)  # before the model's own context limit, which has a message of its own
        context = self.fields["context"]
        if max_context:
            context.max_value = max_context
            context.validators.append(MaxValueValidator(max_context, _(
                "This model supports at most %(limit)s tokens.") % {
                    "limit": formatting.number(max_context, get_language())}))
        presets = [n for n in CONTEXT_PRESETS if max_context is None or n <= max_context]
        if max_context and max_context not in presets:
            presets.append(max_context)
        self._keep_current_value(context, presets, context_choice_label)
        self._keep_current_value(self.fields["gpus"], list(GPU_COUNTS), str)
        self._keep_current_value(self.fields["batch"], list(BATCH_PRESETS), str)

    def _keep_current_value(self, field: forms.Field, presets: list[int], label) -> None:
        """Show a non-preset value (from a shared URL) as the selected option instead of dropping it: a valid one
        by its label, a refused one (0, -1, "abc") as it came, so the message beside the field is about what the
        field shows and not about the first preset."""
        current = self.data.get(next(name for name, f in self.fields.items() if f is field))
        try:
            value = int(str(current))
        except (TypeError, ValueError):
            value = None
        choices = [(n, label(n)) for n in presets]
        if value is not None and value not in presets:
            choices = sorted([*choices, (value, label(value) if value > 0 else str(value))])
        elif value is None and current not in (None, ""):
            choices = [(str(current), str(current)[:MAX_SHOWN_INPUT]), *choices]
        field.widget.choices = choices

    def scenario_fields(self) -> list[forms.BoundField]:
        return [self[name] for name in SCENARIO_FIELDS]

    def cost_fields(self) -> list[forms.BoundField]:
        return [self[name] for name in COST_FIELDS]


    def clean(self) -> dict:
        data = super().clean()
        engine = data.get("engine")
        # Switching the engine with a quantized KV cache or a vLLM checkpoint format chosen refused the whole report
        # ("vLLM has no q8_0 KV cache", "AWQ is a vLLM checkpoint format") under the field the visitor had not
        # touched. A GET does not say which field changed, so any value of the other engine's kind (REPLACEMENTS)
        # takes this engine's nearest instead, and the page says so (replaced); the form shows it, and the view
        # answers with the state's URL. A value neither engine knows (quant=NOPE) is refused by its field as before.
        for name, of_engine in REPLACEMENTS.items():
            value, candidates = data.get(name), of_engine.get(engine, {})
            if value in candidates:
                used = self._nearest(name, candidates[value], engine)
                data[name] = self.data[name] = used
                self.replaced[name] = (value, used)
            elif (asked := self.asked_before[name]) and value in candidates.get(asked, ()):
                self.replaced_before[name] = (asked, value)
        if engine in ENGINE_BACKENDS and self.hardware is not None and not engine_runs_on(engine, self.hardware):
            self.add_error("engine", self._engine_error(engine))
        return data

    def _nearest(self, name: str, candidates: tuple[str, ...], engine: str) -> str:
        """The first candidate this model comes in and this accelerator runs under `engine` (weight formats), else the
        first: the engine's message then says why it does not run here."""
        if name != "quant":
            return candidates[0]
        model, hardware = self.model, self.hardware
        return next((quant for quant in candidates if quant in self.quant_names
                     and (model is None or format_applies_to(model, quant))
                     and (hardware is None or format_runs_on(engine, quant, hardware, model))), candidates[0])

    def replacement(self, name: str) -> tuple[str, str] | None:
        """(asked, used) of the value of field `name` replaced in this request or in the one that redirected here."""
        return self.replaced.get(name) or self.replaced_before.get(name)

    @property
    def kv_dtype_replacement(self) -> tuple[str, str] | None:
        return self.replacement("kv_dtype")

    @property
    def quant_replacement(self) -> tuple[str, str] | None:
        return self.replacement("quant")

    def _engine_error(self, engine: str) -> str:
        """Why the engine does not run on this accelerator, and which one does."""
        hardware = self.hardware
        words = {"engine": dict(ENGINES)[engine], "hardware": hardware.name,
                 "backend": backend_label(hardware.backend), "backends": engine_backend_labels(engine),
                 "other": dict(ENGINES)[default_engine(hardware)]}
        if hardware.backend in ENGINE_BACKENDS[engine]:
            # The backend is one the engine is sized on, but not this accelerator (Gaudi, Cambricon, Kunlunxin, MetaX).
            return _("%(engine)s does not run on %(hardware)s: it has no backend for this accelerator. "
                     "Choose %(other)s.") % words
        return _("%(engine)s is not sized on %(hardware)s (%(backend)s): this calculator models it on "
                 "%(backends)s. Choose %(other)s.") % words

    @property
    def only_cost_fields_invalid(self) -> bool:
        """Every refused field is a rent-vs-buy input: the memory and speed of the configuration do not read them,
        so the report is still computed (with the defaults in their place, cost_inputs) and only they are flagged."""
        return bool(self.errors) and set(self.errors) <= set(COST_FIELDS)

    def cost_inputs(self) -> dict[str, float | None]:
        """Hours a day, USD per kWh and the purchase budget (None: the catalog price): as entered where valid, the
        form's defaults where a field was refused."""
        data = self.cleaned_data
        return {"hours": data.get("hours", DEFAULT_HOURS_PER_DAY), "kwh": data.get("kwh", DEFAULT_USD_PER_KWH),
                "budget": data.get("budget")}

    def scenario(self) -> Scenario:
        data = self.cleaned_data
        offload = None if data["offload"] == "auto" else float(data["offload"])
        kv_dtype = data["kv_dtype"]
        if kv_dtype == "auto" and data["engine"] == "llama.cpp":
            kv_dtype = "f16"  # llama.cpp has no "auto"; its default cache type is F16
        return Scenario(quant=data["quant"], context=data["context"], batch=data["batch"],
                        kv_dtype=kv_dtype, engine=data["engine"], gpus=data["gpus"], offload_pct=offload,
                        gpu_memory_utilization=float(data["gpu_memory_utilization"]))


def scenario_query(scenario: Scenario) -> list[tuple[str, str]]:
    """The configurator's scenario fields of ``scenario`` as query pairs (the share only when it is not vLLM's
    default, which the form fills in anyway)."""
    pairs = [("quant", scenario.quant), ("context", str(scenario.context)), ("gpus", str(scenario.gpus)),
             ("batch", str(scenario.batch)), ("kv_dtype", scenario.kv_dtype), ("engine", scenario.engine),
             ("offload", "auto" if scenario.offload_pct is None else f"{scenario.offload_pct:g}")]
    if scenario.gpu_memory_utilization != DEFAULT_GPU_MEMORY_UTILIZATION:
        pairs.append(("gpu_memory_utilization", f"{scenario.gpu_memory_utilization:g}"))
    return pairs


OPTION_FIELDS = {"--gpus": "gpus", "--context": "context", "--batch": "batch", "--kv-dtype": "kv_dtype",
                 "--quant": "quant", "--engine": "engine", "--offload-pct": "offload",
                 "--gpu-memory-utilization": "gpu_memory_utilization"}


def field_for_error(message: str) -> str | None:
    """The form field an engine error names ("--gpus 3: …" → "gpus"), so the message shows beside it."""
    match = re.match(r"\s*(--[a-z-]+)", message)
    return OPTION_FIELDS.get(match.group(1)) if match else None


HARDWARE_KINDS = [("discrete", _("discrete GPU")), ("accelerator", _("datacenter accelerator")),
                  ("unified", _("unified memory"))]
HARDWARE_BACKENDS = [("cuda", "CUDA"), ("rocm", "ROCm/HIP"), ("metal", "Metal"), ("vulkan", "Vulkan"),
                     ("sycl", "SYCL"), ("cann", "CANN"), ("other", _("other"))]


def backend_label(backend: str) -> str:
    return str(dict(HARDWARE_BACKENDS).get(backend, backend))


def engine_backend_labels(engine: str) -> str:
    """The named backends an engine is sized on, as a list for a sentence ("CANN, CUDA, ROCm/HIP, SYCL")."""
    return ", ".join(backend_label(b) for b in sorted(ENGINE_BACKENDS[engine]) if b != "other")


class CustomHardwareForm(forms.Form):
    """"My hardware": an accelerator described by the visitor instead of a catalog entry. The engine's own
    validation (the --hardware file's limits) runs in clean(), so the web and the command accept the same values."""

    name = forms.CharField(label=_("Name"), max_length=120, required=False)
    # The engine's limits (estimate.HARDWARE_NUMBER_LIMITS), checked here first so the message is translated.
    memory_gb = _number_field(label=_("Memory (GB)"), min_value=0.1,
                                 max_value=HARDWARE_NUMBER_LIMITS["memory_gb"][1])
    bandwidth_gbs = _number_field(label=_("Memory bandwidth (GB/s)"), min_value=0.1,
                                     max_value=HARDWARE_NUMBER_LIMITS["bandwidth_gbs"][1])
    fp16_tflops = _number_field(label=_("Dense FP16 TFLOPS (optional)"), min_value=0.01, required=False,
                                   max_value=HARDWARE_NUMBER_LIMITS["fp16_tflops"][1])
    # GeForce cards run llama.cpp's prefill at their FP16-accumulate rate, and the architecture sets the share of
    # the peak llama.cpp reaches (throughput.tensor_peak_tflops): a copy of a catalog card keeps both.
    fp16_acc_tflops = _number_field(label=_("FP16 TFLOPS with FP16 accumulate (optional; GeForce)"),
                                    min_value=0.01, required=False,
                                    max_value=HARDWARE_NUMBER_LIMITS["fp16_acc_tflops"][1])
    tdp_w = _number_field(label=_("Power (W, optional)"), min_value=1, required=False,
                             max_value=HARDWARE_NUMBER_LIMITS["tdp_w"][1])
    kind = forms.ChoiceField(label=_("Kind"), choices=HARDWARE_KINDS, widget=FastSelect, initial="discrete")
    # The share of the memory the model may use, in percent (the engine's usable_memory_factor × 100). Empty: 95 %,
    # or 78 % on unified memory, where the system and other programs share the pool (fit.DEFAULT_USABLE_FACTOR);
    # a Mac whose GPU may wire more (sudo sysctl iogpu.wired_limit_mb) or a Linux APU with a raised GTT limit
    # describes its own share here.
    usable_pct = _number_field(label=_("Usable for the model (%, optional)"), min_value=10, max_value=100,
                               required=False)
    backend = forms.ChoiceField(label=_("Backend"), choices=HARDWARE_BACKENDS, widget=FastSelect, initial="cuda")
    architecture = forms.ChoiceField(label=_("Architecture (optional)"), required=False, widget=FastSelect,
                                     choices=[("", _("not known"))] + sorted(ARCHITECTURES.items(),
                                                                              key=lambda item: item[1]))
    # The vendor decides which engines run on an "other" backend (estimate.engine_runs_on: llama.cpp has no backend
    # for Cambricon, Kunlunxin or MetaX) and whether vLLM is a vendor build; the links set the multi-GPU speed
    # (throughput.allreduce_time) and the offload's host link (the PCIe generation in the text). A copy of a
    # catalog accelerator keeps them all, so it is sized as the catalog's page sizes it.
    vendor = forms.CharField(label=_("Vendor (optional)"), max_length=120, required=False)
    interconnect = forms.CharField(label=_("Links (optional; e.g. “NVLink 4 / PCIe 5.0 x16”)"), max_length=120,
                                   required=False)
    interconnect_gbs = _number_field(label=_("GPU-to-GPU bandwidth (GB/s, both directions, optional)"),
                                     min_value=0.1, required=False,
                                     max_value=HARDWARE_NUMBER_LIMITS["interconnect_gbs"][1])
    interconnect_mesh_peers = forms.IntegerField(
        label=_("Peers of a full mesh sharing that bandwidth (optional; empty for a switch)"), min_value=1,
        max_value=63, required=False, widget=FastNumberInput)

    FIELDS = ("name", "memory_gb", "bandwidth_gbs", "fp16_tflops", "fp16_acc_tflops", "tdp_w", "kind", "usable_pct",
              "backend", "architecture", "vendor", "interconnect", "interconnect_gbs", "interconnect_mesh_peers")

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        localize_limits(self)

    @classmethod
    def initial_for(cls, hardware: HardwareSpec) -> dict[str, str]:
        """Query values describing a catalog accelerator: the starting point of "my hardware"."""
        values = {"name": hardware.name, "memory_gb": hardware.memory_gb, "bandwidth_gbs": hardware.bandwidth_gbs,
                  "fp16_tflops": hardware.fp16_tflops, "fp16_acc_tflops": hardware.fp16_acc_tflops,
                  "tdp_w": hardware.tdp_w, "kind": hardware.kind, "backend": hardware.backend,
                  "architecture": hardware.architecture if hardware.architecture in ARCHITECTURES else None,
                  "vendor": hardware.vendor or None, "interconnect": hardware.interconnect or None,
                  "interconnect_gbs": hardware.interconnect_gbs,
                  "interconnect_mesh_peers": hardware.interconnect_mesh_peers,
                  "usable_pct": (None if hardware.usable_memory_factor is None
                                 else round(hardware.usable_memory_factor * 100, 2))}
        return {key: f"{value:g}" if isinstance(value, float) else str(value)
                for key, value in values.items() if value is not None}

    def clean(self) -> dict:
        data = super().clean()
        if self.errors:
            return data
        params = {key: "" if value is None else str(value) for key, value in data.items() if key != "usable_pct"}
        if data.get("usable_pct") is not None:
            params["usable_memory_factor"] = str(data["usable_pct"] / 100)
        try:
            self.hardware = hardware_from_params(params, option="hardware")
        except SizingError as error:
            field = next((name for name in self.FIELDS if f"'{name}'" in str(error)), None)
            self.add_error(field, str(error))
        return data


class ConfigSubmitForm(forms.Form):
    """Paste or upload a Hugging Face config.json (parsed safely, never executed or fetched)."""

    config_text = forms.CharField(label=_("config.json (paste)"), required=False,
                                  widget=forms.Textarea(attrs={"rows": 14, "spellcheck": "false"}))
    config_file = forms.FileField(label=_("…or upload config.json"), required=False)

    def clean(self) -> dict:
        data = super().clean()
        upload = data.get("config_file")
        text = data.get("config_text") or ""
        field = "config_file" if upload else "config_text"
        if upload:
            if upload.size > MAX_CONFIG_BYTES:
                raise ValidationError({field: _("config.json is larger than %(kb)d KB.") % {
                    "kb": MAX_CONFIG_BYTES // 1024}})
            try:
                text = upload.read().decode("utf-8")
            except UnicodeDecodeError:
                raise ValidationError({field: _("The file is not UTF-8 text.")}) from None
        if not text.strip():
            raise ValidationError({"config_text": _("Paste a config.json or upload the file.")})
        try:
            data["config"] = load_config_json(text)
        except ValidationError as error:
            raise ValidationError({field: error.messages}) from None
        return data
