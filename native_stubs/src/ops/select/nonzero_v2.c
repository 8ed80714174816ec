/*
 * aclnnNonzeroV2: the coordinates of self's non-zero elements (row-major order), as the columns of
 * an INT64 [rank, count] matrix (hicann/ops-nn index/non_zero/op_api/aclnn_nonzero_v2.cpp; torch_npu's
 * boolean-mask indexing `t[mask]` calls it on the mask).
 *
 * A data-dependent shape, like MaskedSelect: out is allocated as [rank, numel]; the kernel writes
 * the coordinates contiguously in the real shape [rank, count] from out's first element on and
 * reports it, and phase 2 waits for the stream and sets that view shape (torch_npu then resizes out
 * to it, keeping the storage). Non-zero: != 0 for integers and BOOL, != 0.0 for floats (NaN counts,
 * -0.0 does not). Exact.
 */
#include <stdint.h>

#include "aclnnop/aclnn_nonzero_v2.h"
#include "opbase/checks.h"
#include "kernels/view.h"

#define NZ_MAX_DIM 8   /* MAX_SUPPORT_DIMS_NUMS of the vendor's op_api */

/* The vendor's lists: Atlas A2/A3 (910B..910E) add BF16; every other SoC (Ascend 950 included) uses
 * the list without it. */
static const aclDataType SELF_A2[] = {ACL_FLOAT, ACL_FLOAT16, ACL_INT8,   ACL_UINT8,  ACL_INT16,
                                      ACL_UINT16, ACL_INT32,  ACL_UINT32, ACL_INT64,  ACL_UINT64,
                                      ACL_DOUBLE, ACL_BOOL,   ACL_BF16};
static const size_t N_SELF_A2 = sizeof SELF_A2 / sizeof SELF_A2[0];
static const size_t N_SELF_OTHER = sizeof SELF_A2 / sizeof SELF_A2[0] - 1;   /* the same without BF16 */
static const aclDataType OUT[] = {ACL_INT64};

static int is_nonzero(const unsigned char *p, aclDataType dt) {
    ew_value v = ew_load(p, dt);
    return ew_repr_of(dt) == EW_REPR_F ? v.f != 0.0 : v.i != 0;   /* NaN != 0.0 is true */
}

static void nonzero_v2_kernel(const pyaclnn_stub_launch *launch) {
    const pyaclnn_stub_tensor *self = &launch->inputs[0], *out = &launch->outputs[0];
    size_t isz = ew_itemsize(self->dtype);
    if (!op_view_in_device_memory(self, (int)(8 * isz)) || !op_view_in_device_memory(out, 64)) {
        pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "%s: a view is not in device memory", launch->op_name);
        return;
    }
    int64_t n = pyaclnn_stub_numel(self), rank = self->ndim, count = 0;
    tv_iter it;
    tv_iter_init(&it, self);
    for (int64_t i = 0; i < n; i++, tv_iter_next(&it)) count += is_nonzero(tv_at(self, it.off), self->dtype);
    if (rank * count > pyaclnn_stub_numel(out)) {   /* the NPU would write past out: a memory fault */
        pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "%s: out has %lld elements, fewer than the %lld "
                               "coordinates of the %lld non-zero elements", launch->op_name,
                               (long long)pyaclnn_stub_numel(out), (long long)(rank * count), (long long)count);
        return;
    }
    int64_t *dst = (int64_t *)out->data + out->offset, k = 0;
    tv_iter_init(&it, self);
    for (int64_t i = 0; i < n; i++, tv_iter_next(&it)) {
        if (!is_nonzero(tv_at(self, it.off), self->dtype)) continue;
        for (int64_t d = 0; d < rank; d++) dst[d * count + k] = it.idx[d];
        k++;
    }
    if (launch->out_shape != NULL) {
        launch->out_shape->ndim = 2;
        launch->out_shape->dims[0] = rank;
        launch->out_shape->dims[1] = count;
    }
}

aclnnStatus aclnnNonzeroV2GetWorkspaceSize(const aclTensor *selfArg, aclTensor *outArg, uint64_t *workspaceSize,
                                           aclOpExecutor **executor) {
    static const char API[] = "aclnnNonzeroV2GetWorkspaceSize";
    ew_ptr_arg ptrs[] = {{"self", selfArg}, {"out", outArg}};
    aclnnStatus rc = ew_check_not_null(API, ptrs, 2, workspaceSize, executor);
    if (rc) return rc;
    pyaclnn_stub_tensor self, out;
    if ((rc = op_tensor_arg(API, "self", selfArg, &self)) || (rc = op_tensor_arg(API, "out", outArg, &out))) return rc;
    size_t n_self = pyaclnn_stub_soc_family() == PYACLNN_SOC_A2 ? N_SELF_A2 : N_SELF_OTHER;
    if ((rc = ew_check_dtype_in(API, "self", self.dtype, SELF_A2, n_self)) ||
        (rc = ew_check_dtype_in(API, "out", out.dtype, OUT, 1)))
        return rc;
    if ((rc = ew_check_max_dim(API, "self", &self, NZ_MAX_DIM)) || (rc = ew_check_max_dim(API, "out", &out, NZ_MAX_DIM)))
        return rc;
    for (int64_t d = 0; d < self.ndim; d++) {
        if (self.shape[d] > INT32_MAX) {   /* the kernel's coordinates are int32 internally */
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "self dimension %lld has size %lld, more than "
                                "INT32_MAX", (long long)d, (long long)self.shape[d]);
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    /* the vendor returns an executor that does nothing for an empty self or out (a 0-d self gives
     * out [0, 1], which is empty): out keeps its shape */
    int empty = pyaclnn_stub_numel(&self) == 0 || pyaclnn_stub_numel(&out) == 0;
    const aclTensor *inputs[1] = {selfArg};
    const aclTensor *outputs[1] = {outArg};
    aclOpExecutor *e = pyaclnn_stub_executor_new("NonzeroV2", empty ? NULL : nonzero_v2_kernel, NULL, 0, inputs, 1,
                                                 outputs, 1, 0);
    if (e == NULL || (!empty && pyaclnn_stub_executor_set_out_shape(e, 0, outArg) != ACLNN_SUCCESS)) {
        if (e != NULL) aclDestroyAclOpExecutor(e);
        pyaclnn_stub_report(ACLNN_ERR_INNER_CREATE_EXECUTOR, API, "could not create the executor (out of memory)");
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    }
    *workspaceSize = 0;
    *executor = e;
    return ACLNN_SUCCESS;
}

EW_DEFINE_PHASE2(aclnnNonzeroV2)
