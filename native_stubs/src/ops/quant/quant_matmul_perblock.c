/*
 * aclnnQuantMatmulV5 on Ascend 950, the G-B / B-B (per-block) modes with FLOAT8 / HIFLOAT8 x1, x2: FLOAT x1Scale
 * [..., ceil(M/gsM), ceil(K/128)] (gsM 1: G-B, 128: B-B; [..., ceil(K/128), ceil(M/gsM)] with transposeX1) and FLOAT
 * x2Scale [..., ceil(K/128), ceil(N/128)] ([..., ceil(N/128), ceil(K/128)] with transposeX2) (hicann/ops-nn matmul/
 * quant_batch_matmul_v3/op_api/quant_matmul_checker.cpp: CheckPerblockGroupSize, CheckDimValuePerblock,
 * CheckGroupSizeShape; the kernel qbmm_mix_pertile_cmct.h with cmct epilogue/block_epilogue_pertile.h). The steps
 * are called from quant_matmul.c's qmm_check at their places; definitions: quant_matmul.toml.
 *
 * Kernel, per output: for each K-block of 128 the cube's fp32 sum of its products (k order here: the cube's order is
 * not published), then on the vector unit (AivPerTensor) scale = fp32(x1Scale * x2Scale), term = fp32(sum * scale),
 * acc = term for the first block and fp32(acc + term) after; the out cast with CAST_RINT. No bias (the checker
 * refuses one).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/view.h"
#include "opbase/checks.h"
#include "quant/fp8_dequant.h"
#include "quant/quant_matmul.h"

#define X1S "x1Scale(pertokenScale)"
#define X2S "x2Scale(scale)"
#define PB 128

static int64_t pb_ceil(int64_t x, int64_t y) { return (y != 0 && x != 0) ? (x + y - 1) / y : x; }   /* CeilDiv */

aclnnStatus qmm_pb_group_size(op_call *c, int64_t group) {
    uint64_t g = (uint64_t)group, gm = g >> 32 & 0xFFFF, gn = g >> 16 & 0xFFFF, gk = g & 0xFFFF;
    char v[24];
    if (gk != PB)
        return op_ez_reason(c->api, 0, "groupSizeK", "value", (snprintf(v, sizeof v, "%llu", (unsigned long long)gk), v),
                            "when the quantization mode is G-B or B-B, groupSizeK must be 128");
    if (gn != PB)
        return op_ez_reason(c->api, 0, "groupSizeN", "value", (snprintf(v, sizeof v, "%llu", (unsigned long long)gn), v),
                            "when the quantization mode is G-B or B-B, groupSizeN must be 128");
    if (gm != PB && gm != 1)
        return op_ez_reason(c->api, 0, "groupSizeM", "value", (snprintf(v, sizeof v, "%llu", (unsigned long long)gm), v),
                            "when the quantization mode is G-B or B-B, groupSizeM must be 128 or 1");
    return ACLNN_SUCCESS;
}

/* CheckGroupSizeShape: each scale dim against its x dim ceil-divided by the group size */
static aclnnStatus pb_dim(op_call *c, const char *names, int64_t xv, int64_t sv, uint64_t gsm, const char *reason) {
    char v[80];
    if (gsm)
        snprintf(v, sizeof v, "%lld, %lld, %llu", (long long)xv, (long long)sv, (unsigned long long)gsm);
    else
        snprintf(v, sizeof v, "%lld, %lld", (long long)xv, (long long)sv);
    return op_ez_reason(c->api, 1, names, "values", v, "%s", reason);
}

