/*
 * aclnnRange's own check and aclnnLogSpace (hicann/ops-math math/range, math/logspace op_api). Range runs
 * conversion/arange.c's plan and kernel (the vendor's L0 Arange with isClosed). LogSpace: the L0 Linspace in the
 * compute dtype (result's; FLOAT when start / end mix FLOAT16 and BF16), then InplacePow(base, linspace) in it:
 * Linspace's fp32 steps, each value rounded to the compute dtype; Pow in fp32 (libm powf through double, the
 * hardware's Pow is not published) rounded to the compute dtype, then the Cast to result's. Definitions:
 * range_space.toml.
 */
#include <math.h>
#include <stdlib.h>

#include "kernels/dtype.h"
#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"

#define invalid(c, ...) op_invalidf((c)->api, __VA_ARGS__)

/* range_dims out (CheckParamsLogic): out is not 0-d. */
aclnnStatus opc_range_dims(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *out = op_tensor(c, s, 0);
    if (out->ndim == 0) return invalid(c, "Expected out a 1d tensor, but got %lld.", (long long)out->ndim);
    return ACLNN_SUCCESS;
}

typedef struct {
    int64_t steps;
    float start, end;            /* the scalars in the compute dtype, widened */
    float base;                  /* base as fp32, then in the compute dtype */
    aclDataType compute;
} logspace_params;

static float in_dtype(double v, aclDataType dt) { return (float)ew_cast((ew_value){.f = v}, ACL_DOUBLE, dt).f; }

/* logspace_plan start end steps base result: result FLOAT / FLOAT16 / BF16 (no message: the op_api's
 * CheckDtypeValid logs none), steps >= 0, result of `steps` elements; nothing for 0 steps. */
aclnnStatus opc_logspace_plan(op_call *c, const op_step *s) {
    const op_scalar *a = op_scalar_of(c, s, 0), *b = op_scalar_of(c, s, 1);
    const pyaclnn_stub_tensor *r = op_tensor(c, s, 4);
    int64_t steps = op_argument(c, s, 2)->i;
    if (r->dtype != ACL_FLOAT && r->dtype != ACL_FLOAT16 && r->dtype != ACL_BF16) {
        char d[24];
        return invalid(c, "result dtype %s is not in [FLOAT, FLOAT16, BF16].", op_dtype_name(r->dtype, d));
    }
    if (steps < 0) return invalid(c, "LogSpace requires non-negative steps, given steps is %lld", (long long)steps);
    /* The op_api's last step, ViewCopy of the [steps] result into `result`, fails (nullptr: 561103) when
     * their element counts differ; nothing is checked for 0 steps, which returns first. */
    if (steps > 0 && pyaclnn_stub_numel(r) != steps)
        return op_failf(c->api, ACLNN_ERR_INNER_NULLPTR,
                        "result has %lld elements: the ViewCopy of the %lld steps into it fails.",
                        (long long)pyaclnn_stub_numel(r), (long long)steps);
    logspace_params *p = op_params(c, sizeof(logspace_params));
    p->steps = steps, p->compute = r->dtype;
    if ((a->dtype == ACL_FLOAT16 && b->dtype == ACL_BF16) || (a->dtype == ACL_BF16 && b->dtype == ACL_FLOAT16))
        p->compute = ACL_FLOAT;
    p->start = in_dtype(ew_value_to_double(a->v, a->dtype), p->compute);
    p->end = in_dtype(ew_value_to_double(b->v, b->dtype), p->compute);
    p->base = in_dtype((float)op_argument(c, s, 3)->d, p->compute);
    if (steps == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}

/* output: result */
void logspace_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const logspace_params *p = launch->params;
    int64_t n = p->steps, half = n / 2;
    double *v = tv_alloc(n, sizeof(double));
    if (v == NULL) {
        tv_fail_oom(launch);
        return;
    }
    float step = n > 1 ? (p->end - p->start) / (float)(n - 1) : 0.0f;
    for (int64_t i = 0; i < n; i++) {
        float t = (float)(i < half ? i : i - (n - 1)) * step;             /* Linspace's fp32 steps */
        float x = n == 1 ? p->start : in_dtype((double)((i < half ? p->start : p->end) + t), p->compute);
        v[i] = in_dtype((double)(float)pow((double)p->base, (double)x), p->compute);
    }
    tv_store_double(&launch->outputs[0], v);
    free(v);
}
