/*
 * The shared elementwise engine: out = op(in0, in1) over broadcast shapes, any strides and storage
 * offsets, any supported dtypes, spread over host threads. Operators build an ew_plan in phase 1
 * (after validating with ew_check.h) and pass ew_kernel to the executor; the plan is copied into
 * the executor and read at launch, when the tensors' addresses are final.
 *
 * Each element goes: load (its dtype) -> cast to plan.compute (the vendor's promoteType: its
 * op_api casts every input to it first) -> op in plan.compute -> cast to the output dtype (the
 * vendor's closing Cast + ViewCopy). ew_dtype.h describes every cast.
 *
 * Arithmetic in plan.compute, rounded once per vendor step:
 *   float dtypes: each step is computed in double and rounded to the compute dtype. For +, -, *
 *     and / of fp32/fp16/bf16 operands that is exactly the correctly rounded fp32/fp16/bf16
 *     result (double has >= 2p+2 bits, so the two roundings never differ from one), i.e. what
 *     the NPU's fp32 vector unit gives, and for fp16/bf16 what its Cast-to-fp32, compute, Cast
 *     RINT kernels give. DOUBLE is computed in double.
 *   integers: two's complement, wrapping at the compute dtype's width; BOOL: add = or, mul = and.
 *
 * Transcendental ops (exp, cos, sin, sigmoid, silu, rsqrt, pow of floats): libm in double,
 *   rounded once to fp32 and then to the compute dtype (the NPU casts fp16/bf16 to fp32, computes
 *   and casts back). The NPU's own approximations are not published: these are tolerance-class
 *   results (pyaclnn/ops/_fidelity.py states the tolerance the tests check).
 *
 * Inputs that overlap the output with a different layout are copied first (the vendor's
 * Contiguous step does the same), so in-place and aliasing calls never depend on thread order.
 */
#ifndef PYACLNN_EW_ENGINE_H
#define PYACLNN_EW_ENGINE_H

#include <stdint.h>

#include "kernels/dtype.h"
#include "pyaclnn_stub.h"

typedef enum {
    EW_OP_COPY = 0,   /* out = in0 (cast)                                                     */
    EW_OP_FILL,       /* out = plan.scalar                                                    */
    EW_OP_ADD,        /* out = in0 + in1 (alpha: see ew_alpha)                                */
    EW_OP_SUB,        /* out = in0 - in1 (alpha: see ew_alpha; the vendor negates alpha)       */
    EW_OP_MUL,
    EW_OP_DIV,        /* true division, IEEE (x/0 = +-inf, 0/0 = NaN)                          */
    EW_OP_DIV_TRUNC,  /* quotient rounded toward zero                                         */
    EW_OP_DIV_FLOOR,  /* quotient rounded toward -inf                                         */
    EW_OP_RSUB,       /* out = in1 - alpha * in0 (Rsub/Rsubs: SUB with the operands swapped)    */
    /* unary, exact in IEEE arithmetic (one rounding at most) */
    EW_OP_NEG, EW_OP_ABS, EW_OP_CEIL, EW_OP_SQRT, EW_OP_RECIPROCAL,
    /* unary transcendental: fp32 (and fp16/bf16, upcast) via libm in double, rounded once to fp32,
     * then to the compute dtype; DOUBLE in double (see EW_TRANSCENDENTAL below) */
    EW_OP_EXP, EW_OP_RSQRT, EW_OP_COS, EW_OP_SIN, EW_OP_SIGMOID, EW_OP_SILU,
    EW_OP_POW,               /* in0 ** in1 (or ** scalar, or scalar **); integers: exact, wrapping */
    EW_OP_SILU_BACKWARD,     /* in0 (grad) * s * (1 + in1 * (1 - s)), s = sigmoid(in1)           */
    EW_OP_SIGMOID_BACKWARD,  /* in0 (grad) * in1 * (1 - in1), in1 = sigmoid output               */
    /* bool results (ew_result_dtype) */
    EW_OP_ISFINITE,
    EW_OP_EQ, EW_OP_NE, EW_OP_GT, EW_OP_GE, EW_OP_LT, EW_OP_LE,
    EW_OP_BITAND,            /* integers and BOOL                                               */
    EW_OP_WHERE,             /* in0 (cond, read as BOOL) ? in1 : in2                            */
    EW_OP_MASKED_FILL,       /* in1 (mask, read as BOOL) ? scalar : in0                         */
    /* with a scalar operand; fp16/bf16/fp32 step by step in fp32 (the vendor's kernels upcast), then
     * cast to the compute dtype; DOUBLE in double; integers wrap (see ew_engine.c) */
    EW_OP_LERP,              /* in0 + scalar * (in1 - in0)                                       */
    EW_OP_ADDCMUL,           /* in0 + scalar * (in1 * in2)                                       */
    EW_OP_ADDCDIV,           /* in0 + scalar * (in1 / in2)                                       */
    EW_OP_FN,                /* the plan's own functions (ew_fn): operators defined after the engine  */
} ew_opcode;

