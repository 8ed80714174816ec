/*
 * Internals shared by the files of libascendcl (src/runtime/). Not exported.
 *
 * Object lifetime rule: contexts, streams and events live in pools (pool.c) and their memory is
 * never returned to the system. A destroyed object goes back to its pool and its generation is
 * bumped when it is reused, so a stale handle or a stale thread-local pointer can always be read
 * safely; the handle registry tells live handles from stale or foreign ones before anything else
 * of the object is trusted.
 */
#ifndef PYACLNN_RT_INTERNAL_H
#define PYACLNN_RT_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "pyaclnn_stub.h"
#include "../common/handle_registry.h"

/* ---- handles -------------------------------------------------------------------------------- */

enum { RT_KIND_CONTEXT = 1, RT_KIND_STREAM = 2, RT_KIND_EVENT = 3, RT_KIND_MODEL = 4 };
extern stub_registry rt_handles;   /* every live context, stream (default ones too) and event */

typedef struct rt_context rt_context;
typedef struct rt_stream rt_stream;
typedef struct rt_event rt_event;

/* ---- object pools (pool.c) ------------------------------------------------------------------- */

typedef struct {
    pthread_mutex_t mu;
    void *head, *tail;      /* FIFO of idle objects, linked through their next_free field */
    size_t idle;
    size_t min_idle;        /* reuse starts only above this many idle objects               */
    size_t next_offset;     /* offsetof(type, next_free)                                    */
} rt_pool;

#define RT_POOL_INIT(type, min_idle) {PTHREAD_MUTEX_INITIALIZER, NULL, NULL, 0, (min_idle), offsetof(type, next_free)}

void rt_pool_put(rt_pool *pool, void *obj);
void *rt_pool_take(rt_pool *pool);   /* NULL: allocate a new object */
/* Calls fn on every idle object with the pool locked (so none is taken meanwhile). */
void rt_pool_for_each_idle(rt_pool *pool, void (*fn)(void *obj));

/* ---- errors (errors.c) ---------------------------------------------------------------------- */

#define RT_REPORT(code, func, ...) (pyaclnn_stub_report((code), (func), __VA_ARGS__), (code))

/* ---- clock (used by events, timeouts, messages) ---------------------------------------------- */

uint64_t rt_now_ns(void);                                   /* CLOCK_MONOTONIC */
void rt_deadline_after_ms(struct timespec *ts, int32_t ms); /* absolute CLOCK_MONOTONIC deadline */
/* pthread_cond_t initialised to use CLOCK_MONOTONIC (for rt_deadline_after_ms deadlines). */
void rt_cond_init_monotonic(pthread_cond_t *cv);

/* ---- SoC (soc.c) ----------------------------------------------------------------------------- */

uint64_t rt_soc_hbm_bytes(void);   /* nominal device memory of the emulated SoC */
/* ACL_SUCCESS, or ACL_ERROR_RT_SOC_VERSION with a message naming the accepted PYACLNN_STUB_SOC values. */
aclError rt_soc_check(const char *func);

/* ---- devices (device.c) ---------------------------------------------------------------------- */

#define RT_MAX_DEVICES 64
/* Number of visible devices, or -1 if ASCEND_RT_VISIBLE_DEVICES is unusable (then *why says why). */
int rt_visible_device_count(const char **why);
/* Emulated memory capacity of every device in bytes (PYACLNN_STUB_DEVICE_MEMORY or the SoC's HBM). */
uint64_t rt_device_capacity(void);

/* For the compatibility layer (src/compat/ascendcl/): */
/* ACL_SUCCESS, or ACL_ERROR_RT_INVALID_DEVICEID reported under func unless id names a visible device. */
aclError rt_device_check(const char *func, int32_t id);
int rt_device_is_set(int32_t id);            /* aclrtSetDevice'd and not reset: its default context lives */
int32_t rt_device_logic_id(int32_t id);      /* the physical index behind a visible device id            */

/* ---- contexts (context.c) -------------------------------------------------------------------- */

struct rt_context {
    int32_t device;                 /* user-visible device id                     */
    int is_default;                 /* the device's default ("primary") context   */
    _Atomic int alive;
    _Atomic uint64_t generation;    /* bumped at each creation                    */
    rt_stream *default_stream;
    rt_context *next_free;
};

