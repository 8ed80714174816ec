/*
 * aclnnop/aclnn_add_rms_norm_dynamic_quant_v2.h: AddRmsNormDynamicQuant with an optional beta
 * (added after normalisation) and an optional outputMask choosing which outputs to produce.
 *
 * CPU-emulator copy of hicann/ops-nn norm/add_rms_norm_dynamic_quant/op_host/op_api/. @domain aclnn_ops_infer
 * betaOptional, the smooth scales and outputMask (from aclCreateBoolArray) may be NULL.
 */
#ifndef OP_API_INC_ADD_RMS_NORM_DYNAMIC_QUANT_V2_H_
#define OP_API_INC_ADD_RMS_NORM_DYNAMIC_QUANT_V2_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Phase 1: validates the arguments, reports the workspace size and creates the executor.
 * @param [in] outputMask: which outputs to produce, a BOOL array of length 2; may be NULL.
 */
ACLNN_API aclnnStatus aclnnAddRmsNormDynamicQuantV2GetWorkspaceSize(const aclTensor *x1, const aclTensor *x2,
                                                                    const aclTensor *gamma,
                                                                    const aclTensor *smoothScale1Optional,
                                                                    const aclTensor *smoothScale2Optional,
                                                                    const aclTensor *betaOptional, double epsilon,
                                                                    const aclBoolArray *outputMask,
                                                                    aclTensor *y1Out, aclTensor *y2Out,
                                                                    aclTensor *xOut, aclTensor *scale1Out,
                                                                    aclTensor *scale2Out, uint64_t *workspaceSize,
                                                                    aclOpExecutor **executor);

/* Phase 2: enqueues the work on stream (consumes a non-repeatable executor). */
ACLNN_API aclnnStatus aclnnAddRmsNormDynamicQuantV2(void *workspace, uint64_t workspaceSize,
                                                    aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif  /* OP_API_INC_ADD_RMS_NORM_DYNAMIC_QUANT_V2_H_ */
