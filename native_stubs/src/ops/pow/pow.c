/*
 * aclnnPowTensorScalar, aclnnPowTensorTensor and their in-place forms: out = self ** exponent
 * (hicann/ops-math math/pow/op_api). Floats: libm pow in double, rounded once to fp32 and then to
 * the compute dtype (tolerance class; x ** 2 and other small integer powers come out correctly
 * rounded). Integers: exact, wrapping at the compute dtype's width.
 */
#include "aclnnop/aclnn_pow.h"
#include "aclnnop/aclnn_pow_tensor_tensor.h"
#include "elementwise/ew_check.h"
#include "elementwise/ew_pointwise.h"

static const aclDataType POW[] = {ACL_FLOAT, ACL_INT32,  ACL_INT64, ACL_FLOAT16, ACL_INT8,
                                  ACL_UINT8, ACL_DOUBLE, ACL_INT16, ACL_BOOL,    ACL_BF16};
static const aclDataType POW_INPLACE[] = {ACL_FLOAT, ACL_FLOAT16, ACL_DOUBLE, ACL_BF16};

static aclnnStatus pow_call(const char *api, const char *op_name, const aclTensor *self, const aclTensor *exponent,
                            const aclScalar *exponent_scalar, const aclTensor *out, int inplace, uint64_t *ws,
                            aclOpExecutor **ex) {
    ew_pointwise_call c = {api, op_name, EW_OP_POW, "self", self, "exponent", exponent, exponent_scalar, "out",
                           inplace ? self : out, inplace, inplace ? POW_INPLACE : POW, inplace ? 4 : 10,
                           EW_PROMOTE_KEEP, EW_OUT_CASTABLE};
    return ew_pair_phase1(&c, ws, ex);
}

aclnnStatus aclnnPowTensorScalarGetWorkspaceSize(const aclTensor *self, const aclScalar *exponent, const aclTensor *out,
                                                 uint64_t *workspaceSize, aclOpExecutor **executor) {
    return pow_call("aclnnPowTensorScalarGetWorkspaceSize", "PowTensorScalar", self, NULL, exponent, out, 0,
                    workspaceSize, executor);
}

aclnnStatus aclnnInplacePowTensorScalarGetWorkspaceSize(const aclTensor *self, const aclScalar *exponent,
                                                        uint64_t *workspaceSize, aclOpExecutor **executor) {
    return pow_call("aclnnInplacePowTensorScalarGetWorkspaceSize", "InplacePowTensorScalar", self, NULL, exponent,
                    self, 1, workspaceSize, executor);
}

aclnnStatus aclnnPowTensorTensorGetWorkspaceSize(const aclTensor *self, const aclTensor *exponent, aclTensor *out,
                                                 uint64_t *workspaceSize, aclOpExecutor **executor) {
    return pow_call("aclnnPowTensorTensorGetWorkspaceSize", "PowTensorTensor", self, exponent, NULL, out, 0,
                    workspaceSize, executor);
}

aclnnStatus aclnnInplacePowTensorTensorGetWorkspaceSize(const aclTensor *self, const aclTensor *exponent,
                                                        uint64_t *workspaceSize, aclOpExecutor **executor) {
    return pow_call("aclnnInplacePowTensorTensorGetWorkspaceSize", "InplacePowTensorTensor", self, exponent, NULL,
                    self, 1, workspaceSize, executor);
}

EW_DEFINE_PHASE2(aclnnPowTensorScalar)
EW_DEFINE_PHASE2(aclnnInplacePowTensorScalar)
EW_DEFINE_PHASE2(aclnnPowTensorTensor)
EW_DEFINE_PHASE2(aclnnInplacePowTensorTensor)
