/*
 * aclnnLayerNorm and aclnnLayerNormBackward: torch's layer_norm / nn.LayerNorm and its backward
 * (hicann/ops-nn norm/layer_norm_v4/op_host/op_api/aclnn_layer_norm.cpp; norm/layer_norm_grad_v3,
 * whose documented formulas the backward follows).
 *
 * Over each row of the trailing normalizedShape dimensions (N elements; M rows):
 *   mean = sum(x) / N, rstd = 1 / sqrt(sum((x - mean)^2) / N + eps), out = (x - mean) * rstd * w + b
 *   dx = rstd * (g - mean(g) - xhat * mean(g * xhat)) with g = dy * w, xhat = (x - mean) * rstd;
 *   dw = sum over rows of dy * xhat, db = sum over rows of dy.
 * The emulator computes in float64 (inputs widened exactly) and rounds each result once to fp32 and
 * then to its dtype: class (c), the NPU's reduction order and fp32 steps are not published. A row of
 * N = 0 gives mean 0 and rstd NaN, as the vendor fills them; M = 0 launches nothing.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aclnnop/aclnn_layer_norm.h"
#include "aclnnop/aclnn_layer_norm_backward.h"
#include "opbase/checks.h"
#include "kernels/view.h"

#define LN_MAX_DIM 8

/* The vendor's list: BF16 on Atlas A2/A3 and the regbase Ascend 950, FLOAT16 and FLOAT elsewhere. */
static const aclDataType LN_DTYPES[] = {ACL_FLOAT16, ACL_FLOAT, ACL_BF16};

static size_t n_dtypes(void) { return pyaclnn_stub_soc_family() == PYACLNN_SOC_OTHER ? 2 : 3; }

typedef struct {
    int64_t rows, cols;      /* M, N */
    double eps;
    int has_weight, has_bias;
    int has_mean, has_rstd;  /* forward: optional outputs present */
    bool mask[3];            /* backward: outputMask */
} ln_params;

static int check_dtype(const char *api, const char *name, const pyaclnn_stub_tensor *t, aclnnStatus *rc) {
    if (!t->present) return 0;
    *rc = ew_check_dtype_in(api, name, t->dtype, LN_DTYPES, n_dtypes());
    return *rc != ACLNN_SUCCESS;
}

/* input's trailing dims against normalizedShape, and an optional per-element tensor (weight, bias) of
 * exactly that shape; M and N. */
static aclnnStatus check_norm_shape(const char *api, const pyaclnn_stub_tensor *x, const int64_t *ns, uint64_t nn,
                                    const pyaclnn_stub_tensor *const *per, const char *const *names, size_t n_per,
                                    int64_t *rows, int64_t *cols) {
    if (nn > LN_MAX_DIM || nn < 1) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "Expected normalizedShape len [%llu] to be in [1, %d] but "
                            "check failed.", (unsigned long long)nn, LN_MAX_DIM);
        return ACLNN_ERR_PARAM_INVALID;
    }
    if ((uint64_t)x->ndim < nn) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "input has %lld dimensions, fewer than normalizedShape's "
                            "%llu", (long long)x->ndim, (unsigned long long)nn);
        return ACLNN_ERR_PARAM_INVALID;
    }
    for (size_t k = 0; k < n_per; k++) {
        if (per[k]->present && (uint64_t)per[k]->ndim != nn) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "%s must have %llu dimensions (normalizedShape), it has "
                                "%lld", names[k], (unsigned long long)nn, (long long)per[k]->ndim);
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    int64_t begin = x->ndim - (int64_t)nn;
    for (uint64_t i = 0; i < nn; i++) {
        if (ns[i] != x->shape[begin + (int64_t)i]) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "Expected normalized index [%llu] shape [%lld] be equal "
                                "to input index [%lld] shape [%lld], but failed.", (unsigned long long)i,
                                (long long)ns[i], (long long)(begin + (int64_t)i), (long long)x->shape[begin + (int64_t)i]);
            return ACLNN_ERR_PARAM_INVALID;
        }
        for (size_t k = 0; k < n_per; k++) {
            if (per[k]->present && per[k]->shape[i] != ns[i]) {
                pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "Expected normalized index [%llu] shape [%lld] be "
                                    "equal to %s index [%llu] shape [%lld], but failed.", (unsigned long long)i,
                                    (long long)ns[i], names[k], (unsigned long long)i, (long long)per[k]->shape[i]);
                return ACLNN_ERR_PARAM_INVALID;
            }
        }
    }
    *rows = 1;
    *cols = 1;
    for (int64_t d = 0; d < x->ndim; d++) *(d < begin ? rows : cols) *= x->shape[d];
    return ACLNN_SUCCESS;
}

