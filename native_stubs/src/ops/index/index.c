/*
 * The steps of aclnnIndex and aclnnIndexSelect (index.toml) and the ones the index-list operators share
 * (Index, IndexPutImpl). Both run the gather engine's idx_gather_kernel (src/kernels/gather.h: torch's
 * advanced-indexing rules, bytes moved: bit-exact); an index out of range is a device fault.
 *
 * Index (hicann/ops-nn index/index/op_api/aclnn_index.cpp) checks, in the vendor's order, NULLs, out's
 * dtype == self's, self's dtype list, every non-empty index INT64/INT32/BOOL, at most 8 dims (self and each
 * index); then the emulator's phase-1 equivalents of the vendor's shape inference: the indices broadcast and
 * out has the result shape. BOOL masks are refused (161002): torch_npu turns masks into integer indices
 * before calling (AdvanceIndex::npu_expand_tensors); the emulator has no mask path.
 * IndexSelect (index/gather_v2/op_api/aclnn_index_select.cpp): a 0-d self needs a 0-d out; dim in range;
 * index at most 1-D; out = self's shape with dim replaced by the index length (when neither is empty; when one
 * is, the vendor's executor does nothing and out keeps its bytes, whatever its shape).
 * IndexPutImpl (index/index_put_v2/op_api/aclnn_index_put_impl.cpp; its kernel: index_put.c): no more
 * indices than selfRef's dims; (emulator) BOOL masks refused, values broadcast to the indexed shape.
 */
#include "kernels/gather.h"
#include "opbase/checks.h"
#include "ops_decls.h"

/* idx_dtypes indices LIST: every defined (non-empty) index tensor's dtype in LIST (the message names the list). */
aclnnStatus opc_idx_dtypes(op_call *c, const op_step *s) {
    size_t n;
    const aclDataType *list = op_list(s->list, &n);
    for (uint64_t i = 0; i < c->lists[s->p[0]].n; i++) {
        const pyaclnn_stub_tensor *t = &c->lists[s->p[0]].t[i];
        if (pyaclnn_stub_numel(t) == 0) continue;
        aclnnStatus rc = ew_check_dtype_in(c->api, op_pname(c, s, 0), t->dtype, list, n);
        if (rc) return rc;
    }
    return ACLNN_SUCCESS;
}

/* idx_no_mask indices: a defined BOOL index (a mask) is refused. */
aclnnStatus opc_idx_no_mask(op_call *c, const op_step *s) {
    for (uint64_t i = 0; i < c->lists[s->p[0]].n; i++) {
        const pyaclnn_stub_tensor *t = &c->lists[s->p[0]].t[i];
        if (pyaclnn_stub_numel(t) != 0 && t->dtype == ACL_BOOL) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "%s[%zu] is a BOOL mask: not supported by the "
                                "pyaclnn CPU emulator (pass INT64/INT32 indices, e.g. mask.nonzero())",
                                op_pname(c, s, 0), (size_t)i);
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    return ACLNN_SUCCESS;
}

/* The gather plan of self (operand 0) indexed by the list (operand 1), in the kernel's parameter block. */
static idx_plan *idx_list_plan(op_call *c, const op_step *s, aclnnStatus *rc) {
    pyaclnn_stub_tensor views[1 + IDX_MAX_SLOTS];
    uint64_t k = c->lists[s->p[1]].n;
    idx_plan *plan = op_params(c, sizeof *plan);
    plan->k = (int)k;
    views[0] = *op_tensor(c, s, 0);
    for (uint64_t i = 0; i < k; i++) {
        views[1 + i] = c->lists[s->p[1]].t[i];
        plan->input_of[i] = 1 + (int)i;
    }
    *rc = idx_plan_make(c->api, views, plan);
    return plan;
}

/* index_plan self indices: the gather plan; the result has at most 8 dims and becomes the result shape. */
aclnnStatus opc_index_plan(op_call *c, const op_step *s) {
    aclnnStatus rc;
    idx_plan *plan = idx_list_plan(c, s, &rc);
    if (rc) return rc;
    if (plan->out_ndim > EW_MAX_DIM) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Outputshape Dim should be less than or equal 8, but got "
                            "[%d]", plan->out_ndim);
        return ACLNN_ERR_PARAM_INVALID;
    }
    c->ndim = plan->out_ndim;
    for (int d = 0; d < plan->out_ndim; d++) c->shape[d] = plan->out_shape[d];
    return ACLNN_SUCCESS;
}

