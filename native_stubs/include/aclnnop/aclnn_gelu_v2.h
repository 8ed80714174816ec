/*
 * aclnnop/aclnn_gelu_v2.h: GELU, exact (approximate 0) or with the tanh approximation (1).
 *
 * CPU-emulator copy; in CANN this header comes from hicann/ops-nn activation/gelu_v2/op_api/aclnn_gelu_v2.h
 * (same declarations). @domain aclnn_ops_infer
 */
#ifndef OP_API_INC_GELU_V2_H_
#define OP_API_INC_GELU_V2_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Phase 1: validates the arguments, reports the workspace size and creates the executor. */
ACLNN_API aclnnStatus aclnnGeluV2GetWorkspaceSize(const aclTensor* x, int64_t approximate, aclTensor* y,
                                                  uint64_t* workspaceSize, aclOpExecutor** executor);

/* Phase 2: runs the executor on the stream. */
ACLNN_API aclnnStatus aclnnGeluV2(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                  aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
