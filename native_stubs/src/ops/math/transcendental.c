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

VM_UNARY_FN(tanh_f, tanh32, NULL)

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

VM_UNARY_FN(log_f, vm_ln, log)

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
static float log1p32(float v) {
    float u = v + 1.0f;
    float r = vm_ln(u) * (v / (u - 1.0f));
    if (u == 1.0f) r = v;
    if (u == INFINITY) r = INFINITY;
    return r;
}

VM_UNARY_FN(log1p_f, log1p32, log1p)

/* ---- exp2 = Pow(2, x) (math/pow/op_api/aclnn_exp2.cpp) ------------------------------------------------
 * The Pow kernel is AscendC's Power library (DOUBLE_FLOAT_TECH), not published: exp2 in double rounded to
 * fp32 (fp16: then to fp16, the fp16 kernel's output); DOUBLE (AI CPU) in double. */
VM_UNARY_FN(exp2_f, NULL, exp2)

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

VM_UNARY_FN(expm1_f, expm1_32, NULL)

/* ---- erf, erfc (Vec::Erf / Vec::Erfc of the vendor's elementwise library, not published), erfinv (the
 * device's erfinvf, a SIMT kernel): the function in double rounded to fp32; DOUBLE (AI CPU) in double. */
VM_UNARY_FN(erf_f, NULL, erf)

VM_UNARY_FN(erfc_f, NULL, erfc)

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

VM_UNARY_FN(erfinv_f, NULL, erfinv64)

/* ---- trigonometric and hyperbolic ------------------------------------------------------------------------
 * SIMT kernels are C compiled by the vendor's clang-based compiler, whose default -ffp-contract=on fuses a
 * multiply and an add written in one expression (a + b * c): those are vm_fma here. */

/* tan (math/tan/op_kernel/arch35/tan_simt.h): |x| >= 1e7, inf and NaN give NaN; x = fn pi/2 + r (3-part
 * Cody-Waite), tan(r) = r + r^3 P(r^2), -1 / tan(r) in odd quadrants. */
static float tan32(float x) {
    float ax = fabsf(x);
    if (ax >= 1e7f || isinf(x) || isnan(x)) return NAN;
    float fn = roundf(x * 0.6366197723675814f);
    int32_t k = (int32_t)fn;
    float t1 = vm_fma(-fn, 1.5f, x);                 /* x - fn * c: one expression, contracted */
    float t2 = vm_fma(-fn, 0.0703125f, t1);
    float s3 = fn * 4.83826794896619e-04f;
    float e3 = vm_fma(fn, 4.83826794896619e-04f, -s3);
    float r = (t2 - s3) - e3;
    float r2 = r * r, r3 = r2 * r;
    float q = 4.3763746355e-03f;
    q = vm_fma(q, r2, 8.9335614893e-05f);
    q = vm_fma(q, r2, 1.0835969442e-02f);
    q = vm_fma(q, r2, 2.1282127874e-02f);
    q = vm_fma(q, r2, 5.4059927854e-02f);
    q = vm_fma(q, r2, 1.3332663237e-01f);
    q = vm_fma(q, r2, 3.3333349758e-01f);
    float t = vm_fma(r3, q, r);
    return (k & 1) ? -1.0f / t : t;
}

VM_UNARY_FN(tan_f, tan32, tan)

VM_UNARY_FN(asin_f, NULL, asin)

VM_UNARY_FN(acos_f, NULL, acos)

VM_UNARY_FN(atan_f, NULL, atan)

/* sinh (math/sinh/op_kernel/arch35/sinh_dag.h): |x| < 1: x + x^3 P(x^2) (Muls/Adds, one rounding each);
 * else e/2 - 0.25/(e/2) with e/2 = exp(|x| - ln2), signed; |x| >= 90: +-inf. */
static float sinh32(float x) {
    float ax = fabsf(x), x2 = x * x;
    float q = 0.0000027557319f * x2 + 0.00019841270f;
    q = q * x2 + 0.008333347f;
    q = q * x2 + 0.16666667f;
    float taylor = x + q * (x2 * x);
    float e = vm_exp(ax + -0.6931471805599453f);
    float big = e - 0.25f / e;
    if (x < 0.0f) big = -big;
    float r = ax < 1.0f ? taylor : big;
    if (ax >= 90.0f) r = x < 0.0f ? -INFINITY : INFINITY;
    return r;
}

VM_UNARY_FN(sinh_f, sinh32, sinh)

