/*
 * The reduction engine (aclnnReduceSum, Mean, Amax, Max, Min, MaxDim, MinDim, ArgMax): over the dims
 * a plan marks, for every position of the kept dims, in row-major order. Inputs may have any strides;
 * results go through the view helpers (tensorview/tv.h) into outputs of any strides. Output positions are
 * spread over threads (ops/common/op_parallel); each sums its own line, so threads never change a result.
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

/* Phase-1 helper: marks the dims (wrapped; an empty list marks all), 161002 with the vendor's messages for
 * a dim out of range or repeated. */
aclnnStatus red_mark_dims(const char *api, const pyaclnn_stub_tensor *self, const int64_t *dims, uint64_t n,
                          red_plan *plan);
/* Phase-1 helper: the reductions' common first checks, in the vendor's order: self, <dims_name>, out,
 * workspaceSize and executor not NULL; then self's and out's descriptors and the dims array. */
aclnnStatus red_read_args(const char *api, const char *dims_name, const aclTensor *self, const aclIntArray *dims,
                          const aclTensor *out, uint64_t *workspace_size, aclOpExecutor **executor,
                          pyaclnn_stub_tensor *s, pyaclnn_stub_tensor *o, const int64_t **dv, uint64_t *nd);
/* Phase-1 helper: 161002 ("Shape of <name> should be ...") unless out has the reduced shape of self
 * (keepdim: reduced dims become 1, else they go). */
aclnnStatus red_check_out_shape(const char *api, const char *name, const pyaclnn_stub_tensor *self,
                                const red_plan *plan, int keepdim, const pyaclnn_stub_tensor *out);

#endif
