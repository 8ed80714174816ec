/*
 * aclnnop/aclnn_masked_select.h: the elements of self where mask is true, as a 1-D tensor.
 *
 * CPU-emulator copy; in CANN this header comes from hicann/ops-math
 * conversion/masked_select_v3/op_api/aclnn_masked_select.h (same declarations). @domain aclnn_math
 *
 * out is allocated with the element count of the broadcast shape of self and mask; after the launch
 * (which waits for the stream) aclGetViewShape(out) reports the real shape [number of true elements].
 */
#ifndef OP_API_INC_MASKED_SELECT_H_
#define OP_API_INC_MASKED_SELECT_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Phase 1: validates the arguments, reports the workspace size and creates the executor. */
ACLNN_API aclnnStatus aclnnMaskedSelectGetWorkspaceSize(const aclTensor* self, const aclTensor* mask, aclTensor* out,
                                                        uint64_t* workspaceSize, aclOpExecutor** executor);

/* Phase 2: runs the executor on the stream, waits for it and refreshes out's view shape. */
ACLNN_API aclnnStatus aclnnMaskedSelect(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                        aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
