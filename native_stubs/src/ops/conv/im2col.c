/*
 * aclnnIm2col and aclnnIm2colBackward: torch's im2col (nn.Unfold) and col2im (nn.Fold) on the NPU (hicann/ops-math
 * conversion/im2col, hicann/ops-cv image/col2im). The columns of a [N, C, H, W] image are [N, C * kH * kW, L]: row
 * (c * kH + i) * kW + j, column oh * OW + ow holds the image at (oh * sH - pH + i * dH, ow * sW - pW + j * dW), zero
 * in the padding. Im2col moves elements (then the op_api's Cast to out's dtype); col2im is the vendor's
 * Col2imSimt: each image element the fp32 sum of the column elements that hold it, in (oh, ow) order, rounded once,
 * then the Cast. Definitions: im2col.toml.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/dtype.h"
#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"

typedef struct {
    int64_t n, c, h, w;          /* the image (n = 1 for a 3-D self / 2-D columns) */
    int64_t k[2], d[2], p[2], s[2];
    int64_t oh, ow;              /* the block grid: L = oh * ow */
} im2col_params;

/* The image element (ci, y, x) a column element (row r, column l) holds, as a flat index of one batch's image,
 * or -1 in the padding. */
static int64_t source_of(const im2col_params *p, int64_t r, int64_t l) {
    int64_t kk = p->k[0] * p->k[1], ci = r / kk, i = r % kk / p->k[1], j = r % p->k[1];
    int64_t y = l / p->ow * p->s[0] - p->p[0] + i * p->d[0], x = l % p->ow * p->s[1] - p->p[1] + j * p->d[1];
    if (y < 0 || y >= p->h || x < 0 || x >= p->w) return -1;
    return (ci * p->h + y) * p->w + x;
}

/* inputs: self; output: out */
void im2col_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const im2col_params *p = launch->params;
    const pyaclnn_stub_tensor *x = &launch->inputs[0], *out = &launch->outputs[0];
    int64_t rows = p->c * p->k[0] * p->k[1], cols = p->oh * p->ow, img = p->c * p->h * p->w;
    int64_t total = p->n * rows * cols;
    /* bytes moved in self's dtype; for another out dtype, in float64 (0.0 is zero bytes), then the Cast */
    int same = x->dtype == out->dtype;
    size_t es = same ? ew_itemsize(x->dtype) : sizeof(double);
    unsigned char *xs = same ? tv_gather_bytes(x) : (unsigned char *)tv_load_double(x), *ys = tv_alloc(total, es);
    if (xs == NULL || ys == NULL) {
        tv_fail_oom(launch);
    } else {
        for (int64_t b = 0, o = 0; b < p->n; b++)
            for (int64_t r = 0; r < rows; r++)
                for (int64_t l = 0; l < cols; l++, o++) {
                    int64_t at = source_of(p, r, l);
                    if (at < 0) memset(ys + o * es, 0, es);
                    else memcpy(ys + o * es, xs + (b * img + at) * es, es);
                }
        if (same) tv_scatter_bytes(out, ys);
        else tv_store_double(out, (const double *)ys);
    }
    free(xs), free(ys);
}

