/*
 * aclnnop/aclnn_grouped_dynamic_mx_quant_v2.h: GroupedDynamicMxQuant with a choice of scale
 * algorithm (scaleAlg) and an optional cap on the target type's maximum (dstTypeMax, 0.0 = default).
 *
 * CPU-emulator copy of hicann/ops-nn quant/grouped_dynamic_mx_quant/op_api/. @domain aclnn_ops_infer
 */
#ifndef ACLNN_GROUPED_DYNAMIC_MX_QUANT_V2_H_
#define ACLNN_GROUPED_DYNAMIC_MX_QUANT_V2_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Phase 1: validates the arguments, reports the workspace size and creates the executor. */
ACLNN_API aclnnStatus aclnnGroupedDynamicMxQuantV2GetWorkspaceSize(const aclTensor *x, const aclTensor *groupIndex,
                                                                   const char *roundMode, int64_t dstType,
                                                                   int64_t blocksize, int64_t scaleAlg,
                                                                   double dstTypeMax, const aclTensor *y,
                                                                   const aclTensor *mxscale,
                                                                   uint64_t *workspaceSize,
                                                                   aclOpExecutor **executor);

/* Phase 2: enqueues the work on stream (consumes a non-repeatable executor). */
ACLNN_API aclnnStatus aclnnGroupedDynamicMxQuantV2(void *workspace, uint64_t workspaceSize,
                                                   aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif  /* ACLNN_GROUPED_DYNAMIC_MX_QUANT_V2_H_ */
