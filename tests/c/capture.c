/*
 * ACL Graph capture and replay (aclmdlRI*, src/runtime/model.c); tests/test_capture.py runs it.
 *
 *   capture replay    an aclnnAdd launch, a memcpy and a memset captured on stream A (nothing runs), then
 *                     replayed twice with new input data each time (the replay reads device memory as it
 *                     is then); the executor of the captured launch is gone, the model keeps the launch.
 *   capture join      stream B joins A's capture through an event recorded on A; B's copy is recorded
 *                     into the model in capture order; the replay on a third stream runs it.
 *   capture errors    the vendor's codes for what a capture forbids, each with its message line.
 *   capture threads   two threads capture and replay their own models concurrently, 200 times.
 *   capture abandon   a capture whose stream is destroyed with its context stops forbidding synchronous copies.
 *
 * Prints "ok <what>" lines; exit 2 with the failing call on any mismatch.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_add.h"

#include "check.h"

#define EXPECT(call, code, text)                                                                       \
    do {                                                                                               \
        int rc_ = (int)(call);                                                                         \
        const char *msg_ = aclGetRecentErrMsg();                                                       \
        if (rc_ != (code) || !msg_ || !strstr(msg_, (text))) {                                         \
            fprintf(stderr, "%s:%d: %s = %d (expected %d, \"%s\")\n%s\n", __FILE__, __LINE__, #call, rc_, \
                    (int)(code), (text), msg_ ? msg_ : "(no message)");                                \
            exit(2);                                                                                   \
        }                                                                                              \
        printf("code %s %d\n", #code, rc_);                                                            \
    } while (0)

#define REQUIRE(cond)                                                           \
    do {                                                                        \
        if (!(cond)) {                                                          \
            fprintf(stderr, "%s:%d: %s does not hold\n", __FILE__, __LINE__, #cond); \
            exit(2);                                                            \
        }                                                                       \
    } while (0)

#define N 16

static void *dev_alloc(size_t bytes) {
    void *p = NULL;
    CHECK(aclrtMalloc(&p, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    return p;
}

static void upload(void *dst, const float *src) { CHECK(aclrtMemcpy(dst, N * 4, src, N * 4, ACL_MEMCPY_HOST_TO_DEVICE)); }
static void download(float *dst, const void *src) { CHECK(aclrtMemcpy(dst, N * 4, src, N * 4, ACL_MEMCPY_DEVICE_TO_HOST)); }

static aclTensor *tensor(void *data) {
    int64_t shape[1] = {N}, strides[1] = {1};
    return aclCreateTensor(shape, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 1, data);
}

/* out = x + 2 * y as a captured aclnnAdd; then copy out -> copy_dst and memset fill to 0 (bytes). */
static aclmdlRI capture_add(aclrtStream s, void *x, void *y, void *out, void *copy_dst, void *fill) {
    aclTensor *tx = tensor(x), *ty = tensor(y), *to = tensor(out);
    float two = 2.0f;
    aclScalar *alpha = aclCreateScalar(&two, ACL_FLOAT);
    CHECK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    aclmdlRICaptureStatus st = ACL_MODEL_RI_CAPTURE_STATUS_NONE;
    aclmdlRI during = NULL;
    CHECK(aclmdlRICaptureGetInfo(s, &st, &during));
    REQUIRE(st == ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE && during != NULL);
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    CHECK(aclnnAddGetWorkspaceSize(tx, ty, alpha, to, &ws, &ex));
    void *workspace = ws ? dev_alloc(ws) : NULL;   /* aclrtMalloc is allowed while capturing */
    CHECK(aclnnAdd(workspace, ws, ex, s));
    CHECK(aclrtMemcpyAsync(copy_dst, N * 4, out, N * 4, ACL_MEMCPY_DEVICE_TO_DEVICE, s));
    CHECK(aclrtMemsetAsync(fill, N * 4, 0, N * 4, s));
    aclmdlRI model = NULL;
    CHECK(aclmdlRICaptureEnd(s, &model));
    REQUIRE(model == during);
    CHECK(aclmdlRICaptureGetInfo(s, &st, NULL));
    REQUIRE(st == ACL_MODEL_RI_CAPTURE_STATUS_NONE);
    aclDestroyTensor(tx), aclDestroyTensor(ty), aclDestroyTensor(to), aclDestroyScalar(alpha);
    return model;
}

