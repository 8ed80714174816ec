/*
 * The steps of the operators of gather_scatter.toml: torch.gather (aclnnGather), the scatters (aclnnScatter,
 * ScatterValue, their in-place forms, ScatterAdd), aclnnIndexAdd, the index fills (aclnnIndexFill, IndexFillTensor
 * and their in-place forms), and the kernel of aclnnInplaceMaskedScatter. The gathers and scatters run on the
 * gather engine's along-one-dimension walk (kernels/gather.h: idx_dim_gather_kernel, idx_dim_scatter_kernel).
 *
 * Gather (hicann/ops-nn index/gather_elements_v2/op_host/op_api/aclnn_gather.cpp): self's dtype list per SoC,
 * a non-empty index INT64/INT32, out's dtype self's; self and index have as many dims (0-d counts as 1), at most
 * 8 dims each, out has index's shape, dim in range, index no larger than self outside dim and self's dim not 0.
 * Scatter* (index/scatter_elements_v2/op_api/aclnn_scatter.cpp): self's list, src's and out's dtype self's, a
 * non-empty index INT64/INT32; an empty index copies self to out; else self, index and src have as many dims
 * (Ascend 950: 0-d counts as 1), out has self's shape, index fits in src, and in self outside dim, dim in
 * range. reduce 1 adds, 2 multiplies, anything else assigns (the vendor's GetReduceStr).
 * IndexAdd (index/inplace_scatter_add/op_host/op_api/aclnn_index_add.cpp): a 0-d index or source counts as
 * 1-D; out = self with alpha * source's slices added at the index positions along dim.
 * IndexFill* (index/index_fill_d/op_api/aclnn_index_fill.cpp, aclnn_index_fill_tensor.cpp): out = self with the
 * slices at the index positions along dim set to value. IndexFillTensor takes the index as an aclIntArray,
 * checked in phase 1; on Atlas A2 it runs IndexFillD with two assist tensors (x * 1 + 0, filled x * 0 +
 * value, the value through fp32: aclScalar::ToFloat).
 * MaskedScatter (index/masked_scatter/op_api/aclnn_masked_scatter.cpp): selfRef's elements where mask
 * (broadcast to selfRef) is set take source's elements in row-major order.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/gather.h"
#include "opbase/checks.h"
#include "ops_decls.h"

static int64_t rank1(const pyaclnn_stub_tensor *t) { return t->ndim == 0 ? 1 : t->ndim; }

static int64_t dim_size(const pyaclnn_stub_tensor *t, int64_t d) { return t->ndim == 0 ? 1 : t->shape[d]; }

static aclnnStatus invalid(op_call *c, const char *fmt, long long a, long long b, long long d) {
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, fmt, a, b, d);
    return ACLNN_ERR_PARAM_INVALID;
}

/* A plan over a walk of t's shape (0-d: [1]). */
static idx_dim_plan *dim_plan(op_call *c, const pyaclnn_stub_tensor *t, int64_t dim) {
    idx_dim_plan *p = op_params(c, offsetof(idx_dim_plan, list));
    p->dim = (int)dim;
    p->ndim = (int)rank1(t);
    for (int d = 0; d < p->ndim; d++) p->walk[d] = dim_size(t, d);
    return p;
}

/* nonempty_dtype_in t LIST: t's dtype in LIST unless t is empty (the vendors' index checks). */
aclnnStatus opc_nonempty_dtype_in(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *t = op_tensor(c, s, 0);
    size_t n;
    const aclDataType *list = op_list(s->list, &n);
    if (pyaclnn_stub_numel(t) == 0) return ACLNN_SUCCESS;
    return ew_check_dtype_in(c->api, op_pname(c, s, 0), t->dtype, list, n);
}

/* ---- aclnnGather ------------------------------------------------------------------------------------ */

/* gather_rank self index: as many dims (0-d counts as 1). */
aclnnStatus opc_gather_rank(op_call *c, const op_step *s) {
    if (rank1(op_tensor(c, s, 0)) == rank1(op_tensor(c, s, 1))) return ACLNN_SUCCESS;
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Index tensor must have the same number of dimensions as "
                        "input tensor.");
    return ACLNN_ERR_PARAM_INVALID;
}

