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
#include "elementwise/ew_check.h"
#include "tensorview/tv.h"

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

aclnnStatus aclnnSoftmaxGetWorkspaceSize(const aclTensor *self, int64_t dim, aclTensor *out, uint64_t *workspaceSize,
                                         aclOpExecutor **executor) {
    static const char API[] = "aclnnSoftmaxGetWorkspaceSize";
    const char *names[] = {"self", "out"};
    const void *ptrs[] = {self, out};
    aclnnStatus rc = tv_check_not_null(API, names, ptrs, 2, workspaceSize, executor);
    if (rc) return rc;
    pyaclnn_stub_tensor s, o;
    if ((rc = op_tensor_arg(API, "self", self, &s))) return rc;
    if ((rc = op_tensor_arg(API, "out", out, &o))) return rc;
    if ((rc = ew_check_dtype_in(API, "self", s.dtype, FWD_DTYPES, N(FWD_DTYPES)))) return rc;
    if ((rc = ew_check_dtype_in(API, "out", o.dtype, FWD_DTYPES, N(FWD_DTYPES)))) return rc;
    sm_plan plan = {0, 0, SM_SOFTMAX};
    if ((rc = check_dim(API, &s, dim, &plan.dim))) return rc;
    if ((rc = ew_check_max_dim(API, "self", &s, EW_MAX_DIM))) return rc;
    if ((rc = ew_check_shape(API, "out", &o, s.shape, s.ndim))) return rc;
    const aclTensor *in[1] = {self};
    const aclTensor *outs[1] = {out};
    return tv_make_executor(API, "Softmax", pyaclnn_stub_numel(&o) ? sm_kernel : NULL, &plan, sizeof plan, in, 1, outs,
                            1, workspaceSize, executor);
}

aclnnStatus aclnnSoftmax(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnSoftmax", workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnSoftmaxBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *output, int64_t dim,
                                                 aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor) {
    static const char API[] = "aclnnSoftmaxBackwardGetWorkspaceSize";
    const char *names[] = {"gradOutput", "output", "out"};
    const void *ptrs[] = {gradOutput, output, out};
    aclnnStatus rc = tv_check_not_null(API, names, ptrs, 3, workspaceSize, executor);
    if (rc) return rc;
    pyaclnn_stub_tensor g, y, o;
    if ((rc = op_tensor_arg(API, "gradOutput", gradOutput, &g))) return rc;
    if ((rc = op_tensor_arg(API, "output", output, &y))) return rc;
    if ((rc = op_tensor_arg(API, "out", out, &o))) return rc;
    if ((rc = ew_check_dtype_in(API, "gradOutput", g.dtype, BWD_DTYPES, N(BWD_DTYPES)))) return rc;
    if ((rc = ew_check_dtype_in(API, "output", y.dtype, BWD_DTYPES, N(BWD_DTYPES)))) return rc;
    if ((rc = tv_check_same_dtype(API, "output", y.dtype, "gradOutput", g.dtype))) return rc;
    sm_plan plan = {0, 1, SM_SOFTMAX_BWD};
    if ((rc = check_dim(API, &g, dim, &plan.dim))) return rc;
    if ((rc = ew_check_max_dim(API, "gradOutput", &g, EW_MAX_DIM))) return rc;
    if ((rc = ew_check_shape(API, "output", &y, g.shape, g.ndim))) return rc;
    if ((rc = ew_check_shape(API, "out", &o, g.shape, g.ndim))) return rc;
    const aclTensor *in[2] = {gradOutput, output};
    const aclTensor *outs[1] = {out};
    return tv_make_executor(API, "SoftmaxBackward", pyaclnn_stub_numel(&o) ? sm_kernel : NULL, &plan, sizeof plan, in,
                            2, outs, 1, workspaceSize, executor);
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
    static const char API[] = "aclnnLogSoftmaxGetWorkspaceSize";
    const char *names[] = {"self", "out"};
    const void *ptrs[] = {self, out};
    aclnnStatus rc = tv_check_not_null(API, names, ptrs, 2, workspaceSize, executor);
    if (rc) return rc;
    pyaclnn_stub_tensor s, o;
    if ((rc = op_tensor_arg(API, "self", self, &s))) return rc;
    if ((rc = op_tensor_arg(API, "out", out, &o))) return rc;
    sm_plan plan = {0, 0, SM_LOG_SOFTMAX};
    if ((rc = check_dim(API, &s, dim, &plan.dim))) return rc;
    if ((rc = ew_check_dtype_in(API, "self", s.dtype, FWD_DTYPES, N(FWD_DTYPES)))) return rc;
    if ((rc = ew_check_dtype_in(API, "out", o.dtype, FWD_DTYPES, N(FWD_DTYPES)))) return rc;
    if (!ew_can_cast(s.dtype, o.dtype)) {
        char a[24], b[24];
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "Can not cast from %s to %s.", op_dtype_name(s.dtype, a),
                            op_dtype_name(o.dtype, b));
        return ACLNN_ERR_PARAM_INVALID;
    }
    if ((rc = ew_check_max_dim(API, "self", &s, EW_MAX_DIM))) return rc;
    if ((rc = ew_check_max_dim(API, "out", &o, EW_MAX_DIM))) return rc;
    if ((rc = ew_check_shape(API, "out", &o, s.shape, s.ndim))) return rc;
    const aclTensor *in[1] = {self};
    const aclTensor *outs[1] = {out};
    return tv_make_executor(API, "LogSoftmax", pyaclnn_stub_numel(&o) ? sm_kernel : NULL, &plan, sizeof plan, in, 1,
                            outs, 1, workspaceSize, executor);
}

