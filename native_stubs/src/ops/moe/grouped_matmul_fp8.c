/*
 * Grouped matmul on the Ascend 950, the 8-bit float static-quant path (x and weight FLOAT8_E4M3FN / FLOAT8_E5M2, or
 * both HIFLOAT8) of aclnnGroupedMatmulV4 / V5. Definitions: grouped_matmul.toml; the shared checks: grouped_matmul.c.
 *
 * Checks: the 950's CheckFunctionParams hands every 1-byte x / weight pair (INT8 x INT8 among them) and FP4 / INT4 x
 * (an INT32 x or weight read as packed INT4: UnpackB32ToB4, before any check) to
 * AclnnGroupedMatmul91095Checker::CheckGroupedMatmul91095 (op_host/op_api/aclnn_grouped_matmul_910_95_checker.cpp,
 * in the ops-transformer tree that carries it), each 161002: no activation on the 950; a scale, a group list, no
 * offset; one x, weight and y; ND formats (CheckQuantCasesFormat); CheckGeneralQuantShape; then by dtype: INT8 x INT8
 * (split M only; CheckInt8QuantParams: CheckInt8QuantDtype's y FLOAT16 / BFLOAT16, bias, scale and per-token dtypes,
 * the transposes, CheckNonPerGroupQuantDim / Shape, a 1-D per-token scale of x's M; its arithmetic: a8w8_950_kernel,
 * a UINT64 / INT64 scale with a float bias refused, GMM_A8W8_950); FLOAT8 with
 * a FLOAT / UINT64 / INT64 scale and HIFLOAT8 with the same (CheckFp8Hif8QuantParams: no bias, transposes, a
 * UINT64 scale only with split M, the per-token scale's dtypes, y FLOAT / FLOAT16 / BFLOAT16, CheckNonPerGroupQuantDim,
 * CheckNonPerGroupQuantShape); FLOAT8 / FLOAT4 with FLOAT8_E8M0 scales (the MX modes): CheckGroupedMatmulMxfp8's no
 * bias and per-token scale present, CheckGroupedMatmulMxfp4's per-token scale present, then the emulator refuses (its
 * MX kernels are not modelled); any other pair (INT4 x INT4, A4W4, among them): the checker's last words. An INT64
 * scale is read as UINT64 (the op_api relabels it before its checks).
 *
 * Kernel (op_kernel/arch35 gqmm_cube_on_the_fly.h, the mix template for a vector dequant; the tiling's
 * SetQuantMode / SetKernelType pick): per group, the 8-bit codes decoded exactly, products exact in fp32, summed in
 * fp32 in k order (quant/fp8_dequant.h); then a per-tensor scale ((g,) or (g, 1)) of any dtype, or a per-channel
 * (g, N) UINT64 word: the fixpipe, the fp32 L0C times the scale's fp19 (the FLOAT scale's bits & 0xFFFFE000),
 * rounded once; a per-channel FLOAT scale: the vector epilogue fp32(acc) * scale; then cast RINT to y.
 */
#include <stdlib.h>
#include <string.h>

#include "grouped_matmul.h"
#include "kernels/dtype.h"
#include "kernels/view.h"
#include "ops_decls.h"
#include "quant/fp8_dequant.h"

#define LL(v) ((long long)(v))
#define ULL(v) ((unsigned long long)(v))

static aclDataType seen(aclDataType d) { return d == ACL_INT64 ? ACL_UINT64 : d; }

static int one_byte(aclDataType d) {   /* ge::GetSizeByDataType(d) == 1 */
    return d == ACL_INT8 || d == ACL_UINT8 || d == ACL_BOOL || d == ACL_FLOAT8_E4M3FN || d == ACL_FLOAT8_E5M2 ||
           d == ACL_HIFLOAT8 || d == ACL_FLOAT8_E8M0;
}

static int is_fp8(aclDataType d) { return d == ACL_FLOAT8_E4M3FN || d == ACL_FLOAT8_E5M2; }
static int is_fp4(aclDataType d) { return d == ACL_FLOAT4_E2M1 || d == ACL_FLOAT4_E1M2; }

