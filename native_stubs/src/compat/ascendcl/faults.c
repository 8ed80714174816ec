/*
 * Device fault reporting and recovery (acl_rt.h): the vendor's path after an HBM uncorrectable error
 * (UCE) or a link error. The emulator's devices never fail that way, so the queries answer truthfully
 * "no fault" and a repair of a fault that cannot exist is refused:
 *
 *   aclrtGetErrorVerbose   errorType ACL_RT_NO_ERROR, no detail, no repair to try
 *   aclrtRepairError       ACL_RT_NO_ERROR: done (nothing to clear); ACL_RT_ERROR_MEMORY: 207000
 *   aclrtGetMemUceInfo     no UCE addresses (*retSize = 0); needs a current context, as on the NPU
 *   aclrtMemUceRepair      an empty list: done; addresses: 207000 (none can be in error)
 *
 * Argument checks and codes as in hicann/runtime (acl layer first, then the runtime's).
 */
#include <string.h>

#include "../compat.h"
#include "../../runtime/rt_internal.h"

ACL_FUNC_VISIBILITY aclError aclrtGetErrorVerbose(int32_t deviceId, aclrtErrorInfo *errorInfo) {
    static const char func[] = "aclrtGetErrorVerbose";
    if (!errorInfo) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "errorInfo is NULL");
    aclError rc = rt_fork_check(func);
    if (rc || (rc = rt_device_check(func, deviceId))) return rc;
    errorInfo->tryRepair = 0;
    errorInfo->hasDetail = 0;
    errorInfo->errorType = ACL_RT_NO_ERROR;
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtRepairError(int32_t deviceId, const aclrtErrorInfo *errorInfo) {
    static const char func[] = "aclrtRepairError";
    if (!errorInfo) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "errorInfo is NULL");
    if (errorInfo->tryRepair == 0)
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func, "errorInfo->tryRepair is %u, should be 1",
                         (unsigned)errorInfo->tryRepair);
    aclError rc = rt_fork_check(func);
    if (rc || (rc = rt_device_check(func, deviceId))) return rc;
    switch ((int)errorInfo->errorType) {
    case ACL_RT_NO_ERROR: return ACL_SUCCESS;
    case ACL_RT_ERROR_MEMORY:
        return pyaclnn_stub_compat_unsupported(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, func,
                                               "repairing memory errors; emulated devices never have one");
    default:
        return RT_REPORT(ACL_ERROR_RT_PARAM_INVALID, func,
                         "errorInfo->errorType %d is invalid: ACL_RT_NO_ERROR (0) or ACL_RT_ERROR_MEMORY (1)",
                         (int)errorInfo->errorType);
    }
}

ACL_FUNC_VISIBILITY aclError aclrtGetMemUceInfo(int32_t deviceId, aclrtMemUceInfo *memUceInfoArray, size_t arraySize,
                                                size_t *retSize) {
    static const char func[] = "aclrtGetMemUceInfo";
    if (!memUceInfoArray) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "memUceInfoArray is NULL");
    if (!retSize) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "retSize is NULL");
    rt_context *ctx;
    aclError rc = rt_device_check(func, deviceId);
    if (rc || (rc = rt_require_context(func, &ctx))) return rc;
    *retSize = 0;   /* no uncorrectable errors: nothing to list */
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclrtMemUceRepair(int32_t deviceId, aclrtMemUceInfo *memUceInfoArray, size_t arraySize) {
    static const char func[] = "aclrtMemUceRepair";
    if (!memUceInfoArray) return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "memUceInfoArray is NULL");
    if (arraySize > ACL_RT_MAX_RECORD_PA_NUM_PER_DEV)
        return RT_REPORT(ACL_ERROR_INVALID_PARAM, func, "arraySize %zu must be less than or equal to %u", arraySize,
                         ACL_RT_MAX_RECORD_PA_NUM_PER_DEV);
    static const size_t zero[UCE_INFO_RESERVED_SIZE];
    for (size_t i = 0; i < arraySize; i++)
        if (memcmp(memUceInfoArray[i].reserved, zero, sizeof zero) != 0)
            return RT_REPORT(ACL_ERROR_INVALID_PARAM, func,
                             "memUceInfoArray[%zu].reserved is a reserved parameter and must be 0", i);
    rt_context *ctx;
    aclError rc = rt_device_check(func, deviceId);
    if (rc || (rc = rt_require_context(func, &ctx))) return rc;
    if (arraySize == 0) return ACL_SUCCESS;
    return pyaclnn_stub_compat_unsupported(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, func,
                                           "repairing memory errors; emulated devices never have one");
}
