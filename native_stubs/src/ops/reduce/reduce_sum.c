/*
 * aclnnReduceSum (hicann/ops-math math/reduce_sum/op_api/aclnn_reduce_sum.cpp) and aclnnMean
 * (math/reduce_mean/op_api/aclnn_mean.cpp): sum / mean of self over dims (an empty list: all dims),
 * computed in `dtype` (self is cast to it first), then cast to out. Arithmetic: red_engine.h (class c).
 * Validation in the vendor's order:
 *   ReduceSum: 1. self, dims, out non-NULL -> 161001; 2. self and out dtypes in the SoC's list, dtype in
 *     it, out dtype == dtype -> 161002; 3. self at most 8 dims; 4. dims in range, not repeated; then out
 *     has the reduced shape -> 161002.
 *   Mean: 1. self, dim, out non-NULL -> 161001; 2. self, dtype, out in the SoC's list; 3. self castable
 *     to dtype and dtype to out (torch's canCast); 4. dims in range, not repeated; 5. self and out at most
 *     8 dims; then out has the reduced shape -> 161002. An empty self gives NaN (the vendor fills NaN).
 */
#include "aclnnop/aclnn_mean.h"
#include "aclnnop/aclnn_reduce_sum.h"
#include "opbase/checks.h"
#include "kernels/reduce.h"

#define N(a) (sizeof a / sizeof a[0])

/* The vendor's lists without COMPLEX64/COMPLEX128 (not emulated). */
static const aclDataType SUM_A2[] = {ACL_FLOAT16, ACL_FLOAT, ACL_INT8, ACL_INT16, ACL_INT32, ACL_INT64,
                                     ACL_UINT8,   ACL_BOOL,  ACL_DOUBLE, ACL_BF16};
static const aclDataType MEAN_A2[] = {ACL_FLOAT, ACL_INT32, ACL_INT64, ACL_FLOAT16, ACL_INT16,
                                      ACL_INT8,  ACL_UINT8, ACL_DOUBLE, ACL_BF16};

static aclnnStatus finish(const char *api, const char *op, const aclTensor *self, const pyaclnn_stub_tensor *s,
                          red_plan *plan, int keepdim, aclTensor *out, const pyaclnn_stub_tensor *o,
                          uint64_t *workspaceSize, aclOpExecutor **executor) {
    aclnnStatus rc = red_check_out_shape(api, "out", s, plan, keepdim, o);
    if (rc) return rc;
    plan->values_out = 0;
    plan->index_out = -1;
    const aclTensor *in[1] = {self};
    const aclTensor *outs[1] = {out};
    return tv_make_executor(api, op, pyaclnn_stub_numel(o) ? red_kernel : NULL, plan, sizeof *plan, in, 1, outs, 1,
                            workspaceSize, executor);
}

aclnnStatus aclnnReduceSumGetWorkspaceSize(const aclTensor *self, const aclIntArray *dims, bool keepDims,
                                           aclDataType dtype, aclTensor *out, uint64_t *workspaceSize,
                                           aclOpExecutor **executor) {
    static const char API[] = "aclnnReduceSumGetWorkspaceSize";
    pyaclnn_stub_tensor s, o;
    const int64_t *dv = NULL;
    uint64_t nd;
    aclnnStatus rc = red_read_args(API, "dims", self, dims, out, workspaceSize, executor, &s, &o, &dv, &nd);
    if (rc) return rc;
    if ((rc = ew_check_dtype_in(API, "self", s.dtype, SUM_A2, N(SUM_A2)))) return rc;
    if ((rc = ew_check_dtype_in(API, "out", o.dtype, SUM_A2, N(SUM_A2)))) return rc;
    if ((rc = ew_check_dtype_in(API, "dtype", dtype, SUM_A2, N(SUM_A2)))) return rc;
    if ((rc = tv_check_same_dtype(API, "out", o.dtype, "dtype", dtype))) return rc;
    if ((rc = ew_check_max_dim(API, "self", &s, EW_MAX_DIM))) return rc;
    red_plan plan = {.op = RED_SUM, .compute = dtype};
    if ((rc = red_mark_dims(API, &s, dv, nd, &plan))) return rc;
    /* The vendor sums BOOL as INT64 when asked for INT64 (torch's promotion of bool sums). */
    if (plan.compute == ACL_BOOL) plan.compute = ACL_INT64;
    return finish(API, "ReduceSum", self, &s, &plan, keepDims, out, &o, workspaceSize, executor);
}

aclnnStatus aclnnReduceSum(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnReduceSum", workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnMeanGetWorkspaceSize(const aclTensor *self, const aclIntArray *dim, bool keepDim, aclDataType dtype,
                                      aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor) {
    static const char API[] = "aclnnMeanGetWorkspaceSize";
    pyaclnn_stub_tensor s, o;
    const int64_t *dv = NULL;
    uint64_t nd;
    aclnnStatus rc = red_read_args(API, "dim", self, dim, out, workspaceSize, executor, &s, &o, &dv, &nd);
    if (rc) return rc;
    if ((rc = ew_check_dtype_in(API, "self", s.dtype, MEAN_A2, N(MEAN_A2)))) return rc;
    if ((rc = ew_check_dtype_in(API, "dtype", dtype, MEAN_A2, N(MEAN_A2)))) return rc;
    if ((rc = ew_check_dtype_in(API, "out", o.dtype, MEAN_A2, N(MEAN_A2)))) return rc;
    char a[24], b[24];
    if (!ew_can_cast(s.dtype, dtype) || !ew_can_cast(dtype, o.dtype)) {
        int first = !ew_can_cast(s.dtype, dtype);
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "Can not cast from %s to %s.",
                            op_dtype_name(first ? s.dtype : dtype, a), op_dtype_name(first ? dtype : o.dtype, b));
        return ACLNN_ERR_PARAM_INVALID;
    }
    red_plan plan = {.op = RED_MEAN, .compute = dtype, .empty_fill_nan = 1};
    if ((rc = red_mark_dims(API, &s, dv, nd, &plan))) return rc;
    if ((rc = ew_check_max_dim(API, "self", &s, EW_MAX_DIM))) return rc;
    if ((rc = ew_check_max_dim(API, "out", &o, EW_MAX_DIM))) return rc;
    return finish(API, "Mean", self, &s, &plan, keepDim, out, &o, workspaceSize, executor);
}

aclnnStatus aclnnMean(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnMean", workspace, workspaceSize, executor, stream);
}
