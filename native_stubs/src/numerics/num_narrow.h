/*
 * One rounding engine for every IEEE-like narrow float (fp16, bf16, fp8, fp4): static inline so
 * each format and each round mode compiles to its own branch-light loop. Private to numerics/.
 */
#ifndef PYACLNN_NUM_NARROW_H
#define PYACLNN_NUM_NARROW_H
#include <stdint.h>

#include "num_bits.h"
#include "numerics.h"

/* A narrow format: sign bit on top of the magnitude code. Codes above max_code are inf/NaN. */
typedef struct num_narrow_fmt {
    int man_bits;      /* explicit mantissa bits M */
    int emin;          /* unbiased exponent of the smallest normal (1 - bias) */
    int sign_shift;    /* bit position of the sign: 15, 7 or 3 */
    uint32_t max_code; /* magnitude code of the largest finite value */
    uint32_t inf_code; /* magnitude code of inf; 0 when the format has none */
    uint32_t nan_code; /* magnitude code of the canonical quiet NaN; 0 when the format has none */
} num_narrow_fmt;

/* 1 if the truncated magnitude q must move up by one unit (or to odd), given the dropped bits
 * `rem` and the value of half a unit `half`. `round` is a compile-time constant after inlining. */
NUM_INLINE uint32_t num_round_up(int round, uint32_t sign, uint32_t q, uint32_t rem,
                                  uint32_t half)
{
    /* Plain integer arithmetic, no &-ed comparisons: GCC folds those into 1-bit _Bool
     * operations, which it cannot vectorise. rem < 2^31 always. */
    uint32_t inexact = (0u - rem) >> 31;
    switch (round) {
    case NUM_ROUND:
        return (uint32_t)(rem >= half);
    case NUM_FLOOR:
        return sign & inexact;
    case NUM_CEIL:
        return (sign ^ 1u) & inexact;
    case NUM_TRUNC:
        return 0;
    case NUM_ODD: /* set the last bit when inexact: adding 1 to an even q does exactly that */
        return inexact & ~q & 1u;
    default: /* NUM_RINT: above half, or exactly half with q odd */
        return (uint32_t)(rem + (q & 1u) > half);
    }
}

/* Magnitude code for a finite value that rounded past max_code (or for +-inf). */
NUM_INLINE uint32_t num_overflow_code(const num_narrow_fmt *F, uint32_t sign, int round,
                                         int mode)
{
    uint32_t inf = F->inf_code ? F->inf_code : F->nan_code;
    if ((mode & NUM_SAT) || inf == 0)
        return F->max_code;
    switch (round) { /* IEEE: directed modes overflow to inf only when rounding away from 0 */
    case NUM_TRUNC:
    case NUM_ODD:
        return F->max_code;
    case NUM_FLOOR:
        return sign ? inf : F->max_code;
    case NUM_CEIL:
        return sign ? F->max_code : inf;
    default:
        return inf;
    }
}

/* What the flag bits of a mode decide, worked out once per call: the magnitude codes for
 * overflow (by sign), for +-inf, and the full NaN codes (by sign). Inside array loops these are
 * loop-invariant values, so the per-element engine is a chain of selects that vectorises. */
typedef struct num_narrow_rules {
    uint32_t overflow_pos, overflow_neg, inf_mag, nan_pos, nan_neg;
} num_narrow_rules;

NUM_INLINE num_narrow_rules num_narrow_rules_for(const num_narrow_fmt *F, int mode)
{
    int round = mode & NUM_ROUND_MASK;
    uint32_t inf = F->inf_code ? F->inf_code : F->nan_code; /* E4M3FN: inf -> NaN */
    int nan_zero = F->nan_code == 0 || (mode & NUM_NAN_TO_ZERO);
    num_narrow_rules r = {
        num_overflow_code(F, 0, round, mode),
        num_overflow_code(F, 1, round, mode),
        ((mode & NUM_SAT) || inf == 0) ? F->max_code : inf,
        nan_zero ? 0u : F->nan_code,
        nan_zero ? 0u : (1u << F->sign_shift) | F->nan_code,
    };
    return r;
}

/* float32 bits -> narrow code with round mode `round` and the flag rules `R`. Branch-free: every
 * case is computed, then selected. */
