/*
 * aclnnEmbedding (hicann/ops-nn index/embedding/op_api/aclnn_embedding.cpp): out = weight[indices]
 * (rows of weight gathered; the index core of index/idx_gather.h). Validation in the vendor's order:
 *   1. weight, indices, out non-NULL                                          -> 161001
 *   2. weight dtype in the list (BF16 on A2/A3 and 950); out dtype == weight; indices INT32/INT64 -> 161002
 *   3. weight, indices, out at most 8 dims                                     -> 161002
 *   4. out has one dim more than indices and starts with indices' shape        -> 161002
 * (and, as the emulator's own check, out's last dims are weight's). Bit-exact (bytes moved).
 */
#include "aclnnop/aclnn_embedding.h"
#include "opbase/checks.h"
#include "kernels/gather.h"

#define N(a) (sizeof a / sizeof a[0])

/* The vendor's list without COMPLEX64/COMPLEX128 (not emulated). */
static const aclDataType WEIGHT_DTYPES[] = {ACL_DOUBLE, ACL_FLOAT, ACL_FLOAT16, ACL_INT64, ACL_INT32, ACL_INT16,
                                            ACL_INT8,   ACL_UINT8, ACL_BOOL,    ACL_BF16};
static const aclDataType INDICES_DTYPES[] = {ACL_INT32, ACL_INT64};

aclnnStatus aclnnEmbeddingGetWorkspaceSize(const aclTensor *weight, const aclTensor *indices, const aclTensor *out,
                                           uint64_t *workspaceSize, aclOpExecutor **executor) {
    static const char API[] = "aclnnEmbeddingGetWorkspaceSize";
    const char *names[] = {"weight", "indices", "out"};
    const void *ptrs[] = {weight, indices, out};
    aclnnStatus rc = tv_check_not_null(API, names, ptrs, 3, workspaceSize, executor);
    if (rc) return rc;
    pyaclnn_stub_tensor v[2], o;
    if ((rc = op_tensor_arg(API, "weight", weight, &v[0]))) return rc;
    if ((rc = op_tensor_arg(API, "indices", indices, &v[1]))) return rc;
    if ((rc = op_tensor_arg(API, "out", out, &o))) return rc;
    if ((rc = ew_check_dtype_in(API, "weight", v[0].dtype, WEIGHT_DTYPES, N(WEIGHT_DTYPES)))) return rc;
    if ((rc = tv_check_same_dtype(API, "weight", v[0].dtype, "out", o.dtype))) return rc;
    if ((rc = ew_check_dtype_in(API, "indices", v[1].dtype, INDICES_DTYPES, N(INDICES_DTYPES)))) return rc;
    if ((rc = ew_check_max_dim(API, "weight", &v[0], EW_MAX_DIM))) return rc;
    if ((rc = ew_check_max_dim(API, "indices", &v[1], EW_MAX_DIM))) return rc;
    if ((rc = ew_check_max_dim(API, "out", &o, EW_MAX_DIM))) return rc;
    char a[200], b[200];
    if (o.ndim != v[1].ndim + 1) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "out dim [%lld] should be one larger than indices dim [%lld].",
                            (long long)o.ndim, (long long)v[1].ndim);
        return ACLNN_ERR_PARAM_INVALID;
    }
    for (int64_t d = 0; d < v[1].ndim; d++) {
        if (o.shape[d] != v[1].shape[d]) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "out shape [%s] is not match with indices shape [%s].",
                                tv_shape_text(o.shape, o.ndim, a, sizeof a),
                                tv_shape_text(v[1].shape, v[1].ndim, b, sizeof b));
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    idx_plan plan = {.k = 1};
    plan.input_of[0] = 1;
    if (v[0].ndim < 1) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "weight must have at least 1 dimension");
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (pyaclnn_stub_numel(&v[1]) == 0) plan.k = 0;   /* nothing gathered */
    if ((rc = idx_plan_make(API, v, &plan))) return rc;
    if (plan.k && (rc = ew_check_shape(API, "out", &o, plan.out_shape, plan.out_ndim))) return rc;
    const aclTensor *inputs[2] = {weight, indices};
    const aclTensor *outs[1] = {out};
    int empty = pyaclnn_stub_numel(&o) == 0;
    return tv_make_executor(API, "Embedding", empty ? NULL : idx_gather_kernel, &plan, sizeof plan, inputs, 2, outs, 1,
                            workspaceSize, executor);
}

aclnnStatus aclnnEmbedding(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                           const aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnEmbedding", workspace, workspaceSize, executor, stream);
}
