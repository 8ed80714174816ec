/*
 * The post-quant INT8 attentionOut's parameters (quantScale2 / quantOffset2) in the decode path: hicann/
 * ops-transformer attention/incre_flash_attention/op_host/incre_flash_attention_tiling.cpp ProcessQuant2 and
 * ProcessQuant2Dtype, incre_flash_attention_tiling_check.cpp CheckQuant2Shape: their checks in their order and
 * their messages (561002), run where IFA's tiling runs them (after the sequence lengths, before the antiquant
 * parameters). Taken with Q_S = 1 on Atlas A2 and on the Ascend 950, and on the Ascend 950 in FIA's prefill path as
 * well (Q_S > 1 or TND: the arch35 kernel, attention/common/op_kernel/arch35/flash_attention_score_infer.h, runs the
 * same vf_post_quant.h step on every query row; the 950's checks, fused_infer_attention_score/op_host/checkers/
 * post_quant_checker.cpp, are not followed here: taken as the A2's, as for its antiquant; its kernel step is
 * fa_post_quant.c's); Atlas A2's prefill path (PFA's) post-quant, PromptFlashAttention's, and a per-tensor scale
 * with a per-channel offset (or the reverse) are not taken by the emulator (161002).
 */
#include <stdint.h>
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

aclnnStatus fia_post_quant_plan(op_call *c, fa_plan *p, int form, aclDataType qtype, aclDataType otype, int decode,
                                int kv_int4) {
    const pyaclnn_stub_tensor *sc = opt(c, NAMES[P_QS2][form]), *off = opt(c, NAMES[P_QO2][form]);
    char b1[24];
    int a950 = pyaclnn_stub_soc_family() == PYACLNN_SOC_950;
    /* The Ascend 950 also writes FLOAT8_E4M3FN and HIFLOAT8 (post_quant_checker.cpp CheckFeatureAttenOut: INT8,
     * FLOAT8_E4M3FN, HIFLOAT8; vf_post_quant.h) */
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
