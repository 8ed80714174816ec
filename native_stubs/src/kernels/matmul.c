#include "kernels/matmul.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "numerics.h"
#include "opbase/checks.h"
#include "kernels/parallel.h"

aclnnStatus mm_plan_make(const char *api, const pyaclnn_stub_tensor *a, const pyaclnn_stub_tensor *b, mm_plan *p,
                         int64_t *shape, int64_t *ndim) {
    char ta[200], tb[200];
    if (a->ndim == 0 || b->ndim == 0) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "Matmul not support %s, %s",
                            tv_shape_text(a->shape, a->ndim, ta, sizeof ta), tv_shape_text(b->shape, b->ndim, tb, sizeof tb));
        return ACLNN_ERR_PARAM_INVALID;
    }
    int64_t ka = a->shape[a->ndim - 1], kb = b->ndim == 1 ? b->shape[0] : b->shape[b->ndim - 2];
    if (ka != kb) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "The k-axis of the two inputs are different %s, %s",
                            tv_shape_text(a->shape, a->ndim, ta, sizeof ta), tv_shape_text(b->shape, b->ndim, tb, sizeof tb));
        return ACLNN_ERR_PARAM_INVALID;
    }
    p->k = ka;
    p->m = a->ndim == 1 ? 1 : a->shape[a->ndim - 2];
    p->n = b->ndim == 1 ? 1 : b->shape[b->ndim - 1];
    int64_t abn = a->ndim > 2 ? a->ndim - 2 : 0, bbn = b->ndim > 2 ? b->ndim - 2 : 0;
    int64_t nb = abn > bbn ? abn : bbn;
    for (int64_t d = 0; d < nb; d++) {
        int64_t da = d - (nb - abn), db = d - (nb - bbn);
        int64_t sa = da >= 0 ? a->shape[da] : 1, sb = db >= 0 ? b->shape[db] : 1;
        if (sa != sb && sa != 1 && sb != 1) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "Broadcast %s and %s failed.",
                                tv_shape_text(a->shape, a->ndim, ta, sizeof ta),
                                tv_shape_text(b->shape, b->ndim, tb, sizeof tb));
            return ACLNN_ERR_PARAM_INVALID;
        }
        p->bshape[d] = sa == 1 ? sb : sa;
    }
    p->bndim = (int)nb;
    int64_t o = 0;
    for (int64_t d = 0; d < nb; d++) shape[o++] = p->bshape[d];
    if (a->ndim > 1) shape[o++] = p->m;
    if (b->ndim > 1) shape[o++] = p->n;
    *ndim = o;
    return ACLNN_SUCCESS;
}

/* The number of matrices of the plan's broadcast batch dims; -1 if it overflows int64. */
static int64_t batch_of(const mm_plan *p) {
    int64_t batch = 1;
    for (int d = 0; d < p->bndim; d++)
        if (__builtin_mul_overflow(batch, p->bshape[d], &batch)) return -1;
    return batch;
}

/* malloc of n1 * n2 * n3 floats (one byte more: never malloc(0)); NULL when memory is short or the size
 * overflows (broadcast operands may be 0-stride views whose fp32 copies no memory holds). */
static float *alloc_floats(int64_t n1, int64_t n2, int64_t n3) {
    int64_t n;
    size_t bytes;
    if (n1 < 0 || n2 < 0 || n3 < 0 || __builtin_mul_overflow(n1, n2, &n) || __builtin_mul_overflow(n, n3, &n) ||
        __builtin_mul_overflow((size_t)n, sizeof(float), &bytes) || bytes == SIZE_MAX)
        return NULL;
    return malloc(bytes + 1);
}

typedef struct {
    const pyaclnn_stub_tensor *t;
    const mm_plan *p;
    float *buf;
    int64_t rows, cols, rs, cs, tb;
    int round_fp16;
} load_job;

