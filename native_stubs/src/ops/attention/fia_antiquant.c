/*
 * The antiquant parameters of an INT8 key/value in the decode path (fia_plan.c calls it after the sequence
 * lengths, where IFA's tiling runs ProcessAntiQuant): hicann/ops-transformer attention/incre_flash_attention/
 * op_host/incre_flash_attention_tiling.cpp ProcessAntiQuant, CheckKeyAndValueAntiquantScaleOffset,
 * CheckKeyAndValueAntiquantOffset, CheckKvAntiquant4SplitMode, ProcessAntiQuantMode, CheckKVAntiQuantMode,
 * CheckKVAntiQuantParaShapeLegal and incre_flash_attention_tiling_check.cpp CheckAntiQuantParam,
 * CheckKVAntiQuantPerChannel, CheckAntiquantOffsetType: their checks in their order and their messages (561002).
 * Taken: per-channel (antiquantMode / keyAntiquantMode 0, scale [2 or 1, N2, 1, D], [., 1, N2, D], [., N2, D] or
 * [., N2 * D]) and its per-tensor form ([2] or [1]); per-token (mode 1: fp32 [2 or 1, B, >= S2], split also
 * [B, >= S2]); the other modes (per-head, the parameters in the paged cache, key per-channel with value
 * per-token) are refused as not supported by the emulator (161002).
 */
#include <stdint.h>
#include <string.h>

#include "opbase/checks.h"
#include "ops/attention/fa.h"
#include "ops/attention/fia_names.h"
#include "ops_decls.h"

#define tiling_fail(c, ...) op_failf((c)->api, ACLNN_ERR_INNER_TILING_ERROR, __VA_ARGS__)

static const pyaclnn_stub_tensor *opt(op_call *c, const char *name) {
    int i = op_param_index(c->def, name);
    return i >= 0 && c->t[i].present && pyaclnn_stub_numel(&c->t[i]) > 0 ? &c->t[i] : NULL;   /* (empty: absent) */
}

static int64_t mode_of(op_call *c, const char *name) {
    int i = op_param_index(c->def, name);
    return i >= 0 ? c->arg[i].i : 0;
}

static int same_shape(const pyaclnn_stub_tensor *a, const pyaclnn_stub_tensor *b) {
    return a->ndim == b->ndim && memcmp(a->shape, b->shape, sizeof(int64_t) * (size_t)a->ndim) == 0;
}

static int shape_is(const pyaclnn_stub_tensor *t, const int64_t *want, int64_t nd) {
    return t->ndim == nd && memcmp(t->shape, want, sizeof(int64_t) * (size_t)nd) == 0;
}

/* CheckKVAntiQuantParaShapeLegal for the per-channel mode (num: 2 for the shared parameters, 1 when split). */
static aclnnStatus shape_legal(op_call *c, fa_plan *p, const pyaclnn_stub_tensor *t, int64_t num) {
    const int64_t *s = t->shape;
    int64_t N = p->N2, D = p->D;
    if (t->ndim == 1) {
        if (s[0] != num)
            return tiling_fail(c, "The shape of antiquant parameter[%lld] is not expected. Expect[%lld] When per_tensor "
                               "mode.", (long long)s[0], (long long)num);
        p->aq_per_tensor = 1;
        return ACLNN_SUCCESS;
    }
    if (t->ndim != 2 && t->ndim != 3 && t->ndim != 4)
        return tiling_fail(c, "The layout[%lld] does not match the dim of antiquant, When per_channel mode.",
                           (long long)t->ndim);
    const int64_t bnsd[] = {num, N, 1, D}, bsnd1[] = {num, 1, N, D}, bsnd2[] = {num, N, D}, bh[] = {num, N * D};
    if (shape_is(t, bnsd, 4) || shape_is(t, bsnd1, 4) || shape_is(t, bsnd2, 3) || shape_is(t, bh, 2))
        return ACLNN_SUCCESS;
    char got[200];
    tv_shape_text(s, t->ndim, got, sizeof got);
    return tiling_fail(c, "The shape of antiquant parameter%s is not expected. Expect [%lld, %lld, 1, %lld] or "
                       "[%lld, %lld, %lld] or [%lld, %lld] when per_channel mode.", got, (long long)num, (long long)N,
                       (long long)D, (long long)num, (long long)N, (long long)D, (long long)num, (long long)(N * D));
}

