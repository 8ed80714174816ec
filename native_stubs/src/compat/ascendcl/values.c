/*
 * aclrtValueWrite / aclrtValueWait (acl_rt.h): stream-ordered writes to, and waits on, 8 bytes of
 * device memory -- the building blocks torch_npu's external events are made of (record: write 1; wait:
 * wait for 1, then write 0).
 *
 *   aclrtValueWrite(devAddr, value, 0, stream)   when the stream reaches it, stores value (64 bits)
 *   aclrtValueWait(devAddr, value, flag, stream) the stream stops there until the 64-bit word meets the
 *                                                condition: ACL_STREAM_WAIT_VALUE_GEQ (signed >=, the
 *                                                device's BGE), _EQ, _AND ((*p & value) != 0), _NOR
 *                                                (~(*p | value) != 0)
 *
 * Checks, as hicann/runtime makes them: devAddr NULL -> ACL_ERROR_INVALID_PARAM; a SoC without the
 * feature (anything but Atlas A2/A3 and Ascend 950) -> ACL_ERROR_RT_FEATURE_NOT_SUPPORT; write flag != 0 or
 * wait flag > 3 -> ACL_ERROR_RT_PARAM_INVALID; memory that is not device memory -> ACL_ERROR_RT_PARAM_INVALID.
 * Beyond the vendor's checks (as copies do): the 8 bytes must lie in one allocation of the stream's device.
 *
 * The waiting worker wakes when a value write lands (any stream) and otherwise re-reads the word every
 * POLL_MS, so writes by kernels and copies release it too; aclrtDestroyStreamForce and process exit end
 * the wait. The allocation stays pinned while the task is queued. For the hazard checker these are
 * synchronisation (a wait orders its stream after the write that releases it), not data accesses.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../compat.h"
#include "../../runtime/rt_internal.h"

#define POLL_MS 2

static pthread_mutex_t value_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t value_cv;
static pthread_once_t value_once = PTHREAD_ONCE_INIT;
static void init_cv(void) { rt_cond_init_monotonic(&value_cv); }

typedef struct {
    rt_stream *s;
    void *addr;
    uint64_t value;
    uint32_t flag;
} value_task;

static uint64_t load64(const void *p) {
    if (((uintptr_t)p & 7u) == 0) return __atomic_load_n((const uint64_t *)p, __ATOMIC_ACQUIRE);
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static void store64(void *p, uint64_t v) {
    if (((uintptr_t)p & 7u) == 0) __atomic_store_n((uint64_t *)p, v, __ATOMIC_RELEASE);
    else memcpy(p, &v, sizeof v);
}

static int satisfied(uint64_t current, uint64_t value, uint32_t flag) {
    switch (flag) {
    case ACL_STREAM_WAIT_VALUE_GEQ: return (int64_t)current >= (int64_t)value;
    case ACL_STREAM_WAIT_VALUE_EQ: return current == value;
    case ACL_STREAM_WAIT_VALUE_AND: return (current & value) != 0;
    default: return ~(current | value) != 0;   /* ACL_STREAM_WAIT_VALUE_NOR */
    }
}

static void run_write(void *p) {
    value_task *t = p;
    store64(t->addr, t->value);
    pthread_mutex_lock(&value_mu);
    pthread_cond_broadcast(&value_cv);
    pthread_mutex_unlock(&value_mu);
}

static void run_wait(void *p) {
    value_task *t = p;
    pthread_mutex_lock(&value_mu);
    while (!satisfied(load64(t->addr), t->value, t->flag) && !atomic_load(&t->s->abort) &&
           !atomic_load(&rt_process_exiting)) {
        struct timespec deadline;
        rt_deadline_after_ms(&deadline, POLL_MS);
        pthread_cond_timedwait(&value_cv, &value_mu, &deadline);
    }
    pthread_mutex_unlock(&value_mu);
}

static aclError submit(const char *func, void *devAddr, uint64_t value, uint32_t flag, aclrtStream stream, int wait) {
    if (!devAddr) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "devAddr is NULL");
    pyaclnn_soc_family family = pyaclnn_stub_soc_family();
    if (family != PYACLNN_SOC_A2 && family != PYACLNN_SOC_950)
        return pyaclnn_stub_compat_unsupported(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, func,
                                               "stream value writes and waits on this SoC (Atlas A2/A3 and Ascend "
                                               "950 have them)");
    rt_stream *s;
    aclError rc = rt_stream_resolve(func, stream, &s);
    if (rc) return rc;
    if (wait && flag > ACL_STREAM_WAIT_VALUE_NOR)
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func,
                         "flag %u is invalid: ACL_STREAM_WAIT_VALUE_GEQ (0), _EQ (1), _AND (2) or _NOR (3)", flag);
    if (!wait && flag != 0) return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func, "flag %u is invalid: it must be 0", flag);
    rt_mem_range r;
    rt_mem_classify_pin(devAddr, &r);   /* pinned until the task has run */
    rt_context *owner = atomic_load(&s->ctx);
    if (r.kind != RT_MEM_DEVICE) rc = RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func,
                                                "devAddr %p is not device memory (aclrtMalloc): its location type is "
                                                "%s, expected ACL_MEM_LOCATION_TYPE_DEVICE", devAddr,
                                                r.kind == RT_MEM_PAGEABLE ? "UNREGISTERED" : "HOST");
    else if (r.size < sizeof(uint64_t) || (uintptr_t)devAddr - r.base > r.size - sizeof(uint64_t))
        rc = RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func,
                       "the 8 bytes at devAddr %p run past the end of the allocation [%p, +%zu)", devAddr,
                       (void *)r.base, r.size);
    else if (owner && r.device != owner->device)
        rc = RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func,
                       "devAddr %p is memory of device %d, but stream %p belongs to device %d (no peer access "
                       "between emulated devices)", devAddr, (int)r.device, (void *)s, (int)owner->device);
    value_task *t = rc ? NULL : malloc(sizeof *t);
    if (!rc && !t) rc = RT_REPORT(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, func, "out of host memory for the task");
    if (rc) {
        rt_mem_unpin(r.block);
        return rc;
    }
    pthread_once(&value_once, init_cv);
    *t = (value_task){s, devAddr, value, flag};
    rt_task task = {.kind = RT_TASK_CALL, .pins = {r.block, NULL}, .u.call = {wait ? run_wait : run_write, free, t}};
    rt_hz_task info = {wait ? "valueWait" : "valueWrite", NULL, 0, 0,
                       wait ? RT_HZ_SYNC_VALUE_WAIT : RT_HZ_SYNC_VALUE_WRITE, devAddr, value, flag, NULL};
    rc = rt_stream_enqueue_checked(func, s, &task, NULL, &info);
    if (rc) {
        rt_mem_unpin(r.block);
        free(t);
    }
    return rc;
}

ACL_FUNC_VISIBILITY aclError aclrtValueWrite(void *devAddr, uint64_t value, uint32_t flag, aclrtStream stream) {
    return submit("aclrtValueWrite", devAddr, value, flag, stream, 0);
}

ACL_FUNC_VISIBILITY aclError aclrtValueWait(void *devAddr, uint64_t value, uint32_t flag, aclrtStream stream) {
    return submit("aclrtValueWait", devAddr, value, flag, stream, 1);
}
