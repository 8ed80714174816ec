/*
 * aclnnQuantize (hicann/ops-nn quant/quantize: op_api aclnn_quantize.cpp; kernel op_kernel/arch35/quantize_per_*_regbase.h).
 * Definition: quantize.toml.
 *
 * Per element, in fp32 (x, scale and zero point widened; an INT32 zero point rounded to fp32 as the kernel's Cast
 * does): f = x / scale + zeroPoint, then the Cast to out's dtype: CAST_RINT saturating for INT8 / UINT8 / INT32 and
 * FLOAT8, CAST_ROUND saturating for HIFLOAT8, NaN to 0. Scales of one element apply to the whole tensor, else one per
 * element of x's dim axis.
 */
#include <stdlib.h>
#include <string.h>

#include "kernels/dtype.h"
#include "kernels/view.h"
#include "numerics/numerics.h"
#include "opbase/checks.h"
#include "ops_decls.h"

typedef struct {
    int64_t n, inner, channels;   /* element i's scale: (i / inner) % channels (channels 1: one for all) */
    int has_zp;
    aclDataType y;
} qz_params;

/* qz_shape x scales zeroPoints axis: CheckShapeValid after its max-dim and out-shape checks. */
aclnnStatus opc_qz_shape(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0), *sc = op_tensor(c, s, 1), *zp = op_tensor(c, s, 2);
    int64_t axis = op_argument(c, s, 3)->i, xdim = x->ndim;
    if (sc->ndim != 1) return op_invalidf(c->api, "Input scales shape only support 1 dimension.");
    if (zp->present) {
        if (zp->ndim != 1) return op_invalidf(c->api, "Input zeroPoints shape only support 1 dimension.");
        if (zp->shape[0] != sc->shape[0]) return op_invalidf(c->api, "Scales size should be equal to zeroPoints size.");
    }
    if (sc->shape[0] == 1) return ACLNN_SUCCESS;                       /* per tensor: axis is not looked at */
    if (axis < -xdim || axis >= xdim)
        return op_invalidf(c->api, "Axis out of range (expected to be in range of [-%lld, %lld], but got %lld)",
                           (long long)xdim, (long long)(xdim - 1), (long long)axis);
    int64_t size = x->shape[axis < 0 ? axis + xdim : axis];
    if (sc->shape[0] != size)
        return op_invalidf(c->api, "The size of scales must equal to 1 or the specified dimension of x, which is %lld.",
                           (long long)size);
    return ACLNN_SUCCESS;
}

static aclnnStatus dtype_not_match(op_call *c, const char *name, aclDataType got, aclDataType want) {
    char a[24], b[24];
    return op_invalidf(c->api, "Tensor %s expected dtype is %s but found %s.", name, op_dtype_name(want, a),
                       op_dtype_name(got, b));
}

/* qz_dtype dtype out x scales zeroPoints LIST: CheckDtypeValid's tail: dtype and out in the SoC's output list, out of
 * dtype, and BF16 scales or zero points only with x, scales and zero points all BF16. */
aclnnStatus opc_qz_dtype(op_call *c, const op_step *s) {
    size_t n;
    const aclDataType *list = op_list(s->list, &n);
    aclDataType dt = (aclDataType)op_argument(c, s, 0)->i;
    const pyaclnn_stub_tensor *out = op_tensor(c, s, 1), *x = op_tensor(c, s, 2), *sc = op_tensor(c, s, 3),
                              *zp = op_tensor(c, s, 4);
    char a[24], all[256];
    if (!ew_in_list(dt, list, n))
        return op_invalidf(c->api, "Param dtype %s should be in dtype support list [%s].", op_dtype_name(dt, a),
                           ew_dtype_list(list, n, all, sizeof all));
    if (!ew_in_list(out->dtype, list, n))
        return op_invalidf(c->api, "Tensor out not implemented for %s, should be in dtype support list [%s].",
                           op_dtype_name(out->dtype, a), ew_dtype_list(list, n, all, sizeof all));
    if (out->dtype != dt) return dtype_not_match(c, "out", out->dtype, dt);
    if (zp->present ? (zp->dtype == ACL_BF16 || sc->dtype == ACL_BF16) : sc->dtype == ACL_BF16) {
        if (x->dtype != ACL_BF16) return dtype_not_match(c, "x", x->dtype, ACL_BF16);
        if (zp->present && sc->dtype != ACL_BF16) return dtype_not_match(c, "scales", sc->dtype, ACL_BF16);
        if (zp->present && zp->dtype != ACL_BF16) return dtype_not_match(c, "zeroPoints", zp->dtype, ACL_BF16);
    }
    return ACLNN_SUCCESS;
}

