/*
 * aclnnAddRmsNormQuant and aclnnAddRmsNormQuantV2 (hicann/ops-nn norm/add_rms_norm_quant, add_rms_norm_quant_v2;
 * definitions and the vendor-source notes in add_rms_norm_quant.toml).
 *
 * Per row of the trailing gamma dims (N elements), the kernels' fp32 steps:
 *   Atlas A2 (op_kernel/add_rms_norm_quant.h, template <TX, TScale, TOffset, RN, A, PT>):
 *     x: fp16 (not PT) a half Add, widened; bf16 or PT: x1 + x2 in fp32, xOut its RINT cast (with beta and not PT the
 *     norm then uses that cast widened again); q = (x * x) * avg, S = sum q, rstd = 1 / sqrt(S + eps);
 *     y: fp16 (not PT) fp16(gamma * fp16(x * rstd)) widened; else gamma * (x * rstd) in fp32; rmsNormOut its cast (RN);
 *     y + beta; y2 = y / s2 (or * s2) + zp2 when scales2 is given; y1 likewise, or (PT) y * fp32(1 / s1[0]) + zp1[0].
 *   Ascend 950 (arch35/add_rms_norm_quant_regbase_common.h ComputeY): x = x1 + x2 in fp32 (xOut its cast);
 *     rstd by NormCommon's Newton-Raphson (arnq_newton_rstd); y = (x * rstd) * gamma, rmsNormOut its cast, + beta,
 *     / or * scales, + zero points; y2 when scales2 or zeroPoints2 is given.
 *   Stores: INT8 RINT to int32, to fp16, TRUNC (saturating; RoundFloat2Int8 / ComputeY's cast chain); FP8 RINT and
 *     HIFLOAT8 ROUND, saturating (castTraitFp322Fp8 / castTraitFp322Hifp8), NaN to 0.
 * S is the float64 sum of the fp32 terms rounded once to fp32: the kernels' reduction trees depend on the tiling
 * template (class c, the figure in the .toml).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/dtype.h"
#include "kernels/view.h"
#include "numerics/numerics.h"
#include "opbase/checks.h"
#include "ops/add_rms_norm_dynamic_quant/arnq.h"
#include "ops_decls.h"

typedef struct {
    int64_t rows, cols;
    float eps, avg;
    int soc950, div, pt, rewiden;      /* pt: Atlas A2's per-tensor template (V2 L0 op) */
    int y2, v1_path, checked;          /* y2: y2Out written; checked: arq_v2_check picked the path */
    aclDataType dt, ydt;
} arq_params;

enum { I_X1, I_X2, I_G, I_S1, I_S2, I_Z1, I_Z2, I_B };
enum { O_Y1, O_Y2, O_X, O_R };

static float arq_round(float v, aclDataType dt) {
    return dt == ACL_FLOAT ? v : (float)ew_cast((ew_value){v, 0}, ACL_FLOAT, dt).f;
}

/* One fp32 value to the output code (the kernels' casts). */
static uint8_t arq_code(float v, aclDataType ydt) {
    switch (ydt) {
    case ACL_FLOAT8_E4M3FN: return num_f32_to_fp8_e4m3fn(v, NUM_RINT | NUM_SAT | NUM_NAN_TO_ZERO);
    case ACL_FLOAT8_E5M2: return num_f32_to_fp8_e5m2(v, NUM_RINT | NUM_SAT | NUM_NAN_TO_ZERO);
    case ACL_HIFLOAT8: return num_f32_to_hif8(v, NUM_ROUND | NUM_SAT | NUM_NAN_TO_ZERO);
    default: return (uint8_t)num_f32_to_int8(v, NUM_RINT | NUM_SAT);
    }
}

/* An optional input widened to fp32 (int32 zero points by RINT, as the kernels' casts), NULL when absent. */
static float *arq_load(const pyaclnn_stub_tensor *t, int *oom) {
    if (!t->present) return NULL;
    double *d = tv_load_double(t);
    int64_t n = pyaclnn_stub_numel(t);
    float *f = tv_alloc(n > 0 ? n : 1, sizeof(float));
    if (!d || !f) {
        *oom = 1;
        free(d), free(f);
        return NULL;
    }
    for (int64_t i = 0; i < n; i++) f[i] = (float)d[i];
    free(d);
    return f;
}

