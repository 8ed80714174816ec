/*
 * MoE gating: aclnnMoeGatingTopKSoftmax and aclnnMoeGatingTopKSoftmaxV2 (the generated aclnn wrappers of
 * hicann/ops-transformer moe/moe_gating_top_k_softmax and moe_gating_top_k_softmax_v2). Definitions: gating.toml.
 *
 * Per row of the last axis (the col experts), in fp32 as the kernels compute (x widened exactly):
 *   renorm 0 (V1, V2 by default): p = softmax(x) = Exp(x - max) / sum; the top k of p, descending, equal values
 *     in expert order (Sort32 / MrgSort / TopK keep the lower index first); y = those values narrowed to x's dtype,
 *     expertIdx their experts; V2 also writes p itself (softmaxResultOutOptional, fp32) when asked.
 *   renorm 1 (V2): the top k of x in that order, then y = the softmax of those k values.
 *   A finished row (finishedOptional true) keeps its y and gets col as every expert index.
 *   V1's rowIdx[r][j] = r + j * rows (the kernels' ArithProgression: start r, step rows).
 * V1 with fp16 off the perf template runs SoftMax<half> and TopK<half>: p is rounded to fp16 before the ranking.
 * Exp is libm in double rounded to fp32 (vm_exp); the row sum is the float64 sum of the fp32 terms rounded once
 * (the AscendC SoftMax / ReduceSum orders are not modelled: class c, the figures in gating.toml).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/dtype.h"
#include "kernels/vecmath.h"
#include "kernels/view.h"
#include "numerics/numerics.h"
#include "opbase/checks.h"
#include "ops_decls.h"

typedef struct {
    int64_t rows, cols, k;
    int v2;           /* the third output: 0 V1's rowIdx, 1 V2's softmax result */
    int renorm;       /* V2: top k of x first, then the softmax of the k values */
    int softmax_out;  /* V2: write the fp32 softmax (renorm 0 and the flag) */
    int half_rank;    /* V1, fp16, not the perf template: rank the fp16 SoftMax result */
    int y_round;      /* num_round mode of the fp16 narrowing (bf16: always CAST_ROUND) */
    aclDataType dt;
} mg_params;

typedef struct {
    float key;
    int32_t idx;
} mg_item;

