/*
 * aclnnRelu, aclnnInplaceRelu and aclnnThresholdBackward (relu's backward: torch_npu calls
 * threshold_backward(grad, result, 0)) (hicann/ops-nn activation/relu/op_api/aclnn_relu.cpp,
 * activation/threshold_grad_v2_d/op_api/aclnn_threshold_backward.cpp).
 *
 *   relu(x) = x > 0 ? x : 0 (NaN stays NaN, as torch; UINT8 is copied)
 *   thresholdBackward(dy, x, t) = x > t ? dy : 0, x and dy broadcast, t compared as FLOAT for float
 *   dtypes (the vendor's ToFloat) and exactly for integers.
 * Moves and comparisons: bit-exact (class a).
 *
 * BF16: the vendor's relu check admits it for SoC versions from 910B to 910E; the emulator also
 * admits it on Ascend 950 (the regbase list of threshold_backward has it, and torch_npu's bf16
 * models call relu there).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aclnnop/aclnn_relu.h"
#include "aclnnop/aclnn_threshold_backward.h"
#include "elementwise/ew_check.h"
#include "tensorview/tv.h"

#define RELU_MAX_DIM 8

static const aclDataType RELU[] = {ACL_FLOAT, ACL_FLOAT16, ACL_INT8, ACL_UINT8, ACL_INT32, ACL_INT64, ACL_BF16};
/* threshold_backward: the 910 list, + BF16 (A2/A3, 950), + INT64 (950 with threshold 0: ReluGrad) */
static const aclDataType TB[] = {ACL_FLOAT, ACL_INT32, ACL_FLOAT16, ACL_INT8, ACL_UINT8, ACL_BF16, ACL_INT64};

static void relu_kernel(const pyaclnn_stub_launch *launch) {
    const pyaclnn_stub_tensor *x = &launch->inputs[0], *y = &launch->outputs[0];
    if (!tv_launch_views_ok(launch)) return;
    int64_t n = pyaclnn_stub_numel(x);
    unsigned char *buf = tv_gather_bytes(x);    /* all of x first: x and y may alias (in place) */
    if (buf == NULL) {
        tv_fail_oom(launch);
        return;
    }
    size_t isz = ew_itemsize(x->dtype);
    int is_float = ew_repr_of(x->dtype) == EW_REPR_F;
    for (int64_t i = 0; i < n; i++) {
        unsigned char *p = buf + i * (int64_t)isz;
        ew_value v = ew_load(p, x->dtype);
        int zero = is_float ? v.f <= 0 : v.i < 0;     /* NaN <= 0 is false: NaN stays */
        if (zero) memset(p, 0, isz);                  /* +0 in every dtype (relu(-0.0) = +0) */
    }
    tv_scatter_bytes(y, buf);
    free(buf);
}

static aclnnStatus relu_phase1(const char *api, const char *op, const aclTensor *selfArg, const aclTensor *outArg,
                               uint64_t *workspaceSize, aclOpExecutor **executor) {
    ew_ptr_arg ptrs[] = {{"self", selfArg}, {"out", outArg}};
    aclnnStatus rc = ew_check_not_null(api, ptrs, 2, workspaceSize, executor);
    pyaclnn_stub_tensor self, out;
    if (rc || (rc = op_tensor_arg(api, "self", selfArg, &self)) || (rc = op_tensor_arg(api, "out", outArg, &out)))
        return rc;
    size_t n_list = sizeof RELU / sizeof RELU[0] - (pyaclnn_stub_soc_family() == PYACLNN_SOC_OTHER);
    if ((rc = ew_check_dtype_in(api, "self", self.dtype, RELU, n_list)) ||
        (rc = tv_check_same_dtype(api, "self", self.dtype, "out", out.dtype)) ||
        (rc = ew_check_max_dim(api, "self", &self, RELU_MAX_DIM)) || (rc = ew_check_max_dim(api, "out", &out, RELU_MAX_DIM)) ||
        (rc = ew_check_shape(api, "out", &out, self.shape, self.ndim)))
        return rc;
    /* empty, or UINT8 in place: nothing to do (the vendor's early return) */
    int nothing = pyaclnn_stub_numel(&self) == 0 || (selfArg == outArg && self.dtype == ACL_UINT8);
    return tv_make_executor(api, op, nothing ? NULL : relu_kernel, NULL, 0, &selfArg, 1, &outArg, 1, workspaceSize,
                            executor);
}

aclnnStatus aclnnReluGetWorkspaceSize(const aclTensor *self, const aclTensor *out, uint64_t *workspaceSize,
                                      aclOpExecutor **executor) {
    return relu_phase1("aclnnReluGetWorkspaceSize", "Relu", self, out, workspaceSize, executor);
}

aclnnStatus aclnnInplaceReluGetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize, aclOpExecutor **executor) {
    return relu_phase1("aclnnInplaceReluGetWorkspaceSize", "InplaceRelu", selfRef, selfRef, workspaceSize, executor);
}

EW_DEFINE_PHASE2(aclnnRelu)
EW_DEFINE_PHASE2(aclnnInplaceRelu)

/* ---- aclnnThresholdBackward ---------------------------------------------------------------- */

typedef struct {
    ew_value threshold;                    /* FLOAT value for float dtypes, the integer otherwise */
    int64_t ndim;
    int64_t shape[PYACLNN_STUB_MAX_DIMS];  /* the broadcast shape */
} tb_params;

