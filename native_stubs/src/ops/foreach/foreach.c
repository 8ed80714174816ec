/*
 * The _foreach operators torch.optim's multi-tensor AdamW needs (hicann/ops-nn foreach/: the op_api of
 * ForeachMulScalarV2 and its siblings): out[j] = op(x1[j], x2[j], x3[j], scalar) for every tensor j of
 * the lists, each one the elementwise engine's op on that tensor (ew_engine.h: the same arithmetic as
 * Muls, Adds, Sqrt, Lerps, Addcmul, Addcdiv, Divs).
 *   ForeachMulScalarV2 / ForeachAddScalarV2 (x, aclScalar)      ForeachSqrt (x)
 *   ForeachLerpScalar (x1, x2, aclScalar weight)                ForeachAddcmulScalarV2 (x1, x2, x3, aclScalar)
 *   ForeachDivScalarList (x, aclScalarList: one per tensor)      ForeachAddcdivScalarList (x1, x2, x3, aclTensor
 *                                                               scalars: one per tensor, read at launch)
 * The scalar goes to FLOAT for BF16 lists (and FLOAT16 lists with a floating scalar on Ascend 950), else to
 * the list's dtype, as the op_api's ConvertToTensor does; FLOAT16/BF16 lists then compute in fp32.
 * Validation in the vendor's order (aclnn_foreach_mul_scalar_v2.cpp):
 *   1. the lists, the scalar and out non-NULL                                           -> 161001
 *   2. no NULL element in a list                                                        -> 161002
 *   3. x1[0]'s dtype in the operator's list; every element of every list of x1[0]'s dtype;
 *      the scalar's dtype allowed for it (FLOAT/BF16: FLOAT, DOUBLE; FLOAT16: FLOAT16,
 *      DOUBLE, and FLOAT on Ascend 950; INT32: INT32, INT64)                             -> 161002
 *   4. the lists as long as x1; at most 8 dims; every tensor of x1's tensor's shape      -> 161002
 * An empty x1 gives an executor that does nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aclnnop/aclnn_foreach_add_scalar_v2.h"
#include "aclnnop/aclnn_foreach_addcdiv_scalar_list.h"
#include "aclnnop/aclnn_foreach_addcmul_scalar_v2.h"
#include "aclnnop/aclnn_foreach_div_scalar_list.h"
#include "aclnnop/aclnn_foreach_lerp_scalar.h"
#include "aclnnop/aclnn_foreach_mul_scalar_v2.h"
#include "aclnnop/aclnn_foreach_sqrt.h"
#include "opbase/checks.h"
#include "kernels/view.h"
/* libnnopbase has no accessor for an aclScalarList's elements; its layout comes from its own header
 * (the list handle is validated first through the public aclGetScalarListSize). */
#include "../../nnopbase/nnopbase_internal.h"

#define N(a) (sizeof a / sizeof a[0])
#define MAX_LISTS 3

static const aclDataType ARITH_DTYPES[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_INT32};
static const aclDataType FLOAT_DTYPES[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};

typedef enum { FE_NO_SCALAR = 0, FE_SCALAR, FE_SCALAR_LIST, FE_SCALAR_TENSOR } fe_scalar_kind;

/* The executor's parameter block: the plan every tensor shares, then one scalar per tensor when the
 * scalars come in a list (FE_SCALAR_LIST). */
typedef struct {
    ew_plan plan;
    int n_lists, scalar_kind;
    uint64_t count;
    aclDataType scalar_dtype;    /* dtype the scalars are converted to */
    ew_value scalars[];
} fe_params;

