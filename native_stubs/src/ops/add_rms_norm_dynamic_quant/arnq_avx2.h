/*
 * AVX2 versions of the AddRmsNormDynamicQuant hot loops (arnq_avx2.c), chosen once per launch when
 * the CPU has AVX2 (PYACLNN_STUB_ARNQ_ISA=generic turns them off). Every value is computed with
 * the same fp32 operations, on the same operands, in the same order as the portable loops
 * (arnq_loops.c, arnq_reduce.c), so results do not depend on which path runs.
 *
 * The big one, arnq_avx2_step, runs pass 3 of a row (INT8 quantisation, which waits for the
 * divider) and pass 1 of the next row (x = x1 + x2, xOut, which waits for memory and the
 * arithmetic units) in one loop, so that each fills the other's idle units; it prefetches the
 * inputs a little ahead. It also runs pass 2 (arnq_row.h).
 */
#ifndef PYACLNN_ARNQ_AVX2_H
#define PYACLNN_ARNQ_AVX2_H

#include <stdint.h>

/* 1 when this build has the AVX2 loops and the CPU runs them (AVX2 and F16C). */
int arnq_avx2_available(void);

/* 1 when the fp16 narrowing of the AVX2 pass 1 is exact now (MXCSR.FTZ clear, num_half_avx2.h). */
int arnq_avx2_f16_exact(void);

/* Columns the step handles per iteration: callers give multiples of it (the rest goes to the
 * portable loops). */
#define ARNQ_AVX2_COLS 32

typedef struct {
    /* pass 2 of row r (m not NULL): y = (x * rstd) * gamma (+ beta) into y, and m[k] = max(m[k],
     * max |y * s_k| as float bits) for k < count (arnq_norm_smooth);
     * or pass 3 of row r (out0 not NULL): out_k = rint(z_k / f_k) (divide) or rint(z_k * f_k),
     * z_k = y * s_k, for k < count; every quotient of the row is finite with |q| < 127.5 (the
     * INT8 rows arnq_int8_from_y takes). */
    const float *x, *gamma, *beta, *s0, *s1;
    float *y;
    float rstd, f0, f1;
    int count, divide;
    int8_t *out0, *out1;
    uint32_t *m;
    /* pass 1 of the next row (a NULL: none): xn = f32(a) + f32(b), q = xn * xn (q NULL: not
     * wanted), xo = xn narrowed with NUM_RINT (num_half_avx2.h); bf16 inputs, or fp16 if half */
    const uint16_t *a, *b;
    float *xn, *q;
    uint16_t *xo;
    int half;
    /* the outputs (out0, out1, xo) are 32-byte aligned and written with streaming stores */
    int stream;
} arnq_avx2_step_args;

/* Columns [0, n) of both jobs; n a multiple of ARNQ_AVX2_COLS. */
void arnq_avx2_step(const arnq_avx2_step_args *s, int64_t n);

/* partials[c] = the 64-lane reduce-sum (adjacent pairs, the Q2 default: arnq_tree64) of lanes
 * a[64c + l]^2 + b[64c + l]^2 (b NULL: a[64c + l]^2 alone), for c < chunks. */
void arnq_avx2_square_trees(const float *a, const float *b, int64_t chunks, float *partials);

#endif