/* gather_plan self dim index: dim in range; (a non-empty index) index no larger than self outside dim, self's
 * dim not empty; the walk over index's shape. */
aclnnStatus opc_gather_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0), *ix = op_tensor(c, s, 2);
    int64_t dim = op_argument(c, s, 1)->i, r = rank1(self);
    if (dim < -r || dim >= r)
        return invalid(c, "Dimension out of range (expected to be in range of [%lld, %lld], but got %lld)", -r, r - 1,
                       dim);
    if (dim < 0) dim += r;
    if (pyaclnn_stub_numel(ix) == 0) {
        c->nothing = 1;
        return ACLNN_SUCCESS;
    }
    for (int64_t d = 0; d < self->ndim; d++) {
        if (d != dim && ix->shape[d] > self->shape[d])
            return invalid(c, "Size does not match at dimension %lld, expected index shape %lld smaller than self "
                           "shape %lld", d, ix->shape[d], self->shape[d]);
        if (d == dim && self->shape[d] == 0)
            return invalid(c, "Size does not match at dimension %lld, expected index shape to be 0", d, 0, 0);
    }
    dim_plan(c, ix, dim)->per_element = 1;
    return ACLNN_SUCCESS;
}

/* ---- the scatters --------------------------------------------------------------------------------- */

/* Each dim of a no larger than b's (but dim `skip`), over the dims both have. */
static int fits(const pyaclnn_stub_tensor *a, const pyaclnn_stub_tensor *b, int64_t skip) {
    int64_t n = a->ndim < b->ndim ? a->ndim : b->ndim;
    for (int64_t d = 0; d < n; d++)
        if (d != skip && b->shape[d] < a->shape[d]) return 0;
    return 1;
}

static aclnnStatus bad_fit(op_call *c, const char *fmt, const pyaclnn_stub_tensor *a, const pyaclnn_stub_tensor *b,
                           long long dim) {
    char x[200], y[200];
    tv_shape_text(a->shape, a->ndim, x, sizeof x);
    tv_shape_text(b->shape, b->ndim, y, sizeof y);
    if (dim == INT64_MIN) pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, fmt, x, y);
    else pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, fmt, dim, x, y);
    return ACLNN_ERR_PARAM_INVALID;
}

/* scatter_plan self dim index src out (reduce | N): (src a tensor or a scalar value) an empty index copies
 * self to out; else the vendor's CheckParams2 (dims, shapes, dim range) and the walk over index's shape.
 * reduce (the parameter, or the integer N): 1 add, 2 multiply, else assign. */
