/*
 * aclnnGroupedDynamicMxQuant / aclnnGroupedDynamicMxQuantV2: MX quantisation of x [m, n] in blocks
 * of 32 rows per column, counted from the start of each row group, to FP8 / FP4 with E8M0 scales
 * (hicann/ops-nn quant/grouped_dynamic_mx_quant, code generation G2 = CANN 9.2 / master).
 * Behaviour as pinned down in /work/shared/spec/grouped_dynamic_mx_quant.md: validation §2 here,
 * the kernel §3-§4 in gmq_kernel.c (+ gmq_plan.c, gmq_tile.c, gmq_rows.h, gmq_scale.h and
 * numerics/num_inline.h).
 *
 * Stub-only behaviour, where the real toolkit crashes or is undefined:
 *  - workspaceSize / executor NULL: the vendor writes through them unchecked; here 161001.
 *  - arguments only the kernel tiling rejects (FP8 with roundMode round/floor, FP4 with scaleAlg 1,
 *    FP8 with scaleAlg 2, FP4 with a dstTypeMax out of range, FP4 with odd n): the vendor's op_api
 *    then hands null tensors to ViewCopy and the process aborts; here 561103 and a message naming
 *    the rule (spec correction 1).
 *  - invalid groupIndex values (negative, decreasing, beyond m): clamped, computed, and reported as
 *    a device error at the next synchronisation (gmq_plan.c).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "opbase/checks.h"
#include "aclnnop/aclnn_grouped_dynamic_mx_quant.h"
#include "aclnnop/aclnn_grouped_dynamic_mx_quant_v2.h"
#include "numerics.h"
#include "gmq_kernel.h"
#include "kernels/device.h"

#define TILING_WORKSPACE 32   /* bytes of user workspace the tiling asks for (spec §6) */

typedef struct {
    const char *api;          /* public phase-1 name, for messages */
    int version;              /* 1 or 2                            */
    const aclTensor *tensors[4];   /* x, groupIndex, y, mxscale       */
    const char *round_mode;
    int64_t dst_type, blocksize, scale_alg;
    double dst_type_max;
} gmq_call;

enum { T_X, T_GROUP_INDEX, T_Y, T_MXSCALE };
static const char *const TENSOR_NAMES[] = {"x", "groupIndex", "y", "mxscale"};

static int is_fp4(aclDataType t) { return t == ACL_FLOAT4_E2M1 || t == ACL_FLOAT4_E1M2; }
static int is_fp8(aclDataType t) { return t == ACL_FLOAT8_E4M3FN || t == ACL_FLOAT8_E5M2; }

