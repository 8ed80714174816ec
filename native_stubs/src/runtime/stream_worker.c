/*
 * The worker thread of a stream: takes tasks in order and runs them, with no lock held while a
 * task runs. A live stream keeps its worker however long it idles (launches may come at any time).
 *
 * A destroyed stream's object goes to the pool (stream.c) and its worker retires once it has idled
 * there for POOLED_IDLE_MS: it puts its thread on the retired list and ends. Retired threads are
 * joined (their stack and TLS freed; a joinable thread nobody joins would keep them, and
 * ThreadSanitizer reports it as a leak at exit) by the next worker to retire or start, by aclFinalize,
 * before fork() and at exit(). A retiree is joined, not detached, so that aclFinalize returns only once every
 * thread it started is gone: a detached thread is still listed in /proc/self/task for a while after
 * it has said it is done. aclFinalize joins the pooled workers that have not retired yet and the
 * retired ones. So 2000 streams created and destroyed leave no 2000 threads behind, while a loop
 * that destroys and creates streams reuses a pooled object with its worker still running. A reused
 * object whose worker has retired starts a new one.
 *
 * Workers block the asynchronous signals (SIGINT, SIGALRM, SIGTERM, ...: the application's threads,
 * e.g. Python's main thread, handle those) but not the synchronous fault signals (SIGSEGV, SIGBUS,
 * SIGFPE, SIGILL, SIGTRAP, SIGABRT, SIGSYS): a fault in a task reaches the process's handler (a
 * sanitizer's report, a crash handler) on the faulting thread; blocked, the kernel would kill the
 * process silently. aclFinalize stops and joins the workers of pooled (destroyed) streams, so that a
 * program that releases everything before aclFinalize ends with no thread of ours (valgrind then
 * sees no thread stack "possibly lost"). Workers of streams still live at aclFinalize keep running:
 * joining them could wait for work forever. No worker keeps the process alive: exit() ends them, and
 * once exit() has begun (rt_process_exiting) they stop running queued work and only mark it
 * complete, so that the process can wind down while the host's memory is being torn down.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rt_internal.h"
#include "../common/thread_signals.h"

/* How long an idle worker stays awake (yielding) before it sleeps. Launches often come in quick
 * succession, with the host spending some microseconds between them (a Python caller ~10-20 us); a
 * sleeping worker costs the next task a wake-up of 10-30 us. */
#define IDLE_AWAKE_NS 50000
/* How long the worker of a destroyed (pooled) stream idles before it retires. */
#define POOLED_IDLE_MS 100

_Atomic int64_t rt_tasks_in_flight;
_Atomic int rt_process_exiting;

/* The task running on this thread (worker threads only), for pyaclnn_stub_task_fail. */
static _Thread_local rt_stream *tls_task_stream;
static _Thread_local uint64_t tls_task_index;

static void note_exit(void) {
    atomic_store(&rt_process_exiting, 1);
    /* the last retiree has ended unjoined (ThreadSanitizer would call it a leak); in a forked child
     * the list names the parent's threads, and its lock may have been held at fork() */
    if (!rt_forked_child()) rt_workers_join_retired();
}
/* fork(): a child could never join the parent's ended retirees (ThreadSanitizer reports them as leaked
 * at the child's exit or _exit), so they are joined before the child is made. */
static void join_before_fork(void) { rt_workers_join_retired(); }
static void install_exit_hook(void) {
    atexit(note_exit);
    pthread_atfork(join_before_fork, NULL, NULL);
}

static void copy_rows(const rt_task *t) {
    char *dst = t->u.copy2d.dst;
    const char *src = t->u.copy2d.src;
    for (size_t row = 0; row < t->u.copy2d.height; row++)
        memmove(dst + row * t->u.copy2d.dpitch, src + row * t->u.copy2d.spitch, t->u.copy2d.width);
}

