/*
 * aclnnop/aclnn_foreach_div_scalar_list.h: out[i] = x[i] / scalars[i].
 *
 * CPU-emulator copy; in CANN this header comes from hicann/ops-nn foreach/foreach_div_scalar_list
 * (same declarations). @domain aclnn_ops_train
 */
#ifndef ACLNN_FOREACH_DIV_SCALAR_LIST_H_
#define ACLNN_FOREACH_DIV_SCALAR_LIST_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Phase 1: validates the arguments, reports the workspace size and creates the executor. */
ACLNN_API aclnnStatus aclnnForeachDivScalarListGetWorkspaceSize(const aclTensorList* x, const aclScalarList* scalars, const aclTensorList* out,
    uint64_t* workspaceSize, aclOpExecutor** executor);

/* Phase 2: runs the executor on the stream. */
ACLNN_API aclnnStatus aclnnForeachDivScalarList(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