/* 161002 unless t (mean, rstd: present and non-empty) has input's leading dims and 1s after them. */
static aclnnStatus check_stat_shape(const char *api, const char *name, const pyaclnn_stub_tensor *t,
                                    const pyaclnn_stub_tensor *x, uint64_t nn) {
    if (!t->present || pyaclnn_stub_numel(t) == 0) return ACLNN_SUCCESS;
    int ok = t->ndim == x->ndim;
    for (int64_t d = 0; ok && d < x->ndim; d++)
        ok = t->shape[d] == (d < x->ndim - (int64_t)nn ? x->shape[d] : 1);
    if (!ok) {
        char b1[160], b2[160];
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "%s shape %s does not match input %s: expected input's "
                            "leading dimensions and %llu trailing 1s", name, tv_shape_text(t->shape, t->ndim, b1,
                            sizeof b1), tv_shape_text(x->shape, x->ndim, b2, sizeof b2), (unsigned long long)nn);
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

/* ---- forward ------------------------------------------------------------------------------- */

static void ln_kernel(const pyaclnn_stub_launch *launch) {
    const ln_params *p = launch->params;
    const pyaclnn_stub_tensor *x = &launch->inputs[0], *w = &launch->inputs[1], *b = &launch->inputs[2];
    const pyaclnn_stub_tensor *out = &launch->outputs[0], *mo = &launch->outputs[1], *ro = &launch->outputs[2];
    if (!tv_launch_views_ok(launch)) return;
    int64_t M = p->rows, N = p->cols;
    double *xv = tv_load_double(x), *wv = p->has_weight ? tv_load_double(w) : NULL;
    double *bv = p->has_bias ? tv_load_double(b) : NULL;
    double *y = malloc((size_t)(M * N) * sizeof(double) + 1), *mv = malloc((size_t)M * sizeof(double) + 1);
    double *rv = malloc((size_t)M * sizeof(double) + 1);
    if (!xv || !y || !mv || !rv || (p->has_weight && !wv) || (p->has_bias && !bv)) {
        tv_fail_oom(launch);
    } else {
        for (int64_t m = 0; m < M; m++) {
            const double *row = xv + m * N;
            double s = 0, v = 0;
            for (int64_t j = 0; j < N; j++) s += row[j];
            double mean = N ? s / (double)N : 0.0;
            for (int64_t j = 0; j < N; j++) v += (row[j] - mean) * (row[j] - mean);
            double rstd = N ? 1.0 / sqrt(v / (double)N + p->eps) : NAN;
            for (int64_t j = 0; j < N; j++)
                y[m * N + j] = (row[j] - mean) * rstd * (wv ? wv[j] : 1.0) + (bv ? bv[j] : 0.0);
            mv[m] = mean;
            rv[m] = rstd;
        }
        if (M > 0 && N > 0) tv_store_double(out, y);
        if (p->has_mean && pyaclnn_stub_numel(mo) == M) tv_store_double(mo, mv);
        if (p->has_rstd && pyaclnn_stub_numel(ro) == M) tv_store_double(ro, rv);
    }
    free(xv), free(wv), free(bv), free(y), free(mv), free(rv);
}

aclnnStatus aclnnLayerNormGetWorkspaceSize(const aclTensor *input, const aclIntArray *normalizedShape,
                                           const aclTensor *weightOptional, const aclTensor *biasOptional, double eps,
                                           aclTensor *out, aclTensor *meanOutOptional, aclTensor *rstdOutOptional,
                                           uint64_t *workspaceSize, aclOpExecutor **executor) {
    static const char API[] = "aclnnLayerNormGetWorkspaceSize";
    ew_ptr_arg ptrs[] = {{"input", input}, {"normalizedShape", normalizedShape}, {"out", out}};
    aclnnStatus rc = ew_check_not_null(API, ptrs, 3, workspaceSize, executor);
    pyaclnn_stub_tensor x, w, b, o, mo, ro;
    const int64_t *ns;
    uint64_t nn;
    if (rc || (rc = op_tensor_arg(API, "input", input, &x)) ||
        (rc = tv_int_array_arg(API, "normalizedShape", normalizedShape, 0, &ns, &nn)) ||
        (rc = op_tensor_arg(API, "out", out, &o)))
        return rc;
    if ((weightOptional && (rc = op_tensor_arg(API, "weightOptional", weightOptional, &w))) ||
        (biasOptional && (rc = op_tensor_arg(API, "biasOptional", biasOptional, &b))) ||
        (meanOutOptional && (rc = op_tensor_arg(API, "meanOutOptional", meanOutOptional, &mo))) ||
        (rstdOutOptional && (rc = op_tensor_arg(API, "rstdOutOptional", rstdOutOptional, &ro))))
        return rc;
    if (!weightOptional) w.present = 0;
    if (!biasOptional) b.present = 0;
    if (!meanOutOptional) mo.present = 0;
    if (!rstdOutOptional) ro.present = 0;
    /* 1. input dtypes (weight/bias: in the list, and input's unless FLOAT; the same as each other) */
    if (check_dtype(API, "input", &x, &rc) || check_dtype(API, "weightOptional", &w, &rc)) return rc;
    if (w.present && w.dtype != ACL_FLOAT && (rc = tv_check_same_dtype(API, "weightOptional", w.dtype, "input", x.dtype)))
        return rc;
    if (check_dtype(API, "biasOptional", &b, &rc)) return rc;
    if (b.present && b.dtype != ACL_FLOAT && (rc = tv_check_same_dtype(API, "biasOptional", b.dtype, "input", x.dtype)))
        return rc;
    if (w.present && b.present && (rc = tv_check_same_dtype(API, "weightOptional", w.dtype, "biasOptional", b.dtype)))
        return rc;
    /* 2. output dtypes */
    if (check_dtype(API, "out", &o, &rc) || check_dtype(API, "meanOutOptional", &mo, &rc) ||
        check_dtype(API, "rstdOutOptional", &ro, &rc))
        return rc;
    /* 3. ranks and shapes */
    const pyaclnn_stub_tensor *all[] = {&x, &o, &w, &b, &mo, &ro};
    static const char *const all_names[] = {"input", "out", "weightOptional", "biasOptional", "meanOutOptional",
                                            "rstdOutOptional"};
    for (size_t k = 0; k < 6; k++)
        if (all[k]->present && (rc = ew_check_max_dim(API, all_names[k], all[k], LN_MAX_DIM))) return rc;
    const pyaclnn_stub_tensor *per[] = {&w, &b};
    static const char *const per_names[] = {"weightOptional", "biasOptional"};
    ln_params prm = {.eps = eps, .has_weight = w.present, .has_bias = b.present, .has_mean = mo.present,
                     .has_rstd = ro.present};
    if ((rc = check_norm_shape(API, &x, ns, nn, per, per_names, 2, &prm.rows, &prm.cols)) ||
        (rc = ew_check_shape(API, "out", &o, x.shape, x.ndim)))
        return rc;
    /* 4. mean and rstd: [input's leading dims, 1, ...] (the 950 check; the emulator applies it everywhere) */
    if ((rc = check_stat_shape(API, "meanOutOptional", &mo, &x, nn)) ||
        (rc = check_stat_shape(API, "rstdOutOptional", &ro, &x, nn)))
        return rc;
    const aclTensor *inputs[3] = {input, weightOptional, biasOptional};
    const aclTensor *outputs[3] = {out, meanOutOptional, rstdOutOptional};
    return tv_make_executor(API, "LayerNorm", prm.rows ? ln_kernel : NULL, &prm, sizeof prm, inputs, 3, outputs, 3,
                            workspaceSize, executor);
}

EW_DEFINE_PHASE2(aclnnLayerNorm)

/* ---- backward ------------------------------------------------------------------------------ */

static void ln_backward_kernel(const pyaclnn_stub_launch *launch) {
    const ln_params *p = launch->params;
    const pyaclnn_stub_tensor *dy = &launch->inputs[0], *x = &launch->inputs[1], *mt = &launch->inputs[2],
                              *rt = &launch->inputs[3], *w = &launch->inputs[4];
    const pyaclnn_stub_tensor *dxo = &launch->outputs[0], *dwo = &launch->outputs[1], *dbo = &launch->outputs[2];
    if (!tv_launch_views_ok(launch)) return;
    int64_t M = p->rows, N = p->cols;
    double *dyv = tv_load_double(dy), *xv = tv_load_double(x), *mv = tv_load_double(mt), *rv = tv_load_double(rt);
    double *wv = p->has_weight ? tv_load_double(w) : NULL;
    double *dx = calloc((size_t)(M * N) + 1, sizeof(double)), *dw = calloc((size_t)N + 1, sizeof(double));
    double *db = calloc((size_t)N + 1, sizeof(double));
    if (!dyv || !xv || !mv || !rv || !dx || !dw || !db || (p->has_weight && !wv)) {
        tv_fail_oom(launch);
    } else {
        for (int64_t m = 0; m < M; m++) {
            const double *g0 = dyv + m * N, *row = xv + m * N;
            double mean = mv[m], rstd = rv[m], sg = 0, sgx = 0;
            for (int64_t j = 0; j < N; j++) {
                double xhat = (row[j] - mean) * rstd, g = g0[j] * (wv ? wv[j] : 1.0);
                sg += g;
                sgx += g * xhat;
                dw[j] += g0[j] * xhat;
                db[j] += g0[j];
            }
            for (int64_t j = 0; j < N; j++) {
                double xhat = (row[j] - mean) * rstd, g = g0[j] * (wv ? wv[j] : 1.0);
                dx[m * N + j] = rstd * (g - sg / (double)N - xhat * sgx / (double)N);
            }
        }
        if (p->mask[0]) tv_store_double(dxo, dx);
        if (p->mask[1]) tv_store_double(dwo, dw);
        if (p->mask[2]) tv_store_double(dbo, db);
    }
    free(dyv), free(xv), free(mv), free(rv), free(wv), free(dx), free(dw), free(db);
}

aclnnStatus aclnnLayerNormBackwardGetWorkspaceSize(const aclTensor *gradOut, const aclTensor *input,
                                                   const aclIntArray *normalizedShape, const aclTensor *mean,
                                                   const aclTensor *rstd, const aclTensor *weightOptional,
                                                   const aclTensor *biasOptional, const aclBoolArray *outputMask,
                                                   aclTensor *gradInputOut, aclTensor *gradWeightOut,
                                                   aclTensor *gradBiasOut, uint64_t *workspaceSize,
                                                   aclOpExecutor **executor) {
    static const char API[] = "aclnnLayerNormBackwardGetWorkspaceSize";
    ew_ptr_arg ptrs[] = {{"gradOut", gradOut}, {"input", input}, {"normalizedShape", normalizedShape},
                         {"mean", mean}, {"rstd", rstd}, {"outputMask", outputMask}};
    aclnnStatus rc = ew_check_not_null(API, ptrs, 6, workspaceSize, executor);
    if (rc) return rc;
    const bool *mask;
    uint64_t n_mask;
    if ((rc = pyaclnn_stub_bool_array_get(outputMask, &mask, &n_mask)) != ACLNN_SUCCESS) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "outputMask is not a live aclBoolArray");
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (n_mask != 3) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "outputMask must have 3 elements, it has %llu",
                            (unsigned long long)n_mask);
        return ACLNN_ERR_PARAM_INVALID;
    }
    aclTensor *outs[3] = {gradInputOut, gradWeightOut, gradBiasOut};
    static const char *const out_names[] = {"gradInputOut", "gradWeightOut", "gradBiasOut"};
    for (int k = 0; k < 3; k++) {
        if (mask[k] && outs[k] == NULL) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, API, "%s is NULL but outputMask[%d] is true", out_names[k], k);
            return ACLNN_ERR_PARAM_NULLPTR;
        }
    }
    pyaclnn_stub_tensor dy, x, mt, rt, w, b, go[3];
    const int64_t *ns;
    uint64_t nn;
    if ((rc = op_tensor_arg(API, "gradOut", gradOut, &dy)) || (rc = op_tensor_arg(API, "input", input, &x)) ||
        (rc = tv_int_array_arg(API, "normalizedShape", normalizedShape, 0, &ns, &nn)) ||
        (rc = op_tensor_arg(API, "mean", mean, &mt)) || (rc = op_tensor_arg(API, "rstd", rstd, &rt)))
        return rc;
    w.present = b.present = 0;
    if ((weightOptional && (rc = op_tensor_arg(API, "weightOptional", weightOptional, &w))) ||
        (biasOptional && (rc = op_tensor_arg(API, "biasOptional", biasOptional, &b))))
        return rc;
    for (int k = 0; k < 3; k++) {
        go[k].present = 0;
        if (mask[k] && (rc = op_tensor_arg(API, out_names[k], outs[k], &go[k]))) return rc;
    }
    if (check_dtype(API, "gradOut", &dy, &rc) || check_dtype(API, "input", &x, &rc) ||
        (rc = tv_check_same_dtype(API, "gradOut", dy.dtype, "input", x.dtype)) || check_dtype(API, "mean", &mt, &rc) ||
        check_dtype(API, "rstd", &rt, &rc) || check_dtype(API, "weightOptional", &w, &rc) ||
        check_dtype(API, "biasOptional", &b, &rc))
        return rc;
    for (int k = 0; k < 3; k++)
        if (check_dtype(API, out_names[k], &go[k], &rc)) return rc;
    const pyaclnn_stub_tensor *all[] = {&dy, &x, &mt, &rt, &w, &b, &go[0], &go[1], &go[2]};
    for (size_t k = 0; k < 9; k++)
        if (all[k]->present && (rc = ew_check_max_dim(API, "tensor", all[k], LN_MAX_DIM))) return rc;
    const pyaclnn_stub_tensor *per[] = {&w, &b, &go[1], &go[2]};
    static const char *const per_names[] = {"weightOptional", "biasOptional", "gradWeightOut", "gradBiasOut"};
    ln_params prm = {.has_weight = w.present, .mask = {mask[0], mask[1], mask[2]}};
    if ((rc = ew_check_shape(API, "gradOut", &dy, x.shape, x.ndim)) ||
        (rc = check_norm_shape(API, &x, ns, nn, per, per_names, 4, &prm.rows, &prm.cols)) ||
        (go[0].present && (rc = ew_check_shape(API, "gradInputOut", &go[0], x.shape, x.ndim))))
        return rc;
    if (pyaclnn_stub_numel(&mt) != prm.rows || pyaclnn_stub_numel(&rt) != prm.rows) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "mean and rstd must have %lld elements (one per row), they "
                            "have %lld and %lld", (long long)prm.rows, (long long)pyaclnn_stub_numel(&mt),
                            (long long)pyaclnn_stub_numel(&rt));
        return ACLNN_ERR_PARAM_INVALID;
    }
    const aclTensor *inputs[5] = {gradOut, input, mean, rstd, weightOptional};
    const aclTensor *outputs[3] = {mask[0] ? gradInputOut : NULL, mask[1] ? gradWeightOut : NULL,
                                   mask[2] ? gradBiasOut : NULL};
    int work = prm.rows * prm.cols > 0 || (prm.cols > 0 && (mask[1] || mask[2]));
    return tv_make_executor(API, "LayerNormBackward", work ? ln_backward_kernel : NULL, &prm, sizeof prm, inputs, 5,
                            outputs, 3, workspaceSize, executor);
}

EW_DEFINE_PHASE2(aclnnLayerNormBackward)
