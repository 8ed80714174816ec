/*
 * aclnnUpsampleLinear1d, aclnnUpsampleTrilinear3d, aclnnUpsampleNearest3d and their backwards: torch's
 * upsample_linear1d / upsample_trilinear3d / upsample_nearest3d (F.interpolate on 3-D and 5-D inputs) on the NPU
 * (hicann/ops-cv image/upsample_linear1d, upsample_bilinear2d_grad (the 1-D backward), resize_upsample_trilinear,
 * upsample_trilinear3d_backward, upsample_nearest3d, upsample_nearest3d_grad op_api).
 *
 * Images are [N, C, L] or [N, C, D, H, W] (ND / NCL / NCDHW: the emulator's plain tensors). Axis scale s in fp32:
 * linear: 1 for an axis whose size does not change (the op_apis' ViewCopy / AsComputeScale), alignCorners
 * (in - 1) / (out - 1) (0 for out == 1), else 1.0f / scale when scale > 0, else in / out;
 * nearest: (float)(1.0 / scale) when the three scales are > 0 (the op_api's cast list), else in / out.
 * Linear: source coordinate align d * s, else max((d + 0.5) * s - 0.5, 0), i0 = min(floor, in - 1),
 * i1 = min(i0 + 1, in - 1), lambda = src - i0, and out = the nested lerps (1 - l) * a + l * b, W innermost, each
 * step in fp32 (float64 for DOUBLE) -- torch's formula, not a vendor kernel's (their SIMT steps are not modelled).
 * Nearest: out copies input min(floorf(d * s), in - 1) per axis. Backwards: each gradOut element adds weight * g
 * (the product of its axes' lambdas, D outer) to its sources in fp32, in gradOut's row-major order, one rounding.
 * Definitions: resize.toml.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"

typedef struct {
    int dims, nearest, align, wide;
    int64_t planes;
    int64_t in[3], out[3];       /* per axis: 0 = the last (W / L), 1 = H, 2 = D */
    float s[3];
} rz_params;

static inline double rd(int wide, double v) { return wide ? v : (double)(float)v; }
#define R(v) rd(p->wide, (v))

typedef struct {
    int64_t i0, i1;
    double l;
} rz_tap;

static rz_tap tap_of(const rz_params *p, int a, int64_t d) {
    int64_t in = p->in[a];
    if (p->nearest) {
        int64_t i = (int64_t)floorf((float)d * p->s[a]);
        i = i < in - 1 ? i : in - 1;
        return (rz_tap){i, i, 0};
    }
    double src = p->align ? R((double)d * p->s[a]) : R(R(R((double)d + 0.5) * p->s[a]) - 0.5);
    if (src < 0) src = 0;
    int64_t i0 = (int64_t)floor(src);
    i0 = i0 < in - 1 ? i0 : in - 1;
    return (rz_tap){i0, i0 < in - 1 ? i0 + 1 : i0, R(src - (double)i0)};
}

/* the value at output taps t[] of axes a..0 over input plane x with the outer axes' offset `base` */
static double lerp(const rz_params *p, const double *x, const rz_tap *t, int a, int64_t base) {
    int64_t lo = base * p->in[a] + t[a].i0, hi = base * p->in[a] + t[a].i1;
    double v0 = a == 0 ? x[lo] : lerp(p, x, t, a - 1, lo), v1 = a == 0 ? x[hi] : lerp(p, x, t, a - 1, hi);
    if (p->nearest) return v0;
    return R(R(R(1 - t[a].l) * v0) + R(t[a].l * v1));
}

/* adds w * g to the sources of taps t[] of axes a..0 (w: the outer axes' weight product so far, NAN: none yet) */
static void spread(const rz_params *p, double *acc, const rz_tap *t, int a, int64_t base, double w, double g) {
    int64_t lo = base * p->in[a] + t[a].i0, hi = base * p->in[a] + t[a].i1;
    double l = p->nearest ? 0 : t[a].l, w0 = isnan(w) ? R(1 - l) : R(w * R(1 - l)), w1 = isnan(w) ? l : R(w * l);
    if (a == 0) {
        acc[lo] = R(acc[lo] + R(w0 * g));
        if (!p->nearest) acc[hi] = R(acc[hi] + R(w1 * g));
        return;
    }
    spread(p, acc, t, a - 1, lo, w0, g);
    if (!p->nearest) spread(p, acc, t, a - 1, hi, w1, g);
}

