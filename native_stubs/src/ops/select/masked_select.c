/*
 * aclnnMaskedSelect: the elements of self (broadcast with mask) where mask is true, in row-major
 * order, into the 1-D out (hicann/ops-math conversion/masked_select_v3/op_api/aclnn_masked_select.cpp).
 *
 * The output shape depends on the data: out is allocated with the broadcast element count, the
 * kernel writes the selected elements to its front and reports their number, and phase 2 waits for
 * the stream and sets out's view shape to [count] (opbase's OP_OUTSHAPE; torch_npu's masked_select
 * then reads it with aclGetViewShape and resizes). Elements of out past the count are left as they
 * were. self is cast to out's dtype (the vendor's l0op::Cast, the NPU's Cast rules), a UINT8 mask to
 * BOOL (non-zero is true). A move: bit-exact.
 */
#include <string.h>

#include "aclnnop/aclnn_masked_select.h"
#include "opbase/checks.h"
#include "kernels/view.h"

#define MS_MAX_DIM 8   /* MAX_DIM_LEN of the vendor's op_api */

/* The vendor's self/out support lists: SoCs without bf16, Atlas A2/A3 (910B..910E), and the regbase
 * Ascend 950 (which adds the unsigned types). */
static const aclDataType SELF_NO_BF16[] = {ACL_FLOAT, ACL_INT32, ACL_INT64,  ACL_FLOAT16, ACL_INT16,
                                           ACL_INT8,  ACL_UINT8, ACL_DOUBLE, ACL_BOOL};
static const aclDataType SELF_A2[] = {ACL_FLOAT, ACL_INT32, ACL_INT64,  ACL_FLOAT16, ACL_INT16,
                                      ACL_INT8,  ACL_UINT8, ACL_DOUBLE, ACL_BOOL,    ACL_BF16};
static const aclDataType SELF_950[] = {ACL_FLOAT,   ACL_INT32, ACL_UINT32, ACL_INT64, ACL_UINT64,
                                       ACL_FLOAT16, ACL_INT16, ACL_UINT16, ACL_INT8,  ACL_UINT8,
                                       ACL_DOUBLE,  ACL_BOOL,  ACL_BF16};
static const aclDataType MASK[] = {ACL_UINT8, ACL_BOOL};

typedef struct {
    int64_t ndim;                          /* the broadcast shape of self and mask */
    int64_t shape[PYACLNN_STUB_MAX_DIMS];
} ms_params;

/* Strides of t (elements) as a view of the broadcast shape: 0 along broadcast dimensions. */
static void broadcast_strides(const pyaclnn_stub_tensor *t, int64_t ndim, int64_t strides[PYACLNN_STUB_MAX_DIMS]) {
    int64_t lead = ndim - t->ndim;
    for (int64_t d = 0; d < ndim; d++)
        strides[d] = d < lead || t->shape[d - lead] == 1 ? 0 : t->strides[d - lead];
}

static void masked_select_kernel(const pyaclnn_stub_launch *launch) {
    const ms_params *prm = launch->params;
    const pyaclnn_stub_tensor *self = &launch->inputs[0], *mask = &launch->inputs[1], *out = &launch->outputs[0];
    size_t self_isz = ew_itemsize(self->dtype), out_isz = ew_itemsize(out->dtype);
    if (!op_view_in_device_memory(self, (int)(8 * self_isz)) || !op_view_in_device_memory(mask, 8) ||
        !op_view_in_device_memory(out, (int)(8 * out_isz))) {
        pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "%s: a view is not in device memory", launch->op_name);
        return;
    }
    int64_t ss[PYACLNN_STUB_MAX_DIMS], ms[PYACLNN_STUB_MAX_DIMS], idx[PYACLNN_STUB_MAX_DIMS] = {0};
    broadcast_strides(self, prm->ndim, ss);
    broadcast_strides(mask, prm->ndim, ms);
    int64_t n = 1;
    for (int64_t d = 0; d < prm->ndim; d++) n *= prm->shape[d];
    const unsigned char *sbase = self->data, *mbase = mask->data;
    unsigned char *obase = out->data;
    int64_t soff = self->offset, moff = mask->offset, count = 0;
    int same = self->dtype == out->dtype;
    for (int64_t i = 0; i < n; i++) {
        if (mbase[moff] != 0) {   /* BOOL, or UINT8 cast to BOOL: non-zero is true */
            unsigned char *dst = obase + (out->offset + count * out->strides[0]) * (int64_t)out_isz;
            const unsigned char *src = sbase + soff * (int64_t)self_isz;
            if (same) memcpy(dst, src, out_isz);
            else ew_store(dst, out->dtype, ew_cast(ew_load(src, self->dtype), self->dtype, out->dtype));
            count++;
        }
        for (int64_t d = prm->ndim - 1; d >= 0; d--) {   /* next row-major index of the broadcast shape */
            soff += ss[d];
            moff += ms[d];
            if (++idx[d] < prm->shape[d]) break;
            soff -= ss[d] * idx[d];
            moff -= ms[d] * idx[d];
            idx[d] = 0;
        }
    }
    if (launch->out_shape != NULL) {
        launch->out_shape->dims[0] = count;
        launch->out_shape->ndim = 1;
    }
}

