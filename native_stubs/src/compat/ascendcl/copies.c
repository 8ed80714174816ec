/*
 * Copies beyond aclrtMemcpy(Async) (acl_rt.h), built on the runtime's own copy checks (memcpy.c), so
 * kinds, bounds, pinning, page-locked vs pageable host memory and the hazard checker behave the same.
 *
 *   aclrtMemcpyBatch        checks every pair first (declared locations against the real ones, host<->device
 *                           only), then copies them in order, synchronously; at most 4096 pairs
 *   aclrtMemcpyBatchAsync   checks and queues the pairs one by one on the stream (a pair with pageable host
 *                           memory is copied when the stream reaches it and the call waits for it, as
 *                           aclrtMemcpyAsync does); pairs before a failing one stay queued
 *   aclrtMemcpyAsyncWithCondition  aclrtMemcpyAsync: asynchronous when the host side is page-locked,
 *                           synchronous otherwise (the "condition")
 *   aclrtCmoAsync           prefetch / write-back / invalidate / flush of device memory: the emulator has no
 *                           device caches, so it is a task that orders the stream and does nothing
 *
 * *failIndex is SIZE_MAX unless a pair failed, then its index. Codes as hicann/runtime: the acl layer's
 * NULL / zero / destMax / reserved-field checks -> ACL_ERROR_INVALID_PARAM; the runtime's attribute-index
 * and location checks -> ACL_ERROR_RT_PARAM_INVALID.
 */
#include <stdint.h>

#include "../compat.h"
#include "../../runtime/rt_internal.h"

#define BATCH_MAX 4096   /* DEVMM_MEMCPY_BATCH_MAX_COUNT, for the synchronous form */

static const char *location_name(aclrtMemLocationType t) {
    switch (t) {
    case ACL_MEM_LOCATION_TYPE_HOST: return "HOST";
    case ACL_MEM_LOCATION_TYPE_DEVICE: return "DEVICE";
    case ACL_MEM_LOCATION_TYPE_UNREGISTERED: return "UNREGISTERED";
    case ACL_MEM_LOCATION_TYPE_HOST_NUMA: return "HOST_NUMA";
    default: return "an unknown location type";
    }
}

/* Where p really is, as the runtime's attribute query says (unregistered host memory counts as HOST). */
static void locate(const void *p, aclrtMemLocationType *type, int32_t *device) {
    rt_mem_range r;
    rt_mem_classify(p, &r);
    *type = r.kind == RT_MEM_DEVICE ? ACL_MEM_LOCATION_TYPE_DEVICE : ACL_MEM_LOCATION_TYPE_HOST;
    *device = r.kind == RT_MEM_DEVICE ? r.device : 0;
}

/* Checks one side of pair i against its declared location. */
static aclError check_side(const char *func, size_t i, const char *role, const void *p, const aclrtMemLocation *loc,
                           aclrtMemLocationType *real) {
    int32_t device;
    locate(p, real, &device);
    aclrtMemLocationType declared = loc->type == ACL_MEM_LOCATION_TYPE_HOST_NUMA ? ACL_MEM_LOCATION_TYPE_HOST : loc->type;
    if (*real != declared || (*real == ACL_MEM_LOCATION_TYPE_DEVICE && (uint32_t)device != loc->id))
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func,
                         "pair %zu: %s %p is %s memory%s, but its attribute says %s (id %u)", i, role, p,
                         location_name(*real), *real == ACL_MEM_LOCATION_TYPE_DEVICE ? " of that device" : "",
                         location_name(loc->type), loc->id);
    return ACL_SUCCESS;
}

