/*
 * aclnnop/aclnn_amax.h: maximum over dims.
 *
 * CPU-emulator copy; in CANN this header comes from hicann/ops-math math/reduce_max/op_api/aclnn_amax.h
 * (same declarations). @domain aclnn_math
 */
#ifndef OP_API_INC_AMAX_H_
#define OP_API_INC_AMAX_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Phase 1: validates the arguments, reports the workspace size and creates the executor. */
ACLNN_API aclnnStatus aclnnAmaxGetWorkspaceSize(
    const aclTensor* self, const aclIntArray* dim, bool keepDim, aclTensor* out, uint64_t* workspaceSize,
    aclOpExecutor** executor);

/* Phase 2: enqueues the work on stream (consumes a non-repeatable executor). */
ACLNN_API aclnnStatus aclnnAmax(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif  /* OP_API_INC_AMAX_H_ */
