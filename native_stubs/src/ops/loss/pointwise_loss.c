/*
 * Pointwise losses (pointwise_loss.toml): aclnnMseLoss, aclnnMseLossBackward, aclnnSmoothL1Loss and
 * aclnnSmoothL1LossBackward (hicann/ops-nn loss/mse_loss, mse_loss_grad_v2, smooth_l1_loss_v2,
 * smooth_l1_loss_grad_v2), self and target broadcast (the backward's gradient too).
 *   forward:  l(d), d = self - target, in the promoted dtype's compute type (fp32 for fp16/bf16: the vendor's
 *             DAGs Cast, Sub, ...): MSE d * d; SmoothL1 |d| < beta ? (d * (d * 0.5)) * inv : |d| + (-0.5 * beta),
 *             inv = 1 / beta (0 when |beta| < 1e-6, the tiling's). out = l rounded to the promoted dtype, then
 *             cast to out (reduction 0), sum(l) in fp32 (2) or sum(l) * fp32(1 / n) (1); n == 0 gives NaN
 *             (mean) or 0 (sum), the vendor's Fill.
 *   backward: MSE ((self - target) * coef) * gradOutput, coef = 2 or fp32(2.0 / numel(self)) for mean (the
 *             grad tiling's reduceMeanCof: self's element count, not the broadcast one); SmoothL1
 *             ((d > beta) - (d < -beta) + (|d| > beta ? 0 : d * inv)) * gradOut * coef, coef 1 or
 *             fp32(1.0 / numel(self)), inv NaN when |beta| < 1e-6 (its tiling's); all in fp32.
 * aclnnL1Loss (loss/lp_loss, LpLoss p = 1): |d| in fp32, reduced as MSE's; an INT64 promoted dtype runs the
 * vendor's small operators instead (Sub, Abs, ReduceSum in int64, wrapping); aclnnL1LossBackward
 * (loss/l1_loss_grad): sign(self - target) (1 for >, -1 for <, else 0: NaN gives 0) * (gradOutput * r) in fp32,
 * r = 1, or for mean 1 divided in fp32 by each dim of the broadcast shape in turn (its tiling's reduceElts).
 * Class c forward (the vendor's reduce order over cores is not published: fp32 sum in element order here);
 * class b backward.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"

enum { REDUCTION_NONE = 0, REDUCTION_MEAN = 1, REDUCTION_SUM = 2 };
enum { PLOSS_MSE = 0, PLOSS_MSE_GRAD = 1, PLOSS_SL1 = 2, PLOSS_SL1_GRAD = 3, PLOSS_L1 = 4, PLOSS_L1_GRAD = 5 };

typedef struct {
    int kind;
    float beta, inv_beta;                    /* SmoothL1: beta (sigma) and the tilings' 1 / beta       */
    float l1_mean;                           /* L1LossBackward: 1 / each broadcast dim, in fp32        */
    int64_t reduction, n, self_numel, ndim;
    int64_t shape[PYACLNN_STUB_MAX_DIMS];
    aclDataType compute;
} ploss_plan;

/* ---- kernels -------------------------------------------------------------------------------- */

/* t's elements over the broadcast shape of p (row-major), as fp32 or (as_i64) int64; NULL if out of memory. */
static void *load_values(const ploss_plan *p, const pyaclnn_stub_tensor *t, int as_i64) {
    void *v = tv_alloc(p->n, as_i64 ? sizeof(int64_t) : sizeof(float));
    if (v == NULL) return NULL;
    int64_t st[PYACLNN_STUB_MAX_DIMS], idx[PYACLNN_STUB_MAX_DIMS] = {0}, off = t->offset;
    tv_broadcast_strides(t, p->ndim, st);
    for (int64_t k = 0; k < p->n; k++) {
        ew_value e = ew_load(tv_at(t, off), t->dtype);
        if (as_i64) ((int64_t *)v)[k] = ew_cast(e, t->dtype, ACL_INT64).i;
        else ((float *)v)[k] = (float)ew_value_to_double(e, t->dtype);
        for (int64_t d = p->ndim - 1; d >= 0; d--) {
            off += st[d];
            if (++idx[d] < p->shape[d]) break;
            off -= st[d] * idx[d];
            idx[d] = 0;
        }
    }
    return v;
}

