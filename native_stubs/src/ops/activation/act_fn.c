/*
 * Element functions and steps of the activations defined in act_fn.toml. Each follows its vendor kernel
 * (hicann/ops-nn activation/<op>/op_kernel/arch35) step by step: fp16/bf16 inputs cast to fp32 (exact), every
 * vector step rounded as the fp32 vector unit rounds (C float arithmetic, kernels/vecmath.h), the result cast
 * back to the compute dtype with the kernel's rounding mode (CAST_RINT: vm_out; CAST_ROUND, ties away from
 * zero: round_out). DOUBLE compute dtypes run the vendor's AI CPU kernels: in double. Attributes arrive in the
 * plan's attr[] (as doubles: the kernels take them as float, ToFloat) or vattr[] (values of the compute dtype).
 *
 * Min / Max instructions with a NaN operand are not documented; the emulator lets NaN through (as torch).
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "activation/gelu.h"
#include "kernels/vecmath.h"
#include "numerics/numerics.h"
#include "opbase/checks.h"
#include "opbase/opbase.h"
#include "ops_decls.h"

/* ---- fp32 helpers ------------------------------------------------------------------------------------- */

/* An fp32 result cast to the compute dtype with CAST_ROUND (fp16/bf16: nearest, ties away from zero). */
static ew_value round_out(const ew_plan *p, float r) {
    if (p->compute == ACL_FLOAT16) return (ew_value){num_f16_to_f32(num_f32_to_f16_mode(r, NUM_ROUND)), 0};
    if (p->compute == ACL_BF16) return (ew_value){num_bf16_to_f32(num_f32_to_bf16_mode(r, NUM_ROUND)), 0};
    return vm_out(p, r);
}

/* Mins / Maxs with NaN passed through. */
static float min_nan(float a, float b) { return isnan(a) || isnan(b) ? NAN : a < b ? a : b; }
static float max_nan(float a, float b) { return isnan(a) || isnan(b) ? NAN : a > b ? a : b; }

static float attr_f(const ew_plan *p, int k) { return (float)p->attr[k]; }   /* the scalar's ToFloat */

/* ---- steps -------------------------------------------------------------------------------------------- */

/* act_lambd_nonneg lambd: 161002 when lambd (as float) is negative. */
aclnnStatus opc_act_lambd_nonneg(op_call *c, const op_step *s) {
    const op_scalar *sc = op_scalar_of(c, s, 0);
    float v = (float)ew_value_to_double(sc->v, sc->dtype);
    if (!(v < 0.0f)) return ACLNN_SUCCESS;
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "lambd should be greater or equal to 0, but found to be [%f].",
                        (double)v);
    return ACLNN_ERR_PARAM_INVALID;
}

/* threshold_compute self out: the compute dtype is self's; before Ascend 950 (DAV_3510) self's dtype must cast
 * to out's (on 950 any out dtype takes the closing Cast). */
aclnnStatus opc_threshold_compute(op_call *c, const op_step *s) {
    aclDataType self = op_tensor(c, s, 0)->dtype, out = op_tensor(c, s, 1)->dtype;
    if ((pyaclnn_stub_soc_family() != PYACLNN_SOC_950 && !ew_can_cast(self, out)) || ew_itemsize(out) == 0) {
        char b1[24], b2[24];
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Result type %s can't be cast to the desired output "
                            "type %s.", op_dtype_name(self, b1), op_dtype_name(out, b2));
        return ACLNN_ERR_PARAM_INVALID;
    }
    c->compute = self;
    return ACLNN_SUCCESS;
}

/* ---- LeakyRelu (leaky_relu_dag.h; DOUBLE: the AI CPU kernel) ------------------------------------------------ */

ew_value leaky_relu_f(const ew_plan *p, ew_value x, ew_value y, ew_value z) {
    (void)y, (void)z;
    float slope = attr_f(p, 0);
    if (p->compute == ACL_DOUBLE) return vm_out_double(x.f > 0 ? x.f : x.f * (double)slope);
    float v = vm_in(x);
    return vm_out(p, v > 0.0f ? v : v * slope);
}

