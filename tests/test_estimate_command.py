"""`manage.py estimate`: the contract's options and JSON, one-line errors with exit status 2, the whole grid."""

from __future__ import annotations

import io
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from catalog.seed_loader import load_catalog
from reports.estimates import CatalogSnapshot
from reports.sizing.errors import SizingError
from reports.sizing.estimate import default_scenario, kv_cache_known
from reports.sizing.specs import Scenario

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def catalog(db):
    load_catalog()


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("estimate", *args, stdout=out)
    return out.getvalue()


def test_json_answers_the_contract(catalog):
    result = json.loads(run("--model", "glm-4-5", "--gpu", "instinct-mi325x-256gb", "--format", "json"))
    assert result["verdict"] == "fits"
    assert result["memory_gib"]["required"] == pytest.approx(204.19, rel=0.01)  # the seed page
    assert result["hardware"]["usable_gib"] == pytest.approx(243.2)
    assert result["scenario"] == {"quant": "Q4_K_M", "context": 8192, "batch": 1, "kv_dtype": "f16",
                                  "engine": "llama.cpp", "offload_pct": 0.0, "depth": 0, "prompt": 4096}
    assert result["cost_per_mtok_usd"] > 0  # priced on the cheapest catalog offer that fits


def test_text_format(catalog):
    text = run("--model", "llama-3-1-8b-instruct", "--gpu", "rtx-4090", "--context", "32768", "--batch", "2")
    assert "required" in text and "verdict:" in text and "decode:" in text


def test_options_change_the_answer(catalog):
    base = json.loads(run("--model", "qwen3-8b", "--gpu", "h100-80gb-sxm", "--format", "json"))
    vllm = json.loads(run("--model", "qwen3-8b", "--gpu", "h100-80gb-sxm", "--format", "json", "--engine", "vllm",
                          "--quant", "BF16", "--gpus", "2", "--kv-dtype", "fp8", "--max-num-seqs", "64",
                          "--gpu-memory-utilization", "0.8", "--depth", "1000", "--prompt", "512"))
    assert vllm["kv_tokens_capacity"] > base["kv_tokens_capacity"] == 8192
    assert vllm["hardware"]["count"] == 2 and vllm["scenario"]["kv_dtype"] == "fp8"
    offloaded = json.loads(run("--model", "qwen3-8b", "--gpu", "h100-80gb-sxm", "--format", "json",
                               "--offload-pct", "50"))
    # The effective share: 50 % asked for, rounded up to whole layers (Qwen3-8B: 36 layers of ~2.6 % each).
    assert 50 <= offloaded["scenario"]["offload_pct"] < 53
    assert offloaded["decode_tok_s"] < base["decode_tok_s"]


def test_list_json(catalog):
    listing = json.loads(run("--list", "--format", "json"))
    assert {"slug", "name", "hf_repo"} == set(listing["models"][0])
    assert {"slug", "name", "vendor", "memory_gb"} == set(listing["hardware"][0])
    assert len(listing["models"]) == 83 and len(listing["hardware"]) == 49


def test_config_and_hardware_files(db, tmp_path):
    config = {"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
              "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256,
              "max_position_embeddings": 131072, "torch_dtype": "bfloat16"}
    hardware = {"name": "RTX 4090", "vendor": "NVIDIA", "memory_gb": 24, "bandwidth_gbs": 1008,
                "fp16_tflops": 165.2, "kind": "discrete", "backend": "cuda", "tdp_w": 450}
    (tmp_path / "config.json").write_text(json.dumps(config))
    (tmp_path / "gpu.json").write_text(json.dumps(hardware))
    result = json.loads(run("--config", str(tmp_path / "config.json"), "--hardware", str(tmp_path / "gpu.json"),
                            "--format", "json"))
    assert result["memory_gib"]["kv_cache"] == 1.0  # 131,072 B/token × 8,192 tokens
    assert result["hardware"]["name"] == "RTX 4090" and result["verdict"] == "fits"


@pytest.mark.parametrize(("args", "option"), [
    (["--model", "no-such-model", "--gpu", "rtx-4090"], "--model 'no-such-model' is not in the catalog"),
    (["--model", "qwen3-8b", "--gpu", "no-such-gpu"], "--gpu 'no-such-gpu' is not in the catalog"),
    (["--model", "qwen3-8b", "--gpu", "rtx-4090", "--engine", "vllm", "--gpus", "3"],
     "--gpus 3: 32 attention heads are not divisible by 3"),
])
def test_errors_that_need_the_catalog(catalog, args, option):
    with pytest.raises(CommandError, match=option) as raised:
        run(*args)
    assert raised.value.returncode == 2


