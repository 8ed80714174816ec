/*
 * The stream-hazard checker (PYACLNN_STUB_HAZARDS=off|report|error; docs/hazards.md).
 *
 * Happens-before is decided in host-issue order with vector clocks, never by timing:
 *  - every stream object has a slot; its clock's own component is the index of the last task queued
 *    on it (the stream's `submitted` counter), so a task is named (slot, index);
 *  - queuing a task joins the host's clock into the stream's, then ticks the stream's component;
 *  - aclrtRecordEvent copies the stream's clock into the event; aclrtStreamWaitEvent joins it in:
 *    the clock of the record that was latest when the wait was enqueued (event.c enqueues the wait
 *    under the event's lock, as records are published), which is the record the runtime's wait
 *    task waits for; a later record of the event changes neither;
 *  - a host synchronisation (stream, event, device, context, stream destruction, a query that says
 *    "complete", an async copy from pageable memory, which waits for itself) joins what it waited
 *    for into the host's clock. There is one host clock: host threads are taken in the order their
 *    calls reach the runtime.
 * Task (slot, i) is ordered before an accessor whose clock has component[slot] >= i.
 *
 * Each known allocation (device, pinned or registered) that queued work touched keeps a short list
 * of access records (byte range, read/write, slot, index, operator, API call). A record is dropped
 * once the host's clock covers it (nothing can conflict with it any more), when a later record of
 * the same stream covering the same bytes makes it redundant, or (oldest first) beyond RECORD_CAP.
 * All state sits behind one mutex; the hooks run only when the checker is on, so with it off the
 * runtime pays one branch on a flag read at load time.
 *
 * aclrtValueWrite / aclrtValueWait (src/compat/ascendcl/values.c) are synchronisation, not data
 * accesses: a value write keeps its stream's clock for its address and value, and a value wait joins
 * the clock of the latest write queued before it whose value satisfies the wait's condition (the
 * write that releases it, when the program is written that way round; a wait queued before any such
 * write orders nothing). Host functions and callbacks take their stream's clock at their task
 * (RT_HZ_SYNC_SNAPSHOT); the host joins it when the function runs, as after a synchronisation, and
 * the host accesses the function makes count as ordered with all of its stream's work
 * (rt_hz_host_in_stream): the work queued after it on that stream waits for it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"

#define RECORD_CAP 64      /* access records kept per allocation            */
#define FINDING_CAP 1024   /* findings kept for pyaclnn_stub_hazards        */
#define POISON_BYTE 0xFF   /* NaN in every float format, -1 in every integer */

_Atomic int rt_hz_mode;
int rt_hz_poison;

static const char *const KIND_NAME[] = {"read-before-sync", "free-in-flight", "cross-stream", "bad-workspace",
                                        "uninitialized-read"};

__attribute__((constructor)) static void read_settings(void) {
    const char *mode = getenv("PYACLNN_STUB_HAZARDS");
    if (mode && *mode && strcmp(mode, "off") != 0) {
        if (strcmp(mode, "report") == 0) rt_hz_mode = 1;
        else if (strcmp(mode, "error") == 0) rt_hz_mode = 2;
        else
            fprintf(stderr, "pyaclnn-stub: PYACLNN_STUB_HAZARDS=%s is not one of off, report, error; the hazard "
                            "checker stays off\n", mode);
    }
    const char *poison = getenv("PYACLNN_STUB_POISON");
    rt_hz_poison = poison && strcmp(poison, "1") == 0;
}

PYACLNN_STUB_API int pyaclnn_stub_hazard_mode(void) { return rt_hz_mode; }
PYACLNN_STUB_API int pyaclnn_stub_poison(void) { return rt_hz_poison; }

static pthread_mutex_t hz_mu = PTHREAD_MUTEX_INITIALIZER;
static rt_hz_clock host_clock;

/* ---- clocks ---------------------------------------------------------------------------------- */

static uint64_t clock_get(const rt_hz_clock *c, uint32_t slot) { return slot < c->n ? c->c[slot] : 0; }

static int clock_reserve(rt_hz_clock *c, size_t n) {
    if (n <= c->n) return 0;
    uint64_t *grown = realloc(c->c, n * sizeof *grown);
    if (!grown) return -1;
    memset(grown + c->n, 0, (n - c->n) * sizeof *grown);
    c->c = grown;
    c->n = n;
    return 0;
}

