/*
 * KvRmsNormRopeCache (kv_rms_norm_rope_cache.toml): the tiling's checks in its order and the kernel.
 *
 * Per token t = (b, s) of kv [B, 1, S, Dv + Dk]:
 *   k row  = the rotary step of kv[t, Dv:] (interleaved pairs to halves: rotary.c's interleave-half row, fp32 steps)
 *            with cos / sin row b (cos [B,1,1,Dk]) or (b, s) (cos [B,1,S,Dk]), one RINT cast;
 *   ckv row = kv[t, :Dv] / sqrt(S * (1 / Dv) + eps) * gamma in fp32, one RINT cast, with S the sum of squares in
 *            the Atlas A2 kernels' order (adjacent 64-lane blocks folded 512 -> 64, then a 64-lane ReduceSum), or on
 *            Ascend 950 (kernel not public) in its RMS norm's order (arnq_fold_reduce, an assumption);
 *   both rows copied into the caches at index: "Norm" row b * Sc + index[b, s] of the flattened cache ([B,1,Sc,D]),
 *   "PA" / "PA_BNSD" slot index[t] ([blocks, blockSize, 1, D] flattened), "PA_NZ" slot index[t] in the NZ layout
 *   (kernels/nz_layout.h); "PA_BLK_BNSD" / "PA_BLK_NZ" (kv_rms_norm_rope_cache_b16_pa.h ScatterUpdatePABlkBnsd, _b16_pa_blk_nz.h
 *   ScatterUpdateNZ) as PA / PA_NZ at slot index[b * ceil(S / blockSize) + s / blockSize] / blockSize * blockSize +
 *   s % blockSize; index < 0 skips the token; an index past the cache is a device fault (the NPU would write outside
 *   it).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/dtype.h"
#include "kernels/nz_layout.h"
#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops/add_rms_norm_dynamic_quant/arnq.h"
#include "ops/posembedding/rope_row.h"
#include "ops_decls.h"

enum { KRC_NORM, KRC_PA, KRC_PA_NZ };

typedef struct {
    int mode, blk, soc950, out_kv;   /* blk: PA_BLK_BNSD / PA_BLK_NZ (index one page per blockSize tokens) */
    int64_t batch, seq, cos_seq, dk, dv;
    int64_t cache_len;    /* Norm: kCacheRef's dim 2 (the kernels' cacheLength, used for both caches) */
    int64_t block_size;   /* the paged modes: kCacheRef's dim 1 */
    float eps, recip;
    aclDataType dt;
} krc_plan;

#define tiling_fail(c, ...) op_failf((c)->api, ACLNN_ERR_INNER_TILING_ERROR, __VA_ARGS__)

/* GetShapeTuple: a tensor's (B, N, S, D), all 0 when it is not 4-dimensional. */
static void shape4(const pyaclnn_stub_tensor *t, int64_t v[4]) {
    for (int i = 0; i < 4; i++) v[i] = t->ndim == 4 ? t->shape[i] : 0;
}

/* The tiling's cache-mode map: unknown strings (and NULL) are Norm; PA and PA_BNSD are one mode; the block modes
 * write as PA / PA_NZ at the slot their page index gives. */
static int krc_mode(const char *m, int *blk) {
    *blk = m != NULL && (strcmp(m, "PA_BLK_BNSD") == 0 || strcmp(m, "PA_BLK_NZ") == 0);
    if (m == NULL) return KRC_NORM;
    if (strcmp(m, "PA") == 0 || strcmp(m, "PA_BNSD") == 0 || strcmp(m, "PA_BLK_BNSD") == 0) return KRC_PA;
    if (strcmp(m, "PA_NZ") == 0 || strcmp(m, "PA_BLK_NZ") == 0) return KRC_PA_NZ;
    return KRC_NORM;
}

