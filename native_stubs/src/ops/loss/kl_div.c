/*
 * KL divergence (kl_div.toml): aclnnKlDiv (hicann/ops-math math/kl_div_v2, op_kernel/kl_div_v2_dag.h) and
 * aclnnKlDivBackward (hicann/ops-nn loss/kl_div_loss_grad, op_kernel/arch35/kl_div_loss_grad_dag.h), self and target
 * broadcast, every step in fp32 (fp16/bf16 widened exactly):
 *   KlDiv: logTarget false: t * (Ln(t != 0 ? t : 1) - x); true: Exp(t) * (t - x). none: each rounded (RINT) to the
 *     promoted dtype, then cast to out; sum: the fp32 sum; mean / batchmean: that sum times meanVar, fp32(1 / n) or
 *     fp32(1 / dim0) of the broadcast shape (the tiling's, from double); one RINT cast. An empty self or target
 *     fills out with NaN (mean, batchmean over an empty batch) or 0 (the op_api's FillScalar).
 *   KlDivBackward: ((t * g) * -1) * cof, or ((Exp(t) * g) * -1) * cof for logTarget, cof = fp32(1 / n) (mean),
 *     fp32(1 / dim0) (batchmean) of the broadcast shape, 1 otherwise (any other reduction is "none"); gradOutput
 *     and target broadcast to it. All three FLOAT16: the result rounded (RINT) to FLOAT16 by the kernel, else the
 *     inputs are cast to FLOAT first. Where self is smaller than the broadcast shape the op_api's ReduceSum brings
 *     the gradient to self's shape (fp32 sums in element order here), then the cast to out.
 * Ln / Exp: libm in double rounded to fp32 (kernels/vecmath.h). The forward's sum is fp32 in element order (the
 * vendor's reduce splits it over cores in an order it does not publish).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/vecmath.h"
#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"

enum { KL_NONE = 0, KL_MEAN = 1, KL_SUM = 2, KL_BATCHMEAN = 3 };

typedef struct {
    int grad, log_target, fill;              /* fill: an empty input, out gets fill_value everywhere   */
    float fill_value, cof;
    int64_t reduction, n, ndim;
    int64_t shape[PYACLNN_STUB_MAX_DIMS];    /* the broadcast shape                                    */
    aclDataType compute;                     /* the dtype results are rounded to before out's          */
} kl_plan;

/* ---- kernels -------------------------------------------------------------------------------- */

static float kl_round(float v, aclDataType dt) {
    return (float)ew_value_to_double(ew_cast((ew_value){.f = v}, ACL_FLOAT, dt), dt);
}

/* Adds v (over the plan's shape, row-major) into acc, out's shape aligned right (its size-1 dims summed over). */
static void kl_reduce_into(const kl_plan *p, const pyaclnn_stub_tensor *out, const float *v, float *acc) {
    int64_t st[PYACLNN_STUB_MAX_DIMS], idx[PYACLNN_STUB_MAX_DIMS] = {0}, lead = p->ndim - out->ndim, off = 0, step = 1;
    for (int64_t d = p->ndim - 1; d >= 0; d--) {
        int64_t size = d < lead ? 1 : out->shape[d - lead];
        st[d] = size == 1 ? 0 : step;
        step *= size;
    }
    for (int64_t k = 0; k < p->n; k++) {
        acc[off] += v[k];
        for (int64_t d = p->ndim - 1; d >= 0; d--) {
            off += st[d];
            if (++idx[d] < p->shape[d]) break;
            off -= st[d] * idx[d];
            idx[d] = 0;
        }
    }
}

