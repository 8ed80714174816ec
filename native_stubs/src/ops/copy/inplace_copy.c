/*
 * aclnnInplaceCopy: selfRef = src, src broadcast to selfRef's shape and cast to its dtype, both
 * with any strides and storage offset (hicann/ops-math conversion/view_copy/op_api/aclnn_copy.cpp:
 * Contiguous -> Cast -> BroadcastTo -> ViewCopy). Equal dtypes copy the bytes unchanged (NaN
 * payloads included); other pairs follow the NPU's Cast rules (elementwise/ew_dtype.h). A src
 * that overlaps selfRef is read completely before anything is written.
 */
#include "aclnnop/aclnn_copy.h"
#include "opbase/checks.h"

/* The vendor's list without COMPLEX64/COMPLEX128 (not emulated). */
static const aclDataType COPY_DTYPES[] = {ACL_INT8,  ACL_INT16,  ACL_INT32,  ACL_INT64,        ACL_UINT8,
                                          ACL_UINT16, ACL_UINT32, ACL_UINT64, ACL_FLOAT16,      ACL_FLOAT,
                                          ACL_BOOL,  ACL_DOUBLE, ACL_BF16,   ACL_FLOAT8_E5M2,  ACL_FLOAT8_E4M3FN,
                                          ACL_HIFLOAT8, ACL_FLOAT8_E8M0};
#define N_COPY (sizeof COPY_DTYPES / sizeof COPY_DTYPES[0])

aclnnStatus aclnnInplaceCopyGetWorkspaceSize(aclTensor *selfRef, const aclTensor *src, uint64_t *workspaceSize,
                                             aclOpExecutor **executor) {
    static const char API[] = "aclnnInplaceCopyGetWorkspaceSize";
    ew_ptr_arg ptrs[] = {{"selfRef", selfRef}, {"src", src}};
    aclnnStatus rc = ew_check_not_null(API, ptrs, 2, workspaceSize, executor);
    if (rc) return rc;
    pyaclnn_stub_tensor self, s;
    if ((rc = op_tensor_arg(API, "selfRef", selfRef, &self))) return rc;
    if ((rc = op_tensor_arg(API, "src", src, &s))) return rc;
    if ((rc = ew_check_dtype_in(API, "selfRef", self.dtype, COPY_DTYPES, N_COPY))) return rc;
    if ((rc = ew_check_dtype_in(API, "src", s.dtype, COPY_DTYPES, N_COPY))) return rc;
    if ((rc = ew_check_max_dim(API, "selfRef", &self, EW_MAX_DIM))) return rc;
    if ((rc = ew_check_max_dim(API, "src", &s, EW_MAX_DIM))) return rc;
    int64_t shape[PYACLNN_STUB_MAX_DIMS], ndim;
    if ((rc = ew_broadcast(API, "selfRef", &self, "src", &s, shape, &ndim))) return rc;
    if ((rc = ew_check_shape(API, "selfRef (src must broadcast to it)", &self, shape, ndim))) return rc;
    ew_plan plan = {.op = EW_OP_COPY, .compute = self.dtype, .n_inputs = 1, .raw_copy = self.dtype == s.dtype};
    const aclTensor *inputs[1] = {src};
    return ew_make_executor(API, "InplaceCopy", &plan, pyaclnn_stub_numel(&self) == 0, inputs, 1, selfRef,
                            workspaceSize, executor);
}

aclnnStatus aclnnInplaceCopy(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                             const aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnInplaceCopy", workspace, workspaceSize, executor, stream);
}
