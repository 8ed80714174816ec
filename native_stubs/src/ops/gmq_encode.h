/*
 * GroupedDynamicMxQuant: the per-element arithmetic of the kernel (spec §4.5-§4.7), written as
 * selects on 32-bit lanes so that the row loops in gmq_rows.c vectorise.
 *
 * These give exactly what numerics.h gives for the same modes (num_f32_to_fp8_*(v, NUM_RINT |
 * NUM_SAT | NUM_NAN_TO_ZERO), num_f32_to_fp4_*(v, mode)), except that +-Inf becomes 0x0 in E2M1
 * as in the kernel's pre-rounding; they are specialised to this op (one format and one round mode
 * per loop, no mode tables) because the generic engine does not vectorise and is about 10x slower
 * per element. tests/test_grouped_dynamic_mx_quant_encode.py checks them against numerics.h value
 * by value (through the test hook pyaclnn_stub_gmq_encode in gmq_rows.c).
 *
 * Selects are written so that every floating-point operation is unconditional: under GCC's
 * default -ftrapping-math a conditional float operation blocks if-conversion and with it
 * vectorisation.
 */
#ifndef PYACLNN_GMQ_ENCODE_H
#define PYACLNN_GMQ_ENCODE_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__)
#define GMQ_INLINE static inline __attribute__((always_inline))
#else
#define GMQ_INLINE static inline
#endif

GMQ_INLINE uint32_t gmq_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

