/* AVX2 loops of the AddRmsNormDynamicQuant kernel (see arnq_avx2.h). */
#include "arnq_opt.h" /* first: compile options */

#include <stddef.h>

#include "arnq_avx2.h"
#include "num_half_avx2.h"

#if NUM_HAVE_AVX2_ENGINES

int arnq_avx2_available(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
}

int arnq_avx2_f16_exact(void) { return num_f16_conversion_exact(); }

#define AVX2 __attribute__((target("avx2,f16c")))
#define INLINE_AVX2 static inline __attribute__((always_inline, target("avx2,f16c")))

/* How far ahead pass 1 prefetches its inputs (from main memory, typically): measured on Zen 4,
 * 256 - 1024 bytes do best; none costs ~10 %, much more pollutes the cache. */
#define PREFETCH_BYTES 512

INLINE_AVX2 void store32(void *p, __m256i v, int stream) {
    if (stream) _mm256_stream_si256((__m256i *)p, v);
    else _mm256_storeu_si256((__m256i *)p, v);
}

/* 32 INT8 codes from four vectors of 8 rounded quotients (|q| < 127.5: the packs never saturate). */
INLINE_AVX2 __m256i int8_codes(const __m256i k[4]) {
    __m256i lo = _mm256_packs_epi32(k[0], k[1]), hi = _mm256_packs_epi32(k[2], k[3]);
    /* both packs work per 128-bit half: dword i of the result holds 4 codes of vector i % 4 */
    return _mm256_permutevar8x32_epi32(_mm256_packs_epi16(lo, hi), _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

/* The arguments in locals: the int8 stores may alias anything, so through the struct every
 * pointer would be reloaded after each store. */
typedef struct {
    const float *restrict x, *restrict gamma, *restrict beta, *restrict s0, *restrict s1;
    float *restrict y;
    int8_t *restrict out0, *restrict out1;
    const uint16_t *restrict a, *restrict b;
    float *restrict xn, *restrict q;
    uint16_t *restrict xo;
} step_ptrs;

/* Pass 3 of columns j .. j + 31 (int8_body in arnq_loops.c). cvtps2dq rounds in the current
 * rounding mode, as rintf does (nearest even). */
INLINE_AVX2 void quant32(const step_ptrs *s, int64_t j, __m256 f0, __m256 f1, int two, int divide, int stream) {
    __m256i k0[4], k1[4];
    for (int u = 0; u < 4; u++) {
        int64_t c = j + 8 * u;
        __m256 y = _mm256_loadu_ps(s->y + c);
        __m256 z0 = _mm256_mul_ps(y, _mm256_loadu_ps(s->s0 + c));
        k0[u] = _mm256_cvtps_epi32(divide ? _mm256_div_ps(z0, f0) : _mm256_mul_ps(z0, f0));
        if (two) {
            __m256 z1 = _mm256_mul_ps(y, _mm256_loadu_ps(s->s1 + c));
            k1[u] = _mm256_cvtps_epi32(divide ? _mm256_div_ps(z1, f1) : _mm256_mul_ps(z1, f1));
        }
    }
    store32(s->out0 + j, int8_codes(k0), stream);
    if (two) store32(s->out1 + j, int8_codes(k1), stream);
}

/* Pass 2 of columns j .. j + 31 (norm_smooth_body; the max of unsigned bits does not depend on the
 * order). */
INLINE_AVX2 void norm32(const step_ptrs *s, int64_t j, __m256 rstd, __m256i *m0, __m256i *m1, int beta,
                        int two) {
    const __m256i magnitude = _mm256_set1_epi32(0x7FFFFFFF);
    for (int u = 0; u < 4; u++) {
        int64_t c = j + 8 * u;
        __m256 y = _mm256_mul_ps(_mm256_loadu_ps(s->x + c), rstd);
        y = _mm256_mul_ps(y, _mm256_loadu_ps(s->gamma + c));
        if (beta) y = _mm256_add_ps(y, _mm256_loadu_ps(s->beta + c));
        _mm256_storeu_ps(s->y + c, y);
        __m256i z0 = _mm256_castps_si256(_mm256_mul_ps(y, _mm256_loadu_ps(s->s0 + c)));
        *m0 = _mm256_max_epu32(*m0, _mm256_and_si256(z0, magnitude));
        if (two) {
            __m256i z1 = _mm256_castps_si256(_mm256_mul_ps(y, _mm256_loadu_ps(s->s1 + c)));
            *m1 = _mm256_max_epu32(*m1, _mm256_and_si256(z1, magnitude));
        }
    }
}

enum { ADD_NONE, ADD_BF16, ADD_F16 }; /* pass 1 of the next row, and its input dtype */

/* Pass 1 of columns j .. j + 31 (add_square_bf16_body / arnq_add_square_f16, then the engines of
 * num_f32_to_bf16_n / num_f32_to_f16_n), prefetching one line of each input PREFETCH_BYTES ahead.
 * fp16 inputs widen with vcvtph2ps, which is exact but for quietening signalling NaNs: that
 * changes no sum (x86 returns the first NaN operand, quietened, whether it was quiet or not). */
INLINE_AVX2 void add32(const step_ptrs *s, int64_t j, int add, int with_q, int stream) {
    _mm_prefetch((const char *)(s->a + j) + PREFETCH_BYTES, _MM_HINT_T0);
    _mm_prefetch((const char *)(s->b + j) + PREFETCH_BYTES, _MM_HINT_T0);
    __m256 v[4];
    for (int u = 0; u < 4; u++) {
        int64_t c = j + 8 * u;
        __m128i a = _mm_loadu_si128((const __m128i *)(s->a + c)), b = _mm_loadu_si128((const __m128i *)(s->b + c));
        if (add == ADD_F16)
            v[u] = _mm256_add_ps(_mm256_cvtph_ps(a), _mm256_cvtph_ps(b));
        else
            v[u] = _mm256_add_ps(_mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(a), 16)),
                                 _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(b), 16)));
        _mm256_storeu_ps(s->xn + c, v[u]);
        if (with_q) _mm256_storeu_ps(s->q + c, _mm256_mul_ps(v[u], v[u]));
    }
    if (add == ADD_F16) {
        store32(s->xo + j, num_f16_rint16_avx2(v[0], v[1]), stream);
        store32(s->xo + j + 16, num_f16_rint16_avx2(v[2], v[3]), stream);
    } else {
        store32(s->xo + j, num_bf16_rint16_avx2(v[0], v[1]), stream);
        store32(s->xo + j + 16, num_bf16_rint16_avx2(v[2], v[3]), stream);
    }
}

