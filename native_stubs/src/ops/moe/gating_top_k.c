/*
 * MoE gating top-k: aclnnMoeGatingTopK and aclnnMoeGatingTopKV2 (hicann/ops-transformer moe/moe_gating_top_k: the
 * op_apis aclnn_moe_gating_top_k.cpp / _v2.cpp, the tiling moe_gating_top_k_tiling.cpp, the kernels
 * moe_gating_top_k_generalized.h / _without_group.h / _e_k_fullload.h). Definitions: gating.toml.
 *
 * Per row of E experts, in fp32 as the kernels compute (x widened exactly):
 *   norm: softmax (max, Exp(x - max), the row sum; the generalized template multiplies by the fp32 reciprocal 1 / sum
 *     (Muls), the without-group template divides (Div)), sigmoid (1 / (Exp(-x) + 1)) or sqrt-softplus
 *     (Sqrt(Ln(Exp(x) + 1)), four fp32 steps);
 *   TopK mode: score = norm + bias (fp32 Add) when bias is given; groups of E / groupCount experts scored by their
 *     top score (groupSelectMode 0) or the fp32 sum of their top two (1); the kGroup best groups (equal scores: the
 *     lower group first); the k best experts of those groups by score (equal scores: the lower expert first);
 *   Hash mode (V2 with inputIds and tid2eid): the experts are row inputIds[r] of tid2eid, no ranking;
 *   y = norm of those experts (without the bias); sigmoid, sqrt-softplus and softmax with renorm 1:
 *     y / (sum(y) + eps) (fp32 division); then y * routedScalingFactor (fp32 Muls), narrowed with CAST_RINT;
 *   outOut = norm (fp32) when outFlag.
 * Exp / Ln are libm in double rounded to fp32; the sums are float64 sums of the fp32 terms rounded once (the AscendC
 * ReduceSum order is not modelled: class c, figures in gating.toml).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal/pyaclnn_stub.h"
#include "kernels/dtype.h"
#include "kernels/vecmath.h"
#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"
#include "ops/moe/gating_common.h"

enum { MGK_SOFTMAX = 0, MGK_SIGMOID = 1, MGK_SOFTPLUS = 2 };

typedef struct {
    int64_t rows, cols, k, kgroup, groups, mode, norm, renorm;
    int out_flag, has_bias, hash, recip;
    float factor, eps;
} mgk_params;

static float mgk_sigmoid(float x) {
    float e = vm_exp(-x);
    return 1.0f / (e + 1.0f);
}

static float mgk_sqrt_softplus(float x) {
    float e = vm_exp(x) + 1.0f;
    return sqrtf(vm_ln(e));
}

/* Element i of an INT32 / INT64 tensor's contiguous bytes. */
static int64_t mgk_int_at(const unsigned char *b, aclDataType dt, int64_t i) {
    if (dt == ACL_INT32) {
        int32_t v;
        memcpy(&v, b + i * 4, 4);
        return v;
    }
    int64_t v;
    memcpy(&v, b + i * 8, 8);
    return v;
}

/* Hash mode: every row's key inside tid2eid and every looked-up expert in [0, E) -- the kernel reads tid2eid and
 * gathers the norm at those places unchecked (out-of-range values read other memory on the NPU; the emulator
 * refuses them as a device fault and writes nothing). */
static int mgk_hash_ok(const mgk_params *p, const pyaclnn_stub_tensor *ids_t, const unsigned char *ids,
                       const pyaclnn_stub_tensor *tid_t, const unsigned char *tid) {
    int64_t keys = tv_dims_product(tid_t->shape, 0, tid_t->ndim) / p->k;
    for (int64_t m = 0; m < p->rows; m++) {
        int64_t key = mgk_int_at(ids, ids_t->dtype, m);
        if (key < 0 || key >= keys) {
            pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "MoeGatingTopK: inputIds[%lld] = %lld is not a row "
                                   "of tid2eid (0 .. %lld)", (long long)m, (long long)key, (long long)(keys - 1));
            return 0;
        }
        for (int64_t j = 0; j < p->k; j++) {
            int64_t e = mgk_int_at(tid, tid_t->dtype, key * p->k + j);
            if (e < 0 || e >= p->cols) {
                pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "MoeGatingTopK: tid2eid[%lld][%lld] = %lld is "
                                       "not an expert (0 .. %lld)", (long long)key, (long long)j, (long long)e,
                                       (long long)(p->cols - 1));
                return 0;
            }
        }
    }
    return 1;
}

