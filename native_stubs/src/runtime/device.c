/*
 * Emulated devices.
 *  - PYACLNN_STUB_DEVICE_COUNT physical devices (default 1, capped at 64), filtered and renumbered
 *    by ASCEND_RT_VISIBLE_DEVICES with the real runtime's parsing: a comma-separated list of ids,
 *    read up to the first malformed or out-of-range entry; the ids must be ascending and distinct,
 *    otherwise (or if none is usable) no device is visible and aclrtGetDeviceCount fails with
 *    ACL_ERROR_RT_NO_DEVICE. Both variables are read once per process.
 *  - aclrtSetDevice binds the calling thread to the device's default context (created, with its
 *    default stream, on the first set) and counts a reference; aclrtResetDevice drops one and, at
 *    zero, destroys the default context and every stream created in it after their work has run.
 *    aclrtResetDeviceForce drops them all at once. Resetting a device that is not set returns
 *    ACL_ERROR_RT_CONTEXT_RELEASE_ERROR (507007), like the real runtime. Device memory is not
 *    freed by a reset (it stays tracked and shows up in the live counts).
 *  - Memory capacity per device: PYACLNN_STUB_DEVICE_MEMORY bytes (taken as given), else what the
 *    host can back: device memory is host memory, so a device of the SoC's nominal HBM (128 GiB on
 *    Ascend950PR) on a 23 GiB host accepted 127 GiB of allocations that the OOM killer would have
 *    ended once touched. The default is min(SoC HBM, 3/4 of the host's memory / visible
 *    devices), the host's memory being the smaller of MemTotal and the process's cgroup limits
 *    (host_memory.c), rounded down to whole MiB: the devices together keep a quarter of the host
 *    for the program itself, and an allocation beyond that fails with ACL_ERROR_RT_MEMORY_ALLOCATION
 *    (207001), which aclrtGetMemInfo's total and free agree with. Read once per process.
 */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"

/* ---- configuration (read once) --------------------------------------------------------------- */

static int physical_count = 1;
static int visible_count;                 /* -1: ASCEND_RT_VISIBLE_DEVICES unusable */
static int32_t visible_ids[RT_MAX_DEVICES];   /* physical index of each visible device id */
static char visible_error[200];
static uint64_t capacity_bytes;
static pthread_once_t config_once = PTHREAD_ONCE_INIT;

static int parse_u64(const char *s, unsigned long long *out) {
    if (!s || !*s) return -1;
    for (const char *c = s; *c; c++)
        if (!isdigit((unsigned char)*c)) return -1;
    errno = 0;
    char *end;
    *out = strtoull(s, &end, 10);
    return (errno == 0 && *end == '\0') ? 0 : -1;
}

/* Splits ASCEND_RT_VISIBLE_DEVICES like the real runtime: digits separated by single commas;
 * stops at any other character or at a doubled comma. Returns the number of tokens. */
static int split_visible(const char *s, unsigned long long *ids, int max_ids) {
    int n = 0;
    if (!isdigit((unsigned char)s[0])) return 0;
    const char *p = s;
    while (*p && n < max_ids) {
        if (!isdigit((unsigned char)*p)) break;
        unsigned long long v = 0;
        int overflow = 0;
        while (isdigit((unsigned char)*p)) {
            if (v > 1000000ull) overflow = 1;
            v = v * 10 + (unsigned long long)(*p - '0');
            p++;
        }
        ids[n++] = overflow ? ~0ull : v;
        if (*p != ',') break;
        p++;   /* a second comma right after stops the scan (the next loop test sees no digit) */
    }
    return n;
}

static void load_visible(void);

/* min(SoC HBM, 3/4 of what the host can back / devices), whole MiB (see the top of this file). */
static uint64_t default_capacity(int devices) {
    uint64_t hbm = rt_soc_hbm_bytes();
    uint64_t host = pyaclnn_stub_host_memory_limit(NULL);
    if (host == 0) return hbm;   /* unknown host (no /proc): the SoC's figure */
    uint64_t share = host / 4 * 3 / (uint64_t)devices;
    share &= ~((1ull << 20) - 1);
    if (share == 0) share = 1ull << 20;
    return share < hbm ? share : hbm;
}

