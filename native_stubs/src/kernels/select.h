/*
 * Selection and sorting along one dim (aclnnTopk, aclnnSort, aclnnArgsort, aclnnKthvalue, aclnnMedian(Dim)): each line of self along the
 * dim (the tensor seen as [outer, len, inner]) is ranked and the first k of the ranking are written --
 * the values (cast to the values output's dtype when it differs: Sort's values may be wider than self)
 * and their int64 indices along the dim.
 *
 * Order: NaN counts as larger than every number (torch's rule, and the padding value the vendor's sort
 * kernels use: NaN ascending, -inf descending); equal values keep their input order (lower index first),
 * what a stable sort gives (the emulator's order for stable = false too); -0.0 equals 0.0. sorted = false
 * lists the selected elements in their input order. Data moves only: bit-exact (class a).
 */
#ifndef PYACLNN_SEL_SELECT_H
#define PYACLNN_SEL_SELECT_H

#include "kernels/view.h"

typedef struct {
    int64_t k, outer, len, inner;
    int largest, sorted;
    int values_out;     /* output index of the values (-1: none, Argsort) */
    int index_out;      /* output index of the indices (-1: none, Median) */
    int kth;            /* 1: only the k-th of the ranking, one element per line (Kthvalue) */
    int nan_wins;       /* 1: a line holding a NaN gives NaN and its first NaN's index (Median, MedianDim) */
} sel_params;

/* The executor kernel: inputs[0] self, the outputs the params name. */
void sel_kernel(const pyaclnn_stub_launch *launch);

#endif
