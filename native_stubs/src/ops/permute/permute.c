/*
 * aclnnPermute (hicann/ops-math conversion/transpose/op_api/aclnn_permute.cpp): out = self with its dims
 * reordered (out dim i is self dim dims[i]); any strides. Bytes are moved: bit-exact (class a).
 * Validation in the vendor's order:
 *   1. self, dims, out non-NULL                                                       -> 161001
 *   2. self and out dtypes in the list (without the complex dtypes), out == self      -> 161002
 *   3. out has self's rank, dims has self's rank, no repeated value, at most 8 dims   -> 161002
 *   4. each dim in range, no repeat after wrapping                                    -> 161002
 *   (emulator) out has the permuted shape                                             -> 161002
 */
#include <stdlib.h>

#include "aclnnop/aclnn_permute.h"
#include "opbase/checks.h"
#include "kernels/view.h"

#define N(a) (sizeof a / sizeof a[0])

static const aclDataType PERMUTE_DTYPES[] = {ACL_FLOAT,  ACL_FLOAT16, ACL_INT8,     ACL_INT16,       ACL_INT32,
                                             ACL_INT64,  ACL_UINT8,   ACL_UINT16,   ACL_UINT32,      ACL_UINT64,
                                             ACL_BOOL,   ACL_DOUBLE,  ACL_BF16,     ACL_HIFLOAT8,    ACL_FLOAT8_E5M2,
                                             ACL_FLOAT8_E4M3FN};

typedef struct {
    int64_t perm[PYACLNN_STUB_MAX_DIMS];
} permute_plan;

static void permute_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const permute_plan *p = launch->params;
    pyaclnn_stub_tensor v = launch->inputs[0];
    const pyaclnn_stub_tensor *self = &launch->inputs[0];
    for (int64_t i = 0; i < self->ndim; i++) {
        v.shape[i] = self->shape[p->perm[i]];
        v.strides[i] = self->strides[p->perm[i]];
    }
    unsigned char *buf = tv_gather_bytes(&v);   /* whole input first: out may overlap self */
    if (buf == NULL) {
        tv_fail_oom(launch);
        return;
    }
    tv_scatter_bytes(&launch->outputs[0], buf);
    free(buf);
}

aclnnStatus aclnnPermuteGetWorkspaceSize(const aclTensor *self, const aclIntArray *dims, aclTensor *out,
                                         uint64_t *workspaceSize, aclOpExecutor **executor) {
    static const char API[] = "aclnnPermuteGetWorkspaceSize";
    const char *names[] = {"self", "dims", "out"};
    const void *ptrs[] = {self, dims, out};
    aclnnStatus rc = tv_check_not_null(API, names, ptrs, 3, workspaceSize, executor);
    if (rc) return rc;
    pyaclnn_stub_tensor s, o;
    const int64_t *dv = NULL;
    uint64_t nd = 0;
    if ((rc = op_tensor_arg(API, "self", self, &s))) return rc;
    if ((rc = op_tensor_arg(API, "out", out, &o))) return rc;
    if ((rc = tv_int_array_arg(API, "dims", dims, 0, &dv, &nd))) return rc;
    if ((rc = ew_check_dtype_in(API, "self", s.dtype, PERMUTE_DTYPES, N(PERMUTE_DTYPES)))) return rc;
    if ((rc = ew_check_dtype_in(API, "out", o.dtype, PERMUTE_DTYPES, N(PERMUTE_DTYPES)))) return rc;
    if ((rc = tv_check_same_dtype(API, "self", s.dtype, "out", o.dtype))) return rc;
    char a[200], b[200];
    if (s.ndim != o.ndim) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "Permute does not support self shape: %s, output shape: %s",
                            tv_shape_text(s.shape, s.ndim, a, sizeof a), tv_shape_text(o.shape, o.ndim, b, sizeof b));
        return ACLNN_ERR_PARAM_INVALID;
    }
    if ((int64_t)nd != s.ndim) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "The dimension of the dims:%lld and the dimension of the "
                            "input shape:%lld are inconsistent", (long long)nd, (long long)s.ndim);
        return ACLNN_ERR_PARAM_INVALID;
    }
    for (uint64_t i = 0; i < nd; i++)
        for (uint64_t j = 0; j < i; j++)
            if (dv[i] == dv[j]) {
                pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "Invalid dims and it contains duplicate elements");
                return ACLNN_ERR_PARAM_INVALID;
            }
    if ((rc = ew_check_max_dim(API, "self", &s, EW_MAX_DIM))) return rc;
    permute_plan plan;
    int seen[PYACLNN_STUB_MAX_DIMS] = {0};
    for (uint64_t i = 0; i < nd; i++) {
        int64_t r = s.ndim, lo = -r < r - 1 ? -r : r - 1, hi = -r > r - 1 ? -r : r - 1;
        if (dv[i] > hi || dv[i] < lo) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "The values of dims should be in range [%lld, %lld].",
                                (long long)lo, (long long)hi);
            return ACLNN_ERR_PARAM_INVALID;
        }
        int64_t d = dv[i] < 0 ? dv[i] + r : dv[i];
        if (seen[d]++) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "Each dimension in perm should not be repeated.");
            return ACLNN_ERR_PARAM_INVALID;
        }
        plan.perm[i] = d;
    }
    int64_t shape[PYACLNN_STUB_MAX_DIMS];
    for (int64_t i = 0; i < s.ndim; i++) shape[i] = s.shape[plan.perm[i]];
    if ((rc = ew_check_shape(API, "out", &o, shape, s.ndim))) return rc;
    const aclTensor *in[1] = {self};
    const aclTensor *outs[1] = {out};
    return tv_make_executor(API, "Permute", pyaclnn_stub_numel(&o) ? permute_kernel : NULL, &plan, sizeof plan, in, 1,
                            outs, 1, workspaceSize, executor);
}

aclnnStatus aclnnPermute(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, const aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnPermute", workspace, workspaceSize, executor, stream);
}
