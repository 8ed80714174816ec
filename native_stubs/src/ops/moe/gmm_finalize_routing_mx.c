/*
 * aclnnGroupedMatmulFinalizeRoutingV3 on Ascend 950: the MX paths (x, weight FLOAT8_E4M3FN / FLOAT8_E5M2, or both
 * FLOAT4_E2M1; scale and pertokenScale FLOAT8_E8M0, one per 32 elements of K) of the newer op_api
 * (hicann/ops-transformer gmm/grouped_matmul_finalize_routing/op_api: aclnn_grouped_matmul_finalize_routing.cpp's V3
 * entry and CommonProcess, grouped_matmul_finalize_routing_950_checker.h's DAV3510 checker) and the arch35 kernel
 * (op_kernel/arch35/grouped_matmul_finalize_routing_arch35.h: the MX cube, a bfloat16 bias in the L0C, the
 * finalize-routing prologue and epilogue). Definition: gmm_finalize_routing.toml. On Atlas A2 both steps pass
 * through (gmm_finalize_routing.c runs V3's A2 checks).
 *
 * gmmfr_mx_entry (before CommonProcess), in the V3 entry's order:
 *   out NULL -> 161001; CheckSupportSceneforV3 (x1, x2, scale, groupList, pertokenScale, logit, rowIndex given,
 *   antiquant scale / offset absent; the bias is optional on the 950) -> 161001; dtype != 0; x2's view rank < 2;
 *   transposeX1 -> 161002; x1 or x2 outside {FLOAT8_E5M2, FLOAT8_E4M3FN, FLOAT4_E2M1} -> 161002.
 * gmmfr_mx_check (after `read`): PreMatmulCalcProcess (x1's and, unless transposeX2, x2's transposed strides turn
 *   into the transpose flag; an NZ scale -> 161002; a scale / weight transpose mismatch is not an error: the
 *   vendor's CHECK_RET there returns its ACLNN_SUCCESS), M or N of 0 -> success with nothing launched, then the
 *   checker: the quant mode from the scale dtype, CheckNotNull, CheckDtypeValid (MX lists), CheckInputOutDims,
 *   CheckAttrs, CheckInputOutShape, the MXFP4 rules, CheckFormat -> 161002.
 * The emulator's limits after them (161002): x FLOAT8_E4M3FN with an FP4 weight (MxA8W4: its own checker and
 *   kernel), the per-token quant mode (FLOAT / BFLOAT16 scale), a FRACTAL_NZ weight.
 *
 * Kernel, per expert e and its tokens m (groupList: counts, or a cumulative sum with groupListType 0; a group of
 * <= 0 tokens is skipped, a count still moving the next group's first token):
 *   acc[m][n] = the MX cube's fp32 value (ops/quant/mx_dequant.h), starting from fp32(bias[e][n]) when given;
 *   y = fp32(acc * logit[m]) (the epilogue's fp32 Mul); out[rowIndex[m]] += y (fp32 atomic adds: token order here,
 *   the cores' order on the NPU); before them the prologue: out = 0, rows [sharedInputOffset, + rows of
 *   sharedInput) = fp32(sharedInput) * sharedInputWeight.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal/pyaclnn_stub.h"
#include "kernels/dtype.h"
#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops/moe/gmmfr_routing.h"
#include "ops/quant/mx_dequant.h"
#include "ops_decls.h"

#define V3_API "aclnnGroupedMatmulFinalizeRoutingV3"
#define V3_WS "aclnnGroupedMatmulFinalizeRoutingV3GetWorkspaceSize"
#define CHK "aclnnGroupedMatmulFinalizeRoutingGetWorkspaceSize"   /* the 950 checker's GMMFR_ACLNN_OP_NAME */

typedef struct {
    int64_t m, k, n, e, batch, shared_rows, shared_offset, list_type;
    int has_bias, has_shared, w_kn, scale_kn;   /* w_kn / scale_kn: the views are (E, K, N) / (E, K/64, N, 2) */
    float shared_weight;
} gmmfr_mx_params;

