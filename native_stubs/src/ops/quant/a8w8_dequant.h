/*
 * The A8W8 steps QuantMatmul (quant_matmul.c) and GroupedMatmul (moe/grouped_matmul_quant.c) share: the cube's
 * int32 accumulation of int8 products and the two dequant paths after it; WeightQuantBatchMatmul's INT8 output
 * (weight_quant_matmul.c) uses the same fixpipe on its fp32 accumulator.
 *
 *   fixpipe (a UINT64 / INT64 scale, aclnnTransQuantParamV2's word: an fp19 scale in bits 13..31, a 9-bit signed
 *     offset at bit 37): (acc + bias) * scale (+ offset for INT8), the exact value rounded once (the fixpipe's
 *     internal rounding is not published);
 *   vector epilogue (a FLOAT / BFLOAT16 scale: AscendDequant, then Mul / Add in fp32): fp32(acc) * scale, * the
 *     per-token scale when given, + a float bias when given, each step rounded to fp32; the caller casts (RINT).
 */
#ifndef PYACLNN_OPS_QUANT_A8W8_DEQUANT_H
#define PYACLNN_OPS_QUANT_A8W8_DEQUANT_H

#include <stdint.h>
#include <string.h>

#include "numerics/numerics.h"

/* sum_q a[q * sa] * w[q * sw] in int32, wrapping as the cube's L0C accumulator */
static inline int32_t a8w8_dot(const int8_t *a, int64_t sa, const int8_t *w, int64_t sw, int64_t k) {
    uint32_t s = 0;
    for (int64_t q = 0; q < k; q++) s += (uint32_t)((int32_t)a[q * sa] * (int32_t)w[q * sw]);
    return (int32_t)s;
}

static inline int32_t a8w8_add_wrap(int32_t a, int32_t b) { return (int32_t)((uint32_t)a + (uint32_t)b); }

static inline float a8w8_fp19(uint64_t word) {
    uint32_t u = (uint32_t)(word & 0xFFFFE000u);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static inline int32_t a8w8_offset9(uint64_t word) {
    int32_t o = (int32_t)(word >> 37 & 0x1FF);
    return o >= 256 ? o - 512 : o;
}

/* fixpipe to a float output: the exact product of the L0C value (int32, or the fp32 of a float matmul) and the word's
 * fp19 scale, rounded to fp32 (the caller narrows to fp16 / bf16) */
static inline float a8w8_fixpipe_float(double acc, uint64_t word) {
    return (float)(acc * (double)a8w8_fp19(word));
}

/* fixpipe to INT8: (acc * scale + offset) rounded to nearest even, saturating; acc the L0C value (int32 or fp32) */
static inline int8_t a8w8_fixpipe_int8(double acc, uint64_t word, double offset) {
    return num_f32_to_int8((float)(acc * (double)a8w8_fp19(word) + offset), NUM_RINT | NUM_SAT);
}

/* the vector epilogue in fp32 on the accumulator as fp32 (an int32 one converted first); pertoken / bias NULL when
 * absent */
static inline float a8w8_vector_dequant(float acc, float scale, const float *pertoken, const float *bias) {
    float f = acc * scale;
    if (pertoken) f = f * *pertoken;
    if (bias) f = f + *bias;
    return f;
}

#endif
