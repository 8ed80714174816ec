/*
 * Unary math on the elementwise engine: aclnnNeg, aclnnAbs, aclnnExp, aclnnSqrt, aclnnRsqrt,
 * aclnnReciprocal, aclnnCos, aclnnSin, aclnnCeil, aclnnIsFinite and their in-place forms
 * (hicann/ops-math math/<op>/op_api/aclnn_<op>.cpp). Validation: elementwise/ew_pointwise.h;
 * arithmetic and rounding: elementwise/ew_engine.h. Support lists: the Atlas A2 / Ascend950 rows
 * without the complex dtypes (the engine has no complex elements).
 */
#include "aclnnop/aclnn_abs.h"
#include "aclnnop/aclnn_ceil.h"
#include "aclnnop/aclnn_cos.h"
#include "aclnnop/aclnn_exp.h"
#include "aclnnop/aclnn_isfinite.h"
#include "aclnnop/aclnn_neg.h"
#include "aclnnop/aclnn_reciprocal.h"
#include "aclnnop/aclnn_rsqrt.h"
#include "aclnnop/aclnn_sin.h"
#include "aclnnop/aclnn_sqrt.h"
#include "elementwise/ew_check.h"
#include "elementwise/ew_pointwise.h"

#define N(a) (sizeof a / sizeof a[0])

static const aclDataType NEG[] = {ACL_INT8, ACL_INT32, ACL_INT64, ACL_FLOAT16, ACL_FLOAT, ACL_DOUBLE, ACL_BF16};
static const aclDataType ABS[] = {ACL_DOUBLE, ACL_FLOAT, ACL_FLOAT16, ACL_INT64, ACL_INT32,
                                  ACL_INT16,  ACL_INT8,  ACL_UINT8,   ACL_BOOL,  ACL_BF16};
static const aclDataType EXP[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE, ACL_BOOL, ACL_INT64};
static const aclDataType FLOATS[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE};
/* Sqrt, Rsqrt, Reciprocal, Cos, Sin: integral inputs are cast to FLOAT first. */
static const aclDataType MATH_IN[] = {ACL_FLOAT, ACL_FLOAT16, ACL_DOUBLE, ACL_INT8, ACL_INT16, ACL_INT32,
                                      ACL_INT64, ACL_BOOL,    ACL_UINT8,  ACL_BF16};
static const aclDataType CEIL[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE};
static const aclDataType ISFINITE[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE, ACL_INT8, ACL_INT16, ACL_INT32,
                                       ACL_INT64, ACL_UINT8, ACL_BOOL};

typedef struct {
    ew_opcode op;
    const aclDataType *list;
    size_t n;
    const aclDataType *inplace_list;   /* selfRef's list of the in-place form */
    size_t n_inplace;
    ew_promote_rule promote;
    ew_out_rule out_rule;
} unary_kind;

static aclnnStatus unary(const char *api, const char *op_name, const unary_kind *k, const char *self_name,
                         const aclTensor *self, const aclTensor *out, int inplace, uint64_t *ws, aclOpExecutor **ex) {
    ew_pointwise_call c = {api, op_name, k->op, self_name, self, NULL, NULL, NULL, "out", inplace ? self : out,
                           inplace, inplace ? k->inplace_list : k->list, inplace ? k->n_inplace : k->n,
                           k->promote, k->out_rule};
    return ew_unary_phase1(&c, ws, ex);
}

