/*
 * aclnnop/aclnn_mm.h: out = self @ mat2 (2-D).
 *
 * CPU-emulator copy; in CANN this header comes from hicann/ops-nn matmul/mat_mul_v3/op_host/op_api/aclnn_mm.h
 * (same declarations). @domain aclnn_ops_infer
 */
#ifndef OP_API_INC_MM_H_
#define OP_API_INC_MM_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Phase 1: validates the arguments, reports the workspace size and creates the executor. */
ACLNN_API aclnnStatus aclnnMmGetWorkspaceSize(const aclTensor* self, const aclTensor* mat2, aclTensor* out,
                                              int8_t cubeMathType, uint64_t* workspaceSize, aclOpExecutor** executor);

/* Phase 2: enqueues the work on stream (consumes a non-repeatable executor). */
ACLNN_API aclnnStatus aclnnMm(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif  /* OP_API_INC_MM_H_ */
