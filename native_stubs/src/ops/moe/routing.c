/*
 * MoE routing: aclnnMoeInitRouting and aclnnMoeComputeExpertTokens (generated aclnn wrappers of
 * hicann/ops-transformer moe/moe_init_routing and moe/moe_compute_expert_tokens). Definitions: routing.toml.
 *
 * MoeInitRouting: the n x k experts, flattened, are sorted ascending as the kernels do (negated fp32 keys, CAST_ROUND
 * from int32, in a descending stable Sort / MrgSort: equal keys keep their flattened order) with rowIdx as values;
 * expandedExpertIdx = the sorted keys back in int32, expandedRowIdx[sortedRowIdx[i]] = i, and expandedX[i] =
 * x[sortedRowIdx[i] % n] for i < min(activeNum, n) * k.
 * MoeComputeExpertTokens: out[e] = the count of sortedExperts entries <= e, for e < numExperts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/dtype.h"
#include "kernels/view.h"
#include "numerics/numerics.h"
#include "opbase/checks.h"
#include "ops_decls.h"
#include "ops/moe/moe.h"

typedef struct {
    int64_t n, k, cols, active;   /* active: the expanded rows written (min(activeNum, n) * k; numOutTokens) */
    int permute;                  /* MoeTokenPermute: no rowIdx (the value is the position), the row pos / k */
} mir_params;


typedef struct {
    float key;
    int64_t pos;
} mir_item;

static int mir_cmp(const void *a, const void *b) {   /* ascending key, then position (stable) */
    const mir_item *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

void moe_init_routing_kernel(const pyaclnn_stub_launch *launch) {
    const mir_params *p = launch->params;
    if (!tv_launch_views_ok(launch)) return;
    int64_t total = p->n * p->k, cols = p->cols;
    const pyaclnn_stub_tensor *et = &launch->inputs[p->permute ? 1 : 2];
    size_t es = ew_itemsize(launch->inputs[0].dtype);
    unsigned char *x = tv_gather_bytes(&launch->inputs[0]), *eb = tv_gather_bytes(et);
    int32_t *row = p->permute ? NULL : (int32_t *)tv_gather_bytes(&launch->inputs[1]);
    unsigned char *ex = tv_gather_bytes(&launch->outputs[0]);   /* rows not gathered keep their bytes */
    int32_t *erow = (int32_t *)tv_gather_bytes(&launch->outputs[1]);
    int32_t *eexp = p->permute ? NULL : tv_alloc(total, sizeof(int32_t));
    mir_item *it = tv_alloc(total, sizeof(mir_item));
    if (!x || !eb || (!p->permute && (!row || !eexp)) || !ex || !erow || !it) {
        tv_fail_oom(launch);
    } else {
        for (int64_t i = 0; i < total; i++)
            it[i] = (mir_item){moe_expert_key(et->dtype == ACL_INT64 ? ((int64_t *)eb)[i] : ((int32_t *)eb)[i]), i};
        qsort(it, (size_t)total, sizeof *it, mir_cmp);
        for (int64_t i = 0; i < total; i++) {
            int64_t src = p->permute ? it[i].pos : row[it[i].pos], from = p->permute ? src / p->k : src % p->n;
            if (eexp) eexp[i] = (int32_t)it[i].key;
            if (src >= 0 && src < total) erow[src] = (int32_t)i;
            if (i < p->active && src >= 0) memcpy(ex + i * cols * es, x + from * cols * es, (size_t)(cols * es));
        }
        tv_scatter_bytes(&launch->outputs[0], ex);
        tv_scatter_bytes(&launch->outputs[1], (const unsigned char *)erow);
        if (eexp) tv_scatter_bytes(&launch->outputs[2], (const unsigned char *)eexp);
    }
    free(x), free(eb), free(row), free(ex), free(erow), free(eexp), free(it);
}

#define mir_reject(c, ...) op_failf((c)->api, ACLNN_ERR_INNER_TILING_ERROR, __VA_ARGS__)

/* mir_plan x rowIdx expertIdx activeNum expandedX expandedRowIdx expandedExpertIdx: GetShapeAttrsInfo, then
 * CheckOutShape, in the tiling's order and words. */
aclnnStatus opc_mir_plan(op_call *c, const op_step *s) {
    if (c->nothing) return ACLNN_SUCCESS;   /* every output empty: nnopbase skips the tiling */
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0), *r = op_tensor(c, s, 1), *e = op_tensor(c, s, 2),
                              *ex = op_tensor(c, s, 4), *er = op_tensor(c, s, 5), *ee = op_tensor(c, s, 6);
    int64_t active = op_argument(c, s, 3)->i;
    if (x->ndim != 2) return mir_reject(c, "The dim number of x should be 2.");
    if (r->ndim != 2) return mir_reject(c, "The dim number of row_idx should be 2.");
    if (r->ndim != e->ndim || memcmp(r->shape, e->shape, sizeof(int64_t) * 2) != 0)
        return mir_reject(c, "The shape of row_idx and expert_idx should be same.");
    if (x->shape[0] != e->shape[0]) return mir_reject(c, "Input rows should be same.");
    if (active < 0) return mir_reject(c, "active_num must be a non-negative number.");
    int64_t n = e->shape[0], k = e->shape[1], cols = x->shape[1], total = op_mul_sat(n, k);
    int64_t rows = op_mul_sat(n < active ? n : active, k);
    if (ex->ndim != 2) return mir_reject(c, "The dim number of expanded_x should be 2.");
    if (er->ndim != 1) return mir_reject(c, "The dim number of expanded_row_idx should be 1.");
    if (ee->ndim != 1 || ee->shape[0] != er->shape[0])
        return mir_reject(c, "The shape of expanded_row_idx and expanded_expert_idx should be same.");
    if (ex->shape[0] != rows) return mir_reject(c, "The first dim of expanded_x should be %lld.", (long long)rows);
    if (ex->shape[1] != cols) return mir_reject(c, "The second dim of expanded_x should be %lld.", (long long)cols);
    if (er->shape[0] != total)
        return mir_reject(c, "The first dim of expanded_row_idx and expanded_expert_idx should be %lld.", (long long)total);
    mir_params *p = op_params(c, sizeof *p);
    *p = (mir_params){n, k, cols, rows, 0};
    if (total == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}

/* ---- MoeComputeExpertTokens ------------------------------------------------------------------------ */

typedef struct {
    int64_t len, experts;
} mcet_params;

void moe_compute_expert_tokens_kernel(const pyaclnn_stub_launch *launch) {
    const mcet_params *p = launch->params;
    if (!tv_launch_views_ok(launch)) return;
    int32_t *v = (int32_t *)tv_gather_bytes(&launch->inputs[0]), *out = tv_alloc(p->experts, sizeof(int32_t));
    if (!v || !out) {
        tv_fail_oom(launch);
    } else {
        for (int64_t e = 0; e < p->experts; e++) {
            int32_t cnt = 0;
            for (int64_t i = 0; i < p->len; i++) cnt += v[i] <= e;
            out[e] = cnt;
        }
        tv_scatter_bytes(&launch->outputs[0], (const unsigned char *)out);
    }
    free(v), free(out);
}

/* mcet_plan sortedExperts numExperts out: CheckParamsShape (its reason, then the wrapper's "check shape fail"), the
 * 2^24 and 2048 bounds, and the emulator's own: out holds numExperts counts. */
aclnnStatus opc_mcet_plan(op_call *c, const op_step *s) {
    if (c->nothing) return ACLNN_SUCCESS;
    const pyaclnn_stub_tensor *v = op_tensor(c, s, 0), *o = op_tensor(c, s, 2);
    int64_t ne = op_argument(c, s, 1)->i;
    int32_t ne32 = (int32_t)ne;   /* the tiling reads the attribute as int32 */
    const char *why = v->ndim != 1 ? "the sorted_expert of input should be 1D tensor."
                      : o->ndim != 1 ? "the output should be 1D tensor."
                      : ne32 == 0   ? "the numOfExpert of attr should not be 0."
                                    : NULL;
    if (why) return mir_reject(c, "%s Tiling4MoeComputeExpertTokens check shape fail.", why);
    if (v->shape[0] > (1 << 24)) return mir_reject(c, "Number of sorted expert should not larger than 2**24, please check.");
    if (ne32 > 2048) return mir_reject(c, "Number of expert should not larger than 2048, please check.");
    if (ne32 < 0 || o->shape[0] != ne32) {
        char b[160];
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "out %s: numExperts (%lld) counts needed",
                            tv_shape_text(o->shape, o->ndim, b, sizeof b), (long long)ne);
        return ACLNN_ERR_PARAM_INVALID;
    }
    mcet_params *p = op_params(c, sizeof *p);
    *p = (mcet_params){v->shape[0], ne32};
    return ACLNN_SUCCESS;
}

