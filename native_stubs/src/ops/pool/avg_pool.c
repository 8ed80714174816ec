/*
 * aclnnAvgPool2d, aclnnAdaptiveAvgPool2d and their backwards: torch's avg_pool2d / adaptive_avg_pool2d on the
 * NPU (hicann/ops-nn pooling/avg_pool3_d, avg_pool3_d_grad, adaptive_avg_pool2d, adaptive_avg_pool2d_grad).
 *
 * self [N, C, H, W] (or [C, H, W]) is P planes; output (i, j) averages a window of rows [r0, r1) and columns
 * [c0, c1) of its plane:
 *   avg_pool2d   r0 = i * sH - pH, r1 = min(r0 + kH, H + pH) (the divisor with padding: (r1 - r0) * (c1 - c0)),
 *                then both clipped to the plane; divisor = divisorOverride, else (countIncludePad ? with
 *                padding : the window's elements)
 *   adaptive     r0 = floor(i * H / OH), r1 = ceil((i + 1) * H / OH), divisor = the window's elements
 * The backwards add gradOutput / divisor over each window. Sums and quotients in float64, one rounding
 * (class c; the NPU sums in fp32 in an unpublished order, on the cube unit for some shapes).
 * Definitions: avg_pool.toml (the vendor's checks in its order, with the steps below).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/view.h"
#include "ops/pool/pool.h"

typedef struct {
    int64_t kh, kw, sh, sw, ph, pw;
    int64_t planes, h, w, oh, ow;
    int adaptive, count_include_pad;
    int64_t divisor;
} ap_params;

static ap_params *ap_block(op_call *c) {
    return c->params_size ? (ap_params *)c->params : op_params(c, sizeof(ap_params));
}

/* ---- kernels -------------------------------------------------------------------------------- */

/* Window of output (i, j): rows [*r0, *r1), columns [*c0, *c1) inside the plane; returns its divisor. */
static double window(const ap_params *p, int64_t i, int64_t j, int64_t *r0, int64_t *r1, int64_t *c0, int64_t *c1) {
    if (p->adaptive) {
        *r0 = i * p->h / p->oh;
        *r1 = ((i + 1) * p->h + p->oh - 1) / p->oh;
        *c0 = j * p->w / p->ow;
        *c1 = ((j + 1) * p->w + p->ow - 1) / p->ow;
        return (double)((*r1 - *r0) * (*c1 - *c0));
    }
    int64_t hs = i * p->sh - p->ph, ws = j * p->sw - p->pw;
    int64_t he = hs + p->kh < p->h + p->ph ? hs + p->kh : p->h + p->ph;
    int64_t we = ws + p->kw < p->w + p->pw ? ws + p->kw : p->w + p->pw;
    int64_t padded = (he - hs) * (we - ws);
    *r0 = hs > 0 ? hs : 0;
    *c0 = ws > 0 ? ws : 0;
    *r1 = he < p->h ? he : p->h;
    *c1 = we < p->w ? we : p->w;
    if (p->divisor != 0) return (double)p->divisor;
    return (double)(p->count_include_pad ? padded : (*r1 - *r0) * (*c1 - *c0));
}

/* Every window of every plane, in order: forward, y = the sum of x over the window / its divisor; backward
 * (dx zeroed first), dy / the divisor added to dx over the window. */
static void walk_windows(const ap_params *p, const double *src, double *dst, int backward) {
    int64_t hw = p->h * p->w, ohw = p->oh * p->ow;
    for (int64_t pl = 0; pl < p->planes; pl++)
        for (int64_t o = 0; o < ohw; o++) {
            int64_t r0, r1, c0, c1;
            double div = window(p, o / p->ow, o % p->ow, &r0, &r1, &c0, &c1), sum = 0;
            double v = backward ? src[pl * ohw + o] / div : 0;
            for (int64_t r = r0; r < r1; r++)
                for (int64_t q = c0; q < c1; q++) {
                    if (backward) dst[pl * hw + r * p->w + q] += v;
                    else sum += src[pl * hw + r * p->w + q];
                }
            if (!backward) dst[pl * ohw + o] = sum / div;
        }
}