NUM_INLINE uint32_t num_narrow_encode(const num_narrow_fmt *F, int round,
                                      num_narrow_rules R, uint32_t x)
{
    uint32_t ovf_pos = R.overflow_pos, ovf_neg = R.overflow_neg, inf_mag = R.inf_mag;
    uint32_t nan_pos = R.nan_pos, nan_neg = R.nan_neg;
    uint32_t sign = x >> 31, ax = x & 0x7FFFFFFFu;
    /* value = m * 2^(e - 23) with the hidden bit in m (fp32 subnormals: e = -126, no hidden bit) */
    uint32_t is_normal = ax >= 0x00800000u;
    int e = (int)(ax >> 23) - 126 - (int)is_normal;
    uint32_t m = (ax & 0x007FFFFFu) | (is_normal << 23);
    /* the target's quantum at this magnitude is 2^(max(e, emin) - M): drop `shift` bits of m */
    int ee = e > F->emin ? e : F->emin;
    int shift = 23 - F->man_bits + (ee - e);
    shift = shift > 31 ? 31 : shift; /* m < 2^24: dropping 31 bits leaves "below half" */
    uint32_t q = m >> shift;
    uint32_t rem = m & ((1u << shift) - 1u);
    q += num_round_up(round, sign, q, rem, 1u << (shift - 1));
    /* exponent field and mantissa add up, so a carry out of the mantissa bumps the exponent */
    uint32_t code = ((uint32_t)(ee - F->emin) << F->man_bits) + q;
    code = num_sel(code > F->max_code, num_sel(sign, ovf_neg, ovf_pos), code);
    code = num_sel(ax == 0x7F800000u, inf_mag, code);
    uint32_t out = (sign << F->sign_shift) | code;
    return num_sel(ax > 0x7F800000u, num_sel(sign, nan_neg, nan_pos), out);
}

/* One conversion with a mode (the scalar API). */
NUM_INLINE uint32_t num_narrow_encode_mode(const num_narrow_fmt *F, uint32_t x, int mode)
{
    num_narrow_rules r = num_narrow_rules_for(F, mode);
    return num_narrow_encode(F, mode & NUM_ROUND_MASK, r, x);
}

/* narrow code -> float32, exact. */
NUM_INLINE float num_narrow_decode(const num_narrow_fmt *F, uint32_t c)
{
    if (F->emin == -126) /* bf16 is the top half of a float32 */
        return num_bits_f32(c << 16);
    uint32_t sign = (c >> F->sign_shift) & 1u;
    uint32_t mag = c & ((1u << F->sign_shift) - 1u);
    uint32_t sbit = sign << 31;
    if (F->inf_code && mag == F->inf_code)
        return num_bits_f32(sbit | 0x7F800000u);
    if (mag > F->max_code) /* NaN codes */
        return num_bits_f32(sbit | 0x7FC00000u);
    uint32_t efield = mag >> F->man_bits;
    uint32_t man = mag & ((1u << F->man_bits) - 1u);
    if (efield == 0) { /* subnormal: man * 2^(emin - M), a normal float32 for these formats */
        float unit = num_bits_f32((uint32_t)(127 + F->emin - F->man_bits) << 23);
        return num_bits_f32(sbit | num_f32_bits((float)man * unit));
    }
    uint32_t exp32 = efield - 1u + (uint32_t)(F->emin + 127);
    return num_bits_f32(sbit | (exp32 << 23) | (man << (23 - F->man_bits)));
}

/* The formats. */
static const num_narrow_fmt NUM_FMT_F16 = {10, -14, 15, 0x7BFFu, 0x7C00u, 0x7E00u};
static const num_narrow_fmt NUM_FMT_BF16 = {7, -126, 15, 0x7F7Fu, 0x7F80u, 0x7FC0u};
static const num_narrow_fmt NUM_FMT_E4M3FN = {3, -6, 7, 0x7Eu, 0, 0x7Fu};
static const num_narrow_fmt NUM_FMT_E5M2 = {2, -14, 7, 0x7Bu, 0x7Cu, 0x7Eu};
static const num_narrow_fmt NUM_FMT_E2M1 = {1, 0, 3, 0x7u, 0, 0};
static const num_narrow_fmt NUM_FMT_E1M2 = {2, 0, 3, 0x7u, 0, 0};

#endif
