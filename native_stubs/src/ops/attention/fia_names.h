/*
 * The parameters the inference forms name differently (fia_plan.c, fia_antiquant.c): per form -- FusedInferAttention
 * Score V2..V5 (FORM_FIA), IncreFlashAttentionV4 (FORM_IFA), PromptFlashAttentionV3 (FORM_PFA) -- ("" where the
 * form has none).
 */
#ifndef PYACLNN_FIA_NAMES_H
#define PYACLNN_FIA_NAMES_H

#include "ops/attention/fa.h"

enum { FORM_FIA = 0, FORM_IFA, FORM_PFA };
enum { P_MASK = 0, P_QLEN, P_KVLEN, P_TABLE, P_AQS, P_AQO, P_QS2, P_QO2 };
static const char *const NAMES[][3] = {
    {"attenMaskOptional", "attenMask", "attenMask"},
    {"actualSeqLengthsOptional", "", "actualSeqLengths"},
    {"actualSeqLengthsKvOptional", "actualSeqLengths", "actualSeqLengthsKv"},
    {"blockTableOptional", "blocktable", ""},
    {"antiquantScaleOptional", "antiquantScale", ""},
    {"antiquantOffsetOptional", "antiquantOffset", ""},
    {"quantScale2Optional", "quantScale2", "quantScale2"},
    {"quantOffset2Optional", "quantOffset2", "quantOffset2"},
};

struct op_call;
/* The antiquant checks and plan (fia_antiquant.c): `antiquant` 1 when key/value are INT8 under a FLOAT16 / BFLOAT16
 * query. */
aclnnStatus fia_antiquant_plan(struct op_call *c, fa_plan *p, int form, int antiquant, aclDataType qtype);
/* The post-quant INT8 output's checks and plan (fia_quant_out.c). */
aclnnStatus fia_post_quant_plan(struct op_call *c, fa_plan *p, int form, aclDataType qtype, aclDataType kvtype,
                                aclDataType otype, int decode, int kv_int4);

#endif
