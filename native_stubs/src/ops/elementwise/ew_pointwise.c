#include "elementwise/ew_pointwise.h"

#include "elementwise/ew_check.h"

static int in_list(aclDataType dt, const aclDataType *list, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (list[i] == dt) return 1;
    return 0;
}

aclDataType ew_scalar_promote(aclDataType self, aclDataType scalar) {
    if (ew_is_float(self)) return self;
    if (ew_is_float(scalar)) return self == ACL_BOOL || ew_is_integral(self, 1) ? ACL_FLOAT : ACL_DT_UNDEFINED;
    if (self == ACL_BOOL) return ew_promote(self, scalar == ACL_BOOL ? ACL_BOOL : ACL_INT64);
    return self;
}

static aclDataType unary_compute(ew_promote_rule rule, aclDataType self) {
    if (rule == EW_PROMOTE_INT_TO_FLOAT && ew_is_integral(self, 1)) return ACL_FLOAT;
    if (rule == EW_PROMOTE_BOOL_INT64_TO_FLOAT && (self == ACL_BOOL || self == ACL_INT64)) return ACL_FLOAT;
    return self;
}

/* Step 4's output rule: result dtype `r` (of the op) into out's dtype. */
static aclnnStatus check_out_dtype(const ew_pointwise_call *c, aclDataType self, aclDataType r, aclDataType out) {
    char b1[24], b2[24];
    const char *api = c->api;
    static const aclDataType FLOATS[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE};
    switch (c->out_rule) {
    case EW_OUT_SAME_DTYPE:
        if (out != self) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "%s dtype %s should be the same as %s dtype %s",
                                c->out_name, op_dtype_name(out, b1), c->self_name, op_dtype_name(self, b2));
            return ACLNN_ERR_PARAM_INVALID;
        }
        return ACLNN_SUCCESS;
    case EW_OUT_BOOL:
        if (out != ACL_BOOL) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "%s dtype %s is not supported (supported: BOOL)",
                                c->out_name, op_dtype_name(out, b1));
            return ACLNN_ERR_PARAM_INVALID;
        }
        return ACLNN_SUCCESS;
    case EW_OUT_FLOAT:
        if (!in_list(out, FLOATS, 4)) {
            char all[128];
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "%s dtype %s is not supported (supported: %s)",
                                c->out_name, op_dtype_name(out, b1), ew_dtype_list(FLOATS, 4, all, sizeof all));
            return ACLNN_ERR_PARAM_INVALID;
        }
        break;
    case EW_OUT_CASTABLE: break;
    }
    if (!ew_can_cast(r, out) || ew_itemsize(out) == 0) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "Result dtype %s can't be cast to the desired output type %s",
                            op_dtype_name(r, b1), op_dtype_name(out, b2));
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus null_check(const ew_pointwise_call *c, uint64_t *workspaceSize, aclOpExecutor **executor) {
    ew_ptr_arg ptrs[3];
    size_t n = 0;
    ptrs[n++] = (ew_ptr_arg){c->self_name, c->self};
    if (c->other_name != NULL)
        ptrs[n++] = (ew_ptr_arg){c->other_name, c->other != NULL ? (const void *)c->other : (const void *)c->other_scalar};
    if (!c->inplace) ptrs[n++] = (ew_ptr_arg){c->out_name, c->out};
    return ew_check_not_null(c->api, ptrs, n, workspaceSize, executor);
}

aclnnStatus ew_unary_phase1(const ew_pointwise_call *c, uint64_t *workspaceSize, aclOpExecutor **executor) {
    aclnnStatus rc = null_check(c, workspaceSize, executor);
    if (rc) return rc;
    const char *api = c->api;
    pyaclnn_stub_tensor self, out;
    if ((rc = op_tensor_arg(api, c->self_name, c->self, &self))) return rc;
    if (c->inplace) out = self;
    else if ((rc = op_tensor_arg(api, c->out_name, c->out, &out))) return rc;
    if ((rc = ew_check_dtype_in(api, c->self_name, self.dtype, c->dtypes, c->n_dtypes))) return rc;
    aclDataType p = unary_compute(c->promote, self.dtype);
    if ((rc = check_out_dtype(c, self.dtype, ew_result_dtype(c->op, p), out.dtype))) return rc;
    if ((rc = ew_check_max_dim(api, c->self_name, &self, EW_MAX_DIM))) return rc;
    if (!c->inplace && (rc = ew_check_shape(api, c->out_name, &out, self.shape, self.ndim))) return rc;
    ew_plan plan = {.op = c->op, .compute = p, .n_inputs = 1};
    const aclTensor *inputs[1] = {c->self};
    return ew_make_executor(api, c->op_name, &plan, pyaclnn_stub_numel(&self) == 0, inputs, 1, c->out,
                            workspaceSize, executor);
}