static void clock_set(rt_hz_clock *c, uint32_t slot, uint64_t v) {
    if (clock_reserve(c, (size_t)slot + 1) == 0 && c->c[slot] < v) c->c[slot] = v;
}

static void clock_join(rt_hz_clock *into, const rt_hz_clock *from) {
    if (clock_reserve(into, from->n) != 0) return;
    for (size_t i = 0; i < from->n; i++)
        if (into->c[i] < from->c[i]) into->c[i] = from->c[i];
}

static void clock_copy(rt_hz_clock *into, const rt_hz_clock *from) {
    if (into->n) memset(into->c, 0, into->n * sizeof *into->c);
    clock_join(into, from);
}

/* ---- value writes (aclrtValueWrite) ----------------------------------------------------------- */

#define VALUE_WRITE_CAP 1024   /* writes remembered over all addresses (oldest dropped first) */

typedef struct {
    uintptr_t addr;
    uint64_t value;
    rt_hz_clock vc;            /* the writing stream's clock, this write included */
} hz_value_write;

static hz_value_write *vwrites;   /* in queueing order */
static size_t n_vwrites, cap_vwrites;

/* Same test as the device (STARS conditional ISA: GEQ is the signed BGE). */
static int value_satisfies(uint64_t current, uint64_t value, uint32_t flag) {
    switch (flag) {
    case 0: return (int64_t)current >= (int64_t)value;   /* ACL_STREAM_WAIT_VALUE_GEQ */
    case 1: return current == value;                     /* ACL_STREAM_WAIT_VALUE_EQ  */
    case 2: return (current & value) != 0;               /* ACL_STREAM_WAIT_VALUE_AND */
    case 3: return ~(current | value) != 0;              /* ACL_STREAM_WAIT_VALUE_NOR */
    default: return 0;
    }
}

static void value_write_note(uintptr_t addr, uint64_t value, const rt_hz_clock *vc) {
    if (n_vwrites == VALUE_WRITE_CAP) {   /* bounded: forget the oldest */
        free(vwrites[0].vc.c);
        memmove(vwrites, vwrites + 1, (n_vwrites - 1) * sizeof *vwrites);
        n_vwrites--;
    }
    if (n_vwrites == cap_vwrites) {
        size_t cap = cap_vwrites ? cap_vwrites * 2 : 16;
        hz_value_write *grown = realloc(vwrites, cap * sizeof *grown);
        if (!grown) return;
        vwrites = grown;
        cap_vwrites = cap;
    }
    hz_value_write *w = &vwrites[n_vwrites];
    w->addr = addr;
    w->value = value;
    w->vc.c = NULL;
    w->vc.n = 0;
    clock_join(&w->vc, vc);
    n_vwrites++;
}

/* ---- allocations and their access records ---------------------------------------------------- */

typedef struct {
    uintptr_t lo, hi;
    int write;
    uint32_t slot;
    uint64_t seq;
    const void *stream;
    char op[40], api[48];
} hz_record;

typedef struct {
    uintptr_t base;
    size_t size;
    int track_init;                /* poisoned device memory: which bytes were written     */
    hz_record *recs;
    size_t n, cap;
    uintptr_t (*written)[2];       /* sorted, disjoint, non-adjacent [lo, hi) ranges        */
    size_t nw, capw;
} hz_alloc;

static hz_alloc **allocs;   /* sorted by base */
static size_t n_allocs, cap_allocs;

