/*
 * aclnnEmbedding and aclnnEmbeddingDenseBackward (index.toml): the steps and the backward's kernel.
 *
 * Embedding (hicann/ops-nn index/embedding/op_api/aclnn_embedding.cpp): out = weight[indices], rows of
 * weight gathered by the gather engine's idx_gather_kernel (kernels/gather.h): bit-exact (bytes moved).
 * Besides the vendor's checks, out's last dims must be weight's (the emulator's own check).
 *
 * EmbeddingDenseBackward (hicann/ops-nn index/embedding_dense_grad_v2/op_api): the gradient of
 * aclnnEmbedding's weight, out[numWeights, D]: out[w] = sum of grad rows whose index is w (rows of
 * paddingIdx contribute nothing), divided by w's count when scaleGradByFreq.
 * Arithmetic (class c): the rows are summed in fp32 (the vendor casts grad to fp32 for the kernel) in
 * index order (its stable sort keeps that order within a row) and rounded once to out's dtype; how the
 * NPU splits long segments over cores is not published. An index outside [0, numWeights) is a device
 * fault.
 */
#include <stdlib.h>
#include <string.h>

#include "kernels/gather.h"
#include "opbase/checks.h"
#include "ops_decls.h"

/* ---- aclnnEmbedding ------------------------------------------------------------------------------ */

/* embedding_plan weight indices out: out has one dim more than indices and starts with indices' shape;
 * weight has at least one dim; the gather plan (one slot: indices, none when indices is empty) and out has
 * its result shape. */
aclnnStatus opc_embedding_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *w = op_tensor(c, s, 0), *ix = op_tensor(c, s, 1), *o = op_tensor(c, s, 2);
    char a[200], b[200];
    if (o->ndim != ix->ndim + 1) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "out dim [%lld] should be one larger than indices dim "
                            "[%lld].", (long long)o->ndim, (long long)ix->ndim);
        return ACLNN_ERR_PARAM_INVALID;
    }
    for (int64_t d = 0; d < ix->ndim; d++) {
        if (o->shape[d] != ix->shape[d]) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "out shape [%s] is not match with indices shape [%s].",
                                tv_shape_text(o->shape, o->ndim, a, sizeof a),
                                tv_shape_text(ix->shape, ix->ndim, b, sizeof b));
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    if (w->ndim < 1) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "weight must have at least 1 dimension");
        return ACLNN_ERR_PARAM_INVALID;
    }
    idx_plan *plan = op_params(c, sizeof *plan);
    plan->k = pyaclnn_stub_numel(ix) == 0 ? 0 : 1;   /* nothing gathered */
    plan->input_of[0] = 1;
    pyaclnn_stub_tensor views[2] = {*w, *ix};
    aclnnStatus rc = idx_plan_make(c->api, views, plan);
    if (rc == ACLNN_SUCCESS && plan->k) rc = ew_check_shape(c->api, op_pname(c, s, 2), o, plan->out_shape, plan->out_ndim);
    return rc;
}

/* ---- aclnnEmbeddingDenseBackward ----------------------------------------------------------------- */

typedef struct {
    uint64_t num_weights, padding_idx;
    int scale_by_freq;
} edb_plan;

void embedding_dense_backward_kernel(const pyaclnn_stub_launch *launch) {
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

/* edb_plan grad indices numWeights paddingIdx scaleGradByFreq out: grad has a dim; its leading dims hold as
 * many rows as indices has elements (unless its last dim is 0); out is 2-D [numWeights, grad's last dim]. */
aclnnStatus opc_edb_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *g = op_tensor(c, s, 0), *ix = op_tensor(c, s, 1), *o = op_tensor(c, s, 5);
    uint64_t num_weights = (uint64_t)op_argument(c, s, 2)->i;
    char a[200], b[200];
    if (g->ndim == 0) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "grad must have at least 1 dimension");
        return ACLNN_ERR_PARAM_INVALID;
    }
    int64_t last = g->shape[g->ndim - 1];
    if (last != 0) {
        int64_t grows = 1;
        for (int64_t d = 0; d + 1 < g->ndim; d++) grows *= g->shape[d];
        if (grows != pyaclnn_stub_numel(ix)) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "grad shape [%s] is not match with indices shape [%s].",
                                tv_shape_text(g->shape, g->ndim, a, sizeof a),
                                tv_shape_text(ix->shape, ix->ndim, b, sizeof b));
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    if (o->ndim != 2) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "outDim shape is not equal to 2");
        return ACLNN_ERR_PARAM_INVALID;
    }
    if ((uint64_t)o->shape[0] != num_weights || o->shape[1] != last) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "outshape [%s] is not match with infershape {%llu, %lld}.",
                            tv_shape_text(o->shape, o->ndim, a, sizeof a), (unsigned long long)num_weights,
                            (long long)last);
        return ACLNN_ERR_PARAM_INVALID;
    }
    edb_plan *plan = op_params(c, sizeof *plan);
    plan->num_weights = num_weights;
    plan->padding_idx = (uint64_t)op_argument(c, s, 3)->i;
    plan->scale_by_freq = (int)op_argument(c, s, 4)->i;
    return ACLNN_SUCCESS;
}