aclnnStatus opc_scatter_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0), *ix = op_tensor(c, s, 2), *out = op_tensor(c, s, 4);
    int is_value = c->def->params[s->p[3]].kind == OP_K_SCALAR;
    const pyaclnn_stub_tensor *src = is_value ? ix : op_tensor(c, s, 3);
    int64_t dim = op_argument(c, s, 1)->i, reduce = s->has_n ? s->n : op_argument(c, s, 5)->i, n = self->ndim;
    aclnnStatus rc;
    if (pyaclnn_stub_numel(ix) == 0) {   /* ViewCopy(self, out) */
        if ((rc = ew_check_shape(c->api, op_pname(c, s, 4), out, self->shape, self->ndim))) return rc;
        idx_dim_plan *p = dim_plan(c, self, 0);
        p->walk[0] = 0;
        if (pyaclnn_stub_numel(self) == 0) c->nothing = 1;
        return ACLNN_SUCCESS;
    }
    int r0 = ew_soc_is_950();            /* Ascend 950 counts a 0-d tensor as 1-D here */
    int64_t rs = r0 ? rank1(self) : self->ndim, ri = r0 ? rank1(ix) : ix->ndim, rsrc = r0 ? rank1(src) : src->ndim;
    if (rs != ri || rs != rsrc) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "expect self, index, src have same number of dimensions.");
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (out->ndim != 0 && (rc = ew_check_shape(c->api, op_pname(c, s, 4), out, self->shape, self->ndim))) return rc;
    if (out->ndim == 0 && pyaclnn_stub_numel(out) != pyaclnn_stub_numel(self))
        return invalid(c, "out has %lld elements, self %lld (the emulator's check)", 1, pyaclnn_stub_numel(self), 0);
    int64_t final = dim < 0 ? (dim + n >= 0 ? dim + n : 0) : (dim < n ? dim : n - 1);
    if (!fits(ix, src, -1))
        return bad_fit(c, "Expect index shape %s should be smaller than src shape %s in each dimension.", ix, src,
                       INT64_MIN);
    if (!fits(ix, self, final))
        return bad_fit(c, "Apart from dimension %lld, index shape %s should be smaller than self shape %s in each "
                       "dimension.", ix, self, dim);
    if ((rc = ew_check_max_dim(c->api, op_pname(c, s, 0), self, EW_MAX_DIM))) return rc;
    int64_t hi = -n > n - 1 ? -n : n - 1, lo = -n < n - 1 ? -n : n - 1;
    if (dim > hi || dim < lo) return invalid(c, "dim must be in range [%lld, %lld].", lo, hi, 0);
    idx_dim_plan *p = dim_plan(c, ix, final < 0 ? 0 : final);
    p->per_element = 1;
    p->reduce = reduce == IDX_ADD || reduce == IDX_MUL ? (int)reduce : IDX_SET;
    p->src = is_value ? IDX_SRC_VALUE : IDX_SRC_TENSOR;
    if (is_value) p->value = ew_cast(op_scalar_of(c, s, 3)->v, op_scalar_of(c, s, 3)->dtype, self->dtype);
    return ACLNN_SUCCESS;
}

/* ---- aclnnIndexAdd --------------------------------------------------------------------------------- */

static aclnnStatus list_check(op_call *c, const op_step *s, const char *what, aclDataType dt) {
    size_t n;
    const aclDataType *list = op_list(s->list, &n);
    if (ew_in_list(dt, list, n)) return ACLNN_SUCCESS;
    char b[24], all[256];
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "%s dtype %s should be in dtype support list [%s].", what,
                        op_dtype_name(dt, b), ew_dtype_list(list, n, all, sizeof all));
    return ACLNN_ERR_PARAM_INVALID;
}

/* index_add_dtypes self index source out LIST: the vendor's CheckDtypeValid (its own messages). */
aclnnStatus opc_index_add_dtypes(op_call *c, const op_step *s) {
    aclDataType self = op_tensor(c, s, 0)->dtype, ix = op_tensor(c, s, 1)->dtype, src = op_tensor(c, s, 2)->dtype,
                out = op_tensor(c, s, 3)->dtype;
    aclnnStatus rc;
    if ((rc = list_check(c, s, "Self", self))) return rc;
    if (ix != ACL_INT64 && ix != ACL_INT32) {
        char b[24];
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "index dtype %s should be in dtype support list [INT64, "
                            "INT32].", op_dtype_name(ix, b));
        return ACLNN_ERR_PARAM_INVALID;
    }
    if ((rc = list_check(c, s, "source", src)) || (rc = list_check(c, s, "outDtype", out))) return rc;
    if (self != src || self != out) {
        char b1[24], b2[24];
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "self dtype %s and source dtype %s must same.",
                            op_dtype_name(self, b1), op_dtype_name(self != src ? src : out, b2));
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

/* index_add_plan self dim index source alpha out: the vendor's CheckShape (a 0-d index or source as 1-D), then
 * the walk over source's shape, alpha cast to self's dtype. Nothing to launch for an empty self or source. */