/* qz_plan x scales zeroPoints axis out: CheckFormat, the empty success, then the kernel's parameters. */
aclnnStatus opc_qz_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0), *sc = op_tensor(c, s, 1), *zp = op_tensor(c, s, 2),
                              *out = op_tensor(c, s, 4);
    if (op_is_private_format(x->format) || op_is_private_format(sc->format) || op_is_private_format(out->format))
        return op_invalidf(c->api, "Format of x, scales or out only support ND.");
    if (zp->present && op_is_private_format(zp->format))
        return op_invalidf(c->api, "Format of zeroPoints only support ND.");
    int64_t n = pyaclnn_stub_numel(x);
    if (n == 0 || pyaclnn_stub_numel(sc) == 0 || (zp->present && pyaclnn_stub_numel(zp) == 0) ||
        pyaclnn_stub_numel(out) == 0) {
        c->nothing = 1;
        return ACLNN_SUCCESS;
    }
    qz_params *p = op_params(c, sizeof *p);
    int64_t axis = op_argument(c, s, 3)->i, nd = x->ndim;
    p->n = n;
    p->channels = sc->shape[0];
    p->inner = 1;
    if (p->channels > 1)
        for (int64_t d = (axis < 0 ? axis + nd : axis) + 1; d < nd; d++) p->inner *= x->shape[d];
    p->has_zp = zp->present;
    p->y = out->dtype;
    return ACLNN_SUCCESS;
}

/* ---- kernel --------------------------------------------------------------------------------- */

static void qz_store(aclDataType y, unsigned char *dst, int64_t i, float v) {
    switch (y) {
    case ACL_INT8: ((int8_t *)dst)[i] = num_f32_to_int8(v, NUM_RINT | NUM_SAT); break;
    case ACL_UINT8: {
        int32_t r = num_f32_to_int32(v, NUM_RINT | NUM_SAT);
        ((uint8_t *)dst)[i] = (uint8_t)(r < 0 ? 0 : r > 255 ? 255 : r);
        break;
    }
    case ACL_INT32: ((int32_t *)dst)[i] = num_f32_to_int32(v, NUM_RINT | NUM_SAT); break;
    case ACL_FLOAT8_E4M3FN: dst[i] = num_f32_to_fp8_e4m3fn(v, NUM_RINT | NUM_SAT | NUM_NAN_TO_ZERO); break;
    case ACL_FLOAT8_E5M2: dst[i] = num_f32_to_fp8_e5m2(v, NUM_RINT | NUM_SAT | NUM_NAN_TO_ZERO); break;
    case ACL_HIFLOAT8: dst[i] = num_f32_to_hif8(v, NUM_ROUND | NUM_SAT | NUM_NAN_TO_ZERO); break;
    default: break;
    }
}

void quantize_kernel(const pyaclnn_stub_launch *launch) {
    const qz_params *p = launch->params;
    if (!tv_launch_views_ok(launch)) return;
    int64_t n = p->n;
    float *x = tv_load_float(&launch->inputs[0]), *sc = tv_load_float(&launch->inputs[1]), *zp = NULL;
    double *zd = p->has_zp ? tv_load_double(&launch->inputs[2]) : NULL;
    unsigned char *y = tv_alloc(n, p->y == ACL_INT32 ? 4 : 1);
    if (p->has_zp && zd && (zp = tv_alloc(p->channels, sizeof *zp)))
        for (int64_t j = 0; j < p->channels; j++) zp[j] = (float)zd[j];   /* int32 -> fp32 to nearest even */
    if (!x || !sc || (p->has_zp && !zp) || !y) {
        tv_fail_oom(launch);
        goto done;
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t j = p->channels == 1 ? 0 : (i / p->inner) % p->channels;
        float f = x[i] / sc[j];
        if (zp) f = f + zp[j];
        qz_store(p->y, y, i, f);
    }
    tv_scatter_bytes(&launch->outputs[0], y);
done:
    free(x), free(sc), free(zd), free(zp), free(y);
}
