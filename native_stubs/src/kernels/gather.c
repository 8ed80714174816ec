#include "opbase/checks.h"
#include "kernels/gather.h"

#include <stdlib.h>
#include <string.h>

void idx_slot_views(const idx_plan *p, const pyaclnn_stub_tensor *tensors, pyaclnn_stub_tensor *idx) {
    for (int i = 0; i < p->k; i++) {
        if (p->input_of[i] <= 0) {
            memset(&idx[i], 0, sizeof idx[i]);
            idx[i].present = 1;
            idx[i].dtype = ACL_INT64;
            idx[i].ndim = 1;
            continue;
        }
        idx[i] = tensors[p->input_of[i]];
        if (p->as_1d && idx[i].ndim == 0) {
            idx[i].ndim = 1;
            idx[i].shape[0] = 1;
            idx[i].strides[0] = 1;
        }
    }
}

aclnnStatus idx_plan_make(const char *api, const pyaclnn_stub_tensor *tensors, idx_plan *p) {
    const pyaclnn_stub_tensor *self = &tensors[0];
    pyaclnn_stub_tensor idx[IDX_MAX_SLOTS];
    int k = p->k;
    if (k > IDX_MAX_SLOTS) k = IDX_MAX_SLOTS + 1;
    else idx_slot_views(p, tensors, idx);
    p->bndim = 0;
    int64_t srank = self->ndim == 0 ? 1 : self->ndim;
    if (k > srank || k > IDX_MAX_SLOTS) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "too many indices for tensor of dimension %lld (got %d)",
                            (long long)self->ndim, k);
        return ACLNN_ERR_PARAM_INVALID;
    }
    p->first = -1;
    int ndef = 0;
    for (int i = 0; i < k; i++) {
        p->defined[i] = pyaclnn_stub_numel(&idx[i]) != 0;
        if (!p->defined[i]) continue;
        if (p->first < 0) p->first = i;
        p->last = i;
        ndef++;
        /* broadcast idx[i] into bshape */
        int64_t n = p->bndim > idx[i].ndim ? p->bndim : idx[i].ndim;
        int64_t nb[PYACLNN_STUB_MAX_DIMS];
        for (int64_t d = 0; d < n; d++) {
            int64_t da = d - (n - p->bndim), db = d - (n - idx[i].ndim);
            int64_t sa = da >= 0 ? p->bshape[da] : 1, sb = db >= 0 ? idx[i].shape[db] : 1;
            if (sa != sb && sa != 1 && sb != 1) {
                char t[200];
                pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "shape mismatch: indices[%d] of shape %s cannot be "
                                    "broadcast with the indices before it", i,
                                    tv_shape_text(idx[i].shape, idx[i].ndim, t, sizeof t));
                return ACLNN_ERR_PARAM_INVALID;
            }
            nb[d] = sa == 1 ? sb : sa;
        }
        memcpy(p->bshape, nb, sizeof(int64_t) * (size_t)n);
        p->bndim = (int)n;
    }
    if (ndef == 0) {   /* nothing indexed: the result is self */
        p->adjacent = 1;
        p->first = 0;
        p->last = -1;
    } else {
        p->adjacent = p->last - p->first + 1 == ndef;
    }
    int64_t rank = p->bndim;   /* the result's: the broadcast index dims and self's dims not indexed */
    for (int64_t d = 0; d < self->ndim; d++)
        if (p->adjacent ? d < p->first || d > p->last : d >= k || !p->defined[d]) rank++;
    if (rank > PYACLNN_STUB_MAX_DIMS) {   /* (indices of up to 25 dims: IndexPutImpl bounds only self's rank) */
        char t[200];
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "the indexing result would have %lld dimensions (indices "
                            "broadcast to %s), more than the %d a tensor can have", (long long)rank,
                            tv_shape_text(p->bshape, p->bndim, t, sizeof t), PYACLNN_STUB_MAX_DIMS);
        return ACLNN_ERR_PARAM_INVALID;
    }
    int o = 0;
    if (p->adjacent) {
        for (int d = 0; d < p->first; d++) p->out_shape[o++] = self->shape[d];
        for (int d = 0; d < p->bndim; d++) p->out_shape[o++] = p->bshape[d];
        for (int64_t d = p->last + 1; d < self->ndim; d++) p->out_shape[o++] = self->shape[d];
    } else {
        for (int d = 0; d < p->bndim; d++) p->out_shape[o++] = p->bshape[d];
        for (int64_t d = 0; d < self->ndim; d++)
            if (d >= k || !p->defined[d]) p->out_shape[o++] = self->shape[d];
    }
    p->out_ndim = o;
    return ACLNN_SUCCESS;
}

