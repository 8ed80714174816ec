/*
 * aclnnMaxPool2dWithIndices / WithMask and their backwards: torch's max_pool2d(return_indices) on the NPU
 * (hicann/ops-nn pooling/max_pool3d_with_argmax_v2, pooling/max_pool3d_grad_with_argmax op_api).
 *
 * self [N, C, H, W] (or [C, H, W]) is P = N * C planes. Output (oh, ow) looks at the window rows
 * oh * sH - pH + kh * dH (kh < kH), columns likewise, inside the plane (padding never wins), and takes its
 * largest element, NaN winning (the last NaN, as torch CPU's `val > max || isnan(val)`); indices hold its flat
 * position h * W + w. The mask form writes, per plane, kH * kW rows of maskW bytes: byte [k][p] = 1 when kernel
 * position k holds output p's maximum -- the emulator's own layout (the NPU's bit layout is not published);
 * its backward reads it back. The backwards add each gradient at its window's argmax, in float64, rounded once.
 * Definitions: max_pool.toml (the vendor's checks in its order, with the steps below).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/view.h"
#include "ops/pool/pool.h"

typedef struct {
    int64_t kh, kw, sh, sw, ph, pw, dh, dw;
    int64_t planes, h, w, oh, ow, mask_w;
    int ceil_mode, mask;
} mp_params;

static mp_params *mp_block(op_call *c) {
    return c->params_size ? (mp_params *)c->params : op_params(c, sizeof(mp_params));
}

/* ---- kernels -------------------------------------------------------------------------------- */

/* The argmax (h * W + w, or -1 for a window inside the padding only) of window (o0, o1) of a plane, and its
 * kernel position. */
static int64_t window_argmax(const mp_params *p, const double *plane, int64_t o0, int64_t o1, int64_t *kpos) {
    int64_t best = -1;
    double max = -INFINITY;
    for (int64_t a = 0; a < p->kh; a++) {
        int64_t h = o0 * p->sh - p->ph + a * p->dh;
        if (h < 0 || h >= p->h) continue;
        for (int64_t b = 0; b < p->kw; b++) {
            int64_t w = o1 * p->sw - p->pw + b * p->dw;
            if (w < 0 || w >= p->w) continue;
            double v = plane[h * p->w + w];
            if (best < 0 || v > max || isnan(v)) {
                max = v;
                best = h * p->w + w;
                *kpos = a * p->kw + b;
            }
        }
    }
    return best;
}

void max_pool_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const mp_params *p = launch->params;
    int64_t hw = p->h * p->w, ohw = p->oh * p->ow, k = p->kh * p->kw;
    double *x = tv_load_double(&launch->inputs[0]);
    double *out = malloc(((size_t)(p->planes * ohw) + 1) * sizeof(double));
    size_t n_idx = p->mask ? (size_t)(p->planes * k * p->mask_w) : (size_t)(p->planes * ohw);
    double *idx = calloc(n_idx + 1, sizeof(double));
    if (x == NULL || out == NULL || idx == NULL) {
        tv_fail_oom(launch);
    } else {
        for (int64_t pl = 0; pl < p->planes; pl++)
            for (int64_t o = 0; o < ohw; o++) {
                int64_t kpos = 0, at = window_argmax(p, x + pl * hw, o / p->ow, o % p->ow, &kpos);
                out[pl * ohw + o] = at < 0 ? -INFINITY : x[pl * hw + at];
                if (p->mask) idx[(pl * k + kpos) * p->mask_w + o] = at >= 0;
                else idx[pl * ohw + o] = (double)at;
            }
        tv_store_double(&launch->outputs[0], out);
        tv_store_double(&launch->outputs[1], idx);
    }
    free(x), free(out), free(idx);
}

