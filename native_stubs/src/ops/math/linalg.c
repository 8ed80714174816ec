/*
 * Dense linear algebra (linalg.toml): aclnnTriangularSolve, aclnnInverse, aclnnSlogdet, aclnnLinalgQr, aclnnSvd.
 * The vendor runs them on the AI CPU (their l0 ops are AI CPU tasks; the kernels are not published in
 * hicann/ops-math or ops-nn), so the arithmetic cannot follow the vendor's steps: every matrix is widened to double
 * and decomposed with a textbook algorithm written here, because no maintained linear-algebra library (LAPACK,
 * Eigen) is linked into the stub today; results are rounded once to the outputs' dtypes. Class c, measured against
 * numpy.linalg (LAPACK) in float64 in tests/test_linalg.py:
 *   TriangularSolve: substitution (forward / backward) per column; FLOAT in fp32, each product, difference and
 *     quotient rounded (the AI CPU kernel computes in the dtype: on op-plugin's ill-conditioned fp32 cases a double
 *     solve rounded once missed torch CPU's fp32 result in 1 of 600 draws, this order in none);
 *   Inverse: Gauss-Jordan elimination with partial pivoting;
 *   Slogdet: LU with partial pivoting, sign = (-1)^swaps * prod sign(u_ii), log = sum log |u_ii| (singular: 0, -inf);
 *   LinalgQr: Householder QR with LAPACK's dlarfg convention (beta = -sign(alpha) * norm, no reflection when the
 *     column below the diagonal is already 0), so Q and R carry LAPACK's (and torch CPU's) signs;
 *   Svd: one-sided Jacobi on the columns (of A, or of A^T when m < n), singular values sorted descending; a full U
 *     (or V) is completed with Gram-Schmidt against the unit vectors. Singular vectors are unique up to sign (and
 *     rotation within repeated values): each pair is signed so that the largest-magnitude component of the right
 *     singular vector of the matrix decomposed (A, or A^T) is positive (the vendor's convention is not published).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"

typedef struct {
    int64_t bshape[PYACLNN_STUB_MAX_DIMS];   /* batch dims of the outputs                          */
    int bndim;
    int64_t m, n;                            /* the matrix operand's rows and columns               */
    int flag[3];                             /* per operator: upper / transpose / unit; mode; full / uv */
} la_params;

static int64_t la_batch(const la_params *p) {
    int64_t b = 1;
    for (int d = 0; d < p->bndim; d++) b *= p->bshape[d];
    return b;
}

/* t's elements as doubles, read as a view of the broadcast shape[0..nd) (t's dims align right). */
static double *la_load(const pyaclnn_stub_tensor *t, const int64_t *shape, int64_t nd) {
    int64_t st[PYACLNN_STUB_MAX_DIMS], idx[PYACLNN_STUB_MAX_DIMS] = {0}, n = 1;
    for (int64_t d = 0; d < nd; d++) n *= shape[d];
    double *v = tv_alloc(n, sizeof(double));
    if (v == NULL) return NULL;
    tv_broadcast_strides(t, nd, st);
    for (int64_t i = 0; i < n; i++) {
        int64_t off = t->offset;
        for (int64_t d = 0; d < nd; d++) off += idx[d] * st[d];
        ew_value e = ew_load(tv_at(t, off), t->dtype);
        v[i] = t->dtype == ACL_FLOAT16 ? (double)(float)e.f : e.f;   /* FLOAT16: the op_api's Cast to FLOAT */
        for (int64_t d = nd - 1; d >= 0; d--) {
            if (++idx[d] < shape[d]) break;
            idx[d] = 0;
        }
    }
    return v;
}

/* The batch shape plus two matrix dims. */
static int64_t la_shape(const la_params *p, int64_t r, int64_t c, int64_t *shape) {
    for (int d = 0; d < p->bndim; d++) shape[d] = p->bshape[d];
    shape[p->bndim] = r;
    shape[p->bndim + 1] = c;
    return p->bndim + 2;
}

