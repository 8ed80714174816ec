/*
 * The INT8 key/value of the decode path (FusedInferAttentionScore with Q_S = 1, IncreFlashAttention) on Atlas
 * A2: the vendor's MSD (multi-step decomposition) kernel, hicann/ops-transformer attention/incre_flash_attention/
 * op_kernel/incre_flash_attention_split_Bbn2s2_Us2.h (per-channel antiquant: DealQueryPreProcessBaseBlock,
 * AntiquantMatmulPreProcess, AntiquantAIterExpand, AntiquantMatmulResCombine, DealAntiqBmm1ResBaseBlock,
 * AntiquantSoftmaxResPreProcess, DealAntiqBmm2ResBaseBlock, SoftmaxLseCopyOut). The key and value stay int8; the
 * fp32 left operand of each product is split into int8 pieces instead, every step in fp32:
 *   qs = q * keyScale (per channel), aMax = max |qs|, a = qs * (127 / aMax);
 *   pieces: A = a; piece_0 = round(A); piece_i = round(A_i), A_i = (A_{i-1} - piece_{i-1}) * 254
 *     (round: to nearest, ties away -- CAST_ROUND; msd_iters pieces: 3 for innerPrecise 0, else 2);
 *   S = (C_0 + C_1 / 254 + C_2 / 254^2) * (1 / 127) * aMax, C_i = piece_i . K (int32, exact);
 *   x = S * scaleValue (masked: -FLT_MAX), softmax in fp32 (one block: the vendor's online rescaling over its
 *   blocks differs by rounding only);
 *   P . V the same way with a = p * 127 (no row maximum: p <= 1), then out = (PV / l + valueOffset) * valueScale
 *   rounded to the output dtype (ties away).
 * The key offset drops out of the softmax (a constant per row); softmaxLse adds it back: lse = max + log(sum) +
 * scaleValue * rowsum(qs * keyOffset).
 * Per-token (antiquantMode 1: DealQueryPreProcessBaseBlockPerToken, DealAntiqBmm1ResBaseBlockPerToken,
 * DealAntiqBmm2ResBaseBlockPerToken): the query is split unscaled, S_j = (aMax C_j + rowsum(q) keyOffset_j) *
 * keyScale_j; P's side splits p_j * valueScale_j against its row's |max| (aMax2) and out = (aMax2 PV +
 * rowsum(p * valueScale * valueOffset)) / sum; FusedMulAdd taken as two roundings (the source does not say).
 * INT4 (INT32 words of eight): the same steps with 7.49 / 14.98 for 127 / 254 and 4 pieces (KVINT4).
 * A query row of zeros (aMax = 0) gives 127 / 0 on the vector unit: here its pieces are 0 (the source does not say
 * what the int8 cast of the resulting NaN gives).
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "numerics/numerics.h"

#include "ops/attention/fa.h"
#include "ops_decls.h"

/* antiqCoeff1 and antiquantExpandCoeff: int8 127 / 254, int4 7.49 / 14.98 (fp32 constants) */
#define MSD_COEFF (p->kv_packed ? 7.49f : 127.0f)
#define MSD_EXPAND (p->kv_packed ? 14.98f : 254.0f)

static float param(const fa_plan *p, const pyaclnn_stub_launch *l, int slot, int which, int64_t n2, int64_t d);
static int32_t kv_i8(const fa_plan *p, const pyaclnn_stub_launch *l, const int32_t *ids, int which, int64_t b,
                     int64_t n2, int64_t s, int64_t d);

float fa_add_rne(float a, float b, aclDataType dt) {
    /* the exact sum in double, rounded to odd at fp32 so that the narrowing after it is the single nearest-even
     * rounding (fp32 keeps more than two bits beyond fp16's and bf16's) */
    double s = (double)a + (double)b;
    float f = (float)s;
    if ((double)f != s) {
        uint32_t u;
        memcpy(&u, &f, 4);
        if (!(u & 1u)) f = nextafterf(f, s > (double)f ? INFINITY : -INFINITY);
    }
    return dt == ACL_BF16 ? num_bf16_to_f32(num_f32_to_bf16(f)) : num_f16_to_f32(num_f32_to_f16(f));
}

/* The Ascend 950's per-channel antiquant (hicann/ops-transformer attention/common/op_kernel/arch35/vf/
 * vf_antiquant_w8.h AntiquantVFImplW8*, vf_antiquant_w4.h AntiquantVFImplW4*): the int8 / int4 value cast exactly to
 * the query's dtype (bf16 through fp16), plus the offset, times the scale, each in that dtype (nearest even). */
