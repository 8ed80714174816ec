/*
 * aclnnQuantMatmulV5 on Ascend 950, the MX mode: x1, x2 FLOAT8_E4M3FN / FLOAT8_E5M2 (either mix) or both FLOAT4_E2M1,
 * x1Scale and x2Scale FLOAT8_E8M0, one scale per 32 elements of K (hicann/ops-nn matmul/quant_batch_matmul_v4
 * op_api aclnn_quant_matmul_v5.cpp: MxScaleContiguousProcess, the checker's InferGroupSize; matmul/
 * quant_batch_matmul_v3/op_api/quant_matmul_checker.cpp: CheckMicroScaling, CheckMxScaleDimRange, CheckMxGroupSize,
 * CheckDimValueMicroScaling; op_host/op_tiling/arch35/quant_batch_matmul_v3_checker.cpp: MxPertokenScaleShapeCheck,
 * MxScaleShapeCheck; op_kernel/arch35/qbmm_mx_basic_api_cmct.h with matmul/common/cmct/block/block_mmad_mx.h: the
 * MX cube, a FLOAT bias as the L0C's first value, no epilogue). The steps are called from quant_matmul.c's qmm_check
 * at their places in the op_api's order; definitions: quant_matmul.toml.
 *
 * Scales: x1Scale [..., M, ceil(K/64), 2] ([..., ceil(K/64), M, 2] with transposeX1), x2Scale [..., ceil(K/64), N, 2]
 * ([..., N, ceil(K/64), 2] with transposeX2): the scale of row r and K-group g (elements 32g .. 32g + 31) is the
 * byte at (r, g / 2, g % 2) of the row-major layout. Kernel: out = the MX cube's fp32 value (mx_dequant.h) from
 * the bias (or 0), converted by the fixpipe to FLOAT16 / BFLOAT16 (RINT) or kept as FLOAT.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/dtype.h"
#include "kernels/view.h"
#include "opbase/checks.h"
#include "quant/mx_dequant.h"
#include "quant/quant_matmul.h"

#define X1S "x1Scale(pertokenScale)"
#define X2S "x2Scale(scale)"
#define X2O "x2Offset(offset)"
#define TILING_OP "QuantBatchMatmulV3"   /* the tiling's opName: the L0 operator's */

static int64_t mx_ceil64(int64_t x) { return x != 0 ? (x + 63) / 64 : x; }   /* CeilDiv(x, 64) */

/* gert::Shape::GetDim: kInvalidDimValue outside the dims (the op_api indexes with size_t arithmetic) */
static int64_t mx_dim(const pyaclnn_stub_tensor *t, uint64_t idx) {
    return idx < (uint64_t)t->ndim ? t->shape[idx] : INT64_MIN;
}

static int mx_is_fp8(aclDataType d) { return d == ACL_FLOAT8_E4M3FN || d == ACL_FLOAT8_E5M2; }

int qmm_transposed_view(const pyaclnn_stub_tensor *t) {
    if (t->ndim < 2 || t->ndim > 6) return 0;
    int64_t d1 = t->ndim - 1, d2 = t->ndim - 2;
    if (t->strides[d2] != 1 || t->strides[d1] != t->shape[d2]) return 0;
    int64_t span = t->shape[d1] * t->shape[d2];
    for (int64_t b = t->ndim - 3; b >= 0; b--) {
        if (t->strides[b] != span) return 0;
        span *= t->shape[b];
    }
    return !(t->shape[d1] == 1 && t->shape[d2] == 1);
}

int qmm_mx_scale_view(const pyaclnn_stub_tensor *t, pyaclnn_stub_tensor *v) {
    *v = *t;
    int64_t d = t->ndim;
    if (!t->present || d < 3) return 0;
    int64_t last = t->shape[d - 1], second = t->shape[d - 2], third = t->shape[d - 3];
    if (!(t->strides[d - 3] == last && t->strides[d - 2] == last * third)) return 0;
    int64_t span = last * second * third;
    for (int64_t b = d - 4; b >= 0; b--) {
        if (t->strides[b] != span) return 0;
        span *= t->shape[b];
    }
    if (second == 1 && third == 1) return 0;
    v->shape[d - 2] = third, v->shape[d - 3] = second;
    v->strides[d - 2] = t->strides[d - 3], v->strides[d - 3] = t->strides[d - 2];
    return 1;
}