/* A launch: forward (src = self, dst = out) or backward (src = gradOutput, input 0; dst = gradInput). */
static void pool_run(const pyaclnn_stub_launch *launch, int backward) {
    if (!tv_launch_views_ok(launch)) return;
    const ap_params *p = launch->params;
    double *src = tv_load_double(&launch->inputs[0]);
    double *dst = calloc((size_t)(p->planes * (backward ? p->h * p->w : p->oh * p->ow)) + 1, sizeof(double));
    if (src == NULL || dst == NULL) {
        tv_fail_oom(launch);
    } else {
        walk_windows(p, src, dst, backward);
        tv_store_double(&launch->outputs[0], dst);
    }
    free(src), free(dst);
}

void avg_pool_kernel(const pyaclnn_stub_launch *launch) { pool_run(launch, 0); }
void adaptive_avg_pool_kernel(const pyaclnn_stub_launch *launch) { pool_run(launch, 0); }
void avg_pool_backward_kernel(const pyaclnn_stub_launch *launch) { pool_run(launch, 1); }
void adaptive_avg_pool_backward_kernel(const pyaclnn_stub_launch *launch) { pool_run(launch, 1); }

/* ---- steps ---------------------------------------------------------------------------------- */

#define invalid(c, ...) op_invalidf((c)->api, __VA_ARGS__)

#define INTS(c, s, k) ((c)->ints[(s)->p[k]])


/* ap_format self out: NCHW / NCL (ND too), the 4-D ones NCHW, the 3-D ones NCL. */
aclnnStatus opc_ap_format(op_call *c, const op_step *s) {
    char a[24], b[24];
    aclnnStatus rc = pool_formats_channels_first(c, s, 2);
    if (rc) return rc;
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0), *y = op_tensor(c, s, 1);
    aclFormat want = x->ndim == 4 ? ACL_FORMAT_NCHW : ACL_FORMAT_NCL;
    if ((x->ndim == 3 || x->ndim == 4) && ((x->format != want && x->format != ACL_FORMAT_ND) ||
                                           (y->format != want && y->format != ACL_FORMAT_ND)))
        return invalid(c, "self and out should all be %s when %dD. Actual: self [%s], out [%s].",
                       x->ndim == 4 ? "NCHW" : "NCL", (int)x->ndim, op_format_name(x->format, a), op_format_name(y->format, b));
    return ACLNN_SUCCESS;
}

/* ap_values self out kernel stride padding (CheckValue): kernel and stride values > 0, padding >= 0. */
aclnnStatus opc_ap_values(op_call *c, const op_step *s) {
    for (uint64_t i = 0; i < INTS(c, s, 2).n; i++)
        if (INTS(c, s, 2).v[i] <= 0) return invalid(c, "Dim value of kernel is less than or equal to 0.");
    for (uint64_t i = 0; i < INTS(c, s, 3).n; i++)
        if (INTS(c, s, 3).v[i] <= 0) return invalid(c, "Dim value of stride is less than or equal to 0.");
    for (uint64_t i = 0; i < INTS(c, s, 4).n; i++)
        if (INTS(c, s, 4).v[i] < 0) return invalid(c, "Dim value of padding is negtive.");
    return ACLNN_SUCCESS;
}

/* The attributes: kernel (1 or 2 values), stride (0: the kernel, 1 or 2), padding (1 or 2). */
static void attrs(ap_params *p, const int64_t *k, uint64_t nk, const int64_t *st, uint64_t ns, const int64_t *pd,
                  uint64_t np) {
    p->kh = k[0];
    p->kw = nk == 1 ? p->kh : k[1];
    p->sh = ns == 0 ? p->kh : st[0];
    p->sw = ns == 0 ? p->kw : (ns == 1 ? p->sh : st[1]);
    p->ph = np > 0 ? pd[0] : 0;
    p->pw = np > 1 ? pd[1] : p->ph;
}

