/*
 * Phase 1 of FlashAttentionScore and its gradient (flash_attention.toml): the vendor's op_api checks in
 * its order (hicann/ops-transformer attention/flash_attention_score/op_api/aclnn_flash_attention_score.cpp:
 * CheckFaParam, InputDtypeCheck, AnalysisInput; attention/flash_attention_score_grad/op_api/
 * aclnn_flash_attention_score_grad.cpp: the null checks, InputDtypeCheck, InputOutputShapeCheck,
 * InvalidTensorDimCheck, GetInputShapeInfo), with its codes and messages, then fa_plan: what the vendor's
 * infershape and tiling refuse (and what the emulator does not take), with its own messages, and the plan.
 * Once an op_api finds every output empty it succeeds at once: the later steps then do nothing.
 */
#include <stdio.h>
#include <string.h>

#include "opbase/checks.h"
#include "ops/attention/fa.h"
#include "ops_decls.h"

#define FAG "FlashAttentionScoreGrad"

fa_plan *fa_plan_of(op_call *c) { return c->params_size ? (fa_plan *)c->params : op_params(c, sizeof(fa_plan)); }

static aclnnStatus invalid(op_call *c, const char *fmt, const char *a, const char *b) {
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, fmt, a, b);
    return ACLNN_ERR_PARAM_INVALID;
}

static const char *dt(aclDataType d, char buf[24]) { return op_dtype_name(d, buf); }

/* ---- the forward op_api ----------------------------------------------------------------------- */

/* not_null_fa query key value inputLayout softmaxMax softmaxSum attentionOut: CheckFaParam's order, the
 * executor and workspaceSize after inputLayout. */
aclnnStatus opc_not_null_fa(op_call *c, const op_step *s) {
    for (int k = 0; k < s->np; k++) {
        if (k == 4 && (c->executor == NULL || c->workspace_size == NULL)) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, c->api, "The %s cannot be nullptr",
                                c->executor == NULL ? "executor" : "workspaceSize");
            return ACLNN_ERR_PARAM_NULLPTR;
        }
        if (op_argument(c, s, k)->p == NULL) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, c->api, "The %s cannot be nullptr", op_pname(c, s, k));
            return ACLNN_ERR_PARAM_NULLPTR;
        }
    }
    return ACLNN_SUCCESS;
}

/* fa_empty t ...: every operand empty -> success with nothing to launch (and no further checks). */
aclnnStatus opc_fa_empty(op_call *c, const op_step *s) {
    for (int k = 0; k < s->np; k++) {
        const pyaclnn_stub_tensor *t = op_tensor(c, s, k);
        if (t->present && pyaclnn_stub_numel(t) != 0) return ACLNN_SUCCESS;
    }
    c->nothing = 1;
    return ACLNN_SUCCESS;
}

/* fa_tnd_only inputLayout: the VarLen forms take TND alone. */
aclnnStatus opc_fa_tnd_only(op_call *c, const op_step *s) {
    const char *layout = op_argument(c, s, 0)->p;
    if (c->nothing || strcmp(layout, "TND") == 0) return ACLNN_SUCCESS;
    return invalid(c, "Layout %s is not TND, invalid shape, please check%s", layout, "");
}

/* fa_dtypes query key value LIST: InputDtypeCheck's first half -- one dtype, and on Atlas A2/A3 one of the list
 * (the Ascend 950 op_api leaves the list to the kernel: fa_plan). */
aclnnStatus opc_fa_dtypes(op_call *c, const op_step *s) {
    if (c->nothing) return ACLNN_SUCCESS;
    char b1[24], b2[24], b3[24];
    aclDataType q = op_tensor(c, s, 0)->dtype, k = op_tensor(c, s, 1)->dtype, v = op_tensor(c, s, 2)->dtype;
    if (q != k || k != v) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "The data type of query[%s], key[%s], value[%s] are not "
                            "equal.", dt(q, b1), dt(k, b2), dt(v, b3));
        return ACLNN_ERR_PARAM_INVALID;
    }
    size_t n;
    const aclDataType *list = op_list(s->list, &n);
    if (pyaclnn_stub_soc_family() != PYACLNN_SOC_950 && !ew_in_list(q, list, n))
        return invalid(c, "The data type of query/key/value is [%s], should be fp16, bf16 or fp32.%s", dt(q, b1), "");
    return ACLNN_SUCCESS;
}