static aclnnStatus invalid(const gmq_call *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static aclnnStatus invalid(const gmq_call *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    pyaclnn_stub_vreport(ACLNN_ERR_PARAM_INVALID, c->api, fmt, ap);
    va_end(ap);
    return ACLNN_ERR_PARAM_INVALID;
}

/* ---- attributes the tiling derives from dstTypeMax (spec §2.2, §4.3, correction 2) ---------- */

/* Ops::Base::IsFloatEqual: NaN never equal; with an infinity, equal iff the signs match;
 * otherwise |a - b| <= FLT_EPSILON. */
static int float_equal(float a, float b) {
    if (isnan(a) || isnan(b)) return 0;
    if (isinf(a) || isinf(b)) return signbit(a) == signbit(b);
    return fabsf(a - b) <= 1.1920928955078125e-7f;
}

static double dst_max_of(aclDataType y) {
    switch (y) {
    case ACL_FLOAT8_E5M2: return 57344.0;
    case ACL_FLOAT8_E4M3FN: return 448.0;
    case ACL_FLOAT4_E2M1: return 6.0;
    default: return 1.75;   /* FLOAT4_E1M2 */
    }
}

static int dst_type_max_template(aclDataType y, float d) {
    if ((float_equal(d, 0.0f) && y == ACL_FLOAT4_E2M1) || float_equal(d, 6.0f)) return 1;
    if (float_equal(d, 7.0f)) return 2;
    if (float_equal(d, 1.875f)) return 3;
    return 0;
}

static float inv_dst_type_max(aclDataType y, float d) {
    double divisor = float_equal(d, 0.0f) ? dst_max_of(y) : (double)d;
    return (float)(1.0 / divisor);
}

/* ---- validation, in the vendor's order (spec §2.1) ---------------------------------------------- */

/* Rows 3-10: dtypes and attributes. */
static aclnnStatus check_dtypes_and_attributes(const gmq_call *c, const pyaclnn_stub_tensor t[4]) {
    char b1[24], b2[24];
    int v2 = c->version == 2;
    if (t[T_X].dtype != ACL_FLOAT16 && t[T_X].dtype != ACL_BF16)
        return invalid(c, "x dtype %s is not supported (FLOAT16 or BFLOAT16)", op_dtype_name(t[T_X].dtype, b1));
    if (t[T_GROUP_INDEX].dtype != ACL_INT32)
        return invalid(c, "groupIndex dtype %s is not supported (INT32)", op_dtype_name(t[T_GROUP_INDEX].dtype, b1));
    aclDataType yt = t[T_Y].dtype;
    if (!is_fp8(yt) && !(v2 && is_fp4(yt)))
        return invalid(c, "y dtype %s is not supported (%s)", op_dtype_name(yt, b1),
                       v2 ? "FLOAT8_E4M3FN, FLOAT8_E5M2, FLOAT4_E2M1 or FLOAT4_E1M2" : "FLOAT8_E4M3FN or FLOAT8_E5M2");
    if (t[T_MXSCALE].dtype != ACL_FLOAT8_E8M0)
        return invalid(c, "mxscale dtype %s is not supported (FLOAT8_E8M0)", op_dtype_name(t[T_MXSCALE].dtype, b1));
    const char *rm = c->round_mode;
    if (v2 ? strcmp(rm, "rint") && strcmp(rm, "round") && strcmp(rm, "floor") : strcmp(rm, "rint"))
        return invalid(c, "expected roundMode equals %s, get: %s", v2 ? "'rint'/'round'/'floor'" : "'rint'", rm);
    if (c->blocksize != 32)
        return invalid(c, "blocksize only support '32' now, get: %lld", (long long)c->blocksize);
    if (v2 && (c->scale_alg < 0 || c->scale_alg > 2))
        return invalid(c, "scaleAlg only support '0', '1' or '2' now, get: %lld", (long long)c->scale_alg);
    if (c->dst_type != (int64_t)yt)
        return invalid(c, "dstType %lld (%s) must be the same as y dtype %s", (long long)c->dst_type,
                       (c->dst_type >= INT32_MIN && c->dst_type <= INT32_MAX)
                           ? op_dtype_name((aclDataType)c->dst_type, b2) : "out of range",
                       op_dtype_name(yt, b1));
    return ACLNN_SUCCESS;
}

static const char *shape_text(const pyaclnn_stub_tensor *t, char *buf, size_t size) {
    size_t used = (size_t)snprintf(buf, size, "[");
    for (int64_t k = 0; k < t->ndim && used < size; k++)
        used += (size_t)snprintf(buf + used, size - used, k ? ", %lld" : "%lld", (long long)t->shape[k]);
    if (used < size) snprintf(buf + used, size - used, "]");
    return buf;
}

/* Rows 11-13: ranks and shapes. */
static aclnnStatus check_shapes(const gmq_call *c, const pyaclnn_stub_tensor t[4]) {
    static const int64_t RANK[4] = {2, 1, 2, 3};
    char b1[128], b2[128];
    for (int k = 0; k < 4; k++)
        if (t[k].ndim != RANK[k])
            return invalid(c, "%s has %lld dims, should be %lldD", TENSOR_NAMES[k], (long long)t[k].ndim,
                           (long long)RANK[k]);
    if (t[T_Y].shape[0] != t[T_X].shape[0] || t[T_Y].shape[1] != t[T_X].shape[1])
        return invalid(c, "y shape %s must equal x shape %s", shape_text(&t[T_Y], b1, sizeof b1),
                       shape_text(&t[T_X], b2, sizeof b2));
    int64_t m = t[T_X].shape[0], n = t[T_X].shape[1], g = t[T_GROUP_INDEX].shape[0];
    const int64_t *ms = t[T_MXSCALE].shape;
    if (ms[2] != 2) return invalid(c, "mxscale dim2 is %lld, should be 2", (long long)ms[2]);
    if (ms[1] != n)
        return invalid(c, "mxscale dim1 is %lld, should be the same as x dim1 (%lld)", (long long)ms[1], (long long)n);
    int64_t rows;   /* the dims come from the caller unchecked: m / 64 + g may not fit */
    if (__builtin_add_overflow(m / 64, g, &rows))
        return invalid(c, "mxscale dim0 is %lld, but x dim0 / 64 + groupIndex dim0 overflows int64", (long long)ms[0]);
    if (ms[0] != rows)
        return invalid(c, "mxscale dim0 is %lld, should be x dim0 / 64 + groupIndex dim0 = %lld", (long long)ms[0],
                       (long long)rows);
    return ACLNN_SUCCESS;
}

/* Row 18: what only the kernel tiling rejects. NULL when it accepts. */
static const char *tiling_rule(const gmq_call *c, aclDataType yt, int64_t n) {
    int fp4 = is_fp4(yt);
    float d = (float)c->dst_type_max;
    if (!fp4 && strcmp(c->round_mode, "rint") != 0) return "FP8 y needs roundMode 'rint'";
    if (fp4 && c->scale_alg == 1) return "scaleAlg 1 is not supported with FP4 y";
    if (!fp4 && c->scale_alg == 2) return "scaleAlg 2 is not supported with FP8 y";
    if (yt == ACL_FLOAT4_E2M1 && (d < 0 || (d > 0 && d < 6) || d > 12))
        return "dstTypeMax must be 0 or within [6, 12] for FLOAT4_E2M1";
    if (yt == ACL_FLOAT4_E1M2 && (d < 0 || (d > 0 && d < 1.75f) || d > 3.5f))
        return "dstTypeMax must be 0 or within [1.75, 3.5] for FLOAT4_E1M2";
    if (fp4 && n % 2 != 0) return "the last dim of x must be even for FP4 y";
    return NULL;
}

static aclnnStatus get_workspace_size(const gmq_call *c, uint64_t *workspaceSize, aclOpExecutor **executor) {
    /* Row 1: the five pointer arguments, in this order. */
    static const char *const NULL_ORDER[] = {"x", "groupIndex", "roundMode", "y", "mxscale"};
    const void *pointers[] = {c->tensors[T_X], c->tensors[T_GROUP_INDEX], c->round_mode, c->tensors[T_Y],
                              c->tensors[T_MXSCALE]};
    for (int k = 0; k < 5; k++) {
        if (pointers[k] == NULL) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, c->api, "%s cannot be nullptr", NULL_ORDER[k]);
            return ACLNN_ERR_PARAM_NULLPTR;
        }
    }
    pyaclnn_stub_tensor t[4];
    for (int k = 0; k < 4; k++) {
        aclnnStatus rc = op_tensor_arg(c->api, TENSOR_NAMES[k], c->tensors[k], &t[k]);
        if (rc != ACLNN_SUCCESS) return rc;
    }

    /* Row 2: only "regbase" SoCs (the Ascend950 family) run this op. */
    if (pyaclnn_stub_soc_family() != PYACLNN_SOC_950) {
        const char *soc = aclrtGetSocName();
        return invalid(c, "support for SoC %s is not implemented: GroupedDynamicMxQuant runs only on Ascend950 "
                          "(arch35, regbase)", soc ? soc : "(unknown)");
    }
    aclnnStatus rc = check_dtypes_and_attributes(c, t);
    if (rc == ACLNN_SUCCESS) rc = check_shapes(c, t);
    if (rc != ACLNN_SUCCESS) return rc;
    if (pyaclnn_stub_numel(&t[T_GROUP_INDEX]) == 0)                                  /* row 14 */
        return invalid(c, "groupIndex does not support empty values");

    int empty = pyaclnn_stub_numel(&t[T_X]) == 0;                                    /* row 15 */
    aclDataType yt = t[T_Y].dtype;
    if (!empty) {
        if (c->version == 2 && is_fp4(yt) && !pyaclnn_stub_is_contiguous(&t[T_Y]))     /* row 16 */
            return invalid(c, "y must be contiguous when its dtype is FP4");
        const char *rule = tiling_rule(c, yt, t[T_X].shape[1]);                         /* row 18 */
        if (rule != NULL) {
            pyaclnn_stub_report(ACLNN_ERR_INNER_NULLPTR, c->api,
                                "the GroupedDynamicMxQuant tiling rejects these arguments: %s (the real toolkit "
                                "aborts the process on this input)", rule);
            return ACLNN_ERR_INNER_NULLPTR;
        }
        if (!pyaclnn_stub_is_contiguous(&t[T_MXSCALE]))                                  /* row 19 */
            return invalid(c, "mxscale must be contiguous");
    }

    if (workspaceSize == NULL || executor == NULL) {   /* the vendor would write through them */
        pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, c->api, "%s is NULL",
                            workspaceSize == NULL ? "workspaceSize" : "executor");
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    float d = (float)c->dst_type_max;   /* the l0 op takes it as a float attribute */
    gmq_params prm = {
        .x_dtype = t[T_X].dtype,
        .y_dtype = yt,
        .scale_alg = (int)c->scale_alg,
        .dtm_template = c->scale_alg == 2 ? dst_type_max_template(yt, d) : 0,
        .inv_dst_type_max = inv_dst_type_max(yt, d),
        .round_mode = strcmp(c->round_mode, "round") == 0 ? NUM_ROUND
                      : strcmp(c->round_mode, "floor") == 0 ? NUM_FLOOR : NUM_RINT,
    };
    uint64_t ws = empty ? 0 : TILING_WORKSPACE;
    aclOpExecutor *e = pyaclnn_stub_executor_new(GMQ_OP_NAME, empty ? NULL : gmq_kernel, &prm, sizeof prm, c->tensors,
                                                 GMQ_N_INPUTS, c->tensors + T_Y, GMQ_N_OUTPUTS, ws);
    if (e == NULL) {
        pyaclnn_stub_report(ACLNN_ERR_INNER_CREATE_EXECUTOR, c->api, "could not create the executor (out of memory)");
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    }
    *workspaceSize = ws;
    *executor = e;
    return ACLNN_SUCCESS;
}