static void la_batch_of(la_params *p, const pyaclnn_stub_tensor *t) {
    p->bndim = (int)(t->ndim - 2);
    for (int64_t d = 0; d < t->ndim - 2; d++) p->bshape[d] = t->shape[d];
    p->m = t->shape[t->ndim - 2];
    p->n = t->shape[t->ndim - 1];
}

/* ---- TriangularSolve ---------------------------------------------------------------------------------- */

/* ts_plan self A upper transpose unitriangular xOut mOut: aclnn_triangular_solve.cpp's CheckShape from A's squareness
 * on, the empty return, unitriangular only for FLOAT (CalcuUnitriangular). */
aclnnStatus opc_ts_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *b = op_tensor(c, s, 0), *a = op_tensor(c, s, 1), *x = op_tensor(c, s, 5);
    const pyaclnn_stub_tensor *mo = op_tensor(c, s, 6);
    int64_t ah = a->shape[a->ndim - 2], aw = a->shape[a->ndim - 1], bh = b->shape[b->ndim - 2], bw = b->shape[b->ndim - 1];
    if (ah != aw) return op_invalidf(c->api, "A must be batchs of square matrices, but they are %lld by %lld matrices.",
                                     (long long)ah, (long long)aw);
    if (bh != ah)
        return op_invalidf(c->api, "Incompatible matrix sizes for triangular_solve: each A matrix is %lld by %lld "
                           "but each b matrix is %lld by %lld.", (long long)ah, (long long)aw, (long long)bh, (long long)bw);
    pyaclnn_stub_tensor tb = *b;
    tb.shape[b->ndim - 1] = bh;
    int64_t shape[PYACLNN_STUB_MAX_DIMS], nd = a->ndim > tb.ndim ? a->ndim : tb.ndim;
    for (int64_t d = 0; d < nd; d++) {   /* BroadcastInferShape(A, b with its last dim m) */
        int64_t da = d - (nd - a->ndim), db = d - (nd - tb.ndim);
        int64_t u = da >= 0 ? a->shape[da] : 1, v = db >= 0 ? tb.shape[db] : 1;
        if (u != v && u != 1 && v != 1)
            return op_invalidf(c->api, "Broadcast fail, the size of tensor a must match the size of tensor b at "
                               "non-singleton diemnsion.");
        shape[d] = u == 1 ? v : u;
    }
    int64_t xs[PYACLNN_STUB_MAX_DIMS];
    memcpy(xs, shape, sizeof xs);
    xs[nd - 1] = bw;
    aclnnStatus rc = op_expected_size(c->api, op_pname(c, s, 5), x, xs, nd);
    if (rc) return rc;
    if (mo->present) {
        if (mo->ndim < 2) return op_invalidf(c->api, "The %s tensor must have at least 2 dimensions.", op_pname(c, s, 6));
        if (mo->ndim > 8) return op_invalidf(c->api, "The %s tensor cannot be larger than 8 dimensions.", op_pname(c, s, 6));
        if ((rc = op_expected_size(c->api, op_pname(c, s, 6), mo, shape, nd))) return rc;
    }
    if (pyaclnn_stub_numel(a) == 0 || pyaclnn_stub_numel(b) == 0) {
        c->nothing = c->done = 1;
        return ACLNN_SUCCESS;
    }
    int unit = op_argument(c, s, 4)->i != 0;
    if (unit && a->dtype != ACL_FLOAT) return op_invalidf(c->api, "unitriangular mode only support float.");
    la_params *p = op_params(c, sizeof *p);
    la_batch_of(p, x);
    p->flag[0] = op_argument(c, s, 2)->i != 0;
    p->flag[1] = op_argument(c, s, 3)->i != 0;
    p->flag[2] = unit;
    return ACLNN_SUCCESS;
}

