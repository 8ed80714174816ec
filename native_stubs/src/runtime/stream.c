/*
 * Streams: ordered task queues, each run by its own worker thread (stream_worker.c).
 *
 * Thread safety (the emulator's guarantees):
 *  - Any thread may call any entry point at any time. Shared state (device table, pools of
 *    contexts/streams/events, handle registry, memory table) sits behind short internal locks; no
 *    lock is held while a task runs, so a slow kernel never blocks other API calls.
 *  - The current context is per thread, as on the NPU: a thread calls aclrtSetDevice (or
 *    aclrtSetCurrentContext) before it creates streams or events, allocates device memory or
 *    submits work; otherwise those calls return ACL_ERROR_RT_CONTEXT_NULL (107002). Work may only be
 *    submitted to streams of the calling thread's current context (else 107003), as on the NPU.
 *  - Tasks of one stream run one after another in submission order on that stream's worker thread.
 *    Tasks submitted concurrently by several threads to one stream run in the order the
 *    submissions took the stream's lock. Different streams run concurrently, unordered unless
 *    linked with aclrtRecordEvent + aclrtStreamWaitEvent. NULL means the current context's default
 *    stream; it is a stream like the others (it does not synchronise with other streams).
 *  - Synchronisation (stream, event, device; with or without timeout) may be called from any
 *    thread, concurrently; it waits for the work queued before the call. An asynchronous failure
 *    (pyaclnn_stub_task_fail) is returned, with its message, by the first synchronisation that
 *    covers the failed task, on the thread that makes it.
 *  - Handles are validated before use: a stale, foreign or destroyed stream, event or context gives
 *    a status code (ACL_ERROR_RT_PARAM_INVALID, 107000) and a message, never a crash, including when
 *    another thread destroys the object concurrently. aclrtDestroyStream runs the stream's queued
 *    work first; aclrtDestroyStreamForce drops the tasks not yet started.
 *  - aclGetRecentErrMsg and aclrtGetLastError are per thread.
 *  - Device and pinned host memory freed while queued work uses it is released only once that
 *    work has run (the work pins it, memory.c), so a late task never touches freed memory.
 *  - Worker threads never keep the process alive; once exit() has begun they stop running queued
 *    tasks. The worker of a destroyed stream exits after idling ~100 ms in the pool; aclFinalize
 *    joins the workers of destroyed streams (live streams keep theirs). Submitting and synchronising an idle stream take no global lock beyond one registry
 *    lookup and never allocate except to grow a stream's queue.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"

#define INITIAL_RING 64
#define MAX_PRIORITY 7
#define SPIN_YIELDS 50

static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static rt_stream **all_streams;   /* every stream ever made (live and pooled), under pool_mu */
static size_t n_streams, cap_streams;
/* Pooled streams keep their worker briefly (stream_worker.c), so a destroy + create reuses it. */
static rt_pool stream_pool = RT_POOL_INIT(rt_stream, 32);
static _Atomic int64_t user_streams;

int64_t rt_stream_user_count(void) { return atomic_load(&user_streams); }

/* ---- creation and destruction ---------------------------------------------------------------- */

/* A new stream object with its worker thread, registered in all_streams. Caller holds pool_mu. */
static rt_stream *new_stream_locked(void) {
    if (n_streams == cap_streams) {
        size_t cap = cap_streams ? cap_streams * 2 : 16;
        rt_stream **grown = realloc(all_streams, cap * sizeof *grown);
        if (!grown) return NULL;
        all_streams = grown;
        cap_streams = cap;
    }
    rt_stream *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->ring = calloc(INITIAL_RING, sizeof *s->ring);
    if (!s->ring) {
        free(s);
        return NULL;
    }
    s->ring_cap = INITIAL_RING;
    pthread_mutex_init(&s->mu, NULL);
    rt_cond_init_monotonic(&s->work_cv);   /* a pooled worker's idle deadline */
    rt_cond_init_monotonic(&s->done_cv);
    if (rt_worker_start(s) != 0) {
        /* Nothing else references s yet. */
        pthread_cond_destroy(&s->done_cv);
        pthread_cond_destroy(&s->work_cv);
        pthread_mutex_destroy(&s->mu);
        free(s->ring);
        free(s);
        return NULL;
    }
    s->hz_slot = (uint32_t)n_streams;
    all_streams[n_streams++] = s;
    return s;
}