static void mode_replay(void) {
    aclrtStream s;
    CHECK(aclrtCreateStream(&s));
    void *x = dev_alloc(N * 4), *y = dev_alloc(N * 4), *out = dev_alloc(N * 4), *copy = dev_alloc(N * 4),
         *fill = dev_alloc(N * 4);
    float hx[N], hy[N], h[N], ones[N];
    for (int i = 0; i < N; i++) hx[i] = (float)i, hy[i] = 1.0f, ones[i] = 1.0f;
    upload(x, hx), upload(y, hy), upload(out, ones), upload(fill, ones);
    aclmdlRI model = capture_add(s, x, y, out, copy, fill);
    /* nothing ran during the capture */
    CHECK(aclrtSynchronizeStream(s));
    download(h, out);
    for (int i = 0; i < N; i++) REQUIRE(h[i] == 1.0f);
    download(h, fill);
    REQUIRE(h[0] == 1.0f);
    uint32_t id = 0;
    CHECK(aclmdlRIGetId(model, &id));
    printf("ok capture (model id %u)\n", id);

    for (int round = 0; round < 2; round++) {   /* new input data before each replay */
        for (int i = 0; i < N; i++) hx[i] = (float)(i * (round + 3)), hy[i] = (float)(round - i);
        upload(x, hx), upload(y, hy), upload(fill, ones);
        CHECK(aclmdlRIExecuteAsync(model, s));
        CHECK(aclrtSynchronizeStream(s));
        download(h, out);
        for (int i = 0; i < N; i++) REQUIRE(h[i] == hx[i] + 2.0f * hy[i]);
        download(h, copy);
        for (int i = 0; i < N; i++) REQUIRE(h[i] == hx[i] + 2.0f * hy[i]);
        download(h, fill);
        for (int i = 0; i < N; i++) REQUIRE(h[i] == 0.0f);
    }
    /* a replay on another stream; destroy right after queuing it: the tasks go once it has run */
    aclrtStream other;
    CHECK(aclrtCreateStream(&other));
    for (int i = 0; i < N; i++) hx[i] = 100.0f + (float)i;
    upload(x, hx);
    CHECK(aclmdlRIExecuteAsync(model, other));
    CHECK(aclmdlRIDestroy(model));
    CHECK(aclrtSynchronizeStream(other));
    download(h, out);
    for (int i = 0; i < N; i++) REQUIRE(h[i] == hx[i] + 2.0f * hy[i]);
    EXPECT(aclmdlRIExecuteAsync(model, s), ACL_ERROR_RT_PARAM_INVALID, "not a live model");
    EXPECT(aclmdlRIDestroy(model), ACL_ERROR_RT_PARAM_INVALID, "not a live model");
    printf("ok replay\n");
    CHECK(aclrtDestroyStream(other));
    CHECK(aclrtDestroyStream(s));
    void *ptrs[] = {x, y, out, copy, fill};
    for (int i = 0; i < 5; i++) CHECK(aclrtFree(ptrs[i]));
}

