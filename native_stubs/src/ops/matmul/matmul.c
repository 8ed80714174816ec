/*
 * aclnnMatmul (torch.matmul shapes), aclnnMm (2-D), aclnnBatchMatMul (3-D), aclnnAddmm / aclnnInplaceAddmm
 * (beta * self + alpha * (mat1 @ mat2)), hicann/ops-nn matmul/{mat_mul_v3,batch_mat_mul_v3}/op_host/op_api.
 * Arithmetic: mm_engine.h (fp32 accumulation, class c). Validation in the vendor's order:
 *   1. self, mat2 (mat1), out non-NULL                                             -> 161001
 *   2. dtypes (mm_check_dtypes)                                                    -> 161002
 *   3. shapes: Matmul: no 0-d operand, k dims equal, batch dims broadcast; Mm: 2-D operands, k equal, out
 *      [m, n]; BatchMatMul: 3-D operands and out, k equal, batch equal or 1         -> 161002
 *   (emulator) out has the result shape                                             -> 161002
 */
#include "aclnnop/aclnn_addmm.h"
#include "aclnnop/aclnn_batch_matmul.h"
#include "aclnnop/aclnn_matmul.h"
#include "aclnnop/aclnn_mm.h"
#include "opbase/checks.h"
#include "kernels/matmul.h"

static aclnnStatus wrong_dim(const char *api, const char *name, const pyaclnn_stub_tensor *t, int64_t want) {
    if (t->ndim == want) return ACLNN_SUCCESS;
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "%s dim should be %lld, but got %lld.", name, (long long)want,
                        (long long)t->ndim);
    return ACLNN_ERR_PARAM_INVALID;
}

/* ndim_rule: 0 torch.matmul, 2 Mm, 3 BatchMatMul. */
static aclnnStatus matmul_common(const char *api, const char *op, int ndim_rule, const aclTensor *self,
                                 const aclTensor *mat2, aclTensor *out, int8_t cubeMathType, uint64_t *workspaceSize,
                                 aclOpExecutor **executor) {
    const char *names[] = {"self", "mat2", "out"};
    const void *ptrs[] = {self, mat2, out};
    aclnnStatus rc = tv_check_not_null(api, names, ptrs, 3, workspaceSize, executor);
    if (rc) return rc;
    pyaclnn_stub_tensor a, b, o;
    if ((rc = op_tensor_arg(api, "self", self, &a))) return rc;
    if ((rc = op_tensor_arg(api, "mat2", mat2, &b))) return rc;
    if ((rc = op_tensor_arg(api, "out", out, &o))) return rc;
    if ((rc = mm_check_dtypes(api, &a, &b, &o, cubeMathType))) return rc;
    if (ndim_rule == 0) {
        if ((rc = ew_check_max_dim(api, "self", &a, 6))) return rc;
        if ((rc = ew_check_max_dim(api, "mat2", &b, 6))) return rc;
    } else {
        if ((rc = wrong_dim(api, "mat2", &b, ndim_rule))) return rc;
        if ((rc = wrong_dim(api, "self", &a, ndim_rule))) return rc;
        if ((rc = wrong_dim(api, "out", &o, ndim_rule))) return rc;
    }
    mm_plan plan = {.fp16_inputs = cubeMathType == MM_USE_FP16 && a.dtype == ACL_FLOAT};
    int64_t shape[PYACLNN_STUB_MAX_DIMS], ndim;
    if ((rc = mm_plan_make(api, &a, &b, &plan, shape, &ndim))) return rc;
    if ((rc = ew_check_shape(api, "out", &o, shape, ndim))) return rc;
    const aclTensor *in[2] = {self, mat2};
    const aclTensor *outs[1] = {out};
    return tv_make_executor(api, op, pyaclnn_stub_numel(&o) ? mm_kernel : NULL, &plan, sizeof plan, in, 2, outs, 1,
                            workspaceSize, executor);
}

aclnnStatus aclnnMatmulGetWorkspaceSize(const aclTensor *self, const aclTensor *mat2, aclTensor *out,
                                        int8_t cubeMathType, uint64_t *workspaceSize, aclOpExecutor **executor) {
    return matmul_common("aclnnMatmulGetWorkspaceSize", "Matmul", 0, self, mat2, out, cubeMathType, workspaceSize,
                         executor);
}

aclnnStatus aclnnMatmul(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnMatmul", workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnMmGetWorkspaceSize(const aclTensor *self, const aclTensor *mat2, aclTensor *out, int8_t cubeMathType,
                                    uint64_t *workspaceSize, aclOpExecutor **executor) {
    return matmul_common("aclnnMmGetWorkspaceSize", "Mm", 2, self, mat2, out, cubeMathType, workspaceSize, executor);
}

aclnnStatus aclnnMm(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnMm", workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnBatchMatMulGetWorkspaceSize(const aclTensor *self, const aclTensor *mat2, aclTensor *out,
                                             int8_t cubeMathType, uint64_t *workspaceSize, aclOpExecutor **executor) {
    return matmul_common("aclnnBatchMatMulGetWorkspaceSize", "BatchMatMul", 3, self, mat2, out, cubeMathType,
                         workspaceSize, executor);
}