/* ---- MoeFinalizeRoutingV2 -------------------------------------------------------------------------- */

/* aclnnMoeFinalizeRoutingV2 (op_api: a pass-through to the generated wrapper of moe/moe_finalize_routing_v2), per
 * output row i and column j, in the Atlas A2 kernels' order: acc = x1 + x2 (or x1, or nothing); for each k:
 * r = expandedRowIdx[i + k * n] (dropPadMode 0 / 1) or [i * k' + k] (2 / 3); t = expandedX[r] + bias[expertIdx[i][k]];
 * m = t * scales[i][k] (1 without scales); acc = the first m when there is no x1, else acc + m. A row index -1 in
 * dropPadMode 1 / 3 adds nothing (the first one gives 0). fp16 and fp32 (the _fp_ templates): every step rounded to
 * the dtype (Add / Muls in T); bf16 (the _bf16 templates): the steps in fp32, one CAST_RINT at the end. */
typedef struct {
    int64_t n, k, h, rows, experts;   /* rows: expandedX's rows (E * C in the drop modes) */
    int mode, has_x1, has_x2, has_bias, has_scales;
    aclDataType dt;   /* the dtype of the steps' roundings (ACL_FLOAT: fp32 steps, one cast at the end) */
    int unpermute;    /* MoeTokenUnpermute on Atlas A2: a zero prob (or an index past the rows) skips the token */
} mfr_params;

static float mfr_round(double v, aclDataType dt) {   /* one step of T arithmetic (bf16 computes in fp32) */
    if (dt == ACL_FLOAT16) return num_f16_to_f32(num_f32_to_f16((float)v));   /* fp16 operands: v exact in double */
    return (float)v;
}

