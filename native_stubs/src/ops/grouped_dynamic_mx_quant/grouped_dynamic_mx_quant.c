/*
 * aclnnGroupedDynamicMxQuant / aclnnGroupedDynamicMxQuantV2: MX quantisation of x [m, n] in blocks
 * of 32 rows per column, counted from the start of each row group, to FP8 / FP4 with E8M0 scales
 * (hicann/ops-nn quant/grouped_dynamic_mx_quant, code generation G2 = CANN 9.2 / master).
 * Behaviour as pinned down in /work/shared/spec/grouped_dynamic_mx_quant.md: validation §2 by the
 * definitions (grouped_dynamic_mx_quant.toml: one template for both forms) with the steps below, the
 * kernel §3-§4 in gmq_kernel.c (+ gmq_plan.c, gmq_tile.c, gmq_rows.h, gmq_scale.h and
 * numerics/num_inline.h).
 *
 * The steps take V2's extra attributes (scaleAlg, dstTypeMax) as trailing operands; V1, which has
 * none, hard-wires 0 and 0.0.
 *
 * Stub-only behaviour, where the real toolkit crashes or is undefined:
 *  - workspaceSize / executor NULL: the vendor writes through them unchecked; here 161001 (a
 *    not_null step after the others, where the vendor would write).
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

#include "gmq_kernel.h"
#include "kernels/device.h"
#include "numerics.h"
#include "opbase/checks.h"
#include "ops_decls.h"

#define TILING_WORKSPACE 32   /* bytes of user workspace the tiling asks for (spec §6) */

static int is_fp4(aclDataType t) { return t == ACL_FLOAT4_E2M1 || t == ACL_FLOAT4_E1M2; }

