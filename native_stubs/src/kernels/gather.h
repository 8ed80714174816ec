/*
 * The advanced-indexing core shared by aclnnIndex, aclnnIndexSelect, aclnnEmbedding and
 * aclnnIndexPutImpl (torch's rules, as the vendor's op_api implements them):
 *   self has S dims; slot k < K of the index list is either an integer tensor (INT32/INT64) that
 *   indexes dim k, or "undefined" (an empty tensor: torch_npu passes a shape-[0] tensor for a
 *   missing index). The defined index tensors broadcast together to shape B. The result shape is
 *   self's non-indexed dims with B in place of the indexed ones when these are adjacent, else B
 *   first and then the non-indexed dims (torch's rule). Negative indices count from the end; an
 *   index out of range is a device fault (the NPU's kernel raises an AICore exception).
 * Elements are moved as bytes: bit-exact by construction.
 */
#ifndef PYACLNN_IDX_GATHER_H
#define PYACLNN_IDX_GATHER_H

#include "kernels/view.h"

#define IDX_MAX_SLOTS 8

typedef struct {
    int k;                                /* index slots (<= self's rank, or 1 for a 0-d self)       */
    int defined[IDX_MAX_SLOTS];
    int adjacent;                         /* the defined slots are consecutive                       */
    int first, last;                      /* first and last defined slot                             */
    int64_t bshape[PYACLNN_STUB_MAX_DIMS];/* broadcast shape of the defined indices                  */
    int bndim;
    int64_t out_shape[PYACLNN_STUB_MAX_DIMS];
    int out_ndim;
    int accumulate;                       /* IndexPut: += instead of =                               */
    int input_of[IDX_MAX_SLOTS];          /* launch input holding slot i's index (0: undefined slot) */
    int as_1d;                            /* IndexSelect: a 0-d index counts as shape [1]            */
} idx_plan;

/* The index views of the slots (undefined slots: shape [0]) from a launch's or phase 1's tensors. */
void idx_slot_views(const idx_plan *p, const pyaclnn_stub_tensor *tensors, pyaclnn_stub_tensor *idx);

/* Phase 1: completes the plan (k, input_of, as_1d set by the caller) from self and the operator's tensors
 * (tensors[0] = self, then its inputs as passed to the executor); 161002 with a message if the indices do
 * not broadcast or there are more slots than dims. */
aclnnStatus idx_plan_make(const char *api, const pyaclnn_stub_tensor *tensors, idx_plan *plan);

/* Kernel of aclnnIndex / IndexSelect / Embedding: outputs[0] = inputs[0][inputs[1..k]]. */
void idx_gather_kernel(const pyaclnn_stub_launch *launch);

/* For the kernels: maps output element `lin` (row-major over plan->out_shape) to self's element
 * offset; 0 and a recorded device fault if an index is out of range. */
int idx_self_offset(const idx_plan *p, const pyaclnn_stub_tensor *self, const pyaclnn_stub_tensor *idx, int64_t lin,
                    int64_t *off);

#endif
