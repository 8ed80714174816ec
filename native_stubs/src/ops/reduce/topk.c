/*
 * aclnnTopk: the k largest (or smallest) elements of self along dim and their int64 indices
 * (hicann/ops-nn index/gather_elements/op_api/aclnn_topk.cpp; torch's topk), on the selection kernel
 * (kernels/select.h: its order, NaN largest, ties in input order). sorted = true lists the selection from
 * the largest down (largest = true) or the smallest up; sorted = false lists the selected elements in
 * their input order. Data moves only: bit-exact (class a), with the tie order an emulator choice.
 * aclnnKthvalue (index/gather_v2/op_api/aclnn_kthvalue.cpp): the k-th of the ascending ranking only;
 * aclnnMedian / aclnnMedianDim (aclnn_median.cpp): the ((n - 1) / 2 + 1)-th, a line with a NaN giving NaN and
 * its first NaN's index; Median of an empty self fills valuesOut (INT64 / INT32 minimum, NaN, else 0).
 */
#include <math.h>
#include <stdint.h>

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
    *prm = (sel_params){k, 1, len, 1, op_argument(c, s, 3)->i != 0, op_argument(c, s, 4)->i != 0, 0, 1, 0, 0};
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
    *prm = (sel_params){k, 1, rank > 0 ? self->shape[d] : 1, 1, 0, 1, 0, 1, 1, 0};
    if (rank > 0) {
        prm->outer = tv_dims_product(self->shape, 0, d);
        prm->inner = tv_dims_product(self->shape, d + 1, rank);
    }
    if (pyaclnn_stub_numel(self) == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}

/* The lower median's plan over a [outer, len, inner] view: the kth mode, NaN winning. */
static sel_params *median_params(op_call *c, int64_t outer, int64_t len, int64_t inner, int index_out) {
    sel_params *prm = op_params(c, sizeof *prm);
    *prm = (sel_params){(len - 1) / 2 + 1, outer, len, inner, 0, 1, 0, index_out, 1, 1};
    return prm;
}

/* median_bf16 self [dim]: a BF16 self's last axis (or dim) not of size 1 (aclnn_median.cpp's messages). */
aclnnStatus opc_median_bf16(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0);
    if (self->dtype != ACL_BF16 || self->ndim == 0) return ACLNN_SUCCESS;
    int64_t dim = s->np > 1 ? op_argument(c, s, 1)->i : -1;   /* in range: median_dim checked it */
    int64_t d = dim < 0 ? dim + self->ndim : dim;
    if (self->shape[d] != 1) return ACLNN_SUCCESS;
    return op_invalidf(c->api, s->np > 1 ? "The dim axis value is not support 1 when input type is BF16."
                                         : "The last axis value is not support 1 when input type is BF16.");
}

/* median_plan self valuesOut: Median over all of self into valuesOut's one element (the emulator's shape check);
 * an empty valuesOut launches nothing. */
aclnnStatus opc_median_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0), *out = op_tensor(c, s, 1);
    char t[200];
    if (pyaclnn_stub_numel(out) == 0) c->nothing = 1;
    else if (pyaclnn_stub_numel(out) != 1)
        return op_invalidf(c->api, "%s should hold one element, but its shape is %s", op_pname(c, s, 1),
                           tv_shape_text(out->shape, out->ndim, t, sizeof t));
    median_params(c, 1, pyaclnn_stub_numel(self), 1, -1);
    return ACLNN_SUCCESS;
}

void median_kernel(const pyaclnn_stub_launch *launch) {
    const pyaclnn_stub_tensor *self = &launch->inputs[0], *out = &launch->outputs[0];
    if (pyaclnn_stub_numel(self) > 0) {
        sel_kernel(launch);
        return;
    }
    if (!tv_launch_views_ok(launch)) return;   /* an empty self: the vendor's Fill */
    aclDataType dt = self->dtype;
    ew_value v = {.f = dt == ACL_FLOAT || dt == ACL_FLOAT16 || dt == ACL_BF16 ? NAN : 0.0,
                  .i = dt == ACL_INT64 ? INT64_MIN : dt == ACL_INT32 ? INT32_MIN : 0};
    ew_store(tv_at(out, out->offset), out->dtype, v);
}

/* median_dim self dim keepDim valuesOut indicesOut: aclnn_median.cpp's CheckParamsDim after the dtypes -- INT64
 * indices, dim in [min(-n, n-1), max(-n, n-1)], ranks, then the outputs' reduced shape (the emulator's); the plan.
 * Any empty tensor launches nothing. */
aclnnStatus opc_median_dim(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0), *idx = op_tensor(c, s, 4);
    int64_t dim = op_argument(c, s, 1)->i, n = self->ndim, shape[PYACLNN_STUB_MAX_DIMS], ndim = 0;
    int keep = op_argument(c, s, 2)->i != 0;
    char b[24], t[200];
    if (idx->dtype != ACL_INT64)
        return op_invalidf(c->api, "indicesOut dtype %s should be in dtype support list [op::DataType::DT_INT64].",
                           op_dtype_name(idx->dtype, b));
    int64_t lo = -n < n - 1 ? -n : n - 1, hi = -n < n - 1 ? n - 1 : -n;
    if (dim < lo || dim > hi) return op_invalidf(c->api, "dim should be in range [%lld, %lld].", (long long)lo, (long long)hi);
    for (int k = 0; k < 5; k += (k == 0 ? 3 : 1)) {
        const pyaclnn_stub_tensor *x = op_tensor(c, s, k);
        if (x->ndim > 8) return op_invalidf(c->api, "The %s tensor cannot be larger than 8 dimensions.", op_pname(c, s, k));
    }
    int64_t want = n == 0 ? 0 : keep ? n : n - 1;
    for (int k = 3; k <= 4; k++)
        if (op_tensor(c, s, k)->ndim != want)
            return op_invalidf(c->api, "Expected %lld dimension input, but got %s with sizes %s.", (long long)want,
                               op_pname(c, s, k), tv_shape_text(op_tensor(c, s, k)->shape, op_tensor(c, s, k)->ndim, t,
                                                                sizeof t));
    int64_t d = n == 0 ? 0 : (dim + n) % n;
    for (int64_t i = 0; i < n; i++)
        if (i != d || keep) shape[ndim++] = i == d ? 1 : self->shape[i];
    for (int k = 3; k <= 4; k++) {
        aclnnStatus rc = ew_check_shape(c->api, op_pname(c, s, k), op_tensor(c, s, k), shape, ndim);
        if (rc) return rc;
    }
    median_params(c, n ? tv_dims_product(self->shape, 0, d) : 1, n ? self->shape[d] : 1,
                  n ? tv_dims_product(self->shape, d + 1, n) : 1, 1);
    if (pyaclnn_stub_numel(self) == 0 || pyaclnn_stub_numel(op_tensor(c, s, 3)) == 0 || pyaclnn_stub_numel(idx) == 0)
        c->nothing = 1;
    return ACLNN_SUCCESS;
}
