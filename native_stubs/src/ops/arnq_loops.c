/* Element loops of the AddRmsNormDynamicQuant kernel (see arnq_loops.h). */
#include "arnq_opt.h" /* first: compile options */

#include <math.h>
#include <string.h>

#include "arnq_loops.h"

static inline float from_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static inline uint32_t to_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* bf16 -> f32 is the exact 16-bit shift of num_bf16_to_f32, inline so the loop vectorises. */
ARNQ_VECTOR_CLONES
void arnq_add_square_bf16(const uint16_t *restrict a, const uint16_t *restrict b, float *restrict x,
                          float *restrict q, int64_t n) {
    for (int64_t j = 0; j < n; j++) {
        float v = from_bits((uint32_t)a[j] << 16) + from_bits((uint32_t)b[j] << 16);
        x[j] = v;
        q[j] = v * v;
    }
}

void arnq_add_square_f16(const uint16_t *restrict a, const uint16_t *restrict b, const float *restrict table,
                         float *restrict x, float *restrict q, int64_t n) {
    for (int64_t j = 0; j < n; j++) {
        float v = table[a[j]] + table[b[j]];
        x[j] = v;
        q[j] = v * v;
    }
}

ARNQ_VECTOR_CLONES
void arnq_normalise(float *restrict x, float rstd, const float *restrict gamma, const float *restrict beta,
                    int64_t n) {
    if (beta == NULL) {
        for (int64_t j = 0; j < n; j++) {
            float t = x[j] * rstd;
            x[j] = t * gamma[j];
        }
        return;
    }
    for (int64_t j = 0; j < n; j++) {
        float t = x[j] * rstd;
        t = t * gamma[j];
        x[j] = t + beta[j];
    }
}

ARNQ_VECTOR_CLONES
uint32_t arnq_smooth_absmax(const float *restrict y, const float *restrict s, float *restrict z, int64_t n) {
    uint32_t m = 0;
    if (s == NULL) {
        for (int64_t j = 0; j < n; j++) {
            uint32_t u = to_bits(y[j]) & 0x7FFFFFFFu;
            m = u > m ? u : m;
        }
        return m;
    }
    for (int64_t j = 0; j < n; j++) {
        float v = y[j] * s[j];
        z[j] = v;
        uint32_t u = to_bits(v) & 0x7FFFFFFFu;
        m = u > m ? u : m;
    }
    return m;
}

float arnq_absmax_ignore_nan(const float *z, int64_t n) {
    float m = 0.0f;
    int number = 0;
    for (int64_t j = 0; j < n; j++) {
        float a = fabsf(z[j]);
        if (a != a) continue;
        number = 1;
        m = a > m ? a : m;
    }
    return number || n == 0 ? m : NAN;
}

ARNQ_VECTOR_CLONES
void arnq_mul_scalar(const float *restrict a, float s, float *restrict out, int64_t n) {
    for (int64_t j = 0; j < n; j++) out[j] = a[j] * s;
}

ARNQ_VECTOR_CLONES
void arnq_div_scalar(const float *a, float s, float *out, int64_t n) {
    for (int64_t j = 0; j < n; j++) out[j] = a[j] / s;
}

/* rintf rounds half to even in the default rounding mode, which nothing here changes; the caller
 * guarantees |q| < 127.5, so the integer fits without saturation. */
ARNQ_VECTOR_CLONES
void arnq_int8_mul(const float *restrict z, float inv, int8_t *restrict out, int64_t n) {
    for (int64_t j = 0; j < n; j++) out[j] = (int8_t)(int32_t)rintf(z[j] * inv);
}

ARNQ_VECTOR_CLONES
void arnq_int8_div(const float *restrict z, float scale, int8_t *restrict out, int64_t n) {
    for (int64_t j = 0; j < n; j++) out[j] = (int8_t)(int32_t)rintf(z[j] / scale);
}

ARNQ_VECTOR_CLONES
void arnq_fp8_positive_nan(const float *restrict q, uint8_t *restrict codes, int64_t n) {
    for (int64_t j = 0; j < n; j++) codes[j] = q[j] != q[j] ? (uint8_t)(codes[j] & 0x7F) : codes[j];
}
