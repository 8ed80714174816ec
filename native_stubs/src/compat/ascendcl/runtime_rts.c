/*
 * rt* entry points of CANN's libruntime that torch_npu's inductor backend binds (declared in
 * torch_npu/csrc/inductor/mlir/hacl_rt.h). Folded into our libascendcl, which torch_npu loads
 * anyway (in CANN, libascendcl depends on libruntime, so the symbols are in the same search
 * scope). They return 0x17, RT_ERROR_FEATURE_NOT_SUPPROT of that header's rtError_t.
 */
#include "../compat.h"

#define RT_REFUSE(func) \
    pyaclnn_stub_compat_unsupported(PYACLNN_COMPAT_RT_ERROR_FEATURE_NOT_SUPPORT, func, \
                                    "device kernel binaries (torch_npu inductor); the emulator has no device code")

RTS_API rtError_t rtDevBinaryRegister(const rtDevBinary_t *bin, void **handle) {
    return RT_REFUSE("rtDevBinaryRegister");
}
RTS_API rtError_t rtFunctionRegister(void *binHandle, const void *stubFunc, const char *stubName,
                                     const void *devFunc, uint32_t funcMode) {
    return RT_REFUSE("rtFunctionRegister");
}
RTS_API rtError_t rtKernelLaunch(const void *stubFunc, uint32_t blockDim, void *args, uint32_t argsSize,
                                 rtSmDesc_t *smDesc, rtStream_t stream) {
    return RT_REFUSE("rtKernelLaunch");
}
RTS_API rtError_t rtGetC2cCtrlAddr(uint64_t *addr, uint32_t *len) {
    return RT_REFUSE("rtGetC2cCtrlAddr");
}
