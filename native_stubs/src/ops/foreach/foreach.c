/*
 * The kernel and steps of the _foreach operators (foreach.toml): out[j] = op(x1[j], x2[j], x3[j], scalar)
 * for every tensor j of the lists, each one the elementwise engine's op on that tensor (elementwise.h); ADD of
 * two lists and a scalar is x1 + scalar * x2 (the scalar as the engine's alpha).
 *
 * Step operands: the tensor lists (x1 [x2 x3]), then out, then the scalar when there is one (an aclScalar,
 * an aclScalarList with one value per tensor, or an aclTensor of them read at launch).
 *   fe_lists x1 .. out                   live lists, no NULL element
 *   fe_scalar_list scalars               a live aclScalarList
 *   fe_dtypes x1 .. out [scalar] LIST    x1[0]'s dtype in LIST, every element of it, the scalar's allowed
 *   fe_lengths x1 .. out [scalar]        every list (and the scalars) as long as x1
 *   fe_shapes x1 .. out                  at most 8 dims; every tensor of x1's tensor's shape
 *   fe_plan x1 .. out [scalar]           the executor over all the lists' tensors (built here: the
 *                                        parameter block holds one scalar per tensor of a scalar list)
 * An integer operand of fe_dtypes / fe_plan: 1, a FLOAT16 list takes FLOAT16 or DOUBLE scalars on every SoC,
 * converted to FLOAT16 (DivScalarV2 ...); 2, a generated op_api's ScalarList (any dtype, FLOAT for float lists).
 * The operators whose op_api is generated from their op definition (no op_api source: ForeachAbs, ...):
 *   fe_gen_dtypes x1 .. out LIST         every tensor of every list of a dtype in LIST; every list's
 *                                        tensor j of x1[j]'s dtype (the generated checks)     -> 161002
 *   fe_tiling x1 .. out                  the tiling's: 1 to 256 tensors (Ascend 950), x1's tensors of
 *                                        one dtype, at most 8 dims, the lists' shapes x1's     -> 561002
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"

#define MAX_LISTS 3

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

/* ---- the steps ---------------------------------------------------------------------------- */

/* How a step's operands are laid out: n_lists input lists (operands 0 .. n_lists-1), out (operand
 * n_lists), then the scalar of `kind` (operand n_lists + 1). */
typedef struct {
    int n_lists;
    fe_scalar_kind kind;
} fe_layout;

static fe_layout layout(const op_call *c, const op_step *s) {
    fe_layout L = {0, FE_NO_SCALAR};
    for (int k = 0; k < s->np; k++) {
        switch (c->def->params[s->p[k]].kind) {
        case OP_K_TENSOR_LIST: L.n_lists++; break;
        case OP_K_SCALAR: L.kind = FE_SCALAR; break;
        case OP_K_SCALAR_LIST: L.kind = FE_SCALAR_LIST; break;
        case OP_K_TENSOR: L.kind = FE_SCALAR_TENSOR; break;
        default: break;
        }
    }
    L.n_lists--;   /* out */
    return L;
}

/* The list of operand k as fe_lists left it: its handles and size (c->lists; snapshots once fe_dtypes
 * took them). */
#define LIST(c, s, k) ((c)->lists[(s)->p[k]])

/* "x1[3]": the message name of element i of list operand k. */
static const char *element_name(const op_call *c, const op_step *s, int k, uint64_t i, char *buf, size_t size) {
    snprintf(buf, size, "%s[%llu]", op_pname(c, s, k), (unsigned long long)i);
    return buf;
}

/* fe_lists l ...: each a live aclTensorList without a NULL element (kept in c->lists). */
aclnnStatus opc_fe_lists(op_call *c, const op_step *s) {
    for (int k = 0; k < s->np; k++) {
        const aclTensorList *l = op_argument(c, s, k)->p;
        const aclTensor *const *items;
        uint64_t n;
        if (pyaclnn_stub_tensor_list_get(l, &items, &n) != ACLNN_SUCCESS) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "%s (%p) is not a live aclTensorList",
                                op_pname(c, s, k), (const void *)l);
            return ACLNN_ERR_PARAM_INVALID;
        }
        for (uint64_t i = 0; i < n; i++)
            if (items[i] == NULL) {
                pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "%s[%llu] is null.", op_pname(c, s, k),
                                    (unsigned long long)i);
                return ACLNN_ERR_PARAM_INVALID;
            }
        LIST(c, s, k).v = items;
        LIST(c, s, k).t = NULL;
        LIST(c, s, k).n = n;
    }
    return ACLNN_SUCCESS;
}