/* The TopK mode's experts of one row: the kGroup best groups, then the k best experts in them. */
static void mgk_rank(const mgk_params *p, const float *sc, mg_item *it, mg_item *gi, unsigned char *pick,
                     int32_t *out) {
    int64_t E = p->cols, G = p->groups, per = E / G;
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
    for (int64_t j = 0; j < p->k; j++) out[j] = it[j].idx;
}

void moe_gating_top_k_kernel(const pyaclnn_stub_launch *launch) {
    const mgk_params *p = launch->params;
    if (!tv_launch_views_ok(launch)) return;
    int64_t M = p->rows, E = p->cols, K = p->k, G = p->groups;
    float *x = tv_load_float(&launch->inputs[0]);
    float *b = p->has_bias ? tv_load_float(&launch->inputs[1]) : NULL;
    unsigned char *ids = p->hash ? tv_gather_bytes(&launch->inputs[2]) : NULL;
    unsigned char *tid = p->hash ? tv_gather_bytes(&launch->inputs[3]) : NULL;
    float *y = tv_alloc(M * K, sizeof(float)), *sc = tv_alloc(E, sizeof(float));
    int32_t *idx = tv_alloc(M * K, sizeof(int32_t));
    mg_item *it = tv_alloc(E, sizeof(mg_item)), *gi = tv_alloc(G, sizeof(mg_item));
    unsigned char *pick = tv_alloc(G, 1);
    if (!x || (p->has_bias && !b) || (p->hash && (!ids || !tid)) || !y || !sc || !idx || !it || !gi || !pick) {
        tv_fail_oom(launch);
    } else if (!p->hash || mgk_hash_ok(p, &launch->inputs[2], ids, &launch->inputs[3], tid)) {
        int renorm = p->norm != MGK_SOFTMAX || p->renorm == 1;
        for (int64_t m = 0; m < M; m++) {
            float *n = x + m * E;   /* the row becomes its norm (outOut) */
            if (p->norm == MGK_SIGMOID) {
                for (int64_t j = 0; j < E; j++) n[j] = mgk_sigmoid(n[j]);
            } else if (p->norm == MGK_SOFTPLUS) {
                for (int64_t j = 0; j < E; j++) n[j] = mgk_sqrt_softplus(n[j]);
            } else {
                mg_softmax(n, E, p->recip);
            }
            int32_t *ir = idx + m * K;
            if (p->hash) {
                int64_t key = mgk_int_at(ids, launch->inputs[2].dtype, m);
                for (int64_t j = 0; j < K; j++) ir[j] = (int32_t)mgk_int_at(tid, launch->inputs[3].dtype, key * K + j);
            } else {
                for (int64_t j = 0; j < E; j++) sc[j] = b ? n[j] + b[j] : n[j];
                mgk_rank(p, sc, it, gi, pick, ir);
            }
            float *yr = y + m * K;
            double s = 0;
            for (int64_t j = 0; j < K; j++) {
                yr[j] = n[ir[j]];
                s += yr[j];
            }
            float den = (float)s + p->eps;
            for (int64_t j = 0; j < K; j++) yr[j] = (renorm ? yr[j] / den : yr[j]) * p->factor;
        }
        tv_store_float(&launch->outputs[0], y);
        tv_scatter_bytes(&launch->outputs[1], (const unsigned char *)idx);
        if (p->out_flag) tv_store_float(&launch->outputs[2], x);
    }
    free(x), free(b), free(ids), free(tid), free(y), free(sc), free(idx), free(it), free(gi), free(pick);
}

/* ---- checks ------------------------------------------------------------------------------------------------------ */

static const aclDataType MGK_X[] = {ACL_FLOAT16, ACL_BF16, ACL_FLOAT};
static const aclDataType MGK_IDS[] = {ACL_INT32, ACL_INT64};
static const aclDataType MGK_I32[] = {ACL_INT32};
static const aclDataType MGK_F32[] = {ACL_FLOAT};

/* OP_CHECK_DTYPE_NOT_SUPPORT on a present, non-empty tensor. */
static aclnnStatus mgk_dtype_in(op_call *c, const char *name, const pyaclnn_stub_tensor *t, const aclDataType *list,
                                size_t n) {
    if (!t->present || tv_dims_product(t->shape, 0, t->ndim) == 0 || ew_in_list(t->dtype, list, n))
        return ACLNN_SUCCESS;
    char b[24], all[128];
    return op_failf(c->api, ACLNN_ERR_PARAM_INVALID, "Tensor %s not implemented for %s, should be in dtype support "
                    "list [%s].", name, op_dtype_name(t->dtype, b), ew_dtype_list(list, n, all, sizeof all));
}