/* inputs: gradOutput (the columns); output: out (the image) */
void col2im_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const im2col_params *p = launch->params;
    const pyaclnn_stub_tensor *g = &launch->inputs[0];
    int64_t kk = p->k[0] * p->k[1], cols = p->oh * p->ow, img = p->c * p->h * p->w;
    float *gs = tv_load_float(g);
    double *ys = tv_alloc(p->n * img, sizeof(double));
    if (gs == NULL || ys == NULL) {
        tv_fail_oom(launch);
        goto done;
    }
    int64_t ext[2] = {(p->k[0] - 1) * p->d[0] + 1, (p->k[1] - 1) * p->d[1] + 1};
    for (int64_t b = 0; b < p->n; b++)
        for (int64_t ci = 0; ci < p->c; ci++)
            for (int64_t y = 0; y < p->h; y++)
                for (int64_t x = 0; x < p->w; x++) {
                    int64_t yi = y + p->p[0], xi = x + p->p[1];       /* the padded image's coordinates */
                    int64_t h0 = yi >= ext[0] ? (yi - ext[0]) / p->s[0] + 1 : 0, h1 = yi / p->s[0] + 1;
                    int64_t w0 = xi >= ext[1] ? (xi - ext[1]) / p->s[1] + 1 : 0, w1 = xi / p->s[1] + 1;
                    if (h1 > p->oh) h1 = p->oh;
                    if (w1 > p->ow) w1 = p->ow;
                    float acc = 0.0f;
                    for (int64_t oh = h0; oh < h1; oh++)
                        for (int64_t ow = w0; ow < w1; ow++) {
                            int64_t hk = yi - oh * p->s[0], wk = xi - ow * p->s[1];
                            if (hk % p->d[0] || wk % p->d[1]) continue;
                            int64_t r = (ci * p->k[0] + hk / p->d[0]) * p->k[1] + wk / p->d[1];
                            acc += gs[(b * p->c * kk + r) * cols + oh * p->ow + ow];
                        }
                    /* rounded to gradOutput's dtype (the kernel's D_T), then the Cast to out's */
                    ys[(b * p->c + ci) * p->h * p->w + y * p->w + x] =
                        ew_cast((ew_value){.f = acc}, ACL_FLOAT, g->dtype).f;
                }
    tv_store_double(&launch->outputs[0], ys);
done:
    free(gs), free(ys);
}

/* ---- steps ------------------------------------------------------------------------------------ */

#define invalid(c, ...) op_invalidf((c)->api, __VA_ARGS__)

/* torch's div_rtn as the op_api writes it: the quotient held in an int (truncated to 32 bits), rounded down. */
static int64_t div_rtn(int64_t x, int64_t y) {
    int q = (int)(x / y), r = (int)(x % y);
    if (r != 0 && (r < 0) != (y < 0)) --q;
    return q;
}

/* the step's int-array operands from..to-1 hold two values each ("It is expected <p> equals to 2 ..."). */
static aclnnStatus two_values(op_call *c, const op_step *s, int from, int to) {
    for (int k = from; k < to; k++)
        if (c->ints[s->p[k]].n != 2)
            return invalid(c, "It is expected %s equals to 2, but got size %llu.", op_pname(c, s, k),
                           (unsigned long long)c->ints[s->p[k]].n);
    return ACLNN_SUCCESS;
}

/* 1 if t has shape want[0..nd) */
static int has_shape(const pyaclnn_stub_tensor *t, const int64_t *want, int64_t nd) {
    int same = t->ndim == nd;
    for (int64_t i = 0; same && i < nd; i++) same = t->shape[i] == want[i];
    return same;
}

/* im2col_self self (CheckInputDims): 3-D or 4-D, the non-batch dims positive. */
aclnnStatus opc_im2col_self(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0);
    if (x->ndim != 3 && x->ndim != 4)
        return invalid(c, "Expected self dim [%lld] to be 3 or 4 but check failed.", (long long)x->ndim);
    for (int64_t d = x->ndim == 4 ? 1 : 0; d < x->ndim; d++)
        if (x->shape[d] <= 0)
            return invalid(c, "self'dims is invalid, self No.[%lld] dim is [%lld].", (long long)d + 1,
                           (long long)x->shape[d]);
    return ACLNN_SUCCESS;
}

/* im2col_arrays kernelSize dilation padding stride (CheckArray): two values each; kernel, stride, dilation > 0,
 * padding >= 0. */
aclnnStatus opc_im2col_arrays(op_call *c, const op_step *s) {
    aclnnStatus rc = two_values(c, s, 0, 4);
    if (rc) return rc;
    static const int order[3] = {0, 3, 1};     /* kernelSize, stride, dilation */
    for (int o = 0; o < 3; o++)
        for (int i = 0; i < 2; i++)
            if (c->ints[s->p[order[o]]].v[i] <= 0)
                return invalid(c, "It is expected %s be greater than zero, but %s No.[%d] dim is [%lld].",
                               op_pname(c, s, order[o]), op_pname(c, s, order[o]), i + 1,
                               (long long)c->ints[s->p[order[o]]].v[i]);
    for (int i = 0; i < 2; i++)
        if (c->ints[s->p[2]].v[i] < 0)
            return invalid(c, "It is expected padding be greater than or equal to zero, but padding No.[%d] dim is "
                           "[%lld].", i + 1, (long long)c->ints[s->p[2]].v[i]);
    return ACLNN_SUCCESS;
}

