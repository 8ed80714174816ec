/*
 * Tensors made from sizes and indices (creation.toml): aclnnEye (hicann/ops-math math/eye) writes the
 * n x m identity into out.
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
