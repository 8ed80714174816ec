/*
 * Which record an event wait is for (issue 27, point 1): the record that was latest when the wait
 * was enqueued, never a later one. tests/test_event_order.py runs each mode with and without the
 * hazard checker.
 *
 *   event_order MODE      MODE:
 *     rerecord        stream A is busy and writes 7 into `a`, then records E; stream B waits for E and
 *                     copies `a` to `b`; then E is recorded again on the idle stream C. B must copy 7
 *                     (the program: correct, the checker finds nothing).
 *     reversed        the same program the other way round: E recorded on C, B waits (for C's record),
 *                     then A writes and records E. B does not wait for A: the checker reports the
 *                     cross-stream read (the result depends on timing: a bug of the program).
 *     sync_rerecord   A busy records E; another thread synchronises on E while the main thread
 *                     records E on the idle C: the synchronisation still waits for A's record.
 *     reset           A busy records E, B waits, E is reset before B's copy: B still waits for A.
 *     destroyed       A busy records E, B waits, E is destroyed: B still waits for A's record.
 *     never           B waits for an event never recorded (and one reset): a no-op, B copies at once.
 *
 * Prints "value <b[0]>", then "findings <n> <kind>..." from pyaclnn_stub_hazards. Exit 0 unless a
 * call fails.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acl/acl.h"
#include "pyaclnn_stub.h"

#include "check.h"

#define N 64   /* floats per buffer */

static void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* A slow kernel: 150 ms, then writes 7 into its buffer (declared to the checker as a write). */
static void slow_write(void *arg) {
    sleep_ms(150);
    float *p = arg;
    for (int i = 0; i < N; i++) p[i] = 7.0f;
}

static void busy_write(void *a, aclrtStream s) {
    pyaclnn_stub_access acc = {a, N * sizeof(float), 1};
    CHECK(pyaclnn_stub_stream_submit_accesses("event_order", s, slow_write, NULL, a, "slow_write", &acc, 1));
}

static aclrtEvent sync_event;
static void *a_buf;
static float seen_by_thread = -1;

