/*
 * aclnnWeightQuantBatchMatmulV2 / V3 (hicann/ops-nn matmul/weight_quant_batch_matmul_v2: op_api
 * aclnn_weight_quant_batch_matmul_v2.cpp; kernels op_kernel/weight_quant_batch_matmul_v2_common.h with anti_quant.h
 * on Atlas A2 / A3, op_kernel/arch35/n_first/basic_block_vf_nd.h on Ascend 950). Definitions:
 * weight_quant_matmul.toml.
 *
 * The kernel's order: the weight is cast to fp16 (exact for INT8 / INT4), then ANTIQUANT(w) = (w + offset) * scale,
 * each step rounded to fp16 when x is FLOAT16; for BFLOAT16 x the Atlas A2 kernel widens to fp32 and rounds once to
 * bf16 (CAST_RINT) after the multiply, the Ascend 950 kernel computes in bf16 (each step rounded). An Ascend 950
 * FLOAT8_E4M3FN / HIFLOAT8 weight (per-channel, no offset) is widened to fp32 and cast to x's dtype (exact: every code
 * fits), then multiplied by the scale in x's dtype (basic_block_vf_nd.h's AntiQuantFP8 functions). The cube multiplies
 * x by that weight with fp32 accumulation; the bias (fp32) is added and the sum rounded once to y (RNE), or, with a
 * quantScale (Atlas A2, y INT8), dequantised in the fixpipe: (acc + bias) * fp19 scale + the words' 9-bit offset,
 * rounded once (the kernels set only the quantScale words on the matmul: quantOffset is checked, never read).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/device.h"
#include "kernels/dtype.h"
#include "kernels/matmul.h"
#include "kernels/nz_layout.h"
#include "kernels/view.h"
#include "numerics/numerics.h"
#include "opbase/checks.h"
#include "ops_decls.h"
#include "quant/a8w8_dequant.h"

enum { WQ_W_INT8, WQ_W_INT4, WQ_W_PACKED, WQ_W_PACKED_T, WQ_W_FP8, WQ_W_HIF8 };   /* how the kernel reads weight */
enum { WQ_CALC_F16 = 0, WQ_CALC_F32_BF16 = 1, WQ_CALC_BF16 = 2 };           /* the antiquant's arithmetic      */

typedef struct {
    int64_t m, k, n, group;
    int w_kind, calc, has_offset, has_bias, quant;
    int nz;           /* weight in FRACTAL_NZ (aclnnWeightQuantBatchMatmulNz): (k, n) in (16, nz_c0) blocks */
    int64_t nz_c0;    /* the blocks' width in weight elements: the storage's last dim (x 8 for an INT32 weight) */
} wq_params;

static const char *const WQ_API = "aclnnWeightQuantBatchMatmulV2GetWorkspaceSize";   /* the op_api's kOpName */

static int wq_is_nz(aclFormat f) { return f == ACL_FORMAT_FRACTAL_NZ || f == ACL_FORMAT_FRACTAL_NZ_C0_2; }

static int wq_nz_op(const op_call *c) { return strcmp(c->def->name, "WeightQuantBatchMatmulNz") == 0; }

/* The elements of the NZ storage the kernel reads for a (k, n) weight: (ceil(n / c0), ceil(k / 16), 16, c0). */
static int64_t wq_nz_count(int64_t k, int64_t n, int64_t c0) {
    return op_mul_sat(op_mul_sat((n + c0 - 1) / c0, (k + 15) / 16), 16 * c0);
}

/* IsTransposeLastTwoDims of matmul_util.cpp, for the 2-D tensors this operator takes. */
static int wq_transposed(const pyaclnn_stub_tensor *t) {
    if (t->ndim < 2 || t->ndim > 6) return 0;
    int64_t d1 = t->ndim - 1, d2 = t->ndim - 2;
    if (t->strides[d2] != 1 || t->strides[d1] != t->shape[d2]) return 0;
    int64_t nd = t->shape[d1] * t->shape[d2];
    for (int64_t b = t->ndim - 3; b >= 0; b--) {
        if (t->strides[b] != nd) return 0;
        nd *= t->shape[b];
    }
    return !(t->shape[d1] == 1 && t->shape[d2] == 1);
}

/* IsTransLastTwoDims of the op_api (2-D only; true for (1, 1)). */
static int wq_trans2(const pyaclnn_stub_tensor *t) {
    return t->ndim == 2 && t->strides[0] == 1 && t->strides[1] == t->shape[0];
}

static const char *dt_name(aclDataType dt, char *b) { return op_dtype_name(dt, b); }

/* wq_soc quantScale quantOffset weight: CheckOptionalNotNull, CheckWeightFormat (both Ascend 950 only). */
aclnnStatus opc_wq_soc(op_call *c, const op_step *s) {
    if (!ew_soc_is_950()) return ACLNN_SUCCESS;
    if (op_tensor(c, s, 0)->present || op_tensor(c, s, 1)->present)
        return op_failf(c->api, ACLNN_ERR_PARAM_NULLPTR,
                        "Current Soc do not support quantScaleOptional or quantOffsetOptional");
    char f[32];
    const pyaclnn_stub_tensor *w = op_tensor(c, s, 2);
    if (w->format != ACL_FORMAT_ND)
        return op_ez_expected(WQ_API, "weight", "format", op_format_name(w->format, f), "FORMAT_ND");
    return ACLNN_SUCCESS;
}

/* wq_nz_soc: the Nz entry's CheckNzSocValid (the Ascend 950 only), before its null checks. */
aclnnStatus opc_wq_nz_soc(op_call *c, const op_step *s) {
    (void)s;
    if (ew_soc_is_950()) return ACLNN_SUCCESS;
    return op_failf(c->api, ACLNN_ERR_RUNTIME_ERROR, "aclnn nz support for %s is not implemented", "Ascend910B");
}