static void return_to_pool(rt_stream *s) { rt_pool_put(&stream_pool, s); }

aclError rt_stream_create(const char *func, rt_context *ctx, int is_default, uint32_t priority,
                          uint32_t flags, rt_stream **out) {
    rt_stream *s = rt_pool_take(&stream_pool);
    if (!s) {
        pthread_mutex_lock(&pool_mu);
        s = new_stream_locked();
        pthread_mutex_unlock(&pool_mu);
    }
    if (!s)
        return RT_REPORT(ACL_ERROR_RT_NO_STREAM_RESOURCE, func, "cannot create a stream (out of memory or threads)");

    pthread_mutex_lock(&s->mu);
    if (!s->has_worker && rt_worker_start(s) != 0) {   /* a pooled object whose worker was joined */
        pthread_mutex_unlock(&s->mu);
        return_to_pool(s);
        return RT_REPORT(ACL_ERROR_RT_NO_STREAM_RESOURCE, func, "cannot start a stream worker thread");
    }
    s->state = RT_STREAM_LIVE;
    atomic_store(&s->ctx, ctx);
    s->is_default = is_default;
    s->priority = priority > MAX_PRIORITY ? MAX_PRIORITY : priority;   /* clamped, as on the NPU */
    s->flags = flags;
    atomic_store(&s->abort, 0);
    atomic_store(&s->fail_code, 0);
    s->fail_more = 0;
    atomic_store(&s->capture, NULL);
    s->capture_origin = 0;
    atomic_fetch_add(&s->generation, 1);
    pthread_mutex_unlock(&s->mu);

    if (stub_registry_add(&rt_handles, s, RT_KIND_STREAM) != 0) {
        pthread_mutex_lock(&s->mu);
        s->state = RT_STREAM_FREE;
        pthread_mutex_unlock(&s->mu);
        return_to_pool(s);
        return RT_REPORT(ACL_ERROR_RT_NO_STREAM_RESOURCE, func, "out of host memory for a stream");
    }
    if (!is_default) atomic_fetch_add(&user_streams, 1);
    *out = s;
    return ACL_SUCCESS;
}

/* The caller has already removed s from the registry (that is what makes it the only destroyer). */
void rt_stream_destroy(rt_stream *s, int force) {
    if (force) {
        atomic_store(&s->abort, 1);   /* the worker now drops what it has not started */
        rt_event *ev = atomic_load(&s->waiting_on);
        if (ev) rt_event_wake(ev);
    }
    pthread_mutex_lock(&s->mu);
    /* Includes tasks a racing thread submitted after resolving the handle before our claim. */
    while (atomic_load(&s->completed) < atomic_load(&s->submitted)) {
        s->host_waiters++;
        pthread_cond_wait(&s->done_cv, &s->mu);
        s->host_waiters--;
    }
    s->state = RT_STREAM_FREE;
    /* A worker asleep since the stream was live would never notice it is pooled now: wake it, so
     * that it idles with a deadline and retires (stream_worker.c). One still asleep with the deadline
     * of an earlier pooled life is left alone, so a destroy + create loop costs no wake-up. */
    if (s->worker_untimed) pthread_cond_signal(&s->work_cv);
    atomic_store(&s->abort, 0);
    if (rt_hz_mode) {   /* the host has waited for all of its work */
        rt_hz_clock done;
        rt_hz_stream_snapshot(s, &done);
        rt_hz_host_join(&done);
    }
    atomic_store(&s->ctx, NULL);
    rt_model *captured = s->capture_origin ? atomic_load(&s->capture) : NULL;
    atomic_store(&s->capture, NULL);  /* a capturing stream destroyed with its context leaves the capture */
    s->capture_origin = 0;
    atomic_store(&s->fail_code, 0);   /* failures nobody synchronised on die with the stream */
    int was_user = !s->is_default;
    pthread_mutex_unlock(&s->mu);
    if (was_user) atomic_fetch_sub(&user_streams, 1);
    if (captured) rt_model_origin_destroyed(captured);
    return_to_pool(s);
}

