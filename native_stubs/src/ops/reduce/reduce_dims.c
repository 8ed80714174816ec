/*
 * Steps shared by the reductions added for issue 28 (any_all.toml, moments.toml, prod.toml, norm/vector_norm.toml):
 * the plan of the reduction engine over a dim list and the check of out's reduced shape, each with the
 * messages of the operator's own op_api (the vendor's reductions word their checks differently; `style`
 * names which one's, see dims_styles / shape styles below).
 */
#include <math.h>
#include <string.h>

#include "kernels/reduce.h"
#include "opbase/checks.h"
#include "ops_decls.h"

/* How an op_api words a dim out of range and a repeated dim. */
typedef struct {
    const char *style;
    int range_args;           /* 0: none; 1: (rank, rank - 1, dim); 2: (dim, rank); 3: (-rank, rank - 1, dim) */
    const char *range_fmt;
    const char *dup_fmt;      /* NULL: repeats are not checked (the dim is reduced once) */
    int dup_raw;              /* the repeated dim as given (else wrapped) */
} dims_style;

static const dims_style DIMS_STYLES[] = {
    {"any", 0, "Dimension out of range.", NULL, 0},
    {"all", 1, "Dimension out of range (expected to be in range of [-%lld, %lld], but got %lld)",
     "Dim %lld appears multiple times in the list of dims.", 0},
    {"lse", 2, "provided dim %lld not in the range of input tensor size %lld.",
     "Dim %lld appears multiple times in the list of dims", 1},
    {"var", 3, "Dimension out of range (expected to be in range of [%lld, %lld], but got %lld)",
     "dim %lld appears multiple times in the list of dims", 0},
    {"norm", 3, "Dimension out of range (expected to be in range of [%lld, %lld], but got %lld)",
     "The dim %lld appears multiple times in the list of dims", 0},
};

static const dims_style *style_of(const char *name) {
    for (size_t k = 0; k < sizeof DIMS_STYLES / sizeof DIMS_STYLES[0]; k++)
        if (name != NULL && strcmp(DIMS_STYLES[k].style, name) == 0) return &DIMS_STYLES[k];
    return &DIMS_STYLES[0];
}

/* red_dims_as self [dims] [dtype] "style": a reduction plan (the definition's spec) over dims (an int array;
 * empty or none: all of self's dims, an int argument: that one dim) computing in dtype (an aclDataType or a
 * tensor operand's dtype; none: self's), with the style's messages for a dim out of range or repeated. */
aclnnStatus opc_red_dims_as(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0);
    const dims_style *st = style_of(s->text);
    red_plan *plan = op_params(c, sizeof *plan);
    *plan = *(const red_plan *)c->def->spec;
    plan->compute = self->dtype;
    memset(plan->reduce, 0, sizeof plan->reduce);
    const int64_t *dims = NULL;
    uint64_t n = 0;
    for (int k = 1; k < s->np; k++) {
        int i = s->p[k];
        switch (c->def->params[i].kind) {
        case OP_K_INT_ARRAY: dims = c->ints[i].v, n = c->ints[i].n; break;
        case OP_K_INT: dims = &c->arg[i].i, n = 1; break;
        case OP_K_DTYPE: plan->compute = (aclDataType)c->arg[i].i; break;
        case OP_K_TENSOR: plan->compute = c->t[i].dtype; break;
        default: break;
        }
    }
    long long rank = self->ndim > 0 ? self->ndim : 1;
    for (uint64_t k = 0; k < n; k++) {
        long long d = dims[k];
        if (d >= -rank && d < rank) continue;
        if (st->range_args == 1) pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, st->range_fmt, rank, rank - 1, d);
        else if (st->range_args == 2) pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, st->range_fmt, d, rank);
        else if (st->range_args == 3) pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, st->range_fmt, -rank, rank - 1, d);
        else pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "%s", st->range_fmt);
        return ACLNN_ERR_PARAM_INVALID;
    }
    for (uint64_t k = 0; k < n; k++) {
        int64_t d = dims[k] < 0 ? dims[k] + rank : dims[k];
        if (plan->reduce[d] && st->dup_fmt != NULL) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, st->dup_fmt, (long long)(st->dup_raw ? dims[k] : d));
            return ACLNN_ERR_PARAM_INVALID;
        }
        plan->reduce[d] = 1;
    }
    if (n == 0)
        for (int64_t d = 0; d < self->ndim; d++) plan->reduce[d] = 1;
    if (self->ndim == 0) plan->reduce[0] = 0;   /* a 0-d tensor has nothing to reduce */
    return ACLNN_SUCCESS;
}

/* red_shape_as self keepdim out ... "style": each output has self's reduced shape (keepdim: reduced dims
 * become 1). Styles: "exact" (aclnnAll's message), "one" (CheckShapeAndScalarSame: shapes of one element
 * each pass too), "expected" (OP_CHECK_SHAPE_NOT_EQUAL_WITH_EXPECTED_SIZE). */
aclnnStatus opc_red_shape_as(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0);
    const red_plan *plan = (const red_plan *)c->params;
    int keepdim = op_argument(c, s, 1)->i != 0;
    int64_t shape[PYACLNN_STUB_MAX_DIMS], ndim = 0, numel = 1;
    for (int64_t d = 0; d < self->ndim; d++) {
        if (!plan->reduce[d]) shape[ndim++] = self->shape[d], numel *= self->shape[d];
        else if (keepdim) shape[ndim++] = 1;
    }
    const char *style = s->text != NULL ? s->text : "expected";
    for (int k = 2; k < s->np; k++) {
        const pyaclnn_stub_tensor *out = op_tensor(c, s, k);
        if (strcmp(style, "expected") == 0) {
            aclnnStatus rc = ew_check_shape(c->api, op_pname(c, s, k), out, shape, ndim);
            if (rc) return rc;
            continue;
        }
        int same = out->ndim == ndim && memcmp(out->shape, shape, sizeof(int64_t) * (size_t)ndim) == 0;
        if (same || (strcmp(style, "one") == 0 && numel == 1 && pyaclnn_stub_numel(out) == 1)) continue;
        char a[200], b[200];
        tv_shape_text(shape, ndim, a, sizeof a);
        tv_shape_text(out->shape, out->ndim, b, sizeof b);
        if (strcmp(style, "exact") == 0)
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Expect out shape [%s], but got: [%s].", a, b);
        else
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "The tensor's shape[%s] is not equal with shape[%s].",
                                a, b);
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}
