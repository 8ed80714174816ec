/*
 * The vector and batch-reduced products of blas.toml: aclnnDot, aclnnTrace, aclnnAddr / aclnnInplaceAddr (vector
 * unit operators of hicann/ops-math), aclnnAddbmm (hicann/ops-nn batch_mat_mul_v3: the matmul engine's fp32
 * product, src/kernels/matmul.h). aclnnMv is matmul.c's steps on the engine (blas.toml).
 *
 * Arithmetic, per operator (the fidelity notes in blas.toml):
 *   Dot: the vendor's DAG (math/dot/op_kernel/arch35/dot_dag.h): fp16/bf16/fp32 widened to fp32, fp32 products,
 *     a ReduceSum in fp32 whose order is the reduce template's (not modelled: the products are summed in double
 *     and rounded once to fp32), then RINT to the dtype (class c). INT8/UINT8 (DotDagI8<int8_t, int32_t>): int32
 *     products and sums, the low byte kept (DIST_PACK4_B32); INT32: int32 wrap (exact).
 *   Trace: fp16/bf16 cast to FLOAT (the op_api), the diagonal summed (in double here, rounded once: class c);
 *     integers to INT64 (exact), DOUBLE in double.
 *   Addr: see addr_kernel.
 *   Addbmm: see addbmm_kernel.
 */
#include <stdlib.h>
#include <string.h>

#include "kernels/matmul.h"
#include "opbase/checks.h"
#include "ops_decls.h"

/* ---- Dot ------------------------------------------------------------------------------------------------ */

/* dot_shape self tensor out: aclnn_dot.cpp's CheckShape (1-D operands of one length, a 0-D out). */
aclnnStatus opc_dot_shape(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *a = op_tensor(c, s, 0), *b = op_tensor(c, s, 1), *out = op_tensor(c, s, 2);
    char x[200], y[200];
    if (a->ndim != 1 || b->ndim != 1)
        return op_invalidf(c->api, "expected 1D input tensors, but got %s and %s tensors.",
                           tv_shape_text(a->shape, a->ndim, x, sizeof x), tv_shape_text(b->shape, b->ndim, y, sizeof y));
    if (a->shape[0] != b->shape[0])
        return op_invalidf(c->api, "expected consistent tensor size, but got %s and %s tensors.",
                           tv_shape_text(a->shape, a->ndim, x, sizeof x), tv_shape_text(b->shape, b->ndim, y, sizeof y));
    if (out->ndim != 0)
        return op_invalidf(c->api, "expected 0D output tensor, but got %s tensor.",
                           tv_shape_text(out->shape, out->ndim, x, sizeof x));
    return ACLNN_SUCCESS;
}

void dot_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const pyaclnn_stub_tensor *a = &launch->inputs[0], *b = &launch->inputs[1], *out = &launch->outputs[0];
    aclDataType dt = a->dtype;
    int64_t n = a->shape[0];
    double sum = 0.0;
    uint32_t isum = 0;   /* int32 two's complement */
    for (int64_t i = 0; i < n; i++) {
        ew_value x = ew_load(tv_at(a, a->offset + i * a->strides[0]), dt);
        ew_value y = ew_load(tv_at(b, b->offset + i * b->strides[0]), dt);
        if (ew_repr_of(dt) == EW_REPR_F)
            sum += (double)((float)x.f * (float)y.f);   /* the fp32 product */
        else
            isum += (uint32_t)(int32_t)x.i * (uint32_t)(int32_t)y.i;
    }
    ew_value r;
    if (ew_repr_of(dt) == EW_REPR_F)
        r = ew_cast((ew_value){(double)(float)sum, 0}, ACL_FLOAT, dt);
    else
        r = ew_cast((ew_value){0, (int32_t)isum}, ACL_INT32, dt);   /* INT8/UINT8: the low byte */
    ew_store(tv_at(out, out->offset), dt, r);
}

/* ---- Trace ---------------------------------------------------------------------------------------------- */

/* trace_shape self out: aclnn_trace.cpp's CheckParamValid (a matrix, a 0-D out). */
aclnnStatus opc_trace_shape(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0), *out = op_tensor(c, s, 1);
    char x[200];
    if (self->ndim != 2)
        return op_invalidf(c->api, "trace: expected a matrix, but got tensor with dim %lld", (long long)self->ndim);
    if (out->ndim != 0)
        return op_invalidf(c->api, "expected 0D output tensor, but got %s tensor.",
                           tv_shape_text(out->shape, out->ndim, x, sizeof x));
    return ACLNN_SUCCESS;
}