/* fa_pse_dtype attentionOut pse [pseType | n] [sink]: InputDtypeCheck's second half. */
aclnnStatus opc_fa_pse_dtype(op_call *c, const op_step *s) {
    if (c->nothing) return ACLNN_SUCCESS;
    char b1[24], b2[24];
    const pyaclnn_stub_tensor *out = op_tensor(c, s, 0), *pse = op_tensor(c, s, 1);
    int64_t pse_type = s->np > 2 ? op_argument(c, s, 2)->i : s->n;
    const pyaclnn_stub_tensor *sink = s->np > 3 ? op_tensor(c, s, 3) : NULL;
    if (pse_type == 2 || pse_type == 3) {
        if (!pse->present) return invalid(c, "When pseType is 2 or 3, pseShape cannot be null.%s%s", "", "");
        if (pse->dtype != ACL_FLOAT)
            return invalid(c, "The data type %s of pse is not invalid in pse type 2 or 3 mode, It must be float32%s",
                           dt(pse->dtype, b1), "");
        return ACLNN_SUCCESS;
    }
    if (pse->present && pse->dtype != out->dtype)
        return invalid(c, "The data type %s of pse is not equal to the data type %s of attentionOut.", dt(pse->dtype, b1),
                       dt(out->dtype, b2));
    if (sink != NULL && sink->present && sink->dtype != ACL_FLOAT)
        return invalid(c, "The data type of sink is [%s], should be fp32.%s", dt(sink->dtype, b1), "");
    return ACLNN_SUCCESS;
}

/* The axes of the layout (AnalysisAxis), without messages (fa.h). */
int fa_axes(fa_plan *p, const pyaclnn_stub_tensor *q, const pyaclnn_stub_tensor *k, const pyaclnn_stub_tensor *v,
                const char *layout, int64_t head_num) {
    const int64_t *qs = q->shape, *ks = k->shape, *vs = v->shape;
    int64_t nd = q->ndim, dk;
    p->N1 = head_num;
    if (nd == 3 && (strcmp(layout, "BSH") == 0 || strcmp(layout, "SBH") == 0)) {
        int sbh = layout[0] == 'S';
        p->layout = sbh ? FA_SBH : FA_BSH;
        p->D = qs[2] / head_num;
        p->B = qs[sbh ? 1 : 0];
        p->N2 = p->D == 0 ? 0 : ks[2] / p->D;
        p->S1 = qs[sbh ? 0 : 1];
        p->S2 = ks[sbh ? 0 : 1];
        dk = p->N2 == 0 ? p->D : ks[2] / p->N2;
        p->Dv = p->N2 == 0 ? p->D : vs[2] / p->N2;
    } else if (nd == 4 && (strcmp(layout, "BSND") == 0 || strcmp(layout, "BNSD") == 0)) {
        int bnsd = layout[1] == 'N';
        p->layout = bnsd ? FA_BNSD : FA_BSND;
        p->B = qs[0];
        p->N2 = ks[bnsd ? 1 : 2];
        p->S1 = qs[bnsd ? 2 : 1];
        p->S2 = ks[bnsd ? 2 : 1];
        p->D = qs[3];
        dk = ks[3];
        p->Dv = vs[3];
    } else if (nd == 3 && strcmp(layout, "TND") == 0) {
        p->layout = FA_TND;
        p->N2 = ks[1];
        p->D = qs[2];
        dk = ks[2];
        p->Dv = vs[2];
    } else {
        return 0;
    }
    return dk == p->D ? 1 : -1;
}

