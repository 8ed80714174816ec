/*
 * C twin of benchmarks/decode_shapes.py: the C figures of "fast at decode shapes", in one run.
 *
 *   one_shot_ns  per call, syncing after every call (as a decode step does):
 *     amp_update_scale      aclCreateTensor x5, GetWorkspaceSize, launch, sync, aclDestroyTensor x5
 *                           ([1] float32: the trivial operator, a floor for the fixed costs)
 *     arnq_v2_decode        aclnnAddRmsNormDynamicQuantV2 on x1, x2 bf16 [ROWS, COLS] with gamma and both
 *                           smooth scales, int8 y1 and y2: aclCreateTensor x10, GetWorkspaceSize,
 *                           launch, sync, aclDestroyTensor x10
 *   prepared_ns  per launch of one repeatable executor, syncing after every launch (the launch and the
 *                kernel without tensor creation and phase 1): amp_update_scale, arnq_v2_decode
 *   kernel_ns    large kernels, one repeatable executor, launch + sync, with PYACLNN_STUB_KERNEL_THREADS
 *                1 and 2 (set between launches, re-read with pyaclnn_stub_reread_switches), with the process CPU time they took
 *                (cpu_1, cpu_2: on a busy machine the wall ratio shows the machine, these the work):
 *     arnq_v2_large         the same call on [LROWS, COLS]
 *     gmq_large             aclnnGroupedDynamicMxQuant bf16 [4096, 4096] -> FP8 E4M3FN, 2 groups
 *     add_large             aclnnAdd float32 [2048, 2048]
 *
 * Each figure is a list with one entry per repeat (the mean of the calls of that repeat for one_shot_ns,
 * the best launch for kernel_ns); the variants alternate within each repeat so they share the machine's
 * state. Prints one JSON object.
 *
 *   decode_shapes [R repeats] [N one-shot calls per repeat] [ROWS] [COLS] [LROWS] [all|decode|large]
 *
 * (the last argument leaves out the large kernels or the one-shot calls, e.g. for a profiler).
 *
 * Build: cc -O2 -I<pyaclnn.get_include()> decode_shapes.c -L<lib dir> -lascendcl -lnnopbase -lopapi
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, setenv under -std=c11 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_add.h"
#include "aclnnop/aclnn_add_rms_norm_dynamic_quant_v2.h"
#include "aclnnop/aclnn_amp_update_scale.h"
#include "aclnnop/aclnn_grouped_dynamic_mx_quant.h"

/* The emulator reads its switches (PYACLNN_STUB_KERNEL_THREADS ...) once; this makes it read them again
 * (an entry point of pyaclnn's stub libascendcl, not of CANN). */
void pyaclnn_stub_reread_switches(void);

