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

/* bf16 -> f32 is the exact 16-bit shift of num_bf16_to_f32, inline so the loop vectorises.
 * One instance with and one without the squares (flag constant once inlined). */
static inline __attribute__((always_inline)) void add_square_bf16_body(
    const uint16_t *restrict a, const uint16_t *restrict b, float *restrict x, float *restrict q, int64_t n,
    int with_q) {
    for (int64_t j = 0; j < n; j++) {
        float v = from_bits((uint32_t)a[j] << 16) + from_bits((uint32_t)b[j] << 16);
        x[j] = v;
        if (with_q) q[j] = v * v;
    }
}

ARNQ_VECTOR_CLONES static void add_square_bf16_loop(const uint16_t *a, const uint16_t *b, float *x, float *q,
                                                     int64_t n) {
    if (q) add_square_bf16_body(a, b, x, q, n, 1);
    else add_square_bf16_body(a, b, x, NULL, n, 0);
}

void arnq_add_square_f16(const uint16_t *restrict a, const uint16_t *restrict b, const float *restrict table,
                         float *restrict x, float *restrict q, int64_t n) {
    for (int64_t j = 0; j < n; j++) {
        float v = table[a[j]] + table[b[j]];
        x[j] = v;
        if (q) q[j] = v * v;
    }
}

