/*
 * aclnnop/aclnn_dropout_v3.h: dropout in one launch: out = x / (1 - p) or 0, and the bit mask.
 *
 * CPU-emulator copy; in CANN this header comes from hicann/ops-math random/drop_out_v3/op_api/aclnn_dropout_v3.h
 * (same declarations). @domain aclnn_rand
 */
#ifndef OP_API_INC_DROPOUT_V3_H_
#define OP_API_INC_DROPOUT_V3_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Phase 1: validates the arguments, reports the workspace size and creates the executor. */
ACLNN_API aclnnStatus aclnnDropoutV3GetWorkspaceSize(const aclTensor* input, const aclTensor* optionalNoiseShape, double p,
                                                     int64_t seed, int64_t offset, aclTensor* out, aclTensor* maskOut,
                                                     uint64_t* workspaceSize, aclOpExecutor** executor);

/* Phase 2: runs the executor on the stream. */
ACLNN_API aclnnStatus aclnnDropoutV3(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                     aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
