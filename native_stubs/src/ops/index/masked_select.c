/*
 * aclnnMaskedSelect (index.toml): the elements of self (broadcast with mask) where mask is true, in
 * row-major order, into the 1-D out (hicann/ops-math conversion/masked_select_v3/op_api/aclnn_masked_select.cpp).
 *
 * The output shape depends on the data: out is allocated with the broadcast element count, the
 * kernel writes the selected elements to its front and reports their number, and phase 2 waits for
 * the stream and sets out's view shape to [count] (opbase's OP_OUTSHAPE; torch_npu's masked_select
 * then reads it with aclGetViewShape and resizes). Elements of out past the count are left as they
 * were. self is cast to out's dtype (the vendor's l0op::Cast, the NPU's Cast rules), a UINT8 mask to
 * BOOL (non-zero is true). A move: bit-exact.
 */
#include <string.h>

#include "opbase/checks.h"
#include "kernels/view.h"
#include "ops_decls.h"

typedef struct {
    int64_t ndim;                          /* the broadcast shape of self and mask */
    int64_t shape[PYACLNN_STUB_MAX_DIMS];
} ms_params;

void masked_select_kernel(const pyaclnn_stub_launch *launch) {
    const ms_params *prm = launch->params;
    const pyaclnn_stub_tensor *self = &launch->inputs[0], *mask = &launch->inputs[1], *out = &launch->outputs[0];
    size_t self_isz = ew_itemsize(self->dtype), out_isz = ew_itemsize(out->dtype);
    if (!op_view_in_device_memory(self, (int)(8 * self_isz)) || !op_view_in_device_memory(mask, 8) ||
        !op_view_in_device_memory(out, (int)(8 * out_isz))) {
        pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "%s: a view is not in device memory", launch->op_name);
        return;
    }
    tv_bcast2 it;   /* self and mask over their broadcast shape */
    int64_t n = tv_bcast2_init(&it, self, mask, prm->shape, prm->ndim);
    const unsigned char *sbase = self->data, *mbase = mask->data;
    unsigned char *obase = out->data;
    int64_t count = 0;
    int same = self->dtype == out->dtype;
    for (int64_t i = 0; i < n; i++, tv_bcast2_next(&it)) {
        if (mbase[it.off[1]] != 0) {   /* BOOL, or UINT8 cast to BOOL: non-zero is true */
            unsigned char *dst = obase + (out->offset + count * out->strides[0]) * (int64_t)out_isz;
            const unsigned char *src = sbase + it.off[0] * (int64_t)self_isz;
            if (same) memcpy(dst, src, out_isz);
            else ew_store(dst, out->dtype, ew_cast(ew_load(src, self->dtype), self->dtype, out->dtype));
            count++;
        }
    }
    if (launch->out_shape != NULL) {
        launch->out_shape->dims[0] = count;
        launch->out_shape->ndim = 1;
    }
}

/* masked_select_out out: out is 1-D with the broadcast shape's element count (the shape `broadcast` left);
 * nothing to launch when that is 0 (the vendor returns an executor that does nothing; out keeps its shape [0]). */
aclnnStatus opc_masked_select_out(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *out = op_tensor(c, s, 0);
    if (out->ndim != 1) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "out must be 1-dimensional, but it has %lld dimensions",
                            (long long)out->ndim);
        return ACLNN_ERR_PARAM_INVALID;
    }
    int64_t n = 1;
    for (int64_t d = 0; d < c->ndim; d++) n *= c->shape[d];
    if (out->shape[0] != n) {
        char buf[160];
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "The out shape size %lld is not the same as the "
                            "broadcast shape size %lld of self and mask (broadcast shape %s)", (long long)out->shape[0],
                            (long long)n, tv_shape_text(c->shape, c->ndim, buf, sizeof buf));
        return ACLNN_ERR_PARAM_INVALID;
    }
    ms_params *prm = op_params(c, sizeof *prm);
    prm->ndim = c->ndim;
    for (int64_t d = 0; d < c->ndim; d++) prm->shape[d] = c->shape[d];
    if (n == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}
