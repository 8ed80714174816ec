/*
 * Model running instances captured from streams (ACL Graph: the aclmdlRI* family of acl_rt.h).
 *
 * What a capture means here, after the vendor's runtime (hicann/runtime src/runtime/feature/aclgraph and
 * api/impl/api_error.cc):
 *  - aclmdlRICaptureBegin(stream, mode) makes `stream` capture into a new model. Every task queued on it
 *    from then on (operator launches, aclrtMemcpyAsync / aclrtMemsetAsync, event records and waits, host
 *    functions, value writes/waits: everything that goes through rt_stream_enqueue) is recorded into the
 *    model instead of being run. A stream that waits on an event whose latest record was captured joins
 *    the capture (the vendor's cross-stream capture); its tasks are recorded into the same model.
 *  - aclmdlRICaptureEnd(stream, &model) ends the capture on the stream it began on (else
 *    ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED), and on the thread that began it unless the mode is RELAXED
 *    (ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD); every stream that joined leaves the capture.
 *  - aclmdlRIExecuteAsync(model, stream) queues the recorded tasks again on `stream`, in capture order:
 *    each replay runs them once more on whatever the device memory holds by then, at the same addresses,
 *    as a graph does. Capture order is one total order that keeps every captured stream's order and every
 *    captured record -> wait edge, so one stream replays a multi-stream capture faithfully (without its
 *    concurrency). Captured event records and waits on captured records are ordering only: a replay skips
 *    them (their events are not recorded by a replay).
 *  - A captured operator launch keeps its launch block (the executor's copy) and the pins on the memory it
 *    uses until the model is destroyed: the aclnn executor is gone after phase 2, the model owns what a
 *    replay needs. aclmdlRIDestroy releases them once the replays queued before it have run (a reference
 *    per queued replay).
 *  - Illegal during a capture, with the vendor's codes: synchronising, querying or destroying a capturing
 *    stream, synchronising the device while a stream captures, replaying a model on a capturing stream
 *    (ACL_ERROR_RT_STREAM_CAPTURED, 107027); an asynchronous copy from or to pageable host memory on a
 *    capturing stream (107000); synchronous aclrtMemcpy / aclrtMemcpy2d / aclrtMemset when the thread's
 *    capture mode forbids them (ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT, 107030: the vendor's
 *    Context::IsCaptureModeSupport over the mode of the active captures, the mode of the thread that began
 *    one and the mode aclmdlRICaptureThreadExchangeMode set). The vendor's source does not check
 *    aclrtMalloc against the capture mode (the caching allocator allocates during captures); neither do we.
 *  - Not emulated (ACL_ERROR_RT_FEATURE_NOT_SUPPORT, 207000, with a message): task groups and their
 *    update, capture into an existing model, conditional tasks.
 *  - The hazard checker does not see captured tasks (they do not run) and sees replayed ones as tasks
 *    touching nothing it knows (the access lists of a launch are not kept).
 *
 * Thread safety: a model has its own lock (taken after a stream's); a capturing stream's `capture`
 * pointer is written under the stream's lock; models are found through the handle registry and a global
 * lock (models_mu) under which a model is never freed while looked at.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"

enum { MODEL_CAPTURING = 1, MODEL_INVALIDATED = 2, MODEL_READY = 3 };
#define MODE_NONE 3   /* no capture / a thread that began none (the vendor's RT_STREAM_CAPTURE_MODE_MAX) */

struct rt_model {
    pthread_mutex_t mu;
    _Atomic int64_t refs;       /* the handle's (until aclmdlRIDestroy) + one per queued replay */
    uint64_t serial;            /* unique over the process: stale pointers never match          */
    uint32_t id;
    int state;                  /* MODEL_* (under mu)                                           */
    int mode;                   /* aclmdlRICaptureMode of the capture                           */
    rt_stream *origin;          /* the stream the capture began on (while capturing)            */
    rt_context *ctx;
    pthread_t thread;           /* the thread that began the capture                            */
    rt_task *tasks;             /* recorded tasks, capture order                                */
    size_t n, cap;
    size_t n_calls, n_copies, n_sets, n_records, n_waits;
};