static void join_worker(void *s) { rt_worker_join(s); }

void rt_streams_join_idle_workers(void) {
    if (rt_forked_child()) return;   /* the parent's worker threads do not exist here */
    /* The pool stays locked meanwhile, so no stream object is reused while its worker stops. */
    rt_pool_for_each_idle(&stream_pool, join_worker);
    rt_workers_join_retired();
}

/* Live streams of a device (ctx == NULL) or of one context, each claimed with `claim` (removed from
 * the registry) when asked. Returns a malloc'ed array (may be NULL when n == 0). */
static rt_stream **collect_streams(int32_t device, rt_context *ctx, int claim, size_t *n) {
    *n = 0;
    pthread_mutex_lock(&pool_mu);
    rt_stream **list = malloc((n_streams ? n_streams : 1) * sizeof *list);
    for (size_t i = 0; list && i < n_streams; i++) {
        rt_stream *s = all_streams[i];
        pthread_mutex_lock(&s->mu);
        rt_context *owner = atomic_load(&s->ctx);
        int match = s->state == RT_STREAM_LIVE && owner &&
                    (ctx ? owner == ctx : owner->device == device);
        pthread_mutex_unlock(&s->mu);
        if (match && (!claim || stub_registry_remove(&rt_handles, s, RT_KIND_STREAM))) list[(*n)++] = s;
    }
    pthread_mutex_unlock(&pool_mu);
    return list;
}

void rt_streams_destroy_of_context(rt_context *ctx) {
    size_t n;
    rt_stream **list = collect_streams(-1, ctx, 1, &n);
    for (size_t i = 0; i < n; i++) rt_stream_destroy(list[i], 0);
    free(list);
}

/* ---- handles --------------------------------------------------------------------------------- */

aclError rt_stream_resolve_any(const char *func, aclrtStream stream, rt_stream **out) {
    rt_context *ctx;
    aclError rc = rt_require_context(func, &ctx);
    if (rc) return rc;
    if (stream == NULL) {
        *out = ctx->default_stream;
        return ACL_SUCCESS;
    }
    if (stub_registry_kind(&rt_handles, stream) != RT_KIND_STREAM)
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func,
                         "stream %p is not a live stream (never created, or already destroyed)", stream);
    *out = stream;
    return ACL_SUCCESS;
}

aclError rt_stream_resolve(const char *func, aclrtStream stream, rt_stream **out) {
    aclError rc = rt_stream_resolve_any(func, stream, out);
    if (rc) return rc;
    rt_context *ctx = rt_current_context(), *owner = atomic_load(&(*out)->ctx);
    if (owner != ctx && owner != NULL)
        return RT_REPORT(ACL_ERROR_RT_STREAM_CONTEXT, func,
                         "stream %p belongs to context %p (device %d), not to the calling thread's "
                         "current context %p (device %d)",
                         stream, (void *)owner, owner->device, (void *)ctx, ctx->device);
    return ACL_SUCCESS;
}

/* ---- queue ----------------------------------------------------------------------------------- */

/* Doubles the ring, keeping the queued tasks in order. Caller holds s->mu. */
static int grow_ring(rt_stream *s) {
    size_t cap = s->ring_cap * 2;
    rt_task *ring = malloc(cap * sizeof *ring);
    if (!ring) return -1;
    for (size_t i = 0; i < s->ring_count; i++) ring[i] = s->ring[(s->ring_head + i) & (s->ring_cap - 1)];
    free(s->ring);
    s->ring = ring;
    s->ring_cap = cap;
    s->ring_head = 0;
    return 0;
}

aclError rt_stream_enqueue(const char *func, rt_stream *s, const rt_task *task, uint64_t *index) {
    return rt_stream_enqueue_checked(func, s, task, index, NULL);
}