static void mode_join(void) {
    aclrtStream a, b, c;
    CHECK(aclrtCreateStream(&a)); CHECK(aclrtCreateStream(&b)); CHECK(aclrtCreateStream(&c));
    aclrtEvent fork_ev, join_ev;
    CHECK(aclrtCreateEvent(&fork_ev)); CHECK(aclrtCreateEvent(&join_ev));
    void *p = dev_alloc(N * 4), *q = dev_alloc(N * 4), *r = dev_alloc(N * 4);
    float h[N], v[N];
    for (int i = 0; i < N; i++) v[i] = (float)(i + 1);
    upload(p, v);
    CHECK(aclrtMemset(q, N * 4, 0, N * 4)); CHECK(aclrtMemset(r, N * 4, 0, N * 4));
    CHECK(aclmdlRICaptureBegin(a, ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL));
    CHECK(aclrtMemcpyAsync(q, N * 4, p, N * 4, ACL_MEMCPY_DEVICE_TO_DEVICE, a));   /* q = p      */
    CHECK(aclrtRecordEvent(fork_ev, a));
    CHECK(aclrtStreamWaitEvent(b, fork_ev));                                       /* b joins    */
    aclmdlRICaptureStatus st;
    aclmdlRI ma = NULL, mb = NULL;
    CHECK(aclmdlRICaptureGetInfo(a, &st, &ma));
    CHECK(aclmdlRICaptureGetInfo(b, &st, &mb));
    REQUIRE(st == ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE && ma == mb);
    CHECK(aclrtMemcpyAsync(r, N * 4, q, N * 4, ACL_MEMCPY_DEVICE_TO_DEVICE, b));   /* r = q (b)  */
    CHECK(aclrtRecordEvent(join_ev, b));
    CHECK(aclrtStreamWaitEvent(a, join_ev));
    EXPECT(aclmdlRICaptureEnd(b, &mb), ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED, "not initiated in this stream");
    aclmdlRI model;
    CHECK(aclmdlRICaptureEnd(a, &model));
    CHECK(aclmdlRICaptureGetInfo(b, &st, NULL));
    REQUIRE(st == ACL_MODEL_RI_CAPTURE_STATUS_NONE);   /* b left the capture with a */
    CHECK(aclrtSynchronizeStream(b));
    download(h, r);
    REQUIRE(h[0] == 0.0f);
    CHECK(aclmdlRIExecuteAsync(model, c));
    CHECK(aclrtSynchronizeStream(c));
    download(h, r);
    for (int i = 0; i < N; i++) REQUIRE(h[i] == v[i]);
    const char *path = getenv("CAPTURE_JSON");
    if (path) CHECK(aclmdlRIDebugJsonPrint(model, path, ACL_MDLRI_DEBUG_JSON_PRINT_VERBOSE));
    CHECK(aclmdlRIDestroy(model));
    printf("ok join\n");
    CHECK(aclrtDestroyEvent(fork_ev)); CHECK(aclrtDestroyEvent(join_ev));
    CHECK(aclrtDestroyStream(a)); CHECK(aclrtDestroyStream(b)); CHECK(aclrtDestroyStream(c));
    CHECK(aclrtFree(p)); CHECK(aclrtFree(q)); CHECK(aclrtFree(r));
}