/* ---- Hardswish (hard_swish.h): Adds 3, Mins 6, Maxs 0; Maxs -3; Mul; Muls 1/6 ----------------------------- */

ew_value hardswish_f(const ew_plan *p, ew_value x, ew_value y, ew_value z) {
    (void)y, (void)z;
    float v = vm_in(x);
    float t = max_nan(min_nan(v + 3.0f, 6.0f), 0.0f);
    return round_out(p, max_nan(v, -3.0f) * t * (1.0f / 6.0f));
}

/* ---- Hardsigmoid (hard_sigmoid.cpp, alpha 1/6 and beta 1/2 as the tiling's defaults) --------------------- */

static const float HS_ALPHA = 1.0f / 6.0f, HS_BETA = 0.5f;

ew_value hardsigmoid_f(const ew_plan *p, ew_value x, ew_value y, ew_value z) {
    (void)y, (void)z;
    float t = vm_in(x) * HS_ALPHA + HS_BETA;
    if (p->compute == ACL_FLOAT) return vm_out(p, max_nan(min_nan(t, 1.0f), 0.0f));
    /* fp16 (RINT) / bf16 (CAST_ROUND) first, then Mins / Maxs in the dtype: exact */
    float r = (float)(p->compute == ACL_BF16 ? round_out(p, t) : vm_out(p, t)).f;
    return (ew_value){max_nan(min_nan(r, 1.0f), 0.0f), 0};
}

/* INT32: Cast RINT to fp32, the same steps, Cast TRUNC back (0 or 1). */
ew_value hardsigmoid_i(const ew_plan *p, ew_value x, ew_value y, ew_value z) {
    (void)p, (void)y, (void)z;
    float t = max_nan(min_nan((float)x.i * HS_ALPHA + HS_BETA, 1.0f), 0.0f);
    return (ew_value){0, (int64_t)t};
}

/* ---- Softshrink (softshrink.h) / Hardshrink (hard_shrink.h) ------------------------------------------------ */

ew_value softshrink_f(const ew_plan *p, ew_value x, ew_value y, ew_value z) {
    (void)y, (void)z;
    float l = attr_f(p, 0), v = vm_in(x);
    float r = v > l ? v - l : 0.0f;
    return vm_out(p, v < -l ? v + l : r);
}

ew_value hardshrink_f(const ew_plan *p, ew_value x, ew_value y, ew_value z) {
    (void)y, (void)z;
    float l = attr_f(p, 0);
    if (l < 0.0f) l = 0.0f;
    return fabsf(vm_in(x)) <= l ? (ew_value){0.0, 0} : x;
}

/* ---- Threshold (threshold_v2 threshold_dag.h: Compare LE, Select value) ----------------------------------- */

ew_value threshold_f(const ew_plan *p, ew_value x, ew_value y, ew_value z) {
    (void)y, (void)z;
    return x.f <= p->vattr[0].f ? p->vattr[1] : x;
}

ew_value threshold_i(const ew_plan *p, ew_value x, ew_value y, ew_value z) {
    (void)y, (void)z;
    return x.i <= p->vattr[0].i ? p->vattr[1] : x;
}

/* ---- steps of the transcendental activations ---------------------------------------------------------------- */

/* The dtype of step operand k (a tensor's or a scalar's). */
static aclDataType operand_dtype(op_call *c, const op_step *s, int k) {
    return c->def->params[s->p[k]].kind == OP_K_SCALAR ? op_scalar_of(c, s, k)->dtype : op_tensor(c, s, k)->dtype;
}

/* act_to_float a ...: each operand's dtype can be cast to FLOAT ("<a> dtype X can not cast to float32."). */
aclnnStatus opc_act_to_float(op_call *c, const op_step *s) {
    for (int k = 0; k < s->np; k++) {
        aclDataType dt = operand_dtype(c, s, k);
        if (ew_can_cast(dt, ACL_FLOAT)) continue;
        char b[24];
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "%s dtype %s can not cast to float32.", op_pname(c, s, k),
                            op_dtype_name(dt, b));
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

/* act_castable a b: a's dtype can be cast to b's (OP_CHECK_RESULT_DTYPE_CAST_FAILED). */
aclnnStatus opc_act_castable(op_call *c, const op_step *s) {
    aclDataType a = operand_dtype(c, s, 0), b = operand_dtype(c, s, 1);
    if (ew_can_cast(a, b)) return ACLNN_SUCCESS;
    char b1[24], b2[24];
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Result type %s can't be cast to the desired output type %s.",
                        op_dtype_name(a, b1), op_dtype_name(b, b2));
    return ACLNN_ERR_PARAM_INVALID;
}

