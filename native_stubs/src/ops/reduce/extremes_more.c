/*
 * The steps of extremes_more.toml: AminmaxDim's check of the reduced dim's size, and the vendor's early return
 * of an empty self (aclnn_aminmax_dim.cpp, aclnn_aminmax_all.cpp: before out's shape is checked).
 */
#include "opbase/checks.h"
#include "ops_decls.h"

/* aminmax_dim_size self dim: 161002 when self's dim (in range) has size 0 ("Expected reduction dim ... to have
 * non-zero size"). */
aclnnStatus opc_aminmax_dim_size(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0);
    int64_t dim = op_argument(c, s, 1)->i;
    if (self->ndim > 0 && self->shape[dim < 0 ? dim + self->ndim : dim] == 0)
        return op_invalidf(c->api, "Expected reduction dim %lld to have non-zero size, but check failed.",
                           (long long)dim);
    return ACLNN_SUCCESS;
}

/* red_empty_return self: an empty self ends phase 1 with success and nothing to launch. */
aclnnStatus opc_red_empty_return(op_call *c, const op_step *s) {
    if (pyaclnn_stub_numel(op_tensor(c, s, 0)) == 0) c->nothing = c->done = 1;
    return ACLNN_SUCCESS;
}
