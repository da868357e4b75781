"""Launch commands (reports/launch.py) as the engines read them: the slots and cache llama-server builds, vLLM's
quantization and offload flags."""

from __future__ import annotations

from dataclasses import replace

from reports.launch import llama_cpp_command, vllm_command
from reports.sizing.estimate import estimate, plan_memory
from reports.sizing.specs import Scenario
from bench import seed_catalog as catalog


def test_llama_server_gets_the_slots_the_plan_sizes():
    """llama-server without -np starts 4 slots on one unified cache (-np auto, ggml-org/llama.cpp PR #17997), whose
    sliding-window part then holds 4 windows: Gemma 3's plan holds one, so the command says -np 1. Several sequences
    are one unified cache of context × sequences cells in the plan; an explicit -np turns that off unless
    --kv-unified is given (issue #23652)."""
    gemma, gpu = catalog.model("gemma-3-27b-it"), catalog.accelerator("rtx-4090")
    one = Scenario(context=32_768)
    lines = llama_cpp_command(gemma, one, plan_memory(gemma, gpu, one)).lines
    assert lines[1:3] == ("-c 32768", "-np 1") and "--kv-unified" not in lines
    eight = Scenario(context=32_768, batch=8)
    lines = llama_cpp_command(gemma, eight, plan_memory(gemma, gpu, eight)).lines
    assert lines[1:4] == ("-c 262144", "-np 8", "--kv-unified")


def test_vllm_reads_awq_from_the_checkpoint():
    """--quantization awq would force vLLM's generic AWQ kernel over Marlin; the catalog names no AWQ repository, so
    the command serves a local directory and the page says where to point it."""
    llama, gpu = catalog.model("llama-3-3-70b-instruct"), catalog.accelerator("h100-80gb-sxm")
    scenario = Scenario(engine="vllm", quant="AWQ", kv_dtype="fp8")
    command = vllm_command(llama, scenario, plan_memory(llama, gpu, scenario))
    assert command.lines[0] == "vllm serve ./llama-3-3-70b-instruct-AWQ"
    assert not any(line.startswith("--quantization") for line in command.lines)
    assert "quantized_repo" in command.note_codes


def test_several_unified_memory_machines_are_joined_over_rpc():
    """A Mac is one device: 2 × Mac Studio is two machines, which llama.cpp joins through rpc-server (--rpc); an
    -ts over two local devices would load everything on the one machine."""
    gemma, mac = catalog.model("gemma-3-27b-it"), catalog.accelerator("mac-studio-m3-ultra-256gb")
    two = Scenario(gpus=2)
    command = llama_cpp_command(gemma, two, plan_memory(gemma, mac, two), separate_machines=True)
    assert "--rpc MACHINE-2:50052" in command.lines and "rpc_machines" in command.note_codes
    one = Scenario()
    assert not any(line.startswith("--rpc") for line in
                   llama_cpp_command(gemma, one, plan_memory(gemma, mac, one), separate_machines=True).lines)


def test_more_gpus_than_a_server_holds_are_reached_over_rpc():
    """16 × H100 are two HGX servers of 8: llama.cpp reaches the second server's GPUs through rpc-server, which the
    command's note says; 8 GPUs are one server."""
    deepseek, h100 = catalog.model("deepseek-v3-0324"), catalog.accelerator("h100-80gb-sxm")
    notes = {}
    for gpus in (8, 16):
        scenario = Scenario(quant="Q8_0", gpus=gpus)
        notes[gpus] = llama_cpp_command(deepseek, scenario, plan_memory(deepseek, h100, scenario)).note_codes
    assert "rpc_servers" in notes[16] and "rpc_servers" not in notes[8]


def test_a_command_whose_offload_leaves_the_gpu_short_says_so():
    llama, rtx_3090 = catalog.model("llama-3-3-70b-instruct"), catalog.accelerator("rtx-3090")
    short, enough = Scenario(offload_pct=30.0), Scenario(offload_pct=50.0)
    assert "offload_short" in llama_cpp_command(llama, short, plan_memory(llama, rtx_3090, short)).note_codes
    assert "offload_short" not in llama_cpp_command(llama, enough, plan_memory(llama, rtx_3090, enough)).note_codes