/* Ascend 950's regbase template: the caches' shapes (CheckKCacheValid / CheckVCacheValid, *PA). */
static aclnnStatus krc_950_caches(op_call *c, const krc_plan *p, const pyaclnn_stub_tensor *kc,
                                  const pyaclnn_stub_tensor *vc) {
    int64_t k[4], v[4];
    shape4(kc, k), shape4(vc, v);
    if (p->mode == KRC_NORM) {
        if (k[0] != p->batch || k[1] != 1 || k[3] != p->dk) return tiling_fail(c, "k_cache shape invalid.");
        if (v[0] != p->batch || v[1] != 1 || v[2] != p->cache_len || v[3] != p->dv)
            return tiling_fail(c, "ckv_cache shape invalid.");
        return ACLNN_SUCCESS;
    }
    int64_t ka = kc->dtype == ACL_INT8 ? 32 : 16, va = vc->dtype == ACL_INT8 ? 32 : 16;
    if (k[2] != 1 || k[3] != p->dk || k[1] % ka != 0) return tiling_fail(c, "k_cache shape invalid.");
    if (v[2] != 1 || v[3] != p->dv || v[1] % va != 0) return tiling_fail(c, "ckv_cache shape invalid.");
    return ACLNN_SUCCESS;
}

/* krc_plan kv gamma cos sin index kCache ckvCache kRopeScale cKvScale epsilon cacheMode isOutputKv kRopeOut cKvOut */
aclnnStatus opc_krc_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *kv = op_tensor(c, s, 0), *g = op_tensor(c, s, 1), *co = op_tensor(c, s, 2);
    const pyaclnn_stub_tensor *si = op_tensor(c, s, 3), *ix = op_tensor(c, s, 4), *kc = op_tensor(c, s, 5);
    const pyaclnn_stub_tensor *vc = op_tensor(c, s, 6), *ks = op_tensor(c, s, 7), *vs = op_tensor(c, s, 8);
    const pyaclnn_stub_tensor *ko = op_tensor(c, s, 12), *vo = op_tensor(c, s, 13);
    int soc950 = ew_soc_is_950();
    int64_t x[4], cs[4], ss[4], kcs[4];
    shape4(kv, x), shape4(co, cs), shape4(si, ss), shape4(kc, kcs);
    int64_t batch = x[0], heads = x[1], seq = x[2], dk = cs[3], dv = g->ndim >= 1 ? g->shape[0] : 0;
    /* GetShapeAttrsInfo */
    if (batch < 1) return tiling_fail(c, "batchSize should >= 1.");
    if (seq < 1) return tiling_fail(c, "seqLen should >= 1.");
    if (heads != 1) return tiling_fail(c, "numHead should == 1.");
    if (cs[0] != batch || cs[1] != heads || ss[0] != batch || ss[1] != heads || ss[3] != dk || cs[2] != ss[2] ||
        (cs[2] != seq && cs[2] != 1))
        return tiling_fail(c, "cos or sin shape is invalid.");
    if (g->ndim != 1) return tiling_fail(c, "gamma shape is invalid.");
    int blk;
    int mode = krc_mode(op_argument(c, s, 10)->p, &blk);
    if (blk && kcs[1] < 1)   /* CheckIndexValid divides by it */
        return op_invalidf(c->api, "the block modes need kCacheRef's blockSize (dim 1) >= 1, got %lld", (long long)kcs[1]);
    if (pyaclnn_stub_numel(ix) != op_mul_sat(batch, blk ? (seq + kcs[1] - 1) / kcs[1] : seq))
        return tiling_fail(c, "index shape is invalid.");
    if (ks->present || vs->present || kc->dtype == ACL_INT8 || vc->dtype == ACL_INT8)
        return op_invalidf(c->api, "quantised caches (INT8, kRopeScaleOptional / cKvScaleOptional) are not supported "
                           "by the emulator%s", "");
    krc_plan *p = op_params(c, sizeof *p);
    p->mode = mode, p->blk = blk, p->soc950 = soc950, p->out_kv = op_argument(c, s, 11)->i != 0;
    p->batch = batch, p->seq = seq, p->cos_seq = cs[2], p->dk = dk, p->dv = dv;
    p->cache_len = kcs[2], p->block_size = kcs[1];
    p->eps = (float)op_argument(c, s, 9)->d, p->recip = 1.0f / (float)dv, p->dt = kv->dtype;
    if (!soc950) {   /* the DS template (Atlas A2) */
        if (dk != 64) return tiling_fail(c, "rope last dim only support 64.");
        if (dv != 512) return tiling_fail(c, "rms_norm last dim only support 512.");
        int b1sd = seq > 1 && cs[2] == seq, own = blk || mode == KRC_PA_NZ || (mode == KRC_PA && p->out_kv);
        if (!own && !b1sd && (batch % 4 == 0 ? batch / 4 : batch) > 65535)
            return tiling_fail(c, "blockDim must be smaller than 65535.");
        /* the Norm and PA kernels (keys 1000-3001) have no kRopeOut / cKvOut */
        p->out_kv = p->out_kv && own;
    } else {         /* the regbase full-load template (Ascend 950) */
        if (dk % 2 != 0) return tiling_fail(c, "headsize of cos is invalid.");
        aclnnStatus st = krc_950_caches(c, p, kc, vc);
        if (st != ACLNN_SUCCESS) return st;
    }
    /* what the kernels assume and no check of the vendor's states */
    if (dk < 1 || dv < 1)
        return op_invalidf(c->api, "Dk (cos's last dim) and Dv (gamma's length) must be at least 1 (got %lld, %lld)",
                           (long long)dk, (long long)dv);
    if (x[3] != dk + dv)
        return op_invalidf(c->api, "kv's last dim %lld is not Dk + Dv = %lld + %lld (the kernels read Dv + Dk elements "
                           "per token)", (long long)x[3], (long long)dk, (long long)dv);
    if (mode != KRC_NORM && p->block_size < 1)
        return op_invalidf(c->api, "the paged modes need kCacheRef's blockSize (dim 1) >= 1, got %lld",
                           (long long)p->block_size);
    if (mode == KRC_PA_NZ && (dk % 16 != 0 || dv % 16 != 0))   /* the NZ tiles: 16 b16 elements */
        return op_invalidf(c->api, "the NZ modes need Dk and Dv multiples of 16 (got %lld, %lld)", (long long)dk,
                           (long long)dv);
    if (p->out_kv) {
        const int64_t want_k[4] = {batch, 1, seq, dk}, want_v[4] = {batch, 1, seq, dv};
        for (int i = 0; i < 4; i++)
            if (ko->ndim != 4 || vo->ndim != 4 || ko->shape[i] != want_k[i] || vo->shape[i] != want_v[i])
                return op_invalidf(c->api, "kRopeOut must be [B,1,S,Dk] and cKvOut [B,1,S,Dv] when isOutputKv%s", "");
    }
    if (tv_may_self_overlap(kc) || tv_may_self_overlap(vc))
        return op_invalidf(c->api, "kCacheRef and ckvCacheRef must not overlap themselves%s", "");
    return ACLNN_SUCCESS;
}

