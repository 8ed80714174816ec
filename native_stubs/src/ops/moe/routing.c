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
#include "opbase/checks.h"
#include "ops_decls.h"

typedef struct {
    int64_t n, k, cols, active;   /* active: min(activeNum, n) * k expanded rows */
} mir_params;

/* int32 -> fp32 with CAST_ROUND (nearest, ties away from zero): exact up to 2^24. */
static float mir_key(int32_t e) {
    int64_t a = e < 0 ? -(int64_t)e : e;
    int sh = 0;
    while ((a >> sh) >= (1 << 24)) sh++;
    if (sh) {
        int64_t q = a >> sh, r = a & ((1LL << sh) - 1);
        if (r >= (1LL << (sh - 1))) q++;
        a = q << sh;
    }
    return e < 0 ? -(float)a : (float)a;
}

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
    size_t es = ew_itemsize(launch->inputs[0].dtype);
    unsigned char *x = tv_gather_bytes(&launch->inputs[0]);
    int32_t *row = (int32_t *)tv_gather_bytes(&launch->inputs[1]), *exp = (int32_t *)tv_gather_bytes(&launch->inputs[2]);
    unsigned char *ex = tv_gather_bytes(&launch->outputs[0]);   /* rows not gathered keep their bytes */
    int32_t *erow = (int32_t *)tv_gather_bytes(&launch->outputs[1]), *eexp = tv_alloc(total, sizeof(int32_t));
    mir_item *it = tv_alloc(total, sizeof(mir_item));
    if (!x || !row || !exp || !ex || !erow || !eexp || !it) {
        tv_fail_oom(launch);
    } else {
        for (int64_t i = 0; i < total; i++) it[i] = (mir_item){mir_key(exp[i]), i};
        qsort(it, (size_t)total, sizeof *it, mir_cmp);
        for (int64_t i = 0; i < total; i++) {
            int32_t src = row[it[i].pos];
            eexp[i] = (int32_t)it[i].key;
            if (src >= 0 && src < total) erow[src] = (int32_t)i;
            if (i < p->active && src >= 0) memcpy(ex + i * cols * es, x + (src % p->n) * cols * es, (size_t)(cols * es));
        }
        tv_scatter_bytes(&launch->outputs[0], ex);
        tv_scatter_bytes(&launch->outputs[1], (const unsigned char *)erow);
        tv_scatter_bytes(&launch->outputs[2], (const unsigned char *)eexp);
    }
    free(x), free(row), free(exp), free(ex), free(erow), free(eexp), free(it);
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
    *p = (mir_params){n, k, cols, rows};
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
