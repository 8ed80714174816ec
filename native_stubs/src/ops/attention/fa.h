/*
 * FlashAttentionScore and its gradient: the plan phase 1 builds (fa_steps.c) and the kernels run
 * (fa_kernel.c, with the element rules of fa_mask.c). Definitions: flash_attention.toml.
 *
 * Axes as the vendor names them: B batches, N1 query heads, N2 key/value heads (G = N1 / N2 query heads
 * share one: GQA/MQA), S1 query and S2 key/value positions, D the query/key head dim, Dv the value's
 * (D >= Dv). Layouts BSH, SBH (H = N * D), BSND, BNSD and TND (T = the batches' tokens one after the
 * other, actualSeqQLen / actualSeqKvLen their cumulative ends; S1 and S2 are then per batch).
 */
#ifndef PYACLNN_FA_H
#define PYACLNN_FA_H

#include <stdint.h>

#include "kernels/view.h"

#define FA_MAX_BATCH 256   /* TND batches, prefix entries the emulator takes (the vendor: 20000 for TND) */
#define FA_BLOCK 128       /* key/value positions per step of the online softmax (s2BaseSize)           */

enum { FA_BSH = 0, FA_SBH, FA_BSND, FA_BNSD, FA_TND, FA_NSD };   /* FA_NSD: BNSD without B (B = 1) */
#define FA_ELEM_OUT 2   /* fa_elem's kv for the attention output: its layout is out_layout when set */
enum { FA_MASK_NONE = 0, FA_MASK_FULL, FA_MASK_COMPRESSED, FA_MASK_STRIDED };
enum { FA_PSE_NONE = 0, FA_PSE_TENSOR, FA_PSE_ALIBI };
enum { FA_DROP_NONE = 0, FA_DROP_TENSOR, FA_DROP_PHILOX };
enum { FA_STATS = 0, FA_LSE, FA_LSE_NONE };

/* Forward executor tensors (flash_attention.toml inputs/outputs). */
enum { FA_IN_Q = 0, FA_IN_K, FA_IN_V, FA_IN_PSE, FA_IN_DROP, FA_IN_MASK };
enum { FA_OUT_MAX = 0, FA_OUT_SUM, FA_OUT_ATTN };
/* The inference forms (fia.toml) add the paged cache's block table; their softmaxLse is in FA_OUT_MAX. */
enum { FA_IN_BT = FA_IN_MASK + 1 };
/* ... and the antiquant parameters of an INT8 key/value (fa_antiquant.c): key's scale and offset, value's. */
enum { FA_IN_KS = FA_IN_BT + 1, FA_IN_KO, FA_IN_VS, FA_IN_VO, FA_IN_QS2, FA_IN_QO2, FA_N_IN };
/* The post-quant INT8 output (quantScale2 / quantOffset2: FA_IN_QS2 / FA_IN_QO2, fa_post_quant.c). */
enum { FA_PQ_NONE = 0, FA_PQ_TENSOR, FA_PQ_CHANNEL };
/* INT8 / INT4 key/value: Atlas A2's MSD decode kernel, or the Ascend 950's dequantisation ahead of the float kernel. */
enum { FA_AQ_NONE = 0, FA_AQ_MSD, FA_AQ_DEQUANT };
/* Gradient executor tensors. */
enum { FAG_IN_Q = 0, FAG_IN_K, FAG_IN_V, FAG_IN_DY, FAG_IN_PSE, FAG_IN_DROP, FAG_IN_MASK, FAG_IN_MAX, FAG_IN_SUM,
       FAG_IN_ATTN };
enum { FAG_OUT_DQ = 0, FAG_OUT_DK, FAG_OUT_DV, FAG_OUT_DPSE };

