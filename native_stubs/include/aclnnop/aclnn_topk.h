/*
 * aclnnop/aclnn_topk.h: the k largest or smallest elements along a dimension, with their indices.
 *
 * CPU-emulator copy; in CANN this header comes from hicann/ops-nn index/gather_elements/op_api/aclnn_topk.h
 * (same declarations). @domain aclnn_math
 */
#ifndef OP_API_INC_TOPK_H_
#define OP_API_INC_TOPK_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Phase 1: validates the arguments, reports the workspace size and creates the executor. */
ACLNN_API aclnnStatus aclnnTopkGetWorkspaceSize(const aclTensor* self, int64_t k, int64_t dim, bool largest,
                                                bool sorted, aclTensor* valuesOut, aclTensor* indicesOut,
                                                uint64_t* workspaceSize, aclOpExecutor** executor);

/* Phase 2: runs the executor on the stream. */
ACLNN_API aclnnStatus aclnnTopk(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
