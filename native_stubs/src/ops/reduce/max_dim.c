/*
 * aclnnMaxDim / aclnnMinDim (hicann/ops-math math/arg_{max,min}_with_value/op_api): the extreme along
 * dim and its index; aclnnArgMax (math/arg_max_v2/op_api/aclnn_argmax.cpp): the index only. Exact
 * (class a): the first extreme's index; NaN is the extreme (torch's rule). Validation in the vendor's order:
 *   MaxDim/MinDim: self, out, indices non-NULL -> 161001; self dtype in the SoC's list, out == self ->
 *     161002; self, out, indices at most 8 dims -> 161002; dim in range -> 161002; (emulator) out and
 *     indices have the reduced shape, indices INT64/INT32.
 *   ArgMax: self, out non-NULL -> 161001; self dtype in the list -> 161002; self, out at most 8 dims;
 *     dim in range -> 161002; (emulator) out has the reduced shape and is INT64/INT32.
 */
#include "aclnnop/aclnn_argmax.h"
#include "aclnnop/aclnn_max_dim.h"
#include "aclnnop/aclnn_min_dim.h"
#include "opbase/checks.h"
#include "kernels/reduce.h"

#include <string.h>

#define N(a) (sizeof a / sizeof a[0])

static const aclDataType MAXDIM_A2[] = {ACL_FLOAT, ACL_FLOAT16, ACL_INT64, ACL_BOOL, ACL_BF16};
static const aclDataType MAXDIM_950[] = {ACL_FLOAT, ACL_FLOAT16, ACL_INT64, ACL_BOOL, ACL_BF16, ACL_INT32};
static const aclDataType ARGMAX_A2[] = {ACL_FLOAT, ACL_FLOAT16, ACL_DOUBLE, ACL_INT8, ACL_INT16,
                                        ACL_INT32, ACL_INT64,   ACL_UINT8,  ACL_BF16};
static const aclDataType ARGMAX_950[] = {ACL_FLOAT, ACL_FLOAT16, ACL_DOUBLE, ACL_INT8,   ACL_INT16,
                                         ACL_INT32, ACL_INT64,   ACL_UINT8,  ACL_UINT16, ACL_BF16};
static const aclDataType INDEX_DTYPES[] = {ACL_INT64, ACL_INT32};

static aclnnStatus check_dim(const char *api, const pyaclnn_stub_tensor *s, int64_t dim, red_plan *plan) {
    int64_t rank = s->ndim > 0 ? s->ndim : 1;
    if (dim < -rank || dim >= rank) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "dim must be within the range of [%lld, %lld], but it is %lld.",
                            (long long)-rank, (long long)(rank - 1), (long long)dim);
        return ACLNN_ERR_PARAM_INVALID;
    }
    memset(plan->reduce, 0, sizeof plan->reduce);
    if (s->ndim > 0) plan->reduce[dim < 0 ? dim + rank : dim] = 1;
    if (s->ndim > 0 && s->shape[dim < 0 ? dim + rank : dim] == 0) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "cannot reduce over dim %lld of size 0", (long long)dim);
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus with_value(const char *api, const char *op, red_op kind, const aclTensor *self, int64_t dim,
                              bool keepdim, aclTensor *out, aclTensor *indices, uint64_t *workspaceSize,
                              aclOpExecutor **executor) {
    const char *names[] = {"self", "out", "indices"};
    const void *ptrs[] = {self, out, indices};
    aclnnStatus rc = tv_check_not_null(api, names, ptrs, 3, workspaceSize, executor);
    if (rc) return rc;
    pyaclnn_stub_tensor s, o, ix;
    if ((rc = op_tensor_arg(api, "self", self, &s))) return rc;
    if ((rc = op_tensor_arg(api, "out", out, &o))) return rc;
    if ((rc = op_tensor_arg(api, "indices", indices, &ix))) return rc;
    int is950 = ew_soc_is_950();
    if ((rc = ew_check_dtype_in(api, "self", s.dtype, is950 ? MAXDIM_950 : MAXDIM_A2,
                                is950 ? N(MAXDIM_950) : N(MAXDIM_A2))))
        return rc;
    if ((rc = tv_check_same_dtype(api, "self", s.dtype, "out", o.dtype))) return rc;
    if ((rc = ew_check_max_dim(api, "self", &s, EW_MAX_DIM))) return rc;
    if ((rc = ew_check_max_dim(api, "out", &o, EW_MAX_DIM))) return rc;
    if ((rc = ew_check_max_dim(api, "indices", &ix, EW_MAX_DIM))) return rc;
    red_plan plan = {.op = kind, .compute = s.dtype, .values_out = 0, .index_out = 1};
    if ((rc = check_dim(api, &s, dim, &plan))) return rc;
    if ((rc = ew_check_dtype_in(api, "indices", ix.dtype, INDEX_DTYPES, N(INDEX_DTYPES)))) return rc;
    if ((rc = red_check_out_shape(api, "out", &s, &plan, keepdim, &o))) return rc;
    if ((rc = red_check_out_shape(api, "indices", &s, &plan, keepdim, &ix))) return rc;
    const aclTensor *in[1] = {self};
    const aclTensor *outs[2] = {out, indices};
    return tv_make_executor(api, op, pyaclnn_stub_numel(&o) ? red_kernel : NULL, &plan, sizeof plan, in, 1, outs, 2,
                            workspaceSize, executor);
}

