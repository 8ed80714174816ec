/*
 * The same conversions as numerics.h, written as branch-free selects so loops vectorise.
 *
 * numerics.h's engine serves every format and mode through one generic path; it does not
 * vectorise and costs about 10x more per element. The static inline functions here are each
 * specialised to one format and one mode, for operator inner loops (GroupedDynamicMxQuant's,
 * ops/gmq_rows.h). The comment on each says which numerics.h call it equals;
 * tests/test_grouped_dynamic_mx_quant_encode.py checks that value by value (through the hooks in
 * ops/gmq_hooks.c).
 *
 * Two families:
 *  - float32 -> code (num_inl_f32_to_*): exact for every float32, 32-bit lanes.
 *  - bfloat16 times a power of two -> code (num_inl_pow2_*): 16-bit lanes, twice as many per
 *    vector, for the common case of MX quantisation (a bf16 input scaled by a power-of-two
 *    reciprocal). They are exact except in a few ranges they report, and the caller then
 *    recomputes with the first family.
 *
 * Selects are written so that every floating-point operation is unconditional: under GCC's
 * default -ftrapping-math a conditional float operation blocks if-conversion and with it
 * vectorisation. Integer selects use plain ?: or num_sel.
 */
#ifndef PYACLNN_NUM_INLINE_H
#define PYACLNN_NUM_INLINE_H

#include <math.h>
#include <stdint.h>

#include "num_bits.h"
#include "numerics.h"

/* ==== 16-bit inputs -> float32 bits, exact ================================================== */

/* = num_f32_bits(num_bf16_to_f32(h)) */
NUM_INLINE uint32_t num_inl_bf16_to_f32_bits(uint16_t h) { return (uint32_t)h << 16; }

/* = num_f32_bits(num_f16_to_f32(h)). Normals rebias the exponent (+112); subnormals go through an
 * exact float subtraction (2^-14 * (1 + m/1024) - 2^-14 = m * 2^-24); Inf/NaN keep their mantissa. */
NUM_INLINE uint32_t num_inl_f16_to_f32_bits(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t em = h & 0x7FFFu;
    uint32_t shifted = em << 13;
    uint32_t normal = shifted + (112u << 23);
    uint32_t special = shifted | 0x7F800000u;
    uint32_t subnormal = num_f32_bits(num_bits_f32(shifted | (113u << 23)) - num_bits_f32(113u << 23));
    uint32_t mag = num_sel(em < 0x0400u, subnormal, normal);
    return sign | num_sel(em >= 0x7C00u, special, mag);
}

/* ==== float32 -> FP8 / FP4, round to nearest even ============================================ */

/* Normal range: round the float32 mantissa to `man` bits with an integer add (ties to even), then
 * rebias the exponent. Subnormal range: adding 2^k whose ulp is the target's quantum makes the
 * float adder round to that quantum; the bits above 2^k then count quanta. Overflow saturates to
 * max_code; NaN gives 0; +-Inf gives +-max_code, or 0 when `inf_to_zero`. */
#define NUM_INL_RNE_ENCODER(name, man, rebias, min_normal, magic_exp, max_code, sign_shift, inf_to_zero) \
    NUM_INLINE uint8_t name(float v)                                                                \
    {                                                                                               \
        uint32_t u = num_f32_bits(v);                                                               \
        uint32_t a = u & 0x7FFFFFFFu;                                                               \
        uint32_t sign = (u >> 31) << (sign_shift);                                                  \
        uint32_t lsb = (a >> (23 - (man))) & 1u;                                                    \
        uint32_t normal = (a + ((1u << (22 - (man))) - 1u) + lsb - ((uint32_t)(rebias) << 23))      \
                          >> (23 - (man));                                                          \
        uint32_t subnormal = num_f32_bits(num_bits_f32(a) + num_bits_f32((uint32_t)(magic_exp) << 23)) \
                             - ((uint32_t)(magic_exp) << 23);                                       \
        uint32_t mag = num_sel(a < (uint32_t)(min_normal), subnormal, normal);                      \
        mag = mag > (max_code) ? (max_code) : mag;                                                  \
        uint32_t zero = (inf_to_zero) ? a >= 0x7F800000u : a > 0x7F800000u;                         \
        return (uint8_t)num_sel(zero, 0u, sign | mag);                                              \
    }