/* ReCalcGroupSize: a given group is kept, a 0 one is inferred as input / scale */
static aclnnStatus mx_recalc(op_call *c, int64_t input, int64_t scale, uint64_t *group, const char *dim) {
    int is_n = strcmp(dim, "n") == 0;
    const char *sname = is_n ? X2S : X1S, *iname = is_n ? "x2" : "x1";
    char what[80], txt[96];
    if (scale == 0) {
        snprintf(what, sizeof what, "%s dimension of %s", dim, sname);
        return op_ez_reason(c->api, 0, what, "value", "0", "the %s dimension of %s must be positive", dim, sname);
    }
    if (*group == 0) {
        if (input % scale != 0) {
            snprintf(what, sizeof what, "groupSize, %s dimension of %s, %s dimension of %s", dim, iname, dim, sname);
            snprintf(txt, sizeof txt, "%llu, %lld, %lld", 0ULL, (long long)input, (long long)scale);
            return op_ez_reason(c->api, 1, what, "values", txt, "when groupSize in %s dimension is 0, the %s dimension "
                                "of %s must be divisible by the %s dimension of %s", dim, dim, iname, dim, sname);
        }
        *group = (uint64_t)(input / scale);
    }
    return ACLNN_SUCCESS;
}

aclnnStatus qmm_infer_group(op_call *c, const pyaclnn_stub_tensor *x1, const pyaclnn_stub_tensor *x2,
                            const pyaclnn_stub_tensor *s1, const pyaclnn_stub_tensor *s2, int t1, int t2,
                            int64_t *group) {
    if (!s1->present || s1->ndim < 2 || s2->ndim < 2) return ACLNN_SUCCESS;
    int mx = s1->dtype == ACL_FLOAT8_E8M0 && s2->dtype == ACL_FLOAT8_E8M0;
    uint64_t g = (uint64_t)*group, gm = g >> 32 & 0xFFFF, gn = g >> 16 & 0xFFFF, gk = g & 0xFFFF;
    int64_t d1 = x1->ndim, d2 = x2->ndim, e1 = s1->ndim, e2 = s2->ndim;
    uint64_t b1 = (uint64_t)e1 - 3, b2 = (uint64_t)e2 - 3;   /* size_t: wraps below 3 dims as the vendor's does */
    aclnnStatus rc;
    int64_t in_m = t1 ? x1->shape[d1 - 1] : x1->shape[d1 - 2];
    int64_t sc_m = mx ? mx_dim(s1, b1 + (t1 ? 1 : 0)) : (t1 ? s1->shape[e1 - 1] : s1->shape[e1 - 2]);
    if ((rc = mx_recalc(c, in_m, sc_m, &gm, "m"))) return rc;
    int64_t in_k = t1 ? x1->shape[d1 - 2] : x1->shape[d1 - 1];
    int64_t sc_k = mx ? (int64_t)((uint64_t)mx_dim(s1, b1 + (t1 ? 0 : 1)) * 2u)   /* wraps as the vendor's int64 */
                      : (t1 ? s1->shape[e1 - 2] : s1->shape[e1 - 1]);
    if ((rc = mx_recalc(c, in_k, sc_k, &gk, "k"))) return rc;
    int64_t in_n = t2 ? x2->shape[d2 - 2] : x2->shape[d2 - 1], sc_n;
    if (mx) {
        sc_n = mx_dim(s2, b2 + (t2 ? 0 : 1));
        int64_t a = mx_dim(s2, b2), b = mx_dim(s2, b2 + 1);
        if ((a == 1 && b == in_n) || (a == in_n && b == 1) || (in_n == 1 && (a == 1 || b == 1))) sc_n = in_n;
    } else {
        sc_n = t2 ? s2->shape[e2 - 2] : s2->shape[e2 - 1];
    }
    if ((rc = mx_recalc(c, in_n, sc_n, &gn, "n"))) return rc;
    *group = (int64_t)(gm << 32 | gn << 16 | gk);
    return ACLNN_SUCCESS;
}

