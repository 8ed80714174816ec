/*
 * aclnnMul, aclnnMuls, aclnnInplaceMul, aclnnInplaceMuls: out = self * other
 * (hicann/ops-math math/mul/op_api/aclnn_mul.cpp). Validation and promotion: elementwise/ew_binary.c.
 */
#include "aclnnop/aclnn_mul.h"
#include "opbase/binary.h"
#include "aclnn/opdev/op_errno.h"
#include "pyaclnn_stub.h"

aclnnStatus aclnnMulGetWorkspaceSize(const aclTensor *self, const aclTensor *other, aclTensor *out,
                                     uint64_t *workspaceSize, aclOpExecutor **executor) {
    ew_binary_call c = {"aclnnMulGetWorkspaceSize", "Mul", EW_OP_MUL, self, other, NULL, 0, NULL, out, 0};
    return ew_binary_phase1(&c, workspaceSize, executor);
}

aclnnStatus aclnnMulsGetWorkspaceSize(const aclTensor *self, const aclScalar *other, aclTensor *out,
                                      uint64_t *workspaceSize, aclOpExecutor **executor) {
    ew_binary_call c = {"aclnnMulsGetWorkspaceSize", "Muls", EW_OP_MUL, self, NULL, other, 0, NULL, out, 0};
    return ew_binary_phase1(&c, workspaceSize, executor);
}

aclnnStatus aclnnInplaceMulGetWorkspaceSize(aclTensor *selfRef, const aclTensor *other, uint64_t *workspaceSize,
                                            aclOpExecutor **executor) {
    ew_binary_call c = {"aclnnInplaceMulGetWorkspaceSize", "InplaceMul", EW_OP_MUL, selfRef, other, NULL, 0, NULL,
                        selfRef, 1};
    return ew_binary_phase1(&c, workspaceSize, executor);
}

aclnnStatus aclnnInplaceMulsGetWorkspaceSize(aclTensor *selfRef, const aclScalar *other, uint64_t *workspaceSize,
                                             aclOpExecutor **executor) {
    ew_binary_call c = {"aclnnInplaceMulsGetWorkspaceSize", "InplaceMuls", EW_OP_MUL, selfRef, NULL, other, 0, NULL,
                        selfRef, 1};
    return ew_binary_phase1(&c, workspaceSize, executor);
}

aclnnStatus aclnnMul(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnMul", workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnMuls(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnMuls", workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnInplaceMul(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnInplaceMul", workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnInplaceMuls(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnInplaceMuls", workspace, workspaceSize, executor, stream);
}
