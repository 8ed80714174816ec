/*
 * aclnnCast: out = self converted to `dtype` with the NPU's Cast rules (elementwise/ew_dtype.h),
 * then stored into out (the vendor's Cast + ViewCopy; out normally has dtype `dtype`)
 * (hicann/ops-math math/cast/op_api/aclnn_cast.cpp).
 */
#include "aclnnop/aclnn_cast.h"
#include "opbase/checks.h"

/* The vendor's lists without the complex, 4-bit and COMPLEX32 types (not emulated). */
static const aclDataType CAST_A2[] = {ACL_FLOAT16, ACL_FLOAT,  ACL_DOUBLE, ACL_INT8,   ACL_UINT8,
                                      ACL_INT16,   ACL_INT32,  ACL_INT64,  ACL_UINT16, ACL_UINT32,
                                      ACL_UINT64,  ACL_BOOL,   ACL_BF16};
static const aclDataType CAST_950[] = {ACL_FLOAT16, ACL_FLOAT,  ACL_DOUBLE, ACL_INT8,     ACL_UINT8,
                                       ACL_INT16,   ACL_INT32,  ACL_INT64,  ACL_UINT16,   ACL_UINT32,
                                       ACL_UINT64,  ACL_BOOL,   ACL_BF16,   ACL_HIFLOAT8, ACL_FLOAT8_E5M2,
                                       ACL_FLOAT8_E4M3FN};
#define N(a) (sizeof a / sizeof a[0])

aclnnStatus aclnnCastGetWorkspaceSize(const aclTensor *self, const aclDataType dtype, aclTensor *out,
                                      uint64_t *workspaceSize, aclOpExecutor **executor) {
    static const char API[] = "aclnnCastGetWorkspaceSize";
    ew_ptr_arg ptrs[] = {{"self", self}, {"out", out}};
    aclnnStatus rc = ew_check_not_null(API, ptrs, 2, workspaceSize, executor);
    if (rc) return rc;
    pyaclnn_stub_tensor s, o;
    if ((rc = op_tensor_arg(API, "self", self, &s))) return rc;
    if ((rc = op_tensor_arg(API, "out", out, &o))) return rc;
    int is950 = ew_soc_is_950();
    const aclDataType *list = is950 ? CAST_950 : CAST_A2;
    size_t n = is950 ? N(CAST_950) : N(CAST_A2);
    if ((rc = ew_check_dtype_in(API, "self", s.dtype, list, n))) return rc;
    if ((rc = ew_check_dtype_in(API, "dtype", dtype, list, n))) return rc;
    if ((rc = ew_check_dtype_in(API, "out", o.dtype, list, n))) return rc;
    if ((rc = ew_check_max_dim(API, "self", &s, EW_MAX_DIM))) return rc;
    if ((rc = ew_check_shape(API, "out", &o, s.shape, s.ndim))) return rc;
    ew_plan plan = {.op = EW_OP_COPY, .compute = dtype, .n_inputs = 1};
    const aclTensor *inputs[1] = {self};
    return ew_make_executor(API, "Cast", &plan, pyaclnn_stub_numel(&s) == 0, inputs, 1, out, workspaceSize,
                            executor);
}

aclnnStatus aclnnCast(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnCast", workspace, workspaceSize, executor, stream);
}
