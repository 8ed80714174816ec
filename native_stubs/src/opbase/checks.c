#include "opbase/checks.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "opbase/opbase.h"

/* 161001 naming the first NULL among args[0..n) (then workspaceSize, executor). */
static aclnnStatus ew_check_not_null(const char *api, const ew_ptr_arg *args, size_t n, const uint64_t *workspaceSize,
                                     aclOpExecutor *const *executor) {
    for (size_t i = 0; i < n; i++) {
        if (args[i].ptr == NULL) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, api, "%s is NULL", args[i].name);
            return ACLNN_ERR_PARAM_NULLPTR;
        }
    }
    if (workspaceSize == NULL || executor == NULL) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, api, "%s is NULL", workspaceSize == NULL ? "workspaceSize"
                                                                                         : "executor");
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    return ACLNN_SUCCESS;
}

aclnnStatus ew_scalar_arg(const char *api, const char *name, const aclScalar *s, aclDataType *dtype,
                          ew_value *value) {
    unsigned char bytes[16];
    char b[24];
    if (pyaclnn_stub_scalar_get(s, dtype, bytes) != ACLNN_SUCCESS) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api,
                            "%s (%p) is not a live aclScalar (destroyed, never created, or another kind of object)",
                            name, (const void *)s);
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (!ew_scalar_value(*dtype, bytes, value)) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "%s dtype %s is not supported by the emulator (real, "
                            "integer or bool scalars)", name, op_dtype_name(*dtype, b));
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

const char *ew_dtype_list(const aclDataType *list, size_t n, char *buf, size_t size) {
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && used < size; i++) {
        char b[24];
        int w = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", op_dtype_name(list[i], b));
        if (w < 0) break;
        used += (size_t)w;
    }
    return buf;
}

aclnnStatus ew_check_dtype_in(const char *api, const char *name, aclDataType dtype, const aclDataType *list,
                              size_t n) {
    for (size_t i = 0; i < n; i++)
        if (list[i] == dtype) return ACLNN_SUCCESS;
    char b[24], all[256];
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "%s dtype %s is not supported (supported: %s)", name,
                        op_dtype_name(dtype, b), ew_dtype_list(list, n, all, sizeof all));
    return ACLNN_ERR_PARAM_INVALID;
}

aclnnStatus ew_check_max_dim(const char *api, const char *name, const pyaclnn_stub_tensor *t, int max_dim) {
    if (t->ndim <= max_dim) return ACLNN_SUCCESS;
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "%s has %lld dimensions; at most %d are supported", name,
                        (long long)t->ndim, max_dim);
    return ACLNN_ERR_PARAM_INVALID;
}

aclnnStatus ew_broadcast(const char *api, const char *na, const pyaclnn_stub_tensor *a, const char *nb,
                         const pyaclnn_stub_tensor *b, int64_t shape[PYACLNN_STUB_MAX_DIMS], int64_t *ndim) {
    int64_t n = a->ndim > b->ndim ? a->ndim : b->ndim;
    for (int64_t d = 0; d < n; d++) {
        int64_t da = d - (n - a->ndim), db = d - (n - b->ndim);
        int64_t sa = da >= 0 ? a->shape[da] : 1, sb = db >= 0 ? b->shape[db] : 1;
        if (sa != sb && sa != 1 && sb != 1) {
            char ta[200], tb[200];
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "%s shape %s and %s shape %s can not broadcast", na,
                                tv_shape_text(a->shape, a->ndim, ta, sizeof ta), nb,
                                tv_shape_text(b->shape, b->ndim, tb, sizeof tb));
            return ACLNN_ERR_PARAM_INVALID;
        }
        shape[d] = sa == 1 ? sb : sa;
    }
    *ndim = n;
    return ACLNN_SUCCESS;
}

