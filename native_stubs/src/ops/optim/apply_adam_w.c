/*
 * ApplyAdamWV2's steps and kernel (apply_adam_w.toml): one AdamW step in fp32, in the order of the vendor's
 * kernel for the SoC.
 *   Atlas A2 (op_kernel/apply_adam_w_v2_fp.h): t = step + 1, stepSize = lr / (1 - beta1^t),
 *     c2 = 1 / sqrt(1 - beta2^t); g = -g when maximizing; var1 = var * (1 - lr * wd);
 *     m = (g - m) * (1 - beta1) + m; v = v * beta2 + (g * g) * (1 - beta2); [mx = max(mx, v)];
 *     var = var1 - m / (sqrt(v or mx) * c2 + eps) * stepSize
 *   Ascend 950 (op_kernel/arch35/apply_adam_w_v2_dag.h): g = g * (+-1); m = m * beta1 - g * (beta1 - 1);
 *     v = v * beta2 - (g * g) * (beta2 - 1); [mx = max(v, mx)];
 *     var = var * (1 - lr * wd) + lr / (beta1^t - 1) * (m / (sqrt(v or mx) / sqrt(1 - beta2^t) + eps))
 * beta^t is the hardware's Power (not public): libm pow in double rounded to fp32. The results go to each
 * tensor's dtype with RINT, except the A2 kernels' own BF16 outputs (apply_adam_w_v2_b16.h, _mix_dtype.h:
 * CAST_ROUND, half away from zero) when the op_api runs the kernel on the tensors' dtypes (no casts).
 *   not_null_adamw varRef mRef vRef maxGradNorm grad step amsgrad   NULL tensors (maxGradNorm with amsgrad)
 *   adamw_plan varRef mRef vRef maxGradNorm grad step lr beta1 beta2 weightDecay eps amsgrad maximize
 *                                        step's numel, an empty varRef, the parameters
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"

typedef struct {
    float lr, beta1, beta2, wd, eps;
    int amsgrad, maximize, soc950, bf16_away;
} adamw_params;

static float pow32(float b, float t) { return (float)pow((double)b, (double)t); }
static float max32(float a, float b) { return isnan(a) || isnan(b) ? NAN : a > b ? a : b; }

/* one element: x[0..3] var, m, v, maxGradNorm updated in place from g */
static void adamw_a2(const adamw_params *p, float t, float *x, float g) {
    float step_size = p->lr / (1.0f - pow32(p->beta1, t));
    float c2 = 1.0f / sqrtf(1.0f - pow32(p->beta2, t));
    if (p->maximize) g = g * -1.0f;
    float var1 = x[0] * (1.0f - p->lr * p->wd);
    x[1] = (g - x[1]) * (1.0f - p->beta1) + x[1];
    x[2] = x[2] * p->beta2 + (g * g) * (1.0f - p->beta2);
    if (p->amsgrad) x[3] = max32(x[3], x[2]);
    float denom = sqrtf(p->amsgrad ? x[3] : x[2]) * c2 + p->eps;
    x[0] = var1 - (x[1] / denom) * step_size;
}

static void adamw_950(const adamw_params *p, float t, float *x, float g) {
    g = g * (p->maximize ? -1.0f : 1.0f);
    x[1] = x[1] * p->beta1 - g * (p->beta1 - 1.0f);
    x[2] = x[2] * p->beta2 - (g * g) * (p->beta2 - 1.0f);
    if (p->amsgrad) x[3] = max32(x[2], x[3]);
    float denom = sqrtf(p->amsgrad ? x[3] : x[2]) / sqrtf(1.0f - pow32(p->beta2, t)) + p->eps;
    x[0] = x[0] * (1.0f - p->lr * p->wd) + p->lr / (pow32(p->beta1, t) - 1.0f) * (x[1] / denom);
}

/* to BF16 values rounding half away from zero (the vector unit's CAST_ROUND); NaN kept */
static void round_bf16_away(float *x, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        if (isnan(x[i])) continue;
        uint32_t b;
        memcpy(&b, &x[i], 4);
        b = (b + 0x8000u) & 0xFFFF0000u;
        memcpy(&x[i], &b, 4);
    }
}

