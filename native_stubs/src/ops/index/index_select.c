/*
 * aclnnIndexSelect (hicann/ops-nn index/gather_v2/op_api/aclnn_index_select.cpp): out = self
 * gathered along dim at the positions of a 1-D (or 0-d) index. Validation in the vendor's order:
 *   1. self, index, out non-NULL                                                     -> 161001
 *   2. self dtype in the list; out dtype == self dtype; index INT32/INT64             -> 161002
 *   3. a 0-d self needs a 0-d out; self at most 8 dims; dim in range; index at most 1-D;
 *      out shape = self's with dim replaced by the index length (when neither is empty) -> 161002
 * Bit-exact (bytes moved); an index out of range is a device fault.
 */
#include "aclnnop/aclnn_index_select.h"
#include "opbase/checks.h"
#include "kernels/gather.h"

#define N(a) (sizeof a / sizeof a[0])

/* The vendor's list without COMPLEX64/COMPLEX128 (not emulated). */
static const aclDataType SELECT_DTYPES[] = {ACL_FLOAT, ACL_INT32,  ACL_INT64,  ACL_FLOAT16, ACL_INT16,
                                            ACL_INT8,  ACL_UINT8,  ACL_BOOL,   ACL_UINT64,  ACL_UINT32,
                                            ACL_UINT16, ACL_DOUBLE, ACL_BF16};
static const aclDataType INDEX_DTYPES[] = {ACL_INT32, ACL_INT64};

aclnnStatus aclnnIndexSelectGetWorkspaceSize(const aclTensor *self, int64_t dim, const aclTensor *index,
                                             aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor) {
    static const char API[] = "aclnnIndexSelectGetWorkspaceSize";
    const char *names[] = {"self", "index", "out"};
    const void *ptrs[] = {self, index, out};
    aclnnStatus rc = tv_check_not_null(API, names, ptrs, 3, workspaceSize, executor);
    if (rc) return rc;
    pyaclnn_stub_tensor s, ix, o;
    if ((rc = op_tensor_arg(API, "self", self, &s))) return rc;
    if ((rc = op_tensor_arg(API, "index", index, &ix))) return rc;
    if ((rc = op_tensor_arg(API, "out", out, &o))) return rc;
    if ((rc = ew_check_dtype_in(API, "self", s.dtype, SELECT_DTYPES, N(SELECT_DTYPES)))) return rc;
    if ((rc = tv_check_same_dtype(API, "self", s.dtype, "out", o.dtype))) return rc;
    if ((rc = ew_check_dtype_in(API, "index", ix.dtype, INDEX_DTYPES, N(INDEX_DTYPES)))) return rc;
    if (s.ndim == 0 && o.ndim != 0) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "self is scalar, and out should also be scalar");
        return ACLNN_ERR_PARAM_INVALID;
    }
    if ((rc = ew_check_max_dim(API, "self", &s, EW_MAX_DIM))) return rc;
    int64_t rank = s.ndim == 0 ? 1 : s.ndim;
    if (dim < -rank || dim >= rank) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "IndexError: Dimension out of range (expected to be in "
                            "range of [%lld, %lld], but got %lld)", (long long)-rank, (long long)(rank - 1),
                            (long long)dim);
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (dim < 0) dim += rank;
    if (ix.ndim > 1) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "index dimNum is %lld, should not greater than 1",
                            (long long)ix.ndim);
        return ACLNN_ERR_PARAM_INVALID;
    }
    int64_t want[PYACLNN_STUB_MAX_DIMS];
    for (int64_t d = 0; d < s.ndim; d++) want[d] = s.shape[d];
    if (s.ndim > 0) want[dim] = ix.ndim == 0 ? 1 : ix.shape[0];
    if (pyaclnn_stub_numel(&s) && pyaclnn_stub_numel(&ix) && (rc = ew_check_shape(API, "out", &o, want, s.ndim)))
        return rc;
    /* As Index: undefined slots before dim, the index (as 1-D) at dim. */
    idx_plan plan = {.k = (int)dim + 1, .as_1d = 1};
    plan.input_of[dim] = 1;
    pyaclnn_stub_tensor views[2] = {s, ix};
    if ((rc = idx_plan_make(API, views, &plan))) return rc;
    const aclTensor *inputs[2] = {self, index};
    const aclTensor *outs[1] = {out};
    int empty = pyaclnn_stub_numel(&o) == 0;
    return tv_make_executor(API, "IndexSelect", empty ? NULL : idx_gather_kernel, &plan, sizeof plan, inputs, 2, outs,
                            1, workspaceSize, executor);
}

aclnnStatus aclnnIndexSelect(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                             const aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnIndexSelect", workspace, workspaceSize, executor, stream);
}
