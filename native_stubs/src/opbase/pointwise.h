/*
 * Phase 1 of the pointwise operators on the elementwise engine (unary math, comparisons, pow,
 * bitwise and, activation backwards), following the vendor's op_api pattern
 * (hicann/ops-math math/<op>/op_api/aclnn_<op>.cpp, hicann/ops-nn activation/...):
 *   1. every pointer argument non-NULL                                         -> 161001
 *   2. in-place forms: broadcast(selfRef, other) must be selfRef's shape        -> 161002
 *   3. self (and other) dtype in the operator's support list                   -> 161002
 *   4. the compute dtype (promotion; integers to FLOAT for float-only kernels)
 *      and the output dtype rule (castable / same dtype / BOOL / a float dtype) -> 161002
 *   5. at most 8 dimensions; shapes broadcast; out has the result's shape       -> 161002
 * Empty inputs give an executor that does nothing.
 */
#ifndef PYACLNN_EW_POINTWISE_H
#define PYACLNN_EW_POINTWISE_H

#include <stddef.h>

#include "aclnn/aclnn_base.h"
#include "opbase/checks.h"
#include "kernels/elementwise.h"

typedef enum {
    EW_PROMOTE_KEEP = 0,          /* compute in self's dtype                                      */
    EW_PROMOTE_INT_TO_FLOAT,      /* integral and BOOL inputs compute in FLOAT (Sqrt, Cos, ...)    */
    EW_PROMOTE_BOOL_INT64_TO_FLOAT, /* only BOOL and INT64 go to FLOAT (Exp)                       */
    EW_PROMOTE_INT_TO_OUT,        /* integral and BOOL inputs compute in out's dtype (Log1p)       */
    EW_PROMOTE_TO_OUT,            /* every input is cast to out's dtype and computed there (LogAddExp) */
} ew_promote_rule;

typedef enum {
    EW_OUT_CASTABLE = 0,          /* the result dtype can cast to out's (op::CanCast)              */
    EW_OUT_SAME_DTYPE,            /* out has self's dtype                                          */
    EW_OUT_FLOAT,                 /* out is FLOAT, FLOAT16, BF16 or DOUBLE, and castable            */
    EW_OUT_BOOL,                  /* out is BOOL                                                   */
    EW_OUT_COMPUTE,               /* out has the compute dtype: self's (float self) or the promoted
                                   * one (Log10: OP_CHECK_DTYPE_NOT_SAME / NOT_MATCH(out, FLOAT))     */
    EW_OUT_ANY,                   /* no rule: the result is cast to out, whatever it is (Atan2)     */
} ew_out_rule;

typedef struct {
    const char *api;              /* "aclnnExpGetWorkspaceSize" ...                                */
    const char *op_name;          /* executor name                                                 */
    ew_opcode op;
    const char *self_name;        /* "self", "selfRef", "input", "gradOutput" ...                  */
    const aclTensor *self;
    const char *other_name;       /* second operand (pair forms): "other", "exponent", "self" ...  */
    const aclTensor *other;       /* tensor second operand, or NULL                                */
    const aclScalar *other_scalar; /* scalar second operand, or NULL                               */
    const char *out_name;         /* "out", "gradInput" ...                                        */
    const aclTensor *out;         /* == self for in-place forms                                    */
    int inplace;
    const aclDataType *dtypes;    /* the support list of self (and other)                          */
    size_t n_dtypes;
    ew_promote_rule promote;
    ew_out_rule out_rule;
} ew_pointwise_call;

/* The pointwise families' data for one operator (an op_def spec: the `spec` of its definition). */
typedef struct {
    ew_opcode op;                 /* the engine's operation (EW_OP_FN: the functions below)       */
    ew_promote_rule promote;      /* compute dtype from the input dtype(s)                        */
    ew_out_rule out;              /* what out's dtype may be                                      */
    ew_fn f;                      /* EW_OP_FN: the element function for float compute dtypes      */
    ew_fn i;                      /* EW_OP_FN: ... for integral and BOOL ones (NULL: none)         */
    int bool_result;              /* EW_OP_FN: the result is BOOL                                 */
} ew_spec;

