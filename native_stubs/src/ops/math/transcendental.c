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

/* ---- exp2 = Pow(2, x) (math/pow/op_api/aclnn_exp2.cpp) ------------------------------------------------
 * The Pow kernel is AscendC's Power library (DOUBLE_FLOAT_TECH), not published: exp2 in double rounded to
 * fp32 (fp16: then to fp16, the fp16 kernel's output); DOUBLE (AI CPU) in double. */
ew_value exp2_f(const ew_plan *p, ew_value x, ew_value y, ew_value z) {
    (void)y, (void)z;
    if (p->compute == ACL_DOUBLE) return vm_out_double(exp2(x.f));
    return vm_out(p, (float)exp2(x.f));
}

/* ---- expm1 (math/expm1/op_kernel/arch35/expm1_dag.h, a SIMT kernel) ------------------------------------
 * |x| > 2: the device's expm1f (libm expm1 in double rounded to fp32). Otherwise x = n ln2 + r (Cody-Waite
 * with two fused steps, n = 0 for |x| < 0.41), expm1(r) by a degree-6 polynomial with fused multiply-adds,
 * then 2^n * expm1(r) + (2^n - 1) fused; x == 0 gives x + x (keeps -0.0). */
static float expm1_32(float x) {
    float direct = (float)expm1((double)x);
    float n = fabsf(x) < 0.4099999964237213f ? 0.0f : roundf(x * 1.4426950216293335f);
    float r = vm_fma(-n, 0.693145751953125f, x);
    r = vm_fma(-n, 0.000001428606765330187f, r);
    int top = n == 128.0f;
    float e = top ? n - 1.0f : n;
    float q = vm_fma(0.0013879507314413786f, r, 0.008382412604987621f);
    q = vm_fma(q, r, 0.04166783019900322f);
    q = vm_fma(q, r, 0.1666639745235443f);
    q = vm_fma(q, r, 0.4999999403953552f);
    q = vm_fma(r * q, r, r);
    float t = (float)exp2((double)e);
    float v = vm_fma(q, t, t - 1.0f);
    v = top ? v + v : v;
    if (e > 128.0f) v = INFINITY;
    if (e < -25.0f) v = -1.0f;
    if (x == 0.0f) v = x + x;
    return fabsf(x) > 2.0f ? direct : v;
}

ew_value expm1_f(const ew_plan *p, ew_value x, ew_value y, ew_value z) {
    (void)y, (void)z;
    return vm_out(p, expm1_32(vm_in(x)));
}

/* ---- erf, erfc (Vec::Erf / Vec::Erfc of the vendor's elementwise library, not published), erfinv (the
 * device's erfinvf, a SIMT kernel): the function in double rounded to fp32; DOUBLE (AI CPU) in double. */
ew_value erf_f(const ew_plan *p, ew_value x, ew_value y, ew_value z) {
    (void)y, (void)z;
    if (p->compute == ACL_DOUBLE) return vm_out_double(erf(x.f));
    return vm_out(p, (float)erf(x.f));
}

ew_value erfc_f(const ew_plan *p, ew_value x, ew_value y, ew_value z) {
    (void)y, (void)z;
    if (p->compute == ACL_DOUBLE) return vm_out_double(erfc(x.f));
    return vm_out(p, (float)erfc(x.f));
}

/* erfinv in double: Giles' single-precision approximation ("Approximating the erfinv function", 2010), then
 * two Newton steps on erf (erfc near +-1, where 1 - |y| is exact) -- far below fp32's resolution. */
static double erfinv64(double y) {
    if (isnan(y) || y < -1.0 || y > 1.0) return NAN;
    if (y == 0.0) return y;
    if (fabs(y) == 1.0) return copysign(INFINITY, y);
    double w = -log((1.0 - y) * (1.0 + y)), x;
    if (w < 5.0) {
        w -= 2.5;
        x = 2.81022636e-08;
        x = 3.43273939e-07 + x * w;
        x = -3.5233877e-06 + x * w;
        x = -4.39150654e-06 + x * w;
        x = 0.00021858087 + x * w;
        x = -0.00125372503 + x * w;
        x = -0.00417768164 + x * w;
        x = 0.246640727 + x * w;
        x = 1.50140941 + x * w;
    } else {
        w = sqrt(w) - 3.0;
        x = -0.000200214257;
        x = 0.000100950558 + x * w;
        x = 0.00134934322 + x * w;
        x = -0.00367342844 + x * w;
        x = 0.00573950773 + x * w;
        x = -0.0076224613 + x * w;
        x = 0.00943887047 + x * w;
        x = 1.00167406 + x * w;
        x = 2.83297682 + x * w;
    }
    x *= y;
    const double two_over_sqrt_pi = 1.1283791670955126;
    for (int k = 0; k < 2; k++) {
        double d = two_over_sqrt_pi * exp(-x * x);
        /* erf(x) - y; for |y| >= 0.5 through erfc: erf(|x|) - |y| = (1 - |y|) - erfc(|x|), y's sign back */
        double err = fabs(y) < 0.5 ? erf(x) - y : (y > 0 ? 1.0 : -1.0) * ((1.0 - fabs(y)) - erfc(fabs(x)));
        if (d == 0.0) break;
        x -= err / d;
    }
    return x;
}

ew_value erfinv_f(const ew_plan *p, ew_value x, ew_value y, ew_value z) {
    (void)y, (void)z;
    return vm_out(p, (float)erfinv64(x.f));
}