void moe_finalize_routing_kernel(const pyaclnn_stub_launch *launch) {
    const mfr_params *p = launch->params;
    if (!tv_launch_views_ok(launch)) return;
    int64_t n = p->n, K = p->k, H = p->h;
    aclDataType dt = p->dt == ACL_FLOAT16 ? ACL_FLOAT16 : ACL_FLOAT;
    float *ex = tv_load_float(&launch->inputs[0]);
    int32_t *ri = (int32_t *)tv_gather_bytes(&launch->inputs[1]);
    float *x1 = p->has_x1 ? tv_load_float(&launch->inputs[2]) : NULL;
    float *x2 = p->has_x2 ? tv_load_float(&launch->inputs[3]) : NULL;
    float *b = p->has_bias ? tv_load_float(&launch->inputs[4]) : NULL;
    float *sc = p->has_scales ? tv_load_float(&launch->inputs[5]) : NULL;
    int32_t *ei = launch->inputs[6].present ? (int32_t *)tv_gather_bytes(&launch->inputs[6]) : NULL;
    float *out = tv_alloc(n * H, sizeof(float));
    if (!ex || !ri || (p->has_x1 && !x1) || (p->has_x2 && !x2) || (p->has_bias && !b) || (p->has_scales && !sc) ||
        (launch->inputs[6].present && !ei) || !out) {
        tv_fail_oom(launch);
    } else {
        int drop = p->mode == 1 || p->mode == 3;
        for (int64_t i = 0; i < n; i++) {
            float *o = out + i * H;
            int init = p->has_x1;
            for (int64_t j = 0; j < H; j++)
                o[j] = !p->has_x1 ? 0.0f : p->has_x2 ? mfr_round((double)x1[i * H + j] + x2[i * H + j], dt) : x1[i * H + j];
            for (int64_t k = 0; k < K; k++) {
                int64_t r = ri[p->mode < 2 ? i + k * n : i * K + k];
                float s = sc ? sc[i * K + k] : 1.0f;
                int valid = r >= 0 && r < p->rows && !(p->unpermute && s == 0.0f);   /* outside expandedX: nothing */
                int64_t e = ei ? ei[i * K + k] : 0;
                const float *bb = b && e >= 0 && e < p->experts ? b + e * H : NULL;
                if (!valid && (drop || init || p->unpermute)) {
                    if (!init) init = 1;   /* Duplicate 0: acc stays 0 */
                    continue;
                }
                if (!valid) continue;
                for (int64_t j = 0; j < H; j++) {
                    float t = bb ? mfr_round((double)ex[r * H + j] + bb[j], dt) : ex[r * H + j];
                    float m = mfr_round((double)t * s, dt);
                    o[j] = init ? mfr_round((double)o[j] + m, dt) : m;
                }
                init = 1;
            }
        }
        tv_store_float(&launch->outputs[0], out);   /* RINT to the dtype: exact for fp16 / fp32, bf16's one cast */
    }
    free(ex), free(ri), free(x1), free(x2), free(b), free(sc), free(ei), free(out);
}

/* mfr_scales x scales: the definitions' scales column: on Atlas A2 / A3 x's dtype (or FLOAT with BFLOAT16 x), on
 * the regbase Ascend 950 any of FLOAT16, FLOAT, BFLOAT16 with every x dtype. */
aclnnStatus opc_mfr_scales(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0), *sc = op_tensor(c, s, 1);
    if (!sc->present) return ACLNN_SUCCESS;
    aclDataType d = sc->dtype;
    int ok = ew_soc_is_950() ? d == ACL_FLOAT16 || d == ACL_FLOAT || d == ACL_BF16
                             : d == x->dtype || (x->dtype == ACL_BF16 && d == ACL_FLOAT);
    if (ok) return ACLNN_SUCCESS;
    char b1[24], b2[24];
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "the dtype combination %s %s, %s %s is not supported",
                        op_pname(c, s, 0), op_dtype_name(x->dtype, b1), op_pname(c, s, 1), op_dtype_name(d, b2));
    return ACLNN_ERR_PARAM_INVALID;
}

/* mfr_plan expandedX expandedRowIdx x1 x2 bias scales expertIdx dropPadMode out: the membase tiling's checks in its
 * order and words (moe_finalize_routing_v2_tiling_membase.cpp), mfr_check; MoeTokenUnpermute's Ascend 950 path too. */
static aclnnStatus mfr_check(op_call *c, const pyaclnn_stub_tensor *ex, const pyaclnn_stub_tensor *ri,
                             const pyaclnn_stub_tensor *x1, const pyaclnn_stub_tensor *x2, const pyaclnn_stub_tensor *b,
                             const pyaclnn_stub_tensor *sc, const pyaclnn_stub_tensor *ei, int64_t mode,
                             const pyaclnn_stub_tensor *y) {
    int64_t k = 1, e = 0, h;
    if (mode < 0 || mode > 3) return mir_reject(c, "the value of drop_pad_mode should be [0,3].");
    if (ri->ndim != 1) return mir_reject(c, "the expanded_row_idx of input should be 1D tensor.");
    if (sc->present) {
        if (sc->ndim != 2) return mir_reject(c, "the scales of input should be 2D tensor.");
        k = sc->shape[1];
        if (k == 0) return mir_reject(c, "K can not be 0.");
    }
    int64_t n = ri->shape[0] / k;
    if (mode == 0 || mode == 2) {
        if (ex->ndim != 2)
            return mir_reject(c, "the expanded_x of input should be 2D tensor when drop_pad_mode is 0 or 2.");
        h = ex->shape[1];
    } else {
        if (ex->ndim != 3)
            return mir_reject(c, "the expanded_x of input should be 3D tensor when drop_pad_mode is 1 or 3.");
        e = ex->shape[0];
        h = ex->shape[2];
    }
    const pyaclnn_stub_tensor *xs[2] = {x1, x2};
    for (int q = 0; q < 2; q++) {
        const pyaclnn_stub_tensor *t = xs[q];
        if (!t->present) continue;
        if (q == 1 && !x1->present)
            return mir_reject(c, "In the case of x1 parameter is not input, x2 parameter can't be inputted either.");
        if (t->ndim != 2) return mir_reject(c, "the x%d of input should be 2D tensor.", q + 1);
        if (t->shape[0] != n) return mir_reject(c, "the dim 0 of x%d should be %lld.", q + 1, (long long)n);
        if (t->shape[1] != h) return mir_reject(c, "the dim 1 of x%d should be %lld.", q + 1, (long long)h);
    }
    if (b->present) {
        if (!ei->present) return mir_reject(c, "the expert_idx must exist when bias exist.");
        if (b->ndim != 2) return mir_reject(c, "the bias of input should be 2D tensor.");
        if (mode == 1 || mode == 3) {
            if (b->shape[0] != e)
                return mir_reject(c, "the dim 0 of bias should be %lld when drop_pad_mode is 1 or 3.", (long long)e);
        } else {
            e = b->shape[0];
        }
        if (b->shape[1] != h) return mir_reject(c, "the dim 1 of bias should be %lld.", (long long)h);
    }
    if (ei->present) {
        if (ei->ndim != 2) return mir_reject(c, "the expert_idx of input should be 2D tensor.");
        if (ei->shape[0] != n) return mir_reject(c, "the dim 0 of expert_idx should be %lld.", (long long)n);
        if (ei->shape[1] != k) return mir_reject(c, "the dim 1 of expert_idx should be %lld.", (long long)k);
    }
    if (b->present && ei->present && b->shape[0] < ei->shape[1])
        return mir_reject(c, "E should be larger than or equal to K.");
    if (b->present && b->shape[0] == 0) return mir_reject(c, "E can not be 0.");
    if (y->ndim != 2) return mir_reject(c, "the y should be 2D tensor.");
    if (y->dtype != ex->dtype) return mir_reject(c, "the dtype of y should be same with expanded_x.");
    if (y->shape[0] != n) return mir_reject(c, "the dim 0 of output should be %lld.", (long long)n);
    if (y->shape[1] != h) return mir_reject(c, "the dim 1 of output should be %lld.", (long long)h);
    if (op_mul_sat(n, k) != ri->shape[0]) {   /* the emulator's: the kernels read n * k row indices */
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "expandedRowIdx has %lld entries, n * K = %lld read",
                            (long long)ri->shape[0], (long long)op_mul_sat(n, k));
        return ACLNN_ERR_PARAM_INVALID;
    }
    mfr_params *p = op_params(c, sizeof *p);
    *p = (mfr_params){n, k, h, ex->ndim == 3 ? ex->shape[0] * ex->shape[1] : ex->shape[0], b->present ? b->shape[0] : 0,
                      (int)mode, x1->present, x2->present, b->present, sc->present, ex->dtype, 0};
    if (n * h == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}

