/*
 * Element functions of the transcendental math family (transcendental.toml): each follows its vendor
 * kernel (hicann/ops-math math/<op>/op_kernel/arch35) step by step in fp32, with the vector unit's
 * rounding (kernels/vecmath.h); DOUBLE compute dtypes (the vendor's AI CPU kernels) in double.
 * x0, x1 arrive in the compute dtype; the result is returned in it (vm_out: the closing Cast RINT).
 */
#include <math.h>

#include "kernels/vecmath.h"
#include "ops_decls.h"

/* ---- tanh (math/tanh/op_kernel/arch35/tanh_dag.h, TanhCustom) ------------------------------------ */

/* |x| < 0.6: x + x * x^2 * P(x^2) (Horner with fused multiply-adds); otherwise 1 - 2 / (exp(2|x|) + 1)
 * with x's sign bit, exactly 1 (signed) from |x| >= 9.010913848876953125. NaN takes the polynomial
 * branch (NaN >= 0.6 is false) and stays NaN; tanh(-0.0) gives +0.0 ((-0) * (-0) + (-0) = +0). */
static float tanh32(float x) {
    float x2 = x * x;
    float poly = x2 * 0.0157396831f + -0.0523039624f;
    poly = vm_fma(poly, x2, 0.133152977f);
    poly = vm_fma(poly, x2, -0.333327681f);
    poly = poly * x2;
    poly = vm_fma(poly, x, x);
    float ax = fabsf(x);
    float big = vm_exp(ax * 2.0f) + 1.0f;
    big = 1.0f / big;
    big = big * -2.0f + 1.0f;
    if (ax >= 9.010913848876953125f) big = 1.0f;
    big = vm_or_sign(big, x);
    return ax >= 0.6f ? big : poly;
}

ew_value tanh_f(const ew_plan *p, ew_value x, ew_value y, ew_value z) {
    (void)y, (void)z;
    return vm_out(p, tanh32(vm_in(x)));
}

/* ---- tanh backward (math/tanh_grad/op_kernel/arch35): dy * (1 + (-y) * y) -------------------------- */

ew_value tanh_backward_f(const ew_plan *p, ew_value dy, ew_value y, ew_value z) {
    (void)z;
    if (p->compute == ACL_DOUBLE) return vm_out_double(dy.f * (1.0 - y.f * y.f));
    float t = vm_fma(-vm_in(y), vm_in(y), 1.0f);
    return vm_out(p, t * vm_in(dy));
}

/* ---- logarithms (math/log/op_kernel/arch35/log_dag.h; integral inputs: op_kernel_aicpu/log_aicpu.cpp) ---- */

/* Log2 / Log10 on the AI core: Cast, Muls(scale 1), Adds(shift 0), Log, Muls(1 / ln(base)) in fp32, the
 * factor computed by the tiling in float: 1.0f / log(base) (std::log of a float). Integral and BOOL inputs
 * go to the AI CPU kernel: std::log2 / std::log10 of the integer (in double), stored as FLOAT. */
static ew_value log_base(const ew_plan *p, ew_value x, float inv_ln_base, double (*f64)(double)) {
    if (p->compute == ACL_DOUBLE) return vm_out_double(f64(x.f));
    if (ew_is_integral(p->in_dtype, 1)) return vm_out(p, (float)f64(x.f));
    float v = vm_in(x) * 1.0f + 0.0f;
    return vm_out(p, vm_ln(v) * inv_ln_base);
}

ew_value log_f(const ew_plan *p, ew_value x, ew_value y, ew_value z) {
    (void)y, (void)z;
    if (p->compute == ACL_DOUBLE) return vm_out_double(log(x.f));
    return vm_out(p, vm_ln(vm_in(x)));
}

ew_value log2_f(const ew_plan *p, ew_value x, ew_value y, ew_value z) {
    (void)y, (void)z;
    return log_base(p, x, 1.0f / logf(2.0f), log2);
}

ew_value log10_f(const ew_plan *p, ew_value x, ew_value y, ew_value z) {
    (void)y, (void)z;
    return log_base(p, x, 1.0f / logf(10.0f), log10);
}

/* log1p (math/log1p/op_kernel/arch35/log1p_dag.h): u = x + 1; ln(u) * (x / (u - 1)), corrected where the
 * rounding of u lost x entirely (u == 1: x itself, so -0.0 stays -0.0) and at u == inf. */
ew_value log1p_f(const ew_plan *p, ew_value x, ew_value y, ew_value z) {
    (void)y, (void)z;
    if (p->compute == ACL_DOUBLE) return vm_out_double(log1p(x.f));
    float v = vm_in(x), u = v + 1.0f;
    float r = vm_ln(u) * (v / (u - 1.0f));
    if (u == 1.0f) r = v;
    if (u == INFINITY) r = INFINITY;
    return vm_out(p, r);
}