/* OP_CHECK_DTYPE_NOT_SAME(x, t) on a present, non-empty t. */
static aclnnStatus mgk_dtype_same(op_call *c, const pyaclnn_stub_tensor *x, const char *name,
                                  const pyaclnn_stub_tensor *t) {
    if (!t->present || tv_dims_product(t->shape, 0, t->ndim) == 0 || t->dtype == x->dtype) return ACLNN_SUCCESS;
    char a[24], b[24];
    return op_failf(c->api, ACLNN_ERR_PARAM_INVALID, "Expected both tensors to have same dtype, but found x %s and %s "
                    "%s.", op_dtype_name(x->dtype, a), name, op_dtype_name(t->dtype, b));
}

#define MGK_TRY(e)                          \
    do {                                    \
        aclnnStatus rc_ = (e);              \
        if (rc_ != ACLNN_SUCCESS) return rc_; \
    } while (0)

/* V1's steps name no inputIds / tid2eid: the step's tensors t[0..n) with those two absent (slots 2 and 3). */
static void mgk_tensors(op_call *c, const op_step *s, int v1, int n, const pyaclnn_stub_tensor **t) {
    static const pyaclnn_stub_tensor absent;   /* present = 0 */
    for (int i = 0, k = 0; i < n; i++)
        t[i] = v1 && (i == 2 || i == 3) ? &absent : op_tensor(c, s, k++);
}

/* mgk_dtypes x bias [inputIds tid2eid] y expertIdx out: the op_apis' CheckDtypeValid in its order; empty tensors are
 * not checked. */
aclnnStatus opc_mgk_dtypes(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *t[7];
    mgk_tensors(c, s, s->np == 5, 7, t);
    const pyaclnn_stub_tensor *x = t[0], *b = t[1], *ids = t[2], *tid = t[3], *y = t[4], *ix = t[5], *o = t[6];
    MGK_TRY(mgk_dtype_in(c, "x", x, MGK_X, 3));
    MGK_TRY(mgk_dtype_in(c, "biasOptional", b, MGK_X, 3));
    MGK_TRY(mgk_dtype_same(c, x, "biasOptional", b));
    MGK_TRY(mgk_dtype_in(c, "inputIdsOptional", ids, MGK_IDS, 2));
    MGK_TRY(mgk_dtype_in(c, "tid2eidOptional", tid, MGK_IDS, 2));
    MGK_TRY(mgk_dtype_in(c, "yOut", y, MGK_X, 3));
    MGK_TRY(mgk_dtype_same(c, x, "yOut", y));
    MGK_TRY(mgk_dtype_in(c, "expertIdxOut", ix, MGK_I32, 1));
    return mgk_dtype_in(c, "outOut", o, MGK_F32, 1);
}

/* The tiling's messages (the EZ error formats of OP_LOGE_FOR_INVALID_*). */
#define MGK_OP "MoeGatingTopK"
#define mgk_value(c, param, actual, expected)                                                                     \
    mg_reject(c, "Parameter %s of operator " MGK_OP " has incorrect value %lld. The correct one should be %s.", param, \
              (long long)(actual), expected)
#define mgk_value_why(c, param, actual, reason)                                                                   \
    mg_reject(c, "Parameter %s of operator " MGK_OP " has incorrect value %lld. Reason: %s.", param,                \
              (long long)(actual), reason)

static aclnnStatus mgk_dim(op_call *c, const char *param, int64_t actual, int64_t expected) {
    return mg_reject(c, "Parameter %s of operator " MGK_OP " has incorrect shape dim %lld. The correct one should be "
                     "%lld.", param, (long long)actual, (long long)expected);
}

static aclnnStatus mgk_equal(op_call *c, const char *param, int64_t actual, int64_t expected) {
    if (actual == expected) return ACLNN_SUCCESS;
    char e[24];
    snprintf(e, sizeof e, "%lld", (long long)expected);
    return mgk_value(c, param, actual, e);
}

