/*
 * RMS normalisation: aclnnRmsNorm, aclnnRmsNormGrad (generated aclnn wrappers of the op definitions
 * hicann/ops-nn norm/rms_norm, norm/rms_norm_grad), aclnnAddRmsNorm (op_api norm/add_rms_norm) and
 * aclnnGemmaRmsNorm (generated, norm/gemma_rms_norm: RmsNorm's kernel with gamma + 1 in fp32) and
 * aclnnInplaceAddRmsNorm (generated, norm/inplace_add_rms_norm: AddRmsNorm's kernel writing y into x1Ref and
 * x = x1 + x2 into x2Ref). Definitions: rms_norm.toml.
 *
 * Per row of the trailing gamma dims (N elements): rstd = 1 / sqrt(sum(x^2) / N + eps), y = x * rstd * gamma.
 * The element steps are the vendor kernels' fp32 steps (inputs widened, fp32 products, one RINT cast per store):
 *   RmsNorm (rms_norm.h ComputeMulGammaCast; arch35 rms_norm_regbase_perf.h, _split_d.h): q = x * x; S = sum q;
 *     rstd = 1 / sqrt(S * avg + eps) (avg = fp32(1 / N); on Ascend 950's full-load template NormCommon's
 *     ComputeRstdNewtonRaphson, arnq_newton_rstd, and S in CalculateSquareReduceSum's order as below);
 *     y = (x * rstd) * gamma.
 *   AddRmsNorm, Atlas A2 (add_rms_norm.h): fp16: x = fp16(x1 + x2) (a half Add), bf16/fp32: x = fp32 sum (xOut its
 *     RINT cast); q = (x * x) * avg; S = sum q; rstd = 1 / sqrt(S + eps);
 *     fp32: y = gamma * (x * rstd); bf16: y = bf16(fp32(bf16(x * rstd)) * gamma); fp16: y = fp16(fp16(x * rstd) *
 *     gamma) (a half Mul).
 *   AddRmsNorm, Ascend 950 (arch35 add_rms_norm_regbase.h): x = fp32 sum (xOut its cast); S = sum x * x in
 *     NormCommon's CalculateSquareReduceSum order (fold at binAddQuotient, 64-lane ReduceSums: the seed operator's
 *     arnq_fold_reduce, whose fold point is this tiling's for every dtype) when the tiling picks its full-load
 *     template; rstd by NormCommon's ComputeRstdNewtonRaphson (arnq_newton_rstd); y = (x * rstd) * gamma.
 * The sum S elsewhere: the kernels' fp32 reduction trees depend on the tiling template (UB-sized slices, 64-lane
 * ReduceSum): here S is the float64 sum of the fp32 terms, rounded once to fp32 (class c; the figure in
 * rms_norm.toml). RmsNormGrad: the documented formulas in float64, each result rounded
 * once (class c).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/dtype.h"
#include "kernels/parallel.h"
#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops/add_rms_norm_dynamic_quant/arnq.h"
#include "ops_decls.h"

typedef struct {
    int64_t rows, cols;   /* M rows of N = numel(gamma) */
    float eps, avg;
    int soc950;
    int gemma;            /* GemmaRmsNorm: gamma + 1 (in fp32) */
    int fold950;          /* Ascend 950, the full-load template: NormCommon's reduction order and Newton rstd */
    aclDataType dt;       /* x's dtype */
} rn_params;

static float rn_round(float v, aclDataType dt) {
    return dt == ACL_FLOAT ? v : (float)ew_cast((ew_value){v, 0}, ACL_FLOAT, dt).f;
}

/* S: the fp32 terms summed in float64, rounded once to fp32. */
static float rn_sum(const float *q, int64_t n) {
    double s = 0;
    for (int64_t j = 0; j < n; j++) s += q[j];
    return (float)s;
}

static float rn_vector_rstd(float s, float avg, float eps) {
    float t = s * avg;
    t = t + eps;
    return 1.0f / sqrtf(t);
}

/* ---- kernels -------------------------------------------------------------------------------- */

typedef struct {
    const rn_params *p;
    const float *x, *g;
    float *y, *r, *q;   /* q: a row of squares per part */
} rn_job;

