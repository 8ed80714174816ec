/*
 * Stream and device settings beyond what the faithful runtime keeps (acl_rt.h). Each is stored, checked
 * as the vendor checks it and read back; none changes how the emulated work runs, and the docs say so:
 *
 *   aclrtStreamGetId                 the stream object's index: unique among live streams (real)
 *   aclrtSetStreamAttribute / Get    failure mode, float-overflow switch, user tag, cache-op-info switch,
 *                                    priority (the stream's own, clamped to 0..7 as at creation)
 *   aclrtSetStreamFailureMode        ACL_STOP_ON_FAILURE / ACL_CONTINUE_ON_FAILURE stored (stop -> continue
 *                                    is refused, as on the NPU); emulated streams keep running the tasks
 *                                    after a failed one either way, and report the first failure
 *   aclrtSet/GetStreamOverflowSwitch the saturation-mode overflow check switch (0/1) stored
 *   aclrtSet/Get/ResetDeviceResLimit, aclrtSet/Get/ResetStreamResLimit, aclrtUse/UnuseStreamResInCurrentThread,
 *   aclrtGetResInCurrentThread       cube/vector core limits: at most the SoC's core counts, default those
 *                                    counts; emulated kernels do not depend on them
 *
 * Per-stream values live in a table keyed by the stream object and its generation, so a destroyed and
 * reused stream object starts from the defaults again. NULL means the current context's default
 * stream, as everywhere in the runtime.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../compat.h"
#include "../../runtime/rt_internal.h"

#define MAX_PRIORITY 7   /* RT_STREAM_LEAST_PRIORITY; 0 is the greatest */
#define RES_TYPES 2      /* ACL_RT_DEV_RES_CUBE_CORE, ACL_RT_DEV_RES_VECTOR_CORE */

typedef struct {
    rt_stream *s;
    uint64_t generation;
    uint64_t failure_mode;
    uint32_t overflow_switch, user_tag, cache_op_info;
    int limit_set[RES_TYPES];
    uint32_t limit[RES_TYPES];
} stream_state;

static pthread_mutex_t state_mu = PTHREAD_MUTEX_INITIALIZER;
static stream_state *states;
static size_t n_states, cap_states;

/* The settings of live stream s (a fresh record when the object was reused), or NULL when out of
 * memory. Caller holds state_mu. Stale records (destroyed streams) are overwritten when found. */
static stream_state *state_of(rt_stream *s) {
    uint64_t gen = atomic_load(&s->generation);
    stream_state *reuse = NULL;
    for (size_t i = 0; i < n_states; i++) {
        if (states[i].s == s) {
            if (states[i].generation != gen) {
                memset(&states[i], 0, sizeof states[i]);
                states[i].s = s;
                states[i].generation = gen;
            }
            return &states[i];
        }
        if (!reuse && (atomic_load(&states[i].s->generation) != states[i].generation ||
                       stub_registry_kind(&rt_handles, states[i].s) != RT_KIND_STREAM))
            reuse = &states[i];
    }
    if (!reuse) {
        if (n_states == cap_states) {
            size_t cap = cap_states ? cap_states * 2 : 16;
            stream_state *grown = realloc(states, cap * sizeof *grown);
            if (!grown) return NULL;
            states = grown;
            cap_states = cap;
        }
        reuse = &states[n_states++];
    }
    memset(reuse, 0, sizeof *reuse);
    reuse->s = s;
    reuse->generation = gen;
    return reuse;
}

static aclError out_of_memory(const char *func) {
    return RT_REPORT(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, func, "out of host memory for the stream's settings");
}

/* ---- stream id -------------------------------------------------------------------------------- */

ACL_FUNC_VISIBILITY aclError aclrtStreamGetId(aclrtStream stream, int32_t *streamId) {
    static const char func[] = "aclrtStreamGetId";
    if (!streamId) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "streamId is NULL");
    rt_stream *s;
    aclError rc = rt_stream_resolve_any(func, stream, &s);
    if (rc) return rc;
    *streamId = (int32_t)s->hz_slot;   /* one slot per stream object: unique among live streams */
    return ACL_SUCCESS;
}

/* ---- failure mode, overflow switch, attributes ------------------------------------------------ */

