/*
 * aclnnGridSampler2D and aclnnGridSampler2DBackward: torch's grid_sampler_2d (F.grid_sample on 4-D inputs) on
 * the NPU (hicann/ops-cv image/grid_sample op_api, the arch35 GridSample SIMT kernel; image/grid_sampler2_d_grad).
 *
 * input [N, C, H, W], grid [N, OH, OW, 2] (x then y, in [-1, 1]), out [N, C, OH, OW]. The kernels are written for
 * 2 or 3 spatial axes (axis 0 = W / x, 1 = H / y, 2 = D / z).
 * Source coordinate of a grid value g on an axis of size S, each step in fp32 (float64 for DOUBLE, the AI CPU
 * kernel): alignCorners (g + 1) / 2 * (S - 1), else ((g + 1) * S - 1) / 2; then the padding mode: border clips to
 * [0, S - 1] (NaN / inf -> 0), reflection reflects about the corners (align) or the edges' outer halves, then clips;
 * a non-finite coordinate becomes -100 (out of range: zero) -- the SIMT kernel's Clip / safeDowngradeToIntRange.
 * Bilinear: the 2^dims corners floor(c) / floor(c) + 1, weight the product of (1 - delta) / delta per axis (outer
 * axis first), out = sum of value * weight in fp32 in corner order (H outer, W inner), corners out of range adding
 * nothing; nearest: the element at rint(c) (round half to even, torch's nearbyint); bicubic (2-D): torch's 4 x 4
 * taps with the cubic convolution coefficients (A = -0.75), each tap's coordinate through the padding mode.
 * Backward: gradInput adds each tap's weight * gradOut in fp32 (gradOut's order: n, then grid point, then c; the
 * NPU's atomic adds have no published order), gradGrid = d(source coordinate)/d(g) * sum over c and taps of
 * value * d(weight)/d(coordinate) * gradOut (torch's grid_sampler_2d_backward formulas), in fp32.
 * Definitions: grid_sampler.toml (the vendor's checks in its order, with the steps below).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"

enum { GS_BILINEAR = 0, GS_NEAREST = 1, GS_BICUBIC = 2 };
enum { GS_ZEROS = 0, GS_BORDER = 1, GS_REFLECTION = 2 };

typedef struct {
    int dims;                /* spatial axes: 2 or 3                                              */
    int interp, pad, align;
    int wide;                /* DOUBLE: float64 steps (AI CPU)                                    */
    int mask[2];             /* backward: gradInput / gradGrid asked for                          */
    int64_t n, ch;
    int64_t in[3], out[3];   /* per axis (0 = W, 1 = H, 2 = D)                                    */
} gs_params;

/* one step rounded as the kernel rounds it (fp32 unless wide: double results of fp32 operands rounded once are
 * the fp32 results of +, -, *, / and the exact floor / fmod) */
static inline double rd(int wide, double v) { return wide ? v : (double)(float)v; }
#define R(v) rd(p->wide, (v))

/* ---- coordinates ------------------------------------------------------------------------------ */

static double clip_coord(const gs_params *p, double c, int64_t size, double *grad) {
    double g = 1.0;
    if (c < 0) c = 0, g = 0;
    if (c > (double)(size - 1)) c = (double)(size - 1), g = 0;
    if (isnan(c) || isinf(c)) c = 0, g = 0;
    (void)p;
    if (grad) *grad *= g;
    return c;
}

static double reflect_coord(const gs_params *p, double c, int64_t twice_lo, int64_t twice_hi, double *grad) {
    if (twice_lo == twice_hi) {
        if (grad) *grad = 0;
        return 0;
    }
    double mn = R((double)twice_lo / 2), span = R((double)(twice_hi - twice_lo) / 2), sign = 1;
    c = R(c - mn);
    if (c < 0) c = -c, sign = -1;
    double extra = fmod(c, span);
    int64_t flips = isfinite(c) ? (int64_t)floor(R(c / span)) : 0;
    if (flips % 2 == 0) {
        if (grad) *grad *= sign;
        return R(extra + mn);
    }
    if (grad) *grad *= -sign;
    return R(R(span - extra) + mn);
}

