/*
 * GroupedDynamicMxQuant: per-block scale algorithms (spec §4.1-§4.4, generation G2).
 *
 * Every algorithm starts from one statistic of the block, the unsigned maximum of the input's
 * 16-bit patterns with the sign cleared (`xm`): the exponent maximum, the float |x| maximum (with
 * NaN winning, spec §9.1 default) and the bf16 maximum are all monotone functions of it. Each
 * returns the E8M0 code S and the reciprocal scale Rb as bfloat16 bits, computed with the
 * kernel's 16/32-bit integer steps (wrap-arounds included).
 */
#ifndef PYACLNN_GMQ_SCALE_H
#define PYACLNN_GMQ_SCALE_H

#include <stdint.h>

#include "num_inline.h"

#define GMQ_BF16_NAN 0x7F81u          /* the kernel's NaN reciprocal                           */
#define GMQ_BF16_TWO_POW_M127 0x0040u /* 2^-127 (bf16 subnormal): reciprocal of scale 2^127   */
#define GMQ_BF16_EXP_BIAS 0x7F00u     /* 127 << 7                                              */
#define GMQ_BF16_EXP_MASK 0x7F80u

typedef struct {
    uint8_t s;     /* E8M0 code                  */
    uint16_t rb;   /* reciprocal, bfloat16 bits  */
} gmq_scale;

/* Reciprocal of a scale given as a bf16 exponent field `field` (S << 7). The functions below are
 * written as selects (no early returns) so that the per-column loops vectorise. */
NUM_INLINE uint16_t gmq_reciprocal(uint32_t field) {
    uint32_t r = (GMQ_BF16_EXP_BIAS - field) & 0xFFFFu;
    r = field == GMQ_BF16_EXP_BIAS ? GMQ_BF16_TWO_POW_M127 : r;
    return (uint16_t)(field == GMQ_BF16_EXP_MASK ? GMQ_BF16_NAN : r);
}

/* §4.1 scale_alg 0: S = max exponent - emax, 0 when that is <= 0 (and then Rb = 0: the block
 * becomes +-0), 0xFF for Inf/NaN. `exp_field` is the biased float32/bf16 exponent of the max. */
NUM_INLINE gmq_scale gmq_scale_ocp(uint32_t exp_field, uint32_t emax) {
    uint32_t special = exp_field == 255u, small = exp_field <= emax;
    uint32_t shifted = ((exp_field - emax) << 7) & 0xFFFFu;
    uint32_t s = special ? 0xFFu : (small ? 0u : shifted >> 7);
    uint32_t rb = special ? GMQ_BF16_NAN : (small ? 0u : gmq_reciprocal(shifted));
    gmq_scale r = {(uint8_t)s, (uint16_t)rb};
    return r;
}

/* §4.2 scale_alg 1 (subnormal_rule = 1) and scale_alg 2's generic template T0 (0):
 * s = fl32(amax * inv); the exponent is rounded up when the mantissa is non-zero. The exponent is
 * read with a logical shift of all 32 bits, so a negative s (negative dstTypeMax) carries its sign
 * bit into it, as on the NPU. */
NUM_INLINE gmq_scale gmq_scale_cublas(float amax, float inv, int subnormal_rule) {
    uint32_t bits = num_f32_bits(amax * inv);
    uint32_t ex = bits >> 23, man = bits & 0x7FFFFFu;
    uint32_t bump = ((ex > 0) & (ex < 254) & (man > 0)) |
                    ((uint32_t)subnormal_rule & (ex == 0) & (man > 0x400000u));   /* no branches */
    uint32_t e = (bump ? ex + 1 : ex) & 0xFFFFu;
    gmq_scale r = {(uint8_t)(e & 0xFFu), gmq_reciprocal((e << 7) & 0xFFFFu)};
    return r;
}

/* §4.3 scale_alg 2, templates T1-T3 ("dynamic dtype range"): the bf16 max's exponent, bumped
 * when its mantissa exceeds the template's threshold (add = 0x3F / 0x1F / 0x0F). */
NUM_INLINE gmq_scale gmq_scale_dynamic_range(uint32_t xm_bf16, uint32_t emax, uint32_t add) {
    uint32_t ef = xm_bf16 & GMQ_BF16_EXP_MASK, emf = emax << 7;
    uint32_t special = ef == GMQ_BF16_EXP_MASK, zero = ef == 0;
    uint32_t ea = ef < emf ? emf : ((xm_bf16 + add) & GMQ_BF16_EXP_MASK);
    uint32_t sh = (ea - emf) & 0xFFFFu;
    uint32_t rb = sh == GMQ_BF16_EXP_BIAS ? GMQ_BF16_TWO_POW_M127 : (GMQ_BF16_EXP_BIAS - sh) & 0xFFFFu;
    uint32_t s = special ? 0xFFu : (zero ? 0u : (sh >> 7) & 0xFFu);
    rb = special ? GMQ_BF16_NAN : (zero ? 0u : rb);
    gmq_scale r = {(uint8_t)s, (uint16_t)rb};
    return r;
}

/* fp32 -> bf16 bits, round to nearest even (the kernel's fp16 -> bf16 CAST_RINT); NaN stays a
 * NaN (only its exponent field is used). */
NUM_INLINE uint32_t gmq_bf16_rne(uint32_t f) {
    uint32_t rounded = (f + 0x7FFFu + ((f >> 16) & 1u)) >> 16;
    return (f & 0x7FFFFFFFu) > 0x7F800000u ? (f >> 16) | 0x0040u : rounded;
}

#endif
