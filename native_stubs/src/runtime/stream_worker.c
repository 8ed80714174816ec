/*
 * The worker thread of a stream: takes tasks in order and runs them, with no lock held while a
 * task runs. Each stream object keeps its worker for life (pooled streams keep theirs idle), so
 * creating a stream from the pool costs no thread creation.
 *
 * Workers are detached and block every signal. Once exit() has begun (rt_process_exiting) they
 * stop running queued work: they only mark it complete, so that the process can wind down while
 * the host's memory is being torn down.
 */
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"

#define IDLE_YIELDS 20   /* yields an idle worker makes before it sleeps */

_Atomic int64_t rt_tasks_in_flight;
_Atomic int rt_process_exiting;

/* The task running on this thread (worker threads only), for pyaclnn_stub_task_fail. */
static _Thread_local rt_stream *tls_task_stream;
static _Thread_local uint64_t tls_task_index;

static void note_exit(void) { atomic_store(&rt_process_exiting, 1); }
static void install_exit_hook(void) { atexit(note_exit); }

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
        rt_event_reach(t->u.mark.event, t->u.mark.id);
        break;
    case RT_TASK_WAIT:
        if (!skip) rt_event_wait(s, t->u.mark.event, t->u.mark.id);
        break;
    }
}

static void *worker_main(void *arg) {
    rt_stream *s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        if (s->ring_count == 0) {
            /* Launches often come in quick succession: stay awake briefly before sleeping, which
             * saves the submitter a wake-up call and the next task a wake-up delay. */
            pthread_mutex_unlock(&s->mu);
            for (int spin = 0; spin < IDLE_YIELDS; spin++) {
                if (atomic_load(&s->submitted) > atomic_load(&s->completed)) break;
                sched_yield();
            }
            pthread_mutex_lock(&s->mu);
        }
        while (s->ring_count == 0) {
            s->worker_idle = 1;
            pthread_cond_wait(&s->work_cv, &s->mu);
            s->worker_idle = 0;
        }
        rt_task task = s->ring[s->ring_head];
        s->ring_head = (s->ring_head + 1) & (s->ring_cap - 1);
        s->ring_count--;
        uint64_t index = atomic_load(&s->completed) + 1;
        pthread_mutex_unlock(&s->mu);

        run_task(s, &task, index);

        pthread_mutex_lock(&s->mu);
        atomic_store(&s->completed, index);
        atomic_fetch_sub(&rt_tasks_in_flight, 1);
        if (s->host_waiters) pthread_cond_broadcast(&s->done_cv);
    }
    return NULL;
}

int rt_worker_start(rt_stream *s) {
    static pthread_once_t exit_hook_once = PTHREAD_ONCE_INIT;
    pthread_once(&exit_hook_once, install_exit_hook);
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0) return -1;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);   /* the new thread inherits "everything blocked" */
    pthread_t tid;
    int rc = pthread_create(&tid, &attr, worker_main, s);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    return rc == 0 ? 0 : -1;
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
