/*
 * LD_PRELOAD probe for benchmarks/launch_split.py: time spent inside the emulator's entry points that
 * torch_npu calls for an aclnn operator, counted inside the torch_npu process.
 *
 * op-plugin binds aclnn functions (and aclCreateTensor & co.) with dlopen("libopapi.so") + dlsym(handle,
 * name), which a preloaded definition does not interpose; so this probe interposes dlsym itself and hands
 * out a timing wrapper for the names it knows. aclrtSynchronizeStream is linked directly by torch_npu and
 * is interposed the ordinary way. Counters are process-wide atomics (torch_npu launches from its task
 * queue thread): calls and nanoseconds per entry point.
 *
 *   launch_split_probe_reset()                 zeroes the counters
 *   launch_split_probe_read(i, &calls, &ns)    counter i (0 ..), returns its name or NULL past the end
 *
 * Build: cc -O2 -shared -fPIC launch_split_probe.c -o liblaunch_split_probe.so -ldl
 * Not part of the emulator: a measuring tool only.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

typedef void *ptr;

enum { P_CREATE_TENSOR, P_CREATE_SCALAR, P_DESTROY_TENSOR, P_DESTROY_SCALAR, P_ADD_PHASE1, P_ADD_LAUNCH,
       P_SYNC_STREAM, P_SYNC_DEVICE, P_CAN_USE, P_INIT, P_UNINIT, P_ADD_ADDR, P_SET_HASH, P_SET_KEY, P_GET_CACHE,
       P_FIND_CACHE, N_PROBES };
static const char *const NAMES[N_PROBES] = {
    "aclCreateTensor", "aclCreateScalar", "aclDestroyTensor", "aclDestroyScalar", "aclnnAddGetWorkspaceSize",
    "aclnnAdd", "aclrtSynchronizeStream", "aclrtSynchronizeDevice",
    /* the executor-cache hooks (docs/torch_npu.md): ours too when the library exports them */
    "CanUsePTACache", "InitPTACacheThreadLocal", "UnInitPTACacheThreadLocal", "AddTensorAddrToCachedList",
    "SetPTAHashKey", "SetPTACacheHashKey", "PTAGetExecCache", "PTAFindExecCache"};

static _Atomic uint64_t calls[N_PROBES], nanos[N_PROBES];

static inline uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline void count(int i, uint64_t t0) {
    atomic_fetch_add_explicit(&nanos[i], now_ns() - t0, memory_order_relaxed);
    atomic_fetch_add_explicit(&calls[i], 1, memory_order_relaxed);
}

void launch_split_probe_reset(void) {
    for (int i = 0; i < N_PROBES; i++) {
        atomic_store(&calls[i], 0);
        atomic_store(&nanos[i], 0);
    }
}

const char *launch_split_probe_read(int i, uint64_t *n_calls, uint64_t *ns) {
    if (i < 0 || i >= N_PROBES) return NULL;
    *n_calls = atomic_load(&calls[i]);
    *ns = atomic_load(&nanos[i]);
    return NAMES[i];
}

/* ---- the real functions ---- */

static void *(*real_dlsym)(void *, const char *);

static void *next_dlsym(void *handle, const char *name) {
    if (real_dlsym == NULL) {
        real_dlsym = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
        if (real_dlsym == NULL) real_dlsym = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    }
    return real_dlsym(handle, name);
}

static ptr (*r_create_tensor)(const int64_t *, uint64_t, int, const int64_t *, int64_t, int, const int64_t *,
                              uint64_t, void *);
static ptr (*r_create_scalar)(void *, int);
static int (*r_destroy_tensor)(ptr);
static int (*r_destroy_scalar)(ptr);
static int (*r_add_phase1)(ptr, ptr, ptr, ptr, uint64_t *, ptr *);
static int (*r_add_launch)(void *, uint64_t, ptr, ptr);

static ptr w_create_tensor(const int64_t *v, uint64_t n, int dt, const int64_t *st, int64_t off, int fmt,
                           const int64_t *sd, uint64_t sn, void *data) {
    uint64_t t0 = now_ns();
    ptr r = r_create_tensor(v, n, dt, st, off, fmt, sd, sn, data);
    count(P_CREATE_TENSOR, t0);
    return r;
}
static ptr w_create_scalar(void *v, int dt) {
    uint64_t t0 = now_ns();
    ptr r = r_create_scalar(v, dt);
    count(P_CREATE_SCALAR, t0);
    return r;
}
static int w_destroy_tensor(ptr t) {
    uint64_t t0 = now_ns();
    int r = r_destroy_tensor(t);
    count(P_DESTROY_TENSOR, t0);
    return r;
}
static int w_destroy_scalar(ptr t) {
    uint64_t t0 = now_ns();
    int r = r_destroy_scalar(t);
    count(P_DESTROY_SCALAR, t0);
    return r;
}
static int w_add_phase1(ptr a, ptr b, ptr alpha, ptr out, uint64_t *ws, ptr *ex) {
    uint64_t t0 = now_ns();
    int r = r_add_phase1(a, b, alpha, out, ws, ex);
    count(P_ADD_PHASE1, t0);
    return r;
}
static int w_add_launch(void *ws, uint64_t size, ptr ex, ptr stream) {
    uint64_t t0 = now_ns();
    int r = r_add_launch(ws, size, ex, stream);
    count(P_ADD_LAUNCH, t0);
    return r;
}

