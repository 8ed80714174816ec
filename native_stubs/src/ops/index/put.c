/*
 * aclnnInplacePut (put.toml): selfRef's elements in row-major order addressed by the flattened index; an index
 * outside [0, numel) is a device fault (the NPU's ScatterNd kernels take no negative index; torch_npu passes the
 * index as given), found before anything is written.
 */
#include <stdlib.h>

#include "kernels/dtype.h"
#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"

typedef struct {
    int accumulate;
} put_params;

void put_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const put_params *p = launch->params;
    const pyaclnn_stub_tensor *self = &launch->outputs[0], *ix = &launch->inputs[1], *src = &launch->inputs[2];
    int64_t n = pyaclnn_stub_numel(self), k = pyaclnn_stub_numel(ix);
    int64_t *where = tv_alloc(k, sizeof(int64_t));
    if (where == NULL) {
        tv_fail_oom(launch);
        return;
    }
    tv_iter it;
    tv_iter_init(&it, ix);
    for (int64_t i = 0; i < k; i++, tv_iter_next(&it)) {
        int64_t v = ew_load(tv_at(ix, it.off), ix->dtype).i;
        if (v < 0 || v >= n) {
            pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "%s: index %lld is out of bounds for %lld elements",
                                   launch->op_name, (long long)v, (long long)n);
            free(where);
            return;
        }
        where[i] = tv_offset(self, v);
    }
    aclDataType dt = self->dtype;
    aclDataType acc = dt == ACL_BOOL ? ACL_BOOL : !ew_is_float(dt) ? ACL_INT64 : dt == ACL_DOUBLE ? ACL_DOUBLE : ACL_FLOAT;
    tv_iter_init(&it, src);
    for (int64_t i = 0; i < k; i++, tv_iter_next(&it)) {
        unsigned char *dst = tv_at(self, where[i]);
        ew_value v = ew_load(tv_at(src, it.off), dt);
        if (p->accumulate) {
            ew_value a = ew_cast(ew_load(dst, dt), dt, acc), b = ew_cast(v, dt, acc);
            if (acc == ACL_BOOL) a.i = a.i || b.i;
            else if (acc == ACL_INT64) a.i = (int64_t)((uint64_t)a.i + (uint64_t)b.i);
            else if (acc == ACL_DOUBLE) a.f = a.f + b.f;
            else a.f = (float)((float)a.f + (float)b.f);
            v = ew_cast(a, acc, dt);
        }
        ew_store(dst, dt, v);
    }
    free(where);
}

/* put_dtype self accumulate LIST "plain" | "accumulate": self's dtype in LIST when accumulate is false / true. */
aclnnStatus opc_put_dtype(op_call *c, const op_step *s) {
    int acc = op_argument(c, s, 1)->i != 0;
    if (acc != (s->text[0] == 'a')) return ACLNN_SUCCESS;
    op_step one = *s;
    one.np = 1;
    return opc_dtype_supported(c, &one);
}

/* put_same self source: source has self's dtype. */
aclnnStatus opc_put_same(op_call *c, const op_step *s) {
    aclDataType a = op_tensor(c, s, 0)->dtype, b = op_tensor(c, s, 1)->dtype;
    if (a == b) return ACLNN_SUCCESS;
    char x[24], y[24];
    return op_invalidf(c->api, "source dtype %s should be in same with self dtype %s.", op_dtype_name(b, y),
                       op_dtype_name(a, x));
}

/* put_shapes self index source accumulate: as many index as source elements; an empty index does nothing; a
 * non-empty index into an empty self is refused. */
aclnnStatus opc_put_shapes(op_call *c, const op_step *s) {
    int64_t ni = pyaclnn_stub_numel(op_tensor(c, s, 1)), ns = pyaclnn_stub_numel(op_tensor(c, s, 2));
    if (ni != ns)
        return op_invalidf(c->api, "Expect source and index to have the same number of elements,but the source has %lld,"
                           "the index has %lld.", (long long)ns, (long long)ni);
    if (ni == 0) {
        c->nothing = c->done = 1;
        return ACLNN_SUCCESS;
    }
    if (pyaclnn_stub_numel(op_tensor(c, s, 0)) == 0) return op_invalidf(c->api, "Can not put elements into an empty tensor");
    put_params *p = op_params(c, sizeof(put_params));
    p->accumulate = op_argument(c, s, 3)->i != 0;
    return ACLNN_SUCCESS;
}
