/*
 * aclnnop/aclnn_logsoftmax_backward.h: the gradient of aclnnLogSoftmax.
 *
 * CPU-emulator copy; in CANN this header comes from hicann/ops-nn activation/log_softmax_grad/op_api/aclnn_logsoftmax_backward.h
 * (same declarations). @domain aclnn_ops_train
 */
#ifndef OP_API_INC_LOGSOFTMAX_BACKWARD_H_
#define OP_API_INC_LOGSOFTMAX_BACKWARD_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Phase 1: validates the arguments, reports the workspace size and creates the executor. */
ACLNN_API aclnnStatus aclnnLogSoftmaxBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* output,
                                                              int64_t dim, aclTensor* out, uint64_t* workspaceSize,
                                                              aclOpExecutor** executor);

/* Phase 2: enqueues the work on stream (consumes a non-repeatable executor). */
ACLNN_API aclnnStatus aclnnLogSoftmaxBackward(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                              aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif  /* OP_API_INC_LOGSOFTMAX_BACKWARD_H_ */
