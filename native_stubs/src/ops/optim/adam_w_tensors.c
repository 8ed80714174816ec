/*
 * aclnnApplyAdamW (adam_w_tensors.toml): the arch35 DAG (op_kernel/arch35/apply_adam_w_dag.h), in fp32 per element:
 *   g = grad * (maximize ? -1 : 1)
 *   m' = m * b1 - (b1 - 1) * g                     v' = b2 * v - ((b2 - 1) * g) * g
 *   u = amsgrad ? max(v', maxGradNorm) : v'
 *   varT = var * (1 - wd * lr)                     denom = sqrt(-u / (b2p * b2 - 1)) + eps
 *   var' = varT + (lr / (b1p * b1 - 1)) * m' / denom
 * each step rounded to fp32 as the vector unit does, the results RINT to the tensors' dtype.
 */
#include <math.h>
#include <stdlib.h>

#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"

typedef struct {
    int amsgrad, maximize;
} awt_params;

static float scalar_of(const pyaclnn_stub_tensor *t) {
    float *v = tv_load_float(t);
    float x = v != NULL ? v[0] : NAN;
    free(v);
    return x;
}

void adam_w_tensors_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const awt_params *p = launch->params;
    const pyaclnn_stub_tensor *in = launch->inputs;
    float b1p = scalar_of(&in[3]), b2p = scalar_of(&in[4]), lr = scalar_of(&in[5]), wd = scalar_of(&in[6]);
    float b1 = scalar_of(&in[7]), b2 = scalar_of(&in[8]), eps = scalar_of(&in[9]);
    int64_t n = pyaclnn_stub_numel(&in[0]);
    float *var = tv_load_float(&in[0]), *m = tv_load_float(&in[1]), *v = tv_load_float(&in[2]);
    float *g = tv_load_float(&in[10]), *mx = p->amsgrad ? tv_load_float(&in[11]) : NULL;
    if (!var || !m || !v || !g || (p->amsgrad && !mx)) {
        tv_fail_oom(launch);
        goto done;
    }
    float mf = p->maximize ? -1.0f : 1.0f;
    float decay = wd * lr;
    decay = decay * -1.0f;
    decay = decay + 1.0f;
    float b2t = b2p * b2 + -1.0f, step = lr / (b1p * b1 + -1.0f);
    for (int64_t i = 0; i < n; i++) {
        float gt = g[i] * mf;
        float mo = m[i] * b1 - (b1 + -1.0f) * gt;
        float vo = b2 * v[i] - ((b2 + -1.0f) * gt) * gt;
        float u = vo;
        if (p->amsgrad) u = isnan(vo) || isnan(mx[i]) ? NAN : vo > mx[i] ? vo : mx[i];
        float denom = sqrtf((u * -1.0f) / b2t) + eps;
        var[i] = var[i] * decay + (step * mo) / denom;
        m[i] = mo, v[i] = vo;
    }
    tv_store_float(&launch->outputs[0], var);
    tv_store_float(&launch->outputs[1], m);
    tv_store_float(&launch->outputs[2], v);
done:
    free(var), free(m), free(v), free(g), free(mx);
}

/* awt_null_max maxGradNormOptional amsgrad: with amsgrad, maxGradNormOptional is given (161001). */
aclnnStatus opc_awt_null_max(op_call *c, const op_step *s) {
    if (!op_argument(c, s, 1)->i || op_argument(c, s, 0)->p != NULL) return ACLNN_SUCCESS;
    pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, c->api, "%s is NULL", op_pname(c, s, 0));
    return ACLNN_ERR_PARAM_NULLPTR;
}

/* awt_plan beta1Power beta2Power lr weightDecay beta1 beta2 eps amsgrad maximize: each hyper-parameter one
 * element (the op_api refuses silently: the message is the emulator's); the kernel's flags. */
aclnnStatus opc_awt_plan(op_call *c, const op_step *s) {
    for (int k = 0; k < 7; k++)
        if (pyaclnn_stub_numel(op_tensor(c, s, k)) != 1)
            return op_invalidf(c->api, "%s must hold one element (the op_api's CheckShape, which logs no message)",
                               op_pname(c, s, k));
    awt_params *p = op_params(c, sizeof *p);
    p->amsgrad = op_argument(c, s, 7)->i != 0;
    p->maximize = op_argument(c, s, 8)->i != 0;
    return ACLNN_SUCCESS;
}
