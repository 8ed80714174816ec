#include "kernels/reduce.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/ew_chunk.h"
#include "kernels/parallel.h"
#include "numerics.h"

/* NaN-aware "a beats b" for MAX / MIN (NaN beats everything; the first NaN is kept). */
static int beats(red_op op, double a, double b) {
    if (isnan(b)) return 0;
    if (isnan(a)) return 1;
    return op == RED_MAX ? a > b : a < b;
}

/* A value of the compute dtype c as a double. */
static double as_double(aclDataType c, ew_value v) { return ew_repr_of(c) == EW_REPR_F ? v.f : (double)v.i; }

/* p-norm of the line (RED_NORM). */
static double line_norm(double pw, const ew_value *v, int64_t n, aclDataType c) {
    double acc = isinf(pw) ? (pw > 0 ? 0.0 : INFINITY) : 0.0;
    for (int64_t i = 0; i < n; i++) {
        double a = fabs(as_double(c, v[i]));
        if (isnan(a)) return NAN;
        if (pw == 0) acc += a != 0.0;
        else if (isinf(pw)) acc = pw > 0 ? fmax(acc, a) : fmin(acc, a);
        else acc += pw == 1 ? a : pw == 2 ? a * a : pow(a, pw);
    }
    if (pw == 0 || pw == 1 || isinf(pw)) return n == 0 && isinf(pw) ? 0.0 : acc;
    return pw == 2 ? sqrt(acc) : pow(acc, 1.0 / pw);
}

/* The whole-line operations (ANY ... NORM) of v[0..n), values in the compute dtype c: the result in
 * red_result_dtype; *mean: the line's mean (VAR). */
static ew_value line_result(const red_plan *p, aclDataType c, const ew_value *v, int64_t n, ew_value *mean) {
    int fl = ew_repr_of(c) == EW_REPR_F;
    double r = 0.0;
    switch (p->op) {
    case RED_ANY:
    case RED_ALL: {
        int any = 0, all = 1;
        for (int64_t i = 0; i < n; i++) {
            int t = fl ? v[i].f != 0.0 : v[i].i != 0;   /* NaN is true */
            any |= t;
            all &= t;
        }
        return (ew_value){0, p->op == RED_ANY ? any : all};
    }
    case RED_PROD:
        if (!fl) {
            uint64_t prod = 1;                          /* wraps like the integer dtype (cast below) */
            for (int64_t i = 0; i < n; i++) prod *= (uint64_t)v[i].i;
            return ew_cast((ew_value){0, (int64_t)prod}, ACL_INT64, c);
        }
        r = 1.0;
        for (int64_t i = 0; i < n; i++) r *= v[i].f;
        break;
    case RED_LOGSUMEXP: {
        double m = -INFINITY, sum = 0.0;
        for (int64_t i = 0; i < n; i++) m = isnan(m) || isnan(v[i].f) ? NAN : fmax(m, v[i].f);
        double shift = isinf(m) ? 0.0 : m;              /* the vendor's op_api zeroes an infinite max */
        for (int64_t i = 0; i < n; i++) sum += exp(v[i].f - shift);
        r = log(sum) + shift;
        break;
    }
    case RED_VAR: {
        double mu = 0.0, ss = 0.0;
        for (int64_t i = 0; i < n; i++) mu += as_double(c, v[i]);
        mu /= (double)n;
        for (int64_t i = 0; i < n; i++) ss += (as_double(c, v[i]) - mu) * (as_double(c, v[i]) - mu);
        double div = (double)n - p->attr;   /* none left: NaN for one element, else inf (the op_apis' fills) */
        r = div > 0 ? ss / div : n <= 1 ? NAN : INFINITY;
        if (p->take_sqrt) r = sqrt(r);
        *mean = ew_cast((ew_value){mu, 0}, ACL_DOUBLE, c);
        break;
    }
    case RED_NORM: r = line_norm(p->attr, v, n, c); break;
    default: break;
    }
    return ew_cast((ew_value){r, 0}, ACL_DOUBLE, c);
}

/* The dtype of a plan's results before the cast to the outputs. */
static aclDataType red_result_dtype(const red_plan *p) {
    return p->op == RED_ANY || p->op == RED_ALL ? ACL_BOOL : p->compute;
}

typedef struct {
    const red_plan *p;
    const pyaclnn_stub_tensor *self;
    int nk, nr;
    int64_t kshape[PYACLNN_STUB_MAX_DIMS], kstride[PYACLNN_STUB_MAX_DIMS];
    int64_t rshape[PYACLNN_STUB_MAX_DIMS], rstride[PYACLNN_STUB_MAX_DIMS];
    int64_t nred;
    ew_value *vals, *means;
    int64_t *args;
    _Atomic int *oom;                         /* set when a thread cannot allocate its line buffer */
} red_job;

#define RED_ROW_BLOCK 512

