/*
 * The FlashAttentionScore kernels: the forward (aclnnFlashAttentionScore*, VarLenScore*) and the gradient
 * (aclnnFlashAttentionScoreGrad*, UnpaddingScoreGrad*), on the plan of fa_steps.c.
 *
 * Forward, per head n of batch b (the Ascend 950 kernel's steps, hicann/ops-transformer attention/
 * flash_attention_score/op_kernel/arch35 and attention/common/op_kernel/arch35/vf/vf_basic_block_*):
 *   S = Q K^T in fp32 (the cube unit: fp16/bf16 operands exact, fp32 accumulation -- the matmul engine's
 *   mm_f32_block, k in order), then over the key positions in blocks of FA_BLOCK (the online softmax):
 *     x = S * scale (+ pse, or (S + pse) * scale for pseType 1; inner alibi: + slope * |kv - q| (sqrt for 3)),
 *     masked positions x = -FLT_MAX,
 *     m' = max(m, max_j x), p = exp(x - m') (ExpSub: fp32 difference), l_block = sum_j p (before dropout),
 *     dropout: p = keep ? p * (1 / keepProb) : 0, and p rounded to the inputs' dtype (fp16/bf16) for P V,
 *     O' = O * exp(m - m') + p V (fp32), l' = exp(m - m') * l + l_block;
 *   out = O / l rounded to the output dtype (ties away from zero, the vector unit's CAST_ROUND);
 *   softmaxMax = m, softmaxSum = l (fp32, eight copies per row: the [.., 8] layout the gradient reads).
 *   Rows with every position masked: with invalid-row processing (innerPrecise 2, or sparse mode 3 with
 *   S1 > S2) out = 0 and softmaxSum = FLT_MAX; otherwise every x is -FLT_MAX and the row averages V.
 * Gradient, per key/value head (its G query heads, dK and dV summed over them in fp32):
 *   P = exp(x - softmaxMax) / softmaxSum (recomputed), dP = dO V^T, D = rowsum(dO * O) (fp32),
 *   dS = (keep ? dP / keepProb : 0 - D) * P, dQ = (dS * scale) K, dK = (dS * scale)^T Q,
 *   dV = (keep ? P / keepProb : 0)^T dO, the matrices rounded to the inputs' dtype before each product;
 *   dpse = dS * scale (pseType 1) or dS, summed over the pse's broadcast batch / rows.
 * The vector unit's sums (max, sum, row products) go in element order here; the NPU's reduction trees and
 * block sizes are the tiling's: class c (measured bounds: flash_attention.toml, tests/test_attention.py).
 */
#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/matmul.h"
#include "kernels/parallel.h"
#include "ops/attention/fa.h"
#include "ops_decls.h"

typedef struct {
    const fa_plan *p;
    const pyaclnn_stub_launch *l;
    const int32_t *ids;      /* the paged forms: the block table as read before the run (fa_paged_ids)           */
    float *dpse;             /* gradient: per-batch fp32 partial sums of dpse ([B][pse elements]), or NULL */
    int64_t dpse_n;          /* elements of one batch's partial                                             */
    atomic_int oom;
} fa_job;

/* rows x cols block of head n of batch b of a query-like (kv = 0) or key-like tensor, in fp32;
 * transposed (cols x rows) when `t_out`. */
static void load_head(const fa_plan *p, const pyaclnn_stub_tensor *t, int kv, int64_t hd, int64_t b, int64_t n,
                      int64_t rows, float *dst, int t_out) {
    for (int64_t s = 0; s < rows; s++)
        for (int64_t d = 0; d < hd; d++) {
            float v = fa_load(t, fa_elem(p, t, kv, hd, b, n, s, d));
            if (t_out) dst[d * rows + s] = v;
            else dst[s * hd + d] = v;
        }
}

