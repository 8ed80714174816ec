/*
 * SoftMarginLoss / SoftMarginLossBackward (soft_margin.toml): kernels over the broadcast shape (values of the
 * promoted dtype, widened to double), one rounding to the promoted dtype, then the store's to out; the checks of
 * out's shape with the op_apis' messages.
 */
#include <math.h>
#include <stdlib.h>

#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"

enum { SML_NONE = 0, SML_MEAN = 1 };

typedef struct {
    int64_t shape[PYACLNN_STUB_MAX_DIMS], ndim, n;   /* the broadcast shape and its element count */
    int64_t reduction;
    aclDataType compute;                             /* the promoted dtype                        */
} sml_params;

static double rnd(double x, aclDataType dt) { return ew_cast((ew_value){x, 0}, ACL_DOUBLE, dt).f; }

/* log(1 + exp(z)) without overflow. */
static double softplus(double z) { return z > 0 ? z + log1p(exp(-z)) : log1p(exp(z)); }

/* inputs: self, target; output: out. */
void soft_margin_kernel(const pyaclnn_stub_launch *launch) {
    const sml_params *p = launch->params;
    if (!tv_launch_views_ok(launch)) return;
    const pyaclnn_stub_tensor *out = &launch->outputs[0];
    if (p->n == 0) {   /* mean of nothing: NaN; sum: 0 (the op_api's fills) */
        double v = p->reduction == SML_MEAN ? NAN : 0.0;
        if (p->reduction != SML_NONE) tv_store_double(out, &v);
        return;
    }
    float *x = tv_load_float_as(&launch->inputs[0], p->shape, p->ndim);
    float *y = tv_load_float_as(&launch->inputs[1], p->shape, p->ndim);
    int none = p->reduction == SML_NONE;
    double sum = 0, *l = tv_alloc(none ? p->n : 1, sizeof *l);   /* reductions keep only the sum */
    if (x == NULL || y == NULL || l == NULL) {
        tv_fail_oom(launch);
    } else {
        for (int64_t i = 0; i < p->n; i++) {
            double v = softplus(-(double)y[i] * (double)x[i]);   /* fp16/bf16/fp32 values: the promoted dtype's */
            if (none) l[i] = rnd(v, p->compute);
            sum += v;
        }
        if (!none) l[0] = rnd(p->reduction == SML_MEAN ? sum / (double)p->n : sum, p->compute);
        tv_store_double(out, l);
    }
    free(x), free(y), free(l);
}

/* inputs: self, target, gradOutput; output: out. */
void soft_margin_backward_kernel(const pyaclnn_stub_launch *launch) {
    const sml_params *p = launch->params;
    if (!tv_launch_views_ok(launch)) return;
    float *x = tv_load_float_as(&launch->inputs[0], p->shape, p->ndim);
    float *y = tv_load_float_as(&launch->inputs[1], p->shape, p->ndim);
    float *g = tv_load_float_as(&launch->inputs[2], p->shape, p->ndim);
    double *r = tv_alloc(p->n, sizeof *r);
    if (x == NULL || y == NULL || g == NULL || r == NULL) {
        tv_fail_oom(launch);
    } else {
        double scale = p->reduction == SML_MEAN ? 1.0 / (double)p->n : 1.0;
        for (int64_t i = 0; i < p->n; i++) {
            double t = rnd(y[i], p->compute), z = -t * rnd(x[i], p->compute);
            double s = z >= 0 ? 1.0 / (1.0 + exp(-z)) : exp(z) / (1.0 + exp(z));
            r[i] = rnd(-t * s * rnd(g[i], p->compute) * scale, p->compute);
        }
        tv_store_double(&launch->outputs[0], r);
    }
    free(x), free(y), free(g), free(r);
}

/* sml_out out reduction: none -- out has the broadcast shape (OP_CHECK_SHAPE_NOT_EQUAL_WITH_EXPECTED_SIZE); else a
 * 0-d out. */
aclnnStatus opc_sml_out(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *out = op_tensor(c, s, 0);
    if (op_argument(c, s, 1)->i == SML_NONE) return op_expected_size(c->api, op_pname(c, s, 0), out, c->shape, c->ndim);
    if (out->ndim == 0) return ACLNN_SUCCESS;
    char b[200];
    return op_invalidf(c->api, "Expected a 0-dimensional tensor, but Shape of out is %s.",
                       tv_shape_text(out->shape, out->ndim, b, sizeof b));
}

/* sml_grad_out out reduction: reduction 0..2 (the emulator's check), out of the broadcast shape. */
aclnnStatus opc_sml_grad_out(op_call *c, const op_step *s) {
    int64_t r = op_argument(c, s, 1)->i;
    if (r < 0 || r > 2) return op_invalidf(c->api, "reduction must be 0 (none), 1 (mean) or 2 (sum), but got %lld.",
                                           (long long)r);
    return op_expected_size(c->api, op_pname(c, s, 0), op_tensor(c, s, 0), c->shape, c->ndim);
}

/* sml_plan self target reduction [gradOutput]: the kernel's parameters over the broadcast shape, computing in the
 * operands' promoted dtype. */
aclnnStatus opc_sml_plan(op_call *c, const op_step *s) {
    sml_params *prm = op_params(c, sizeof *prm);
    aclDataType p = ew_promote(op_tensor(c, s, 0)->dtype, op_tensor(c, s, 1)->dtype);
    if (s->np > 3) p = ew_promote(op_tensor(c, s, 3)->dtype, p);
    prm->ndim = c->ndim;
    for (int64_t d = 0; d < c->ndim; d++) prm->shape[d] = c->shape[d];
    prm->n = tv_dims_product(c->shape, 0, c->ndim);
    prm->reduction = op_argument(c, s, 2)->i;
    prm->compute = p;
    if (prm->n == 0 && (prm->reduction == SML_NONE || s->np > 3)) c->nothing = 1;
    return ACLNN_SUCCESS;
}
