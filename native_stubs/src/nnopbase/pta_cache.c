/*
 * torch_npu's executor cache: the hooks op-plugin binds from the aclnn libraries (InitPTACacheThreadLocal,
 * AddTensorAddrToCachedList, SetPTAHashKey / SetPTACacheHashKey, PTAGetExecCache / PTAFindExecCache,
 * CanUsePTACache, UnInitPTACacheThreadLocal). opbase defines them in libnnopbase (op_cache.cpp,
 * op_executor.cpp, op_dfx.cpp); op-plugin finds them through its dlopen of libopapi, whose dependencies
 * dlsym searches too. docs/torch_npu.md has the protocol.
 *
 * Per call op-plugin announces a key (a 64-bit hash of its arguments, or the argument bytes themselves)
 * and the storage base address of every tensor argument, in argument order. A miss runs phase 1 as
 * usual; phase 1 offers the executor it built (pyaclnn_stub_pta_offer) and the cache keeps a private copy
 * under that key. A hit hands out a fresh single-use executor made from the copy with each tensor
 * re-pointed at this call's address of the same argument: no aclCreateTensor, no phase 1, no destroys.
 * Phase 2 is the ordinary one, so the hazard checker and graph capture see every launch.
 *
 * Safer than opbase where the emulator can be: an executor is kept only if every tensor it runs on is
 * one of the announced addresses and its parameter block holds none of them (no address outside the
 * re-pointing), not with a data-dependent output shape or a deferred phase-2 error; a hit also needs the
 * same operator and the same aliasing among the addresses (x + x is not x + y). Memory and eviction as
 * opbase: per thread (the cache and its state are thread-local there too), ACLNN_CACHE_LIMIT entries
 * (default 10000) of each key kind; hash keys are not added once full, byte keys drop their 30 least
 * recently used. PYACLNN_STUB_PTA_CACHE=0, or opbase's DISABLE_L2_CACHE, turns the cache off (CanUsePTACache
 * says no).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "nnopbase_internal.h"

#define PTA_API_MAX 96
#define PTA_MAX_ADDRS 512             /* more tensor arguments than this: the call is not cached        */
#define PTA_KEY_MAX (8192 + 1024)     /* op-plugin's g_hash_buf_max_size                               */
#define PTA_BUCKETS 1024
#define PTA_DEFAULT_LIMIT 10000       /* opbase's K_CACHE_LIMIT                                         */
#define PTA_MAX_LIMIT 10000000        /* opbase's K_MAX_CACHE_LIMIT                                     */
#define PTA_SHRINK 30                 /* opbase's K_CACHE_SHRINK_NUM                                    */

#define PTA_API __attribute__((visibility("default")))

typedef struct pta_entry {
    struct pta_entry *chain;          /* bucket chain                                                 */
    struct pta_entry *older, *newer;  /* byte-key entries, least recently used first                  */
    uint64_t hash;                    /* op-plugin's hash (kind 1) or ours of the key bytes (kind 2)  */
    int kind;
    size_t key_len;
    const uint8_t *key;               /* kind 2: a copy of the bytes, in this allocation              */
    char api[PTA_API_MAX];            /* "aclnnAdd": a hit never crosses operators                    */
    size_t n_addrs;
    const uint16_t *alias;            /* per address: the index of its first equal address            */
    const int32_t *slot_addr;         /* per executor tensor: its address index (-1: absent)          */
    aclOpExecutor *copy;
} pta_entry;

typedef struct {
    pta_entry *buckets[PTA_BUCKETS];
    pta_entry *oldest, *newest;
    size_t n_hash, n_bytes;
} pta_table;

/* What op-plugin announced for the current call (opbase's OpThreadLocalContext fields). */
typedef struct {
    int active;                       /* between InitPTACacheThreadLocal and UnInitPTACacheThreadLocal */
    int pending;                      /* a key is set and phase 1 has not offered an executor for it   */
    int kind;                         /* 1 hash, 2 bytes                                              */
    uint64_t hash;
    size_t key_len;
    size_t n_addrs;
    int addrs_overflow;
    char api[PTA_API_MAX];
    void *addrs[PTA_MAX_ADDRS];
    uint8_t key[PTA_KEY_MAX];
} pta_state;

static __thread pta_state tls;
static __thread pta_table *table;
static pthread_key_t table_key;
static pthread_once_t table_once = PTHREAD_ONCE_INIT;
static _Atomic uint64_t n_hits, n_records, n_refused;