aclnnStatus opc_mfr_plan(op_call *c, const op_step *s) {
    if (c->nothing) return ACLNN_SUCCESS;
    return mfr_check(c, op_tensor(c, s, 0), op_tensor(c, s, 1), op_tensor(c, s, 2), op_tensor(c, s, 3),
                     op_tensor(c, s, 4), op_tensor(c, s, 5), op_tensor(c, s, 6), op_argument(c, s, 7)->i,
                     op_tensor(c, s, 8));
}

/* ---- MoeTokenPermute ------------------------------------------------------------------------------- */

/* mtp_plan tokens indices numOutTokens paddedMode permuteTokensOut sortedIndicesOut "ROWS": aclnnMoeTokenPermute's
 * op_api. Atlas A2 / A3: the generated wrapper of moe/moe_token_permute (the definition's dtype rows "ROWS", then its
 * tiling: GetShapeAttrsInfo, CheckOutShape). Ascend 950: paddedMode must be false (161002, no message), then the
 * generated wrapper of MoeInitRoutingV2 (activeNum = numOutTokens, dropless): its regbase rows (no INT8 tokens) and
 * the checks of its tiling that this call can reach. The kernel is MoeInitRouting's with the position as the value
 * (sortedIndicesOut[sorted position] = i) and the token pos / topK gathered. */
aclnnStatus opc_mtp_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *t = op_tensor(c, s, 0), *ix = op_tensor(c, s, 1), *pt = op_tensor(c, s, 4),
                              *si = op_tensor(c, s, 5);
    int64_t num_out = op_argument(c, s, 2)->i;
    int padded = op_argument(c, s, 3)->i != 0, soc950 = ew_soc_is_950();
    aclnnStatus rc;
    if (soc950 && padded)
        return op_invalidf(c->api, "paddedMode must be false (CHECK_RET, no message)");
    op_step rows = *s;
    rows.np = 4;   /* tokens indices permuteTokensOut sortedIndicesOut */
    rows.p[2] = s->p[4], rows.p[3] = s->p[5];
    if (soc950 && t->dtype == ACL_INT8) rows.text = "";
    if ((rc = opc_dtype_rows(c, &rows))) return rc;
    if (pyaclnn_stub_numel(pt) == 0 && pyaclnn_stub_numel(si) == 0) {   /* every output empty: nnopbase */
        c->nothing = 1;
        return ACLNN_SUCCESS;
    }
    int64_t k = ix->ndim == 2 ? ix->shape[1] : 1, total, cols = 1;
    if (soc950) {
        if (t->ndim != 2) return mir_reject(c, "The dim number of x should be 2.");
        if (t->shape[0] != ix->shape[0]) return mir_reject(c, "The first dim of x and expertIdx should be equal.");
        if (ix->ndim != 1 && ix->ndim != 2) return mir_reject(c, "The dim number of expertIdx should be 1 or 2.");
        total = op_mul_sat(ix->shape[0], k);
        cols = t->shape[1];
        int64_t active = num_out <= 0 ? num_out + total : num_out;
        active = active < total ? active : total;
        active = active > 0 ? active : 0;
        if (pt->ndim != 2) return mir_reject(c, "The dim number of expandedX should be 2.");
        if (pt->shape[0] != active) return mir_reject(c, "The first dim of expandedX should be %lld.", (long long)active);
        if (pt->shape[1] != cols) return mir_reject(c, "The second dim of expandedX should be %lld.", (long long)cols);
        if (si->ndim != 1) return mir_reject(c, "The dim number of expandedRowIdx should be 1.");
        if (si->shape[0] != total) return mir_reject(c, "The first dim of expandedRowIdx should be %lld.", (long long)total);
        num_out = active;
    } else {
        if (padded) return mir_reject(c, "Currently only support padded_mode is false");
        for (int64_t i = 1; i < t->ndim; i++) cols = op_mul_sat(cols, t->shape[i]);
        if (ix->ndim != 2 && ix->ndim != 1)
            return mir_reject(c, "The dim number of indices should be 2 or 1 but got [%lld].", (long long)ix->ndim);
        if (t->ndim < 1 || t->shape[0] != ix->shape[0])
            return mir_reject(c, "Input token's dim 0 [%lld] should be same with indices' dim 0 [%lld].",
                              (long long)(t->ndim ? t->shape[0] : 1), (long long)ix->shape[0]);
        if (k > 512) return mir_reject(c, "Input indices's dim 1 [%lld] should not large than max topK[512].", (long long)k);
        total = op_mul_sat(ix->shape[0], k);
        if (total >= 16777215)
            return mir_reject(c, "The elements num of indices [%lld] should be less than [16777215].", (long long)total);
        num_out = num_out <= 0 ? num_out + total : num_out;
        num_out = num_out < total ? num_out : total;
        num_out = num_out > 0 ? num_out : 0;
        if (pt->ndim < 2)
            return mir_reject(c, "The dim number of Output permute_tokens should be greater than 1 but got [%lld].",
                              (long long)pt->ndim);
        int64_t pcols = 1;
        for (int64_t i = 1; i < pt->ndim; i++) pcols = op_mul_sat(pcols, pt->shape[i]);
        if (si->ndim != 1) return mir_reject(c, "The dim number of Output sort_indices should be 1.");
        if (si->shape[0] != total)
            return mir_reject(c, "The size of Output sort_indices should be [%lld].", (long long)total);
        if (pcols != cols)
            return mir_reject(c, "The hidden_size of output permuteTokens should be %lld but got %lld.", (long long)cols,
                              (long long)pcols);
        if (pt->shape[0] != num_out)
            return mir_reject(c, "The dim 0 of output permuteTokens should be %lld but got %lld.", (long long)num_out,
                              (long long)pt->shape[0]);
    }
    mir_params *p = op_params(c, sizeof *p);
    *p = (mir_params){ix->shape[0], k, cols, num_out, 1};
    if (total == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}