aclnnStatus qmm_mx_dtypes(op_call *c, const pyaclnn_stub_tensor *x1, const pyaclnn_stub_tensor *x2,
                          const pyaclnn_stub_tensor *x2o, const pyaclnn_stub_tensor *bias, aclDataType od) {
    static const aclDataType OUT[] = {ACL_FLOAT16, ACL_BF16, ACL_FLOAT};
    aclnnStatus rc;
    int fp4 = x1->dtype == ACL_FLOAT4_E2M1 && x2->dtype == ACL_FLOAT4_E2M1;
    if (!fp4 && !(mx_is_fp8(x1->dtype) && mx_is_fp8(x2->dtype))) {
        char a[24], b[24], txt[64];
        snprintf(txt, sizeof txt, "%s, %s", op_dtype_name(x1->dtype, a), op_dtype_name(x2->dtype, b));
        return op_ez_reason(c->api, 1, "x1, x2", "dtypes", txt, "when %s and %s are FLOAT8_E8M0, the dtypes of x1 and "
                            "x2 must be FLOAT4_E2M1 or FLOAT8", X1S, X2S);
    }
    if (bias->present && (rc = qmm_dtype_not_match(c, "bias", bias->dtype, ACL_FLOAT))) return rc;
    if ((rc = qmm_dtype_not_support(c, "out", od, OUT, 3))) return rc;
    if (x2o->present)
        return op_ez_reason(c->api, 0, X2O, "value", "not null", "when %s and %s are FLOAT8_E8M0, %s must be null", X1S,
                            X2S, X2O);
    return ACLNN_SUCCESS;
}

aclnnStatus qmm_mx_scale_dims(op_call *c, const pyaclnn_stub_tensor *x1, const pyaclnn_stub_tensor *x2,
                              const pyaclnn_stub_tensor *s1, const pyaclnn_stub_tensor *s2, int64_t group) {
    char txt[96];
    const pyaclnn_stub_tensor *sc[2] = {s1, s2}, *xs[2] = {x1, x2};
    static const char *const names[2] = {X1S, X2S};
    for (int i = 0; i < 2; i++)   /* CheckMxScaleMinDim */
        if (sc[i]->ndim < 3)
            return op_ez_reason(c->api, 0, names[i], "shape dim", (snprintf(txt, sizeof txt, "%lldD",
                                (long long)sc[i]->ndim), txt), "when the quantization mode is mx, the shape dim of %s "
                                "must be at least 3D", names[i]);
    static const char *const nums[2] = {"pertokenBatchDimNum, x1BatchDimNum", "scaleBatchDimNum, x2BatchDimNum"},
                             *vals[2] = {"dimIndex, x1Batch, pertokenBatch", "dimIndex, x2Batch, scaleBatch"};
    for (int i = 0; i < 2; i++) {   /* CheckMxScaleBatchDimMatch: the counts first, then the values */
        int64_t sb = sc[i]->ndim - 3, xb = xs[i]->ndim > 2 ? xs[i]->ndim - 2 : 0;
        if (sb != xb)
            return op_ez_reason(c->api, 1, nums[i], "values", (snprintf(txt, sizeof txt, "%lld, %lld", (long long)sb,
                                (long long)xb), txt), "when the quantization mode is mx, the batch dimension num of "
                                "x%dScale must be equal to that of x%d", i + 1, i + 1);
    }
    for (int i = 0; i < 2; i++)
        for (int64_t d = 0; d < sc[i]->ndim - 3; d++)
            if (sc[i]->shape[d] != xs[i]->shape[d])
                return op_ez_reason(c->api, 1, vals[i], "values", (snprintf(txt, sizeof txt, "%lld, %lld, %lld",
                                    (long long)d, (long long)xs[i]->shape[d], (long long)sc[i]->shape[d]), txt),
                                    "when the quantization mode is mx, the batch dimension of x%dScale must be equal "
                                    "to that of x%d", i + 1, i + 1);
    uint64_t g = (uint64_t)group, gm = g >> 32 & 0xFFFF, gn = g >> 16 & 0xFFFF, gk = g & 0xFFFF;   /* CheckMxGroupSize */
    if (gk != 32 || gm != 1 || gn != 1)
        return op_ez_reason(c->api, 1, "groupSize, groupSizeM, groupSizeN, groupSizeK", "values",
                            (snprintf(txt, sizeof txt, "%lld, %llu, %llu, %llu", (long long)group,
                                      (unsigned long long)gm, (unsigned long long)gn, (unsigned long long)gk), txt),
                            "when the quantization mode is mx, groupSize must be 4295032864 and Torch API group_sizes "
                            "must be [1, 1, 32]");
    return ACLNN_SUCCESS;
}