/* cosh (math/cosh/op_kernel/arch35/cosh.h): n = min(trunc(|x| log2 e), 126), r = |x| - n ln2 (two fused
 * Cody-Waite steps), e^x / 4 = exp(r) 2^(n-2) (the power built from the exponent bits), then
 * 2 (e^x/4) + 0.125 / (e^x/4) (Reciprocal taken as IEEE 1/x); |x| >= 90: +inf. */
static float cosh32(float x) {
    float ax = fabsf(x);
    float n = vm_min(truncf(ax * 1.442695041f), 126.0f);
    float r = vm_fma(n, -0.6931471825f, ax);
    r = vm_fma(n, 1.9046542e-9f, r);
    float p2 = vm_float((vm_bits(n + 12583037.0f) << 23));
    float q = vm_exp(r) * p2;
    float y = q * 2.0f + (1.0f / q) * 0.125f;
    return ax >= 90.0f ? INFINITY : y;
}

VM_UNARY_FN(cosh_f, cosh32, cosh)

/* asinh (math/asinh/op_kernel/arch35/asinh.h, its 19 steps): r = |x| + |x| / (sqrt(1/x^2 + 1) + 1/|x|),
 * u = r + 1, res = ln(u) (times r / clip(u - 1) for |x| < 10), corrected by min(res, ln|x| + ln2 + 1/x^2)
 * (below 10; that term alone from 2^28; NaN passed through); |x| < 2^-12: |x|; x's sign (x >= 0) last. */
static float asinh32(float x) {
    float ax = fabsf(x);
    float b = 1.0f / ax;
    float r = sqrtf(b * b + 1.0f);
    r = ax + ax / (r + b);
    float u = r + 1.0f;
    float s = vm_min(vm_max(u + -1.0f, 1.0e-45f), 3.4028235e34f);
    float res = vm_ln(u);
    int small = ax < 10.0f;
    res = (res * (small ? r : 1.0f)) / (small ? s : 1.0f);
    float inv = 1.0f / ax;
    float corr = (vm_ln(ax) + 0.6931472f) + inv * inv;
    float c = small ? corr : 3.4028235e34f;
    if (ax >= 268435456.0f) c = corr;
    if (!(ax == ax)) c = corr;
    float out = vm_min(res, c);
    if (ax < 0.00024414063f) out = ax;
    return x >= 0.0f ? out : out * -1.0f;
}

VM_UNARY_FN(asinh_f, asinh32, asinh)

/* acosh (math/acosh/op_kernel/arch35/acosh.h, its 13 steps): t = x - 1, d = t + sqrt(t*t + 2t),
 * u = d + 1, min(ln(u) * d / clip(u - 1), ln(x) + ln2). */
static float acosh32(float x) {
    float lg = vm_ln(x) + 0.693147180559945286227f;
    float t = x + -1.0f;
    float d = t + sqrtf(t * t + (t + t));
    float u = d + 1.0f;
    float res = vm_ln(u) * d;
    float s = vm_min(vm_max(u + -1.0f, 1.0e-45f), 3.4028235e34f);
    return vm_min(res / s, lg);
}

VM_UNARY_FN(acosh_f, acosh32, acosh)

/* atanh (math/atanh/op_kernel/arch35/atanh_simt.h): |x| < 0.125: x + x^3 (1/3 + x^2 (1/5 + x^2 / 7)) (the
 * compiler's contractions fused), else the device's atanhf (libm in double rounded to fp32). */
static float atanh32(float x) {
    if (x > -0.125f && x < 0.125f) {
        float sq = x * x;
        float q = vm_fma(sq, 1.0f / 7.0f, 1.0f / 5.0f);
        q = vm_fma(sq, q, 1.0f / 3.0f);
        return vm_fma(x * sq, q, x);
    }
    return (float)atanh((double)x);
}

VM_UNARY_FN(atanh_f, atanh32, atanh)

/* ---- atan2 (math/atan2/op_kernel/arch35/atan2_dag.h, Atan2Compute) ----------------------------------------
 * atan(x1 / x2) by two nested reductions (tan(pi/4), tan(pi/8)) and a degree-13 Taylor series, the quadrant
 * added, then the signed zeros and infinities fixed by select. Axpy is Muls then Add; MulDstAdd fused. */
static float atan2_taylor(float x) {
    float x2 = x * x;
    float y = x2 * (1.0f / 13.0f) + -1.0f / 11.0f;
    y = vm_fma(y, x2, 1.0f / 9.0f);
    y = vm_fma(y, x2, -1.0f / 7.0f);
    y = vm_fma(y, x2, 1.0f / 5.0f);
    y = vm_fma(y, x2, -1.0f / 3.0f);
    y = vm_fma(y, x2, 1.0f);
    return y * x;
}

