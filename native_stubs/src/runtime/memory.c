/*
 * Device and pinned host memory. Device memory is host memory tracked by range (memory_table.c),
 * so copies can check kinds and bounds and aclrtFree can refuse pointers it did not hand out.
 *  - aclrtMalloc rounds the size up to a multiple of 32 and adds 32 bytes of padding (none for the
 *    1G-huge-page policies); aclrtMallocAlign32 only rounds. The padded size is what a copy may
 *    touch, as on the NPU. Blocks are 512-byte aligned.
 *  - Each device has an emulated capacity (rt_device_capacity); allocations beyond it fail with
 *    ACL_ERROR_RT_MEMORY_ALLOCATION (207001), and aclrtGetMemInfo reports it.
 *  - aclrtFree / aclrtFreeHost never touch a pointer they do not know: NULL -> 100000, anything
 *    else that is not the start of a live allocation of the right kind -> 107000 with the reason.
 *  - A freed block is released at once unless queued work uses it: copies, memsets and kernel
 *    launches pin the blocks they touch when they are validated (memory_table.c), and the block is
 *    released when the last of them has run. So a task queued before (or racing with) the free
 *    never writes into memory the host reuses, and frees of other memory are never held back.
 */
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"

#define DEVICE_ALIGNMENT 512
#define HOST_ALIGNMENT 64
#define ALIGN 32u
#define PADDING 32u

/* ---- capacity -------------------------------------------------------------------------------- */

static pthread_mutex_t capacity_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t used_bytes[RT_MAX_DEVICES];
static uint64_t peak_bytes[RT_MAX_DEVICES];   /* aclrtGetMemUsageInfo's memPeakSize */

static int reserve(int32_t device, size_t bytes, uint64_t *used, uint64_t *capacity) {
    *capacity = rt_device_capacity();
    pthread_mutex_lock(&capacity_mu);
    int ok = bytes <= *capacity - used_bytes[device] && used_bytes[device] <= *capacity;
    if (ok) used_bytes[device] += bytes;
    if (used_bytes[device] > peak_bytes[device]) peak_bytes[device] = used_bytes[device];
    *used = used_bytes[device];
    pthread_mutex_unlock(&capacity_mu);
    return ok;
}

static void unreserve(int32_t device, size_t bytes) {
    pthread_mutex_lock(&capacity_mu);
    used_bytes[device] -= bytes;
    pthread_mutex_unlock(&capacity_mu);
}

void rt_device_memory_usage(int32_t device, uint64_t *used, uint64_t *peak) {
    pthread_mutex_lock(&capacity_mu);
    *used = device >= 0 && device < RT_MAX_DEVICES ? used_bytes[device] : 0;
    *peak = device >= 0 && device < RT_MAX_DEVICES ? peak_bytes[device] : 0;
    pthread_mutex_unlock(&capacity_mu);
}

/* ---- allocation ------------------------------------------------------------------------------ */

static aclError malloc_device(const char *func, void **devPtr, size_t size, aclrtMemMallocPolicy policy,
                              int pad) {
    if (!devPtr) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "devPtr is NULL");
    if (size == 0) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "size must be greater than 0");
    rt_context *ctx;
    aclError rc = rt_require_context(func, &ctx);
    if (rc) return rc;
    int huge1g = policy == ACL_MEM_MALLOC_HUGE1G_ONLY || policy == ACL_MEM_MALLOC_HUGE1G_ONLY_P2P;
    size_t append = (pad && !huge1g) ? ALIGN + PADDING : ALIGN;
    /* The rounding below (alignment, padding, then the host block) must not wrap size_t. */
    size_t max_size = SIZE_MAX - append - DEVICE_ALIGNMENT;
    if (size > max_size)
        return RT_REPORT(ACL_ERROR_INVALID_PARAM, func,
                         "size %zu is too large: with alignment and padding it overflows size_t (at most %zu "
                         "bytes; a negative size converted to size_t?)", size, max_size);
    size_t padded = (size + append - 1) / ALIGN * ALIGN;

    uint64_t used, capacity;
    if (!reserve(ctx->device, padded, &used, &capacity))
        return RT_REPORT(ACL_ERROR_RT_MEMORY_ALLOCATION, func,
                         "out of device memory on device %d: %zu bytes requested (%zu with alignment "
                         "and padding), %llu of %llu bytes in use",
                         ctx->device, size, padded, (unsigned long long)used, (unsigned long long)capacity);
    void *p = NULL;
    size_t block = (padded + DEVICE_ALIGNMENT - 1) / DEVICE_ALIGNMENT * DEVICE_ALIGNMENT;
    if (posix_memalign(&p, DEVICE_ALIGNMENT, block) != 0) p = NULL;
    rt_mem_range r = {(uintptr_t)p, padded, size, RT_MEM_DEVICE, ctx->device, NULL};
    if (!p || rt_mem_table_insert(&r) != 0) {
        free(p);
        unreserve(ctx->device, padded);
        return RT_REPORT(ACL_ERROR_RT_MEMORY_ALLOCATION, func,
                         "the host could not provide %zu bytes for device %d", padded, ctx->device);
    }
    if (rt_hz_poison) rt_hz_malloc((uintptr_t)p, padded);
    *devPtr = p;
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy) {
    return malloc_device("aclrtMalloc", devPtr, size, policy, 1);
}