static pthread_mutex_t models_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t next_serial;
static _Atomic uint32_t next_id;
/* Active captures per mode (under models_mu): the "context capture mode" the vendor checks. */
static int active_by_mode[3];
static _Thread_local int tls_began_mode = MODE_NONE;   /* the vendor's thread capture mode   */
static _Thread_local int tls_exchange_mode = ACL_MODEL_RI_CAPTURE_MODE_GLOBAL;   /* ... exchange mode */

static const char *mode_name(int mode) {
    switch (mode) {
    case ACL_MODEL_RI_CAPTURE_MODE_GLOBAL: return "ACL_MODEL_RI_CAPTURE_MODE_GLOBAL";
    case ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL: return "ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL";
    case ACL_MODEL_RI_CAPTURE_MODE_RELAXED: return "ACL_MODEL_RI_CAPTURE_MODE_RELAXED";
    default: return "none";
    }
}

/* ---- capture-mode checks --------------------------------------------------------------------- */

aclError rt_capture_mode_check(const char *func, const char *what) {
    pthread_mutex_lock(&models_mu);
    int ctx_mode = active_by_mode[ACL_MODEL_RI_CAPTURE_MODE_GLOBAL]         ? ACL_MODEL_RI_CAPTURE_MODE_GLOBAL
                   : active_by_mode[ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL] ? ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL
                   : active_by_mode[ACL_MODEL_RI_CAPTURE_MODE_RELAXED]      ? ACL_MODEL_RI_CAPTURE_MODE_RELAXED
                                                                            : MODE_NONE;
    pthread_mutex_unlock(&models_mu);
    if (ctx_mode == MODE_NONE) return ACL_SUCCESS;
    int thread_mode = tls_began_mode, exchange = tls_exchange_mode;
    int allowed = 1;
    if (exchange == ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
        allowed = !(ctx_mode == ACL_MODEL_RI_CAPTURE_MODE_GLOBAL || thread_mode == ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL);
    else if (exchange == ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL)
        allowed = !(thread_mode == ACL_MODEL_RI_CAPTURE_MODE_GLOBAL || thread_mode == ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL);
    if (allowed) return ACL_SUCCESS;
    return RT_REPORT(ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT, func,
                     "%s: operation not permitted when a stream is capturing and the specified capture mode is not "
                     "relaxed (the mode set using aclmdlRICaptureBegin is %s, the capture mode of the current thread "
                     "is %s; aclmdlRICaptureThreadExchangeMode with ACL_MODEL_RI_CAPTURE_MODE_RELAXED allows it)",
                     what, mode_name(ctx_mode), mode_name(exchange));
}

aclError rt_capture_refuse_stream(const char *func, rt_stream *s, const char *what) {
    if (atomic_load(&s->capture) == NULL) return ACL_SUCCESS;
    return RT_REPORT(ACL_ERROR_RT_STREAM_CAPTURED, func,
                     "%s: stream %p during the capture stage is not supported (stream is captured; end the capture "
                     "with aclmdlRICaptureEnd first)",
                     what, (void *)s);
}

static void model_unref(void *arg);

/* ---- recording ------------------------------------------------------------------------------- */

uint64_t rt_model_serial(const rt_model *m) { return m->serial; }

void rt_model_origin_destroyed(rt_model *m) {
    pthread_mutex_lock(&models_mu);
    if (stub_registry_kind(&rt_handles, m) == RT_KIND_MODEL) {
        pthread_mutex_lock(&m->mu);
        if (m->state == MODEL_CAPTURING) {   /* nobody can end it now: it stops counting as active */
            m->state = MODEL_INVALIDATED;
            active_by_mode[m->mode]--;
        }
        pthread_mutex_unlock(&m->mu);
    }
    pthread_mutex_unlock(&models_mu);
}

int rt_model_join(rt_stream *s, rt_model *m, uint64_t serial) {
    rt_model *mm = NULL;
    pthread_mutex_lock(&models_mu);
    if (m && stub_registry_kind(&rt_handles, m) == RT_KIND_MODEL && m->serial == serial) {
        mm = m;
        atomic_fetch_add(&mm->refs, 1);
    }
    pthread_mutex_unlock(&models_mu);
    if (!mm) return 0;
    int result;
    pthread_mutex_lock(&s->mu);
    pthread_mutex_lock(&mm->mu);
    rt_model *cur = atomic_load(&s->capture);
    if (mm->state != MODEL_CAPTURING) {
        result = 0;
    } else if (cur == NULL) {
        atomic_store(&s->capture, mm);   /* the stream joins the capture (cross-stream capture) */
        s->capture_origin = 0;
        result = 1;
    } else {
        result = cur == mm ? 1 : -1;
    }
    pthread_mutex_unlock(&mm->mu);
    pthread_mutex_unlock(&s->mu);
    model_unref(mm);
    return result;
}

aclError rt_model_record(const char *func, rt_model *m, const rt_task *t) {
    pthread_mutex_lock(&m->mu);
    if (m->state != MODEL_CAPTURING) {   /* invalidated: the task is dropped, the capture will fail */
        pthread_mutex_unlock(&m->mu);
        return RT_REPORT(ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED, func,
                         "an error has invalidated the stream capture sequence of model %u", m->id);
    }
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 32;
        rt_task *grown = realloc(m->tasks, cap * sizeof *grown);
        if (!grown) {
            m->state = MODEL_INVALIDATED;
            pthread_mutex_unlock(&m->mu);
            return RT_REPORT(ACL_ERROR_RT_MEMORY_ALLOCATION, func,
                             "out of host memory for task %zu of the capture of model %u (the capture is invalidated)",
                             m->n + 1, m->id);
        }
        m->tasks = grown;
        m->cap = cap;
    }
    m->tasks[m->n++] = *t;
    switch (t->kind) {
    case RT_TASK_CALL: m->n_calls++; break;
    case RT_TASK_COPY:
    case RT_TASK_COPY2D: m->n_copies++; break;
    case RT_TASK_SET: m->n_sets++; break;
    case RT_TASK_RECORD: m->n_records++; break;
    case RT_TASK_WAIT: m->n_waits++; break;
    }
    pthread_mutex_unlock(&m->mu);
    return ACL_SUCCESS;
}

