/*
 * aclnnop/aclnn_masked_fill_scalar.h: selfRef[mask] = value.
 *
 * CPU-emulator copy; in CANN this header comes from hicann/ops-math conversion/masked_fill/op_api/aclnn_masked_fill_scalar.h
 * (same declarations for the operators listed here). @domain aclnn_ops_infer
 */
#ifndef OP_API_INC_MASKEF_FILL_SCALAR_H_
#define OP_API_INC_MASKEF_FILL_SCALAR_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Phase 1: validates the arguments, reports the workspace size and creates the executor. */
ACLNN_API aclnnStatus aclnnInplaceMaskedFillScalarGetWorkspaceSize(aclTensor* selfRef, const aclTensor* mask,
                                                                   const aclScalar* value,
                                                                   uint64_t* workspaceSize,
                                                                   aclOpExecutor** executor);

/* Phase 2: runs the executor on the stream. */
ACLNN_API aclnnStatus aclnnInplaceMaskedFillScalar(void* workspace, uint64_t workspaceSize,
                                                   aclOpExecutor* executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
