/*
 * Events. aclrtRecordEvent enqueues a marker on the stream; the event completes when the stream's
 * worker reaches it, i.e. when all work queued before the record has run. Timed events (the
 * default of aclrtCreateEvent, or ACL_EVENT_TIME_LINE) note the time the marker was reached.
 *
 * Record ids keep growing over the event's whole life (and over reuses of its pooled object):
 * record_id is the latest record, done_id the highest record reached. A never-recorded (or reset)
 * event counts as complete.
 *
 * aclrtStreamWaitEvent waits for the record that was latest when the wait was enqueued, and for no
 * other: the wait task captures that record as (stream, task index) under the event's lock, and is
 * released when that very task has been reached, whatever is recorded later (a re-record on an idle
 * stream must not release an earlier wait). CANN does the same: Event::Record
 * (hicann/runtime src/runtime/core/src/event/event.cc) gives every record of a default or
 * new-mode event a fresh hardware event id (AllocEventIdResource, RefreshEventId), and Event::Wait
 * reads the current id under recordStateMutex_ (WaitSendCheck) and binds the wait task to it
 * (EventWaitTaskInit(tsk, this, eventId, timeout)); CUDA documents it for cudaStreamWaitEvent ("the
 * most recent call to cudaEventRecord"). The hazard checker joins the clock of the same record (the
 * wait is enqueued under the event's lock, as records are), so it and the runtime agree.
 *
 * Waiting on a never-recorded (or reset) event is a no-op, as in CUDA and for CANN's new-mode events
 * ("wait first, return suc" in WaitSendCheck). aclrtResetEvent takes effect when called (not in
 * stream order); waits enqueued before it keep the record they captured. Record, reset and wait
 * refuse an event destroyed by another thread after the handle check (107000), so a late call never
 * publishes a record on a pooled object; a wait already queued on a destroyed event still ends when
 * its record is reached (records are reached even on a force-destroyed stream).
 *
 * Status codes follow the real runtime: elapsed time/timestamp of an event that was never recorded
 * -> ACL_ERROR_RT_INTERNAL_ERROR (507000, "event recorder null"); of an event without a timestamp
 * (untimed, or not completed yet) -> ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID (107006); external and IPC
 * events have no timestamps at all -> ACL_ERROR_RT_FEATURE_NOT_SUPPORT (207000).
 */
#include <errno.h>
#include <stdlib.h>

#include "rt_internal.h"

#define EVENT_FLAG_MASK 0x3Fu      /* SYNC|CAPTURE_STREAM_PROGRESS|0x4|TIME_LINE|DEVICE_USE_ONLY|EXTERNAL */
#define EVENT_EX_FLAG_MASK 0x4Fu   /* SYNC|CAPTURE_STREAM_PROGRESS|0x4|TIME_LINE|IPC */

static rt_pool event_pool = RT_POOL_INIT(rt_event, 256);
static _Atomic int64_t live_events;

int64_t rt_event_count(void) { return atomic_load(&live_events); }

/* ---- worker hooks ---------------------------------------------------------------------------- */

void rt_event_reach(rt_stream *s, uint64_t index, rt_event *ev, uint64_t id) {
    atomic_store(&s->records_reached, index);   /* before the broadcast: no waiter can miss it */
    pthread_mutex_lock(&ev->mu);
    if (id > ev->done_id) {
        ev->done_id = id;
        ev->stamp_ns = rt_now_ns();
    }
    pthread_cond_broadcast(&ev->cv);
    pthread_mutex_unlock(&ev->mu);
}

void rt_event_wait(rt_stream *s, const rt_task *t) {
    rt_event *ev = t->u.mark.event;
    rt_stream *rs = t->u.mark.stream;   /* the captured record: task `index` of rs */
    uint64_t index = t->u.mark.index;
    if (atomic_load(&rs->records_reached) >= index) return;
    atomic_store(&s->waiting_on, ev);
    pthread_mutex_lock(&ev->mu);
    /* rt_event_reach broadcasts ev->cv after the record of this event on rs is reached */
    while (atomic_load(&rs->records_reached) < index && !atomic_load(&s->abort) &&
           !atomic_load(&rt_process_exiting))
        pthread_cond_wait(&ev->cv, &ev->mu);
    pthread_mutex_unlock(&ev->mu);
    atomic_store(&s->waiting_on, NULL);
}