/* trace_out self out: out's dtype is INT64 for integral (and BOOL) self, else self's (OP_CHECK_DTYPE_NOT_MATCH). */
aclnnStatus opc_trace_out(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0), *out = op_tensor(c, s, 1);
    aclDataType want = ew_is_integral(self->dtype, 1) ? ACL_INT64 : self->dtype;
    if (out->dtype == want) return ACLNN_SUCCESS;
    char a[24], b[24];
    return op_invalidf(c->api, "Tensor %s expected dtype is %s but found %s.", op_pname(c, s, 1), op_dtype_name(want, a),
                       op_dtype_name(out->dtype, b));
}

void trace_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const pyaclnn_stub_tensor *self = &launch->inputs[0], *out = &launch->outputs[0];
    int64_t n = self->shape[0] < self->shape[1] ? self->shape[0] : self->shape[1];
    double sum = 0.0;
    uint64_t isum = 0;
    for (int64_t i = 0; i < n; i++) {
        ew_value v = ew_load(tv_at(self, self->offset + i * (self->strides[0] + self->strides[1])), self->dtype);
        if (ew_repr_of(self->dtype) == EW_REPR_F) sum += v.f;
        else isum += (uint64_t)v.i;
    }
    ew_value r;
    if (out->dtype == ACL_INT64) r = (ew_value){0, (int64_t)isum};
    else if (out->dtype == ACL_DOUBLE) r = (ew_value){sum, 0};
    else r = ew_cast((ew_value){(double)(float)sum, 0}, ACL_FLOAT, out->dtype);   /* FLOAT, then RINT to fp16/bf16 */
    ew_store(tv_at(out, out->offset), out->dtype, r);
}

/* ---- Addr ----------------------------------------------------------------------------------------------- */

typedef struct {
    aclDataType high;      /* op::PromoteType(self, vec2, vec1): the dtype of every step            */
    int fused;             /* Ascend 950's Addr kernel (arch35 addr_dag.h): FLOAT FLOAT16 BF16 INT8 UINT8 BOOL */
    int mode;              /* 0 all terms, 1 beta ignored (beta NULL or 1), 2 self ignored (beta 0), 3 alpha 0 (fused) */
    int scale_vec1;        /* the composite path multiplies vec1 by alpha (alpha != 1)             */
    ew_value alpha, beta;  /* converted to high                                                    */
} addr_params;

/* addr_scalars self vec1 vec2 betaOptional alphaOptional: aclnn_addr.cpp's CheckBetaAndAlphaDtyeValid. */
aclnnStatus opc_addr_scalars(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0), *v1 = op_tensor(c, s, 1), *v2 = op_tensor(c, s, 2);
    aclDataType high = ew_promote(self->dtype, ew_promote(v2->dtype, v1->dtype));
    int all_int = ew_is_integral(self->dtype, 1) && ew_is_integral(v1->dtype, 1) && ew_is_integral(v2->dtype, 1);
    const op_scalar *beta = op_scalar_of(c, s, 3), *alpha = op_scalar_of(c, s, 4);
    int has_b = beta->dtype != ACL_DT_UNDEFINED, has_a = alpha->dtype != ACL_DT_UNDEFINED;
    if (has_b && high != ACL_BOOL && beta->dtype == ACL_BOOL)
        return op_invalidf(c->api, "Boolean beta only supported for Boolean results.");
    if (has_a && high != ACL_BOOL && alpha->dtype == ACL_BOOL)
        return op_invalidf(c->api, "Boolean alpha only supported for Boolean results.");
    if (all_int && has_b && !ew_is_integral(beta->dtype, 1))
        return op_invalidf(c->api, "For integral input tensors, argument beta must not be a floating point number");
    if (all_int && has_a && !ew_is_integral(alpha->dtype, 1))
        return op_invalidf(c->api, "For integral input tensors, argument alpha must not be a floating point number");
    return ACLNN_SUCCESS;
}

/* addr_plan self vec1 vec2 betaOptional alphaOptional out: aclnn_addr.cpp's CheckShape (vec1 / vec2 1-D, self at
 * most 2-D, and 2-D when it is out (InplaceAddr), self broadcast to [len(vec1), len(vec2)]) and addrOutHandle's
 * out shape; empty vectors launch nothing; then the parameters of addrProc's path. */