INLINE_AVX2 uint32_t hmax_u32(__m256i v) {
    __m128i m = _mm_max_epu32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    m = _mm_max_epu32(m, _mm_shuffle_epi32(m, 0x4E));
    m = _mm_max_epu32(m, _mm_shuffle_epi32(m, 0xB1));
    return (uint32_t)_mm_cvtsi128_si32(m);
}

enum { ROW_NONE, ROW_QUANT, ROW_NORM }; /* what a step does for the current row */

/* One instance per combination of the flags (constants once inlined). */
INLINE_AVX2 void step_body(const arnq_avx2_step_args *args, int64_t n, int row, int beta, int two, int divide,
                           int add, int with_q, int stream) {
    const step_ptrs s = {args->x, args->gamma, args->beta, args->s0, args->s1, args->y, args->out0, args->out1,
                         args->a, args->b, args->xn, args->q, args->xo};
    const __m256 rstd = _mm256_set1_ps(args->rstd), f0 = _mm256_set1_ps(args->f0), f1 = _mm256_set1_ps(args->f1);
    __m256i m0 = _mm256_setzero_si256(), m1 = m0;
    for (int64_t j = 0; j < n; j += ARNQ_AVX2_COLS) {
        if (row == ROW_QUANT) quant32(&s, j, f0, f1, two, divide, stream);
        if (row == ROW_NORM) norm32(&s, j, rstd, &m0, &m1, beta, two);
        if (add) add32(&s, j, add, with_q, stream);
    }
    if (row == ROW_NORM) {
        uint32_t a = hmax_u32(m0), b = hmax_u32(m1);
        args->m[0] = a > args->m[0] ? a : args->m[0];
        if (two) args->m[1] = b > args->m[1] ? b : args->m[1];
    }
}

/* The instances: pass 1 alone; pass 3 (one or two outputs, divide or multiply) or pass 2 (with or
 * without beta, one or two outputs) of the current row, alone or with pass 1 of the next (either
 * input dtype, with or without the squares); streaming stores or not. */
#define ROW_CASES(add, with_q, stream)                                                             \
    switch (norm * 4 + (norm ? beta : divide) * 2 + two) {                                         \
    case 0: step_body(s, n, ROW_QUANT, 0, 0, 0, add, with_q, stream); break;                       \
    case 1: step_body(s, n, ROW_QUANT, 0, 1, 0, add, with_q, stream); break;                       \
    case 2: step_body(s, n, ROW_QUANT, 0, 0, 1, add, with_q, stream); break;                       \
    case 3: step_body(s, n, ROW_QUANT, 0, 1, 1, add, with_q, stream); break;                       \
    case 4: step_body(s, n, ROW_NORM, 0, 0, 0, add, with_q, stream); break;                        \
    case 5: step_body(s, n, ROW_NORM, 0, 1, 0, add, with_q, stream); break;                        \
    case 6: step_body(s, n, ROW_NORM, 1, 0, 0, add, with_q, stream); break;                        \
    default: step_body(s, n, ROW_NORM, 1, 1, 0, add, with_q, stream); break;                       \
    }

