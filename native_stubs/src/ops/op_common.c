#include "op_common.h"

#include <stdio.h>

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
    int64_t elem = t->offset + index;
    void *base, *p = NULL;
    size_t size;
    if (t->data != NULL && elem >= 0) {
        p = (unsigned char *)t->data + (size_t)elem * itemsize;
        if (!pyaclnn_stub_mem_lookup(p, itemsize, &base, &size)) p = NULL;
    }
    if (p == NULL)
        pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION,
                               "%s: %s element %lld at %p + %lld bytes is not in device memory (tensor data "
                               "address unset, freed, or too small)", op, param, (long long)index, t->data,
                               (long long)elem * (long long)itemsize);
    return p;
}
