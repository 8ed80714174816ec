/*
 * FlashAttentionScore's element rules (fa.h): where an element of each layout lives, which positions the
 * sparse mode and the atten mask leave out, the pse the score gets, which positions dropout keeps, and
 * the roundings of the vector unit.
 *
 * Masks (hicann/ops-transformer docs/en/context/sparse_mode_introduction.md; the kernel's atten-mask
 * copy and MergeBandModeMask): a true/non-zero element leaves its position out.
 *   0 defaultMask: the atten mask, and, with one, the band nextTokens/preTokens from the upper-left
 *     corner (blocks outside it are not computed); no mask: every position.
 *   1 allMask, 5 prefix (uncompressed): the atten mask alone.
 *   2 leftUpCausal, 3 rightDownCausal, 4 band (from the lower-right corner), 6 prefix (rightDownCausal,
 *     and the first prefix[b] positions of every row), 7 / 8 (TND) rightDownCausal / leftUpCausal with
 *     the last / first non-empty batch a band: the compressed 2048 x 2048 mask (triu(ones, 1)) is read
 *     along its diagonals -- a boundary at diagonal d (the position d columns right of it) reads
 *     mask[0][d] for 0 <= d < 2048, mask[-d][0] for -2048 < d < 0, and is out beyond (d >= 2048) or in
 *     (d <= -2048): with the vendor's triangle exactly the causal/band boundary.
 * Dropout keeps position (b, n, i, j) when bit k of the dropout mask is 1 (byte k / 8, bit k % 8), k its
 * index in the [B, N1, S1, S2] order of the scores (TND: batch b's block [N1, S1_b, S2_b] after those
 * of the batches before it) -- the mask aclnnDropoutGenMaskV2 makes for torch_npu on Atlas A2/A3;
 * without a mask tensor (aclnnFlashAttentionScoreV4 on Ascend 950, seed and offset) the kernel makes
 * the same bits from the emulator's Philox stream (kernels/philox.h): statistical fidelity.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/philox.h"
#include "ops/attention/fa.h"

int64_t fa_elem(const fa_plan *p, const pyaclnn_stub_tensor *t, int kv, int64_t hd, int64_t b, int64_t n, int64_t s,
                int64_t d) {
    const int64_t *st = t->strides;
    switch (kv == FA_ELEM_OUT && p->out_layout ? p->out_layout - 1 : p->layout) {
    case FA_BSH: return t->offset + b * st[0] + s * st[1] + (n * hd + d) * st[2];
    case FA_SBH: return t->offset + s * st[0] + b * st[1] + (n * hd + d) * st[2];
    case FA_BSND: return t->offset + b * st[0] + s * st[1] + n * st[2] + d * st[3];
    case FA_BNSD: return t->offset + b * st[0] + n * st[1] + s * st[2] + d * st[3];
    case FA_NSD: return t->offset + n * st[0] + s * st[1] + d * st[2];
    default: return t->offset + ((kv == 1 ? p->cu_kv[b] : p->cu_q[b]) + s) * st[0] + n * st[1] + d * st[2];
    }
}

/* The compressed mask's boundary at diagonal d (1: the position is out). */
static int compressed(const pyaclnn_stub_tensor *m, int64_t d) {
    if (d >= 2048) return 1;
    if (d <= -2048) return 0;
    int64_t r = d >= 0 ? 0 : -d, c = d >= 0 ? d : 0;   /* the last two dims ([1, 1,] 2048, 2048) */
    return *tv_at(m, m->offset + r * m->strides[m->ndim - 2] + c * m->strides[m->ndim - 1]) != 0;
}

/* A band from the lower-right corner: out right of nextTokens and left of preTokens. */
static int band(const pyaclnn_stub_tensor *m, int64_t i, int64_t j, int64_t shift, int64_t pre, int64_t next) {
    return compressed(m, j - i - shift - next) || compressed(m, i - j + shift - pre);
}

int fa_masked(const fa_plan *p, const pyaclnn_stub_tensor *mask, int64_t b, int64_t n, int64_t i, int64_t j) {
    int64_t shift = fa_s2(p, b) - fa_s1(p, b);   /* the lower-right corner's diagonal */
    switch (p->sparse) {
    case 0:
    case 1:
    case 5:
        if (p->mask_kind != FA_MASK_FULL && p->mask_kind != FA_MASK_STRIDED) return 0;
        if (p->sparse == 0 && (j - i > p->next || i - j > p->pre)) return 1;
        if (p->mask_kind == FA_MASK_STRIDED)
            return *tv_at(mask, mask->offset + b * p->mask_st[0] + n * p->mask_st[1] + i * p->mask_st[2] +
                                j * p->mask_st[3]) != 0;
        {
            const int64_t *st = mask->strides;
            int64_t off = mask->offset + i * st[mask->ndim - 2] + j * st[mask->ndim - 1];
            if (mask->ndim == 4) off += (p->mask_b == 1 ? 0 : b * st[0]) + (p->mask_n == 1 ? 0 : n * st[1]);
            return *tv_at(mask, off) != 0;
        }
    case 2: return compressed(mask, j - i);
    case 3: return compressed(mask, j - i - shift);
    case 4: return band(mask, i, j, shift, p->pre, p->next);
    case 6: return compressed(mask, j - i - shift) && !(b < p->n_prefix && j < p->prefix[b]);
    case 7: return b == p->last_band ? band(mask, i, j, shift, p->pre, p->next) : compressed(mask, j - i - shift);
    default: return b == p->first_band ? band(mask, i, j, shift, p->pre, p->next) : compressed(mask, j - i);
    }
}

