/*
 * aclnnChannelShuffle: torch's channel_shuffle on the NPU (hicann/ops-math conversion/transpose op_api): self
 * [N, C, ...] viewed as [N, groups, C / groups, ...], dims 1 and 2 swapped, viewed back: out channel
 * j * groups + g is self's channel g * (C / groups) + j. Elements are moved. Definitions: channel_shuffle.toml.
 */
#include <stdlib.h>
#include <string.h>

#include "kernels/dtype.h"
#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"

typedef struct {
    int64_t n, c, inner, groups;
} cs_params;

/* inputs: self; output: out */
void channel_shuffle_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const cs_params *p = launch->params;
    size_t es = ew_itemsize(launch->inputs[0].dtype), row = (size_t)p->inner * es;
    unsigned char *x = tv_gather_bytes(&launch->inputs[0]), *y = tv_alloc(p->n * p->c * p->inner, es);
    if (x == NULL || y == NULL) {
        tv_fail_oom(launch);
    } else {
        int64_t cpg = p->c / p->groups;
        for (int64_t b = 0; b < p->n; b++)
            for (int64_t g = 0; g < p->groups; g++)
                for (int64_t j = 0; j < cpg; j++)
                    memcpy(y + (size_t)(b * p->c + j * p->groups + g) * row, x + (size_t)(b * p->c + g * cpg + j) * row,
                           row);
        tv_scatter_bytes(&launch->outputs[0], y);
    }
    free(x), free(y);
}

#define invalid(c, ...) op_invalidf((c)->api, __VA_ARGS__)

/* cs_groups self groups (CheckAttrValid): groups > 0 dividing self's dim 1. */
aclnnStatus opc_cs_groups(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0);
    int64_t g = op_argument(c, s, 1)->i, ch = x->ndim > 1 ? x->shape[1] : 0;
    if (g <= 0)
        return invalid(c, "Number of groups to divide channels in must be positive. Value of groups: %lld.", (long long)g);
    if (ch % g != 0)
        return invalid(c, "Number of channels must be divisible by groups.Got %lld channels and %lld groups.",
                       (long long)ch, (long long)g);
    return ACLNN_SUCCESS;
}

/* cs_plan self groups out: nothing when self or out is empty, else the geometry. */
aclnnStatus opc_cs_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0);
    if (pyaclnn_stub_numel(x) == 0 || pyaclnn_stub_numel(op_tensor(c, s, 2)) == 0) {
        c->nothing = c->done = 1;
        return ACLNN_SUCCESS;
    }
    cs_params *p = op_params(c, sizeof(cs_params));
    p->n = x->shape[0], p->c = x->shape[1], p->inner = tv_dims_product(x->shape, 2, x->ndim);
    p->groups = op_argument(c, s, 1)->i;
    return ACLNN_SUCCESS;
}
