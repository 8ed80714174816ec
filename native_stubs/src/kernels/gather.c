#include "opbase/checks.h"
#include "kernels/gather.h"

#include <stddef.h>
#include <stdint.h>
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

static int64_t read_index(const pyaclnn_stub_tensor *t, int64_t off) {
    return t->dtype == ACL_INT32 ? *(const int32_t *)tv_at(t, off) : *(const int64_t *)tv_at(t, off);
}

/* The element offsets of `t` at each position of its dims [0, ndim) in row-major order (an odometer over
 * them); NULL when out of memory. */
static int64_t *outer_offsets(const pyaclnn_stub_tensor *t, int ndim, int64_t *count) {
    int64_t n = tv_dims_product(t->shape, 0, ndim), c[PYACLNN_STUB_MAX_DIMS] = {0};
    int64_t *offs = malloc(sizeof(int64_t) * (size_t)n + 1);
    if (offs == NULL) return NULL;
    for (int64_t i = 0; i < n; i++) {
        int64_t o = t->offset;
        for (int d = 0; d < ndim; d++) o += c[d] * t->strides[d];
        offs[i] = o;
        for (int d = ndim - 1; d >= 0; d--) {
            if (++c[d] < t->shape[d]) break;
            c[d] = 0;
        }
    }
    *count = n;
    return offs;
}

/* The bytes t's elements can occupy: [*lo, *hi). */
static void byte_span(const pyaclnn_stub_tensor *t, uintptr_t *lo, uintptr_t *hi) {
    int64_t a = 0, b = 0;
    for (int64_t d = 0; d < t->ndim; d++) {
        if (t->shape[d] == 0) {
            *lo = *hi = 0;
            return;
        }
        int64_t e = (t->shape[d] - 1) * t->strides[d];
        if (e < 0) a += e;
        else b += e;
    }
    size_t isz = ew_itemsize(t->dtype);
    *lo = (uintptr_t)tv_at(t, t->offset + a);
    *hi = (uintptr_t)tv_at(t, t->offset + b) + isz;
}

static int spans_meet(const pyaclnn_stub_tensor *x, const pyaclnn_stub_tensor *y) {
    uintptr_t xl, xh, yl, yh;
    byte_span(x, &xl, &xh);
    byte_span(y, &yl, &yh);
    return xl < yh && yl < xh;
}

/* out can be written in place of a gathered buffer: contiguous, and apart from what the kernel reads. */
static int writes_apart(const pyaclnn_stub_tensor *out, const pyaclnn_stub_tensor *a, const pyaclnn_stub_tensor *b) {
    return pyaclnn_stub_is_contiguous(out) && !spans_meet(out, a) && (b == NULL || !spans_meet(out, b));
}

/* One index tensor into one dim of a self whose later dims are row-major (IndexSelect, x[idx], Embedding): the
 * indices are read and checked once, then each (outer position, index) pair moves a whole row with memcpy, in
 * the output's row-major order -- the same bytes the element walk moves. 0: the case does not apply (nothing
 * done); 1: done (or a device fault / out-of-memory recorded). */
