/*
 * GroupedDynamicMxQuant: vectorised loops over one column tile (gmq_rows.c).
 */
#ifndef PYACLNN_GMQ_ROWS_H
#define PYACLNN_GMQ_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "gmq_kernel.h"

/* The loops are compiled at -O3 whatever the build type, with clones for AVX-512 (x86-64-v4) and
 * AVX2 next to the baseline x86-64 one, picked at load time. */
#if defined(__x86_64__) && defined(__has_attribute)
#if __has_attribute(target_clones) && !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
#define GMQ_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#endif
#endif
#ifndef GMQ_CLONES
#define GMQ_CLONES
#endif

/* xm[j] = max over the rows of (rows[i][j] & 0x7FFF): the block statistic every scale uses. */
void gmq_rows_absmax(const uint16_t *const *rows, int nrows, size_t w, uint16_t *xm);

/* The E8M0 code s[j] and reciprocal scale recip[j] (as float32) of each column's block. */
void gmq_column_scales(const gmq_params *p, const uint16_t *xm, size_t w, uint8_t *s, float *recip);

/* Quantises w elements of one row: out = FP8 bytes (w of them) or packed FP4 (w / 2, w even),
 * step by step as the kernel does (widen, multiply by the reciprocal in fp32, convert). */
typedef void (*gmq_row_fn)(const uint16_t *x, const float *recip, uint8_t *out, size_t w);
gmq_row_fn gmq_row_encoder(const gmq_params *p);

#endif
