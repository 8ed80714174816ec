/*
 * aclnnop/aclnn_foreach_add_scalar_v2.h: out[i] = x[i] + scalar (aclScalar).
 *
 * CPU-emulator copy; in CANN this header comes from hicann/ops-nn foreach/foreach_add_scalar
 * (same declarations). @domain aclnn_ops_train
 */
#ifndef ACLNN_FOREACH_ADD_SCALAR_V2_H_
#define ACLNN_FOREACH_ADD_SCALAR_V2_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Phase 1: validates the arguments, reports the workspace size and creates the executor. */
ACLNN_API aclnnStatus aclnnForeachAddScalarV2GetWorkspaceSize(const aclTensorList* x, const aclScalar* scalar, aclTensorList* out,
    uint64_t* workspaceSize, aclOpExecutor** executor);

/* Phase 2: runs the executor on the stream. */
ACLNN_API aclnnStatus aclnnForeachAddScalarV2(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
