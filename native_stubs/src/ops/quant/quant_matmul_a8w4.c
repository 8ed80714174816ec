/*
 * aclnnQuantMatmulV5, A8W4 on Atlas A2 (hicann/ops-nn matmul/quant_batch_matmul_v4: op_api aclnn_quant_matmul_v5.cpp,
 * op_tiling quant_batch_matmul_v4_msd_tiling.cpp, op_kernel quant_batch_matmul_v4_msd.h). x1 INT8 [M, K], x2 INT32
 * [K, N / 8] (or [N, K / 8] with transposeX2) holding eight INT4 each, lowest nibble first, x1Scale FLOAT [M] / [M, 1],
 * x2Scale UINT64 / INT64 words [N] (per-channel, groupSize 0) or [ceil(K / 256), N] (per-group, groupSize 256),
 * yOffset FLOAT [N], out FLOAT16 / BFLOAT16 [M, N]; bias and yScale must be null. Definitions: quant_matmul.toml.
 *
 * The kernel (MSD: x1 split in two INT4 halves): hi = floor(x / 16) (Muls 1/16, CAST_FLOOR), lo = (x & 15) - 8, so
 * x = 16 hi + lo + 8 (the 8 * sum(w * scale) term is the caller's, in yOffset). The cube multiplies the [2M, K] INT4
 * rows by x2 in int32 per K-group and the fixpipe dequantises each group's sum with its UINT64 word to fp16
 * (SetQuantVector), the groups added into an fp16 workspace in K order (GetTensorC with atomic add after the first).
 * The vector then: fp32(lo) + 16 * fp32(hi), + yOffset[n], * x1Scale[m], in fp32 each, CAST_RINT to out.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/device.h"
#include "kernels/dtype.h"
#include "kernels/view.h"
#include "numerics/numerics.h"
#include "opbase/checks.h"
#include "ops_decls.h"
#include "quant/a8w8_dequant.h"
#include "quant/quant_matmul.h"

#define A8W4_GROUP 256      /* SUPPORTED_GROUP_SIZE_A8W4_INT */
#define A8W4_MAX_K 29576    /* MAX_SHAPE_SIZE_A8W4_INT */

static int a8w4_nonempty(const pyaclnn_stub_tensor *t) {
    if (!t->present) return 0;
    for (int64_t i = 0; i < t->ndim; i++)
        if (t->shape[i] == 0) return 0;
    return 1;
}

static void a8w4_swap_last2(pyaclnn_stub_tensor *t) {
    int64_t d = t->ndim, a = t->shape[d - 1], s = t->strides[d - 1];
    t->shape[d - 1] = t->shape[d - 2], t->strides[d - 1] = t->strides[d - 2];
    t->shape[d - 2] = a, t->strides[d - 2] = s;
}

/* OP_CHECK_DTYPE_NOT_SUPPORT's message */
static aclnnStatus a8w4_dtype_in(op_call *c, const char *name, aclDataType dt, const aclDataType *list, int n) {
    for (int i = 0; i < n; i++)
        if (list[i] == dt) return ACLNN_SUCCESS;
    char b[24], all[120] = "", x[24];
    for (int i = 0; i < n; i++) {
        strncat(all, op_dtype_name(list[i], x), sizeof all - strlen(all) - 1);
        if (i + 1 < n) strncat(all, ",", sizeof all - strlen(all) - 1);
    }
    return op_invalidf(c->api, "Tensor %s not implemented for %s, should be in dtype support list [%s].", name,
                       op_dtype_name(dt, b), all);
}

/* The checks from PreMatmulCalcProcess's A8W4 branch on (after CheckInputExistence, which qmm_check ran): the
 * operands as the op_api holds them after TensorContiguousProcess, CheckInputAttrExistence, CheckDimRangeA8W4,
 * A4W4CaseProcess, then CheckParamsA8W4Int (SoC, CheckDtypeA8W4Int, CheckFormat, CheckShape) and the MSD tiling's
 * own refusal. */