/* CheckPaddingValidAvgPool2D: each padding at most half its kernel size. */
static aclnnStatus padding_at_most_half(op_call *c, const ap_params *p) {
    if (p->kh < op_mul_sat(2, p->ph))
        return invalid(c, "value of paddingH should be at most half of kernelH. Actual: paddingH is [%lld],kernelH is "
                       "[%lld].", (long long)p->ph, (long long)p->kh);
    if (p->kw < op_mul_sat(2, p->pw))
        return invalid(c, "value of paddingW should be at most half of kernelW. Actual: paddingW is [%lld],kernelW is "
                       "[%lld].", (long long)p->pw, (long long)p->kw);
    return ACLNN_SUCCESS;
}

/* Planes, the plane and the pooled output shape of a 3-D / 4-D self into shape. */
static aclnnStatus pooled_shape(op_call *c, const pyaclnn_stub_tensor *x, int ceil_mode, int64_t *shape) {
    ap_params *p = ap_block(c);
    pool_dims d = pool_dims_of(x);
    p->h = d.h;
    p->w = d.w;
    p->planes = d.nb * d.ch;
    if (d.ch == 0 || p->h == 0 || p->w == 0)
        return invalid(c, "Expected tensor with optional 0 dim batch size,                     but got nInputPlane:%lld, "
                       "height:%lld, width:%lld", (long long)d.ch, (long long)p->h, (long long)p->w);
    p->oh = pool_out_size(p->h, p->kh, p->ph, p->sh, 1, ceil_mode, 0);
    p->ow = pool_out_size(p->w, p->kw, p->pw, p->sw, 1, ceil_mode, 0);
    return pool_out_shape(c, &d, p->oh, p->ow, shape);
}

/* ap_shape self out kernel stride padding ceilMode (CheckShape): 3-D or 4-D alike, a non-empty plane, the
 * attribute lists' sizes, padding at most half the kernel, out the pooled shape. */
aclnnStatus opc_ap_shape(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0), *y = op_tensor(c, s, 1);
    char b[200];
    if (!((x->ndim == 3 && y->ndim == 3) || (x->ndim == 4 && y->ndim == 4)))
        return invalid(c, "self and out must maintain same format, support 3D or 4D.");
    int is3 = x->ndim == 3;
    if ((is3 && x->shape[0] == 0) || x->shape[1] == 0 || x->shape[2] == 0 || (!is3 && x->shape[3] == 0))
        return invalid(c, "Expected tensor with optional 0 dim batch size for input, but got: %s.",
                       tv_shape_text(x->shape, x->ndim, b, sizeof b));
    uint64_t nk = INTS(c, s, 2).n, ns = INTS(c, s, 3).n, np = INTS(c, s, 4).n;
    if (nk < 1) return invalid(c, "Length of kernel is less than 1.");
    if (np != 1 && np != 2) return invalid(c, "Expected length of padding is 1 or 2, but got %llu.", (unsigned long long)np);
    if (ns > 2) return invalid(c, "Expected length of stride is 0 or 1 or 2, but got: %llu.", (unsigned long long)ns);
    ap_params *p = ap_block(c);
    attrs(p, INTS(c, s, 2).v, nk, INTS(c, s, 3).v, ns, INTS(c, s, 4).v, np);
    aclnnStatus rc = padding_at_most_half(c, p);
    if (rc) return rc;
    int64_t shape[4];
    rc = pooled_shape(c, x, (int)op_argument(c, s, 5)->i, shape);
    return rc ? rc : op_expected_size(c->api, op_pname(c, s, 1), y, shape, x->ndim);
}

/* ap_cube cubeMathType: 0..4 (CheckCubeMathType; the SoCs the emulator knows take fp32 and bf16). */
aclnnStatus opc_ap_cube(op_call *c, const op_step *s) {
    int8_t cube = (int8_t)op_argument(c, s, 0)->i;
    if (cube >= 0 && cube <= 4) return ACLNN_SUCCESS;
    return invalid(c, "The value of cubeMathType only support {0: KEEP_DTYPE, 1: ALLOW_FP32_DOWN_PRECISION, 2: USE_FP16, "
                   "3: USE_HF32, 4: USE_FP32_ADD}, but got %d", (int)cube);
}

