/*
 * The elementwise engine's view of dtypes: sizes, categories, the vendor's type promotion
 * (op::PromoteType, torch's table), op::CanCast, and element conversions with the NPU's Cast rules.
 *
 * Values travel between load and store in one of two representations ("repr"):
 *   EW_REPR_F  a double holding a value exactly representable in the dtype (float dtypes);
 *   EW_REPR_I  an int64 holding the value (integer dtypes and BOOL as 0/1).
 * ew_cast() turns a value of one dtype into the value of another, as the NPU's Cast does:
 *   float -> narrower float: to fp32 first, then round to nearest even (fp16, bf16, fp8, via
 *     src/numerics); overflow -> inf (E4M3FN: NaN), NaN stays NaN: the INF_NAN overflow mode
 *     torch_npu selects. double -> fp16/bf16 therefore rounds twice (through fp32), as torch does;
 *   float -> integer: toward zero, NaN -> 0, out of range saturates (an assumption: the emulator
 *     documents it; torch CPU leaves it undefined);
 *   integer -> integer: two's complement wrap; anything -> BOOL: != 0 (NaN -> true);
 *   integer -> float: round to nearest even (int64 -> fp16/bf16 through fp32).
 */
#ifndef PYACLNN_EW_DTYPE_H
#define PYACLNN_EW_DTYPE_H

#include <stddef.h>
#include <stdint.h>

#include "acl/acl_base.h"

typedef enum { EW_REPR_NONE = 0, EW_REPR_F, EW_REPR_I } ew_repr;

/* One value in its dtype's repr (only the field of that repr is meaningful). */
typedef struct {
    double f;
    int64_t i;
} ew_value;

/* Bytes per element (0 for dtypes the engine cannot load or store, e.g. 4-bit and complex). Inline: the
 * kernels' indexed loops (tv_at) ask it once per element. */
static inline size_t ew_itemsize(aclDataType dt) {
    switch (dt) {
    case ACL_BOOL: case ACL_INT8: case ACL_UINT8: case ACL_FLOAT8_E4M3FN: case ACL_FLOAT8_E5M2:
    case ACL_HIFLOAT8: case ACL_FLOAT8_E8M0:
        return 1;
    case ACL_INT16: case ACL_UINT16: case ACL_FLOAT16: case ACL_BF16: return 2;
    case ACL_INT32: case ACL_UINT32: case ACL_FLOAT: return 4;
    case ACL_INT64: case ACL_UINT64: case ACL_DOUBLE: return 8;
    default: return 0;
    }
}
ew_repr ew_repr_of(aclDataType dt);
int ew_is_float(aclDataType dt);      /* FLOAT16 BF16 FLOAT DOUBLE and the 8-bit floats */
int ew_is_integral(aclDataType dt, int include_bool);

/* op::PromoteType for the dtypes the arithmetic operators take (BOOL, UINT8, INT8, INT16, INT32,
 * INT64, FLOAT16, BF16, FLOAT, DOUBLE); ACL_DT_UNDEFINED for any other pair. */
aclDataType ew_promote(aclDataType a, aclDataType b);

/* op::CanCast (torch's canCast): no float -> integral, no non-bool -> bool. */
int ew_can_cast(aclDataType from, aclDataType to);

/* Element i of a run at p (already offset to the element). */
ew_value ew_load(const void *p, aclDataType dt);
void ew_store(void *p, aclDataType dt, ew_value v);

/* The value of `v` (of dtype `from`) as dtype `to` (see the rules above). */
ew_value ew_cast(ew_value v, aclDataType from, aclDataType to);

/* A host scalar (aclScalar dtype + value bytes) as a value of its own dtype; returns 0 if the
 * dtype is not one the engine reads. */
int ew_scalar_value(aclDataType dt, const unsigned char bytes[16], ew_value *out);
/* The scalar as double / float, as aclScalar::ToDouble / ToFloat do. */
double ew_value_to_double(ew_value v, aclDataType dt);

/* "FLOAT16", "INT32", ... ("dtype <n>" for values without a name; the buffer holds that text). */
const char *op_dtype_name(aclDataType dtype, char buf[24]);

/* "ND", "NCHW", ... ("format <n>" otherwise). */
const char *op_format_name(aclFormat format, char buf[24]);

#endif
