/*
 * GroupedDynamicMxQuant: the loops over one column tile of a 32-row block, as static inline
 * functions for gmq_tile.c, where they are inlined into one function compiled for AVX-512, AVX2
 * and baseline x86-64 (objdump shows zmm, ymm and xmm vector code in the three). Each (input type, output format, round mode) has its own loop with the
 * element arithmetic of numerics/num_inline.h inlined, so every loop is straight-line code that
 * GCC vectorises.
 *
 * Rows are quantised by one of two loops that give the same bytes:
 *  - exact: widen to float32, multiply by the column's reciprocal scale, convert (num_inl_f32_to_*):
 *    step by step as the kernel does, for every input;
 *  - pow2 (bf16 input, round to nearest even, every column of the tile accepted by
 *    num_inl_pow2_column_*): the same codes from the bf16 bits in 16-bit lanes, twice the lanes
 *    per vector. FP8 codes the loop reports as not exact (num_inl_pow2_exact_*) are redone with
 *    the exact loop.
 */
#ifndef PYACLNN_GMQ_ROWS_H
#define PYACLNN_GMQ_ROWS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gmq_kernel.h"
#include "gmq_scale.h"
#include "num_inline.h"

#define GMQ_LOOP NUM_INLINE

/* ---- block statistic ------------------------------------------------------------------------ */

#define GMQ_ABSMAX_CHUNK 64 /* columns whose running maxima stay in registers across the rows */

/* xm[j] = max over the rows of (rows[i][j] & 0x7FFF): the block statistic every scale uses. */
GMQ_LOOP void gmq_absmax(const uint16_t *const *rows, int nrows, size_t w, uint16_t *restrict xm) {
    size_t j0 = 0;
    for (; j0 + GMQ_ABSMAX_CHUNK <= w; j0 += GMQ_ABSMAX_CHUNK) {
        uint16_t acc[GMQ_ABSMAX_CHUNK] = {0};
        for (int i = 0; i < nrows; i++) {
            const uint16_t *restrict x = rows[i] + j0;
            for (size_t k = 0; k < GMQ_ABSMAX_CHUNK; k++) {
                uint16_t a = x[k] & 0x7FFFu;
                acc[k] = a > acc[k] ? a : acc[k];
            }
        }
        for (size_t k = 0; k < GMQ_ABSMAX_CHUNK; k++) xm[j0 + k] = acc[k];
    }
    for (size_t j = j0; j < w; j++) {
        uint16_t acc = 0;
        for (int i = 0; i < nrows; i++) {
            uint16_t a = rows[i][j] & 0x7FFFu;
            acc = a > acc ? a : acc;
        }
        xm[j] = acc;
    }
}

/* ---- scales of a tile's columns ---------------------------------------------------------------- */

/* One loop per (algorithm, input type): the scale functions inline into straight-line code. */
#define GMQ_SCALE_LOOP(name, widen, expr)                                                         \
    GMQ_LOOP void name(const uint16_t *restrict xm, size_t w, uint8_t *restrict s, float *restrict recip, \
                       uint32_t emax, float inv, uint32_t add) {                                  \
        (void)emax, (void)inv, (void)add; /* each loop uses some of them */                        \
        for (size_t j = 0; j < w; j++) {                                                           \
            uint32_t f32 = widen(xm[j]); /* the block max, exactly */                              \
            gmq_scale sc = expr;                                                                   \
            s[j] = sc.s;                                                                           \
            recip[j] = num_bits_f32((uint32_t)sc.rb << 16);                                        \
        }                                                                                          \
    }

/* scale_alg 0 reads the exponent (for fp16 the truncating bf16 cast keeps it); 1 and 2-T0 the
 * float max; 2-T1..T3 the bf16 max (fp16 input: cast with CAST_RINT). */
