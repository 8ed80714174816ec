/*
 * Vectorised conversions, exported from libopapi as pyaclnn_stub_num_* so that tests reach the C
 * code through ctypes (not part of the public headers). Operators may call them too.
 * Semantics and modes: numerics.h. The f32 -> narrow ones return 0, or -1 without writing
 * anything when the mode is not one the conversion accepts.
 */
#ifndef PYACLNN_NUMERICS_EXPORT_H
#define PYACLNN_NUMERICS_EXPORT_H
#include <stddef.h>
#include <stdint.h>

#include "pyaclnn_stub.h"

#define NUM_EXPORT_TO(name, out_t)                                                                \
    PYACLNN_STUB_API int pyaclnn_stub_num_f32_to_##name(const float *in, out_t *out, size_t n, \
                                                        int mode);
#define NUM_EXPORT_FROM(name, in_t)                                                               \
    PYACLNN_STUB_API void pyaclnn_stub_num_##name##_to_f32(const in_t *in, float *out, size_t n);
NUM_EXPORT_TO(fp16, uint16_t)
NUM_EXPORT_TO(bf16, uint16_t)
NUM_EXPORT_TO(fp8_e4m3fn, uint8_t)
NUM_EXPORT_TO(fp8_e5m2, uint8_t)
NUM_EXPORT_TO(hif8, uint8_t)
NUM_EXPORT_TO(fp4_e2m1, uint8_t)
NUM_EXPORT_TO(fp4_e1m2, uint8_t)
NUM_EXPORT_TO(e8m0, uint8_t)
NUM_EXPORT_TO(int32, int32_t)
NUM_EXPORT_TO(int8, int8_t)
NUM_EXPORT_TO(int4, int8_t)
NUM_EXPORT_FROM(fp16, uint16_t)
NUM_EXPORT_FROM(bf16, uint16_t)
NUM_EXPORT_FROM(fp8_e4m3fn, uint8_t)
NUM_EXPORT_FROM(fp8_e5m2, uint8_t)
NUM_EXPORT_FROM(hif8, uint8_t)
NUM_EXPORT_FROM(fp4_e2m1, uint8_t)
NUM_EXPORT_FROM(fp4_e1m2, uint8_t)
NUM_EXPORT_FROM(e8m0, uint8_t)
#undef NUM_EXPORT_TO
#undef NUM_EXPORT_FROM
/* Packed fp4 in one pass: n elements -> (n + 1) / 2 bytes. */
PYACLNN_STUB_API int pyaclnn_stub_num_f32_to_fp4_e2m1_packed(const float *in, uint8_t *out,
                                                             size_t n, int mode);
PYACLNN_STUB_API int pyaclnn_stub_num_f32_to_fp4_e1m2_packed(const float *in, uint8_t *out,
                                                             size_t n, int mode);
PYACLNN_STUB_API int pyaclnn_stub_num_f32_to_int4_packed(const float *in, uint8_t *out, size_t n,
                                                         int mode);
PYACLNN_STUB_API void pyaclnn_stub_num_pack4(const uint8_t *nibbles, uint8_t *packed, size_t n);
PYACLNN_STUB_API void pyaclnn_stub_num_unpack4(const uint8_t *packed, uint8_t *nibbles, size_t n);

#endif
