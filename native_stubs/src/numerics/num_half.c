/* float32 <-> fp16 / bf16, exact bit manipulation (no reliance on the host FPU's half support). */
#include "num_config.h" /* first: compile options */
#include "numerics.h"
#include "num_bits.h"
#include "num_dispatch.h"
#include "num_half_avx2.h"
#include "num_narrow.h"

float num_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1Fu;
    uint32_t man = h & 0x3FFu;
    if (exp == 0x1Fu) /* inf / NaN: keep payload bits */
        return num_bits_f32(sign | 0x7F800000u | (man << 13));
    if (exp != 0)
        return num_bits_f32(sign | ((exp + 112u) << 23) | (man << 13));
    /* zero or subnormal: man * 2^-24 is exact in float32 */
    float v = (float)man * 0x1p-24f;
    return num_bits_f32(sign | num_f32_bits(v));
}

float num_bf16_to_f32(uint16_t b)
{
    return num_bits_f32((uint32_t)b << 16);
}

/* ---- float32 -> fp16 / bf16: the shared rounding engine (num_narrow.h) ---- */

NUM_INLINE uint16_t f16_encode(float f, int round, num_narrow_rules R)
{
    return (uint16_t)num_narrow_encode(&NUM_FMT_F16, round, R, num_f32_bits(f));
}

/* bf16 shares float32's exponent range, so nearest-even is a single add on the bits (0x7FFF plus
 * the bit that becomes the last one); a carry runs into the exponent and, past max, into inf.
 * About twice as fast as the general engine, and RINT is what operators use. */