aclnnStatus aclnnLogSoftmax(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnLogSoftmax", workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnLogSoftmaxBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *output, int64_t dim,
                                                    aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor) {
    static const char API[] = "aclnnLogSoftmaxBackwardGetWorkspaceSize";
    const char *names[] = {"output", "gradOutput", "out"};
    const void *ptrs[] = {output, gradOutput, out};
    aclnnStatus rc = tv_check_not_null(API, names, ptrs, 3, workspaceSize, executor);
    if (rc) return rc;
    pyaclnn_stub_tensor g, y, o;
    if ((rc = op_tensor_arg(API, "gradOutput", gradOutput, &g))) return rc;
    if ((rc = op_tensor_arg(API, "output", output, &y))) return rc;
    if ((rc = op_tensor_arg(API, "out", out, &o))) return rc;
    if ((rc = ew_check_dtype_in(API, "output", y.dtype, BWD_DTYPES, N(BWD_DTYPES)))) return rc;
    if ((rc = ew_check_dtype_in(API, "gradOutput", g.dtype, BWD_DTYPES, N(BWD_DTYPES)))) return rc;
    if ((rc = tv_check_same_dtype(API, "gradOutput", g.dtype, "output", y.dtype))) return rc;
    if ((rc = ew_check_max_dim(API, "gradOutput", &g, EW_MAX_DIM))) return rc;
    if ((rc = ew_check_shape(API, "output", &y, g.shape, g.ndim))) return rc;
    if ((rc = ew_check_shape(API, "out", &o, g.shape, g.ndim))) return rc;
    sm_plan plan = {0, 1, SM_LOG_SOFTMAX_BWD};
    if ((rc = check_dim(API, &g, dim, &plan.dim))) return rc;
    const aclTensor *in[2] = {gradOutput, output};
    const aclTensor *outs[1] = {out};
    return tv_make_executor(API, "LogSoftmaxBackward", pyaclnn_stub_numel(&o) ? sm_kernel : NULL, &plan, sizeof plan,
                            in, 2, outs, 1, workspaceSize, executor);
}

aclnnStatus aclnnLogSoftmaxBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                    aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnLogSoftmaxBackward", workspace, workspaceSize, executor, stream);
}
