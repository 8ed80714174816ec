/*
 * The AddRmsNormDynamicQuant kernel: one launch. Checks the memory it touches, widens the 1-D
 * parameters once, spreads the rows over host threads and gives each its row buffers; the rows
 * themselves go through the pipeline of arnq_row.c.
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
#include "arnq_avx2.h"
#include "op_common.h"
#include "arnq_row.h"
#include "arnq_stream.h"
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
        out[j] = dt == ACL_BF16 ? num_bf16_to_f32(h) : num_f16_to_f32(h);
    }
    return out;
}

static float *ones_row(int64_t n) {
    float *out = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    if (out != NULL)
        for (int64_t j = 0; j < n; j++) out[j] = 1.0f;
    return out;
}

/* Streaming stores for the dense outputs when they would not stay in the last-level cache anyway
 * (or as PYACLNN_STUB_ARNQ_STREAM says). */
static int use_streaming_stores(const arnq_params *p) {
    if (!arnq_stream_available() || p->opt.stream == ARNQ_STREAM_NEVER) return 0;
    if (p->opt.stream == ARNQ_STREAM_ALWAYS) return 1;
    int64_t half_bytes = 4 + (p->out1 + p->out2) * (p->y_dtype == ACL_INT4 ? 1 : 2); /* per element */
    return p->m * p->n / 2 * half_bytes >= arnq_stream_min_bytes();
}

static int thread_count(const arnq_params *p, const arnq_launch *c) {
    /* rows that may share bytes of an INT4 output (strided, or starting mid-byte) stay on one thread */
    for (int k = 0; k < 2; k++) {
        const arnq_view *y = &c->y[k];
        if ((k ? p->out2 : p->out1) && y->kind == ARNQ_ELEM_NIBBLE && (!y->dense || y->offset % 2)) return 1;
    }
    int64_t t = p->opt.threads;               /* PYACLNN_STUB_ARNQ_THREADS, then the general knob */
    if (t <= 0) t = op_kernel_threads_from_env();
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

static void reduce_empty(const arnq_launch *c) {
    for (int64_t r = 0; r < c->p->m; r++) {
        if (c->p->out1) arnq_store_scale(c, 0, r, -INFINITY);
        if (c->p->out2) arnq_store_scale(c, 1, r, -INFINITY);
    }
}

void arnq_kernel(const pyaclnn_stub_launch *launch) {
    const arnq_params *p = launch->params;
    const pyaclnn_stub_tensor *in = launch->inputs, *out = launch->outputs;
    if (!check_memory(launch, p)) return;

    arnq_launch c = {.p = p};
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
    c.f16_table = f16_table;
    c.xout_mode = p->opt.xout_saturate ? NUM_RINT | NUM_SAT | NUM_NAN_TO_ZERO : NUM_RINT;
    c.avx2 = p->opt.isa_generic ? 0 : arnq_avx2_available();

    int threads = thread_count(p, &c);
    int64_t n = p->n;
    /* Per thread, 64-byte aligned: x, xn, y, q, qt, z[0], z[1] (cap floats each: room for the normal
     * template's zero padding), the split template's pad; two gathered u16 rows, one encoded row
     * (4 bytes per column each), the xOut and y stage blocks. */
    int64_t cap = (n + 255) / 256 * 256 + 64;
    int64_t pad = p->tmpl == ARNQ_950_SPLIT ? (p->split_chunk + 15) / 16 * 16 : 0;
    size_t floats = (size_t)(7 * cap + pad);
    size_t per_thread = floats * sizeof(float) + (size_t)cap * 8 + ARNQ_BLOCK * 4;
    int need_ones = (p->out1 && !p->has_smooth1) || (p->out2 && !p->has_smooth2);
    float *params[5] = {NULL, NULL, NULL, NULL, NULL};
    arnq_worker *workers = calloc((size_t)threads, sizeof(arnq_worker));
    void *arena = NULL;
    int ok = workers != NULL && posix_memalign(&arena, 64, per_thread * (size_t)threads) == 0;
    params[0] = ok ? widen_param(&in[ARNQ_GAMMA], p->x_dtype, n) : NULL;
    ok = ok && params[0];
    if (ok && p->has_smooth1) ok = (params[1] = widen_param(&in[ARNQ_SMOOTH1], p->x_dtype, n)) != NULL;
    if (ok && p->has_smooth2) ok = (params[2] = widen_param(&in[ARNQ_SMOOTH2], p->x_dtype, n)) != NULL;
    if (ok && p->has_beta) ok = (params[3] = widen_param(&in[ARNQ_BETA], p->x_dtype, n)) != NULL;
    if (ok && need_ones) ok = (params[4] = ones_row(n)) != NULL;
    if (!ok) {
        pyaclnn_stub_task_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of host memory for the row buffers",
                               ARNQ_OP_NAME);
        goto done;
    }
    c.gamma = params[0];
    c.smooth[0] = params[1];
    c.smooth[1] = params[2];
    c.beta = params[3];
    c.ones = params[4];
    c.stream = use_streaming_stores(p);

    pthread_t tids[MAX_THREADS];
    int started[MAX_THREADS] = {0};
    for (int i = 0; i < threads; i++) {
        arnq_worker *w = &workers[i];
        unsigned char *base = (unsigned char *)arena + per_thread * (size_t)i;
        w->c = &c;
        w->r0 = p->m * i / threads;
        w->r1 = p->m * (i + 1) / threads;
        w->x = (float *)base;
        w->xn = w->x + cap;
        w->y = w->xn + cap;
        w->q = w->y + cap;
        w->qt = w->q + cap;
        w->z[0] = w->qt + cap;
        w->z[1] = w->z[0] + cap;
        w->pad = w->z[1] + cap;
        w->gathered = (uint16_t *)(base + floats * sizeof(float));
        w->bytes = (unsigned char *)w->gathered + (size_t)cap * 4;
        w->xstage = w->bytes + (size_t)cap * 4;
        w->ystage = w->xstage + ARNQ_BLOCK * 2;
    }
    for (int i = 1; i < threads; i++) started[i] = pthread_create(&tids[i], NULL, arnq_run_rows, &workers[i]) == 0;
    arnq_run_rows(&workers[0]);
    for (int i = 1; i < threads; i++) {
        if (started[i]) pthread_join(tids[i], NULL);
        else arnq_run_rows(&workers[i]); /* could not start a thread: do its rows here */
    }
done:
    for (int i = 0; i < 5; i++) free(params[i]);
    free(arena);
    free(workers);
}
