/*
 * The row pipeline of the AddRmsNormDynamicQuant kernel (spec B.7 - B.10), see arnq_row.h:
 *
 *   x = f32(x1) + f32(x2)          -> xOut (RNE narrowing)
 *   S = sum of x*x                  in the template's order (arnq_reduce.c)
 *   rstd                            template's formula
 *   y = (x * rstd) * gamma (+ beta)
 *   z_k = y * smooth_k (or y), m_k = max |z_k|
 *   A2:  inv = QM / m, scale = 1 / inv, q = z * inv          (reciprocal multiply)
 *   950: scale = m * (1/Q), q = z / scale                     (true division; single row: m / f32(1/(1/Q)))
 *   y_k = cast(q), scale_kOut = scale
 *
 * Every row is computed the same way whatever thread runs it and whichever loops (portable or
 * AVX2) run, so results do not depend on the thread count or the CPU.
 */
#include "arnq_opt.h" /* first: compile options */

#include <math.h>
#include <string.h>

#include "arnq_avx2.h"
#include "arnq_loops.h"
#include "arnq_row.h"
#include "arnq_stream.h"
#include "numerics.h"

static float bits_float(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static int active(const arnq_params *p, int k) { return k ? p->out2 : p->out1; }

/* ---- pass 1 --------------------------------------------------------------------------------- */

static void add_begin(arnq_worker *w, int64_t r, float *x) {
    const arnq_launch *c = w->c;
    int64_t n = c->p->n;
    arnq_add_job *job = &w->add;
    job->r = r;
    job->j0 = 0;
    job->a = arnq_gather_u16(&c->x1, r, n, w->gathered);
    job->b = arnq_gather_u16(&c->x2, r, n, job->a == w->gathered ? w->gathered + n : w->gathered);
    job->dst = (uint16_t *)arnq_view_at(&c->xout, arnq_view_row(&c->xout, r));
    job->x = x;
    job->avx2 = c->avx2 && c->xout_mode == NUM_RINT && (c->p->x_dtype == ACL_BF16 || arnq_avx2_f16_exact());
}

/* The perf template's reduction squares x itself; the others read the stored squares. */
static float *squares_at(const arnq_worker *w, int64_t j0) {
    return w->c->p->tmpl == ARNQ_950_PERF ? NULL : w->q + j0;
}

/* Columns [j0, j0 + len) of the pending pass 1 with the portable loops, xOut into `xo`. */
static void add_portable(arnq_worker *w, int64_t j0, int64_t len, uint16_t *xo) {
    const arnq_launch *c = w->c;
    const arnq_add_job *job = &w->add;
    float *x = job->x + j0, *q = squares_at(w, j0);
    if (c->p->x_dtype == ACL_BF16) arnq_add_square_bf16(job->a + j0, job->b + j0, x, q, len);
    else arnq_add_square_f16(job->a + j0, job->b + j0, c->f16_table, x, q, len);
    if (c->p->x_dtype == ACL_BF16) num_f32_to_bf16_n(x, xo, (size_t)len, c->xout_mode);
    else num_f32_to_f16_n(x, xo, (size_t)len, c->xout_mode);
}

/* ---- one block of passes 3 and 1 -------------------------------------------------------------- */

/* Pass 2 or 3 of the current row over the columns of a block: pass 2, y and the maxima
 * (arnq_norm_smooth, m set), or pass 3 for the direct INT8 outputs (arnq_int8_from_y). */
typedef struct {
    int count, divide;
    const float *s[2];
    float f[2];
    int8_t *dst[2]; /* pass 3: the output rows */
    float rstd;
    uint32_t *m;    /* pass 2: the maxima */
} quant_rows;

static int aligned32(const void *p) { return ((uintptr_t)p & 31) == 0; }

/* Columns [j0, j0 + len) of pass 2 or 3 of the current row (qr, may be NULL) and, if may_add and
 * it has got that far, of the pending pass 1 of the next row (len <= ARNQ_BLOCK then). Outputs go
 * straight to their rows, or through the stage buffers when streamed (or strided); the AVX2 loop
 * takes the multiple of 32 columns, the portable loops the rest. */
static void step_block(arnq_worker *w, const quant_rows *qr, int64_t j0, int64_t len, int may_add) {
    const arnq_launch *c = w->c;
    const arnq_params *p = c->p;
    arnq_add_job *job = &w->add;
    int add = may_add && job->j0 < p->n && job->j0 == j0;
    if (!qr && !add) return;

    int8_t *dst[2] = {NULL, NULL}, *out[2] = {NULL, NULL};
    uint16_t *xdst = add ? job->dst + j0 * c->xout.col_stride : NULL, *xo = xdst;
    int direct_stream = c->stream && (!add || (c->xout.col_stride == 1 && aligned32(xdst)));
    int outs = qr && !qr->m ? qr->count : 0; /* pass 3 outputs */
    for (int k = 0; k < outs; k++) {
        out[k] = dst[k] = qr->dst[k] + j0;
        direct_stream = direct_stream && aligned32(dst[k]);
    }
    int staged = c->stream && !direct_stream;
    if (staged)
        for (int k = 0; k < outs; k++) out[k] = (int8_t *)w->ystage + k * ARNQ_BLOCK;
    if (add && (staged || c->xout.col_stride != 1)) xo = (uint16_t *)w->xstage;

    /* the AVX2 loop takes the multiple of 32 columns of each part it can do */
    int64_t vec = c->avx2 ? len / ARNQ_AVX2_COLS * ARNQ_AVX2_COLS : 0;
    int64_t row_vec = qr ? vec : 0, add_vec = add && job->avx2 ? vec : 0;
    if (row_vec || add_vec) {
        arnq_avx2_step_args s = {.stream = direct_stream};
        if (row_vec) {
            s.x = w->x + j0;
            s.y = w->y + j0;
            s.gamma = c->gamma + j0;
            s.beta = c->beta ? c->beta + j0 : NULL;
            s.s0 = qr->s[0] + j0;
            s.s1 = qr->count > 1 ? qr->s[1] + j0 : NULL;
            s.rstd = qr->rstd;
            s.f0 = qr->f[0];
            s.f1 = qr->f[1];
            s.count = qr->count;
            s.divide = qr->divide;
            s.out0 = out[0];
            s.out1 = out[1];
            s.m = qr->m;
        }
        if (add_vec) {
            s.a = job->a + j0;
            s.b = job->b + j0;
            s.xn = job->x + j0;
            s.q = squares_at(w, j0);
            s.xo = xo;
            s.half = p->x_dtype == ACL_FLOAT16;
        }
        arnq_avx2_step(&s, vec);
    }
    if (qr && row_vec < len) { /* the rest with the portable loops */
        int64_t j = j0 + row_vec, rest = len - row_vec;
        const float *beta = c->beta ? c->beta + j : NULL, *s1 = qr->count > 1 ? qr->s[1] + j : NULL;
        if (qr->m)
            arnq_norm_smooth(w->x + j, qr->rstd, c->gamma + j, beta, qr->s[0] + j, s1, w->y + j, qr->count,
                             qr->m, rest);
        else
            arnq_int8_from_y(w->y + j, qr->s[0] + j, s1, qr->f[0], qr->f[1], out[0] + row_vec,
                             out[1] ? out[1] + row_vec : NULL, qr->count, qr->divide, rest);
    }
    if (add && add_vec < len) add_portable(w, j0 + add_vec, len - add_vec, xo + add_vec);

    for (int k = 0; k < outs; k++)
        if (out[k] != dst[k]) arnq_stream_copy(dst[k], out[k], (size_t)len);
    if (add) {
        if (c->xout.col_stride != 1)
            for (int64_t j = 0; j < len; j++) xdst[j * c->xout.col_stride] = xo[j];
        else if (xo != xdst)
            arnq_stream_copy(xdst, xo, (size_t)len * 2);
        job->j0 += len;
    }
}

/* Whatever is left of the pending pass 1. */
static void add_rest(arnq_worker *w) {
    int64_t n = w->c->p->n;
    while (w->add.j0 < n) {
        int64_t j0 = w->add.j0;
        step_block(w, NULL, j0, n - j0 < ARNQ_BLOCK ? n - j0 : ARNQ_BLOCK, 1);
    }
}

/* ---- pass 2 --------------------------------------------------------------------------------- */

/* The smooth row of output k (ones when absent: the kernels' Muls by 1.0 changes nothing). */
static const float *smooth_row(const arnq_launch *c, int k) { return c->smooth[k] ? c->smooth[k] : c->ones; }

/* y = (x * rstd) * gamma (+ beta) into w->y and, for each active output, the max |z_k| bits of
 * z_k = y * smooth_k (not stored). */
static void pass_smooth(arnq_worker *w, float rstd) {
    const arnq_launch *c = w->c;
    const arnq_params *p = c->p;
    quant_rows pass2 = {.rstd = rstd};
    uint32_t m[2] = {0, 0};
    for (int k = 0; k < 2; k++)
        if (active(p, k)) pass2.s[pass2.count++] = smooth_row(c, k);
    pass2.m = m;
    /* alone: pass 2 waits for the L2 cache; sharing it with some of the next row's pass 1
     * measured slower than leaving all of that to pass 3 */
    step_block(w, &pass2, 0, p->n, 0);
    int count = 0;
    for (int k = 0; k < 2; k++)
        if (active(p, k)) w->mbits[k] = m[count++];
}

/* z_k = y * smooth_k as a row in w->z[k] (arnq_smooth_absmax makes it the way pass 2 did), for the
 * outputs that need it: other y dtypes, the NaN-skipping max, the A2 slice-D max, INT8 rows that
 * go through the numerics library. */
static const float *z_row(arnq_worker *w, int k) {
    (void)arnq_smooth_absmax(w->y, smooth_row(w->c, k), w->z[k], w->c->p->n);
    return w->z[k];
}

static int needs_z(const arnq_params *p) {
    return p->y_dtype != ACL_INT8 || p->opt.max_nan_ignore || p->tmpl == ARNQ_A2_SLICE_D;
}

/* ---- pass 3 --------------------------------------------------------------------------------- */

/* max |z_k| from its bits (or skipping NaN, Q7); *nan: the row of z_k may hold a NaN. */
static float row_max(const arnq_params *p, const float *z, uint32_t bits, int *nan) {
    *nan = p->opt.max_nan_ignore || bits > 0x7F800000u;
    return p->opt.max_nan_ignore ? arnq_absmax_ignore_nan(z, p->n) : bits_float(bits);
}

/* A2 slice-D: per-slice vector max, combined on the scalar unit from 0 with (tmp > local) ? tmp : local
 * (a NaN slice maximum is dropped there). */
static float slice_d_max(const float *z, int64_t n, int64_t slice, int ignore_nan) {
    int64_t tail = n % slice ? n % slice : slice;
    int64_t loops = (n - tail) / slice;
    float local = 0.0f;
    for (int64_t i = 0; i <= loops; i++) {
        int64_t len = i < loops ? slice : tail;
        float t = ignore_nan ? arnq_absmax_ignore_nan(z + i * slice, len)
                             : bits_float(arnq_smooth_absmax(z + i * slice, NULL, NULL, len));
        local = t > local ? t : local;
    }
    return local;
}

/* The INT8 rows rounded directly: every quotient finite with |q| < 127.5 (|q| <= qmax, the quotient
 * of max |z|, by monotonicity), output dense in the row. Anything else goes through the numerics
 * library. */
static int int8_direct(const arnq_params *p, const arnq_view *v, float qmax, int nan) {
    return p->y_dtype == ACL_INT8 && !nan && qmax < 127.5f && v->col_stride == 1;
}

/* y_k of row r from the row z: q = z * factor (A2) or z / factor (950), encoded. */
static void emit(arnq_worker *w, int k, int64_t r, const float *z, float factor, int divide, float qmax, int nan) {
    const arnq_params *p = w->c->p;
    const arnq_view *v = &w->c->y[k];
    if (int8_direct(p, v, qmax, nan)) {
        int8_t *dst = (int8_t *)arnq_view_at(v, arnq_view_row(v, r));
        if (divide) arnq_int8_div(z, factor, dst, p->n);
        else arnq_int8_mul(z, factor, dst, p->n);
        return;
    }
    if (divide) arnq_div_scalar(z, factor, w->qt, p->n);
    else arnq_mul_scalar(z, factor, w->qt, p->n);
    arnq_store_y(w, k, r, w->qt);
}

/* y_k of row r for the active outputs, q = z_k * f[k] (A2) or z_k / f[k] (950), with pass 1 of the
 * next row: the direct INT8 rows are made from y (z_k recomputed) together with it, block by
 * block; the other rows from the row z_k first. */
static void quantise(arnq_worker *w, int64_t r, const float f[2], const float qmax[2], const int nan[2],
                     int divide) {
    const arnq_launch *c = w->c;
    const arnq_params *p = c->p;
    quant_rows qr = {.divide = divide, .f = {1.0f, 1.0f}};
    for (int k = 0; k < 2; k++) {
        if (!active(p, k)) continue;
        const arnq_view *v = &c->y[k];
        if (int8_direct(p, v, qmax[k], nan[k])) {
            qr.s[qr.count] = smooth_row(c, k);
            qr.f[qr.count] = f[k];
            qr.dst[qr.count++] = (int8_t *)arnq_view_at(v, arnq_view_row(v, r));
            continue;
        }
        emit(w, k, r, needs_z(p) ? w->z[k] : z_row(w, k), f[k], divide, qmax[k], nan[k]);
    }
    if (qr.count == 0) return;
    for (int64_t j0 = 0; j0 < p->n; j0 += ARNQ_BLOCK)
        step_block(w, &qr, j0, p->n - j0 < ARNQ_BLOCK ? p->n - j0 : ARNQ_BLOCK, 1);
}

static void quant_a2(arnq_worker *w, int64_t r) {
    const arnq_params *p = w->c->p;
    float qm = p->y_dtype == ACL_INT4 ? 7.0f : 127.0f;
    float f[2] = {1.0f, 1.0f}, qmax[2] = {0.0f, 0.0f}, scale[2] = {0.0f, 0.0f};
    int nan[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        if (!active(p, k)) continue;
        const float *z = needs_z(p) ? z_row(w, k) : NULL;
        float m = row_max(p, z, w->mbits[k], &nan[k]);
        if (p->tmpl == ARNQ_A2_SLICE_D) m = slice_d_max(z, p->n, p->slice_len, p->opt.max_nan_ignore);
        f[k] = qm / m;
        scale[k] = 1.0f / f[k];
        qmax[k] = m * f[k];
    }
    quantise(w, r, f, qmax, nan, 0);
    for (int k = 0; k < 2; k++)
        if (active(p, k)) arnq_store_scale(w->c, k, r, scale[k]);
}

static float div_factor_950(aclDataType y) {
    switch (y) {
    case ACL_FLOAT8_E4M3FN: return 1.0f / 448.0f;
    case ACL_FLOAT8_E5M2: return 1.0f / 57344.0f;
    case ACL_HIFLOAT8: return 1.0f / 32768.0f;
    case ACL_INT4: return 1.0f / 7.0f;
    default: return 1.0f / 127.0f;
    }
}

/* perf / normal / split: scale = m * D (a multiply), q = z / scale. */
static void quant_950(arnq_worker *w, int64_t r) {
    const arnq_params *p = w->c->p;
    float d = div_factor_950(p->y_dtype);
    float scale[2] = {1.0f, 1.0f}, qmax[2] = {0.0f, 0.0f};
    int nan[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        if (!active(p, k)) continue;
        float m = row_max(p, needs_z(p) ? z_row(w, k) : NULL, w->mbits[k], &nan[k]);
        scale[k] = m * d;
        qmax[k] = m / scale[k];
    }
    quantise(w, r, scale, qmax, nan, 1);
    for (int k = 0; k < 2; k++)
        if (active(p, k)) arnq_store_scale(w->c, k, r, scale[k]);
}

/* 950 single row: z_k = y * smooth_k into w->z[0] (or y itself: the kernels' Muls by 1.0 changes
 * nothing) and max |z_k|. */
static const float *smoothed(arnq_worker *w, int k, const float *y, float *m, int *nan) {
    const arnq_params *p = w->c->p;
    const float *s = w->c->smooth[k];
    uint32_t bits = arnq_smooth_absmax(y, s, w->z[0], p->n);
    const float *z = s ? w->z[0] : y;
    *m = row_max(p, z, bits, nan);
    return z;
}

/* 950 single row (w->x holds y): quant2 first, scale = m / f32(1/D) on the scalar unit, q = z / scale.
 * Quirk: with out2 active and no smoothScale2 the kernel divides y itself by scale2, so quant1 then
 * works on y / scale2. */
static void quant_950_single_row(arnq_worker *w, int64_t r) {
    const arnq_params *p = w->c->p;
    float qms = 1.0f / div_factor_950(p->y_dtype);
    float m;
    int nan;
    if (p->out2) {
        const float *z = smoothed(w, 1, w->x, &m, &nan);
        float scale = m / qms;
        if (z == w->x) {
            arnq_div_scalar(w->x, scale, w->x, p->n);
            arnq_store_y(w, 1, r, w->x);
        } else {
            emit(w, 1, r, z, scale, 1, m / scale, nan);
        }
        arnq_store_scale(w->c, 1, r, scale);
    }
    if (p->out1) {
        const float *z = smoothed(w, 0, w->x, &m, &nan);
        float scale = m / qms;
        emit(w, 0, r, z, scale, 1, m / scale, nan);
        arnq_store_scale(w->c, 0, r, scale);
    }
}

/* ---- one row -------------------------------------------------------------------------------- */

static float row_rstd(arnq_worker *w) {
    const arnq_params *p = w->c->p;
    int halves = p->opt.tree_halves;
    int64_t n = p->n;
    switch (p->tmpl) {
    case ARNQ_A2_NORMAL:
    case ARNQ_A2_SINGLE_ROW:
        return arnq_scalar_rstd(arnq_half_interval(w->q, n, halves), p->avg, p->eps, p->opt.scalar_rstd);
    case ARNQ_A2_SLICE_D:
        return arnq_scalar_rstd(arnq_slice_d(w->q, n, p->slice_len, halves), p->avg, p->eps, p->opt.scalar_rstd);
    case ARNQ_950_PERF: /* squares made from x on the way (pass 1 does not store them) */
        return arnq_newton_rstd(arnq_fold_reduce_x(w->x, n, halves, w->c->avx2), p->avg, p->eps,
                                p->opt.mula_unfused);
    case ARNQ_950_NORMAL:
        return arnq_vector_rstd(arnq_normal_reduce(w->q, n, halves), p->avg, p->eps);
    case ARNQ_950_SINGLE_ROW:
        return arnq_scalar_rstd(arnq_half_interval(w->q, n, halves), p->avg, p->eps, p->opt.scalar_rstd);
    case ARNQ_950_SPLIT:
        return arnq_vector_rstd(arnq_split_reduce(w->q, n, p->split_chunk, p->split_loop, w->pad, halves),
                                p->avg, p->eps);
    default: return NAN;
    }
}

/* Row r, whose pass 1 is done (x in w->x, squares in w->q); pass 1 of the next row, if any, is done
 * meanwhile (into w->xn, and w->q once the reduction has used it). */
static void process_row(arnq_worker *w, int64_t r) {
    const arnq_launch *c = w->c;
    const arnq_params *p = c->p;
    float rstd = row_rstd(w);
    if (r + 1 < w->r1) add_begin(w, r + 1, w->xn);
    if (p->tmpl == ARNQ_950_SINGLE_ROW) {
        arnq_normalise(w->x, rstd, c->gamma, c->beta, p->n); /* w->x now holds y */
        quant_950_single_row(w, r);
    } else {
        pass_smooth(w, rstd);
        if (p->soc == PYACLNN_SOC_A2) quant_a2(w, r);
        else quant_950(w, r);
    }
    add_rest(w);
    float *t = w->x;
    w->x = w->xn;
    w->xn = t;
}

void *arnq_run_rows(void *arg) {
    arnq_worker *w = arg;
    w->add.j0 = w->c->p->n; /* nothing pending */
    if (w->r0 < w->r1) {
        add_begin(w, w->r0, w->x);
        add_rest(w);
    }
    for (int64_t r = w->r0; r < w->r1; r++) process_row(w, r);
    arnq_stream_fence();
    return NULL;
}