aclError rt_stream_enqueue_checked(const char *func, rt_stream *s, const rt_task *task, uint64_t *index,
                                   const rt_hz_task *info) {
    pthread_mutex_lock(&s->mu);
    if (s->state != RT_STREAM_LIVE || atomic_load(&s->abort)) {
        pthread_mutex_unlock(&s->mu);
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func, "stream %p has been destroyed", (void *)s);
    }
    if (s->ring_count == s->ring_cap && grow_ring(s) != 0) {
        pthread_mutex_unlock(&s->mu);
        return RT_REPORT(ACL_ERROR_RT_STREAM_TASK_FULL, func, "out of host memory for the queue of stream %p",
                         (void *)s);
    }
    rt_model *capture = atomic_load(&s->capture);
    if (capture) {   /* recorded into the model instead of run (model.c); no index in the stream */
        aclError rc = rt_model_record(func, capture, task);
        pthread_mutex_unlock(&s->mu);
        if (index) *index = 0;
        return rc;
    }
    uint64_t i = atomic_load(&s->submitted) + 1;
    if (rt_hz_mode) {   /* the checker decides before the task exists (error mode refuses it) */
        char msg[800];
        int code = rt_hz_enqueue(func, s, task, i, info, msg, sizeof msg);
        if (code) {
            pthread_mutex_unlock(&s->mu);
            return RT_REPORT(code, func, "%s", msg);
        }
    }
    s->ring[(s->ring_head + s->ring_count) & (s->ring_cap - 1)] = *task;
    s->ring_count++;
    atomic_store(&s->submitted, i);
    atomic_fetch_add(&rt_tasks_in_flight, 1);
    if (s->worker_idle) pthread_cond_signal(&s->work_cv);
    pthread_mutex_unlock(&s->mu);
    if (index) *index = i;
    return ACL_SUCCESS;
}

int rt_stream_wait_index(rt_stream *s, uint64_t index, const struct timespec *deadline) {
    /* Short tasks finish within microseconds: yielding a few times first lets the worker run (even
     * on the same core) and spares the host a sleep/wake round trip. */
    for (int spin = 0; spin < SPIN_YIELDS; spin++) {
        if (atomic_load(&s->completed) >= index) return 0;
        sched_yield();
    }
    if (atomic_load(&s->completed) >= index) return 0;
    int timed_out = 0;
    pthread_mutex_lock(&s->mu);
    while (atomic_load(&s->completed) < index) {
        s->host_waiters++;
        int rc = deadline ? pthread_cond_timedwait(&s->done_cv, &s->mu, deadline)
                          : pthread_cond_wait(&s->done_cv, &s->mu);
        s->host_waiters--;
        if (rc == ETIMEDOUT && atomic_load(&s->completed) < index) {
            timed_out = 1;
            break;
        }
    }
    pthread_mutex_unlock(&s->mu);
    return timed_out;
}

aclError rt_stream_take_failure(const char *func, rt_stream *s, uint64_t upto) {
    if (atomic_load(&s->fail_code) == 0) return ACL_SUCCESS;
    char msg[sizeof s->fail_msg];
    int code = 0, more = 0;
    uint64_t task = 0;
    pthread_mutex_lock(&s->mu);
    if (atomic_load(&s->fail_code) != 0 && s->fail_task <= upto) {
        code = atomic_load(&s->fail_code);
        task = s->fail_task;
        more = s->fail_more;
        memcpy(msg, s->fail_msg, sizeof msg);
        atomic_store(&s->fail_code, 0);
        s->fail_more = 0;
    }
    pthread_mutex_unlock(&s->mu);
    if (code == 0) return ACL_SUCCESS;
    if (more)
        pyaclnn_stub_report(code, func, "task %llu on stream %p failed: %s (and %d later task failure%s)",
                            (unsigned long long)task, (void *)s, msg, more, more > 1 ? "s" : "");
    else
        pyaclnn_stub_report(code, func, "task %llu on stream %p failed: %s", (unsigned long long)task,
                            (void *)s, msg);
    return code;
}

