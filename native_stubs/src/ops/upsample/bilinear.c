/*
 * aclnnUpsampleBilinear2d and aclnnUpsampleBilinear2dBackwardV2: torch's upsample_bilinear2d
 * (F.interpolate(mode="bilinear")) on the NPU (hicann/ops-cv image/upsample_bilinear2d, upsample_bilinear2d_grad
 * op_api; the arch35 ResizeBilinearV2 / ResizeBilinearV2Grad SIMT kernels).
 *
 * Axis scale s: alignCorners: (in - 1) / (out - 1) in fp32 (out > 1; else in / out forward, 0 backward), else
 * 1.0f / scale when scale > 0, else (float)in / (float)out. Source coordinate of destination d, in fp32:
 * alignCorners d * s, else (d + 0.5f) * s - 0.5f, clamped at 0; i0 = min(floor, in - 1), lambda = src - floor(src)
 * (backward: clamped to [0, 1] against i0), i1 = min(i0 + 1, in - 1) (forward: min(ceilf(src), in - 1)).
 * Forward: out = (1 - ly) * ((1 - lx) * tl + lx * tr) + ly * ((1 - lx) * bl + lx * br), each step in fp32
 * (float64 for DOUBLE, the AI CPU kernel); an unchanged plane is copied, a 1 x 1 input broadcast and a 1 x 1
 * output takes input (0, 0) (the kernel's ALL_COPY / INPUT_ONE / OUTPUT_ONE scenes -- torch CPU interpolates
 * the centre there). Backward: each gradOut element g adds (1 - lx) * (1 - ly) * g ... to its four sources in
 * fp32, in gradOut's row-major order per plane (the NPU adds atomically, in no published order), one rounding.
 * Definitions: bilinear.toml (the vendor's checks in its order, with the steps below and nearest.c's).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/view.h"
#include "ops/upsample/upsample.h"

/* ---- kernels -------------------------------------------------------------------------------- */

typedef struct {
    int64_t i0, i1;
    float l;
} tap;

static tap forward_tap(const up_params *p, float s, int64_t d, int64_t in) {
    float src = p->align ? (float)d * s : ((float)d + 0.5f) * s - 0.5f;
    if (src < 0.0f) src = 0.0f;
    int64_t lo = (int64_t)floorf(src), hi = (int64_t)ceilf(src);
    return (tap){lo < in - 1 ? lo : in - 1, hi < in - 1 ? hi : in - 1, src - floorf(src)};
}

static tap backward_tap(const up_params *p, float s, int64_t d, int64_t in) {
    float off = p->align ? 0.0f : 0.5f;
    float src = ((float)d + off) * s - off;
    if (src < 0.0f) src = 0.0f;
    int64_t lo = (int64_t)floorf(src);
    lo = lo < in - 1 ? lo : in - 1;
    float l = fminf(fmaxf(src - (float)lo, 0.0f), 1.0f);
    return (tap){lo, lo < in - 1 ? lo + 1 : lo, l};
}

static double lerp2(const up_params *p, const double *x, int64_t n, int64_t c, tap th, tap tw) {
    int64_t H = p->ih, W = p->iw;
    double tl = x[up_at(p, n, c, th.i0, tw.i0, H, W)], tr = x[up_at(p, n, c, th.i0, tw.i1, H, W)];
    double bl = x[up_at(p, n, c, th.i1, tw.i0, H, W)], br = x[up_at(p, n, c, th.i1, tw.i1, H, W)];
    if (p->wide) {
        double lx = tw.l, ly = th.l;
        return (1.0 - ly) * ((1.0 - lx) * tl + lx * tr) + ly * ((1.0 - lx) * bl + lx * br);
    }
    float lx = tw.l, ly = th.l;
    float top = (1.0f - lx) * (float)tl + lx * (float)tr, bottom = (1.0f - lx) * (float)bl + lx * (float)br;
    return (double)((1.0f - ly) * top + ly * bottom);
}

static void forward(const up_params *p, const double *x, double *y, float *unused) {
    (void)unused;
    int copy = p->ih == p->oh && p->iw == p->ow, one_in = p->ih == 1 && p->iw == 1, one_out = p->oh == 1 && p->ow == 1;
    for (int64_t n = 0; n < p->n; n++)
        for (int64_t c = 0; c < p->ch; c++)
            for (int64_t h = 0; h < p->oh; h++)
                for (int64_t w = 0; w < p->ow; w++) {
                    double *o = &y[up_at(p, n, c, h, w, p->oh, p->ow)];
                    if (copy) *o = x[up_at(p, n, c, h, w, p->ih, p->iw)];
                    else if (one_in || one_out) *o = x[up_at(p, n, c, 0, 0, p->ih, p->iw)];
                    else *o = lerp2(p, x, n, c, forward_tap(p, p->sh, h, p->ih), forward_tap(p, p->sw, w, p->iw));
                }
}

static void backward(const up_params *p, const double *dy, double *unused, float *acc) {
    (void)unused;
    for (int64_t n = 0; n < p->n; n++)
        for (int64_t c = 0; c < p->ch; c++)
            for (int64_t h = 0; h < p->oh; h++) {
                tap th = backward_tap(p, p->sh, h, p->ih);
                for (int64_t w = 0; w < p->ow; w++) {
                    tap tw = backward_tap(p, p->sw, w, p->iw);
                    float g = (float)dy[up_at(p, n, c, h, w, p->oh, p->ow)], lx = tw.l, ly = th.l;
                    float lx1 = 1.0f - lx, ly1 = 1.0f - ly;
                    acc[up_at(p, n, c, th.i0, tw.i0, p->ih, p->iw)] += lx1 * ly1 * g;
                    acc[up_at(p, n, c, th.i0, tw.i1, p->ih, p->iw)] += lx * ly1 * g;
                    acc[up_at(p, n, c, th.i1, tw.i0, p->ih, p->iw)] += lx1 * ly * g;
                    acc[up_at(p, n, c, th.i1, tw.i1, p->ih, p->iw)] += lx * ly * g;
                }
            }
}

