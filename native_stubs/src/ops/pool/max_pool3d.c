/*
 * aclnnMaxPool3dWithArgmax and aclnnMaxPool3dWithArgmaxBackward: torch's max_pool3d_with_indices (F.max_pool3d,
 * nn.MaxPool3d) on the NPU (hicann/ops-nn pooling/max_pool3d_with_argmax_v2, max_pool3d_grad_with_argmax op_api).
 * self is [N, C, D, H, W] or [C, D, H, W]; kernelSize / padding / dilation of 1 or 3 values, stride of 0 (= kernel),
 * 1 or 3. Output size per axis: pool_out_size (pool.h, torch's rounding). out = the maximum of each dilated window's
 * elements inside the input (the first maximum; a NaN wins, the last NaN's position, as torch CPU), indices = its
 * flat position d * H * W + h * W + w in the volume. The backward adds each gradOutput element to gradInput at its
 * index in float64, one rounding. Definitions: max_pool3d.toml.
 */
#include <math.h>
#include <stdlib.h>

#include "kernels/view.h"
#include "ops/pool/pool.h"

typedef struct {
    int64_t k[3], s[3], p[3], dl[3];
    int64_t planes, in[3], out[3];
} mp3_params;

void max_pool3d_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const mp3_params *p = launch->params;
    int64_t isp = p->in[0] * p->in[1] * p->in[2], osp = p->out[0] * p->out[1] * p->out[2];
    double *x = tv_load_double(&launch->inputs[0]);
    double *y = malloc(((size_t)(p->planes * osp) + 1) * sizeof(double));
    double *ix = malloc(((size_t)(p->planes * osp) + 1) * sizeof(double));
    if (x == NULL || y == NULL || ix == NULL) {
        tv_fail_oom(launch);
    } else {
        for (int64_t pl = 0; pl < p->planes; pl++)
            for (int64_t o = 0; o < osp; o++) {
                int64_t od = o / (p->out[1] * p->out[2]), oh = o / p->out[2] % p->out[1], ow = o % p->out[2];
                const double *v = x + pl * isp;
                int64_t at = -1;
                for (int64_t a = 0; a < p->k[0]; a++) {
                    int64_t d = od * p->s[0] - p->p[0] + a * p->dl[0];
                    if (d < 0 || d >= p->in[0]) continue;
                    for (int64_t b = 0; b < p->k[1]; b++) {
                        int64_t h = oh * p->s[1] - p->p[1] + b * p->dl[1];
                        if (h < 0 || h >= p->in[1]) continue;
                        for (int64_t e = 0; e < p->k[2]; e++) {
                            int64_t w = ow * p->s[2] - p->p[2] + e * p->dl[2];
                            if (w < 0 || w >= p->in[2]) continue;
                            int64_t q = (d * p->in[1] + h) * p->in[2] + w;
                            if (at < 0 || v[q] > v[at] || isnan(v[q])) at = q;
                        }
                    }
                }
                y[pl * osp + o] = at < 0 ? -INFINITY : v[at];
                ix[pl * osp + o] = (double)(at < 0 ? 0 : at);
            }
        tv_store_double(&launch->outputs[0], y);
        tv_store_double(&launch->outputs[1], ix);
    }
    free(x), free(y), free(ix);
}

/* inputs: gradOutput, indices; output: gradInput */
void max_pool3d_backward_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const mp3_params *p = launch->params;
    pool_index_scatter(launch, p->planes, p->in[0] * p->in[1] * p->in[2], p->out[0] * p->out[1] * p->out[2]);
}

/* ---- steps ------------------------------------------------------------------------------------ */

#define invalid(c, ...) op_invalidf((c)->api, __VA_ARGS__)
#define INTS(c, s, k) ((c)->ints[(s)->p[k]])

static int is_private(aclFormat f) {
    return !(f == ACL_FORMAT_ND || f == ACL_FORMAT_NCHW || f == ACL_FORMAT_NHWC || f == ACL_FORMAT_NCL ||
             f == ACL_FORMAT_NCDHW || f == ACL_FORMAT_NDHWC);
}

static void fill(op_call *c, const op_step *s, int kk, int64_t k[3], int64_t st[3], int64_t pd[3], int64_t dl[3]) {
    const int64_t *kv = INTS(c, s, kk).v, *sv = INTS(c, s, kk + 1).v, *pv = INTS(c, s, kk + 2).v, *dv = INTS(c, s, kk + 3).v;
    uint64_t nk = INTS(c, s, kk).n, ns = INTS(c, s, kk + 1).n, np = INTS(c, s, kk + 2).n, nd = INTS(c, s, kk + 3).n;
    for (int a = 0; a < 3; a++) {
        k[a] = nk == 1 ? kv[0] : kv[a];
        st[a] = ns == 0 ? k[a] : ns == 1 ? sv[0] : sv[a];
        pd[a] = np == 1 ? pv[0] : pv[a];
        dl[a] = nd == 1 ? dv[0] : dv[a];
    }
}

