/*
 * aclnnQuantMatmulV5, its A8W8 (INT8 x INT8) modes (hicann/ops-nn matmul/quant_batch_matmul_v4 op_api
 * aclnn_quant_matmul_v5.cpp, the QuantMatmulChecker of matmul/quant_batch_matmul_v3/op_api/quant_matmul_checker.cpp,
 * the L0 op QuantBatchMatmulV3 and its kernels). Definitions: quant_matmul.toml.
 *
 * acc[b, m, n] = sum_k x1[b, m, k] * x2[b, k, n] in int32 (exact, wrapping as the cube's int32 L0C), batch dims
 * broadcast, transposeX1 / transposeX2 (or transposed views, which the op_api folds into the flags) respected. Then:
 *   out INT32: acc + bias (int32);
 *   x2Scale UINT64 / INT64 (the TransQuantParamV2 words: the fp19 scale in bits 13..31, a 9-bit offset at 37), out
 *     FLOAT16 / BFLOAT16 / INT8: the fixpipe's dequant (acc + bias) * scale (+ offset for INT8), rounded once from
 *     the exact value to the output (RNE; INT8 saturating): the fixpipe's internal rounding is not published;
 *   x2Scale FLOAT / BFLOAT16 (the vector epilogue, quant_batch_matmul_v3_pertoken.h / _bf16.h): fp32 steps
 *     f = fp32(acc + int32 bias) * scale[n], * x1Scale[m] when given (pertoken), + a float bias widened to fp32,
 *     then Cast to the output with CAST_RINT.
 * Class c (figures in quant_matmul.toml). FLOAT8 / HIFLOAT8 inputs: fp8_dequant.h; the MX mode: quant_matmul_mx.c,
 * whose steps qmm_check calls at their places. A4W4 on Atlas A2: x1, x2 INT32 holding eight INT4 each (lowest
 * nibble first; the op_api's A4W4CaseProcess re-describes them as INT4, a transposed view first folded into its
 * flag), per-tensor / per-channel UINT64 words or per-token, the same int32 accumulation and dequant as A8W8.
 * A8W4 on Atlas A2 (x1 INT8, x2 INT32 holding INT4): quant_matmul_a8w4.c, called after CheckInputExistence.
 * Other modes of the V5 interface (A4W4 on Ascend 950, INT4 tensors given as such, FLOAT8 x FLOAT4, per-block, a
 * FRACTAL_NZ x2 on Atlas A2) are refused by the emulator with 161002 after the vendor's checks that precede them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/device.h"
#include "kernels/dtype.h"
#include "kernels/nz_layout.h"
#include "kernels/view.h"
#include "numerics/numerics.h"
#include "opbase/checks.h"
#include "ops_decls.h"
#include "quant/a8w8_dequant.h"
#include "quant/fp8_dequant.h"
#include "quant/quant_matmul.h"

static int qmm_is_fp8(aclDataType d) { return d == ACL_FLOAT8_E4M3FN || d == ACL_FLOAT8_E5M2; }

#define QMM_API (c->api)
#define X1S "x1Scale(pertokenScale)"
#define X2S "x2Scale(scale)"
#define X2O "x2Offset(offset)"

/* the view with its last two dims (and their strides) swapped: the op_api's re-description of a transposed view */
static void qmm_swap_last2(pyaclnn_stub_tensor *t) {
    int64_t d = t->ndim, a = t->shape[d - 1], s = t->strides[d - 1];
    t->shape[d - 1] = t->shape[d - 2], t->strides[d - 1] = t->strides[d - 2];
    t->shape[d - 2] = a, t->strides[d - 2] = s;
}

static int qmm_empty(const pyaclnn_stub_tensor *t) {
    if (!t->present) return 1;
    for (int64_t i = 0; i < t->ndim; i++)
        if (t->shape[i] == 0) return 1;
    return 0;
}

static const char *dt_name(aclDataType dt, char *b) { return op_dtype_name(dt, b); }

aclnnStatus qmm_dtype_not_support(op_call *c, const char *name, aclDataType dt, const aclDataType *list, int n) {
    for (int i = 0; i < n; i++)
        if (list[i] == dt) return ACLNN_SUCCESS;
    char b[24], all[200] = "[", x[24];
    for (int i = 0; i < n; i++) {
        strncat(all, dt_name(list[i], x), sizeof all - strlen(all) - 1);
        strncat(all, i + 1 < n ? ", " : "]", sizeof all - strlen(all) - 1);
    }
    return op_ez_reason(QMM_API, 0, name, "dtype", dt_name(dt, b), "the dtype of %s must be in dtype support list %s",
                        name, all);
}

aclnnStatus qmm_dtype_not_match(op_call *c, const char *name, aclDataType dt, aclDataType want) {
    if (dt == want) return ACLNN_SUCCESS;
    char a[24], b[24];
    return op_ez_reason(QMM_API, 0, name, "dtype", dt_name(dt, a), "the dtype of %s must be %s", name, dt_name(want, b));
}

/* not_null_qmm x1 x2 x2Scale out: OP_CHECK_COMM_INPUT (workspaceSize, executor) first, then CheckInputExistence's
 * required tensors (OP_CHECK_NULL). */
aclnnStatus opc_not_null_qmm(op_call *c, const op_step *s) {
    if (c->workspace_size == NULL) return op_failf(c->api, ACLNN_ERR_PARAM_NULLPTR, "workspaceSize is NULL");
    if (c->executor == NULL) return op_failf(c->api, ACLNN_ERR_PARAM_NULLPTR, "executor is NULL");
    for (int k = 0; k < s->np; k++)
        if (op_argument(c, s, k)->p == NULL)
            return op_failf(c->api, ACLNN_ERR_PARAM_NULLPTR, "%s is NULL", op_pname(c, s, k));
    return ACLNN_SUCCESS;
}

/* Ascend 950, x1 and x2 FLOAT8 (E4M3FN / E5M2) or both HIFLOAT8: without x1Scale the FLOAT8 / HIFLOAT8 branch of
 * CheckL0c2outOrL0c2ubPertensorPerchannel, with it CheckDoubleScaleAndFp8Hif8PertokenPerblock (per-block excluded
 * before: the emulator refuses it). */
static aclnnStatus qmm_fp8_dtypes(op_call *c, const pyaclnn_stub_tensor *x1, const pyaclnn_stub_tensor *x2,
                                  const pyaclnn_stub_tensor *s1, const pyaclnn_stub_tensor *s2,
                                  const pyaclnn_stub_tensor *x2o, const pyaclnn_stub_tensor *bias, aclDataType od,
                                  int pb) {
    static const aclDataType U64[] = {ACL_UINT64, ACL_INT64}, OUT[] = {ACL_FLOAT16, ACL_BF16, ACL_FLOAT};
    aclnnStatus rc;
    (void)x2;
    if (!s1->present) {
        if ((rc = qmm_dtype_not_support(c, X2S, s2->dtype, U64, 2))) return rc;
        if (bias->present && (rc = qmm_dtype_not_match(c, "bias", bias->dtype, ACL_FLOAT))) return rc;
        if (x2o->present)
            return op_ez_reason(QMM_API, 0, X2O, "value", "not null", "when x1 and x2 are FLOAT8 or HIFLOAT8, %s "
                                "must be null", X2O);
        /* HIF8_OUT_TYPE_SUPPORT_LIST and FP8_OUT_TYPE_SUPPORT_LIST hold the same three dtypes */
        return qmm_dtype_not_support(c, "out", od, OUT, 3);
    }
    (void)x1;
    if ((rc = qmm_dtype_not_match(c, X1S, s1->dtype, ACL_FLOAT))) return rc;
    if ((rc = qmm_dtype_not_match(c, X2S, s2->dtype, ACL_FLOAT))) return rc;
    if ((rc = qmm_dtype_not_support(c, "out", od, OUT, 3))) return rc;
    if (pb && bias->present)
        return op_ez_reason(QMM_API, 0, "bias", "value", "not null", "when the quantization mode is G-B or B-B, bias "
                            "must be null");
    if (bias->present && (rc = qmm_dtype_not_match(c, "bias", bias->dtype, ACL_FLOAT))) return rc;
    if (x2o->present)
        return op_ez_reason(QMM_API, 0, X2O, "value", "not null", "when x1 and x2 are FLOAT8 or HIFLOAT8 and %s and %s "
                            "are FLOAT, %s must be null", X1S, X2S, X2O);
    return ACLNN_SUCCESS;
}