/* ap_plan self out countIncludePad divisorOverride: the divisor rule; nothing to launch for an empty tensor. */
aclnnStatus opc_ap_plan(op_call *c, const op_step *s) {
    ap_params *p = ap_block(c);
    p->count_include_pad = op_argument(c, s, 2)->i != 0;
    p->divisor = op_argument(c, s, 3)->i;
    if (pyaclnn_stub_numel(op_tensor(c, s, 0)) == 0 || pyaclnn_stub_numel(op_tensor(c, s, 1)) == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}

/* ap_bw_dtype gradOutput gradInput: one dtype. */
aclnnStatus opc_ap_bw_dtype(op_call *c, const op_step *s) {
    aclDataType a = op_tensor(c, s, 0)->dtype, b = op_tensor(c, s, 1)->dtype;
    char x[24], y[24];
    if (a == b) return ACLNN_SUCCESS;
    return invalid(c, "Dtype of gradOutput and gradInput should be equal, gradOutput [%s], gradInput [%s].",
                   op_dtype_name(a, x), op_dtype_name(b, y));
}

/* ap_bw_format gradOutput self gradInput: NCHW / NCL (ND too) each, gradOutput and gradInput NCHW when 4-D. */
aclnnStatus opc_ap_bw_format(op_call *c, const op_step *s) {
    char a[24], b[24];
    aclnnStatus rc = pool_formats_channels_first(c, s, 3);
    if (rc) return rc;
    const pyaclnn_stub_tensor *go = op_tensor(c, s, 0), *gi = op_tensor(c, s, 2);
    if (go->ndim == 4 && ((go->format != ACL_FORMAT_NCHW && go->format != ACL_FORMAT_ND) ||
                          (gi->format != ACL_FORMAT_NCHW && gi->format != ACL_FORMAT_ND)))
        return invalid(c, "gradOutput and gradInput should all be NCHW when 4D. Actual: gradOutput [%s], gradInput [%s].",
                       op_format_name(go->format, a), op_format_name(gi->format, b));
    return ACLNN_SUCCESS;
}

/* ap_bw_dims gradOutput self gradInput kernel stride padding (CheckDimsVaild). */
aclnnStatus opc_ap_bw_dims(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *go = op_tensor(c, s, 0), *gi = op_tensor(c, s, 2);
    if (!((go->ndim == 3 && gi->ndim == 3) || (go->ndim == 4 && gi->ndim == 4)))
        return invalid(c, "gradOutput and gradInput must be 3D or 4D at the same time.");
    uint64_t nk = INTS(c, s, 3).n, ns = INTS(c, s, 4).n, np = INTS(c, s, 5).n;
    if (nk > 2 || nk == 0)
        return invalid(c, "Dims of kernelSize should be 1 or 2, Actual: Dims of kernelSize is [%llu].", (unsigned long long)nk);
    for (uint64_t i = 0; i < nk; i++)
        if (INTS(c, s, 3).v[i] <= 0) return invalid(c, "Dim value of kernelSize is negative or zero.");
    if (ns > 2) return invalid(c, "Dims of stride should <= 2, Actual: Dims of stride is [%llu].", (unsigned long long)ns);
    for (uint64_t i = 0; i < ns; i++)
        if (INTS(c, s, 4).v[i] <= 0) return invalid(c, "Dim value of stride is negative or zero.");
    if (np > 2) return invalid(c, "Dims of padding should <= 2, Actual: Dims of padding is [%llu].", (unsigned long long)np);
    return ACLNN_SUCCESS;
}

/* ap_bw_padding kernel padding (CheckPaddingValidAvgPool2D). */
aclnnStatus opc_ap_bw_padding(op_call *c, const op_step *s) {
    if (INTS(c, s, 1).n == 0) return invalid(c, "padding is empty");
    ap_params *p = ap_block(c);
    attrs(p, INTS(c, s, 0).v, INTS(c, s, 0).n, NULL, 0, INTS(c, s, 1).v, INTS(c, s, 1).n);
    return padding_at_most_half(c, p);
}

/* ap_bw_cube cubeMathType: 0..3. */
aclnnStatus opc_ap_bw_cube(op_call *c, const op_step *s) {
    int8_t cube = (int8_t)op_argument(c, s, 0)->i;
    if (cube >= 0 && cube <= 3) return ACLNN_SUCCESS;
    return invalid(c, "value of cubeMathType cann't be is not in [KEEP_DTYPE, ALLOW_FP32_DOWN_PRECISION, USE_FP16, "
                   "USE_HF32].");
}

/* ap_bw_shape self gradInput gradOutput kernel stride padding ceilMode: gradInput self's shape; (emulator, its
 * kernel reads it so) gradOutput the pooled shape of self. */
aclnnStatus opc_ap_bw_shape(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0), *gi = op_tensor(c, s, 1), *go = op_tensor(c, s, 2);
    char a[200], b[200];
    int same = x->ndim == gi->ndim;
    for (int64_t d = 0; same && d < x->ndim; d++) same = x->shape[d] == gi->shape[d];
    if (!same)
        return invalid(c, "out tensor's shape[%s] is not equel with inferOut shape[%s]",
                       tv_shape_text(x->shape, x->ndim, a, sizeof a), tv_shape_text(gi->shape, gi->ndim, b, sizeof b));
    if (pyaclnn_stub_numel(x) == 0 || pyaclnn_stub_numel(go) == 0) return ACLNN_SUCCESS;
    ap_params *p = ap_block(c);
    attrs(p, INTS(c, s, 3).v, INTS(c, s, 3).n, INTS(c, s, 4).v, INTS(c, s, 4).n, INTS(c, s, 5).v, INTS(c, s, 5).n);
    int64_t shape[4];
    aclnnStatus rc = pooled_shape(c, x, (int)op_argument(c, s, 6)->i, shape);
    return rc ? rc : op_expected_size(c->api, op_pname(c, s, 2), go, shape, x->ndim);
}