static size_t alloc_lower_bound(uintptr_t base) {
    size_t lo = 0, hi = n_allocs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (allocs[mid]->base < base) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static void alloc_free(hz_alloc *a) {
    free(a->recs);
    free(a->written);
    free(a);
}

static void alloc_remove(uintptr_t base) {
    size_t at = alloc_lower_bound(base);
    if (at < n_allocs && allocs[at]->base == base) {
        alloc_free(allocs[at]);
        memmove(allocs + at, allocs + at + 1, (n_allocs - at - 1) * sizeof *allocs);
        n_allocs--;
    }
}

/* The state of the known allocation r (created if asked). Caller holds hz_mu. */
static hz_alloc *alloc_of(const rt_mem_range *r, int create) {
    size_t at = alloc_lower_bound(r->base);
    if (at < n_allocs && allocs[at]->base == r->base) {
        if (allocs[at]->size == r->size) return allocs[at];
        alloc_free(allocs[at]);   /* a stale entry of an earlier allocation at this address */
        memmove(allocs + at, allocs + at + 1, (n_allocs - at - 1) * sizeof *allocs);
        n_allocs--;
    }
    if (!create) return NULL;
    if (n_allocs == cap_allocs) {
        size_t cap = cap_allocs ? cap_allocs * 2 : 64;
        hz_alloc **grown = realloc(allocs, cap * sizeof *grown);
        if (!grown) return NULL;
        allocs = grown;
        cap_allocs = cap;
    }
    hz_alloc *a = calloc(1, sizeof *a);
    if (!a) return NULL;
    a->base = r->base;
    a->size = r->size;
    memmove(allocs + at + 1, allocs + at, (n_allocs - at) * sizeof *allocs);
    allocs[at] = a;
    n_allocs++;
    return a;
}

/* Drops the records the host has seen finish: nothing can conflict with them any more. */
static void prune(hz_alloc *a) {
    size_t keep = 0;
    for (size_t i = 0; i < a->n; i++)
        if (clock_get(&host_clock, a->recs[i].slot) < a->recs[i].seq) a->recs[keep++] = a->recs[i];
    a->n = keep;
}

static void add_record(hz_alloc *a, const hz_record *r) {
    size_t keep = 0;
    for (size_t i = 0; i < a->n; i++) {   /* superseded: same stream, covered, and no stronger */
        const hz_record *o = &a->recs[i];
        int redundant = o->slot == r->slot && r->lo <= o->lo && o->hi <= r->hi && (r->write || !o->write);
        if (!redundant) a->recs[keep++] = *o;
    }
    a->n = keep;
    if (a->n == RECORD_CAP) {   /* bounded: forget the oldest */
        memmove(a->recs, a->recs + 1, (a->n - 1) * sizeof *a->recs);
        a->n--;
    }
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 4;
        hz_record *grown = realloc(a->recs, cap * sizeof *grown);
        if (!grown) return;
        a->recs = grown;
        a->cap = cap;
    }
    a->recs[a->n++] = *r;
}

/* ---- which bytes were written (poisoned device memory) --------------------------------------- */

static void mark_written(hz_alloc *a, uintptr_t lo, uintptr_t hi) {
    if (!a->track_init || lo >= hi) return;
    /* merge every range touching [lo, hi) into it */
    size_t first = 0;
    while (first < a->nw && a->written[first][1] < lo) first++;
    size_t last = first;
    while (last < a->nw && a->written[last][0] <= hi) {
        if (a->written[last][0] < lo) lo = a->written[last][0];
        if (a->written[last][1] > hi) hi = a->written[last][1];
        last++;
    }
    if (last == first) {   /* insert */
        if (a->nw == a->capw) {
            size_t cap = a->capw ? a->capw * 2 : 4;
            uintptr_t(*grown)[2] = realloc(a->written, cap * sizeof *grown);
            if (!grown) return;
            a->written = grown;
            a->capw = cap;
        }
        memmove(a->written + first + 1, a->written + first, (a->nw - first) * sizeof *a->written);
        a->nw++;
    } else {
        memmove(a->written + first + 1, a->written + last, (a->nw - last) * sizeof *a->written);
        a->nw -= last - first - 1;
    }
    a->written[first][0] = lo;
    a->written[first][1] = hi;
}

/* The first byte of [lo, hi) never written, or hi when all were. */
static uintptr_t first_unwritten(const hz_alloc *a, uintptr_t lo, uintptr_t hi) {
    for (size_t i = 0; i < a->nw && lo < hi; i++) {
        if (a->written[i][1] <= lo) continue;
        if (a->written[i][0] > lo) return lo;
        lo = a->written[i][1];
    }
    return lo < hi ? lo : hi;
}

/* ---- findings -------------------------------------------------------------------------------- */

static pyaclnn_stub_hazard findings[FINDING_CAP];
static size_t n_findings;
static pyaclnn_stub_hazard_counts counts;

static void copy_name(char *dst, size_t n, const char *src) {
    snprintf(dst, n, "%s", src ? src : "");
}