/* fa_layout query key value inputLayout headNum: AnalysisInput's checks (head_num, layout and rank, head dims). */
aclnnStatus opc_fa_layout(op_call *c, const op_step *s) {
    if (c->nothing) return ACLNN_SUCCESS;
    const pyaclnn_stub_tensor *q = op_tensor(c, s, 0), *k = op_tensor(c, s, 1), *v = op_tensor(c, s, 2);
    const char *layout = op_argument(c, s, 3)->p;
    int64_t head_num = op_argument(c, s, 4)->i;
    char b1[32], b2[32];
    if (head_num <= 0) {
        snprintf(b1, sizeof b1, "%lld", (long long)head_num);
        return invalid(c, "head_num must > 0, but got %s%s", b1, "");
    }
    fa_plan *p = fa_plan_of(c);
    int r = fa_axes(p, q, k, v, layout, head_num);
    if (r == 0) {
        snprintf(b1, sizeof b1, "%lld", (long long)q->ndim);
        return invalid(c, "not support input_layout %s with dim_num %s", layout, b1);
    }
    if (r < 0) {
        int64_t dk = p->layout == FA_TND ? k->shape[2] : p->layout >= FA_BSND ? k->shape[3] : k->shape[2] / p->N2;
        snprintf(b1, sizeof b1, "%lld", (long long)p->D), snprintf(b2, sizeof b2, "%lld", (long long)dk);
        return invalid(c, "qD and kD should be same, but got qD=%s kD=%s", b1, b2);
    }
    if (p->D < p->Dv) {
        snprintf(b1, sizeof b1, "%lld", (long long)p->D), snprintf(b2, sizeof b2, "%lld", (long long)p->Dv);
        return invalid(c, "only support kD >= vD, but got kD=%s vD=%s", b1, b2);
    }
    if (p->D > 768) {
        snprintf(b1, sizeof b1, "%lld", (long long)p->D);
        return invalid(c, "Head dim must <= 768, but got %s%s", b1, "");
    }
    return ACLNN_SUCCESS;
}

/* ---- the gradient op_api ---------------------------------------------------------------------- */

static aclnnStatus required(op_call *c, const char *name) {
    pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, c->api, "Parameter %s of %s is required, but it is empty.", name, FAG);
    return ACLNN_ERR_PARAM_NULLPTR;
}

/* not_null_fag t ... [n = 1: then workspaceSize and executor]. */
aclnnStatus opc_not_null_fag(op_call *c, const op_step *s) {
    for (int k = 0; k < s->np; k++)
        if (op_argument(c, s, k)->p == NULL) return required(c, op_pname(c, s, k));
    if (s->n == 1 && c->workspace_size == NULL) return required(c, "workspaceSize");
    if (s->n == 1 && c->executor == NULL) return required(c, "executor");
    return ACLNN_SUCCESS;
}

/* fag_tnd inputLayout: the Unpadding forms take TND alone (checked before anything else). */
aclnnStatus opc_fag_tnd(op_call *c, const op_step *s) {
    const char *layout = op_argument(c, s, 0)->p;
    if (layout == NULL) return required(c, "inputLayout");
    if (strcmp(layout, "TND") == 0) return ACLNN_SUCCESS;
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Parameter inputLayout of %s has incorrect format %s. It "
                        "should be TND.", FAG, layout);
    return ACLNN_ERR_PARAM_INVALID;
}

/* fag_empty dq dk dv dpse: dq, dk, dv empty and dpse NULL or empty -> nothing to do. */
aclnnStatus opc_fag_empty(op_call *c, const op_step *s) {
    for (int k = 0; k < 3; k++)
        if (pyaclnn_stub_numel(op_tensor(c, s, k)) != 0) return ACLNN_SUCCESS;
    const pyaclnn_stub_tensor *dpse = op_tensor(c, s, 3);
    if (!dpse->present || pyaclnn_stub_numel(dpse) == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}

static aclnnStatus bad_value(op_call *c, const char *param, const char *value, const char *reason) {
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Parameter %s of %s has incorrect value %s. Reason: %s.", param,
                        FAG, value, reason);
    return ACLNN_ERR_PARAM_INVALID;
}

static aclnnStatus bad_group(op_call *c, const char *what, const char *params, const char *values, const char *reason) {
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Parameters %s of %s have incorrect %s %s. Reason: %s.", params,
                        FAG, what, values, reason);
    return ACLNN_ERR_PARAM_INVALID;
}

