/*
 * aclnnDequantSwigluQuant and aclnnDequantSwigluQuantV2 (hicann/ops-nn quant/dequant_swiglu_quant: generated
 * wrappers of one op definition; definitions and the vendor-source notes in dequant_swiglu_quant.toml).
 *
 * Per row of x (2H elements; A the activated half: the right one, the left with activateLeft), the kernels' fp32
 * steps (dequant_swiglu_quant_dynamic_base.hpp / _static_base.hpp; arch35/dequant_swiglu_quant.h, _common.h):
 *   dequant: INT32 x (+ an INT32 bias, a wrapping int32 Add) cast to fp32 (RINT), * weightScale, * activationScale
 *     of the row, + a FLOAT / FLOAT16 / BFLOAT16 bias widened; a FLOAT16 / BFLOAT16 x widened (Ascend 950 then also
 *     * activationScale and + a FLOAT bias);
 *   swiglu: sw = (A / (Exp(A * -1) + 1)) * B;
 *   dynamic: sw * quantScale (one or H), scaleOut = max|sw| / 127, y = sw * fp32(1 / scaleOut) (Atlas A2) or
 *     sw / scaleOut (Ascend 950);
 *   static: sw / quantScale + quantOffset (Atlas A2 with one quantScale: sw * fp32(1 / quantScale) + quantOffset);
 *   y: RINT, saturating to INT8 (the int16 -> half -> int8 chain of the kernels).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kernels/dtype.h"
#include "kernels/vecmath.h"
#include "kernels/view.h"
#include "numerics/numerics.h"
#include "opbase/checks.h"
#include "ops_decls.h"

enum { DSQ_BIAS_NONE, DSQ_BIAS_INT, DSQ_BIAS_FLOAT };

typedef struct {
    int64_t rows, h;
    int int_x, soc950, left, dynamic, bias, has_w, has_act;
    int64_t qs_n, qo_n;   /* elements of quantScale / quantOffset: 0, 1 or h */
    float qmax;           /* the output type's maximum: INT8 127, FP8 E4M3 448, E5M2 57344, HIFLOAT8 32768 */
    aclDataType ydt;
} dsq_params;

enum { I_X, I_W, I_ACT, I_BIAS, I_QS, I_QO };

/* One fp32 value to y's code: INT8 RINT saturating (the int16 -> half -> int8 chain); FP8 RINT and HIFLOAT8 ROUND,
 * saturating (arch35 CAST_FP32_TO_FP8, CAST_FP32_TO_HI8). */
static uint8_t dsq_code(float v, aclDataType ydt) {
    switch (ydt) {
    case ACL_FLOAT8_E4M3FN: return num_f32_to_fp8_e4m3fn(v, NUM_RINT | NUM_SAT | NUM_NAN_TO_ZERO);
    case ACL_FLOAT8_E5M2: return num_f32_to_fp8_e5m2(v, NUM_RINT | NUM_SAT | NUM_NAN_TO_ZERO);
    case ACL_HIFLOAT8: return num_f32_to_hif8(v, NUM_ROUND | NUM_SAT | NUM_NAN_TO_ZERO);
    default: return (uint8_t)num_f32_to_int8(v, NUM_RINT | NUM_SAT);
    }
}

/* Column j of row r dequantised (weightScale and bias indexed by the column in 2H). */
static float dsq_dequant(const dsq_params *p, const int32_t *xi, const float *xf, const float *w, const float *act,
                         const int32_t *bi, const float *bf, int64_t r, int64_t j) {
    int64_t k = r * 2 * p->h + j;
    float v;
    if (p->int_x) {
        int32_t q = xi[k];
        if (p->bias == DSQ_BIAS_INT) q = (int32_t)((uint32_t)q + (uint32_t)bi[j]);   /* int32 Add wraps */
        v = (float)q;
        v = v * w[j];
    } else {
        v = xf[k];
        if (!p->soc950) return v;
    }
    if (p->has_act) v = v * act[r];
    if (p->bias == DSQ_BIAS_FLOAT) v = v + bf[j];
    return v;
}