static aclError set_failure_mode(const char *func, rt_stream *s, uint64_t mode) {
    uint64_t failmode = mode & 0x1u;   /* the runtime keeps bit 0 */
    pthread_mutex_lock(&state_mu);
    stream_state *st = state_of(s);
    aclError rc = ACL_SUCCESS;
    if (!st) {
        rc = -1;
    } else if (st->failure_mode == ACL_STOP_ON_FAILURE && failmode == ACL_CONTINUE_ON_FAILURE) {
        rc = ACL_ERROR_RT_FEATURE_NOT_SUPPORT;
    } else {
        st->failure_mode = failmode;
    }
    pthread_mutex_unlock(&state_mu);
    if (rc == -1) return out_of_memory(func);
    if (rc)
        return RT_REPORT(rc, func, "changing stream %p from stop mode to continue mode is not supported", (void *)s);
    pyaclnn_stub_compat_trace(func, "stream %p: failure mode %llu stored (emulated streams continue after a "
                              "failed task and report the first failure)", (void *)s, (unsigned long long)failmode);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtSetStreamFailureMode(aclrtStream stream, uint64_t mode) {
    static const char func[] = "aclrtSetStreamFailureMode";
    rt_stream *s;
    aclError rc = rt_stream_resolve(func, stream, &s);
    if (rc) return rc;
    return set_failure_mode(func, s, mode);
}

static aclError set_overflow(const char *func, rt_stream *s, uint32_t flag) {
    pthread_mutex_lock(&state_mu);
    stream_state *st = state_of(s);
    if (st) st->overflow_switch = flag;
    pthread_mutex_unlock(&state_mu);
    if (!st) return out_of_memory(func);
    pyaclnn_stub_compat_trace(func, "stream %p: overflow switch %u stored", (void *)s, flag);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtSetStreamOverflowSwitch(aclrtStream stream, uint32_t flag) {
    static const char func[] = "aclrtSetStreamOverflowSwitch";
    if (flag != 0 && flag != 1) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "flag %u is invalid: 0 or 1", flag);
    rt_stream *s;
    aclError rc = rt_stream_resolve(func, stream, &s);
    if (rc) return rc;
    return set_overflow(func, s, flag);
}

static uint32_t read_u32(rt_stream *s, size_t offset) {
    pthread_mutex_lock(&state_mu);
    stream_state *st = state_of(s);
    uint32_t v = st ? *(const uint32_t *)((const char *)st + offset) : 0;
    pthread_mutex_unlock(&state_mu);
    return v;
}

ACL_FUNC_VISIBILITY aclError aclrtGetStreamOverflowSwitch(aclrtStream stream, uint32_t *flag) {
    static const char func[] = "aclrtGetStreamOverflowSwitch";
    if (!flag) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "flag is NULL");
    rt_stream *s;
    aclError rc = rt_stream_resolve(func, stream, &s);
    if (rc) return rc;
    *flag = read_u32(s, offsetof(stream_state, overflow_switch));
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtSetStreamAttribute(aclrtStream stream, aclrtStreamAttr stmAttrType,
                                                     aclrtStreamAttrValue *value) {
    static const char func[] = "aclrtSetStreamAttribute";
    if (!value) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "value is NULL");
    rt_stream *s;
    aclError rc = rt_stream_resolve(func, stream, &s);
    if (rc) return rc;
    switch ((int)stmAttrType) {
    case ACL_STREAM_ATTR_FAILURE_MODE: return set_failure_mode(func, s, value->failureMode);
    case ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK:
        if (value->overflowSwitch >= ACL_RT_OVERFLOW_MODE_UNDEF)
            return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func, "overflowSwitch %u is invalid: expected [0, %d)",
                             value->overflowSwitch, (int)ACL_RT_OVERFLOW_MODE_UNDEF);
        return set_overflow(func, s, value->overflowSwitch);
    case ACL_STREAM_ATTR_CACHE_OP_INFO:
        if (value->cacheOpInfoSwitch != 0 && value->cacheOpInfoSwitch != 1)
            return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func, "cacheOpInfoSwitch %u is invalid: 0 or 1",
                             value->cacheOpInfoSwitch);
        /* fall through */
    case ACL_STREAM_ATTR_USER_CUSTOM_TAG: {
        pthread_mutex_lock(&state_mu);
        stream_state *st = state_of(s);
        if (st && stmAttrType == ACL_STREAM_ATTR_CACHE_OP_INFO) st->cache_op_info = value->cacheOpInfoSwitch;
        if (st && stmAttrType == ACL_STREAM_ATTR_USER_CUSTOM_TAG) st->user_tag = value->userCustomTag;
        pthread_mutex_unlock(&state_mu);
        return st ? ACL_SUCCESS : out_of_memory(func);
    }
    case ACL_STREAM_ATTR_PRIORITY: {
        uint32_t priority = (int32_t)value->streamPriority < 0 ? 0
                          : value->streamPriority > MAX_PRIORITY ? MAX_PRIORITY : value->streamPriority;
        pthread_mutex_lock(&s->mu);
        s->priority = priority;
        pthread_mutex_unlock(&s->mu);
        return ACL_SUCCESS;
    }
    default:
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func,
                         "stmAttrType %d is invalid: expected ACL_STREAM_ATTR_FAILURE_MODE (1) .. "
                         "ACL_STREAM_ATTR_PRIORITY (5)", (int)stmAttrType);
    }
}

