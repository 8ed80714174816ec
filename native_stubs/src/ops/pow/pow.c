/*
 * aclnnPowTensorScalar, aclnnPowScalarTensor, aclnnPowTensorTensor and the in-place forms of the
 * first and last: out = self ** exponent (hicann/ops-math math/pow/op_api/aclnn_pow.cpp and
 * aclnn_pow_tensor_tensor.cpp). The vendor has no aclnnInplacePowScalarTensor.
 *
 * The in-place forms are the out-of-place ones with out = self, as in the vendor's op_api: the same
 * support list (integers and BOOL too), the same checks in the same order.
 *
 * Floats: libm pow in double, rounded once to fp32 and then to the compute dtype (tolerance class;
 * x ** 2 and x ** 0.5 come out correctly rounded, as the vendor's Square and Sqrt-based shortcuts
 * give them). Integers: exact, wrapping at the compute dtype's width.
 *
 * The vendor also takes COMPLEX64/128 and refuses BF16 on SoCs before Atlas A2; the emulator has no
 * complex arithmetic, and both SoCs it emulates take BF16.
 */
#include <math.h>

#include "aclnnop/aclnn_pow.h"
#include "aclnnop/aclnn_pow_tensor_tensor.h"
#include "opbase/checks.h"
#include "opbase/pointwise.h"

static const aclDataType POW[] = {ACL_FLOAT, ACL_INT32,  ACL_INT64, ACL_FLOAT16, ACL_INT8,
                                  ACL_UINT8, ACL_DOUBLE, ACL_INT16, ACL_BOOL,    ACL_BF16};
#define N_POW (sizeof POW / sizeof POW[0])

/* ---- tensor ** tensor ------------------------------------------------------------------------ */

/* The vendor refuses BOOL ** BOOL right after the null check, before the support lists. */
static aclnnStatus check_not_both_bool(const char *api, const aclTensor *self, const aclTensor *exponent) {
    aclnnStatus rc;
    pyaclnn_stub_tensor s, e;
    if ((rc = op_tensor_arg(api, "self", self, &s)) || (rc = op_tensor_arg(api, "exponent", exponent, &e))) return rc;
    if (s.dtype == ACL_BOOL && e.dtype == ACL_BOOL) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "Self and exponent dtype are bool is not supported.");
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus pow_tensor_tensor(const char *api, const char *op_name, const aclTensor *self,
                                     const aclTensor *exponent, const aclTensor *out, uint64_t *ws,
                                     aclOpExecutor **ex) {
    ew_ptr_arg ptrs[3] = {{"self", self}, {"exponent", exponent}, {"out", out}};
    aclnnStatus rc = ew_check_not_null(api, ptrs, 3, ws, ex);
    if (rc || (rc = check_not_both_bool(api, self, exponent))) return rc;
    ew_pointwise_call c = {api, op_name, EW_OP_POW, "self", self, "exponent", exponent, NULL, "out", out, 0,
                           POW, N_POW, EW_PROMOTE_KEEP, EW_OUT_CASTABLE};
    return ew_pair_phase1(&c, ws, ex);
}

/* ---- tensor ** scalar and scalar ** tensor ---------------------------------------------------- */

/* One of the scalar forms: the tensor operand, the scalar one, and which of them is the base. */
typedef struct {
    const char *api;
    const char *op_name;
    const aclTensor *tensor;
    const aclScalar *scalar;
    const aclTensor *out;
    int scalar_is_base;   /* PowScalarTensor */
} pow_scalar_call;

/* The compute dtype (the vendor's InferTensorScalarDtype / InferScalarTensorDtype): the tensor's
 * dtype if it is floating, else promoted with the scalar's when the scalar is floating or the tensor
 * BOOL. Atlas A2/A3 take a DOUBLE exponent into a FLOAT out as FLOAT; Ascend 950 (regbase) reads a
 * floating scalar as FLOAT first. */
static aclDataType pow_compute(aclDataType tensor, aclDataType scalar, aclDataType exponent, aclDataType out) {
    if (ew_soc_is_950()) {
        aclDataType s = ew_is_float(scalar) ? ACL_FLOAT : scalar;
        if (ew_is_float(tensor)) return tensor;
        return tensor == ACL_BOOL || ew_is_float(s) ? ew_promote(tensor, s) : tensor;
    }
    if (exponent == ACL_DOUBLE && out == ACL_FLOAT) return ACL_FLOAT;
    if (ew_is_float(tensor)) return tensor;
    return ew_is_float(scalar) || tensor == ACL_BOOL ? ew_promote(tensor, scalar) : tensor;
}

