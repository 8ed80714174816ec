/*
 * The reductions' steps (reduce.toml): the plan of the reduction engine (kernels/reduce.h) -- the
 * definition's spec (a red_plan: the operation and where values and indices go) with the dims and the
 * compute dtype of the call -- and the vendor's checks of the dims and of the outputs' reduced shapes
 * (hicann/ops-math math/reduce_max, reduce_sum, reduce_mean, arg_max_with_value, arg_max_v2 op_api).
 */
#include <string.h>

#include "kernels/reduce.h"
#include "opbase/checks.h"
#include "ops_decls.h"

/* The plan a red_dims / red_dim step made (the kernel's parameter block). */
static red_plan *plan_of(op_call *c) { return (red_plan *)c->params; }

/* A new plan: the definition's spec, computing in self's dtype, no dim marked. */
static red_plan *new_plan(op_call *c, const pyaclnn_stub_tensor *self) {
    red_plan *plan = op_params(c, sizeof *plan);
    *plan = *(const red_plan *)c->def->spec;
    plan->compute = self->dtype;
    memset(plan->reduce, 0, sizeof plan->reduce);
    return plan;
}

/* Marks the dims (wrapped; an empty list marks all), 161002 with the vendor's messages for a dim out of
 * range or repeated. */
static aclnnStatus mark_dims(const char *api, const pyaclnn_stub_tensor *self, const int64_t *dims, uint64_t n,
                             red_plan *plan) {
    int64_t rank = self->ndim > 0 ? self->ndim : 1;
    if (n == 0) {
        for (int64_t d = 0; d < self->ndim; d++) plan->reduce[d] = 1;
        return ACLNN_SUCCESS;
    }
    for (uint64_t i = 0; i < n; i++) {
        if (dims[i] >= rank || dims[i] < -rank) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "provided dim %lld must be in the range of [%lld, %lld].",
                                (long long)dims[i], (long long)-rank, (long long)(rank - 1));
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    for (uint64_t i = 0; i < n; i++) {
        int64_t d = dims[i] < 0 ? dims[i] + rank : dims[i];
        if (plan->reduce[d]) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "Dim %lld appears multiple times in the list of dims.",
                                (long long)d);
            return ACLNN_ERR_PARAM_INVALID;
        }
        plan->reduce[d] = 1;
    }
    if (self->ndim == 0) plan->reduce[0] = 0;   /* a 0-d tensor has nothing to reduce */
    return ACLNN_SUCCESS;
}

/* red_dims self [dims] [dtype]: the plan over dims (an int array; without one, or when it is empty: all of
 * self's dims), computing in dtype (without one: self's dtype; BOOL sums as INT64, the vendor's promotion
 * of bool sums); 161002 for a dim out of range or repeated. */
aclnnStatus opc_red_dims(op_call *c, const op_step *s) {
    red_plan *plan = new_plan(c, op_tensor(c, s, 0));
    const int64_t *dims = NULL;
    uint64_t n = 0;
    int promote_bool = 0;
    for (int k = 1; k < s->np; k++) {
        int i = s->p[k];
        if (c->def->params[i].kind == OP_K_INT_ARRAY) {
            dims = c->ints[i].v;
            n = c->ints[i].n;
        } else if (c->def->params[i].kind == OP_K_DTYPE) {
            plan->compute = (aclDataType)c->arg[i].i;
            promote_bool = 1;
        }
    }
    aclnnStatus rc = mark_dims(c->api, op_tensor(c, s, 0), dims, n, plan);
    if (rc == ACLNN_SUCCESS && promote_bool && plan->compute == ACL_BOOL) plan->compute = ACL_INT64;
    return rc;
}

/* The plan over one dim (an integer), 161002 if it is out of range (a 0-d self: [-1, 0]). */
static aclnnStatus plan_one_dim(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0);
    int64_t dim = op_argument(c, s, 1)->i, rank = self->ndim > 0 ? self->ndim : 1;
    red_plan *plan = new_plan(c, self);
    if (dim < -rank || dim >= rank) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "dim must be within the range of [%lld, %lld], but it "
                            "is %lld.", (long long)-rank, (long long)(rank - 1), (long long)dim);
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (self->ndim > 0) plan->reduce[dim < 0 ? dim + rank : dim] = 1;
    return ACLNN_SUCCESS;
}

/* Whether dim (in range) of a self with dims has size 0. */
static int dim_is_empty(const pyaclnn_stub_tensor *self, int64_t dim) {
    return self->ndim > 0 && self->shape[dim < 0 ? dim + self->ndim : dim] == 0;
}

