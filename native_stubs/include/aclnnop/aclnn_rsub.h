/*
 * aclnnop/aclnn_rsub.h: out = other - alpha * self.
 *
 * CPU-emulator copy; in CANN this header comes from hicann/ops-math math/sub/op_api/aclnn_rsub.h
 * (same declarations for the operators listed here). @domain aclnn_math
 */
#ifndef OP_API_INC_RSUB_H_
#define OP_API_INC_RSUB_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Phase 1: validates the arguments, reports the workspace size and creates the executor. */
ACLNN_API aclnnStatus aclnnRsubGetWorkspaceSize(const aclTensor* self, const aclTensor* other,
                                                const aclScalar* alpha, aclTensor* out, uint64_t* workspaceSize,
                                                aclOpExecutor** executor);

/* Phase 2: runs the executor on the stream. */
ACLNN_API aclnnStatus aclnnRsub(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                aclrtStream stream);

/* Phase 1: validates the arguments, reports the workspace size and creates the executor. */
ACLNN_API aclnnStatus aclnnRsubsGetWorkspaceSize(const aclTensor* self, const aclScalar* other,
                                                 const aclScalar* alpha, aclTensor* out, uint64_t* workspaceSize,
                                                 aclOpExecutor** executor);

/* Phase 2: runs the executor on the stream. */
ACLNN_API aclnnStatus aclnnRsubs(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                 aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
