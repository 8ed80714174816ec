/*
 * aclnnNLLLoss and aclnnNLLLossBackward (hicann/ops-nn loss/nll_loss/op_api/aclnn_nll_loss.cpp and
 * loss/nll_loss_grad op_api): torch's nll_loss over self [N, C] (or [C] with a 0-D target).
 *   forward:  l_i = -w[t_i] * self[i, t_i] (0 where t_i == ignoreIndex); out = l (reduction 0),
 *             sum(l) / sum(w[t_i]) (1, mean) or sum(l) (2); totalWeightOut = sum(w[t_i]) (reductions 1, 2).
 *   backward: out[i, t_i] = -g_i * w[t_i] (/ totalWeight for mean), 0 elsewhere; g_i = gradOutput[i]
 *             (reduction 0 on [N, C]) or its single element.
 * Arithmetic (class c): every product and quotient in fp32, the sums in fp32 in target order (the
 * vendor's kernel splits them over cores in an order it does not publish), one rounding to the output
 * dtype. A target outside [0, C) that is not ignoreIndex is a device fault.
 * Validation: nll_loss.toml, in the vendor's order, with the steps below.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/view.h"
#include "nll_loss.h"
#include "opbase/checks.h"
#include "ops_decls.h"

enum { REDUCTION_NONE = 0, REDUCTION_MEAN = 1, REDUCTION_SUM = 2 };


/* ---- kernels -------------------------------------------------------------------------------- */

/* The targets as int64 (NULL if out of memory); a device fault (returns 0) if one is out of range. */
static int load_targets(const pyaclnn_stub_launch *launch, const nll_plan *p, const pyaclnn_stub_tensor *t,
                        int64_t **targets) {
    double *v = tv_load_double(t);
    int64_t *out = tv_alloc(p->rows, sizeof(int64_t));
    if (v == NULL || out == NULL) {
        free(v);
        free(out);
        tv_fail_oom(launch);
        return 0;
    }
    for (int64_t i = 0; i < p->rows; i++) {
        out[i] = (int64_t)v[i];
        if (out[i] != p->ignore_index && (out[i] < 0 || out[i] >= p->classes)) {
            pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "%s: target %lld is out of bounds [0, %lld)",
                                   launch->op_name, (long long)out[i], (long long)p->classes);
            free(v);
            free(out);
            return 0;
        }
    }
    free(v);
    *targets = out;
    return 1;
}

void nll_loss_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const nll_plan *p = launch->params;
    const pyaclnn_stub_tensor *out = &launch->outputs[0], *tw_out = &launch->outputs[1];
    int64_t *t = NULL;
    float *x = tv_load_float(&launch->inputs[0]), *w = tv_load_float(&launch->inputs[2]);
    float *loss = tv_alloc(p->rows, sizeof(float));
    if (x == NULL || w == NULL || loss == NULL) {
        tv_fail_oom(launch);
        goto done;
    }
    if (!load_targets(launch, p, &launch->inputs[1], &t)) goto done;
    float sum = 0.0f, total = 0.0f;
    for (int64_t i = 0; i < p->rows; i++) {
        if (t[i] == p->ignore_index) {
            loss[i] = 0.0f;
            continue;
        }
        float wi = w[t[i]];
        loss[i] = -(wi * x[i * p->classes + t[i]]);
        sum += loss[i];
        total += wi;
    }
    if (p->reduction == REDUCTION_NONE) {
        tv_store_float(out, loss);
    } else {
        float r = p->reduction == REDUCTION_MEAN ? sum / total : sum;
        tv_store_float(out, &r);
        tv_store_float(tw_out, &total);
    }
done:
    free(x);
    free(w);
    free(loss);
    free(t);
}

