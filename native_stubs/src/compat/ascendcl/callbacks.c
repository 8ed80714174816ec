/*
 * Host work in stream order (acl_rt.h), with the semantics and codes of hicann/runtime:
 *
 *   aclrtLaunchHostFunc(stream, fn, args)
 *       fn(args) runs on the host when the stream reaches it, after everything queued before it; the
 *       stream waits for it to return. (The vendor runs it on a per-context callback thread; here the
 *       stream's worker thread runs it -- same order, same blocking.) The stream is then "subscribed by
 *       the runtime": aclrtSubscribeReport / aclrtLaunchCallback on it -> ACL_ERROR_RT_STREAM_SUBSCRIBE.
 *   aclrtSubscribeReport(threadId, stream) / aclrtUnSubscribeReport(threadId, stream)
 *       binds / unbinds the thread (its pthread_t, as the vendor's threadId is pthread_self()) that runs
 *       the stream's callbacks. One thread per stream (a second subscription -> 107011); unsubscribing
 *       a stream that is not subscribed -> 107011, by another thread than its own -> 107012.
 *   aclrtLaunchCallback(fn, userData, blockType, stream)
 *       needs a subscribed stream (else ACL_ERROR_RT_STREAM_NO_CB_REG, 107015). When the stream reaches
 *       the task, the callback is reported to the subscribed thread. ACL_CALLBACK_BLOCK holds the stream
 *       until that thread has run it; ACL_CALLBACK_NO_BLOCK lets the stream go on at once.
 *   aclrtProcessReport(timeout)
 *       the subscribed thread waits up to timeout ms (-1: forever; 0 and < -1 -> 100000) for reported
 *       callbacks and runs those that are there, in report order. A thread with no subscription (and
 *       nothing reported to it) -> ACL_ERROR_RT_THREAD_SUBSCRIBE (107012); nothing within the timeout ->
 *       ACL_ERROR_RT_REPORT_TIMEOUT (507012).
 *
 * A blocked stream still ends when it is force-destroyed (a callback not yet taken is dropped) and when
 * the process exits. If the stream was unsubscribed before its callback task ran, the task fails
 * (107015, reported by the stream's next synchronisation) and the callback never runs.
 *
 * Hazard checker: the task takes its stream's clock (RT_HZ_SYNC_SNAPSHOT); when the function runs the
 * host joins it, and while it runs, the host accesses it makes count as ordered with all of its stream's
 * work (rt_hz_host_in_stream): host code in a host function or callback may use what its stream produced
 * before it, and the stream's later work waits for it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../compat.h"
#include "../../runtime/rt_internal.h"

#define BLOCK_POLL_MS 50   /* how often a stream blocked on a callback looks for abort / exit */

enum { QUEUED, RUNNING, DONE };

typedef struct report {
    struct report *next;
    aclrtCallback fn;
    void *user_data;
    int block;
    int state;
    rt_hz_clock snapshot;   /* the stream's hazard clock at the callback's task (moved from the task) */
    rt_stream *stream;
} report;

typedef struct subscriber {   /* a thread that has subscribed streams or reports to run */
    struct subscriber *next;
    uint64_t thread_id;
    report *head, *tail;
    pthread_cond_t cv;        /* signalled when a report arrives */
} subscriber;

typedef struct {
    rt_stream *s;
    uint64_t generation;
    int user;                 /* aclrtSubscribeReport'ed, by thread_id */
    uint64_t thread_id;
    int runtime;              /* used by aclrtLaunchHostFunc */
} stream_sub;

static pthread_mutex_t cb_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_cv;   /* a blocking callback finished */
static pthread_once_t cv_once = PTHREAD_ONCE_INIT;
static subscriber *subscribers;
static stream_sub *subs;
static size_t n_subs, cap_subs;

static void init_cv(void) { rt_cond_init_monotonic(&done_cv); }

static int stream_alive(rt_stream *s, uint64_t generation) {
    return atomic_load(&s->generation) == generation && stub_registry_kind(&rt_handles, s) == RT_KIND_STREAM;
}

/* The subscription record of live stream s (created if asked; a reused object's record is reset).
 * Caller holds cb_mu. NULL: none (or out of memory when creating). */
