/*
 * aclnnCumsum: out = the running sums of self along dim, computed in out's dtype (hicann/ops-math
 * math/cumsum/op_api/aclnn_cumsum.cpp; torch's cumsum). self is cast to out's dtype first (the NPU's
 * Cast); `dtype` must be out's dtype. Integers: exact, wrapping at out's width (class a). Floats: each
 * prefix sum in float64 rounded once to fp32 and then to the dtype (class c: the NPU's summation order
 * and fp32 steps are not published).
 */
#include <stdlib.h>

#include "aclnnop/aclnn_cumsum.h"
#include "opbase/checks.h"
#include "kernels/view.h"

#define CS_MAX_DIM 8

/* The vendor's list on Atlas A2/A3 and Ascend 950 (910_95), less the complex types the emulator has no
 * elements for; BF16 is refused elsewhere. */
static const aclDataType CUMSUM[] = {ACL_FLOAT, ACL_FLOAT16, ACL_INT32, ACL_DOUBLE, ACL_UINT8,
                                     ACL_INT8,  ACL_INT16,   ACL_INT64, ACL_BF16};

typedef struct {
    int64_t outer, len, inner;   /* the shape as [outer, len (dim), inner] */
} cumsum_params;

static void cumsum_kernel(const pyaclnn_stub_launch *launch) {
    const cumsum_params *p = launch->params;
    const pyaclnn_stub_tensor *self = &launch->inputs[0], *out = &launch->outputs[0];
    if (!tv_launch_views_ok(launch)) return;
    int64_t n = p->outer * p->len * p->inner;
    aclDataType dt = out->dtype;
    int is_float = ew_repr_of(dt) == EW_REPR_F;
    ew_value *v = malloc((size_t)n * sizeof *v + 1);
    if (v == NULL) {
        tv_fail_oom(launch);
        return;
    }
    tv_iter it;
    tv_iter_init(&it, self);
    for (int64_t i = 0; i < n; i++, tv_iter_next(&it))
        v[i] = ew_cast(ew_load(tv_at(self, it.off), self->dtype), self->dtype, dt);
    for (int64_t o = 0; o < p->outer; o++) {
        for (int64_t in = 0; in < p->inner; in++) {
            double fs = 0.0;
            uint64_t is = 0;                    /* wraps like the integer dtype (cast at the store) */
            for (int64_t l = 0; l < p->len; l++) {
                ew_value *e = &v[(o * p->len + l) * p->inner + in];
                if (is_float) {
                    fs += e->f;
                    *e = ew_cast((ew_value){.f = (double)(float)fs}, ACL_FLOAT, dt);
                    if (dt == ACL_DOUBLE) e->f = fs;
                } else {
                    is += (uint64_t)e->i;
                    *e = ew_cast((ew_value){.i = (int64_t)is}, ACL_INT64, dt);
                }
            }
        }
    }
    tv_iter_init(&it, out);
    for (int64_t i = 0; i < n; i++, tv_iter_next(&it)) ew_store(tv_at(out, it.off), dt, v[i]);
    free(v);
}

aclnnStatus aclnnCumsumGetWorkspaceSize(const aclTensor *selfArg, int64_t dim, aclDataType dtype, aclTensor *outArg,
                                        uint64_t *workspaceSize, aclOpExecutor **executor) {
    static const char API[] = "aclnnCumsumGetWorkspaceSize";
    ew_ptr_arg ptrs[] = {{"self", selfArg}, {"out", outArg}};
    aclnnStatus rc = ew_check_not_null(API, ptrs, 2, workspaceSize, executor);
    pyaclnn_stub_tensor self, out;
    if (rc || (rc = op_tensor_arg(API, "self", selfArg, &self)) || (rc = op_tensor_arg(API, "out", outArg, &out)))
        return rc;
    size_t n_list = sizeof CUMSUM / sizeof CUMSUM[0] - (pyaclnn_stub_soc_family() == PYACLNN_SOC_OTHER);
    if ((rc = ew_check_dtype_in(API, "out", out.dtype, CUMSUM, n_list))) return rc;
    char b1[24], b2[24];
    if (dtype != out.dtype) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "out dtype %s does not match dtype %s",
                            op_dtype_name(out.dtype, b1), op_dtype_name(dtype, b2));
        return ACLNN_ERR_PARAM_INVALID;
    }
    if ((rc = ew_check_shape(API, "out", &out, self.shape, self.ndim)) ||
        (rc = ew_check_max_dim(API, "self", &self, CS_MAX_DIM)))
        return rc;
    int64_t rank = self.ndim ? self.ndim : 1;
    if (dim >= rank || dim < -rank) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "expected dim to be in range of [%lld, %lld], but got %lld.",
                            (long long)-rank, (long long)(rank - 1), (long long)dim);
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (ew_itemsize(self.dtype) == 0) {   /* complex and 4-bit: the vendor casts them; the emulator cannot */
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "self dtype %s is not supported by the emulator",
                            op_dtype_name(self.dtype, b1));
        return ACLNN_ERR_PARAM_INVALID;
    }
    int64_t d = dim < 0 ? dim + rank : dim;
    cumsum_params prm = {1, 1, 1};
    for (int64_t k = 0; k < self.ndim; k++) {
        if (k < d) prm.outer *= self.shape[k];
        else if (k == d) prm.len = self.shape[k];
        else prm.inner *= self.shape[k];
    }
    return tv_make_executor(API, "Cumsum", pyaclnn_stub_numel(&self) ? cumsum_kernel : NULL, &prm, sizeof prm,
                            &selfArg, 1, (const aclTensor *const *)&outArg, 1, workspaceSize, executor);
}

EW_DEFINE_PHASE2(aclnnCumsum)
