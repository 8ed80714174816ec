/*
 * Tensor snapshots under re-description by another thread (issue 27, point 6b/6c).
 *
 *   tensor_snapshot race N       a writer thread flips one tensor between two descriptions A and B
 *                                (aclInitTensor) and its address between two blocks
 *                                (aclSetRawTensorAddr) while this thread takes N snapshots
 *                                (pyaclnn_stub_tensor_get). Each must be A or B as a whole (any of the two
 *                                addresses). Prints "torn <count> of <N>".
 *   tensor_snapshot phase1 N     the same writer, while this thread plays an operator's phase 1 N times:
 *                                snapshot the tensor, then build an executor from that snapshot
 *                                (pyaclnn_stub_executor_new_snapshots) and, for comparison, from the
 *                                handle (pyaclnn_stub_executor_new, which reads the tensor again); each
 *                                executor is launched and its kernel compares what it runs with the
 *                                snapshot phase 1 took. Prints "differ snapshots <n> handles <m>".
 *   tensor_snapshot build        pyaclnn_stub_executor_new_snapshots: absent optional tensors, re-pointing,
 *                                refused arguments. Prints "build ok".
 * Exit 0 unless a check fails (exit 1, with a message) or a call fails (exit 2).
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnn/aclnn_base.h"
#include "aclnn/opdev/op_errno.h"
#include "pyaclnn_stub.h"

#include "check.h"
#define FAIL(...) (fprintf(stderr, __VA_ARGS__), fputc('\n', stderr), exit(1))

static aclTensor *t;
static void *blocks[2];
static _Atomic int stop;
static _Atomic long flips;   /* descriptions the writer has set */

/* Description A: a 4x8 float matrix; B: a 2x2x2x2x2 int32 view with other strides and an offset. */
static const int64_t A_SHAPE[2] = {4, 8}, A_STRIDES[2] = {8, 1}, A_STORAGE[1] = {32};
static const int64_t B_SHAPE[5] = {2, 2, 2, 2, 2}, B_STRIDES[5] = {1, 2, 4, 8, 16}, B_STORAGE[2] = {4, 16};

static void describe(int which, void *data) {
    if (which == 0)
        CHECK(aclInitTensor(t, A_SHAPE, 2, ACL_FLOAT, A_STRIDES, 0, ACL_FORMAT_ND, A_STORAGE, 1, data));
    else
        CHECK(aclInitTensor(t, B_SHAPE, 5, ACL_INT32, B_STRIDES, 3, ACL_FORMAT_NCHW, B_STORAGE, 2, data));
}

static void *writer(void *arg) {
    (void)arg;
    for (unsigned i = 0; !atomic_load(&stop); i++) {
        describe(i & 1, blocks[(i >> 1) & 1]);
        CHECK(aclSetRawTensorAddr(t, blocks[(i >> 2) & 1]));
        atomic_fetch_add(&flips, 1);
    }
    return NULL;
}

static int same_dims(const int64_t *a, const int64_t *b, int64_t n) { return memcmp(a, b, (size_t)n * sizeof *a) == 0; }

/* 1 if d is A or B as a whole, with one of the two blocks. */
static int whole(const pyaclnn_stub_tensor *d) {
    if (d->present != 1 || (d->data != blocks[0] && d->data != blocks[1])) return 0;
    if (d->ndim == 2)
        return d->dtype == ACL_FLOAT && d->format == ACL_FORMAT_ND && d->offset == 0 && d->storage_ndim == 1 &&
               same_dims(d->shape, A_SHAPE, 2) && same_dims(d->strides, A_STRIDES, 2) &&
               same_dims(d->storage_shape, A_STORAGE, 1);
    if (d->ndim == 5)
        return d->dtype == ACL_INT32 && d->format == ACL_FORMAT_NCHW && d->offset == 3 && d->storage_ndim == 2 &&
               same_dims(d->shape, B_SHAPE, 5) && same_dims(d->strides, B_STRIDES, 5) &&
               same_dims(d->storage_shape, B_STORAGE, 2);
    return 0;
}