static void table_free(void *p) {
    pta_table *t = p;
    if (t == NULL) return;
    for (size_t b = 0; b < PTA_BUCKETS; b++)
        for (pta_entry *e = t->buckets[b], *next; e != NULL; e = next) {
            next = e->chain;
            free(e->copy);
            free(e);
        }
    free(t);
}

static void make_key(void) { (void)pthread_key_create(&table_key, table_free); }

/* The calling thread's table, made on first use; freed when the thread exits. */
static pta_table *my_table(void) {
    if (table == NULL) {
        pthread_once(&table_once, make_key);
        table = calloc(1, sizeof *table);
        if (table != NULL) (void)pthread_setspecific(table_key, table);
    }
    return table;
}

static size_t cache_limit(void) {
    static _Atomic long long limit = -1;
    long long l = atomic_load(&limit);
    if (l < 0) {
        const char *v = getenv("ACLNN_CACHE_LIMIT");
        char *end = NULL;
        unsigned long long c = PTA_DEFAULT_LIMIT;
        if (v != NULL && *v >= '0' && *v <= '9') {   /* opbase: std::stoull, an invalid value keeps the default */
            unsigned long long parsed = strtoull(v, &end, 10);
            c = parsed;
        }
        l = (long long)(c < PTA_MAX_LIMIT ? c : PTA_MAX_LIMIT);
        atomic_store(&limit, l);
    }
    return (size_t)l;
}

/* Read once, as opbase reads DISABLE_L2_CACHE: set (any value) turns the cache off there too. */
static int cache_enabled(void) {
    static _Atomic int enabled = -1;
    int e = atomic_load(&enabled);
    if (e < 0) {
        const char *v = getenv("PYACLNN_STUB_PTA_CACHE");
        e = getenv("DISABLE_L2_CACHE") == NULL && (v == NULL || strcmp(v, "0") != 0);
        atomic_store(&enabled, e);
    }
    return e;
}

static uint64_t hash_bytes(const uint8_t *p, size_t n) {
    uint64_t h = 1469598103934665603ull;   /* FNV-1a */
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h ? h : 1;
}

/* The aliasing of the announced addresses: for each, the index of its first equal one. */
static void alias_of(void *const *addrs, size_t n, uint16_t *out) {
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (addrs[j] != addrs[i]) j++;
        out[i] = (uint16_t)j;
    }
}

static int same_alias(const pta_entry *e) {
    for (size_t i = 0; i < e->n_addrs; i++) {
        size_t j = 0;
        while (tls.addrs[j] != tls.addrs[i]) j++;
        if (j != e->alias[i]) return 0;
    }
    return 1;
}

static void unlink_age(pta_table *t, pta_entry *e) {
    if (e->older) e->older->newer = e->newer; else t->oldest = e->newer;
    if (e->newer) e->newer->older = e->older; else t->newest = e->older;
    e->older = e->newer = NULL;
}

static void link_newest(pta_table *t, pta_entry *e) {
    e->older = t->newest;
    e->newer = NULL;
    if (t->newest) t->newest->newer = e; else t->oldest = e;
    t->newest = e;
}

static void remove_entry(pta_table *t, pta_entry *e) {
    pta_entry **p = &t->buckets[e->hash % PTA_BUCKETS];
    while (*p != e) p = &(*p)->chain;
    *p = e->chain;
    if (e->kind == 2) {
        unlink_age(t, e);
        t->n_bytes--;
    } else {
        t->n_hash--;
    }
    free(e->copy);
    free(e);
}

static pta_entry *find(pta_table *t, int kind, uint64_t hash, const uint8_t *key, size_t key_len) {
    for (pta_entry *e = t->buckets[hash % PTA_BUCKETS]; e != NULL; e = e->chain)
        if (e->kind == kind && e->hash == hash &&
            (kind == 1 || (e->key_len == key_len && memcmp(e->key, key, key_len) == 0)))
            return e;
    return NULL;
}