typedef struct {
    int layout;                          /* FA_BSH ...                                                    */
    int out_layout;                      /* the inference forms' "_"-joined layouts: output layout + 1 (0: layout) */
    int64_t B, N1, N2, G, S1, S2, D, Dv; /* S1, S2: per batch for TND (the largest)                       */
    int64_t cu_q[FA_MAX_BATCH + 1];      /* TND: first token of batch b (cu_q[B] = tokens in use)          */
    int64_t cu_kv[FA_MAX_BATCH + 1];
    int64_t prefix[FA_MAX_BATCH];        /* sparse mode 6: the prefix N of each batch                       */
    int64_t n_prefix;
    int64_t q_start, kv_start;           /* qStartIdx[0], kvStartIdx[0]: inner pse positions                */
    float scale;                         /* scaleValue as fp32 (the kernel's scalar)                        */
    float keep, div;                     /* keepProb and 1 / keepProb in fp32                              */
    int dropout;                         /* FA_DROP_*                                                      */
    uint64_t seed, offset;               /* FA_DROP_PHILOX                                                 */
    int64_t pre, next;                   /* preTokens, nextTokens                                          */
    int sparse;                          /* sparseMode 0..8                                                */
    int invalid_rows;                    /* fully masked rows give 0 (innerPrecise 2, or implied)          */
    int mask_kind;                       /* FA_MASK_*                                                      */
    int64_t mask_b, mask_n;              /* FA_MASK_FULL: the mask's B and N (1: broadcast)                */
    int pse_kind;                        /* FA_PSE_*                                                       */
    int pse_type;                        /* 0: scale * S + pse, 1: scale * (S + pse), 2/3: inner alibi     */
    int64_t pse_b, pse_s1;               /* FA_PSE_TENSOR: the pse's B and S1 (1: broadcast)               */
    int alibi_per_batch;                 /* FA_PSE_ALIBI: slopes [B, N1] (else [N1])                       */
    int tnd_softmax;                     /* TND softmax max/sum as [T, N1, 8] ("same_as_input")            */
    int first_band, last_band;           /* sparse 8 / 7: the batch that is the band                       */
    aclDataType dtype;                   /* query's (the inputs' and outputs' dtype)                       */
    /* The inference forms (FusedInferAttentionScore, fia_plan.c): */
    int lens;                            /* per-batch lengths in cu_q / cu_kv over padded B.. storage         */
    int lse;                             /* FA_LSE: softmaxLse (FA_OUT_MAX, one fp32 per row) instead of max
                                          * and sum (FA_STATS), FA_LSE_NONE: no statistics                 */
    int paged;                           /* key/value: the block cache, the block table inputs[FA_IN_BT]       */
    int paged_bnbsd;                     /* cache [blockNum, N2, blockSize, D] (else [blockNum, blockSize, H]) */
    int64_t block_size, block_num;
    int64_t mask_st[4];                  /* FA_MASK_STRIDED: the mask's element strides per b, n, i, j (0:
                                          * broadcast)                                                     */
    /* INT8 / INT4 key/value (fa_antiquant.c) and the post-quant INT8 output (fa_post_quant.c): */
    int antiquant;                       /* FA_AQ_*                                                           */
    int kv_packed;                       /* key/value INT32 words of 8 INT4 (element 8j + q in bits 4q..4q+3) */
    int msd_iters;                       /* the query's / P's pieces: 3 (innerPrecise 0) or 2; INT4 4         */
    int aq_offset;                       /* the offsets are given                                             */
    int aq_per_tensor;                   /* one scale (and offset) for all of key, one for value              */
    int aq_split;                        /* key/valueAntiquantScale (else antiquantScale's two halves)        */
    int aq_per_token;                    /* antiquantMode 1: scale / offset per key/value position ([., B, S]) */
    int64_t aq_seq;                      /* per-token: the parameters' S                                       */
    int post_quant;                      /* FA_PQ_*: INT8 attentionOut from quantScale2 (/ quantOffset2)       */
    int post_quant_offset;               /* quantOffset2 given                                                */
    int post_quant_950;                  /* the Ascend 950's step (arch35 vf_post_quant.h), else Atlas A2's   */
    aclDataType post_quant_dtype;        /* INT8; on the Ascend 950 also FLOAT8_E4M3FN or HIFLOAT8             */
    int64_t aq_base[2];                  /* logical index of the key's / value's first parameter              */
} fa_plan;

/* Batch b's query / key-value positions. */
static inline int64_t fa_s1(const fa_plan *p, int64_t b) {
    return p->layout == FA_TND || p->lens ? p->cu_q[b + 1] - p->cu_q[b] : p->S1;
}
static inline int64_t fa_s2(const fa_plan *p, int64_t b) {
    return p->layout == FA_TND || p->lens ? p->cu_kv[b + 1] - p->cu_kv[b] : p->S2;
}

/* Offset (elements from the storage base) of element (b, n, s, d) of a query-like (kv = 0) or key-like
 * (kv = 1) tensor t of the plan's layout whose head dim is hd. */
int64_t fa_elem(const fa_plan *p, const pyaclnn_stub_tensor *t, int kv, int64_t hd, int64_t b, int64_t n, int64_t s,
                int64_t d);

