/*
 * The persistent worker pool of libopapi (op_parallel.h).
 *
 * A job is posted under the pool's lock with a number of "seats" (parts - 1, at most the workers
 * alive); parked workers take a seat, then claim parts with an atomic counter, as does the thread
 * that posted the job. The submitter waits until every part is finished and no worker is still
 * inside the job before it returns, so nothing of the job (its context lives on the submitter's
 * stack) is touched afterwards. Workers are created lazily, detached, with the asynchronous signals
 * blocked and the fault signals open (common/thread_signals.h): a fault in a kernel part reaches the
 * process's handler (a sanitizer's report) on the faulting thread instead of killing it silently.
 *
 * Why not a thread per launch (as before): creating and joining threads costs tens of microseconds
 * per launch; a parked worker wakes in a few.
 */
#include "kernels/parallel.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

#include "common/thread_signals.h"
#include "kernels/device.h"

#define MAX_DEFAULT_THREADS 16
#define MAX_WORKERS (OP_MAX_PARTS - 1)

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t wake;   /* workers: a job has free seats                              */
    pthread_cond_t done;   /* submitter: the last part finished and the workers left       */
    size_t workers;        /* started (0 again in a forked child: threads do not survive)  */
    int open;              /* a job is posted                                              */
    size_t seats;          /* workers the job may still take in                            */
    size_t inside;         /* workers in the job now                                       */
    size_t finished;       /* parts finished                                               */
    op_part_fn fn;         /* the job                                                      */
    void *ctx;
    size_t count, parts;
    atomic_size_t next;    /* next part to claim                                           */
} op_pool;

static op_pool pool = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER,
                       .done = PTHREAD_COND_INITIALIZER};
static atomic_flag pool_busy = ATOMIC_FLAG_INIT;   /* a job owns the pool */
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;
static size_t cpu_count = 1;

/* ---- fork: the child starts with an empty pool -------------------------------------------- */

static void pool_prepare(void) { pthread_mutex_lock(&pool.lock); }   /* a consistent copy */

static void pool_parent(void) { pthread_mutex_unlock(&pool.lock); }

static void pool_child(void) {
    /* Only the forking thread exists: the workers (and any job's submitter) are gone. */
    static const pthread_cond_t fresh = PTHREAD_COND_INITIALIZER;
    pool.wake = fresh;
    pool.done = fresh;
    pool.workers = 0;
    pool.open = 0;
    pool.seats = pool.inside = pool.finished = 0;
    atomic_flag_clear(&pool_busy);
    pthread_mutex_unlock(&pool.lock);   /* locked by this thread in pool_prepare */
}

static void pool_init(void) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);   /* once: sysconf reads /sys on every call */
    cpu_count = cpus < 1 ? 1 : (size_t)cpus;
    pthread_atfork(pool_prepare, pool_parent, pool_child);
}

/* ---- running parts -------------------------------------------------------------------------- */

static size_t run_parts(op_part_fn fn, void *ctx, size_t count, size_t parts) {
    size_t done = 0;
    for (;;) {
        size_t i = atomic_fetch_add_explicit(&pool.next, 1, memory_order_relaxed);
        if (i >= parts) return done;
        fn(ctx, i, count * i / parts, count * (i + 1) / parts);
        done++;
    }
}

static void *worker_main(void *arg) {
    (void)arg;
    pthread_mutex_lock(&pool.lock);
    for (;;) {
        while (!pool.open || pool.seats == 0) pthread_cond_wait(&pool.wake, &pool.lock);
        pool.seats--;
        pool.inside++;
        op_part_fn fn = pool.fn;
        void *ctx = pool.ctx;
        size_t count = pool.count, parts = pool.parts;
        pthread_mutex_unlock(&pool.lock);
        size_t done = run_parts(fn, ctx, count, parts);
        pthread_mutex_lock(&pool.lock);
        pool.finished += done;
        pool.inside--;
        if (pool.finished == pool.parts && pool.inside == 0) pthread_cond_signal(&pool.done);
    }
    return NULL;
}

