#include "opbase/pointwise.h"

#include <math.h>
#include <string.h>

#include "opbase/checks.h"
#include "opbase/opbase.h"

static int in_list(aclDataType dt, const aclDataType *list, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (list[i] == dt) return 1;
    return 0;
}

/* The vendor's PromoteTypeScalar: a floating self keeps its dtype; an integral self with a floating scalar
 * computes in FLOAT (the scalar's default dtype); BOOL self promotes with the scalar's dtype; else self's. */
static aclDataType ew_scalar_promote(aclDataType self, aclDataType scalar) {
    if (ew_is_float(self)) return self;
    if (ew_is_float(scalar)) return self == ACL_BOOL || ew_is_integral(self, 1) ? ACL_FLOAT : ACL_DT_UNDEFINED;
    if (self == ACL_BOOL) return ew_promote(self, scalar == ACL_BOOL ? ACL_BOOL : ACL_INT64);
    return self;
}

static aclDataType unary_compute(ew_promote_rule rule, aclDataType self, aclDataType out) {
    if (rule == EW_PROMOTE_INT_TO_FLOAT && ew_is_integral(self, 1)) return ACL_FLOAT;
    if (rule == EW_PROMOTE_INT_TO_OUT && ew_is_integral(self, 1)) return out;
    if (rule == EW_PROMOTE_TO_OUT) return out;
    if (rule == EW_PROMOTE_BOOL_INT64_TO_FLOAT && (self == ACL_BOOL || self == ACL_INT64)) return ACL_FLOAT;
    return self;
}

/* Step 4's output rule: result dtype `r` (of the op) into out's dtype. */
static aclnnStatus out_dtype(const char *api, ew_out_rule rule, const char *self_name, const char *out_name,
                             aclDataType self, aclDataType r, aclDataType out) {
    char b1[24], b2[24];
    static const aclDataType FLOATS[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE};
    switch (rule) {
    case EW_OUT_SAME_DTYPE:
        if (out != self) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "%s dtype %s should be the same as %s dtype %s",
                                out_name, op_dtype_name(out, b1), self_name, op_dtype_name(self, b2));
            return ACLNN_ERR_PARAM_INVALID;
        }
        return ACLNN_SUCCESS;
    case EW_OUT_BOOL:
        if (out != ACL_BOOL) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "%s dtype %s is not supported (supported: BOOL)",
                                out_name, op_dtype_name(out, b1));
            return ACLNN_ERR_PARAM_INVALID;
        }
        return ACLNN_SUCCESS;
    case EW_OUT_FLOAT:
        if (!in_list(out, FLOATS, 4)) {
            char all[128];
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "%s dtype %s is not supported (supported: %s)",
                                out_name, op_dtype_name(out, b1), ew_dtype_list(FLOATS, 4, all, sizeof all));
            return ACLNN_ERR_PARAM_INVALID;
        }
        break;
    case EW_OUT_COMPUTE:
        if (out != r && r == self) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "%s dtype %s should be the same as %s dtype %s",
                                out_name, op_dtype_name(out, b1), self_name, op_dtype_name(self, b2));
            return ACLNN_ERR_PARAM_INVALID;
        }
        if (out != r) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "%s dtype %s should be %s", out_name,
                                op_dtype_name(out, b1), op_dtype_name(r, b2));
            return ACLNN_ERR_PARAM_INVALID;
        }
        break;
    case EW_OUT_ANY:
        if (ew_itemsize(out) != 0) return ACLNN_SUCCESS;
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "%s dtype %s is not supported by the emulator", out_name,
                            op_dtype_name(out, b1));
        return ACLNN_ERR_PARAM_INVALID;
    case EW_OUT_CASTABLE: break;
    }
    if (!ew_can_cast(r, out) || ew_itemsize(out) == 0) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "Result dtype %s can't be cast to the desired output type %s",
                            op_dtype_name(r, b1), op_dtype_name(out, b2));
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

/* The pair forms' compute dtype (torch's promotion, or the vendor's scalar promotion), checked against
 * the op and the output rule. */