/* aap_shape self out (CheckInputOutputShape): 3-D or 4-D alike, the leading dims equal; (Ascend 950) a non-empty
 * plane. */
aclnnStatus opc_aap_shape(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0), *y = op_tensor(c, s, 1);
    if (x->ndim != 3 && x->ndim != 4) return invalid(c, "Self dims %lld should be in 3 or 4.", (long long)x->ndim);
    if (y->ndim != x->ndim)
        return invalid(c, "Out dims %lld should equal to self dims %lld.", (long long)y->ndim, (long long)x->ndim);
    for (int64_t d = 0; d < y->ndim - 2; d++)
        if (y->shape[d] != x->shape[d])
            return invalid(c, "Out_shape[%lld]: %lld should equal to input_shape[%lld]: %lld", (long long)d,
                           (long long)y->shape[d], (long long)d, (long long)x->shape[d]);
    for (int64_t d = x->ndim - 2; ew_soc_is_950() && d < x->ndim; d++)
        if (x->shape[d] <= 0)
            return invalid(c, "x'dims is invalid, self No.[%lld] dim is not bigger than 0.", (long long)(d + 1));
    return ACLNN_SUCCESS;
}

/* aap_format self out: one format, NCHW (4-D) or NCL (3-D) (ND too). */
aclnnStatus opc_aap_format(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0), *y = op_tensor(c, s, 1);
    char a[24];
    aclnnStatus st = pool_same_format(c, x, y);
    if (st != ACLNN_SUCCESS) return st;
    if (!pool_channels_first(x->format)) return invalid(c, "Format only support NCHW or NCL.");
    for (int k = 0; k < 2; k++) {
        const pyaclnn_stub_tensor *t = op_tensor(c, s, k);
        if ((t->format == ACL_FORMAT_NCL && t->ndim != 3) || (t->format == ACL_FORMAT_NCHW && t->ndim != 4))
            return invalid(c, "%s is %lldD tensor but the format is [%s].", k ? "out" : "self", (long long)t->ndim,
                           op_format_name(t->format, a));
    }
    return ACLNN_SUCCESS;
}

