/*
 * aclnnop/aclnn_nonzero_v2.h: the coordinates of the non-zero elements of self, one column each.
 *
 * CPU-emulator copy; in CANN this header comes from hicann/ops-nn index/non_zero/op_api/aclnn_nonzero_v2.h
 * (same declarations). @domain aclnn_math
 *
 * out (INT64) is allocated with the largest possible shape [self rank, self element count]; after the
 * launch (which waits for the stream) aclGetViewShape(out) reports [rank, number of non-zero elements]
 * and the coordinates lie contiguously in that shape.
 */
#ifndef OP_API_INC_NONZERO_V2_H_
#define OP_API_INC_NONZERO_V2_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Phase 1: validates the arguments, reports the workspace size and creates the executor. */
ACLNN_API aclnnStatus aclnnNonzeroV2GetWorkspaceSize(const aclTensor* self, aclTensor* out, uint64_t* workspaceSize,
                                                     aclOpExecutor** executor);

/* Phase 2: runs the executor on the stream, waits for it and refreshes out's view shape. */
ACLNN_API aclnnStatus aclnnNonzeroV2(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                     aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
