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
 * Definitions: layer_norm.toml (the vendor's checks in its order, with the steps below).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/parallel.h"
#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"

#define LN_MAX_DIM 8

typedef struct {
    int64_t rows, cols;      /* M, N */
    double eps;
    int has_weight, has_bias;
    int has_mean, has_rstd;  /* forward: optional outputs present */
    bool mask[3];            /* backward: outputMask */
} ln_params;

/* The parameter block: made by the first step that needs it (ln_mask, else ln_norm_shape). */
static ln_params *ln_block(op_call *c) {
    return c->params_size ? (ln_params *)c->params : op_params(c, sizeof(ln_params));
}

/* ---- kernels -------------------------------------------------------------------------------- */

/* Rows split over the kernel pool: each row's results are its own (no sum crosses rows), so the bytes never
 * depend on the thread count. About 64k elements per thread before a second one joins. */
static size_t ln_rows_per_thread(int64_t N) { return (size_t)(1 + (1 << 16) / (N + 1)); }

typedef struct {
    const ln_params *p;
    const double *xv, *wv, *bv;
    double *y, *mv, *rv;
} ln_fwd_job;

static void ln_fwd_rows(void *ctx, size_t begin, size_t end) {
    const ln_fwd_job *j = ctx;
    int64_t N = j->p->cols;
    const double *wv = j->wv, *bv = j->bv;
    for (int64_t m = (int64_t)begin; m < (int64_t)end; m++) {
        const double *row = j->xv + m * N;
        double s = 0, v = 0;
        for (int64_t k = 0; k < N; k++) s += row[k];
        double mean = N ? s / (double)N : 0.0;
        for (int64_t k = 0; k < N; k++) v += (row[k] - mean) * (row[k] - mean);
        double rstd = N ? 1.0 / sqrt(v / (double)N + j->p->eps) : NAN;
        for (int64_t k = 0; k < N; k++)
            j->y[m * N + k] = (row[k] - mean) * rstd * (wv ? wv[k] : 1.0) + (bv ? bv[k] : 0.0);
        j->mv[m] = mean;
        j->rv[m] = rstd;
    }
}


void layer_norm_kernel(const pyaclnn_stub_launch *launch) {
    const ln_params *p = launch->params;
    const pyaclnn_stub_tensor *x = &launch->inputs[0], *w = &launch->inputs[1], *b = &launch->inputs[2];
    const pyaclnn_stub_tensor *out = &launch->outputs[0], *mo = &launch->outputs[1], *ro = &launch->outputs[2];
    if (!tv_launch_views_ok(launch)) return;
    int64_t M = p->rows, N = p->cols;
    double *xv = tv_load_double(x), *wv = p->has_weight ? tv_load_double(w) : NULL;
    double *bv = p->has_bias ? tv_load_double(b) : NULL;
    double *y = tv_alloc(M * N, sizeof(double)), *mv = tv_alloc(M, sizeof(double));   /* M * N: x's count */
    double *rv = tv_alloc(M, sizeof(double));
    if (!xv || !y || !mv || !rv || (p->has_weight && !wv) || (p->has_bias && !bv)) {
        tv_fail_oom(launch);
    } else {
        ln_fwd_job j = {p, xv, wv, bv, y, mv, rv};
        op_parallel_for((size_t)M, op_thread_count((size_t)M, ln_rows_per_thread(N)), ln_fwd_rows, &j);
        if (M > 0 && N > 0) tv_store_double(out, y);
        if (p->has_mean && pyaclnn_stub_numel(mo) == M) tv_store_double(mo, mv);
        if (p->has_rstd && pyaclnn_stub_numel(ro) == M) tv_store_double(ro, rv);
    }
    free(xv), free(wv), free(bv), free(y), free(mv), free(rv);
}

typedef struct {
    const ln_params *p;
    const double *dyv, *xv, *mv, *rv, *wv;
    double *dx, *dw, *db;
} ln_bwd_job;

/* dx of rows [begin, end): each row's two sums are its own. */
static void ln_bwd_rows(void *ctx, size_t begin, size_t end) {
    const ln_bwd_job *j = ctx;
    int64_t N = j->p->cols;
    const double *wv = j->wv;
    for (int64_t m = (int64_t)begin; m < (int64_t)end; m++) {
        const double *g0 = j->dyv + m * N, *row = j->xv + m * N;
        double mean = j->mv[m], rstd = j->rv[m], sg = 0, sgx = 0;
        for (int64_t k = 0; k < N; k++) {
            double xhat = (row[k] - mean) * rstd, g = g0[k] * (wv ? wv[k] : 1.0);
            sg += g;
            sgx += g * xhat;
        }
        for (int64_t k = 0; k < N; k++) {
            double xhat = (row[k] - mean) * rstd, g = g0[k] * (wv ? wv[k] : 1.0);
            j->dx[m * N + k] = rstd * (g - sg / (double)N - xhat * sgx / (double)N);
        }
    }
}

/* dw and db of columns [begin, end), each summed over the rows in row order (as one loop over rows did). */
static void ln_bwd_cols(void *ctx, size_t begin, size_t end) {
    const ln_bwd_job *j = ctx;
    int64_t M = j->p->rows, N = j->p->cols;
    for (int64_t m = 0; m < M; m++) {
        const double *g0 = j->dyv + m * N, *row = j->xv + m * N;
        double mean = j->mv[m], rstd = j->rv[m];
        for (int64_t k = (int64_t)begin; k < (int64_t)end; k++) {
            double xhat = (row[k] - mean) * rstd;
            j->dw[k] += g0[k] * xhat;
            j->db[k] += g0[k];
        }
    }
}

void layer_norm_backward_kernel(const pyaclnn_stub_launch *launch) {
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
        ln_bwd_job j = {p, dyv, xv, mv, rv, wv, dx, dw, db};
        op_parallel_for((size_t)M, op_thread_count((size_t)M, ln_rows_per_thread(N)), ln_bwd_rows, &j);
        /* dw and db sum over the rows in row order, each column on its own: columns split over the pool */
        op_parallel_for((size_t)N, op_thread_count((size_t)N, (size_t)(1 + (1 << 16) / (M + 1))), ln_bwd_cols, &j);
        if (p->mask[0]) tv_store_double(dxo, dx);
        if (p->mask[1]) tv_store_double(dwo, dw);
        if (p->mask[2]) tv_store_double(dbo, db);
    }
    free(dyv), free(xv), free(mv), free(rv), free(wv), free(dx), free(dw), free(db);
}

