/*
 * ScatterPaKvCache (scatter_pa_kv_cache.toml): the tiling's checks in its order (GetTemplateType, GetInputDtype,
 * GetIndexDtype, CheckInputDimNum, CheckInputDim, DoNzOpTiling; 561002 with its messages) and the kernel: each
 * token's numHead * headSize elements copied into the cache at its slot (a pure copy: class a).
 *   Norm:  cache element (slot, h) at the flattened offset slot * tokenSize + h (scatter_pa_kv_cache_nd.h).
 *   PA_NZ: cache [numBlocks, tokenSize / L, blockSize, L] with L = 32 / elemsize: element h of the token at
 *          slot s is cache[s / blockSize][h / L][s % blockSize][h % L] (the FRACTAL_NZ tile).
 * Slots < 0 are skipped as the kernel does; one past the cache is a device fault (the NPU would write outside it).
 */
#include <stdlib.h>
#include <string.h>

#include "kernels/nz_layout.h"
#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"

typedef struct {
    int nz, has_value;
    int64_t tokens, tk, tv;      /* tokens; elements per token of key and value (numHead * headSize) */
    int64_t block_size, lk, lv;  /* PA_NZ: the cache's blockSize and last dims                    */
} spkv_plan;

#define tiling_fail(c, ...) op_failf((c)->api, ACLNN_ERR_INNER_TILING_ERROR, __VA_ARGS__)

/* spkv_plan key keyCache slotMapping value valueCache cacheMode scatterMode */
aclnnStatus opc_spkv_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *k = op_tensor(c, s, 0), *kc = op_tensor(c, s, 1), *slot = op_tensor(c, s, 2);
    const pyaclnn_stub_tensor *v = op_tensor(c, s, 3), *vc = op_tensor(c, s, 4);
    const char *cache_mode = op_argument(c, s, 5)->p, *scatter_mode = op_argument(c, s, 6)->p;
    int nz = cache_mode != NULL && strcmp(cache_mode, "PA_NZ") == 0;
    if (!nz && scatter_mode != NULL && strcmp(scatter_mode, "None") != 0)
        return op_invalidf(c->api, "scatterMode \"%s\" is not supported by the emulator (only \"None\")", scatter_mode);
    int has_value = vc->ndim != 0;   /* GetTemplateType: a 0-dimensional valueCache is the key-only form */
    if (!has_value && v->ndim != 0)
        return op_invalidf(c->api, "value must be 0-dimensional when valueCacheRef is (the key-only form)%s", "");
    if (k->ndim != 3) return tiling_fail(c, "key should be is 3 dim.");
    if (kc->ndim != 4) return tiling_fail(c, "key_cache should be is 4 dim.");
    if (slot->ndim != 1) return tiling_fail(c, "slot_mapping should be is 1 dim.");
    if (has_value) {
        if (v->ndim != 3) return tiling_fail(c, "value should be is 3 dim.");
        if (vc->ndim != 4) return tiling_fail(c, "value_cache should be is 4 dim.");
        if (k->shape[0] != v->shape[0] || k->shape[1] != v->shape[1])
            return tiling_fail(c, "dim0 and dim1 of key and value should be same.");
        int d2 = nz ? 2 : 1;
        if (kc->shape[0] != vc->shape[0] || kc->shape[d2] != vc->shape[d2])
            return tiling_fail(c, nz ? "dim0 and dim2 of key_cache and value_cache should be same."
                                     : "dim0 and dim1 of key_cache and value_cache should be same.");
    }
    int64_t tokens = k->shape[0], heads = k->shape[1], kh = k->shape[2], blocks = kc->shape[0];
    int64_t bs = kc->shape[nz ? 2 : 1];
    if (tokens == 0) return tiling_fail(c, "numTokens is invalid.");
    if (heads == 0) return tiling_fail(c, "numHead is invalid.");
    if (kh == 0) return tiling_fail(c, "kHeadSize is invalid.");
    if (bs == 0) return tiling_fail(c, "blockSize is invalid.");
    if (blocks * bs < tokens) return tiling_fail(c, "numBlocks * blockSize should larger than numTokens.");
    spkv_plan *p = op_params(c, sizeof *p);
    p->nz = nz, p->has_value = has_value, p->tokens = tokens, p->tk = heads * kh, p->block_size = bs;
    if (slot->shape[0] < tokens)   /* the kernel reads one slot per token */
        return op_invalidf(c->api, "slotMapping holds %lld slots for %lld tokens", (long long)slot->shape[0],
                           (long long)tokens);
    int64_t esize = (int64_t)ew_itemsize(k->dtype);
    if (has_value) {
        int64_t vh = v->shape[2];
        if (vh == 0) return tiling_fail(c, "vHeadSize is invalid.");
        p->tv = heads * vh;
        if (nz) {
            p->lk = p->lv = 32 / esize;
            if (kc->shape[1] != p->tk / p->lk) return tiling_fail(c, "dim1 of keyCache is invalid.");
            if (vc->shape[1] != p->tv / p->lv) return tiling_fail(c, "dim1 of valueCache is invalid.");
            if (kc->shape[3] != p->lk) return tiling_fail(c, "dim3 of keyCache is invalid.");
            if (vc->shape[3] != p->lv) return tiling_fail(c, "dim3 of valueCache is invalid.");
            if ((kh * esize) % 32 != 0 || (vh * esize) % 32 != 0)
                return tiling_fail(c, "kHeadSize and vHeadSize should be align to 32.");
        }
    } else if (nz) {
        return op_invalidf(c->api, "cacheMode \"PA_NZ\" without value is not supported by the emulator%s", "");
    }
    if (tv_may_self_overlap(kc) || (has_value && tv_may_self_overlap(vc)))
        return op_invalidf(c->api, "keyCacheRef and valueCacheRef must not overlap themselves%s", "");
    return ACLNN_SUCCESS;
}