/* Rows [begin, end): each row's sum and rstd are its own, so the bytes never depend on the thread count. */
static void rn_fwd_rows(void *ctx, size_t part, size_t begin, size_t end) {
    const rn_job *j = ctx;
    const rn_params *p = j->p;
    int64_t N = p->cols;
    const float *g = j->g;
    float *q = j->q + (int64_t)part * N;
    for (int64_t m = (int64_t)begin; m < (int64_t)end; m++) {
        const float *row = j->x + m * N;
        for (int64_t k = 0; k < N; k++) q[k] = row[k] * row[k];
        float rstd = p->fold950 ? arnq_newton_rstd(arnq_fold_reduce(q, N, 0), p->avg, p->eps, 0)
                                : rn_vector_rstd(rn_sum(q, N), p->avg, p->eps);
        for (int64_t k = 0; k < N; k++) {
            float t = row[k] * rstd;
            j->y[m * N + k] = t * g[k];
        }
        j->r[m] = rstd;
    }
}

void rms_norm_kernel(const pyaclnn_stub_launch *launch) {
    const rn_params *p = launch->params;
    if (!tv_launch_views_ok(launch)) return;
    int64_t M = p->rows, N = p->cols;
    /* rows over the kernel pool, about 64k elements per thread before a second joins */
    size_t parts = op_thread_count((size_t)M, (size_t)(1 + (1 << 16) / (N + 1)));
    if (parts > OP_MAX_PARTS) parts = OP_MAX_PARTS;
    float *x = tv_load_float(&launch->inputs[0]), *g = tv_load_float(&launch->inputs[1]);
    float *y = tv_alloc(M * N, sizeof(float)), *r = tv_alloc(M, sizeof(float));
    float *q = tv_alloc((int64_t)parts * N, sizeof(float));
    if (!x || !g || !y || !r || !q) {
        tv_fail_oom(launch);
    } else {
        if (p->gemma)
            for (int64_t j = 0; j < N; j++) g[j] = g[j] + 1.0f;
        rn_job j = {p, x, g, y, r, q};
        op_parallel_parts((size_t)M, parts, rn_fwd_rows, &j);
        tv_store_float(&launch->outputs[0], y);
        tv_store_float(&launch->outputs[1], r);
    }
    free(x), free(g), free(y), free(r), free(q);
}

void add_rms_norm_kernel(const pyaclnn_stub_launch *launch) {
    const rn_params *p = launch->params;
    if (!tv_launch_views_ok(launch)) return;
    int64_t M = p->rows, N = p->cols;
    aclDataType dt = p->dt;
    const pyaclnn_stub_tensor *ro = &launch->outputs[1], *xo = &launch->outputs[2];
    float *x1 = tv_load_float(&launch->inputs[0]), *x2 = tv_load_float(&launch->inputs[1]);
    float *g = tv_load_float(&launch->inputs[2]);
    float *y = tv_alloc(M * N, sizeof(float)), *r = tv_alloc(M, sizeof(float)), *q = tv_alloc(N, sizeof(float));
    if (!x1 || !x2 || !g || !y || !r || !q) {
        tv_fail_oom(launch);
    } else {
        int a2_half = !p->soc950 && dt == ACL_FLOAT16;
        for (int64_t m = 0; m < M; m++) {
            float *x = x1 + m * N;   /* x overwrites x1: the fp32 x the norm uses */
            const float *b = x2 + m * N;
            for (int64_t j = 0; j < N; j++) x[j] = a2_half ? rn_round(x[j] + b[j], ACL_FLOAT16) : x[j] + b[j];
            float rstd;
            if (p->soc950) {
                for (int64_t j = 0; j < N; j++) q[j] = x[j] * x[j];
                rstd = arnq_newton_rstd(p->fold950 ? arnq_fold_reduce(q, N, 0) : rn_sum(q, N), p->avg, p->eps, 0);
            } else {
                for (int64_t j = 0; j < N; j++) {
                    float sq = x[j] * x[j];
                    q[j] = sq * p->avg;
                }
                float t = rn_sum(q, N) + p->eps;
                rstd = 1.0f / sqrtf(t);
            }
            for (int64_t j = 0; j < N; j++) {
                float t = x[j] * rstd;
                if (!p->soc950 && dt != ACL_FLOAT) t = rn_round(t, dt);
                y[m * N + j] = t * g[j];   /* fp16 (A2): a half Mul, the exact product rounded once to fp16 */
            }
            r[m] = rstd;
        }
        tv_store_float(&launch->outputs[0], y);
        if (ro->present) tv_store_float(ro, r);
        if (xo->present) tv_store_float(xo, x1);
    }
    free(x1), free(x2), free(g), free(y), free(r), free(q);
}