void max_pool_backward_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const mp_params *p = launch->params;
    int64_t hw = p->h * p->w, ohw = p->oh * p->ow, k = p->kh * p->kw;
    double *dy = tv_load_double(&launch->inputs[0]), *idx = tv_load_double(&launch->inputs[2]);
    double *dx = calloc((size_t)(p->planes * hw) + 1, sizeof(double));
    if (dy == NULL || idx == NULL || dx == NULL) {
        tv_fail_oom(launch);
        goto done;
    }
    for (int64_t pl = 0; pl < p->planes; pl++)
        for (int64_t o = 0; o < ohw; o++) {
            int64_t at = -1;
            if (p->mask) {
                for (int64_t kp = 0; kp < k && at < 0; kp++) {
                    if (idx[(pl * k + kp) * p->mask_w + o] == 0) continue;
                    int64_t h = (o / p->ow) * p->sh - p->ph + (kp / p->kw) * p->dh;
                    int64_t w = (o % p->ow) * p->sw - p->pw + (kp % p->kw) * p->dw;
                    if (h >= 0 && h < p->h && w >= 0 && w < p->w) at = h * p->w + w;
                }
                if (at < 0) continue;       /* no mark: a window inside the padding */
            } else {
                at = (int64_t)idx[pl * ohw + o];
                if (at < 0 || at >= hw) {
                    pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "%s: index %lld is out of bounds [0, %lld)",
                                           launch->op_name, (long long)at, (long long)hw);
                    goto done;
                }
            }
            dx[pl * hw + at] += dy[pl * ohw + o];
        }
    tv_store_double(&launch->outputs[0], dx);
done:
    free(dy), free(idx), free(dx);
}

/* ---- steps ---------------------------------------------------------------------------------- */

#define invalid(c, ...) op_invalidf((c)->api, __VA_ARGS__)

/* mp_mask_soc [kernelSize] "message": (forward) kernelSize of 1 or 2 values; Ascend 950 refuses the mask forms. */
aclnnStatus opc_mp_mask_soc(op_call *c, const op_step *s) {
    if (c->def->params[s->p[0]].kind == OP_K_INT_ARRAY) {
        const int64_t *v;
        uint64_t n = 0;
        if (pyaclnn_stub_int_array_get(op_argument(c, s, 0)->p, &v, &n) != ACLNN_SUCCESS || (n != 1 && n != 2))
            return invalid(c, "param size must be a single int, or a tuple of two ints");
    }
    return ew_soc_is_950() ? invalid(c, "%s", s->text) : ACLNN_SUCCESS;
}

static int private_or_other(aclFormat f) {
    return f != ACL_FORMAT_ND && f != ACL_FORMAT_NCHW && f != ACL_FORMAT_NCL && f != ACL_FORMAT_NHWC;
}

/* mp_format self out: one format, not a private one; self 3-D or 4-D. */
aclnnStatus opc_mp_format(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0), *out = op_tensor(c, s, 1);
    char a[24], b[24];
    if (self->format != out->format)
        return invalid(c, "Format of input and output should be same, self [%s], out [%s].",
                       op_format_name(self->format, a), op_format_name(out->format, b));
    if (private_or_other(self->format)) return invalid(c, "Format only support NCHW or CHW");
    if (self->ndim != 3 && self->ndim != 4) return invalid(c, "3D or 4D tensor expected for inputs");
    return ACLNN_SUCCESS;
}

/* mp_bw_format gradOutput self indices gradInput: one format for self, gradOutput and gradInput, no private
 * ones; each 3-D or 4-D. */
aclnnStatus opc_mp_bw_format(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *go = op_tensor(c, s, 0), *self = op_tensor(c, s, 1), *gi = op_tensor(c, s, 3);
    char a[24], b[24], d[24];
    if (self->format != go->format || self->format != gi->format)
        return invalid(c, "Format of self and gradOutput and gradInput should be same, self[%s], gradOutput[%s], "
                       "gradInput[%s].", op_format_name(self->format, a), op_format_name(go->format, b),
                       op_format_name(gi->format, d));
    for (int k = 0; k < 4; k++)
        if (private_or_other(op_tensor(c, s, k)->format))
            return invalid(c, ew_soc_is_950() ? "Format only support ND, NCHW or NHWC" : "Format only support ND, NCHW");
    static const int order[4] = {1, 3, 0, 2};
    for (int i = 0; i < 4; i++) {
        const pyaclnn_stub_tensor *t = op_tensor(c, s, order[i]);
        if (t->ndim != 3 && t->ndim != 4)
            return invalid(c, "3D or 4D tensor expected for %s but got dim num:%lld", op_pname(c, s, order[i]),
                           (long long)t->ndim);
    }
    return ACLNN_SUCCESS;
}

/* mp_attrs self kernelSize stride padding dilation: the attribute lists' sizes and values (CheckShape's first
 * part); the kernel, stride (empty: the kernel), padding and dilation go to the parameter block. */
