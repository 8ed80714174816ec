/*
 * GroupedDynamicMxQuant: the inner loops over one row of a column tile. Each (input type, output
 * format, round mode) has its own loop with the element arithmetic inlined (gmq_encode.h), so the
 * loops are straight-line code that GCC vectorises; the caller picks the loop once per tile row.
 *
 * Compiled at -O3 whatever the build type (a Debug build would otherwise be ~20x slower and the
 * test sweeps run through here), with AVX-512 and AVX2 clones (GMQ_CLONES, gmq_rows.h). GCC's
 * unroll-and-jam is off: it turned the block-maximum loop back into scalar code.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3", "no-loop-unroll-and-jam")
#endif

#include "gmq_rows.h"

#include "gmq_encode.h"
#include "gmq_scale.h"

/* ---- block statistic ------------------------------------------------------------------------ */

#define ABSMAX_CHUNK 64   /* columns whose running maxima stay in registers across the rows */

GMQ_CLONES static void absmax(const uint16_t *const *rows, int nrows, size_t w, uint16_t *restrict xm) {
    size_t j0 = 0;
    for (; j0 + ABSMAX_CHUNK <= w; j0 += ABSMAX_CHUNK) {
        uint16_t acc[ABSMAX_CHUNK] = {0};
        for (int i = 0; i < nrows; i++) {
            const uint16_t *restrict x = rows[i] + j0;
            for (size_t k = 0; k < ABSMAX_CHUNK; k++) {
                uint16_t a = x[k] & 0x7FFFu;
                acc[k] = a > acc[k] ? a : acc[k];
            }
        }
        for (size_t k = 0; k < ABSMAX_CHUNK; k++) xm[j0 + k] = acc[k];
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

/* A plain wrapper: GCC exports the ifunc of a non-static target_clones function whatever the
 * visibility, and this is internal. */
void gmq_rows_absmax(const uint16_t *const *rows, int nrows, size_t w, uint16_t *xm) { absmax(rows, nrows, w, xm); }

/* ---- scales of a tile's columns ---------------------------------------------------------------- */

static const uint32_t DYNAMIC_RANGE_ADD[4] = {0, 0x3F, 0x1F, 0x0F};   /* by template (§4.3 step 3) */

static uint32_t emax_of(aclDataType y) {
    switch (y) {
    case ACL_FLOAT8_E5M2: return 15;
    case ACL_FLOAT8_E4M3FN: return 8;
    case ACL_FLOAT4_E2M1: return 2;
    default: return 0;   /* FLOAT4_E1M2 */
    }
}

/* One loop per (algorithm, input type): the scale functions inline into straight-line code. */
#define GMQ_SCALE_LOOP(name, widen, expr)                                                         \
    GMQ_CLONES static void name(const uint16_t *restrict xm, size_t w, uint8_t *restrict s,        \
                                float *restrict recip, uint32_t emax, float inv, uint32_t add) {    \
        (void)emax, (void)inv, (void)add; /* each loop uses some of them */                        \
        for (size_t j = 0; j < w; j++) {                                                           \
            uint32_t f32 = widen(xm[j]); /* the block max, exactly */                              \
            gmq_scale sc = expr;                                                                   \
            s[j] = sc.s;                                                                           \
            recip[j] = gmq_float((uint32_t)sc.rb << 16);                                           \
        }                                                                                          \
    }

/* scale_alg 0 reads the exponent (for fp16 the truncating bf16 cast keeps it); 1 and 2-T0 the
 * float max; 2-T1..T3 the bf16 max (fp16 input: cast with CAST_RINT). */
#define GMQ_SCALE_LOOPS(suffix, widen, to_bf16)                                                   \
    GMQ_SCALE_LOOP(scales_ocp_##suffix, widen, gmq_scale_ocp(f32 >> 23, emax))                    \
    GMQ_SCALE_LOOP(scales_cublas_##suffix, widen, gmq_scale_cublas(gmq_float(f32), inv, 1))       \
    GMQ_SCALE_LOOP(scales_generic_##suffix, widen, gmq_scale_cublas(gmq_float(f32), inv, 0))      \
    GMQ_SCALE_LOOP(scales_dynamic_##suffix, widen, gmq_scale_dynamic_range(to_bf16, emax, add))

GMQ_SCALE_LOOPS(bf16, gmq_widen_bf16, (f32 >> 16))
GMQ_SCALE_LOOPS(f16, gmq_widen_f16, gmq_bf16_rne(f32))

typedef void (*scale_loop)(const uint16_t *, size_t, uint8_t *, float *, uint32_t, float, uint32_t);

void gmq_column_scales(const gmq_params *p, const uint16_t *xm, size_t w, uint8_t *s, float *recip) {
    static const scale_loop LOOPS[2][4] = {
        {scales_ocp_bf16, scales_cublas_bf16, scales_generic_bf16, scales_dynamic_bf16},
        {scales_ocp_f16, scales_cublas_f16, scales_generic_f16, scales_dynamic_f16},
    };
    int kind = p->scale_alg == 0 ? 0 : p->scale_alg == 1 ? 1 : p->dtm_template == 0 ? 2 : 3;
    LOOPS[p->x_dtype == ACL_FLOAT16][kind](xm, w, s, recip, emax_of(p->y_dtype), p->inv_dst_type_max,
                                           DYNAMIC_RANGE_ADD[p->dtm_template]);
}

/* ---- element loops ------------------------------------------------------------------------------ */

#define GMQ_ROW_FP8(name, widen, encode)                                                          \
    GMQ_CLONES static void name(const uint16_t *restrict x, const float *restrict recip,           \
                                uint8_t *restrict out, size_t w) {                                 \
        for (size_t j = 0; j < w; j++) out[j] = encode(gmq_float(widen(x[j])) * recip[j]);         \
    }

/* FP4: the row's nibbles first (the same contiguous loop as FP8), then pairs into bytes (element
 * 2k in the low nibble; w is even) - faster than encoding pairs in one loop. */
#define GMQ_ROW_FP4(name, widen, encode, mode)                                                    \
    GMQ_CLONES static void name(const uint16_t *restrict x, const float *restrict recip,           \
                                uint8_t *restrict out, size_t w) {                                 \
        uint8_t nib[GMQ_TILE_COLS];                                                                \
        for (size_t j = 0; j < w; j++) nib[j] = encode(gmq_float(widen(x[j])) * recip[j], mode);   \
        for (size_t k = 0; k < w / 2; k++) out[k] = (uint8_t)(nib[2 * k] | (nib[2 * k + 1] << 4)); \
    }

/* "rint" FP4 uses the cheaper round-to-nearest-even encoders (same codes). */
#define gmq_encode_e2m1_rint_mode(v, mode) gmq_encode_e2m1_rint(v)
#define gmq_encode_e1m2_rint_mode(v, mode) gmq_encode_e1m2_rint(v)

#define GMQ_ROWS_FOR_INPUT(suffix, widen)                                                         \
    GMQ_ROW_FP8(row_e4m3fn_##suffix, widen, gmq_encode_e4m3fn)                                    \
    GMQ_ROW_FP8(row_e5m2_##suffix, widen, gmq_encode_e5m2)                                        \
    GMQ_ROW_FP4(row_e2m1_rint_##suffix, widen, gmq_encode_e2m1_rint_mode, GMQ_RINT)               \
    GMQ_ROW_FP4(row_e2m1_round_##suffix, widen, gmq_encode_e2m1, GMQ_ROUND)                       \
    GMQ_ROW_FP4(row_e2m1_floor_##suffix, widen, gmq_encode_e2m1, GMQ_FLOOR)                       \
    GMQ_ROW_FP4(row_e1m2_rint_##suffix, widen, gmq_encode_e1m2_rint_mode, GMQ_RINT)               \
    GMQ_ROW_FP4(row_e1m2_round_##suffix, widen, gmq_encode_e1m2, GMQ_ROUND)                       \
    GMQ_ROW_FP4(row_e1m2_floor_##suffix, widen, gmq_encode_e1m2, GMQ_FLOOR)                       \
    static const gmq_row_fn ROWS_##suffix[] = {                                                    \
        row_e4m3fn_##suffix,       row_e5m2_##suffix,          row_e2m1_rint_##suffix,             \
        row_e2m1_round_##suffix,   row_e2m1_floor_##suffix,    row_e1m2_rint_##suffix,             \
        row_e1m2_round_##suffix,   row_e1m2_floor_##suffix,                                        \
    };

GMQ_ROWS_FOR_INPUT(bf16, gmq_widen_bf16)
GMQ_ROWS_FOR_INPUT(f16, gmq_widen_f16)

gmq_row_fn gmq_row_encoder(const gmq_params *p) {
    size_t index;
    switch (p->y_dtype) {
    case ACL_FLOAT8_E4M3FN: index = 0; break;
    case ACL_FLOAT8_E5M2: index = 1; break;
    case ACL_FLOAT4_E2M1: index = 2 + (size_t)p->round_mode; break;
    default: index = 5 + (size_t)p->round_mode; break;   /* FLOAT4_E1M2 */
    }
    return p->x_dtype == ACL_FLOAT16 ? ROWS_f16[index] : ROWS_bf16[index];
}

/* ---- test hook ------------------------------------------------------------------------------------ */

/* The element conversion alone, for tests (tests/test_grouped_dynamic_mx_quant_encode.py compares
 * it with numerics.h): codes[i] = the code of in[i] (FP4: one nibble per byte). y_dtype is an
 * aclDataType of the four targets, round_mode 0 rint / 1 round / 2 floor (FP8: rint only).
 * Returns 0, or -1 for other arguments. Not part of any public header. */
PYACLNN_STUB_API int pyaclnn_stub_gmq_encode(int y_dtype, int round_mode, const float *in, uint8_t *codes,
                                             size_t n) {
    if (round_mode < GMQ_RINT || round_mode > GMQ_FLOOR) return -1;
    for (size_t i = 0; i < n; i++) {
        switch (y_dtype) {
        case ACL_FLOAT8_E4M3FN: codes[i] = gmq_encode_e4m3fn(in[i]); break;
        case ACL_FLOAT8_E5M2: codes[i] = gmq_encode_e5m2(in[i]); break;
        case ACL_FLOAT4_E2M1:
            codes[i] = round_mode == GMQ_RINT ? gmq_encode_e2m1_rint(in[i]) : gmq_encode_e2m1(in[i], round_mode);
            break;
        case ACL_FLOAT4_E1M2:
            codes[i] = round_mode == GMQ_RINT ? gmq_encode_e1m2_rint(in[i]) : gmq_encode_e1m2(in[i], round_mode);
            break;
        default: return -1;
        }
    }
    return 0;
}