/* aap_output_size outputSize out: 2 values, each out's spatial size (> 0 on Atlas A2/A3, >= 0 on Ascend 950). */
aclnnStatus opc_aap_output_size(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *y = op_tensor(c, s, 1);
    if (INTS(c, s, 0).n != 2) return invalid(c, "OutputSize length should be 2.");
    for (int i = 0; i < 2; i++) {
        int64_t v = INTS(c, s, 0).v[i];
        if ((ew_soc_is_950() ? v < 0 : v <= 0) || v != y->shape[y->ndim - 2 + i])
            return invalid(c, "outputSize value should match the outputShape value and greater than 0.");
    }
    return ACLNN_SUCCESS;
}

/* The adaptive geometry of self / out. */
static void adaptive(op_call *c, const pyaclnn_stub_tensor *x, const pyaclnn_stub_tensor *y) {
    ap_params *p = ap_block(c);
    p->adaptive = 1;
    p->planes = 1;
    for (int64_t d = 0; d < x->ndim - 2; d++) p->planes *= x->shape[d];
    p->h = x->shape[x->ndim - 2];
    p->w = x->shape[x->ndim - 1];
    p->oh = y->shape[y->ndim - 2];
    p->ow = y->shape[y->ndim - 1];
}

/* aap_plan self out: the geometry; nothing to launch for an empty self or out. */
aclnnStatus opc_aap_plan(op_call *c, const op_step *s) {
    adaptive(c, op_tensor(c, s, 0), op_tensor(c, s, 1));
    if (pyaclnn_stub_numel(op_tensor(c, s, 0)) == 0 || pyaclnn_stub_numel(op_tensor(c, s, 1)) == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}

/* aap_bw_dims gradOutput self out: gradOutput and out of self's rank (3-D or 4-D), their leading dims self's;
 * (emulator, its kernel writes it so) out of self's shape. */
aclnnStatus opc_aap_bw_dims(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *go = op_tensor(c, s, 0), *x = op_tensor(c, s, 1), *y = op_tensor(c, s, 2);
    if (go->ndim != x->ndim)
        return invalid(c, "DimNum of inputs should be equal, gradOutput [%lld], self [%lld]", (long long)go->ndim,
                       (long long)x->ndim);
    if (y->ndim != 3 && y->ndim != 4) return invalid(c, "out dims %lld should be in 3 or 4.", (long long)y->ndim);
    if (y->ndim != x->ndim)
        return invalid(c, "DimNum of inputs should be equal, out [%lld], self [%lld]", (long long)y->ndim, (long long)x->ndim);
    for (int64_t d = 0; d < y->ndim - 2; d++) {
        if (y->shape[d] != x->shape[d])
            return invalid(c, "Out_shape[%lld]: %lld should equal to input_shape[%lld]: %lld", (long long)d,
                           (long long)y->shape[d], (long long)d, (long long)x->shape[d]);
        if (go->shape[d] != x->shape[d])
            return invalid(c, "gradOut_Shape[%lld]: %lld should equal to input_shape[%lld]: %lld", (long long)d,
                           (long long)go->shape[d], (long long)d, (long long)x->shape[d]);
    }
    return ew_check_shape(c->api, op_pname(c, s, 2), y, x->shape, x->ndim);
}

/* aap_bw_format gradOutput self: one format, not a private one. */
aclnnStatus opc_aap_bw_format(op_call *c, const op_step *s) {
    aclFormat a = op_tensor(c, s, 0)->format, b = op_tensor(c, s, 1)->format;
    char x[24], y[24];
    if (a != b)
        return invalid(c, "Format of inputs should be equal, gradOutput [%s], self [%s]", op_format_name(a, x),
                       op_format_name(b, y));
    if (!pool_channels_first(a) && a != ACL_FORMAT_NHWC) return invalid(c, "Format don't support private format.");
    return ACLNN_SUCCESS;
}

/* aap_bw_plan self gradOutput out: the geometry (out of gradOutput's windows over self); nothing for an empty
 * self or gradOutput. */
aclnnStatus opc_aap_bw_plan(op_call *c, const op_step *s) {
    adaptive(c, op_tensor(c, s, 0), op_tensor(c, s, 1));
    if (pyaclnn_stub_numel(op_tensor(c, s, 0)) == 0 || pyaclnn_stub_numel(op_tensor(c, s, 1)) == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}