void gmmfr_mx_kernel(const pyaclnn_stub_launch *launch);

static int gmx_on(const op_call *c) {
    return ew_soc_is_950() && strcmp(c->def->name, "GroupedMatmulFinalizeRoutingV3") == 0;
}

/* the A2 steps of V3 (gmm_finalize_routing.c) pass through on the 950 */
int gmmfr_mx_owns(const op_call *c) { return gmx_on(c); }

static int gmx_is_mx(aclDataType d) { return d == ACL_FLOAT8_E4M3FN || d == ACL_FLOAT8_E5M2 || d == ACL_FLOAT4_E2M1; }
static int gmx_is_fp8(aclDataType d) { return d == ACL_FLOAT8_E4M3FN || d == ACL_FLOAT8_E5M2; }
static int64_t gmx_ceil(int64_t a, int64_t b) { return (a + b - 1) / b; }

static const char *gmx_dt(aclDataType d, char b[24]) { return op_dtype_name(d, b); }

/* gmmfr_mx_entry x1 x2 scale bias groupList pertoken logit rowIndex antiquantScale antiquantOffset dtype tx1 tx2 out */
aclnnStatus opc_gmmfr_mx_entry(op_call *c, const op_step *s) {
    if (!gmx_on(c)) return ACLNN_SUCCESS;
    if (op_argument(c, s, 13)->p == NULL) return op_failf(c->api, ACLNN_ERR_PARAM_NULLPTR, "out is NULL");
    static const char *const names[] = {"x1", "x2", "scale", NULL, "groupList", "pertokenScale", "logit", "rowIndex"};
    int ok = 1;
    char msg[512] = V3_API " invalid input parameter configuration.";
    for (int k = 0; k < 8; k++)
        if (names[k] && op_argument(c, s, k)->p == NULL) {
            ok = 0;
            snprintf(msg + strlen(msg), sizeof msg - strlen(msg), " Required parameter '%s' is null.", names[k]);
        }
    if (op_argument(c, s, 8)->p != NULL)
        ok = 0, snprintf(msg + strlen(msg), sizeof msg - strlen(msg), " Required parameter 'antiquantScale' must be null.");
    if (op_argument(c, s, 9)->p != NULL)
        ok = 0, snprintf(msg + strlen(msg), sizeof msg - strlen(msg), " Required parameter 'antiquantOffset' must be null.");
    if (!ok) return op_failf(c->api, ACLNN_ERR_PARAM_NULLPTR, "%s", msg);
    pyaclnn_stub_tensor x1, x2;
    aclnnStatus st;
    if ((st = op_tensor_arg(c->api, "x1", op_argument(c, s, 0)->p, &x1)) != ACLNN_SUCCESS ||
        (st = op_tensor_arg(c->api, "x2", op_argument(c, s, 1)->p, &x2)) != ACLNN_SUCCESS)
        return st;
    int64_t dtype = op_argument(c, s, 10)->i;
    if (dtype != 0) return op_invalidf(c->api, V3_API " dtype must be 0 (FLOAT32), but is %lld.", (long long)dtype);
    if (x2.ndim < 2)
        return op_invalidf(c->api, V3_API " weightNd x2's view dimNum should greater than 1, but is %lld.",
                           (long long)x2.ndim);
    int tx1 = op_argument(c, s, 11)->i != 0, tx2 = op_argument(c, s, 12)->i != 0;
    if (tx1)
        return op_ez_reason(V3_WS, 1, "transposeX1 and transposeX2", "values", tx2 ? "transposeX1=true, transposeX2=true"
                            : "transposeX1=true, transposeX2=false", "the value of transposeX1 and transposeX2 must "
                            "be false/false or false/true on DAV_3510");
    if (!gmx_is_mx(x1.dtype) || !gmx_is_mx(x2.dtype)) {
        char a[24], b[24], v[64];
        snprintf(v, sizeof v, "x=%s, weight=%s", gmx_dt(x1.dtype, a), gmx_dt(x2.dtype, b));
        return op_ez_reason(V3_WS, 1, "x and weight", "dtypes", v, "for mx, the dtypes of x and weight must be within "
                            "the range {FLOAT8_E5M2, FLOAT8_E4M3FN, FLOAT4_E2M1}");
    }
    return ACLNN_SUCCESS;
}

