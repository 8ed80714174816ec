/*
 * aclnnAscendQuant / aclnnAscendQuantV3 (hicann/ops-nn quant/ascend_quant_v2: op_api aclnn_ascend_quant.cpp and
 * aclnn_ascend_quant_v3.cpp; kernels ascend_quant_v2_{fp32,fp16,bf16}.h with CastOut of ascend_quant_v2.h on Atlas A2,
 * quant/quantize/op_kernel/arch35 on Ascend 950). Definitions: ascend_quant.toml.
 *
 * Per element, in fp32 (x, scale and offset widened exactly): f = x * s; sqrtMode: Atlas A2 f = f * s, Ascend 950
 * f = x * (s * s); f = f + offset; then the output cast: INT8 / INT4 with roundMode (fp32 -> int32 / int16 with the
 * mode, -> fp16, -> int8 / int4) saturating, NaN to 0; FLOAT8 CAST_RINT saturating, HIFLOAT8 CAST_ROUND or CAST_HYBRID
 * saturating, NaN to 0. An INT32 y holds eight INT4 codes a word (element 8j + q in bits 4q .. 4q + 3).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/dtype.h"
#include "kernels/view.h"
#include "numerics/numerics.h"
#include "opbase/checks.h"
#include "ops_decls.h"

typedef struct {
    int64_t n, inner, axis_len;   /* x's elements; scale index = (i / inner) % axis_len (axis_len 1: one scale) */
    int sqrt_mode, has_offset, soc950, mode;
    aclDataType y;                /* INT4 for an INT32 y (packed)                                        */
    int y_int32;
} aq_params;

/* aq3_scalar x: V3's CheckInputScalar. */
aclnnStatus opc_aq3_scalar(op_call *c, const op_step *s) {
    if (op_tensor(c, s, 0)->ndim == 0) return op_invalidf(c->api, "input x not support scalar.");
    return ACLNN_SUCCESS;
}

static int shape_same(const pyaclnn_stub_tensor *a, const pyaclnn_stub_tensor *b) {
    if (a->ndim != b->ndim) return 0;
    for (int64_t d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d]) return 0;
    return 1;
}

static aclnnStatus not_same_size(op_call *c, const char *na, const pyaclnn_stub_tensor *a, const char *nb,
                                 const pyaclnn_stub_tensor *b) {
    char x[200], y[200];
    return op_invalidf(c->api, "Expected tensor for %s to have same size as tensor for %s, but %s does not equal %s.", na,
                       nb, tv_shape_text(a->shape, a->ndim, x, sizeof x), tv_shape_text(b->shape, b->ndim, y, sizeof y));
}

/* The int32 / int4 output checks of both versions (V1 and V3 word them differently). */
static aclnnStatus aq_out_shape(op_call *c, const pyaclnn_stub_tensor *x, const pyaclnn_stub_tensor *y, int v3) {
    int64_t nd = x->ndim;
    if (y->dtype != ACL_INT32) {
        if (!shape_same(y, x)) return not_same_size(c, "y", y, "x", x);
    } else {
        if (nd == 0) return op_invalidf(c->api, v3 ? "input x not support scalar." : "dtype int32 not support scalar.");
        int64_t xi = x->shape[nd - 1], yo = y->ndim >= nd ? y->shape[nd - 1] : -1;
        if (yo < 0 || op_mul_sat(yo, 8) != xi)
            return op_invalidf(c->api, v3 ? "if y dtype is int32, the y last dim must be 1/8 of x last dim, x last dim is "
                                            "(%lld), y last dim is (%lld)"
                                          : "the y last dim must be 1/8 of input last dim, input last dim is (%lld), output "
                                            "last dim is (%lld).", (long long)xi, (long long)yo);
        for (int64_t i = 0; i < nd - 1; i++)
            if (x->shape[i] != y->shape[i])
                return op_invalidf(c->api, v3 ? "the dim(%lld) of x must be same with y, x is (%lld), y is (%lld)."
                                              : "the dim(%lld) of input must be same with output, input is (%lld), output "
                                                "is (%lld).", (long long)i, (long long)x->shape[i], (long long)y->shape[i]);
    }
    if (y->dtype == ACL_INT4) {
        if (nd == 0) return op_invalidf(c->api, v3 ? "input x not support scalar." : "dtype int4 not support scalar.");
        if (x->shape[nd - 1] % 2)
            return op_invalidf(c->api, v3 ? "if y dtype is int4, x last dim must be divisible by 2, last dim is (%lld)."
                                          : "x last dim must be divisible by 2, last dim is (%lld).",
                               (long long)x->shape[nd - 1]);
    }
    if (nd > 8) return op_invalidf(c->api, "The x tensor cannot be larger than 8 dimensions.");
    return ACLNN_SUCCESS;
}

