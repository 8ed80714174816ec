/*
 * aclnnop/aclnn_grouped_dynamic_mx_quant.h: MX (microscaling) quantisation of x in blocks of
 * blocksize elements, with row groups delimited by groupIndex; writes the quantised y and the
 * per-block FLOAT8_E8M0 scales mxscale.
 *
 * CPU-emulator copy of hicann/ops-nn quant/grouped_dynamic_mx_quant/op_api/. @domain aclnn_ops_infer
 * roundMode is a host string such as "rint"; dstType carries an aclDataType value (35 FLOAT8_E5M2,
 * 36 FLOAT8_E4M3FN, 40 FLOAT4_E2M1, 41 FLOAT4_E1M2). FP4 tensors are described in 4-bit elements.
 */
#ifndef ACLNN_GROUPED_DYNAMIC_MX_QUANT_H_
#define ACLNN_GROUPED_DYNAMIC_MX_QUANT_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Phase 1: validates the arguments, reports the workspace size and creates the executor. */
ACLNN_API aclnnStatus aclnnGroupedDynamicMxQuantGetWorkspaceSize(const aclTensor *x, const aclTensor *groupIndex,
                                                                 const char *roundMode, int64_t dstType,
                                                                 int64_t blocksize, const aclTensor *y,
                                                                 const aclTensor *mxscale, uint64_t *workspaceSize,
                                                                 aclOpExecutor **executor);

/* Phase 2: enqueues the work on stream (consumes a non-repeatable executor). */
ACLNN_API aclnnStatus aclnnGroupedDynamicMxQuant(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                                 aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif  /* ACLNN_GROUPED_DYNAMIC_MX_QUANT_H_ */