aclnnStatus opc_mp_attrs(op_call *c, const op_step *s) {
    static const char *what[4] = {"kernelSize", "stride", "padding", "dilation"};
    const int64_t *v[4];
    uint64_t n[4];
    for (int k = 0; k < 4; k++) {
        v[k] = c->ints[s->p[k + 1]].v;
        n[k] = c->ints[s->p[k + 1]].n;
        if ((n[k] == 1 || n[k] == 2) || (k == 1 && n[k] == 0)) continue;
        return invalid(c, "The size of %s must be %s, but got %llu.", what[k], k == 1 ? "zero, one or two" : "one or two",
                       (unsigned long long)n[k]);
    }
    mp_params *p = mp_block(c);
    p->kh = v[0][0];
    p->kw = n[0] == 1 ? p->kh : v[0][1];
    if (p->kh <= 0 || p->kw <= 0)
        return invalid(c, "The size of kernel should be greater than 0, but got kh:%lld, kw:%lld", (long long)p->kh,
                       (long long)p->kw);
    p->sh = n[1] == 0 ? p->kh : v[1][0];
    p->sw = n[1] == 0 ? p->kw : (n[1] == 1 ? p->sh : v[1][1]);
    if (p->sh <= 0 || p->sw <= 0)
        return invalid(c, "The size of stride should be greater than 0, but got dh:%lld, dw:%lld", (long long)p->sh,
                       (long long)p->sw);
    p->ph = v[2][0];
    p->pw = n[2] == 1 ? p->ph : v[2][1];
    if (p->ph < 0 || p->pw < 0 || p->ph > p->kh / 2 || p->pw > p->kw / 2)
        return invalid(c, "pad should be >= 0 and <= half of kernel size, but got kh:%lld, kw:%lld, padH:%lld, "
                       "padW:%lld", (long long)p->kh, (long long)p->kw, (long long)p->ph, (long long)p->pw);
    p->dh = v[3][0];
    p->dw = n[3] == 1 ? p->dh : v[3][1];
    if (ew_soc_is_950() && (p->dh <= 0 || p->dw <= 0))
        return invalid(c, "dilation should be greater than 0, but got dilationH:%lld, dilationW:%lld", (long long)p->dh,
                       (long long)p->dw);
    if (!ew_soc_is_950() && (p->dh != 1 || p->dw != 1))
        return invalid(c, "dilation only support 1, but got dilationH:%lld, dilationW:%lld", (long long)p->dh,
                       (long long)p->dw);
    return ACLNN_SUCCESS;
}

/* The planes and the output size of self (3-D or 4-D); 161002 for an empty plane or no output. */
static aclnnStatus geometry(op_call *c, const pyaclnn_stub_tensor *self, int ceil_mode, int64_t *shape) {
    mp_params *p = mp_block(c);
    pool_dims d = pool_dims_of(self);
    p->h = d.h;
    p->w = d.w;
    p->planes = d.nb * d.ch;
    p->ceil_mode = ceil_mode;
    if (d.ch == 0 || p->h == 0 || p->w == 0)
        return invalid(c, "Expected tensor with optional 0 dim batch size, but got nInputPlane:%lld, height:%lld, "
                       "width:%lld", (long long)d.ch, (long long)p->h, (long long)p->w);
    p->oh = pool_out_size(p->h, p->kh, p->ph, p->sh, p->dh, ceil_mode, 1);
    p->ow = pool_out_size(p->w, p->kw, p->pw, p->sw, p->dw, ceil_mode, 1);
    aclnnStatus rc = pool_out_shape(c, &d, p->oh, p->ow, shape);
    if (rc) return rc;
    p->mask_w = op_mul_sat(op_add_sat(op_add_sat(op_mul_sat(p->oh, p->ow), 15) / 16, 1), 32);
    return ACLNN_SUCCESS;
}

/* mp_out_shape self out ceilMode: out has the pooled shape. */
aclnnStatus opc_mp_out_shape(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0);
    aclnnStatus rc = geometry(c, self, (int)op_argument(c, s, 2)->i, c->shape);
    if (rc) return rc;
    c->ndim = self->ndim;
    return op_expected_size(c->api, op_pname(c, s, 1), op_tensor(c, s, 1), c->shape, c->ndim);
}