/* v (or v / s, v * s) + zp, elementwise over a row, into codes. */
static void arq_quant_row(const arq_params *p, const float *y, const float *s, const float *z, uint8_t *out) {
    int64_t N = p->cols;
    if (p->pt) {
        float inv = 1.0f / s[0], zp = z ? z[0] : 0.0f;
        for (int64_t j = 0; j < N; j++) {
            float t = y[j] * inv;
            if (z) t = t + zp;
            out[j] = arq_code(t, p->ydt);
        }
        return;
    }
    for (int64_t j = 0; j < N; j++) {
        float t = y[j];
        if (s) t = p->div ? t / s[j] : t * s[j];
        if (z) t = t + z[j];
        out[j] = arq_code(t, p->ydt);
    }
}

static float arq_rstd(const arq_params *p, const float *x, float *q) {
    int64_t N = p->cols;
    double acc = 0;
    if (p->soc950) {
        for (int64_t j = 0; j < N; j++) q[j] = x[j] * x[j], acc += q[j];
        return arnq_newton_rstd((float)acc, p->avg, p->eps, 0);
    }
    for (int64_t j = 0; j < N; j++) {
        float sq = x[j] * x[j];
        q[j] = sq * p->avg;
        acc += q[j];
    }
    float t = (float)acc + p->eps;
    return 1.0f / sqrtf(t);
}

void add_rms_norm_quant_kernel(const pyaclnn_stub_launch *launch) {
    const arq_params *p = launch->params;
    if (!tv_launch_views_ok(launch)) return;
    int64_t M = p->rows, N = p->cols;
    int oom = 0, a2_half = !p->soc950 && p->dt == ACL_FLOAT16 && !p->pt;
    const pyaclnn_stub_tensor *in = launch->inputs, *out = launch->outputs;
    float *x1 = tv_load_float(&in[I_X1]), *x2 = tv_load_float(&in[I_X2]), *g = tv_load_float(&in[I_G]);
    float *s1 = arq_load(&in[I_S1], &oom), *s2 = arq_load(&in[I_S2], &oom), *z1 = arq_load(&in[I_Z1], &oom);
    float *z2 = arq_load(&in[I_Z2], &oom), *b = arq_load(&in[I_B], &oom);
    float *y = tv_alloc(N, sizeof(float)), *q = tv_alloc(N, sizeof(float));
    float *rn = out[O_R].present ? tv_alloc(M * N, sizeof(float)) : NULL;
    uint8_t *c1 = tv_alloc(M * N, 1), *c2 = p->y2 ? tv_alloc(M * N, 1) : NULL;
    if (oom || !x1 || !x2 || !g || !y || !q || !c1 || (p->y2 && !c2) || (out[O_R].present && !rn)) {
        tv_fail_oom(launch);
    } else {
        if (!p->soc950 && !p->y2) z2 = (free(z2), NULL);   /* A2: hasZeroPoints2 only with scales2 */
        for (int64_t m = 0; m < M; m++) {
            float *x = x1 + m * N;   /* x overwrites x1: the fp32 x the norm uses, xOut its cast */
            const float *x2r = x2 + m * N;
            for (int64_t j = 0; j < N; j++) x[j] = a2_half ? arq_round(x[j] + x2r[j], ACL_FLOAT16) : x[j] + x2r[j];
            /* A2 bf16 with beta: the norm reads x back from its bf16 cast (xOut, the same cast, unchanged) */
            if (p->rewiden)
                for (int64_t j = 0; j < N; j++) x[j] = arq_round(x[j], p->dt);
            float rstd = arq_rstd(p, x, q);
            for (int64_t j = 0; j < N; j++) y[j] = x[j] * rstd;
            for (int64_t j = 0; j < N; j++)
                y[j] = a2_half ? arq_round(g[j] * arq_round(y[j], ACL_FLOAT16), ACL_FLOAT16) : g[j] * y[j];
            if (rn) memcpy(rn + m * N, y, (size_t)N * sizeof(float));
            if (b)
                for (int64_t j = 0; j < N; j++) y[j] = y[j] + b[j];
            if (p->y2) {
                arq_params p2 = *p;
                p2.pt = 0;
                arq_quant_row(&p2, y, s2, z2, c2 + m * N);
            }
            arq_quant_row(p, y, s1, z1, c1 + m * N);
        }
        tv_scatter_bytes(&out[O_Y1], c1);
        if (p->y2) tv_scatter_bytes(&out[O_Y2], c2);
        if (out[O_X].present) tv_store_float(&out[O_X], x1);
        if (rn) tv_store_float(&out[O_R], rn);
    }
    free(x1), free(x2), free(g), free(s1), free(s2), free(z1), free(z2), free(b), free(y), free(q), free(rn);
    free(c1), free(c2);
}

