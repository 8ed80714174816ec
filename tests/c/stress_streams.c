/*
 * Concurrency stress of the stub: several host threads, each bound to one of several emulated
 * devices, each with two streams of its own, drive a chain of aclnnAmpUpdateScale launches fed by
 * asynchronous copies and ping-pong between the two streams through events:
 *
 *   stream A: copy foundInf[i] host->device (pinned, truly async) -> AmpUpdateScale in place
 *             -> record evA
 *   stream B: wait evA -> copy the state into history[i] (device->device) -> memset a scratch
 *             block -> record evB
 *   stream A: wait evB before the next launch overwrites the state
 *
 * Every workload is a pure function of its id, so the histories of the concurrent run must equal
 * those of a serial run of the same workloads, and both must equal a host model of the operator
 * (the arithmetic of spec section A.3 in fp32). A missed dependency shows up as a wrong history
 * entry; a deadlock trips the watchdog (exit 3). At the end every live-object count must be 0.
 *
 * Half of the workloads relaunch one repeatable executor (re-pointed with aclSetInputTensorAddr),
 * the other half build a single-use executor per launch, so nnopbase is exercised concurrently too.
 * On an Ascend950 SoC (the default) every eighth step also quantises a fresh [64, 256] fp16 block
 * with aclnnGroupedDynamicMxQuant on stream B (its kernel spreads work over threads of its own) and
 * keeps y and mxscale; those histories must equal the serial run's byte for byte.
 *
 *   stress_streams [-t threads] [-d devices] [-n iterations] [-r rounds] [-w watchdog_seconds]
 *
 * Exit status: 0 ok, 1 wrong results or leaks, 2 an API call failed, 3 watchdog (deadlock).
 * Built by tests/test_concurrency.py and .ci/run (also with -fsanitize=thread against build/tsan).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_amp_update_scale.h"
#include "aclnnop/aclnn_grouped_dynamic_mx_quant.h"
#include "pyaclnn_stub.h"

#define GROWTH_FACTOR 2.0f
#define BACKOFF_FACTOR 0.5f
#define GROWTH_INTERVAL 3
#define INITIAL_SCALE 1024.0f
#define SCRATCH_BYTES 4096
#define GMQ_EVERY 8                                  /* steps between two quantisations    */
#define GMQ_ROWS 64
#define GMQ_COLS 256
#define GMQ_X_BYTES (GMQ_ROWS * GMQ_COLS * 2)        /* fp16                               */
#define GMQ_Y_BYTES (GMQ_ROWS * GMQ_COLS)            /* FLOAT8_E4M3FN                      */
#define GMQ_MS_ROWS (GMQ_ROWS / 64 + 2)              /* m / 64 + g, with g = 2 groups       */
#define GMQ_MS_BYTES (GMQ_MS_ROWS * GMQ_COLS * 2)    /* FLOAT8_E8M0, [m/64 + g, n, 2]       */

typedef struct {
    int id, device, iterations;
    int gmq;                    /* also run GroupedDynamicMxQuant (Ascend950 only)          */
    float *scale_history;       /* [iterations], filled by the run */
    int32_t *tracker_history;
    unsigned char *gmq_history; /* [iterations / GMQ_EVERY] x (y, mxscale) bytes            */
    int failed;                 /* an API call failed (message printed) */
} workload;

static size_t gmq_slots(const workload *w) { return w->gmq ? (size_t)(w->iterations / GMQ_EVERY) : 0; }

/* ---- helpers ----------------------------------------------------------------------------------- */

#define CALL(w, expr)                                                                              \
    do {                                                                                           \
        int status_ = (int)(expr);                                                                 \
        if (status_ != 0) {                                                                        \
            const char *msg_ = aclGetRecentErrMsg();                                               \
            fprintf(stderr, "workload %d: %s failed with %d: %s\n", (w)->id, #expr, status_,        \
                    msg_ ? msg_ : "(no message)");                                                 \
            (w)->failed = 1;                                                                       \
            goto out;                                                                              \
        }                                                                                          \
    } while (0)

