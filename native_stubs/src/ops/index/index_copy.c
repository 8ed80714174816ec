/*
 * The steps of aclnnIndexCopy / aclnnInplaceIndexCopy (index_copy.toml); the kernel is the gather engine's
 * idx_dim_scatter_kernel (IDX_SET, source as the walk).
 */
#include <stddef.h>

#include "kernels/gather.h"
#include "opbase/checks.h"
#include "ops_decls.h"

static int64_t numel_of(const pyaclnn_stub_tensor *t) { return pyaclnn_stub_numel(t); }

/* ic_shapes self dim index source (CheckShape after the ranks, then CheckElementNum). */
aclnnStatus opc_ic_shapes(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0), *ix = op_tensor(c, s, 2), *src = op_tensor(c, s, 3);
    int64_t dim = op_argument(c, s, 1)->i, n = self->ndim;
    char a[200], b[200];
    if (src->ndim == 0 && numel_of(ix) != 1)
        return op_invalidf(c->api, "When source is scalar,index should have one element,but got %lld.",
                           (long long)numel_of(ix));
    if (n != src->ndim && n != 0 && src->ndim != 0)
        return op_invalidf(c->api, "When source and self are not scalars,their dimensionality must match,but got self "
                           "dimensionality %s,source dimensionlity %s", tv_shape_text(self->shape, n, a, sizeof a),
                           tv_shape_text(src->shape, src->ndim, b, sizeof b));
    if (n == 0 && dim != 0 && dim != -1)
        return op_invalidf(c->api, "Dimension out of range (expected to be in range of [-1, 0], but got %lld)",
                           (long long)dim);
    if (n > 0 && (dim < -n || dim >= n))
        return op_invalidf(c->api, "Dimension out of range (expected to be in range of [-%lld, %lld],but got %lld)",
                           (long long)n, (long long)(n - 1), (long long)dim);
    int64_t d0 = dim < 0 ? dim + n : dim;
    for (int64_t d = 0; d < n; d++)
        if (d != d0 && (d >= src->ndim || self->shape[d] != src->shape[d]))
            return op_invalidf(c->api, "Self and source must have same slice shapes");
    int64_t sd = dim < 0 ? dim + src->ndim : dim;
    if (src->ndim != 0 && numel_of(ix) != src->shape[sd])
        return op_invalidf(c->api, "The element num of index (%lld) should be equal to source size in dimension %lld, "
                           "actual is %lld", (long long)numel_of(ix), (long long)sd, (long long)src->shape[sd]);
    return ACLNN_SUCCESS;
}

/* ic_format self out: one storage format. */
aclnnStatus opc_ic_format(op_call *c, const op_step *s) {
    aclFormat a = op_tensor(c, s, 0)->format, b = op_tensor(c, s, 1)->format;
    if (a == b) return ACLNN_SUCCESS;
    char x[24], y[24];
    return op_invalidf(c->api, "Format of input and output should be same. self [%s], out [%s].", op_format_name(a, x),
                       op_format_name(b, y));
}

/* ic_plan self dim index source: an empty self or index launches nothing (the out-of-place form's out is then
 * not written, as the op_api returns before its copy); else the walk over source (0-d: [1]) along dim. */
aclnnStatus opc_ic_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0), *ix = op_tensor(c, s, 2), *src = op_tensor(c, s, 3);
    if (numel_of(self) == 0 || numel_of(ix) == 0) {
        c->nothing = 1;
        return ACLNN_SUCCESS;
    }
    idx_dim_plan *p = op_params(c, offsetof(idx_dim_plan, list));
    int64_t dim = op_argument(c, s, 1)->i, n = self->ndim == 0 ? 1 : self->ndim;
    p->dim = (int)(self->ndim == 0 ? 0 : dim < 0 ? dim + n : dim);
    p->ndim = (int)n;
    for (int64_t d = 0; d < n; d++)            /* a 0-d source: one element at index[0], self's other coordinates 0 */
        p->walk[d] = src->ndim == 0 ? 1 : src->shape[d];
    p->reduce = IDX_SET;
    p->src = IDX_SRC_TENSOR;
    return ACLNN_SUCCESS;
}
