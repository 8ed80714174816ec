/*
 * Included first by the arnq kernel files (before any function definition): how they are compiled.
 *
 * -O3 whatever the build type, as numerics/num_config.h does for the conversions: the kernel runs
 * over whole tensors and a Debug (-O0) build would be many times slower. fp-contract=off so that no
 * a*b+c is ever fused behind our back: every fp32 step must round once, as the vector unit does
 * (a fused multiply-add is only used where the spec says so, through fmaf()).
 *
 * ARNQ_VECTOR_CLONES adds an AVX2 clone (picked at load time) to the portable row loops; put it on
 * static functions only (GCC exports the ifunc resolver of a non-static one whatever its
 * visibility). The hot loops also have hand-written AVX2 versions (arnq_avx2.c).
 */
#ifndef PYACLNN_ARNQ_OPT_H
#define PYACLNN_ARNQ_OPT_H

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3", "fp-contract=off")
#endif
#if defined(__clang__)
#pragma clang fp contract(off)
#endif

#if defined(__x86_64__) && defined(__has_attribute)
#if __has_attribute(target_clones) && !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
#define ARNQ_VECTOR_CLONES __attribute__((target_clones("avx2", "default")))
#endif
#endif
#ifndef ARNQ_VECTOR_CLONES
#define ARNQ_VECTOR_CLONES
#endif

#endif
