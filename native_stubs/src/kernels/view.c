#include "kernels/view.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numerics.h"

void tv_iter_init(tv_iter *it, const pyaclnn_stub_tensor *t) {
    it->t = t;
    memset(it->idx, 0, sizeof it->idx);
    it->off = t->offset;
}

void tv_iter_next(tv_iter *it) {
    const pyaclnn_stub_tensor *t = it->t;
    for (int64_t d = t->ndim - 1; d >= 0; d--) {
        it->off += t->strides[d];
        if (++it->idx[d] < t->shape[d]) return;
        it->off -= t->strides[d] * t->shape[d];
        it->idx[d] = 0;
    }
}

void tv_broadcast_strides(const pyaclnn_stub_tensor *t, int64_t ndim, int64_t *strides) {
    int64_t lead = ndim - t->ndim;
    for (int64_t d = 0; d < ndim; d++) strides[d] = d < lead || t->shape[d - lead] == 1 ? 0 : t->strides[d - lead];
}

int64_t tv_bcast2_init(tv_bcast2 *it, const pyaclnn_stub_tensor *a, const pyaclnn_stub_tensor *b,
                       const int64_t *shape, int64_t ndim) {
    int64_t n = 1;
    it->ndim = ndim;
    it->shape = shape;
    memset(it->idx, 0, sizeof it->idx);
    tv_broadcast_strides(a, ndim, it->st[0]);
    tv_broadcast_strides(b, ndim, it->st[1]);
    it->off[0] = a->offset;
    it->off[1] = b->offset;
    for (int64_t d = 0; d < ndim; d++) n *= shape[d];
    return n;
}

void tv_bcast2_next(tv_bcast2 *it) {
    for (int64_t d = it->ndim - 1; d >= 0; d--) {
        it->off[0] += it->st[0][d];
        it->off[1] += it->st[1][d];
        if (++it->idx[d] < it->shape[d]) return;
        it->off[0] -= it->st[0][d] * it->idx[d];
        it->off[1] -= it->st[1][d] * it->idx[d];
        it->idx[d] = 0;
    }
}

int64_t tv_dims_product(const int64_t *shape, int64_t from, int64_t to) {
    for (int64_t d = from; d < to; d++)
        if (shape[d] == 0) return 0;
    int64_t n = 1;
    for (int64_t d = from; d < to; d++)
        if (__builtin_mul_overflow(n, shape[d], &n)) return INT64_MAX;   /* not a tensor's dims: saturate */
    return n;
}

int64_t tv_offset(const pyaclnn_stub_tensor *t, int64_t lin) {
    int64_t off = t->offset;
    for (int64_t d = t->ndim - 1; d >= 0; d--) {
        off += (lin % t->shape[d]) * t->strides[d];
        lin /= t->shape[d];
    }
    return off;
}

void *tv_alloc(int64_t n, size_t size) {
    size_t bytes;
    if (n < 0 || __builtin_mul_overflow((size_t)n, size, &bytes) || bytes == SIZE_MAX) return NULL;
    return malloc(bytes + 1);
}

unsigned char *tv_gather_bytes(const pyaclnn_stub_tensor *t) {
    int64_t n = pyaclnn_stub_numel(t);
    size_t isz = ew_itemsize(t->dtype);
    unsigned char *buf = tv_alloc(n, isz);
    if (buf == NULL) return NULL;
    tv_iter it;
    tv_iter_init(&it, t);
    for (int64_t i = 0; i < n; i++, tv_iter_next(&it)) memcpy(buf + i * (int64_t)isz, tv_at(t, it.off), isz);
    return buf;
}

void tv_scatter_bytes(const pyaclnn_stub_tensor *t, const unsigned char *src) {
    int64_t n = pyaclnn_stub_numel(t);
    size_t isz = ew_itemsize(t->dtype);
    tv_iter it;
    tv_iter_init(&it, t);
    for (int64_t i = 0; i < n; i++, tv_iter_next(&it)) memcpy(tv_at(t, it.off), src + i * (int64_t)isz, isz);
}

static double as_double(ew_value v, aclDataType dt) {
    return ew_repr_of(dt) == EW_REPR_F ? v.f : (double)v.i;
}

/* A contiguous FLOAT / FLOAT16 / BF16 view widened in one loop: ew_load's values (the same conversions). */
static int load_double_contiguous(const pyaclnn_stub_tensor *t, int64_t n, double *buf) {
    if (!pyaclnn_stub_is_contiguous(t)) return 0;
    const unsigned char *p = tv_at(t, t->offset);
    if (t->dtype == ACL_FLOAT) {
        for (int64_t i = 0; i < n; i++) {
            float x;
            memcpy(&x, p + 4 * i, 4);
            buf[i] = x;
        }
        return 1;
    }
    if (t->dtype != ACL_FLOAT16 && t->dtype != ACL_BF16) return 0;
    int half = t->dtype == ACL_FLOAT16;
    for (int64_t i = 0; i < n; i++) {
        uint16_t h;
        memcpy(&h, p + 2 * i, 2);
        buf[i] = half ? num_f16_to_f32(h) : num_bf16_to_f32(h);
    }
    return 1;
}