/* SUM / MEAN of FLOAT / FLOAT16 / BF16 values, exact in the compute dtype, when the innermost kept dim is
 * contiguous (a sum over dims outside it: x.sum(0), x.sum(1) of [B, K, H]): up to RED_ROW_BLOCK neighbouring
 * outputs at once, each summed in double over the reduced positions in the line walk's order (so the bits are
 * red_range's), their loads in one typed loop per reduced position. 0: the case does not apply. */
static int red_rows(const red_job *j, int64_t begin, int64_t end) {
    const red_plan *p = j->p;
    const pyaclnn_stub_tensor *self = j->self;
    aclDataType in_dt = self->dtype, c = p->compute;
    if ((p->op != RED_SUM && p->op != RED_MEAN) || j->nk == 0 || j->kstride[j->nk - 1] != 1 ||
        (in_dt != ACL_FLOAT && in_dt != ACL_FLOAT16 && in_dt != ACL_BF16) || (c != in_dt && c != ACL_FLOAT))
        return 0;
    int64_t inner = j->kshape[j->nk - 1];
    double acc[RED_ROW_BLOCK];
    for (int64_t o = begin; o < end;) {
        int64_t len = inner - o % inner;
        if (len > end - o) len = end - o;
        if (len > RED_ROW_BLOCK) len = RED_ROW_BLOCK;
        int64_t off = self->offset, rem = o;
        for (int d = j->nk - 1; d >= 0; d--) off += (rem % j->kshape[d]) * j->kstride[d], rem /= j->kshape[d];
        for (int64_t i = 0; i < len; i++) acc[i] = 0.0;
        int64_t ridx[PYACLNN_STUB_MAX_DIMS] = {0};
        for (int64_t r = 0; r < j->nred; r++) {
            const void *row = tv_at(self, off);
            if (in_dt == ACL_FLOAT) {
                const float *x = row;
                for (int64_t i = 0; i < len; i++) acc[i] += p->skip_nan && isnan(x[i]) ? 0.0 : (double)x[i];
            } else if (in_dt == ACL_BF16) {
                const uint16_t *x = row;
                for (int64_t i = 0; i < len; i++) {
                    float v = num_bf16_to_f32(x[i]);
                    acc[i] += p->skip_nan && isnan(v) ? 0.0 : (double)v;
                }
            } else {
                const uint16_t *x = row;
                for (int64_t i = 0; i < len; i++) {
                    float v = num_f16_to_f32(x[i]);
                    acc[i] += p->skip_nan && isnan(v) ? 0.0 : (double)v;
                }
            }
            for (int d = j->nr - 1; d >= 0; d--) {   /* next reduced position (as red_range) */
                off += j->rstride[d];
                if (++ridx[d] < j->rshape[d]) break;
                off -= j->rstride[d] * j->rshape[d];
                ridx[d] = 0;
            }
        }
        for (int64_t i = 0; i < len; i++) {
            double s = p->op == RED_MEAN ? (j->nred ? acc[i] / (double)j->nred : NAN) : acc[i];
            j->vals[o + i] = ew_cast((ew_value){s, 0}, ACL_DOUBLE, c);
            if (j->args) j->args[o + i] = 0;
        }
        o += len;
    }
    return 1;
}

/* SUM / MEAN of FLOAT / FLOAT16 / BF16 values, exact in the compute dtype, over one contiguous dim (x.sum(-1)):
 * each output's line summed in double in order (red_range's bits) by one typed loop. 0: the case does not
 * apply. */
static int red_lines(const red_job *j, int64_t begin, int64_t end) {
    const red_plan *p = j->p;
    const pyaclnn_stub_tensor *self = j->self;
    aclDataType in_dt = self->dtype, c = p->compute;
    if ((p->op != RED_SUM && p->op != RED_MEAN) || j->nr != 1 || j->rstride[0] != 1 ||
        (in_dt != ACL_FLOAT && in_dt != ACL_FLOAT16 && in_dt != ACL_BF16) || (c != in_dt && c != ACL_FLOAT))
        return 0;
    int64_t n = j->nred;
    for (int64_t o = begin; o < end; o++) {
        int64_t off = self->offset, rem = o;
        for (int d = j->nk - 1; d >= 0; d--) off += (rem % j->kshape[d]) * j->kstride[d], rem /= j->kshape[d];
        double acc = 0.0;
        const void *line = tv_at(self, off);
        if (in_dt == ACL_FLOAT) {
            const float *x = line;
            for (int64_t r = 0; r < n; r++) acc += p->skip_nan && isnan(x[r]) ? 0.0 : (double)x[r];
        } else {
            const uint16_t *x = line;
            int bf = in_dt == ACL_BF16;
            for (int64_t r = 0; r < n; r++) {
                float v = bf ? num_bf16_to_f32(x[r]) : num_f16_to_f32(x[r]);
                acc += p->skip_nan && isnan(v) ? 0.0 : (double)v;
            }
        }
        double s = p->op == RED_MEAN ? (n ? acc / (double)n : NAN) : acc;
        j->vals[o] = ew_cast((ew_value){s, 0}, ACL_DOUBLE, c);
        if (j->args) j->args[o] = 0;
    }
    return 1;
}

