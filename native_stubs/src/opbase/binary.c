#include "opbase/binary.h"

#include <float.h>
#include <math.h>

#include "opbase/checks.h"
#include "numerics.h"

/* Support lists of Atlas A2/A3 and Ascend950 (identical for these operators; the vendor's
 * COMPLEX64/COMPLEX128 are not emulated). */
static const aclDataType ARITH_DTYPES[] = {ACL_FLOAT, ACL_INT32, ACL_INT64, ACL_FLOAT16, ACL_INT16,
                                           ACL_INT8,  ACL_UINT8, ACL_DOUBLE, ACL_BOOL,   ACL_BF16};
#define N_ARITH (sizeof ARITH_DTYPES / sizeof ARITH_DTYPES[0])

/* Scalar forms: the dtype the op computes in (aclnn_add.cpp PromoteTypeScalar and its twins). */
static aclDataType scalar_compute_dtype(const ew_binary_call *c, aclDataType self, aclDataType sdt, ew_value sval,
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
        if (ew_is_float(self)) p = (c->op == EW_OP_MUL && self == ACL_BF16) ? ACL_FLOAT : self;
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

static int in_list(aclDataType dt, const aclDataType *list, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (list[i] == dt) return 1;
    return 0;
}

/* Which kernel applies alpha (aclnn_add.cpp / aclnn_sub.cpp: IsEqualToOne, IsSupportAxpy(V2)). */
static void choose_alpha(const ew_binary_call *c, aclDataType p, aclDataType adt, ew_value aval, ew_plan *plan) {
    double ad = ew_value_to_double(aval, adt);
    float af = (float)ad;
    int is_one = (ew_soc_is_950() && p == ACL_DOUBLE) ? ad == 1.0 : af == 1.0f;
    int negate = c->op == EW_OP_SUB || c->op == EW_OP_RSUB;
    if (is_one) {
        plan->alpha_mode = EW_ALPHA_NONE;
        return;
    }
    static const aclDataType AXPY_950[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
    static const aclDataType AXPY_A2_ADD[] = {ACL_FLOAT, ACL_INT32, ACL_FLOAT16};
    static const aclDataType AXPY_A2_SUB[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
    int axpy = ew_soc_is_950() ? in_list(p, AXPY_950, 3)
                               : (negate ? in_list(p, AXPY_A2_SUB, 3) : in_list(p, AXPY_A2_ADD, 3));
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

aclnnStatus ew_binary_phase1(const ew_binary_call *c, uint64_t *workspaceSize, aclOpExecutor **executor) {
    const char *api = c->api;
    const char *self_name = c->inplace ? "selfRef" : "self";
    int scalar_form = c->other == NULL && c->other_scalar != NULL;
    ew_ptr_arg ptrs[4];
    size_t np = 0;
    ptrs[np++] = (ew_ptr_arg){self_name, c->self};
    ptrs[np++] = (ew_ptr_arg){"other", scalar_form ? (const void *)c->other_scalar : (const void *)c->other};
    if (c->has_alpha) ptrs[np++] = (ew_ptr_arg){"alpha", c->alpha};
    if (!c->inplace) ptrs[np++] = (ew_ptr_arg){"out", c->out};
    aclnnStatus rc = ew_check_not_null(api, ptrs, np, workspaceSize, executor);
    if (rc) return rc;

    pyaclnn_stub_tensor self, other, out;
    if ((rc = op_tensor_arg(api, self_name, c->self, &self))) return rc;
    if (!scalar_form && (rc = op_tensor_arg(api, "other", c->other, &other))) return rc;
    if (c->inplace) out = self;
    else if ((rc = op_tensor_arg(api, "out", c->out, &out))) return rc;
    aclDataType sdt = ACL_DT_UNDEFINED, adt = ACL_DT_UNDEFINED;
    ew_value sval = {0, 0}, aval = {0, 0};
    if (scalar_form && (rc = ew_scalar_arg(api, "other", c->other_scalar, &sdt, &sval))) return rc;
    if (c->has_alpha && (rc = ew_scalar_arg(api, "alpha", c->alpha, &adt, &aval))) return rc;

    int64_t bshape[PYACLNN_STUB_MAX_DIMS], bndim = self.ndim;
    for (int64_t d = 0; d < self.ndim; d++) bshape[d] = self.shape[d];
    if (c->inplace && !scalar_form) {   /* CheckInplace: before everything else */
        if ((rc = ew_broadcast(api, self_name, &self, "other", &other, bshape, &bndim))) return rc;
        if ((rc = ew_check_shape(api, self_name, &self, bshape, bndim))) return rc;
    }

    char b1[24], b2[24], b3[24];
    if ((rc = ew_check_dtype_in(api, self_name, self.dtype, ARITH_DTYPES, N_ARITH))) return rc;
    if (!scalar_form && (rc = ew_check_dtype_in(api, "other", other.dtype, ARITH_DTYPES, N_ARITH))) return rc;

    aclDataType p = scalar_form ? scalar_compute_dtype(c, self.dtype, sdt, sval, c->has_alpha, adt, aval, out.dtype)
                                : ew_promote(self.dtype, other.dtype);
    if (p == ACL_DT_UNDEFINED) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "Self dtype %s and other dtype %s can not promote dtype",
                            op_dtype_name(self.dtype, b1),
                            op_dtype_name(scalar_form ? sdt : other.dtype, b2));
        return ACLNN_ERR_PARAM_INVALID;
    }
    p = division_dtype(c->op, p);
    if (c->has_alpha) {
        int ok = p == ACL_BOOL ? ew_is_integral(adt, 1) : ew_can_cast(adt, p);
        if (!ok) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "Alpha dtype %s can't be cast to the promote dtype %s",
                                op_dtype_name(adt, b1), op_dtype_name(p, b2));
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    if ((c->op == EW_OP_SUB || c->op == EW_OP_RSUB) && p == ACL_BOOL) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "Subtraction with two bool operands is not supported "
                            "(use logical_xor, or cast to an integer dtype)");
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (!in_list(p, ARITH_DTYPES, N_ARITH)) {
        char all[256];
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "Input dtype %s is not implemented, it should be in dtype "
                            "support list %s", op_dtype_name(p, b1), ew_dtype_list(ARITH_DTYPES, N_ARITH, all, sizeof all));
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (!ew_can_cast(p, out.dtype) || ew_itemsize(out.dtype) == 0) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "Promote dtype %s can't be cast to the desired output "
                            "type %s%s", op_dtype_name(p, b1), op_dtype_name(out.dtype, b2),
                            c->inplace ? " (selfRef)" : "");
        return ACLNN_ERR_PARAM_INVALID;
    }
    (void)b3;

    if ((rc = ew_check_max_dim(api, self_name, &self, EW_MAX_DIM))) return rc;
    if (scalar_form) {
        if (!c->inplace && (rc = ew_check_shape(api, "out", &out, self.shape, self.ndim))) return rc;
    } else {
        if ((rc = ew_check_max_dim(api, "other", &other, EW_MAX_DIM))) return rc;
        if ((rc = ew_broadcast(api, self_name, &self, "other", &other, bshape, &bndim))) return rc;
        if (!c->inplace && (rc = ew_check_shape(api, "out", &out, bshape, bndim))) return rc;
    }

    ew_plan plan = {.op = c->op, .compute = p, .n_inputs = scalar_form ? 1 : 2, .scalar_second = scalar_form};
    if (scalar_form) plan.scalar = ew_cast(sval, sdt, p);   /* ConvertToTensor(other, promoteType) */
    if (c->has_alpha) choose_alpha(c, p, adt, aval, &plan);
    int empty = pyaclnn_stub_numel(&self) == 0 || (!scalar_form && pyaclnn_stub_numel(&other) == 0);
    const aclTensor *inputs[2] = {c->self, c->other};
    return ew_make_executor(api, c->op_name, &plan, empty, inputs, scalar_form ? 1 : 2, c->out, workspaceSize,
                            executor);
}