static void run_task(rt_stream *s, const rt_task *t, uint64_t index) {
    int skip = atomic_load(&s->abort) || atomic_load(&rt_process_exiting);
    switch (t->kind) {
    case RT_TASK_CALL:
        if (!skip) {
            tls_task_stream = s;
            tls_task_index = index;
            t->u.call.run(t->u.call.arg);
            tls_task_stream = NULL;
        }
        if (t->u.call.release) t->u.call.release(t->u.call.arg);
        break;
    case RT_TASK_COPY:
        if (!skip) memmove(t->u.copy.dst, t->u.copy.src, t->u.copy.count);
        break;
    case RT_TASK_COPY2D:
        if (!skip) copy_rows(t);
        break;
    case RT_TASK_SET:
        if (!skip) memset(t->u.set.dst, t->u.set.value, t->u.set.count);
        break;
    case RT_TASK_RECORD:   /* always reached, even when dropping work: nobody waits forever */
        rt_event_reach(s, index, t->u.mark.event, t->u.mark.id);
        break;
    case RT_TASK_WAIT:
        if (!skip) rt_event_wait(s, t);
        break;
    }
}

/* ---- retired workers ------------------------------------------------------------------------ */

/* Workers between their decision to retire and their entry on the retired list. */
static _Atomic int retiring;
/* Threads of retired workers, ended or about to end (they only return after entering the list). */
static pthread_mutex_t retired_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_t *retired;
static size_t n_retired, cap_retired;

/* Joins the threads on the retired list. A thread joins only threads that entered the list before
 * it looked, and none joins after entering the list itself, so no two wait for each other. */
static void join_retired_list(void) {
    pthread_mutex_lock(&retired_mu);
    pthread_t *list = retired;
    size_t n = n_retired;
    retired = NULL;
    n_retired = cap_retired = 0;
    pthread_mutex_unlock(&retired_mu);
    for (size_t i = 0; i < n; i++) pthread_join(list[i], NULL);
    free(list);
}

/* The calling worker retires: its thread goes on the list, or detaches when the list cannot grow
 * (out of memory: nobody could join it then, but it still ends). */
static void enter_retired_list(void) {
    pthread_t self = pthread_self();
    pthread_mutex_lock(&retired_mu);
    int listed = 0;
    if (n_retired == cap_retired) {
        size_t cap = cap_retired ? 2 * cap_retired : 8;
        pthread_t *grown = realloc(retired, cap * sizeof *grown);
        if (grown) {
            retired = grown;
            cap_retired = cap;
        }
    }
    if (n_retired < cap_retired) {
        retired[n_retired++] = self;
        listed = 1;
    }
    pthread_mutex_unlock(&retired_mu);
    if (!listed) pthread_detach(self);
}

void rt_workers_join_retired(void) {
    /* aclFinalize: let the retiring workers reach the list, then join them all, so that none of
     * our threads is left (valgrind, TSan, a count of /proc/self/task) */
    for (int i = 0; i < 100000 && atomic_load(&retiring) > 0; i++) sched_yield();
    join_retired_list();
}

/* ---- the worker ------------------------------------------------------------------------------ */