/* The mask's shape: [N,] C, kH * kW, maskW. */
static void mask_shape(const op_call *c, const int64_t *out_shape, int64_t ndim, int64_t *shape) {
    const mp_params *p = (const mp_params *)c->params;
    for (int64_t d = 0; d < ndim - 2; d++) shape[d] = out_shape[d];
    shape[ndim - 2] = p->kh * p->kw;
    shape[ndim - 1] = p->mask_w;
}

/* mp_indices_shape indices out MASK: indices out's shape, or (MASK 1) the mask's. */
aclnnStatus opc_mp_indices_shape(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *idx = op_tensor(c, s, 0), *out = op_tensor(c, s, 1);
    if (!s->n) return opc_shape_equal(c, s);
    int64_t shape[PYACLNN_STUB_MAX_DIMS];
    mask_shape(c, c->shape, c->ndim, shape);
    (void)out;
    return op_expected_size(c->api, op_pname(c, s, 0), idx, shape, c->ndim);
}

/* mp_plan self out ceilMode MASK: nothing to launch for an empty self or out. */
aclnnStatus opc_mp_plan(op_call *c, const op_step *s) {
    mp_params *p = mp_block(c);
    p->mask = (int)s->n;
    if (pyaclnn_stub_numel(op_tensor(c, s, 0)) == 0 || pyaclnn_stub_numel(op_tensor(c, s, 1)) == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}

/* mp_bw_shapes gradOutput self indices gradInput ceilMode MASK: gradInput self's shape, windows inside the
 * padded plane, gradOutput the pooled shape, indices gradOutput's shape or the mask's (the vendor only logs a
 * wrong indices shape; the emulator refuses it, its kernel reads them). */
aclnnStatus opc_mp_bw_shapes(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *go = op_tensor(c, s, 0), *self = op_tensor(c, s, 1), *idx = op_tensor(c, s, 2);
    const pyaclnn_stub_tensor *gi = op_tensor(c, s, 3);
    aclnnStatus rc;
    op_step eq = *s;
    eq.p[0] = s->p[3];
    eq.p[1] = s->p[1];
    eq.np = 2;
    eq.labels = NULL;
    if ((rc = opc_shape_equal(c, &eq))) return rc;
    mp_params *p = mp_block(c);
    int is3 = self->ndim == 3;
    int64_t ch = self->shape[is3 ? 0 : 1], h = self->shape[is3 ? 1 : 2], w = self->shape[is3 ? 2 : 3];
    if (ch == 0 || h == 0 || w == 0)
        return invalid(c, "Expected tensor        with optional 0 dim batch size, but got nInputPlane:%lld, "
                       "height:%lld, width:%lld", (long long)ch, (long long)h, (long long)w);
    if (p->ph > op_add_sat(op_mul_sat(op_sub_sat(p->kh, 1), p->dh), 1) / 2)
        return invalid(c, "pad should be at most half of        effective kernel size, but got padH=%lld, kH=%lld and "
                       "dilationH=%lld", (long long)p->ph, (long long)p->kh, (long long)p->dh);
    if (p->pw > op_add_sat(op_mul_sat(op_sub_sat(p->kw, 1), p->dw), 1) / 2)
        return invalid(c, "pad should be at most half of        effective kernel size, but got padW=%lld, kW=%lld and "
                       "dilationW=%lld", (long long)p->pw, (long long)p->kw, (long long)p->dw);
    int64_t shape[PYACLNN_STUB_MAX_DIMS];
    if ((rc = geometry(c, self, (int)op_argument(c, s, 4)->i, shape)) ||
        (rc = op_expected_size(c->api, op_pname(c, s, 0), go, shape, self->ndim)))
        return rc;
    (void)gi;
    if (!s->n) {
        eq.p[0] = s->p[2];
        eq.p[1] = s->p[0];
        return opc_shape_equal(c, &eq);
    }
    int64_t mshape[PYACLNN_STUB_MAX_DIMS];
    mask_shape(c, shape, self->ndim, mshape);
    return op_expected_size(c->api, op_pname(c, s, 2), idx, mshape, self->ndim);
}

/* mp_bw_plan self gradOutput ceilMode MASK: nothing to launch for an empty self. */
aclnnStatus opc_mp_bw_plan(op_call *c, const op_step *s) {
    mp_params *p = mp_block(c);
    p->mask = (int)s->n;
    if (pyaclnn_stub_numel(op_tensor(c, s, 0)) == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}
