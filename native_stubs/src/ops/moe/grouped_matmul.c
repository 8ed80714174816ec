/*
 * Grouped matmul: aclnnGroupedMatmulV4 / V5 (hicann/ops-transformer gmm/grouped_matmul), the checks and the float
 * paths; the A8W8 path's checks and kernel: grouped_matmul_quant.c. Definitions: grouped_matmul.toml.
 *
 * The op_api's checks (op_host/op_api/aclnn_grouped_matmul.cpp) in its order and words, each 161002 (NULL lists
 * 161001): CheckNotNull; CheckCommonParam (PreCheckGroupType, the group list's rank, actType, groupListType);
 * CheckTransposeStatus; CheckParam: CheckUnusedParams, CheckFunctionParams (the dtype pattern; non-quant: no
 * activation, CheckNonQuant; INT8 x INT8: grouped_matmul_quant.c on Atlas A2, grouped_matmul_fp8.c's 950 checker on
 * the Ascend 950), CheckParamDifferentGroupType (transposes, the group list's size, CheckCaseNoSplit /
 * CheckCaseSplitM, the bias list), CheckGroupSize, CheckTuningConfig. The kernel: per group, rows of x times the
 * group's weight on the matmul engine's fp32 path (mm_f32_block), plus the bias, one RINT to y's dtype.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/dtype.h"
#include "kernels/matmul.h"
#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"
#include "grouped_matmul.h"

#define GMM_MAX_LIST 128   /* MAX_GROUP_LIST_SIZE_ARRAY */

/* ---- the kernel ------------------------------------------------------------------------------------ */

/* 2-D view of a tensor as [rows, cols] (its leading dims flattened): contiguous fp32 copy. */
static float *load2(const pyaclnn_stub_tensor *t) { return tv_load_float(t); }

static void gmm_block(const float *x, int64_t m, int64_t k, const float *w, int64_t n, const float *b, float *y) {
    mm_f32_block(x, k, w, n, y, n, m, k, n);
    if (b)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) y[i * n + j] = y[i * n + j] + b[j];   /* fp32 add */
}

void grouped_matmul_kernel(const pyaclnn_stub_launch *launch) {
    const gmm_params *p = launch->params;
    if (!tv_launch_views_ok(launch)) return;
    const pyaclnn_stub_tensor *in = launch->inputs;
    const pyaclnn_stub_tensor *X = in, *W = in + p->nx, *B = in + p->nx + p->nw;
    int64_t *gl = p->has_group_list ? (int64_t *)tv_gather_bytes(&in[p->nx + p->nw + p->nb + p->ns + p->npt]) : NULL;
    if (p->has_group_list && !gl) {
        tv_fail_oom(launch);
        return;
    }
    if (p->s8s4) {
        gmm_s8s4_kernel(launch, p, gl);
        free(gl);
        return;
    }
    if (p->fp8) {
        gmm_fp8_kernel(launch, p, gl);
        free(gl);
        return;
    }
    if (p->quant) {
        gmm_quant_kernel(launch, p, gl);
        free(gl);
        return;
    }
    if (p->kase == GMM_CASE_SEPARATED) {   /* y[i] = x[i] @ w[i] + b[i] */
        for (int64_t i = 0; i < p->nx; i++) {
            const pyaclnn_stub_tensor *xt = &X[i], *wt = &W[i];
            int64_t k = xt->shape[xt->ndim - 1], n = wt->shape[1], m = k ? pyaclnn_stub_numel(xt) / k : 0;
            if (m == 0 && pyaclnn_stub_numel(&launch->outputs[i]) == 0) continue;
            float *x = load2(xt), *w = load2(wt), *b = p->nb ? load2(&B[i]) : NULL, *y = tv_alloc(m * n, sizeof(float));
            if (!x || !w || (p->nb && !b) || !y) tv_fail_oom(launch);
            else gmm_block(x, m, k, w, n, b, y), tv_store_float(&launch->outputs[i], y);
            free(x), free(w), free(b), free(y);
        }
        free(gl);
        return;
    }
    if (p->kase == GMM_CASE_SPLIT_K) {   /* y[g] = x[:, ks:ke] @ weight[ks:ke, :] over the group list's k ranges */
        const pyaclnn_stub_tensor *yt = &launch->outputs[0];
        int64_t m = X[0].shape[0], k = X[0].shape[1], n = W[0].shape[1], start = 0;
        float *x = load2(&X[0]), *w = load2(&W[0]), *y = tv_load_float(yt);
        if (!x || !w || !y) {
            tv_fail_oom(launch);
        } else {
            for (int64_t g = 0; g < p->groups; g++) {
                int64_t end = !gl ? k : p->group_list_type == 0 ? gl[g] : start + gl[g];
                end = end < start ? start : end > k ? k : end;   /* the emulator keeps inside x */
                mm_f32_block(x + start, k, w + start * n, n, y + g * m * n, n, m, end - start, n);
                start = end;
            }
            tv_store_float(yt, y);
        }
        free(x), free(w), free(y), free(gl);
        return;
    }
    /* split M: one y of the rows of every group, one after the other */
    const pyaclnn_stub_tensor *yt = &launch->outputs[0];
    int64_t n = yt->shape[1], rows = yt->shape[0];
    float *y = tv_load_float(yt);   /* rows no group covers keep their values */
    if (!y) {
        tv_fail_oom(launch);
        free(gl);
        return;
    }
    if (p->kase == GMM_CASE_XLIST_WLIST) {
        int64_t at = 0;
        for (int64_t i = 0; i < p->nx; i++) {
            int64_t m = X[i].shape[0], k = X[i].shape[1];
            float *x = load2(&X[i]), *w = load2(&W[i]), *b = p->nb ? load2(&B[i]) : NULL;
            if (!x || !w || (p->nb && !b)) tv_fail_oom(launch);
            else gmm_block(x, m, k, w, n, b, y + at * n);
            free(x), free(w), free(b);
            at += m;
        }
    } else {
        int64_t k = X[0].shape[1], start = 0;
        float *x = load2(&X[0]), *w = NULL, *b = NULL;
        int single = p->kase == GMM_CASE_SINGLE_W3;
        if (single) w = load2(&W[0]), b = p->nb ? load2(&B[0]) : NULL;
        if (!x || (single && (!w || (p->nb && !b)))) {
            tv_fail_oom(launch);
        } else {
            for (int64_t g = 0; g < p->groups; g++) {
                int64_t end = !gl ? rows : p->group_list_type == 0 ? gl[g] : start + gl[g];
                end = end < start ? start : end > rows ? rows : end;   /* the emulator keeps inside x */
                float *wg = w, *bg = b;
                if (!single) {
                    wg = load2(&W[g]), bg = p->nb ? load2(&B[g]) : NULL;
                    if (!wg || (p->nb && !bg)) {
                        tv_fail_oom(launch);
                        free(wg), free(bg);
                        break;
                    }
                }
                if (end > start)
                    gmm_block(x + start * k, end - start, k, single ? w + g * k * n : wg, n,
                              bg ? (single ? b + g * n : bg) : NULL, y + start * n);
                if (!single) free(wg), free(bg);
                start = end;
            }
        }
        free(x), free(w), free(b);
    }
    tv_store_float(yt, y);
    free(y), free(gl);
}

