/*
 * aclnnop/aclnn_addmm.h: out = beta * self + alpha * (mat1 @ mat2).
 *
 * CPU-emulator copy; in CANN this header comes from hicann/ops-nn matmul/mat_mul_v3/op_host/op_api/aclnn_addmm.h
 * (same declarations; only the operators the emulator implements). @domain aclnn_ops_infer
 */
#ifndef OP_API_INC_ADDMM_H_
#define OP_API_INC_ADDMM_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Phase 1: validates the arguments, reports the workspace size and creates the executor. */
ACLNN_API aclnnStatus aclnnAddmmGetWorkspaceSize(const aclTensor* self, const aclTensor* mat1, const aclTensor* mat2,
                                                 const aclScalar* beta, const aclScalar* alpha, aclTensor* out,
                                                 int8_t cubeMathType, uint64_t* workspaceSize,
                                                 aclOpExecutor** executor);

/* Phase 2: enqueues the work on stream (consumes a non-repeatable executor). */
ACLNN_API aclnnStatus aclnnAddmm(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream);

/* Phase 1: validates the arguments, reports the workspace size and creates the executor. */
ACLNN_API aclnnStatus aclnnInplaceAddmmGetWorkspaceSize(const aclTensor* selfRef, const aclTensor* mat1,
                                                        const aclTensor* mat2, const aclScalar* beta,
                                                        const aclScalar* alpha, int8_t cubeMathType,
                                                        uint64_t* workspaceSize, aclOpExecutor** executor);

/* Phase 2: enqueues the work on stream (consumes a non-repeatable executor). */
ACLNN_API aclnnStatus aclnnInplaceAddmm(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                        aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif  /* OP_API_INC_ADDMM_H_ */
