/*
 * Tensors made from sizes and indices (creation.toml): aclnnEye (hicann/ops-math math/eye) writes the
 * n x m identity into out; aclnnOneHot (math/one_hot) onValue where an index matches its position along the new
 * axis, offValue elsewhere (an index outside [0, numClasses) matches none, as the kernel's range test).
 */
#include <stdlib.h>
#include <string.h>

#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"

/* The bytes of `v` (an int64) in dtype dt at p. */
static void store_int(unsigned char *p, aclDataType dt, int64_t v) {
    ew_store(p, dt, ew_cast((ew_value){.f = (double)v, .i = v}, ACL_INT64, dt));
}

void eye_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const pyaclnn_stub_tensor *out = &launch->outputs[0];
    int64_t n = out->shape[0], m = out->shape[1];
    size_t size = ew_itemsize(out->dtype);
    unsigned char *bytes = tv_alloc(n * m, size);
    if (bytes == NULL) {
        tv_fail_oom(launch);
        return;
    }
    for (int64_t k = 0; k < n * m; k++) store_int(bytes + (size_t)k * size, out->dtype, k / m == k % m);
    tv_scatter_bytes(out, bytes);
    free(bytes);
}

/* eye_shape n m out: out is 2-D, n and m not negative, out of shape (n, m) -- aclnn_eye.cpp's order and messages;
 * n or m zero launches nothing. */
aclnnStatus opc_eye_shape(op_call *c, const op_step *s) {
    int64_t n = op_argument(c, s, 0)->i, m = op_argument(c, s, 1)->i;
    const pyaclnn_stub_tensor *out = op_tensor(c, s, 2);
    char t[200];
    if (out->ndim != 2)
        return op_invalidf(c->api, "Expected out to be 2-D tensor, but the dimension of out is %lld.", (long long)out->ndim);
    if (n < 0) return op_invalidf(c->api, "n must be greater or equal to 0, got %lld", (long long)n);
    if (m < 0) return op_invalidf(c->api, "m must be greater or equal to 0, got %lld", (long long)m);
    if (out->shape[0] != n || out->shape[1] != m)
        return op_invalidf(c->api, "Expected out shape to be (%lld, %lld), but got %s.", (long long)n, (long long)m,
                           tv_shape_text(out->shape, out->ndim, t, sizeof t));
    if (n == 0 || m == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}

typedef struct {
    int64_t outer, depth, inner;   /* out viewed as [outer, depth, inner]; self as [outer, inner] */
} one_hot_plan;

/* The first element's bytes of t (zeros when t is empty) into v. */
static void first_bytes(const pyaclnn_stub_tensor *t, unsigned char v[16]) {
    memset(v, 0, 16);
    if (pyaclnn_stub_numel(t) > 0) memcpy(v, tv_at(t, t->offset), ew_itemsize(t->dtype));
}

void one_hot_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const one_hot_plan *p = launch->params;
    const pyaclnn_stub_tensor *out = &launch->outputs[0];
    size_t size = ew_itemsize(out->dtype);
    unsigned char on[16], off[16];
    first_bytes(&launch->inputs[1], on);
    first_bytes(&launch->inputs[2], off);
    double *idx = tv_load_double(&launch->inputs[0]);
    unsigned char *bytes = tv_alloc(p->outer * p->depth * p->inner, size);
    if (idx == NULL || bytes == NULL) {
        tv_fail_oom(launch);
        goto done;
    }
    for (int64_t o = 0; o < p->outer; o++)
        for (int64_t j = 0; j < p->depth; j++)
            for (int64_t i = 0; i < p->inner; i++)
                memcpy(bytes + (size_t)((o * p->depth + j) * p->inner + i) * size,
                       idx[o * p->inner + i] == (double)j ? on : off, size);
    tv_scatter_bytes(out, bytes);
done:
    free(idx);
    free(bytes);
}

/* one_hot_rank self: at most 7 dims on the regbase Ascend 950 (its SIMT kernel), 8 elsewhere (OP_CHECK_MAX_DIM). */
aclnnStatus opc_one_hot_rank(op_call *c, const op_step *s) {
    int64_t most = ew_soc_is_950() ? 7 : 8;
    if (op_tensor(c, s, 0)->ndim <= most) return ACLNN_SUCCESS;
    return op_invalidf(c->api, "The %s tensor cannot be larger than %lld dimensions.", op_pname(c, s, 0), (long long)most);
}

/* one_hot_shape self numClasses axis out: numClasses (> 0 for an empty self, else >= 0), axis in [-1, self's rank],
 * out of self's shape with numClasses inserted at axis -- aclnn_one_hot.cpp's order and messages; the plan. An
 * empty self or numClasses 0 launches nothing. */
aclnnStatus opc_one_hot_shape(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0), *out = op_tensor(c, s, 3);
    int64_t depth = op_argument(c, s, 1)->i, axis = op_argument(c, s, 2)->i, rank = self->ndim;
    int empty = pyaclnn_stub_numel(self) == 0;
    if (empty && depth <= 0)
        return op_invalidf(c->api, "NumClasses should be greater than 0, but got %lld.", (long long)depth);
    if (depth < 0)
        return op_invalidf(c->api, "NumClasses should be greater and equal than 0, but got %lld.", (long long)depth);
    if (axis < -1) return op_invalidf(c->api, "The axis should be greater and equal than -1, but got %lld.", (long long)axis);
    if (axis > rank)
        return op_invalidf(c->api, "The axis should be lower and equal than %lld, but got %lld.", (long long)rank,
                           (long long)axis);
    char t[200];
    if (out->ndim != rank + 1)
        return op_invalidf(c->api, "Expected %lld dimension input, but got %s with sizes %s.", (long long)(rank + 1),
                           op_pname(c, s, 3), tv_shape_text(out->shape, out->ndim, t, sizeof t));
    int64_t d = axis < 0 ? rank : axis, want[PYACLNN_STUB_MAX_DIMS + 1];
    for (int64_t k = 0; k <= rank; k++) want[k] = k < d ? self->shape[k] : k == d ? depth : self->shape[k - 1];
    aclnnStatus rc = op_expected_size(c->api, op_pname(c, s, 3), out, want, rank + 1);
    if (rc) return rc;
    one_hot_plan *p = op_params(c, sizeof *p);
    p->outer = tv_dims_product(self->shape, 0, d);
    p->depth = depth;
    p->inner = tv_dims_product(self->shape, d, rank);
    if (empty || depth == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}
