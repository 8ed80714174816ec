/*
 * aclnnBitwiseAndScalar, aclnnBitwiseAndTensor and their in-place forms: out = self & other on
 * integers, logical and on BOOL (hicann/ops-math math/bitwise_and/op_api). Bit-exact.
 */
#include "aclnnop/aclnn_bitwise_and_scalar.h"
#include "aclnnop/aclnn_bitwise_and_tensor.h"
#include "opbase/checks.h"
#include "opbase/pointwise.h"

/* The vendor's list without UINT16 (outside the promotion table the engine implements). */
static const aclDataType BITAND[] = {ACL_INT16, ACL_INT32, ACL_INT64, ACL_INT8, ACL_UINT8, ACL_BOOL};

static aclnnStatus bitand_call(const char *api, const char *op_name, ew_opcode op, const aclTensor *self,
                               const aclTensor *other, const aclScalar *other_scalar, const aclTensor *out, int inplace,
                               uint64_t *ws, aclOpExecutor **ex) {
    ew_pointwise_call c = {api, op_name, op, inplace ? "selfRef" : "self", self, "other", other, other_scalar, "out",
                           inplace ? self : out, inplace, BITAND, 6, EW_PROMOTE_KEEP, EW_OUT_CASTABLE};
    return ew_pair_phase1(&c, ws, ex);
}

EW_TENSOR_SCALAR_FAMILY(BitwiseAnd, bitand_call, EW_OP_BITAND, const aclTensor *, const aclTensor *)
