# Build a metadata-faithful DeepSeek-V4-Flash GGUF (shapes from config.json) with a sparse (all-zero) data section.
import sys, os
# gguf-py of the llama.cpp tree being measured: LLAMA_CPP_DIR=<llama.cpp checkout> (see README.md).
sys.path.insert(0, os.path.join(os.environ['LLAMA_CPP_DIR'], 'gguf-py'))
import numpy as np
import gguf
from gguf import GGUFWriter, GGMLQuantizationType as QT, MODEL_TENSOR as MT, TENSOR_NAMES as TN

out = sys.argv[1]
n_expert = int(sys.argv[2]) if len(sys.argv) > 2 else 256
exp_qt = QT[sys.argv[3]] if len(sys.argv) > 3 else QT.F16
arch = 'deepseek4'
n_layer = 43
n_embd = 4096; n_head = 64; head = 512; n_rot = 64; q_lora = 1024
n_ff_exp = 2048; n_exp_used = 6; n_shexp = 1
idx_heads = 64; idx_dim = 128; idx_topk = 512
o_groups = 8; o_lora = 1024; hc = 4; n_vocab = 129280
ratios = [0, 0] + [4 if i % 2 == 0 else 128 for i in range(2, n_layer)]
assert len(ratios) == 43 and ratios.count(4) == 21 and ratios.count(128) == 20

w = GGUFWriter(out, arch)
w.add_context_length(1048576)
w.add_embedding_length(n_embd)
w.add_embedding_length_out(n_embd*hc)
w.add_block_count(n_layer)
w.add_feed_forward_length(n_ff_exp)
w.add_head_count(n_head)
w.add_head_count_kv(1)
w.add_key_length(head)
w.add_value_length(head)
w.add_rope_dimension_count(n_rot)
w.add_rope_freq_base(10000.0)
w.add_layer_norm_rms_eps(1e-6)
w.add_expert_count(n_expert)
w.add_expert_used_count(n_exp_used)
w.add_q_lora_rank(q_lora)
w.add_sliding_window(128)
w.add_expert_feed_forward_length(n_ff_exp)
w.add_expert_shared_count(n_shexp)
w.add_expert_weights_scale(1.5)
w.add_expert_weights_norm(True)
w.add_swiglu_clamp_exp([10.0]*n_layer)
w.add_swiglu_clamp_shexp([10.0]*n_layer)
w.add_indexer_head_count(idx_heads)
w.add_indexer_key_length(idx_dim)
w.add_indexer_top_k(idx_topk)
w.add_attention_output_group_count(o_groups)
w.add_attention_output_lora_rank(o_lora)
w.add_attention_compress_ratios(ratios)
w.add_attention_compress_rope_freq_base(160000.0)
w.add_hyper_connection_count(hc)
w.add_hyper_connection_sinkhorn_iterations(20)
w.add_hyper_connection_epsilon(1e-6)
w.add_hash_layer_count(3)
w.add_expert_gating_func(gguf.ExpertGatingFuncType.SQRTSOFTPLUS)
w.add_tokenizer_model('no_vocab')
w.add_vocab_size(n_vocab)

def T(key, suffix, ne, qt=QT.F16, bid=None):
    name = TN[key].format(bid=bid) + ('.' + suffix if suffix else '')
    shape = list(reversed(ne))
    nel = int(np.prod(ne))
    bs, ts = gguf.GGML_QUANT_SIZES[qt]
    assert ne[0] % bs == 0, (name, ne, qt)
    nbytes = nel // bs * ts
    if qt == QT.F16:   w.add_tensor_info(name, shape, np.dtype(np.float16), nbytes)
    elif qt == QT.F32: w.add_tensor_info(name, shape, np.dtype(np.float32), nbytes)
    elif qt == QT.I32: w.add_tensor_info(name, shape, np.dtype(np.int32), nbytes)
    else:
        # byte shape for quantized
        bshape = list(reversed(ne)); bshape[-1] = bshape[-1] // bs * ts
        w.add_tensor_info(name, bshape, np.dtype(np.uint8), nbytes, raw_dtype=qt)

