/*
 * Binary cross entropy (bce_loss.toml): aclnnBinaryCrossEntropy, aclnnBinaryCrossEntropyBackward,
 * aclnnBinaryCrossEntropyWithLogits and its backward (hicann/ops-nn loss/binary_cross_entropy,
 * binary_cross_entropy_grad, sigmoid_cross_entropy_with_logits_v2, _grad_v2), over self's shape (target, weight and the
 * gradient broadcast to it), every step in fp32 (fp16/bf16 widened exactly, the DAGs' Cast):
 *   BinaryCrossEntropy: l = (y * max(Ln(x), -100) + (1 - y) * max(Ln(1 - x), -100)) * -1, times weight
 *     (CalcBinaryYLogX, Mul); none: l rounded (RINT) to self's dtype; mean: sum of l * fp32(1 / n) (the Muls
 *     before ReduceSum; meanVar); sum: sum of l; one RINT cast. A NaN from Ln passes the clamp (torch's
 *     std::max keeps it too). self empty: out filled with NaN (mean) or 0 (the op_api's Fill).
 *   BinaryCrossEntropyBackward: (g * (x - y)) / max((1 - x) * x, 1e-12) * w * cof, cof = fp32(1 / numel(self))
 *     for mean (CalcMeanCof), none of it for none / sum; rounded (RINT) to the promoted dtype, then cast to out.
 *   BinaryCrossEntropyWithLogits (sigmoid_cross_entropy_with_logits_v2; the steps of its experimental kernel):
 *     m = max(-x, 0), lt = Ln(Exp(-m) + Exp(-m - x)) + m, (1 - y) * x + lw * lt, lw = pw * y + (1 - y) (lt alone
 *     without pw; on A2 a NULL pw is OnesLike), times weight; the FLOAT result (the L0's for fp16/bf16) summed,
 *     mean as sum * fp32(1 / n) (ReduceMean), then cast to out; weight and pw broadcast with self.
 *   BinaryCrossEntropyWithLogitsBackward (its experimental kernel, pw and weight ones when NULL): lw = pw * y,
 *     ((lw + 1 - y) * (1 / (1 + Exp(-x))) - lw) * g * w * (1.0f / n for mean); RINT to the promoted dtype, then out.
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
enum { K_BCE = 0, K_BCE_GRAD = 1, K_BCEL = 2, K_BCEL_GRAD = 3 };
enum { IN_X = 0, IN_Y = 1, IN_W = 2, IN_PW = 3, IN_G = 4, IN_MAX = 5 };

typedef struct {
    int kind, fill;                          /* fill: self empty, out gets fill_value everywhere       */
    int ones_pw;                             /* WithLogits on A2: a NULL posWeight is OnesLike(self)    */
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

/* BinaryCrossEntropyWithLogits' element (the kernel's steps): m = max(-x, 0), log_term = Ln(Exp(-m) + Exp(-m - x))
 * + m, (1 - y) * x + log_weight * log_term, log_weight = pw * y + (1 - y) (none without pw). */
static float bcel_term(float x, float y, const float *pw) {
    float m = vm_max(x * -1.0f, 0.0f), nm = m * -1.0f;
    float lt = vm_ln(vm_exp(nm) + vm_exp(nm - x)) + m, ny = (y * -1.0f) + 1.0f, base = ny * x;
    return pw != NULL ? base + ((*pw * y) + ny) * lt : base + lt;
}

/* Its gradient (the kernel's steps, pos_weight always present: ones from the op_api): lw = pw * y,
 * ((lw + 1 - y) * sigmoid(x) - lw) * g, sigmoid(x) = 1 / (1 + Exp(-x)). */
static float bcel_grad_term(float x, float y, float pw, float g) {
    float lw = pw * y, s = 1.0f / (vm_exp(x * -1.0f) + 1.0f);
    return ((((lw + 1.0f) - y) * s) - lw) * g;
}

static float bce_term(const bce_plan *p, float *const in[IN_MAX], int64_t k) {
    float x = in[IN_X][k], y = in[IN_Y][k], w = in[IN_W] != NULL ? in[IN_W][k] : 1.0f;
    if (p->kind == K_BCEL) {
        float v = bcel_term(x, y, in[IN_PW] != NULL ? &in[IN_PW][k] : p->ones_pw ? &(float){1.0f} : NULL);
        return in[IN_W] != NULL ? v * w : v;
    }
    if (p->kind == K_BCEL_GRAD) {
        float r = bcel_grad_term(x, y, in[IN_PW] != NULL ? in[IN_PW][k] : 1.0f, in[IN_G][k]) * w;
        return p->reduction == BCE_MEAN ? r * p->cof : r;
    }
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
        if (p->kind == K_BCE && p->reduction == BCE_MEAN) sum += l[k] * p->cof;   /* Muls, then ReduceSum */
        else sum += l[k];
    }
    if (p->kind == K_BCEL && p->reduction == BCE_MEAN) sum = sum * p->cof;       /* ReduceMean */
    if ((p->kind == K_BCE || p->kind == K_BCEL) && p->reduction != BCE_NONE) bce_store(launch, p, &sum, 1);
    else bce_store(launch, p, l, p->n);