/* V4 / V5 / WeightNz read an INT32 x or weight as packed INT4 (UnpackB32ToB4, before any check) */
static aclDataType unpacked(aclDataType d) { return d == ACL_INT32 ? ACL_INT4 : d; }

int gmm_950_quant(aclDataType xd, aclDataType wd) {
    xd = unpacked(xd), wd = unpacked(wd);
    return is_fp4(xd) || xd == ACL_INT4 || (one_byte(xd) && one_byte(wd));
}

/* CheckNonMxQuantTransposeStatus */
static aclnnStatus fp8_transposes(op_call *c, const gmm_lists *L, int tx, int tw) {
    if (L->gtype == GMM_SPLIT_M && tx)
        return gmm_bad(c, "In non-pergroup quantification mode, when groupType is 0 (split M), x must not be transposed.");
    if (L->gtype == GMM_SPLIT_K && !(tx && !tw))
        return gmm_bad(c, "In non-pergroup quantification mode, when groupType is 2 (split K), the transposition of x "
                          "and weight must be true/false, but actual transpositions are %s/%s.",
                       tx ? "true" : "false", tw ? "true" : "false");
    return ACLNN_SUCCESS;
}

/* CheckFp8Hif8QuantParams, up to the per-tile / per-group split (the per-token scale: gmm_fp8_limits) */
static aclnnStatus fp8_params(op_call *c, const gmm_lists *L, int tx, int tw) {
    char b[24];
    aclnnStatus rc;
    if (L->B.n) return gmm_bad(c, "Float8/hifloat8 does not support bias.");
    if ((rc = fp8_transposes(c, L, tx, tw))) return rc;
    aclDataType sd = seen(L->q[GMM_Q_SCALE].t[0].dtype);
    if (sd == ACL_UINT64 && L->gtype != GMM_SPLIT_M)
        return gmm_bad(c, "In float8/hifloat8 case, when the scale dtype is uint64 or int64, only groupType 0 (split "
                          "M) is supported.");
    const gmm_list *P = &L->q[GMM_Q_PER_TOKEN];
    if (P->n) {
        if (P->t[0].dtype != ACL_FLOAT)
            return gmm_bad(c, "The perTokenScale dtype should be float32 in float8/hifloat8 case, but actual dtype is %s",
                           op_dtype_name(P->t[0].dtype, b));
        if (sd != ACL_FLOAT)
            return gmm_bad(c, "The scale dtype should be float32 when perTokenScale is not nullptr in float8/hifloat8 "
                              "case, but actual dtype is %s", op_dtype_name(sd, b));
    }
    aclDataType yd = L->Y.t[0].dtype;
    if (yd != ACL_FLOAT && yd != ACL_BF16 && yd != ACL_FLOAT16)
        return gmm_bad(c, "Expect y dtype to be float32, float16 or bfloat16 in float8/hifloat8 quant case, but actual "
                          "dtype is %s", op_dtype_name(yd, b));
    if (P->n) return ACLNN_SUCCESS;   /* the per-token modes (per-tile among them): not modelled, gmm_fp8_limits */
    /* CheckNonPerGroupQuantDim, CheckNonPerGroupQuantShape */
    const pyaclnn_stub_tensor *s = &L->q[GMM_Q_SCALE].t[0], *w = &L->W.t[0];
    if (s->ndim != 1 && s->ndim != 2)
        return gmm_bad(c, "In non-pergroup quantification mode, the dim num of scale should be 1 or 2, but actual dim "
                          "num is %lld", LL(s->ndim));
    int64_t groups = L->gl->shape[0], sn = s->shape[s->ndim - 1], wn = w->shape[w->ndim - 1];
    if (s->shape[0] != groups)
        return gmm_bad(c, "In non-pergroup quantification mode, the first dim of scale[%lld] should be equal to that of "
                          "groupTensor[%lld].", LL(s->shape[0]), LL(groups));
    if (s->ndim > 1 && sn != 1 && sn != wn)
        return gmm_bad(c, "In non-pergroup quantification mode, the N dim of scale[%lld] should be 1 or equal to that "
                          "of weight[%lld].", LL(sn), LL(wn));
    return ACLNN_SUCCESS;
}

