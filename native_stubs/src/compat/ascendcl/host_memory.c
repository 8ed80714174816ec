/*
 * Host memory the device can address, and where a pointer lives (acl_rt.h).
 *
 *   aclrtHostRegister(ptr, size, type, &devPtr)   registers [ptr, ptr + size) for device access; devPtr is
 *                                                 its device address -- the same address on the emulator,
 *                                                 whose device memory is host memory. Copies treat the
 *                                                 range as device-side memory and as page-locked (their
 *                                                 async forms do not wait), kernels may use it.
 *   aclrtHostRegisterV2(ptr, size, flag)          the same with ACL_HOST_REG_* flags; PINNED alone also
 *                                                 maps the range (emulated kernels can address any host
 *                                                 memory); READONLY is not enforced
 *   aclrtHostUnregister(ptr)                      ends a registration (ptr must be where one starts)
 *   aclrtMallocHostWithCfg(&ptr, size, cfg)       page-locked host memory as aclrtMallocHost (freed with
 *                                                 aclrtFreeHost); MODULE_ID and VA_FLAG attributes accepted
 *   aclrtPointerGetAttributes(ptr, &attr)         DEVICE (with its device id) for aclrtMalloc memory, HOST for
 *                                                 aclrtMallocHost and registered memory, UNREGISTERED for any
 *                                                 other address; pageSize is the host's page size
 *
 * Codes as hicann/runtime: NULL pointers and size 0 -> ACL_ERROR_INVALID_PARAM; bad type bits ->
 * ACL_ERROR_RT_FEATURE_NOT_SUPPORT (V1) / ACL_ERROR_RT_PARAM_INVALID (V2 flags, cfg attributes); no current
 * context -> ACL_ERROR_RT_CONTEXT_NULL; a range overlapping memory the runtime knows ->
 * ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED; unregistering what is not registered ->
 * ACL_ERROR_HOST_MEMORY_NOT_REGISTERED.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../compat.h"
#include "../../runtime/rt_internal.h"

#define HOST_ALIGNMENT 64

static aclError register_range(const char *func, void *ptr, uint64_t size) {
    rt_context *ctx;
    aclError rc = rt_require_context(func, &ctx);
    if (rc) return rc;
    if (size > (uint64_t)SIZE_MAX || (uintptr_t)ptr + (size_t)size < (uintptr_t)ptr)
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func, "range %p + %llu wraps around", ptr,
                         (unsigned long long)size);
    /* Checked and inserted under no common lock: a racing registration of an overlapping range can
     * slip between them, as two overlapping registrations race in the driver too. */
    if (rt_mem_table_overlaps((uintptr_t)ptr, (size_t)size))
        return RT_REPORT(ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED, func,
                         "[%p, +%llu) overlaps memory the runtime already knows (registered, or allocated by "
                         "aclrtMalloc / aclrtMallocHost)", ptr, (unsigned long long)size);
    rt_mem_range r = {(uintptr_t)ptr, (size_t)size, (size_t)size, RT_MEM_REGISTERED, ctx->device, NULL};
    if (rt_mem_table_insert(&r) != 0) return RT_REPORT(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, func, "out of host memory");
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtHostRegister(void *ptr, uint64_t size, aclrtHostRegisterType type, void **devPtr) {
    static const char func[] = "aclrtHostRegister";
    if (!ptr) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "ptr is NULL");
    if (!devPtr) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "devPtr is NULL");
    if (size == 0) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "size must be greater than 0");
    if ((uint32_t)type & ~(uint32_t)(ACL_HOST_REGISTER_IOMEMORY | ACL_HOST_REGISTER_READONLY))
        return RT_REPORT(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, func,
                         "type %#x is not supported: ACL_HOST_REGISTER_MAPPED (0) or an OR of "
                         "ACL_HOST_REGISTER_IOMEMORY (0x4) and ACL_HOST_REGISTER_READONLY (0x8)", (unsigned)type);
    aclError rc = register_range(func, ptr, size);
    if (rc == ACL_SUCCESS) *devPtr = ptr;   /* one address space: host memory is its own device address */
    return rc;
}