/* ---- steps ----------------------------------------------------------------------------------------- */

/* not_null_gmm x weight out: CheckNotNull (NULL 161001, an empty list 161002). */
aclnnStatus opc_not_null_gmm(op_call *c, const op_step *s) {
    static const char *nm[3] = {"x", "weight", "y"};
    for (int k = 0; k < 3; k++) {
        const aclTensorList *l = op_argument(c, s, k)->p;
        const aclTensor *const *items;
        uint64_t n;
        if (l == NULL) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, c->api, "%s must not be nullptr.", nm[k]);
            return ACLNN_ERR_PARAM_NULLPTR;
        }
        if (pyaclnn_stub_tensor_list_get(l, &items, &n) != ACLNN_SUCCESS)
            return gmm_bad(c, "%s (%p) is not a live aclTensorList", nm[k], (const void *)l);
        if (n == 0) return gmm_bad(c, "%s must not be empty tensorlist.", nm[k]);
    }
    return ACLNN_SUCCESS;
}

/* The tensor lists are read in two passes: gmm_handles (the list, its length), then gmm_snap into one scratch
 * block for every list (op_scratch allows few blocks per call). */
static aclnnStatus gmm_handles(op_call *c, const char *param, gmm_list *L) {
    int i = op_param_index(c->def, param);
    const aclTensorList *l = i >= 0 ? c->arg[i].p : NULL;
    memset(L, 0, sizeof *L);
    if (l == NULL) return ACLNN_SUCCESS;
    if (pyaclnn_stub_tensor_list_get(l, &L->v, &L->n) != ACLNN_SUCCESS)
        return gmm_bad(c, "%s (%p) is not a live aclTensorList", param, (const void *)l);
    if (L->n > GMM_MAX_LIST)
        return gmm_bad(c, "Length of tensorList should not exceed %lld, but actually got %llu.", (long long)GMM_MAX_LIST,
                       (unsigned long long)L->n);
    return ACLNN_SUCCESS;
}

static aclnnStatus gmm_snap(op_call *c, const char *param, gmm_list *L, pyaclnn_stub_tensor **pool) {
    L->t = *pool;
    *pool += L->n;
    for (uint64_t k = 0; k < L->n; k++) {
        char nm[64];
        snprintf(nm, sizeof nm, "%s[%llu]", param, (unsigned long long)k);
        if (L->v[k] == NULL) return gmm_bad(c, "%s is null, which is not supported.", nm);
        aclnnStatus rc = op_tensor_arg(c->api, nm, L->v[k], &L->t[k]);
        if (rc) return rc;
    }
    return ACLNN_SUCCESS;
}