/* the padding mode applied to coordinate c of an axis of size `size` (grad: times its derivative) */
static double pad_coord(const gs_params *p, double c, int64_t size, double *grad) {
    if (p->pad == GS_BORDER) {
        c = clip_coord(p, c, size, grad);
    } else if (p->pad == GS_REFLECTION) {
        c = p->align ? reflect_coord(p, c, 0, 2 * (size - 1), grad) : reflect_coord(p, c, -1, 2 * size - 1, grad);
        c = clip_coord(p, c, size, grad);
    }
    return c;
}

/* the grid value g unnormalised to an axis of size `size` (grad: its derivative) */
static double unnormalize(const gs_params *p, double g, int64_t size, double *grad) {
    double s = (double)size;
    if (p->align) {
        if (grad) *grad = R((s - 1) / 2);
        return R(R(R(g + 1) / 2) * (s - 1));
    }
    if (grad) *grad = R(s / 2);
    return R(R(R(R(g + 1) * s) - 1) / 2);
}

/* ---- taps: the input elements one grid point reads, with their weights -------------------------- */

#define GS_MAX_TAPS 64

typedef struct {
    int n;
    int64_t off[GS_MAX_TAPS];      /* offset in the input plane, -1: out of range (adds nothing) */
    double w[GS_MAX_TAPS];         /* weight                                                     */
    double dw[GS_MAX_TAPS][3];     /* d(weight) / d(coordinate of axis a)                        */
    double mult[3];                /* d(coordinate) / d(grid value)                              */
} gs_taps;

static int64_t plane_offset(const gs_params *p, const int64_t *idx) {
    int64_t off = 0;
    for (int a = p->dims - 1; a >= 0; a--) {
        if (idx[a] < 0 || idx[a] >= p->in[a]) return -1;
        off = off * p->in[a] + idx[a];
    }
    return off;
}

/* torch's cubic convolution coefficients (A = -0.75) of the 4 taps at t in [0, 1), and their derivatives in t
 * with the sign torch's backward gives them (get_cubic_coefficients_grad) */
static double cc1(const gs_params *p, double x) {          /* |x| <= 1 */
    const double A = -0.75;
    return R(R(R(R(R((A + 2) * x) - (A + 3)) * x) * x) + 1);
}
static double cc2(const gs_params *p, double x) {          /* 1 < |x| < 2 */
    const double A = -0.75;
    return R(R(R(R(R(A * x) - 5 * A) * x) + 8 * A) * x) - 4 * A;
}

static void cubic_coeffs(const gs_params *p, double t, double c[4], double cg[4]) {
    const double A = -0.75;
    c[0] = R(cc2(p, R(t + 1))), c[1] = cc1(p, t), c[2] = cc1(p, R(1 - t)), c[3] = R(cc2(p, R(2 - t)));
    double x = R(-1 - t);
    cg[0] = R(R(R(R(-3 * A * x) - 10 * A) * x) - 8 * A);
    x = -t;
    cg[1] = R(R(R(-3 * (A + 2) * x) - 2 * (A + 3)) * x);
    x = R(1 - t);
    cg[2] = R(R(R(3 * (A + 2) * x) - 2 * (A + 3)) * x);
    x = R(2 - t);
    cg[3] = R(R(R(R(3 * A * x) - 10 * A) * x) + 8 * A);
}

