/*
 * aclnnTriu, aclnnInplaceTriu: out[..., i, j] = self[..., i, j] if j - i >= diagonal else 0, over the
 * last two dimensions (hicann/ops-math conversion/triu/op_api/aclnn_triu.cpp). A move: bit-exact.
 * self is read completely before out is written, so any aliasing of the two views is safe.
 */
#include <stdlib.h>
#include <string.h>

#include "aclnnop/aclnn_triu.h"
#include "opbase/checks.h"

static const aclDataType TRIU[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE, ACL_INT8, ACL_INT16,
                                   ACL_INT32, ACL_INT64,   ACL_UINT8, ACL_BOOL};

typedef struct {
    int64_t diagonal;
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
} triu_ctx;

static void read_one(void *ctx, int64_t i, unsigned char *p) {
    triu_ctx *c = ctx;
    memcpy(c->buf + i * (int64_t)c->isz, p, c->isz);
}

static void write_one(void *ctx, int64_t i, unsigned char *p) {
    triu_ctx *c = ctx;
    int64_t col = i % c->cols, row = (i / c->cols) % c->rows;
    if (col - row >= c->diagonal) memcpy(p, c->buf + i * (int64_t)c->isz, c->isz);
    else memset(p, 0, c->isz);   /* zero is all-zero bits in every supported dtype */
}

static void triu_kernel(const pyaclnn_stub_launch *launch) {
    const triu_params *prm = launch->params;
    const pyaclnn_stub_tensor *self = &launch->inputs[0], *out = &launch->outputs[0];
    size_t isz = ew_itemsize(self->dtype);
    if (!op_view_in_device_memory(self, (int)(8 * isz)) || !op_view_in_device_memory(out, (int)(8 * isz))) {
        pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "%s: a view is not in device memory", launch->op_name);
        return;
    }
    int64_t n = pyaclnn_stub_numel(out);
    triu_ctx c = {malloc((size_t)n * isz), isz, out->shape[out->ndim - 2], out->shape[out->ndim - 1], prm->diagonal};
    if (c.buf == NULL) {
        pyaclnn_stub_task_fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "%s: out of host memory", launch->op_name);
        return;
    }
    for_each(self, isz, read_one, &c);
    for_each(out, isz, write_one, &c);
    free(c.buf);
}

static aclnnStatus triu_phase1(const char *api, const char *op_name, const aclTensor *selfArg, int64_t diagonal,
                               const aclTensor *outArg, int inplace, uint64_t *workspaceSize, aclOpExecutor **executor) {
    const char *self_name = inplace ? "selfRef" : "self";
    ew_ptr_arg ptrs[] = {{self_name, selfArg}, {"out", outArg}};
    aclnnStatus rc = ew_check_not_null(api, ptrs, inplace ? 1 : 2, workspaceSize, executor);
    if (rc) return rc;
    pyaclnn_stub_tensor self, out;
    if ((rc = op_tensor_arg(api, self_name, selfArg, &self))) return rc;
    if (inplace) out = self;
    else if ((rc = op_tensor_arg(api, "out", outArg, &out))) return rc;
    if ((rc = ew_check_dtype_in(api, self_name, self.dtype, TRIU, sizeof TRIU / sizeof TRIU[0]))) return rc;
    char b1[24], b2[24];
    if (out.dtype != self.dtype) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "out dtype %s should be the same as self dtype %s",
                            op_dtype_name(out.dtype, b1), op_dtype_name(self.dtype, b2));
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (self.ndim < 2 || self.ndim > EW_MAX_DIM) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "%s must have 2 to %d dimensions, it has %lld", self_name,
                            EW_MAX_DIM, (long long)self.ndim);
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (!inplace && (rc = ew_check_shape(api, "out", &out, self.shape, self.ndim))) return rc;
    triu_params prm = {diagonal};
    const aclTensor *inputs[1] = {selfArg};
    aclOpExecutor *e = pyaclnn_stub_executor_new(op_name, pyaclnn_stub_numel(&self) == 0 ? NULL : triu_kernel, &prm,
                                                 sizeof prm, inputs, 1, &outArg, 1, 0);
    if (e == NULL) {
        pyaclnn_stub_report(ACLNN_ERR_INNER_CREATE_EXECUTOR, api, "could not create the executor (out of memory)");
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    }
    *workspaceSize = 0;
    *executor = e;
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnTriuGetWorkspaceSize(const aclTensor *self, int64_t diagonal, aclTensor *out, uint64_t *workspaceSize,
                                      aclOpExecutor **executor) {
    return triu_phase1("aclnnTriuGetWorkspaceSize", "Triu", self, diagonal, out, 0, workspaceSize, executor);
}

aclnnStatus aclnnInplaceTriuGetWorkspaceSize(aclTensor *selfRef, int64_t diagonal, uint64_t *workspaceSize,
                                             aclOpExecutor **executor) {
    return triu_phase1("aclnnInplaceTriuGetWorkspaceSize", "InplaceTriu", selfRef, diagonal, selfRef, 1,
                       workspaceSize, executor);
}

EW_DEFINE_PHASE2(aclnnTriu)
EW_DEFINE_PHASE2(aclnnInplaceTriu)
