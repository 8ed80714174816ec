/*
 * aclnnop/aclnn_foreach_lerp_scalar.h: out[i] = x1[i] + weight * (x2[i] - x1[i]).
 *
 * CPU-emulator copy; in CANN this header comes from hicann/ops-nn foreach/foreach_lerp_scalar
 * (same declarations). @domain aclnn_ops_train
 */
#ifndef ACLNN_FOREACH_LERP_SCALAR_H_
#define ACLNN_FOREACH_LERP_SCALAR_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Phase 1: validates the arguments, reports the workspace size and creates the executor. */
ACLNN_API aclnnStatus aclnnForeachLerpScalarGetWorkspaceSize(const aclTensorList* x1, const aclTensorList* x2, const aclScalar* weight,
    const aclTensorList* out,
    uint64_t* workspaceSize, aclOpExecutor** executor);

/* Phase 2: runs the executor on the stream. */
ACLNN_API aclnnStatus aclnnForeachLerpScalar(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
