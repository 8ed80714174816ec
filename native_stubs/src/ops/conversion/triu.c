/*
 * The kernel and steps of aclnnTriu, aclnnInplaceTriu (conversion.toml): out[..., i, j] = self[..., i, j]
 * if j - i >= diagonal else 0, over the last two dimensions (hicann/ops-math conversion/triu/op_api/
 * aclnn_triu.cpp); with the plan's `lower`, aclnnTril / aclnnInplaceTril (shape.toml: j - i <= diagonal,
 * conversion/tril/op_api/aclnn_tril.cpp). A move: bit-exact.
 * self is read completely before out is written, so any aliasing of the two views is safe.
 */
#include <stdlib.h>
#include <string.h>

#include "opbase/checks.h"
#include "ops_decls.h"

typedef struct {
    int64_t diagonal;
    int lower;        /* Tril: keep j - i <= diagonal */
} triu_params;

/* Walks the elements of t in row-major order, calling fn(ctx, linear index, element address). */
static void for_each(const pyaclnn_stub_tensor *t, size_t isz, void (*fn)(void *, int64_t, unsigned char *), void *ctx) {
    int64_t n = pyaclnn_stub_numel(t), idx[PYACLNN_STUB_MAX_DIMS] = {0};
    for (int64_t i = 0; i < n; i++) {
        int64_t off = t->offset;
        for (int64_t d = 0; d < t->ndim; d++) off += idx[d] * t->strides[d];
        fn(ctx, i, (unsigned char *)t->data + off * (int64_t)isz);
        for (int64_t d = t->ndim - 1; d >= 0; d--) {
            if (++idx[d] < t->shape[d]) break;
            idx[d] = 0;
        }
    }
}

typedef struct {
    unsigned char *buf;
    size_t isz;
    int64_t rows, cols, diagonal;
    int lower;
} triu_ctx;

static void read_one(void *ctx, int64_t i, unsigned char *p) {
    triu_ctx *c = ctx;
    memcpy(c->buf + i * (int64_t)c->isz, p, c->isz);
}

static void write_one(void *ctx, int64_t i, unsigned char *p) {
    triu_ctx *c = ctx;
    int64_t col = i % c->cols, row = (i / c->cols) % c->rows;
    if (c->lower ? col - row <= c->diagonal : col - row >= c->diagonal) memcpy(p, c->buf + i * (int64_t)c->isz, c->isz);
    else memset(p, 0, c->isz);   /* zero is all-zero bits in every supported dtype */
}

/* Both views row-major contiguous (the [2048, 2048] causal masks torch_npu builds for every causal SDPA
 * call): a row at a time, the kept columns copied and the rest zeroed, instead of an indexed walk per
 * element. The same bytes as the walk: an output overlapping self is read from a copy of self first.
 * Returns 0 only when out of host memory for that copy. */
static int rows_at_a_time(const triu_params *prm, const pyaclnn_stub_tensor *self, const pyaclnn_stub_tensor *out,
                          size_t isz) {
    int64_t n = pyaclnn_stub_numel(out), rows = out->shape[out->ndim - 2], cols = out->shape[out->ndim - 1];
    if (n == 0 || rows == 0 || cols == 0) return 1;
    const unsigned char *src = (const unsigned char *)self->data + self->offset * (int64_t)isz;
    unsigned char *dst = (unsigned char *)out->data + out->offset * (int64_t)isz, *copy = NULL;
    size_t bytes = (size_t)n * isz, row_bytes = (size_t)cols * isz;
    if (src != dst && src < dst + bytes && dst < src + bytes) {   /* overlapping, not the same view */
        if ((copy = malloc(bytes)) == NULL) return 0;
        memcpy(copy, src, bytes);
        src = copy;
    }
    /* clamped so that row + diagonal cannot overflow; the kept columns of a row are [lo, hi) */
    int64_t diag = prm->diagonal < -rows - 1 ? -rows - 1 : prm->diagonal > cols ? cols : prm->diagonal;
    for (int64_t r = 0; r < n / cols; r++) {
        int64_t i = r % rows, lo = 0, hi = cols;
        if (prm->lower) hi = i + diag + 1 < 0 ? 0 : i + diag + 1 > cols ? cols : i + diag + 1;
        else lo = i + diag < 0 ? 0 : i + diag > cols ? cols : i + diag;
        unsigned char *d = dst + (size_t)r * row_bytes;
        const unsigned char *s = src + (size_t)r * row_bytes;
        if (lo > 0) memset(d, 0, (size_t)lo * isz);   /* zero is all-zero bits in every supported dtype */
        if (hi > lo && d != s) memcpy(d + (size_t)lo * isz, s + (size_t)lo * isz, (size_t)(hi - lo) * isz);
        if (hi < cols) memset(d + (size_t)hi * isz, 0, (size_t)(cols - hi) * isz);
    }
    free(copy);
    return 1;
}