void ts_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const la_params *p = launch->params;
    const pyaclnn_stub_tensor *b = &launch->inputs[0], *a = &launch->inputs[1], *x = &launch->outputs[0];
    const pyaclnn_stub_tensor *mo = launch->n_outputs > 1 && launch->outputs[1].present ? &launch->outputs[1] : NULL;
    int64_t m = p->m, n = p->n, nb = la_batch(p), as[PYACLNN_STUB_MAX_DIMS], bs[PYACLNN_STUB_MAX_DIMS];
    int64_t nda = la_shape(p, m, m, as), ndb = la_shape(p, m, n, bs);
    double *A = la_load(a, as, nda), *B = la_load(b, bs, ndb);
    if (A == NULL || B == NULL) {
        tv_fail_oom(launch);
        free(A);
        free(B);
        return;
    }
    if (mo) tv_store_double(mo, A);
    int upper = p->flag[0] != p->flag[1];   /* op(A) = A^T swaps the triangle */
    int f32 = x->dtype == ACL_FLOAT;        /* FLOAT: every step an fp32 operation (see the file's comment) */
    for (int64_t bi = 0; bi < nb; bi++) {
        const double *Ab = A + bi * m * m;
        double *Xb = B + bi * m * n;
        for (int64_t j = 0; j < n; j++)
            for (int64_t t = 0; t < m; t++) {
                int64_t i = upper ? m - 1 - t : t;
                double acc = Xb[i * n + j];
                for (int64_t k = upper ? i + 1 : 0; k < (upper ? m : i); k++) {
                    double t = (p->flag[1] ? Ab[k * m + i] : Ab[i * m + k]) * Xb[k * n + j];
                    acc = f32 ? (double)(float)(acc - (double)(float)t) : acc - t;
                }
                acc = p->flag[2] ? acc : acc / Ab[i * m + i];
                Xb[i * n + j] = f32 ? (double)(float)acc : acc;
            }
    }
    tv_store_double(x, B);
    free(A);
    free(B);
}

/* ---- Inverse / Slogdet: LU with partial pivoting ------------------------------------------------------ */

/* In place LU of the n x n matrix a (row-major) with partial pivoting; returns the number of row swaps and puts
 * the permutation in piv (row i of PA is row piv[i] of A). */
static int lu_decompose(double *a, int64_t n, int64_t *piv) {
    int swaps = 0;
    for (int64_t i = 0; i < n; i++) piv[i] = i;
    for (int64_t k = 0; k < n; k++) {
        int64_t r = k;
        for (int64_t i = k + 1; i < n; i++)
            if (fabs(a[i * n + k]) > fabs(a[r * n + k])) r = i;
        if (r != k) {
            for (int64_t j = 0; j < n; j++) {
                double t = a[k * n + j];
                a[k * n + j] = a[r * n + j];
                a[r * n + j] = t;
            }
            int64_t t = piv[k];
            piv[k] = piv[r];
            piv[r] = t;
            swaps++;
        }
        if (a[k * n + k] == 0.0) continue;
        for (int64_t i = k + 1; i < n; i++) {
            double f = a[i * n + k] /= a[k * n + k];
            for (int64_t j = k + 1; j < n; j++) a[i * n + j] -= f * a[k * n + j];
        }
    }
    return swaps;
}

/* inv_plan self out: after the op_api's checks (square matrices unless empty); an empty self launches nothing. */
aclnnStatus opc_inv_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0);
    if (pyaclnn_stub_numel(self) == 0) {
        c->nothing = c->done = 1;
        return ACLNN_SUCCESS;
    }
    if (self->ndim < 2) return op_invalidf(c->api, "The %s tensor must have at least 2 dimensions.", op_pname(c, s, 0));
    int64_t a = self->shape[self->ndim - 1], b = self->shape[self->ndim - 2];
    if (a != b)
        return op_invalidf(c->api, "The input tensor must be batches of square matrices, but they are %lld by %lld "
                           "matrices", (long long)a, (long long)b);
    la_batch_of(op_params(c, sizeof(la_params)), self);
    return ACLNN_SUCCESS;
}