static void run(const pyaclnn_stub_launch *launch, int back) {
    if (!tv_launch_views_ok(launch)) return;
    const rz_params *p = launch->params;
    int64_t isp = 1, osp = 1;
    for (int a = 0; a < p->dims; a++) isp *= p->in[a], osp *= p->out[a];
    size_t n_dst = (size_t)(p->planes * (back ? isp : osp));
    double *src = tv_load_double(&launch->inputs[0]), *dst = calloc(n_dst + 1, sizeof(double));
    if (src == NULL || dst == NULL) {
        tv_fail_oom(launch);
    } else {
        for (int64_t pl = 0; pl < p->planes; pl++)
            for (int64_t o = 0; o < osp; o++) {
                rz_tap t[3];
                int64_t r = o;
                for (int a = 0; a < p->dims; a++) t[a] = tap_of(p, a, r % p->out[a]), r /= p->out[a];
                if (back) spread(p, dst + pl * isp, t, p->dims - 1, 0, NAN, src[pl * osp + o]);
                else dst[pl * osp + o] = lerp(p, src + pl * isp, t, p->dims - 1, 0);
            }
        tv_store_double(&launch->outputs[0], dst);
    }
    free(src), free(dst);
}

void upsample_resize_kernel(const pyaclnn_stub_launch *launch) { run(launch, 0); }
void upsample_resize_backward_kernel(const pyaclnn_stub_launch *launch) { run(launch, 1); }

/* ---- steps ------------------------------------------------------------------------------------ */

#define invalid(c, ...) op_invalidf((c)->api, __VA_ARGS__)
#define INTS(c, s, k) ((c)->ints[(s)->p[k]])

/* rz_osize outputSize N "format": outputSize has N values, else the message "format" (one %llu: its size). */
aclnnStatus opc_rz_osize(op_call *c, const op_step *s) {
    if (INTS(c, s, 0).n == (uint64_t)s->n) return ACLNN_SUCCESS;
    return invalid(c, s->text, (unsigned long long)INTS(c, s, 0).n);
}

/* rz_elements self outputSize out (CheckInputElement / CheckShape's sizes): non-empty C and input axes, positive
 * output sizes, out [N, C, outputSize...] (the 1-D and 3-D forwards' messages). */
aclnnStatus opc_rz_elements(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0), *y = op_tensor(c, s, 2);
    const int64_t *os = INTS(c, s, 1).v;
    char b[200];
    if (x->ndim == 3) {
        if (x->shape[1] == 0 || x->shape[2] == 0)
            return invalid(c, "Non-empty 3D data tensor expected but got a tensor with sizes %s.",
                           tv_shape_text(x->shape, x->ndim, b, sizeof b));
        if (os[0] <= 0) return invalid(c, "Input and output sizes should greater than 0,but got output (L: %lld)", (long long)os[0]);
        int64_t full[3] = {x->shape[0], x->shape[1], os[0]};
        for (int i = 0; i < 3; i++)
            if (y->shape[i] != full[i])
                return invalid(c, "Expected out to have shapesize(%d) = %lld but got out.size(%d) = %lld", i,
                               (long long)full[i], i, (long long)y->shape[i]);
        return ACLNN_SUCCESS;
    }
    if (x->shape[2] <= 0 || x->shape[3] <= 0 || x->shape[4] <= 0 || os[0] <= 0 || os[1] <= 0 || os[2] <= 0)
        return invalid(c, "Input and output sizes should greater than 0, but got input (D: %lld, H: %lld, W: %lld) output "
                       "(D: %lld, H: %lld, W: %lld)", (long long)x->shape[2], (long long)x->shape[3],
                       (long long)x->shape[4], (long long)os[0], (long long)os[1], (long long)os[2]);
    if (x->shape[1] <= 0)
        return invalid(c, "Non-empty 5D data tensor expected but got a tensor with sizes %s.",
                       tv_shape_text(x->shape, x->ndim, b, sizeof b));
    return ACLNN_SUCCESS;
}

/* rz_out_shape self outputSize out: out is [N, C, outputSize...] (OP_CHECK_SHAPE_NOT_EQUAL_WITH_EXPECTED_SIZE). */
aclnnStatus opc_rz_out_shape(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0);
    int64_t want[5] = {x->shape[0], x->shape[1]};
    for (uint64_t i = 0; i < INTS(c, s, 1).n && i < 3; i++) want[2 + i] = INTS(c, s, 1).v[i];
    return op_expected_size(c->api, op_pname(c, s, 2), op_tensor(c, s, 2), want, 2 + (int64_t)INTS(c, s, 1).n);
}

/* rzb_sizes gradOut outputSize inputSize gradInput N: outputSize of N values, inputSize of N + 2, positive sizes,
 * gradOut [inputSize[0], inputSize[1], outputSize...], gradInput inputSize. */