/* Descending, NaN first, equal keys in index order. */
static int mg_cmp(const void *a, const void *b) {
    const mg_item *x = a, *y = b;
    int nx = isnan(x->key), ny = isnan(y->key);
    if (nx != ny) return ny - nx;
    if (!nx && x->key != y->key) return x->key > y->key ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

/* v[0..n) <- softmax(v) in the kernels' fp32 steps: Exp(v - max) divided by the sum, or (recip) times the fp32
 * reciprocal of the sum (MoeGatingTopK's Muls). */
static void mg_softmax(float *v, int64_t n, int recip) {
    float m = v[0];
    for (int64_t j = 1; j < n; j++)
        if (v[j] > m || isnan(v[j])) m = v[j];
    double s = 0;
    for (int64_t j = 0; j < n; j++) {
        float d = v[j] - m;
        v[j] = vm_exp(d);
        s += v[j];
    }
    float sf = (float)s, r = 1.0f / sf;
    for (int64_t j = 0; j < n; j++) v[j] = recip ? v[j] * r : v[j] / sf;
}

/* v rounded to the output dtype with the kernels' Cast (then widened back: tv_store_float writes it exactly). */
static float mg_narrow(float v, aclDataType dt, int mode) {
    if (dt == ACL_FLOAT16) return num_f16_to_f32(num_f32_to_f16_mode(v, mode));
    if (dt == ACL_BF16) return num_bf16_to_f32(num_f32_to_bf16_mode(v, NUM_ROUND));
    return v;
}

void moe_gating_kernel(const pyaclnn_stub_launch *launch) {
    const mg_params *p = launch->params;
    if (!tv_launch_views_ok(launch)) return;
    int64_t M = p->rows, N = p->cols, K = p->k;
    const pyaclnn_stub_tensor *fin_t = &launch->inputs[1], *third = &launch->outputs[2];
    float *x = tv_load_float(&launch->inputs[0]);
    unsigned char *fin = fin_t->present ? tv_gather_bytes(fin_t) : NULL;
    float *y = tv_alloc(M * K, sizeof(float));
    int32_t *idx = tv_alloc(M * K, sizeof(int32_t)), *ridx = p->v2 ? NULL : tv_alloc(M * K, sizeof(int32_t));
    mg_item *it = tv_alloc(N, sizeof(mg_item));
    if (!x || (fin_t->present && !fin) || !y || !idx || (!p->v2 && !ridx) || !it) {
        tv_fail_oom(launch);
    } else {
        for (int64_t m = 0; m < M; m++) {
            float *row = x + m * N, *yr = y + m * K;
            if (!p->renorm) mg_softmax(row, N, 0);   /* the row becomes its softmax (V2's softmax result) */
            for (int64_t j = 0; j < N; j++) {
                float v = row[j];
                it[j].key = p->half_rank ? mg_narrow(v, ACL_FLOAT16, NUM_RINT) : v;
                it[j].idx = (int32_t)j;
            }
            qsort(it, (size_t)N, sizeof *it, mg_cmp);
            for (int64_t j = 0; j < K; j++) yr[j] = it[j].key;
            if (p->renorm) mg_softmax(yr, K, 0);
            int done = fin != NULL && fin[m] != 0;
            for (int64_t j = 0; j < K; j++) {
                yr[j] = mg_narrow(yr[j], p->dt, p->y_round);
                idx[m * K + j] = done ? (int32_t)N : it[j].idx;
                if (ridx) ridx[m * K + j] = (int32_t)(m + j * M);
            }
        }
        tv_store_float(&launch->outputs[0], y);
        tv_scatter_bytes(&launch->outputs[1], (const unsigned char *)idx);
        if (ridx) tv_scatter_bytes(third, (const unsigned char *)ridx);
        if (p->softmax_out && third->present) tv_store_float(third, x);
    }
    free(x), free(fin), free(y), free(idx), free(ridx), free(it);
}

/* ---- steps ---------------------------------------------------------------------------------- */

/* A tiling rejection (the generated wrappers run the tiling in phase 1: 561002). */
#define mg_reject(c, ...) op_failf((c)->api, ACLNN_ERR_INNER_TILING_ERROR, __VA_ARGS__)

/* mg_rows p ... "ROWS": dtype_rows for a definition with Atlas A2 / A3 configurations only (MoeComputeExpertTokens):
 * no row matches on Ascend 950. */
aclnnStatus opc_mg_rows(op_call *c, const op_step *s) {
    op_step t = *s;
    if (ew_soc_is_950()) t.text = "";
    return opc_dtype_rows(c, &t);
}

/* CheckOutShape: out's rank and leading dims against x's (V2 also its last dim: col for the softmax result, with
 * its dtype FLOAT, else k). */
static aclnnStatus mg_out_shape(op_call *c, const char *pre, const pyaclnn_stub_tensor *o, const pyaclnn_stub_tensor *x,
                                int v2, const char *tag, int64_t last, int softmax) {
    char t[48] = "";
    if (v2) snprintf(t, sizeof t, "%s ", tag);
    if (o->ndim != x->ndim) return mg_reject(c, "%s %sand x shape num not equal, please check.", pre, v2 ? t : "out ");
    if (o->shape[0] != x->shape[0])
        return mg_reject(c, "%s %sand x dim %d not equal, please check.", pre, v2 ? t : "out ", v2 ? 0 : 1);
    if (x->ndim == 3 && o->shape[1] != x->shape[1])
        return mg_reject(c, "%s %sand x dim %d not equal, please check.", pre, v2 ? t : "out ", v2 ? 1 : 2);
    if (!v2) return ACLNN_SUCCESS;
    if (softmax) {
        if (o->dtype != ACL_FLOAT)
            return mg_reject(c, "%s get softmax result type error, should be float, please check.", pre);
        if (o->shape[x->ndim - 1] != last) return mg_reject(c, "%s softmax and x last dim not equal, please check.", pre);
    } else if (o->shape[x->ndim - 1] != last) {
        return mg_reject(c, "%s %s or expertIdx last dim and k not equal, please check.", pre, tag);
    }
    return ACLNN_SUCCESS;
}

/* The emulator's own check (V1's tiling compares the leading dims only): one row of k per output. */
static aclnnStatus mg_last_k(op_call *c, const op_step *s, int k_op, const pyaclnn_stub_tensor *o, int64_t k) {
    if (o->shape[o->ndim - 1] == k) return ACLNN_SUCCESS;
    char b[160];
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "%s %s: its last dim must be k (%lld)", op_pname(c, s, k_op),
                        tv_shape_text(o->shape, o->ndim, b, sizeof b), (long long)k);
    return ACLNN_ERR_PARAM_INVALID;
}