/* Inverse by LU: solves LU x = P e_j for each column j (the Gauss-Jordan result, in that order of operations);
 * a singular matrix gives inf / NaN where its zero pivot divides. */
void inv_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const la_params *p = launch->params;
    const pyaclnn_stub_tensor *self = &launch->inputs[0], *out = &launch->outputs[0];
    int64_t n = p->n, nb = la_batch(p), shape[PYACLNN_STUB_MAX_DIMS], nd = la_shape(p, n, n, shape);
    double *A = la_load(self, shape, nd), *X = tv_alloc(nb * n * n, sizeof(double));
    int64_t *piv = tv_alloc(n, sizeof(int64_t));
    if (A == NULL || X == NULL || piv == NULL) {
        tv_fail_oom(launch);
    } else {
        for (int64_t bi = 0; bi < nb; bi++) {
            double *a = A + bi * n * n, *x = X + bi * n * n;
            lu_decompose(a, n, piv);
            for (int64_t j = 0; j < n; j++) {
                for (int64_t i = 0; i < n; i++) {   /* L y = P e_j */
                    double acc = piv[i] == j ? 1.0 : 0.0;
                    for (int64_t k = 0; k < i; k++) acc -= a[i * n + k] * x[k * n + j];
                    x[i * n + j] = acc;
                }
                for (int64_t i = n - 1; i >= 0; i--) {   /* U x = y */
                    double acc = x[i * n + j];
                    for (int64_t k = i + 1; k < n; k++) acc -= a[i * n + k] * x[k * n + j];
                    x[i * n + j] = acc / a[i * n + i];
                }
            }
        }
        tv_store_double(out, X);
    }
    free(A);
    free(X);
    free(piv);
}

/* slogdet_plan self signOut logOut: the op_api's CheckShape (self at least 2-D and square, the outputs of its batch
 * shape); an empty self launches nothing. */
aclnnStatus opc_slogdet_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0);
    char x[200], y[200];
    if (self->ndim < 2) return op_invalidf(c->api, "The %s tensor must have at least 2 dimensions.", op_pname(c, s, 0));
    int64_t m = self->shape[self->ndim - 2], n = self->shape[self->ndim - 1];
    if (m != n)
        return op_invalidf(c->api, "The last two dimensions of self must be equal, but they are %lld by %lld matrices.",
                           (long long)m, (long long)n);
    for (int k = 1; k <= 2; k++) {
        const pyaclnn_stub_tensor *t = op_tensor(c, s, k);
        int same = t->ndim == self->ndim - 2;
        for (int64_t d = 0; same && d < t->ndim; d++) same = t->shape[d] == self->shape[d];
        if (!same)
            return op_invalidf(c->api, "expect shape of %s is %s, but got %s.", op_pname(c, s, k),
                               tv_shape_text(self->shape, self->ndim - 2, x, sizeof x),
                               tv_shape_text(t->shape, t->ndim, y, sizeof y));
    }
    if (pyaclnn_stub_numel(self) == 0) {
        c->nothing = c->done = 1;
        return ACLNN_SUCCESS;
    }
    la_batch_of(op_params(c, sizeof(la_params)), self);
    return ACLNN_SUCCESS;
}

void slogdet_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const la_params *p = launch->params;
    const pyaclnn_stub_tensor *self = &launch->inputs[0];
    int64_t n = p->n, nb = la_batch(p), shape[PYACLNN_STUB_MAX_DIMS], nd = la_shape(p, n, n, shape);
    double *A = la_load(self, shape, nd), *sg = tv_alloc(nb, sizeof(double)), *lg = tv_alloc(nb, sizeof(double));
    int64_t *piv = tv_alloc(n, sizeof(int64_t));
    if (A == NULL || sg == NULL || lg == NULL || piv == NULL) {
        tv_fail_oom(launch);
    } else {
        for (int64_t bi = 0; bi < nb; bi++) {
            double *a = A + bi * n * n, sign = lu_decompose(a, n, piv) % 2 ? -1.0 : 1.0, logabs = 0.0;
            for (int64_t i = 0; i < n; i++) {
                double u = a[i * n + i];
                sign *= u > 0 ? 1.0 : u < 0 ? -1.0 : 0.0;
                logabs += log(fabs(u));
            }
            sg[bi] = sign;
            lg[bi] = sign == 0.0 ? -INFINITY : logabs;
        }
        tv_store_double(&launch->outputs[0], sg);
        tv_store_double(&launch->outputs[1], lg);
    }
    free(A);
    free(sg);
    free(lg);
    free(piv);
}

