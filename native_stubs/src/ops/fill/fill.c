/*
 * aclnnInplaceFillScalar, aclnnInplaceOne, aclnnInplaceZero: every element of selfRef (any strides
 * and offset) set to one value (hicann/ops-math conversion/fill, math/ones_like, math/zero_op).
 * The value is cast to selfRef's dtype once, in phase 1, with the NPU's Cast rules (ew_dtype.h).
 */
#include "aclnnop/aclnn_fill_scalar.h"
#include "aclnnop/aclnn_ones.h"
#include "aclnnop/aclnn_zero.h"
#include "opbase/checks.h"

static const aclDataType FILL_DTYPES[] = {ACL_FLOAT, ACL_INT32, ACL_INT64, ACL_FLOAT16, ACL_INT16, ACL_INT8, ACL_UINT8,
                                          ACL_DOUBLE, ACL_BOOL, ACL_BF16, ACL_UINT16, ACL_UINT32, ACL_UINT64};
static const aclDataType ONE_DTYPES[] = {ACL_FLOAT, ACL_FLOAT16, ACL_INT8, ACL_INT16, ACL_INT32,
                                         ACL_INT64, ACL_UINT8, ACL_BOOL, ACL_DOUBLE, ACL_BF16};
/* The vendor's Ascend950 list also has FLOAT4_E1M2 / FLOAT4_E2M1, which the emulator does not fill. */
static const aclDataType ZERO_DTYPES_950[] = {ACL_INT8, ACL_INT32, ACL_INT64, ACL_UINT8, ACL_FLOAT16, ACL_FLOAT,
                                              ACL_BOOL, ACL_DOUBLE, ACL_INT16, ACL_UINT16, ACL_BF16,
                                              ACL_FLOAT8_E5M2, ACL_FLOAT8_E4M3FN, ACL_HIFLOAT8};
static const aclDataType ZERO_DTYPES_A2[] = {ACL_INT8, ACL_INT32, ACL_INT64, ACL_UINT8, ACL_FLOAT16, ACL_FLOAT,
                                             ACL_BOOL, ACL_DOUBLE, ACL_INT16, ACL_UINT16, ACL_BF16};
#define N(a) (sizeof a / sizeof a[0])

/* Validates selfRef and builds the FILL executor with `value` (of dtype vdt). */
static aclnnStatus fill_phase1(const char *api, const char *op_name, const aclTensor *selfRef,
                               const aclDataType *list, size_t n, aclDataType vdt, ew_value value,
                               const pyaclnn_stub_tensor *self, uint64_t *workspaceSize, aclOpExecutor **executor) {
    aclnnStatus rc;
    if ((rc = ew_check_dtype_in(api, "selfRef", self->dtype, list, n))) return rc;
    if ((rc = ew_check_max_dim(api, "selfRef", self, EW_MAX_DIM))) return rc;
    ew_plan plan = {.op = EW_OP_FILL, .compute = self->dtype, .n_inputs = 0};
    plan.scalar = ew_cast(value, vdt, self->dtype);
    return ew_make_executor(api, op_name, &plan, pyaclnn_stub_numel(self) == 0, NULL, 0, selfRef, workspaceSize,
                            executor);
}

aclnnStatus aclnnInplaceFillScalarGetWorkspaceSize(aclTensor *selfRef, const aclScalar *value,
                                                   uint64_t *workspaceSize, aclOpExecutor **executor) {
    static const char API[] = "aclnnInplaceFillScalarGetWorkspaceSize";
    ew_ptr_arg ptrs[] = {{"selfRef", selfRef}, {"value", value}};
    aclnnStatus rc = ew_check_not_null(API, ptrs, 2, workspaceSize, executor);
    if (rc) return rc;
    pyaclnn_stub_tensor self;
    aclDataType vdt;
    ew_value v;
    if ((rc = op_tensor_arg(API, "selfRef", selfRef, &self))) return rc;
    if ((rc = ew_scalar_arg(API, "value", value, &vdt, &v))) return rc;
    if ((rc = ew_check_dtype_in(API, "selfRef", self.dtype, FILL_DTYPES, N(FILL_DTYPES)))) return rc;
    /* CheckPromoteType: the value's dtype must promote with selfRef's (unsigned 16..64-bit selfs
     * are outside the promotion table and accepted as the vendor's newer table does). */
    if (ew_promote(self.dtype, vdt) == ACL_DT_UNDEFINED && ew_promote(self.dtype, self.dtype) != ACL_DT_UNDEFINED) {
        char b1[24], b2[24];
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "Self dtype %s and value dtype %s can not promote dtype",
                            op_dtype_name(self.dtype, b1), op_dtype_name(vdt, b2));
        return ACLNN_ERR_PARAM_INVALID;
    }
    return fill_phase1(API, "InplaceFillScalar", selfRef, FILL_DTYPES, N(FILL_DTYPES), vdt, v, &self, workspaceSize,
                       executor);
}

static aclnnStatus constant_fill(const char *api, const char *op_name, const aclTensor *selfRef, const aclDataType *list,
                                 size_t n, int64_t constant, uint64_t *workspaceSize, aclOpExecutor **executor) {
    ew_ptr_arg ptrs[] = {{"selfRef", selfRef}};
    aclnnStatus rc = ew_check_not_null(api, ptrs, 1, workspaceSize, executor);
    if (rc) return rc;
    pyaclnn_stub_tensor self;
    if ((rc = op_tensor_arg(api, "selfRef", selfRef, &self))) return rc;
    return fill_phase1(api, op_name, selfRef, list, n, ACL_INT64, (ew_value){0, constant}, &self, workspaceSize,
                       executor);
}

aclnnStatus aclnnInplaceOneGetWorkspaceSize(const aclTensor *selfRef, uint64_t *workspaceSize,
                                            aclOpExecutor **executor) {
    return constant_fill("aclnnInplaceOneGetWorkspaceSize", "InplaceOne", selfRef, ONE_DTYPES, N(ONE_DTYPES), 1,
                         workspaceSize, executor);
}

aclnnStatus aclnnInplaceZeroGetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize, aclOpExecutor **executor) {
    int is950 = ew_soc_is_950();
    return constant_fill("aclnnInplaceZeroGetWorkspaceSize", "InplaceZero", selfRef,
                         is950 ? ZERO_DTYPES_950 : ZERO_DTYPES_A2, is950 ? N(ZERO_DTYPES_950) : N(ZERO_DTYPES_A2), 0,
                         workspaceSize, executor);
}

aclnnStatus aclnnInplaceFillScalar(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                   aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnInplaceFillScalar", workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnInplaceOne(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnInplaceOne", workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnInplaceZero(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnInplaceZero", workspace, workspaceSize, executor, stream);
}