/* Rows [begin, end) of the stacked [batch * rows] copy. */
static void load_rows(void *ctx, size_t begin, size_t end) {
    const load_job *j = ctx;
    const pyaclnn_stub_tensor *t = j->t;
    const mm_plan *p = j->p;
    int64_t cols = j->cols, rs = j->rs, cs = j->cs;
    int64_t step = cs * (int64_t)ew_itemsize(t->dtype);   /* bytes from one column to the next */
    for (size_t row = begin; row < end; row++) {
        int64_t bi = (int64_t)row / j->rows, r = (int64_t)row % j->rows;
        int64_t base = t->offset, rem = bi;
        for (int d = p->bndim - 1; d >= 0; d--) {
            int64_t i = rem % p->bshape[d];
            rem /= p->bshape[d];
            int64_t td = d - (p->bndim - j->tb);
            if (td >= 0 && t->shape[td] != 1) base += i * t->strides[td];
        }
        float *drow = j->buf + (int64_t)row * cols;
        /* the row's first element; a strided row (a transposed weight) is walked from it by `step` bytes */
        const unsigned char *src = tv_at(t, base + r * rs);
        /* the three float dtypes widened exactly, as ew_cast does, without its double round trip */
        if (t->dtype == ACL_FLOAT && cs == 1) {
            memcpy(drow, src, (size_t)cols * sizeof(float));
        } else if (t->dtype == ACL_FLOAT) {
            for (int64_t c = 0; c < cols; c++) memcpy(&drow[c], src + c * step, sizeof(float));
        } else if (t->dtype == ACL_BF16) {
            for (int64_t c = 0; c < cols; c++) {
                uint16_t h;
                memcpy(&h, src + c * step, sizeof h);
                uint32_t u = (uint32_t)h << 16;   /* num_bf16_to_f32, inline */
                memcpy(&drow[c], &u, sizeof u);
            }
        } else if (t->dtype == ACL_FLOAT16) {
            for (int64_t c = 0; c < cols; c++) {
                uint16_t h;
                memcpy(&h, src + c * step, sizeof h);
                drow[c] = num_f16_to_f32(h);
            }
        } else {
            for (int64_t c = 0; c < cols; c++)
                drow[c] = (float)ew_cast(ew_load(tv_at(t, base + r * rs + c * cs), t->dtype), t->dtype,
                                         ACL_FLOAT).f;
        }
        for (int64_t c = 0; j->round_fp16 && c < cols; c++)
            drow[c] = (float)ew_cast((ew_value){drow[c], 0}, ACL_FLOAT, ACL_FLOAT16).f;
    }
}

/* The [batch][rows][cols] fp32 copy of a matrix operand: its last two dims (a 1-D operand is a row
 * (`as_row`) or a column), its batch dims broadcast to the plan's; the rows copied on the kernel pool.
 * NULL if it does not fit in memory. */
static float *load_matrix(const pyaclnn_stub_tensor *t, const mm_plan *p, int64_t rows, int64_t cols, int as_row,
                          int round_fp16) {
    int64_t batch = batch_of(p);
    float *buf = alloc_floats(batch, rows, cols);
    if (buf == NULL) return NULL;
    load_job j = {t, p, buf, rows, cols, 0, 0, t->ndim > 2 ? t->ndim - 2 : 0, round_fp16};
    if (t->ndim == 1) {
        j.rs = as_row ? 0 : t->strides[0];
        j.cs = as_row ? t->strides[0] : 0;
    } else {
        j.rs = t->strides[t->ndim - 2];
        j.cs = t->strides[t->ndim - 1];
    }
    size_t total = (size_t)(batch * rows);
    op_parallel_for(total, op_thread_count(total, (size_t)(1 + (1 << 17) / (cols + 1))), load_rows, &j);
    return buf;
}

typedef struct {
    const float *a, *b;
    float *c;
    int64_t a_batch, b_batch, c_batch, m, k, n;
} mm_job;