/* ---- LinalgQr --------------------------------------------------------------------------------------- */

/* qr_plan self mode Q R: aclnn_linalg_qr.cpp's CheckShape (mode 0 reduced, 1 complete, 2 r: Q [0]); nothing when
 * self and Q are empty. */
aclnnStatus opc_qr_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0), *q = op_tensor(c, s, 2), *r = op_tensor(c, s, 3);
    int64_t mode = op_argument(c, s, 1)->i, nd = self->ndim;
    char x[200], y[200];
    if (nd < 2) return op_invalidf(c->api, "The %s tensor must have at least 2 dimensions.", op_pname(c, s, 0));
    if (nd > 8) return op_invalidf(c->api, "The %s tensor cannot be larger than 8 dimensions.", op_pname(c, s, 0));
    int64_t m = self->shape[nd - 2], n = self->shape[nd - 1], k = m < n ? m : n;
    int64_t qs[PYACLNN_STUB_MAX_DIMS], rs[PYACLNN_STUB_MAX_DIMS], qn = nd;
    memcpy(qs, self->shape, sizeof qs);
    memcpy(rs, self->shape, sizeof rs);
    if (mode == 2) {
        qn = 1;
        qs[0] = 0;
        rs[nd - 2] = k;
    } else if (mode == 1) {
        qs[nd - 1] = m;
    } else {
        qs[nd - 1] = k;
        rs[nd - 2] = k;
    }
    const pyaclnn_stub_tensor *ts[2] = {q, r};
    const int64_t *want[2] = {qs, rs}, wn[2] = {qn, nd};
    for (int t = 0; t < 2; t++) {
        int same = ts[t]->ndim == wn[t];
        for (int64_t d = 0; same && d < wn[t]; d++) same = ts[t]->shape[d] == want[t][d];
        if (!same)
            return op_invalidf(c->api, "The output %s should have the following shape %s, but got %s instead.",
                               t ? "R" : "Q", tv_shape_text(want[t], wn[t], x, sizeof x),
                               tv_shape_text(ts[t]->shape, ts[t]->ndim, y, sizeof y));
    }
    if (pyaclnn_stub_numel(self) == 0 && pyaclnn_stub_numel(q) == 0) {
        c->nothing = c->done = 1;
        return ACLNN_SUCCESS;
    }
    la_params *p = op_params(c, sizeof *p);
    la_batch_of(p, self);
    p->flag[0] = (int)mode;
    return ACLNN_SUCCESS;
}

/* Householder QR of a (m x n, row-major, overwritten by R in its upper triangle) with LAPACK's dlarfg reflectors:
 * v (m entries per reflector, v[j] = 1 at the diagonal) and tau per column j < k. */
static void householder(double *a, int64_t m, int64_t n, double *v, double *tau) {
    int64_t k = m < n ? m : n;
    for (int64_t j = 0; j < k; j++) {
        double alpha = a[j * n + j], xn = 0.0;
        for (int64_t i = j + 1; i < m; i++) xn = hypot(xn, a[i * n + j]);
        double *vj = v + j * m;
        memset(vj, 0, (size_t)m * sizeof *vj);
        vj[j] = 1.0;
        if (xn == 0.0) {   /* H = I */
            tau[j] = 0.0;
            continue;
        }
        double beta = -copysign(hypot(alpha, xn), alpha);
        tau[j] = (beta - alpha) / beta;
        for (int64_t i = j + 1; i < m; i++) vj[i] = a[i * n + j] / (alpha - beta);
        for (int64_t col = j; col < n; col++) {   /* a = (I - tau v v^T) a */
            double d = 0.0;
            for (int64_t i = j; i < m; i++) d += vj[i] * a[i * n + col];
            d *= tau[j];
            for (int64_t i = j; i < m; i++) a[i * n + col] -= d * vj[i];
        }
        for (int64_t i = j + 1; i < m; i++) a[i * n + j] = 0.0;
    }
}