void dequant_swiglu_quant_kernel(const pyaclnn_stub_launch *launch) {
    const dsq_params *p = launch->params;
    if (!tv_launch_views_ok(launch)) return;
    const pyaclnn_stub_tensor *in = launch->inputs;
    int64_t R = p->rows, H = p->h;
    int32_t *xi = NULL, *bi = NULL;
    float *xf = NULL, *bf = NULL;
    int oom = 0;
    if (p->int_x) oom |= !(xi = (int32_t *)tv_gather_bytes(&in[I_X]));
    else oom |= !(xf = tv_load_float(&in[I_X]));
    if (p->bias == DSQ_BIAS_INT) oom |= !(bi = (int32_t *)tv_gather_bytes(&in[I_BIAS]));
    if (p->bias == DSQ_BIAS_FLOAT) oom |= !(bf = tv_load_float(&in[I_BIAS]));
    float *w = p->has_w ? tv_load_float(&in[I_W]) : NULL, *act = p->has_act ? tv_load_float(&in[I_ACT]) : NULL;
    float *qs = p->qs_n ? tv_load_float(&in[I_QS]) : NULL, *qo = p->qo_n ? tv_load_float(&in[I_QO]) : NULL;
    float *sw = tv_alloc(H, sizeof(float)), *sc = tv_alloc(R, sizeof(float));
    uint8_t *y = tv_alloc(R * H, 1);
    if (oom || (p->has_w && !w) || (p->has_act && !act) || (p->qs_n && !qs) || (p->qo_n && !qo) || !sw || !sc || !y) {
        tv_fail_oom(launch);
    } else {
        int64_t a_off = p->left ? 0 : H, b_off = p->left ? H : 0;
        for (int64_t r = 0; r < R; r++) {
            float m = 0.0f;
            for (int64_t j = 0; j < H; j++) {
                float a = dsq_dequant(p, xi, xf, w, act, bi, bf, r, a_off + j);
                float b = dsq_dequant(p, xi, xf, w, act, bi, bf, r, b_off + j);
                float t = a * -1.0f;
                t = vm_exp(t);
                t = t + 1.0f;
                t = a / t;
                float v = t * b;
                if (p->dynamic && qs) v = v * qs[p->qs_n == 1 ? 0 : j];
                sw[j] = v;
                float av = v < 0 ? -v : v;
                if (av > m) m = av;
            }
            float inv = 0.0f;
            if (p->dynamic) {
                sc[r] = m / p->qmax;
                inv = 1.0f / sc[r];
            }
            float qinv = !p->soc950 && !p->dynamic && p->qs_n == 1 ? 1.0f / qs[0] : 0.0f;
            for (int64_t j = 0; j < H; j++) {
                float v = sw[j];
                if (p->dynamic) {
                    v = p->soc950 ? v / sc[r] : v * inv;
                } else if (qs) {
                    v = p->qs_n == 1 && !p->soc950 ? v * qinv : v / qs[p->qs_n == 1 ? 0 : j];
                    if (qo) v = v + qo[p->qo_n == 1 ? 0 : j];
                }
                y[r * H + j] = dsq_code(v, p->ydt);
            }
        }
        tv_scatter_bytes(&launch->outputs[0], y);
        if (p->dynamic) tv_store_float(&launch->outputs[1], sc);
    }
    free(xi), free(xf), free(bi), free(bf), free(w), free(act), free(qs), free(qo), free(sw), free(sc), free(y);
}

/* ---- steps ---------------------------------------------------------------------------------------- */

/* The op definition's rows per SoC (x, weightScale, activationScale, bias, quantScale, quantOffset, groupIndex, y,
 * scale), as dtype_rows text. */
static const char *dsq_rows_text(int soc950) {
    static char text[2][8192];
    char *t = text[soc950];
    if (t[0]) return t;
    static const char *const xs[] = {"BFLOAT16", "FLOAT16", "INT32"};
    static const char *const bias_int[] = {"BFLOAT16", "FLOAT", "FLOAT16", "INT32"};
    static const char *const ys950[] = {"FLOAT4_E1M2", "FLOAT4_E2M1", "FLOAT8_E4M3FN", "FLOAT8_E5M2", "HIFLOAT8", "INT8"};
    static const char *const gs950[] = {"INT32", "INT64"};
    static const char *const ysa2[] = {"INT8"};
    static const char *const gsa2[] = {"INT64"};
    const char *const *ys = soc950 ? ys950 : ysa2, *const *gs = soc950 ? gs950 : gsa2;
    int ny = soc950 ? 6 : 1, ng = soc950 ? 2 : 1;
    size_t used = 0;
    for (int xi = 0; xi < 3; xi++)
        for (int bi = 0; bi < (xi == 2 ? 4 : 1); bi++)
            for (int gi = 0; gi < ng; gi++)
                for (int yi = 0; yi < ny; yi++)
                    used += (size_t)snprintf(t + used, sizeof text[0] - used, "%s%s FLOAT FLOAT %s FLOAT FLOAT %s %s FLOAT",
                                             used ? "|" : "", xs[xi], xi == 2 ? bias_int[bi] : "FLOAT", gs[gi], ys[yi]);
    return t;
}

