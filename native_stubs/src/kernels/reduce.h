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
 *
 * Reductions of a whole line (any_all, moments, prod, vector_norm): each output position's line is loaded
 * (cast to the compute dtype) and reduced at once --
 *   ANY / ALL: exact (a value is true when != 0; NaN is true); BOOL result. Empty: false / true.
 *   PROD: floats multiplied in double and rounded once to the compute dtype (class c: the NPU multiplies
 *     in fp32, so a product whose partial products leave the fp32 range may differ); integers wrap.
 *     Empty: 1.
 *   LOGSUMEXP: m + log(sum exp(x - m)) in double, m the line's maximum (0 when it is infinite, as the
 *     vendor's op_api masks it), rounded once. Empty: -inf.
 *   VAR: the mean, then sum (x - mean)^2 / (n - correction) in double (two passes), rounded once; when
 *     n <= correction: NaN for n <= 1, else inf (the vendor's fills); std = its square root (before the
 *     rounding); with_mean: the mean goes to output 1 as well.
 *   NORM: p-norm of the line in double, rounded once: p = 0 counts the non-zeros, inf / -inf the
 *     largest / smallest |x|, otherwise (sum |x|^p)^(1/p) (p = 1, 2 without pow).
 */
#ifndef PYACLNN_RED_ENGINE_H
#define PYACLNN_RED_ENGINE_H

#include "kernels/view.h"

typedef enum { RED_SUM = 0, RED_MEAN, RED_MAX, RED_MIN, RED_ANY, RED_ALL, RED_PROD, RED_LOGSUMEXP, RED_VAR,
               RED_NORM } red_op;

typedef struct {
    red_op op;
    aclDataType compute;                      /* dtype the values are cast to before reducing        */
    int reduce[PYACLNN_STUB_MAX_DIMS];        /* 1 for each of self's dims that is reduced           */
    int values_out;                           /* output index of the values (-1: none)               */
    int index_out;                            /* output index of the arg indices (-1: none)          */
    int empty_fill_nan;                       /* empty input: values are NaN (Mean) instead of 0     */
    double attr;                              /* VAR: the correction; NORM: p                        */
    int take_sqrt;                            /* VAR: the standard deviation                         */
    int with_mean;                            /* VAR: output 1 takes the mean                        */
    int skip_nan;                             /* SUM over floats: NaN elements count as 0 (nansum)   */
} red_plan;

void red_kernel(const pyaclnn_stub_launch *launch);

#endif