#define GMQ_SCALE_LOOPS(suffix, widen, to_bf16)                                                   \
    GMQ_SCALE_LOOP(gmq_scales_ocp_##suffix, widen, gmq_scale_ocp(f32 >> 23, emax))                \
    GMQ_SCALE_LOOP(gmq_scales_cublas_##suffix, widen, gmq_scale_cublas(num_bits_f32(f32), inv, 1)) \
    GMQ_SCALE_LOOP(gmq_scales_generic_##suffix, widen, gmq_scale_cublas(num_bits_f32(f32), inv, 0)) \
    GMQ_SCALE_LOOP(gmq_scales_dynamic_##suffix, widen, gmq_scale_dynamic_range(to_bf16, emax, add))

GMQ_SCALE_LOOPS(bf16, num_inl_bf16_to_f32_bits, (f32 >> 16))
GMQ_SCALE_LOOPS(f16, num_inl_f16_to_f32_bits, gmq_bf16_rne(f32))

GMQ_LOOP uint32_t gmq_emax(aclDataType y) {
    switch (y) {
    case ACL_FLOAT8_E5M2: return 15;
    case ACL_FLOAT8_E4M3FN: return 8;
    case ACL_FLOAT4_E2M1: return 2;
    default: return 0; /* FLOAT4_E1M2 */
    }
}

/* The E8M0 code s[j] and reciprocal scale recip[j] (as float32) of each column's block. */
GMQ_LOOP void gmq_column_scales(const gmq_params *p, const uint16_t *xm, size_t w, uint8_t *s, float *recip) {
    static const uint32_t DYNAMIC_RANGE_ADD[4] = {0, 0x3F, 0x1F, 0x0F}; /* by template (§4.3 step 3) */
    uint32_t emax = gmq_emax(p->y_dtype), add = DYNAMIC_RANGE_ADD[p->dtm_template];
    float inv = p->inv_dst_type_max;
    int kind = p->scale_alg == 0 ? 0 : p->scale_alg == 1 ? 1 : p->dtm_template == 0 ? 2 : 3;
    if (p->x_dtype == ACL_FLOAT16) {
        switch (kind) {
        case 0: gmq_scales_ocp_f16(xm, w, s, recip, emax, inv, add); break;
        case 1: gmq_scales_cublas_f16(xm, w, s, recip, emax, inv, add); break;
        case 2: gmq_scales_generic_f16(xm, w, s, recip, emax, inv, add); break;
        default: gmq_scales_dynamic_f16(xm, w, s, recip, emax, inv, add); break;
        }
    } else {
        switch (kind) {
        case 0: gmq_scales_ocp_bf16(xm, w, s, recip, emax, inv, add); break;
        case 1: gmq_scales_cublas_bf16(xm, w, s, recip, emax, inv, add); break;
        case 2: gmq_scales_generic_bf16(xm, w, s, recip, emax, inv, add); break;
        default: gmq_scales_dynamic_bf16(xm, w, s, recip, emax, inv, add); break;
        }
    }
}

/* ---- which loop quantises a tile ------------------------------------------------------------ */

/* The element loops, one per output format and round mode (FP4: GMQ_ENC_..._RINT + round_mode). */
typedef enum {
    GMQ_ENC_E4M3FN,
    GMQ_ENC_E5M2,
    GMQ_ENC_E2M1_RINT,
    GMQ_ENC_E2M1_ROUND,
    GMQ_ENC_E2M1_FLOOR,
    GMQ_ENC_E1M2_RINT,
    GMQ_ENC_E1M2_ROUND,
    GMQ_ENC_E1M2_FLOOR,
} gmq_encoding;

GMQ_LOOP gmq_encoding gmq_encoding_of(const gmq_params *p) {
    switch (p->y_dtype) {
    case ACL_FLOAT8_E4M3FN: return GMQ_ENC_E4M3FN;
    case ACL_FLOAT8_E5M2: return GMQ_ENC_E5M2;
    case ACL_FLOAT4_E2M1: return (gmq_encoding)(GMQ_ENC_E2M1_RINT + p->round_mode);
    default: return (gmq_encoding)(GMQ_ENC_E1M2_RINT + p->round_mode); /* FLOAT4_E1M2 */
    }
}

/* Offsets of the tile's columns for the pow2 loop (num_inl_pow2_column_*) from their reciprocal
 * scales and block maxima; 1 if every column is accepted, 0 if the tile needs the exact loop. */
#define GMQ_POW2_COLUMNS(fmt)                                                                     \
    GMQ_LOOP int gmq_pow2_columns_##fmt(const float *restrict recip, const uint16_t *restrict xm, size_t w, \
                                        int16_t *restrict offset) {                                \
        int ok = 1;                                                                                \
        for (size_t j = 0; j < w; j++)                                                             \
            ok &= num_inl_pow2_column_##fmt((uint16_t)(num_f32_bits(recip[j]) >> 16), xm[j], &offset[j]); \
        return ok;                                                                                 \
    }
GMQ_POW2_COLUMNS(fp8_e4m3fn)
GMQ_POW2_COLUMNS(fp8_e5m2)
GMQ_POW2_COLUMNS(fp4_e2m1)
GMQ_POW2_COLUMNS(fp4_e1m2)

GMQ_LOOP int gmq_pow2_columns(gmq_encoding enc, const float *recip, const uint16_t *xm, size_t w, int16_t *offset) {
    switch (enc) {
    case GMQ_ENC_E4M3FN: return gmq_pow2_columns_fp8_e4m3fn(recip, xm, w, offset);
    case GMQ_ENC_E5M2: return gmq_pow2_columns_fp8_e5m2(recip, xm, w, offset);
    case GMQ_ENC_E2M1_RINT: return gmq_pow2_columns_fp4_e2m1(recip, xm, w, offset);
    case GMQ_ENC_E1M2_RINT: return gmq_pow2_columns_fp4_e1m2(recip, xm, w, offset);
    default: return 0; /* FP4 round / floor: exact loop only */
    }
}

/* ---- exact element loops ---------------------------------------------------------------------- */

/* out = w FP8 bytes, or w / 2 packed FP4 bytes (w even): element 2k in the low nibble. FP4 codes
 * are made in a nibble buffer first (the same contiguous loop as FP8), then paired - faster than
 * encoding pairs in one loop. */
#define GMQ_ROW_FP8(name, widen, encode)                                                          \
    GMQ_LOOP void name(const uint16_t *restrict x, const float *restrict recip, uint8_t *restrict out, size_t w) { \
        for (size_t j = 0; j < w; j++) out[j] = encode(num_bits_f32(widen(x[j])) * recip[j]);     \
    }
#define GMQ_ROW_FP4(name, widen, encode, mode)                                                    \
    GMQ_LOOP void name(const uint16_t *restrict x, const float *restrict recip, uint8_t *restrict out, size_t w) { \
        uint8_t nib[GMQ_TILE_COLS];                                                                \
        for (size_t j = 0; j < w; j++) nib[j] = encode(num_bits_f32(widen(x[j])) * recip[j], mode); \
        for (size_t k = 0; k < w / 2; k++) out[k] = (uint8_t)(nib[2 * k] | (nib[2 * k + 1] << 4)); \
    }

/* "rint" FP4 uses the cheaper round-to-nearest-even encoders (same codes). */
#define gmq_e2m1_rint(v, mode) num_inl_f32_to_fp4_e2m1_mx_rint(v)
#define gmq_e1m2_rint(v, mode) num_inl_f32_to_fp4_e1m2_rint(v)

#define GMQ_EXACT_ROWS(suffix, widen)                                                             \
    GMQ_ROW_FP8(gmq_row_e4m3fn_##suffix, widen, num_inl_f32_to_fp8_e4m3fn)                        \
    GMQ_ROW_FP8(gmq_row_e5m2_##suffix, widen, num_inl_f32_to_fp8_e5m2)                            \
    GMQ_ROW_FP4(gmq_row_e2m1_rint_##suffix, widen, gmq_e2m1_rint, NUM_RINT)                       \
    GMQ_ROW_FP4(gmq_row_e2m1_round_##suffix, widen, num_inl_f32_to_fp4_e2m1_mx, NUM_ROUND)        \
    GMQ_ROW_FP4(gmq_row_e2m1_floor_##suffix, widen, num_inl_f32_to_fp4_e2m1_mx, NUM_FLOOR)        \
    GMQ_ROW_FP4(gmq_row_e1m2_rint_##suffix, widen, gmq_e1m2_rint, NUM_RINT)                       \
    GMQ_ROW_FP4(gmq_row_e1m2_round_##suffix, widen, num_inl_f32_to_fp4_e1m2, NUM_ROUND)           \
    GMQ_ROW_FP4(gmq_row_e1m2_floor_##suffix, widen, num_inl_f32_to_fp4_e1m2, NUM_FLOOR)           \
    GMQ_LOOP void gmq_row_exact_##suffix(gmq_encoding enc, const uint16_t *x, const float *recip, uint8_t *out, \
                                         size_t w) {                                               \
        switch (enc) {                                                                             \
        case GMQ_ENC_E4M3FN: gmq_row_e4m3fn_##suffix(x, recip, out, w); break;                     \
        case GMQ_ENC_E5M2: gmq_row_e5m2_##suffix(x, recip, out, w); break;                         \
        case GMQ_ENC_E2M1_RINT: gmq_row_e2m1_rint_##suffix(x, recip, out, w); break;               \
        case GMQ_ENC_E2M1_ROUND: gmq_row_e2m1_round_##suffix(x, recip, out, w); break;             \
        case GMQ_ENC_E2M1_FLOOR: gmq_row_e2m1_floor_##suffix(x, recip, out, w); break;             \
        case GMQ_ENC_E1M2_RINT: gmq_row_e1m2_rint_##suffix(x, recip, out, w); break;               \
        case GMQ_ENC_E1M2_ROUND: gmq_row_e1m2_round_##suffix(x, recip, out, w); break;             \
        default: gmq_row_e1m2_floor_##suffix(x, recip, out, w); break;                             \
        }                                                                                          \
    }

GMQ_EXACT_ROWS(bf16, num_inl_bf16_to_f32_bits)
GMQ_EXACT_ROWS(f16, num_inl_f16_to_f32_bits)

/* ---- pow2 element loops (bf16 input) ---------------------------------------------------------- */

/* FP8: return 1 when every code is exact (else the row must be redone with the exact loop). */
#define GMQ_POW2_ROW_FP8(fmt)                                                                     \
    GMQ_LOOP int gmq_pow2_row_##fmt(const uint16_t *restrict x, const int16_t *restrict offset,   \
                                    uint8_t *restrict out, size_t w) {                             \
        uint16_t guard = 0xFFFFu;                                                                  \
        for (size_t j = 0; j < w; j++) out[j] = num_inl_pow2_to_##fmt(x[j], offset[j], &guard);    \
        return num_inl_pow2_exact_##fmt(guard);                                                    \
    }

/* The FP4 byte of two 16-bit codes (element 2k in the low nibble): on little-endian machines the
 * pair read as one 32-bit word, which vectorises without shuffles. */
GMQ_LOOP uint8_t gmq_pack_pair(const uint16_t *codes) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint32_t pair;
    memcpy(&pair, codes, sizeof pair);
    return (uint8_t)((pair & 0xFu) | (pair >> 12));
#else
    return (uint8_t)(codes[0] | (codes[1] << 4));
#endif
}

/* FP4 (always exact): the row's 16-bit codes first, then pairs into bytes. */
#define GMQ_POW2_ROW_FP4(fmt)                                                                     \
    GMQ_LOOP int gmq_pow2_row_##fmt(const uint16_t *restrict x, const int16_t *restrict offset,   \
                                    uint8_t *restrict out, size_t w) {                             \
        uint16_t codes[GMQ_TILE_COLS];                                                             \
        for (size_t j = 0; j < w; j++) codes[j] = num_inl_pow2_to_##fmt(x[j], offset[j]);          \
        for (size_t k = 0; k < w / 2; k++) out[k] = gmq_pack_pair(codes + 2 * k);                 \
        return 1;                                                                                  \
    }

GMQ_POW2_ROW_FP8(fp8_e4m3fn)
GMQ_POW2_ROW_FP8(fp8_e5m2)
GMQ_POW2_ROW_FP4(fp4_e2m1)
GMQ_POW2_ROW_FP4(fp4_e1m2)

GMQ_LOOP int gmq_row_pow2(gmq_encoding enc, const uint16_t *x, const int16_t *offset, uint8_t *out, size_t w) {
    switch (enc) {
    case GMQ_ENC_E4M3FN: return gmq_pow2_row_fp8_e4m3fn(x, offset, out, w);
    case GMQ_ENC_E5M2: return gmq_pow2_row_fp8_e5m2(x, offset, out, w);
    case GMQ_ENC_E2M1_RINT: return gmq_pow2_row_fp4_e2m1(x, offset, out, w);
    default: return gmq_pow2_row_fp4_e1m2(x, offset, out, w); /* E1M2_RINT */
    }
}

#endif
