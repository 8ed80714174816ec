/*
 * aclnnop/aclnn_dropout_do_mask.h: applies a dropout bit mask: out = bit ? self / (1 - prob) : 0.
 *
 * CPU-emulator copy; in CANN this header comes from hicann/ops-math random/drop_out_do_mask/op_host/op_api/aclnn_dropout_do_mask.h
 * (same declarations for the operators listed here). @domain aclnn_rand
 */
#ifndef OP_API_INC_DROPOUT_DO_MASK_H_
#define OP_API_INC_DROPOUT_DO_MASK_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Phase 1: validates the arguments, reports the workspace size and creates the executor. */
ACLNN_API aclnnStatus aclnnDropoutDoMaskGetWorkspaceSize(const aclTensor* self, const aclTensor* mask, double prob,
                                                         aclTensor* out, uint64_t* workspaceSize,
                                                         aclOpExecutor** executor);

/* Phase 2: runs the executor on the stream. */
ACLNN_API aclnnStatus aclnnDropoutDoMask(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                         aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