/* IsLastTwoDimsTranspose: rank 2..6, the last two dims' strides (1, size of the second last), batch dims dense */
static int gmx_last_two_transposed(const pyaclnn_stub_tensor *t) {
    int64_t d = t->ndim;
    if (d < 2 || d > 6) return 0;
    if (!(t->strides[d - 2] == 1 && t->strides[d - 1] == t->shape[d - 2])) return 0;
    int64_t span = t->shape[d - 1] * t->shape[d - 2];
    for (int64_t b = d - 3; b >= 0; b--) {
        if (t->strides[b] != span) return 0;
        span *= t->shape[b];
    }
    return !(t->shape[d - 1] == 1 && t->shape[d - 2] == 1);
}

/* IsTransposeForMxScale: a 4-D (E, X, Y, 2) view whose dims 1 and 2 are swapped in memory */
static int gmx_scale_transposed(const pyaclnn_stub_tensor *t) {
    if (t->ndim != 4) return 0;
    if (!(t->strides[1] == 2 && t->strides[2] == t->shape[1] * 2)) return 0;
    if (t->strides[0] != t->shape[2] * t->shape[1] * 2) return 0;
    return !(t->shape[2] == 1 && t->shape[1] == 1);
}

static aclnnStatus gmx_shape(const pyaclnn_stub_tensor *t, const char *name, const int64_t *want, int64_t nd) {
    int same = t->ndim == nd;
    for (int64_t i = 0; same && i < nd; i++) same = t->shape[i] == want[i];
    if (same) return ACLNN_SUCCESS;
    char a[160], b[160];
    return op_ez_expected(CHK, name, "shape", tv_shape_text(t->shape, t->ndim, a, sizeof a),
                          tv_shape_text(want, nd, b, sizeof b));
}

static aclnnStatus gmx_rank(const pyaclnn_stub_tensor *t, const char *name, int64_t want) {
    if (t->ndim == want) return ACLNN_SUCCESS;
    char a[24], b[24];
    snprintf(a, sizeof a, "%lld", (long long)t->ndim);
    snprintf(b, sizeof b, "%lld", (long long)want);
    return op_ez_expected(CHK, name, "shape dim", a, b);
}

static aclnnStatus gmx_dtype(const pyaclnn_stub_tensor *t, const char *name, const aclDataType *list, size_t n) {
    if (ew_in_list(t->dtype, list, n)) return ACLNN_SUCCESS;
    char a[24], all[128];
    return op_ez_expected(CHK, name, "dtype", gmx_dt(t->dtype, a), ew_dtype_list(list, n, all, sizeof all));
}

#define GMX_TRY(e)                            \
    do {                                      \
        aclnnStatus st_ = (e);                \
        if (st_ != ACLNN_SUCCESS) return st_; \
    } while (0)

/* the view text without brackets (ShapeToStringWithoutBracket) */
static const char *gmx_dims(const pyaclnn_stub_tensor *t, char *b, size_t size) {
    tv_shape_text(t->shape, t->ndim, b, size);
    size_t n = strlen(b);
    if (n >= 2) memmove(b, b + 1, n - 2), b[n - 2] = '\0';
    return b;
}