int idx_self_offset(const idx_plan *p, const pyaclnn_stub_tensor *self, const pyaclnn_stub_tensor *idx, int64_t lin,
                    int64_t *off) {
    int64_t o[PYACLNN_STUB_MAX_DIMS];
    for (int d = p->out_ndim - 1; d >= 0; d--) {
        o[d] = lin % p->out_shape[d];
        lin /= p->out_shape[d];
    }
    const int64_t *b;           /* position in the broadcast index shape */
    int nd = 0;                 /* next output dim for non-indexed self dims */
    int64_t s_off = self->offset;
    if (p->adjacent) {
        b = o + p->first;
        for (int d = 0; d < p->first; d++) s_off += o[d] * self->strides[d];
        nd = p->first + p->bndim;
        for (int64_t d = p->last + 1; d < self->ndim; d++) s_off += o[nd++] * self->strides[d];
    } else {
        b = o;
        nd = p->bndim;
        for (int64_t d = 0; d < self->ndim; d++)
            if (d >= p->k || !p->defined[d]) s_off += o[nd++] * self->strides[d];
    }
    for (int i = 0; i < p->k; i++) {
        if (!p->defined[i]) continue;
        const pyaclnn_stub_tensor *t = &idx[i];
        int64_t e = t->offset;
        int shift = p->bndim - (int)t->ndim;
        for (int64_t d = 0; d < t->ndim; d++)
            if (t->shape[d] != 1) e += b[d + shift] * t->strides[d];
        int64_t v = t->dtype == ACL_INT32 ? *(const int32_t *)tv_at(t, e) : *(const int64_t *)tv_at(t, e);
        int64_t size = self->ndim == 0 ? 1 : self->shape[i];
        if (v < -size || v >= size) {
            pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "index %lld is out of bounds for dimension %d with "
                                   "size %lld", (long long)v, i, (long long)size);
            return 0;
        }
        if (v < 0) v += size;
        if (self->ndim > 0) s_off += v * self->strides[i];
    }
    *off = s_off;
    return 1;
}

/* Checks every index before anything is written (a fault leaves the output untouched). */
static int indices_in_range(const idx_plan *p, const pyaclnn_stub_tensor *self, const pyaclnn_stub_tensor *idx) {
    for (int i = 0; i < p->k; i++) {
        if (!p->defined[i]) continue;
        int64_t n = pyaclnn_stub_numel(&idx[i]);
        int64_t size = self->ndim == 0 ? 1 : self->shape[i];
        tv_iter it;
        tv_iter_init(&it, &idx[i]);
        for (int64_t j = 0; j < n; j++, tv_iter_next(&it)) {
            int64_t v = idx[i].dtype == ACL_INT32 ? *(const int32_t *)tv_at(&idx[i], it.off)
                                                  : *(const int64_t *)tv_at(&idx[i], it.off);
            if (v < -size || v >= size) {
                pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "index %lld is out of bounds for dimension %d "
                                       "with size %lld", (long long)v, i, (long long)size);
                return 0;
            }
        }
    }
    return 1;
}

void idx_gather_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const idx_plan *p = launch->params;
    const pyaclnn_stub_tensor *self = &launch->inputs[0], *out = &launch->outputs[0];
    pyaclnn_stub_tensor idx[IDX_MAX_SLOTS];
    idx_slot_views(p, launch->inputs, idx);
    int64_t n = pyaclnn_stub_numel(out), want = 1;
    int over = 0;
    for (int d = 0; d < p->out_ndim; d++) over |= __builtin_mul_overflow(want, p->out_shape[d], &want);
    if (over || want != n) {   /* phase 1 checks out's shape: a plan that does not describe out is never walked */
        pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "%s: out has %lld elements, the indexing result %lld",
                               launch->op_name, (long long)n, (long long)want);
        return;
    }
    if (!indices_in_range(p, self, idx)) return;
    size_t isz = ew_itemsize(out->dtype);
    unsigned char *buf = tv_alloc(n, isz);   /* gathered first: out may alias self */
    if (buf == NULL) {
        tv_fail_oom(launch);
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t off;
        if (!idx_self_offset(p, self, idx, i, &off)) {
            free(buf);
            return;
        }
        memcpy(buf + i * (int64_t)isz, tv_at(self, off), isz);
    }
    tv_scatter_bytes(out, buf);
    free(buf);
}