void rt_event_wake(rt_event *ev) {
    pthread_mutex_lock(&ev->mu);
    pthread_cond_broadcast(&ev->cv);
    pthread_mutex_unlock(&ev->mu);
}

/* ---- creation -------------------------------------------------------------------------------- */

static aclError create_event(const char *func, aclrtEvent *event, uint32_t flags) {
    rt_context *ctx;
    aclError rc = rt_require_context(func, &ctx);
    if (rc) return rc;
    rt_event *ev = rt_pool_take(&event_pool);
    if (!ev) {
        ev = calloc(1, sizeof *ev);
        if (!ev) return RT_REPORT(ACL_ERROR_RT_NO_EVENT_RESOURCE, func, "out of host memory for an event");
        pthread_mutex_init(&ev->mu, NULL);
        rt_cond_init_monotonic(&ev->cv);
    }
    pthread_mutex_lock(&ev->mu);
    ev->flags = flags;
    ev->timed = (flags & ACL_EVENT_TIME_LINE) != 0;
    ev->record_id = 0;   /* done_id and next_id keep growing: late markers of a past life are harmless */
    ev->cap_model = NULL;
    ev->stream = NULL;
    ev->ctx = ctx;
    ev->live = 1;
    atomic_fetch_add(&ev->generation, 1);
    pthread_mutex_unlock(&ev->mu);
    if (stub_registry_add(&rt_handles, ev, RT_KIND_EVENT) != 0) {
        ev->live = 0;
        rt_pool_put(&event_pool, ev);
        return RT_REPORT(ACL_ERROR_RT_NO_EVENT_RESOURCE, func, "out of host memory for an event");
    }
    if (rt_hz_mode) rt_hz_event_reset(ev);   /* a pooled object starts unrecorded */
    atomic_fetch_add(&live_events, 1);
    *event = ev;
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtCreateEvent(aclrtEvent *event) {
    if (!event) return RT_REPORT(ACL_ERROR_INVALID_PARAM, "aclrtCreateEvent", "event is NULL");
    return create_event("aclrtCreateEvent", event, ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE);
}

/* Flags that may not be combined with any other. */
static int combined_with_others(uint32_t flag, uint32_t solo) { return (flag & solo) && (flag & ~solo); }

ACL_FUNC_VISIBILITY aclError aclrtCreateEventWithFlag(aclrtEvent *event, uint32_t flag) {
    static const char func[] = "aclrtCreateEventWithFlag";
    if (!event) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "event is NULL");
    if ((flag & EVENT_FLAG_MASK) == 0 || flag > EVENT_FLAG_MASK)
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func,
                         "flag %#x is invalid; expected an OR of 0x1, 0x2, 0x4 and ACL_EVENT_TIME_LINE "
                         "(0x8), or 0x10 or ACL_EVENT_EXTERNAL (0x20) alone",
                         flag);
    if (combined_with_others(flag, 0x10) || combined_with_others(flag, ACL_EVENT_EXTERNAL))
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func,
                         "flag %#x is invalid: 0x10 and ACL_EVENT_EXTERNAL (0x20) cannot be combined "
                         "with other flags",
                         flag);
    return create_event(func, event, flag);
}

ACL_FUNC_VISIBILITY aclError aclrtCreateEventExWithFlag(aclrtEvent *event, uint32_t flag) {
    static const char func[] = "aclrtCreateEventExWithFlag";
    if (!event) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "event is NULL");
    if (combined_with_others(flag, 0x10) || combined_with_others(flag, ACL_EVENT_EXTERNAL) ||
        combined_with_others(flag, ACL_EVENT_IPC))
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func,
                         "flag %#x is invalid: 0x10, ACL_EVENT_EXTERNAL and ACL_EVENT_IPC cannot be "
                         "combined with other flags",
                         flag);
    if (flag == ACL_EVENT_IPC)
        return RT_REPORT(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, func, "IPC events are not emulated");
    if ((flag & EVENT_EX_FLAG_MASK) == 0 || flag > EVENT_EX_FLAG_MASK)
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func,
                         "flag %#x is invalid; expected an OR of 0x1, 0x2, 0x4 and ACL_EVENT_TIME_LINE "
                         "(0x8), or ACL_EVENT_IPC (0x40) alone",
                         flag);
    return create_event(func, event, flag);
}