/* ---- MoeTokenUnpermute ----------------------------------------------------------------------------- */

/* mtu_plan permutedTokens sortedIndices probs paddedMode out: aclnnMoeTokenUnpermute's op_api. Atlas A2 / A3: the
 * generated wrapper of moe/moe_token_unpermute (dtype rows; its tiling checks nothing: the emulator's own shape checks,
 * 161002, keep the kernel inside the tensors), the kernel's fp32 steps (acc = token * prob, then acc + token * prob in
 * k order, a zero prob or an index past the rows skipping the token, one CAST_RINT). Ascend 950: paddedMode must be
 * false (a bare CHECK_RET), then MoeFinalizeRoutingV2 with dropPadMode 2 and probs as scales (mfr_check, its steps). */
aclnnStatus opc_mtu_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *pt = op_tensor(c, s, 0), *si = op_tensor(c, s, 1), *pr = op_tensor(c, s, 2),
                              *y = op_tensor(c, s, 4);
    static const pyaclnn_stub_tensor absent;
    int padded = op_argument(c, s, 3)->i != 0, soc950 = ew_soc_is_950();
    aclnnStatus rc;
    if (soc950 && padded)
        return op_invalidf(c->api, "paddedMode must be false (CHECK_RET, no message)");
    op_step rows = *s;   /* the definition's rows (MoeFinalizeRoutingV2's regbase rows on Ascend 950: the same set) */
    rows.np = 4, rows.p[3] = s->p[4];
    if ((rc = opc_dtype_rows(c, &rows))) return rc;
    if (soc950) {
        if (pyaclnn_stub_numel(y) == 0) c->nothing = 1;
        if (c->nothing || (rc = mfr_check(c, pt, si, &absent, &absent, &absent, pr, &absent, 2, y))) return rc;
        c->kernel = moe_finalize_routing_kernel;
        return ACLNN_SUCCESS;
    }
    if (pyaclnn_stub_numel(y) == 0) {
        c->nothing = 1;
        return ACLNN_SUCCESS;
    }
    char b[160];
    int64_t k = pr->present ? (pr->ndim == 2 ? pr->shape[1] : -1) : 1, total = si->ndim == 1 ? si->shape[0] : -1;
    static const char *PROBS = "probsOptional must be 2-D (tokens, topK) with tokens * topK = sortedIndices' size";
    const char *why = pt->ndim != 2                                                   ? "permutedTokens must be 2-D"
                      : total < 0                                                     ? "sortedIndices must be 1-D"
                      : k <= 0 || total % k != 0 || (pr->present && pr->shape[0] * k != total) ? PROBS
                      : y->ndim != 2 || y->shape[0] != total / k || y->shape[1] != pt->shape[1]
                          ? "out must be (tokens, hidden)"
                          : NULL;
    if (why) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "%s (out %s)", why,
                            tv_shape_text(y->shape, y->ndim, b, sizeof b));
        return ACLNN_ERR_PARAM_INVALID;
    }
    mfr_params *p = op_params(c, sizeof *p);
    *p = (mfr_params){total / k, k, pt->shape[1], pt->shape[0], 0, 2, 0, 0, 0, pr->present, ACL_FLOAT, 1};
    c->kernel = moe_finalize_routing_kernel;
    if (total == 0 || pt->shape[1] == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}

/* ---- MoeTokenPermuteGrad --------------------------------------------------------------------------- */

static aclnnStatus mtg_bad(op_call *c, const char *why, const pyaclnn_stub_tensor *t) {   /* the emulator's 161002 */
    char b[160];
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "%s (got %s)", why, tv_shape_text(t->shape, t->ndim, b, sizeof b));
    return ACLNN_ERR_PARAM_INVALID;
}

#define MTPG_ROWS "BFLOAT16 INT32 BFLOAT16|FLOAT16 INT32 FLOAT16|FLOAT INT32 FLOAT"

/* mtpg_plan permutedOutputGrad sortedIndices numTopk paddedMode out: aclnnMoeTokenPermuteGrad's op_api. Atlas A2 / A3:
 * the definition's rows, then (its tiling checks nothing) the emulator's shape checks; topK -1 counts as 1 as the
 * tiling does. Ascend 950: paddedMode false (bare CHECK_RET), then MoeInitRoutingV2Grad's generated wrapper (its rows,
 * its tiling base's CheckDtypeValidity / CheckParamsValidity / CheckShapeValidity, 561002) with dropPadMode 0 and
 * activeNum = permutedOutputGrad's rows. The kernel: MoeFinalizeRoutingV2's in its unpermute mode without scales. */
