/*
 * p-norm distances and the cross product (distance.toml): aclnnCdist, aclnnCdistBackward, aclnnPdist (hicann/ops-math
 * math/{cdist,cdist_grad,pdist}) and aclnnLinalgCross (math/cross). Steps and kernels.
 *
 * Distances (class c): the NPU's kernels work in fp32 (fp16/bf16 widened) in unpublished orders; here every
 * difference is an fp32 subtraction, the p-th powers are summed in double and the root taken in double, rounded once
 * to fp32 and then to the dtype. p = 0 counts the non-zero differences, p = inf takes the largest |difference|
 * (Atlas A2's op_api passes inf as -1 to its kernel; both mean inf here).
 * The backward is torch's _cdist_backward formula in double on the fp32 differences, summed over the other rows in order, rounded once:
 *   p 0: 0; p 1: sign(d); p < 2: sign(d) |d|^(p-1) / dist^(p-1) (0 where dist == 0, or d == 0 with p < 1);
 *   p 2: d / dist; p inf: sign(d) where |d| >= dist (op-plugin's reference: a cdist rounded to fp16 still selects
 *   the largest differences); otherwise d |d|^(p-2) / dist^(p-1); each times grad.
 * Cross (class b where the vendor's kernel is SIMT code: Ascend 950's fp32 a1*b2 - a2*b1 per component, rounded to
 * the dtype; integers wrap, DOUBLE in double as its AI CPU kernel).
 */
#include <math.h>
#include <stdlib.h>

#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"

typedef struct {
    int64_t bshape[PYACLNN_STUB_MAX_DIMS];   /* broadcast batch dims                      */
    int bndim;
    int64_t r1, r2, m;
    double p;                                /* INFINITY for inf (and Atlas A2's -1)       */
} dist_params;

static double p_value(double p) { return p == -1.0 ? INFINITY : p; }

/* The p-norm of the fp32 differences of two rows of m floats (strides 1). */
static double row_dist(const float *a, const float *b, int64_t m, double p) {
    double acc = 0.0;
    for (int64_t k = 0; k < m; k++) {
        double d = fabs((double)(a[k] - b[k]));
        if (p == 0.0) acc += d != 0.0;
        else if (isinf(p)) acc = d > acc || isnan(d) ? d : acc;
        else if (p == 1.0) acc += d;
        else if (p == 2.0) acc += d * d;
        else acc += pow(d, p);
    }
    if (p == 0.0 || p == 1.0 || isinf(p)) return acc;
    return p == 2.0 ? sqrt(acc) : pow(acc, 1.0 / p);
}

/* The batch offset (in matrices) of operand t (ndim dims, two of them its matrix) at broadcast batch index bi. */
static int64_t batch_index(const pyaclnn_stub_tensor *t, const dist_params *q, int64_t bi) {
    int64_t tb = t->ndim - 2, idx = 0, mul = 1;
    for (int d = q->bndim - 1; d >= 0; d--) {
        int64_t i = bi % q->bshape[d];
        bi /= q->bshape[d];
        int64_t td = d - (q->bndim - tb);
        if (td < 0) continue;
        if (t->shape[td] != 1) idx += i * mul;
        mul *= t->shape[td];
    }
    return idx;
}

static int64_t batch_count(const dist_params *q) {
    int64_t n = 1;
    for (int d = 0; d < q->bndim; d++) n *= q->bshape[d];
    return n;
}

/* ---- Cdist -------------------------------------------------------------------------------------------- */

/* cdist_plan x1 x2 p compute_mode out: aclnn_cdist.cpp's last-dim check, CheckParamsLogic, the empty-batch return,
 * the batch broadcast; (emulator) out is [batch..., r1, r2]. */