/* ---- kernel ------------------------------------------------------------------------------------- */

/* The sum of squares q[0..n): Atlas A2 folds adjacent 64-lane blocks (block r of the next level = blocks 2r and
 * 2r + 1) down to 64 lanes, then one 64-lane ReduceSum; Ascend 950: its RMS norm's order (assumed). */
static float krc_sum(float *q, int64_t n, int soc950) {
    if (soc950) return arnq_fold_reduce(q, n, 0);
    for (int64_t w = n; w > 64; w /= 2)
        for (int64_t r = 0; r < w / 128; r++)
            for (int l = 0; l < 64; l++) q[r * 64 + l] = q[2 * r * 64 + l] + q[(2 * r + 1) * 64 + l];
    return arnq_tree64(q, 64, 0);
}

/* One RINT cast to the dtype. A NaN result is the default NaN: which NaN operand an fp32 add or product passes on
 * is the compiler's choice of operand order on the host (and not modelled for the NPU), so one NaN is written. */
static float krc_round(float v, aclDataType dt) {
    if (isnan(v)) v = __builtin_nanf("");
    return (float)ew_cast((ew_value){v, 0}, ACL_FLOAT, dt).f;
}

static void krc_rows(const krc_plan *p, const float *kv, const float *g, const float *co, const float *si, float *kr,
                     float *vr, float *q) {
    int64_t D = p->dk + p->dv;
    for (int64_t t = 0; t < p->batch * p->seq; t++) {
        int64_t b = t / p->seq, sq = t % p->seq, crow = b * p->cos_seq + (p->cos_seq == 1 ? 0 : sq);
        const float *x = kv + t * D;
        float *k = kr + t * p->dk, *v = vr + t * p->dv;
        rope_row_f32(ROPE_ROW_INTERLEAVE_HALF, p->dk, x + p->dv, co + crow * p->dk, si + crow * p->dk, k);
        for (int64_t h = 0; h < p->dk; h++) k[h] = krc_round(k[h], p->dt);
        for (int64_t h = 0; h < p->dv; h++) q[h] = x[h] * x[h];
        float ms = krc_sum(q, p->dv, p->soc950) * p->recip;
        float rms = sqrtf(ms + p->eps);
        for (int64_t h = 0; h < p->dv; h++) v[h] = krc_round((x[h] / rms) * g[h], p->dt);
    }
}