static aclnnStatus pair_compute(const char *api, ew_opcode op, int bool_result, ew_promote_rule promote,
                                ew_out_rule rule, const char *self_name, aclDataType self, const char *other_name,
                                aclDataType other, int scalar_form, const char *out_name, aclDataType out,
                                aclDataType *compute) {
    aclDataType sdt = scalar_form ? other : ACL_DT_UNDEFINED;
    aclDataType p = promote == EW_PROMOTE_TO_OUT ? out
                    : scalar_form ? ew_scalar_promote(self, sdt) : ew_promote(self, other);
    char b1[24], b2[24];
    if (p == ACL_DT_UNDEFINED || (!ew_is_float(p) && op == EW_OP_BITAND && ew_is_float(sdt))) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "%s dtype %s and %s dtype %s can not promote dtype",
                            self_name, op_dtype_name(self, b1), other_name, op_dtype_name(other, b2));
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (op == EW_OP_BITAND && ew_is_float(p)) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "bitwise and needs integral or BOOL operands, the promoted "
                            "dtype is %s", op_dtype_name(p, b1));
        return ACLNN_ERR_PARAM_INVALID;
    }
    p = unary_compute(promote, p, out);
    aclnnStatus rc = out_dtype(api, rule, self_name, out_name, self, bool_result ? ACL_BOOL : ew_result_dtype(op, p),
                               out);
    if (rc) return rc;
    *compute = p;
    return ACLNN_SUCCESS;
}

/* ---- the pointwise steps of the definitions (opbase.h, the ew_spec of each operator) --------- */

static const ew_spec *spec_of(const op_call *c) { return c->def->spec; }

/* The dtype the spec's result has before the cast to out (BOOL for comparisons ...). */
static aclDataType ew_spec_result(const ew_spec *spec, aclDataType compute) {
    return spec->op == EW_OP_FN && spec->bool_result ? ACL_BOOL : ew_result_dtype(spec->op, compute);
}

/* pw_out self out: the unary compute dtype (the spec's promotion of self) and out's dtype rule. */
aclnnStatus opc_pw_out(op_call *c, const op_step *s) {
    const ew_spec *sp = spec_of(c);
    aclDataType self = op_tensor(c, s, 0)->dtype, p = unary_compute(sp->promote, self, op_tensor(c, s, 1)->dtype);
    aclnnStatus rc = out_dtype(c->api, sp->out, op_pname(c, s, 0), op_pname(c, s, 1), self,
                               ew_spec_result(sp, p), op_tensor(c, s, 1)->dtype);
    if (rc == ACLNN_SUCCESS) c->compute = p;
    return rc;
}

/* pw_pair_out self other out: the pair compute dtype (other a tensor or a scalar) and out's dtype rule. */
aclnnStatus opc_pw_pair_out(op_call *c, const op_step *s) {
    const ew_spec *sp = spec_of(c);
    int scalar_form = c->def->params[s->p[1]].kind == OP_K_SCALAR;
    aclDataType other = scalar_form ? op_scalar_of(c, s, 1)->dtype : op_tensor(c, s, 1)->dtype;
    return pair_compute(c->api, sp->op, sp->op == EW_OP_FN && sp->bool_result, sp->promote, sp->out,
                        op_pname(c, s, 0), op_tensor(c, s, 0)->dtype,
                        op_pname(c, s, 1), other, scalar_form, op_pname(c, s, 2), op_tensor(c, s, 2)->dtype,
                        &c->compute);
}

/* pw_plan in [other]: the engine's plan over the inputs (a scalar other becomes the plan's second
 * operand, cast to the compute dtype); nothing to launch when an input is empty. */