/* qmm_check ...: after `read`, the V5 op_api's checks for the A8W8 path in its order (nz: the WeightNz entry's,
 * after qmm_nz_front's; x2nz is then x2 as the vendor re-describes it, t2nz its transpose flag). */
static aclnnStatus qmm_check(op_call *c, const op_step *s, const pyaclnn_stub_tensor *x2nz, int t2nz) {
    const pyaclnn_stub_tensor *x1 = op_tensor(c, s, 0), *x2 = x2nz ? x2nz : op_tensor(c, s, 1), *s1 = op_tensor(c, s, 2),
                              *s2 = op_tensor(c, s, 3), *ys = op_tensor(c, s, 4), *x1o = op_tensor(c, s, 5),
                              *x2o = op_tensor(c, s, 6), *yo = op_tensor(c, s, 7), *bias = op_tensor(c, s, 8),
                              *out = op_tensor(c, s, 12);
    int t1 = op_argument(c, s, 9)->i != 0, t2 = x2nz ? t2nz : op_argument(c, s, 10)->i != 0;
    int64_t group = op_argument(c, s, 11)->i;
    int soc950 = ew_soc_is_950(), nz = x2nz != NULL;
    char b1[24], b2[24], txt[200];
    if (!nz && soc950 && (x2->format == ACL_FORMAT_FRACTAL_NZ || x2->format == ACL_FORMAT_FRACTAL_NZ_C0_16))
        return op_ez_reason(QMM_API, 0, "x2", "format", "FORMAT_FRACTAL_NZ", "FORMAT_ND");
    /* CheckInputExistence: the unsupported quantisation tensors must be NULL or empty */
    int a8w4 = (x1->dtype == ACL_INT8 && x2->dtype == ACL_INT32) ||
               ((x1->dtype == ACL_FLOAT8_E4M3FN || x1->dtype == ACL_FLOAT8_E5M2) && x2->dtype == ACL_FLOAT4_E2M1);
    if (!a8w4 && ys->present && !qmm_empty(ys))
        return op_failf(c->api, ACLNN_ERR_PARAM_NULLPTR, "Parameter yScale of %s has incorrect value not empty/null. "
                        "Reason: The value of yScale must be empty tensor or nullptr.", QMM_API);
    if (x1o->present && !qmm_empty(x1o))
        return op_failf(c->api, ACLNN_ERR_PARAM_NULLPTR, "Parameter x1Offset of %s has incorrect value not empty/null. "
                        "Reason: The value of x1Offset must be empty tensor or nullptr.", QMM_API);
    if (a8w4 && x2o->present)
        return op_failf(c->api, ACLNN_ERR_PARAM_NULLPTR, "Parameter x2Offset of %s has incorrect value not empty/null. "
                        "Reason: The value of x2Offset must be empty tensor or nullptr.", QMM_API);
    if (yo->present && !qmm_empty(yo) && !(x1->dtype == ACL_INT8 && x2->dtype == ACL_INT32))
        return op_failf(c->api, ACLNN_ERR_PARAM_NULLPTR, "Parameter yOffset of %s has incorrect value not empty/null. "
                        "Reason: The value of yOffset must be empty tensor or nullptr.", QMM_API);
    /* A8W4 (x1 INT8, x2 INT32 holding INT4): its own checks from here (quant_matmul_a8w4.c) */
    if (!nz && x1->dtype == ACL_INT8 && x2->dtype == ACL_INT32) return qmm_a8w4_check(c, s);
    /* the emulator models the A8W8 modes, and on Ascend 950 the FLOAT8 / HIFLOAT8 ones with FLOAT / UINT64 scales of
     * one dimension (per-tensor, per-channel, per-token, double scale) and the MX mode (both scales FLOAT8_E8M0: the
     * checker's CheckMicroScaling answers for the x dtypes), and the FLOAT8 / HIFLOAT8 G-B / B-B modes (2-D FLOAT
     * scales); not the INT8 per-block mode (QuantBatchMatmulV4), not the A8W4 paths */
    int fin = soc950 && ((qmm_is_fp8(x1->dtype) && qmm_is_fp8(x2->dtype)) ||
                         (x1->dtype == ACL_HIFLOAT8 && x2->dtype == ACL_HIFLOAT8));
    int mx = soc950 && !a8w4 && s1->present && s1->dtype == ACL_FLOAT8_E8M0 && s2->dtype == ACL_FLOAT8_E8M0;
    int perblock = s1->present && s1->dtype == ACL_FLOAT && s2->dtype == ACL_FLOAT && s1->ndim > 1 && s2->ndim > 1;
    int pb = fin && perblock;
    /* A4W4 on Atlas A2: INT4 data packed eight to an INT32 (torch_npu's form), which the op_api re-describes as INT4
     * (A4W4CaseProcess) after CheckDimRange */
    int a4w4 = !soc950 && !nz && x1->dtype == ACL_INT32 && x2->dtype == ACL_INT32;
    if (!(x1->dtype == ACL_INT8 && x2->dtype == ACL_INT8) && !fin && !mx && !a4w4)
        return op_invalidf(c->api, "x1 %s, x2 %s: the emulator implements the A8W8 (INT8 x INT8) modes of "
                           "%.*s only", dt_name(x1->dtype, b1), dt_name(x2->dtype, b2),
                           (int)(strlen(c->api) - strlen("GetWorkspaceSize")), c->api);
    if (!nz && !soc950 && (x2->format == ACL_FORMAT_FRACTAL_NZ || x2->format == ACL_FORMAT_FRACTAL_NZ_C0_16))
        return op_invalidf(c->api, "x2 FORMAT_FRACTAL_NZ: the emulator implements the ND weight only");
    /* Ascend 950: an empty M or N succeeds at once (before PreMatmulCalcProcess) */
    if (soc950 && x1->ndim >= 2 && x2->ndim >= 2) {
        int64_t mm = t1 ? x1->shape[x1->ndim - 1] : x1->shape[x1->ndim - 2];
        int64_t nn = t2 ? x2->shape[x2->ndim - 2] : x2->shape[x2->ndim - 1];
        if (mm == 0 || (nn == 0 && !nz)) {   /* the NZ entry returns early on M = 0 only */
            c->nothing = 1;
            c->done = 1;
            return ACLNN_SUCCESS;
        }
    }
    /* A view transposed in its last two dims is read by the op_api as the transposed storage with the flag
     * flipped: the same logical matrix, so M, K, N and the kernel's indices follow the flags as given. */
    /* CheckDimRange */
    if (x2->ndim < 2 || x2->ndim > 6)
        return op_ez_reason(QMM_API, 0, "x2", "shape dim", (snprintf(txt, sizeof txt, "%lld", (long long)x2->ndim), txt),
                            "The shape dim of x2 must be in the valid range");
    if (x1->ndim < 2) return op_ez_expected(QMM_API, "x1", "shape dim", (snprintf(txt, sizeof txt, "%lld", (long long)x1->ndim), txt), "2D");
    if (out->ndim < 2) return op_ez_expected(QMM_API, "out", "shape dim", (snprintf(txt, sizeof txt, "%lld", (long long)out->ndim), txt), "2D");
    if (x1->ndim > 6)
        return op_ez_reason(QMM_API, 0, "x1", "shape dim", (snprintf(txt, sizeof txt, "%lld", (long long)x1->ndim), txt),
                            "The shape dim of x1 can not be larger than 6D");
    if (out->ndim > 6)
        return op_ez_reason(QMM_API, 0, "out", "shape dim", (snprintf(txt, sizeof txt, "%lld", (long long)out->ndim), txt),
                            "The shape dim of out can not be larger than 6D");
    /* TensorContiguousProcess (a transposed view: its storage, the flag flipped), then ConvertTensorToInt4: the
     * last dim times eight, the dtype INT4; the checks and the kernel see these */
    pyaclnn_stub_tensor x1a, x2a;
    int a4_swap1 = 0, a4_swap2 = 0;
    if (a4w4) {
        x1a = *x1, x2a = *x2;
        if ((a4_swap1 = qmm_transposed_view(x1))) qmm_swap_last2(&x1a), t1 = !t1;
        if ((a4_swap2 = qmm_transposed_view(x2))) qmm_swap_last2(&x2a), t2 = !t2;
        x1a.shape[x1a.ndim - 1] *= 8, x2a.shape[x2a.ndim - 1] *= 8;
        x1a.dtype = x2a.dtype = ACL_INT4;
        x1 = &x1a, x2 = &x2a;
    }
    /* CheckDtype */
    aclDataType od = out->dtype;
    aclnnStatus rc;
    /* MX, FLOAT8 / HIFLOAT8: x1, x2 and the scales as the op_api holds them after PreMatmulCalcProcess (a transposed
     * view folded into its flag; the scales re-described: MxScaleContiguousProcess, or TensorContiguousProcess
     * whose flag is dropped); then the checker's InferGroupSize */
    pyaclnn_stub_tensor x1v = *x1, x2v = *x2, s1v = *s1, s2v = *s2;
    int t1v = t1, t2v = t2, s1_swap = 0, s2_swap = 0;
    if (mx || fin) {
        if (qmm_transposed_view(x1)) qmm_swap_last2(&x1v), t1v = !t1v;
        if (qmm_transposed_view(x2)) qmm_swap_last2(&x2v), t2v = !t2v;
        if (mx) {
            s1_swap = qmm_mx_scale_view(s1, &s1v), s2_swap = qmm_mx_scale_view(s2, &s2v);
        } else {
            if ((s1_swap = s1->present && qmm_transposed_view(s1))) qmm_swap_last2(&s1v);
            if ((s2_swap = qmm_transposed_view(s2))) qmm_swap_last2(&s2v);
        }
        if ((rc = qmm_infer_group(c, &x1v, &x2v, &s1v, &s2v, t1v, t2v, &group))) return rc;
    }
    static const aclDataType U64[] = {ACL_UINT64, ACL_INT64}, BF_SC[] = {ACL_FLOAT, ACL_BF16},
                             BIAS_L[] = {ACL_INT32, ACL_BF16, ACL_FLOAT}, PT_FP16_BIAS[] = {ACL_INT32, ACL_FLOAT16, ACL_FLOAT},
                             PT_BF16_BIAS[] = {ACL_INT32, ACL_BF16, ACL_FLOAT}, PT_OUT[] = {ACL_FLOAT16, ACL_BF16},
                             I8_SC[] = {ACL_UINT64, ACL_INT64, ACL_FLOAT, ACL_BF16},
                             I8_OUT[] = {ACL_INT8, ACL_FLOAT16, ACL_BF16, ACL_INT32}, I48[] = {ACL_INT4, ACL_INT8};
    if (!soc950) {
        if (a4w4 && !s1->present) {   /* CheckDtypeValidOnOnlyL0c2outForA4W4 (x1, x2 are INT4 here) */
            if (s2->dtype != ACL_UINT64 && s2->dtype != ACL_INT64)
                return op_ez_reason(QMM_API, 0, X2S, "dtype", dt_name(s2->dtype, b1), "in A4W4 scenario and %s is "
                                    "null, the dtype of %s must be UINT64 or INT64", X1S, X2S);
            if (bias->present && bias->dtype != ACL_INT32)
                return op_ez_reason(QMM_API, 0, "bias", "dtype", dt_name(bias->dtype, b1), "in A4W4 scenario and %s "
                                    "is null, the dtype of bias must be INT32", X1S);
            if (od != ACL_FLOAT16 && od != ACL_BF16)
                return op_ez_reason(QMM_API, 0, "out", "dtype", dt_name(od, b1), "in A4W4 scenario, the dtype of out "
                                    "must be FLOAT16 or BFLOAT16");
        } else if (!s1->present) {   /* CheckL0c2outAndL0c2ubPertensorPerchannel */
            if (od == ACL_INT32) {
                if (s2->dtype != ACL_FLOAT && s2->dtype != ACL_BF16)
                    return op_ez_reason(QMM_API, 0, X2S, "dtype", dt_name(s2->dtype, b1), "when the dtype of out is "
                                        "INT32, the dtype of %s must be FLOAT or BFLOAT16", X2S);
                if (bias->present && bias->dtype != ACL_INT32)
                    return op_ez_reason(QMM_API, 0, "bias", "dtype", dt_name(bias->dtype, b1),
                                        "when the dtype of out is INT32, the dtype of bias must be INT32");
            } else if (od == ACL_BF16) {
                if ((rc = qmm_dtype_not_support(c, X2S, s2->dtype, BF_SC, 2))) return rc;
                if (group != 0 && (rc = qmm_dtype_not_match(c, X2S, s2->dtype, ACL_BF16))) return rc;
                if (bias->present && (rc = qmm_dtype_not_support(c, "bias", bias->dtype, BIAS_L, 3))) return rc;
                if (x2o->present)
                    return op_ez_reason(QMM_API, 0, X2O, "value", "not null", "when the dtype of out is BFLOAT16, %s "
                                        "must be null", X2O);
            } else if (od == ACL_INT8) {
                if ((rc = qmm_dtype_not_support(c, X2S, s2->dtype, U64, 2))) return rc;
                if (bias->present && (rc = qmm_dtype_not_match(c, "bias", bias->dtype, ACL_INT32))) return rc;
                if (x2o->present && (rc = qmm_dtype_not_match(c, X2O, x2o->dtype, ACL_FLOAT))) return rc;
            } else if (od == ACL_FLOAT16) {
                if ((rc = qmm_dtype_not_support(c, X2S, s2->dtype, U64, 2))) return rc;
                if (bias->present && (rc = qmm_dtype_not_match(c, "bias", bias->dtype, ACL_INT32))) return rc;
                if (x2o->present)
                    return op_ez_reason(QMM_API, 0, X2O, "value", "not null", "when the dtype of out is FLOAT16, %s "
                                        "must be null", X2O);
            } else {
                return op_ez_reason(QMM_API, 0, "out", "dtype", dt_name(od, b1),
                                    "the dtype of out must be INT32, BFLOAT16, INT8 or FLOAT16");
            }
        } else {               /* CheckOnlyL0c2outPertoken */
            if ((rc = qmm_dtype_not_support(c, "x2", x2->dtype, I48, 2))) return rc;
            if ((rc = qmm_dtype_not_match(c, X1S, s1->dtype, ACL_FLOAT))) return rc;
            if (od == ACL_BF16) {
                if ((rc = qmm_dtype_not_support(c, X2S, s2->dtype, BF_SC, 2))) return rc;
                if (bias->present && (rc = qmm_dtype_not_support(c, "bias", bias->dtype, PT_BF16_BIAS, 3))) return rc;
            } else if (od == ACL_FLOAT16) {
                if ((rc = qmm_dtype_not_match(c, X2S, s2->dtype, ACL_FLOAT))) return rc;
                if (bias->present && (rc = qmm_dtype_not_support(c, "bias", bias->dtype, PT_FP16_BIAS, 3))) return rc;
            } else {
                return op_ez_reason(QMM_API, 0, "out", "dtype", dt_name(od, b1), "when x1/x2 are INT8/INT4 and %s, %s "
                                    "are FLOAT, the dtype of out must be BFLOAT16 or FLOAT16", X1S, X2S);
            }
            if (x2o->present && s1->dtype != ACL_FLOAT && s2->dtype != ACL_FLOAT)
                return op_ez_reason(QMM_API, 0, X2O, "value", "not null", "when x1 and x2 are INT8 and the dtypes of "
                                    "%s and %s are outside FLOAT, %s must be null", X1S, X2S, X2O);
        }
    } else {
        if (od == ACL_INT32 && s1->present)
            return op_ez_reason(QMM_API, 0, X1S, "value", "not null", "when the dtype of out is INT32, "
                                "pertokenScaleOptional/x1Scale(pertokenScale) must be null");
        if (!s1->present && od == ACL_INT32 && fin)   /* CheckL0c2outOrL0c2ubPertensorPerchannel */
            return op_ez_reason(QMM_API, 1, "x1, x2", "dtypes", (snprintf(txt, sizeof txt, "DT_%s, DT_%s",
                                dt_name(x1->dtype, b1), dt_name(x2->dtype, b2)), txt),
                                "when the dtype of out is INT32, the dtypes of x1 and x2 must be INT8");
        if (mx) {   /* CheckMicroScaling */
            if ((rc = qmm_mx_dtypes(c, x1, x2, x2o, bias, od))) return rc;
        } else if (fin) {
            if ((rc = qmm_fp8_dtypes(c, x1, x2, s1, s2, x2o, bias, od, pb))) return rc;
        } else if (!s1->present) {   /* CheckL0c2outOrL0c2ubPertensorPerchannel4Int8Input */
            if (od == ACL_BF16) {
                if ((rc = qmm_dtype_not_support(c, X2S, s2->dtype, I8_SC, 4))) return rc;
            } else if (od == ACL_INT8 || od == ACL_FLOAT16) {
                if ((rc = qmm_dtype_not_support(c, X2S, s2->dtype, U64, 2))) return rc;
            } else if (od == ACL_INT32) {
                if ((rc = qmm_dtype_not_support(c, X2S, s2->dtype, BF_SC, 2))) return rc;
            }
            if (bias->present) {
                if (od == ACL_INT32 && bias->dtype != ACL_INT32)
                    return op_ez_reason(QMM_API, 0, "bias", "dtype", dt_name(bias->dtype, b1),
                                        "when the dtype of out is INT32, the dtype of bias must be INT32");
                if (od == ACL_BF16 && (s2->dtype == ACL_FLOAT || s2->dtype == ACL_BF16) &&
                    (rc = qmm_dtype_not_support(c, "bias", bias->dtype, BIAS_L, 3)))
                    return rc;
                if ((od == ACL_INT8 || od == ACL_FLOAT16 || od == ACL_BF16) &&
                    (s2->dtype == ACL_UINT64 || s2->dtype == ACL_INT64) &&
                    (rc = qmm_dtype_not_match(c, "bias", bias->dtype, ACL_INT32)))
                    return rc;
            }
            if (x2o->present) {
                if (od != ACL_INT8)
                    return op_ez_reason(QMM_API, 0, X2O, "value", "not null", "when x1 and x2 are INT8 and the dtype "
                                        "of out is outside INT8, %s must be null", X2O);
                if ((rc = qmm_dtype_not_match(c, X2O, x2o->dtype, ACL_FLOAT))) return rc;
            }
            if ((rc = qmm_dtype_not_support(c, "out", od, I8_OUT, 4))) return rc;
        } else {               /* CheckL0c2outOrL0c2ubPertoken */
            if ((rc = qmm_dtype_not_support(c, "out", od, PT_OUT, 2))) return rc;
            if ((rc = qmm_dtype_not_match(c, X1S, s1->dtype, ACL_FLOAT))) return rc;
            if (x2o->present)
                return op_ez_reason(QMM_API, 0, X2O, "value", "not null", "when x1 and x2 are INT8 with %s, %s must "
                                    "be null", X1S, X2O);
            if (od == ACL_BF16) {
                if ((rc = qmm_dtype_not_support(c, X2S, s2->dtype, BF_SC, 2))) return rc;
                if (bias->present && (rc = qmm_dtype_not_support(c, "bias", bias->dtype, PT_BF16_BIAS, 3))) return rc;
            } else {
                if ((rc = qmm_dtype_not_match(c, X2S, s2->dtype, ACL_FLOAT))) return rc;
                if (bias->present && (rc = qmm_dtype_not_support(c, "bias", bias->dtype, PT_FP16_BIAS, 3))) return rc;
            }
        }
    }
    /* CheckShape: CheckScaleDimRange, CheckGroupSize, K, CheckDimValue, batch inference, bias, out */
    if (mx) {
        if ((rc = qmm_mx_scale_dims(c, &x1v, &x2v, &s1v, &s2v, group))) return rc;
    } else if (!s1->present) {
        if (s2->ndim != 1)
            return op_ez_reason(QMM_API, 0, X2S, "shape dim", (snprintf(txt, sizeof txt, "%lldD", (long long)s2->ndim), txt),
                                "the shape dim of %s must be 1D", X2S);
    } else {
        if (pb ? s1->ndim != x1->ndim : s1->ndim != 1)   /* CheckNormalScaleDimRange */
            return op_ez_reason(QMM_API, 1, X1S ", x1", "shape dims",
                                (snprintf(txt, sizeof txt, "%lldD, %lldD", (long long)s1->ndim, (long long)x1->ndim), txt),
                                "when the quantization mode is G-B or B-B, the shape dim of %s must be the same as the "
                                "shape dim of x1; otherwise, the shape dim of %s must be 1D", X1S, X1S);
        if (pb ? s2->ndim != x2->ndim : s2->ndim != 1)
            return op_ez_reason(QMM_API, 1, X2S ", x2", "shape dims",
                                (snprintf(txt, sizeof txt, "%lldD, %lldD", (long long)s2->ndim, (long long)x2->ndim), txt),
                                "when the quantization mode is G-B or B-B, the shape dim of %s must be the same as the "
                                "shape dim of x2; otherwise, the shape dim of %s must be 1D", X2S, X2S);
    }
    if (pb && (rc = qmm_pb_group_size(c, group))) return rc;   /* CheckPerblockGroupSize */
    if (soc950 && group != 0 && !mx && !pb)
        return op_ez_reason(QMM_API, 1, "groupSize, groupSizeM, groupSizeN, groupSizeK", "values",
                            (snprintf(txt, sizeof txt, "%lld, %llu, %llu, %llu", (long long)group,
                                      (unsigned long long)((uint64_t)group >> 32 & 0xFFFF),
                                      (unsigned long long)((uint64_t)group >> 16 & 0xFFFF),
                                      (unsigned long long)((uint64_t)group & 0xFFFF)), txt),
                            "when the quantization mode is other than G-B, B-B, or mx, groupSize must be 0 and Torch "
                            "API group_sizes must be [0, 0, 0] or None");
    int64_t d1 = x1->ndim, d2 = x2->ndim;
    int64_t k1 = t1 ? x1->shape[d1 - 2] : x1->shape[d1 - 1], m = t1 ? x1->shape[d1 - 1] : x1->shape[d1 - 2];
    int64_t k2 = t2 ? x2->shape[d2 - 1] : x2->shape[d2 - 2], n = t2 ? x2->shape[d2 - 2] : x2->shape[d2 - 1];
    if (a4w4) {   /* CheckShapeInt4 */
        if (k1 <= 0 || k1 % 2)
            return op_ez_reason(QMM_API, 0, "x1", "value", (snprintf(txt, sizeof txt, "%lld", (long long)k1), txt),
                                "in A4W4 scenario, the K dimension of x1 must be positive and even");
        if (t2 && (k2 <= 0 || k2 % 2))
            return op_ez_reason(QMM_API, 0, "x2", "value", (snprintf(txt, sizeof txt, "%lld", (long long)k2), txt),
                                "in A4W4 scenario and transposeX2 is true, the K dimension of x2 must be positive and "
                                "even");
        if (!t2 && (n <= 0 || n % 2))
            return op_ez_reason(QMM_API, 0, "x2", "value", (snprintf(txt, sizeof txt, "%lld", (long long)n), txt),
                                "in A4W4 scenario and transposeX2 is false, the N dimension of x2 must be positive and "
                                "even");
        if (t1)
            return op_ez_reason(QMM_API, 0, "transposeX1", "value", "true", "in A4W4 scenario, transposeX1 must be "
                                "false");
        if (x2->ndim != 2)
            return op_ez_reason(QMM_API, 0, "x2", "shape dim", (snprintf(txt, sizeof txt, "%lldD", (long long)x2->ndim), txt),
                                "in A4W4 scenario, the shape dim of x2 must be 2D");
        if (bias->present && bias->ndim != 1)
            return op_ez_reason(QMM_API, 0, "bias", "shape dim", (snprintf(txt, sizeof txt, "%lldD", (long long)bias->ndim), txt),
                                "in A4W4 scenario, the shape dim of bias must be 1D");
    }
    if (k1 != k2)
        return op_ez_reason(QMM_API, 1, "x1 K, x2 K", "values", (snprintf(txt, sizeof txt, "%lld, %lld", (long long)k1, (long long)k2), txt),
                            "the K dimension of x1 and x2 must be equal");
    if (mx) {   /* CheckDimValueMicroScaling, which returns before the 1-D scale checks */
        if ((rc = qmm_mx_dim_value(c, &x1v, &x2v, &s1v, &s2v, t1v, t2v, m, k1, n))) return rc;
    } else if (pb) {   /* CheckDimValuePerblock, which returns before the 1-D scale checks too */
        if ((rc = qmm_pb_dim_value(c, &x1v, &x2v, &s1v, &s2v, t1v, t2v, group))) return rc;
    } else if (s1->present) {   /* CheckDimValuePertokenDoubleScale (INT8 inputs) */
        int64_t s10 = s1->shape[0];
        if (m != 1 && s10 == 1 && fin) {   /* double scale */
            if (s2->shape[0] != 1 && s2->shape[0] != n)
                return op_ez_reason(QMM_API, 0, X2S, "shape", (snprintf(txt, sizeof txt, "%lld", (long long)s2->shape[0]), txt),
                                    "when the shape of %s is [1], the shape of %s must be [1] or [%lld]", X1S, X2S,
                                    (long long)n);
        } else if ((m == 1 && s10 != 1) || (m != 1 && s10 != m))
            return op_ez_reason(QMM_API, 0, X1S, "shape", (snprintf(txt, sizeof txt, "%lld", (long long)s10), txt),
                                m == 1 ? "when %s and %s are 1D and the M dimension of x1 is 1, the shape of %s must be [1]"
                                       : "when %s and %s are 1D, the shape of %s must be [%lld]", X1S, X2S, X1S, (long long)m);
    }
    if (!mx && !pb && s2->shape[0] != n && s2->shape[0] != 1)
        return op_ez_reason(QMM_API, 0, X2S, "value", (snprintf(txt, sizeof txt, "%lld", (long long)s2->shape[0]), txt),
                            "when the quantization mode of x2 is pertensor or perchannel, the last dimension of %s must "
                            "be %lld or 1", X2S, (long long)n);
    if (!mx && !pb && x2o->present) {
        if (x2o->ndim != 1)
            return op_ez_reason(QMM_API, 0, X2O, "shape dim", (snprintf(txt, sizeof txt, "%lldD", (long long)x2o->ndim), txt),
                                "the shape dim of %s must be 1D", X2O);
        if (x2o->shape[0] != n && x2o->shape[0] != 1)
            return op_ez_reason(QMM_API, 0, X2O, "value", (snprintf(txt, sizeof txt, "%lld", (long long)x2o->shape[0]), txt),
                                "the first dimension of %s must be %lld or 1", X2O, (long long)n);
    }
    int64_t od_n = d1 > d2 ? d1 : d2, off = od_n - (d1 < d2 ? d1 : d2), nb = od_n - 2, batch = 1;
    const pyaclnn_stub_tensor *lg = d1 > d2 ? x1 : x2, *sh = d1 > d2 ? x2 : x1;
    int64_t bshape[QMM_MAX_BATCH] = {0};
    for (int64_t i = 0; i < nb; i++) {
        int64_t L = lg->shape[i], S = i < off ? 1 : sh->shape[i - off];
        if (S > 1 && L > 1 && S != L)
            return op_ez_reason(QMM_API, 1, "short batch dimension, long batch dimension", "values",
                                (snprintf(txt, sizeof txt, "%lld, %lld", (long long)S, (long long)L), txt),
                                "the batch dimensions of x1 and x2 must be broadcastable");
        bshape[i] = L > S ? L : S;
        batch *= bshape[i];
    }
    int bias3d = 0;
    if (bias->present) {
        if (bias->ndim != 3 && bias->ndim != 1)
            return op_ez_reason(QMM_API, 0, "bias", "shape dim", (snprintf(txt, sizeof txt, "%lldD", (long long)bias->ndim), txt),
                                "the shape dim of bias must be 1D or 3D");
        if (bias->ndim == 1) {
            if (bias->shape[0] != n)
                return op_ez_reason(QMM_API, 0, "bias", "shape", (snprintf(txt, sizeof txt, "%lld", (long long)bias->shape[0]), txt),
                                    "the shape of bias must be [%lld]", (long long)n);
        } else {
            bias3d = 1;
            if (nb != 1)
                return op_ez_reason(QMM_API, 0, "inferred out batch dimension", "value",
                                    (snprintf(txt, sizeof txt, "%lld", (long long)nb), txt),
                                    "when the shape dim of bias is 3D, the inferred out batch dimension must be 1");
            if (bias->shape[1] != 1)
                return op_ez_reason(QMM_API, 0, "bias second dimension", "value",
                                    (snprintf(txt, sizeof txt, "%lld", (long long)bias->shape[1]), txt),
                                    "when the shape dim of bias is 3D, the second dimension of bias must be 1");
            if (bias->shape[2] != n)
                return op_ez_reason(QMM_API, 0, "bias last dimension", "value",
                                    (snprintf(txt, sizeof txt, "%lld", (long long)bias->shape[2]), txt),
                                    "when the shape dim of bias is 3D, the last dimension of bias must be %lld", (long long)n);
            if (bias->shape[0] != batch)
                return op_ez_reason(QMM_API, 1, "bias first dimension, inferred out batch dimension", "values",
                                    (snprintf(txt, sizeof txt, "%lld, %lld", (long long)bias->shape[0], (long long)batch), txt),
                                    "when the shape dim of bias is 3D, the first dimension of bias must be equal to the "
                                    "inferred out batch dimension");
        }
    }
    int64_t on = out->ndim, om = out->shape[on - 2], onn = out->shape[on - 1];
    if (om == 1 && nb == 0 && on == 3 && d1 == 2 && d2 == 2) on = 2, om = out->shape[0];
    if (on != nb + 2)
        return op_ez_reason(QMM_API, 0, "out", "shape dim", (snprintf(txt, sizeof txt, "%lldD", (long long)on), txt),
                            "the shape dim of out must be %lldD", (long long)(nb + 2));
    if (om != m)
        return op_ez_reason(QMM_API, 1, "out M, x1 M", "values", (snprintf(txt, sizeof txt, "%lld, %lld", (long long)om, (long long)m), txt),
                            "the M dimension of out must be equal to the M dimension of x1");
    if (onn != n)
        return op_ez_reason(QMM_API, 1, "out N, x2 N", "values", (snprintf(txt, sizeof txt, "%lld, %lld", (long long)onn, (long long)n), txt),
                            "the N dimension of out must be equal to the N dimension of x2");
    for (int64_t i = 0; i < nb; i++)
        if (out->shape[i] != bshape[i])
            return op_ez_reason(QMM_API, 1, "out batch dimension, inferred output batch dimension", "values",
                                (snprintf(txt, sizeof txt, "%lld, %lld", (long long)out->shape[i], (long long)bshape[i]), txt),
                                "the batch dimension %lld of out must be equal to the inferred output batch dimension",
                                (long long)i);
    /* CheckFormat (CHECK_RET: no message of its own) on the tensors CommonProcess hands the checker: x1, the scales
     * and bias re-formatted to ND unless FRACTAL_NZ (SetTensorToNDFormat / GetNDFormat: torch_npu's 3-D and 4-D
     * tensors come as NCL / NCHW), x2Offset as given */
    const pyaclnn_stub_tensor *fm[] = {x1, s1, s2, bias};
    for (int i = 0; i < 4; i++)
        if ((fm[i]->present && fm[i]->format == ACL_FORMAT_FRACTAL_NZ) || (x2o->present && x2o->format != ACL_FORMAT_ND))
            return op_invalidf(c->api, "the storage formats of x1, the scales, offset and bias must be ND");
    /* CheckEmptyTensor */
    if (qmm_empty(x1) || qmm_empty(x2))
        return op_ez_reason(QMM_API, 1, "x1, x2", "values", qmm_empty(x1) ? (qmm_empty(x2) ? "empty, empty" : "empty, not empty")
                            : "not empty, empty", "x1 and x2 can not be empty");
    if (mx && (rc = qmm_mx_tiling(c, &s1v, &s2v, t1v, t2v, m, k1, n))) return rc;
    qmm_params *p = op_params(c, sizeof *p);
    p->m = m, p->k = k1, p->n = n, p->nb = nb;
    memcpy(p->bshape, bshape, sizeof bshape);
    for (int64_t i = 0; i < nb; i++) {
        p->x1b[i] = i - (od_n - d1) >= 0 ? x1->shape[i - (od_n - d1)] : 1;
        p->x2b[i] = i - (od_n - d2) >= 0 ? x2->shape[i - (od_n - d2)] : 1;
    }
    p->trans1 = t1;   /* the kernel reads the view's own (logical) indices */
    p->trans2 = t2;
    if (nz) {
        p->nz = 1, p->nz_rows = x2->shape[d2 - 2], p->nz_cols = x2->shape[d2 - 1], p->nz_batch = 1;
        for (int64_t i = 0; i + 2 < d2; i++) p->nz_batch *= x2->shape[i];
    }
    p->scale_u64 = s2->dtype == ACL_UINT64 || s2->dtype == ACL_INT64;
    p->scale_n = s2->shape[0] == n && n != 1;
    p->pertoken = s1->present;
    p->scale_dt = s2->dtype, p->out_dt = od;
    p->bias_kind = !bias->present ? QMM_BIAS_NONE : bias->dtype == ACL_INT32 ? QMM_BIAS_INT32 : QMM_BIAS_FLOAT;
    p->bias_dt = bias->present ? bias->dtype : ACL_DT_UNDEFINED;
    p->bias3d = bias3d;
    p->has_offset = x2o->present;
    p->offset_n = x2o->present && x2o->shape[0] == n && n != 1;
    p->fin = fin;
    p->s1_scalar = fin && s1->present && s1->shape[0] == 1;
    /* the tiling's kernel choice (IsCubeBasicApiCapable, IsFp8OrHif8TTFloatBiasMix): UINT64 words go through the
     * fixpipe; a FLOAT8 / HIFLOAT8 double scale with x2Scale [1] and no FLOAT bias too, with one scale folded from
     * the two; everything else is the vector epilogue */
    p->mx = mx;
    p->s1_kmajor = t1v, p->s2_kmajor = !t2v;   /* [ceil(K/64), M, 2] with transposeX1, [ceil(K/64), N, 2] without X2's */
    p->s1_swap = s1_swap, p->s2_swap = s2_swap;
    p->a4w4 = a4w4, p->a4_swap1 = a4_swap1, p->a4_swap2 = a4_swap2;
    p->pb = pb;
    p->pb_gsm = ((uint64_t)group >> 32 & 0xFFFF) > 1 ? (int64_t)((uint64_t)group >> 32 & 0xFFFF) : 1;
    p->dq = p->scale_u64 ? QMM_DQ_FIXPIPE
          : (p->s1_scalar && s2->shape[0] == 1 && p->bias_kind != QMM_BIAS_FLOAT) ? QMM_DQ_DOUBLE : QMM_DQ_VECTOR;
    return ACLNN_SUCCESS;
}