aclnnStatus opc_cdist_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x1 = op_tensor(c, s, 0), *x2 = op_tensor(c, s, 1), *out = op_tensor(c, s, 4);
    double p = op_argument(c, s, 2)->d;
    int64_t mode = op_argument(c, s, 3)->i;
    char a[200], b[200];
    if (x1->shape[x1->ndim - 1] != x2->shape[x2->ndim - 1])
        return op_invalidf(c->api, "The dim num of X1 and X2 must be the same. X1 got: %lld, X2 got: %lld.",
                           (long long)x1->shape[x1->ndim - 1], (long long)x2->shape[x2->ndim - 1]);
    if (p < 0 || isnan(p)) return op_invalidf(c->api, "cdist only supports non-negative p values.");
    if (fabs(p - 2.0) < 1e-6 && mode != 2)
        return op_invalidf(c->api, "compute_mode %lld is not supported, only support 2 when pValue equals 2.0",
                           (long long)mode);
    for (int k = 0; k < 2; k++) {
        const pyaclnn_stub_tensor *t = k ? x2 : x1;
        for (int64_t d = 0; d < t->ndim - 1; d++)
            if (t->shape[d] == 0) {
                c->nothing = 1;
                return ACLNN_SUCCESS;
            }
    }
    dist_params *q = op_params(c, sizeof *q);
    int64_t maxr = x1->ndim > x2->ndim ? x1->ndim : x2->ndim, shape[PYACLNN_STUB_MAX_DIMS];
    q->bndim = (int)(maxr - 2);
    for (int64_t i = 0; i < maxr - 2; i++) {
        int64_t i1 = i - (maxr - x1->ndim), i2 = i - (maxr - x2->ndim);
        int64_t d1 = i1 >= 0 ? x1->shape[i1] : 1, d2 = i2 >= 0 ? x2->shape[i2] : 1;
        if (d1 != d2 && d1 != 1 && d2 != 1)
            return op_invalidf(c->api, "X1 shape: %s and X2 shape: %s cannot broadcast!",
                               tv_shape_text(x1->shape, x1->ndim, a, sizeof a), tv_shape_text(x2->shape, x2->ndim, b, sizeof b));
        q->bshape[i] = shape[i] = d1 > d2 ? d1 : d2;
    }
    q->r1 = x1->shape[x1->ndim - 2];
    q->r2 = x2->shape[x2->ndim - 2];
    q->m = x1->shape[x1->ndim - 1];
    q->p = p_value(p);
    shape[maxr - 2] = q->r1;
    shape[maxr - 1] = q->r2;
    return op_expected_size(c->api, op_pname(c, s, 4), out, shape, maxr);
}

/* Both operands as fp32 [batch, rows, m] blocks of the broadcast batch. */
static int load_pair(const pyaclnn_stub_tensor *x1, const pyaclnn_stub_tensor *x2, const dist_params *q, float **a,
                     float **b) {
    *a = tv_load_float(x1);
    *b = tv_load_float(x2);
    return *a && *b;
}

void cdist_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const dist_params *q = launch->params;
    const pyaclnn_stub_tensor *x1 = &launch->inputs[0], *x2 = &launch->inputs[1], *out = &launch->outputs[0];
    int64_t nb = batch_count(q), r1 = q->r1, r2 = q->r2, m = q->m;
    float *A, *B, *D = tv_alloc(nb * r1 * r2, sizeof(float));
    if (!load_pair(x1, x2, q, &A, &B) || D == NULL) {
        tv_fail_oom(launch);
    } else {
        for (int64_t bi = 0; bi < nb; bi++) {
            const float *a = A + batch_index(x1, q, bi) * r1 * m, *b = B + batch_index(x2, q, bi) * r2 * m;
            for (int64_t i = 0; i < r1; i++)
                for (int64_t j = 0; j < r2; j++) D[(bi * r1 + i) * r2 + j] = (float)row_dist(a + i * m, b + j * m, m, q->p);
        }
        tv_store_float(out, D);
    }
    free(A);
    free(B);
    free(D);
}

/* ---- CdistBackward ------------------------------------------------------------------------------------ */

/* cdist_grad_plan grad x1 x2 cdist p out: aclnn_cdist_backward.cpp's CheckShape (cdist is [.., r1, r2] of the
 * broadcast of x1 and x2, grad has cdist's shape, out x1's) and its p check; empty tensors launch nothing. */
