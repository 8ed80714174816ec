/*
 * aclnnRelu, aclnnInplaceRelu and aclnnThresholdBackward (relu's backward: torch_npu calls
 * threshold_backward(grad, result, 0)) (hicann/ops-nn activation/relu/op_api/aclnn_relu.cpp,
 * activation/threshold_grad_v2_d/op_api/aclnn_threshold_backward.cpp).
 *
 *   relu(x) = x > 0 ? x : 0 (NaN stays NaN, as torch; UINT8 is copied)
 *   thresholdBackward(dy, x, t) = x > t ? dy : 0, x and dy broadcast, t compared as FLOAT for float
 *   dtypes (the vendor's ToFloat) and exactly for integers.
 * Moves and comparisons: bit-exact (class a).
 *
 * BF16: the vendor's relu check admits it for SoC versions from 910B to 910E; the emulator also
 * admits it on Ascend 950 (the regbase list of threshold_backward has it, and torch_npu's bf16
 * models call relu there).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"

void relu_kernel(const pyaclnn_stub_launch *launch) {
    const pyaclnn_stub_tensor *x = &launch->inputs[0], *y = &launch->outputs[0];
    if (!tv_launch_views_ok(launch)) return;
    int64_t n = pyaclnn_stub_numel(x);
    unsigned char *buf = tv_gather_bytes(x);    /* all of x first: x and y may alias (in place) */
    if (buf == NULL) {
        tv_fail_oom(launch);
        return;
    }
    size_t isz = ew_itemsize(x->dtype);
    int is_float = ew_repr_of(x->dtype) == EW_REPR_F;
    for (int64_t i = 0; i < n; i++) {
        unsigned char *p = buf + i * (int64_t)isz;
        ew_value v = ew_load(p, x->dtype);
        int zero = is_float ? v.f <= 0 : v.i < 0;     /* NaN <= 0 is false: NaN stays */
        if (zero) memset(p, 0, isz);                  /* +0 in every dtype (relu(-0.0) = +0) */
    }
    tv_scatter_bytes(y, buf);
    free(buf);
}

/* relu_nothing self out: the vendor's early return -- empty, or UINT8 in place (relu is a copy). */
aclnnStatus opc_relu_nothing(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0);
    if (pyaclnn_stub_numel(self) == 0 || (s->p[0] == s->p[1] && self->dtype == ACL_UINT8)) c->nothing = 1;
    return ACLNN_SUCCESS;
}

/* ---- aclnnThresholdBackward ---------------------------------------------------------------- */

typedef struct {
    ew_value threshold;                    /* FLOAT value for float dtypes, the integer otherwise */
    int64_t ndim;
    int64_t shape[PYACLNN_STUB_MAX_DIMS];  /* the broadcast shape */
} tb_params;

void threshold_backward_kernel(const pyaclnn_stub_launch *launch) {
    const tb_params *p = launch->params;
    const pyaclnn_stub_tensor *dy = &launch->inputs[0], *x = &launch->inputs[1], *out = &launch->outputs[0];
    if (!tv_launch_views_ok(launch)) return;
    tv_bcast2 it;   /* it.off: dy's, x's */
    int64_t n = tv_bcast2_init(&it, dy, x, p->shape, p->ndim);
    size_t isz = ew_itemsize(out->dtype);
    int is_float = ew_repr_of(x->dtype) == EW_REPR_F;
    unsigned char *buf = malloc((size_t)n * isz + 1);   /* all reads before any write: out may alias */
    if (buf == NULL) {
        tv_fail_oom(launch);
        return;
    }
    for (int64_t i = 0; i < n; i++, tv_bcast2_next(&it)) {
        ew_value v = ew_load(tv_at(x, it.off[1]), x->dtype);
        int keep = is_float ? (float)v.f > (float)p->threshold.f : v.i > p->threshold.i;
        if (keep) memcpy(buf + i * (int64_t)isz, tv_at(dy, it.off[0]), isz);
        else memset(buf + i * (int64_t)isz, 0, isz);
    }
    tv_scatter_bytes(out, buf);
    free(buf);
}

/* tb_dtypes gradOutput self threshold TB: both in the SoC's list; on the 950 its last entry (INT64, the
 * ReluGrad path) only for a threshold of 0. */
aclnnStatus opc_tb_dtypes(op_call *c, const op_step *s) {
    const op_scalar *t = op_scalar_of(c, s, 2);
    size_t n;
    const aclDataType *list = op_list(s->list, &n);
    if (pyaclnn_stub_soc_family() == PYACLNN_SOC_950 && (float)ew_value_to_double(t->v, t->dtype) != 0.0f) n--;
    aclnnStatus rc = ew_check_dtype_in(c->api, op_pname(c, s, 0), op_tensor(c, s, 0)->dtype, list, n);
    return rc ? rc : ew_check_dtype_in(c->api, op_pname(c, s, 1), op_tensor(c, s, 1)->dtype, list, n);
}

/* tb_plan threshold gradOutput self: the threshold as the kernel compares it (FLOAT for float dtypes, the
 * vendor's ToFloat; converted to self's dtype otherwise) over the broadcast shape. */
aclnnStatus opc_tb_plan(op_call *c, const op_step *s) {
    const op_scalar *t = op_scalar_of(c, s, 0);
    const pyaclnn_stub_tensor *dy = op_tensor(c, s, 1), *x = op_tensor(c, s, 2);
    tb_params *prm = op_params(c, sizeof *prm);
    prm->ndim = c->ndim;
    for (int64_t d = 0; d < c->ndim; d++) prm->shape[d] = c->shape[d];
    if (ew_repr_of(x->dtype) == EW_REPR_F) prm->threshold.f = (double)(float)ew_value_to_double(t->v, t->dtype);
    else prm->threshold = ew_cast(t->v, t->dtype, x->dtype);
    if (pyaclnn_stub_numel(dy) == 0 || pyaclnn_stub_numel(x) == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}