#define CHECK(expr)                                                                    \
    do {                                                                               \
        int rc_ = (int)(expr);                                                         \
        if (rc_ != 0) {                                                                \
            fprintf(stderr, "%s failed: %d (%s)\n", #expr, rc_, aclGetRecentErrMsg()); \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

#define MAX_REPEATS 64

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A device buffer of `bytes` filled with `fill(i)` 16-bit patterns (or zeros when fill is NULL). */
static void *device_u16(size_t count, uint16_t (*fill)(size_t)) {
    void *dev = NULL;
    size_t bytes = count > 0 ? count * 2 : 2;
    CHECK(aclrtMalloc(&dev, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    uint16_t *host = calloc(count ? count : 1, 2);
    if (host == NULL) exit(1);
    if (fill)
        for (size_t i = 0; i < count; i++) host[i] = fill(i);
    CHECK(aclrtMemcpy(dev, bytes, host, bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    free(host);
    return dev;
}

static void *device_zeros(size_t bytes) {
    void *dev = NULL;
    CHECK(aclrtMalloc(&dev, bytes ? bytes : 1, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemset(dev, bytes ? bytes : 1, 0, bytes ? bytes : 1));
    return dev;
}

/* bf16 patterns: a varied row (values in about [-4, 4]) and parameters in about [0.5, 2). */
static uint16_t bf16_data(size_t i) { return (uint16_t)(0x3F80u + (i * 2654435761u >> 7) % 0x100u) ^ (uint16_t)((i & 1) << 15); }
static uint16_t bf16_param(size_t i) { return (uint16_t)(0x3F00u + (i * 40503u >> 3) % 0x100u); }

static aclTensor *tensor(const int64_t *shape, int nd, aclDataType dt, void *addr) {
    int64_t strides[4];
    int64_t s = 1;
    for (int d = nd - 1; d >= 0; d--) strides[d] = s, s *= shape[d];
    return aclCreateTensor(shape, (uint64_t)nd, dt, strides, 0, ACL_FORMAT_ND, shape, (uint64_t)nd, addr);
}

/* ---- AmpUpdateScale one-shot -------------------------------------------------------------- */

static void *amp_buf[2][3];

static double amp_one_shot(aclrtStream stream, int n) {
    static const int64_t one[1] = {1};
    static const aclDataType dts[3] = {ACL_FLOAT, ACL_INT32, ACL_FLOAT};
    uint64_t t0 = now_ns();
    for (int i = 0; i < n; i++) {
        int a = i & 1, b = a ^ 1;
        aclTensor *t[5];
        for (int j = 0; j < 3; j++) t[j] = tensor(one, 1, dts[j], amp_buf[a][j]);
        t[3] = tensor(one, 1, ACL_FLOAT, amp_buf[b][0]);
        t[4] = tensor(one, 1, ACL_INT32, amp_buf[b][1]);
        uint64_t ws = 0;
        aclOpExecutor *ex = NULL;
        CHECK(aclnnAmpUpdateScaleGetWorkspaceSize(t[0], t[1], t[2], 2.0, 0.5, 1000, t[3], t[4], &ws, &ex));
        CHECK(aclnnAmpUpdateScale(NULL, 0, ex, stream));
        CHECK(aclrtSynchronizeStream(stream));
        for (int j = 0; j < 5; j++) aclDestroyTensor(t[j]);
    }
    return (double)(now_ns() - t0) / n;
}

/* ---- AddRmsNormDynamicQuantV2 ------------------------------------------------------------- */

typedef struct {
    int64_t rows, cols;
    void *x1, *x2, *gamma, *s1, *s2, *y1, *y2, *xout, *scale1, *scale2;
} arnq_bufs;

static void arnq_alloc(arnq_bufs *b, int64_t rows, int64_t cols) {
    size_t mn = (size_t)(rows * cols);
    b->rows = rows, b->cols = cols;
    b->x1 = device_u16(mn, bf16_data);
    b->x2 = device_u16(mn, bf16_param);
    b->gamma = device_u16((size_t)cols, bf16_param);
    b->s1 = device_u16((size_t)cols, bf16_param);
    b->s2 = device_u16((size_t)cols, bf16_data);
    b->y1 = device_zeros(mn);
    b->y2 = device_zeros(mn);
    b->xout = device_zeros(mn * 2);
    b->scale1 = device_zeros((size_t)rows * 4);
    b->scale2 = device_zeros((size_t)rows * 4);
}

static void arnq_free(arnq_bufs *b) {
    void *all[] = {b->x1, b->x2, b->gamma, b->s1, b->s2, b->y1, b->y2, b->xout, b->scale1, b->scale2};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) CHECK(aclrtFree(all[i]));
}

/* Creates the ten tensors and the executor; the caller destroys them (arnq_destroy). */
static aclOpExecutor *arnq_prepare(const arnq_bufs *b, aclTensor *t[10], uint64_t *ws) {
    int64_t x[2] = {b->rows, b->cols}, row[1] = {b->cols}, rows[1] = {b->rows};
    t[0] = tensor(x, 2, ACL_BF16, b->x1);
    t[1] = tensor(x, 2, ACL_BF16, b->x2);
    t[2] = tensor(row, 1, ACL_BF16, b->gamma);
    t[3] = tensor(row, 1, ACL_BF16, b->s1);
    t[4] = tensor(row, 1, ACL_BF16, b->s2);
    t[5] = tensor(x, 2, ACL_INT8, b->y1);
    t[6] = tensor(x, 2, ACL_INT8, b->y2);
    t[7] = tensor(x, 2, ACL_BF16, b->xout);
    t[8] = tensor(rows, 1, ACL_FLOAT, b->scale1);
    t[9] = tensor(rows, 1, ACL_FLOAT, b->scale2);
    aclOpExecutor *ex = NULL;
    CHECK(aclnnAddRmsNormDynamicQuantV2GetWorkspaceSize(t[0], t[1], t[2], t[3], t[4], NULL, 1e-6, NULL, t[5], t[6],
                                                        t[7], t[8], t[9], ws, &ex));
    return ex;
}

static double arnq_one_shot(aclrtStream stream, const arnq_bufs *b, int n) {
    uint64_t t0 = now_ns();
    for (int i = 0; i < n; i++) {
        aclTensor *t[10];
        uint64_t ws_size = 0;
        aclOpExecutor *ex = arnq_prepare(b, t, &ws_size);
        void *ws = NULL;
        if (ws_size > 0) CHECK(aclrtMalloc(&ws, ws_size, ACL_MEM_MALLOC_HUGE_FIRST));
        CHECK(aclnnAddRmsNormDynamicQuantV2(ws, ws_size, ex, stream));
        CHECK(aclrtSynchronizeStream(stream));
        if (ws) CHECK(aclrtFree(ws));
        for (int j = 0; j < 10; j++) aclDestroyTensor(t[j]);
    }
    return (double)(now_ns() - t0) / n;
}

/* ---- large kernels: one repeatable executor, best launch + sync ----------------------------- */

typedef struct {
    aclOpExecutor *ex;
    void *ws;
    uint64_t ws_size;
    aclnnStatus (*launch)(void *, uint64_t, aclOpExecutor *, aclrtStream);
    aclTensor *t[10];
    int nt;
} prepared;

static void prepared_finish(prepared *p) {
    CHECK(aclSetAclOpExecutorRepeatable(p->ex));
    p->ws = NULL;
    if (p->ws_size > 0) CHECK(aclrtMalloc(&p->ws, p->ws_size, ACL_MEM_MALLOC_HUGE_FIRST));
}

static void prepared_free(prepared *p) {
    CHECK(aclDestroyAclOpExecutor(p->ex));
    if (p->ws) CHECK(aclrtFree(p->ws));
    for (int j = 0; j < p->nt; j++) aclDestroyTensor(p->t[j]);
}

static uint64_t cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Best wall time of `launches` launch + sync; *cpu gets the least process CPU time one took. */
static double best_launch(aclrtStream stream, prepared *p, const char *threads, int launches, double *cpu) {
    setenv("PYACLNN_STUB_KERNEL_THREADS", threads, 1); /* the stream is idle: the next launch reads it */
    pyaclnn_stub_reread_switches();
    double best = 1e30;
    *cpu = 1e30;
    for (int i = 0; i < launches; i++) {
        uint64_t t0 = now_ns(), c0 = cpu_ns();
        CHECK(p->launch(p->ws, p->ws_size, p->ex, stream));
        CHECK(aclrtSynchronizeStream(stream));
        double dt = (double)(now_ns() - t0), dc = (double)(cpu_ns() - c0);
        if (dt < best) best = dt;
        if (dc < *cpu) *cpu = dc;
    }
    unsetenv("PYACLNN_STUB_KERNEL_THREADS");
    pyaclnn_stub_reread_switches();
    return best;
}

typedef struct {
    void *x, *gi, *y, *ms;
} gmq_bufs;

static void gmq_prepare(prepared *p, gmq_bufs *b, int64_t m, int64_t n) {
    int64_t x[2] = {m, n}, g[1] = {2}, ms[3] = {m / 64 + 2, n, 2};
    int32_t ends[2] = {(int32_t)(m / 3), (int32_t)m};
    b->x = device_u16((size_t)(m * n), bf16_data);
    CHECK(aclrtMalloc(&b->gi, sizeof ends, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemcpy(b->gi, sizeof ends, ends, sizeof ends, ACL_MEMCPY_HOST_TO_DEVICE));
    b->y = device_zeros((size_t)(m * n));
    b->ms = device_zeros((size_t)(ms[0] * ms[1] * ms[2]));
    p->t[0] = tensor(x, 2, ACL_BF16, b->x);
    p->t[1] = tensor(g, 1, ACL_INT32, b->gi);
    p->t[2] = tensor(x, 2, ACL_FLOAT8_E4M3FN, b->y);
    p->t[3] = tensor(ms, 3, ACL_FLOAT8_E8M0, b->ms);
    p->nt = 4;
    char round[] = "rint";
    CHECK(aclnnGroupedDynamicMxQuantGetWorkspaceSize(p->t[0], p->t[1], round, ACL_FLOAT8_E4M3FN, 32, p->t[2], p->t[3],
                                                     &p->ws_size, &p->ex));
    p->launch = aclnnGroupedDynamicMxQuant;
    prepared_finish(p);
}

typedef struct {
    void *a, *b, *out;
} add_bufs;

static void add_prepare(prepared *p, add_bufs *b, int64_t m, int64_t n, aclScalar *alpha) {
    int64_t x[2] = {m, n};
    size_t bytes = (size_t)(m * n) * 4;
    b->a = device_zeros(bytes);
    b->b = device_zeros(bytes);
    b->out = device_zeros(bytes);
    p->t[0] = tensor(x, 2, ACL_FLOAT, b->a);
    p->t[1] = tensor(x, 2, ACL_FLOAT, b->b);
    p->t[2] = tensor(x, 2, ACL_FLOAT, b->out);
    p->nt = 3;
    CHECK(aclnnAddGetWorkspaceSize(p->t[0], p->t[1], alpha, p->t[2], &p->ws_size, &p->ex));
    p->launch = aclnnAdd;
    prepared_finish(p);
}

/* Mean ns per launch + sync of a prepared executor, n launches. */
static double prepared_sync(aclrtStream stream, prepared *p, int n) {
    uint64_t t0 = now_ns();
    for (int i = 0; i < n; i++) {
        CHECK(p->launch(p->ws, p->ws_size, p->ex, stream));
        CHECK(aclrtSynchronizeStream(stream));
    }
    return (double)(now_ns() - t0) / n;
}

static void print_list(const char *name, const double *v, int r) {
    printf("\"%s\": [", name);
    for (int i = 0; i < r; i++) printf("%s%.1f", i ? ", " : "", v[i]);
    printf("]");
}

int main(int argc, char **argv) {
    int r = argc > 1 ? atoi(argv[1]) : 5;
    int n = argc > 2 ? atoi(argv[2]) : 2000;
    int64_t rows = argc > 3 ? atoll(argv[3]) : 1;
    int64_t cols = argc > 4 ? atoll(argv[4]) : 8192;
    int64_t lrows = argc > 5 ? atoll(argv[5]) : 4096;
    const char *which = argc > 6 ? argv[6] : "all";
    int decode = strcmp(which, "large") != 0, kernels = strcmp(which, "decode") != 0;
    if (r <= 0 || r > MAX_REPEATS || n <= 0 || rows <= 0 || cols <= 0 || lrows <= 0) return 2;
    unsetenv("PYACLNN_STUB_ARNQ_THREADS"); /* the general knob decides */
    unsetenv("PYACLNN_STUB_KERNEL_THREADS");

    int rc = aclInit(NULL);
    if (rc != 0 && rc != ACL_ERROR_REPEAT_INITIALIZE) CHECK(rc);
    CHECK(aclrtSetDevice(0));
    aclrtStream stream = NULL;
    CHECK(aclrtCreateStream(&stream));
    for (int s = 0; s < 2; s++)
        for (int j = 0; j < 3; j++) amp_buf[s][j] = device_zeros(4);

    arnq_bufs small, large;
    arnq_alloc(&small, rows, cols);
    arnq_alloc(&large, lrows, cols);
    prepared arnq_big = {.launch = aclnnAddRmsNormDynamicQuantV2, .nt = 10};
    arnq_big.ex = arnq_prepare(&large, arnq_big.t, &arnq_big.ws_size);
    prepared_finish(&arnq_big);
    prepared arnq_small = {.launch = aclnnAddRmsNormDynamicQuantV2, .nt = 10};
    arnq_small.ex = arnq_prepare(&small, arnq_small.t, &arnq_small.ws_size);
    prepared_finish(&arnq_small);
    prepared amp_small = {.launch = aclnnAmpUpdateScale, .nt = 5};
    {
        static const int64_t one[1] = {1};
        amp_small.t[0] = tensor(one, 1, ACL_FLOAT, amp_buf[0][0]);
        amp_small.t[1] = tensor(one, 1, ACL_INT32, amp_buf[0][1]);
        amp_small.t[2] = tensor(one, 1, ACL_FLOAT, amp_buf[0][2]);
        amp_small.t[3] = tensor(one, 1, ACL_FLOAT, amp_buf[1][0]);
        amp_small.t[4] = tensor(one, 1, ACL_INT32, amp_buf[1][1]);
        CHECK(aclnnAmpUpdateScaleGetWorkspaceSize(amp_small.t[0], amp_small.t[1], amp_small.t[2], 2.0, 0.5, 1000,
                                                  amp_small.t[3], amp_small.t[4], &amp_small.ws_size, &amp_small.ex));
        prepared_finish(&amp_small);
    }
    prepared gmq = {0}, add = {0};
    gmq_bufs gb;
    add_bufs ab;
    float one = 1.0f;
    aclScalar *alpha = aclCreateScalar(&one, ACL_FLOAT);
    gmq_prepare(&gmq, &gb, 4096, 4096);
    add_prepare(&add, &ab, 2048, 2048, alpha);

    double amp[MAX_REPEATS], arnq[MAX_REPEATS], amp_p[MAX_REPEATS] = {0}, arnq_p[MAX_REPEATS] = {0};
    prepared *big[3] = {&arnq_big, &gmq, &add};
    double t1[3][MAX_REPEATS] = {{0}}, t2[3][MAX_REPEATS] = {{0}};
    double c1[3][MAX_REPEATS] = {{0}}, c2[3][MAX_REPEATS] = {{0}};
    if (decode) {
        amp_one_shot(stream, n / 10 + 1); /* warm up */
        arnq_one_shot(stream, &small, n / 10 + 1);
    }
    for (int i = 0; i < r; i++) {
        amp[i] = decode ? amp_one_shot(stream, n) : 0.0;
        arnq[i] = decode ? arnq_one_shot(stream, &small, n) : 0.0;
        if (decode) {
            amp_p[i] = prepared_sync(stream, &amp_small, n);
            arnq_p[i] = prepared_sync(stream, &arnq_small, n);
        }
        for (int k = 0; k < 3 && kernels; k++) {
            t1[k][i] = best_launch(stream, big[k], "1", 3, &c1[k][i]);
            t2[k][i] = best_launch(stream, big[k], "2", 3, &c2[k][i]);
        }
    }

    static const char *const NAMES[3] = {"arnq_v2_large", "gmq_large", "add_large"};
    printf("{\"repeats\": %d, \"calls\": %d, \"decode_shape\": [%lld, %lld], \"large_arnq_shape\": [%lld, %lld], "
           "\"large_gmq_shape\": [4096, 4096], \"large_add_shape\": [2048, 2048], \"one_shot_ns\": {",
           r, n, (long long)rows, (long long)cols, (long long)lrows, (long long)cols);
    print_list("amp_update_scale", amp, r);
    printf(", ");
    print_list("arnq_v2_decode", arnq, r);
    printf("}, \"prepared_ns\": {");
    print_list("amp_update_scale", amp_p, r);
    printf(", ");
    print_list("arnq_v2_decode", arnq_p, r);
    printf("}, \"kernel_ns\": {");
    for (int k = 0; k < 3; k++) {
        printf("%s\"%s\": {", k ? ", " : "", NAMES[k]);
        print_list("1", t1[k], r);
        printf(", ");
        print_list("2", t2[k], r);
        printf(", ");
        print_list("cpu_1", c1[k], r);
        printf(", ");
        print_list("cpu_2", c2[k], r);
        printf("}");
    }
    printf("}}\n");

    for (int k = 0; k < 3; k++) prepared_free(big[k]);
    prepared_free(&arnq_small);
    prepared_free(&amp_small);
    aclDestroyScalar(alpha);
    arnq_free(&small);
    arnq_free(&large);
    void *rest[] = {gb.x, gb.gi, gb.y, gb.ms, ab.a, ab.b, ab.out};
    for (size_t i = 0; i < sizeof rest / sizeof rest[0]; i++) CHECK(aclrtFree(rest[i]));
    for (int s = 0; s < 2; s++)
        for (int j = 0; j < 3; j++) CHECK(aclrtFree(amp_buf[s][j]));
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    return 0;
}
