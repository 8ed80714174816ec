/*
 * aclnnUnique2 (unique.toml; hicann/ops-nn index/unique_consecutive): self flattened and sorted ascending
 * (NaNs last), runs of equal values collapsed (== : -0.0 and 0.0 are one value, each NaN its own) into
 * valueOut's first elements, their lengths into countsOut (returnCounts), and for every element of self the
 * index of its value (returnInverse) into inverseOut. valueOut's real shape [count] is reported to phase 2
 * (a data-dependent shape, as NonzeroV2's). Exact.
 */
#include <stdlib.h>

#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"

typedef struct {
    int inverse, counts;
} unique_plan;

enum { KEY_FLOAT, KEY_UINT64, KEY_INT };

typedef struct {
    ew_value v;
    int64_t at;   /* row-major position in self */
    int key;      /* how v compares (qsort's comparison has no context argument) */
} unique_item;

/* Ascending, NaNs last; ties by position (a stable order). */
static int item_cmp(const void *pa, const void *pb) {
    const unique_item *a = pa, *b = pb;
    int c;
    if (a->key == KEY_FLOAT) {
        int na = a->v.f != a->v.f, nb = b->v.f != b->v.f;
        c = na != nb ? na - nb : na ? 0 : (a->v.f > b->v.f) - (a->v.f < b->v.f);
    } else if (a->key == KEY_UINT64) {
        c = ((uint64_t)a->v.i > (uint64_t)b->v.i) - ((uint64_t)a->v.i < (uint64_t)b->v.i);
    } else {
        c = (a->v.i > b->v.i) - (a->v.i < b->v.i);
    }
    return c != 0 ? c : (a->at > b->at) - (a->at < b->at);
}

static int same_value(ew_value a, ew_value b, aclDataType dt) {
    return ew_repr_of(dt) == EW_REPR_F ? a.f == b.f : a.i == b.i;
}

/* Element k of a row-major result into view t (cast from dtype `from`). */
static void put(const pyaclnn_stub_tensor *t, int64_t k, ew_value v, aclDataType from) {
    ew_store(tv_at(t, tv_offset(t, k)), t->dtype, ew_cast(v, from, t->dtype));
}

void unique_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const unique_plan *p = launch->params;
    const pyaclnn_stub_tensor *self = &launch->inputs[0], *values = &launch->outputs[0];
    const pyaclnn_stub_tensor *inverse = &launch->outputs[1], *counts = &launch->outputs[2];
    int64_t n = pyaclnn_stub_numel(self);
    unique_item *items = tv_alloc(n, sizeof *items);
    if (items == NULL) {
        tv_fail_oom(launch);
        return;
    }
    tv_iter it;
    tv_iter_init(&it, self);
    int key = ew_repr_of(self->dtype) == EW_REPR_F ? KEY_FLOAT : self->dtype == ACL_UINT64 ? KEY_UINT64 : KEY_INT;
    for (int64_t i = 0; i < n; i++, tv_iter_next(&it))
        items[i] = (unique_item){ew_load(tv_at(self, it.off), self->dtype), i, key};
    qsort(items, (size_t)n, sizeof *items, item_cmp);
    int64_t count = 0;
    for (int64_t i = 0; i < n; i++) count += i == 0 || !same_value(items[i].v, items[i - 1].v, self->dtype);
    if (count > pyaclnn_stub_numel(values) || (p->counts && count > pyaclnn_stub_numel(counts))) {
        pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "%s: valueOut / countsOut hold fewer than the %lld "
                               "distinct values", launch->op_name, (long long)count);
        free(items);
        return;
    }
    for (int64_t i = 0, u = -1, run = 0; i < n; i++) {
        if (i == 0 || !same_value(items[i].v, items[i - 1].v, self->dtype)) {
            if (u >= 0 && p->counts) put(counts, u, (ew_value){.f = (double)run, .i = run}, ACL_INT64);
            put(values, ++u, items[i].v, self->dtype);
            run = 0;
        }
        run++;
        if (p->inverse) put(inverse, items[i].at, (ew_value){.f = (double)u, .i = u}, ACL_INT64);
        if (i == n - 1 && p->counts) put(counts, u, (ew_value){.f = (double)run, .i = run}, ACL_INT64);
    }
    if (launch->out_shape != NULL) {
        launch->out_shape->ndim = 1;
        launch->out_shape->dims[0] = count;
    }
    free(items);
}

/* unique_check self returnInverse returnCounts valueOut inverseOut countsOut: aclnn_unique2.cpp's checks after
 * self's dtype, in order -- inverseOut and countsOut INT64, self at most 8 dims, inverseOut of self's shape
 * (returnInverse or returnCounts), countsOut of valueOut's (returnCounts); the plan. */
aclnnStatus opc_unique_check(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0), *values = op_tensor(c, s, 3);
    int ri = op_argument(c, s, 1)->i != 0, rc = op_argument(c, s, 2)->i != 0;
    char a[200], b[200];
    for (int k = 4; k <= 5; k++)
        if (op_tensor(c, s, k)->dtype != ACL_INT64)
            return op_invalidf(c->api, "Tensor %s expected dtype is INT64 but found %s.", op_pname(c, s, k),
                               op_dtype_name(op_tensor(c, s, k)->dtype, a));
    if (self->ndim > 8) return op_invalidf(c->api, "The self tensor cannot be larger than 8 dimensions.");
    for (int k = 4; k <= 5; k++) {
        const pyaclnn_stub_tensor *x = k == 4 ? self : values, *y = op_tensor(c, s, k);
        int same = x->ndim == y->ndim;
        for (int64_t d = 0; same && d < x->ndim; d++) same = x->shape[d] == y->shape[d];
        if (!same && (k == 4 ? ri || rc : rc))
            return op_invalidf(c->api, "Expected tensor for %s to have same size as tensor for %s, but %s does not "
                               "equal %s.", op_pname(c, s, k == 4 ? 0 : 3), op_pname(c, s, k),
                               tv_shape_text(x->shape, x->ndim, a, sizeof a), tv_shape_text(y->shape, y->ndim, b, sizeof b));
    }
    unique_plan *p = op_params(c, sizeof *p);
    p->inverse = ri;
    p->counts = rc;
    return ACLNN_SUCCESS;
}

/* unique1_check self returnInverse inverseOut: aclnn_unique.cpp's checks after self's dtype -- inverseOut INT64,
 * self at most 8 dims, inverseOut of self's shape (returnInverse); the plan (no counts). */
aclnnStatus opc_unique1_check(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0), *inv = op_tensor(c, s, 2);
    int ri = op_argument(c, s, 1)->i != 0;
    char a[200], b[200];
    if (inv->dtype != ACL_INT64)
        return op_invalidf(c->api, "Tensor %s expected dtype is INT64 but found %s.", op_pname(c, s, 2),
                           op_dtype_name(inv->dtype, a));
    if (self->ndim > 8) return op_invalidf(c->api, "The self tensor cannot be larger than 8 dimensions.");
    int same = self->ndim == inv->ndim;
    for (int64_t d = 0; same && d < self->ndim; d++) same = self->shape[d] == inv->shape[d];
    if (ri && !same)
        return op_invalidf(c->api, "Expected tensor for %s to have same size as tensor for %s, but %s does not equal %s.",
                           op_pname(c, s, 0), op_pname(c, s, 2), tv_shape_text(self->shape, self->ndim, a, sizeof a),
                           tv_shape_text(inv->shape, inv->ndim, b, sizeof b));
    unique_plan *p = op_params(c, sizeof *p);
    p->inverse = ri;
    p->counts = 0;
    return ACLNN_SUCCESS;
}
