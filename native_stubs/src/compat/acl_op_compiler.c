/*
 * libacl_op_compiler.so: CANN's single-operator compiler. torch_npu links it and looks functions up
 * on its handle with dlsym, including the *SysParamOpt calls that live in libascendcl -- which is
 * why this library depends on our libascendcl (dlsym on a handle searches its dependencies too).
 *
 *   aclSetCompileopt          stores the option value (A2 SoCs call it during init); the emulated
 *                             operators are not compiled, so the values change nothing
 *   aclopCompileAndExecute(V2) ACL_ERROR_RT_FEATURE_NOT_SUPPORT: no aclop path on the emulator
 *   aclGenGraphAndDumpForOp, aclCreateGraphDumpOpt, aclDestroyGraphDumpOpt
 *                             the same (graph dumps of aclop operators); the create returns NULL, and
 *                             destroying NULL does nothing
 *
 * aclGetCompileoptSize / aclGetCompileopt are deliberately absent: torch_npu treats a missing
 * function as "no value", whereas a present one must report the sizes of CANN's default values.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "compat.h"

#define ACLOP "the aclop compile-and-run path; the emulator runs aclnn operators only"

static pthread_mutex_t opts_mu = PTHREAD_MUTEX_INITIALIZER;
static char *compile_opts[PYACLNN_COMPAT_COMPILE_OPT_COUNT];

ACL_FUNC_VISIBILITY aclError aclSetCompileopt(aclCompileOpt opt, const char *value) {
    static const char func[] = "aclSetCompileopt";
    if ((int)opt < 0 || (int)opt >= PYACLNN_COMPAT_COMPILE_OPT_COUNT) {
        pyaclnn_stub_report(ACL_ERROR_INVALID_PARAM, func,
                            "opt %d is not valid: ACL_PRECISION_MODE (0) .. ACL_OP_DEBUG_OPTION (16)", (int)opt);
        return ACL_ERROR_INVALID_PARAM;
    }
    if (!value) {
        pyaclnn_stub_report(ACL_ERROR_INVALID_PARAM, func, "value is NULL");
        return ACL_ERROR_INVALID_PARAM;
    }
    char *copy = strdup(value);
    if (!copy) {
        pyaclnn_stub_report(ACL_ERROR_BAD_ALLOC, func, "out of host memory");
        return ACL_ERROR_BAD_ALLOC;
    }
    pthread_mutex_lock(&opts_mu);
    free(compile_opts[opt]);
    compile_opts[opt] = copy;
    pthread_mutex_unlock(&opts_mu);
    pyaclnn_stub_compat_trace(func, "opt %d = \"%s\" stored (emulated operators are not compiled)",
                              (int)opt, value);
    return ACL_SUCCESS;
}

ACL_FUNC_VISIBILITY aclError aclopCompileAndExecute(const char *opType,
    int numInputs, const aclTensorDesc *const inputDesc[], const aclDataBuffer *const inputs[],
    int numOutputs, const aclTensorDesc *const outputDesc[], aclDataBuffer *const outputs[],
    const aclopAttr *attr, aclopEngineType engineType, aclopCompileType compileFlag,
    const char *opPath, aclrtStream stream) {
    return pyaclnn_stub_compat_unsupported(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "aclopCompileAndExecute", ACLOP);
}

ACL_FUNC_VISIBILITY aclError aclopCompileAndExecuteV2(const char *opType,
    int numInputs, aclTensorDesc *inputDesc[], aclDataBuffer *inputs[],
    int numOutputs, aclTensorDesc *outputDesc[], aclDataBuffer *outputs[],
    aclopAttr *attr, aclopEngineType engineType, aclopCompileType compileFlag,
    const char *opPath, aclrtStream stream) {
    return pyaclnn_stub_compat_unsupported(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "aclopCompileAndExecuteV2", ACLOP);
}

ACL_FUNC_VISIBILITY aclError aclGenGraphAndDumpForOp(const char *opType,
    int numInputs, const aclTensorDesc *const inputDesc[], const aclDataBuffer *const inputs[],
    int numOutputs, const aclTensorDesc *const outputDesc[], aclDataBuffer *const outputs[],
    const aclopAttr *attr, aclopEngineType engineType,
    const char *graphDumpPath, const aclGraphDumpOption *graphDumpOpt) {
    return pyaclnn_stub_compat_unsupported(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "aclGenGraphAndDumpForOp", ACLOP);
}

ACL_FUNC_VISIBILITY aclGraphDumpOption *aclCreateGraphDumpOpt() {
    pyaclnn_stub_compat_unsupported(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "aclCreateGraphDumpOpt", ACLOP);
    return NULL;
}

ACL_FUNC_VISIBILITY aclError aclDestroyGraphDumpOpt(const aclGraphDumpOption *graphDumpOpt) {
    if (!graphDumpOpt) return ACL_SUCCESS;   /* nothing was created: nothing to destroy */
    return pyaclnn_stub_compat_unsupported(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "aclDestroyGraphDumpOpt", ACLOP);
}
