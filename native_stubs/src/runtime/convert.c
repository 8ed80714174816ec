/*
 * aclFloat16ToFloat / aclFloatToFloat16 / aclDataTypeSize with the real runtime's quirks:
 *  - fp16 -> float treats exponent 31 as an ordinary exponent: 0x7C00 (+Inf) is 65536.0 and the
 *    canonical NaN 0x7E00 is 98304.0.
 *  - float -> fp16 rounds to nearest even (subnormals included) and saturates: overflow, +-Inf and
 *    NaN all give +-65504 (0x7BFF / 0xFBFF).
 *  - aclDataTypeSize reports 8 for every type its switch does not list (FP6, FP4, unknown values).
 */
#include <string.h>

#include "rt_internal.h"

static float float_from_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

ACL_FUNC_VISIBILITY float aclFloat16ToFloat(aclFloat16 value) {
    uint32_t sign = (uint32_t)(value >> 15) << 31;
    int32_t exp = (value >> 10) & 0x1F;
    uint32_t man = value & 0x3FF;
    if (exp == 0) {
        if (man == 0) return float_from_bits(sign);   /* signed zero */
        exp = 1;                                       /* subnormal: normalise it */
        while ((man & 0x400) == 0) {
            man <<= 1;
            exp--;
        }
        man &= 0x3FF;
    }
    /* Exponent 31 takes this path too: no Inf/NaN, just a larger power of two. */
    return float_from_bits(sign | (uint32_t)(exp + 127 - 15) << 23 | man << 13);
}

/* Rounds `value >> shift` to nearest even. */
static uint32_t shift_round_even(uint64_t value, unsigned shift) {
    uint64_t kept = value >> shift;
    uint64_t rest = value & ((1ull << shift) - 1);
    uint64_t half = 1ull << (shift - 1);
    if (rest > half || (rest == half && (kept & 1))) kept++;
    return (uint32_t)kept;
}

ACL_FUNC_VISIBILITY aclFloat16 aclFloatToFloat16(float value) {
    uint32_t u;
    memcpy(&u, &value, sizeof u);
    uint16_t sign = (uint16_t)((u >> 31) << 15);
    uint32_t exp = (u >> 23) & 0xFF;
    uint32_t man = u & 0x7FFFFF;
    const uint16_t max_finite = 0x7BFF;

    if (exp > 127 + 15) return sign | max_finite;   /* >= 65536, Inf, NaN: saturate */
    if (exp <= 127 - 15) {                           /* below the normal range: subnormal or 0 */
        if (exp >= 127 - 24)   /* result = (1.man * 2^(exp-127)) / 2^-24, rounded */
            return sign | (uint16_t)shift_round_even((uint64_t)(man | 0x800000) << (exp - 103), 23);
        if (exp == 127 - 25 && man != 0) return sign | 1;   /* just above half the smallest */
        return sign;
    }
    uint32_t half_exp = exp - (127 - 15);
    uint32_t half_man = shift_round_even(man, 13);
    if (half_man == 0x400) {   /* rounding carried into the exponent */
        half_man = 0;
        half_exp++;
    }
    if (half_exp >= 31) return sign | max_finite;
    return sign | (uint16_t)(half_exp << 10 | half_man);
}

ACL_FUNC_VISIBILITY size_t aclDataTypeSize(aclDataType dataType) {
    switch (dataType) {
    case ACL_STRING:
    case ACL_DT_UNDEFINED:
        return 0;
    case ACL_UINT1:
    case ACL_INT4:
    case ACL_BOOL:
    case ACL_INT8:
    case ACL_UINT8:
    case ACL_HIFLOAT8:
    case ACL_FLOAT8_E5M2:
    case ACL_FLOAT8_E4M3FN:
    case ACL_FLOAT8_E8M0:
        return 1;
    case ACL_FLOAT16:
    case ACL_INT16:
    case ACL_UINT16:
    case ACL_BF16:
        return 2;
    case ACL_FLOAT:
    case ACL_INT32:
    case ACL_UINT32:
    case ACL_COMPLEX32:
        return 4;
    case ACL_COMPLEX128:
        return 16;
    default:   /* INT64, UINT64, DOUBLE, COMPLEX64, and everything unlisted (FP6, FP4, ...) */
        return 8;
    }
}