/* CheckDtypeValidForMX, out FLOAT (the V3 entry has dtype 0) */
static aclnnStatus gmx_dtypes(const pyaclnn_stub_tensor *x1, const pyaclnn_stub_tensor *x2,
                              const pyaclnn_stub_tensor *scale, const pyaclnn_stub_tensor *pt,
                              const pyaclnn_stub_tensor *bias, const pyaclnn_stub_tensor *gl,
                              const pyaclnn_stub_tensor *shared, const pyaclnn_stub_tensor *logit,
                              const pyaclnn_stub_tensor *row, const pyaclnn_stub_tensor *out) {
    static const aclDataType mx[] = {ACL_FLOAT8_E4M3FN, ACL_FLOAT8_E5M2, ACL_FLOAT4_E2M1}, e8[] = {ACL_FLOAT8_E8M0},
                             bf[] = {ACL_BF16}, i64[] = {ACL_INT64}, i32[] = {ACL_INT32}, f32[] = {ACL_FLOAT},
                             fb[] = {ACL_FLOAT, ACL_BF16};
    GMX_TRY(gmx_dtype(x1, "x", mx, 3));
    GMX_TRY(gmx_dtype(x2, "weight", mx, 3));
    GMX_TRY(gmx_dtype(scale, "scale", e8, 1));
    GMX_TRY(gmx_dtype(pt, "perTokenScale", e8, 1));
    if (bias->present) GMX_TRY(gmx_dtype(bias, "bias", bf, 1));
    GMX_TRY(gmx_dtype(gl, "groupList", i64, 1));
    if (shared->present) GMX_TRY(gmx_dtype(shared, "shareInput", bf, 1));
    GMX_TRY(gmx_dtype(out, "y", fb, 2));
    if (out->dtype == ACL_BF16) {   /* isBf16Output: the V3 entry's dtype 0 then fails its own check */
        GMX_TRY(gmx_dtype(row, "rowIndex", i32, 1));
        GMX_TRY(gmx_dtype(logit, "logit", fb, 2));
        return op_ez_expected(CHK, "dtype", "value", "0", "2");
    }
    GMX_TRY(gmx_dtype(row, "rowIndex", i64, 1));
    GMX_TRY(gmx_dtype(logit, "logit", f32, 1));
    int fp4x = x1->dtype == ACL_FLOAT4_E2M1, fp4w = x2->dtype == ACL_FLOAT4_E2M1;
    if (fp4x != fp4w || gmx_is_fp8(x1->dtype) != gmx_is_fp8(x2->dtype)) {
        char a[24], b[24], v[64];
        snprintf(v, sizeof v, "x=%s, weight=%s", gmx_dt(x1->dtype, a), gmx_dt(x2->dtype, b));
        return op_ez_reason(CHK, 1, "x and weight", "dtypes", v, "the dtypes of x and weight must be within the range "
                            "{both MXFP4 or both MXFP8}");
    }
    return ACLNN_SUCCESS;
}

/* gmmfr_mx_check x1 x2 scale bias offset pertoken groupList sharedInput logit rowIndex sharedInputWeight
 * sharedInputOffset transposeX1 transposeX2 groupListType out */
