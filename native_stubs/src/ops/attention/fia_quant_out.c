/*
 * The post-quant attentionOut's parameters (quantScale2 / quantOffset2).
 * Atlas A2, decode path: hicann/ops-transformer attention/incre_flash_attention/op_host/incre_flash_attention_tiling.cpp
 * ProcessQuant2 and ProcessQuant2Dtype, incre_flash_attention_tiling_check.cpp CheckQuant2Shape: their checks in their
 * order and their messages (561002), run where IFA's tiling runs them (after the sequence lengths, before the
 * antiquant parameters). Atlas A2's prefill path (PFA's) post-quant, PromptFlashAttention's, and a per-tensor scale
 * with a per-channel offset (or the reverse) are not taken by the emulator (161002).
 * Ascend 950 (FIA V2..V5 and IFA, decode and prefill paths: the arch35 kernel, attention/common/op_kernel/arch35/
 * flash_attention_score_infer.h, runs vf_post_quant.h's step, fa_post_quant.c, on every query row): hicann/
 * ops-transformer attention/fused_infer_attention_score/op_host/checkers/post_quant_checker.cpp (commit 835b830)
 * in its phases' order (FIAChecker::Process: CheckSinglePara, CheckParaExistence, CheckCrossFeature,
 * CheckMultiParaConsistency), post-quant on when attentionOut is neither FLOAT16 nor BFLOAT16 (fused_infer_attention_
 * score_tiling_info_parser.cpp GetPostQuantInfo, commit 125d5d3), 561002 with the log/log.h wording. The other
 * checkers' phases (common, mask, lengths, paged, dequant ...) are not interleaved with these: the emulator runs the
 * post-quant ones together, here. Not reached in the emulator: CheckFeatureMLAOutQuant (MLA), CheckFeaturePrefix
 * (shared prefix), CheckAntiquantNotSupport (FLOAT8_E4M3FN key/value), CheckFeatureRowValid (ASCEND910B only).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "opbase/checks.h"
#include "ops/attention/fa.h"
#include "ops/attention/fia_names.h"
#include "ops_decls.h"

#define tiling_fail(c, ...) op_failf((c)->api, ACLNN_ERR_INNER_TILING_ERROR, __VA_ARGS__)

static const pyaclnn_stub_tensor *opt(op_call *c, const char *name) {
    int i = name[0] ? op_param_index(c->def, name) : -1;
    return i >= 0 && c->t[i].present && pyaclnn_stub_numel(&c->t[i]) > 0 ? &c->t[i] : NULL;
}

/* IsQuant2ShapeValid / CheckQuant2Shape: [1, N1, 1, D], [1, 1, N1, D], [N1, 1, D], [1, N1, D], [1, 1, N1 * D],
 * [1, N1 * D], [N1, D] or [N1 * D]. */
static aclnnStatus shape_check(op_call *c, const fa_plan *p, const pyaclnn_stub_tensor *t) {
    int64_t N = p->N1, D = p->Dv, nd = t->ndim;
    const int64_t *s = t->shape;
    int ok = (nd == 4 && s[0] == 1 && ((s[1] == N && s[2] == 1) || (s[1] == 1 && s[2] == N)) && s[3] == D) ||
             (nd == 3 && ((s[0] == N && s[1] == 1 && s[2] == D) || (s[0] == 1 && s[1] == N && s[2] == D) ||
                          (s[0] == 1 && s[1] == 1 && s[2] == N * D))) ||
             (nd == 2 && ((s[0] == 1 && s[1] == N * D) || (s[0] == N && s[1] == D))) || (nd == 1 && s[0] == N * D);
    if (ok) return ACLNN_SUCCESS;
    char got[200];
    tv_shape_text(s, nd, got, sizeof got);
    if (nd == 4)
        return tiling_fail(c, "The shape of postquant parameter%s is not expected shape.Expect [1, %lld, 1, %lld] or "
                           "[1, 1, %lld, %lld]", got, (long long)N, (long long)D, (long long)N, (long long)D);
    if (nd == 3)
        return tiling_fail(c, "The shape of postquant parameter%s is not expected shape.Expect [%lld, 1, %lld], [1, "
                           "%lld, %lld] or [1, 1, %lld].", got, (long long)N, (long long)D, (long long)N,
                           (long long)D, (long long)(N * D));
    if (nd == 2)
        return tiling_fail(c, "The shape of postquant parameter%s is not expected[1, %lld] or [%lld, %lld].", got,
                           (long long)(N * D), (long long)N, (long long)D);
    if (nd == 1)
        return tiling_fail(c, "The shape of postquant parameter%s is not expected[%lld].", got, (long long)(N * D));
    return op_invalidf(c->api, "a postquant parameter of %lld dims is not supported by the emulator", (long long)nd);
}

