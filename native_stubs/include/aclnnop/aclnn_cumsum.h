/*
 * aclnnop/aclnn_cumsum.h: running sums along a dimension.
 *
 * CPU-emulator copy; in CANN this header comes from hicann/ops-math math/cumsum/op_api/aclnn_cumsum.h
 * (same declarations for the operators listed here). @domain aclnn_math
 */
#ifndef OP_API_INC_CUMSUM_H_
#define OP_API_INC_CUMSUM_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Phase 1: validates the arguments, reports the workspace size and creates the executor. */
ACLNN_API aclnnStatus aclnnCumsumGetWorkspaceSize(const aclTensor* self, int64_t dim, aclDataType dtype, aclTensor* out,
                                                  uint64_t* workspaceSize, aclOpExecutor** executor);

/* Phase 2: runs the executor on the stream. */
ACLNN_API aclnnStatus aclnnCumsum(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                  aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