/* fag_head_num headNum */
aclnnStatus opc_fag_head_num(op_call *c, const op_step *s) {
    if (c->nothing || op_argument(c, s, 0)->i > 0) return ACLNN_SUCCESS;
    char b[32];
    snprintf(b, sizeof b, "%lld", (long long)op_argument(c, s, 0)->i);
    return bad_value(c, "headNum", b, "The value of headNum must be greater than 0");
}

/* "{A, B, ...}" of the operands' dtypes (from operand `from`, `n` of them). */
static const char *dtypes_text(op_call *c, const op_step *s, int from, int n, char *buf, size_t size) {
    size_t used = (size_t)snprintf(buf, size, "{");
    char b[24];
    for (int k = from; k < from + n && used < size; k++)
        used += (size_t)snprintf(buf + used, size - used, "%s%s", k > from ? ", " : "", dt(op_tensor(c, s, k)->dtype, b));
    if (used < size) snprintf(buf + used, size - used, "}");
    return buf;
}

static int same_but_last(const pyaclnn_stub_tensor *a, const pyaclnn_stub_tensor *b) {
    if (a->ndim != b->ndim) return 0;
    for (int64_t d = 0; d + 1 < a->ndim; d++)
        if (a->shape[d] != b->shape[d]) return 0;
    return 1;
}

static aclnnStatus expect_shape(op_call *c, const char *name, const pyaclnn_stub_tensor *t, const pyaclnn_stub_tensor *like) {
    if (t->ndim == like->ndim && memcmp(t->shape, like->shape, sizeof(int64_t) * (size_t)t->ndim) == 0)
        return ACLNN_SUCCESS;
    char a[200], b[200];
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Expected tensor for %s to have same size as %s, but got %s.",
                        name, tv_shape_text(like->shape, like->ndim, a, sizeof a),
                        tv_shape_text(t->shape, t->ndim, b, sizeof b));
    return ACLNN_ERR_PARAM_INVALID;
}