static void load_config(void) {
    unsigned long long v;
    const char *count_env = getenv("PYACLNN_STUB_DEVICE_COUNT");
    if (parse_u64(count_env, &v) == 0) physical_count = v > RT_MAX_DEVICES ? RT_MAX_DEVICES : (int)v;

    const char *mem_env = getenv("PYACLNN_STUB_DEVICE_MEMORY");
    capacity_bytes = (parse_u64(mem_env, &v) == 0 && v > 0) ? (uint64_t)v : 0;   /* 0: from the host, below */
    load_visible();
    if (capacity_bytes == 0) capacity_bytes = default_capacity(visible_count > 0 ? visible_count : 1);
}

static void load_visible(void) {
    for (int i = 0; i < RT_MAX_DEVICES; i++) visible_ids[i] = i;
    const char *vis = getenv("ASCEND_RT_VISIBLE_DEVICES");
    if (vis == NULL) {
        visible_count = physical_count;
        return;
    }
    unsigned long long ids[RT_MAX_DEVICES];
    int n = split_visible(vis, ids, RT_MAX_DEVICES), used = 0;
    for (int i = 0; i < n && used < physical_count; i++) {
        if (ids[i] >= (unsigned long long)physical_count) break;   /* out of range: stop here */
        if (used > 0 && ids[i] <= ids[used - 1]) {
            snprintf(visible_error, sizeof visible_error,
                     "ASCEND_RT_VISIBLE_DEVICES=\"%s\" is invalid: ids must be distinct and ascending", vis);
            visible_count = -1;
            return;
        }
        visible_ids[used++] = (int32_t)ids[i];
    }
    if (used == 0) {
        snprintf(visible_error, sizeof visible_error,
                 "ASCEND_RT_VISIBLE_DEVICES=\"%s\" names no device in [0, %d)", vis, physical_count);
        visible_count = -1;
        return;
    }
    visible_count = used;
}

int rt_visible_device_count(const char **why) {
    pthread_once(&config_once, load_config);
    if (why) *why = visible_count < 0 ? visible_error : NULL;
    return visible_count;
}

uint64_t rt_device_capacity(void) {
    pthread_once(&config_once, load_config);
    return capacity_bytes;
}

/* Reports ACL_ERROR_RT_INVALID_DEVICEID unless id names a visible device. */
static aclError check_device_id(const char *func, int32_t id) {
    const char *why;
    int n = rt_visible_device_count(&why);
    if (n < 0) return RT_REPORT(ACL_ERROR_RT_INVALID_DEVICEID, func, "device id %d is invalid: %s", id, why);
    if (id < 0 || id >= n)
        return RT_REPORT(ACL_ERROR_RT_INVALID_DEVICEID, func, "device id %d is out of range [0, %d)", id, n);
    return ACL_SUCCESS;
}

/* ---- set / reset ----------------------------------------------------------------------------- */

static pthread_mutex_t devices_mu = PTHREAD_MUTEX_INITIALIZER;
static int64_t set_count[RT_MAX_DEVICES];
static rt_context *default_ctx[RT_MAX_DEVICES];

ACL_FUNC_VISIBILITY aclError aclrtSetDevice(int32_t deviceId) {
    aclError rc = rt_fork_check("aclrtSetDevice");
    if (rc) return rc;
    rc = rt_soc_check("aclrtSetDevice");
    if (rc) return rc;
    rc = check_device_id("aclrtSetDevice", deviceId);
    if (rc) return rc;
    pthread_mutex_lock(&devices_mu);
    if (set_count[deviceId] == 0) {
        rc = rt_context_create("aclrtSetDevice", deviceId, 1, &default_ctx[deviceId]);
        if (rc) {
            pthread_mutex_unlock(&devices_mu);
            return rc;
        }
    }
    set_count[deviceId]++;
    rt_context *ctx = default_ctx[deviceId];
    pthread_mutex_unlock(&devices_mu);
    rt_set_current_context(ctx);
    return ACL_SUCCESS;
}

