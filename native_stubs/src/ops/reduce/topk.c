/*
 * aclnnTopk: the k largest (or smallest) elements of self along dim and their int64 indices
 * (hicann/ops-nn index/gather_elements/op_api/aclnn_topk.cpp; torch's topk), on the selection kernel
 * (kernels/select.h: its order, NaN largest, ties in input order). sorted = true lists the selection from
 * the largest down (largest = true) or the smallest up; sorted = false lists the selected elements in
 * their input order. Data moves only: bit-exact (class a), with the tie order an emulator choice.
 * aclnnKthvalue (index/gather_v2/op_api/aclnn_kthvalue.cpp): the k-th of the ascending ranking only.
 */
#include "kernels/select.h"
#include "opbase/checks.h"
#include "ops_decls.h"

/* topk_plan self k dim largest sorted: dim in range, then k (the vendor's messages); the outputs' shape
 * (self's with k along dim) becomes the result shape; nothing to launch when k is 0 or self is empty. */
aclnnStatus opc_topk_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0);
    int64_t k = op_argument(c, s, 1)->i, dim = op_argument(c, s, 2)->i, rank = self->ndim;
    if ((rank == 0 && dim != 0 && dim != -1) || (rank > 0 && (dim < -rank || dim >= rank))) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Dimension out of range (expected to be in range of "
                            "[%lld, %lld], but got %lld)", (long long)(rank ? -rank : -1),
                            (long long)(rank ? rank - 1 : 0), (long long)dim);
        return ACLNN_ERR_PARAM_INVALID;
    }
    int64_t d = dim < 0 ? dim + (rank ? rank : 1) : dim;
    int64_t len = rank ? self->shape[d] : 1;
    if (k < 0 || k > len) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Selected index k out of range (max num of "
                            "self.size(%lld) is %lld, but k is %lld)", (long long)d, (long long)len, (long long)k);
        return ACLNN_ERR_PARAM_INVALID;
    }
    sel_params *prm = op_params(c, sizeof *prm);
    *prm = (sel_params){k, 1, len, 1, op_argument(c, s, 3)->i != 0, op_argument(c, s, 4)->i != 0, 0, 1, 0};
    if (rank > 0) {   /* products of dims that may hold a 0 (tv_dims_product) */
        prm->outer = tv_dims_product(self->shape, 0, d);
        prm->inner = tv_dims_product(self->shape, d + 1, rank);
    }
    for (int64_t i = 0; i < rank; i++) c->shape[i] = i == d ? k : self->shape[i];
    c->ndim = rank;
    if (k == 0 || pyaclnn_stub_numel(self) == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}

/* kth_check self k dim: aclnn_kthvalue.cpp's CheckParamValid -- dim in range ([-1, 0] for a 0-d self), k in
 * [1, the dim's size]; its messages as written. */
aclnnStatus opc_kth_check(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0);
    int64_t k = op_argument(c, s, 1)->i, dim = op_argument(c, s, 2)->i, rank = self->ndim;
    if (rank == 0 && dim != 0 && dim != -1) return op_invalidf(c->api, "The shape of input is invalid");
    if (rank > 0 && (dim < -rank || dim >= rank))
        return op_invalidf(c->api, "Dimension out of range (expected to be in range of [-%lld, %lld], but got %lld)",
                           (long long)rank, (long long)(rank - 1), (long long)dim);
    int64_t len = rank > 0 ? self->shape[dim < 0 ? dim + rank : dim] : 1;
    if (k <= 0 || k > len)
        return op_invalidf(c->api, "Selected index k out or range (max num of self.size(%lld) is %lld, but k is %lld)",
                           (long long)rank, (long long)len, (long long)k);
    return ACLNN_SUCCESS;
}

/* kth_indices indicesOut: INT64 (OP_CHECK_DTYPE_NOT_MATCH). */
aclnnStatus opc_kth_indices(op_call *c, const op_step *s) {
    char b[24];
    if (op_tensor(c, s, 0)->dtype == ACL_INT64) return ACLNN_SUCCESS;
    return op_invalidf(c->api, "Tensor %s expected dtype is INT64 but found %s.", op_pname(c, s, 0),
                       op_dtype_name(op_tensor(c, s, 0)->dtype, b));
}

/* kth_plan self k dim keepdim valuesOut indicesOut: the selection of the k-th smallest along dim; both outputs
 * of self's shape with dim removed (kept as 1 with keepdim); an empty self launches nothing. */
aclnnStatus opc_kth_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0);
    int64_t k = op_argument(c, s, 1)->i, dim = op_argument(c, s, 2)->i, rank = self->ndim, shape[PYACLNN_STUB_MAX_DIMS];
    int keep = op_argument(c, s, 3)->i != 0;
    int64_t d = rank > 0 ? (dim < 0 ? dim + rank : dim) : 0, ndim = 0;
    for (int64_t i = 0; i < rank; i++)
        if (i != d || keep) shape[ndim++] = i == d ? 1 : self->shape[i];
    for (int j = 4; j <= 5; j++) {
        aclnnStatus rc = ew_check_shape(c->api, op_pname(c, s, j), op_tensor(c, s, j), shape, ndim);
        if (rc) return rc;
    }
    sel_params *prm = op_params(c, sizeof *prm);
    *prm = (sel_params){k, 1, rank > 0 ? self->shape[d] : 1, 1, 0, 1, 0, 1, 1};
    if (rank > 0) {
        prm->outer = tv_dims_product(self->shape, 0, d);
        prm->inner = tv_dims_product(self->shape, d + 1, rank);
    }
    if (pyaclnn_stub_numel(self) == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}