/* Waits for the work queued on s so far and surfaces its failure. */
static aclError synchronize_one(const char *func, rt_stream *s, const struct timespec *deadline,
                                int32_t timeout_ms) {
    rt_hz_clock done = {NULL, 0};
    if (rt_hz_mode) rt_hz_stream_snapshot(s, &done);   /* first: the wait below covers all it names */
    uint64_t target = atomic_load(&s->submitted);
    int timed_out = rt_stream_wait_index(s, target, deadline);
    if (rt_hz_mode) {
        if (!timed_out) rt_hz_host_join(&done);
        free(done.c);
    }
    if (timed_out)
        return RT_REPORT(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, func,
                         "stream %p still has %llu unfinished task(s) after %d ms", (void *)s,
                         (unsigned long long)(target - atomic_load(&s->completed)), timeout_ms);
    return rt_stream_take_failure(func, s, target);
}

aclError rt_streams_synchronize(const char *func, int32_t device, rt_context *ctx, int32_t timeout_ms) {
    struct timespec deadline;
    if (timeout_ms >= 0) rt_deadline_after_ms(&deadline, timeout_ms);
    size_t n;
    rt_stream **list = collect_streams(device, ctx, 0, &n);
    if (!list) return RT_REPORT(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, func, "out of host memory");
    for (size_t i = 0; i < n; i++) {   /* the vendor's Context::Synchronize: no captured stream */
        aclError rc = rt_capture_refuse_stream(func, list[i], "Synchronizing a device or context");
        if (rc) {
            free(list);
            return rc;
        }
    }
    aclError first = ACL_SUCCESS;
    for (size_t i = 0; i < n; i++) {
        aclError rc = synchronize_one(func, list[i], timeout_ms >= 0 ? &deadline : NULL, timeout_ms);
        /* A task failure outranks a timeout: it has been taken from its stream and must not be lost. */
        if (rc && (!first || first == ACL_ERROR_RT_STREAM_SYNC_TIMEOUT)) first = rc;
    }
    free(list);
    return first;
}

void rt_streams_end_capture(rt_model *m) {
    pthread_mutex_lock(&pool_mu);
    for (size_t i = 0; i < n_streams; i++) {
        rt_stream *s = all_streams[i];
        pthread_mutex_lock(&s->mu);
        if (atomic_load(&s->capture) == m) {
            atomic_store(&s->capture, NULL);
            s->capture_origin = 0;
        }
        pthread_mutex_unlock(&s->mu);
    }
    pthread_mutex_unlock(&pool_mu);
}

/* ---- public API ------------------------------------------------------------------------------ */

static aclError create_stream(const char *func, aclrtStream *stream, uint32_t priority, uint32_t flag) {
    if (!stream) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "stream is NULL");
    rt_context *ctx;
    aclError rc = rt_require_context(func, &ctx);
    if (rc) return rc;
    rt_stream *s;
    rc = rt_stream_create(func, ctx, 0, priority, flag, &s);
    if (rc) return rc;
    *stream = s;
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtCreateStream(aclrtStream *stream) {
    return create_stream("aclrtCreateStream", stream, 0, 0);
}

ACL_FUNC_VISIBILITY aclError aclrtCreateStreamWithConfig(aclrtStream *stream, uint32_t priority, uint32_t flag) {
    return create_stream("aclrtCreateStreamWithConfig", stream, priority, flag);
}

static aclError destroy_stream(const char *func, aclrtStream stream, int force) {
    if (!stream) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "stream is NULL");
    rt_stream *s;
    aclError rc = rt_stream_resolve(func, stream, &s);
    if (rc) return rc;
    if (s->is_default)
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func,
                         "stream %p is a default stream; it goes with its context", stream);
    if ((rc = rt_capture_refuse_stream(func, s, "Stream destruction"))) return rc;
    if (!stub_registry_remove(&rt_handles, s, RT_KIND_STREAM))
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func, "stream %p was destroyed concurrently", stream);
    rt_stream_destroy(s, force);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtDestroyStream(aclrtStream stream) {
    return destroy_stream("aclrtDestroyStream", stream, 0);
}

ACL_FUNC_VISIBILITY aclError aclrtDestroyStreamForce(aclrtStream stream) {
    return destroy_stream("aclrtDestroyStreamForce", stream, 1);
}

