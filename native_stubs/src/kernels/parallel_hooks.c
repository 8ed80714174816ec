/*
 * Test hooks for the worker pool (op_parallel.h): tests/test_kernel_pool.py and tests/c/pool_stress.c
 * drive the pool directly through them (also in a forked child, where no stream may be usable). Not
 * part of any public header.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "kernels/parallel.h"
#include "pyaclnn_stub.h"

typedef struct {
    uint32_t *marks;
    uint64_t spin_ns;
    pthread_t tids[OP_MAX_PARTS];
} selftest;

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void mark_part(void *ctx, size_t part, size_t begin, size_t end) {
    selftest *t = ctx;
    for (size_t i = begin; i < end; i++) t->marks[i] += (uint32_t)part + 1;
    t->tids[part] = pthread_self();
    uint64_t until = now_ns() + t->spin_ns;   /* keeps the part busy so that workers can join */
    while (t->spin_ns && now_ns() < until) {
    }
}

/* Runs [0, count) as `parts` parts (op_parallel_parts): marks[i] += index of item i's part + 1, so
 * with marks zeroed each item must end up marked exactly once, with its part. Each part then spins
 * for spin_ns. Returns how many distinct threads ran parts, or -1 for bad arguments. */
PYACLNN_STUB_API int pyaclnn_stub_pool_selftest(uint64_t count, uint64_t parts, uint32_t *marks, uint64_t spin_ns) {
    if ((count > 0 && marks == NULL) || parts == 0 || parts > OP_MAX_PARTS) return -1;
    selftest t = {.marks = marks, .spin_ns = spin_ns};
    op_parallel_parts((size_t)count, (size_t)parts, mark_part, &t);
    size_t used = parts < count ? parts : count;
    int distinct = 0;
    for (size_t i = 0; i < used; i++) {
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++) seen = pthread_equal(t.tids[i], t.tids[j]);
        distinct += !seen;
    }
    return distinct;
}

/* Workers the pool has started in this process (0 in a fresh process or forked child). */
PYACLNN_STUB_API int pyaclnn_stub_pool_workers(void) { return (int)op_pool_workers(); }
