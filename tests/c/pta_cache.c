/*
 * The executor-cache hooks torch_npu's op-plugin binds (docs/torch_npu.md), driven as op-plugin's
 * hit_cache (hash key) and hit_cache_v2 (byte key) drive them, with aclnnAdd on 8 floats.
 * tests/test_pta_cache.py runs it and reads its "name value" lines.
 *
 *   pta_cache            every contract case (one line each)
 *   pta_cache limit      the eviction rules, run with ACLNN_CACHE_LIMIT=2
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_add.h"
#include "pyaclnn_stub.h"

#include "check.h"

#define N 8

bool CanUsePTACache(const char *api);
void InitPTACacheThreadLocal(void);
void UnInitPTACacheThreadLocal(void);
void AddTensorAddrToCachedList(void *addr);
void SetPTAHashKey(uint64_t hash);
void SetPTACacheHashKey(uint8_t *key, size_t len);
aclOpExecutor *PTAGetExecCache(uint64_t hash, uint64_t *workspaceSize);
aclOpExecutor *PTAFindExecCache(uint8_t *buf, size_t len, uint64_t *workspaceSize);

aclnnStatus aclnnNonzeroV2GetWorkspaceSize(const aclTensor *self, aclTensor *out, uint64_t *workspaceSize,
                                           aclOpExecutor **executor);
aclnnStatus aclnnNonzeroV2(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);

static aclrtStream stream;

static aclTensor *tensor(void *addr) {
    static const int64_t shape[1] = {N}, stride[1] = {1};
    return aclCreateTensor(shape, 1, ACL_FLOAT, stride, 0, ACL_FORMAT_ND, shape, 1, addr);
}

static float *dev(float first) {
    void *p = NULL;
    CHECK(aclrtMalloc(&p, N * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST));
    float host[N];
    for (int i = 0; i < N; i++) host[i] = first + (float)i;
    CHECK(aclrtMemcpy(p, sizeof host, host, sizeof host, ACL_MEMCPY_HOST_TO_DEVICE));
    return p;
}

static float at(float *p, int i) {
    float host[N];
    CHECK(aclrtSynchronizeStream(stream));
    CHECK(aclrtMemcpy(host, sizeof host, p, sizeof host, ACL_MEMCPY_DEVICE_TO_HOST));
    return host[i];
}

/* One x + alpha * y as op-plugin runs it: the hooks, then on a miss phase 1 (tensors, GetWorkspaceSize, the
 * destroys). key NULL: a hash key (hit_cache); else a byte key (hit_cache_v2). Returns 1 on a cache hit. */
static int add(const char *api, uint64_t hash, const uint8_t *key, size_t key_len, float *x, float *y, float alpha,
               float *out) {
    int hit = 0;
    if (!CanUsePTACache(api)) return -1;
    InitPTACacheThreadLocal();
    AddTensorAddrToCachedList(x);
    AddTensorAddrToCachedList(y);
    AddTensorAddrToCachedList(out);
    uint64_t ws = 0;
    aclOpExecutor *e;
    uint8_t copy[64];
    if (key == NULL) {
        SetPTAHashKey(hash);
        e = PTAGetExecCache(hash, &ws);
    } else {
        memcpy(copy, key, key_len);
        SetPTACacheHashKey(copy, key_len);
        e = PTAFindExecCache(copy, key_len, &ws);
        memset(copy, 0xAB, sizeof copy);   /* op-plugin reuses its buffer: the cache must have copied it */
    }
    if (e != NULL) {
        hit = 1;
        CHECK(aclnnAdd(NULL, ws, e, stream));
    } else {
        aclTensor *a = tensor(x), *b = tensor(y), *o = tensor(out);
        aclScalar *al = aclCreateScalar(&alpha, ACL_FLOAT);
        CHECK(aclnnAddGetWorkspaceSize(a, b, al, o, &ws, &e));
        CHECK(aclnnAdd(NULL, ws, e, stream));
        aclDestroyTensor(a);
        aclDestroyTensor(b);
        aclDestroyTensor(o);
        aclDestroyScalar(al);
    }
    UnInitPTACacheThreadLocal();
    return hit;
}

/* A data-dependent output shape (phase 2 re-describes out): announced like any call, never replayed. */
static int nonzero(uint64_t hash, float *x, void *o) {
    static const int64_t shape[2] = {1, N}, stride[2] = {N, 1};
    if (!CanUsePTACache("aclnnNonzeroV2")) return -1;
    InitPTACacheThreadLocal();
    AddTensorAddrToCachedList(x);
    AddTensorAddrToCachedList(o);
    SetPTAHashKey(hash);
    uint64_t ws = 0;
    aclOpExecutor *e = PTAGetExecCache(hash, &ws);
    int hit = e != NULL;
    aclTensor *a = NULL, *t = NULL;
    if (e == NULL) {
        a = tensor(x);
        t = aclCreateTensor(shape, 2, ACL_INT64, stride, 0, ACL_FORMAT_ND, shape, 2, o);
        CHECK(aclnnNonzeroV2GetWorkspaceSize(a, t, &ws, &e));
    }
    CHECK(aclnnNonzeroV2(NULL, ws, e, stream));
    if (a) aclDestroyTensor(a);
    if (t) aclDestroyTensor(t);
    UnInitPTACacheThreadLocal();
    return hit;
}