static int64_t iarg(op_call *c, const char *name) { return c->arg[op_param_index(c->def, name)].i; }

int gmm_transposed(const pyaclnn_stub_tensor *t) {
    if (t->ndim < 2) return 0;
    int64_t r = t->ndim - 2, q = t->ndim - 1;
    return t->strides[r] == 1 && t->strides[q] == t->shape[r] && t->shape[r] > 1;
}

static const char *dname(aclDataType d, char b[24]) { return op_dtype_name(d, b); }

#define LL(v) ((long long)(v))
#define ULL(v) ((unsigned long long)(v))

/* CheckGroupListCommonTensor's checks of a present group list: at most 1024 entries, one per group (what
 * `against` names, for `group_type`), INT64. */
aclnnStatus gmm_group_list(op_call *c, const pyaclnn_stub_tensor *gl, int64_t groups, const char *against,
                           int group_type) {
    int64_t gsize = gl->shape[0];
    if (gsize > 1024)
        return gmm_bad(c, "When groupList type is tenosr, size of groupList %lld should be less than or equal to 1024.",
                       LL(gsize));
    if (!((gsize == groups && groups > 1) || groups == 1))
        return gmm_bad(c, "When groupList is not null, size of groupList(tensor) %lld should be equal to %s %lld with "
                          "groupType %d.", LL(gsize), against, LL(groups), group_type);
    if (gl->dtype != ACL_INT64) return gmm_bad(c, "Invalid dtype: Only int64 is supported for groupList.");
    return ACLNN_SUCCESS;
}

aclnnStatus gmm_optional_list(op_call *c, const gmm_lists *L, const gmm_list *T, const char *name) {
    /* GetGroupSize: the longest list's length, else the group list's */
    uint64_t total = L->X.n > 1 ? L->X.n : L->W.n > 1 ? L->W.n : L->Y.n > 1 ? L->Y.n
                   : L->gl->present ? (uint64_t)L->gl->shape[0] : 1;
    const pyaclnn_stub_tensor *w0 = &L->W.t[0];
    int64_t nidx = w0->ndim - 1;
    if (nidx < 0) return gmm_bad(c, "weight[0] has no dims (the emulator's check: the op_api reads its last dim)");
    if (T->n != L->W.n)
        return gmm_bad(c, "%s size[%llu] must be equal with weight size[%llu].", name, ULL(T->n), ULL(L->W.n));
    if (L->single_w) {
        const pyaclnn_stub_tensor *t = &T->t[0];
        if (t->ndim != 2) return gmm_bad(c, "%s Dim must be 2, but now is %lld.", name, LL(t->ndim));
        if ((uint64_t)t->shape[0] != total)
            return gmm_bad(c, "%s batch size[%lld] should be euqal with groupList length[%llu].", name, LL(t->shape[0]),
                           ULL(total));
        if (t->shape[1] != w0->shape[nidx])
            return gmm_bad(c, "NDim[%lld] of %s should be equal with NDim[%lld] of weight.", LL(t->shape[1]), name,
                           LL(w0->shape[nidx]));
        return ACLNN_SUCCESS;
    }
    for (uint64_t i = 0; i < total && i < T->n; i++) {   /* the op_api reads past the list when total is larger */
        const pyaclnn_stub_tensor *t = &T->t[i], *w = &L->W.t[i];
        if (t->ndim != 1) return gmm_bad(c, "%s Dim must be 1, but now is %lld.", name, LL(t->ndim));
        if (nidx >= w->ndim || t->shape[0] != w->shape[nidx])
            return gmm_bad(c, "NDim[%lld] of %s[%llu] should be equal with NDim[%lld] of weight[%llu].", LL(t->shape[0]),
                           name, ULL(i), LL(nidx < w->ndim ? w->shape[nidx] : -1), ULL(i));
    }
    return ACLNN_SUCCESS;
}