NUM_INLINE uint16_t bf16_rint_encode(uint32_t x, num_narrow_rules R)
{
    uint32_t sign = x >> 31, ax = x & 0x7FFFFFFFu;
    uint32_t mag = ((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16) & 0x7FFFu;
    uint32_t past_max = num_sel(ax == 0x7F800000u, R.inf_mag,
                                num_sel(sign, R.overflow_neg, R.overflow_pos));
    mag = num_sel(mag > 0x7F7Fu, past_max, mag);
    return (uint16_t)num_sel(ax > 0x7F800000u, num_sel(sign, R.nan_neg, R.nan_pos),
                             (sign << 15) | mag);
}

NUM_INLINE uint16_t bf16_encode(float f, int round, num_narrow_rules R)
{
    if (round == NUM_RINT) /* a compile-time constant in the array loops */
        return bf16_rint_encode(num_f32_bits(f), R);
    return (uint16_t)num_narrow_encode(&NUM_FMT_BF16, round, R, num_f32_bits(f));
}

uint16_t num_f32_to_f16_mode(float f, int mode)
{
    return (uint16_t)num_narrow_encode_mode(&NUM_FMT_F16, num_f32_bits(f), mode);
}

uint16_t num_f32_to_bf16_mode(float f, int mode)
{
    return bf16_encode(f, mode & NUM_ROUND_MASK, num_narrow_rules_for(&NUM_FMT_BF16, mode));
}

/* The contract conversions are the engine with NUM_RINT (one implementation, tested once). */
uint16_t num_f32_to_f16(float f) { return num_f32_to_f16_mode(f, NUM_RINT); }
uint16_t num_f32_to_bf16(float f) { return num_f32_to_bf16_mode(f, NUM_RINT); }

/* ---- the plain NUM_RINT arrays (no flags): what xOut-style outputs use, on a lean engine ----
 * Same results as the general engine with mode NUM_RINT (the numerics tests compare both against
 * the reference): nearest-even, overflow and +-inf -> +-inf, NaN -> canonical quiet NaN with the
 * sign kept. Fewer operations than the rules-driven engine, so each loop stays in registers. */

/* bf16: the add-on-the-bits rounding; a carry past 0x7F7F lands exactly on the inf code. */
NUM_INLINE uint16_t bf16_rne(float f)
{
    uint32_t x = num_f32_bits(f);
    uint32_t rounded = (x + 0x7FFFu + ((x >> 16) & 1u)) >> 16;
    uint32_t nan = ((x >> 16) & 0x8000u) | 0x7FC0u;
    return (uint16_t)num_sel((int32_t)(x & 0x7FFFFFFFu) > 0x7F800000, nan, rounded);
}

/* fp16: normals (|x| >= 2^-14) round on the rebiased bits like bf16, then clamp at the inf code
 * (a carry past 0x7BFF gives 0x7C00; larger magnitudes and inf are clamped to it); subnormals
 * are the 24-bit significand shifted right with nearest-even (past 25 bits: below half, 0). */
NUM_INLINE uint16_t f16_rne(float f)
{
    uint32_t x = num_f32_bits(f);
    uint32_t sign = (x >> 16) & 0x8000u, ax = x & 0x7FFFFFFFu;
    uint32_t normal = (ax - 0x38000000u + 0x0FFFu + ((ax >> 13) & 1u)) >> 13; /* 112 << 23: rebias */
    normal = normal < 0x7C00u ? normal : 0x7C00u;
    uint32_t efield = ax >> 23;
    uint32_t m = (ax & 0x007FFFFFu) | num_sel(efield != 0, 0x00800000u, 0u);
    uint32_t shift = 126u - efield - (uint32_t)(efield == 0); /* fp32 subnormals: 126, like e = 1 */
    shift = shift - 1u < 24u ? shift : 25u;   /* >= 14 where used (|x| < 2^-14); never 0 (UB below) */
    uint32_t q = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    uint32_t sub = q + (uint32_t)((int32_t)(rem + (q & 1u)) > (int32_t)half); /* < 2^25: signed is exact */
    uint32_t mag = num_sel(ax < 0x38800000u, sub, normal);
    return (uint16_t)num_sel((int32_t)ax > 0x7F800000, sign | 0x7E00u, sign | mag);
}

NUM_INLINE uint16_t f16_rne_fn(float f, int round, num_narrow_rules R) { return f16_rne(f); }
NUM_INLINE uint16_t bf16_rne_fn(float f, int round, num_narrow_rules R) { return bf16_rne(f); }

/* fp16, every mode: the rules-driven engine (plain NUM_RINT on the lean one). */
NUM_ARRAY_BODY(num_f32_to_f16_modes_n, uint16_t)
{
    num_narrow_rules rules = num_narrow_rules_for(&NUM_FMT_F16, mode);
    if (mode == NUM_RINT)
        NUM_ARRAY_LOOP(f16_rne_fn, rules, in, out, n, NUM_RINT);
    else
        NUM_ARRAY_LOOP(f16_encode, rules, in, out, n, mode);
}
NUM_ARRAY_DISPATCH(num_f32_to_f16_modes_n, uint16_t)

/* bf16, every mode: the rules-driven engine (plain NUM_RINT on the lean one). */
NUM_ARRAY_BODY(num_f32_to_bf16_modes_n, uint16_t)
{
    num_narrow_rules rules = num_narrow_rules_for(&NUM_FMT_BF16, mode);
    if (mode == NUM_RINT)
        NUM_ARRAY_LOOP(bf16_rne_fn, rules, in, out, n, NUM_RINT);
    else
        NUM_ARRAY_LOOP(bf16_encode, rules, in, out, n, mode);
}
NUM_ARRAY_DISPATCH(num_f32_to_bf16_modes_n, uint16_t)

#if NUM_HAVE_AVX2_ENGINES
/* bf16 with plain NUM_RINT on AVX2: the shared eight-lane engine (num_half_avx2.h), which packs
 * the codes without the compiler's masking. */
__attribute__((target("avx2"))) static void bf16_rint_avx2(const float *restrict in,
                                                           uint16_t *restrict out, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i codes = num_bf16_rint16_avx2(_mm256_loadu_ps(in + i), _mm256_loadu_ps(in + i + 8));
        _mm256_storeu_si256((__m256i *)(out + i), codes);
    }
    for (; i < n; i++)
        out[i] = bf16_rne(in[i]);
}
#endif

#if NUM_HAVE_AVX2_ENGINES
/* fp16 with plain NUM_RINT on AVX2 + F16C (num_half_avx2.h). */
__attribute__((target("avx2,f16c"))) static void f16_rint_avx2(const float *restrict in,
                                                               uint16_t *restrict out, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i codes = num_f16_rint16_avx2(_mm256_loadu_ps(in + i), _mm256_loadu_ps(in + i + 8));
        _mm256_storeu_si256((__m256i *)(out + i), codes);
    }
    for (; i < n; i++)
        out[i] = f16_rne(in[i]);
}

static int cpu_has_f16c(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
}
#endif

void num_f32_to_f16_n(const float *restrict in, uint16_t *restrict out, size_t n, int mode)
{
#if NUM_HAVE_AVX2_ENGINES
    if (mode == NUM_RINT && cpu_has_f16c() && num_f16_conversion_exact()) {
        f16_rint_avx2(in, out, n);
        return;
    }
#endif
    num_f32_to_f16_modes_n(in, out, n, mode);
}

void num_f32_to_bf16_n(const float *restrict in, uint16_t *restrict out, size_t n, int mode)
{
#if NUM_HAVE_AVX2_ENGINES
    if (mode == NUM_RINT && num_cpu_has_avx2()) {
        bf16_rint_avx2(in, out, n);
        return;
    }
#endif
    num_f32_to_bf16_modes_n(in, out, n, mode);
}