/* Logs a finding (stderr, the list, the counters) and keeps its line in msg for an error report. */
static void emit(pyaclnn_stub_hazard *f, char *msg, size_t len) {
    fprintf(stderr, "pyaclnn-stub hazard: %s: %s\n", KIND_NAME[f->kind], f->line);
    int64_t *slot[] = {&counts.read_before_sync, &counts.free_in_flight, &counts.cross_stream, &counts.bad_workspace,
                       &counts.uninitialized_read};
    (*slot[f->kind])++;
    if (n_findings < FINDING_CAP) findings[n_findings++] = *f;
    if (msg && len && !msg[0]) snprintf(msg, len, "hazard %s: %s", KIND_NAME[f->kind], f->line);
}

static const char *verb(int write) { return write ? "writes" : "reads"; }

/* A conflict between an access (by `api`/`op` on stream `stream`, NULL for the host) and record r. */
static void conflict(int kind, const char *api, const char *op, const void *stream, int write, uintptr_t lo,
                     uintptr_t hi, const hz_alloc *a, const hz_record *r, const char *tail, char *msg, size_t len) {
    pyaclnn_stub_hazard f;
    memset(&f, 0, sizeof f);
    f.kind = kind;
    copy_name(f.api, sizeof f.api, api);
    copy_name(f.op, sizeof f.op, op);
    copy_name(f.other_op, sizeof f.other_op, r->op);
    copy_name(f.other_api, sizeof f.other_api, r->api);
    f.stream = stream;
    f.other_stream = r->stream;
    f.lo = lo > r->lo ? lo : r->lo;
    f.hi = hi < r->hi ? hi : r->hi;
    f.alloc = a->base;
    char who[96];
    if (stream) snprintf(who, sizeof who, "%s (%s) on stream %p", api, op, stream);
    else snprintf(who, sizeof who, "%s on the host", api);
    snprintf(f.line, sizeof f.line,
             "%s %s bytes [0x%" PRIxPTR ", 0x%" PRIxPTR ") (offset %zu..%zu of the allocation at 0x%" PRIxPTR
             "), which %s on stream %p %s (queued by %s as task %" PRIu64 " of that stream); %s",
             who, kind == 1 ? "frees" : verb(write), (uintptr_t)f.lo, (uintptr_t)f.hi, (size_t)(f.lo - a->base),
             (size_t)(f.hi - a->base), a->base, r->op, r->stream, verb(r->write), r->api, r->seq, tail);
    emit(&f, msg, len);
}

/* ---- access checks --------------------------------------------------------------------------- */

typedef struct {
    hz_alloc *alloc;
    uintptr_t lo, hi;
    int write;
} placed;

/* Where an access lands: its known allocation (created) and its range clipped to it; 0 if unknown. */
static int place(const pyaclnn_stub_access *acc, placed *out) {
    if (!acc->addr || acc->nbytes == 0) return 0;
    rt_mem_range r;
    if (!rt_mem_table_find((uintptr_t)acc->addr, &r) || r.kind == RT_MEM_PAGEABLE) return 0;
    out->alloc = alloc_of(&r, 1);
    if (!out->alloc) return 0;
    out->lo = (uintptr_t)acc->addr;
    out->hi = out->lo + (acc->nbytes < r.base + r.size - out->lo ? acc->nbytes : r.base + r.size - out->lo);
    out->write = acc->write;
    return 1;
}

/* The first record of a that the access conflicts with, given the accessor's clock (and its own
 * slot, or UINT32_MAX for the host). */
static const hz_record *first_conflict(const hz_alloc *a, uintptr_t lo, uintptr_t hi, int write,
                                       const rt_hz_clock *view, uint32_t self) {
    for (size_t i = 0; i < a->n; i++) {
        const hz_record *r = &a->recs[i];
        if (r->hi <= lo || hi <= r->lo || !(r->write || write) || r->slot == self) continue;
        if (clock_get(view, r->slot) < r->seq) return r;
    }
    return NULL;
}

static const char CROSS_TAIL[] = "no event wait or synchronisation orders them (aclrtRecordEvent on the other "
                                 "stream + aclrtStreamWaitEvent on this one)";
static const char SYNC_TAIL[] = "no synchronisation has waited for that task (aclrtSynchronizeStream, "
                                "aclrtSynchronizeEvent or aclrtSynchronizeDevice first)";

