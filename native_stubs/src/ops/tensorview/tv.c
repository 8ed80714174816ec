#include "tensorview/tv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tv_iter_init(tv_iter *it, const pyaclnn_stub_tensor *t) {
    it->t = t;
    memset(it->idx, 0, sizeof it->idx);
    it->off = t->offset;
}

void tv_iter_next(tv_iter *it) {
    const pyaclnn_stub_tensor *t = it->t;
    for (int64_t d = t->ndim - 1; d >= 0; d--) {
        it->off += t->strides[d];
        if (++it->idx[d] < t->shape[d]) return;
        it->off -= t->strides[d] * t->shape[d];
        it->idx[d] = 0;
    }
}

int64_t tv_offset(const pyaclnn_stub_tensor *t, int64_t lin) {
    int64_t off = t->offset;
    for (int64_t d = t->ndim - 1; d >= 0; d--) {
        off += (lin % t->shape[d]) * t->strides[d];
        lin /= t->shape[d];
    }
    return off;
}

unsigned char *tv_gather_bytes(const pyaclnn_stub_tensor *t) {
    int64_t n = pyaclnn_stub_numel(t);
    size_t isz = ew_itemsize(t->dtype);
    unsigned char *buf = malloc((size_t)n * isz + 1);
    if (buf == NULL) return NULL;
    tv_iter it;
    tv_iter_init(&it, t);
    for (int64_t i = 0; i < n; i++, tv_iter_next(&it)) memcpy(buf + i * (int64_t)isz, tv_at(t, it.off), isz);
    return buf;
}

void tv_scatter_bytes(const pyaclnn_stub_tensor *t, const unsigned char *src) {
    int64_t n = pyaclnn_stub_numel(t);
    size_t isz = ew_itemsize(t->dtype);
    tv_iter it;
    tv_iter_init(&it, t);
    for (int64_t i = 0; i < n; i++, tv_iter_next(&it)) memcpy(tv_at(t, it.off), src + i * (int64_t)isz, isz);
}

static double as_double(ew_value v, aclDataType dt) {
    return ew_repr_of(dt) == EW_REPR_F ? v.f : (double)v.i;
}

double *tv_load_double(const pyaclnn_stub_tensor *t) {
    int64_t n = pyaclnn_stub_numel(t);
    double *buf = malloc((size_t)n * sizeof(double) + 1);
    if (buf == NULL) return NULL;
    tv_iter it;
    tv_iter_init(&it, t);
    for (int64_t i = 0; i < n; i++, tv_iter_next(&it)) buf[i] = as_double(ew_load(tv_at(t, it.off), t->dtype), t->dtype);
    return buf;
}

float *tv_load_float(const pyaclnn_stub_tensor *t) {
    int64_t n = pyaclnn_stub_numel(t);
    float *buf = malloc((size_t)n * sizeof(float) + 1);
    if (buf == NULL) return NULL;
    tv_iter it;
    tv_iter_init(&it, t);
    if (t->dtype == ACL_FLOAT) {
        for (int64_t i = 0; i < n; i++, tv_iter_next(&it)) memcpy(&buf[i], tv_at(t, it.off), sizeof(float));
        return buf;
    }
    for (int64_t i = 0; i < n; i++, tv_iter_next(&it))
        buf[i] = (float)ew_cast(ew_load(tv_at(t, it.off), t->dtype), t->dtype, ACL_FLOAT).f;
    return buf;
}

void tv_store_double(const pyaclnn_stub_tensor *t, const double *src) {
    int64_t n = pyaclnn_stub_numel(t);
    tv_iter it;
    tv_iter_init(&it, t);
    for (int64_t i = 0; i < n; i++, tv_iter_next(&it))
        ew_store(tv_at(t, it.off), t->dtype, ew_cast((ew_value){src[i], 0}, ACL_DOUBLE, t->dtype));
}

void tv_store_float(const pyaclnn_stub_tensor *t, const float *src) {
    int64_t n = pyaclnn_stub_numel(t);
    tv_iter it;
    tv_iter_init(&it, t);
    if (t->dtype == ACL_FLOAT) {
        for (int64_t i = 0; i < n; i++, tv_iter_next(&it)) memcpy(tv_at(t, it.off), &src[i], sizeof(float));
        return;
    }
    for (int64_t i = 0; i < n; i++, tv_iter_next(&it))
        ew_store(tv_at(t, it.off), t->dtype, ew_cast((ew_value){src[i], 0}, ACL_FLOAT, t->dtype));
}

static int view_ok(const pyaclnn_stub_launch *l, const pyaclnn_stub_tensor *t, const char *kind, size_t i) {
    if (!t->present || pyaclnn_stub_numel(t) == 0) return 1;
    if (op_view_in_device_memory(t, (int)(8 * ew_itemsize(t->dtype)))) return 1;
    pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "%s: %s %zu view (data %p, offset %lld) is not in device "
                           "memory", l->op_name, kind, i, t->data, (long long)t->offset);
    return 0;
}