void nll_loss_backward_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const nll_plan *p = launch->params;
    const pyaclnn_stub_tensor *out = &launch->outputs[0];
    int64_t *t = NULL;
    float *g = tv_load_float(&launch->inputs[0]), *w = tv_load_float(&launch->inputs[3]);
    float *tw = tv_load_float(&launch->inputs[4]);
    float *grad = calloc((size_t)(p->rows * p->classes) + 1, sizeof(float));
    if (g == NULL || w == NULL || tw == NULL || grad == NULL) {
        tv_fail_oom(launch);
        goto done;
    }
    if (!load_targets(launch, p, &launch->inputs[2], &t)) goto done;
    int per_row = p->reduction == REDUCTION_NONE && (launch->inputs[1].ndim == 2 || p->grad_per_row);   /* [N] */
    for (int64_t i = 0; i < p->rows; i++) {
        if (t[i] == p->ignore_index) continue;
        float v = -(g[per_row ? i : 0] * w[t[i]]);
        grad[i * p->classes + t[i]] = p->reduction == REDUCTION_MEAN ? v / tw[0] : v;
    }
    tv_store_float(out, grad);
done:
    free(g);
    free(w);
    free(tw);
    free(grad);
    free(t);
}

/* ---- steps ---------------------------------------------------------------------------------- */

/* nll_castable self out ...: self's dtype can be cast to each output's (one the emulator has elements for). */
aclnnStatus opc_nll_castable(op_call *c, const op_step *s) {
    aclDataType from = op_tensor(c, s, 0)->dtype;
    for (int k = 1; k < s->np; k++) {
        aclDataType to = op_tensor(c, s, k)->dtype;
        if (ew_can_cast(from, to) && ew_itemsize(to) != 0) continue;
        char b1[24], b2[24];
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Result dtype %s can't be cast to the desired output "
                            "type %s", op_dtype_name(from, b1), op_dtype_name(to, b2));
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

/* nll_reduction reduction: 0 (none), 1 (mean) or 2 (sum). */
aclnnStatus opc_nll_reduction(op_call *c, const op_step *s) {
    int64_t reduction = op_argument(c, s, 0)->i;
    if (reduction >= REDUCTION_NONE && reduction <= REDUCTION_SUM) return ACLNN_SUCCESS;
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Reduction should be between 0 and 2, but current is %lld.",
                        (long long)reduction);
    return ACLNN_ERR_PARAM_INVALID;
}

static aclnnStatus invalid(const char *api, const char *msg) {
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "%s", msg);
    return ACLNN_ERR_PARAM_INVALID;
}

/* The shape checks both operators share: self 1-D/2-D, target 0-D/1-D matching, weight [C]. */
static aclnnStatus check_self_target_weight(const char *api, const pyaclnn_stub_tensor *s,
                                            const pyaclnn_stub_tensor *t, const pyaclnn_stub_tensor *w,
                                            int backward) {
    char a[200], b[200];
    if (s->ndim < 1 || s->ndim > 2) return invalid(api, "Input tensor should be 1D or 2D.");
    if (t->ndim > 1) return invalid(api, "0D or 1D target tensor expected, multi-target not supported.");
    int no_batch = s->ndim == 1 && t->ndim == 0;
    int batch = s->ndim == 2 && t->ndim == 1 && s->shape[0] == t->shape[0];
    if (backward ? !(no_batch || (t->ndim == 1 && s->shape[0] == t->shape[0])) : !(no_batch || batch)) {
        tv_shape_text(s->shape, s->ndim, a, sizeof a);
        tv_shape_text(t->shape, t->ndim, b, sizeof b);
        if (backward)
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "Size mismatch (got input: %s, target: %s) ", a, b);
        else
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "when self is 1D, target need be 0D; when self is 2D, "
                                "target need be 1D, and target first dimension need equal to self first dimension, "
                                "but (got self: %s, target: %s)", a, b);
        return ACLNN_ERR_PARAM_INVALID;
    }
    int64_t classes = s->shape[s->ndim - 1];
    if (w->ndim != 1 || w->shape[0] != classes) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "Weight tensor should be defined for all %lld classes but "
                            "got weight tensor of shape: %s", (long long)classes,
                            tv_shape_text(w->shape, w->ndim, a, sizeof a));
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