int rt_hz_enqueue(const char *func, rt_stream *s, const rt_task *t, uint64_t index, const rt_hz_task *info,
                  char *msg, size_t len) {
    pyaclnn_stub_access acc[3];
    const pyaclnn_stub_access *list = NULL;
    size_t n = 0;
    const char *op = NULL;
    switch (t->kind) {
    case RT_TASK_COPY:
        acc[0] = (pyaclnn_stub_access){t->u.copy.src, t->u.copy.count, 0};
        acc[1] = (pyaclnn_stub_access){t->u.copy.dst, t->u.copy.count, 1};
        list = acc, n = 2, op = "memcpy";
        break;
    case RT_TASK_COPY2D: {
        size_t rows = t->u.copy2d.height - 1;
        acc[0] = (pyaclnn_stub_access){t->u.copy2d.src, rows * t->u.copy2d.spitch + t->u.copy2d.width, 0};
        acc[1] = (pyaclnn_stub_access){t->u.copy2d.dst, rows * t->u.copy2d.dpitch + t->u.copy2d.width, 1};
        list = acc, n = 2, op = "memcpy2d";
        break;
    }
    case RT_TASK_SET:
        acc[0] = (pyaclnn_stub_access){t->u.set.dst, t->u.set.count, 1};
        list = acc, n = 1, op = "memset";
        break;
    case RT_TASK_CALL:
        if (info) list = info->acc, n = info->n, op = info->op;
        break;
    default:
        break;
    }
    if (msg && len) msg[0] = '\0';
    pthread_mutex_lock(&hz_mu);
    uint32_t self = s->hz_slot;
    clock_join(&s->hz_vc, &host_clock);
    clock_set(&s->hz_vc, self, index);
    if (t->kind == RT_TASK_RECORD) clock_copy(&t->u.mark.event->hz_vc, &s->hz_vc);
    /* the event's clock is that of the record this wait captured (both taken under the event's lock) */
    if (t->kind == RT_TASK_WAIT) clock_join(&s->hz_vc, &t->u.mark.event->hz_vc);
    if (info && info->sync == RT_HZ_SYNC_VALUE_WAIT)
        for (size_t i = n_vwrites; i-- > 0;)   /* the latest satisfying write queued before the wait */
            if (vwrites[i].addr == (uintptr_t)info->sync_addr &&
                value_satisfies(vwrites[i].value, info->sync_value, info->sync_flag)) {
                clock_join(&s->hz_vc, &vwrites[i].vc);
                break;
            }
    if (info && info->sync == RT_HZ_SYNC_VALUE_WRITE)
        value_write_note((uintptr_t)info->sync_addr, info->sync_value, &s->hz_vc);
    if (info && info->sync == RT_HZ_SYNC_SNAPSHOT && info->snapshot) clock_copy(info->snapshot, &s->hz_vc);

    int refused = 0, reported = 0, uninit_reported = 0;
    placed where[8];
    placed *spots = n <= 8 ? where : malloc(n * sizeof *spots);
    size_t m = 0;
    for (size_t i = 0; spots && i < n; i++) {
        if (!place(&list[i], &spots[m])) continue;
        placed *p = &spots[m++];
        prune(p->alloc);
        const hz_record *r = reported ? NULL : first_conflict(p->alloc, p->lo, p->hi, p->write, &s->hz_vc, self);
        if (r) {   /* one line per task: its first conflicting access */
            conflict(2, func, op, s, p->write, p->lo, p->hi, p->alloc, r, CROSS_TAIL, msg, len);
            refused = reported = 1;
        }
        if (!p->write && !uninit_reported && p->alloc->track_init && info && info->is_operator) {
            uintptr_t bad = first_unwritten(p->alloc, p->lo, p->hi);
            if (bad < p->hi) {
                pyaclnn_stub_hazard f;
                memset(&f, 0, sizeof f);
                f.kind = 4;
                copy_name(f.api, sizeof f.api, func);
                copy_name(f.op, sizeof f.op, op);
                f.stream = s;
                f.lo = bad;
                f.hi = p->hi;
                f.alloc = p->alloc->base;
                snprintf(f.line, sizeof f.line,
                         "%s (%s) on stream %p reads bytes [0x%" PRIxPTR ", 0x%" PRIxPTR ") (offset %zu.. of the "
                         "allocation at 0x%" PRIxPTR "), starting at 0x%" PRIxPTR " which nothing has written "
                         "since aclrtMalloc (it holds the poison pattern 0x%02X)", func, op ? op : "", (void *)s,
                         p->lo, p->hi, (size_t)(p->lo - p->alloc->base), p->alloc->base, bad, POISON_BYTE);
                emit(&f, msg, len);
                refused = uninit_reported = 1;
            }
        }
    }
    /* error mode: an ordering bug is "not complete" (507004); only an uninitialised read, a memory error */
    int code = !refused || rt_hz_mode != 2 ? 0
             : reported ? ACL_ERROR_RT_STREAM_NOT_COMPLETE : ACL_ERROR_RT_DEVICE_MEM_ERROR;
    if (code == 0) {   /* queued: record its accesses */
        for (size_t i = 0; i < m; i++) {
            hz_record r = {spots[i].lo, spots[i].hi, spots[i].write, self, index, s, "", ""};
            copy_name(r.op, sizeof r.op, op);
            copy_name(r.api, sizeof r.api, func);
            add_record(spots[i].alloc, &r);
            if (spots[i].write) mark_written(spots[i].alloc, spots[i].lo, spots[i].hi);
        }
    }
    if (spots != where) free(spots);
    pthread_mutex_unlock(&hz_mu);
    return code;
}

