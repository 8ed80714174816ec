/*
 * Comparisons on the elementwise engine: aclnnEq/Ne/Gt/Ge/Lt/Le, Tensor and Scalar forms and their
 * in-place forms (hicann/ops-math math/{equal,not_equal,greater,greater_equal,less,less_equal}/op_api).
 * Both operands are cast to the promoted dtype (torch's table; the vendor's PromoteTypeScalar for
 * scalars), compared there (IEEE: NaN compares unequal to everything), and the BOOL result is cast
 * to out's dtype (in place: selfRef's). Bit-exact by construction.
 */
#include "aclnnop/aclnn_eq_scalar.h"
#include "aclnnop/aclnn_eq_tensor.h"
#include "aclnnop/aclnn_ge_scalar.h"
#include "aclnnop/aclnn_ge_tensor.h"
#include "aclnnop/aclnn_gt_scalar.h"
#include "aclnnop/aclnn_gt_tensor.h"
#include "aclnnop/aclnn_le_scalar.h"
#include "aclnnop/aclnn_le_tensor.h"
#include "aclnnop/aclnn_lt_scalar.h"
#include "aclnnop/aclnn_lt_tensor.h"
#include "aclnnop/aclnn_ne_scalar.h"
#include "aclnnop/aclnn_ne_tensor.h"
#include "elementwise/ew_check.h"
#include "elementwise/ew_pointwise.h"

/* The Atlas A2 / Ascend950 input lists without UINT16/UINT64 (outside the promotion table the
 * engine implements) and the complex dtypes. */
static const aclDataType CMP[] = {ACL_INT8,  ACL_UINT8, ACL_INT16,  ACL_INT32, ACL_INT64,
                                  ACL_FLOAT16, ACL_FLOAT, ACL_DOUBLE, ACL_BOOL, ACL_BF16};
#define N_CMP (sizeof CMP / sizeof CMP[0])

static aclnnStatus compare(const char *api, const char *op_name, ew_opcode op, const aclTensor *self,
                           const aclTensor *other, const aclScalar *other_scalar, const aclTensor *out, int inplace,
                           uint64_t *ws, aclOpExecutor **ex) {
    ew_pointwise_call c = {api, op_name, op, inplace ? "selfRef" : "self", self, "other", other, other_scalar, "out",
                           inplace ? self : out, inplace, CMP, N_CMP, EW_PROMOTE_KEEP, EW_OUT_CASTABLE};
    return ew_pair_phase1(&c, ws, ex);
}

#define COMPARE(Name, OP, SelfRefT, SelfRefScalarT) EW_TENSOR_SCALAR_FAMILY(Name, compare, OP, SelfRefT, SelfRefScalarT)

/* (the vendor's headers differ in the constness of selfRef; the definitions follow them) */
COMPARE(Eq, EW_OP_EQ, const aclTensor *, const aclTensor *)
COMPARE(Ne, EW_OP_NE, aclTensor *, aclTensor *)
COMPARE(Gt, EW_OP_GT, const aclTensor *, aclTensor *)
COMPARE(Ge, EW_OP_GE, aclTensor *, aclTensor *)
COMPARE(Lt, EW_OP_LT, const aclTensor *, const aclTensor *)
COMPARE(Le, EW_OP_LE, aclTensor *, aclTensor *)
