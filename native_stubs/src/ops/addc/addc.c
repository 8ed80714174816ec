/*
 * aclnnAddcmul / aclnnAddcdiv and their in-place forms (hicann/ops-math math/addcmul, math/addcdiv
 * op_api): out = self + value * (tensor1 * tensor2) and self + value * (tensor1 / tensor2), all three
 * cast to promote(self, promote(tensor1, tensor2)) first. In place: out = selfRef, the same checks.
 * Arithmetic (class c): the kernels' steps each rounded to fp32 (fp16/bf16 upcast), then cast to the
 * compute dtype and to out's; DOUBLE in double; integers wrap (Addcdiv on INT64 truncates, x / 0 = 0).
 * value is converted to the compute dtype, or kept FLOAT on Ascend 950 when self is FLOAT16/BF16 and
 * value floating (the op_api's mixed-dtype rule).
 * Validation in the vendor's order:
 *   1. workspaceSize and executor, then self, tensor1, tensor2, value, out non-NULL        -> 161001
 *   2. self, tensor1, tensor2 in the support list                                         -> 161002
 *   3. tensor1/tensor2, then self with them, promote; Addcmul refuses an INT16 or BOOL
 *      result; the result castable to out                                                 -> 161002
 *   4. at most 8 dims (Addcdiv: out too); tensor1 and tensor2 broadcast, self with them,
 *      out of the broadcast shape                                                         -> 161002
 * Empty self, tensor1 or tensor2 gives an executor that does nothing.
 */
#include "aclnnop/aclnn_addcdiv.h"
#include "aclnnop/aclnn_addcmul.h"
#include "opbase/checks.h"
#include "kernels/view.h"

#define N(a) (sizeof a / sizeof a[0])

static const aclDataType ADDCMUL_DTYPES[] = {ACL_FLOAT, ACL_INT32, ACL_INT64,  ACL_FLOAT16,
                                             ACL_INT8,  ACL_UINT8, ACL_DOUBLE, ACL_BF16};
static const aclDataType ADDCDIV_DTYPES[] = {ACL_FLOAT, ACL_INT64, ACL_FLOAT16, ACL_DOUBLE, ACL_BF16};

typedef struct {
    const char *api, *op_name;
    ew_opcode op;
    const aclTensor *self, *t1, *t2;
    const aclScalar *value;
    const aclTensor *out;
    int inplace;
} addc_call;

static aclnnStatus addc_phase1(const addc_call *c, uint64_t *workspaceSize, aclOpExecutor **executor) {
    const char *api = c->api, *sname = c->inplace ? "selfRef" : "self";
    int is_mul = c->op == EW_OP_ADDCMUL;
    if (workspaceSize == NULL || executor == NULL) {   /* OP_CHECK_COMM_INPUT comes first */
        pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, api, "%s is NULL", workspaceSize == NULL ? "workspaceSize"
                                                                                              : "executor");
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    const char *names[] = {sname, "tensor1", "tensor2", "value", "out"};
    const void *ptrs[] = {c->self, c->t1, c->t2, c->value, c->out};
    aclnnStatus rc = tv_check_not_null(api, names, ptrs, 5, workspaceSize, executor);
    if (rc) return rc;
    pyaclnn_stub_tensor s, a, b, o;
    aclDataType vdt;
    ew_value v;
    if ((rc = op_tensor_arg(api, sname, c->self, &s)) || (rc = op_tensor_arg(api, "tensor1", c->t1, &a)) ||
        (rc = op_tensor_arg(api, "tensor2", c->t2, &b)) || (rc = ew_scalar_arg(api, "value", c->value, &vdt, &v)) ||
        (rc = op_tensor_arg(api, "out", c->out, &o)))
        return rc;
    const aclDataType *list = is_mul ? ADDCMUL_DTYPES : ADDCDIV_DTYPES;
    size_t n = is_mul ? N(ADDCMUL_DTYPES) : N(ADDCDIV_DTYPES);
    if ((rc = ew_check_dtype_in(api, sname, s.dtype, list, n)) || (rc = ew_check_dtype_in(api, "tensor1", a.dtype, list, n)) ||
        (rc = ew_check_dtype_in(api, "tensor2", b.dtype, list, n)))
        return rc;
    char b1[24], b2[24], b3[24];
    aclDataType p12 = ew_promote(a.dtype, b.dtype);
    if (p12 == ACL_DT_UNDEFINED) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "tensor1 dtype %s and tensor2 dtype %s can not promote "
                            "dtype.", op_dtype_name(a.dtype, b1), op_dtype_name(b.dtype, b2));
        return ACLNN_ERR_PARAM_INVALID;
    }
    aclDataType p = ew_promote(s.dtype, p12);
    if (p == ACL_DT_UNDEFINED) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "self dtype %s and tensor1 * tensor2 dtype %s * %s can not "
                            "promote dtype.", op_dtype_name(s.dtype, b1), op_dtype_name(a.dtype, b2),
                            op_dtype_name(b.dtype, b3));
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (is_mul && (p == ACL_INT16 || p == ACL_BOOL)) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "addcmul can not support promote dtype %s, self dtype is %s "
                            "and tensor1 * tensor2 dtype is %s * %s", op_dtype_name(p, b1), op_dtype_name(s.dtype, b2),
                            op_dtype_name(a.dtype, b3), op_dtype_name(b.dtype, b3));
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (!ew_can_cast(p, o.dtype) || ew_itemsize(o.dtype) == 0) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "Result dtype %s can't be cast to the desired output type %s",
                            op_dtype_name(p, b1), op_dtype_name(o.dtype, b2));
        return ACLNN_ERR_PARAM_INVALID;
    }
    if ((rc = ew_check_max_dim(api, sname, &s, EW_MAX_DIM)) || (rc = ew_check_max_dim(api, "tensor1", &a, EW_MAX_DIM)) ||
        (rc = ew_check_max_dim(api, "tensor2", &b, EW_MAX_DIM)) ||
        (!is_mul && (rc = ew_check_max_dim(api, "out", &o, EW_MAX_DIM))))
        return rc;
    pyaclnn_stub_tensor t12 = a;   /* a view of the tensor1/tensor2 broadcast shape, for the next broadcast */
    if ((rc = ew_broadcast(api, "tensor1", &a, "tensor2", &b, t12.shape, &t12.ndim))) return rc;
    int64_t shape[PYACLNN_STUB_MAX_DIMS], ndim;
    if ((rc = ew_broadcast(api, sname, &s, "tensor1 * tensor2", &t12, shape, &ndim))) return rc;
    if ((rc = ew_check_shape(api, "out", &o, shape, ndim))) return rc;

    int mixed = ew_soc_is_950() && (s.dtype == ACL_FLOAT16 || s.dtype == ACL_BF16) && ew_is_float(vdt) &&
                p != ACL_DOUBLE;
    ew_plan plan = {.op = c->op, .compute = p, .n_inputs = 3, .scalar = ew_cast(v, vdt, mixed ? ACL_FLOAT : p)};
    const aclTensor *inputs[3] = {c->self, c->t1, c->t2};
    int empty = pyaclnn_stub_numel(&s) == 0 || pyaclnn_stub_numel(&a) == 0 || pyaclnn_stub_numel(&b) == 0;
    return ew_make_executor(api, c->op_name, &plan, empty, inputs, 3, c->out, workspaceSize, executor);
}