/* mp3_format self out indices (the forward's CheckFormat). */
aclnnStatus opc_mp3_format(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0), *y = op_tensor(c, s, 1), *ix = op_tensor(c, s, 2);
    char a[24], b[24];
    if (x->format != y->format)
        return invalid(c, "Format of input and output should be same, self [%s], out [%s].", op_format_name(x->format, a),
                       op_format_name(y->format, b));
    if (x->format != ix->format)
        return invalid(c, "Format of input and indices should be same, self [%s], indices [%s].",
                       op_format_name(x->format, a), op_format_name(ix->format, b));
    if (x->ndim != 4 && x->ndim != 5) return invalid(c, "4D or 5D tensor expected for inputs");
    if (ew_soc_is_950() && x->format != ACL_FORMAT_NDHWC && x->format != ACL_FORMAT_NCDHW &&
        x->format != ACL_FORMAT_NCHW && x->format != ACL_FORMAT_ND)
        return invalid(c, "Format of input is not supported, self [%s].", op_format_name(x->format, a));
    return ACLNN_SUCCESS;
}

/* mp3b_format gradOutput self indices gradInput (the backward's CheckFormat). */
aclnnStatus opc_mp3b_format(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *g = op_tensor(c, s, 0), *x = op_tensor(c, s, 1), *gi = op_tensor(c, s, 3);
    char a[24], b[24], d[24];
    if (x->format != g->format || x->format != gi->format)
        return invalid(c, "Format of self and gradOutput and gradInput should be same, self[%s], gradOutput[%s], "
                       "gradInput[%s].", op_format_name(x->format, a), op_format_name(g->format, b),
                       op_format_name(gi->format, d));
    for (int k = 0; k < 4; k++)
        if (is_private(op_tensor(c, s, k)->format))
            return invalid(c, "Private format is not supported, please use a non-private format such as NCDHW.");
    static const int order[4] = {0, 3, 2, 1};
    for (int k = 0; k < 4; k++) {
        const pyaclnn_stub_tensor *t = op_tensor(c, s, order[k]);
        if (t->ndim != 4 && t->ndim != 5)
            return invalid(c, "4D or 5D tensor expected for %s but got dim num:%lld", op_pname(c, s, order[k]),
                           (long long)t->ndim);
    }
    return ACLNN_SUCCESS;
}

/* mp3_attrs kernelSize stride padding dilation BACK (CheckParamsValid; BACK 1: the backward's messages). */
aclnnStatus opc_mp3_attrs(op_call *c, const op_step *s) {
    int back = s->n != 0;
    const char *what = back ? "size" : "value";
    uint64_t nk = INTS(c, s, 0).n, ns = INTS(c, s, 1).n, np = INTS(c, s, 2).n, nd = INTS(c, s, 3).n;
    if (nk != 1 && nk != 3) return invalid(c, back ? "The length of kernelSize can be only 1 or 3." : "The length of kernelSize can be only 1 or 3");
    const int64_t *kv = INTS(c, s, 0).v;
    int64_t k[3] = {kv[0], nk == 1 ? kv[0] : kv[1], nk == 1 ? kv[0] : kv[2]};
    if (!(k[0] > 0 && k[1] > 0 && k[2] > 0))
        return invalid(c, "The %s of kernel should be greater than 0, but got kernelD:%lld, kernelH:%lld, kernelW:%lld",
                       what, (long long)k[0], (long long)k[1], (long long)k[2]);
    if (ns != 0 && ns != 1 && ns != 3)
        return invalid(c, back ? "The length of stride can be only 0, 1 or 3" : "The length of stride can be only 1 or 3");
    const int64_t *sv = INTS(c, s, 1).v;
    int64_t st[3];
    for (int a = 0; a < 3; a++) st[a] = ns == 0 ? k[a] : ns == 1 ? sv[0] : sv[a];
    if (!(st[0] > 0 && st[1] > 0 && st[2] > 0))
        return invalid(c, "The %s of stride should be greater than 0, but got strideD:%lld, strideH:%lld, strideW:%lld",
                       what, (long long)st[0], (long long)st[1], (long long)st[2]);
    if (np != 1 && np != 3) return invalid(c, back ? "The length of padding can be only 1 or 3." : "The length of padding can be only 1 or 3");
    const int64_t *pv = INTS(c, s, 2).v;
    int64_t pd[3] = {pv[0], np == 1 ? pv[0] : pv[1], np == 1 ? pv[0] : pv[2]};
    if (!(pd[0] >= 0 && pd[1] >= 0 && pd[2] >= 0))
        return invalid(c, "The %s of padding should be greater than or equal to 0, but got paddingD:%lld, paddingH:%lld, "
                       "paddingW:%lld", what, (long long)pd[0], (long long)pd[1], (long long)pd[2]);
    if (!(pd[0] <= k[0] / 2 && pd[1] <= k[1] / 2 && pd[2] <= k[2] / 2))
        return invalid(c, "%s should be smaller than or equal to half of kernel size, %sbut got kernelD:%lld, kernelH:%lld, "
                       "kernelW:%lld, paddingD:%lld, paddingH:%lld, paddingW:%lld", back ? "padding" : "Padding",
                       back ? "                   " : "", (long long)k[0], (long long)k[1], (long long)k[2],
                       (long long)pd[0], (long long)pd[1], (long long)pd[2]);
    if (nd != 1 && nd != 3) return invalid(c, "The length of dilation can be only 1 or 3");
    const int64_t *dv = INTS(c, s, 3).v;
    int64_t dl[3] = {dv[0], nd == 1 ? dv[0] : dv[1], nd == 1 ? dv[0] : dv[2]};
    if (back && !(dl[0] > 0 && dl[1] > 0 && dl[2] > 0))
        return invalid(c, "The size of dilation should be greater than 0, but got dilationD:%lld, dilationH:%lld, "
                       "dilationW:%lld", (long long)dl[0], (long long)dl[1], (long long)dl[2]);
    if (!back && !ew_soc_is_950() && !(dl[0] == 1 && dl[1] == 1 && dl[2] == 1))
        return invalid(c, "The value of dilation should be equal 1, but got dilationD:%lld, dilationH:%lld, dilationW:%lld",
                       (long long)dl[0], (long long)dl[1], (long long)dl[2]);
    return ACLNN_SUCCESS;
}