aclnnStatus opc_qmm_check(op_call *c, const op_step *s) { return qmm_check(c, s, NULL, 0); }

static int qmm_nonempty(const pyaclnn_stub_tensor *t) { return t->present && !qmm_empty(t); }

/* qmm_nz_check ... (same operands as qmm_check): aclnnQuantMatmulWeightNzGetWorkspaceSize's own checks in its order
 * (checkNotSupportParam, CheckWeightNzParamsDAV3510, x2's view rank, GetTransposeAttrValue, the NZ storage size),
 * then the common checks with x2 as the op_api re-describes it. */
aclnnStatus opc_qmm_nz_check(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x1 = op_tensor(c, s, 0), *x2 = op_tensor(c, s, 1), *s1 = op_tensor(c, s, 2),
                              *s2 = op_tensor(c, s, 3), *ys = op_tensor(c, s, 4), *x1o = op_tensor(c, s, 5),
                              *yo = op_tensor(c, s, 7);
    int t2 = op_argument(c, s, 10)->i != 0;
    int64_t group = op_argument(c, s, 11)->i;
    char b1[24], b2[24], txt[200];
    aclDataType d1 = x1->dtype, d2 = x2->dtype;
    int a8w4_float = d1 == ACL_FLOAT8_E4M3FN && (d2 == ACL_FLOAT || d2 == ACL_FLOAT4_E2M1);
    int a8w4_msd = d1 == ACL_INT8 && (d2 == ACL_INT4 || d2 == ACL_INT32) && s2->dtype == ACL_UINT64 && s1->present &&
                   s1->dtype == ACL_FLOAT;
    int mx = s2->dtype == ACL_FLOAT8_E8M0;
    int quant_in1 = d1 == ACL_INT8 || d1 == ACL_FLOAT8_E4M3FN || d1 == ACL_FLOAT8_E5M2 || d1 == ACL_HIFLOAT8;
    int quant_in2 = d2 == ACL_INT8 || d2 == ACL_FLOAT8_E4M3FN || d2 == ACL_FLOAT8_E5M2 || d2 == ACL_HIFLOAT8;
    int perblock = quant_in1 && quant_in2 && s1->present && s1->dtype == ACL_FLOAT && s1->ndim > 1 &&
                   s2->dtype == ACL_FLOAT && s2->ndim > 1;
    /* checkNotSupportParam */
    if (qmm_nonempty(x1o)) return op_invalidf(c->api, "Current version do not support x1Offset.");
    if (qmm_nonempty(yo) && !a8w4_msd) return op_invalidf(c->api, "Current version do not support yOffset.");
    if (!(a8w4_float || mx)) {
        if (qmm_nonempty(ys)) return op_invalidf(c->api, "Current version do not support yScale.");
        if (group != 0 && !perblock) return op_invalidf(c->api, "Current version do not support groupSize.");
    }
    /* CheckWeightNzParamsDAV3510 (Ascend 950 only) */
    if (ew_soc_is_950()) {
        if (d1 == ACL_INT8 && d2 == ACL_INT8 && ((s1->present && s1->ndim != 1) || s2->ndim != 1)) {
            char a[24];
            snprintf(a, sizeof a, s1->present ? "%lldD" : "null", (long long)s1->ndim);
            snprintf(txt, sizeof txt, "%s, %lldD", a, (long long)s2->ndim);
            return op_ez_reason(QMM_API, 1, "x1Scale, x2Scale", "shape dims", txt, "when x1 and x2 dtypes are INT8, "
                                "x1Scale must be null or 1D and x2Scale must be 1D");
        }
        if (!a8w4_float) {
            if ((x2->format & 0xff) != ACL_FORMAT_FRACTAL_NZ)
                return op_ez_reason(QMM_API, 0, "x2", "format", op_format_name(x2->format, b1),
                                    "the format of x2 must be FRACTAL_NZ");
            int64_t k = x2->ndim >= 2 ? x2->shape[x2->ndim - 2] : 0, n = x2->ndim >= 1 ? x2->shape[x2->ndim - 1] : 0;
            if (k == 1 || n == 1)
                return op_ez_reason(QMM_API, 1, "x2 K, x2 N", "values",
                                    (snprintf(txt, sizeof txt, "%lld, %lld", (long long)k, (long long)n), txt),
                                    "when the format of x2 is FRACTAL_NZ, the k dimension and n dimension of x2 can "
                                    "not be 1");
        }
    }
    if (x2->ndim < 2)
        return op_invalidf(c->api, "x2's view dimNum should greater than 1, but is %lld.", (long long)x2->ndim);
    /* the emulator models the A8W8 mode only (the vendor's A8W4 / MX / FP8 / HiFloat8 / INT4 paths follow here) */
    if (d1 != ACL_INT8 || d2 != ACL_INT8)
        return op_invalidf(c->api, "x1 %s, x2 %s: the emulator implements the A8W8 (INT8 x INT8) mode of "
                           "aclnnQuantMatmulWeightNz only", dt_name(d1, b1), dt_name(d2, b2));
    /* GetTransposeAttrValue(x2, transposeX2, false): a view transposed in its last two dims is its storage with
     * the flag flipped */
    pyaclnn_stub_tensor v = *x2;
    int64_t r = v.ndim - 2;
    if (v.strides[r] == 1 && v.strides[r + 1] == v.shape[r]) {
        int64_t t = v.shape[r];
        v.shape[r] = v.shape[r + 1], v.shape[r + 1] = t;
        t = v.strides[r];
        v.strides[r] = v.strides[r + 1], v.strides[r + 1] = t;
        t2 = !t2;
    }
    /* GetWeightNzShape / CheckWeightNzStorageShape: the NZ shape of the stored (rows, cols) matrix, INT8's C0 32,
     * against the storage shape's element count only */
    int64_t want = 1, have = 1;
    for (int64_t i = 0; i < r; i++) want = op_mul_sat(want, v.shape[i]);
    want = op_mul_sat(want, op_mul_sat((v.shape[r] + 15) / 16 * 16, (v.shape[r + 1] + 31) / 32 * 32));
    for (int64_t i = 0; i < x2->storage_ndim; i++) have = op_mul_sat(have, x2->storage_shape[i]);
    if (want != have)
        return op_invalidf(c->api, "x2'format only support NZ, but now x2's format is not NZ(Ascend affinity format). "
                           "aclnnCalculateMatmulWeightSizeV2 and aclnnTransMatmulWeight can be used to convert the "
                           "input format from ND to Ascend affinity format.");
    return qmm_check(c, s, &v, t2);
}

