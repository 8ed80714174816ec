/*
 * Contexts. Each device has a default context (made by aclrtSetDevice, see device.c); users can
 * create more with aclrtCreateContext. Every context owns a default stream. The current context is
 * per thread: a new thread has none until it calls aclrtSetDevice or aclrtSetCurrentContext.
 *
 * The thread-local current context is a (pointer, generation) pair; contexts are pooled and never
 * freed, so a thread whose context was destroyed by another thread simply finds it stale.
 */
#include <stdlib.h>

#include "rt_internal.h"

stub_registry rt_handles = STUB_REGISTRY_INIT;

static _Thread_local rt_context *tls_ctx;
static _Thread_local uint64_t tls_ctx_generation;

static rt_pool context_pool = RT_POOL_INIT(rt_context, 16);
static _Atomic int64_t user_contexts;

rt_context *rt_current_context(void) {
    rt_context *c = tls_ctx;
    if (c && atomic_load(&c->alive) && atomic_load(&c->generation) == tls_ctx_generation) return c;
    return NULL;
}

aclError rt_require_context(const char *func, rt_context **out) {
    *out = NULL;
    aclError rc = rt_fork_check(func);
    if (rc) return rc;
    *out = rt_current_context();
    if (*out) return ACL_SUCCESS;
    return RT_REPORT(ACL_ERROR_RT_CONTEXT_NULL, func,
                     "the calling thread has no current context: call aclrtSetDevice or "
                     "aclrtSetCurrentContext first");
}

void rt_set_current_context(rt_context *ctx) {
    tls_ctx = ctx;
    tls_ctx_generation = ctx ? atomic_load(&ctx->generation) : 0;
}

int64_t rt_context_user_count(void) { return atomic_load(&user_contexts); }

static void return_to_pool(rt_context *c) { rt_pool_put(&context_pool, c); }

aclError rt_context_create(const char *func, int32_t device, int is_default, rt_context **out) {
    rt_context *c = rt_pool_take(&context_pool);
    if (!c && !(c = calloc(1, sizeof *c)))
        return RT_REPORT(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, func, "out of host memory for a context");
    c->device = device;
    c->is_default = is_default;
    atomic_fetch_add(&c->generation, 1);
    aclError rc = rt_stream_create(func, c, 1, 0, 0, &c->default_stream);
    if (rc) {
        return_to_pool(c);
        return rc;
    }
    if (stub_registry_add(&rt_handles, c, RT_KIND_CONTEXT) != 0) {
        rt_stream_destroy(c->default_stream, 1);
        return_to_pool(c);
        return RT_REPORT(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, func, "out of host memory for a context");
    }
    atomic_store(&c->alive, 1);
    if (!is_default) atomic_fetch_add(&user_contexts, 1);
    *out = c;
    return ACL_SUCCESS;
}

void rt_context_destroy(rt_context *ctx) {
    (void)stub_registry_remove(&rt_handles, ctx, RT_KIND_CONTEXT);
    atomic_store(&ctx->alive, 0);   /* threads holding it as current now see none */
    rt_streams_destroy_of_context(ctx);
    ctx->default_stream = NULL;
    if (!ctx->is_default) atomic_fetch_sub(&user_contexts, 1);
    return_to_pool(ctx);
}

ACL_FUNC_VISIBILITY aclError aclrtCreateContext(aclrtContext *context, int32_t deviceId) {
    static const char func[] = "aclrtCreateContext";
    aclError rc = rt_fork_check(func);
    if (rc) return rc;
    if (!context) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "context is NULL");
    const char *why;
    int n = rt_visible_device_count(&why);
    if (n < 0) return RT_REPORT(ACL_ERROR_RT_INVALID_DEVICEID, func, "device id %d is invalid: %s", deviceId, why);
    if (deviceId < 0 || deviceId >= n)
        return RT_REPORT(ACL_ERROR_RT_INVALID_DEVICEID, func, "device id %d is out of range [0, %d)", deviceId, n);
    rt_context *c;
    rc = rt_context_create(func, deviceId, 0, &c);
    if (rc) return rc;
    rt_set_current_context(c);
    *context = c;
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtDestroyContext(aclrtContext context) {
    static const char func[] = "aclrtDestroyContext";
    aclError rc = rt_fork_check(func);   /* it would wait for stream workers the child does not have */
    if (rc) return rc;
    if (!context) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "context is NULL");
    if (stub_registry_kind(&rt_handles, context) != RT_KIND_CONTEXT)
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func,
                         "context %p is not a live context (never created, or already destroyed)", context);
    rt_context *c = context;
    if (c->is_default)
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func,
                         "context %p is the default context of device %d; it is released by "
                         "aclrtResetDevice, not aclrtDestroyContext",
                         context, c->device);
    /* Claim it: of two threads destroying the same context, only one gets here. */
    if (!stub_registry_remove(&rt_handles, c, RT_KIND_CONTEXT))
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func, "context %p was destroyed concurrently", context);
    rt_context_destroy(c);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtSetCurrentContext(aclrtContext context) {
    static const char func[] = "aclrtSetCurrentContext";
    aclError rc = rt_fork_check(func);
    if (rc) return rc;
    if (!context) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "context is NULL");
    if (stub_registry_kind(&rt_handles, context) != RT_KIND_CONTEXT)
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func,
                         "context %p is not a live context (never created, or already destroyed)", context);
    rt_set_current_context(context);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtGetCurrentContext(aclrtContext *context) {
    static const char func[] = "aclrtGetCurrentContext";
    if (!context) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "context is NULL");
    rt_context *c;
    aclError rc = rt_require_context(func, &c);
    if (rc) return rc;
    *context = c;
    return ACL_SUCCESS;
}
