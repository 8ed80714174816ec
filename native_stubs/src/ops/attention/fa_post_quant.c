/*
 * The post-quant INT8 attentionOut of the decode path (quantScale2 / quantOffset2) on Atlas A2: hicann/
 * ops-transformer attention/incre_flash_attention/op_kernel/incre_flash_attention_split_Bbn2s2_Us2.h PostQuant and
 * InitPostQuant, applied to the fp32 out = O / l of a query row:
 *   per tensor (one scale): AscendC's AscendQuant for fp32 input on Atlas A2 (CANN 8.1.RC1 ascendc highlevel_api
 *   impl/quantization/quant/ascend_quant_pre_impl.h AscendQuantIntrinsicsImpl): h = fp16(out) (CAST_NONE: nearest
 *   even), h = fp16(h * fp16(scale)), h = fp16(h + fp16(offset)), int8 = h to nearest even, saturating;
 *   per channel (scale [N1 * D] in the query heads' order): fp32 v = out * scale[n, d] + offset[n, d] (two
 *   roundings), then fp16 and int8 with CAST_ROUND (ties away), saturating.
 * A bf16 scale / offset is widened exactly (ToFloat / Cast CAST_NONE).
 * On the Ascend 950 (ops-transformer attention/common/op_kernel/arch35/vf/vf_post_quant.h, PostQuantPerTensorImplVF /
 * PostQuantPerChnl*ImplVF): per tensor and per channel alike, fp32 v = out * scale (+ offset) (two roundings), then
 * fp16 with CAST_RINT and int8 with CAST_RINT; the casts are NO_SAT, whose overflow the sources do not define: the
 * emulator saturates, as on Atlas A2. FLOAT8_E4M3FN and HIFLOAT8 outputs (vf_post_quant_common.h CastToOutputFromMul /
 * FromAdd): the fp32 v cast straight to the output with CAST_RINT (castTraitP0) / CAST_HYBRID (castTraitP1), NO_SAT
 * (numerics' non-saturating conversions: E4M3FN overflow to NaN, HIFLOAT8 to its inf code).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "numerics/numerics.h"
#include "ops/attention/fa.h"
#include "ops_decls.h"

static float half_of(float x) { return num_f16_to_f32(num_f32_to_f16(x)); }

static float pq_param(const pyaclnn_stub_launch *l, int slot, int64_t idx) {
    const pyaclnn_stub_tensor *t = &l->inputs[slot];
    return t->data == NULL ? 0.0f : fa_load(t, tv_offset(t, idx));
}

void fa_post_quant_row(const fa_plan *p, const pyaclnn_stub_launch *l, int64_t b, int64_t n, int64_t i,
                       const float *o) {
    const pyaclnn_stub_tensor *out = &l->outputs[FA_OUT_ATTN];
    int has_off = p->post_quant_offset;
    for (int64_t d = 0; d < p->Dv; d++) {
        int8_t q;
        if (p->post_quant_950) {
            int64_t k = p->post_quant == FA_PQ_TENSOR ? 0 : n * p->Dv + d;
            float v = o[d] * pq_param(l, FA_IN_QS2, k);
            if (has_off) v = v + pq_param(l, FA_IN_QO2, k);
            if (p->post_quant_dtype == ACL_FLOAT8_E4M3FN || p->post_quant_dtype == ACL_HIFLOAT8) {
                /* castTraitP0 (CAST_RINT) / castTraitP1 (CAST_HYBRID) straight from fp32, NO_SAT */
                *(uint8_t *)tv_at(out, fa_elem(p, out, FA_ELEM_OUT, p->Dv, b, n, i, d)) =
                    p->post_quant_dtype == ACL_HIFLOAT8 ? num_f32_to_hif8(v, NUM_HYBRID) : num_f32_to_fp8_e4m3fn(v, NUM_RINT);
                continue;
            }
            q = num_f32_to_int8(half_of(v), NUM_RINT | NUM_SAT);
        } else if (p->post_quant == FA_PQ_TENSOR) {
            float h = half_of(o[d]);
            h = half_of(h * half_of(pq_param(l, FA_IN_QS2, 0)));
            h = fa_add_rne(h, has_off ? half_of(pq_param(l, FA_IN_QO2, 0)) : 0.0f, ACL_FLOAT16);
            q = num_f32_to_int8(h, NUM_RINT | NUM_SAT);
        } else {
            int64_t k = n * p->Dv + d;
            float v = o[d] * pq_param(l, FA_IN_QS2, k);
            if (has_off) v = v + pq_param(l, FA_IN_QO2, k);
            float h = num_f16_to_f32(num_f32_to_f16_mode(v, NUM_ROUND));
            q = num_f32_to_int8(h, NUM_ROUND | NUM_SAT);
        }
        *(int8_t *)tv_at(out, fa_elem(p, out, FA_ELEM_OUT, p->Dv, b, n, i, d)) = q;
    }
}