/* The stream whose host function or callback the calling thread runs (UINT32_MAX: none). That code
 * sits at one point of its stream: the stream's earlier work is before it, its later work after it. */
static _Thread_local uint32_t tls_host_slot = UINT32_MAX;

void rt_hz_host_in_stream(rt_stream *s) { tls_host_slot = s ? s->hz_slot : UINT32_MAX; }

int rt_hz_host_access(const char *func, const pyaclnn_stub_access *acc, size_t n, char *msg, size_t len) {
    if (msg && len) msg[0] = '\0';
    int found = 0;
    pthread_mutex_lock(&hz_mu);
    placed spots[2];
    size_t m = 0;
    for (size_t i = 0; i < n && m < 2; i++) {
        if (!place(&acc[i], &spots[m])) continue;
        placed *p = &spots[m++];
        prune(p->alloc);
        const hz_record *r = found ? NULL : first_conflict(p->alloc, p->lo, p->hi, p->write, &host_clock, tls_host_slot);
        if (r) {
            conflict(0, func, "host", NULL, p->write, p->lo, p->hi, p->alloc, r, SYNC_TAIL, msg, len);
            found = 1;
        }
    }
    int code = found && rt_hz_mode == 2 ? ACL_ERROR_RT_STREAM_NOT_COMPLETE : 0;
    if (code == 0)
        for (size_t i = 0; i < m; i++)
            if (spots[i].write) mark_written(spots[i].alloc, spots[i].lo, spots[i].hi);
    pthread_mutex_unlock(&hz_mu);
    return code;
}

int rt_hz_free(const char *func, uintptr_t base, char *msg, size_t len) {
    if (msg && len) msg[0] = '\0';
    int found = 0;
    pthread_mutex_lock(&hz_mu);
    size_t at = alloc_lower_bound(base);
    if (at < n_allocs && allocs[at]->base == base) {
        hz_alloc *a = allocs[at];
        prune(a);
        if (a->n) {   /* one line per free: the first record still unfinished */
            conflict(1, func, "host", NULL, 1, a->base, a->base + a->size, a, &a->recs[0], SYNC_TAIL, msg, len);
            found = 1;
        }
    }
    int code = found && rt_hz_mode == 2 ? ACL_ERROR_RT_STREAM_NOT_COMPLETE : 0;
    if (code == 0) alloc_remove(base);
    pthread_mutex_unlock(&hz_mu);
    return code;
}

/* Tests that provoke a hazard on purpose switch the checker off around it. What was recorded is
 * dropped at every change: a record the checker could not follow to its end would be reported later. */
PYACLNN_STUB_API int pyaclnn_stub_hazard_set_mode(int mode) {
    if (mode < 0 || mode > 2) return -1;
    pthread_mutex_lock(&hz_mu);
    int old = atomic_load(&rt_hz_mode);
    if (old != mode) {
        for (size_t i = 0; i < n_allocs; i++) alloc_free(allocs[i]);
        n_allocs = 0;
        for (size_t i = 0; i < n_vwrites; i++) free(vwrites[i].vc.c);
        n_vwrites = 0;
        atomic_store(&rt_hz_mode, mode);
    }
    pthread_mutex_unlock(&hz_mu);
    return old;
}