aclnnStatus opc_cdist_grad_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *grad = op_tensor(c, s, 0), *x1 = op_tensor(c, s, 1), *x2 = op_tensor(c, s, 2);
    const pyaclnn_stub_tensor *cd = op_tensor(c, s, 3), *out = op_tensor(c, s, 5);
    double p = op_argument(c, s, 4)->d;
    int64_t n = grad->ndim, bshape[PYACLNN_STUB_MAX_DIMS + 1];
    char a[200], b[200];
    for (int64_t d = 0; d < n + 1; d++) {   /* [.., r1, 1, m] with [.., 1, r2, m] */
        int64_t u = d < n - 2 ? x1->shape[d] : d == n - 2 ? x1->shape[n - 2] : d == n - 1 ? 1 : x1->shape[n - 1];
        int64_t v = d < n - 2 ? x2->shape[d] : d == n - 2 ? 1 : d == n - 1 ? x2->shape[n - 2] : x2->shape[n - 1];
        if (u != v && u != 1 && v != 1)
            return op_invalidf(c->api, "Broadcast %s and %s failed.", tv_shape_text(x2->shape, x2->ndim, a, sizeof a),
                               tv_shape_text(x1->shape, x1->ndim, b, sizeof b));
        bshape[d] = u == 1 ? v : u;
    }
    for (int64_t d = 0; d < n; d++)
        if (cd->shape[d] != bshape[d])
            return op_invalidf(c->api, "cdist[%lld] : %lld should be equal to %lld .", (long long)d,
                               (long long)cd->shape[d], (long long)bshape[d]);
    static const char *const pair[2][2] = {{"cdist", "grad"}, {"out", "x1"}};
    const pyaclnn_stub_tensor *ts[2][2] = {{cd, grad}, {out, x1}};
    for (int k = 0; k < 2; k++) {
        const pyaclnn_stub_tensor *u = ts[k][0], *v = ts[k][1];
        int same = u->ndim == v->ndim;
        for (int64_t d = 0; same && d < u->ndim; d++) same = u->shape[d] == v->shape[d];
        if (!same)
            return op_invalidf(c->api, "Expected tensor for %s to have same size as tensor for %s, but %s does not "
                               "equal %s.", pair[k][0], pair[k][1], tv_shape_text(u->shape, u->ndim, a, sizeof a),
                               tv_shape_text(v->shape, v->ndim, b, sizeof b));
    }
    if (p != -1.0 && p < 0.0) return op_invalidf(c->api, "aclnnCdistBackward only supports non-negative p values.");
    if (pyaclnn_stub_numel(grad) == 0 || pyaclnn_stub_numel(x1) == 0 || pyaclnn_stub_numel(x2) == 0 ||
        pyaclnn_stub_numel(cd) == 0) {
        c->nothing = 1;
        return ACLNN_SUCCESS;
    }
    dist_params *q = op_params(c, sizeof *q);
    q->bndim = (int)(n - 2);
    for (int64_t d = 0; d < n - 2; d++) q->bshape[d] = bshape[d];
    q->r1 = x1->shape[n - 2];
    q->r2 = x2->shape[n - 2];
    q->m = x1->shape[n - 1];
    q->p = p_value(p);
    return ACLNN_SUCCESS;
}

/* d(dist)/d(x1 element) for one difference d = x1 - x2 and the pair's distance (torch's _cdist_backward). */
static double dist_grad(double d, double dist, double p) {
    double sg = (d > 0) - (d < 0);
    if (p == 0.0) return 0.0;
    if (p == 1.0) return sg;
    if (isinf(p)) return fabs(d) >= dist ? sg : 0.0;   /* >=: a rounded (fp16) cdist still selects its maxima */
    if (dist == 0.0) return 0.0;
    if (p == 2.0) return d / dist;
    if (p < 2.0) return d == 0.0 && p < 1.0 ? 0.0 : sg * pow(fabs(d), p - 1.0) / pow(dist, p - 1.0);
    return d * pow(fabs(d), p - 2.0) / pow(dist, p - 1.0);
}