/* nll_shapes self target weight: self 1-D or 2-D, target 0-D (self 1-D) or 1-D of self's rows, weight [C]. */
aclnnStatus opc_nll_shapes(op_call *c, const op_step *s) {
    return check_self_target_weight(c->api, op_tensor(c, s, 0), op_tensor(c, s, 1), op_tensor(c, s, 2), 0);
}

/* nll_backward_shapes self target weight: as nll_shapes, with the backward's rule and message for a target
 * that does not match self. */
aclnnStatus opc_nll_backward_shapes(op_call *c, const op_step *s) {
    return check_self_target_weight(c->api, op_tensor(c, s, 0), op_tensor(c, s, 1), op_tensor(c, s, 2), 1);
}

/* A one-element tensor of at most one dimension. */
static int is_single(const pyaclnn_stub_tensor *t) { return t->ndim <= 1 && pyaclnn_stub_numel(t) == 1; }

/* nll_reduced_shape t@name self reduction: t (the forward's out, the backward's gradOutput) is [N] for
 * reduction 0 over a 2-D self, else a single element (that message calls it by its label). */
aclnnStatus opc_nll_reduced_shape(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *t = op_tensor(c, s, 0), *self = op_tensor(c, s, 1);
    const char *name = c->def->params[s->p[0]].name;
    char a[200];
    if (op_argument(c, s, 2)->i == REDUCTION_NONE && self->ndim == 2) {
        if (t->ndim == 1 && t->shape[0] == self->shape[0]) return ACLNN_SUCCESS;
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Expect %s shape [%lld], but got: %s.", name,
                            (long long)self->shape[0], tv_shape_text(t->shape, t->ndim, a, sizeof a));
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (is_single(t)) return ACLNN_SUCCESS;
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Expected a single element %s tensor, but got: %s",
                        op_pname(c, s, 0), tv_shape_text(t->shape, t->ndim, a, sizeof a));
    return ACLNN_ERR_PARAM_INVALID;
}

/* nll_total_weight t: the total weight holds one element (the forward's output totalWeightOut, the
 * backward's input totalWeight: each with its vendor's message). */
aclnnStatus opc_nll_total_weight(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *tw = op_tensor(c, s, 0);
    if (pyaclnn_stub_numel(tw) == 1) return ACLNN_SUCCESS;
    char a[200];
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api,
                        c->def->params[s->p[0]].role == OP_IN
                            ? "Expected %s to be a single element tensor, but current is %s."
                            : "Shape of %s tensor should be [1], but current is %s.",
                        op_pname(c, s, 0), tv_shape_text(tw->shape, tw->ndim, a, sizeof a));
    return ACLNN_ERR_PARAM_INVALID;
}

/* nll_plan self reduction ignoreIndex: the kernels' plan (rows, classes). */
aclnnStatus opc_nll_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0);
    nll_plan *plan = op_params(c, sizeof *plan);
    *plan = (nll_plan){op_argument(c, s, 1)->i, op_argument(c, s, 2)->i, self->ndim == 2 ? self->shape[0] : 1,
                       self->shape[self->ndim - 1], 0};
    return ACLNN_SUCCESS;
}

/* nll_forward_empty self target reduction: no classes for a non-empty target is out of bounds. An empty
 * self runs the kernel too: no rows give NaN (mean) or 0 (sum) and a total weight of 0, as the vendor's
 * Fill branch does; reduction 0 writes nothing. */
aclnnStatus opc_nll_forward_empty(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0);
    if (pyaclnn_stub_numel(self) == 0 && self->shape[self->ndim - 1] == 0 && pyaclnn_stub_numel(op_tensor(c, s, 1)) > 0)
        return invalid(c->api, "Target is out of bounds");
    if (op_argument(c, s, 2)->i == REDUCTION_NONE && pyaclnn_stub_numel(self) == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}
