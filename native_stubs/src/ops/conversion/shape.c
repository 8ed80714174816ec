/*
 * The steps of shape.toml -- aclnnFlip, aclnnRoll, aclnnRepeat, the aclnnRepeatInterleave forms (on the gather
 * engine's per-dimension maps, kernels/gather.h: bytes moved, bit-exact), aclnnTril / aclnnInplaceTril (the
 * Triu kernel of triu.c with its `lower` parameter), aclnnInplaceMaskedFillTensor (the elementwise engine's
 * WHERE) -- and aclnnLinspace's steps and kernel.
 *
 * Flip (hicann/ops-nn index/reverse_v2/op_api/aclnn_flip.cpp): out has self's shape; dims in range, none twice.
 * Roll (hicann/ops-math conversion/roll/op_api/aclnn_roll.cpp): shifts and dims of one size (or no dims and one
 * shift: the flattened tensor rolls); dims in range (checked after the empty shortcut).
 * Repeat (math/tile/op_api/aclnn_repeat.cpp): at least as many repeats as self has dims, none negative, at most
 * 8; self gets leading dims of 1; out = self tiled.
 * RepeatInterleave* (hicann/ops-nn index/repeat_interleave/op_api/aclnn_repeat_interleave.cpp): each element
 * (along dim, or of the flattened self) repeated by one count or by its own count (a counts tensor read at
 * launch: they must sum to outputSize, else a device fault); RepeatInterleaveTensor: out = the indices
 * 0..n-1 each repeated by its count (torch.repeat_interleave(counts)).
 * Linspace (math/lin_space/op_api/aclnn_linspace.cpp, op_kernel/arch35/lin_space_double_cast.h, the tiling
 * lin_space_tiling_arch35.cpp): start and end as fp32, step = (end - start) / (steps - 1) in fp32; the first
 * steps / 2 values are start + i * step, the others end - (steps - 1 - i) * step (fp32 Muls then Add), then
 * cast to out's dtype (DOUBLE: the same in double); one step: start cast to out's dtype.
 */
#include <stdlib.h>
#include <string.h>

#include "kernels/gather.h"
#include "opbase/checks.h"
#include "opbase/pointwise.h"
#include "ops_decls.h"

static aclnnStatus invalid(op_call *c, const char *fmt, long long a, long long b, long long d) {
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, fmt, a, b, d);
    return ACLNN_ERR_PARAM_INVALID;
}

/* Identity maps from self to out (a 0-d tensor as one element). */
static idx_map_plan *map_plan(op_call *c, const pyaclnn_stub_tensor *self, const pyaclnn_stub_tensor *out) {
    idx_map_plan *p = op_params(c, sizeof *p);
    p->ndim = out->ndim ? (int)out->ndim : 1;
    p->counts_input = 1;
    for (int d = 0; d < p->ndim; d++) {
        p->self_dim[d] = d - (p->ndim - (self->ndim ? (int)self->ndim : 1));
        p->out_shape[d] = out->ndim ? out->shape[d] : 1;
    }
    return p;
}

/* ---- aclnnFlip ---------------------------------------------------------------------------------------- */

/* flip_plan self dims: each dim in range, none twice; the maps. */
aclnnStatus opc_flip_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0);
    const int64_t *dims = c->ints[s->p[1]].v;
    int64_t n = self->ndim ? self->ndim : 1, k = (int64_t)c->ints[s->p[1]].n;
    idx_map_plan *p = map_plan(c, self, self);
    for (int64_t i = 0; i < k; i++) {
        int64_t d = dims[i];
        if (d < -n || d > n - 1)
            return invalid(c, "Dimension out of range (expected to be in range of [%lld, %lld], but got %lld)", -n, n - 1,
                           d);
        d = d < 0 ? d + n : d;
        if (p->kind[d] == IDX_MAP_FLIP) return invalid(c, "dim:[%lld] appears multiple times in the list of dims", d, 0, 0);
        p->kind[d] = IDX_MAP_FLIP;
    }
    if (pyaclnn_stub_numel(self) == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}

/* ---- aclnnRoll ---------------------------------------------------------------------------------------- */

