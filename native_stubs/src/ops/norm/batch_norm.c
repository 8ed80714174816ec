/*
 * aclnnBatchNorm and aclnnBatchNormBackward: torch's batch_norm / nn.BatchNorm{1,2,3}d and its backward
 * (hicann/ops-nn norm/batch_norm_v3/op_host/op_api/aclnn_batch_norm.cpp, norm/batch_norm_grad_v3).
 *
 * The input [N, C, *] is seen as [N, C, S]; per channel c over the M = N * S elements:
 *   training   mean = sum(x) / M, var = sum((x - mean)^2) / M, invstd = 1 / sqrt(var + eps),
 *              out = (x - mean) * invstd * w + b; saveMean = mean, saveInvstd = invstd;
 *              running = (1 - momentum) * running + momentum * (mean, var * M / (M - 1))
 *   inference  out = (x - runningMean) / sqrt(runningVar + eps) * w + b (absent: 0 and 1)
 *   backward   training: xhat = (x - saveMean) * saveInvstd, dw = sum(dy * xhat), db = sum(dy),
 *              dx = w * saveInvstd * (dy - db / M - xhat * dw / M);
 *              inference: invstd = 1 / sqrt(runningVar + eps), dw = sum(dy * (x - runningMean) * invstd),
 *              db = sum(dy), dx = dy * w * invstd
 * (w = 1, b = 0 when absent). The emulator computes in float64 (inputs widened exactly) and rounds each
 * result once to fp32, then to its dtype: class (c), the NPU's fp32 reduction order is not published.
 * Definitions: batch_norm.toml (the vendor's checks in its order, with the steps below).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"

typedef struct {
    int training, empty;
    double momentum, eps;
    int has_w, has_b, has_rm, has_rv, has_sm, has_si;
    bool mask[3];
} bn_params;

static bn_params *bn_block(op_call *c) {
    return c->params_size ? (bn_params *)c->params : op_params(c, sizeof(bn_params));
}

/* ---- kernels -------------------------------------------------------------------------------- */

/* [N, C, S] of a tensor of at least 2 dims. */
static void ncs(const pyaclnn_stub_tensor *t, int64_t *n, int64_t *ch, int64_t *s) {
    *n = t->shape[0];
    *ch = t->shape[1];
    *s = tv_dims_product(t->shape, 2, t->ndim);   /* (dims after a 0 may multiply past int64) */
}

/* A per-channel tensor as float64 (`fill` for every channel when absent); NULL if out of memory. */
static double *per_channel(const pyaclnn_stub_tensor *t, int present, int64_t ch, double fill) {
    if (present) return tv_load_double(t);
    double *v = malloc(((size_t)ch + 1) * sizeof(double));
    for (int64_t c = 0; v != NULL && c < ch; c++) v[c] = fill;
    return v;
}

static void fill_value(const pyaclnn_stub_tensor *t, double value) {
    int64_t n = pyaclnn_stub_numel(t);
    double *v = malloc(((size_t)n + 1) * sizeof(double));
    if (v == NULL) return;
    for (int64_t i = 0; i < n; i++) v[i] = value;
    tv_store_double(t, v);
    free(v);
}

