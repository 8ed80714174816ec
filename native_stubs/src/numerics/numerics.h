/*
 * Exact number-format conversions used by the operators (one place, exhaustively tested).
 * Internal to libopapi (hidden visibility); tests reach vectorised wrappers exported as
 * pyaclnn_stub_num_* (see numerics_export.c).
 *
 * The first four are the contract operators rely on from day one; the rest (int8/int4, FP8,
 * HiFloat8, FP4, E8M0, packing) are filled in by the number-formats work.
 */
#ifndef PYACLNN_NUMERICS_H
#define PYACLNN_NUMERICS_H
#include <stdint.h>

/* Exact widening. */
float num_f16_to_f32(uint16_t h);
float num_bf16_to_f32(uint16_t b);
/* Round to nearest even; overflow -> +-inf; NaN -> quiet NaN with the sign kept. */
uint16_t num_f32_to_f16(float f);
uint16_t num_f32_to_bf16(float f);

#endif