/* The calling thread's current context if it is still alive, else NULL. */
rt_context *rt_current_context(void);
/* Same, reporting ACL_ERROR_RT_CONTEXT_NULL under `func` when there is none. */
aclError rt_require_context(const char *func, rt_context **out);
void rt_set_current_context(rt_context *ctx);   /* ctx may be NULL */
/* Creates a live context with its default stream. Returns the status (reported under func). */
aclError rt_context_create(const char *func, int32_t device, int is_default, rt_context **out);
/* Synchronises and destroys every stream of ctx, then the context itself. */
void rt_context_destroy(rt_context *ctx);
int64_t rt_context_user_count(void);

/* ---- streams (stream.c, stream_worker.c) ----------------------------------------------------- */

typedef enum {
    RT_TASK_CALL,     /* pyaclnn_stub_stream_submit: run(arg), then release(arg) */
    RT_TASK_COPY,
    RT_TASK_COPY2D,
    RT_TASK_SET,
    RT_TASK_RECORD,   /* marks an event record as reached                         */
    RT_TASK_WAIT,     /* blocks the stream until an event record is reached        */
} rt_task_kind;

typedef struct rt_mem_block rt_mem_block;

/* A vector clock over stream slots (hazard.c); n components, missing ones are 0. */
typedef struct {
    uint64_t *c;
    size_t n;
} rt_hz_clock;

typedef struct {
    rt_task_kind kind;
    /* Memory blocks the task uses, pinned when it was validated and unpinned by the worker after it
     * ran (or was dropped): a concurrent aclrtFree cannot release them under the task. */
    rt_mem_block *pins[2];
    union {
        struct { pyaclnn_stub_task_fn run, release; void *arg; } call;
        struct { void *dst; const void *src; size_t count; } copy;
        struct { void *dst; const void *src; size_t dpitch, spitch, width, height; } copy2d;
        struct { void *dst; size_t count; int value; } set;
        /* RECORD: the event and the record's id. WAIT: the record it waits for, captured when the
         * wait was enqueued: task `index` of stream `stream` (event.c). */
        struct { rt_event *event; uint64_t id; rt_stream *stream; uint64_t index; } mark;
    } u;
} rt_task;

enum { RT_STREAM_FREE = 0, RT_STREAM_LIVE = 1 };

struct rt_stream {
    pthread_mutex_t mu;
    pthread_cond_t work_cv;         /* the worker waits here for tasks                  */
    pthread_cond_t done_cv;         /* host threads wait here for completions           */
    rt_task *ring;                  /* pending tasks, a power-of-two ring buffer        */
    size_t ring_cap, ring_head;     /* ring_head: next task to run                      */
    size_t ring_count;              /* tasks queued and not yet started                 */
    _Atomic uint64_t submitted;     /* tasks ever enqueued (written under mu)           */
    _Atomic uint64_t completed;     /* tasks ever finished (written under mu)           */
    int host_waiters;               /* host threads blocked on done_cv                  */
    int worker_idle;                /* worker blocked on work_cv                        */
    int worker_untimed;             /* ... without a deadline (it went to sleep while live) */
    int state;                      /* RT_STREAM_FREE / RT_STREAM_LIVE                  */
    _Atomic int abort;              /* force-destroy: drop the pending tasks            */
    _Atomic(rt_event *) waiting_on; /* event the worker is blocked on (RT_TASK_WAIT)    */
    /* Index of the last event record task this stream's worker has reached (monotonic over the
     * object's life, as task indices are): a wait for task i of this stream is satisfied once this
     * is >= i. Written by the worker before it wakes the event's waiters. */
    _Atomic uint64_t records_reached;
    _Atomic uint64_t generation;
    _Atomic(rt_context *) ctx;
    int is_default;
    uint32_t priority, flags;
    /* First asynchronous failure not yet reported by a synchronisation. */
    _Atomic int fail_code;
    uint64_t fail_task;             /* index (1-based) of the failing task              */
    int fail_more;                  /* failures after the first one                     */
    char fail_msg[768];
    /* The worker thread (stream_worker.c); all three under mu. A pooled stream's worker retires
     * after idling there briefly (or is stopped and joined at aclFinalize) and is started again when
     * the stream object is reused. */
    pthread_t worker;
    int has_worker;                 /* a worker thread runs (or is starting) for this object */
    int worker_stop;                /* ask the worker to end once the queue is empty         */
    uint32_t hz_slot;               /* index among all stream objects (hazard clocks)        */
    rt_hz_clock hz_vc;              /* hazard clock (hazard.c, under its lock)                */
    /* The model this stream's tasks are recorded into while it captures (model.c; written under mu),
     * and whether the capture began on this stream (else it joined through an event wait). */
    _Atomic(struct rt_model *) capture;
    int capture_origin;
    rt_stream *next_free;
};

