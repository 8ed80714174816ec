/*
 * Exact number-format conversions used by the operators (one place, exhaustively tested).
 * Internal to libopapi (hidden visibility); tests reach vectorised wrappers exported as
 * pyaclnn_stub_num_* (numerics_export.h / numerics_export.c).
 *
 * Every float32 -> narrow conversion takes an `int mode` = one num_round value | num_flags bits.
 * The facts behind each rule (which NPU instruction, which rounding, which overflow rule) are in
 * /work/shared/spec/grouped_dynamic_mx_quant.md §4.6-§5 and
 * /work/shared/spec/amp_update_scale_and_add_rms_norm_dynamic_quant.md B.9-B.10; the comment on
 * each function says what it implements.
 */
#ifndef PYACLNN_NUMERICS_H
#define PYACLNN_NUMERICS_H
#include <stddef.h>
#include <stdint.h>

/* Hidden even in a build without -fvisibility=hidden: libopapi exports only the
 * pyaclnn_stub_num_* wrappers. */
#if defined(__GNUC__)
#pragma GCC visibility push(hidden)
#endif

/* ---- Contract used by operators from day one (fixed names and semantics) --------------------- */

/* Exact widening. */
float num_f16_to_f32(uint16_t h);
float num_bf16_to_f32(uint16_t b);
/* Round to nearest even; overflow -> +-inf; NaN -> quiet NaN with the sign kept (canonical:
 * 0x7E00 / 0x7FC0 | sign, payload dropped). */
uint16_t num_f32_to_f16(float f);
uint16_t num_f32_to_bf16(float f);

/* ---- Modes ----------------------------------------------------------------------------------- */

/* Rounding modes, named after the AscendC RoundMode each one emulates. */
typedef enum num_round {
    NUM_RINT = 0,   /* CAST_RINT: nearest, ties to even */
    NUM_ROUND = 1,  /* CAST_ROUND: nearest, ties away from zero */
    NUM_FLOOR = 2,  /* CAST_FLOOR: toward -inf */
    NUM_CEIL = 3,   /* CAST_CEIL: toward +inf */
    NUM_TRUNC = 4,  /* CAST_TRUNC: toward zero */
    NUM_ODD = 5,    /* CAST_ODD: round to odd (fp16/bf16 only) */
    NUM_HYBRID = 6, /* CAST_HYBRID: HiFloat8 only (see num_f32_to_hif8) */
} num_round;

enum {
    NUM_ROUND_MASK = 0x0F,
    /* SatMode::SAT: overflow and +-inf become +-max finite instead of inf (or NaN). */
    NUM_SAT = 0x10,
    /* NaN becomes +0 (code 0x00). The NPU does this in SAT mode unless CTRL[50] = 1. */
    NUM_NAN_TO_ZERO = 0x20,
};

/* Which round modes a conversion accepts (tests and the export layer check modes with it). */
int num_mode_valid_float(int mode);  /* fp16, bf16: RINT ROUND FLOOR CEIL TRUNC ODD + flags */
int num_mode_valid_minifloat(int mode); /* fp8, fp4: RINT ROUND FLOOR CEIL TRUNC + flags */
int num_mode_valid_hif8(int mode);   /* ROUND HYBRID + flags */
int num_mode_valid_int(int mode);    /* RINT ROUND FLOOR CEIL TRUNC + NUM_SAT */
int num_mode_valid_e8m0(int mode);   /* RINT ROUND FLOOR CEIL TRUNC */

/* ---- fp16 / bf16 with an explicit mode ------------------------------------------------------- */
/* Overflow: SAT -> +-max; otherwise IEEE (to-nearest -> inf, directed modes -> inf only when
 * rounding away from zero). +-inf -> +-max under SAT. NaN -> canonical quiet NaN with the sign
 * kept, or +0 with NUM_NAN_TO_ZERO. mode = NUM_RINT gives exactly num_f32_to_f16/bf16. */
uint16_t num_f32_to_f16_mode(float f, int mode);
uint16_t num_f32_to_bf16_mode(float f, int mode);

/* ---- FLOAT8_E4M3FN / FLOAT8_E5M2 (OCP) ------------------------------------------------------- */
/* The NPU casts fp32 -> fp8 with CAST_RINT only (other modes are offered for completeness).
 * SAT: |v| beyond max and +-inf -> +-448 (0x7E/0xFE) / +-57344 (0x7B/0xFB).
 * Without SAT: E4M3FN overflow and +-inf -> NaN 0x7F/0xFF (no inf code); E5M2 -> +-inf.
 * NaN -> NaN code (E4M3FN 0x7F/0xFF, E5M2 0x7E/0xFE) or 0x00 with NUM_NAN_TO_ZERO.
 * Subnormals per IEEE; the sign of zero is kept (-tiny -> 0x80). */
uint8_t num_f32_to_fp8_e4m3fn(float f, int mode);
uint8_t num_f32_to_fp8_e5m2(float f, int mode);
float num_fp8_e4m3fn_to_f32(uint8_t c);
float num_fp8_e5m2_to_f32(uint8_t c);

/* ---- HIFLOAT8 -------------------------------------------------------------------------------- */
/* fp32 -> HiF8 per the AscendC Cast pseudo-code. NUM_ROUND: ties away from zero.
 * NUM_HYBRID: |exponent| <= 3 as ROUND; elsewhere round up iff the 14 dropped bits starting at
 * the rounding bit are >= the source's 14 least significant bits (values that are exactly
 * representable stay unchanged: spec open question 9, default). |exponent| > 15 or a carry past
 * 1.25*2^15 -> inf code 0x6F/0xEF; SAT turns it into +-32768 (0x6E/0xEE). NaN -> 0x80, or 0x00
 * with NUM_NAN_TO_ZERO. No -0: zero and every magnitude < 2^-23 encode as 0x00. */