void kl_div_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const kl_plan *p = launch->params;
    const pyaclnn_stub_tensor *out = &launch->outputs[0];
    int64_t m = pyaclnn_stub_numel(out);
    float *x = NULL, *t = NULL, *g = NULL, *r = tv_alloc(m, sizeof(float)), *v = tv_alloc(p->n, sizeof(float));
    if (!p->fill) {
        x = tv_load_float_as(&launch->inputs[0], p->shape, p->ndim);
        t = tv_load_float_as(&launch->inputs[1], p->shape, p->ndim);
        if (p->grad) g = tv_load_float_as(&launch->inputs[2], p->shape, p->ndim);
    }
    if (r == NULL || v == NULL || (!p->fill && (x == NULL || t == NULL || (p->grad && g == NULL)))) {
        tv_fail_oom(launch);
        goto done;
    }
    float sum = 0.0f;
    for (int64_t k = 0; !p->fill && k < p->n; k++) {
        if (p->grad) {
            v[k] = ((p->log_target ? vm_exp(t[k]) * g[k] : t[k] * g[k]) * -1.0f) * p->cof;
            v[k] = kl_round(v[k], p->compute);   /* the kernel's output (FLOAT, or FLOAT16 for all-FLOAT16) */
        } else {
            v[k] = p->log_target ? vm_exp(t[k]) * (t[k] - x[k]) : t[k] * (vm_ln(t[k] != 0.0f ? t[k] : 1.0f) - x[k]);
            sum += v[k];
        }
    }
    if (p->fill) {
        for (int64_t k = 0; k < m; k++) r[k] = p->fill_value;
    } else if (p->grad || p->reduction == KL_NONE) {
        if (m == p->n) memcpy(r, v, sizeof(float) * (size_t)m);
        else {
            memset(r, 0, sizeof(float) * (size_t)m);
            kl_reduce_into(p, out, v, r);
        }
    } else {
        for (int64_t k = 0; k < m; k++) r[k] = p->reduction == KL_SUM ? sum : sum * p->cof;
    }
    for (int64_t k = 0; k < m; k++) r[k] = kl_round(r[k], p->compute);
    tv_store_float(out, r);
done:
    free(x);
    free(t);
    free(g);
    free(r);
    free(v);
}

/* ---- steps ---------------------------------------------------------------------------------- */

/* The broadcast shape of a and b (0-d ones as [1] when `unsqueeze`); 0 with the vendor's message (names na, nb) if
 * they do not broadcast. */
static int kl_broadcast(op_call *c, const pyaclnn_stub_tensor *a, const char *na, const pyaclnn_stub_tensor *b,
                        const char *nb, int unsqueeze, int64_t *shape, int64_t *ndim) {
    int64_t one = 1;
    const int64_t *sa = a->ndim == 0 && unsqueeze ? &one : a->shape, *sb = b->ndim == 0 && unsqueeze ? &one : b->shape;
    int64_t ra = a->ndim == 0 && unsqueeze ? 1 : a->ndim, rb = b->ndim == 0 && unsqueeze ? 1 : b->ndim;
    int64_t n = ra > rb ? ra : rb;
    for (int64_t d = 0; d < n; d++) {
        int64_t da = d - (n - ra), db = d - (n - rb), xa = da >= 0 ? sa[da] : 1, xb = db >= 0 ? sb[db] : 1;
        if (xa != xb && xa != 1 && xb != 1) {
            char x[200], y[200];
            op_invalidf(c->api, "The size of tensor %s %s must match the size of tensor %s %s.", na,
                        tv_shape_text(sa, ra, x, sizeof x), nb, tv_shape_text(sb, rb, y, sizeof y));
            return 0;
        }
        shape[d] = xa == 1 ? xb : xa;
    }
    *ndim = n;
    return 1;
}

static kl_plan *kl_plan_new(op_call *c, int64_t reduction, int log_target, const int64_t *shape, int64_t ndim) {
    kl_plan *p = op_params(c, sizeof *p);
    memset(p, 0, sizeof *p);
    p->reduction = reduction;
    p->log_target = log_target;
    p->ndim = ndim;
    memcpy(p->shape, shape, sizeof *shape * (size_t)ndim);
    p->n = tv_dims_product(shape, 0, ndim);
    int64_t div = reduction == KL_MEAN ? p->n : reduction == KL_BATCHMEAN && ndim > 0 ? shape[0] : 1;
    p->cof = (float)(1.0 / (double)div);
    return p;
}

/* kl_plan self target reduction logTarget out: KlDiv's. An empty self or target fills out (NaN for mean and for
 * batchmean over an empty dim 0, else 0; reduction 0 launches nothing); self and target (0-d as [1]) broadcast
 * ("selfUnsqueeze" / "targetUnsqueeze", the op_api's names); reduction 0: out of the broadcast shape ([] when both
 * are 0-d: OP_CHECK_SHAPE_NOT_EQUAL_WITH_EXPECTED_SIZE); else out [] or of one element (CheckReduceOutShape). */