/* Output positions [begin, end): each reduces its own line of self (results never depend on threads). */
static void red_range(void *ctx, size_t begin, size_t end) {
    const red_job *j = ctx;
    if (red_rows(j, (int64_t)begin, (int64_t)end) || red_lines(j, (int64_t)begin, (int64_t)end)) return;
    const red_plan *p = j->p;
    const pyaclnn_stub_tensor *self = j->self;
    aclDataType in_dt = self->dtype, c = p->compute;
    int is_float = ew_is_float(c), whole_line = p->op >= RED_ANY;
    size_t bytes = 0;   /* a line's buffer; a view of 2^61 broadcast elements must not wrap it to a few bytes */
    int too_big = whole_line && __builtin_mul_overflow(sizeof(ew_value), (size_t)j->nred + 1, &bytes);
    ew_value *line = whole_line && !too_big ? malloc(bytes) : NULL;
    if (whole_line && line == NULL) {
        *j->oom = 1;
        return;
    }
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
            if (whole_line) {
                line[r] = v;
            } else if (p->op == RED_SUM || p->op == RED_MEAN) {
                if (is_float) fsum += p->skip_nan && isnan(v.f) ? 0.0 : v.f;
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
        if (whole_line) {
            ew_value unused_mean;
            res = line_result(p, c, line, nred, j->means ? &j->means[o] : &unused_mean);
        } else if (p->op == RED_SUM || p->op == RED_MEAN) {
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
        if (j->args) j->args[o] = best_i;
    }
    free(line);
}

/* Writes vals[0..n) (of dtype from) into out, in out's row-major order (a contiguous out in one
 * ew_store_chunk call: the per-element casts' bits without a dispatch per element). */
static void store_values(const pyaclnn_stub_tensor *out, const ew_value *vals, int64_t n, aclDataType from) {
    if (pyaclnn_stub_is_contiguous(out)) {
        ew_store_chunk(tv_at(out, out->offset), 1, out->dtype, from, n, vals);
        return;
    }
    tv_iter it;
    tv_iter_init(&it, out);
    for (int64_t o = 0; o < n; o++, tv_iter_next(&it))
        ew_store(tv_at(out, it.off), out->dtype, ew_cast(vals[o], from, out->dtype));
}

void red_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const red_plan *p = launch->params;
    _Atomic int oom = 0;
    red_job j = {.p = p, .self = &launch->inputs[0], .nred = 1, .oom = &oom};
    const pyaclnn_stub_tensor *self = j.self;
    int64_t nout = 1;
    for (int64_t d = 0; d < self->ndim; d++) {
        if (p->reduce[d]) j.rshape[j.nr] = self->shape[d], j.rstride[j.nr++] = self->strides[d], j.nred *= self->shape[d];
        else j.kshape[j.nk] = self->shape[d], j.kstride[j.nk++] = self->strides[d], nout *= self->shape[d];
    }
    aclDataType c = p->compute;
    j.vals = tv_alloc(nout, sizeof(ew_value));   /* (a 0-stride out may count more than memory holds) */
    /* (the argument positions and the means only where an output takes them: at 16M outputs they were
     * 384 MB of buffers to fault in) */
    int want_args = p->index_out >= 0, want_means = p->with_mean;
    j.args = want_args ? tv_alloc(nout, sizeof(int64_t)) : NULL;
    j.means = want_means ? tv_alloc(nout, sizeof(ew_value)) : NULL;
    if (j.vals == NULL || (want_args && j.args == NULL) || (want_means && j.means == NULL)) {
        free(j.vals);
        free(j.args);
        free(j.means);
        tv_fail_oom(launch);
        return;
    }
    size_t min_per_thread = (size_t)(1 + (1 << 16) / (j.nred + 1));
    op_parallel_for((size_t)nout, op_thread_count((size_t)nout, min_per_thread), red_range, &j);
    ew_value *vals = j.vals;
    int64_t *args = j.args;
    if (oom) tv_fail_oom(launch);
    if (!oom && p->values_out >= 0) store_values(&launch->outputs[p->values_out], vals, nout, red_result_dtype(p));
    if (!oom && p->with_mean) store_values(&launch->outputs[1], j.means, nout, c);
    if (!oom && p->index_out >= 0) {
        const pyaclnn_stub_tensor *out = &launch->outputs[p->index_out];
        tv_iter it;
        tv_iter_init(&it, out);
        for (int64_t o = 0; o < nout; o++, tv_iter_next(&it))
            ew_store(tv_at(out, it.off), out->dtype, ew_cast((ew_value){0, args[o]}, ACL_INT64, out->dtype));
    }
    free(vals);
    free(args);
    free(j.means);
}