/* ---- steps ---------------------------------------------------------------------------------------- */

/* arq_empty x1 gamma y2Out: the op_api's early success on an empty x1, gamma or y2Out. */
aclnnStatus opc_arq_empty(op_call *c, const op_step *s) {
    for (int k = 0; k < 3; k++)
        if (pyaclnn_stub_numel(op_tensor(c, s, k)) == 0) c->nothing = c->done = 1;
    return ACLNN_SUCCESS;
}

#define ARQ_INVALID(...) op_invalidf(c->api, __VA_ARGS__)

/* OP_CHECK_DTYPE_NOT_SUPPORT on a dtype (Atlas A2's V2 checks read SpecialTransform's casts). */
static aclnnStatus arq_dtype_in(op_call *c, const char *name, aclDataType dt, const aclDataType *l, size_t n) {
    if (ew_in_list(dt, l, n)) return ACLNN_SUCCESS;
    char b[24], all[256];
    return ARQ_INVALID("Tensor %s not implemented for %s, should be in dtype support list [%s].", name,
                       op_dtype_name(dt, b), ew_dtype_list(l, n, all, sizeof all));
}

static aclnnStatus arq_dtype_is(op_call *c, const char *name, aclDataType dt, aclDataType want) {
    if (dt == want) return ACLNN_SUCCESS;
    char a[24], b[24];
    return ARQ_INVALID("Tensor %s expected dtype is %s but found %s.", name, op_dtype_name(want, a), op_dtype_name(dt, b));
}

static aclnnStatus arq_dtype_same(op_call *c, const char *na, aclDataType a, const char *nb, aclDataType b) {
    if (a == b) return ACLNN_SUCCESS;
    char x[24], y[24];
    return ARQ_INVALID("Tensor %s dtype %s and tensor %s dtype %s should be same.", na, op_dtype_name(a, x), nb,
                       op_dtype_name(b, y));
}

static aclnnStatus arq_dims(op_call *c, const char *name, const pyaclnn_stub_tensor *t, int most, int least) {
    if (!t->present) return ACLNN_SUCCESS;
    if (most && t->ndim > 8) return ARQ_INVALID("The %s tensor cannot be larger than %lld dimensions.", name, 8LL);
    if (least && t->ndim < 1) return ARQ_INVALID("The %s tensor must have at least %lld dimensions.", name, 1LL);
    return ACLNN_SUCCESS;
}

static int arq_same_shape(const pyaclnn_stub_tensor *a, const pyaclnn_stub_tensor *b) {
    if (a->ndim != b->ndim) return 0;
    for (int64_t d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d]) return 0;
    return 1;
}

static aclnnStatus arq_shape_eq(op_call *c, const char *na, const pyaclnn_stub_tensor *a, const char *nb,
                                const pyaclnn_stub_tensor *b) {
    if (!a->present || !b->present || arq_same_shape(a, b)) return ACLNN_SUCCESS;
    char x[200], y[200];
    return ARQ_INVALID("Expected tensor for %s to have same size as tensor for %s, but %s does not equal %s.", na, nb,
                       tv_shape_text(a->shape, a->ndim, x, sizeof x), tv_shape_text(b->shape, b->ndim, y, sizeof y));
}