aclnnStatus opc_index_add_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0), *out = op_tensor(c, s, 5);
    pyaclnn_stub_tensor ix = *op_tensor(c, s, 2), src = *op_tensor(c, s, 3);
    int64_t dim = op_argument(c, s, 1)->i, n = self->ndim;
    aclnnStatus rc;
    for (pyaclnn_stub_tensor *t = &ix; t; t = t == &ix ? &src : NULL)
        if (t->ndim == 0) t->ndim = 1, t->shape[0] = 1, t->strides[0] = 1;
    if ((rc = ew_check_max_dim(c->api, op_pname(c, s, 0), self, EW_MAX_DIM)) ||
        (rc = ew_check_max_dim(c->api, op_pname(c, s, 3), &src, EW_MAX_DIM)))
        return rc;
    if (n == 0 && dim != -1 && dim != 0)
        return invalid(c, "when self.dims() == 0, dim should be 0 or -1, but dim is %lld.", dim, 0, 0);
    if (n != 0 && (dim < -n || dim >= n))
        return invalid(c, "dim should be in [-self.dims(), self.dims), but dim is %lld.", dim, 0, 0);
    if (n != 0 && n != src.ndim) return invalid(c, "DimNum of self must be equal to dimNum of source.", 0, 0, 0);
    int64_t d0 = dim >= 0 ? dim : n + dim;
    for (int64_t d = 0; d < n; d++)
        if (d != d0 && self->shape[d] != src.shape[d])
            return invalid(c, "The size of self must match the size of source at dimension %lld.", dim, 0, 0);
    if (ix.ndim > 1) return invalid(c, "Index dimension %lld is supposed to be 1.", ix.ndim, 0, 0);
    if (ix.shape[0] != src.shape[d0 < 0 ? 0 : d0])
        return invalid(c, "Number of index should be equal to number of source in dim  %lld.", dim, 0, 0);
    if ((rc = ew_check_shape(c->api, op_pname(c, s, 5), out, self->shape, self->ndim))) return rc;
    if (pyaclnn_stub_numel(self) == 0 || pyaclnn_stub_numel(&src) == 0) {
        c->nothing = 1;
        return ACLNN_SUCCESS;
    }
    idx_dim_plan *p = dim_plan(c, &src, d0 < 0 ? 0 : d0);
    p->reduce = IDX_ADD;
    p->has_alpha = 1;
    aclDataType dt = self->dtype, acc = !ew_is_float(dt) ? ACL_INT64 : dt == ACL_DOUBLE ? ACL_DOUBLE : ACL_FLOAT;
    const op_scalar *alpha = op_scalar_of(c, s, 4);
    p->alpha = ew_cast(ew_cast(alpha->v, alpha->dtype, dt), dt, acc);
    return ACLNN_SUCCESS;
}

/* ---- the index fills ------------------------------------------------------------------------------- */

/* index_fill_plan self dim index value out: (a non-empty self) out has self's shape, at most 8 dims, dim in
 * range (the vendor's messages); an aclIntArray index: every value in range (held in the plan); an empty self
 * launches nothing, an empty index copies self. IndexFillTensor on Atlas A2: the assist path. */