int tv_launch_views_ok(const pyaclnn_stub_launch *launch) {
    for (size_t i = 0; i < launch->n_inputs; i++)
        if (!view_ok(launch, &launch->inputs[i], "input", i)) return 0;
    for (size_t i = 0; i < launch->n_outputs; i++)
        if (!view_ok(launch, &launch->outputs[i], "output", i)) return 0;
    return 1;
}

void tv_fail_oom(const pyaclnn_stub_launch *launch) {
    pyaclnn_stub_task_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of host memory", launch->op_name);
}

aclnnStatus tv_make_executor(const char *api, const char *op_name, pyaclnn_stub_kernel_fn kernel, const void *params,
                             size_t params_size, const aclTensor *const *inputs, size_t n_inputs,
                             const aclTensor *const *outputs, size_t n_outputs, uint64_t *workspaceSize,
                             aclOpExecutor **executor) {
    aclOpExecutor *e = pyaclnn_stub_executor_new(op_name, kernel, params, params_size, inputs, n_inputs, outputs,
                                                 n_outputs, 0);
    if (e == NULL) {
        pyaclnn_stub_report(ACLNN_ERR_INNER_CREATE_EXECUTOR, api, "could not create the executor (out of memory)");
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    }
    *workspaceSize = 0;
    *executor = e;
    return ACLNN_SUCCESS;
}

aclnnStatus tv_check_not_null(const char *api, const char *const *names, const void *const *ptrs, size_t n,
                              const uint64_t *workspaceSize, aclOpExecutor *const *executor) {
    for (size_t i = 0; i < n; i++) {
        if (ptrs[i] == NULL) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, api, "%s is NULL", names[i]);
            return ACLNN_ERR_PARAM_NULLPTR;
        }
    }
    if (workspaceSize == NULL || executor == NULL) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, api, "%s is NULL",
                            workspaceSize == NULL ? "workspaceSize" : "executor");
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    return ACLNN_SUCCESS;
}

aclnnStatus tv_tensor_list_arg(const char *api, const char *name, const aclTensorList *l, size_t cap,
                               const aclTensor **items, pyaclnn_stub_tensor *snaps, size_t *n) {
    if (l == NULL) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, api, "%s is NULL", name);
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    const aclTensor *const *its;
    uint64_t size;
    if (pyaclnn_stub_tensor_list_get(l, &its, &size) != ACLNN_SUCCESS) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "%s (%p) is not a live aclTensorList", name, (const void *)l);
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (size > cap) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "%s has %llu tensors; the emulator takes at most %zu", name,
                            (unsigned long long)size, cap);
        return ACLNN_ERR_PARAM_INVALID;
    }
    for (uint64_t i = 0; i < size; i++) {
        char nm[64];
        snprintf(nm, sizeof nm, "%s[%llu]", name, (unsigned long long)i);
        aclnnStatus rc = op_tensor_arg(api, nm, its[i], &snaps[i]);
        if (rc) return rc;
        items[i] = its[i];
    }
    *n = (size_t)size;
    return ACLNN_SUCCESS;
}

aclnnStatus tv_int_array_arg(const char *api, const char *name, const aclIntArray *a, int allow_null,
                             const int64_t **values, uint64_t *n) {
    if (a == NULL && !allow_null) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, api, "%s is NULL", name);
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    if (pyaclnn_stub_int_array_get(a, values, n) != ACLNN_SUCCESS) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "%s (%p) is not a live aclIntArray", name, (const void *)a);
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

aclnnStatus tv_wrap_dim(const char *api, const char *name, int64_t dim, int64_t rank, int64_t *wrapped) {
    int64_t r = rank > 0 ? rank : 1;
    if (dim < -r || dim >= r) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "%s must be within range [%lld, %lld], but got %lld.",
                            name, (long long)-r, (long long)(r - 1), (long long)dim);
        return ACLNN_ERR_PARAM_INVALID;
    }
    *wrapped = dim < 0 ? dim + r : dim;
    return ACLNN_SUCCESS;
}

const char *tv_shape_text(const int64_t *shape, int64_t ndim, char *buf, size_t size) {
    size_t used = (size_t)snprintf(buf, size, "[");
    for (int64_t d = 0; d < ndim && used < size; d++)
        used += (size_t)snprintf(buf + used, size - used, "%s%lld", d ? ", " : "", (long long)shape[d]);
    if (used < size) snprintf(buf + used, size - used, "]");
    return buf;
}

aclnnStatus tv_check_same_dtype(const char *api, const char *na, aclDataType a, const char *nb, aclDataType b) {
    if (a == b) return ACLNN_SUCCESS;
    char ba[24], bb[24];
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "%s dtype %s should be the same as %s dtype %s.", na,
                        op_dtype_name(a, ba), nb, op_dtype_name(b, bb));
    return ACLNN_ERR_PARAM_INVALID;
}
