/* Bit casts between float32 and uint32 (memcpy compiles to a register move). */
#ifndef PYACLNN_NUM_BITS_H
#define PYACLNN_NUM_BITS_H
#include <stdint.h>
#include <string.h>

/* For the per-element engines: always inlined, so each array loop sees one straight-line body it
 * can vectorise (GCC would otherwise keep the larger engines as calls). */
#if defined(__GNUC__)
#define NUM_INLINE static inline __attribute__((always_inline))
#else
#define NUM_INLINE static inline
#endif

NUM_INLINE uint32_t num_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

NUM_INLINE float num_bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
/* cond ? a : b for cond in {0, 1}, as arithmetic: GCC's jump threading turns chains of ?: into
 * branches that its vectoriser then refuses ("control flow in loop"); masks stay straight-line. */
NUM_INLINE uint32_t num_sel(uint32_t cond, uint32_t a, uint32_t b)
{
    return b ^ ((a ^ b) & (0u - cond));
}

#endif
