/*
 * libacl_op_compiler.so: CANN's single-operator compiler. torch_npu links it and looks functions up
 * on its handle with dlsym, including the *SysParamOpt calls that live in libascendcl -- which is
 * why this library depends on our libascendcl (dlsym on a handle searches its dependencies too).
 *
 *   aclSetCompileopt          stores the option value (A2 SoCs call it during init); the emulated
 *                             operators are not compiled, so the values change nothing
 *   aclopCompileAndExecute(V2) the operators of ACLOP_OPS below (src/compat/aclop/), queued on the stream like any task, on the
 *                             objects of src/compat/ascendcl/aclop_objects.c; any other opType:
 *                             ACL_ERROR_RT_FEATURE_NOT_SUPPORT (the emulator runs aclnn operators)
 *   aclGenGraphAndDumpForOp, aclCreateGraphDumpOpt, aclDestroyGraphDumpOpt
 *                             the same (graph dumps of aclop operators); the create returns NULL, and
 *                             destroying NULL does nothing
 *
 * aclGetCompileoptSize / aclGetCompileopt are deliberately absent: torch_npu treats a missing
 * function as "no value", whereas a present one must report the sizes of CANN's default values.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compat.h"
#include "aclop/aclop_ops.h"

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

/* ---- aclopCompileAndExecute(V2): the emulated aclop operators --------------------------------------- */

/* Bytes of a description's shape (-1 when a dim is unknown or the dtype has no size). */
static int64_t desc_bytes(const pyaclnn_stub_aclop_desc *d) {
    size_t item = aclDataTypeSize(d->dtype);
    if (item == 0) return -1;
    int64_t n = 1;
    for (int i = 0; i < d->ndim; i++) {
        if (d->dims[i] < 0) return -1;
        if (d->dims[i] != 0 && n > INT64_MAX / d->dims[i]) return -1;
        n *= d->dims[i];
    }
    return n > INT64_MAX / (int64_t)item ? -1 : n * (int64_t)item;
}

/* Identity (torch_npu's copy to a base format, e.g. npu_format_cast on Atlas A2 without internal formats):
 * y = x, same dtype and element count, queued as a device-to-device copy (host to device for a host input). */
static aclError run_identity(const aclop_call *c) {
    const pyaclnn_stub_aclop_desc *x = &c->in[0], *y = &c->out[0];
    int64_t bytes = desc_bytes(x);
    if (x->dtype != y->dtype || bytes < 0 || bytes != desc_bytes(y)) {
        pyaclnn_stub_report(ACL_ERROR_INVALID_PARAM, c->func, "Identity: x and y must have one dtype and element "
                            "count with known dims (x: dtype %d, %lld bytes; y: dtype %d, %lld bytes)", (int)x->dtype,
                            (long long)bytes, (int)y->dtype, (long long)desc_bytes(y));
        return ACL_ERROR_INVALID_PARAM;
    }
    if ((size_t)bytes > c->in_size[0] || (size_t)bytes > c->out_size[0]) {
        pyaclnn_stub_report(ACL_ERROR_INVALID_PARAM, c->func, "Identity: %lld bytes do not fit the data buffers "
                            "(x: %zu bytes, y: %zu bytes)", (long long)bytes, c->in_size[0], c->out_size[0]);
        return ACL_ERROR_INVALID_PARAM;
    }
    if (bytes == 0 || c->in_data[0] == c->out_data[0]) return ACL_SUCCESS;
    aclrtMemcpyKind kind = x->placement == ACL_MEMTYPE_DEVICE ? ACL_MEMCPY_DEVICE_TO_DEVICE : ACL_MEMCPY_HOST_TO_DEVICE;
    return aclrtMemcpyAsync(c->out_data[0], c->out_size[0], c->in_data[0], (size_t)bytes, kind, c->stream);
}

static const struct {
    const char *type;
    int inputs, outputs;
    aclError (*run)(const aclop_call *);
} ACLOP_OPS[] = {
    {"Identity", 1, 1, run_identity},
    {"DropOutGenMaskV3", 2, 1, aclop_drop_out_gen_mask_v3},   /* aclop/dropout_v3.c */
    {"DropOutDoMaskV3", 3, 1, aclop_drop_out_do_mask_v3},
    {"Quantize", 3, 1, aclop_quantize},                        /* aclop/quantize.c */
};