uint8_t num_f32_to_hif8(float f, int mode);
float num_hif8_to_f32(uint8_t c);

/* ---- FLOAT4_E2M1 / FLOAT4_E1M2 (one code per call, in the low nibble) ------------------------ */
/* Round onto the grid with the mode (RINT/ROUND/FLOOR/CEIL/TRUNC; FLOOR moves negative values
 * away from zero), always saturate to +-max (6 / 1.75; +-inf too), keep the sign of zero
 * (-0 -> 0x8), NaN -> 0x0. This is the NPU's bf16 -> fp4 cast applied to the kernels' fp32
 * pre-rounded value, i.e. no double rounding through bf16. (The MX kernel's E2M1 pre-rounding
 * would turn +-inf into 0x0; unreachable there, since a block holding inf gets a NaN scale.) */
uint8_t num_f32_to_fp4_e2m1(float f, int mode);
uint8_t num_f32_to_fp4_e1m2(float f, int mode);
float num_fp4_e2m1_to_f32(uint8_t c); /* low nibble used */
float num_fp4_e1m2_to_f32(uint8_t c);

/* ---- FLOAT8_E8M0 (MX scale) ------------------------------------------------------------------ */
/* Code c = 0..254 is 2^(c-127) (no zero), 0xFF = NaN. Encoding drops the sign (as the NPU's
 * bf16 -> e8m0 cast does); NUM_TRUNC/NUM_FLOOR keep the fp32 exponent field (that cast);
 * NUM_CEIL/NUM_ROUND/NUM_RINT round the magnitude onto the powers of two (ROUND: ties up, as
 * ml_dtypes; RINT: ties to the even code). Results clamp to 0x00..0xFE; +-inf -> 0xFE,
 * NaN -> 0xFF, zero -> 0x00. */
uint8_t num_f32_to_e8m0(float f, int mode);
float num_e8m0_to_f32(uint8_t c);

/* ---- Integers -------------------------------------------------------------------------------- */
/* Round with the mode; NUM_SAT: out of range (and +-inf) -> min/max; without it the integer
 * is wrapped to the target width (low bits kept) except +-inf -> max/min. NaN -> 0 always.
 * The kernels' multi-step chains give exactly num_f32_to_int8/int4(v, NUM_RINT | NUM_SAT):
 * int8 on 950: fp32 RINT -> fp16 -> int8 CAST_TRUNC; on 910B: fp32 -> int32 RINT -> fp16 ->
 * int8 CAST_TRUNC; int4: fp32 -> int16 RINT -> fp16 -> int4 RINT (out of range saturating,
 * NaN -> 0: spec open question Q6's default). */
int32_t num_f32_to_int32(float f, int mode);
int8_t num_f32_to_int8(float f, int mode);
int8_t num_f32_to_int4(float f, int mode); /* -8..7 */

/* ---- 4-bit packing: element 2k in the low nibble, 2k+1 in the high nibble -------------------- */
/* n = number of 4-bit elements; packed holds (n + 1) / 2 bytes, an odd tail's high nibble is 0. */
void num_pack4(const uint8_t *nibbles, uint8_t *packed, size_t n);
void num_unpack4(const uint8_t *packed, uint8_t *nibbles, size_t n); /* nibbles 0..15 */
void num_unpack_int4(const uint8_t *packed, int8_t *values, size_t n); /* sign-extended */

/* ---- Array versions (`in` and `out` must not overlap; the mode must be accepted) ------------ */
void num_f32_to_f16_n(const float *restrict in, uint16_t *restrict out, size_t n, int mode);
void num_f32_to_bf16_n(const float *restrict in, uint16_t *restrict out, size_t n, int mode);
void num_f32_to_fp8_e4m3fn_n(const float *restrict in, uint8_t *restrict out, size_t n, int mode);
void num_f32_to_fp8_e5m2_n(const float *restrict in, uint8_t *restrict out, size_t n, int mode);
void num_f32_to_hif8_n(const float *restrict in, uint8_t *restrict out, size_t n, int mode);
void num_f32_to_fp4_e2m1_n(const float *restrict in, uint8_t *restrict out, size_t n, int mode);
void num_f32_to_fp4_e1m2_n(const float *restrict in, uint8_t *restrict out, size_t n, int mode);
void num_f32_to_fp4_e2m1_packed(const float *restrict in, uint8_t *restrict packed, size_t n,
                                int mode);
void num_f32_to_fp4_e1m2_packed(const float *restrict in, uint8_t *restrict packed, size_t n,
                                int mode);
void num_f32_to_e8m0_n(const float *restrict in, uint8_t *restrict out, size_t n, int mode);
void num_f32_to_int32_n(const float *restrict in, int32_t *restrict out, size_t n, int mode);
void num_f32_to_int8_n(const float *restrict in, int8_t *restrict out, size_t n, int mode);
void num_f32_to_int4_n(const float *restrict in, int8_t *restrict out, size_t n, int mode);
void num_f32_to_int4_packed(const float *restrict in, uint8_t *restrict packed, size_t n,
                            int mode);

/* Exported (pyaclnn_stub_num_*) wrappers of all of these, for tests: numerics_export.h. */

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#endif