static int gather_rows(const pyaclnn_stub_launch *launch, const idx_plan *p, const pyaclnn_stub_tensor *self,
                       const pyaclnn_stub_tensor *idx) {
    int ndef = 0, s = -1;
    for (int i = 0; i < p->k; i++)
        if (p->defined[i]) ndef++, s = i;
    if (ndef != 1 || self->ndim == 0 || !p->adjacent || !pyaclnn_stub_dims_contiguous(self, s + 1)) return 0;
    const pyaclnn_stub_tensor *ix = &idx[s];
    int64_t nb = pyaclnn_stub_numel(ix), size = self->shape[s], inner = tv_dims_product(self->shape, s + 1, self->ndim);
    size_t isz = ew_itemsize(self->dtype), row = (size_t)inner * isz;
    const pyaclnn_stub_tensor *out = &launch->outputs[0];
    int direct = out->dtype == self->dtype && writes_apart(out, self, ix);
    int64_t n_outer = 0, *outer = outer_offsets(self, s, &n_outer);
    int64_t *vals = malloc(sizeof(int64_t) * (size_t)nb + 1);
    unsigned char *buf = direct ? NULL : tv_alloc(n_outer * nb * inner, isz);   /* else gathered first */
    if (outer == NULL || vals == NULL || (!direct && buf == NULL)) {
        tv_fail_oom(launch);
        goto done;
    }
    tv_iter it;
    tv_iter_init(&it, ix);
    for (int64_t j = 0; j < nb; j++, tv_iter_next(&it)) {   /* (the broadcast shape is the index's own) */
        int64_t v = read_index(ix, it.off);
        if (v < -size || v >= size) {
            pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "index %lld is out of bounds for dimension %d with "
                                   "size %lld", (long long)v, s, (long long)size);
            goto done;
        }
        vals[j] = (v < 0 ? v + size : v) * self->strides[s];
    }
    unsigned char *dst = direct ? tv_at(out, out->offset) : buf;
    for (int64_t o = 0; o < n_outer; o++)
        for (int64_t j = 0; j < nb; j++, dst += row) memcpy(dst, tv_at(self, outer[o] + vals[j]), row);
    if (!direct) tv_scatter_bytes(out, buf);
done:
    free(outer);
    free(vals);
    free(buf);
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
    if (n && gather_rows(launch, p, self, idx)) return;
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

/* ---- along one dimension (gather.h) ---------------------------------------------------------------- */

/* A 0-d view as shape [1]. */
static pyaclnn_stub_tensor as_1d(const pyaclnn_stub_tensor *t) {
    pyaclnn_stub_tensor v = *t;
    if (v.ndim == 0) {
        v.ndim = 1;
        v.shape[0] = 1;
        v.strides[0] = 1;
    }
    return v;
}

size_t idx_dim_plan_size(const idx_dim_plan *p) {
    return offsetof(idx_dim_plan, list) + sizeof(int64_t) * (size_t)p->n_list;
}

static int64_t walk_numel(const int64_t *shape, int ndim) {
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) n *= shape[d];
    return n;
}

/* Row-major odometer over shape[0..ndim). */
static void walk_next(int64_t *c, const int64_t *shape, int ndim) {
    for (int d = ndim - 1; d >= 0; d--) {
        if (++c[d] < shape[d]) return;
        c[d] = 0;
    }
}

/* self's element offset at walk position c; 0 and a device fault if the index is out of range. */
static int dim_target(const idx_dim_plan *p, const pyaclnn_stub_tensor *self, const pyaclnn_stub_tensor *index,
                      const int64_t *c, int64_t *off) {
    int64_t v;
    if (p->n_list) {
        v = p->list[c[p->dim]];
    } else if (p->per_element) {
        int64_t e = index->offset;
        for (int d = 0; d < p->ndim; d++) e += c[d] * index->strides[d];
        v = read_index(index, e);
    } else {
        v = read_index(index, tv_offset(index, c[p->dim]));
    }
    int64_t size = self->shape[p->dim];
    if (v < -size || v >= size) {
        pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "index %lld is out of bounds for dimension %d with size "
                               "%lld", (long long)v, p->dim, (long long)size);
        return 0;
    }
    if (v < 0) v += size;
    int64_t o = self->offset;
    for (int d = 0; d < p->ndim; d++) o += (d == p->dim ? v : c[d]) * self->strides[d];
    *off = o;
    return 1;
}

