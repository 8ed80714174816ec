/* Test data for tests/test_signatures.py, written for pyaclnn: an operator found only under level2/. */
#ifndef TEST_ACLNN_ONLY_IN_LEVEL2_H_
#define TEST_ACLNN_ONLY_IN_LEVEL2_H_
#include "aclnn_util.h"
#ifdef __cplusplus
extern "C" {
#endif
ACLNN_API aclnnStatus aclnnOnlyInLevel2GetWorkspaceSize(const aclTensor *self, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnOnlyInLevel2(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);
#ifdef __cplusplus
}
#endif
#endif
