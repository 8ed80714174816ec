/* What libnnopbase needs to know about aclDataType values: names for messages, scalar sizes. */
#include <stdio.h>

#include "nnopbase_internal.h"

typedef struct {
    aclDataType dtype;
    const char *name;
    size_t scalar_bytes;   /* one value in memory; 4-bit/6-bit/1-bit types occupy one byte */
} dtype_row;

/* ACL_DT_UNDEFINED and ACL_STRING are deliberately absent: neither describes fixed-size
 * elements, so no tensor or scalar can be made of them. */
static const dtype_row DTYPES[] = {
    {ACL_FLOAT, "FLOAT", 4},           {ACL_FLOAT16, "FLOAT16", 2},
    {ACL_INT8, "INT8", 1},             {ACL_INT32, "INT32", 4},
    {ACL_UINT8, "UINT8", 1},           {ACL_INT16, "INT16", 2},
    {ACL_UINT16, "UINT16", 2},         {ACL_UINT32, "UINT32", 4},
    {ACL_INT64, "INT64", 8},           {ACL_UINT64, "UINT64", 8},
    {ACL_DOUBLE, "DOUBLE", 8},         {ACL_BOOL, "BOOL", 1},
    {ACL_COMPLEX64, "COMPLEX64", 8},   {ACL_COMPLEX128, "COMPLEX128", 16},
    {ACL_BF16, "BFLOAT16", 2},         {ACL_INT4, "INT4", 1},
    {ACL_UINT1, "UINT1", 1},           {ACL_COMPLEX32, "COMPLEX32", 4},
    {ACL_HIFLOAT8, "HIFLOAT8", 1},     {ACL_FLOAT8_E5M2, "FLOAT8_E5M2", 1},
    {ACL_FLOAT8_E4M3FN, "FLOAT8_E4M3FN", 1}, {ACL_FLOAT8_E8M0, "FLOAT8_E8M0", 1},
    {ACL_FLOAT6_E3M2, "FLOAT6_E3M2", 1}, {ACL_FLOAT6_E2M3, "FLOAT6_E2M3", 1},
    {ACL_FLOAT4_E2M1, "FLOAT4_E2M1", 1}, {ACL_FLOAT4_E1M2, "FLOAT4_E1M2", 1},
};

static const dtype_row *find(aclDataType dtype) {
    for (size_t i = 0; i < sizeof DTYPES / sizeof DTYPES[0]; i++)
        if (DTYPES[i].dtype == dtype) return &DTYPES[i];
    return NULL;
}

const char *nn_dtype_name(aclDataType dtype, char buf[24]) {
    const dtype_row *row = find(dtype);
    if (row) return row->name;
    if (dtype == ACL_DT_UNDEFINED) return "DT_UNDEFINED";
    if (dtype == ACL_STRING) return "STRING";
    snprintf(buf, 24, "dtype %d", (int)dtype);
    return buf;
}

size_t nn_scalar_bytes(aclDataType dtype) {
    const dtype_row *row = find(dtype);
    return row ? row->scalar_bytes : 0;
}
