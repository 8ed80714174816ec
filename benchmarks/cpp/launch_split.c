/*
 * C twin of benchmarks/launch_split.py: what torch_npu asks of the emulator for one `x + y` (fp32, 8
 * elements), step by step, with the time of each step.
 *
 * Per op, as op-plugin's EXEC_NPU_CMD does for aclnnAdd (ConvertTypes, phase 1, the launch, then
 * ReleaseConvertTypes): aclCreateTensor x3 + aclCreateScalar (alpha), aclnnAddGetWorkspaceSize,
 * aclnnAdd, aclDestroyTensor x3 + aclDestroyScalar. Two loops:
 *
 *   split   : every step timed on its own (one clock read between steps, ~20 ns each), the stream
 *             synchronised after every op and that sync timed too (the worker hand-off and the kernel:
 *             the host waits for them)
 *   stream  : N ops back to back, one sync at the end (what a model's forward does), mean per op
 *
 *   launch_split [N ops] [R repeats]
 * prints one JSON object of per-repeat means in ns: {"create": [...], "phase1": [...], "launch": [...],
 * "destroy": [...], "sync": [...], "total": [...], "stream": [...], "check": [...]}.
 *
 * Build: cc -O2 -I<pyaclnn.get_include()> launch_split.c -L<lib dir> -lascendcl -lnnopbase -lopapi
 */
#define _POSIX_C_SOURCE 199309L   /* clock_gettime under -std=c11 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_add.h"

#define CHECK(expr)                                                                    \
    do {                                                                               \
        int rc_ = (int)(expr);                                                         \
        if (rc_ != 0) {                                                                \
            fprintf(stderr, "%s failed: %d (%s)\n", #expr, rc_, aclGetRecentErrMsg()); \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

enum { N_ELEM = 8 };
enum { CREATE, PHASE1, LAUNCH, DESTROY, SYNC, N_STEPS };
static const char *const STEP_NAMES[N_STEPS] = {"create", "phase1", "launch", "destroy", "sync"};

static const int64_t SHAPE[1] = {N_ELEM};
static const int64_t STRIDE[1] = {1};

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static aclTensor *make_tensor(void *addr) {
    return aclCreateTensor(SHAPE, 1, ACL_FLOAT, STRIDE, 0, ACL_FORMAT_ND, SHAPE, 1, addr);
}

/* One op as torch_npu issues it; t (optional) gets the clock between the steps. */
static void one_add(aclrtStream stream, void *x, void *y, void *z, uint64_t *t) {
    if (t) t[0] = now_ns();
    aclTensor *a = make_tensor(x), *b = make_tensor(y), *out = make_tensor(z);
    float one = 1.0f;
    aclScalar *alpha = aclCreateScalar(&one, ACL_FLOAT);
    if (t) t[1] = now_ns();
    uint64_t ws_size = 0;
    aclOpExecutor *executor = NULL;
    CHECK(aclnnAddGetWorkspaceSize(a, b, alpha, out, &ws_size, &executor));
    if (ws_size != 0) {
        fprintf(stderr, "unexpected workspace %llu\n", (unsigned long long)ws_size);
        exit(1);
    }
    if (t) t[2] = now_ns();
    CHECK(aclnnAdd(NULL, 0, executor, stream));
    if (t) t[3] = now_ns();
    aclDestroyTensor(a);
    aclDestroyTensor(b);
    aclDestroyTensor(out);
    aclDestroyScalar(alpha);
    if (t) t[4] = now_ns();
}

static void print_list(const char *name, const double *v, int r) {
    printf("\"%s\": [", name);
    for (int i = 0; i < r; i++) printf("%s%.1f", i ? ", " : "", v[i]);
    printf("]");
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 20000;
    int r = argc > 2 ? atoi(argv[2]) : 5;
    if (n <= 0 || r <= 0 || r > 64) return 2;

    int rc = aclInit(NULL);
    if (rc != 0 && rc != ACL_ERROR_REPEAT_INITIALIZE) CHECK(rc);
    CHECK(aclrtSetDevice(0));
    aclrtStream stream = NULL;
    CHECK(aclrtCreateStream(&stream));
    void *x, *y, *z;
    CHECK(aclrtMalloc(&x, sizeof(float) * N_ELEM, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&y, sizeof(float) * N_ELEM, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&z, sizeof(float) * N_ELEM, ACL_MEM_MALLOC_HUGE_FIRST));
    float hx[N_ELEM], hy[N_ELEM], hz[N_ELEM];
    for (int i = 0; i < N_ELEM; i++) hx[i] = (float)i, hy[i] = 0.5f * (float)i;
    CHECK(aclrtMemcpy(x, sizeof hx, hx, sizeof hx, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtMemcpy(y, sizeof hy, hy, sizeof hy, ACL_MEMCPY_HOST_TO_DEVICE));

    double steps[N_STEPS][64], total[64], stream_ns[64];
    for (int i = 0; i < 200; i++) one_add(stream, x, y, z, NULL);   /* warm up */
    CHECK(aclrtSynchronizeStream(stream));
    for (int rep = 0; rep < r; rep++) {
        uint64_t sum[N_STEPS] = {0};
        for (int i = 0; i < n; i++) {
            uint64_t t[5];
            one_add(stream, x, y, z, t);
            CHECK(aclrtSynchronizeStream(stream));
            uint64_t end = now_ns();
            for (int s = 0; s < SYNC; s++) sum[s] += t[s + 1] - t[s];
            sum[SYNC] += end - t[4];
        }
        total[rep] = 0;
        for (int s = 0; s < N_STEPS; s++) {
            steps[s][rep] = (double)sum[s] / n;
            total[rep] += steps[s][rep];
        }
        uint64_t t0 = now_ns();
        for (int i = 0; i < n; i++) one_add(stream, x, y, z, NULL);
        CHECK(aclrtSynchronizeStream(stream));
        stream_ns[rep] = (double)(now_ns() - t0) / n;
    }
    CHECK(aclrtMemcpy(hz, sizeof hz, z, sizeof hz, ACL_MEMCPY_DEVICE_TO_HOST));

    printf("{\"n\": %d, ", n);
    for (int s = 0; s < N_STEPS; s++) {
        print_list(STEP_NAMES[s], steps[s], r);
        printf(", ");
    }
    print_list("total", total, r);
    printf(", ");
    print_list("stream", stream_ns, r);
    printf(", \"check\": [");
    for (int i = 0; i < N_ELEM; i++) printf("%s%.9g", i ? ", " : "", hz[i]);
    printf("]}\n");

    CHECK(aclrtFree(x));
    CHECK(aclrtFree(y));
    CHECK(aclrtFree(z));
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    return 0;
}