/* CheckInt8QuantDtype (y, bias, scale, perTokenScale dtypes; INT64 scales read as UINT64), then
 * CheckNonMxQuantTransposeStatus, CheckNonPerGroupQuantDim, CheckNonPerGroupQuantShape (split M only here: the
 * caller refused the others), then the per-token scale's rank and M */
static aclnnStatus int8_params(op_call *c, const gmm_lists *L, int tx, int tw) {
    char b[24];
    aclnnStatus rc;
    aclDataType yd = L->Y.t[0].dtype, sd = seen(L->q[GMM_Q_SCALE].t[0].dtype);
    int bf = yd == ACL_BF16;
    if (yd != ACL_BF16 && yd != ACL_FLOAT16)
        return gmm_bad(c, "Expect y dtype to be float16 or bfloat16 in int8 quant case, but actual dtype is %s",
                       op_dtype_name(yd, b));
    if (L->B.n) {
        aclDataType bd = L->B.t[0].dtype;
        if (!(bd == ACL_INT32 || bd == ACL_FLOAT || bd == (bf ? ACL_BF16 : ACL_FLOAT16)))
            return gmm_bad(c, bf ? "When y dtype is bfloat16, the bias dtype should be int32, bfloat16 or float32, but "
                                   "actual dtype is %s"
                                 : "When y dtype is float16, the bias dtype should be int32, float16 or float32, but "
                                   "actual dtype is %s", op_dtype_name(bd, b));
    }
    if (!(sd == ACL_UINT64 || sd == ACL_FLOAT || (bf && sd == ACL_BF16)))
        return gmm_bad(c, bf ? "When y dtype is bfloat16, the scale dtype should be bfloat16, uint64, int64 or "
                               "float32, but actual dtype is %s"
                             : "When y dtype is float16, the scale dtype should be uint64, int64 or float32, but "
                               "actual dtype is %s", op_dtype_name(sd, b));
    const gmm_list *P = &L->q[GMM_Q_PER_TOKEN];
    if (P->n) {
        if (P->t[0].dtype != ACL_FLOAT)
            return gmm_bad(c, "The perTokenScaleOptional dtype should be float32 in int8 quant case, but actual dtype "
                              "is %s", op_dtype_name(P->t[0].dtype, b));
        if (!(sd == ACL_FLOAT || (bf && sd == ACL_BF16)))
            return gmm_bad(c, bf ? "When perTokenScaleOptional is not nullptr and y dtype is bfloat16, the scale dtype "
                                   "should be bfloat16 or float32, but actual dtype is %s"
                                 : "When perTokenScaleOptional is not nullptr and y dtype is float16, the scale dtype "
                                   "should be float32, but actual dtype is %s", op_dtype_name(sd, b));
    }
    if ((rc = fp8_transposes(c, L, tx, tw))) return rc;
    const pyaclnn_stub_tensor *s = &L->q[GMM_Q_SCALE].t[0], *w = &L->W.t[0], *x = &L->X.t[0];
    const pyaclnn_stub_tensor *pt = P->n ? &P->t[0] : NULL;
    if (s->ndim != 1 && s->ndim != 2)
        return gmm_bad(c, "In non-pergroup quantification mode, the dim num of scale should be 1 or 2, but actual dim "
                          "num is %lld", LL(s->ndim));
    if (pt && pt->ndim != 1 && pt->ndim != 2)
        return gmm_bad(c, "In non-pergroup quantification mode, the dim num of perTokenScale should be 1 or 2, but "
                          "actual dim num is %lld.", LL(pt->ndim));
    int64_t groups = L->gl->shape[0], sn = s->shape[s->ndim - 1], wn = w->shape[w->ndim - 1], xm = x->shape[0];
    if (s->shape[0] != groups)
        return gmm_bad(c, "In non-pergroup quantification mode, the first dim of scale[%lld] should be equal to that of "
                          "groupTensor[%lld].", LL(s->shape[0]), LL(groups));
    if (s->ndim > 1 && sn != 1 && sn != wn)
        return gmm_bad(c, "In non-pergroup quantification mode, the N dim of scale[%lld] should be 1 or equal to that "
                          "of weight[%lld].", LL(sn), LL(wn));
    if (!pt) return ACLNN_SUCCESS;
    /* CheckNonPerGroupQuantPertokenShape, split M */
    if (pt->ndim == 1 && pt->shape[0] != xm && pt->shape[0] != groups)
        return gmm_bad(c, "In non-pergroup quantification mode, when groupType is 0 (split M) and perTokenScale has 1 "
                          "dim, the first dim of perTokenScale[%lld] should be equal to that of x[%lld] or that of "
                          "groupTensor[%lld].", LL(pt->shape[0]), LL(xm), LL(groups));
    if (pt->ndim == 2) {
        if (pt->shape[0] != groups)
            return gmm_bad(c, "In non-pergroup quantification mode, when groupType is 0 (split M) and perTokenScale "
                              "has 2 dims, the first dim of perTokenScale[%lld] should be equal to that of "
                              "groupTensor[%lld].", LL(pt->shape[0]), LL(groups));
        if (pt->shape[1] != 1)
            return gmm_bad(c, "In non-pergroup quantification mode, when groupType is 0 (split M) and perTokenScale "
                              "has 2 dims, the second dim of perTokenScale[%lld] should be equal to 1.",
                           LL(pt->shape[1]));
        return gmm_bad(c, "In int8 quant case, the dim num of perTokenScaleOptional should be 1, but actual dim num is "
                          "%lld", LL(pt->ndim));
    }
    if (pt->shape[0] != xm)
        return gmm_bad(c, "In int8 quant case, the M dim[%lld] of perTokenScaleOptional should be equal to that of "
                          "x[%lld]", LL(pt->shape[0]), LL(xm));
    return ACLNN_SUCCESS;
}