static void *synchronize_then_read(void *ctx) {
    CHECK(aclrtSetCurrentContext(ctx));
    CHECK(aclrtSynchronizeEvent(sync_event));
    float v[N];
    CHECK(aclrtMemcpy(v, sizeof v, a_buf, sizeof v, ACL_MEMCPY_DEVICE_TO_HOST));
    seen_by_thread = v[0];
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s rerecord|reversed|sync_rerecord|reset|destroyed|never\n", argv[0]);
        return 2;
    }
    const char *mode = argv[1];
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    aclrtStream A, B, C;
    CHECK(aclrtCreateStream(&A));
    CHECK(aclrtCreateStream(&B));
    CHECK(aclrtCreateStream(&C));
    void *a = NULL, *b = NULL;
    CHECK(aclrtMalloc(&a, N * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&b, N * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemset(a, N * sizeof(float), 0, N * sizeof(float)));
    CHECK(aclrtMemset(b, N * sizeof(float), 0, N * sizeof(float)));
    aclrtEvent E;
    CHECK(aclrtCreateEvent(&E));
    int destroyed = 0;
    float value = -1;

    if (strcmp(mode, "rerecord") == 0 || strcmp(mode, "reset") == 0 || strcmp(mode, "destroyed") == 0) {
        busy_write(a, A);
        CHECK(aclrtRecordEvent(E, A));
        CHECK(aclrtStreamWaitEvent(B, E));
        if (strcmp(mode, "rerecord") == 0) {
            CHECK(aclrtMemcpyAsync(b, N * sizeof(float), a, N * sizeof(float), ACL_MEMCPY_DEVICE_TO_DEVICE, B));
            CHECK(aclrtRecordEvent(E, C));   /* C is idle: this record is reached at once */
            CHECK(aclrtSynchronizeStream(C));
        } else {
            if (strcmp(mode, "reset") == 0) {
                CHECK(aclrtResetEvent(E, C));
            } else {
                CHECK(aclrtDestroyEvent(E));
                destroyed = 1;
            }
            CHECK(aclrtMemcpyAsync(b, N * sizeof(float), a, N * sizeof(float), ACL_MEMCPY_DEVICE_TO_DEVICE, B));
        }
    } else if (strcmp(mode, "reversed") == 0) {
        CHECK(aclrtRecordEvent(E, C));
        CHECK(aclrtStreamWaitEvent(B, E));   /* for C's record, not for A's below */
        busy_write(a, A);
        CHECK(aclrtRecordEvent(E, A));
        /* error mode refuses this copy (507004): nothing is copied */
        printf("status %d\n", aclrtMemcpyAsync(b, N * sizeof(float), a, N * sizeof(float),
                                               ACL_MEMCPY_DEVICE_TO_DEVICE, B));
    } else if (strcmp(mode, "sync_rerecord") == 0) {
        aclrtContext ctx;
        CHECK(aclrtGetCurrentContext(&ctx));
        busy_write(a, A);
        CHECK(aclrtRecordEvent(E, A));
        sync_event = E;
        a_buf = a;
        pthread_t th;
        if (pthread_create(&th, NULL, synchronize_then_read, ctx) != 0) return 2;
        sleep_ms(50);                    /* the thread is waiting for A's record by now */
        CHECK(aclrtRecordEvent(E, C));   /* reached at once */
        pthread_join(th, NULL);
        value = seen_by_thread;
        CHECK(aclrtSynchronizeStream(A));
    } else if (strcmp(mode, "never") == 0) {
        busy_write(a, A);
        CHECK(aclrtStreamWaitEvent(B, E));   /* never recorded */
        aclrtEvent F;
        CHECK(aclrtCreateEvent(&F));
        CHECK(aclrtRecordEvent(F, C));
        CHECK(aclrtResetEvent(F, C));
        CHECK(aclrtStreamWaitEvent(B, F));   /* reset */
        /* B does not wait for A: it copies the zeros at once (reads b, not a, so no hazard) */
        CHECK(aclrtMemcpyAsync(b, N * sizeof(float), b, N * sizeof(float), ACL_MEMCPY_DEVICE_TO_DEVICE, B));
        aclrtStreamStatus st = ACL_STREAM_STATUS_NOT_READY;
        for (int i = 0; i < 100 && st != ACL_STREAM_STATUS_COMPLETE; i++) {
            CHECK(aclrtStreamQuery(B, &st));
            if (st != ACL_STREAM_STATUS_COMPLETE) sleep_ms(1);
        }
        printf("b done before a: %d\n", st == ACL_STREAM_STATUS_COMPLETE);
        CHECK(aclrtDestroyEvent(F));
        CHECK(aclrtSynchronizeStream(A));
    } else {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    if (value < 0) {
        CHECK(aclrtSynchronizeStream(B));
        float host[N];
        CHECK(aclrtMemcpy(host, sizeof host, b, sizeof host, ACL_MEMCPY_DEVICE_TO_HOST));
        value = host[0];
    }
    printf("value %g\n", value);
    CHECK(aclrtSynchronizeDevice());
    if (!destroyed) CHECK(aclrtDestroyEvent(E));
    CHECK(aclrtFree(a));
    CHECK(aclrtFree(b));

    size_t n = pyaclnn_stub_hazards(NULL, 0, 0);
    pyaclnn_stub_hazard found[8];
    size_t got = pyaclnn_stub_hazards(found, 8, 1);
    static const char *const kinds[] = {"read-before-sync", "free-in-flight", "cross-stream", "bad-workspace",
                                        "uninitialized-read"};
    printf("findings %zu", n);
    for (size_t i = 0; i < got; i++) printf(" %s", kinds[found[i].kind]);
    printf("\n");
    CHECK(aclrtDestroyStream(A));
    CHECK(aclrtDestroyStream(B));
    CHECK(aclrtDestroyStream(C));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    return 0;
}