/* CheckKVAntiQuantPerToken: [num, B, >= S], or [B, >= S] when split. */
static aclnnStatus per_token_shape(op_call *c, fa_plan *p, const pyaclnn_stub_tensor *t, int64_t num, int split) {
    const int64_t *s = t->shape;
    if (t->ndim == 3) {
        if (s[0] != num)
            return tiling_fail(c, "The 1st dim of antiquant should be %lld instead of the current %lld", (long long)num,
                               (long long)s[0]);
        if (s[1] != p->B)
            return tiling_fail(c, "The 2nd dim of antiquant should be %lld instead of the current %lld", (long long)p->B,
                               (long long)s[1]);
        if (s[2] < p->S2)
            return tiling_fail(c, "The 3rd dim of antiquant should be greater than or equal to %lld instead of the "
                               "current %lld", (long long)p->S2, (long long)s[2]);
    } else if (t->ndim == 2 && split) {
        if (s[0] != p->B)
            return tiling_fail(c, "The 1st dim of antiquant should be %lld instead of the current %lld", (long long)p->B,
                               (long long)s[0]);
        if (s[1] < p->S2)
            return tiling_fail(c, "The 2nd dim of antiquant should be greater than or equal to %lld instead of the "
                               "current %lld", (long long)p->S2, (long long)s[1]);
    } else {
        return tiling_fail(c, "The dim of antiquant is illegal, When per_token mode.");
    }
    p->aq_seq = s[t->ndim - 1];
    return ACLNN_SUCCESS;
}

/* CheckAntiQuantParam (mode already mapped as the caller's path does). */
static aclnnStatus param_checks(op_call *c, fa_plan *p, int64_t mode, const pyaclnn_stub_tensor *sc,
                                const pyaclnn_stub_tensor *off, aclDataType qtype, int64_t num, int split) {
    if (mode != 0 && mode != 1 && mode != 2)
        return tiling_fail(c, "antiquantMode value:%lld is invalid, it should be 0 or 1 or 2", (long long)mode);
    if (mode == 2)
        return op_invalidf(c->api, "antiquantMode 2 (per-head antiquant) is not supported by the emulator");
    if (sc == NULL) return tiling_fail(c, "KV antiquant is enabled, but the input antiquant scale is NULL");
    if (off != NULL && sc->ndim != off->ndim)
        return tiling_fail(c, "KV antiquant is enabled, but antiquant params have different layouts[scale: %lld, "
                           "offset: %lld].", (long long)sc->ndim, (long long)off->ndim);
    aclnnStatus rc;
    if (mode == 1) {   /* per-token */
        p->aq_per_token = 1;
        if ((rc = per_token_shape(c, p, sc, num, split)) || (off && (rc = per_token_shape(c, p, off, num, split))))
            return rc;
        if (sc->dtype != ACL_FLOAT)
            return tiling_fail(c, "per-token mode is enabled, datatype of antiquant scale should be float32 ");
        if (off != NULL && off->dtype != sc->dtype)
            return tiling_fail(c, "datatype of antiquant scale and antiquant offset should be the same");
        return ACLNN_SUCCESS;
    }
    if ((rc = shape_legal(c, p, sc, num))) return rc;
    if (off != NULL) {
        int per_tensor = p->aq_per_tensor;
        if ((rc = shape_legal(c, p, off, num))) return rc;
        if (per_tensor != p->aq_per_tensor)
            return op_invalidf(c->api, "a per-tensor antiquant scale with a per-channel offset (or the reverse) is not "
                               "supported by the emulator");
    }
    if (sc->dtype != qtype) return tiling_fail(c, "illegal datatype of antiquant scale, it should be same with input qtype");
    if (off != NULL && off->dtype != sc->dtype)
        return tiling_fail(c, "datatype of antiquant scale and antiquant offset should be the same");
    return ACLNN_SUCCESS;
}

