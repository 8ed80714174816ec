/*
 * aclnnop/aclnn_threshold_backward.h: gradOutput where self > threshold, else 0 (relu's backward).
 *
 * CPU-emulator copy; in CANN this header comes from hicann/ops-nn activation/threshold_grad_v2_d/op_host/op_api/
 * aclnn_threshold_backward.h (same declarations). @domain aclnn_ops_train
 */
#ifndef OP_API_INC_THRESHOLD_BACKWARG_H_
#define OP_API_INC_THRESHOLD_BACKWARG_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Phase 1: validates the arguments, reports the workspace size and creates the executor. */
ACLNN_API aclnnStatus aclnnThresholdBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self,
                                                             const aclScalar* threshold, aclTensor* out,
                                                             uint64_t* workspaceSize, aclOpExecutor** executor);

/* Phase 2: runs the executor on the stream. */
ACLNN_API aclnnStatus aclnnThresholdBackward(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                             aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