/* Resolves a stream for submitting work from the calling thread (NULL -> current context's default
 * stream): a current context is required and the stream must belong to it, as on the NPU. */
aclError rt_stream_resolve(const char *func, aclrtStream stream, rt_stream **out);
/* Same without the same-context rule (synchronisation and queries). */
aclError rt_stream_resolve_any(const char *func, aclrtStream stream, rt_stream **out);
/* Appends a task; *index gets its 1-based position in the stream (may be NULL). */
aclError rt_stream_enqueue(const char *func, rt_stream *s, const rt_task *task, uint64_t *index);
/* What the hazard checker needs to know about a RT_TASK_CALL task (NULL: it touches nothing known). */
typedef struct {
    const char *op;
    const pyaclnn_stub_access *acc;
    size_t n;
    int is_operator;
    /* Ordering the task carries beyond stream order (RT_HZ_SYNC_*; 0: none). */
    int sync;
    const void *sync_addr;        /* VALUE_WRITE / VALUE_WAIT: the 8 bytes of device memory    */
    uint64_t sync_value;
    uint32_t sync_flag;           /* VALUE_WAIT: ACL_STREAM_WAIT_VALUE_GEQ .. _NOR             */
    rt_hz_clock *snapshot;        /* SNAPSHOT: gets the stream's clock as of this task          */
} rt_hz_task;
/* aclrtValueWrite / aclrtValueWait order work across streams like an event record / wait (the wait
 * joins the clock of the latest queued write whose value satisfies it); host functions and callbacks
 * (SNAPSHOT) take the stream's clock at their task, which the host joins when they run. */
enum { RT_HZ_SYNC_NONE = 0, RT_HZ_SYNC_VALUE_WRITE = 1, RT_HZ_SYNC_VALUE_WAIT = 2, RT_HZ_SYNC_SNAPSHOT = 3 };
aclError rt_stream_enqueue_checked(const char *func, rt_stream *s, const rt_task *task, uint64_t *index,
                                   const rt_hz_task *info);
/* Waits until the stream has completed `index` tasks; deadline NULL waits forever (see
 * rt_deadline_after_ms). Returns 0, or 1 on timeout. Does not surface asynchronous failures. */
int rt_stream_wait_index(rt_stream *s, uint64_t index, const struct timespec *deadline);
/* Reports (under func) and clears the stream's pending asynchronous failure if it happened in a task
 * with index <= upto; returns its code or 0. */
aclError rt_stream_take_failure(const char *func, rt_stream *s, uint64_t upto);
/* Creation and destruction (used by contexts too). */
aclError rt_stream_create(const char *func, rt_context *ctx, int is_default, uint32_t priority,
                          uint32_t flags, rt_stream **out);
void rt_stream_destroy(rt_stream *s, int force);
/* Synchronises every live stream of a device (or of one context when ctx != NULL). */
aclError rt_streams_synchronize(const char *func, int32_t device, rt_context *ctx, int32_t timeout_ms);
/* Destroys every live stream of ctx (waiting for their work). */
void rt_streams_destroy_of_context(rt_context *ctx);
int64_t rt_stream_user_count(void);

/* Stops and joins the workers of pooled (destroyed) streams; live streams keep theirs. Called by
 * aclFinalize; safe from a stream worker and with streams still busy. */
void rt_streams_join_idle_workers(void);

/* Worker side (stream_worker.c). */
/* Starts the stream object's worker thread; caller holds s->mu or owns s alone. 0 or -1. */
int rt_worker_start(rt_stream *s);
/* Stops s's worker and joins it; s must be idle and out of anyone else's reach (pooled, with the
 * pool locked). Does nothing when s has no worker or when called from that worker. */
void rt_worker_join(rt_stream *s);
/* Joins the threads of pooled streams' retired workers, the retiring ones included (stream_worker.c). */
void rt_workers_join_retired(void);
extern _Atomic int64_t rt_tasks_in_flight;   /* over all streams: submitted - completed */
extern _Atomic int rt_process_exiting;       /* set at exit(): workers stop running tasks */

