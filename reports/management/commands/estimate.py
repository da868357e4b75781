"""``manage.py estimate``: the command-line face of the estimate contract (docs/estimate-contract.md).

Every option is read as text and converted here, so any bad value ends as one line on stderr naming the option
and exit status 2 (CommandError(returncode=2)), never an argparse usage block or a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from reports.estimates import CatalogSnapshot, catalog_listing
from reports.sizing.config_parser import parse_config
from reports.sizing.errors import SizingError
from reports.sizing.estimate import Estimate, hardware_from_dict, validate_scenario
from reports.sizing.specs import CloudOfferSpec
from reports.scenario_options import DEFAULT_SCENARIO as _DEFAULTS
from reports.scenario_options import scenario_from_options

GIB = 2**30
MAX_INPUT_FILE_BYTES = 2 * 2**20  # a config.json or hardware file larger than this is not one



class Command(BaseCommand):
    help = "Memory, fit, speed, cost and fine-tuning estimate for a model on an accelerator (estimate contract)."

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        parser = super().create_parser(prog_name, subcommand, **kwargs)

        def one_line_error(message: str) -> None:
            # argparse's own errors (unknown option, missing value) become the contract's one-line message.
            if parser.called_from_command_line:
                parser.exit(2, f"error: {message}\n")
            raise CommandError(message, returncode=2)

        parser.error = one_line_error  # type: ignore[method-assign]
        return parser

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--model", help="catalog model slug")
        parser.add_argument("--config", help="path of a Hugging Face config.json")
        parser.add_argument("--gpu", help="catalog accelerator slug")
        parser.add_argument("--hardware", help="path of a JSON file describing an accelerator")
        parser.add_argument("--gpus", default=str(_DEFAULTS.gpus), help="GPU count (tensor parallel for vLLM)")
        parser.add_argument("--quant", default=_DEFAULTS.quant, help="weight format, e.g. Q4_K_M, BF16, FP8, AWQ")
        parser.add_argument("--context", default=str(_DEFAULTS.context), help="context tokens the KV cache holds")
        parser.add_argument("--batch", default=str(_DEFAULTS.batch), help="parallel sequences")
        parser.add_argument("--kv-dtype", default=_DEFAULTS.kv_dtype, help="f16 | bf16 | fp8 | q8_0 | q4_0")
        parser.add_argument("--engine", default=_DEFAULTS.engine, help="llama.cpp | vllm")
        parser.add_argument("--offload-pct", default="auto", help="share of weights in system RAM, or auto")
        parser.add_argument("--depth", default=str(_DEFAULTS.depth), help="tokens cached when decode is measured")
        parser.add_argument("--prompt", default=str(_DEFAULTS.prompt), help="prompt tokens for prefill and TTFT")
        parser.add_argument("--gpu-memory-utilization", default=str(_DEFAULTS.gpu_memory_utilization),
                            help="vLLM: share of each GPU's memory vLLM takes")
        parser.add_argument("--max-num-seqs", default=None, help="vLLM max_num_seqs (default: vLLM's)")
        parser.add_argument("--max-num-batched-tokens", default=None,
                            help="vLLM max_num_batched_tokens (default: vLLM's)")
        parser.add_argument("--ram-bandwidth", default=None, help="system RAM bandwidth for offload, GB/s")
        parser.add_argument("--format", default="text", help="text | json")
        parser.add_argument("--list", action="store_true", help="list catalog models and accelerators")

    def handle(self, *args: Any, **options: Any) -> None:
        output_format = options["format"]
        if output_format not in ("text", "json"):
            raise CommandError(f"--format must be text or json (got {output_format!r})", returncode=2)
        try:
            if options["list"]:
                self._list(output_format)
                return
            result = self._estimate(options)
        except SizingError as error:
            raise CommandError(str(error), returncode=2) from None
        if output_format == "json":
            self.stdout.write(json.dumps(result.to_contract_json(), indent=2, ensure_ascii=False))
        else:
            self.stdout.write(render_text(result))

    def _list(self, output_format: str) -> None:
        listing = catalog_listing()
        if output_format == "json":
            self.stdout.write(json.dumps(listing.as_json(), indent=2, ensure_ascii=False))
            return
        self.stdout.write("Models:")
        for model in listing.models:
            self.stdout.write(f"  {model['slug']:<40} {model['name']}")
        self.stdout.write("Hardware:")
        for hw in listing.hardware:
            self.stdout.write(f"  {hw['slug']:<40} {hw['vendor']} {hw['name']} ({hw['memory_gb']:g} GB)")

    def _estimate(self, options: dict[str, Any]) -> Estimate:
        # Everything that needs no database first, so a bad value is reported before any catalog query.
        scenario = scenario_from_options(options)
        validate_scenario(scenario)
        model_source = _exactly_one(options, "--model", "--config")
        hardware_source = _exactly_one(options, "--gpu", "--hardware")
        hardware = None if hardware_source == "--gpu" else hardware_from_dict(
            _read_json(options["hardware"], "--hardware"))
        model = None
        if model_source == "--config":
            path = options["config"]
            config = _read_json(path, "--config")
            name = str(config.get("_name_or_path") or Path(path).stem)
            model = parse_config(config, slug=Path(path).stem, name=name)
        catalog = CatalogSnapshot()
        model = model or catalog.model(options["model"])
        hardware = hardware or catalog.accelerator(options["gpu"])
        return catalog.estimate(model, hardware, scenario)


def _exactly_one(options: dict[str, Any], first: str, second: str) -> str:
    given = [name for name in (first, second) if options.get(name.lstrip("-").replace("-", "_"))]
    if len(given) != 1:
        raise SizingError(f"give exactly one of {first} or {second}")
    return given[0]


def _read_json(path: str, option: str) -> Any:
    file = Path(path)
    try:
        if file.stat().st_size > MAX_INPUT_FILE_BYTES:
            raise SizingError(f"{option} {path}: file larger than {MAX_INPUT_FILE_BYTES // 2**20} MiB")
        text = file.read_text(encoding="utf-8")
    except OSError as error:
        raise SizingError(f"{option} {path}: cannot read ({error.strerror or error})") from None
    except UnicodeDecodeError:
        raise SizingError(f"{option} {path}: not UTF-8 text") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise SizingError(f"{option} {path}: not valid JSON ({error.msg} at line {error.lineno})") from None
    if option == "--config" and not isinstance(data, dict):
        raise SizingError(f"{option} {path}: expected a JSON object")
    return data


def _number(value: float | None, digits: int = 1, unit: str = "") -> str:
    return "unknown" if value is None else f"{value:,.{digits}f}{unit}"


def render_text(result: Estimate) -> str:
    """A human-readable summary of the same figures as the JSON."""
    data = result.to_contract_json()
    model, hw, scenario, memory = data["model"], data["hardware"], data["scenario"], data["memory_gib"]
    lines = [
        f"{model['name']} ({model['params_total'] / 1e9:,.1f} B parameters, {model['params_active'] / 1e9:,.1f} B "
        f"active, attention {model['attention'] or 'unknown'})",
        f"on {hw['count']} × {hw['name']} ({hw['memory_gb']:g} GB each, usable {hw['usable_gib']:.1f} GiB, "
        f"{hw['bandwidth_gbs']:g} GB/s)",
        f"scenario: {scenario['quant']}, context {scenario['context']:,}, batch {scenario['batch']}, "
        f"KV {scenario['kv_dtype']}, {scenario['engine']}, depth {scenario['depth']:,}, prompt {scenario['prompt']:,}",
        "",
        f"memory:   weights {memory['weights']:,.2f} GiB + KV cache {_number(memory['kv_cache'], 2)} GiB + runtime "
        f"{memory['runtime']:,.2f} GiB = {memory['required']:,.2f} GiB required",
        f"          per GPU {memory['per_gpu']:,.2f} GiB; in system RAM {memory['offloaded']:,.2f} GiB "
        f"({scenario['offload_pct']:.1f} % of the weights)",
        f"verdict:  {data['verdict']} (utilization {data['utilization_pct']:.0f} %, headroom "
        f"{data['headroom_gib']:,.2f} GiB)",
        f"decode:   {_number(data['decode_tok_s'])} tok/s one stream; "
        f"{_number(data['aggregate_decode_tok_s'])} tok/s for {scenario['batch']} stream(s)",
        f"prefill:  {_number(data['prefill_tok_s'])} tok/s; time to first token {_number(data['ttft_ms'], 0)} ms",
        f"cost:     {_cost_line(result)}",
        f"KV pool:  {_number(data['kv_tokens_capacity'], 0)} tokens",
        "fine-tune: " + ", ".join(f"{method} {_number(value, 1)} GiB"
                                  for method, value in data["finetune_gib"].items()),
    ]
    if data["warnings"]:
        lines.append("")
        lines += [f"note: {warning}" for warning in data["warnings"]]
    return "\n".join(lines)


def _cost_line(result: Estimate) -> str:
    cost = result.cost
    if cost is None:
        return "no fitting cloud offer"
    line = f"${cost.single_stream_usd_per_mtok:,.2f} per 1M tokens on {_offer_text(cost.offer)}"
    batch_cost = result.batch_cost
    if result.scenario.batch > 1 and batch_cost is not None:
        line += f"; ${batch_cost.batch_usd_per_mtok:,.2f} with {result.scenario.batch} streams"
        if batch_cost.offer != cost.offer:
            line += f" on {_offer_text(batch_cost.offer)}"
    return line


def _offer_text(offer: CloudOfferSpec) -> str:
    return (f"{offer.provider} {offer.instance} ({offer.gpu_count} × {offer.accelerator_slug}, "
            f"${offer.hourly_usd:,.2f}/h)")