void cdist_grad_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const dist_params *q = launch->params;
    const pyaclnn_stub_tensor *g = &launch->inputs[0], *x1 = &launch->inputs[1], *x2 = &launch->inputs[2];
    const pyaclnn_stub_tensor *cd = &launch->inputs[3], *out = &launch->outputs[0];
    int64_t nb = batch_count(q), r1 = q->r1, r2 = q->r2, m = q->m, n1 = pyaclnn_stub_numel(x1);
    float *A, *B, *G = tv_load_float(g), *C = tv_load_float(cd);
    double *acc = tv_alloc(n1, sizeof(double));
    if (!load_pair(x1, x2, q, &A, &B) || G == NULL || C == NULL || acc == NULL) {
        tv_fail_oom(launch);
    } else {
        for (int64_t i = 0; i < n1; i++) acc[i] = 0.0;
        for (int64_t bi = 0; bi < nb; bi++) {
            int64_t o1 = batch_index(x1, q, bi) * r1 * m;
            const float *a = A + o1, *b = B + batch_index(x2, q, bi) * r2 * m;
            for (int64_t i = 0; i < r1; i++)
                for (int64_t j = 0; j < r2; j++) {
                    double gv = G[(bi * r1 + i) * r2 + j], dist = C[(bi * r1 + i) * r2 + j];
                    for (int64_t k = 0; k < m; k++)
                        acc[o1 + i * m + k] += gv * dist_grad((double)(a[i * m + k] - b[j * m + k]), dist, q->p);
                }
        }
        tv_store_double(out, acc);
    }
    free(A);
    free(B);
    free(G);
    free(C);
    free(acc);
}

/* ---- Pdist -------------------------------------------------------------------------------------------- */

/* pdist_plan self p out: aclnn_pdist.cpp's CheckParamsLogic (self 2-D, out 1-D of n (n - 1) / 2, p >= 0); n <= 1
 * launches nothing, m == 0 fills zeros. */
aclnnStatus opc_pdist_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0), *out = op_tensor(c, s, 2);
    double p = op_argument(c, s, 1)->d;
    static const int64_t want_dims[2] = {2, 1};
    for (int k = 0; k < 2; k++) {
        const pyaclnn_stub_tensor *t = k ? out : self;
        if (t->ndim != want_dims[k])
            return op_invalidf(c->api, "%s dim should be %lld, but got %lld.", op_pname(c, s, k ? 2 : 0),
                               (long long)want_dims[k], (long long)t->ndim);
    }
    int64_t n = self->shape[0], pairs = n * (n - 1) / 2;
    aclnnStatus rc = op_expected_size(c->api, op_pname(c, s, 2), out, &pairs, 1);
    if (rc) return rc;
    if (p < 0 || isnan(p)) return op_invalidf(c->api, "pdist only supports non-negative p values.");
    if (n <= 1) {
        c->nothing = 1;
        return ACLNN_SUCCESS;
    }
    dist_params *q = op_params(c, sizeof *q);
    q->bndim = 0;
    q->r1 = q->r2 = n;
    q->m = self->shape[1];
    q->p = p;
    return ACLNN_SUCCESS;
}

void pdist_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const dist_params *q = launch->params;
    const pyaclnn_stub_tensor *self = &launch->inputs[0], *out = &launch->outputs[0];
    int64_t n = q->r1, m = q->m;
    float *A = tv_load_float(self), *D = tv_alloc(n * (n - 1) / 2, sizeof(float));
    if (A == NULL || D == NULL) {
        tv_fail_oom(launch);
    } else {
        int64_t o = 0;
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = i + 1; j < n; j++) D[o++] = (float)row_dist(A + i * m, A + j * m, m, q->p);
        tv_store_float(out, D);
    }
    free(A);
    free(D);
}

/* ---- LinalgCross -------------------------------------------------------------------------------------- */

typedef struct {
    int64_t dim;           /* of the broadcast shape (out's) */
} cross_params;

/* cross_plan self other dim out: aclnn_linalg_cross.cpp's CheckBroadcastShape (OP_CHECK_BROADCAST, then out is the
 * broadcast shape), CheckDim, the empty-out return, the size-3 check of the dimension of the broadcast shape (its
 * message's dim as the op_api words it). */