aclnnStatus opc_gmmfr_mx_check(op_call *c, const op_step *s) {
    if (!gmx_on(c)) return ACLNN_SUCCESS;
    const pyaclnn_stub_tensor *x1 = op_tensor(c, s, 0), *x2 = op_tensor(c, s, 1), *scale = op_tensor(c, s, 2),
                              *bias = op_tensor(c, s, 3), *offset = op_tensor(c, s, 4), *pt = op_tensor(c, s, 5),
                              *gl = op_tensor(c, s, 6), *shared = op_tensor(c, s, 7), *logit = op_tensor(c, s, 8),
                              *row = op_tensor(c, s, 9), *out = op_tensor(c, s, 15);
    float shared_weight = (float)op_argument(c, s, 10)->d;
    int64_t shared_offset = op_argument(c, s, 11)->i, list_type = op_argument(c, s, 14)->i;
    int tx1 = op_argument(c, s, 12)->i != 0, tx2_arg = op_argument(c, s, 13)->i != 0, tx2 = tx2_arg;
    /* PreMatmulCalcProcess: transposed strides become the flags; the checker reads the swapped views */
    pyaclnn_stub_tensor w = *x2, sc = *scale;
    if (gmx_last_two_transposed(x1)) tx1 = !tx1;
    if (!tx2 && gmx_last_two_transposed(&w)) {
        int64_t d = w.ndim, t = w.shape[d - 1];
        w.shape[d - 1] = w.shape[d - 2], w.shape[d - 2] = t;
        tx2 = 1;
    }
    int scale_swapped = 0;
    if (gmx_is_mx(x1->dtype) && scale->dtype == ACL_FLOAT8_E8M0) {
        if (scale->format == ACL_FORMAT_FRACTAL_NZ || scale->format == ACL_FORMAT_FRACTAL_NZ_C0_16 ||
            scale->format == ACL_FORMAT_FRACTAL_NZ_C0_32)
            return op_invalidf(c->api, "GroupedMatmulFinalizeRoutingWeightV3: Scale only supports ND format, but "
                               "current format is FORMAT_FRACTAL_NZ.");
        if (gmx_scale_transposed(&sc)) {
            int64_t t = sc.shape[1];
            sc.shape[1] = sc.shape[2], sc.shape[2] = t;
            scale_swapped = 1;
        }
    }
    /* M or N of 0: the vendor returns success before its checker, launching nothing */
    int64_t M0 = x1->ndim > 0 ? x1->shape[0] : 1, N0 = w.ndim > 0 ? w.shape[w.ndim - (tx2 ? 2 : 1)] : 1;
    if (M0 == 0 || N0 == 0) {
        c->nothing = 1, c->done = 1;
        return ACLNN_SUCCESS;
    }
    if (x1->dtype == ACL_FLOAT8_E4M3FN && x2->dtype == ACL_FLOAT4_E2M1)
        return op_invalidf(c->api, "x FLOAT8_E4M3FN with a FLOAT4_E2M1 weight (MxA8W4): the emulator does not model "
                           "that path of %s", c->def->name);
    /* the DAV3510 checker: the quant mode from the scale's dtype */
    if (scale->dtype == ACL_FLOAT || scale->dtype == ACL_BF16)
        return op_invalidf(c->api, "scale %s (per-token quant): the emulator models the MX path of %s on Ascend 950 "
                           "(scale FLOAT8_E8M0)", scale->dtype == ACL_FLOAT ? "FLOAT" : "BFLOAT16", c->def->name);
    if (scale->dtype != ACL_FLOAT8_E8M0) {
        char a[24];
        return op_ez_reason(CHK, 0, "scale", "dtype", gmx_dt(scale->dtype, a), "the dtype of scale must be within the "
                            "range {FLOAT8_E8M0, FLOAT32, BFLOAT16}");
    }
    /* CheckNotNull (x, weight, scale, groupList, logit, rowIndex, y and pertokenScale are given by now) */
    if (offset->present) return op_ez_expected(CHK, "offset", "value", "nonnull", "nullptr");
    GMX_TRY(gmx_dtypes(x1, &w, scale, pt, bias, gl, shared, logit, row, out));
    /* CheckInputOutDims */
    GMX_TRY(gmx_rank(x1, "x", 2));
    GMX_TRY(gmx_rank(&w, "weight", 3));
    GMX_TRY(gmx_rank(&sc, "scale", 4));
    GMX_TRY(gmx_rank(gl, "groupList", 1));
    GMX_TRY(gmx_rank(logit, "logit", 1));
    GMX_TRY(gmx_rank(row, "rowIndex", 1));
    GMX_TRY(gmx_rank(out, "y", 2));
    GMX_TRY(gmx_rank(pt, "perTokenScale", 3));
    if (bias->present) GMX_TRY(gmx_rank(bias, "bias", 2));
    if (shared->present) GMX_TRY(gmx_rank(shared, "shareInput", 2));
    /* CheckAttrs */
    char v[32];
    if (list_type != 0 && list_type != 1) {
        snprintf(v, sizeof v, "%lld", (long long)list_type);
        return op_ez_expected(CHK, "groupListType", "value", v, "0 or 1");
    }
    int64_t batch = out->shape[0];
    snprintf(v, sizeof v, "%lld", (long long)shared_offset);
    if (shared_offset < 0)
        return op_ez_reason(CHK, 0, "sharedInputOffset", "value", v, "sharedInputOffset must be greater than or equal "
                            "to 0");
    if (shared_offset > batch)
        return op_ez_reason(CHK, 0, "sharedInputOffset", "value", v, "sharedInputOffset must be less than or equal to "
                            "batch(%lld)", (long long)batch);
    if (tx1) return op_ez_reason(CHK, 0, "transposeX1", "value", "true", "x cannot be transposed on Ascend 950");
    /* CheckInputOutShape: consistency first */
    char a[160], b[160], r[400];
    int64_t m = x1->shape[0], k = x1->shape[1], e = w.shape[0];
    int64_t kw = tx2 ? w.shape[2] : w.shape[1], n = tx2 ? w.shape[1] : w.shape[2];
    if (kw != k) {
        snprintf(r, sizeof r, "x=%s, weight=%s", gmx_dims(x1, a, sizeof a), gmx_dims(&w, b, sizeof b));
        return op_ez_reason(CHK, 1, "x and weight", "shapes", r, "axis K of x must be equal to axis K of weight");
    }
    if (gl->shape[0] != e)
        return op_ez_reason(CHK, 0, "groupList", "shape", gmx_dims(gl, a, sizeof a), "the total number of elements of "
                            "groupList must be equal to the number of experts in weight [%lld]", (long long)e);
    if (e > 1024)
        return op_ez_reason(CHK, 0, "weight", "shape", gmx_dims(&w, a, sizeof a), "in MX quant, e must be less than or "
                            "equal to 1024");
    if (k <= 0)
        return op_ez_reason(CHK, 0, "x", "shape", gmx_dims(x1, a, sizeof a), "when the M or N value is not 0 [M=%lld, "
                            "N=%lld], axis K of x must be a positive number", (long long)m, (long long)n);
    int64_t g64 = gmx_ceil(k, 64);
    int64_t xs[] = {m, k}, ws[] = {e, k, n}, wst[] = {e, n, k}, ss[] = {e, g64, n, 2}, sst[] = {e, n, g64, 2},
            gls[] = {e}, ms[] = {m}, ys[] = {batch, n};
    GMX_TRY(gmx_shape(x1, "x", xs, 2));
    GMX_TRY(gmx_shape(&sc, "scale", tx2 ? sst : ss, 4));
    GMX_TRY(gmx_shape(&w, "weight", tx2 ? wst : ws, 3));
    GMX_TRY(gmx_shape(gl, "groupList", gls, 1));
    GMX_TRY(gmx_shape(logit, "logit", ms, 1));
    GMX_TRY(gmx_shape(row, "rowIndex", ms, 1));
    GMX_TRY(gmx_shape(out, "y", ys, 2));
    int64_t pts[] = {m, g64, 2}, bs[] = {e, n};
    GMX_TRY(gmx_shape(pt, "perTokenScale", pts, 3));
    if (bias->present) GMX_TRY(gmx_shape(bias, "bias", bs, 2));
    int64_t bsdp = shared->present ? shared->shape[0] : 0;
    if (shared->present) {
        snprintf(v, sizeof v, "%lld", (long long)bsdp);
        if (bsdp > batch)
            return op_ez_reason(CHK, 0, "shareInput", "shape", v, "shared_input_len must be less than or equal to "
                                "batch(%lld)", (long long)batch);
        snprintf(v, sizeof v, "%lld", (long long)shared_offset);
        if (shared_offset > batch - bsdp)
            return op_ez_reason(CHK, 0, "sharedInputOffset", "value", v, "sharedInputOffset plus sharedInputLen must "
                                "be less than or equal to batch(%lld)", (long long)batch);
        int64_t shs[] = {bsdp, n};
        GMX_TRY(gmx_shape(shared, "shareInput", shs, 2));
    }
    if (x1->dtype == ACL_FLOAT4_E2M1 && w.dtype == ACL_FLOAT4_E2M1) {   /* CheckInputOutShapeForMXFP4 */
        if (k % 2 != 0) return op_ez_reason(CHK, 1, "x", "shapes", gmx_dims(x1, a, sizeof a), "in MXFP4, k must be "
                                            "divisible by 2");
        if (!tx2 && n % 2 != 0)
            return op_ez_reason(CHK, 0, "weight", "shape", gmx_dims(&w, a, sizeof a), "in MXFP4 and when x2 is not "
                                "transposed, axis N of weight must be an even number");
        if (k == 2) return op_ez_reason(CHK, 1, "x", "shapes", gmx_dims(x1, a, sizeof a), "in MXFP4, k cannot be 2");
    }
    /* CheckFormat */
    if (op_is_private_format(x1->format) || op_is_private_format(pt->format)) {
        char f1[24], f2[24];
        snprintf(r, sizeof r, "x=%s, perTokenScale=%s", op_format_name(x1->format, f1), op_format_name(pt->format, f2));
        return op_ez_reason(CHK, 1, "x and perTokenScale", "formats", r, "the formats of x and perTokenScale must be ND");
    }
    int w_nz = x2->format == ACL_FORMAT_FRACTAL_NZ;
    char f[24];
    if (!w_nz && op_is_private_format(x2->format))
        return op_ez_expected(CHK, "weight", "format", op_format_name(x2->format, f), "ND or FRACTAL_NZ");
    const struct { const pyaclnn_stub_tensor *t; const char *name; } nd[] = {
        {scale, "scale"}, {gl, "groupList"}, {logit, "logit"}, {row, "rowIndex"}, {out, "y"}, {bias, "bias"},
        {shared, "shareInput"}};
    for (size_t i = 0; i < sizeof nd / sizeof nd[0]; i++)
        if (nd[i].t->present && op_is_private_format(nd[i].t->format))
            return op_ez_expected(CHK, nd[i].name, "format", op_format_name(nd[i].t->format, f), "ND");
    if (w_nz || x2->format == ACL_FORMAT_FRACTAL_NZ_C0_16 || x2->format == ACL_FORMAT_FRACTAL_NZ_C0_32)
        return op_invalidf(c->api, "a FRACTAL_NZ weight on Ascend 950: the emulator models %s's ND weight",
                           c->def->name);
    gmmfr_mx_params *p = op_params(c, sizeof *p);
    *p = (gmmfr_mx_params){m, k, n, e, batch, bsdp, shared_offset, list_type, bias->present, shared->present,
                           !tx2_arg, scale_swapped || !tx2, shared_weight};
    c->kernel = gmmfr_mx_kernel;
    return ACLNN_SUCCESS;
}