/* wq_nz_front quantScale quantOffset weight: the Nz entry's CheckOptionalNotNull and IsNzFormat. */
aclnnStatus opc_wq_nz_front(op_call *c, const op_step *s) {
    if (op_tensor(c, s, 0)->present || op_tensor(c, s, 1)->present)
        return op_failf(c->api, ACLNN_ERR_PARAM_NULLPTR,
                        "Current Soc do not support quantScaleOptional or quantOffsetOptional");
    char f[32];
    const pyaclnn_stub_tensor *w = op_tensor(c, s, 2);
    if (!wq_is_nz(w->format))
        return op_ez_expected(WQ_API, "weight", "format", op_format_name(w->format, f), "FORMAT_FRACTAL_NZ");
    return ACLNN_SUCCESS;
}

/* wq_inner_precise innerPrecise: V3's CheckInnerPrecise. */
aclnnStatus opc_wq_inner_precise(op_call *c, const op_step *s) {
    int64_t v = op_argument(c, s, 0)->i;
    if (v != 0 && v != 1) return op_invalidf(c->api, "cannot support innerPrecise[%lld]。only support 0 or 1.", (long long)v);
    return ACLNN_SUCCESS;
}

/* wq_contiguous x weight antiquantScale antiquantOffset y quantScale quantOffset bias: ContiguousCheck,
 * OptionalContiguousCheck, then TensorPreProcess's refusals (a packed INT32 weight must be 2-D; the emulator's
 * limits: FRACTAL_NZ weight, FLOAT weight carrying FLOAT4_E2M1). */
aclnnStatus opc_wq_contiguous(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0), *w = op_tensor(c, s, 1), *as = op_tensor(c, s, 2),
                              *ao = op_tensor(c, s, 3), *y = op_tensor(c, s, 4), *qs = op_tensor(c, s, 5),
                              *qo = op_tensor(c, s, 6), *b = op_tensor(c, s, 7);
    if (!wq_transposed(x) && !pyaclnn_stub_is_contiguous(x))
        return op_invalidf(c->api, "only support x tensor is contiguous or transpose last two dims.");
    int tw = wq_transposed(w);
    if (!tw && !pyaclnn_stub_is_contiguous(w))
        return op_invalidf(c->api, "only support weight tensor is contiguous or transpose last two dims.");
    if (ew_soc_is_950()) {
        const pyaclnn_stub_tensor *sc[2] = {as, ao};
        const char *nm[2] = {"antiquantScale", "antiquantOffsetOptional"};
        for (int i = 0; i < 2; i++) {
            const pyaclnn_stub_tensor *t = sc[i];
            if (!t->present || t->ndim != 2 || (t->shape[0] == 1 && t->shape[1] == 1)) continue;
            if (!((tw && wq_trans2(t)) || (!tw && pyaclnn_stub_is_contiguous(t))))
                return op_ez_reason(WQ_API, 0, nm[i], "value", "not consistent with weight", "The value of %s must be "
                                    "consistent with weight (contiguous or transposed)", nm[i]);
        }
    } else {
        if (!tw && !pyaclnn_stub_is_contiguous(as))
            return op_invalidf(c->api, "only support antiquantScale tensor is contiguous or transpose last two dims.");
        if (ao->present && !tw && !pyaclnn_stub_is_contiguous(ao))
            return op_invalidf(c->api, "only support antiquantOffsetOptional tensor is contiguous or transpose last two dims.");
    }
    if (!pyaclnn_stub_is_contiguous(y))
        return op_ez_reason(WQ_API, 0, "y", "value", "not contiguous", "The value of y must be contiguous");
    if (qs->present && !pyaclnn_stub_is_contiguous(qs))
        return op_invalidf(c->api, "only support quantScaleOptional tensor is contiguous.");
    if (qo->present && !pyaclnn_stub_is_contiguous(qo))
        return op_invalidf(c->api, "only support quantOffsetOptional tensor is contiguous.");
    if (b->present && !pyaclnn_stub_is_contiguous(b))
        return op_invalidf(c->api, "only support biasOptional tensor is contiguous.");
    /* TensorPreProcess */
    if (w->dtype == ACL_INT32 || (ew_soc_is_950() && w->dtype == ACL_FLOAT)) {
        if (w->ndim < 2 || w->ndim > 2)
            return op_invalidf(c->api, "weight's dim should be in range [2, 2]. actual is [%lld].", (long long)w->ndim);
        if (w->dtype == ACL_FLOAT)
            return op_invalidf(c->api, "weight FLOAT (FLOAT4_E2M1 packed): the emulator implements INT8 and INT4 "
                               "weights of aclnnWeightQuantBatchMatmul only");
    }
    if (wq_is_nz(w->format) && !wq_nz_op(c))   /* Atlas A2's V2 / V3 NZ kernels are not modelled */
        return op_invalidf(c->api, "weight FRACTAL_NZ: the emulator implements the ND weight of "
                           "aclnnWeightQuantBatchMatmulV2 / V3 only (an NZ weight: aclnnWeightQuantBatchMatmulNz on "
                           "the Ascend 950)");
    return ACLNN_SUCCESS;
}

