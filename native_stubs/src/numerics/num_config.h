/*
 * Included first by every numerics .c file: how the conversions are compiled.
 *
 * The array conversions run over whole tensors (and the tests sweep millions of values), so they
 * are compiled with -O3 whatever the build type: GCC vectorises the branch-free engines only at
 * -O3 (its -O2 cost model refuses), and a Debug (-O0) build would be ~20x slower. The pragma must
 * come before any function definition, hence this header goes first.
 */
#ifndef PYACLNN_NUM_CONFIG_H
#define PYACLNN_NUM_CONFIG_H

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3")
#endif

/* NUM_ARRAY_DISPATCH(name, out_t) defines `void name(in, out, n, mode)` from the always-inlined
 * `name##_body`: on x86-64 compiled twice, for AVX2 and for the baseline, and the AVX2 copy is
 * used when the CPU has it (the engines shift each lane by a different amount, which SSE2
 * cannot). A plain dispatch rather than target_clones: GCC 12 exports the ifunc resolvers of
 * those, despite hidden visibility. */
#if defined(__x86_64__) && defined(__GNUC__)
static inline int num_cpu_has_avx2(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2");
}

#define NUM_ARRAY_DISPATCH(name, out_t)                                                         \
    __attribute__((target("avx2"))) static void name##_avx2(                                    \
        const float *restrict in, out_t *restrict out, size_t n, int mode)                      \
    {                                                                                           \
        name##_body(in, out, n, mode);                                                          \
    }                                                                                           \
    static void name##_base(const float *restrict in, out_t *restrict out, size_t n, int mode)  \
    {                                                                                           \
        name##_body(in, out, n, mode);                                                          \
    }                                                                                           \
    void name(const float *restrict in, out_t *restrict out, size_t n, int mode)                \
    {                                                                                           \
        if (num_cpu_has_avx2())                                                                 \
            name##_avx2(in, out, n, mode);                                                      \
        else                                                                                    \
            name##_base(in, out, n, mode);                                                      \
    }
#else
#define NUM_ARRAY_DISPATCH(name, out_t)                                                         \
    void name(const float *restrict in, out_t *restrict out, size_t n, int mode)                \
    {                                                                                           \
        name##_body(in, out, n, mode);                                                          \
    }
#endif

/* The body of an array conversion (then NUM_ARRAY_DISPATCH(name, out_t) after it). */
#define NUM_ARRAY_BODY(name, out_t)                                                             \
    static inline __attribute__((always_inline)) void name##_body(                              \
        const float *restrict in, out_t *restrict out, size_t n, int mode)

#endif
