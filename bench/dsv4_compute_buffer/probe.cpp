#include "llama.h"
#include <cstdio>
#include <cstdlib>
#include <cstring>
int main(int argc, char ** argv) {
    const char * path = argv[1];
    int n_ctx = atoi(argv[2]);
    int n_ubatch = atoi(argv[3]);
    int fa = atoi(argv[4]);           // 1 on, 0 off, -1 auto
    int n_outputs_max = argc > 5 ? atoi(argv[5]) : 1;
    int n_batch = argc > 6 ? atoi(argv[6]) : (n_ubatch > 2048 ? n_ubatch : 2048);
    llama_backend_init();
    auto mp = llama_model_default_params();
    mp.no_alloc = true;
    mp.use_extra_bufts = false; mp.load_mode = LLAMA_LOAD_MODE_NONE;
    mp.n_gpu_layers = 0;
    llama_model * model = llama_model_load_from_file(path, mp);
    if (!model) { fprintf(stderr, "load failed\n"); return 1; }
    auto cp = llama_context_default_params();
    cp.n_ctx = n_ctx; cp.n_batch = n_batch; cp.n_ubatch = n_ubatch; cp.n_seq_max = 1;
    cp.n_outputs_max = n_outputs_max;
    cp.flash_attn_type = fa == 1 ? LLAMA_FLASH_ATTN_TYPE_ENABLED : (fa == 0 ? LLAMA_FLASH_ATTN_TYPE_DISABLED : LLAMA_FLASH_ATTN_TYPE_AUTO);
    cp.swa_full = getenv("SWA_FULL") ? true : false; cp.type_k = GGML_TYPE_F16; cp.type_v = GGML_TYPE_F16;
    llama_context * ctx = llama_init_from_model(model, cp);
    if (!ctx) { fprintf(stderr, "ctx failed\n"); return 2; }
    llama_free(ctx); llama_model_free(model);
    return 0;
}