/* celu_alpha alpha: alpha (as float) is not 0 (nor NaN: the vendor tests !(a > 0 || a < 0)). */
aclnnStatus opc_celu_alpha(op_call *c, const op_step *s) {
    const op_scalar *sc = op_scalar_of(c, s, 0);
    float a = (float)ew_value_to_double(sc->v, sc->dtype);
    if (a > 0.0f || a < 0.0f) return ACLNN_SUCCESS;
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "alpha cannot be 0 for CELU.");
    return ACLNN_ERR_PARAM_INVALID;
}

/* ---- Elu (elu_dag.h; DOUBLE: elu_aicpu.cpp) ---------------------------------------------------------------- */

/* std::stod(std::to_string(f)): the AI CPU kernel's float attribute as double (6 decimals). */
static double aicpu_attr(float f) {
    char buf[64];
    snprintf(buf, sizeof buf, "%f", (double)f);
    return strtod(buf, NULL);
}

static double elu_aicpu(double x, float alpha, float scale, float iscale) {
    if (fabsf(alpha - 1.0f) < FLT_EPSILON && fabsf(scale - 1.0f) < FLT_EPSILON && fabsf(iscale - 1.0f) < FLT_EPSILON)
        return x >= 0 ? x : exp(x) - 1.0;
    double a = aicpu_attr(alpha), s = aicpu_attr(scale), i = aicpu_attr(iscale);
    if (fabsf(scale - 1.0f) < FLT_EPSILON && fabsf(iscale - 1.0f) < FLT_EPSILON) return x >= 0 ? x : a * (exp(x) - 1.0);
    return x >= 0 ? x * s : a * s * (exp(x * i) - 1.0);
}

ew_value elu_f(const ew_plan *p, ew_value x, ew_value y, ew_value z) {
    (void)y, (void)z;
    float alpha = attr_f(p, 0), scale = attr_f(p, 1), iscale = attr_f(p, 2);
    if (isinf(alpha) || isnan(alpha) || isinf(iscale) || isnan(iscale)) {
        /* the op_api's other route: Threshold(x, 0, -alpha) in fp32 (DOUBLE too), then Muls(scale) */
        float v = (float)x.f;
        return vm_out(p, (v <= 0.0f ? -alpha : v) * scale);
    }
    if (p->compute == ACL_DOUBLE) return vm_out_double(elu_aicpu(x.f, alpha, scale, iscale));
    float v = vm_in(x), zz = v * iscale, t;
    if (p->compute == ACL_FLOAT) t = (zz * (1.0f / 120.0f) + 1.0f / 24.0f) * zz;   /* five terms */
    else t = zz * (1.0f / 24.0f);                                                 /* four terms */
    t = ((t + 1.0f / 6.0f) * zz + 0.5f) * zz;
    float poly = (t + 1.0f) * zz;
    float em1 = vm_exp(zz) - 1.0f;
    float neg = (fabsf(zz) < 0.1f ? poly : em1) * alpha;
    return vm_out(p, (v > 0.0f ? v : neg) * scale);
}

/* ---- Celu (celu_v2.h: expm1 by Kahan's u * (e - 1) / ln(e) for |u| < 0.5, then max(0, x) + min(0, a expm1)) -- */

ew_value celu_f(const ew_plan *p, ew_value x, ew_value y, ew_value z) {
    (void)y, (void)z;
    float alpha = attr_f(p, 0), inv = 1.0f / alpha, v = vm_in(x);
    if (p->compute == ACL_FLOAT) v = v + 0.0f;                 /* the fp32 path's Adds(x, 0): -0.0 -> +0.0 */
    float u = v * inv, e = vm_exp(u), naive = e - 1.0f, ln = vm_ln(e);
    float kahan = u * (e - 1.0f) / ln;
    if (ln == 0.0f) kahan = u;
    float r = max_nan(v, 0.0f) + min_nan((fabsf(u) < 0.5f ? kahan : naive) * alpha, 0.0f);
    return p->compute == ACL_FLOAT ? vm_out(p, r + 0.0f) : round_out(p, r);
}