static void bcast_strides(const pyaclnn_stub_tensor *t, int64_t ndim, int64_t *st) {
    int64_t lead = ndim - t->ndim;
    for (int64_t d = 0; d < ndim; d++) st[d] = d < lead || t->shape[d - lead] == 1 ? 0 : t->strides[d - lead];
}

static void threshold_backward_kernel(const pyaclnn_stub_launch *launch) {
    const tb_params *p = launch->params;
    const pyaclnn_stub_tensor *dy = &launch->inputs[0], *x = &launch->inputs[1], *out = &launch->outputs[0];
    if (!tv_launch_views_ok(launch)) return;
    int64_t sd[PYACLNN_STUB_MAX_DIMS], sx[PYACLNN_STUB_MAX_DIMS], idx[PYACLNN_STUB_MAX_DIMS] = {0}, n = 1;
    bcast_strides(dy, p->ndim, sd);
    bcast_strides(x, p->ndim, sx);
    for (int64_t d = 0; d < p->ndim; d++) n *= p->shape[d];
    size_t isz = ew_itemsize(out->dtype);
    int is_float = ew_repr_of(x->dtype) == EW_REPR_F;
    unsigned char *buf = malloc((size_t)n * isz + 1);   /* all reads before any write: out may alias */
    if (buf == NULL) {
        tv_fail_oom(launch);
        return;
    }
    int64_t od = dy->offset, ox = x->offset;
    for (int64_t i = 0; i < n; i++) {
        ew_value v = ew_load(tv_at(x, ox), x->dtype);
        int keep = is_float ? (float)v.f > (float)p->threshold.f : v.i > p->threshold.i;
        if (keep) memcpy(buf + i * (int64_t)isz, tv_at(dy, od), isz);
        else memset(buf + i * (int64_t)isz, 0, isz);
        for (int64_t d = p->ndim - 1; d >= 0; d--) {
            od += sd[d];
            ox += sx[d];
            if (++idx[d] < p->shape[d]) break;
            od -= sd[d] * idx[d];
            ox -= sx[d] * idx[d];
            idx[d] = 0;
        }
    }
    tv_scatter_bytes(out, buf);
    free(buf);
}

aclnnStatus aclnnThresholdBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *selfArg,
                                                   const aclScalar *threshold, aclTensor *outArg,
                                                   uint64_t *workspaceSize, aclOpExecutor **executor) {
    static const char API[] = "aclnnThresholdBackwardGetWorkspaceSize";
    /* the vendor's order: threshold, out, workspaceSize, then gradOutput and self */
    ew_ptr_arg first[] = {{"threshold", threshold}, {"out", outArg}};
    ew_ptr_arg ptrs[] = {{"gradOutput", gradOutput}, {"self", selfArg}};
    aclnnStatus rc = ew_check_not_null(API, first, 2, workspaceSize, executor);
    if (rc || (rc = ew_check_not_null(API, ptrs, 2, workspaceSize, executor))) return rc;
    aclDataType tdt;
    ew_value tv;
    pyaclnn_stub_tensor dy, x, out;
    if ((rc = ew_scalar_arg(API, "threshold", threshold, &tdt, &tv)) ||
        (rc = op_tensor_arg(API, "gradOutput", gradOutput, &dy)) || (rc = op_tensor_arg(API, "self", selfArg, &x)) ||
        (rc = op_tensor_arg(API, "out", outArg, &out)))
        return rc;
    float tf = (float)ew_value_to_double(tv, tdt);
    pyaclnn_soc_family soc = pyaclnn_stub_soc_family();
    size_t n_list = soc == PYACLNN_SOC_OTHER ? 5 : soc == PYACLNN_SOC_950 && tf == 0.0f ? 7 : 6;
    if ((rc = ew_check_dtype_in(API, "gradOutput", dy.dtype, TB, n_list)) ||
        (rc = ew_check_dtype_in(API, "self", x.dtype, TB, n_list)) ||
        (rc = tv_check_same_dtype(API, "gradOutput", dy.dtype, "self", x.dtype)) ||
        (rc = tv_check_same_dtype(API, "out", out.dtype, "self", x.dtype)) ||
        (rc = ew_check_max_dim(API, "gradOutput", &dy, RELU_MAX_DIM)) ||
        (rc = ew_check_max_dim(API, "self", &x, RELU_MAX_DIM)))
        return rc;
    tb_params prm;
    memset(&prm, 0, sizeof prm);
    if ((rc = ew_broadcast(API, "self", &x, "gradOutput", &dy, prm.shape, &prm.ndim)) ||
        (rc = ew_check_shape(API, "out", &out, prm.shape, prm.ndim)))
        return rc;
    if (ew_repr_of(x.dtype) == EW_REPR_F) prm.threshold.f = (double)tf;
    else prm.threshold = ew_cast(tv, tdt, x.dtype);   /* the vendor converts it to self's dtype */
    const aclTensor *inputs[2] = {gradOutput, selfArg};
    int empty = pyaclnn_stub_numel(&dy) == 0 || pyaclnn_stub_numel(&x) == 0;
    return tv_make_executor(API, "ThresholdBackward", empty ? NULL : threshold_backward_kernel, &prm, sizeof prm,
                            inputs, 2, (const aclTensor *const *)&outArg, 1, workspaceSize, executor);
}

EW_DEFINE_PHASE2(aclnnThresholdBackward)
