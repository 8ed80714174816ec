/*
 * aclnnSearchSorted and aclnnSearchSorteds: torch's searchsorted / bucketize on the NPU (hicann/ops-math
 * math/search_sorted; the AI CPU kernel's CustomizedLowerBound / CustomizedUpperBound). sortedSequence and self are
 * cast to their promoted dtype; each self element is searched in sortedSequence's row (the only row when
 * sortedSequence is 1-D, else the row of self's leading indices): lower bound moves right while !(v >= key), upper
 * bound while !(v > key) (so a NaN key lands at the row's end), v read through the sorter when there is one.
 * Definitions: searchsorted.toml.
 */
#include <stdlib.h>

#include "kernels/dtype.h"
#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"

typedef struct {
    int one_row;                 /* sortedSequence is 1-D */
    int right, scalar;           /* upper bound; self is `value` (SearchSorteds) */
    int zeros;                   /* an empty operand: out = zeros (the op_api's ZerosLike) */
    aclDataType promote;
    int64_t len, repeat, n;      /* sortedSequence's last dim, self's last dim, self's elements */
    ew_value value;              /* SearchSorteds: self in sortedSequence's dtype */
} ss_params;

static int below(const ss_params *p, ew_value v, ew_value key, int right) {   /* the loop's "move right" test */
    if (ew_is_float(p->promote)) return right ? !(v.f > key.f) : !(v.f >= key.f);
    return right ? !(v.i > key.i) : !(v.i >= key.i);
}

/* inputs: sortedSequence, self (absent for SearchSorteds), sorter (optional); output: out */
void searchsorted_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const ss_params *p = launch->params;
    const pyaclnn_stub_tensor *seq = &launch->inputs[0], *self = &launch->inputs[1], *sorter = &launch->inputs[2];
    if (p->zeros) {
        double *z = tv_alloc(pyaclnn_stub_numel(&launch->outputs[0]), sizeof(double));
        if (z == NULL) {
            tv_fail_oom(launch);
            return;
        }
        for (int64_t i = 0; i < pyaclnn_stub_numel(&launch->outputs[0]); i++) z[i] = 0;
        tv_store_double(&launch->outputs[0], z);
        free(z);
        return;
    }
    int has_sorter = launch->n_inputs > 2 && sorter->present;
    unsigned char *sb = tv_gather_bytes(seq), *xb = p->scalar ? NULL : tv_gather_bytes(self);
    unsigned char *ob = has_sorter ? tv_gather_bytes(sorter) : NULL;
    int64_t seq_n = pyaclnn_stub_numel(seq);
    ew_value *sv = tv_alloc(seq_n, sizeof(ew_value));
    int64_t *res = tv_alloc(p->n, sizeof(int64_t));
    if (sb == NULL || (!p->scalar && xb == NULL) || (has_sorter && ob == NULL) || sv == NULL || res == NULL) {
        tv_fail_oom(launch);
        goto done;
    }
    size_t ss = ew_itemsize(seq->dtype);
    for (int64_t i = 0; i < seq_n; i++) sv[i] = ew_cast(ew_load(sb + i * ss, seq->dtype), seq->dtype, p->promote);
    const int64_t *ord = (const int64_t *)ob;
    if (has_sorter)                                   /* the kernel's range check of the sorter */
        for (int64_t i = 0; i < seq_n; i++)
            if (ord[i] < 0 || ord[i] >= p->len) {
                pyaclnn_stub_task_fail(ACL_ERROR_RT_AICPU_EXCEPTION, "sorter index out of range, sorter value is [%lld], "
                                       "last dim is [%lld]", (long long)ord[i], (long long)p->len);
                goto done;
            }
    for (int64_t i = 0; i < p->n; i++) {
        ew_value key = p->scalar ? ew_cast(p->value, seq->dtype, p->promote)
                                 : ew_cast(ew_load(xb + i * ew_itemsize(self->dtype), self->dtype), self->dtype,
                                           p->promote);
        int64_t start = p->one_row ? 0 : i / p->repeat * p->len, lo = start, hi = start + p->len;
        while (lo < hi) {
            int64_t mid = lo + ((hi - lo) >> 1);
            ew_value v = sv[has_sorter ? ord[mid] + start : mid];
            if (below(p, v, key, p->right)) lo = mid + 1;
            else hi = mid;
        }
        res[i] = lo - start;
    }
    double *outv = tv_alloc(p->n, sizeof(double));
    if (outv == NULL) {
        tv_fail_oom(launch);
        goto done;
    }
    for (int64_t i = 0; i < p->n; i++) outv[i] = (double)res[i];
    tv_store_double(&launch->outputs[0], outv);
    free(outv);
done:
    free(sb), free(xb), free(ob), free(sv), free(res);
}

/* ---- steps ------------------------------------------------------------------------------------ */

#define invalid(c, ...) op_invalidf((c)->api, __VA_ARGS__)

static aclnnStatus expect_dtype(op_call *c, const op_step *s, int k, aclDataType want) {
    const pyaclnn_stub_tensor *t = op_tensor(c, s, k);
    char a[24], b[24];
    if (!t->present || t->dtype == want) return ACLNN_SUCCESS;
    return invalid(c, "Tensor %s expected dtype is %s but found %s.", op_pname(c, s, k), op_dtype_name(want, a),
                   op_dtype_name(t->dtype, b));
}

/* ss_out_dtype out outInt32: out INT32 when outInt32, else INT64 (OP_CHECK_DTYPE_NOT_MATCH). */
aclnnStatus opc_ss_out_dtype(op_call *c, const op_step *s) {
    return expect_dtype(c, s, 0, op_argument(c, s, 1)->i ? ACL_INT32 : ACL_INT64);
}