/* ---- kernel --------------------------------------------------------------------------------- */

/* x2's stored ND matrices (nz_batch x rows x cols, row-major) read out of its FRACTAL_NZ storage (C0 32, N0 16). */
static int qmm_nz_in_memory(const pyaclnn_stub_launch *launch, const qmm_params *p, const pyaclnn_stub_tensor *t) {
    pyaclnn_stub_tensor store = *t;
    store.ndim = 1;
    store.shape[0] = p->nz_batch * ((p->nz_rows + 15) / 16 * 16) * ((p->nz_cols + 31) / 32 * 32);
    store.strides[0] = 1;
    if (op_view_in_device_memory(&store, 8)) return 1;
    pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "%s: x2's FRACTAL_NZ storage (data %p, offset %lld) is not "
                           "in device memory", launch->op_name, t->data, (long long)t->offset);
    return 0;
}

static int8_t *qmm_nz_untile(const qmm_params *p, const pyaclnn_stub_tensor *t) {
    int64_t R = p->nz_rows, C = p->nz_cols, total = p->nz_batch * R * C;
    int8_t *nd = tv_alloc(total, 1);
    if (nd == NULL) return NULL;
    const int8_t *src = (const int8_t *)t->data + t->offset;
    for (int64_t b = 0; b < p->nz_batch; b++)
        for (int64_t i = 0; i < R; i++)
            for (int64_t j = 0; j < C; j++) nd[(b * R + i) * C + j] = src[nz_layout_index(b, i, j, R, C, 16, 32)];
    return nd;
}