void mm_f32_block(const float *a, int64_t lda, const float *b, int64_t ldb, float *c, int64_t ldc, int64_t m,
                  int64_t k, int64_t n) {
    for (int64_t i = 0; i < m; i++) {
        const float *arow = a + i * lda;
        float *crow = c + i * ldc;
        for (int64_t x = 0; x < n; x++) crow[x] = 0.0f;
        for (int64_t kk = 0; kk < k; kk++) {
            float av = arow[kk];
            const float *brow = b + kk * ldb;
            for (int64_t x = 0; x < n; x++) crow[x] += av * brow[x];
        }
    }
}

/* Rows [begin, end) of the stacked [batch * m] output rows: c[i, :] = sum_k a[i, k] * b[k, :], in fp32. */
static void mm_rows(void *ctx, size_t begin, size_t end) {
    const mm_job *j = ctx;
    int64_t m = j->m, k = j->k, n = j->n;
    for (size_t row = begin; row < end; row++) {
        int64_t bi = (int64_t)row / m, r = (int64_t)row % m;
        mm_f32_block(j->a + bi * j->a_batch + r * k, k, j->b + bi * j->b_batch, n, j->c + bi * j->c_batch + r * n, n,
                     1, k, n);
    }
}

/* The BLAS engine's unit of work: rows [r0, r0 + MM_BLAS_ROWS) of one batch's product, one sgemm call each.
 * The cut depends on the shape only, never on the thread count: OpenBLAS picks its kernels (and for small
 * products its summation order) from the call's m, n, k, so a cut by threads would make results depend on
 * PYACLNN_STUB_KERNEL_THREADS. */
#define MM_BLAS_ROWS 256

static void mm_blas_units(void *ctx, size_t begin, size_t end) {
    const mm_job *j = ctx;
    int64_t per = (j->m + MM_BLAS_ROWS - 1) / MM_BLAS_ROWS;
    for (size_t u = begin; u < end; u++) {
        int64_t bi = (int64_t)u / per, r0 = (int64_t)u % per * MM_BLAS_ROWS;
        int64_t rows = j->m - r0 < MM_BLAS_ROWS ? j->m - r0 : MM_BLAS_ROWS;
        mm_blas_sgemm(j->a + bi * j->a_batch + r0 * j->k, j->k, j->b + bi * j->b_batch, j->n,
                      j->c + bi * j->c_batch + r0 * j->n, j->n, rows, j->k, j->n);
    }
}

void mm_f32(const float *A, int64_t a_batch, const float *B, int64_t b_batch, float *C, int64_t c_batch,
            int64_t batch, int64_t m, int64_t k, int64_t n) {
    mm_job job = {A, B, C, a_batch, b_batch, c_batch, m, k, n};
    if (batch <= 0 || m <= 0 || n <= 0) return;
    if (k > 0 && m <= INT_MAX && n <= INT_MAX && k <= INT_MAX && mm_blas_active()) {
        size_t units = (size_t)(batch * ((m + MM_BLAS_ROWS - 1) / MM_BLAS_ROWS));
        int64_t unit_work = (m < MM_BLAS_ROWS ? m : MM_BLAS_ROWS) * k * n;   /* multiply-adds per unit */
        size_t min_units = (size_t)(1 + (1 << 20) / (unit_work + 1));
        op_parallel_for(units, op_thread_count(units, min_units), mm_blas_units, &job);
        return;
    }
    size_t rows = (size_t)(batch * m);
    size_t min_rows = (size_t)(1 + (1 << 16) / (k * n + 1));
    op_parallel_for(rows, op_thread_count(rows, min_rows), mm_rows, &job);
}

typedef struct {
    unsigned char *dst;
    const float *src;
    aclDataType dtype;
} store_job;

static void store_range(void *ctx, size_t begin, size_t end) {
    const store_job *j = ctx;
    if (j->dtype == ACL_FLOAT)
        memcpy(j->dst + 4 * begin, j->src + begin, (end - begin) * sizeof(float));
    else if (j->dtype == ACL_BF16)
        num_f32_to_bf16_n(j->src + begin, (uint16_t *)(void *)(j->dst + 2 * begin), end - begin, NUM_RINT);
    else
        num_f32_to_f16_n(j->src + begin, (uint16_t *)(void *)(j->dst + 2 * begin), end - begin, NUM_RINT);
}

