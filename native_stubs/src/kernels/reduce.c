#include "kernels/reduce.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/parallel.h"

/* NaN-aware "a beats b" for MAX / MIN (NaN beats everything; the first NaN is kept). */
static int beats(red_op op, double a, double b) {
    if (isnan(b)) return 0;
    if (isnan(a)) return 1;
    return op == RED_MAX ? a > b : a < b;
}

typedef struct {
    const red_plan *p;
    const pyaclnn_stub_tensor *self;
    int nk, nr;
    int64_t kshape[PYACLNN_STUB_MAX_DIMS], kstride[PYACLNN_STUB_MAX_DIMS];
    int64_t rshape[PYACLNN_STUB_MAX_DIMS], rstride[PYACLNN_STUB_MAX_DIMS];
    int64_t nred;
    ew_value *vals;
    int64_t *args;
} red_job;

/* Output positions [begin, end): each reduces its own line of self (results never depend on threads). */
static void red_range(void *ctx, size_t begin, size_t end) {
    const red_job *j = ctx;
    const red_plan *p = j->p;
    const pyaclnn_stub_tensor *self = j->self;
    aclDataType in_dt = self->dtype, c = p->compute;
    int is_float = ew_is_float(c);
    for (int64_t o = (int64_t)begin; o < (int64_t)end; o++) {
        int64_t base = self->offset, rem = o;
        for (int d = j->nk - 1; d >= 0; d--) base += (rem % j->kshape[d]) * j->kstride[d], rem /= j->kshape[d];
        double fsum = 0.0, best = 0.0;
        uint64_t isum = 0;
        int64_t best_i = 0;
        int64_t ridx[PYACLNN_STUB_MAX_DIMS] = {0};
        int64_t off = base;
        for (int64_t r = 0; r < j->nred; r++) {
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
            for (int d = j->nr - 1; d >= 0; d--) {   /* next reduced position */
                off += j->rstride[d];
                if (++ridx[d] < j->rshape[d]) break;
                off -= j->rstride[d] * j->rshape[d];
                ridx[d] = 0;
            }
        }
        ew_value res = {0, 0};
        int64_t nred = j->nred;
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
        j->vals[o] = res;
        j->args[o] = best_i;
    }
}

void red_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const red_plan *p = launch->params;
    red_job j = {.p = p, .self = &launch->inputs[0], .nred = 1};
    const pyaclnn_stub_tensor *self = j.self;
    int64_t nout = 1;
    for (int64_t d = 0; d < self->ndim; d++) {
        if (p->reduce[d]) j.rshape[j.nr] = self->shape[d], j.rstride[j.nr++] = self->strides[d], j.nred *= self->shape[d];
        else j.kshape[j.nk] = self->shape[d], j.kstride[j.nk++] = self->strides[d], nout *= self->shape[d];
    }
    aclDataType c = p->compute;
    j.vals = tv_alloc(nout, sizeof(ew_value));   /* (a 0-stride out may count more than memory holds) */
    j.args = tv_alloc(nout, sizeof(int64_t));
    if (j.vals == NULL || j.args == NULL) {
        free(j.vals);
        free(j.args);
        tv_fail_oom(launch);
        return;
    }
    size_t min_per_thread = (size_t)(1 + (1 << 16) / (j.nred + 1));
    op_parallel_for((size_t)nout, op_thread_count((size_t)nout, min_per_thread), red_range, &j);
    ew_value *vals = j.vals;
    int64_t *args = j.args;
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