/* CheckShapeGammaX: gamma's dims the trailing dims of x1. */
static aclnnStatus arq_gamma_x(op_call *c, const pyaclnn_stub_tensor *x, const pyaclnn_stub_tensor *g) {
    int64_t former = x->ndim - g->ndim;
    if (former < 0)
        return ARQ_INVALID("The gamma tensor's dim %lld should not greater than x1 tensor's dim %lld.",
                           (long long)g->ndim, (long long)x->ndim);
    for (int64_t i = 0; i < g->ndim; i++)
        if (x->shape[former + i] != g->shape[i])
            return ARQ_INVALID("The gamma tensor's shape dim %lld is %lld, is not equal to x1 %lld.", (long long)i,
                               (long long)g->shape[i], (long long)x->shape[former + i]);
    return ACLNN_SUCCESS;
}

static const aclDataType L_X950[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
static const aclDataType L_ZP950[] = {ACL_INT32, ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
static const aclDataType L_Y950[] = {ACL_INT8, ACL_HIFLOAT8, ACL_FLOAT8_E5M2, ACL_FLOAT8_E4M3FN};
static const aclDataType L_XA2[] = {ACL_FLOAT16, ACL_BF16};
static const aclDataType L_SA2[] = {ACL_FLOAT, ACL_BF16};
static const aclDataType L_ZA2[] = {ACL_INT32, ACL_BF16};
#define N_OF(a) (sizeof a / sizeof a[0])

enum { V_X1, V_X2, V_G, V_S1, V_S2, V_Z1, V_Z2, V_B, V_DIV, V_Y1, V_Y2, V_XO, V_RO };

typedef struct {
    const pyaclnn_stub_tensor *t[13];
    aclDataType s1dt, z1dt;   /* after SpecialTransform */
} arq_v2_in;

#define TRY(e)                          \
    do {                                \
        aclnnStatus rc_ = (e);          \
        if (rc_) return rc_;            \
    } while (0)
#define DT(k) (v->t[k]->dtype)
#define HAS(k) (v->t[k]->present)

/* CheckShapeDimV2: ranks and the shapes against x1 (both SoCs). */
static aclnnStatus arq_v2_shapes(op_call *c, const arq_v2_in *v) {
    static const char *const nm[] = {"x1", "x2", "gamma", "scales1"};
    for (int k = V_X1; k <= V_S1; k++) TRY(arq_dims(c, nm[k], v->t[k], 1, 0));
    TRY(arq_dims(c, "betaOptional", v->t[V_B], 1, 0));
    TRY(arq_dims(c, "zeroPoints1Optional", v->t[V_Z1], 1, 0));
    TRY(arq_dims(c, "y1Out", v->t[V_Y1], 1, 0));
    TRY(arq_shape_eq(c, "x1", v->t[V_X1], "y1Out", v->t[V_Y1]));
    TRY(arq_shape_eq(c, "x1", v->t[V_X1], "y2Out", v->t[V_Y2]));
    if (HAS(V_RO)) {
        TRY(arq_dims(c, "rmsNormOut", v->t[V_RO], 1, 0));
        TRY(arq_shape_eq(c, "x1", v->t[V_X1], "rmsNormOut", v->t[V_RO]));
    }
    if (HAS(V_XO)) {
        TRY(arq_dims(c, "xOut", v->t[V_XO], 1, 0));
        TRY(arq_shape_eq(c, "x1", v->t[V_X1], "xOut", v->t[V_XO]));
    }
    return ACLNN_SUCCESS;
}

/* CheckParamsV2: the mode (Atlas A2: beta with xOut or rmsNormOut without, else 161001), dtypes per SoC, shapes. */
static aclnnStatus arq_v2_params(op_call *c, const arq_v2_in *v, int soc950) {
    if (!soc950 && !((HAS(V_B) && HAS(V_XO) && !HAS(V_RO)) || (!HAS(V_XO) && HAS(V_RO) && !HAS(V_B)))) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, c->api, "betaOptional with xOut, or rmsNormOut without xOut and "
                            "betaOptional, is needed");
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    if (soc950) {
        TRY(arq_dtype_in(c, "x1", DT(V_X1), L_X950, 3));
        TRY(arq_dtype_in(c, "x2", DT(V_X2), L_X950, 3));
        TRY(arq_dtype_in(c, "gamma", DT(V_G), L_X950, 3));
        TRY(arq_dtype_in(c, "scales1", DT(V_S1), L_X950, 3));
        if (HAS(V_B)) TRY(arq_dtype_in(c, "betaOptional", DT(V_B), L_X950, 3));
        if (HAS(V_Z1)) TRY(arq_dtype_in(c, "zeroPoints1Optional", DT(V_Z1), L_ZP950, 4));
        if (HAS(V_S2)) TRY(arq_dtype_in(c, "scales2Optional", DT(V_S2), L_X950, 3));
        if (HAS(V_Z2)) TRY(arq_dtype_in(c, "zeroPoints2Optional", DT(V_Z2), L_ZP950, 4));
        TRY(arq_dtype_same(c, "x1", DT(V_X1), "x2", DT(V_X2)));
        TRY(arq_dtype_same(c, "x1", DT(V_X1), "gamma", DT(V_G)));
        TRY(arq_dtype_in(c, "y1Out", DT(V_Y1), L_Y950, 4));
        TRY(arq_dtype_in(c, "y2Out", DT(V_Y2), L_Y950, 4));
        if (HAS(V_RO)) TRY(arq_dtype_in(c, "rmsNormOut", DT(V_RO), L_X950, 3));
        if (HAS(V_XO)) TRY(arq_dtype_in(c, "xOut", DT(V_XO), L_X950, 3));
    } else {
        TRY(arq_dtype_in(c, "x1", DT(V_X1), L_XA2, 2));
        TRY(arq_dtype_in(c, "x2", DT(V_X2), L_XA2, 2));
        TRY(arq_dtype_in(c, "gamma", DT(V_G), L_XA2, 2));
        TRY(arq_dtype_in(c, "scales1", v->s1dt, L_SA2, 2));
        if (HAS(V_B)) TRY(arq_dtype_in(c, "betaOptional", DT(V_B), L_XA2, 2));
        if (HAS(V_Z1)) TRY(arq_dtype_in(c, "zeroPoints1Optional", v->z1dt, L_ZA2, 2));
        TRY(arq_dtype_same(c, "x1", DT(V_X1), "x2", DT(V_X2)));
        TRY(arq_dtype_same(c, "x1", DT(V_X1), "gamma", DT(V_G)));
        TRY(arq_dtype_is(c, "y1Out", DT(V_Y1), ACL_INT8));
        TRY(arq_dtype_is(c, "y2Out", DT(V_Y2), ACL_INT8));
        if (HAS(V_RO)) TRY(arq_dtype_in(c, "rmsNormOut", DT(V_RO), L_XA2, 2));
        if (HAS(V_XO)) TRY(arq_dtype_in(c, "xOut", DT(V_XO), L_XA2, 2));
    }
    return arq_v2_shapes(c, v);
}

/* Atlas A2's V1 path of the V2 op: CheckParams' 910B branch in its order. */
static aclnnStatus arq_v2_as_v1(op_call *c, const arq_v2_in *v) {
    if (HAS(V_RO)) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, c->api, "The rmsNormOut tensor should be nullptr in computeV1.");
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    static const int in4[] = {V_X2, V_X1, V_S1, V_G};
    static const char *const nin4[] = {"x2", "x1", "scales1", "gamma"};
    for (int most = 1; most >= 0; most--)
        for (int k = 0; k < 4; k++) TRY(arq_dims(c, nin4[k], v->t[in4[k]], most, !most));
    static const int opt[] = {V_Z2, V_Z1, V_S2, V_B};
    static const char *const nopt[] = {"zeroPoints2Optional", "zeroPoints1Optional", "scales2Optional", "betaOptional"};
    for (int k = 0; k < 4; k++) TRY(arq_dims(c, nopt[k], v->t[opt[k]], 1, 1));
    static const int outs[] = {V_XO, V_Y2, V_Y1};
    static const char *const nouts[] = {"xOut", "y2Out", "y1Out"};
    for (int most = 1; most >= 0; most--)
        for (int k = 0; k < 3; k++) TRY(arq_dims(c, nouts[k], v->t[outs[k]], most, !most));
    TRY(arq_dtype_in(c, "scales1", v->s1dt, L_SA2, 2));
    if (HAS(V_Z2)) TRY(arq_dtype_in(c, "zeroPoints2Optional", DT(V_Z2), L_ZA2, 2));
    if (HAS(V_Z1)) TRY(arq_dtype_in(c, "zeroPoints1Optional", v->z1dt, L_ZA2, 2));
    if (HAS(V_S2)) TRY(arq_dtype_in(c, "scales2Optional", DT(V_S2), L_SA2, 2));
    TRY(arq_dtype_in(c, "gamma", DT(V_G), L_XA2, 2));
    TRY(arq_dtype_in(c, "x1", DT(V_X1), L_XA2, 2));
    TRY(arq_dtype_in(c, "x2", DT(V_X2), L_XA2, 2));
    if (HAS(V_B)) TRY(arq_dtype_in(c, "betaOptional", DT(V_B), L_XA2, 2));
    TRY(arq_dtype_in(c, "xOut", DT(V_XO), L_XA2, 2));
    TRY(arq_dtype_is(c, "y2Out", DT(V_Y2), ACL_INT8));
    TRY(arq_dtype_is(c, "y1Out", DT(V_Y1), ACL_INT8));
    TRY(arq_shape_eq(c, "x1", v->t[V_X1], "x2", v->t[V_X2]));
    TRY(arq_shape_eq(c, "x1", v->t[V_X1], "y1Out", v->t[V_Y1]));
    TRY(arq_shape_eq(c, "x1", v->t[V_X1], "y2Out", v->t[V_Y2]));
    TRY(arq_shape_eq(c, "x1", v->t[V_X1], "xOut", v->t[V_XO]));
    TRY(arq_shape_eq(c, "gamma", v->t[V_G], "scales1", v->t[V_S1]));
    TRY(arq_shape_eq(c, "gamma", v->t[V_G], "scales2Optional", v->t[V_S2]));
    TRY(arq_shape_eq(c, "gamma", v->t[V_G], "zeroPoints1Optional", v->t[V_Z1]));
    TRY(arq_shape_eq(c, "gamma", v->t[V_G], "zeroPoints2Optional", v->t[V_Z2]));
    TRY(arq_shape_eq(c, "gamma", v->t[V_G], "betaOptional", v->t[V_B]));
    return arq_gamma_x(c, v->t[V_X1], v->t[V_G]);
}

