/*
 * AddRelu (add_relu.toml): the element functions (the op_api's Add / Axpy / Mul + Add, then Relu) and the
 * dtype and in-place checks of aclnn_add_relu.cpp with its messages.
 */
#include "kernels/vecmath.h"
#include "opbase/checks.h"
#include "ops_decls.h"

/* FLOAT compute (every floating promotion): alpha 1 a plain fp32 Add, else Axpy (other * alpha rounded to fp32,
 * then the sum); Relu keeps NaN. */
ew_value add_relu_f(const ew_plan *p, ew_value a, ew_value b, ew_value z) {
    (void)z;
    double alpha = p->attr[0];
    float x = vm_in(a), y = vm_in(b), r = alpha == 1.0 ? x + y : x + y * (float)alpha;
    return vm_out(p, r < 0.0f ? 0.0f : r);
}

/* Integral compute: alpha cast to the compute dtype (truncated), Mul then Add wrapping in it; Relu. */
ew_value add_relu_i(const ew_plan *p, ew_value a, ew_value b, ew_value z) {
    (void)z;
    int64_t alpha = ew_cast((ew_value){p->attr[0], 0}, ACL_DOUBLE, p->compute).i;
    ew_value r = ew_cast((ew_value){0, (int64_t)((uint64_t)a.i + (uint64_t)b.i * (uint64_t)alpha)}, ACL_INT64,
                         p->compute);
    if (r.i < 0) r.i = 0;
    return r;
}

/* add_relu_dtypes self other alpha out: aclnn_add_relu.cpp's CheckPromoteType -- self and other promote, alpha
 * castable to the promotion (an integral alpha for BOOL), the promotion castable to out; floating promotions
 * compute in FLOAT. */
aclnnStatus opc_add_relu_dtypes(op_call *c, const op_step *s) {
    aclDataType a = op_tensor(c, s, 0)->dtype, b = op_tensor(c, s, 1)->dtype, out = op_tensor(c, s, 3)->dtype;
    aclDataType alpha = op_scalar_of(c, s, 2)->dtype, p = ew_promote(a, b);
    char b1[24], b2[24];
    if (p == ACL_DT_UNDEFINED)
        return op_invalidf(c->api, "Self dtype %s and other dtype %s can not promote dtype.", op_dtype_name(a, b1),
                           op_dtype_name(b, b2));
    if (p == ACL_BOOL ? !ew_is_integral(alpha, 1) : !ew_can_cast(alpha, p))
        return op_invalidf(c->api, "Alpha dtype %s can't be cast to the promote dtype %s.", op_dtype_name(alpha, b1),
                           op_dtype_name(p, b2));
    if (!ew_can_cast(p, out))
        return op_invalidf(c->api, "Promote dtype %s can't be cast to the desired output type %s.",
                           op_dtype_name(p, b1), op_dtype_name(out, b2));
    c->compute = ew_is_float(p) ? ACL_FLOAT : p;
    return ACLNN_SUCCESS;
}

/* add_relu_inplace selfRef other: CheckInplace -- both present (161001), broadcastable, and the broadcast shape
 * selfRef's own. */
aclnnStatus opc_add_relu_inplace(op_call *c, const op_step *s) {
    aclnnStatus rc = opc_not_null(c, s);
    if (rc) return rc;
    pyaclnn_stub_tensor self, other;
    rc = op_tensor_arg(c->api, "selfRef", op_argument(c, s, 0)->p, &self);
    if (rc == ACLNN_SUCCESS) rc = op_tensor_arg(c->api, "other", op_argument(c, s, 1)->p, &other);
    if (rc) return rc;
    int64_t shape[PYACLNN_STUB_MAX_DIMS], ndim;
    rc = ew_broadcast(c->api, "selfRef", &self, "other", &other, shape, &ndim);
    if (rc) return rc;
    int same = ndim == self.ndim;
    for (int64_t d = 0; same && d < ndim; d++) same = shape[d] == self.shape[d];
    if (same) return ACLNN_SUCCESS;
    char x[200], y[200];
    return op_invalidf(c->api, "Expected shape of selfRef should be %s, but got %s.", tv_shape_text(shape, ndim, x, sizeof x),
                       tv_shape_text(self.shape, self.ndim, y, sizeof y));
}