/* GetShapeAttrsInfo's dtype checks (reached by empty tensors the op_api skipped). */
static aclnnStatus mgk_tiling_dtypes(op_call *c, const pyaclnn_stub_tensor *t[7]) {
    static const char *const names[7] = {"x", "bias", "input_ids", "tid2eid", "y", "expert_idx", "out"};
    char a[24], b[24];
    for (int i = 0; i < 7; i++) {
        if (!t[i]->present) continue;
        aclDataType dt = t[i]->dtype;
        const char *want = NULL;
        if (i == 0 && !ew_in_list(dt, MGK_X, 3)) want = "float32, half, bf16";
        if ((i == 1 || i == 4) && dt != t[0]->dtype) want = op_dtype_name(t[0]->dtype, b);
        if ((i == 2 || i == 3) && !ew_in_list(dt, MGK_IDS, 2)) want = "int32 or int64";
        if (i == 5 && dt != ACL_INT32) want = "int32";
        if (i == 6 && dt != ACL_FLOAT) want = "float";
        if (want)
            return mg_reject(c, "Parameter %s of operator " MGK_OP " has incorrect dtype %s. The correct one should be "
                             "%s.", names[i], op_dtype_name(dt, a), want);
    }
    return ACLNN_SUCCESS;
}

/* CheckInputShape. */
static aclnnStatus mgk_input_shapes(op_call *c, const pyaclnn_stub_tensor *x, const pyaclnn_stub_tensor *b,
                                    const pyaclnn_stub_tensor *ids, const pyaclnn_stub_tensor *tid, int64_t k, int hash) {
    if (x->ndim != 2) return mgk_dim(c, "x", x->ndim, 2);
    int64_t E = x->shape[1];
    if (b->present) {
        if (b->ndim != 1) return mgk_dim(c, "bias", b->ndim, 1);
        MGK_TRY(mgk_equal(c, "bias dim[0]", b->shape[0], E));
    }
    if (hash) {
        char s[96], why[160];
        if (k > 64) return mgk_value(c, "k", k, "less than or equal to 64 for hash mode");
        if (tid->ndim < 2 || tid->shape[1] != k) {
            snprintf(why, sizeof why, "The 1st axis of input tid2eid must be equal to the value of attribute k, which "
                     "is %lld", (long long)k);
            return mg_reject(c, "Parameter tid2eid of operator " MGK_OP " has incorrect shape %s. Reason: %s.",
                             tv_shape_text(tid->shape, tid->ndim, s, sizeof s), why);
        }
        if (ids->ndim < 1 || ids->shape[0] != x->shape[0]) {
            char xs[64];
            snprintf(why, sizeof why, "The 0th axis of input input_ids must be equal to the 0th axis of input x %s",
                     tv_shape_text(x->shape, x->ndim, xs, sizeof xs));
            return mg_reject(c, "Parameter input_ids of operator " MGK_OP " has incorrect shape %s. Reason: %s.",
                             tv_shape_text(ids->shape, ids->ndim, s, sizeof s), why);
        }
    }
    if (k > E) return mgk_value(c, "k", k, "less than or equal to expert num");
    return ACLNN_SUCCESS;
}

/* CheckOutShape. */
static aclnnStatus mgk_out_shapes(op_call *c, const pyaclnn_stub_tensor *x, const pyaclnn_stub_tensor *y,
                                  const pyaclnn_stub_tensor *ix, const pyaclnn_stub_tensor *o, int64_t k, int flag) {
    if (y->ndim != x->ndim) return mgk_dim(c, "y", y->ndim, x->ndim);
    if (ix->ndim != x->ndim) return mgk_dim(c, "expert_idx", ix->ndim, x->ndim);
    if (o->ndim != x->ndim) return mgk_dim(c, "out", o->ndim, x->ndim);
    MGK_TRY(mgk_equal(c, "y dim[0]", y->shape[0], x->shape[0]));
    MGK_TRY(mgk_equal(c, "expert_idx dim[0]", ix->shape[0], x->shape[0]));
    if (flag) MGK_TRY(mgk_equal(c, "out dim[0]", o->shape[0], x->shape[0]));
    MGK_TRY(mgk_equal(c, "y dim[1]", y->shape[1], k));
    MGK_TRY(mgk_equal(c, "expert_idx dim[1]", ix->shape[1], k));
    if (flag) MGK_TRY(mgk_equal(c, "out dim[1]", o->shape[1], x->shape[1]));
    return ACLNN_SUCCESS;
}