#define ADD_CASES(stream)                                                                          \
    if (s->out0 == NULL && !norm) {                                                                \
        switch (add * 2 + with_q) {                                                                \
        case ADD_BF16 * 2: step_body(s, n, ROW_NONE, 0, 0, 0, ADD_BF16, 0, stream); break;         \
        case ADD_BF16 * 2 + 1: step_body(s, n, ROW_NONE, 0, 0, 0, ADD_BF16, 1, stream); break;     \
        case ADD_F16 * 2: step_body(s, n, ROW_NONE, 0, 0, 0, ADD_F16, 0, stream); break;           \
        default: step_body(s, n, ROW_NONE, 0, 0, 0, ADD_F16, 1, stream); break;                    \
        }                                                                                          \
    } else if (add == ADD_NONE) {                                                                  \
        ROW_CASES(ADD_NONE, 0, stream)                                                             \
    } else if (add == ADD_BF16 && with_q) {                                                        \
        ROW_CASES(ADD_BF16, 1, stream)                                                             \
    } else if (add == ADD_BF16) {                                                                  \
        ROW_CASES(ADD_BF16, 0, stream)                                                             \
    } else if (with_q) {                                                                           \
        ROW_CASES(ADD_F16, 1, stream)                                                              \
    } else {                                                                                       \
        ROW_CASES(ADD_F16, 0, stream)                                                              \
    }

AVX2 void arnq_avx2_step(const arnq_avx2_step_args *s, int64_t n) {
    int norm = s->m != NULL, beta = s->beta != NULL, two = s->count > 1, divide = s->divide != 0;
    int add = s->a == NULL ? ADD_NONE : s->half ? ADD_F16 : ADD_BF16, with_q = s->q != NULL;
    if (s->out0 == NULL && !norm && !add) return;
    if (s->stream) {
        ADD_CASES(1)
    } else {
        ADD_CASES(0)
    }
}

/* ---- 64-lane reduce-sum, adjacent pairs ------------------------------------------------------
 * Lanes 0..63 in eight vectors. Level 1 adds lanes (2i, 2i+1): the even and odd lanes of two
 * vectors are gathered with shufps (within each 128-bit half) and added, even first, leaving the
 * level-1 sums in a permuted but known order in which, again, every sum's partner sits next to it
 * (even position = lower index). So level 2 is the same step; after it the two 128-bit halves hold
 * the even and the odd partners of level 3; levels 4-6 run on the four / two / one remaining. */
INLINE_AVX2 __m256 pair_sums(__m256 a, __m256 b) {
    __m256 even = _mm256_shuffle_ps(a, b, 0x88), odd = _mm256_shuffle_ps(a, b, 0xDD);
    return _mm256_add_ps(even, odd);
}

/* Levels 1-3 of 32 lanes (four vectors): the four level-3 sums, in order. */
INLINE_AVX2 __m128 tree32_to4(__m256 v0, __m256 v1, __m256 v2, __m256 v3) {
    __m256 l2 = pair_sums(pair_sums(v0, v1), pair_sums(v2, v3)); /* [Q0 Q2 Q4 Q6 | Q1 Q3 Q5 Q7] */
    return _mm_add_ps(_mm256_castps256_ps128(l2), _mm256_extractf128_ps(l2, 1));
}

INLINE_AVX2 float tree64_vec(const __m256 v[8]) {
    __m128 r0 = tree32_to4(v[0], v[1], v[2], v[3]), r1 = tree32_to4(v[4], v[5], v[6], v[7]);
    __m128 s = _mm_add_ps(_mm_shuffle_ps(r0, r1, 0x88), _mm_shuffle_ps(r0, r1, 0xDD)); /* level 4 */
    __m128 t = _mm_add_ps(_mm_shuffle_ps(s, s, 0x88), _mm_shuffle_ps(s, s, 0xDD));     /* level 5 */
    return _mm_cvtss_f32(t) + _mm_cvtss_f32(_mm_shuffle_ps(t, t, 1));                   /* level 6 */
}

AVX2 void arnq_avx2_square_trees(const float *a, const float *b, int64_t chunks, float *partials) {
    for (int64_t c = 0; c < chunks; c++) {
        __m256 v[8];
        for (int u = 0; u < 8; u++) {
            __m256 va = _mm256_loadu_ps(a + 64 * c + 8 * u);
            v[u] = _mm256_mul_ps(va, va);
            if (b) {
                __m256 vb = _mm256_loadu_ps(b + 64 * c + 8 * u);
                v[u] = _mm256_add_ps(v[u], _mm256_mul_ps(vb, vb));
            }
        }
        partials[c] = tree64_vec(v);
    }
}

#else

int arnq_avx2_available(void) { return 0; }
int arnq_avx2_f16_exact(void) { return 0; }
void arnq_avx2_step(const arnq_avx2_step_args *s, int64_t n) { (void)s; (void)n; }
void arnq_avx2_square_trees(const float *a, const float *b, int64_t chunks, float *partials) {
    (void)a; (void)b; (void)chunks; (void)partials;
}

#endif