static float *load_broadcast(const ploss_plan *p, const pyaclnn_stub_tensor *t) { return load_values(p, t, 0); }

/* L1Loss over INT64 (the vendor's Sub, Abs and ReduceSum in int64, wrapping; mean cannot reach here), cast to out. */
static void l1_loss_int64(const pyaclnn_stub_launch *launch, const ploss_plan *p) {
    int64_t *x = load_values(p, &launch->inputs[0], 1), *t = load_values(p, &launch->inputs[1], 1);
    const pyaclnn_stub_tensor *out = &launch->outputs[0];
    int64_t m = pyaclnn_stub_numel(out);
    size_t size = ew_itemsize(out->dtype);
    unsigned char *bytes = tv_alloc(m, size);
    if (x == NULL || t == NULL || bytes == NULL) {
        tv_fail_oom(launch);
        goto done;
    }
    uint64_t sum = 0;
    for (int64_t k = 0; k < p->n; k++) {
        uint64_t d = (uint64_t)x[k] - (uint64_t)t[k];
        x[k] = (int64_t)((int64_t)d < 0 ? 0 - d : d);
        sum += (uint64_t)x[k];
    }
    for (int64_t j = 0; j < m; j++) {
        ew_value v = {.i = p->reduction == REDUCTION_NONE ? x[j] : (int64_t)sum};
        ew_store(bytes + (size_t)j * size, out->dtype, ew_cast(v, ACL_INT64, out->dtype));
    }
    tv_scatter_bytes(out, bytes);
done:
    free(x);
    free(t);
    free(bytes);
}

/* v rounded to dtype dt (the vendor's Cast back to the promoted dtype before the output's Cast). */
static float round_to(float v, aclDataType dt) {
    return (float)ew_value_to_double(ew_cast((ew_value){.f = v}, ACL_FLOAT, dt), dt);
}

void pointwise_loss_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const ploss_plan *p = launch->params;
    if (p->compute == ACL_INT64) {
        l1_loss_int64(launch, p);
        return;
    }
    float *x = load_broadcast(p, &launch->inputs[0]), *t = load_broadcast(p, &launch->inputs[1]);
    float *l = tv_alloc(p->n, sizeof(float));
    if (x == NULL || t == NULL || l == NULL) {
        tv_fail_oom(launch);
        goto done;
    }
    float sum = 0.0f;
    for (int64_t k = 0; k < p->n; k++) {
        float d = x[k] - t[k];
        if (p->kind == PLOSS_SL1) {   /* |d| < beta ? d * (d * 0.5) * (1 / beta) : |d| + (-0.5 * beta) */
            float a = fabsf(d);
            l[k] = a < p->beta ? (d * (d * 0.5f)) * p->inv_beta : a + -0.5f * p->beta;
        } else if (p->kind == PLOSS_L1) {
            l[k] = fabsf(d);
        } else {
            l[k] = d * d;
        }
        sum += l[k];
    }
    if (p->reduction == REDUCTION_NONE) {
        for (int64_t k = 0; k < p->n; k++) l[k] = round_to(l[k], p->compute);
        tv_store_float(&launch->outputs[0], l);
    } else {   /* the 0-D result, copied to every element of out (SmoothL1Loss leaves out's shape unchecked) */
        float r = p->reduction == REDUCTION_SUM ? sum : p->n == 0 ? NAN : sum * (float)(1.0 / (double)p->n);
        int64_t m = pyaclnn_stub_numel(&launch->outputs[0]);
        float *all = tv_alloc(m, sizeof(float));
        if (all == NULL) {
            tv_fail_oom(launch);
            goto done;
        }
        for (int64_t k = 0; k < m; k++) all[k] = round_to(r, p->compute);
        tv_store_float(&launch->outputs[0], all);
        free(all);
    }
done:
    free(x);
    free(t);
    free(l);
}

