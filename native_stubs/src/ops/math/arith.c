/*
 * The steps of the binary arithmetic operators (arith.toml: Add, Sub, Rsub, Mul, Div, DivMod and their
 * scalar and in-place forms), following the vendor's op_api (hicann/ops-math math/{add,sub,mul,div}/op_api):
 *   arith_mode mode                      DivMod's mode is 0, 1 or 2
 *   arith_dtype self other [alpha] out   the compute dtype (promoteType, the scalar forms' rules) and its checks
 *   arith_in LIST                        ... in the support list
 *   arith_out out                        ... castable to out
 *   arith_plan self other [alpha]        the engine's plan, with the kernel alpha selects
 * Arithmetic: src/kernels/elementwise.h.
 */
#include <float.h>
#include <math.h>

#include "opbase/checks.h"
#include "ops_decls.h"

/* The operation: the spec's, or for DivMod the one its mode names (arith_mode has checked it). */
static ew_opcode arith_op(const op_call *c) {
    const ew_spec *sp = c->def->spec;
    int m = op_param_index(c->def, "mode");
    if (m < 0) return sp->op;
    int64_t mode = c->arg[m].i;
    return mode == 1 ? EW_OP_DIV_TRUNC : mode == 2 ? EW_OP_DIV_FLOOR : EW_OP_DIV;
}

/* arith_mode mode: 161002 for a mode other than 0, 1, 2 (before the null checks, as the vendor). */
aclnnStatus opc_arith_mode(op_call *c, const op_step *s) {
    int mode = (int)op_argument(c, s, 0)->i;
    if (mode >= 0 && mode <= 2) return ACLNN_SUCCESS;
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "mode %d is not supported (0: true division, 1: toward "
                        "zero, 2: toward -inf)", mode);
    return ACLNN_ERR_PARAM_INVALID;
}

/* Scalar forms: the dtype the op computes in (aclnn_add.cpp PromoteTypeScalar and its twins). */
static aclDataType scalar_compute_dtype(ew_opcode op, aclDataType self, aclDataType sdt, ew_value sval,
                                        int has_alpha, aclDataType adt, ew_value aval, aclDataType out) {
    aclDataType p;
    if (ew_soc_is_950()) {
        /* CombineCategoriesWithComplex(self, scalar default dtype): a float scalar counts as FLOAT. */
        aclDataType sdef = ew_is_float(sdt) ? ACL_FLOAT : sdt;
        if (ew_is_float(self)) p = self;
        else if (ew_is_float(sdef) || self == ACL_BOOL) p = ew_promote(self, sdef);
        else p = self;
        if (p == ACL_FLOAT16 || p == ACL_BF16) {
            /* keep the 16-bit type only if other (and alpha) survive the round trip */
            double s = (float)ew_value_to_double(sval, sdt);
            double keep_s = ew_cast((ew_value){s, 0}, ACL_DOUBLE, p).f;
            int keep = fabs(keep_s - s) <= FLT_EPSILON;
            if (has_alpha) {
                double a = (float)ew_value_to_double(aval, adt);
                keep = keep && fabs(ew_cast((ew_value){a, 0}, ACL_DOUBLE, p).f - a) <= FLT_EPSILON;
            }
            if (!keep) p = ACL_FLOAT;
        }
    } else {
        if (ew_is_float(self)) p = (op == EW_OP_MUL && self == ACL_BF16) ? ACL_FLOAT : self;
        else if (sdt == ACL_DOUBLE && out == ACL_FLOAT) p = ACL_FLOAT;
        else if (ew_is_float(sdt) || self == ACL_BOOL) p = ew_promote(self, sdt);
        else p = self;
    }
    return p;
}

/* Division computes in a float dtype unless the quotient is rounded (DivMod modes 1 and 2). */
static aclDataType division_dtype(ew_opcode op, aclDataType p) {
    if (op == EW_OP_DIV && ew_is_integral(p, 1)) return ACL_FLOAT;
    if ((op == EW_OP_DIV_TRUNC || op == EW_OP_DIV_FLOOR) && p == ACL_BOOL) return ACL_FLOAT;
    return p;
}

/* arith_dtype self other [alpha] out: promoteType (of two tensors, or the scalar forms' rules: these read
 * out's dtype), then the vendor's checks on it: defined, alpha castable to it, no bool subtraction. Leaves
 * it in c->compute. */
