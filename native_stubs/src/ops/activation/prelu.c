/*
 * Prelu and PreluBackward (prelu.toml): the kernels over self's elements, weight indexed by the channel (dim 1 of
 * a self of two or more dims; a single weight for all), and the op_api checks of aclnn_prelu.cpp /
 * aclnn_prelu_backward.cpp with their messages.
 */
#include <stdlib.h>

#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"

typedef struct {
    int64_t channels, inner;   /* self's dim 1 (1 for fewer dims) and the product of the dims after it */
    int64_t wn;                /* weight's element count (1: one weight for all)                      */
    aclDataType compute;       /* the promoted dtype                                                   */
} prelu_params;

/* x rounded to dtype dt (values of the float dtypes widened to double). */
static double rnd(double x, aclDataType dt) { return ew_cast((ew_value){x, 0}, ACL_DOUBLE, dt).f; }

static int64_t channel_of(const prelu_params *p, int64_t i) {
    return p->wn == 1 ? 0 : (i / p->inner) % p->channels;
}

/* inputs: self, weight; output: out. */
void prelu_kernel(const pyaclnn_stub_launch *launch) {
    const prelu_params *p = launch->params;
    if (!tv_launch_views_ok(launch)) return;
    const pyaclnn_stub_tensor *self = &launch->inputs[0], *out = &launch->outputs[0];
    int64_t n = pyaclnn_stub_numel(self);
    double *x = tv_load_double(self), *w = tv_load_double(&launch->inputs[1]), *r = tv_alloc(n, sizeof *r);
    if (x == NULL || w == NULL || r == NULL) {
        tv_fail_oom(launch);
    } else {
        for (int64_t i = 0; i < n; i++) {
            double xi = rnd(x[i], p->compute), wi = rnd(w[channel_of(p, i)], p->compute);
            r[i] = xi > 0 ? xi : rnd(xi * wi, p->compute);
        }
        tv_store_double(out, r);
    }
    free(x), free(w), free(r);
}

/* inputs: gradOutput, self, weight; outputs: gradInput, gradWeight. */
void prelu_backward_kernel(const pyaclnn_stub_launch *launch) {
    const prelu_params *p = launch->params;
    if (!tv_launch_views_ok(launch)) return;
    const pyaclnn_stub_tensor *self = &launch->inputs[1];
    int64_t n = pyaclnn_stub_numel(self);
    double *dy = tv_load_double(&launch->inputs[0]), *x = tv_load_double(self), *w = tv_load_double(&launch->inputs[2]);
    double *gi = tv_alloc(n, sizeof *gi), *gw = calloc((size_t)p->wn, sizeof *gw);
    if (dy == NULL || x == NULL || w == NULL || gi == NULL || gw == NULL) {
        tv_fail_oom(launch);
    } else {
        aclDataType dt = p->compute;
        for (int64_t i = 0; i < n; i++) {
            int64_t ch = channel_of(p, i);
            gi[i] = x[i] > 0 ? dy[i] : rnd(dy[i] * w[ch], dt);
            gw[ch] += x[i] > 0 ? 0.0 : rnd(dy[i] * x[i], dt);
        }
        tv_store_double(&launch->outputs[0], gi);
        tv_store_double(&launch->outputs[1], gw);
    }
    free(dy), free(x), free(w), free(gi), free(gw);
}

/* prelu_promote self weight out: PromoteType(self, weight) castable to out (the vendor's messages). */
aclnnStatus opc_prelu_promote(op_call *c, const op_step *s) {
    aclDataType a = op_tensor(c, s, 0)->dtype, b = op_tensor(c, s, 1)->dtype, out = op_tensor(c, s, 2)->dtype;
    aclDataType p = ew_promote(a, b);
    char b1[24], b2[24];
    if (p == ACL_DT_UNDEFINED)
        return op_invalidf(c->api, "Self dtype %s and weight dtype %s can not promote dtype.", op_dtype_name(a, b1),
                           op_dtype_name(b, b2));
    if (!ew_can_cast(p, out))
        return op_invalidf(c->api, "Result type %s can't be cast to the desired output type %s.", op_dtype_name(p, b1),
                           op_dtype_name(out, b2));
    c->compute = p;
    return ACLNN_SUCCESS;
}

/* prelu_plan self weight [1]: weight one value or one per channel ("expected weight tensor size equal input
 * channels"); the kernel's parameters. The compute dtype: with 1, prelu_promote's promotion, else self's. */
aclnnStatus opc_prelu_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0), *w = op_tensor(c, s, 1);
    int64_t channels = self->ndim <= 1 ? 1 : self->shape[1], wn = pyaclnn_stub_numel(w);
    if (wn != channels && wn != 1)
        return op_invalidf(c->api, "expected weight tensor size equal input channels, but found %lld does not equal "
                           "%lld", (long long)wn, (long long)channels);
    prelu_params *prm = op_params(c, sizeof *prm);
    *prm = (prelu_params){channels, self->ndim <= 2 ? 1 : tv_dims_product(self->shape, 2, self->ndim), wn,
                          s->n == 1 ? c->compute : self->dtype};
    if (prm->inner == 0 || prm->channels == 0) prm->inner = prm->channels = 1;   /* empty: nothing runs */
    return ACLNN_SUCCESS;
}

/* prelu_grad_shapes gradOutput self weight gradWeight: aclnn_prelu_backward.cpp's shape checks after gradInput's. */
aclnnStatus opc_prelu_grad_shapes(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *dy = op_tensor(c, s, 0), *self = op_tensor(c, s, 1), *w = op_tensor(c, s, 2),
                              *gw = op_tensor(c, s, 3);
    int64_t wn = pyaclnn_stub_numel(w);
    if (wn != 1) {
        if (self->ndim < 1)
            return op_invalidf(c->api, "The %s tensor must have at least 1 dimensions.", op_pname(c, s, 1));
        int64_t channels = self->ndim > 1 ? self->shape[1] : 1;
        if (wn != channels) return op_invalidf(c->api, "the number of weight elements must be 1 or self channel size");
        aclnnStatus rc = op_expected_size(c->api, op_pname(c, s, 3), gw, &channels, 1);
        if (rc) return rc;
    } else {
        op_step eq = *s;
        eq.p[0] = s->p[2], eq.p[1] = s->p[3], eq.np = 2;
        aclnnStatus rc = opc_shape_equal(c, &eq);
        if (rc) return rc;
    }
    int64_t shape[PYACLNN_STUB_MAX_DIMS], ndim;
    aclnnStatus rc = ew_broadcast(c->api, op_pname(c, s, 1), self, op_pname(c, s, 0), dy, shape, &ndim);
    if (rc) return rc;
    int same = ndim == self->ndim;
    for (int64_t d = 0; same && d < ndim; d++) same = shape[d] == self->shape[d];
    if (same) return ACLNN_SUCCESS;
    char a[200], b[200];
    return op_invalidf(c->api, "the broadcastShape[%s] of gradOutput and self must be equal with selfShape[%s].",
                       tv_shape_text(shape, ndim, a, sizeof a), tv_shape_text(self->shape, self->ndim, b, sizeof b));
}