static float atan2_lt1(float x) {
    float t = fabsf((x + -0.4142135623730950f) / (x * 0.4142135623730950f + 1.0f));
    return vm_min(atan2_taylor(t) + 0.392699081698724155f, atan2_taylor(x));
}

static float atan2_atan(float x) {
    float sign = vm_or_sign(1.0f, x);
    float a = vm_min(fabsf(x), 10000000.0f);
    float t = fabsf((a + -1.0f) / (a + 1.0f));
    return vm_min(atan2_lt1(t) + 0.78539816339744831f, atan2_lt1(a)) * sign;
}

static float atan2_32(float x1, float x2) {
    const float pi = 3.14159265358979323846f, pi_2 = 1.5707963267948966192313216916398f;
    float y = atan2_atan(x1 / x2);
    float adjust = 0.0f;
    if (x2 < 0.0f) adjust = x1 >= 0.0f ? pi : -pi;
    y = y + adjust;
    int n1 = signbit(x1) != 0, n2 = signbit(x2) != 0, z1 = x1 == 0.0f, z2 = x2 == 0.0f;
    if (n1 && z2 && n2) y = -pi_2;
    if (!n1 && z2 && n2) y = pi_2;
    if (z1 && n1 && n2) y = -pi;
    if (z1 && n1 && !n2) y = -0.0f;
    if (z1 && !n1 && n2) y = pi;
    if (z1 && !n1 && !n2) y = 0.0f;
    if (n1 && x2 == INFINITY) y = -0.0f;
    if (x1 == INFINITY && x2 == INFINITY) y = 0.78539816339744831f;
    if (x1 == -INFINITY && x2 == INFINITY) y = -0.78539816339744831f;
    if (x1 == INFINITY && x2 == -INFINITY) y = 2.3561944901923448f;
    if (x1 == -INFINITY && x2 == -INFINITY) y = -2.3561944901923448f;
    return y;
}

ew_value atan2_f(const ew_plan *p, ew_value x1, ew_value x2, ew_value z) {
    (void)z;
    if (p->compute == ACL_DOUBLE) return vm_out_double(atan2(x1.f, x2.f));
    return vm_out(p, atan2_32(vm_in(x1), vm_in(x2)));
}

/* ---- logaddexp, logaddexp2 (math/log_add_exp/op_kernel/arch35/log_add_exp_dag.h) --------------------------
 * max(a, b) + log1p(exp(-|a - b|)) with a - b taken as 0 where both are the same infinity, log1p by the
 * compensated ln(1 + e) * e / ((1 + e) - 1). Base e: fp32 and FLOAT16 in their own dtype (the simplified
 * template has no Cast: fp16 steps round to fp16), BF16 in fp32. Base 2: the full template in fp32,
 * exp((-|d| + 0) ln2) and the log1p times 1 / ln2 (ln2 = logf(2)). */
typedef float (*vm_round_fn)(float);

static float round_none(float x) { return x; }
static float round_f16(float x) { return (float)ew_cast((ew_value){x, 0}, ACL_FLOAT, ACL_FLOAT16).f; }

static float logaddexp32(float a, float b, int base2, vm_round_fn r) {
    float mx = vm_max(a, b), mn = vm_min(a, b);
    float d = r(a - b);
    if (mn == INFINITY || mx == -INFINITY) d = 0.0f;
    float t = -fabsf(d);
    if (base2) t = (t + 0.0f) * logf(2.0f);
    float e = r(vm_exp(t));
    float u = r(e + 1.0f);
    float l = r(r(vm_ln(u)) * r(e / r(u + -1.0f)));
    if (u == 1.0f) l = e;
    if (u == INFINITY) l = INFINITY;
    if (base2) l = l * (1.0f / logf(2.0f));
    return r(mx + l);
}

static ew_value logaddexp_any(const ew_plan *p, ew_value a, ew_value b, int base2) {
    vm_round_fn r = !base2 && p->compute == ACL_FLOAT16 ? round_f16 : round_none;
    return vm_out(p, logaddexp32(vm_in(a), vm_in(b), base2, r));
}

ew_value logaddexp_f(const ew_plan *p, ew_value a, ew_value b, ew_value z) {
    (void)z;
    return logaddexp_any(p, a, b, 0);
}

ew_value logaddexp2_f(const ew_plan *p, ew_value a, ew_value b, ew_value z) {
    (void)z;
    return logaddexp_any(p, a, b, 1);
}