/* Starts workers until `want` are alive (as many as the system allows). Called with the lock held. */
static void grow_locked(size_t want) {
    if (want > MAX_WORKERS) want = MAX_WORKERS;
    if (pool.workers >= want) return;
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0) return;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);   /* never joined, never keeps the process */
    sigset_t mask, old;
    stub_worker_sigmask(&mask);   /* asynchronous signals go to the application's threads, faults stay here */
    pthread_sigmask(SIG_SETMASK, &mask, &old);
    while (pool.workers < want) {
        pthread_t tid;
        if (pthread_create(&tid, &attr, worker_main, NULL) != 0) break;   /* the parts run elsewhere */
        pool.workers++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
}

static void run_inline(size_t count, size_t parts, op_part_fn fn, void *ctx) {
    for (size_t i = 0; i < parts; i++) fn(ctx, i, count * i / parts, count * (i + 1) / parts);
}

void op_parallel_parts(size_t count, size_t parts, op_part_fn fn, void *ctx) {
    if (parts > count) parts = count;
    if (parts > OP_MAX_PARTS) parts = OP_MAX_PARTS;
    if (parts <= 1) {
        if (count > 0) fn(ctx, 0, 0, count);
        return;
    }
    if (atomic_flag_test_and_set_explicit(&pool_busy, memory_order_acquire)) {
        run_inline(count, parts, fn, ctx);   /* another job has the pool (or we are inside one) */
        return;
    }
    pthread_once(&pool_once, pool_init);
    pthread_mutex_lock(&pool.lock);
    grow_locked(parts - 1);
    pool.fn = fn;
    pool.ctx = ctx;
    pool.count = count;
    pool.parts = parts;
    pool.finished = 0;
    atomic_store_explicit(&pool.next, 0, memory_order_relaxed);
    pool.seats = parts - 1 < pool.workers ? parts - 1 : pool.workers;
    pool.open = 1;
    for (size_t s = 0; s < pool.seats; s++) pthread_cond_signal(&pool.wake);
    pthread_mutex_unlock(&pool.lock);

    size_t done = run_parts(fn, ctx, count, parts);

    pthread_mutex_lock(&pool.lock);
    pool.finished += done;
    while (pool.finished < parts || pool.inside > 0) pthread_cond_wait(&pool.done, &pool.lock);
    pool.open = 0;
    pool.seats = 0;
    pthread_mutex_unlock(&pool.lock);
    atomic_flag_clear_explicit(&pool_busy, memory_order_release);
}

/* ---- the range form ------------------------------------------------------------------------- */

typedef struct {
    op_range_fn fn;
    void *ctx;
} range_adapter;

static void run_range_part(void *arg, size_t part, size_t begin, size_t end) {
    (void)part;
    const range_adapter *a = arg;
    a->fn(a->ctx, begin, end);
}

void op_parallel_for(size_t count, size_t threads, op_range_fn fn, void *ctx) {
    if (threads <= 1 || count <= 1) {   /* the common small case: no adapter, no pool */
        if (count > 0) fn(ctx, 0, count);
        return;
    }
    range_adapter a = {fn, ctx};
    op_parallel_parts(count, threads, run_range_part, &a);
}

size_t op_thread_count(size_t work, size_t min_per_thread) {
    int fixed = op_kernel_threads_from_env();
    if (fixed > 0) return (size_t)fixed;   /* an explicit count is used as given */
    pthread_once(&pool_once, pool_init);
    size_t threads = cpu_count > MAX_DEFAULT_THREADS ? MAX_DEFAULT_THREADS : cpu_count;
    size_t useful = min_per_thread ? work / min_per_thread : work;
    if (useful < 1) useful = 1;
    return threads < useful ? threads : useful;
}

size_t op_pool_workers(void) {
    pthread_mutex_lock(&pool.lock);
    size_t n = pool.workers;
    pthread_mutex_unlock(&pool.lock);
    return n;
}