static void fill_params(op_call *c, const op_step *s, int first, int64_t n, int64_t ch, int64_t h, int64_t w,
                        int64_t oh, int64_t ow) {
    im2col_params *p = op_params(c, sizeof(im2col_params));
    p->n = n, p->c = ch, p->h = h, p->w = w, p->oh = oh, p->ow = ow;
    for (int i = 0; i < 2; i++) {
        p->k[i] = c->ints[s->p[first]].v[i], p->d[i] = c->ints[s->p[first + 1]].v[i];
        p->p[i] = c->ints[s->p[first + 2]].v[i], p->s[i] = c->ints[s->p[first + 3]].v[i];
    }
}

/* im2col_out self kernelSize dilation padding stride out (CheckOutputDims): a block grid of at least one, out
 * [N, C * kH * kW, L] (without N for a 3-D self); nothing for an empty self, else the geometry. */
aclnnStatus opc_im2col_out(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0), *y = op_tensor(c, s, 5);
    const int64_t *k = c->ints[s->p[1]].v, *d = c->ints[s->p[2]].v, *pd = c->ints[s->p[3]].v, *st = c->ints[s->p[4]].v;
    int three = x->ndim == 3;
    int64_t h = x->shape[three ? 1 : 2], w = x->shape[three ? 2 : 3];
    int64_t o[2];
    for (int i = 0; i < 2; i++)
        o[i] = div_rtn(op_sub_sat(op_add_sat(i ? w : h, op_mul_sat(2, pd[i])), op_add_sat(op_mul_sat(d[i], k[i] - 1), 1)),
                       st[i]) + 1;
    if (o[0] < 1 || o[1] < 1)
        return invalid(c, "The shape (%lld, %lld) of the array calculated by other parameters must be at least one.",
                       (long long)o[0], (long long)o[1]);
    int64_t kk = op_mul_sat(k[0], k[1]), want[3], nd = 0;
    if (!three) want[nd++] = x->shape[0];
    want[nd++] = op_mul_sat(x->shape[three ? 0 : 1], kk);
    want[nd++] = o[0] * o[1];
    if (!has_shape(y, want, nd)) {
        char a[200], b[200];
        return invalid(c, "Expect out shape [%s], but got: [%s].", tv_shape_text(want, nd, a, sizeof a),
                       tv_shape_text(y->shape, y->ndim, b, sizeof b));
    }
    if (pyaclnn_stub_numel(x) == 0) c->nothing = c->done = 1;
    else fill_params(c, s, 1, three ? 1 : x->shape[0], x->shape[three ? 0 : 1], h, w, o[0], o[1]);
    return ACLNN_SUCCESS;
}

/* The op_api's block count along one dim: (in + 2 pad - dil * (k - 1) - 1 + stride) / stride, int64 (saturated). */
static int64_t grid(int64_t in, int64_t k, int64_t d, int64_t pd, int64_t st) {
    int64_t num = op_sub_sat(op_add_sat(in, op_mul_sat(pd, 2)), op_add_sat(op_mul_sat(d, k - 1), 1));
    return op_add_sat(num, st) / st;
}

/* col2im_dims gradOutput out (CheckShape): gradOutput 2-D or 3-D, out one dim more. */
aclnnStatus opc_col2im_dims(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *g = op_tensor(c, s, 0), *y = op_tensor(c, s, 1);
    if (g->ndim != 2 && g->ndim != 3)
        return invalid(c, "Expected gradOutput dim [%lld] to be 2 or 3 but check failed.", (long long)g->ndim);
    if (y->ndim != g->ndim + 1)
        return invalid(c, "Expected out dim [%lld] to be 1 greater than gradOutput dim [%lld] but check failed.",
                       (long long)y->ndim, (long long)g->ndim);
    return ACLNN_SUCCESS;
}