aclnnStatus qmm_pb_dim_value(op_call *c, const pyaclnn_stub_tensor *x1, const pyaclnn_stub_tensor *x2,
                             const pyaclnn_stub_tensor *s1, const pyaclnn_stub_tensor *s2, int t1, int t2,
                             int64_t group) {
    int64_t d1 = x1->ndim, d2 = x2->ndim;
    uint64_t gsm = (uint64_t)group >> 32 & 0xFFFF;
    char v[80];
    if (gsm == 0) gsm = 1;
    if (s1->ndim != d1 || s2->ndim != d2)
        return op_ez_reason(c->api, 1, "x1, " X1S ", x2, " X2S, "shape dims",
                            (snprintf(v, sizeof v, "%lldD, %lldD, %lldD, %lldD", (long long)d1, (long long)s1->ndim,
                                      (long long)d2, (long long)s2->ndim), v),
                            "when the quantization mode is G-B or B-B, the shape dim of %s must be the same as x1, and "
                            "the shape dim of %s must be the same as x2", X1S, X2S);
    for (int64_t i = d1 - 3; i >= 0; i--)
        if (s1->shape[i] != x1->shape[i])
            return op_ez_reason(c->api, 1, "x1 batch dimension, " X1S " batch dimension", "values",
                                (snprintf(v, sizeof v, "%lld, %lld", (long long)x1->shape[i], (long long)s1->shape[i]),
                                 v), "when the quantization mode is G-B or B-B, the batch dimensions of %s must be "
                                "equal to x1", X1S);
    for (int64_t i = d2 - 3; i >= 0; i--)
        if (s2->shape[i] != x2->shape[i])
            return op_ez_reason(c->api, 1, "x2 batch dimension, " X2S " batch dimension", "values",
                                (snprintf(v, sizeof v, "%lld, %lld", (long long)x2->shape[i], (long long)s2->shape[i]),
                                 v), "when the quantization mode is G-B or B-B, the batch dimensions of %s must be "
                                "equal to x2", X2S);
    int64_t mi = d1 - (t1 ? 1 : 2), k1i = d1 - (t1 ? 2 : 1), ni = d2 - (t2 ? 2 : 1), k2i = d2 - (t2 ? 1 : 2);
    if (pb_ceil(x1->shape[mi], (int64_t)gsm) != s1->shape[mi])
        return pb_dim(c, "x1 m, " X1S " m, groupSizeM", x1->shape[mi], s1->shape[mi], gsm, "when the quantization "
                      "mode is G-B or B-B, the m dimension of " X1S " must be equal to ceil(m_x1 / groupSizeM)");
    if (pb_ceil(x1->shape[k1i], PB) != s1->shape[k1i])
        return pb_dim(c, "x1 k, " X1S " k", x1->shape[k1i], s1->shape[k1i], 0, "when the quantization mode is G-B or "
                      "B-B, the k dimension of " X1S " must be equal to ceil(k_x1 / 128)");
    if (pb_ceil(x2->shape[ni], PB) != s2->shape[ni])
        return pb_dim(c, "x2 n, " X2S " n", x2->shape[ni], s2->shape[ni], 0, "when the quantization mode is G-B or "
                      "B-B, the n dimension of " X2S " must be equal to ceil(n_x2 / 128)");
    if (pb_ceil(x2->shape[k2i], PB) != s2->shape[k2i])
        return pb_dim(c, "x2 k, " X2S " k", x2->shape[k2i], s2->shape[k2i], 0, "when the quantization mode is G-B or "
                      "B-B, the k dimension of " X2S " must be equal to ceil(k_x2 / 128)");
    return ACLNN_SUCCESS;
}

/* ---- kernel --------------------------------------------------------------------------------------------------- */

/* a scale as the op_api reads it: its storage when TensorContiguousProcess swapped a transposed view */
static float *pb_scale(const pyaclnn_stub_tensor *t, int swap) {
    pyaclnn_stub_tensor v = *t;
    if (swap) {
        int64_t d = v.ndim, a = v.shape[d - 1], s = v.strides[d - 1];
        v.shape[d - 1] = v.shape[d - 2], v.strides[d - 1] = v.strides[d - 2];
        v.shape[d - 2] = a, v.strides[d - 2] = s;
    }
    return tv_load_float(&v);
}

void qmm_pb_kernel(const pyaclnn_stub_launch *launch, const qmm_params *p) {
    const pyaclnn_stub_tensor *in = launch->inputs;
    int64_t M = p->m, K = p->k, N = p->n, batch = 1;
    int64_t Mb = pb_ceil(M, p->pb_gsm), Kb = pb_ceil(K, PB), Nb = pb_ceil(N, PB);
    for (int64_t i = 0; i < p->nb; i++) batch *= p->bshape[i];
    float *a = tv_load_float(&in[0]), *w = tv_load_float(&in[1]);
    float *s1 = pb_scale(&in[2], p->s1_swap), *s2 = pb_scale(&in[3], p->s2_swap);
    float *res = tv_alloc(batch * M * N, sizeof(float));
    if (!a || !w || !s1 || !s2 || !res) {
        tv_fail_oom(launch);
        goto done;
    }
    for (int64_t b = 0; b < batch; b++) {
        int64_t o1, o2;
        qmm_batch_offsets(p, b, &o1, &o2);
        const float *x = a + o1 * M * K, *y = w + o2 * K * N, *sa = s1 + o1 * Mb * Kb, *sb = s2 + o2 * Kb * Nb;
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                float acc = 0.0f;
                for (int64_t kb = 0; kb < Kb; kb++) {
                    int64_t k0 = kb * PB, len = K - k0 < PB ? K - k0 : PB, mi = i / p->pb_gsm, nj = j / PB;
                    float part = fp8_dot(p->trans1 ? x + k0 * M + i : x + i * K + k0, p->trans1 ? M : 1,
                                         p->trans2 ? y + j * K + k0 : y + k0 * N + j, p->trans2 ? 1 : N, len);
                    float sc = sa[p->s1_kmajor ? kb * Mb + mi : mi * Kb + kb] *
                               sb[p->s2_kmajor ? kb * Nb + nj : nj * Kb + kb];
                    float term = part * sc;
                    acc = kb == 0 ? term : acc + term;
                }
                res[(b * M + i) * N + j] = acc;
            }
    }
    tv_store_float(&launch->outputs[0], res);   /* CAST_RINT to FLOAT16 / BFLOAT16; FLOAT as it is */
done:
    free(a), free(w), free(s1), free(s2), free(res);
}
