/* Selection and sorting along one dim (see select.h). */
#include "kernels/select.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    double f;       /* float dtypes */
    int64_t i;      /* integer dtypes (UINT64: the bit pattern, compared unsigned) */
    int64_t index;
} sel_item;

/* qsort has no context argument in C11: the comparators read these, set per launch under g_lock
 * (launches on different streams may run at the same time). */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static aclDataType g_dtype;
static int g_largest;

/* -1 if a ranks before b in the output order. */
static int rank_cmp(const void *pa, const void *pb) {
    const sel_item *a = pa, *b = pb;
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
    const sel_item *a = pa, *b = pb;
    return a->index < b->index ? -1 : a->index > b->index;
}

void sel_kernel(const pyaclnn_stub_launch *launch) {
    const sel_params *p = launch->params;
    const pyaclnn_stub_tensor *self = &launch->inputs[0];
    const pyaclnn_stub_tensor *idxs = p->index_out >= 0 ? &launch->outputs[p->index_out] : NULL;
    const pyaclnn_stub_tensor *vals = p->values_out >= 0 ? &launch->outputs[p->values_out] : NULL;
    if (!tv_launch_views_ok(launch)) return;
    size_t isz = ew_itemsize(self->dtype);
    int64_t width = p->kth ? 1 : p->k;        /* kth: only the k-th of each line's ranking is written */
    int64_t n = p->outer * width * p->inner;  /* the outputs' element count (k <= len) */
    unsigned char *src = tv_gather_bytes(self);
    unsigned char *vout = tv_alloc(n, isz);   /* (n * size overflow-checked) */
    int64_t *iout = tv_alloc(n, sizeof(int64_t));
    sel_item *row = tv_alloc(p->len, sizeof *row);
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
                    row[l] = (sel_item){v.f, v.i, l};
                }
                qsort(row, (size_t)p->len, sizeof *row, rank_cmp);
                if (!p->sorted) qsort(row, (size_t)p->k, sizeof *row, index_cmp);
                int64_t first_nan = p->len;   /* nan_wins: the ranking's first NaN (NaNs rank last) */
                while (p->nan_wins && ew_repr_of(self->dtype) == EW_REPR_F && first_nan > 0 &&
                       row[first_nan - 1].f != row[first_nan - 1].f)
                    first_nan--;
                for (int64_t j = p->kth ? p->k - 1 : 0; j < p->k; j++) {
                    int64_t at = (o * width + j - (p->k - width)) * p->inner + in, r = first_nan < p->len ? first_nan : j;
                    memcpy(vout + at * (int64_t)isz, src + ((o * p->len + row[r].index) * p->inner + in) * (int64_t)isz,
                           isz);
                    if (r != j) ew_store(vout + at * (int64_t)isz, self->dtype, (ew_value){.f = NAN});
                    iout[at] = row[r].index;
                }
            }
        }
        pthread_mutex_unlock(&g_lock);
        if (vals != NULL && vals->dtype == self->dtype) {
            tv_scatter_bytes(vals, vout);
        } else if (vals != NULL) {   /* values of another dtype: the vendor's closing Cast */
            tv_iter it;
            tv_iter_init(&it, vals);
            for (int64_t e = 0; e < n; e++, tv_iter_next(&it))
                ew_store(tv_at(vals, it.off), vals->dtype,
                         ew_cast(ew_load(vout + e * (int64_t)isz, self->dtype), self->dtype, vals->dtype));
        }
        if (idxs != NULL) tv_scatter_bytes(idxs, (const unsigned char *)iout);
    }
    free(src), free(vout), free(iout), free(row);
}