float fa_dequant_elem(const fa_plan *p, const pyaclnn_stub_launch *l, const int32_t *ids, int which, int64_t b,
                      int64_t n2, int64_t s, int64_t d) {
    float x = (float)kv_i8(p, l, ids, which, b, n2, s, d);
    int k = which == FA_IN_K ? 0 : 1;
    if (p->aq_offset) x = fa_add_rne(x, param(p, l, k ? FA_IN_VO : FA_IN_KO, k, n2, d), p->dtype);
    float v = x * param(p, l, k ? FA_IN_VS : FA_IN_KS, k, n2, d);
    return p->dtype == ACL_BF16 ? num_bf16_to_f32(num_f32_to_bf16(v)) : num_f16_to_f32(num_f32_to_f16(v));
}

/* Round to nearest, ties away from zero (CAST_ROUND), as an fp32 integer. */
static float cast_round(float x) { return roundf(x); }

/* Key (which 0) or value (1) parameter of channel d of kv head n2 (1 when absent: a missing offset reads 0). */
static float param(const fa_plan *p, const pyaclnn_stub_launch *l, int slot, int which, int64_t n2, int64_t d) {
    const pyaclnn_stub_tensor *t = &l->inputs[slot];
    int64_t idx = p->aq_base[which] + (p->aq_per_tensor ? 0 : n2 * p->D + d);
    return fa_load(t, tv_offset(t, idx));
}

/* Per-token mode: the key's (which 0) or value's parameter of position s of batch b ([., B, S] / [B, S]). */
static float tok(const fa_plan *p, const pyaclnn_stub_launch *l, int slot, int which, int64_t b, int64_t s) {
    const pyaclnn_stub_tensor *t = &l->inputs[slot];
    return fa_load(t, tv_offset(t, p->aq_base[which] + b * p->aq_seq + s));
}

/* a[0..n) into msd_iters int8 pieces (pieces[i * n + k]). */
static void split(const fa_plan *p, float *a, float *r, int32_t *pieces, int64_t n) {
    for (int it = 0; it < p->msd_iters; it++)
        for (int64_t k = 0; k < n; k++) {
            if (it > 0) a[k] = (a[k] - r[k]) * MSD_EXPAND;
            r[k] = cast_round(a[k]);
            /* (a NaN or an inf from a non-finite input has no int8 here: 0, not undefined behaviour) */
            pieces[it * n + k] = fabsf(r[k]) <= 128.0f ? (int32_t)r[k] : 0;
        }
}

/* The pieces' int32 products combined: (C_0 + C_1 * (1/254) + C_2 * (1/254/254)) * (1/127). */
static float combine(const fa_plan *p, const int64_t *c) {
    float res = (float)c[0], sc = 1.0f;
    for (int it = 1; it < p->msd_iters; it++) {
        sc = sc / MSD_EXPAND;
        res = res + (float)c[it] * sc;
    }
    return res * (1.0f / MSD_COEFF);
}

/* Element (s, d) of kv head n2 of batch b of the key (FA_IN_K) or value: an int8, or an int4 of an INT32 word of
 * eight (element 8j + q in bits 4q .. 4q + 3). */
static int32_t kv_i8(const fa_plan *p, const pyaclnn_stub_launch *l, const int32_t *ids, int which, int64_t b,
                     int64_t n2, int64_t s, int64_t d) {
    const pyaclnn_stub_tensor *t = &l->inputs[which];
    int64_t hd = p->kv_packed ? p->D / 8 : p->D, dd = p->kv_packed ? d / 8 : d;
    int64_t off = p->paged ? fa_paged_elem(p, ids, l->inputs[FA_IN_BT].shape[1], t, hd, b, n2, s, dd)
                           : fa_elem(p, t, 1, hd, b, n2, s, dd);
    if (!p->kv_packed) return *(const int8_t *)tv_at(t, off);
    uint32_t w;
    memcpy(&w, tv_at(t, off), 4);
    int32_t nib = (int32_t)((w >> (4 * (d % 8))) & 0xFu);
    return nib >= 8 ? nib - 16 : nib;
}