aclnnStatus ew_pair_phase1(const ew_pointwise_call *c, uint64_t *workspaceSize, aclOpExecutor **executor) {
    aclnnStatus rc = null_check(c, workspaceSize, executor);
    if (rc) return rc;
    const char *api = c->api;
    int scalar_form = c->other == NULL;
    pyaclnn_stub_tensor self, other, out;
    aclDataType sdt = ACL_DT_UNDEFINED;
    ew_value sval = {0, 0};
    if ((rc = op_tensor_arg(api, c->self_name, c->self, &self))) return rc;
    if (scalar_form) {
        if ((rc = ew_scalar_arg(api, c->other_name, c->other_scalar, &sdt, &sval))) return rc;
    } else if ((rc = op_tensor_arg(api, c->other_name, c->other, &other))) {
        return rc;
    }
    if (c->inplace) out = self;
    else if ((rc = op_tensor_arg(api, c->out_name, c->out, &out))) return rc;

    int64_t bshape[PYACLNN_STUB_MAX_DIMS], bndim = self.ndim;
    for (int64_t d = 0; d < self.ndim; d++) bshape[d] = self.shape[d];
    if (c->inplace && !scalar_form) {   /* CheckInplace first, as the vendor does */
        if ((rc = ew_broadcast(api, c->self_name, &self, c->other_name, &other, bshape, &bndim))) return rc;
        if ((rc = ew_check_shape(api, c->self_name, &self, bshape, bndim))) return rc;
    }
    if ((rc = ew_check_dtype_in(api, c->self_name, self.dtype, c->dtypes, c->n_dtypes))) return rc;
    if (!scalar_form && (rc = ew_check_dtype_in(api, c->other_name, other.dtype, c->dtypes, c->n_dtypes))) return rc;
    aclDataType p = scalar_form ? ew_scalar_promote(self.dtype, sdt) : ew_promote(self.dtype, other.dtype);
    char b1[24], b2[24];
    if (p == ACL_DT_UNDEFINED || (!ew_is_float(p) && c->op == EW_OP_BITAND && ew_is_float(sdt))) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "%s dtype %s and %s dtype %s can not promote dtype",
                            c->self_name, op_dtype_name(self.dtype, b1), c->other_name,
                            op_dtype_name(scalar_form ? sdt : other.dtype, b2));
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (c->op == EW_OP_BITAND && ew_is_float(p)) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "bitwise and needs integral or BOOL operands, the promoted "
                            "dtype is %s", op_dtype_name(p, b1));
        return ACLNN_ERR_PARAM_INVALID;
    }
    p = unary_compute(c->promote, p);
    if ((rc = check_out_dtype(c, self.dtype, ew_result_dtype(c->op, p), out.dtype))) return rc;
    if ((rc = ew_check_max_dim(api, c->self_name, &self, EW_MAX_DIM))) return rc;
    if (scalar_form) {
        if (!c->inplace && (rc = ew_check_shape(api, c->out_name, &out, self.shape, self.ndim))) return rc;
    } else {
        if ((rc = ew_check_max_dim(api, c->other_name, &other, EW_MAX_DIM))) return rc;
        if ((rc = ew_broadcast(api, c->self_name, &self, c->other_name, &other, bshape, &bndim))) return rc;
        if (!c->inplace && (rc = ew_check_shape(api, c->out_name, &out, bshape, bndim))) return rc;
    }
    ew_plan plan = {.op = c->op, .compute = p, .n_inputs = scalar_form ? 1 : 2, .scalar_second = scalar_form};
    if (scalar_form) plan.scalar = ew_cast(sval, sdt, p);   /* the scalar as a tensor of the compute dtype */
    int empty = pyaclnn_stub_numel(&self) == 0 || (!scalar_form && pyaclnn_stub_numel(&other) == 0);
    const aclTensor *inputs[2] = {c->self, c->other};
    return ew_make_executor(api, c->op_name, &plan, empty, inputs, scalar_form ? 1 : 2, c->out, workspaceSize,
                            executor);
}