/* wq_weight_dtype weight LIST: OP_CHECK_DTYPE_NOT_SUPPORT on the weight TensorPreProcess made (INT32 -> INT4). */
aclnnStatus opc_wq_weight_dtype(op_call *c, const op_step *s) {
    size_t n;
    const aclDataType *list = op_list(s->list, &n);
    aclDataType dt = op_tensor(c, s, 0)->dtype == ACL_INT32 ? ACL_INT4 : op_tensor(c, s, 0)->dtype;
    if (ew_in_list(dt, list, n)) return ACLNN_SUCCESS;
    char b[24], all[256];
    return op_invalidf(c->api, "Tensor weight not implemented for %s, should be in dtype support list [%s].",
                       dt_name(dt, b), ew_dtype_list(list, n, all, sizeof all));
}

static const char *shape_txt(const pyaclnn_stub_tensor *t, char *b, size_t n) { return tv_shape_text(t->shape, t->ndim, b, n); }

static aclnnStatus dim_in(op_call *c, const pyaclnn_stub_tensor *t, const char *name, int lo, int hi) {
    if (!t->present || (t->ndim >= lo && t->ndim <= hi)) return ACLNN_SUCCESS;
    return op_invalidf(c->api, "%s's dim should be in range [%d, %d]. actual is [%lld].", name, lo, hi, (long long)t->ndim);
}

static aclnnStatus format_nd(op_call *c, const pyaclnn_stub_tensor *t, const char *name) {
    char f[32];
    if (!t->present || t->format == ACL_FORMAT_ND) return ACLNN_SUCCESS;
    return op_invalidf(c->api, "%s's format should be ND. actual is [%s].", name, op_format_name(t->format, f));
}

/* CheckDtypeValid's tail, CheckDimValid, BasicParamsScaleCheck, BasicParamsBiasCheck, BasicOptionalParamsCheck. */
static aclnnStatus wq_basic(op_call *c, const pyaclnn_stub_tensor *x, const pyaclnn_stub_tensor *w,
                            const pyaclnn_stub_tensor *as, const pyaclnn_stub_tensor *ao, const pyaclnn_stub_tensor *qs,
                            const pyaclnn_stub_tensor *qo, const pyaclnn_stub_tensor *b, const pyaclnn_stub_tensor *y,
                            aclDataType wdt) {
    int soc950 = ew_soc_is_950();
    char b1[24], b2[24];
    aclnnStatus rc;
    if (qs->present && y->dtype != ACL_INT8)
        return op_invalidf(c->api, "when quantScaleOptional is not null, y's dtype should be [DT_INT8], actual is [%s].",
                           dt_name(y->dtype, b1));
    if (!qs->present && y->dtype != x->dtype)
        return op_invalidf(c->api, "when quantScaleOptional is null, y's dtype should be same as x [%s], actual is [%s].",
                           dt_name(x->dtype, b1), dt_name(y->dtype, b2));
    if (soc950 && w->format == ACL_FORMAT_FRACTAL_NZ && wdt != ACL_INT4 && wdt != ACL_FLOAT4_E2M1 && wdt != ACL_INT8)
        return op_ez_reason(WQ_API, 0, "weight", "dtype", dt_name(wdt, b1), "When the format of weight is FRACTAL_NZ, "
                            "the dtype of weight must be INT4, FLOAT4_E2M1, or INT8");
    /* CheckDimValid (outside the Atlas 300I: 2-D only) */
    if ((rc = dim_in(c, x, "x", 2, 2)) || (rc = dim_in(c, w, "weight", 2, 2)) || (rc = dim_in(c, y, "y", 2, 2))) return rc;
    /* CheckScaleDtypeValid */
    int fixpipe = as->dtype == ACL_UINT64 || as->dtype == ACL_INT64;
    if (ao->present && ao->dtype == ACL_INT32) {
        if (soc950)
            return op_ez_reason(WQ_API, 0, "antiquantOffsetOptional", "dtype", "DT_INT32",
                                "The dtype of antiquantOffsetOptional must be FLOAT16 or BF16");
        if (!fixpipe)
            return op_invalidf(c->api, "antiquantScale's dtype must be DT_UINT64 or DT_INT64 when antiquantOffset's dtype "
                               "is DT_INT32, actual antiquantScale's dtype is [%s].", dt_name(as->dtype, b1));
    }
    if (fixpipe) {
        if (x->dtype != ACL_FLOAT16)
            return op_invalidf(c->api, "x's dtype must be DT_FLOAT16 when antiquantScale's dtype is DT_UINT64/DT_INT64, "
                               "actual x's dtype is [%s].", dt_name(x->dtype, b1));
        if (wdt != ACL_INT8)
            return op_invalidf(c->api, "weight's dtype must be DT_INT8 when antiquantScale's dtype is DT_UINT64/DT_INT64,"
                               "actual weight's dtype is [%s].", dt_name(wdt, b1));
        if (ao->present && ao->dtype != ACL_INT32)
            return op_invalidf(c->api, "antiquantOffset's dtype must be DT_INT32 when antiquantScale's dtype is "
                               "DT_UINT64/DT_INT64, actual antiquantOffset's dtype is [%s].", dt_name(ao->dtype, b1));
        if (y->dtype != ACL_FLOAT16)
            return op_invalidf(c->api, "y's dtype should be [DT_FLOAT16] when antiquantScale's dtype is "
                               "[DT_UINT64/DT_INT64], actual y's dtype is [%s].", dt_name(y->dtype, b1));
    } else {
        if (as->dtype != ACL_FLOAT8_E8M0 && x->dtype != as->dtype)
            return op_invalidf(c->api, "x's dtype must be same as antiquantScale's dtype, actual x's dtype is [%s], "
                               "antiquantScale's dtype is [%s].", dt_name(x->dtype, b1), dt_name(as->dtype, b2));
        if (soc950 && ao->present && (wdt == ACL_FLOAT4_E2M1 || wdt == ACL_FLOAT8_E4M3FN || wdt == ACL_HIFLOAT8))
            return op_ez_reason(WQ_API, 0, "antiquantOffsetOptional", "value", "not null", "When the weight dtype is "
                                "FP32/FP4_E2M1/FP8_E4M3/HIFLOAT8, the value of antiquantOffsetOptional must be null");
        if (ao->present && ao->dtype != as->dtype)
            return op_invalidf(c->api, "antiquantOffsetOptional's dtype must be same as antiquantScale's dtype, actual "
                               "antiquantOffsetOptional's dtype is [%s], antiquantScale's dtype is [%s].",
                               dt_name(ao->dtype, b1), dt_name(as->dtype, b2));
    }
    /* CheckBiasDtypeValid */
    if (b->present) {
        if (x->dtype == ACL_FLOAT16 && b->dtype != ACL_FLOAT16)
            return op_invalidf(c->api, "When x dtype is [DF_FLOAT16], biasOptional's dtype should be [DT_FLOAT16], actual "
                               "is [%s].", dt_name(b->dtype, b1));
        if (x->dtype == ACL_BF16) {
            if (!soc950) {
                if (b->dtype != ACL_FLOAT)
                    return op_invalidf(c->api, "biasOptional's dtype should be [DT_FLOAT], actual is [%s].",
                                       dt_name(b->dtype, b1));
            } else if (wdt == ACL_FLOAT4_E2M1 || wdt == ACL_FLOAT8_E4M3FN || wdt == ACL_HIFLOAT8) {
                if (b->dtype != ACL_BF16) return op_ez_expected(WQ_API, "biasOptional", "dtype", dt_name(b->dtype, b1), "BF16");
            } else if (wdt == ACL_INT8 && w->format == ACL_FORMAT_FRACTAL_NZ) {
                if (b->dtype != ACL_FLOAT) return op_ez_expected(WQ_API, "biasOptional", "dtype", dt_name(b->dtype, b1), "FLOAT");
            } else if (b->dtype != ACL_BF16 && b->dtype != ACL_FLOAT) {
                return op_ez_reason(WQ_API, 0, "biasOptional", "dtype", dt_name(b->dtype, b1),
                                    "The dtype of biasOptional must be FLOAT or BF16");
            }
        }
    }
    /* CheckFormatValid: x and bias are reformatted to ND unless FRACTAL_NZ; antiquantScale is not */
    char f[32];
    if (x->format == ACL_FORMAT_FRACTAL_NZ)
        return op_invalidf(c->api, "x's format should be ND. actual is [%s].", op_format_name(x->format, f));
    if ((rc = format_nd(c, as, "antiquantScale"))) return rc;
    if (b->present && b->format == ACL_FORMAT_FRACTAL_NZ)
        return op_invalidf(c->api, "biasOptional's format should be ND. actual is [%s].", op_format_name(b->format, f));
    if ((rc = dim_in(c, b, "biasOptional", 1, 2))) return rc;
    /* BasicOptionalParamsCheck */
    if ((rc = format_nd(c, ao, "antiquantOffsetOptional")) || (rc = format_nd(c, qs, "quantScaleOptional")) ||
        (rc = format_nd(c, qo, "quantOffsetOptional")))
        return rc;
    if ((rc = dim_in(c, as, "antiquantScale", 1, 2)) || (rc = dim_in(c, ao, "antiquantOffsetOptional", 1, 2)) ||
        (rc = dim_in(c, qs, "quantScaleOptional", 1, 2)) || (rc = dim_in(c, qo, "quantOffsetOptional", 1, 2)))
        return rc;
    if (!qs->present && qo->present)
        return op_invalidf(c->api, "The sence quantScaleOptional is null and quantOffsetOptional is't null can't support.");
    if (qs->present && qs->dtype != ACL_UINT64 && qs->dtype != ACL_INT64)   /* INT64 was relabelled UINT64 */
        return op_invalidf(c->api, "The type of quantScaleOptional only supports [UINT64], actual is [%s]. You should "
                           "call the aclnnTransQuantParam() interface.", dt_name(qs->dtype, b1));
    return ACLNN_SUCCESS;
}