static void fe_kernel(const pyaclnn_stub_launch *launch) {
    const fe_params *p = launch->params;
    uint64_t n = p->count;
    double *tensor_scalars = NULL;
    if (p->scalar_kind == FE_SCALAR_TENSOR) {   /* the scalars tensor follows the lists' tensors */
        if (!tv_launch_views_ok(launch)) return;
        tensor_scalars = tv_load_double(&launch->inputs[p->n_lists * n]);
        if (tensor_scalars == NULL) {
            tv_fail_oom(launch);
            return;
        }
    }
    for (uint64_t j = 0; j < n; j++) {
        ew_plan plan = p->plan;
        if (p->scalar_kind == FE_SCALAR_LIST) plan.scalar = p->scalars[j];
        if (p->scalar_kind == FE_SCALAR_TENSOR)
            plan.scalar = ew_cast((ew_value){tensor_scalars[j], 0}, ACL_DOUBLE, p->scalar_dtype);
        pyaclnn_stub_tensor in[MAX_LISTS];
        for (int k = 0; k < p->n_lists; k++) in[k] = launch->inputs[k * n + j];
        pyaclnn_stub_launch one = *launch;
        one.inputs = in;
        one.n_inputs = (size_t)p->n_lists;
        one.outputs = &launch->outputs[j];
        one.n_outputs = 1;
        one.params = &plan;
        ew_kernel(&one);
    }
    free(tensor_scalars);
}

/* One foreach operator's call. */
typedef struct {
    const char *api, *op_name;
    ew_opcode op;
    const aclDataType *dtypes;
    size_t n_dtypes;
    int n_lists;
    const aclTensorList *lists[MAX_LISTS];
    fe_scalar_kind scalar_kind;
    const void *scalar;          /* aclScalar, aclScalarList or aclTensor, by scalar_kind */
    const aclTensorList *out;
} fe_call;

static const char *const LIST_NAMES[MAX_LISTS] = {"x1", "x2", "x3"};

/* The list's elements (borrowed); 161002 if not a live list or an element is NULL. */
static aclnnStatus list_items(const char *api, const char *name, const aclTensorList *l, const aclTensor *const **items,
                              uint64_t *n) {
    if (pyaclnn_stub_tensor_list_get(l, items, n) != ACLNN_SUCCESS) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "%s (%p) is not a live aclTensorList", name, (const void *)l);
        return ACLNN_ERR_PARAM_INVALID;
    }
    for (uint64_t i = 0; i < *n; i++)
        if ((*items)[i] == NULL) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "%s[%llu] is null.", name, (unsigned long long)i);
            return ACLNN_ERR_PARAM_INVALID;
        }
    return ACLNN_SUCCESS;
}

/* The scalar dtypes the op_api accepts for a list of `dt`. */
static int scalar_dtype_ok(aclDataType dt, aclDataType s) {
    switch (dt) {
    case ACL_FLOAT: case ACL_BF16: return s == ACL_FLOAT || s == ACL_DOUBLE;
    case ACL_FLOAT16: return s == ACL_FLOAT16 || s == ACL_DOUBLE || (s == ACL_FLOAT && ew_soc_is_950());
    default: return s == ACL_INT32 || s == ACL_INT64;
    }
}

/* The dtype the op_api converts a scalar of dtype `s` to, for a list of `dt`. */
static aclDataType scalar_target(aclDataType dt, aclDataType s) {
    if (dt == ACL_BF16) return ACL_FLOAT;
    if (dt == ACL_FLOAT16 && ew_soc_is_950() && (s == ACL_FLOAT || s == ACL_DOUBLE)) return ACL_FLOAT;
    return dt;
}

static aclnnStatus bad_scalar_dtype(const char *api, const char *name, aclDataType s, aclDataType dt) {
    char b1[24], b2[24];
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "%s dtype %s is not supported for a %s tensor list", name,
                        op_dtype_name(s, b1), op_dtype_name(dt, b2));
    return ACLNN_ERR_PARAM_INVALID;
}

