/*
 * aclnnMaxUnpool2d and aclnnMaxUnpool3d: torch's max_unpool2d / max_unpool3d (nn.MaxUnpool2d, nn.MaxUnpool3d) on
 * the NPU (hicann/ops-nn index/scatter_elements op_api). The vendor reshapes self and indices to [N, C, spatial]
 * and outRef to [N, C, out spatial], zeroes it and runs ScatterElements(axis 2, reduction "none"): each plane's
 * elements land at their indices in row-major order (a repeated index keeps the last write; a negative index
 * counts from the end; one outside the plane is a device fault before anything is written, the scatter engine's
 * rule in kernels/gather.c). Bytes are moved: exact for every dtype. Definitions: unpool.toml.
 */
#include <stdlib.h>
#include <string.h>

#include "kernels/view.h"
#include "ops/pool/pool.h"

typedef struct {
    int64_t planes, isp, osp;    /* planes (N * C), elements of self's plane, of out's plane */
} unpool_params;

static int64_t index_at(const unsigned char *ix, aclDataType dt, int64_t k) {
    return dt == ACL_INT32 ? ((const int32_t *)ix)[k] : ((const int64_t *)ix)[k];
}

/* inputs: self, indices; output: outRef */
void max_unpool_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const unpool_params *p = launch->params;
    const pyaclnn_stub_tensor *x = &launch->inputs[0], *ind = &launch->inputs[1], *out = &launch->outputs[0];
    size_t es = ew_itemsize(x->dtype);
    unsigned char *xs = tv_gather_bytes(x), *ix = tv_gather_bytes(ind);
    unsigned char *ys = tv_alloc(p->planes * p->osp, es);
    if (xs == NULL || ix == NULL || ys == NULL) {
        tv_fail_oom(launch);
        goto done;
    }
    for (int64_t k = 0; k < p->planes * p->isp; k++) {   /* every target first: a fault writes nothing */
        int64_t v = index_at(ix, ind->dtype, k);
        if (v < -p->osp || v >= p->osp) {
            pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "index %lld is out of bounds for dimension 2 with "
                                   "size %lld", (long long)v, (long long)p->osp);
            goto done;
        }
    }
    memset(ys, 0, (size_t)(p->planes * p->osp) * es);
    for (int64_t pl = 0; pl < p->planes; pl++)
        for (int64_t i = 0; i < p->isp; i++) {
            int64_t v = index_at(ix, ind->dtype, pl * p->isp + i);
            if (v < 0) v += p->osp;
            memcpy(ys + (size_t)(pl * p->osp + v) * es, xs + (size_t)(pl * p->isp + i) * es, es);
        }
    tv_scatter_bytes(out, ys);
done:
    free(xs), free(ix), free(ys);
}

/* ---- steps ------------------------------------------------------------------------------------ */

#define invalid(c, ...) op_invalidf((c)->api, __VA_ARGS__)

/* unpool_shape self indices K (CheckShape): self (K + 1)-D or (K + 2)-D, indices of self's rank and shape. */
aclnnStatus opc_unpool_shape(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0), *ix = op_tensor(c, s, 1);
    long long nd = (long long)x->ndim, ni = (long long)ix->ndim;
    if (s->n == 2) {
        if (nd != 3 && nd != 4) return invalid(c, "Expected self to be a 3d or 4d Tensor, instead got: %lld", nd);
        if (nd != ni)
            return invalid(c, "Expected dim of self and indices to be equal, instead got self: %lld, gradOutput: %lld",
                           nd, ni);
    } else {
        if (nd != 4 && nd != 5)
            return invalid(c, "Input to max_unpooling3d should be a 4d or 5d Tensor, but got a tensor with dim %lld", nd);
        if (nd != ni) return invalid(c, "Expected shape of indices to be: %lld, but got: %lld", nd, ni);
    }
    return opc_shape_equal(c, s);
}

/* unpool_nonempty self K (CheckInpuNullTensor / CheckInpuNullTensorMaxUnPool3D): dims 1.. non-empty. */
aclnnStatus opc_unpool_nonempty(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0);
    for (int64_t d = 1; d < x->ndim; d++)
        if (x->shape[d] <= 0) {
            if (s->n == 2)
                return invalid(c, "max_unpool2d():expected input to have non-empty spatiak dimensions, but input has "
                               "sizes %lld with dimension %lld being empty.", (long long)x->ndim, (long long)d);
            return invalid(c, "max_unpool3d(): Expected input to have non-zero size for non-batch dimensions, but got "
                           "%lld with dimension %lld being empty.", (long long)x->ndim, (long long)d);
        }
    return ACLNN_SUCCESS;
}

/* the product of self's last k dims */
static int64_t spatial(const pyaclnn_stub_tensor *x, int k) {
    int64_t n = 1;
    for (int64_t d = x->ndim - k; d < x->ndim; d++) n = op_mul_sat(n, x->shape[d]);
    return n;
}