aclnnStatus opc_pw_plan(op_call *c, const op_step *s) {
    const ew_spec *sp = spec_of(c);
    ew_plan *plan = op_params(c, sizeof *plan);
    plan->op = sp->op;
    plan->compute = c->compute;
    if (sp->op == EW_OP_FN) {
        plan->fn = ew_is_float(c->compute) ? sp->f : sp->i;
        plan->bool_result = sp->bool_result;
        if (plan->fn == NULL) {   /* the definition's dtype lists admit a dtype it has no function for */
            char b[24];
            pyaclnn_stub_report(ACLNN_ERR_INNER, c->api, "no %s kernel for the compute dtype %s",
                                c->def->name, op_dtype_name(c->compute, b));
            return ACLNN_ERR_INNER;
        }
    }
    plan->n_inputs = 0;
    for (int k = 0; k < s->np; k++) {
        if (c->def->params[s->p[k]].kind == OP_K_SCALAR) {
            const op_scalar *sc = op_scalar_of(c, s, k);
            if (k == 0) plan->scalar_first = 1;      /* scalar op tensor (RemainderScalarTensor) */
            else plan->scalar_second = 1;
            plan->scalar = ew_cast(sc->v, sc->dtype, c->compute);   /* the scalar as a tensor of the compute dtype */
            continue;
        }
        if (plan->n_inputs++ == 0) plan->in_dtype = op_tensor(c, s, k)->dtype;
        if (pyaclnn_stub_numel(op_tensor(c, s, k)) == 0) c->nothing = 1;
    }
    return ACLNN_SUCCESS;
}

/* pw_attrs a ...: the operator's attributes (scalars, doubles, integers, bools) as doubles in the plan's
 * attr[] (after pw_plan), in order; an absent optional scalar is NaN. */
aclnnStatus opc_pw_attrs(op_call *c, const op_step *s) {
    ew_plan *plan = (ew_plan *)c->params;
    for (int k = 0; k < s->np && k < 4; k++) {
        const op_arg *a = op_argument(c, s, k);
        switch (c->def->params[s->p[k]].kind) {
        case OP_K_SCALAR: {
            const op_scalar *sc = op_scalar_of(c, s, k);
            plan->attr[k] = sc->dtype == ACL_DT_UNDEFINED ? NAN : ew_value_to_double(sc->v, sc->dtype);
            break;
        }
        case OP_K_DOUBLE: plan->attr[k] = a->d; break;
        default: plan->attr[k] = (double)a->i; break;
        }
    }
    return ACLNN_SUCCESS;
}

/* ---- promotion steps of pair operators whose vendors promote in their own ways (math family) ---------- */

/* The dtype of step operand k: a tensor's or a scalar's. */
static aclDataType operand_dtype(op_call *c, const op_step *s, int k) {
    return c->def->params[s->p[k]].kind == OP_K_SCALAR ? op_scalar_of(c, s, k)->dtype : op_tensor(c, s, k)->dtype;
}

/* CombineCategories(tensor, scalar) of the vendor's op_apis, without complex: a float tensor keeps its dtype; a
 * BOOL tensor or a float scalar promote with it (PromoteType); otherwise the tensor's dtype. */
static aclDataType combine_categories(aclDataType tensor, aclDataType scalar) {
    if (ew_is_float(tensor)) return tensor;
    if (tensor == ACL_BOOL || ew_is_float(scalar)) return ew_promote(tensor, scalar);
    return tensor;
}

/* pw_promote a b [out] "rule": the compute dtype of a pair operator from its operands' dtypes:
 *   "tensor"           PromoteType(a, b)
 *   "combine"          CombineCategories(a, b), b a scalar
 *   "fmod_scalar"      Ascend 950: CombineCategories(a, b); A2: PromoteType(a, b)
 *   "floordiv_scalar"  950: CombineCategories(a, FLOAT for a float scalar), FLOAT16 / BF16 computed in FLOAT;
 *                      A2: PromoteType(a, b)
 *   "remainder_st"     a the scalar, b the tensor: 950 CombineCategories(b, a); A2 out's dtype (operand 3)
 * 161002 "a dtype X and b dtype Y can not promote dtype" where there is none. */
