/*
 * The steps of aclnnMatmul (torch.matmul shapes), aclnnMm (2-D), aclnnBatchMatMul (3-D), aclnnAddmm /
 * aclnnInplaceAddmm (beta * self + alpha * (mat1 @ mat2)) (matmul.toml; hicann/ops-nn
 * matmul/{mat_mul_v3,batch_mat_mul_v3}/op_host/op_api). The kernel and the shape rules are the matmul
 * engine's (src/kernels/matmul.h: fp32 accumulation, class c).
 */
#include "kernels/matmul.h"
#include "opbase/checks.h"
#include "ops_decls.h"

static aclnnStatus wrong_dim(const char *api, const char *name, const pyaclnn_stub_tensor *t, int64_t want) {
    if (t->ndim == want) return ACLNN_SUCCESS;
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "%s dim should be %lld, but got %lld.", name, (long long)want,
                        (long long)t->ndim);
    return ACLNN_ERR_PARAM_INVALID;
}

/* mm_cube cubeMathType a out: cubeMathType 0..3, and (KEEP_DTYPE) no FLOAT16 out from FLOAT operands. */
aclnnStatus opc_mm_cube(op_call *c, const op_step *s) {
    int8_t cube = (int8_t)op_argument(c, s, 0)->i;
    if (cube < 0 || cube > 3) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "cubeMathType %d is not supported (0 KEEP_DTYPE, 1 "
                            "ALLOW_FP32_DOWN_PRECISION, 2 USE_FP16, 3 USE_HF32)", (int)cube);
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (cube == MM_KEEP_DTYPE && op_tensor(c, s, 2)->dtype == ACL_FLOAT16 && op_tensor(c, s, 1)->dtype == ACL_FLOAT) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api,
                            "Input tensor's dtype[DT_FLOAT] should be same with output's dtype[DT_FLOAT16].");
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

/* mm_ndim p ... N: each operand has exactly N dims. */
aclnnStatus opc_mm_ndim(op_call *c, const op_step *s) {
    for (int k = 0; k < s->np; k++) {
        aclnnStatus rc = wrong_dim(c->api, op_pname(c, s, k), op_tensor(c, s, k), s->n);
        if (rc) return rc;
    }
    return ACLNN_SUCCESS;
}

/* mm_plan a b cubeMathType: the engine's plan for torch.matmul(a, b) shapes (USE_FP16 rounds FLOAT operands
 * to fp16 first); its out shape is the result shape. */
aclnnStatus opc_mm_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *a = op_tensor(c, s, 0);
    mm_plan *plan = op_params(c, sizeof *plan);
    plan->fp16_inputs = op_argument(c, s, 2)->i == MM_USE_FP16 && a->dtype == ACL_FLOAT;
    return mm_plan_make(c->api, a, op_tensor(c, s, 1), plan, c->shape, &c->ndim);
}

/* addmm_bias self beta alpha (after mm_plan): self (at most 2-D) broadcasts to [m, n]; beta and alpha as
 * FLOAT. */
aclnnStatus opc_addmm_bias(op_call *c, const op_step *s) {
    mm_plan *plan = (mm_plan *)c->params;
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0);
    const op_scalar *beta = op_scalar_of(c, s, 1), *alpha = op_scalar_of(c, s, 2);
    plan->has_bias = 1;
    plan->beta = (float)ew_value_to_double(beta->v, beta->dtype);
    plan->alpha = (float)ew_value_to_double(alpha->v, alpha->dtype);
    int64_t bs[PYACLNN_STUB_MAX_DIMS], bn;
    pyaclnn_stub_tensor mn = *self;
    mn.ndim = 2;
    mn.shape[0] = plan->m;
    mn.shape[1] = plan->n;
    aclnnStatus rc = ACLNN_SUCCESS;
    if (self->ndim > 2 || (rc = ew_broadcast(c->api, op_pname(c, s, 0), self, "mat1 @ mat2", &mn, bs, &bn)) ||
        bs[0] != plan->m || bs[1] != plan->n) {
        if (rc == ACLNN_SUCCESS) {
            char t[200];
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "%s shape %s can not broadcast to [%lld, %lld]",
                                op_pname(c, s, 0), tv_shape_text(self->shape, self->ndim, t, sizeof t),
                                (long long)plan->m, (long long)plan->n);
        }
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}