done:
    for (int k = 0; k < IN_MAX; k++) free(in[k]);
    free(l);
}

/* ---- steps ---------------------------------------------------------------------------------- */

/* 1 if shape[0..ndim) is t's shape. */
static int same_dims(const int64_t *shape, int64_t ndim, const pyaclnn_stub_tensor *t) {
    int same = t->ndim == ndim;
    for (int64_t d = 0; same && d < ndim; d++) same = t->shape[d] == shape[d];
    return same;
}

/* The broadcast shape of a and b (torch's rules) into shape / *ndim; 0 if they do not broadcast. */
static int bcast_shape(const pyaclnn_stub_tensor *a, const pyaclnn_stub_tensor *b, int64_t *shape, int64_t *ndim) {
    int64_t n = a->ndim > b->ndim ? a->ndim : b->ndim;
    for (int64_t d = 0; d < n; d++) {
        int64_t da = d - (n - a->ndim), db = d - (n - b->ndim);
        int64_t sa = da >= 0 ? a->shape[da] : 1, sb = db >= 0 ? b->shape[db] : 1;
        if (sa != sb && sa != 1 && sb != 1) return 0;
        shape[d] = sa == 1 ? sb : sa;
    }
    *ndim = n;
    return 1;
}

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

/* bce_weight_shape self weight: BinaryCrossEntropy's tiling wants a weight of self's shape (0-d as [1], its
 * EnsureNotScalar); otherwise the L0 launcher fails and the op_api returns ACLNN_ERR_INNER_NULLPTR (561103). Nothing
 * to check for an empty self (the op_api fills out without the L0). */
aclnnStatus opc_bce_weight_shape(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0), *w = op_tensor(c, s, 1);
    if (!w->present || pyaclnn_stub_numel(self) == 0) return ACLNN_SUCCESS;
    int64_t one = 1;
    const int64_t *ss = self->ndim ? self->shape : &one, *ws = w->ndim ? w->shape : &one;
    int64_t ns = self->ndim ? self->ndim : 1, nw = w->ndim ? w->ndim : 1;
    int same = ns == nw;
    for (int64_t d = 0; same && d < ns; d++) same = ss[d] == ws[d];
    if (same) return ACLNN_SUCCESS;
    char a[200], b[200];
    pyaclnn_stub_report(ACLNN_ERR_INNER_NULLPTR, c->api, "BinaryCrossEntropy ADD_TO_LAUNCHER_LIST_AICORE failed (its "
                        "tiling: x and weight should have the same shape, %s and %s)", tv_shape_text(ss, ns, a, sizeof a),
                        tv_shape_text(ws, nw, b, sizeof b));
    return ACLNN_ERR_INNER_NULLPTR;
}

/* bce_grad_shapes self a ... N "bce" | "bcel" (CheckShape; nothing when self is empty): the first N operands after
 * self of self's shape (OP_CHECK_SHAPE_NOT_EQUAL: "bce" names the operand first, "bcel" self), then the others, when
 * present, each broadcast with self (OP_CHECK_BROADCAST_AND_INFER_SHAPE: "bce" names self first, "bcel" the operand)
 * to self's shape (a larger broadcast shape: 161002 without a message, as the vendor's CHECK_RET). */
aclnnStatus opc_bce_grad_shapes(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0);
    if (pyaclnn_stub_numel(self) == 0) return ACLNN_SUCCESS;
    int self_first = strcmp(s->text, "bcel") == 0;
    const char *ns = op_pname(c, s, 0);
    char a[200], b[200];
    tv_shape_text(self->shape, self->ndim, a, sizeof a);
    for (int k = 1; k < s->np; k++) {
        const pyaclnn_stub_tensor *t = op_tensor(c, s, k);
        const char *nt = op_pname(c, s, k);
        tv_shape_text(t->shape, t->ndim, b, sizeof b);
        int same = same_dims(t->shape, t->ndim, self);
        if (k <= s->n) {
            if (!same)
                return op_invalidf(c->api, "Expected tensor for %s to have same size as tensor for %s, but %s does not "
                                   "equal %s.", self_first ? ns : nt, self_first ? nt : ns, self_first ? a : b,
                                   self_first ? b : a);
            continue;
        }
        if (!t->present || same) continue;
        int64_t shape[PYACLNN_STUB_MAX_DIMS], n;
        if (!bcast_shape(self, t, shape, &n))
            return op_invalidf(c->api, "The size of tensor %s %s must match the size of tensor %s %s.",
                               self_first ? nt : ns, self_first ? b : a, self_first ? ns : nt, self_first ? a : b);
        if (!same_dims(shape, n, self)) return ACLNN_ERR_PARAM_INVALID;   /* broadcast beyond self */
    }
    return ACLNN_SUCCESS;
}

