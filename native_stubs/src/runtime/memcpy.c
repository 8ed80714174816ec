/*
 * aclrtMemcpy / aclrtMemcpyAsync / aclrtMemcpy2d / aclrtMemcpy2dAsync / aclrtMemset /
 * aclrtMemsetAsync.
 *
 * Checks, in the vendor's order: count (or width/height) 0 -> success, nothing done; NULL pointer ->
 * ACL_ERROR_INVALID_PARAM; unsupported kind -> ACL_ERROR_INVALID_PARAM (2-D: width > a pitch too);
 * count > destMax (memset: count > maxCount) -> ACL_ERROR_RT_PARAM_INVALID. Then, beyond what the
 * vendor checks on the host, the kind against where the pointers really are: a device side must lie
 * inside one live device allocation (its padded bounds, as the NPU would accept) or a registered
 * host range; a host side must not be device memory (and must stay inside its aclrtMallocHost
 * block, if it is one). A violation -> ACL_ERROR_RT_PARAM_INVALID naming the side and the reason.
 * ACL_MEMCPY_DEFAULT takes the direction from the pointers.
 *
 * aclrtMemcpy / aclrtMemset run at once and do not wait for queued stream work (as on the NPU).
 * The async forms enqueue the copy; when a host side is pageable (not from aclrtMallocHost or
 * registered) they then wait for that copy, so the caller may reuse its buffer on return.
 *
 * Validation pins the blocks it found (rt_mem_classify_pin) and the task keeps the pins until it has
 * run, so an aclrtFree racing the call cannot release memory between the check and the copy.
 */
#include <string.h>

#include "rt_internal.h"

typedef enum { TO_HOST = 0, TO_DEVICE = 1 } side_kind;

static const char *kind_name(aclrtMemcpyKind kind) {
    switch (kind) {
    case ACL_MEMCPY_HOST_TO_HOST: return "ACL_MEMCPY_HOST_TO_HOST";
    case ACL_MEMCPY_HOST_TO_DEVICE: return "ACL_MEMCPY_HOST_TO_DEVICE";
    case ACL_MEMCPY_DEVICE_TO_HOST: return "ACL_MEMCPY_DEVICE_TO_HOST";
    case ACL_MEMCPY_DEVICE_TO_DEVICE: return "ACL_MEMCPY_DEVICE_TO_DEVICE";
    case ACL_MEMCPY_DEFAULT: return "ACL_MEMCPY_DEFAULT";
    case ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE: return "ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE";
    default: return "an unsupported kind";
    }
}

static const char *where(const rt_mem_range *r) {
    switch (r->kind) {
    case RT_MEM_DEVICE: return "device memory (aclrtMalloc)";
    case RT_MEM_PINNED: return "host memory (aclrtMallocHost)";
    case RT_MEM_REGISTERED: return "registered host memory";
    default: return "host memory not known to the runtime";
    }
}

/* Checks one side of a copy: `span` bytes at p, which must be device-side (want == TO_DEVICE) or
 * host-side memory. `loc` is where p points. */
static aclError check_side(const char *func, const char *role, const void *p, size_t span, side_kind want,
                           const char *kind, const rt_mem_range *loc) {
    int device_side = loc->kind == RT_MEM_DEVICE || loc->kind == RT_MEM_REGISTERED;
    if (want == TO_DEVICE && !device_side)
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func, "%s needs device memory at %s, but %s %p is %s",
                         kind, role, role, p, where(loc));
    if (want == TO_HOST && loc->kind == RT_MEM_DEVICE)
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func,
                         "%s needs host memory at %s, but %s %p is device memory (aclrtMalloc, device %d)",
                         kind, role, role, p, (int)loc->device);
    if (loc->kind == RT_MEM_PAGEABLE) return ACL_SUCCESS;   /* nothing known to check against */
    size_t offset = (size_t)((uintptr_t)p - loc->base);
    if (span > loc->size - offset)
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func,
                         "%s range [%p, +%zu) runs %zu bytes past the end of its %s block [%p, +%zu)", role,
                         p, span, span - (loc->size - offset), where(loc), (void *)loc->base, loc->size);
    return ACL_SUCCESS;
}

