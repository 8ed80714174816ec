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
