/*
 * aclnnGeluV2 and aclnnGeluBackwardV2: torch's gelu (approximate "none" or "tanh") and its backward
 * (hicann/ops-nn activation/gelu_v2/op_api/aclnn_gelu_v2.cpp, activation/gelu_grad_v2/op_api/
 * aclnn_gelu_backward_v2.cpp; torch_npu calls the V2 forms).
 *
 *   none: y = x * Phi(x),                    dy/dx = Phi(x) + x * phi(x)
 *   tanh: y = x/2 * (1 + tanh(k (x + c x^3))), dy/dx = (1 + t)/2 + x/2 (1 - t^2) k (1 + 3 c x^2)
 * with Phi(x) = (1 + erf(x / sqrt 2)) / 2, phi(x) = exp(-x^2/2) / sqrt(2 pi), k = sqrt(2 / pi),
 * c = 0.044715. Computed in float64 with libm, rounded once to fp32 and then to the dtype: class (c)
 * (the NPU's erf/tanh approximations are not published). The backward broadcasts gradOutput with self
 * and computes in their promoted dtype, as the vendor does.
 */
#include <math.h>
#include <string.h>

#include "aclnnop/aclnn_gelu_backward_v2.h"
#include "aclnnop/aclnn_gelu_v2.h"
#include "opbase/checks.h"
#include "kernels/view.h"

static const aclDataType GELU[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};

static const double SQRT1_2 = 0.70710678118654752440, K = 0.79788456080286535588, C = 0.044715,
                    INV_SQRT_2PI = 0.39894228040143267794;

static double gelu(double x, int tanh_mode) {
    if (tanh_mode) return 0.5 * x * (1.0 + tanh(K * (x + C * x * x * x)));
    return 0.5 * x * (1.0 + erf(x * SQRT1_2));
}

static double gelu_grad(double x, int tanh_mode) {
    if (tanh_mode) {
        double t = tanh(K * (x + C * x * x * x));
        return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * K * (1.0 + 3.0 * C * x * x);
    }
    return 0.5 * (1.0 + erf(x * SQRT1_2)) + x * INV_SQRT_2PI * exp(-0.5 * x * x);
}

/* A float64 result as the dtype: rounded to fp32 first, then narrower (the NPU's Cast). */
static ew_value round_to(double v, aclDataType dt) {
    return ew_cast((ew_value){.f = (double)(float)v}, ACL_FLOAT, dt);
}

typedef struct {
    int tanh_mode;
    int64_t ndim;                               /* backward: the broadcast shape */
    int64_t shape[PYACLNN_STUB_MAX_DIMS];
} gelu_params;

static void gelu_kernel(const pyaclnn_stub_launch *launch) {
    const gelu_params *p = launch->params;
    const pyaclnn_stub_tensor *x = &launch->inputs[0], *y = &launch->outputs[0];
    if (!tv_launch_views_ok(launch)) return;
    int64_t n = pyaclnn_stub_numel(x);
    tv_iter xi, yi;
    tv_iter_init(&xi, x);
    tv_iter_init(&yi, y);
    for (int64_t i = 0; i < n; i++, tv_iter_next(&xi), tv_iter_next(&yi)) {
        double v = ew_load(tv_at(x, xi.off), x->dtype).f;
        ew_store(tv_at(y, yi.off), y->dtype, round_to(gelu(v, p->tanh_mode), y->dtype));
    }
}

aclnnStatus aclnnGeluV2GetWorkspaceSize(const aclTensor *xArg, int64_t approximate, aclTensor *yArg,
                                        uint64_t *workspaceSize, aclOpExecutor **executor) {
    static const char API[] = "aclnnGeluV2GetWorkspaceSize";
    ew_ptr_arg ptrs[] = {{"x", xArg}, {"y", yArg}};
    aclnnStatus rc = ew_check_not_null(API, ptrs, 2, workspaceSize, executor);
    pyaclnn_stub_tensor x, y;
    if (rc || (rc = op_tensor_arg(API, "x", xArg, &x)) || (rc = op_tensor_arg(API, "y", yArg, &y))) return rc;
    if ((rc = tv_check_same_dtype(API, "y", y.dtype, "x", x.dtype))) return rc;
    if (x.dtype == ACL_BF16 && pyaclnn_stub_soc_family() == PYACLNN_SOC_OTHER) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "Input dtype of gelu_v2 does not support bfloat16 in "
                            "current socversion.");
        return ACLNN_ERR_PARAM_INVALID;
    }
    if ((rc = ew_check_dtype_in(API, "x", x.dtype, GELU, 3)) || (rc = ew_check_shape(API, "y", &y, x.shape, x.ndim)))
        return rc;
    gelu_params prm = {.tanh_mode = approximate == 1};   /* anything but 1 (TANH) is "none" */
    return tv_make_executor(API, "GeluV2", pyaclnn_stub_numel(&x) ? gelu_kernel : NULL, &prm, sizeof prm, &xArg, 1,
                            (const aclTensor *const *)&yArg, 1, workspaceSize, executor);
}