aclnnStatus opc_pw_promote(op_call *c, const op_step *s) {
    aclDataType a = operand_dtype(c, s, 0), b = operand_dtype(c, s, 1), p;
    const char *rule = s->text != NULL ? s->text : "tensor";
    int is950 = ew_soc_is_950();
    if (strcmp(rule, "combine") == 0 || (strcmp(rule, "fmod_scalar") == 0 && is950)) {
        p = combine_categories(a, b);
    } else if (strcmp(rule, "floordiv_scalar") == 0 && is950) {
        p = combine_categories(a, ew_is_float(b) ? ACL_FLOAT : b);
        if (p == ACL_FLOAT16 || p == ACL_BF16) p = ACL_FLOAT;
    } else if (strcmp(rule, "remainder_st") == 0) {
        p = is950 ? combine_categories(b, a) : operand_dtype(c, s, 2);
    } else {
        p = ew_promote(a, b);
    }
    if (p == ACL_DT_UNDEFINED) {
        char b1[24], b2[24];
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "%s dtype %s and %s dtype %s can not promote dtype",
                            op_pname(c, s, 0), op_dtype_name(a, b1), op_pname(c, s, 1), op_dtype_name(b, b2));
        return ACLNN_ERR_PARAM_INVALID;
    }
    c->compute = p;
    return ACLNN_SUCCESS;
}

/* A step that applies on Ascend 950 only when its string operand says "950". */
static int skipped_on_this_soc(const op_step *s) { return s->text != NULL && strcmp(s->text, "950") == 0 && !ew_soc_is_950(); }

/* pw_compute_in LIST ["950"]: the compute dtype (pw_promote's) is in LIST. */
aclnnStatus opc_pw_compute_in(op_call *c, const op_step *s) {
    if (skipped_on_this_soc(s)) return ACLNN_SUCCESS;
    size_t n;
    const aclDataType *list = op_list(s->list, &n);
    if (in_list(c->compute, list, n)) return ACLNN_SUCCESS;
    char b[24], all[256];
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "promoted dtype %s is not supported (supported: %s)",
                        op_dtype_name(c->compute, b), ew_dtype_list(list, n, all, sizeof all));
    return ACLNN_ERR_PARAM_INVALID;
}

/* pw_cast_to_compute a ["950"]: a's dtype can be cast to the compute dtype (op::CanCast). */
aclnnStatus opc_pw_cast_to_compute(op_call *c, const op_step *s) {
    if (skipped_on_this_soc(s)) return ACLNN_SUCCESS;
    aclDataType a = operand_dtype(c, s, 0);
    if (ew_can_cast(a, c->compute)) return ACLNN_SUCCESS;
    char b1[24], b2[24];
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "%s dtype %s can't be cast to the promoted dtype %s",
                        op_pname(c, s, 0), op_dtype_name(a, b1), op_dtype_name(c->compute, b2));
    return ACLNN_ERR_PARAM_INVALID;
}

/* pw_compute_castable out ["950"]: the compute dtype can be cast to out's (op::CanCast). */
aclnnStatus opc_pw_compute_castable(op_call *c, const op_step *s) {
    if (skipped_on_this_soc(s)) return ACLNN_SUCCESS;
    aclDataType out = op_tensor(c, s, 0)->dtype;
    if (ew_can_cast(c->compute, out) && ew_itemsize(out) != 0) return ACLNN_SUCCESS;
    char b1[24], b2[24];
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Result dtype %s can't be cast to the desired output type %s",
                        op_dtype_name(c->compute, b1), op_dtype_name(out, b2));
    return ACLNN_ERR_PARAM_INVALID;
}

/* pw_scalars a [b]: the operator's scalar attributes (bounds, thresholds ...) cast to the compute dtype, as the
 * vendor's op_api converts them to tensors of that dtype (ConvertToTensor), in the plan's vattr[] (after
 * pw_plan), in order; an absent optional scalar leaves 0. */
aclnnStatus opc_pw_scalars(op_call *c, const op_step *s) {
    ew_plan *plan = (ew_plan *)c->params;
    for (int k = 0; k < s->np && k < 2; k++) {
        const op_scalar *sc = op_scalar_of(c, s, k);
        if (sc->dtype != ACL_DT_UNDEFINED) plan->vattr[k] = ew_cast(sc->v, sc->dtype, c->compute);
    }
    return ACLNN_SUCCESS;
}