static void unpin(rt_mem_block **pins) {
    rt_mem_unpin(pins[0]);
    rt_mem_unpin(pins[1]);
    pins[0] = pins[1] = NULL;
}

/* Location checks of a copy of dst_span/src_span bytes. *pageable is set when a host side is
 * pageable memory. pins[0..1] get the pinned blocks of dst and src (NULL if pageable); on failure
 * they are already unpinned. */
static aclError check_locations(const char *func, void *dst, size_t dst_span, const void *src, size_t src_span,
                                aclrtMemcpyKind kind, int *pageable, rt_mem_block **pins) {
    rt_mem_range d, s;
    rt_mem_classify_pin(dst, &d);
    rt_mem_classify_pin(src, &s);
    pins[0] = d.block;
    pins[1] = s.block;
    side_kind want_dst, want_src;
    switch (kind) {
    case ACL_MEMCPY_HOST_TO_HOST: want_src = TO_HOST, want_dst = TO_HOST; break;
    case ACL_MEMCPY_HOST_TO_DEVICE:
    case ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE: want_src = TO_HOST, want_dst = TO_DEVICE; break;
    case ACL_MEMCPY_DEVICE_TO_HOST: want_src = TO_DEVICE, want_dst = TO_HOST; break;
    case ACL_MEMCPY_DEVICE_TO_DEVICE: want_src = TO_DEVICE, want_dst = TO_DEVICE; break;
    default:   /* ACL_MEMCPY_DEFAULT: registered memory counts as host memory here */
        want_src = s.kind == RT_MEM_DEVICE ? TO_DEVICE : TO_HOST;
        want_dst = d.kind == RT_MEM_DEVICE ? TO_DEVICE : TO_HOST;
        break;
    }
    aclError rc = check_side(func, "dst", dst, dst_span, want_dst, kind_name(kind), &d);
    if (rc == ACL_SUCCESS) rc = check_side(func, "src", src, src_span, want_src, kind_name(kind), &s);
    *pageable = d.kind == RT_MEM_PAGEABLE || s.kind == RT_MEM_PAGEABLE;
    if (rc) unpin(pins);
    return rc;
}

/* The hazard check of a synchronous copy or memset (the checker is on); on refusal the pins go. */
static aclError host_access_checked(const char *func, const pyaclnn_stub_access *acc, size_t n, rt_mem_block **pins) {
    char msg[800];
    int code = rt_hz_host_access(func, acc, n, msg, sizeof msg);
    if (code) {
        unpin(pins);
        return RT_REPORT(code, func, "%s", msg);
    }
    return ACL_SUCCESS;
}

/* Parameter checks shared by aclrtMemcpy and aclrtMemcpyAsync; *nothing is set when there is
 * nothing to do. */
static aclError check_copy(const char *func, void *dst, size_t destMax, const void *src, size_t count,
                           aclrtMemcpyKind kind, int *nothing, int *pageable, rt_mem_block **pins) {
    pins[0] = pins[1] = NULL;
    *nothing = 0;
    aclError forked = rt_fork_check(func);
    if (forked) return forked;
    *nothing = count == 0;
    if (*nothing) return ACL_SUCCESS;
    if (!dst) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "dst is NULL");
    if (!src) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "src is NULL");
    if ((int)kind < ACL_MEMCPY_HOST_TO_HOST || (int)kind > ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE)
        return RT_REPORT(ACL_ERROR_INVALID_PARAM, func,
                         "kind %d is invalid; expected ACL_MEMCPY_HOST_TO_HOST (0) .. "
                         "ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE (5)",
                         (int)kind);
    if (count > destMax) return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func, "count %zu > destMax %zu", count, destMax);
    return check_locations(func, dst, count, src, count, kind, pageable, pins);
}

aclError rt_memcpy(const char *func, void *dst, size_t destMax, const void *src, size_t count,
                   aclrtMemcpyKind kind) {
    int nothing, pageable;
    rt_mem_block *pins[2];
    aclError rc = check_copy(func, dst, destMax, src, count, kind, &nothing, &pageable, pins);
    if (rc || nothing) return rc;
    if ((rc = rt_capture_mode_check(func, "Synchronous memory copy"))) {   /* model.c */
        unpin(pins);
        return rc;
    }
    if (rt_hz_mode) {
        pyaclnn_stub_access acc[2] = {{src, count, 0}, {dst, count, 1}};
        if ((rc = host_access_checked(func, acc, 2, pins))) return rc;
    }
    if (dst != src) memmove(dst, src, count);
    unpin(pins);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
                                         aclrtMemcpyKind kind) {
    return rt_memcpy("aclrtMemcpy", dst, destMax, src, count, kind);
}