/* mg_plan x finished k y expertIdx third [renorm flag]: the tiling's checks in its order (V1: GetShapeAttrsInfo;
 * V2: CheckInShape, k, y, expertIdx, CheckOptionalAttr), the kernel's parameters. */
aclnnStatus opc_mg_plan(op_call *c, const op_step *s) {
    if (c->nothing) return ACLNN_SUCCESS;   /* every output empty: nnopbase skips the tiling */
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0), *f = op_tensor(c, s, 1), *y = op_tensor(c, s, 3),
                              *ix = op_tensor(c, s, 4), *th = op_tensor(c, s, 5);
    int v2 = s->np > 6;
    int64_t k = op_argument(c, s, 2)->i, renorm = v2 ? op_argument(c, s, 6)->i : 0;
    int flag = v2 ? op_argument(c, s, 7)->i != 0 : 0;
    const char *pre = v2 ? "Tiling4MoeGatingTopKSoftmaxV2" : "Tiling4MoeGatingTopKSoftmax";
    aclnnStatus rc;
    if (x->ndim != 2 && x->ndim != 3)
        return mg_reject(c, "%s get x shape dim(=%lld) is not 2 or 3, please check.", pre, (long long)x->ndim);
    for (int64_t i = 0; i < x->ndim; i++) {
        if (x->shape[i] == 0 && (!v2 || i == x->ndim - 1))
            return mg_reject(c, v2 ? "%s x shape last dim is zero, please check." : "%s x shape contain zero, please check.",
                             pre);
        if (x->shape[i] > 2147483647) return mg_reject(c, "%s x shape larger than (=2147483647), please check.", pre);
    }
    if (f->present) {
        if (f->dtype != ACL_BOOL)
            return mg_reject(c, "%s get %s type error, should be BOOL, please check.", pre, v2 ? "finished" : "finish");
        if (f->ndim != x->ndim - 1)
            return mg_reject(c, "%s get %s dim num (=%lld) error, should be (=%lld), please check.", pre,
                             v2 ? "finished" : "finish", (long long)f->ndim, (long long)(x->ndim - 1));
        for (int64_t i = 0; i < x->ndim - 1; i++)
            if (f->shape[i] != x->shape[i])
                return mg_reject(c, "%s %s and x shape not equal, please check.", pre, v2 ? "finished" : "finish");
    }
    int64_t col = x->shape[x->ndim - 1];
    if (!v2) {
        const pyaclnn_stub_tensor *outs[3] = {y, ix, th};
        for (int i = 0; i < 3; i++)
            if ((rc = mg_out_shape(c, pre, outs[i], x, 0, "", 0, 0))) return rc;
    }
    if (k <= 0 || k > col)
        return mg_reject(c, "%s attr k(=%lld) is wrong, please check. col=%lld", pre, (long long)k, (long long)col);
    if (k > 1024) return mg_reject(c, "%s attr k(=%lld) is too large, please check.", pre, (long long)k);
    if (v2) {
        if ((rc = mg_out_shape(c, pre, y, x, 1, "y", k, 0)) || (rc = mg_out_shape(c, pre, ix, x, 1, "expertIdx", k, 0)))
            return rc;
        if (renorm < 0 || renorm > 1)
            return mg_reject(c, "%s attr renorm(=%lld) is wrong, please check.", pre, (long long)renorm);
        if (renorm == 0 && flag) {
            if (!th->present) return mg_reject(c, "%s softmax is nullptr, please check.", pre);
            if ((rc = mg_out_shape(c, pre, th, x, 1, "softmaxResult", col, 1))) return rc;
        }
    } else if ((rc = mg_last_k(c, s, 3, y, k)) || (rc = mg_last_k(c, s, 4, ix, k)) || (rc = mg_last_k(c, s, 5, th, k))) {
        return rc;
    }
    mg_params *p = op_params(c, sizeof *p);
    p->cols = col;
    p->rows = tv_dims_product(x->shape, 0, x->ndim - 1);
    p->k = k;
    p->v2 = v2;
    p->renorm = (int)renorm;
    p->softmax_out = v2 && renorm == 0 && flag;
    p->dt = x->dtype;
    p->half_rank = !v2 && x->dtype == ACL_FLOAT16 && !((col <= 1024 && col % 8 == 0 && k <= 8) || col < 8);
    p->y_round = v2 ? NUM_RINT : NUM_ROUND;
    if (p->rows == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}

