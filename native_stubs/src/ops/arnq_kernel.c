/*
 * The AddRmsNormDynamicQuant kernel, one row at a time (spec B.7 - B.10):
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
 * Rows are independent (the NPU spreads them over its vector cores), so they are spread over host
 * threads; every row is computed the same way whatever thread runs it.
 */
#include "arnq_opt.h" /* first: compile options */

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arnq.h"
#include "arnq_loops.h"
#include "arnq_view.h"
#include "numerics.h"

#define MAX_THREADS 64
#define MIN_ELEMENTS_PER_THREAD 32768

/* ---- fp16 / bf16 widening (exact) ---------------------------------------------------------- */

static float f16_table[65536];
static pthread_once_t f16_once = PTHREAD_ONCE_INIT;

static void build_f16_table(void) {
    for (uint32_t h = 0; h < 65536; h++) f16_table[h] = num_f16_to_f32((uint16_t)h);
}

/* bf16 -> f32 is the 16-bit shift num_bf16_to_f32 performs; done inline so the loop vectorises. */
static inline float bf16_f32(uint16_t b) {
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* ---- the launch ----------------------------------------------------------------------------- */

typedef struct {
    const arnq_params *p;
    arnq_view x1, x2, xout, y[2], scale[2];
    const float *gamma, *smooth[2], *beta; /* widened once per launch; smooth NULL if absent */
} launch_ctx;

typedef struct {
    const launch_ctx *c;
    int64_t r0, r1;              /* rows [r0, r1)                                           */
    float *x, *q, *z, *pad;      /* row scratch: x / y, squares / quotients, smoothed, split */
    unsigned char *bytes;        /* encoded row before a strided store                      */
} worker;

/* ---- loads and stores of one row ------------------------------------------------------------ */

static const uint16_t *gather_u16(const arnq_view *v, int64_t r, int64_t n, uint16_t *tmp) {
    const uint16_t *src = (const uint16_t *)arnq_view_at(v, arnq_view_row(v, r));
    if (v->col_stride == 1) return src;
    for (int64_t j = 0; j < n; j++) tmp[j] = src[j * v->col_stride];
    return tmp;
}

/* x = f32(x1) + f32(x2) into w->x, and its squares into w->q. */
static void load_x(worker *w, int64_t r) {
    const launch_ctx *c = w->c;
    int64_t n = c->p->n;
    uint16_t *tmp = (uint16_t *)w->bytes; /* 2n bytes; free until the stores */
    const uint16_t *a = gather_u16(&c->x1, r, n, tmp);
    const uint16_t *b = gather_u16(&c->x2, r, n, a == tmp ? tmp + n : tmp);
    if (c->p->x_dtype == ACL_BF16) arnq_add_square_bf16(a, b, w->x, w->q, n);
    else arnq_add_square_f16(a, b, f16_table, w->x, w->q, n);
}

/* xOut = x narrowed to the input dtype, round to nearest even (Q3: INF/NaN or saturation mode). */
static void store_xout(worker *w, int64_t r) {
    const launch_ctx *c = w->c;
    int64_t n = c->p->n;
    int mode = c->p->opt.xout_saturate ? NUM_RINT | NUM_SAT | NUM_NAN_TO_ZERO : NUM_RINT;
    const arnq_view *v = &c->xout;
    uint16_t *dst = (uint16_t *)arnq_view_at(v, arnq_view_row(v, r));
    uint16_t *out = v->col_stride == 1 ? dst : (uint16_t *)w->bytes;
    if (c->p->x_dtype == ACL_BF16) num_f32_to_bf16_n(w->x, out, (size_t)n, mode);
    else num_f32_to_f16_n(w->x, out, (size_t)n, mode);
    if (out != dst)
        for (int64_t j = 0; j < n; j++) dst[j * v->col_stride] = out[j];
}

/* Encodes the quotients q[0..n) into y_k's row r. */
static void store_y(worker *w, int k, int64_t r, const float *q) {
    const arnq_params *p = w->c->p;
    const arnq_view *v = &w->c->y[k];
    int64_t n = p->n;
    int64_t row = arnq_view_row(v, r);
    /* byte-addressed and dense in the row: encode straight into the output */
    int direct = v->col_stride == 1 && (v->kind == ARNQ_ELEM_BYTES || row % 2 == 0);
    uint8_t *dst = v->kind == ARNQ_ELEM_NIBBLE ? v->data + row / 2 : arnq_view_at(v, row);
    uint8_t *out = direct ? dst : w->bytes;
    int fp8_mode = NUM_RINT | NUM_SAT | (p->opt.fp8_nan == ARNQ_FP8_NAN_ZERO ? NUM_NAN_TO_ZERO : 0);
    switch (p->y_dtype) {
    case ACL_INT8: num_f32_to_int8_n(q, (int8_t *)out, (size_t)n, NUM_RINT | NUM_SAT); break;
    case ACL_INT4: num_f32_to_int4_packed(q, out, (size_t)n, NUM_RINT | NUM_SAT); break;
    case ACL_FLOAT8_E4M3FN: num_f32_to_fp8_e4m3fn_n(q, out, (size_t)n, fp8_mode); break;
    case ACL_FLOAT8_E5M2: num_f32_to_fp8_e5m2_n(q, out, (size_t)n, fp8_mode); break;
    case ACL_HIFLOAT8:
        num_f32_to_hif8_n(q, out, (size_t)n,
                          NUM_ROUND | NUM_SAT | (p->opt.hif8_nan_code ? 0 : NUM_NAN_TO_ZERO));
        break;
    default: break;
    }
    int fp8 = p->y_dtype == ACL_FLOAT8_E4M3FN || p->y_dtype == ACL_FLOAT8_E5M2;
    if (fp8 && p->opt.fp8_nan == ARNQ_FP8_NAN_POSITIVE) arnq_fp8_positive_nan(q, out, n);
    if (direct) return;

    if (v->kind == ARNQ_ELEM_NIBBLE) { /* INT4 view: one nibble at a time */
        for (int64_t j = 0; j < n; j++) {
            int64_t e = row + j * v->col_stride;
            uint8_t nib = (uint8_t)((out[j / 2] >> (4 * (j & 1))) & 0xF);
            uint8_t *b = v->data + e / 2;
            *b = (e & 1) ? (uint8_t)((*b & 0x0F) | (nib << 4)) : (uint8_t)((*b & 0xF0) | nib);
        }
    } else if (p->y_int32) { /* INT32 words of 8 packed INT4 */
        for (int64_t wd = 0; wd < n / 8; wd++) memcpy(arnq_view_at(v, row + wd * v->col_stride), out + 4 * wd, 4);
    } else {
        for (int64_t j = 0; j < n; j++) *arnq_view_at(v, row + j * v->col_stride) = out[j];
    }
}

static void store_scale(worker *w, int k, int64_t r, float scale) {
    const arnq_view *v = &w->c->scale[k];
    memcpy(arnq_view_at(v, arnq_view_row(v, r)), &scale, 4);
}

/* ---- quantisation (B.8.3, B.9.3) ------------------------------------------------------------ */

static float bits_float(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* z_k = y * smooth_k into w->z (or y itself: the kernels' Muls by 1.0 changes nothing) and max |z_k|.
 * *nan: the row of z_k may hold a NaN. */
static const float *smoothed(worker *w, int k, const float *y, float *m, int *nan) {
    const arnq_params *p = w->c->p;
    const float *s = w->c->smooth[k];
    uint32_t bits = arnq_smooth_absmax(y, s, w->z, p->n);
    const float *z = s ? w->z : y;
    *nan = p->opt.max_nan_ignore || bits > 0x7F800000u;
    *m = p->opt.max_nan_ignore ? arnq_absmax_ignore_nan(z, p->n) : bits_float(bits);
    return z;
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

/* y_k of row r: q = z * factor (A2) or z / factor (950), encoded. An INT8 row whose quotients are all
 * finite with |q| < 127.5 (|q| <= qmax, the quotient of max |z|, by monotonicity) is rounded directly
 * into a dense output row; anything else goes through the numerics library. */
static void emit(worker *w, int k, int64_t r, const float *z, float factor, int divide, float qmax, int nan) {
    const arnq_params *p = w->c->p;
    const arnq_view *v = &w->c->y[k];
    if (p->y_dtype == ACL_INT8 && !nan && qmax < 127.5f && v->col_stride == 1) {
        int8_t *dst = (int8_t *)arnq_view_at(v, arnq_view_row(v, r));
        if (divide) arnq_int8_div(z, factor, dst, p->n);
        else arnq_int8_mul(z, factor, dst, p->n);
        return;
    }
    if (divide) arnq_div_scalar(z, factor, w->q, p->n);
    else arnq_mul_scalar(z, factor, w->q, p->n);
    store_y(w, k, r, w->q);
}

static void quant_a2(worker *w, int64_t r) {
    const arnq_params *p = w->c->p;
    float qm = p->y_dtype == ACL_INT4 ? 7.0f : 127.0f;
    for (int k = 0; k < 2; k++) {
        if (!(k ? p->out2 : p->out1)) continue;
        float m;
        int nan;
        const float *z = smoothed(w, k, w->x, &m, &nan);
        if (p->tmpl == ARNQ_A2_SLICE_D) m = slice_d_max(z, p->n, p->slice_len, p->opt.max_nan_ignore);
        float inv = qm / m;
        float scale = 1.0f / inv;
        emit(w, k, r, z, inv, 0, m * inv, nan);
        store_scale(w, k, r, scale);
    }
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
static void quant_950(worker *w, int64_t r) {
    const arnq_params *p = w->c->p;
    float d = div_factor_950(p->y_dtype);
    for (int k = 0; k < 2; k++) {
        if (!(k ? p->out2 : p->out1)) continue;
        float m;
        int nan;
        const float *z = smoothed(w, k, w->x, &m, &nan);
        float scale = m * d;
        emit(w, k, r, z, scale, 1, m / scale, nan);
        store_scale(w, k, r, scale);
    }
}

/* 950 single row: quant2 first, scale = m / f32(1/D) on the scalar unit, q = z / scale. Quirk: with
 * out2 active and no smoothScale2 the kernel divides y itself by scale2, so quant1 then works on
 * y / scale2. */
static void quant_950_single_row(worker *w, int64_t r) {
    const arnq_params *p = w->c->p;
    float qms = 1.0f / div_factor_950(p->y_dtype);
    float m;
    int nan;
    if (p->out2) {
        const float *z = smoothed(w, 1, w->x, &m, &nan);
        float scale = m / qms;
        if (z == w->x) {
            arnq_div_scalar(w->x, scale, w->x, p->n);
            store_y(w, 1, r, w->x);
        } else {
            emit(w, 1, r, z, scale, 1, m / scale, nan);
        }
        store_scale(w, 1, r, scale);
    }
    if (p->out1) {
        const float *z = smoothed(w, 0, w->x, &m, &nan);
        float scale = m / qms;
        emit(w, 0, r, z, scale, 1, m / scale, nan);
        store_scale(w, 0, r, scale);
    }
}

/* ---- one row -------------------------------------------------------------------------------- */

static float row_rstd(worker *w) {
    const arnq_params *p = w->c->p;
    int halves = p->opt.tree_halves;
    int64_t n = p->n;
    switch (p->tmpl) {
    case ARNQ_A2_NORMAL:
    case ARNQ_A2_SINGLE_ROW:
        return arnq_scalar_rstd(arnq_half_interval(w->q, n, halves), p->avg, p->eps, p->opt.scalar_rstd);
    case ARNQ_A2_SLICE_D:
        return arnq_scalar_rstd(arnq_slice_d(w->q, n, p->slice_len, halves), p->avg, p->eps, p->opt.scalar_rstd);
    case ARNQ_950_PERF:
        return arnq_newton_rstd(arnq_fold_reduce(w->q, n, halves), p->avg, p->eps, p->opt.mula_unfused);
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

static void process_row(worker *w, int64_t r) {
    const launch_ctx *c = w->c;
    const arnq_params *p = c->p;
    load_x(w, r);
    store_xout(w, r);
    float rstd = row_rstd(w);
    arnq_normalise(w->x, rstd, c->gamma, c->beta, p->n); /* w->x now holds y */
    if (p->soc == PYACLNN_SOC_A2) quant_a2(w, r);
    else if (p->tmpl == ARNQ_950_SINGLE_ROW) quant_950_single_row(w, r);
    else quant_950(w, r);
}

static void *run_rows(void *arg) {
    worker *w = arg;
    for (int64_t r = w->r0; r < w->r1; r++) process_row(w, r);
    return NULL;
}

/* ---- setup ---------------------------------------------------------------------------------- */

static int elem_size(aclDataType dt) {
    switch (dt) {
    case ACL_FLOAT: case ACL_INT32: return 4;
    case ACL_FLOAT16: case ACL_BF16: return 2;
    default: return 1;
    }
}

/* Every tensor the launch touches must lie in device memory, checked before anything is written. */
static int check_memory(const pyaclnn_stub_launch *launch, const arnq_params *p) {
    static const char *const NAMES[ARNQ_N_TENSORS] = {"x1", "x2", "gamma", "smoothScale1", "smoothScale2",
                                                      "beta", "y1Out", "y2Out", "xOut", "scale1Out",
                                                      "scale2Out"};
    int used[ARNQ_N_TENSORS] = {0};
    int compute = p->tmpl != ARNQ_950_REDUCE_EMPTY;
    used[ARNQ_X1] = used[ARNQ_X2] = used[ARNQ_GAMMA] = used[ARNQ_N_INPUTS + ARNQ_XOUT] = compute;
    used[ARNQ_SMOOTH1] = compute && p->has_smooth1;
    used[ARNQ_SMOOTH2] = compute && p->has_smooth2;
    used[ARNQ_BETA] = compute && p->has_beta;
    used[ARNQ_N_INPUTS + ARNQ_Y1] = compute && p->out1;
    used[ARNQ_N_INPUTS + ARNQ_Y2] = compute && p->out2;
    used[ARNQ_N_INPUTS + ARNQ_SCALE1] = p->out1;
    used[ARNQ_N_INPUTS + ARNQ_SCALE2] = p->out2;
    for (int i = 0; i < ARNQ_N_TENSORS; i++) {
        if (!used[i]) continue;
        const pyaclnn_stub_tensor *t = i < ARNQ_N_INPUTS ? &launch->inputs[i] : &launch->outputs[i - ARNQ_N_INPUTS];
        arnq_elem_kind kind = t->dtype == ACL_INT4 ? ARNQ_ELEM_NIBBLE : ARNQ_ELEM_BYTES;
        if (!arnq_view_in_device_memory(t, kind, elem_size(t->dtype))) {
            pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION,
                                   "%s: %s (data %p) is not inside device memory (address unset, freed, or the "
                                   "allocation is too small for its view)", ARNQ_OP_NAME, NAMES[i], t->data);
            return 0;
        }
    }
    return 1;
}

/* A 1-D parameter (gamma, smooth scale, beta) widened to fp32 once per launch. */
static float *widen_param(const pyaclnn_stub_tensor *t, aclDataType dt, int64_t n) {
    float *out = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    if (out == NULL) return NULL;
    const uint16_t *src = (const uint16_t *)t->data + t->offset;
    int64_t stride = t->ndim ? t->strides[0] : 1;
    for (int64_t j = 0; j < n; j++) {
        uint16_t h = src[j * stride];
        out[j] = dt == ACL_BF16 ? bf16_f32(h) : num_f16_to_f32(h);
    }
    return out;
}

static int thread_count(const arnq_params *p, const launch_ctx *c) {
    /* rows that may share bytes of an INT4 output (strided, or starting mid-byte) stay on one thread */
    for (int k = 0; k < 2; k++) {
        const arnq_view *y = &c->y[k];
        if ((k ? p->out2 : p->out1) && y->kind == ARNQ_ELEM_NIBBLE && (!y->dense || y->offset % 2)) return 1;
    }
    int64_t t = p->opt.threads;
    if (t <= 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        t = cpus > 0 ? cpus : 1;
        int64_t by_size = p->m * p->n / MIN_ELEMENTS_PER_THREAD;
        if (t > by_size) t = by_size;
    }
    if (t > MAX_THREADS) t = MAX_THREADS;
    if (t > p->m) t = p->m;
    return t < 1 ? 1 : (int)t;
}

static void reduce_empty(const launch_ctx *c) {
    worker w = {.c = c};
    for (int64_t r = 0; r < c->p->m; r++) {
        if (c->p->out1) store_scale(&w, 0, r, -INFINITY);
        if (c->p->out2) store_scale(&w, 1, r, -INFINITY);
    }
}

void arnq_kernel(const pyaclnn_stub_launch *launch) {
    const arnq_params *p = launch->params;
    const pyaclnn_stub_tensor *in = launch->inputs, *out = launch->outputs;
    if (!check_memory(launch, p)) return;

    launch_ctx c = {.p = p};
    arnq_elem_kind ykind = p->y_int32 || p->y_dtype != ACL_INT4 ? ARNQ_ELEM_BYTES : ARNQ_ELEM_NIBBLE;
    int ysize = p->y_int32 ? 4 : 1;
    for (int k = 0; k < 2; k++) {
        arnq_view_init(&c.y[k], &out[ARNQ_Y1 + k], ykind, ysize, 0);
        arnq_view_init(&c.scale[k], &out[ARNQ_SCALE1 + k], ARNQ_ELEM_BYTES, 4, 1);
    }
    if (p->tmpl == ARNQ_950_REDUCE_EMPTY) {
        reduce_empty(&c);
        return;
    }
    arnq_view_init(&c.x1, &in[ARNQ_X1], ARNQ_ELEM_BYTES, 2, 0);
    arnq_view_init(&c.x2, &in[ARNQ_X2], ARNQ_ELEM_BYTES, 2, 0);
    arnq_view_init(&c.xout, &out[ARNQ_XOUT], ARNQ_ELEM_BYTES, 2, 0);
    if (p->x_dtype == ACL_FLOAT16) pthread_once(&f16_once, build_f16_table);

    int threads = thread_count(p, &c);
    int64_t n = p->n;
    int64_t cap = (n + 255) / 256 * 256 + 64;   /* room for the normal template's zero padding */
    size_t scratch = (size_t)cap * 3 + (size_t)(p->tmpl == ARNQ_950_SPLIT ? p->split_chunk : 0);
    size_t bytes = (size_t)cap * 4;             /* two u16 rows, or one encoded row */
    float *params[4] = {NULL, NULL, NULL, NULL};
    worker *workers = calloc((size_t)threads, sizeof(worker));
    float *arena = malloc((scratch * sizeof(float) + bytes) * (size_t)threads);
    int ok = workers != NULL && arena != NULL;
    params[0] = ok ? widen_param(&in[ARNQ_GAMMA], p->x_dtype, n) : NULL;
    ok = ok && params[0];
    if (ok && p->has_smooth1) ok = (params[1] = widen_param(&in[ARNQ_SMOOTH1], p->x_dtype, n)) != NULL;
    if (ok && p->has_smooth2) ok = (params[2] = widen_param(&in[ARNQ_SMOOTH2], p->x_dtype, n)) != NULL;
    if (ok && p->has_beta) ok = (params[3] = widen_param(&in[ARNQ_BETA], p->x_dtype, n)) != NULL;
    if (!ok) {
        pyaclnn_stub_task_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of host memory for the row buffers",
                               ARNQ_OP_NAME);
        goto done;
    }
    c.gamma = params[0];
    c.smooth[0] = params[1];
    c.smooth[1] = params[2];
    c.beta = params[3];

    pthread_t tids[MAX_THREADS];
    int started[MAX_THREADS] = {0};
    for (int i = 0; i < threads; i++) {
        worker *w = &workers[i];
        unsigned char *base = (unsigned char *)arena + (scratch * sizeof(float) + bytes) * (size_t)i;
        w->c = &c;
        w->r0 = p->m * i / threads;
        w->r1 = p->m * (i + 1) / threads;
        w->x = (float *)base;
        w->q = w->x + cap;
        w->z = w->q + cap;
        w->pad = w->z + cap;
        w->bytes = base + scratch * sizeof(float);
    }
    for (int i = 1; i < threads; i++) started[i] = pthread_create(&tids[i], NULL, run_rows, &workers[i]) == 0;
    run_rows(&workers[0]);
    for (int i = 1; i < threads; i++) {
        if (started[i]) pthread_join(tids[i], NULL);
        else run_rows(&workers[i]); /* could not start a thread: do its rows here */
    }
done:
    for (int i = 0; i < 4; i++) free(params[i]);
    free(arena);
    free(workers);
}
