/*
 * aclnnop/aclnn_amp_update_scale.h: dynamic loss-scale update for mixed-precision training.
 *
 * CPU-emulator copy; in CANN this header is generated from hicann/ops-math
 * math/amp_update_scale (prototype as in docs/aclnnAmpUpdateScale.md). @domain aclnn_math
 *
 * If foundInf is non-zero the scale is multiplied by backoffFactor and the growth tracker reset;
 * otherwise the tracker counts up, and when it reaches growthInterval it is reset and the scale is
 * multiplied by growthFactor (kept unchanged if that product is not finite).
 * torch_npu passes the same tensors as inputs and outputs (in-place update), which is allowed.
 */
#ifndef ACLNN_AMP_UPDATE_SCALE_H_
#define ACLNN_AMP_UPDATE_SCALE_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Phase 1: validates the arguments, reports the workspace size and creates the executor. */
ACLNN_API aclnnStatus aclnnAmpUpdateScaleGetWorkspaceSize(const aclTensor *currentScale,
                                                          const aclTensor *growthTracker,
                                                          const aclTensor *foundInf, double growthFactor,
                                                          double backoffFactor, int64_t growthInterval,
                                                          const aclTensor *updatedScaleOut,
                                                          const aclTensor *updatedGrowthTrackerOut,
                                                          uint64_t *workspaceSize, aclOpExecutor **executor);

/* Phase 2: enqueues the work on stream (consumes a non-repeatable executor). */
ACLNN_API aclnnStatus aclnnAmpUpdateScale(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                          aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif  /* ACLNN_AMP_UPDATE_SCALE_H_ */