aclnnStatus qmm_a8w4_check(op_call *c, const op_step *s) {
    pyaclnn_stub_tensor x1 = *op_tensor(c, s, 0), x2 = *op_tensor(c, s, 1), s1 = *op_tensor(c, s, 2),
                        s2 = *op_tensor(c, s, 3);
    const pyaclnn_stub_tensor *ys = op_tensor(c, s, 4), *yo = op_tensor(c, s, 7), *bias = op_tensor(c, s, 8),
                              *out = op_tensor(c, s, 12);
    int t1 = op_argument(c, s, 9)->i != 0, t2 = op_argument(c, s, 10)->i != 0;
    int64_t group = op_argument(c, s, 11)->i;
    /* TensorContiguousProcess: a view transposed in its last two dims is its storage, the flag flipped (the
     * scales' flags are dropped); WeightNZCaseProcess does it for an ND x2 */
    int swap2 = 0, s2swap = 0;
    if (qmm_transposed_view(&x1)) a8w4_swap_last2(&x1), t1 = !t1;
    if (s1.present && qmm_transposed_view(&s1)) a8w4_swap_last2(&s1);
    if ((s2swap = qmm_transposed_view(&s2))) a8w4_swap_last2(&s2);
    if (x2.format == ACL_FORMAT_FRACTAL_NZ || x2.format == ACL_FORMAT_FRACTAL_NZ_C0_16)
        return op_invalidf(c->api, "x2 FORMAT_FRACTAL_NZ: the emulator implements the ND weight only");
    if ((swap2 = qmm_transposed_view(&x2))) a8w4_swap_last2(&x2), t2 = !t2;
    /* CheckInputAttrExistence (A8W4 INT) */
    if (t1) return op_invalidf(c->api, "Only support transposeX1 is false.");
    if (s2.ndim == 1 && group != 0)
        return op_invalidf(c->api, "A8W4 [int8/4] perchannel only support groupSize equal to 0.");
    if (s2.ndim != 1 && group != A8W4_GROUP)
        return op_invalidf(c->api, "A8W4 [int8/4] pergroup only support groupSize equal to 256.");
    /* CheckDimRangeA8W4 (its x1Scale message gives the two ranks swapped, as the source does) */
    if (x1.ndim != 2)
        return op_invalidf(c->api, "The dimension of x1 should be 2. Actual x1 dimension: %lld.", (long long)x1.ndim);
    if (x2.ndim != 2)
        return op_invalidf(c->api, "The dimension of x2 should be 2. Actual x2 dimension: %lld.", (long long)x2.ndim);
    if (bias->present && bias->ndim != 2)
        return op_invalidf(c->api, "The dimension of bias should be 2. Actual bias dimension: %lld.",
                           (long long)bias->ndim);
    if (s2.ndim != 1 && s2.ndim != 2)
        return op_invalidf(c->api, "In A8W4 [int8/4] mode, the dimension of x2Scale should be 1 or 2. Actual x2Scale "
                           "dimension: %lld", (long long)s2.ndim);
    if (s1.present && s1.ndim != s2.ndim)
        return op_invalidf(c->api, "In A8W4 [int8/4] mode, the dimension of x1Scale should equal to that of x2Scale. "
                           "Actual x1Scale dimension: %lld, x2Scale dimension: %lld.", (long long)s2.ndim,
                           (long long)s1.ndim);
    if (ys->present && ys->ndim != 2)
        return op_invalidf(c->api, "The dimension of yScale should be 2. Actual yScale dimension: %lld.",
                           (long long)ys->ndim);
    if (yo->present && yo->ndim != 1)
        return op_invalidf(c->api, "The dimension of yOffset should be 1. Actual yOffset dimension: %lld.",
                           (long long)yo->ndim);
    if (out->ndim != 2)
        return op_invalidf(c->api, "The dimension of y should be 2. Actual y dimension: %lld.", (long long)out->ndim);
    /* A4W4CaseProcess: x2's last dim times eight, INT4 */
    x2.shape[1] *= 8;
    /* CheckParamsA8W4Int: Atlas A2 / A3 only */
    if (ew_soc_is_950()) return op_failf(c->api, ACLNN_ERR_RUNTIME_ERROR, "A8W4Int only Support socversion A2 or A3");
    /* CheckDtypeA8W4Int */
    if (!a8w4_nonempty(&s1))
        return op_invalidf(c->api, "In A8W4_Int mode, x1Scale does not support empty tensor or nullptr.");
    if (!a8w4_nonempty(&s2)) return op_invalidf(c->api, "x2Scale does not support empty tensor or nullptr.");
    if (bias->present || ys->present) return op_invalidf(c->api, "In A8W4_Int mode, bias and yScale must be null.");
    if (!a8w4_nonempty(yo))
        return op_invalidf(c->api, "In A8W4_Int mode, yOffset does not support empty tensor or nullptr.");
    static const aclDataType F32[] = {ACL_FLOAT}, U64[] = {ACL_UINT64}, OUT[] = {ACL_BF16, ACL_FLOAT16};
    aclnnStatus rc;
    aclDataType s2dt = s2.dtype == ACL_INT64 ? ACL_UINT64 : s2.dtype;   /* re-typed before the dtype checks */
    if ((rc = a8w4_dtype_in(c, "x1Scale", s1.dtype, F32, 1)) || (rc = a8w4_dtype_in(c, "x2Scale", s2dt, U64, 1)) ||
        (rc = a8w4_dtype_in(c, "yOffset", yo->dtype, F32, 1)) || (rc = a8w4_dtype_in(c, "out", out->dtype, OUT, 2)))
        return rc;
    /* CheckFormat (CHECK_RET, no message): x1, the scales re-formatted to ND unless FRACTAL_NZ; yOffset and out as
     * given */
    if (x1.format == ACL_FORMAT_FRACTAL_NZ || s1.format == ACL_FORMAT_FRACTAL_NZ || s2.format == ACL_FORMAT_FRACTAL_NZ ||
        yo->format != ACL_FORMAT_ND || out->format != ACL_FORMAT_ND)
        return op_invalidf(c->api, "the storage formats of x1, the scales, yOffset and out must be ND");
    /* CheckShape */
    int64_t m = x1.shape[0], k1 = x1.shape[1], k2 = t2 ? x2.shape[1] : x2.shape[0], n = t2 ? x2.shape[0] : x2.shape[1];
    if (m <= 0) return op_invalidf(c->api, "the m-dim must > 0, which is %lld", (long long)m);
    if (k1 <= 0 || k1 > A8W4_MAX_K)
        return op_invalidf(c->api, "the k-dim must in [1, %d], which is %lld", A8W4_MAX_K, (long long)k1);
    if (n <= 0) return op_invalidf(c->api, "the n-dim must be at least 1, which is %lld", (long long)n);
    if (k1 != k2)
        return op_invalidf(c->api, "the k dim of x1 and x2 must be same, which are %lld and %lld", (long long)k1,
                           (long long)k2);
    int64_t align = s2.ndim == 1 ? 2 : A8W4_GROUP, groups = (k2 + A8W4_GROUP - 1) / A8W4_GROUP;
    if (k1 % align)
        return op_invalidf(c->api, "the k dim must be align to %lld, which is %lld", (long long)align, (long long)k1);
    if (s1.ndim == 2 && (s1.shape[0] != m || s1.shape[1] != 1))
        return op_invalidf(c->api, "The x1scale shape must be [%lld, 1] for A8W4[int8/4] pergroup, which are [%lld, "
                           "%lld]", (long long)m, (long long)s1.shape[0], (long long)s1.shape[1]);
    if (s1.ndim == 1 && s1.shape[0] != m)
        return op_invalidf(c->api, "The x1scale shape must be [%lld] for A8W4[int8/4] perchannel, which are [%lld]",
                           (long long)m, (long long)s1.shape[0]);
    /* a 1-D x2Scale's message prints GetDim(1) of its shape: 0 here */
    if (s2.ndim == 2 ? s2.shape[0] != groups || s2.shape[1] != n : s2.shape[0] != n)
        return op_invalidf(c->api, s2.ndim == 2 ? "The x2scale shape must be [%lld, %lld], which are [%lld, %lld]"
                                                : "The x2Scale shape must be [%lld, %lld], which are [%lld, %lld]",
                           (long long)groups, (long long)n, (long long)s2.shape[0],
                           (long long)(s2.ndim == 2 ? s2.shape[1] : 0));
    if (yo->shape[0] != n)
        return op_invalidf(c->api, "The yOffset shape must be [%lld], which is [%lld]", (long long)n,
                           (long long)yo->shape[0]);
    if (out->shape[0] != m || out->shape[1] != n)
        return op_invalidf(c->api, "The out shape must be [%lld, %lld], which are [%lld, %lld]", (long long)m,
                           (long long)n, (long long)out->shape[0], (long long)out->shape[1]);
    /* the MSD tiling (AnalyzeAttrs): per-group only with transposeX2 false */
    if (s2.ndim == 2 && t2)
        return op_failf(c->api, ACLNN_ERR_INNER_TILING_ERROR, "Unsupported value [1] for transposeX2, Only transposeX2 "
                        "= false is supported.");
    qmm_params *p = op_params(c, sizeof *p);
    p->m = m, p->k = k1, p->n = n, p->nb = 0;
    p->trans2 = t2;
    p->out_dt = out->dtype;
    p->a8w4 = 1;
    p->a4_swap2 = swap2;
    p->s2_swap = s2swap;
    p->a8w4_groups = s2.ndim == 2 ? groups : 1;
    return ACLNN_SUCCESS;
}