/* = num_f32_to_fp8_e4m3fn(v, NUM_RINT | NUM_SAT | NUM_NAN_TO_ZERO): bias 7 (rebias 120), min
 * normal 2^-6, quantum 2^-9 (magic 2^14), max 448 = 0x7E. */
NUM_INL_RNE_ENCODER(num_inl_f32_to_fp8_e4m3fn, 3, 120, 0x3C800000u, 141, 0x7Eu, 7, 0)
/* = num_f32_to_fp8_e5m2(v, NUM_RINT | NUM_SAT | NUM_NAN_TO_ZERO): bias 15 (rebias 112), min
 * normal 2^-14, quantum 2^-16 (magic 2^7), max 57344 = 0x7B. */
NUM_INL_RNE_ENCODER(num_inl_f32_to_fp8_e5m2, 2, 112, 0x38800000u, 134, 0x7Bu, 7, 0)
/* = num_f32_to_fp4_e2m1(v, NUM_RINT), except +-Inf -> 0x0 (the MX kernel's E2M1 pre-rounding,
 * see num_inl_f32_to_fp4_e2m1_mx): bias 1 (rebias 126), min normal 1, quantum 0.5 (magic 2^22),
 * max 6 = 7. */
NUM_INL_RNE_ENCODER(num_inl_f32_to_fp4_e2m1_mx_rint, 1, 126, 0x3F800000u, 149, 0x7u, 3, 1)
/* = num_f32_to_fp4_e1m2(v, NUM_RINT): bias 1, min normal 1, quantum 0.25 (magic 2^21),
 * max 1.75 = 7. */
NUM_INL_RNE_ENCODER(num_inl_f32_to_fp4_e1m2_rint, 2, 126, 0x3F800000u, 148, 0x7u, 3, 0)

/* ==== float32 -> FP4 with a round mode ======================================================= */

/* Integral rounding of a magnitude 0 <= t <= 8 whose sign is `negative`, as an integer: NUM_RINT
 * half to even, NUM_ROUND half away from zero, NUM_FLOOR toward -inf (a negative value's magnitude
 * rounds up). `mode` is a constant after inlining. */
NUM_INLINE uint32_t num_inl_round_magnitude(float t, uint32_t negative, int mode)
{
    int32_t truncated = (int32_t)t; /* t is small and >= 0: this is truncf, and vectorises */
    uint32_t base = (uint32_t)truncated;
    float whole = (float)truncated;
    switch (mode) {
    case NUM_ROUND: /* t - whole is exact */
        return base + (uint32_t)((t - whole) >= 0.5f);
    case NUM_FLOOR:
        return base + (negative & (uint32_t)(t > whole));
    default:
        return (uint32_t)(int32_t)rintf(t); /* default FP environment: ties to even */
    }
}

/* = num_f32_to_fp4_e2m1(v, mode) for mode NUM_RINT / NUM_ROUND / NUM_FLOOR, except +-Inf -> 0x0:
 * the MX kernel pre-rounds t = |v| * 2^-k with k = max(E - 127, 0) - 1, so t < 4 holds the value's
 * top two significant bits, and the nibble is 2(k + 1) + round(t), saturated to 7. For Inf and NaN
 * it gets t = NaN (it multiplies by the float with exponent field 0, i.e. 0.0), which casts to
 * 0x0; here those lanes compute with 0 and are replaced at the end. */