void idx_dim_gather_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const idx_dim_plan *p = launch->params;
    pyaclnn_stub_tensor self = as_1d(&launch->inputs[0]), index = as_1d(&launch->inputs[1]);
    int64_t n = walk_numel(p->walk, p->ndim), c[PYACLNN_STUB_MAX_DIMS] = {0};
    size_t isz = ew_itemsize(self.dtype);
    unsigned char *buf = malloc((size_t)n * isz + 1);   /* gathered first: out may alias self */
    if (buf == NULL) {
        tv_fail_oom(launch);
        return;
    }
    for (int64_t i = 0; i < n; i++, walk_next(c, p->walk, p->ndim)) {
        int64_t off;
        if (!dim_target(p, &self, &index, c, &off)) {
            free(buf);
            return;
        }
        memcpy(buf + i * (int64_t)isz, tv_at(&self, off), isz);
    }
    tv_scatter_bytes(&launch->outputs[0], buf);
    free(buf);
}

/* dst (dtype dt) combined with b (dt) by the plan's reduce: ADD / MUL in fp32 (DOUBLE in double, integers in
 * int64, wrapping), b * alpha first when the plan has one, each result rounded to dt. */
static void dim_combine(const idx_dim_plan *p, unsigned char *dst, ew_value b, aclDataType dt) {
    if (p->reduce == IDX_SET) {
        ew_store(dst, dt, b);
        return;
    }
    aclDataType acc = !ew_is_float(dt) ? ACL_INT64 : dt == ACL_DOUBLE ? ACL_DOUBLE : ACL_FLOAT;
    ew_value x = ew_cast(ew_load(dst, dt), dt, acc), y = ew_cast(b, dt, acc), r = {0, 0};
    if (acc == ACL_INT64) {
        uint64_t yy = p->has_alpha ? (uint64_t)y.i * (uint64_t)p->alpha.i : (uint64_t)y.i;
        r.i = (int64_t)(p->reduce == IDX_ADD ? (uint64_t)x.i + yy : (uint64_t)x.i * yy);
    } else {
        double yy = p->has_alpha ? y.f * p->alpha.f : y.f;
        if (acc == ACL_FLOAT) yy = (float)yy;
        r.f = p->reduce == IDX_ADD ? x.f + yy : x.f * yy;
        if (acc == ACL_FLOAT) r.f = (float)r.f;
    }
    ew_store(dst, dt, ew_cast(r, acc, dt));
}

/* A2's IndexFillD: every element x * 1 + 0, the filled ones x * 0 + value (exact: only -0.0 and non-finite
 * values change). */
static void dim_assist(const idx_dim_plan *p, unsigned char *buf, const unsigned char *filled, int64_t n,
                       aclDataType dt) {
    size_t isz = ew_itemsize(dt);
    for (int64_t j = 0; j < n; j++) {
        unsigned char *e = buf + j * (int64_t)isz;
        if (ew_repr_of(dt) != EW_REPR_F) {
            if (filled[j]) ew_store(e, dt, p->value);
            continue;
        }
        double x = ew_load(e, dt).f;
        ew_store(e, dt, (ew_value){filled[j] ? x * 0.0 + p->value.f : x * 1.0 + 0.0, 0});
    }
}

/* IndexCopy's case (plain stores of a source whose dims after `dim` are row-major, at a flattened index): the
 * indices are read and checked first (a fault writes nothing), then each (outer position, index) pair moves a
 * whole row of src with memcpy, in the walk's order (so a repeated index keeps its last row, as the element walk
 * does) -- into out itself when out is self, or contiguous and apart from the inputs (self copied in first),
 * else into a contiguous copy of self stored to out after. 0: the case does not apply (nothing done); 1: done
 * (or a fault / out-of-memory recorded). */