void pointwise_loss_backward_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const ploss_plan *p = launch->params;
    float *x = load_broadcast(p, &launch->inputs[0]), *t = load_broadcast(p, &launch->inputs[1]);
    float *g = load_broadcast(p, &launch->inputs[2]);
    if (x == NULL || t == NULL || g == NULL) {
        tv_fail_oom(launch);
        goto done;
    }
    double base = p->kind == PLOSS_SL1_GRAD ? 1.0 : 2.0;
    float coef = p->reduction == REDUCTION_MEAN ? (float)(base / (double)p->self_numel) : (float)base;
    for (int64_t k = 0; k < p->n; k++) {
        float d = x[k] - t[k], v;
        if (p->kind == PLOSS_SL1_GRAD) {   /* sign beyond beta, d / beta within; times gradOut, times coef */
            float sel = (d > p->beta ? 1.0f : 0.0f) + (d < -p->beta ? -1.0f : 0.0f);
            v = ((sel + (fabsf(d) > p->beta ? 0.0f : d * p->inv_beta)) * g[k]) * coef;
        } else if (p->kind == PLOSS_L1_GRAD) {   /* sign by compares (NaN: 0) times gradOutput * reduceElts */
            v = (x[k] > t[k] ? 1.0f : x[k] < t[k] ? -1.0f : 0.0f) * (g[k] * p->l1_mean);
        } else {
            v = (d * coef) * g[k];
        }
        x[k] = round_to(v, p->compute);
    }
    tv_store_float(&launch->outputs[0], x);
done:
    free(x);
    free(t);
    free(g);
}

/* ---- steps ---------------------------------------------------------------------------------- */

/* ploss_promote self target LIST: the promoted dtype of self and target is in LIST (CheckDtypeValidMseLoss);
 * it is the dtype the kernel computes in. */
aclnnStatus opc_ploss_promote(op_call *c, const op_step *s) {
    aclDataType a = op_tensor(c, s, 0)->dtype, b = op_tensor(c, s, 1)->dtype, p = ew_promote(a, b);
    size_t n;
    const aclDataType *list = op_list(s->list, &n);
    if (p != ACL_DT_UNDEFINED && ew_in_list(p, list, n)) {
        c->compute = p;
        return ACLNN_SUCCESS;
    }
    char b1[24], b2[24];
    return op_invalidf(c->api, "Expected %s dtype [%s] and %s dtype [%s] to be promotable but check failed.",
                       op_pname(c, s, 0), op_dtype_name(a, b1), op_pname(c, s, 1), op_dtype_name(b, b2));
}

/* ploss_reduction reduction ["sl1" | "l1"]: 0 (none), 1 (mean) or 2 (sum); the message MseLoss's (or
 * SmoothL1LossBackward's, or L1Loss's and its backward's). */
aclnnStatus opc_ploss_reduction(op_call *c, const op_step *s) {
    int64_t r = op_argument(c, s, 0)->i;
    if (r >= REDUCTION_NONE && r <= REDUCTION_SUM) return ACLNN_SUCCESS;
    if (s->text != NULL && strcmp(s->text, "l1") == 0)
        return op_invalidf(c->api, "Expected reduction to be 0 or 1 or 2, but got %lld.", (long long)r);
    if (s->text != NULL)
        return op_invalidf(c->api, "Reduction should be between 0 and 2, but got %lld", (long long)r);
    return op_invalidf(c->api, "Expected reduction to be between 0 and 2, but got %lld.", (long long)r);
}

/* sl1_beta beta: beta >= 0 (NaN fails). */
aclnnStatus opc_sl1_beta(op_call *c, const op_step *s) {
    if ((float)op_argument(c, s, 0)->d >= 0.0f) return ACLNN_SUCCESS;
    return op_invalidf(c->api, "beta should be greater than or equal to 0");
}

/* The promoted dtype p casts to out (OP_CHECK_RESULT_DTYPE_CAST_FAILED): the kernel computes in it. */
static aclnnStatus computes_in(op_call *c, aclDataType p, aclDataType out) {
    char b1[24], b2[24];
    if (!ew_can_cast(p, out))
        return op_invalidf(c->api, "Result type %s can't be cast to the desired output type %s.", op_dtype_name(p, b1),
                           op_dtype_name(out, b2));
    c->compute = p;
    return ACLNN_SUCCESS;
}

/* sl1_promote a b [c] out: the promoted dtype of the inputs (the forward's "Self dtype X and target dtype Y
 * can not promote dtype."; the inputs' lists are floating, so the backward's promotion messages cannot
 * occur) casts to out (OP_CHECK_RESULT_DTYPE_CAST_FAILED); the kernel computes in it. */
