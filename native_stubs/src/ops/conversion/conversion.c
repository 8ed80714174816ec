/*
 * The steps of the conversion family's operators on the elementwise engine (conversion.toml): Cast,
 * InplaceCopy, the fills, SWhere and InplaceMaskedFillScalar. Each plan is the engine's (src/kernels/
 * elementwise.h) with the spec's operation; the standard `empty` step says when there is nothing to launch.
 */
#include "opbase/checks.h"
#include "ops_decls.h"

/* The parameter block: the spec's operation in `compute` over n_inputs tensors. */
static ew_plan *conv_plan(op_call *c, aclDataType compute, int n_inputs) {
    ew_plan *plan = op_params(c, sizeof *plan);
    plan->op = ((const ew_spec *)c->def->spec)->op;
    plan->compute = compute;
    plan->n_inputs = n_inputs;
    return plan;
}

/* cast_plan self dtype: the copy computes in (converts to) dtype, then out's dtype. */
aclnnStatus opc_cast_plan(op_call *c, const op_step *s) {
    c->compute = (aclDataType)op_argument(c, s, 1)->i;
    op_step self = *s;
    self.np = 1;
    return opc_pw_plan(c, &self);
}

/* copy_shape selfRef: selfRef has the broadcast shape of selfRef and src (src must not grow it). */
aclnnStatus opc_copy_shape(op_call *c, const op_step *s) {
    return ew_check_shape(c->api, "selfRef (src must broadcast to it)", op_tensor(c, s, 0), c->shape, c->ndim);
}

/* copy_plan selfRef src: src cast to selfRef's dtype; equal dtypes copy the bytes unchanged. */
aclnnStatus opc_copy_plan(op_call *c, const op_step *s) {
    aclDataType self = op_tensor(c, s, 0)->dtype;
    conv_plan(c, self, 1)->raw_copy = self == op_tensor(c, s, 1)->dtype;
    return ACLNN_SUCCESS;
}

/* fill_promote selfRef value: CheckPromoteType, value's dtype promotes with selfRef's (unsigned 16..64-bit
 * selfs are outside the promotion table and accepted, as the vendor's newer table does). */
aclnnStatus opc_fill_promote(op_call *c, const op_step *s) {
    aclDataType self = op_tensor(c, s, 0)->dtype, vdt = op_scalar_of(c, s, 1)->dtype;
    if (ew_promote(self, vdt) == ACL_DT_UNDEFINED && ew_promote(self, self) != ACL_DT_UNDEFINED) {
        char b1[24], b2[24];
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Self dtype %s and value dtype %s can not promote dtype",
                            op_dtype_name(self, b1), op_dtype_name(vdt, b2));
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

/* fill_plan selfRef value | fill_plan selfRef N: the value (a scalar, or the integer N) cast to selfRef's
 * dtype once. */
aclnnStatus opc_fill_plan(op_call *c, const op_step *s) {
    aclDataType self = op_tensor(c, s, 0)->dtype;
    ew_plan *plan = conv_plan(c, self, 0);
    if (s->np > 1) plan->scalar = ew_cast(op_scalar_of(c, s, 1)->v, op_scalar_of(c, s, 1)->dtype, self);
    else plan->scalar = ew_cast((ew_value){0, s->n}, ACL_INT64, self);
    return ACLNN_SUCCESS;
}

/* where_dtype self other out: the promoted dtype of self and other castable to out. */
aclnnStatus opc_where_dtype(op_call *c, const op_step *s) {
    aclDataType p = ew_promote(op_tensor(c, s, 0)->dtype, op_tensor(c, s, 1)->dtype), out = op_tensor(c, s, 2)->dtype;
    if (!ew_can_cast(p, out) || ew_itemsize(out) == 0) {
        char b1[24], b2[24];
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Promote dtype %s can't be cast to the desired output "
                            "type %s", op_dtype_name(p, b1), op_dtype_name(out, b2));
        return ACLNN_ERR_PARAM_INVALID;
    }
    c->compute = p;
    return ACLNN_SUCCESS;
}

/* where_plan: condition (read as BOOL) picks self or other, in the promoted dtype. */
aclnnStatus opc_where_plan(op_call *c, const op_step *s) {
    (void)s;
    conv_plan(c, c->compute, 3)->bool_inputs = 1u;
    return ACLNN_SUCCESS;
}

/* masked_fill_plan selfRef value: where the mask (read as BOOL) is set, value cast to selfRef's dtype. */
aclnnStatus opc_masked_fill_plan(op_call *c, const op_step *s) {
    aclDataType self = op_tensor(c, s, 0)->dtype;
    ew_plan *plan = conv_plan(c, self, 2);
    plan->bool_inputs = 2u;
    plan->scalar = ew_cast(op_scalar_of(c, s, 1)->v, op_scalar_of(c, s, 1)->dtype, self);
    return ACLNN_SUCCESS;
}
