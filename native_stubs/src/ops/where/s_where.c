/*
 * aclnnSWhere: out = condition ? self : other, broadcast over all three (hicann/ops-math
 * math/select/op_api/aclnn_s_where.cpp). self and other are cast to their promoted dtype, the
 * chosen value to out's. Bit-exact (a move).
 */
#include "aclnnop/aclnn_s_where.h"
#include "opbase/checks.h"

static const aclDataType VALUES[] = {ACL_FLOAT, ACL_INT32, ACL_INT64, ACL_FLOAT16, ACL_INT16,
                                     ACL_INT8,  ACL_UINT8, ACL_DOUBLE, ACL_BOOL,   ACL_BF16};
static const aclDataType CONDITION[] = {ACL_BOOL, ACL_UINT8};

aclnnStatus aclnnSWhereGetWorkspaceSize(const aclTensor *condition, const aclTensor *self, const aclTensor *other,
                                        aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor) {
    static const char API[] = "aclnnSWhereGetWorkspaceSize";
    ew_ptr_arg ptrs[] = {{"condition", condition}, {"self", self}, {"other", other}, {"out", out}};
    aclnnStatus rc = ew_check_not_null(API, ptrs, 4, workspaceSize, executor);
    if (rc) return rc;
    pyaclnn_stub_tensor cond, a, b, o;
    if ((rc = op_tensor_arg(API, "condition", condition, &cond)) || (rc = op_tensor_arg(API, "self", self, &a)) ||
        (rc = op_tensor_arg(API, "other", other, &b)) || (rc = op_tensor_arg(API, "out", out, &o)))
        return rc;
    if ((rc = ew_check_dtype_in(API, "self", a.dtype, VALUES, 10)) ||
        (rc = ew_check_dtype_in(API, "other", b.dtype, VALUES, 10)) ||
        (rc = ew_check_dtype_in(API, "condition", cond.dtype, CONDITION, 2)))
        return rc;
    aclDataType p = ew_promote(a.dtype, b.dtype);
    char b1[24], b2[24];
    if (!ew_can_cast(p, o.dtype) || ew_itemsize(o.dtype) == 0) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "Promote dtype %s can't be cast to the desired output type %s",
                            op_dtype_name(p, b1), op_dtype_name(o.dtype, b2));
        return ACLNN_ERR_PARAM_INVALID;
    }
    int64_t s1[PYACLNN_STUB_MAX_DIMS], n1, s2[PYACLNN_STUB_MAX_DIMS], n2;
    if ((rc = ew_check_max_dim(API, "condition", &cond, EW_MAX_DIM)) || (rc = ew_check_max_dim(API, "self", &a, EW_MAX_DIM)) ||
        (rc = ew_check_max_dim(API, "other", &b, EW_MAX_DIM)))
        return rc;
    if ((rc = ew_broadcast(API, "self", &a, "other", &b, s1, &n1))) return rc;
    pyaclnn_stub_tensor ab = a;   /* the broadcast of self and other, as a shape only */
    ab.ndim = n1;
    for (int64_t d = 0; d < n1; d++) ab.shape[d] = s1[d];
    if ((rc = ew_broadcast(API, "condition", &cond, "self/other", &ab, s2, &n2))) return rc;
    if ((rc = ew_check_shape(API, "out", &o, s2, n2))) return rc;
    ew_plan plan = {.op = EW_OP_WHERE, .compute = p, .n_inputs = 3, .bool_inputs = 1u};
    int empty = pyaclnn_stub_numel(&o) == 0;
    const aclTensor *inputs[3] = {condition, self, other};
    return ew_make_executor(API, "SWhere", &plan, empty, inputs, 3, out, workspaceSize, executor);
}

EW_DEFINE_PHASE2(aclnnSWhere)