aclnnStatus opc_index_fill_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0), *out = op_tensor(c, s, 4);
    int is_list = c->def->params[s->p[2]].kind == OP_K_INT_ARRAY;
    int64_t dim = op_argument(c, s, 1)->i, n = self->ndim;
    aclnnStatus rc;
    if (pyaclnn_stub_numel(self) == 0) {
        c->nothing = 1;
        return ACLNN_SUCCESS;
    }
    if ((rc = ew_check_shape(c->api, op_pname(c, s, 4), out, self->shape, self->ndim)) ||
        (rc = ew_check_max_dim(c->api, op_pname(c, s, 0), self, EW_MAX_DIM)))
        return rc;
    if ((dim != 0 && dim >= n) || (dim == 0 && dim > n))
        return invalid(c, "Dim value error, input dim[%lld] is greater than self dim[%lld].", dim, n, 0);
    if ((dim < 0 && dim < -n && n > 0) || (dim < 0 && dim < -1 && n == 0))   /* (no -dim: INT64_MIN) */
        return invalid(c, "Dim value error, abs(input dim[%lld]) is greater than self dim[%lld].", dim, n, 0);
    int64_t d0 = dim >= 0 ? dim : (n > 0 ? dim + n : 0), size = dim_size(self, d0);
    int64_t count = is_list ? (int64_t)c->ints[s->p[2]].n : pyaclnn_stub_numel(op_tensor(c, s, 2));
    for (int64_t i = 0; is_list && i < count; i++) {
        int64_t v = c->ints[s->p[2]].v[i];
        if (v >= size || v < -size)
            return invalid(c, "Index value[%lld] is out of range, it should be smaller than [%lld].", v, size, 0);
    }
    if (is_list && count > IDX_DIM_LIST_MAX)
        return invalid(c, "index has %lld values; the emulator takes at most %lld", count, IDX_DIM_LIST_MAX, 0);
    idx_dim_plan *p = dim_plan(c, self, d0);
    p->walk[d0] = count;
    p->src = IDX_SRC_VALUE;
    const op_scalar *v = op_scalar_of(c, s, 3);
    p->value = ew_cast(v->v, v->dtype, self->dtype);
    if (!is_list) return ACLNN_SUCCESS;
    p->n_list = count;
    for (int64_t i = 0; i < count; i++) p->list[i] = c->ints[s->p[2]].v[i];
    c->params_size = idx_dim_plan_size(p);
    if (!ew_soc_is_950() && count) {   /* IndexFillD: value->ToFloat(), assist tensors cast to self's dtype */
        p->assist = 1;
        ew_value f = {(float)ew_value_to_double(v->v, v->dtype), 0};
        p->value = ew_cast(f, ACL_FLOAT, self->dtype);
    }
    return ACLNN_SUCCESS;
}

/* ---- aclnnInplaceMaskedScatter ----------------------------------------------------------------------- */

/* selfRef[mask] = source's elements, in order (mask broadcast to selfRef); too few source elements fault. */
void masked_scatter_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const pyaclnn_stub_tensor *self = &launch->outputs[0], *mask = &launch->inputs[1], *src = &launch->inputs[2];
    size_t isz = ew_itemsize(self->dtype);
    int64_t n = pyaclnn_stub_numel(self), have = pyaclnn_stub_numel(src), k = 0;
    int64_t *at = malloc(sizeof(int64_t) * (size_t)n + 1);
    if (at == NULL) {
        tv_fail_oom(launch);
        return;
    }
    tv_bcast2 it;
    tv_bcast2_init(&it, self, mask, self->shape, self->ndim);
    for (int64_t i = 0; i < n; i++, tv_bcast2_next(&it))
        if (*tv_at(mask, it.off[1])) at[k++] = it.off[0];
    if (k > have) {
        pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "%s: mask has %lld set elements, source only %lld",
                               launch->op_name, (long long)k, (long long)have);
        free(at);
        return;
    }
    unsigned char *vals = malloc((size_t)k * isz + 1);   /* source read first: it may overlap selfRef */
    if (vals == NULL) {
        free(at);
        tv_fail_oom(launch);
        return;
    }
    for (int64_t j = 0; j < k; j++) memcpy(vals + j * (int64_t)isz, tv_at(src, tv_offset(src, j)), isz);
    for (int64_t j = 0; j < k; j++) memcpy(tv_at(self, at[j]), vals + j * (int64_t)isz, isz);
    free(vals);
    free(at);
}

static int64_t read_index_value(const pyaclnn_stub_tensor *t, int64_t off) {
    return t->dtype == ACL_INT32 ? *(const int32_t *)tv_at(t, off) : *(const int64_t *)tv_at(t, off);
}

/* ---- aclnnEmbeddingRenorm (hicann/ops-nn norm/renorm/op_api/aclnn_embedding_renorm.cpp) ---------------------- *
 * The rows of selfRef at indices (GatherV2), their p-norms (the Renorm kernel, arch35 renorm_dag.h: in fp32,
 * norm = max(norm, 1e-12), scale = min(norm, maxNorm) / norm; a NaN maxNorm counts as inf), the rows times
 * their scale written back (ScatterUpdate: a repeated index writes the same row again). The NPU's reduction
 * order is not published: the norms are summed in fp32 in row order here (class c). */