static aclnnStatus fe_phase1(const fe_call *c, uint64_t *workspaceSize, aclOpExecutor **executor) {
    const char *api = c->api, *scalar_name = c->scalar_kind == FE_SCALAR_LIST ? "scalars" :
                                             c->op == EW_OP_LERP ? "weight" : c->scalar_kind == FE_SCALAR_TENSOR ?
                                             "scalars" : "scalar";
    const char *names[MAX_LISTS + 2];
    const void *ptrs[MAX_LISTS + 2];
    size_t np = 0;
    for (int k = 0; k < c->n_lists; k++) names[np] = LIST_NAMES[k], ptrs[np++] = c->lists[k];
    if (c->scalar_kind != FE_NO_SCALAR) names[np] = scalar_name, ptrs[np++] = c->scalar;
    names[np] = "out", ptrs[np++] = c->out;
    aclnnStatus rc = tv_check_not_null(api, names, ptrs, np, workspaceSize, executor);
    if (rc) return rc;

    const aclTensor *const *items[MAX_LISTS + 1];
    uint64_t sizes[MAX_LISTS + 1];
    for (int k = 0; k < c->n_lists; k++)
        if ((rc = list_items(api, LIST_NAMES[k], c->lists[k], &items[k], &sizes[k]))) return rc;
    if ((rc = list_items(api, "out", c->out, &items[c->n_lists], &sizes[c->n_lists]))) return rc;
    uint64_t n = sizes[0];

    /* the scalar(s) */
    aclDataType sdt = ACL_DT_UNDEFINED;
    ew_value sval = {0, 0};
    uint64_t n_scalars = 0;
    const aclScalarList *slist = NULL;
    pyaclnn_stub_tensor stensor;
    if (c->scalar_kind == FE_SCALAR && (rc = ew_scalar_arg(api, scalar_name, c->scalar, &sdt, &sval))) return rc;
    if (c->scalar_kind == FE_SCALAR_LIST) {
        slist = c->scalar;
        if (aclGetScalarListSize(slist, &n_scalars) != ACLNN_SUCCESS) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "scalars (%p) is not a live aclScalarList",
                                (const void *)slist);
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    if (c->scalar_kind == FE_SCALAR_TENSOR && (rc = op_tensor_arg(api, scalar_name, c->scalar, &stensor))) return rc;

    /* dtypes */
    if (n > 0) {
        pyaclnn_stub_tensor t;
        if ((rc = op_tensor_arg(api, "x1[0]", items[0][0], &t))) return rc;
        aclDataType dt = t.dtype;
        if ((rc = ew_check_dtype_in(api, "x1", dt, c->dtypes, c->n_dtypes))) return rc;
        for (int k = 0; k <= c->n_lists; k++)
            for (uint64_t i = 0; i < sizes[k]; i++) {
                char name[32];
                snprintf(name, sizeof name, "%s[%llu]", k == c->n_lists ? "out" : LIST_NAMES[k], (unsigned long long)i);
                if ((rc = op_tensor_arg(api, name, items[k][i], &t)) ||
                    (rc = tv_check_same_dtype(api, name, t.dtype, "x1[0]", dt)))
                    return rc;
            }
        if (c->scalar_kind == FE_SCALAR && !scalar_dtype_ok(dt, sdt)) return bad_scalar_dtype(api, scalar_name, sdt, dt);
        if (c->scalar_kind == FE_SCALAR_TENSOR && stensor.dtype != ACL_FLOAT && stensor.dtype != dt)
            return bad_scalar_dtype(api, scalar_name, stensor.dtype, dt);
    }

    /* lengths and shapes */
    for (int k = 1; k <= c->n_lists; k++)
        if (sizes[k] != n) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "%s has %llu tensors, x1 has %llu; they must match",
                                k == c->n_lists ? "out" : LIST_NAMES[k], (unsigned long long)sizes[k],
                                (unsigned long long)n);
            return ACLNN_ERR_PARAM_INVALID;
        }
    if ((c->scalar_kind == FE_SCALAR_LIST && n_scalars != n) ||
        (c->scalar_kind == FE_SCALAR_TENSOR && (uint64_t)pyaclnn_stub_numel(&stensor) != n)) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "scalars has %llu values, x1 has %llu tensors; they must "
                            "match", (unsigned long long)(c->scalar_kind == FE_SCALAR_LIST ? n_scalars
                                                          : (uint64_t)pyaclnn_stub_numel(&stensor)),
                            (unsigned long long)n);
        return ACLNN_ERR_PARAM_INVALID;
    }
    for (uint64_t i = 0; i < n; i++) {
        pyaclnn_stub_tensor first, t;
        char name[32];
        if ((rc = op_tensor_arg(api, "x1", items[0][i], &first)) || (rc = ew_check_max_dim(api, "x1", &first, EW_MAX_DIM)))
            return rc;
        for (int k = 1; k <= c->n_lists; k++) {
            snprintf(name, sizeof name, "%s[%llu]", k == c->n_lists ? "out" : LIST_NAMES[k], (unsigned long long)i);
            if ((rc = op_tensor_arg(api, name, items[k][i], &t)) || (rc = ew_check_shape(api, name, &t, first.shape, first.ndim)))
                return rc;
        }
    }

    /* the plan */
    size_t size = sizeof(fe_params) + (c->scalar_kind == FE_SCALAR_LIST ? n : 0) * sizeof(ew_value);
    fe_params *p = calloc(1, size);
    const aclTensor **inputs = calloc((size_t)(c->n_lists * n + 1), sizeof *inputs);
    if (p == NULL || inputs == NULL) {
        free(p);
        free(inputs);
        pyaclnn_stub_report(ACLNN_ERR_INNER_CREATE_EXECUTOR, api, "out of host memory");
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    }
    aclDataType dt = ACL_FLOAT;
    if (n > 0) {
        pyaclnn_stub_tensor t;
        (void)op_tensor_arg(api, "x1", items[0][0], &t);
        dt = t.dtype;
    }
    p->n_lists = c->n_lists;
    p->scalar_kind = c->scalar_kind;
    p->count = n;
    p->plan.op = c->op;
    p->plan.n_inputs = c->n_lists;
    p->plan.scalar_second = c->n_lists == 1 && c->scalar_kind != FE_NO_SCALAR;
    p->scalar_dtype = c->scalar_kind == FE_SCALAR_TENSOR ? scalar_target(dt, ACL_FLOAT)
                                                         : scalar_target(dt, c->scalar_kind == FE_SCALAR ? sdt : ACL_DOUBLE);
    /* FLOAT16/BF16 lists compute in fp32 (the kernels upcast), integer lists in their dtype */
    p->plan.compute = dt == ACL_INT32 ? ACL_INT32 : (dt == ACL_FLOAT16 || dt == ACL_BF16) ? ACL_FLOAT : dt;
    if (c->scalar_kind == FE_SCALAR) p->plan.scalar = ew_cast(ew_cast(sval, sdt, p->scalar_dtype), p->scalar_dtype,
                                                              p->plan.compute);
    for (uint64_t j = 0; c->scalar_kind == FE_SCALAR_LIST && j < n; j++) {
        aclDataType d;
        ew_value v;
        char name[32];
        snprintf(name, sizeof name, "scalars[%llu]", (unsigned long long)j);
        if ((rc = ew_scalar_arg(api, name, slist->items[j], &d, &v)) == ACLNN_SUCCESS && n > 0 && !scalar_dtype_ok(dt, d))
            rc = bad_scalar_dtype(api, name, d, dt);
        if (rc) {
            free(p);
            free(inputs);
            return rc;
        }
        p->scalars[j] = ew_cast(ew_cast(v, d, p->scalar_dtype), p->scalar_dtype, p->plan.compute);
    }
    if (c->scalar_kind == FE_SCALAR_TENSOR) p->scalar_dtype = p->plan.compute;
    size_t n_in = 0;
    for (int k = 0; k < c->n_lists; k++)
        for (uint64_t i = 0; i < n; i++) inputs[n_in++] = items[k][i];
    if (c->scalar_kind == FE_SCALAR_TENSOR) inputs[n_in++] = c->scalar;
    rc = tv_make_executor(api, c->op_name, n > 0 ? fe_kernel : NULL, p, size, inputs, n_in, items[c->n_lists],
                          (size_t)n, workspaceSize, executor);
    free(p);
    free(inputs);
    return rc;
}

