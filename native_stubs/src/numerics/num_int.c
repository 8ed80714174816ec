/* float32 -> int32 / int8 / int4 (amp_update_scale_and_add_rms_norm_dynamic_quant.md B.8.3, B.9.3,
 * B.10; AscendC Cast "float to integer" saturation rules). */
#include "num_config.h" /* first: compile options */
#include "num_bits.h"
#include "num_dispatch.h"
#include "num_narrow.h" /* num_round_up */
#include "numerics.h"

/* Saturating: the rounded value clamped to [min, max]; +-inf -> max/min, NaN -> 0. Branch-free
 * 32-bit arithmetic: |x| >= 2^31 saturates before any shift could overflow. */
NUM_INLINE int32_t int_saturate(float f, int round, int bits)
{
    uint32_t x = num_f32_bits(f);
    uint32_t sign = x >> 31, ax = x & 0x7FFFFFFFu;
    uint32_t is_normal = ax >= 0x00800000u;
    int e = (int)(ax >> 23) - 126 - (int)is_normal;         /* fp32 subnormals: -126 */
    uint32_t m = (ax & 0x007FFFFFu) | (is_normal << 23);   /* value = m * 2^(e - 23) */
    int rs = 23 - e;                                       /* bits below the unit */
    rs = rs < 0 ? 0 : rs > 25 ? 25 : rs;                   /* past 24: all below half */
    int ls = e - 23;
    ls = ls < 0 ? 0 : ls > 7 ? 7 : ls;                     /* e <= 30 matters: < 2^31 */
    uint32_t q = m >> rs;
    uint32_t rem = m & ((1u << rs) - 1u);
    uint32_t half = num_sel(rs != 0, (1u << rs) >> 1, 1u); /* exact (rs = 0): never "a tie" */
    uint32_t mag = (q + num_round_up(round, sign, q, rem, half)) << ls;
    uint32_t limit = (1u << (bits - 1)) - 1u + sign;       /* max, or |min| */
    mag = num_sel((uint32_t)(e > 30) | (uint32_t)(mag > limit), limit, mag); /* +-inf too */
    uint32_t v = num_sel(sign, 0u - mag, mag);
    return (int32_t)num_sel(ax > 0x7F800000u, 0u, v);      /* NaN -> 0 */
}

/* Wrapping (no NUM_SAT): the low `bits` bits of the rounded integer, sign-extended; +-inf ->
 * max/min, NaN -> 0. Not a hot path: 64-bit arithmetic keeps it obviously exact. */
NUM_INLINE int32_t int_wrap(float f, int round, int bits)
{
    uint32_t x = num_f32_bits(f);
    uint32_t sign = x >> 31, ax = x & 0x7FFFFFFFu;
    int64_t max = ((int64_t)1 << (bits - 1)) - 1, min = -max - 1;
    if (ax > 0x7F800000u)
        return 0;
    if (ax == 0x7F800000u)
        return (int32_t)(sign ? min : max);
    int is_normal = ax >= 0x00800000u;
    int e = is_normal ? (int)(ax >> 23) - 127 : -126;
    uint64_t m = (ax & 0x007FFFFFu) | ((uint32_t)is_normal << 23);
    uint64_t mag;
    if (e >= 23) {
        mag = e - 23 >= 64 ? 0 : m << (e - 23); /* only the low 64 bits matter */
    } else {
        int rs = 23 - e > 25 ? 25 : 23 - e;
        uint32_t q = (uint32_t)(m >> rs), rem = (uint32_t)m & ((1u << rs) - 1u);
        mag = q + num_round_up(round, sign, q, rem, 1u << (rs - 1));
    }
    uint64_t low = (sign ? (uint64_t)0 - mag : mag) & (((uint64_t)1 << bits) - 1u);
    uint64_t top = (uint64_t)1 << (bits - 1);
    return (int32_t)((int64_t)(low ^ top) - (int64_t)top);
}

typedef struct int_rules {
    int unused; /* NUM_SAT picks the engine; nothing else applies */
} int_rules;

