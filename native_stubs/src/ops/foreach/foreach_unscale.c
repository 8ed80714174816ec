/*
 * ForeachNonFiniteCheckAndUnscale (foreach_unscale.toml): the kernel of op_kernel/
 * foreach_non_finite_check_and_unscale_n_d.h per tensor: each element cast to fp32, foundInf set to 1.0 when a
 * ReduceMax / ReduceMin of the tensor is Inf or NaN (any element non-finite), every element multiplied by
 * invScale in fp32 (Muls) and cast back (RINT); foundInf is left as it is otherwise.
 *   fu_plan scaledGrads foundInf invScale   the tiling's checks (1 to 256 tensors, of one dtype, none empty;
 *                                           foundInf and invScale of one element: 561002), the executor
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"

#define FU_MAX_TENSORS 256

typedef struct {
    uint64_t count;
} fu_params;

static void fu_kernel(const pyaclnn_stub_launch *launch) {
    const fu_params *p = launch->params;
    uint64_t n = p->count;
    if (!tv_launch_views_ok(launch)) return;
    float *inv = tv_load_float(&launch->inputs[n + 1]);
    if (inv == NULL) {
        tv_fail_oom(launch);
        return;
    }
    int found = 0;
    for (uint64_t j = 0; j < n; j++) {
        const pyaclnn_stub_tensor *t = &launch->inputs[j];
        int64_t m = pyaclnn_stub_numel(t);
        float *v = tv_load_float(t);
        if (v == NULL) {
            free(inv);
            tv_fail_oom(launch);
            return;
        }
        for (int64_t i = 0; i < m; i++) {
            if (!isfinite(v[i])) found = 1;
            v[i] = v[i] * inv[0];
        }
        tv_store_float(&launch->outputs[j], v);
        free(v);
    }
    if (found) {
        float one = 1.0f;
        tv_store_float(&launch->outputs[n], &one);
    }
    free(inv);
}

static aclnnStatus failed(aclnnStatus status, const char *api, const char *what) {
    pyaclnn_stub_report(status, api, "%s", what);
    return status;
}
#define tiling_failed(api, what) failed(ACLNN_ERR_INNER_TILING_ERROR, api, what)

/* fu_plan scaledGrads foundInf invScale (after fe_gen_dtypes' snapshots of scaledGrads). */
aclnnStatus opc_fu_plan(op_call *c, const op_step *s) {
    const char *api = c->api;
    uint64_t n = c->lists[s->p[0]].n;
    const pyaclnn_stub_tensor *g = c->lists[s->p[0]].t;
    char msg[160];
    if (n == 0 || n > FU_MAX_TENSORS) {
        snprintf(msg, sizeof msg, "scaledGrads has %llu tensors, it must have 1 to %d", (unsigned long long)n,
                 FU_MAX_TENSORS);
        return tiling_failed(api, msg);
    }
    for (uint64_t j = 0; j < n; j++) {
        if (g[j].dtype != g[0].dtype) {
            snprintf(msg, sizeof msg, "The dtypes of all tensors in tensor list scaledGrads must be the same: "
                     "scaledGrads[%llu] differs from scaledGrads[0]", (unsigned long long)j);
            return tiling_failed(api, msg);
        }
        if (pyaclnn_stub_numel(&g[j]) == 0) {
            snprintf(msg, sizeof msg, "The shape size of scaledGrads[%llu] is 0, it must be greater than 0",
                     (unsigned long long)j);
            return tiling_failed(api, msg);
        }
    }
    for (int k = 1; k <= 2; k++)
        if (pyaclnn_stub_numel(op_tensor(c, s, k)) != 1) {
            snprintf(msg, sizeof msg, "%s has %lld elements, it must have 1", op_pname(c, s, k),
                     (long long)pyaclnn_stub_numel(op_tensor(c, s, k)));
            return tiling_failed(api, msg);
        }
    /* one block: the parameters, then the executor's tensors */
    fu_params *p = op_scratch(c, sizeof *p + sizeof(pyaclnn_stub_tensor) * (size_t)(2 * n + 3));
    if (p == NULL) return failed(ACLNN_ERR_INNER_CREATE_EXECUTOR, api, "out of host memory");
    pyaclnn_stub_tensor *in = (pyaclnn_stub_tensor *)(p + 1);
    p->count = n;
    /* inputs: the grads, foundInf, invScale; outputs: the grads, foundInf */
    for (uint64_t j = 0; j < n; j++) in[j] = in[n + 2 + j] = g[j];
    in[n] = in[2 * n + 2] = *op_tensor(c, s, 1);
    in[n + 1] = *op_tensor(c, s, 2);
    c->made = pyaclnn_stub_executor_new_snapshots(c->def->name, fu_kernel, p, sizeof *p, in, (size_t)n + 2,
                                                  in + n + 2, (size_t)n + 1, 0);
    if (c->made == NULL) {
        pyaclnn_stub_report(ACLNN_ERR_INNER_CREATE_EXECUTOR, api, "could not create the executor (out of memory)");
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    }
    return ACLNN_SUCCESS;
}
