/*
 * An operator's phase 1 racing aclInitTensor on its input (issue 27, point 6: the program's own data race).
 *
 *   op_redescribe_race N    a writer thread flips matmul's self between a [4, 8] FLOAT view of a 32-element
 *                           block and a [64, 8] view of the same block (far past its end) while this thread
 *                           runs N times aclnnMmGetWorkspaceSize(self, mat2 [8, 4], out [4, 4]) and, when
 *                           phase 1 accepts, aclnnMm and a synchronize. Phase 1 accepts only the [4, 8] view
 *                           (out is [4, 4]); the executor must run that view: before, it re-read the tensor and
 *                           could get the [64, 8] one, so the kernel read past the block (a fault on the
 *                           worker). Every launch must succeed with out = self @ mat2. Prints "ok <accepted>".
 *                           The writer keeps each description about 300 us; this thread starts each call
 *                           while the tensor is [4, 8], and phase 1 pauses 2 ms before building its executor
 *                           (a test hook): most calls are accepted, and re-described inside that window.
 * Exit 0, 1 (a wrong result or a failed launch, with a message) or 2 (a setup call failed).
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_mm.h"
#include "pyaclnn_stub.h"

#include "check.h"

static aclTensor *self;
static float *self_data;
static _Atomic int stop;
static _Atomic int big;   /* the description the writer set last */
static const int64_t STORAGE[1] = {32}, STRIDES[2] = {8, 1};

static void *writer(void *arg) {
    (void)arg;
    static const int64_t SMALL[2] = {4, 8}, BIG[2] = {64, 8};
    for (unsigned i = 0; !atomic_load(&stop); i++) {   /* each description for about 300 us */
        CHECK(aclInitTensor(self, (i & 1) ? BIG : SMALL, 2, ACL_FLOAT, STRIDES, 0, ACL_FORMAT_ND, STORAGE, 1,
                            self_data));
        atomic_store(&big, (int)(i & 1));
        nanosleep(&(struct timespec){0, 300000}, NULL);
    }
    return NULL;
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 100;
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    aclrtStream stream;
    CHECK(aclrtCreateStream(&stream));
    void *a, *b, *o;
    CHECK(aclrtMalloc(&a, 32 * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&b, 32 * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&o, 16 * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST));
    float ha[32], hb[32], want[16], got[16];
    for (int i = 0; i < 32; i++) ha[i] = (float)(i % 7) - 3.0f, hb[i] = (float)(i % 5) - 2.0f;
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++) {
            float s = 0.0f;
            for (int k = 0; k < 8; k++) s += ha[r * 8 + k] * hb[k * 4 + c];   /* small integers: exact */
            want[r * 4 + c] = s;
        }
    CHECK(aclrtMemcpy(a, sizeof ha, ha, sizeof ha, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtMemcpy(b, sizeof hb, hb, sizeof hb, ACL_MEMCPY_HOST_TO_DEVICE));
    self_data = a;
    const int64_t s_shape[2] = {4, 8}, b_shape[2] = {8, 4}, b_strides[2] = {4, 1}, o_shape[2] = {4, 4};
    const int64_t o_strides[2] = {4, 1}, b_storage[1] = {32}, o_storage[1] = {16};
    self = aclCreateTensor(s_shape, 2, ACL_FLOAT, STRIDES, 0, ACL_FORMAT_ND, STORAGE, 1, a);
    aclTensor *mat2 = aclCreateTensor(b_shape, 2, ACL_FLOAT, b_strides, 0, ACL_FORMAT_ND, b_storage, 1, b);
    aclTensor *out = aclCreateTensor(o_shape, 2, ACL_FLOAT, o_strides, 0, ACL_FORMAT_ND, o_storage, 1, o);
    if (!self || !mat2 || !out) return 2;
    pyaclnn_stub_phase1_test_pause(2000);
    pthread_t w;
    if (pthread_create(&w, NULL, writer, NULL) != 0) return 2;
    long accepted = 0;
    for (long i = 0; i < n; i++) {
        uint64_t ws = 0;
        aclOpExecutor *e = NULL;
        while (atomic_load(&big)) sched_yield();   /* start while the tensor is [4, 8] */
        if (aclnnMmGetWorkspaceSize(self, mat2, out, 0, &ws, &e) != 0) {
            (void)aclGetRecentErrMsg();   /* it became [64, 8] meanwhile: refused, as it should be */
            continue;
        }
        accepted++;
        int rc = aclnnMm(NULL, 0, e, stream);
        if (rc == 0) rc = aclrtSynchronizeStream(stream);
        if (rc != 0) {
            atomic_store(&stop, 1);
            fprintf(stderr, "launch %ld failed: %d\n%s\n", i, rc, aclGetRecentErrMsg());
            return 1;
        }
        CHECK(aclrtMemcpy(got, sizeof got, o, sizeof got, ACL_MEMCPY_DEVICE_TO_HOST));
        for (int k = 0; k < 16; k++)
            if (got[k] != want[k]) {
                atomic_store(&stop, 1);
                fprintf(stderr, "launch %ld: out[%d] = %g, want %g\n", i, k, got[k], want[k]);
                return 1;
            }
    }
    atomic_store(&stop, 1);
    pthread_join(w, NULL);
    CHECK(aclDestroyTensor(self));
    CHECK(aclDestroyTensor(mat2));
    CHECK(aclDestroyTensor(out));
    CHECK(aclrtFree(a));
    CHECK(aclrtFree(b));
    CHECK(aclrtFree(o));
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    printf("ok %ld\n", accepted);
    return 0;
}