/* The key-like rows of kv head n2 of batch b: from the layout's tensor, or through the block table (paged). */
static void load_kv(const fa_plan *p, const pyaclnn_stub_launch *l, const int32_t *ids, int which, int64_t hd,
                    int64_t b, int64_t n2, int64_t rows, float *dst, int t_out) {
    const pyaclnn_stub_tensor *t = &l->inputs[which];
    if (p->antiquant == FA_AQ_DEQUANT) {   /* the Ascend 950: dequantised to the query's dtype first */
        for (int64_t s = 0; s < rows; s++)
            for (int64_t d = 0; d < hd; d++) {
                float v = fa_dequant_elem(p, l, ids, which, b, n2, s, d);
                if (t_out) dst[d * rows + s] = v;
                else dst[s * hd + d] = v;
            }
        return;
    }
    if (!p->paged) {
        load_head(p, t, 1, hd, b, n2, rows, dst, t_out);
        return;
    }
    for (int64_t s = 0; s < rows; s++)
        for (int64_t d = 0; d < hd; d++) {
            float v = fa_load(t, fa_paged_elem(p, ids, l->inputs[FA_IN_BT].shape[1], t, hd, b, n2, s, d));
            if (t_out) dst[d * rows + s] = v;
            else dst[s * hd + d] = v;
        }
}

/* The inference forms: query rows past batch b's length (padded layouts) get 0 and an lse of +inf (invalid). */
static void pad_rows(const fa_plan *p, const pyaclnn_stub_launch *l, int64_t b, int64_t n, int64_t s1) {
    const pyaclnn_stub_tensor *out = &l->outputs[FA_OUT_ATTN], *lse = &l->outputs[FA_OUT_MAX];
    for (int64_t i = s1; i < p->S1; i++) {
        for (int64_t d = 0; d < p->Dv; d++) fa_store(out, fa_elem(p, out, FA_ELEM_OUT, p->Dv, b, n, i, d), 0.0f);
        if (p->lse == FA_LSE) fa_store(lse, tv_offset(lse, fa_stat_row(p, b, n, i)), INFINITY);
    }
}

static void store_stat(const pyaclnn_stub_tensor *t, int64_t row, float v);

/* The row's statistics: softmaxMax / softmaxSum (8 copies each), or the inference forms' lse = max + log(sum)
 * (+inf for a row with nothing to attend: no keys, or every key masked with invalid-row processing). */
static void store_row_stats(const fa_plan *p, const pyaclnn_stub_launch *l, int64_t row, float m, float sum,
                            int invalid) {
    if (p->lse == FA_LSE_NONE) return;
    if (p->lse == FA_LSE) {
        const pyaclnn_stub_tensor *lse = &l->outputs[FA_OUT_MAX];
        fa_store(lse, tv_offset(lse, row), invalid ? INFINITY : m + (float)log((double)sum));
        return;
    }
    store_stat(&l->outputs[FA_OUT_MAX], row, m);
    store_stat(&l->outputs[FA_OUT_SUM], row, sum);
}

static void store_head(const fa_plan *p, const pyaclnn_stub_tensor *t, int kv, int64_t hd, int64_t b, int64_t n,
                       int64_t rows, const float *src) {
    for (int64_t s = 0; s < rows; s++)
        for (int64_t d = 0; d < hd; d++) fa_store(t, fa_elem(p, t, kv, hd, b, n, s, d), src[s * hd + d]);
}

/* The 8 copies of a row statistic. */
static void store_stat(const pyaclnn_stub_tensor *t, int64_t row, float v) {
    for (int64_t k = 0; k < 8; k++) {
        float x = v;
        memcpy(tv_at(t, tv_offset(t, row * 8 + k)), &x, 4);
    }
}

static float load_stat(const pyaclnn_stub_tensor *t, int64_t row) { return fa_load(t, tv_offset(t, row * 8)); }

static void *zalloc(size_t n) { return calloc(n ? n : 1, sizeof(float)); }

/* ---- forward ---------------------------------------------------------------------------------- */

