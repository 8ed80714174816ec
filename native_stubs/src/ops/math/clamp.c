/*
 * The clamp kernel (hicann/ops-math conversion/clip_by_value_v2: ClipByValueV2, Max(x, min) then Min(., max) in
 * the compute dtype) as element functions, and the clamp family's steps. Hardtanh (activation/act_fn.toml) runs
 * the same kernel.
 *
 * The bounds come either as tensor inputs (x1, x2 in that order, when the plan's attr[0] / attr[1] flags say
 * min / max is a tensor) or as values of the compute dtype in the plan's vattr[0] / vattr[1] (scalar bounds:
 * pw_scalars; an absent bound: the vendor's Normalize{Min,Max}Scalar extreme of the dtype).
 *
 * Exact (class a): values are compared, never rounded. NaN: the result is NaN when x or a bound is NaN (the
 * vendor's AI CPU kernel says so; its AI core kernel's Max/Min instructions are not documented for NaN: the
 * emulator takes the same rule, which is also torch's). Ties keep x (std::max(x, min), std::min(r, max) of the
 * AI CPU kernel): clamp(-0.0, min = +0.0) is -0.0.
 */
#include <math.h>

#include "opbase/opbase.h"
#include "ops_decls.h"

/* The bounds of one element: tensor operands first (min before max), else the plan's values. */
static void bounds(const ew_plan *p, ew_value a, ew_value b, ew_value *lo, ew_value *hi) {
    ew_value t[2] = {a, b};
    int k = 0;
    *lo = p->attr[0] != 0 ? t[k++] : p->vattr[0];
    *hi = p->attr[1] != 0 ? t[k++] : p->vattr[1];
}

ew_value clamp_f(const ew_plan *p, ew_value x, ew_value a, ew_value b) {
    ew_value lo, hi;
    bounds(p, a, b, &lo, &hi);
    if (isnan(x.f)) return x;
    if (isnan(lo.f)) return lo;
    if (isnan(hi.f)) return hi;
    ew_value r = x.f < lo.f ? lo : x;
    return hi.f < r.f ? hi : r;
}

ew_value clamp_i(const ew_plan *p, ew_value x, ew_value a, ew_value b) {
    ew_value lo, hi;
    bounds(p, a, b, &lo, &hi);
    ew_value r = x.i < lo.i ? lo : x;   /* UINT8 and the signed dtypes: their values fit int64 */
    return hi.i < r.i ? hi : r;
}

/* clamp_order min max: min <= max, compared as integers when min's dtype is integral (ToInt64 of both), as
 * doubles when it is floating (a NaN passes); 161002 otherwise (aclnn_hardtanh.cpp CheckMinMaxValue). */
aclnnStatus opc_clamp_order(op_call *c, const op_step *s) {
    const op_scalar *lo = op_scalar_of(c, s, 0), *hi = op_scalar_of(c, s, 1);
    if (ew_is_integral(lo->dtype, 0)) {
        int64_t a = ew_cast(lo->v, lo->dtype, ACL_INT64).i, b = ew_cast(hi->v, hi->dtype, ACL_INT64).i;
        if (a > b) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "min must less than max or equal to max, but min "
                                "is %lld and max is %lld.", (long long)a, (long long)b);
            return ACLNN_ERR_PARAM_INVALID;
        }
    } else if (ew_is_float(lo->dtype)) {
        double a = ew_value_to_double(lo->v, lo->dtype), b = ew_value_to_double(hi->v, hi->dtype);
        if (a > b) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "min must less than max or equal to max, but min "
                                "is %f and max is %f.", a, b);
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    return ACLNN_SUCCESS;
}