# These are rejected before any catalog lookup, so they need only an (empty) database.
@pytest.mark.parametrize(("args", "option"), [
    (["--gpu", "rtx-4090"], "--model or --config"),
    (["--model", "qwen3-8b", "--config", "x.json", "--gpu", "rtx-4090"], "--model or --config"),
    (["--model", "qwen3-8b"], "--gpu or --hardware"),
    (["--model", "qwen3-8b", "--gpu", "rtx-4090", "--context", "lots"], "--context"),
    (["--model", "qwen3-8b", "--gpu", "rtx-4090", "--context", "0"], "--context"),
    (["--model", "qwen3-8b", "--gpu", "rtx-4090", "--batch", "-1"], "--batch"),
    (["--model", "qwen3-8b", "--gpu", "rtx-4090", "--gpus", "0"], "--gpus"),
    (["--model", "qwen3-8b", "--gpu", "rtx-4090", "--quant", "Q9"], "--quant"),
    (["--model", "qwen3-8b", "--gpu", "rtx-4090", "--kv-dtype", "fp8"], "--kv-dtype"),
    (["--model", "qwen3-8b", "--gpu", "rtx-4090", "--engine", "tgi"], "--engine"),
    (["--model", "qwen3-8b", "--gpu", "rtx-4090", "--offload-pct", "120"], "--offload-pct"),
    (["--model", "qwen3-8b", "--gpu", "rtx-4090", "--offload-pct", "nan"], "--offload-pct"),
    (["--model", "qwen3-8b", "--gpu", "rtx-4090", "--format", "yaml"], "--format"),
    (["--model", "qwen3-8b", "--hardware", "/nonexistent/gpu.json"], "--hardware"),
    (["--config", "/nonexistent/config.json", "--gpu", "rtx-4090"], "--config"),
    (["--model", "qwen3-8b", "--gpu", "rtx-4090", "--no-such-option"], "unrecognized arguments"),
])
def test_bad_input_is_a_one_line_error_with_status_2(db, args, option):
    with pytest.raises(CommandError) as raised:
        run(*args)
    assert raised.value.returncode == 2
    assert option in str(raised.value) and "\n" not in str(raised.value)


def test_bad_hardware_file(db, tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "llama", "hidden_size": 64,
        "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 1000}))
    (tmp_path / "gpu.json").write_text('{"name": "X", "memory_gb": 24}')
    with pytest.raises(CommandError, match="'bandwidth_gbs' is required"):
        run("--config", str(tmp_path / "config.json"), "--hardware", str(tmp_path / "gpu.json"))
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(CommandError, match="--config .*bad.json: not valid JSON"):
        run("--config", str(tmp_path / "bad.json"), "--gpu", "rtx-4090")


@pytest.mark.parametrize("args", [
    ["--model", "qwen3-8b", "--gpu", "rtx-4090", "--context", "lots"],
    ["--model", "qwen3-8b", "--gpu", "rtx-4090", "--bogus"],
    ["--model", "qwen3-8b", "--gpu", "rtx-4090", "--gpus"],
])
def test_exit_status_and_stderr_from_the_shell(args):
    # These fail before any catalog query, so the subprocess needs no database.
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "sizer_site.test_settings"}
    done = subprocess.run([sys.executable, "manage.py", "estimate", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr


def _figures(value, path=""):
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _figures(item, f"{path}.{key}")
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield path, value
    elif value is None:
        yield path, None


# Contract figures that may be null, and the warning that must then explain it.
NULL_REASONS = {
    ".memory_gib.kv_cache": "KV cache unknown",
    ".kv_tokens_capacity": "KV cache unknown",
    ".prefill_tok_s": "no published FP16 TFLOPS",
    ".ttft_ms": "no published FP16 TFLOPS",
    ".cost_per_mtok_usd": "no catalog cloud offer fits",
    ".finetune_gib.qlora": "fine-tuning memory unknown",
    ".finetune_gib.lora": "fine-tuning memory unknown",
    ".finetune_gib.full": "fine-tuning memory unknown",
}


def test_every_catalog_model_on_every_accelerator(catalog):
    """The whole grid at each page's default settings (vLLM where llama.cpp has no backend): every figure finite and
    non-negative, nulls explained by a warning."""
    snapshot = CatalogSnapshot()
    checked = not_sizable = 0
    for slug in snapshot.model_slugs:
        model = snapshot.model(slug)
        for hardware in snapshot.hardware.values():
            scenario = default_scenario(model, hardware)
            if scenario.engine == "vllm" and not kv_cache_known(model):
                # No engine sizes it there: vLLM needs the layer shapes, llama.cpp has no backend (report page:
                # "Not sizable on this accelerator").
                with pytest.raises(SizingError, match="no engine sizes it there"):
                    snapshot.estimate(model, hardware, scenario)
                not_sizable += 1
                continue
            result = snapshot.estimate(model, hardware, scenario).to_contract_json()
            warnings = " | ".join(result["warnings"])
            for path, value in _figures(result):
                if value is None:
                    assert path in NULL_REASONS and NULL_REASONS[path] in warnings, (slug, hardware.slug, path)
                else:
                    assert math.isfinite(value) and value >= 0 or path == ".headroom_gib", (slug, hardware.slug, path)
            assert math.isfinite(result["headroom_gib"])
            assert result["decode_tok_s"] > 0 and result["aggregate_decode_tok_s"] > 0
            assert result["verdict"] in ("fits", "tight", "unified", "exceeds")
            checked += 1
    # 9 catalog models without layer shapes or a sourced family member × Gaudi 3, MLU590, Kunlunxin P800, MetaX C500
    # (Step-3.5 Flash has its config now, and Step-3.7 Flash takes its KV shapes from it).
    assert not_sizable == 9 * 4
    assert checked + not_sizable == 83 * 49
