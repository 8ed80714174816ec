/*
 * aclnnEmbeddingDenseBackward (hicann/ops-nn index/embedding_dense_grad_v2/op_api): the gradient of
 * aclnnEmbedding's weight, out[numWeights, D]: out[w] = sum of grad rows whose index is w (rows of
 * paddingIdx contribute nothing), divided by w's count when scaleGradByFreq.
 * Arithmetic (class c): the rows are summed in fp32 (the vendor casts grad to fp32 for the kernel) in
 * index order (its stable sort keeps that order within a row) and rounded once to out's dtype; how the
 * NPU splits long segments over cores is not published. An index outside [0, numWeights) is a device
 * fault. Validation in the vendor's order:
 *   1. grad, indices, out non-NULL                                                    -> 161001
 *   2. grad FLOAT/FLOAT16/BF16, indices in the list, out FLOAT/FLOAT16/BF16            -> 161002
 *   3. grad, indices, out at most 8 dims                                               -> 161002
 *   4. grad's leading dims hold as many rows as indices has elements                   -> 161002
 *   5. out is 2-D [numWeights, grad's last dim]                                         -> 161002
 */
#include <stdlib.h>
#include <string.h>

#include "aclnnop/aclnn_embedding_dense_backward.h"
#include "opbase/checks.h"
#include "kernels/view.h"

#define N(a) (sizeof a / sizeof a[0])

static const aclDataType GRAD_DTYPES[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
static const aclDataType INDICES_DTYPES[] = {ACL_FLOAT16, ACL_FLOAT, ACL_DOUBLE, ACL_INT8, ACL_UINT8,
                                             ACL_INT16,   ACL_INT32, ACL_INT64,  ACL_BOOL};

typedef struct {
    uint64_t num_weights, padding_idx;
    int scale_by_freq;
} edb_plan;

static void edb_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const edb_plan *p = launch->params;
    const pyaclnn_stub_tensor *grad = &launch->inputs[0], *ind = &launch->inputs[1], *out = &launch->outputs[0];
    int64_t d = out->shape[1], rows = pyaclnn_stub_numel(ind), nw = (int64_t)p->num_weights;
    float *g = tv_load_float(grad);
    double *ix = tv_load_double(ind);
    float *acc = calloc((size_t)(nw * d) + 1, sizeof(float));
    int64_t *count = calloc((size_t)nw + 1, sizeof(int64_t));
    if (g == NULL || ix == NULL || acc == NULL || count == NULL) {
        tv_fail_oom(launch);
        goto done;
    }
    for (int64_t r = 0; r < rows; r++) {
        if (!(ix[r] >= 0 && ix[r] < (double)nw)) {
            pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "%s: index %g is out of range [0, %lld)",
                                   launch->op_name, ix[r], (long long)nw);
            goto done;
        }
        count[(int64_t)ix[r]]++;
    }
    for (int64_t r = 0; r < rows; r++) {
        int64_t w = (int64_t)ix[r];
        if ((uint64_t)w == p->padding_idx) continue;
        for (int64_t c = 0; c < d; c++) acc[w * d + c] += g[r * d + c];
    }
    if (p->scale_by_freq)
        for (int64_t w = 0; w < nw; w++)
            if (count[w] > 1)
                for (int64_t c = 0; c < d; c++) acc[w * d + c] /= (float)count[w];
    tv_store_float(out, acc);
done:
    free(g);
    free(ix);
    free(acc);
    free(count);
}

aclnnStatus aclnnEmbeddingDenseBackwardGetWorkspaceSize(const aclTensor *grad, const aclTensor *indices,
                                                        uint64_t numWeights, uint64_t paddingIdx, bool scaleGradByFreq,
                                                        const aclTensor *out, uint64_t *workspaceSize,
                                                        aclOpExecutor **executor) {
    static const char API[] = "aclnnEmbeddingDenseBackwardGetWorkspaceSize";
    const char *names[] = {"grad", "indices", "out"};
    const void *ptrs[] = {grad, indices, out};
    aclnnStatus rc = tv_check_not_null(API, names, ptrs, 3, workspaceSize, executor);
    if (rc) return rc;
    pyaclnn_stub_tensor g, ix, o;
    if ((rc = op_tensor_arg(API, "grad", grad, &g))) return rc;
    if ((rc = op_tensor_arg(API, "indices", indices, &ix))) return rc;
    if ((rc = op_tensor_arg(API, "out", out, &o))) return rc;
    if ((rc = ew_check_dtype_in(API, "grad", g.dtype, GRAD_DTYPES, N(GRAD_DTYPES)))) return rc;
    if ((rc = ew_check_dtype_in(API, "indices", ix.dtype, INDICES_DTYPES, N(INDICES_DTYPES)))) return rc;
    if ((rc = ew_check_dtype_in(API, "out", o.dtype, GRAD_DTYPES, N(GRAD_DTYPES)))) return rc;
    if ((rc = ew_check_max_dim(API, "grad", &g, EW_MAX_DIM))) return rc;
    if ((rc = ew_check_max_dim(API, "indices", &ix, EW_MAX_DIM))) return rc;
    if ((rc = ew_check_max_dim(API, "out", &o, EW_MAX_DIM))) return rc;
    char a[200], b[200];
    if (g.ndim == 0) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "grad must have at least 1 dimension");
        return ACLNN_ERR_PARAM_INVALID;
    }
    int64_t last = g.shape[g.ndim - 1];
    if (last != 0) {
        int64_t grows = 1;
        for (int64_t d = 0; d + 1 < g.ndim; d++) grows *= g.shape[d];
        if (grows != pyaclnn_stub_numel(&ix)) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "grad shape [%s] is not match with indices shape [%s].",
                                tv_shape_text(g.shape, g.ndim, a, sizeof a), tv_shape_text(ix.shape, ix.ndim, b, sizeof b));
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    if (o.ndim != 2) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "outDim shape is not equal to 2");
        return ACLNN_ERR_PARAM_INVALID;
    }
    if ((uint64_t)o.shape[0] != numWeights || o.shape[1] != last) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "outshape [%s] is not match with infershape {%llu, %lld}.",
                            tv_shape_text(o.shape, o.ndim, a, sizeof a), (unsigned long long)numWeights,
                            (long long)last);
        return ACLNN_ERR_PARAM_INVALID;
    }
    edb_plan plan = {numWeights, paddingIdx, scaleGradByFreq};
    const aclTensor *in[2] = {grad, indices};
    const aclTensor *outs[1] = {out};
    return tv_make_executor(API, "EmbeddingDenseBackward", pyaclnn_stub_numel(&o) ? edb_kernel : NULL, &plan,
                            sizeof plan, in, 2, outs, 1, workspaceSize, executor);
}

aclnnStatus aclnnEmbeddingDenseBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                        const aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnEmbeddingDenseBackward", workspace, workspaceSize, executor, stream);
}
