/*
 * Host work in stream order and device-memory synchronisation (tests/test_runtime_host_work.py runs it,
 * with the hazard checker in report mode):
 *
 *   host_work hostfunc    aclrtLaunchHostFunc between copies and kernels: each host function sees exactly
 *                         the work queued before it (it reads device memory with aclrtMemcpy) and holds
 *                         back the work queued after it; it runs on another thread than the caller's
 *   host_work callback    aclrtSubscribeReport + aclrtLaunchCallback with a thread looping on
 *                         aclrtProcessReport: callbacks run on that thread, in order; ACL_CALLBACK_BLOCK holds
 *                         the stream until the callback returns, ACL_CALLBACK_NO_BLOCK does not
 *   host_work value       aclrtValueWrite on stream A releases aclrtValueWait on stream B: B copies A's data
 *                         only once A has written it (A is held back first)
 *   host_work value_bug   the same without the wait: B copies too early (the checker reports it)
 *   host_work destroy     aclrtDestroyStreamForce ends a stream blocked in a value wait that is never
 *                         satisfied, and one blocked on a callback nobody processes
 *
 * Prints "ok <scenario>" and then "findings <n>" (pyaclnn_stub_hazards). Exit 1 on a wrong result,
 * 2 when a call fails.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_copy.h"
#include "aclnnop/aclnn_zero.h"
#include "pyaclnn_stub.h"

#include "check.h"
#define EXPECT(cond)                                                                                      \
    do {                                                                                                  \
        if (!(cond)) {                                                                                    \
            fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond);                          \
            exit(1);                                                                                      \
        }                                                                                                 \
    } while (0)

#define N 64   /* floats per buffer */

static void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static aclTensor *tensor_of(void *dev) {
    int64_t shape[1] = {N}, strides[1] = {1};
    return aclCreateTensor(shape, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 1, dev);
}

static void zero_on(void *dev, aclrtStream stream) {
    aclTensor *t = tensor_of(dev);
    uint64_t need = 0;
    aclOpExecutor *exec = NULL;
    CHECK(aclnnInplaceZeroGetWorkspaceSize(t, &need, &exec));
    CHECK(aclnnInplaceZero(NULL, 0, exec, stream));
    aclDestroyTensor(t);
}

static void copy_on(void *dst, void *src, aclrtStream stream) {
    aclTensor *d = tensor_of(dst), *s = tensor_of(src);
    uint64_t need = 0;
    aclOpExecutor *exec = NULL;
    CHECK(aclnnInplaceCopyGetWorkspaceSize(d, s, &need, &exec));
    CHECK(aclnnInplaceCopy(NULL, 0, exec, stream));
    aclDestroyTensor(d);
    aclDestroyTensor(s);
}

