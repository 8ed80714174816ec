/*
 * Device queries (acl_rt.h, acl_base_rt.h): what an emulated device is, from the SoC it emulates
 * (PYACLNN_STUB_SOC) and the runtime's own state.
 *
 *   aclrtGetDeviceInfo          core counts, L2 and UB sizes of the SoC (the vendor's platform figures),
 *                               the emulated memory capacity, the chip index, NPU arch; attributes the
 *                               emulator has no figure for (SIMT limits, super-pod ids, board id, link
 *                               type) -> ACL_ERROR_RT_FEATURE_NOT_SUPPORT; unknown ones -> 107000
 *   aclGetDeviceCapability      the older query of the same figures (ai_core_cnt, vector_core_cnt, l2_size)
 *   aclrtDeviceGetUuid          a stable 16-byte id per (SoC, physical device index)
 *   aclrtGetPrimaryCtxState     active while the device is set (aclrtSetDevice, not yet reset)
 *   aclrtGetMemUsageInfo        one component, "APP": the aclrtMalloc memory in use and its peak
 *   aclrtGetLogicDevIdByUserDevId  the physical index behind ASCEND_RT_VISIBLE_DEVICES' renumbering
 *   aclrtGetDeviceUtilizationRate  -1 (the vendor's "not supported" value) for every unit: the
 *                               emulator does not measure utilisation
 *   aclGetCannAttributeList / aclGetCannAttribute  INF_NAN and BF16 as the SoC has them; no JIT_COMPILE
 *                               (there is no aclop compiler)
 *
 * Codes follow hicann/runtime: NULL out-parameters -> ACL_ERROR_INVALID_PARAM (checked first, by the
 * acl layer); a device id the runtime cannot map -> ACL_ERROR_RT_INVALID_DEVICEID, except for
 * aclrtGetDeviceInfo (ACL_ERROR_RT_PARAM_INVALID) and aclGetDeviceCapability (ACL_ERROR_INVALID_PARAM).
 */
#include <stdio.h>
#include <string.h>

#include "../compat.h"
#include "../../runtime/rt_internal.h"

#define MIB (1024ll * 1024ll)

/* ---- the SoC's figures ------------------------------------------------------------------------ */

/* data/platform_config/<SoC>.ini of the vendor's toolkit ([SoCInfo], [VectorCoreSpec] ub_size). The
 * Ascend 950 entries are the 950PR server part (32 cube / 64 vector cores, 128 MB L2), whose HBM size
 * the emulator also reports; 950DT uses the same die. Prefix match, most specific first. */
static const pyaclnn_compat_soc_spec SOCS[] = {
    {"Ascend950", 32, 64, 0, 128 * MIB, 253952, 3510},
    {"Ascend910B4", 20, 40, 6, 96 * MIB, 196608, 2201},
    {"Ascend910B3", 20, 40, 6, 192 * MIB, 196608, 2201},
    {"Ascend910B", 24, 48, 6, 192 * MIB, 196608, 2201},     /* B1, B2, B2C */
    {"Ascend910_93", 24, 48, 6, 192 * MIB, 196608, 2201},   /* Atlas A3, per die */
};
static const pyaclnn_compat_soc_spec UNKNOWN_SOC = {"", 0, 0, 0, 0, 0, 0};

const pyaclnn_compat_soc_spec *pyaclnn_compat_soc(void) {
    const char *name = aclrtGetSocName();
    for (size_t i = 0; name && i < sizeof SOCS / sizeof SOCS[0]; i++)
        if (strncmp(name, SOCS[i].soc, strlen(SOCS[i].soc)) == 0) return &SOCS[i];
    return &UNKNOWN_SOC;
}

static aclError no_figure(const char *func, const char *what) {
    return pyaclnn_stub_compat_unsupported(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, func, what);
}

/* ---- aclrtGetDeviceInfo / aclGetDeviceCapability ----------------------------------------------- */

