/* float32 <-> FLOAT8_E8M0, the MX scale (grouped_dynamic_mx_quant.md §5.1): code c is 2^(c-127),
 * c = 0..254, 0xFF = NaN, no zero and no sign. */
#include "num_config.h" /* first: compile options */
#include "num_bits.h"
#include "num_dispatch.h"
#include "numerics.h"

typedef struct e8m0_rules {
    int unused; /* no flags apply to E8M0 */
} e8m0_rules;

NUM_INLINE uint8_t e8m0_encode(float f, int round, e8m0_rules R)
{
    uint32_t ax = num_f32_bits(f) & 0x7FFFFFFFu; /* the sign is dropped, as the NPU cast does */
    uint32_t e = ax >> 23, m = ax & 0x007FFFFFu;
    /* fp32 zero/subnormals (e = 0) lie below 2^-126: the candidates are code 0 (2^-127, bits
     * 0x00400000) and code 1; normals choose between their exponent field e and e + 1. */
    uint32_t up;
    switch (round) {
    case NUM_CEIL:
        up = e ? m != 0 : ax > 0x00400000u;
        break;
    case NUM_ROUND: /* ties up, like ml_dtypes */
        up = e ? m >= 0x00400000u : ax >= 0x00600000u;
        break;
    case NUM_RINT: /* ties to the even code */
        up = e ? (m > 0x00400000u) | ((m == 0x00400000u) & e & 1u) : ax > 0x00600000u;
        break;
    default: /* TRUNC, FLOOR: the exponent field */
        up = 0;
    }
    uint32_t code = e + up;
    code = code > 0xFEu ? 0xFEu : code;    /* also +-inf (e = 255) */
    return (uint8_t)(ax > 0x7F800000u ? 0xFFu : code);
}

uint8_t num_f32_to_e8m0(float f, int mode)
{
    e8m0_rules none = {0};
    return e8m0_encode(f, mode & NUM_ROUND_MASK, none);
}

NUM_ARRAY_BODY(num_f32_to_e8m0_n, uint8_t)
{
    e8m0_rules rules = {0};
    NUM_ARRAY_LOOP(e8m0_encode, rules, in, out, n, mode);
}
NUM_ARRAY_DISPATCH(num_f32_to_e8m0_n, uint8_t)

float num_e8m0_to_f32(uint8_t c)
{
    if (c == 0xFF)
        return num_bits_f32(0x7FC00000u);
    return num_bits_f32(c ? (uint32_t)c << 23 : 0x00400000u);
}
