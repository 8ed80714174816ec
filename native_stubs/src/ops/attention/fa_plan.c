/*
 * fa_plan: the last phase-1 step of FlashAttentionScore (n = 0) and its gradient (n = 1). What the vendor's
 * infershape and tiling refuse after the op_api (layout consistency, GQA head ratio, sparse modes and
 * their masks, pse shapes, keepProb, the outputs' dtypes and shapes) and what the emulator does not take
 * (rope, quantisation scales, sink): 161002 with the emulator's messages. Then the kernel's plan (fa.h).
 * Parameters are found by name, so that every version (V1 .. V4, VarLen, Unpadding) shares the step.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "opbase/checks.h"
#include "ops/attention/fa.h"
#include "ops_decls.h"

static int pidx(op_call *c, const char *name) { return op_param_index(c->def, name); }

/* The snapshot of tensor parameter `name` (the first of two names the versions use), NULL if absent. */
static const pyaclnn_stub_tensor *tens(op_call *c, const char *name, const char *alt) {
    int i = pidx(c, name);
    if (i < 0 && alt != NULL) i = pidx(c, alt);
    return i >= 0 && c->t[i].present ? &c->t[i] : NULL;
}

static const char *tname(op_call *c, const char *name, const char *alt) { return pidx(c, name) >= 0 ? name : alt; }

static int64_t iarg(op_call *c, const char *name, int64_t dflt) {
    int i = pidx(c, name);
    return i >= 0 ? c->arg[i].i : dflt;
}

/* An int array parameter's values (n = 0 when absent or not a parameter). */
static const int64_t *ints(op_call *c, const char *name, uint64_t *n) {
    int i = pidx(c, name);
    *n = i >= 0 ? c->ints[i].n : 0;
    return i >= 0 ? c->ints[i].v : NULL;
}

#define fail(c, ...) op_invalidf((c)->api, __VA_ARGS__)

static int same_shape(const pyaclnn_stub_tensor *t, const int64_t *shape, int64_t ndim) {
    return t->ndim == ndim && memcmp(t->shape, shape, sizeof(int64_t) * (size_t)ndim) == 0;
}

static aclnnStatus want_shape(op_call *c, const char *name, const pyaclnn_stub_tensor *t, const int64_t *shape,
                              int64_t ndim) {
    if (same_shape(t, shape, ndim)) return ACLNN_SUCCESS;
    char a[200], b[200];
    return fail(c, "%s shape should be %s, but current is %s", name, tv_shape_text(shape, ndim, a, sizeof a),
                tv_shape_text(t->shape, t->ndim, b, sizeof b));
}

static aclnnStatus want_dtype(op_call *c, const char *name, const pyaclnn_stub_tensor *t, aclDataType d) {
    if (t->dtype == d) return ACLNN_SUCCESS;
    char a[24], b[24];
    return fail(c, "%s dtype should be %s, but current is %s", name, op_dtype_name(d, a), op_dtype_name(t->dtype, b));
}

/* Query's shape with head dim hd (BSH/SBH: N1 * hd). */
static void q_shape(const fa_plan *p, const pyaclnn_stub_tensor *q, int64_t hd, int64_t *shape) {
    memcpy(shape, q->shape, sizeof(int64_t) * (size_t)q->ndim);
    shape[q->ndim - 1] = p->layout <= FA_SBH ? p->N1 * hd : hd;
}