void batch_norm_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const bn_params *p = launch->params;
    const pyaclnn_stub_tensor *x = &launch->inputs[0], *out = &launch->outputs[0];
    const pyaclnn_stub_tensor *sm = &launch->outputs[1], *si = &launch->outputs[2];
    if (p->empty) {                       /* the vendor's Fill branch: saveMean 0, saveInvstd NaN */
        if (p->has_sm) fill_value(sm, 0.0);
        if (p->has_si) fill_value(si, NAN);
        return;
    }
    int64_t N, C, S;
    ncs(x, &N, &C, &S);
    double M = (double)(N * S);
    double *xv = tv_load_double(x), *w = per_channel(&launch->inputs[1], p->has_w, C, 1.0);
    double *b = per_channel(&launch->inputs[2], p->has_b, C, 0.0);
    double *rm = per_channel(&launch->inputs[3], p->has_rm, C, 0.0), *rv = per_channel(&launch->inputs[4], p->has_rv, C, 1.0);
    double *y = malloc(((size_t)(N * C * S) + 1) * sizeof(double));
    double *mean = malloc(((size_t)C + 1) * sizeof(double)), *inv = malloc(((size_t)C + 1) * sizeof(double));
    if (!xv || !w || !b || !rm || !rv || !y || !mean || !inv) {
        tv_fail_oom(launch);
        goto done;
    }
    for (int64_t c = 0; c < C; c++) {
        double s = 0, v = 0;
        if (p->training) {
            for (int64_t n = 0; n < N; n++)
                for (int64_t k = 0; k < S; k++) s += xv[(n * C + c) * S + k];
            mean[c] = s / M;
            for (int64_t n = 0; n < N; n++)
                for (int64_t k = 0; k < S; k++) {
                    double d = xv[(n * C + c) * S + k] - mean[c];
                    v += d * d;
                }
            inv[c] = 1.0 / sqrt(v / M + p->eps);
            rm[c] = (1.0 - p->momentum) * rm[c] + p->momentum * mean[c];
            rv[c] = (1.0 - p->momentum) * rv[c] + p->momentum * v / (M - 1.0);
        } else {
            mean[c] = rm[c];
            inv[c] = 1.0 / sqrt(rv[c] + p->eps);
        }
        for (int64_t n = 0; n < N; n++)
            for (int64_t k = 0; k < S; k++) {
                int64_t i = (n * C + c) * S + k;
                y[i] = (xv[i] - mean[c]) * inv[c] * w[c] + b[c];
            }
    }
    tv_store_double(out, y);
    if (p->training) {
        if (p->has_sm) tv_store_double(sm, mean);
        if (p->has_si) tv_store_double(si, inv);
        if (p->has_rm) tv_store_double(&launch->outputs[3], rm);
        if (p->has_rv) tv_store_double(&launch->outputs[4], rv);
    }
done:
    free(xv), free(w), free(b), free(rm), free(rv), free(y), free(mean), free(inv);
}

void batch_norm_backward_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const bn_params *p = launch->params;
    const pyaclnn_stub_tensor *dy = &launch->inputs[0], *x = &launch->inputs[1];
    int64_t N, C, S;
    ncs(x, &N, &C, &S);
    double M = (double)(N * S);
    double *dyv = tv_load_double(dy), *xv = tv_load_double(x), *w = per_channel(&launch->inputs[2], p->has_w, C, 1.0);
    /* training: saveMean / saveInvstd; inference: the running statistics (their invstd below) */
    double *mean = tv_load_double(&launch->inputs[p->training ? 5 : 3]);
    double *inv = tv_load_double(&launch->inputs[p->training ? 6 : 4]);
    double *dx = malloc(((size_t)(N * C * S) + 1) * sizeof(double));
    double *dw = malloc(((size_t)C + 1) * sizeof(double)), *db = malloc(((size_t)C + 1) * sizeof(double));
    if (!dyv || !xv || !w || !mean || !inv || !dx || !dw || !db) {
        tv_fail_oom(launch);
        goto done;
    }
    for (int64_t c = 0; c < C; c++) {
        if (!p->training) inv[c] = 1.0 / sqrt(inv[c] + p->eps);
        double sg = 0, sgx = 0;
        for (int64_t n = 0; n < N; n++)
            for (int64_t k = 0; k < S; k++) {
                int64_t i = (n * C + c) * S + k;
                sg += dyv[i];
                sgx += dyv[i] * (xv[i] - mean[c]) * inv[c];
            }
        dw[c] = sgx;
        db[c] = sg;
        for (int64_t n = 0; n < N; n++)
            for (int64_t k = 0; k < S; k++) {
                int64_t i = (n * C + c) * S + k;
                double xhat = (xv[i] - mean[c]) * inv[c];
                dx[i] = p->training ? w[c] * inv[c] * (dyv[i] - sg / M - xhat * sgx / M) : dyv[i] * w[c] * inv[c];
            }
    }
    if (p->mask[0]) tv_store_double(&launch->outputs[0], dx);
    if (p->mask[1]) tv_store_double(&launch->outputs[1], dw);
    if (p->mask[2]) tv_store_double(&launch->outputs[2], db);
