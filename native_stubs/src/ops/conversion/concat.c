/*
 * aclnnCat (hicann/ops-math conversion/concat_d/op_api/aclnn_cat.cpp): out = tensors joined along dim;
 * aclnnStack (conversion/pack/op_api/aclnn_stack.cpp): along a new dim (definitions: concat.toml). Inputs of
 * any strides; each is cast to out's dtype with the NPU's Cast (equal dtypes: bytes copied, so bit-exact,
 * class a). Validation in the vendor's order:
 *   Cat:   1. tensors, each element, out non-NULL -> 161001; 2. every dtype and out's in the SoC's list
 *          -> 161002; 3. the dtypes promote and the promoted type casts to out -> 161002; 4. tensor 0 at most
 *          8 dims, dim in range, every tensor of tensor 0's rank and shape off dim -> 161002 (torch's legacy
 *          empty 1-D [0] tensors are skipped); (emulator) the joined size fits in int64, out has the joined
 *          shape.
 *   Stack: 1. tensors or out NULL -> 561103 (ACLNN_ERR_INNER_NULLPTR: the vendor's CHECK_RET code);
 *          2. dtypes in the list -> 161002; 3. promotion -> 161002; 4. at most 8 dims, dim in [-(r+1), r],
 *          equal shapes -> 161002; (emulator) out has the stacked shape.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opbase/checks.h"
#include "kernels/view.h"
#include "ops_decls.h"

typedef struct {
    int64_t dim;
    int stack;
} cat_plan;

static int legacy_empty(const pyaclnn_stub_tensor *t) { return t->ndim == 1 && t->shape[0] == 0; }

void cat_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const cat_plan *p = launch->params;
    const pyaclnn_stub_tensor *out = &launch->outputs[0];
    size_t osz = ew_itemsize(out->dtype);
    int64_t along = 0;
    for (size_t j = 0; j < launch->n_inputs; j++) {
        const pyaclnn_stub_tensor *t = &launch->inputs[j];
        if (!p->stack && legacy_empty(t) && out->ndim != 1) continue;
        int64_t n = pyaclnn_stub_numel(t);
        unsigned char *src = tv_gather_bytes(t);   /* read first: an input may overlap out */
        if (src == NULL) {
            tv_fail_oom(launch);
            return;
        }
        size_t isz = ew_itemsize(t->dtype);
        int raw = t->dtype == out->dtype;
        int64_t idx[PYACLNN_STUB_MAX_DIMS] = {0};
        for (int64_t i = 0; i < n; i++) {
            int64_t off = out->offset;
            for (int64_t d = 0, od = 0; od < out->ndim; od++) {
                int64_t v;
                if (p->stack && od == p->dim) v = (int64_t)j;
                else v = idx[d++] + (!p->stack && od == p->dim ? along : 0);
                off += v * out->strides[od];
            }
            unsigned char *dst = tv_at(out, off);
            if (raw) memcpy(dst, src + i * (int64_t)isz, osz);
            else ew_store(dst, out->dtype, ew_cast(ew_load(src + i * (int64_t)isz, t->dtype), t->dtype, out->dtype));
            for (int64_t d = t->ndim - 1; d >= 0; d--) {
                if (++idx[d] < t->shape[d]) break;
                idx[d] = 0;
            }
        }
        free(src);
        if (!p->stack) along += t->shape[p->dim];
    }
}

/* not_null_stack tensors out: the vendor's CHECK_RET on Stack's NULL tensors or out: 561103. */
aclnnStatus opc_not_null_stack(op_call *c, const op_step *s) {
    if (op_argument(c, s, 0)->p == NULL || op_argument(c, s, 1)->p == NULL) {
        pyaclnn_stub_report(ACLNN_ERR_INNER_NULLPTR, c->api, op_argument(c, s, 0)->p == NULL
                            ? "Input of aclnnStack should not be null." : "out is NULL");
        return ACLNN_ERR_INNER_NULLPTR;
    }
    return ACLNN_SUCCESS;
}

/* join_nonempty tensors: at least one tensor. */
aclnnStatus opc_join_nonempty(op_call *c, const op_step *s) {
    if (c->lists[s->p[0]].n != 0) return ACLNN_SUCCESS;
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "%s is empty: %s needs at least one tensor", op_pname(c, s, 0),
                        c->def->name);
    return ACLNN_ERR_PARAM_INVALID;
}