/* TND: the batches from actualSeqQLen / actualSeqKvLen (cumulative ends; trailing zeros: batches left out). */
static aclnnStatus tnd_batches(op_call *c, fa_plan *p, const pyaclnn_stub_tensor *q, const pyaclnn_stub_tensor *k) {
    uint64_t nq, nk;
    const int64_t *aq = ints(c, "actualSeqQLenOptional", &nq), *ak = ints(c, "actualSeqKvLenOptional", &nk);
    if (nq == 0 || nk == 0 || nq != nk)
        return fail(c, "TND needs actualSeqQLenOptional and actualSeqKvLenOptional of the same, non-zero length "
                    "(got %llu and %llu)", (unsigned long long)nq, (unsigned long long)nk);
    if (nq > FA_MAX_BATCH)
        return fail(c, "the emulator takes at most %d batches in TND, got %llu", FA_MAX_BATCH, (unsigned long long)nq);
    const int64_t *arr[2] = {aq, ak};
    int64_t *cu[2] = {p->cu_q, p->cu_kv}, total[2] = {q->shape[0], k->shape[0]};
    p->B = (int64_t)nq;
    p->S1 = p->S2 = 0;
    for (int w = 0; w < 2; w++) {
        uint64_t last = 0;   /* batches after the last non-zero end are left out */
        for (uint64_t b = 0; b < nq; b++)
            if (arr[w][b] != 0) last = b + 1;
        cu[w][0] = 0;
        for (uint64_t b = 0; b < nq; b++) {
            int64_t end = b < last ? arr[w][b] : cu[w][b];
            if (end < cu[w][b] || end > total[w])
                return fail(c, "%s must be non-decreasing cumulative lengths within %lld tokens",
                            w ? "actualSeqKvLenOptional" : "actualSeqQLenOptional", (long long)total[w]);
            cu[w][b + 1] = end;
            int64_t len = end - cu[w][b];
            int64_t *mx = w ? &p->S2 : &p->S1;
            if (len > *mx) *mx = len;
        }
    }
    return ACLNN_SUCCESS;
}

/* The sparse mode and its mask (fa_mask.c). */
static aclnnStatus sparse_mask(op_call *c, fa_plan *p, const pyaclnn_stub_tensor *m) {
    p->sparse = (int)iarg(c, "sparseMode", 0);
    p->pre = iarg(c, "preTokens", 0);
    p->next = iarg(c, "nextTokens", 0);
    int tnd = p->layout == FA_TND;
    if (p->sparse < 0 || p->sparse > 8 || (!tnd && p->sparse > 6) || (tnd && p->sparse == 5))
        return fail(c, "sparseMode %d is not supported with inputLayout %s", p->sparse, tnd ? "TND" : "other than TND");
    const char *mname = "attenMaskOptional";
    if (m != NULL && m->dtype != ACL_BOOL && m->dtype != ACL_UINT8) {
        char b[24];
        return fail(c, "The data type of %s is %s, should be BOOL or UINT8", mname, op_dtype_name(m->dtype, b));
    }
    char sh[200];
    if (p->sparse == 0 || p->sparse == 1 || p->sparse == 5) {
        p->mask_kind = m ? FA_MASK_FULL : FA_MASK_NONE;
        if (m == NULL) {
            if (p->sparse != 0) return fail(c, "%s is required when sparseMode is %d", mname, p->sparse);
            return ACLNN_SUCCESS;
        }
        int ok = m->ndim == 2 || (!tnd && m->ndim == 4);
        ok = ok && m->shape[m->ndim - 2] == p->S1 && m->shape[m->ndim - 1] == p->S2;
        if (ok && m->ndim == 4) {
            p->mask_b = m->shape[0], p->mask_n = m->shape[1];
            ok = (p->mask_b == 1 || p->mask_b == p->B) && (p->mask_n == 1 || p->mask_n == p->N1);
        } else {
            p->mask_b = p->mask_n = 1;
        }
        if (!ok)
            return fail(c, "%s shape %s is not [S1, S2]%s with S1 = %lld, S2 = %lld", mname,
                        tv_shape_text(m->shape, m->ndim, sh, sizeof sh), tnd ? "" : ", [1, 1, S1, S2], [B, 1, S1, S2] or "
                        "[B, N1, S1, S2]", (long long)p->S1, (long long)p->S2);
        return ACLNN_SUCCESS;
    }
    if (m == NULL) return fail(c, "%s is required when sparseMode is %d", mname, p->sparse);
    if (m->ndim != 2 || m->shape[0] != (p->sparse == 6 ? 3072 : 2048) || m->shape[1] != 2048)
        return fail(c, "%s must be the compressed [%d, 2048] mask when sparseMode is %d, got %s", mname,
                    p->sparse == 6 ? 3072 : 2048, p->sparse, tv_shape_text(m->shape, m->ndim, sh, sizeof sh));
    p->mask_kind = FA_MASK_COMPRESSED;
    if (p->sparse == 6) {
        uint64_t np;
        const int64_t *pre = ints(c, "prefixOptional", &np);
        if (np < (uint64_t)p->B || np > FA_MAX_BATCH)
            return fail(c, "prefixOptional needs one value per batch (%lld) when sparseMode is 6, got %llu",
                        (long long)p->B, (unsigned long long)np);
        memcpy(p->prefix, pre, sizeof(int64_t) * np);
        p->n_prefix = (int64_t)np;
    }
    p->first_band = p->last_band = -1;
    for (int64_t b = 0; b < p->B; b++)
        if (fa_s1(p, b) > 0 && fa_s2(p, b) > 0) {
            if (p->first_band < 0) p->first_band = (int)b;
            p->last_band = (int)b;
        }
    return ACLNN_SUCCESS;
}

