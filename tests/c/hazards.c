/*
 * One deliberate ordering bug per hazard kind, and the same program correctly ordered
 * (tests/test_hazards.py runs it under PYACLNN_STUB_HAZARDS=off|report|error).
 *
 *   hazards MODE VARIANT      MODE: read_before_sync | free_in_flight | cross_stream | cross_stream_op |
 *                                   bad_workspace | uninitialized_read
 *                             VARIANT: bug | sync | event | query (the ordered variants; "event" is a
 *                             record + stream wait across streams, a record + event sync for the host;
 *                             "query" polls aclrtStreamQuery; not every mode has every variant)
 *
 * Prints "status <code>" for the call the bug is about (0 in report mode, the refusal code in error
 * mode), then "findings <n> <kind>..." from pyaclnn_stub_hazards. Exit 0 unless a setup call fails.
 * Whether the queued work has already run when the offending call comes does not matter: the
 * checker orders calls by what the program did (synchronisations, events), not by timing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_copy.h"
#include "aclnnop/aclnn_zero.h"
#include "pyaclnn_stub.h"

#include "check.h"

#define N 256   /* floats per buffer */

static aclrtStream s1, s2;
/* The host waits for the work queued on s so far: by stream synchronisation, by an event recorded
 * after it ("event"), or by polling aclrtStreamQuery until it says complete ("query"). */
static void host_waits(aclrtStream s, const char *how) {
    if (strcmp(how, "event") == 0) {
        aclrtEvent ev;
        CHECK(aclrtCreateEvent(&ev));
        CHECK(aclrtRecordEvent(ev, s));
        CHECK(aclrtSynchronizeEvent(ev));
        CHECK(aclrtDestroyEvent(ev));
    } else if (strcmp(how, "query") == 0) {
        aclrtStreamStatus status = ACL_STREAM_STATUS_NOT_READY;
        while (status != ACL_STREAM_STATUS_COMPLETE) CHECK(aclrtStreamQuery(s, &status));
    } else {
        CHECK(aclrtSynchronizeStream(s));
    }
}

static aclTensor *tensor_of(void *dev) {
    int64_t shape[1] = {N}, strides[1] = {1};
    return aclCreateTensor(shape, 1, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 1, dev);
}

/* aclnnInplaceZero of dev on stream. */
static int zero_on(void *dev, aclrtStream stream, void *ws, uint64_t ws_size) {
    aclTensor *t = tensor_of(dev);
    uint64_t need = 0;
    aclOpExecutor *exec = NULL;
    CHECK(aclnnInplaceZeroGetWorkspaceSize(t, &need, &exec));
    int rc = aclnnInplaceZero(ws, ws_size, exec, stream);
    aclDestroyTensor(t);
    return rc;
}