/* roll_sizes shifts dims: as many shifts as dims, or one shift and no dims. */
aclnnStatus opc_roll_sizes(op_call *c, const op_step *s) {
    uint64_t ns = c->ints[s->p[0]].n, nd = c->ints[s->p[1]].n;
    if (ns != nd && nd != 0)
        return invalid(c, "The size of shifts and dims should be the same when the size of dims is not 0.", 0, 0, 0);
    if (nd == 0 && ns != 1) return invalid(c, "The size of shifts must be 1 if the size of dims is 0.", 0, 0, 0);
    return ACLNN_SUCCESS;
}

/* roll_plan x shifts dims: (a non-empty x) dims in range; the maps (shifts of one dim add up). */
aclnnStatus opc_roll_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0);
    const int64_t *shifts = c->ints[s->p[1]].v, *dims = c->ints[s->p[2]].v;
    int64_t n = x->ndim, nd = (int64_t)c->ints[s->p[2]].n, numel = pyaclnn_stub_numel(x);
    if (numel == 0) {
        c->nothing = 1;
        return ACLNN_SUCCESS;
    }
    int64_t hi = -n > n - 1 ? -n : n - 1, lo = -n < n - 1 ? -n : n - 1;
    for (int64_t i = 0; i < nd; i++)
        if (dims[i] > hi || dims[i] < lo) return invalid(c, "The values of dims should be in range [%lld, %lld].", lo, hi, 0);
    idx_map_plan *p = map_plan(c, x, x);
    if (nd == 0) {   /* the flattened tensor */
        p->ndim = 1;
        p->flat = 1;
        p->out_shape[0] = numel;
        p->kind[0] = IDX_MAP_ROLL;
        p->a[0] = shifts[0] % numel;
        return ACLNN_SUCCESS;
    }
    for (int64_t i = 0; i < nd; i++) {
        int64_t d = dims[i] < 0 ? dims[i] + (n ? n : 1) : dims[i];
        p->kind[d] = IDX_MAP_ROLL;
        p->a[d] = (p->a[d] + shifts[i] % p->out_shape[d]) % p->out_shape[d];
    }
    return ACLNN_SUCCESS;
}

/* ---- aclnnRepeat -------------------------------------------------------------------------------------- */

/* repeat_plan self repeats out: the vendor's repeats checks, then (nothing for an empty tensor or a zero repeat)
 * out's shape and the maps. */
aclnnStatus opc_repeat_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0), *out = op_tensor(c, s, 2);
    const int64_t *r = c->ints[s->p[1]].v;
    int64_t k = (int64_t)c->ints[s->p[1]].n, n = self->ndim, zero = 0;
    aclnnStatus rc;
    if (n > k)
        return invalid(c, "Number of dimensions of repeat dims can not be smaller than number of dimensions of input "
                       "tensor, self %lld, repeats %lld.", n, k, 0);
    for (int64_t i = 0; i < k; i++) {
        if (r[i] < 0) return invalid(c, "repeats expected %lldth value > 0, but got %lld", i + 1, r[i], 0);
        zero |= r[i] == 0;
    }
    if ((rc = ew_check_max_dim(c->api, op_pname(c, s, 0), self, EW_MAX_DIM))) return rc;
    if (k > EW_MAX_DIM) return invalid(c, "repeats size should not be larger than 8. self %lld, repeats %lld", n, k, 0);
    if (pyaclnn_stub_numel(self) == 0 || pyaclnn_stub_numel(out) == 0 || zero) {
        c->nothing = 1;
        return ACLNN_SUCCESS;
    }
    int64_t want[PYACLNN_STUB_MAX_DIMS];
    for (int64_t d = 0; d < k; d++)   /* (repeats are the caller's int64: a product past the range is refused) */
        if (__builtin_mul_overflow(r[d], d < k - n ? 1 : self->shape[d - (k - n)], &want[d]))
            return invalid(c, "repeats[%lld] = %lld times self's size leaves int64 (the emulator's check)", d, r[d],
                           0);
    if (k == 0) {   /* ViewCopy(self, out) */
        if ((rc = ew_check_shape(c->api, op_pname(c, s, 2), out, self->shape, n))) return rc;
    } else if ((rc = ew_check_shape(c->api, op_pname(c, s, 2), out, want, k))) {
        return rc;
    }
    idx_map_plan *p = map_plan(c, self, out);
    for (int d = 0; d < p->ndim; d++) p->kind[d] = IDX_MAP_MOD;
    return ACLNN_SUCCESS;
}

/* ---- the aclnnRepeatInterleave forms ------------------------------------------------------------------- */

