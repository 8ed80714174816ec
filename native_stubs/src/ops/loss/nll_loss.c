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
 * Validation in the vendor's order (both operators):
 *   1. every tensor non-NULL                                                            -> 161001
 *   2. weight (backward: and gradOutput, totalWeight) of self's dtype; self's dtype castable to the
 *      outputs; self FLOAT/FLOAT16/BF16; target INT64/UINT8/INT32                       -> 161002
 *   3. reduction in 0..2                                                                -> 161002
 *   4. self 1-D or 2-D, target 0-D or 1-D matching it, weight [C], the outputs' shapes  -> 161002
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aclnnop/aclnn_nll_loss.h"
#include "aclnnop/aclnn_nll_loss_backward.h"
#include "opbase/checks.h"
#include "kernels/view.h"

#define N(a) (sizeof a / sizeof a[0])

static const aclDataType SELF_DTYPES[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
static const aclDataType TARGET_DTYPES[] = {ACL_INT64, ACL_UINT8, ACL_INT32};

enum { REDUCTION_NONE = 0, REDUCTION_MEAN = 1, REDUCTION_SUM = 2 };

typedef struct {
    int64_t reduction, ignore_index, rows, classes;
} nll_plan;

/* ---- kernels -------------------------------------------------------------------------------- */

/* The targets as int64 (NULL if out of memory); a device fault (returns 0) if one is out of range. */
static int load_targets(const pyaclnn_stub_launch *launch, const nll_plan *p, const pyaclnn_stub_tensor *t,
                        int64_t **targets) {
    double *v = tv_load_double(t);
    int64_t *out = malloc((size_t)p->rows * sizeof(int64_t) + 1);
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

static void nll_loss_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const nll_plan *p = launch->params;
    const pyaclnn_stub_tensor *out = &launch->outputs[0], *tw_out = &launch->outputs[1];
    int64_t *t = NULL;
    float *x = tv_load_float(&launch->inputs[0]), *w = tv_load_float(&launch->inputs[2]);
    float *loss = malloc((size_t)p->rows * sizeof(float) + 1);
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

static void nll_loss_backward_kernel(const pyaclnn_stub_launch *launch) {
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
    int per_row = p->reduction == REDUCTION_NONE && launch->inputs[1].ndim == 2;   /* gradOutput is [N] */
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

/* ---- phase 1 -------------------------------------------------------------------------------- */

static aclnnStatus check_castable(const char *api, aclDataType from, aclDataType to) {
    if (ew_can_cast(from, to) && ew_itemsize(to) != 0) return ACLNN_SUCCESS;
    char b1[24], b2[24];
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "Result dtype %s can't be cast to the desired output type %s",
                        op_dtype_name(from, b1), op_dtype_name(to, b2));
    return ACLNN_ERR_PARAM_INVALID;
}

static aclnnStatus check_reduction(const char *api, int64_t reduction) {
    if (reduction >= REDUCTION_NONE && reduction <= REDUCTION_SUM) return ACLNN_SUCCESS;
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "Reduction should be between 0 and 2, but current is %lld.",
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

/* A one-element tensor of at most one dimension. */
static int is_single(const pyaclnn_stub_tensor *t) { return t->ndim <= 1 && pyaclnn_stub_numel(t) == 1; }

aclnnStatus aclnnNLLLossGetWorkspaceSize(const aclTensor *self, const aclTensor *target, const aclTensor *weight,
                                         int64_t reduction, int64_t ignoreIndex, aclTensor *out,
                                         aclTensor *totalWeightOut, uint64_t *workspaceSize, aclOpExecutor **executor) {
    static const char API[] = "aclnnNLLLossGetWorkspaceSize";
    const char *names[] = {"self", "target", "weight", "out", "totalWeightOut"};
    const void *ptrs[] = {self, target, weight, out, totalWeightOut};
    aclnnStatus rc = tv_check_not_null(API, names, ptrs, 5, workspaceSize, executor);
    if (rc) return rc;
    pyaclnn_stub_tensor s, t, w, o, tw;
    if ((rc = op_tensor_arg(API, "self", self, &s)) || (rc = op_tensor_arg(API, "target", target, &t)) ||
        (rc = op_tensor_arg(API, "weight", weight, &w)) || (rc = op_tensor_arg(API, "out", out, &o)) ||
        (rc = op_tensor_arg(API, "totalWeightOut", totalWeightOut, &tw)))
        return rc;
    if ((rc = tv_check_same_dtype(API, "weight", w.dtype, "self", s.dtype)) ||
        (rc = check_castable(API, s.dtype, o.dtype)) || (rc = check_castable(API, s.dtype, tw.dtype)) ||
        (rc = ew_check_dtype_in(API, "self", s.dtype, SELF_DTYPES, N(SELF_DTYPES))) ||
        (rc = ew_check_dtype_in(API, "target", t.dtype, TARGET_DTYPES, N(TARGET_DTYPES))) ||
        (rc = check_reduction(API, reduction)) || (rc = check_self_target_weight(API, &s, &t, &w, 0)))
        return rc;
    char a[200];
    int64_t rows = s.ndim == 2 ? s.shape[0] : 1, classes = s.shape[s.ndim - 1];
    if (reduction == REDUCTION_NONE && s.ndim == 2) {
        if (o.ndim != 1 || o.shape[0] != rows) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "Expect out shape [%lld], but got: %s.",
                                (long long)rows, tv_shape_text(o.shape, o.ndim, a, sizeof a));
            return ACLNN_ERR_PARAM_INVALID;
        }
    } else if (!is_single(&o)) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "Expected a single element out tensor, but got: %s",
                            tv_shape_text(o.shape, o.ndim, a, sizeof a));
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (pyaclnn_stub_numel(&tw) != 1) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "Shape of totalWeightOut tensor should be [1], but current "
                            "is %s.", tv_shape_text(tw.shape, tw.ndim, a, sizeof a));
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (pyaclnn_stub_numel(&s) == 0 && classes == 0 && pyaclnn_stub_numel(&t) > 0)
        return invalid(API, "Target is out of bounds");
    nll_plan plan = {reduction, ignoreIndex, rows, classes};
    const aclTensor *in[3] = {self, target, weight};
    const aclTensor *outs[2] = {out, totalWeightOut};
    /* An empty self runs the kernel too: no rows give NaN (mean) or 0 (sum) and a total weight of 0, as the
     * vendor's Fill branch does; reduction 0 writes nothing. */
    int nothing = reduction == REDUCTION_NONE && pyaclnn_stub_numel(&s) == 0;
    return tv_make_executor(API, "NLLLoss", nothing ? NULL : nll_loss_kernel, &plan, sizeof plan, in, 3, outs, 2,
                            workspaceSize, executor);
}