aclnnStatus opc_sl1_promote(op_call *c, const op_step *s) {
    aclDataType p = op_tensor(c, s, 0)->dtype, out = op_tensor(c, s, s->np - 1)->dtype;
    char b1[24], b2[24];
    for (int k = 1; k < s->np - 1; k++) {
        aclDataType q = ew_promote(p, op_tensor(c, s, k)->dtype);
        if (q == ACL_DT_UNDEFINED)
            return op_invalidf(c->api, "Self dtype %s and target dtype %s can not promote dtype.", op_dtype_name(p, b1),
                               op_dtype_name(op_tensor(c, s, k)->dtype, b2));
        p = q;
    }
    return computes_in(c, p, out);
}

/* sl1_grad_rank a b c: at most 8 dimensions among the three. */
aclnnStatus opc_sl1_grad_rank(op_call *c, const op_step *s) {
    int64_t m = 0;
    for (int k = 0; k < s->np; k++) m = op_tensor(c, s, k)->ndim > m ? op_tensor(c, s, k)->ndim : m;
    if (m <= 8) return ACLNN_SUCCESS;
    return op_invalidf(c->api, "expected tensor must have at most 8 dimensions, but got %lld.", (long long)m);
}

/* acc's shape broadcast with t's (acc becomes the result); 0 if they do not broadcast (acc unchanged). */
static int broadcast_into(pyaclnn_stub_tensor *acc, const pyaclnn_stub_tensor *t) {
    int64_t n = acc->ndim > t->ndim ? acc->ndim : t->ndim, shape[PYACLNN_STUB_MAX_DIMS];
    for (int64_t d = 0; d < n; d++) {
        int64_t da = d - (n - acc->ndim), db = d - (n - t->ndim);
        int64_t sa = da >= 0 ? acc->shape[da] : 1, sb = db >= 0 ? t->shape[db] : 1;
        if (sa != sb && sa != 1 && sb != 1) return 0;
        shape[d] = sa == 1 ? sb : sa;
    }
    memcpy(acc->shape, shape, (size_t)n * sizeof shape[0]);
    acc->ndim = n;
    return 1;
}

/* Whether t has shape acc's. */
static int same_shape(const pyaclnn_stub_tensor *t, const pyaclnn_stub_tensor *acc) {
    int same = t->ndim == acc->ndim;
    for (int64_t d = 0; same && d < acc->ndim; d++) same = t->shape[d] == acc->shape[d];
    return same;
}

/* sl1_grad_broadcast gradOut self target gradInput: the three broadcast ("Broadcast A and B failed.") to
 * gradInput's shape. */
aclnnStatus opc_sl1_grad_broadcast(op_call *c, const op_step *s) {
    pyaclnn_stub_tensor acc = *op_tensor(c, s, 0);
    char a[200], b[200];
    for (int k = 1; k < 3; k++) {
        const pyaclnn_stub_tensor *t = op_tensor(c, s, k);
        if (!broadcast_into(&acc, t))
            return op_invalidf(c->api, "Broadcast %s and %s failed.", tv_shape_text(acc.shape, acc.ndim, a, sizeof a),
                               tv_shape_text(t->shape, t->ndim, b, sizeof b));
    }
    const pyaclnn_stub_tensor *gi = op_tensor(c, s, 3);
    if (!same_shape(gi, &acc))
        return op_invalidf(c->api, "Exepected tensor for result to have same size as tensor for gradInput, but %s does "
                           "not equal %s.", tv_shape_text(acc.shape, acc.ndim, a, sizeof a),
                           tv_shape_text(gi->shape, gi->ndim, b, sizeof b));
    memcpy(c->shape, acc.shape, sizeof c->shape);
    c->ndim = acc.ndim;
    return ACLNN_SUCCESS;
}

/* ploss_out_shape out [reduction] ["sl1" | "l1"]: out has the broadcast shape (OP_CHECK_SHAPE_NOT_EQUAL_WITH_EXPECTED_SIZE;
 * the forward: for reduction 0 only, else out is 0-D; SmoothL1Loss: its own message, and any shape otherwise). */