aclnnStatus qmm_mx_dim_value(op_call *c, const pyaclnn_stub_tensor *x1, const pyaclnn_stub_tensor *x2,
                             const pyaclnn_stub_tensor *s1, const pyaclnn_stub_tensor *s2, int t1, int t2,
                             int64_t m, int64_t k, int64_t n) {
    int64_t b1 = s1->ndim - 3, b2 = s2->ndim - 3, g = mx_ceil64(k);
    int64_t sm = s1->shape[b1 + (t1 ? 1 : 0)], sk1 = s1->shape[b1 + (t1 ? 0 : 1)];
    int64_t sn = s2->shape[b2 + (t2 ? 0 : 1)], sk2 = s2->shape[b2 + (t2 ? 1 : 0)];
    /* a dim of 1 makes the two layouts one: the transposes need not agree then */
    int one1 = (sm == 1 && sk1 == m) || (sm == m && sk1 == 1) || (sm == 1 && sk1 == g) || (sm == g && sk1 == 1);
    int one2 = (sn == 1 && sk2 == n) || (sn == n && sk2 == 1) || (sn == 1 && sk2 == g) || (sn == g && sk2 == 1);
    char txt[96];
    if ((!one1 && sm != m) || (!one2 && sn != n))
        return op_ez_reason(c->api, 1, "x1 M, " X1S " M, x2 N, " X2S " N", "values",
                            (snprintf(txt, sizeof txt, "%lld, %lld, %lld, %lld", (long long)m, (long long)sm,
                                      (long long)n, (long long)sn), txt),
                            "when the quantization mode is mx, the M dimension of x1 and %s must be equal, and the N "
                            "dimension of x2 and %s must be equal", X1S, X2S);
    if ((!one1 && g != sk1) || (!one2 && g != sk2))
        return op_ez_reason(c->api, 1, "x1 K, " X1S " K, x2 K, " X2S " K", "values",
                            (snprintf(txt, sizeof txt, "%lld, %lld, %lld, %lld", (long long)k, (long long)sk1,
                                      (long long)k, (long long)sk2), txt),
                            "when the quantization mode is mx, the K dimension of %s must be equal to the K dimension "
                            "of x1 ceildivided by 64, and the K dimension of %s must be equal to the K dimension of x2 "
                            "ceildivided by 64", X1S, X2S);
    int64_t l1 = s1->shape[s1->ndim - 1], l2 = s2->shape[s2->ndim - 1];
    if (l1 != 2 || l2 != 2)
        return op_ez_reason(c->api, 1, X1S " last dimension, " X2S " last dimension", "values",
                            (snprintf(txt, sizeof txt, "%lld, %lld", (long long)l1, (long long)l2), txt),
                            "when the quantization mode is mx, the last dimension of %s and %s must be 2", X1S, X2S);
    if (x1->dtype == ACL_FLOAT4_E2M1 && x2->dtype == ACL_FLOAT4_E2M1) {   /* CheckMXFP4FP8ParamsNDOrNZ */
        int64_t i1 = x1->shape[x1->ndim - 1], i2 = x2->shape[x2->ndim - 1];
        if (i1 % 2 != 0 || i2 % 2 != 0)
            return op_ez_reason(c->api, 1, "x1 inner axis, x2 inner axis", "values",
                                (snprintf(txt, sizeof txt, "%lld, %lld", (long long)i1, (long long)i2), txt),
                                "when the quantization mode is mx and x1 and x2 are FLOAT4_E2M1, the inner axes of x1 "
                                "and x2 must be even");
        if (k <= 2)
            return op_ez_reason(c->api, 1, "x1 K, x2 K", "values",
                                (snprintf(txt, sizeof txt, "%lld, %lld", (long long)k, (long long)k), txt),
                                "when the quantization mode is mx and x1 and x2 are FLOAT4_E2M1, the K dimension of x1 "
                                "and x2 must be greater than 2");
    }
    return ACLNN_SUCCESS;
}

