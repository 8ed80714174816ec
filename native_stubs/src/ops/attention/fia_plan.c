/*
 * fia_plan FORM: phase 1 of FusedInferAttentionScore V2 - V5 (FORM 0), IncreFlashAttentionV4 (1) and
 * PromptFlashAttentionV3 (2) after the generated layer's null and dtype checks (fused_infer_attention.toml). The
 * vendor's tiling checks (IFA's for Q_S = 1, PFA's otherwise; 561002) in the order the tiling meets them -- the
 * features the emulator does not take, layout and heads, key/value, the sequence lengths, the paged cache, the
 * sparse mode and its mask, innerPrecise, the outputs -- and the plan of FlashAttentionScore's forward kernel
 * (fa.h) for it. Parameters are found by name (each form's names below): every version shares the step.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "opbase/checks.h"
#include "ops/attention/fa.h"
#include "ops/attention/fia_names.h"
#include "ops_decls.h"

#define tiling_fail(c, ...) op_failf((c)->api, ACLNN_ERR_INNER_TILING_ERROR, __VA_ARGS__)
#define FIA_MAX_GROUP 64   /* numHeads / numKeyValueHeads */
#define FIA_MAX_BLOCK 512  /* blockSize */

static int pidx(op_call *c, const char *name) { return op_param_index(c->def, name); }

static const pyaclnn_stub_tensor *tens(op_call *c, const char *name) {
    int i = pidx(c, name);
    return i >= 0 && c->t[i].present ? &c->t[i] : NULL;
}

static int64_t iarg(op_call *c, const char *name) {
    int i = pidx(c, name);
    return i >= 0 ? c->arg[i].i : 0;
}

static const int64_t *ints(op_call *c, const char *name, uint64_t *n) {
    int i = pidx(c, name);
    *n = i >= 0 ? c->ints[i].n : 0;
    return i >= 0 ? c->ints[i].v : NULL;
}

/* The inputs the emulator does not take (any present, non-empty one: 161002). */
static aclnnStatus unsupported(op_call *c) {
    static const char *const names[] = {
        "pseShift", "dequantScale1", "quantScale1", "dequantScale2", "kvPaddingSize",
        "deqScale1", "deqScale2", "pseShiftOptional", "deqScale1Optional", "quantScale1Optional", "deqScale2Optional",
        "queryPaddingSizeOptional", "kvPaddingSizeOptional",
        "keySharedPrefixOptional", "valueSharedPrefixOptional", "queryRopeOptional", "keyRopeOptional",
        "keyRopeAntiquantScaleOptional", "dequantScaleQueryOptional", "learnableSinkOptional", "qStartIdxOptional",
        "kvStartIdxOptional"};
    for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
        const pyaclnn_stub_tensor *t = tens(c, names[k]);
        if (t != NULL && pyaclnn_stub_numel(t) > 0) return op_invalidf(c->api, "%s is not supported by the emulator", names[k]);
    }
    uint64_t n;
    ints(c, "actualSharedPrefixLenOptional", &n);
    if (n > 0) return op_invalidf(c->api, "actualSharedPrefixLenOptional is not supported by the emulator");
    return ACLNN_SUCCESS;
}

