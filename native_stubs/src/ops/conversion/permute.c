/*
 * aclnnPermute (hicann/ops-math conversion/transpose/op_api/aclnn_permute.cpp; definition: permute.toml): out =
 * self with its dims reordered (out dim i is self dim dims[i]); any strides. Bytes are moved: bit-exact (class a).
 * Validation in the vendor's order:
 *   1. self, dims, out non-NULL                                                       -> 161001
 *   2. self and out dtypes in the list (without the complex dtypes), out == self      -> 161002
 *   3. out has self's rank, dims has self's rank, no repeated value, at most 8 dims   -> 161002
 *   4. each dim in range, no repeat after wrapping                                    -> 161002
 *   (emulator) out has the permuted shape                                             -> 161002
 */
#include <stdlib.h>

#include "opbase/checks.h"
#include "kernels/view.h"
#include "ops_decls.h"

typedef struct {
    int64_t perm[PYACLNN_STUB_MAX_DIMS];
} permute_plan;

void permute_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const permute_plan *p = launch->params;
    pyaclnn_stub_tensor v = launch->inputs[0];
    const pyaclnn_stub_tensor *self = &launch->inputs[0];
    for (int64_t i = 0; i < self->ndim; i++) {
        v.shape[i] = self->shape[p->perm[i]];
        v.strides[i] = self->strides[p->perm[i]];
    }
    unsigned char *buf = tv_gather_bytes(&v);   /* whole input first: out may overlap self */
    if (buf == NULL) {
        tv_fail_oom(launch);
        return;
    }
    tv_scatter_bytes(&launch->outputs[0], buf);
    free(buf);
}

/* permute_dims self dims out: out has self's rank, dims has self's rank, no value of dims repeats. */
aclnnStatus opc_permute_dims(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0), *out = op_tensor(c, s, 2);
    const int64_t *dv = c->ints[s->p[1]].v;
    uint64_t nd = c->ints[s->p[1]].n;
    char a[200], b[200];
    if (self->ndim != out->ndim) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Permute does not support self shape: %s, output shape: %s",
                            tv_shape_text(self->shape, self->ndim, a, sizeof a),
                            tv_shape_text(out->shape, out->ndim, b, sizeof b));
        return ACLNN_ERR_PARAM_INVALID;
    }
    if ((int64_t)nd != self->ndim) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "The dimension of the dims:%lld and the dimension of the "
                            "input shape:%lld are inconsistent", (long long)nd, (long long)self->ndim);
        return ACLNN_ERR_PARAM_INVALID;
    }
    for (uint64_t i = 0; i < nd; i++)
        for (uint64_t j = 0; j < i; j++)
            if (dv[i] == dv[j]) {
                pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Invalid dims and it contains duplicate elements");
                return ACLNN_ERR_PARAM_INVALID;
            }
    return ACLNN_SUCCESS;
}

/* permute_plan self dims: each dim in range, no repeat after wrapping; the permuted shape is the result. */
aclnnStatus opc_permute_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0);
    const int64_t *dv = c->ints[s->p[1]].v;
    uint64_t nd = c->ints[s->p[1]].n;
    permute_plan *plan = op_params(c, sizeof *plan);
    int seen[PYACLNN_STUB_MAX_DIMS] = {0};
    for (uint64_t i = 0; i < nd; i++) {
        int64_t r = self->ndim, lo = -r < r - 1 ? -r : r - 1, hi = -r > r - 1 ? -r : r - 1;
        if (dv[i] > hi || dv[i] < lo) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "The values of dims should be in range [%lld, %lld].",
                                (long long)lo, (long long)hi);
            return ACLNN_ERR_PARAM_INVALID;
        }
        int64_t d = dv[i] < 0 ? dv[i] + r : dv[i];
        if (seen[d]++) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Each dimension in perm should not be repeated.");
            return ACLNN_ERR_PARAM_INVALID;
        }
        plan->perm[i] = d;
    }
    c->ndim = self->ndim;
    for (int64_t i = 0; i < self->ndim; i++) c->shape[i] = self->shape[plan->perm[i]];
    return ACLNN_SUCCESS;
}
