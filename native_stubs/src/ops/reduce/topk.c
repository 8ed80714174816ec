/*
 * aclnnTopk: the k largest (or smallest) elements of self along dim and their int64 indices
 * (hicann/ops-nn index/gather_elements/op_api/aclnn_topk.cpp; torch's topk).
 *
 * Order: NaN counts as larger than every number (torch's rule); equal values keep their input order
 * (lower index first), which is what a stable sort gives. sorted = true lists the selection from the
 * largest down (largest = true) or the smallest up; sorted = false lists the selected elements in their
 * input order. Data moves only: bit-exact (class a), with the tie order an emulator choice.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"

typedef struct {
    int64_t k, outer, len, inner;
    int largest, sorted;
} topk_params;

typedef struct {
    double f;       /* float dtypes */
    int64_t i;      /* integer dtypes (UINT64: the bit pattern, compared unsigned) */
    int64_t index;
} topk_item;

/* qsort has no context argument in C11: the comparators read these, set per launch under g_lock
 * (launches on different streams may run at the same time). */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static aclDataType g_dtype;
static int g_largest;

/* -1 if a ranks before b in the output order. */
static int rank_cmp(const void *pa, const void *pb) {
    const topk_item *a = pa, *b = pb;
    int c = 0;
    if (ew_repr_of(g_dtype) == EW_REPR_F) {
        int na = isnan(a->f), nb = isnan(b->f);
        if (na || nb) c = na && nb ? 0 : na ? 1 : -1;            /* NaN is the largest */
        else c = a->f < b->f ? -1 : a->f > b->f;
    } else if (g_dtype == ACL_UINT64) {
        c = (uint64_t)a->i < (uint64_t)b->i ? -1 : (uint64_t)a->i > (uint64_t)b->i;
    } else {
        c = a->i < b->i ? -1 : a->i > b->i;
    }
    if (g_largest) c = -c;
    return c ? c : (a->index < b->index ? -1 : a->index > b->index);   /* ties: input order */
}

static int index_cmp(const void *pa, const void *pb) {
    const topk_item *a = pa, *b = pb;
    return a->index < b->index ? -1 : a->index > b->index;
}

void topk_kernel(const pyaclnn_stub_launch *launch) {
    const topk_params *p = launch->params;
    const pyaclnn_stub_tensor *self = &launch->inputs[0], *vals = &launch->outputs[0], *idxs = &launch->outputs[1];
    if (!tv_launch_views_ok(launch)) return;
    size_t isz = ew_itemsize(self->dtype);
    unsigned char *src = tv_gather_bytes(self);
    int64_t nout = p->outer * p->k * p->inner;   /* valuesOut's element count (k <= len) */
    unsigned char *vout = tv_alloc(nout, isz);
    int64_t *iout = tv_alloc(nout, sizeof(int64_t));
    topk_item *row = tv_alloc(p->len, sizeof *row);
    if (!src || !vout || !iout || !row) {
        tv_fail_oom(launch);
    } else {
        pthread_mutex_lock(&g_lock);
        g_dtype = self->dtype;
        g_largest = p->largest;
        for (int64_t o = 0; o < p->outer; o++) {
            for (int64_t in = 0; in < p->inner; in++) {
                for (int64_t l = 0; l < p->len; l++) {
                    ew_value v = ew_load(src + ((o * p->len + l) * p->inner + in) * (int64_t)isz, self->dtype);
                    row[l] = (topk_item){v.f, v.i, l};
                }
                qsort(row, (size_t)p->len, sizeof *row, rank_cmp);
                if (!p->sorted) qsort(row, (size_t)p->k, sizeof *row, index_cmp);
                for (int64_t j = 0; j < p->k; j++) {
                    int64_t at = (o * p->k + j) * p->inner + in;
                    memcpy(vout + at * (int64_t)isz, src + ((o * p->len + row[j].index) * p->inner + in) * (int64_t)isz,
                           isz);
                    iout[at] = row[j].index;
                }
            }
        }
        pthread_mutex_unlock(&g_lock);
        tv_scatter_bytes(vals, vout);
        tv_scatter_bytes(idxs, (const unsigned char *)iout);
    }
    free(src), free(vout), free(iout), free(row);
}

/* topk_plan self k dim largest sorted: dim in range, then k (the vendor's messages); the outputs' shape
 * (self's with k along dim) becomes the result shape; nothing to launch when k is 0 or self is empty. */
aclnnStatus opc_topk_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0);
    int64_t k = op_argument(c, s, 1)->i, dim = op_argument(c, s, 2)->i, rank = self->ndim;
    if ((rank == 0 && dim != 0 && dim != -1) || (rank > 0 && (dim < -rank || dim >= rank))) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Dimension out of range (expected to be in range of "
                            "[%lld, %lld], but got %lld)", (long long)(rank ? -rank : -1),
                            (long long)(rank ? rank - 1 : 0), (long long)dim);
        return ACLNN_ERR_PARAM_INVALID;
    }
    int64_t d = dim < 0 ? dim + (rank ? rank : 1) : dim;
    int64_t len = rank ? self->shape[d] : 1;
    if (k < 0 || k > len) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Selected index k out of range (max num of "
                            "self.size(%lld) is %lld, but k is %lld)", (long long)d, (long long)len, (long long)k);
        return ACLNN_ERR_PARAM_INVALID;
    }
    topk_params *prm = op_params(c, sizeof *prm);
    *prm = (topk_params){k, 1, len, 1, op_argument(c, s, 3)->i != 0, op_argument(c, s, 4)->i != 0};
    if (rank > 0) {   /* products of dims that may hold a 0 (tv_dims_product) */
        prm->outer = tv_dims_product(self->shape, 0, d);
        prm->inner = tv_dims_product(self->shape, d + 1, rank);
    }
    for (int64_t i = 0; i < rank; i++) c->shape[i] = i == d ? k : self->shape[i];
    c->ndim = rank;
    if (k == 0 || pyaclnn_stub_numel(self) == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}