GMQ_INLINE float gmq_float(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* mask ? a : b, with mask all ones or all zeros */
GMQ_INLINE uint32_t gmq_blend(uint32_t mask, uint32_t a, uint32_t b) { return (a & mask) | (b & ~mask); }

/* ---- 16-bit inputs -> float32 bits, exact ------------------------------------------------- */

GMQ_INLINE uint32_t gmq_widen_bf16(uint16_t h) { return (uint32_t)h << 16; }

/* fp16 -> fp32: normals rebias the exponent (+112); subnormals go through an exact float
 * subtraction (2^-14 * (1 + m/1024) - 2^-14 = m * 2^-24); Inf/NaN keep their mantissa. */
GMQ_INLINE uint32_t gmq_widen_f16(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t em = h & 0x7FFFu;
    uint32_t shifted = em << 13;
    uint32_t normal = shifted + (112u << 23);
    uint32_t special = shifted | 0x7F800000u;
    uint32_t subnormal = gmq_bits(gmq_float(shifted | (113u << 23)) - gmq_float(113u << 23));
    uint32_t mag = gmq_blend(0u - (uint32_t)(em < 0x0400u), subnormal, normal);
    return sign | gmq_blend(0u - (uint32_t)(em >= 0x7C00u), special, mag);
}

/* ---- round to nearest even onto a small float grid (FP8, and FP4 under "rint") ---------------- */

/* Normal range: round the float32 mantissa to `man` bits with an integer add (ties to even),
 * then rebias the exponent. Subnormal range: adding 2^k whose ulp is the target's quantum makes
 * the float adder round to that quantum; the bits above 2^k then count quanta. Overflow and Inf
 * saturate to max_code, NaN gives 0; `inf_code` is what Inf gives instead when it is not the
 * saturated value (the kernel's E2M1 path turns +-Inf into 0). */
#define GMQ_RNE_ENCODER(name, man, rebias, min_normal, magic_exp, max_code, sign_shift, inf_to_zero)  \
    GMQ_INLINE uint8_t name(float v) {                                                          \
        uint32_t u = gmq_bits(v);                                                               \
        uint32_t a = u & 0x7FFFFFFFu;                                                           \
        uint32_t sign = (u >> 31) << (sign_shift);                                              \
        uint32_t lsb = (a >> (23 - (man))) & 1u;                                                \
        uint32_t normal = (a + ((1u << (22 - (man))) - 1u) + lsb - ((uint32_t)(rebias) << 23))  \
                          >> (23 - (man));                                                      \
        uint32_t subnormal = gmq_bits(gmq_float(a) + gmq_float((uint32_t)(magic_exp) << 23))    \
                             - ((uint32_t)(magic_exp) << 23);                                   \
        uint32_t mag = gmq_blend(0u - (uint32_t)(a < (uint32_t)(min_normal)), subnormal, normal); \
        mag = mag > (max_code) ? (max_code) : mag;                                              \
        uint32_t zero = (inf_to_zero) ? a >= 0x7F800000u : a > 0x7F800000u;                     \
        return (uint8_t)gmq_blend(0u - zero, 0u, sign | mag);                                   \
    }

/* FP8 (spec §4.6): round to nearest even, saturate to +-max (Inf too), NaN -> 0x00.
 * E4M3FN: bias 7 (rebias 120), min normal 2^-6, quantum 2^-9 (magic 2^14), max 448 = 0x7E. */
GMQ_RNE_ENCODER(gmq_encode_e4m3fn, 3, 120, 0x3C800000u, 141, 0x7Eu, 7, 0)
/* E5M2: bias 15 (rebias 112), min normal 2^-14, quantum 2^-16 (magic 2^7), max 57344 = 0x7B. */
GMQ_RNE_ENCODER(gmq_encode_e5m2, 2, 112, 0x38800000u, 134, 0x7Bu, 7, 0)
/* FP4 under "rint" (the general FP4 encoders below give the same codes, with more work):
 * E2M1: bias 1 (rebias 126), min normal 1, quantum 0.5 (magic 2^22), max 6 = 7, Inf -> 0;
 * E1M2: bias 1, min normal 1, quantum 0.25 (magic 2^21), max 1.75 = 7, Inf -> +-max. */
GMQ_RNE_ENCODER(gmq_encode_e2m1_rint, 1, 126, 0x3F800000u, 149, 0x7u, 3, 1)
GMQ_RNE_ENCODER(gmq_encode_e1m2_rint, 2, 126, 0x3F800000u, 148, 0x7u, 3, 0)

/* ---- FP4 (spec §4.7) ------------------------------------------------------------------------- */

/* Integral rounding of a magnitude 0 <= t <= 8 whose sign is `negative`, as an integer: "rint"
 * half to even, "round" half away from zero, "floor" toward -inf (a negative value's magnitude
 * rounds up). */
enum { GMQ_RINT = 0, GMQ_ROUND = 1, GMQ_FLOOR = 2 };

GMQ_INLINE uint32_t gmq_round_magnitude(float t, uint32_t negative, int mode) {
    int32_t truncated = (int32_t)t;   /* t is small and >= 0: this is truncf, and vectorises */
    uint32_t base = (uint32_t)truncated;
    float whole = (float)truncated;
    switch (mode) {
    case GMQ_ROUND:   /* t - whole is exact */
        return base + (uint32_t)((t - whole) >= 0.5f);
    case GMQ_FLOOR:
        return base + (negative & (uint32_t)(t > whole));
    default:
        return (uint32_t)(int32_t)rintf(t);   /* default FP environment: ties to even */
    }
}

/* E2M1 as the kernel pre-rounds: t = |v| * 2^-k with k = max(E - 127, 0) - 1, so t < 4 holds the
 * value's top two significant bits; the nibble is 2(k + 1) + round(t), saturated to 7. For Inf
 * and NaN the kernel gets t = NaN (it multiplies by the float with exponent field 0, i.e. 0.0),
 * which casts to 0x0; here those lanes compute with 0 and are replaced at the end. */
GMQ_INLINE uint8_t gmq_encode_e2m1(float v, int mode) {
    uint32_t u = gmq_bits(v);
    uint32_t negative = u >> 31;
    uint32_t e = (u >> 23) & 0xFFu;
    uint32_t a = e == 255u ? 0u : u & 0x7FFFFFFFu;
    uint32_t k1 = e > 127u ? e - 127u : 0u;                 /* k + 1, up to 128 */
    uint32_t r = gmq_round_magnitude(gmq_float(a) * gmq_float((128u - k1) << 23), negative, mode);
    uint32_t mag = 2u * k1 + r;                             /* t < 4, r <= 4 */
    mag = mag > 7u ? 7u : mag;
    return (uint8_t)gmq_blend(0u - (uint32_t)(e == 255u), 0u, (negative << 3) | mag);
}

/* E1M2: a uniform grid of quarter steps: nibble = round(4|v|) saturated to 7; NaN -> 0x0,
 * +-Inf -> +-max. |v| > 2 is first clamped to 2 (it saturates either way), which keeps the
 * float -> int conversion in range. */
GMQ_INLINE uint8_t gmq_encode_e1m2(float v, int mode) {
    uint32_t u = gmq_bits(v);
    uint32_t a = u & 0x7FFFFFFFu;
    uint32_t negative = u >> 31;
    uint32_t clamped = a > 0x40000000u ? 0x40000000u : a;
    uint32_t mag = gmq_round_magnitude(gmq_float(clamped) * 4.0f, negative, mode);
    mag = mag > 7u ? 7u : mag;
    return (uint8_t)gmq_blend(0u - (uint32_t)(a > 0x7F800000u), 0u, (negative << 3) | mag);
}

#endif