static int same_view(const pyaclnn_stub_tensor *a, const pyaclnn_stub_tensor *b) {
    return a->present == b->present && a->dtype == b->dtype && a->format == b->format && a->ndim == b->ndim &&
           a->offset == b->offset && a->data == b->data && same_dims(a->shape, b->shape, a->ndim) &&
           same_dims(a->strides, b->strides, a->ndim) && a->storage_ndim == b->storage_ndim &&
           same_dims(a->storage_shape, b->storage_shape, a->storage_ndim);
}

/* The kernel of the phase-1 game: compares the input it runs with what phase 1 validated. */
typedef struct {
    pyaclnn_stub_tensor validated;
    _Atomic int *differ;
} check_params;

static void check_kernel(const pyaclnn_stub_launch *launch) {
    const check_params *p = launch->params;
    if (!same_view(&launch->inputs[0], &p->validated)) atomic_fetch_add(p->differ, 1);
}

static pyaclnn_stub_launch seen;   /* what record_kernel saw last (its pointers die with the launch) */
static pyaclnn_stub_tensor seen_tensors[3];
static int seen_param;
static void record_kernel(const pyaclnn_stub_launch *launch) {
    seen = *launch;
    seen_param = *(const int *)launch->params;
    for (size_t i = 0; i < launch->n_inputs + launch->n_outputs && i < 3; i++)
        seen_tensors[i] = i < launch->n_inputs ? launch->inputs[i] : launch->outputs[i - launch->n_inputs];
}

