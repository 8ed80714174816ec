/*
 * aclnnIndex (hicann/ops-nn index/index/op_api/aclnn_index.cpp): out = self[indices] with torch's
 * advanced-indexing rules (idx_gather.h). Validation in the vendor's order:
 *   1. self, out, indices and every element of indices non-NULL                      -> 161001
 *   2. out dtype == self dtype; self dtype in the SoC's list; every non-empty index
 *      INT64/INT32/BOOL                                                               -> 161002
 *   3. self and every index at most 8 dims                                            -> 161002
 * then (the emulator's phase-1 equivalents of the vendor's shape inference) the indices broadcast
 * and out has the result shape -> 161002. BOOL masks are refused (161002): torch_npu turns masks into
 * integer indices before calling (AdvanceIndex::npu_expand_tensors); the emulator has no mask path.
 */
#include "aclnnop/aclnn_index.h"
#include "opbase/checks.h"
#include "kernels/gather.h"

#define N(a) (sizeof a / sizeof a[0])

static const aclDataType INDEX_A2[] = {ACL_FLOAT, ACL_FLOAT16, ACL_INT64, ACL_INT32, ACL_BOOL,
                                       ACL_INT8,  ACL_UINT8,   ACL_BF16,  ACL_DOUBLE, ACL_INT16};
/* The regbase list without COMPLEX64 (the engine has no complex elements). */
static const aclDataType INDEX_950[] = {ACL_FLOAT, ACL_FLOAT16, ACL_INT64, ACL_INT32, ACL_BOOL,
                                        ACL_INT8,  ACL_UINT8,   ACL_BF16,  ACL_DOUBLE, ACL_INT16};
static const aclDataType INDICES_DTYPES[] = {ACL_INT64, ACL_INT32, ACL_BOOL};

aclnnStatus aclnnIndexGetWorkspaceSize(const aclTensor *self, const aclTensorList *indices, aclTensor *out,
                                       uint64_t *workspaceSize, aclOpExecutor **executor) {
    static const char API[] = "aclnnIndexGetWorkspaceSize";
    const char *names[] = {"self", "out", "indices"};
    const void *ptrs[] = {self, out, indices};
    aclnnStatus rc = tv_check_not_null(API, names, ptrs, 3, workspaceSize, executor);
    if (rc) return rc;
    const aclTensor *items[1 + IDX_MAX_SLOTS];
    pyaclnn_stub_tensor snaps[1 + IDX_MAX_SLOTS], s, o;
    size_t k;
    if ((rc = tv_tensor_list_arg(API, "indices", indices, IDX_MAX_SLOTS, items + 1, snaps + 1, &k))) return rc;
    if ((rc = op_tensor_arg(API, "self", self, &s))) return rc;
    if ((rc = op_tensor_arg(API, "out", out, &o))) return rc;
    if ((rc = tv_check_same_dtype(API, "self", s.dtype, "out", o.dtype))) return rc;
    int is950 = ew_soc_is_950();
    if ((rc = ew_check_dtype_in(API, "self", s.dtype, is950 ? INDEX_950 : INDEX_A2,
                                is950 ? N(INDEX_950) : N(INDEX_A2))))
        return rc;
    for (size_t i = 0; i < k; i++) {
        if (pyaclnn_stub_numel(&snaps[1 + i]) == 0) continue;
        if ((rc = ew_check_dtype_in(API, "indices", snaps[1 + i].dtype, INDICES_DTYPES, N(INDICES_DTYPES)))) return rc;
    }
    if ((rc = ew_check_max_dim(API, "self", &s, EW_MAX_DIM))) return rc;
    for (size_t i = 0; i < k; i++)
        if ((rc = ew_check_max_dim(API, "indices", &snaps[1 + i], EW_MAX_DIM))) return rc;
    for (size_t i = 0; i < k; i++) {
        if (pyaclnn_stub_numel(&snaps[1 + i]) != 0 && snaps[1 + i].dtype == ACL_BOOL) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "indices[%zu] is a BOOL mask: not supported by the "
                                "pyaclnn CPU emulator (pass INT64/INT32 indices, e.g. mask.nonzero())", i);
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    idx_plan plan = {.k = (int)k};
    for (size_t i = 0; i < k; i++) plan.input_of[i] = 1 + (int)i;
    snaps[0] = s;
    if ((rc = idx_plan_make(API, snaps, &plan))) return rc;
    if (plan.out_ndim > EW_MAX_DIM) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "Outputshape Dim should be less than or equal 8, but got "
                            "[%d]", plan.out_ndim);
        return ACLNN_ERR_PARAM_INVALID;
    }
    if ((rc = ew_check_shape(API, "out", &o, plan.out_shape, plan.out_ndim))) return rc;
    items[0] = self;
    const aclTensor *outs[1] = {out};
    return tv_make_executor(API, "Index", pyaclnn_stub_numel(&o) ? idx_gather_kernel : NULL, &plan, sizeof plan,
                            items, 1 + k, outs, 1, workspaceSize, executor);
}

aclnnStatus aclnnIndex(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, const aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnIndex", workspace, workspaceSize, executor, stream);
}
