/*
 * aclnnSoftmax (hicann/ops-nn activation/softmax_v2/op_api/aclnn_softmax.cpp): out = exp(x - max) / sum
 * along dim; aclnnSoftmaxBackward (activation/softmax_grad/op_api): out = y * (g - sum(g * y)) along dim,
 * with y the forward output and g the incoming gradient. Any strides.
 * Arithmetic (class c): each line is widened to double, computed there (exp of libm) and rounded once to
 * out's dtype (fp16/bf16 through fp32, as the NPU's Cast). The NPU computes in fp32 with its own exp and
 * summation order (not published), so results agree to a tolerance.
 * Validation in the vendor's order:
 *   Softmax: self, out non-NULL -> 161001; self, out dtypes FLOAT/FLOAT16/DOUBLE/BF16 -> 161002; dim in
 *     range -> 161002; self at most 8 dims, out shape == self shape -> 161002.
 *   SoftmaxBackward: gradOutput, output, out non-NULL -> 161001; gradOutput, output FLOAT/FLOAT16/BF16 and
 *     output dtype == gradOutput's -> 161002; dim in range; at most 8 dims, output and out shapes ==
 *     gradOutput's -> 161002.
 */
#include <math.h>
#include <stdlib.h>

#include "aclnnop/aclnn_logsoftmax.h"
#include "aclnnop/aclnn_logsoftmax_backward.h"
#include "aclnnop/aclnn_softmax.h"
#include "aclnnop/aclnn_softmax_backward.h"
#include "opbase/checks.h"
#include "kernels/view.h"

#define N(a) (sizeof a / sizeof a[0])

static const aclDataType FWD_DTYPES[] = {ACL_FLOAT, ACL_FLOAT16, ACL_DOUBLE, ACL_BF16};
static const aclDataType BWD_DTYPES[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};

typedef enum { SM_SOFTMAX = 0, SM_SOFTMAX_BWD, SM_LOG_SOFTMAX, SM_LOG_SOFTMAX_BWD } sm_kind;

typedef struct {
    int64_t dim;
    int backward;      /* inputs are (gradOutput, output) */
    sm_kind kind;
} sm_plan;

static double ld(const pyaclnn_stub_tensor *t, int64_t off) {
    return ew_cast(ew_load(tv_at(t, off), t->dtype), t->dtype, ACL_DOUBLE).f;
}

static void sm_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const sm_plan *p = launch->params;
    const pyaclnn_stub_tensor *x = &launch->inputs[0], *y = p->backward ? &launch->inputs[1] : NULL;
    const pyaclnn_stub_tensor *out = &launch->outputs[0];
    int64_t len = x->ndim ? x->shape[p->dim] : 1;
    int64_t lines = len ? pyaclnn_stub_numel(x) / len : 0;
    double *buf = malloc(sizeof(double) * (size_t)(lines * len) + 1);
    if (buf == NULL) {
        tv_fail_oom(launch);
        return;
    }
    /* Lines in row-major order of the other dims; computed into buf (out may alias an input). */
    for (int64_t l = 0; l < lines; l++) {
        int64_t xo = x->offset, yo = y ? y->offset : 0, rem = l;
        for (int64_t d = x->ndim - 1; d >= 0; d--) {
            if (d == p->dim) continue;
            int64_t i = rem % x->shape[d];
            rem /= x->shape[d];
            xo += i * x->strides[d];
            if (y) yo += i * y->strides[d];
        }
        int64_t xs = x->ndim ? x->strides[p->dim] : 0, ys = y && y->ndim ? y->strides[p->dim] : 0;
        double *v = buf + l * len;
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
    /* buf is in the order (other dims..., dim): write it back through that order of out. */
    for (int64_t l = 0; l < lines; l++) {
        int64_t oo = out->offset, rem = l;
        for (int64_t d = out->ndim - 1; d >= 0; d--) {
            if (d == p->dim) continue;
            oo += (rem % out->shape[d]) * out->strides[d];
            rem /= out->shape[d];
        }
        int64_t os = out->ndim ? out->strides[p->dim] : 0;
        for (int64_t i = 0; i < len; i++)
            ew_store(tv_at(out, oo + i * os), out->dtype,
                     ew_cast((ew_value){buf[l * len + i], 0}, ACL_DOUBLE, out->dtype));
    }
    free(buf);
}

static aclnnStatus check_dim(const char *api, const pyaclnn_stub_tensor *t, int64_t dim, int64_t *wrapped) {
    int64_t r = t->ndim ? t->ndim : 1;
    if (dim >= r || dim < -r) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "provided dim %lld not in the range of input size %lld.",
                            (long long)dim, (long long)r);
        return ACLNN_ERR_PARAM_INVALID;
    }
    *wrapped = t->ndim == 0 ? 0 : dim < 0 ? dim + r : dim;
    return ACLNN_SUCCESS;
}