/* col2im_arrays gradOutput inputSize kernelSize dilation padding stride (CheckArray, CheckArrayValue). */
aclnnStatus opc_col2im_arrays(op_call *c, const op_step *s) {
    aclnnStatus rc = two_values(c, s, 1, 6);
    if (rc) return rc;
    const int64_t *in = c->ints[s->p[1]].v, *k = c->ints[s->p[2]].v, *d = c->ints[s->p[3]].v, *pd = c->ints[s->p[4]].v,
                  *st = c->ints[s->p[5]].v;
    /* CheckArrayValue's message (CheckArray then adds "CheckArrayValue failed.") */
    if (!(k[0] > 0 && k[1] > 0))
        return invalid(c, "Kernel size must be greater than zero, but got kernelSize=(%lld,%lld).", (long long)k[0],
                       (long long)k[1]);
    if (!(st[0] > 0 && st[1] > 0))
        return invalid(c, "Stride must be greater than zero, but got stride=(%lld,%lld).", (long long)st[0],
                       (long long)st[1]);
    if (!(d[0] > 0 && d[1] > 0))
        return invalid(c, "Dilation must be greater than zero, but got dilation=(%lld,%lld).", (long long)d[0],
                       (long long)d[1]);
    if (!(pd[0] >= 0 && pd[1] >= 0))
        return invalid(c, "Padding must not be negative, but got padding=(%lld,%lld).", (long long)pd[0],
                       (long long)pd[1]);
    const pyaclnn_stub_tensor *g = op_tensor(c, s, 0);
    int three = g->ndim == 3;
    int64_t plane = g->shape[three ? 1 : 0], numl = g->shape[three ? 2 : 1], kk = op_mul_sat(k[0], k[1]);
    if (plane % kk != 0)
        return invalid(c, "Expected size of gradOutput's dim -2 to be divisible by the product of kernelSize but got "
                       "gradOutput.shape[-2]=%lld and kernelSize=(%lld,%lld).", (long long)plane, (long long)k[0],
                       (long long)k[1]);
    uint64_t l[2];
    for (int i = 0; i < 2; i++)      /* int64 quotients held in size_t, as the op_api (a negative one wraps) */
        l[i] = (uint64_t)grid(in[i], k[i], d[i], pd[i], st[i]);
    if ((uint64_t)numl != l[0] * l[1])
        return invalid(c, "Expected gradOutput.shape[-1] should be %llu, but current is %llu.",
                       (unsigned long long)(l[0] * l[1]), (unsigned long long)numl);
    return ACLNN_SUCCESS;
}

/* col2im_out gradOutput inputSize kernelSize dilation padding stride out (CheckOutShape): out [N, C, inputSize]
 * with C = gradOutput's dim -2 / (kH * kW); nothing for an empty gradOutput, else the geometry. */
aclnnStatus opc_col2im_out(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *g = op_tensor(c, s, 0), *y = op_tensor(c, s, 6);
    const int64_t *in = c->ints[s->p[1]].v, *k = c->ints[s->p[2]].v;
    int three = g->ndim == 3;
    int64_t want[4], nd = 0, kk = k[0] * k[1];
    if (three) want[nd++] = g->shape[0];
    want[nd++] = g->shape[three ? 1 : 0] / kk;
    want[nd++] = in[0], want[nd++] = in[1];
    if (!has_shape(y, want, nd)) {
        char a[200], b[200];
        return invalid(c, "Shape of out should be %s, but current is %s.", tv_shape_text(want, nd, a, sizeof a),
                       tv_shape_text(y->shape, y->ndim, b, sizeof b));
    }
    if (pyaclnn_stub_numel(g) == 0) {
        c->nothing = c->done = 1;
        return ACLNN_SUCCESS;
    }
    fill_params(c, s, 2, three ? g->shape[0] : 1, want[nd - 3], in[0], in[1], 0, 0);
    im2col_params *p = (im2col_params *)c->params;
    p->oh = grid(in[0], k[0], p->d[0], p->p[0], p->s[0]), p->ow = grid(in[1], k[1], p->d[1], p->p[1], p->s[1]);
    return ACLNN_SUCCESS;
}