/* ---- Softplus (softplus_v2.h): log1p(exp(beta x)) / beta below the threshold, x above -------------------- */

ew_value softplus_f(const ew_plan *p, ew_value x, ew_value y, ew_value z) {
    (void)y, (void)z;
    float beta = attr_f(p, 0), threshold = attr_f(p, 1);
    float inv = fabsf(beta) <= FLT_EPSILON ? INFINITY : 1.0f / beta;   /* the tiling's SafeInvBeta */
    float v = vm_in(x), t = v * beta;
    int above = t > threshold;
    float e = vm_exp(above ? 0.0f : t), u = e + 1.0f;
    float log1p = u == 1.0f ? e : vm_ln(u) * (e / (u - 1.0f));
    if (e + 1.0f == INFINITY) log1p = INFINITY;
    float r = above ? v : log1p * inv;
    return p->compute == ACL_FLOAT ? vm_out(p, r) : round_out(p, r);
}

/* ---- Mish (mish_dag.h) and the tanh(softplus(x)) MishGrad shares ------------------------------------------ */

/* tanh(log1p(exp(x))): (2e^-x + 1) / (2e^-x + 1 + 2e^-2x) for x >= 0, (e^2x + 2e^x) / (e^2x + 2e^x + 2) below. */
static float tanh_softplus(float x) {
    float a = vm_exp(x * -1.0f), b = vm_exp(x * -2.0f);
    a = a * 2.0f + 1.0f;
    b = a + b * 2.0f;
    float pos = a / b;
    float n = vm_fma(vm_exp(x), 2.0f, vm_exp(x * 2.0f));   /* Axpy: e^2x + 2 e^x */
    float neg = n / (n + 2.0f);
    return x < 0.0f ? neg : pos;
}

ew_value mish_f(const ew_plan *p, ew_value x, ew_value y, ew_value z) {
    (void)y, (void)z;
    float v = vm_in(x);
    return vm_out(p, tanh_softplus(v) * v);
}

/* ---- LogSigmoid (log_sigmoid_dag.h): min(x, 0) - log1p(exp(-|x|)) ------------------------------------------ */

ew_value log_sigmoid_f(const ew_plan *p, ew_value x, ew_value y, ew_value z) {
    (void)y, (void)z;
    float v = vm_in(x), e = vm_exp(fabsf(v) * -1.0f), u = e + 1.0f;
    float log1p = u != 1.0f ? vm_ln(u) * (e / (u - 1.0f)) : e;
    return vm_out(p, min_nan(v, 0.0f) - log1p);
}

/* ---- Logit (kernel not published): log(z / (1 - z)), z = clamp(x, eps, 1 - eps) when eps >= 0 ------------- */

ew_value logit_f(const ew_plan *p, ew_value x, ew_value y, ew_value z) {
    (void)y, (void)z;
    double eps = p->attr[0], v = x.f;
    if (eps >= 0) v = v < eps ? eps : v > 1.0 - eps ? 1.0 - eps : v;
    return vm_out(p, (float)log(v / (1.0 - v)));
}

/* ---- Gelu: the vendor's kernel is GeluV2's tanh one (gelu_dag.h = gelu_v2_dag.h GeluV2Tanh), so the values are
 * GeluV2(approximate = tanh)'s: gelu.c's float64 arithmetic, rounded once to fp32, then to the dtype. ---------- */

ew_value gelu_tanh_f(const ew_plan *p, ew_value x, ew_value y, ew_value z) {
    (void)y, (void)z;
    return vm_out(p, (float)gelu(x.f, 1));
}

/* ======== backwards (act_grad.toml): x0 is gradOutput (LogitGrad: x), x1 the forward's input or result ======== */