aclnnStatus opc_addr_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0), *v1 = op_tensor(c, s, 1), *v2 = op_tensor(c, s, 2);
    const pyaclnn_stub_tensor *out = op_tensor(c, s, 5);
    char x[200], y[200], z[200];
    for (int k = 1; k <= 2; k++) {
        const pyaclnn_stub_tensor *t = op_tensor(c, s, k);
        if (t->ndim != 1)
            return op_invalidf(c->api, "%s dim should be 1, but got %lld.", op_pname(c, s, k), (long long)t->ndim);
    }
    if (self->ndim > 2)
        return op_invalidf(c->api, "The %s tensor cannot be larger than 2 dimensions.", op_pname(c, s, 0));
    int inplace = c->arg[s->p[0]].p == c->arg[s->p[5]].p;
    if (inplace && self->ndim != 2)
        return op_invalidf(c->api, "%s dim should be 2, but got %lld.", op_pname(c, s, 0), (long long)self->ndim);
    int64_t outer[2] = {v1->shape[0], v2->shape[0]}, bc[2];
    int ok = 1;
    for (int d = 0; d < 2; d++) {
        int64_t sd = d - (2 - self->ndim), v = sd >= 0 ? self->shape[sd] : 1;
        if (v != outer[d] && v != 1 && outer[d] != 1) ok = 0;
        bc[d] = v == 1 ? outer[d] : v;
    }
    if (inplace) {
        bc[0] = self->shape[0];
        bc[1] = self->shape[1];
    } else if (!ok) {
        return op_invalidf(c->api, "the size of tensor self %s must match the size of tensor outer %s.",
                           tv_shape_text(self->shape, self->ndim, x, sizeof x), tv_shape_text(outer, 2, y, sizeof y));
    }
    if (bc[0] != outer[0] || bc[1] != outer[1])
        return op_invalidf(c->api, "size mismatch, input: %s, v1: %s, v2: %s", tv_shape_text(bc, 2, x, sizeof x),
                           tv_shape_text(v1->shape, 1, y, sizeof y), tv_shape_text(v2->shape, 1, z, sizeof z));
    if (outer[0] == 0 || outer[1] == 0) {   /* the vendor's early return: nothing is written */
        c->nothing = 1;
        return ACLNN_SUCCESS;
    }
    aclnnStatus rc = op_expected_size(c->api, op_pname(c, s, 5), out, outer, 2);
    if (rc) return rc;
    addr_params *p = op_params(c, sizeof *p);
    p->high = ew_promote(self->dtype, ew_promote(v2->dtype, v1->dtype));
    p->fused = ew_soc_is_950() && (p->high == ACL_FLOAT || p->high == ACL_FLOAT16 || p->high == ACL_BF16 ||
                                   p->high == ACL_INT8 || p->high == ACL_UINT8 || p->high == ACL_BOOL);
    const op_scalar *beta = op_scalar_of(c, s, 3), *alpha = op_scalar_of(c, s, 4);
    double b = beta->dtype == ACL_DT_UNDEFINED ? 1.0 : (float)ew_value_to_double(beta->v, beta->dtype);
    double a = alpha->dtype == ACL_DT_UNDEFINED ? 1.0 : (float)ew_value_to_double(alpha->v, alpha->dtype);
    p->alpha = alpha->dtype == ACL_DT_UNDEFINED ? ew_cast((ew_value){1.0, 1}, ACL_INT64, p->high)
                                                : ew_cast(alpha->v, alpha->dtype, p->high);
    p->beta = beta->dtype == ACL_DT_UNDEFINED ? ew_cast((ew_value){1.0, 1}, ACL_INT64, p->high)
                                              : ew_cast(beta->v, beta->dtype, p->high);
    p->scale_vec1 = a != 1.0;
    if (p->fused) p->mode = a == 0.0 ? 3 : b == 0.0 ? 2 : 0;    /* the tiling's three DAGs */
    else p->mode = b == 0.0 ? 2 : b == 1.0 ? 1 : 0;              /* addrStub's OuterExpandMode */
    return ACLNN_SUCCESS;
}