/* the tiling's OP_LOGE_FOR_INVALID_VALUES_WITH_REASON, under its opName, as 561002 */
static aclnnStatus mx_tiling_fail(op_call *c, const char *params, const char *values, const char *reason) {
    return op_failf(c->api, ACLNN_ERR_INNER_TILING_ERROR, "Parameters %s of %s have incorrect values %s. Reason: %s.",
                    params, TILING_OP, values, reason);
}

aclnnStatus qmm_mx_tiling(op_call *c, const pyaclnn_stub_tensor *s1, const pyaclnn_stub_tensor *s2, int t1, int t2,
                          int64_t m, int64_t k, int64_t n) {
    int64_t g = mx_ceil64(k), b1 = s1->ndim - 3, b2 = s2->ndim - 3;
    char txt[64];
    /* MxPertokenScaleShapeCheck: no relaxation for a dim of 1 */
    int64_t pk = s1->shape[b1 + (t1 ? 0 : 1)], pm = s1->shape[b1 + (t1 ? 1 : 0)];
    if (pk != g)
        return mx_tiling_fail(c, "x1K, pertokenScaleK", (snprintf(txt, sizeof txt, "%lld, %lld", (long long)k,
                              (long long)pk), txt), "when the quantization mode is mx, the k dimension of pertokenScale "
                              "must be equal to the k dimension size of x1 ceildivided by 64");
    if (pm != m)
        return mx_tiling_fail(c, "x1M, pertokenScaleM", (snprintf(txt, sizeof txt, "%lld, %lld", (long long)m,
                              (long long)pm), txt), "when the quantization mode is mx, the m dimension of pertokenScale "
                              "must be equal to the m dimension size of x1");
    /* MxScaleShapeCheck */
    int64_t sk = s2->shape[b2 + (t2 ? 1 : 0)], sn = s2->shape[b2 + (t2 ? 0 : 1)];
    int n_one = (sk == 1 && sn == g) || (sn == 1 && sk == g), k_one = (sk == 1 && sn == n) || (sn == 1 && sk == n);
    if (!n_one && !k_one) {
        if (sk != g)
            return mx_tiling_fail(c, "x2K, scaleK", (snprintf(txt, sizeof txt, "%lld, %lld", (long long)k,
                                  (long long)sk), txt), "when the quantization mode is mx, the k dimension of scale "
                                  "must be equal to the k dimension size of x2 ceildivided by 64");
        if (sn != n)
            return mx_tiling_fail(c, "x2N, scaleN", (snprintf(txt, sizeof txt, "%lld, %lld", (long long)n,
                                  (long long)sn), txt), "when the quantization mode is mx, the n dimension of scale "
                                  "must be equal to the n dimension size of x2");
    }
    /* what the tiling lets through with a dim of 1 is read as [ceil(K/64), N, 2] (or [N, ceil(K/64), 2]): a scale of
     * fewer bytes would be read past its end (the vendor's kernel reads what lies there) */
    if (sk * sn != g * n)
        return op_invalidf(c->api, "x2Scale(scale) [.., %lld, %lld, 2] holds fewer than the %lld x %lld scales the MX "
                           "kernel reads: the emulator does not read past a tensor", (long long)s2->shape[b2],
                           (long long)s2->shape[b2 + 1], (long long)n, (long long)g * 2);
    return ACLNN_SUCCESS;
}

