/*
 * aclnnUpsampleNearest2d, aclnnUpsampleNearest2dV2 and aclnnUpsampleNearest2dBackward: torch's
 * upsample_nearest2d (F.interpolate(mode="nearest"), nn.Upsample) on the NPU (hicann/ops-cv
 * image/resize_nearest_neighbor_v2, upsample_nearest3d (the V2 op_api), upsample_nearest2d_grad).
 *
 * Output (h, w) copies input (min(floorf(h * sH), H - 1), min(floorf(w * sW), W - 1)), the product in fp32
 * (the arch35 ResizeNearestNeighborV2 kernel's CalSrcIdx), with
 *   sH = 1.0f / scalesH when the V2's scalesH > 0, else (float)H / (float)OH (its tiling's SetScales);
 *   Atlas A2 (V2, both scales > 0: UpsampleNearest3d): 1 for an axis whose size does not change, 0.5 for a
 *   doubled axis when OH + OW <= 128 (or NHWC with C > 3), else (float)(1.0 / scale);
 *   DOUBLE and UINT8 (AI CPU) and aclnnUpsampleNearest2d: the sizes' ratio;
 *   an unchanged plane (both axes, the SIMT INPUT_EQ_OUTPUT schedule): the identity.
 * The backward adds each gradOut element to the input element it was copied from, in fp32 (for FLOAT16 and
 * BF16 too), plane by plane in row-major order of gradOut (the deterministic SIMT kernel's loop), rounded once.
 * Definitions: nearest.toml (the vendor's checks in its order, with the steps below).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/view.h"
#include "ops/upsample/upsample.h"

/* ---- kernels -------------------------------------------------------------------------------- */

static int64_t source_index(float s, int64_t d, int64_t in) {
    int64_t v = (int64_t)floorf((float)d * s);
    return v < in - 1 ? v : in - 1;
}

/* Every output element in order with the offset of its source element: forward, dst[o] = src[i]; backward
 * (dst zeroed, fp32), dst[i] += src[o]. */
static void walk(const up_params *p, const double *src, double *dst, float *acc, int backward) {
    for (int64_t n = 0; n < p->n; n++)
        for (int64_t c = 0; c < p->ch; c++)
            for (int64_t h = 0; h < p->oh; h++) {
                int64_t sh = p->copy ? h : source_index(p->sh, h, p->ih);
                for (int64_t w = 0; w < p->ow; w++) {
                    int64_t sw = p->copy ? w : source_index(p->sw, w, p->iw);
                    int64_t o = up_at(p, n, c, h, w, p->oh, p->ow), i = up_at(p, n, c, sh, sw, p->ih, p->iw);
                    if (backward) acc[i] += (float)src[o];
                    else dst[o] = src[i];
                }
            }
}

static void forward(const up_params *p, const double *src, double *dst, float *acc) { walk(p, src, dst, acc, 0); }
static void backward(const up_params *p, const double *src, double *dst, float *acc) { walk(p, src, dst, acc, 1); }

void upsample_nearest_kernel(const pyaclnn_stub_launch *launch) { up_run(launch, 0, forward); }
void upsample_nearest_backward_kernel(const pyaclnn_stub_launch *launch) { up_run(launch, 1, backward); }

/* ---- steps ---------------------------------------------------------------------------------- */

#define invalid(c, ...) op_invalidf((c)->api, __VA_ARGS__)
#define INTS(c, s, k) ((c)->ints[(s)->p[k]])

/* up_empty_done p ...: success without a launch (and without the later checks) when an operand is empty. */
aclnnStatus opc_up_empty_done(op_call *c, const op_step *s) {
    for (int k = 0; k < s->np; k++)
        if (pyaclnn_stub_numel(op_tensor(c, s, k)) == 0) c->nothing = c->done = 1;
    return ACLNN_SUCCESS;
}

/* un_shape self outputSize (CheckShape): outputSize of 2, self 4-D, non-empty planes and sizes, C > 0. */
aclnnStatus opc_un_shape(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0);
    char b[200];
    if (INTS(c, s, 1).n != 2)
        return invalid(c, "It is expected output size equals to 2, but got size %llu.", (unsigned long long)INTS(c, s, 1).n);
    if (x->ndim != 4) return invalid(c, "It is expected input size equals to 4, but got size %lld.", (long long)x->ndim);
    const int64_t *os = INTS(c, s, 1).v;
    if (x->shape[2] == 0 || x->shape[3] == 0 || os[0] == 0 || os[1] == 0)
        return invalid(c, "Input and output sizes should be greater than 0, but got input (H: %lld, W: %lld) output "
                       "(H: %lld, W: %lld).", (long long)x->shape[2], (long long)x->shape[3], (long long)os[0],
                       (long long)os[1]);
    if (x->shape[1] == 0)
        return invalid(c, "Non-empty 4D data tensor expected but got a tensor with size %s.",
                       tv_shape_text(x->shape, x->ndim, b, sizeof b));
    return ACLNN_SUCCESS;
}