/* The query's layout and axes (B, N1, S1, D; TND: B from actualSeqLengths later). */
static aclnnStatus query_axes(op_call *c, fa_plan *p, const pyaclnn_stub_tensor *q, const char *layout, int64_t heads) {
    char sh[200];
    /* query layout, output layout (-1: the query's), rank; the "_"-joined forms name the output's layout second */
    static const struct { const char *name; int id, out, ndim; } L[] = {
        {"BSH", FA_BSH, -1, 3}, {"BSND", FA_BSND, -1, 4}, {"BNSD", FA_BNSD, -1, 4}, {"TND", FA_TND, -1, 3},
        {"NSD", FA_NSD, -1, 3}, {"BNSD_BSND", FA_BNSD, FA_BSND, 4}, {"BSH_BNSD", FA_BSH, FA_BNSD, 3},
        {"BSND_BNSD", FA_BSND, FA_BNSD, 4}};
    int found = -1;
    for (int k = 0; k < (int)(sizeof L / sizeof *L); k++)
        if (strcmp(layout, L[k].name) == 0) found = k;
    if (found < 0) {
        if (strchr(layout, '_') != NULL || strcmp(layout, "NTD") == 0)
            return op_invalidf(c->api, "inputLayout %s is not supported by the emulator (BSH, BSND, BNSD, TND, NSD, "
                               "BNSD_BSND, BSH_BNSD, BSND_BNSD)", layout);
        return tiling_fail(c, "Input layout %s is invalid, it should be BSH, BSND, BNSD, BNSD_BSND or TND.", layout);
    }
    if (q->ndim != L[found].ndim)
        return tiling_fail(c, "query's dim num %lld should be %d when inputLayout is %s", (long long)q->ndim,
                           L[found].ndim, layout);
    p->layout = L[found].id;
    p->out_layout = L[found].out + 1;
    const int64_t *s = q->shape;
    if (heads <= 0) return tiling_fail(c, "numHeads %lld should be greater than 0", (long long)heads);
    p->N1 = heads;
    switch (p->layout) {
    case FA_BSH:
        if (s[2] % heads != 0)
            return tiling_fail(c, "query's H %lld should be a multiple of numHeads %lld", (long long)s[2], (long long)heads);
        p->B = s[0], p->S1 = s[1], p->D = s[2] / heads;
        break;
    case FA_BSND: p->B = s[0], p->S1 = s[1], p->D = s[3]; break;
    case FA_BNSD: p->B = s[0], p->S1 = s[2], p->D = s[3]; break;
    case FA_NSD: p->B = 1, p->S1 = s[1], p->D = s[2]; break;
    default: p->D = s[2]; break;
    }
    int64_t qn = p->layout == FA_BSND ? s[2] : p->layout == FA_BNSD ? s[1] : p->layout == FA_TND ? s[1]
               : p->layout == FA_NSD ? s[0] : heads;
    if (qn != heads)
        return tiling_fail(c, "numHeads %lld should be equal to query's N %lld (query %s)", (long long)heads, (long long)qn,
                           tv_shape_text(s, q->ndim, sh, sizeof sh));
    return ACLNN_SUCCESS;
}