ACL_FUNC_VISIBILITY aclError aclrtSynchronizeStream(aclrtStream stream) {
    static const char func[] = "aclrtSynchronizeStream";
    rt_stream *s;
    aclError rc = rt_stream_resolve_any(func, stream, &s);
    if (rc) return rc;
    if ((rc = rt_capture_refuse_stream(func, s, "Synchronizing a stream"))) return rc;
    return synchronize_one(func, s, NULL, -1);
}

ACL_FUNC_VISIBILITY aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout) {
    static const char func[] = "aclrtSynchronizeStreamWithTimeout";
    if (timeout < -1)
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func,
                         "timeout %d ms is invalid; expected -1 (wait forever) or a value >= 0", timeout);
    rt_stream *s;
    aclError rc = rt_stream_resolve_any(func, stream, &s);
    if (rc) return rc;
    if ((rc = rt_capture_refuse_stream(func, s, "Synchronizing a stream"))) return rc;
    struct timespec deadline;
    if (timeout >= 0) rt_deadline_after_ms(&deadline, timeout);
    return synchronize_one(func, s, timeout >= 0 ? &deadline : NULL, timeout);
}

ACL_FUNC_VISIBILITY aclError aclrtStreamQuery(aclrtStream stream, aclrtStreamStatus *status) {
    static const char func[] = "aclrtStreamQuery";
    if (!status) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "status is NULL");
    rt_stream *s;
    aclError rc = rt_stream_resolve_any(func, stream, &s);
    if (rc) return rc;
    if ((rc = rt_capture_refuse_stream(func, s, "Querying a stream"))) return rc;
    rt_hz_clock done = {NULL, 0};
    if (rt_hz_mode) rt_hz_stream_snapshot(s, &done);
    *status = atomic_load(&s->completed) >= atomic_load(&s->submitted) ? ACL_STREAM_STATUS_COMPLETE
                                                                         : ACL_STREAM_STATUS_NOT_READY;
    if (rt_hz_mode) {   /* "complete" is as good as a synchronisation (docs/hazards.md) */
        if (*status == ACL_STREAM_STATUS_COMPLETE) rt_hz_host_join(&done);
        free(done.c);
    }
    return ACL_SUCCESS;
}

PYACLNN_STUB_API int32_t pyaclnn_stub_stream_device(aclrtStream stream) {
    if (stream == NULL) {
        rt_context *ctx = rt_current_context();
        return ctx ? ctx->device : -1;
    }
    if (stub_registry_kind(&rt_handles, stream) != RT_KIND_STREAM) return -1;
    rt_context *owner = atomic_load(&((rt_stream *)stream)->ctx);   /* pooled objects stay readable */
    return owner ? owner->device : -1;
}

PYACLNN_STUB_API aclError pyaclnn_stub_stream_submit(const char *func, aclrtStream stream,
                                                     pyaclnn_stub_task_fn run,
                                                     pyaclnn_stub_task_fn release, void *arg) {
    return pyaclnn_stub_stream_submit_accesses(func, stream, run, release, arg, NULL, NULL, 0);
}

PYACLNN_STUB_API aclError pyaclnn_stub_stream_submit_accesses(const char *func, aclrtStream stream,
                                                              pyaclnn_stub_task_fn run,
                                                              pyaclnn_stub_task_fn release, void *arg,
                                                              const char *op, const pyaclnn_stub_access *acc,
                                                              size_t n_acc) {
    if (!func) func = "pyaclnn_stub_stream_submit";
    aclError rc;
    rt_stream *s;
    if (!run) {
        rc = RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "no task function to run");
    } else if ((rc = rt_stream_resolve(func, stream, &s)) == ACL_SUCCESS) {
        rt_task t = {.kind = RT_TASK_CALL, .u.call = {run, release, arg}};
        rt_hz_task info = {.op = op, .acc = acc, .n = n_acc, .is_operator = 1};
        rc = rt_stream_enqueue_checked(func, s, &t, NULL, op ? &info : NULL);
    }
    if (rc && release) release(arg);
    return rc;
}
