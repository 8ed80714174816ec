/*
 * Compatibility layer: entry points that torch_npu binds (at load time, BIND_NOW, or by dlsym at
 * run time) beyond what the faithful runtime in src/runtime/ implements. Kept apart on purpose:
 * most of these only have to exist, and each fails honestly when called.
 *
 * The declarations below are copied from the real CANN headers that the torch-npu 2.13.0 wheel
 * ships (torch_npu/include/acl/, torch_npu/include/profiling/aprof_pub.h and
 * torch_npu/include/torch_npu/csrc/inductor/mlir/hacl_rt.h). They are not in our public include/
 * tree: the public headers hold only what the faithful emulator implements (tests/test_headers.py).
 * docs/torch_npu.md lists every symbol and what it does.
 */
#ifndef PYACLNN_COMPAT_H
#define PYACLNN_COMPAT_H

#include <stddef.h>
#include <stdint.h>

#include "acl/acl.h"
#include "pyaclnn_stub.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- shared helpers (exported by libascendcl, used by every compat library) ------------------ */

/* Reports `code` under `func` for aclGetRecentErrMsg with the reason "not supported by the
 * pyaclnn CPU emulator (<what>)", traces it (PYACLNN_STUB_TRACE_COMPAT=1) and returns `code`. */
PYACLNN_STUB_API int pyaclnn_stub_compat_unsupported(int code, const char *func, const char *what);
/* One line on stderr, "pyaclnn-stub compat: <func>: <text>", when PYACLNN_STUB_TRACE_COMPAT=1. */
PYACLNN_STUB_API void pyaclnn_stub_compat_trace(const char *func, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The version string every package reports (aclsysGetCANNVersion, aclsysGetVersionStr and the
 * emulated toolkit tree's version files; pyaclnn/_toolkit.py writes the same string). */
#define PYACLNN_COMPAT_VERSION_NUMBER "0.1.0"
#define PYACLNN_COMPAT_CANN_VERSION "pyaclnn-emulator-" PYACLNN_COMPAT_VERSION_NUMBER
/* Why not a CANN release number: torch_npu turns features on by comparing versions (IsGteCANNVersion)
 * and would then call entry points the emulator lacks; a string it cannot parse keeps every such
 * feature off, without a warning. */

/* The aclop path's objects (src/compat/ascendcl/aclop_objects.c), read by libacl_op_compiler: snapshots
 * taken under the objects' lock. Each returns 0 (or 1 for _live), or -1 (0) when the handle is not live. */
typedef struct {
    aclDataType dtype;
    aclFormat format;                    /* aclSetTensorFormat's (torch_npu: the storage format) */
    int ndim;                            /* aclSetTensorShape's (torch_npu: the storage shape) */
    int64_t dims[PYACLNN_STUB_MAX_DIMS];
    aclMemType placement;
} pyaclnn_stub_aclop_desc;
PYACLNN_STUB_API int pyaclnn_stub_aclop_desc_get(const void *desc, pyaclnn_stub_aclop_desc *out);
PYACLNN_STUB_API int pyaclnn_stub_aclop_buffer_get(const void *buffer, void **data, size_t *size);
PYACLNN_STUB_API int pyaclnn_stub_aclop_attr_live(const void *attr);
/* An INT, BOOL, DTYPE (in *i) or FLOAT (in *f) attribute by name: 1 and its kind in *kind, or 0 when the attr
 * is not live or has no scalar of that name. */
PYACLNN_STUB_API int pyaclnn_stub_aclop_attr_scalar(const void *attr, const char *name, int *kind, int64_t *i,
                                                   float *f);
/* A STRING attribute by name, copied (truncated) into buf: 1, or 0 when the attr is not live or has no string of
 * that name. */
PYACLNN_STUB_API int pyaclnn_stub_aclop_attr_string(const void *attr, const char *name, char *buf, size_t size);

enum {
    PYACLNN_ACLOP_ATTR_BOOL = 1, PYACLNN_ACLOP_ATTR_INT, PYACLNN_ACLOP_ATTR_FLOAT, PYACLNN_ACLOP_ATTR_STRING,
    PYACLNN_ACLOP_ATTR_DTYPE, PYACLNN_ACLOP_ATTR_LIST_BOOL, PYACLNN_ACLOP_ATTR_LIST_INT, PYACLNN_ACLOP_ATTR_LIST_FLOAT,
    PYACLNN_ACLOP_ATTR_LIST_LIST_INT
};
typedef struct {
    int kind;
    int64_t i;                           /* BOOL, INT, DTYPE */
    float f;                             /* FLOAT */
    char *text;                          /* STRING */
    int n;                               /* lists: the count */
    void *list;                          /* LIST_*: n uint8 / int64 / float (LIST_LIST_INT: not kept) */
} pyaclnn_stub_aclop_attr_value;

#define ACL_UNKNOWN_RANK 0xFFFFFFFFFFFFFFFE   /* acl_base_mdl.h */

/* ---- shared by the files of src/compat/ascendcl/ (hidden: not exported) ------------------------ */

/* What the emulated SoC (PYACLNN_STUB_SOC) has, from the vendor's platform files of that chip
 * (data/platform_config/<SoC>.ini: [SoCInfo] ai_core_cnt, vector_core_cnt, ai_cpu_cnt, l2_size;
 * [VectorCoreSpec] ub_size). A figure of 0 is one the emulator does not know for that chip. */
typedef struct {
    const char *soc;
    int32_t cube_cores, vector_cores, aicpu_cores;
    int64_t l2_bytes, ub_per_vector_core;
    int32_t npu_arch;              /* __NPU_ARCH__: 2201 (Atlas A2/A3), 3510 (Ascend 950) */
} pyaclnn_compat_soc_spec;
const pyaclnn_compat_soc_spec *pyaclnn_compat_soc(void);

/* ---- types of the real headers (acl_base_rt.h, acl_rt.h, acl_base_mdl.h, acl_op.h, ...) -------- */

typedef struct aclTensorDesc aclTensorDesc;
typedef struct aclopAttr aclopAttr;

typedef enum {
  ACL_OPT_DETERMINISTIC = 0,
  ACL_OPT_ENABLE_DEBUG_KERNEL = 1,
  ACL_OPT_STRONG_CONSISTENCY = 2
} aclSysParamOpt;

typedef enum {
  ACL_DEVICE_INFO_UNDEFINED = -1,
  ACL_DEVICE_INFO_AI_CORE_NUM = 0,
  ACL_DEVICE_INFO_VECTOR_CORE_NUM = 1,
  ACL_DEVICE_INFO_L2_SIZE = 2
} aclDeviceInfo;

typedef enum aclrtFloatOverflowMode {
    ACL_RT_OVERFLOW_MODE_SATURATION = 0,
    ACL_RT_OVERFLOW_MODE_INFNAN,
    ACL_RT_OVERFLOW_MODE_UNDEF,
} aclrtFloatOverflowMode;

#define ACL_PKG_VERSION_MAX_SIZE       128
#define ACL_PKG_VERSION_PARTS_MAX_SIZE 64

typedef enum aclCANNPackageName {
    ACL_PKG_NAME_CANN,
    ACL_PKG_NAME_RUNTIME,
    ACL_PKG_NAME_COMPILER,
    ACL_PKG_NAME_HCCL,
    ACL_PKG_NAME_TOOLKIT,
    ACL_PKG_NAME_OPP,
    ACL_PKG_NAME_OPP_KERNEL,
    ACL_PKG_NAME_DRIVER
} aclCANNPackageName;

typedef struct aclCANNPackageVersion {
    char version[ACL_PKG_VERSION_MAX_SIZE];
    char majorVersion[ACL_PKG_VERSION_PARTS_MAX_SIZE];
    char minorVersion[ACL_PKG_VERSION_PARTS_MAX_SIZE];
    char releaseVersion[ACL_PKG_VERSION_PARTS_MAX_SIZE];
    char patchVersion[ACL_PKG_VERSION_PARTS_MAX_SIZE];
    char reserved[ACL_PKG_VERSION_MAX_SIZE];
} aclCANNPackageVersion;

/* Pointer-only uses: the struct layouts do not matter to functions that refuse them. */
typedef void *aclrtDrvMemHandle;
typedef void *aclrtBinHandle;
typedef void *aclrtFuncHandle;
typedef struct aclrtPhysicalMemProp aclrtPhysicalMemProp;
typedef struct aclrtBinaryLoadOptions aclrtBinaryLoadOptions;

typedef enum aclrtMemHandleType {
    ACL_MEM_HANDLE_TYPE_NONE = 0,
    ACL_MEM_HANDLE_TYPE_POSIX = 2,
} aclrtMemHandleType;

typedef enum aclEngineType {
    ACL_ENGINE_SYS,
    ACL_ENGINE_AICORE,
    ACL_ENGINE_VECTOR,
} aclopEngineType;

typedef enum aclCompileType {
    ACL_COMPILE_SYS,
    ACL_COMPILE_UNREGISTERED
} aclopCompileType;

typedef enum {
    ACL_PRECISION_MODE,
    ACL_AICORE_NUM,
    ACL_AUTO_TUNE_MODE,
    ACL_OP_SELECT_IMPL_MODE,
    ACL_OPTYPELIST_FOR_IMPLMODE,
    ACL_OP_DEBUG_LEVEL,
    ACL_DEBUG_DIR,
    ACL_OP_COMPILER_CACHE_MODE,
    ACL_OP_COMPILER_CACHE_DIR,
    ACL_OP_PERFORMANCE_MODE,
    ACL_OP_JIT_COMPILE,
    ACL_OP_DETERMINISTIC,
    ACL_CUSTOMIZE_DTYPES,
    ACL_OP_PRECISION_MODE,
    ACL_ALLOW_HF32,
    ACL_PRECISION_MODE_V2,
    ACL_OP_DEBUG_OPTION
} aclCompileOpt;
#define PYACLNN_COMPAT_COMPILE_OPT_COUNT 17

#define ACL_CONTINUE_ON_FAILURE 0x00000000U
#define ACL_STOP_ON_FAILURE     0x00000001U

typedef enum {
    ACL_STREAM_ATTR_FAILURE_MODE         = 1,
    ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK = 2,
    ACL_STREAM_ATTR_USER_CUSTOM_TAG      = 3,
    ACL_STREAM_ATTR_CACHE_OP_INFO        = 4,
    ACL_STREAM_ATTR_PRIORITY             = 5,
} aclrtStreamAttr;

typedef union {
    uint64_t failureMode;
    uint32_t overflowSwitch;
    uint32_t userCustomTag;
    uint32_t cacheOpInfoSwitch;
    uint32_t streamPriority;
    uint32_t reserve[4];
} aclrtStreamAttrValue;

typedef enum {
    ACL_RT_DEV_RES_CUBE_CORE = 0,
    ACL_RT_DEV_RES_VECTOR_CORE,
} aclrtDevResLimitType;

typedef struct aclrtUtilizationExtendInfo aclrtUtilizationExtendInfo;

typedef struct aclrtUtilizationInfo {
    int32_t cubeUtilization;
    int32_t vectorUtilization;
    int32_t aicpuUtilization;
    int32_t memoryUtilization;
    aclrtUtilizationExtendInfo *utilizationExtend; /**< reserved parameters, current version needs to be null */
} aclrtUtilizationInfo;

#define MAX_MEM_UCE_INFO_ARRAY_SIZE 128
#define UCE_INFO_RESERVED_SIZE 14

typedef struct aclrtMemUceInfo {
    void* addr;
    size_t len;
    size_t reserved[UCE_INFO_RESERVED_SIZE];
} aclrtMemUceInfo;

typedef enum {
    ACL_RT_NO_ERROR = 0,
    ACL_RT_ERROR_MEMORY = 1,
    ACL_RT_ERROR_L2 = 2,
    ACL_RT_ERROR_AICORE = 3,
    ACL_RT_ERROR_LINK = 4,
    ACL_RT_ERROR_L3_PORT = 5,
    ACL_RT_ERROR_OTHERS = 0xFFFF,
} aclrtErrorType;

typedef enum aclrtAicoreErrorType {
    ACL_RT_AICORE_ERROR_UNKNOWN,
    ACL_RT_AICORE_ERROR_SW,
    ACL_RT_AICORE_ERROR_HW_LOCAL,
} aclrtAicoreErrorType;

#define ACL_RT_MEM_UCE_INFO_MAX_NUM 20
typedef struct {
    size_t arraySize;
    aclrtMemUceInfo memUceInfoArray[ACL_RT_MEM_UCE_INFO_MAX_NUM];
} aclrtMemUceInfoArray;

typedef union aclrtErrorInfoDetail {
    aclrtMemUceInfoArray uceInfo;
    aclrtAicoreErrorType aicoreErrType;
} aclrtErrorInfoDetail;

typedef struct aclrtErrorInfo {
    uint8_t tryRepair;
    uint8_t hasDetail;
    uint8_t reserved[2];
    aclrtErrorType errorType;
    aclrtErrorInfoDetail detail;
} aclrtErrorInfo;

#define ACL_RT_MAX_RECORD_PA_NUM_PER_DEV 20U

#define ACL_IPC_EVENT_HANDLE_SIZE 64U
typedef struct aclrtIpcEventHandle {
    char reserved[ACL_IPC_EVENT_HANDLE_SIZE];
} aclrtIpcEventHandle;

typedef struct aclrtLaunchKernelCfg aclrtLaunchKernelCfg;   /* pointer only (refused) */
typedef struct {
    uint32_t addrOffset;
    uint32_t dataOffset;
} aclrtPlaceHolderInfo;

typedef struct aclGraphDumpOption aclGraphDumpOption;      /* acl_op_compiler.h */

/* ---- libascendcl: acl_rt.h --------------------------------------------------------------------- */
ACL_FUNC_VISIBILITY aclError aclrtSetDeviceSatMode(aclrtFloatOverflowMode mode);
ACL_FUNC_VISIBILITY aclError aclrtGetDeviceSatMode(aclrtFloatOverflowMode *mode);
ACL_FUNC_VISIBILITY aclError aclrtCtxGetSysParamOpt(aclSysParamOpt opt, int64_t *value);
ACL_FUNC_VISIBILITY aclError aclrtCtxSetSysParamOpt(aclSysParamOpt opt, int64_t value);
ACL_FUNC_VISIBILITY aclError aclrtGetSysParamOpt(aclSysParamOpt opt, int64_t *value);
ACL_FUNC_VISIBILITY aclError aclrtSetSysParamOpt(aclSysParamOpt opt, int64_t value);
ACL_FUNC_VISIBILITY aclError aclrtSetOpExecuteTimeOut(uint32_t timeout);
ACL_FUNC_VISIBILITY aclError aclrtSetOpExecuteTimeOutV2(uint64_t timeout, uint64_t *actualTimeout);
ACL_FUNC_VISIBILITY aclError aclsysGetCANNVersion(aclCANNPackageName name, aclCANNPackageVersion *version);
ACL_FUNC_VISIBILITY aclError aclsysGetVersionStr(char *pkgName, char *versionStr);
ACL_FUNC_VISIBILITY aclError aclrtDeviceGetBareTgid(int32_t *pid);
ACL_FUNC_VISIBILITY aclError aclmdlInitDump();
ACL_FUNC_VISIBILITY aclError aclmdlSetDump(const char *dumpCfgPath);
ACL_FUNC_VISIBILITY aclError aclmdlFinalizeDump();
ACL_FUNC_VISIBILITY aclError aclrtDeviceCanAccessPeer(int32_t *canAccessPeer, int32_t deviceId, int32_t peerDeviceId);
ACL_FUNC_VISIBILITY aclError aclrtDeviceEnablePeerAccess(int32_t peerDeviceId, uint32_t flags);
ACL_FUNC_VISIBILITY aclError aclrtReserveMemAddress(void **virPtr,
                                                    size_t size,
                                                    size_t alignment,
                                                    void *expectPtr,
                                                    uint64_t flags);
ACL_FUNC_VISIBILITY aclError aclrtReleaseMemAddress(void *virPtr);
ACL_FUNC_VISIBILITY aclError aclrtMallocPhysical(aclrtDrvMemHandle *handle,
                                                 size_t size,
                                                 const aclrtPhysicalMemProp *prop,
                                                 uint64_t flags);
ACL_FUNC_VISIBILITY aclError aclrtFreePhysical(aclrtDrvMemHandle handle);
ACL_FUNC_VISIBILITY aclError aclrtMapMem(void *virPtr,
                                         size_t size,
                                         size_t offset,
                                         aclrtDrvMemHandle handle,
                                         uint64_t flags);
ACL_FUNC_VISIBILITY aclError aclrtUnmapMem(void *virPtr);
ACL_FUNC_VISIBILITY aclError aclrtMemExportToShareableHandle(aclrtDrvMemHandle handle,
                                                             aclrtMemHandleType handleType, uint64_t flags,
                                                             uint64_t *shareableHandle);
ACL_FUNC_VISIBILITY aclError aclrtMemImportFromShareableHandle(uint64_t shareableHandle,
                                                               int32_t deviceId, aclrtDrvMemHandle *handle);
ACL_FUNC_VISIBILITY aclError aclrtMemSetPidToShareableHandle(uint64_t shareableHandle,
                                                             int32_t *pid, size_t pidNum);
ACL_FUNC_VISIBILITY aclError aclrtBinaryLoadFromData(const void *data, size_t length,
    const aclrtBinaryLoadOptions *options, aclrtBinHandle *binHandle);
ACL_FUNC_VISIBILITY aclError aclrtBinaryGetFunction(const aclrtBinHandle binHandle, const char *kernelName,
                                                    aclrtFuncHandle *funcHandle);
ACL_FUNC_VISIBILITY aclError aclrtGetFunctionAddr(aclrtFuncHandle funcHandle, void **aicAddr, void **aivAddr);
ACL_FUNC_VISIBILITY aclError aclrtSetOpWaitTimeout(uint32_t timeout);
ACL_FUNC_VISIBILITY aclError aclrtSetStreamFailureMode(aclrtStream stream, uint64_t mode);
ACL_FUNC_VISIBILITY aclError aclrtSetStreamOverflowSwitch(aclrtStream stream, uint32_t flag);
ACL_FUNC_VISIBILITY aclError aclrtGetStreamOverflowSwitch(aclrtStream stream, uint32_t *flag);
ACL_FUNC_VISIBILITY aclError aclrtSetStreamAttribute(aclrtStream stream, aclrtStreamAttr stmAttrType,
    aclrtStreamAttrValue *value);
ACL_FUNC_VISIBILITY aclError aclrtGetStreamAttribute(aclrtStream stream, aclrtStreamAttr stmAttrType,
    aclrtStreamAttrValue *value);
ACL_FUNC_VISIBILITY aclError aclrtGetDeviceResLimit(int32_t deviceId, aclrtDevResLimitType type, uint32_t *value);
ACL_FUNC_VISIBILITY aclError aclrtSetDeviceResLimit(int32_t deviceId, aclrtDevResLimitType type, uint32_t value);
ACL_FUNC_VISIBILITY aclError aclrtResetDeviceResLimit(int32_t deviceId);
ACL_FUNC_VISIBILITY aclError aclrtGetStreamResLimit(aclrtStream stream, aclrtDevResLimitType type, uint32_t *value);
ACL_FUNC_VISIBILITY aclError aclrtSetStreamResLimit(aclrtStream stream, aclrtDevResLimitType type, uint32_t value);
ACL_FUNC_VISIBILITY aclError aclrtResetStreamResLimit(aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtUseStreamResInCurrentThread(aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtUnuseStreamResInCurrentThread(aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtGetResInCurrentThread(aclrtDevResLimitType type, uint32_t *value);
ACL_FUNC_VISIBILITY aclError aclrtGetDeviceUtilizationRate(int32_t deviceId, aclrtUtilizationInfo *utilizationInfo);
ACL_FUNC_VISIBILITY aclError aclrtGetErrorVerbose(int32_t deviceId, aclrtErrorInfo *errorInfo);
ACL_FUNC_VISIBILITY aclError aclrtRepairError(int32_t deviceId, const aclrtErrorInfo *errorInfo);
ACL_FUNC_VISIBILITY aclError aclrtGetMemUceInfo(int32_t deviceId, aclrtMemUceInfo *memUceInfoArray,
                                                size_t arraySize, size_t *retSize);
ACL_FUNC_VISIBILITY aclError aclrtMemUceRepair(int32_t deviceId, aclrtMemUceInfo *memUceInfoArray, size_t arraySize);
ACL_FUNC_VISIBILITY aclError aclrtDeviceTaskAbort(int32_t deviceId, uint32_t timeout);
ACL_FUNC_VISIBILITY aclError aclrtIpcMemGetExportKey(void *devPtr, size_t size, char *key, size_t len, uint64_t flags);
ACL_FUNC_VISIBILITY aclError aclrtIpcMemClose(const char *key);
ACL_FUNC_VISIBILITY aclError aclrtIpcMemImportByKey(void **devPtr, const char *key, uint64_t flags);
ACL_FUNC_VISIBILITY aclError aclrtIpcMemSetImportPid(const char *key, int32_t *pid, size_t num);
ACL_FUNC_VISIBILITY aclError aclrtIpcGetEventHandle(aclrtEvent event, aclrtIpcEventHandle *handle);
ACL_FUNC_VISIBILITY aclError aclrtIpcOpenEventHandle(aclrtIpcEventHandle handle, aclrtEvent *event);
ACL_FUNC_VISIBILITY aclError aclrtGetHardwareSyncAddr(void **addr);
ACL_FUNC_VISIBILITY aclError aclrtLaunchKernelWithHostArgs(aclrtFuncHandle funcHandle, uint32_t numBlocks,
                                                           aclrtStream stream, aclrtLaunchKernelCfg *cfg,
                                                           void *hostArgs, size_t argsSize,
                                                           aclrtPlaceHolderInfo *placeHolderArray,
                                                           size_t placeHolderNum);

/* ---- libascendcl: acl_base_rt.h ---------------------------------------------------------------- */
ACL_FUNC_VISIBILITY aclError aclGetDeviceCapability(uint32_t deviceId, aclDeviceInfo deviceInfo, int64_t *value);
ACL_FUNC_VISIBILITY void aclAppLog(aclLogLevel logLevel, const char *func, const char *file, uint32_t line,
                                   const char *fmt, ...);
ACL_FUNC_VISIBILITY aclDataBuffer *aclCreateDataBuffer(void *data, size_t size);
ACL_FUNC_VISIBILITY aclError aclDestroyDataBuffer(const aclDataBuffer *dataBuffer);

/* ---- libascendcl: acl_base_mdl.h --------------------------------------------------------------- */
ACL_FUNC_VISIBILITY aclTensorDesc *aclCreateTensorDesc(aclDataType dataType,
                                                       int numDims,
                                                       const int64_t *dims,
                                                       aclFormat format);
ACL_FUNC_VISIBILITY void aclDestroyTensorDesc(const aclTensorDesc *desc);
ACL_FUNC_VISIBILITY aclDataType aclGetTensorDescType(const aclTensorDesc *desc);
ACL_FUNC_VISIBILITY aclFormat aclGetTensorDescFormat(const aclTensorDesc *desc);
ACL_FUNC_VISIBILITY size_t aclGetTensorDescNumDims(const aclTensorDesc *desc);
ACL_FUNC_VISIBILITY aclError aclGetTensorDescDimV2(const aclTensorDesc *desc, size_t index, int64_t *dimSize);
ACL_FUNC_VISIBILITY void aclSetTensorDescName(aclTensorDesc *desc, const char *name);
ACL_FUNC_VISIBILITY aclError aclSetTensorFormat(aclTensorDesc *desc, aclFormat format);
ACL_FUNC_VISIBILITY aclError aclSetTensorPlaceMent(aclTensorDesc *desc, aclMemType memType);
ACL_FUNC_VISIBILITY aclError aclSetTensorShape(aclTensorDesc *desc, int numDims, const int64_t *dims);

/* ---- libascendcl: acl_op.h --------------------------------------------------------------------- */
ACL_FUNC_VISIBILITY aclopAttr *aclopCreateAttr();
ACL_FUNC_VISIBILITY void aclopDestroyAttr(const aclopAttr *attr);
ACL_FUNC_VISIBILITY aclError aclopSetAttrBool(aclopAttr *attr, const char *attrName, uint8_t attrValue);
ACL_FUNC_VISIBILITY aclError aclopSetAttrInt(aclopAttr *attr, const char *attrName, int64_t attrValue);
ACL_FUNC_VISIBILITY aclError aclopSetAttrFloat(aclopAttr *attr, const char *attrName, float attrValue);
ACL_FUNC_VISIBILITY aclError aclopSetAttrString(aclopAttr *attr, const char *attrName, const char *attrValue);
ACL_FUNC_VISIBILITY aclError aclopSetAttrDataType(aclopAttr *attr, const char *attrName, aclDataType attrValue);
ACL_FUNC_VISIBILITY aclError aclopSetAttrListBool(aclopAttr *attr, const char *attrName, int numValues,
    const uint8_t *values);
ACL_FUNC_VISIBILITY aclError aclopSetAttrListInt(aclopAttr *attr, const char *attrName, int numValues,
    const int64_t *values);
ACL_FUNC_VISIBILITY aclError aclopSetAttrListFloat(aclopAttr *attr, const char *attrName, int numValues,
    const float *values);
ACL_FUNC_VISIBILITY aclError aclopSetAttrListListInt(aclopAttr *attr,
                                                     const char *attrName,
                                                     int numLists,
                                                     const int *numValues,
                                                     const int64_t *const values[]);

/* ---- libacl_op_compiler: acl_op_compiler.h ----------------------------------------------------- */
ACL_FUNC_VISIBILITY aclError aclopCompileAndExecute(const char *opType,
    int numInputs, const aclTensorDesc *const inputDesc[], const aclDataBuffer *const inputs[],
    int numOutputs, const aclTensorDesc *const outputDesc[], aclDataBuffer *const outputs[],
    const aclopAttr *attr, aclopEngineType engineType, aclopCompileType compileFlag,
    const char *opPath, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclopCompileAndExecuteV2(const char *opType,
    int numInputs, aclTensorDesc *inputDesc[], aclDataBuffer *inputs[],
    int numOutputs, aclTensorDesc *outputDesc[], aclDataBuffer *outputs[],
    aclopAttr *attr, aclopEngineType engineType, aclopCompileType compileFlag,
    const char *opPath, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclSetCompileopt(aclCompileOpt opt, const char *value);
ACL_FUNC_VISIBILITY aclError aclGenGraphAndDumpForOp(const char *opType,
    int numInputs, const aclTensorDesc *const inputDesc[], const aclDataBuffer *const inputs[],
    int numOutputs, const aclTensorDesc *const outputDesc[], aclDataBuffer *const outputs[],
    const aclopAttr *attr, aclopEngineType engineType,
    const char *graphDumpPath, const aclGraphDumpOption *graphDumpOpt);
ACL_FUNC_VISIBILITY aclGraphDumpOption *aclCreateGraphDumpOpt();
ACL_FUNC_VISIBILITY aclError aclDestroyGraphDumpOpt(const aclGraphDumpOption *graphDumpOpt);

/* ---- profiling/aprof_pub.h (libprofapi in CANN; folded into libascendcl here) ------------------ */
#define MSVP_PROF_API __attribute__((visibility("default")))
typedef void *VOID_PTR;
struct MsprofApi;
typedef int32_t (*ProfCommandHandle)(uint32_t type, void *data, uint32_t len);
MSVP_PROF_API int32_t MsprofRegisterCallback(uint32_t moduleId, ProfCommandHandle handle);
MSVP_PROF_API int32_t MsprofReportApi(uint32_t nonPersistantFlag, const struct MsprofApi *api);
MSVP_PROF_API int32_t MsprofReportCompactInfo(uint32_t nonPersistantFlag, const VOID_PTR data, uint32_t length);
MSVP_PROF_API int32_t MsprofReportAdditionalInfo(uint32_t nonPersistantFlag, const VOID_PTR data, uint32_t length);
MSVP_PROF_API uint64_t MsprofGetHashId(const char *hashInfo, size_t length);
MSVP_PROF_API uint64_t MsprofSysCycleTime(void);
#define PYACLNN_COMPAT_MSPROF_ERROR (-1)   /* aprof_pub.h names only MSPROF_ERROR_NONE = 0 */

/* ---- rt* (libruntime in CANN; folded into libascendcl here). torch_npu declares these in its own
 * torch_npu/csrc/inductor/mlir/hacl_rt.h, whose rtError_t names 0x17 RT_ERROR_FEATURE_NOT_SUPPROT. */
#define RTS_API __attribute__((visibility("default")))
typedef int32_t rtError_t;
typedef void *rtStream_t;
typedef struct tagRtDevBinary rtDevBinary_t;
typedef struct tagRtSmCtrl rtSmDesc_t;
#define PYACLNN_COMPAT_RT_ERROR_FEATURE_NOT_SUPPORT 0x17
RTS_API rtError_t rtDevBinaryRegister(const rtDevBinary_t *bin, void **handle);
RTS_API rtError_t rtFunctionRegister(void *binHandle, const void *stubFunc, const char *stubName,
                                     const void *devFunc, uint32_t funcMode);
RTS_API rtError_t rtKernelLaunch(const void *stubFunc, uint32_t blockDim, void *args, uint32_t argsSize,
                                 rtSmDesc_t *smDesc, rtStream_t stream);
RTS_API rtError_t rtGetC2cCtrlAddr(uint64_t *addr, uint32_t *len);

#ifdef __cplusplus
}
#endif
#endif /* PYACLNN_COMPAT_H */
