/*
 * aclnnDequantBias (hicann/ops-nn quant/dequant_bias: no op_api, the aclnn function is the generated wrapper of
 * op_host/dequant_bias_def.cpp; tiling dequant_bias_tiling.cpp; kernels op_kernel/dequant_bias_impl.h (Atlas A2 / A3)
 * and op_kernel/arch35/dequant_bias_kernel.h (Ascend 950), which take the same steps). Definition: dequant_bias.toml.
 *
 * Per element of x [M, N] (int32): an INT32 bias is added in int32 (wrapping) first; then f = fp32(x) (CAST_RINT),
 * f = f * weightScale[n] (bf16 widened exactly), f = f * activateScale[m] when given, f = f + bias[n] for a float
 * bias (fp16 / bf16 widened), y = Cast(f) with CAST_RINT to FLOAT16 / BFLOAT16: every step an fp32 operation, so the
 * result is bit-exact (class b).
 */
#include <stdlib.h>
#include <string.h>

#include "kernels/view.h"
#include "numerics/numerics.h"
#include "opbase/checks.h"
#include "ops_decls.h"

typedef struct {
    int64_t m, n;
    int has_as, bias_int, bias_float;
} db_params;

static int64_t db_numel(const pyaclnn_stub_tensor *t) {
    int64_t n = 1;
    for (int64_t i = 0; i < t->ndim; i++) n *= t->shape[i];
    return n;
}

#define db_reject(c, ...) op_failf((c)->api, ACLNN_ERR_INNER_TILING_ERROR, __VA_ARGS__)

/* db_plan x weightScale activateScale bias outputDtype out: the tiling's checks in its order (Atlas A2 / A3's
 * DequantBiasTiling; the Ascend 950 tiling checks no shape: the emulator applies the same ones there, as the kernel
 * would read past a shorter scale or bias), then the kernel's parameters. */
aclnnStatus opc_db_plan(op_call *c, const op_step *s) {
    if (c->nothing) return ACLNN_SUCCESS;
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0), *ws = op_tensor(c, s, 1), *as = op_tensor(c, s, 2),
                              *b = op_tensor(c, s, 3), *y = op_tensor(c, s, 5);
    int64_t od = op_argument(c, s, 4)->i;
    if (od != 1 && od != 27) return db_reject(c, "DequantBias: Attr outputDtype should be 1 or 27.");
    if (x->ndim != 2) return db_reject(c, "DequantBias: The dim number of x should be 2.");
    if (ws->ndim != 1) return db_reject(c, "DequantBias: The dim number of weightScale should be 1.");
    if (as->present && as->ndim != 1) return db_reject(c, "DequantBias: The dim number of activateScale should be 1.");
    if (b->present && b->ndim != 1) return db_reject(c, "DequantBias: The dim number of bias should be 1.");
    if (y->ndim != 2) return db_reject(c, "DequantBias: The dim number of y should be 2.");
    if (ws->shape[0] != x->shape[1]) return db_reject(c, "DequantBias: dim 1 of x and weightScale should be same.");
    int has_as = as->present && db_numel(as) > 0, has_b = b->present && db_numel(b) > 0;
    if (has_as && as->shape[0] != x->shape[0])
        return db_reject(c, "DequantBias: dim 0 of x and activateScale %lld and %lld should be same.",
                         (long long)as->shape[0], (long long)x->shape[0]);
    if (has_b && b->shape[0] != x->shape[1])
        return db_reject(c, "DequantBias: dim 1 of x %lld and dim 0 of bias %lld should be same.",
                         (long long)b->shape[0], (long long)x->shape[1]);
    if (x->shape[0] != y->shape[0]) return db_reject(c, "DequantBias: dim 0 of input and output should be same.");
    if (x->shape[1] != y->shape[1]) return db_reject(c, "DequantBias: dim 1 of input and output should be same.");
    db_params *p = op_params(c, sizeof *p);
    p->m = x->shape[0];
    p->n = x->shape[1];
    p->has_as = has_as;
    p->bias_int = has_b && b->dtype == ACL_INT32;
    p->bias_float = has_b && b->dtype != ACL_INT32;
    return ACLNN_SUCCESS;
}

void dequant_bias_kernel(const pyaclnn_stub_launch *launch) {
    const db_params *p = launch->params;
    if (!tv_launch_views_ok(launch)) return;
    int64_t M = p->m, N = p->n;
    int32_t *x = (int32_t *)tv_gather_bytes(&launch->inputs[0]);
    float *ws = tv_load_float(&launch->inputs[1]);
    float *as = p->has_as ? tv_load_float(&launch->inputs[2]) : NULL;
    int32_t *bi = p->bias_int ? (int32_t *)tv_gather_bytes(&launch->inputs[3]) : NULL;
    float *bf = p->bias_float ? tv_load_float(&launch->inputs[3]) : NULL;
    float *y = tv_alloc(M * N, sizeof(float));
    if (!x || !ws || (p->has_as && !as) || (p->bias_int && !bi) || (p->bias_float && !bf) || !y) {
        tv_fail_oom(launch);
    } else {
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                int32_t v = x[i * N + j];
                if (bi) v = (int32_t)((uint32_t)v + (uint32_t)bi[j]);
                float f = (float)v;   /* int32 -> fp32, round to nearest even */
                f = f * ws[j];
                if (as) f = f * as[i];
                if (bf) f = f + bf[j];
                y[i * N + j] = f;
            }
        tv_store_float(&launch->outputs[0], y);   /* CAST_RINT */
    }
    free(x), free(ws), free(as), free(bi), free(bf), free(y);
}