static int64_t dim_last(const pyaclnn_stub_tensor *t, int from_end) { return t->shape[t->ndim - from_end]; }

/* wq_check x weight antiquantScale antiquantOffset quantScale quantOffset bias y groupSize: the rest of CheckParams
 * in its order, CheckContiguous's Ascend 950 refusal, the emulator's limits, then the kernel's parameters. */
aclnnStatus opc_wq_check(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0), *w = op_tensor(c, s, 1), *as = op_tensor(c, s, 2),
                              *ao = op_tensor(c, s, 3), *qs = op_tensor(c, s, 4), *qo = op_tensor(c, s, 5),
                              *b = op_tensor(c, s, 6), *y = op_tensor(c, s, 7);
    int64_t group = op_argument(c, s, 8)->i;
    int soc950 = ew_soc_is_950();
    int packed = w->dtype == ACL_INT32;
    aclDataType wdt = packed ? ACL_INT4 : w->dtype;
    aclnnStatus rc = wq_basic(c, x, w, as, ao, qs, qo, b, y, wdt);
    if (rc) return rc;
    char t1[160], t2[160];
    /* the weight the op_api sees: a packed INT32 (k, n / 8), or its transposed view (k / 8, n), read as INT4 (k, n) */
    int tw = wq_transposed(w);
    int64_t kw = dim_last(w, 2), nw = dim_last(w, 1);
    if (packed) {
        if (tw) kw = op_mul_sat(kw, 8);
        else nw = op_mul_sat(nw, 8);
    }
    int tx = wq_transposed(x);
    int64_t kx = dim_last(x, 1), mx = dim_last(x, 2);
    /* AdvancedWeightParamsCheck: CheckXWeight, CheckXWeightDimValue, CheckXWeightY */
    if (kx != kw)
        return op_invalidf(c->api, "x's k and weight's k should be equal, actual x'k is %lld, weight's k is %lld.",
                           (long long)kx, (long long)kw);
    if (kx < 1 || mx < 1 || nw < 1)
        return op_invalidf(c->api, "m,k,n shouldn't be smaller than %d, actual m is %lld, k is %lld, n is %lld.", 1,
                           (long long)mx, (long long)kx, (long long)nw);
    if (!soc950 && (kx > 65535 || nw > 65535 || (tx && mx > 65535)))
        return op_invalidf(c->api, "k,n shouldn't be larger than %lld, actual k is %lld, n is %lld. When x is transposed, "
                           "m shouldn't be larger than %lld, actual m is %lld.", 65535LL, (long long)kx, (long long)nw,
                           65535LL, (long long)mx);
    if (wdt == ACL_INT4) {
        if (tw && (kw & 1))
            return op_invalidf(c->api, "In the int4 scenario, if weight is transposed, k[%lld] should be an even number.",
                               (long long)kw);
        if (!tw && (nw & 1))
            return op_invalidf(c->api, "In the int4 scenario, if weight is not transposed, n[%lld] should be an even "
                               "number ", (long long)nw);
    }
    if (dim_last(y, 2) != mx)
        return op_invalidf(c->api, "y's m and x's m should be equal, actual y's m is %lld, x's m is %lld.",
                           (long long)dim_last(y, 2), (long long)mx);
    if (dim_last(y, 1) != nw)
        return op_invalidf(c->api, "y's n and weight's n should be equal, actual y's n is %lld, weight's n is %lld.",
                           (long long)dim_last(y, 1), (long long)nw);
    /* AdvancedAntiquantParamsCheck: CheckAntiquantGroupSize, CheckAntiquantParamShape, CheckMicroScalingCondition */
    if (group != 0) {
        if (group < 0) return op_invalidf(c->api, "cannot support group_size[%lld] less than 0.", (long long)group);
        if (group % 32)
            return op_invalidf(c->api, "antiquantGroupSize should be an integer multiple of 32, actual is %lld.",
                               (long long)group);
        if (group + 1 > kx)
            return op_invalidf(c->api, "antiquantGroupSize should not be greater than k-1, which is %lld.actual "
                               "antiquantGroupSize is %lld.", (long long)(kx - 1), (long long)group);
    }
    int64_t n_as = dim_last(as, 1);
    if (as->ndim == 1 && (group > 0 || (n_as != 1 && n_as != nw)))
        return op_invalidf(c->api, "antiquantScale shape must be [1] or [%lld] and group size is 0 when the size is 1, "
                           "but it is %s and group size is [%lld]", (long long)nw, shape_txt(as, t1, sizeof t1),
                           (long long)group);
    if (as->ndim == 2) {
        int64_t k_as = as->shape[0];
        if (group == 0 && (k_as != 1 || (n_as != nw && n_as != 1)))
            return op_invalidf(c->api, "antiquantScale shape must be [%lld, %lld] or [1, 1]when the size is 2 and without "
                               "group size, but it is %s", 1LL, (long long)nw, shape_txt(as, t1, sizeof t1));
        int64_t kg = group > 0 ? (kw + group - 1) / group : 0;
        if (group > 0 && (k_as != kg || n_as != nw))
            return op_invalidf(c->api, "antiquantScale shape must be [%lld, %lld] when the size is 2 and with group size, "
                               "but it is %s", (long long)kg, (long long)nw, shape_txt(as, t1, sizeof t1));
    }
    if (ao->present) {
        int same = ao->ndim == as->ndim;
        for (int64_t d = 0; same && d < as->ndim; d++) same = ao->shape[d] == as->shape[d];
        if (!same)
            return op_invalidf(c->api, "Expected tensor for %s to have same size as tensor for %s, but %s does not equal "
                               "%s.", "antiquantOffsetOptional", "antiquantScale", shape_txt(ao, t1, sizeof t1),
                               shape_txt(as, t2, sizeof t2));
    }
    if (wdt == ACL_FLOAT4_E2M1 && as->dtype == ACL_FLOAT8_E8M0) {
        if (group != 32)
            return op_ez_reason(WQ_API, 0, "antiquantGroupSize", "value", (snprintf(t1, sizeof t1, "%lld", (long long)group), t1),
                                "When the quant mode is fp4 micro-scaling, the value of antiquantGroupSize must be 32");
        if (ao->present)
            return op_ez_reason(WQ_API, 0, "antiquantOffsetOptional", "value", "not null", "When the quant mode is fp4 "
                                "micro-scaling, the value of antiquantOffsetOptional must be null");
    }
    /* AdvancedShapeParamsCheck: CheckQuantParamShape, CheckBiasShape */
    if (qs->present) {
        if (qs->ndim == 1 && qs->shape[0] != 0 && qs->shape[0] != 1 && qs->shape[0] != nw)
            return op_invalidf(c->api, "when quantScaleOptional's shape size is 1, it's shape should be [%d], [%d] or "
                               "[%lld], actual is %s", 0, 1, (long long)nw, shape_txt(qs, t1, sizeof t1));
        if (qs->ndim == 2 && (qs->shape[0] != 1 || qs->shape[1] != nw))
            return op_invalidf(c->api, "when quantScaleOptional's shape size is 2, it's shape should be [%d, %lld], "
                               "actual is %s.", 1, (long long)nw, shape_txt(qs, t1, sizeof t1));
        if (qo->present) {
            int same = qo->ndim == qs->ndim;
            for (int64_t d = 0; same && d < qs->ndim; d++) same = qo->shape[d] == qs->shape[d];
            if (!same)
                return op_invalidf(c->api, "Expected tensor for %s to have same size as tensor for %s, but %s does not "
                                   "equal %s.", "quantOffsetOptional", "quantScaleOptional", shape_txt(qo, t1, sizeof t1),
                                   shape_txt(qs, t2, sizeof t2));
        }
    }
    if (b->present) {
        if (b->ndim == 1 && b->shape[0] != 0 && b->shape[0] != nw)
            return op_invalidf(c->api, "when bias's shape size is 1, it's shape should be [%d], or [%lld], actual is %s.",
                               0, (long long)nw, shape_txt(b, t1, sizeof t1));
        if (b->ndim == 2 && (b->shape[0] != 1 || b->shape[1] != nw))
            return op_invalidf(c->api, "when bias's shape size is 2, it's shape should be [%d, %lld], actual is %s.", 1,
                               (long long)nw, shape_txt(b, t1, sizeof t1));
    }
    /* AdvancedParamsCheck: CheckValForWeightInt4Nz, CheckValForWeightInt8Nz (the Ascend 950's branches: the Nz entry
     * runs there only), CheckValForWeightFp4, CheckValForWeightFp8Hif8 */
    int nz = w->format == ACL_FORMAT_FRACTAL_NZ || (packed && w->format == ACL_FORMAT_FRACTAL_NZ_C0_2);
    if (nz && wdt == ACL_INT4) {
        if (group > 0 && (tx || tw))
            return op_invalidf(c->api, "when weight's dtype is [int4], weight's format is [FRACTAL_NZ], and "
                               "antiquantGroupSize is larger than 0, x and weight should not be transposed, actual x is "
                               "[%s], weight is [%s].", tx ? "transposed" : "not transposed",
                               tw ? "transposed" : "not transposed");
        if (group <= 0 && pyaclnn_stub_numel(as) == 1)
            return op_invalidf(c->api, "when weight's dtype is [int4], weight's format is [FRACTAL_NZ], antiquant mode "
                               "should not be per-tensor.");
    }
    if (nz && wdt == ACL_INT8 && soc950) {
        if (group > 0)
            return op_ez_reason(WQ_API, 0, "antiquantGroupSize", "value", (snprintf(t1, sizeof t1, "%lld", (long long)group), t1),
                                "When the dtype of weight is INT8 and the format of weight is FRACTAL_NZ, the value of "
                                "antiquantGroupSize must be 0");
        if (pyaclnn_stub_numel(as) == 1)
            return op_ez_reason(WQ_API, 0, "antiquantScale", "value", "per-tensor", "When the dtype of weight is INT8 and "
                                "the format of weight is FRACTAL_NZ, the value of antiquantScale can not be per-tensor");
        if (tx)
            return op_ez_reason(WQ_API, 0, "x", "value", "transposed", "When the dtype of weight is INT8, the format of "
                                "weight is FRACTAL_NZ, and the quant mode is per-channel, the value of x can not be "
                                "transposed");
    }
    if (wdt == ACL_FLOAT4_E2M1 && as->dtype != ACL_FLOAT8_E8M0 && group == 0)
        return op_ez_reason(WQ_API, 0, "antiquantGroupSize", "value", "0", "When the dtype of weight is FLOAT4_E2M1, "
                            "quantization mode perchannel/pertensor is not supported");
    if (wdt == ACL_FLOAT8_E4M3FN || wdt == ACL_HIFLOAT8) {
        if (as->dtype == ACL_FLOAT8_E8M0)
            return op_ez_reason(WQ_API, 0, "antiquantScale", "value", "DT_FLOAT8_E8M0", "When the dtype of weight is "
                                "FP8_E4M3FN or HIFLOAT8, only perchannel quantization is supported, MX mode is not supported");
        if (group > 0)
            return op_ez_reason(WQ_API, 0, "antiquantGroupSize", "value", (snprintf(t1, sizeof t1, "%lld", (long long)group), t1),
                                "When the dtype of weight is FP8_E4M3FN or HIFLOAT8, only perchannel quantization is "
                                "supported, antiquantGroupSize must be 0");
        if (pyaclnn_stub_numel(as) == 1 && nw != 1)
            return op_ez_reason(WQ_API, 0, "antiquantScale", "value", "pertensor", "When the dtype of weight is FP8_E4M3FN "
                                "or HIFLOAT8, only perchannel quantization is supported, pertensor is not supported");
    }
    /* CheckContiguous (Ascend 950) */
    if (soc950 && (tx || !pyaclnn_stub_is_contiguous(x)))
        return op_ez_reason(WQ_API, 0, "x", "value", "transposed or not contiguous",
                            "On DAV3510, the value of x can not be transposed and the value of x must be contiguous");
    /* the emulator's limits */
    char b1[24];
    if (wdt != ACL_INT8 && wdt != ACL_INT4 && wdt != ACL_FLOAT8_E4M3FN && wdt != ACL_HIFLOAT8)
        return op_invalidf(c->api, "weight %s: the emulator implements INT8, INT4, FLOAT8_E4M3FN and HIFLOAT8 weights "
                           "of aclnnWeightQuantBatchMatmul only", dt_name(wdt, b1));
    if (as->dtype != ACL_FLOAT16 && as->dtype != ACL_BF16)
        return op_invalidf(c->api, "antiquantScale %s: the emulator implements FLOAT16 / BFLOAT16 antiquant scales of "
                           "aclnnWeightQuantBatchMatmul only", dt_name(as->dtype, b1));
    int64_t c0 = 0;
    if (wq_is_nz(w->format)) {   /* the emulator's NZ model: the per-channel kernel on the (k, n) blocks */
        if (!nz || tw || group > 0)
            return op_invalidf(c->api, "weight FRACTAL_NZ%s: the emulator implements the per-channel antiquant of a "
                               "FRACTAL_NZ weight that is not transposed only", nz ? (tw ? ", transposed" : " per-group")
                                                                                    : "_C0_2");
        /* SetShapeStrideForNZ: an INT32 weight's storage holds eight INT4 an element, its last dim times 8 */
        int64_t per = w->dtype == ACL_INT32 ? 8 : 1, have = per;   /* storage elements in weight elements */
        for (int64_t d = 0; d < w->storage_ndim; d++) have = op_mul_sat(have, w->storage_shape[d]);
        c0 = w->storage_ndim >= 4 ? op_mul_sat(w->storage_shape[w->storage_ndim - 1], per) : 0;
        /* the docs' NZ shapes; the INT4 kernel steps its per-channel scales 16 to an n1 block (AntiQuantInt4NzKnVf) */
        if (c0 != (wdt == ACL_INT8 ? 32 : 16))
            return op_invalidf(c->api, "weight FRACTAL_NZ: a storage of %lld dims whose blocks are %lld elements wide: "
                               "the emulator reads (n1, k1, 16, C0) blocks of C0 32 (INT8) or 16 (INT4)",
                               (long long)w->storage_ndim, (long long)c0);
        int64_t need = wq_nz_count(kx, nw, c0);
        if (have < need)
            return op_invalidf(c->api, "weight FRACTAL_NZ: its storage holds %lld elements, the (%lld, %lld) weight's NZ "
                               "blocks %lld (the emulator reads that layout)", (long long)have, (long long)kx,
                               (long long)nw, (long long)need);
    }
    wq_params *p = op_params(c, sizeof *p);
    p->m = mx, p->k = kx, p->n = nw, p->group = group, p->nz = nz, p->nz_c0 = c0;
    p->w_kind = packed ? (tw ? WQ_W_PACKED_T : WQ_W_PACKED) : wdt == ACL_INT4 ? WQ_W_INT4 : wdt == ACL_FLOAT8_E4M3FN ?
                WQ_W_FP8 : wdt == ACL_HIFLOAT8 ? WQ_W_HIF8 : WQ_W_INT8;
    p->calc = x->dtype == ACL_FLOAT16 ? WQ_CALC_F16 : soc950 ? WQ_CALC_BF16 : WQ_CALC_F32_BF16;
    p->has_offset = ao->present;
    p->has_bias = b->present && pyaclnn_stub_numel(b) > 0;
    p->quant = qs->present && pyaclnn_stub_numel(qs) > 0;
    return ACLNN_SUCCESS;
}