static int scatter_rows(const pyaclnn_stub_launch *launch, const idx_dim_plan *p, const pyaclnn_stub_tensor *self,
                        const pyaclnn_stub_tensor *index, const pyaclnn_stub_tensor *src) {
    int dim = p->dim;
    if (p->reduce != IDX_SET || p->assist || p->src != IDX_SRC_TENSOR || p->per_element || p->n_list ||
        src->dtype != self->dtype || src->ndim != p->ndim || self->ndim != p->ndim || !pyaclnn_stub_dims_contiguous(src, dim + 1))
        return 0;
    for (int d = 0; d < p->ndim; d++)   /* (a 0-d source under an n-d self walks [1, ..., 1]: the element path) */
        if (src->shape[d] != p->walk[d] || (d != dim && self->shape[d] != p->walk[d])) return 0;
    const pyaclnn_stub_tensor *out = &launch->outputs[0];
    int64_t m = p->walk[dim], size = self->shape[dim], inner = tv_dims_product(self->shape, dim + 1, self->ndim);
    int64_t total = pyaclnn_stub_numel(self);
    size_t isz = ew_itemsize(self->dtype), row = (size_t)inner * isz;
    int contiguous_self = pyaclnn_stub_is_contiguous(self);
    int in_place = contiguous_self && out->data == self->data && out->offset == self->offset &&
                   out->dtype == self->dtype && pyaclnn_stub_is_contiguous(out) && pyaclnn_stub_numel(out) == total &&
                   !spans_meet(out, src);    /* (a source inside self: the copy paths) */
    int direct = in_place || (contiguous_self && out->dtype == self->dtype && pyaclnn_stub_numel(out) == total &&
                              writes_apart(out, self, src) && !spans_meet(out, index));
    int64_t n_outer = 0, *outer = outer_offsets(src, dim, &n_outer);   /* src and self share these dims */
    int64_t *vals = malloc(sizeof(int64_t) * (size_t)m + 1);
    unsigned char *base = direct ? NULL : tv_gather_bytes(self);
    if (outer == NULL || vals == NULL || (!direct && base == NULL)) {
        tv_fail_oom(launch);
        goto done;
    }
    for (int64_t j = 0; j < m; j++) {
        int64_t v = read_index(index, tv_offset(index, j));
        if (v < -size || v >= size) {
            pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "index %lld is out of bounds for dimension %d with "
                                   "size %lld", (long long)v, dim, (long long)size);
            goto done;
        }
        vals[j] = (v < 0 ? v + size : v) * inner * (int64_t)isz;
    }
    unsigned char *to = base;
    if (direct) {
        to = tv_at(out, out->offset);
        if (!in_place) memcpy(to, tv_at(self, self->offset), (size_t)total * isz);
    }
    for (int64_t o = 0; o < n_outer; o++, to += size * inner * (int64_t)isz) {
        const unsigned char *from = tv_at(src, outer[o]);
        for (int64_t j = 0; j < m; j++, from += src->strides[dim] * (int64_t)isz) memcpy(to + vals[j], from, row);
    }
    if (!direct) tv_scatter_bytes(out, base);
done:
    free(outer);
    free(vals);
    free(base);
    return 1;
}

void idx_dim_scatter_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const idx_dim_plan *p = launch->params;
    pyaclnn_stub_tensor self = as_1d(&launch->inputs[0]), index = {0}, src = {0};
    if (!p->n_list) index = as_1d(&launch->inputs[1]);
    if (p->src == IDX_SRC_TENSOR) src = as_1d(&launch->inputs[launch->n_inputs - 1]);
    aclDataType dt = self.dtype;
    int64_t n = walk_numel(p->walk, p->ndim), total = pyaclnn_stub_numel(&self), c[PYACLNN_STUB_MAX_DIMS] = {0};
    if (n && p->src == IDX_SRC_TENSOR && !p->n_list && scatter_rows(launch, p, &self, &index, &src)) return;
    /* the result is built in a contiguous copy of self (work), then stored to out (which may be self) */
    pyaclnn_stub_tensor work = self;
    work.data = tv_gather_bytes(&self);
    work.offset = 0;
    for (int64_t d = work.ndim - 1, st = 1; d >= 0; st *= work.shape[d], d--) work.strides[d] = st;
    int64_t *offs = malloc(sizeof(int64_t) * 2 * (size_t)n + 1);
    unsigned char *filled = p->assist ? calloc((size_t)total + 1, 1) : NULL;
    if (work.data == NULL || offs == NULL || (p->assist && filled == NULL)) {
        tv_fail_oom(launch);
        goto done;
    }
    for (int64_t i = 0; i < n; i++, walk_next(c, p->walk, p->ndim)) {   /* every target first: a fault writes nothing */
        if (!dim_target(p, &work, &index, c, &offs[2 * i])) goto done;
        if (p->src != IDX_SRC_TENSOR) continue;
        offs[2 * i + 1] = src.offset;
        for (int d = 0; d < p->ndim; d++) offs[2 * i + 1] += c[d] * src.strides[d];
    }
    for (int64_t i = 0; i < n; i++) {
        if (filled != NULL) {
            filled[offs[2 * i]] = 1;
            continue;
        }
        ew_value b = p->src == IDX_SRC_TENSOR ? ew_load(tv_at(&src, offs[2 * i + 1]), dt) : p->value;
        dim_combine(p, tv_at(&work, offs[2 * i]), b, dt);
    }
    if (filled != NULL) dim_assist(p, work.data, filled, total, dt);
    tv_scatter_bytes(&launch->outputs[0], work.data);
