/*
 * NLLLoss2d / NLLLoss2dBackward (nll_loss2d.toml): nll_loss.c's kernels over self [N, C, H, W] seen as its
 * permuted view [N, H, W, C] (row-major: N * H * W rows of C classes, no copy), and the op_apis' shape checks
 * (aclnn_nll_loss2d.cpp, aclnn_nll_loss2d_backward.cpp) with their messages.
 */
#include "kernels/view.h"
#include "nll_loss.h"
#include "opbase/checks.h"
#include "ops_decls.h"

/* t [N, C, H, W] as the view [N, H, W, C]. */
static pyaclnn_stub_tensor channels_last(const pyaclnn_stub_tensor *t) {
    pyaclnn_stub_tensor v = *t;
    int64_t order[4] = {0, 2, 3, 1};
    for (int d = 0; d < 4; d++) {
        v.shape[d] = t->shape[order[d]];
        v.strides[d] = t->strides[order[d]];
    }
    return v;
}

void nll2d_kernel(const pyaclnn_stub_launch *launch) {
    pyaclnn_stub_tensor in[3] = {channels_last(&launch->inputs[0]), launch->inputs[1], launch->inputs[2]};
    pyaclnn_stub_launch one = *launch;
    one.inputs = in;
    nll_loss_kernel(&one);
}

/* inputs: gradOutput, self, target, weight, totalWeight; output: out [N, C, H, W] written as [N, H, W, C]. */
void nll2d_backward_kernel(const pyaclnn_stub_launch *launch) {
    pyaclnn_stub_tensor out = channels_last(&launch->outputs[0]);
    pyaclnn_stub_launch one = *launch;
    one.outputs = &out;
    nll_loss_backward_kernel(&one);
}

static aclnnStatus numel_one(op_call *c, const pyaclnn_stub_tensor *t, const char *what) {
    if (pyaclnn_stub_numel(t) == 1) return ACLNN_SUCCESS;
    char b[200];
    return op_invalidf(c->api, "Shape of %s tensor should be [1], but current is %s.", what,
                       tv_shape_text(t->shape, t->ndim, b, sizeof b));
}

static int self_matches_target(const pyaclnn_stub_tensor *self, const pyaclnn_stub_tensor *target) {
    return self->shape[0] == target->shape[0] && self->shape[2] == target->shape[1] && self->shape[3] == target->shape[2];
}

/* nll2d_shapes self target weight out totalWeightOut reduction: CheckShape2D's checks and messages. */
aclnnStatus opc_nll2d_shapes(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0), *target = op_tensor(c, s, 1), *w = op_tensor(c, s, 2),
                              *out = op_tensor(c, s, 3), *tw = op_tensor(c, s, 4);
    if (self->ndim != 4) return op_invalidf(c->api, "Input tensor dim should be 4D, other dim not supported.");
    if (w->ndim < 1 || w->shape[0] != self->shape[1])
        return op_invalidf(c->api, "Input tensor x[1] should be equal to weight[0].");
    if (target->ndim != 3) return op_invalidf(c->api, "target tensor dim should be 3D, other dim not supported.");
    char a[200], b[200];
    if (!self_matches_target(self, target))
        return op_invalidf(c->api, "size mismatch got input: [%s], target: [%s].", tv_shape_text(self->shape, 4, a, sizeof a),
                           tv_shape_text(target->shape, 3, b, sizeof b));
    if (op_argument(c, s, 5)->i == 0) {
        op_step eq = *s;
        eq.p[0] = s->p[3], eq.p[1] = s->p[1], eq.np = 2;
        aclnnStatus rc = opc_shape_equal(c, &eq);
        if (rc) return rc;
    } else {
        aclnnStatus rc = numel_one(c, out, "out");
        if (rc) return rc;
    }
    return numel_one(c, tw, "totalWeightOut");
}

/* nll2d_grad_shapes gradOutput self target weight totalWeight out reduction: the backward's CheckShape. */
aclnnStatus opc_nll2d_grad_shapes(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *g = op_tensor(c, s, 0), *self = op_tensor(c, s, 1), *target = op_tensor(c, s, 2),
                              *w = op_tensor(c, s, 3), *tw = op_tensor(c, s, 4), *out = op_tensor(c, s, 5);
    char a[200], b[200];
    if (op_argument(c, s, 6)->i == 0) {
        int same = g->ndim == target->ndim;
        for (int64_t d = 0; same && d < g->ndim; d++) same = g->shape[d] == target->shape[d];
        if (!same)
            return op_invalidf(c->api, "Size mismatch (got gradOutput: %s, target: %s) ",
                               tv_shape_text(g->shape, g->ndim, a, sizeof a), tv_shape_text(target->shape, target->ndim, b, sizeof b));
    } else if (g->ndim > 1 || pyaclnn_stub_numel(g) != 1) {
        return op_invalidf(c->api, "Expected a single element grad_output tensor, but got: %s",
                           tv_shape_text(g->shape, g->ndim, a, sizeof a));
    }
    if (self->ndim != 4) return op_invalidf(c->api, "Input tensor should be 4D.");
    if (target->ndim != 3) return op_invalidf(c->api, "target tensor should be 3D.");
    if (!self_matches_target(self, target))
        return op_invalidf(c->api, "Size mismatch (got input: %s, target: %s) ", tv_shape_text(self->shape, 4, a, sizeof a),
                           tv_shape_text(target->shape, 3, b, sizeof b));
    if (pyaclnn_stub_numel(w) != self->shape[1])
        return op_invalidf(c->api, "Weight tensor should be defined for all %lld classes but got weight tensor of shape: %s",
                           (long long)self->shape[1], tv_shape_text(w->shape, w->ndim, a, sizeof a));
    int same = out->ndim == 4;
    for (int64_t d = 0; same && d < 4; d++) same = out->shape[d] == self->shape[d];
    if (!same)
        return op_invalidf(c->api, "Shape of Out tensor should be %s, but current is %s.",
                           tv_shape_text(self->shape, 4, a, sizeof a), tv_shape_text(out->shape, out->ndim, b, sizeof b));
    return numel_one(c, tw, "totalWeight");
}

/* nll2d_plan self reduction ignoreIndex [1]: the NLL plan over N * H * W rows of C classes (1: the backward, whose
 * gradOutput has one element per row for reduction none); reduction none of an empty self launches nothing. */
aclnnStatus opc_nll2d_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0);
    nll_plan *plan = op_params(c, sizeof *plan);
    int64_t reduction = op_argument(c, s, 1)->i;
    *plan = (nll_plan){reduction, op_argument(c, s, 2)->i, self->shape[0] * self->shape[2] * self->shape[3],
                       self->shape[1], s->n == 1 && reduction == 0};
    if (reduction == 0 && pyaclnn_stub_numel(self) == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}
