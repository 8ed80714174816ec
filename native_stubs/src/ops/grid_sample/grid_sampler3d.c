/*
 * The checks of aclnnGridSampler3D and aclnnGridSampler3DBackward that differ from the 2-D ones (hicann/ops-cv
 * image/grid_sample/op_api/aclnn_grid_sampler3d.cpp, image/grid_sampler3_d_grad/op_host/op_api/
 * aclnn_grid_sampler3d_backward.cpp); the kernels and the other steps are grid_sampler.c's. Definitions:
 * grid_sampler3d.toml. The messages keep the op_apis' line continuations (a space and 12 more).
 */
#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"

/* grid_sampler.c: inputGrad / gridGrad shapes, then the outputMask's length */
aclnnStatus gs_grads_and_mask(op_call *c, const op_step *s, const char *api);

#define invalid(c, ...) op_invalidf((c)->api, __VA_ARGS__)
#define GAP "             "      /* the continuation: the space before the backslash and the next line's indent */

static const char *shape_of(const pyaclnn_stub_tensor *t, char *b, size_t n) { return tv_shape_text(t->shape, t->ndim, b, n); }

/* gs3_format input out (CheckFormatValid): storage formats NCDHW, NDHWC or ND. */
aclnnStatus opc_gs3_format(op_call *c, const op_step *s) {
    static const char *const who[2] = {"Input", "Out"};
    for (int k = 0; k < 2; k++) {
        aclFormat f = op_tensor(c, s, k)->format;
        char b[24];
        if (f != ACL_FORMAT_NCDHW && f != ACL_FORMAT_NDHWC && f != ACL_FORMAT_ND)
            return invalid(c, "%s format only supports [NCDHW, NDHWC, ND] format, but format is [%s]", who[k],
                           op_format_name(f, b));
    }
    return ACLNN_SUCCESS;
}

/* gs3_attrs interpolationMode paddingMode (CheckAttrValid): paddingMode in [0, 2] first, interpolationMode in
 * [0, 1]. */
aclnnStatus opc_gs3_attrs(op_call *c, const op_step *s) {
    int64_t im = op_argument(c, s, 0)->i, pm = op_argument(c, s, 1)->i;
    if (pm < 0 || pm > 2) return invalid(c, "paddingMode %lld should be in range [0, 2].", (long long)pm);
    if (im < 0 || im > 1) return invalid(c, "interpolationMode %lld should be in range [0, 1].", (long long)im);
    return ACLNN_SUCCESS;
}

/* gs3_shape input grid out (the forward's CheckShape after the ranks): batches, channels, the grid's volume and
 * out's, non-empty H and W, grid's last dim 3. */
aclnnStatus opc_gs3_shape(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0), *g = op_tensor(c, s, 1), *y = op_tensor(c, s, 2);
    char a[200], b[200], d[200];
    shape_of(x, a, sizeof a), shape_of(g, b, sizeof b), shape_of(y, d, sizeof d);
    if (x->shape[0] != g->shape[0] || x->shape[0] != y->shape[0])
        return invalid(c, "expect input grid and out to have same batch size, but got input with shape [%s]" GAP "grid "
                       "with shape [%s] and out with shape [%s]", a, b, d);
    if (x->shape[1] != y->shape[1])
        return invalid(c, "expect input and out to have same channel size, but got input with shape [%s]" GAP "and out "
                       "with shape [%s]", a, d);
    if (g->shape[1] != y->shape[2] || g->shape[2] != y->shape[3] || g->shape[3] != y->shape[4])
        return invalid(c, "expect grid and out to have same D H W size, but got grid with shape [%s] and out with shape "
                       "[%s]", b, d);
    if (x->shape[3] == 0 || x->shape[4] == 0)
        return invalid(c, "expect input to have non-empty spatial dimensions, but got input with shape [%s]", a);
    if (g->shape[4] != 3)
        return invalid(c, "expect grid to have size 3 in last dimension, but got grid with shape [%s]", b);
    return ACLNN_SUCCESS;
}

/* gs3b_shape gradOutput input grid inputGrad gridGrad outputMask (the backward's CheckShape after the ranks, then
 * CheckOutputMask). */
aclnnStatus opc_gs3b_shape(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *go = op_tensor(c, s, 0), *x = op_tensor(c, s, 1), *g = op_tensor(c, s, 2);
    char a[200], b[200], d[200];
    shape_of(x, a, sizeof a), shape_of(g, b, sizeof b), shape_of(go, d, sizeof d);
    if (x->shape[0] != g->shape[0] || x->shape[0] != go->shape[0])
        return invalid(c, "expect input grid and gradOutput to have same batch size, but got input with" GAP "shape [%s] "
                       "grid with shape [%s] and gradOutput with shape [%s]", a, b, d);
    if (x->shape[1] != go->shape[1])
        return invalid(c, "expect input and gradOutput to have same channel size, but got input with shape" GAP "[%s] and "
                       "gradOutput with shape [%s]", a, d);
    if (g->shape[1] != go->shape[2] || g->shape[2] != go->shape[3] || g->shape[3] != go->shape[4])
        return invalid(c, "expect grid and gradOutput to have same D, H and W size, but got grid with shape" GAP "[%s] "
                       "and gradOutput with shape [%s]", b, d);
    if (g->shape[4] != 3)
        return invalid(c, "expect grid to have size 3 in last dimension, but got grid with shape [%s]", b);
    return gs_grads_and_mask(c, s, "aclnnGridSampler3DBackward");
}