/* aclnnInplaceCopy(dst <- src) on stream. */
static int copy_on(void *dst, void *src, aclrtStream stream) {
    aclTensor *d = tensor_of(dst), *s = tensor_of(src);
    uint64_t need = 0;
    aclOpExecutor *exec = NULL;
    CHECK(aclnnInplaceCopyGetWorkspaceSize(d, s, &need, &exec));
    int rc = aclnnInplaceCopy(NULL, 0, exec, stream);
    aclDestroyTensor(d);
    aclDestroyTensor(s);
    return rc;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s MODE bug|sync|event\n", argv[0]);
        return 2;
    }
    const char *mode = argv[1], *variant = argv[2];
    int bug = strcmp(variant, "bug") == 0, by_event = strcmp(variant, "event") == 0;
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&s1));
    CHECK(aclrtCreateStream(&s2));
    void *a = NULL, *b = NULL, *ws = NULL;
    float host[N];
    memset(host, 0, sizeof host);
    CHECK(aclrtMalloc(&a, sizeof host, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&b, sizeof host, ACL_MEM_MALLOC_HUGE_FIRST));
    int status = 0, freed_a = 0;

    if (strcmp(mode, "read_before_sync") == 0) {
        CHECK(aclrtMemsetAsync(a, sizeof host, 0, sizeof host, s1));   /* queued work writes a */
        if (!bug) host_waits(s1, variant);
        status = aclrtMemcpy(host, sizeof host, a, sizeof host, ACL_MEMCPY_DEVICE_TO_HOST);
    } else if (strcmp(mode, "free_in_flight") == 0) {
        CHECK(zero_on(a, s1, NULL, 0));                                 /* queued work writes a */
        if (!bug) host_waits(s1, variant);
        status = aclrtFree(a);
        freed_a = status == 0;
    } else if (strcmp(mode, "cross_stream") == 0) {
        CHECK(aclrtMemsetAsync(a, sizeof host, 0, sizeof host, s1));   /* s1 writes a */
        if (by_event) {
            aclrtEvent ev;
            CHECK(aclrtCreateEvent(&ev));
            CHECK(aclrtRecordEvent(ev, s1));
            CHECK(aclrtStreamWaitEvent(s2, ev));
            CHECK(aclrtDestroyEvent(ev));
        } else if (!bug) {
            CHECK(aclrtSynchronizeStream(s1));
        }
        status = aclrtMemcpyAsync(b, sizeof host, a, sizeof host, ACL_MEMCPY_DEVICE_TO_DEVICE, s2);  /* s2 reads a */
    } else if (strcmp(mode, "cross_stream_op") == 0) {
        CHECK(aclrtMemsetAsync(b, sizeof host, 0, sizeof host, s2));
        CHECK(zero_on(a, s1, NULL, 0));                                 /* s1: InplaceZero writes a */
        if (by_event) {
            aclrtEvent ev;
            CHECK(aclrtCreateEvent(&ev));
            CHECK(aclrtRecordEvent(ev, s1));
            CHECK(aclrtStreamWaitEvent(s2, ev));
            CHECK(aclrtDestroyEvent(ev));
        } else if (!bug) {
            CHECK(aclrtSynchronizeStream(s1));
        }
        status = copy_on(b, a, s2);                                     /* s2: InplaceCopy reads a */
    } else if (strcmp(mode, "bad_workspace") == 0) {
        uint64_t size = 1 << 20;
        CHECK(aclrtMalloc(&ws, bug ? 64 : size, ACL_MEM_MALLOC_HUGE_FIRST));   /* bug: 64 bytes claim 1 MiB */
        status = zero_on(a, s1, ws, size);
    } else if (strcmp(mode, "uninitialized_read") == 0) {
        if (!bug) CHECK(aclrtMemsetAsync(a, sizeof host, 0, sizeof host, s1));  /* a written first */
        CHECK(aclrtMemsetAsync(b, sizeof host, 0, sizeof host, s1));
        status = copy_on(b, a, s1);                                     /* InplaceCopy reads a */
    } else {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    printf("status %d\n", status);
    if (status != 0) printf("message %s\n", aclGetRecentErrMsg());
    int synced = aclrtSynchronizeDevice();
    /* memory freed under a queued kernel: the kernel finds it gone and fails (if it had not run yet) */
    if (synced != 0 && !(freed_a && bug)) CHECK(synced);
    if (!freed_a) CHECK(aclrtFree(a));
    CHECK(aclrtFree(b));
    if (ws) CHECK(aclrtFree(ws));

    size_t n = pyaclnn_stub_hazards(NULL, 0, 0);
    pyaclnn_stub_hazard found[8];
    size_t got = pyaclnn_stub_hazards(found, 8, 1);
    static const char *const kinds[] = {"read-before-sync", "free-in-flight", "cross-stream", "bad-workspace",
                                        "uninitialized-read"};
    printf("findings %zu", n);
    for (size_t i = 0; i < got; i++) printf(" %s", kinds[found[i].kind]);
    printf("\n");
    CHECK(aclrtDestroyStream(s1));
    CHECK(aclrtDestroyStream(s2));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    return 0;
}