/* log/log.h's OP_LOGE_FOR_INVALID_*_WITH_REASON wording (one parameter, or several) */
static aclnnStatus bad(op_call *c, const char *param, const char *what, const char *got, const char *reason) {
    return tiling_fail(c, "Parameter%s %s of FusedInferAttentionScore %s incorrect %s %s. Reason: %s.",
                       strchr(param, ' ') ? "s" : "", param, strchr(param, ' ') ? "have" : "has", what, got, reason);
}

/* ge's DataTypeToSerialString names (DT_BF16 for ACL's BFLOAT16) */
static const char *dt(aclDataType t, char *b) {
    char n[24];
    snprintf(b, 32, "DT_%s", t == ACL_BF16 ? "BF16" : op_dtype_name(t, n));
    return b;
}

static const pyaclnn_stub_tensor *given(op_call *c, const char *name) {
    int i = name[0] ? op_param_index(c->def, name) : -1;
    return i >= 0 && c->t[i].present ? &c->t[i] : NULL;
}

/* post_quant_checker.cpp (the Ascend 950's FIA tiling), its phases in FIAChecker::Process's order. */
static aclnnStatus check_950(op_call *c, fa_plan *p, int form, aclDataType qtype, aclDataType kvtype,
                             aclDataType otype) {
    const pyaclnn_stub_tensor *sc = given(c, NAMES[P_QS2][form]), *off = given(c, NAMES[P_QO2][form]);
    char b[32], r[320], g[200];
    /* CheckSingleDtype (whether or not post-quant is on) */
    if (sc != NULL && sc->dtype != ACL_FLOAT && sc->dtype != ACL_BF16)
        return bad(c, "quant_scale2", "dtype", dt(sc->dtype, b), "The dtype of quant_scale2 must be BFLOAT16 or FLOAT32");
    if (off != NULL && off->dtype != ACL_FLOAT && off->dtype != ACL_BF16)
        return bad(c, "quant_offset2", "dtype", dt(off->dtype, b), "The dtype of quant_offset2 must be BFLOAT16 or FLOAT32");
    if (otype == ACL_FLOAT16 || otype == ACL_BF16) return ACLNN_SUCCESS;   /* GetPostQuantInfo: off */
    /* CheckExistenceQuantScale2 */
    if (sc == NULL) return bad(c, "quant_scale2", "value", "empty", "In post quant scenario, quant_scale2 cannot be empty");
    int64_t n = pyaclnn_stub_numel(sc), chan = p->N1 * p->Dv;
    if (n <= 0) {
        snprintf(g, sizeof g, "%lld", (long long)n);
        return bad(c, "quant_scale2", "shape size", g, "Shape size of quant_scale2 must be positive in post quant scenario!");
    }
    /* CheckFeatureAttenOut, CheckFeatureQueryDType, CheckFeatureLayout */
    if (otype != ACL_INT8 && otype != ACL_FLOAT8_E4M3FN && otype != ACL_HIFLOAT8)
        return bad(c, "attention_out", "dtype", dt(otype, b), "The dtype of attention_out must be within the range "
                   "{INT8, FLOAT8_E4M3FN, HIFLOAT8} when quantScale2 is not empty");
    if (qtype != ACL_BF16 && sc->dtype != ACL_FLOAT)
        return bad(c, "quant_scale2", "dtype", dt(sc->dtype, b), "When the dtype of query is not BFLOAT16, the dtype of "
                   "quant_scale2 must be FLOAT32");
    const char *layout = c->arg[op_param_index(c->def, "inputLayout")].p;
    int bsnd = !strcmp(layout, "BSH") || !strcmp(layout, "BSND") || !strcmp(layout, "BNSD") || !strcmp(layout, "BNSD_BSND");
    snprintf(g, sizeof g, "%lld", (long long)n);
    if (sc->ndim == 1) {
        if ((n != chan || !bsnd) && n != 1)
            return bad(c, "quant_scale2", "shape size", g, "For post quant per-tensor, the shape size of quantScale2 "
                       "should be equal to [1]");
    } else if (bsnd) {
        if (n != chan) {
            snprintf(r, sizeof r, "In post quant per-channel scenario, when layout is %s, the total element count of "
                     "quantScale2 should be numHeads(%lld) * vHeadDim(%lld)", layout, (long long)p->N1, (long long)p->Dv);
            return bad(c, "quant_scale2", "shape size", g, r);
        }
    } else if (sc->ndim != 2 || sc->shape[0] != p->N1 || sc->shape[1] != p->Dv) {
        snprintf(r, sizeof r, "In post quant per-channel scenario, when layout is %s, the shape of quantScale2 should be "
                 "[numHeads(%lld), vHeadDim(%lld)]", layout, (long long)p->N1, (long long)p->Dv);
        return bad(c, "quant_scale2", "shape", tv_shape_text(sc->shape, sc->ndim, g, sizeof g), r);
    }
    /* CheckFeatureOutputEqual (antiquant: query and key/value dtypes differ) */
    if (qtype != kvtype && otype != kvtype)
        return bad(c, "attention_out", "dtype", dt(otype, b), "When quantScale2 is not empty, the dtype of attenOut must "
                   "be the same as the dtype of key and value");
    /* CheckMultiParaQuantOffset2 */
    if (off != NULL) {
        if (off->dtype != sc->dtype)
            return bad(c, "quant_offset2", "dtype", dt(off->dtype, b), "The dtype of QuantScale2 and quantOffset2 must "
                       "be the same");
        if (off->ndim != sc->ndim) {
            snprintf(g, sizeof g, "%lldD and %lldD", (long long)off->ndim, (long long)sc->ndim);
            return bad(c, "quant_scale2 and quant_offset2", "shape dims", g, "The shape dims of quant_scale2 and "
                       "quant_offset2 must be the same");
        }
        if (pyaclnn_stub_numel(off) != n) {
            snprintf(g, sizeof g, "%lld, %lld", (long long)n, (long long)pyaclnn_stub_numel(off));
            return bad(c, "quant_scale2 and quant_offset2", "shape sizes", g, "The shape sizes of quant_scale2 and "
                       "quant_offset2 must be the same");
        }
    }
    p->post_quant = n != 1 ? FA_PQ_CHANNEL : FA_PQ_TENSOR;   /* isOutQuantPerChnOut */
    p->post_quant_offset = off != NULL;
    p->post_quant_950 = 1;
    p->post_quant_dtype = otype;
    return ACLNN_SUCCESS;
}

