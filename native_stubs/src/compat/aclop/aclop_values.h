/* Float elements of the aclop operators' buffers (FLOAT, FLOAT16, BF16) as fp32 and back, rounding to nearest
 * even: the conversions the vector units' Cast does. Shared by the files of src/compat/aclop/ (libacl_op_compiler
 * does not link the kernels of libopapi). */
#ifndef PYACLNN_COMPAT_ACLOP_VALUES_H
#define PYACLNN_COMPAT_ACLOP_VALUES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../compat.h"


static inline float f32_of_bits(uint32_t b) {
    float f;
    memcpy(&f, &b, 4);
    return f;
}

static inline uint32_t bits_of_f32(float f) {
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}

static inline float fp16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1Fu, man = h & 0x3FFu;
    if (exp == 0x1F) return f32_of_bits(sign | 0x7F800000u | (man << 13));   /* inf / NaN */
    if (exp == 0) {                                                              /* zero / subnormal */
        float v = (float)man * 0x1p-24f;
        return sign ? -v : v;
    }
    return f32_of_bits(sign | ((exp + 112) << 23) | (man << 13));
}

static inline uint16_t f32_to_fp16(float f) {
    uint32_t b = bits_of_f32(f), sign = (b >> 16) & 0x8000u;
    uint32_t abs = b & 0x7FFFFFFFu;
    if (abs >= 0x7F800000u) return (uint16_t)(sign | 0x7C00u | (abs > 0x7F800000u ? 0x200u : 0));
    if (abs >= 0x477FF000u) return (uint16_t)(sign | 0x7C00u);                   /* rounds to >= 65520: inf */
    if (abs < 0x38800000u) {                                                     /* below 2^-14: subnormal */
        float a = f32_of_bits(abs) * 0x1p24f;                                    /* exact scaling */
        uint32_t m = (uint32_t)a;
        float rest = a - (float)m;
        if (rest > 0.5f || (rest == 0.5f && (m & 1))) m++;
        return (uint16_t)(sign | m);
    }
    uint32_t exp = (abs >> 23) - 112, man = abs & 0x7FFFFFu;
    uint32_t h = (exp << 10) | (man >> 13), rest = man & 0x1FFFu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1))) h++;                     /* carries into the exponent */
    return (uint16_t)(sign | h);
}

static inline float bf16_to_f32(uint16_t h) { return f32_of_bits((uint32_t)h << 16); }

static inline uint16_t f32_to_bf16(float f) {
    uint32_t b = bits_of_f32(f);
    if ((b & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((b >> 16) | 0x40u);   /* quiet NaN */
    b += 0x7FFFu + ((b >> 16) & 1u);
    return (uint16_t)(b >> 16);
}

static inline size_t float_item(aclDataType t) { return t == ACL_FLOAT ? 4 : 2; }

static inline float float_load(aclDataType t, const void *p, int64_t k) {
    if (t == ACL_FLOAT) return ((const float *)p)[k];
    uint16_t h = ((const uint16_t *)p)[k];
    return t == ACL_FLOAT16 ? fp16_to_f32(h) : bf16_to_f32(h);
}

static inline void float_store(aclDataType t, void *p, int64_t k, float v) {
    if (t == ACL_FLOAT) ((float *)p)[k] = v;
    else ((uint16_t *)p)[k] = t == ACL_FLOAT16 ? f32_to_fp16(v) : f32_to_bf16(v);
}

#endif
