/*
 * aclnnop/aclnn_normal.h: normal random numbers with mean and std, in place.
 *
 * CPU-emulator copy; in CANN this header comes from hicann/ops-math random/dsa_random_normal/op_host/op_api/aclnn_normal.h
 * (same declarations for the operators listed here). @domain aclnn_rand
 */
#ifndef OP_API_INC_NORMAL_H_
#define OP_API_INC_NORMAL_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Phase 1: validates the arguments, reports the workspace size and creates the executor. */
ACLNN_API aclnnStatus aclnnInplaceNormalGetWorkspaceSize(const aclTensor* selfRef, float mean, float std, int64_t seed,
                                                         int64_t offset, uint64_t* workspaceSize,
                                                         aclOpExecutor** executor);

/* Phase 2: runs the executor on the stream. */
ACLNN_API aclnnStatus aclnnInplaceNormal(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                         aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