aclnnStatus opc_ploss_out_shape(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *out = op_tensor(c, s, 0);
    char a[200], b[200];
    int l1 = s->text != NULL && strcmp(s->text, "l1") == 0;
    if (l1 && op_argument(c, s, 1)->i == REDUCTION_NONE && ew_check_shape(c->api, "", out, c->shape, c->ndim) != 0)
        return op_invalidf(c->api, "Expected out tensor shape to be %s, but got %s.",
                           tv_shape_text(c->shape, c->ndim, a, sizeof a), tv_shape_text(out->shape, out->ndim, b, sizeof b));
    if (s->text != NULL && !l1) {
        if (op_argument(c, s, 1)->i != REDUCTION_NONE || ew_check_shape(c->api, "", out, c->shape, c->ndim) == 0)
            return ACLNN_SUCCESS;
        return op_invalidf(c->api, "Shape of %s should be %s, but current is %s.", op_pname(c, s, 0),
                           tv_shape_text(c->shape, c->ndim, a, sizeof a), tv_shape_text(out->shape, out->ndim, b, sizeof b));
    }
    if (s->np < 2 || op_argument(c, s, 1)->i == REDUCTION_NONE)
        return op_expected_size(c->api, op_pname(c, s, 0), out, c->shape, c->ndim);
    if (out->ndim == 0) return ACLNN_SUCCESS;
    return op_invalidf(c->api, "Expected a 0-dimensional tensor, but Shape of %s is %s.", op_pname(c, s, 0),
                       tv_shape_text(out->shape, out->ndim, a, sizeof a));
}

/* ploss_plan self reduction [beta] "kind": the kernels' plan over the broadcast shape; the forward's
 * reduction 0 over no element launches nothing. MseLossBackward computes in self's dtype. */
aclnnStatus opc_ploss_plan(op_call *c, const op_step *s) {
    static const char *const kinds[] = {"mse", "mse_grad", "sl1", "sl1_grad", "l1", "l1_grad"};
    ploss_plan *p = op_params(c, sizeof *p);
    memset(p, 0, sizeof *p);
    for (int k = 0; k < 6; k++)
        if (strcmp(s->text, kinds[k]) == 0) p->kind = k;
    p->reduction = op_argument(c, s, 1)->i;
    if (s->np > 2) {   /* the tilings' 1 / sigma: 0 (forward) or NaN (backward) for |sigma| < 1e-6 */
        p->beta = (float)op_argument(c, s, 2)->d;
        p->inv_beta = fabsf(p->beta) < 1e-6f ? (p->kind == PLOSS_SL1 ? 0.0f : NAN) : 1.0f / p->beta;
    }
    p->ndim = c->ndim;
    memcpy(p->shape, c->shape, sizeof p->shape);
    p->n = tv_dims_product(c->shape, 0, c->ndim);
    p->self_numel = pyaclnn_stub_numel(op_tensor(c, s, 0));
    p->compute = c->compute != ACL_DT_UNDEFINED && p->kind != PLOSS_MSE_GRAD ? c->compute : op_tensor(c, s, 0)->dtype;
    p->l1_mean = 1.0f;
    for (int64_t d = 0; p->reduction == REDUCTION_MEAN && d < p->ndim; d++) p->l1_mean = p->l1_mean / (float)p->shape[d];
    if ((p->kind == PLOSS_MSE || p->kind == PLOSS_SL1 || p->kind == PLOSS_L1) && p->reduction == REDUCTION_NONE &&
        p->n == 0)
        c->nothing = 1;
    return ACLNN_SUCCESS;
}

/* IsFloatingType (the complex types aside). */
static int is_floating(aclDataType d) { return d == ACL_FLOAT || d == ACL_FLOAT16 || d == ACL_BF16 || d == ACL_DOUBLE; }

/* l1_dtypes self target out reduction LIST: L1Loss's CheckDtypeValid -- an integral self refused beside a
 * floating target for reduction none, beside an integral one for mean; the promoted dtype in LIST and castable
 * to out. The kernel computes in it. */