/* fe_scalar_list scalars: a live aclScalarList (checked through the public aclGetScalarListSize, which
 * reports too). */
aclnnStatus opc_fe_scalar_list(op_call *c, const op_step *s) {
    const aclScalarList *l = op_argument(c, s, 0)->p;
    uint64_t n;
    if (aclGetScalarListSize(l, &n) == ACLNN_SUCCESS) return ACLNN_SUCCESS;
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "%s (%p) is not a live aclScalarList", op_pname(c, s, 0),
                        (const void *)l);
    return ACLNN_ERR_PARAM_INVALID;
}

/* Ascend 950's FLOAT scalar for a FLOAT16 list (MulScalarV2, AddScalarV2 ...: a step without the integer
 * operand 1); the op_apis of DivScalarV2, SubScalarV2, AddcdivScalarV2, SubListV2 keep A2's rule (1). */
static int f16_takes_float(const op_step *s) { return ew_soc_is_950() && !(s->has_n && s->n == 1); }

/* The integer operand 2 of fe_plan: the scalars of a generated op_api's ScalarList input (ForeachAddScalarList
 * ...), converted to the definition's scalar dtype whatever theirs: FLOAT for every float list, the list's own
 * dtype (through INT64) for INT32 lists. */
static int generated_scalars(const op_step *s) { return s->has_n && s->n == 2; }

/* The scalar dtypes the op_api accepts for a list of `dt`. */
static int scalar_dtype_ok(const op_step *st, aclDataType dt, aclDataType s) {
    switch (dt) {
    case ACL_FLOAT: case ACL_BF16: return s == ACL_FLOAT || s == ACL_DOUBLE;
    case ACL_FLOAT16: return s == ACL_FLOAT16 || s == ACL_DOUBLE || (s == ACL_FLOAT && f16_takes_float(st));
    default: return s == ACL_INT32 || s == ACL_INT64;
    }
}

/* The dtype the op_api converts a scalar of dtype `s` to, for a list of `dt`. */
static aclDataType scalar_target(const op_step *st, aclDataType dt, aclDataType s) {
    if (dt == ACL_BF16) return ACL_FLOAT;
    if (generated_scalars(st) && ew_is_float(dt)) return ACL_FLOAT;
    if (dt == ACL_FLOAT16 && f16_takes_float(st) && (s == ACL_FLOAT || s == ACL_DOUBLE)) return ACL_FLOAT;
    return dt;
}

static aclnnStatus bad_scalar_dtype(const char *api, const char *name, aclDataType s, aclDataType dt) {
    char b1[24], b2[24];
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "%s dtype %s is not supported for a %s tensor list", name,
                        op_dtype_name(s, b1), op_dtype_name(dt, b2));
    return ACLNN_ERR_PARAM_INVALID;
}

/* fe_dtypes x1 .. out [scalar] LIST: x1[0]'s dtype in LIST; every element of every list (snapshots into
 * c->lists, in one scratch block) of x1[0]'s dtype; the scalar's dtype allowed for it. Nothing for an
 * empty x1. */