aclnnStatus aclnnMaxDimGetWorkspaceSize(const aclTensor *self, int64_t dim, bool keepdim, aclTensor *out,
                                        aclTensor *indices, uint64_t *workspaceSize, aclOpExecutor **executor) {
    return with_value("aclnnMaxDimGetWorkspaceSize", "MaxDim", RED_MAX, self, dim, keepdim, out, indices,
                      workspaceSize, executor);
}

aclnnStatus aclnnMaxDim(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnMaxDim", workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnMinDimGetWorkspaceSize(const aclTensor *self, int64_t dim, bool keepdim, aclTensor *out,
                                        aclTensor *indices, uint64_t *workspaceSize, aclOpExecutor **executor) {
    return with_value("aclnnMinDimGetWorkspaceSize", "MinDim", RED_MIN, self, dim, keepdim, out, indices,
                      workspaceSize, executor);
}

aclnnStatus aclnnMinDim(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnMinDim", workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnArgMaxGetWorkspaceSize(const aclTensor *self, int64_t dim, bool keepdim, aclTensor *out,
                                        uint64_t *workspaceSize, aclOpExecutor **executor) {
    static const char API[] = "aclnnArgMaxGetWorkspaceSize";
    const char *names[] = {"self", "out"};
    const void *ptrs[] = {self, out};
    aclnnStatus rc = tv_check_not_null(API, names, ptrs, 2, workspaceSize, executor);
    if (rc) return rc;
    pyaclnn_stub_tensor s, o;
    if ((rc = op_tensor_arg(API, "self", self, &s))) return rc;
    if ((rc = op_tensor_arg(API, "out", out, &o))) return rc;
    int is950 = ew_soc_is_950();
    if ((rc = ew_check_dtype_in(API, "self", s.dtype, is950 ? ARGMAX_950 : ARGMAX_A2,
                                is950 ? N(ARGMAX_950) : N(ARGMAX_A2))))
        return rc;
    if ((rc = ew_check_max_dim(API, "self", &s, EW_MAX_DIM))) return rc;
    if ((rc = ew_check_max_dim(API, "out", &o, EW_MAX_DIM))) return rc;
    red_plan plan = {.op = RED_MAX, .compute = s.dtype, .values_out = -1, .index_out = 0};
    if ((rc = check_dim(API, &s, dim, &plan))) return rc;
    if ((rc = ew_check_dtype_in(API, "out", o.dtype, INDEX_DTYPES, N(INDEX_DTYPES)))) return rc;
    if ((rc = red_check_out_shape(API, "out", &s, &plan, keepdim, &o))) return rc;
    const aclTensor *in[1] = {self};
    const aclTensor *outs[1] = {out};
    return tv_make_executor(API, "ArgMax", pyaclnn_stub_numel(&o) ? red_kernel : NULL, &plan, sizeof plan, in, 1, outs,
                            1, workspaceSize, executor);
}

aclnnStatus aclnnArgMax(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnArgMax", workspace, workspaceSize, executor, stream);
}