done:
    free(dyv), free(xv), free(w), free(mean), free(inv), free(dx), free(dw), free(db);
}

/* ---- steps ---------------------------------------------------------------------------------- */

static const char *shape_text(const pyaclnn_stub_tensor *t, char *buf, size_t size) {
    return tv_shape_text(t->shape, t->ndim, buf, size);
}

/* bn_null_stats training saveMean saveInvstd: in training both outputs are required (161001). */
aclnnStatus opc_bn_null_stats(op_call *c, const op_step *s) {
    for (int k = 1; op_argument(c, s, 0)->i && k < 3; k++)
        if (op_argument(c, s, k)->p == NULL) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, c->api, "%s is NULL", op_pname(c, s, k));
            return ACLNN_ERR_PARAM_NULLPTR;
        }
    return ACLNN_SUCCESS;
}

/* bn_empty input saveMean saveInvstd: an empty input ends the checks: saveMean and saveInvstd (when given)
 * are filled with 0 and NaN, nothing else runs. */
aclnnStatus opc_bn_empty(op_call *c, const op_step *s) {
    bn_params *p = bn_block(c);
    if (pyaclnn_stub_numel(op_tensor(c, s, 0)) != 0) return ACLNN_SUCCESS;
    p->empty = 1;
    c->done = 1;
    p->has_sm = op_tensor(c, s, 1)->present && pyaclnn_stub_numel(op_tensor(c, s, 1)) > 0;
    p->has_si = op_tensor(c, s, 2)->present && pyaclnn_stub_numel(op_tensor(c, s, 2)) > 0;
    if (!p->has_sm && !p->has_si) c->nothing = 1;
    return ACLNN_SUCCESS;
}

/* bn_train_dtypes training p ... LIST: in training, each operand's dtype in LIST (OP_CHECK_DTYPE_NOT_SUPPORT). */
aclnnStatus opc_bn_train_dtypes(op_call *c, const op_step *s) {
    if (!op_argument(c, s, 0)->i) return ACLNN_SUCCESS;
    op_step rest = *s;
    rest.p[0] = s->p[s->np - 1];
    rest.np = (uint8_t)(s->np - 1);
    for (int k = 1; k < s->np; k++) rest.p[k - 1] = s->p[k];
    rest.labels = NULL;
    return opc_dtype_supported(c, &rest);
}

static aclnnStatus not_same_dtype(op_call *c, const char *a, aclDataType da, const char *b, aclDataType db) {
    if (da == db) return ACLNN_SUCCESS;
    char x[24], y[24];
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Expected both tensors to have same dtype, but found %s %s and "
                        "%s %s.", a, op_dtype_name(da, x), b, op_dtype_name(db, y));
    return ACLNN_ERR_PARAM_INVALID;
}

