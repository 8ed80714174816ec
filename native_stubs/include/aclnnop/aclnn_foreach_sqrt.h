/*
 * aclnnop/aclnn_foreach_sqrt.h: out[i] = sqrt(x[i]).
 *
 * CPU-emulator copy; in CANN this header comes from hicann/ops-nn foreach/foreach_sqrt
 * (same declarations). @domain aclnn_ops_train
 */
#ifndef ACLNN_FOREACH_SQRT_H_
#define ACLNN_FOREACH_SQRT_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Phase 1: validates the arguments, reports the workspace size and creates the executor. */
ACLNN_API aclnnStatus aclnnForeachSqrtGetWorkspaceSize(const aclTensorList* x, const aclTensorList* out,
    uint64_t* workspaceSize, aclOpExecutor** executor);

/* Phase 2: runs the executor on the stream. */
ACLNN_API aclnnStatus aclnnForeachSqrt(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
