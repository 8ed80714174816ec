/*
 * Binary cross entropy (bce_loss.toml): aclnnBinaryCrossEntropy and aclnnBinaryCrossEntropyBackward
 * (hicann/ops-nn loss/binary_cross_entropy, binary_cross_entropy_grad), over self's shape (target, weight and the
 * gradient broadcast to it), every step in fp32 (fp16/bf16 widened exactly, the DAGs' Cast):
 *   BinaryCrossEntropy: l = (y * max(Ln(x), -100) + (1 - y) * max(Ln(1 - x), -100)) * -1, times weight
 *     (CalcBinaryYLogX, Mul); none: l rounded (RINT) to self's dtype; mean: sum of l * fp32(1 / n) (the Muls
 *     before ReduceSum; meanVar); sum: sum of l; one RINT cast. A NaN from Ln passes the clamp (torch's
 *     std::max keeps it too). self empty: out filled with NaN (mean) or 0 (the op_api's Fill).
 *   BinaryCrossEntropyBackward: (g * (x - y)) / max((1 - x) * x, 1e-12) * w * cof, cof = fp32(1 / numel(self))
 *     for mean (CalcMeanCof), none of it for none / sum; rounded (RINT) to the promoted dtype, then cast to out.
 * Ln / Exp are the hardware's (not published): libm in double rounded to fp32 (kernels/vecmath.h). The sums are
 * fp32 in element order (the vendor's reduce splits over cores in an order it does not publish).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/vecmath.h"
#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"

enum { BCE_NONE = 0, BCE_MEAN = 1, BCE_SUM = 2 };
enum { K_BCE = 0, K_BCE_GRAD = 1 };
enum { IN_X = 0, IN_Y = 1, IN_W = 2, IN_PW = 3, IN_G = 4, IN_MAX = 5 };

typedef struct {
    int kind, fill;                          /* fill: self empty, out gets fill_value everywhere       */
    float fill_value, cof;                   /* cof: mean's fp32(1 / n) (the tilings' meanVar / cof)   */
    int64_t reduction, n, ndim;
    int64_t shape[PYACLNN_STUB_MAX_DIMS];    /* self's                                                 */
    aclDataType compute;                     /* the result's dtype before the cast to out              */
} bce_plan;

/* ---- kernels -------------------------------------------------------------------------------- */

/* v rounded (RINT) to dtype dt and back to fp32. */
static float bce_round(float v, aclDataType dt) {
    return (float)ew_value_to_double(ew_cast((ew_value){.f = v}, ACL_FLOAT, dt), dt);
}

/* max(Ln(v), -100): the clamp keeps a NaN. */
static float clamped_ln(float v) {
    float l = vm_ln(v);
    return l < -100.0f ? -100.0f : l;
}

static float bce_term(const bce_plan *p, float *const in[IN_MAX], int64_t k) {
    float x = in[IN_X][k], y = in[IN_Y][k], w = in[IN_W] != NULL ? in[IN_W][k] : 1.0f;
    if (p->kind == K_BCE) {
        float v = ((y * clamped_ln(x)) + ((1.0f - y) * clamped_ln(1.0f - x))) * -1.0f;
        return in[IN_W] != NULL ? v * w : v;
    }
    float q = (1.0f - x) * x;
    float r = ((in[IN_G][k] * (x - y)) / vm_max(q, 1e-12f)) * w;
    return p->reduction == BCE_MEAN ? r * p->cof : r;
}

/* Writes v (n values, or the one value when n == 1 and out has more: a reduced result) to out, each
 * rounded to the plan's dtype first. */
static void bce_store(const pyaclnn_stub_launch *launch, const bce_plan *p, float *v, int64_t n) {
    const pyaclnn_stub_tensor *out = &launch->outputs[0];
    int64_t m = pyaclnn_stub_numel(out);
    float *all = n == m ? v : tv_alloc(m, sizeof(float));
    if (all == NULL) {
        tv_fail_oom(launch);
        return;
    }
    for (int64_t k = 0; k < m; k++) all[k] = bce_round(n == m ? v[k] : v[0], p->compute);
    tv_store_float(out, all);
    if (all != v) free(all);
}