/* ---- kernel --------------------------------------------------------------------------------- */

/* d rounded once to fp16 / bf16 (RNE): through fp32 rounded to odd when inexact, which keeps the single rounding
 * (fp32 has more than two extra bits). */
static float wq_round_odd_f32(double d) {
    float f = (float)d;
    if ((double)f == d || isnan(d) || isinf(f)) return f;
    if (fabs((double)f) > fabs(d)) f = nextafterf(f, 0.0f);
    uint32_t u;
    memcpy(&u, &f, 4);
    u |= 1u;
    memcpy(&f, &u, 4);
    return f;
}

static float wq_round(double d, int calc) {
    float f = wq_round_odd_f32(d);
    return calc == WQ_CALC_F16 ? num_f16_to_f32(num_f32_to_f16(f)) : num_bf16_to_f32(num_f32_to_bf16(f));
}

/* An NZ weight's storage as a 1-D run of its elements (bits each) from the view's offset, for the memory check. */
static int wq_nz_in_memory(const pyaclnn_stub_launch *launch, const pyaclnn_stub_tensor *t, const wq_params *p) {
    int int8 = p->w_kind == WQ_W_INT8, per = p->w_kind == WQ_W_PACKED ? 8 : 1;
    pyaclnn_stub_tensor store = *t;
    store.ndim = 1, store.strides[0] = 1, store.offset = t->offset * per;
    store.shape[0] = wq_nz_count(p->k, p->n, p->nz_c0);
    if (op_view_in_device_memory(&store, int8 ? 8 : 4)) return 1;
    pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "%s: weight's FRACTAL_NZ storage (data %p, offset %lld) is "
                           "not in device memory", launch->op_name, t->data, (long long)t->offset);
    return 0;
}