/* The kernel's GetSplitValueFromGroupList: groupListType 0 differences the cumulative sum, 1 takes counts (and moves
 * the prefix by each, negative ones too); a group of <= 0 tokens is skipped; a group's tokens end at the prefix.
 * Tokens outside x1's rows, or a row index outside out, are a device fault (0). */
static int gmx_groups(const int64_t *gl, const gmmfr_mx_params *p, const unsigned char *rows, aclDataType row_dt,
                      int64_t *start, int64_t *cnt) {
    int64_t pre = 0;
    for (int64_t i = 0; i < p->e; i++) {
        int64_t v = p->list_type == 0 ? gl[i] - pre : gl[i];
        pre = p->list_type == 0 ? gl[i] : pre + v;
        start[i] = pre - v, cnt[i] = v > 0 ? v : 0;
        if (v <= 0) continue;
        if (start[i] < 0 || pre > p->m) {
            pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "GroupedMatmulFinalizeRoutingV3: groupList[%lld] = "
                                   "%lld takes tokens %lld .. %lld, outside x1's %lld rows", (long long)i,
                                   (long long)gl[i], (long long)start[i], (long long)(pre - 1), (long long)p->m);
            return 0;
        }
        for (int64_t t = start[i]; t < pre; t++) {
            int64_t r = gmmfr_row(rows, row_dt, t);
            if (r < 0 || r >= p->batch) {
                pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "GroupedMatmulFinalizeRoutingV3: rowIndex[%lld] "
                                       "= %lld is not a row of out (0 .. %lld)", (long long)t, (long long)r,
                                       (long long)(p->batch - 1));
                return 0;
            }
        }
    }
    return 1;
}