/* ---- lifetime -------------------------------------------------------------------------------- */

static void model_free(rt_model *m) {
    for (size_t i = 0; i < m->n; i++) {
        rt_task *t = &m->tasks[i];
        if (t->kind == RT_TASK_CALL && t->u.call.release) t->u.call.release(t->u.call.arg);
        rt_mem_unpin(t->pins[0]);
        rt_mem_unpin(t->pins[1]);
    }
    free(m->tasks);
    pthread_mutex_lock(&models_mu);   /* nobody is looking at it (rt_model_join, model_get) meanwhile */
    pthread_mutex_destroy(&m->mu);
    free(m);
    pthread_mutex_unlock(&models_mu);
}

static void model_unref(void *arg) {
    rt_model *m = arg;
    if (atomic_fetch_sub(&m->refs, 1) == 1) model_free(m);
}

static void replay_end(void *arg) { (void)arg; }

/* Looks a model handle up and takes a reference; NULL after reporting under func. */
static rt_model *model_get(const char *func, aclmdlRI modelRI) {
    if (!modelRI) {
        (void)RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func, "modelRI is NULL");
        return NULL;
    }
    rt_model *m = NULL;
    pthread_mutex_lock(&models_mu);
    if (stub_registry_kind(&rt_handles, modelRI) == RT_KIND_MODEL) {
        m = modelRI;
        atomic_fetch_add(&m->refs, 1);
    }
    pthread_mutex_unlock(&models_mu);
    if (!m)
        (void)RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func,
                  "modelRI %p is not a live model running instance (never captured, or already destroyed)", modelRI);
    return m;
}

/* Ends the capture of m on every stream that captures into it (the origin and the joined ones). */
static void detach_streams(rt_model *m) {
    rt_streams_end_capture(m);
    pthread_mutex_lock(&models_mu);
    active_by_mode[m->mode]--;
    pthread_mutex_unlock(&models_mu);
}

