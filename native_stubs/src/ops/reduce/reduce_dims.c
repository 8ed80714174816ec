/*
 * Steps shared by the reductions of any_all.toml, moments.toml, prod.toml, norm/vector_norm.toml):
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
    int range_args;           /* 0: none; 1: (rank, rank - 1, dim); 2: (dim, rank); 3: (-rank, rank - 1, dim);
                               * 4: (dim, -rank, rank - 1); 5: (-rank, rank - 1, rank) */
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
    {"var", 4, "Provided dim %lld must be in the range of [%lld, %lld].",
     "Dim %lld appears multiple times in the list of dims.", 0},
    /* aclnnStdMeanCorrection prints self's rank where the dim belongs */
    {"std_mean", 5, "Dimension out of range (expected to be in range of [%lld, %lld], but got %lld)",
     "Dim %lld appears multiple times in the list of dims.", 0},
    {"vector_norm", 1, "Dimension out of range (expected to be in range of [-%lld, %lld],but got %lld)",
     "dim %lld appears multiple times in the list of dims", 0},
    {"prod", 3, "Expected dim to be in range of [%lld, %lld], but got %lld.", NULL, 0},
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
        else if (st->range_args == 4) pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, st->range_fmt, d, -rank, rank - 1);
        else if (st->range_args == 5) pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, st->range_fmt, -rank, rank - 1, rank);
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

/* red_shape_as self [keepdim] out ... "style": each output has self's reduced shape (keepdim: reduced dims
 * become 1; without it they go). Styles: "exact" (aclnnAll's message), "one" (CheckShapeAndScalarSame: shapes of one element
 * each pass too), "expected" (OP_CHECK_SHAPE_NOT_EQUAL_WITH_EXPECTED_SIZE). */
aclnnStatus opc_red_shape_as(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0);
    const red_plan *plan = (const red_plan *)c->params;
    int has_keep = s->np > 1 && c->def->params[s->p[1]].kind == OP_K_BOOL;
    int keepdim = has_keep && op_argument(c, s, 1)->i != 0;
    int64_t shape[PYACLNN_STUB_MAX_DIMS], ndim = 0, numel = 1;
    for (int64_t d = 0; d < self->ndim; d++) {
        if (!plan->reduce[d]) {
            shape[ndim++] = self->shape[d];
            /* (an empty self's other dims may multiply past int64: only "one element or not" matters here) */
            if (__builtin_mul_overflow(numel, self->shape[d], &numel)) numel = INT64_MAX;
        } else if (keepdim) {
            shape[ndim++] = 1;
        }
    }
    const char *style = s->text != NULL ? s->text : "expected";
    for (int k = 1 + has_keep; k < s->np; k++) {
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

/* red_compute "float" | "half": the plan's compute dtype widened as the op_api casts self first: "float" --
 * everything but DOUBLE computes in FLOAT (LogSumExp, the norms); "half" -- FLOAT16 and BF16 compute in
 * FLOAT (Prod). */
aclnnStatus opc_red_compute(op_call *c, const op_step *s) {
    red_plan *plan = (red_plan *)c->params;
    int all = s->text != NULL && strcmp(s->text, "float") == 0;
    if (plan->compute == ACL_FLOAT16 || plan->compute == ACL_BF16 || (all && plan->compute != ACL_DOUBLE))
        plan->compute = ACL_FLOAT;
    return ACLNN_SUCCESS;
}

/* red_attr x: the plan's attribute (VAR's correction, NORM's p) from an integer, a double or a scalar (read
 * as fp32, the op_apis' ToFloat; +-2^31 stand for +-inf, as CalculateOrdValue makes them). */
aclnnStatus opc_red_attr(op_call *c, const op_step *s) {
    red_plan *plan = (red_plan *)c->params;
    int i = s->p[0];
    switch (c->def->params[i].kind) {
    case OP_K_INT: plan->attr = (double)c->arg[i].i; break;
    case OP_K_DOUBLE: plan->attr = c->arg[i].d; break;
    case OP_K_SCALAR: {
        const op_scalar *sc = &c->s[i];
        float v = (float)(ew_repr_of(sc->dtype) == EW_REPR_F ? sc->v.f : (double)sc->v.i);
        if (v == 2147483648.0f) v = INFINITY;
        if (v == -2147483648.0f) v = -INFINITY;
        plan->attr = v;
        break;
    }
    default: break;
    }
    return ACLNN_SUCCESS;
}

/* norm_promote self out: self and out promote (op::PromoteType; "Input dtype X and output dtype Y can not
 * promote dtype."), and on Ascend 950 the promoted dtype casts to out (OP_CHECK_RESULT_DTYPE_CAST_FAILED). */
aclnnStatus opc_norm_promote(op_call *c, const op_step *s) {
    aclDataType a = op_tensor(c, s, 0)->dtype, b = op_tensor(c, s, 1)->dtype;
    aclDataType pr = ew_promote(a, b);
    char n1[24], n2[24];
    if (pr == ACL_DT_UNDEFINED) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Input dtype %s and output dtype %s can not promote dtype.",
                            op_dtype_name(a, n1), op_dtype_name(b, n2));
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (ew_soc_is_950() && !ew_can_cast(pr, b)) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Can not cast from %s to %s.", op_dtype_name(pr, n1),
                            op_dtype_name(b, n2));
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

/* norm_convert self dtype LIST (Ascend 950; other SoCs pass): dtype in LIST ("dtype X not in dtype support
 * list [...]."), then dtype one that self's dtype may be computed into: FLOAT from FLOAT, FLOAT or FLOAT16
 * from FLOAT16, FLOAT or BF16 from BF16. */
aclnnStatus opc_norm_convert(op_call *c, const op_step *s) {
    if (!ew_soc_is_950()) return ACLNN_SUCCESS;
    aclDataType self = op_tensor(c, s, 0)->dtype, dt = (aclDataType)op_argument(c, s, 1)->i;
    size_t n;
    const aclDataType *list = op_list(s->list, &n);
    char b1[24], b2[24], lt[200];
    if (!ew_in_list(dt, list, n)) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "dtype %s not in dtype support list [%s].",
                            op_dtype_name(dt, b1), ew_dtype_list(list, n, lt, sizeof lt));
        return ACLNN_ERR_PARAM_INVALID;
    }
    aclDataType conv[2] = {ACL_FLOAT, self};
    size_t nconv = self == ACL_FLOAT ? 1 : 2;
    if (ew_in_list(dt, conv, nconv)) return ACLNN_SUCCESS;
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "For self with dtype %s, dtype should be [%s], but got %s.",
                        op_dtype_name(self, b1), ew_dtype_list(conv, nconv, lt, sizeof lt), op_dtype_name(dt, b2));
    return ACLNN_ERR_PARAM_INVALID;
}
