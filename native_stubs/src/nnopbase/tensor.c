/*
 * aclTensor: creation, re-description, getters, raw address, destruction, and the validated
 * snapshot the operators work from.
 *
 * The getters that return arrays (aclGetViewShape, aclGetViewStrides, aclGetStorageShape) allocate
 * them with malloc(). CANN allocates with new[] and documents delete[]; for int64_t arrays the two
 * are interchangeable in practice, and our own callers (pyaclnn, tests) release them with free().
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnopbase_internal.h"

pthread_mutex_t nn_tensor_locks[NN_TENSOR_LOCKS] = {[0 ... NN_TENSOR_LOCKS - 1] = PTHREAD_MUTEX_INITIALIZER};

pthread_mutex_t *nn_tensor_lock(const void *tensor) {
    uintptr_t h = (uintptr_t)tensor >> 4;   /* malloc'ed: the low bits carry nothing */
    return &nn_tensor_locks[(h ^ (h >> 6) ^ (h >> 12)) % NN_TENSOR_LOCKS];
}

void nn_tensor_set_data(aclTensor *tensor, void *addr) {
    pthread_mutex_t *mu = nn_tensor_lock(tensor);
    pthread_mutex_lock(mu);
    tensor->desc.data = addr;
    pthread_mutex_unlock(mu);
}

/* A consistent copy of the tensor's description (see nnopbase_internal.h). */
static void read_desc(const aclTensor *t, pyaclnn_stub_tensor *out) {
    pthread_mutex_t *mu = nn_tensor_lock(t);
    pthread_mutex_lock(mu);
    *out = t->desc;
    pthread_mutex_unlock(mu);
}

/* Fills d from aclCreateTensor-style arguments after checking them. On failure reports under
 * `api` and returns the status; d is then unspecified (callers describe into a scratch copy). */