aclnnStatus ew_check_shape(const char *api, const char *name, const pyaclnn_stub_tensor *t,
                           const int64_t *shape, int64_t ndim) {
    int same = t->ndim == ndim;
    for (int64_t d = 0; same && d < ndim; d++) same = t->shape[d] == shape[d];
    if (same) return ACLNN_SUCCESS;
    char want[200], got[200];
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "Shape of %s should be %s, but current is %s", name,
                        tv_shape_text(shape, ndim, want, sizeof want), tv_shape_text(t->shape, t->ndim, got, sizeof got));
    return ACLNN_ERR_PARAM_INVALID;
}

int ew_soc_is_950(void) { return pyaclnn_stub_soc_family() == PYACLNN_SOC_950; }

aclnnStatus op_tensor_arg(const char *api, const char *param, const aclTensor *t, pyaclnn_stub_tensor *out) {
    if (t == NULL) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, api, "%s is NULL", param);
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    if (pyaclnn_stub_tensor_get(t, out) != ACLNN_SUCCESS) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api,
                            "%s (%p) is not a live aclTensor (destroyed, never created, or another kind of object)",
                            param, (const void *)t);
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

/* An aclIntArray's values (NULL -> n = 0 when allow_null, else 161001; not live -> 161002). */
static aclnnStatus tv_int_array_arg(const char *api, const char *name, const aclIntArray *a, int allow_null,
                             const int64_t **values, uint64_t *n) {
    if (a == NULL && !allow_null) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, api, "%s is NULL", name);
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    if (pyaclnn_stub_int_array_get(a, values, n) != ACLNN_SUCCESS) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "%s (%p) is not a live aclIntArray", name, (const void *)a);
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

const char *tv_shape_text(const int64_t *shape, int64_t ndim, char *buf, size_t size) {
    size_t used = (size_t)snprintf(buf, size, "[");
    for (int64_t d = 0; d < ndim && used < size; d++)
        used += (size_t)snprintf(buf + used, size - used, "%s%lld", d ? ", " : "", (long long)shape[d]);
    if (used < size) snprintf(buf + used, size - used, "]");
    return buf;
}

aclnnStatus tv_check_same_dtype(const char *api, const char *na, aclDataType a, const char *nb, aclDataType b) {
    if (a == b) return ACLNN_SUCCESS;
    char ba[24], bb[24];
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "%s dtype %s should be the same as %s dtype %s.", na,
                        op_dtype_name(a, ba), nb, op_dtype_name(b, bb));
    return ACLNN_ERR_PARAM_INVALID;
}

/* ---- the standard steps of the definitions (opbase.h) ------------------------------------ */


/* The dtype of parameter i once read: a tensor's, a scalar's, or an aclDataType argument. */
static int dtype_of(const op_call *c, int i, aclDataType *dt) {
    switch (c->def->params[i].kind) {
    case OP_K_TENSOR:
        if (!c->t[i].present) return 0;
        *dt = c->t[i].dtype;
        return 1;
    case OP_K_SCALAR:
        if (c->s[i].dtype == ACL_DT_UNDEFINED) return 0;
        *dt = c->s[i].dtype;
        return 1;
    case OP_K_DTYPE:
        *dt = (aclDataType)c->arg[i].i;
        return 1;
    default: return 0;
    }
}

/* not_null p ...: 161001 naming the first NULL operand, then workspaceSize, executor. */
aclnnStatus opc_not_null(op_call *c, const op_step *s) {
    ew_ptr_arg ptrs[OP_MAX_STEP_PARAMS];
    for (int k = 0; k < s->np; k++) ptrs[k] = (ew_ptr_arg){op_pname(c, s, k), op_argument(c, s, k)->p};
    return ew_check_not_null(c->api, ptrs, s->np, c->workspace_size, c->executor);
}