/* Reports unless `event` is a live event. */
static aclError check_event(const char *func, const char *name, aclrtEvent event) {
    aclError rc = rt_fork_check(func);
    if (rc) return rc;
    if (!event) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "%s is NULL", name);
    if (stub_registry_kind(&rt_handles, event) != RT_KIND_EVENT)
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func,
                         "%s %p is not a live event (never created, or already destroyed)", name, event);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtDestroyEvent(aclrtEvent event) {
    static const char func[] = "aclrtDestroyEvent";
    aclError rc = check_event(func, "event", event);
    if (rc) return rc;
    rt_event *ev = event;
    if (!stub_registry_remove(&rt_handles, ev, RT_KIND_EVENT))
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func, "event %p was destroyed concurrently", event);
    pthread_mutex_lock(&ev->mu);
    ev->live = 0;
    ev->record_id = 0;
    ev->stream = NULL;
    pthread_mutex_unlock(&ev->mu);
    atomic_fetch_sub(&live_events, 1);
    rt_pool_put(&event_pool, ev);
    return ACL_SUCCESS;
}

/* ---- record, reset, wait --------------------------------------------------------------------- */

ACL_FUNC_VISIBILITY aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream) {
    static const char func[] = "aclrtRecordEvent";
    aclError rc = check_event(func, "event", event);
    if (rc) return rc;
    rt_stream *s;
    if ((rc = rt_stream_resolve(func, stream, &s))) return rc;
    rt_event *ev = event;
    /* The record is queued before it is published (both under ev->mu): a concurrent
     * aclrtStreamWaitEvent sees the previous record or this one, never one that failed to queue
     * (its stream being destroyed), which nothing would ever reach. Lock order: ev->mu, then s->mu;
     * the worker takes ev->mu without holding s->mu. */
    pthread_mutex_lock(&ev->mu);
    if (!ev->live) {
        pthread_mutex_unlock(&ev->mu);
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func, "event %p was destroyed concurrently", event);
    }
    uint64_t id = ++ev->next_id;
    rt_task t = {.kind = RT_TASK_RECORD, .u.mark = {ev, id, NULL, 0}};
    uint64_t index;
    rc = rt_stream_enqueue(func, s, &t, &index);
    if (rc == ACL_SUCCESS && index == 0) {   /* captured (model.c): waits on it join the capture */
        rt_model *m = atomic_load(&s->capture);
        ev->cap_model = m;
        ev->cap_serial = m ? rt_model_serial(m) : 0;
    } else if (rc == ACL_SUCCESS) {
        ev->cap_model = NULL;
        ev->record_id = id;
        ev->stream = s;
        ev->stream_generation = atomic_load(&s->generation);
        ev->stream_index = index;
    }
    pthread_mutex_unlock(&ev->mu);
    return rc;
}