NUM_INLINE uint8_t num_inl_f32_to_fp4_e2m1_mx(float v, int mode)
{
    uint32_t u = num_f32_bits(v);
    uint32_t negative = u >> 31;
    uint32_t e = (u >> 23) & 0xFFu;
    uint32_t a = e == 255u ? 0u : u & 0x7FFFFFFFu;
    uint32_t k1 = e > 127u ? e - 127u : 0u; /* k + 1, up to 128 */
    uint32_t r = num_inl_round_magnitude(num_bits_f32(a) * num_bits_f32((128u - k1) << 23), negative, mode);
    uint32_t mag = 2u * k1 + r; /* t < 4, r <= 4 */
    mag = mag > 7u ? 7u : mag;
    return (uint8_t)num_sel(e == 255u, 0u, (negative << 3) | mag);
}

/* = num_f32_to_fp4_e1m2(v, mode) for mode NUM_RINT / NUM_ROUND / NUM_FLOOR: a uniform grid of
 * quarter steps, nibble = round(4|v|) saturated to 7; NaN -> 0x0, +-Inf -> +-max. |v| > 2 is first
 * clamped to 2 (it saturates either way), which keeps the float -> int conversion in range. */
NUM_INLINE uint8_t num_inl_f32_to_fp4_e1m2(float v, int mode)
{
    uint32_t u = num_f32_bits(v);
    uint32_t a = u & 0x7FFFFFFFu;
    uint32_t negative = u >> 31;
    uint32_t clamped = a > 0x40000000u ? 0x40000000u : a;
    uint32_t mag = num_inl_round_magnitude(num_bits_f32(clamped) * 4.0f, negative, mode);
    mag = mag > 7u ? 7u : mag;
    return (uint8_t)num_sel(a > 0x7F800000u, 0u, (negative << 3) | mag);
}

/* ==== bfloat16 x times 2^R -> FP8 / FP4, in 16-bit lanes ====================================== */
/*
 * What they compute: the code of the float32 product num_bf16_to_f32(x) * r for a column factor r
 * (a bf16 pattern), i.e. num_inl_f32_to_fp8_e4m3fn(...), _e5m2, _fp4_e2m1_mx_rint or
 * _fp4_e1m2_rint of it. How: when r = 2^R, the product's bits are x's bits with R added to the
 * exponent field, so the code follows from t = (x & 0x7FFF) + (R - e0 + 1) * 128, the product's
 * magnitude bits with the exponent counted from the format's smallest normal exponent field e0 (in
 * float32 terms): t >= 128 is the normal range, where the code is t rounded to the format's
 * mantissa bits; below it, a few fixed thresholds.
 *
 * Use: once per column, num_inl_pow2_column_<fmt>(r, xmax, &offset) with xmax the largest
 * x & 0x7FFF of the column accepts the column (returns 1) when r is +0 or 2^R and every x of the
 * column stays where the element step is exact: finite, no float32 overflow (E2M1, where the MX
 * kernel gets Inf and code 0), R small enough that a bf16 subnormal x (read here as if normal) still
 * gives code 0. Then per element num_inl_pow2_to_<fmt>(x, offset, ...). FP8 has one more case,
 * decided per element: products with 2^-10 <= |product| < 2^-6 (E4M3FN; 2^-17 ... 2^-14 for E5M2)
 * fall in the subnormal binades, which the element step does not compute; it reports them through
 * `guard` (0xFFFF before the first element of a run, accumulated with min), and after the run
 * num_inl_pow2_exact_<fmt>(guard) says whether every code of the run is exact. Everything else is
 * a rare column (NaN or negative reciprocal, Inf or NaN in the block) for the float32 family.
 *
 * The sign comes from x (every accepted r is positive or +0), the offsets from a per-column array
 * and guard is a min: the loops vectorise in 16-bit lanes.
 */