/* ---- events (event.c) ------------------------------------------------------------------------ */

struct rt_event {
    pthread_mutex_t mu;
    pthread_cond_t cv;              /* broadcast whenever a record of this event is reached      */
    uint32_t flags;
    int timed;
    uint64_t next_id;               /* record ids keep growing over the event's reuses          */
    uint64_t record_id;             /* latest record (0 = not recorded since creation/reset)    */
    uint64_t done_id;               /* highest record id reached by its stream                  */
    uint64_t stamp_ns;              /* when record `done_id` was reached (timed events)         */
    rt_stream *stream;              /* stream of the latest record, for asynchronous failures   */
    uint64_t stream_generation, stream_index;
    rt_context *ctx;
    int live;
    _Atomic uint64_t generation;
    rt_hz_clock hz_vc;              /* hazard clock of the latest record (hazard.c)              */
    /* The latest record was captured into this model (serial: the model's), not queued (model.c). */
    struct rt_model *cap_model;
    uint64_t cap_serial;
    rt_event *next_free;
};

/* Worker hooks for RT_TASK_RECORD (task `index` of stream s) / RT_TASK_WAIT (the task t). */
void rt_event_reach(rt_stream *s, uint64_t index, rt_event *ev, uint64_t id);
void rt_event_wait(rt_stream *s, const rt_task *t);
void rt_event_wake(rt_event *ev);   /* wakes a worker blocked on ev (force-destroy) */
int64_t rt_event_count(void);

/* ---- memory (memory.c, memory_table.c, memcpy.c) --------------------------------------------- */

typedef enum {
    RT_MEM_PAGEABLE = 0,   /* not known to the runtime: ordinary host memory          */
    RT_MEM_DEVICE = 1,     /* aclrtMalloc / aclrtMallocAlign32                         */
    RT_MEM_PINNED = 2,     /* aclrtMallocHost                                          */
    RT_MEM_REGISTERED = 3, /* host memory registered for device access                 */
} rt_mem_kind;

typedef struct {
    uintptr_t base;
    size_t size;        /* bytes the range covers (padded size for device memory) */
    size_t requested;   /* bytes the caller asked for                             */
    rt_mem_kind kind;
    int32_t device;
    rt_mem_block *block;   /* the range's reference-counted owner (set by rt_mem_table_insert) */
} rt_mem_range;

/* A known range's memory lives as long as its block has references: one held by the table while the
 * range is live, one per pin. aclrtFree removes the range (so nothing new can pin it) and drops the
 * table's reference; the memory is released when the last reference goes, i.e. only once the
 * queued work that uses it has run. Frees of memory no queued work uses are immediate. */
struct rt_mem_block {
    _Atomic int64_t refs;
    void *mem;          /* what free() takes                                   */
    int32_t device;     /* device of device memory; -1 for host memory         */
    int owned;          /* 0 for registered host ranges: the caller owns them  */
};

/* Sorted table of known ranges (memory_table.c); thread-safe. */
int rt_mem_table_insert(const rt_mem_range *r);                    /* 0, or -1 if out of memory */
/* 1 if removed; drops the table's reference to the block (the memory goes when nothing pins it). */
int rt_mem_table_remove(uintptr_t base, rt_mem_kind kind, rt_mem_range *out);
int rt_mem_table_find(uintptr_t p, rt_mem_range *out);             /* range containing p        */
/* Same, and pins the range's block (out->block) in the same step; the caller unpins it. */
int rt_mem_table_find_pin(uintptr_t p, rt_mem_range *out);
void rt_mem_unpin(rt_mem_block *block);                            /* NULL: nothing */
int rt_mem_table_overlaps(uintptr_t p, size_t n);
void rt_mem_table_totals(int64_t *device_allocs, int64_t *device_bytes, int64_t *host_allocs,
                         int64_t *host_registrations);

/* Device memory in use on a device and its high-water mark since the process started (memory.c). */
void rt_device_memory_usage(int32_t device, uint64_t *used, uint64_t *peak);
/* aclrtMemcpy / aclrtMemcpyAsync with their checks and messages under `func` (memcpy.c). */
aclError rt_memcpy(const char *func, void *dst, size_t destMax, const void *src, size_t count,
                   aclrtMemcpyKind kind);
