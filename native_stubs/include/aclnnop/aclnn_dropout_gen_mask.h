/*
 * aclnnop/aclnn_dropout_gen_mask.h: the bit mask of dropout (1 = keep, with probability 1 - prob).
 *
 * CPU-emulator copy; in CANN this header comes from hicann/ops-math random/dsa_gen_bit_mask/op_host/op_api/aclnn_dropout_gen_mask.h
 * (same declarations for the operators listed here). @domain aclnn_rand
 */
#ifndef OP_API_INC_DROPOUT_GEN_MASK_H_
#define OP_API_INC_DROPOUT_GEN_MASK_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Phase 1: validates the arguments, reports the workspace size and creates the executor. */
ACLNN_API aclnnStatus aclnnDropoutGenMaskV2GetWorkspaceSize(const aclIntArray* shape, double prob, int64_t seed,
                                                            int64_t offset, aclDataType probDataType, aclTensor* out,
                                                            uint64_t* workspaceSize, aclOpExecutor** executor);

/* Phase 2: runs the executor on the stream. */
ACLNN_API aclnnStatus aclnnDropoutGenMaskV2(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                            aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
