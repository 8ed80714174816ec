/*
 * Activations on the elementwise engine: aclnnSigmoid (+ in place), aclnnSilu, and their backwards
 * aclnnSigmoidBackward (gradOutput * output * (1 - output)) and aclnnSiluBackward
 * (gradOutput * s * (1 + self * (1 - s)), s = sigmoid(self)) (hicann/ops-nn activation/sigmoid,
 * swish, sigmoid_grad, silu_grad op_api). Tolerance class: libm in double, rounded once to fp32
 * (ew_engine.h); the NPU's own approximations are not published.
 */
#include "aclnnop/aclnn_sigmoid.h"
#include "aclnnop/aclnn_sigmoid_backward.h"
#include "aclnnop/aclnn_silu.h"
#include "aclnnop/aclnn_silu_backward.h"
#include "elementwise/ew_check.h"
#include "elementwise/ew_pointwise.h"

static const aclDataType FLOATS[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE};
static const aclDataType SILU[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};

aclnnStatus aclnnSigmoidGetWorkspaceSize(const aclTensor *self, aclTensor *out, uint64_t *workspaceSize,
                                         aclOpExecutor **executor) {
    ew_pointwise_call c = {"aclnnSigmoidGetWorkspaceSize", "Sigmoid", EW_OP_SIGMOID, "self", self, NULL, NULL, NULL,
                           "out", out, 0, FLOATS, 4, EW_PROMOTE_KEEP, EW_OUT_CASTABLE};
    return ew_unary_phase1(&c, workspaceSize, executor);
}

aclnnStatus aclnnInplaceSigmoidGetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize, aclOpExecutor **executor) {
    ew_pointwise_call c = {"aclnnInplaceSigmoidGetWorkspaceSize", "InplaceSigmoid", EW_OP_SIGMOID, "selfRef", selfRef,
                           NULL, NULL, NULL, "out", selfRef, 1, FLOATS, 4, EW_PROMOTE_KEEP, EW_OUT_CASTABLE};
    return ew_unary_phase1(&c, workspaceSize, executor);
}

aclnnStatus aclnnSiluGetWorkspaceSize(const aclTensor *self, aclTensor *out, uint64_t *workspaceSize,
                                      aclOpExecutor **executor) {
    ew_pointwise_call c = {"aclnnSiluGetWorkspaceSize", "Silu", EW_OP_SILU, "self", self, NULL, NULL, NULL, "out", out, 0,
                           SILU, 3, EW_PROMOTE_KEEP, EW_OUT_CASTABLE};
    return ew_unary_phase1(&c, workspaceSize, executor);
}

aclnnStatus aclnnSigmoidBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *output,
                                                 aclTensor *gradInput, uint64_t *workspaceSize,
                                                 aclOpExecutor **executor) {
    ew_pointwise_call c = {"aclnnSigmoidBackwardGetWorkspaceSize", "SigmoidBackward", EW_OP_SIGMOID_BACKWARD,
                           "gradOutput", gradOutput, "output", output, NULL, "gradInput", gradInput, 0, FLOATS, 4,
                           EW_PROMOTE_KEEP, EW_OUT_CASTABLE};
    return ew_pair_phase1(&c, workspaceSize, executor);
}

aclnnStatus aclnnSiluBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self, aclTensor *gradInput,
                                              uint64_t *workspaceSize, aclOpExecutor **executor) {
    ew_pointwise_call c = {"aclnnSiluBackwardGetWorkspaceSize", "SiluBackward", EW_OP_SILU_BACKWARD, "gradOutput",
                           gradOutput, "self", self, NULL, "gradInput", gradInput, 0, SILU, 3, EW_PROMOTE_KEEP,
                           EW_OUT_CASTABLE};
    return ew_pair_phase1(&c, workspaceSize, executor);
}

EW_DEFINE_PHASE2(aclnnSigmoid)
EW_DEFINE_PHASE2(aclnnInplaceSigmoid)
EW_DEFINE_PHASE2(aclnnSilu)
EW_DEFINE_PHASE2(aclnnSigmoidBackward)
EW_DEFINE_PHASE2(aclnnSiluBackward)
