/*
 * aclnnop/aclnn_foreach_addcdiv_scalar_list.h: out[i] = x1[i] + scalars[i] * x2[i] / x3[i] (scalars: a tensor).
 *
 * CPU-emulator copy; in CANN this header comes from hicann/ops-nn foreach/foreach_addcdiv_scalar_list
 * (same declarations). @domain aclnn_ops_train
 */
#ifndef ACLNN_FOREACH_ADDCDIV_SCALAR_LIST_H_
#define ACLNN_FOREACH_ADDCDIV_SCALAR_LIST_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Phase 1: validates the arguments, reports the workspace size and creates the executor. */
ACLNN_API aclnnStatus aclnnForeachAddcdivScalarListGetWorkspaceSize(const aclTensorList* x1, const aclTensorList* x2, const aclTensorList* x3,
    const aclTensor* scalars, const aclTensorList* out,
    uint64_t* workspaceSize, aclOpExecutor** executor);

/* Phase 2: runs the executor on the stream. */
ACLNN_API aclnnStatus aclnnForeachAddcdivScalarList(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