static int forward_head(const fa_plan *p, const pyaclnn_stub_launch *l, const int32_t *ids, int64_t b, int64_t n) {
    const pyaclnn_stub_tensor *in = l->inputs, *out = l->outputs;
    int64_t s1 = fa_s1(p, b), s2 = fa_s2(p, b), D = p->D, Dv = p->Dv, n2 = n / p->G;
    if (p->lens && p->layout != FA_TND) pad_rows(p, l, b, n, s1);
    if (s1 == 0) return 1;
    if (p->antiquant == FA_AQ_MSD) return fa_antiquant_head(p, l, ids, b, n);
    float *q = zalloc((size_t)(s1 * D)), *kt = zalloc((size_t)(D * s2)), *v = zalloc((size_t)(s2 * Dv));
    float *o = zalloc((size_t)(s1 * Dv)), *ob = zalloc((size_t)(s1 * Dv)), *m = zalloc((size_t)s1);
    float *sum = zalloc((size_t)s1), *ex = zalloc((size_t)s1), *x = zalloc((size_t)(s1 * FA_BLOCK));
    float *pb = zalloc((size_t)(s1 * FA_BLOCK));
    int ok = q && kt && v && o && ob && m && sum && ex && x && pb;
    if (ok) {
        load_head(p, &in[FA_IN_Q], 0, D, b, n, s1, q, 0);
        load_kv(p, l, ids, FA_IN_K, D, b, n2, s2, kt, 1);
        load_kv(p, l, ids, FA_IN_V, Dv, b, n2, s2, v, 0);
        int64_t base = fa_drop_base(p, b);
        for (int64_t j0 = 0; j0 < s2; j0 += FA_BLOCK) {
            int64_t bs = s2 - j0 < FA_BLOCK ? s2 - j0 : FA_BLOCK;
            mm_f32_block(q, D, kt + j0, s2, x, bs, s1, D, bs);
            for (int64_t i = 0; i < s1; i++) {
                float *xr = x + i * bs, *pr = pb + i * bs, bm = 0;
                for (int64_t c = 0; c < bs; c++) {
                    int64_t j = j0 + c;
                    xr[c] = fa_masked(p, &in[FA_IN_MASK], b, n, i, j) ? FA_NEG_MIN
                                                                      : fa_logit(p, &in[FA_IN_PSE], b, n, i, j, xr[c]);
                    if (c == 0 || xr[c] > bm) bm = xr[c];
                }
                float nm = j0 == 0 || bm > m[i] ? bm : m[i], bsum = 0;
                for (int64_t c = 0; c < bs; c++) {
                    float e = fa_expsub(xr[c], nm);
                    bsum += e;
                    if (!fa_keep(p, &in[FA_IN_DROP], base + (n * s1 + i) * s2 + j0 + c)) e = 0;
                    else if (p->dropout != FA_DROP_NONE) e *= p->div;
                    pr[c] = fa_round(e, p->dtype);
                }
                if (j0 == 0) {
                    sum[i] = bsum;
                } else {
                    ex[i] = fa_expsub(m[i], nm);
                    sum[i] = ex[i] * sum[i] + bsum;
                }
                m[i] = nm;
            }
            mm_f32_block(pb, bs, v + j0 * Dv, Dv, j0 == 0 ? o : ob, Dv, s1, bs, Dv);
            if (j0 > 0)
                for (int64_t i = 0; i < s1; i++)
                    for (int64_t d = 0; d < Dv; d++) o[i * Dv + d] = o[i * Dv + d] * ex[i] + ob[i * Dv + d];
        }
        for (int64_t i = 0; i < s1; i++) {
            int invalid = s2 == 0 || (p->invalid_rows && m[i] == FA_NEG_MIN);
            for (int64_t d = 0; d < Dv; d++) o[i * Dv + d] = invalid ? 0.0f : o[i * Dv + d] / sum[i];
            if (s2 == 0) m[i] = FA_NEG_MIN;
            int64_t row = fa_stat_row(p, b, n, i);
            if (p->lse) {
                store_row_stats(p, l, row, m[i], sum[i], invalid);
                continue;
            }
            if (invalid) sum[i] = s2 == 0 ? 0.0f : FLT_MAX;
            store_row_stats(p, l, row, m[i], sum[i], 0);
        }
        if (p->post_quant)
            for (int64_t i = 0; i < s1; i++) fa_post_quant_row(p, l, b, n, i, o + i * Dv);
        else
            store_head(p, &out[FA_OUT_ATTN], FA_ELEM_OUT, Dv, b, n, s1, o);
    }
    free(q), free(kt), free(v), free(o), free(ob), free(m), free(sum), free(ex), free(x), free(pb);
    return ok;
}

static void forward_range(void *ctx, size_t begin, size_t end) {
    fa_job *j = ctx;
    for (size_t t = begin; t < end; t++)
        if (!forward_head(j->p, j->l, j->ids, (int64_t)t / j->p->N1, (int64_t)t % j->p->N1)) atomic_store(&j->oom, 1);
}

void fa_forward_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const fa_plan *p = launch->params;
    int32_t *ids = NULL;
    if (p->paged && (ids = fa_paged_ids(p, launch, &launch->inputs[FA_IN_BT])) == NULL) return;
    fa_job job = {p, launch, ids, NULL, 0, 0};
    size_t heads = (size_t)(p->B * p->N1);
    op_parallel_for(heads, op_thread_count(heads, 1), forward_range, &job);
    if (atomic_load(&job.oom)) tv_fail_oom(launch);
    free(ids);
}

