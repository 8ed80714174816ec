/*
 * Deep normalisation: aclnnDeepNorm and aclnnDeepNormGrad, the generated aclnn wrappers of the op definitions
 * hicann/ops-nn norm/deep_norm and norm/deep_norm_grad (no op_api). Definitions: deep_norm.toml.
 *
 * Per row of the trailing gamma dims (N elements), with x' = alpha * x + gx (alpha the definition's Float attr):
 *   DeepNorm:     mean = sum(x') / N, rstd = 1 / sqrt(sum((x' - mean)^2) / N + eps),
 *                 y = (x' - mean) * rstd * gamma + beta.
 *   DeepNormGrad: (docs/aclnnDeepNormGrad.md, from the given mean and rstd) t1 = dy * gamma, t2 = x' - mean,
 *                 dvar = -1/N sum(t1 * t2 * rstd^3), dmean = -1/N sum(t1 * rstd), dgx = t1 * rstd + dvar * t2 + dmean,
 *                 dx = alpha * dgx; dbeta = sum over rows of dy, dgamma = sum over rows of dy * rstd * t2.
 * The kernels' fp32 reduction trees depend on the tiling template (merge-N / cut-D / small-D, UB-sized slices):
 * here every value is computed in float64 and rounded once to its output dtype (class c; the figures are in
 * deep_norm.toml).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"

typedef struct {
    int64_t rows, cols;   /* M rows of N = numel(gamma) */
    float alpha, eps;     /* the definitions' Float attrs (stored as float: GCC 12's -O3 SLP pass drops a double
                           * field's (double)(float) round trip) */
} dn_params;

/* ---- kernels -------------------------------------------------------------------------------- */

/* inputs x gx beta gamma, outputs mean rstd y */
void deep_norm_kernel(const pyaclnn_stub_launch *launch) {
    const dn_params *p = launch->params;
    if (!tv_launch_views_ok(launch)) return;
    int64_t M = p->rows, N = p->cols;
    double *x = tv_load_double(&launch->inputs[0]), *gx = tv_load_double(&launch->inputs[1]);
    double *b = tv_load_double(&launch->inputs[2]), *g = tv_load_double(&launch->inputs[3]);
    double *mo = tv_alloc(M, sizeof(double)), *ro = tv_alloc(M, sizeof(double));
    if (!x || !gx || !b || !g || !mo || !ro) {
        tv_fail_oom(launch);
    } else {
        for (int64_t m = 0; m < M; m++) {
            double *row = x + m * N, s = 0, v = 0;
            for (int64_t j = 0; j < N; j++) {
                row[j] = (double)p->alpha * row[j] + gx[m * N + j];   /* x' overwrites x */
                s += row[j];
            }
            double mean = s / (double)N;
            for (int64_t j = 0; j < N; j++) v += (row[j] - mean) * (row[j] - mean);
            double rstd = 1.0 / sqrt(v / (double)N + (double)p->eps);
            for (int64_t j = 0; j < N; j++) row[j] = (row[j] - mean) * rstd * g[j] + b[j];
            mo[m] = mean, ro[m] = rstd;
        }
        tv_store_double(&launch->outputs[0], mo);
        tv_store_double(&launch->outputs[1], ro);
        tv_store_double(&launch->outputs[2], x);
    }
    free(x), free(gx), free(b), free(g), free(mo), free(ro);
}