aclnnStatus aclnnBatchMatMul(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnBatchMatMul", workspace, workspaceSize, executor, stream);
}

static aclnnStatus addmm_common(const char *api, const char *op, const aclTensor *self, const aclTensor *mat1,
                                const aclTensor *mat2, const aclScalar *beta, const aclScalar *alpha, aclTensor *out,
                                int8_t cubeMathType, uint64_t *workspaceSize, aclOpExecutor **executor) {
    const char *names[] = {"self", "mat1", "mat2", "beta", "alpha", "out"};
    const void *ptrs[] = {self, mat1, mat2, beta, alpha, out};
    aclnnStatus rc = tv_check_not_null(api, names, ptrs, 6, workspaceSize, executor);
    if (rc) return rc;
    pyaclnn_stub_tensor s, a, b, o;
    if ((rc = op_tensor_arg(api, "self", self, &s))) return rc;
    if ((rc = op_tensor_arg(api, "mat1", mat1, &a))) return rc;
    if ((rc = op_tensor_arg(api, "mat2", mat2, &b))) return rc;
    if ((rc = op_tensor_arg(api, "out", out, &o))) return rc;
    aclDataType bdt, adt;
    ew_value bv, av;
    if ((rc = ew_scalar_arg(api, "beta", beta, &bdt, &bv))) return rc;
    if ((rc = ew_scalar_arg(api, "alpha", alpha, &adt, &av))) return rc;
    if ((rc = mm_check_dtypes(api, &a, &b, &o, cubeMathType))) return rc;
    static const aclDataType SELF_DTYPES[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
    if ((rc = ew_check_dtype_in(api, "self", s.dtype, SELF_DTYPES, 3))) return rc;
    if ((rc = wrong_dim(api, "mat1", &a, 2))) return rc;
    if ((rc = wrong_dim(api, "mat2", &b, 2))) return rc;
    mm_plan plan = {.fp16_inputs = cubeMathType == MM_USE_FP16 && a.dtype == ACL_FLOAT, .has_bias = 1};
    plan.beta = (float)ew_value_to_double(bv, bdt);
    plan.alpha = (float)ew_value_to_double(av, adt);
    int64_t shape[PYACLNN_STUB_MAX_DIMS], ndim;
    if ((rc = mm_plan_make(api, &a, &b, &plan, shape, &ndim))) return rc;
    int64_t bs[PYACLNN_STUB_MAX_DIMS], bn;
    pyaclnn_stub_tensor mn = o;
    mn.ndim = 2;
    mn.shape[0] = plan.m;
    mn.shape[1] = plan.n;
    if (s.ndim > 2 || (rc = ew_broadcast(api, "self", &s, "mat1 @ mat2", &mn, bs, &bn)) ||
        bs[0] != plan.m || bs[1] != plan.n) {
        if (rc == ACLNN_SUCCESS) {
            char t[200];
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "self shape %s can not broadcast to [%lld, %lld]",
                                tv_shape_text(s.shape, s.ndim, t, sizeof t), (long long)plan.m, (long long)plan.n);
        }
        return ACLNN_ERR_PARAM_INVALID;
    }
    if ((rc = ew_check_shape(api, "out", &o, shape, ndim))) return rc;
    const aclTensor *in[3] = {mat1, mat2, self};
    const aclTensor *outs[1] = {out};
    return tv_make_executor(api, op, pyaclnn_stub_numel(&o) ? mm_kernel : NULL, &plan, sizeof plan, in, 3, outs, 1,
                            workspaceSize, executor);
}

aclnnStatus aclnnAddmmGetWorkspaceSize(const aclTensor *self, const aclTensor *mat1, const aclTensor *mat2,
                                       const aclScalar *beta, const aclScalar *alpha, aclTensor *out,
                                       int8_t cubeMathType, uint64_t *workspaceSize, aclOpExecutor **executor) {
    return addmm_common("aclnnAddmmGetWorkspaceSize", "Addmm", self, mat1, mat2, beta, alpha, out, cubeMathType,
                        workspaceSize, executor);
}

aclnnStatus aclnnAddmm(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnAddmm", workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnInplaceAddmmGetWorkspaceSize(const aclTensor *selfRef, const aclTensor *mat1, const aclTensor *mat2,
                                              const aclScalar *beta, const aclScalar *alpha, int8_t cubeMathType,
                                              uint64_t *workspaceSize, aclOpExecutor **executor) {
    return addmm_common("aclnnInplaceAddmmGetWorkspaceSize", "InplaceAddmm", selfRef, mat1, mat2, beta, alpha,
                        (aclTensor *)selfRef, cubeMathType, workspaceSize, executor);
}

aclnnStatus aclnnInplaceAddmm(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnInplaceAddmm", workspace, workspaceSize, executor, stream);
}
