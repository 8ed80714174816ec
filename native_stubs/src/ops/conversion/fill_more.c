/*
 * aclnnInplaceFillTensor and aclnnInplaceFillDiagonal (definitions: fill_more.toml).
 */
#include <float.h>
#include <math.h>
#include <stdint.h>

#include "kernels/dtype.h"
#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"

typedef struct {
    ew_value value;              /* FillDiagonal: fillValue cast to selfRef's dtype */
    int wrap;
} fd_params;

/* ---- kernels -------------------------------------------------------------------------------- */

void fill_tensor_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const pyaclnn_stub_tensor *v = &launch->inputs[0], *self = &launch->outputs[0];
    ew_value x = ew_cast(ew_load(tv_at(v, v->offset), v->dtype), v->dtype, self->dtype);
    int64_t n = pyaclnn_stub_numel(self);
    tv_iter it;
    tv_iter_init(&it, self);
    for (int64_t i = 0; i < n; i++, tv_iter_next(&it)) ew_store(tv_at(self, it.off), self->dtype, x);
}

void fill_diagonal_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const fd_params *p = launch->params;
    const pyaclnn_stub_tensor *t = &launch->outputs[0];
    int64_t n = pyaclnn_stub_numel(t), step = 0, count = t->shape[0], inner = 1;
    for (int64_t d = t->ndim - 1; d >= 0; d--) {      /* the contiguous layout's strides, summed */
        step += inner;
        inner *= t->shape[d];
        if (t->shape[d] < count) count = t->shape[d];
    }
    if (p->wrap && t->ndim == 2) count = (n + step - 1) / step;   /* every (W + 1)-th element, wrapping rows */
    for (int64_t j = 0; j < count; j++) ew_store(tv_at(t, tv_offset(t, j * step)), t->dtype, p->value);
}

/* ---- steps ---------------------------------------------------------------------------------- */

/* ft_value_shape value: 0-D, or 1-D with one element. */
aclnnStatus opc_ft_value_shape(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *v = op_tensor(c, s, 0);
    if (v->ndim == 0 || (v->ndim == 1 && v->shape[0] == 1)) return ACLNN_SUCCESS;
    char b[200];
    return op_invalidf(c->api, "value shape should be 0D or 1D with size = 1, but got %s.",
                       tv_shape_text(v->shape, v->ndim, b, sizeof b));
}

/* fd_equal_dims selfRef: beyond 2 dims, all dims of one length. */
aclnnStatus opc_fd_equal_dims(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *t = op_tensor(c, s, 0);
    for (int64_t d = 1; t->ndim > 2 && d < t->ndim; d++)
        if (t->shape[d] != t->shape[0])
            return op_invalidf(c->api, "Dim of selfRef[%lld] greater than 2, all dimensions of input must be of equal "
                               "length.", (long long)t->ndim);
    return ACLNN_SUCCESS;
}

/* aclScalar::CheckOverflows<T>: a finite value beyond T's range (floats), a value outside T's range (integers). */
static int overflows(double v, aclDataType to) {
    switch (to) {
    case ACL_FLOAT: return isfinite(v) && fabs(v) > FLT_MAX;
    case ACL_FLOAT16: return isfinite(v) && fabs(v) > 65504.0;
    case ACL_DOUBLE: return 0;
    case ACL_INT8: return v < INT8_MIN || v > INT8_MAX;
    case ACL_INT16: return v < INT16_MIN || v > INT16_MAX;
    case ACL_INT32: return v < INT32_MIN || v > INT32_MAX;
    case ACL_INT64: return v < -9223372036854775808.0 || v >= 9223372036854775808.0;
    case ACL_UINT8: return v < 0 || v > UINT8_MAX;
    default: return 0;
    }
}

/* fd_overflow selfRef fillValue: the value fits selfRef's dtype (161002 "value cannot be converted ..."). */
aclnnStatus opc_fd_overflow(op_call *c, const op_step *s) {
    aclDataType to = op_tensor(c, s, 0)->dtype;
    const op_scalar *v = op_scalar_of(c, s, 1);
    int integral = ew_is_integral(v->dtype, 1);
    double x = integral ? (double)v->v.i : ew_value_to_double(v->v, v->dtype);
    if (!overflows(x, to)) return ACLNN_SUCCESS;
    char b[24];
    if (ew_is_float(to))
        return op_invalidf(c->api, "value cannot be converted to type %s without overflow : %f.", op_dtype_name(to, b), x);
    return op_invalidf(c->api, "value cannot be converted to type %s without overflow : %lld.", op_dtype_name(to, b),
                       integral ? (long long)v->v.i : (long long)ew_cast(v->v, v->dtype, ACL_INT64).i);
}

/* fd_plan selfRef fillValue wrap: the value cast to selfRef's dtype once; wrap. */
aclnnStatus opc_fd_plan(op_call *c, const op_step *s) {
    fd_params *p = op_params(c, sizeof(fd_params));
    const op_scalar *v = op_scalar_of(c, s, 1);
    p->value = ew_cast(v->v, v->dtype, op_tensor(c, s, 0)->dtype);
    p->wrap = op_argument(c, s, 2)->i != 0;
    return ACLNN_SUCCESS;
}