/* Key/value (one tensor each): the layout's tensor, or the paged cache. */
static aclnnStatus kv_axes(op_call *c, fa_plan *p, const pyaclnn_stub_tensor *k, const pyaclnn_stub_tensor *v,
                           const pyaclnn_stub_tensor *bt, int64_t kv_heads) {
    char a[200], b[200];
    if (k->ndim != v->ndim)
        return tiling_fail(c, "key's dim num %lld and value's %lld should be the same", (long long)k->ndim, (long long)v->ndim);
    for (int64_t d = 0; d + 1 < k->ndim; d++)
        if (k->shape[d] != v->shape[d])
            return tiling_fail(c, "key %s and value %s should have the same shape but for the last dim",
                               tv_shape_text(k->shape, k->ndim, a, sizeof a), tv_shape_text(v->shape, v->ndim, b, sizeof b));
    p->N2 = kv_heads;
    if (bt != NULL && p->layout == FA_NSD)
        return op_invalidf(c->api, "the paged kv cache with inputLayout NSD is not supported by the emulator");
    if (bt != NULL) {   /* PagedAttention: BnBsH [blockNum, blockSize, H] or BnNBsD [blockNum, N2, blockSize, D] */
        if (k->ndim == 5) return op_invalidf(c->api, "the 5-dimensional (NZ) kv cache is not supported by the emulator");
        if (k->ndim != 3 && k->ndim != 4)
            return tiling_fail(c, "When Page Attention is enabled, key's dim num %lld should be 3 or 4", (long long)k->ndim);
        if (k->ndim == 4 && (p->layout == FA_BSH || p->layout == FA_BSND))
            return tiling_fail(c, "When Page Attention is enabled and inputLayout is BSH or BSND, the kv cache should be "
                               "[blockNum, blockSize, H], got key %s", tv_shape_text(k->shape, k->ndim, a, sizeof a));
        p->paged = 1;
        p->paged_bnbsd = k->ndim == 4;
        p->block_num = k->shape[0];
        int64_t bs = k->shape[p->paged_bnbsd ? 2 : 1];
        if (p->paged_bnbsd) {
            if (k->shape[1] != kv_heads)
                return tiling_fail(c, "key's N %lld should be equal to numKeyValueHeads %lld", (long long)k->shape[1],
                                   (long long)kv_heads);
            p->D = k->shape[3] == p->D ? p->D : -k->shape[3];
            p->Dv = v->shape[3];
        } else {
            if (k->shape[2] != kv_heads * p->D)
                return tiling_fail(c, "key's H %lld should be numKeyValueHeads %lld * D %lld", (long long)k->shape[2],
                                   (long long)kv_heads, (long long)p->D);
            if (v->shape[2] % kv_heads != 0)
                return tiling_fail(c, "value's H %lld should be a multiple of numKeyValueHeads %lld",
                                   (long long)v->shape[2], (long long)kv_heads);
            p->Dv = v->shape[2] / kv_heads;
        }
        if (p->D < 0) return tiling_fail(c, "key's D %lld should be equal to query's D", (long long)-p->D);
        if (bs != p->block_size)
            return tiling_fail(c, "blockSize %lld should be equal to the kv cache's block size %lld",
                               (long long)p->block_size, (long long)bs);
        if (bt->dtype != ACL_INT32) {
            char d[24];
            return tiling_fail(c, "blockTables dtype %s invalid, should be int32", op_dtype_name(bt->dtype, d));
        }
        if (bt->ndim != 2) return tiling_fail(c, "blockTables dim num %lld, invalid, should be 2", (long long)bt->ndim);
        p->S2 = bt->shape[1] * p->block_size;
        return ACLNN_SUCCESS;
    }
    int64_t want = p->layout == FA_BSH || p->layout == FA_TND || p->layout == FA_NSD ? 3 : 4;
    if (k->ndim != want)
        return tiling_fail(c, "key's dim num %lld should be %lld, the same as query's", (long long)k->ndim, (long long)want);
    int64_t kn, dk;
    switch (p->layout) {
    case FA_BSH:
        if (k->shape[2] != kv_heads * p->D || v->shape[2] % kv_heads != 0)
            return tiling_fail(c, "key's H %lld and value's H %lld should be numKeyValueHeads %lld * D", (long long)k->shape[2],
                               (long long)v->shape[2], (long long)kv_heads);
        kn = kv_heads, dk = p->D, p->Dv = v->shape[2] / kv_heads, p->S2 = k->shape[1];
        break;
    case FA_BSND: kn = k->shape[2], dk = k->shape[3], p->Dv = v->shape[3], p->S2 = k->shape[1]; break;
    case FA_BNSD: kn = k->shape[1], dk = k->shape[3], p->Dv = v->shape[3], p->S2 = k->shape[2]; break;
    case FA_NSD: kn = k->shape[0], dk = k->shape[2], p->Dv = v->shape[2], p->S2 = k->shape[1]; break;
    default: kn = k->shape[1], dk = k->shape[2], p->Dv = v->shape[2]; break;
    }
    if (kn != kv_heads)
        return tiling_fail(c, "key's N %lld should be equal to numKeyValueHeads %lld", (long long)kn, (long long)kv_heads);
    if (dk != p->D) return tiling_fail(c, "key's D %lld should be equal to query's D %lld", (long long)dk, (long long)p->D);
    if (p->layout != FA_TND && p->layout != FA_NSD && k->shape[0] != p->B)
        return tiling_fail(c, "key's B %lld should be equal to query's B %lld (the tensorlist form is not supported by "
                           "the emulator)", (long long)k->shape[0], (long long)p->B);
    return ACLNN_SUCCESS;
}