ACL_FUNC_VISIBILITY aclError aclrtGetStreamAttribute(aclrtStream stream, aclrtStreamAttr stmAttrType,
                                                     aclrtStreamAttrValue *value) {
    static const char func[] = "aclrtGetStreamAttribute";
    if (!value) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "value is NULL");
    rt_stream *s;
    aclError rc = rt_stream_resolve_any(func, stream, &s);
    if (rc) return rc;
    if ((int)stmAttrType == ACL_STREAM_ATTR_PRIORITY) {
        pthread_mutex_lock(&s->mu);
        value->streamPriority = s->priority;
        pthread_mutex_unlock(&s->mu);
        return ACL_SUCCESS;
    }
    if ((int)stmAttrType < ACL_STREAM_ATTR_FAILURE_MODE || (int)stmAttrType > ACL_STREAM_ATTR_PRIORITY)
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func,
                         "stmAttrType %d is invalid: expected ACL_STREAM_ATTR_FAILURE_MODE (1) .. "
                         "ACL_STREAM_ATTR_PRIORITY (5)", (int)stmAttrType);
    pthread_mutex_lock(&state_mu);
    stream_state *st = state_of(s);
    if (st) {
        switch ((int)stmAttrType) {
        case ACL_STREAM_ATTR_FAILURE_MODE: value->failureMode = st->failure_mode; break;
        case ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK: value->overflowSwitch = st->overflow_switch; break;
        case ACL_STREAM_ATTR_USER_CUSTOM_TAG: value->userCustomTag = st->user_tag; break;
        default: value->cacheOpInfoSwitch = st->cache_op_info; break;
        }
    }
    pthread_mutex_unlock(&state_mu);
    return st ? ACL_SUCCESS : out_of_memory(func);
}

/* ---- core limits ------------------------------------------------------------------------------ */

static pthread_mutex_t device_mu = PTHREAD_MUTEX_INITIALIZER;
static int device_limit_set[RT_MAX_DEVICES][RES_TYPES];
static uint32_t device_limit[RT_MAX_DEVICES][RES_TYPES];

static _Thread_local rt_stream *tls_res_stream;   /* aclrtUseStreamResInCurrentThread */
static _Thread_local uint64_t tls_res_generation;

/* The SoC's count of cores of this type (0: unknown). */
static uint32_t total_cores(int type) {
    const pyaclnn_compat_soc_spec *soc = pyaclnn_compat_soc();
    return (uint32_t)(type == ACL_RT_DEV_RES_CUBE_CORE ? soc->cube_cores : soc->vector_cores);
}

/* ACL_SUCCESS, or a report: type must be a resource type the SoC has a count for. */
static aclError check_type(const char *func, aclrtDevResLimitType type) {
    if ((int)type < 0 || (int)type >= RES_TYPES)
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func,
                         "type %d is invalid: ACL_RT_DEV_RES_CUBE_CORE (0) or ACL_RT_DEV_RES_VECTOR_CORE (1)",
                         (int)type);
    if (total_cores(type) == 0)
        return pyaclnn_stub_compat_unsupported(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, func,
                                               "core limits on a SoC whose core counts the emulator does not know");
    return ACL_SUCCESS;
}

static aclError check_value(const char *func, aclrtDevResLimitType type, uint32_t value) {
    uint32_t total = total_cores(type);
    if (value > total)
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func, "value %u must be less than or equal to %u (the %s cores "
                         "of %s)", value, total, type == ACL_RT_DEV_RES_CUBE_CORE ? "cube" : "vector",
                         pyaclnn_compat_soc()->soc);
    return ACL_SUCCESS;
}

static uint32_t device_value(int32_t device, int type) {
    pthread_mutex_lock(&device_mu);
    uint32_t v = device_limit_set[device][type] ? device_limit[device][type] : total_cores(type);
    pthread_mutex_unlock(&device_mu);
    return v;
}