/* tv_store_float(out, C), with the common case -- a row-major out of a float dtype -- done directly on the
 * kernel pool: the same rounding (the NUM_RINT arrays give num_f32_to_f16 / num_f32_to_bf16's results, as
 * ew_store) without the generic walk. */
static void store_result(const pyaclnn_stub_tensor *out, const float *C) {
    int64_t n = pyaclnn_stub_numel(out), expect = 1;
    int dense = 1;
    for (int64_t d = out->ndim - 1; d >= 0; d--) {
        if (out->shape[d] != 1 && out->strides[d] != expect) dense = 0;
        expect *= out->shape[d];
    }
    if (!dense || !(out->dtype == ACL_FLOAT || out->dtype == ACL_FLOAT16 || out->dtype == ACL_BF16) ||
        (out->dtype != ACL_FLOAT && ((uintptr_t)tv_at(out, out->offset) & 1))) {
        tv_store_float(out, C);
        return;
    }
    store_job j = {tv_at(out, out->offset), C, out->dtype};
    op_parallel_for((size_t)n, op_thread_count((size_t)n, 1 << 16), store_range, &j);
}

/* The cube's result in its own dtype (mm_result_dtype) when that is narrower than FLOAT and not out's (the cast to
 * out rounds once more then). Addmm / Baddbmm keep the fp32 result: their epilogue is not modelled per dtype. */
static void round_result(float *C, int64_t n, aclDataType result, aclDataType out) {
    if (result == ACL_FLOAT || result == out) return;
    for (int64_t i = 0; i < n; i++)
        C[i] = result == ACL_FLOAT16 ? num_f16_to_f32(num_f32_to_f16(C[i])) : num_bf16_to_f32(num_f32_to_bf16(C[i]));
}

void mm_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const mm_plan *p = launch->params;
    const pyaclnn_stub_tensor *a = &launch->inputs[0], *b = &launch->inputs[1], *out = &launch->outputs[0];
    int64_t batch = batch_of(p);
    float *A = load_matrix(a, p, p->m, p->k, 1, p->fp16_inputs);
    float *B = load_matrix(b, p, p->k, p->n, 0, p->fp16_inputs);
    float *C = alloc_floats(batch, p->m, p->n);
    float *bias = NULL;
    int64_t bias_rows = p->m;   /* a bias of 3 dims (Baddbmm) holds one [m, n] block per batch */
    if (p->has_bias && A && B && C) {
        /* The bias broadcast to [m, n] (Addmm, or a bias of at most 2 dims), or to [batch, m, n]. */
        const pyaclnn_stub_tensor *s = &launch->inputs[2];
        int64_t shape[3] = {batch, p->m, p->n};
        int three = s->ndim == 3;
        bias_rows = three ? batch * p->m : p->m;
        bias = tv_load_float_as(s, three ? shape : shape + 1, three ? 3 : 2);
    }
    if (A == NULL || B == NULL || C == NULL || (p->has_bias && bias == NULL)) {
        tv_fail_oom(launch);
    } else {
        mm_f32(A, p->m * p->k, B, p->k * p->n, C, p->m * p->n, batch, p->m, p->k, p->n);
        for (int64_t r = 0; p->has_bias && r < batch * p->m; r++) {   /* beta * bias + alpha * (a @ b) */
            const float *brow = bias + (r % bias_rows) * p->n;
            float *crow = C + r * p->n;
            for (int64_t x = 0; x < p->n; x++)
                crow[x] = p->beta == 0.0f ? p->alpha * crow[x] : p->beta * brow[x] + p->alpha * crow[x];
        }
        round_result(C, batch * p->m * p->n, p->has_bias ? ACL_FLOAT : mm_result_dtype(a->dtype, b->dtype,
                     out->dtype, p->cube_math_type), out->dtype);
        store_result(out, C);
    }
    free(A);
    free(B);
    free(C);
    free(bias);
}
