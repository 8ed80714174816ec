/*
 * aclnnop/aclnn_batch_matmul.h: out = self @ mat2 (3-D, batch by batch).
 *
 * CPU-emulator copy; in CANN this header comes from hicann/ops-nn matmul/batch_mat_mul_v3/op_host/op_api/aclnn_batch_matmul.h
 * (same declarations; only the operators the emulator implements). @domain aclnn_ops_infer
 */
#ifndef OP_API_ACLNN_BATCHMATMUL_H
#define OP_API_ACLNN_BATCHMATMUL_H

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Phase 1: validates the arguments, reports the workspace size and creates the executor. */
ACLNN_API aclnnStatus aclnnBatchMatMulGetWorkspaceSize(const aclTensor* self, const aclTensor* mat2, aclTensor* out,
                                                       int8_t cubeMathType, uint64_t* workspaceSize,
                                                       aclOpExecutor** executor);

/* Phase 2: enqueues the work on stream (consumes a non-repeatable executor). */
ACLNN_API aclnnStatus aclnnBatchMatMul(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                       aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif  /* OP_API_ACLNN_BATCHMATMUL_H */