#define UNARY(Name, kind, self_name)                                                                          \
    aclnnStatus aclnn##Name##GetWorkspaceSize(const aclTensor *self, aclTensor *out, uint64_t *workspaceSize,  \
                                              aclOpExecutor **executor) {                                      \
        return unary("aclnn" #Name "GetWorkspaceSize", #Name, &kind, self_name, self, out, 0, workspaceSize,   \
                     executor);                                                                                \
    }                                                                                                          \
    EW_DEFINE_PHASE2(aclnn##Name)

#define INPLACE(Name, kind, SelfType)                                                                          \
    aclnnStatus aclnnInplace##Name##GetWorkspaceSize(SelfType selfRef, uint64_t *workspaceSize,                \
                                                     aclOpExecutor **executor) {                               \
        return unary("aclnnInplace" #Name "GetWorkspaceSize", "Inplace" #Name, &kind, "selfRef", selfRef, NULL, \
                     1, workspaceSize, executor);                                                              \
    }                                                                                                          \
    EW_DEFINE_PHASE2(aclnnInplace##Name)

static const unary_kind K_NEG = {EW_OP_NEG, NEG, N(NEG), NEG, N(NEG), EW_PROMOTE_KEEP, EW_OUT_CASTABLE};
static const unary_kind K_ABS = {EW_OP_ABS, ABS, N(ABS), ABS, N(ABS), EW_PROMOTE_KEEP, EW_OUT_SAME_DTYPE};
static const unary_kind K_EXP = {EW_OP_EXP, EXP, N(EXP), FLOATS, N(FLOATS), EW_PROMOTE_BOOL_INT64_TO_FLOAT,
                                 EW_OUT_CASTABLE};
static const unary_kind K_SQRT = {EW_OP_SQRT, MATH_IN, N(MATH_IN), FLOATS, N(FLOATS), EW_PROMOTE_INT_TO_FLOAT,
                                  EW_OUT_FLOAT};
static const unary_kind K_RSQRT = {EW_OP_RSQRT, MATH_IN, N(MATH_IN), FLOATS, N(FLOATS), EW_PROMOTE_INT_TO_FLOAT,
                                   EW_OUT_FLOAT};
static const unary_kind K_RECIPROCAL = {EW_OP_RECIPROCAL, MATH_IN, N(MATH_IN), FLOATS, N(FLOATS),
                                        EW_PROMOTE_INT_TO_FLOAT, EW_OUT_FLOAT};
static const unary_kind K_COS = {EW_OP_COS, MATH_IN, N(MATH_IN), FLOATS, N(FLOATS), EW_PROMOTE_INT_TO_FLOAT,
                                 EW_OUT_FLOAT};
static const unary_kind K_SIN = {EW_OP_SIN, MATH_IN, N(MATH_IN), FLOATS, N(FLOATS), EW_PROMOTE_INT_TO_FLOAT,
                                 EW_OUT_FLOAT};
static const unary_kind K_CEIL = {EW_OP_CEIL, CEIL, N(CEIL), CEIL, N(CEIL), EW_PROMOTE_KEEP, EW_OUT_SAME_DTYPE};
static const unary_kind K_ISFINITE = {EW_OP_ISFINITE, ISFINITE, N(ISFINITE), NULL, 0, EW_PROMOTE_KEEP, EW_OUT_BOOL};

UNARY(Neg, K_NEG, "self")
INPLACE(Neg, K_NEG, aclTensor *)
UNARY(Abs, K_ABS, "self")
UNARY(Exp, K_EXP, "self")
INPLACE(Exp, K_EXP, aclTensor *)
UNARY(Sqrt, K_SQRT, "self")
INPLACE(Sqrt, K_SQRT, aclTensor *)
UNARY(Rsqrt, K_RSQRT, "self")
INPLACE(Rsqrt, K_RSQRT, aclTensor *)
UNARY(Reciprocal, K_RECIPROCAL, "self")
INPLACE(Reciprocal, K_RECIPROCAL, const aclTensor *)
UNARY(Cos, K_COS, "input")
INPLACE(Cos, K_COS, aclTensor *)
UNARY(Sin, K_SIN, "self")
INPLACE(Sin, K_SIN, aclTensor *)
UNARY(Ceil, K_CEIL, "self")
INPLACE(Ceil, K_CEIL, aclTensor *)
UNARY(IsFinite, K_ISFINITE, "self")
