/*
 * aclnnSub, aclnnSubs, aclnnInplaceSub, aclnnInplaceSubs: out = self - alpha * other (hicann/ops-math math/sub/op_api/aclnn_sub.cpp).
 * Validation, promotion and the alpha kernels: elementwise/ew_binary.c; arithmetic: ew_engine.h.
 */
#include "aclnnop/aclnn_sub.h"
#include "opbase/binary.h"
#include "aclnn/opdev/op_errno.h"
#include "pyaclnn_stub.h"

aclnnStatus aclnnSubGetWorkspaceSize(const aclTensor *self, const aclTensor *other, const aclScalar *alpha,
                                     aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor) {
    ew_binary_call c = {"aclnnSubGetWorkspaceSize", "Sub", EW_OP_SUB, self, other, NULL, 1, alpha, out, 0};
    return ew_binary_phase1(&c, workspaceSize, executor);
}

aclnnStatus aclnnSubsGetWorkspaceSize(const aclTensor *self, const aclScalar *other, const aclScalar *alpha,
                                      aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor) {
    ew_binary_call c = {"aclnnSubsGetWorkspaceSize", "Subs", EW_OP_SUB, self, NULL, other, 1, alpha, out, 0};
    return ew_binary_phase1(&c, workspaceSize, executor);
}

aclnnStatus aclnnInplaceSubGetWorkspaceSize(aclTensor *selfRef, const aclTensor *other, const aclScalar *alpha,
                                            uint64_t *workspaceSize, aclOpExecutor **executor) {
    ew_binary_call c = {"aclnnInplaceSubGetWorkspaceSize", "InplaceSub", EW_OP_SUB, selfRef, other, NULL, 1, alpha, selfRef, 1};
    return ew_binary_phase1(&c, workspaceSize, executor);
}

aclnnStatus aclnnInplaceSubsGetWorkspaceSize(aclTensor *selfRef, const aclScalar *other, const aclScalar *alpha,
                                             uint64_t *workspaceSize, aclOpExecutor **executor) {
    ew_binary_call c = {"aclnnInplaceSubsGetWorkspaceSize", "InplaceSubs", EW_OP_SUB, selfRef, NULL, other, 1, alpha, selfRef, 1};
    return ew_binary_phase1(&c, workspaceSize, executor);
}

aclnnStatus aclnnSub(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnSub", workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnSubs(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnSubs", workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnInplaceSub(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnInplaceSub", workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnInplaceSubs(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnInplaceSubs", workspace, workspaceSize, executor, stream);
}
