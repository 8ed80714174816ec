/*
 * The steps of extremes_more.toml and nansum.toml: AminmaxDim's check of the reduced dim's size, the vendor's early
 * return of an empty self (aclnn_aminmax_dim.cpp, aclnn_aminmax_all.cpp: before out's shape is checked), and
 * ReduceNansum's dtype checks (aclnn_reduce_nansum.cpp).
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

/* nansum_dtypes self dtype out LIST: aclnn_reduce_nansum.cpp's CheckDtypeValid and CheckPromoteType -- self, dtype
 * and out in LIST, out of dtype, self castable to out. */
aclnnStatus opc_nansum_dtypes(op_call *c, const op_step *s) {
    size_t n;
    const aclDataType *list = op_list(s->list, &n);
    aclDataType self = op_tensor(c, s, 0)->dtype, dt = (aclDataType)op_argument(c, s, 1)->i, out = op_tensor(c, s, 2)->dtype;
    char b1[24], b2[24], all[256];
    op_step one = *s;
    one.np = 1;
    aclnnStatus rc = opc_dtype_supported(c, &one);
    if (rc) return rc;
    if (!ew_in_list(dt, list, n))
        return op_invalidf(c->api, "type %s should be in dtype support list [%s].", op_dtype_name(dt, b1),
                           ew_dtype_list(list, n, all, sizeof all));
    one.p[0] = s->p[2];
    rc = opc_dtype_supported(c, &one);
    if (rc) return rc;
    if (out != dt)
        return op_invalidf(c->api, "Tensor %s expected dtype is %s but found %s.", op_pname(c, s, 2), op_dtype_name(dt, b1),
                           op_dtype_name(out, b2));
    if (!ew_can_cast(self, out))
        return op_invalidf(c->api, "Result type %s can't be cast to the desired output type %s.", op_dtype_name(self, b1),
                           op_dtype_name(out, b2));
    return ACLNN_SUCCESS;
}