/* ---- gradient --------------------------------------------------------------------------------- */

typedef struct {
    float *k, *kt, *vt, *q, *dy, *o, *dq, *dk, *dv, *x, *dp, *ds, *pd, *tmp, *dsum, *mx, *sm;
} grad_bufs;

static void add_into(float *acc, const float *v, int64_t n) {
    for (int64_t i = 0; i < n; i++) acc[i] += v[i];
}

/* Row block [rows x bs] transposed into dst [bs x rows]. */
static void transpose(const float *src, int64_t rows, int64_t bs, float *dst) {
    for (int64_t i = 0; i < rows; i++)
        for (int64_t c = 0; c < bs; c++) dst[c * rows + i] = src[i * bs + c];
}

/* The G query heads of key/value head n2 of batch b: dQ of each, dK and dV of the group. */
static void grad_group(const fa_plan *p, const pyaclnn_stub_launch *l, int64_t b, int64_t n2, grad_bufs *w,
                       float *dpse) {
    const pyaclnn_stub_tensor *in = l->inputs, *out = l->outputs;
    int64_t s1 = fa_s1(p, b), s2 = fa_s2(p, b), D = p->D, Dv = p->Dv;
    int64_t base = fa_drop_base(p, b);
    load_head(p, &in[FAG_IN_K], 1, D, b, n2, s2, w->k, 0);
    load_head(p, &in[FAG_IN_K], 1, D, b, n2, s2, w->kt, 1);
    load_head(p, &in[FAG_IN_V], 1, Dv, b, n2, s2, w->vt, 1);
    memset(w->dk, 0, sizeof(float) * (size_t)(s2 * D));
    memset(w->dv, 0, sizeof(float) * (size_t)(s2 * Dv));
    for (int64_t g = 0; g < p->G; g++) {
        int64_t n = n2 * p->G + g;
        load_head(p, &in[FAG_IN_Q], 0, D, b, n, s1, w->q, 0);
        load_head(p, &in[FAG_IN_DY], 0, Dv, b, n, s1, w->dy, 0);
        load_head(p, &in[FAG_IN_ATTN], 0, Dv, b, n, s1, w->o, 0);
        for (int64_t i = 0; i < s1; i++) {
            float acc = 0;
            for (int64_t d = 0; d < Dv; d++) acc += w->dy[i * Dv + d] * w->o[i * Dv + d];
            w->dsum[i] = acc;
            int64_t row = fa_stat_row(p, b, n, i);
            w->mx[i] = load_stat(&in[FAG_IN_MAX], row);
            w->sm[i] = load_stat(&in[FAG_IN_SUM], row);
        }
        memset(w->dq, 0, sizeof(float) * (size_t)(s1 * D));
        for (int64_t j0 = 0; j0 < s2; j0 += FA_BLOCK) {
            int64_t bs = s2 - j0 < FA_BLOCK ? s2 - j0 : FA_BLOCK;
            mm_f32_block(w->q, D, w->kt + j0, s2, w->x, bs, s1, D, bs);
            mm_f32_block(w->dy, Dv, w->vt + j0, s2, w->dp, bs, s1, Dv, bs);
            for (int64_t i = 0; i < s1; i++)
                for (int64_t c = 0; c < bs; c++) {
                    int64_t j = j0 + c, e = i * bs + c;
                    float xv = fa_masked(p, &in[FAG_IN_MASK], b, n, i, j) ? FA_NEG_MIN
                                                                          : fa_logit(p, &in[FAG_IN_PSE], b, n, i, j, w->x[e]);
                    float prob = fa_expsub(xv, w->mx[i]) / w->sm[i];
                    int keep = fa_keep(p, &in[FAG_IN_DROP], base + (n * s1 + i) * s2 + j);
                    float dpd = !keep ? 0.0f : p->dropout != FA_DROP_NONE ? w->dp[e] * p->div : w->dp[e];
                    float ds = (dpd - w->dsum[i]) * prob;
                    float pdv = !keep ? 0.0f : p->dropout != FA_DROP_NONE ? prob * p->div : prob;
                    if (dpse != NULL) dpse[(n * p->pse_s1 + (p->pse_s1 == 1 ? 0 : i)) * p->S2 + j] +=
                        p->pse_type == 1 ? ds * p->scale : ds;
                    w->ds[e] = fa_round(ds * p->scale, p->dtype);
                    w->pd[e] = fa_round(pdv, p->dtype);
                }
            mm_f32_block(w->ds, bs, w->k + j0 * D, D, w->tmp, D, s1, bs, D);
            add_into(w->dq, w->tmp, s1 * D);
            transpose(w->ds, s1, bs, w->x);
            mm_f32_block(w->x, s1, w->q, D, w->tmp, D, bs, s1, D);
            add_into(w->dk + j0 * D, w->tmp, bs * D);
            transpose(w->pd, s1, bs, w->x);
            mm_f32_block(w->x, s1, w->dy, Dv, w->tmp, Dv, bs, s1, Dv);
            add_into(w->dv + j0 * Dv, w->tmp, bs * Dv);
        }
        store_head(p, &out[FAG_OUT_DQ], 0, D, b, n, s1, w->dq);
    }
    store_head(p, &out[FAG_OUT_DK], 1, D, b, n2, s2, w->dk);
    store_head(p, &out[FAG_OUT_DV], 1, Dv, b, n2, s2, w->dv);
}

