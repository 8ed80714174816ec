/*
 * Element functions of the rounding family (rounding.toml): sign, signbit, round (decimals), floor, trunc, frac,
 * isneginf / isposinf. x arrives in the compute dtype (self's); float functions return a value exact in it.
 */
#include <math.h>

#include "kernels/vecmath.h"
#include "ops_decls.h"

static inline ew_value fval(double v) { return (ew_value){v, 0}; }
static inline ew_value ival(int64_t v) { return (ew_value){0, v}; }

/* ---- integers copied / zeros (or false) -------------------------------------------------------------------- */

ew_value copy_i(const ew_plan *p, ew_value x, ew_value y, ew_value z) {
    (void)p, (void)y, (void)z;
    return x;
}

ew_value zero_i(const ew_plan *p, ew_value x, ew_value y, ew_value z) {
    (void)p, (void)x, (void)y, (void)z;
    return ival(0);
}

/* ---- sign (math/sign/op_kernel/arch35/sign.h): (x > 0 ? 1 : 0) - (x < 0 ? 1 : 0) ------------------------ */

ew_value sign_f(const ew_plan *p, ew_value x, ew_value y, ew_value z) {
    (void)p, (void)y, (void)z;
    return fval((double)(x.f > 0.0) - (double)(x.f < 0.0));
}

ew_value sign_i(const ew_plan *p, ew_value x, ew_value y, ew_value z) {
    (void)p, (void)y, (void)z;
    return ival((x.i > 0) - (x.i < 0));
}

/* ---- signbit: the 950's Signbit kernel shifts the sign bit out; A2 compares with 0 (Less) ---------------- */

ew_value signbit_f(const ew_plan *p, ew_value x, ew_value y, ew_value z) {
    (void)p, (void)y, (void)z;
    if (pyaclnn_stub_soc_family() == PYACLNN_SOC_950) return ival(signbit(x.f) != 0);
    return ival(x.f < 0.0);
}

ew_value signbit_i(const ew_plan *p, ew_value x, ew_value y, ew_value z) {
    (void)y, (void)z;
    int is_unsigned = p->compute == ACL_UINT16 || p->compute == ACL_UINT32 || p->compute == ACL_UINT64;
    return ival(!is_unsigned && x.i < 0);
}

/* ---- round / round decimals (math/round/op_kernel/arch35/round_dag.h, op_host/arch35 tiling) ------------ */

/* RoundCustom: rint (CAST_RINT), the input's sign bit or'ed in (-0.4 -> -0.0). */
static float rint_signed(float v) { return vm_or_sign(rintf(v), v); }

static float round32(float x, int64_t d) {
    if (d == 0) return rint_signed(x);
    if (d > 38 || d < -38) return NAN;                        /* RoundNan: 0 / 0 */
    float pw = (float)pow(10.0, fabs((double)d));
    return d > 0 ? rint_signed(x * pw) / pw : rint_signed(x / pw) * pw;
}

static double round64(double x, int64_t d) {
    if (d == 0) return copysign(rint(x), x);
    double pw = pow(10.0, fabs((double)d));
    return d > 0 ? copysign(rint(x * pw), x) / pw : copysign(rint(x / pw), x) * pw;
}

/* The decimals attribute (pw_attrs carries it as a double: clamped back into int64). */
static int64_t decimals_of(const ew_plan *p) {
    double d = p->attr[0];
    return d >= 9.2e18 ? INT64_MAX : d <= -9.2e18 ? INT64_MIN : (int64_t)d;
}

ew_value round_f(const ew_plan *p, ew_value x, ew_value y, ew_value z) {
    (void)y, (void)z;
    int64_t d = decimals_of(p);
    if (p->compute == ACL_DOUBLE) return vm_out_double(round64(x.f, d));
    return vm_out(p, round32(vm_in(x), d));
}

