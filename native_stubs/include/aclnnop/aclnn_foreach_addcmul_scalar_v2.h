/*
 * aclnnop/aclnn_foreach_addcmul_scalar_v2.h: out[i] = x1[i] + scalar * x2[i] * x3[i] (aclScalar).
 *
 * CPU-emulator copy; in CANN this header comes from hicann/ops-nn foreach/foreach_addcmul_scalar
 * (same declarations). @domain aclnn_ops_train
 */
#ifndef ACLNN_FOREACH_ADDCMUL_SCALAR_V2_H_
#define ACLNN_FOREACH_ADDCMUL_SCALAR_V2_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Phase 1: validates the arguments, reports the workspace size and creates the executor. */
ACLNN_API aclnnStatus aclnnForeachAddcmulScalarV2GetWorkspaceSize(const aclTensorList* x1, const aclTensorList* x2, const aclTensorList* x3,
    const aclScalar* scalar, aclTensorList* out,
    uint64_t* workspaceSize, aclOpExecutor** executor);

/* Phase 2: runs the executor on the stream. */
ACLNN_API aclnnStatus aclnnForeachAddcmulScalarV2(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