static void taps_of(const gs_params *p, const double *g, gs_taps *t) {
    double c[3];
    int64_t idx[3];
    for (int a = 0; a < p->dims; a++) {
        c[a] = unnormalize(p, g[a], p->in[a], &t->mult[a]);
        if (p->interp != GS_BICUBIC) c[a] = pad_coord(p, c[a], p->in[a], &t->mult[a]);
        if (p->interp != GS_BICUBIC && p->pad == GS_ZEROS && !isfinite(c[a])) c[a] = -100.0;
    }
    if (p->interp == GS_NEAREST) {
        for (int a = 0; a < p->dims; a++) idx[a] = (int64_t)nearbyint(c[a]);
        t->n = 1, t->off[0] = plane_offset(p, idx), t->w[0] = 1;
        memset(t->dw[0], 0, sizeof t->dw[0]);
        return;
    }
    if (p->interp == GS_BICUBIC) {             /* 2-D only (the 3-D operator refuses it) */
        double fl[2], cf[2][4], cg[2][4];
        for (int a = 0; a < 2; a++) {
            fl[a] = floor(c[a]);
            cubic_coeffs(p, R(c[a] - fl[a]), cf[a], cg[a]);
        }
        t->n = 16;
        for (int j = 0; j < 4; j++)           /* y */
            for (int i = 0; i < 4; i++) {     /* x */
                int k = j * 4 + i;
                double q[2] = {fl[0] - 1 + i, fl[1] - 1 + j};
                for (int a = 0; a < 2; a++) {
                    q[a] = pad_coord(p, q[a], p->in[a], NULL);
                    idx[a] = isfinite(q[a]) ? (int64_t)q[a] : -1;
                }
                t->off[k] = plane_offset(p, idx);
                t->w[k] = R(cf[0][i] * cf[1][j]);
                t->dw[k][0] = -R(cg[0][i] * cf[1][j]);
                t->dw[k][1] = -R(cf[0][i] * cg[1][j]);
                t->dw[k][2] = 0;
            }
        return;
    }
    double fl[3], wt[3][2];
    for (int a = 0; a < p->dims; a++) {
        fl[a] = floor(c[a]);
        double d = R(c[a] - fl[a]);
        wt[a][0] = R(1 - d), wt[a][1] = d;
    }
    t->n = 1 << p->dims;
    for (int k = 0; k < t->n; k++) {
        double w = 1;
        for (int b = 0; b < p->dims; b++) {   /* corner bits: outer axis (highest) first */
            int a = p->dims - 1 - b, bit = (k >> (p->dims - 1 - b)) & 1;
            idx[a] = (int64_t)fl[a] + bit;
            w = b == 0 ? wt[a][bit] : R(w * wt[a][bit]);
        }
        t->off[k] = plane_offset(p, idx);
        t->w[k] = w;
        for (int a = 0; a < p->dims; a++) {
            double dw = (k >> a) & 1 ? 1.0 : -1.0;
            for (int b = p->dims - 1; b >= 0; b--)
                if (b != a) dw = R(dw * wt[b][(k >> b) & 1]);
            t->dw[k][a] = dw;
        }
        for (int a = p->dims; a < 3; a++) t->dw[k][a] = 0;
    }
}

/* ---- kernels ---------------------------------------------------------------------------------- */

static int64_t span_of(const int64_t *v, int dims) {
    int64_t s = 1;
    for (int a = 0; a < dims; a++) s *= v[a];
    return s;
}

/* inputs: input, grid; output: out */
void grid_sampler_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const gs_params *p = launch->params;
    int64_t isp = span_of(p->in, p->dims), osp = span_of(p->out, p->dims);
    double *x = tv_load_double(&launch->inputs[0]), *g = tv_load_double(&launch->inputs[1]);
    double *y = malloc(((size_t)(p->n * p->ch * osp) + 1) * sizeof(double));
    gs_taps *t = malloc(sizeof *t);
    if (x == NULL || g == NULL || y == NULL || t == NULL) {
        tv_fail_oom(launch);
    } else {
        for (int64_t n = 0; n < p->n; n++)
            for (int64_t o = 0; o < osp; o++) {
                taps_of(p, g + (n * osp + o) * p->dims, t);
                for (int64_t c = 0; c < p->ch; c++) {
                    const double *plane = x + (n * p->ch + c) * isp;
                    double acc = 0;
                    int first = 1;
                    for (int k = 0; k < t->n; k++) {
                        if (t->off[k] < 0) continue;
                        double v = p->interp == GS_NEAREST ? plane[t->off[k]] : R(R(plane[t->off[k]]) * t->w[k]);
                        acc = first ? v : R(acc + v);
                        first = 0;
                    }
                    y[(n * p->ch + c) * osp + o] = acc;
                }
            }
        tv_store_double(&launch->outputs[0], y);
    }
    free(x), free(g), free(y), free(t);
}

