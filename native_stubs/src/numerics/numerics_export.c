/* pyaclnn_stub_num_*: the array conversions, exported so that tests reach them through ctypes.
 * Each checks the mode (returns -1 and writes nothing when the conversion does not accept it). */
#include "num_config.h" /* first: compile options */
#include "numerics_export.h"
#include "numerics.h"

#define NUM_EXPORT_ENCODER(name, out_t, valid, impl)                                            \
    PYACLNN_STUB_API int pyaclnn_stub_num_f32_to_##name(const float *in, out_t *out, size_t n, \
                                                        int mode)                              \
    {                                                                                          \
        if (!valid(mode))                                                                      \
            return -1;                                                                         \
        impl(in, out, n, mode);                                                                \
        return 0;                                                                              \
    }

#define NUM_EXPORT_DECODER(name, in_t, scalar)                                                  \
    PYACLNN_STUB_API void pyaclnn_stub_num_##name##_to_f32(const in_t *in, float *out, size_t n) \
    {                                                                                          \
        for (size_t i = 0; i < n; i++)                                                         \
            out[i] = scalar(in[i]);                                                            \
    }

NUM_EXPORT_ENCODER(fp16, uint16_t, num_mode_valid_float, num_f32_to_f16_n)
NUM_EXPORT_ENCODER(bf16, uint16_t, num_mode_valid_float, num_f32_to_bf16_n)
NUM_EXPORT_ENCODER(fp8_e4m3fn, uint8_t, num_mode_valid_minifloat, num_f32_to_fp8_e4m3fn_n)
NUM_EXPORT_ENCODER(fp8_e5m2, uint8_t, num_mode_valid_minifloat, num_f32_to_fp8_e5m2_n)
NUM_EXPORT_ENCODER(hif8, uint8_t, num_mode_valid_hif8, num_f32_to_hif8_n)
NUM_EXPORT_ENCODER(fp4_e2m1, uint8_t, num_mode_valid_minifloat, num_f32_to_fp4_e2m1_n)
NUM_EXPORT_ENCODER(fp4_e1m2, uint8_t, num_mode_valid_minifloat, num_f32_to_fp4_e1m2_n)
NUM_EXPORT_ENCODER(e8m0, uint8_t, num_mode_valid_e8m0, num_f32_to_e8m0_n)
NUM_EXPORT_ENCODER(int32, int32_t, num_mode_valid_int, num_f32_to_int32_n)
NUM_EXPORT_ENCODER(int8, int8_t, num_mode_valid_int, num_f32_to_int8_n)
NUM_EXPORT_ENCODER(int4, int8_t, num_mode_valid_int, num_f32_to_int4_n)
NUM_EXPORT_ENCODER(fp4_e2m1_packed, uint8_t, num_mode_valid_minifloat, num_f32_to_fp4_e2m1_packed)
NUM_EXPORT_ENCODER(fp4_e1m2_packed, uint8_t, num_mode_valid_minifloat, num_f32_to_fp4_e1m2_packed)
NUM_EXPORT_ENCODER(int4_packed, uint8_t, num_mode_valid_int, num_f32_to_int4_packed)

NUM_EXPORT_DECODER(fp16, uint16_t, num_f16_to_f32)
NUM_EXPORT_DECODER(bf16, uint16_t, num_bf16_to_f32)
NUM_EXPORT_DECODER(fp8_e4m3fn, uint8_t, num_fp8_e4m3fn_to_f32)
NUM_EXPORT_DECODER(fp8_e5m2, uint8_t, num_fp8_e5m2_to_f32)
NUM_EXPORT_DECODER(hif8, uint8_t, num_hif8_to_f32)
NUM_EXPORT_DECODER(fp4_e2m1, uint8_t, num_fp4_e2m1_to_f32)
NUM_EXPORT_DECODER(fp4_e1m2, uint8_t, num_fp4_e1m2_to_f32)
NUM_EXPORT_DECODER(e8m0, uint8_t, num_e8m0_to_f32)

PYACLNN_STUB_API void pyaclnn_stub_num_pack4(const uint8_t *nibbles, uint8_t *packed, size_t n)
{
    num_pack4(nibbles, packed, n);
}

PYACLNN_STUB_API void pyaclnn_stub_num_unpack4(const uint8_t *packed, uint8_t *nibbles, size_t n)
{
    num_unpack4(packed, nibbles, n);
}