static aclnnStatus cannot_promote(const char *api, const char *what, aclDataType self, aclDataType exponent) {
    char b1[24], b2[24];
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "%s dtype %s and exponent dtype %s can not promote dtype.",
                        what, op_dtype_name(self, b1), op_dtype_name(exponent, b2));
    return ACLNN_ERR_PARAM_INVALID;
}

static aclnnStatus cannot_cast(const char *api, aclDataType result, aclDataType out) {
    char b1[24], b2[24];
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "Result dtype %s can't be cast to the desired output type %s",
                        op_dtype_name(result, b1), op_dtype_name(out, b2));
    return ACLNN_ERR_PARAM_INVALID;
}

static aclnnStatus check_in_list(const char *api, const char *what, aclDataType dt) {
    for (size_t i = 0; i < N_POW; i++)
        if (POW[i] == dt) return ACLNN_SUCCESS;
    char b[24], all[160];
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "%s dtype %s should be in dtype support list [%s].", what,
                        op_dtype_name(dt, b), ew_dtype_list(POW, N_POW, all, sizeof all));
    return ACLNN_ERR_PARAM_INVALID;
}

/* Ascend 950's extra checks on a scalar exponent (CheckPowTensorScalarExponet, CheckNotOverflow):
 * an integral compute dtype takes no negative exponent, and the exponent must fit the compute dtype. */
static aclnnStatus check_exponent_950(const char *api, aclDataType compute, aclDataType sdt, ew_value v) {
    char b[24];
    if (ew_is_integral(compute, 0) && (ew_is_float(sdt) ? (int64_t)v.f : v.i) < 0) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api,
                            "Base dtype is intergal and exponent negative integers is not allowed.");
        return ACLNN_ERR_PARAM_INVALID;
    }
    double lo, hi;
    switch (compute) {
    case ACL_FLOAT: hi = 3.4028234663852886e38; break;
    case ACL_FLOAT16: hi = 65504.0; break;
    case ACL_BF16: hi = 3.3895313892515355e38; break;
    case ACL_INT8: lo = -128, hi = 127; goto integral;
    case ACL_INT16: lo = -32768, hi = 32767; goto integral;
    case ACL_INT32: lo = -2147483648.0, hi = 2147483647.0; goto integral;
    case ACL_UINT8: lo = 0, hi = 255; goto integral;
    default: return ACLNN_SUCCESS;   /* INT64, DOUBLE, BOOL: no check */
    }
    {   /* floating compute dtype: a finite exponent beyond its largest value overflows */
        double x = ew_value_to_double(v, sdt);
        if (isfinite(x) && (x > hi || x < -hi)) {   /* inf and NaN convert */
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "exponent value cannot be converted to promote type "
                                "%s without overflow: %f.", op_dtype_name(compute, b), x);
            return ACLNN_ERR_PARAM_INVALID;
        }
        return ACLNN_SUCCESS;
    }
integral:
    if ((double)v.i < lo || (double)v.i > hi) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "exponent value cannot be converted to promote type %s "
                            "without overflow: %lld.", op_dtype_name(compute, b), (long long)v.i);
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

/* Phase 1 of PowTensorScalar / PowScalarTensor in the vendor's order: NULLs (161001); the base's
 * and the exponent's dtypes in the support list; their plain promotion defined and castable to out;
 * the compute dtype defined, not BOOL ** BOOL, castable to out; at most 8 dimensions and out of the
 * tensor's shape (all 161002); then an empty tensor gives an executor that does nothing. */