static aclnnStatus invalid(const op_call *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static aclnnStatus invalid(const op_call *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    pyaclnn_stub_vreport(ACLNN_ERR_PARAM_INVALID, c->api, fmt, ap);
    va_end(ap);
    return ACLNN_ERR_PARAM_INVALID;
}

/* V2's trailing attribute operands k (scaleAlg) and k + 1 (dstTypeMax); V1 has neither: 0 and 0.0. */
static int64_t scale_alg_of(const op_call *c, const op_step *s, int k) {
    return k < s->np ? op_argument(c, s, k)->i : 0;
}
static double dst_type_max_of(const op_call *c, const op_step *s, int k) {
    return k + 1 < s->np ? op_argument(c, s, k + 1)->d : 0.0;
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

/* ---- validation, in the vendor's order (spec §2.1): the family's steps ----------------------- */

/* gmq_soc: row 2, only "regbase" SoCs (the Ascend950 family) run this op. */
aclnnStatus opc_gmq_soc(op_call *c, const op_step *s) {
    (void)s;
    if (pyaclnn_stub_soc_family() == PYACLNN_SOC_950) return ACLNN_SUCCESS;
    const char *soc = aclrtGetSocName();
    return invalid(c, "support for SoC %s is not implemented: GroupedDynamicMxQuant runs only on Ascend950 "
                      "(arch35, regbase)", soc ? soc : "(unknown)");
}

/* gmq_round_mode roundMode "mode ...": row 7, the modes the op_api accepts. */
aclnnStatus opc_gmq_round_mode(op_call *c, const op_step *s) {
    const char *rm = op_argument(c, s, 0)->p;
    char modes[64], allowed[128];
    snprintf(modes, sizeof modes, "%s", s->text != NULL ? s->text : "");
    size_t used = 0;
    allowed[0] = '\0';
    int ok = 0;
    for (char *save = NULL, *m = strtok_r(modes, " ", &save); m != NULL; m = strtok_r(NULL, " ", &save)) {
        ok |= strcmp(rm, m) == 0;
        used += (size_t)snprintf(allowed + used, sizeof allowed - used, "%s'%s'", used ? "/" : "", m);
        if (used >= sizeof allowed) break;
    }
    return ok ? ACLNN_SUCCESS : invalid(c, "expected roundMode equals %s, get: %s", allowed, rm);
}

/* gmq_attrs blocksize [scaleAlg]: rows 8-9, the attribute values the op_api accepts. */
aclnnStatus opc_gmq_attrs(op_call *c, const op_step *s) {
    int64_t blocksize = op_argument(c, s, 0)->i, scale_alg = scale_alg_of(c, s, 1);
    if (blocksize != 32)
        return invalid(c, "blocksize only support '32' now, get: %lld", (long long)blocksize);
    if (scale_alg < 0 || scale_alg > 2)
        return invalid(c, "scaleAlg only support '0', '1' or '2' now, get: %lld", (long long)scale_alg);
    return ACLNN_SUCCESS;
}

/* gmq_dst_type dstType y: row 10, dstType names y's dtype. */
aclnnStatus opc_gmq_dst_type(op_call *c, const op_step *s) {
    int64_t dst_type = op_argument(c, s, 0)->i;
    aclDataType yt = op_tensor(c, s, 1)->dtype;
    if (dst_type == (int64_t)yt) return ACLNN_SUCCESS;
    char b1[24], b2[24];
    return invalid(c, "dstType %lld (%s) must be the same as y dtype %s", (long long)dst_type,
                   (dst_type >= INT32_MIN && dst_type <= INT32_MAX) ? op_dtype_name((aclDataType)dst_type, b2)
                                                                    : "out of range",
                   op_dtype_name(yt, b1));
}

static const char *shape_text(const pyaclnn_stub_tensor *t, char *buf, size_t size) {
    return tv_shape_text(t->shape, t->ndim, buf, size);
}

/* gmq_shapes x groupIndex y mxscale: rows 11-13, ranks and shapes. */
aclnnStatus opc_gmq_shapes(op_call *c, const op_step *s) {
    static const int64_t RANK[4] = {2, 1, 2, 3};
    char b1[128], b2[128];
    for (int k = 0; k < 4; k++)
        if (op_tensor(c, s, k)->ndim != RANK[k])
            return invalid(c, "%s has %lld dims, should be %lldD", op_pname(c, s, k), (long long)op_tensor(c, s, k)->ndim,
                           (long long)RANK[k]);
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0), *y = op_tensor(c, s, 2);
    if (y->shape[0] != x->shape[0] || y->shape[1] != x->shape[1])
        return invalid(c, "y shape %s must equal x shape %s", shape_text(y, b1, sizeof b1), shape_text(x, b2, sizeof b2));
    int64_t m = x->shape[0], n = x->shape[1], g = op_tensor(c, s, 1)->shape[0];
    const int64_t *ms = op_tensor(c, s, 3)->shape;
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

/* gmq_group_index groupIndex: row 14. */
aclnnStatus opc_gmq_group_index(op_call *c, const op_step *s) {
    if (pyaclnn_stub_numel(op_tensor(c, s, 0)) != 0) return ACLNN_SUCCESS;
    return invalid(c, "groupIndex does not support empty values");
}

/* gmq_fp4_contiguous y: row 16 (V2's; a V1 y is never FP4), when something is launched. */
aclnnStatus opc_gmq_fp4_contiguous(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *y = op_tensor(c, s, 0);
    if (c->nothing || !is_fp4(y->dtype) || pyaclnn_stub_is_contiguous(y)) return ACLNN_SUCCESS;
    return invalid(c, "y must be contiguous when its dtype is FP4");
}

/* Row 18: what only the kernel tiling rejects. NULL when it accepts. */
static const char *tiling_rule(aclDataType yt, int64_t n, const char *round_mode, int64_t scale_alg,
                               double dst_type_max) {
    int fp4 = is_fp4(yt);
    float d = (float)dst_type_max;
    if (!fp4 && strcmp(round_mode, "rint") != 0) return "FP8 y needs roundMode 'rint'";
    if (fp4 && scale_alg == 1) return "scaleAlg 1 is not supported with FP4 y";
    if (!fp4 && scale_alg == 2) return "scaleAlg 2 is not supported with FP8 y";
    if (yt == ACL_FLOAT4_E2M1 && (d < 0 || (d > 0 && d < 6) || d > 12))
        return "dstTypeMax must be 0 or within [6, 12] for FLOAT4_E2M1";
    if (yt == ACL_FLOAT4_E1M2 && (d < 0 || (d > 0 && d < 1.75f) || d > 3.5f))
        return "dstTypeMax must be 0 or within [1.75, 3.5] for FLOAT4_E1M2";
    if (fp4 && n % 2 != 0) return "the last dim of x must be even for FP4 y";
    return NULL;
}

/* gmq_tiling x y roundMode [scaleAlg dstTypeMax]: row 18 (561103), when something is launched. */
aclnnStatus opc_gmq_tiling(op_call *c, const op_step *s) {
    if (c->nothing) return ACLNN_SUCCESS;
    const char *rule = tiling_rule(op_tensor(c, s, 1)->dtype, op_tensor(c, s, 0)->shape[1], op_argument(c, s, 2)->p,
                                   scale_alg_of(c, s, 3), dst_type_max_of(c, s, 3));
    if (rule == NULL) return ACLNN_SUCCESS;
    pyaclnn_stub_report(ACLNN_ERR_INNER_NULLPTR, c->api,
                        "the GroupedDynamicMxQuant tiling rejects these arguments: %s (the real toolkit "
                        "aborts the process on this input)", rule);
    return ACLNN_ERR_INNER_NULLPTR;
}

/* gmq_contiguous mxscale: row 19, when something is launched. */
aclnnStatus opc_gmq_contiguous(op_call *c, const op_step *s) {
    if (c->nothing || pyaclnn_stub_is_contiguous(op_tensor(c, s, 0))) return ACLNN_SUCCESS;
    return invalid(c, "%s must be contiguous", op_pname(c, s, 0));
}

/* gmq_plan x y roundMode [scaleAlg dstTypeMax]: the kernel's attributes and the tiling's workspace. */
aclnnStatus opc_gmq_plan(op_call *c, const op_step *s) {
    aclDataType yt = op_tensor(c, s, 1)->dtype;
    const char *round_mode = op_argument(c, s, 2)->p;
    int64_t scale_alg = scale_alg_of(c, s, 3);
    float d = (float)dst_type_max_of(c, s, 3);   /* the l0 op takes it as a float attribute */
    gmq_params *prm = op_params(c, sizeof *prm);
    prm->x_dtype = op_tensor(c, s, 0)->dtype;
    prm->y_dtype = yt;
    prm->scale_alg = (int)scale_alg;
    prm->dtm_template = scale_alg == 2 ? dst_type_max_template(yt, d) : 0;
    prm->inv_dst_type_max = inv_dst_type_max(yt, d);
    prm->round_mode = strcmp(round_mode, "round") == 0 ? NUM_ROUND : strcmp(round_mode, "floor") == 0 ? NUM_FLOOR
                                                                                                        : NUM_RINT;
    c->workspace = c->nothing ? 0 : TILING_WORKSPACE;
    return ACLNN_SUCCESS;
}