static aclnnStatus read_param(op_call *c, int i, const char *name) {
    const op_param *p = &c->def->params[i];
    const void *v = c->arg[i].p;
    aclnnStatus rc = ACLNN_SUCCESS;
    switch (p->kind) {
    case OP_K_TENSOR:
        if (v == NULL && p->optional) c->t[i].present = 0;
        else rc = op_tensor_arg(c->api, name, v, &c->t[i]);
        break;
    case OP_K_SCALAR:
        c->s[i].dtype = ACL_DT_UNDEFINED;
        if (v == NULL && p->optional) break;
        if (v == NULL) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, c->api, "%s is NULL", name);
            return ACLNN_ERR_PARAM_NULLPTR;
        }
        rc = ew_scalar_arg(c->api, name, v, &c->s[i].dtype, &c->s[i].v);
        break;
    case OP_K_INT_ARRAY:
        c->ints[i].v = NULL;
        c->ints[i].n = 0;
        rc = tv_int_array_arg(c->api, name, v, p->optional, &c->ints[i].v, &c->ints[i].n);
        break;
    default: break;
    }
    if (rc == ACLNN_SUCCESS) c->read |= (uint64_t)1 << i;
    return rc;
}

/* read [p ...]: snapshots of the operands (all tensors, scalars and int arrays when none is named), in
 * order: 161001 for a NULL one that is not optional, 161002 for one that is not a live object. */
aclnnStatus opc_read(op_call *c, const op_step *s) {
    aclnnStatus rc;
    if (s->np == 0) {
        for (int i = 0; i < c->def->n_params; i++)
            if ((rc = read_param(c, i, c->def->params[i].name))) return rc;
        return ACLNN_SUCCESS;
    }
    for (int k = 0; k < s->np; k++)
        if ((rc = read_param(c, s->p[k], op_pname(c, s, k)))) return rc;
    return ACLNN_SUCCESS;
}

/* dtype_in p ... LIST: each operand's dtype in the SoC's list (absent optional operands pass). */
aclnnStatus opc_dtype_in(op_call *c, const op_step *s) {
    size_t n;
    const aclDataType *list = op_list(s->list, &n);
    for (int k = 0; k < s->np; k++) {
        aclDataType dt;
        if (!dtype_of(c, s->p[k], &dt)) continue;
        aclnnStatus rc = ew_check_dtype_in(c->api, op_pname(c, s, k), dt, list, n);
        if (rc) return rc;
    }
    return ACLNN_SUCCESS;
}

/* same_dtype a b: b's dtype equals a's ("a dtype X should be the same as b dtype Y."). */
aclnnStatus opc_same_dtype(op_call *c, const op_step *s) {
    aclDataType a, b;
    if (!dtype_of(c, s->p[0], &a) || !dtype_of(c, s->p[1], &b)) return ACLNN_SUCCESS;
    return tv_check_same_dtype(c->api, op_pname(c, s, 0), a, op_pname(c, s, 1), b);
}

/* max_dim p ... N: at most N dimensions (absent optional operands pass). */
aclnnStatus opc_max_dim(op_call *c, const op_step *s) {
    for (int k = 0; k < s->np; k++) {
        if (!op_tensor(c, s, k)->present) continue;
        aclnnStatus rc = ew_check_max_dim(c->api, op_pname(c, s, k), op_tensor(c, s, k), (int)s->n);
        if (rc) return rc;
    }
    return ACLNN_SUCCESS;
}

/* same_shape a b: a has b's shape ("Shape of a should be [..], but current is [..]"; an absent optional a
 * passes). */
aclnnStatus opc_same_shape(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *b = op_tensor(c, s, 1);
    if (!op_tensor(c, s, 0)->present) return ACLNN_SUCCESS;
    return ew_check_shape(c->api, op_pname(c, s, 0), op_tensor(c, s, 0), b->shape, b->ndim);
}

/* broadcast a b: the broadcast shape of a and b becomes the result shape (161002 if they do not). */
aclnnStatus opc_broadcast(op_call *c, const op_step *s) {
    return ew_broadcast(c->api, op_pname(c, s, 0), op_tensor(c, s, 0), op_pname(c, s, 1), op_tensor(c, s, 1),
                        c->shape, &c->ndim);
}

/* shape p: p has the result shape a step computed. */
aclnnStatus opc_shape(op_call *c, const op_step *s) {
    return ew_check_shape(c->api, op_pname(c, s, 0), op_tensor(c, s, 0), c->shape, c->ndim);
}