/* Column factor r (bf16 bits) and the column's largest |x| bits -> offset, for a format whose
 * smallest normal has float32 exponent field e0, with `man` mantissa bits. r = +0: every product is
 * +-0 (t <= a - 32768 < the lowest threshold for xmax < 0x7F00); r = 2^R for R <= e0 - man - 2,
 * including the bf16 subnormal 2^-127 the scale algorithms give. `t_limit`: the largest t allowed
 * (E2M1: below float32 overflow). */
NUM_INLINE int num_inl_pow2_column(uint16_t r, uint16_t xmax, int e0, int man, int32_t t_limit, int16_t *offset)
{
    /* & and num_sel, no && or ?: on conditions: a loop over a tile's columns then vectorises */
    uint32_t field = (r >> 7) & 0xFFu;
    uint32_t zero = r == 0, tiny = r == 0x0040u;
    uint32_t power = (uint32_t)((r & 0x807Fu) == 0) & (uint32_t)(field - 1u <= 253u);
    int32_t R = (int32_t)num_sel(tiny, (uint32_t)-127, field - 127u);
    int32_t off = (int32_t)num_sel(zero, (uint32_t)INT16_MIN, (uint32_t)((R - e0 + 1) * 128));
    *offset = (int16_t)off;
    uint32_t usable = zero | ((tiny | power) & (uint32_t)(R <= e0 - man - 2));
    return (int)(usable & (uint32_t)(xmax < 0x7F00u) & (uint32_t)((int32_t)xmax + off <= t_limit));
}

#define NUM_INL_E0_E4M3FN 121 /* 2^-6  */
#define NUM_INL_E0_E5M2 113   /* 2^-14 */
#define NUM_INL_E0_FP4 127    /* 1.0, E2M1 and E1M2 */

NUM_INLINE int num_inl_pow2_column_fp8_e4m3fn(uint16_t r, uint16_t xmax, int16_t *offset)
{
    return num_inl_pow2_column(r, xmax, NUM_INL_E0_E4M3FN, 3, INT16_MAX, offset);
}
NUM_INLINE int num_inl_pow2_column_fp8_e5m2(uint16_t r, uint16_t xmax, int16_t *offset)
{
    return num_inl_pow2_column(r, xmax, NUM_INL_E0_E5M2, 2, INT16_MAX, offset);
}
/* E2M1: t >= 129 * 128 is a product of 2^128 or more, Inf in float32 */
NUM_INLINE int num_inl_pow2_column_fp4_e2m1(uint16_t r, uint16_t xmax, int16_t *offset)
{
    return num_inl_pow2_column(r, xmax, NUM_INL_E0_FP4, 1, 129 * 128 - 1, offset);
}
/* E1M2 saturates Inf like any overflow */
NUM_INLINE int num_inl_pow2_column_fp4_e1m2(uint16_t r, uint16_t xmax, int16_t *offset)
{
    return num_inl_pow2_column(r, xmax, NUM_INL_E0_FP4, 2, INT16_MAX, offset);
}

/* t, the product's magnitude bits counted from the format's smallest normal (see above). For x in
 * an accepted column it never wraps: |t| < 2^15. */
NUM_INLINE int16_t num_inl_pow2_t(uint16_t x, int16_t offset)
{
    return (int16_t)(uint16_t)((x & 0x7FFFu) + (uint16_t)offset);
}

/* The normal-range code of t >= 0 (t < 0 is passed as 0): t rounded to nearest even onto `man`
 * mantissa bits with an integer add (a carry moves into the exponent), saturated to max_code. The
 * rounding bit is x's, which is t's (offsets are multiples of 128). Written with a 16-bit sum so
 * that GCC keeps the loops in 16-bit lanes. */
NUM_INLINE uint16_t num_inl_pow2_normal(uint16_t x, int16_t t, int man, uint16_t max_code)
{
    uint16_t lsb = (x >> (7 - man)) & 1u;
    uint16_t sum = (uint16_t)((uint16_t)t + ((1u << (6 - man)) - 1u) + lsb);
    uint16_t code = sum >> (7 - man);
    return code < max_code ? code : max_code;
}