/* d rounded to fp32 with round-to-odd: a later rounding to fp16 is then d's correct rounding */
static float a8w4_round_odd(double d) {
    float f = (float)d;
    if ((double)f == d) return f;
    uint32_t u;
    memcpy(&u, &f, 4);
    if (fabs((double)f) > fabs(d)) u -= 1;
    u |= 1;
    memcpy(&f, &u, 4);
    return f;
}

/* the fp16 workspace's atomic add of two fp16 values, rounded once */
static uint16_t a8w4_f16_add(uint16_t a, uint16_t b) {
    return num_f32_to_f16(a8w4_round_odd((double)num_f16_to_f32(a) + (double)num_f16_to_f32(b)));
}

/* one row half (hi or lo, K values) against x2's column j, group by group: the fp16 workspace value */
static uint16_t a8w4_half_row(const int8_t *h, const int8_t *w, const unsigned char *words, const qmm_params *p,
                              int64_t j) {
    int64_t K = p->k, N = p->n, gs = K / p->a8w4_groups;
    uint16_t acc16 = 0;
    for (int64_t g = 0; g < p->a8w4_groups; g++) {
        const int8_t *wc = p->trans2 ? w + j * K + g * gs : w + g * gs * N + j;
        int32_t acc = a8w8_dot(h + g * gs, 1, wc, p->trans2 ? 1 : N, gs);
        uint64_t word;
        memcpy(&word, words + 8 * (g * N + j), 8);
        uint16_t part = num_f32_to_f16(a8w8_fixpipe_float(acc, word));
        acc16 = g == 0 ? part : a8w4_f16_add(acc16, part);
    }
    return acc16;
}