/* inputs dy x gx gamma mean rstd, outputs dx dgx dbeta dgamma */
void deep_norm_grad_kernel(const pyaclnn_stub_launch *launch) {
    const dn_params *p = launch->params;
    if (!tv_launch_views_ok(launch)) return;
    int64_t M = p->rows, N = p->cols;
    double *dy = tv_load_double(&launch->inputs[0]), *x = tv_load_double(&launch->inputs[1]);
    double *gx = tv_load_double(&launch->inputs[2]), *g = tv_load_double(&launch->inputs[3]);
    double *mn = tv_load_double(&launch->inputs[4]), *rs = tv_load_double(&launch->inputs[5]);
    double *dx = tv_alloc(M * N, sizeof(double)), *dgx = tv_alloc(M * N, sizeof(double));
    double *db = calloc((size_t)N + 1, sizeof(double)), *dg = calloc((size_t)N + 1, sizeof(double));
    if (!dy || !x || !gx || !g || !mn || !rs || !dx || !dgx || !db || !dg) {
        tv_fail_oom(launch);
    } else {
        for (int64_t m = 0; m < M; m++) {
            const double *a = dy + m * N;
            double *t2 = x + m * N, r = rs[m], sv = 0, sm = 0;
            for (int64_t j = 0; j < N; j++) {
                t2[j] = (double)p->alpha * t2[j] + gx[m * N + j] - mn[m];
                double t1 = a[j] * g[j];
                sv += t1 * t2[j] * r * r * r;
                sm += t1 * r;
                db[j] += a[j];
                dg[j] += a[j] * r * t2[j];
            }
            double dvar = -sv / (double)N, dmean = -sm / (double)N;
            for (int64_t j = 0; j < N; j++) {
                double d = a[j] * g[j] * r + dvar * t2[j] + dmean;
                dgx[m * N + j] = d;
                dx[m * N + j] = (double)p->alpha * d;
            }
        }
        tv_store_double(&launch->outputs[0], dx);
        tv_store_double(&launch->outputs[1], dgx);
        tv_store_double(&launch->outputs[2], db);
        tv_store_double(&launch->outputs[3], dg);
    }
    free(dy), free(x), free(gx), free(g), free(mn), free(rs), free(dx), free(dgx), free(db), free(dg);
}

/* ---- steps ---------------------------------------------------------------------------------- */

/* A tiling rejection of the generated wrappers: phase 1 fails with 561002. */
#define dn_reject(c, ...) op_failf((c)->api, ACLNN_ERR_INNER_TILING_ERROR, __VA_ARGS__)

static const char *shp(const pyaclnn_stub_tensor *t, char *b, size_t n) { return tv_shape_text(t->shape, t->ndim, b, n); }

/* The emulator's own check: the kernel reads / writes one mean and one rstd per row (the tilings compare only
 * their leading dims); outputs need exactly one, inputs at least one. */
static aclnnStatus dn_row_count(op_call *c, const char *name, const pyaclnn_stub_tensor *t, int64_t rows, int exact) {
    int64_t n = pyaclnn_stub_numel(t);
    if (exact ? n == rows : n >= rows) return ACLNN_SUCCESS;
    char b[160];
    return dn_reject(c, "%s %s has %lld elements, one per row (%lld) needed", name, shp(t, b, sizeof b), (long long)n,
                     (long long)rows);
}

/* The kernel's rows (the dims before gamma's) and columns (gamma's) of `shape`, with the row-count checks of mean
 * and rstd (forward: one element a row exactly; backward: at least one a row). */
static dn_params *dn_rows_cols(op_call *c, const int64_t *shape, int64_t d, int64_t gd, const pyaclnn_stub_tensor *mean,
                               const pyaclnn_stub_tensor *rstd, int exact, aclnnStatus *rc) {
    int64_t rows = tv_dims_product(shape, 0, d - gd);
    if ((*rc = dn_row_count(c, "mean", mean, rows, exact)) || (*rc = dn_row_count(c, "rstd", rstd, rows, exact)))
        return NULL;
    dn_params *p = op_params(c, sizeof *p);
    p->rows = rows;
    p->cols = tv_dims_product(shape, d - gd, d);
    return p;
}

#define DN_NDIM(k) ((long long)op_tensor(c, s, k)->ndim)
#define DN_DIM(k, i) (op_tensor(c, s, k)->shape[i])

