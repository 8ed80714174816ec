/*
 * float32 -> bf16 / fp16 with NUM_RINT, eight lanes at a time on AVX2: the engines of the AVX2 paths
 * of num_f32_to_bf16_n / num_f32_to_f16_n (num_half.c), the bf16 one shared with operator loops
 * that narrow a row while they compute it (the AddRmsNormDynamicQuant xOut), so that there is one
 * implementation, the one the numerics tests sweep. Same results as bf16_rne in num_half.c: nearest-even by adding 0x7FFF plus the last kept
 * bit to the bits (a carry past the largest finite code lands exactly on inf), NaN -> canonical
 * quiet NaN 0x7FC0 with the sign kept.
 *
 * Only for functions compiled for AVX2 (target("avx2"); "avx2,f16c" for fp16) on x86-64 with GCC
 * or Clang.
 */
#ifndef PYACLNN_NUM_HALF_AVX2_H
#define PYACLNN_NUM_HALF_AVX2_H

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define NUM_HAVE_AVX2_ENGINES 1

/* The bf16 codes of v, one in the low half of each 32-bit lane (the high half is 0). */
static inline __attribute__((always_inline, target("avx2"))) __m256i num_bf16_rint_avx2(__m256 v)
{
    __m256i bits = _mm256_castps_si256(v);
    __m256i high = _mm256_srli_epi32(bits, 16);
    __m256i last = _mm256_and_si256(high, _mm256_set1_epi32(1));
    __m256i rounded = _mm256_add_epi32(_mm256_add_epi32(bits, _mm256_set1_epi32(0x7FFF)), last);
    rounded = _mm256_srli_epi32(rounded, 16);
    __m256i nan = _mm256_or_si256(_mm256_and_si256(high, _mm256_set1_epi32(0x8000)),
                                  _mm256_set1_epi32(0x7FC0));
    __m256i is_nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    return _mm256_blendv_epi8(rounded, nan, is_nan);
}

/* Sixteen bf16 codes of lo (elements 0..7) and hi (8..15), in order. */
static inline __attribute__((always_inline, target("avx2"))) __m256i num_bf16_rint16_avx2(__m256 lo,
                                                                                        __m256 hi)
{
    __m256i packed = _mm256_packus_epi32(num_bf16_rint_avx2(lo), num_bf16_rint_avx2(hi));
    return _mm256_permute4x64_epi64(packed, 0xD8); /* packus interleaves the 128-bit halves */
}

/* fp16 with NUM_RINT, eight lanes: the F16C conversion with round-to-nearest-even from the
 * immediate (MXCSR.RC is not used), the NaN lanes replaced by the canonical quiet NaN 0x7E00 with
 * the sign kept (the instruction keeps the top payload bits). fp32 subnormal inputs give +-0 with
 * or without MXCSR.DAZ (every one of them rounds to zero in fp16); callers check that MXCSR.FTZ is
 * clear (num_f16_conversion_exact), so fp16 subnormal results are not flushed. Same results as
 * f16_rne in num_half.c. The codes are in the low half of each 32-bit lane. */
static inline __attribute__((always_inline, target("avx2,f16c"))) __m256i num_f16_rint_avx2(__m256 v)
{
    __m256i codes = _mm256_cvtepu16_epi32(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
    __m256i sign = _mm256_and_si256(_mm256_srli_epi32(_mm256_castps_si256(v), 16), _mm256_set1_epi32(0x8000));
    __m256i nan = _mm256_or_si256(sign, _mm256_set1_epi32(0x7E00));
    __m256i is_nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    return _mm256_blendv_epi8(codes, nan, is_nan);
}

/* Sixteen fp16 codes of lo (elements 0..7) and hi (8..15), in order. */
static inline __attribute__((always_inline, target("avx2,f16c"))) __m256i num_f16_rint16_avx2(__m256 lo,
                                                                                             __m256 hi)
{
    __m256i packed = _mm256_packus_epi32(num_f16_rint_avx2(lo), num_f16_rint_avx2(hi));
    return _mm256_permute4x64_epi64(packed, 0xD8);
}

/* 1 when the F16C engine gives the exact results: MXCSR.FTZ (bit 15) clear. */
static inline int num_f16_conversion_exact(void)
{
    return (_mm_getcsr() & 0x8000u) == 0;
}

#else
#define NUM_HAVE_AVX2_ENGINES 0
#endif

#endif
