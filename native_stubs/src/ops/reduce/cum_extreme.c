/*
 * aclnnCummax / aclnnCummin (cum_extreme.toml): the running extreme of self along dim and the index it came
 * from. Each line is walked once: the running value x is kept while it is strictly better than the new
 * element y (x > y for the maximum, x < y for the minimum; the vendor's regbase cummin kernel: Compare LT,
 * then Select), otherwise y and its index are taken. Values are moved, never computed (class a).
 */
#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"

typedef struct {
    int64_t outer, len, inner;   /* self as [outer, len (dim), inner] */
    int max;                     /* running maximum (else minimum)   */
} cumext_params;

/* Whether the running value x stays against y (a comparison with NaN is false). */
static int keeps(ew_value x, ew_value y, int is_float, int max) {
    if (is_float) return max ? x.f > y.f : x.f < y.f;
    return max ? x.i > y.i : x.i < y.i;
}

void cumext_kernel(const pyaclnn_stub_launch *launch) {
    const cumext_params *p = launch->params;
    const pyaclnn_stub_tensor *self = &launch->inputs[0], *vals = &launch->outputs[0], *idx = &launch->outputs[1];
    if (!tv_launch_views_ok(launch)) return;
    aclDataType dt = self->dtype;
    int is_float = ew_repr_of(dt) == EW_REPR_F;
    for (int64_t o = 0; o < p->outer; o++) {
        for (int64_t in = 0; in < p->inner; in++) {
            ew_value x = {0};
            int64_t at = 0;
            for (int64_t l = 0; l < p->len; l++) {
                int64_t lin = (o * p->len + l) * p->inner + in;
                ew_value y = ew_load(tv_at(self, tv_offset(self, lin)), dt);
                if (l == 0 || !keeps(x, y, is_float, p->max)) {
                    x = y;
                    at = l;
                }
                ew_store(tv_at(vals, tv_offset(vals, lin)), vals->dtype, ew_cast(x, dt, vals->dtype));
                ew_store(tv_at(idx, tv_offset(idx, lin)), idx->dtype, (ew_value){.i = at});
            }
        }
    }
}

/* cumext_dim self dim zero_d: dim in range, with the vendor's messages; a 0-d self takes dim 0 / -1 when
 * zero_d (Cummin), and is refused otherwise (Cummax: "tensor has not dimensions"). */
aclnnStatus opc_cumext_dim(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0);
    int64_t dim = op_argument(c, s, 1)->i, rank = self->ndim;
    if (rank == 0 && s->n == 0)
        return op_invalidf(c->api, "dimension specified as %lld but tensor has not dimensions.", (long long)dim);
    if (rank == 0 && (dim == 0 || dim == -1)) return ACLNN_SUCCESS;
    if (dim < -rank || dim > rank - 1)
        return op_invalidf(c->api, "dim must be within the range of [%lld, %lld], but it is %lld.", (long long)-rank,
                           (long long)(rank - 1), (long long)dim);
    return ACLNN_SUCCESS;
}

/* cumext_plan self dim max: self as [outer, len, inner] around dim; the running maximum when max is 1. */
aclnnStatus opc_cumext_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0);
    int64_t dim = op_argument(c, s, 1)->i, rank = self->ndim;
    cumext_params *prm = op_params(c, sizeof *prm);
    *prm = (cumext_params){1, 1, 1, s->n != 0};
    if (rank > 0) {   /* products of dims that may hold a 0 (tv_dims_product) */
        int64_t d = dim < 0 ? dim + rank : dim;
        prm->outer = tv_dims_product(self->shape, 0, d);
        prm->len = self->shape[d];
        prm->inner = tv_dims_product(self->shape, d + 1, rank);
    }
    return ACLNN_SUCCESS;
}