/* leaky_relu_is_result negativeSlope selfIsResult: a negative slope cannot run on the forward's result. */
aclnnStatus opc_leaky_relu_is_result(op_call *c, const op_step *s) {
    const op_scalar *sc = op_scalar_of(c, s, 0);
    double slope = ew_value_to_double(sc->v, sc->dtype);
    if (!(op_argument(c, s, 1)->i && slope < 0.0)) return ACLNN_SUCCESS;
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "In-place leakyRelu backward calculation is triggered with a "
                        "negativeSlope which is not supported, while negativeSlope: [%e], selfIsResult: [%d]. This is "
                        "caused by calling in-place forward function with a negative slope, please call out-of-place "
                        "version instead.", slope, 1);
    return ACLNN_ERR_PARAM_INVALID;
}

/* elu_is_result alpha isResult: a negative alpha cannot run on the forward's result. */
aclnnStatus opc_elu_is_result(op_call *c, const op_step *s) {
    const op_scalar *sc = op_scalar_of(c, s, 0);
    if (!(op_argument(c, s, 1)->i && (float)ew_value_to_double(sc->v, sc->dtype) < 0.0f)) return ACLNN_SUCCESS;
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "In-place elu backward calculation is triggered with a negative "
                        "slope which is not supported. This is caused by calling in-place forward function with a "
                        "negative slope, please call out-of-place version instead.");
    return ACLNN_ERR_PARAM_INVALID;
}

static int kernel_float(aclDataType dt) { return dt == ACL_FLOAT || dt == ACL_FLOAT16 || dt == ACL_BF16; }

/* softplus_bw_compute gradOutput self: both cast to FLOAT unless they share a dtype the kernel takes. */
aclnnStatus opc_softplus_bw_compute(op_call *c, const op_step *s) {
    aclDataType g = op_tensor(c, s, 0)->dtype, x = op_tensor(c, s, 1)->dtype;
    c->compute = kernel_float(g) && g == x ? g : ACL_FLOAT;
    return ACLNN_SUCCESS;
}

/* softshrink_bw_compute gradOutput self: both cast to FLOAT when their dtypes differ. */
aclnnStatus opc_softshrink_bw_compute(op_call *c, const op_step *s) {
    aclDataType g = op_tensor(c, s, 0)->dtype, x = op_tensor(c, s, 1)->dtype;
    c->compute = g == x ? g : ACL_FLOAT;
    return ACLNN_SUCCESS;
}

/* hardshrink_bw_promote gradOutput self gradInput LIST: the promoted dtype, in LIST, castable to gradInput. */
aclnnStatus opc_hardshrink_bw_promote(op_call *c, const op_step *s) {
    aclDataType g = op_tensor(c, s, 0)->dtype, x = op_tensor(c, s, 1)->dtype, out = op_tensor(c, s, 2)->dtype;
    aclDataType p = ew_promote(g, x);
    char b1[24], b2[24], all[128];
    size_t n;
    const aclDataType *list = op_list(s->list, &n);
    int listed = 0;
    for (size_t i = 0; i < n; i++) listed |= list[i] == p;
    if (p == ACL_DT_UNDEFINED) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "GradOutput dtype %s and self dtype %s can not promote "
                            "dtype.", op_dtype_name(g, b1), op_dtype_name(x, b2));
    } else if (!listed) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "promote dtype %s should be in dtype support list [%s].",
                            op_dtype_name(p, b1), ew_dtype_list(list, n, all, sizeof all));
    } else if (!ew_can_cast(p, out)) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Result type %s can't be cast to the desired output type "
                            "%s.", op_dtype_name(p, b1), op_dtype_name(out, b2));
    } else {
        c->compute = p;
        return ACLNN_SUCCESS;
    }
    return ACLNN_ERR_PARAM_INVALID;
}

/* broadcast_unless_empty a b out: out has the broadcast shape of a and b, checked only when the launch does
 * something (HardshrinkBackward returns for empty inputs before it checks the broadcast). */
aclnnStatus opc_broadcast_unless_empty(op_call *c, const op_step *s) {
    if (c->nothing) return ACLNN_SUCCESS;
    aclnnStatus rc = ew_broadcast(c->api, op_pname(c, s, 0), op_tensor(c, s, 0), op_pname(c, s, 1), op_tensor(c, s, 1),
                                  c->shape, &c->ndim);
    return rc ? rc : ew_check_shape(c->api, op_pname(c, s, 2), op_tensor(c, s, 2), c->shape, c->ndim);
}