void qmm_a8w4_kernel(const pyaclnn_stub_launch *launch, const qmm_params *p) {
    const pyaclnn_stub_tensor *tx1 = &launch->inputs[0], *tx2 = &launch->inputs[1], *ts1 = &launch->inputs[2],
                              *ts2 = &launch->inputs[3], *tyo = &launch->inputs[6], *out = &launch->outputs[0];
    int64_t M = p->m, K = p->k, N = p->n;
    pyaclnn_stub_tensor s2v = *ts2;
    if (p->s2_swap) a8w4_swap_last2(&s2v);   /* the scale read as its storage (TensorContiguousProcess) */
    int8_t *x1 = (int8_t *)tv_gather_bytes(tx1), *x2 = qmm_int4_unpack(tx2, p->a4_swap2);
    unsigned char *words = tv_gather_bytes(&s2v);
    float *s1 = tv_load_float(ts1), *yo = tv_load_float(tyo), *res = tv_alloc(M * N, sizeof(float));
    int8_t *hi = tv_alloc(K, 1), *lo = tv_alloc(K, 1);
    if (!x1 || !x2 || !words || !s1 || !yo || !res || !hi || !lo) {
        tv_fail_oom(launch);
        goto done;
    }
    for (int64_t i = 0; i < M; i++) {
        for (int64_t q = 0; q < K; q++) {   /* QuantBatchMatmulV4MsdPre: x = 16 hi + lo + 8 */
            int v = x1[i * K + q];
            hi[q] = (int8_t)((v - (v & 15)) / 16);   /* floor(v / 16) */
            lo[q] = (int8_t)((v & 15) - 8);
        }
        for (int64_t j = 0; j < N; j++) {
            float fh = num_f16_to_f32(a8w4_half_row(hi, x2, words, p, j));
            float fl = num_f16_to_f32(a8w4_half_row(lo, x2, words, p, j));
            float f = fl + fh * 16.0f;
            f = f + yo[j];
            res[i * N + j] = f * s1[i];
        }
    }
    tv_store_float(out, res);   /* CAST_RINT to FLOAT16 / BFLOAT16 */
done:
    free(x1), free(x2), free(words), free(s1), free(yo), free(res), free(hi), free(lo);
}
