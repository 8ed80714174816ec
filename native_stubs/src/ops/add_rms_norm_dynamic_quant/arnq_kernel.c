/*
 * The AddRmsNormDynamicQuant kernel: one launch. Checks the memory it touches, widens the 1-D
 * parameters, spreads the rows over the worker pool (op_parallel.h) and gives each part its row
 * buffers; the rows themselves go through the pipeline of arnq_row.c.
 *
 * Rows are independent (the NPU spreads them over its vector cores), so they are spread over host
 * threads; every row is computed the same way whatever thread runs it.
 *
 * The parameters are widened at every launch, not once per executor: a repeatable executor is
 * re-run with new addresses, and the bytes behind an unchanged address may have been rewritten by
 * earlier work on the stream, so a cached copy could only be trusted after comparing all of it -
 * which costs as much as widening. Widening is one exact, inlined (vectorised) conversion per
 * element: about 1 us for gamma and two smooth scales of 8192 columns. All host memory of a launch
 * is one block, kept by the launching thread (a stream's worker) for its next launch when small:
 * a fresh block of a few hundred KiB comes from mmap and costs its page faults at every launch.
 */
#include "arnq_opt.h" /* first: compile options */

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "arnq.h"
#include "arnq_avx2.h"
#include "kernels/device.h"
#include "arnq_row.h"
#include "arnq_stream.h"
#include "arnq_view.h"
#include "num_inline.h"
#include "numerics.h"
#include "kernels/parallel.h"

#define MAX_THREADS 64
/* Elements (x1 columns x rows) a thread should get at least: waking a worker and sharing the
 * launch costs more than it saves below that (decode shapes of 8-16 rows of 8192 stay on one). */
#define MIN_ELEMENTS_PER_THREAD (1 << 18)

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

/* A 1-D parameter (gamma, smooth scale, beta) widened to fp32 into out[0..n): exact, inlined, and
 * vectorised when contiguous. */
ARNQ_VECTOR_CLONES static void widen_param(float *restrict out, const pyaclnn_stub_tensor *t, aclDataType dt, int64_t n) {
    const uint16_t *restrict src = (const uint16_t *)t->data + t->offset;
    int64_t stride = t->ndim ? t->strides[0] : 1;
    if (dt == ACL_BF16 && stride == 1) {
        for (int64_t j = 0; j < n; j++) out[j] = num_bits_f32(num_inl_bf16_to_f32_bits(src[j]));
    } else if (dt == ACL_BF16) {
        for (int64_t j = 0; j < n; j++) out[j] = num_bits_f32(num_inl_bf16_to_f32_bits(src[j * stride]));
    } else if (stride == 1) {
        for (int64_t j = 0; j < n; j++) out[j] = num_bits_f32(num_inl_f16_to_f32_bits(src[j]));
    } else {
        for (int64_t j = 0; j < n; j++) out[j] = num_bits_f32(num_inl_f16_to_f32_bits(src[j * stride]));
    }
}

/* ---- the launch's host memory -------------------------------------------------------------- */

/* Blocks up to this size stay with their thread between launches (freed when the thread ends). */
#define KEEP_BYTES ((size_t)8 << 20)

typedef struct {
    void *mem;
    size_t size;
} kept_block;

static pthread_key_t kept_key;
static int kept_key_ok;
static pthread_once_t kept_once = PTHREAD_ONCE_INIT;

static void free_kept(void *arg) {
    kept_block *k = arg;
    free(k->mem);
    free(k);
}

static void make_kept_key(void) { kept_key_ok = pthread_key_create(&kept_key, free_kept) == 0; }