static const aclDataType *self_list(size_t *n) {
    switch (pyaclnn_stub_soc_family()) {
    case PYACLNN_SOC_950: *n = sizeof SELF_950 / sizeof SELF_950[0]; return SELF_950;
    case PYACLNN_SOC_A2: *n = sizeof SELF_A2 / sizeof SELF_A2[0]; return SELF_A2;
    default: *n = sizeof SELF_NO_BF16 / sizeof SELF_NO_BF16[0]; return SELF_NO_BF16;
    }
}

aclnnStatus aclnnMaskedSelectGetWorkspaceSize(const aclTensor *selfArg, const aclTensor *maskArg, aclTensor *outArg,
                                              uint64_t *workspaceSize, aclOpExecutor **executor) {
    static const char API[] = "aclnnMaskedSelectGetWorkspaceSize";
    /* the vendor's order: workspaceSize/executor (OP_CHECK_COMM_INPUT), then self, mask, out */
    aclnnStatus rc = ew_check_not_null(API, NULL, 0, workspaceSize, executor);
    ew_ptr_arg ptrs[] = {{"self", selfArg}, {"mask", maskArg}, {"out", outArg}};
    if (rc || (rc = ew_check_not_null(API, ptrs, 3, workspaceSize, executor))) return rc;
    pyaclnn_stub_tensor self, mask, out;
    if ((rc = op_tensor_arg(API, "self", selfArg, &self)) || (rc = op_tensor_arg(API, "mask", maskArg, &mask)) ||
        (rc = op_tensor_arg(API, "out", outArg, &out)))
        return rc;
    size_t n_self;
    const aclDataType *selfs = self_list(&n_self);
    if ((rc = ew_check_dtype_in(API, "self", self.dtype, selfs, n_self)) ||
        (rc = ew_check_dtype_in(API, "mask", mask.dtype, MASK, 2)) ||
        (rc = ew_check_dtype_in(API, "out", out.dtype, selfs, n_self)))
        return rc;
    if ((rc = ew_check_max_dim(API, "self", &self, MS_MAX_DIM)) || (rc = ew_check_max_dim(API, "mask", &mask, MS_MAX_DIM)))
        return rc;
    ms_params prm;
    if ((rc = ew_broadcast(API, "self", &self, "mask", &mask, prm.shape, &prm.ndim))) return rc;
    if (out.ndim != 1) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "out must be 1-dimensional, but it has %lld dimensions",
                            (long long)out.ndim);
        return ACLNN_ERR_PARAM_INVALID;
    }
    int64_t n = 1;
    for (int64_t d = 0; d < prm.ndim; d++) n *= prm.shape[d];
    if (out.shape[0] != n) {
        char buf[160];
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "The out shape size %lld is not the same as the "
                            "broadcast shape size %lld of self and mask (broadcast shape %s)", (long long)out.shape[0],
                            (long long)n, tv_shape_text(prm.shape, prm.ndim, buf, sizeof buf));
        return ACLNN_ERR_PARAM_INVALID;
    }
    const aclTensor *inputs[2] = {selfArg, maskArg};
    const aclTensor *outputs[1] = {outArg};
    int empty = n == 0;   /* the vendor returns an executor that does nothing; out keeps its shape [0] */
    aclOpExecutor *e = pyaclnn_stub_executor_new("MaskedSelect", empty ? NULL : masked_select_kernel, &prm, sizeof prm,
                                                 inputs, 2, outputs, 1, 0);
    if (e == NULL || (!empty && pyaclnn_stub_executor_set_out_shape(e, 0, outArg) != ACLNN_SUCCESS)) {
        if (e != NULL) aclDestroyAclOpExecutor(e);
        pyaclnn_stub_report(ACLNN_ERR_INNER_CREATE_EXECUTOR, API, "could not create the executor (out of memory)");
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    }
    *workspaceSize = 0;
    *executor = e;
    return ACLNN_SUCCESS;
}

EW_DEFINE_PHASE2(aclnnMaskedSelect)
