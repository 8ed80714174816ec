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

/* ---- along one dimension: torch.gather, scatter (value / src, reduce), index_add, index_fill --------- *
 * A walk over a shape W of as many dims as self (0-d tensors count as shape [1]); at walk position c the
 * index value v (per_element: index[c], index having at least W's extent; else the index flattened, at
 * c[dim], or the plan's own list) addresses self at c with c[dim] replaced by v (negative v counts from
 * the end; out of range: a device fault before anything is written). Gathers move bytes (class a);
 * scatters combine into a copy of self that is then stored to out (so out may be self, in place). */
enum { IDX_SET = 0, IDX_ADD = 1, IDX_MUL = 2 };      /* the vendor's reduce codes (Scatter: none/add/mul) */
enum { IDX_SRC_TENSOR = 0, IDX_SRC_VALUE = 1 };

#define IDX_DIM_LIST_MAX 192                        /* index values held in the plan (IndexFillTensor) */

typedef struct {
    int dim;                               /* self's dim the index addresses (wrapped)             */
    int per_element;                       /* index has the walk's shape (gather / scatter)         */
    int ndim;                              /* walk dims (>= 1)                                      */
    int64_t walk[PYACLNN_STUB_MAX_DIMS];   /* the walk shape                                        */
    int reduce;                            /* IDX_SET / IDX_ADD / IDX_MUL                           */
    int src;                               /* IDX_SRC_TENSOR (the launch's input 2) or IDX_SRC_VALUE */
    ew_value value;                        /* IDX_SRC_VALUE: in self's dtype                        */
    int has_alpha;                         /* ADD: src * alpha first (IndexAdd)                     */
    ew_value alpha;                        /* in the accumulation dtype (FLOAT, DOUBLE or INT64)    */
    int assist;                            /* A2's IndexFillD: out = x * 1 + 0, filled x * 0 + value */
    int64_t n_list;                        /* > 0: the index values are list[] (no index tensor)    */
    int64_t list[IDX_DIM_LIST_MAX];
} idx_dim_plan;

/* Phase-1 size of the plan: without the unused part of list[] (parameter blocks are copied). */
size_t idx_dim_plan_size(const idx_dim_plan *p);

/* Kernel of aclnnGather: outputs[0] (the walk's shape) = inputs[0] (self) at the positions inputs[1] gives. */
void idx_dim_gather_kernel(const pyaclnn_stub_launch *launch);
/* Kernel of the scatters: outputs[0] = inputs[0] (self) with the walk's elements combined in (inputs[1]: the
 * index unless the plan holds a list; the last input: src when plan->src is IDX_SRC_TENSOR). */
void idx_dim_scatter_kernel(const pyaclnn_stub_launch *launch);

/* ---- per-dimension maps: pads, flip, roll, repeat, repeat_interleave, expand --------------------------- *
 * out[o] = self[m_0(o_0), ..., m_k(o_k)]: each out dim d reads self dim self_dim[d] (-1: a new leading dim)
 * through one map; a map may say "no element" (constant padding: the fill value). The backward sums
 * gradOutput into gradInput (self's shape) over the same maps. */
enum {
    IDX_MAP_SAME = 0, IDX_MAP_CONST,       /* CONST: o - a, outside self: fill                            */
    IDX_MAP_REFLECT, IDX_MAP_REPLICATE,    /* o - a reflected (without the edge) / clamped into self      */
    IDX_MAP_FLIP, IDX_MAP_ROLL,            /* n - 1 - o; (o - a) mod n                                     */
    IDX_MAP_MOD,                           /* o mod n (repeat, expand)                                     */
    IDX_MAP_REPEAT,                        /* o / a (repeat_interleave by one count)                       */
    IDX_MAP_COUNTS,                        /* repeat_interleave by a counts tensor (the launch's input 1)  */
};

typedef struct {
    int ndim;                                  /* out's dims                                        */
    int64_t out_shape[PYACLNN_STUB_MAX_DIMS];
    int self_dim[PYACLNN_STUB_MAX_DIMS];       /* -1: a new leading dim                             */
    uint8_t kind[PYACLNN_STUB_MAX_DIMS];
    int64_t a[PYACLNN_STUB_MAX_DIMS];          /* the map's parameter (pad before, shift, count)    */
    int flat;                                  /* self read as 1-D, row-major (Roll without dims)   */
    ew_value fill;                             /* CONST: in out's dtype                             */
    int counts_input;                          /* COUNTS: the launch input holding the counts       */
    int iota;                                  /* out[o] = the source index itself (1-D; no self)   */
} idx_map_plan;

/* Kernel: outputs[0] = inputs[0] through the maps (bytes moved). */
void idx_map_kernel(const pyaclnn_stub_launch *launch);
/* Kernel: outputs[0] (gradInput, self's shape) = sums of inputs[0] (gradOutput) over the maps, in fp32 (DOUBLE in
 * double, integers in int64), gradOutput's elements in row-major order, rounded once. */
void idx_map_backward_kernel(const pyaclnn_stub_launch *launch);

#endif