#define FE_CALL(api_, name_, op_, dtypes_, n_lists_, kind_, scalar_, out_, ...)                             \
    fe_call c = {api_, name_, op_, dtypes_, N(dtypes_), n_lists_, {__VA_ARGS__}, kind_, scalar_, out_};    \
    return fe_phase1(&c, workspaceSize, executor)

aclnnStatus aclnnForeachMulScalarV2GetWorkspaceSize(const aclTensorList *x, const aclScalar *scalar, aclTensorList *out,
                                                    uint64_t *workspaceSize, aclOpExecutor **executor) {
    FE_CALL("aclnnForeachMulScalarV2GetWorkspaceSize", "ForeachMulScalarV2", EW_OP_MUL, ARITH_DTYPES, 1, FE_SCALAR,
            scalar, out, x);
}

aclnnStatus aclnnForeachAddScalarV2GetWorkspaceSize(const aclTensorList *x, const aclScalar *scalar, aclTensorList *out,
                                                    uint64_t *workspaceSize, aclOpExecutor **executor) {
    FE_CALL("aclnnForeachAddScalarV2GetWorkspaceSize", "ForeachAddScalarV2", EW_OP_ADD, ARITH_DTYPES, 1, FE_SCALAR,
            scalar, out, x);
}

aclnnStatus aclnnForeachSqrtGetWorkspaceSize(const aclTensorList *x, const aclTensorList *out, uint64_t *workspaceSize,
                                             aclOpExecutor **executor) {
    FE_CALL("aclnnForeachSqrtGetWorkspaceSize", "ForeachSqrt", EW_OP_SQRT, FLOAT_DTYPES, 1, FE_NO_SCALAR, NULL, out, x);
}