static void *dev_alloc(void) {
    void *p = NULL;
    CHECK(aclrtMalloc(&p, N * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemset(p, N * sizeof(float), 0, N * sizeof(float)));
    return p;
}

static float *pinned_ramp(float base) {
    float *h = NULL;
    CHECK(aclrtMallocHost((void **)&h, N * sizeof(float)));
    for (int i = 0; i < N; i++) h[i] = base + (float)i;
    return h;
}

/* ---- host functions --------------------------------------------------------------------------- */

typedef struct {
    void *dev;              /* what the host function reads */
    float seen[N];
    int order;              /* when it ran, among the host functions */
    pthread_t thread;
} probe;

static atomic_int next_order = 1;

static void sleeper(void *arg) { sleep_ms(*(int *)arg); }

static void read_probe(void *arg) {
    probe *p = arg;
    p->thread = pthread_self();
    p->order = atomic_fetch_add(&next_order, 1);
    /* A synchronous copy from inside the host function: the stream's earlier work is visible to it. */
    if (aclrtMemcpy(p->seen, sizeof p->seen, p->dev, sizeof p->seen, ACL_MEMCPY_DEVICE_TO_HOST) != 0) p->order = -1;
}

static void scenario_hostfunc(void) {
    aclrtStream s;
    CHECK(aclrtCreateStream(&s));
    void *a = dev_alloc(), *b = dev_alloc();
    float *src = pinned_ramp(1.0f);
    probe p1 = {.dev = b}, p2 = {.dev = b}, p3 = {.dev = a};
    int hold = 300;
    CHECK(aclrtLaunchHostFunc(s, sleeper, &hold));            /* everything below queues behind it */
    CHECK(aclrtMemcpyAsync(a, N * sizeof(float), src, N * sizeof(float), ACL_MEMCPY_HOST_TO_DEVICE, s));
    copy_on(b, a, s);                                          /* kernel: b <- a */
    CHECK(aclrtLaunchHostFunc(s, read_probe, &p1));            /* sees b == src */
    zero_on(b, s);                                             /* kernel: b <- 0 */
    CHECK(aclrtLaunchHostFunc(s, read_probe, &p2));            /* sees b == 0 */
    CHECK(aclrtMemsetAsync(a, N * sizeof(float), 0, N * sizeof(float), s));
    CHECK(aclrtLaunchHostFunc(s, read_probe, &p3));            /* sees a == 0 */
    EXPECT(p1.order == 0 && p3.order == 0);                    /* nothing ran yet: the sleeper holds the stream */
    CHECK(aclrtSynchronizeStream(s));
    EXPECT(p1.order == 1 && p2.order == 2 && p3.order == 3);
    EXPECT(!pthread_equal(p1.thread, pthread_self()));
    for (int i = 0; i < N; i++) EXPECT(p1.seen[i] == src[i] && p2.seen[i] == 0.0f && p3.seen[i] == 0.0f);
    CHECK(aclrtFreeHost(src));
    CHECK(aclrtFree(a));
    CHECK(aclrtFree(b));
    CHECK(aclrtDestroyStream(s));
}

/* ---- callbacks -------------------------------------------------------------------------------- */

static atomic_int start_reports, stop_reports;

/* The subscribed thread, as torch_npu's: sets the context, then loops on aclrtProcessReport. */
static void *report_loop(void *arg) {
    aclrtContext ctx = arg;
    CHECK(aclrtSetCurrentContext(ctx));
    while (!atomic_load(&start_reports)) sleep_ms(1);   /* until the main thread has subscribed it */
    while (!atomic_load(&stop_reports)) {
        int rc = aclrtProcessReport(20);
        if (rc != 0 && rc != ACL_ERROR_RT_REPORT_TIMEOUT) {
            fprintf(stderr, "aclrtProcessReport = %d\n", rc);
            exit(2);
        }
    }
    return NULL;
}

typedef struct {
    int sleep_ms;
    atomic_int done;
    pthread_t thread;
    int order;
    void *dev;
    float seen[N];
} cb_state;

static void callback(void *arg) {
    cb_state *c = arg;
    c->thread = pthread_self();
    c->order = atomic_fetch_add(&next_order, 1);
    if (c->sleep_ms) sleep_ms(c->sleep_ms);
    if (c->dev && aclrtMemcpy(c->seen, sizeof c->seen, c->dev, sizeof c->seen, ACL_MEMCPY_DEVICE_TO_HOST) != 0)
        c->order = -1;
    atomic_store(&c->done, 1);
}

static void scenario_callback(void) {
    aclrtContext ctx;
    CHECK(aclrtGetCurrentContext(&ctx));
    pthread_t reporter;
    if (pthread_create(&reporter, NULL, report_loop, ctx) != 0) exit(2);
    aclrtStream s;
    CHECK(aclrtCreateStream(&s));
    CHECK(aclrtSubscribeReport((uint64_t)reporter, s));
    atomic_store(&start_reports, 1);
    void *a = dev_alloc();
    float *src = pinned_ramp(5.0f);
    atomic_store(&next_order, 1);
    cb_state c1 = {.sleep_ms = 40, .dev = a}, c2 = {.dev = a}, c3 = {.sleep_ms = 1000}, c4 = {0};
    CHECK(aclrtMemcpyAsync(a, N * sizeof(float), src, N * sizeof(float), ACL_MEMCPY_HOST_TO_DEVICE, s));
    CHECK(aclrtLaunchCallback(callback, &c1, ACL_CALLBACK_BLOCK, s));    /* sees a == src, then sleeps */
    CHECK(aclrtMemsetAsync(a, N * sizeof(float), 0, N * sizeof(float), s));   /* waits for c1 */
    CHECK(aclrtLaunchCallback(callback, &c2, ACL_CALLBACK_BLOCK, s));    /* sees a == 0 */
    CHECK(aclrtSynchronizeStream(s));
    EXPECT(atomic_load(&c1.done) && atomic_load(&c2.done) && c1.order == 1 && c2.order == 2);
    EXPECT(pthread_equal(c1.thread, reporter) && pthread_equal(c2.thread, reporter));
    for (int i = 0; i < N; i++) EXPECT(c1.seen[i] == src[i] && c2.seen[i] == 0.0f);

    /* NO_BLOCK: the stream goes on while the callback still sleeps. */
    aclrtEvent after;
    CHECK(aclrtCreateEvent(&after));
    CHECK(aclrtLaunchCallback(callback, &c3, ACL_CALLBACK_NO_BLOCK, s));
    CHECK(aclrtRecordEvent(after, s));
    CHECK(aclrtSynchronizeEvent(after));                       /* reached while c3 still sleeps */
    EXPECT(!atomic_load(&c3.done));
    CHECK(aclrtLaunchCallback(callback, &c4, ACL_CALLBACK_BLOCK, s));    /* queued behind c3 on the thread */
    CHECK(aclrtSynchronizeStream(s));
    EXPECT(atomic_load(&c3.done) && atomic_load(&c4.done) && c4.order == c3.order + 1);

    atomic_store(&stop_reports, 1);
    pthread_join(reporter, NULL);
    CHECK(aclrtUnSubscribeReport((uint64_t)reporter, s));
    CHECK(aclrtDestroyEvent(after));
    CHECK(aclrtFreeHost(src));
    CHECK(aclrtFree(a));
    CHECK(aclrtDestroyStream(s));
}

/* ---- value write / wait ----------------------------------------------------------------------- */

static void scenario_value(int with_wait) {
    aclrtStream sa, sb;
    CHECK(aclrtCreateStream(&sa));
    CHECK(aclrtCreateStream(&sb));
    void *buf = dev_alloc(), *out = dev_alloc(), *flag = NULL;
    CHECK(aclrtMalloc(&flag, 32, ACL_MEM_MALLOC_HUGE_FIRST));   /* torch_npu's external events are 32 bytes */
    CHECK(aclrtMemset(flag, 32, 0, 32));
    float *src = pinned_ramp(7.0f), result[N];
    int hold = 300;
    CHECK(aclrtLaunchHostFunc(sa, sleeper, &hold));             /* A is late */
    CHECK(aclrtMemcpyAsync(buf, N * sizeof(float), src, N * sizeof(float), ACL_MEMCPY_HOST_TO_DEVICE, sa));
    CHECK(aclrtValueWrite(flag, 1, 0, sa));
    if (with_wait) {
        CHECK(aclrtValueWait(flag, 1, ACL_STREAM_WAIT_VALUE_EQ, sb));
        CHECK(aclrtValueWrite(flag, 0, 0, sb));                 /* reset, as torch_npu's event wait does */
    }
    copy_on(out, buf, sb);
    CHECK(aclrtSynchronizeStream(sb));
    CHECK(aclrtMemcpy(result, sizeof result, out, sizeof result, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK(aclrtSynchronizeStream(sa));
    uint64_t word = 99;
    CHECK(aclrtMemcpy(&word, sizeof word, flag, sizeof word, ACL_MEMCPY_DEVICE_TO_HOST));
    if (with_wait) {
        for (int i = 0; i < N; i++) EXPECT(result[i] == src[i]);
        EXPECT(word == 0);
    } else {
        EXPECT(result[0] == 0.0f);                              /* B ran before A's data arrived */
    }
    CHECK(aclrtFreeHost(src));
    CHECK(aclrtFree(buf));
    CHECK(aclrtFree(out));
    CHECK(aclrtFree(flag));
    CHECK(aclrtDestroyStream(sa));
    CHECK(aclrtDestroyStream(sb));
}

/* ---- force-destroying blocked streams --------------------------------------------------------- */

static void ignore(void *arg) { (void)arg; }

static void scenario_destroy(void) {
    aclrtStream s, t;
    CHECK(aclrtCreateStream(&s));
    CHECK(aclrtCreateStream(&t));
    void *flag = NULL;
    CHECK(aclrtMalloc(&flag, 8, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemset(flag, 8, 0, 8));
    CHECK(aclrtValueWait(flag, 1, ACL_STREAM_WAIT_VALUE_EQ, s));   /* never written */
    EXPECT(aclrtSynchronizeStreamWithTimeout(s, 30) == ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
    double t0 = now_s();   /* the blocked worker notices within its poll interval */
    CHECK(aclrtDestroyStreamForce(s));
    EXPECT(now_s() - t0 < 1.0);
    /* A blocking callback no thread processes (the subscribed thread never calls aclrtProcessReport). */
    CHECK(aclrtSubscribeReport((uint64_t)pthread_self(), t));
    CHECK(aclrtLaunchCallback(ignore, NULL, ACL_CALLBACK_BLOCK, t));
    EXPECT(aclrtSynchronizeStreamWithTimeout(t, 30) == ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
    t0 = now_s();
    CHECK(aclrtDestroyStreamForce(t));
    EXPECT(now_s() - t0 < 1.0);
    EXPECT(aclrtProcessReport(10) == ACL_ERROR_RT_THREAD_SUBSCRIBE);   /* the stream (and subscription) went */
    aclGetRecentErrMsg();
    CHECK(aclrtFree(flag));
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: host_work hostfunc|callback|value|value_bug|destroy\n");
        return 2;
    }
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    const char *what = argv[1];
    if (strcmp(what, "hostfunc") == 0) scenario_hostfunc();
    else if (strcmp(what, "callback") == 0) scenario_callback();
    else if (strcmp(what, "value") == 0) scenario_value(1);
    else if (strcmp(what, "value_bug") == 0) scenario_value(0);
    else if (strcmp(what, "destroy") == 0) scenario_destroy();
    else return 2;
    printf("ok %s\n", what);
    printf("findings %zu\n", pyaclnn_stub_hazards(NULL, 0, 0));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    return 0;
}
