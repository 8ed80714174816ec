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
#include "ops/moe/gating_common.h"

typedef struct {
    int64_t rows, cols, k;
    int v2;           /* the third output: 0 V1's rowIdx, 1 V2's softmax result */
    int renorm;       /* V2: top k of x first, then the softmax of the k values */
    int softmax_out;  /* V2: write the fp32 softmax (renorm 0 and the flag) */
    int half_rank;    /* V1, fp16, not the perf template: rank the fp16 SoftMax result */
    int y_round;      /* num_round mode of the fp16 narrowing (bf16: always CAST_ROUND) */
    aclDataType dt;
} mg_params;

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