aclnnStatus opc_mtpg_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *g = op_tensor(c, s, 0), *si = op_tensor(c, s, 1), *y = op_tensor(c, s, 4);
    int64_t topk = op_argument(c, s, 2)->i;
    int padded = op_argument(c, s, 3)->i != 0, soc950 = ew_soc_is_950();
    aclnnStatus rc;
    if (soc950 && padded)
        return op_invalidf(c->api, "paddedMode must be false (CHECK_RET, no message)");
    if (soc950 && g->ndim == 0) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "permutedOutputGrad must have a dimension (CHECK_RET)");
        return ACLNN_ERR_PARAM_INVALID;
    }
    op_step rows = *s;
    rows.np = 3, rows.p[2] = s->p[4], rows.text = MTPG_ROWS;
    if ((rc = opc_dtype_rows(c, &rows))) return rc;
    int64_t total = si->ndim >= 1 ? si->shape[0] : 0, k = topk;
    if (soc950) {
        int64_t active = g->shape[0];
        if (topk <= 0) return mir_reject(c, "Attr top_k must be larger than zero.");
        if (g->ndim != 2 && g->ndim != 3) return mir_reject(c, "The dim number of grad_expanded_x should be 2 or 3.");
        if (active == 0 && g->shape[0] != total)
            return mir_reject(c, "All inputs Dim 0 size should be same under dropless mode.");
        if (y->ndim != 2) return mir_reject(c, "The dim number of grad_x should be 2.");
        if (y->shape[1] != g->shape[1]) return mir_reject(c, "Tail dim size of input and output should be same.");
        if (y->shape[0] != total / topk)
            return mir_reject(c, "output shape invalid, dim 0 of output gradX should be equal to the division of "
                                 "expandedRowIdx dim 0 and topK.");
        const pyaclnn_stub_tensor *pos[2] = {si, y};
        const char *nm[2] = {"rowIdxShape", "gradXShape"};
        for (int q = 0; q < 2; q++)
            for (int64_t i = 0; i < pos[q]->ndim; i++)
                if (pos[q]->shape[i] <= 0)
                    return mir_reject(c, "Dim %lld of %s expect be positive, but actual %lld.", (long long)i, nm[q],
                                      (long long)pos[q]->shape[i]);
        if (total % topk != 0) return mir_reject(c, "expanded_row_idx shape or top_k val invalid");
    } else {
        k = topk == -1 ? 1 : topk;
        if (k <= 0) return mtg_bad(c, "numTopk must be positive or -1 (the tiling divides by it)", si);
        if (g->ndim != 2) return mtg_bad(c, "permutedOutputGrad must be 2-D", g);
        if (si->ndim != 1 || total % k != 0) return mtg_bad(c, "sortedIndices must be 1-D of tokens * numTopk", si);
        if (y->ndim != 2 || y->shape[0] != total / k || y->shape[1] != g->shape[1])
            return mtg_bad(c, "out must be (tokens, hidden)", y);
    }
    if (g->ndim != 2) return mtg_bad(c, "permutedOutputGrad must be 2-D (the emulator's)", g);
    mfr_params *p = op_params(c, sizeof *p);
    *p = (mfr_params){total / k, k, g->shape[1], g->shape[0], 0, 2, 0, 0, 0, 0, ACL_FLOAT, 1};
    if (total == 0 || g->shape[1] == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}

/* ---- MoeTokenUnpermuteGrad ------------------------------------------------------------------------- */

typedef struct {
    int64_t n, k, h, rows;
    int has_probs, zero_init;
} mtug_params;

/* permutedTokensGradOut[r] = RINT(float(grad[t]) * prob) for r = sortedIndices[t * K + k] inside the rows;
 * probsGradOut[t][k] = RINT(the fp32 products permuteTokens[r] * grad[t] summed (float64, rounded once)). */
void moe_token_unpermute_grad_kernel(const pyaclnn_stub_launch *launch) {
    const mtug_params *p = launch->params;
    if (!tv_launch_views_ok(launch)) return;
    int64_t n = p->n, K = p->k, H = p->h;
    float *pt = p->has_probs ? tv_load_float(&launch->inputs[0]) : NULL;
    float *g = tv_load_float(&launch->inputs[1]);
    int32_t *si = (int32_t *)tv_gather_bytes(&launch->inputs[2]);
    float *pr = p->has_probs ? tv_load_float(&launch->inputs[3]) : NULL;
    float *out = p->zero_init ? tv_alloc(p->rows * H, sizeof(float)) : tv_load_float(&launch->outputs[0]);
    float *pg = p->has_probs ? tv_alloc(n * K, sizeof(float)) : NULL;
    if ((p->has_probs && (!pt || !pr || !pg)) || !g || !si || !out) {
        tv_fail_oom(launch);
    } else {
        if (p->zero_init) memset(out, 0, (size_t)(p->rows * H) * sizeof(float));
        for (int64_t t = 0; t < n; t++)
            for (int64_t k = 0; k < K; k++) {
                int64_t r = si[t * K + k];
                int inside = r >= 0 && r < p->rows;
                float pv = pr ? pr[t * K + k] : 1.0f;
                double acc = 0;
                for (int64_t j = 0; inside && j < H; j++) {
                    out[r * H + j] = pr ? g[t * H + j] * pv : g[t * H + j];   /* fp32 Muls */
                    if (pr) acc += (double)(pt[r * H + j] * g[t * H + j]);     /* fp32 Mul, then the sum */
                }
                if (pg) pg[t * K + k] = (float)acc;
            }
        tv_store_float(&launch->outputs[0], out);   /* CAST_RINT */
        if (pg) tv_store_float(&launch->outputs[1], pg);
    }
    free(pt), free(g), free(si), free(pr), free(out), free(pg);
}

/* not_null_mtug permuteTokens unpermutedTokensGrad sortedIndices permutedTokensGradOut paddedMode: Ascend 950 checks
 * paddedMode (bare CHECK_RET, 161002) before permuteTokens (161001); then the generated wrapper's NULL checks. */
