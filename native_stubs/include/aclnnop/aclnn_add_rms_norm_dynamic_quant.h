/*
 * aclnnop/aclnn_add_rms_norm_dynamic_quant.h: x = x1 + x2, RMS-normalise x with gamma, then quantise
 * per row with a dynamically computed scale (optionally after multiplying by a smooth scale).
 *
 * CPU-emulator copy of hicann/ops-nn norm/add_rms_norm_dynamic_quant/op_host/op_api/. @domain aclnn_ops_infer
 * The CANN 8.1.RC1 (generated) header spelled the five outputs `const aclTensor *`; the current
 * header, followed here, makes them non-const. Optional inputs (*Optional) may be NULL.
 */
#ifndef OP_API_INC_ADD_RMS_NORM_DYNAMIC_QUANT_H_
#define OP_API_INC_ADD_RMS_NORM_DYNAMIC_QUANT_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Phase 1: validates the arguments, reports the workspace size and creates the executor. */
ACLNN_API aclnnStatus aclnnAddRmsNormDynamicQuantGetWorkspaceSize(const aclTensor *x1, const aclTensor *x2,
                                                                  const aclTensor *gamma,
                                                                  const aclTensor *smoothScale1Optional,
                                                                  const aclTensor *smoothScale2Optional,
                                                                  double epsilon, aclTensor *y1Out,
                                                                  aclTensor *y2Out, aclTensor *xOut,
                                                                  aclTensor *scale1Out, aclTensor *scale2Out,
                                                                  uint64_t *workspaceSize,
                                                                  aclOpExecutor **executor);

/* Phase 2: enqueues the work on stream (consumes a non-repeatable executor). */
ACLNN_API aclnnStatus aclnnAddRmsNormDynamicQuant(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                                  aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif  /* OP_API_INC_ADD_RMS_NORM_DYNAMIC_QUANT_H_ */