/* The lookup both getters share: an executor for this call, or NULL (a miss). */
static aclOpExecutor *lookup(const char *api, int kind, uint64_t hash, const uint8_t *key, size_t key_len,
                             uint64_t *workspaceSize) {
    if (workspaceSize == NULL) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, api, "workspaceSize is NULL");
        return NULL;
    }
    if (!tls.active || tls.addrs_overflow || table == NULL) return NULL;
    pta_entry *e = find(table, kind, hash, key, key_len);
    if (e == NULL || strcmp(e->api, tls.api) != 0 || e->n_addrs != tls.n_addrs || !same_alias(e)) return NULL;
    aclOpExecutor *x = nn_executor_instance(e->copy, tls.addrs, e->slot_addr);
    if (x == NULL) return NULL;   /* out of memory: phase 1 runs instead */
    if (kind == 2) {
        unlink_age(table, e);
        link_newest(table, e);
    }
    tls.pending = 0;
    *workspaceSize = nn_executor_workspace(e->copy);
    atomic_fetch_add(&n_hits, 1);
    return x;
}

/* 1 if the parameter block holds one of the announced (non-NULL) addresses: a pointer the re-pointing
 * would not update. */
static int params_hold_address(const aclOpExecutor *copy) {
    size_t size;
    const unsigned char *p = nn_executor_params(copy, &size);
    for (size_t off = 0; off + sizeof(void *) <= size; off += sizeof(void *)) {
        void *word;
        memcpy(&word, p + off, sizeof word);
        if (word == NULL) continue;
        for (size_t i = 0; i < tls.n_addrs; i++)
            if (tls.addrs[i] == word) return 1;
    }
    return 0;
}

/* Keeps a copy of `executor` under the pending key, or says why not (0 kept). */
static int record(const char *ws_api, aclOpExecutor *executor) {
    size_t n = strlen(tls.api), suffix = strlen("GetWorkspaceSize");
    if (ws_api == NULL || strlen(ws_api) != n + suffix || strncmp(ws_api, tls.api, n) != 0 ||
        strcmp(ws_api + n, "GetWorkspaceSize") != 0)
        return -1;   /* another operator's phase 1 than the one announced */
    pta_table *t = my_table();
    size_t limit = cache_limit();
    if (t == NULL || t->n_hash >= limit) return -1;   /* opbase: nothing is added while the hash map is full */
    uint64_t hash = tls.kind == 1 ? tls.hash : hash_bytes(tls.key, tls.key_len);
    if (find(t, tls.kind, hash, tls.key, tls.key_len) != NULL) return -1;   /* opbase keeps the first */
    aclOpExecutor *copy = nn_executor_cache_copy(executor);
    if (copy == NULL) return -1;
    size_t n_t = nn_executor_n_tensors(copy);
    size_t bytes = sizeof(pta_entry) + tls.n_addrs * sizeof(uint16_t) + 3 + n_t * sizeof(int32_t) +
                   (tls.kind == 2 ? tls.key_len : 0);
    pta_entry *e = calloc(1, bytes);
    if (e == NULL || params_hold_address(copy)) goto refuse;
    uint16_t *alias = (uint16_t *)(e + 1);
    int32_t *slot_addr = (int32_t *)(((uintptr_t)(alias + tls.n_addrs) + 3) & ~(uintptr_t)3);
    uint8_t *key = (uint8_t *)(slot_addr + n_t);
    alias_of(tls.addrs, tls.n_addrs, alias);
    for (size_t k = 0; k < n_t; k++) {
        const pyaclnn_stub_tensor *s = nn_executor_tensor(copy, k);
        slot_addr[k] = -1;
        if (!s->present) continue;
        for (size_t i = 0; i < tls.n_addrs && slot_addr[k] < 0; i++)
            if (tls.addrs[i] == s->data) slot_addr[k] = (int32_t)i;
        if (slot_addr[k] < 0) goto refuse;   /* a tensor torch_npu did not announce: cannot re-point it */
    }
    if (tls.kind == 2) memcpy(key, tls.key, tls.key_len);
    e->hash = hash;
    e->kind = tls.kind;
    e->key = key;
    e->key_len = tls.kind == 2 ? tls.key_len : 0;
    memcpy(e->api, tls.api, n + 1);
    e->n_addrs = tls.n_addrs;
    e->alias = alias;
    e->slot_addr = slot_addr;
    e->copy = copy;
    if (e->kind == 2) {
        if (t->n_bytes >= limit)
            for (int k = 0; k < PTA_SHRINK && t->oldest != NULL; k++) remove_entry(t, t->oldest);
        if (limit == 0) goto refuse;
        link_newest(t, e);
        t->n_bytes++;
    } else {
        t->n_hash++;
    }
    e->chain = t->buckets[hash % PTA_BUCKETS];
    t->buckets[hash % PTA_BUCKETS] = e;
    return 0;
refuse:
    free(e);
    free(copy);
    return -1;
}