aclnnStatus aclnnForeachLerpScalarGetWorkspaceSize(const aclTensorList *x1, const aclTensorList *x2,
                                                   const aclScalar *weight, const aclTensorList *out,
                                                   uint64_t *workspaceSize, aclOpExecutor **executor) {
    FE_CALL("aclnnForeachLerpScalarGetWorkspaceSize", "ForeachLerpScalar", EW_OP_LERP, FLOAT_DTYPES, 2, FE_SCALAR,
            weight, out, x1, x2);
}

aclnnStatus aclnnForeachAddcmulScalarV2GetWorkspaceSize(const aclTensorList *x1, const aclTensorList *x2,
                                                        const aclTensorList *x3, const aclScalar *scalar,
                                                        aclTensorList *out, uint64_t *workspaceSize,
                                                        aclOpExecutor **executor) {
    FE_CALL("aclnnForeachAddcmulScalarV2GetWorkspaceSize", "ForeachAddcmulScalarV2", EW_OP_ADDCMUL, ARITH_DTYPES, 3,
            FE_SCALAR, scalar, out, x1, x2, x3);
}

aclnnStatus aclnnForeachDivScalarListGetWorkspaceSize(const aclTensorList *x, const aclScalarList *scalars,
                                                      const aclTensorList *out, uint64_t *workspaceSize,
                                                      aclOpExecutor **executor) {
    FE_CALL("aclnnForeachDivScalarListGetWorkspaceSize", "ForeachDivScalarList", EW_OP_DIV, FLOAT_DTYPES, 1,
            FE_SCALAR_LIST, scalars, out, x);
}

aclnnStatus aclnnForeachAddcdivScalarListGetWorkspaceSize(const aclTensorList *x1, const aclTensorList *x2,
                                                          const aclTensorList *x3, const aclTensor *scalars,
                                                          const aclTensorList *out, uint64_t *workspaceSize,
                                                          aclOpExecutor **executor) {
    FE_CALL("aclnnForeachAddcdivScalarListGetWorkspaceSize", "ForeachAddcdivScalarList", EW_OP_ADDCDIV, FLOAT_DTYPES,
            3, FE_SCALAR_TENSOR, scalars, out, x1, x2, x3);
}

EW_DEFINE_PHASE2(aclnnForeachMulScalarV2)
EW_DEFINE_PHASE2(aclnnForeachAddScalarV2)
EW_DEFINE_PHASE2(aclnnForeachSqrt)
EW_DEFINE_PHASE2(aclnnForeachLerpScalar)
EW_DEFINE_PHASE2(aclnnForeachAddcmulScalarV2)
EW_DEFINE_PHASE2(aclnnForeachDivScalarList)
EW_DEFINE_PHASE2(aclnnForeachAddcdivScalarList)
