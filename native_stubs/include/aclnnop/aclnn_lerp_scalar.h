/*
 * aclnnop/aclnn_lerp_scalar.h: out = self + weight * (end - self), weight a scalar.
 *
 * CPU-emulator copy; in CANN this header comes from hicann/ops-math math/lerp/op_api/aclnn_lerp_scalar.h
 * (same declarations). @domain aclnn_math
 */
#ifndef OP_API_ACLNN_LERP_SCALAR_H_
#define OP_API_ACLNN_LERP_SCALAR_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Phase 1: validates the arguments, reports the workspace size and creates the executor. */
ACLNN_API aclnnStatus aclnnLerpsGetWorkspaceSize(const aclTensor* self, const aclTensor* end, const aclScalar* weight,
                                                 aclTensor* out, uint64_t* workspaceSize, aclOpExecutor** executor);

/* Phase 2: runs the executor on the stream. */
ACLNN_API aclnnStatus aclnnLerps(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                 const aclrtStream stream);

/* Phase 1: validates the arguments, reports the workspace size and creates the executor. */
ACLNN_API aclnnStatus aclnnInplaceLerpsGetWorkspaceSize(aclTensor* selfRef, const aclTensor* end,
                                                        const aclScalar* weight, uint64_t* workspaceSize,
                                                        aclOpExecutor** executor);

/* Phase 2: runs the executor on the stream. */
ACLNN_API aclnnStatus aclnnInplaceLerps(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                        const aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