/* An NZ weight's values, (k, n) row-major: element (q, j) at [j / c0][q / 16][q % 16][j % c0] of the storage, in
 * bytes (INT8) or nibbles (INT4, or eight to an INT32; the low nibble first). */
static float *wq_nz_weight(const pyaclnn_stub_tensor *t, const wq_params *p, float *w) {
    int64_t K = p->k, N = p->n, c0 = p->nz_c0;
    const unsigned char *base = t->data;
    int int8 = p->w_kind == WQ_W_INT8;
    int64_t e0 = t->offset * (p->w_kind == WQ_W_PACKED ? 8 : 1);
    for (int64_t q = 0; q < K; q++)
        for (int64_t j = 0; j < N; j++) {
            int64_t at = e0 + nz_layout_index(0, q, j, K, N, 16, c0);
            int v = int8 ? (int8_t)base[at] : (at & 1) ? base[at >> 1] >> 4 : base[at >> 1] & 0xF;
            w[q * N + j] = (float)(!int8 && v >= 8 ? v - 16 : v);
        }
    return w;
}

/* The weight's values (exact in fp32), (k, n) row-major. */
static float *wq_weight(const pyaclnn_stub_tensor *t, const wq_params *p) {
    int64_t K = p->k, N = p->n;
    float *w = tv_alloc(K * N, sizeof(float));
    if (w == NULL) return NULL;
    if (p->nz) return wq_nz_weight(t, p, w);
    if (p->w_kind == WQ_W_INT8 || p->w_kind == WQ_W_FP8 || p->w_kind == WQ_W_HIF8) {
        unsigned char *raw = tv_gather_bytes(t);
        if (raw == NULL) {
            free(w);
            return NULL;
        }
        for (int64_t i = 0; i < K * N; i++)
            w[i] = p->w_kind == WQ_W_INT8 ? (float)(int8_t)raw[i] : p->w_kind == WQ_W_FP8 ? num_fp8_e4m3fn_to_f32(raw[i])
                                                                                          : num_hif8_to_f32(raw[i]);
        free(raw);
        return w;
    }
    tv_iter it;
    tv_iter_init(&it, t);
    int64_t total = pyaclnn_stub_numel(t);
    const unsigned char *base = t->data;
    for (int64_t i = 0; i < total; i++, tv_iter_next(&it)) {
        if (p->w_kind == WQ_W_INT4) {   /* element i of the (k, n) view; offsets count nibbles */
            unsigned char byte = base[it.off >> 1];
            int v = (it.off & 1) ? byte >> 4 : byte & 0xF;
            w[i] = (float)(v >= 8 ? v - 16 : v);
            continue;
        }
        uint32_t word;
        memcpy(&word, base + 4 * it.off, 4);
        int64_t r = i / t->shape[1], col = i % t->shape[1];
        for (int q = 0; q < 8; q++) {   /* eight INT4, element 8j + q in bits 4q .. 4q + 3 */
            int v = (int)(word >> (4 * q) & 0xF);
            float sv = (float)(v >= 8 ? v - 16 : v);
            if (p->w_kind == WQ_W_PACKED) w[r * N + col * 8 + q] = sv;       /* (k, n / 8): along n        */
            else w[(r * 8 + q) * N + col] = sv;                             /* (k / 8, n): along k        */
        }
    }
    return w;
}

