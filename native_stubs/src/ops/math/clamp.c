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
#include <string.h>

#include "opbase/checks.h"
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

/* ---- the clamp operators' steps (clamp.toml) ------------------------------------------------------------ */

static int in_list(aclDataType dt, const op_dtype_list *l) {
    size_t n;
    const aclDataType *v = op_list(l, &n);
    for (size_t i = 0; i < n; i++)
        if (v[i] == dt) return 1;
    return 0;
}

/* Operand k of a step names the upper bound: its parameter is called clipValueMax / max (the vendor's names),
 * or the step's text says "max" for its one bound. */
static int is_max_bound(const op_call *c, const op_step *s, int k) {
    const char *name = c->def->params[s->p[k]].name;
    return strcmp(name, "clipValueMax") == 0 || strcmp(name, "max") == 0 || (s->text && strcmp(s->text, "max") == 0);
}

/* The extreme of a dtype: where the vendor's Normalize{Min,Max}Scalar puts an absent bound (floats: -inf / inf;
 * integers: the dtype's range). */
static ew_value extreme(aclDataType dt, int upper) {
    if (ew_is_float(dt)) return (ew_value){upper ? INFINITY : -INFINITY, 0};
    switch (dt) {
    case ACL_INT8: return (ew_value){0, upper ? INT8_MAX : INT8_MIN};
    case ACL_UINT8: return (ew_value){0, upper ? UINT8_MAX : 0};
    case ACL_INT16: return (ew_value){0, upper ? INT16_MAX : INT16_MIN};
    case ACL_INT32: return (ew_value){0, upper ? INT32_MAX : INT32_MIN};
    default: return (ew_value){0, upper ? INT64_MAX : INT64_MIN};
    }
}

/* clamp_not_both_null min max: 161001 when both bounds are NULL. */
aclnnStatus opc_clamp_not_both_null(op_call *c, const op_step *s) {
    if (op_argument(c, s, 0)->p != NULL || op_argument(c, s, 1)->p != NULL) return ACLNN_SUCCESS;
    pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, c->api, "clamp: At least one of 'min' or 'max' must not be None.");
    return ACLNN_ERR_PARAM_NULLPTR;
}

/* 161002 unless the compute dtype p can be cast to out's and is in the support list. */
static aclnnStatus promoted_ok(op_call *c, aclDataType p, aclDataType out, const op_dtype_list *list) {
    char b1[24], b2[24], all[160];
    if (p == ACL_DT_UNDEFINED) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "promote type fail.");
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (!ew_can_cast(p, out)) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Result type %s can't be cast to the desired output type "
                            "%s.", op_dtype_name(p, b1), op_dtype_name(out, b2));
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (!in_list(p, list)) {
        size_t n;
        const aclDataType *v = op_list(list, &n);
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "promote dtype not implemented for %s, should be in dtype "
                            "support list %s.", op_dtype_name(p, b1), ew_dtype_list(v, n, all, sizeof all));
        return ACLNN_ERR_PARAM_INVALID;
    }
    c->compute = p;
    return ACLNN_SUCCESS;
}

/* A scalar's dtype category (GetScalarDefaultDtype): floating scalars count as FLOAT. */
static aclDataType scalar_default(aclDataType dt) { return ew_is_float(dt) ? ACL_FLOAT : dt; }

/* clamp_promote self bound... out LIST (scalar bounds): Ascend 950 (regbase): self's dtype combined with the
 * bounds' category (CombineCategoriesWithComplex: a floating self keeps its dtype; BOOL self or a floating
 * category promote; else self's), castable to out and in LIST; other SoCs: out's dtype, self castable to it.
 * Nothing to check for an empty self (the vendor returns before). */
aclnnStatus opc_clamp_promote(op_call *c, const op_step *s) {
    aclDataType self = op_tensor(c, s, 0)->dtype, out = op_tensor(c, s, s->np - 1)->dtype;
    if (c->nothing) {
        c->compute = self;
        return ACLNN_SUCCESS;
    }
    if (pyaclnn_stub_soc_family() != PYACLNN_SOC_950) {
        if (!ew_can_cast(self, out)) {
            char b1[24], b2[24];
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "self type %s can't be cast to the output type %s.",
                                op_dtype_name(self, b1), op_dtype_name(out, b2));
            return ACLNN_ERR_PARAM_INVALID;
        }
        c->compute = out;
        return ACLNN_SUCCESS;
    }
    aclDataType cat = ACL_DT_UNDEFINED;
    for (int k = 1; k < s->np - 1; k++) {
        const op_scalar *sc = op_scalar_of(c, s, k);
        if (sc->dtype == ACL_DT_UNDEFINED) continue;
        aclDataType d = scalar_default(sc->dtype);
        cat = cat == ACL_DT_UNDEFINED ? d : cat == d ? d : ew_promote(cat, d);
    }
    aclDataType p = self;
    if (!ew_is_float(self) && (self == ACL_BOOL || ew_is_float(cat))) p = cat == self ? self : ew_promote(self, cat);
    return promoted_ok(c, p, out, s->list);
}