/* The engines in the shape NUM_ARRAY_LOOP calls: fn(x, round, rules). */
NUM_INLINE int32_t int32_sat(float f, int round, int_rules R) { return int_saturate(f, round, 32); }
NUM_INLINE int8_t int8_sat(float f, int round, int_rules R)
{
    return (int8_t)int_saturate(f, round, 8);
}
NUM_INLINE int8_t int4_sat(float f, int round, int_rules R)
{
    return (int8_t)int_saturate(f, round, 4);
}
NUM_INLINE int32_t int32_wrap(float f, int round, int_rules R) { return int_wrap(f, round, 32); }
NUM_INLINE int8_t int8_wrap(float f, int round, int_rules R)
{
    return (int8_t)int_wrap(f, round, 8);
}
NUM_INLINE int8_t int4_wrap(float f, int round, int_rules R)
{
    return (int8_t)int_wrap(f, round, 4);
}

NUM_INLINE int32_t int_narrow(float f, int mode, int bits)
{
    int round = mode & NUM_ROUND_MASK;
    return (mode & NUM_SAT) ? int_saturate(f, round, bits) : int_wrap(f, round, bits);
}

int32_t num_f32_to_int32(float f, int mode) { return int_narrow(f, mode, 32); }
int8_t num_f32_to_int8(float f, int mode) { return (int8_t)int_narrow(f, mode, 8); }
int8_t num_f32_to_int4(float f, int mode) { return (int8_t)int_narrow(f, mode, 4); }

#define INT_ARRAY(sat_fn, wrap_fn, in, out, n, mode)                                            \
    do {                                                                                        \
        int_rules rules = {0};                                                                  \
        if ((mode) & NUM_SAT)                                                                   \
            NUM_ARRAY_LOOP(sat_fn, rules, in, out, n, mode);                                    \
        else                                                                                    \
            NUM_ARRAY_LOOP(wrap_fn, rules, in, out, n, mode);                                   \
    } while (0)

NUM_ARRAY_BODY(num_f32_to_int32_n, int32_t)
{
    INT_ARRAY(int32_sat, int32_wrap, in, out, n, mode);
}
NUM_ARRAY_DISPATCH(num_f32_to_int32_n, int32_t)

NUM_ARRAY_BODY(num_f32_to_int8_n, int8_t)
{
    INT_ARRAY(int8_sat, int8_wrap, in, out, n, mode);
}
NUM_ARRAY_DISPATCH(num_f32_to_int8_n, int8_t)

NUM_ARRAY_BODY(num_f32_to_int4_n, int8_t)
{
    INT_ARRAY(int4_sat, int4_wrap, in, out, n, mode);
}
NUM_ARRAY_DISPATCH(num_f32_to_int4_n, int8_t)

/* Packed int4, element 2k in the low nibble. */
NUM_INLINE uint8_t int4_sat_pair(const float *p, int round, int_rules R)
{
    return (uint8_t)((int4_sat(p[0], round, R) & 0xF) | ((int4_sat(p[1], round, R) & 0xF) << 4));
}

NUM_INLINE uint8_t int4_wrap_pair(const float *p, int round, int_rules R)
{
    return (uint8_t)((int4_wrap(p[0], round, R) & 0xF) | ((int4_wrap(p[1], round, R) & 0xF) << 4));
}

NUM_INLINE uint8_t int4_sat_one(float f, int round, int_rules R)
{
    return (uint8_t)(int4_sat(f, round, R) & 0xF);
}

NUM_INLINE uint8_t int4_wrap_one(float f, int round, int_rules R)
{
    return (uint8_t)(int4_wrap(f, round, R) & 0xF);
}

NUM_ARRAY_BODY(num_f32_to_int4_packed, uint8_t)
{
    int_rules rules = {0};
    if (mode & NUM_SAT)
        NUM_PACKED_LOOP(int4_sat_pair, int4_sat_one, rules, in, out, n, mode);
    else
        NUM_PACKED_LOOP(int4_wrap_pair, int4_wrap_one, rules, in, out, n, mode);
}
NUM_ARRAY_DISPATCH(num_f32_to_int4_packed, uint8_t)