def test_a_gguf_beyond_one_hugging_face_file_is_named_as_parts():
    """DeepSeek-V3 at Q4_K_M is 404 GB of GGUF: published in parts (Hugging Face stores 50 GB a file). llama.cpp
    loads them from the first; vLLM loads one file, so they are merged first. Llama 3.1 8B (4.9 GB) is one file."""
    from reports.launch import HF_MAX_FILE_BYTES

    deepseek, llama, h200 = (catalog.model("deepseek-v3-0324"), catalog.model("llama-3-1-8b-instruct"),
                             catalog.accelerator("h200-141gb-sxm"))
    on_four = Scenario(gpus=4)
    plan = plan_memory(deepseek, h200, on_four)
    assert plan.weights.total_bytes > HF_MAX_FILE_BYTES
    parts = llama_cpp_command(deepseek, on_four, plan)
    assert "gguf_in_parts" in parts.note_codes
    assert parts.model_argument == "./deepseek-v3-0324-Q4_K_M-00001-of-0000N.gguf"  # the first part, as the note says
    gguf_on_vllm = Scenario(gpus=4, engine="vllm", kv_dtype="auto")
    command = vllm_command(deepseek, gguf_on_vllm, plan_memory(deepseek, h200, gguf_on_vllm))
    assert "gguf_merge_for_vllm" in command.note_codes
    assert command.lines[0] == "vllm serve ./deepseek-v3-0324-Q4_K_M.gguf" == f"vllm serve {command.model_argument}"
    # A published repository's parts cannot be served as repo:quant either: the merged local file is.
    glm, h100 = replace(catalog.model("glm-4-5"), gguf_repo="unsloth/GLM-4.5-GGUF"), catalog.accelerator("h100-80gb-sxm")
    glm_command = vllm_command(glm, gguf_on_vllm, plan_memory(glm, h100, gguf_on_vllm))
    assert glm_command.lines[0] == "vllm serve ./glm-4-5-Q4_K_M.gguf"
    small = plan_memory(llama, h200, Scenario())
    assert small.weights.total_bytes < HF_MAX_FILE_BYTES
    assert "gguf_in_parts" not in llama_cpp_command(llama, Scenario(), small).note_codes


def test_vllm_serves_fp32_from_the_checkpoint_with_its_dtype():
    """--quant FP32 under vLLM is the checkpoint served with --dtype float32 (vllm_memory.csv's float32 row: 29.98
    GiB of weights, a float32 KV cache); without the flag vLLM would serve bfloat16, and F32 is no GGUF it loads.
    FP16 of a bf16 release needs --dtype float16; BF16 of it needs nothing."""
    llama = catalog.model("llama-3-1-8b-instruct")
    gpu = catalog.accelerator("h100-80gb-sxm")
    for quant, flag in (("FP32", "--dtype float32"), ("FP16", "--dtype float16"), ("BF16", None)):
        scenario = Scenario(engine="vllm", quant=quant, kv_dtype="auto", context=8192)
        command = vllm_command(llama, scenario, plan_memory(llama, gpu, scenario))
        assert command.lines[0] == f"vllm serve {llama.hf_repo or './' + llama.slug}", quant  # no GGUF
        assert (flag in command.lines) if flag else not any(line.startswith("--dtype") for line in command.lines)


def test_a_tag_asked_of_a_repo_whose_files_are_unknown_is_flagged():
    """A catalog repo without its file listing (gguf_repo_quants empty) is still asked for the chosen format, as the
    seed page does (-hf unsloth/GLM-5-GGUF:Q4_K_M), but the tag was not seen in the repo: the commands say so
    (note gguf_tag_unverified). A listed repo (ggml-org/gemma-3-27b-it-GGUF: Q4_K_M, Q8_0, F16) needs no such note."""
    gemma = replace(catalog.model("gemma-3-27b-it"), gguf_repo="ggml-org/gemma-3-27b-it-GGUF",
                    gguf_repo_quants=("Q4_K_M", "Q8_0", "F16"))  # the seed row's values (bench specs carry no repos)
    h100 = catalog.accelerator("h100-80gb-sxm")
    unlisted = replace(gemma, gguf_repo_quants=())
    scenario = Scenario(quant="Q4_K_M")
    llama = llama_cpp_command(unlisted, scenario, plan_memory(unlisted, h100, scenario))
    assert llama.lines[0] == "llama-server -hf ggml-org/gemma-3-27b-it-GGUF:Q4_K_M"
    assert "gguf_tag_unverified" in llama.note_codes
    on_vllm = Scenario(quant="Q4_K_M", engine="vllm", kv_dtype="auto")
    vllm = vllm_command(unlisted, on_vllm, plan_memory(unlisted, h100, on_vllm))
    assert vllm.lines[0] == "vllm serve ggml-org/gemma-3-27b-it-GGUF:Q4_K_M" and "gguf_tag_unverified" in vllm.note_codes
    listed = llama_cpp_command(gemma, scenario, plan_memory(gemma, h100, scenario))
    assert listed.lines[0] == llama.lines[0] and "gguf_tag_unverified" not in listed.note_codes
    no_repo = replace(gemma, gguf_repo="", gguf_repo_quants=())
    assert "gguf_tag_unverified" not in llama_cpp_command(no_repo, scenario,
                                                          plan_memory(no_repo, h100, scenario)).note_codes


def test_fp32_under_vllm_is_no_experimental_gguf():
    """--quant FP32 under vLLM resolves to the F32 type, which is a GGUF type too: the estimate warned "vLLM's GGUF
    support is experimental" beside a command that serves the checkpoint with --dtype float32. A real GGUF keeps it."""
    llama, gpu = catalog.model("llama-3-1-8b-instruct"), catalog.accelerator("h100-80gb-sxm")
    fp32 = estimate(llama, gpu, Scenario(engine="vllm", quant="FP32", kv_dtype="auto"))
    assert "vllm_gguf_experimental" not in {note.code for note in fp32.warnings}
    gguf = estimate(llama, gpu, Scenario(engine="vllm", quant="Q4_K_M", kv_dtype="auto"))
    assert "vllm_gguf_experimental" in {note.code for note in gguf.warnings}
