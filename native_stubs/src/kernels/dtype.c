#include "kernels/dtype.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "numerics.h"

int ew_is_float(aclDataType dt) {
    switch (dt) {
    case ACL_FLOAT16: case ACL_BF16: case ACL_FLOAT: case ACL_DOUBLE: case ACL_FLOAT8_E4M3FN:
    case ACL_FLOAT8_E5M2: case ACL_HIFLOAT8: case ACL_FLOAT8_E8M0:
        return 1;
    default: return 0;
    }
}

int ew_is_integral(aclDataType dt, int include_bool) {
    switch (dt) {
    case ACL_INT8: case ACL_UINT8: case ACL_INT16: case ACL_UINT16: case ACL_INT32: case ACL_UINT32:
    case ACL_INT64: case ACL_UINT64:
        return 1;
    case ACL_BOOL: return include_bool;
    default: return 0;
    }
}

ew_repr ew_repr_of(aclDataType dt) {
    if (ew_itemsize(dt) == 0) return EW_REPR_NONE;
    return ew_is_float(dt) ? EW_REPR_F : EW_REPR_I;
}

/* Position in torch's promotion lattice; -1 for dtypes outside the arithmetic set. */
static int rank_of(aclDataType dt) {
    switch (dt) {
    case ACL_BOOL: return 0;
    case ACL_UINT8: return 1;
    case ACL_INT8: return 2;
    case ACL_INT16: return 3;
    case ACL_INT32: return 4;
    case ACL_INT64: return 5;
    case ACL_FLOAT16: return 6;
    case ACL_BF16: return 7;
    case ACL_FLOAT: return 8;
    case ACL_DOUBLE: return 9;
    default: return -1;
    }
}

aclDataType ew_promote(aclDataType a, aclDataType b) {
    int ra = rank_of(a), rb = rank_of(b);
    if (ra < 0 || rb < 0) return ACL_DT_UNDEFINED;
    if (a == b) return a;
    if (a == ACL_BOOL) return b;
    if (b == ACL_BOOL) return a;
    /* uint8 with a signed integer: int16 at least (uint8 does not fit int8). */
    if ((a == ACL_UINT8 && b == ACL_INT8) || (a == ACL_INT8 && b == ACL_UINT8)) return ACL_INT16;
    /* fp16 with bf16: neither holds the other. */
    if ((a == ACL_FLOAT16 && b == ACL_BF16) || (a == ACL_BF16 && b == ACL_FLOAT16)) return ACL_FLOAT;
    return ra > rb ? a : b;
}

int ew_can_cast(aclDataType from, aclDataType to) {
    if (ew_is_float(from) && ew_is_integral(to, 1)) return 0;
    if (from != ACL_BOOL && to == ACL_BOOL) return 0;
    return 1;
}

ew_value ew_load(const void *p, aclDataType dt) {
    ew_value v = {0, 0};
    switch (dt) {
    case ACL_BOOL: v.i = *(const uint8_t *)p != 0; break;
    case ACL_INT8: v.i = *(const int8_t *)p; break;
    case ACL_UINT8: v.i = *(const uint8_t *)p; break;
    case ACL_INT16: { int16_t x; memcpy(&x, p, 2); v.i = x; break; }
    case ACL_UINT16: { uint16_t x; memcpy(&x, p, 2); v.i = x; break; }
    case ACL_INT32: { int32_t x; memcpy(&x, p, 4); v.i = x; break; }
    case ACL_UINT32: { uint32_t x; memcpy(&x, p, 4); v.i = x; break; }
    case ACL_INT64: case ACL_UINT64: memcpy(&v.i, p, 8); break;   /* UINT64: bit pattern */
    case ACL_FLOAT16: { uint16_t h; memcpy(&h, p, 2); v.f = num_f16_to_f32(h); break; }
    case ACL_BF16: { uint16_t h; memcpy(&h, p, 2); v.f = num_bf16_to_f32(h); break; }
    case ACL_FLOAT: { float f; memcpy(&f, p, 4); v.f = f; break; }
    case ACL_DOUBLE: memcpy(&v.f, p, 8); break;
    case ACL_FLOAT8_E4M3FN: v.f = num_fp8_e4m3fn_to_f32(*(const uint8_t *)p); break;
    case ACL_FLOAT8_E5M2: v.f = num_fp8_e5m2_to_f32(*(const uint8_t *)p); break;
    case ACL_HIFLOAT8: v.f = num_hif8_to_f32(*(const uint8_t *)p); break;
    case ACL_FLOAT8_E8M0: v.f = num_e8m0_to_f32(*(const uint8_t *)p); break;
    default: break;
    }
    return v;
}