void wq_matmul_kernel(const pyaclnn_stub_launch *launch) {
    const wq_params *p = launch->params;
    if (!tv_launch_views_ok(launch) || (p->nz && !wq_nz_in_memory(launch, &launch->inputs[1], p))) return;
    const pyaclnn_stub_tensor *tx = &launch->inputs[0], *tw = &launch->inputs[1], *ts = &launch->inputs[2],
                              *to = &launch->inputs[3], *tqs = &launch->inputs[4], *tb = &launch->inputs[6],
                              *ty = &launch->outputs[0];
    int64_t M = p->m, K = p->k, N = p->n;
    float *x = tv_load_float(tx), *sc = tv_load_float(ts), *of = p->has_offset ? tv_load_float(to) : NULL;
    float *bias = p->has_bias ? tv_load_float(tb) : NULL;
    unsigned char *qs = p->quant ? tv_gather_bytes(tqs) : NULL;
    float *w = wq_weight(tw, p);
    float *wd = tv_alloc(K * N, sizeof(float)), *acc = tv_alloc(M * N, sizeof(float));
    unsigned char *codes = p->quant ? tv_alloc(M * N, 1) : NULL;
    if (!x || !sc || (p->has_offset && !of) || (p->has_bias && !bias) || (p->quant && !qs) ||
        !w || !wd || !acc || (p->quant && !codes)) {
        tv_fail_oom(launch);
        goto done;
    }
    int64_t ns = pyaclnn_stub_numel(ts);
    for (int64_t kk = 0; kk < K; kk++)
        for (int64_t j = 0; j < N; j++) {
            int64_t si = ns == 1 ? 0 : p->group > 0 ? (kk / p->group) * N + j : j;
            double v = w[kk * N + j];   /* -> fp16 / bf16: exact for every accepted weight code */
            float f;
            if (p->calc == WQ_CALC_F32_BF16) {   /* Atlas A2, BFLOAT16 x: fp32 steps, CAST_RINT to bf16 */
                float g = (float)v;
                if (of) g = g + of[si];
                g = g * sc[si];
                f = num_bf16_to_f32(num_f32_to_bf16(g));
            } else {                             /* each step rounded to x's dtype */
                if (of) v = wq_round(v + (double)of[si], p->calc);
                f = wq_round(v * (double)sc[si], p->calc);
            }
            wd[kk * N + j] = f;
        }
    mm_f32(x, 0, wd, 0, acc, 0, 1, M, K, N);
    int64_t nb = p->has_bias ? pyaclnn_stub_numel(tb) : 0, nq = p->quant ? pyaclnn_stub_numel(tqs) : 0;
    for (int64_t e = 0; e < M * N; e++) {
        int64_t j = e % N;
        float r = acc[e];
        if (bias) r = r + bias[nb == 1 ? 0 : j];
        if (p->quant) {
            uint64_t word;
            memcpy(&word, qs + 8 * (nq == 1 ? 0 : j), 8);
            /* the words' offset: the kernel reads no quantOffset */
            codes[e] = (unsigned char)a8w8_fixpipe_int8((double)r, word, (double)a8w8_offset9(word));
        } else {
            acc[e] = r;
        }
    }
    if (p->quant) tv_scatter_bytes(ty, codes);
    else tv_store_float(ty, acc);   /* CAST_RINT to FLOAT16 / BFLOAT16 */
done:
    free(x), free(sc), free(of), free(bias), free(qs), free(w), free(wd), free(acc), free(codes);
}