ACL_FUNC_VISIBILITY aclError aclrtGetDeviceInfo(uint32_t deviceId, aclrtDevAttr attr, int64_t *value) {
    static const char func[] = "aclrtGetDeviceInfo";
    if (!value) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "value is NULL");
    aclError rc = rt_fork_check(func);
    if (rc) return rc;
    const char *why;
    int n = rt_visible_device_count(&why);
    if (n < 0 || deviceId >= (uint32_t)n)
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func, "deviceId %u is not a visible device: %s", deviceId,
                         n < 0 ? why : "out of range");
    const pyaclnn_compat_soc_spec *soc = pyaclnn_compat_soc();
    int64_t v = -1;
    const char *missing = NULL;
    switch ((int)attr) {
    case ACL_DEV_ATTR_AICPU_CORE_NUM: v = soc->aicpu_cores; missing = "the AI CPU count of this SoC"; break;
    case ACL_DEV_ATTR_AICORE_CORE_NUM:
    case ACL_DEV_ATTR_CUBE_CORE_NUM: v = soc->cube_cores; missing = "the core counts of this SoC"; break;
    case ACL_DEV_ATTR_VECTOR_CORE_NUM: v = soc->vector_cores; missing = "the core counts of this SoC"; break;
    case ACL_DEV_ATTR_UBUF_PER_VECTOR_CORE: v = soc->ub_per_vector_core; missing = "the UB size of this SoC"; break;
    case ACL_DEV_ATTR_L2_CACHE_SIZE: v = soc->l2_bytes; missing = "the L2 size of this SoC"; break;
    case ACL_DEV_ATTR_NPU_ARCH: v = soc->npu_arch; missing = "the NPU arch of this SoC"; break;
    case ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE: v = (int64_t)rt_device_capacity(); break;
    case ACL_DEV_ATTR_PHY_CHIP_ID: v = rt_device_logic_id((int32_t)deviceId); break;
    case ACL_DEV_ATTR_SMP_ID: v = 0; break;              /* every emulated device lives in this process */
    case ACL_DEV_ATTR_CUST_OP_PRIVILEGE: v = 0; break;
    case ACL_DEV_ATTR_IS_VIRTUAL: v = 0; break;          /* no compute-power splitting */
    case ACL_DEV_ATTR_WARP_SIZE:
    case ACL_DEV_ATTR_MAX_THREAD_PER_VECTOR_CORE:
    case ACL_DEV_ATTR_MAX_GRID_DIM_X:
    case ACL_DEV_ATTR_MAX_GRID_DIM_Y:
    case ACL_DEV_ATTR_MAX_GRID_DIM_Z:
    case ACL_DEV_ATTR_MAX_BLOCK_PER_GRID:
    case ACL_DEV_ATTR_MAX_THREADS_PER_BLOCK:
    case ACL_DEV_ATTR_MAX_BLOCK_DIM_X:
    case ACL_DEV_ATTR_MAX_BLOCK_DIM_Y:
    case ACL_DEV_ATTR_MAX_BLOCK_DIM_Z:
        return no_figure(func, "SIMT limits; the emulator runs no device kernels");
    case ACL_DEV_ATTR_SUPER_POD_DEVICE_ID:
    case ACL_DEV_ATTR_SUPER_POD_SERVER_ID:
    case ACL_DEV_ATTR_SUPER_POD_ID:
        return no_figure(func, "super-pod ids; an emulated device belongs to no super pod");
    case ACL_DEV_ATTR_MAINBOARD_ID:
    case ACL_DEV_ATTR_HD_CONNECT_TYPE:
        return no_figure(func, "board id and host-device link; an emulated device has neither");
    default:
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func,
                         "attr %d is not an aclrtDevAttr the runtime answers (1, 101, 102, 201..212, 301, 302, "
                         "401..408, 501, 601)", (int)attr);
    }
    if (v <= 0 && missing) return no_figure(func, missing);
    *value = v;
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclGetDeviceCapability(uint32_t deviceId, aclDeviceInfo deviceInfo, int64_t *value) {
    static const char func[] = "aclGetDeviceCapability";
    if (!value) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "value is NULL");
    const char *why;
    int n = rt_visible_device_count(&why);
    if (n < 0) return RT_REPORT(ACL_ERROR_RT_NO_DEVICE, func, "%s", why);
    if (deviceId > (uint32_t)(n - 1))
        return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "deviceId %u greater than deviceNum %d", deviceId, n);
    const pyaclnn_compat_soc_spec *soc = pyaclnn_compat_soc();
    int64_t v;
    switch ((int)deviceInfo) {
    case ACL_DEVICE_INFO_AI_CORE_NUM: v = soc->cube_cores; break;
    case ACL_DEVICE_INFO_VECTOR_CORE_NUM: v = soc->vector_cores; break;
    case ACL_DEVICE_INFO_L2_SIZE: v = soc->l2_bytes; break;
    default:
        return RT_REPORT(ACL_ERROR_INVALID_PARAM, func,
                         "deviceInfo %d is invalid: ACL_DEVICE_INFO_AI_CORE_NUM (0), ACL_DEVICE_INFO_VECTOR_CORE_NUM "
                         "(1) or ACL_DEVICE_INFO_L2_SIZE (2)", (int)deviceInfo);
    }
    if (v <= 0) return no_figure(func, "the core counts and L2 size of this SoC");
    *value = v;
    return ACL_SUCCESS;
}