/* RoundIntCustom: |x| = q 10^k + r, q + 1 when 2r > 10^k or (2r == 10^k and q odd), x's sign, times 10^k,
 * in int32 arithmetic (wrapping). */
static int32_t round_int32_steps(int32_t x, int32_t power) {
    int32_t a = (int32_t)(x < 0 ? 0u - (uint32_t)x : (uint32_t)x);
    int32_t q = a / power, twice = (int32_t)((uint32_t)(a - q * power) * 2u);
    int32_t m = q + (((twice == power) && (q & 1)) || twice > power);
    return (int32_t)((uint32_t)(x < 0 ? -m : m) * (uint32_t)power);
}

static int64_t round_int32(int32_t x, int64_t d) {
    static const int32_t power[9] = {0, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};
    static const int32_t num[9] = {0, 2147483645, -2147483600, 2147483499, -2147480000,
                                   2147450000, -2147000000, 2145000000, -2100000000};
    if (d >= 0) return x;
    if (d < -9) return d < -308 ? INT32_MIN : 0;
    if (d == -9) {
        int32_t a = (int32_t)(x < 0 ? 0u - (uint32_t)x : (uint32_t)x);
        int32_t v = a >= 1500000000 ? 2000000000 : a > 500000000 ? 1000000000 : 0;
        return x == INT32_MIN ? -2000000000 : (x < 0 ? -v : v);
    }
    int k = (int)-d;
    int32_t r = round_int32_steps(x, power[k]);
    int32_t a = (int32_t)(x < 0 ? 0u - (uint32_t)x : (uint32_t)x);
    if (k & 1) return (a > num[k] || x == INT32_MIN) ? INT32_MIN : r;     /* overflow marked INT32_MIN */
    return x == INT32_MIN ? num[k] : r;
}

/* INT64 (the AI CPU kernel): half to even at 10^-d in int64 (0 beyond 10^18). */
static int64_t round_int64(int64_t x, int64_t d) {
    if (d >= 0) return x;
    if (d < -18) return 0;
    int64_t power = 1;
    for (int64_t k = 0; k < -d; k++) power *= 10;
    uint64_t a = x < 0 ? 0u - (uint64_t)x : (uint64_t)x;
    uint64_t q = a / (uint64_t)power, r = a % (uint64_t)power;
    uint64_t m = q + ((2 * r == (uint64_t)power && (q & 1)) || 2 * r > (uint64_t)power);
    uint64_t v = m * (uint64_t)power;
    return (int64_t)(x < 0 ? 0u - v : v);
}

ew_value round_i(const ew_plan *p, ew_value x, ew_value y, ew_value z) {
    (void)y, (void)z;
    int64_t d = decimals_of(p);
    return ival(p->compute == ACL_INT32 ? round_int32((int32_t)x.i, d) : round_int64(x.i, d));
}

/* ---- floor, trunc, frac (exact in the compute dtype) ---------------------------------------------------- */

ew_value floor_f(const ew_plan *p, ew_value x, ew_value y, ew_value z) {
    (void)p, (void)y, (void)z;
    return fval(floor(x.f));
}

ew_value trunc_f(const ew_plan *p, ew_value x, ew_value y, ew_value z) {
    (void)p, (void)y, (void)z;
    return fval(trunc(x.f));
}

ew_value frac_f(const ew_plan *p, ew_value x, ew_value y, ew_value z) {
    (void)p, (void)y, (void)z;
    return fval(x.f - trunc(x.f));
}

/* ---- isneginf / isposinf -------------------------------------------------------------------------------- */

ew_value isneginf_f(const ew_plan *p, ew_value x, ew_value y, ew_value z) {
    (void)p, (void)y, (void)z;
    return ival(x.f == -INFINITY);
}

ew_value isposinf_f(const ew_plan *p, ew_value x, ew_value y, ew_value z) {
    (void)p, (void)y, (void)z;
    return ival(x.f == INFINITY);
}