aclnnStatus aclnnAddcmulGetWorkspaceSize(const aclTensor *self, const aclTensor *tensor1, const aclTensor *tensor2,
                                         const aclScalar *value, aclTensor *out, uint64_t *workspaceSize,
                                         aclOpExecutor **executor) {
    addc_call c = {"aclnnAddcmulGetWorkspaceSize", "Addcmul", EW_OP_ADDCMUL, self, tensor1, tensor2, value, out, 0};
    return addc_phase1(&c, workspaceSize, executor);
}

aclnnStatus aclnnInplaceAddcmulGetWorkspaceSize(const aclTensor *selfRef, const aclTensor *tensor1,
                                                const aclTensor *tensor2, const aclScalar *value,
                                                uint64_t *workspaceSize, aclOpExecutor **executor) {
    addc_call c = {"aclnnInplaceAddcmulGetWorkspaceSize", "InplaceAddcmul", EW_OP_ADDCMUL, selfRef, tensor1, tensor2,
                   value, selfRef, 1};
    return addc_phase1(&c, workspaceSize, executor);
}

aclnnStatus aclnnAddcdivGetWorkspaceSize(const aclTensor *self, const aclTensor *tensor1, const aclTensor *tensor2,
                                         const aclScalar *value, const aclTensor *out, uint64_t *workspaceSize,
                                         aclOpExecutor **executor) {
    addc_call c = {"aclnnAddcdivGetWorkspaceSize", "Addcdiv", EW_OP_ADDCDIV, self, tensor1, tensor2, value, out, 0};
    return addc_phase1(&c, workspaceSize, executor);
}

aclnnStatus aclnnInplaceAddcdivGetWorkspaceSize(const aclTensor *selfRef, const aclTensor *tensor1,
                                                const aclTensor *tensor2, const aclScalar *value,
                                                uint64_t *workspaceSize, aclOpExecutor **executor) {
    addc_call c = {"aclnnInplaceAddcdivGetWorkspaceSize", "InplaceAddcdiv", EW_OP_ADDCDIV, selfRef, tensor1, tensor2,
                   value, selfRef, 1};
    return addc_phase1(&c, workspaceSize, executor);
}

EW_DEFINE_PHASE2(aclnnAddcmul)
EW_DEFINE_PHASE2(aclnnInplaceAddcmul)
EW_DEFINE_PHASE2(aclnnAddcdiv)
EW_DEFINE_PHASE2(aclnnInplaceAddcdiv)
