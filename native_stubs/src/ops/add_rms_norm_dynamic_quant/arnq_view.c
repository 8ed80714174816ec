/* Row views of tensor snapshots (see arnq_view.h). */
#include "arnq_view.h"

#include <string.h>

#include "kernels/device.h"

void arnq_view_init(arnq_view *v, const pyaclnn_stub_tensor *t, arnq_elem_kind kind, int size,
                    int rows_as_elements) {
    memset(v, 0, sizeof *v);
    v->data = t->data;
    v->offset = t->offset;
    v->kind = kind;
    v->size = size;
    int nd = (int)t->ndim;
    if (rows_as_elements || nd == 0) {
        v->cols = 1;
        v->col_stride = 1;
        v->lead_ndim = nd;
    } else {
        v->cols = t->shape[nd - 1];
        v->col_stride = t->strides[nd - 1];
        v->lead_ndim = nd - 1;
    }
    memcpy(v->lead_shape, t->shape, (size_t)v->lead_ndim * sizeof(int64_t));
    memcpy(v->lead_strides, t->strides, (size_t)v->lead_ndim * sizeof(int64_t));

    /* dense: rows back to back, columns adjacent (size-1 dimensions have no say) */
    int dense = v->cols <= 1 || v->col_stride == 1;
    int64_t expected = v->cols;
    for (int k = v->lead_ndim - 1; k >= 0 && dense; k--) {
        if (v->lead_shape[k] != 1 && v->lead_strides[k] != expected) dense = 0;
        expected *= v->lead_shape[k];
    }
    v->dense = dense;
    if (dense) v->col_stride = 1;
}

int64_t arnq_view_row(const arnq_view *v, int64_t r) {
    if (v->dense) return v->offset + r * v->cols;
    int64_t off = v->offset;
    for (int k = v->lead_ndim - 1; k >= 0; k--) {
        int64_t d = v->lead_shape[k];
        off += (r % d) * v->lead_strides[k];
        r /= d;
    }
    return off;
}

int arnq_view_in_device_memory(const pyaclnn_stub_tensor *t, arnq_elem_kind kind, int size) {
    /* Shared, overflow-checked extent test (also refuses data misaligned for its element size). */
    return op_view_in_device_memory(t, kind == ARNQ_ELEM_NIBBLE ? 4 : 8 * size);
}