/* Phase 1 of the four operators: the same checks, in each vendor op_api's own order (a list of steps). */
typedef enum {
    SM_END = 0,
    SM_DIM,                   /* dim in range for the first tensor                                   */
    SM_DTYPES_FWD,            /* self, out in FWD_DTYPES                                             */
    SM_CAN_CAST,              /* self's dtype castable to out's                                      */
    SM_DTYPES_GRAD_FIRST,     /* gradOutput, output in BWD_DTYPES; output's dtype == gradOutput's    */
    SM_DTYPES_OUTPUT_FIRST,   /* output, gradOutput in BWD_DTYPES; gradOutput's dtype == output's    */
    SM_MAX_DIM,               /* the first tensor at most 8 dims                                     */
    SM_MAX_DIM_OUT,           /* out at most 8 dims                                                  */
    SM_SHAPES,                /* output (backward) and out of the first tensor's shape               */
} sm_step;

typedef struct {
    const char *api, *op_name;
    sm_kind kind;
    int backward;             /* tensors (gradOutput, output) instead of (self)                      */
    int null_output_first;    /* the null check names output before gradOutput                       */
    sm_step steps[8];
} sm_spec;

static const sm_spec SOFTMAX = {"aclnnSoftmaxGetWorkspaceSize", "Softmax", SM_SOFTMAX, 0, 0,
                                {SM_DTYPES_FWD, SM_DIM, SM_MAX_DIM, SM_SHAPES}};
static const sm_spec SOFTMAX_BWD = {"aclnnSoftmaxBackwardGetWorkspaceSize", "SoftmaxBackward", SM_SOFTMAX_BWD, 1, 0,
                                    {SM_DTYPES_GRAD_FIRST, SM_DIM, SM_MAX_DIM, SM_SHAPES}};
static const sm_spec LOG_SOFTMAX = {"aclnnLogSoftmaxGetWorkspaceSize", "LogSoftmax", SM_LOG_SOFTMAX, 0, 0,
                                    {SM_DIM, SM_DTYPES_FWD, SM_CAN_CAST, SM_MAX_DIM, SM_MAX_DIM_OUT, SM_SHAPES}};
static const sm_spec LOG_SOFTMAX_BWD = {"aclnnLogSoftmaxBackwardGetWorkspaceSize", "LogSoftmaxBackward",
                                        SM_LOG_SOFTMAX_BWD, 1, 1,
                                        {SM_DTYPES_OUTPUT_FIRST, SM_MAX_DIM, SM_SHAPES, SM_DIM}};

static aclnnStatus sm_step_check(const char *api, sm_step step, const char *first_name,
                                 const pyaclnn_stub_tensor *a, const pyaclnn_stub_tensor *y,
                                 const pyaclnn_stub_tensor *o, int64_t dim, sm_plan *plan) {
    aclnnStatus rc = ACLNN_SUCCESS;
    switch (step) {
    case SM_DIM: return check_dim(api, a, dim, &plan->dim);
    case SM_DTYPES_FWD:
        if ((rc = ew_check_dtype_in(api, "self", a->dtype, FWD_DTYPES, N(FWD_DTYPES)))) return rc;
        return ew_check_dtype_in(api, "out", o->dtype, FWD_DTYPES, N(FWD_DTYPES));
    case SM_CAN_CAST:
        if (!ew_can_cast(a->dtype, o->dtype)) {
            char x[24], z[24];
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "Can not cast from %s to %s.", op_dtype_name(a->dtype, x),
                                op_dtype_name(o->dtype, z));
            return ACLNN_ERR_PARAM_INVALID;
        }
        return ACLNN_SUCCESS;
    case SM_DTYPES_GRAD_FIRST:
        if ((rc = ew_check_dtype_in(api, "gradOutput", a->dtype, BWD_DTYPES, N(BWD_DTYPES)))) return rc;
        if ((rc = ew_check_dtype_in(api, "output", y->dtype, BWD_DTYPES, N(BWD_DTYPES)))) return rc;
        return tv_check_same_dtype(api, "output", y->dtype, "gradOutput", a->dtype);
    case SM_DTYPES_OUTPUT_FIRST:
        if ((rc = ew_check_dtype_in(api, "output", y->dtype, BWD_DTYPES, N(BWD_DTYPES)))) return rc;
        if ((rc = ew_check_dtype_in(api, "gradOutput", a->dtype, BWD_DTYPES, N(BWD_DTYPES)))) return rc;
        return tv_check_same_dtype(api, "gradOutput", a->dtype, "output", y->dtype);
    case SM_MAX_DIM: return ew_check_max_dim(api, first_name, a, EW_MAX_DIM);
    case SM_MAX_DIM_OUT: return ew_check_max_dim(api, "out", o, EW_MAX_DIM);
    case SM_SHAPES:
        if (y != NULL && (rc = ew_check_shape(api, "output", y, a->shape, a->ndim))) return rc;
        return ew_check_shape(api, "out", o, a->shape, a->ndim);
    case SM_END: break;
    }
    return rc;
}