/* un_format self out (CheckFormatValid, CheckFormatEqual): self NCHW or NHWC (ND as NCHW), out of its format. */
aclnnStatus opc_un_format(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0), *y = op_tensor(c, s, 1);
    char a[24], b[24];
    if (up_layout(x->format) < 0)
        return invalid(c, "Do not support this format [%s] of input.", op_format_name(x->format, a));
    if (x->format != y->format)
        return invalid(c, "Format of input and output should be equal, self [%s], out [%s].",
                       op_format_name(x->format, a), op_format_name(y->format, b));
    return ACLNN_SUCCESS;
}

/* up_nc a b (CheckNCDimValid): a's format NCHW or NHWC (ND as NCHW); a and b of one batch and channel count
 * in that layout. (Emulator: both 4-D first, the vendor reads dims 0..3 of each.) */
aclnnStatus opc_up_nc(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *a = op_tensor(c, s, 0), *b = op_tensor(c, s, 1);
    char t[200];
    int nhwc = up_layout(a->format);
    if (nhwc < 0) return invalid(c, "Input and output format only support [NCHW, NHWC] format .");
    for (int k = 0; k < 2; k++) {
        const pyaclnn_stub_tensor *x = op_tensor(c, s, k);
        if (x->ndim != 4)
            return invalid(c, "Expected 4 dimension input, but got %s with sizes %s.", op_pname(c, s, k),
                           tv_shape_text(x->shape, x->ndim, t, sizeof t));
    }
    int cd = nhwc ? 3 : 1;
    if (a->shape[0] != b->shape[0] || a->shape[cd] != b->shape[cd])
        return invalid(c, "The selfDimN[%lld]/outDimN[%lld] or selfDimC[%lld]/outDimC[%lld] not equal .",
                       (long long)a->shape[0], (long long)b->shape[0], (long long)a->shape[cd], (long long)b->shape[cd]);
    return ACLNN_SUCCESS;
}

/* up_out_size out outputSize [V2] (CheckOutEqual / CheckOutputSize): out's plane (by out's format) is outputSize;
 * the V2 refuses another format ("Do not support this format of input and output.") and prints the NCHW dims in
 * its NHWC message, as the vendor's. */
aclnnStatus opc_up_out_size(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *y = op_tensor(c, s, 0);
    const int64_t *os = INTS(c, s, 1).v;
    int nhwc = up_layout(y->format);
    if (nhwc < 0) return s->n ? invalid(c, "Do not support this format of input and output.") : ACLNN_SUCCESS;
    if (os[0] == up_h(y->shape, nhwc) && os[1] == up_w(y->shape, nhwc)) return ACLNN_SUCCESS;
    int shown = nhwc && !s->n;
    return invalid(c, "Expected output size (H: %lld, W: %lld), but got output tensor size (H: %lld, W: %lld).",
                   (long long)os[0], (long long)os[1], (long long)y->shape[shown ? 1 : 2], (long long)y->shape[shown ? 2 : 3]);
}

/* up_same_layout a b (emulator): both images in one layout (the vendor transposes between them). */
aclnnStatus opc_up_same_layout(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *a = op_tensor(c, s, 0), *b = op_tensor(c, s, 1);
    char x[24], y[24];
    if (up_layout(a->format) == up_layout(b->format)) return ACLNN_SUCCESS;
    return invalid(c, "Format of input and output should be equal, %s [%s], %s [%s].", op_pname(c, s, 0),
                   op_format_name(a->format, x), op_pname(c, s, 1), op_format_name(b->format, y));
}

static int aicore_dtype(aclDataType dt) { return dt == ACL_FLOAT || dt == ACL_FLOAT16 || dt == ACL_BF16; }

/* Atlas A2's computeScale (UpsampleNearest3d with both scales > 0) for one axis. */
static float a2_scale(int64_t in, int64_t out, int64_t other_out, int nhwc_c4, double scale) {
    if (in == out) return 1.0f;
    if (2 * in == out && (nhwc_c4 || out + other_out <= 128)) return 0.5f;
    return (float)(1.0 / (double)(float)scale);
}

/* un_plan self out [scalesH scalesW]: the geometry and the axes' scales (without scales, aclnnUpsampleNearest2d:
 * the sizes' ratios; the V2's as its op_api passes them per SoC and dtype). */