void upsample_bilinear_kernel(const pyaclnn_stub_launch *launch) { up_run(launch, 0, forward); }
void upsample_bilinear_backward_kernel(const pyaclnn_stub_launch *launch) { up_run(launch, 1, backward); }

/* ---- steps ---------------------------------------------------------------------------------- */

#define invalid(c, ...) op_invalidf((c)->api, __VA_ARGS__)
#define INTS(c, s, k) ((c)->ints[(s)->p[k]])

/* ub_format self out (CheckFormat): one format, NCHW or NHWC (ND as NCHW), both 4-D, DOUBLE only in NHWC. */
aclnnStatus opc_ub_format(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0), *y = op_tensor(c, s, 1);
    char a[24], b[24], t[200];
    if (x->format != y->format)
        return invalid(c, "Format of input and output should be equal, self [%s], out [%s].",
                       op_format_name(x->format, a), op_format_name(y->format, b));
    if (up_layout(x->format) < 0)
        return invalid(c, "Do not support this format(%s) of input and output.", op_format_name(x->format, a));
    for (int k = 0; k < 2; k++)
        if (op_tensor(c, s, k)->ndim != 4)
            return invalid(c, "Expected 4 dimension input, but got %s with sizes %s.", op_pname(c, s, k),
                           tv_shape_text(op_tensor(c, s, k)->shape, op_tensor(c, s, k)->ndim, t, sizeof t));
    if (up_layout(x->format) == 0 && x->dtype == ACL_DOUBLE)
        return invalid(c, "When dtype is %s, only support NHWC format", op_dtype_name(x->dtype, a));
    return ACLNN_SUCCESS;
}

/* ub_scales scalesH scalesW (CheckScalesValid): neither negative. */
aclnnStatus opc_ub_scales(op_call *c, const op_step *s) {
    double h = op_argument(c, s, 0)->d, w = op_argument(c, s, 1)->d;
    if (w < 0 || h < 0)
        return invalid(c, "w scales and h scales cannot be negative , w_scales [%f], h_scales [%f].", w, h);
    return ACLNN_SUCCESS;
}

/* ub_output_size out outputSize (CheckOutputSize): present, 2 values, out's plane. */
aclnnStatus opc_ub_output_size(op_call *c, const op_step *s) {
    if (op_argument(c, s, 1)->p == NULL) return invalid(c, "outputSize must not be null.");
    if (INTS(c, s, 1).n != 2)
        return invalid(c, "outputSize size must be 2, but got %llu.", (unsigned long long)INTS(c, s, 1).n);
    return opc_up_out_size(c, s);
}

/* The axis scale of the SIMT kernels. */
static float axis_scale(int align, double scale, int64_t in, int64_t out, int back) {
    if (!align) return up_scale(scale, in, out);
    if (out > 1) return (float)(in - 1) / (float)(out - 1);
    return back ? 0.0f : (float)in / (float)out;
}

static void plan(op_call *c, const op_step *s, const pyaclnn_stub_tensor *in, const pyaclnn_stub_tensor *out, int back) {
    up_params *p = up_block(c);
    int nhwc = up_layout(in->format) == 1;
    up_geometry(p, in, nhwc, up_h(out->shape, nhwc), up_w(out->shape, nhwc));
    p->align = op_argument(c, s, 2)->i != 0;
    p->wide = in->dtype == ACL_DOUBLE;
    p->sh = axis_scale(p->align, op_argument(c, s, 3)->d, p->ih, p->oh, back);
    p->sw = axis_scale(p->align, op_argument(c, s, 4)->d, p->iw, p->ow, back);
}

/* ub_plan self out alignCorners scalesH scalesW: the geometry and the axes' scales. */
aclnnStatus opc_ub_plan(op_call *c, const op_step *s) {
    plan(c, s, op_tensor(c, s, 0), op_tensor(c, s, 1), 0);
    return ACLNN_SUCCESS;
}

/* ubb_plan gradOut out alignCorners scalesH scalesW: the geometry (input: out) and the axes' scales. */
aclnnStatus opc_ubb_plan(op_call *c, const op_step *s) {
    plan(c, s, op_tensor(c, s, 1), op_tensor(c, s, 0), 1);
    return ACLNN_SUCCESS;
}

/* ubb_format out (CheckFormat): NCHW or NHWC (ND as NCHW). */
aclnnStatus opc_ubb_format(op_call *c, const op_step *s) {
    if (up_layout(op_tensor(c, s, 0)->format) >= 0) return ACLNN_SUCCESS;
    return invalid(c, "do not support this format of input and output.");
}

/* ubb_dtype gradOut inputSize LIST (CheckDtypeValid's first part): gradOut's dtype in LIST unless gradOut
 * already has inputSize's shape. */
aclnnStatus opc_ubb_dtype(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *go = op_tensor(c, s, 0);
    int same = 1;
    for (int64_t d = 0; d < go->ndim && same; d++) same = go->shape[d] == INTS(c, s, 1).v[d];
    if (same) return ACLNN_SUCCESS;
    op_step one = *s;
    one.np = 1;
    return opc_dtype_supported(c, &one);
}
