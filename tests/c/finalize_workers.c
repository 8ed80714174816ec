/*
 * aclFinalize and the stream worker threads (built and run by tests/test_finalize_workers.py):
 *
 *   finalize_workers clean    streams created, used and destroyed, device reset, aclFinalize:
 *                             no thread is left but those the process started with. Twice (the second round reuses pooled
 *                             stream objects whose workers were joined: they must work again).
 *   finalize_workers busy     aclFinalize while a live stream is still running a long task: it
 *                             returns at once (it does not wait for live streams), the task
 *                             finishes afterwards, and the idle workers are gone.
 *   finalize_workers inside   aclFinalize called from inside a stream task: no deadlock.
 *   finalize_workers exit     main returns while a live stream still has seconds of work queued:
 *                             the process ends at once (workers never keep it alive).
 *
 *   finalize_workers MODE [N] N: threads a sanitizer adds on its own (1 under ThreadSanitizer).
 *
 * Prints "ok <mode>" and exits 0; 1 wrong result, 2 an API call failed, 3 watchdog (deadlock).
 */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "acl/acl.h"
#include "pyaclnn_stub.h"

#define STREAMS 40   /* more than the pool's reuse threshold (32), so the second round reuses */
#define BYTES 256

#include "check.h"

static void watchdog(int sig) {
    (void)sig;
    static const char msg[] = "watchdog: deadlock\n";
    ssize_t ignored = write(2, msg, sizeof msg - 1);
    (void)ignored;
    _exit(3);
}

static int base_threads;   /* threads at start: 1, or more with a sanitizer's own threads */

static int threads_now(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    int n = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "Threads: %d", &n) == 1) break;
    if (f) fclose(f);
    return n;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void fail(const char *what) {
    fprintf(stderr, "FAIL: %s\n", what);
    exit(1);
}

/* One round: STREAMS streams each copy a distinct pattern device->device; all checked, released. */
static void round_trip(int round) {
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    aclrtStream streams[STREAMS];
    void *src, *dst[STREAMS];
    unsigned char host[BYTES], back[BYTES];
    CHECK(aclrtMalloc(&src, BYTES, ACL_MEM_MALLOC_HUGE_FIRST));
    for (int i = 0; i < BYTES; i++) host[i] = (unsigned char)(i * 7 + round);
    CHECK(aclrtMemcpy(src, BYTES, host, BYTES, ACL_MEMCPY_HOST_TO_DEVICE));
    for (int i = 0; i < STREAMS; i++) {
        CHECK(aclrtCreateStream(&streams[i]));
        CHECK(aclrtMalloc(&dst[i], BYTES, ACL_MEM_MALLOC_HUGE_FIRST));
        CHECK(aclrtMemsetAsync(dst[i], BYTES, 0, BYTES, streams[i]));
        CHECK(aclrtMemcpyAsync(dst[i], BYTES, src, BYTES, ACL_MEMCPY_DEVICE_TO_DEVICE, streams[i]));
    }
    for (int i = 0; i < STREAMS; i++) {
        CHECK(aclrtSynchronizeStream(streams[i]));
        CHECK(aclrtMemcpy(back, BYTES, dst[i], BYTES, ACL_MEMCPY_DEVICE_TO_HOST));
        if (memcmp(back, host, BYTES) != 0) fail("a stream's copy is wrong");
        CHECK(aclrtDestroyStream(streams[i]));
        CHECK(aclrtFree(dst[i]));
    }
    CHECK(aclrtFree(src));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    if (threads_now() != base_threads) {
        fprintf(stderr, "round %d: %d threads after aclFinalize, expected %d (as at start)\n", round,
                threads_now(), base_threads);
        exit(1);
    }
}

static void sleep_task(void *arg) { sleep_ms((long)(intptr_t)arg); }

static _Atomic int inside_rc = -1;
static void finalize_task(void *arg) {
    (void)arg;
    atomic_store(&inside_rc, (int)aclFinalize());
}

/* A pooled (destroyed) stream, so that aclFinalize has a worker to join. */
static void destroyed_stream(void) {
    aclrtStream s;
    CHECK(aclrtCreateStream(&s));
    CHECK(aclrtDestroyStream(s));
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "clean";
    /* argv[2]: threads a sanitizer starts on its own after main began (ThreadSanitizer: 1) */
    base_threads = threads_now() + (argc > 2 ? atoi(argv[2]) : 0);
    signal(SIGALRM, watchdog);
    alarm(30);
    if (strcmp(mode, "clean") == 0) {
        round_trip(1);
        round_trip(2);
    } else if (strcmp(mode, "busy") == 0) {
        CHECK(aclInit(NULL));
        CHECK(aclrtSetDevice(0));
        destroyed_stream();
        aclrtStream live;
        CHECK(aclrtCreateStream(&live));
        CHECK(pyaclnn_stub_stream_submit("test", live, sleep_task, NULL, (void *)(intptr_t)1500));
        int before = threads_now();   /* main, the default stream, the destroyed one, `live` */
        double t0 = now_s();
        CHECK(aclFinalize());
        double took = now_s() - t0;
        aclrtStreamStatus status;
        CHECK(aclrtStreamQuery(live, &status));
        if (status != ACL_STREAM_STATUS_NOT_READY) fail("the long task ended before aclFinalize returned");
        if (took > 1.0) fail("aclFinalize waited for a live stream");
        if (threads_now() != before - 1) {
            fprintf(stderr, "%d threads before aclFinalize, %d after, expected one fewer\n", before,
                    threads_now());
            exit(1);
        }
        CHECK(aclrtSynchronizeStream(live));   /* the live stream still works */
        CHECK(aclrtDestroyStream(live));
        CHECK(aclrtResetDevice(0));
    } else if (strcmp(mode, "inside") == 0) {
        CHECK(aclInit(NULL));
        CHECK(aclrtSetDevice(0));
        destroyed_stream();
        aclrtStream s;
        CHECK(aclrtCreateStream(&s));
        CHECK(pyaclnn_stub_stream_submit("test", s, finalize_task, NULL, NULL));
        CHECK(aclrtSynchronizeStream(s));
        if (atomic_load(&inside_rc) != ACL_SUCCESS) fail("aclFinalize inside a task did not succeed");
        CHECK(aclrtDestroyStream(s));
        CHECK(aclrtResetDevice(0));
    } else if (strcmp(mode, "exit") == 0) {
        CHECK(aclInit(NULL));
        CHECK(aclrtSetDevice(0));
        aclrtStream s;
        CHECK(aclrtCreateStream(&s));
        for (int i = 0; i < 20; i++)
            CHECK(pyaclnn_stub_stream_submit("test", s, sleep_task, NULL, (void *)(intptr_t)500));
        CHECK(aclFinalize());   /* with 10 s of work queued on a live stream */
    } else {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    printf("ok %s\n", mode);
    return 0;
}