aclnnStatus opc_arith_dtype(op_call *c, const op_step *s) {
    ew_opcode op = arith_op(c);
    int scalar_form = c->def->params[s->p[1]].kind == OP_K_SCALAR, has_alpha = s->np == 4;
    aclDataType self = op_tensor(c, s, 0)->dtype, out = op_tensor(c, s, s->np - 1)->dtype;
    aclDataType sdt = ACL_DT_UNDEFINED, adt = ACL_DT_UNDEFINED;
    ew_value sval = {0, 0}, aval = {0, 0};
    if (scalar_form) sdt = op_scalar_of(c, s, 1)->dtype, sval = op_scalar_of(c, s, 1)->v;
    if (has_alpha) adt = op_scalar_of(c, s, 2)->dtype, aval = op_scalar_of(c, s, 2)->v;
    aclDataType other = scalar_form ? sdt : op_tensor(c, s, 1)->dtype;

    char b1[24], b2[24];
    aclDataType p = scalar_form ? scalar_compute_dtype(op, self, sdt, sval, has_alpha, adt, aval, out)
                                : ew_promote(self, other);
    if (p == ACL_DT_UNDEFINED) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Self dtype %s and other dtype %s can not promote dtype",
                            op_dtype_name(self, b1), op_dtype_name(other, b2));
        return ACLNN_ERR_PARAM_INVALID;
    }
    p = division_dtype(op, p);
    if (has_alpha) {
        int ok = p == ACL_BOOL ? ew_is_integral(adt, 1) : ew_can_cast(adt, p);
        if (!ok) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Alpha dtype %s can't be cast to the promote dtype %s",
                                op_dtype_name(adt, b1), op_dtype_name(p, b2));
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    if ((op == EW_OP_SUB || op == EW_OP_RSUB) && p == ACL_BOOL) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Subtraction with two bool operands is not supported "
                            "(use logical_xor, or cast to an integer dtype)");
        return ACLNN_ERR_PARAM_INVALID;
    }
    c->compute = p;
    return ACLNN_SUCCESS;
}

/* arith_in LIST: the compute dtype (promoteType) in the support list. */
aclnnStatus opc_arith_in(op_call *c, const op_step *s) {
    size_t n;
    const aclDataType *list = op_list(s->list, &n);
    if (ew_in_list(c->compute, list, n)) return ACLNN_SUCCESS;
    char b[24], all[256];
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Input dtype %s is not implemented, it should be in dtype "
                        "support list %s", op_dtype_name(c->compute, b), ew_dtype_list(list, n, all, sizeof all));
    return ACLNN_ERR_PARAM_INVALID;
}

/* arith_out out: the compute dtype castable to out's (in place: selfRef's, which the message says). */
aclnnStatus opc_arith_out(op_call *c, const op_step *s) {
    aclDataType out = op_tensor(c, s, 0)->dtype;
    if (ew_can_cast(c->compute, out) && ew_itemsize(out) != 0) return ACLNN_SUCCESS;
    char b1[24], b2[24];
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Promote dtype %s can't be cast to the desired output type "
                        "%s%s", op_dtype_name(c->compute, b1), op_dtype_name(out, b2),
                        c->def->params[s->p[0]].role == OP_INOUT ? " (selfRef)" : "");
    return ACLNN_ERR_PARAM_INVALID;
}

/* Which kernel applies alpha (aclnn_add.cpp / aclnn_sub.cpp: IsEqualToOne, IsSupportAxpy(V2)). */
static void choose_alpha(ew_opcode op, aclDataType p, aclDataType adt, ew_value aval, ew_plan *plan) {
    double ad = ew_value_to_double(aval, adt);
    float af = (float)ad;
    int is_one = (ew_soc_is_950() && p == ACL_DOUBLE) ? ad == 1.0 : af == 1.0f;
    int negate = op == EW_OP_SUB || op == EW_OP_RSUB;
    if (is_one) {
        plan->alpha_mode = EW_ALPHA_NONE;
        return;
    }
    static const aclDataType AXPY_950[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
    static const aclDataType AXPY_A2_ADD[] = {ACL_FLOAT, ACL_INT32, ACL_FLOAT16};
    static const aclDataType AXPY_A2_SUB[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
    int axpy = ew_soc_is_950() ? ew_in_list(p, AXPY_950, 3)
                               : (negate ? ew_in_list(p, AXPY_A2_SUB, 3) : ew_in_list(p, AXPY_A2_ADD, 3));
    if (axpy) {
        plan->alpha_mode = EW_ALPHA_AXPY_F32;
        plan->alpha.f = negate ? -af : af;   /* the vendor passes alpha->ToFloat() (negated for Sub) */
        return;
    }
    /* AxpyV2 (Ascend950 integers) and the Mul + Add fallback: alpha as a tensor of the compute dtype. */
    plan->alpha_mode = EW_ALPHA_MUL_ADD;
    plan->alpha = ew_cast(aval, adt, p);
    if (negate) {
        if (ew_is_float(p)) plan->alpha.f = -plan->alpha.f;
        else plan->alpha = ew_cast((ew_value){0, (int64_t)((uint64_t)0 - (uint64_t)plan->alpha.i)}, ACL_INT64, p);
    }
}

/* arith_plan self other [alpha]: pw_plan's plan over self and other (a scalar other cast to the compute
 * dtype: the vendor's ConvertToTensor), with the operation (DivMod: its mode's) and alpha's kernel. */
aclnnStatus opc_arith_plan(op_call *c, const op_step *s) {
    op_step pair = *s;
    pair.np = 2;
    aclnnStatus rc = opc_pw_plan(c, &pair);
    if (rc) return rc;
    ew_plan *plan = (ew_plan *)c->params;
    plan->op = arith_op(c);
    if (s->np == 3) choose_alpha(plan->op, c->compute, op_scalar_of(c, s, 2)->dtype, op_scalar_of(c, s, 2)->v, plan);
    return ACLNN_SUCCESS;
}
