/*
 * Element functions and family steps of the pair operators (pairwise.toml): minimum / maximum, fmod,
 * remainder (floor mod), floor divide. a, b arrive in the compute dtype; integers as int64 values of it.
 */
#include <math.h>

#include "kernels/vecmath.h"
#include "opbase/checks.h"
#include "ops_decls.h"

static inline ew_value fval(double v) { return (ew_value){v, 0}; }

/* An integer result wrapped to the compute dtype. */
static inline ew_value ival(const ew_plan *p, uint64_t v) { return ew_cast((ew_value){0, (int64_t)v}, ACL_INT64, p->compute); }

/* ---- minimum / maximum (Minimum / Maximum kernels; BOOL: LogicalAnd / LogicalOr) ------------------------ */

ew_value minimum_f(const ew_plan *p, ew_value a, ew_value b, ew_value z) {
    (void)p, (void)z;
    if (isnan(a.f)) return a;
    if (isnan(b.f)) return b;
    return a.f < b.f ? a : b;
}

ew_value maximum_f(const ew_plan *p, ew_value a, ew_value b, ew_value z) {
    (void)p, (void)z;
    if (isnan(a.f)) return a;
    if (isnan(b.f)) return b;
    return a.f > b.f ? a : b;
}

ew_value minimum_i(const ew_plan *p, ew_value a, ew_value b, ew_value z) {
    (void)p, (void)z;
    return a.i < b.i ? a : b;           /* BOOL: and; UINT8 values are non-negative int64s */
}

ew_value maximum_i(const ew_plan *p, ew_value a, ew_value b, ew_value z) {
    (void)p, (void)z;
    return a.i > b.i ? a : b;
}

/* ---- fmod (math/mod/op_kernel/arch35/mod_dag.h: FmodHighPrecision; integers trunc remainder, % 0 = -1) --- */

ew_value fmod_f(const ew_plan *p, ew_value a, ew_value b, ew_value z) {
    (void)p, (void)z;
    return fval(fmod(a.f, b.f));        /* exact: representable in the operands' dtype */
}

/* a - b * trunc(a / b); 0 for INT64_MIN % -1 (the wrapping product) */
static int64_t trunc_rem(int64_t a, int64_t b) { return b == -1 ? 0 : a % b; }

ew_value fmod_i(const ew_plan *p, ew_value a, ew_value b, ew_value z) {
    (void)z;
    return ival(p, b.i == 0 ? (uint64_t)-1 : (uint64_t)trunc_rem(a.i, b.i));
}

/* ---- remainder (math/floor_mod/op_kernel/arch35/floor_mod_dag.h) -----------------------------------------
 * r = fmod(a, b); where r != 0 and r's sign bit differs from b's, r + b (fp32 for fp16/bf16, cast back). */
ew_value remainder_f(const ew_plan *p, ew_value a, ew_value b, ew_value z) {
    (void)z;
    double r = fmod(a.f, b.f);
    if (r == 0.0 || isnan(r) || signbit(r) == signbit(b.f)) return fval(r);
    if (p->compute == ACL_DOUBLE) return fval(r + b.f);
    return vm_out(p, (float)r + (float)b.f);
}

ew_value remainder_i(const ew_plan *p, ew_value a, ew_value b, ew_value z) {
    (void)z;
    int64_t m = b.i == 0 ? -1 : trunc_rem(a.i, b.i);
    if (m != 0 && (m < 0) != (b.i < 0)) return ival(p, (uint64_t)m + (uint64_t)b.i);
    return ival(p, (uint64_t)m);
}

/* ---- floor divide (math/floor_div/op_kernel/arch35/floor_div_dag.h) ---------------------------------------
 * floats: DivHighPrecision (IEEE) then floor, in fp32 (fp16/bf16 cast back) or double; integers: floor division,
 * wrapping, // 0 = 0 (the emulator's choice). */
ew_value floordiv_f(const ew_plan *p, ew_value a, ew_value b, ew_value z) {
    (void)z;
    if (p->compute == ACL_DOUBLE) return fval(floor(a.f / b.f));
    return vm_out(p, floorf(vm_in(a) / vm_in(b)));
}

ew_value floordiv_i(const ew_plan *p, ew_value a, ew_value b, ew_value z) {
    (void)z;
    if (b.i == 0) return ival(p, 0);
    if (b.i == -1) return ival(p, (uint64_t)0 - (uint64_t)a.i);
    int64_t q = a.i / b.i;
    if (a.i % b.i != 0 && ((a.i < 0) != (b.i < 0))) q--;
    return ival(p, (uint64_t)q);
}

/* ---- family steps -------------------------------------------------------------------------------------- */

/* floordiv_compute: a BOOL promotion computes in FLOAT (the vendor's CalcFloorDivide). */
aclnnStatus opc_floordiv_compute(op_call *c, const op_step *s) {
    (void)s;
    if (c->compute == ACL_BOOL) c->compute = ACL_FLOAT;
    return ACLNN_SUCCESS;
}

static int scalar_like(const int64_t *shape, int64_t ndim) { return ndim == 0 || (ndim == 1 && shape[0] == 1); }

/* remainder_shape out ["inplace"]: out has the broadcast shape (a step before computed it). Atlas A2 lets a
 * 0-d or [1] out stand for a 0-d or [1] broadcast shape out of place (aclnn_remainder.cpp CheckBroadcastShape). */
aclnnStatus opc_remainder_shape(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *out = op_tensor(c, s, 0);
    int inplace = s->text != NULL;
    if (!ew_soc_is_950() && !inplace && scalar_like(c->shape, c->ndim) && scalar_like(out->shape, out->ndim))
        return ACLNN_SUCCESS;
    return ew_check_shape(c->api, op_pname(c, s, 0), out, c->shape, c->ndim);
}