double *tv_load_double(const pyaclnn_stub_tensor *t) {
    int64_t n = pyaclnn_stub_numel(t);
    double *buf = tv_alloc(n, sizeof(double));
    if (buf == NULL) return NULL;
    if (load_double_contiguous(t, n, buf)) return buf;
    tv_iter it;
    tv_iter_init(&it, t);
    for (int64_t i = 0; i < n; i++, tv_iter_next(&it)) buf[i] = as_double(ew_load(tv_at(t, it.off), t->dtype), t->dtype);
    return buf;
}

float *tv_load_float(const pyaclnn_stub_tensor *t) {
    int64_t n = pyaclnn_stub_numel(t);
    float *buf = tv_alloc(n, sizeof(float));
    if (buf == NULL) return NULL;
    tv_iter it;
    tv_iter_init(&it, t);
    if (t->dtype == ACL_FLOAT) {
        for (int64_t i = 0; i < n; i++, tv_iter_next(&it)) memcpy(&buf[i], tv_at(t, it.off), sizeof(float));
        return buf;
    }
    for (int64_t i = 0; i < n; i++, tv_iter_next(&it))
        buf[i] = (float)ew_cast(ew_load(tv_at(t, it.off), t->dtype), t->dtype, ACL_FLOAT).f;
    return buf;
}

float *tv_load_float_as(const pyaclnn_stub_tensor *t, const int64_t *shape, int64_t ndim) {
    pyaclnn_stub_tensor v = *t;
    tv_broadcast_strides(t, ndim, v.strides);
    memcpy(v.shape, shape, sizeof *shape * (size_t)ndim);
    v.ndim = ndim;
    return tv_load_float(&v);
}

void tv_store_double(const pyaclnn_stub_tensor *t, const double *src) {
    int64_t n = pyaclnn_stub_numel(t);
    if (pyaclnn_stub_is_contiguous(t) && t->dtype == ACL_FLOAT) {   /* ew_cast then ew_store: (float)src[i] */
        unsigned char *p = tv_at(t, t->offset);
        for (int64_t i = 0; i < n; i++) {
            float x = (float)src[i];
            memcpy(p + 4 * i, &x, 4);
        }
        return;
    }
    tv_iter it;
    tv_iter_init(&it, t);
    for (int64_t i = 0; i < n; i++, tv_iter_next(&it))
        ew_store(tv_at(t, it.off), t->dtype, ew_cast((ew_value){src[i], 0}, ACL_DOUBLE, t->dtype));
}

void tv_store_float(const pyaclnn_stub_tensor *t, const float *src) {
    int64_t n = pyaclnn_stub_numel(t);
    tv_iter it;
    tv_iter_init(&it, t);
    if (t->dtype == ACL_FLOAT) {
        for (int64_t i = 0; i < n; i++, tv_iter_next(&it)) memcpy(tv_at(t, it.off), &src[i], sizeof(float));
        return;
    }
    for (int64_t i = 0; i < n; i++, tv_iter_next(&it))
        ew_store(tv_at(t, it.off), t->dtype, ew_cast((ew_value){src[i], 0}, ACL_FLOAT, t->dtype));
}

int tv_may_self_overlap(const pyaclnn_stub_tensor *t) {
    /* dims of size > 1 by |stride| ascending; each stride must step over everything the smaller ones reach */
    int64_t st[PYACLNN_STUB_MAX_DIMS], sz[PYACLNN_STUB_MAX_DIMS];
    int n = 0;
    for (int64_t d = 0; d < t->ndim; d++) {
        if (t->shape[d] == 0) return 0;   /* empty: nothing is written */
        if (t->shape[d] == 1) continue;
        int64_t s = t->strides[d] < 0 ? -t->strides[d] : t->strides[d];
        int k = n++;
        while (k > 0 && st[k - 1] > s) st[k] = st[k - 1], sz[k] = sz[k - 1], k--;
        st[k] = s;
        sz[k] = t->shape[d];
    }
    int64_t reach = 0;   /* the largest offset the smaller dims reach */
    for (int k = 0; k < n; k++) {
        if (st[k] <= reach) return 1;
        if (__builtin_mul_overflow(st[k], sz[k] - 1, &st[k]) || __builtin_add_overflow(reach, st[k], &reach)) return 1;
    }
    return 0;
}

static int view_ok(const pyaclnn_stub_launch *l, const pyaclnn_stub_tensor *t, const char *kind, size_t i) {
    if (!t->present || pyaclnn_stub_numel(t) == 0) return 1;
    if (op_view_in_device_memory(t, (int)(8 * ew_itemsize(t->dtype)))) return 1;
    pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "%s: %s %zu view (data %p, offset %lld) is not in device "
                           "memory", l->op_name, kind, i, t->data, (long long)t->offset);
    return 0;
}

int tv_launch_views_ok(const pyaclnn_stub_launch *launch) {
    for (size_t i = 0; i < launch->n_inputs; i++)
        if (!view_ok(launch, &launch->inputs[i], "input", i)) return 0;
    for (size_t i = 0; i < launch->n_outputs; i++)
        if (!view_ok(launch, &launch->outputs[i], "output", i)) return 0;
    return 1;
}

void tv_fail_oom(const pyaclnn_stub_launch *launch) {
    pyaclnn_stub_task_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of host memory", launch->op_name);
}