static int64_t last_dim(const pyaclnn_stub_tensor *t) { return t->ndim == 0 ? 1 : t->shape[t->ndim - 1]; }

/* V1's CheckDim, CheckDimOne and the broadcast checks of scale and offset against x. */
static aclnnStatus aq1_scale_shape(op_call *c, const pyaclnn_stub_tensor *x, const pyaclnn_stub_tensor *sc,
                                   const pyaclnn_stub_tensor *of) {
    int64_t sd = last_dim(sc);
    if (of->present && last_dim(of) != sd) return op_invalidf(c->api, "dim of scale must be the same as dim of offset");
    int64_t xl = last_dim(x);
    if (sd != xl && sd != 1)
        return op_invalidf(c->api, "the last dim size(%lld) of x must be same as scale and offset(%lld).", (long long)xl,
                           (long long)sd);
    const pyaclnn_stub_tensor *ts[2] = {sc, of};
    const char *nm[2] = {"scale", "offset"};
    for (int k = 0; k < 2; k++) {
        const pyaclnn_stub_tensor *t = ts[k];
        if (!t->present) continue;
        for (int64_t i = 0; i + 1 < t->ndim; i++)
            if (t->shape[i] != 1)
                return op_invalidf(c->api, "the dim(%lld) of scale or offset must be 1, but it is(%lld).", (long long)i,
                                   (long long)t->shape[i]);
        int ok = t->ndim <= x->ndim;
        for (int64_t i = 0; ok && i < t->ndim; i++) {
            int64_t a = t->shape[t->ndim - 1 - i], b = x->shape[x->ndim - 1 - i];
            ok = a == b || a == 1;
        }
        if (!ok) {
            char b1[200], b2[200];
            return op_invalidf(c->api, "The size of tensor %s %s must match the size %s.", nm[k],
                               tv_shape_text(t->shape, t->ndim, b1, sizeof b1), tv_shape_text(x->shape, x->ndim, b2, sizeof b2));
        }
    }
    return ACLNN_SUCCESS;
}

/* V3's CheckAxis. */
static aclnnStatus aq3_axis(op_call *c, const pyaclnn_stub_tensor *x, int64_t axis) {
    int64_t nd = x->ndim;
    if (axis >= nd || axis < -nd)
        return op_invalidf(c->api, "invalid axis: %lld, axis can't exceed the dimension of x: %lld", (long long)axis,
                           (long long)nd);
    if (nd > 2 && (axis < -2 || (axis >= 0 && axis < nd - 2)))
        return op_invalidf(c->api, "invalid axis: %lld, axis must be one of last two dimensions of x", (long long)axis);
    return ACLNN_SUCCESS;
}

/* V3's CheckDim. */
static aclnnStatus aq3_scale_shape(op_call *c, const pyaclnn_stub_tensor *x, const pyaclnn_stub_tensor *sc,
                                   const pyaclnn_stub_tensor *of, int64_t axis) {
    if (of->present && !shape_same(sc, of)) return not_same_size(c, "scale", sc, "offset", of);
    if (sc->ndim == 0) return op_invalidf(c->api, "scale and offset not support scalar.");
    if (sc->ndim != 1 && sc->ndim != x->ndim) return op_invalidf(c->api, "scale dimNum must be same as x dimNum or 1.");
    int64_t xa = axis >= 0 ? axis : x->ndim + axis, sa = sc->ndim == 1 ? 0 : xa;
    int64_t xd = x->shape[xa], sd = sc->shape[sa];
    if (sd != xd && sd != 1)
        return op_invalidf(c->api, "scale dim(%lld)'s value(%lld) is invalid, should be same as x dim(%lld)'s value(%lld) "
                           "or 1", (long long)sa, (long long)sd, (long long)xa, (long long)xd);
    if (pyaclnn_stub_numel(sc) != sd)
        return op_invalidf(c->api, "If scale is not 1-dimensional tensor, all dimensions except the dimension specified "
                           "by axis should be 1");
    return ACLNN_SUCCESS;
}