/* bn_format a b [c]: b (and a present c) in a's storage format. */
aclnnStatus opc_bn_format(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *a = op_tensor(c, s, 0);
    for (int k = 1; k < s->np; k++) {
        const pyaclnn_stub_tensor *t = op_tensor(c, s, k);
        if (!t->present || t->format == a->format) continue;
        char fa[24], fb[24];
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Format of %s and %s should be equal, %s [%s], %s [%s].",
                            op_pname(c, s, 0), op_pname(c, s, k), op_pname(c, s, 0), op_format_name(a->format, fa),
                            op_pname(c, s, k), op_format_name(t->format, fb));
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

static int is_channel_vector(const pyaclnn_stub_tensor *t, int64_t ch) { return t->ndim == 1 && t->shape[0] == ch; }

/* bn_channel_shapes input p ...: each present operand is [C] (C = input's dim 1); the backward's message adds
 * the shapes. */
aclnnStatus opc_bn_channel_shapes(op_call *c, const op_step *s) {
    int64_t ch = op_tensor(c, s, 0)->shape[1];
    for (int k = 1; k < s->np; k++) {
        const pyaclnn_stub_tensor *t = op_tensor(c, s, k);
        if (!t->present || is_channel_vector(t, ch)) continue;
        char b[200];
        if (op_param_index(c->def, "gradOut") >= 0)
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Dim of %s should be one and shape is channel num of "
                                "input[%lld], but got [%s].", op_pname(c, s, k), (long long)ch, shape_text(t, b, sizeof b));
        else
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Dim of %s should be one and shape is channel num of "
                                "input.", op_pname(c, s, k));
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

/* bn_save_shapes input training saveMean saveInvstd: in training both are [C]. */
aclnnStatus opc_bn_save_shapes(op_call *c, const op_step *s) {
    int64_t ch = op_tensor(c, s, 0)->shape[1];
    for (int k = 2; op_argument(c, s, 1)->i && k < 4; k++) {
        aclnnStatus rc = op_expected_size(c->api, op_pname(c, s, k), op_tensor(c, s, k), &ch, 1);
        if (rc) return rc;
    }
    return ACLNN_SUCCESS;
}

/* bn_plan input training momentum eps weight bias runningMean runningVar saveMean saveInvstd: the kernel's
 * attributes and which optional tensors are present. */
aclnnStatus opc_bn_plan(op_call *c, const op_step *s) {
    bn_params *p = bn_block(c);
    p->training = op_argument(c, s, 1)->i != 0;
    p->momentum = op_argument(c, s, 2)->d;
    p->eps = op_argument(c, s, 3)->d;
    p->has_w = op_tensor(c, s, 4)->present;
    p->has_b = op_tensor(c, s, 5)->present;
    p->has_rm = op_tensor(c, s, 6)->present;
    p->has_rv = op_tensor(c, s, 7)->present;
    p->has_sm = op_tensor(c, s, 8)->present;
    p->has_si = op_tensor(c, s, 9)->present;
    return ACLNN_SUCCESS;
}

/* bn_bw_empty gradOut input: an empty one ends the checks, launching nothing. */
aclnnStatus opc_bn_bw_empty(op_call *c, const op_step *s) {
    if (pyaclnn_stub_numel(op_tensor(c, s, 0)) == 0 || pyaclnn_stub_numel(op_tensor(c, s, 1)) == 0)
        c->nothing = c->done = 1;
    return ACLNN_SUCCESS;
}

/* bn_bw_mask outputMask gradInput gradWeight gradBias (CheckMaskNotNull, every failure 161001): a live mask
 * of at least 1 entry (Ascend 950: exactly 3; missing entries are false), the outputs it asks for given. */
aclnnStatus opc_bn_bw_mask(op_call *c, const op_step *s) {
    bn_params *p = bn_block(c);
    const bool *mask;
    uint64_t n;
    const void *arr = op_argument(c, s, 0)->p;
    if (arr == NULL) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, c->api, "%s is NULL", op_pname(c, s, 0));
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    if (pyaclnn_stub_bool_array_get(arr, &mask, &n) != ACLNN_SUCCESS) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "%s is not a live aclBoolArray", op_pname(c, s, 0));
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (n < 1 || (ew_soc_is_950() && n != 3)) {
        if (n < 1) pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, c->api, "outputMask size should not less than 1.");
        else pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, c->api, "outputMask size should be 3, but got %llu.",
                                 (unsigned long long)n);
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    for (int k = 0; k < 3; k++) {
        p->mask[k] = (uint64_t)k < n && mask[k];
        if (p->mask[k] && op_argument(c, s, k + 1)->p == NULL) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, c->api, "%s is NULL", op_pname(c, s, k + 1));
            return ACLNN_ERR_PARAM_NULLPTR;
        }
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus float_or_same(op_call *c, const op_step *s, int k, int ref) {
    const pyaclnn_stub_tensor *t = op_tensor(c, s, k), *r = op_tensor(c, s, ref);
    if (!t->present || !r->present || t->dtype == r->dtype || t->dtype == ACL_FLOAT) return ACLNN_SUCCESS;
    char a[24], b[24];
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Dtype of %s:[%s] should be float or same as %s, %s dtype: [%s].",
                        op_pname(c, s, k), op_dtype_name(t->dtype, a), op_pname(c, s, ref), op_pname(c, s, ref),
                        op_dtype_name(r->dtype, b));
    return ACLNN_ERR_PARAM_INVALID;
}