ACL_FUNC_VISIBILITY aclError aclrtMallocAlign32(void **devPtr, size_t size, aclrtMemMallocPolicy policy) {
    return malloc_device("aclrtMallocAlign32", devPtr, size, policy, 0);
}

static const char *kind_owner(rt_mem_kind kind) {
    switch (kind) {
    case RT_MEM_DEVICE: return "aclrtMalloc";
    case RT_MEM_PINNED: return "aclrtMallocHost";
    case RT_MEM_REGISTERED: return "host memory registration";
    default: return "an unknown allocator";
    }
}

/* Explains why p is not the start of a live allocation of `kind`, and reports it. */
static aclError report_bad_free(const char *func, const char *name, void *p, rt_mem_kind kind) {
    rt_mem_range r;
    if (!rt_mem_table_find((uintptr_t)p, &r))
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func,
                         "%s %p is not a live allocation of %s (never allocated, or already freed)", name,
                         p, kind_owner(kind));
    if (r.kind != kind)
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func, "%s %p was allocated by %s, not %s", name, p,
                         kind_owner(r.kind), kind_owner(kind));
    return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func,
                     "%s %p points %zu bytes into the allocation at %p, not at its start", name, p,
                     (size_t)((uintptr_t)p - r.base), (void *)r.base);
}

ACL_FUNC_VISIBILITY aclError aclrtFree(void *devPtr) {
    static const char func[] = "aclrtFree";
    if (rt_fork_check(func)) return ACL_ERROR_RT_DRV_INTERNAL_ERROR;
    if (!devPtr) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "devPtr is NULL");
    rt_mem_range r;
    if (rt_hz_mode && rt_mem_table_find((uintptr_t)devPtr, &r) && r.base == (uintptr_t)devPtr &&
        r.kind == RT_MEM_DEVICE) {
        char msg[800];
        int code = rt_hz_free(func, (uintptr_t)devPtr, msg, sizeof msg);
        if (code) return RT_REPORT(code, func, "%s", msg);
    }
    if (!rt_mem_table_remove((uintptr_t)devPtr, RT_MEM_DEVICE, &r))
        return report_bad_free(func, "devPtr", devPtr, RT_MEM_DEVICE);
    unreserve(r.device, r.size);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtMallocHost(void **hostPtr, size_t size) {
    static const char func[] = "aclrtMallocHost";
    if (rt_fork_check(func)) return ACL_ERROR_RT_DRV_INTERNAL_ERROR;
    if (!hostPtr) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "hostPtr is NULL");
    if (size == 0) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "size must be greater than 0");
    void *p = NULL;
    size_t block = (size + HOST_ALIGNMENT - 1) / HOST_ALIGNMENT * HOST_ALIGNMENT;
    if (block < size || posix_memalign(&p, HOST_ALIGNMENT, block) != 0) p = NULL;
    rt_context *ctx = rt_current_context();
    rt_mem_range r = {(uintptr_t)p, size, size, RT_MEM_PINNED, ctx ? ctx->device : -1, NULL};
    if (!p || rt_mem_table_insert(&r) != 0) {
        free(p);
        return RT_REPORT(ACL_ERROR_RT_MEMORY_ALLOCATION, func, "cannot allocate %zu bytes of host memory", size);
    }
    *hostPtr = p;
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtFreeHost(void *hostPtr) {
    static const char func[] = "aclrtFreeHost";
    if (rt_fork_check(func)) return ACL_ERROR_RT_DRV_INTERNAL_ERROR;
    if (!hostPtr) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "hostPtr is NULL");
    rt_mem_range r;
    if (rt_hz_mode && rt_mem_table_find((uintptr_t)hostPtr, &r) && r.base == (uintptr_t)hostPtr &&
        r.kind == RT_MEM_PINNED) {   /* free-in-flight of pinned memory an async copy still uses */
        char msg[800];
        int code = rt_hz_free(func, (uintptr_t)hostPtr, msg, sizeof msg);
        if (code) return RT_REPORT(code, func, "%s", msg);
    }
    if (!rt_mem_table_remove((uintptr_t)hostPtr, RT_MEM_PINNED, NULL))
        return report_bad_free(func, "hostPtr", hostPtr, RT_MEM_PINNED);
    if (rt_hz_mode) rt_hz_forget((uintptr_t)hostPtr);
    return ACL_SUCCESS;
}

