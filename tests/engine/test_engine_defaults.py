"""Which engine runs on which accelerator, and what a configuration opens with there (estimate.default_*)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bench import seed_catalog as catalog
from reports.sizing.errors import SizingError
from reports.sizing.estimate import (
    check_engine_runs_on, default_engine, default_kv_dtype, default_quant, default_scenario, engine_runs_on,
    plan_memory,
)


@pytest.mark.parametrize("slug", ["gaudi-3-128gb", "mlu590-80gb", "kunlunxin-p800-64gb", "metax-c500-64gb"])
def test_llama_cpp_has_no_backend_on_gaudi_cambricon_kunlunxin_metax(slug):
    hardware = catalog.accelerator(slug)
    assert not engine_runs_on("llama.cpp", hardware)
    assert engine_runs_on("vllm", hardware)
    assert default_engine(hardware) == "vllm"
    with pytest.raises(SizingError, match="llama.cpp does not run on .*; choose vllm") as raised:
        plan_memory(catalog.model("llama-3-1-8b-instruct"), hardware, default_scenario(
            catalog.model("llama-3-1-8b-instruct"), hardware, "llama.cpp"))
    assert raised.value.code == "engine_not_on_backend"
    assert raised.value.params["other"] == "vllm"


@pytest.mark.parametrize("slug", ["mtt-s4000-48gb", "rtx-4090", "instinct-mi300x-192gb", "ascend-910b-64gb",
                                  "arc-pro-b60-24gb", "mac-studio-m3-ultra-512gb"])
def test_llama_cpp_opens_where_ggml_has_a_backend(slug):
    # Moore Threads through ggml-musa; the rest through CUDA, HIP, CANN, SYCL and Metal.
    assert default_engine(catalog.accelerator(slug)) == "llama.cpp"


def test_a_visitors_own_other_accelerator_is_not_restricted():
    own = replace(catalog.accelerator("gaudi-3-128gb"), vendor="Acme", architecture="", slug="acme", name="Acme X1")
    assert engine_runs_on("llama.cpp", own)
    assert default_engine(own) == "llama.cpp"


def test_vllm_on_apple_names_llama_cpp():
    with pytest.raises(SizingError, match="vllm does not run on .*; choose llama.cpp") as raised:
        check_engine_runs_on("vllm", catalog.accelerator("mac-studio-m3-ultra-512gb"))
    assert raised.value.params["other"] == "llama.cpp"


def test_the_opening_configuration_follows_the_engine():
    llama, dsv4 = catalog.model("llama-3-1-8b-instruct"), catalog.model("deepseek-v4-flash")
    h200, gaudi = catalog.accelerator("h200-141gb-sxm"), catalog.accelerator("gaudi-3-128gb")
    # llama.cpp everywhere it runs: Q4_K_M with an F16 cache, as before.
    assert (default_quant(llama, h200, "llama.cpp"), default_kv_dtype(llama, "llama.cpp")) == ("Q4_K_M", "f16")
    assert (default_quant(dsv4, h200, "llama.cpp"), default_kv_dtype(dsv4, "llama.cpp")) == ("Q4_K_M", "f16")
    # vLLM serves the released checkpoint (`vllm serve <repo>`), not a GGUF, which it loads only experimentally ...
    assert default_quant(llama, h200, "vllm") == "BF16"
    assert default_quant(catalog.model("gpt-oss-120b"), h200, "vllm") == "MXFP4"
    # ... DeepSeek-V4's is FP8/FP4, and vLLM caches it only in FP8.
    assert (default_quant(dsv4, h200, "vllm"), default_kv_dtype(dsv4, "vllm")) == ("FP8_FP4", "fp8")
    # vLLM on Gaudi runs no GGUF (vLLM quantization table): the released BF16 checkpoint.
    opening = default_scenario(llama, gaudi)
    assert (opening.engine, opening.quant, opening.kv_dtype) == ("vllm", "BF16", "f16")
    # Each opening configuration is one the engine sizes without an error.
    plan_memory(dsv4, catalog.accelerator("b200-180gb"), replace(default_scenario(dsv4, h200, "vllm"), gpus=2))
    assert plan_memory(llama, gaudi, opening).runs


def test_vllm_opens_a_release_it_has_no_kernels_for_in_bf16():
    """gpt-oss ships MXFP4, which neither vllm-gaudi (INC, AutoAWQ, GPTQModel) nor a vendor build (Cambricon: only
    BF16/FP16 published) runs: the page opens at the BF16 upcast. An FP8 release (DeepSeek-V3) runs on Gaudi (INC)
    but not on the vendor build."""
    gpt_oss, deepseek = catalog.model("gpt-oss-20b"), catalog.model("deepseek-v3-0324")
    gaudi, mlu = catalog.accelerator("gaudi-3-128gb"), catalog.accelerator("mlu590-80gb")
    assert default_quant(gpt_oss, gaudi, "vllm") == "BF16"
    assert default_quant(gpt_oss, mlu, "vllm") == "BF16"
    assert default_quant(deepseek, gaudi, "vllm") == "FP8"
    assert default_quant(deepseek, mlu, "vllm") == "BF16"
    assert default_quant(deepseek, catalog.accelerator("h200-141gb-sxm"), "vllm") == "FP8"


@pytest.mark.parametrize("slug, llama_cpp, vllm", [("ascend-910b-64gb", "Q4_0", "BF16"),
                                                   ("atlas-300i-duo-96gb", "F16", "FP16")])
def test_ascend_opens_with_a_format_its_backend_runs(slug, llama_cpp, vllm):
    """llama.cpp's CANN backend runs F16, Q8_0 and Q4_0 (the 310P only F16), vllm-ascend on the 310P only FP16: the
    page opened at Q4_K_M, a configuration that does not run there."""
    model, hardware = catalog.model("llama-3-1-8b-instruct"), catalog.accelerator(slug)
    assert default_quant(model, hardware, "llama.cpp") == llama_cpp
    assert default_quant(model, hardware, "vllm") == vllm
    for engine in ("llama.cpp", "vllm"):
        assert plan_memory(model, hardware, default_scenario(model, hardware, engine)).format_runs


def test_without_an_accelerator_only_the_models_limits_apply():
    """The compare page's defaults (several accelerators, one configuration)."""
    llama, dsv4 = catalog.model("llama-3-1-8b-instruct"), catalog.model("deepseek-v4-flash")
    assert default_scenario(llama, None) == default_scenario(llama, catalog.accelerator("rtx-4090"))
    opening = default_scenario(dsv4, None, "vllm")
    assert (opening.engine, opening.quant, opening.kv_dtype) == ("vllm", "FP8_FP4", "fp8")
    assert default_quant(llama, None, "vllm") == "BF16"
