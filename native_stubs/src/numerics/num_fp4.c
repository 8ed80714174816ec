/* float32 <-> FLOAT4_E2M1 / FLOAT4_E1M2 (grouped_dynamic_mx_quant.md §4.7, §5.3).
 * Both formats have no inf/NaN: the engine saturates every overflow and maps NaN to 0x0. */
#include "num_config.h" /* first: compile options */
#include "num_dispatch.h"
#include "num_narrow.h"
#include "numerics.h"

NUM_INLINE uint8_t e2m1_encode(float f, int round, num_narrow_rules R)
{
    return (uint8_t)num_narrow_encode(&NUM_FMT_E2M1, round, R, num_f32_bits(f));
}

NUM_INLINE uint8_t e1m2_encode(float f, int round, num_narrow_rules R)
{
    return (uint8_t)num_narrow_encode(&NUM_FMT_E1M2, round, R, num_f32_bits(f));
}

/* Two elements per output byte, element 2k in the low nibble. */
NUM_INLINE uint8_t e2m1_pair(const float *p, int round, num_narrow_rules R)
{
    return (uint8_t)(e2m1_encode(p[0], round, R) | (e2m1_encode(p[1], round, R) << 4));
}

NUM_INLINE uint8_t e1m2_pair(const float *p, int round, num_narrow_rules R)
{
    return (uint8_t)(e1m2_encode(p[0], round, R) | (e1m2_encode(p[1], round, R) << 4));
}

uint8_t num_f32_to_fp4_e2m1(float f, int mode)
{
    return (uint8_t)num_narrow_encode_mode(&NUM_FMT_E2M1, num_f32_bits(f), mode);
}

uint8_t num_f32_to_fp4_e1m2(float f, int mode)
{
    return (uint8_t)num_narrow_encode_mode(&NUM_FMT_E1M2, num_f32_bits(f), mode);
}

float num_fp4_e2m1_to_f32(uint8_t c) { return num_narrow_decode(&NUM_FMT_E2M1, c & 0xFu); }
float num_fp4_e1m2_to_f32(uint8_t c) { return num_narrow_decode(&NUM_FMT_E1M2, c & 0xFu); }

NUM_ARRAY_BODY(num_f32_to_fp4_e2m1_n, uint8_t)
{
    num_narrow_rules rules = num_narrow_rules_for(&NUM_FMT_E2M1, mode);
    NUM_ARRAY_LOOP(e2m1_encode, rules, in, out, n, mode);
}
NUM_ARRAY_DISPATCH(num_f32_to_fp4_e2m1_n, uint8_t)

NUM_ARRAY_BODY(num_f32_to_fp4_e1m2_n, uint8_t)
{
    num_narrow_rules rules = num_narrow_rules_for(&NUM_FMT_E1M2, mode);
    NUM_ARRAY_LOOP(e1m2_encode, rules, in, out, n, mode);
}
NUM_ARRAY_DISPATCH(num_f32_to_fp4_e1m2_n, uint8_t)

NUM_ARRAY_BODY(num_f32_to_fp4_e2m1_packed, uint8_t)
{
    num_narrow_rules rules = num_narrow_rules_for(&NUM_FMT_E2M1, mode);
    NUM_PACKED_LOOP(e2m1_pair, e2m1_encode, rules, in, out, n, mode);
}
NUM_ARRAY_DISPATCH(num_f32_to_fp4_e2m1_packed, uint8_t)

NUM_ARRAY_BODY(num_f32_to_fp4_e1m2_packed, uint8_t)
{
    num_narrow_rules rules = num_narrow_rules_for(&NUM_FMT_E1M2, mode);
    NUM_PACKED_LOOP(e1m2_pair, e1m2_encode, rules, in, out, n, mode);
}
NUM_ARRAY_DISPATCH(num_f32_to_fp4_e1m2_packed, uint8_t)
