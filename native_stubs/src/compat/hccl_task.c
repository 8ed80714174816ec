/*
 * A collective as a task of the caller's stream.
 *
 * HcclAllReduce & co. queue a task (pyaclnn_stub_stream_submit_accesses) and return: stream order, events, the
 * hazard checker (the send buffer read, the receive buffer written) and graph capture see the collective like
 * any task. When the stream's worker reaches it, the task hands a request to the transport thread (a Python
 * thread of pyaclnn._hccl that drives torch's gloo) and waits for its answer.
 *
 * Why a separate Python thread rather than the worker taking the GIL itself: a thread that takes the GIL while
 * the interpreter finalizes is ended on the spot (pthread_exit), so a stream worker would vanish with its task
 * unfinished and any later synchronisation would hang; and a worker blocked in PyGILState_Ensure cannot be
 * told to give up. Here the worker only waits on a condition variable, a tenth of a second at a time: when the
 * transport has stopped (Python's atexit or the transport thread's end, via hccl_service_stop) or the process is
 * exiting, it abandons the request and fails the task, so nothing waits forever.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hccl_internal.h"

typedef struct {
    const char *func;              /* static: "HcclAllReduce" ...                        */
    HcclComm handle;               /* for the async error (checked live before use)      */
    int kind;
    long long args[HCCL_TASK_ARGS];
    size_t n_extra;
    uint64_t extra[];              /* copied: the caller may free its arrays on return   */
} plan;

enum { REQ_QUEUED, REQ_TAKEN, REQ_DONE, REQ_ABANDONED };

typedef struct request {
    struct request *next;
    const plan *p;
    int state, code;
    char msg[600];
    /* the plan's extra values, read by the transport after next() returned: an abandoned request outlives the
     * plan (the runtime frees that once the task returns), so they travel with the request */
    uint64_t extra[];
} request;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work_cv = PTHREAD_COND_INITIALIZER;   /* the transport thread waits for requests  */
static pthread_cond_t done_cv;                               /* workers wait for answers (monotonic)     */
static request *head, *tail;
static int stopped;                                          /* the transport is gone (atexit)           */
static _Atomic int exiting;                                  /* exit() has begun                          */
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void note_exit(void) { atomic_store(&exiting, 1); }

static void setup(void)
{
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&done_cv, &attr);
    pthread_condattr_destroy(&attr);
    atexit(note_exit);
}

/* Which runtime failure a stream sees for an HCCL code: a peer's problem, or ours. */
static int acl_code_of(int code)
{
    return code == HCCL_E_TCP_TRANSFER || code == HCCL_E_TIMEOUT || code == HCCL_E_TCP_CONNECT
               ? ACL_ERROR_RT_SUSPECT_REMOTE_ERROR
               : ACL_ERROR_RT_INTERNAL_ERROR;
}

static void unlink_queued(request *r)
{
    request **at = &head, *prev = NULL;
    while (*at && *at != r) {
        prev = *at;
        at = &(*at)->next;
    }
    if (*at == NULL) return;
    *at = r->next;
    if (tail == r) tail = prev;
}

static void fail(const plan *p, int code, const char *msg)
{
    hccl_comm *c = hccl_comm_of(p->handle);
    int none = HCCL_SUCCESS;
    if (c != NULL) atomic_compare_exchange_strong(&c->async_error, &none, code);
    pyaclnn_stub_task_fail(acl_code_of(code), "%s failed with HCCL error %d: %s", p->func, code, msg);
}

/* The stream task: hand the plan to the transport thread and wait for its answer. */
static void run(void *arg)
{
    const plan *p = arg;
    pthread_once(&once, setup);
    request *r = calloc(1, sizeof *r + p->n_extra * sizeof(uint64_t));
    if (r == NULL) {
        fail(p, HCCL_E_MEMORY, "out of memory");
        return;
    }
    r->p = p;
    if (p->n_extra) memcpy(r->extra, p->extra, p->n_extra * sizeof(uint64_t));
    pthread_mutex_lock(&mu);
    if (stopped || atomic_load(&exiting)) {
        pthread_mutex_unlock(&mu);
        free(r);
        fail(p, HCCL_E_INTERNAL, "the transport has stopped (the process is exiting, or it failed)");
        return;
    }
    if (tail) tail->next = r; else head = r;
    tail = r;
    pthread_cond_signal(&work_cv);
    while (r->state != REQ_DONE) {
        if (stopped || atomic_load(&exiting)) {
            if (r->state == REQ_QUEUED) unlink_queued(r);
            else r->state = REQ_ABANDONED;   /* the transport thread frees it when it answers */
            int queued = r->state == REQ_QUEUED;
            pthread_mutex_unlock(&mu);
            if (queued) free(r);
            fail(p, HCCL_E_INTERNAL, "the transport has stopped (the process is exiting, or it failed): "
                                    "the collective was abandoned");
            return;
        }
        struct timespec deadline;
        clock_gettime(CLOCK_MONOTONIC, &deadline);
        deadline.tv_nsec += 100 * 1000000L;
        if (deadline.tv_nsec >= 1000000000L) {
            deadline.tv_sec++;
            deadline.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&done_cv, &mu, &deadline);
    }
    pthread_mutex_unlock(&mu);
    if (r->code != HCCL_SUCCESS) fail(p, r->code, r->msg);
    free(r);
}

