/*
 * aclrtQueryEventWaitStatus (acl_rt.h): whether every stream wait queued on the event
 * (aclrtStreamWaitEvent) has been passed -- what torch_npu asks before it destroys an event another
 * stream may still wait on. COMPLETE when no stream has such a wait pending (queued, or its worker blocked
 * in it), NOT_READY otherwise; an event nobody waits on is COMPLETE, as in hicann/runtime.
 *
 * Read from the streams themselves (their queues and the event a worker is blocked on), so it needs
 * nothing from the event code. External events -> ACL_ERROR_RT_FEATURE_NOT_SUPPORT, as on the NPU (IPC
 * events cannot be created here). The vendor also refuses events of aclrtCreateEventExWithFlag ("new
 * mode"); the emulator's events do not record which call made them, so it answers for those too.
 */
#include "../compat.h"
#include "../../runtime/rt_internal.h"

typedef struct {
    rt_event *ev;
    int pending;
} scan;

/* Called for each live stream with the registry locked (lock order: registry, then s->mu). */
static void look(const void *p, int kind, void *arg) {
    scan *sc = arg;
    rt_stream *s = (rt_stream *)p;
    if (sc->pending) return;
    if (atomic_load(&s->waiting_on) == sc->ev) {
        sc->pending = 1;
        return;
    }
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < s->ring_count && !sc->pending; i++) {
        const rt_task *t = &s->ring[(s->ring_head + i) & (s->ring_cap - 1)];
        if (t->kind == RT_TASK_WAIT && t->u.mark.event == sc->ev) sc->pending = 1;
    }
    pthread_mutex_unlock(&s->mu);
}

ACL_FUNC_VISIBILITY aclError aclrtQueryEventWaitStatus(aclrtEvent event, aclrtEventWaitStatus *status) {
    static const char func[] = "aclrtQueryEventWaitStatus";
    if (!event) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "event is NULL");
    if (!status) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "status is NULL");
    aclError rc = rt_fork_check(func);
    if (rc) return rc;
    if (stub_registry_kind(&rt_handles, event) != RT_KIND_EVENT)
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func,
                         "event %p is not a live event (never created, or already destroyed)", event);
    rt_event *ev = event;
    pthread_mutex_lock(&ev->mu);
    uint32_t flags = ev->flags;
    pthread_mutex_unlock(&ev->mu);
    if (flags == ACL_EVENT_EXTERNAL)
        return pyaclnn_stub_compat_unsupported(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, func,
                                               "wait-status queries of external events (as on the NPU)");
    scan sc = {ev, 0};
    stub_registry_foreach(&rt_handles, RT_KIND_STREAM, look, &sc);
    *status = sc.pending ? ACL_EVENT_WAIT_STATUS_NOT_READY : ACL_EVENT_WAIT_STATUS_COMPLETE;
    return ACL_SUCCESS;
}