done:
    free(work.data);
    free(offs);
    free(filled);
}

/* ---- per-dimension maps (gather.h) ----------------------------------------------------------------- */

/* The source index along out dim d for each of its positions (-1: no element, the fill value); NULL and a
 * device fault (bad counts) or an out-of-memory record. */
static int64_t *map_table(const pyaclnn_stub_launch *launch, const idx_map_plan *p, int d, int64_t n) {
    int64_t m = p->out_shape[d], a = p->a[d];
    int64_t *t = malloc(sizeof(int64_t) * (size_t)m + 1);
    if (t == NULL) {
        tv_fail_oom(launch);
        return NULL;
    }
    if (p->kind[d] == IDX_MAP_COUNTS) {
        const pyaclnn_stub_tensor *counts = &launch->inputs[p->counts_input];
        int64_t k = 0, nc = pyaclnn_stub_numel(counts);
        for (int64_t j = 0; j < n; j++) {
            int64_t r = read_index(counts, tv_offset(counts, nc == 1 ? 0 : j));
            if (r < 0 || r > m - k) {
                pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "%s: repeats[%lld] = %lld: the repeats must be "
                                       "non-negative and sum to the output size %lld", launch->op_name, (long long)j,
                                       (long long)r, (long long)m);
                free(t);
                return NULL;
            }
            while (r--) t[k++] = j;
        }
        if (k != m) {
            pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "%s: the repeats sum to %lld, the output size is %lld",
                                   launch->op_name, (long long)k, (long long)m);
            free(t);
            return NULL;
        }
        return t;
    }
    for (int64_t o = 0; o < m; o++) {
        int64_t i = o - a;
        switch (p->kind[d]) {
        case IDX_MAP_CONST: i = i < 0 || i >= n ? -1 : i; break;
        case IDX_MAP_REFLECT:
            i = i < 0 ? -i : i;
            i = i >= n ? 2 * (n - 1) - i : i;
            break;
        case IDX_MAP_REPLICATE: i = i < 0 ? 0 : i >= n ? n - 1 : i; break;
        case IDX_MAP_FLIP: i = n - 1 - o; break;
        case IDX_MAP_ROLL: i = ((o - a) % n + n) % n; break;
        case IDX_MAP_MOD: i = o % n; break;
        case IDX_MAP_REPEAT: i = o / a; break;
        default: i = o; break;
        }
        t[o] = i;
    }
    return t;
}

/* The maps' tables, as element offsets along self's dims (strides: self's; INT64_MIN: no element). */
static int map_offsets(const pyaclnn_stub_launch *launch, const idx_map_plan *p, const pyaclnn_stub_tensor *self,
                       const int64_t *strides, int64_t **tab) {
    for (int d = 0; d < p->ndim; d++) {
        int sd = p->self_dim[d];
        int64_t n = p->flat ? pyaclnn_stub_numel(self) : sd >= 0 && sd < self->ndim ? self->shape[sd] : 1;
        tab[d] = map_table(launch, p, d, n);
        if (tab[d] == NULL) return 0;
        for (int64_t o = 0; o < p->out_shape[d]; o++)
            tab[d][o] = tab[d][o] < 0 ? INT64_MIN : p->flat || sd < 0 || sd >= self->ndim ? tab[d][o]
                                                                                           : tab[d][o] * strides[sd];
    }
    return 1;
}