/* ss_sorter_dtype sorter: a sorter is INT64. */
aclnnStatus opc_ss_sorter_dtype(op_call *c, const op_step *s) { return expect_dtype(c, s, 0, ACL_INT64); }

static aclnnStatus scalar_only_1d(op_call *c, const pyaclnn_stub_tensor *seq, const int64_t *xs, int64_t xn) {
    if (xn == 1 && xs[0] == 1 && seq->ndim != 1) {
        char a[200], b[200];
        return invalid(c, "self value can be a scalar only when sortedSequence tensor dimension is 1, but we got "
                       "sortedSequence tensor dim(%s) and self value's dim(%s).",
                       tv_shape_text(seq->shape, seq->ndim, a, sizeof a), tv_shape_text(xs, xn, b, sizeof b));
    }
    return ACLNN_SUCCESS;
}

/* ss_shape sortedSequence self (CheckShape's end): a [1] self needs a 1-D sortedSequence; sortedSequence 1-D or
 * of self's rank with self's leading dims. */
aclnnStatus opc_ss_shape(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *seq = op_tensor(c, s, 0), *x = op_tensor(c, s, 1);
    aclnnStatus rc = scalar_only_1d(c, seq, x->shape, x->ndim);
    if (rc) return rc;
    int match = seq->ndim == x->ndim;
    for (int64_t d = 0; match && d + 1 < seq->ndim; d++) match = seq->shape[d] == x->shape[d];
    if (seq->ndim == 1 || match) return ACLNN_SUCCESS;
    char a[200], b[200];
    return invalid(c, "sortedSequence tensor should be 1 dimension or the first N-1 dimension of sortedSequence tensor "
                   "and self value tensor must match, but we got sortedSequence tensor %s and self value tensor %s.",
                   tv_shape_text(seq->shape, seq->ndim, a, sizeof a), tv_shape_text(x->shape, x->ndim, b, sizeof b));
}

/* ss_promote sortedSequence self LIST (CheckPromoteType) */
aclnnStatus opc_ss_promote(op_call *c, const op_step *s) {
    aclDataType a = op_tensor(c, s, 0)->dtype, b = op_tensor(c, s, 1)->dtype, pt = ew_promote(a, b);
    char x[24], y[24], z[24], list[256];
    if (pt == ACL_DT_UNDEFINED)
        return invalid(c, "sortedSequence dtype %s and self dtype %s can not promote dtype.", op_dtype_name(a, x),
                       op_dtype_name(b, y));
    size_t n;
    const aclDataType *l = op_list(s->list, &n);
    if (!ew_in_list(pt, l, n))
        return invalid(c, "promoteType dtype %s not in dtype support list [%s].", op_dtype_name(pt, z),
                       ew_dtype_list(l, n, list, sizeof list));
    return ACLNN_SUCCESS;
}

/* ss_scalar_out sortedSequence self out (SearchSorteds before the tensor form): out non-empty, then taken as [1]
 * (the op_api's SetViewShape); self is read with ToFloat and converted to sortedSequence's dtype. */
aclnnStatus opc_ss_scalar_out(op_call *c, const op_step *s) {
    pyaclnn_stub_tensor *out = op_tensor(c, s, 2);
    if (pyaclnn_stub_numel(out) == 0) return invalid(c, "The shape of out tensor should be {1}.");
    out->ndim = 1, out->shape[0] = 1, out->strides[0] = 1;
    return ACLNN_SUCCESS;
}

/* ss_scalar_shape sortedSequence: the tensor form's checks of a [1] self: sortedSequence must be 1-D. */
aclnnStatus opc_ss_scalar_shape(op_call *c, const op_step *s) {
    static const int64_t one[1] = {1};
    return scalar_only_1d(c, op_tensor(c, s, 0), one, 1);
}

/* ss_plan sortedSequence self right sorter out: zeros for an empty sortedSequence / self / out (the op_api's
 * ZerosLike), else the plan. self is a tensor (SearchSorted) or a scalar (SearchSorteds). */
aclnnStatus opc_ss_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *seq = op_tensor(c, s, 0), *y = op_tensor(c, s, 4);
    int scalar = c->def->params[s->p[1]].kind != OP_K_TENSOR;
    ss_params *p = op_params(c, sizeof(ss_params));
    p->scalar = scalar, p->right = op_argument(c, s, 2)->i != 0, p->one_row = seq->ndim == 1;
    p->len = seq->ndim ? seq->shape[seq->ndim - 1] : 1;
    if (scalar) {
        op_scalar *sc = op_scalar_of(c, s, 1);
        float f = (float)ew_value_to_double(sc->v, sc->dtype);                       /* ToFloat */
        p->value = ew_cast((ew_value){.f = f, .i = (int64_t)f}, ACL_FLOAT, seq->dtype);
        p->promote = seq->dtype, p->repeat = 1, p->n = 1;
    } else {
        const pyaclnn_stub_tensor *x = op_tensor(c, s, 1);
        p->promote = ew_promote(seq->dtype, x->dtype);
        p->repeat = x->ndim ? x->shape[x->ndim - 1] : 1, p->n = pyaclnn_stub_numel(x);
        if (p->n == 0) p->repeat = 1;
    }
    if (pyaclnn_stub_numel(seq) == 0 || p->n == 0 || pyaclnn_stub_numel(y) == 0) p->zeros = 1;
    return ACLNN_SUCCESS;
}