typedef struct {
    double max_norm, norm_type;
} renorm_plan;

/* renorm_rank selfRef: exactly 2 dims (the vendor's message). */
aclnnStatus opc_renorm_rank(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *t = op_tensor(c, s, 0);
    if (t->ndim == 2) return ACLNN_SUCCESS;
    char b[200];
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Embedding_Renorm: Except 2-dimension Tensor but got "
                        "[%s]-dimension Tensor.", tv_shape_text(t->shape, t->ndim, b, sizeof b));
    return ACLNN_ERR_PARAM_INVALID;
}

/* embedding_renorm_plan selfRef indices maxNorm normType: nothing for an empty selfRef or indices. */
aclnnStatus opc_embedding_renorm_plan(op_call *c, const op_step *s) {
    renorm_plan *p = op_params(c, sizeof *p);
    p->max_norm = op_argument(c, s, 2)->d;
    p->norm_type = op_argument(c, s, 3)->d;
    if (p->max_norm != p->max_norm) p->max_norm = INFINITY;
    if (pyaclnn_stub_numel(op_tensor(c, s, 0)) == 0 || pyaclnn_stub_numel(op_tensor(c, s, 1)) == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}

/* The fp32 p-norm of n values (p: 0 counts, inf / -inf: the largest / smallest magnitude). */
static float row_norm(const float *x, int64_t n, double p) {
    float acc = p == -INFINITY ? INFINITY : 0.0f;
    for (int64_t j = 0; j < n; j++) {
        float a = fabsf(x[j]);
        if (p == INFINITY) acc = a > acc ? a : acc;
        else if (p == -INFINITY) acc = a < acc ? a : acc;
        else if (p == 0) acc += a != 0.0f;
        else if (p == 1) acc += a;
        else if (p == 2) acc += a * a;
        else acc += (float)pow(a, p);
    }
    if (p == 2) return sqrtf(acc);
    if (p == 0 || p == 1 || p == INFINITY || p == -INFINITY) return acc;
    return (float)pow(acc, 1.0 / p);
}

void embedding_renorm_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const renorm_plan *p = launch->params;
    const pyaclnn_stub_tensor *self = &launch->outputs[0], *ix = &launch->inputs[1];
    int64_t rows = self->shape[0], cols = self->shape[1], k = pyaclnn_stub_numel(ix);
    float *row = malloc(sizeof(float) * (size_t)cols + 1);
    int64_t *at = malloc(sizeof(int64_t) * (size_t)k + 1);
    if (row == NULL || at == NULL) {
        tv_fail_oom(launch);
        goto done;
    }
    for (int64_t i = 0; i < k; i++) {   /* every index first: a fault writes nothing */
        at[i] = read_index_value(ix, tv_offset(ix, i));
        if (at[i] < 0 || at[i] >= rows) {
            pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "%s: index %lld is out of range [0, %lld)",
                                   launch->op_name, (long long)at[i], (long long)rows);
            goto done;
        }
    }
    for (int64_t i = 0; i < k; i++) {
        int dup = 0;
        for (int64_t j = 0; j < i && !dup; j++) dup = at[j] == at[i];
        if (dup) continue;   /* ScatterUpdate writes the same scaled row again */
        for (int64_t j = 0; j < cols; j++)
            row[j] = (float)ew_load(tv_at(self, self->offset + at[i] * self->strides[0] + j * self->strides[1]),
                                    self->dtype).f;
        float norm = row_norm(row, cols, p->norm_type);
        norm = norm > 1e-12f ? norm : 1e-12f;   /* Maxs(norm, epsilon); NaN stays NaN */
        float scale = (norm < (float)p->max_norm ? norm : (float)p->max_norm) / norm;
        for (int64_t j = 0; j < cols; j++) {
            ew_value v = ew_cast((ew_value){(float)(row[j] * scale), 0}, ACL_FLOAT, self->dtype);
            ew_store(tv_at(self, self->offset + at[i] * self->strides[0] + j * self->strides[1]), self->dtype, v);
        }
    }
done:
    free(row);
    free(at);
}