/* ---- steps ---------------------------------------------------------------------------------- */

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
    /* (a 0 in the leading dims leaves the trailing ones' product unbounded: tv_dims_product saturates it,
     * and no kernel runs for 0 rows unless a gradWeightOut / gradBiasOut of that many elements exists) */
    *rows = tv_dims_product(x->shape, 0, begin);
    *cols = tv_dims_product(x->shape, begin, x->ndim);
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

/* ln_param_dtype p input: p (weight, bias: absent passes) is FLOAT or of input's dtype. */
aclnnStatus opc_ln_param_dtype(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *p = op_tensor(c, s, 0);
    if (!p->present || p->dtype == ACL_FLOAT) return ACLNN_SUCCESS;
    return tv_check_same_dtype(c->api, op_pname(c, s, 0), p->dtype, op_pname(c, s, 1), op_tensor(c, s, 1)->dtype);
}

/* ln_norm_shape input normalizedShape per ...: input's trailing dims are normalizedShape, and so are the
 * shapes of the present per-element tensors (weight, bias; their gradients); rows (M) and columns (N). */
aclnnStatus opc_ln_norm_shape(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *per[OP_MAX_STEP_PARAMS];
    const char *names[OP_MAX_STEP_PARAMS];
    size_t n_per = 0;
    for (int k = 2; k < s->np; k++, n_per++) {
        per[n_per] = op_tensor(c, s, k);
        names[n_per] = op_pname(c, s, k);
    }
    int ns = s->p[1];
    ln_params *prm = ln_block(c);
    return check_norm_shape(c->api, op_tensor(c, s, 0), c->ints[ns].v, c->ints[ns].n, per, names, n_per, &prm->rows,
                            &prm->cols);
}