aclnnStatus fia_post_quant_plan(op_call *c, fa_plan *p, int form, aclDataType qtype, aclDataType kvtype,
                                aclDataType otype, int decode, int kv_int4) {
    const pyaclnn_stub_tensor *sc = opt(c, NAMES[P_QS2][form]), *off = opt(c, NAMES[P_QO2][form]);
    char b1[24];
    int a950 = pyaclnn_stub_soc_family() == PYACLNN_SOC_950;
    if (a950 && form != FORM_PFA) return check_950(c, p, form, qtype, kvtype, otype);
    /* Atlas A2 (IFA's ProcessQuant2), and PromptFlashAttention on the Ascend 950 (refused below as before: its
     * FLOAT8_E4M3FN / HIFLOAT8 output reaches that refusal) */
    if (otype != ACL_INT8 && !(a950 && (otype == ACL_FLOAT8_E4M3FN || otype == ACL_HIFLOAT8))) {
        if (sc != NULL)
            return tiling_fail(c, "the output's dequant scale exist, output data type should be INT8, but now it's "
                               "DT_%s", op_dtype_name(otype, b1));
        if (off != NULL)
            return tiling_fail(c, "the output's dequant offset exist, output data type should be INT8, but now it's "
                               "DT_%s", op_dtype_name(otype, b1));
        return ACLNN_SUCCESS;
    }
    /* The Ascend 950's FIA kernel (arch35 flash_attention_score_infer.h) runs vf_post_quant.h's step in its prefill
     * path too; Atlas A2's prefill path (PFA's) is not taken. */
    if (form == FORM_PFA || (!decode && !a950))
        return op_invalidf(c->api, "the INT8 attentionOut (post-quant) is supported by the emulator in the decode path "
                           "only (and in FusedInferAttentionScore's prefill path on the Ascend 950)");
    /* ProcessQuant2Dtype */
    if (sc == NULL)
        return tiling_fail(c, "output data type is %s, but input tensor of the output's dequant scale is null",
                           otype == ACL_INT8 ? "int8" : op_dtype_name(otype, b1));
    if (sc->dtype != ACL_BF16 && sc->dtype != ACL_FLOAT)
        return tiling_fail(c, "the output's dequant scale type(%d) should be bf16 or fp32", (int)sc->dtype);
    if (off != NULL && off->dtype != sc->dtype)
        return tiling_fail(c, "the output's dequant scale dtype(%d) and offset dtype(%d) are not the same", (int)sc->dtype,
                           (int)off->dtype);
    if (qtype != ACL_BF16 && sc->dtype == ACL_BF16)
        return tiling_fail(c, "the output's dequant scale and offset support bf16 when inputQ type is bf16");
    if (kv_int4) return tiling_fail(c, "PostQuant is not supported if Input Kv Dtype is INT4 or INT32 currently.");
    /* ProcessQuant2 */
    aclnnStatus rc;
    int chan = pyaclnn_stub_numel(sc) != 1;
    if (chan && (rc = shape_check(c, p, sc))) return rc;
    if (off != NULL) {
        if (pyaclnn_stub_numel(off) != 1 && (rc = shape_check(c, p, off))) return rc;
        if ((pyaclnn_stub_numel(off) != 1) != chan)
            return op_invalidf(c->api, "a per-tensor quantScale2 with a per-channel quantOffset2 (or the reverse) is not "
                               "supported by the emulator");
    }
    p->post_quant = chan ? FA_PQ_CHANNEL : FA_PQ_TENSOR;
    p->post_quant_offset = off != NULL;
    p->post_quant_950 = pyaclnn_stub_soc_family() == PYACLNN_SOC_950;
    p->post_quant_dtype = otype;
    return ACLNN_SUCCESS;
}