/* HardtanhGrad (hardtanh_grad_dag.h): grad where min < x < max (fp32 compares) or x is NaN, else 0. */
ew_value hardtanh_backward_f(const ew_plan *p, ew_value g, ew_value x, ew_value z) {
    (void)z;
    float v = vm_in(x);
    return (v < attr_f(p, 1) && v > attr_f(p, 0)) || v != v ? g : (ew_value){0.0, 0};
}

/* LeakyReluGrad (leaky_relu_grad_dag.h): x > 0 ? g : g * slope, in fp32 (DOUBLE: the AI CPU kernel). */
ew_value leaky_relu_backward_f(const ew_plan *p, ew_value g, ew_value x, ew_value z) {
    (void)z;
    float slope = attr_f(p, 0);
    if (p->compute == ACL_DOUBLE) return vm_out_double(x.f > 0 ? g.f : g.f * (double)slope);
    float gv = vm_in(g);
    return vm_out(p, x.f > 0 ? gv : gv * slope);
}

/* EluGradV2 (elu_grad_v2_dag.h), negcoef = alpha * scale (the tiling, in float): on the result y,
 * y <= 0 ? (g * inputScale) * (y + negcoef) : g * scale; on the input x, x <= 0 ?
 * ((g * inputScale) * negcoef) * exp(x * inputScale) : g * scale. */
ew_value elu_backward_f(const ew_plan *p, ew_value g, ew_value y, ew_value z) {
    (void)z;
    float scale = attr_f(p, 1), iscale = attr_f(p, 2), neg = attr_f(p, 0) * scale;
    float gv = vm_in(g), v = vm_in(y), r;
    if (p->attr[3] != 0) r = v <= 0.0f ? gv * iscale * (v + neg) : gv * scale;
    else r = v <= 0.0f ? gv * iscale * neg * vm_exp(v * iscale) : gv * scale;
    return vm_out(p, r);
}

/* SoftplusV2Grad (softplus_v2_grad_kernel.h): t = x * beta; t > threshold (compared with t - t + threshold,
 * so never for an infinite t) ? g : g / (1 + exp(-t)). */
ew_value softplus_backward_f(const ew_plan *p, ew_value g, ew_value x, ew_value z) {
    (void)z;
    float t = vm_in(x) * attr_f(p, 0), gv = vm_in(g);
    float d = gv / (vm_exp(-t) + 1.0f);
    return vm_out(p, t > (t - t) + attr_f(p, 1) ? gv : d);
}

/* MishGrad (mish_grad_dag.h, tanh(softplus(x)) computed): (t - x (t^2 - 1) / (1 + exp(-x))) * g. */
ew_value mish_backward_f(const ew_plan *p, ew_value g, ew_value x, ew_value z) {
    (void)z;
    float v = vm_in(x), t = tanh_softplus(v);
    float d = t - (t * t - 1.0f) * v / (vm_exp(v * -1.0f) + 1.0f);
    return vm_out(p, d * vm_in(g));
}

/* HardSwishGrad (hard_swish_grad.h): d = x / 3 + 1/2, 0 below -3, 1 above 3 (V2: strict bounds); g * d. */
static ew_value hardswish_grad(const ew_plan *p, ew_value g, ew_value x, int strict) {
    float v = vm_in(x), d = v * (1.0f / 3.0f) + 0.5f;
    d = (strict ? v > -3.0f : v >= -3.0f) ? d : 0.0f;
    d = (strict ? v < 3.0f : v <= 3.0f) ? d : 1.0f;
    return vm_out(p, vm_in(g) * d);
}

ew_value hardswish_backward_f(const ew_plan *p, ew_value g, ew_value x, ew_value z) {
    (void)z;
    return hardswish_grad(p, g, x, 0);
}

ew_value hardswish_backward_v2_f(const ew_plan *p, ew_value g, ew_value x, ew_value z) {
    (void)z;
    return hardswish_grad(p, g, x, 1);
}

