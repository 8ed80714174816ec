/*
 * ForeachRoundOffNumberV2's element functions and its roundMode step (foreach_round.toml), after the A2
 * kernel (foreach_round_off_number/op_kernel/foreach_round_off_number.h): each element cast to fp32, then a
 * Cast with the mode's rounding (fp32 -> fp32: an integral value), or for mode 7 x - trunc(x) (exact in
 * fp32), then Cast RINT back to the list's dtype; integer lists are copied (mode 7: zeros).
 *   fe_round_mode roundMode     INT8 or INT64                                                  -> 161002
 * The mode is the scalar as INT8 (the op_api's ConvertToTensor(scalar, DT_INT8)): 1 rint (ties to even),
 * 2 floor, 3 ceil, 4 round (ties away from zero), 5 trunc, 6 nearest with ties to the odd neighbour,
 * 7 frac, any other none.
 */
#include <math.h>
#include <stdint.h>

#include "opbase/checks.h"
#include "ops_decls.h"

static int8_t round_mode(double m) { return (int8_t)(int64_t)m; }

ew_value round_off_f(const ew_plan *p, ew_value x, ew_value m, ew_value z) {
    (void)z;
    float v = (float)x.f, r;
    switch (round_mode(m.f)) {
    case 1: r = rintf(v); break;
    case 2: r = floorf(v); break;
    case 3: r = ceilf(v); break;
    case 4: r = roundf(v); break;
    case 5: r = truncf(v); break;
    case 6: {
        r = rintf(v);
        if (fabsf(v - truncf(v)) == 0.5f) r = fmodf(truncf(v), 2.0f) != 0.0f ? truncf(v) : truncf(v) + copysignf(1.0f, v);
        break;
    }
    case 7: r = v - truncf(v); break;
    default: r = v; break;
    }
    return ew_cast((ew_value){(double)r, 0}, ACL_FLOAT, p->compute);
}

ew_value round_off_i(const ew_plan *p, ew_value x, ew_value m, ew_value z) {
    (void)p, (void)z;
    return round_mode((double)m.i) == 7 ? (ew_value){0, 0} : x;
}

/* fe_round_mode roundMode: the scalar's dtype INT8 or INT64 (FOREACH_ROUND_SCALAR_SUPPORT_LIST). */
aclnnStatus opc_fe_round_mode(op_call *c, const op_step *s) {
    aclDataType d = op_scalar_of(c, s, 0)->dtype;
    if (d == ACL_INT8 || d == ACL_INT64) return ACLNN_SUCCESS;
    char b[24];
    return op_invalidf(c->api, "%s dtype %s should be in dtype support list [INT8, INT64].", op_pname(c, s, 0),
                       op_dtype_name(d, b));
}