aclnnStatus opc_not_null_mtug(op_call *c, const op_step *s) {
    if (ew_soc_is_950() && op_argument(c, s, 4)->i != 0)
        return op_invalidf(c->api, "paddedMode must be false (CHECK_RET, no message)");
    op_step nn = *s;
    nn.np = 4;
    return opc_not_null(c, &nn);
}

#define MTUG_ROWS                                                                                                      \
    "BFLOAT16 BFLOAT16 INT32 BFLOAT16 BFLOAT16 BFLOAT16|BFLOAT16 BFLOAT16 INT32 FLOAT16 BFLOAT16 FLOAT16|"             \
    "BFLOAT16 BFLOAT16 INT32 FLOAT BFLOAT16 FLOAT|FLOAT16 FLOAT16 INT32 BFLOAT16 FLOAT16 BFLOAT16|"                    \
    "FLOAT16 FLOAT16 INT32 FLOAT16 FLOAT16 FLOAT16|FLOAT16 FLOAT16 INT32 FLOAT FLOAT16 FLOAT|"                         \
    "FLOAT FLOAT INT32 BFLOAT16 FLOAT BFLOAT16|FLOAT FLOAT INT32 FLOAT16 FLOAT FLOAT16|FLOAT FLOAT INT32 FLOAT FLOAT FLOAT"

/* mtug_plan permuteTokens unpermutedTokensGrad sortedIndices probs paddedMode permutedTokensGradOut probsGradOut. */
aclnnStatus opc_mtug_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *pt = op_tensor(c, s, 0), *g = op_tensor(c, s, 1), *si = op_tensor(c, s, 2),
                              *pr = op_tensor(c, s, 3), *pg = op_tensor(c, s, 5), *gp = op_tensor(c, s, 6);
    int soc950 = ew_soc_is_950();
    aclnnStatus rc;
    if (soc950 && pt->ndim == 0) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "permuteTokens must have a dimension (CHECK_RET)");
        return ACLNN_ERR_PARAM_INVALID;
    }
    op_step rows = *s;   /* the definitions' rows (MoeFinalizeRoutingV2Grad's regbase rows on Ascend 950: the same set) */
    rows.np = 6, rows.p[4] = s->p[5], rows.p[5] = s->p[6], rows.text = MTUG_ROWS;
    if (!gp->present) rows.np = 5;
    if ((rc = opc_dtype_rows(c, &rows))) return rc;
    int64_t k = pr->present ? (pr->ndim == 2 ? pr->shape[1] : -1) : 1, total = si->ndim == 1 ? si->shape[0] : -1;
    if (soc950) {
        int64_t active = pt->shape[0], xdim0 = total;
        if (g->ndim != 2) return mir_reject(c, "grad_y dimnum must be 2, but got %lld.", (long long)g->ndim);
        if (si->ndim != 1)
            return mir_reject(c, "expanded_row_idx dimnum must be 1, but got %lld.", (long long)si->ndim);
        if (active > 0 && active < xdim0) xdim0 = active;
        if (pr->present) {
            if (pt->ndim != 2)
                return mir_reject(c, "expanded_x dimnum error. dropMode = 0, got expandedXdim %lld", (long long)pt->ndim);
            if (pr->ndim != 2) return mir_reject(c, "scales dimnum must be 2, but got %lld.", (long long)pr->ndim);
            if (pt->shape[0] != xdim0)
                return mir_reject(c, "expanded_x dim0 must be equal to %lld, but got %lld.", (long long)xdim0,
                                  (long long)pt->shape[0]);
            if (pt->shape[1] != g->shape[1])
                return mir_reject(c, "expanded_x last dim and grad_y dim1 must be same, but got %lld, %lld.",
                                  (long long)pt->shape[1], (long long)g->shape[1]);
            if (pr->shape[0] != g->shape[0])
                return mir_reject(c, "scales and grad_y dim0 must be same, but got %lld, %lld.", (long long)pr->shape[0],
                                  (long long)g->shape[0]);
            if (pyaclnn_stub_numel(pr) != total)
                return mir_reject(c, "scales and expanded_row_idx shape size must be same, but got %lld, %lld.",
                                  (long long)pyaclnn_stub_numel(pr), (long long)total);
            if (pt->dtype != g->dtype) return mir_reject(c, "expanded_x and grad_y dtype must be same.");
        } else if (g->shape[0] != total) {
            return mir_reject(c, "grad_y and expanded_row_idx dim0 must be same, but got %lld, %lld.",
                              (long long)g->shape[0], (long long)total);
        }
        if (pg->ndim != 2 && pg->ndim != 3)
            return mir_reject(c, "grad_expanded_x dimnum must be 2 or 3, but got %lld.", (long long)pg->ndim);
        if (pg->ndim == 3 || pg->shape[0] != xdim0)
            return mir_reject(c, "grad_expanded_x dim0 must be equal to %lld, but got %lld.", (long long)xdim0,
                              (long long)pg->shape[0]);
        if (pg->shape[1] != g->shape[1])
            return mir_reject(c, "grad_expanded_x and grad_y dim1 must be same, but got %lld, %lld.",
                              (long long)pg->shape[1], (long long)g->shape[1]);
        if (pr->present && gp->present) {
            if (gp->ndim < 1 || gp->shape[0] != g->shape[0])
                return mir_reject(c, "grad_scales and grad_y dim0 must be same, but got %lld, %lld.",
                                  (long long)(gp->ndim ? gp->shape[0] : 1), (long long)g->shape[0]);
            if (pyaclnn_stub_numel(gp) != total)
                return mir_reject(c, "grad_scales and expanded_row_idx shape size must be same, but got %lld, %lld.",
                                  (long long)pyaclnn_stub_numel(gp), (long long)total);
            if (gp->ndim != 2) return mir_reject(c, "grad_scales dimnum must be 2, but got %lld.", (long long)gp->ndim);
            if (gp->dtype != pr->dtype) return mir_reject(c, "grad_scales and scale dtype must be same.");
        }
    } else {
        int64_t numout = pt->ndim >= 1 ? pt->shape[0] : 0, h = g->ndim == 2 ? g->shape[1] : 0;
        if (g->ndim == 2 && (g->shape[0] == 0 || k == 0 || h == 0 || numout == 0))
            return mir_reject(c, "[MoeTokenUnpermuteGrad] input shape has 0.");
        if (k > 512) return mir_reject(c, "[MoeTokenUnpermuteGrad] topK only support no greater than 512.");
    }
    /* the emulator's: the shapes the kernel reads and writes */
    static const char *PROBS = "probsOptional must be 2-D (tokens, topK) with tokens * topK = sortedIndices' size";
    if (g->ndim != 2) return mtg_bad(c, "unpermutedTokensGrad must be 2-D", g);
    if (total < 0) return mtg_bad(c, "sortedIndices must be 1-D", si);
    if (k <= 0 || g->shape[0] * k != total || (pr->present && pr->shape[0] != g->shape[0])) return mtg_bad(c, PROBS, si);
    if (pr->present && (pt->ndim != 2 || pt->shape[1] != g->shape[1]))
        return mtg_bad(c, "permuteTokens must be (rows, hidden)", pt);
    if (pg->ndim != 2 || pg->shape[1] != g->shape[1] || (pr->present && pg->shape[0] != pt->shape[0]) ||
        (!pr->present && pt->ndim >= 1 && pg->shape[0] != pt->shape[0]))
        return mtg_bad(c, "permutedTokensGradOut must be (permuteTokens' rows, hidden)", pg);
    if (pr->present && (!gp->present || pyaclnn_stub_numel(gp) != total))
        return mtg_bad(c, "probsGradOut must hold tokens * topK values", gp);
    mtug_params *p = op_params(c, sizeof *p);
    *p = (mtug_params){g->shape[0], k, g->shape[1], pg->shape[0], pr->present, soc950};
    if (total == 0 || g->shape[1] == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}