void triu_kernel(const pyaclnn_stub_launch *launch) {
    const triu_params *prm = launch->params;
    const pyaclnn_stub_tensor *self = &launch->inputs[0], *out = &launch->outputs[0];
    size_t isz = ew_itemsize(self->dtype);
    if (!op_view_in_device_memory(self, (int)(8 * isz)) || !op_view_in_device_memory(out, (int)(8 * isz))) {
        pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "%s: a view is not in device memory", launch->op_name);
        return;
    }
    if (pyaclnn_stub_is_contiguous(self) && pyaclnn_stub_is_contiguous(out)) {
        if (!rows_at_a_time(prm, self, out, isz))
            pyaclnn_stub_task_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of host memory", launch->op_name);
        return;
    }
    int64_t n = pyaclnn_stub_numel(out);
    triu_ctx c = {malloc((size_t)n * isz), isz, out->shape[out->ndim - 2], out->shape[out->ndim - 1], prm->diagonal,
                  prm->lower};
    if (c.buf == NULL) {
        pyaclnn_stub_task_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of host memory", launch->op_name);
        return;
    }
    for_each(self, isz, read_one, &c);
    for_each(out, isz, write_one, &c);
    free(c.buf);
}

/* triu_dtype self out: out has self's dtype. */
aclnnStatus opc_triu_dtype(op_call *c, const op_step *s) {
    aclDataType self = op_tensor(c, s, 0)->dtype, out = op_tensor(c, s, 1)->dtype;
    if (out == self) return ACLNN_SUCCESS;
    char b1[24], b2[24];
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "%s dtype %s should be the same as %s dtype %s",
                        op_pname(c, s, 1), op_dtype_name(out, b1), op_pname(c, s, 0), op_dtype_name(self, b2));
    return ACLNN_ERR_PARAM_INVALID;
}

/* triu_rank self N: 2 to N dimensions. */
aclnnStatus opc_triu_rank(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0);
    if (self->ndim >= 2 && self->ndim <= s->n) return ACLNN_SUCCESS;
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "%s must have 2 to %d dimensions, it has %lld",
                        op_pname(c, s, 0), (int)s->n, (long long)self->ndim);
    return ACLNN_ERR_PARAM_INVALID;
}

/* triu_plan self diagonal [1]: the upper triangle; with the integer 1, the lower one (Tril). */
aclnnStatus opc_triu_plan(op_call *c, const op_step *s) {
    triu_params *prm = op_params(c, sizeof *prm);
    prm->diagonal = op_argument(c, s, 1)->i;
    prm->lower = s->has_n && s->n == 1;
    return ACLNN_SUCCESS;
}

/* tril_rank self: at least 2 dims (the vendor's Tril message). */
aclnnStatus opc_tril_rank(op_call *c, const op_step *s) {
    if (op_tensor(c, s, 0)->ndim > 1) return ACLNN_SUCCESS;
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Dim of self should be last 2 dims.");
    return ACLNN_ERR_PARAM_INVALID;
}
