#include "reduce/red_engine.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

aclnnStatus red_mark_dims(const char *api, const pyaclnn_stub_tensor *self, const int64_t *dims, uint64_t n,
                          red_plan *plan) {
    int64_t rank = self->ndim > 0 ? self->ndim : 1;
    memset(plan->reduce, 0, sizeof plan->reduce);
    if (n == 0) {
        for (int64_t d = 0; d < self->ndim; d++) plan->reduce[d] = 1;
        return ACLNN_SUCCESS;
    }
    for (uint64_t i = 0; i < n; i++) {
        if (dims[i] >= rank || dims[i] < -rank) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "provided dim %lld must be in the range of [%lld, %lld].",
                                (long long)dims[i], (long long)-rank, (long long)(rank - 1));
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    for (uint64_t i = 0; i < n; i++) {
        int64_t d = dims[i] < 0 ? dims[i] + rank : dims[i];
        if (plan->reduce[d]) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "Dim %lld appears multiple times in the list of dims.",
                                (long long)d);
            return ACLNN_ERR_PARAM_INVALID;
        }
        plan->reduce[d] = 1;
    }
    if (self->ndim == 0) plan->reduce[0] = 0;   /* a 0-d tensor has nothing to reduce */
    return ACLNN_SUCCESS;
}

void red_out_shape(const pyaclnn_stub_tensor *self, const red_plan *plan, int keepdim, int64_t *shape, int64_t *ndim) {
    int64_t o = 0;
    for (int64_t d = 0; d < self->ndim; d++) {
        if (!plan->reduce[d]) shape[o++] = self->shape[d];
        else if (keepdim) shape[o++] = 1;
    }
    *ndim = o;
}

/* NaN-aware "a beats b" for MAX / MIN (NaN beats everything; the first NaN is kept). */
static int beats(red_op op, double a, double b) {
    if (isnan(b)) return 0;
    if (isnan(a)) return 1;
    return op == RED_MAX ? a > b : a < b;
}

void red_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const red_plan *p = launch->params;
    const pyaclnn_stub_tensor *self = &launch->inputs[0];
    int nk = 0, nr = 0;
    int64_t kshape[PYACLNN_STUB_MAX_DIMS], kstride[PYACLNN_STUB_MAX_DIMS];
    int64_t rshape[PYACLNN_STUB_MAX_DIMS], rstride[PYACLNN_STUB_MAX_DIMS];
    int64_t nout = 1, nred = 1;
    for (int64_t d = 0; d < self->ndim; d++) {
        if (p->reduce[d]) rshape[nr] = self->shape[d], rstride[nr++] = self->strides[d], nred *= self->shape[d];
        else kshape[nk] = self->shape[d], kstride[nk++] = self->strides[d], nout *= self->shape[d];
    }
    aclDataType in_dt = self->dtype, c = p->compute;
    int is_float = ew_is_float(c);
    ew_value *vals = malloc(sizeof(ew_value) * (size_t)nout + 1);
    int64_t *args = malloc(sizeof(int64_t) * (size_t)nout + 1);
    if (vals == NULL || args == NULL) {
        free(vals);
        free(args);
        tv_fail_oom(launch);
        return;
    }
    for (int64_t o = 0; o < nout; o++) {
        int64_t base = self->offset, rem = o;
        for (int d = nk - 1; d >= 0; d--) base += (rem % kshape[d]) * kstride[d], rem /= kshape[d];
        double fsum = 0.0, best = 0.0;
        uint64_t isum = 0;
        int64_t best_i = 0;
        int64_t ridx[PYACLNN_STUB_MAX_DIMS] = {0};
        int64_t off = base;
        for (int64_t r = 0; r < nred; r++) {
            ew_value v = ew_cast(ew_load(tv_at(self, off), in_dt), in_dt, c);
            double x = ew_repr_of(c) == EW_REPR_F ? v.f : (double)v.i;
            if (p->op == RED_SUM || p->op == RED_MEAN) {
                if (is_float) fsum += v.f;
                else isum += (uint64_t)v.i;
            } else if (r == 0 || beats(p->op, x, best)) {
                best = x;
                best_i = r;
                if (!is_float) isum = (uint64_t)v.i;   /* exact integer extreme */
            }
            for (int d = nr - 1; d >= 0; d--) {   /* next reduced position */
                off += rstride[d];
                if (++ridx[d] < rshape[d]) break;
                off -= rstride[d] * rshape[d];
                ridx[d] = 0;
            }
        }
        ew_value res = {0, 0};
        if (p->op == RED_SUM || p->op == RED_MEAN) {
            if (is_float) {
                double s = p->op == RED_MEAN ? (nred ? fsum / (double)nred : NAN) : fsum;
                res = ew_cast((ew_value){s, 0}, ACL_DOUBLE, c);
            } else {
                res = ew_cast((ew_value){0, (int64_t)isum}, ACL_INT64, c);
                if (p->op == RED_MEAN) res = ew_cast((ew_value){nred ? (double)res.i / (double)nred : NAN, 0},
                                                     ACL_DOUBLE, c);
            }
        } else {
            res = is_float ? (ew_value){best, 0} : (ew_value){0, (int64_t)isum};
        }
        vals[o] = res;
        args[o] = best_i;
    }
    if (p->values_out >= 0) {
        const pyaclnn_stub_tensor *out = &launch->outputs[p->values_out];
        tv_iter it;
        tv_iter_init(&it, out);
        for (int64_t o = 0; o < nout; o++, tv_iter_next(&it))
            ew_store(tv_at(out, it.off), out->dtype, ew_cast(vals[o], c, out->dtype));
    }
    if (p->index_out >= 0) {
        const pyaclnn_stub_tensor *out = &launch->outputs[p->index_out];
        tv_iter it;
        tv_iter_init(&it, out);
        for (int64_t o = 0; o < nout; o++, tv_iter_next(&it))
            ew_store(tv_at(out, it.off), out->dtype, ew_cast((ew_value){0, args[o]}, ACL_INT64, out->dtype));
    }
    free(vals);
    free(args);
}
