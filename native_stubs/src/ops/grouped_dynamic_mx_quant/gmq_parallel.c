/*
 * GroupedDynamicMxQuant: spreading the kernel's independent work items over threads, as the NPU
 * spreads them over its vector cores. Each item writes its own bytes, so results never depend
 * on the thread count. Threads are created per launch: a launch big enough to use them takes
 * milliseconds, thread creation tens of microseconds.
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "gmq_kernel.h"

#define THREADS_ENV "PYACLNN_STUB_KERNEL_THREADS"
#define MAX_DEFAULT_THREADS 16
#define MIN_ELEMENTS_PER_THREAD (1 << 18)

size_t gmq_thread_count(int64_t elements) {
    const char *env = getenv(THREADS_ENV);
    if (env != NULL && *env != '\0') {   /* an explicit count is used as given */
        char *end;
        long v = strtol(env, &end, 10);
        if (*end == '\0' && v >= 1) return (size_t)(v > 256 ? 256 : v);
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    size_t threads = cpus < 1 ? 1 : (size_t)(cpus > MAX_DEFAULT_THREADS ? MAX_DEFAULT_THREADS : cpus);
    size_t useful = (size_t)(elements / MIN_ELEMENTS_PER_THREAD);
    if (useful < 1) useful = 1;
    return threads < useful ? threads : useful;
}

typedef struct {
    gmq_range_fn fn;
    void *ctx;
    size_t begin, end;
} range_job;

static void *run_range(void *arg) {
    range_job *job = arg;
    job->fn(job->ctx, job->begin, job->end);
    return NULL;
}

void gmq_parallel_for(size_t count, size_t threads, gmq_range_fn fn, void *ctx) {
    if (threads > count) threads = count;
    if (threads <= 1) {
        if (count > 0) fn(ctx, 0, count);
        return;
    }
    range_job *jobs = calloc(threads, sizeof *jobs);
    pthread_t *tids = calloc(threads, sizeof *tids);
    char *started = calloc(threads, 1);
    if (jobs == NULL || tids == NULL || started == NULL) {   /* no memory: do it all here */
        free(jobs), free(tids), free(started);
        fn(ctx, 0, count);
        return;
    }
    for (size_t t = 0; t < threads; t++) {
        jobs[t] = (range_job){fn, ctx, count * t / threads, count * (t + 1) / threads};
    }
    for (size_t t = 1; t < threads; t++) started[t] = pthread_create(&tids[t], NULL, run_range, &jobs[t]) == 0;
    run_range(&jobs[0]);
    for (size_t t = 1; t < threads; t++) {
        if (started[t]) pthread_join(tids[t], NULL);
        else run_range(&jobs[t]);   /* could not start a thread: run its share here */
    }
    free(jobs), free(tids), free(started);
}