/* ri_plan self repeats [dim] outputSize out: repeats a counts tensor or an integer; with dim, along it, else
 * over the flattened self. The vendor's checks after the dtypes, in its order; out's shape: self's with dim's
 * length outputSize ([outputSize] flattened); one integer count must make outputSize. */
aclnnStatus opc_ri_plan(op_call *c, const op_step *s) {
    int with_dim = s->np == 5, counts = c->def->params[s->p[1]].kind == OP_K_TENSOR;
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0), *out = op_tensor(c, s, s->np - 1);
    const pyaclnn_stub_tensor *rt = counts ? op_tensor(c, s, 1) : NULL;
    int64_t r = counts ? 0 : op_argument(c, s, 1)->i, dim = with_dim ? op_argument(c, s, 2)->i : 0;
    int64_t size = op_argument(c, s, s->np - 2)->i, n = self->ndim, numel = pyaclnn_stub_numel(self);
    aclnnStatus rc;
    if (counts && (rc = ew_check_max_dim(c->api, op_pname(c, s, 1), rt, 1))) return rc;
    if (!counts && r < 0) return invalid(c, "repeats %lld can not be negative.", r, 0, 0);
    if (with_dim) {
        if (n == 0) return invalid(c, "dimension specified as %lld but tensor has no dimensions.", dim, 0, 0);
        if (dim < -n || dim > n - 1)
            return invalid(c, "Dimension out of range (expected to be in range of [%lld, %lld], but got %lld).", -n, n - 1,
                           dim);
        dim = dim < 0 ? dim + n : dim;
    }
    int64_t along = with_dim ? self->shape[dim] : numel, nr = counts ? pyaclnn_stub_numel(rt) : 1;
    if (counts && rt->ndim == 1 && nr != along && nr != 1)
        return invalid(c, with_dim ? "Tensor repeats must be size 1 or have the same size %lld as input along dim, but "
                                     "got %lld." : "Tensor repeats size %lld must be 1 or the number of elements in "
                                     "tensor self %lld.", with_dim ? along : nr, with_dim ? nr : along, 0);
    if ((rc = ew_check_max_dim(c->api, op_pname(c, s, 0), self, EW_MAX_DIM))) return rc;
    if (counts && !with_dim && numel == 0 && nr != 0 && !(rt->ndim == 0 || nr == 1)) {
        char t[200];
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "When tensor self is empty, repeats should be empty / 0 dim "
                            "tensor / 1 dim tensor with only 1 elements, but got shape %s.",
                            tv_shape_text(rt->shape, rt->ndim, t, sizeof t));
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (numel == 0 || pyaclnn_stub_numel(out) == 0 || (with_dim && size == 0)) {
        c->nothing = 1;
        return ACLNN_SUCCESS;
    }
    if (counts && nr == 0) return invalid(c, "repeats must have the same size as input along dim.", 0, 0, 0);
    int64_t product;   /* (repeats is the caller's int64: the product may leave the range) */
    if (!counts && (__builtin_mul_overflow(along, r, &product) || product != size))
        return invalid(c, "outputSize %lld is not %lld elements times repeats %lld (the emulator's check)", size, along, r);
    int64_t want[PYACLNN_STUB_MAX_DIMS];
    for (int64_t d = 0; d < n; d++) want[d] = self->shape[d];
    want[with_dim ? dim : 0] = size;
    if ((rc = ew_check_shape(c->api, op_pname(c, s, s->np - 1), out, want, with_dim ? n : 1))) return rc;
    idx_map_plan *p = map_plan(c, self, with_dim ? out : self);
    if (!with_dim) {
        p->ndim = 1;
        p->flat = 1;
        p->out_shape[0] = size;
    }
    p->kind[dim] = counts ? IDX_MAP_COUNTS : IDX_MAP_REPEAT;
    p->a[dim] = r;
    return ACLNN_SUCCESS;
}

/* ri_tensor_plan repeats outputSize out: repeats empty or 1-D; out = [outputSize], the indices repeated. */
aclnnStatus opc_ri_tensor_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *rt = op_tensor(c, s, 0), *out = op_tensor(c, s, 2);
    int64_t size = op_argument(c, s, 1)->i;
    if (pyaclnn_stub_numel(rt) != 0 && rt->ndim != 1)
        return invalid(c, "repeats must be an empty tensor / 1D tensor.", 0, 0, 0);
    if (pyaclnn_stub_numel(rt) == 0 || pyaclnn_stub_numel(out) == 0) {
        c->nothing = 1;
        return ACLNN_SUCCESS;
    }
    aclnnStatus rc = ew_check_shape(c->api, op_pname(c, s, 2), out, &size, 1);
    if (rc) return rc;
    idx_map_plan *p = map_plan(c, rt, out);
    p->flat = 1;
    p->iota = 1;
    p->counts_input = 0;
    p->kind[0] = IDX_MAP_COUNTS;
    return ACLNN_SUCCESS;
}

