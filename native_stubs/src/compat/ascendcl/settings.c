/*
 * Settings torch_npu makes while it initialises (NpuSysCtrl::Initialize): they succeed and do what
 * they say -- the values are stored and read back -- but the emulated kernels do not depend on them
 * (they always compute IEEE inf/nan, are always deterministic and never time out).
 *
 *   aclrtSetDeviceSatMode / aclrtGetDeviceSatMode   process-wide overflow mode (default INFNAN, the
 *                                                   mode of the SoCs we emulate)
 *   aclrtSetSysParamOpt / aclrtGetSysParamOpt       process-wide options (default 0)
 *   aclrtCtxSetSysParamOpt / aclrtCtxGetSysParamOpt options of the current context; a context that
 *                                                   never set one reads the process value
 *   aclrtSetOpExecuteTimeOut / ...V2                stored operator timeout (V2 reports it back)
 *   aclrtSetOpWaitTimeout                           stored timeout of event waits (HCCL sets it)
 *   aclsysGetCANNVersion / aclsysGetVersionStr      PYACLNN_COMPAT_CANN_VERSION for every package
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "../compat.h"
#include "../../runtime/rt_internal.h"

#define OPT_COUNT 3          /* ACL_OPT_DETERMINISTIC .. ACL_OPT_STRONG_CONSISTENCY */
#define CTX_SLOTS 256        /* contexts with their own options at one time           */

static _Atomic int sat_mode = ACL_RT_OVERFLOW_MODE_INFNAN;
static _Atomic uint64_t op_timeout_us;                 /* 0: never set (no timeout) */
static _Atomic uint32_t op_wait_timeout_s;             /* 0: waits never time out */

static pthread_mutex_t opt_mu = PTHREAD_MUTEX_INITIALIZER;
static int64_t process_opt[OPT_COUNT];
typedef struct {
    rt_context *ctx;
    uint64_t generation;     /* a destroyed and reused context does not inherit old values */
    int set[OPT_COUNT];
    int64_t value[OPT_COUNT];
} ctx_slot;
static ctx_slot ctx_slots[CTX_SLOTS];