PYACLNN_STUB_API void pyaclnn_stub_pta_offer(const char *ws_api, aclOpExecutor *executor) {
    if (!tls.active || !tls.pending) return;
    tls.pending = 0;   /* one executor per announced key: the first phase 1 after it */
    if (tls.addrs_overflow || record(ws_api, executor) != 0) atomic_fetch_add(&n_refused, 1);
    else atomic_fetch_add(&n_records, 1);
}

PYACLNN_STUB_API void pyaclnn_stub_pta_stats(uint64_t *hits, uint64_t *records, uint64_t *refused,
                                            uint64_t *thread_entries) {
    if (hits) *hits = atomic_load(&n_hits);
    if (records) *records = atomic_load(&n_records);
    if (refused) *refused = atomic_load(&n_refused);
    if (thread_entries) *thread_entries = table ? table->n_hash + table->n_bytes : 0;
}

PYACLNN_STUB_API void pyaclnn_stub_pta_clear(void) {
    pta_table *t = table;
    if (t == NULL) return;
    table_free(t);
    table = calloc(1, sizeof *table);
    (void)pthread_setspecific(table_key, table);
}

/* ---- the vendor's entry points (extern "C" in opbase) ---------------------------------------- */

PTA_API bool CanUsePTACache(const char *api);
PTA_API void InitPTACacheThreadLocal(void);
PTA_API void UnInitPTACacheThreadLocal(void);
PTA_API void AddTensorAddrToCachedList(void *addr);
PTA_API void SetPTAHashKey(uint64_t hash);
PTA_API void SetPTACacheHashKey(uint8_t *key, size_t len);
PTA_API aclOpExecutor *PTAGetExecCache(uint64_t hash, uint64_t *workspaceSize);
PTA_API aclOpExecutor *PTAFindExecCache(uint8_t *buf, size_t len, uint64_t *workspaceSize);

/* opbase: false when a dump or profiling option is on (none here), else it notes the api name. A NULL or
 * over-long name says false (opbase would keep a pointer it cannot use). */
bool CanUsePTACache(const char *api) {
    if (!cache_enabled() || api == NULL || strlen(api) >= PTA_API_MAX) return false;
    strcpy(tls.api, api);
    return true;
}

void InitPTACacheThreadLocal(void) {
    tls.active = 1;
    tls.pending = 0;
    tls.kind = 0;
    tls.hash = 0;
    tls.key_len = 0;
    tls.n_addrs = 0;
    tls.addrs_overflow = 0;
}

void UnInitPTACacheThreadLocal(void) {
    tls.active = 0;
    tls.pending = 0;
}

void AddTensorAddrToCachedList(void *addr) {
    if (tls.n_addrs < PTA_MAX_ADDRS) tls.addrs[tls.n_addrs++] = addr;
    else tls.addrs_overflow = 1;
}

/* 0: op-plugin could not key this call (a wrapped scalar, a full buffer): nothing is kept for it. */
void SetPTAHashKey(uint64_t hash) {
    tls.kind = 1;
    tls.hash = hash;
    tls.pending = tls.active && hash != 0;
}

void SetPTACacheHashKey(uint8_t *key, size_t len) {
    tls.kind = 2;
    tls.key_len = 0;
    tls.pending = 0;
    if (key == NULL || len == 0 || len > PTA_KEY_MAX) return;
    memcpy(tls.key, key, len);   /* op-plugin's buffer is reused by its next call */
    tls.key_len = len;
    tls.pending = tls.active;
}

aclOpExecutor *PTAGetExecCache(uint64_t hash, uint64_t *workspaceSize) {
    if (hash == 0) return NULL;
    return lookup("PTAGetExecCache", 1, hash, NULL, 0, workspaceSize);
}

aclOpExecutor *PTAFindExecCache(uint8_t *buf, size_t len, uint64_t *workspaceSize) {
    if (buf == NULL || len == 0 || len > PTA_KEY_MAX) return NULL;
    return lookup("PTAFindExecCache", 2, hash_bytes(buf, len), buf, len, workspaceSize);
}
