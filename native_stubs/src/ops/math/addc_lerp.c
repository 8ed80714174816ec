/*
 * The steps of aclnnAddcmul / aclnnAddcdiv / aclnnLerps and their in-place forms (addc_lerp.toml),
 * following the vendor's op_api (hicann/ops-math math/addcmul, math/addcdiv, math/lerp):
 *   addc_dtype self tensor1 tensor2 out   tensor1/tensor2, then self with them, promote; Addcmul refuses an
 *                                         INT16 or BOOL result; the result castable to out
 *   addc_plan self value                  the plan: value in the compute dtype (or FLOAT: the mixed rule)
 *   lerp_broadcast self end               self and end broadcast (the vendor's message after the shapes')
 *   lerp_max_dim self end out N           at most N dims unless every view is contiguous
 *   lerp_plan self weight                 the plan in self's dtype, weight as the op_api converts it
 * Arithmetic: src/kernels/elementwise.h.
 */
#include "opbase/checks.h"
#include "ops_decls.h"

/* The plan of the engine's three-operand ops: the spec's op in `compute` over n_inputs tensors, the
 * scalar factor converted to `scalar_dtype`. */
static void scalar_plan(op_call *c, aclDataType compute, int n_inputs, const op_scalar *v, aclDataType scalar_dtype) {
    const ew_spec *sp = c->def->spec;
    ew_plan *plan = op_params(c, sizeof *plan);
    plan->op = sp->op;
    plan->compute = compute;
    plan->n_inputs = n_inputs;
    plan->scalar = ew_cast(v->v, v->dtype, scalar_dtype);
}

/* ---- Addcmul, Addcdiv ----------------------------------------------------------------------- */

aclnnStatus opc_addc_dtype(op_call *c, const op_step *s) {
    const char *api = c->api;
    int is_mul = ((const ew_spec *)c->def->spec)->op == EW_OP_ADDCMUL;
    aclDataType self = op_tensor(c, s, 0)->dtype, t1 = op_tensor(c, s, 1)->dtype, t2 = op_tensor(c, s, 2)->dtype;
    aclDataType out = op_tensor(c, s, 3)->dtype;
    char b1[24], b2[24], b3[24];
    aclDataType p12 = ew_promote(t1, t2);
    if (p12 == ACL_DT_UNDEFINED) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "tensor1 dtype %s and tensor2 dtype %s can not promote "
                            "dtype.", op_dtype_name(t1, b1), op_dtype_name(t2, b2));
        return ACLNN_ERR_PARAM_INVALID;
    }
    aclDataType p = ew_promote(self, p12);
    if (p == ACL_DT_UNDEFINED) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "self dtype %s and tensor1 * tensor2 dtype %s * %s can not "
                            "promote dtype.", op_dtype_name(self, b1), op_dtype_name(t1, b2), op_dtype_name(t2, b3));
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (is_mul && (p == ACL_INT16 || p == ACL_BOOL)) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "addcmul can not support promote dtype %s, self dtype is %s "
                            "and tensor1 * tensor2 dtype is %s * %s", op_dtype_name(p, b1), op_dtype_name(self, b2),
                            op_dtype_name(t1, b3), op_dtype_name(t2, b3));
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (!ew_can_cast(p, out) || ew_itemsize(out) == 0) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "Result dtype %s can't be cast to the desired output type %s",
                            op_dtype_name(p, b1), op_dtype_name(out, b2));
        return ACLNN_ERR_PARAM_INVALID;
    }
    c->compute = p;
    return ACLNN_SUCCESS;
}

aclnnStatus opc_addc_plan(op_call *c, const op_step *s) {
    aclDataType self = op_tensor(c, s, 0)->dtype, p = c->compute;
    const op_scalar *v = op_scalar_of(c, s, 1);
    int mixed = ew_soc_is_950() && (self == ACL_FLOAT16 || self == ACL_BF16) && ew_is_float(v->dtype) &&
                p != ACL_DOUBLE;
    scalar_plan(c, p, 3, v, mixed ? ACL_FLOAT : p);
    return ACLNN_SUCCESS;
}

/* ---- Lerps ----------------------------------------------------------------------------------- */

aclnnStatus opc_lerp_broadcast(op_call *c, const op_step *s) {
    if (opc_broadcast(c, s) == ACLNN_SUCCESS) return ACLNN_SUCCESS;
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Shape of self and end can't broadcast.");
    return ACLNN_ERR_PARAM_INVALID;
}

aclnnStatus opc_lerp_max_dim(op_call *c, const op_step *s) {
    int contiguous = 1;
    for (int k = 0; k < s->np; k++) contiguous = contiguous && pyaclnn_stub_is_contiguous(op_tensor(c, s, k));
    if (contiguous) return ACLNN_SUCCESS;
    op_step inputs = *s;
    inputs.np = 2;   /* self and end */
    return opc_max_dim(c, &inputs);
}

aclnnStatus opc_lerp_plan(op_call *c, const op_step *s) {
    aclDataType self = op_tensor(c, s, 0)->dtype;
    /* the op_api's weight tensor */
    scalar_plan(c, self, 2, op_scalar_of(c, s, 1), ew_soc_is_950() ? ACL_FLOAT : self);
    return ACLNN_SUCCESS;
}