aclnnStatus gmm_950_quant_params(op_call *c, const gmm_lists *L, int64_t act_type, int tx, int tw) {
    char b1[24], b2[24];
    if (act_type != 0) return gmm_bad(c, "Activation is not supported on Ascend910_95 platforms.");
    const gmm_list *S = &L->q[GMM_Q_SCALE], *P = &L->q[GMM_Q_PER_TOKEN];
    if (!S->n) return gmm_bad(c, "In quant case, scaleOptional should not be nullptr.");
    if (!L->gl->present) return gmm_bad(c, "In quant case, groupListOptional should not be nullptr.");
    if (L->q[GMM_Q_OFFSET].n) return gmm_bad(c, "Quant case does not support offset.");
    if (L->X.n != 1 || L->W.n != 1 || L->Y.n != 1)
        return gmm_bad(c, "In quant case, the size of x, weight and y should all be 1, but actual sizes are %llu, %llu "
                          "and %llu.", ULL(L->X.n), ULL(L->W.n), ULL(L->Y.n));
    /* CheckQuantCasesFormat */
    const pyaclnn_stub_tensor *x = &L->X.t[0], *w = &L->W.t[0], *y = &L->Y.t[0];
    const pyaclnn_stub_tensor *xwy[3] = {x, w, y};
    static const char *nm[3] = {"x", "weight", "y"};
    for (int k = 0; k < 3; k++)
        if (op_is_private_format(xwy[k]->format))
            return gmm_bad(c, "The format of %s[0] %s is invalid. It should only be ND.", nm[k],
                           op_format_name(xwy[k]->format, b1));
    /* CheckGeneralQuantShape: its list-size test fails without a message of its own */
    if (S->n != L->X.n || (P->n && P->n != L->X.n))
        return gmm_bad(c, "the scale / perTokenScale lists must hold as many tensors as x (CheckGeneralQuantShape; "
                          "the op_api logs no words of its own)");
    int64_t groups = L->gl->shape[0], wn = w->shape[w->ndim - 1];
    if (wn <= 0) return gmm_bad(c, "In quant case, the N value[%lld] should be positive.", LL(wn));
    if (L->gtype == GMM_SPLIT_M) {
        if (x->ndim < 2 || x->shape[1] <= 0)
            return gmm_bad(c, "When groupType is 0 (split M), the K value[%lld] in x should be positive.",
                           LL(x->ndim < 2 ? -1 : x->shape[1]));
        if (w->ndim < 2 || w->shape[1] <= 0)
            return gmm_bad(c, "When groupType is 0 (split M), the K value[%lld] in weight should be positive.",
                           LL(w->ndim < 2 ? -1 : w->shape[1]));
    } else if (L->gtype == GMM_SPLIT_K) {
        if (x->shape[0] <= 0)
            return gmm_bad(c, "When groupType is 2 (split K), the M value[%lld] in x should be positive.", LL(x->shape[0]));
        if (y->shape[0] != groups)
            return gmm_bad(c, "When groupType is 2 (split K), the first dim of y[%lld] should be equal to that of "
                              "groupTensor[%lld].", LL(y->shape[0]), LL(groups));
    }
    aclDataType xd = unpacked(x->dtype), wd = unpacked(w->dtype), sd = seen(S->t[0].dtype);
    if (xd == ACL_INT8 && wd == ACL_INT8) {
        if (L->gtype != GMM_SPLIT_M)
            return gmm_bad(c, "Int8 case only supports groupType 0 (split M), but actual groupType is %lld",
                           LL(L->gtype));
        return int8_params(c, L, tx, tw);
    }
    if (xd == ACL_HIFLOAT8 && wd == ACL_HIFLOAT8) {
        if (sd != ACL_UINT64 && sd != ACL_FLOAT)
            return gmm_bad(c, "With hifloat8 inputs, scale dtype should be uint64, int64 or float32, but actual dtype "
                              "is %s", op_dtype_name(sd, b1));
        return fp8_params(c, L, tx, tw);
    }
    if (is_fp8(xd) && is_fp8(wd)) {
        if (sd == ACL_FLOAT8_E8M0) {   /* CheckGroupedMatmulMxfp8's first checks, then the emulator's refusal */
            if (L->B.n) return gmm_bad(c, "mxfp8 does not support bias.");
            if (!P->n) return gmm_bad(c, "perTokenScale should not be nullptr in mx case.");
            return gmm_bad(c, "the MX FLOAT8 mode (FLOAT8_E8M0 scales) of the 950 is not modelled by the emulator");
        }
        if (sd != ACL_FLOAT && sd != ACL_UINT64)
            return gmm_bad(c, "Unsupported quant scale dtype %s with float8 case", op_dtype_name(sd, b1));
        return fp8_params(c, L, tx, tw);
    }
    if (is_fp4(xd) && is_fp4(wd)) {
        if (L->gtype != GMM_SPLIT_M)
            return gmm_bad(c, "In mxfp4 quant mode, mxfp4 case only supports groupType 0 (split M), but actual groupType "
                              "is %lld", LL(L->gtype));
        if (sd == ACL_FLOAT8_E8M0) {   /* CheckGroupedMatmulMxfp4's first check, then the emulator's refusal */
            if (!P->n) return gmm_bad(c, "perTokenScale should not be nullptr in mx case.");
            return gmm_bad(c, "the MX FLOAT4 mode of the 950 is not modelled by the emulator");
        }
        return gmm_bad(c, "Unsupported quant scale dtype %s with float4 case", op_dtype_name(sd, b1));
    }
    return gmm_bad(c, "Quant case with x dtype %s and weight dtype %s is not supported.", op_dtype_name(xd, b1),
                   op_dtype_name(wd, b2));
}