/* ---- MoeFinalizeRouting (V1) ----------------------------------------------------------------------- */

#define MFR1_ROWS                                                                                                      \
    "FLOAT16 FLOAT16 FLOAT16 FLOAT16 FLOAT16 INT32 INT32 FLOAT16|FLOAT FLOAT FLOAT FLOAT FLOAT INT32 INT32 FLOAT|"      \
    "BFLOAT16 BFLOAT16 BFLOAT16 BFLOAT16 BFLOAT16 INT32 INT32 BFLOAT16"

/* mfr1_plan expandedX x1 x2 bias scales expandedRowIdx expandedExpertIdx out: the definition's rows (none on Ascend
 * 950), nothing run when out is empty, then the tiling's CheckParamsShape in its order and words (561002). */
aclnnStatus opc_mfr1_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *ex = op_tensor(c, s, 0), *x1 = op_tensor(c, s, 1), *x2 = op_tensor(c, s, 2),
                              *b = op_tensor(c, s, 3), *sc = op_tensor(c, s, 4), *ri = op_tensor(c, s, 5),
                              *ei = op_tensor(c, s, 6), *y = op_tensor(c, s, 7);
    op_step rows = *s;
    rows.text = ew_soc_is_950() ? "" : MFR1_ROWS;
    aclnnStatus rc = opc_dtype_rows(c, &rows);
    if (rc) return rc;
    if (pyaclnn_stub_numel(y) == 0) {
        c->nothing = 1;
        return ACLNN_SUCCESS;
    }
    if (ex->ndim != 2) return mir_reject(c, "The expanded_x of input should be 2D tensor.");
    if (x1->ndim != 2) return mir_reject(c, "The x1 of input should be 2D tensor.");
    if (x2->present && x2->ndim != 2) return mir_reject(c, "The x2 of input should be 2D tensor.");
    if (b->ndim != 2) return mir_reject(c, "The bias of input should be 2D tensor.");
    if (sc->ndim != 2) return mir_reject(c, "The scales of input should be 2D tensor.");
    if (ri->ndim != 1) return mir_reject(c, "The expanded_row_idx of input should be 1D tensor.");
    if (ei->ndim != 2) return mir_reject(c, "The expanded_expert_idx of input should be 2D tensor.");
    if (y->ndim != 2) return mir_reject(c, "The y should be 2D tensor.");
    int64_t n = x1->shape[0], h = x1->shape[1];
    if (n != sc->shape[0] || n != ei->shape[0] || n != y->shape[0] || (x2->present && n != x2->shape[0]))
        return mir_reject(c, "The dim 0 of x1, x2, scales, expanded_expert_idx and out should be same.");
    if (h != ex->shape[1] || h != b->shape[1] || h != y->shape[1] || (x2->present && h != x2->shape[1]))
        return mir_reject(c, "The dim 1 of expanded_x, x1, x2, bias and out should be same.");
    if (sc->shape[1] != ei->shape[1]) return mir_reject(c, "the The 1 of scales and expanded_expert_idx should be same.");
    if (ri->shape[0] != ex->shape[0]) return mir_reject(c, "The dim 0 of expanded_x and expanded_row_idx should be same.");
    if (b->shape[0] == 0) return mir_reject(c, "E can not be 0.");
    if (sc->shape[1] == 0) return mir_reject(c, "K can not be 0.");
    int64_t k = sc->shape[1];
    if (op_mul_sat(n, k) > ri->shape[0]) {   /* the emulator's: the kernels read n * K row indices */
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "expandedRowIdx has %lld entries, n * K = %lld read",
                            (long long)ri->shape[0], (long long)op_mul_sat(n, k));
        return ACLNN_ERR_PARAM_INVALID;
    }
    mfr_params *p = op_params(c, sizeof *p);
    *p = (mfr_params){n, k, h, ex->shape[0], b->shape[0], 0, 1, x2->present, 1, 1, ex->dtype, 0};
    if (n * h == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}
