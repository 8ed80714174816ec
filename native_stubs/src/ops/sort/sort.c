/*
 * aclnnSort (sort.toml): self sorted along dim, values and INT64 indices, on the selection kernel
 * (kernels/select.h: the whole line selected, in rank order). The step checks dim as the op_api does
 * (hicann/ops-math math/sort/op_api/aclnn_sort.cpp).
 */
#include "kernels/select.h"
#include "opbase/checks.h"
#include "ops_decls.h"

/* sort_plan self dim descending: dim within [min(-rank, rank - 1), max(-rank, rank - 1)] ("dim should be in
 * range [a, b]."; a 0-d self takes -1 and 0); the selection of every element of each line. */
aclnnStatus opc_sort_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0);
    int64_t dim = op_argument(c, s, 1)->i, rank = self->ndim;
    int64_t lo = -rank < rank - 1 ? -rank : rank - 1, hi = -rank < rank - 1 ? rank - 1 : -rank;
    if (dim > hi || dim < lo) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "dim should be in range [%lld, %lld].", (long long)lo,
                            (long long)hi);
        return ACLNN_ERR_PARAM_INVALID;
    }
    int64_t d = rank == 0 ? 0 : dim < 0 ? dim + rank : dim;
    sel_params *prm = op_params(c, sizeof *prm);
    *prm = (sel_params){1, 1, 1, 1, op_argument(c, s, 2)->i != 0, 1, 0, 1, 0, 0};
    if (rank > 0) {   /* products of dims that may hold a 0 (tv_dims_product) */
        prm->outer = tv_dims_product(self->shape, 0, d);
        prm->len = self->shape[d];
        prm->inner = tv_dims_product(self->shape, d + 1, rank);
    }
    prm->k = prm->len;
    return ACLNN_SUCCESS;
}
