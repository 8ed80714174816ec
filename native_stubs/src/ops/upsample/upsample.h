/* What the 2-D upsampling operators (nearest.c, bilinear.c) share: the geometry of an NCHW (ND taken as NCHW:
 * the emulator's plain tensors) or NHWC image and its resized image, the element offset of (n, c, h, w) in
 * either layout, and the source-index scale of one axis as the vendor's tilings compute it. */
#ifndef PYACLNN_OPS_UPSAMPLE_H
#define PYACLNN_OPS_UPSAMPLE_H

#include <stdlib.h>

#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"

typedef struct {
    int64_t n, ch, ih, iw, oh, ow;   /* batch, channels, input (the small side of a backward) and output planes */
    int nhwc;                        /* layout of both images                                                   */
    float sh, sw;                    /* source index = f(destination index * s) per axis                       */
    int copy;                        /* nearest: input and output planes equal: the identity                    */
    int align;                       /* bilinear: alignCorners (else half-pixel centres)                       */
    int wide;                        /* DOUBLE: computed in float64 (the AI CPU kernels)                        */
} up_params;

static inline up_params *up_block(op_call *c) {
    return c->params_size ? (up_params *)c->params : op_params(c, sizeof(up_params));
}

/* 1 for NHWC, 0 for NCHW or ND, -1 for any other format */
static inline int up_layout(aclFormat f) {
    return f == ACL_FORMAT_NHWC ? 1 : (f == ACL_FORMAT_NCHW || f == ACL_FORMAT_ND) ? 0 : -1;
}

/* offset of (n, c, h, w) in an image of plane H x W */
static inline int64_t up_at(const up_params *p, int64_t n, int64_t c, int64_t h, int64_t w, int64_t H, int64_t W) {
    return p->nhwc ? ((n * H + h) * W + w) * p->ch + c : ((n * p->ch + c) * H + h) * W + w;
}

/* (H, W) dims of a 4-D shape in a layout */
static inline int64_t up_h(const int64_t *shape, int nhwc) { return shape[nhwc ? 1 : 2]; }
static inline int64_t up_w(const int64_t *shape, int nhwc) { return shape[nhwc ? 2 : 3]; }

/* The scale of an axis (not align-corners): 1 / scale in fp32 when the caller's scale is positive, else
 * in / out in fp32 (the arch35 tilings' ComputeScale / SetScales). */
static inline float up_scale(double scale, int64_t in, int64_t out) {
    return scale > 0 ? 1.0f / (float)scale : (float)in / (float)out;
}

/* the geometry of image `x` [N, C, H, W] / [N, H, W, C] resized to (oh, ow) */
static inline void up_geometry(up_params *p, const pyaclnn_stub_tensor *x, int nhwc, int64_t oh, int64_t ow) {
    p->nhwc = nhwc;
    p->n = x->shape[0];
    p->ch = x->shape[nhwc ? 3 : 1];
    p->ih = up_h(x->shape, nhwc);
    p->iw = up_w(x->shape, nhwc);
    p->oh = oh;
    p->ow = ow;
}

/* A launch: src (input 0, loaded as float64) -> dst, the output (forward: N*C*OH*OW elements) or, `back`, the
 * gradient (N*C*H*W elements, summed in fp32 by fn into acc); fn(p, src, dst, acc) fills dst or acc. */
typedef void up_fn(const up_params *p, const double *src, double *dst, float *acc);

static inline void up_run(const pyaclnn_stub_launch *launch, int back, up_fn *fn) {
    if (!tv_launch_views_ok(launch)) return;
    const up_params *p = launch->params;
    size_t n_in = (size_t)(p->n * p->ch * p->ih * p->iw), n_out = (size_t)(p->n * p->ch * p->oh * p->ow);
    size_t n_dst = back ? n_in : n_out;
    double *src = tv_load_double(&launch->inputs[0]);
    double *dst = (double *)calloc(n_dst + 1, sizeof(double));
    float *acc = back ? (float *)calloc(n_dst + 1, sizeof(float)) : NULL;
    if (src == NULL || dst == NULL || (back && acc == NULL)) {
        tv_fail_oom(launch);
    } else {
        fn(p, src, dst, acc);
        for (size_t k = 0; back && k < n_dst; k++) dst[k] = acc[k];
        tv_store_double(&launch->outputs[0], dst);
    }
    free(src), free(dst), free(acc);
}

#endif