/* ---- MoeGatingTopK ------------------------------------------------------------------------------- */

/* aclnnMoeGatingTopK (the generated wrapper of moe/moe_gating_top_k; its generalized, without-group and e_k_fullload
 * templates compute alike), per row of E experts in fp32:
 *   norm: softmax (max, Exp(x - max), the row sum, then a multiply by the fp32 reciprocal 1 / sum: Muls, not a
 *     division) or sigmoid (1 / (Exp(-x) + 1), the AscendC Sigmoid's steps as the emulator models them);
 *   score = norm + bias (fp32 Add) when bias is given;
 *   groups of E / groupCount experts scored by their top score (groupSelectMode 0) or the fp32 sum of their top two
 *     (1, PairReduceSum); the kGroup best groups (equal scores: the lower group first, Sort);
 *   the k best experts of those groups by score (equal scores: the lower expert first, Sort / MrgSort);
 *   y = norm of those experts (without the bias); sigmoid: y / (sum(y) + eps) (fp32 division); then y * the routed
 *     scaling factor (fp32 Muls), narrowed with CAST_RINT; outOut = norm (fp32) when outFlag. */
typedef struct {
    int64_t rows, cols, k, kgroup, groups, mode, norm;
    int out_flag, has_bias;
    float factor, eps;
} mgk_params;

static float mgk_sigmoid(float x) {
    float e = vm_exp(-x);
    return 1.0f / (e + 1.0f);
}

