/*
 * aclnnAmax (hicann/ops-math math/reduce_max/op_api/aclnn_amax.cpp): maximum over dims (an empty list:
 * all); aclnnMax / aclnnMin (aclnn_max.cpp, aclnn_min.cpp): of all elements, into a 0-d out. Exact
 * (class a): values are compared, never rounded; NaN propagates as in torch. Validation in the
 * vendor's order:
 *   Amax: self, dim, out non-NULL -> 161001; out dtype == self dtype, self in the SoC's list -> 161002;
 *     dims in range, reduced dims non-empty, not repeated -> 161002; self, out at most 8 dims, out has the
 *     reduced shape -> 161002.
 *   Max/Min: self, out non-NULL -> 161001; self, out dtypes in the list -> 161002; at most 8 dims -> 161002.
 */
#include "aclnnop/aclnn_amax.h"
#include "aclnnop/aclnn_max.h"
#include "aclnnop/aclnn_min.h"
#include "opbase/checks.h"
#include "kernels/reduce.h"

#define N(a) (sizeof a / sizeof a[0])

static const aclDataType AMAX_A2[] = {ACL_FLOAT, ACL_FLOAT16, ACL_UINT8,  ACL_INT32, ACL_INT64,
                                      ACL_INT16, ACL_INT8,    ACL_DOUBLE, ACL_BOOL,  ACL_BF16};
static const aclDataType MAX_A2[] = {ACL_FLOAT, ACL_FLOAT16, ACL_UINT8,  ACL_INT8, ACL_INT16,
                                     ACL_INT32, ACL_INT64,   ACL_DOUBLE, ACL_BOOL, ACL_BF16};

aclnnStatus aclnnAmaxGetWorkspaceSize(const aclTensor *self, const aclIntArray *dim, bool keepDim, aclTensor *out,
                                      uint64_t *workspaceSize, aclOpExecutor **executor) {
    static const char API[] = "aclnnAmaxGetWorkspaceSize";
    pyaclnn_stub_tensor s, o;
    const int64_t *dv = NULL;
    uint64_t nd;
    aclnnStatus rc = red_read_args(API, "dim", self, dim, out, workspaceSize, executor, &s, &o, &dv, &nd);
    if (rc) return rc;
    if ((rc = tv_check_same_dtype(API, "out", o.dtype, "self", s.dtype))) return rc;
    if ((rc = ew_check_dtype_in(API, "self", s.dtype, AMAX_A2, N(AMAX_A2)))) return rc;
    red_plan plan = {.op = RED_MAX, .compute = s.dtype, .values_out = 0, .index_out = -1};
    if ((rc = red_mark_dims(API, &s, dv, nd, &plan))) return rc;
    for (int64_t d = 0; d < s.ndim; d++) {
        if (plan.reduce[d] && s.shape[d] == 0) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "Expected reducution dim %lld to have non-zero size.",
                                (long long)d);
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    if ((rc = ew_check_max_dim(API, "self", &s, EW_MAX_DIM))) return rc;
    if ((rc = ew_check_max_dim(API, "out", &o, EW_MAX_DIM))) return rc;
    if ((rc = red_check_out_shape(API, "out", &s, &plan, keepDim, &o))) return rc;
    const aclTensor *in[1] = {self};
    const aclTensor *outs[1] = {out};
    return tv_make_executor(API, "Amax", pyaclnn_stub_numel(&o) ? red_kernel : NULL, &plan, sizeof plan, in, 1, outs,
                            1, workspaceSize, executor);
}

aclnnStatus aclnnAmax(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnAmax", workspace, workspaceSize, executor, stream);
}

static aclnnStatus full_extreme(const char *api, const char *op, red_op kind, const aclTensor *self, aclTensor *out,
                                uint64_t *workspaceSize, aclOpExecutor **executor) {
    const char *names[] = {"self", "out"};
    const void *ptrs[] = {self, out};
    aclnnStatus rc = tv_check_not_null(api, names, ptrs, 2, workspaceSize, executor);
    if (rc) return rc;
    pyaclnn_stub_tensor s, o;
    if ((rc = op_tensor_arg(api, "self", self, &s))) return rc;
    if ((rc = op_tensor_arg(api, "out", out, &o))) return rc;
    if ((rc = ew_check_dtype_in(api, "self", s.dtype, MAX_A2, N(MAX_A2)))) return rc;
    if ((rc = ew_check_dtype_in(api, "out", o.dtype, MAX_A2, N(MAX_A2)))) return rc;
    if ((rc = ew_check_max_dim(api, "self", &s, EW_MAX_DIM))) return rc;
    if ((rc = ew_check_max_dim(api, "out", &o, EW_MAX_DIM))) return rc;
    if (pyaclnn_stub_numel(&s) == 0) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "self is empty: the %s of no elements is undefined", op);
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (pyaclnn_stub_numel(&o) != 1) {
        char t[200];
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "out should hold one element, but its shape is %s",
                            tv_shape_text(o.shape, o.ndim, t, sizeof t));
        return ACLNN_ERR_PARAM_INVALID;
    }
    red_plan plan = {.op = kind, .compute = s.dtype, .values_out = 0, .index_out = -1};
    for (int64_t d = 0; d < s.ndim; d++) plan.reduce[d] = 1;
    const aclTensor *in[1] = {self};
    const aclTensor *outs[1] = {out};
    return tv_make_executor(api, op, red_kernel, &plan, sizeof plan, in, 1, outs, 1, workspaceSize, executor);
}

aclnnStatus aclnnMaxGetWorkspaceSize(const aclTensor *self, aclTensor *out, uint64_t *workspaceSize,
                                     aclOpExecutor **executor) {
    return full_extreme("aclnnMaxGetWorkspaceSize", "Max", RED_MAX, self, out, workspaceSize, executor);
}

aclnnStatus aclnnMax(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnMax", workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnMinGetWorkspaceSize(const aclTensor *self, aclTensor *out, uint64_t *workspaceSize,
                                     aclOpExecutor **executor) {
    return full_extreme("aclnnMinGetWorkspaceSize", "Min", RED_MIN, self, out, workspaceSize, executor);
}

aclnnStatus aclnnMin(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnMin", workspace, workspaceSize, executor, stream);
}