/* Encodes a value that is already exact in dt (ew_cast produced it). */
void ew_store(void *p, aclDataType dt, ew_value v) {
    switch (dt) {
    case ACL_BOOL: *(uint8_t *)p = v.i != 0; break;
    case ACL_INT8: case ACL_UINT8: *(uint8_t *)p = (uint8_t)v.i; break;
    case ACL_INT16: case ACL_UINT16: { uint16_t x = (uint16_t)v.i; memcpy(p, &x, 2); break; }
    case ACL_INT32: case ACL_UINT32: { uint32_t x = (uint32_t)v.i; memcpy(p, &x, 4); break; }
    case ACL_INT64: case ACL_UINT64: memcpy(p, &v.i, 8); break;
    case ACL_FLOAT16: { uint16_t h = num_f32_to_f16((float)v.f); memcpy(p, &h, 2); break; }
    case ACL_BF16: { uint16_t h = num_f32_to_bf16((float)v.f); memcpy(p, &h, 2); break; }
    case ACL_FLOAT: { float f = (float)v.f; memcpy(p, &f, 4); break; }
    case ACL_DOUBLE: memcpy(p, &v.f, 8); break;
    case ACL_FLOAT8_E4M3FN: *(uint8_t *)p = num_f32_to_fp8_e4m3fn((float)v.f, NUM_RINT); break;
    case ACL_FLOAT8_E5M2: *(uint8_t *)p = num_f32_to_fp8_e5m2((float)v.f, NUM_RINT); break;
    case ACL_HIFLOAT8: *(uint8_t *)p = num_f32_to_hif8((float)v.f, NUM_ROUND); break;
    case ACL_FLOAT8_E8M0: *(uint8_t *)p = num_f32_to_e8m0((float)v.f, NUM_RINT); break;
    default: break;
    }
}

/* Integer range of an integral dtype, for saturation and wrapping. */
static void int_range(aclDataType dt, int64_t *lo, int64_t *hi, int *bits, int *is_signed) {
    switch (dt) {
    case ACL_INT8: *lo = INT8_MIN, *hi = INT8_MAX, *bits = 8, *is_signed = 1; return;
    case ACL_UINT8: *lo = 0, *hi = UINT8_MAX, *bits = 8, *is_signed = 0; return;
    case ACL_INT16: *lo = INT16_MIN, *hi = INT16_MAX, *bits = 16, *is_signed = 1; return;
    case ACL_UINT16: *lo = 0, *hi = UINT16_MAX, *bits = 16, *is_signed = 0; return;
    case ACL_INT32: *lo = INT32_MIN, *hi = INT32_MAX, *bits = 32, *is_signed = 1; return;
    case ACL_UINT32: *lo = 0, *hi = UINT32_MAX, *bits = 32, *is_signed = 0; return;
    default: *lo = INT64_MIN, *hi = INT64_MAX, *bits = 64, *is_signed = 1; return;
    }
}

static int64_t wrap_int(int64_t x, aclDataType dt) {
    int64_t lo, hi;
    int bits, sgn;
    int_range(dt, &lo, &hi, &bits, &sgn);
    if (bits == 64) return x;
    uint64_t m = (uint64_t)x & ((UINT64_C(1) << bits) - 1);
    if (sgn && (m >> (bits - 1))) return (int64_t)(m | ~((UINT64_C(1) << bits) - 1));
    return (int64_t)m;
}

static int64_t float_to_int(double d, aclDataType dt) {
    int64_t lo, hi;
    int bits, sgn;
    int_range(dt, &lo, &hi, &bits, &sgn);
    if (isnan(d)) return 0;
    d = trunc(d);
    if (d <= (double)lo) return lo;
    if (d >= (double)hi) return hi;   /* (double)INT64_MAX is 2^63: saturates too */
    return (int64_t)d;
}