F32 = QT.F32
hc_dim = hc*n_embd; hc_mix = (2+hc)*hc
T(MT.TOKEN_EMBD, 'weight', [n_embd, n_vocab])
T(MT.OUTPUT_NORM, 'weight', [n_embd], F32)
T(MT.OUTPUT, 'weight', [n_embd, n_vocab])
T(MT.HC_HEAD_FN, 'weight', [hc_dim, hc], F32)
T(MT.HC_HEAD_BASE, 'weight', [hc], F32)
T(MT.HC_HEAD_SCALE, 'weight', [1], F32)
for i in range(n_layer):
    T(MT.ATTN_NORM, 'weight', [n_embd], F32, i)
    T(MT.ATTN_SINKS, 'weight', [n_head], F32, i)
    T(MT.ATTN_Q_A, 'weight', [n_embd, q_lora], QT.F16, i)
    T(MT.ATTN_Q_A_NORM, 'weight', [q_lora], F32, i)
    T(MT.ATTN_Q_B, 'weight', [q_lora, n_head*head], QT.F16, i)
    T(MT.ATTN_KV, 'weight', [n_embd, head], QT.F16, i)
    T(MT.ATTN_KV_NORM, 'weight', [head], F32, i)
    T(MT.ATTN_OUT_A, 'weight', [n_head*head//o_groups, o_lora*o_groups], QT.F16, i)
    T(MT.ATTN_OUT_B, 'weight', [o_groups*o_lora, n_embd], QT.F16, i)
    T(MT.HC_ATTN_FN, 'weight', [hc_dim, hc_mix], F32, i)
    T(MT.HC_ATTN_BASE, 'weight', [hc_mix], F32, i)
    T(MT.HC_ATTN_SCALE, 'weight', [3], F32, i)
    T(MT.HC_FFN_FN, 'weight', [hc_dim, hc_mix], F32, i)
    T(MT.HC_FFN_BASE, 'weight', [hc_mix], F32, i)
    T(MT.HC_FFN_SCALE, 'weight', [3], F32, i)
    r = ratios[i]
    if r:
        coff = 2 if r == 4 else 1
        T(MT.ATTN_COMPRESSOR_WKV, 'weight', [n_embd, coff*head], QT.F16, i)
        T(MT.ATTN_COMPRESSOR_WGATE, 'weight', [n_embd, coff*head], QT.F16, i)
        T(MT.ATTN_COMPRESSOR_APE, 'weight', [coff*head, r], F32, i)
        T(MT.ATTN_COMPRESSOR_NORM, 'weight', [head], F32, i)
        if r == 4:
            T(MT.INDEXER_PROJ, 'weight', [n_embd, idx_heads], QT.F16, i)
            T(MT.INDEXER_ATTN_Q_B, 'weight', [q_lora, idx_heads*idx_dim], QT.F16, i)
            T(MT.INDEXER_COMPRESSOR_WKV, 'weight', [n_embd, 2*idx_dim], QT.F16, i)
            T(MT.INDEXER_COMPRESSOR_WGATE, 'weight', [n_embd, 2*idx_dim], QT.F16, i)
            T(MT.INDEXER_COMPRESSOR_APE, 'weight', [2*idx_dim, r], F32, i)
            T(MT.INDEXER_COMPRESSOR_NORM, 'weight', [idx_dim], F32, i)
    T(MT.FFN_GATE_INP, 'weight', [n_embd, n_expert], QT.F16, i)
    if i < 3:
        T(MT.FFN_GATE_TID2EID, 'weight', [n_exp_used, n_vocab], QT.I32, i)
    else:
        T(MT.FFN_EXP_PROBS_B, 'bias', [n_expert], F32, i)
    T(MT.FFN_NORM, 'weight', [n_embd], F32, i)
    T(MT.FFN_GATE_EXP, 'weight', [n_embd, n_ff_exp, n_expert], exp_qt, i)
    T(MT.FFN_DOWN_EXP, 'weight', [n_ff_exp, n_embd, n_expert], exp_qt, i)
    T(MT.FFN_UP_EXP, 'weight', [n_embd, n_ff_exp, n_expert], exp_qt, i)
    T(MT.FFN_GATE_SHEXP, 'weight', [n_embd, n_ff_exp*n_shexp], QT.F16, i)
    T(MT.FFN_DOWN_SHEXP, 'weight', [n_ff_exp*n_shexp, n_embd], QT.F16, i)
    T(MT.FFN_UP_SHEXP, 'weight', [n_embd, n_ff_exp*n_shexp], QT.F16, i)

w.write_header_to_file()
w.write_kv_data_to_file()
w.write_ti_data_to_file()
w.fout[0].flush() if isinstance(w.fout, list) else None
fp = w.fout[0] if isinstance(w.fout, list) else w.fout
pos = fp.tell()
align = w.data_alignment
pad = (-pos) % align
fp.write(b'\0'*pad)
total = sum(GGUFWriter.ggml_pad(ti.nbytes, align) for ti in w.tensors[0].values())
start = fp.tell()
fp.close()
os.truncate(out, start + total)
print('data start', start, 'data bytes', total, 'file', os.path.getsize(out))
