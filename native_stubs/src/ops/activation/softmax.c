/*
 * The kernel and steps of aclnnSoftmax, aclnnSoftmaxBackward, aclnnLogSoftmax and aclnnLogSoftmaxBackward
 * (softmax.toml; hicann/ops-nn activation/softmax_v2, softmax_grad, log_softmax_v2, log_softmax_grad op_api),
 * along dim, any strides:
 *   softmax:             out = exp(x - max) / sum(exp(x - max))
 *   softmax backward:    out = y * (g - sum(g * y)), y the forward output, g the incoming gradient
 *   log_softmax:         out = (x - max) - log(sum(exp(x - max)))
 *   log_softmax backward: out = g - exp(y) * sum(g)
 * Arithmetic (class c): each line is widened to double, computed there (exp and log of libm) and rounded
 * once to out's dtype (fp16/bf16 through fp32, as the NPU's Cast). The NPU computes in fp32 with its own
 * exp and summation order (not published), so results agree to a tolerance.
 */
#include <math.h>
#include <stdlib.h>

#include "activation/softmax.h"
#include "kernels/parallel.h"
#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"

static double ld(const pyaclnn_stub_tensor *t, int64_t off) {
    return ew_cast(ew_load(tv_at(t, off), t->dtype), t->dtype, ACL_DOUBLE).f;
}

typedef struct {
    const sm_plan *p;
    const pyaclnn_stub_tensor *x, *y, *out;
    int64_t len;
    double *buf;
} sm_job;

/* Lines [begin, end) in row-major order of the other dims, computed into buf (out may alias an input). */
static void sm_lines(void *ctx, size_t begin, size_t end) {
    const sm_job *j = ctx;
    const sm_plan *p = j->p;
    const pyaclnn_stub_tensor *x = j->x, *y = j->y;
    int64_t len = j->len;
    for (int64_t l = (int64_t)begin; l < (int64_t)end; l++) {
        int64_t xo = x->offset, yo = y ? y->offset : 0, rem = l;
        for (int64_t d = x->ndim - 1; d >= 0; d--) {
            if (d == p->dim) continue;
            int64_t i = rem % x->shape[d];
            rem /= x->shape[d];
            xo += i * x->strides[d];
            if (y) yo += i * y->strides[d];
        }
        int64_t xs = x->ndim ? x->strides[p->dim] : 0, ys = y && y->ndim ? y->strides[p->dim] : 0;
        double *v = j->buf + l * len;
        if (!p->backward) {
            double m = -INFINITY;
            for (int64_t i = 0; i < len; i++) {
                v[i] = ld(x, xo + i * xs);
                if (v[i] > m || isnan(v[i])) m = isnan(m) ? m : v[i];
            }
            double s = 0.0;
            for (int64_t i = 0; i < len; i++) s += exp(v[i] - m);
            if (p->kind == SM_LOG_SOFTMAX) {
                double lse = log(s);
                for (int64_t i = 0; i < len; i++) v[i] = (v[i] - m) - lse;
            } else {
                for (int64_t i = 0; i < len; i++) v[i] = exp(v[i] - m) / s;
            }
        } else if (p->kind == SM_LOG_SOFTMAX_BWD) {   /* g - exp(y) * sum(g) */
            double s = 0.0;
            for (int64_t i = 0; i < len; i++) s += ld(x, xo + i * xs);
            for (int64_t i = 0; i < len; i++) v[i] = ld(x, xo + i * xs) - exp(ld(y, yo + i * ys)) * s;
        } else {                                      /* y * (g - sum(g * y)) */
            double s = 0.0;
            for (int64_t i = 0; i < len; i++) s += ld(x, xo + i * xs) * ld(y, yo + i * ys);
            for (int64_t i = 0; i < len; i++) v[i] = ld(y, yo + i * ys) * (ld(x, xo + i * xs) - s);
        }
    }
}

/* buf is in the order (other dims..., dim): lines [begin, end) written back through that order of out. */
static void sm_store(void *ctx, size_t begin, size_t end) {
    const sm_job *j = ctx;
    const pyaclnn_stub_tensor *out = j->out;
    int64_t len = j->len, dim = j->p->dim;
    for (int64_t l = (int64_t)begin; l < (int64_t)end; l++) {
        int64_t oo = out->offset, rem = l;
        for (int64_t d = out->ndim - 1; d >= 0; d--) {
            if (d == dim) continue;
            oo += (rem % out->shape[d]) * out->strides[d];
            rem /= out->shape[d];
        }
        int64_t os = out->ndim ? out->strides[dim] : 0;
        for (int64_t i = 0; i < len; i++)
            ew_store(tv_at(out, oo + i * os), out->dtype,
                     ew_cast((ew_value){j->buf[l * len + i], 0}, ACL_DOUBLE, out->dtype));
    }
}

void softmax_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const sm_plan *p = launch->params;
    const pyaclnn_stub_tensor *x = &launch->inputs[0], *y = p->backward ? &launch->inputs[1] : NULL;
    const pyaclnn_stub_tensor *out = &launch->outputs[0];
    int64_t len = x->ndim ? x->shape[p->dim] : 1;
    int64_t lines = len ? pyaclnn_stub_numel(x) / len : 0;
    double *buf = tv_alloc(lines * len, sizeof(double));   /* lines * len: x's element count */
    if (buf == NULL) {
        tv_fail_oom(launch);
        return;
    }
    /* Lines split over the kernel pool (each line's sums are its own: the bytes never depend on the thread
     * count), about 16k elements per thread before a second joins; every line is computed before any is
     * stored, and an out that addresses an element twice is written by one thread in row-major order. */
    sm_job j = {p, x, y, out, len, buf};
    size_t per_thread = (size_t)(1 + (1 << 14) / (len + 1));
    op_parallel_for((size_t)lines, op_thread_count((size_t)lines, per_thread), sm_lines, &j);
    op_parallel_for((size_t)lines, tv_may_self_overlap(out) ? 1 : op_thread_count((size_t)lines, per_thread), sm_store,
                    &j);
    free(buf);
}

/* softmax_dim t dim: dim in range of t's dims (a 0-d t counts as 1-d); the plan (the definition's spec)
 * along the wrapped dim. */
aclnnStatus opc_softmax_dim(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *t = op_tensor(c, s, 0);
    int64_t dim = op_argument(c, s, 1)->i, r = t->ndim ? t->ndim : 1;
    if (dim >= r || dim < -r) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "provided dim %lld not in the range of input size %lld.",
                            (long long)dim, (long long)r);
        return ACLNN_ERR_PARAM_INVALID;
    }
    sm_plan *plan = op_params(c, sizeof *plan);
    *plan = *(const sm_plan *)c->def->spec;
    plan->dim = t->ndim == 0 ? 0 : dim < 0 ? dim + r : dim;
    return ACLNN_SUCCESS;
}