/* dsq_rows x weightScale activationScale bias quantScale quantOffset groupIndex y scale: dtype_rows with the SoC's
 * rows. */
aclnnStatus opc_dsq_rows(op_call *c, const op_step *s) {
    op_step t = *s;
    t.text = dsq_rows_text(ew_soc_is_950());
    return opc_dtype_rows(c, &t);
}

/* the tiling's rejection (561002) with a printf-formatted message */
#define dsq_fail(c, ...) op_failf((c)->api, ACLNN_ERR_INNER_TILING_ERROR, __VA_ARGS__)

/* dsq_plan x w act bias qs qo group activateLeft quantMode y scale [dstType roundMode activateDim swigluMode]: the
 * tiling's checks in its order (561002), the emulator's limits, the kernel's parameters. */
aclnnStatus opc_dsq_plan(op_call *c, const op_step *s) {
    enum { X, W, ACT, BIAS, QS, QO, GROUP, LEFT, MODE, Y, SC, DST, ROUND, ADIM, SWI };
    const pyaclnn_stub_tensor *x = op_tensor(c, s, X), *w = op_tensor(c, s, W), *act = op_tensor(c, s, ACT);
    const pyaclnn_stub_tensor *bias = op_tensor(c, s, BIAS), *qs = op_tensor(c, s, QS), *qo = op_tensor(c, s, QO);
    const pyaclnn_stub_tensor *y = op_tensor(c, s, Y), *sc = op_tensor(c, s, SC);
    const char *mode = op_argument(c, s, MODE)->p;
    if (mode == NULL) mode = "static";   /* the op definition's default of the attribute */
    int v2 = s->np > DST;
    char b1[160];
    if (x->ndim <= 1) return dsq_fail(c, "The shape dim of x can not be less than 2");
    int64_t two_h = x->shape[x->ndim - 1], rows = tv_dims_product(x->shape, 0, x->ndim - 1), h = two_h / 2;
    if (two_h % 2) return dsq_fail(c, "The shape dim of x dim must be even number");
    int dynamic;
    if (mode != NULL && strcasecmp(mode, "static") == 0) dynamic = 0;
    else if (mode != NULL && strcasecmp(mode, "dynamic") == 0) dynamic = 1;
    else return dsq_fail(c, "quant_mode %s: quant_mode should be static or dynamic with case insensitive", mode);
    if (x->dtype == ACL_INT32) {
        if (bias->present && pyaclnn_stub_numel(bias) != two_h)
            return dsq_fail(c, "bias has %lld elements, %lld expected", (long long)pyaclnn_stub_numel(bias),
                            (long long)two_h);
        if (!w->present) return dsq_fail(c, "weight_scale is nullptr");
        if (pyaclnn_stub_numel(w) != two_h)
            return dsq_fail(c, "weight_scale has %lld elements: The shape size of weight_scale must be equal to the "
                            "last dimension of x%lld", (long long)pyaclnn_stub_numel(w), (long long)two_h);
        if (act->present && pyaclnn_stub_numel(act) != rows)
            return dsq_fail(c, "activation_scale has %lld elements, equal to %lld expected",
                            (long long)pyaclnn_stub_numel(act), (long long)rows);
    }
    if (qs->present) {
        int64_t n = pyaclnn_stub_numel(qs);
        if (n != h && n != 1)
            return dsq_fail(c, "quant_scale has %lld elements, %lld or 1 expected", (long long)n, (long long)h);
        if (!dynamic) {
            if (!qo->present) return dsq_fail(c, "quant_offset is nullptr");
            int64_t m = pyaclnn_stub_numel(qo);
            if (m != h && m != 1)
                return dsq_fail(c, "quant_offset has %lld elements, %lld or 1 expected", (long long)m, (long long)h);
        }
    }
    /* what the emulator does not model, and the sizes the tiling only logs */
    if (op_tensor(c, s, GROUP)->present)
        return dsq_fail(c, "groupIndexOptional given: the grouped templates are not emulated");
    if (v2) {
        const char *round = op_argument(c, s, ROUND)->p;
        int64_t adim = op_argument(c, s, ADIM)->i, swi = op_argument(c, s, SWI)->i;
        if (swi != 0) return dsq_fail(c, "swigluMode %lld: only swigluMode 0 is emulated", (long long)swi);
        if (adim != -1 && adim != x->ndim - 1)
            return dsq_fail(c, "activateDim %lld: only the last dim is emulated", (long long)adim);
        if (round != NULL && strcmp(round, "rint") != 0)
            return dsq_fail(c, "roundModeOptional %s: only rint is emulated", round);
        int64_t dst = op_argument(c, s, DST)->i;
        int ok = dst == ACL_INT8 || (ew_soc_is_950() && (dst == ACL_FLOAT8_E4M3FN || dst == ACL_FLOAT8_E5M2 ||
                                                        dst == ACL_HIFLOAT8));
        if (!ok) return dsq_fail(c, "dstType %lld: INT8 (2), FLOAT8_E5M2 (35), FLOAT8_E4M3FN (36) and HIFLOAT8 (34) "
                                 "are emulated (the FP8 / HIFLOAT8 ones on Ascend 950)", (long long)dst);
        if (y->dtype != (aclDataType)dst)
            return dsq_fail(c, "dstType %lld and yOut %s: y must be of dstType", (long long)dst,
                            op_dtype_name(y->dtype, b1));
    } else if (y->dtype != ACL_INT8) {
        return dsq_fail(c, "yOut of %s: only INT8 is emulated", op_dtype_name(y->dtype, b1));
    }
    if (qs->present && !dynamic && pyaclnn_stub_numel(qo) != pyaclnn_stub_numel(qs))
        return dsq_fail(c, "quant_offset has %lld elements and quant_scale %lld: the kernel reads as many of each",
                        (long long)pyaclnn_stub_numel(qo), (long long)pyaclnn_stub_numel(qs));
    if (y->ndim != x->ndim || pyaclnn_stub_numel(y) != rows * h || y->shape[y->ndim - 1] != h)
        return dsq_fail(c, "y %s: The last dimension of x must be twice the last dimension of y, the others equal",
                        tv_shape_text(y->shape, y->ndim, b1, sizeof b1));
    if (dynamic && pyaclnn_stub_numel(sc) != rows)
        return dsq_fail(c, "scale has %lld elements: The numbers of elements in scale must be equal to the total "
                        "number of elements in all axes of x except the last one", (long long)pyaclnn_stub_numel(sc));
    dsq_params *p = op_params(c, sizeof *p);
    p->rows = rows;
    p->h = h;
    p->int_x = x->dtype == ACL_INT32;
    p->soc950 = ew_soc_is_950();
    p->left = (int)op_argument(c, s, LEFT)->i;
    p->dynamic = dynamic;
    p->has_w = p->int_x;
    p->has_act = act->present && (p->int_x || p->soc950);
    p->bias = !bias->present || (!p->int_x && !p->soc950) ? DSQ_BIAS_NONE
              : bias->dtype == ACL_INT32 && p->int_x ? DSQ_BIAS_INT : DSQ_BIAS_FLOAT;
    if (p->has_act && pyaclnn_stub_numel(act) != rows)
        return dsq_fail(c, "activation_scale has %lld elements, equal to %lld expected",
                        (long long)pyaclnn_stub_numel(act), (long long)rows);
    if (p->bias != DSQ_BIAS_NONE && pyaclnn_stub_numel(bias) != two_h)
        return dsq_fail(c, "bias has %lld elements, %lld expected", (long long)pyaclnn_stub_numel(bias), (long long)two_h);
    p->qs_n = qs->present ? pyaclnn_stub_numel(qs) : 0;
    p->qo_n = qs->present && !dynamic && qo->present ? pyaclnn_stub_numel(qo) : 0;
    p->ydt = y->dtype;
    p->qmax = y->dtype == ACL_FLOAT8_E4M3FN ? 448.0f : y->dtype == ACL_FLOAT8_E5M2 ? 57344.0f
            : y->dtype == ACL_HIFLOAT8 ? 32768.0f : 127.0f;
    if (rows * h == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}