/* One step of the composite path in dtype `dt` (each l0 Mul / Add rounds to it; BOOL: LogicalAnd / LogicalOr). */
static ew_value addr_mul(ew_value x, ew_value y, aclDataType dt) {
    if (dt == ACL_BOOL) return (ew_value){0, x.i && y.i};
    if (ew_repr_of(dt) == EW_REPR_F) return ew_cast((ew_value){x.f * y.f, 0}, ACL_DOUBLE, dt);
    return ew_cast((ew_value){0, (int64_t)((uint64_t)x.i * (uint64_t)y.i)}, ACL_INT64, dt);
}

static ew_value addr_add(ew_value x, ew_value y, aclDataType dt) {
    if (dt == ACL_BOOL) return (ew_value){0, x.i || y.i};
    if (ew_repr_of(dt) == EW_REPR_F) return ew_cast((ew_value){x.f + y.f, 0}, ACL_DOUBLE, dt);
    return ew_cast((ew_value){0, (int64_t)((uint64_t)x.i + (uint64_t)y.i)}, ACL_INT64, dt);
}

/*
 * out[i, j] = beta * self[i, j] + (alpha * vec1[i]) * vec2[j], every operand cast to the promoted dtype first.
 *   Ascend 950, FLOAT FLOAT16 BF16 INT8 UINT8 BOOL (the Addr kernel, addr_dag.h): fp16 / bf16 widened to fp32, every
 *     step an fp32 operation (Muls, Mul, Muls, Add), one RINT to the dtype at the end; INT8 / UINT8 in int32 with
 *     the low byte kept (& 0xFF); alpha 0 -> beta * self, beta 0 -> the product alone. Class b.
 *   Otherwise (Atlas A2, and DOUBLE / INT16 / INT32 / INT64 on 950) addrStub's l0 Mul / Add in the promoted dtype,
 *     each rounded to it; alpha 1 skips its Mul, beta 1 (or NULL) its Muls, beta 0 drops self. Class b.
 * The result is then cast to out's dtype.
 */
void addr_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const addr_params *p = launch->params;
    const pyaclnn_stub_tensor *self = &launch->inputs[0], *v1 = &launch->inputs[1], *v2 = &launch->inputs[2];
    const pyaclnn_stub_tensor *out = &launch->outputs[0];
    int64_t n = v1->shape[0], m = v2->shape[0], ss[2];
    tv_broadcast_strides(self, 2, ss);
    aclDataType h = p->high;
    /* the fused kernel's compute dtype: fp32 for the floats, int32 (low byte kept) for the 8-bit integers */
    aclDataType k = !p->fused ? h : ew_repr_of(h) == EW_REPR_F ? ACL_FLOAT : h == ACL_BOOL ? ACL_BOOL : ACL_INT32;
    ew_value alpha = ew_cast(p->alpha, h, k), beta = ew_cast(p->beta, h, k);
    tv_iter it;
    tv_iter_init(&it, out);
    for (int64_t i = 0; i < n; i++) {
        ew_value a = ew_cast(ew_cast(ew_load(tv_at(v1, v1->offset + i * v1->strides[0]), v1->dtype), v1->dtype, h), h, k);
        for (int64_t j = 0; j < m; j++, tv_iter_next(&it)) {
            ew_value b = ew_cast(ew_cast(ew_load(tv_at(v2, v2->offset + j * v2->strides[0]), v2->dtype), v2->dtype, h), h, k);
            ew_value x = ew_cast(ew_cast(ew_load(tv_at(self, self->offset + i * ss[0] + j * ss[1]), self->dtype),
                                         self->dtype, h), h, k);
            ew_value r;
            if (p->fused) {
                ew_value prod = addr_mul(addr_mul(a, alpha, k), b, k), sx = addr_mul(x, beta, k);
                r = p->mode == 3 ? sx : p->mode == 2 ? prod : addr_add(sx, prod, k);
                if (h == ACL_INT8 || h == ACL_UINT8) r.i &= 0xFF;
                r = ew_cast(r, k, h);
            } else {
                ew_value prod = addr_mul(p->scale_vec1 ? addr_mul(alpha, a, h) : a, b, h);
                r = p->mode == 2 ? prod : addr_add(p->mode == 1 ? x : addr_mul(x, beta, h), prod, h);
            }
            ew_store(tv_at(out, it.off), out->dtype, ew_cast(r, h, out->dtype));
        }
    }
}

/* ---- Addbmm --------------------------------------------------------------------------------------------- */