/* The self offset (relative) of out position c, or INT64_MIN for the fill value. */
static int64_t map_at(const idx_map_plan *p, int64_t *const *tab, const int64_t *c) {
    int64_t o = 0;
    for (int d = 0; d < p->ndim; d++) {
        int64_t v = tab[d][c[d]];
        if (v == INT64_MIN) return INT64_MIN;
        o += v;
    }
    return o;
}

void idx_map_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const idx_map_plan *p = launch->params;
    const pyaclnn_stub_tensor *self = &launch->inputs[0], *out = &launch->outputs[0];
    int64_t *tab[PYACLNN_STUB_MAX_DIMS] = {0}, c[PYACLNN_STUB_MAX_DIMS] = {0};
    int64_t n = walk_numel(p->out_shape, p->ndim);
    size_t isz = ew_itemsize(out->dtype);
    unsigned char *buf = malloc((size_t)n * isz + 1), fill[16];
    ew_store(fill, out->dtype, p->fill);
    if (buf == NULL) tv_fail_oom(launch);
    if (buf == NULL || !map_offsets(launch, p, self, self->strides, tab)) goto done;
    for (int64_t i = 0; i < n && p->iota; i++)   /* RepeatInterleaveTensor: the indices themselves */
        ew_store(buf + i * (int64_t)isz, out->dtype, ew_cast((ew_value){0, tab[0][i]}, ACL_INT64, out->dtype));
    for (int64_t i = 0; i < n && !p->iota; i++, walk_next(c, p->out_shape, p->ndim)) {
        int64_t o = map_at(p, tab, c);
        const unsigned char *from = o == INT64_MIN ? fill : tv_at(self, p->flat ? tv_offset(self, o) : self->offset + o);
        memcpy(buf + i * (int64_t)isz, from, isz);
    }
    tv_scatter_bytes(out, buf);
done:
    for (int d = 0; d < p->ndim; d++) free(tab[d]);
    free(buf);
}

void idx_map_backward_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const idx_map_plan *p = launch->params;
    const pyaclnn_stub_tensor *grad = &launch->inputs[0], *gin = &launch->outputs[0];
    int64_t *tab[PYACLNN_STUB_MAX_DIMS] = {0}, c[PYACLNN_STUB_MAX_DIMS] = {0}, st[PYACLNN_STUB_MAX_DIMS];
    int64_t n = walk_numel(p->out_shape, p->ndim), m = pyaclnn_stub_numel(gin);
    for (int64_t d = gin->ndim - 1, s = 1; d >= 0; s *= gin->shape[d], d--) st[d] = s;
    int dbl = gin->dtype == ACL_DOUBLE;
    double *g = tv_load_double(grad), *acc = calloc((size_t)m + 1, sizeof(double));
    if (g == NULL || acc == NULL) tv_fail_oom(launch);
    if (g == NULL || acc == NULL || !map_offsets(launch, p, gin, st, tab)) goto done;
    for (int64_t i = 0; i < n; i++, walk_next(c, p->out_shape, p->ndim)) {
        int64_t o = map_at(p, tab, c);
        if (o == INT64_MIN) continue;
        double sum = acc[o] + g[i];
        if (dbl) acc[o] = sum;
        else acc[o] = (float)sum;   /* not a conditional expression: GCC 12 -O2 may drop its (float) */
    }
    tv_store_double(gin, acc);
done:
    for (int d = 0; d < p->ndim; d++) free(tab[d]);
    free(g);
    free(acc);
}