/* (quant_matmul.h) */
int8_t *qmm_int4_unpack(const pyaclnn_stub_tensor *t, int swap) {
    pyaclnn_stub_tensor v = *t;
    if (swap) qmm_swap_last2(&v);
    int64_t bytes = pyaclnn_stub_numel(&v) * 4;
    unsigned char *raw = tv_gather_bytes(&v);
    int8_t *out = raw ? tv_alloc(bytes * 2, 1) : NULL;
    for (int64_t i = 0; out && i < bytes; i++) {
        out[2 * i] = (int8_t)(((raw[i] & 0xF) ^ 8) - 8);
        out[2 * i + 1] = (int8_t)(((raw[i] >> 4) ^ 8) - 8);
    }
    free(raw);
    return out;
}

/* FLOAT8 / HIFLOAT8 x1, x2 (fp8_dequant.h): fp32 accumulation, then the dequant the tiling picks */
static void qmm_fp8_kernel(const pyaclnn_stub_launch *launch, const qmm_params *p) {
    const pyaclnn_stub_tensor *tx1 = &launch->inputs[0], *tx2 = &launch->inputs[1], *ts1 = &launch->inputs[2],
                              *ts2 = &launch->inputs[3], *tb = &launch->inputs[5], *out = &launch->outputs[0];
    int64_t M = p->m, K = p->k, N = p->n, batch = 1;
    for (int64_t i = 0; i < p->nb; i++) batch *= p->bshape[i];
    float *x1 = tv_load_float(tx1), *x2 = tv_load_float(tx2);
    unsigned char *s2raw = p->scale_u64 ? tv_gather_bytes(ts2) : NULL;
    float *s2f = p->scale_u64 ? NULL : tv_load_float(ts2);
    float *s1 = p->pertoken ? tv_load_float(ts1) : NULL;
    float *bf = p->bias_kind == QMM_BIAS_FLOAT ? tv_load_float(tb) : NULL;
    float *res = tv_alloc(batch * M * N, sizeof(float));
    if (!x1 || !x2 || (p->scale_u64 ? !s2raw : !s2f) || (p->pertoken && !s1) || (p->bias_kind == QMM_BIAS_FLOAT && !bf) ||
        !res) {
        tv_fail_oom(launch);
        goto done;
    }
    uint64_t dword = p->dq == QMM_DQ_DOUBLE ? fp8_double_scale_word(s2f[0], s1[0]) : 0;
    for (int64_t b = 0; b < batch; b++) {
        int64_t o1, o2;
        qmm_batch_offsets(p, b, &o1, &o2);
        const float *a = x1 + o1 * M * K, *w = x2 + o2 * K * N;
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                float acc = fp8_dot(p->trans1 ? a + i : a + i * K, p->trans1 ? M : 1, p->trans2 ? w + j * K : w + j,
                                    p->trans2 ? 1 : N, K);
                int64_t sj = p->scale_n ? j : 0, e = (b * M + i) * N + j;
                const float *bias = bf ? &bf[(p->bias3d ? b * N : 0) + j] : NULL;
                if (p->dq == QMM_DQ_FIXPIPE) {
                    uint64_t word;
                    memcpy(&word, s2raw + 8 * sj, 8);
                    res[e] = a8w8_fixpipe_float(bias ? acc + *bias : acc, word);
                } else if (p->dq == QMM_DQ_DOUBLE) {
                    res[e] = a8w8_fixpipe_float(acc, dword);
                } else {
                    res[e] = a8w8_vector_dequant(acc, s2f[sj], s1 ? &s1[p->s1_scalar ? 0 : i] : NULL, bias);
                }
            }
    }
    tv_store_float(out, res);   /* CAST_RINT to FLOAT16 / BFLOAT16; FLOAT as it is */