/* Enqueues t (with pins, which the worker drops after the task) on stream; waits for it when a host
 * side is pageable. The pins are dropped here if the task cannot be queued. */
static aclError submit_copy(const char *func, aclrtStream stream, rt_task *t, int pageable, rt_mem_block **pins) {
    rt_stream *s;
    uint64_t index;
    t->pins[0] = pins[0];
    t->pins[1] = pins[1];
    aclError rc = rt_stream_resolve(func, stream, &s);
    rt_context *owner = rc == ACL_SUCCESS ? atomic_load(&s->ctx) : NULL;
    for (int i = 0; i < 2 && owner; i++)   /* device memory of another device than the stream's */
        if (pins[i] && pins[i]->device >= 0 && pins[i]->device != owner->device) {
            rc = RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func,
                           "%s (in the allocation at %p) is memory of device %d, but stream %p belongs to device %d (no peer "
                           "access between emulated devices)",
                           t->kind == RT_TASK_SET ? "devPtr" : i == 0 ? "dst" : "src", pins[i]->mem,
                           (int)pins[i]->device, stream, (int)owner->device);
            break;
        }
    if (rc == ACL_SUCCESS && pageable && atomic_load(&s->capture))   /* the vendor's api_error.cc */
        rc = RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func,
                       "Asynchronous copy task: the pageable memory copy task does not support graph capture "
                       "(stream %p is capturing; use memory from aclrtMallocHost)",
                       (void *)s);
    if (rc == ACL_SUCCESS) rc = rt_stream_enqueue(func, s, t, &index);
    if (rc) unpin(pins);
    if (rc == ACL_SUCCESS && pageable) {
        rt_stream_wait_index(s, index, NULL);
        if (rt_hz_mode) rt_hz_host_saw(s, index);
    }
    return rc;
}

ACL_FUNC_VISIBILITY aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count,
                                              aclrtMemcpyKind kind, aclrtStream stream) {
    return rt_memcpy_async("aclrtMemcpyAsync", dst, destMax, src, count, kind, stream);
}

aclError rt_memcpy_async(const char *func, void *dst, size_t destMax, const void *src, size_t count,
                         aclrtMemcpyKind kind, aclrtStream stream) {
    int nothing, pageable;
    rt_mem_block *pins[2];
    aclError rc = check_copy(func, dst, destMax, src, count, kind, &nothing, &pageable, pins);
    if (rc || nothing) return rc;
    rt_task t = {.kind = RT_TASK_COPY, .u.copy = {dst, src, count}};
    return submit_copy(func, stream, &t, pageable, pins);
}

/* ---- 2-D copies ------------------------------------------------------------------------------ */

static aclError check_copy2d(const char *func, void *dst, size_t dpitch, const void *src, size_t spitch,
                             size_t width, size_t height, aclrtMemcpyKind kind, int *nothing, int *pageable,
                             rt_mem_block **pins) {
    pins[0] = pins[1] = NULL;
    *nothing = 0;
    aclError forked = rt_fork_check(func);
    if (forked) return forked;
    *nothing = width == 0 || height == 0;
    if (*nothing) return ACL_SUCCESS;
    if (!dst) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "dst is NULL");
    if (!src) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "src is NULL");
    if (width > spitch || width > dpitch)
        return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "width %zu must not exceed spitch %zu and dpitch %zu",
                         width, spitch, dpitch);
    if (kind != ACL_MEMCPY_HOST_TO_DEVICE && kind != ACL_MEMCPY_DEVICE_TO_HOST &&
        kind != ACL_MEMCPY_DEVICE_TO_DEVICE && kind != ACL_MEMCPY_DEFAULT)
        return RT_REPORT(ACL_ERROR_INVALID_PARAM, func,
                         "kind %d is invalid; expected ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST, "
                         "ACL_MEMCPY_DEVICE_TO_DEVICE or ACL_MEMCPY_DEFAULT",
                         (int)kind);
    /* Bytes each side spans: height - 1 full pitches plus one row. */
    size_t rows = height - 1;
    if (rows > (SIZE_MAX - width) / dpitch || rows > (SIZE_MAX - width) / spitch)
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func, "height %zu x pitch overflows the address space", height);
    return check_locations(func, dst, rows * dpitch + width, src, rows * spitch + width, kind, pageable, pins);
}