/* the emulator's limits, after the vendor's checks: split M with one 3-D weight, no per-token scale (FLOAT8 /
 * HIFLOAT8); INT8: a UINT64 / INT64 scale with a float bias (SetKernelType's vector template, whose epilogue reads the
 * 64-bit word as a number: a8w8_950_kernel) */
aclnnStatus gmm_fp8_limits(op_call *c, const gmm_lists *L) {
    if (L->X.t[0].dtype == ACL_INT8) {
        if (L->B.n && L->B.t[0].dtype != ACL_INT32 && seen(L->q[GMM_Q_SCALE].t[0].dtype) == ACL_UINT64)
            return gmm_bad(c, GMM_A8W8_950);
        return ACLNN_SUCCESS;
    }
    if (L->q[GMM_Q_PER_TOKEN].n)
        return gmm_bad(c, "the 950's FLOAT8 / HIFLOAT8 per-token and per-tile modes are not modelled by the emulator");
    if (L->gtype != GMM_SPLIT_M)
        return gmm_bad(c, "the 950's FLOAT8 / HIFLOAT8 split-K mode is not modelled by the emulator");
    return ACLNN_SUCCESS;
}

/* ---- the kernel ------------------------------------------------------------------------------------ */

/* INT8 x INT8 (op_kernel/arch35, grouped_matmul_apt.cpp; the tiling's SetKernelType picks the template): per group
 * the int32 sum of the int8 products (an INT32 bias added in L0C through the Matmul API's bias path, wrapping), then
 *   the fixpipe (GmmASWKernel, gqmm_cube_on_the_fly.h): a per-tensor scale ((g,) or (g, 1), no per-token scale, no
 *     float bias) of FLOAT bits / BFLOAT16 bits << 16 / a UINT64 word, or a per-channel UINT64 word: the exact
 *     product with its fp19 (bits & 0xFFFFE000) rounded once to fp32;
 *   otherwise the vector epilogue (GQmmMixRegbaseKernel VFDoDequant, gqmm_mix_online_dynamic.h): fp32(acc) CAST_RINT,
 *     * the scale (FLOAT, or BFLOAT16 widened; per tensor uncut), * the per-token scale, + a FLOAT / FLOAT16 /
 *     BFLOAT16 bias widened, each an fp32 step;
 * then CAST_RINT to y. */
