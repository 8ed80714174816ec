/*
 * Tensor-view helpers shared by the non-elementwise families (indexing, matmul, reductions, softmax,
 * shape ops): walking a strided view in row-major order, moving whole views to and from contiguous
 * host buffers (bytes, or values widened to double), the kernel-side memory checks, and executor
 * creation for a kernel with its own parameter block. Element conversions are the elementwise
 * engine's (elementwise/ew_dtype.h: the NPU's Cast rules), so every family rounds the same way.
 */
#ifndef PYACLNN_TV_H
#define PYACLNN_TV_H

#include <stddef.h>
#include <stdint.h>

#include "aclnn/aclnn_base.h"
#include "elementwise/ew_dtype.h"
#include "op_common.h"

/* Row-major walk over a view: `off` is the current element's offset (elements, from the storage base). */
typedef struct {
    const pyaclnn_stub_tensor *t;
    int64_t idx[PYACLNN_STUB_MAX_DIMS];
    int64_t off;
} tv_iter;

void tv_iter_init(tv_iter *it, const pyaclnn_stub_tensor *t);
void tv_iter_next(tv_iter *it);

/* Offset (elements, from the storage base) of the element at row-major linear index `lin`. */
int64_t tv_offset(const pyaclnn_stub_tensor *t, int64_t lin);

static inline unsigned char *tv_at(const pyaclnn_stub_tensor *t, int64_t off) {
    return (unsigned char *)t->data + off * (int64_t)ew_itemsize(t->dtype);
}

/* Contiguous copies of a whole view (malloc'ed; NULL if out of memory; the caller frees). */
unsigned char *tv_gather_bytes(const pyaclnn_stub_tensor *t);
double *tv_load_double(const pyaclnn_stub_tensor *t);          /* each element widened exactly */
float *tv_load_float(const pyaclnn_stub_tensor *t);            /* float dtypes: fp32 (fp16/bf16 exact) */
/* Writes contiguous bytes / values into the view (values rounded to its dtype with the NPU's Cast). */
void tv_scatter_bytes(const pyaclnn_stub_tensor *t, const unsigned char *src);
void tv_store_double(const pyaclnn_stub_tensor *t, const double *src);
void tv_store_float(const pyaclnn_stub_tensor *t, const float *src);

/* Kernel side: 1 if every present input and output view lies in device memory; otherwise records a
 * device fault naming the operator and returns 0 (the kernel must then write nothing). */
int tv_launch_views_ok(const pyaclnn_stub_launch *launch);
/* Kernel side: records "out of host memory" for the operator. */
void tv_fail_oom(const pyaclnn_stub_launch *launch);

/* Creates the executor running `kernel` (NULL: a launch that does nothing) with a copy of `params`,
 * reports workspace 0 and hands it out; 561101 if out of memory. */
aclnnStatus tv_make_executor(const char *api, const char *op_name, pyaclnn_stub_kernel_fn kernel, const void *params,
                             size_t params_size, const aclTensor *const *inputs, size_t n_inputs,
                             const aclTensor *const *outputs, size_t n_outputs, uint64_t *workspaceSize,
                             aclOpExecutor **executor);

/* Phase-1 helpers. */
/* 161001 naming the first NULL pointer of (names[i], ptrs[i]), then workspaceSize/executor. */
aclnnStatus tv_check_not_null(const char *api, const char *const *names, const void *const *ptrs, size_t n,
                              const uint64_t *workspaceSize, aclOpExecutor *const *executor);
/* Snapshot of an aclTensorList's elements (at most `cap`): 161001 if NULL or an element is NULL, 161002 if
 * not a live list / element / more than cap elements. */
aclnnStatus tv_tensor_list_arg(const char *api, const char *name, const aclTensorList *l, size_t cap,
                               const aclTensor **items, pyaclnn_stub_tensor *snaps, size_t *n);
/* An aclIntArray's values (NULL -> n = 0 when allow_null, else 161001; not live -> 161002). */
aclnnStatus tv_int_array_arg(const char *api, const char *name, const aclIntArray *a, int allow_null,
                             const int64_t **values, uint64_t *n);
/* dim wrapped into [0, rank) (rank 0 counts as 1, as torch's maybe_wrap_dim); 161002 with the vendor's
 * message if out of range. */
aclnnStatus tv_wrap_dim(const char *api, const char *name, int64_t dim, int64_t rank, int64_t *wrapped);
/* "[2, 3]" */
const char *tv_shape_text(const int64_t *shape, int64_t ndim, char *buf, size_t size);
/* 161002 unless the two dtypes are equal ("<a> dtype X should be the same as <b> dtype Y"). */
aclnnStatus tv_check_same_dtype(const char *api, const char *na, aclDataType a, const char *nb, aclDataType b);

#endif
