/*
 * Races between threads that share handles and memory (issue 12, points 1-3 and 12), built and run
 * by tests/test_races.py and, against the sanitizer builds, by .ci/run:
 *
 *   races free_vs_copy N      one thread queues aclrtMemsetAsync / aclrtMemcpyAsync on a 1 MiB
 *                             block while another aclrtFree's it. Each call either is refused or
 *                             its task runs on memory that is still allocated. Blocks are mmap'ed
 *                             (mallopt), so a late write into a released block is a SIGSEGV.
 *   races executor_twice N    four threads launch one single-use executor at once: exactly one
 *                             launch is accepted, the others get ACLNN_ERR_PARAM_INVALID (161002).
 *   races record_vs_destroy N aclrtRecordEvent in a loop on a stream another thread destroys (force
 *                             or not), while a third keeps making a second stream wait for the event: the
 *                             waiting stream always drains (a wait never picks a record that was
 *                             not queued).
 *   races free_while_busy N   N x (aclrtMalloc 16 MiB, touch, aclrtFree) while another stream is
 *                             busy: the frees are not held back (resident memory stays flat).
 *
 * Built with -DPOISON_FREE (not under a sanitizer), free() fills each block with 0xA5 first, so
 * reading a freed executor gives garbage rather than the old values. Iterations vary the delay
 * between the threads so that the race windows are crossed at many points.
 * Prints "ok <mode>" and exits 0; 1 wrong result, 2 an API call failed, 3 watchdog (hang).
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "acl/acl.h"
#include "aclnn/opdev/op_errno.h"
#include "aclnnop/aclnn_amp_update_scale.h"
#include "pyaclnn_stub.h"

#ifdef POISON_FREE
extern void __libc_free(void *);
void free(void *p) {
    if (p) memset(p, 0xA5, malloc_usable_size(p));
    __libc_free(p);
}
#endif

#include "check.h"

#define THREADS 4

static void fail(const char *fmt, int a, int b) {
    fprintf(stderr, "FAIL: ");
    fprintf(stderr, fmt, a, b);
    fprintf(stderr, "\n");
    exit(1);
}

static void watchdog(int sig) {
    (void)sig;
    static const char msg[] = "watchdog: hang\n";
    ssize_t ignored = write(2, msg, sizeof msg - 1);
    (void)ignored;
    _exit(3);
}

static void spin(unsigned n) {
    for (volatile unsigned i = 0; i < n; i++) {
    }
}

/* A spinning barrier: all parties leave within a fraction of a microsecond of each other (a futex
 * barrier's wake-up jitter would dwarf the race windows). Yields while waiting, for small machines. */
typedef struct {
    atomic_int arrived, generation;
    int parties;
} spin_barrier;

static void barrier_init(spin_barrier *b, int parties) {
    atomic_store(&b->arrived, 0);
    atomic_store(&b->generation, 0);
    b->parties = parties;
}

static void barrier_wait(spin_barrier *b) {
    int gen = atomic_load(&b->generation);
    if (atomic_fetch_add(&b->arrived, 1) == b->parties - 1) {
        atomic_store(&b->arrived, 0);
        atomic_fetch_add(&b->generation, 1);
        return;
    }
    for (unsigned n = 0; atomic_load(&b->generation) == gen; n++)
        if (n > 200) sched_yield();
}

static spin_barrier start, stop;
static int iterations;

/* ---- 1: aclrtFree racing an asynchronous copy or memset ------------------------------------ */

#define BLOCK (1u << 20)
static void *victim, *source;
static aclrtStream copy_stream;
static atomic_int copy_rc;

static void *copier(void *arg) {
    (void)arg;
    CHECK(aclrtSetDevice(0));
    for (int i = 0; i < iterations; i++) {
        barrier_wait(&start);
        int rc = i % 2 ? aclrtMemsetAsync(victim, BLOCK, 0x11, BLOCK, copy_stream)
                       : aclrtMemcpyAsync(victim, BLOCK, source, BLOCK, ACL_MEMCPY_DEVICE_TO_DEVICE, copy_stream);
        atomic_store(&copy_rc, rc);
        if (rc == 0) CHECK(aclrtSynchronizeStream(copy_stream));   /* idle again for the next round */
        barrier_wait(&stop);
    }
    CHECK(aclrtResetDevice(0));
    return NULL;
}