aclnnStatus opc_fe_dtypes(op_call *c, const op_step *s) {
    fe_layout L = layout(c, s);
    const char *api = c->api;
    uint64_t n = LIST(c, s, 0).n, total = 0;
    if (n == 0) return ACLNN_SUCCESS;
    pyaclnn_stub_tensor t;
    char first[64];
    aclnnStatus rc;
    if ((rc = op_tensor_arg(api, element_name(c, s, 0, 0, first, sizeof first), LIST(c, s, 0).v[0], &t))) return rc;
    aclDataType dt = t.dtype;
    size_t n_list;
    const aclDataType *list = op_list(s->list, &n_list);
    if ((rc = ew_check_dtype_in(api, op_pname(c, s, 0), dt, list, n_list))) return rc;
    for (int k = 0; k <= L.n_lists; k++) total += LIST(c, s, k).n;
    pyaclnn_stub_tensor *snaps = op_scratch(c, sizeof *snaps * (size_t)total);
    if (snaps == NULL) {
        pyaclnn_stub_report(ACLNN_ERR_INNER_CREATE_EXECUTOR, api, "out of host memory");
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    }
    for (int k = 0; k <= L.n_lists; k++) {
        LIST(c, s, k).t = snaps;
        for (uint64_t i = 0; i < LIST(c, s, k).n; i++, snaps++) {
            char name[64];
            element_name(c, s, k, i, name, sizeof name);
            if ((rc = op_tensor_arg(api, name, LIST(c, s, k).v[i], snaps)) ||
                (rc = tv_check_same_dtype(api, name, snaps->dtype, first, dt)))
                return rc;
        }
    }
    int k = L.n_lists + 1;
    if (L.kind == FE_SCALAR && !scalar_dtype_ok(s, dt, op_scalar_of(c, s, k)->dtype))
        return bad_scalar_dtype(api, op_pname(c, s, k), op_scalar_of(c, s, k)->dtype, dt);
    if (L.kind == FE_SCALAR_TENSOR && op_tensor(c, s, k)->dtype != ACL_FLOAT && op_tensor(c, s, k)->dtype != dt)
        return bad_scalar_dtype(api, op_pname(c, s, k), op_tensor(c, s, k)->dtype, dt);
    return ACLNN_SUCCESS;
}

/* fe_lengths x1 .. out [scalar]: every list as long as x1, and one scalar per tensor. */
aclnnStatus opc_fe_lengths(op_call *c, const op_step *s) {
    fe_layout L = layout(c, s);
    uint64_t n = LIST(c, s, 0).n;
    for (int k = 1; k <= L.n_lists; k++) {
        if (LIST(c, s, k).n != n) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "%s has %llu tensors, %s has %llu; they must match",
                                op_pname(c, s, k), (unsigned long long)LIST(c, s, k).n, op_pname(c, s, 0),
                                (unsigned long long)n);
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    uint64_t count = n;
    if (L.kind == FE_SCALAR_LIST) (void)aclGetScalarListSize(op_argument(c, s, L.n_lists + 1)->p, &count);
    if (L.kind == FE_SCALAR_TENSOR) count = (uint64_t)pyaclnn_stub_numel(op_tensor(c, s, L.n_lists + 1));
    if (count != n) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "scalars has %llu values, x1 has %llu tensors; they must "
                            "match", (unsigned long long)count, (unsigned long long)n);
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

/* fe_shapes x1 .. out: at most 8 dims; every tensor of x1's tensor's shape (fe_dtypes' snapshots). */
aclnnStatus opc_fe_shapes(op_call *c, const op_step *s) {
    fe_layout L = layout(c, s);
    for (uint64_t i = 0; i < LIST(c, s, 0).n; i++) {
        const pyaclnn_stub_tensor *first = &LIST(c, s, 0).t[i];
        aclnnStatus rc = ew_check_max_dim(c->api, op_pname(c, s, 0), first, EW_MAX_DIM);
        if (rc) return rc;
        for (int k = 1; k <= L.n_lists; k++) {
            char name[64];
            element_name(c, s, k, i, name, sizeof name);
            if ((rc = ew_check_shape(c->api, name, &LIST(c, s, k).t[i], first->shape, first->ndim))) return rc;
        }
    }
    return ACLNN_SUCCESS;
}

/* fe_plan x1 .. out [scalar]: the parameter block (the plan, one scalar per tensor of a scalar list, whose
 * elements are read and checked here) and the executor over every list's tensors (then the scalars tensor)
 * into out's, from phase 1's snapshots. The step builds it: the block outgrows op_params with long lists. */
