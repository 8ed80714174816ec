/*
 * The steps of the pow operators (pow.toml), following the vendor's op_api (hicann/ops-math
 * math/pow/op_api/aclnn_pow.cpp, aclnn_pow_tensor_tensor.cpp):
 *   pow_not_both_bool self exponent           BOOL ** BOOL refused (tensor ** tensor, before the lists)
 *   pow_in self exponent LIST                 the scalar forms' dtypes in the support list
 *   pow_scalar_dtype self exponent out        ... their promotion and compute dtype, castable to out
 *   pow_scalar_plan self exponent             Ascend 950's checks on a scalar exponent, then the plan
 */
#include <math.h>

#include "opbase/checks.h"
#include "ops_decls.h"

static aclnnStatus both_bool(const char *api) {
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "Self and exponent dtype are bool is not supported.");
    return ACLNN_ERR_PARAM_INVALID;
}

/* pow_not_both_bool self exponent */
aclnnStatus opc_pow_not_both_bool(op_call *c, const op_step *s) {
    if (op_tensor(c, s, 0)->dtype == ACL_BOOL && op_tensor(c, s, 1)->dtype == ACL_BOOL) return both_bool(c->api);
    return ACLNN_SUCCESS;
}

/* ---- tensor ** scalar and scalar ** tensor ---------------------------------------------------- */

/* The dtype of step operand k: a tensor's or a scalar's. */
static aclDataType operand_dtype(op_call *c, const op_step *s, int k) {
    return c->def->params[s->p[k]].kind == OP_K_SCALAR ? op_scalar_of(c, s, k)->dtype : op_tensor(c, s, k)->dtype;
}

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

/* pow_in self exponent LIST: the base's and the exponent's dtypes (tensor or scalar) in LIST. */
aclnnStatus opc_pow_in(op_call *c, const op_step *s) {
    size_t n;
    const aclDataType *list = op_list(s->list, &n);
    for (int k = 0; k < 2; k++) {
        aclDataType dt = operand_dtype(c, s, k);
        if (ew_in_list(dt, list, n)) continue;
        char b[24], all[160];
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "%s dtype %s should be in dtype support list [%s].",
                            k == 0 ? "Self" : "exp", op_dtype_name(dt, b), ew_dtype_list(list, n, all, sizeof all));
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

/* pow_scalar_dtype self exponent out, one of self and exponent a scalar: their plain promotion defined
 * and castable to out; the compute dtype (c->compute) defined, not BOOL ** BOOL, castable to out
 * (all 161002). */
aclnnStatus opc_pow_scalar_dtype(op_call *c, const op_step *s) {
    const char *api = c->api;
    int scalar_is_base = c->def->params[s->p[0]].kind == OP_K_SCALAR;
    aclDataType self_dt = operand_dtype(c, s, 0), exp_dt = operand_dtype(c, s, 1), out = op_tensor(c, s, 2)->dtype;
    aclDataType tensor = scalar_is_base ? exp_dt : self_dt, sdt = scalar_is_base ? self_dt : exp_dt;
    aclDataType plain = ew_promote(self_dt, exp_dt);
    if (plain == ACL_DT_UNDEFINED) return cannot_promote(api, "self", self_dt, exp_dt);
    if (!ew_can_cast(plain, out)) return cannot_cast(api, plain, out);
    aclDataType p = pow_compute(tensor, sdt, exp_dt, out);
    if (p == ACL_DT_UNDEFINED) return cannot_promote(api, "Self", self_dt, exp_dt);
    if (self_dt == ACL_BOOL && exp_dt == ACL_BOOL) return both_bool(api);
    if (!ew_can_cast(p, out) || ew_itemsize(out) == 0) return cannot_cast(api, p, out);
    c->compute = p;
    return ACLNN_SUCCESS;
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

/* pow_scalar_plan self exponent: on Ascend 950 a scalar exponent of a non-empty tensor is checked
 * (check_exponent_950); then the pointwise plan, the scalar cast to the compute dtype as the base
 * (PowScalarTensor) or the exponent; nothing to launch for an empty tensor. */
aclnnStatus opc_pow_scalar_plan(op_call *c, const op_step *s) {
    int scalar_is_base = c->def->params[s->p[0]].kind == OP_K_SCALAR;
    const op_scalar *sc = op_scalar_of(c, s, scalar_is_base ? 0 : 1);
    int empty = pyaclnn_stub_numel(op_tensor(c, s, scalar_is_base ? 1 : 0)) == 0;
    aclnnStatus rc;
    if (!empty && !scalar_is_base && ew_soc_is_950() && (rc = check_exponent_950(c->api, c->compute, sc->dtype, sc->v)))
        return rc;
    return opc_pw_plan(c, s);   /* (a scalar base is the plan's first operand: opc_pw_plan's scalar_first) */
}