aclnnStatus opc_un_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0), *y = op_tensor(c, s, 1);
    up_params *p = up_block(c);
    int nhwc = up_layout(x->format) == 1;
    up_geometry(p, x, nhwc, up_h(y->shape, nhwc), up_w(y->shape, nhwc));
    p->copy = p->ih == p->oh && p->iw == p->ow;
    double sh = s->np > 2 ? op_argument(c, s, 2)->d : 0, sw = s->np > 3 ? op_argument(c, s, 3)->d : 0;
    if (!aicore_dtype(x->dtype)) sh = sw = 0;
    if (!ew_soc_is_950() && sh > 0 && sw > 0) {
        int c4 = nhwc && p->ch > 3;
        p->sh = a2_scale(p->ih, p->oh, p->ow, c4, sh);
        p->sw = a2_scale(p->iw, p->ow, p->oh, c4, sw);
        return ACLNN_SUCCESS;
    }
    if (!ew_soc_is_950()) sh = sw = 0;
    p->sh = up_scale(sh, p->ih, p->oh);
    p->sw = up_scale(sw, p->iw, p->ow);
    return ACLNN_SUCCESS;
}

/* unb_elements gradOut outputSize inputSize (CheckShape's sizes, CheckInputElements): outputSize of 2,
 * inputSize of 4, positive planes, gradOut the output's shape (by gradOut's format). */
aclnnStatus opc_unb_elements(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *go = op_tensor(c, s, 0);
    const int64_t *os = INTS(c, s, 1).v, *is = INTS(c, s, 2).v;
    int nhwc = go->format == ACL_FORMAT_NHWC;
    int64_t ih = up_h(is, nhwc), iw = up_w(is, nhwc);
    int64_t full[4] = {is[0], is[1], os[0], os[1]};
    if (nhwc) full[1] = os[0], full[2] = os[1], full[3] = is[3];
    if (!(ih > 0 && iw > 0 && os[0] > 0 && os[1] > 0))
        return invalid(c, "Input and output sizes should greater than 0, but got input (H: %lld, W: %lld) output (H: "
                       "%lld, W: %lld)", (long long)ih, (long long)iw, (long long)os[0], (long long)os[1]);
    for (int d = 0; d < 4; d++)
        if (go->shape[d] != full[d])
            return invalid(c, "Expected %s to have the same shape as output; output.size(%d) = %lld but got %s.size(%d) "
                           "= %lld", s->text, d, (long long)full[d], s->text, d, (long long)go->shape[d]);
    return ACLNN_SUCCESS;
}

/* up_sizes gradOut outputSize inputSize (CheckShape): gradOut 4-D, outputSize of 2 and inputSize of 4 values,
 * in the order N (0: outputSize first, the nearest backward; 1: inputSize first, the bilinear one). */
aclnnStatus opc_up_sizes(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *go = op_tensor(c, s, 0);
    char t[200];
    if (go->ndim != 4)
        return invalid(c, "Expected 4 dimension input, but got %s with sizes %s.", op_pname(c, s, 0),
                       tv_shape_text(go->shape, go->ndim, t, sizeof t));
    for (int k = 0; k < 2; k++) {
        int input = s->n ? k == 0 : k == 1;
        uint64_t n = INTS(c, s, input ? 2 : 1).n;
        if (n != (input ? 4u : 2u))
            return invalid(c, "It is expected %s equals to %d, but got size %llu", input ? "input_size" : "output_size",
                           input ? 4 : 2, (unsigned long long)n);
    }
    return ACLNN_SUCCESS;
}

/* up_grad_input gradInput inputSize (CheckReduceOutShape): gradInput of inputSize's shape. */
aclnnStatus opc_up_grad_input(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *gi = op_tensor(c, s, 0);
    const int64_t *is = INTS(c, s, 1).v;
    char a[200], b[200];
    int same = gi->ndim == 4;
    for (int d = 0; same && d < 4; d++) same = gi->shape[d] == is[d];
    if (same) return ACLNN_SUCCESS;
    return invalid(c, "The out tensor's shape[%s] is not equal with inferOut shape[%s].",
                   tv_shape_text(gi->shape, gi->ndim, a, sizeof a), tv_shape_text(is, 4, b, sizeof b));
}

/* unb_plan gradOut gradInput scalesH scalesW: the geometry (input: gradInput; output: gradOut) and the axes'
 * scales, 1.0f / scale when positive else the sizes' ratio (the arch35 ResizeNearestNeighborV2Grad tiling;
 * Atlas A2's kernels for the same rule are not modelled apart). */
aclnnStatus opc_unb_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *go = op_tensor(c, s, 0), *gi = op_tensor(c, s, 1);
    up_params *p = up_block(c);
    int nhwc = up_layout(gi->format) == 1;
    up_geometry(p, gi, nhwc, up_h(go->shape, nhwc), up_w(go->shape, nhwc));
    p->sh = up_scale(op_argument(c, s, 2)->d, p->ih, p->oh);
    p->sw = up_scale(op_argument(c, s, 3)->d, p->iw, p->ow);
    return ACLNN_SUCCESS;
}