void rt_hz_forget(uintptr_t base) {
    pthread_mutex_lock(&hz_mu);
    alloc_remove(base);
    pthread_mutex_unlock(&hz_mu);
}

void rt_hz_malloc(uintptr_t base, size_t size) {
    if (rt_hz_poison) memset((void *)base, POISON_BYTE, size);
    if (!rt_hz_poison) return;
    rt_mem_range r = {base, size, size, RT_MEM_DEVICE, 0, NULL};
    pthread_mutex_lock(&hz_mu);
    hz_alloc *a = alloc_of(&r, 1);
    if (a) {
        a->track_init = 1;
        a->nw = 0;
    }
    pthread_mutex_unlock(&hz_mu);
}

/* ---- synchronisation ------------------------------------------------------------------------- */

void rt_hz_stream_snapshot(rt_stream *s, rt_hz_clock *out) {
    out->c = NULL;
    out->n = 0;
    pthread_mutex_lock(&hz_mu);
    clock_join(out, &s->hz_vc);   /* taken before the caller reads how far to wait: it covers no more */
    pthread_mutex_unlock(&hz_mu);
}

void rt_hz_event_snapshot(rt_event *ev, rt_hz_clock *out) {
    out->c = NULL;
    out->n = 0;
    pthread_mutex_lock(&hz_mu);
    clock_join(out, &ev->hz_vc);
    pthread_mutex_unlock(&hz_mu);
}

void rt_hz_host_join(rt_hz_clock *c) {
    pthread_mutex_lock(&hz_mu);
    clock_join(&host_clock, c);
    pthread_mutex_unlock(&hz_mu);
    free(c->c);
    c->c = NULL;
    c->n = 0;
}

void rt_hz_host_saw(rt_stream *s, uint64_t index) {
    pthread_mutex_lock(&hz_mu);
    clock_set(&host_clock, s->hz_slot, index);
    pthread_mutex_unlock(&hz_mu);
}

void rt_hz_event_reset(rt_event *ev) {
    pthread_mutex_lock(&hz_mu);
    if (ev->hz_vc.n) memset(ev->hz_vc.c, 0, ev->hz_vc.n * sizeof *ev->hz_vc.c);
    pthread_mutex_unlock(&hz_mu);
}

/* ---- cross-library API ----------------------------------------------------------------------- */

PYACLNN_STUB_API void pyaclnn_stub_hazard_note(int kind, const char *api, const char *op, aclrtStream stream,
                                               const void *addr, uint64_t nbytes, const char *why) {
    if (!rt_hz_mode || kind < 0 || kind > 4) return;
    pyaclnn_stub_hazard f;
    memset(&f, 0, sizeof f);
    f.kind = kind;
    copy_name(f.api, sizeof f.api, api);
    copy_name(f.op, sizeof f.op, op);
    f.stream = stream;
    f.lo = (uint64_t)(uintptr_t)addr;
    f.hi = f.lo + nbytes;
    rt_mem_range r;
    if (addr && rt_mem_table_find((uintptr_t)addr, &r)) f.alloc = r.base;
    snprintf(f.line, sizeof f.line, "%s (%s) on stream %p: %s", api ? api : "", op ? op : "", (void *)stream,
             why ? why : "");
    pthread_mutex_lock(&hz_mu);
    emit(&f, NULL, 0);
    pthread_mutex_unlock(&hz_mu);
}

PYACLNN_STUB_API size_t pyaclnn_stub_hazards(pyaclnn_stub_hazard *out, size_t cap, int clear) {
    pthread_mutex_lock(&hz_mu);
    size_t n = n_findings;
    if (out) {
        if (n > cap) n = cap;
        memcpy(out, findings, n * sizeof *out);
    }
    if (clear) {
        n_findings = 0;
        memset(&counts, 0, sizeof counts);
    }
    pthread_mutex_unlock(&hz_mu);
    return n;
}

PYACLNN_STUB_API void pyaclnn_stub_hazard_counts_get(pyaclnn_stub_hazard_counts *out) {
    if (!out) return;
    pthread_mutex_lock(&hz_mu);
    *out = counts;
    pthread_mutex_unlock(&hz_mu);
}