int64_t fa_paged_elem(const fa_plan *p, const int32_t *ids, int64_t per, const pyaclnn_stub_tensor *t, int64_t hd,
                      int64_t b, int64_t n2, int64_t s, int64_t d) {
    int64_t blk = ids[b * per + s / p->block_size], r = s % p->block_size;
    const int64_t *st = t->strides;
    if (p->paged_bnbsd) return t->offset + blk * st[0] + n2 * st[1] + r * st[2] + d * st[3];
    return t->offset + blk * st[0] + r * st[1] + (n2 * hd + d) * st[2];
}

int32_t *fa_paged_ids(const fa_plan *p, const pyaclnn_stub_launch *launch, const pyaclnn_stub_tensor *bt) {
    int64_t per = bt->shape[1];
    int32_t *ids = malloc(sizeof(int32_t) * (size_t)(p->B * per + 1));
    if (ids == NULL) {
        tv_fail_oom(launch);
        return NULL;
    }
    for (int64_t b = 0; b < p->B; b++)
        for (int64_t k = 0; k < per; k++) {
            int32_t blk;
            memcpy(&blk, tv_at(bt, bt->offset + b * bt->strides[0] + k * bt->strides[1]), 4);
            ids[b * per + k] = blk;
            if (k * p->block_size < fa_s2(p, b) && (blk < 0 || blk >= p->block_num)) {
                pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "%s: blockTable[%lld][%lld] = %d is not a block of "
                                       "the cache's %lld", launch->op_name, (long long)b, (long long)k, (int)blk,
                                       (long long)p->block_num);
                free(ids);
                return NULL;
            }
        }
    return ids;
}

int64_t fa_pse_elem(const fa_plan *p, const pyaclnn_stub_tensor *pse, int64_t b, int64_t n, int64_t i, int64_t j) {
    const int64_t *st = pse->strides;
    return pse->offset + (p->pse_b == 1 ? 0 : b * st[0]) + n * st[1] + (p->pse_s1 == 1 ? 0 : i * st[2]) + j * st[3];
}

float fa_logit(const fa_plan *p, const pyaclnn_stub_tensor *pse, int64_t b, int64_t n, int64_t i, int64_t j, float s) {
    if (p->pse_kind == FA_PSE_TENSOR) {
        float v = fa_load(pse, fa_pse_elem(p, pse, b, n, i, j));
        return p->pse_type == 1 ? (s + v) * p->scale : s * p->scale + v;
    }
    if (p->pse_kind == FA_PSE_ALIBI) {
        int64_t k = p->alibi_per_batch ? b * p->N1 + n : n;
        float slope = fa_load(pse, tv_offset(pse, k));
        float pos = fabsf((float)((p->kv_start + j) - (p->q_start + i)));
        if (p->pse_type == 3) pos = sqrtf(pos);
        return s * p->scale + pos * slope;
    }
    return s * p->scale;
}

int64_t fa_drop_base(const fa_plan *p, int64_t b) {
    if (p->layout != FA_TND) return b * p->N1 * p->S1 * p->S2;
    int64_t base = 0;
    for (int64_t x = 0; x < b; x++) base += fa_s1(p, x) * fa_s2(p, x);
    return p->N1 * base;
}

int fa_keep(const fa_plan *p, const pyaclnn_stub_tensor *drop, int64_t k) {
    if (p->dropout == FA_DROP_NONE) return 1;
    if (p->dropout == FA_DROP_PHILOX) {
        uint32_t w[4];
        rnd_philox(p->seed, p->offset, (uint64_t)k, w);
        return rnd_u24(w[0]) < p->keep;
    }
    return (*tv_at(drop, tv_offset(drop, k / 8)) >> (k % 8)) & 1;
}

int64_t fa_stat_row(const fa_plan *p, int64_t b, int64_t n, int64_t i) {
    if (p->layout != FA_TND) return (b * p->N1 + n) * p->S1 + i;
    if (p->tnd_softmax) return (p->cu_q[b] + i) * p->N1 + n;
    return p->N1 * p->cu_q[b] + n * fa_s1(p, b) + i;
}

float fa_round(float x, aclDataType dt) {
    if (dt == ACL_BF16) {
        if (isnan(x)) return x;
        uint32_t u;
        memcpy(&u, &x, 4);
        u = (u + 0x8000u) & 0xFFFF0000u;   /* sign-magnitude: half an ulp up in magnitude, then truncate */
        memcpy(&x, &u, 4);
        return x;
    }
    if (dt == ACL_FLOAT16) {
        if (!isfinite(x)) return x;
        double a = fabs((double)x);
        if (a >= 65520.0) return x > 0 ? INFINITY : -INFINITY;
        int e;
        frexp(a, &e);                          /* a = m * 2^e, m in [0.5, 1) */
        double ulp = ldexp(1.0, (e - 1 < -14 ? -14 : e - 1) - 10);
        double r = floor(a / ulp + 0.5) * ulp;
        return (float)(x < 0 ? -r : r);
    }
    return x;
}

float fa_load(const pyaclnn_stub_tensor *t, int64_t off) {
    const unsigned char *q = tv_at(t, off);
    if (t->dtype == ACL_FLOAT) {
        float v;
        memcpy(&v, q, 4);
        return v;
    }
    if (t->dtype == ACL_BF16) {
        uint32_t u = (uint32_t)(q[0] | q[1] << 8) << 16;
        float v;
        memcpy(&v, &u, 4);
        return v;
    }
    return (float)ew_load(q, t->dtype).f;
}

void fa_store(const pyaclnn_stub_tensor *t, int64_t off, float x) {
    ew_store(tv_at(t, off), t->dtype, (ew_value){.f = (double)fa_round(x, t->dtype)});
}

float fa_expsub(float x, float m) {
    float d = x - m;
    return (float)exp((double)d);
}