static int arq_one(const pyaclnn_stub_tensor *t) { return t->present && t->ndim == 1 && t->shape[0] == 1; }

/* CheckSupportV2 on Atlas A2: the V2 L0 op's per-tensor template. */
static int arq_a2_supports_v2(const arq_v2_in *v, int div) {
    const pyaclnn_stub_tensor *g = v->t[V_G], *x = v->t[V_X1];
    if (HAS(V_Z2) || HAS(V_S2) || !div) return 0;
    if (g->ndim == 1 && g->shape[0] == 1 && !HAS(V_B) && !HAS(V_RO)) return 0;
    int64_t last = x->ndim ? x->shape[x->ndim - 1] : -1;
    int gamma_ok = (g->ndim == 2 && g->shape[0] == 1 && g->shape[1] == last) || (g->ndim == 1 && g->shape[0] == last);
    int beta_ok = (!HAS(V_B) && HAS(V_RO) && !HAS(V_XO)) || (HAS(V_B) && !HAS(V_RO) && HAS(V_XO));
    return gamma_ok && arq_one(v->t[V_S1]) && arq_one(v->t[V_Z1]) && beta_ok;
}

/* arq_v2_check x1 x2 gamma scales1 scales2 zp1 zp2 beta divMode y1 y2 xOut rmsNormOut: the V2 op_api after its
 * early success: SpecialTransform's casts (Atlas A2), CheckSupportV2's path and that path's checks. */