static void free_vs_copy(void) {
    mallopt(M_MMAP_THRESHOLD, 256 * 1024);   /* fixed: every block is its own mapping */
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&copy_stream));
    CHECK(aclrtMalloc(&source, BLOCK, ACL_MEM_MALLOC_HUGE_FIRST));
    barrier_init(&start, 2);
    barrier_init(&stop, 2);
    pthread_t t;
    pthread_create(&t, NULL, copier, NULL);
    for (int i = 0; i < iterations; i++) {
        CHECK(aclrtMalloc(&victim, BLOCK, ACL_MEM_MALLOC_HUGE_FIRST));
        barrier_wait(&start);
        spin((unsigned)(i * 37) % 4000);
        CHECK(aclrtFree(victim));   /* always allowed: the runtime keeps it for the queued task */
        barrier_wait(&stop);
        int rc = atomic_load(&copy_rc);
        if (rc != 0 && rc != ACL_ERROR_RT_PARAM_INVALID)
            fail("copy or memset racing aclrtFree returned %d (expected 0 or 107000), iteration %d", rc, i);
    }
    pthread_join(t, NULL);
    CHECK(aclrtSynchronizeStream(copy_stream));
    CHECK(aclrtDestroyStream(copy_stream));
    CHECK(aclrtFree(source));
}

/* ---- 2: one single-use executor launched from several threads ------------------------------ */

static aclOpExecutor *shared_executor;
static atomic_int accepted, refused, other_status;

static void *launcher(void *arg) {
    (void)arg;
    CHECK(aclrtSetDevice(0));
    for (int i = 0; i < iterations; i++) {
        barrier_wait(&start);
        int rc = aclnnAmpUpdateScale(NULL, 0, shared_executor, NULL);
        if (rc == 0) atomic_fetch_add(&accepted, 1);
        else if (rc == ACLNN_ERR_PARAM_INVALID) atomic_fetch_add(&refused, 1);
        else atomic_store(&other_status, rc);
        barrier_wait(&stop);
    }
    CHECK(aclrtSynchronizeStream(NULL));
    CHECK(aclrtResetDevice(0));
    return NULL;
}

static aclTensor *scalar_tensor(aclDataType dtype, void *addr) {
    int64_t shape[1] = {1}, strides[1] = {1};
    return aclCreateTensor(shape, 1, dtype, strides, 0, ACL_FORMAT_ND, shape, 1, addr);
}

static void executor_twice(void) {
    CHECK(aclrtSetDevice(0));
    void *scale, *tracker, *found;
    CHECK(aclrtMalloc(&scale, 4, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&tracker, 4, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&found, 4, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemset(scale, 4, 0, 4));
    CHECK(aclrtMemset(tracker, 4, 0, 4));
    CHECK(aclrtMemset(found, 4, 0, 4));
    aclTensor *t_scale = scalar_tensor(ACL_FLOAT, scale), *t_tracker = scalar_tensor(ACL_INT32, tracker),
              *t_found = scalar_tensor(ACL_FLOAT, found);
    barrier_init(&start, THREADS + 1);
    barrier_init(&stop, THREADS + 1);
    pthread_t t[THREADS];
    for (int k = 0; k < THREADS; k++) pthread_create(&t[k], NULL, launcher, NULL);
    for (int i = 0; i < iterations; i++) {
        uint64_t ws = 0;
        CHECK(aclnnAmpUpdateScaleGetWorkspaceSize(t_scale, t_tracker, t_found, 2.0, 0.5, 1000, t_scale, t_tracker,
                                                  &ws, &shared_executor));
        atomic_store(&accepted, 0);
        atomic_store(&refused, 0);
        barrier_wait(&start);
        barrier_wait(&stop);
        if (atomic_load(&other_status) != 0)
            fail("a racing launch returned %d (expected 0 or 161002), iteration %d", atomic_load(&other_status), i);
        if (atomic_load(&accepted) != 1 || atomic_load(&refused) != THREADS - 1)
            fail("%d launches of one single-use executor were accepted (expected exactly 1), iteration %d",
                 atomic_load(&accepted), i);
    }
    for (int k = 0; k < THREADS; k++) pthread_join(t[k], NULL);
    CHECK(aclrtSynchronizeDevice());
    CHECK(aclDestroyTensor(t_scale));
    CHECK(aclDestroyTensor(t_tracker));
    CHECK(aclDestroyTensor(t_found));
    CHECK(aclrtFree(scale));
    CHECK(aclrtFree(tracker));
    CHECK(aclrtFree(found));
}

/* ---- 3: aclrtStreamWaitEvent racing a record whose stream is being destroyed ---------------- */

static aclrtEvent shared_event;
static aclrtStream doomed, waiter;
static atomic_int recording_done;

static void *recorder(void *arg) {
    (void)arg;
    CHECK(aclrtSetDevice(0));
    for (int i = 0; i < iterations; i++) {
        barrier_wait(&start);
        /* Records until the stream is gone, so that the destroy lands inside some record call. */
        int rc;
        for (int n = 0; (rc = aclrtRecordEvent(shared_event, doomed)) == 0 && n < 1000000; n++) {
        }
        if (rc != ACL_ERROR_RT_PARAM_INVALID)
            fail("aclrtRecordEvent on a stream being destroyed returned %d, iteration %d", rc, i);
        atomic_store(&recording_done, 1);
        barrier_wait(&stop);
    }
    CHECK(aclrtResetDevice(0));
    return NULL;
}

static void *wait_maker(void *arg) {
    (void)arg;
    CHECK(aclrtSetDevice(0));
    for (int i = 0; i < iterations; i++) {
        barrier_wait(&start);
        do CHECK(aclrtStreamWaitEvent(waiter, shared_event));
        while (!atomic_load(&recording_done));
        barrier_wait(&stop);
    }
    CHECK(aclrtResetDevice(0));
    return NULL;
}

static void record_vs_destroy(void) {
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateEvent(&shared_event));
    CHECK(aclrtCreateStream(&waiter));
    barrier_init(&start, 3);
    barrier_init(&stop, 3);
    pthread_t r, w;
    pthread_create(&r, NULL, recorder, NULL);
    pthread_create(&w, NULL, wait_maker, NULL);
    for (int i = 0; i < iterations; i++) {
        CHECK(aclrtCreateStream(&doomed));
        atomic_store(&recording_done, 0);
        barrier_wait(&start);
        spin((unsigned)(i * 53) % 20000);
        CHECK(i % 2 ? aclrtDestroyStreamForce(doomed) : aclrtDestroyStream(doomed));
        barrier_wait(&stop);
        if (i % 16 == 15) {
            int rc = aclrtSynchronizeStreamWithTimeout(waiter, 5000);
            if (rc != 0) fail("the waiting stream did not drain (status %d), iteration %d", rc, i);
        }
    }
    pthread_join(r, NULL);
    pthread_join(w, NULL);
    int rc = aclrtSynchronizeStreamWithTimeout(waiter, 5000);
    if (rc != 0) fail("the waiting stream did not drain (status %d) after %d iterations", rc, iterations);
    rc = aclrtSynchronizeDeviceWithTimeout(5000);
    if (rc != 0) fail("aclrtSynchronizeDevice did not return (status %d) after %d iterations", rc, iterations);
    CHECK(aclrtDestroyStream(waiter));
    CHECK(aclrtDestroyEvent(shared_event));
}

