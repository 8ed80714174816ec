/*
 * aclnnop/aclnn_layer_norm_backward.h: the gradients of aclnnLayerNorm (input, weight, bias).
 *
 * CPU-emulator copy; in CANN this header comes from hicann/ops-nn norm/layer_norm_grad_v3/op_host/op_api/
 * aclnn_layer_norm_backward.h (same declarations). @domain aclnn_ops_train
 */
#ifndef OP_API_INC_LAYER_NORM_BACKWARD_H_
#define OP_API_INC_LAYER_NORM_BACKWARD_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Phase 1: validates the arguments, reports the workspace size and creates the executor. */
ACLNN_API aclnnStatus aclnnLayerNormBackwardGetWorkspaceSize(
    const aclTensor* gradOut, const aclTensor* input, const aclIntArray* normalizedShape, const aclTensor* mean,
    const aclTensor* rstd, const aclTensor* weightOptional, const aclTensor* biasOptional,
    const aclBoolArray* outputMask, aclTensor* gradInputOut, aclTensor* gradWeightOut, aclTensor* gradBiasOut,
    uint64_t* workspaceSize, aclOpExecutor** executor);

/* Phase 2: runs the executor on the stream. */
ACLNN_API aclnnStatus aclnnLayerNormBackward(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                             aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