/* ---- information ----------------------------------------------------------------------------- */

ACL_FUNC_VISIBILITY aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free, size_t *total) {
    static const char func[] = "aclrtGetMemInfo";
    if (!free) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "free is NULL");
    if (!total) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "total is NULL");
    if ((int)attr < ACL_DDR_MEM || (int)attr > ACL_MEM_P2P_HUGE1G)
        return RT_REPORT(ACL_ERROR_RT_INVALID_MEMORY_TYPE, func,
                         "attr %d is not an aclrtMemAttr (expected 0..%d)", (int)attr, (int)ACL_MEM_P2P_HUGE1G);
    rt_context *ctx;
    aclError rc = rt_require_context(func, &ctx);
    if (rc) return rc;
    switch (attr) {
    case ACL_DDR_MEM:
    case ACL_DDR_MEM_HUGE:
    case ACL_DDR_MEM_NORMAL:
    case ACL_DDR_MEM_P2P_HUGE:
    case ACL_DDR_MEM_P2P_NORMAL:
        *free = *total = 0;   /* the emulated cards, like A2/A3/950, have HBM and no device DDR */
        return ACL_SUCCESS;
    default:
        break;
    }
    uint64_t capacity = rt_device_capacity();
    pthread_mutex_lock(&capacity_mu);
    uint64_t used = used_bytes[ctx->device];
    pthread_mutex_unlock(&capacity_mu);
    *total = (size_t)capacity;
    *free = (size_t)(capacity - used);
    return ACL_SUCCESS;
}

static void classify(const void *p, rt_mem_range *r, int pin) {
    if (!(pin ? rt_mem_table_find_pin : rt_mem_table_find)((uintptr_t)p, r)) {
        memset(r, 0, sizeof *r);
        r->kind = RT_MEM_PAGEABLE;
        r->base = (uintptr_t)p;
        r->device = -1;
    }
}

void rt_mem_classify(const void *p, rt_mem_range *r) { classify(p, r, 0); }

void rt_mem_classify_pin(const void *p, rt_mem_range *r) { classify(p, r, 1); }

/* ---- cross-library API ----------------------------------------------------------------------- */

PYACLNN_STUB_API int pyaclnn_stub_mem_lookup(const void *p, size_t nbytes, void **base, size_t *size) {
    rt_mem_range r;
    uintptr_t u = (uintptr_t)p;
    int found = rt_mem_table_find(u, &r);
    if (!found && nbytes == 0 && u > 0) found = rt_mem_table_find(u - 1, &r) && u == r.base + r.size;
    if (!found || (r.kind != RT_MEM_DEVICE && r.kind != RT_MEM_REGISTERED)) return 0;
    if (nbytes > r.size - (u - r.base)) return 0;
    if (base) *base = (void *)r.base;
    if (size) *size = r.size;
    return 1;
}

PYACLNN_STUB_API void *pyaclnn_stub_mem_pin(const void *p, int32_t *device) {
    rt_mem_range r;
    if (!p || !rt_mem_table_find_pin((uintptr_t)p, &r)) return NULL;
    if (device) *device = r.kind == RT_MEM_DEVICE ? r.device : -1;   /* host memory: any device's */
    return r.block;
}

PYACLNN_STUB_API void pyaclnn_stub_mem_unpin(void *pin) { rt_mem_unpin(pin); }

PYACLNN_STUB_API aclError pyaclnn_stub_mem_register(void *p, size_t nbytes) {
    static const char func[] = "pyaclnn_stub_mem_register";
    if (!p) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "pointer is NULL");
    if (nbytes == 0) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "size must be greater than 0");
    if ((uintptr_t)p + nbytes < (uintptr_t)p)
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func, "range %p + %zu wraps around", p, nbytes);
    if (rt_mem_table_overlaps((uintptr_t)p, nbytes))
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func,
                         "range [%p, +%zu) overlaps memory the runtime already knows", p, nbytes);
    rt_context *ctx = rt_current_context();
    rt_mem_range r = {(uintptr_t)p, nbytes, nbytes, RT_MEM_REGISTERED, ctx ? ctx->device : -1, NULL};
    if (rt_mem_table_insert(&r) != 0)
        return RT_REPORT(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, func, "out of host memory");
    return ACL_SUCCESS;
}

PYACLNN_STUB_API aclError pyaclnn_stub_mem_unregister(void *p) {
    static const char func[] = "pyaclnn_stub_mem_unregister";
    if (!p) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "pointer is NULL");
    if (!rt_mem_table_remove((uintptr_t)p, RT_MEM_REGISTERED, NULL))
        return report_bad_free(func, "pointer", p, RT_MEM_REGISTERED);
    if (rt_hz_mode) rt_hz_forget((uintptr_t)p);
    return ACL_SUCCESS;
}