/* Per-batch lengths into cu (cumulative): length 1 for every batch or the first B of >= B values, each in
 * [0, max]; absent: max for every batch. `cumulative`: the values are ends (TND). */
static aclnnStatus lengths(op_call *c, fa_plan *p, const char *name, int64_t *cu, int64_t max, int cumulative,
                           int required) {
    uint64_t n;
    const int64_t *v = ints(c, name, &n);
    if (n == 0) {
        if (required) return tiling_fail(c, "%s cannot be nullptr in this scenario", name);
        for (int64_t b = 0; b <= p->B; b++) cu[b] = b * max;
        return ACLNN_SUCCESS;
    }
    if (n != 1 && n < (uint64_t)p->B)
        return tiling_fail(c, "%s's length %llu should be 1 or not less than batch %lld", name, (unsigned long long)n,
                           (long long)p->B);
    cu[0] = 0;
    for (int64_t b = 0; b < p->B; b++) {
        int64_t x = v[n == 1 ? 0 : b];
        int64_t len = cumulative ? x - (b ? v[b - 1] : 0) : x;
        int64_t lim = cumulative ? max - cu[b] : max;
        if (len < 0 || len > lim)
            return tiling_fail(c, "%s[%lld] = %lld is invalid, it should be in [0, %lld]", name, (long long)b, (long long)x,
                               (long long)(cumulative ? max : lim));
        cu[b + 1] = cu[b] + len;
    }
    return ACLNN_SUCCESS;
}

/* The sparse mode and its mask. Q_S = 1 (decode) ignores the sparse mode and preTokens / nextTokens. */
static aclnnStatus mask_plan(op_call *c, fa_plan *p, const pyaclnn_stub_tensor *m, int decode) {
    int64_t mode = iarg(c, "sparseMode");
    p->pre = iarg(c, "preTokens");
    p->next = iarg(c, "nextTokens");
    char sh[200], d[24];
    if (decode) mode = 0, p->pre = p->next = INT64_MAX;
    if (mode < 0 || mode > 4) return tiling_fail(c, "sparse_mode = %lld is not supported (0, 1, 2, 3 or 4).", (long long)mode);
    p->sparse = (int)mode;
    if (m == NULL) {
        if (mode != 0) return tiling_fail(c, "attenMask should not be null when sparse_mode is %lld.", (long long)mode);
        p->mask_kind = FA_MASK_NONE;
        return ACLNN_SUCCESS;
    }
    if (m->dtype != ACL_BOOL && m->dtype != ACL_INT8 && m->dtype != ACL_UINT8)
        return tiling_fail(c, "attenMask dtype %s should be bool, int8 or uint8", op_dtype_name(m->dtype, d));
    const int64_t *s = m->shape, *st = m->strides;
    int64_t nd = m->ndim;
    if (mode >= 2) {   /* the compressed 2048 x 2048 mask: (2048, 2048), (1, 2048, 2048) or (1, 1, 2048, 2048) */
        int ok = nd >= 2 && nd <= 4 && s[nd - 2] == 2048 && s[nd - 1] == 2048;
        for (int64_t k = 0; ok && k + 2 < nd; k++) ok = s[k] == 1;
        if (!ok)
            return tiling_fail(c, "attenMask shape %s is invalid, it should be (2048, 2048), (1, 2048, 2048) or "
                               "(1, 1, 2048, 2048) when sparse_mode is %lld.", tv_shape_text(s, nd, sh, sizeof sh),
                               (long long)mode);
        p->mask_kind = FA_MASK_COMPRESSED;
        return ACLNN_SUCCESS;
    }
    if (mode == 1) p->pre = p->next = INT64_MAX;
    /* Q_S > 1: (Q_S, KV_S), (B, Q_S, KV_S), (1, Q_S, KV_S), (B, 1, Q_S, KV_S), (1, 1, Q_S, KV_S);
     * Q_S = 1: (B, KV_S), (B, 1, KV_S), (B, 1, 1, KV_S); the last dims may be padded longer. */
    int ok = nd >= 2 && nd <= 4 && s[nd - 1] >= p->S2;
    int64_t bdim = decode ? 0 : nd >= 3 ? 0 : -1;
    if (ok && !decode) ok = s[nd - 2] >= p->S1 && (nd < 4 || s[1] == 1);
    if (ok && decode) ok = (nd < 3 || s[1] == 1) && (nd < 4 || s[2] == 1);
    if (ok && bdim >= 0) ok = s[0] == p->B || s[0] == 1;
    if (!ok)
        return tiling_fail(c, "attenMask shape %s is invalid for B %lld, Q_S %lld and KV_S %lld; it should be %s",
                           tv_shape_text(s, nd, sh, sizeof sh), (long long)p->B, (long long)p->S1, (long long)p->S2,
                           decode ? "(B, KV_S), (B, 1, KV_S) or (B, 1, 1, KV_S)"
                                  : "(Q_S, KV_S), (B, Q_S, KV_S), (1, Q_S, KV_S), (B, 1, Q_S, KV_S) or (1, 1, Q_S, KV_S)");
    p->mask_kind = FA_MASK_STRIDED;
    p->mask_st[0] = bdim >= 0 && s[0] != 1 ? st[0] : 0;
    p->mask_st[1] = 0;
    p->mask_st[2] = decode ? 0 : st[nd - 2];
    p->mask_st[3] = st[nd - 1];
    return ACLNN_SUCCESS;
}

