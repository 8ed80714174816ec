/*
 * aclnnop/aclnn_nll_loss_backward.h: the gradient of aclnnNLLLoss with respect to self.
 *
 * CPU-emulator copy; in CANN this header comes from hicann/ops-nn loss/nll_loss_grad/op_api/aclnn_nll_loss_backward.h
 * (same declarations). @domain aclnn_ops_train
 */
#ifndef OP_API_INC_NLL_LOSS_BACKWARD_H_
#define OP_API_INC_NLL_LOSS_BACKWARD_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Phase 1: validates the arguments, reports the workspace size and creates the executor. */
ACLNN_API aclnnStatus aclnnNLLLossBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self,
                                                           const aclTensor* target, const aclTensor* weight,
                                                           int64_t reduction, int64_t ignoreIndex,
                                                           const aclTensor* totalWeight, aclTensor* out,
                                                           uint64_t* workspaceSize, aclOpExecutor** executor);

/* Phase 2: runs the executor on the stream. */
ACLNN_API aclnnStatus aclnnNLLLossBackward(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                           aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