/* empty p ...: the launch does nothing when an operand has no element. */
aclnnStatus opc_empty(op_call *c, const op_step *s) {
    for (int k = 0; k < s->np; k++)
        if (op_tensor(c, s, k)->present && pyaclnn_stub_numel(op_tensor(c, s, k)) == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}

/* ---- reduce, activation (softmax), norm, loss families ------------------------------------ */

/* can_cast a b: a's dtype can be cast to b's (torch's canCast): "Can not cast from X to Y.". */
aclnnStatus opc_can_cast(op_call *c, const op_step *s) {
    aclDataType a, b;
    if (!dtype_of(c, s->p[0], &a) || !dtype_of(c, s->p[1], &b) || ew_can_cast(a, b)) return ACLNN_SUCCESS;
    char x[24], y[24];
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Can not cast from %s to %s.", op_dtype_name(a, x),
                        op_dtype_name(b, y));
    return ACLNN_ERR_PARAM_INVALID;
}

/* ---- tensor lists and executor tensors (index, conversion: Index, IndexPutImpl, Cat, Stack) --------- */

/* read_list p N: snapshots of tensor list p (at most N tensors) into c->lists[p]: 161001 if it is NULL,
 * 161002 if it is not a live list or holds more than N tensors; then each element as `read` does, named
 * "p[i]". */
aclnnStatus opc_read_list(op_call *c, const op_step *s) {
    int i = s->p[0];
    const char *name = op_pname(c, s, 0);
    const aclTensorList *l = c->arg[i].p;
    if (l == NULL) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, c->api, "%s is NULL", name);
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    const aclTensor *const *items;
    uint64_t size;
    if (pyaclnn_stub_tensor_list_get(l, &items, &size) != ACLNN_SUCCESS) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "%s (%p) is not a live aclTensorList", name, (const void *)l);
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (size > (uint64_t)s->n) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "%s has %llu tensors; the emulator takes at most %zu", name,
                            (unsigned long long)size, (size_t)s->n);
        return ACLNN_ERR_PARAM_INVALID;
    }
    pyaclnn_stub_tensor *t = op_scratch(c, sizeof *t * (size_t)size);
    if (t == NULL) {
        pyaclnn_stub_report(ACLNN_ERR_INNER_CREATE_EXECUTOR, c->api, "out of host memory");
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    }
    for (uint64_t k = 0; k < size; k++) {
        char nm[64];
        snprintf(nm, sizeof nm, "%s[%llu]", name, (unsigned long long)k);
        aclnnStatus rc = op_tensor_arg(c->api, nm, items[k], &t[k]);
        if (rc) return rc;
    }
    c->lists[i].v = items;
    c->lists[i].t = t;
    c->lists[i].n = size;
    c->read |= (uint64_t)1 << i;
    return ACLNN_SUCCESS;
}

/* list_dtype_in p LIST: every tensor of list p in the SoC's list (the message names the list). */
aclnnStatus opc_list_dtype_in(op_call *c, const op_step *s) {
    size_t n;
    const aclDataType *list = op_list(s->list, &n);
    for (uint64_t k = 0; k < c->lists[s->p[0]].n; k++) {
        aclnnStatus rc = ew_check_dtype_in(c->api, op_pname(c, s, 0), c->lists[s->p[0]].t[k].dtype, list, n);
        if (rc) return rc;
    }
    return ACLNN_SUCCESS;
}

/* list_max_dim p N: every tensor of list p has at most N dimensions (the message names the list). */
aclnnStatus opc_list_max_dim(op_call *c, const op_step *s) {
    for (uint64_t k = 0; k < c->lists[s->p[0]].n; k++) {
        aclnnStatus rc = ew_check_max_dim(c->api, op_pname(c, s, 0), &c->lists[s->p[0]].t[k], (int)s->n);
        if (rc) return rc;
    }
    return ACLNN_SUCCESS;
}