/* ---- kernel --------------------------------------------------------------------------------------------------- */

static float *mx_load(const pyaclnn_stub_tensor *t) {
    return t->dtype == ACL_FLOAT4_E2M1 ? mx_load_fp4(t) : tv_load_float(t);
}

/* a scale's bytes in the order the op_api reads them (its storage when MxScaleContiguousProcess swapped the view) */
static uint8_t *mx_scale_bytes(const pyaclnn_stub_tensor *t, int swap) {
    pyaclnn_stub_tensor v = *t;
    if (swap) qmm_mx_scale_view(t, &v);
    return tv_gather_bytes(&v);
}

/* per matrix and row, the scale bytes of K-groups 0 .. ng-1 (kmajor: [ceil(K/64), rows, 2], else [rows, .., 2]) */
static uint8_t *mx_rows(const uint8_t *src, int64_t mats, int64_t rows, int64_t ng, int64_t g2, int kmajor) {
    uint8_t *out = tv_alloc(mats * rows * ng, 1);
    if (!out) return NULL;
    for (int64_t b = 0; b < mats; b++)
        for (int64_t r = 0; r < rows; r++)
            for (int64_t g = 0; g < ng; g++)
                out[(b * rows + r) * ng + g] =
                    src[b * rows * g2 + (kmajor ? ((g / 2) * rows + r) * 2 + g % 2 : r * g2 + g)];
    return out;
}

void qmm_mx_kernel(const pyaclnn_stub_launch *launch, const qmm_params *p) {
    const pyaclnn_stub_tensor *in = launch->inputs, *out = &launch->outputs[0];
    int64_t M = p->m, K = p->k, N = p->n, batch = 1, mats1 = 1, mats2 = 1;
    int64_t ng = (K + MX_GROUP - 1) / MX_GROUP, g2 = (K + 63) / 64 * 2;
    for (int64_t i = 0; i < p->nb; i++) batch *= p->bshape[i], mats1 *= p->x1b[i], mats2 *= p->x2b[i];
    float *a = mx_load(&in[0]), *w = mx_load(&in[1]);
    float *bias = p->bias_kind == QMM_BIAS_FLOAT ? tv_load_float(&in[5]) : NULL;
    uint8_t *s1 = mx_scale_bytes(&in[2], p->s1_swap), *s2 = mx_scale_bytes(&in[3], p->s2_swap);
    uint8_t *r1 = s1 ? mx_rows(s1, mats1, M, ng, g2, p->s1_kmajor) : NULL;
    uint8_t *r2 = s2 ? mx_rows(s2, mats2, N, ng, g2, p->s2_kmajor) : NULL;
    float *res = tv_alloc(batch * M * N, sizeof(float));
    if (!a || !w || (p->bias_kind == QMM_BIAS_FLOAT && !bias) || !r1 || !r2 || !res) {
        tv_fail_oom(launch);
        goto done;
    }
    int fa = mx_frac_bits(in[0].dtype), fw = mx_frac_bits(in[1].dtype);
    for (int64_t b = 0; b < batch; b++) {
        int64_t o1, o2;
        qmm_batch_offsets(p, b, &o1, &o2);
        const float *x = a + o1 * M * K, *y = w + o2 * K * N;
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                float init = bias ? bias[(p->bias3d ? b * N : 0) + j] : 0.0f;   /* the bias table's L0C start */
                res[(b * M + i) * N + j] = mx_dot(p->trans1 ? x + i : x + i * K, p->trans1 ? M : 1, fa,
                                                  p->trans2 ? y + j * K : y + j, p->trans2 ? 1 : N, fw, K,
                                                  r1 + (o1 * M + i) * ng, 1, r2 + (o2 * N + j) * ng, 1, init);
            }
    }
    tv_store_float(out, res);   /* the fixpipe: RINT to FLOAT16 / BFLOAT16, FLOAT as it is */
done:
    free(a), free(w), free(bias), free(s1), free(s2), free(r1), free(r2), free(res);
}
