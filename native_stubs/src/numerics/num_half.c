/* float32 <-> fp16 / bf16, exact bit manipulation (no reliance on the host FPU's half support). */
#include "num_config.h" /* first: compile options */
#include "numerics.h"
#include "num_bits.h"
#include "num_dispatch.h"
#include "num_narrow.h"

float num_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1Fu;
    uint32_t man = h & 0x3FFu;
    if (exp == 0x1Fu) /* inf / NaN: keep payload bits */
        return num_bits_f32(sign | 0x7F800000u | (man << 13));
    if (exp != 0)
        return num_bits_f32(sign | ((exp + 112u) << 23) | (man << 13));
    /* zero or subnormal: man * 2^-24 is exact in float32 */
    float v = (float)man * 0x1p-24f;
    return num_bits_f32(sign | num_f32_bits(v));
}

float num_bf16_to_f32(uint16_t b)
{
    return num_bits_f32((uint32_t)b << 16);
}

/* ---- float32 -> fp16 / bf16: the shared rounding engine (num_narrow.h) ---- */

NUM_INLINE uint16_t f16_encode(float f, int round, num_narrow_rules R)
{
    return (uint16_t)num_narrow_encode(&NUM_FMT_F16, round, R, num_f32_bits(f));
}

/* bf16 shares float32's exponent range, so nearest-even is a single add on the bits (0x7FFF plus
 * the bit that becomes the last one); a carry runs into the exponent and, past max, into inf.
 * About twice as fast as the general engine, and RINT is what operators use. */
NUM_INLINE uint16_t bf16_rint_encode(uint32_t x, num_narrow_rules R)
{
    uint32_t sign = x >> 31, ax = x & 0x7FFFFFFFu;
    uint32_t mag = ((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16) & 0x7FFFu;
    uint32_t past_max = num_sel(ax == 0x7F800000u, R.inf_mag,
                                num_sel(sign, R.overflow_neg, R.overflow_pos));
    mag = num_sel(mag > 0x7F7Fu, past_max, mag);
    return (uint16_t)num_sel(ax > 0x7F800000u, num_sel(sign, R.nan_neg, R.nan_pos),
                             (sign << 15) | mag);
}

NUM_INLINE uint16_t bf16_encode(float f, int round, num_narrow_rules R)
{
    if (round == NUM_RINT) /* a compile-time constant in the array loops */
        return bf16_rint_encode(num_f32_bits(f), R);
    return (uint16_t)num_narrow_encode(&NUM_FMT_BF16, round, R, num_f32_bits(f));
}

uint16_t num_f32_to_f16_mode(float f, int mode)
{
    return (uint16_t)num_narrow_encode_mode(&NUM_FMT_F16, num_f32_bits(f), mode);
}

uint16_t num_f32_to_bf16_mode(float f, int mode)
{
    return bf16_encode(f, mode & NUM_ROUND_MASK, num_narrow_rules_for(&NUM_FMT_BF16, mode));
}

/* The contract conversions are the engine with NUM_RINT (one implementation, tested once). */
uint16_t num_f32_to_f16(float f) { return num_f32_to_f16_mode(f, NUM_RINT); }
uint16_t num_f32_to_bf16(float f) { return num_f32_to_bf16_mode(f, NUM_RINT); }

NUM_ARRAY_BODY(num_f32_to_f16_n, uint16_t)
{
    num_narrow_rules rules = num_narrow_rules_for(&NUM_FMT_F16, mode);
    NUM_ARRAY_LOOP(f16_encode, rules, in, out, n, mode);
}
NUM_ARRAY_DISPATCH(num_f32_to_f16_n, uint16_t)

NUM_ARRAY_BODY(num_f32_to_bf16_n, uint16_t)
{
    num_narrow_rules rules = num_narrow_rules_for(&NUM_FMT_BF16, mode);
    NUM_ARRAY_LOOP(bf16_encode, rules, in, out, n, mode);
}
NUM_ARRAY_DISPATCH(num_f32_to_bf16_n, uint16_t)
