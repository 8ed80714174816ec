/*
 * aclnnRenorm and aclnnInplaceRenorm: torch.renorm on the NPU (hicann/ops-nn norm/renorm; the arch35 DAG
 * renorm_dag.h, its tiling renorm_tiling_arch35.cpp). Each slice k along dim: its p-norm over the other dims in
 * fp32, factor = min(max(norm, eps), maxNorm) / max(norm, eps) with eps 1e-12 (self is cast to FLOAT first),
 * out = x * factor in fp32, cast to out's dtype. Definitions: renorm.toml.
 */
#include <math.h>
#include <stdlib.h>

#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"

typedef struct {
    int64_t outer, size, inner;  /* self as [outer, size (dim), inner] */
    float p, maxnorm;
} renorm_params;

#define F(v) ((double)(float)(v))

static double slice_norm(const renorm_params *pr, const float *x, int64_t k) {
    float p = pr->p;
    double acc = 0;
    int first = 1;
    for (int64_t o = 0; o < pr->outer; o++)
        for (int64_t i = 0; i < pr->inner; i++) {
            double a = fabs((double)x[(o * pr->size + k) * pr->inner + i]);
            if (isinf(p)) acc = first ? a : (p > 0 ? (a > acc || isnan(a) ? a : acc) : (a < acc || isnan(a) ? a : acc));
            else if (p == 0) acc += a != 0;
            else if (p == 1) acc += a;
            else if (p == 2) acc += F(a * a);
            else if (p == 3) acc += F(F(a * a) * a);
            else acc += F(pow(a, p));
            first = 0;
        }
    acc = F(acc);                                   /* the fp32 ReduceSum / ReduceMax result */
    if (p == 2) return F(sqrt(acc));
    if (p == 0 || p == 1 || isinf(p)) return acc;
    return F(pow(acc, F(1.0f / p)));                /* Power by the tiling's 1 / p */
}

/* inputs: self; output: out */
void renorm_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const renorm_params *pr = launch->params;
    float *x = tv_load_float(&launch->inputs[0]);
    double *y = tv_alloc(pr->outer * pr->size * pr->inner, sizeof(double));
    if (x == NULL || y == NULL) {
        tv_fail_oom(launch);
        goto done;
    }
    for (int64_t k = 0; k < pr->size; k++) {
        float norm = (float)slice_norm(pr, x, k), eps = 1e-12f;
        float hi = norm > eps || isnan(norm) ? norm : eps;                     /* Maxs */
        float lo = hi < pr->maxnorm || isnan(hi) ? hi : pr->maxnorm;           /* Mins */
        float factor = lo / hi;
        for (int64_t o = 0; o < pr->outer; o++)
            for (int64_t i = 0; i < pr->inner; i++) {
                int64_t at = (o * pr->size + k) * pr->inner + i;
                y[at] = F(x[at] * factor);
            }
    }
    tv_store_double(&launch->outputs[0], y);
done:
    free(x), free(y);
}

/* ---- steps ------------------------------------------------------------------------------------ */

#define invalid(c, ...) op_invalidf((c)->api, __VA_ARGS__)

static float to_float(const op_scalar *s) { return (float)ew_value_to_double(s->v, s->dtype); }

/* renorm_format self out (CheckRenormFormat): one view format. */
aclnnStatus opc_renorm_format(op_call *c, const op_step *s) {
    aclFormat a = op_tensor(c, s, 0)->format, b = op_tensor(c, s, 1)->format;
    char x[24], y[24];
    if (a == b) return ACLNN_SUCCESS;
    return invalid(c, "Format of input and output should be equal, self [%s], out [%s].", op_format_name(a, x),
                   op_format_name(b, y));
}

/* renorm_values self p dim maxNorm (CheckValue): p >= 0, dim in [-n, n - 1], maxNorm >= 0 (as floats). */
aclnnStatus opc_renorm_values(op_call *c, const op_step *s) {
    float p = to_float(op_scalar_of(c, s, 1)), mn = to_float(op_scalar_of(c, s, 3));
    int64_t dim = op_argument(c, s, 2)->i, n = op_tensor(c, s, 0)->ndim;
    if (p < 0) return invalid(c, "p only support non-negative values, but now p is [%f].", p);
    if (dim < -n || dim > n - 1)
        return invalid(c, "dim range only support [-dimNum, dimNum - 1], but now dim is [%lld].", (long long)dim);
    if (mn < 0.0f) return invalid(c, "maxNorm should be greater than 0, but now maxNorm is [%f].", mn);
    return ACLNN_SUCCESS;
}

/* renorm_plan self p dim maxNorm: nothing for an empty self, else the geometry. */
aclnnStatus opc_renorm_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0);
    if (pyaclnn_stub_numel(x) == 0) {
        c->nothing = c->done = 1;
        return ACLNN_SUCCESS;
    }
    int64_t dim = op_argument(c, s, 2)->i;
    if (dim < 0) dim += x->ndim;
    renorm_params *p = op_params(c, sizeof(renorm_params));
    p->outer = tv_dims_product(x->shape, 0, dim), p->size = x->shape[dim];
    p->inner = tv_dims_product(x->shape, dim + 1, x->ndim);
    p->p = to_float(op_scalar_of(c, s, 1)), p->maxnorm = to_float(op_scalar_of(c, s, 3));
    return ACLNN_SUCCESS;
}