aclnnStatus opc_fe_plan(op_call *c, const op_step *s) {
    fe_layout L = layout(c, s);
    const char *api = c->api;
    const ew_spec *sp = c->def->spec;
    int k_scalar = L.n_lists + 1;
    uint64_t n = LIST(c, s, 0).n, size;
    aclDataType sdt = L.kind == FE_SCALAR ? op_scalar_of(c, s, k_scalar)->dtype : ACL_DT_UNDEFINED;
    const aclScalar *const *slist = NULL;
    if (L.kind == FE_SCALAR_LIST) (void)pyaclnn_stub_scalar_list_get(op_argument(c, s, k_scalar)->p, &slist, &size);

    size_t bytes = sizeof(fe_params) + (L.kind == FE_SCALAR_LIST ? n : 0) * sizeof(ew_value);
    size_t n_in = (size_t)(L.n_lists * n) + (L.kind == FE_SCALAR_TENSOR);
    fe_params *p = op_scratch(c, bytes);
    pyaclnn_stub_tensor *in = op_scratch(c, sizeof *in * (n_in + (size_t)n));
    if (p == NULL || in == NULL) {
        pyaclnn_stub_report(ACLNN_ERR_INNER_CREATE_EXECUTOR, api, "out of host memory");
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    }
    /* FLOAT for an empty x1 */
    aclDataType dt = n > 0 ? LIST(c, s, 0).t[0].dtype : ACL_FLOAT;
    p->n_lists = L.n_lists;
    p->scalar_kind = L.kind;
    p->count = n;
    p->plan.op = sp->op;
    p->plan.n_inputs = L.n_lists;
    p->plan.scalar_second = L.n_lists == 1 && L.kind != FE_NO_SCALAR;
    p->scalar_dtype = L.kind == FE_SCALAR_TENSOR ? scalar_target(s, dt, ACL_FLOAT)
                                                 : scalar_target(s, dt, L.kind == FE_SCALAR ? sdt : ACL_DOUBLE);
    /* FLOAT16/BF16 lists compute in fp32 (the kernels upcast), integer lists in their dtype (in FLOAT for
     * the float-only kernels: EW_PROMOTE_INT_TO_FLOAT) */
    p->plan.compute = dt == ACL_INT32 ? ACL_INT32 : (dt == ACL_FLOAT16 || dt == ACL_BF16) ? ACL_FLOAT : dt;
    if (sp->promote == EW_PROMOTE_INT_TO_FLOAT && !ew_is_float(dt)) p->plan.compute = ACL_FLOAT;
    if (sp->op == EW_OP_FN) {
        p->plan.fn = ew_is_float(p->plan.compute) ? sp->f : sp->i;
        p->plan.in_dtype = dt;
        if (p->plan.fn == NULL) {
            char b[24];
            pyaclnn_stub_report(ACLNN_ERR_INNER, api, "no %s kernel for the compute dtype %s", c->def->name,
                                op_dtype_name(p->plan.compute, b));
            return ACLNN_ERR_INNER;
        }
    }
    if (L.kind == FE_SCALAR)
        p->plan.scalar = ew_cast(ew_cast(op_scalar_of(c, s, k_scalar)->v, sdt, p->scalar_dtype), p->scalar_dtype,
                                 p->plan.compute);
    if ((sp->op == EW_OP_ADD || sp->op == EW_OP_SUB) && L.n_lists == 2 && L.kind == FE_SCALAR) {
        /* x1 + alpha * x2 (ForeachAddListV2), x1 - alpha * x2 (ForeachSubListV2: alpha negated, exact) */
        int is_float = p->plan.compute == ACL_FLOAT;
        p->plan.alpha_mode = is_float ? EW_ALPHA_AXPY_F32 : EW_ALPHA_MUL_ADD;   /* float: x2 * alpha, then + x1 */
        p->plan.alpha = is_float ? (ew_value){.f = (float)p->plan.scalar.f} : p->plan.scalar;
        if (sp->op == EW_OP_SUB && dt == ACL_FLOAT16 && !ew_soc_is_950()) {
            /* the A2 kernel's FLOAT16 path: Muls then Sub in fp16, each rounded (arch35: fp32, once) */
            p->plan.compute = ACL_FLOAT16;
            p->plan.alpha_mode = EW_ALPHA_MUL_ADD;
            p->plan.alpha = ew_cast(p->plan.scalar, ACL_FLOAT, ACL_FLOAT16);
            is_float = 0;
        }
        if (sp->op == EW_OP_SUB) {
            if (is_float || p->plan.compute == ACL_FLOAT16) p->plan.alpha.f = -p->plan.alpha.f;
            else p->plan.alpha.i = (int64_t)(0 - (uint64_t)p->plan.alpha.i);
        }
    }
    for (uint64_t j = 0; L.kind == FE_SCALAR_LIST && j < n; j++) {
        aclDataType d;
        ew_value v;
        char name[32];
        snprintf(name, sizeof name, "scalars[%llu]", (unsigned long long)j);
        aclnnStatus rc = ew_scalar_arg(api, name, slist[j], &d, &v);
        if (rc == ACLNN_SUCCESS && !generated_scalars(s) && !scalar_dtype_ok(s, dt, d)) rc = bad_scalar_dtype(api, name, d, dt);
        if (rc) return rc;
        p->scalars[j] = ew_cast(ew_cast(v, d, p->scalar_dtype), p->scalar_dtype, p->plan.compute);
    }
    if (L.kind == FE_SCALAR_TENSOR) p->scalar_dtype = p->plan.compute;
    /* inputs: every input list's snapshots (then the scalars tensor), outputs: out's */
    size_t j = 0;
    for (int k = 0; k < L.n_lists; k++)
        for (uint64_t i = 0; i < n; i++) in[j++] = LIST(c, s, k).t[i];
    if (L.kind == FE_SCALAR_TENSOR) in[j++] = *op_tensor(c, s, k_scalar);
    for (uint64_t i = 0; i < n; i++) in[n_in + i] = LIST(c, s, L.n_lists).t[i];
    c->made = pyaclnn_stub_executor_new_snapshots(c->def->name, n > 0 ? fe_kernel : NULL, p, bytes, in, n_in,
                                                  in + n_in, (size_t)n, 0);
    if (c->made == NULL) {
        pyaclnn_stub_report(ACLNN_ERR_INNER_CREATE_EXECUTOR, api, "could not create the executor (out of memory)");
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    }
    return ACLNN_SUCCESS;
}