static aclnnStatus pse_plan(op_call *c, fa_plan *p, const pyaclnn_stub_tensor *pse, const char *pname) {
    p->pse_type = (int)iarg(c, "pseType", 1);
    if (p->pse_type < 0 || p->pse_type > 3) return fail(c, "pseType must be 0, 1, 2 or 3, got %d", p->pse_type);
    if (pse == NULL) return ACLNN_SUCCESS;
    char sh[200];
    if (p->pse_type >= 2) {
        p->pse_kind = FA_PSE_ALIBI;
        p->alibi_per_batch = pse->ndim == 2;
        if (!((pse->ndim == 1 && pse->shape[0] == p->N1) || (pse->ndim == 2 && pse->shape[0] == p->B && pse->shape[1] == p->N1)))
            return fail(c, "%s (alibi slopes for pseType %d) must be [N1] or [B, N1], got %s", pname, p->pse_type,
                        tv_shape_text(pse->shape, pse->ndim, sh, sizeof sh));
        if (p->layout != FA_TND && p->S1 != p->S2)
            return fail(c, "pseType %d needs S1 == S2, got %lld and %lld", p->pse_type, (long long)p->S1, (long long)p->S2);
        uint64_t n;
        const int64_t *qs = ints(c, "qStartIdxOptional", &n);
        p->q_start = n ? qs[0] : 0;
        qs = ints(c, "kvStartIdxOptional", &n);
        p->kv_start = n ? qs[0] : 0;
        return ACLNN_SUCCESS;
    }
    p->pse_kind = FA_PSE_TENSOR;
    int ok = pse->ndim == 4 && (pse->shape[0] == 1 || pse->shape[0] == p->B) && pse->shape[1] == p->N1 &&
             (pse->shape[2] == 1 || pse->shape[2] == p->S1) && pse->shape[3] == p->S2;
    if (!ok)
        return fail(c, "%s shape %s is not [B, N1, S1, S2], [1, N1, S1, S2] or [B, N1, 1, S2] with B = %lld, N1 = %lld, "
                    "S1 = %lld, S2 = %lld", pname, tv_shape_text(pse->shape, pse->ndim, sh, sizeof sh), (long long)p->B,
                    (long long)p->N1, (long long)p->S1, (long long)p->S2);
    p->pse_b = pse->shape[0];
    p->pse_s1 = pse->shape[2];
    return ACLNN_SUCCESS;
}

/* Dropout: keepProb in (0, 1]; below 1 the mask tensor, else (V4) seed and offset. */
static aclnnStatus drop_plan(op_call *c, fa_plan *p, const pyaclnn_stub_tensor *drop) {
    int ki = pidx(c, "keepProb");
    double keep = c->arg[ki].d;
    if (!(keep > 0 && keep <= 1)) return fail(c, "keepProb must be in (0, 1], got %f", keep);
    p->keep = (float)keep;
    p->div = 1.0f / p->keep;
    if (keep == 1) return ACLNN_SUCCESS;
    int64_t scores = 0;
    for (int64_t b = 0; b < p->B; b++) scores += fa_s1(p, b) * fa_s2(p, b);
    scores *= p->N1;
    if (drop != NULL) {
        if (drop->dtype != ACL_UINT8) {
            char b[24];
            return fail(c, "The data type of dropMaskOptional is %s, should be UINT8", op_dtype_name(drop->dtype, b));
        }
        if (pyaclnn_stub_numel(drop) < (scores + 7) / 8)
            return fail(c, "dropMaskOptional holds %lld bytes; %lld scores need %lld", (long long)pyaclnn_stub_numel(drop),
                        (long long)scores, (long long)((scores + 7) / 8));
        p->dropout = FA_DROP_TENSOR;
        return ACLNN_SUCCESS;
    }
    if (pidx(c, "seed") < 0) return fail(c, "dropMaskOptional is required when keepProb (%f) is less than 1", keep);
    p->dropout = FA_DROP_PHILOX;
    p->seed = (uint64_t)iarg(c, "seed", 0);
    p->offset = (uint64_t)iarg(c, "offset", 0);
    return ACLNN_SUCCESS;
}

