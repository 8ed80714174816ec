/*
 * aclnnBitwiseAndScalar, aclnnBitwiseAndTensor and their in-place forms: out = self & other on
 * integers, logical and on BOOL (hicann/ops-math math/bitwise_and/op_api). Bit-exact.
 */
#include "aclnnop/aclnn_bitwise_and_scalar.h"
#include "aclnnop/aclnn_bitwise_and_tensor.h"
#include "elementwise/ew_check.h"
#include "elementwise/ew_pointwise.h"

/* The vendor's list without UINT16 (outside the promotion table the engine implements). */
static const aclDataType BITAND[] = {ACL_INT16, ACL_INT32, ACL_INT64, ACL_INT8, ACL_UINT8, ACL_BOOL};

static aclnnStatus bitand_call(const char *api, const char *op_name, const aclTensor *self, const aclTensor *other,
                               const aclScalar *other_scalar, const aclTensor *out, int inplace, uint64_t *ws,
                               aclOpExecutor **ex) {
    ew_pointwise_call c = {api, op_name, EW_OP_BITAND, inplace ? "selfRef" : "self", self, "other", other,
                           other_scalar, "out", inplace ? self : out, inplace, BITAND, 6, EW_PROMOTE_KEEP,
                           EW_OUT_CASTABLE};
    return ew_pair_phase1(&c, ws, ex);
}

aclnnStatus aclnnBitwiseAndScalarGetWorkspaceSize(const aclTensor *self, const aclScalar *other, aclTensor *out,
                                                  uint64_t *workspaceSize, aclOpExecutor **executor) {
    return bitand_call("aclnnBitwiseAndScalarGetWorkspaceSize", "BitwiseAndScalar", self, NULL, other, out, 0,
                       workspaceSize, executor);
}

aclnnStatus aclnnInplaceBitwiseAndScalarGetWorkspaceSize(const aclTensor *selfRef, const aclScalar *other,
                                                         uint64_t *workspaceSize, aclOpExecutor **executor) {
    return bitand_call("aclnnInplaceBitwiseAndScalarGetWorkspaceSize", "InplaceBitwiseAndScalar", selfRef, NULL, other,
                       selfRef, 1, workspaceSize, executor);
}

aclnnStatus aclnnBitwiseAndTensorGetWorkspaceSize(const aclTensor *self, const aclTensor *other, aclTensor *out,
                                                  uint64_t *workspaceSize, aclOpExecutor **executor) {
    return bitand_call("aclnnBitwiseAndTensorGetWorkspaceSize", "BitwiseAndTensor", self, other, NULL, out, 0,
                       workspaceSize, executor);
}

aclnnStatus aclnnInplaceBitwiseAndTensorGetWorkspaceSize(const aclTensor *selfRef, const aclTensor *other,
                                                         uint64_t *workspaceSize, aclOpExecutor **executor) {
    return bitand_call("aclnnInplaceBitwiseAndTensorGetWorkspaceSize", "InplaceBitwiseAndTensor", selfRef, other, NULL,
                       selfRef, 1, workspaceSize, executor);
}

EW_DEFINE_PHASE2(aclnnBitwiseAndScalar)
EW_DEFINE_PHASE2(aclnnInplaceBitwiseAndScalar)
EW_DEFINE_PHASE2(aclnnBitwiseAndTensor)
EW_DEFINE_PHASE2(aclnnInplaceBitwiseAndTensor)
