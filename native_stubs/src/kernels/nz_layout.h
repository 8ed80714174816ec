/*
 * The FRACTAL_NZ layout, one definition for the operators that move data into it (npu_format_cast) and those that
 * read a weight stored in it (the *WeightNz matmuls). Layout (hicann/ops-math docs/zh/context/data_format.md):
 * an (n, m) matrix of batch bt is stored as (..., ceil(m/c0), ceil(n/n0), n0, c0), element (i, j) at
 * [bt][j / c0][i / n0][i % n0][j % c0]; the padding of the last blocks is part of the storage.
 */
#ifndef PYACLNN_KERNELS_NZ_LAYOUT_H
#define PYACLNN_KERNELS_NZ_LAYOUT_H

#include <stdint.h>

/* The storage index of element (i, j) of matrix bt (n rows, m columns; block c0 x n0). */
static inline int64_t nz_layout_index(int64_t bt, int64_t i, int64_t j, int64_t n, int64_t m, int64_t n0, int64_t c0) {
    int64_t c1 = (m + c0 - 1) / c0, n1 = (n + n0 - 1) / n0;
    return ((bt * c1 + j / c0) * n1 + i / n0) * n0 * c0 + (i % n0) * c0 + j % c0;
}

#endif