static aclError batch(const char *func, void **dsts, size_t *destMaxs, void **srcs, size_t *sizes, size_t numBatches,
                      aclrtMemcpyBatchAttr *attrs, size_t *attrsIndexes, size_t numAttrs, size_t *failIndex,
                      aclrtStream stream, int async) {
    if (!failIndex) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "failIndex is NULL");
    if (!sizes) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "sizes is NULL");
    if (numBatches == 0) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "numBatches must be greater than 0");
    *failIndex = SIZE_MAX;
    size_t nonzero = 0;
    for (size_t i = 0; i < numBatches; i++) nonzero += sizes[i] != 0;
    if (nonzero == 0) return ACL_SUCCESS;   /* nothing to copy: the other arguments are not looked at */
    const char *null = !dsts ? "dsts" : !destMaxs ? "destMaxs" : !srcs ? "srcs" : !attrs ? "attrs"
                     : !attrsIndexes ? "attrsIndexes" : NULL;
    if (null) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "%s is NULL", null);
    for (size_t i = 0; i < numBatches; i++)
        if (destMaxs[i] < sizes[i])
            return RT_REPORT(ACL_ERROR_INVALID_PARAM, func,
                             "the memory copy size %zu at index %zu exceeds the size %zu of the destination buffer",
                             sizes[i], i, destMaxs[i]);
    for (size_t a = 0; a < numAttrs; a++)
        for (size_t k = 0; k < sizeof attrs[a].rsv; k++)
            if (attrs[a].rsv[k] != 0)
                return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "attrs[%zu].rsv must be 0", a);
    aclError rc = rt_fork_check(func);
    if (rc) return rc;
    rt_stream *s = NULL;
    if (async && (rc = rt_stream_resolve(func, stream, &s))) return rc;
    if (numAttrs == 0) return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func, "numAttrs must be greater than 0");
    if (numAttrs > numBatches)
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func, "numAttrs %zu must not exceed numBatches %zu", numAttrs,
                         numBatches);
    if (!async && numBatches > BATCH_MAX)
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func, "numBatches %zu exceeds %d", numBatches, BATCH_MAX);
    if (attrsIndexes[0] != 0)
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func, "attrsIndexes[0] is %zu, expected 0", attrsIndexes[0]);
    for (size_t a = 1; a < numAttrs; a++)
        if (attrsIndexes[a] <= attrsIndexes[a - 1] || attrsIndexes[a] >= numBatches)
            return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func,
                             "attrsIndexes[%zu] is %zu: each entry must be greater than the previous one (%zu) and "
                             "less than numBatches (%zu)", a, attrsIndexes[a], attrsIndexes[a - 1], numBatches);
    /* The synchronous form checks every pair before copying any; the asynchronous one pair by pair. */
    for (int pass = async ? 1 : 0; pass < 2; pass++) {
        size_t a = 0;
        for (size_t i = 0; i < numBatches; i++) {
            if (a + 1 < numAttrs && i >= attrsIndexes[a + 1]) a++;
            aclrtMemLocationType dst_type, src_type;
            if ((rc = check_side(func, i, "dst", dsts[i], &attrs[a].dstLoc, &dst_type)) ||
                (rc = check_side(func, i, "src", srcs[i], &attrs[a].srcLoc, &src_type))) {
                *failIndex = i;
                return rc;
            }
            if (dst_type == src_type) {
                *failIndex = i;
                return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func,
                                 "pair %zu copies %s to %s: only host-to-device and device-to-host copies are "
                                 "supported", i, location_name(src_type), location_name(dst_type));
            }
            if (pass == 0) continue;
            aclrtMemcpyKind kind = dst_type == ACL_MEM_LOCATION_TYPE_DEVICE ? ACL_MEMCPY_HOST_TO_DEVICE
                                                                            : ACL_MEMCPY_DEVICE_TO_HOST;
            rc = async ? rt_memcpy_async(func, dsts[i], destMaxs[i], srcs[i], sizes[i], kind, s)
                       : rt_memcpy(func, dsts[i], destMaxs[i], srcs[i], sizes[i], kind);
            if (rc) {
                *failIndex = i;
                return rc;
            }
        }
    }
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtMemcpyBatch(void **dsts, size_t *destMaxs, void **srcs, size_t *sizes,
                                              size_t numBatches, aclrtMemcpyBatchAttr *attrs, size_t *attrsIndexes,
                                              size_t numAttrs, size_t *failIndex) {
    return batch("aclrtMemcpyBatch", dsts, destMaxs, srcs, sizes, numBatches, attrs, attrsIndexes, numAttrs,
                 failIndex, NULL, 0);
}

ACL_FUNC_VISIBILITY aclError aclrtMemcpyBatchAsync(void **dsts, size_t *destMaxs, void **srcs, size_t *sizes,
                                                   size_t numBatches, aclrtMemcpyBatchAttr *attrs,
                                                   size_t *attrsIndexes, size_t numAttrs, size_t *failIndex,
                                                   aclrtStream stream) {
    return batch("aclrtMemcpyBatchAsync", dsts, destMaxs, srcs, sizes, numBatches, attrs, attrsIndexes, numAttrs,
                 failIndex, stream, 1);
}

ACL_FUNC_VISIBILITY aclError aclrtMemcpyAsyncWithCondition(void *dst, size_t destMax, const void *src, size_t count,
                                                           aclrtMemcpyKind kind, aclrtStream stream) {
    return rt_memcpy_async("aclrtMemcpyAsyncWithCondition", dst, destMax, src, count, kind, stream);
}

static void nothing(void *arg) { (void)arg; }

ACL_FUNC_VISIBILITY aclError aclrtCmoAsync(void *src, size_t size, aclrtCmoType cmoType, aclrtStream stream) {
    static const char func[] = "aclrtCmoAsync";
    if (!src) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "src is NULL");
    if (size == 0) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "size must be greater than 0");
    if ((int)cmoType < ACL_RT_CMO_TYPE_PREFETCH || (int)cmoType > ACL_RT_CMO_TYPE_FLUSH)
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func,
                         "cmoType %d is invalid: ACL_RT_CMO_TYPE_PREFETCH (0) .. ACL_RT_CMO_TYPE_FLUSH (3)",
                         (int)cmoType);
    rt_stream *s;
    aclError rc = rt_stream_resolve(func, stream, &s);
    if (rc) return rc;
    rt_mem_range r;
    rt_mem_classify(src, &r);
    if (r.kind != RT_MEM_DEVICE || size > r.size - ((uintptr_t)src - r.base))
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func, "[%p, +%zu) is not inside one device allocation", src, size);
    rt_task t = {.kind = RT_TASK_CALL, .u.call = {nothing, NULL, NULL}};
    return rt_stream_enqueue(func, s, &t, NULL);
}
