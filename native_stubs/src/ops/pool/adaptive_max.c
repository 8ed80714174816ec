/*
 * aclnnAdaptiveMaxPool2d and aclnnAdaptiveMaxPool2dBackward: torch's adaptive_max_pool2d (F.adaptive_max_pool2d,
 * nn.AdaptiveMaxPool2d) on the NPU (hicann/ops-nn pooling/adaptive_max_pool2d, adaptive_max_pool3d_grad op_api).
 * self is [N, C, H, W] or [C, H, W]; output (oh, ow) takes the maximum of rows floor(oh * H / OH) ..
 * ceil((oh + 1) * H / OH) - 1 (columns alike), the first maximum's flat index h * W + w in its plane; a NaN wins
 * (the last NaN's position: torch CPU's `val > max || isnan(val)`). The backward adds each gradOutput element to
 * gradInput at its index, in float64, one rounding. Definitions: adaptive_max.toml.
 */
#include <math.h>
#include <stdlib.h>

#include "kernels/view.h"
#include "ops/pool/pool.h"

typedef struct {
    int64_t planes, h, w, oh, ow;
} amxp_params;

void adaptive_max_pool_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const amxp_params *p = launch->params;
    int64_t hw = p->h * p->w, ohw = p->oh * p->ow;
    double *x = tv_load_double(&launch->inputs[0]);
    double *y = malloc(((size_t)(p->planes * ohw) + 1) * sizeof(double));
    double *idx = malloc(((size_t)(p->planes * ohw) + 1) * sizeof(double));
    if (x == NULL || y == NULL || idx == NULL) {
        tv_fail_oom(launch);
    } else {
        for (int64_t pl = 0; pl < p->planes; pl++)
            for (int64_t i = 0; i < p->oh; i++)
                for (int64_t j = 0; j < p->ow; j++) {
                    int64_t h0 = i * p->h / p->oh, h1 = ((i + 1) * p->h + p->oh - 1) / p->oh;
                    int64_t w0 = j * p->w / p->ow, w1 = ((j + 1) * p->w + p->ow - 1) / p->ow;
                    const double *plane = x + pl * hw;
                    int64_t at = h0 * p->w + w0;
                    for (int64_t h = h0; h < h1; h++)
                        for (int64_t w = w0; w < w1; w++) {
                            double v = plane[h * p->w + w];
                            if (v > plane[at] || isnan(v)) at = h * p->w + w;
                        }
                    y[pl * ohw + i * p->ow + j] = plane[at];
                    idx[pl * ohw + i * p->ow + j] = (double)at;
                }
        tv_store_double(&launch->outputs[0], y);
        tv_store_double(&launch->outputs[1], idx);
    }
    free(x), free(y), free(idx);
}

/* inputs: gradOutput, indices; output: gradInput */
void adaptive_max_pool_backward_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const amxp_params *p = launch->params;
    pool_index_scatter(launch, p->planes, p->h * p->w, p->oh * p->ow);
}

/* ---- steps ------------------------------------------------------------------------------------ */

#define invalid(c, ...) op_invalidf((c)->api, __VA_ARGS__)

static void geometry(op_call *c, const pyaclnn_stub_tensor *x, const pyaclnn_stub_tensor *y) {
    amxp_params *p = op_params(c, sizeof(amxp_params));
    p->planes = 1;
    for (int64_t d = 0; d + 2 < x->ndim; d++) p->planes *= x->shape[d];
    p->h = x->shape[x->ndim - 2], p->w = x->shape[x->ndim - 1];
    p->oh = y->shape[y->ndim - 2], p->ow = y->shape[y->ndim - 1];
}

/* amxp_int64 indicesOut: INT64 (OP_CHECK_DTYPE_NOT_MATCH(indices, DT_INT64)). */
aclnnStatus opc_amxp_int64(op_call *c, const op_step *s) {
    aclDataType dt = op_tensor(c, s, 0)->dtype;
    char b[24];
    if (dt == ACL_INT64) return ACLNN_SUCCESS;
    return invalid(c, "Tensor %s expected dtype is INT64 but found %s.", op_pname(c, s, 0), op_dtype_name(dt, b));
}

/* amxp_shape self outputSize outputOut indicesOut (CheckShape, CheckInpuNullTensor, CheckOutputSize): self 3-D or
 * 4-D, outputOut and indicesOut of one shape, non-empty non-batch dims, outputSize 2 positive values. */