/* ---- identity and state ------------------------------------------------------------------------ */

static uint64_t fnv1a(uint64_t h, const char *s) {
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ull;
    }
    return h;
}

ACL_FUNC_VISIBILITY aclError aclrtDeviceGetUuid(int32_t deviceId, aclrtUuid *uuid) {
    static const char func[] = "aclrtDeviceGetUuid";
    if (!uuid) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "uuid is NULL");
    aclError rc = rt_fork_check(func);
    if (rc || (rc = rt_device_check(func, deviceId))) return rc;
    /* Name-based: the same chip and physical index give the same id in every run, as a board does. */
    char key[160];
    const char *soc = aclrtGetSocName();
    snprintf(key, sizeof key, "pyaclnn-emulator/%s/%d", soc ? soc : "?", (int)rt_device_logic_id(deviceId));
    uint64_t hi = fnv1a(1469598103934665603ull, key), lo = fnv1a(hi ^ 0x9e3779b97f4a7c15ull, key);
    unsigned char b[16];
    for (int i = 0; i < 8; i++) {
        b[i] = (unsigned char)(hi >> (56 - 8 * i));
        b[8 + i] = (unsigned char)(lo >> (56 - 8 * i));
    }
    b[6] = (unsigned char)((b[6] & 0x0F) | 0x80);   /* RFC 9562 version 8 (custom), variant 10 */
    b[8] = (unsigned char)((b[8] & 0x3F) | 0x80);
    memcpy(uuid->bytes, b, sizeof b);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtGetPrimaryCtxState(int32_t deviceId, uint32_t *flags, int32_t *active) {
    static const char func[] = "aclrtGetPrimaryCtxState";
    if (!active) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "active is NULL");
    if (flags) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "flags is a reserved parameter and must be NULL");
    aclError rc = rt_fork_check(func);
    if (rc || (rc = rt_device_check(func, deviceId))) return rc;
    *active = rt_device_is_set(deviceId);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtGetLogicDevIdByUserDevId(const int32_t userDevid, int32_t *const logicDevId) {
    static const char func[] = "aclrtGetLogicDevIdByUserDevId";
    if (!logicDevId) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "logicDevId is NULL");
    aclError rc = rt_device_check(func, userDevid);
    if (rc) return rc;
    *logicDevId = rt_device_logic_id(userDevid);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtGetMemUsageInfo(int32_t deviceId, aclrtMemUsageInfo *memUsageInfo, size_t inputNum,
                                                  size_t *outputNum) {
    static const char func[] = "aclrtGetMemUsageInfo";
    if (!memUsageInfo) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "memUsageInfo is NULL");
    if (!outputNum) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "outputNum is NULL");
    *outputNum = 0;
    if (inputNum == 0) return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func, "inputNum must be greater than 0");
    aclError rc = rt_fork_check(func);
    if (rc || (rc = rt_device_check(func, deviceId))) return rc;
    uint64_t used, peak;
    rt_device_memory_usage(deviceId, &used, &peak);
    memset(&memUsageInfo[0], 0, sizeof memUsageInfo[0]);
    snprintf(memUsageInfo[0].name, sizeof memUsageInfo[0].name, "APP");   /* the driver's name for user memory */
    memUsageInfo[0].curMemSize = used;
    memUsageInfo[0].memPeakSize = peak;
    *outputNum = 1;
    return ACL_SUCCESS;
}