/* The output (query's shape with value's D) and softmaxLse ([B, N1, Q_S, 1], TND [T, N1, 1], fp32). */
static aclnnStatus outputs(op_call *c, fa_plan *p, const pyaclnn_stub_tensor *q) {
    const pyaclnn_stub_tensor *out = tens(c, "attentionOut"), *lse = tens(c, "softmaxLse");
    char a[200], b[200], d1[24], d2[24];
    if (out->dtype != (p->post_quant ? p->post_quant_dtype : q->dtype))
        return tiling_fail(c, "attentionOut dtype %s should be the same as query's %s", op_dtype_name(out->dtype, d1),
                           op_dtype_name(q->dtype, d2));
    int64_t want[4], wnd = q->ndim;
    memcpy(want, q->shape, sizeof(int64_t) * (size_t)q->ndim);
    want[q->ndim - 1] = p->layout == FA_BSH ? p->N1 * p->Dv : p->Dv;
    if (p->out_layout == FA_BSND + 1)   /* BNSD_BSND */
        wnd = 4, want[0] = p->B, want[1] = p->S1, want[2] = p->N1, want[3] = p->Dv;
    else if (p->out_layout == FA_BNSD + 1)   /* BSH_BNSD, BSND_BNSD */
        wnd = 4, want[0] = p->B, want[1] = p->N1, want[2] = p->S1, want[3] = p->Dv;
    if (out->ndim != wnd || memcmp(out->shape, want, sizeof(int64_t) * (size_t)wnd) != 0)
        return tiling_fail(c, "attentionOut shape %s should be %s", tv_shape_text(out->shape, out->ndim, a, sizeof a),
                           tv_shape_text(want, wnd, b, sizeof b));
    p->lse = FA_LSE_NONE;
    int pi = pidx(c, "softmaxLseFlag");
    if (pi < 0 || !c->arg[pi].i) return ACLNN_SUCCESS;
    int64_t ls[4] = {p->B, p->N1, p->S1, 1}, lnd = 4;
    if (p->layout == FA_TND) ls[0] = q->shape[0], ls[2] = 1, lnd = 3;
    if (lse == NULL) return tiling_fail(c, "softmaxLse should not be null when softmaxLseFlag is true");
    if (lse->dtype != ACL_FLOAT)
        return tiling_fail(c, "softmaxLse dtype %s should be float32", op_dtype_name(lse->dtype, d1));
    if (lse->ndim != lnd || memcmp(lse->shape, ls, sizeof(int64_t) * (size_t)lnd) != 0)
        return tiling_fail(c, "softmaxLse shape %s should be %s", tv_shape_text(lse->shape, lse->ndim, a, sizeof a),
                           tv_shape_text(ls, lnd, b, sizeof b));
    p->lse = FA_LSE;
    return ACLNN_SUCCESS;
}

