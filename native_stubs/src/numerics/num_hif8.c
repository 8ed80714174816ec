/* float32 <-> HIFLOAT8 (grouped_dynamic_mx_quant.md §5.4; AscendC Cast "float -> hifloat8_t"
 * pseudo-code). Layout after the sign bit: a prefix "dot" field D that says how many exponent
 * bits follow, the exponent in sign-magnitude form with an implicit leading 1, then the mantissa:
 *   D=0000: denormal 2^(M-23), M=1..7     D=0001: Ev=0, 3 mantissa bits
 *   D=001 : |Ev|=1, 3 mantissa bits       D=01  : |Ev|=2..3, 3 mantissa bits
 *   D=10  : |Ev|=4..7, 2 mantissa bits    D=11  : |Ev|=8..15, 1 mantissa bit (0x6F = inf)
 * 0x00 = 0 (no -0), 0x80 = NaN, max finite 0x6E = 32768. */
#include "num_config.h" /* first: compile options */
#include "num_bits.h"
#include "num_dispatch.h"
#include "numerics.h"

#define HIF8_NAN 0x80u
#define HIF8_INF 0x6Fu
#define HIF8_MAX 0x6Eu

/* What the flags decide: the code for overflow / +-inf (0x6F, or 0x6E under SAT) and for NaN. */
typedef struct hif8_rules {
    uint32_t inf, nan;
} hif8_rules;

NUM_INLINE hif8_rules hif8_rules_for(int mode)
{
    hif8_rules r = {(mode & NUM_SAT) ? HIF8_MAX : HIF8_INF,
                    (mode & NUM_NAN_TO_ZERO) ? 0u : HIF8_NAN};
    return r;
}

/* Magnitude code of 2^ev * (1 + mant / 2^bits) for ev in -22..15 (denormals: 2^ev, mant 0). */
NUM_INLINE uint32_t hif8_code(int ev, uint32_t mant)
{
    uint32_t neg = ev < 0;
    uint32_t a = (uint32_t)(ev < 0 ? -ev : ev);
    uint32_t c = 0x60u | (neg << 4) | ((a - 8u) << 1) | mant; /* |ev| 8..15: D=11 */
    c = num_sel(a <= 7, 0x40u | (neg << 4) | ((a - 4u) << 2) | mant, c);
    c = num_sel(a <= 3, 0x20u | (neg << 4) | ((a - 2u) << 3) | mant, c);
    c = num_sel(a == 1, 0x10u | (neg << 3) | mant, c);
    c = num_sel(a == 0, 0x08u | mant, c);
    return num_sel(ev < -15, (uint32_t)(ev + 23), c); /* denormal: M = ev + 23 */
}

/* float32 -> HiF8. Branch-free (every case computed, then selected) so that loops vectorise. */
NUM_INLINE uint8_t hif8_encode(float f, int round, hif8_rules R)
{
    uint32_t x = num_f32_bits(f);
    uint32_t sign7 = (x >> 31) << 7, ax = x & 0x7FFFFFFFu;
    int ev = (int)(ax >> 23) - 127; /* fp32 subnormals: -127, below the range */
    uint32_t m = ax & 0x007FFFFFu;
    uint32_t thr = m & 0x3FFFu; /* HYBRID's threshold: the source's 14 least significant bits */
    uint32_t a = (uint32_t)(ev < 0 ? -ev : ev);

    /* mantissa bits kept: 3 for |ev| <= 3, 2 for 4..7, 1 for 8..15, 0 for denormals (-22..-16) */
    uint32_t bits = num_sel(a <= 7, 2u, 1u);
    bits = num_sel(a <= 3, 3u, bits);
    bits = num_sel(ev < -15, 0u, bits);
    uint32_t drop = 23u - bits;
    uint32_t up = (m >> (drop - 1u)) & 1u; /* ties (and above) away from zero */
    if (round == NUM_HYBRID) {             /* a compile-time constant in the array loops */
        uint32_t frac = (m >> (drop - 14u)) & 0x3FFFu; /* 14 bits from the rounding bit down */
        uint32_t inexact = (m & ((1u << drop) - 1u)) != 0; /* exact values stay (open q. 9) */
        up = num_sel(a >= 4, (uint32_t)(frac >= thr) & inexact, up);
    }
    uint32_t mant = (m >> drop) + up;
    uint32_t carry = mant >> bits; /* rounded up to 2^(ev+1) */
    int ev2 = ev + (int)carry;
    uint32_t code = hif8_code(ev2, num_sel(carry, 0u, mant));
    /* past 2^15, and 1.5 * 2^15 (whose pattern is inf): inf, or 32768 under SAT */
    code = num_sel((uint32_t)(ev2 > 15) | (uint32_t)(code == HIF8_INF), R.inf, code);

    /* [2^-23, 2^-22): half the smallest denormal or more */
    uint32_t at23 = round == NUM_HYBRID ? (uint32_t)((0x2000u | (m >> 10)) >= thr) : 1u;
    code = num_sel(ev == -23, at23, code);
    code = num_sel(ev < -23, 0u, code);
    code = num_sel(ev > 15, R.inf, code); /* includes +-inf */
    code = num_sel(code != 0, code | sign7, 0u); /* no -0 */
    return (uint8_t)num_sel(ax > 0x7F800000u, R.nan, code);
}

uint8_t num_f32_to_hif8(float f, int mode)
{
    hif8_rules r = hif8_rules_for(mode);
    return hif8_encode(f, mode & NUM_ROUND_MASK, r);
}

NUM_ARRAY_BODY(num_f32_to_hif8_n, uint8_t)
{
    hif8_rules rules = hif8_rules_for(mode);
    NUM_ARRAY_LOOP(hif8_encode, rules, in, out, n, mode);
}
NUM_ARRAY_DISPATCH(num_f32_to_hif8_n, uint8_t)

float num_hif8_to_f32(uint8_t c)
{
    uint32_t sbit = (uint32_t)(c >> 7) << 31, mag = c & 0x7Fu;
    if (c == HIF8_NAN)
        return num_bits_f32(0x7FC00000u);
    if (mag == HIF8_INF)
        return num_bits_f32(sbit | 0x7F800000u);
    if (mag == 0)
        return 0.0f;
    if (mag < 0x08u) /* denormal 2^(M-23) */
        return num_bits_f32(sbit | ((mag - 23u + 127u) << 23));
    uint32_t neg, a, bits, mant;
    if (mag >= 0x60u) {
        neg = (mag >> 4) & 1u, a = 8u + ((mag >> 1) & 7u), bits = 1, mant = mag & 1u;
    } else if (mag >= 0x40u) {
        neg = (mag >> 4) & 1u, a = 4u + ((mag >> 2) & 3u), bits = 2, mant = mag & 3u;
    } else if (mag >= 0x20u) {
        neg = (mag >> 4) & 1u, a = 2u + ((mag >> 3) & 1u), bits = 3, mant = mag & 7u;
    } else if (mag >= 0x10u) {
        neg = (mag >> 3) & 1u, a = 1u, bits = 3, mant = mag & 7u;
    } else {
        neg = 0, a = 0, bits = 3, mant = mag & 7u;
    }
    uint32_t exp32 = neg ? 127u - a : 127u + a;
    return num_bits_f32(sbit | (exp32 << 23) | (mant << (23 - bits)));
}