ACL_FUNC_VISIBILITY aclError aclrtHostRegisterV2(void *ptr, uint64_t size, uint32_t flag) {
    static const char func[] = "aclrtHostRegisterV2";
    const uint32_t valid = (uint32_t)(ACL_HOST_REG_MAPPED | ACL_HOST_REG_IOMEMORY | ACL_HOST_REG_READONLY |
                                      ACL_HOST_REG_PINNED);
    if (!ptr) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "ptr is NULL");
    if (size == 0) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "size must be greater than 0");
    if ((flag & valid) == 0 || (flag & ~valid) != 0)
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func,
                         "flag %#x is invalid: an OR of ACL_HOST_REG_MAPPED (0x2), ACL_HOST_REG_IOMEMORY (0x4), "
                         "ACL_HOST_REG_READONLY (0x8) and ACL_HOST_REG_PINNED (0x10000000)", flag);
    return register_range(func, ptr, size);
}

ACL_FUNC_VISIBILITY aclError aclrtHostUnregister(void *ptr) {
    static const char func[] = "aclrtHostUnregister";
    if (!ptr) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "ptr is NULL");
    rt_context *ctx;
    aclError rc = rt_require_context(func, &ctx);
    if (rc) return rc;
    /* The caller owns the memory: removing the range never frees it, and queued work that pinned the
     * range keeps a reference until it has run. */
    if (!rt_mem_table_remove((uintptr_t)ptr, RT_MEM_REGISTERED, NULL))
        return RT_REPORT(ACL_ERROR_HOST_MEMORY_NOT_REGISTERED, func,
                         "%p is not the start of a registered host range (aclrtHostRegister / "
                         "aclrtHostRegisterV2)", ptr);
    if (rt_hz_mode) rt_hz_forget((uintptr_t)ptr);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtMallocHostWithCfg(void **ptr, uint64_t size, aclrtMallocConfig *cfg) {
    static const char func[] = "aclrtMallocHostWithCfg";
    if (!ptr) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "ptr is NULL");
    if (size == 0) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "size must be greater than 0");
    if (cfg) {
        if (!cfg->attrs) return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func, "cfg->attrs is NULL");
        for (size_t i = 0; i < cfg->numAttrs; i++)
            if (cfg->attrs[i].attr != ACL_RT_MEM_ATTR_MODULE_ID && cfg->attrs[i].attr != ACL_RT_MEM_ATTR_VA_FLAG)
                return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func,
                                 "cfg->attrs[%zu].attr %d is invalid: ACL_RT_MEM_ATTR_MODULE_ID (1) or "
                                 "ACL_RT_MEM_ATTR_VA_FLAG (3)", i, (int)cfg->attrs[i].attr);
    }
    rt_context *ctx;
    aclError rc = rt_require_context(func, &ctx);
    if (rc) return rc;
    /* 32-byte multiple, as the runtime rounds; host blocks are 64-byte aligned like aclrtMallocHost's. */
    size_t rounded = size > (uint64_t)SIZE_MAX - 63 ? 0 : ((size_t)size + 31) / 32 * 32;
    size_t block = (rounded + HOST_ALIGNMENT - 1) / HOST_ALIGNMENT * HOST_ALIGNMENT;
    void *p = NULL;
    if (rounded == 0 || posix_memalign(&p, HOST_ALIGNMENT, block) != 0) p = NULL;
    rt_mem_range r = {(uintptr_t)p, rounded, (size_t)size, RT_MEM_PINNED, ctx->device, NULL};
    if (!p || rt_mem_table_insert(&r) != 0) {
        free(p);
        return RT_REPORT(ACL_ERROR_RT_MEMORY_ALLOCATION, func, "cannot allocate %llu bytes of host memory",
                         (unsigned long long)size);
    }
    *ptr = p;
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtPointerGetAttributes(const void *ptr, aclrtPtrAttributes *attributes) {
    static const char func[] = "aclrtPointerGetAttributes";
    if (!ptr) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "ptr is NULL");
    if (!attributes) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "attributes is NULL");
    rt_mem_range r;
    rt_mem_classify(ptr, &r);
    memset(attributes, 0, sizeof *attributes);
    switch (r.kind) {
    case RT_MEM_DEVICE:
        attributes->location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
        attributes->location.id = (uint32_t)r.device;
        break;
    case RT_MEM_PINNED:
    case RT_MEM_REGISTERED: attributes->location.type = ACL_MEM_LOCATION_TYPE_HOST; break;   /* id 0, as on the NPU */
    default: attributes->location.type = ACL_MEM_LOCATION_TYPE_UNREGISTERED; break;
    }
    long page = sysconf(_SC_PAGESIZE);   /* all emulated memory lives in the host's pages */
    attributes->pageSize = page > 0 ? (uint32_t)page : 4096u;
    return ACL_SUCCESS;
}
