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
 * Inputs that overlap the output with a different layout are copied first (the vendor's
 * Contiguous step does the same), so in-place and aliasing calls never depend on thread order.
 */
#ifndef PYACLNN_EW_ENGINE_H
#define PYACLNN_EW_ENGINE_H

#include <stdint.h>

#include "elementwise/ew_dtype.h"
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
} ew_opcode;

/* How `alpha` scales the second operand of ADD / SUB (the vendor's op_api picks the kernel). */
typedef enum {
    EW_ALPHA_NONE = 0,    /* alpha == 1: plain Add / Sub                                          */
    EW_ALPHA_AXPY_F32,    /* Axpy kernel: in fp32, t = round32(in1 * alpha), r = round32(in0 + t)
                           * (AscendC's Axpy is Muls then Add), then cast to the compute dtype   */
    EW_ALPHA_MUL_ADD,     /* Mul then Add in the compute dtype, alpha cast to it (also AxpyV2's
                           * integer path: Mul<T> then Add<T>)                                    */
} ew_alpha;

typedef struct {
    ew_opcode op;
    aclDataType compute;   /* dtype the op computes in                                        */
    int n_inputs;          /* tensor inputs read: the launch's inputs[0 .. n_inputs-1]         */
    int scalar_second;     /* 1: the second operand is `scalar` (Adds, Muls, Divs ...)          */
    ew_value scalar;       /* second operand / fill value, already in `compute`                */
    ew_alpha alpha_mode;
    ew_value alpha;        /* MUL_ADD: in `compute`; AXPY_F32: alpha.f is the fp32 alpha (signed
                            * as applied: the negated alpha for SUB)                             */
    int raw_copy;          /* COPY between equal dtypes: the bytes are copied unchanged          */
} ew_plan;

/* The kernel every elementwise executor runs: outputs[0] = op(inputs ...). */
void ew_kernel(const pyaclnn_stub_launch *launch);

#endif