/* inputs: gradOutput, input, grid; outputs: inputGrad, gridGrad (each written when the mask asks for it) */
void grid_sampler_backward_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const gs_params *p = launch->params;
    int64_t isp = span_of(p->in, p->dims), osp = span_of(p->out, p->dims);
    size_t n_in = (size_t)(p->n * p->ch * isp), n_grid = (size_t)(p->n * osp * p->dims);
    double *dy = tv_load_double(&launch->inputs[0]), *x = tv_load_double(&launch->inputs[1]);
    double *g = tv_load_double(&launch->inputs[2]);
    double *dx = calloc(n_in + 1, sizeof(double)), *dg = calloc(n_grid + 1, sizeof(double));
    gs_taps *t = malloc(sizeof *t);
    if (dy == NULL || x == NULL || g == NULL || dx == NULL || dg == NULL || t == NULL) {
        tv_fail_oom(launch);
    } else {
        for (int64_t n = 0; n < p->n; n++)
            for (int64_t o = 0; o < osp; o++) {
                taps_of(p, g + (n * osp + o) * p->dims, t);
                double gi[3] = {0, 0, 0};
                for (int64_t c = 0; c < p->ch; c++) {
                    double go = dy[(n * p->ch + c) * osp + o];
                    const double *plane = x + (n * p->ch + c) * isp;
                    double *dplane = dx + (n * p->ch + c) * isp;
                    for (int k = 0; k < t->n; k++) {
                        if (t->off[k] < 0) continue;
                        dplane[t->off[k]] = R(dplane[t->off[k]] + R(t->w[k] * go));
                        if (p->interp == GS_NEAREST) continue;
                        double v = plane[t->off[k]];
                        for (int a = 0; a < p->dims; a++) gi[a] = R(gi[a] + R(R(v * t->dw[k][a]) * go));
                    }
                }
                for (int a = 0; a < p->dims; a++) dg[(n * osp + o) * p->dims + a] = R(t->mult[a] * gi[a]);
            }
        if (p->mask[0]) tv_store_double(&launch->outputs[0], dx);
        if (p->mask[1]) tv_store_double(&launch->outputs[1], dg);
    }
    free(dy), free(x), free(g), free(dx), free(dg), free(t);
}

/* ---- steps ------------------------------------------------------------------------------------ */

#define invalid(c, ...) op_invalidf((c)->api, __VA_ARGS__)

static gs_params *gs_block(op_call *c) {
    return c->params_size ? (gs_params *)c->params : op_params(c, sizeof(gs_params));
}

static const char *shape_of(const pyaclnn_stub_tensor *t, char *b, size_t n) { return tv_shape_text(t->shape, t->ndim, b, n); }

/* gs_attrs interpolationMode paddingMode (the 2-D forward's CheckAttrValid): modes 0..2 each. */
aclnnStatus opc_gs_attrs(op_call *c, const op_step *s) {
    int64_t im = op_argument(c, s, 0)->i, pm = op_argument(c, s, 1)->i;
    if (im < 0 || im > 2)
        return invalid(c, "interpolationMode %lld should be in support list {0(bilinear), 1(nearest), 2(bicubic)}.",
                       (long long)im);
    if (pm < 0 || pm > 2)
        return invalid(c, "paddingMode %lld should be in support list {0(zeros), 1(border), 2(reflection)}.", (long long)pm);
    return ACLNN_SUCCESS;
}

/* gs_range interpolationMode paddingMode MAX (the backwards' CheckAttrValid): interpolationMode in [0, MAX],
 * paddingMode in [0, 2]. */
aclnnStatus opc_gs_range(op_call *c, const op_step *s) {
    int64_t im = op_argument(c, s, 0)->i, pm = op_argument(c, s, 1)->i;
    if (im < 0 || im > s->n)
        return invalid(c, "interpolationMode %lld should be in range [0, %lld].", (long long)im, (long long)s->n);
    if (pm < 0 || pm > 2) return invalid(c, "paddingMode %lld should be in range [0, 2].", (long long)pm);
    return ACLNN_SUCCESS;
}

/* dim_is p ... N: each operand has exactly N dimensions (OP_CHECK_WRONG_DIMENSION). */
aclnnStatus opc_dim_is(op_call *c, const op_step *s) {
    for (int k = 0; k < s->np; k++) {
        const pyaclnn_stub_tensor *t = op_tensor(c, s, k);
        char b[200];
        if (t->present && t->ndim != s->n)
            return invalid(c, "Expected %lld dimension input, but got %s with sizes %s.", (long long)s->n,
                           op_pname(c, s, k), shape_of(t, b, sizeof b));
    }
    return ACLNN_SUCCESS;
}