void qr_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const la_params *p = launch->params;
    const pyaclnn_stub_tensor *self = &launch->inputs[0];
    int64_t m = p->m, n = p->n, k = m < n ? m : n, nb = la_batch(p), mode = p->flag[0];
    int64_t qc = mode == 1 ? m : k, rr = mode == 1 ? m : k, shape[PYACLNN_STUB_MAX_DIMS], nd = la_shape(p, m, n, shape);
    double *A = la_load(self, shape, nd), *Q = tv_alloc(nb * m * qc, sizeof(double)), *R = tv_alloc(nb * rr * n, sizeof(double));
    double *v = tv_alloc(k * m, sizeof(double)), *tau = tv_alloc(k, sizeof(double));
    if (A == NULL || Q == NULL || R == NULL || v == NULL || tau == NULL) {
        tv_fail_oom(launch);
    } else {
        for (int64_t bi = 0; bi < nb; bi++) {
            double *a = A + bi * m * n, *q = Q + bi * m * qc, *r = R + bi * rr * n;
            householder(a, m, n, v, tau);
            for (int64_t i = 0; i < rr; i++)
                for (int64_t j = 0; j < n; j++) r[i * n + j] = i < m ? a[i * n + j] : 0.0;
            for (int64_t i = 0; i < m; i++)   /* Q = H_0 ... H_{k-1} applied to the first qc unit columns */
                for (int64_t j = 0; j < qc; j++) q[i * qc + j] = i == j;
            for (int64_t h = k - 1; h >= 0; h--)
                for (int64_t col = 0; col < qc; col++) {
                    const double *vh = v + h * m;
                    double d = 0.0;
                    for (int64_t i = h; i < m; i++) d += vh[i] * q[i * qc + col];
                    d *= tau[h];
                    for (int64_t i = h; i < m; i++) q[i * qc + col] -= d * vh[i];
                }
        }
        if (mode != 2) tv_store_double(&launch->outputs[0], Q);
        tv_store_double(&launch->outputs[1], R);
    }
    free(A);
    free(Q);
    free(R);
    free(v);
    free(tau);
}

/* ---- Svd ------------------------------------------------------------------------------------------- */

/* svd_plan input fullMatrices computeUV sigma u v: aclnn_svd.cpp's CheckShape; an empty input launches nothing. */
aclnnStatus opc_svd_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *in = op_tensor(c, s, 0);
    int full = op_argument(c, s, 1)->i != 0, uv = op_argument(c, s, 2)->i != 0;
    int64_t nd = in->ndim;
    if (nd < 2) return op_invalidf(c->api, "Input dim num should be greater than or equal to 2.");
    if (nd > 8) return op_invalidf(c->api, "Input dim num should be less than or equal to 8.");
    int64_t m = in->shape[nd - 2], n = in->shape[nd - 1], k = m < n ? m : n;
    int64_t want[3][PYACLNN_STUB_MAX_DIMS], wn[3] = {nd - 1, nd, nd};
    for (int t = 0; t < 3; t++) memcpy(want[t], in->shape, sizeof want[t]);
    want[0][nd - 2] = k;
    want[1][nd - 1] = full ? m : k;
    want[2][nd - 2] = n;
    want[2][nd - 1] = full ? n : k;
    static const char *const names[3] = {"sigma", "u", "v"};
    for (int t = 0; t < (uv ? 3 : 1); t++) {
        const pyaclnn_stub_tensor *o = op_tensor(c, s, 3 + t);
        int same = o->ndim == wn[t];
        for (int64_t d = 0; same && d < wn[t]; d++) same = o->shape[d] == want[t][d];
        if (!same) return op_invalidf(c->api, "Shape of output tensor %s is invalid.", names[t]);
    }
    if (pyaclnn_stub_numel(in) == 0) {
        c->nothing = c->done = 1;
        return ACLNN_SUCCESS;
    }
    la_params *p = op_params(c, sizeof *p);
    la_batch_of(p, in);
    p->flag[0] = full;
    p->flag[1] = uv;
    return ACLNN_SUCCESS;
}

