/*
 * The FLOAT8 (E4M3FN / E5M2) and HIFLOAT8 steps of the Ascend 950's quantised matmul (QuantBatchMatmulV3's arch35
 * kernels), the float-input counterpart of a8w8_dequant.h:
 *
 *   cube: the 8-bit codes decoded exactly (kernels/dtype), products exact in fp32 (at most 4 x 4 significant bits),
 *     summed in fp32 in k order (the cube's order is not published: class c);
 *   fixpipe on the fp32 L0C: a FLOAT bias is added in the L0C (fp32), then * the fp19 scale of a UINT64 word, the
 *     exact value rounded once (as a8w8_fixpipe_float);
 *   double scale (x1Scale [1], x2Scale [1] FLOAT, no FLOAT bias: qbmm_cube_on_the_fly.h): the kernel folds
 *     fp32(x2Scale * x1Scale) and keeps its high 19 bits (DEQ_SCALE_MUL) as the fixpipe's scale;
 *   vector epilogue (qbmm_mix_online_dynamic.h VFDoDequant): fp32 steps acc * x2Scale, * x1Scale, + bias.
 */
#ifndef PYACLNN_OPS_QUANT_FP8_DEQUANT_H
#define PYACLNN_OPS_QUANT_FP8_DEQUANT_H

#include <stdint.h>
#include <string.h>

#include "ops/quant/a8w8_dequant.h"

/* sum_q a[q * sa] * w[q * sw] in fp32, k order */
static inline float fp8_dot(const float *a, int64_t sa, const float *w, int64_t sw, int64_t k) {
    float s = 0.0f;
    for (int64_t q = 0; q < k; q++) s += a[q * sa] * w[q * sw];
    return s;
}

/* the double-scale mode's fixpipe word: the bits of fp32(x2Scale * x1Scale) (the fixpipe keeps the high 19) */
static inline uint64_t fp8_double_scale_word(float x2_scale, float x1_scale) {
    float f = x2_scale * x1_scale;
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint64_t)u;
}

/* The fixpipe and the vector epilogue on the fp32 accumulator are a8w8_dequant.h's a8w8_fixpipe_float and
 * a8w8_vector_dequant. */

#endif