static aclnnStatus describe(const char *api, pyaclnn_stub_tensor *d, const int64_t *viewDims, uint64_t viewDimsNum,
                            aclDataType dataType, const int64_t *stride, int64_t offset, aclFormat format,
                            const int64_t *storageDims, uint64_t storageDimsNum, void *data) {
    char name[24];
    if (viewDims == NULL && viewDimsNum > 0) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, api, "viewDims is NULL but viewDimsNum is %llu",
                            (unsigned long long)viewDimsNum);
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    if (storageDims == NULL && storageDimsNum > 0) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, api, "storageDims is NULL but storageDimsNum is %llu",
                            (unsigned long long)storageDimsNum);
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    if (viewDimsNum > PYACLNN_STUB_MAX_DIMS || storageDimsNum > PYACLNN_STUB_MAX_DIMS) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api,
                            "rank too large: viewDimsNum %llu, storageDimsNum %llu (the emulator supports at "
                            "most %d dimensions)", (unsigned long long)viewDimsNum,
                            (unsigned long long)storageDimsNum, PYACLNN_STUB_MAX_DIMS);
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (nn_scalar_bytes(dataType) == 0) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "dataType %s is not a tensor element type",
                            nn_dtype_name(dataType, name));
        return ACLNN_ERR_PARAM_INVALID;
    }
    int64_t numel = 1;
    for (uint64_t k = 0; k < viewDimsNum; k++) {
        if (viewDims[k] < 0) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "viewDims[%llu] = %lld is negative",
                                (unsigned long long)k, (long long)viewDims[k]);
            return ACLNN_ERR_PARAM_INVALID;
        }
        if (viewDims[k] != 0 && numel > INT64_MAX / viewDims[k]) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "the element count of viewDims overflows int64");
            return ACLNN_ERR_PARAM_INVALID;
        }
        numel *= viewDims[k];
    }
    /* The byte size must fit int64 too (CANN sizes tensors in int64; a wrapped size would describe
     * a small tensor). Sub-byte types count one byte per element here: an upper bound. */
    int64_t elem_bytes = (int64_t)nn_scalar_bytes(dataType);
    if (numel > INT64_MAX / elem_bytes) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api,
                            "the byte size of viewDims overflows int64: %lld elements of %s, %lld bytes each "
                            "(at most %lld elements)", (long long)numel, nn_dtype_name(dataType, name),
                            (long long)elem_bytes, (long long)(INT64_MAX / elem_bytes));
        return ACLNN_ERR_PARAM_INVALID;
    }
    int64_t storage_numel = 1;
    for (uint64_t k = 0; k < storageDimsNum; k++) {
        if (storageDims[k] < 0) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "storageDims[%llu] = %lld is negative",
                                (unsigned long long)k, (long long)storageDims[k]);
            return ACLNN_ERR_PARAM_INVALID;
        }
        if (__builtin_mul_overflow(storage_numel, storageDims[k], &storage_numel) ||
            storage_numel > INT64_MAX / elem_bytes) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api,
                                "the element count or byte size of storageDims overflows int64 (%s, %lld "
                                "bytes each)", nn_dtype_name(dataType, name), (long long)elem_bytes);
            return ACLNN_ERR_PARAM_INVALID;
        }
    }

    if (stride == NULL) {   /* the row-major strides computed below must fit in int64 too */
        int64_t step = 1;
        for (uint64_t k = viewDimsNum; k-- > 1;) {
            if (__builtin_mul_overflow(step, viewDims[k] > 1 ? viewDims[k] : 1, &step)) {
                pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api,
                                    "the row-major strides of viewDims overflow int64 (stride is NULL)");
                return ACLNN_ERR_PARAM_INVALID;
            }
        }
    }

    memset(d, 0, sizeof *d);
    d->present = 1;
    d->dtype = dataType;
    d->format = format;   /* stored and echoed; operators decide which formats they accept */
    d->ndim = (int64_t)viewDimsNum;
    d->offset = offset;
    d->storage_ndim = (int64_t)storageDimsNum;
    d->data = data;
    for (uint64_t k = 0; k < viewDimsNum; k++) d->shape[k] = viewDims[k];
    for (uint64_t k = 0; k < storageDimsNum; k++) d->storage_shape[k] = storageDims[k];
    if (stride) {
        for (uint64_t k = 0; k < viewDimsNum; k++) d->strides[k] = stride[k];
    } else {
        /* Row-major; a zero-sized dimension counts as 1 (as torch does), the view is empty anyway. */
        int64_t step = 1;
        for (uint64_t k = viewDimsNum; k-- > 0;) {
            d->strides[k] = step;
            if (k > 0) step *= viewDims[k] > 1 ? viewDims[k] : 1;   /* checked above */
        }
    }
    return ACLNN_SUCCESS;
}

aclTensor *aclCreateTensor(const int64_t *viewDims, uint64_t viewDimsNum, aclDataType dataType,
                           const int64_t *stride, int64_t offset, aclFormat format, const int64_t *storageDims,
                           uint64_t storageDimsNum, void *tensorData) {
    static const char API[] = "aclCreateTensor";
    aclTensor *t = malloc(sizeof *t);
    if (t == NULL) {
        pyaclnn_stub_report(ACLNN_ERR_INNER_NULLPTR, API, "out of host memory");
        return NULL;
    }
    if (describe(API, &t->desc, viewDims, viewDimsNum, dataType, stride, offset, format, storageDims,
                 storageDimsNum, tensorData) != ACLNN_SUCCESS) {
        free(t);
        return NULL;
    }
    t->owner = NULL;
    if (stub_registry_add(&nn_handles, t, NN_KIND_TENSOR) != 0) {
        pyaclnn_stub_report(ACLNN_ERR_INNER_NULLPTR, API, "out of host memory");
        free(t);
        return NULL;
    }
    return t;
}