static _Bool (*r_can_use)(const char *);
static void (*r_init)(void);
static void (*r_uninit)(void);
static void (*r_add_addr)(void *);
static void (*r_set_hash)(uint64_t);
static void (*r_set_key)(uint8_t *, size_t);
static ptr (*r_get_cache)(uint64_t, uint64_t *);
static ptr (*r_find_cache)(uint8_t *, size_t, uint64_t *);

static _Bool w_can_use(const char *api) {
    uint64_t t0 = now_ns();
    _Bool r = r_can_use(api);
    count(P_CAN_USE, t0);
    return r;
}
static void w_init(void) {
    uint64_t t0 = now_ns();
    r_init();
    count(P_INIT, t0);
}
static void w_uninit(void) {
    uint64_t t0 = now_ns();
    r_uninit();
    count(P_UNINIT, t0);
}
static void w_add_addr(void *a) {
    uint64_t t0 = now_ns();
    r_add_addr(a);
    count(P_ADD_ADDR, t0);
}
static void w_set_hash(uint64_t h) {
    uint64_t t0 = now_ns();
    r_set_hash(h);
    count(P_SET_HASH, t0);
}
static void w_set_key(uint8_t *k, size_t n) {
    uint64_t t0 = now_ns();
    r_set_key(k, n);
    count(P_SET_KEY, t0);
}
static ptr w_get_cache(uint64_t h, uint64_t *ws) {
    uint64_t t0 = now_ns();
    ptr r = r_get_cache(h, ws);
    count(P_GET_CACHE, t0);
    return r;
}
static ptr w_find_cache(uint8_t *k, size_t n, uint64_t *ws) {
    uint64_t t0 = now_ns();
    ptr r = r_find_cache(k, n, ws);
    count(P_FIND_CACHE, t0);
    return r;
}

#define WRAP(NAME, REAL, WRAPPER)                     \
    if (strcmp(name, NAME) == 0) {                    \
        void *f = next_dlsym(handle, name);           \
        if (f == NULL) return NULL;                   \
        *(void **)&REAL = f;                          \
        return (void *)WRAPPER;                       \
    }

void *dlsym(void *handle, const char *name) {
    WRAP("aclCreateTensor", r_create_tensor, w_create_tensor)
    WRAP("aclCreateScalar", r_create_scalar, w_create_scalar)
    WRAP("aclDestroyTensor", r_destroy_tensor, w_destroy_tensor)
    WRAP("aclDestroyScalar", r_destroy_scalar, w_destroy_scalar)
    WRAP("aclnnAddGetWorkspaceSize", r_add_phase1, w_add_phase1)
    WRAP("aclnnAdd", r_add_launch, w_add_launch)
    WRAP("CanUsePTACache", r_can_use, w_can_use)
    WRAP("InitPTACacheThreadLocal", r_init, w_init)
    WRAP("UnInitPTACacheThreadLocal", r_uninit, w_uninit)
    WRAP("AddTensorAddrToCachedList", r_add_addr, w_add_addr)
    WRAP("SetPTAHashKey", r_set_hash, w_set_hash)
    WRAP("SetPTACacheHashKey", r_set_key, w_set_key)
    WRAP("PTAGetExecCache", r_get_cache, w_get_cache)
    WRAP("PTAFindExecCache", r_find_cache, w_find_cache)
    if (strncmp(name, "aclrtSynchronize", 16) == 0) {   /* torch_npu binds some of these with dlsym too */
        void *mine = next_dlsym(RTLD_DEFAULT, name);
        if (mine != NULL && next_dlsym(handle, name) != NULL) return mine;
    }
    return next_dlsym(handle, name);
}

/* ---- linked directly ---- */

int aclrtSynchronizeStream(ptr stream) {
    static int (*real)(ptr);
    if (real == NULL) *(void **)&real = next_dlsym(RTLD_NEXT, "aclrtSynchronizeStream");
    uint64_t t0 = now_ns();
    int r = real(stream);
    count(P_SYNC_STREAM, t0);
    return r;
}

int aclrtSynchronizeStreamWithTimeout(ptr stream, int32_t timeout) {
    static int (*real)(ptr, int32_t);
    if (real == NULL) *(void **)&real = next_dlsym(RTLD_NEXT, "aclrtSynchronizeStreamWithTimeout");
    uint64_t t0 = now_ns();
    int r = real(stream, timeout);
    count(P_SYNC_STREAM, t0);
    return r;
}

int aclrtSynchronizeDeviceWithTimeout(int32_t timeout) {
    static int (*real)(int32_t);
    if (real == NULL) *(void **)&real = next_dlsym(RTLD_NEXT, "aclrtSynchronizeDeviceWithTimeout");
    uint64_t t0 = now_ns();
    int r = real(timeout);
    count(P_SYNC_DEVICE, t0);
    return r;
}

int aclrtSynchronizeDevice(void) {
    static int (*real)(void);
    if (real == NULL) *(void **)&real = next_dlsym(RTLD_NEXT, "aclrtSynchronizeDevice");
    uint64_t t0 = now_ns();
    int r = real();
    count(P_SYNC_DEVICE, t0);
    return r;
}