void rms_norm_grad_kernel(const pyaclnn_stub_launch *launch) {
    const rn_params *p = launch->params;
    if (!tv_launch_views_ok(launch)) return;
    int64_t M = p->rows, N = p->cols;
    double *dy = tv_load_double(&launch->inputs[0]), *x = tv_load_double(&launch->inputs[1]);
    double *rs = tv_load_double(&launch->inputs[2]), *g = tv_load_double(&launch->inputs[3]);
    double *dx = tv_alloc(M * N, sizeof(double)), *dg = calloc((size_t)N + 1, sizeof(double));
    if (!dy || !x || !rs || !g || !dx || !dg) {
        tv_fail_oom(launch);
    } else {
        for (int64_t m = 0; m < M; m++) {
            const double *a = dy + m * N, *b = x + m * N;
            double r = rs[m], mean = 0;
            for (int64_t j = 0; j < N; j++) {
                mean += a[j] * g[j] * b[j] * r;
                dg[j] += r * b[j] * a[j];
            }
            mean /= (double)N;
            for (int64_t j = 0; j < N; j++) dx[m * N + j] = (a[j] * g[j] - r * b[j] * mean) * r;
        }
        if (M > 0) tv_store_double(&launch->outputs[0], dx);
        tv_store_double(&launch->outputs[1], dg);
    }
    free(dy), free(x), free(rs), free(g), free(dx), free(dg);
}

/* ---- steps ---------------------------------------------------------------------------------- */

/* A tiling / shape rejection: the generated wrappers' tiling (phase 1, 561002), or the op_api's L0 op, whose
 * launcher's status the wrapper drops (as AddRmsNormDynamicQuant's: GetWorkspaceSize succeeds, the run fails with
 * 561103). */