aclnnStatus aclInitTensor(aclTensor *tensor, const int64_t *viewDims, uint64_t viewDimsNum, aclDataType dataType,
                          const int64_t *stride, int64_t offset, aclFormat format, const int64_t *storageDims,
                          uint64_t storageDimsNum, void *tensorDataAddr) {
    static const char API[] = "aclInitTensor";
    aclnnStatus rc = nn_check_handle(API, "tensor", tensor, NN_KIND_TENSOR, ACLNN_ERR_PARAM_NULLPTR);
    if (rc != ACLNN_SUCCESS) return rc;
    pyaclnn_stub_tensor fresh;   /* described aside so that a rejected call leaves the tensor as it was */
    rc = describe(API, &fresh, viewDims, viewDimsNum, dataType, stride, offset, format, storageDims, storageDimsNum,
                  tensorDataAddr);
    if (rc == ACLNN_SUCCESS) {   /* replaced as a whole: a concurrent snapshot sees the old or the new one */
        pthread_mutex_t *mu = nn_tensor_lock(tensor);
        pthread_mutex_lock(mu);
        tensor->desc = fresh;
        pthread_mutex_unlock(mu);
    }
    return rc;
}

aclnnStatus aclDestroyTensor(const aclTensor *tensor) {
    static const char API[] = "aclDestroyTensor";
    if (tensor == NULL) return ACLNN_SUCCESS;
    pthread_mutex_lock(&nn_ownership_lock);
    aclnnStatus rc = nn_check_handle(API, "tensor", tensor, NN_KIND_TENSOR, ACLNN_SUCCESS);
    if (rc == ACLNN_SUCCESS && tensor->owner != NULL) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API,
                            "tensor %p belongs to aclTensorList %p, which destroys it; destroying it here too "
                            "would be a double free", (const void *)tensor, (const void *)tensor->owner);
        rc = ACLNN_ERR_PARAM_INVALID;
    }
    if (rc == ACLNN_SUCCESS) stub_registry_remove(&nn_handles, tensor, NN_KIND_TENSOR);
    pthread_mutex_unlock(&nn_ownership_lock);
    if (rc == ACLNN_SUCCESS) free((void *)tensor);
    return rc;
}

/* ---- getters ------------------------------------------------------------------------------- */

/* Common checks of a getter: the tensor and every out-pointer must be given (161001). */
static aclnnStatus check_getter(const char *api, const aclTensor *tensor, const void *out1, const char *name1,
                                const void *out2, const char *name2) {
    if (tensor != NULL && (out1 == NULL || (name2 != NULL && out2 == NULL))) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, api, "%s is NULL", out1 == NULL ? name1 : name2);
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    return nn_check_handle(api, "tensor", tensor, NN_KIND_TENSOR, ACLNN_ERR_PARAM_NULLPTR);
}

/* Hands out a malloc()ed copy of n int64 values (at least one slot, so 0-d never yields NULL). */
static aclnnStatus copy_dims(const char *api, const int64_t *src, int64_t n, int64_t **out, uint64_t *out_n) {
    int64_t *copy = malloc((size_t)(n > 0 ? n : 1) * sizeof *copy);
    if (copy == NULL) {
        pyaclnn_stub_report(ACLNN_ERR_INNER_NULLPTR, api, "out of host memory");
        return ACLNN_ERR_INNER_NULLPTR;
    }
    if (n > 0) memcpy(copy, src, (size_t)n * sizeof *copy);
    *out = copy;
    *out_n = (uint64_t)n;
    return ACLNN_SUCCESS;
}

aclnnStatus aclGetViewShape(const aclTensor *tensor, int64_t **viewDims, uint64_t *viewDimsNum) {
    static const char API[] = "aclGetViewShape";
    aclnnStatus rc = check_getter(API, tensor, viewDims, "viewDims", viewDimsNum, "viewDimsNum");
    if (rc) return rc;
    pyaclnn_stub_tensor d;
    read_desc(tensor, &d);
    return copy_dims(API, d.shape, d.ndim, viewDims, viewDimsNum);
}

aclnnStatus aclGetViewStrides(const aclTensor *tensor, int64_t **stridesValue, uint64_t *stridesNum) {
    static const char API[] = "aclGetViewStrides";
    aclnnStatus rc = check_getter(API, tensor, stridesValue, "stridesValue", stridesNum, "stridesNum");
    if (rc) return rc;
    pyaclnn_stub_tensor d;
    read_desc(tensor, &d);
    return copy_dims(API, d.strides, d.ndim, stridesValue, stridesNum);
}

