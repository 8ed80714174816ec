/*
 * The element loops of the AddRmsNormDynamicQuant kernel (arnq_loops.c): one pass over a row each,
 * every fp32 operation rounded once, written so the compiler vectorises them.
 */
#ifndef PYACLNN_ARNQ_LOOPS_H
#define PYACLNN_ARNQ_LOOPS_H

#include <stdint.h>

/* x = f32(a) + f32(b) and q = x * x (q may be NULL: not wanted), for bf16 or fp16 inputs
 * (`f16_table`: every fp16 code widened). */
void arnq_add_square_bf16(const uint16_t *a, const uint16_t *b, float *x, float *q, int64_t n);
void arnq_add_square_f16(const uint16_t *a, const uint16_t *b, const float *f16_table, float *x, float *q,
                         int64_t n);

/* In place: x = (x * rstd) * gamma, then x = x + beta when beta is not NULL. */
void arnq_normalise(float *x, float rstd, const float *gamma, const float *beta, int64_t n);

/* The normalise step and the maxima of the smooth steps in one pass: y = (x * rstd) * gamma
 * (+ beta when not NULL) into y, and for k < count (1 or 2) m[k] = max(m[k], max |y * s_k| as float
 * bits with the sign cleared) (the ordering of arnq_smooth_absmax; m[] accumulates over calls). */
void arnq_norm_smooth(const float *x, float rstd, const float *gamma, const float *beta, const float *s0,
                      const float *s1, float *y, int count, uint32_t m[2], int64_t n);

/* INT8 y_k from y directly, for k < count: z_k = y * s_k, then q = z_k / f_k (divide, 950) or
 * z_k * f_k (A2), rounded half to even. Only for rows whose quotients are all finite with
 * |q| < 127.5 (then equal to num_f32_to_int8(q, NUM_RINT | NUM_SAT); see int8_direct in
 * arnq_row.c). */
void arnq_int8_from_y(const float *y, const float *s0, const float *s1, float f0, float f1, int8_t *out0,
                      int8_t *out1, int count, int divide, int64_t n);

/* z = y * s (when s is not NULL; else z is not written) and the largest |z| as float bits with the sign
 * cleared. Any NaN makes the result a NaN pattern (> 0x7F800000): |bits| orders like the values,
 * and NaN patterns above infinity (Q7 default, NaN propagates). */
uint32_t arnq_smooth_absmax(const float *y, const float *s, float *z, int64_t n);

/* max |z| skipping NaN (Q7 alternative); NaN when every element is NaN. */
float arnq_absmax_ignore_nan(const float *z, int64_t n);

void arnq_mul_scalar(const float *a, float s, float *out, int64_t n);       /* out = a * s */
void arnq_div_scalar(const float *a, float s, float *out, int64_t n);       /* out = a / s (out may be a) */

/* INT8 quantisation of a row whose quotients are all finite and within [-127.5, 127.5]: q = z * inv
 * (A2) or z / scale (950), then round half to even. Equal, for such quotients, to
 * num_f32_to_int8(q, NUM_RINT | NUM_SAT); rows that may hold NaN or out-of-range quotients go through
 * the numerics library instead (see int8_direct in arnq_row.c). */
void arnq_int8_mul(const float *z, float inv, int8_t *out, int64_t n);
void arnq_int8_div(const float *z, float scale, int8_t *out, int64_t n);

/* FP8 codes of NaN quotients made positive (Q11 default). */
void arnq_fp8_positive_nan(const float *q, uint8_t *codes, int64_t n);

#endif
