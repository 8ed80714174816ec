/*
 * aclnnEqual and aclnnIsClose (closeness.toml): the element function of IsClose on the elementwise engine,
 * Equal's own kernel (a whole-tensor answer in one BOOL element) and its steps
 * (hicann/ops-math math/tensor_equal, math/is_close).
 */
#include <math.h>

#include "kernels/view.h"
#include "opbase/checks.h"
#include "opbase/pointwise.h"
#include "ops_decls.h"

/* IsClose, the arch35 kernel's steps: both values as fp32, x1 == x2, or both NaN (equalNan), or |x2| < inf and
 * |x1 - x2| <= |x2| * rtol + atol, each step rounded to fp32 (attr: rtol, atol, equalNan). */
ew_value isclose_f(const ew_plan *p, ew_value x0, ew_value x1, ew_value x2) {
    int fl = ew_repr_of(p->compute) == EW_REPR_F;
    float a = fl ? (float)x0.f : (float)x0.i, b = fl ? (float)x1.f : (float)x1.i;
    float rtol = (float)p->attr[0], atol = (float)p->attr[1];
    int res = a == b || (p->attr[2] != 0 && isnan(a) && isnan(b));
    float diff = fabsf(a - b), bound = fabsf(b) * rtol;
    bound = bound + atol;
    res = res || (diff <= bound && fabsf(b) < INFINITY);
    return (ew_value){0, res};
}

typedef struct {
    aclDataType compute;   /* the promoted dtype (BF16 compares as FLOAT) */
    int fill;              /* -1: compare; 0 / 1: the answer without comparing (shapes differ / both empty) */
} equal_params;

void equal_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const equal_params *p = launch->params;
    const pyaclnn_stub_tensor *a = &launch->inputs[0], *b = &launch->inputs[1], *out = &launch->outputs[0];
    int equal = p->fill;
    if (equal < 0) {
        equal = 1;
        tv_iter ia, ib;
        tv_iter_init(&ia, a);
        tv_iter_init(&ib, b);
        for (int64_t n = pyaclnn_stub_numel(a), i = 0; i < n && equal; i++, tv_iter_next(&ia), tv_iter_next(&ib)) {
            ew_value x = ew_cast(ew_load(tv_at(a, ia.off), a->dtype), a->dtype, p->compute);
            ew_value y = ew_cast(ew_load(tv_at(b, ib.off), b->dtype), b->dtype, p->compute);
            equal = ew_repr_of(p->compute) == EW_REPR_F ? x.f == y.f : x.i == y.i;   /* NaN: unequal */
        }
    }
    tv_iter it;
    tv_iter_init(&it, out);
    ew_store(tv_at(out, it.off), out->dtype, (ew_value){0, equal});
}

/* equal_plan self other LIST: the promoted dtype exists ("Self dtype X and other dtype Y can not promote
 * dtype.") and is in LIST; Equal's plan (shapes differ: false; both empty: true). */
aclnnStatus opc_equal_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *a = op_tensor(c, s, 0), *b = op_tensor(c, s, 1);
    aclDataType pr = a->dtype == b->dtype ? a->dtype : ew_promote(a->dtype, b->dtype);
    char n1[24], n2[24], n3[24], lt[300];
    if (pr == ACL_DT_UNDEFINED) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Self dtype %s and other dtype %s can not promote dtype.",
                            op_dtype_name(a->dtype, n1), op_dtype_name(b->dtype, n2));
        return ACLNN_ERR_PARAM_INVALID;
    }
    size_t n;
    const aclDataType *list = op_list(s->list, &n);
    if (!ew_in_list(pr, list, n)) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Self dtype %s and other dtype %s get promoteType dtype %s "
                            "should be in dtype support list [%s].", op_dtype_name(a->dtype, n1),
                            op_dtype_name(b->dtype, n2), op_dtype_name(pr, n3), ew_dtype_list(list, n, lt, sizeof lt));
        return ACLNN_ERR_PARAM_INVALID;
    }
    equal_params *prm = op_params(c, sizeof *prm);
    int same = a->ndim == b->ndim;
    for (int64_t d = 0; same && d < a->ndim; d++) same = a->shape[d] == b->shape[d];
    prm->compute = pr == ACL_BF16 ? ACL_FLOAT : pr;
    prm->fill = !same ? 0 : pyaclnn_stub_numel(a) == 0 ? 1 : -1;
    return ACLNN_SUCCESS;
}

/* equal_out out: out has the shape [1] (OP_CHECK_SHAPE_NOT_EQUAL_WITH_EXPECTED_SIZE). */
aclnnStatus opc_equal_out(op_call *c, const op_step *s) {
    static const int64_t one[1] = {1};
    return ew_check_shape(c->api, op_pname(c, s, 0), op_tensor(c, s, 0), one, 1);
}