static void mode_errors(void) {
    aclrtStream s, other;
    CHECK(aclrtCreateStream(&s)); CHECK(aclrtCreateStream(&other));
    void *d = dev_alloc(N * 4);
    float host[N] = {0};
    aclmdlRI model = NULL;
    EXPECT(aclmdlRICaptureBegin(s, (aclmdlRICaptureMode)3), ACL_ERROR_RT_PARAM_INVALID, "mode 3 is invalid");
    EXPECT(aclmdlRICaptureBegin(NULL, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL), ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT,
           "default stream");
    EXPECT(aclmdlRICaptureEnd(s, &model), ACL_ERROR_RT_STREAM_NOT_CAPTURED, "not in capture status");
    EXPECT(aclmdlRICaptureGetInfo(s, NULL, NULL), ACL_ERROR_RT_PARAM_INVALID, "cannot both be NULL");
    EXPECT(aclmdlRICaptureTaskGrpBegin(s), ACL_ERROR_RT_STREAM_NOT_CAPTURED, "not in the capture stage");

    CHECK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    EXPECT(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL), ACL_ERROR_RT_STREAM_CAPTURED,
           "already in capture status");
    EXPECT(aclrtSynchronizeStream(s), ACL_ERROR_RT_STREAM_CAPTURED, "Synchronizing a stream");
    EXPECT(aclrtSynchronizeStreamWithTimeout(s, 100), ACL_ERROR_RT_STREAM_CAPTURED, "capture stage");
    aclrtStreamStatus ss;
    EXPECT(aclrtStreamQuery(s, &ss), ACL_ERROR_RT_STREAM_CAPTURED, "Querying a stream");
    EXPECT(aclrtDestroyStream(s), ACL_ERROR_RT_STREAM_CAPTURED, "Stream destruction");
    EXPECT(aclrtSynchronizeDevice(), ACL_ERROR_RT_STREAM_CAPTURED, "Synchronizing a device");
    /* GLOBAL: synchronous copies and memsets are refused on every thread ... */
    EXPECT(aclrtMemcpy(d, N * 4, host, N * 4, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT,
           "not permitted when a stream is capturing");
    EXPECT(aclrtMemset(d, N * 4, 0, N * 4), ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT, "Memory setting");
    /* ... unless the thread exchanges its mode for RELAXED */
    aclmdlRICaptureMode mode = ACL_MODEL_RI_CAPTURE_MODE_RELAXED;
    CHECK(aclmdlRICaptureThreadExchangeMode(&mode));
    REQUIRE(mode == ACL_MODEL_RI_CAPTURE_MODE_GLOBAL);
    CHECK(aclrtMemcpy(d, N * 4, host, N * 4, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclmdlRICaptureThreadExchangeMode(&mode));
    REQUIRE(mode == ACL_MODEL_RI_CAPTURE_MODE_RELAXED);
    /* pageable host memory cannot be copied asynchronously into a capture */
    EXPECT(aclrtMemcpyAsync(d, N * 4, host, N * 4, ACL_MEMCPY_HOST_TO_DEVICE, s), ACL_ERROR_RT_PARAM_INVALID,
           "pageable memory copy task does not support graph capture");
    void *other_ptr = dev_alloc(64);   /* the vendor's runtime checks no capture mode in aclrtMalloc */
    CHECK(aclrtFree(other_ptr));
    aclmdlRI during = NULL;
    CHECK(aclmdlRICaptureGetInfo(s, NULL, &during));
    EXPECT(aclmdlRIDestroy(during), ACL_ERROR_RT_MODEL_CAPTURED, "being captured");
    EXPECT(aclmdlRIExecuteAsync(during, other), ACL_ERROR_RT_MODEL_EXECUTE, "still being captured");
    EXPECT(aclmdlRIExecuteAsync(during, s), ACL_ERROR_RT_STREAM_CAPTURED, "capture stage");
    aclrtTaskGrp grp;
    EXPECT(aclmdlRICaptureTaskGrpBegin(s), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "not supported by the emulator");
    EXPECT(aclmdlRICaptureTaskGrpEnd(s, &grp), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "not supported by the emulator");
    EXPECT(aclmdlRICaptureTaskUpdateBegin(s, (aclrtTaskGrp)&grp), ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
           "not supported by the emulator");
    EXPECT(aclmdlRICaptureTaskUpdateEnd(s), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "not supported by the emulator");
    EXPECT(aclmdlRICaptureToModelRIBegin(other, during, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL),
           ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "not supported by the emulator");
    aclmdlRICondHandle cond;
    uint64_t *cond_ptr;
    EXPECT(aclmdlRICondHandleCreate(during, 0, ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT, &cond),
           ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "not supported by the emulator");
    EXPECT(aclmdlRICondHandleGetCondPtr(cond, &cond_ptr), ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
           "not supported by the emulator");
    aclmdlRICondTaskParams params = {0};
    EXPECT(aclmdlRIAddCondTask(params, s, 0), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "not supported by the emulator");
    CHECK(aclmdlRICaptureEnd(s, &model));
    CHECK(aclmdlRIDebugPrint(model));
    /* after the capture everything is allowed again */
    CHECK(aclrtMemcpy(d, N * 4, host, N * 4, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtSynchronizeDevice());
    CHECK(aclmdlRIDestroy(model));
    EXPECT(aclmdlRIGetId(model, (uint32_t *)host), ACL_ERROR_RT_PARAM_INVALID, "not a live model");
    printf("ok errors\n");
    CHECK(aclrtFree(d));
    CHECK(aclrtDestroyStream(s)); CHECK(aclrtDestroyStream(other));
}

/* A capture whose stream goes with its context (aclrtDestroyContext) no longer forbids synchronous copies. */
static void mode_abandon(void) {
    aclrtContext main_ctx, ctx;
    CHECK(aclrtGetCurrentContext(&main_ctx));
    CHECK(aclrtCreateContext(&ctx, 0));
    aclrtStream s;
    CHECK(aclrtCreateStream(&s));
    CHECK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    void *d = dev_alloc(N * 4);
    float host[N] = {0};
    EXPECT(aclrtMemcpy(d, N * 4, host, N * 4, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT,
           "not permitted");
    CHECK(aclrtFree(d));
    CHECK(aclrtDestroyContext(ctx));
    CHECK(aclrtSetCurrentContext(main_ctx));
    d = dev_alloc(N * 4);
    CHECK(aclrtMemcpy(d, N * 4, host, N * 4, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtFree(d));
    printf("ok abandon\n");
}

static aclrtContext g_ctx;

static void *thread_main(void *arg) {
    CHECK(aclrtSetCurrentContext(g_ctx));
    int seed = (int)(intptr_t)arg;
    aclrtStream s;
    CHECK(aclrtCreateStream(&s));
    void *x = dev_alloc(N * 4), *y = dev_alloc(N * 4), *out = dev_alloc(N * 4), *copy = dev_alloc(N * 4),
         *fill = dev_alloc(N * 4);
    float hx[N], hy[N], h[N];
    for (int round = 0; round < 200; round++) {
        for (int i = 0; i < N; i++) hx[i] = (float)(seed + round), hy[i] = (float)i;
        /* THREAD_LOCAL: this thread may not copy synchronously while it captures, another may */
        upload(x, hx), upload(y, hy);
        CHECK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL));
        aclmdlRI model = NULL;
        aclTensor *tx = tensor(x), *ty = tensor(y), *to = tensor(out);
        float two = 2.0f;
        aclScalar *alpha = aclCreateScalar(&two, ACL_FLOAT);
        uint64_t ws = 0;
        aclOpExecutor *ex = NULL;
        CHECK(aclnnAddGetWorkspaceSize(tx, ty, alpha, to, &ws, &ex));
        CHECK(aclnnAdd(NULL, 0, ex, s));
        aclDestroyTensor(tx), aclDestroyTensor(ty), aclDestroyTensor(to), aclDestroyScalar(alpha);
        CHECK(aclmdlRICaptureEnd(s, &model));
        CHECK(aclmdlRIExecuteAsync(model, s));
        CHECK(aclmdlRIDestroy(model));
        CHECK(aclrtSynchronizeStream(s));
        download(h, out);
        for (int i = 0; i < N; i++) REQUIRE(h[i] == hx[i] + 2.0f * hy[i]);
    }
    void *ptrs[] = {x, y, out, copy, fill};
    for (int i = 0; i < 5; i++) CHECK(aclrtFree(ptrs[i]));
    CHECK(aclrtDestroyStream(s));
    return NULL;
}

static void mode_threads(void) {
    CHECK(aclrtGetCurrentContext(&g_ctx));
    pthread_t t[2];
    for (int i = 0; i < 2; i++) REQUIRE(pthread_create(&t[i], NULL, thread_main, (void *)(intptr_t)(i * 1000)) == 0);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    printf("ok threads\n");
}

int main(int argc, char **argv) {
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "replay")) mode_replay();
        else if (!strcmp(argv[i], "join")) mode_join();
        else if (!strcmp(argv[i], "errors")) mode_errors();
        else if (!strcmp(argv[i], "threads")) mode_threads();
        else if (!strcmp(argv[i], "abandon")) mode_abandon();
        else return 3;
    }
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    return 0;
}