static aclnnStatus rn_reject(op_call *c, int phase1, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static aclnnStatus rn_reject(op_call *c, int phase1, const char *fmt, ...) {
    char why[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    if (phase1) return op_failf(c->api, ACLNN_ERR_INNER_TILING_ERROR, "%s", why);
    return op_defer_to_run(c, ACLNN_ERR_INNER_NULLPTR, "%s tiling failed: %s", op_exec_name(c), why);
}

static const char *shp(const pyaclnn_stub_tensor *t, char *b, size_t n) { return tv_shape_text(t->shape, t->ndim, b, n); }

#define RN_SHAPES(a, b) shp(a, b1, sizeof b1), shp(b, b2, sizeof b2)

/* x's and gamma's ranks in [1, 8], gamma's at most x's (the tilings' first checks). */
static aclnnStatus rn_ranks(op_call *c, int phase1, const char *nx, const pyaclnn_stub_tensor *x, const char *ng,
                            const pyaclnn_stub_tensor *g) {
    if (x->ndim > 8 || x->ndim < 1)
        return rn_reject(c, phase1, "%s has %lld dims, it must be in the range of [1, 8]", nx, (long long)x->ndim);
    if (g->ndim > 8 || g->ndim < 1)
        return rn_reject(c, phase1, "%s has %lld dims, it must be in the range of [1, 8]", ng, (long long)g->ndim);
    if (g->ndim > x->ndim)
        return rn_reject(c, phase1, "%s and %s dims %lld and %lld: The shape dim of input %s must be less than or equal "
                         "to that of input %s", ng, nx, (long long)g->ndim, (long long)x->ndim, ng, nx);
    return ACLNN_SUCCESS;
}

static void rn_rows(const pyaclnn_stub_tensor *x, const pyaclnn_stub_tensor *g, rn_params *p) {
    p->rows = tv_dims_product(x->shape, 0, x->ndim - g->ndim);
    p->cols = tv_dims_product(g->shape, 0, g->ndim);
}

/* The emulator's own check: the kernel reads / writes one rstd per row (the tilings only compare dims). */
static aclnnStatus rn_rstd_count(op_call *c, int phase1, const char *nr, const pyaclnn_stub_tensor *r, int64_t rows,
                                 int exact) {
    int64_t n = pyaclnn_stub_numel(r);
    if (exact ? n == rows : n >= rows) return ACLNN_SUCCESS;
    char b1[160];
    return rn_reject(c, phase1, "%s %s has %lld elements, one per row (%lld) needed", nr, shp(r, b1, sizeof b1),
                     (long long)n, (long long)rows);
}

/* RmsNorm's CheckInputShape4RmsNorm in its order (x, gamma, y, rstd: the operands' labels), also AddRmsNorm's L0
 * and InplaceAddRmsNorm (x2 then must have x1's shape). */
static aclnnStatus rn_fwd_shapes(op_call *c, int phase1, const op_step *s, const pyaclnn_stub_tensor *x2,
                                 rn_params *p) {
    const char *nx = op_pname(c, s, 1), *ng = op_pname(c, s, 2), *ny = op_pname(c, s, 3), *nr = op_pname(c, s, 4);
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 1), *g = op_tensor(c, s, 2), *y = op_tensor(c, s, 3),
                              *r = op_tensor(c, s, 4);
    char b1[160], b2[160];
    aclnnStatus rc = rn_ranks(c, phase1, nx, x, ng, g);
    if (rc || c->made) return rc;
    if (x->ndim != y->ndim)
        return rn_reject(c, phase1, "%s and %s dims %lld and %lld: The shape dims of input %s and output %s must be the "
                         "same", ny, nx, (long long)y->ndim, (long long)x->ndim, nx, ny);
    for (int64_t i = 0; i < g->ndim; i++) {
        if (g->shape[i] == 0) return rn_reject(c, phase1, "%s %s: Input %s cannot be an empty tensor", ng,
                                               shp(g, b1, sizeof b1), ng);
        if (g->shape[i] != x->shape[x->ndim - g->ndim + i])
            return rn_reject(c, phase1, "%s and %s %s and %s: The shape of input %s must be the same as the shape "
                             "consisting of the last %lld axes of input %s", ng, nx, RN_SHAPES(g, x), ng,
                             (long long)g->ndim, nx);
    }
    for (int64_t i = 0; i < x->ndim; i++) {
        if (x->shape[i] == 0) return rn_reject(c, phase1, "%s %s: Input %s cannot be an empty tensor", nx,
                                               shp(x, b1, sizeof b1), nx);
        if (y->shape[i] == 0) return rn_reject(c, phase1, "%s %s: Output %s cannot be an empty tensor", ny,
                                               shp(y, b1, sizeof b1), ny);
        if (x->shape[i] != y->shape[i])
            return rn_reject(c, phase1, "%s and %s %s and %s: The shapes of output %s and input %s must be the same", ny,
                             nx, RN_SHAPES(y, x), ny, nx);
        if (x2 != NULL && x2->shape[i] != x->shape[i])
            return rn_reject(c, phase1, "x2 and %s %s and %s: The shapes of input x2 and input %s must be the same", nx,
                             RN_SHAPES(x2, x), nx);
    }
    if (x2 != NULL && x2->ndim != x->ndim)
        return rn_reject(c, phase1, "x2 and %s %s and %s: The shapes of input x2 and input %s must be the same", nx,
                         RN_SHAPES(x2, x), nx);
    rn_rows(x, g, p);
    if (!r->present) return ACLNN_SUCCESS;
    for (int64_t i = 0; i < r->ndim; i++) {
        if (r->shape[i] == 0) return rn_reject(c, phase1, "%s %s: Output %s cannot be an empty tensor", nr,
                                               shp(r, b1, sizeof b1), nr);
        if (r->shape[i] != 1 && (i >= x->ndim || r->shape[i] != x->shape[i]))
            return rn_reject(c, phase1, "%s %s: The %lldth axis of output %s must be 1 or equal to the %lldth axis of "
                             "input %s", nr, shp(r, b1, sizeof b1), (long long)i, nr, (long long)i, nx);
    }
    return rn_rstd_count(c, phase1, nr, r, p->rows, 1);
}

/* The arch35 tilings' full-load templates (AddRmsNorm's MODE_NORMAL, add_rms_norm_tiling_arch35.cpp; RmsNorm's
 * RMSNORM_REGBASE_NORMAL, rms_norm_tiling_arch35.cpp): a row of numColAlign (n padded to 32 bytes of x) <= 16384
 * elements of which at least one fits the unified buffer (254976 bytes, the vendor's arch35 tiling UT platform
 * value, as AddRmsNormDynamicQuant's, less the tilings' 1024 reserved); else split-D. Both fold at the largest power
 * of two below numColAlign. gelem: RmsNorm's gamma element size (0: AddRmsNorm). */
static int rn_950_full_load(int64_t n, int64_t elem, int64_t gelem) {
    int64_t nca = (n * elem + 31) / 32 * 32 / elem, fold = 1, ub = 254976 - 1024;
    while (fold * 2 < nca) fold *= 2;
    if (nca > 16384) return 0;
    if (gelem) {   /* (ub - 2048 - nca * gamma) / (4 nca x + 4 * 3 + firstVcaddLength) */
        int64_t vcadd = ((fold + 63) / 64 + 31) / 32 * 32, tmp = ub - 2048 - nca * gelem;
        return tmp > 0 && tmp / (nca * elem * 4 + 12 + vcadd) >= 1;
    }
    int64_t fold_buf = ((fold + 63) / 64 + 7) / 8 * 8, tmp = ub - 1024 - nca * elem;
    return tmp > 0 && tmp / (nca * elem * 8 + nca * 4 + 12 + fold_buf * 4) >= 1;
}

static void rn_common(rn_params *p, double eps, aclDataType dt) {
    p->eps = (float)eps;
    p->avg = p->cols ? 1.0f / (float)p->cols : 0.0f;
    p->soc950 = ew_soc_is_950();
    p->dt = dt;
}

/* rn_plan epsilon x gamma y rstd [x2 xOut] N: the tiling's shape checks (N = 1: the generated wrappers' tiling,
 * 561002 now; N = 0: AddRmsNorm's L0 op, deferred to the run), epsilon >= 0, the kernel's parameters. Present
 * optional outputs only (AddRmsNorm's rstd and xOut may be NULL). */
aclnnStatus opc_rn_plan(op_call *c, const op_step *s) {
    int phase1 = (int)s->n;
    if (phase1 && c->nothing) return ACLNN_SUCCESS;   /* every output empty: nnopbase skips the tiling */
    double eps = op_argument(c, s, 0)->d;
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 1), *g = op_tensor(c, s, 2);
    rn_params *p = op_params(c, sizeof *p);
    aclnnStatus rc = rn_fwd_shapes(c, phase1, s, s->np > 5 ? op_tensor(c, s, 5) : NULL, p);
    if (rc || c->made) return rc;
    if (eps < 0) return rn_reject(c, phase1, "Epsilon less than zero, please check.");
    rn_common(p, eps, x->dtype);
    int64_t xe = x->dtype == ACL_FLOAT ? 4 : 2, ge = g->dtype == ACL_FLOAT ? 4 : 2;
    p->fold950 = p->soc950 && p->cols > 0 && rn_950_full_load(p->cols, xe, c->def->kernel == rms_norm_kernel ? ge : 0);
    if (p->rows * p->cols == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}

/* rn_grad_plan dy x rstd gamma dx dgamma: RmsNormGrad's CheckInputShape4RmsNormGrad in its order (561002): ranks,
 * dx's and dgamma's ranks, dy / x / dx shapes, dy's last axis not 0, rstd against x's leading dims, gamma and
 * dgamma against dy's trailing dims; then at least one rstd per row (the emulator's). */
aclnnStatus opc_rn_grad_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *dy = op_tensor(c, s, 0), *x = op_tensor(c, s, 1), *r = op_tensor(c, s, 2);
    const pyaclnn_stub_tensor *g = op_tensor(c, s, 3), *dx = op_tensor(c, s, 4), *dg = op_tensor(c, s, 5);
    const char *ndy = op_pname(c, s, 0), *nx = op_pname(c, s, 1), *nr = op_pname(c, s, 2), *ng = op_pname(c, s, 3),
               *ndx = op_pname(c, s, 4), *ndg = op_pname(c, s, 5);
    if (c->nothing) return ACLNN_SUCCESS;   /* every output empty: nnopbase skips the tiling */
    rn_params *p = op_params(c, sizeof *p);
    char b1[160], b2[160];
    aclnnStatus rc = rn_ranks(c, 1, nx, x, ng, g);
    if (rc) return rc;
    if (dy->ndim != x->ndim)
        return rn_reject(c, 1, "%s and %s dims %lld and %lld: The shape dims of input %s and input %s must be the same",
                         ndy, nx, (long long)dy->ndim, (long long)x->ndim, ndy, nx);
    if (dx->ndim != dy->ndim)
        return rn_reject(c, 1, "%s and %s dims %lld and %lld: The shape dims of output %s and input %s must be the same",
                         ndx, ndy, (long long)dx->ndim, (long long)dy->ndim, ndx, ndy);
    if (g->ndim != dg->ndim)
        return rn_reject(c, 1, "%s and %s dims %lld and %lld: The shape dims of output %s and input %s must be the same",
                         ndg, ng, (long long)dg->ndim, (long long)g->ndim, ndg, ng);
    for (int64_t i = 0; i < x->ndim; i++) {
        if (dy->shape[i] != x->shape[i])
            return rn_reject(c, 1, "%s and %s %s and %s: The shapes of input %s and input %s must be the same", nx, ndy,
                             RN_SHAPES(x, dy), nx, ndy);
        if (dy->shape[i] != dx->shape[i])
            return rn_reject(c, 1, "%s and %s %s and %s: The shapes of output %s and input %s must be the same", ndx, ndy,
                             RN_SHAPES(dx, dy), ndx, ndy);
    }
    if (dy->shape[x->ndim - 1] == 0)
        return rn_reject(c, 1, "%s %s: The last axis of input %s can not be 0", ndy, shp(dy, b1, sizeof b1), ndy);
    int64_t lead = x->ndim - g->ndim, upto = r->ndim < lead ? r->ndim : lead;
    for (int64_t i = 0; i < upto; i++)
        if (r->shape[i] != x->shape[i])
            return rn_reject(c, 1, "%s and %s %s and %s: The shape of input %s must be the same as the shape consisting "
                             "of the first %lld axes of input %s", nr, nx, RN_SHAPES(r, x), nr, (long long)upto, nx);
    for (int64_t i = upto; i < lead; i++)
        if (x->shape[i] != 1)
            return rn_reject(c, 1, "%s %s: The %lldth axis of input %s must be 1", nx, shp(x, b1, sizeof b1), (long long)i,
                             nx);
    for (int64_t i = 0; i < g->ndim; i++) {
        if (g->shape[i] != dy->shape[lead + i])
            return rn_reject(c, 1, "%s and %s %s and %s: The shape of input %s must be the same as the shape consisting "
                             "of the last %lld axes of input %s", ng, ndy, RN_SHAPES(g, dy), ng, (long long)g->ndim, ndy);
        if (dg->shape[i] != dy->shape[lead + i])
            return rn_reject(c, 1, "%s and %s %s and %s: The shape of output %s must be the same as the shape consisting "
                             "of the last %lld axes of input %s", ndg, ndy, RN_SHAPES(dg, dy), ndg, (long long)g->ndim, ndy);
    }
    rn_rows(x, g, p);
    if ((rc = rn_rstd_count(c, 1, nr, r, p->rows, 0))) return rc;
    rn_common(p, 0, x->dtype);
    return ACLNN_SUCCESS;
}