/* FP8: below the normal range the code is 0 for |product| < half the smallest subnormal; the
 * subnormal binades between (t in [-128 man, 128)) are reported, not computed. */
#define NUM_INL_POW2_FP8(fmt, man, max_code)                                                        \
    NUM_INLINE uint8_t num_inl_pow2_to_##fmt(uint16_t x, int16_t offset, uint16_t *guard)           \
    {                                                                                               \
        int16_t t = num_inl_pow2_t(x, offset);                                                      \
        /* t < 0 clamps to 0, which rounds to code 0; t in [0, 128) is in the reported window */    \
        uint16_t code = num_inl_pow2_normal(x, t < 0 ? 0 : t, man, max_code);                      \
        uint16_t window = (uint16_t)(t + 128 * (man));                                              \
        *guard = window < *guard ? window : *guard;                                                 \
        return (uint8_t)(code | ((x >> 8) & 0x80u));                                                \
    }                                                                                               \
    NUM_INLINE int num_inl_pow2_exact_##fmt(uint16_t guard) { return guard >= 128u * ((man) + 1u); }

/* = num_inl_f32_to_fp8_e4m3fn(num_bf16_to_f32(x) * r) when exact */
NUM_INL_POW2_FP8(fp8_e4m3fn, 3, 0x7Eu)
/* = num_inl_f32_to_fp8_e5m2(num_bf16_to_f32(x) * r) when exact */
NUM_INL_POW2_FP8(fp8_e5m2, 2, 0x7Bu)

/* FP4, always exact in an accepted column. Below the normal range (|product| < 1) the subnormal
 * codes are counted with thresholds on t, ties going to the even code. E2M1: > 0.25 (t > -128),
 * >= 0.75 (t >= 64). E1M2: > 0.125 (t > -256), >= 0.375 (t >= -64), > 0.625 (t > 32), >= 0.875
 * (t >= 96). Below the normal range the normal rounding (of max(t, 0)) never exceeds that count,
 * above it the count (that of 1.0) never exceeds the rounding: the code is the larger of the two.
 * The nibble is returned in the low 4 bits of a 16-bit value (loops keep 16-bit lanes
 * throughout). Written out per format with literal constants: through a shared helper GCC widened
 * parts of the loop to 32-bit lanes. */
#define NUM_INL_POW2_FP4(fmt, man, subnormal_count)                                                 \
    NUM_INLINE uint16_t num_inl_pow2_to_##fmt(uint16_t x, int16_t offset)                           \
    {                                                                                               \
        int16_t t = num_inl_pow2_t(x, offset);                                                      \
        int16_t tn = t < 0 ? 0 : t;                                                                 \
        uint16_t lsb = (x >> (7 - (man))) & 1u;                                                     \
        uint16_t sum = (uint16_t)((uint16_t)tn + ((1u << (6 - (man))) - 1u) + lsb);                 \
        uint16_t normal = sum >> (7 - (man));                                                       \
        normal = normal < 7u ? normal : 7u;                                                         \
        uint16_t below = (uint16_t)(subnormal_count);                                               \
        uint16_t code = normal > below ? normal : below;                                            \
        return (uint16_t)(code | ((x >> 12) & 0x8u));                                               \
    }

/* = num_inl_f32_to_fp4_e2m1_mx_rint(num_bf16_to_f32(x) * r) in an accepted column */
NUM_INL_POW2_FP4(fp4_e2m1, 1, (t > -128) + (t >= 64))
/* = num_inl_f32_to_fp4_e1m2_rint(num_bf16_to_f32(x) * r) in an accepted column */
NUM_INL_POW2_FP4(fp4_e1m2, 2, (t > -256) + (t >= -64) + (t > 32) + (t >= 96))

#endif