/* bce_bcast a b: a, when present, broadcasts with b (OP_CHECK_BROADCAST_AND_INFER_SHAPE); nothing when b is
 * empty (the op_api's early exit for an empty target). */
aclnnStatus opc_bce_bcast(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *t = op_tensor(c, s, 0), *b = op_tensor(c, s, 1);
    if (!t->present || pyaclnn_stub_numel(b) == 0) return ACLNN_SUCCESS;
    int64_t shape[PYACLNN_STUB_MAX_DIMS], n;
    if (bcast_shape(t, b, shape, &n)) return ACLNN_SUCCESS;
    char x[200], y[200];
    return op_invalidf(c->api, "The size of tensor %s %s must match the size of tensor %s %s.", op_pname(c, s, 0),
                       tv_shape_text(t->shape, t->ndim, x, sizeof x), op_pname(c, s, 1),
                       tv_shape_text(b->shape, b->ndim, y, sizeof y));
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

/* bce_plan self reduction out [weight posWeight] "kind": the kernel's plan over self's shape (WithLogits: broadcast
 * with weight and posWeight); self empty: out filled with NaN (mean) or 0, whatever its shape (the op_apis' Fill;
 * WithLogits' reduction 0 launches nothing). Out's shape: BinaryCrossEntropy's CheckReduceOutShape (self's shape for
 * reduction 0, else []; one element each passes), WithLogits' (reduction 0) OP_CHECK_SHAPE_NOT_EQUAL_WITH_EXPECTED_SIZE. */
aclnnStatus opc_bce_plan(op_call *c, const op_step *s) {
    static const char *const kinds[] = {"bce", "bce_grad", "bcel", "bcel_grad"};
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0), *out = op_tensor(c, s, 2);
    bce_plan *p = op_params(c, sizeof *p);
    memset(p, 0, sizeof *p);
    for (int k = 0; k < 4; k++)
        if (strcmp(s->text, kinds[k]) == 0) p->kind = k;
    p->reduction = op_argument(c, s, 1)->i;
    pyaclnn_stub_tensor acc = *self;   /* the shape so far */
    for (int k = 3; k < s->np; k++) {
        const pyaclnn_stub_tensor *t = op_tensor(c, s, k);
        if (t->present && pyaclnn_stub_numel(self) > 0 && bcast_shape(&acc, t, p->shape, &p->ndim)) {
            memcpy(acc.shape, p->shape, sizeof p->shape);
            acc.ndim = p->ndim;
        }
    }
    p->ndim = acc.ndim;
    memcpy(p->shape, acc.shape, sizeof p->shape);
    p->n = tv_dims_product(p->shape, 0, p->ndim);
    int64_t n1 = p->n > 0 ? p->n : 1;   /* the grad tilings' cof in fp32, the forward's meanVar from double */
    p->cof = p->kind == K_BCE_GRAD || p->kind == K_BCEL_GRAD ? 1.0f / (float)n1 : (float)(1.0 / (double)n1);
    p->compute = p->kind == K_BCEL ? ACL_FLOAT : c->compute != ACL_DT_UNDEFINED ? c->compute : self->dtype;
    p->ones_pw = p->kind == K_BCEL && !ew_soc_is_950();
    if (p->kind == K_BCE_GRAD || p->kind == K_BCEL_GRAD) return ACLNN_SUCCESS;
    if (p->n == 0) {
        p->fill = 1;
        p->fill_value = p->reduction == BCE_MEAN ? NAN : 0.0f;
        if (pyaclnn_stub_numel(out) == 0 || (p->kind == K_BCEL && p->reduction == BCE_NONE)) c->nothing = 1;
        return ACLNN_SUCCESS;
    }
    if (p->kind == K_BCEL)
        return p->reduction == BCE_NONE ? op_expected_size(c->api, op_pname(c, s, 2), out, p->shape, p->ndim)
                                        : ACLNN_SUCCESS;
    int64_t ndim = p->reduction == BCE_NONE ? p->ndim : 0;
    if (same_dims(p->shape, ndim, out) || (pyaclnn_stub_numel(out) == 1 && (ndim == 0 || p->n == 1)))
        return ACLNN_SUCCESS;
    char a[200], b[200];
    return op_invalidf(c->api, "The out tensor's shape%s is not equal with inferOut shape%s.",
                       tv_shape_text(out->shape, out->ndim, a, sizeof a), tv_shape_text(p->shape, ndim, b, sizeof b));
}
