/*
 * C twin of benchmarks/launch_overhead.py: host time per aclnnAmpUpdateScale launch, measured the
 * same way as the Python variants (sync every K launches, outside the timed part).
 *
 *   one_shot : aclCreateTensor x5, GetWorkspaceSize, (workspace), launch, aclDestroyTensor x5
 *   prepared : one repeatable executor; per launch 3x aclSetInputTensorAddr + 2x
 *              aclSetOutputTensorAddr (addresses change every launch) and the launch
 *
 * Inputs and outputs ping-pong between two sets of device buffers, so every launch reads the
 * previous one's results (as a training loop does) and every address changes.
 *
 *   launch_overhead [N launches] [K sync interval] [R repeats]
 * prints one JSON object: {"one_shot_ns": [per-repeat means], "prepared_ns": [...], "check": {...}}
 *
 * Build: cc -O2 -I<pyaclnn.get_include()> launch_overhead.c -L<lib dir> -lascendcl -lnnopbase -lopapi
 */
#define _POSIX_C_SOURCE 199309L   /* clock_gettime under -std=c11 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_amp_update_scale.h"

#define CHECK(expr)                                                                    \
    do {                                                                               \
        int rc_ = (int)(expr);                                                         \
        if (rc_ != 0) {                                                                \
            fprintf(stderr, "%s failed: %d (%s)\n", #expr, rc_, aclGetRecentErrMsg()); \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

enum { SCALE, TRACKER, FOUND, N_BUF };

static const int64_t SHAPE[1] = {1};
static const int64_t STRIDE[1] = {1};
static const aclDataType DTYPES[N_BUF] = {ACL_FLOAT, ACL_INT32, ACL_FLOAT};

static void *buffers[2][N_BUF];

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static aclTensor *make_tensor(int which, void *addr) {
    return aclCreateTensor(SHAPE, 1, DTYPES[which], STRIDE, 0, ACL_FORMAT_ND, SHAPE, 1, addr);
}

static void reset_buffers(void) {
    float scale = 100.0f, zero = 0.0f;
    int32_t tracker = 0;
    for (int s = 0; s < 2; s++) {
        CHECK(aclrtMemcpy(buffers[s][SCALE], 4, &scale, 4, ACL_MEMCPY_HOST_TO_DEVICE));
        CHECK(aclrtMemcpy(buffers[s][TRACKER], 4, &tracker, 4, ACL_MEMCPY_HOST_TO_DEVICE));
        CHECK(aclrtMemcpy(buffers[s][FOUND], 4, &zero, 4, ACL_MEMCPY_HOST_TO_DEVICE));
    }
}

static double run_one_shot(aclrtStream stream, int n, int k) {
    uint64_t total = 0;
    for (int done = 0; done < n; done += k) {
        uint64_t t0 = now_ns();
        for (int i = done; i < done + k; i++) {
            int in = i & 1, out = in ^ 1;
            aclTensor *cs = make_tensor(SCALE, buffers[in][SCALE]);
            aclTensor *gt = make_tensor(TRACKER, buffers[in][TRACKER]);
            aclTensor *fi = make_tensor(FOUND, buffers[in][FOUND]);
            aclTensor *ncs = make_tensor(SCALE, buffers[out][SCALE]);
            aclTensor *ngt = make_tensor(TRACKER, buffers[out][TRACKER]);
            uint64_t ws_size = 0;
            aclOpExecutor *executor = NULL;
            CHECK(aclnnAmpUpdateScaleGetWorkspaceSize(cs, gt, fi, 2.0, 0.5, 1000, ncs, ngt, &ws_size, &executor));
            void *ws = NULL;
            if (ws_size > 0) CHECK(aclrtMalloc(&ws, ws_size, ACL_MEM_MALLOC_HUGE_FIRST));
            CHECK(aclnnAmpUpdateScale(ws, ws_size, executor, stream));
            if (ws_size > 0) CHECK(aclrtFree(ws));   /* a real program would keep it until the sync */
            aclDestroyTensor(cs);
            aclDestroyTensor(gt);
            aclDestroyTensor(fi);
            aclDestroyTensor(ncs);
            aclDestroyTensor(ngt);
        }
        total += now_ns() - t0;
        CHECK(aclrtSynchronizeStream(stream));
    }
    return (double)total / n;
}

static double run_prepared(aclrtStream stream, int n, int k) {
    aclTensor *t[5];
    for (int j = 0; j < 3; j++) t[j] = make_tensor(j, buffers[0][j]);
    t[3] = make_tensor(SCALE, buffers[1][SCALE]);
    t[4] = make_tensor(TRACKER, buffers[1][TRACKER]);
    uint64_t ws_size = 0;
    aclOpExecutor *executor = NULL;
    CHECK(aclnnAmpUpdateScaleGetWorkspaceSize(t[0], t[1], t[2], 2.0, 0.5, 1000, t[3], t[4], &ws_size, &executor));
    CHECK(aclSetAclOpExecutorRepeatable(executor));
    void *ws = NULL;
    if (ws_size > 0) CHECK(aclrtMalloc(&ws, ws_size, ACL_MEM_MALLOC_HUGE_FIRST));

    uint64_t total = 0;
    for (int done = 0; done < n; done += k) {
        uint64_t t0 = now_ns();
        for (int i = done; i < done + k; i++) {
            int in = i & 1, out = in ^ 1;
            CHECK(aclSetInputTensorAddr(executor, 0, t[0], buffers[in][SCALE]));
            CHECK(aclSetInputTensorAddr(executor, 1, t[1], buffers[in][TRACKER]));
            CHECK(aclSetInputTensorAddr(executor, 2, t[2], buffers[in][FOUND]));
            CHECK(aclSetOutputTensorAddr(executor, 0, t[3], buffers[out][SCALE]));
            CHECK(aclSetOutputTensorAddr(executor, 1, t[4], buffers[out][TRACKER]));
            CHECK(aclnnAmpUpdateScale(ws, ws_size, executor, stream));
        }
        total += now_ns() - t0;
        CHECK(aclrtSynchronizeStream(stream));
    }
    CHECK(aclDestroyAclOpExecutor(executor));
    if (ws) CHECK(aclrtFree(ws));
    for (int j = 0; j < 5; j++) aclDestroyTensor(t[j]);
    return (double)total / n;
}

static void print_list(const char *name, const double *v, int r) {
    printf("\"%s\": [", name);
    for (int i = 0; i < r; i++) printf("%s%.1f", i ? ", " : "", v[i]);
    printf("]");
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 20000;
    int k = argc > 2 ? atoi(argv[2]) : 100;
    int r = argc > 3 ? atoi(argv[3]) : 3;
    if (n <= 0 || k <= 0 || r <= 0 || r > 64) return 2;
    n = (n + k - 1) / k * k;

    int rc = aclInit(NULL);
    if (rc != 0 && rc != ACL_ERROR_REPEAT_INITIALIZE) CHECK(rc);
    CHECK(aclrtSetDevice(0));
    aclrtStream stream = NULL;
    CHECK(aclrtCreateStream(&stream));
    for (int s = 0; s < 2; s++)
        for (int j = 0; j < N_BUF; j++) CHECK(aclrtMalloc(&buffers[s][j], 4, ACL_MEM_MALLOC_HUGE_FIRST));

    double one_shot[64], prepared[64];
    float scale[2] = {0};
    int32_t tracker[2] = {0};
    for (int i = 0; i < r; i++) {
        reset_buffers();
        one_shot[i] = run_one_shot(stream, n, k);
        CHECK(aclrtMemcpy(&scale[0], 4, buffers[n & 1][SCALE], 4, ACL_MEMCPY_DEVICE_TO_HOST));
        CHECK(aclrtMemcpy(&tracker[0], 4, buffers[n & 1][TRACKER], 4, ACL_MEMCPY_DEVICE_TO_HOST));
        reset_buffers();
        prepared[i] = run_prepared(stream, n, k);
        CHECK(aclrtMemcpy(&scale[1], 4, buffers[n & 1][SCALE], 4, ACL_MEMCPY_DEVICE_TO_HOST));
        CHECK(aclrtMemcpy(&tracker[1], 4, buffers[n & 1][TRACKER], 4, ACL_MEMCPY_DEVICE_TO_HOST));
    }

    printf("{\"n\": %d, \"k\": %d, ", n, k);
    print_list("one_shot_ns", one_shot, r);
    printf(", ");
    print_list("prepared_ns", prepared, r);
    printf(", \"check\": {\"one_shot\": [%.9g, %d], \"prepared\": [%.9g, %d]}}\n", scale[0], tracker[0], scale[1],
           tracker[1]);

    for (int s = 0; s < 2; s++)
        for (int j = 0; j < N_BUF; j++) CHECK(aclrtFree(buffers[s][j]));
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    return 0;
}