/* HardSigmoidGrad (hard_sigmoid_grad.h): g * alpha where 0 < x * alpha + beta < 1, else 0 (bf16 CAST_ROUND). */
ew_value hardsigmoid_backward_f(const ew_plan *p, ew_value g, ew_value x, ew_value z) {
    (void)z;
    float t = vm_in(x) * HS_ALPHA + HS_BETA, r = vm_in(g) * HS_ALPHA;
    r = t > 0.0f ? r : 0.0f;
    r = t < 1.0f ? r : 0.0f;
    return p->compute == ACL_BF16 ? round_out(p, r) : vm_out(p, r);
}

/* LogSigmoidGrad (logsigmoid_grad_dag.h): (x < 0 ? 1 : e) / (1 + e) * g, e = exp(-|x|). */
ew_value log_sigmoid_backward_f(const ew_plan *p, ew_value g, ew_value x, ew_value z) {
    (void)z;
    float v = vm_in(x), e = vm_exp(fabsf(v) * -1.0f);
    return vm_out(p, (v < 0.0f ? 1.0f : e) / (e + 1.0f) * vm_in(g));
}

/* SoftShrinkGrad (soft_shrink_grad.h): g where |x| > lambd or x is NaN, else 0. */
ew_value softshrink_backward_f(const ew_plan *p, ew_value g, ew_value x, ew_value z) {
    (void)z;
    float v = vm_in(x);
    return fabsf(v) > attr_f(p, 0) || v != v ? g : (ew_value){0.0, 0};
}

/* HardShrinkGrad (hard_shrink_grad.h): 0 where |x| <= lambd (a negative lambd counts as 0), else g. */
ew_value hardshrink_backward_f(const ew_plan *p, ew_value g, ew_value x, ew_value z) {
    (void)z;
    float l = attr_f(p, 0);
    return fabsf(vm_in(x)) <= (l < 0.0f ? 0.0f : l) ? (ew_value){0.0, 0} : g;
}

/* LogitGrad (kernel not published): dy / (x (1 - x)); outside [0, 1] NaN (eps < 0), outside [eps, 1 - eps]
 * 0 (eps >= 0); in double, rounded once to fp32. */
ew_value logit_grad_f(const ew_plan *p, ew_value x, ew_value dy, ew_value z) {
    (void)z;
    double eps = p->attr[0], v = x.f;
    if (eps < 0 ? (v < 0 || v > 1) : (v < eps || v > 1.0 - eps)) return vm_out(p, eps < 0 ? NAN : 0.0f);
    return vm_out(p, (float)(dy.f / (v * (1.0 - v))));
}

/* gelu_bw_promote gradOutput self LIST: the compute dtype is the promoted one, which must be in LIST (the
 * operands' own dtypes are not checked; the result is cast to gradInput's). */
aclnnStatus opc_gelu_bw_promote(op_call *c, const op_step *s) {
    aclDataType g = op_tensor(c, s, 0)->dtype, x = op_tensor(c, s, 1)->dtype, p = ew_promote(g, x);
    char b1[24], b2[24], all[128];
    size_t n;
    const aclDataType *list = op_list(s->list, &n);
    if (p == ACL_DT_UNDEFINED) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "GradOutput dtype %s and Self dtype %s can not be "
                            "promoted.", op_dtype_name(g, b1), op_dtype_name(x, b2));
        return ACLNN_ERR_PARAM_INVALID;
    }
    for (size_t i = 0; i < n; i++)
        if (list[i] == p) {
            c->compute = p;
            return ACLNN_SUCCESS;
        }
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "promoteType dtype %s should be in dtype support list %s.",
                        op_dtype_name(p, b1), ew_dtype_list(list, n, all, sizeof all));
    return ACLNN_ERR_PARAM_INVALID;
}

/* GeluGrad: GeluBackwardV2's tanh kernel (gelu_grad_dag.h = gelu_grad_v2_dag.h GeluGradV2TanhCustom):
 * g * gelu'(x) in float64 (gelu.c), rounded once to fp32, then to the compute dtype. */
ew_value gelu_backward_tanh_f(const ew_plan *p, ew_value g, ew_value x, ew_value z) {
    (void)z;
    return vm_out(p, (float)(g.f * gelu_grad(x.f, 1)));
}
