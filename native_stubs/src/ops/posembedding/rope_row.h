/*
 * One row of the rotary embedding's fp32 steps, shared by the operators that embed a rotary step of their own
 * (KvRmsNormRopeCache): rotary.c's modes and arithmetic.
 */
#ifndef PYACLNN_ROPE_ROW_H
#define PYACLNN_ROPE_ROW_H

#include <stdint.h>

enum { ROPE_ROW_HALF, ROPE_ROW_INTERLEAVE, ROPE_ROW_QUARTER, ROPE_ROW_INTERLEAVE_HALF };

/* y[d] = x'[d] * c[d] + rot(x)[d] * s[d] over D elements: each product rounded to fp32, then their sum (no cast to
 * the dtype: the caller's). mode: ROPE_ROW_* (RotaryPositionEmbedding's mode numbers). */
void rope_row_f32(int mode, int64_t D, const float *x, const float *c, const float *s, float *y);

#endif
