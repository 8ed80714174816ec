/*
 * The parameters the inference forms name differently (fia_plan.c, fia_antiquant.c): per form -- FusedInferAttention
 * Score V2..V5 (FORM_FIA), IncreFlashAttentionV4 (FORM_IFA), PromptFlashAttentionV3 (FORM_PFA) -- ("" where the
 * form has none).
 */
#ifndef PYACLNN_FIA_NAMES_H
#define PYACLNN_FIA_NAMES_H

#include "ops/attention/fa.h"

enum { FORM_FIA = 0, FORM_IFA, FORM_PFA };
enum { P_MASK = 0, P_QLEN, P_KVLEN, P_TABLE, P_AQS, P_AQO };
static const char *const NAMES[][3] = {
    {"attenMaskOptional", "attenMask", "attenMask"},
    {"actualSeqLengthsOptional", "", "actualSeqLengths"},
    {"actualSeqLengthsKvOptional", "actualSeqLengths", "actualSeqLengthsKv"},
    {"blockTableOptional", "blocktable", ""},
    {"antiquantScaleOptional", "antiquantScale", ""},
    {"antiquantOffsetOptional", "antiquantOffset", ""},
};

struct op_call;
/* The antiquant checks and plan (fia_antiquant.c): `antiquant` 1 when key/value are INT8 under a FLOAT16 / BFLOAT16
 * query. */
aclnnStatus fia_antiquant_plan(struct op_call *c, fa_plan *p, int form, int antiquant, aclDataType qtype);

#endif
