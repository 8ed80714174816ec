/*
 * aclnnLerps and aclnnInplaceLerps (hicann/ops-math math/lerp/op_api/aclnn_lerp_scalar.cpp):
 * out = self + weight * (end - self), weight a scalar. Arithmetic (class c): the Lerp kernel's steps
 * (sub, mul, add) each rounded to fp32, fp16/bf16 upcast, then cast to out's dtype; the weight is read
 * as FLOAT on Ascend 950 (regbase) and as self's dtype on Atlas A2/A3, as the op_api converts it.
 * Validation in the vendor's order:
 *   1. workspaceSize and executor, then self, end, weight, out non-NULL                -> 161001
 *   2. self and end FLOAT16/FLOAT/BF16, end of self's dtype, out FLOAT16/FLOAT/DOUBLE/BF16 -> 161002
 *   3. self and end broadcast, out of the broadcast shape; at most 8 dims unless every
 *      view is contiguous                                                              -> 161002
 * An empty self or end gives an executor that does nothing.
 */
#include "aclnnop/aclnn_lerp_scalar.h"
#include "opbase/checks.h"
#include "kernels/view.h"

#define N(a) (sizeof a / sizeof a[0])

static const aclDataType IN_DTYPES[] = {ACL_FLOAT16, ACL_FLOAT, ACL_BF16};
static const aclDataType OUT_DTYPES[] = {ACL_FLOAT16, ACL_FLOAT, ACL_DOUBLE, ACL_BF16};

static aclnnStatus lerps_phase1(const char *api, const char *op_name, const char *self_name, const aclTensor *self,
                                const aclTensor *end, const aclScalar *weight, const aclTensor *out,
                                uint64_t *workspaceSize, aclOpExecutor **executor) {
    const char *names[] = {self_name, "end", "weight", "out"};
    const void *ptrs[] = {self, end, weight, out};
    if (workspaceSize == NULL || executor == NULL) {   /* OP_CHECK_COMM_INPUT comes first */
        pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, api, "%s is NULL", workspaceSize == NULL ? "workspaceSize"
                                                                                              : "executor");
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    aclnnStatus rc = tv_check_not_null(api, names, ptrs, 4, workspaceSize, executor);
    if (rc) return rc;
    pyaclnn_stub_tensor s, e, o;
    aclDataType wdt;
    ew_value wv;
    if ((rc = op_tensor_arg(api, self_name, self, &s)) || (rc = op_tensor_arg(api, "end", end, &e)) ||
        (rc = ew_scalar_arg(api, "weight", weight, &wdt, &wv)) || (rc = op_tensor_arg(api, "out", out, &o)))
        return rc;
    if ((rc = ew_check_dtype_in(api, self_name, s.dtype, IN_DTYPES, N(IN_DTYPES))) ||
        (rc = ew_check_dtype_in(api, "end", e.dtype, IN_DTYPES, N(IN_DTYPES))) ||
        (rc = tv_check_same_dtype(api, "end", e.dtype, self_name, s.dtype)) ||
        (rc = ew_check_dtype_in(api, "out", o.dtype, OUT_DTYPES, N(OUT_DTYPES))))
        return rc;
    int64_t shape[PYACLNN_STUB_MAX_DIMS], ndim;
    if (ew_broadcast(api, self_name, &s, "end", &e, shape, &ndim) != ACLNN_SUCCESS) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "Shape of self and end can't broadcast.");
        return ACLNN_ERR_PARAM_INVALID;
    }
    if ((rc = ew_check_shape(api, "out", &o, shape, ndim))) return rc;
    if (!(pyaclnn_stub_is_contiguous(&s) && pyaclnn_stub_is_contiguous(&e) && pyaclnn_stub_is_contiguous(&o)) &&
        ((rc = ew_check_max_dim(api, self_name, &s, EW_MAX_DIM)) || (rc = ew_check_max_dim(api, "end", &e, EW_MAX_DIM))))
        return rc;
    ew_plan plan = {.op = EW_OP_LERP, .compute = s.dtype, .n_inputs = 2};
    plan.scalar = ew_cast(wv, wdt, ew_soc_is_950() ? ACL_FLOAT : s.dtype);   /* the op_api's weight tensor */
    const aclTensor *inputs[2] = {self, end};
    int empty = pyaclnn_stub_numel(&s) == 0 || pyaclnn_stub_numel(&e) == 0;
    return ew_make_executor(api, op_name, &plan, empty, inputs, 2, out, workspaceSize, executor);
}

aclnnStatus aclnnLerpsGetWorkspaceSize(const aclTensor *self, const aclTensor *end, const aclScalar *weight,
                                       aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor) {
    return lerps_phase1("aclnnLerpsGetWorkspaceSize", "Lerps", "self", self, end, weight, out, workspaceSize,
                        executor);
}

aclnnStatus aclnnInplaceLerpsGetWorkspaceSize(aclTensor *selfRef, const aclTensor *end, const aclScalar *weight,
                                              uint64_t *workspaceSize, aclOpExecutor **executor) {
    return lerps_phase1("aclnnInplaceLerpsGetWorkspaceSize", "InplaceLerps", "selfRef", selfRef, end, weight, selfRef,
                        workspaceSize, executor);
}

EW_DEFINE_PHASE2(aclnnLerps)
EW_DEFINE_PHASE2(aclnnInplaceLerps)