/* The executor's inputs in the forward kernel's order: query, key[0], value[0], pse, dropout (none), mask, and
 * the block table. */
static aclnnStatus exec_inputs(op_call *c, int form) {
    const aclTensor **in = op_scratch(c, sizeof *in * FA_N_IN);
    pyaclnn_stub_tensor *snaps = op_scratch(c, sizeof *snaps * FA_N_IN);
    if (in == NULL || snaps == NULL) {
        pyaclnn_stub_report(ACLNN_ERR_INNER_CREATE_EXECUTOR, c->api, "out of host memory");
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    }
    /* the antiquant slots: the shared antiquantScale / Offset for key and value, or the split ones */
    const fa_plan *p = (const fa_plan *)c->params;
    int split = p->aq_split;
    const char *names[FA_N_IN] = {"query", "key", "value", NULL, NULL, NAMES[P_MASK][form], NAMES[P_TABLE][form],
                                  split ? "keyAntiquantScaleOptional" : NAMES[P_AQS][form],
                                  split ? "keyAntiquantOffsetOptional" : NAMES[P_AQO][form],
                                  split ? "valueAntiquantScaleOptional" : NAMES[P_AQS][form],
                                  split ? "valueAntiquantOffsetOptional" : NAMES[P_AQO][form],
                                  NAMES[P_QS2][form], NAMES[P_QO2][form]};
    for (int k = 0; k < FA_N_IN; k++) {
        int i = names[k] ? pidx(c, names[k]) : -1;
        if (i < 0) continue;   /* (zeroed: an absent tensor) */
        if (c->def->params[i].kind == OP_K_TENSOR_LIST) {
            snaps[k] = c->lists[i].t[0];
            in[k] = c->lists[i].v[0];
        } else if (c->t[i].present) {
            snaps[k] = c->t[i];
            in[k] = c->arg[i].p;
        }
    }
    c->in_handles = in;
    c->in_snaps = snaps;
    c->n_in = FA_N_IN;
    return ACLNN_SUCCESS;
}

