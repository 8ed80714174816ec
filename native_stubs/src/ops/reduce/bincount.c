/*
 * aclnnBincount (bincount.toml): out[v] = the count of self's elements equal to v (v in [0, len(out))), or the
 * sum of their weights, in double, rounded once to out's dtype (hicann/ops-math math/bincount op_api:
 * self cast to INT32, weights to DOUBLE unless FLOAT / DOUBLE, the sums cast to out). Elements outside
 * [0, len(out)) are not counted (torch_npu sizes out from self's maximum).
 */
#include <stdlib.h>

#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"

typedef struct {
    int64_t size;
    int weighted;
} bincount_params;

void bincount_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const bincount_params *p = launch->params;
    const pyaclnn_stub_tensor *self = &launch->inputs[0], *out = &launch->outputs[0];
    const pyaclnn_stub_tensor *w = p->weighted ? &launch->inputs[1] : NULL;
    double *sums = calloc((size_t)p->size + 1, sizeof *sums);
    if (sums == NULL) {
        tv_fail_oom(launch);
        return;
    }
    tv_iter is, iw;
    tv_iter_init(&is, self);
    if (w) tv_iter_init(&iw, w);
    for (int64_t n = pyaclnn_stub_numel(self), i = 0; i < n; i++, tv_iter_next(&is)) {
        int64_t v = (int32_t)ew_load(tv_at(self, is.off), self->dtype).i;   /* the op_api's Cast to INT32 */
        double x = 1.0;
        if (w) {
            ew_value e = ew_load(tv_at(w, iw.off), w->dtype);
            x = ew_repr_of(w->dtype) == EW_REPR_F ? e.f : (double)e.i;
            tv_iter_next(&iw);
        }
        if (v >= 0 && v < p->size) sums[v] += x;
    }
    tv_iter it;
    tv_iter_init(&it, out);
    for (int64_t v = 0; v < p->size; v++, tv_iter_next(&it)) {
        ew_value r = ew_repr_of(out->dtype) == EW_REPR_F ? ew_cast((ew_value){sums[v], 0}, ACL_DOUBLE, out->dtype)
                                                         : (ew_value){0, (int64_t)sums[v]};
        ew_store(tv_at(out, it.off), out->dtype, r);
    }
    free(sums);
}

/* bincount_plan self weights minlength out: self 1-d, weights (if any) of self's shape, out 1-d of at most
 * INT32_MAX elements; an empty self fills out with zeros when minlength > 0 (else nothing). */
aclnnStatus opc_bincount_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0), *w = op_tensor(c, s, 1), *out = op_tensor(c, s, 3);
    int64_t minlength = op_argument(c, s, 2)->i;
    if (self->ndim != 1) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Expected dim of self to be 1, but got %lld.",
                            (long long)self->ndim);
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (w->present) {
        aclnnStatus rc = ew_check_shape(c->api, op_pname(c, s, 1), w, self->shape, self->ndim);
        if (rc) return rc;
    }
    if (out->ndim != 1) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Expected dim of out to be 1, but got %lld.",
                            (long long)out->ndim);
        return ACLNN_ERR_PARAM_INVALID;
    }
    int64_t size = out->shape[0];
    if (self->shape[0] == 0) {
        if (minlength <= 0) c->nothing = 1;
    } else if ((size > minlength ? size : minlength) > INT32_MAX) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "The maximum output size cannot exceed 2147483647.");
        return ACLNN_ERR_PARAM_INVALID;
    }
    bincount_params *prm = op_params(c, sizeof *prm);
    *prm = (bincount_params){size, w->present};
    return ACLNN_SUCCESS;
}