typedef struct {
    mm_plan mm;            /* m, n, k = batch * k of one product; bias, alpha, beta */
    int64_t batch, k1;     /* batch1's batch and k dims                             */
    int alpha_zero;        /* AddbmmAlpha0Graph: beta * self alone                  */
} addbmm_params;

/* addbmm_plan self batch1 batch2 beta alpha out cubeMathType: aclnn_addbmm.cpp's CheckShape and CheckBroadCast, in
 * order, with its messages; then the plan (an empty product launches nothing). */
aclnnStatus opc_addbmm_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0), *b1 = op_tensor(c, s, 1), *b2 = op_tensor(c, s, 2);
    const pyaclnn_stub_tensor *out = op_tensor(c, s, 5);
    char x[200], y[200];
    for (int k = 1; k <= 2; k++) {
        const pyaclnn_stub_tensor *t = op_tensor(c, s, k);
        if (t->ndim != 3)
            return op_invalidf(c->api, "%s dim should be 3, but got %lld.", op_pname(c, s, k), (long long)t->ndim);
    }
    if (b1->shape[2] != b2->shape[1])
        return op_invalidf(c->api, "batch1's last dim and batch2's penultimate dim shoule be same, batch1 [%lld], "
                           "batch2 [%lld].", (long long)b1->shape[2], (long long)b2->shape[1]);
    if (b1->shape[0] != b2->shape[0] && b1->shape[0] != 1 && b2->shape[0] != 1)
        return op_invalidf(c->api, "self's batch dim and mat2's batch dim can not broadcast");
    int self_empty = pyaclnn_stub_numel(self) == 0, mat_empty = b1->shape[1] == 0 || b2->shape[2] == 0;
    if (self_empty != mat_empty)
        return op_invalidf(c->api, "self and batch1@batch2's last two dims should be both empty or not, self is [%d], "
                           "batch1@batch2 is [%d]", self_empty, mat_empty);
    if (self->ndim > 2)
        return op_invalidf(c->api, "The %s tensor cannot be larger than 2 dimensions.", op_pname(c, s, 0));
    int64_t mn[2] = {b1->shape[1], b2->shape[2]}, bc[2];
    for (int d = 0; d < 2; d++) {
        int64_t sd = d - (2 - self->ndim), v = sd >= 0 ? self->shape[sd] : 1;
        if (v != mn[d] && v != 1 && mn[d] != 1)
            return op_invalidf(c->api, "Shape of self and batch1@batch2's last two dims can't broadcast.");
        bc[d] = v == 1 ? mn[d] : v;
    }
    int same = out->ndim == 2 && out->shape[0] == bc[0] && out->shape[1] == bc[1];
    if (!same)
        return op_invalidf(c->api, "Shape of out should be %s, but current is %s.", tv_shape_text(bc, 2, x, sizeof x),
                           tv_shape_text(out->shape, out->ndim, y, sizeof y));
    if (bc[0] != mn[0] || bc[1] != mn[1])
        return op_invalidf(c->api, "Shape of out should be %s, but current is %s.", tv_shape_text(mn, 2, x, sizeof x),
                           tv_shape_text(bc, 2, y, sizeof y));
    if (mat_empty) {
        c->nothing = 1;
        return ACLNN_SUCCESS;
    }
    addbmm_params *p = op_params(c, sizeof *p);
    const op_scalar *beta = op_scalar_of(c, s, 3), *alpha = op_scalar_of(c, s, 4);
    p->batch = b1->shape[0] > b2->shape[0] ? b1->shape[0] : b2->shape[0];
    p->k1 = b1->shape[2];
    p->mm.m = mn[0];
    p->mm.n = mn[1];
    p->mm.k = p->batch * p->k1;
    p->mm.has_bias = 1;
    p->mm.beta = (float)ew_value_to_double(beta->v, beta->dtype);
    p->mm.alpha = (float)ew_value_to_double(alpha->v, alpha->dtype);
    p->mm.fp16_inputs = mm_rounds_to_fp16(b1->dtype, b2->dtype, op_argument(c, s, 6)->i);
    p->alpha_zero = p->mm.alpha == 0.0f;
    return ACLNN_SUCCESS;
}