/* out: request, kind, the 7 arguments, the extra array's address and length. 1: a request, 0: none came within
 * timeout_us, -1: stopped. Called with the GIL released (ctypes). */
int hccl_service_next(long long *out, long long timeout_us)
{
    pthread_once(&once, setup);
    pthread_mutex_lock(&mu);
    if (head == NULL && !stopped && timeout_us > 0) {
        struct timespec deadline;
        clock_gettime(CLOCK_REALTIME, &deadline);   /* work_cv uses the default clock */
        deadline.tv_sec += timeout_us / 1000000;
        deadline.tv_nsec += (timeout_us % 1000000) * 1000;
        if (deadline.tv_nsec >= 1000000000L) {
            deadline.tv_sec++;
            deadline.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&work_cv, &mu, &deadline);
    }
    int got = stopped ? -1 : head != NULL;
    if (got == 1) {
        request *r = head;
        head = r->next;
        if (head == NULL) tail = NULL;
        r->state = REQ_TAKEN;
        out[0] = (long long)(uintptr_t)r;
        out[1] = r->p->kind;
        memcpy(out + 2, r->p->args, sizeof r->p->args);
        out[2 + HCCL_TASK_ARGS] = (long long)(uintptr_t)r->extra;
        out[3 + HCCL_TASK_ARGS] = (long long)r->p->n_extra;
    }
    pthread_mutex_unlock(&mu);
    return got;
}

/* The answer to a request taken by hccl_service_next (an abandoned one is freed here: nobody waits for it). */
void hccl_service_done(long long request_addr, int code, const char *msg)
{
    request *r = (request *)(uintptr_t)request_addr;
    pthread_mutex_lock(&mu);
    if (r->state == REQ_ABANDONED) {
        pthread_mutex_unlock(&mu);
        free(r);
        return;
    }
    r->code = code;
    snprintf(r->msg, sizeof r->msg, "%s", msg ? msg : "");
    r->state = REQ_DONE;
    pthread_cond_broadcast(&done_cv);
    pthread_mutex_unlock(&mu);
}

/* Python's atexit, or the transport thread's end: no more requests; waiting workers give up (within 0.1 s). */
void hccl_service_stop(void)
{
    pthread_once(&once, setup);
    pthread_mutex_lock(&mu);
    stopped = 1;
    pthread_cond_broadcast(&work_cv);
    pthread_cond_broadcast(&done_cv);
    pthread_mutex_unlock(&mu);
}

HcclResult hccl_submit(const char *func, HcclComm handle, int kind, const long long args[HCCL_TASK_ARGS],
                       const uint64_t *extra, size_t n_extra, const pyaclnn_stub_access *acc, size_t n_acc,
                       aclrtStream stream)
{
    pyaclnn_stub_compat_trace(func, "queued on stream %p", stream);   /* PYACLNN_STUB_TRACE_COMPAT=1 */
    plan *p = malloc(sizeof *p + n_extra * sizeof(uint64_t));
    if (p == NULL) return HCCL_E_MEMORY;
    p->func = func;
    p->handle = handle;
    p->kind = kind;
    memcpy(p->args, args, sizeof p->args);
    p->n_extra = n_extra;
    if (n_extra) memcpy(p->extra, extra, n_extra * sizeof(uint64_t));
    /* the runtime frees the plan (free) after the task ran, was dropped, or its captured model is destroyed */
    aclError e = pyaclnn_stub_stream_submit_accesses(func, stream, run, free, p, func, acc, n_acc);
    if (e != ACL_SUCCESS) {
        fprintf(stderr, "pyaclnn-hccl: %s: the stream does not take the collective (acl error %d)\n", func, (int)e);
        return HCCL_E_RUNTIME;
    }
    return HCCL_SUCCESS;
}