/* rn_gemma: GemmaRmsNorm's gamma + 1 (after rn_plan). */
aclnnStatus opc_rn_gemma(op_call *c, const op_step *s) {
    (void)s;
    if (c->params_size == sizeof(rn_params) && !c->made) ((rn_params *)c->params)->gemma = 1;
    return ACLNN_SUCCESS;
}

/* ---- AddRmsNorm's op_api checks ------------------------------------------------------------------ */

enum { ARN_ADD = 0, ARN_PRE = 1, ARN_POST = 2 };

/* A standard step on operands k... of s (indexes into s's operands; -1 ends), with list l and integer n. */
static aclnnStatus arn_run(op_call *c, const op_step *s, op_step_fn fn, const op_dtype_list *l, int64_t n,
                           const int *ks) {
    op_step t = {fn, "", {0}, 0, n, 1, l, NULL, NULL};
    for (; *ks >= 0; ks++) t.p[t.np++] = s->p[*ks];
    return fn(c, &t);
}
#define ARN_RUN(fn, l, n, ...) arn_run(c, s, fn, l, n, (const int[]){__VA_ARGS__, -1})

static const aclDataType ARN_B16[] = {ACL_FLOAT16, ACL_BF16};
static const op_dtype_list ARN_EXT = {"ARN_EXT", {{ARN_B16, 2}, {ARN_B16, 2}, {ARN_B16, 2}}};