static stream_sub *sub_of(rt_stream *s, int create) {
    uint64_t gen = atomic_load(&s->generation);
    stream_sub *free_slot = NULL;
    for (size_t i = 0; i < n_subs; i++) {
        if (subs[i].s == s) {
            if (subs[i].generation != gen) {
                memset(&subs[i], 0, sizeof subs[i]);
                subs[i].s = s;
                subs[i].generation = gen;
                if (!create) return NULL;
            }
            return &subs[i];
        }
        if (!free_slot && !stream_alive(subs[i].s, subs[i].generation)) free_slot = &subs[i];
    }
    if (!create) return NULL;
    if (!free_slot) {
        if (n_subs == cap_subs) {
            size_t cap = cap_subs ? cap_subs * 2 : 8;
            stream_sub *grown = realloc(subs, cap * sizeof *grown);
            if (!grown) return NULL;
            subs = grown;
            cap_subs = cap;
        }
        free_slot = &subs[n_subs++];
    }
    memset(free_slot, 0, sizeof *free_slot);
    free_slot->s = s;
    free_slot->generation = gen;
    return free_slot;
}

/* Whether thread_id has a subscription to a live stream. Caller holds cb_mu. */
static int thread_subscribed(uint64_t thread_id) {
    for (size_t i = 0; i < n_subs; i++)
        if (subs[i].user && subs[i].thread_id == thread_id && stream_alive(subs[i].s, subs[i].generation)) return 1;
    return 0;
}

/* The subscriber record of thread_id (created if asked). Caller holds cb_mu. */
static subscriber *subscriber_of(uint64_t thread_id, int create) {
    for (subscriber *t = subscribers; t; t = t->next)
        if (t->thread_id == thread_id) return t;
    if (!create) return NULL;
    subscriber *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->thread_id = thread_id;
    rt_cond_init_monotonic(&t->cv);
    t->next = subscribers;
    subscribers = t;
    return t;
}

/* ---- the tasks -------------------------------------------------------------------------------- */

typedef struct {
    rt_stream *s;
    uint64_t generation;
    aclrtHostFunc host_fn;     /* aclrtLaunchHostFunc */
    aclrtCallback cb_fn;       /* aclrtLaunchCallback */
    void *arg;
    int block;
    rt_hz_clock snapshot;      /* filled by the hazard checker when the task is queued */
} host_task;

static void release_task(void *p) {
    host_task *t = p;
    free(t->snapshot.c);
    free(t);
}

static void join_host_view(rt_hz_clock *c) {
    if (rt_hz_mode) rt_hz_host_join(c);   /* frees the clock */
    free(c->c);
    c->c = NULL;
    c->n = 0;
}

static void run_host_func(void *p) {
    host_task *t = p;
    join_host_view(&t->snapshot);
    if (rt_hz_mode) rt_hz_host_in_stream(t->s);
    t->host_fn(t->arg);
    if (rt_hz_mode) rt_hz_host_in_stream(NULL);
}

static void run_callback(void *p) {
    host_task *t = p;
    pthread_once(&cv_once, init_cv);
    pthread_mutex_lock(&cb_mu);
    stream_sub *sub = sub_of(t->s, 0);
    subscriber *target = sub && sub->user ? subscriber_of(sub->thread_id, 1) : NULL;
    report *r = target ? calloc(1, sizeof *r) : NULL;
    if (!r) {
        pthread_mutex_unlock(&cb_mu);
        pyaclnn_stub_task_fail(target ? ACL_ERROR_RT_RESOURCE_ALLOC_FAIL : ACL_ERROR_RT_STREAM_NO_CB_REG,
                               target ? "aclrtLaunchCallback: out of host memory for the callback report"
                                      : "aclrtLaunchCallback: the stream has no subscribed thread any more "
                                        "(aclrtUnSubscribeReport before the callback task ran); callback dropped");
        return;
    }
    r->fn = t->cb_fn;
    r->user_data = t->arg;
    r->block = t->block;
    r->stream = t->s;
    r->state = QUEUED;
    r->snapshot = t->snapshot;   /* moved: the thread that runs the callback joins it */
    t->snapshot.c = NULL;
    t->snapshot.n = 0;
    if (target->tail) target->tail->next = r;
    else target->head = r;
    target->tail = r;
    pthread_cond_broadcast(&target->cv);
    if (!t->block) {   /* the report now belongs to the processing thread */
        pthread_mutex_unlock(&cb_mu);
        return;
    }
    while (r->state != DONE) {
        if (r->state == QUEUED && (atomic_load(&t->s->abort) || atomic_load(&rt_process_exiting))) {
            /* force-destroyed or exiting: drop the callback nobody has taken */
            report **link = &target->head, *prev = NULL;
            while (*link && *link != r) prev = *link, link = &(*link)->next;
            if (*link) {
                *link = r->next;
                if (target->tail == r) target->tail = prev;
            }
            break;
        }
        struct timespec deadline;
        rt_deadline_after_ms(&deadline, BLOCK_POLL_MS);
        pthread_cond_timedwait(&done_cv, &cb_mu, &deadline);
    }
    pthread_mutex_unlock(&cb_mu);
    free(r->snapshot.c);
    free(r);
}