static aclnnStatus pair_same(op_call *c, const op_step *s, int a, int b) {
    if (!op_tensor(c, s, a)->present || !op_tensor(c, s, b)->present) return ACLNN_SUCCESS;
    return not_same_dtype(c, op_pname(c, s, a), op_tensor(c, s, a)->dtype, op_pname(c, s, b), op_tensor(c, s, b)->dtype);
}

/* bn_bw_regbase_dtypes gradOut gradInput gradWeight gradBias weight runningMean runningVar saveMean saveInvstd
 * (Ascend 950, RegbaseCheckDtypeSame): the statistics and weight FLOAT or gradOut's, pairs alike, gradInput
 * gradOut's, gradWeight / gradBias FLOAT or weight's. */
aclnnStatus opc_bn_bw_regbase_dtypes(op_call *c, const op_step *s) {
    if (!ew_soc_is_950()) return ACLNN_SUCCESS;
    enum { GO, GI, GW, GB, W, RM, RV, SM, SI };
    aclnnStatus rc;
    if ((rc = float_or_same(c, s, W, GO)) || (rc = float_or_same(c, s, RM, GO)) || (rc = float_or_same(c, s, RV, GO)) ||
        (rc = pair_same(c, s, RM, RV)) || (rc = float_or_same(c, s, SM, GO)) || (rc = float_or_same(c, s, SI, GO)) ||
        (rc = pair_same(c, s, SI, SM)) || (rc = pair_same(c, s, GI, GO)) || (rc = float_or_same(c, s, GW, W)) ||
        (rc = float_or_same(c, s, GB, W)) || (rc = pair_same(c, s, GW, GB)))
        return rc;
    return ACLNN_SUCCESS;
}

/* bn_bw_stat_shapes input training saveMean saveInvstd gradWeight gradBias runningMean runningVar: (Ascend 950)
 * the save statistics [C] (inference: also [0]) and the weight gradients [C]; (emulator, every SoC) the kernel's
 * statistics present with C elements -- the save ones in training, the running ones in inference -- and the
 * weight gradients [C]. */
aclnnStatus opc_bn_bw_stat_shapes(op_call *c, const op_step *s) {
    int64_t ch = op_tensor(c, s, 0)->shape[1];
    int training = op_argument(c, s, 1)->i != 0;
    char b[200];
    for (int k = 2; k < 6; k++) {
        const pyaclnn_stub_tensor *t = op_tensor(c, s, k);
        int save = k < 4;
        if (!t->present || is_channel_vector(t, ch) || (save && !training && t->ndim == 1 && t->shape[0] == 0)) continue;
        if (!save && !bn_block(c)->mask[k - 3]) continue;
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Dim of %s should be one and shape is channel num of "
                            "input[%lld], but got [%s].", op_pname(c, s, k), (long long)ch, shape_text(t, b, sizeof b));
        return ACLNN_ERR_PARAM_INVALID;
    }
    for (int k = training ? 2 : 6; k < (training ? 4 : 8); k++) {
        const pyaclnn_stub_tensor *t = op_tensor(c, s, k);
        if (t->present && pyaclnn_stub_numel(t) == ch) continue;
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "%s must be given with %lld elements (one per channel) %s",
                            op_pname(c, s, k), (long long)ch, training ? "in training" : "in inference");
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

/* bn_bw_plan training eps weight: the kernel's attributes; (Ascend 950) nothing to launch without a requested
 * output. */
aclnnStatus opc_bn_bw_plan(op_call *c, const op_step *s) {
    bn_params *p = bn_block(c);
    p->training = op_argument(c, s, 0)->i != 0;
    p->eps = op_argument(c, s, 1)->d;
    p->has_w = op_tensor(c, s, 2)->present;
    if (!p->mask[0] && !p->mask[1] && !p->mask[2]) c->nothing = 1;
    return ACLNN_SUCCESS;
}