ACL_FUNC_VISIBILITY aclError aclrtSetDeviceSatMode(aclrtFloatOverflowMode mode) {
    static const char func[] = "aclrtSetDeviceSatMode";
    if (mode != ACL_RT_OVERFLOW_MODE_SATURATION && mode != ACL_RT_OVERFLOW_MODE_INFNAN)
        return RT_REPORT(ACL_ERROR_INVALID_PARAM, func,
                         "mode %d is not valid: ACL_RT_OVERFLOW_MODE_SATURATION (0) or "
                         "ACL_RT_OVERFLOW_MODE_INFNAN (1)", (int)mode);
    atomic_store(&sat_mode, (int)mode);
    pyaclnn_stub_compat_trace(func, "mode %d stored (emulated kernels always compute IEEE inf/nan)",
                              (int)mode);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtGetDeviceSatMode(aclrtFloatOverflowMode *mode) {
    if (!mode) return RT_REPORT(ACL_ERROR_INVALID_PARAM, "aclrtGetDeviceSatMode", "mode is NULL");
    *mode = (aclrtFloatOverflowMode)atomic_load(&sat_mode);
    return ACL_SUCCESS;
}

static aclError check_opt(const char *func, aclSysParamOpt opt) {
    if ((int)opt < 0 || (int)opt >= OPT_COUNT)
        return RT_REPORT(ACL_ERROR_INVALID_PARAM, func,
                         "opt %d is not valid: ACL_OPT_DETERMINISTIC (0), ACL_OPT_ENABLE_DEBUG_KERNEL "
                         "(1) or ACL_OPT_STRONG_CONSISTENCY (2)", (int)opt);
    return ACL_SUCCESS;
}

static aclError check_value(const char *func, int64_t value) {
    if (value != 0 && value != 1)
        return RT_REPORT(ACL_ERROR_INVALID_PARAM, func,
                         "value %lld is not valid: 0 (off) or 1 (on)", (long long)value);
    return ACL_SUCCESS;
}

/* The slot of ctx (created when `create`), or NULL. Caller holds opt_mu. */
static ctx_slot *slot_of(rt_context *ctx, int create) {
    uint64_t gen = atomic_load(&ctx->generation);
    ctx_slot *free_slot = NULL;
    for (int i = 0; i < CTX_SLOTS; i++) {
        ctx_slot *s = &ctx_slots[i];
        int stale = !s->ctx || !atomic_load(&s->ctx->alive) ||
                    atomic_load(&s->ctx->generation) != s->generation;
        if (!stale && s->ctx == ctx && s->generation == gen) return s;
        if (stale && !free_slot) free_slot = s;
    }
    if (!create || !free_slot) return NULL;
    memset(free_slot, 0, sizeof *free_slot);
    free_slot->ctx = ctx;
    free_slot->generation = gen;
    return free_slot;
}

ACL_FUNC_VISIBILITY aclError aclrtSetSysParamOpt(aclSysParamOpt opt, int64_t value) {
    static const char func[] = "aclrtSetSysParamOpt";
    aclError rc = check_opt(func, opt);
    if (rc || (rc = check_value(func, value))) return rc;
    pthread_mutex_lock(&opt_mu);
    process_opt[opt] = value;
    pthread_mutex_unlock(&opt_mu);
    pyaclnn_stub_compat_trace(func, "opt %d = %lld stored", (int)opt, (long long)value);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtGetSysParamOpt(aclSysParamOpt opt, int64_t *value) {
    static const char func[] = "aclrtGetSysParamOpt";
    aclError rc = check_opt(func, opt);
    if (rc) return rc;
    if (!value) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "value is NULL");
    pthread_mutex_lock(&opt_mu);
    *value = process_opt[opt];
    pthread_mutex_unlock(&opt_mu);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtCtxSetSysParamOpt(aclSysParamOpt opt, int64_t value) {
    static const char func[] = "aclrtCtxSetSysParamOpt";
    rt_context *ctx;
    aclError rc = check_opt(func, opt);
    if (rc || (rc = check_value(func, value)) || (rc = rt_require_context(func, &ctx))) return rc;
    pthread_mutex_lock(&opt_mu);
    ctx_slot *s = slot_of(ctx, 1);
    if (s) {
        s->set[opt] = 1;
        s->value[opt] = value;
    }
    pthread_mutex_unlock(&opt_mu);
    if (!s)
        return RT_REPORT(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, func,
                         "more than %d live contexts carry their own options", CTX_SLOTS);
    pyaclnn_stub_compat_trace(func, "opt %d = %lld stored for the current context", (int)opt,
                              (long long)value);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtCtxGetSysParamOpt(aclSysParamOpt opt, int64_t *value) {
    static const char func[] = "aclrtCtxGetSysParamOpt";
    rt_context *ctx;
    aclError rc = check_opt(func, opt);
    if (rc || (rc = rt_require_context(func, &ctx))) return rc;
    if (!value) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "value is NULL");
    pthread_mutex_lock(&opt_mu);
    ctx_slot *s = slot_of(ctx, 0);
    *value = (s && s->set[opt]) ? s->value[opt] : process_opt[opt];
    pthread_mutex_unlock(&opt_mu);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtSetOpExecuteTimeOut(uint32_t timeout) {
    atomic_store(&op_timeout_us, (uint64_t)timeout * 1000000u);
    pyaclnn_stub_compat_trace("aclrtSetOpExecuteTimeOut", "%u s stored (emulated kernels never time out)",
                              timeout);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtSetOpExecuteTimeOutV2(uint64_t timeout, uint64_t *actualTimeout) {
    if (!actualTimeout)
        return RT_REPORT(ACL_ERROR_INVALID_PARAM, "aclrtSetOpExecuteTimeOutV2", "actualTimeout is NULL");
    atomic_store(&op_timeout_us, timeout);
    *actualTimeout = timeout;   /* no hardware granularity to round to */
    pyaclnn_stub_compat_trace("aclrtSetOpExecuteTimeOutV2", "%llu us stored",
                              (unsigned long long)timeout);
    return ACL_SUCCESS;
}

/* The vendor's runtime applies it to the device's event-wait tasks (seconds; 0 = no timeout); emulated
 * stream waits never time out. */
ACL_FUNC_VISIBILITY aclError aclrtSetOpWaitTimeout(uint32_t timeout) {
    atomic_store(&op_wait_timeout_s, timeout);
    pyaclnn_stub_compat_trace("aclrtSetOpWaitTimeout", "%u s stored (emulated stream waits never time out)", timeout);
    return ACL_SUCCESS;
}

/* ---- versions ---------------------------------------------------------------------------------- */

static const char *const package_names[] = {"CANN", "RUNTIME", "COMPILER", "HCCL", "TOOLKIT", "OPP",
                                            "OPP_KERNEL", "DRIVER"};

/* "0.1.0" -> major "0", minor "1", release "0", patch "" */
static void split_version(const char *v, aclCANNPackageVersion *out) {
    char *parts[4] = {out->majorVersion, out->minorVersion, out->releaseVersion, out->patchVersion};
    int k = 0;
    size_t n = 0;
    for (const char *p = v; *p && k < 4; p++) {
        if (*p == '.') {
            k++;
            n = 0;
        } else if (n + 1 < ACL_PKG_VERSION_PARTS_MAX_SIZE) {
            parts[k][n++] = *p;
            parts[k][n] = '\0';
        }
    }
}

ACL_FUNC_VISIBILITY aclError aclsysGetCANNVersion(aclCANNPackageName name, aclCANNPackageVersion *version) {
    static const char func[] = "aclsysGetCANNVersion";
    if ((int)name < 0 || (int)name > (int)ACL_PKG_NAME_DRIVER)
        return RT_REPORT(ACL_ERROR_INVALID_PARAM, func,
                         "name %d is not valid: ACL_PKG_NAME_CANN (0) .. ACL_PKG_NAME_DRIVER (7)",
                         (int)name);
    if (!version) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "version is NULL");
    memset(version, 0, sizeof *version);
    snprintf(version->version, sizeof version->version, "%s", PYACLNN_COMPAT_CANN_VERSION);
    split_version(PYACLNN_COMPAT_VERSION_NUMBER, version);
    pyaclnn_stub_compat_trace(func, "%s -> %s (pyaclnn emulator)", package_names[name],
                              version->version);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclsysGetVersionStr(char *pkgName, char *versionStr) {
    static const char func[] = "aclsysGetVersionStr";
    if (!pkgName || !versionStr)
        return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "%s is NULL", pkgName ? "versionStr" : "pkgName");
    if (pkgName[0] == '\0')
        return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "pkgName is empty");
    /* The caller's buffer is ACL_PKG_VERSION_MAX_SIZE bytes (the header's contract). */
    snprintf(versionStr, ACL_PKG_VERSION_MAX_SIZE, "%s", PYACLNN_COMPAT_CANN_VERSION);
    pyaclnn_stub_compat_trace(func, "%s -> %s (pyaclnn emulator)", pkgName, versionStr);
    return ACL_SUCCESS;
}