/* join_promote tensors out: the tensors' dtypes promote, and the promoted dtype casts to out's. */
aclnnStatus opc_join_promote(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *t = c->lists[s->p[0]].t;
    aclDataType promoted = t[0].dtype, out = op_tensor(c, s, 1)->dtype;
    char b1[24], b2[24];
    for (size_t i = 1; i < c->lists[s->p[0]].n; i++) {
        aclDataType next = t[i].dtype == promoted ? promoted : ew_promote(t[i].dtype, promoted);
        if (next == ACL_DT_UNDEFINED) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "tensor %zu dtype %s and dtype %s can not promote "
                                "dtype.", i, op_dtype_name(t[i].dtype, b1), op_dtype_name(promoted, b2));
            return ACLNN_ERR_PARAM_INVALID;
        }
        promoted = next;
    }
    if (promoted != out && !ew_can_cast(promoted, out)) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Can not cast from %s to %s.", op_dtype_name(promoted, b1),
                            op_dtype_name(out, b2));
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

/* The shapes of Cat (stack 0) or Stack (1): the reference tensor (tensor 0; Cat: the first that is not a
 * legacy empty one) at most 8 dims, dim in range, every tensor of its rank and shape (off dim for Cat), out
 * with the joined shape; the kernel's plan. */
static aclnnStatus join_shape(op_call *c, const op_step *s, int stack) {
    const pyaclnn_stub_tensor *t = c->lists[s->p[0]].t;
    size_t n = (size_t)c->lists[s->p[0]].n, ref = 0;
    int64_t dim = op_argument(c, s, 1)->i;
    aclnnStatus rc;
    if (!stack)
        while (ref + 1 < n && legacy_empty(&t[ref])) ref++;
    int64_t rank = t[ref].ndim;
    char name[64];
    snprintf(name, sizeof name, "%s[0]", op_pname(c, s, 0));
    if ((rc = ew_check_max_dim(c->api, name, &t[ref], EW_MAX_DIM))) return rc;
    int64_t d0 = dim;
    if (dim < 0) dim += rank + (stack ? 1 : 0);
    if (dim < 0 || dim > rank - (stack ? 0 : 1)) {
        if (stack)
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "dimnum %lld exceed the dim range of the [%lld, %lld].",
                                (long long)d0, (long long)-(rank + 1), (long long)rank);
        else
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "dimnum %lld exceed the dim range of the tensor %lld.",
                                (long long)d0, (long long)rank);
        return ACLNN_ERR_PARAM_INVALID;
    }
    int64_t along = 0;
    for (size_t i = 0; i < n; i++) {
        if (!stack && legacy_empty(&t[i]) && rank != 1) continue;
        if (t[i].ndim != rank) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "dimnum of tensor %zu is [%lld], should be equal to "
                                "tensor 0 [%lld].", i, (long long)t[i].ndim, (long long)rank);
            return ACLNN_ERR_PARAM_INVALID;
        }
        for (int64_t j = 0; j < rank; j++) {
            if (!stack && j == dim) continue;
            if (t[i].shape[j] != t[ref].shape[j]) {
                pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "dim %lld of tensor %zu is [%lld], should be "
                                    "equal to tensor 0 [%lld].", (long long)j, i, (long long)t[i].shape[j],
                                    (long long)t[ref].shape[j]);
                return ACLNN_ERR_PARAM_INVALID;
            }
        }
        if (!stack && __builtin_add_overflow(along, t[i].shape[dim], &along)) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "the sizes of dim %lld of the tensors add up to more "
                                "than INT64_MAX.", (long long)dim);
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    int64_t shape[PYACLNN_STUB_MAX_DIMS], ond = 0;
    for (int64_t j = 0; j < rank + (stack ? 1 : 0); j++) {
        if (stack) shape[ond++] = j == dim ? (int64_t)n : t[ref].shape[j - (j > dim)];
        else shape[ond++] = j == dim ? along : t[ref].shape[j];
    }
    if ((rc = ew_check_shape(c->api, op_pname(c, s, 2), op_tensor(c, s, 2), shape, ond))) return rc;
    cat_plan *plan = op_params(c, sizeof *plan);
    plan->dim = dim;
    plan->stack = stack;
    return ACLNN_SUCCESS;
}

/* cat_shape tensors dim out / stack_shape tensors dim out: the shapes and the plan (join_shape). */
aclnnStatus opc_cat_shape(op_call *c, const op_step *s) { return join_shape(c, s, 0); }
aclnnStatus opc_stack_shape(op_call *c, const op_step *s) { return join_shape(c, s, 1); }