/* A double rounded to dt through fp32 (the NPU and torch both go through fp32). */
static double round_float(double d, aclDataType dt) {
    float f = (float)d;
    switch (dt) {
    case ACL_DOUBLE: return d;
    case ACL_FLOAT: return f;
    case ACL_FLOAT16: return num_f16_to_f32(num_f32_to_f16(f));
    case ACL_BF16: return num_bf16_to_f32(num_f32_to_bf16(f));
    case ACL_FLOAT8_E4M3FN: return num_fp8_e4m3fn_to_f32(num_f32_to_fp8_e4m3fn(f, NUM_RINT));
    case ACL_FLOAT8_E5M2: return num_fp8_e5m2_to_f32(num_f32_to_fp8_e5m2(f, NUM_RINT));
    case ACL_HIFLOAT8: return num_hif8_to_f32(num_f32_to_hif8(f, NUM_ROUND));
    case ACL_FLOAT8_E8M0: return num_e8m0_to_f32(num_f32_to_e8m0(f, NUM_RINT));
    default: return d;
    }
}

ew_value ew_cast(ew_value v, aclDataType from, aclDataType to) {
    ew_value r = {0, 0};
    int src_float = ew_is_float(from);
    if (to == ACL_BOOL) {
        r.i = src_float ? v.f != 0.0 || isnan(v.f) : v.i != 0;
    } else if (ew_is_float(to)) {
        if (src_float) {
            r.f = round_float(v.f, to);
        } else if (from == ACL_UINT64) {
            r.f = round_float(to == ACL_DOUBLE ? (double)(uint64_t)v.i : (double)(float)(uint64_t)v.i, to);
        } else {
            /* int64 -> fp32 rounds once here; int64 -> double exactly-or-once. */
            r.f = round_float(to == ACL_DOUBLE ? (double)v.i : (double)(float)v.i, to);
        }
    } else {
        r.i = src_float ? float_to_int(v.f, to) : wrap_int(v.i, to);
    }
    return r;
}

int ew_scalar_value(aclDataType dt, const unsigned char bytes[16], ew_value *out) {
    if (ew_itemsize(dt) == 0) return 0;
    *out = ew_load(bytes, dt);
    return 1;
}

double ew_value_to_double(ew_value v, aclDataType dt) {
    if (ew_is_float(dt)) return v.f;
    if (dt == ACL_UINT64) return (double)(uint64_t)v.i;
    return (double)v.i;
}

const char *op_dtype_name(aclDataType dtype, char buf[24]) {
    switch (dtype) {
    case ACL_FLOAT: return "FLOAT";
    case ACL_FLOAT16: return "FLOAT16";
    case ACL_BF16: return "BFLOAT16";
    case ACL_DOUBLE: return "DOUBLE";
    case ACL_INT8: return "INT8";
    case ACL_INT16: return "INT16";
    case ACL_INT32: return "INT32";
    case ACL_INT64: return "INT64";
    case ACL_UINT8: return "UINT8";
    case ACL_UINT16: return "UINT16";
    case ACL_UINT32: return "UINT32";
    case ACL_UINT64: return "UINT64";
    case ACL_BOOL: return "BOOL";
    case ACL_INT4: return "INT4";
    case ACL_HIFLOAT8: return "HIFLOAT8";
    case ACL_FLOAT8_E5M2: return "FLOAT8_E5M2";
    case ACL_FLOAT8_E4M3FN: return "FLOAT8_E4M3FN";
    case ACL_FLOAT8_E8M0: return "FLOAT8_E8M0";
    case ACL_FLOAT4_E2M1: return "FLOAT4_E2M1";
    case ACL_FLOAT4_E1M2: return "FLOAT4_E1M2";
    case ACL_COMPLEX32: return "COMPLEX32";
    case ACL_COMPLEX64: return "COMPLEX64";
    case ACL_COMPLEX128: return "COMPLEX128";
    case ACL_STRING: return "STRING";
    case ACL_UINT1: return "UINT1";
    case ACL_FLOAT6_E3M2: return "FLOAT6_E3M2";
    case ACL_FLOAT6_E2M3: return "FLOAT6_E2M3";
    case ACL_DT_UNDEFINED: return "DT_UNDEFINED";
    default:
        snprintf(buf, 24, "dtype %d", (int)dtype);
        return buf;
    }
}

const char *op_format_name(aclFormat format, char buf[24]) {
    switch (format) {
    case ACL_FORMAT_ND: return "ND";
    case ACL_FORMAT_NCHW: return "NCHW";
    case ACL_FORMAT_NHWC: return "NHWC";
    case ACL_FORMAT_NCL: return "NCL";
    case ACL_FORMAT_NCDHW: return "NCDHW";
    case ACL_FORMAT_FRACTAL_NZ: return "FRACTAL_NZ";
    default:
        snprintf(buf, 24, "format %d", (int)format);
        return buf;
    }
}
