/**
 * Test data for tests/test_signatures.py, written for pyaclnn in the style of the hand-written
 * operator headers: ACLNN_API, doc comments with @param tags, outputs spelled `aclTensor*`.
 */
#ifndef TEST_ACLNN_SCALE_SHIFT_H_
#define TEST_ACLNN_SCALE_SHIFT_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief aclnnScaleShift的第一段接口，计算workspace大小。
 * @domain aclnn_test_infer
 *
 * @param [in] self: 输入张量。
 * @param [in] scaleOptional: 缩放，可选。
 * @param [in] shift: 平移，支持传空指针。
 * @param [in] mask: 掩码，不支持空指针。
 * @param [in] other: 支持空Tensor，支持非连续的Tensor。
 * @param [in] alpha: double attribute.
 * @param [in] out: 输出。   (the vendor headers tag outputs [in] too; the tag is not trusted)
 * @param [out] workspaceSize: workspace size.
 * @param [out] executor: executor.
 */
ACLNN_API aclnnStatus aclnnScaleShiftGetWorkspaceSize(const aclTensor* self, const aclTensor* scaleOptional,
                                                      const aclTensor* shift, const aclTensor* mask,
                                                      const aclTensor* other, double alpha, aclTensor* out,
                                                      uint64_t* workspaceSize, aclOpExecutor** executor);

/**
 * @brief aclnnScaleShift的第二段接口，用于执行计算。
 */
ACLNN_API aclnnStatus aclnnScaleShift(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                      const aclrtStream stream);

/**
 * @brief In-place variant: writes selfRef.
 * @param [in] selfRef: updated in place.
 */
ACLNN_API aclnnStatus aclnnInplaceScaleShiftGetWorkspaceSize(aclTensor* selfRef, const aclTensor* shift,
                                                             double alpha, uint64_t* workspaceSize,
                                                             aclOpExecutor** executor);

ACLNN_API aclnnStatus aclnnInplaceScaleShift(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                             aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif  // TEST_ACLNN_SCALE_SHIFT_H_