aclnnStatus aclGetStorageShape(const aclTensor *tensor, int64_t **storageDims, uint64_t *storageDimsNum) {
    static const char API[] = "aclGetStorageShape";
    aclnnStatus rc = check_getter(API, tensor, storageDims, "storageDims", storageDimsNum, "storageDimsNum");
    if (rc) return rc;
    pyaclnn_stub_tensor d;
    read_desc(tensor, &d);
    return copy_dims(API, d.storage_shape, d.storage_ndim, storageDims, storageDimsNum);
}

aclnnStatus aclGetViewOffset(const aclTensor *tensor, int64_t *offset) {
    aclnnStatus rc = check_getter("aclGetViewOffset", tensor, offset, "offset", NULL, NULL);
    pyaclnn_stub_tensor d;
    if (rc == ACLNN_SUCCESS) read_desc(tensor, &d), *offset = d.offset;
    return rc;
}

aclnnStatus aclGetFormat(const aclTensor *tensor, aclFormat *format) {
    aclnnStatus rc = check_getter("aclGetFormat", tensor, format, "format", NULL, NULL);
    pyaclnn_stub_tensor d;
    if (rc == ACLNN_SUCCESS) read_desc(tensor, &d), *format = d.format;
    return rc;
}

aclnnStatus aclGetDataType(const aclTensor *tensor, aclDataType *dataType) {
    aclnnStatus rc = check_getter("aclGetDataType", tensor, dataType, "dataType", NULL, NULL);
    pyaclnn_stub_tensor d;
    if (rc == ACLNN_SUCCESS) read_desc(tensor, &d), *dataType = d.dtype;
    return rc;
}

aclnnStatus aclGetRawTensorAddr(const aclTensor *tensor, void **addr) {
    aclnnStatus rc = check_getter("aclGetRawTensorAddr", tensor, addr, "addr", NULL, NULL);
    pyaclnn_stub_tensor d;
    if (rc == ACLNN_SUCCESS) read_desc(tensor, &d), *addr = d.data;
    return rc;
}

aclnnStatus aclSetRawTensorAddr(aclTensor *tensor, void *addr) {
    aclnnStatus rc = nn_check_handle("aclSetRawTensorAddr", "tensor", tensor, NN_KIND_TENSOR, ACLNN_ERR_PARAM_NULLPTR);
    if (rc == ACLNN_SUCCESS) nn_tensor_set_data(tensor, addr);
    return rc;
}

/* ---- internal API for the operators -------------------------------------------------------- */

aclnnStatus pyaclnn_stub_tensor_get(const aclTensor *t, pyaclnn_stub_tensor *out) {
    if (t == NULL) {
        out->present = 0;
        return ACLNN_SUCCESS;
    }
    if (!nn_is(t, NN_KIND_TENSOR)) return ACLNN_ERR_PARAM_INVALID;
    read_desc(t, out);   /* never a mix of two descriptions (aclInitTensor, setters in other threads) */
    return ACLNN_SUCCESS;
}

int64_t pyaclnn_stub_numel(const pyaclnn_stub_tensor *t) {
    int64_t n = 1;
    for (int64_t k = 0; k < t->ndim; k++) n *= t->shape[k];
    return n;
}

int pyaclnn_stub_dims_contiguous(const pyaclnn_stub_tensor *t, int64_t from) {
    int64_t expected = 1;
    for (int64_t k = t->ndim; k-- > from;) {
        if (t->shape[k] == 1) continue;   /* the stride of a size-1 dimension is never used */
        if (t->strides[k] != expected) return 0;
        expected *= t->shape[k];
    }
    return 1;
}

int pyaclnn_stub_is_contiguous(const pyaclnn_stub_tensor *t) {
    return pyaclnn_stub_numel(t) == 0 || pyaclnn_stub_dims_contiguous(t, 0);
}