/* The flattened cache element of element h of token t written at index i. */
static int64_t krc_elem(const krc_plan *p, int64_t t, int64_t i, int64_t h, int64_t d) {
    if (p->mode == KRC_PA_NZ)   /* page i / blockSize, a blockSize x d matrix in 16-element (32-byte) tiles */
        return nz_layout_index(i / p->block_size, i % p->block_size, h, p->block_size, d, p->block_size, 16);
    if (p->mode == KRC_PA) return i * d + h;
    return (t / p->seq * p->cache_len + i) * d + h;
}

/* Whether the row written at index i >= 0 lies inside the cache (compared in rows: no product of a caller's index). */
static int krc_fits(const krc_plan *p, const pyaclnn_stub_tensor *cache, int64_t t, int64_t i, int64_t d) {
    int64_t rows = pyaclnn_stub_numel(cache) / d;
    if (p->mode == KRC_PA_NZ) return i / p->block_size < rows / p->block_size;
    if (p->mode == KRC_PA) return i < rows;
    return i < rows - t / p->seq * p->cache_len;
}

static void krc_put(const krc_plan *p, const pyaclnn_stub_tensor *cache, const float *row, int64_t t, int64_t i,
                    int64_t d) {
    for (int64_t h = 0; h < d; h++)
        ew_store(tv_at(cache, tv_offset(cache, krc_elem(p, t, i, h, d))), cache->dtype,
                 ew_cast((ew_value){row[h], 0}, ACL_FLOAT, cache->dtype));
}

void krc_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const krc_plan *p = launch->params;
    const pyaclnn_stub_tensor *ix = &launch->inputs[4], *kc = &launch->outputs[0], *vc = &launch->outputs[1];
    int64_t T = p->batch * p->seq;
    float *kv = tv_load_float(&launch->inputs[0]), *g = tv_load_float(&launch->inputs[1]);
    float *co = tv_load_float(&launch->inputs[2]), *si = tv_load_float(&launch->inputs[3]);
    float *kr = tv_alloc(T * p->dk, sizeof(float)), *vr = tv_alloc(T * p->dv, sizeof(float));
    float *q = tv_alloc(p->dv, sizeof(float));
    int64_t *at = tv_alloc(T, sizeof(int64_t));
    if (!kv || !g || !co || !si || !kr || !vr || !q || !at) {
        tv_fail_oom(launch);
        goto done;
    }
    /* every index read and checked before anything is written (a cache may overlap index) */
    int64_t bs = p->block_size, pages = p->blk ? (p->seq + bs - 1) / bs : 0;
    for (int64_t t = 0; t < T; t++) {
        int64_t b = t / p->seq, sq = t % p->seq;
        memcpy(&at[t], tv_at(ix, tv_offset(ix, p->blk ? b * pages + sq / bs : t)), sizeof(int64_t));
        if (p->blk && at[t] >= 0) at[t] = at[t] / bs * bs + sq % bs;   /* the page's slot of this token */
        if (at[t] >= 0 && (!krc_fits(p, kc, t, at[t], p->dk) || !krc_fits(p, vc, t, at[t], p->dv))) {
            pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "%s: index[%lld] = %lld is past the caches",
                                   launch->op_name, (long long)t, (long long)at[t]);
            goto done;
        }
    }
    krc_rows(p, kv, g, co, si, kr, vr, q);
    for (int64_t t = 0; t < T; t++) {
        if (at[t] < 0) continue;
        krc_put(p, kc, kr + t * p->dk, t, at[t], p->dk);
        krc_put(p, vc, vr + t * p->dv, t, at[t], p->dv);
    }
    if (p->out_kv) tv_store_float(&launch->outputs[2], kr), tv_store_float(&launch->outputs[3], vr);
done:
    free(kv), free(g), free(co), free(si), free(kr), free(vr), free(q), free(at);
}