void moe_gating_top_k_kernel(const pyaclnn_stub_launch *launch) {
    const mgk_params *p = launch->params;
    if (!tv_launch_views_ok(launch)) return;
    int64_t M = p->rows, E = p->cols, K = p->k, G = p->groups, per = E / G;
    float *x = tv_load_float(&launch->inputs[0]);
    float *b = p->has_bias ? tv_load_float(&launch->inputs[1]) : NULL;
    float *y = tv_alloc(M * K, sizeof(float)), *sc = tv_alloc(E, sizeof(float));
    int32_t *idx = tv_alloc(M * K, sizeof(int32_t));
    mg_item *it = tv_alloc(E, sizeof(mg_item)), *gi = tv_alloc(G, sizeof(mg_item));
    unsigned char *pick = tv_alloc(G, 1);
    if (!x || (p->has_bias && !b) || !y || !sc || !idx || !it || !gi || !pick) {
        tv_fail_oom(launch);
    } else {
        for (int64_t m = 0; m < M; m++) {
            float *n = x + m * E;   /* the row becomes its norm (outOut) */
            if (p->norm == 1) {
                for (int64_t j = 0; j < E; j++) n[j] = mgk_sigmoid(n[j]);
            } else {
                mg_softmax(n, E, 1);
            }
            for (int64_t j = 0; j < E; j++) sc[j] = b ? n[j] + b[j] : n[j];
            for (int64_t g = 0; g < G; g++) {   /* each group's score: its top one, or the sum of its top two */
                for (int64_t j = 0; j < per; j++) it[j] = (mg_item){sc[g * per + j], (int32_t)j};
                qsort(it, (size_t)per, sizeof *it, mg_cmp);
                gi[g] = (mg_item){p->mode == 1 ? it[0].key + it[1].key : it[0].key, (int32_t)g};
            }
            qsort(gi, (size_t)G, sizeof *gi, mg_cmp);
            memset(pick, 0, (size_t)G);
            for (int64_t g = 0; g < p->kgroup; g++) pick[gi[g].idx] = 1;
            int64_t ne = 0;
            for (int64_t j = 0; j < E; j++)
                if (pick[j / per]) it[ne++] = (mg_item){sc[j], (int32_t)j};
            qsort(it, (size_t)ne, sizeof *it, mg_cmp);
            float *yr = y + m * K;
            double s = 0;
            for (int64_t j = 0; j < K; j++) {
                idx[m * K + j] = it[j].idx;
                yr[j] = n[it[j].idx];
                s += yr[j];
            }
            float den = (float)s + p->eps;
            for (int64_t j = 0; j < K; j++) {
                float v = p->norm == 1 ? yr[j] / den : yr[j];
                yr[j] = v * p->factor;
            }
        }
        tv_store_float(&launch->outputs[0], y);
        tv_scatter_bytes(&launch->outputs[1], (const unsigned char *)idx);
        if (p->out_flag) tv_store_float(&launch->outputs[2], x);
    }
    free(x), free(b), free(y), free(sc), free(idx), free(it), free(gi), free(pick);
}

/* mgk_plan x bias k kGroup groupCount groupSelectMode renorm normType outFlag factor eps y expertIdx out: the tiling's
 * DoOpTiling in its order (CheckInputShape, CheckOutShape, CheckAttr; messages as the vendor's, typos included). */