aclnnStatus opc_kl_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0), *target = op_tensor(c, s, 1), *out = op_tensor(c, s, 4);
    int64_t reduction = op_argument(c, s, 2)->i, shape[PYACLNN_STUB_MAX_DIMS], ndim;
    int log_target = op_argument(c, s, 3)->i != 0;
    if (pyaclnn_stub_numel(self) == 0 || pyaclnn_stub_numel(target) == 0) {
        kl_plan *p = kl_plan_new(c, reduction, log_target, self->shape, 0);
        p->fill = 1;
        p->fill_value = reduction == KL_MEAN || (reduction == KL_BATCHMEAN && self->shape[0] == 0) ? NAN : 0.0f;
        p->compute = out->dtype;
        if (reduction == KL_NONE || pyaclnn_stub_numel(out) == 0) c->nothing = 1;
        return ACLNN_SUCCESS;
    }
    if (!kl_broadcast(c, self, "selfUnsqueeze", target, "targetUnsqueeze", 1, shape, &ndim))
        return ACLNN_ERR_PARAM_INVALID;
    if (reduction == KL_NONE) {
        aclnnStatus rc = op_expected_size(c->api, op_pname(c, s, 4), out, shape, self->ndim == 0 && target->ndim == 0 ? 0 : ndim);
        if (rc) return rc;
    } else if (out->ndim != 0 && pyaclnn_stub_numel(out) != 1) {
        char a[200];
        return op_invalidf(c->api, "The out tensor's shape%s is not equal with inferOut shape[].",
                           tv_shape_text(out->shape, out->ndim, a, sizeof a));
    }
    kl_plan *p = kl_plan_new(c, reduction, log_target, shape, ndim);
    p->compute = ew_promote(self->dtype, target->dtype);
    return ACLNN_SUCCESS;
}

/* kl_grad_plan gradOutput self target reduction logTarget out: KlDivBackward's CheckShape (self and target
 * broadcast; gradOutput broadcasts to that shape; out of self's shape), then the plan (nothing for an empty self). */
aclnnStatus opc_kl_grad_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *g = op_tensor(c, s, 0), *self = op_tensor(c, s, 1), *target = op_tensor(c, s, 2);
    const pyaclnn_stub_tensor *out = op_tensor(c, s, 5);
    int64_t shape[PYACLNN_STUB_MAX_DIMS], ndim;
    if (!kl_broadcast(c, self, op_pname(c, s, 1), target, op_pname(c, s, 2), 0, shape, &ndim))
        return ACLNN_ERR_PARAM_INVALID;
    char x[200], y[200], z[200];
    int same = g->ndim <= ndim;   /* BroadcastInferShape(gradOutput, shape) gives shape */
    for (int64_t d = 0; same && d < g->ndim; d++) {
        int64_t gd = g->shape[d], sd = shape[d + ndim - g->ndim];
        same = gd == sd || gd == 1;
    }
    if (!same)
        return op_invalidf(c->api, "Except shape of gradOutput must broadcast to %s, but current is %s.",
                           tv_shape_text(shape, ndim, x, sizeof x), tv_shape_text(g->shape, g->ndim, y, sizeof y));
    int eq = out->ndim == self->ndim;
    for (int64_t d = 0; eq && d < self->ndim; d++) eq = out->shape[d] == self->shape[d];
    if (!eq)
        return op_invalidf(c->api, "Expected tensor for self to have same size as tensor for out, but %s does not equal "
                           "%s.", tv_shape_text(self->shape, self->ndim, y, sizeof y),
                           tv_shape_text(out->shape, out->ndim, z, sizeof z));
    if (pyaclnn_stub_numel(self) == 0) {
        c->nothing = 1;
        return ACLNN_SUCCESS;
    }
    int64_t reduction = op_argument(c, s, 3)->i;
    kl_plan *p = kl_plan_new(c, reduction >= KL_MEAN && reduction <= KL_BATCHMEAN ? reduction : KL_NONE,
                             op_argument(c, s, 4)->i != 0, shape, ndim);
    p->grad = 1;
    p->compute = g->dtype == ACL_FLOAT16 && self->dtype == ACL_FLOAT16 && target->dtype == ACL_FLOAT16 ? ACL_FLOAT16
                                                                                                       : ACL_FLOAT;
    return ACLNN_SUCCESS;
}