aclnnStatus opc_arq_v2_check(op_call *c, const op_step *s) {
    arq_v2_in in, *v = &in;
    for (int k = 0; k < 13; k++) in.t[k] = op_tensor(c, s, k);
    int soc950 = ew_soc_is_950(), div = (int)op_argument(c, s, V_DIV)->i;
    in.s1dt = !soc950 && DT(V_S1) == ACL_FLOAT16 ? ACL_FLOAT : DT(V_S1);
    in.z1dt = !soc950 && HAS(V_Z1) && DT(V_Z1) == ACL_INT8 ? ACL_INT32 : DT(V_Z1);
    arq_params *p = op_params(c, sizeof *p);
    p->checked = 1;
    if (soc950) return arq_v2_params(c, v, 1);
    if (arq_a2_supports_v2(v, div)) {
        p->pt = 1;
        return arq_v2_params(c, v, 0);
    }
    if (!HAS(V_XO)) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, c->api, "xOut must not be nullptr");
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    p->v1_path = 1;
    return arq_v2_as_v1(c, v);
}

/* The L0 ops' kernels (the op definitions' dtype rows): x, scales, zero points. */
static int arq_row_ok(int soc950, aclDataType x, aclDataType sc, aclDataType zp, int has_zp) {
    static const aclDataType A2[][3] = {{ACL_FLOAT16, ACL_FLOAT, ACL_INT32}, {ACL_BF16, ACL_BF16, ACL_BF16},
                                        {ACL_BF16, ACL_FLOAT, ACL_INT32}};
    static const aclDataType R950[][3] = {{ACL_FLOAT16, ACL_FLOAT, ACL_INT32}, {ACL_BF16, ACL_FLOAT, ACL_INT32},
                                          {ACL_FLOAT, ACL_FLOAT, ACL_FLOAT},   {ACL_FLOAT16, ACL_FLOAT16, ACL_FLOAT16},
                                          {ACL_BF16, ACL_BF16, ACL_BF16},      {ACL_FLOAT16, ACL_FLOAT, ACL_FLOAT},
                                          {ACL_BF16, ACL_FLOAT, ACL_FLOAT}};
    const aclDataType(*rows)[3] = soc950 ? R950 : A2;
    int n = soc950 ? 7 : 3;
    for (int i = 0; i < n; i++)
        if (rows[i][0] == x && rows[i][1] == sc && (!has_zp || rows[i][2] == zp)) return 1;
    return 0;
}