/* index_select_scalar self out: a 0-d self needs a 0-d out. */
aclnnStatus opc_index_select_scalar(op_call *c, const op_step *s) {
    if (op_tensor(c, s, 0)->ndim == 0 && op_tensor(c, s, 1)->ndim != 0) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "self is scalar, and out should also be scalar");
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

/* index_select_plan self dim index out: dim in range, index at most 1-D, out's shape (self's, with dim
 * replaced by the index length; unchecked when self or index is empty, and then nothing is launched, as the
 * vendor's HasEmptyTensor); the gather plan: undefined slots before dim, the index (as 1-D) at dim. */
aclnnStatus opc_index_select_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0), *ix = op_tensor(c, s, 2), *out = op_tensor(c, s, 3);
    int64_t dim = op_argument(c, s, 1)->i, rank = self->ndim == 0 ? 1 : self->ndim;
    aclnnStatus rc;
    if (dim < -rank || dim >= rank) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "IndexError: Dimension out of range (expected to be in "
                            "range of [%lld, %lld], but got %lld)", (long long)-rank, (long long)(rank - 1),
                            (long long)dim);
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (dim < 0) dim += rank;
    if (ix->ndim > 1) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "index dimNum is %lld, should not greater than 1",
                            (long long)ix->ndim);
        return ACLNN_ERR_PARAM_INVALID;
    }
    int64_t want[PYACLNN_STUB_MAX_DIMS];
    for (int64_t d = 0; d < self->ndim; d++) want[d] = self->shape[d];
    if (self->ndim > 0) want[dim] = ix->ndim == 0 ? 1 : ix->shape[0];
    if (pyaclnn_stub_numel(self) == 0 || pyaclnn_stub_numel(ix) == 0) {
        /* the vendor's HasEmptyTensor: an executor that does nothing, whatever out's shape (the gather would
         * read a self without elements, or write an out the plan does not describe) */
        c->nothing = 1;
        return ACLNN_SUCCESS;
    }
    if ((rc = ew_check_shape(c->api, op_pname(c, s, 3), out, want, self->ndim))) return rc;
    idx_plan *plan = op_params(c, sizeof *plan);
    plan->k = (int)dim + 1;
    plan->as_1d = 1;
    plan->input_of[dim] = 1;
    pyaclnn_stub_tensor views[2] = {*self, *ix};
    return idx_plan_make(c->api, views, plan);
}

/* index_put_slots selfRef indices: no more index tensors than selfRef's dims (a 0-d selfRef counts as 1). */
aclnnStatus opc_index_put_slots(op_call *c, const op_step *s) {
    int64_t ndim = op_tensor(c, s, 0)->ndim;
    if ((int64_t)c->lists[s->p[1]].n > (ndim ? ndim : 1)) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "indicesSize must <= self DimSize.");
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

/* index_put_plan selfRef indices values accumulate: the scatter plan; values must broadcast to the indexed
 * shape, whose element count must fit in int64; nothing to launch when that shape or selfRef is empty. */
aclnnStatus opc_index_put_plan(op_call *c, const op_step *s) {
    aclnnStatus rc;
    idx_plan *plan = idx_list_plan(c, s, &rc);
    if (rc) return rc;
    plan->accumulate = (int)op_argument(c, s, 3)->i;
    const pyaclnn_stub_tensor *v = op_tensor(c, s, 2);
    for (int64_t d = 0; d < v->ndim; d++) {
        int64_t od = plan->out_ndim - v->ndim + d;
        if (od < 0 ? v->shape[d] != 1 : (v->shape[d] != 1 && v->shape[d] != plan->out_shape[od])) {
            char a[200], b[200];
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "shape mismatch: value tensor of shape %s cannot be "
                                "broadcast to indexing result of shape %s",
                                tv_shape_text(v->shape, v->ndim, a, sizeof a),
                                tv_shape_text(plan->out_shape, plan->out_ndim, b, sizeof b));
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    int64_t n = 1;
    int over = 0;
    for (int d = 0; d < plan->out_ndim; d++) over |= __builtin_mul_overflow(n, plan->out_shape[d], &n);
    if (over) {   /* (broadcast 0-stride indices) the emulator's check: the kernel lists every target position */
        char b[200];
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "the indexing result of shape %s has more than INT64_MAX "
                            "elements", tv_shape_text(plan->out_shape, plan->out_ndim, b, sizeof b));
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (n == 0 || pyaclnn_stub_numel(op_tensor(c, s, 0)) == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}