/* red_dim self dim: the plan over one dim (an integer), 161002 if it is out of range or of size 0. */
aclnnStatus opc_red_dim(op_call *c, const op_step *s) {
    aclnnStatus rc = plan_one_dim(c, s);
    int64_t dim = op_argument(c, s, 1)->i;
    if (rc == ACLNN_SUCCESS && dim_is_empty(op_tensor(c, s, 0), dim)) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "cannot reduce over dim %lld of size 0", (long long)dim);
        return ACLNN_ERR_PARAM_INVALID;
    }
    return rc;
}

/* red_dim_range self dim: the plan over one dim, 161002 only if it is out of range (ArgMin checks the
 * dim's size later, red_dim_nonzero). */
aclnnStatus opc_red_dim_range(op_call *c, const op_step *s) { return plan_one_dim(c, s); }

/* red_dim_nonzero self dim: 161002 if self's dim (in range) has size 0, ArgMin's message. */
aclnnStatus opc_red_dim_nonzero(op_call *c, const op_step *s) {
    int64_t dim = op_argument(c, s, 1)->i;
    if (!dim_is_empty(op_tensor(c, s, 0), dim)) return ACLNN_SUCCESS;
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Excepted reduction dim %lld to have non-zero size.",
                        (long long)dim);
    return ACLNN_ERR_PARAM_INVALID;
}

/* red_nonempty self: no reduced dim of self has size 0 (Amax: the maximum of nothing is undefined). */
aclnnStatus opc_red_nonempty(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0);
    for (int64_t d = 0; d < self->ndim; d++) {
        if (plan_of(c)->reduce[d] && self->shape[d] == 0) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Expected reducution dim %lld to have non-zero size.",
                                (long long)d);
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    return ACLNN_SUCCESS;
}

/* red_whole self out: the reduction of all of self into one element (Max, Min): self not empty, out
 * holding one element. */
aclnnStatus opc_red_whole(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0), *out = op_tensor(c, s, 1);
    if (pyaclnn_stub_numel(self) == 0) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "%s is empty: the %s of no elements is undefined",
                            op_pname(c, s, 0), c->def->name);
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (pyaclnn_stub_numel(out) != 1) {
        char t[200];
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "%s should hold one element, but its shape is %s",
                            op_pname(c, s, 1), tv_shape_text(out->shape, out->ndim, t, sizeof t));
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

/* red_out_shape self keepdim out ...: each output has the reduced shape of self (keepdim: the reduced
 * dims become 1, else they go). */
aclnnStatus opc_red_out_shape(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0);
    int keepdim = op_argument(c, s, 1)->i != 0;
    int64_t shape[PYACLNN_STUB_MAX_DIMS], ndim = 0;
    for (int64_t d = 0; d < self->ndim; d++) {
        if (!plan_of(c)->reduce[d]) shape[ndim++] = self->shape[d];
        else if (keepdim) shape[ndim++] = 1;
    }
    for (int k = 2; k < s->np; k++) {
        aclnnStatus rc = ew_check_shape(c->api, op_pname(c, s, k), op_tensor(c, s, k), shape, ndim);
        if (rc) return rc;
    }
    return ACLNN_SUCCESS;
}

/* Aminmax: the engine's plan run twice, the minimum into output 0, the maximum into output 1. */
void aminmax_kernel(const pyaclnn_stub_launch *launch) {
    red_plan plan = *(const red_plan *)launch->params;
    pyaclnn_stub_launch one = *launch;
    one.params = &plan;
    one.n_outputs = 1;
    for (int k = 0; k < 2; k++) {
        plan.op = k == 0 ? RED_MIN : RED_MAX;
        one.outputs = &launch->outputs[k];
        red_kernel(&one);
    }
}

/* aminmax_dims self dim: aclnn_aminmax.cpp's CheckDimValid -- an empty self only with one dim; one dim in
 * range ([-1, 0] for a 0-d self) and of non-zero size (several dims: red_dims checks them). */
aclnnStatus opc_aminmax_dims(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0);
    uint64_t n = c->ints[s->p[1]].n;
    int64_t rank = self->ndim;
    if (n != 1 && pyaclnn_stub_numel(self) == 0) return op_invalidf(c->api, "Expected self to be not empty tensor.");
    if (n != 1) return ACLNN_SUCCESS;
    int64_t axis = c->ints[s->p[1]].v[0];
    if (rank == 0 && axis != 0 && axis != -1)
        return op_invalidf(c->api, "Expected dim to be in range of [-1, 0], but got %lld.", (long long)axis);
    if (rank == 0) return ACLNN_SUCCESS;
    if (axis >= rank || axis < -rank)
        return op_invalidf(c->api, "Expected dim to be in range of [%lld, %lld], but got %lld.", (long long)-rank,
                           (long long)(rank - 1), (long long)axis);
    if (self->shape[axis < 0 ? axis + rank : axis] == 0)
        return op_invalidf(c->api, "Expected reduction dim %lld to have non-zero size, but check failed.", (long long)axis);
    return ACLNN_SUCCESS;
}
