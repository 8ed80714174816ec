/*
 * aclnnCumsum: out = the running sums of self along dim, computed in out's dtype (hicann/ops-math
 * math/cumsum/op_api/aclnn_cumsum.cpp; torch's cumsum). aclnnCumprod / InplaceCumprod (prod.toml): the
 * running products, the same way (math/cumprod/op_api/aclnn_cumprod.cpp; torch's cumprod). self is cast to out's dtype first (the NPU's
 * Cast); `dtype` must be out's dtype. Integers: exact, wrapping at out's width (class a). Floats: each
 * prefix sum in float64 rounded once to fp32 and then to the dtype (class c: the NPU's summation order
 * and fp32 steps are not published).
 */
#include <stdlib.h>

#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"

typedef struct {
    int64_t outer, len, inner;   /* the shape as [outer, len (dim), inner] */
    int prod;                    /* running products (Cumprod) instead of sums */
} cumsum_params;

void cumsum_kernel(const pyaclnn_stub_launch *launch) {
    const cumsum_params *p = launch->params;
    const pyaclnn_stub_tensor *self = &launch->inputs[0], *out = &launch->outputs[0];
    if (!tv_launch_views_ok(launch)) return;
    int64_t n = p->outer * p->len * p->inner;
    aclDataType dt = out->dtype;
    int is_float = ew_repr_of(dt) == EW_REPR_F;
    ew_value *v = tv_alloc(n, sizeof *v);   /* (self may be a 0-stride view of more elements than memory holds) */
    if (v == NULL) {
        tv_fail_oom(launch);
        return;
    }
    tv_iter it;
    tv_iter_init(&it, self);
    for (int64_t i = 0; i < n; i++, tv_iter_next(&it))
        v[i] = ew_cast(ew_load(tv_at(self, it.off), self->dtype), self->dtype, dt);
    for (int64_t o = 0; o < p->outer; o++) {
        for (int64_t in = 0; in < p->inner; in++) {
            double fs = p->prod ? 1.0 : 0.0;
            uint64_t is = p->prod ? 1 : 0;      /* wraps like the integer dtype (cast at the store) */
            for (int64_t l = 0; l < p->len; l++) {
                ew_value *e = &v[(o * p->len + l) * p->inner + in];
                if (is_float) {
                    fs = p->prod ? fs * e->f : fs + e->f;
                    *e = ew_cast((ew_value){.f = (double)(float)fs}, ACL_FLOAT, dt);
                    if (dt == ACL_DOUBLE) e->f = fs;
                } else {
                    is = p->prod ? is * (uint64_t)e->i : is + (uint64_t)e->i;
                    *e = ew_cast((ew_value){.i = (int64_t)is}, ACL_INT64, dt);
                }
            }
        }
    }
    tv_iter_init(&it, out);
    for (int64_t i = 0; i < n; i++, tv_iter_next(&it)) ew_store(tv_at(out, it.off), dt, v[i]);
    free(v);
}

/* The kernel's parameters: t's shape as [outer, len (dim d), inner]; running products when prod. */
static void new_plan(op_call *c, const pyaclnn_stub_tensor *t, int64_t d, int prod) {
    cumsum_params *prm = op_params(c, sizeof *prm);
    *prm = (cumsum_params){1, 1, 1, prod};
    if (t->ndim > 0) {   /* products of dims that may hold a 0 (tv_dims_product) */
        prm->outer = tv_dims_product(t->shape, 0, d);
        prm->len = t->shape[d];
        prm->inner = tv_dims_product(t->shape, d + 1, t->ndim);
    }
}

/* cumsum_dtype out dtype: the dtype argument is out's dtype. */
aclnnStatus opc_cumsum_dtype(op_call *c, const op_step *s) {
    aclDataType out = op_tensor(c, s, 0)->dtype, dtype = (aclDataType)op_argument(c, s, 1)->i;
    if (dtype == out) return ACLNN_SUCCESS;
    char b1[24], b2[24];
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "%s dtype %s does not match %s %s", op_pname(c, s, 0),
                        op_dtype_name(out, b1), op_pname(c, s, 1), op_dtype_name(dtype, b2));
    return ACLNN_ERR_PARAM_INVALID;
}

/* cumsum_plan self dim: dim in range; self of a dtype the emulator has elements for; the shape as
 * [outer, len (dim), inner]. */
aclnnStatus opc_cumsum_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0);
    int64_t dim = op_argument(c, s, 1)->i, rank = self->ndim ? self->ndim : 1;
    if (dim >= rank || dim < -rank) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "expected %s to be in range of [%lld, %lld], but got "
                            "%lld.", op_pname(c, s, 1), (long long)-rank, (long long)(rank - 1), (long long)dim);
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (ew_itemsize(self->dtype) == 0) {   /* complex and 4-bit: the vendor casts them; the emulator cannot */
        char b[24];
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "%s dtype %s is not supported by the emulator",
                            op_pname(c, s, 0), op_dtype_name(self->dtype, b));
        return ACLNN_ERR_PARAM_INVALID;
    }
    new_plan(c, self, dim < 0 ? dim + rank : dim, 0);
    return ACLNN_SUCCESS;
}

/* cumprod_plan input dim out [dtype]: dim (an INT32 / INT64 scalar) in range, out of input's shape, out's dtype
 * dtype (UNDEFINED or none: out's own), with the vendor's messages; the running-product plan. */
aclnnStatus opc_cumprod_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *in = op_tensor(c, s, 0), *out = op_tensor(c, s, 2);
    int32_t dim = (int32_t)op_scalar_of(c, s, 1)->v.i, rank = (int32_t)in->ndim;
    if (rank == 0 && dim != 0 && dim != -1) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Dimension out of range (expected to be in range of "
                            "[-1, 0], but got %d)", dim);
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (rank > 0 && (dim > rank - 1 || dim < -rank)) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "input dim(%d) out of range(%d,%d)", dim, -rank, rank - 1);
        return ACLNN_ERR_PARAM_INVALID;
    }
    aclnnStatus rc = ew_check_shape(c->api, op_pname(c, s, 2), out, in->shape, in->ndim);
    if (rc) return rc;
    aclDataType want = s->np > 3 ? (aclDataType)op_argument(c, s, 3)->i : out->dtype;
    if (want != ACL_DT_UNDEFINED && want != out->dtype) {
        char b1[24], b2[24];
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "%s dtype %s does not match dtype %s", op_pname(c, s, 2),
                            op_dtype_name(out->dtype, b1), op_dtype_name(want, b2));
        return ACLNN_ERR_PARAM_INVALID;
    }
    new_plan(c, in, rank == 0 ? 0 : dim < 0 ? dim + rank : dim, 1);
    return ACLNN_SUCCESS;
}
