
/*
 * Test data for tests/test_signatures.py, written for pyaclnn in the layout of the headers that
 * the op-build tool generates: visibility attribute on its own line, one parameter per line,
 * "name : required|optional|dynamic" comments, every tensor `const aclTensor *`, outputs named
 * ...Out, in-place inputs ...Ref, float attributes as double.
*/

#ifndef ACLNN_FUSED_BLEND_H_
#define ACLNN_FUSED_BLEND_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/* funtion: aclnnFusedBlendGetWorkspaceSize
 * parameters :
 * x : required
 * weightsOptional : optional
 * blocks : dynamic
 * accumRef : required
 * ratio : optional
 * layout : optional
 * yOut : required
 * countOutOptional : optional
 * workspaceSize : size of workspace(output).
 * executor : executor context(output).
 */
__attribute__((visibility("default")))
aclnnStatus aclnnFusedBlendGetWorkspaceSize(
    const aclTensor *x,
    const aclTensor *weightsOptional,
    const aclTensorList *blocks,
    const aclTensor *accumRef,
    double ratio,
    char *layout,
    const aclTensor *yOut,
    const aclTensor *countOutOptional,
    uint64_t *workspaceSize,
    aclOpExecutor **executor);

/* funtion: aclnnFusedBlend
 * parameters :
 * workspace : workspace memory addr(input).
 * workspaceSize : size of workspace(input).
 * executor : executor context(input).
 * stream : acl stream.
 */
__attribute__((visibility("default")))
aclnnStatus aclnnFusedBlend(
    void *workspace,
    uint64_t workspaceSize,
    aclOpExecutor *executor,
    aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
