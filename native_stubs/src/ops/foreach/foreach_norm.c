/*
 * ForeachNorm's steps and kernel (foreach_norm.toml): per tensor of x one p-norm, computed as the vendor
 * kernel does in fp32: each element cast to fp32, |x| (p = 1) or x * x (p = 2) or |x| for the max (p = +inf),
 * summed (in 64-lane blocks, then the blocks' partial sums pairwise: the vector unit's ReduceSum), sqrt for p = 2, then
 * one cast (RINT) to out's dtype. The list steps fe_* are foreach.c's.
 *   fn_scalar scalar          FLOAT, DOUBLE or INT64                             -> 161002
 *   fn_plan x out scalar      at most 8 dims, out tensors of one element          -> 561002; the executor
 */
#include <math.h>
#include <stdlib.h>

#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"

enum { FN_ONE = 1, FN_TWO = 2, FN_INF = 3 };

typedef struct {
    int mode;
    uint64_t count;
} fn_params;

#define FN_LANES 64

/* the norm of n fp32 values in the kernel's steps: each 64-lane block's |x| or x * x summed (or its max |x|)
 * into v[block], then the block partials pairwise (a reduction tree). v is overwritten. */
static float fn_norm(float *v, int64_t n, int mode) {
    int64_t blocks = 0;
    for (int64_t b = 0; b < n; b += FN_LANES, blocks++) {
        float part = 0.0f;
        for (int64_t i = b; i < n && i < b + FN_LANES; i++) {
            float a = fabsf(v[i]);
            if (mode == FN_INF) part = (a > part || isnan(a)) ? a : part;
            else part += mode == FN_TWO ? v[i] * v[i] : a;
        }
        v[blocks] = part;
    }
    for (int64_t width = blocks; width > 1; width = (width + 1) / 2)
        for (int64_t i = 0; i < width / 2; i++) {
            float a = v[i], b = v[width - 1 - i];
            v[i] = mode == FN_INF ? ((b > a || isnan(b)) ? b : a) : a + b;
        }
    float total = blocks > 0 ? v[0] : 0.0f;
    return mode == FN_TWO ? sqrtf(total) : total;
}

static void fn_kernel(const pyaclnn_stub_launch *launch) {
    const fn_params *p = launch->params;
    if (!tv_launch_views_ok(launch)) return;
    for (uint64_t j = 0; j < p->count; j++) {
        const pyaclnn_stub_tensor *x = &launch->inputs[j];
        int64_t n = pyaclnn_stub_numel(x);
        float *v = n > 0 ? tv_load_float(x) : NULL;
        if (n > 0 && v == NULL) {
            tv_fail_oom(launch);
            return;
        }
        float r = fn_norm(v, n, p->mode);
        free(v);
        tv_store_float(&launch->outputs[j], &r);
    }
}

/* fn_scalar scalar: p of dtype FLOAT, DOUBLE or INT64. */
aclnnStatus opc_fn_scalar(op_call *c, const op_step *s) {
    aclDataType d = op_scalar_of(c, s, 0)->dtype;
    if (d == ACL_FLOAT || d == ACL_DOUBLE || d == ACL_INT64) return ACLNN_SUCCESS;
    char b[24];
    return op_invalidf(c->api, "%s dtype %s should be in dtype support list [FLOAT, DOUBLE, INT64].", op_pname(c, s, 0),
                       op_dtype_name(d, b));
}

/* fn_plan x out scalar: the tiling's checks (at most 8 dims, one element per out tensor: 561002), the mode
 * from p as fp32, the executor over x's tensors into out's (fe_dtypes' snapshots). */
aclnnStatus opc_fn_plan(op_call *c, const op_step *s) {
    const char *api = c->api;
    uint64_t n = c->lists[s->p[0]].n;
    const pyaclnn_stub_tensor *x = c->lists[s->p[0]].t, *out = c->lists[s->p[1]].t;
    for (uint64_t j = 0; j < n; j++) {
        const pyaclnn_stub_tensor *t[2] = {&x[j], &out[j]};
        for (int k = 0; k < 2; k++)
            if (t[k]->ndim > 8) {
                pyaclnn_stub_report(ACLNN_ERR_INNER_TILING_ERROR, api, "%s[%llu] has %d dims, at most 8 are supported",
                                    op_pname(c, s, k), (unsigned long long)j, (int)t[k]->ndim);
                return ACLNN_ERR_INNER_TILING_ERROR;
            }
        if (pyaclnn_stub_numel(&out[j]) != 1) {
            pyaclnn_stub_report(ACLNN_ERR_INNER_TILING_ERROR, api, "%s[%llu] has %lld elements, its shape size must be 1",
                                op_pname(c, s, 1), (unsigned long long)j, (long long)pyaclnn_stub_numel(&out[j]));
            return ACLNN_ERR_INNER_TILING_ERROR;
        }
    }
    const op_scalar *sc = op_scalar_of(c, s, 2);
    float pv = (float)ew_value_to_double(sc->v, sc->dtype);
    fn_params *p = op_scratch(c, sizeof *p);
    pyaclnn_stub_tensor *tensors = op_scratch(c, sizeof *tensors * (size_t)(2 * n + 1));
    if (p == NULL || tensors == NULL) {
        pyaclnn_stub_report(ACLNN_ERR_INNER_CREATE_EXECUTOR, api, "out of host memory");
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    }
    p->count = n;
    p->mode = isinf(pv) && pv > 0 && ew_soc_is_950() ? FN_INF : (pv > -2147483648.0f && pv < 2147483648.0f && (int)pv == 1)
                                                                    ? FN_ONE : FN_TWO;
    for (uint64_t j = 0; j < n; j++) {
        tensors[j] = x[j];
        tensors[n + j] = out[j];
    }
    c->made = pyaclnn_stub_executor_new_snapshots(c->def->name, n > 0 ? fn_kernel : NULL, p, sizeof *p, tensors,
                                                  (size_t)n, tensors + n, (size_t)n, 0);
    if (c->made == NULL) {
        pyaclnn_stub_report(ACLNN_ERR_INNER_CREATE_EXECUTOR, api, "could not create the executor (out of memory)");
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    }
    return ACLNN_SUCCESS;
}
