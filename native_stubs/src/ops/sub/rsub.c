/*
 * aclnnRsub, aclnnRsubs: out = other - alpha * self (hicann/ops-math math/sub/op_api/aclnn_rsub.cpp):
 * Sub/Subs with the operands swapped -- the same validation, promotion and alpha kernels
 * (elementwise/ew_binary.c), so alpha != 1 is the NPU's Axpy with -alpha.
 */
#include "aclnnop/aclnn_rsub.h"
#include "opbase/binary.h"
#include "opbase/checks.h"

aclnnStatus aclnnRsubGetWorkspaceSize(const aclTensor *self, const aclTensor *other, const aclScalar *alpha,
                                      aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor) {
    ew_binary_call c = {"aclnnRsubGetWorkspaceSize", "Rsub", EW_OP_RSUB, self, other, NULL, 1, alpha, out, 0};
    return ew_binary_phase1(&c, workspaceSize, executor);
}

aclnnStatus aclnnRsubsGetWorkspaceSize(const aclTensor *self, const aclScalar *other, const aclScalar *alpha,
                                       aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor) {
    ew_binary_call c = {"aclnnRsubsGetWorkspaceSize", "Rsubs", EW_OP_RSUB, self, NULL, other, 1, alpha, out, 0};
    return ew_binary_phase1(&c, workspaceSize, executor);
}

EW_DEFINE_PHASE2(aclnnRsub)
EW_DEFINE_PHASE2(aclnnRsubs)