/* Queues task t (owned: freed on failure) on s with a hazard snapshot. */
static aclError enqueue(const char *func, rt_stream *s, host_task *t, pyaclnn_stub_task_fn run, const char *op) {
    rt_task task = {.kind = RT_TASK_CALL, .u.call = {run, release_task, t}};
    rt_hz_task info = {op, NULL, 0, 0, RT_HZ_SYNC_SNAPSHOT, NULL, 0, 0, &t->snapshot};
    aclError rc = rt_stream_enqueue_checked(func, s, &task, NULL, &info);
    if (rc) release_task(t);
    return rc;
}

static host_task *new_task(const char *func, rt_stream *s) {
    host_task *t = calloc(1, sizeof *t);
    if (!t) {
        (void)RT_REPORT(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, func, "out of host memory for the task");
        return NULL;
    }
    t->s = s;
    t->generation = atomic_load(&s->generation);
    return t;
}

/* ---- entry points ----------------------------------------------------------------------------- */

ACL_FUNC_VISIBILITY aclError aclrtLaunchHostFunc(aclrtStream stream, aclrtHostFunc fn, void *args) {
    static const char func[] = "aclrtLaunchHostFunc";
    if (!fn) return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func, "fn is NULL");
    rt_stream *s;
    aclError rc = rt_stream_resolve(func, stream, &s);
    if (rc) return rc;
    pthread_mutex_lock(&cb_mu);
    stream_sub *sub = sub_of(s, 1);
    int user = sub && sub->user;
    if (sub && !user) sub->runtime = 1;
    pthread_mutex_unlock(&cb_mu);
    if (!sub) return RT_REPORT(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, func, "out of host memory");
    if (user)
        return RT_REPORT(ACL_ERROR_RT_STREAM_SUBSCRIBE, func,
                         "stream %p has a thread subscribed with aclrtSubscribeReport (it is in the host callback "
                         "process); use aclrtLaunchCallback on it, or another stream", (void *)s);
    host_task *t = new_task(func, s);
    if (!t) return ACL_ERROR_RT_RESOURCE_ALLOC_FAIL;
    t->host_fn = fn;
    t->arg = args;
    return enqueue(func, s, t, run_host_func, "hostFunc");
}