/* the pooled shape of x with the attributes, checked against `t` (CheckReduceOutShape) */
static aclnnStatus pooled(op_call *c, const char *name, const pyaclnn_stub_tensor *x, const pyaclnn_stub_tensor *t,
                          const int64_t *k, const int64_t *st, const int64_t *pd, const int64_t *dl, int ceil_mode) {
    int64_t want[5];
    int n = 0;
    for (int64_t d = 0; d + 3 < x->ndim; d++) want[n++] = x->shape[d];
    for (int a = 0; a < 3; a++) {
        int64_t o = pool_out_size(x->shape[x->ndim - 3 + a], k[a], pd[a], st[a], dl[a], ceil_mode, 1);
        want[n++] = o > 0 ? o : 0;
    }
    return op_expected_size(c->api, name, t, want, x->ndim);
}

static void plan(op_call *c, const pyaclnn_stub_tensor *x, const pyaclnn_stub_tensor *y, const int64_t *k,
                 const int64_t *st, const int64_t *pd, const int64_t *dl) {
    mp3_params *p = op_params(c, sizeof(mp3_params));
    p->planes = x->ndim == 4 ? x->shape[0] : x->shape[0] * x->shape[1];
    for (int a = 0; a < 3; a++) {
        p->k[a] = k[a], p->s[a] = st[a], p->p[a] = pd[a], p->dl[a] = dl[a];
        p->in[a] = x->shape[x->ndim - 3 + a], p->out[a] = y->shape[y->ndim - 3 + a];
    }
}

/* mp3_plan self kernelSize stride padding dilation ceilMode out indices: nothing for an empty self or out, else
 * out's and indices' shapes checked, the plan. */
aclnnStatus opc_mp3_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0), *y = op_tensor(c, s, 6);
    if (pyaclnn_stub_numel(x) == 0 || pyaclnn_stub_numel(y) == 0) {
        c->nothing = c->done = 1;
        return ACLNN_SUCCESS;
    }
    int64_t k[3], st[3], pd[3], dl[3];
    fill(c, s, 1, k, st, pd, dl);
    int ceil_mode = (int)op_argument(c, s, 5)->i;
    aclnnStatus rc = pooled(c, op_pname(c, s, 6), x, y, k, st, pd, dl, ceil_mode);
    if (rc == ACLNN_SUCCESS) rc = pooled(c, op_pname(c, s, 7), x, op_tensor(c, s, 7), k, st, pd, dl, ceil_mode);
    if (rc) return rc;
    plan(c, x, y, k, st, pd, dl);
    return ACLNN_SUCCESS;
}

/* mp3b_plan gradOutput self indices kernelSize stride padding dilation ceilMode gradInput: indices of gradOutput's
 * shape, gradInput of self's (CheckInputShape); nothing when one is empty; the plan. */
aclnnStatus opc_mp3b_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *g = op_tensor(c, s, 0), *x = op_tensor(c, s, 1), *ix = op_tensor(c, s, 2);
    op_step eq = *s;
    eq.np = 2, eq.p[0] = s->p[2], eq.p[1] = s->p[0];
    aclnnStatus rc = opc_shape_equal(c, &eq);
    if (rc) return rc;
    eq.p[0] = s->p[1], eq.p[1] = s->p[8];
    if ((rc = opc_shape_equal(c, &eq)) != ACLNN_SUCCESS) return rc;
    if (pyaclnn_stub_numel(g) == 0 || pyaclnn_stub_numel(x) == 0 || pyaclnn_stub_numel(ix) == 0) {
        c->nothing = c->done = 1;
        return ACLNN_SUCCESS;
    }
    int64_t k[3], st[3], pd[3], dl[3];
    fill(c, s, 3, k, st, pd, dl);
    if ((rc = pooled(c, op_pname(c, s, 0), x, g, k, st, pd, dl, (int)op_argument(c, s, 7)->i)) != ACLNN_SUCCESS) return rc;
    plan(c, x, g, k, st, pd, dl);
    return ACLNN_SUCCESS;
}