static aclError reset_device(const char *func, int32_t deviceId, int force) {
    /* A forked child must not wait for the parent's stream workers, which do not exist here. */
    aclError rc = rt_fork_check(func);
    if (rc) return rc;
    rc = check_device_id(func, deviceId);
    if (rc) return rc;
    pthread_mutex_lock(&devices_mu);
    if (set_count[deviceId] == 0) {
        pthread_mutex_unlock(&devices_mu);
        return RT_REPORT(ACL_ERROR_RT_CONTEXT_RELEASE_ERROR, func,
                         "device %d is not set: no aclrtSetDevice left to balance", deviceId);
    }
    set_count[deviceId] = force ? 0 : set_count[deviceId] - 1;
    rt_context *release = NULL;
    if (set_count[deviceId] == 0) {
        release = default_ctx[deviceId];
        default_ctx[deviceId] = NULL;
    }
    pthread_mutex_unlock(&devices_mu);
    if (release) rt_context_destroy(release);   /* waits for the work of its streams */
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtResetDevice(int32_t deviceId) {
    return reset_device("aclrtResetDevice", deviceId, 0);
}

ACL_FUNC_VISIBILITY aclError aclrtResetDeviceForce(int32_t deviceId) {
    return reset_device("aclrtResetDeviceForce", deviceId, 1);
}

/* ---- queries --------------------------------------------------------------------------------- */

ACL_FUNC_VISIBILITY aclError aclrtGetDevice(int32_t *deviceId) {
    if (!deviceId) return RT_REPORT(ACL_ERROR_INVALID_PARAM, "aclrtGetDevice", "deviceId is NULL");
    rt_context *ctx;
    aclError rc = rt_require_context("aclrtGetDevice", &ctx);
    if (rc) return rc;
    *deviceId = ctx->device;
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtGetDeviceCount(uint32_t *count) {
    if (!count) return RT_REPORT(ACL_ERROR_INVALID_PARAM, "aclrtGetDeviceCount", "count is NULL");
    const char *why;
    int n = rt_visible_device_count(&why);
    if (n < 0) return RT_REPORT(ACL_ERROR_RT_NO_DEVICE, "aclrtGetDeviceCount", "%s", why);
    *count = (uint32_t)n;
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtGetRunMode(aclrtRunMode *runMode) {
    if (!runMode) return RT_REPORT(ACL_ERROR_INVALID_PARAM, "aclrtGetRunMode", "runMode is NULL");
    *runMode = ACL_HOST;   /* an application on a host server, not on the device's own CPU */
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtGetVersion(int32_t *majorVersion, int32_t *minorVersion,
                                             int32_t *patchVersion) {
    if (!majorVersion || !minorVersion || !patchVersion)
        return RT_REPORT(ACL_ERROR_INVALID_PARAM, "aclrtGetVersion", "%s is NULL",
                         !majorVersion ? "majorVersion" : !minorVersion ? "minorVersion" : "patchVersion");
    *majorVersion = ACL_MAJOR_VERSION;
    *minorVersion = ACL_MINOR_VERSION;
    *patchVersion = ACL_PATCH_VERSION;
    return ACL_SUCCESS;
}

/* ---- device-wide synchronisation ------------------------------------------------------------- */

static aclError synchronize_device(const char *func, int32_t timeout) {
    rt_context *ctx;
    aclError rc = rt_require_context(func, &ctx);
    if (rc) return rc;
    return rt_streams_synchronize(func, ctx->device, NULL, timeout);
}

ACL_FUNC_VISIBILITY aclError aclrtSynchronizeDevice(void) {
    return synchronize_device("aclrtSynchronizeDevice", -1);
}

ACL_FUNC_VISIBILITY aclError aclrtSynchronizeDeviceWithTimeout(int32_t timeout) {
    if (timeout < -1)
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, "aclrtSynchronizeDeviceWithTimeout",
                         "timeout %d ms is invalid; expected -1 (wait forever) or a value >= 0", timeout);
    return synchronize_device("aclrtSynchronizeDeviceWithTimeout", timeout);
}

/* ---- for the compatibility layer ------------------------------------------------------------- */

aclError rt_device_check(const char *func, int32_t id) { return check_device_id(func, id); }

int rt_device_is_set(int32_t id) {
    if (id < 0 || id >= RT_MAX_DEVICES) return 0;
    pthread_mutex_lock(&devices_mu);
    int set = set_count[id] > 0;
    pthread_mutex_unlock(&devices_mu);
    return set;
}

int32_t rt_device_logic_id(int32_t id) {
    pthread_once(&config_once, load_config);
    return id >= 0 && id < RT_MAX_DEVICES ? visible_ids[id] : -1;
}