/* ---- public API ------------------------------------------------------------------------------ */

ACL_FUNC_VISIBILITY aclError aclmdlRICaptureBegin(aclrtStream stream, aclmdlRICaptureMode mode) {
    static const char func[] = "aclmdlRICaptureBegin";
    if ((int)mode < ACL_MODEL_RI_CAPTURE_MODE_GLOBAL || (int)mode > ACL_MODEL_RI_CAPTURE_MODE_RELAXED)
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func,
                         "Starting capturing tasks delivered to a stream: mode %d is invalid; expected a value in [0, 3)",
                         (int)mode);
    rt_stream *s;
    aclError rc = rt_stream_resolve(func, stream, &s);
    if (rc) return rc;
    if (s->is_default)
        return RT_REPORT(ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT, func,
                         "stream %p is the default stream of its context, which cannot capture (a disallowed implicit "
                         "dependency from default stream); create a stream with aclrtCreateStream",
                         (void *)s);
    rt_model *m = calloc(1, sizeof *m);
    if (!m) return RT_REPORT(ACL_ERROR_RT_MEMORY_ALLOCATION, func, "out of host memory for a model");
    pthread_mutex_init(&m->mu, NULL);
    atomic_init(&m->refs, 1);
    m->id = atomic_fetch_add(&next_id, 1);
    m->state = MODEL_CAPTURING;
    m->mode = (int)mode;
    m->origin = s;
    m->ctx = atomic_load(&s->ctx);
    m->thread = pthread_self();

    pthread_mutex_lock(&models_mu);
    m->serial = ++next_serial;
    int added = stub_registry_add(&rt_handles, m, RT_KIND_MODEL) == 0;
    pthread_mutex_unlock(&models_mu);
    if (!added) {
        pthread_mutex_destroy(&m->mu);
        free(m);
        return RT_REPORT(ACL_ERROR_RT_MEMORY_ALLOCATION, func, "out of host memory for a model");
    }
    pthread_mutex_lock(&s->mu);
    rt_model *busy = atomic_load(&s->capture);
    if (!busy && s->state == RT_STREAM_LIVE) {
        atomic_store(&s->capture, m);
        s->capture_origin = 1;
    }
    pthread_mutex_unlock(&s->mu);
    if (busy || s->state != RT_STREAM_LIVE) {
        pthread_mutex_lock(&models_mu);
        stub_registry_remove(&rt_handles, m, RT_KIND_MODEL);
        pthread_mutex_unlock(&models_mu);
        pthread_mutex_destroy(&m->mu);
        free(m);
        if (!busy) return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func, "stream %p has been destroyed", (void *)s);
        return RT_REPORT(ACL_ERROR_RT_STREAM_CAPTURED, func,
                         "Stream begin capture: stream %p is already in capture status (model %u)", (void *)s,
                         busy->id);
    }
    pthread_mutex_lock(&models_mu);
    active_by_mode[mode]++;
    pthread_mutex_unlock(&models_mu);
    tls_began_mode = (int)mode;
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclmdlRICaptureGetInfo(aclrtStream stream, aclmdlRICaptureStatus *status,
                                                    aclmdlRI *modelRI) {
    static const char func[] = "aclmdlRICaptureGetInfo";
    if (!status && !modelRI)
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func, "Parameters status and modelRI cannot both be NULL");
    rt_stream *s;
    aclError rc = rt_stream_resolve_any(func, stream, &s);
    if (rc) return rc;
    pthread_mutex_lock(&s->mu);
    rt_model *m = atomic_load(&s->capture);
    aclmdlRICaptureStatus st = ACL_MODEL_RI_CAPTURE_STATUS_NONE;
    if (m) {
        pthread_mutex_lock(&m->mu);
        st = m->state == MODEL_INVALIDATED ? ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED : ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE;
        pthread_mutex_unlock(&m->mu);
    }
    pthread_mutex_unlock(&s->mu);
    if (status) *status = st;
    if (modelRI) *modelRI = m;
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclmdlRICaptureEnd(aclrtStream stream, aclmdlRI *modelRI) {
    static const char func[] = "aclmdlRICaptureEnd";
    if (!modelRI) return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func, "modelRI is NULL");
    *modelRI = NULL;
    rt_stream *s;
    aclError rc = rt_stream_resolve(func, stream, &s);
    if (rc) return rc;
    pthread_mutex_lock(&s->mu);
    rt_model *m = atomic_load(&s->capture);
    int origin = s->capture_origin;
    pthread_mutex_unlock(&s->mu);
    if (!m)
        return RT_REPORT(ACL_ERROR_RT_STREAM_NOT_CAPTURED, func,
                         "Stream end capture: the stream %p is not in capture status, call aclmdlRICaptureBegin to "
                         "capture the stream first",
                         (void *)s);
    if (!origin)
        return RT_REPORT(ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED, func,
                         "the capture was not initiated in this stream (stream %p joined the capture of model %u "
                         "through an event wait; end it on the stream it began on)",
                         (void *)s, m->id);
    pthread_mutex_lock(&m->mu);
    int state = m->state;
    int wrong_thread = m->mode != ACL_MODEL_RI_CAPTURE_MODE_RELAXED && !pthread_equal(m->thread, pthread_self());
    m->state = wrong_thread || state == MODEL_INVALIDATED ? MODEL_INVALIDATED : MODEL_READY;
    m->origin = NULL;
    pthread_mutex_unlock(&m->mu);
    detach_streams(m);
    if (!wrong_thread) tls_began_mode = MODE_NONE;
    if (wrong_thread || state == MODEL_INVALIDATED) {   /* the capture is thrown away, as the vendor's */
        pthread_mutex_lock(&models_mu);
        stub_registry_remove(&rt_handles, m, RT_KIND_MODEL);
        pthread_mutex_unlock(&models_mu);
        uint32_t id = m->id;
        int mode = m->mode;
        model_unref(m);
        if (wrong_thread)
            return RT_REPORT(ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD, func,
                             "end capture in the wrong thread: the capture of model %u (mode %s) began on another "
                             "thread",
                             id, mode_name(mode));
        return RT_REPORT(ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED, func,
                         "Stream end capture: the current model (model %u) is invalid because an error occurred "
                         "during model capture",
                         id);
    }
    *modelRI = m;
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclmdlRICaptureThreadExchangeMode(aclmdlRICaptureMode *mode) {
    static const char func[] = "aclmdlRICaptureThreadExchangeMode";
    if (!mode) return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func, "mode is NULL");
    if ((unsigned)*mode > ACL_MODEL_RI_CAPTURE_MODE_RELAXED)
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func,
                         "Switching the capture mode of the current thread: mode %d is invalid; expected less than 3",
                         (int)*mode);
    int old = tls_exchange_mode;
    tls_exchange_mode = (int)*mode;
    *mode = (aclmdlRICaptureMode)old;
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclmdlRIExecuteAsync(aclmdlRI modelRI, aclrtStream stream) {
    static const char func[] = "aclmdlRIExecuteAsync";
    rt_model *m = model_get(func, modelRI);
    if (!m) return ACL_ERROR_RT_PARAM_INVALID;
    rt_stream *s;
    aclError rc = rt_stream_resolve(func, stream, &s);
    if (!rc) rc = rt_capture_refuse_stream(func, s, "Asynchronously executing the model running instance");
    if (!rc) {
        pthread_mutex_lock(&m->mu);
        int ready = m->state == MODEL_READY;
        pthread_mutex_unlock(&m->mu);
        if (!ready)
            rc = RT_REPORT(ACL_ERROR_RT_MODEL_EXECUTE, func,
                           "model %u is still being captured (end graph must be called before execution)", m->id);
    }
    /* m is READY: its task list no longer changes. */
    for (size_t i = 0; !rc && i < m->n; i++) {
        rt_task t = m->tasks[i];
        t.pins[0] = t.pins[1] = NULL;   /* the model holds them */
        if (t.kind == RT_TASK_RECORD || (t.kind == RT_TASK_WAIT && t.u.mark.event == NULL)) continue;
        if (t.kind == RT_TASK_CALL) t.u.call.release = NULL;
        rc = rt_stream_enqueue(func, s, &t, NULL);
    }
    if (!rc) {   /* the reference taken above goes when the replay has run */
        rt_task end = {.kind = RT_TASK_CALL, .u.call = {replay_end, model_unref, m}};
        rc = rt_stream_enqueue(func, s, &end, NULL);
        if (!rc) return ACL_SUCCESS;
    }
    model_unref(m);
    return rc;
}

