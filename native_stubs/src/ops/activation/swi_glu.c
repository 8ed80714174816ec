/*
 * aclnnSwiGlu and aclnnSwiGluGrad (hicann/ops-nn activation/swi_glu, swi_glu_grad: generated wrappers of the op
 * definitions; definitions in swi_glu.toml). The tiling sees x as rows x cols: rows = the product of the dims
 * before dim, cols = the product of dim and the dims after it (even), A = the first cols / 2 of each row, B the
 * rest (a split along dim whenever x's size along dim is even; the flattened tail otherwise, as the tiling does).
 * The kernels' fp32 steps (fp16 / bf16 widened, one RINT cast per store; Exp: libm in double rounded to fp32):
 *   SwiGlu (both SoCs, swi_glu_impl.hpp / swi_glu_bf16.hpp with beta = -1):
 *     fp32: sig = 1 / (Exp(-A) + 1), out = (sig * A) * B;  fp16 / bf16: out = (A / (Exp(-A) + 1)) * B.
 *   SwiGluGrad, Atlas A2 (swi_glu_grad_float.hpp / swi_glu_grad_bf16.hpp):
 *     sig as above; dB = (sig * A) * g; m = (sig * (1 - sig)) * A + sig;
 *     fp32: dA = (m * B) * g;  fp16 / bf16: dA = (m * g) * B.
 *   SwiGluGrad, Ascend 950 (arch35/swi_glu_grad_base.h):
 *     dA = (((1 - sig) * A + 1) * (g * sig)) * B, dB = (sig * g) * A.
 */
#include <stdlib.h>

#include "kernels/vecmath.h"
#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"

typedef struct {
    int64_t rows, cols;   /* cols: the half row (A's and B's length) */
    int grad, soc950;
    aclDataType dt;
} sg_params;

static float sg_sig(float a) {
    float e = vm_exp(-a);
    return 1.0f / (e + 1.0f);
}

void swi_glu_kernel(const pyaclnn_stub_launch *launch) {
    const sg_params *p = launch->params;
    if (!tv_launch_views_ok(launch)) return;
    int64_t R = p->rows, C = p->cols;
    const pyaclnn_stub_tensor *xt = &launch->inputs[p->grad ? 1 : 0];
    float *x = tv_load_float(xt), *g = p->grad ? tv_load_float(&launch->inputs[0]) : NULL;
    float *o = tv_alloc(p->grad ? 2 * R * C : R * C, sizeof(float));
    if (!x || !o || (p->grad && !g)) {
        tv_fail_oom(launch);
    } else {
        int f32 = p->dt == ACL_FLOAT;
        for (int64_t r = 0; r < R; r++)
            for (int64_t c = 0; c < C; c++) {
                float a = x[r * 2 * C + c], b = x[r * 2 * C + C + c];
                if (!p->grad) {
                    if (f32) {
                        float t = sg_sig(a) * a;
                        o[r * C + c] = t * b;
                    } else {
                        float e = vm_exp(-a), t = a / (e + 1.0f);
                        o[r * C + c] = t * b;
                    }
                    continue;
                }
                float gv = g[r * C + c], sig = sg_sig(a), da, db;
                if (p->soc950) {
                    float t = (1.0f - sig) * a;
                    t = t + 1.0f;
                    float gs = gv * sig;
                    da = (t * gs) * b;
                    db = (sig * gv) * a;
                } else {
                    float sa = sig * a;
                    db = sa * gv;
                    float m = sig * (1.0f - sig);
                    m = m * a;
                    m = m + sig;
                    da = f32 ? (m * b) * gv : (m * gv) * b;
                }
                o[r * 2 * C + c] = da;
                o[r * 2 * C + C + c] = db;
            }
        tv_store_float(&launch->outputs[0], o);
    }
    free(x), free(g), free(o);
}

/* sg_plan x dim out [yGrad]: the tiling's checks (561002): dim in [-rank, rank), the tail from dim of even size;
 * out x's size halved (forward; x's shape for the backward, yGrad its half) -- the tiling trusts the output's shape,
 * the emulator checks its size. An empty x: out must be empty too, nothing runs. */
aclnnStatus opc_sg_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0), *out = op_tensor(c, s, 2);
    int64_t dim = op_argument(c, s, 1)->i, nd = x->ndim;
    int grad = s->np > 3;
    char b[160];
    if (pyaclnn_stub_numel(x) == 0) {
        if (pyaclnn_stub_numel(out) != 0) {
            pyaclnn_stub_report(ACLNN_ERR_INNER_TILING_ERROR, c->api, "y %s: Output y must be an empty tensor when input "
                                "x is an empty tensor", tv_shape_text(out->shape, out->ndim, b, sizeof b));
            return ACLNN_ERR_INNER_TILING_ERROR;
        }
        c->nothing = 1;
        return ACLNN_SUCCESS;
    }
    if (dim < -nd || dim >= nd) {
        pyaclnn_stub_report(ACLNN_ERR_INNER_TILING_ERROR, c->api, "dim %lld: The value of attribute dim depends on the "
                            "number of shape axes of input x", (long long)dim);
        return ACLNN_ERR_INNER_TILING_ERROR;
    }
    int64_t d = dim < 0 ? dim + nd : dim;
    int64_t rows = tv_dims_product(x->shape, 0, d), tail = tv_dims_product(x->shape, d, nd);
    if (tail % 2) {
        pyaclnn_stub_report(ACLNN_ERR_INNER_TILING_ERROR, c->api, "x %s: The split axis of input x must be an even "
                            "number, where split axis is the %lldth axis of input x",
                            tv_shape_text(x->shape, x->ndim, b, sizeof b), (long long)d);
        return ACLNN_ERR_INNER_TILING_ERROR;
    }
    for (int k = grad ? 3 : 2; k >= 2; k--) {
        const pyaclnn_stub_tensor *t = op_tensor(c, s, k);
        int64_t want = grad && k == 2 ? rows * tail : rows * tail / 2;
        if (pyaclnn_stub_numel(t) != want) {
            pyaclnn_stub_report(ACLNN_ERR_INNER_TILING_ERROR, c->api, "%s %s has %lld elements, %lld expected",
                                op_pname(c, s, k), tv_shape_text(t->shape, t->ndim, b, sizeof b),
                                (long long)pyaclnn_stub_numel(t), (long long)want);
            return ACLNN_ERR_INNER_TILING_ERROR;
        }
    }
    sg_params *p = op_params(c, sizeof *p);
    p->rows = rows;
    p->cols = tail / 2;
    p->grad = grad;
    p->soc950 = ew_soc_is_950();
    p->dt = x->dtype;
    return ACLNN_SUCCESS;
}