/* gs_shape input grid out (the 2-D forward's CheckShape after the ranks): batches, channels, the grid's plane
 * and out's, a non-empty input plane, grid's last dim 2. */
aclnnStatus opc_gs_shape(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0), *g = op_tensor(c, s, 1), *y = op_tensor(c, s, 2);
    char a[200], b[200], d[200];
    shape_of(x, a, sizeof a), shape_of(g, b, sizeof b), shape_of(y, d, sizeof d);
    if (x->shape[0] != g->shape[0] || x->shape[0] != y->shape[0])
        return invalid(c, "expect input, grid and out to have same batch size, but got input with shape [%s]             "
                       "grid with shape [%s] and out with shape [%s]", a, b, d);
    if (x->shape[1] != y->shape[1])
        return invalid(c, "expect input and out to have same channel size, but got input with shape [%s]             "
                       "and out with shape [%s]", a, d);
    if (g->shape[1] != y->shape[2] || g->shape[2] != y->shape[3])
        return invalid(c, "expect grid and out to have same H and W size, but got grid with shape [%s] and out with "
                       "shape [%s]", b, d);
    if (x->shape[2] == 0 || x->shape[3] == 0)
        return invalid(c, "expect input to have non-empty spatial dimensions, but got input with shape [%s]", a);
    if (g->shape[3] != 2)
        return invalid(c, "expect grid to have size 2 in last dimension, but got grid with shape [%s]", b);
    return ACLNN_SUCCESS;
}

/* The backwards' last shape checks on the step's operands (gradOutput input grid inputGrad gridGrad outputMask):
 * inputGrad of input's shape, gridGrad of grid's (OP_CHECK_SHAPE_NOT_EQUAL), then an outputMask of 2 values
 * (shared with grid_sampler3d.c). */
aclnnStatus gs_grads_and_mask(op_call *c, const op_step *s, const char *api) {
    op_step eq = *s;
    eq.np = 2, eq.p[0] = s->p[3], eq.p[1] = s->p[1];
    aclnnStatus rc = opc_shape_equal(c, &eq);
    if (rc) return rc;
    eq.p[0] = s->p[4], eq.p[1] = s->p[2];
    if ((rc = opc_shape_equal(c, &eq)) != ACLNN_SUCCESS) return rc;
    const bool *mask;
    uint64_t n = 0;
    if (pyaclnn_stub_bool_array_get(op_argument(c, s, 5)->p, &mask, &n) != ACLNN_SUCCESS || n != 2)
        return invalid(c, "Expected %s outputMask len to be 2, but got %llu.", api, (unsigned long long)n);
    return ACLNN_SUCCESS;
}

/* gsb_shape gradOutput input grid inputGrad gridGrad outputMask (the 2-D backward's CheckShape after the ranks). */
aclnnStatus opc_gsb_shape(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *go = op_tensor(c, s, 0), *x = op_tensor(c, s, 1), *g = op_tensor(c, s, 2);
    char a[200], b[200], d[200];
    shape_of(x, a, sizeof a), shape_of(g, b, sizeof b), shape_of(go, d, sizeof d);
    if (x->shape[0] != g->shape[0] || x->shape[0] != go->shape[0])
        return invalid(c, "expect input grid and gradOutput to have same batch size, but got input with shape [%s] grid "
                       "with shape [%s] and gradOutput with shape [%s]", a, b, d);
    if (x->shape[1] != go->shape[1])
        return invalid(c, "expect input and gradOutput to have same channel size, but got input with shape "
                       "            [%s] and gradOutput with shape [%s]", a, d);
    if (x->shape[2] == 0 || x->shape[3] == 0)
        return invalid(c, "expect input to have non-empty spatial dimensions, but got input with shape [%s]", a);
    if (g->shape[1] != go->shape[2] || g->shape[2] != go->shape[3])
        return invalid(c, "expect grid and gradOutput to have same H and W size, but got grid with shape             "
                       "[%s] and gradOutput with shape [%s]", b, d);
    if (g->shape[3] != 2)
        return invalid(c, "expect grid to have size 2 in last dimension, but got grid with shape [%s]", b);
    return gs_grads_and_mask(c, s, "aclnnGridSampler2DBackward");
}