ACL_FUNC_VISIBILITY aclError aclrtResetEvent(aclrtEvent event, aclrtStream stream) {
    static const char func[] = "aclrtResetEvent";
    aclError rc = check_event(func, "event", event);
    if (rc) return rc;
    rt_stream *s;
    if ((rc = rt_stream_resolve(func, stream, &s))) return rc;
    rt_event *ev = event;
    pthread_mutex_lock(&ev->mu);
    int live = ev->live;
    if (live) {
        ev->record_id = 0;
        ev->cap_model = NULL;
        ev->stream = NULL;
        if (rt_hz_mode) rt_hz_event_reset(ev);   /* under ev->mu: no record slips in between */
    }
    pthread_mutex_unlock(&ev->mu);
    if (!live) return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func, "event %p was destroyed concurrently", event);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event) {
    static const char func[] = "aclrtStreamWaitEvent";
    aclError rc = check_event(func, "event", event);
    if (rc) return rc;
    rt_stream *s;
    if ((rc = rt_stream_resolve(func, stream, &s))) return rc;
    rt_event *ev = event;
    /* Captures the latest record and enqueues the wait in one step under ev->mu (as records are
     * published), so the wait, and the hazard clock it joins (rt_hz_enqueue), belong to that record. */
    pthread_mutex_lock(&ev->mu);
    if (!ev->live) {
        pthread_mutex_unlock(&ev->mu);
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func, "event %p was destroyed concurrently", event);
    }
    rc = ACL_SUCCESS;
    int joined = ev->cap_model ? rt_model_join(s, ev->cap_model, ev->cap_serial) : 0;
    if (joined < 0) {
        pthread_mutex_unlock(&ev->mu);
        return RT_REPORT(ACL_ERROR_STREAM_CAPTURE_CONFLICT, func,
                         "stream %p captures into another model than the one event %p was recorded into", stream,
                         event);
    }
    if (joined) {   /* ordering inside the capture: a marker the replay skips (model.c) */
        rt_task t = {.kind = RT_TASK_WAIT, .u.mark = {NULL, 0, NULL, 0}};
        rc = rt_stream_enqueue(func, s, &t, NULL);
    } else if (ev->record_id != 0) {   /* never recorded (or reset): nothing to wait for */
        rt_task t = {.kind = RT_TASK_WAIT, .u.mark = {ev, ev->record_id, ev->stream, ev->stream_index}};
        rc = rt_stream_enqueue(func, s, &t, NULL);
    }
    pthread_mutex_unlock(&ev->mu);
    return rc;
}

/* ---- queries and host synchronisation -------------------------------------------------------- */

static int is_complete_locked(const rt_event *ev) { return ev->record_id == 0 || ev->done_id >= ev->record_id; }

ACL_FUNC_VISIBILITY aclError aclrtQueryEvent(aclrtEvent event, aclrtEventStatus *status) {
    static const char func[] = "aclrtQueryEvent";
    aclError rc = check_event(func, "event", event);
    if (rc) return rc;
    if (!status) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "status is NULL");
    rt_event *ev = event;
    rt_hz_clock done = {NULL, 0};
    pthread_mutex_lock(&ev->mu);
    if (rt_hz_mode) rt_hz_event_snapshot(ev, &done);   /* the record the answer is about */
    *status = is_complete_locked(ev) ? ACL_EVENT_STATUS_COMPLETE : ACL_EVENT_STATUS_NOT_READY;
    pthread_mutex_unlock(&ev->mu);
    if (rt_hz_mode) {   /* "complete" is as good as a synchronisation (docs/hazards.md) */
        if (*status == ACL_EVENT_STATUS_COMPLETE) rt_hz_host_join(&done);
        free(done.c);
    }
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus *status) {
    static const char func[] = "aclrtQueryEventStatus";
    aclError rc = check_event(func, "event", event);
    if (rc) return rc;
    if (!status) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "status is NULL");
    rt_event *ev = event;
    rt_hz_clock done = {NULL, 0};
    pthread_mutex_lock(&ev->mu);
    if (rt_hz_mode) rt_hz_event_snapshot(ev, &done);   /* the record the answer is about */
    *status = is_complete_locked(ev) ? ACL_EVENT_RECORDED_STATUS_COMPLETE : ACL_EVENT_RECORDED_STATUS_NOT_READY;
    pthread_mutex_unlock(&ev->mu);
    if (rt_hz_mode) {
        if (*status == ACL_EVENT_RECORDED_STATUS_COMPLETE) rt_hz_host_join(&done);
        free(done.c);
    }
    return ACL_SUCCESS;
}