/* clamp_bounds bound... ["max"] (after pw_plan): the scalar bounds converted to the compute dtype (ConvertToTensor)
 * in the plan's vattr[0] (min) / vattr[1] (max); an absent one is the dtype's extreme. */
aclnnStatus opc_clamp_bounds(op_call *c, const op_step *s) {
    ew_plan *plan = (ew_plan *)c->params;
    plan->vattr[0] = extreme(c->compute, 0);
    plan->vattr[1] = extreme(c->compute, 1);
    for (int k = 0; k < s->np; k++) {
        const op_scalar *sc = op_scalar_of(c, s, k);
        if (sc->dtype != ACL_DT_UNDEFINED) plan->vattr[is_max_bound(c, s, k)] = ew_cast(sc->v, sc->dtype, c->compute);
    }
    return ACLNN_SUCCESS;
}

/* clamp_dims bound...: at most 8 dimensions for each bound given. */
aclnnStatus opc_clamp_dims(op_call *c, const op_step *s) {
    for (int k = 0; k < s->np; k++) {
        const pyaclnn_stub_tensor *t = op_tensor(c, s, k);
        aclnnStatus rc = t->present ? ew_check_max_dim(c->api, op_pname(c, s, k), t, EW_MAX_DIM) : ACLNN_SUCCESS;
        if (rc) return rc;
    }
    return ACLNN_SUCCESS;
}

/* clamp_tensor_promote self bound... out LIST: PromoteType of self and each bound given (UINT16/32/64 only with
 * themselves), castable to out, in LIST; then out in LIST. */
aclnnStatus opc_clamp_tensor_promote(op_call *c, const op_step *s) {
    aclDataType p = op_tensor(c, s, 0)->dtype, out = op_tensor(c, s, s->np - 1)->dtype;
    if (c->nothing) {
        c->compute = p;
        return ACLNN_SUCCESS;
    }
    for (int k = 1; k < s->np - 1; k++) {
        const pyaclnn_stub_tensor *t = op_tensor(c, s, k);
        if (t->present && t->dtype != p) p = ew_promote(p, t->dtype);
    }
    aclnnStatus rc = promoted_ok(c, p, out, s->list);
    size_t n;
    const aclDataType *list = op_list(s->list, &n);
    return rc ? rc : ew_check_dtype_in(c->api, op_pname(c, s, s->np - 1), out, list, n);
}

/* clamp_broadcast self bound... out: self broadcast with the bounds given (min, then max); out has that shape. */
aclnnStatus opc_clamp_broadcast(op_call *c, const op_step *s) {
    if (c->nothing) return ACLNN_SUCCESS;
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0);
    pyaclnn_stub_tensor acc = *self;
    const char *acc_name = op_pname(c, s, 0);
    for (int k = 1; k < s->np - 1; k++) {
        const pyaclnn_stub_tensor *t = op_tensor(c, s, k);
        if (!t->present) continue;
        aclnnStatus rc = ew_broadcast(c->api, acc_name, &acc, op_pname(c, s, k), t, acc.shape, &acc.ndim);
        if (rc) return rc;
        acc_name = "self/min";
    }
    return ew_check_shape(c->api, op_pname(c, s, s->np - 1), op_tensor(c, s, s->np - 1), acc.shape, acc.ndim);
}

/* clamp_tensor_bounds bound... ["max"] (after pw_plan self): the bound tensors given become the plan's inputs 1
 * and 2 (min before max; attr[0] / attr[1] say which are there), an absent one is the compute dtype's extreme.
 * The executor's input list (self and the bounds given) lives past the plan in the parameter block, which
 * outlives the executor's creation; the plan alone is copied into the executor. */
aclnnStatus opc_clamp_tensor_bounds(op_call *c, const op_step *s) {
    ew_plan *plan = (ew_plan *)c->params;
    const aclTensor **inputs = (const aclTensor **)(c->params + ((sizeof *plan + 15) & ~(size_t)15));
    const aclTensor *given[2] = {NULL, NULL};
    for (int k = 0; k < s->np; k++)
        if (op_tensor(c, s, k)->present) given[is_max_bound(c, s, k)] = op_argument(c, s, k)->p;
    size_t n = 0;
    inputs[n++] = c->arg[c->def->inputs[0]].p;   /* self (selfRef) */
    for (int b = 0; b < 2; b++) {
        plan->attr[b] = given[b] != NULL;
        plan->vattr[b] = extreme(c->compute, b);
        if (given[b] != NULL) inputs[n++] = given[b];
    }
    plan->n_inputs = (int)n;
    c->in_handles = inputs;
    c->n_in = n;
    return ACLNN_SUCCESS;
}