/* ---- aclnnInplaceMaskedFillTensor ---------------------------------------------------------------------- */

/* value_0d value: value is 0-d. */
aclnnStatus opc_value_0d(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *v = op_tensor(c, s, 0);
    if (v->ndim == 0) return ACLNN_SUCCESS;
    return invalid(c, "value must be a 0-dimensional tensor, but it has %lld dimensions", v->ndim, 0, 0);
}

/* masked_fill_tensor_plan selfRef: WHERE(mask, value, selfRef) in selfRef's dtype (value cast to it). */
aclnnStatus opc_masked_fill_tensor_plan(op_call *c, const op_step *s) {
    ew_plan *plan = op_params(c, sizeof *plan);
    plan->op = EW_OP_WHERE;
    plan->compute = op_tensor(c, s, 0)->dtype;
    plan->n_inputs = 3;
    plan->bool_inputs = 1u;
    return ACLNN_SUCCESS;
}

/* ---- aclnnLinspace ------------------------------------------------------------------------------------- */

typedef struct {
    int64_t steps;
    double start, end;   /* fp32 values (DOUBLE out: the scalars' doubles) */
    ew_value first;      /* one step: start in out's dtype */
} linspace_plan;

/* linspace_plan start end steps out: steps not negative, out holds steps elements. */
aclnnStatus opc_linspace_plan(op_call *c, const op_step *s) {
    const op_scalar *a = op_scalar_of(c, s, 0), *b = op_scalar_of(c, s, 1);
    const pyaclnn_stub_tensor *out = op_tensor(c, s, 3);
    int64_t steps = op_argument(c, s, 2)->i;
    if (steps < 0) return invalid(c, "number of steps must be non-negative.", 0, 0, 0);
    if (pyaclnn_stub_numel(out) != steps)
        return invalid(c, "size of out must equal to steps, but got size of out %lld, steps: %lld.",
                       pyaclnn_stub_numel(out), steps, 0);
    linspace_plan *p = op_params(c, sizeof *p);
    p->steps = steps;
    double x = ew_value_to_double(a->v, a->dtype), y = ew_value_to_double(b->v, b->dtype);
    aclDataType to = out->dtype == ACL_DOUBLE ? ACL_DOUBLE : ACL_FLOAT;   /* ew_cast: GCC may drop a (float) here */
    p->start = ew_cast((ew_value){x, 0}, ACL_DOUBLE, to).f;
    p->end = ew_cast((ew_value){y, 0}, ACL_DOUBLE, to).f;
    p->first = a->dtype == ACL_BOOL ? ew_cast((ew_value){(float)x, 0}, ACL_FLOAT, out->dtype)
                                    : ew_cast(a->v, a->dtype, out->dtype);
    if (steps == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}

void linspace_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const linspace_plan *p = launch->params;
    const pyaclnn_stub_tensor *out = &launch->outputs[0];
    int64_t n = p->steps, half = n / 2;
    double *v = malloc(sizeof(double) * (size_t)n + 1);
    if (v == NULL) {
        tv_fail_oom(launch);
        return;
    }
    if (out->dtype == ACL_DOUBLE) {
        double step = n > 1 ? (p->end - p->start) / (double)(n - 1) : 0;
        for (int64_t i = 0; i < n; i++) v[i] = i < half ? p->start + (double)i * step : p->end - (double)(n - 1 - i) * step;
    } else {
        float step = n > 1 ? ((float)p->end - (float)p->start) / (float)(n - 1) : 0.0f;
        for (int64_t i = 0; i < n; i++) {
            float t = (float)((double)(i < half ? i : i - (n - 1)) * (double)step);
            v[i] = (float)((i < half ? p->start : p->end) + (double)t);
        }
    }
    if (n == 1) v[0] = ew_value_to_double(p->first, out->dtype);
    tv_store_double(out, v);
    free(v);
}