/* ---- the operators with a generated op_api (their op definition's dtype rows) ------------------- */

/* Snapshots of every list's tensors into c->lists[].t (one scratch block), for the steps after. */
static aclnnStatus snapshot_lists(op_call *c, const op_step *s, int n_lists) {
    uint64_t total = 0;
    for (int k = 0; k < n_lists; k++) total += LIST(c, s, k).n;
    pyaclnn_stub_tensor *snaps = op_scratch(c, sizeof *snaps * (size_t)(total > 0 ? total : 1));
    if (snaps == NULL) {
        pyaclnn_stub_report(ACLNN_ERR_INNER_CREATE_EXECUTOR, c->api, "out of host memory");
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    }
    for (int k = 0; k < n_lists; k++) {
        LIST(c, s, k).t = snaps;
        for (uint64_t i = 0; i < LIST(c, s, k).n; i++, snaps++) {
            char name[64];
            aclnnStatus rc = op_tensor_arg(c->api, element_name(c, s, k, i, name, sizeof name), LIST(c, s, k).v[i],
                                           snaps);
            if (rc) return rc;
        }
    }
    return ACLNN_SUCCESS;
}

/* fe_gen_dtypes x1 .. out LIST: every tensor's dtype in LIST, and tensor j of every list of x1[j]'s dtype
 * (the op definition's rows pair them); tensors past x1's length are left to fe_lengths. */
aclnnStatus opc_fe_gen_dtypes(op_call *c, const op_step *s) {
    fe_layout L = layout(c, s);
    aclnnStatus rc = snapshot_lists(c, s, L.n_lists + 1);
    if (rc) return rc;
    size_t n_list;
    const aclDataType *list = op_list(s->list, &n_list);
    for (int k = 0; k <= L.n_lists; k++)
        for (uint64_t i = 0; i < LIST(c, s, k).n; i++) {
            char name[64], first[64];
            element_name(c, s, k, i, name, sizeof name);
            if ((rc = ew_check_dtype_in(c->api, name, LIST(c, s, k).t[i].dtype, list, n_list))) return rc;
            if (k > 0 && i < LIST(c, s, 0).n &&
                (rc = tv_check_same_dtype(c->api, name, LIST(c, s, k).t[i].dtype,
                                          element_name(c, s, 0, i, first, sizeof first), LIST(c, s, 0).t[i].dtype)))
                return rc;
        }
    return ACLNN_SUCCESS;
}

