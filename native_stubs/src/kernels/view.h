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
#include "kernels/dtype.h"
#include "kernels/device.h"

/* Row-major walk over a view: `off` is the current element's offset (elements, from the storage base). */
typedef struct {
    const pyaclnn_stub_tensor *t;
    int64_t idx[PYACLNN_STUB_MAX_DIMS];
    int64_t off;
} tv_iter;

void tv_iter_init(tv_iter *it, const pyaclnn_stub_tensor *t);
void tv_iter_next(tv_iter *it);

/* Strides of t (elements) as a view of a broadcast shape of ndim dims (torch's rules): 0 along the
 * leading dims t lacks and along its dims of size 1. */
void tv_broadcast_strides(const pyaclnn_stub_tensor *t, int64_t ndim, int64_t *strides);

/* Row-major walk of two views over their broadcast shape: off[k] is operand k's current element offset
 * (elements, from its storage base). */
typedef struct {
    int64_t ndim;
    const int64_t *shape;                    /* the broadcast shape (the caller's, kept during the walk) */
    int64_t idx[PYACLNN_STUB_MAX_DIMS];
    int64_t st[2][PYACLNN_STUB_MAX_DIMS];
    int64_t off[2];
} tv_bcast2;

/* Starts the walk of a and b over shape[0..ndim) at element 0; returns the number of elements. */
int64_t tv_bcast2_init(tv_bcast2 *it, const pyaclnn_stub_tensor *a, const pyaclnn_stub_tensor *b,
                       const int64_t *shape, int64_t ndim);
void tv_bcast2_next(tv_bcast2 *it);

/* The product of shape[from..to) (dims of one tensor); 0 when one of them is 0, without multiplying the
 * others: a tensor with a 0-size dim may have other dims whose product does not fit in int64
 * (aclCreateTensor only bounds the running product from the first dim, which the 0 ends). Any product
 * of dims of a non-empty tensor fits (it divides the element count). */
int64_t tv_dims_product(const int64_t *shape, int64_t from, int64_t to);

/* Offset (elements, from the storage base) of the element at row-major linear index `lin`. */
int64_t tv_offset(const pyaclnn_stub_tensor *t, int64_t lin);

static inline unsigned char *tv_at(const pyaclnn_stub_tensor *t, int64_t off) {
    return (unsigned char *)t->data + off * (int64_t)ew_itemsize(t->dtype);
}

/* malloc(n * size + 1) (the extra byte: never malloc(0)); NULL if n is negative, if n * size + 1 does not
 * fit in size_t, or if memory is short. Kernels size their host buffers with it: a 0-stride view may have
 * up to INT64_MAX / itemsize elements, whose copy in a wider type (doubles, ew_values) no size_t counts. */
void *tv_alloc(int64_t n, size_t size);

/* Contiguous copies of a whole view (tv_alloc'ed; NULL if out of memory; the caller frees). */
unsigned char *tv_gather_bytes(const pyaclnn_stub_tensor *t);
double *tv_load_double(const pyaclnn_stub_tensor *t);          /* each element widened exactly */
float *tv_load_float(const pyaclnn_stub_tensor *t);            /* float dtypes: fp32 (fp16/bf16 exact) */
/* t's elements as fp32, read as a view of the broadcast shape[0..ndim) (torch's rules: t's dims align right,
 * size-1 dims repeat), row-major; t must broadcast to it. */
float *tv_load_float_as(const pyaclnn_stub_tensor *t, const int64_t *shape, int64_t ndim);
/* Writes contiguous bytes / values into the view (values rounded to its dtype with the NPU's Cast). */
void tv_scatter_bytes(const pyaclnn_stub_tensor *t, const unsigned char *src);
void tv_store_double(const pyaclnn_stub_tensor *t, const double *src);
void tv_store_float(const pyaclnn_stub_tensor *t, const float *src);

/* 1 unless the view provably addresses each of its elements at a distinct place (torch's "internal
 * overlap": a size > 1 dimension of stride 0, or strides that interleave). A kernel that writes such
 * an output from several threads would leave whichever write came last: it writes it from one thread,
 * in row-major order, so results never depend on the thread count. */
int tv_may_self_overlap(const pyaclnn_stub_tensor *t);

/* Kernel side: 1 if every present input and output view lies in device memory; otherwise records a
 * device fault naming the operator and returns 0 (the kernel must then write nothing). */
int tv_launch_views_ok(const pyaclnn_stub_launch *launch);
/* Kernel side: records "out of host memory" for the operator. */
void tv_fail_oom(const pyaclnn_stub_launch *launch);

#endif