aclnnStatus fia_antiquant_plan(op_call *c, fa_plan *p, int form, int antiquant, aclDataType qtype) {
    const pyaclnn_stub_tensor *as = opt(c, NAMES[P_AQS][form]), *ao = opt(c, NAMES[P_AQO][form]);
    const pyaclnn_stub_tensor *ks = opt(c, "keyAntiquantScaleOptional"), *ko = opt(c, "keyAntiquantOffsetOptional");
    const pyaclnn_stub_tensor *vs = opt(c, "valueAntiquantScaleOptional"), *vo = opt(c, "valueAntiquantOffsetOptional");
    if (!antiquant) {
        if (as || ao || ks || ko || vs || vo)
            return tiling_fail(c, "KV antiquant is unenabled, but antiquant antiquantScale/antiquantOffset exist");
        return ACLNN_SUCCESS;
    }
    /* CheckKeyAndValueAntiquantScaleOffset */
    if (ks && !vs) return tiling_fail(c, "the value's dequant scale is null, but the key's dequant scale exist");
    if (vs && !ks) return tiling_fail(c, "the key's dequant scale is null, but the value's dequant scale exist");
    if (ko && !vo) return tiling_fail(c, "value's dequant offset is null, but the key's dequant offset exist");
    if (vo && !ko) return tiling_fail(c, "the key's dequant offset is null, but the value's dequant offset exist");
    if (!ks && ko) return tiling_fail(c, "the key's dequant scale is null, but the key's dequant offset exist");
    int64_t kmode = mode_of(c, "keyAntiquantMode"), vmode = mode_of(c, "valueAntiquantMode");
    int channel_token = kmode == 0 && vmode == 1;
    /* CheckKeyAndValueAntiquantOffset */
    if (ko && vo && !channel_token) {
        if (ko->dtype != vo->dtype)
            return tiling_fail(c, "the description of the key's and the value's dequant offset should have the same data "
                               "type");
        if (!same_shape(ko, vo))
            return tiling_fail(c, "the tensor of the key's and the value's dequant offset should have the same shape");
    }
    int split = ks && vs;
    if (split && !channel_token && !same_shape(ks, vs))
        return tiling_fail(c, "The tensor of the key's and the value's dequant scale should have the same shape");
    aclnnStatus rc;
    if (split) {
        /* CheckKvAntiquant4SplitMode, ProcessAntiQuantMode, CheckKVAntiQuantMode */
        if (kmode != vmode && !channel_token)
            return tiling_fail(c, "the key's quant mode and the value's quant mode should be the same");
        if (channel_token)
            return op_invalidf(c->api, "keyAntiquantMode 0 with valueAntiquantMode 1 (per-channel key, per-token "
                               "value) is not supported by the emulator");
        if (kmode < 0 || kmode > 5)
            return tiling_fail(c, "antiquantMode value:%lld is invalid, it should be 0、1、2、3、4 or 5", (long long)kmode);
        if ((kmode == 4 || kmode == 5) && !p->paged)
            return tiling_fail(c, "the key/value's quant mode 4 and 5 use page attention to manage scale/offset, must be "
                               "used in page attention scene");
        if (kmode >= 2)
            return op_invalidf(c->api, "keyAntiquantMode %lld (per-head, or the parameters in the paged cache) is not "
                               "supported by the emulator", (long long)kmode);
        if ((rc = param_checks(c, p, kmode, ks, ko, qtype, 1, 1))) return rc;
        /* (the tiling checks the key's parameters; the value's must match them: checked above) */
        p->aq_base[0] = p->aq_base[1] = 0;
    } else {
        if ((rc = param_checks(c, p, mode_of(c, "antiquantMode"), as, ao, qtype, 2, 0))) return rc;
        int64_t half = pyaclnn_stub_numel(as) / 2;
        p->aq_base[0] = 0, p->aq_base[1] = half;
    }
    p->antiquant = FA_AQ_MSD;
    p->aq_split = split;
    p->aq_offset = split ? ko != NULL : ao != NULL;
    return ACLNN_SUCCESS;
}