ACL_FUNC_VISIBILITY aclError aclrtSetDeviceResLimit(int32_t deviceId, aclrtDevResLimitType type, uint32_t value) {
    static const char func[] = "aclrtSetDeviceResLimit";
    aclError rc = check_type(func, type);
    if (rc || (rc = rt_device_check(func, deviceId)) || (rc = check_value(func, type, value))) return rc;
    pthread_mutex_lock(&device_mu);
    device_limit_set[deviceId][type] = 1;
    device_limit[deviceId][type] = value;
    pthread_mutex_unlock(&device_mu);
    pyaclnn_stub_compat_trace(func, "device %d: %s core limit %u stored", (int)deviceId,
                              type == ACL_RT_DEV_RES_CUBE_CORE ? "cube" : "vector", value);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtResetDeviceResLimit(int32_t deviceId) {
    static const char func[] = "aclrtResetDeviceResLimit";
    aclError rc = rt_device_check(func, deviceId);
    if (rc) return rc;
    pthread_mutex_lock(&device_mu);
    memset(device_limit_set[deviceId], 0, sizeof device_limit_set[deviceId]);
    pthread_mutex_unlock(&device_mu);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtGetDeviceResLimit(int32_t deviceId, aclrtDevResLimitType type, uint32_t *value) {
    static const char func[] = "aclrtGetDeviceResLimit";
    if (!value) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "value is NULL");
    aclError rc = check_type(func, type);
    if (rc || (rc = rt_device_check(func, deviceId))) return rc;
    *value = device_value(deviceId, type);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtSetStreamResLimit(aclrtStream stream, aclrtDevResLimitType type, uint32_t value) {
    static const char func[] = "aclrtSetStreamResLimit";
    rt_stream *s;
    aclError rc = check_type(func, type);
    if (rc || (rc = rt_stream_resolve(func, stream, &s)) || (rc = check_value(func, type, value))) return rc;
    pthread_mutex_lock(&state_mu);
    stream_state *st = state_of(s);
    if (st) {
        st->limit_set[type] = 1;
        st->limit[type] = value;
    }
    pthread_mutex_unlock(&state_mu);
    return st ? ACL_SUCCESS : out_of_memory(func);
}

ACL_FUNC_VISIBILITY aclError aclrtResetStreamResLimit(aclrtStream stream) {
    static const char func[] = "aclrtResetStreamResLimit";
    rt_stream *s;
    aclError rc = rt_stream_resolve(func, stream, &s);
    if (rc) return rc;
    pthread_mutex_lock(&state_mu);
    stream_state *st = state_of(s);
    if (st) memset(st->limit_set, 0, sizeof st->limit_set);
    pthread_mutex_unlock(&state_mu);
    return st ? ACL_SUCCESS : out_of_memory(func);
}

/* The stream's own limit when it has one, else its device's. */
static uint32_t stream_value(rt_stream *s, int type) {
    pthread_mutex_lock(&state_mu);
    stream_state *st = state_of(s);
    int set = st && st->limit_set[type];
    uint32_t v = set ? st->limit[type] : 0;
    pthread_mutex_unlock(&state_mu);
    if (set) return v;
    rt_context *owner = atomic_load(&s->ctx);
    return device_value(owner ? owner->device : 0, type);
}

ACL_FUNC_VISIBILITY aclError aclrtGetStreamResLimit(aclrtStream stream, aclrtDevResLimitType type, uint32_t *value) {
    static const char func[] = "aclrtGetStreamResLimit";
    if (!value) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "value is NULL");
    rt_stream *s;
    aclError rc = check_type(func, type);
    if (rc || (rc = rt_stream_resolve_any(func, stream, &s))) return rc;
    *value = stream_value(s, type);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtUseStreamResInCurrentThread(aclrtStream stream) {
    rt_stream *s;
    aclError rc = rt_stream_resolve_any("aclrtUseStreamResInCurrentThread", stream, &s);
    if (rc) return rc;
    tls_res_stream = s;
    tls_res_generation = atomic_load(&s->generation);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtUnuseStreamResInCurrentThread(aclrtStream stream) {
    rt_stream *s;
    aclError rc = rt_stream_resolve_any("aclrtUnuseStreamResInCurrentThread", stream, &s);
    if (rc) return rc;
    if (tls_res_stream == s) tls_res_stream = NULL;   /* another stream's: nothing to undo, as on the NPU */
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtGetResInCurrentThread(aclrtDevResLimitType type, uint32_t *value) {
    static const char func[] = "aclrtGetResInCurrentThread";
    if (!value) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "value is NULL");
    aclError rc = check_type(func, type);
    if (rc) return rc;
    rt_stream *s = tls_res_stream;
    if (s && atomic_load(&s->generation) == tls_res_generation &&
        stub_registry_kind(&rt_handles, s) == RT_KIND_STREAM) {
        pthread_mutex_lock(&state_mu);
        stream_state *st = state_of(s);
        int set = st && st->limit_set[type];
        uint32_t v = set ? st->limit[type] : 0;
        pthread_mutex_unlock(&state_mu);
        if (set) {
            *value = v;
            return ACL_SUCCESS;
        }
    }
    rt_context *ctx;
    if ((rc = rt_require_context(func, &ctx))) return rc;
    *value = device_value(ctx->device, type);
    return ACL_SUCCESS;
}