static aclnnStatus tiling_error(const char *api, const char *fmt, const char *name, unsigned long long a,
                                unsigned long long b) {
    pyaclnn_stub_report(ACLNN_ERR_INNER_TILING_ERROR, api, fmt, name, a, b);
    return ACLNN_ERR_INNER_TILING_ERROR;
}

#define FE_MAX_TENSORS_950 256

/* fe_tiling x1 .. out: the tiling's checks (foreach_utils op_host: ForeachRegbaseTiling on Ascend 950,
 * the A2 tiling): 1 to 256 tensors in x1 (Ascend 950), all of x1[0]'s dtype, at most 8 dims; every other
 * list's tensor j of x1[j]'s shape (the A2 tiling compares the inputs' shapes; out: see the note). */
aclnnStatus opc_fe_tiling(op_call *c, const op_step *s) {
    fe_layout L = layout(c, s);
    const char *api = c->api, *x = op_pname(c, s, 0);
    uint64_t n = LIST(c, s, 0).n;
    if (ew_soc_is_950() && (n == 0 || n > FE_MAX_TENSORS_950))
        return tiling_error(api, "%s has %llu tensors, it must have 1 to %llu", x, (unsigned long long)n,
                            FE_MAX_TENSORS_950);
    for (uint64_t i = 0; i < n; i++) {
        const pyaclnn_stub_tensor *t = &LIST(c, s, 0).t[i];
        if (t->dtype != LIST(c, s, 0).t[0].dtype) {
            char b1[24], b2[24];
            pyaclnn_stub_report(ACLNN_ERR_INNER_TILING_ERROR, api, "%s[%llu] dtype %s differs from %s[0]'s %s: the "
                                "dtypes of all tensors in the tensor list must be the same", x, (unsigned long long)i,
                                op_dtype_name(t->dtype, b1), x, op_dtype_name(LIST(c, s, 0).t[0].dtype, b2));
            return ACLNN_ERR_INNER_TILING_ERROR;
        }
        if (t->ndim > EW_MAX_DIM)
            return tiling_error(api, "%s[%llu] has %llu dims, at most 8 are supported", x, (unsigned long long)i,
                                (unsigned long long)t->ndim);
        for (int k = 1; k <= L.n_lists; k++) {
            const pyaclnn_stub_tensor *o = &LIST(c, s, k).t[i];
            if (o->ndim != t->ndim || memcmp(o->shape, t->shape, sizeof *t->shape * (size_t)t->ndim) != 0)
                return tiling_error(api, "%s[%llu] has another shape than x1[%llu]", op_pname(c, s, k),
                                    (unsigned long long)i, (unsigned long long)i);
        }
    }
    return ACLNN_SUCCESS;
}

/* fe_scalar_range x scalar: MaximumScalarV2 / MinimumScalarV2's CheckScalarValueValid, after the other checks
 * and for a non-empty x only: a scalar of another dtype than x[0]'s must lie within x[0]'s dtype's finite range
 * (INT32: [-2^31, 2^31 - 1]; FLOAT, FLOAT16, BF16: +-their largest finite value; NaN passes)  -> 161002 */
aclnnStatus opc_fe_scalar_range(op_call *c, const op_step *s) {
    if (LIST(c, s, 0).n == 0) return ACLNN_SUCCESS;
    aclDataType dt = LIST(c, s, 0).t[0].dtype;
    const op_scalar *sc = op_scalar_of(c, s, 1);
    if (sc->dtype == dt) return ACLNN_SUCCESS;
    double v = ew_value_to_double(sc->v, sc->dtype), lim;
    switch (dt) {
    case ACL_INT32:
        if (v < -2147483648.0 || v > 2147483647.0) return op_invalidf(c->api, "Scalar value exceeds int32 range.");
        return ACLNN_SUCCESS;
    case ACL_FLOAT16: lim = 65504.0; break;
    case ACL_BF16: lim = (double)3.3895314e+38f; break;
    default: lim = (double)3.4028235e+38f; break;
    }
    if (v < -lim || v > lim) {
        char b[24];
        return op_invalidf(c->api, "Scalar value exceeds %s range.", op_dtype_name(dt, b));
    }
    return ACLNN_SUCCESS;
}