/* softmaxMax / softmaxSum: fp32, 8 per row. */
static aclnnStatus stat_check(op_call *c, const char *name, const pyaclnn_stub_tensor *t, int64_t rows) {
    if (t == NULL) return fail(c, "%s is required", name);
    aclnnStatus rc = want_dtype(c, name, t, ACL_FLOAT);
    if (rc) return rc;
    if (pyaclnn_stub_numel(t) != rows * 8)
        return fail(c, "%s must hold %lld values (8 per query row), it holds %lld", name, (long long)(rows * 8),
                    (long long)pyaclnn_stub_numel(t));
    return ACLNN_SUCCESS;
}

/* fa_plan (n = 0 forward, 1 gradient). */
aclnnStatus opc_fa_plan(op_call *c, const op_step *s) {
    if (c->nothing) return ACLNN_SUCCESS;
    int grad = s->n == 1;
    static const char *const unsupported[] = {"queryRopeOptional", "keyRopeOptional", "dScaleQOptional",
                                              "dScaleKOptional", "dScaleVOptional", "dScaleDyOptional",
                                              "dScaleOOptional", "sinkOptional", "sinkInOptional"};
    for (size_t k = 0; k < sizeof unsupported / sizeof *unsupported; k++) {
        const pyaclnn_stub_tensor *t = tens(c, unsupported[k], NULL);
        if (t != NULL && pyaclnn_stub_numel(t) > 0) return fail(c, "%s is not supported by the emulator", unsupported[k]);
    }
    const pyaclnn_stub_tensor *q = tens(c, "query", NULL), *k = tens(c, "key", "keyIn"), *v = tens(c, "value", NULL);
    const char *layout = c->arg[pidx(c, "inputLayout")].p;
    fa_plan *p = fa_plan_of(c);
    memset(p, 0, sizeof *p);
    fa_axes(p, q, k, v, layout, iarg(c, "headNum", 1));
    p->dtype = q->dtype;
    char b1[24], sh[200], sh2[200];
    if (q->dtype != ACL_FLOAT && q->dtype != ACL_FLOAT16 && q->dtype != ACL_BF16)
        return fail(c, "The data type of query/key/value is [%s], should be fp16, bf16 or fp32.", op_dtype_name(q->dtype, b1));
    if (p->D <= 0 || p->N2 <= 0 || p->N1 % p->N2 != 0)
        return fail(c, "query has %lld heads and key/value %lld (head dim %lld): the query's must be a positive multiple",
                    (long long)p->N1, (long long)p->N2, (long long)p->D);
    p->G = p->N1 / p->N2;
    int64_t nq = p->layout <= FA_SBH ? q->shape[2] : p->layout == FA_TND ? q->shape[1] * q->shape[2]
                                                                         : q->shape[p->layout == FA_BNSD ? 1 : 2];
    if ((p->layout <= FA_SBH && nq != p->N1 * p->D) || (p->layout > FA_SBH && p->layout != FA_TND && nq != p->N1) ||
        (p->layout == FA_TND && q->shape[1] != p->N1))
        return fail(c, "headNum %lld does not match query %s", (long long)p->N1, tv_shape_text(q->shape, q->ndim, sh, sizeof sh));
    int kv_ok = k->ndim == v->ndim;
    for (int64_t d = 0; kv_ok && d + 1 < k->ndim; d++) kv_ok = k->shape[d] == v->shape[d];
    if (p->layout <= FA_SBH) kv_ok = kv_ok && k->shape[2] == p->N2 * p->D && v->shape[2] == p->N2 * p->Dv;
    int bdim = p->layout == FA_SBH ? 1 : 0;
    if (p->layout != FA_TND) kv_ok = kv_ok && q->shape[bdim] == k->shape[bdim];
    if (!kv_ok) {
        char sh3[200];
        return fail(c, "query %s, key %s and value %s do not describe one attention in layout %s",
                    tv_shape_text(q->shape, q->ndim, sh, sizeof sh), tv_shape_text(k->shape, k->ndim, sh2, sizeof sh2),
                    tv_shape_text(v->shape, v->ndim, sh3, sizeof sh3), layout);
    }
    aclnnStatus rc;
    if (p->layout == FA_TND && (rc = tnd_batches(c, p, q, k))) return rc;
    if ((rc = sparse_mask(c, p, tens(c, "attenMaskOptional", NULL)))) return rc;
    const char *pse_name = tname(c, "realShiftOptional", "pseShiftOptional");
    const pyaclnn_stub_tensor *pse = tens(c, pse_name, NULL);
    if ((rc = pse_plan(c, p, pse, pse_name))) return rc;
    if ((rc = drop_plan(c, p, tens(c, "dropMaskOptional", NULL)))) return rc;
    p->scale = (float)c->arg[pidx(c, "scaleValue")].d;
    int si = pidx(c, grad ? "softmaxInLayout" : "softmaxOutLayout");
    const char *sl = si >= 0 ? c->arg[si].p : NULL;
    p->tnd_softmax = p->layout == FA_TND && sl != NULL && strncmp(sl, "same_as_input", 14) == 0;
    p->invalid_rows = iarg(c, "innerPrecise", 0) == 2;
    for (int64_t b = 0; b < p->B && p->sparse == 3; b++) p->invalid_rows |= fa_s1(p, b) > fa_s2(p, b);
    int64_t rows = p->layout == FA_TND ? q->shape[0] * p->N1 : p->B * p->N1 * p->S1;
    int64_t oshape[PYACLNN_STUB_MAX_DIMS];
    q_shape(p, q, p->Dv, oshape);
    if (!grad) {
        const pyaclnn_stub_tensor *out = tens(c, "attentionOutOut", NULL);
        if ((rc = want_dtype(c, "attentionOutOut", out, q->dtype)) || (rc = want_shape(c, "attentionOutOut", out, oshape, q->ndim)) ||
            (rc = stat_check(c, "softmaxMaxOut", tens(c, "softmaxMaxOut", NULL), rows)) ||
            (rc = stat_check(c, "softmaxSumOut", tens(c, "softmaxSumOut", NULL), rows)))
            return rc;
    } else {
        static const char *const ins[] = {"dy", "attentionInOptional"};
        for (int x = 0; x < 2; x++) {
            const pyaclnn_stub_tensor *t = tens(c, ins[x], NULL);
            if ((rc = want_dtype(c, ins[x], t, q->dtype)) || (rc = want_shape(c, ins[x], t, oshape, q->ndim))) return rc;
        }
        const pyaclnn_stub_tensor *o[3] = {tens(c, "dqOut", NULL), tens(c, "dkOut", NULL), tens(c, "dvOut", NULL)};
        const pyaclnn_stub_tensor *like[3] = {q, k, v};
        static const char *const onames[] = {"dqOut", "dkOut", "dvOut"};
        for (int x = 0; x < 3; x++)
            if ((rc = want_dtype(c, onames[x], o[x], q->dtype)) || (rc = want_shape(c, onames[x], o[x], like[x]->shape, like[x]->ndim)))
                return rc;
        if ((rc = stat_check(c, "softmaxMaxOptional", tens(c, "softmaxMaxOptional", NULL), rows)) ||
            (rc = stat_check(c, "softmaxSumOptional", tens(c, "softmaxSumOptional", NULL), rows)))
            return rc;
        const pyaclnn_stub_tensor *dpse = tens(c, "dpseOut", NULL);
        if (p->pse_kind == FA_PSE_TENSOR && dpse != NULL && pyaclnn_stub_numel(dpse) > 0 &&
            ((rc = want_dtype(c, "dpseOut", dpse, pse->dtype)) || (rc = want_shape(c, "dpseOut", dpse, pse->shape, pse->ndim))))
            return rc;
    }
    if (p->B * p->N1 == 0 || rows == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}
