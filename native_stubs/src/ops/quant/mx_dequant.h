/*
 * The MX steps of the Ascend 950's cube (FLOAT8_E4M3FN / FLOAT8_E5M2 / FLOAT4_E2M1 operands, one FLOAT8_E8M0 scale
 * per 32 elements of K on each side), shared by the MX matmuls (moe/gmm_finalize_routing_mx.c):
 *
 *   scales: E8M0 code c is 2^(c - 127) exactly (c = 255: NaN); a row's scales are [ceil(K/64), 2], i.e. the
 *     scale of K-group g (elements 32g .. 32g + 31) is the row's g-th byte;
 *   per K-group: the products of the decoded operands summed exactly (the cube's depth for 8-bit data is one group
 *     of 32; its internal adder is not published), times both scales, rounded once to fp32;
 *   the fp32 L0C accumulator adds the groups' terms in K order (the cube's order across groups is not
 *     published: class c), starting from the bias when the kernel loads one into the L0C.
 * Decoded operands are dyadic: E4M3FN values are integers times 2^-9, E5M2 times 2^-16, E2M1 times 2^-1, so a
 * group's sum is an exact integer (128-bit) times a power of two; it is narrowed to 53 bits with a sticky bit
 * (round to odd) so that the one rounding to fp32 is correctly rounded.
 */
#ifndef PYACLNN_OPS_QUANT_MX_DEQUANT_H
#define PYACLNN_OPS_QUANT_MX_DEQUANT_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "internal/pyaclnn_stub.h"
#include "numerics/numerics.h"

#define MX_GROUP 32

/* 2^(c - 127), NaN for 0xFF */
static inline double mx_e8m0(uint8_t c) { return c == 0xFF ? NAN : ldexp(1.0, (int)c - 127); }

/* the power of two that makes a decoded element of dt an integer */
static inline int mx_frac_bits(aclDataType dt) {
    return dt == ACL_FLOAT8_E4M3FN ? 9 : dt == ACL_FLOAT8_E5M2 ? 16 : 1;
}

/* |v| narrowed to at most 53 significant bits with the dropped bits ORed into the last (round to odd), as a double */
static inline double mx_i128_to_double(__int128 v) {
    unsigned __int128 u = v < 0 ? -(unsigned __int128)v : (unsigned __int128)v;
    int sh = 0;
    unsigned sticky = 0;
    while (u >> 53) {
        sticky |= (unsigned)(u & 1);
        u >>= 1;
        sh++;
    }
    double d = ldexp((double)(uint64_t)(u | sticky), sh);
    return v < 0 ? -d : d;
}

/* One K-group's term: sum_q a[q*sa] * w[q*sw] for q < n (n <= 32), exact, times 2^(ea-127) * 2^(eb-127), rounded once
 * to fp32. fa / fw: mx_frac_bits of the operands' dtypes. A NaN / Inf operand makes the term NaN / Inf (fp arithmetic). */
static inline float mx_group_term(const float *a, int64_t sa, int fa, const float *w, int64_t sw, int fw, int64_t n,
                                  uint8_t ea, uint8_t eb) {
    __int128 s = 0;
    for (int64_t q = 0; q < n; q++) {
        float x = a[q * sa], y = w[q * sw];
        if (!isfinite(x) || !isfinite(y)) {   /* E4M3FN NaN, E5M2 Inf / NaN: plain fp arithmetic */
            double d = 0.0;
            for (int64_t r = 0; r < n; r++) d += (double)a[r * sa] * (double)w[r * sw];
            return (float)(d * mx_e8m0(ea) * mx_e8m0(eb));
        }
        s += (__int128)(int64_t)ldexp(x, fa) * (__int128)(int64_t)ldexp(y, fw);
    }
    if (ea == 0xFF || eb == 0xFF) return NAN;
    /* the scaling is exact in double: |exponent| stays far inside its range */
    return (float)ldexp(mx_i128_to_double(s), (int)ea - 127 + (int)eb - 127 - fa - fw);
}

/* The fp32 L0C value of one output: init (the bias, or 0), then each K-group's term added in K order.
 * as / ws: the scale bytes of groups 0, 1, ... at strides gsa / gsw. */
static inline float mx_dot(const float *a, int64_t sa, int fa, const float *w, int64_t sw, int fw, int64_t k,
                           const uint8_t *as, int64_t gsa, const uint8_t *ws, int64_t gsw, float init) {
    float acc = init;
    for (int64_t g = 0, k0 = 0; k0 < k; g++, k0 += MX_GROUP) {
        int64_t n = k - k0 < MX_GROUP ? k - k0 : MX_GROUP;
        acc += mx_group_term(a + k0 * sa, sa, fa, w + k0 * sw, sw, fw, n, as[g * gsa], ws[g * gsw]);
    }
    return acc;
}

/* A FLOAT4_E2M1 view decoded to fp32, row-major (element i at nibble offset + sum idx*stride; even nibbles low);
 * malloc'ed, NULL if out of memory. */
static inline float *mx_load_fp4(const pyaclnn_stub_tensor *t) {
    int64_t n = 1;
    for (int64_t d = 0; d < t->ndim; d++) n *= t->shape[d];
    float *out = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    if (!out) return NULL;
    int64_t idx[PYACLNN_STUB_MAX_DIMS] = {0};
    for (int64_t i = 0; i < n; i++) {
        int64_t off = t->offset;
        for (int64_t d = 0; d < t->ndim; d++) off += idx[d] * t->strides[d];
        uint8_t b = ((const uint8_t *)t->data)[off >> 1];
        out[i] = num_fp4_e2m1_to_f32(off & 1 ? b >> 4 : b & 0xF);
        for (int64_t d = t->ndim - 1; d >= 0 && ++idx[d] == t->shape[d]; d--) idx[d] = 0;
    }
    return out;
}

#endif