void bce_loss_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const bce_plan *p = launch->params;
    if (p->fill) {
        float v = p->fill_value;
        bce_store(launch, p, &v, 1);
        return;
    }
    float *in[IN_MAX] = {0}, *l = tv_alloc(p->n, sizeof(float));
    int ok = l != NULL;
    for (int k = 0; k < IN_MAX && k < (int)launch->n_inputs; k++)
        if (launch->inputs[k].present && (in[k] = tv_load_float_as(&launch->inputs[k], p->shape, p->ndim)) == NULL)
            ok = 0;
    if (!ok) {
        tv_fail_oom(launch);
        goto done;
    }
    float sum = 0.0f;
    for (int64_t k = 0; k < p->n; k++) {
        l[k] = bce_term(p, in, k);
        if (p->kind == K_BCE && p->reduction != BCE_NONE) sum += p->reduction == BCE_MEAN ? l[k] * p->cof : l[k];
    }
    if (p->kind == K_BCE && p->reduction != BCE_NONE) bce_store(launch, p, &sum, 1);
    else bce_store(launch, p, l, p->n);
done:
    for (int k = 0; k < IN_MAX; k++) free(in[k]);
    free(l);
}

/* ---- steps ---------------------------------------------------------------------------------- */

/* loss_reduction reduction MAX "message": 0 <= reduction <= MAX, else 161002 with the message ("{}" stands for the
 * value). */
aclnnStatus opc_loss_reduction(op_call *c, const op_step *s) {
    int64_t r = op_argument(c, s, 0)->i;
    if (r >= 0 && r <= s->n) return ACLNN_SUCCESS;
    const char *t = s->text, *at = strstr(t, "{}");
    if (at == NULL) return op_invalidf(c->api, "%s", t);
    return op_invalidf(c->api, "%.*s%lld%s", (int)(at - t), t, (long long)r, at + 2);
}

/* bce_weight_dtype weight self target out LIST: a weight's dtype in LIST (its own message), then, with a weight,
 * self of target's, weight's and out's dtype (OP_CHECK_DTYPE_NOT_MATCH). */
aclnnStatus opc_bce_weight_dtype(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *w = op_tensor(c, s, 0), *self = op_tensor(c, s, 1);
    if (!w->present) return ACLNN_SUCCESS;
    size_t n;
    const aclDataType *list = op_list(s->list, &n);
    char b1[24], b2[24], all[256];
    if (!ew_in_list(w->dtype, list, n))
        return op_invalidf(c->api, "weight dtype %s should be in dtype support list [%s].", op_dtype_name(w->dtype, b1),
                           ew_dtype_list(list, n, all, sizeof all));
    const int order[3] = {2, 0, 3};   /* target, weight, out */
    for (int k = 0; k < 3; k++) {
        aclDataType want = op_tensor(c, s, order[k])->dtype;
        if (self->dtype != want)
            return op_invalidf(c->api, "Tensor self expected dtype is %s but found %s.", op_dtype_name(want, b1),
                               op_dtype_name(self->dtype, b2));
    }
    return ACLNN_SUCCESS;
}

/* bce_grad_shapes self target weight gradOutput out (CheckShape; nothing when self is empty): out of self's shape
 * (OP_CHECK_SHAPE_NOT_EQUAL), then target, weight and gradOutput each broadcast with self (its message) to self's
 * shape (a larger broadcast shape: 161002 without a message, as the vendor's CHECK_RET). */
