#include "elementwise/ew_check.h"

#include <stdio.h>
#include <string.h>

aclnnStatus ew_check_not_null(const char *api, const ew_ptr_arg *args, size_t n, const uint64_t *workspaceSize,
                              aclOpExecutor *const *executor) {
    for (size_t i = 0; i < n; i++) {
        if (args[i].ptr == NULL) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, api, "%s is NULL", args[i].name);
            return ACLNN_ERR_PARAM_NULLPTR;
        }
    }
    if (workspaceSize == NULL || executor == NULL) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, api, "%s is NULL", workspaceSize == NULL ? "workspaceSize"
                                                                                         : "executor");
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    return ACLNN_SUCCESS;
}

aclnnStatus ew_scalar_arg(const char *api, const char *name, const aclScalar *s, aclDataType *dtype,
                          ew_value *value) {
    unsigned char bytes[16];
    char b[24];
    if (pyaclnn_stub_scalar_get(s, dtype, bytes) != ACLNN_SUCCESS) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api,
                            "%s (%p) is not a live aclScalar (destroyed, never created, or another kind of object)",
                            name, (const void *)s);
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (!ew_scalar_value(*dtype, bytes, value)) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "%s dtype %s is not supported by the emulator (real, "
                            "integer or bool scalars)", name, op_dtype_name(*dtype, b));
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

const char *ew_dtype_list(const aclDataType *list, size_t n, char *buf, size_t size) {
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && used < size; i++) {
        char b[24];
        int w = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", op_dtype_name(list[i], b));
        if (w < 0) break;
        used += (size_t)w;
    }
    return buf;
}

aclnnStatus ew_check_dtype_in(const char *api, const char *name, aclDataType dtype, const aclDataType *list,
                              size_t n) {
    for (size_t i = 0; i < n; i++)
        if (list[i] == dtype) return ACLNN_SUCCESS;
    char b[24], all[256];
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "%s dtype %s is not supported (supported: %s)", name,
                        op_dtype_name(dtype, b), ew_dtype_list(list, n, all, sizeof all));
    return ACLNN_ERR_PARAM_INVALID;
}

aclnnStatus ew_check_max_dim(const char *api, const char *name, const pyaclnn_stub_tensor *t, int max_dim) {
    if (t->ndim <= max_dim) return ACLNN_SUCCESS;
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "%s has %lld dimensions; at most %d are supported", name,
                        (long long)t->ndim, max_dim);
    return ACLNN_ERR_PARAM_INVALID;
}

static const char *shape_text(const int64_t *shape, int64_t ndim, char *buf, size_t size) {
    size_t used = (size_t)snprintf(buf, size, "[");
    for (int64_t d = 0; d < ndim && used < size; d++)
        used += (size_t)snprintf(buf + used, size - used, "%s%lld", d ? ", " : "", (long long)shape[d]);
    if (used < size) snprintf(buf + used, size - used, "]");
    return buf;
}

aclnnStatus ew_broadcast(const char *api, const char *na, const pyaclnn_stub_tensor *a, const char *nb,
                         const pyaclnn_stub_tensor *b, int64_t shape[PYACLNN_STUB_MAX_DIMS], int64_t *ndim) {
    int64_t n = a->ndim > b->ndim ? a->ndim : b->ndim;
    for (int64_t d = 0; d < n; d++) {
        int64_t da = d - (n - a->ndim), db = d - (n - b->ndim);
        int64_t sa = da >= 0 ? a->shape[da] : 1, sb = db >= 0 ? b->shape[db] : 1;
        if (sa != sb && sa != 1 && sb != 1) {
            char ta[200], tb[200];
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "%s shape %s and %s shape %s can not broadcast", na,
                                shape_text(a->shape, a->ndim, ta, sizeof ta), nb,
                                shape_text(b->shape, b->ndim, tb, sizeof tb));
            return ACLNN_ERR_PARAM_INVALID;
        }
        shape[d] = sa == 1 ? sb : sa;
    }
    *ndim = n;
    return ACLNN_SUCCESS;
}

aclnnStatus ew_check_shape(const char *api, const char *name, const pyaclnn_stub_tensor *t,
                           const int64_t *shape, int64_t ndim) {
    int same = t->ndim == ndim;
    for (int64_t d = 0; same && d < ndim; d++) same = t->shape[d] == shape[d];
    if (same) return ACLNN_SUCCESS;
    char want[200], got[200];
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "Shape of %s should be %s, but current is %s", name,
                        shape_text(shape, ndim, want, sizeof want), shape_text(t->shape, t->ndim, got, sizeof got));
    return ACLNN_ERR_PARAM_INVALID;
}

aclnnStatus ew_make_executor(const char *api, const char *op_name, const ew_plan *plan, int empty,
                             const aclTensor *const *inputs, size_t n_inputs, const aclTensor *output,
                             uint64_t *workspaceSize, aclOpExecutor **executor) {
    aclOpExecutor *e = pyaclnn_stub_executor_new(op_name, empty ? NULL : ew_kernel, plan, sizeof *plan, inputs,
                                                 n_inputs, &output, 1, 0);
    if (e == NULL) {
        pyaclnn_stub_report(ACLNN_ERR_INNER_CREATE_EXECUTOR, api, "could not create the executor (out of memory)");
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    }
    *workspaceSize = 0;
    *executor = e;
    return ACLNN_SUCCESS;
}

int ew_soc_is_950(void) { return pyaclnn_stub_soc_family() == PYACLNN_SOC_950; }