static uint64_t stat_entries(void) {
    uint64_t n;
    pyaclnn_stub_pta_stats(NULL, NULL, NULL, &n);
    return n;
}

static void *other_thread(void *arg) {
    float **b = arg;
    CHECK(aclrtSetDevice(0));
    /* the first thread's entry for hash 11 is not this thread's */
    *(int *)b[3] = add("aclnnAdd", 11, NULL, 0, b[0], b[1], 1.0f, b[2]);
    return NULL;
}

static int contract(void) {
    float *x = dev(0), *y = dev(100), *out = dev(-1);
    float *x2 = dev(10), *y2 = dev(1000), *out2 = dev(-1);

    printf("first_is_miss %d\n", add("aclnnAdd", 11, NULL, 0, x, y, 1.0f, out));
    printf("first_value %g\n", at(out, 3));                               /* 3 + 103 */
    printf("entries_after_first %llu\n", (unsigned long long)stat_entries());
    printf("repeat_is_hit %d\n", add("aclnnAdd", 11, NULL, 0, x2, y2, 1.0f, out2));
    printf("hit_value_new_tensors %g\n", at(out2, 3));                    /* 13 + 1003: re-pointed */
    printf("hit_left_old_out %g\n", at(out, 3));
    /* same hash, but y is x: another aliasing, so not the cached executor */
    printf("alias_is_miss %d\n", add("aclnnAdd", 11, NULL, 0, x2, x2, 1.0f, out));
    printf("alias_value %g\n", at(out, 3));                               /* 13 + 13 */
    /* same hash announced for another operator: never its executor */
    printf("other_api_is_miss %d\n", add("aclnnSub", 11, NULL, 0, x, y, 1.0f, out));
    /* hash 0: op-plugin could not key the call; never kept, never found */
    add("aclnnAdd", 0, NULL, 0, x, y, 1.0f, out);
    printf("hash0_is_miss %d\n", add("aclnnAdd", 0, NULL, 0, x, y, 1.0f, out));
    /* another thread has its own cache */
    int thread_hit = -1;
    float *args[4] = {x, y, out2, (float *)(void *)&thread_hit};
    pthread_t t;
    pthread_create(&t, NULL, other_thread, args);
    pthread_join(t, NULL);
    printf("other_thread_is_miss %d\n", thread_hit);

    /* byte keys (hit_cache_v2): the bytes decide, compared in full */
    uint8_t k1[16] = "aclnnAdd|8|f32|", k2[16] = "aclnnAdd|8|f32|";
    k2[14] = '2';   /* e.g. another alpha */
    printf("bytes_first_is_miss %d\n", add("aclnnAdd", 0, k1, sizeof k1, x, y, 2.0f, out));
    printf("bytes_repeat_is_hit %d\n", add("aclnnAdd", 0, k1, sizeof k1, x2, y2, 2.0f, out2));
    printf("bytes_hit_value %g\n", at(out2, 3));                          /* 13 + 2 * 1003 */
    printf("bytes_other_key_is_miss %d\n", add("aclnnAdd", 0, k2, sizeof k2, x, y, 3.0f, out));
    printf("bytes_other_key_value %g\n", at(out, 3));                     /* 3 + 3 * 103 */

    void *nz_out = NULL;
    CHECK(aclrtMalloc(&nz_out, N * sizeof(int64_t), ACL_MEM_MALLOC_HUGE_FIRST));
    nonzero(500, x, nz_out);
    printf("nonzero_repeat_is_miss %d\n", nonzero(500, x, nz_out));
    CHECK(aclrtFree(nz_out));

    /* a failed phase 1 ends the announcement: if op-plugin then throws past UnInit, the next phase 1 on this
     * thread (here another call of the operator, not announced) is not filed under the failed call's key */
    CanUsePTACache("aclnnAdd");
    InitPTACacheThreadLocal();
    AddTensorAddrToCachedList(x);
    AddTensorAddrToCachedList(y);
    AddTensorAddrToCachedList(out);
    SetPTAHashKey(600);
    uint64_t ws600 = 0;
    aclOpExecutor *e600 = PTAGetExecCache(600, &ws600);
    aclTensor *a = tensor(x), *b = tensor(y), *o = tensor(out);
    float two = 2.0f;
    aclScalar *al = aclCreateScalar(&two, ACL_FLOAT);
    int failed = aclnnAddGetWorkspaceSize(a, b, al, NULL, &ws600, &e600) != 0;
    CHECK(aclnnAddGetWorkspaceSize(a, b, al, o, &ws600, &e600));
    CHECK(aclnnAdd(NULL, ws600, e600, stream));
    aclDestroyTensor(a);
    aclDestroyTensor(b);
    aclDestroyTensor(o);
    aclDestroyScalar(al);
    printf("failed_phase1 %d\n", failed);
    printf("after_failed_phase1_is_miss %d\n", add("aclnnAdd", 600, NULL, 0, x, y, 1.0f, out));
    printf("after_failed_phase1_value %g\n", at(out, 3));                /* alpha 1, not the unfiled alpha 2 */

    /* bad input: NULL / empty / over-long arguments are refused, never a crash */
    uint64_t ws = 0;
    InitPTACacheThreadLocal();
    AddTensorAddrToCachedList(x);
    AddTensorAddrToCachedList(y);
    AddTensorAddrToCachedList(out);
    SetPTAHashKey(11);
    printf("null_workspace_size %d\n", PTAGetExecCache(11, NULL) == NULL);
    printf("null_workspace_size_message %d\n", strstr(aclGetRecentErrMsg(), "workspaceSize is NULL") != NULL);
    printf("null_buf %d\n", PTAFindExecCache(NULL, 16, &ws) == NULL);
    printf("empty_buf %d\n", PTAFindExecCache(k1, 0, &ws) == NULL);
    SetPTACacheHashKey(NULL, 0);
    UnInitPTACacheThreadLocal();
    printf("null_api %d\n", CanUsePTACache(NULL) ? 1 : 0);
    char long_api[200];
    memset(long_api, 'a', sizeof long_api - 1);
    long_api[sizeof long_api - 1] = 0;
    printf("long_api %d\n", CanUsePTACache(long_api) ? 1 : 0);
    /* more addresses than the cache keeps: the call runs, and is not kept */
    CanUsePTACache("aclnnAdd");
    InitPTACacheThreadLocal();
    for (int i = 0; i < 600; i++) AddTensorAddrToCachedList(x);
    SetPTAHashKey(77);
    printf("overflow_is_miss %d\n", PTAGetExecCache(77, &ws) == NULL);
    UnInitPTACacheThreadLocal();
    /* hooks outside Init/UnInit (e.g. after an exception skipped UnInit): nothing is kept or found */
    SetPTAHashKey(99);
    printf("inactive_is_miss %d\n", PTAGetExecCache(99, &ws) == NULL);

    uint64_t hits, records, refused;
    pyaclnn_stub_pta_stats(&hits, &records, &refused, NULL);
    printf("hits %llu\nrecords %llu\n", (unsigned long long)hits, (unsigned long long)records);
    pyaclnn_stub_pta_clear();
    printf("entries_after_clear %llu\n", (unsigned long long)stat_entries());
    CHECK(aclrtSynchronizeStream(stream));
    float *bufs[6] = {x, y, out, x2, y2, out2};
    for (int i = 0; i < 6; i++) CHECK(aclrtFree(bufs[i]));
    return 0;
}