/* CheckAttr. */
static aclnnStatus mgk_attrs(op_call *c, int64_t E, int64_t k, int64_t kg, int64_t gc, int64_t mode, int64_t renorm,
                             int64_t norm, int hash) {
    if (E > 2048) return mgk_value(c, "expert_count", E, "less than or equal to 2048");
    if (k <= 0) return mgk_value(c, "k", k, "greater than 0");
    if (kg <= 0) return mgk_value(c, "k_group", kg, "greater than 0");
    if (kg > gc) return mgk_value(c, "k_group", kg, "less than or equal to group_count");
    if (gc <= 0) return mgk_value(c, "group_count", gc, "greater than 0");
    if (norm != MGK_SOFTMAX && norm != MGK_SIGMOID && norm != MGK_SOFTPLUS)
        return mgk_value(c, "norm_type", norm, "0, 1 or 2");
    if (norm == MGK_SOFTPLUS && gc != 1)
        return mgk_value_why(c, "group_count", gc, "The attr group_count must be 1 when the attr norm_type is 2 (softplus)");
    if (mode != 0 && mode != 1) return mgk_value(c, "group_select_mode", mode, "0 or 1");
    if (renorm != 0 && renorm != 1) return mgk_value(c, "renorm", renorm, "0 or 1");
    if (E % gc != 0) return mgk_value_why(c, "expert_count", E, "expert_count must be divisible by group_count");
    if (hash && !(kg == gc || gc == E))
        return mg_reject(c, "Parameter hash mode of operator " MGK_OP " has incorrect value hash mode only supports "
                         "simplified path. Reason: k_group must equal group_count or group_count must equal "
                         "expert_count.");
    int64_t per = E / gc;
    if (per < 1) return mgk_value(c, "group_expert_count", per, "greater than 0");
    if (mode == 1 && per < 2)
        return mgk_value_why(c, "group_expert_count", per, "group expert count should be greater than 1");
    if (k > op_mul_sat(kg, per)) return mgk_value(c, "k", k, "less than or equal to k_group * group_expert_count");
    int64_t align = (per + 31) / 32 * 32;
    if (gc != 1 && gc != E && kg != gc && op_mul_sat(gc, align) > 2048)
        return mgk_value(c, "group_count * group_expert_count_align", op_mul_sat(gc, align), "less than or equal to 2048");
    return ACLNN_SUCCESS;
}

/* mgk_plan x bias [inputIds tid2eid] k kGroup groupCount groupSelectMode renorm normType outFlag factor eps y expertIdx
 * out: the L0 op's tiling: GetShapeAttrsInfo's dtypes, then DoOpTiling in its
 * order (CheckInputShape, CheckOutShape, CheckAttr). Hash mode when both inputIds and tid2eid are given. */
aclnnStatus opc_mgk_plan(op_call *c, const op_step *s) {
    if (c->nothing) return ACLNN_SUCCESS;   /* every output empty: nnopbase skips the tiling */
    int a = s->np == 16 ? 4 : 2;   /* the first attribute's position (V1 has no inputIds / tid2eid) */
    const pyaclnn_stub_tensor *in[4], *t[7];
    mgk_tensors(c, s, a == 2, 4, in);
    memcpy(t, in, sizeof in);
    for (int i = 0; i < 3; i++) t[4 + i] = op_tensor(c, s, a + 9 + i);
    int64_t k = op_argument(c, s, a)->i, kg = op_argument(c, s, a + 1)->i, gc = op_argument(c, s, a + 2)->i;
    int64_t mode = op_argument(c, s, a + 3)->i, renorm = op_argument(c, s, a + 4)->i, norm = op_argument(c, s, a + 5)->i;
    int flag = op_argument(c, s, a + 6)->i != 0, hash = t[2]->present && t[3]->present;
    MGK_TRY(mgk_tiling_dtypes(c, t));
    MGK_TRY(mgk_input_shapes(c, t[0], t[1], t[2], t[3], k, hash));
    MGK_TRY(mgk_out_shapes(c, t[0], t[4], t[5], t[6], k, flag));
    int64_t E = t[0]->shape[1];
    MGK_TRY(mgk_attrs(c, E, k, kg, gc, mode, renorm, norm, hash));
    mgk_params *p = op_params(c, sizeof *p);
    int grouped = !(gc == 1 || gc == E || kg == gc);   /* the generalized template (else without-group) */
    *p = (mgk_params){t[0]->shape[0], E, k, kg, gc, mode, norm, renorm, flag, t[1]->present, hash, grouped,
                      (float)op_argument(c, s, a + 7)->d, (float)op_argument(c, s, a + 8)->d};
    if (p->rows == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}
