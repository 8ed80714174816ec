/* float32 <-> FLOAT8_E4M3FN / FLOAT8_E5M2 (grouped_dynamic_mx_quant.md §4.6, §5.2). */
#include "num_config.h" /* first: compile options */
#include "num_dispatch.h"
#include "num_narrow.h"
#include "numerics.h"

NUM_INLINE uint8_t e4m3fn_encode(float f, int round, num_narrow_rules R)
{
    return (uint8_t)num_narrow_encode(&NUM_FMT_E4M3FN, round, R, num_f32_bits(f));
}

NUM_INLINE uint8_t e5m2_encode(float f, int round, num_narrow_rules R)
{
    return (uint8_t)num_narrow_encode(&NUM_FMT_E5M2, round, R, num_f32_bits(f));
}

uint8_t num_f32_to_fp8_e4m3fn(float f, int mode)
{
    return (uint8_t)num_narrow_encode_mode(&NUM_FMT_E4M3FN, num_f32_bits(f), mode);
}

uint8_t num_f32_to_fp8_e5m2(float f, int mode)
{
    return (uint8_t)num_narrow_encode_mode(&NUM_FMT_E5M2, num_f32_bits(f), mode);
}

float num_fp8_e4m3fn_to_f32(uint8_t c) { return num_narrow_decode(&NUM_FMT_E4M3FN, c); }
float num_fp8_e5m2_to_f32(uint8_t c) { return num_narrow_decode(&NUM_FMT_E5M2, c); }

NUM_ARRAY_BODY(num_f32_to_fp8_e4m3fn_n, uint8_t)
{
    num_narrow_rules rules = num_narrow_rules_for(&NUM_FMT_E4M3FN, mode);
    NUM_ARRAY_LOOP(e4m3fn_encode, rules, in, out, n, mode);
}
NUM_ARRAY_DISPATCH(num_f32_to_fp8_e4m3fn_n, uint8_t)

NUM_ARRAY_BODY(num_f32_to_fp8_e5m2_n, uint8_t)
{
    num_narrow_rules rules = num_narrow_rules_for(&NUM_FMT_E5M2, mode);
    NUM_ARRAY_LOOP(e5m2_encode, rules, in, out, n, mode);
}
NUM_ARRAY_DISPATCH(num_f32_to_fp8_e5m2_n, uint8_t)