static void grad_range(void *ctx, size_t begin, size_t end) {
    fa_job *j = ctx;
    const fa_plan *p = j->p;
    int64_t S1 = p->S1, S2 = p->S2, D = p->D, Dv = p->Dv, bs = S2 < FA_BLOCK ? S2 : FA_BLOCK, hd = D > Dv ? D : Dv;
    int64_t rows = S1 > bs ? S1 : bs;
    grad_bufs w = {zalloc((size_t)(S2 * D)), zalloc((size_t)(S2 * D)), zalloc((size_t)(S2 * Dv)),
                   zalloc((size_t)(S1 * D)), zalloc((size_t)(S1 * Dv)), zalloc((size_t)(S1 * Dv)),
                   zalloc((size_t)(S1 * D)), zalloc((size_t)(S2 * D)), zalloc((size_t)(S2 * Dv)),
                   zalloc((size_t)(S1 * bs)), zalloc((size_t)(S1 * bs)), zalloc((size_t)(S1 * bs)),
                   zalloc((size_t)(S1 * bs)), zalloc((size_t)(rows * hd)), zalloc((size_t)S1), zalloc((size_t)S1),
                   zalloc((size_t)S1)};
    float **all = (float **)&w;
    int ok = 1;
    for (size_t k = 0; k < sizeof w / sizeof(float *); k++) ok = ok && all[k] != NULL;
    for (size_t t = begin; t < end && ok; t++) {
        int64_t b = (int64_t)t / p->N2;
        grad_group(p, j->l, b, (int64_t)t % p->N2, &w, j->dpse ? j->dpse + b * j->dpse_n : NULL);
    }
    if (!ok) atomic_store(&j->oom, 1);
    for (size_t k = 0; k < sizeof w / sizeof(float *); k++) free(all[k]);
}

void fa_grad_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const fa_plan *p = launch->params;
    const pyaclnn_stub_tensor *dpse = &launch->outputs[FAG_OUT_DPSE];
    int want_dpse = p->pse_kind == FA_PSE_TENSOR && dpse->present && pyaclnn_stub_numel(dpse) > 0;
    /* dpse: per-batch fp32 partials [B][N1, S1 or 1, S2], summed in batch order for a pse broadcast over B */
    fa_job job = {p, launch, NULL, NULL, p->N1 * p->pse_s1 * p->S2, 0};
    if (want_dpse && (job.dpse = zalloc((size_t)(p->B * job.dpse_n))) == NULL) {
        tv_fail_oom(launch);
        return;
    }
    size_t groups = (size_t)(p->B * p->N2);
    op_parallel_for(groups, op_thread_count(groups, 1), grad_range, &job);
    if (atomic_load(&job.oom)) {
        tv_fail_oom(launch);
    } else if (want_dpse) {
        for (int64_t bb = 0; bb < p->pse_b; bb++)
            for (int64_t e = 0; e < job.dpse_n; e++) {
                int64_t n = e / (p->pse_s1 * p->S2), i = e / p->S2 % p->pse_s1, j = e % p->S2;
                float acc = job.dpse[bb * job.dpse_n + e];
                if (p->pse_b == 1)
                    for (int64_t b = 1; b < p->B; b++) acc += job.dpse[b * job.dpse_n + e];
                fa_store(dpse, fa_pse_elem(p, dpse, bb, n, i, j), acc);
            }
    }
    free(job.dpse);
}