/* dn_plan alpha epsilon x gx beta gamma mean rstd y: deep_norm_shape_check.h's CheckDeepNormShapeDim then
 * CheckDeepNormShapeValue in their order, on Ascend 950 then arch35's CheckReduceOutputTail (561002; the
 * definition's dtype rows are checked before, so CheckDeepNormDtype cannot fail), the kernel's parameters. Every output empty: nnopbase skips the tiling (the success of the docs' empty tensors). */
aclnnStatus opc_dn_plan(op_call *c, const op_step *s) {
    enum { A, E, X, GX, B, G, MEAN, RSTD, Y };
    if (c->nothing) return ACLNN_SUCCESS;
    long long xd = DN_NDIM(X), gd = DN_NDIM(G);
    char b1[160], b2[160];
    if (xd > 8 || xd < 2) return dn_reject(c, "x dim num %lld: dim num should be in range [2, 8]", xd);
    if (gd > 7 || gd < 1) return dn_reject(c, "gamma dim num %lld: dim num should be in range [1, 7]", gd);
    if (DN_NDIM(GX) != xd) return dn_reject(c, "gx dim num %lld: dim num should equal x dim num", DN_NDIM(GX));
    if (DN_NDIM(Y) != xd || DN_NDIM(MEAN) != xd || DN_NDIM(RSTD) != xd)
        return dn_reject(c, "y/mean/rstd dim nums %lld/%lld/%lld: dim num should equal x dim num", DN_NDIM(Y),
                         DN_NDIM(MEAN), DN_NDIM(RSTD));
    if (DN_NDIM(B) != gd) return dn_reject(c, "beta dim num %lld: dim num should equal gamma dim num", DN_NDIM(B));
    if (xd <= gd) return dn_reject(c, "x dim num %lld: x dim num should be greater than gamma dim num", xd);
    const pyaclnn_stub_tensor *x = op_tensor(c, s, X);
    for (int64_t i = 0; i < xd; i++) {
        if (DN_DIM(X, i) == 0) return dn_reject(c, "x %s: shape dim cannot be 0", shp(x, b1, sizeof b1));
        if (DN_DIM(GX, i) != DN_DIM(X, i))
            return dn_reject(c, "gx %s: shape should equal x shape", shp(op_tensor(c, s, GX), b1, sizeof b1));
        if (DN_DIM(Y, i) != DN_DIM(X, i))
            return dn_reject(c, "y %s: shape should equal x shape", shp(op_tensor(c, s, Y), b1, sizeof b1));
    }
    for (int64_t i = 0; i < xd - gd; i++)
        if (DN_DIM(RSTD, i) != DN_DIM(X, i) || DN_DIM(MEAN, i) != DN_DIM(X, i))
            return dn_reject(c, "rstd/mean %s: shape should equal x leading dimensions", shp(x, b1, sizeof b1));
    for (int64_t i = 0; i < gd; i++)
        if (DN_DIM(G, i) != DN_DIM(X, xd - gd + i) || DN_DIM(B, i) != DN_DIM(X, xd - gd + i))
            return dn_reject(c, "gamma/beta %s: shape should equal x trailing dimensions", shp(x, b1, sizeof b1));
    /* arch35's CheckReduceOutputTail (Ascend 950 only: the legacy tiling leaves those dims unchecked) */
    for (int64_t i = xd - gd; ew_soc_is_950() && i < xd; i++)
        if (DN_DIM(MEAN, i) != 1 || DN_DIM(RSTD, i) != 1)
            return dn_reject(c, "mean/rstd %s and %s: reduced trailing dimensions must be 1",
                             shp(op_tensor(c, s, MEAN), b1, sizeof b1), shp(op_tensor(c, s, RSTD), b2, sizeof b2));
    aclnnStatus rc;
    dn_params *p = dn_rows_cols(c, x->shape, xd, gd, op_tensor(c, s, MEAN), op_tensor(c, s, RSTD), 1, &rc);
    if (!p) return rc;
    p->alpha = (float)op_argument(c, s, A)->d;
    p->eps = (float)op_argument(c, s, E)->d;
    return ACLNN_SUCCESS;
}