/* ln_stat_shape input normalizedShape stat ...: each present, non-empty stat (mean, rstd) has input's
 * leading dims and 1s after them (the 950 check; the emulator applies it everywhere). */
aclnnStatus opc_ln_stat_shape(op_call *c, const op_step *s) {
    uint64_t nn = c->ints[s->p[1]].n;
    for (int k = 2; k < s->np; k++) {
        aclnnStatus rc = check_stat_shape(c->api, op_pname(c, s, k), op_tensor(c, s, k), op_tensor(c, s, 0), nn);
        if (rc) return rc;
    }
    return ACLNN_SUCCESS;
}

/* ln_plan eps weight bias mean rstd: the forward's attributes (which optional tensors are present);
 * nothing to launch without rows. */
aclnnStatus opc_ln_plan(op_call *c, const op_step *s) {
    ln_params *prm = ln_block(c);
    prm->eps = op_argument(c, s, 0)->d;
    prm->has_weight = op_tensor(c, s, 1)->present;
    prm->has_bias = op_tensor(c, s, 2)->present;
    prm->has_mean = op_tensor(c, s, 3)->present;
    prm->has_rstd = op_tensor(c, s, 4)->present;
    if (prm->rows == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}

/* ln_mask outputMask gradInput gradWeight gradBias: outputMask a live array of 3 (161002), and the outputs
 * it asks for not NULL (161001). */
aclnnStatus opc_ln_mask(op_call *c, const op_step *s) {
    const bool *mask;
    uint64_t n_mask;
    if (pyaclnn_stub_bool_array_get(op_argument(c, s, 0)->p, &mask, &n_mask) != ACLNN_SUCCESS) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "%s is not a live aclBoolArray", op_pname(c, s, 0));
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (n_mask != 3) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "%s must have 3 elements, it has %llu", op_pname(c, s, 0),
                            (unsigned long long)n_mask);
        return ACLNN_ERR_PARAM_INVALID;
    }
    ln_params *prm = ln_block(c);
    for (int k = 0; k < 3; k++) {
        prm->mask[k] = mask[k];
        if (mask[k] && op_argument(c, s, k + 1)->p == NULL) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, c->api, "%s is NULL but %s[%d] is true", op_pname(c, s, k + 1),
                                op_pname(c, s, 0), k);
            return ACLNN_ERR_PARAM_NULLPTR;
        }
    }
    return ACLNN_SUCCESS;
}

/* ln_read_masked gradInput gradWeight gradBias: snapshots of the outputs outputMask asks for (after
 * ln_mask); the others are absent (never read, not given to the executor). */
aclnnStatus opc_ln_read_masked(op_call *c, const op_step *s) {
    const ln_params *prm = ln_block(c);
    for (int k = 0; k < s->np && k < 3; k++) {
        int i = s->p[k];
        c->t[i].present = 0;
        c->read |= (uint64_t)1 << i;
        if (!prm->mask[k]) continue;
        aclnnStatus rc = op_tensor_arg(c->api, op_pname(c, s, k), op_argument(c, s, k)->p, &c->t[i]);
        if (rc) return rc;
    }
    return ACLNN_SUCCESS;
}

/* ln_backward_plan mean rstd weight: mean and rstd hold one element per row; the weight's presence;
 * nothing to launch when there is nothing to write. */
aclnnStatus opc_ln_backward_plan(op_call *c, const op_step *s) {
    ln_params *prm = ln_block(c);
    int64_t nm = pyaclnn_stub_numel(op_tensor(c, s, 0)), nr = pyaclnn_stub_numel(op_tensor(c, s, 1));
    if (nm != prm->rows || nr != prm->rows) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "mean and rstd must have %lld elements (one per row), they "
                            "have %lld and %lld", (long long)prm->rows, (long long)nm, (long long)nr);
        return ACLNN_ERR_PARAM_INVALID;
    }
    prm->has_weight = op_tensor(c, s, 2)->present;
    if (!(prm->rows * prm->cols > 0 || (prm->cols > 0 && (prm->mask[1] || prm->mask[2])))) c->nothing = 1;
    return ACLNN_SUCCESS;
}