static void *worker_main(void *arg) {
    rt_stream *s = arg;
    int retire = 0;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        if (s->ring_count == 0) {
            /* Launches often come in quick succession: stay awake briefly before sleeping, which
             * saves the submitter a wake-up call and the next task a wake-up delay. */
            pthread_mutex_unlock(&s->mu);
            struct timespec start, now;
            clock_gettime(CLOCK_MONOTONIC, &start);
            for (;;) {
                if (atomic_load(&s->submitted) > atomic_load(&s->completed)) break;
                sched_yield();
                clock_gettime(CLOCK_MONOTONIC, &now);
                if ((now.tv_sec - start.tv_sec) * 1000000000LL + (now.tv_nsec - start.tv_nsec) >= IDLE_AWAKE_NS)
                    break;
            }
            pthread_mutex_lock(&s->mu);
        }
        while (s->ring_count == 0 && !s->worker_stop) {
            s->worker_idle = 1;
            if (s->state == RT_STREAM_FREE) {   /* pooled: retire unless reused soon */
                struct timespec deadline;
                rt_deadline_after_ms(&deadline, POOLED_IDLE_MS);
                int w = pthread_cond_timedwait(&s->work_cv, &s->mu, &deadline);
                if (w == ETIMEDOUT && s->ring_count == 0 && !s->worker_stop && s->state == RT_STREAM_FREE &&
                    !atomic_load(&rt_process_exiting)) {
                    retire = 1;
                    s->has_worker = 0;   /* from now on nobody joins us through the stream */
                    atomic_fetch_add(&retiring, 1);
                    s->worker_idle = 0;
                    break;
                }
            } else {   /* live: sleeps until work comes or the stream is destroyed (stream.c wakes it) */
                s->worker_untimed = 1;
                pthread_cond_wait(&s->work_cv, &s->mu);
                s->worker_untimed = 0;
            }
            s->worker_idle = 0;
        }
        if (s->ring_count == 0) break;   /* asked to stop (rt_worker_join) or retiring, nothing to run */
        rt_task task = s->ring[s->ring_head];
        s->ring_head = (s->ring_head + 1) & (s->ring_cap - 1);
        s->ring_count--;
        uint64_t index = atomic_load(&s->completed) + 1;
        pthread_mutex_unlock(&s->mu);

        run_task(s, &task, index);
        rt_mem_unpin(task.pins[0]);   /* a block freed meanwhile is released now */
        rt_mem_unpin(task.pins[1]);

        pthread_mutex_lock(&s->mu);
        atomic_store(&s->completed, index);
        atomic_fetch_sub(&rt_tasks_in_flight, 1);
        if (s->host_waiters) pthread_cond_broadcast(&s->done_cv);
    }
    pthread_mutex_unlock(&s->mu);
    if (retire) {   /* s is not touched any more: a new worker may own it already */
        join_retired_list();   /* the earlier retirees: at most one ended thread waits for a join */
        enter_retired_list();
        atomic_fetch_sub(&retiring, 1);
    }
    return NULL;
}

int rt_worker_start(rt_stream *s) {
    static pthread_once_t exit_hook_once = PTHREAD_ONCE_INIT;
    pthread_once(&exit_hook_once, install_exit_hook);
    rt_fork_note_start();
    join_retired_list();   /* a new thread for an old one: the retirees' stacks go first */
    s->worker_stop = 0;
    sigset_t mask, old;
    stub_worker_sigmask(&mask);   /* asynchronous signals blocked, faults open (thread_signals.h) */
    pthread_sigmask(SIG_SETMASK, &mask, &old);   /* the new thread inherits it */
    int rc = pthread_create(&s->worker, NULL, worker_main, s);   /* joinable: see rt_worker_join */
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    s->has_worker = rc == 0;
    return rc == 0 ? 0 : -1;
}

void rt_worker_join(rt_stream *s) {
    pthread_mutex_lock(&s->mu);
    /* From its own worker (aclFinalize inside a task) the thread cannot join itself: leave it. */
    if (!s->has_worker || pthread_equal(s->worker, pthread_self())) {
        pthread_mutex_unlock(&s->mu);
        return;
    }
    pthread_t tid = s->worker;
    s->worker_stop = 1;
    pthread_cond_signal(&s->work_cv);
    pthread_mutex_unlock(&s->mu);
    pthread_join(tid, NULL);   /* prompt: the stream is idle, so the worker only has to wake up */
    pthread_mutex_lock(&s->mu);
    s->has_worker = 0;
    s->worker_stop = 0;
    pthread_mutex_unlock(&s->mu);
}

PYACLNN_STUB_API void pyaclnn_stub_task_fail(int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    rt_stream *s = tls_task_stream;
    if (!s) {   /* not inside a stream task: report to the calling thread like any failure */
        pyaclnn_stub_vreport(code, "pyaclnn_stub_task_fail", fmt, ap);
        va_end(ap);
        return;
    }
    char msg[sizeof s->fail_msg];
    if (fmt) vsnprintf(msg, sizeof msg, fmt, ap);
    else msg[0] = '\0';
    va_end(ap);
    pthread_mutex_lock(&s->mu);
    if (atomic_load(&s->fail_code) == 0) {
        s->fail_task = tls_task_index;
        s->fail_more = 0;
        memcpy(s->fail_msg, msg, sizeof msg);
        atomic_store(&s->fail_code, code ? code : ACL_ERROR_RT_INTERNAL_ERROR);
    } else {
        s->fail_more++;
    }
    pthread_mutex_unlock(&s->mu);
}
