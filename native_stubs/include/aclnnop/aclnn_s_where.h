/*
 * aclnnop/aclnn_s_where.h: out = condition ? self : other (broadcast).
 *
 * CPU-emulator copy; in CANN this header comes from hicann/ops-math math/select/op_api/aclnn_s_where.h
 * (same declarations for the operators listed here). @domain aclnn_math
 */
#ifndef OP_API_INC_SWHERE_H_
#define OP_API_INC_SWHERE_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Phase 1: validates the arguments, reports the workspace size and creates the executor. */
ACLNN_API aclnnStatus aclnnSWhereGetWorkspaceSize(const aclTensor* condition, const aclTensor* self,
                                                  const aclTensor* other, aclTensor* out, uint64_t* workspaceSize,
                                                  aclOpExecutor** executor);

/* Phase 2: runs the executor on the stream. */
ACLNN_API aclnnStatus aclnnSWhere(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                  aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