static aclError compile_and_execute(const char *func, const char *opType, int numInputs,
                                    const aclTensorDesc *const inputDesc[], const aclDataBuffer *const inputs[],
                                    int numOutputs, const aclTensorDesc *const outputDesc[],
                                    const aclDataBuffer *const outputs[], const aclopAttr *attr, aclrtStream stream) {
    const aclError bad = ACL_ERROR_INVALID_PARAM;
    if (opType == NULL) {
        pyaclnn_stub_report(bad, func, "opType is NULL");
        return bad;
    }
    if (numInputs < 0 || numOutputs < 0 || (numInputs > 0 && (inputDesc == NULL || inputs == NULL)) ||
        (numOutputs > 0 && (outputDesc == NULL || outputs == NULL))) {
        pyaclnn_stub_report(bad, func, "%s: numInputs %d / numOutputs %d with their description and buffer arrays "
                            "(an array may be NULL only when its count is 0)", opType, numInputs, numOutputs);
        return bad;
    }
    if (attr != NULL && !pyaclnn_stub_aclop_attr_live(attr)) {
        pyaclnn_stub_report(bad, func, "%s: attr (%p) is not a live aclopAttr", opType, (const void *)attr);
        return bad;
    }
    size_t k = 0, n_ops = sizeof ACLOP_OPS / sizeof ACLOP_OPS[0];
    while (k < n_ops && strcmp(ACLOP_OPS[k].type, opType) != 0) k++;
    if (k == n_ops) {
        pyaclnn_stub_report(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, func, "aclop operator %s is not emulated: the pyaclnn "
                            "CPU emulator runs aclnn operators, and of the aclop path only Identity, DropOutGenMaskV3, "
                            "DropOutDoMaskV3 and Quantize", opType);
        pyaclnn_stub_compat_trace(func, "%s not emulated, returned %d", opType, ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
        return ACL_ERROR_RT_FEATURE_NOT_SUPPORT;
    }
    if (numInputs != ACLOP_OPS[k].inputs || numOutputs != ACLOP_OPS[k].outputs) {
        pyaclnn_stub_report(bad, func, "%s takes %d input(s) and %d output(s), not %d and %d", opType,
                            ACLOP_OPS[k].inputs, ACLOP_OPS[k].outputs, numInputs, numOutputs);
        return bad;
    }
    aclop_call c = {.func = func, .attr = attr, .stream = stream};
    for (int i = 0; i < numInputs + numOutputs; i++) {
        int is_in = i < numInputs, j = is_in ? i : i - numInputs;
        const void *d = is_in ? (const void *)inputDesc[j] : (const void *)outputDesc[j];
        const void *b = is_in ? (const void *)inputs[j] : (const void *)outputs[j];
        if (pyaclnn_stub_aclop_desc_get(d, is_in ? &c.in[j] : &c.out[j]) != 0 ||
            pyaclnn_stub_aclop_buffer_get(b, is_in ? &c.in_data[j] : &c.out_data[j],
                                          is_in ? &c.in_size[j] : &c.out_size[j]) != 0) {
            pyaclnn_stub_report(bad, func, "%s: %s %d: the description (%p) or the data buffer (%p) is not live",
                                opType, is_in ? "input" : "output", j, d, b);
            return bad;
        }
    }
    pyaclnn_stub_compat_trace(func, "%s", opType);
    return ACLOP_OPS[k].run(&c);
}

ACL_FUNC_VISIBILITY aclError aclopCompileAndExecute(const char *opType,
    int numInputs, const aclTensorDesc *const inputDesc[], const aclDataBuffer *const inputs[],
    int numOutputs, const aclTensorDesc *const outputDesc[], aclDataBuffer *const outputs[],
    const aclopAttr *attr, aclopEngineType engineType, aclopCompileType compileFlag,
    const char *opPath, aclrtStream stream) {
    return compile_and_execute("aclopCompileAndExecute", opType, numInputs, inputDesc, inputs, numOutputs,
                               outputDesc, (const aclDataBuffer *const *)outputs, attr, stream);
}

ACL_FUNC_VISIBILITY aclError aclopCompileAndExecuteV2(const char *opType,
    int numInputs, aclTensorDesc *inputDesc[], aclDataBuffer *inputs[],
    int numOutputs, aclTensorDesc *outputDesc[], aclDataBuffer *outputs[],
    aclopAttr *attr, aclopEngineType engineType, aclopCompileType compileFlag,
    const char *opPath, aclrtStream stream) {
    return compile_and_execute("aclopCompileAndExecuteV2", opType, numInputs,
                               (const aclTensorDesc *const *)inputDesc, (const aclDataBuffer *const *)inputs,
                               numOutputs, (const aclTensorDesc *const *)outputDesc,
                               (const aclDataBuffer *const *)outputs, attr, stream);
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