/* fag_io query keyIn value dy attentionIn dq dk dv inputLayout LIST: InputDtypeCheck and InputOutputShapeCheck. */
aclnnStatus opc_fag_io(op_call *c, const op_step *s) {
    if (c->nothing) return ACLNN_SUCCESS;
    const pyaclnn_stub_tensor *t[8];
    for (int k = 0; k < 8; k++) t[k] = op_tensor(c, s, k);
    char buf[256];
    aclDataType q = t[0]->dtype;
    if (q != t[1]->dtype || t[1]->dtype != t[2]->dtype || t[2]->dtype != t[3]->dtype)
        return bad_group(c, "dtypes", "query, keyIn, value, dy", dtypes_text(c, s, 0, 4, buf, sizeof buf),
                         "when the dtype of query is  not FLOAT8_E5M2 or FLOAT8_E4M3FN or HIFLOAT8, the dtypes of "
                         "query, keyIn, value, dy must be the same");
    size_t nl;
    const aclDataType *list = op_list(s->list, &nl);
    if (!ew_in_list(q, list, nl))
        return bad_group(c, "dtypes", "query, keyIn, value", dtypes_text(c, s, 0, 3, buf, sizeof buf),
                         pyaclnn_stub_soc_family() == PYACLNN_SOC_950
                             ? "the dtypes of query, keyIn, value, dy must be FLOAT32 or FLOAT16 or BFLOAT16 or "
                               "FLOAT8_E5M2 or FLOAT8_E4M3FN or HIFLOAT8"
                             : "the dtypes of query, keyIn, value, dy must be FLOAT32 or FLOAT16 or BFLOAT16");
    const char *layout = op_argument(c, s, 8)->p;
    if (layout == NULL) return required(c, "inputLayout");   /* (a NULL string: no strcmp on it) */
    int four = strcmp(layout, "BNSD") == 0 || strcmp(layout, "BSND") == 0;
    if (!four && strcmp(layout, "BSH") != 0 && strcmp(layout, "SBH") != 0 && strcmp(layout, "TND") != 0) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Parameter inputLayout of %s has incorrect format %s. It "
                            "should be BNSD, BSND, BSH, SBH or TND.", FAG, layout);
        return ACLNN_ERR_PARAM_INVALID;
    }
    int64_t want = four ? 4 : 3;
    size_t used = (size_t)snprintf(buf, sizeof buf, "{");
    int bad = 0;
    for (int k = 0; k < 8; k++) {
        used += (size_t)snprintf(buf + used, sizeof buf - used, "%s%lld", k ? ", " : "", (long long)t[k]->ndim);
        bad |= t[k]->ndim != want;
    }
    snprintf(buf + used, sizeof buf - used, "}");
    if (bad) {
        char reason[96];
        snprintf(reason, sizeof reason, "The shape dimensions must all be %lld when inputLayout is %s", (long long)want,
                 layout);
        return bad_group(c, "shape dims", "query, keyIn, value, dy, attentionInOptional, dqOut, dkOut, dvOut", buf, reason);
    }
    char a[200], b[200];
    if (!same_but_last(t[1], t[2])) {
        snprintf(buf, sizeof buf, "{%s, %s}", tv_shape_text(t[1]->shape, t[1]->ndim, a, sizeof a),
                 tv_shape_text(t[2]->shape, t[2]->ndim, b, sizeof b));
        return bad_group(c, "shapes", "keyIn, value", buf,
                         "The shapes of keyIn and value must be the same except for the last dimension");
    }
    if (!same_but_last(t[0], t[3])) {
        snprintf(buf, sizeof buf, "{%s, %s}", tv_shape_text(t[0]->shape, t[0]->ndim, a, sizeof a),
                 tv_shape_text(t[3]->shape, t[3]->ndim, b, sizeof b));
        return bad_group(c, "shapes", "query, dy", buf,
                         "The shapes of query and dy must be the same except for the last dimension");
    }
    int bdim = strcmp(layout, "SBH") == 0 ? 1 : strcmp(layout, "TND") == 0 ? -1 : 0;
    if (bdim >= 0 && !(t[0]->shape[bdim] == t[1]->shape[bdim] && t[1]->shape[bdim] == t[2]->shape[bdim])) {
        char v[200];
        snprintf(buf, sizeof buf, "{%s, %s, %s}", tv_shape_text(t[0]->shape, t[0]->ndim, a, sizeof a),
                 tv_shape_text(t[1]->shape, t[1]->ndim, b, sizeof b), tv_shape_text(t[2]->shape, t[2]->ndim, v, sizeof v));
        char reason[128];
        snprintf(reason, sizeof reason, "The batch dimensions of query, keyIn and value must be the same when "
                 "inputLayout is %s", layout);
        return bad_group(c, "shapes", "query, keyIn, value", buf, reason);
    }
    return expect_shape(c, "attentionIn", t[4], t[3]);
}

/* fag_same_shape out in ...: each pair's shapes equal when both are present (the V4 op_api's checks). */
aclnnStatus opc_fag_same_shape(op_call *c, const op_step *s) {
    if (c->nothing) return ACLNN_SUCCESS;
    for (int k = 0; k + 1 < s->np; k += 2) {
        const pyaclnn_stub_tensor *o = op_tensor(c, s, k), *in = op_tensor(c, s, k + 1);
        if (!o->present || !in->present) continue;
        aclnnStatus rc = expect_shape(c, op_pname(c, s, k), o, in);
        if (rc) return rc;
    }
    return ACLNN_SUCCESS;
}

/* fag_dims query keyIn value dy attentionIn dq dk dv: InvalidTensorDimCheck (no rank below 3). */
aclnnStatus opc_fag_dims(op_call *c, const op_step *s) {
    if (c->nothing) return ACLNN_SUCCESS;
    char buf[128];
    size_t used = (size_t)snprintf(buf, sizeof buf, "{");
    int bad = 0;
    for (int k = 0; k < 8; k++) {   /* the message's dims include dy's, its names do not (the vendor's text) */
        used += (size_t)snprintf(buf + used, sizeof buf - used, "%s%lld", k ? ", " : "", (long long)op_tensor(c, s, k)->ndim);
        bad |= op_tensor(c, s, k)->ndim < 3;
    }
    snprintf(buf + used, sizeof buf - used, "}");
    if (!bad) return ACLNN_SUCCESS;
    return bad_group(c, "shape dims", "query, keyIn, value, attentionIn, dqOut, dkOut, dvOut", buf,
                     "The shape dims of query, keyIn, value, attentionIn, dqOut, dkOut, dvOut cannot be less than 3");
}