/* ---- 12: frees are not held back by unrelated busy streams ---------------------------------- */

static atomic_int release_busy;

static void busy_task(void *arg) {
    (void)arg;
    while (!atomic_load(&release_busy)) usleep(1000);
}

static long rss_kib(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld", &kib) == 1) break;
    if (f) fclose(f);
    return kib;
}

static void free_while_busy(void) {
    mallopt(M_MMAP_THRESHOLD, 256 * 1024);   /* a released block goes back to the system at once */
    CHECK(aclrtSetDevice(0));
    aclrtStream busy;
    CHECK(aclrtCreateStream(&busy));
    CHECK(pyaclnn_stub_stream_submit("races", busy, busy_task, NULL, NULL));
    long before = rss_kib();
    long worst = 0;
    for (int i = 0; i < iterations; i++) {
        void *p;
        CHECK(aclrtMalloc(&p, 16u << 20, ACL_MEM_MALLOC_HUGE_FIRST));
        CHECK(aclrtMemset(p, 16u << 20, i & 0xFF, 16u << 20));   /* resident */
        CHECK(aclrtFree(p));
        long grown = rss_kib() - before;
        if (grown > worst) worst = grown;
    }
    atomic_store(&release_busy, 1);
    CHECK(aclrtSynchronizeStream(busy));
    CHECK(aclrtDestroyStream(busy));
    if (worst > 256 * 1024)
        fail("resident memory grew by %d MiB over %d malloc/free pairs of 16 MiB while another stream was busy",
             (int)(worst / 1024), iterations);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: races free_vs_copy|executor_twice|record_vs_destroy|free_while_busy N\n");
        return 2;
    }
    iterations = atoi(argv[2]);
    signal(SIGALRM, watchdog);
    alarm(120);
    CHECK(aclInit(NULL));
    if (!strcmp(argv[1], "free_vs_copy")) free_vs_copy();
    else if (!strcmp(argv[1], "executor_twice")) executor_twice();
    else if (!strcmp(argv[1], "record_vs_destroy")) record_vs_destroy();
    else if (!strcmp(argv[1], "free_while_busy")) free_while_busy();
    else return 2;
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    printf("ok %s\n", argv[1]);
    return 0;
}
