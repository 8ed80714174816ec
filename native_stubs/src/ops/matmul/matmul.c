/*
 * The steps of aclnnMatmul (torch.matmul shapes), aclnnMm (2-D), aclnnBatchMatMul (3-D), aclnnAddmm /
 * aclnnInplaceAddmm (beta * self + alpha * (mat1 @ mat2)), aclnnBaddbmm (beta * self + alpha * (batch1 @ batch2))
 * (matmul.toml; hicann/ops-nn
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

/* mm_plan a b cubeMathType: the engine's plan for torch.matmul(a, b) shapes (USE_FP16 rounds the operands to fp16
 * first unless both are BF16); its out shape is the result shape. */
aclnnStatus opc_mm_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *a = op_tensor(c, s, 0);
    mm_plan *plan = op_params(c, sizeof *plan);
    plan->fp16_inputs = mm_rounds_to_fp16(a->dtype, op_tensor(c, s, 1)->dtype, op_argument(c, s, 2)->i);
    plan->cube_math_type = (int)op_argument(c, s, 2)->i;
    return mm_plan_make(c->api, a, op_tensor(c, s, 1), plan, c->shape, &c->ndim);
}

/* The plan's bias terms: beta and alpha (operands 1 and 2 of s) as FLOAT. */
static mm_plan *plan_bias(op_call *c, const op_step *s) {
    mm_plan *plan = (mm_plan *)c->params;
    const op_scalar *beta = op_scalar_of(c, s, 1), *alpha = op_scalar_of(c, s, 2);
    plan->has_bias = 1;
    plan->beta = (float)ew_value_to_double(beta->v, beta->dtype);
    plan->alpha = (float)ew_value_to_double(alpha->v, alpha->dtype);
    return plan;
}

/* addmm_bias self beta alpha (after mm_plan): self (at most 2-D) broadcasts to [m, n]; beta and alpha as
 * FLOAT. */
aclnnStatus opc_addmm_bias(op_call *c, const op_step *s) {
    mm_plan *plan = plan_bias(c, s);
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0);
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

/* baddbmm_bias self beta alpha (after mm_plan): beta and alpha as FLOAT (baddbmm_shape checked self). */
aclnnStatus opc_baddbmm_bias(op_call *c, const op_step *s) {
    plan_bias(c, s);
    return ACLNN_SUCCESS;
}

/* baddbmm_shape self batch1 batch2 out: aclnn_baddbmm.cpp's CheckShape and CheckBroadCast in order, with its
 * messages -- batch1 and batch2 3-D, k equal, batch dims equal or 1, self empty exactly when batch1 @ batch2 is,
 * self broadcast with [batch1's b, m, n] is out's shape, and batch1 @ batch2 not broadcast by self. An empty
 * product launches nothing. */
aclnnStatus opc_baddbmm_shape(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0), *b1 = op_tensor(c, s, 1), *b2 = op_tensor(c, s, 2);
    const pyaclnn_stub_tensor *out = op_tensor(c, s, 3);
    char x[200], y[200];
    for (int k = 1; k <= 2; k++) {
        const pyaclnn_stub_tensor *t = op_tensor(c, s, k);
        if (t->ndim != 3)
            return op_invalidf(c->api, "Expected 3 dimension input, but got %s with sizes %s.", op_pname(c, s, k),
                               tv_shape_text(t->shape, t->ndim, x, sizeof x));
    }
    if (b1->shape[2] != b2->shape[1])
        return op_invalidf(c->api, "batch1's last dim and batch2's penultimate dim shoule be same, batch1 [%lld], "
                           "batch2 [%lld].", (long long)b1->shape[2], (long long)b2->shape[1]);
    if (b1->shape[0] != b2->shape[0] && b1->shape[0] != 1 && b2->shape[0] != 1)
        return op_invalidf(c->api, "mat1's batch dim and mat2's batch dim can not broadcast");
    int self_empty = pyaclnn_stub_numel(self) == 0, mat_empty = b1->shape[0] == 0 || b1->shape[1] == 0 || b2->shape[2] == 0;
    if (self_empty != mat_empty)
        return op_invalidf(c->api, "self and batch1@batch2 should be both empty tensors, or not, self is [%d], "
                           "batch1@batch2 is [%d].", self_empty, mat_empty);
    int64_t bmm[3] = {b1->shape[0], b1->shape[1], b2->shape[2]}, shape[PYACLNN_STUB_MAX_DIMS], ndim = 3;
    for (int64_t d = 0; d < 3; d++) {
        int64_t sd = d - (3 - self->ndim), v = sd >= 0 ? self->shape[sd] : 1;
        if (self->ndim > 3 || (v != bmm[d] && v != 1 && bmm[d] != 1))
            return op_invalidf(c->api, "Shape of self and batch1@batch2 can't broadcast.");
        shape[d] = v == 1 ? bmm[d] : v;
    }
    int same = out->ndim == ndim;
    for (int64_t d = 0; same && d < ndim; d++) same = out->shape[d] == shape[d];
    if (!same)
        return op_invalidf(c->api, "Shape of out should be %s, but current is %s.", tv_shape_text(shape, ndim, x, sizeof x),
                           tv_shape_text(out->shape, out->ndim, y, sizeof y));
    for (int64_t d = 0; d < 3; d++)
        if (shape[d] != 1 && bmm[d] == 1)
            return op_invalidf(c->api, "batch1@batch2's shape should be same with broadcastShape, broadcastShape [%s], "   /* the vendor's [%s] of a shape text: [[...]] */
                               "bmmShape [%s]", tv_shape_text(shape, ndim, x, sizeof x), tv_shape_text(bmm, 3, y, sizeof y));
    if (mat_empty) c->nothing = 1;
    return ACLNN_SUCCESS;
}
