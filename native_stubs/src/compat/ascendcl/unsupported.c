/*
 * libascendcl entry points that torch_npu binds at load time (BIND_NOW) but that belong to CANN
 * features the emulator does not have: model dumps, virtual memory management, IPC memory sharing, peer
 * access, kernel binaries and fault recovery. On Ascend950 torch_npu is aclnn-only and
 * never takes these paths for ordinary tensors; when something does call one, it gets
 * ACL_ERROR_RT_FEATURE_NOT_SUPPORT (207000) -- or NULL / an "undefined" value where the function
 * returns no status -- and a message for aclGetRecentErrMsg.
 */
#include <unistd.h>

#include "../compat.h"

#define NOT_SUPPORTED ACL_ERROR_RT_FEATURE_NOT_SUPPORT
#define REFUSE(func, what) pyaclnn_stub_compat_unsupported(NOT_SUPPORTED, func, what)

/* ---- model dumps (acl_rt.h) -------------------------------------------------------------------- */
#define DUMP "operator data dumps"
ACL_FUNC_VISIBILITY aclError aclmdlInitDump() { return REFUSE("aclmdlInitDump", DUMP); }
ACL_FUNC_VISIBILITY aclError aclmdlSetDump(const char *dumpCfgPath) { return REFUSE("aclmdlSetDump", DUMP); }
ACL_FUNC_VISIBILITY aclError aclmdlFinalizeDump() { return REFUSE("aclmdlFinalizeDump", DUMP); }

/* ---- devices ----------------------------------------------------------------------------------- */
ACL_FUNC_VISIBILITY aclError aclrtDeviceCanAccessPeer(int32_t *canAccessPeer, int32_t deviceId,
                                                      int32_t peerDeviceId) {
    return REFUSE("aclrtDeviceCanAccessPeer", "peer-to-peer access between emulated devices");
}
ACL_FUNC_VISIBILITY aclError aclrtDeviceEnablePeerAccess(int32_t peerDeviceId, uint32_t flags) {
    return REFUSE("aclrtDeviceEnablePeerAccess", "peer-to-peer access between emulated devices");
}

/* The process id the driver knows this process by: on the emulator, the process itself. */
ACL_FUNC_VISIBILITY aclError aclrtDeviceGetBareTgid(int32_t *pid) {
    if (!pid) return pyaclnn_stub_compat_unsupported(ACL_ERROR_INVALID_PARAM, "aclrtDeviceGetBareTgid",
                                                     "pid is NULL");
    *pid = (int32_t)getpid();
    return ACL_SUCCESS;
}