/* exec_inputs p ...: the executor's inputs are the operands' tensors in order, a tensor list's expanded in
 * place (instead of the definition's inputs). */
aclnnStatus opc_exec_inputs(op_call *c, const op_step *s) {
    size_t n = 0;
    for (int k = 0; k < s->np; k++)
        n += c->def->params[s->p[k]].kind == OP_K_TENSOR_LIST ? (size_t)c->lists[s->p[k]].n : 1;
    const aclTensor **in = op_scratch(c, sizeof *in * n);
    pyaclnn_stub_tensor *snaps = op_scratch(c, sizeof *snaps * n);
    if (in == NULL || snaps == NULL) {
        pyaclnn_stub_report(ACLNN_ERR_INNER_CREATE_EXECUTOR, c->api, "out of host memory");
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    }
    size_t j = 0;
    for (int k = 0; k < s->np; k++) {
        if (c->def->params[s->p[k]].kind != OP_K_TENSOR_LIST) {
            snaps[j] = *op_tensor(c, s, k);
            in[j++] = op_argument(c, s, k)->p;
            continue;
        }
        for (uint64_t e = 0; e < c->lists[s->p[k]].n; e++) {
            snaps[j] = c->lists[s->p[k]].t[e];
            in[j++] = c->lists[s->p[k]].v[e];
        }
    }
    c->in_handles = in;
    c->in_snaps = snaps;
    c->n_in = n;
    return ACLNN_SUCCESS;
}

/* data_shape p: output p's shape depends on the data: the kernel reports it, and phase 2 waits for the
 * stream and leaves it on p (aclGetViewShape) -- unless the launch does nothing. */
aclnnStatus opc_data_shape(op_call *c, const op_step *s) {
    for (int k = 0; k < c->def->n_outputs; k++)
        if (c->def->outputs[k] == s->p[0]) c->shape_output = k;
    return ACLNN_SUCCESS;
}

/* ---- steps of the pointwise and conversion families (Addcmul/Addcdiv, SWhere) ----------------- */

int ew_in_list(aclDataType dt, const aclDataType *list, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (list[i] == dt) return 1;
    return 0;
}

int op_is_private_format(aclFormat f) {
    return !(f == ACL_FORMAT_ND || f == ACL_FORMAT_NCHW || f == ACL_FORMAT_NHWC || f == ACL_FORMAT_NCL ||
             f == ACL_FORMAT_NCDHW || f == ACL_FORMAT_NDHWC || f == ACL_FORMAT_HWCN);
}

/* broadcast_with p "name": p broadcast with the result shape so far (a step's: broadcast ...), which the
 * message calls "name" ("self shape [..] and tensor1 * tensor2 shape [..] can not broadcast"), becomes the
 * result shape. */
aclnnStatus opc_broadcast_with(op_call *c, const op_step *s) {
    pyaclnn_stub_tensor result = *op_tensor(c, s, 0);   /* only its shape is read */
    result.ndim = c->ndim;
    for (int64_t d = 0; d < c->ndim; d++) result.shape[d] = c->shape[d];
    return ew_broadcast(c->api, op_pname(c, s, 0), op_tensor(c, s, 0), s->text != NULL ? s->text : "", &result,
                        c->shape, &c->ndim);
}

/* ---- standard steps added with the logical family ------------------------------------------------ */

/* not_null_inner p ...: as not_null (the same message), but the status is 561103 (ACLNN_ERR_INNER_NULLPTR), as
 * the op_apis that wrap their null checks in CHECK_RET(CheckNotNull(...), ACLNN_ERR_INNER_NULLPTR) return. */
aclnnStatus opc_not_null_inner(op_call *c, const op_step *s) {
    aclnnStatus rc = opc_not_null(c, s);
    return rc == ACLNN_ERR_PARAM_NULLPTR ? ACLNN_ERR_INNER_NULLPTR : rc;
}

/* ---- standard steps added with the quantisation families (amp_update_scale, add_rms_norm_dynamic_quant,
 * grouped_dynamic_mx_quant) ------------------------------------------------------------------------ */

