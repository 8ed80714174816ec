#include "op_common.h"

#include <stdio.h>
#include <stdlib.h>

aclnnStatus op_tensor_arg(const char *api, const char *param, const aclTensor *t, pyaclnn_stub_tensor *out) {
    if (t == NULL) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, api, "%s is NULL", param);
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    if (pyaclnn_stub_tensor_get(t, out) != ACLNN_SUCCESS) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api,
                            "%s (%p) is not a live aclTensor (destroyed, never created, or another kind of object)",
                            param, (const void *)t);
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

const char *op_dtype_name(aclDataType dtype, char buf[24]) {
    switch (dtype) {
    case ACL_FLOAT: return "FLOAT";
    case ACL_FLOAT16: return "FLOAT16";
    case ACL_BF16: return "BFLOAT16";
    case ACL_DOUBLE: return "DOUBLE";
    case ACL_INT8: return "INT8";
    case ACL_INT16: return "INT16";
    case ACL_INT32: return "INT32";
    case ACL_INT64: return "INT64";
    case ACL_UINT8: return "UINT8";
    case ACL_UINT16: return "UINT16";
    case ACL_UINT32: return "UINT32";
    case ACL_UINT64: return "UINT64";
    case ACL_BOOL: return "BOOL";
    case ACL_INT4: return "INT4";
    case ACL_HIFLOAT8: return "HIFLOAT8";
    case ACL_FLOAT8_E5M2: return "FLOAT8_E5M2";
    case ACL_FLOAT8_E4M3FN: return "FLOAT8_E4M3FN";
    case ACL_FLOAT8_E8M0: return "FLOAT8_E8M0";
    case ACL_FLOAT4_E2M1: return "FLOAT4_E2M1";
    case ACL_FLOAT4_E1M2: return "FLOAT4_E1M2";
    case ACL_COMPLEX32: return "COMPLEX32";
    case ACL_COMPLEX64: return "COMPLEX64";
    case ACL_COMPLEX128: return "COMPLEX128";
    case ACL_STRING: return "STRING";
    case ACL_UINT1: return "UINT1";
    case ACL_FLOAT6_E3M2: return "FLOAT6_E3M2";
    case ACL_FLOAT6_E2M3: return "FLOAT6_E2M3";
    case ACL_DT_UNDEFINED: return "DT_UNDEFINED";
    default:
        snprintf(buf, 24, "dtype %d", (int)dtype);
        return buf;
    }
}

const char *op_format_name(aclFormat format, char buf[24]) {
    switch (format) {
    case ACL_FORMAT_ND: return "ND";
    case ACL_FORMAT_NCHW: return "NCHW";
    case ACL_FORMAT_NHWC: return "NHWC";
    case ACL_FORMAT_NCL: return "NCL";
    case ACL_FORMAT_NCDHW: return "NCDHW";
    case ACL_FORMAT_FRACTAL_NZ: return "FRACTAL_NZ";
    default:
        snprintf(buf, 24, "format %d", (int)format);
        return buf;
    }
}

void *op_kernel_element(const char *op, const char *param, const pyaclnn_stub_tensor *t, int64_t index,
                        size_t itemsize) {
    /* Overflow-checked: the view offset is whatever the caller passed to aclCreateTensor. */
    int64_t elem;
    uintptr_t bytes, addr;
    void *base, *p = NULL;
    size_t size;
    if (t->data != NULL && !__builtin_add_overflow(t->offset, index, &elem) && elem >= 0 &&
        !__builtin_mul_overflow((uintptr_t)elem, (uintptr_t)itemsize, &bytes) &&
        !__builtin_add_overflow((uintptr_t)t->data, bytes, &addr) &&
        pyaclnn_stub_mem_lookup((const void *)addr, itemsize, &base, &size))
        p = (void *)addr;
    if (p == NULL)
        pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION,
                               "%s: %s element %lld (view offset %lld, %zu-byte elements, data %p) is not in "
                               "device memory (tensor data address unset, freed, or too small)", op, param,
                               (long long)index, (long long)t->offset, itemsize, t->data);
    return p;
}

int op_view_in_device_memory(const pyaclnn_stub_tensor *t, int bits) {
    int64_t lo = t->offset, hi = t->offset, reach;
    for (int64_t k = 0; k < t->ndim; k++) {
        if (t->shape[k] <= 0) return 1;   /* empty: nothing is accessed */
        if (__builtin_mul_overflow(t->shape[k] - 1, t->strides[k], &reach) ||
            __builtin_add_overflow(reach < 0 ? lo : hi, reach, reach < 0 ? &lo : &hi))
            return 0;
    }
    /* Byte range [first, last]; 4-bit elements share bytes (element 2k in the low nibble). */
    int64_t first, last;
    if (t->data == NULL || lo < 0 || __builtin_mul_overflow(lo, bits, &first) ||
        __builtin_mul_overflow(hi, bits, &last) || __builtin_add_overflow(last, bits - 1, &last))
        return 0;
    first /= 8;
    last /= 8;
    size_t align = bits >= 16 ? (size_t)bits / 8 : 1;
    uintptr_t start;
    if ((uintptr_t)t->data % align != 0 || __builtin_add_overflow((uintptr_t)t->data, (uintptr_t)first, &start))
        return 0;
    void *base;
    size_t size;
    return pyaclnn_stub_mem_lookup((const void *)start, (size_t)(last - first + 1), &base, &size);
}

int op_kernel_threads_from_env(void) {
    const char *env = getenv("PYACLNN_STUB_KERNEL_THREADS");
    if (env == NULL || *env == '\0') return 0;
    char *end;
    long v = strtol(env, &end, 10);
    if (*end != '\0' || v < 1) return 0;
    return v > 256 ? 256 : (int)v;
}
