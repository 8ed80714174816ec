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

#include "activation/gelu.h"
#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"

static const double SQRT1_2 = 0.70710678118654752440, K = 0.79788456080286535588, C = 0.044715,
                    INV_SQRT_2PI = 0.39894228040143267794;

double gelu(double x, int tanh_mode) {
    if (tanh_mode) return 0.5 * x * (1.0 + tanh(K * (x + C * x * x * x)));
    return 0.5 * x * (1.0 + erf(x * SQRT1_2));
}

double gelu_grad(double x, int tanh_mode) {
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

void gelu_kernel(const pyaclnn_stub_launch *launch) {
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

/* ---- backward ------------------------------------------------------------------------------ */

void gelu_backward_kernel(const pyaclnn_stub_launch *launch) {
    const gelu_params *p = launch->params;
    const pyaclnn_stub_tensor *dy = &launch->inputs[0], *x = &launch->inputs[1], *dx = &launch->outputs[0];
    if (!tv_launch_views_ok(launch)) return;
    tv_bcast2 it;   /* it.off: dy's, x's */
    int64_t n = tv_bcast2_init(&it, dy, x, p->shape, p->ndim);
    aclDataType ct = dx->dtype;   /* the promoted dtype (checked in phase 1) */
    tv_iter oi;
    tv_iter_init(&oi, dx);
    for (int64_t i = 0; i < n; i++, tv_iter_next(&oi), tv_bcast2_next(&it)) {
        /* both operands cast to the promoted dtype first (exact for these float widenings) */
        double g = ew_cast(ew_load(tv_at(dy, it.off[0]), dy->dtype), dy->dtype, ct).f;
        double v = ew_cast(ew_load(tv_at(x, it.off[1]), x->dtype), x->dtype, ct).f;
        ew_store(tv_at(dx, oi.off), ct, round_to(g * gelu_grad(v, p->tanh_mode), ct));
    }
}

/* ---- steps --------------------------------------------------------------------------------- */

/* gelu_bf16 x: the vendor refuses BF16 on the SoCs before Atlas A2 with a message of its own. */
aclnnStatus opc_gelu_bf16(op_call *c, const op_step *s) {
    if (op_tensor(c, s, 0)->dtype != ACL_BF16 || pyaclnn_stub_soc_family() != PYACLNN_SOC_OTHER) return ACLNN_SUCCESS;
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Input dtype of gelu_v2 does not support bfloat16 in "
                        "current socversion.");
    return ACLNN_ERR_PARAM_INVALID;
}

/* gelu_promote gradOutput self gradInput LIST: the promoted dtype of gradOutput and self is in the list
 * and is gradInput's dtype. */
aclnnStatus opc_gelu_promote(op_call *c, const op_step *s) {
    size_t n;
    const aclDataType *list = op_list(s->list, &n);
    aclDataType promoted = ew_promote(op_tensor(c, s, 0)->dtype, op_tensor(c, s, 1)->dtype);
    aclDataType dx = op_tensor(c, s, 2)->dtype;
    aclnnStatus rc = ew_check_dtype_in(c->api, "promoted dtype", promoted, list, n);
    if (rc || promoted == dx) return rc;
    char b1[24], b2[24];
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Promote dtype of GradOutput and Self is %s, not matching "
                        "with gradInput %s.", op_dtype_name(promoted, b1), op_dtype_name(dx, b2));
    return ACLNN_ERR_PARAM_INVALID;
}

/* gelu_plan approximate: the mode -- an integer (GeluV2: 1 is TANH, anything else "none") or a string
 * (GeluBackwardV2: "tanh" or "none", else 161002) -- and the broadcast shape when a step computed one. */
aclnnStatus opc_gelu_plan(op_call *c, const op_step *s) {
    int tanh_mode;
    if (c->def->params[s->p[0]].kind == OP_K_STRING) {
        const char *approximate = op_argument(c, s, 0)->p;
        if (strcmp(approximate, "tanh") != 0 && strcmp(approximate, "none") != 0) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "%s only supports to set none or tanh, but got %s.",
                                op_pname(c, s, 0), approximate);
            return ACLNN_ERR_PARAM_INVALID;
        }
        tanh_mode = strcmp(approximate, "tanh") == 0;
    } else {
        tanh_mode = op_argument(c, s, 0)->i == 1;
    }
    gelu_params *prm = op_params(c, sizeof *prm);
    prm->tanh_mode = tanh_mode;
    if (c->ndim >= 0) {
        prm->ndim = c->ndim;
        for (int64_t d = 0; d < c->ndim; d++) prm->shape[d] = c->shape[d];
    }
    return ACLNN_SUCCESS;
}
