/*
 * The steps of the pad family (pad.toml): aclnnConstantPadNd, aclnnReflectionPad1d/2d/3d,
 * aclnnReplicationPad1d/2d/3d and their backwards. Every one runs the gather engine's per-dimension maps
 * (kernels/gather.h): the forwards move bytes (class a), the backwards sum gradOutput's elements into
 * gradInput in fp32 (DOUBLE in double), rounded once (the vendor casts FLOAT16/BF16 to fp32 for them).
 *
 * ConstantPadNd (hicann/ops-math conversion/pad_v3/op_api/aclnn_constant_pad_nd.cpp): pad holds (before,
 * after) pairs from the last dim backwards, negative values crop; out's dims are self's plus the pads; an
 * out with no element made by a positive pad is refused. Reflection / replication (conversion/mirror_pad,
 * conversion/pad_v3, the *_grad folders): K padded dims (1d: the last, 2d: the last two, 3d: the last
 * three) of a tensor of K + 1 or K + 2 dims, the padding of length 2K; reflection needs each pad smaller
 * than its dim; an empty tensor is fine only when the batch dim (of a K + 2 dim tensor) is the empty one.
 */
#include <stdio.h>
#include <string.h>

#include "kernels/gather.h"
#include "opbase/checks.h"
#include "ops_decls.h"

static aclnnStatus invalid(op_call *c, const char *fmt, long long a, long long b, long long d) {
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, fmt, a, b, d);
    return ACLNN_ERR_PARAM_INVALID;
}

/* A plan of maps of self's dims into out's shape (identity maps; the caller sets the padded dims). */
static idx_map_plan *pad_plan(op_call *c, const pyaclnn_stub_tensor *self, const pyaclnn_stub_tensor *out) {
    idx_map_plan *p = op_params(c, sizeof *p);
    p->ndim = (int)self->ndim;
    for (int d = 0; d < p->ndim; d++) {
        p->self_dim[d] = d;
        p->out_shape[d] = out->shape[d];
    }
    if (self->ndim == 0) {   /* a 0-d tensor: one element, nothing padded */
        p->ndim = 1;
        p->out_shape[0] = 1;
    }
    return p;
}

/* constant_pad_plan self pad value out: the vendor's CheckShape, then the maps (value cast to out's dtype). */
aclnnStatus opc_constant_pad_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0), *out = op_tensor(c, s, 3);
    const int64_t *pad = c->ints[s->p[1]].v;
    int64_t n = self->ndim, len = (int64_t)c->ints[s->p[1]].n, cover = len / 2;
    if (n != out->ndim) return invalid(c, "Dim of self[%lld] and out[%lld] can't be different.", n, out->ndim, 0);
    if (len % 2) return invalid(c, "Pad len must be divisible by 2", 0, 0, 0);
    if (cover > n)
        return invalid(c, "Expected aclnnConstantPadNd pad len [%lld] to not be greater than twice of [%lld] but check "
                       "failed.", len, n, 0);
    int positive = 0, zero = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t d = n - 1 - i, size = self->shape[d];
        int64_t lo = 2 * i < len ? pad[2 * i] : 0, hi = 2 * i + 1 < len ? pad[2 * i + 1] : 0, want = size + lo + hi;
        int64_t least = lo < hi ? lo : hi;
        least = least < lo + hi ? least : lo + hi;
        if (size + least < 0) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "The input size %lld plus padding %lld and %lld "
                                "resulted in a negative output size, which is invalid. Check dimension %lld of your "
                                "input.", (long long)size, (long long)lo, (long long)hi, (long long)d);
            return ACLNN_ERR_PARAM_INVALID;
        }
        positive |= lo > 0 || hi > 0;
        if (want != out->shape[d]) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "output shape at dim %lld check failed,The output "
                                "shape you provided is %lld at dim %lld, and the expected one is %lld at dim %lld based "
                                "on the infershape.", (long long)d, (long long)out->shape[d], (long long)d,
                                (long long)want, (long long)d);
            return ACLNN_ERR_PARAM_INVALID;
        }
        zero |= i < cover && want == 0;
    }
    if (zero && positive) {
        char t[200];
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "The output size %s with zero element is invalid, please "
                            "check your input.", tv_shape_text(out->shape, out->ndim, t, sizeof t));
        return ACLNN_ERR_PARAM_INVALID;
    }
    idx_map_plan *p = pad_plan(c, self, out);
    for (int64_t i = 0; i < cover; i++) {
        p->kind[n - 1 - i] = IDX_MAP_CONST;
        p->a[n - 1 - i] = pad[2 * i];
    }
    const op_scalar *v = op_scalar_of(c, s, 2);
    p->fill = ew_cast(v->v, v->dtype, out->dtype);
    if (pyaclnn_stub_numel(out) == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}