/* not_null_args p ... ["words"]: 161001 "<p> is NULL" (or "<p> <words>") for the first NULL operand. Unlike not_null,
 * workspaceSize and executor are not checked here: for op_apis that check them at another point (a not_null step
 * without operands, where the vendor does). */
aclnnStatus opc_not_null_args(op_call *c, const op_step *s) {
    for (int k = 0; k < s->np; k++) {
        if (op_argument(c, s, k)->p == NULL) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, c->api, "%s %s", op_pname(c, s, k),
                                s->text != NULL ? s->text : "is NULL");
            return ACLNN_ERR_PARAM_NULLPTR;
        }
    }
    return ACLNN_SUCCESS;
}

/* dtype_one_of p ... LIST ["last"]: each present operand's dtype in the SoC's list, else 161002 "<p> dtype X is not
 * supported (A, B, C)"; the step's string, when it has one, joins the last two ("A, B or C" with " or "). */
aclnnStatus opc_dtype_one_of(op_call *c, const op_step *s) {
    size_t n, i = 0;
    const aclDataType *list = op_list(s->list, &n);
    aclDataType dt = ACL_DT_UNDEFINED;
    int k = 0;
    for (; k < s->np; k++, i = 0) {
        if (!dtype_of(c, s->p[k], &dt)) continue;
        while (i < n && list[i] != dt) i++;
        if (i == n) break;
    }
    if (k == s->np) return ACLNN_SUCCESS;
    char b[24], all[256];
    size_t used = 0;
    all[0] = '\0';
    for (i = 0; i < n && used < sizeof all; i++) {
        const char *sep = i == 0 ? "" : i + 1 == n && s->text != NULL ? s->text : ", ";
        int w = snprintf(all + used, sizeof all - used, "%s%s", sep, op_dtype_name(list[i], b));
        if (w < 0) break;
        used += (size_t)w;
    }
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "%s dtype %s is not supported (%s)", op_pname(c, s, k),
                        op_dtype_name(dt, b), all);
    return ACLNN_ERR_PARAM_INVALID;
}

/* empty_all p ...: the launch does nothing when no operand has an element (nnopbase skips tiling and launch when
 * every output is empty). */
aclnnStatus opc_empty_all(op_call *c, const op_step *s) {
    for (int k = 0; k < s->np; k++)
        if (pyaclnn_stub_numel(op_tensor(c, s, k)) != 0) return ACLNN_SUCCESS;
    c->nothing = 1;
    return ACLNN_SUCCESS;
}

/* ---- the vendor's EZ-coded parameter messages (conv, pool, upsample, norm families) -------------- */

aclnnStatus op_ez_expected(const char *api, const char *param, const char *what, const char *actual,
                           const char *expected) {
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "Parameter %s of %s has incorrect %s %s. It should be %s.",
                        param, api, what, actual, expected);
    return ACLNN_ERR_PARAM_INVALID;
}

aclnnStatus op_ez_reason(const char *api, int plural, const char *params, const char *what, const char *actual,
                         const char *reason_fmt, ...) {
    char reason[512];
    va_list ap;
    va_start(ap, reason_fmt);
    vsnprintf(reason, sizeof reason, reason_fmt, ap);
    va_end(ap);
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "%s %s of %s %s incorrect %s %s. Reason: %s.",
                        plural ? "Parameters" : "Parameter", params, api, plural ? "have" : "has", what, actual, reason);
    return ACLNN_ERR_PARAM_INVALID;
}

const char *op_ints_text(const int64_t *v, uint64_t n, char *buf, size_t size) {
    return tv_shape_text(v, (int64_t)n, buf, size);
}

/* read_masked mask out ...: snapshots of the outputs the bool array `mask` (a live array with one entry per
 * output, checked by an earlier step) asks for; the others are absent (neither read nor given to the
 * executor as tensors). For the backward operators with an outputMask (conv, norm families). */