ACL_FUNC_VISIBILITY aclError aclmdlRIDestroy(aclmdlRI modelRI) {
    static const char func[] = "aclmdlRIDestroy";
    rt_model *m = model_get(func, modelRI);
    if (!m) return ACL_ERROR_RT_PARAM_INVALID;
    pthread_mutex_lock(&m->mu);
    int capturing = m->state == MODEL_CAPTURING;
    pthread_mutex_unlock(&m->mu);
    if (capturing) {
        model_unref(m);
        return RT_REPORT(ACL_ERROR_RT_MODEL_CAPTURED, func,
                         "model %u is being captured; end the capture with aclmdlRICaptureEnd first", m->id);
    }
    pthread_mutex_lock(&models_mu);
    int removed = stub_registry_remove(&rt_handles, m, RT_KIND_MODEL);
    pthread_mutex_unlock(&models_mu);
    model_unref(m);                 /* ours */
    if (!removed) return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func, "modelRI %p was destroyed concurrently", modelRI);
    model_unref(m);                 /* the handle's: the tasks go once the queued replays have run */
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclmdlRIGetId(aclmdlRI modelRI, uint32_t *modelRIId) {
    static const char func[] = "aclmdlRIGetId";
    if (!modelRIId) return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func, "modelRIId is NULL");
    rt_model *m = model_get(func, modelRI);
    if (!m) return ACL_ERROR_RT_PARAM_INVALID;
    *modelRIId = m->id;
    model_unref(m);
    return ACL_SUCCESS;
}