/* CheckRoundMode (V3: by dstType); the kernel's round mode. */
static aclnnStatus aq_round_mode(op_call *c, const char *m, int64_t dst, int v3, int *mode) {
    if (m == NULL) return op_invalidf(c->api, "roundMode cannot be empty");
    int is_round = strcmp(m, "round") == 0;
    if (v3 && dst == ACL_HIFLOAT8) {
        if (!is_round && strcmp(m, "hybrid") != 0)
            return op_invalidf(c->api, "check roundMode failed, roundMode[%s] not in ['round','hybrid'] for hifloat8.", m);
        *mode = is_round ? NUM_ROUND : NUM_HYBRID;
        return ACLNN_SUCCESS;
    }
    if (v3 && (dst == ACL_FLOAT8_E4M3FN || dst == ACL_FLOAT8_E5M2)) {
        if (!is_round)
            return op_invalidf(c->api, "check roundMode failed, roundMode[%s] not in ['round'] for "
                               "float8_e5m2/float8_e4m3fn.", m);
        *mode = NUM_RINT;
        return ACLNN_SUCCESS;
    }
    *mode = is_round ? NUM_RINT : strcmp(m, "floor") == 0 ? NUM_FLOOR : strcmp(m, "ceil") == 0 ? NUM_CEIL
                                                        : strcmp(m, "trunc") == 0 ? NUM_TRUNC : -1;
    if (*mode < 0)
        return op_invalidf(c->api, v3 ? "check roundMode failed, roundMode[%s] not in ['round','floor','ceil','trunc'] for "
                                        "int8/int4/int32."
                                      : "check roundMode failed, roundMode[%s] not in ['round','floor','ceil','trunc'].", m);
    return ACLNN_SUCCESS;
}

/* aq_check x scale offset sqrtMode roundMode dstType y [axis]: CheckDtypeValid's tail, (V3: CheckAxis), CheckShape,
 * CheckRoundMode, the empty-x success, then the kernel's parameters. */
aclnnStatus opc_aq_check(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0), *sc = op_tensor(c, s, 1), *of = op_tensor(c, s, 2),
                              *y = op_tensor(c, s, 6);
    int v3 = s->np > 7;
    int64_t dst = op_argument(c, s, 5)->i, axis = v3 ? op_argument(c, s, 7)->i : -1;
    char b1[24], b2[24];
    if ((x->dtype == ACL_FLOAT16 && sc->dtype != ACL_FLOAT16) || (x->dtype == ACL_BF16 && sc->dtype != ACL_BF16))
        return op_invalidf(c->api, v3 ? "dtype of input x:%s is not compatible with scale:%s." : "input x:%s not compatible "
                           "with scale:%s.", op_dtype_name(x->dtype, b1), op_dtype_name(sc->dtype, b2));
    if ((int64_t)y->dtype != dst)
        return op_invalidf(c->api, "dstType:%lld(%s) must be able to represent the y dtype[%s].", (long long)dst,
                           op_dtype_name((aclDataType)dst, b1), op_dtype_name(y->dtype, b2));
    aclnnStatus rc;
    if (v3 && (rc = aq3_axis(c, x, axis))) return rc;
    if ((rc = aq_out_shape(c, x, y, v3))) return rc;
    if ((rc = v3 ? aq3_scale_shape(c, x, sc, of, axis) : aq1_scale_shape(c, x, sc, of))) return rc;
    int mode;
    if ((rc = aq_round_mode(c, (const char *)op_argument(c, s, 4)->p, dst, v3, &mode))) return rc;
    int64_t n = pyaclnn_stub_numel(x);
    if (x->ndim > 0 && n == 0) {
        c->nothing = 1;
        return ACLNN_SUCCESS;
    }
    aq_params *p = op_params(c, sizeof *p);
    int64_t nd = x->ndim, xa = nd == 0 ? 0 : (axis >= 0 ? axis : nd + axis);
    p->n = n;
    p->axis_len = pyaclnn_stub_numel(sc) == 1 ? 1 : (nd == 0 ? 1 : x->shape[xa]);
    p->inner = 1;
    for (int64_t d = xa + 1; d < nd; d++) p->inner *= x->shape[d];
    p->sqrt_mode = op_argument(c, s, 3)->i != 0;
    p->has_offset = of->present;
    p->soc950 = ew_soc_is_950();
    p->mode = mode;
    p->y_int32 = y->dtype == ACL_INT32;
    p->y = p->y_int32 ? ACL_INT4 : y->dtype;
    return ACLNN_SUCCESS;
}

