/*
 * aclnnNonzeroV2 (index.toml): the coordinates of self's non-zero elements (row-major order), as the columns of
 * an INT64 [rank, count] matrix (hicann/ops-nn index/non_zero/op_api/aclnn_nonzero_v2.cpp; torch_npu's
 * boolean-mask indexing `t[mask]` calls it on the mask).
 *
 * A data-dependent shape, like MaskedSelect: out is allocated as [rank, numel]; the kernel writes
 * the coordinates in the real shape [rank, count], row-major, into out's first rank * count elements
 * (row-major through out's strides: contiguous from its offset for a contiguous out; a strided out
 * gets what the vendor's Contiguous + ViewCopy leaves in it, and no byte outside the view) and
 * reports the shape, and phase 2 waits for the stream and sets that view shape (torch_npu then resizes out
 * to it, keeping the storage). Non-zero: != 0 for integers and BOOL, != 0.0 for floats (NaN counts,
 * -0.0 does not). Exact.
 *
 * aclnnNonzero (nonzero.toml; index/non_zero/op_api/aclnn_nonzero.cpp; torch's nonzero, nonzero(as_tuple=True),
 * where(cond)): the same coordinates as the rows of an INT64 [count, rank] matrix.
 */
#include <stdint.h>

#include "kernels/view.h"
#include "ops_decls.h"

static int is_nonzero(const unsigned char *p, aclDataType dt) {
    ew_value v = ew_load(p, dt);
    return ew_repr_of(dt) == EW_REPR_F ? v.f != 0.0 : v.i != 0;   /* NaN != 0.0 is true */
}

/* The coordinates as the columns of out ([rank, count], NonzeroV2) or as its rows ([count, rank], Nonzero). */
static void nonzero_run(const pyaclnn_stub_launch *launch, int as_rows) {
    const pyaclnn_stub_tensor *self = &launch->inputs[0], *out = &launch->outputs[0];
    size_t isz = ew_itemsize(self->dtype);
    if (!op_view_in_device_memory(self, (int)(8 * isz)) || !op_view_in_device_memory(out, 64)) {
        pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "%s: a view is not in device memory", launch->op_name);
        return;
    }
    int64_t n = pyaclnn_stub_numel(self), rank = self->ndim, count = 0;
    tv_iter it;
    tv_iter_init(&it, self);
    for (int64_t i = 0; i < n; i++, tv_iter_next(&it)) count += is_nonzero(tv_at(self, it.off), self->dtype);
    if (rank * count > pyaclnn_stub_numel(out)) {   /* the NPU would write past out: a memory fault */
        pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "%s: out has %lld elements, fewer than the %lld "
                               "coordinates of the %lld non-zero elements", launch->op_name,
                               (long long)pyaclnn_stub_numel(out), (long long)(rank * count), (long long)count);
        return;
    }
    /* coordinate d of the k-th non-zero is element d * count + k of the result; result element j goes to out's
     * element j in row-major order (through out's strides: the vendor's Contiguous + ViewCopy of a
     * non-contiguous out; for a contiguous out, the first rank * count elements from its offset) */
    int64_t *dst = out->data, k = 0;
    tv_iter_init(&it, self);
    for (int64_t i = 0; i < n; i++, tv_iter_next(&it)) {
        if (!is_nonzero(tv_at(self, it.off), self->dtype)) continue;
        for (int64_t d = 0; d < rank; d++) dst[tv_offset(out, as_rows ? k * rank + d : d * count + k)] = it.idx[d];
        k++;
    }
    if (launch->out_shape != NULL) {
        launch->out_shape->ndim = 2;
        launch->out_shape->dims[as_rows ? 1 : 0] = rank;
        launch->out_shape->dims[as_rows ? 0 : 1] = count;
    }
}

void nonzero_v2_kernel(const pyaclnn_stub_launch *launch) { nonzero_run(launch, 0); }

void nonzero_kernel(const pyaclnn_stub_launch *launch) { nonzero_run(launch, 1); }

/* nonzero_dims self: every dim of self fits in int32 (the kernel's coordinates are int32 internally). The
 * vendor returns an executor that does nothing for an empty self or out (a 0-d self gives out [0, 1], which
 * is empty): out keeps its shape. */
aclnnStatus opc_nonzero_dims(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0);
    for (int64_t d = 0; d < self->ndim; d++) {
        if (self->shape[d] > INT32_MAX) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "self dimension %lld has size %lld, more than "
                                "INT32_MAX", (long long)d, (long long)self->shape[d]);
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    return ACLNN_SUCCESS;
}