static aclnnStatus pow_scalar_phase1(const pow_scalar_call *c, uint64_t *ws, aclOpExecutor **ex) {
    const char *api = c->api;
    const char *tname = c->scalar_is_base ? "exponent" : "self", *sname = c->scalar_is_base ? "self" : "exponent";
    ew_ptr_arg ptrs[3] = {{"self", NULL}, {"exponent", NULL}, {"out", c->out}};
    ptrs[c->scalar_is_base ? 0 : 1].ptr = c->scalar;
    ptrs[c->scalar_is_base ? 1 : 0].ptr = c->tensor;
    aclnnStatus rc = ew_check_not_null(api, ptrs, 3, ws, ex);
    if (rc) return rc;
    pyaclnn_stub_tensor t, out;
    aclDataType sdt;
    ew_value sval;
    if (c->scalar_is_base) {
        if ((rc = ew_scalar_arg(api, sname, c->scalar, &sdt, &sval)) || (rc = op_tensor_arg(api, tname, c->tensor, &t)))
            return rc;
    } else if ((rc = op_tensor_arg(api, tname, c->tensor, &t)) || (rc = ew_scalar_arg(api, sname, c->scalar, &sdt, &sval))) {
        return rc;
    }
    if ((rc = op_tensor_arg(api, "out", c->out, &out))) return rc;

    aclDataType self_dt = c->scalar_is_base ? sdt : t.dtype, exp_dt = c->scalar_is_base ? t.dtype : sdt;
    if ((rc = check_in_list(api, "Self", self_dt)) || (rc = check_in_list(api, "exp", exp_dt))) return rc;
    aclDataType plain = ew_promote(self_dt, exp_dt);
    if (plain == ACL_DT_UNDEFINED) return cannot_promote(api, "self", self_dt, exp_dt);
    if (!ew_can_cast(plain, out.dtype)) return cannot_cast(api, plain, out.dtype);
    aclDataType p = pow_compute(t.dtype, sdt, exp_dt, out.dtype);
    if (p == ACL_DT_UNDEFINED) return cannot_promote(api, "Self", self_dt, exp_dt);
    if (self_dt == ACL_BOOL && exp_dt == ACL_BOOL) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "Self and exponent dtype are bool is not supported.");
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (!ew_can_cast(p, out.dtype) || ew_itemsize(out.dtype) == 0) return cannot_cast(api, p, out.dtype);
    if ((rc = ew_check_max_dim(api, tname, &t, EW_MAX_DIM))) return rc;
    if ((rc = ew_check_shape(api, "out", &out, t.shape, t.ndim))) return rc;

    int empty = pyaclnn_stub_numel(&t) == 0;
    if (!empty && !c->scalar_is_base && ew_soc_is_950() && (rc = check_exponent_950(api, p, sdt, sval))) return rc;
    ew_plan plan = {.op = EW_OP_POW, .compute = p, .n_inputs = 1, .scalar = ew_cast(sval, sdt, p)};
    if (c->scalar_is_base) plan.scalar_first = 1;
    else plan.scalar_second = 1;
    const aclTensor *inputs[1] = {c->tensor};
    return ew_make_executor(api, c->op_name, &plan, empty, inputs, 1, c->out, ws, ex);
}

aclnnStatus aclnnPowTensorScalarGetWorkspaceSize(const aclTensor *self, const aclScalar *exponent, const aclTensor *out,
                                                 uint64_t *workspaceSize, aclOpExecutor **executor) {
    pow_scalar_call c = {"aclnnPowTensorScalarGetWorkspaceSize", "PowTensorScalar", self, exponent, out, 0};
    return pow_scalar_phase1(&c, workspaceSize, executor);
}

aclnnStatus aclnnInplacePowTensorScalarGetWorkspaceSize(const aclTensor *self, const aclScalar *exponent,
                                                        uint64_t *workspaceSize, aclOpExecutor **executor) {
    pow_scalar_call c = {"aclnnInplacePowTensorScalarGetWorkspaceSize", "InplacePowTensorScalar", self, exponent,
                         self, 0};
    return pow_scalar_phase1(&c, workspaceSize, executor);
}

aclnnStatus aclnnPowScalarTensorGetWorkspaceSize(const aclScalar *self, const aclTensor *exponent, const aclTensor *out,
                                                 uint64_t *workspaceSize, aclOpExecutor **executor) {
    pow_scalar_call c = {"aclnnPowScalarTensorGetWorkspaceSize", "PowScalarTensor", exponent, self, out, 1};
    return pow_scalar_phase1(&c, workspaceSize, executor);
}

aclnnStatus aclnnPowTensorTensorGetWorkspaceSize(const aclTensor *self, const aclTensor *exponent, aclTensor *out,
                                                 uint64_t *workspaceSize, aclOpExecutor **executor) {
    return pow_tensor_tensor("aclnnPowTensorTensorGetWorkspaceSize", "PowTensorTensor", self, exponent, out,
                             workspaceSize, executor);
}

aclnnStatus aclnnInplacePowTensorTensorGetWorkspaceSize(const aclTensor *self, const aclTensor *exponent,
                                                        uint64_t *workspaceSize, aclOpExecutor **executor) {
    return pow_tensor_tensor("aclnnInplacePowTensorTensorGetWorkspaceSize", "InplacePowTensorTensor", self,
                             exponent, self, workspaceSize, executor);
}

EW_DEFINE_PHASE2(aclnnPowTensorScalar)
EW_DEFINE_PHASE2(aclnnInplacePowTensorScalar)
EW_DEFINE_PHASE2(aclnnPowScalarTensor)
EW_DEFINE_PHASE2(aclnnPowTensorTensor)
EW_DEFINE_PHASE2(aclnnInplacePowTensorTensor)