/* Offset of element h of the token at slot s in cache t. */
static int64_t cache_elem(const spkv_plan *p, const pyaclnn_stub_tensor *t, int64_t tok, int64_t l, int64_t slot,
                          int64_t h) {
    if (p->nz) {
        /* the cache [blocks, tokenSize / L, blockSize, L]: page slot / blockSize, a blockSize x tokenSize matrix */
        return tv_offset(t, nz_layout_index(slot / p->block_size, slot % p->block_size, h, p->block_size, tok,
                                            p->block_size, l));
    }
    return tv_offset(t, slot * tok + h);
}

static int64_t slot_at(const pyaclnn_stub_tensor *t, int64_t i) {
    const unsigned char *q = tv_at(t, tv_offset(t, i));
    if (t->dtype == ACL_INT64) {
        int64_t v;
        memcpy(&v, q, 8);
        return v;
    }
    int32_t v;
    memcpy(&v, q, 4);
    return v;
}

static void copy_token(const spkv_plan *p, const pyaclnn_stub_tensor *src, const pyaclnn_stub_tensor *dst, int64_t tok,
                       int64_t l, int64_t i, int64_t slot, size_t es) {
    for (int64_t h = 0; h < tok; h++)   /* src is [tokens, N, D]: element h of token i is its h-th of the row */
        memcpy(tv_at(dst, cache_elem(p, dst, tok, l, slot, h)), tv_at(src, tv_offset(src, i * tok + h)), es);
}

void spkv_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const spkv_plan *p = launch->params;
    const pyaclnn_stub_tensor *k = &launch->inputs[0], *slots = &launch->inputs[1], *v = &launch->inputs[2];
    const pyaclnn_stub_tensor *kc = &launch->outputs[0], *vc = &launch->outputs[1];
    int64_t capacity = kc->shape[0] * p->block_size;
    if (!p->nz) {   /* Norm: the flattened cache's rows of tokenSize elements */
        int64_t rows = pyaclnn_stub_numel(kc) / p->tk;
        if (p->has_value && pyaclnn_stub_numel(vc) / p->tv < rows) rows = pyaclnn_stub_numel(vc) / p->tv;
        capacity = rows;
    }
    /* every slot read and checked before anything is written (a cache may overlap slotMapping) */
    int64_t *at = malloc(sizeof(int64_t) * (size_t)p->tokens);
    if (at == NULL) {
        tv_fail_oom(launch);
        return;
    }
    for (int64_t i = 0; i < p->tokens; i++) {
        at[i] = slot_at(slots, i);
        if (at[i] >= capacity) {
            pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "%s: slotMapping[%lld] = %lld is past the cache's %lld "
                                   "slots", launch->op_name, (long long)i, (long long)at[i], (long long)capacity);
            free(at);
            return;
        }
    }
    size_t es = ew_itemsize(k->dtype);
    for (int64_t i = 0; i < p->tokens; i++) {
        int64_t s = at[i];
        if (s < 0) continue;
        copy_token(p, k, kc, p->tk, p->lk, i, s, es);
        if (p->has_value) copy_token(p, v, vc, p->tv, p->lv, i, s, es);
    }
    free(at);
}
