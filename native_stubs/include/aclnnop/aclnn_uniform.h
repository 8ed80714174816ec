/*
 * aclnnop/aclnn_uniform.h: uniform random numbers in [from, to), in place.
 *
 * CPU-emulator copy; in CANN this header comes from hicann/ops-math random/dsa_random_uniform/op_host/op_api/aclnn_uniform.h
 * (same declarations for the operators listed here). @domain aclnn_rand
 */
#ifndef OP_API_INC_UNIFORM_H_
#define OP_API_INC_UNIFORM_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Phase 1: validates the arguments, reports the workspace size and creates the executor. */
ACLNN_API aclnnStatus aclnnInplaceUniformGetWorkspaceSize(const aclTensor* selfRef, double from, double to, uint64_t seed,
                                                          uint64_t offset, uint64_t* workspaceSize,
                                                          aclOpExecutor** executor);

/* Phase 2: runs the executor on the stream. */
ACLNN_API aclnnStatus aclnnInplaceUniform(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                          aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