ACL_FUNC_VISIBILITY aclError aclrtMemcpy2d(void *dst, size_t dpitch, const void *src, size_t spitch,
                                           size_t width, size_t height, aclrtMemcpyKind kind) {
    int nothing, pageable;
    rt_mem_block *pins[2];
    aclError rc = check_copy2d("aclrtMemcpy2d", dst, dpitch, src, spitch, width, height, kind, &nothing, &pageable,
                               pins);
    if (rc || nothing) return rc;
    if ((rc = rt_capture_mode_check("aclrtMemcpy2d", "Synchronous 2D memory copy"))) {
        unpin(pins);
        return rc;
    }
    if (rt_hz_mode) {
        pyaclnn_stub_access acc[2] = {{src, (height - 1) * spitch + width, 0}, {dst, (height - 1) * dpitch + width, 1}};
        if ((rc = host_access_checked("aclrtMemcpy2d", acc, 2, pins))) return rc;
    }
    for (size_t row = 0; row < height; row++)
        memmove((char *)dst + row * dpitch, (const char *)src + row * spitch, width);
    unpin(pins);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtMemcpy2dAsync(void *dst, size_t dpitch, const void *src, size_t spitch,
                                                size_t width, size_t height, aclrtMemcpyKind kind,
                                                aclrtStream stream) {
    static const char func[] = "aclrtMemcpy2dAsync";
    int nothing, pageable;
    rt_mem_block *pins[2];
    aclError rc = check_copy2d(func, dst, dpitch, src, spitch, width, height, kind, &nothing, &pageable, pins);
    if (rc || nothing) return rc;
    rt_task t = {.kind = RT_TASK_COPY2D, .u.copy2d = {dst, src, dpitch, spitch, width, height}};
    return submit_copy(func, stream, &t, pageable, pins);
}

/* ---- memset ---------------------------------------------------------------------------------- */

static aclError check_set(const char *func, void *devPtr, size_t maxCount, size_t count, int *nothing,
                          rt_mem_block **pins) {
    pins[0] = pins[1] = NULL;
    *nothing = 0;
    aclError forked = rt_fork_check(func);
    if (forked) return forked;
    *nothing = count == 0;
    if (*nothing) return ACL_SUCCESS;
    if (!devPtr) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "devPtr is NULL");
    if (count > maxCount)
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func, "count %zu > maxCount %zu", count, maxCount);
    rt_mem_range loc;
    rt_mem_classify_pin(devPtr, &loc);
    pins[0] = loc.block;
    aclError rc = check_side(func, "devPtr", devPtr, count, TO_DEVICE, "memset", &loc);
    if (rc) unpin(pins);
    return rc;
}

ACL_FUNC_VISIBILITY aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count) {
    int nothing;
    rt_mem_block *pins[2];
    aclError rc = check_set("aclrtMemset", devPtr, maxCount, count, &nothing, pins);
    if (rc || nothing) return rc;
    if ((rc = rt_capture_mode_check("aclrtMemset", "Memory setting synchronization"))) {
        unpin(pins);
        return rc;
    }
    if (rt_hz_mode) {
        pyaclnn_stub_access acc[1] = {{devPtr, count, 1}};
        if ((rc = host_access_checked("aclrtMemset", acc, 1, pins))) return rc;
    }
    memset(devPtr, value & 0xFF, count);
    unpin(pins);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value, size_t count,
                                              aclrtStream stream) {
    static const char func[] = "aclrtMemsetAsync";
    int nothing;
    rt_mem_block *pins[2];
    aclError rc = check_set(func, devPtr, maxCount, count, &nothing, pins);
    if (rc || nothing) return rc;
    rt_task t = {.kind = RT_TASK_SET, .u.set = {devPtr, count, value & 0xFF}};
    return submit_copy(func, stream, &t, 0, pins);
}