int fa_antiquant_head(const fa_plan *p, const pyaclnn_stub_launch *l, const int32_t *ids, int64_t b, int64_t n) {
    const pyaclnn_stub_tensor *in = l->inputs, *out = &l->outputs[FA_OUT_ATTN];
    int64_t s2 = fa_s2(p, b), D = p->D, n2 = n / p->G, it = p->msd_iters;
    int64_t w = s2 > D ? s2 : D;
    float *a = calloc((size_t)w + 1, sizeof(float)), *r = calloc((size_t)w + 1, sizeof(float));
    float *x = calloc((size_t)s2 + 1, sizeof(float)), *o = calloc((size_t)D + 1, sizeof(float));
    int32_t *pc = calloc((size_t)(it * w) + 1, sizeof(int32_t));
    int64_t *acc = calloc((size_t)it, sizeof(int64_t));
    int ok = a && r && x && o && pc && acc;
    if (!ok) goto done;
    /* bmm1: the query times the key's scale, split into pieces against its row's |max| */
    float amax = 0, koff = 0, qsum = 0;
    for (int64_t d = 0; d < D; d++) {
        float qs = fa_load(&in[FA_IN_Q], fa_elem(p, &in[FA_IN_Q], 0, D, b, n, 0, d));
        if (!p->aq_per_token) qs = qs * param(p, l, FA_IN_KS, 0, n2, d);
        a[d] = qs;
        if (fabsf(qs) > amax) amax = fabsf(qs);
        if (p->aq_offset && p->aq_per_token) qsum += qs;
        else if (p->aq_offset) koff += qs * param(p, l, FA_IN_KO, 0, n2, d);
    }
    float rmul = amax > 0 ? MSD_COEFF / amax : 0.0f;
    for (int64_t d = 0; d < D; d++) a[d] = a[d] * rmul;
    split(p, a, r, pc, D);
    float m = 0;
    for (int64_t j = 0; j < s2; j++) {
        for (int64_t i = 0; i < it; i++) acc[i] = 0;
        for (int64_t d = 0; d < D; d++) {
            int32_t k = kv_i8(p, l, ids, FA_IN_K, b, n2, j, d);
            for (int64_t i = 0; i < it; i++) acc[i] += (int64_t)pc[i * D + d] * k;
        }
        float sc = combine(p, acc);
        if (p->aq_per_token) {   /* (aMax C + rowsum(q) keyOffset_j) keyScale_j */
            sc = p->aq_offset ? amax * sc + qsum * tok(p, l, FA_IN_KO, 0, b, j) : amax * sc;
            sc = sc * tok(p, l, FA_IN_KS, 0, b, j);
        } else {
            sc = sc * amax;
        }
        x[j] = fa_masked(p, &in[FA_IN_MASK], b, n, 0, j) ? FA_NEG_MIN : fa_logit(p, &in[FA_IN_PSE], b, n, 0, j, sc);
        if (j == 0 || x[j] > m) m = x[j];
    }
    /* softmax, then bmm2: p * 127 split into pieces against the int8 value */
    /* per-token: p * valueScale_j split against its row's |max|, rowsum(p * valueScale * valueOffset) added back */
    float sum = 0, amax2 = 0, rsv = 0;
    for (int64_t j = 0; j < s2; j++) {
        float e = fa_expsub(x[j], m);
        sum += e;
        if (!p->aq_per_token) {
            a[j] = e * MSD_COEFF;
            continue;
        }
        a[j] = e * tok(p, l, FA_IN_VS, 1, b, j);
        if (fabsf(a[j]) > amax2) amax2 = fabsf(a[j]);
        if (p->aq_offset) rsv += a[j] * tok(p, l, FA_IN_VO, 1, b, j);
    }
    float rmul2 = amax2 > 0 ? MSD_COEFF / amax2 : 0.0f;
    for (int64_t j = 0; j < s2 && p->aq_per_token; j++) a[j] = a[j] * rmul2;
    split(p, a, r, pc, s2);
    int invalid = s2 == 0 || (p->invalid_rows && m == FA_NEG_MIN);
    for (int64_t d = 0; d < D; d++) {
        for (int64_t i = 0; i < it; i++) acc[i] = 0;
        for (int64_t j = 0; j < s2; j++) {
            int32_t v = kv_i8(p, l, ids, FA_IN_V, b, n2, j, d);
            for (int64_t i = 0; i < it; i++) acc[i] += (int64_t)pc[i * s2 + j] * v;
        }
        float v = combine(p, acc);
        if (p->aq_per_token) {
            o[d] = invalid ? 0.0f : (p->aq_offset ? amax2 * v + rsv : amax2 * v) / sum;
            continue;
        }
        v = v / sum;
        if (p->aq_offset) v = v + param(p, l, FA_IN_VO, 1, n2, d);
        v = v * param(p, l, FA_IN_VS, 1, n2, d);
        o[d] = invalid ? 0.0f : v;
    }
    if (p->post_quant)
        fa_post_quant_row(p, l, b, n, 0, o);
    else
        for (int64_t d = 0; d < D; d++) fa_store(out, fa_elem(p, out, FA_ELEM_OUT, D, b, n, 0, d), o[d]);
    if (p->lse == FA_LSE) {
        const pyaclnn_stub_tensor *lse = &l->outputs[FA_OUT_MAX];
        float v = m + (float)log((double)sum);
        if (p->aq_offset) v = v + koff * p->scale;
        fa_store(lse, tv_offset(lse, fa_stat_row(p, b, n, 0)), invalid ? INFINITY : v);
    }
done:
    free(a), free(r), free(x), free(o), free(pc), free(acc);
    return ok;
}