/* ACLNN_CACHE_LIMIT=2: hash keys stop being added when full; byte keys drop their oldest (up to 30). */
static int limit(void) {
    float *x = dev(0), *y = dev(100), *out = dev(-1);
    for (uint64_t h = 1; h <= 3; h++) add("aclnnAdd", h, NULL, 0, x, y, 1.0f, out);
    printf("hash_entries %llu\n", (unsigned long long)stat_entries());
    printf("hash_third_not_kept %d\n", add("aclnnAdd", 3, NULL, 0, x, y, 1.0f, out) == 0);
    printf("hash_first_kept %d\n", add("aclnnAdd", 1, NULL, 0, x, y, 1.0f, out) == 1);
    pyaclnn_stub_pta_clear();
    uint8_t k[3][4] = {"k01", "k02", "k03"};
    for (int i = 0; i < 3; i++) add("aclnnAdd", 0, k[i], 4, x, y, 1.0f, out);
    printf("bytes_entries %llu\n", (unsigned long long)stat_entries());
    printf("bytes_newest_kept %d\n", add("aclnnAdd", 0, k[2], 4, x, y, 1.0f, out) == 1);
    printf("bytes_oldest_dropped %d\n", add("aclnnAdd", 0, k[0], 4, x, y, 1.0f, out) == 0);
    CHECK(aclrtSynchronizeStream(stream));
    CHECK(aclrtFree(x));
    CHECK(aclrtFree(y));
    CHECK(aclrtFree(out));
    return 0;
}

int main(int argc, char **argv) {
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&stream));
    int rc = argc > 1 && strcmp(argv[1], "limit") == 0 ? limit() : contract();
    CHECK(aclrtSynchronizeStream(stream));
    pyaclnn_stub_counts c;
    pyaclnn_stub_live_counts(&c);
    printf("live_executors %lld\nlive_tensors %lld\n", (long long)c.executors, (long long)c.tensors);
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    return rc;
}