/* The reflection / replication checks shared by the forwards and backwards: K + 1 to K + 2 dims, a padding of
 * length 2K, reflection's pads smaller than their dims; then the maps into `out` (the padded tensor) with the
 * padded shape checked ("wrong <what> shape.", or replication's out: the standard shape message). */
static aclnnStatus mirror_plan(op_call *c, const op_step *s, const pyaclnn_stub_tensor *self,
                               const pyaclnn_stub_tensor *out, const char *what, int with_out_rank) {
    int k = (int)s->n, reflect = strcmp(s->text, "reflect") == 0;
    const int64_t *pad = c->ints[s->p[1]].v;
    int64_t n = self->ndim, len = (int64_t)c->ints[s->p[1]].n;
    char dims[64];
    if (n < k + 1) return invalid(c, "self has %lld dimensions; at least %lld are needed", n, k + 1, 0);
    if (n > k + 2) return invalid(c, "self has %lld dimensions; at most %lld are supported", n, k + 2, 0);
    if (out->ndim != n)
        return invalid(c, with_out_rank ? "self, out dim should be same." : "gradOutput, self, gradInput dim should be "
                       "same.", 0, 0, 0);
    if (len != 2 * k) return invalid(c, "padding length should be %lld, but got %lld.", 2 * k, len, 0);
    for (int i = 0; reflect && i < 2 * k; i++)
        if (pad[i] >= self->shape[n - 1 - i / 2])
            return invalid(c, with_out_rank ? "padding size should be less than the corresponding self dimention."
                                            : "padding size should be less than the corresponding self dimension.",
                           0, 0, 0);
    int64_t want[PYACLNN_STUB_MAX_DIMS];
    for (int64_t d = 0; d < n; d++) want[d] = self->shape[d];
    for (int i = 0; i < k; i++) want[n - 1 - i] = op_add_sat(want[n - 1 - i], op_add_sat(pad[2 * i], pad[2 * i + 1]));
    if (!reflect && with_out_rank) {
        aclnnStatus rc = ew_check_shape(c->api, op_pname(c, s, 2), out, want, n);
        if (rc) return rc;
    } else {
        for (int64_t d = 0; d < n; d++)
            if (out->shape[d] != want[d]) {
                snprintf(dims, sizeof dims, "wrong %s shape.", what);
                pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "%s", dims);
                return ACLNN_ERR_PARAM_INVALID;
            }
    }
    idx_map_plan *p = pad_plan(c, self, out);
    for (int i = 0; i < k; i++) {
        p->kind[n - 1 - i] = reflect ? IDX_MAP_REFLECT : IDX_MAP_REPLICATE;
        p->a[n - 1 - i] = pad[2 * i];
    }
    if (pyaclnn_stub_numel(self) == 0 || pyaclnn_stub_numel(out) == 0) {   /* only an empty batch is fine */
        c->nothing = 1;
        int bad = n == k + 1;
        for (int64_t d = 1; d < n; d++) bad |= self->shape[d] == 0;
        if (bad) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Expected %dD or %dD tensor with possibly 0 batch size "
                                "and other non-zero %s for input.", k + 1, k + 2, reflect ? "dimentions" : "dimensions");
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    return ACLNN_SUCCESS;
}

/* mirror_pad_plan self padding out K "reflect"|"edge" */
aclnnStatus opc_mirror_pad_plan(op_call *c, const op_step *s) {
    return mirror_plan(c, s, op_tensor(c, s, 0), op_tensor(c, s, 2), "out", 1);
}

/* mirror_pad_backward_plan self padding gradOutput K "reflect"|"edge": the forward's maps from self (gradInput's
 * shape) into gradOutput. */
aclnnStatus opc_mirror_pad_backward_plan(op_call *c, const op_step *s) {
    return mirror_plan(c, s, op_tensor(c, s, 0), op_tensor(c, s, 2), "gradOutput", 0);
}
