/*
 * The bitwise operators' and shifts' element functions and steps (bitops.toml). Values arrive in the compute
 * dtype's int64 representation (sign-extended for the signed dtypes; UINT64 values of 2^63 and more as negative
 * int64s); results are wrapped to the compute dtype.
 */
#include "opbase/checks.h"
#include "opbase/opbase.h"
#include "ops_decls.h"

/* The vendor's TensorTensor promotion (op::PromoteType; docs/zh/context/deduction_relationship.md): the engine's
 * table, and UINT16 / UINT32 / UINT64 with themselves only. */
static aclDataType promote(aclDataType a, aclDataType b) { return a == b ? a : ew_promote(a, b); }

/* The compute dtype `p` of (a, b) into out: 161002 if they do not promote or the result can't be cast to out. */
static aclnnStatus promoted_into(op_call *c, const op_step *s, aclDataType a, aclDataType b, aclDataType p) {
    char b1[24], b2[24];
    if (p == ACL_DT_UNDEFINED) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "%s dtype %s and %s dtype %s can not promote dtype.",
                            op_pname(c, s, 0), op_dtype_name(a, b1), op_pname(c, s, 1), op_dtype_name(b, b2));
        return ACLNN_ERR_PARAM_INVALID;
    }
    aclDataType out = op_tensor(c, s, 2)->dtype;
    if (!ew_can_cast(p, out) || ew_itemsize(out) == 0) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Result type %s can't be cast to the desired output "
                            "type %s.", op_dtype_name(p, b1), op_dtype_name(out, b2));
        return ACLNN_ERR_PARAM_INVALID;
    }
    c->compute = p;
    return ACLNN_SUCCESS;
}

static aclDataType dtype_of_operand(op_call *c, const op_step *s, int k) {
    return c->def->params[s->p[k]].kind == OP_K_SCALAR ? op_scalar_of(c, s, k)->dtype : op_tensor(c, s, k)->dtype;
}

/* bitwise_promote self other out: the compute dtype of self with a tensor (or scalar) other, by the vendor's
 * TensorTensor table, castable to out. After `empty`, an empty launch needs no compute dtype (the vendor
 * returns before it promotes). */
aclnnStatus opc_bitwise_promote(op_call *c, const op_step *s) {
    aclDataType a = op_tensor(c, s, 0)->dtype, b = dtype_of_operand(c, s, 1);
    if (c->nothing) {
        c->compute = a;
        return ACLNN_SUCCESS;
    }
    return promoted_into(c, s, a, b, promote(a, b));
}

/* bitwise_scalar_promote self other out: BitwiseOr/XorScalar's GetPromoteDType. Ascend 950 (regbase): self's
 * dtype, BOOL self promoted with the scalar's dtype; other SoCs: an INT64 scalar counts as INT32 when its value
 * fits, promoted with self by the TensorTensor table. */
aclnnStatus opc_bitwise_scalar_promote(op_call *c, const op_step *s) {
    aclDataType a = op_tensor(c, s, 0)->dtype;
    const op_scalar *sc = op_scalar_of(c, s, 1);
    aclDataType p;
    if (pyaclnn_stub_soc_family() == PYACLNN_SOC_950) {
        p = a == ACL_BOOL ? promote(a, sc->dtype) : a;
    } else if (sc->dtype == ACL_INT64) {
        p = promote(a, sc->v.i >= INT32_MIN && sc->v.i <= INT32_MAX ? ACL_INT32 : ACL_INT64);
    } else {
        p = promote(a, sc->dtype);
    }
    return promoted_into(c, s, a, sc->dtype, p);
}

static int is_unsigned(aclDataType dt) {
    return dt == ACL_UINT8 || dt == ACL_UINT16 || dt == ACL_UINT32 || dt == ACL_UINT64;
}

/* The shift amount y of the compute dtype clamped into [0, bits - 1] (an unsigned amount is never negative). */
static unsigned shift_amount(const ew_plan *p, ew_value y) {
    int64_t bits = 8 * (int64_t)ew_itemsize(p->compute);
    if (is_unsigned(p->compute)) return (uint64_t)y.i > (uint64_t)(bits - 1) ? (unsigned)(bits - 1) : (unsigned)y.i;
    return y.i < 0 ? 0 : y.i > bits - 1 ? (unsigned)(bits - 1) : (unsigned)y.i;
}

static ew_value wrap(const ew_plan *p, uint64_t v) { return ew_cast((ew_value){0, (int64_t)v}, ACL_INT64, p->compute); }

ew_value bitwise_not_i(const ew_plan *p, ew_value a, ew_value b, ew_value c) {
    (void)b, (void)c;
    if (p->compute == ACL_BOOL) return (ew_value){0, !a.i};
    return wrap(p, ~(uint64_t)a.i);
}

ew_value bitwise_or_i(const ew_plan *p, ew_value a, ew_value b, ew_value c) {
    (void)c;
    if (p->compute == ACL_BOOL) return (ew_value){0, a.i || b.i};
    return wrap(p, (uint64_t)a.i | (uint64_t)b.i);
}

ew_value bitwise_xor_i(const ew_plan *p, ew_value a, ew_value b, ew_value c) {
    (void)c;
    if (p->compute == ACL_BOOL) return (ew_value){0, (a.i != 0) != (b.i != 0)};
    return wrap(p, (uint64_t)a.i ^ (uint64_t)b.i);
}

ew_value left_shift_i(const ew_plan *p, ew_value a, ew_value b, ew_value c) {
    (void)c;
    return wrap(p, (uint64_t)a.i << shift_amount(p, b));
}

ew_value right_shift_i(const ew_plan *p, ew_value a, ew_value b, ew_value c) {
    (void)c;
    unsigned s = shift_amount(p, b);
    if (is_unsigned(p->compute)) return wrap(p, (uint64_t)a.i >> s);   /* the value as unsigned (UINT64 >= 2^63) */
    return (ew_value){0, a.i >> s};                                     /* sign-extended: arithmetic */
}
