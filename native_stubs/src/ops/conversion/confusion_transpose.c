/*
 * aclnnConfusionTranspose (confusion_transpose.toml): a reshape fused with a transpose, moving bytes. The input is
 * read in row-major order as a tensor of dims D (x's shape when transpose_first, else the attribute shape); the
 * output element at index o of the permuted dims (D[perm[0]], ..., D[perm[n-1]]) is the input's at s with
 * s[perm[i]] = o[i]; the results fill out in its row-major order (the tiling lets out hold more elements than x:
 * the rest is not written).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"

typedef struct {
    int n;
    int64_t dims[PYACLNN_STUB_MAX_DIMS];   /* D */
    int64_t perm[PYACLNN_STUB_MAX_DIMS];
} ct_params;

static aclnnStatus ct_reject(op_call *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static aclnnStatus ct_reject(op_call *c, const char *fmt, ...) {
    char why[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return op_failf(c->api, ACLNN_ERR_INNER_NULLPTR, "ConfusionTransposeD tiling failed: %s", why);
}

/* ct_plan x perm shape transpose_first out: the op_api's early return on an empty x, then ParametersVerifyingDimNd, ParametersVerifyingPerm and
 * ParametersVerifyingProdAndPositive of the arch35 tiling, in order. */
aclnnStatus opc_ct_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0), *out = op_tensor(c, s, 4);
    const int64_t *perm = c->ints[s->p[1]].v, *shape = c->ints[s->p[2]].v;
    int64_t np = (int64_t)c->ints[s->p[1]].n, ns = (int64_t)c->ints[s->p[2]].n;
    int tf = op_argument(c, s, 3)->i != 0;
    char t[200];
    if (pyaclnn_stub_numel(x) == 0) {
        c->nothing = c->done = 1;
        return ACLNN_SUCCESS;
    }
    const struct { const char *name; int64_t n; } ranks[3] = {{"x", x->ndim}, {"y", out->ndim}, {"shape", ns}};
    for (int k = 0; k < 3; k++)
        if (ranks[k].n < 1 || ranks[k].n > 8)
            return ct_reject(c, "the dim num of %s is %lld, expected between 1 and 8", ranks[k].name, (long long)ranks[k].n);
    if (tf && np != x->ndim)
        return ct_reject(c, "x and perm have %lld and %lld dims: The shape dimensions of perm and x must be the same, "
                         "when input x need to be transposed first", (long long)x->ndim, (long long)np);
    if (!tf && np != ns)
        return ct_reject(c, "perm and shape have %lld and %lld dims: The shape dimensions of parameter perm and "
                         "parameter shape must be the same, when input x does not need to be transposed first",
                         (long long)np, (long long)ns);
    int64_t seen = 0;
    for (int64_t i = 0; i < np; i++)
        if (perm[i] >= 0 && perm[i] < np) seen |= (int64_t)1 << perm[i];
    if (seen != ((int64_t)1 << np) - 1)
        return ct_reject(c, "perm %s is invalid, expected a permutation of 0,1, ..., dim - 1",
                         op_ints_text(perm, (uint64_t)np, t, sizeof t));
    int64_t px = 1, py = 1, ps = 1;
    for (int64_t i = 0; i < x->ndim; i++) px *= x->shape[i];
    for (int64_t i = 0; i < out->ndim; i++) {
        if (out->shape[i] <= 0)
            return ct_reject(c, "y shape %s is invalid: All axes of output y must be positive numbers",
                             tv_shape_text(out->shape, out->ndim, t, sizeof t));
        py *= out->shape[i];
    }
    for (int64_t i = 0; i < ns; i++) {
        if (shape[i] <= 0)
            return ct_reject(c, "shape %s is invalid: All axes of parameter shape must be positive numbers",
                             op_ints_text(shape, (uint64_t)ns, t, sizeof t));
        ps *= shape[i];
    }
    if (px > py || px != ps)
        return ct_reject(c, "the shape sizes of x, y and shape are %lld, %lld and %lld: The shape sizes of parameter x "
                         "and parameter shape must be the same, and the shape size of x must less than or equal to "
                         "that of y", (long long)px, (long long)py, (long long)ps);
    ct_params *p = op_params(c, sizeof *p);
    p->n = (int)np;
    for (int64_t i = 0; i < np; i++) {
        p->dims[i] = tf ? x->shape[i] : shape[i];
        p->perm[i] = perm[i];
    }
    return ACLNN_SUCCESS;
}

void ct_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const ct_params *p = launch->params;
    const pyaclnn_stub_tensor *x = &launch->inputs[0], *out = &launch->outputs[0];
    size_t item = ew_itemsize(x->dtype);
    int64_t n = pyaclnn_stub_numel(x), st[PYACLNN_STUB_MAX_DIMS], idx[PYACLNN_STUB_MAX_DIMS] = {0};
    unsigned char *src = tv_gather_bytes(x), *dst = tv_alloc(n, item);
    if (src == NULL || dst == NULL) {
        tv_fail_oom(launch);
        free(src);
        free(dst);
        return;
    }
    for (int d = p->n - 1, acc = 1; d >= 0; d--) {   /* D's row-major strides */
        st[d] = acc;
        acc *= (int)p->dims[d];
    }
    for (int64_t o = 0; o < n; o++) {   /* idx: the output multi-index over the dims D[perm[i]] */
        int64_t off = 0;
        for (int i = 0; i < p->n; i++) off += idx[i] * st[p->perm[i]];
        memcpy(dst + o * item, src + off * item, item);
        for (int i = p->n - 1; i >= 0; i--) {
            if (++idx[i] < p->dims[p->perm[i]]) break;
            idx[i] = 0;
        }
    }
    if (pyaclnn_stub_numel(out) == n) {
        tv_scatter_bytes(out, dst);
    } else {   /* the first n elements of out, row-major */
        tv_iter it;
        tv_iter_init(&it, out);
        for (int64_t o = 0; o < n; o++, tv_iter_next(&it)) memcpy(tv_at(out, it.off), dst + o * item, item);
    }
    free(src);
    free(dst);
}