aclnnStatus opc_fia_plan(op_call *c, const op_step *s) {
    int form = (int)s->n;
    const pyaclnn_stub_tensor *q = tens(c, "query"), *k, *v;
    int ki = pidx(c, "key"), vi = pidx(c, "value");
    if (form == FORM_PFA) {   /* PFA: key and value are tensors */
        k = &c->t[ki], v = &c->t[vi];
    } else {
        if (c->lists[ki].n == 0 || c->lists[vi].n == 0) return tiling_fail(c, "key and value should hold a tensor each");
        if (c->lists[ki].n > 1 || c->lists[vi].n > 1)
            return op_invalidf(c->api, "key / value lists of more than one tensor (the tensorlist form) are not "
                               "supported by the emulator");
        k = &c->lists[ki].t[0], v = &c->lists[vi].t[0];
    }
    char d1[24], d2[24];
    /* INT8 key/value under a FLOAT16 / BFLOAT16 query in the decode path (checked below): Atlas A2's MSD kernel;
     * the Ascend 950 dequantises INT8 or INT4 (as INT32 words of eight) ahead of its float kernel */
    int a950 = pyaclnn_stub_soc_family() == PYACLNN_SOC_950;
    int antiquant = form != FORM_PFA && q->dtype != ACL_INT8 && k->dtype == v->dtype &&
                    (k->dtype == ACL_INT8 || k->dtype == ACL_INT32);
    if (!antiquant && (q->dtype == ACL_INT8 || k->dtype != q->dtype || v->dtype != q->dtype))
        return op_invalidf(c->api, "query %s with key/value %s: this quantised form is not supported by the emulator "
                           "(FLOAT16 or BFLOAT16 throughout, or INT8 key/value, or INT4 in INT32 words of eight, in the "
                           "decode path)", op_dtype_name(q->dtype, d1), op_dtype_name(k->dtype, d2));
    aclnnStatus rc = unsupported(c);
    if (rc) return rc;
    if (iarg(c, "pseType") != 0 && pidx(c, "pseType") >= 0)
        return op_invalidf(c->api, "pseType %lld is not supported by the emulator", (long long)iarg(c, "pseType"));
    fa_plan *p = op_params(c, sizeof(fa_plan));
    p->dtype = q->dtype;
    const char *layout = c->arg[pidx(c, "inputLayout")].p;
    if (layout == NULL) return tiling_fail(c, "attr layOut is nullptr");
    int64_t heads = iarg(c, "numHeads"), kv_heads = iarg(c, "numKeyValueHeads");
    if ((rc = query_axes(c, p, q, layout, heads))) return rc;
    if (antiquant && (p->layout == FA_TND || p->S1 != 1))
        return op_invalidf(c->api, "INT8 key/value with a query of S %lld (the prefill path's antiquant) is not "
                           "supported by the emulator", (long long)p->S1);
    if (form == FORM_IFA && (p->layout == FA_TND || p->S1 != 1))
        return tiling_fail(c, "IncreFlashAttention takes a query of S = 1 in layout BSH, BSND or BNSD, got %s with S %lld",
                           layout, (long long)p->S1);
    if (kv_heads < 0) return tiling_fail(c, "numKeyValueHeads %lld should not be negative", (long long)kv_heads);
    if (kv_heads == 0) kv_heads = heads;
    if (heads % kv_heads != 0)
        return tiling_fail(c, "numHeads %lld should be a multiple of numKeyValueHeads %lld", (long long)heads,
                           (long long)kv_heads);
    if (heads / kv_heads > FIA_MAX_GROUP)
        return tiling_fail(c, "the query's heads num divided by the key/value's heads num = %lld, cannot be greater "
                           "than 64", (long long)(heads / kv_heads));
    p->G = heads / kv_heads;
    const pyaclnn_stub_tensor *bt = form == FORM_PFA ? NULL : tens(c, NAMES[P_TABLE][form]);
    if (bt != NULL) {
        p->block_size = iarg(c, "blockSize");
        if (p->block_size == 0) return tiling_fail(c, "When Page Attention is enabled, input attribute blocksize can not be 0.");
        if (p->block_size < 0 || p->block_size > FIA_MAX_BLOCK)
            return tiling_fail(c, "When Page Attention is enabled, input attribute blocksize %lld can not be larger than %d.",
                               (long long)p->block_size, FIA_MAX_BLOCK);
        if (p->block_size % 16 != 0)
            return tiling_fail(c, "When Page Attention is enabled, if kv cache dtype is float16/bfloat16, input attr "
                               "blocksize should be 16 aligned");
    }
    pyaclnn_stub_tensor k8 = *k, v8 = *v;   /* INT32 words of eight INT4: the axes count the INT4 elements */
    if (antiquant && k->dtype == ACL_INT32) {
        k8.shape[k8.ndim - 1] *= 8, v8.shape[v8.ndim - 1] *= 8;
        p->kv_packed = 1;
    }
    if ((rc = kv_axes(c, p, &k8, &v8, bt, kv_heads))) return rc;
    if (p->kv_packed && !a950) {   /* IFA's QKVPreProcess and InputAttrsPreProcess for an INT4 key/value */
        if (p->D % 64 != 0)
            return tiling_fail(c, "Number of heads must be a multiple of 64, current dim of D is %lld.", (long long)p->D);
        if (p->paged && p->layout != FA_BSH && p->layout != FA_BSND)
            return tiling_fail(c, "IFA don't support PageAttenion if the KV Inputtype is INT4 or INT32 and inputlayout "
                               "isn't BSH_BSND currently.");
    }
    if (p->D < p->Dv) return tiling_fail(c, "value's D %lld should not be greater than key's D %lld", (long long)p->Dv, (long long)p->D);
    /* Batches and lengths. TND: actualSeqLengths are cumulative ends (their count is B); so are actualSeqLengthsKv
     * unless the cache is paged (then per batch). Padded layouts: per batch, length 1 broadcast. */
    uint64_t nq, nk;
    const char *qlen = NAMES[P_QLEN][form], *kvlen = NAMES[P_KVLEN][form];
    ints(c, qlen, &nq);
    ints(c, kvlen, &nk);
    if (p->layout == FA_TND) {
        if (nq == 0 || nk == 0)
            return tiling_fail(c, "actualSeqLengths and actualSeqLengthsKv are required when inputLayout is TND");
        p->B = (int64_t)nq;
    }
    int need_lens = p->layout == FA_TND || nq > 0 || nk > 0 || p->paged;
    if (need_lens && p->B > FA_MAX_BATCH)
        return op_invalidf(c->api, "the emulator takes at most %d batches with sequence lengths or a paged cache, got %lld",
                           FA_MAX_BATCH, (long long)p->B);
    if (p->paged && bt->shape[0] != p->B)
        return tiling_fail(c, "blockTable's dim 0 %lld should be equal to batch %lld", (long long)bt->shape[0], (long long)p->B);
    if (need_lens) {
        p->lens = 1;
        int tnd = p->layout == FA_TND;
        if ((rc = lengths(c, p, qlen, p->cu_q, tnd ? q->shape[0] : p->S1, tnd, 0)) ||
            (rc = lengths(c, p, kvlen, p->cu_kv, tnd && !p->paged ? k->shape[0] : p->S2, tnd && !p->paged, p->paged)))
            return rc;
        if (tnd) {   /* S1 / S2: the longest batch */
            p->S1 = p->S2 = 0;
            for (int64_t b = 0; b < p->B; b++) {
                if (fa_s1(p, b) > p->S1) p->S1 = fa_s1(p, b);
                if (fa_s2(p, b) > p->S2) p->S2 = fa_s2(p, b);
            }
            p->tnd_softmax = 1;   /* softmaxLse [T, N1, 1] */
        }
    }
    const pyaclnn_stub_tensor *out = tens(c, "attentionOut");
    if ((rc = fia_post_quant_plan(c, p, form, q->dtype, k->dtype, out->dtype, p->layout != FA_TND && p->S1 == 1,
                                  p->kv_packed)) ||
        (rc = fia_antiquant_plan(c, p, form, antiquant, q->dtype)))
        return rc;
    if (antiquant && a950) {
        p->antiquant = FA_AQ_DEQUANT;
        if (p->aq_per_token)
            return op_invalidf(c->api, "the per-token antiquant on the Ascend 950 is not supported by the emulator");
    }
    p->msd_iters = (iarg(c, "innerPrecise") & 1) == 0 ? 3 : 2;   /* IFA_HIGH_PRECISION (0): HIGH_PRECISION_ITER_NUM */
    if (p->kv_packed) p->msd_iters = 4;                             /* KVINT4_ITER_NUM */
    if (antiquant && p->Dv != p->D)
        return op_invalidf(c->api, "INT8 key/value with value's D %lld other than key's %lld is not supported by the "
                           "emulator", (long long)p->Dv, (long long)p->D);
    int decode = p->layout != FA_TND && p->S1 == 1;
    if ((rc = mask_plan(c, p, tens(c, NAMES[P_MASK][form]), decode))) return rc;
    int64_t inner = iarg(c, "innerPrecise");
    if (inner < 0 || inner > (form == FORM_IFA ? 1 : 3))
        return tiling_fail(c, "innerPrecise [%lld] should be 0, 1%s", (long long)inner, form == FORM_IFA ? "" : ", 2 or 3");
    p->invalid_rows = inner >= 2;
    for (int64_t b = 0; b < p->B && p->sparse == 3; b++) p->invalid_rows |= fa_s1(p, b) > fa_s2(p, b);
    p->scale = (float)c->arg[pidx(c, "scaleValue")].d;
    p->keep = p->div = 1.0f;
    if ((rc = outputs(c, p, q))) return rc;
    if (pyaclnn_stub_numel(q) == 0 || p->N1 == 0) c->nothing = 1;
    return exec_inputs(c, form);
}