/* The vendor's value for a unit whose utilisation cannot be queried (DEVICE_UTILIZATION_NOT_SUPPORT). */
#define UTILIZATION_NOT_SUPPORTED (-1)

ACL_FUNC_VISIBILITY aclError aclrtGetDeviceUtilizationRate(int32_t deviceId, aclrtUtilizationInfo *utilizationInfo) {
    static const char func[] = "aclrtGetDeviceUtilizationRate";
    if (!utilizationInfo) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "utilizationInfo is NULL");
    if (utilizationInfo->utilizationExtend)
        return RT_REPORT(ACL_ERROR_INVALID_PARAM, func,
                         "utilizationInfo->utilizationExtend is a reserved parameter and must be NULL");
    aclError rc = rt_fork_check(func);
    if (rc || (rc = rt_device_check(func, deviceId))) return rc;
    utilizationInfo->cubeUtilization = UTILIZATION_NOT_SUPPORTED;
    utilizationInfo->vectorUtilization = UTILIZATION_NOT_SUPPORTED;
    utilizationInfo->aicpuUtilization = UTILIZATION_NOT_SUPPORTED;
    utilizationInfo->memoryUtilization = UTILIZATION_NOT_SUPPORTED;
    pyaclnn_stub_compat_trace(func, "device %d: -1 for every unit (utilisation is not measured)", (int)deviceId);
    return ACL_SUCCESS;
}

/* ---- CANN attributes --------------------------------------------------------------------------- */

/* INF_NAN: the emulated kernels compute IEEE inf/nan, as Atlas A2/A3 and Ascend 950 do (310P/910A
 * saturate); BF16 likewise; JIT_COMPILE never (no aclop compiler). */
static int attribute_available(aclCannAttr attr) {
    pyaclnn_soc_family family = pyaclnn_stub_soc_family();
    switch (attr) {
    case ACL_CANN_ATTR_INF_NAN:
    case ACL_CANN_ATTR_BF16: return family == PYACLNN_SOC_A2 || family == PYACLNN_SOC_950;
    case ACL_CANN_ATTR_JIT_COMPILE: return 0;
    default: return -1;
    }
}

ACL_FUNC_VISIBILITY aclError aclGetCannAttributeList(const aclCannAttr **cannAttrList, size_t *num) {
    static const char func[] = "aclGetCannAttributeList";
    static const aclCannAttr available[] = {ACL_CANN_ATTR_INF_NAN, ACL_CANN_ATTR_BF16};
    if (!cannAttrList) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "cannAttrList is NULL");
    if (!num) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "num is NULL");
    *cannAttrList = available;
    *num = attribute_available(ACL_CANN_ATTR_INF_NAN) == 1 ? 2 : 0;   /* both or neither */
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclGetCannAttribute(aclCannAttr cannAttr, int32_t *value) {
    static const char func[] = "aclGetCannAttribute";
    if (!value) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "value is NULL");
    int available = attribute_available(cannAttr);
    if (available < 0)
        return RT_REPORT(ACL_ERROR_INVALID_PARAM, func,
                         "cannAttr %d is not an attribute: ACL_CANN_ATTR_INF_NAN (0), ACL_CANN_ATTR_BF16 (1) or "
                         "ACL_CANN_ATTR_JIT_COMPILE (2)", (int)cannAttr);
    *value = available;
    return ACL_SUCCESS;
}