static aclError synchronize_event(const char *func, aclrtEvent event, int32_t timeout) {
    aclError rc = check_event(func, "event", event);
    if (rc) return rc;
    rt_event *ev = event;
    struct timespec deadline;
    if (timeout >= 0) rt_deadline_after_ms(&deadline, timeout);
    rt_hz_clock done = {NULL, 0};
    pthread_mutex_lock(&ev->mu);
    if (rt_hz_mode) rt_hz_event_snapshot(ev, &done);   /* the record the answer is about */
    uint64_t target = ev->record_id;
    rt_stream *s = target ? ev->stream : NULL;
    uint64_t generation = ev->stream_generation, index = ev->stream_index;
    /* The record latest at the call, as for a stream wait: a record made meanwhile elsewhere (an
     * idle stream reaches it at once) does not end this wait. */
    while (s && atomic_load(&s->records_reached) < index) {
        int w = timeout >= 0 ? pthread_cond_timedwait(&ev->cv, &ev->mu, &deadline)
                             : pthread_cond_wait(&ev->cv, &ev->mu);
        if (w == ETIMEDOUT && atomic_load(&s->records_reached) < index) {
            pthread_mutex_unlock(&ev->mu);
            free(done.c);
            return RT_REPORT(ACL_ERROR_RT_EVENT_SYNC_TIMEOUT, func,
                             "event %p was not reached within %d ms", event, timeout);
        }
    }
    pthread_mutex_unlock(&ev->mu);
    if (rt_hz_mode) rt_hz_host_join(&done);
    if (target != 0 && s && atomic_load(&s->generation) == generation) {
        return rt_stream_take_failure(func, s, index);
    }
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtSynchronizeEvent(aclrtEvent event) {
    return synchronize_event("aclrtSynchronizeEvent", event, -1);
}

ACL_FUNC_VISIBILITY aclError aclrtSynchronizeEventWithTimeout(aclrtEvent event, int32_t timeout) {
    static const char func[] = "aclrtSynchronizeEventWithTimeout";
    if (timeout < -1)
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func,
                         "timeout %d ms is invalid; expected -1 (wait forever) or a value >= 0", timeout);
    return synchronize_event(func, event, timeout);
}

/* Copies what the timing queries need; reports and returns non-zero when there is no timestamp. */
static aclError read_timestamp(const char *func, const char *name, rt_event *ev, uint64_t *stamp_ns) {
    pthread_mutex_lock(&ev->mu);
    uint32_t flags = ev->flags;
    int timed = ev->timed, recorded = ev->record_id != 0, complete = is_complete_locked(ev);
    *stamp_ns = ev->stamp_ns;
    pthread_mutex_unlock(&ev->mu);
    if (flags == ACL_EVENT_EXTERNAL || flags == ACL_EVENT_IPC)
        return RT_REPORT(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, func,
                         "%s %p is an external or IPC event, which has no timestamp", name, (void *)ev);
    if (!recorded)
        return RT_REPORT(ACL_ERROR_RT_INTERNAL_ERROR, func, "%s %p has not been recorded", name, (void *)ev);
    if (!timed)
        return RT_REPORT(ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID, func,
                         "%s %p was created without ACL_EVENT_TIME_LINE, so it has no timestamp", name,
                         (void *)ev);
    if (!complete)
        return RT_REPORT(ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID, func,
                         "%s %p has not completed yet (synchronize it before reading its time)", name,
                         (void *)ev);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtEventElapsedTime(float *ms, aclrtEvent startEvent, aclrtEvent endEvent) {
    static const char func[] = "aclrtEventElapsedTime";
    if (!ms) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "ms is NULL");
    aclError rc = check_event(func, "startEvent", startEvent);
    if (rc || (rc = check_event(func, "endEvent", endEvent))) return rc;
    uint64_t start, end;
    if ((rc = read_timestamp(func, "startEvent", startEvent, &start))) return rc;
    if ((rc = read_timestamp(func, "endEvent", endEvent, &end))) return rc;
    *ms = (float)(((double)end - (double)start) / 1e6);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtEventGetTimestamp(aclrtEvent event, uint64_t *timestamp) {
    static const char func[] = "aclrtEventGetTimestamp";
    if (!timestamp) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "timestamp is NULL");
    aclError rc = check_event(func, "event", event);
    if (rc) return rc;
    uint64_t stamp;
    if ((rc = read_timestamp(func, "event", event, &stamp))) return rc;
    *timestamp = stamp / 1000;   /* microseconds, like the device counter after conversion */
    return ACL_SUCCESS;
}