/* arn_check x1 x2 gamma y rstd xOut LIST: CheckParams -- the mode from which of rstdOut and xOut are NULL
 * (both: PostRmsNorm, rstdOut only: PreRmsNorm), CheckNotNull, CheckDtypeValid (LIST; FLOAT16 and BF16 in the
 * Pre / Post modes), CheckShapeDim, in the op_api's order. */
aclnnStatus opc_arn_check(op_call *c, const op_step *s) {
    enum { X1, X2, G, Y, R, XO };
    int has_r = op_tensor(c, s, R)->present, has_xo = op_tensor(c, s, XO)->present;
    int mode = has_r ? ARN_ADD : has_xo ? ARN_PRE : ARN_POST;
    aclnnStatus rc;
    if (mode == ARN_ADD && !has_xo) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, c->api, "%s is NULL", op_pname(c, s, XO));
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    const op_dtype_list *l = mode == ARN_ADD ? s->list : &ARN_EXT;
    static const aclDataType F32[] = {ACL_FLOAT};
    static const op_dtype_list FP32 = {"FP32", {{F32, 1}, {F32, 1}, {F32, 1}}};
    if ((rc = ARN_RUN(opc_dtype_supported, l, 0, X1, X2, G)) || (rc = ARN_RUN(opc_dtype_same, NULL, 0, X1, X2)) ||
        (rc = ARN_RUN(opc_dtype_same, NULL, 0, X1, G)) || (rc = ARN_RUN(opc_dtype_supported, l, 0, Y)) ||
        (rc = ARN_RUN(opc_dtype_same, NULL, 0, Y, X1)))
        return rc;
    if (mode != ARN_POST && ((rc = ARN_RUN(opc_dtype_supported, l, 0, XO)) || (rc = ARN_RUN(opc_dtype_same, NULL, 0, XO, Y))))
        return rc;
    if (mode == ARN_ADD && (rc = ARN_RUN(opc_dtype_supported, &FP32, 0, R))) return rc;
    if ((rc = ARN_RUN(opc_dim_at_most, NULL, 8, X1, X2, G)) || (rc = ARN_RUN(opc_dim_at_least, NULL, 1, X1, X2, G)) ||
        (rc = ARN_RUN(opc_shape_equal, NULL, 0, X1, X2)) || (rc = ARN_RUN(opc_dim_at_most, NULL, 8, Y)) ||
        (rc = ARN_RUN(opc_shape_equal, NULL, 0, X1, Y)))
        return rc;
    if (mode == ARN_ADD && ((rc = ARN_RUN(opc_dim_at_most, NULL, 8, R, XO)) || (rc = ARN_RUN(opc_shape_equal, NULL, 0, X1, XO))))
        return rc;
    if (mode == ARN_PRE && ((rc = ARN_RUN(opc_dim_at_most, NULL, 2, G)) || (rc = ARN_RUN(opc_dim_at_most, NULL, 8, XO)) ||
                            (rc = ARN_RUN(opc_shape_equal, NULL, 0, X1, XO))))
        return rc;
    if (mode == ARN_POST && (rc = ARN_RUN(opc_dim_at_most, NULL, 2, G))) return rc;
    return ACLNN_SUCCESS;
}

/* arn_empty x1 gamma: the op_api's early success on an empty x1 or gamma (nothing computed or written). */
aclnnStatus opc_arn_empty(op_call *c, const op_step *s) {
    if (pyaclnn_stub_numel(op_tensor(c, s, 0)) == 0 || pyaclnn_stub_numel(op_tensor(c, s, 1)) == 0) c->nothing = c->done = 1;
    return ACLNN_SUCCESS;
}