static const char *kind_name(rt_task_kind k) {
    switch (k) {
    case RT_TASK_CALL: return "kernel";
    case RT_TASK_COPY: return "memcpy";
    case RT_TASK_COPY2D: return "memcpy2d";
    case RT_TASK_SET: return "memset";
    case RT_TASK_RECORD: return "event_record";
    case RT_TASK_WAIT: return "event_wait";
    }
    return "?";
}

/* The model's summary (and, verbose, its tasks) as JSON on f. */
static void print_json(FILE *f, rt_model *m, int verbose) {
    fprintf(f,
            "{\"modelRI_id\": %u, \"capture_mode\": \"%s\", \"task_num\": %zu, \"kernel_num\": %zu, \"memcpy_num\": "
            "%zu, \"memset_num\": %zu, \"event_record_num\": %zu, \"event_wait_num\": %zu",
            m->id, mode_name(m->mode), m->n, m->n_calls, m->n_copies, m->n_sets, m->n_records, m->n_waits);
    if (verbose) {
        fprintf(f, ", \"tasks\": [");
        for (size_t i = 0; i < m->n; i++)
            fprintf(f, "%s{\"index\": %zu, \"type\": \"%s\"}", i ? ", " : "", i, kind_name(m->tasks[i].kind));
        fprintf(f, "]");
    }
    fprintf(f, "}\n");
}

ACL_FUNC_VISIBILITY aclError aclmdlRIDebugPrint(aclmdlRI modelRI) {
    rt_model *m = model_get("aclmdlRIDebugPrint", modelRI);
    if (!m) return ACL_ERROR_RT_PARAM_INVALID;
    pthread_mutex_lock(&m->mu);
    print_json(stdout, m, 1);
    pthread_mutex_unlock(&m->mu);
    fflush(stdout);
    model_unref(m);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclmdlRIDebugJsonPrint(aclmdlRI modelRI, const char *path, uint32_t flags) {
    static const char func[] = "aclmdlRIDebugJsonPrint";
    if (!path) return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func, "path is NULL");
    rt_model *m = model_get(func, modelRI);
    if (!m) return ACL_ERROR_RT_PARAM_INVALID;
    FILE *f = fopen(path, "w");
    if (!f) {
        model_unref(m);
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func, "cannot open %s for writing", path);
    }
    pthread_mutex_lock(&m->mu);
    print_json(f, m, flags & ACL_MDLRI_DEBUG_JSON_PRINT_VERBOSE);
    pthread_mutex_unlock(&m->mu);
    fclose(f);
    model_unref(m);
    return ACL_SUCCESS;
}