aclnnStatus opc_amxp_shape(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0);
    if (x->ndim != 3 && x->ndim != 4) return invalid(c, "Self dims %lld should be in 3 or 4.", (long long)x->ndim);
    op_step eq = *s;
    eq.np = 2, eq.p[0] = s->p[2], eq.p[1] = s->p[3];
    aclnnStatus rc = opc_shape_equal(c, &eq);
    if (rc) return rc;
    for (int64_t d = 1; d < x->ndim; d++)
        if (x->shape[d] <= 0)
            return invalid(c, "adaptive_max_pooling2d():expected input to have non-empty spatiak dimensions, but input has "
                           "sizes %lld with dimension %lld being empty.", (long long)x->ndim, (long long)d);
    return pool_output_size2(c, s->p[1]);
}

/* amxp_plan self outputSize outputOut: outputOut is self's shape with the plane outputSize (the result's copy),
 * then the geometry; nothing for an empty self. */
aclnnStatus opc_amxp_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0), *y = op_tensor(c, s, 2);
    int64_t want[4];
    for (int64_t d = 0; d < x->ndim; d++) want[d] = x->shape[d];
    want[x->ndim - 2] = c->ints[s->p[1]].v[0], want[x->ndim - 1] = c->ints[s->p[1]].v[1];
    aclnnStatus rc = op_expected_size(c->api, op_pname(c, s, 2), y, want, x->ndim);
    if (rc) return rc;
    if (pyaclnn_stub_numel(x) == 0) c->nothing = c->done = 1;
    else geometry(c, x, y);
    return ACLNN_SUCCESS;
}

/* amxpb_shape gradOutput self indices gradInput (CheckShapeSame). */
aclnnStatus opc_amxpb_shape(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *go = op_tensor(c, s, 0), *x = op_tensor(c, s, 1), *ix = op_tensor(c, s, 2),
                              *gi = op_tensor(c, s, 3);
    if (x->ndim != gi->ndim || x->ndim != go->ndim || x->ndim != ix->ndim)
        return invalid(c, "Dims of self and gradOutput and gradInput and indices should be same, self[%lld], "
                       "gradOutput[%lld], gradInput[%lld], indices[%lld].", (long long)x->ndim, (long long)go->ndim,
                       (long long)gi->ndim, (long long)ix->ndim);
    for (int64_t d = 0; d < x->ndim; d++) {
        if (go->shape[d] != ix->shape[d]) return invalid(c, "gradOutput dims No.[%lld] must match indices dims.", (long long)d);
        if (x->shape[d] != gi->shape[d]) return invalid(c, "self dims No.[%lld] must match gradInput dims.", (long long)d);
    }
    return ACLNN_SUCCESS;
}

/* amxpb_format gradOutput self indices gradInput (CheckFormat): one storage format, no private one, 3-D or 4-D. */
aclnnStatus opc_amxpb_format(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 1);
    char a[24], b[24], d[24], e[24];
    for (int k = 0; k < 4; k++)
        if (op_tensor(c, s, k)->format != x->format)
            return invalid(c, "Format of self and gradOutput and gradInput and indices should be same, self[%s], "
                           "gradOutput[%s], gradInput[%s], indices[%s].", op_format_name(x->format, a),
                           op_format_name(op_tensor(c, s, 0)->format, b), op_format_name(op_tensor(c, s, 3)->format, d),
                           op_format_name(op_tensor(c, s, 2)->format, e));
    if (x->format != ACL_FORMAT_ND && x->format != ACL_FORMAT_NCHW && x->format != ACL_FORMAT_NCL &&
        x->format != ACL_FORMAT_NHWC && x->format != ACL_FORMAT_NCDHW && x->format != ACL_FORMAT_NDHWC)
        return invalid(c, "Format only support NCHW or NCL");
    static const int order[4] = {1, 3, 0, 2};
    for (int k = 0; k < 4; k++) {
        const pyaclnn_stub_tensor *t = op_tensor(c, s, order[k]);
        if (t->ndim != 3 && t->ndim != 4)
            return invalid(c, "3D or 4D tensor expected for %s but got dim num:%lld", op_pname(c, s, order[k]),
                           (long long)t->ndim);
    }
    return ACLNN_SUCCESS;
}

/* amxpb_plan gradOutput self indices: nothing when one is empty, else the geometry. */
aclnnStatus opc_amxpb_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *go = op_tensor(c, s, 0), *x = op_tensor(c, s, 1), *ix = op_tensor(c, s, 2);
    if (pyaclnn_stub_numel(go) == 0 || pyaclnn_stub_numel(x) == 0 || pyaclnn_stub_numel(ix) == 0) c->nothing = c->done = 1;
    else geometry(c, x, go);
    return ACLNN_SUCCESS;
}
