/*
 * The reduction engine (aclnnReduceSum, Mean, Amax, Max, Min, MaxDim, MinDim, ArgMax): over the dims
 * a plan marks, for every position of the kept dims, in row-major order. Inputs may have any strides;
 * results go through the view helpers (kernels/view.h) into outputs of any strides. Output positions are
 * spread over threads (kernels/parallel.h); each sums its own line, so threads never change a result.
 * A red_plan is also the reduce family's spec type: each definition (src/ops/reduce/reduce.toml) gives
 * the operation and the outputs, and its steps (src/ops/reduce/reduce.c) mark the dims and the compute
 * dtype of the call.
 *
 * Arithmetic (fidelity):
 *   SUM / MEAN over float compute dtypes: the values (cast to the compute dtype first, as the vendor's
 *     op_api does) are summed in double, divided by the count in double (MEAN), and rounded once to
 *     the compute dtype, then cast to out. The NPU sums in fp32 in an unpublished order (tree
 *     reductions over its vector lanes), so results agree to a tolerance, not bit for bit: class (c).
 *   SUM over integer compute dtypes: int64 two's complement, wrapped to the compute dtype (exact).
 *   MAX / MIN / ARGMAX / ARGMIN: exact; NaN wins (propagates) and the first extreme's index is taken, as torch.
 */
#ifndef PYACLNN_RED_ENGINE_H
#define PYACLNN_RED_ENGINE_H

#include "kernels/view.h"

typedef enum { RED_SUM = 0, RED_MEAN, RED_MAX, RED_MIN } red_op;

typedef struct {
    red_op op;
    aclDataType compute;                      /* dtype the values are cast to before reducing        */
    int reduce[PYACLNN_STUB_MAX_DIMS];        /* 1 for each of self's dims that is reduced           */
    int values_out;                           /* output index of the values (-1: none)               */
    int index_out;                            /* output index of the arg indices (-1: none)          */
    int empty_fill_nan;                       /* empty input: values are NaN (Mean) instead of 0     */
} red_plan;

void red_kernel(const pyaclnn_stub_launch *launch);

#endif