/* Offset of element (b, n2, s, d) of the paged cache t (key or value, head dim hd): row s % blockSize of block
 * ids[b * per + s / blockSize], ids the block table as fa_paged_ids read it (per ids a batch). */
int64_t fa_paged_elem(const fa_plan *p, const int32_t *ids, int64_t per, const pyaclnn_stub_tensor *t, int64_t hd,
                      int64_t b, int64_t n2, int64_t s, int64_t d);
/* The block table's ids [B, per] read once, before any output is written (an output may overlap the table), each
 * one the plan's kv lengths reach checked to be in [0, blockNum): NULL and a device fault recorded otherwise (or
 * out of memory). Free it with free(). */
int32_t *fa_paged_ids(const fa_plan *p, const pyaclnn_stub_launch *launch, const pyaclnn_stub_tensor *bt);

/* The INT8 key/value head (b, n) of the decode path (p->antiquant): the vendor's MSD steps; 0 when out of
 * memory. */
int fa_antiquant_head(const fa_plan *p, const pyaclnn_stub_launch *l, const int32_t *ids, int64_t b, int64_t n);

/* FA_AQ_DEQUANT: element (s, d) of kv head n2 of batch b of the key (which FA_IN_K) or value dequantised as the
 * Ascend 950 does it (fa_antiquant.c). */
float fa_dequant_elem(const fa_plan *p, const pyaclnn_stub_launch *l, const int32_t *ids, int which, int64_t b,
                      int64_t n2, int64_t s, int64_t d);
/* a + b (fp16 / bf16 values) rounded once to nearest even in dtype dt. */
float fa_add_rne(float a, float b, aclDataType dt);

/* Row i of head n of batch b of the INT8 attentionOut from its fp32 values o [Dv] (p->post_quant). */
void fa_post_quant_row(const fa_plan *p, const pyaclnn_stub_launch *l, int64_t b, int64_t n, int64_t i,
                       const float *o);

/* 1 if position (i, j) of head n of batch b is masked (sparse mode, band, atten mask). */
int fa_masked(const fa_plan *p, const pyaclnn_stub_tensor *mask, int64_t b, int64_t n, int64_t i, int64_t j);
/* x = the score after scale and pse (the vendor's order for the plan's pse type); s the fp32 Q.K^T. */
float fa_logit(const fa_plan *p, const pyaclnn_stub_tensor *pse, int64_t b, int64_t n, int64_t i, int64_t j, float s);
/* Offset of the pse element (b, n, i, j) (FA_PSE_TENSOR). */
int64_t fa_pse_elem(const fa_plan *p, const pyaclnn_stub_tensor *pse, int64_t b, int64_t n, int64_t i, int64_t j);
/* Dropout: position (i, j) of head n of batch b has index fa_drop_base(b) + (n * S1_b + i) * S2_b + j; fa_keep
 * is 1 if the position with index k is kept (always without dropout). */
int64_t fa_drop_base(const fa_plan *p, int64_t b);
int fa_keep(const fa_plan *p, const pyaclnn_stub_tensor *drop, int64_t k);
/* Index of row (b, n, i) in softmaxMax / softmaxSum (times 8 for the element). */
int64_t fa_stat_row(const fa_plan *p, int64_t b, int64_t n, int64_t i);

/* x rounded to dtype dt (fp16/bf16: to nearest, ties away from zero -- the vector unit's CAST_ROUND; fp32:
 * itself), as a float. */
float fa_round(float x, aclDataType dt);
/* The fp32 value of an element (fp16/bf16 widened exactly). */
float fa_load(const pyaclnn_stub_tensor *t, int64_t off);
/* Stores x rounded as fa_round does. */
void fa_store(const pyaclnn_stub_tensor *t, int64_t off, float x);

/* exp(x - m) as the vector unit's ExpSub: the fp32 difference, its exponential rounded to fp32. */
float fa_expsub(float x, float m);

/* Phase 1 (fa_steps.c, fa_plan.c): the call's plan (the parameter block), and the axes of a layout
 * (AnalysisAxis: 1, -1 if query's and key's head dims differ, 0 if the layout and rank do not match). */
struct op_call;
fa_plan *fa_plan_of(struct op_call *c);
int fa_axes(fa_plan *p, const pyaclnn_stub_tensor *q, const pyaclnn_stub_tensor *k, const pyaclnn_stub_tensor *v,
            const char *layout, int64_t head_num);

#define FA_NEG_MIN (-3.40282346638528859812e+38f)   /* the masked value: -FLT_MAX (NEGATIVE_MIN_VALUE_FP32) */

#endif