static void a8w8_950_kernel(const pyaclnn_stub_launch *launch, const gmm_params *p, const int64_t *gl) {
    const pyaclnn_stub_tensor *X = launch->inputs, *W = X + 1, *B = p->nb ? W + 1 : NULL, *S = W + 1 + p->nb;
    const pyaclnn_stub_tensor *PT = p->npt ? S + 1 : NULL, *Y = launch->outputs;
    int64_t rows = X[0].shape[0], k = X[0].shape[1], n = W[0].shape[W[0].ndim - 1];
    int u64 = seen(p->scale_dt) == ACL_UINT64, ibias = B && p->bias_dt == ACL_INT32, fbias = B && !ibias;
    int per_channel = S[0].ndim == 2 && S[0].shape[1] == n && n != 1;   /* SetQuantMode */
    int fixpipe = (u64 || !per_channel) && !PT && !fbias;                /* SetKernelType: kernelType 0 */
    if (p->nz && !gmm_nz_in_memory(launch, W, 1)) return;
    int8_t *x = (int8_t *)tv_gather_bytes(X), *w = p->nz ? gmm_nz_weight_load(W, p->nz_tw) : (int8_t *)tv_gather_bytes(W);
    float *y = tv_load_float(Y), *sf = u64 ? NULL : tv_load_float(S), *pt = PT ? tv_load_float(PT) : NULL;
    unsigned char *sw = u64 ? tv_gather_bytes(S) : NULL, *bi = ibias ? tv_gather_bytes(B) : NULL;
    float *bf = fbias ? tv_load_float(B) : NULL;
    int8_t *wt = tv_alloc(n * k, 1);
    if (!x || !w || !y || (u64 ? !sw : !sf) || (PT && !pt) || (ibias && !bi) || (fbias && !bf) || !wt) {
        tv_fail_oom(launch);
        goto done;
    }
    int64_t start = 0;
    for (int64_t g = 0; g < p->groups; g++) {
        int64_t end = p->group_list_type == 0 ? gl[g] : start + gl[g];
        end = end < start ? start : end > rows ? rows : end;   /* the emulator keeps inside x */
        const int8_t *wg = w + g * k * n;
        for (int64_t q = 0; q < k; q++)
            for (int64_t j = 0; j < n; j++) wt[j * k + q] = wg[q * n + j];
        for (int64_t i = start; i < end; i++)
            for (int64_t j = 0; j < n; j++) {
                int32_t acc = a8w8_dot(x + i * k, 1, wt + j * k, 1, k);
                if (ibias) {
                    int32_t bv;
                    memcpy(&bv, bi + 4 * (g * n + j), 4);
                    acc = a8w8_add_wrap(acc, bv);
                }
                int64_t si = per_channel ? g * n + j : g;
                if (fixpipe) {
                    uint64_t word;
                    uint32_t bits;
                    if (u64) memcpy(&word, sw + 8 * si, 8);
                    else memcpy(&bits, &sf[si], 4), word = bits;   /* BFLOAT16 widened: its bits << 16 */
                    y[i * n + j] = a8w8_fixpipe_float((double)acc, word);
                } else {
                    y[i * n + j] = a8w8_vector_dequant((float)acc, sf[si], pt ? &pt[i] : NULL,
                                                       fbias ? &bf[g * n + j] : NULL);
                }
            }
        start = end;
    }
    tv_store_float(Y, y);   /* CAST_RINT to FLOAT16 / BFLOAT16; rows past the groups keep theirs */
done:
    free(x), free(w), free(y), free(sf), free(pt), free(sw), free(bi), free(bf), free(wt);
}