aclnnStatus opc_rzb_sizes(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *go = op_tensor(c, s, 0);
    uint64_t no = INTS(c, s, 1).n, ni = INTS(c, s, 2).n, d = (uint64_t)s->n;
    if (no != d)
        return invalid(c, "It is expected output_size equals to %llu, but got size %llu", (unsigned long long)d,
                       (unsigned long long)no);
    if (ni != d + 2)
        return invalid(c, "It is expected input_size equals to %llu, but got size %llu", (unsigned long long)(d + 2),
                       (unsigned long long)ni);
    const int64_t *os = INTS(c, s, 1).v, *is = INTS(c, s, 2).v;
    int pos = 1;
    for (uint64_t i = 0; i < d; i++) pos = pos && os[i] > 0 && is[2 + i] > 0;
    if (!pos) {
        if (d == 1)
            return invalid(c, "Input and output sizes should greater than 0, but got input (L: %lld), output (L: %lld)",
                           (long long)is[2], (long long)os[0]);
        return invalid(c, "Input and output sizes should greater than 0, but got input (H: %lld, W: %lld) output (H: %lld, "
                       "W: %lld)", (long long)is[3], (long long)is[4], (long long)os[1], (long long)os[2]);
    }
    int64_t full[5] = {is[0], is[1]};
    for (uint64_t i = 0; i < d; i++) full[2 + i] = os[i];
    for (int64_t i = 0; i < go->ndim && i < (int64_t)d + 2; i++)
        if (go->shape[i] != full[i])
            return invalid(c, "Expected grad_output to have the same shape as output; output.size(%lld) = %lld but got "
                           "grad_output.size(%lld) = %lld", (long long)i, (long long)full[i], (long long)i,
                           (long long)go->shape[i]);
    return op_expected_size(c->api, op_pname(c, s, 3), op_tensor(c, s, 3), is, (int64_t)ni);
}

/* the geometry of `small` (input) resized to `big`; scales from operand k0 on (D, H, W order), align at ka (-1: none) */
static void plan(op_call *c, const op_step *s, const pyaclnn_stub_tensor *small, const pyaclnn_stub_tensor *big,
                 int nearest, int ka, int k0) {
    rz_params *p = op_params(c, sizeof(rz_params));
    p->dims = (int)small->ndim - 2;
    p->nearest = nearest;
    p->align = ka >= 0 && op_argument(c, s, ka)->i != 0;
    p->wide = small->dtype == ACL_DOUBLE;
    p->planes = small->shape[0] * small->shape[1];
    int all = 1;
    for (int a = 0; a < p->dims; a++) all = all && op_argument(c, s, k0 + a)->d > 0;
    for (int a = 0; a < p->dims; a++) {
        int64_t in = small->shape[small->ndim - 1 - a], out = big->shape[big->ndim - 1 - a];
        double sc = op_argument(c, s, k0 + p->dims - 1 - a)->d;
        p->in[a] = in, p->out[a] = out;
        if (nearest) p->s[a] = all ? (float)(1.0 / sc) : (float)in / (float)out;
        else if (in == out) p->s[a] = 1.0f;         /* an unchanged axis: the identity (the op_apis' copy) */
        else if (p->align) p->s[a] = out > 1 ? (float)(in - 1) / (float)(out - 1) : 0.0f;
        else p->s[a] = sc > 0 ? 1.0f / (float)sc : (float)in / (float)out;
    }
}

/* rz_linear_plan self out alignCorners scale... / rz_nearest_plan self out scale...: the forward's geometry. */
aclnnStatus opc_rz_linear_plan(op_call *c, const op_step *s) {
    plan(c, s, op_tensor(c, s, 0), op_tensor(c, s, 1), 0, 2, 3);
    return ACLNN_SUCCESS;
}
aclnnStatus opc_rz_nearest_plan(op_call *c, const op_step *s) {
    plan(c, s, op_tensor(c, s, 0), op_tensor(c, s, 1), 1, -1, 2);
    return ACLNN_SUCCESS;
}

/* rzb_linear_plan gradOut gradInput alignCorners scale... / rzb_nearest_plan gradOut gradInput scale...: the
 * backward's geometry (the input: gradInput). */
aclnnStatus opc_rzb_linear_plan(op_call *c, const op_step *s) {
    plan(c, s, op_tensor(c, s, 1), op_tensor(c, s, 0), 0, 2, 3);
    return ACLNN_SUCCESS;
}
aclnnStatus opc_rzb_nearest_plan(op_call *c, const op_step *s) {
    plan(c, s, op_tensor(c, s, 1), op_tensor(c, s, 0), 1, -1, 2);
    return ACLNN_SUCCESS;
}