aclnnStatus opc_l1_dtypes(op_call *c, const op_step *s) {
    aclDataType a = op_tensor(c, s, 0)->dtype, b = op_tensor(c, s, 1)->dtype, out = op_tensor(c, s, 2)->dtype;
    int64_t r = op_argument(c, s, 3)->i;
    char b1[24], b2[24], all[160];
    if (r == REDUCTION_NONE && !is_floating(a) && is_floating(b))
        return op_invalidf(c->api, "Input dtype should be either floating point or complex dtypes. Got %s instead.",
                           op_dtype_name(a, b1));
    if (r == REDUCTION_MEAN && !is_floating(a) && !is_floating(b))
        return op_invalidf(c->api, "Input dtype should be either floating point or complex dtypes. Got self %s and "
                           "target %s instead.", op_dtype_name(a, b1), op_dtype_name(b, b2));
    aclDataType p = ew_promote(a, b);
    if (p == ACL_DT_UNDEFINED)
        return op_invalidf(c->api, "Self dtype %s and target dtype %s can not be promoted.", op_dtype_name(a, b1),
                           op_dtype_name(b, b2));
    size_t n;
    const aclDataType *list = op_list(s->list, &n);
    if (!ew_in_list(p, list, n))
        return op_invalidf(c->api, "promoteType dtype %s should be in dtype support list %s.", op_dtype_name(p, b1),
                           ew_dtype_list(list, n, all, sizeof all));
    return computes_in(c, p, out);
}

/* l1_grad_dtypes gradOutput self target gradInput LIST: L1LossBackward's CheckDtypeValid (promotions with their
 * messages, the cast to gradInput, then the list). */
aclnnStatus opc_l1_grad_dtypes(op_call *c, const op_step *s) {
    aclDataType g = op_tensor(c, s, 0)->dtype, x = op_tensor(c, s, 1)->dtype, t = op_tensor(c, s, 2)->dtype;
    aclDataType out = op_tensor(c, s, 3)->dtype, p1 = ew_promote(g, x), p2 = ew_promote(t, p1);
    char b1[24], b2[24], b3[24], all[160];
    if (p1 == ACL_DT_UNDEFINED)
        return op_invalidf(c->api, "GradOutput dtype %s and Self dtype %s can not be promoted.", op_dtype_name(g, b1),
                           op_dtype_name(x, b2));
    if (p2 == ACL_DT_UNDEFINED)
        return op_invalidf(c->api, "Target dtype %s, GradOutput dtype %s and Self dtype %s can not be promoted.",
                           op_dtype_name(t, b3), op_dtype_name(g, b1), op_dtype_name(x, b2));
    aclnnStatus rc = computes_in(c, p2, out);
    if (rc) return rc;
    size_t n;
    const aclDataType *list = op_list(s->list, &n);
    if (!ew_in_list(p2, list, n))
        return op_invalidf(c->api, "promoteType dtype %s should be in dtype support list [%s].", op_dtype_name(p2, b1),
                           ew_dtype_list(list, n, all, sizeof all));
    return ACLNN_SUCCESS;
}

/* l1_grad_shape gradOutput self target gradInput: self and gradOutput broadcast (the standard message), target
 * with their shape (L1LossBackward's message), gradInput has the result's shape. */
aclnnStatus opc_l1_grad_shape(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *g = op_tensor(c, s, 0), *x = op_tensor(c, s, 1), *t = op_tensor(c, s, 2);
    const pyaclnn_stub_tensor *gi = op_tensor(c, s, 3);
    aclnnStatus rc = ew_broadcast(c->api, op_pname(c, s, 1), x, op_pname(c, s, 0), g, c->shape, &c->ndim);
    if (rc) return rc;
    char a[200], b[200], d[200];
    pyaclnn_stub_tensor acc = *x;
    acc.ndim = c->ndim;
    memcpy(acc.shape, c->shape, sizeof c->shape);
    if (!broadcast_into(&acc, t))
        return op_invalidf(c->api, "GradOutput tensor shape:%s self tensor shape:%s target tensor shape:%s can't "
                           "broadcast.", tv_shape_text(g->shape, g->ndim, a, sizeof a),
                           tv_shape_text(x->shape, x->ndim, b, sizeof b), tv_shape_text(t->shape, t->ndim, d, sizeof d));
    if (!same_shape(gi, &acc))
        return op_invalidf(c->api, "Shape of out should be %s, but current is %s.",
                           tv_shape_text(acc.shape, acc.ndim, a, sizeof a), tv_shape_text(gi->shape, gi->ndim, b, sizeof b));
    memcpy(c->shape, acc.shape, sizeof c->shape);
    c->ndim = acc.ndim;
    return ACLNN_SUCCESS;
}