/* gs_support input interpolationMode paddingMode alignCorners (paramsNotSupport): DOUBLE (AI CPU) has no bicubic. */
aclnnStatus opc_gs_support(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0);
    int64_t im = op_argument(c, s, 1)->i, pm = op_argument(c, s, 2)->i;
    if (!(x->dtype == ACL_DOUBLE && im == GS_BICUBIC)) return ACLNN_SUCCESS;
    char list[128], b[24];
    size_t n;
    const aclDataType *l = op_list(s->list, &n);
    ew_dtype_list(l, n, list, sizeof list);
    return invalid(c, "The op info is not supported. Plsease check op info! DataType support list is [%s], got data type is "
                   "%s.           interpolationMode support 0(bilinear) , 1(nearest) or 2(bicubic), got interpolationMode "
                   "is %lld.           paddingMode support 0(zeros) , 1(border) or 2(reflection), got paddingMode is %lld. "
                   "          alignCorners support false and true, got alignCorners is %s.           Notice that when data "
                   "type is double, no support interpolation mode is bicubic.", list, op_dtype_name(x->dtype, b),
                   (long long)im, (long long)pm, op_argument(c, s, 3)->i ? "true" : "false");
}

/* gsb_mask_null outputMask: a NULL mask is the vendor's early success (no checks, nothing launched). */
aclnnStatus opc_gsb_mask_null(op_call *c, const op_step *s) {
    if (op_argument(c, s, 0)->p == NULL) c->nothing = c->done = 1;
    return ACLNN_SUCCESS;
}

static void plan(op_call *c, const pyaclnn_stub_tensor *x, const pyaclnn_stub_tensor *g, int64_t im, int64_t pm,
                 int64_t align) {
    gs_params *p = gs_block(c);
    p->dims = (int)x->ndim - 2;
    p->interp = (int)im, p->pad = (int)pm, p->align = align != 0;
    p->wide = x->dtype == ACL_DOUBLE;
    p->n = x->shape[0], p->ch = x->shape[1];
    for (int a = 0; a < p->dims; a++) {
        p->in[a] = x->shape[x->ndim - 1 - a];
        p->out[a] = g->shape[g->ndim - 2 - a];
    }
    p->mask[0] = p->mask[1] = 1;
}

/* gs_plan input grid interpolationMode paddingMode alignCorners: nothing for an empty input or grid (the vendor's
 * early success), else the geometry and the modes. */
aclnnStatus opc_gs_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0), *g = op_tensor(c, s, 1);
    if (pyaclnn_stub_numel(x) == 0 || pyaclnn_stub_numel(g) == 0) {
        c->nothing = c->done = 1;
        return ACLNN_SUCCESS;
    }
    plan(c, x, g, op_argument(c, s, 2)->i, op_argument(c, s, 3)->i, op_argument(c, s, 4)->i);
    return ACLNN_SUCCESS;
}

/* gsb_plan gradOutput input grid interpolationMode paddingMode alignCorners outputMask: nothing when a tensor is
 * empty or the mask asks for neither output, else the geometry, the modes and the mask. */
aclnnStatus opc_gsb_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *go = op_tensor(c, s, 0), *x = op_tensor(c, s, 1), *g = op_tensor(c, s, 2);
    const bool *mask;
    uint64_t n = 0;
    pyaclnn_stub_bool_array_get(op_argument(c, s, 6)->p, &mask, &n);
    if (pyaclnn_stub_numel(go) == 0 || pyaclnn_stub_numel(x) == 0 || pyaclnn_stub_numel(g) == 0 || (!mask[0] && !mask[1])) {
        c->nothing = c->done = 1;
        return ACLNN_SUCCESS;
    }
    plan(c, x, g, op_argument(c, s, 3)->i, op_argument(c, s, 4)->i, op_argument(c, s, 5)->i);
    gs_params *p = gs_block(c);
    p->mask[0] = mask[0], p->mask[1] = mask[1];
    return ACLNN_SUCCESS;
}