/* Deterministic "found an inf" pattern of workload id at step i (about one step in five). */
static int found_inf_at(int id, int i) {
    uint32_t h = (uint32_t)id * 2654435761u ^ (uint32_t)i * 40503u;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    return h % 5 == 0;
}

/* Host model of the operator (spec A.3, fp32): what history[i] must hold. */
static void model(const workload *w, float *scale_out, int32_t *tracker_out) {
    float scale = INITIAL_SCALE;
    int32_t tracker = 0;
    for (int i = 0; i < w->iterations; i++) {
        if (found_inf_at(w->id, i)) {
            scale *= BACKOFF_FACTOR;
            tracker = 0;
        } else if (tracker + 1 == GROWTH_INTERVAL) {
            float grown = scale * GROWTH_FACTOR;
            if (isfinite(grown)) scale = grown;
            tracker = 0;
        } else {
            tracker++;
        }
        scale_out[i] = scale;
        tracker_out[i] = tracker;
    }
}

static aclTensor *scalar_tensor(aclDataType dtype, void *addr) {
    int64_t shape[1] = {1}, strides[1] = {1};
    return aclCreateTensor(shape, 1, dtype, strides, 0, ACL_FORMAT_ND, shape, 1, addr);
}

static aclTensor *nd_tensor(aclDataType dtype, const int64_t *shape, uint64_t rank, void *addr) {
    return aclCreateTensor(shape, rank, dtype, NULL, 0, ACL_FORMAT_ND, shape, rank, addr);
}

/* Finite fp16 inputs of quantisation `slot` of workload `id` (|x| < 2, both signs). */
static void gmq_input(int id, size_t slot, uint16_t *x) {
    for (size_t k = 0; k < GMQ_ROWS * GMQ_COLS; k++) {
        uint32_t h = (uint32_t)id * 2246822519u ^ (uint32_t)slot * 3266489917u ^ (uint32_t)k * 668265263u;
        h ^= h >> 15;
        h *= 0x2c1b3c6du;
        h ^= h >> 12;
        x[k] = (uint16_t)((h & 0x3FFF) | (h & 0x8000));
    }
}

/* The GroupedDynamicMxQuant side of a workload: buffers, tensors and the per-slot launch. */
typedef struct {
    uint16_t *pinned_x;          /* all slots' inputs, pinned so the copies are truly async */
    void *x, *group_index, *y, *mxscale, *history, *workspace;
    uint64_t workspace_size;
    aclTensor *t_x, *t_gi, *t_y, *t_ms;
} gmq_state;

static int gmq_setup(workload *w, gmq_state *g) {
    size_t slots = gmq_slots(w);
    int32_t ends[2] = {32, 64};
    int64_t x_shape[2] = {GMQ_ROWS, GMQ_COLS}, gi_shape[1] = {2}, ms_shape[3] = {GMQ_MS_ROWS, GMQ_COLS, 2};
    CALL(w, aclrtMallocHost((void **)&g->pinned_x, slots * GMQ_X_BYTES));
    for (size_t s = 0; s < slots; s++) gmq_input(w->id, s, g->pinned_x + s * GMQ_ROWS * GMQ_COLS);
    CALL(w, aclrtMalloc(&g->x, GMQ_X_BYTES, ACL_MEM_MALLOC_HUGE_FIRST));
    CALL(w, aclrtMalloc(&g->group_index, sizeof ends, ACL_MEM_MALLOC_HUGE_FIRST));
    CALL(w, aclrtMalloc(&g->y, GMQ_Y_BYTES, ACL_MEM_MALLOC_HUGE_FIRST));
    CALL(w, aclrtMalloc(&g->mxscale, GMQ_MS_BYTES, ACL_MEM_MALLOC_HUGE_FIRST));
    CALL(w, aclrtMalloc(&g->history, slots * (GMQ_Y_BYTES + GMQ_MS_BYTES), ACL_MEM_MALLOC_HUGE_FIRST));
    CALL(w, aclrtMemcpy(g->group_index, sizeof ends, ends, sizeof ends, ACL_MEMCPY_HOST_TO_DEVICE));
    /* Bytes the kernel leaves alone (spec 3.4) must be the same in every run: start from zero. */
    CALL(w, aclrtMemset(g->y, GMQ_Y_BYTES, 0, GMQ_Y_BYTES));
    CALL(w, aclrtMemset(g->mxscale, GMQ_MS_BYTES, 0, GMQ_MS_BYTES));
    g->t_x = nd_tensor(ACL_FLOAT16, x_shape, 2, g->x);
    g->t_gi = nd_tensor(ACL_INT32, gi_shape, 1, g->group_index);
    g->t_y = nd_tensor(ACL_FLOAT8_E4M3FN, x_shape, 2, g->y);
    g->t_ms = nd_tensor(ACL_FLOAT8_E8M0, ms_shape, 3, g->mxscale);
    if (!g->t_x || !g->t_gi || !g->t_y || !g->t_ms) {
        fprintf(stderr, "workload %d: aclCreateTensor failed for GroupedDynamicMxQuant\n", w->id);
        w->failed = 1;
    }
    return !w->failed;
out:
    return 0;
}

