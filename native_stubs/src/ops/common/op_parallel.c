#include "op_parallel.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "op_common.h"

#define MAX_DEFAULT_THREADS 16

size_t op_thread_count(size_t count, size_t min_per_thread) {
    int fixed = op_kernel_threads_from_env();
    if (fixed > 0) return (size_t)fixed;   /* an explicit count is used as given */
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    size_t threads = cpus < 1 ? 1 : (size_t)(cpus > MAX_DEFAULT_THREADS ? MAX_DEFAULT_THREADS : cpus);
    size_t useful = min_per_thread ? count / min_per_thread : count;
    if (useful < 1) useful = 1;
    return threads < useful ? threads : useful;
}

typedef struct {
    op_range_fn fn;
    void *ctx;
    size_t begin, end;
} range_job;

static void *run_range(void *arg) {
    range_job *job = arg;
    if (job->end > job->begin) job->fn(job->ctx, job->begin, job->end);
    return NULL;
}

void op_parallel_for(size_t count, size_t threads, op_range_fn fn, void *ctx) {
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
    for (size_t t = 0; t < threads; t++) jobs[t] = (range_job){fn, ctx, count * t / threads, count * (t + 1) / threads};
    for (size_t t = 1; t < threads; t++) started[t] = pthread_create(&tids[t], NULL, run_range, &jobs[t]) == 0;
    run_range(&jobs[0]);
    for (size_t t = 1; t < threads; t++) {
        if (started[t]) pthread_join(tids[t], NULL);
        else run_range(&jobs[t]);
    }
    free(jobs), free(tids), free(started);
}