/* Completes the first r orthonormal columns of q (rows x cols, row-major) to cols columns: Gram-Schmidt (twice)
 * of the unit vectors e_0, e_1, ... against the columns so far, keeping the first that stays long enough. */
static void complete_basis(double *q, int64_t rows, int64_t cols, int64_t r) {
    double *w = malloc((size_t)rows * sizeof *w + 1);
    if (w == NULL) return;
    for (int64_t col = r, e = 0; col < cols && e < rows; e++) {
        for (int64_t i = 0; i < rows; i++) w[i] = i == e;
        for (int pass = 0; pass < 2; pass++)
            for (int64_t c2 = 0; c2 < col; c2++) {
                double d = 0.0;
                for (int64_t i = 0; i < rows; i++) d += q[i * cols + c2] * w[i];
                for (int64_t i = 0; i < rows; i++) w[i] -= d * q[i * cols + c2];
            }
        double nrm = 0.0;
        for (int64_t i = 0; i < rows; i++) nrm = hypot(nrm, w[i]);
        if (nrm < 1e-8) continue;
        for (int64_t i = 0; i < rows; i++) q[i * cols + col] = w[i] / nrm;
        col++;
    }
    free(w);
}

/* One-sided Jacobi SVD of a (rows x cols, rows >= cols, row-major; overwritten): sigma[cols] descending, u
 * (rows x ucols: the first cols columns a_j / sigma_j, completed when ucols > cols), vt columns in v (cols x cols). */
static void jacobi_svd(double *a, int64_t rows, int64_t cols, double *sigma, double *u, int64_t ucols, double *v,
                       int64_t *order) {
    for (int64_t i = 0; i < cols; i++)
        for (int64_t j = 0; j < cols; j++) v[i * cols + j] = i == j;
    for (int sweep = 0; sweep < 60; sweep++) {
        double off = 0.0;
        for (int64_t p = 0; p < cols - 1; p++)
            for (int64_t q = p + 1; q < cols; q++) {
                double al = 0.0, be = 0.0, ga = 0.0;
                for (int64_t i = 0; i < rows; i++) {
                    double x = a[i * cols + p], y = a[i * cols + q];
                    al += x * x;
                    be += y * y;
                    ga += x * y;
                }
                if (ga == 0.0 || fabs(ga) <= 1e-15 * sqrt(al * be)) continue;
                off = fmax(off, fabs(ga) / sqrt(al * be));
                double zeta = (be - al) / (2.0 * ga);
                double t = copysign(1.0, zeta) / (fabs(zeta) + sqrt(1.0 + zeta * zeta));
                double cs = 1.0 / sqrt(1.0 + t * t), sn = cs * t;
                for (int64_t i = 0; i < rows; i++) {
                    double x = a[i * cols + p], y = a[i * cols + q];
                    a[i * cols + p] = cs * x - sn * y;
                    a[i * cols + q] = sn * x + cs * y;
                }
                for (int64_t i = 0; i < cols; i++) {
                    double x = v[i * cols + p], y = v[i * cols + q];
                    v[i * cols + p] = cs * x - sn * y;
                    v[i * cols + q] = sn * x + cs * y;
                }
            }
        if (off <= 1e-15) break;
    }
    double *nrm = malloc((size_t)cols * sizeof *nrm + 1), *vt = malloc((size_t)(cols * cols) * sizeof *vt + 1);
    if (nrm == NULL || vt == NULL) {
        free(nrm);
        free(vt);
        return;
    }
    for (int64_t j = 0; j < cols; j++) {
        nrm[j] = 0.0;
        for (int64_t i = 0; i < rows; i++) nrm[j] = hypot(nrm[j], a[i * cols + j]);
        order[j] = j;
    }
    for (int64_t i = 1; i < cols; i++)   /* descending, stable */
        for (int64_t j = i; j > 0 && nrm[order[j]] > nrm[order[j - 1]]; j--) {
            int64_t t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    memcpy(vt, v, (size_t)(cols * cols) * sizeof *vt);
    int64_t r = 0;
    for (int64_t j = 0; j < cols; j++) {
        int64_t o = order[j], big = 0;
        sigma[j] = nrm[o];
        for (int64_t i = 0; i < cols; i++)
            if (fabs(vt[i * cols + o]) > fabs(vt[big * cols + o])) big = i;
        double sg = vt[big * cols + o] < 0 ? -1.0 : 1.0;   /* the largest component of each v column positive */
        for (int64_t i = 0; i < cols; i++) v[i * cols + j] = sg * vt[i * cols + o];
        if (nrm[o] > 0.0 && r == j) {
            for (int64_t i = 0; i < rows; i++) u[i * ucols + j] = sg * a[i * cols + o] / nrm[o];
            r++;
        }
    }
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = r; j < ucols; j++) u[i * ucols + j] = 0.0;
    complete_basis(u, rows, ucols, r);
    free(nrm);
    free(vt);
}