/* ---- kernel --------------------------------------------------------------------------------- */

static uint8_t aq_encode(const aq_params *p, float v) {
    switch (p->y) {
    case ACL_INT8: return (uint8_t)num_f32_to_int8(v, p->mode | NUM_SAT);
    case ACL_INT4: return (uint8_t)num_f32_to_int4(v, p->mode | NUM_SAT) & 0x0F;
    case ACL_FLOAT8_E4M3FN: return num_f32_to_fp8_e4m3fn(v, NUM_RINT | NUM_SAT | NUM_NAN_TO_ZERO);
    case ACL_FLOAT8_E5M2: return num_f32_to_fp8_e5m2(v, NUM_RINT | NUM_SAT | NUM_NAN_TO_ZERO);
    case ACL_HIFLOAT8: return num_f32_to_hif8(v, p->mode | NUM_SAT | NUM_NAN_TO_ZERO);
    default: return 0;
    }
}

/* An INT4 y: codes written nibble by nibble through the view (its offsets and strides count nibbles). */
static void aq_store_int4(const pyaclnn_stub_tensor *t, const uint8_t *codes, int64_t n) {
    tv_iter it;
    tv_iter_init(&it, t);
    uint8_t *base = t->data;
    for (int64_t e = 0; e < n; e++, tv_iter_next(&it)) {
        uint8_t *b = base + it.off / 2, v = codes[e] & 0x0F;
        *b = it.off % 2 ? (uint8_t)((*b & 0x0F) | (v << 4)) : (uint8_t)((*b & 0xF0) | v);
    }
}

void ascend_quant_kernel(const pyaclnn_stub_launch *launch) {
    const aq_params *p = launch->params;
    if (!tv_launch_views_ok(launch)) return;
    const pyaclnn_stub_tensor *ty = &launch->outputs[0];
    int64_t n = p->n;
    float *x = tv_load_float(&launch->inputs[0]), *sc = tv_load_float(&launch->inputs[1]);
    float *of = p->has_offset ? tv_load_float(&launch->inputs[2]) : NULL;
    uint8_t *codes = tv_alloc(n, 1), *words = p->y_int32 ? tv_alloc(n / 2 + 1, 1) : NULL;
    if (!x || !sc || (p->has_offset && !of) || !codes || (p->y_int32 && !words)) {
        tv_fail_oom(launch);
        goto done;
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t j = p->axis_len == 1 ? 0 : (i / p->inner) % p->axis_len;
        float s = sc[j], f;
        if (!p->sqrt_mode) f = x[i] * s;
        else if (p->soc950) f = x[i] * (s * s);
        else f = (x[i] * s) * s;
        if (of) f = f + of[j];
        codes[i] = aq_encode(p, f);
    }
    if (p->y_int32) {   /* eight codes a little-endian int32: two a byte, the even one in the low nibble */
        num_pack4(codes, words, (size_t)n);
        tv_scatter_bytes(ty, words);
    } else if (p->y == ACL_INT4) {
        aq_store_int4(ty, codes, n);
    } else {
        tv_scatter_bytes(ty, codes);
    }
done:
    free(x), free(sc), free(of), free(codes), free(words);
}
