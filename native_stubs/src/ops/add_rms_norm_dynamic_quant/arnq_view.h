/*
 * A tensor snapshot seen as rows x columns (leading dimensions flattened, last dimension = columns),
 * so the kernel can read and write any strided view a row at a time. The op_api layer of the vendor
 * makes inputs contiguous and ViewCopies results into the user's views; reading and writing the
 * views directly gives the same bytes.
 */
#ifndef PYACLNN_ARNQ_VIEW_H
#define PYACLNN_ARNQ_VIEW_H

#include <stdint.h>

#include "pyaclnn_stub.h"

typedef enum {
    ARNQ_ELEM_BYTES, /* byte-addressed elements of `size` bytes           */
    ARNQ_ELEM_NIBBLE /* 4-bit elements, two per byte, element 2k low nibble */
} arnq_elem_kind;

typedef struct {
    unsigned char *data;    /* storage base                                          */
    int64_t offset;         /* view offset, in elements                              */
    int64_t cols;           /* elements per row (1 when every element is its own row) */
    int64_t col_stride;     /* elements between neighbours in a row                  */
    int lead_ndim;          /* leading dimensions (flattened into the row index)     */
    int64_t lead_shape[PYACLNN_STUB_MAX_DIMS];
    int64_t lead_strides[PYACLNN_STUB_MAX_DIMS];
    int dense;              /* row r starts at offset + r * cols and col_stride == 1  */
    arnq_elem_kind kind;
    int size;               /* bytes per element (ARNQ_ELEM_BYTES)                    */
} arnq_view;

/* rows_as_elements = 1: every element is one row (scale outputs: element r is row r's scale). */
void arnq_view_init(arnq_view *v, const pyaclnn_stub_tensor *t, arnq_elem_kind kind, int size,
                    int rows_as_elements);

/* Element offset of row r's first element. */
int64_t arnq_view_row(const arnq_view *v, int64_t r);

/* Address of element `elem` (ARNQ_ELEM_BYTES views). */
static inline unsigned char *arnq_view_at(const arnq_view *v, int64_t elem) {
    return v->data + elem * v->size;
}

/* 1 if every byte of the view lies in live device memory (an empty view always passes). */
int arnq_view_in_device_memory(const pyaclnn_stub_tensor *t, arnq_elem_kind kind, int size);

#endif
