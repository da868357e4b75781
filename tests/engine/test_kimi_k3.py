"""Kimi K3 (kimi_linear): 24 MLA layers and 69 Kimi Delta Attention layers, sized from its config.json.

Hand-derived from the config the catalog keeps (catalog/seed/models.json, moonshotai/Kimi-K3 as ai-dynamo/aiconfigurator
copies it): hidden 7168, 93 layers; linear_attn_config full_attn_layers [4, 8, …, 92, 93] and kda_layers, 1-based;
KDA 96 heads × 128, conv kernel 4; MLA 96 heads, q_lora 1536, kv_lora 512, rope 64, nope 128, v 128; layer 0 dense
(33792), then 896 experts of 3072 at a 3584-wide latent, top-16, 2 shared; vocab 163840. KDA shapes: vLLM
models/kimi_k3 kda.py and llama.cpp src/models/kimi-k3.cpp; state sizes: llama.cpp n_embd_r / n_embd_s, vLLM
mamba_utils.kda_state_shape / kda_state_dtype.
"""

from __future__ import annotations

from reports.launch import vllm_command
from reports.sizing.estimate import attention_kind, plan_memory
from reports.sizing.kv_cache import kv_cache
from reports.sizing.parameters import count_parameters, tensor_inventory
from reports.sizing.weights import sized_tensors
from reports.sizing.specs import Scenario
from bench import seed_catalog as catalog

H, HEADS, HEAD, CONV = 7168, 96, 128, 4
WIDTH = HEADS * HEAD  # 12,288
MLA_LAYERS, KDA_LAYERS = 24, 69


def k3():
    return catalog.model("kimi-k3-2-8t-a104b")


def test_layers_follow_the_one_based_lists():
    spec = k3()
    full = [index for index, layer in enumerate(spec.layers) if layer.mixer == "full"]
    assert full == [*range(3, 92, 4), 92]  # 4, 8, …, 92 and 93, counted from 1
    assert sum(layer.mixer == "linear" for layer in spec.layers) == KDA_LAYERS
    assert spec.layers[0].ffn == "dense" and all(layer.ffn == "moe" for layer in spec.layers[1:])
    assert spec.linear_attention.kind == "kda" and spec.moe.latent_size == 3584
    assert spec.native_dtype == "mxfp4" and spec.vllm_ssm_state_dtype == "float32"
    assert attention_kind(spec) == "hybrid"


def test_a_kda_layer_has_the_projections_of_the_engines_code():
    """q, k, v, g: 4 × 7168 × 12288; f_a 7168 × 128, f_b 128 × 12288; b 7168 × 96; dt_bias 12288; A_log 96;
    conv 4 × 3 × 12288; o_norm 128; o_proj 12288 × 7168."""
    layer_1 = [t for t in tensor_inventory(k3()) if t.layer == 1 and t.name.startswith("kda_")]
    expected = (4 * H * WIDTH + H * HEAD + HEAD * WIDTH + H * HEADS + WIDTH + HEADS + CONV * 3 * WIDTH + HEAD
                + WIDTH * H)
    assert sum(t.elements for t in layer_1) == expected


def test_parameters_agree_with_the_name_2_8t_a104b():
    params = count_parameters(k3())
    assert round(params.total / 1e11) == 28
    assert round(params.active_excluding_embedding / 1e9) == 104


def test_kv_cache_is_the_mla_latent_of_24_layers_plus_the_kda_state():
    context = 131_072
    llama = kv_cache(k3(), Scenario(context=context))
    conv, state = (CONV - 1) * 3 * WIDTH, HEADS * HEAD * HEAD  # 110,592 and 1,572,864 elements per layer
    assert llama.term("mla").bytes == MLA_LAYERS * (512 + 64) * 2 * context  # K-only latent, f16
    assert llama.term("linear").bytes == KDA_LAYERS * (conv + state) * 4  # llama.cpp keeps recurrent state in f32
    vllm = kv_cache(k3(), Scenario(engine="vllm", kv_dtype="auto", context=context))
    assert vllm.term("mla").bytes == MLA_LAYERS * (512 + 64) * 2 * context  # bf16 latent, 16-token pages
    # vLLM: the conv state in the model dtype (bf16), the recurrent state in float32 (kda_state_dtype)
    assert vllm.term("linear").bytes == KDA_LAYERS * (conv * 2 + state * 4) == 449_372_160


def test_mxfp4_covers_the_latent_projections_and_vllm_trusts_remote_code():
    """The config's compressed-tensors MXFP4 quantizes every Linear outside its ignore list (self_attn, shared experts,
    the dense MLP, lm_head): the routed experts and the latent MoE's down/up projections, 17 B per 32 weights."""
    spec = k3()
    by_name = {}
    for item in sized_tensors(spec, "MXFP4"):
        by_name.setdefault(item.tensor.name, []).append(item)
    for name in ("ffn_latent_down", "ffn_latent_up", "ffn_gate_exps"):
        assert all(item.nbytes == item.tensor.elements * 17 / 32 for item in by_name[name]), name
    for name in ("kda_q", "attn_q_b", "ffn_up_shexp", "output"):
        assert all(item.nbytes == 2 * item.tensor.elements for item in by_name[name]), name
    scenario = Scenario(engine="vllm", quant="MXFP4", kv_dtype="fp8", gpus=8, context=131_072)
    plan = plan_memory(spec, catalog.accelerator("b300-288gb"), scenario)
    assert "--trust-remote-code" in vllm_command(spec, scenario, plan).lines
    # compressed-tensors, not gpt-oss's quant_method "mxfp4": no Mxfp4MoEMethod padding on the experts.
    assert spec.checkpoint_quant_method == "compressed-tensors"
    assert plan.tensor_parallel.per_rank_padding_bytes == 0
    gpt_oss = catalog.model("gpt-oss-120b")
    assert gpt_oss.checkpoint_quant_method == "mxfp4"
    padded = plan_memory(gpt_oss, catalog.accelerator("h100-80gb-sxm"),
                         Scenario(engine="vllm", quant="MXFP4", kv_dtype="auto", context=8192))
    assert padded.tensor_parallel.per_rank_padding_bytes > 0