void gmm_fp8_kernel(const pyaclnn_stub_launch *launch, const gmm_params *p, const int64_t *gl) {
    if (launch->inputs[0].dtype == ACL_INT8) {
        a8w8_950_kernel(launch, p, gl);
        return;
    }
    const pyaclnn_stub_tensor *X = launch->inputs, *W = X + 1, *S = W + 1, *Y = launch->outputs;
    int64_t rows = X[0].shape[0], k = X[0].shape[1], n = W[0].shape[2];
    int u64 = seen(p->scale_dt) == ACL_UINT64;
    /* per channel: (g, N) with N > 1 (SetQuantMode); otherwise one scale per group */
    int per_channel = S[0].ndim == 2 && S[0].shape[1] == n && n != 1;
    float *x = tv_load_float(X), *w = tv_load_float(W), *y = tv_load_float(Y), *sf = u64 ? NULL : tv_load_float(S);
    unsigned char *sw = u64 ? tv_gather_bytes(S) : NULL;
    float *wt = tv_alloc(n * k, sizeof(float));
    if (!x || !w || !y || (u64 ? !sw : !sf) || !wt) {
        tv_fail_oom(launch);
        goto done;
    }
    int64_t start = 0;
    for (int64_t g = 0; g < p->groups; g++) {
        int64_t end = p->group_list_type == 0 ? gl[g] : start + gl[g];
        end = end < start ? start : end > rows ? rows : end;   /* the emulator keeps inside x */
        const float *wg = w + g * k * n;
        for (int64_t q = 0; q < k; q++)   /* the group's columns as rows: both dot operands contiguous */
            for (int64_t j = 0; j < n; j++) wt[j * k + q] = wg[q * n + j];
        for (int64_t i = start; i < end; i++)
            for (int64_t j = 0; j < n; j++) {
                float acc = fp8_dot(x + i * k, 1, wt + j * k, 1, k);
                int64_t si = per_channel ? g * n + j : g;
                uint64_t word;
                if (u64) {
                    memcpy(&word, sw + 8 * si, 8);
                    y[i * n + j] = a8w8_fixpipe_float(acc, word);
                } else if (!per_channel) {   /* the kernel hands the FLOAT scale's bits to the fixpipe */
                    uint32_t bits;
                    memcpy(&bits, &sf[si], 4);
                    y[i * n + j] = a8w8_fixpipe_float(acc, bits);
                } else {
                    y[i * n + j] = a8w8_vector_dequant(acc, sf[si], NULL, NULL);
                }
            }
        start = end;
    }
    tv_store_float(Y, y);   /* CAST_RINT to FLOAT16 / BFLOAT16; FLOAT as it is; rows past the groups keep theirs */
done:
    free(x), free(w), free(y), free(sf), free(sw), free(wt);
}