/* ---- not emulated ---------------------------------------------------------------------------- */

#define NOT_EMULATED(func, what)                                                                              \
    RT_REPORT(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, func, "%s is not supported by the emulator (ACL Graph capture " \
              "and replay are; see src/runtime/model.c)", what)

/* A capturing stream for the task-group calls, which the vendor checks first (107029 otherwise). */
static aclError capturing_stream(const char *func, aclrtStream stream, const char *what) {
    rt_stream *s;
    aclError rc = rt_stream_resolve(func, stream, &s);
    if (rc) return rc;
    if (atomic_load(&s->capture) == NULL)
        return RT_REPORT(ACL_ERROR_RT_STREAM_NOT_CAPTURED, func, "%s: stream %p is not in the capture stage", what,
                         (void *)s);
    return NOT_EMULATED(func, "capturing task groups");
}

ACL_FUNC_VISIBILITY aclError aclmdlRICaptureTaskGrpBegin(aclrtStream stream) {
    return capturing_stream("aclmdlRICaptureTaskGrpBegin", stream, "Marking the start of a task group");
}
ACL_FUNC_VISIBILITY aclError aclmdlRICaptureTaskGrpEnd(aclrtStream stream, aclrtTaskGrp *handle) {
    if (!handle) return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, "aclmdlRICaptureTaskGrpEnd", "handle is NULL");
    *handle = NULL;
    return capturing_stream("aclmdlRICaptureTaskGrpEnd", stream, "Marking the end of a task group");
}
ACL_FUNC_VISIBILITY aclError aclmdlRICaptureTaskUpdateBegin(aclrtStream stream, aclrtTaskGrp handle) {
    (void)stream;
    if (!handle) return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, "aclmdlRICaptureTaskUpdateBegin", "handle is NULL");
    return NOT_EMULATED("aclmdlRICaptureTaskUpdateBegin", "updating the tasks of a task group");
}
ACL_FUNC_VISIBILITY aclError aclmdlRICaptureTaskUpdateEnd(aclrtStream stream) {
    (void)stream;
    return NOT_EMULATED("aclmdlRICaptureTaskUpdateEnd", "updating the tasks of a task group");
}
ACL_FUNC_VISIBILITY aclError aclmdlRICaptureToModelRIBegin(aclrtStream stream, aclmdlRI modelRI,
                                                           aclmdlRICaptureMode mode) {
    (void)stream, (void)modelRI, (void)mode;
    return NOT_EMULATED("aclmdlRICaptureToModelRIBegin", "capturing into an existing (sub) ACL Graph");
}
ACL_FUNC_VISIBILITY aclError aclmdlRICondHandleCreate(aclmdlRI modelRI, uint32_t defaultLaunchValue,
                                                      aclmdlRICondHandleFlag flag, aclmdlRICondHandle *handle) {
    (void)modelRI, (void)defaultLaunchValue, (void)flag;
    if (handle) *handle = NULL;
    return NOT_EMULATED("aclmdlRICondHandleCreate", "a conditional task's handle");
}
ACL_FUNC_VISIBILITY aclError aclmdlRICondHandleGetCondPtr(aclmdlRICondHandle handle, uint64_t **ptr) {
    (void)handle;
    if (ptr) *ptr = NULL;
    return NOT_EMULATED("aclmdlRICondHandleGetCondPtr", "a conditional task's handle");
}
ACL_FUNC_VISIBILITY aclError aclmdlRIAddCondTask(aclmdlRICondTaskParams params, aclrtStream stream, uint32_t flags) {
    (void)params, (void)stream, (void)flags;
    return NOT_EMULATED("aclmdlRIAddCondTask", "a conditional task");
}