/* unpool2d_size self outputSize (CheckOutputSize): 2 positive values, OH * OW >= H * W. */
aclnnStatus opc_unpool2d_size(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0);
    aclnnStatus rc = pool_output_size2(c, s->p[1]);
    if (rc) return rc;
    const int64_t *os = c->ints[s->p[1]].v;
    int64_t h = x->shape[x->ndim - 2], w = x->shape[x->ndim - 1];
    if (op_mul_sat(os[0], os[1]) < op_mul_sat(h, w))
        return invalid(c, "The output volums are of size %lld x %lld, should greater than or equal to self of size "
                       "%lld x %lld.", (long long)os[0], (long long)os[1], (long long)h, (long long)w);
    return ACLNN_SUCCESS;
}

/* unpool_out_contiguous outRef (CheckOutContiguous) */
aclnnStatus opc_unpool_out_contiguous(op_call *c, const op_step *s) {
    if (pyaclnn_stub_is_contiguous(op_tensor(c, s, 0))) return ACLNN_SUCCESS;
    return invalid(c, "outRef must be contiguous");
}

/* unpool3d_arrays self outputSize stride padding (CheckIntArrayShapeMaxUnPool3D) */
aclnnStatus opc_unpool3d_arrays(op_call *c, const op_step *s) {
    static const char *const names[3] = {"output_size", "stride", "padding"};
    for (int k = 0; k < 3; k++)
        if (c->ints[s->p[k + 1]].n != 3)
            return invalid(c, "There should be exactly three elements (depth, height, width) in %s, but got %llu "
                           "elements", names[k], (unsigned long long)c->ints[s->p[k + 1]].n);
    const int64_t *os = c->ints[s->p[1]].v, *st = c->ints[s->p[2]].v;
    for (int i = 0; i < 3; i++) {
        if (st[i] <= 0) return invalid(c, "strides[%d] shoule be greater than zero, but got %lld.", i, (long long)st[i]);
        if (os[i] <= 0)
            return invalid(c, "outputSize[%d] should be greater than zero, but got %lld.", i, (long long)os[i]);
    }
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0);
    const int64_t *sh = x->shape + x->ndim - 3;
    if (op_mul_sat(op_mul_sat(os[0], os[1]), os[2]) < spatial(x, 3))
        return invalid(c, "The output dimensions are of size %lld x %lld x %lld, should be greater than or equal to self "
                       "of size %lld x %lld x %lld.", (long long)os[0], (long long)os[1], (long long)os[2],
                       (long long)sh[0], (long long)sh[1], (long long)sh[2]);
    return ACLNN_SUCCESS;
}

/* unpool3d_out self outputSize outRef (CheckOutShape): outRef of self's rank, N and C, and outputSize's D, H, W. */
aclnnStatus opc_unpool3d_out(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0), *y = op_tensor(c, s, 2);
    const int64_t *os = c->ints[s->p[1]].v;
    if (x->ndim != y->ndim)
        return invalid(c, "Out should be same in dimensions with self, but self is %lld, outRef is %lld",
                       (long long)x->ndim, (long long)y->ndim);
    int five = x->ndim == 5;
    long long xn = five ? x->shape[0] : 1, xc = x->shape[five], yn = five ? y->shape[0] : 1, yc = y->shape[five];
    if (xn != yn || xc != yc)
        return invalid(c, "Out should be same in N\xe3\x80\x81" "C dimensions with self, but self N: [%lld]\xe3\x80\x81"
                       "C:[%lld], outRef N: [%lld]\xe3\x80\x81" "C: [%lld]", xn, xc, yn, yc);
    const int64_t *ys = y->shape + y->ndim - 3;
    if (ys[0] != os[0] || ys[1] != os[1] || ys[2] != os[2])
        return invalid(c, "Out should be same in D\xe3\x80\x81H\xe3\x80\x81W dimensions with outputSize, but outputSize "
                       "D: [%lld]\xe3\x80\x81H:[%lld]\xe3\x80\x81W:[%lld], outRef D: [%lld]\xe3\x80\x81H: [%lld]\xe3\x80"
                       "\x81W:[%lld]", (long long)os[0], (long long)os[1], (long long)os[2], (long long)ys[0],
                       (long long)ys[1], (long long)ys[2]);
    return ACLNN_SUCCESS;
}

/* unpool_plan self outputSize outRef K: nothing for an empty self (the vendor's early return); outRef must hold
 * N * C * prod(outputSize) elements (the vendor's Reshape of outRef; else 561103), then the geometry. */
aclnnStatus opc_unpool_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0), *y = op_tensor(c, s, 2);
    int k = (int)s->n;
    if (pyaclnn_stub_numel(x) == 0) {
        c->nothing = c->done = 1;
        return ACLNN_SUCCESS;
    }
    const int64_t *os = c->ints[s->p[1]].v;
    int64_t osp = 1;
    for (int i = 0; i < k; i++) osp = op_mul_sat(osp, os[i]);
    int64_t planes = pyaclnn_stub_numel(x) / spatial(x, k);
    if (op_mul_sat(planes, osp) != pyaclnn_stub_numel(y))
        return op_failf(c->api, ACLNN_ERR_INNER_NULLPTR, "outRef has %lld elements, the reshape to [N, C, %lld] needs "
                        "%lld", (long long)pyaclnn_stub_numel(y), (long long)osp, (long long)op_mul_sat(planes, osp));
    unpool_params *p = op_params(c, sizeof(unpool_params));
    p->planes = planes, p->isp = spatial(x, k), p->osp = osp;
    return ACLNN_SUCCESS;
}