/* The dtype an op's result has before the final cast to the output: BOOL for comparisons and
 * IsFinite, the compute dtype otherwise (EW_OP_FN: see ew_plan.bool_result). */
aclDataType ew_result_dtype(ew_opcode op, aclDataType compute);

struct ew_plan;
/* One element of an EW_OP_FN operator: x0 (self), x1 (the second operand: a tensor's element or the
 * plan's scalar), x2 (a third input), each already cast to the compute dtype (inputs marked in
 * bool_inputs as BOOL). Returns the result in the compute dtype (BOOL when bool_result), as an
 * ew_value of that dtype's representation (EW_REPR_F: a double holding the value; EW_REPR_I: int64).
 * Operators define one for float compute dtypes (`f`) and, when they take integers, one for integral
 * and BOOL ones (`i`); attributes (slopes, bounds ...) are in the plan's attr[]. */
typedef ew_value ew_fn_type(const struct ew_plan *p, ew_value x0, ew_value x1, ew_value x2);
typedef ew_fn_type *ew_fn;

/* How `alpha` scales the second operand of ADD / SUB (the vendor's op_api picks the kernel). */
typedef enum {
    EW_ALPHA_NONE = 0,    /* alpha == 1: plain Add / Sub                                          */
    EW_ALPHA_AXPY_F32,    /* Axpy kernel: in fp32, t = round32(in1 * alpha), r = round32(in0 + t)
                           * (AscendC's Axpy is Muls then Add), then cast to the compute dtype   */
    EW_ALPHA_MUL_ADD,     /* Mul then Add in the compute dtype, alpha cast to it (also AxpyV2's
                           * integer path: Mul<T> then Add<T>)                                    */
} ew_alpha;

typedef struct ew_plan {
    ew_opcode op;
    aclDataType compute;   /* dtype the op computes in                                        */
    int n_inputs;          /* tensor inputs read: the launch's inputs[0 .. n_inputs-1] (<= 3)  */
    unsigned bool_inputs;  /* bit k: input k is read as BOOL (a condition or mask), not compute */
    int scalar_second;     /* 1: the second operand is `scalar` (Adds, Muls, Divs ...)          */
    int scalar_first;      /* 1: the first operand is `scalar`, input 0 the second (PowScalarTensor) */
    ew_value scalar;       /* second operand / fill value, already in `compute`                */
    ew_alpha alpha_mode;
    ew_value alpha;        /* MUL_ADD: in `compute`; AXPY_F32: alpha.f is the fp32 alpha (signed
                            * as applied: the negated alpha for SUB)                             */
    int raw_copy;          /* COPY between equal dtypes: the bytes are copied unchanged          */
    ew_fn fn;              /* EW_OP_FN: the function for this compute dtype                      */
    int bool_result;       /* EW_OP_FN: fn returns BOOL                                          */
    ew_value vattr[2];     /* EW_OP_FN: scalar attributes as values of the compute dtype (pw_scalars:
                            * exact for 64-bit integers, which attr[] as doubles is not)              */
    double attr[4];        /* EW_OP_FN: the operator's attributes, as doubles (ew_scalar values)   */
    aclDataType in_dtype;  /* EW_OP_FN: the first tensor input's own dtype, before the cast to
                            * compute (kernels that differ for integral inputs: Log2's AI CPU path)  */
} ew_plan;

/* The kernel every elementwise executor runs: outputs[0] = op(inputs ...). */
void ew_kernel(const pyaclnn_stub_launch *launch);

#endif