/* ---- virtual memory management and IPC sharing (acl_rt.h) -------------------------------------- */
#define VMM "virtual memory management (expandable segments); use the default caching allocator"
#define IPC "sharing device memory between processes"
ACL_FUNC_VISIBILITY aclError aclrtReserveMemAddress(void **virPtr, size_t size, size_t alignment,
                                                    void *expectPtr, uint64_t flags) {
    return REFUSE("aclrtReserveMemAddress", VMM);
}
ACL_FUNC_VISIBILITY aclError aclrtReleaseMemAddress(void *virPtr) { return REFUSE("aclrtReleaseMemAddress", VMM); }
ACL_FUNC_VISIBILITY aclError aclrtMallocPhysical(aclrtDrvMemHandle *handle, size_t size,
                                                 const aclrtPhysicalMemProp *prop, uint64_t flags) {
    return REFUSE("aclrtMallocPhysical", VMM);
}
ACL_FUNC_VISIBILITY aclError aclrtFreePhysical(aclrtDrvMemHandle handle) { return REFUSE("aclrtFreePhysical", VMM); }
ACL_FUNC_VISIBILITY aclError aclrtMapMem(void *virPtr, size_t size, size_t offset, aclrtDrvMemHandle handle,
                                         uint64_t flags) {
    return REFUSE("aclrtMapMem", VMM);
}
ACL_FUNC_VISIBILITY aclError aclrtUnmapMem(void *virPtr) { return REFUSE("aclrtUnmapMem", VMM); }
ACL_FUNC_VISIBILITY aclError aclrtMemExportToShareableHandle(aclrtDrvMemHandle handle, aclrtMemHandleType handleType,
                                                             uint64_t flags, uint64_t *shareableHandle) {
    return REFUSE("aclrtMemExportToShareableHandle", IPC);
}
ACL_FUNC_VISIBILITY aclError aclrtMemImportFromShareableHandle(uint64_t shareableHandle, int32_t deviceId,
                                                               aclrtDrvMemHandle *handle) {
    return REFUSE("aclrtMemImportFromShareableHandle", IPC);
}
ACL_FUNC_VISIBILITY aclError aclrtMemSetPidToShareableHandle(uint64_t shareableHandle, int32_t *pid, size_t pidNum) {
    return REFUSE("aclrtMemSetPidToShareableHandle", IPC);
}
ACL_FUNC_VISIBILITY aclError aclrtIpcMemGetExportKey(void *devPtr, size_t size, char *key, size_t len, uint64_t flags) {
    return REFUSE("aclrtIpcMemGetExportKey", IPC);
}
ACL_FUNC_VISIBILITY aclError aclrtIpcMemClose(const char *key) { return REFUSE("aclrtIpcMemClose", IPC); }
ACL_FUNC_VISIBILITY aclError aclrtIpcMemImportByKey(void **devPtr, const char *key, uint64_t flags) {
    return REFUSE("aclrtIpcMemImportByKey", IPC);
}
ACL_FUNC_VISIBILITY aclError aclrtIpcMemSetImportPid(const char *key, int32_t *pid, size_t num) {
    return REFUSE("aclrtIpcMemSetImportPid", IPC);
}
#define IPC_EVENT "sharing events between processes (aclrtCreateEventExWithFlag refuses ACL_EVENT_IPC too)"
ACL_FUNC_VISIBILITY aclError aclrtIpcGetEventHandle(aclrtEvent event, aclrtIpcEventHandle *handle) {
    return REFUSE("aclrtIpcGetEventHandle", IPC_EVENT);
}
ACL_FUNC_VISIBILITY aclError aclrtIpcOpenEventHandle(aclrtIpcEventHandle handle, aclrtEvent *event) {
    return REFUSE("aclrtIpcOpenEventHandle", IPC_EVENT);
}

/* ---- kernel binaries (acl_rt.h) ---------------------------------------------------------------- */
#define BINARY "loading device kernel binaries; the emulator has no device code"
ACL_FUNC_VISIBILITY aclError aclrtBinaryLoadFromData(const void *data, size_t length,
                                                     const aclrtBinaryLoadOptions *options, aclrtBinHandle *binHandle) {
    return REFUSE("aclrtBinaryLoadFromData", BINARY);
}
ACL_FUNC_VISIBILITY aclError aclrtBinaryGetFunction(const aclrtBinHandle binHandle, const char *kernelName,
                                                    aclrtFuncHandle *funcHandle) {
    return REFUSE("aclrtBinaryGetFunction", BINARY);
}
ACL_FUNC_VISIBILITY aclError aclrtGetFunctionAddr(aclrtFuncHandle funcHandle, void **aicAddr, void **aivAddr) {
    return REFUSE("aclrtGetFunctionAddr", BINARY);
}
ACL_FUNC_VISIBILITY aclError aclrtLaunchKernelWithHostArgs(aclrtFuncHandle funcHandle, uint32_t numBlocks,
                                                           aclrtStream stream, aclrtLaunchKernelCfg *cfg,
                                                           void *hostArgs, size_t argsSize,
                                                           aclrtPlaceHolderInfo *placeHolderArray,
                                                           size_t placeHolderNum) {
    return REFUSE("aclrtLaunchKernelWithHostArgs", BINARY);
}
ACL_FUNC_VISIBILITY aclError aclrtGetHardwareSyncAddr(void **addr) {
    return REFUSE("aclrtGetHardwareSyncAddr", "the cores' hardware synchronisation registers (device kernels only)");
}

/* ---- fault recovery (acl_rt.h) ----------------------------------------------------------------- */
/* Stopping a device's work mid-flight is part of the vendor's fault recovery (after a device or memory
 * error, which the emulator never has); aclrtDestroyStreamForce drops one stream's pending work. */
ACL_FUNC_VISIBILITY aclError aclrtDeviceTaskAbort(int32_t deviceId, uint32_t timeout) {
    return REFUSE("aclrtDeviceTaskAbort", "aborting a device's tasks for fault recovery");
}