aclnnStatus aclnnNLLLoss(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnNLLLoss", workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnNLLLossBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self,
                                                 const aclTensor *target, const aclTensor *weight, int64_t reduction,
                                                 int64_t ignoreIndex, const aclTensor *totalWeight, aclTensor *out,
                                                 uint64_t *workspaceSize, aclOpExecutor **executor) {
    static const char API[] = "aclnnNLLLossBackwardGetWorkspaceSize";
    const char *names[] = {"gradOutput", "self", "target", "weight", "totalWeight", "out"};
    const void *ptrs[] = {gradOutput, self, target, weight, totalWeight, out};
    aclnnStatus rc = tv_check_not_null(API, names, ptrs, 6, workspaceSize, executor);
    if (rc) return rc;
    pyaclnn_stub_tensor g, s, t, w, tw, o;
    if ((rc = op_tensor_arg(API, "gradOutput", gradOutput, &g)) || (rc = op_tensor_arg(API, "self", self, &s)) ||
        (rc = op_tensor_arg(API, "target", target, &t)) || (rc = op_tensor_arg(API, "weight", weight, &w)) ||
        (rc = op_tensor_arg(API, "totalWeight", totalWeight, &tw)) || (rc = op_tensor_arg(API, "out", out, &o)))
        return rc;
    if ((rc = tv_check_same_dtype(API, "weight", w.dtype, "self", s.dtype)) ||
        (rc = tv_check_same_dtype(API, "gradOutput", g.dtype, "self", s.dtype)) ||
        (rc = tv_check_same_dtype(API, "totalWeight", tw.dtype, "self", s.dtype)) ||
        (rc = check_castable(API, s.dtype, o.dtype)) ||
        (rc = ew_check_dtype_in(API, "self", s.dtype, SELF_DTYPES, N(SELF_DTYPES))) ||
        (rc = ew_check_dtype_in(API, "target", t.dtype, TARGET_DTYPES, N(TARGET_DTYPES))) ||
        (rc = check_reduction(API, reduction)) || (rc = check_self_target_weight(API, &s, &t, &w, 1)))
        return rc;
    char a[200];
    int64_t rows = s.ndim == 2 ? s.shape[0] : 1, classes = s.shape[s.ndim - 1];
    if (pyaclnn_stub_numel(&tw) != 1) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "Expected totalWeight to be a single element tensor, but "
                            "current is %s.", tv_shape_text(tw.shape, tw.ndim, a, sizeof a));
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (reduction == REDUCTION_NONE && s.ndim == 2) {
        if (g.ndim != 1 || g.shape[0] != rows) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "Expect gradOutput shape [%lld], but got: %s.",
                                (long long)rows, tv_shape_text(g.shape, g.ndim, a, sizeof a));
            return ACLNN_ERR_PARAM_INVALID;
        }
    } else if (!is_single(&g)) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "Expected a single element grad_output tensor, but got: %s",
                            tv_shape_text(g.shape, g.ndim, a, sizeof a));
        return ACLNN_ERR_PARAM_INVALID;
    }
    if ((rc = ew_check_shape(API, "out", &o, s.shape, s.ndim))) return rc;
    nll_plan plan = {reduction, ignoreIndex, rows, classes};
    const aclTensor *in[5] = {gradOutput, self, target, weight, totalWeight};
    const aclTensor *outs[1] = {out};
    return tv_make_executor(API, "NLLLossBackward", pyaclnn_stub_numel(&s) ? nll_loss_backward_kernel : NULL, &plan,
                            sizeof plan, in, 5, outs, 1, workspaceSize, executor);
}

aclnnStatus aclnnNLLLossBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                 aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnNLLLossBackward", workspace, workspaceSize, executor, stream);
}