aclnnStatus opc_read_masked(op_call *c, const op_step *s) {
    const bool *mask;
    uint64_t n_mask = 0;
    if (pyaclnn_stub_bool_array_get(op_argument(c, s, 0)->p, &mask, &n_mask) != ACLNN_SUCCESS) n_mask = 0;
    for (int k = 1; k < s->np; k++) {
        int i = s->p[k];
        c->t[i].present = 0;
        c->read |= (uint64_t)1 << i;
        if ((uint64_t)(k - 1) >= n_mask || !mask[k - 1]) continue;
        aclnnStatus rc = op_tensor_arg(c->api, op_pname(c, s, k), op_argument(c, s, k)->p, &c->t[i]);
        if (rc) return rc;
    }
    return ACLNN_SUCCESS;
}

/* ---- the vendor's op_error_check.h messages (OP_CHECK_DTYPE_NOT_SUPPORT ...), for the families that use
 * them as written (norm: batch / group norm; pool; upsample; loss) ------------------------------------ */

/* dtype_supported p ... LIST: each present operand's dtype in the SoC's LIST. */
aclnnStatus opc_dtype_supported(op_call *c, const op_step *s) {
    size_t n;
    const aclDataType *list = op_list(s->list, &n);
    for (int k = 0; k < s->np; k++) {
        aclDataType dt;
        if (!dtype_of(c, s->p[k], &dt) || ew_in_list(dt, list, n)) continue;
        char b[24], all[256];
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Tensor %s not implemented for %s, should be in dtype "
                            "support list [%s].", op_pname(c, s, k), op_dtype_name(dt, b), ew_dtype_list(list, n, all, sizeof all));
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

/* dtype_match p ... ref: each present operand has ref's dtype (OP_CHECK_DTYPE_NOT_MATCH). */
aclnnStatus opc_dtype_match(op_call *c, const op_step *s) {
    aclDataType want, dt;
    if (!dtype_of(c, s->p[s->np - 1], &want)) return ACLNN_SUCCESS;
    for (int k = 0; k < s->np - 1; k++) {
        if (!dtype_of(c, s->p[k], &dt) || dt == want) continue;
        char a[24], b[24];
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Tensor %s expected dtype is %s but found %s.",
                            op_pname(c, s, k), op_dtype_name(want, a), op_dtype_name(dt, b));
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

/* dtype_same a b: both present operands of one dtype (OP_CHECK_DTYPE_NOT_SAME). */
aclnnStatus opc_dtype_same(op_call *c, const op_step *s) {
    aclDataType a, b;
    if (!dtype_of(c, s->p[0], &a) || !dtype_of(c, s->p[1], &b) || a == b) return ACLNN_SUCCESS;
    char x[24], y[24];
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Expected both tensors to have same dtype, but found %s %s and "
                        "%s %s.", op_pname(c, s, 0), op_dtype_name(a, x), op_pname(c, s, 1), op_dtype_name(b, y));
    return ACLNN_ERR_PARAM_INVALID;
}

/* dim_at_most p ... N / dim_at_least p ... N: present operands' ranks (OP_CHECK_MAX_DIM / OP_CHECK_MIN_DIM). */
static aclnnStatus dim_bound(op_call *c, const op_step *s, int most) {
    for (int k = 0; k < s->np; k++) {
        const pyaclnn_stub_tensor *t = op_tensor(c, s, k);
        if (!t->present || (most ? t->ndim <= s->n : t->ndim >= s->n)) continue;
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, most ? "The %s tensor cannot be larger than %lld dimensions."
                                                                  : "The %s tensor must have at least %lld dimensions.",
                            op_pname(c, s, k), (long long)s->n);
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}
aclnnStatus opc_dim_at_most(op_call *c, const op_step *s) { return dim_bound(c, s, 1); }
aclnnStatus opc_dim_at_least(op_call *c, const op_step *s) { return dim_bound(c, s, 0); }

/* shape_equal a b: a present a has b's shape (OP_CHECK_SHAPE_NOT_EQUAL). */
aclnnStatus opc_shape_equal(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *a = op_tensor(c, s, 0), *b = op_tensor(c, s, 1);
    if (!a->present || !b->present) return ACLNN_SUCCESS;
    int same = a->ndim == b->ndim;
    for (int64_t d = 0; same && d < a->ndim; d++) same = a->shape[d] == b->shape[d];
    if (same) return ACLNN_SUCCESS;
    char x[200], y[200];
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Expected tensor for %s to have same size as tensor for %s, but "
                        "%s does not equal %s.", op_pname(c, s, 0), op_pname(c, s, 1),
                        tv_shape_text(a->shape, a->ndim, x, sizeof x), tv_shape_text(b->shape, b->ndim, y, sizeof y));
    return ACLNN_ERR_PARAM_INVALID;
}