void adamw_kernel(const pyaclnn_stub_launch *launch) {
    const adamw_params *p = launch->params;
    if (!tv_launch_views_ok(launch)) return;
    const pyaclnn_stub_tensor *in = launch->inputs;
    int64_t n = pyaclnn_stub_numel(&in[0]);
    int k_max = p->amsgrad ? 4 : 3;
    float *buf[5] = {NULL, NULL, NULL, NULL, NULL};
    double *step = tv_load_double(&in[5]);
    int ok = step != NULL;
    for (int k = 0; k < 5 && ok; k++)
        if (k < k_max || k == 4) ok = (buf[k] = tv_load_float(&in[k])) != NULL;
    if (ok) {
        float t = (float)step[0] + 1.0f;
        for (int64_t i = 0; i < n; i++) {
            float x[4] = {buf[0][i], buf[1][i], buf[2][i], p->amsgrad ? buf[3][i] : 0.0f};
            (p->soc950 ? adamw_950 : adamw_a2)(p, t, x, buf[4][i]);
            for (int k = 0; k < k_max; k++) buf[k][i] = x[k];
        }
        for (int k = 0; k < k_max; k++) {
            if (p->bf16_away && launch->outputs[k].dtype == ACL_BF16) round_bf16_away(buf[k], n);
            tv_store_float(&launch->outputs[k], buf[k]);
        }
    } else {
        tv_fail_oom(launch);
    }
    free(step);
    for (int k = 0; k < 5; k++) free(buf[k]);
}

/* not_null_adamw varRef mRef vRef maxGradNorm grad step amsgrad: the tensors non-NULL in the op_api's order,
 * maxGradNorm only with amsgrad. */
aclnnStatus opc_not_null_adamw(op_call *c, const op_step *s) {
    op_step tensors = *s;   /* the standard not_null over the six tensors, maxGradNorm left out without amsgrad */
    tensors.labels = NULL;
    tensors.np = 0;
    for (int k = 0; k < 6; k++)
        if (k != 3 || op_argument(c, s, 6)->i) tensors.p[tensors.np++] = s->p[k];
    return opc_not_null(c, &tensors);
}

/* adamw_plan varRef mRef vRef maxGradNorm grad step lr beta1 beta2 weightDecay eps amsgrad maximize: step of
 * one element; an empty varRef ends phase 1 (nothing to do); the kernel's parameters, and whether the op_api
 * runs the kernel on the tensors' own dtypes (all one dtype, or FLOAT var/m/v with a FLOAT16/BF16 grad and
 * maxGradNorm of grad's dtype: its IsNeedDtypeCast false). */
aclnnStatus opc_adamw_plan(op_call *c, const op_step *s) {
    int64_t numel = pyaclnn_stub_numel(op_tensor(c, s, 5));
    if (numel != 1)
        return op_invalidf(c->api, "Numel of step must be 1, but got %lld.", (long long)numel);
    if (pyaclnn_stub_numel(op_tensor(c, s, 0)) == 0) {
        c->nothing = 1;
        return ACLNN_SUCCESS;
    }
    adamw_params *p = op_params(c, sizeof *p);
    float *f[5] = {&p->lr, &p->beta1, &p->beta2, &p->wd, &p->eps};
    for (int k = 0; k < 5; k++) *f[k] = (float)op_argument(c, s, 6 + k)->d;
    p->amsgrad = op_argument(c, s, 11)->i != 0;
    p->maximize = op_argument(c, s, 12)->i != 0;
    p->soc950 = ew_soc_is_950();
    aclDataType var = op_tensor(c, s, 0)->dtype, grad = op_tensor(c, s, 4)->dtype;
    const pyaclnn_stub_tensor *mx = op_tensor(c, s, 3);
    int same = op_tensor(c, s, 1)->dtype == var && op_tensor(c, s, 2)->dtype == var && grad == var &&
               (!mx->present || mx->dtype == var);
    int mixed = var == ACL_FLOAT && op_tensor(c, s, 1)->dtype == ACL_FLOAT && op_tensor(c, s, 2)->dtype == ACL_FLOAT &&
                (grad == ACL_FLOAT16 || grad == ACL_BF16) && (!mx->present || mx->dtype == grad);
    p->bf16_away = !p->soc950 && (same || mixed);
    return ACLNN_SUCCESS;
}
