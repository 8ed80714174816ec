/*
 * aclnnop/aclnn_copy.h: selfRef = src (broadcast, converted to selfRef dtype; any strides and offsets).
 *
 * CPU-emulator copy; in CANN this header comes from hicann/ops-math conversion/view_copy/op_api/aclnn_copy.h
 * (same declarations). @domain aclnn_math
 */
#ifndef OP_API_INC_COPY_H_
#define OP_API_INC_COPY_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Phase 1: validates the arguments, reports the workspace size and creates the executor. */
ACLNN_API aclnnStatus aclnnInplaceCopyGetWorkspaceSize(aclTensor *selfRef, const aclTensor *src,
                                                       uint64_t *workspaceSize, aclOpExecutor **executor);

/* Phase 2: enqueues the work on stream (consumes a non-repeatable executor). */
ACLNN_API aclnnStatus aclnnInplaceCopy(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                       const aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif  /* OP_API_INC_COPY_H_ */