aclnnStatus opc_gmm_plan(op_call *c, const op_step *s) {
    (void)s;
    gmm_lists L;
    gmm_list act[3], outs[2], *q = L.q;
    gmm_list X, Wt, B, Y;   /* L's, once read */
    static const char *QN[5] = {"scaleOptional", "offsetOptional", "antiquantScaleOptional", "antiquantOffsetOptional",
                                "perTokenScaleOptional"};
    static const char *AN[3] = {"activationInputOptional", "activationQuantScaleOptional", "activationQuantOffsetOptional"};
    static const char *ON[2] = {"activationFeatureOutOptional", "dynQuantScaleOutOptional"};
    aclnnStatus rc;
    static const char *MAIN[4] = {"x", "weight", "out", "biasOptional"};
    gmm_list *mains[4] = {&L.X, &L.W, &L.Y, &L.B};
    const char *names[14];
    gmm_list *all[14];
    int na = 0;
    for (int k = 0; k < 4; k++) names[na] = MAIN[k], all[na++] = mains[k];
    for (int k = 0; k < 5; k++) names[na] = QN[k], all[na++] = &q[k];
    for (int k = 0; k < 3; k++) names[na] = AN[k], all[na++] = &act[k];
    for (int k = 0; k < 2; k++) names[na] = ON[k], all[na++] = &outs[k];
    uint64_t total = 0;
    for (int k = 0; k < na; k++) {
        if ((rc = gmm_handles(c, names[k], all[k]))) return rc;
        total += all[k]->n;
    }
    pyaclnn_stub_tensor *pool = op_scratch(c, sizeof *pool * (size_t)(total ? total : 1));
    if (!pool) {
        pyaclnn_stub_report(ACLNN_ERR_INNER_CREATE_EXECUTOR, c->api, "out of host memory");
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    }
    for (int k = 0; k < na; k++) {
        if ((rc = gmm_snap(c, names[k], all[k], &pool))) return rc;
        if (k >= 3 && all[k]->n == 1 && all[k]->t[0].ndim == 1 && all[k]->t[0].shape[0] == 0)
            all[k]->n = 0;   /* ResetEmptyTensor: one (0,) tensor is an absent list */
    }
    X = L.X, Wt = L.W, B = L.B, Y = L.Y;
    int gi = op_param_index(c->def, "groupListOptional");
    const pyaclnn_stub_tensor *gl = &c->t[gi];
    int64_t split = iarg(c, "splitItem"), gtype = iarg(c, "groupType"), gltype = iarg(c, "groupListType"),
            actType = iarg(c, "actType");
    int soc950 = ew_soc_is_950();
    char b1[24], b2[24];
    /* CheckCommonParam */
    if (gtype == 1) return gmm_bad(c, "Not support split n dim now, groupType can not be 1.");
    if (gtype != GMM_SPLIT_M && gtype != GMM_SPLIT_K && gtype != GMM_NO_SPLIT)
        return gmm_bad(c, "groupType only support -1/0/2 now, but given groupType is %lld", LL(gtype));
    if ((split == 2 || split == 3) && gtype == GMM_NO_SPLIT)
        return gmm_bad(c, "When splitItem is 2/3, groupType can not be -1.");
    if (gl->present && gl->ndim != (gltype == 2 ? 2 : 1))
        return gmm_bad(c, "When groupList type is tensor, groupList dim only support 1 or 2(only when groupListType is "
                          "2), but now groupList dim is %lld, groupListType is %lld.", LL(gl->ndim), LL(gltype));
    if (actType < 0) return gmm_bad(c, "actType must be larger or equal to 0");
    if (actType != 0 && actType == 3) return gmm_bad(c, "Activation function not support GELU_ERR_FUNC now.");
    if (actType != 0 && actType >= 6) return gmm_bad(c, "Activation function only support RELU/GELU_TANH/FASTGELU/SILU.");
    if (gltype == 2) {
        if (soc950) return gmm_bad(c, "This platform not support groupListType is 2.");
        if (gtype != GMM_SPLIT_M)
            return gmm_bad(c, "When groupListType is 2 only support groupType 0, but get groupType %lld.", LL(gtype));
    } else if (gltype != 0 && gltype != 1) {
        return gmm_bad(c, "groupListType shoule be 0 or 1.");
    }
    /* CheckTransposeStatus */
    int tx = 0, tw = 0;
    if (gtype == GMM_SPLIT_K) tx = gmm_transposed(&X.t[0]), tw = Wt.n == 1 && gmm_transposed(&Wt.t[0]);
    else tx = X.n == 1 && gmm_transposed(&X.t[0]), tw = gmm_transposed(&Wt.t[0]);
    int single_w = Wt.n == 1 && gtype != GMM_NO_SPLIT;
    /* CheckParam: CheckUnusedParams */
    for (int k = 0; k < 3; k++)
        if (act[k].n) return gmm_bad(c, "%s must be nullptr.", AN[k]);
    for (int k = 0; k < 2; k++)
        if (outs[k].n) return gmm_bad(c, "%s must be nullptr.", ON[k]);
    /* CheckFunctionParams */
    aclDataType xd = X.t[0].dtype, wd = Wt.t[0].dtype;
    int xf = xd == ACL_FLOAT16 || xd == ACL_BF16 || xd == ACL_FLOAT;
    int quant = xd == ACL_INT8 && wd == ACL_INT8 && !soc950;   /* the 950's: its own checker (grouped_matmul_fp8.c) */
    L.gl = gl, L.gtype = gtype, L.single_w = Wt.n == 1 && gtype != GMM_NO_SPLIT;
    int fp8 = soc950 && gmm_950_quant(xd, wd);
    if (fp8) {
        if ((rc = gmm_950_quant_params(c, &L, actType, tx, tw))) return rc;
    } else if (soc950 && !quant && gmm_950_weight_quant(c, xd, wd)) {
        if ((rc = gmm_950_weight_quant_params(c, &L, actType, split, gltype, tx, tw))) return rc;
        return gmm_950_s8s4_plan(c, &L, gltype);   /* only the S8S4 pseudo-quant path passes the checker */
    } else if (quant) {
        if ((rc = gmm_quant_function_params(c, &L))) return rc;
    } else if (!(xf && xd == wd)) {
        /* INT32 x / weight are packed INT4 (UnpackInt32ToInt4): A8W4, A4W4, A16W4 */
        int w4 = wd == ACL_INT4 || wd == ACL_INT32;
        int other = (xd == ACL_INT8 && w4) || ((xd == ACL_INT4 || xd == ACL_INT32) && w4) ||
                    ((xd == ACL_BF16 || xd == ACL_FLOAT16) && (wd == ACL_INT8 || w4));
        if (other)
            return gmm_bad(c, "x %s with weight %s: the A8W4, A4W4 and weight-quantised paths are not modelled by "
                              "the emulator", dname(xd, b1), dname(wd, b2));
        return gmm_bad(c, "GMM: there is no matching xDtype and weightDtype pattern. case with x dtype %s and weight "
                          "dtype %s is not supported.", dname(xd, b1), dname(wd, b2));
    } else {
        aclDataType bd = xd == ACL_BF16 ? ACL_FLOAT : xd;
        /* CheckNonQuantMatmulDataType: the op_api drops its result; the emulator refuses (its kernel writes y in
         * x's dtype), with the vendor's messages */
        for (uint64_t i = 0; i < X.n; i++)
            if (X.t[i].dtype != xd) return gmm_bad(c, "GMM: x dtype does not match with required dtype[%s].", dname(xd, b1));
        for (uint64_t i = 0; i < Wt.n; i++)
            if (Wt.t[i].dtype != wd)
                return gmm_bad(c, "GMM: weight dtype does not match with required dtype[%s].", dname(wd, b1));
        for (uint64_t i = 0; i < Y.n; i++)
            if (Y.t[i].dtype != xd) return gmm_bad(c, "GMM: y dtype does not match with required dtype[%s].", dname(xd, b1));
        for (uint64_t i = 0; i < B.n; i++)
            if (B.t[i].dtype != bd)
                return gmm_bad(c, "GMM: bias dtype does not match with required dtype[%s].", dname(bd, b1));
        if (actType != 0) return gmm_bad(c, "non quant case dose not support activation.");
        if (q[0].n || q[1].n || q[4].n) return gmm_bad(c, "Detected nonquant, but quant inputs is not empty!");
        if (q[2].n || q[3].n) return gmm_bad(c, "Detected nonquant, but antiquant inputs is not empty!");
    }
    /* CheckParamDifferentGroupType */
    if (tx && tw) return gmm_bad(c, "x and weight can not be transposed at the same time.");
    if (gl->present && gl->ndim >= 1 && gl->shape[0] < 1)
        return gmm_bad(c, "size of groupList can not be 0.If expected group num is 1, groupList should be nullptr.");
    int split_sep = split == 0 || split == 1;
    gmm_params *p = op_params(c, sizeof *p);
    int64_t groups = 1;
    if (gtype == GMM_NO_SPLIT) {
        if (tx) return gmm_bad(c, "When x, weight and y are all separated, x can not be transposed.");
        if (!split_sep) return gmm_bad(c, "When y is separated, splitItem should be 0/1, but current splitItem is %lld.", LL(split));
        if (X.n != Y.n)
            return gmm_bad(c, "When y is separated, size of x %llu should equal to size of y %llu.", ULL(X.n), ULL(Y.n));
        if (X.n != Wt.n)
            return gmm_bad(c, "When x and weight are separated, size of x %llu should equal to size of weight %llu.",
                           ULL(X.n), ULL(Wt.n));
        if (gl->present) return gmm_bad(c, "groupListOptional should be nullptr when groupType is -1.");
        for (uint64_t i = 0; i < X.n; i++) {
            const pyaclnn_stub_tensor *x = &X.t[i], *w = &Wt.t[i], *y = &Y.t[i];
            if (x->ndim < 2 || x->ndim > 6)
                return gmm_bad(c, "x[%llu] dim num should be in [2, 6] in this case, but now is %lld.", ULL(i), LL(x->ndim));
            if (w->ndim != 2) return gmm_bad(c, "weight[%llu] dim num should be 2 in this case, but now is %lld.", ULL(i), LL(w->ndim));
            if (gmm_transposed(w) != tw) return gmm_bad(c, "The transpose state must be the same for each tensor in weight.");
            if (y->ndim != x->ndim)
                return gmm_bad(c, "y[%llu] dim num should be %lld in this case, but now is %lld.", ULL(i), LL(x->ndim), LL(y->ndim));
            for (int64_t d = 0; d + 2 < x->ndim; d++)
                if (x->shape[d] != y->shape[d])
                    return gmm_bad(c, "y[%llu] dim %lld value %lld should equal to x[%llu] dim %lld value %lld.", ULL(i),
                                   LL(d), LL(x->shape[d]), ULL(i), LL(d), LL(y->shape[d]));
            int64_t kx = x->shape[x->ndim - 1];
            if (kx > 65535)
                return gmm_bad(c, "x[%llu] dim %lld value %lld should less or equal to 65535.", ULL(i), LL(x->ndim - 1), LL(kx));
            if (kx != w->shape[0])
                return gmm_bad(c, "x[%llu] dim %lld value %lld should equal to weight[%llu] dim 0 value %lld.", ULL(i),
                               LL(x->ndim - 1), LL(kx), ULL(i), LL(w->shape[0]));
            if (!tw && w->shape[1] > 65535)
                return gmm_bad(c, "w[%llu] dim 1 value %lld should less or equal to 65535.", ULL(i), LL(w->shape[1]));
            if (y->shape[y->ndim - 1] != w->shape[1])
                return gmm_bad(c, "y[%llu] dim %lld value %lld should equal to weight[%llu] dim 1 value %lld.", ULL(i),
                               LL(x->ndim - 1), LL(y->shape[y->ndim - 1]), ULL(i), LL(w->shape[1]));
            /* the emulator's: x's and y's rows (the 2nd-last dim) must agree too: the kernel writes m rows */
            if (y->shape[y->ndim - 2] != x->shape[x->ndim - 2])
                return gmm_bad(c, "y[%llu]'s rows %lld differ from x[%llu]'s %lld (the emulator's check)", ULL(i),
                               LL(y->shape[y->ndim - 2]), ULL(i), LL(x->shape[x->ndim - 2]));
        }
        p->kase = GMM_CASE_SEPARATED;
        groups = (int64_t)X.n;
    } else if (gtype == GMM_SPLIT_M) {
        const char *when = !single_w ? "When splited axis is M" : "When groupType is 0";
        if (tx) return gmm_bad(c, "%s, x can not be transposed.", when);
        if (X.n == 1 && Wt.n == 1 && Y.n == 1) {
            if (split != 2 && split != 3)
                return gmm_bad(c, "When y is not separated, splitItem should be 2/3, but current splitItem is %lld.", LL(split));
            if (X.t[0].ndim != 2) return gmm_bad(c, "x[0] dim num should be 2 in this case, but now is %lld.", LL(X.t[0].ndim));
            if (Wt.t[0].ndim != 3) return gmm_bad(c, "weight[0] dim num should be 3 in this case, but now is %lld.", LL(Wt.t[0].ndim));
            if (Y.t[0].ndim != 2) return gmm_bad(c, "y[0] dim num should be 2 in this case, but now is %lld.", LL(Y.t[0].ndim));
            const pyaclnn_stub_tensor *x = &X.t[0], *w = &Wt.t[0], *y = &Y.t[0];
            if (w->shape[1] > 65535)
                return gmm_bad(c, "Dim 1 value of x[0] should less or equal to 65535, but now is %lld.", LL(x->shape[1]));
            if (x->shape[1] != w->shape[1])
                return gmm_bad(c, "Dim 1 value of x[0] should be equal with dim 1 value of weight[0], but now is %lld and "
                                  "%lld respectively.", LL(x->shape[1]), LL(w->shape[1]));
            if (x->shape[0] != y->shape[0])
                return gmm_bad(c, "Dim 0 value of x[0] should be equal with dim 0 value of y[0], but now is %lld and %lld "
                                  "respectively.", LL(x->shape[0]), LL(y->shape[0]));
            if (!tw && w->shape[2] > 65535)
                return gmm_bad(c, "Dim 2 value of weight[0] should less or equal to 65535, but now is %lld.", LL(w->shape[2]));
            if (w->shape[2] != y->shape[1])
                return gmm_bad(c, "Dim 2 value of weight[0] should be equal with dim 1 value of y[0], but now is %lld and "
                                  "%lld respectively.", LL(w->shape[2]), LL(y->shape[1]));
            groups = w->shape[0];
            p->kase = GMM_CASE_SINGLE_W3;
        } else if (X.n == 1 && Wt.n > 1 && Y.n == 1) {
            if (split != 2 && split != 3)
                return gmm_bad(c, "When y is not separated, splitItem should be 2/3, but current splitItem is %lld.", LL(split));
            const pyaclnn_stub_tensor *x = &X.t[0], *y = &Y.t[0];
            if (x->ndim != 2 || y->ndim != 2) return gmm_bad(c, "x[0] and y[0] dim num should be 2 in this case.");
            for (uint64_t i = 0; i < Wt.n; i++) {
                const pyaclnn_stub_tensor *w = &Wt.t[i];
                if (w->ndim != 2) return gmm_bad(c, "weight[%llu] dim num should be 2 in this case, but now is %lld.", ULL(i), LL(w->ndim));
                if (w->shape[0] != x->shape[1])
                    return gmm_bad(c, "Dim 0 value of Weight[%llu] should be equal with dim 1 value of x[0], but now is "
                                      "%lld and %lld respectively.", ULL(i), LL(w->shape[0]), LL(x->shape[1]));
                if (w->shape[1] != y->shape[1])
                    return gmm_bad(c, "Dim 1 value of Weight[%llu] should be equal with dim 1 value of y[0], but now is "
                                      "%lld and %lld respectively.", ULL(i), LL(w->shape[1]), LL(y->shape[1]));
            }
            if (x->shape[0] != y->shape[0]) return gmm_bad(c, "m dim value of x and y is not matched.");
            groups = (int64_t)Wt.n;
            p->kase = GMM_CASE_SINGLE_X_WLIST;
        } else if (X.n > 1 && Wt.n > 1 && Y.n == 1) {
            if (split != 2 && split != 3)
                return gmm_bad(c, "When y is not separated, splitItem should be 2/3, but current splitItem is %lld.", LL(split));
            if (X.n != Wt.n)
                return gmm_bad(c, "When x and weight are separated, size of x %llu should equal to size of weight %llu.",
                               ULL(X.n), ULL(Wt.n));
            const pyaclnn_stub_tensor *y = &Y.t[0];
            int64_t rows = 0;
            for (uint64_t i = 0; i < X.n; i++) {
                const pyaclnn_stub_tensor *x = &X.t[i], *w = &Wt.t[i];
                if (x->ndim != 2 || w->ndim != 2) return gmm_bad(c, "x[%llu] and weight[%llu] dim num should be 2 in this case.", ULL(i), ULL(i));
                if (w->shape[0] != x->shape[1])
                    return gmm_bad(c, "Dim 0 value of weight[%llu] should be equal with dim 1 value of x[%llu], but now is "
                                      "%lld and %lld respectively.", ULL(i), ULL(i), LL(w->shape[0]), LL(x->shape[1]));
                if (y->ndim != 2 || w->shape[1] != y->shape[1])
                    return gmm_bad(c, "Dim 1 value of weight[%llu] should be equal with dim 1 value of y[0].", ULL(i));
                rows += x->shape[0];
            }
            if (y->shape[0] != rows)
                return gmm_bad(c, "y[0] dim 0 value %lld should be equal to the sum of x's dim 0 %lld.", LL(y->shape[0]), LL(rows));
            groups = (int64_t)X.n;
            p->kase = GMM_CASE_XLIST_WLIST;
        } else {
            return gmm_bad(c, "%s, current case with x %s, weight %s, y %s is not supported.", when,
                           X.n > 1 ? "separated" : "not separated", Wt.n > 1 ? "separated" : "not separated",
                           Y.n > 1 ? "separated" : "not separated");
        }
        if (p->kase != GMM_CASE_XLIST_WLIST || gl->present) {   /* CheckGroupListCommonTensor */
            int required = p->kase != GMM_CASE_XLIST_WLIST && groups > 1;
            if (!gl->present && required)
                return gmm_bad(c, "groupListOptional(tensor) is required in this case, but get nullptr.");
            if (gl->present) {
                aclnnStatus rc = gmm_group_list(c, gl, groups, "weight dim 0", 0);
                if (rc) return rc;
            }
        }
        if (gltype == 2) return gmm_bad(c, "groupListType 2 (sparse) is not modelled by the emulator");
    } else {
        if (B.n) return gmm_bad(c, "When groupType is 2, bias must be empty.");
        if (X.n != 1)
            return gmm_bad(c, "When groupType is 2, only support case with unseparated x, y, but now x size is %llu, "
                              "weight size is %llu, y size is %llu.", ULL(X.n), ULL(Wt.n), ULL(Y.n));
        if (!tx) return gmm_bad(c, "When groupType is 2 and x is not separated, tensor in x should be transposed.");
        const pyaclnn_stub_tensor *x = &X.t[0], *w = &Wt.t[0], *y = &Y.t[0];
        if (x->ndim != 2) return gmm_bad(c, "x[0] dim num should be 2 in this case, but now is %lld.", LL(x->ndim));
        for (uint64_t i = 0; i < Wt.n; i++)
            if (Wt.t[i].ndim != 2)
                return gmm_bad(c, "weight[%llu] dim num should be 2 in this case, but now is %lld.", ULL(i), LL(Wt.t[i].ndim));
        if (Wt.n != 1 || Y.n != 1)   /* the op_api checks nothing more for them */
            return gmm_bad(c, "groupType 2 with separated weight or y is not modelled by the emulator");
        if (y->ndim != 3) return gmm_bad(c, "y[0] dim num should be 3 in this case, but now is %lld.", LL(y->ndim));
        if (x->shape[0] > 65535)
            return gmm_bad(c, "Dim 1 value of x[0] should less or equal to 65535, but now is %lld.", LL(x->shape[0]));
        if (x->shape[1] != w->shape[0])
            return gmm_bad(c, "Dim 1 value of x[0] should be equal with dim 0 value of weight[0], but now is %lld and "
                              "%lld respectively.", LL(x->shape[1]), LL(w->shape[0]));
        if (x->shape[0] != y->shape[1])
            return gmm_bad(c, "Dim 0 value of x[0] should be equal with dim 1 value of y[0], but now is %lld and %lld "
                              "respectively.", LL(x->shape[0]), LL(y->shape[1]));
        if (w->shape[1] > 65535)
            return gmm_bad(c, "Dim 1 value of Weight[0] should less or equal to 65535, but now is %lld.", LL(w->shape[1]));
        if (w->shape[1] != y->shape[2])
            return gmm_bad(c, "Dim 1 value of Weight[0] should be equal with dim 2 value of y[0], but now is %lld and "
                              "%lld respectively.", LL(w->shape[1]), LL(y->shape[2]));
        groups = y->shape[0];
        if (!gl->present && groups > 1)
            return gmm_bad(c, "groupListOptional(tensor) is required in this case, but get nullptr.");
        if (gl->present) {
            aclnnStatus rc = gmm_group_list(c, gl, groups, "y dim 0", 2);
            if (rc) return rc;
        }
        p->kase = GMM_CASE_SPLIT_K;
    }
    /* the bias list (CheckOptionalTensorList) */
    if (B.n && (rc = gmm_optional_list(c, &L, &B, "bias"))) return rc;
    /* CheckTuningConfig (V5) */
    int ti = op_param_index(c->def, "tuningConfigOptional");
    if (ti >= 0 && c->ints[ti].n > 0) {
        int64_t maxm = 0;
        for (uint64_t i = 0; i < X.n; i++) maxm = X.t[i].shape[0] > maxm ? X.t[i].shape[0] : maxm;
        int64_t t0 = c->ints[ti].v[0];
        if (t0 < 0 || t0 > maxm)
            return gmm_bad(c, "Invalid tuningConfigOptional (%lld)! It should be a non-negative num, and less than or "
                              "equal to maxM: %lld", LL(t0), LL(maxm));
    }
    if (quant && (rc = gmm_quant_limits(c, &L, actType))) return rc;
    if (fp8 && (rc = gmm_fp8_limits(c, &L))) return rc;
    /* the executor: x.., weight.., bias.., scale.., perTokenScale.., groupList | out.. (y INT32: no scales) */
    int scaled = (quant && Y.t[0].dtype != ACL_INT32) || fp8;
    gmm_list S = scaled ? q[GMM_Q_SCALE] : (gmm_list){0}, PT = scaled ? q[GMM_Q_PER_TOKEN] : (gmm_list){0};
    size_t n_in = (size_t)(X.n + Wt.n + B.n + S.n + PT.n) + (gl->present ? 1 : 0);
    unsigned char *blk = op_scratch(c, sizeof(pyaclnn_stub_tensor) * n_in + sizeof(aclTensor *) * (n_in + (size_t)Y.n));
    pyaclnn_stub_tensor *is = (pyaclnn_stub_tensor *)blk;
    const aclTensor **ih = blk ? (const aclTensor **)(blk + sizeof(pyaclnn_stub_tensor) * n_in) : NULL;
    const aclTensor **oh = ih ? ih + n_in : NULL;
    if (!blk) {
        pyaclnn_stub_report(ACLNN_ERR_INNER_CREATE_EXECUTOR, c->api, "out of host memory");
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    }
    size_t j = 0;
    const gmm_list *ls[5] = {&X, &Wt, &B, &S, &PT};
    for (int k = 0; k < 5; k++)
        for (uint64_t i = 0; i < ls[k]->n; i++, j++) ih[j] = ls[k]->v[i], is[j] = ls[k]->t[i];
    if (gl->present) ih[j] = c->arg[gi].p, is[j] = *gl;
    for (uint64_t i = 0; i < Y.n; i++) oh[i] = Y.v[i];
    c->in_handles = ih, c->in_snaps = is, c->n_in = n_in;
    c->out_handles = oh, c->out_snaps = Y.t, c->n_out = (size_t)Y.n;
    p->nx = (int64_t)X.n, p->nw = (int64_t)Wt.n, p->nb = (int64_t)B.n, p->ny = (int64_t)Y.n;
    p->ns = (int64_t)S.n, p->npt = (int64_t)PT.n, p->quant = quant, p->fp8 = fp8, p->y_dt = Y.t[0].dtype;
    p->a8w8_950 = fp8 && xd == ACL_INT8;
    p->scale_dt = S.n ? S.t[0].dtype : ACL_DT_UNDEFINED, p->bias_dt = B.n ? B.t[0].dtype : ACL_DT_UNDEFINED;
    p->has_group_list = gl->present, p->group_list_type = (int)gltype, p->groups = groups;
    int64_t work = 0, xs = 0;
    for (uint64_t i = 0; i < Y.n; i++) work += pyaclnn_stub_numel(&Y.t[i]);
    for (uint64_t i = 0; i < X.n; i++) xs += pyaclnn_stub_numel(&X.t[i]);
    if (work == 0 || xs == 0) c->nothing = 1;   /* CheckZeroShape: every x empty, no kernel: y keeps its bytes */
    return ACLNN_SUCCESS;
}
