/*
 * aclnnInplaceMaskedFillScalar: selfRef[mask] = value, mask broadcast to selfRef's shape
 * (hicann/ops-math conversion/masked_fill/op_api/aclnn_masked_fill_scalar.cpp). The value is cast
 * to selfRef's dtype once, with the NPU's Cast rules. Bit-exact (a move).
 */
#include "aclnnop/aclnn_masked_fill_scalar.h"
#include "opbase/checks.h"

static const aclDataType SELF[] = {ACL_FLOAT, ACL_INT32, ACL_INT64, ACL_FLOAT16, ACL_INT16,
                                   ACL_INT8,  ACL_UINT8, ACL_DOUBLE, ACL_BOOL,   ACL_BF16};
static const aclDataType MASK[] = {ACL_BOOL};

aclnnStatus aclnnInplaceMaskedFillScalarGetWorkspaceSize(aclTensor *selfRef, const aclTensor *mask,
                                                         const aclScalar *value, uint64_t *workspaceSize,
                                                         aclOpExecutor **executor) {
    static const char API[] = "aclnnInplaceMaskedFillScalarGetWorkspaceSize";
    ew_ptr_arg ptrs[] = {{"selfRef", selfRef}, {"mask", mask}, {"value", value}};
    aclnnStatus rc = ew_check_not_null(API, ptrs, 3, workspaceSize, executor);
    if (rc) return rc;
    pyaclnn_stub_tensor self, m;
    aclDataType vdt;
    ew_value v;
    if ((rc = op_tensor_arg(API, "selfRef", selfRef, &self)) || (rc = op_tensor_arg(API, "mask", mask, &m)) ||
        (rc = ew_scalar_arg(API, "value", value, &vdt, &v)))
        return rc;
    if ((rc = ew_check_dtype_in(API, "selfRef", self.dtype, SELF, 10)) ||
        (rc = ew_check_dtype_in(API, "mask", m.dtype, MASK, 1)))
        return rc;
    if ((rc = ew_check_max_dim(API, "selfRef", &self, EW_MAX_DIM)) || (rc = ew_check_max_dim(API, "mask", &m, EW_MAX_DIM)))
        return rc;
    int64_t shape[PYACLNN_STUB_MAX_DIMS], ndim;
    if ((rc = ew_broadcast(API, "selfRef", &self, "mask", &m, shape, &ndim))) return rc;
    if ((rc = ew_check_shape(API, "selfRef", &self, shape, ndim))) return rc;   /* mask may not grow selfRef */
    ew_plan plan = {.op = EW_OP_MASKED_FILL, .compute = self.dtype, .n_inputs = 2, .bool_inputs = 2u};
    plan.scalar = ew_cast(v, vdt, self.dtype);
    const aclTensor *inputs[2] = {selfRef, mask};
    return ew_make_executor(API, "InplaceMaskedFillScalar", &plan, pyaclnn_stub_numel(&self) == 0, inputs, 2, selfRef,
                            workspaceSize, executor);
}

EW_DEFINE_PHASE2(aclnnInplaceMaskedFillScalar)