aclError rt_memcpy_async(const char *func, void *dst, size_t destMax, const void *src, size_t count,
                         aclrtMemcpyKind kind, aclrtStream stream);

/* Where p points: fills *r (kind RT_MEM_PAGEABLE with base = p if unknown). */
void rt_mem_classify(const void *p, rt_mem_range *r);
/* Same, pinning the block of known memory (r->block, NULL for pageable memory). */
void rt_mem_classify_pin(const void *p, rt_mem_range *r);

/* ---- hazard checker (hazard.c) ------------------------------------------------------------- */

extern _Atomic int rt_hz_mode;     /* 0 off, 1 report, 2 error (PYACLNN_STUB_HAZARDS, read at load) */
extern int rt_hz_poison;   /* PYACLNN_STUB_POISON=1                                          */
/* Each returns 0, or (error mode, a hazard found) the status to refuse the call with, its message in
 * msg. Every finding is printed and logged whatever the mode. */
/* With s->mu held, before the task becomes task `index` of s: checks and records its accesses. */
int rt_hz_enqueue(const char *func, rt_stream *s, const rt_task *t, uint64_t index, const rt_hz_task *info,
                  char *msg, size_t len);
/* A synchronous host access (aclrtMemcpy, aclrtMemset). */
int rt_hz_host_access(const char *func, const pyaclnn_stub_access *acc, size_t n, char *msg, size_t len);
/* aclrtFree of the allocation at base; forgets it unless refused. */
int rt_hz_free(const char *func, uintptr_t base, char *msg, size_t len);
void rt_hz_forget(uintptr_t base);               /* host ranges unregistered or freed */
void rt_hz_malloc(uintptr_t base, size_t size);  /* fresh device memory: poison, track writes */
/* Host synchronisation: snapshot what will have finished, wait, then join it (frees the snapshot). */
void rt_hz_stream_snapshot(rt_stream *s, rt_hz_clock *out);
void rt_hz_event_snapshot(rt_event *ev, rt_hz_clock *out);
void rt_hz_host_join(rt_hz_clock *c);
void rt_hz_host_saw(rt_stream *s, uint64_t index);   /* the host waited for task `index` of s */
void rt_hz_event_reset(rt_event *ev);
/* Host code running inside stream s (a host function or callback; NULL when it returns): host accesses
 * it makes are ordered with all of s's work, before or after it. Per thread. */
void rt_hz_host_in_stream(rt_stream *s);

/* ---- captured models (model.c) -------------------------------------------------------------- */

typedef struct rt_model rt_model;
/* With s->mu held and s capturing into m: records a copy of the task (the model now owns its pins and,
 * for RT_TASK_CALL, its release). ACL_SUCCESS, or the status reported under func. */
aclError rt_model_record(const char *func, rt_model *m, const rt_task *t);
uint64_t rt_model_serial(const rt_model *m);
/* s waits on an event whose latest record was captured into m (serial): s joins that capture. 1: s now
 * captures into m (or did), 0: m captures no more (an ordinary wait), -1: s captures into another model. */
int rt_model_join(rt_stream *s, rt_model *m, uint64_t serial);
/* Every stream capturing into m leaves the capture (stream.c). */
void rt_streams_end_capture(rt_model *m);
/* The stream a capture began on was destroyed with its context (m may be stale): the capture is invalidated
 * and no longer counts as active. */
void rt_model_origin_destroyed(rt_model *m);
/* ACL_ERROR_RT_STREAM_CAPTURED (reported under func, `what` naming the operation) when s captures. */
aclError rt_capture_refuse_stream(const char *func, rt_stream *s, const char *what);
/* ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT (reported) when the calling thread's capture mode forbids a
 * synchronous operation while a capture is active in the process (the vendor's IsCaptureModeSupport). */
aclError rt_capture_mode_check(const char *func, const char *what);

/* ---- fork (fork.c) -------------------------------------------------------------------------- */

void rt_fork_note_start(void);              /* called when a stream worker is started            */
/* ACL_SUCCESS, or (in a child forked after the runtime started) a report under func and its code. */
aclError rt_fork_check(const char *func);
int rt_forked_child(void);                  /* the same test, silent */

/* ---- init (init.c) --------------------------------------------------------------------------- */

/* Checks that a non-empty file is well-formed JSON (json_check.c). Returns 0 or -1 and a reason. */
int rt_json_check(const char *text, size_t len, char *why, size_t why_len);

#endif