/* the L0 op's rejection (561103) with a printf-formatted message */
#define arq_inner(c, ...) op_failf((c)->api, ACLNN_ERR_INNER_NULLPTR, __VA_ARGS__)

/* arq_plan x1 x2 gamma scales1 scales2 zp1 zp2 epsilon divMode y1 y2 xOut [beta rmsNormOut] N (1: V1, 2: V2): the L0
 * op -- its kernel's dtype row, the tiling's shape checks (561103), the kernel's parameters. */
aclnnStatus opc_arq_plan(op_call *c, const op_step *s) {
    if (c->done || c->nothing) return ACLNN_SUCCESS;
    enum { X1, X2, G, S1, S2, Z1, Z2, EPS, DIV, Y1, Y2, XO, B, RO };
    const pyaclnn_stub_tensor *t[14] = {0};
    static const pyaclnn_stub_tensor absent;
    for (int k = 0; k < 14; k++) t[k] = k < s->np && k != EPS && k != DIV ? op_tensor(c, s, k) : &absent;
    arq_params prev = {0};
    if (c->params_size == sizeof(arq_params)) prev = *(arq_params *)c->params;
    int soc950 = ew_soc_is_950(), v2op = s->n == 2, div = (int)op_argument(c, s, DIV)->i;
    aclDataType xdt = t[X1]->dtype;
    aclDataType sdt = !soc950 && v2op && t[S1]->dtype == ACL_FLOAT16 ? ACL_FLOAT : t[S1]->dtype;
    aclDataType zdt = !soc950 && v2op && t[Z1]->present && t[Z1]->dtype == ACL_INT8 ? ACL_INT32 : t[Z1]->dtype;
    char b1[200], b2[200], d1[24], d2[24], d3[24];
    /* kernel selection: every x-typed tensor of x1's dtype, the second scales / zero points of the first's */
    const int xs[] = {X2, G, XO, B, RO};
    int row = arq_row_ok(soc950, xdt, sdt, zdt, t[Z1]->present);
    for (int k = 0; k < 5; k++) row = row && (!t[xs[k]]->present || t[xs[k]]->dtype == xdt);
    row = row && (!t[S2]->present || t[S2]->dtype == t[S1]->dtype) && (!t[Z2]->present || !t[Z1]->present ||
                                                                    t[Z2]->dtype == t[Z1]->dtype);
    row = row && (soc950 || (t[Y1]->dtype == ACL_INT8 && t[Y2]->dtype == ACL_INT8)) && t[Y1]->dtype == t[Y2]->dtype;
    if (!row)
        return arq_inner(c, "AddRmsNormQuant%s: no kernel for x1 %s, scales1 %s, zeroPoints1 %s (the op definition's "
                         "dtype rows)", v2op && !prev.v1_path ? "V2" : "", op_dtype_name(xdt, d1),
                         op_dtype_name(sdt, d2), t[Z1]->present ? op_dtype_name(zdt, d3) : "none");
    /* the tiling's shapes: x-shaped tensors, gamma the trailing dims of x1, one scale per gamma element */
    const int xshaped[] = {X2, Y1, Y2, XO, RO};
    const char *const xnames[] = {"x2", "y1", "y2", "x", "rmsNormOut"};
    int y2 = soc950 ? (t[S2]->present || (v2op && t[Z2]->present)) : t[S2]->present;
    for (int k = 0; k < 5; k++) {
        if (!t[xshaped[k]]->present || (xshaped[k] == Y2 && !y2) || arq_same_shape(t[X1], t[xshaped[k]])) continue;
        return arq_inner(c, "x1 %s and %s %s: the shapes must be the same", tv_shape_text(t[X1]->shape, t[X1]->ndim, b1,
                         sizeof b1), xnames[k], tv_shape_text(t[xshaped[k]]->shape, t[xshaped[k]]->ndim, b2, sizeof b2));
    }
    int64_t former = t[X1]->ndim - t[G]->ndim;
    int bc = former >= 0;
    for (int64_t i = 0; bc && i < t[G]->ndim; i++) bc = t[G]->shape[i] == t[X1]->shape[former + i];
    if (!bc)
        return arq_inner(c, "x1 %s and gamma %s: gamma's shape must be the trailing dims of x1's",
                         tv_shape_text(t[X1]->shape, t[X1]->ndim, b1, sizeof b1),
                         tv_shape_text(t[G]->shape, t[G]->ndim, b2, sizeof b2));
    int64_t cols = pyaclnn_stub_numel(t[G]);
    int64_t want = prev.pt ? 1 : cols;
    const int qs[] = {S1, S2, Z1, Z2, B};
    const char *const qn[] = {"scales1", "scales2", "zeroPoints1", "zeroPoints2", "beta"};
    for (int k = 0; k < 5; k++) {
        const pyaclnn_stub_tensor *q = t[qs[k]];
        int64_t need = qs[k] == B ? cols : want;
        if (q->present && pyaclnn_stub_numel(q) != need)
            return arq_inner(c, "%s %s has %lld elements, %lld needed (gamma %s)", qn[k],
                             tv_shape_text(q->shape, q->ndim, b1, sizeof b1), (long long)pyaclnn_stub_numel(q),
                             (long long)need, tv_shape_text(t[G]->shape, t[G]->ndim, b2, sizeof b2));
    }
    arq_params *p = op_params(c, sizeof *p);
    *p = prev;
    p->rows = tv_dims_product(t[X1]->shape, 0, former);
    p->cols = cols;
    p->eps = (float)op_argument(c, s, EPS)->d;
    p->avg = cols ? 1.0f / (float)cols : 0.0f;
    p->soc950 = soc950;
    p->div = div;
    p->dt = xdt;
    p->ydt = t[Y1]->dtype;
    p->y2 = y2 && t[Y2]->present;
    p->rewiden = !soc950 && !p->pt && xdt == ACL_BF16 && t[B]->present;
    if (p->rows * p->cols == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}