/* 64-byte aligned memory for one launch; *own says the caller frees it. NULL when out of memory. */
static void *launch_memory(size_t bytes, int *own) {
    void *mem = NULL;
    *own = 1;
    pthread_once(&kept_once, make_kept_key);
    if (bytes > KEEP_BYTES || !kept_key_ok) return posix_memalign(&mem, 64, bytes) == 0 ? mem : NULL;
    kept_block *k = pthread_getspecific(kept_key);
    if (k != NULL && k->size >= bytes) {
        *own = 0;
        return k->mem;
    }
    if (k == NULL) {
        if ((k = calloc(1, sizeof *k)) == NULL) return posix_memalign(&mem, 64, bytes) == 0 ? mem : NULL;
        if (pthread_setspecific(kept_key, k) != 0) {
            free(k);
            return posix_memalign(&mem, 64, bytes) == 0 ? mem : NULL;
        }
    }
    free(k->mem);
    k->mem = NULL;
    k->size = 0;
    if (posix_memalign(&mem, 64, bytes) != 0) return NULL;
    k->mem = mem;
    k->size = bytes;
    *own = 0;
    return mem;
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
    int64_t t = p->opt.threads;   /* PYACLNN_STUB_ARNQ_THREADS, then the pool's rule and knob */
    if (t <= 0) t = (int64_t)op_thread_count((size_t)(p->m * p->n), MIN_ELEMENTS_PER_THREAD);
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

/* The rows of one launch, cut into parts (op_parallel_parts); each part has its own buffers. */
typedef struct {
    const arnq_launch *c;
    unsigned char *arena;   /* per_part bytes per part */
    size_t per_part, floats;
    int64_t cap;
} rows_job;

static void run_part(void *ctx, size_t part, size_t r0, size_t r1) {
    const rows_job *job = ctx;
    unsigned char *base = job->arena + job->per_part * part;
    arnq_worker w;
    memset(&w, 0, sizeof w);
    w.c = job->c;
    w.r0 = (int64_t)r0;
    w.r1 = (int64_t)r1;
    w.x = (float *)base;
    w.xn = w.x + job->cap;
    w.y = w.xn + job->cap;
    w.q = w.y + job->cap;
    w.qt = w.q + job->cap;
    w.z[0] = w.qt + job->cap;
    w.z[1] = w.z[0] + job->cap;
    w.pad = w.z[1] + job->cap;
    w.gathered = (uint16_t *)(base + job->floats * sizeof(float));
    w.bytes = (unsigned char *)w.gathered + (size_t)job->cap * 4;
    w.xstage = w.bytes + (size_t)job->cap * 4;
    w.ystage = w.xstage + ARNQ_BLOCK * 2;
    arnq_run_rows(&w);
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
    /* One 64-byte aligned block: the widened parameters (gamma, smooth1, smooth2, beta, ones; a
     * row of n floats each, rounded up to 64 bytes), then per part x, xn, y, q, qt, z[0], z[1] (cap
     * floats each: room for the normal template's zero padding), the split template's pad; two
     * gathered u16 rows, one encoded row (4 bytes per column each), the xOut and y stage blocks. */
    rows_job job = {.c = &c};
    job.cap = (n + 255) / 256 * 256 + 64;
    int64_t pad = p->tmpl == ARNQ_950_SPLIT ? (p->split_chunk + 15) / 16 * 16 : 0;
    job.floats = (size_t)(7 * job.cap + pad);
    job.per_part = job.floats * sizeof(float) + (size_t)job.cap * 8 + ARNQ_BLOCK * 4;
    size_t row = ((size_t)(n > 0 ? n : 1) * sizeof(float) + 63) / 64 * 64;
    int need_ones = (p->out1 && !p->has_smooth1) || (p->out2 && !p->has_smooth2);
    int own_block;
    void *block = launch_memory(5 * row + job.per_part * (size_t)threads, &own_block);
    if (block == NULL) {
        pyaclnn_stub_task_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of host memory for the row buffers",
                               ARNQ_OP_NAME);
        return;
    }
    float *params[5];
    for (int i = 0; i < 5; i++) params[i] = (float *)((unsigned char *)block + row * (size_t)i);
    job.arena = (unsigned char *)block + 5 * row;
    widen_param(params[0], &in[ARNQ_GAMMA], p->x_dtype, n);
    if (p->has_smooth1) widen_param(params[1], &in[ARNQ_SMOOTH1], p->x_dtype, n);
    if (p->has_smooth2) widen_param(params[2], &in[ARNQ_SMOOTH2], p->x_dtype, n);
    if (p->has_beta) widen_param(params[3], &in[ARNQ_BETA], p->x_dtype, n);
    if (need_ones)
        for (int64_t j = 0; j < n; j++) params[4][j] = 1.0f;
    c.gamma = params[0];
    c.smooth[0] = p->has_smooth1 ? params[1] : NULL;
    c.smooth[1] = p->has_smooth2 ? params[2] : NULL;
    c.beta = p->has_beta ? params[3] : NULL;
    c.ones = need_ones ? params[4] : NULL;
    c.stream = use_streaming_stores(p);

    op_parallel_parts((size_t)p->m, (size_t)threads, run_part, &job);
    if (own_block) free(block);
}