/* Slot s on stream b: fresh input, quantise, keep (y, mxscale) in the history. */
static int gmq_step(workload *w, gmq_state *g, size_t s, aclrtStream b) {
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    unsigned char *slot = (unsigned char *)g->history + s * (GMQ_Y_BYTES + GMQ_MS_BYTES);
    CALL(w, aclrtMemcpyAsync(g->x, GMQ_X_BYTES, g->pinned_x + s * GMQ_ROWS * GMQ_COLS, GMQ_X_BYTES,
                             ACL_MEMCPY_HOST_TO_DEVICE, b));
    CALL(w, aclnnGroupedDynamicMxQuantGetWorkspaceSize(g->t_x, g->t_gi, "rint", ACL_FLOAT8_E4M3FN, 32, g->t_y,
                                                       g->t_ms, &ws, &ex));
    if (ws > g->workspace_size) {   /* the same size every time; allocated once */
        if (g->workspace) CALL(w, aclrtFree(g->workspace));
        g->workspace = NULL;
        CALL(w, aclrtMalloc(&g->workspace, ws, ACL_MEM_MALLOC_HUGE_FIRST));
        g->workspace_size = ws;
    }
    CALL(w, aclnnGroupedDynamicMxQuant(g->workspace, ws, ex, b));
    CALL(w, aclrtMemcpyAsync(slot, GMQ_Y_BYTES, g->y, GMQ_Y_BYTES, ACL_MEMCPY_DEVICE_TO_DEVICE, b));
    CALL(w, aclrtMemcpyAsync(slot + GMQ_Y_BYTES, GMQ_MS_BYTES, g->mxscale, GMQ_MS_BYTES,
                             ACL_MEMCPY_DEVICE_TO_DEVICE, b));
    return 1;
out:
    return 0;
}

static void gmq_release(gmq_state *g) {
    aclDestroyTensor(g->t_x);
    aclDestroyTensor(g->t_gi);
    aclDestroyTensor(g->t_y);
    aclDestroyTensor(g->t_ms);
    void *blocks[] = {g->x, g->group_index, g->y, g->mxscale, g->history, g->workspace};
    for (size_t k = 0; k < sizeof blocks / sizeof *blocks; k++)
        if (blocks[k]) aclrtFree(blocks[k]);
    if (g->pinned_x) aclrtFreeHost(g->pinned_x);
}

/* ---- one workload ------------------------------------------------------------------------------ */