static void run(aclOpExecutor *e) { CHECK(pyaclnn_stub_executor_run("tensor_snapshot", NULL, 0, e, NULL)); }

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s race N | phase1 N | build\n", argv[0]);
        return 2;
    }
    const char *mode = argv[1];
    long n = argc > 2 ? atol(argv[2]) : 100000;
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    for (int i = 0; i < 2; i++) CHECK(aclrtMalloc(&blocks[i], 4096, ACL_MEM_MALLOC_HUGE_FIRST));
    t = aclCreateTensor(A_SHAPE, 2, ACL_FLOAT, A_STRIDES, 0, ACL_FORMAT_ND, A_STORAGE, 1, blocks[0]);
    if (!t) return 2;

    if (strcmp(mode, "race") == 0 || strcmp(mode, "phase1") == 0) {
        pthread_t th;
        if (pthread_create(&th, NULL, writer, NULL) != 0) return 2;
        long torn = 0;
        _Atomic int differ_snap = 0, differ_handle = 0;
        while (atomic_load(&flips) == 0) {   /* the writer runs (the machine may be busy) */
        }
        /* N rounds, and as long as the writer has not flipped N / 4 times meanwhile (at most 1e8) */
        long i = 0;
        for (; i < 100000000 && (i < n || atomic_load(&flips) < n / 4); i++) {
            pyaclnn_stub_tensor d;
            CHECK(pyaclnn_stub_tensor_get(t, &d));
            if (!whole(&d)) torn++;
            if (strcmp(mode, "phase1") == 0) {
                check_params p = {d, &differ_snap};   /* phase 1 validated d */
                aclOpExecutor *e = pyaclnn_stub_executor_new_snapshots("Check", check_kernel, &p, sizeof p, &d, 1,
                                                                       NULL, 0, 0);
                if (!e) FAIL("executor_new_snapshots failed: %s", aclGetRecentErrMsg());
                run(e);
                p.differ = &differ_handle;
                const aclTensor *in[1] = {t};
                e = pyaclnn_stub_executor_new("Check", check_kernel, &p, sizeof p, in, 1, NULL, 0, 0);
                if (!e) FAIL("executor_new failed: %s", aclGetRecentErrMsg());
                run(e);
            }
        }
        atomic_store(&stop, 1);
        pthread_join(th, NULL);
        CHECK(aclrtSynchronizeStream(NULL));
        if (strcmp(mode, "race") == 0) printf("torn %ld of %ld\n", torn, i);
        else printf("differ snapshots %d handles %d torn %ld\n", atomic_load(&differ_snap), atomic_load(&differ_handle),
                    torn);
    } else if (strcmp(mode, "build") == 0) {
        pyaclnn_stub_tensor in[2], out[1];
        CHECK(pyaclnn_stub_tensor_get(t, &in[0]));
        CHECK(pyaclnn_stub_tensor_get(NULL, &in[1]));   /* an absent optional input */
        CHECK(pyaclnn_stub_tensor_get(t, &out[0]));
        out[0].data = blocks[1];
        int params = 7;
        aclOpExecutor *e = pyaclnn_stub_executor_new_snapshots("Rec", record_kernel, &params, sizeof params, in, 2,
                                                               out, 1, 0);
        if (!e) FAIL("build: %s", aclGetRecentErrMsg());
        CHECK(aclSetAclOpExecutorRepeatable(e));
        run(e);
        CHECK(aclrtSynchronizeStream(NULL));
        if (seen.n_inputs != 2 || seen.n_outputs != 1 || seen_param != 7 ||
            strcmp(seen.op_name, "Rec") != 0)
            FAIL("the launch header is wrong");
        if (!same_view(&seen_tensors[0], &in[0]) || seen_tensors[1].present != 0 || !same_view(&seen_tensors[2], &out[0]))
            FAIL("the kernel did not get the snapshots");
        /* re-pointing, as for executors built from handles: input 0 yes, the absent input 1 no */
        CHECK(aclSetInputTensorAddr(e, 0, t, blocks[1]));
        if (aclSetInputTensorAddr(e, 1, t, blocks[1]) != ACLNN_ERR_PARAM_INVALID) FAIL("absent input re-pointed");
        run(e);
        CHECK(aclrtSynchronizeStream(NULL));
        if (seen_tensors[0].data != blocks[1]) FAIL("re-pointing did not reach the kernel");
        CHECK(aclDestroyAclOpExecutor(e));
        /* refused: NULL arrays with a count, something that is not a snapshot */
        if (pyaclnn_stub_executor_new_snapshots("Rec", record_kernel, NULL, 0, NULL, 1, NULL, 0, 0) != NULL)
            FAIL("NULL inputs with a count accepted");
        if (!strstr(aclGetRecentErrMsg(), "inputs is NULL")) FAIL("no message for NULL inputs");
        pyaclnn_stub_tensor bad = in[0];
        bad.ndim = PYACLNN_STUB_MAX_DIMS + 1;
        if (pyaclnn_stub_executor_new_snapshots("Rec", record_kernel, NULL, 0, &bad, 1, NULL, 0, 0) != NULL)
            FAIL("a rank of %d accepted", PYACLNN_STUB_MAX_DIMS + 1);
        bad = in[0];
        bad.present = 2;
        if (pyaclnn_stub_executor_new_snapshots("Rec", record_kernel, NULL, 0, NULL, 0, &bad, 1, 0) != NULL)
            FAIL("present = 2 accepted");
        if (!strstr(aclGetRecentErrMsg(), "not a snapshot")) FAIL("no message for a bad snapshot");
        /* no tensors at all is fine (an operator whose outputs are all empty, for instance) */
        e = pyaclnn_stub_executor_new_snapshots("Rec", NULL, NULL, 0, NULL, 0, NULL, 0, 0);
        if (!e) FAIL("an executor without tensors refused");
        CHECK(aclDestroyAclOpExecutor(e));
        printf("build ok\n");
    } else {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    CHECK(aclDestroyTensor(t));
    for (int i = 0; i < 2; i++) CHECK(aclrtFree(blocks[i]));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    return 0;
}
