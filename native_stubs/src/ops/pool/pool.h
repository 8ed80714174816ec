/* What the 2-D pools (avg_pool.c, max_pool.c) share: the planes of a 3-D (C, H, W) or 4-D (N, C, H, W) self,
 * the pooled output shape, and the format checks of their op_apis. */
#ifndef PYACLNN_OPS_POOL_H
#define PYACLNN_OPS_POOL_H

#include <stdlib.h>

#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"

typedef struct {
    int is3;                     /* 3-D self: no batch dim */
    int64_t nb, ch, h, w;        /* batch (1 for 3-D), channels, plane height and width */
} pool_dims;

static inline pool_dims pool_dims_of(const pyaclnn_stub_tensor *x) {
    int is3 = x->ndim == 3;
    return (pool_dims){is3, is3 ? 1 : x->shape[0], x->shape[is3 ? 0 : 1], x->shape[is3 ? 1 : 2],
                       x->shape[is3 ? 2 : 3]};
}

/* 161002 "Given input size ..., calc out size ..." unless the pooled plane has elements; else the output
 * shape ([N,] C, oh, ow) into shape. */
static inline aclnnStatus pool_out_shape(op_call *c, const pool_dims *d, int64_t oh, int64_t ow, int64_t *shape) {
    if (oh <= 0 || ow <= 0)
        return op_invalidf(c->api, "Given input size %lldx%lldx%lld, calc out size %lldx%lldx%lld", (long long)d->ch,
                           (long long)d->h, (long long)d->w, (long long)d->ch, (long long)oh, (long long)ow);
    int k = 0;
    if (!d->is3) shape[k++] = d->nb;
    shape[k++] = d->ch;
    shape[k++] = oh;
    shape[k] = ow;
    return ACLNN_SUCCESS;
}

/* PoolingOutShape: (in + 2 pad - extent + (ceil ? stride - 1 : 0)) / stride + 1 with extent = dil * (k - 1) + 1, the
 * quotient rounded down (max pool: torch's div_rtn) or toward zero (avg pool: the vendor's integer division); ceil
 * mode drops a last window that starts in the padding. Saturating arithmetic: a caller's attributes near the int64
 * limits give a size the checks refuse, never an overflow. */
static inline int64_t pool_out_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil, int ceil_mode,
                                    int round_down) {
    if (stride <= 0) return 0;                          /* refused before; no division by zero or by -1 */
    int64_t extent = op_add_sat(op_mul_sat(dil, op_sub_sat(k, 1)), 1);
    int64_t num = op_sub_sat(op_add_sat(in, op_mul_sat(2, pad)), extent);
    if (ceil_mode) num = op_add_sat(num, stride - 1);
    int64_t q = num / stride;
    if (round_down && num % stride < 0) q--;
    int64_t o = op_add_sat(q, 1);
    if (ceil_mode && op_mul_sat(o - 1, stride) >= op_add_sat(in, pad)) o--;
    return o;
}

/* NCHW or NCL (or ND, the emulator's plain tensors) */
static inline int pool_channels_first(aclFormat f) {
    return f == ACL_FORMAT_NCHW || f == ACL_FORMAT_NCL || f == ACL_FORMAT_ND;
}

/* 161002 "<p> format should be NCHW or NCL ..." for the first of the step's first n operands that is not. */
static inline aclnnStatus pool_formats_channels_first(op_call *c, const op_step *s, int n) {
    char a[24];
    for (int k = 0; k < n; k++)
        if (!pool_channels_first(op_tensor(c, s, k)->format))
            return op_invalidf(c->api, "%s format should be NCHW or NCL. Actual: %s is [%s].", op_pname(c, s, k),
                               op_pname(c, s, k), op_format_name(op_tensor(c, s, k)->format, a));
    return ACLNN_SUCCESS;
}

/* 161002 "Format of input and out should be equal, ..." (the avg pools' CheckFormat) when x and y differ. */
static inline aclnnStatus pool_same_format(op_call *c, const pyaclnn_stub_tensor *x, const pyaclnn_stub_tensor *y) {
    char a[24], b[24];
    if (x->format == y->format) return ACLNN_SUCCESS;
    return op_invalidf(c->api, "Format of input and out should be equal, input [%s], out [%s].",
                       op_format_name(x->format, a), op_format_name(y->format, b));
}

/* The vendor's CheckOutputSize step of the 2-D adaptive max pool and max unpool (adaptive_max.c, unpool.c):
 * outputSize holds exactly 2 values, each positive. */
static inline aclnnStatus pool_output_size2(op_call *c, int param) {
    uint64_t n = c->ints[param].n;
    const int64_t *os = c->ints[param].v;
    if (n != 2) return op_invalidf(c->api, "outputSize length should be 2, but now is %llu.", (unsigned long long)n);
    for (int i = 0; i < 2; i++)
        if (os[i] <= 0)
            return op_invalidf(c->api, "outputSize value should greater than 0, but the sizes of %d is %lld.", i,
                               (long long)os[i]);
    return ACLNN_SUCCESS;
}

/* The backward of a pooling with indices (adaptive_max.c, max_pool3d.c): inputs gradOutput and indices (planes x
 * osp), output gradInput (planes x isp); each gradient added at its index in float64, one rounding. */
static inline void pool_index_scatter(const pyaclnn_stub_launch *launch, int64_t planes, int64_t isp, int64_t osp) {
    double *dy = tv_load_double(&launch->inputs[0]), *ix = tv_load_double(&launch->inputs[1]);
    double *dx = calloc((size_t)(planes * isp) + 1, sizeof(double));
    if (dy == NULL || ix == NULL || dx == NULL) {
        tv_fail_oom(launch);
    } else {
        for (int64_t pl = 0; pl < planes; pl++)
            for (int64_t o = 0; o < osp; o++) {
                int64_t at = (int64_t)ix[pl * osp + o];
                if (at >= 0 && at < isp) dx[pl * isp + at] += dy[pl * osp + o];
            }
        tv_store_double(&launch->outputs[0], dx);
    }
    free(dy), free(ix), free(dx);
}

#endif
