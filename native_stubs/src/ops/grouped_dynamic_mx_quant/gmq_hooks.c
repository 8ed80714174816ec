/*
 * GroupedDynamicMxQuant: test hooks for the kernel's element conversions (numerics/num_inline.h),
 * which tests/test_grouped_dynamic_mx_quant_encode.py compares with numerics.h value by value. Not
 * part of any public header. Compiled at -O3 like the kernel: the tests push millions of values
 * through here, also in Debug builds.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3")
#endif

#include <stddef.h>
#include <stdint.h>

#include "gmq_kernel.h"
#include "num_inline.h"

/* codes[i] = the kernel's float32 conversion of in[i] (FP4: one nibble per byte). y_dtype is an
 * aclDataType of the four targets, round_mode NUM_RINT / NUM_ROUND / NUM_FLOOR (FP8: rint only).
 * Returns 0, or -1 for other arguments. */
PYACLNN_STUB_API int pyaclnn_stub_gmq_encode(int y_dtype, int round_mode, const float *in, uint8_t *codes,
                                             size_t n) {
    if (round_mode < NUM_RINT || round_mode > NUM_FLOOR) return -1;
    for (size_t i = 0; i < n; i++) {
        switch (y_dtype) {
        case ACL_FLOAT8_E4M3FN: codes[i] = num_inl_f32_to_fp8_e4m3fn(in[i]); break;
        case ACL_FLOAT8_E5M2: codes[i] = num_inl_f32_to_fp8_e5m2(in[i]); break;
        case ACL_FLOAT4_E2M1:
            codes[i] = round_mode == NUM_RINT ? num_inl_f32_to_fp4_e2m1_mx_rint(in[i])
                                              : num_inl_f32_to_fp4_e2m1_mx(in[i], round_mode);
            break;
        case ACL_FLOAT4_E1M2:
            codes[i] = round_mode == NUM_RINT ? num_inl_f32_to_fp4_e1m2_rint(in[i])
                                              : num_inl_f32_to_fp4_e1m2(in[i], round_mode);
            break;
        default: return -1;
        }
    }
    return 0;
}

/* The kernel's 16-bit-lane conversion (round to nearest even) of bf16 x[i] scaled by the column
 * factor r[i] (bf16 bits), element by element, each element a column of its own:
 * accepted[i] = 1 if the column step accepts r[i] with x[i] as the column's largest value
 * (num_inl_pow2_column_*), exact[i] = 1 if accepted and the element step reports its code as exact
 * (FP8: num_inl_pow2_exact_*; FP4 codes always are), codes[i] = that code (FP4: one nibble per
 * byte; 0 when not accepted). Returns 0, or -1 for a y_dtype other than the four targets. */
PYACLNN_STUB_API int pyaclnn_stub_gmq_encode_pow2(int y_dtype, const uint16_t *x, const uint16_t *r, uint8_t *codes,
                                                  uint8_t *accepted, uint8_t *exact, size_t n) {
    for (size_t i = 0; i < n; i++) {
        int16_t offset = 0;
        uint16_t xmax = x[i] & 0x7FFFu, guard = 0xFFFFu;
        uint8_t code = 0;
        int ok, good = 1;
        switch (y_dtype) {
        case ACL_FLOAT8_E4M3FN:
            ok = num_inl_pow2_column_fp8_e4m3fn(r[i], xmax, &offset);
            if (ok) code = num_inl_pow2_to_fp8_e4m3fn(x[i], offset, &guard);
            good = num_inl_pow2_exact_fp8_e4m3fn(guard);
            break;
        case ACL_FLOAT8_E5M2:
            ok = num_inl_pow2_column_fp8_e5m2(r[i], xmax, &offset);
            if (ok) code = num_inl_pow2_to_fp8_e5m2(x[i], offset, &guard);
            good = num_inl_pow2_exact_fp8_e5m2(guard);
            break;
        case ACL_FLOAT4_E2M1:
            ok = num_inl_pow2_column_fp4_e2m1(r[i], xmax, &offset);
            if (ok) code = (uint8_t)num_inl_pow2_to_fp4_e2m1(x[i], offset);
            break;
        case ACL_FLOAT4_E1M2:
            ok = num_inl_pow2_column_fp4_e1m2(r[i], xmax, &offset);
            if (ok) code = (uint8_t)num_inl_pow2_to_fp4_e1m2(x[i], offset);
            break;
        default: return -1;
        }
        codes[i] = code;
        accepted[i] = (uint8_t)ok;
        exact[i] = (uint8_t)(ok && good);
    }
    return 0;
}