EW_DEFINE_PHASE2(aclnnGeluV2)

/* ---- backward ------------------------------------------------------------------------------ */

/* Strides of t as a view of the broadcast shape (0 along broadcast dimensions). */
static void bcast_strides(const pyaclnn_stub_tensor *t, int64_t ndim, int64_t *st) {
    int64_t lead = ndim - t->ndim;
    for (int64_t d = 0; d < ndim; d++) st[d] = d < lead || t->shape[d - lead] == 1 ? 0 : t->strides[d - lead];
}

static void gelu_backward_kernel(const pyaclnn_stub_launch *launch) {
    const gelu_params *p = launch->params;
    const pyaclnn_stub_tensor *dy = &launch->inputs[0], *x = &launch->inputs[1], *dx = &launch->outputs[0];
    if (!tv_launch_views_ok(launch)) return;
    int64_t sd[PYACLNN_STUB_MAX_DIMS], sx[PYACLNN_STUB_MAX_DIMS], idx[PYACLNN_STUB_MAX_DIMS] = {0}, n = 1;
    bcast_strides(dy, p->ndim, sd);
    bcast_strides(x, p->ndim, sx);
    for (int64_t d = 0; d < p->ndim; d++) n *= p->shape[d];
    int64_t od = dy->offset, ox = x->offset;
    aclDataType ct = dx->dtype;   /* the promoted dtype (checked in phase 1) */
    tv_iter oi;
    tv_iter_init(&oi, dx);
    for (int64_t i = 0; i < n; i++, tv_iter_next(&oi)) {
        /* both operands cast to the promoted dtype first (exact for these float widenings) */
        double g = ew_cast(ew_load(tv_at(dy, od), dy->dtype), dy->dtype, ct).f;
        double v = ew_cast(ew_load(tv_at(x, ox), x->dtype), x->dtype, ct).f;
        ew_store(tv_at(dx, oi.off), ct, round_to(g * gelu_grad(v, p->tanh_mode), ct));
        for (int64_t d = p->ndim - 1; d >= 0; d--) {
            od += sd[d];
            ox += sx[d];
            if (++idx[d] < p->shape[d]) break;
            od -= sd[d] * idx[d];
            ox -= sx[d] * idx[d];
            idx[d] = 0;
        }
    }
}

aclnnStatus aclnnGeluBackwardV2GetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *selfArg, char *approximate,
                                                aclTensor *gradInput, uint64_t *workspaceSize, aclOpExecutor **executor) {
    static const char API[] = "aclnnGeluBackwardV2GetWorkspaceSize";
    ew_ptr_arg ptrs[] = {{"gradOutput", gradOutput}, {"self", selfArg}, {"gradInput", gradInput},
                         {"approximate", approximate}};
    aclnnStatus rc = ew_check_not_null(API, ptrs, 4, workspaceSize, executor);
    pyaclnn_stub_tensor dy, x, dx;
    if (rc || (rc = op_tensor_arg(API, "gradOutput", gradOutput, &dy)) || (rc = op_tensor_arg(API, "self", selfArg, &x)) ||
        (rc = op_tensor_arg(API, "gradInput", gradInput, &dx)))
        return rc;
    /* dtypes: both in the list, their promotion in it and equal to gradInput's */
    if ((rc = ew_check_dtype_in(API, "gradOutput", dy.dtype, GELU, 3)) || (rc = ew_check_dtype_in(API, "self", x.dtype, GELU, 3)))
        return rc;
    aclDataType promoted = ew_promote(dy.dtype, x.dtype);
    if ((rc = ew_check_dtype_in(API, "promoted dtype", promoted, GELU, 3))) return rc;
    if (promoted != dx.dtype) {
        char b1[24], b2[24];
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "Promote dtype of GradOutput and Self is %s, not matching "
                            "with gradInput %s.", op_dtype_name(promoted, b1), op_dtype_name(dx.dtype, b2));
        return ACLNN_ERR_PARAM_INVALID;
    }
    gelu_params prm;
    memset(&prm, 0, sizeof prm);
    if ((rc = ew_broadcast(API, "gradOutput", &dy, "self", &x, prm.shape, &prm.ndim)) ||
        (rc = ew_check_shape(API, "gradInput", &dx, prm.shape, prm.ndim)))
        return rc;
    if (strcmp(approximate, "tanh") != 0 && strcmp(approximate, "none") != 0) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "approximate only supports to set none or tanh, but got %s.",
                            approximate);
        return ACLNN_ERR_PARAM_INVALID;
    }
    prm.tanh_mode = strcmp(approximate, "tanh") == 0;
    const aclTensor *inputs[2] = {gradOutput, selfArg};
    int empty = pyaclnn_stub_numel(&dy) == 0 || pyaclnn_stub_numel(&x) == 0;
    return tv_make_executor(API, "GeluBackwardV2", empty ? NULL : gelu_backward_kernel, &prm, sizeof prm, inputs, 2,
                            (const aclTensor *const *)&gradInput, 1, workspaceSize, executor);
}

EW_DEFINE_PHASE2(aclnnGeluBackwardV2)