/* fag_layout query keyIn value headNum inputLayout: GetInputShapeInfo's checks. */
aclnnStatus opc_fag_layout(op_call *c, const op_step *s) {
    if (c->nothing) return ACLNN_SUCCESS;
    const pyaclnn_stub_tensor *q = op_tensor(c, s, 0), *k = op_tensor(c, s, 1), *v = op_tensor(c, s, 2);
    int64_t head_num = op_argument(c, s, 3)->i;
    const char *layout = op_argument(c, s, 4)->p;
    if (layout == NULL) return required(c, "inputLayout");
    int hlay = strcmp(layout, "BSH") == 0 || strcmp(layout, "SBH") == 0, tnd = strcmp(layout, "TND") == 0;
    int four = strcmp(layout, "BNSD") == 0 || strcmp(layout, "BSND") == 0;
    char a[200], b[200], buf[420];
    if (!hlay && !tnd && !four)
        return bad_value(c, "inputLayout", layout, "The value of inputLayout must be BNSD or BSND or BSH or SBH or TND");
    if (four && q->ndim <= 3) {
        snprintf(buf, sizeof buf, "{%lld, %lld, %lld}", (long long)q->ndim, (long long)k->ndim, (long long)v->ndim);
        return bad_group(c, "shape dims", "query, keyIn, value", buf,
                         "When inputLayout is BNSD or BSND, the shape dims of query, keyIn and value must be greater "
                         "than 3");
    }
    fa_plan *p = fa_plan_of(c);
    if (fa_axes(p, q, k, v, layout, head_num) < 0) {
        snprintf(buf, sizeof buf, "{%s, %s}", tv_shape_text(q->shape, q->ndim, a, sizeof a),
                 tv_shape_text(k->shape, k->ndim, b, sizeof b));
        return bad_group(c, "shapes", "query, keyIn", buf, "D axis of query must be equal to d axis of keyIn");
    }
    if (p->D < p->Dv) {
        snprintf(buf, sizeof buf, "{%s, %s}", tv_shape_text(q->shape, q->ndim, a, sizeof a),
                 tv_shape_text(v->shape, v->ndim, b, sizeof b));
        return bad_group(c, "shapes", "query, value", buf, "D axis for query cannot be less than d axis of value");
    }
    return ACLNN_SUCCESS;
}

/* fag_softmax_layout inputLayout softmaxInLayout (V4). */
aclnnStatus opc_fag_softmax_layout(op_call *c, const op_step *s) {
    const char *layout = op_argument(c, s, 0)->p, *sl = op_argument(c, s, 1)->p;
    if (c->nothing || sl == NULL) return ACLNN_SUCCESS;
    if (strcmp(layout, "TND") == 0 && strcmp(sl, "same_as_input") != 0 && strcmp(sl, "") != 0)
        return bad_value(c, "softmaxInLayout", sl,
                         "When inputLayout is TND, the value of softmaxInLayout must be same_as_input or empty string");
    if (strcmp(layout, "TND") != 0 && strcmp(sl, "") != 0)
        return bad_value(c, "softmaxInLayout", sl,
                         "When inputLayout is not TND, the value of softmaxInLayout must be empty string");
    return ACLNN_SUCCESS;
}

/* fag_unpad_softmax_layout softmaxInLayout (FlashAttentionUnpaddingScoreGradV4, right after fag_tnd):
 * "same_as_input" or "" (the vendor strcmp's it unchecked; NULL is refused as required here). */
aclnnStatus opc_fag_unpad_softmax_layout(op_call *c, const op_step *s) {
    const char *sl = op_argument(c, s, 0)->p;
    if (sl == NULL) return required(c, "softmaxInLayout");
    if (strcmp(sl, "same_as_input") == 0 || strcmp(sl, "") == 0) return ACLNN_SUCCESS;
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api,
                        "softmaxInLayout %s is not same_as_input or Empty string, invalid softmaxInLayout, please check",
                        sl);
    return ACLNN_ERR_PARAM_INVALID;
}
