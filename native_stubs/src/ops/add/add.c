/*
 * aclnnAdd, aclnnAdds, aclnnInplaceAdd, aclnnInplaceAdds: out = self + alpha * other (hicann/ops-math math/add/op_api/aclnn_add.cpp).
 * Validation, promotion and the alpha kernels: elementwise/ew_binary.c; arithmetic: ew_engine.h.
 */
#include "aclnnop/aclnn_add.h"
#include "opbase/binary.h"
#include "aclnn/opdev/op_errno.h"
#include "pyaclnn_stub.h"

aclnnStatus aclnnAddGetWorkspaceSize(const aclTensor *self, const aclTensor *other, const aclScalar *alpha,
                                     aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor) {
    ew_binary_call c = {"aclnnAddGetWorkspaceSize", "Add", EW_OP_ADD, self, other, NULL, 1, alpha, out, 0};
    return ew_binary_phase1(&c, workspaceSize, executor);
}

aclnnStatus aclnnAddsGetWorkspaceSize(const aclTensor *self, const aclScalar *other, const aclScalar *alpha,
                                      aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor) {
    ew_binary_call c = {"aclnnAddsGetWorkspaceSize", "Adds", EW_OP_ADD, self, NULL, other, 1, alpha, out, 0};
    return ew_binary_phase1(&c, workspaceSize, executor);
}

aclnnStatus aclnnInplaceAddGetWorkspaceSize(const aclTensor *selfRef, const aclTensor *other, const aclScalar *alpha,
                                            uint64_t *workspaceSize, aclOpExecutor **executor) {
    ew_binary_call c = {"aclnnInplaceAddGetWorkspaceSize", "InplaceAdd", EW_OP_ADD, selfRef, other, NULL, 1, alpha, selfRef, 1};
    return ew_binary_phase1(&c, workspaceSize, executor);
}

aclnnStatus aclnnInplaceAddsGetWorkspaceSize(const aclTensor *selfRef, const aclScalar *other, const aclScalar *alpha,
                                             uint64_t *workspaceSize, aclOpExecutor **executor) {
    ew_binary_call c = {"aclnnInplaceAddsGetWorkspaceSize", "InplaceAdds", EW_OP_ADD, selfRef, NULL, other, 1, alpha, selfRef, 1};
    return ew_binary_phase1(&c, workspaceSize, executor);
}

aclnnStatus aclnnAdd(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnAdd", workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnAdds(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnAdds", workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnInplaceAdd(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnInplaceAdd", workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnInplaceAdds(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnInplaceAdds", workspace, workspaceSize, executor, stream);
}