ARNQ_VECTOR_CLONES static void normalise_loop(float *restrict x, float rstd, const float *restrict gamma,
                                               const float *restrict beta, int64_t n) {
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

/* One instance per (beta, two outputs) choice: the flags are constants once inlined, so the loop is
 * straight-line. Same operations, in the same order, as arnq_normalise followed by
 * arnq_smooth_absmax. */
static inline __attribute__((always_inline)) void norm_smooth_body(
    const float *restrict x, float rstd, const float *restrict gamma, const float *restrict beta,
    const float *restrict s0, const float *restrict s1, float *restrict y, uint32_t m[2], int64_t n,
    int with_beta, int two) {
    uint32_t m0 = m[0], m1 = m[1];
    for (int64_t j = 0; j < n; j++) {
        float t = x[j] * rstd;
        t = t * gamma[j];
        if (with_beta) t = t + beta[j];
        y[j] = t;
        uint32_t u = to_bits(t * s0[j]) & 0x7FFFFFFFu;
        m0 = u > m0 ? u : m0;
        if (two) {
            uint32_t v = to_bits(t * s1[j]) & 0x7FFFFFFFu;
            m1 = v > m1 ? v : m1;
        }
    }
    m[0] = m0;
    m[1] = m1;
}

ARNQ_VECTOR_CLONES static void norm_smooth_loop(const float *x, float rstd, const float *gamma, const float *beta,
                                                 const float *s0, const float *s1, float *y, int count,
                                                 uint32_t m[2], int64_t n) {
    if (beta == NULL && count == 1) norm_smooth_body(x, rstd, gamma, NULL, s0, NULL, y, m, n, 0, 0);
    else if (beta == NULL) norm_smooth_body(x, rstd, gamma, NULL, s0, s1, y, m, n, 0, 1);
    else if (count == 1) norm_smooth_body(x, rstd, gamma, beta, s0, NULL, y, m, n, 1, 0);
    else norm_smooth_body(x, rstd, gamma, beta, s0, s1, y, m, n, 1, 1);
}

/* ---- INT8 quantisation of y_k straight from y ----------------------------------------------------- */

/* |q| < 127.5 here: the integer fits; rintf rounds half to even in the default rounding mode,
 * which nothing here changes. */
static inline __attribute__((always_inline)) int8_t int8_rint(float q) { return (int8_t)(int32_t)rintf(q); }

static inline __attribute__((always_inline)) void int8_body(
    const float *restrict y, const float *restrict s0, const float *restrict s1, float f0, float f1,
    int8_t *restrict out0, int8_t *restrict out1, int64_t n, int two, int divide) {
    for (int64_t j = 0; j < n; j++) {
        float z0 = y[j] * s0[j];
        out0[j] = int8_rint(divide ? z0 / f0 : z0 * f0);
        if (two) {
            float z1 = y[j] * s1[j];
            out1[j] = int8_rint(divide ? z1 / f1 : z1 * f1);
        }
    }
}

ARNQ_VECTOR_CLONES static void int8_from_y_loop(const float *y, const float *s0, const float *s1, float f0, float f1,
                                                 int8_t *out0, int8_t *out1, int count, int divide, int64_t n) {
    if (count == 1 && divide) int8_body(y, s0, NULL, f0, f1, out0, NULL, n, 0, 1);
    else if (count == 1) int8_body(y, s0, NULL, f0, f1, out0, NULL, n, 0, 0);
    else if (divide) int8_body(y, s0, s1, f0, f1, out0, out1, n, 1, 1);
    else int8_body(y, s0, s1, f0, f1, out0, out1, n, 1, 0);
}

ARNQ_VECTOR_CLONES static uint32_t smooth_absmax_loop(const float *restrict y, const float *restrict s,
                                                      float *restrict z, int64_t n) {
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

ARNQ_VECTOR_CLONES static void mul_scalar_loop(const float *restrict a, float s, float *restrict out, int64_t n) {
    for (int64_t j = 0; j < n; j++) out[j] = a[j] * s;
}

ARNQ_VECTOR_CLONES static void div_scalar_loop(const float *a, float s, float *out, int64_t n) {
    for (int64_t j = 0; j < n; j++) out[j] = a[j] / s;
}

/* rintf rounds half to even in the default rounding mode, which nothing here changes; the caller
 * guarantees |q| < 127.5, so the integer fits without saturation. */
ARNQ_VECTOR_CLONES static void int8_mul_loop(const float *restrict z, float inv, int8_t *restrict out, int64_t n) {
    for (int64_t j = 0; j < n; j++) out[j] = (int8_t)(int32_t)rintf(z[j] * inv);
}

ARNQ_VECTOR_CLONES static void int8_div_loop(const float *restrict z, float scale, int8_t *restrict out, int64_t n) {
    for (int64_t j = 0; j < n; j++) out[j] = (int8_t)(int32_t)rintf(z[j] / scale);
}

ARNQ_VECTOR_CLONES static void fp8_positive_nan_loop(const float *restrict q, uint8_t *restrict codes, int64_t n) {
    for (int64_t j = 0; j < n; j++) codes[j] = q[j] != q[j] ? (uint8_t)(codes[j] & 0x7F) : codes[j];
}

/* ---- the names arnq_loops.h declares ---------------------------------------------------------
 * Plain wrappers of the static clones: GCC exports the ifunc resolver of a non-static
 * target_clones function whatever its visibility, and these are internal. */

void arnq_add_square_bf16(const uint16_t *a, const uint16_t *b, float *x, float *q, int64_t n) {
    add_square_bf16_loop(a, b, x, q, n);
}

void arnq_normalise(float *x, float rstd, const float *gamma, const float *beta, int64_t n) {
    normalise_loop(x, rstd, gamma, beta, n);
}

void arnq_norm_smooth(const float *x, float rstd, const float *gamma, const float *beta, const float *s0,
                      const float *s1, float *y, int count, uint32_t m[2], int64_t n) {
    norm_smooth_loop(x, rstd, gamma, beta, s0, s1, y, count, m, n);
}

void arnq_int8_from_y(const float *y, const float *s0, const float *s1, float f0, float f1, int8_t *out0,
                      int8_t *out1, int count, int divide, int64_t n) {
    int8_from_y_loop(y, s0, s1, f0, f1, out0, out1, count, divide, n);
}

uint32_t arnq_smooth_absmax(const float *y, const float *s, float *z, int64_t n) {
    return smooth_absmax_loop(y, s, z, n);
}

void arnq_mul_scalar(const float *a, float s, float *out, int64_t n) { mul_scalar_loop(a, s, out, n); }
void arnq_div_scalar(const float *a, float s, float *out, int64_t n) { div_scalar_loop(a, s, out, n); }
void arnq_int8_mul(const float *z, float inv, int8_t *out, int64_t n) { int8_mul_loop(z, inv, out, n); }
void arnq_int8_div(const float *z, float scale, int8_t *out, int64_t n) { int8_div_loop(z, scale, out, n); }
void arnq_fp8_positive_nan(const float *q, uint8_t *codes, int64_t n) { fp8_positive_nan_loop(q, codes, n); }