aclnnStatus opc_mgk_plan(op_call *c, const op_step *s) {
    if (c->nothing) return ACLNN_SUCCESS;   /* every output empty: nnopbase skips the tiling */
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0), *b = op_tensor(c, s, 1), *y = op_tensor(c, s, 11),
                              *ix = op_tensor(c, s, 12), *o = op_tensor(c, s, 13);
    int64_t k = op_argument(c, s, 2)->i, kg = op_argument(c, s, 3)->i, gc = op_argument(c, s, 4)->i;
    int64_t mode = op_argument(c, s, 5)->i, renorm = op_argument(c, s, 6)->i, norm = op_argument(c, s, 7)->i;
    int out_flag = op_argument(c, s, 8)->i != 0;
    if (x->ndim != 2) return mg_reject(c, "The dim number of x is: %lld, but should be 2.", (long long)x->ndim);
    int64_t E = x->shape[1];
    if (b->present) {
        if (b->ndim != 1) return mg_reject(c, "The dim number of bias is: %lld, but should be 1.", (long long)b->ndim);
        if (b->shape[0] != E)
            return mg_reject(c, "The first dim of bias is: %lld, but should be %lld.", (long long)b->shape[0], (long long)E);
    }
    if (k > E)
        return mg_reject(c, "k is: %lld, expert num is: %lld, k cannot be greater than expert num.", (long long)k,
                         (long long)E);
    if (y->ndim != 2)
        return mg_reject(c, "y out shape num %lld and x shape num 2 not equal, please check.", (long long)y->ndim);
    if (ix->ndim != 2)
        return mg_reject(c, "expertId out shape num %lld and x shape num 2 not equal, please check.", (long long)ix->ndim);
    if (o->ndim != 2)
        return mg_reject(c, "norm out shape num %lld and x shape num 2 not equal, please check.", (long long)o->ndim);
    if (y->shape[0] != x->shape[0])
        return mg_reject(c, "y out dim[0] %lld not euqal x dim[0] %lld, please check.", (long long)y->shape[0],
                         (long long)x->shape[0]);
    if (ix->shape[0] != x->shape[0])
        return mg_reject(c, "expertId out dim[0] %lld not euqal x dim[0] %lld, please check.", (long long)ix->shape[0],
                         (long long)x->shape[0]);
    if (out_flag && o->shape[0] != x->shape[0])   /* the vendor's message prints out's dim twice */
        return mg_reject(c, "norm out dim[0] %lld and x dim[0] %lld not equal, please check.", (long long)o->shape[0],
                         (long long)o->shape[0]);
    if (y->shape[1] != k)
        return mg_reject(c, "y dim[1] %lld not euqal k %lld, please check.", (long long)y->shape[1], (long long)k);
    if (ix->shape[1] != k)
        return mg_reject(c, "expertId dim[1] %lld not euqal k %lld, please check.", (long long)ix->shape[1], (long long)k);
    if (out_flag && o->shape[1] != E)
        return mg_reject(c, "normOut dim[1] %lld and x dim[1] %lld not equal, please check.", (long long)o->shape[1],
                         (long long)E);
    if (E > 2048) return mg_reject(c, "expert count is: %lld, but should not greater than 2048.", (long long)E);
    if (k <= 0) return mg_reject(c, "k is: %lld, but should be greater than 0.", (long long)k);
    if (kg <= 0) return mg_reject(c, "k_group is: %lld, but should be greater than 0.", (long long)kg);
    if (kg > gc) return mg_reject(c, "k_group is: %lld, but should not greater than %lld.", (long long)kg, (long long)gc);
    if (gc <= 0) return mg_reject(c, "group_count is: %lld, but should be greater than 0.", (long long)gc);
    if (norm != 0 && norm != 1)
        return mg_reject(c, "norm type is: %lld, but currently only support 0 and 1.", (long long)norm);
    if (mode != 0 && mode != 1)
        return mg_reject(c, "group select mode is: %lld, but currently only support 1 and 0.", (long long)mode);
    if (renorm != 0) return mg_reject(c, "renorm is: %lld, but currently only support 0.", (long long)renorm);
    if (E % gc != 0)
        return mg_reject(c, "Expert count : %lld is not divisible by k_group: %lld", (long long)E, (long long)gc);
    int64_t per = E / gc;
    if (per < 1) return mg_reject(c, "group expert count is: %lld, but should be greater than 1.", (long long)per);
    if (mode == 1 && per < 2)
        return mg_reject(c, "group expert count is: %lld, if group select mode is: 1, group expert count should be greater "
                         "than 1.", (long long)per);
    if (k > op_mul_sat(kg, per))
        return mg_reject(c, "k is: %lld, but should be smaller than %lld.", (long long)k, (long long)op_mul_sat(kg, per));
    int64_t align = (per + 31) / 32 * 32;
    if (gc != 1 && gc != E && kg != gc && op_mul_sat(gc, align) > 2048)
        return mg_reject(c, "group count * group expert count align is: %lld, but should not greater than 2048.",
                         (long long)op_mul_sat(gc, align));
    mgk_params *p = op_params(c, sizeof *p);
    *p = (mgk_params){x->shape[0], E, k, kg, gc, mode, norm, out_flag, b->present,
                      (float)op_argument(c, s, 9)->d, (float)op_argument(c, s, 10)->d};
    if (p->rows == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}