aclnnStatus op_expected_size(const char *api, const char *name, const pyaclnn_stub_tensor *t, const int64_t *shape,
                             int64_t ndim) {
    int same = t->ndim == ndim;
    for (int64_t d = 0; same && d < ndim; d++) same = t->shape[d] == shape[d];
    if (same) return ACLNN_SUCCESS;
    char x[200], y[200];
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "Expected tensor for %s to have same size as %s, but got %s.", name,
                        tv_shape_text(shape, ndim, x, sizeof x), tv_shape_text(t->shape, t->ndim, y, sizeof y));
    return ACLNN_ERR_PARAM_INVALID;
}

aclnnStatus op_invalidf(const char *api, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "%s", msg);
    return ACLNN_ERR_PARAM_INVALID;
}

aclnnStatus op_failf(const char *api, aclnnStatus code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    pyaclnn_stub_vreport(code, api, fmt, ap);
    va_end(ap);
    return code;
}

aclnnStatus op_defer_to_run(op_call *c, aclnnStatus code, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    c->nothing = 1;
    c->params_size = 0;
    c->workspace = 0;
    aclnnStatus rc = op_make_executor(c, 1);
    if (rc != ACLNN_SUCCESS) return rc;
    pyaclnn_stub_executor_defer_error(c->made, code, "%s", msg);
    return ACLNN_SUCCESS;
}

/* dtype_rows p ... "ROWS": the generated aclnn wrapper's check of an op definition (op_host/<op>_def.cpp) with
 * dtype combinations: the operands' dtypes (absent optional ones match any) must be one of the rows of "ROWS"
 * ("FLOAT16 FLOAT FLOAT16|BF16 ..." : one dtype name per operand, rows separated by '|'), else 161002 naming
 * the operands and their dtypes. */
aclnnStatus opc_dtype_rows(op_call *c, const op_step *s) {
    aclDataType have[OP_MAX_STEP_PARAMS];
    int known[OP_MAX_STEP_PARAMS];
    for (int k = 0; k < s->np; k++) known[k] = dtype_of(c, s->p[k], &have[k]);
    const char *r = s->text ? s->text : "";
    while (*r) {
        int ok = 1, k = 0;
        while (*r && *r != '|') {
            while (*r == ' ') r++;
            const char *w = r;
            while (*r && *r != ' ' && *r != '|') r++;
            if (r == w) continue;
            char b[24];
            if (k < s->np && known[k]) {
                const char *nm = op_dtype_name(have[k], b);
                if (strlen(nm) != (size_t)(r - w) || strncmp(nm, w, (size_t)(r - w)) != 0) ok = 0;
            }
            k++;
        }
        if (ok && k == s->np) return ACLNN_SUCCESS;
        if (*r == '|') r++;
    }
    char all[320];
    size_t used = 0;
    all[0] = '\0';
    for (int k = 0; k < s->np && used < sizeof all; k++) {
        char b[24];
        int w = snprintf(all + used, sizeof all - used, "%s%s %s", k ? ", " : "", op_pname(c, s, k),
                         known[k] ? op_dtype_name(have[k], b) : "(absent)");
        if (w < 0) break;
        used += (size_t)w;
    }
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "the dtype combination %s is not supported", all);
    return ACLNN_ERR_PARAM_INVALID;
}