/* dng_plan alpha dy x gx gamma mean rstd dx dgx dbeta dgamma: arch22 deep_norm_grad_tiling.cpp's
 * CheckInputOutputShapeDim then CheckInputOutputShapeValue (x / gx / dx / dgx, mean / rstd, gamma / dgamma / dbeta)
 * in their order (561002), the kernel's parameters. */
aclnnStatus opc_dng_plan(op_call *c, const op_step *s) {
    enum { A, DY, X, GX, G, MEAN, RSTD, DX, DGX, DB, DG };
    if (c->nothing) return ACLNN_SUCCESS;
    long long d = DN_NDIM(DY), gd = DN_NDIM(G);
    char b1[160];
    if (d > 8 || d < 2) return dn_reject(c, "dy dim num %lld: dim num should be in range [2, 8]", d);
    if (gd > 7 || gd < 1) return dn_reject(c, "gamma dim num %lld: dim num should be in range [1, 7]", gd);
    if (DN_NDIM(X) != d || DN_NDIM(GX) != d || DN_NDIM(DX) != d || DN_NDIM(DGX) != d)
        return dn_reject(c, "Input gx/x/dx/dgx shape invaild, dim num is not equal dy dim.");
    if (DN_NDIM(RSTD) != d || DN_NDIM(MEAN) != d)
        return dn_reject(c, "Input mean/rstd shape invaild, dim num is not equal dy dim num.");
    if (DN_NDIM(DG) != gd || DN_NDIM(DB) != gd)
        return dn_reject(c, "Output dgamma/dbeta shape invaild, dim num is not equal input gamma dim num.");
    if (d <= gd) return dn_reject(c, "dy dim num should not be smaller than gamma dim num.");
    const pyaclnn_stub_tensor *dy = op_tensor(c, s, DY);
    for (int64_t i = 0; i < d; i++) {
        if (DN_DIM(DY, i) == 0) return dn_reject(c, "dy %s: Input dy shape can not be 0.", shp(dy, b1, sizeof b1));
        if (DN_DIM(X, i) != DN_DIM(DY, i) || DN_DIM(GX, i) != DN_DIM(DY, i))
            return dn_reject(c, "Input x/gx shape invaild, shape is not equal dy shape.");
        if (DN_DIM(DX, i) != DN_DIM(X, i) || DN_DIM(DGX, i) != DN_DIM(GX, i))
            return dn_reject(c, "Output dx/dgx shape invaild, shape is not equal x/gx shape.");
    }
    for (int64_t i = 0; i < d - gd; i++)
        if (DN_DIM(RSTD, i) != DN_DIM(DY, i) || DN_DIM(MEAN, i) != DN_DIM(DY, i))
            return dn_reject(c, "Input rstd/mean shape invaild, shape is not equal dy first few dim.");
    for (int64_t i = 0; i < gd; i++) {
        if (DN_DIM(G, i) != DN_DIM(DY, d - gd + i))
            return dn_reject(c, "Input gamma shape invaild, gamma shape is not equal dy last few dim.");
        if (DN_DIM(DG, i) != DN_DIM(G, i))
            return dn_reject(c, "Output dgamma shape invaild, shape is not equal gamma shape.");
        if (DN_DIM(DB, i) != DN_DIM(DY, d - gd + i))
            return dn_reject(c, "Output dbeta shape invaild, dbeta shape is not equal dy last few dim.");
    }
    aclnnStatus rc;
    dn_params *p = dn_rows_cols(c, dy->shape, d, gd, op_tensor(c, s, MEAN), op_tensor(c, s, RSTD), 0, &rc);
    if (!p) return rc;
    p->alpha = (float)op_argument(c, s, A)->d;
    return ACLNN_SUCCESS;
}