done:
    free(x1), free(x2), free(s2raw), free(s2f), free(s1), free(bf), free(res);
}

void quant_matmul_kernel(const pyaclnn_stub_launch *launch) {
    const qmm_params *p = launch->params;
    if (!tv_launch_views_ok(launch)) return;
    if (p->mx) {
        qmm_mx_kernel(launch, p);
        return;
    }
    if (p->pb) {
        qmm_pb_kernel(launch, p);
        return;
    }
    if (p->fin) {
        qmm_fp8_kernel(launch, p);
        return;
    }
    if (p->a8w4) {
        qmm_a8w4_kernel(launch, p);
        return;
    }
    const pyaclnn_stub_tensor *tx1 = &launch->inputs[0], *tx2 = &launch->inputs[1], *ts1 = &launch->inputs[2],
                              *ts2 = &launch->inputs[3], *tof = &launch->inputs[4], *tb = &launch->inputs[5],
                              *out = &launch->outputs[0];
    int64_t M = p->m, K = p->k, N = p->n, batch = 1;
    for (int64_t i = 0; i < p->nb; i++) batch *= p->bshape[i];
    if (p->nz && !qmm_nz_in_memory(launch, p, tx2)) return;
    int8_t *x1 = p->a4w4 ? qmm_int4_unpack(tx1, p->a4_swap1) : (int8_t *)tv_gather_bytes(tx1),
           *x2 = p->a4w4 ? qmm_int4_unpack(tx2, p->a4_swap2)
               : p->nz ? qmm_nz_untile(p, tx2) : (int8_t *)tv_gather_bytes(tx2);
    unsigned char *s2raw = tv_gather_bytes(ts2);
    float *s2f = p->scale_u64 ? NULL : tv_load_float(ts2);
    float *s1 = p->pertoken ? tv_load_float(ts1) : NULL;
    float *of = p->has_offset ? tv_load_float(tof) : NULL;
    unsigned char *braw = p->bias_kind == QMM_BIAS_INT32 ? tv_gather_bytes(tb) : NULL;
    float *bf = p->bias_kind == QMM_BIAS_FLOAT ? tv_load_float(tb) : NULL;
    int32_t *acc = tv_alloc(batch * M * N, sizeof(int32_t));
    float *res = tv_alloc(batch * M * N, sizeof(float));
    if (!x1 || !x2 || !s2raw || (!p->scale_u64 && !s2f) || (p->pertoken && !s1) || (p->has_offset && !of) ||
        (p->bias_kind == QMM_BIAS_INT32 && !braw) || (p->bias_kind == QMM_BIAS_FLOAT && !bf) || !acc || !res) {
        tv_fail_oom(launch);
        goto done;
    }
    for (int64_t b = 0; b < batch; b++) {
        int64_t o1, o2;
        qmm_batch_offsets(p, b, &o1, &o2);
        const int8_t *a = x1 + o1 * M * K, *w = x2 + o2 * K * N;
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                int32_t s = a8w8_dot(p->trans1 ? a + i : a + i * K, p->trans1 ? M : 1,
                                     p->trans2 ? w + j * K : w + j, p->trans2 ? 1 : N, K);
                if (p->bias_kind == QMM_BIAS_INT32) {
                    int32_t bv;
                    memcpy(&bv, braw + 4 * ((p->bias3d ? b * N : 0) + j), 4);
                    s = a8w8_add_wrap(s, bv);
                }
                acc[(b * M + i) * N + j] = s;
            }
    }
    int64_t total = batch * M * N;
    if (p->out_dt == ACL_INT32) {
        tv_scatter_bytes(out, (const unsigned char *)acc);
        goto done;
    }
    uint8_t *codes = p->out_dt == ACL_INT8 ? tv_alloc(total, 1) : NULL;
    if (p->out_dt == ACL_INT8 && !codes) {
        tv_fail_oom(launch);
        goto done;
    }
    for (int64_t e = 0; e < total; e++) {
        int64_t j = e % N, i = (e / N) % M, b = e / (M * N);
        int64_t sj = p->scale_n ? j : 0;
        if (p->scale_u64) {
            uint64_t word;
            memcpy(&word, s2raw + 8 * sj, 8);
            if (p->out_dt == ACL_INT8) {
                double o = p->has_offset ? (double)of[p->offset_n ? j : 0] : (double)a8w8_offset9(word);
                codes[e] = (uint8_t)a8w8_fixpipe_int8((double)acc[e], word, o);
            } else {
                res[e] = a8w8_fixpipe_float(acc[e], word);   /* narrowed below (double rounding is the model's) */
            }
        } else {
            res[e] = a8w8_vector_dequant(acc[e], s2f[sj], p->pertoken ? &s1[i] : NULL,
                                         p->bias_kind == QMM_BIAS_FLOAT ? &bf[(p->bias3d ? b * N : 0) + j] : NULL);
        }
    }
    if (p->out_dt == ACL_INT8) {
        tv_scatter_bytes(out, codes);
        free(codes);
    } else {
        tv_store_float(out, res);   /* CAST_RINT to FLOAT16 / BFLOAT16 */
    }
done:
    free(x1), free(x2), free(s2raw), free(s2f), free(s1), free(of), free(braw), free(bf), free(acc), free(res);
}