void svd_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const la_params *p = launch->params;
    const pyaclnn_stub_tensor *in = &launch->inputs[0];
    int full = p->flag[0], uv = p->flag[1];
    int64_t m = p->m, n = p->n, k = m < n ? m : n, nb = la_batch(p), shape[PYACLNN_STUB_MAX_DIMS];
    int64_t nd = la_shape(p, m, n, shape), uc = full ? m : k, vc = full ? n : k;
    int wide = m < n;   /* decompose A^T = V S U^T */
    int64_t rows = wide ? n : m, cols = k, big_c = wide ? vc : uc;
    double *A = la_load(in, shape, nd), *S = tv_alloc(nb * k, sizeof(double));
    double *U = tv_alloc(nb * m * uc, sizeof(double)), *V = tv_alloc(nb * n * vc, sizeof(double));
    double *w = tv_alloc(rows * cols, sizeof(double)), *bigq = tv_alloc(rows * big_c, sizeof(double));
    double *small = tv_alloc(cols * cols, sizeof(double));
    int64_t *order = tv_alloc(cols, sizeof(int64_t));
    if (!A || !S || !U || !V || !w || !bigq || !small || !order) {
        tv_fail_oom(launch);
    } else {
        for (int64_t bi = 0; bi < nb; bi++) {
            const double *a = A + bi * m * n;
            for (int64_t i = 0; i < rows; i++)
                for (int64_t j = 0; j < cols; j++) w[i * cols + j] = wide ? a[j * n + i] : a[i * n + j];
            jacobi_svd(w, rows, cols, S + bi * k, bigq, big_c, small, order);
            double *u = U + bi * m * uc, *v = V + bi * n * vc;
            double *tall = wide ? v : u, *sq = wide ? u : v;   /* the rows x big_c factor, the k x k one */
            int64_t sqc = wide ? uc : vc;
            memcpy(tall, bigq, (size_t)(rows * big_c) * sizeof *tall);
            for (int64_t i = 0; i < cols; i++)
                for (int64_t j = 0; j < sqc; j++) sq[i * sqc + j] = small[i * cols + j];
        }
        tv_store_double(&launch->outputs[0], S);
        if (uv) {
            tv_store_double(&launch->outputs[1], U);
            tv_store_double(&launch->outputs[2], V);
        }
    }
    free(A), free(S), free(U), free(V), free(w), free(bigq), free(small), free(order);
}