static void run_workload(workload *w) {
    int n = w->iterations;
    aclrtStream a = NULL, b = NULL;
    aclrtEvent ev_a = NULL, ev_b = NULL;
    float *pinned_found = NULL;
    void *scale = NULL, *tracker = NULL, *found = NULL, *hist_scale = NULL, *hist_tracker = NULL, *scratch = NULL;
    aclTensor *t_scale = NULL, *t_tracker = NULL, *t_found = NULL;
    aclOpExecutor *repeatable = NULL;
    gmq_state g;
    memset(&g, 0, sizeof g);
    int device_set = 0;
    float init_scale = INITIAL_SCALE;
    int32_t init_tracker = 0;

    CALL(w, aclrtSetDevice(w->device));
    device_set = 1;
    CALL(w, aclrtCreateStream(&a));
    CALL(w, aclrtCreateStream(&b));
    CALL(w, aclrtCreateEvent(&ev_a));
    CALL(w, aclrtCreateEventWithFlag(&ev_b, ACL_EVENT_SYNC));
    CALL(w, aclrtMallocHost((void **)&pinned_found, (size_t)n * sizeof(float)));
    for (int i = 0; i < n; i++) pinned_found[i] = found_inf_at(w->id, i) ? 1.0f : 0.0f;
    CALL(w, aclrtMalloc(&scale, sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST));
    CALL(w, aclrtMalloc(&tracker, sizeof(int32_t), ACL_MEM_MALLOC_HUGE_FIRST));
    CALL(w, aclrtMalloc(&found, (size_t)n * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST));
    CALL(w, aclrtMalloc(&hist_scale, (size_t)n * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST));
    CALL(w, aclrtMalloc(&hist_tracker, (size_t)n * sizeof(int32_t), ACL_MEM_MALLOC_HUGE_FIRST));
    CALL(w, aclrtMalloc(&scratch, SCRATCH_BYTES, ACL_MEM_MALLOC_NORMAL_ONLY));
    CALL(w, aclrtMemcpy(scale, sizeof init_scale, &init_scale, sizeof init_scale, ACL_MEMCPY_HOST_TO_DEVICE));
    CALL(w, aclrtMemcpy(tracker, sizeof init_tracker, &init_tracker, sizeof init_tracker, ACL_MEMCPY_HOST_TO_DEVICE));

    /* In place, as torch_npu calls it: the inputs are the outputs. */
    t_scale = scalar_tensor(ACL_FLOAT, scale);
    t_tracker = scalar_tensor(ACL_INT32, tracker);
    t_found = scalar_tensor(ACL_FLOAT, found);
    if (!t_scale || !t_tracker || !t_found) {
        fprintf(stderr, "workload %d: aclCreateTensor failed\n", w->id);
        w->failed = 1;
        goto out;
    }
    if (w->gmq && !gmq_setup(w, &g)) goto out;
    int use_repeatable = w->id % 2 == 0;
    uint64_t ws = 0;
    if (use_repeatable) {
        CALL(w, aclnnAmpUpdateScaleGetWorkspaceSize(t_scale, t_tracker, t_found, GROWTH_FACTOR, BACKOFF_FACTOR,
                                                    GROWTH_INTERVAL, t_scale, t_tracker, &ws, &repeatable));
        CALL(w, aclSetAclOpExecutorRepeatable(repeatable));
    }

    for (int i = 0; i < n; i++) {
        float *found_i = (float *)found + i;
        CALL(w, aclrtMemcpyAsync(found_i, sizeof(float), pinned_found + i, sizeof(float),
                                 ACL_MEMCPY_HOST_TO_DEVICE, a));
        if (i > 0) CALL(w, aclrtStreamWaitEvent(a, ev_b));   /* B has copied state i-1 */
        if (use_repeatable) {
            CALL(w, aclSetInputTensorAddr(repeatable, 2, t_found, found_i));
            CALL(w, aclnnAmpUpdateScale(NULL, 0, repeatable, a));
        } else {
            aclOpExecutor *once = NULL;
            CALL(w, aclSetRawTensorAddr(t_found, found_i));
            CALL(w, aclnnAmpUpdateScaleGetWorkspaceSize(t_scale, t_tracker, t_found, GROWTH_FACTOR, BACKOFF_FACTOR,
                                                        GROWTH_INTERVAL, t_scale, t_tracker, &ws, &once));
            CALL(w, aclnnAmpUpdateScale(NULL, 0, once, a));
        }
        CALL(w, aclrtRecordEvent(ev_a, a));
        CALL(w, aclrtStreamWaitEvent(b, ev_a));
        CALL(w, aclrtMemcpyAsync((float *)hist_scale + i, sizeof(float), scale, sizeof(float),
                                 ACL_MEMCPY_DEVICE_TO_DEVICE, b));
        CALL(w, aclrtMemcpyAsync((int32_t *)hist_tracker + i, sizeof(int32_t), tracker, sizeof(int32_t),
                                 ACL_MEMCPY_DEVICE_TO_DEVICE, b));
        CALL(w, aclrtMemsetAsync(scratch, SCRATCH_BYTES, i & 0xFF, SCRATCH_BYTES, b));
        if (w->gmq && i % GMQ_EVERY == GMQ_EVERY - 1 && !gmq_step(w, &g, (size_t)(i / GMQ_EVERY), b)) goto out;
        CALL(w, aclrtRecordEvent(ev_b, b));
        if (i % 16 == 15) CALL(w, aclrtSynchronizeEvent(ev_b));   /* host joins in now and then */
    }
    CALL(w, aclrtSynchronizeStream(a));
    CALL(w, aclrtSynchronizeStreamWithTimeout(b, -1));
    CALL(w, aclrtMemcpy(w->scale_history, (size_t)n * sizeof(float), hist_scale, (size_t)n * sizeof(float),
                        ACL_MEMCPY_DEVICE_TO_HOST));
    CALL(w, aclrtMemcpy(w->tracker_history, (size_t)n * sizeof(int32_t), hist_tracker, (size_t)n * sizeof(int32_t),
                        ACL_MEMCPY_DEVICE_TO_HOST));
    if (w->gmq) {
        size_t bytes = gmq_slots(w) * (GMQ_Y_BYTES + GMQ_MS_BYTES);
        CALL(w, aclrtMemcpy(w->gmq_history, bytes, g.history, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    }

out:
    /* Release in reverse; after a failure some of these are NULL (each destroy accepts that or
     * reports harmlessly). */
    if (a) aclrtSynchronizeStream(a);
    if (b) aclrtSynchronizeStream(b);
    if (repeatable) aclDestroyAclOpExecutor(repeatable);
    gmq_release(&g);
    aclDestroyTensor(t_found);
    aclDestroyTensor(t_tracker);
    aclDestroyTensor(t_scale);
    void *device_blocks[] = {scratch, hist_tracker, hist_scale, found, tracker, scale};
    for (size_t k = 0; k < sizeof device_blocks / sizeof *device_blocks; k++)
        if (device_blocks[k]) aclrtFree(device_blocks[k]);
    if (pinned_found) aclrtFreeHost(pinned_found);
    if (ev_b) aclrtDestroyEvent(ev_b);
    if (ev_a) aclrtDestroyEvent(ev_a);
    if (b) aclrtDestroyStream(b);
    if (a) aclrtDestroyStream(a);
    if (device_set) aclrtResetDevice(w->device);
}

static void *thread_main(void *arg) {
    run_workload(arg);
    return NULL;
}

/* ---- watchdog ---------------------------------------------------------------------------------- */

static pthread_mutex_t watchdog_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t watchdog_cv = PTHREAD_COND_INITIALIZER;
static int watchdog_done;
static int watchdog_seconds = 60;

static void *watchdog_main(void *arg) {
    (void)arg;
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += watchdog_seconds;
    pthread_mutex_lock(&watchdog_mu);
    int rc = 0;
    while (!watchdog_done && rc == 0) rc = pthread_cond_timedwait(&watchdog_cv, &watchdog_mu, &deadline);
    int fired = !watchdog_done;
    pthread_mutex_unlock(&watchdog_mu);
    if (fired) {
        fprintf(stderr, "stress: no completion within %d s: deadlock (or a machine far too slow)\n",
                watchdog_seconds);
        fflush(stderr);
        _exit(3);
    }
    return NULL;
}

/* ---- driver ------------------------------------------------------------------------------------ */

static workload *make_workloads(int threads, int devices, int iterations, int gmq) {
    workload *ws = calloc((size_t)threads, sizeof *ws);
    for (int t = 0; ws && t < threads; t++) {
        ws[t].id = t;
        ws[t].device = t % devices;
        ws[t].iterations = iterations;
        ws[t].gmq = gmq;
        ws[t].scale_history = calloc((size_t)iterations, sizeof(float));
        ws[t].tracker_history = calloc((size_t)iterations, sizeof(int32_t));
        ws[t].gmq_history = calloc(gmq_slots(&ws[t]) + 1, GMQ_Y_BYTES + GMQ_MS_BYTES);
        if (!ws[t].scale_history || !ws[t].tracker_history || !ws[t].gmq_history) return NULL;
    }
    return ws;
}

static void free_workloads(workload *ws, int threads) {
    for (int t = 0; t < threads; t++) {
        free(ws[t].scale_history);
        free(ws[t].tracker_history);
        free(ws[t].gmq_history);
    }
    free(ws);
}

/* Compares a run's histories with the reference; prints the first difference. Returns 0 if equal. */
static int compare(const char *what, const workload *got, const float *want_scale, const int32_t *want_tracker) {
    for (int i = 0; i < got->iterations; i++) {
        if (got->scale_history[i] != want_scale[i] || got->tracker_history[i] != want_tracker[i]) {
            fprintf(stderr, "%s: workload %d step %d: scale %g tracker %d, expected scale %g tracker %d\n", what,
                    got->id, i, (double)got->scale_history[i], got->tracker_history[i], (double)want_scale[i],
                    want_tracker[i]);
            return 1;
        }
    }
    return 0;
}

/* Compares the quantisation histories of two runs of one workload. Returns 0 if equal. */
static int compare_gmq(const char *what, const workload *got, const workload *want) {
    size_t slot_bytes = GMQ_Y_BYTES + GMQ_MS_BYTES;
    for (size_t s = 0; s < gmq_slots(got); s++) {
        if (memcmp(got->gmq_history + s * slot_bytes, want->gmq_history + s * slot_bytes, slot_bytes) != 0) {
            fprintf(stderr, "%s: workload %d quantisation %zu: y or mxscale bytes differ\n", what, got->id, s);
            return 1;
        }
    }
    return 0;
}

static int leaks_left(void) {
    pyaclnn_stub_counts c;
    pyaclnn_stub_live_counts(&c);
    int64_t total = c.device_allocations + c.host_allocations + c.streams + c.events + c.contexts + c.tensors +
                    c.scalars + c.arrays + c.tensor_lists + c.scalar_lists + c.executors;
    if (total != 0)
        fprintf(stderr, "stress: objects still alive: device allocations %lld, host allocations %lld, streams %lld, "
                "events %lld, contexts %lld, tensors %lld, executors %lld\n", (long long)c.device_allocations,
                (long long)c.host_allocations, (long long)c.streams, (long long)c.events, (long long)c.contexts,
                (long long)c.tensors, (long long)c.executors);
    return total != 0;
}

static int parse_int(const char *s, int lo, int hi, const char *what) {
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < lo || v > hi) {
        fprintf(stderr, "stress: %s must be an integer in [%d, %d]\n", what, lo, hi);
        exit(2);
    }
    return (int)v;
}

int main(int argc, char **argv) {
    int threads = 4, devices = 2, iterations = 64, rounds = 1, opt;
    while ((opt = getopt(argc, argv, "t:d:n:r:w:")) != -1) {
        switch (opt) {
        case 't': threads = parse_int(optarg, 1, 64, "-t threads"); break;
        case 'd': devices = parse_int(optarg, 1, 64, "-d devices"); break;
        case 'n': iterations = parse_int(optarg, 1, 100000, "-n iterations"); break;
        case 'r': rounds = parse_int(optarg, 1, 10000, "-r rounds"); break;
        case 'w': watchdog_seconds = parse_int(optarg, 1, 86400, "-w watchdog seconds"); break;
        default:
            fprintf(stderr, "usage: %s [-t threads] [-d devices] [-n iterations] [-r rounds] [-w seconds]\n", argv[0]);
            return 2;
        }
    }
    /* The emulated device count is read once, at the first runtime call. */
    char count[16];
    snprintf(count, sizeof count, "%d", devices);
    setenv("PYACLNN_STUB_DEVICE_COUNT", count, 1);

    pthread_t watchdog;
    pthread_create(&watchdog, NULL, watchdog_main, NULL);

    int status = 0;
    aclError init = aclInit(NULL);
    if (init != ACL_SUCCESS) {
        fprintf(stderr, "stress: aclInit failed with %d\n", (int)init);
        return 2;
    }
    int gmq = pyaclnn_stub_soc_family() == PYACLNN_SOC_950;   /* the operator exists only there */
    workload *serial = make_workloads(threads, devices, iterations, gmq);
    float *want_scale = calloc((size_t)iterations, sizeof(float));
    int32_t *want_tracker = calloc((size_t)iterations, sizeof(int32_t));
    if (!serial || !want_scale || !want_tracker) return 2;

    /* Serial reference: every workload in turn on this thread. */
    for (int t = 0; t < threads && !status; t++) {
        run_workload(&serial[t]);
        if (serial[t].failed) status = 2;
        model(&serial[t], want_scale, want_tracker);
        if (!status && compare("serial run vs host model", &serial[t], want_scale, want_tracker)) status = 1;
    }

    /* Concurrent rounds: all workloads at once, one thread each. */
    for (int r = 0; r < rounds && !status; r++) {
        workload *conc = make_workloads(threads, devices, iterations, gmq);
        pthread_t *tids = calloc((size_t)threads, sizeof *tids);
        if (!conc || !tids) return 2;
        for (int t = 0; t < threads; t++) pthread_create(&tids[t], NULL, thread_main, &conc[t]);
        for (int t = 0; t < threads; t++) pthread_join(tids[t], NULL);
        for (int t = 0; t < threads && !status; t++) {
            if (conc[t].failed) status = 2;
            else if (compare("concurrent run vs serial run", &conc[t], serial[t].scale_history,
                             serial[t].tracker_history) ||
                     compare_gmq("concurrent run vs serial run", &conc[t], &serial[t]))
                status = 1;
        }
        free(tids);
        free_workloads(conc, threads);
    }
    if (!status && leaks_left()) status = 1;
    aclFinalize();

    pthread_mutex_lock(&watchdog_mu);
    watchdog_done = 1;
    pthread_cond_signal(&watchdog_cv);
    pthread_mutex_unlock(&watchdog_mu);
    pthread_join(watchdog, NULL);

    /* A checksum of the reference histories, so two runs can be compared by their output. */
    uint32_t sum = 2166136261u;
    for (int t = 0; t < threads; t++)
        for (int i = 0; i < iterations; i++) {
            uint32_t bits;
            memcpy(&bits, &serial[t].scale_history[i], 4);
            sum = (sum ^ bits ^ (uint32_t)serial[t].tracker_history[i]) * 16777619u;
        }
    for (int t = 0; t < threads; t++)
        for (size_t k = 0; k < gmq_slots(&serial[t]) * (GMQ_Y_BYTES + GMQ_MS_BYTES); k++)
            sum = (sum ^ serial[t].gmq_history[k]) * 16777619u;
    printf("stress: threads=%d devices=%d iterations=%d rounds=%d checksum=%08x %s%s\n", threads, devices,
           iterations, rounds, sum, gmq ? "(with GroupedDynamicMxQuant) " : "", status == 0 ? "OK" : "FAILED");
    free(want_scale);
    free(want_tracker);
    free_workloads(serial, threads);
    return status;
}