/* first: self (forward) or gradOutput (backward); output: the forward output (backward only). */
static aclnnStatus sm_phase1(const sm_spec *sp, const aclTensor *first, const aclTensor *output, int64_t dim,
                             const aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor) {
    const char *api = sp->api, *first_name = sp->backward ? "gradOutput" : "self";
    const char *names[3];
    const void *ptrs[3];
    size_t n = 0;
    if (sp->null_output_first) names[n] = "output", ptrs[n++] = output;
    names[n] = first_name, ptrs[n++] = first;
    if (sp->backward && !sp->null_output_first) names[n] = "output", ptrs[n++] = output;
    names[n] = "out", ptrs[n++] = out;
    aclnnStatus rc = tv_check_not_null(api, names, ptrs, n, workspaceSize, executor);
    if (rc) return rc;
    pyaclnn_stub_tensor a, y, o;
    if ((rc = op_tensor_arg(api, first_name, first, &a))) return rc;
    if (sp->backward && (rc = op_tensor_arg(api, "output", output, &y))) return rc;
    if ((rc = op_tensor_arg(api, "out", out, &o))) return rc;
    sm_plan plan = {0, sp->backward, sp->kind};
    for (size_t i = 0; i < N(sp->steps) && sp->steps[i] != SM_END; i++)
        if ((rc = sm_step_check(api, sp->steps[i], first_name, &a, sp->backward ? &y : NULL, &o, dim, &plan)))
            return rc;
    const aclTensor *in[2] = {first, output};
    const aclTensor *outs[1] = {out};
    return tv_make_executor(api, sp->op_name, pyaclnn_stub_numel(&o) ? sm_kernel : NULL, &plan, sizeof plan, in,
                            sp->backward ? 2 : 1, outs, 1, workspaceSize, executor);
}

aclnnStatus aclnnSoftmaxGetWorkspaceSize(const aclTensor *self, int64_t dim, aclTensor *out, uint64_t *workspaceSize,
                                         aclOpExecutor **executor) {
    return sm_phase1(&SOFTMAX, self, NULL, dim, out, workspaceSize, executor);
}

aclnnStatus aclnnSoftmax(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnSoftmax", workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnSoftmaxBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *output, int64_t dim,
                                                 aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor) {
    return sm_phase1(&SOFTMAX_BWD, gradOutput, output, dim, out, workspaceSize, executor);
}

aclnnStatus aclnnSoftmaxBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                 aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnSoftmaxBackward", workspace, workspaceSize, executor, stream);
}

/*
 * aclnnLogSoftmax (activation/log_softmax_v2/op_api/aclnn_log_softmax.cpp): out = (x - max) - log(sum exp(x - max));
 * aclnnLogSoftmaxBackward (activation/log_softmax_grad/op_api): out = g - exp(y) * sum(g). Same arithmetic
 * as above (class c). Validation in the vendor's order:
 *   LogSoftmax: self, out non-NULL -> 161001; dim in range; self and out FLOAT/FLOAT16/DOUBLE/BF16; self's
 *     dtype castable to out's; at most 8 dims, out shape == self shape -> 161002.
 *   LogSoftmaxBackward: output, gradOutput, out non-NULL -> 161001; output and gradOutput FLOAT/FLOAT16/BF16
 *     and equal; at most 8 dims, output and out shapes == gradOutput's; dim in range -> 161002.
 */
aclnnStatus aclnnLogSoftmaxGetWorkspaceSize(const aclTensor *self, int64_t dim, aclTensor *out,
                                            uint64_t *workspaceSize, aclOpExecutor **executor) {
    return sm_phase1(&LOG_SOFTMAX, self, NULL, dim, out, workspaceSize, executor);
}

aclnnStatus aclnnLogSoftmax(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnLogSoftmax", workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnLogSoftmaxBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *output, int64_t dim,
                                                    aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor) {
    return sm_phase1(&LOG_SOFTMAX_BWD, gradOutput, output, dim, out, workspaceSize, executor);
}

aclnnStatus aclnnLogSoftmaxBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                    aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnLogSoftmaxBackward", workspace, workspaceSize, executor, stream);
}