static float *gmx_load(const pyaclnn_stub_tensor *t) {
    return t->dtype == ACL_FLOAT4_E2M1 ? mx_load_fp4(t) : tv_load_float(t);
}

void gmmfr_mx_kernel(const pyaclnn_stub_launch *launch) {
    const gmmfr_mx_params *p = launch->params;
    const pyaclnn_stub_tensor *in = launch->inputs, *out_t = &launch->outputs[0];
    if (!tv_launch_views_ok(launch)) return;
    int64_t K = p->k, N = p->n, E = p->e, B = p->batch, G = gmx_ceil(K, MX_GROUP), G2 = gmx_ceil(K, 64) * 2;
    float *x = gmx_load(&in[0]), *w = gmx_load(&in[1]), *bias = p->has_bias ? tv_load_float(&in[3]) : NULL;
    uint8_t *ws = tv_gather_bytes(&in[2]), *xs = tv_gather_bytes(&in[7]);
    int64_t *counts = (int64_t *)tv_gather_bytes(&in[8]);
    float *shared = p->has_shared ? tv_load_float(&in[9]) : NULL, *logit = tv_load_float(&in[10]);
    unsigned char *rows = tv_gather_bytes(&in[11]);
    float *out = tv_alloc(B * N, sizeof(float));
    uint8_t *col = tv_alloc(N * G, 1);   /* one expert's weight scales, per column in K-group order */
    int64_t *start = tv_alloc(E, sizeof(int64_t)), *cnt = tv_alloc(E, sizeof(int64_t));
    int fa = mx_frac_bits(in[0].dtype), fw = mx_frac_bits(in[1].dtype);
    if (!x || !w || (p->has_bias && !bias) || !ws || !xs || !counts || (p->has_shared && !shared) || !logit ||
        !rows || !out || !col || !start || !cnt) {
        tv_fail_oom(launch);
    } else if (gmx_groups(counts, p, rows, in[11].dtype, start, cnt)) {
        gmmfr_prologue(out, B, N, shared, p->shared_rows, p->shared_offset, p->shared_weight);
        /* the weight's (k, n) strides in its row-major view: (E, K, N), or (E, N, K) with transposeX2 */
        int64_t wsk = p->w_kn ? N : 1, wsn = p->w_kn ? 1 : K;
        for (int64_t e = 0; e < E; e++) {
            if (cnt[e] == 0) continue;
            for (int64_t j = 0; j < N; j++)
                for (int64_t g = 0; g < G; g++)
                    col[j * G + g] = p->scale_kn ? ws[((e * (G2 / 2) + g / 2) * N + j) * 2 + g % 2]
                                                 : ws[(e * N + j) * G2 + g];
            for (int64_t m = start[e]; m < start[e] + cnt[e]; m++) {
                int64_t r = gmmfr_row(rows, in[11].dtype, m);
                for (int64_t j = 0; j < N; j++) {
                    float acc = mx_dot(x + m * K, 1, fa, w + e * K * N + j * wsn, wsk, fw, K, xs + m * G2, 1,
                                       col + j * G, 1, bias ? bias[e * N + j] : 0.0f);
                    out[r * N + j] += acc * logit[m];
                }
            }
        }
        tv_store_float(out_t, out);
    }
    free(x), free(w), free(bias), free(ws), free(xs), free(counts), free(shared), free(logit), free(rows), free(out);
    free(col), free(start), free(cnt);
}