/* The dtype the spec's result has before the cast to out (BOOL for comparisons ...). */
aclDataType ew_spec_result(const ew_spec *spec, aclDataType compute);

/* One tensor in, one out (Neg, Abs, Exp, Sqrt, Rsqrt, Reciprocal, Cos, Sin, Ceil, IsFinite,
 * Sigmoid, Silu and their in-place forms). */
aclnnStatus ew_unary_phase1(const ew_pointwise_call *call, uint64_t *workspaceSize, aclOpExecutor **executor);

/* self with a tensor (broadcast, torch's promotion) or a scalar (the vendor's scalar promotion):
 * comparisons, PowTensorScalar / PowTensorTensor, BitwiseAnd, SiluBackward, SigmoidBackward. */
aclnnStatus ew_pair_phase1(const ew_pointwise_call *call, uint64_t *workspaceSize, aclOpExecutor **executor);

/* Defines a family of four operators with their phase 2: aclnn<Name>Tensor(self, other, out),
 * aclnn<Name>Scalar(self, other scalar, out), aclnnInplace<Name>Tensor(selfRef, other) and
 * aclnnInplace<Name>Scalar(selfRef, other scalar). Each phase 1 returns
 * dispatch(api, op_name, OP, self, other tensor or NULL, other scalar or NULL, out (selfRef in place),
 * inplace, workspaceSize, executor). SelfRefT / SelfRefScalarT: selfRef's type in the in-place forms, as
 * the vendor's headers declare it (their constness differs). */
#define EW_TENSOR_SCALAR_FAMILY(Name, dispatch, OP, SelfRefT, SelfRefScalarT)                                    \
    aclnnStatus aclnn##Name##TensorGetWorkspaceSize(const aclTensor *self, const aclTensor *other, aclTensor *out, \
                                                    uint64_t *workspaceSize, aclOpExecutor **executor) {         \
        return dispatch("aclnn" #Name "TensorGetWorkspaceSize", #Name "Tensor", OP, self, other, NULL, out, 0,   \
                        workspaceSize, executor);                                                                \
    }                                                                                                            \
    aclnnStatus aclnn##Name##ScalarGetWorkspaceSize(const aclTensor *self, const aclScalar *other, aclTensor *out, \
                                                    uint64_t *workspaceSize, aclOpExecutor **executor) {         \
        return dispatch("aclnn" #Name "ScalarGetWorkspaceSize", #Name "Scalar", OP, self, NULL, other, out, 0,   \
                        workspaceSize, executor);                                                                \
    }                                                                                                            \
    aclnnStatus aclnnInplace##Name##TensorGetWorkspaceSize(SelfRefT selfRef, const aclTensor *other,             \
                                                           uint64_t *workspaceSize, aclOpExecutor **executor) {  \
        return dispatch("aclnnInplace" #Name "TensorGetWorkspaceSize", "Inplace" #Name "Tensor", OP, selfRef,    \
                        other, NULL, selfRef, 1, workspaceSize, executor);                                       \
    }                                                                                                            \
    aclnnStatus aclnnInplace##Name##ScalarGetWorkspaceSize(SelfRefScalarT selfRef, const aclScalar *other,       \
                                                           uint64_t *workspaceSize, aclOpExecutor **executor) {  \
        return dispatch("aclnnInplace" #Name "ScalarGetWorkspaceSize", "Inplace" #Name "Scalar", OP, selfRef,    \
                        NULL, other, selfRef, 1, workspaceSize, executor);                                       \
    }                                                                                                            \
    EW_DEFINE_PHASE2(aclnn##Name##Tensor)                                                                        \
    EW_DEFINE_PHASE2(aclnn##Name##Scalar)                                                                        \
    EW_DEFINE_PHASE2(aclnnInplace##Name##Tensor)                                                                 \
    EW_DEFINE_PHASE2(aclnnInplace##Name##Scalar)

/* The vendor's PromoteTypeScalar: a floating self keeps its dtype; an integral self with a
 * floating scalar computes in FLOAT (the scalar's default dtype); BOOL self promotes with the
 * scalar's dtype; otherwise self's dtype. */
aclDataType ew_scalar_promote(aclDataType self, aclDataType scalar);

#endif
