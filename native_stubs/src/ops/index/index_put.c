/*
 * The kernel of aclnnIndexPutImpl (hicann/ops-nn index/index_put_v2/op_api/aclnn_index_put_impl.cpp; its
 * definition: index.toml, its steps: index.c): selfRef[indices] = values, or += with accumulate (torch's
 * index_put_; the backward of x[idx]). The indexed positions follow the gather engine (kernels/gather.h);
 * values broadcast to the indexed result's shape.
 * Fidelity: without accumulate, bytes are moved (class a; with repeated positions the last write wins,
 * which torch leaves undefined). With accumulate each addition is done in fp32 (integers: int64) and
 * rounded to selfRef's dtype, in index order; the NPU's order of atomic adds on repeated positions is not
 * published, so repeated positions in float dtypes are class c.
 */
#include <stdlib.h>
#include <string.h>

#include "kernels/gather.h"
#include "ops_decls.h"

void index_put_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const idx_plan *p = launch->params;
    const pyaclnn_stub_tensor *self = &launch->outputs[0], *values = &launch->inputs[0];
    pyaclnn_stub_tensor tensors[1 + IDX_MAX_SLOTS], idx[IDX_MAX_SLOTS];
    tensors[0] = *self;
    for (size_t i = 1; i < launch->n_inputs && i <= IDX_MAX_SLOTS; i++) tensors[i] = launch->inputs[i];
    idx_slot_views(p, tensors, idx);
    int64_t n = 1;   /* fits in int64: phase 1 checked (index_put_plan) */
    for (int d = 0; d < p->out_ndim; d++) n *= p->out_shape[d];
    /* Every target offset first (a bad index faults before anything is written), and the values. */
    int64_t *offs = tv_alloc(n, sizeof(int64_t));
    unsigned char *vals = tv_gather_bytes(values);
    if (offs == NULL || vals == NULL) {
        free(offs);
        free(vals);
        tv_fail_oom(launch);
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        if (!idx_self_offset(p, self, idx, i, &offs[i])) {
            free(offs);
            free(vals);
            return;
        }
    }
    size_t isz = ew_itemsize(self->dtype);
    aclDataType dt = self->dtype, acc = ew_is_float(dt) ? (dt == ACL_DOUBLE ? ACL_DOUBLE : ACL_FLOAT) : ACL_INT64;
    for (int64_t i = 0; i < n; i++) {
        /* values element broadcast to out position i (right-aligned, size-1 dims repeat) */
        int64_t rem = i, vi = 0, vstride = 1;
        for (int d = p->out_ndim - 1, vd = (int)values->ndim - 1; d >= 0; d--, vd--) {
            int64_t o = rem % p->out_shape[d];
            rem /= p->out_shape[d];
            if (vd < 0) continue;
            if (values->shape[vd] != 1) vi += o * vstride;
            vstride *= values->shape[vd];
        }
        const unsigned char *src = vals + vi * (int64_t)isz;
        unsigned char *dst = tv_at(self, offs[i]);
        if (!p->accumulate) {
            memcpy(dst, src, isz);
            continue;
        }
        if (dt == ACL_BOOL) {
            *dst = (unsigned char)(*dst || *src);
            continue;
        }
        ew_value a = ew_cast(ew_load(dst, dt), dt, acc), b = ew_cast(ew_load(src, dt), dt, acc);
        ew_value r;
        if (acc == ACL_INT64) r = (ew_value){0, (int64_t)((uint64_t)a.i + (uint64_t)b.i)};
        else if (acc == ACL_FLOAT) r = (ew_value){(float)(a.f + b.f), 0};
        else r = (ew_value){a.f + b.f, 0};
        ew_store(dst, dt, ew_cast(r, acc, dt));
    }
    free(offs);
    free(vals);
}