ACL_FUNC_VISIBILITY aclError aclrtSubscribeReport(uint64_t threadId, aclrtStream stream) {
    static const char func[] = "aclrtSubscribeReport";
    rt_stream *s;
    aclError rc = rt_stream_resolve_any(func, stream, &s);
    if (rc) return rc;
    pthread_mutex_lock(&cb_mu);
    stream_sub *sub = sub_of(s, 1);
    int runtime = sub && sub->runtime, taken = sub && sub->user;
    uint64_t owner = taken ? sub->thread_id : 0;
    subscriber *t = sub && !runtime && !taken ? subscriber_of(threadId, 1) : NULL;
    if (t) {
        sub->user = 1;
        sub->thread_id = threadId;
    }
    pthread_mutex_unlock(&cb_mu);
    if (runtime)
        return RT_REPORT(ACL_ERROR_RT_STREAM_SUBSCRIBE, func,
                         "stream %p runs host functions (aclrtLaunchHostFunc) and cannot take a subscribed thread",
                         (void *)s);
    if (taken)
        return RT_REPORT(ACL_ERROR_RT_STREAM_SUBSCRIBE, func, "stream %p is already subscribed by thread %llu",
                         (void *)s, (unsigned long long)owner);
    if (!t) return RT_REPORT(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, func, "out of host memory");
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtUnSubscribeReport(uint64_t threadId, aclrtStream stream) {
    static const char func[] = "aclrtUnSubscribeReport";
    rt_stream *s;
    aclError rc = rt_stream_resolve_any(func, stream, &s);
    if (rc) return rc;
    pthread_mutex_lock(&cb_mu);
    stream_sub *sub = sub_of(s, 0);
    int subscribed = sub && sub->user;
    uint64_t owner = subscribed ? sub->thread_id : 0;
    if (subscribed && owner == threadId) {
        sub->user = 0;
        sub->thread_id = 0;
    }
    pthread_mutex_unlock(&cb_mu);
    if (!subscribed)
        return RT_REPORT(ACL_ERROR_RT_STREAM_SUBSCRIBE, func, "stream %p has no subscribed thread", (void *)s);
    if (owner != threadId)
        return RT_REPORT(ACL_ERROR_RT_THREAD_SUBSCRIBE, func, "stream %p is subscribed by thread %llu, not %llu",
                         (void *)s, (unsigned long long)owner, (unsigned long long)threadId);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtLaunchCallback(aclrtCallback fn, void *userData, aclrtCallbackBlockType blockType,
                                                 aclrtStream stream) {
    static const char func[] = "aclrtLaunchCallback";
    if (blockType != ACL_CALLBACK_BLOCK && blockType != ACL_CALLBACK_NO_BLOCK)
        return RT_REPORT(ACL_ERROR_INVALID_PARAM, func,
                         "blockType %d is invalid: ACL_CALLBACK_NO_BLOCK (0) or ACL_CALLBACK_BLOCK (1)",
                         (int)blockType);
    if (!fn) return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func, "fn is NULL");
    rt_stream *s;
    aclError rc = rt_stream_resolve(func, stream, &s);
    if (rc) return rc;
    pthread_mutex_lock(&cb_mu);
    stream_sub *sub = sub_of(s, 0);
    int runtime = sub && sub->runtime, user = sub && sub->user;
    pthread_mutex_unlock(&cb_mu);
    if (runtime)
        return RT_REPORT(ACL_ERROR_RT_STREAM_SUBSCRIBE, func,
                         "stream %p runs host functions (aclrtLaunchHostFunc); callbacks need a stream with a "
                         "subscribed thread", (void *)s);
    if (!user)
        return RT_REPORT(ACL_ERROR_RT_STREAM_NO_CB_REG, func,
                         "stream %p is not bound to any thread: call aclrtSubscribeReport first", (void *)s);
    host_task *t = new_task(func, s);
    if (!t) return ACL_ERROR_RT_RESOURCE_ALLOC_FAIL;
    t->cb_fn = fn;
    t->arg = userData;
    t->block = blockType == ACL_CALLBACK_BLOCK;
    return enqueue(func, s, t, run_callback, "callback");
}

ACL_FUNC_VISIBILITY aclError aclrtProcessReport(int32_t timeout) {
    static const char func[] = "aclrtProcessReport";
    if (timeout < -1 || timeout == 0)
        return RT_REPORT(ACL_ERROR_INVALID_PARAM, func,
                         "timeout %d is invalid: -1 waits forever, a value greater than 0 waits that many ms", timeout);
    aclError rc = rt_fork_check(func);
    if (rc) return rc;
    pthread_once(&cv_once, init_cv);
    uint64_t self = (uint64_t)pthread_self();
    struct timespec deadline;
    if (timeout > 0) rt_deadline_after_ms(&deadline, timeout);
    pthread_mutex_lock(&cb_mu);
    subscriber *me = subscriber_of(self, 0);
    if (!thread_subscribed(self) && !(me && me->head)) {
        pthread_mutex_unlock(&cb_mu);
        return RT_REPORT(ACL_ERROR_RT_THREAD_SUBSCRIBE, func,
                         "the calling thread (%llu) is subscribed to no stream (aclrtSubscribeReport)",
                         (unsigned long long)self);
    }
    if (!me && !(me = subscriber_of(self, 1))) {
        pthread_mutex_unlock(&cb_mu);
        return RT_REPORT(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, func, "out of host memory");
    }
    while (!me->head) {
        int w = timeout > 0 ? pthread_cond_timedwait(&me->cv, &cb_mu, &deadline) : pthread_cond_wait(&me->cv, &cb_mu);
        if (w == ETIMEDOUT && !me->head) {
            pthread_mutex_unlock(&cb_mu);
            return RT_REPORT(ACL_ERROR_RT_REPORT_TIMEOUT, func, "no callback was reported within %d ms", timeout);
        }
    }
    report *batch = me->head;   /* everything reported so far, in order */
    me->head = me->tail = NULL;
    for (report *r = batch; r; r = r->next) r->state = RUNNING;
    pthread_mutex_unlock(&cb_mu);
    while (batch) {
        report *r = batch;
        batch = r->next;
        join_host_view(&r->snapshot);
        if (rt_hz_mode) rt_hz_host_in_stream(r->stream);
        r->fn(r->user_data);
        if (rt_hz_mode) rt_hz_host_in_stream(NULL);
        pthread_mutex_lock(&cb_mu);
        if (r->block) {   /* the stream's task frees it once it sees DONE */
            r->state = DONE;
            pthread_cond_broadcast(&done_cv);
            r = NULL;
        }
        pthread_mutex_unlock(&cb_mu);
        free(r);
    }
    return ACL_SUCCESS;
}