aclnnStatus opc_bce_grad_shapes(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0), *out = op_tensor(c, s, 4);
    if (pyaclnn_stub_numel(self) == 0) return ACLNN_SUCCESS;
    char a[200], b[200];
    int same = out->ndim == self->ndim;
    for (int64_t d = 0; same && d < self->ndim; d++) same = out->shape[d] == self->shape[d];
    if (!same)
        return op_invalidf(c->api, "Expected tensor for out to have same size as tensor for self, but %s does not equal "
                           "%s.", tv_shape_text(out->shape, out->ndim, a, sizeof a),
                           tv_shape_text(self->shape, self->ndim, b, sizeof b));
    for (int k = 1; k < 4; k++) {
        const pyaclnn_stub_tensor *t = op_tensor(c, s, k);
        if (!t->present) continue;
        int64_t n = self->ndim > t->ndim ? self->ndim : t->ndim;
        for (int64_t d = 0; d < n; d++) {
            int64_t ds = d - (n - self->ndim), dt = d - (n - t->ndim);
            int64_t ss = ds >= 0 ? self->shape[ds] : 1, st = dt >= 0 ? t->shape[dt] : 1;
            if (ss != st && ss != 1 && st != 1)
                return op_invalidf(c->api, "The size of tensor self %s must match the size of tensor %s %s.",
                                   tv_shape_text(self->shape, self->ndim, a, sizeof a), op_pname(c, s, k),
                                   tv_shape_text(t->shape, t->ndim, b, sizeof b));
            if (ds < 0 || (ss == 1 && st != 1)) return ACLNN_ERR_PARAM_INVALID;   /* broadcast beyond self */
        }
    }
    return ACLNN_SUCCESS;
}

/* bce_promote a b ... out: the promoted dtype of the present inputs (their lists are floating: they always
 * promote) can be cast to out (OP_CHECK_RESULT_DTYPE_CAST_FAILED); the kernel's result dtype. */
aclnnStatus opc_bce_promote(op_call *c, const op_step *s) {
    aclDataType p = op_tensor(c, s, 0)->dtype, out = op_tensor(c, s, s->np - 1)->dtype;
    for (int k = 1; k < s->np - 1; k++)
        if (op_tensor(c, s, k)->present) p = ew_promote(p, op_tensor(c, s, k)->dtype);
    char b1[24], b2[24];
    if (p == ACL_DT_UNDEFINED || !ew_can_cast(p, out))
        return op_invalidf(c->api, "Result type %s can't be cast to the desired output type %s.", op_dtype_name(p, b1),
                           op_dtype_name(out, b2));
    c->compute = p;
    return ACLNN_SUCCESS;
}

/* bce_plan self reduction out "kind": the kernel's plan over self's shape. The forward: out of the inferred shape
 * (self's for reduction 0, else []; one element each passes: CheckReduceOutShape), unless self is empty (the op_api
 * fills out, whatever its shape, with NaN for mean, else 0). */
aclnnStatus opc_bce_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0), *out = op_tensor(c, s, 2);
    bce_plan *p = op_params(c, sizeof *p);
    memset(p, 0, sizeof *p);
    p->kind = strcmp(s->text, "bce") == 0 ? K_BCE : K_BCE_GRAD;
    p->reduction = op_argument(c, s, 1)->i;
    p->ndim = self->ndim;
    memcpy(p->shape, self->shape, sizeof p->shape);
    p->n = pyaclnn_stub_numel(self);
    p->cof = (float)(1.0 / (double)(p->n > 0 ? p->n : 1));
    p->compute = c->compute != ACL_DT_UNDEFINED ? c->compute : self->dtype;
    if (p->kind != K_BCE) return ACLNN_SUCCESS;
    if (p->n == 0) {
        p->fill = 1;
        p->fill_value = p->reduction == BCE_MEAN ? NAN : 0.0f;
        if (pyaclnn_stub_numel(out) == 0) c->nothing = 1;
        return ACLNN_SUCCESS;
    }
    int64_t ndim = p->reduction == BCE_NONE ? self->ndim : 0;
    int same = out->ndim == ndim;
    for (int64_t d = 0; same && d < ndim; d++) same = out->shape[d] == self->shape[d];
    if (same || (pyaclnn_stub_numel(out) == 1 && (p->reduction != BCE_NONE || p->n == 1))) return ACLNN_SUCCESS;
    char a[200], b[200];
    return op_invalidf(c->api, "The out tensor's shape%s is not equal with inferOut shape%s.",
                       tv_shape_text(out->shape, out->ndim, a, sizeof a), tv_shape_text(self->shape, ndim, b, sizeof b));
}