/* Phase 2: any launch failure becomes ACLNN_ERR_INNER, as the vendor's wrapper returns. The one
 * recent-error line is the shared routine's (it names this API and the cause, with the inner
 * status); the vendor logs a second "launch aicore" line, which the stub's one-report-per-failure
 * rule leaves out. */
static aclnnStatus run(const char *api, void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                       aclrtStream stream) {
    aclnnStatus rc = pyaclnn_stub_executor_run(api, workspace, workspaceSize, executor, stream);
    return rc == ACLNN_SUCCESS ? ACLNN_SUCCESS : ACLNN_ERR_INNER;
}

/* ---- public entry points ------------------------------------------------------------------------ */

aclnnStatus aclnnGroupedDynamicMxQuantGetWorkspaceSize(const aclTensor *x, const aclTensor *groupIndex,
                                                       const char *roundMode, int64_t dstType, int64_t blocksize,
                                                       const aclTensor *y, const aclTensor *mxscale,
                                                       uint64_t *workspaceSize, aclOpExecutor **executor) {
    gmq_call c = {"aclnnGroupedDynamicMxQuantGetWorkspaceSize", 1, {x, groupIndex, y, mxscale}, roundMode,
                  dstType, blocksize, 0, 0.0};
    return get_workspace_size(&c, workspaceSize, executor);
}

aclnnStatus aclnnGroupedDynamicMxQuant(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                       aclrtStream stream) {
    return run("aclnnGroupedDynamicMxQuant", workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnGroupedDynamicMxQuantV2GetWorkspaceSize(const aclTensor *x, const aclTensor *groupIndex,
                                                         const char *roundMode, int64_t dstType, int64_t blocksize,
                                                         int64_t scaleAlg, double dstTypeMax, const aclTensor *y,
                                                         const aclTensor *mxscale, uint64_t *workspaceSize,
                                                         aclOpExecutor **executor) {
    gmq_call c = {"aclnnGroupedDynamicMxQuantV2GetWorkspaceSize", 2, {x, groupIndex, y, mxscale}, roundMode,
                  dstType, blocksize, scaleAlg, dstTypeMax};
    return get_workspace_size(&c, workspaceSize, executor);
}

aclnnStatus aclnnGroupedDynamicMxQuantV2(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                         aclrtStream stream) {
    return run("aclnnGroupedDynamicMxQuantV2", workspace, workspaceSize, executor, stream);
}
