/* The registry of live aclnn objects, handle validation, live counts and library init. */
#include "nnopbase_internal.h"

stub_registry nn_handles = STUB_REGISTRY_INIT;
pthread_mutex_t nn_ownership_lock = PTHREAD_MUTEX_INITIALIZER;

const char *nn_kind_name(int kind) {
    switch (kind) {
    case NN_KIND_TENSOR: return "aclTensor";
    case NN_KIND_SCALAR: return "aclScalar";
    case NN_KIND_INT_ARRAY: return "aclIntArray";
    case NN_KIND_FLOAT_ARRAY: return "aclFloatArray";
    case NN_KIND_BOOL_ARRAY: return "aclBoolArray";
    case NN_KIND_TENSOR_LIST: return "aclTensorList";
    case NN_KIND_SCALAR_LIST: return "aclScalarList";
    case NN_KIND_EXECUTOR: return "aclOpExecutor";
    default: return "unknown object";
    }
}

aclnnStatus nn_check_handle(const char *api, const char *param, const void *p, int kind, aclnnStatus null_code) {
    if (p == NULL) {
        pyaclnn_stub_report(null_code, api, "%s is NULL", param);
        return null_code;
    }
    int actual = stub_registry_kind(&nn_handles, p);
    if (actual == kind) return ACLNN_SUCCESS;
    if (actual == 0)
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api,
                            "%s (%p) is not a live %s: it was already destroyed, was never created by "
                            "this library, or is some other pointer", param, p, nn_kind_name(kind));
    else
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "%s (%p) is an %s, not an %s", param, p,
                            nn_kind_name(actual), nn_kind_name(kind));
    return ACLNN_ERR_PARAM_INVALID;
}

/* fork(): the library's locks are taken around it (in their lock order), so that a child never
 * inherits one held by a thread that does not exist there; host-side objects stay usable in it. */
static void lock_all(void) {
    pthread_mutex_lock(&executor_mu);
    pthread_mutex_lock(&nn_ownership_lock);
    for (int i = 0; i < NN_TENSOR_LOCKS; i++) pthread_mutex_lock(&nn_tensor_locks[i]);
    pthread_mutex_lock(&nn_handles.lock);
}

static void unlock_all(void) {
    pthread_mutex_unlock(&nn_handles.lock);
    for (int i = NN_TENSOR_LOCKS; i-- > 0;) pthread_mutex_unlock(&nn_tensor_locks[i]);
    pthread_mutex_unlock(&nn_ownership_lock);
    pthread_mutex_unlock(&executor_mu);
}

__attribute__((constructor)) static void register_fork_handlers(void) { pthread_atfork(lock_all, unlock_all, unlock_all); }

void pyaclnn_stub_nnopbase_counts(pyaclnn_stub_counts *out) {
    if (out == NULL) return;
    /* Only this library's fields: libascendcl fills the rest of the same struct. */
    out->tensors = (int64_t)stub_registry_count(&nn_handles, NN_KIND_TENSOR);
    out->scalars = (int64_t)stub_registry_count(&nn_handles, NN_KIND_SCALAR);
    out->arrays = (int64_t)(stub_registry_count(&nn_handles, NN_KIND_INT_ARRAY) +
                            stub_registry_count(&nn_handles, NN_KIND_FLOAT_ARRAY) +
                            stub_registry_count(&nn_handles, NN_KIND_BOOL_ARRAY));
    out->tensor_lists = (int64_t)stub_registry_count(&nn_handles, NN_KIND_TENSOR_LIST);
    out->scalar_lists = (int64_t)stub_registry_count(&nn_handles, NN_KIND_SCALAR_LIST);
    out->executors = (int64_t)stub_registry_count(&nn_handles, NN_KIND_EXECUTOR);
}

/* aclnn-side initialisation: the emulator has no operator packages to load, so both calls only
 * succeed (the documented contract is that they may be mixed freely with aclInit/aclFinalize). */
aclnnStatus aclnnInit(const char *configPath) {
    (void)configPath;
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnFinalize(void) { return ACLNN_SUCCESS; }

/* The vendor hands the tensors to its dump service; the emulator has none. It checks the same
 * arguments and then does nothing. */
aclnnStatus aclDumpOpTensors(const char *opType, const char *opName, aclTensor **tensors, size_t inputTensorNum,
                             size_t outputTensorNum, aclrtStream stream) {
    static const char API[] = "aclDumpOpTensors";
    const char *null_param = opType == NULL ? "opType" : opName == NULL ? "opName"
                           : tensors == NULL ? "tensors" : stream == NULL ? "stream" : NULL;
    if (null_param) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, API, "%s is NULL", null_param);
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    (void)inputTensorNum;
    (void)outputTensorNum;
    return ACLNN_SUCCESS;
}