aclnnStatus opc_cross_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0), *other = op_tensor(c, s, 1), *out = op_tensor(c, s, 3);
    int64_t dim = op_argument(c, s, 2)->i, shape[PYACLNN_STUB_MAX_DIMS], ndim;
    char a[200], b[200];
    aclnnStatus rc = ew_broadcast(c->api, op_pname(c, s, 0), self, op_pname(c, s, 1), other, shape, &ndim);
    if (rc) return rc;
    int same = out->ndim == ndim;
    for (int64_t d = 0; same && d < ndim; d++) same = out->shape[d] == shape[d];
    if (!same)
        return op_invalidf(c->api, "expected consistent tensor shape for the broadcast shape and out, but got %s and %s "
                           "respectively.", tv_shape_text(shape, ndim, a, sizeof a),
                           tv_shape_text(out->shape, out->ndim, b, sizeof b));
    int64_t n = self->ndim;
    if (dim >= n || dim < -n)
        return op_invalidf(c->api, "Dimension out of range(expected to be in range of [%lld, %lld], but got %lld.",
                           (long long)-n, (long long)(n - 1), (long long)dim);
    if (pyaclnn_stub_numel(out) == 0) {
        c->nothing = 1;
        return ACLNN_SUCCESS;
    }
    int64_t inner = dim;
    if (inner >= 0 && self->ndim < other->ndim) inner += other->ndim - self->ndim;
    if (inner < 0) inner += ndim;
    if (shape[inner] != 3)
        return op_invalidf(c->api, "dimension %lld does not have size 3.", (long long)(dim < 0 ? dim : inner));
    cross_params *q = op_params(c, sizeof *q);
    q->dim = inner;
    return ACLNN_SUCCESS;
}

void cross_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const cross_params *q = launch->params;
    const pyaclnn_stub_tensor *x = &launch->inputs[0], *y = &launch->inputs[1], *out = &launch->outputs[0];
    int64_t nd = out->ndim, sx[PYACLNN_STUB_MAX_DIMS], sy[PYACLNN_STUB_MAX_DIMS], idx[PYACLNN_STUB_MAX_DIMS] = {0};
    tv_broadcast_strides(x, nd, sx);
    tv_broadcast_strides(y, nd, sy);
    aclDataType dt = out->dtype;
    int64_t total = pyaclnn_stub_numel(out) / 3;
    for (int64_t v = 0; v < total; v++) {
        /* idx walks every dim but q->dim (kept 0) */
        int64_t ox = x->offset, oy = y->offset, oo = out->offset;
        for (int64_t d = 0; d < nd; d++) {
            ox += idx[d] * sx[d];
            oy += idx[d] * sy[d];
            oo += idx[d] * out->strides[d];
        }
        ew_value a[3], b[3];
        for (int k = 0; k < 3; k++) {
            a[k] = ew_load(tv_at(x, ox + k * sx[q->dim]), dt);
            b[k] = ew_load(tv_at(y, oy + k * sy[q->dim]), dt);
        }
        for (int k = 0; k < 3; k++) {
            int u = (k + 1) % 3, w = (k + 2) % 3;
            ew_value r;
            if (dt == ACL_DOUBLE) {
                r = (ew_value){a[u].f * b[w].f - a[w].f * b[u].f, 0};
            } else if (ew_repr_of(dt) == EW_REPR_F) {   /* fp32 products and difference */
                float p1 = (float)a[u].f * (float)b[w].f, p2 = (float)a[w].f * (float)b[u].f;
                r = ew_cast((ew_value){(double)(p1 - p2), 0}, ACL_FLOAT, dt);
            } else {
                uint64_t p1 = (uint64_t)a[u].i * (uint64_t)b[w].i, p2 = (uint64_t)a[w].i * (uint64_t)b[u].i;
                r = ew_cast((ew_value){0, (int64_t)(p1 - p2)}, ACL_INT64, dt);
            }
            ew_store(tv_at(out, oo + k * out->strides[q->dim]), dt, r);
        }
        for (int64_t d = nd - 1; d >= 0; d--) {
            if (d == q->dim) continue;
            if (++idx[d] < out->shape[d]) break;
            idx[d] = 0;
        }
    }
}

/* cdist_grad_dtypes grad x1 x2 cdist out: all five of grad's dtype. */
aclnnStatus opc_cdist_grad_dtypes(op_call *c, const op_step *s) {
    for (int k = 1; k < 5; k++)
        if (op_tensor(c, s, k)->dtype != op_tensor(c, s, 0)->dtype)
            return op_invalidf(c->api, "All tensors are expected to share the same datatype.");
    return ACLNN_SUCCESS;
}

/* cdist_grad_dims grad x1 x2 cdist out: all five of grad's rank. */
aclnnStatus opc_cdist_grad_dims(op_call *c, const op_step *s) {
    for (int k = 1; k < 5; k++)
        if (op_tensor(c, s, k)->ndim != op_tensor(c, s, 0)->ndim)
            return op_invalidf(c->api, "All tensors are expected to share the same dim num.");
    return ACLNN_SUCCESS;
}