/* A [batch, rows, cols] operand's fp32 elements, a batch of 1 repeated (cubeMathType USE_FP16: rounded to fp16). */
static float *load_batch(const pyaclnn_stub_tensor *t, int64_t batch, int round_fp16) {
    int64_t shape[3] = {batch, t->shape[1], t->shape[2]}, n = batch * t->shape[1] * t->shape[2];
    float *v = tv_load_float_as(t, shape, 3);
    for (int64_t i = 0; v && round_fp16 && i < n; i++) v[i] = (float)ew_cast((ew_value){v[i], 0}, ACL_FLOAT, ACL_FLOAT16).f;
    return v;
}

/*
 * out = beta * self + alpha * sum_b batch1[b] @ batch2[b] on the matmul engine: the batch of products is one
 * product of batch1 laid out as [m, batch * k] and batch2 as [batch * k, n], so every output element is one fp32
 * sum of batch * k fp32 products in (b, k) order, then beta * self + alpha * sum in fp32, rounded once to out
 * (the vendor rounds each product to the dtype in its BatchMatMul, sums them in a ReduceSum and adds with Axpy:
 * class c, within the engine's bound with k = batch * k). alpha 0: beta * self (products ignored, as the vendor's
 * AddbmmAlpha0Graph); beta 0: self ignored.
 */
void addbmm_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const addbmm_params *p = launch->params;
    const pyaclnn_stub_tensor *b1 = &launch->inputs[0], *b2 = &launch->inputs[1], *self = &launch->inputs[2];
    const pyaclnn_stub_tensor *out = &launch->outputs[0];
    int64_t m = p->mm.m, n = p->mm.n, k1 = p->k1, nb = p->batch, mn[2] = {m, n};
    float *A1 = load_batch(b1, nb, p->mm.fp16_inputs), *B = load_batch(b2, nb, p->mm.fp16_inputs);
    float *A = tv_alloc(m * p->mm.k, sizeof(float)), *C = tv_alloc(m * n, sizeof(float));
    float *bias = tv_load_float_as(self, mn, 2);
    if (A1 == NULL || B == NULL || A == NULL || C == NULL || bias == NULL) {
        tv_fail_oom(launch);
    } else {
        for (int64_t b = 0; b < nb; b++)   /* [b, m, k] -> [m, b * k] */
            for (int64_t i = 0; i < m; i++) memcpy(A + i * p->mm.k + b * k1, A1 + (b * m + i) * k1, (size_t)k1 * sizeof(float));
        mm_f32(A, 0, B, 0, C, 0, 1, m, p->mm.k, n);
        for (int64_t i = 0; i < m * n; i++)
            C[i] = p->alpha_zero ? p->mm.beta * bias[i]
                 : p->mm.beta == 0.0f ? p->mm.alpha * C[i] : p->mm.beta * bias[i] + p->mm.alpha * C[i];
        tv_store_float(out, C);
    }
    free(A1);
    free(B);
    free(A);
    free(C);
    free(bias);
}

/* ---- Mv ------------------------------------------------------------------------------------------------- */

/* mv_dtype self vec out: aclnn_mv.cpp's CheckDtypeSame (out and vec one dtype; self too unless it is empty). */
aclnnStatus opc_mv_dtype(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0), *vec = op_tensor(c, s, 1), *out = op_tensor(c, s, 2);
    const pyaclnn_stub_tensor *pairs[2][2] = {{out, vec}, {self, vec}};
    int names[2][2] = {{2, 1}, {0, 1}};
    for (int k = 0; k < 2; k++) {
        if (k == 1 && pyaclnn_stub_numel(self) == 0) break;
        if (pairs[k][0]->dtype == pairs[k][1]->dtype) continue;
        char x[24], y[24];
        return op_invalidf(c->api, "Expected both tensors to have same dtype, but found %s %s and %s %s.",
                           op_pname(c, s, names[k][0]), op_dtype_name(pairs[k][0]->dtype, x),
                           op_pname(c, s, names[k][1]), op_dtype_name(pairs[k][1]->dtype, y));
    }
    return ACLNN_SUCCESS;
}

/* mv_shape self vec out: vec has [self's dim 1] and out [self's dim 0] (OP_CHECK_SHAPE_NOT_EQUAL_WITH_EXPECTED_SIZE). */
aclnnStatus opc_mv_shape(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0);
    aclnnStatus rc = op_expected_size(c->api, op_pname(c, s, 1), op_tensor(c, s, 1), &self->shape[1], 1);
    return rc ? rc : op_expected_size(c->api, op_pname(c, s, 2), op_tensor(c, s, 2), &self->shape[0], 1);
}
