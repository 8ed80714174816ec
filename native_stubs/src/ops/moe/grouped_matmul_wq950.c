/*
 * Grouped matmul on the Ascend 950, the weight-quantised pairs (x and weight of different element sizes: A8W4 /
 * S8S4, A16W8, A16W4, A16 FP8 / FP4 weights): the 950's CheckFunctionParams hands them to
 * AclnnGroupedMatmulWeightQuant91095Checker::CheckGroupedMatmulWeightQuant91095 (op_host/op_api/
 * aclnn_grouped_matmul_weight_quant_910_95_checker.cpp, in the ops-transformer tree that carries it). The emulator
 * runs its first checks in their order and words, each 161002: CheckGroupTypeScenario, CheckUnsupportedApi,
 * CheckGroupListAndSplitItem, CheckAntiQuantParams, CheckQuantParams; then refuses (161002): no weight-quantised
 * kernel of the 950 is modelled, except the one below. aclnnGroupedMatmulWeightNz reads an INT32 x or weight as
 * packed INT4 (UnpackInt32ToInt4, before any check); V4 / V5 do not.
 *
 * S8S4 pseudo-quant (INT8 x, INT4 weight, UINT64 / INT64 scale: the Ascend 950 port of the Atlas A3 A8W4 that
 * op-plugin's "A5 Support for groupmatmul s8s4" (6b256cf1) calls with quantGroupSize 256), from the newer tree
 * recursion-ascend/ops-transformer a093e954 (gmm/grouped_matmul/op_api/aclnn_grouped_matmul.cpp,
 * grouped_matmul_weight_quant_950_checker.cpp; the WeightNz check is the same in hicann/ops-transformer 3bb9e5ea;
 * the Dec-2025 tree above has no such path):
 *   - aclnnGroupedMatmulWeightNz, after the INT32 unpacking and before its split-K check, IsS8S4PseudoQuantWeightNz
 *     (one INT8 x, one INT4 weight, one UINT64 / INT64 scale): quantGroupSize 0 with a non-empty offset, 256 without
 *     (161002, opName "grouped_matmul");
 *   - the checker's IsS8S4PseudoQuant (V5, or WeightNz with a UINT64 scale, the op_api having relabelled INT64):
 *     CheckUnsupportedApi (V5 / WeightNz), groupListType 1, antiquantScale / antiquantOffset null, scale, bias and
 *     perTokenScale present, CheckTensorListSize, y FLOAT16 / BFLOAT16 (FLOAT16 with an offset), perTokenScale
 *     FLOAT, scale UINT64, offset FLOAT, bias FLOAT, no transposes, CheckS8S4ScaleShape (x (M, K), weight (E, K, N),
 *     y (M, N), perTokenScale (M), scale (E, Q, N); K <= 18432 per-group), then per weight the ND x / y, the NZ
 *     weight of WeightNz, K / N matches, an even N, the bias (E, N), CheckS8S4GroupSize (K / Q == 256).
 *   The emulator models the per-group kernel of the WeightNz entry (gmm_s8s4_kernel); the per-channel (offset) mode,
 *   V5's ND weight and tuningConfig[1] = 1 are refused after the checks (161002).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <stdlib.h>

#include "grouped_matmul.h"
#include "kernels/device.h"
#include "kernels/dtype.h"
#include "kernels/nz_layout.h"
#include "kernels/view.h"
#include "numerics/numerics.h"
#include "ops_decls.h"
#include "quant/a8w8_dequant.h"

#define LL(v) ((long long)(v))
#define ULL(v) ((unsigned long long)(v))

/* ge::GetSizeByDataType: the 4-bit types are sized apart from every byte size */
static int esize(aclDataType d) {
    switch (d) {
    case ACL_INT4: case ACL_FLOAT4_E2M1: case ACL_FLOAT4_E1M2: return 1004;
    case ACL_FLOAT16: case ACL_BF16: case ACL_INT16: case ACL_UINT16: return 2;
    case ACL_FLOAT: case ACL_INT32: case ACL_UINT32: return 4;
    case ACL_INT64: case ACL_UINT64: case ACL_DOUBLE: return 8;
    default: return 1;
    }
}

static int weight_nz_entry(const op_call *c) { return strstr(c->api, "WeightNz") != NULL; }

/* the dtypes the op_api sees: the WeightNz entry relabels INT32 as INT4 */
static aclDataType seen_dtype(const op_call *c, aclDataType d) {
    return weight_nz_entry(c) && d == ACL_INT32 ? ACL_INT4 : d;
}

int gmm_950_weight_quant(const op_call *c, aclDataType xd, aclDataType wd) {
    return esize(seen_dtype(c, xd)) != esize(seen_dtype(c, wd));
}

static int half_x(aclDataType x) { return x == ACL_FLOAT16 || x == ACL_BF16; }

static int v5_entry(const op_call *c) { return strstr(c->api, "V5") != NULL; }

/* IsS8S4PseudoQuant: INT8 x with INT4 weight through V5, or through WeightNz with a UINT64 scale (INT64 relabelled
 * UINT64 by the op_api before its checks) */
static int s8s4_pseudo(const op_call *c, const gmm_lists *L, aclDataType x, aclDataType w) {
    if (!(x == ACL_INT8 && w == ACL_INT4)) return 0;
    if (v5_entry(c)) return 1;
    if (!weight_nz_entry(c) || !L->q[GMM_Q_SCALE].n) return 0;
    aclDataType sd = L->q[GMM_Q_SCALE].t[0].dtype;
    return sd == ACL_UINT64 || sd == ACL_INT64;
}

/* the weight's view dims as the op_api sees them: on WeightNz, UnpackB32ToB4 multiplies an INT32 weight's last dim
 * (the second-last when transposed) by 8 */
static void w_dims(const op_call *c, const pyaclnn_stub_tensor *w, int64_t *d) {
    for (int64_t i = 0; i < w->ndim; i++) d[i] = w->shape[i];
    if (weight_nz_entry(c) && w->dtype == ACL_INT32 && w->ndim >= 1) d[w->ndim - 1 - (w->ndim >= 2 && gmm_transposed(w))] *= 8;
}

static aclDataType u64(aclDataType d) { return d == ACL_INT64 ? ACL_UINT64 : d; }

/* tuningConfig[1] == 1: the S8S4 special ENK-NZ weight (IsS8S4SpecialWeightFormat) */
static int s8s4_special(op_call *c) {
    int ti = op_param_index(c->def, "tuningConfigOptional");
    return ti >= 0 && c->ints[ti].n > 1 && c->ints[ti].v[1] == 1;
}

/* CheckGroupedMatmulWeightQuantDAV3510 after CheckQuantParams, for IsS8S4PseudoQuant (the single x, weight and y
 * that CheckGroupTypeScenario leaves) */
static aclnnStatus s8s4_checks(op_call *c, const gmm_lists *L, int tx, int tw) {
    const char *api = c->api;
    char b1[24], b2[64];
    const gmm_list *S = &L->q[GMM_Q_SCALE], *O = &L->q[GMM_Q_OFFSET], *PT = &L->q[GMM_Q_PER_TOKEN];
    int asym = O->n == 1, special = s8s4_special(c);
    /* CheckTensorListSize */
    const gmm_list *lists[4] = {&L->B, PT, S, O};
    const char *ln[4] = {"biasOptional", "perTokenScaleOptional", "scaleOptional", "offsetOptional"};
    for (int k = 0; k < 4; k++) {
        const gmm_list *ref = k == 1 ? &L->X : &L->W;
        if (lists[k]->n && lists[k]->n != ref->n) {
            char names[64];
            snprintf(names, sizeof names, "%s, %s", ln[k], k == 1 ? "x" : "weight");
            snprintf(b2, sizeof b2, "%s size: %llu, %s size: %llu", ln[k], ULL(lists[k]->n), k == 1 ? "x" : "weight",
                     ULL(ref->n));
            return op_ez_reason(api, 1, names, "list sizes", b2, "%s size must be equal to %s size", ln[k],
                                k == 1 ? "x" : "weight");
        }
    }
    /* CheckYDtype */
    aclDataType yd = L->Y.t[0].dtype;
    if (asym && yd != ACL_FLOAT16)
        return op_ez_reason(api, 0, "y", "dtype", op_dtype_name(yd, b1), "The dtype of y must be float16 in asymmetric "
                            "S8S4");
    if (yd != ACL_FLOAT16 && yd != ACL_BF16)
        return op_ez_reason(api, 0, "y", "dtype", op_dtype_name(yd, b1), "The dtype of y must be float16 or bfloat16, "
                            "when the dtype of x is INT8 and the dtype of weight is INT4");
    /* CheckQuantDtype */
    if (PT->t[0].dtype != ACL_FLOAT)
        return op_ez_reason(api, 0, "perTokenScale", "dtype", op_dtype_name(PT->t[0].dtype, b1), "The dtype of "
                            "pertokenScale must be float, when the dtype of x is INT8 and the dtype of weight is INT4");
    if (u64(S->t[0].dtype) != ACL_UINT64)
        return op_ez_reason(api, 0, "scale", "dtype", op_dtype_name(S->t[0].dtype, b1), "The dtype of scale must be "
                            "uint64 in S8S4");
    if (asym && O->t[0].dtype != ACL_FLOAT)
        return op_ez_reason(api, 0, "offset", "dtype", op_dtype_name(O->t[0].dtype, b1), "The dtype of offset must be "
                            "float in asymmetric S8S4");
    /* CheckBiasDtype */
    aclDataType bd = L->B.t[0].dtype;
    if (bd != ACL_FLOAT)
        return op_ez_reason(api, 0, "bias", "dtype", op_dtype_name(bd, b1), "The dtype of bias must be float32, when "
                            "the dtype of x is INT8 and the dtype of weight is INT4");
    /* CheckTransposeStatus */
    if (tx) return op_ez_reason(api, 0, "transposeX", "value", "true", "x cannot be transposed, when weight quant");
    if (tw)
        return op_ez_reason(api, 0, "transposeWeight", "value", "true", "In weight quant case fp16/bf16-fp4_e2m1 and "
                            "int8-int4, weight must be not transposed");
    /* CheckScaleAndPerTokenScaleShape: CheckS8S4ScaleShape */
    const pyaclnn_stub_tensor *x = &L->X.t[0], *w = &L->W.t[0], *y = &L->Y.t[0];
    int64_t wd[PYACLNN_STUB_MAX_DIMS];
    w_dims(c, w, wd);
    if (x->ndim != 2 || w->ndim != 3 || y->ndim != 2)
        return gmm_bad(c, "In op [%s], when S8S4, x, weight and out shapes must be [M,K], [E,K,N] and [M,N].", api);
    if (special && !asym)
        return gmm_bad(c, "In op [%s], the S8S4 special ENK-NZ template requires non-null offset per-channel mode.", api);
    int64_t e = wd[0], k = wd[special ? 2 : 1], n = wd[special ? 1 : 2], m = x->shape[0];
    if (!(m > 0 && e > 0 && k > 0 && n > 0 && x->shape[1] == k && y->shape[0] == m && y->shape[1] == n))
        return gmm_bad(c, "In op [%s], when S8S4, M, E, K and N must be positive and compatible.", api);
    const pyaclnn_stub_tensor *st = &S->t[0], *pt = &PT->t[0];
    if (!(pt->ndim == 1 && pt->shape[0] == m))
        return gmm_bad(c, "In op [%s], when S8S4, perTokenScale shape must be [M].", api);
    if (!(st->ndim == 3 && st->shape[0] == e && st->shape[2] == n))
        return gmm_bad(c, "In op [%s], when S8S4, scale shape must be [E,Q,N].", api);
    if (asym) {
        const pyaclnn_stub_tensor *ot = &O->t[0];
        if (!(ot->ndim == 3 && ot->shape[0] == e && ot->shape[1] == 1 && ot->shape[2] == n && st->shape[1] == 1))
            return gmm_bad(c, "In op [%s], when asymmetric S8S4, offset and scale shapes must be [E,1,N].", api);
    } else if (k > 18432) {
        return gmm_bad(c, "In op [%s], when per-group S8S4, K must not exceed 18432.", api);
    }
    /* the loop over the one weight: CheckDimNumAndFormat (the dims were checked above) */
    if (x->format != ACL_FORMAT_ND || y->format != ACL_FORMAT_ND)
        return gmm_bad(c, "In S8S4, x and y must be in ND format.");
    aclFormat wf = w->format;
    if (weight_nz_entry(c) && w->dtype == ACL_INT32 && (wf == ACL_FORMAT_FRACTAL_NZ_C0_2 || wf == ACL_FORMAT_FRACTAL_NZ_C0_4))
        wf = ACL_FORMAT_FRACTAL_NZ;   /* SetSpecialNZTensorToNormalNZFormat */
    int wnz = wf == ACL_FORMAT_FRACTAL_NZ;
    if (!(wnz || wf == ACL_FORMAT_ND || wf == ACL_FORMAT_NCL || wf == ACL_FORMAT_NCHW))
        return gmm_bad(c, "In S8S4, weight format must be ND, NCL, NCHW or FRACTAL_NZ.");
    if (weight_nz_entry(c) && !wnz) return gmm_bad(c, "In S8S4 through WeightNz, weight must be in FRACTAL_NZ format.");
    if (special && !wnz) return gmm_bad(c, "In S8S4, tuningConfig[1]=1 requires FRACTAL_NZ weight.");
    /* CheckWeightInnerAxisEven */
    if (wd[2] % 2) {
        snprintf(b2, sizeof b2, "%lld", LL(wd[2]));
        return op_ez_reason(api, 0, "weight", "shape", b2, "The last axis of each weight tensor must be even");
    }
    /* the bias: CheckTensorShape (groupType 0: 2 dims, E, N) */
    const pyaclnn_stub_tensor *bt = &L->B.t[0];
    if (bt->ndim != 2) {
        snprintf(b2, sizeof b2, "%lld", LL(bt->ndim));
        return op_ez_reason(api, 0, "bias", "shape dim", b2, "Dim must be [2], but now is [%lld]", LL(bt->ndim));
    }
    if (bt->shape[0] != wd[0]) {
        snprintf(b2, sizeof b2, "%lld", LL(bt->shape[0]));
        return op_ez_reason(api, 0, "bias", "value", b2, "batch size[%lld] should be equal with groupList length[%lld]",
                            LL(bt->shape[0]), LL(wd[0]));
    }
    if (bt->shape[1] != wd[special ? 1 : 2]) {
        snprintf(b2, sizeof b2, "%lld, %lld", LL(bt->shape[1]), LL(wd[special ? 1 : 2]));
        return op_ez_reason(api, 1, "bias, weight", "shapes", b2, "NDim[%lld] of bias must be equal to NDim[%lld] of "
                            "weight", LL(bt->shape[1]), LL(wd[special ? 1 : 2]));
    }
    /* CheckGroupSize: CheckS8S4GroupSize */
    if (!asym) {
        int64_t q = st->shape[1];
        if (!(q > 0 && k % q == 0))
            return gmm_bad(c, "In op [%s], when per-group S8S4, K must be divisible by scale group number.", api);
        if (k / q != 256)
            return gmm_bad(c, "In op [%s], when per-group S8S4, groupSize must be 256, but got %lld.", api, LL(k / q));
    }
    return ACLNN_SUCCESS;
}

aclnnStatus gmm_950_weight_quant_params(op_call *c, const gmm_lists *L, int64_t act_type, int64_t split,
                                        int64_t gltype, int tx, int tw) {
    char b1[24], b2[24];
    if (act_type != 0) return gmm_bad(c, "Activation is not supported on Ascend910_95 platforms.");
    aclDataType x = seen_dtype(c, L->X.t[0].dtype), w = seen_dtype(c, L->W.t[0].dtype);
    int a16w8 = half_x(x) && w == ACL_INT8, a16w4 = half_x(x) && w == ACL_INT4;
    int a16f8 = half_x(x) && (w == ACL_FLOAT8_E4M3FN || w == ACL_FLOAT8_E5M2 || w == ACL_HIFLOAT8);
    int nz4 = (half_x(x) && w == ACL_FLOAT4_E2M1) || (x == ACL_FLOAT8_E4M3FN && w == ACL_FLOAT4_E2M1) ||
              (x == ACL_INT8 && w == ACL_INT4);
    int s8s4 = x == ACL_INT8 && w == ACL_INT4, mx_a8w4 = x == ACL_FLOAT8_E4M3FN && w == ACL_FLOAT4_E2M1;
    int nz = weight_nz_entry(c), v45 = !nz;   /* the emulator's entries: V4, V5, WeightNz */
    int pseudo = s8s4_pseudo(c, L, x, w);
    /* CheckGroupTypeScenario */
    if (a16w8 || a16w4) {
        if (L->gtype != GMM_NO_SPLIT && L->gtype != GMM_SPLIT_M)
            return gmm_bad(c, "When xDtype-weightDtype is fp16/bf16-int8 or fp16/bf16-int4, GMM only support groupType "
                              "0 (split M) or groupType -1 (no split), but the actual groupType is [%lld].",
                           (long long)L->gtype);
    } else if (L->gtype != GMM_SPLIT_M) {
        return gmm_bad(c, "Weight quant cases with x dtype [%s] and weight dtype [%s] only support groupType 0 (split "
                          "M), but the actual groupType is [%lld].", op_dtype_name(x, b1), op_dtype_name(w, b2),
                       (long long)L->gtype);
    }
    if (L->gtype == GMM_NO_SPLIT) {
        if (L->X.n != L->W.n || L->X.n != L->Y.n)
            return gmm_bad(c, "In multi-multi-multi scenario, the sizes of x, weight and y should be all the same, but "
                              "the actual sizes are [%llu], [%llu] and [%llu].", ULL(L->X.n), ULL(L->W.n), ULL(L->Y.n));
    } else if (L->X.n != 1 || L->W.n != 1 || L->Y.n != 1) {
        return gmm_bad(c, "When groupType is 0 (split M), the sizes of x, weight and y should all be 1, but the actual "
                          "sizes are [%llu], [%llu] and [%llu].", ULL(L->X.n), ULL(L->W.n), ULL(L->Y.n));
    }
    /* CheckUnsupportedApi */
    if (a16w8) {
        if (nz && L->gtype == GMM_NO_SPLIT)
            return gmm_bad(c, "When xDtype-weightDtype is fp16/bf16-int8, only aclnnGroupedMatmul V1/V2/V3/V4/V5 support "
                              "multi-multi-multi scenario.");
        if (nz)
            return gmm_bad(c, "When xDtype-weightDtype is fp16/bf16-int8, only aclnnGroupedMatmul V2/V3/V4/V5 support "
                              "single-single-single scenario.");
    } else if (a16f8 || a16w4) {
        if (!v45)
            return gmm_bad(c, "Only AclnnGroupedMatmulV4/V5 support fp16/bf16-fp8/hif8/int4 for xDtype-weightDtype.");
    } else if (pseudo) {
        if (!(nz || v5_entry(c)))
            return gmm_bad(c, "Only aclnnGroupedMatmulV5 and aclnnGroupedMatmulWeightNz support this S8S4 data flow.");
    } else if (nz4) {
        if (!nz)
            return gmm_bad(c, "Only AclnnGroupedMatmulNz supports fp16/bf16-fp4_e2m1, fp8_e4m3fn-fp4_e2m1 and int8-int4 "
                              "for xDtype-weightDtype.");
    } else {
        return gmm_bad(c, "Weight quant case with x dtype [%s] and weight dtype [%s] is not supported.",
                       op_dtype_name(x, b1), op_dtype_name(w, b2));
    }
    /* CheckGroupListAndSplitItem (V4 / V5 / WeightNz: the group list is the tensor) */
    if (L->gtype == GMM_NO_SPLIT) {
        if (L->gl->present)
            return gmm_bad(c, "GroupListOptional(groupTensorOptional) should be nullptr when groupType is -1.");
        if (split != 0 && split != 1)
            return gmm_bad(c, "When y is separated, splitItem should be 0/1, but current splitItem is %lld.",
                           (long long)split);
    } else {
        if (!L->gl->present) return gmm_bad(c, "GroupListOptional should not be nullptr when groupType is 0.");
        if (split != 2 && split != 3)
            return gmm_bad(c, "When y is not separated, splitItem should be 2/3, but current splitItem is %lld.",
                           (long long)split);
    }
    if (pseudo && gltype != 1) return gmm_bad(c, "In op [%s], when S8S4, groupListType must be 1(count).", c->api);
    /* CheckAntiQuantParams (its null check is 161001 inside, 161002 from CheckFunctionParams) */
    if (pseudo) {
        if (L->q[GMM_Q_AQ_SCALE].n || L->q[GMM_Q_AQ_OFFSET].n)
            return gmm_bad(c, "In S8S4, antiquantScale and antiquantOffset must be null.");
    } else if (!L->q[GMM_Q_AQ_SCALE].n) {
        return gmm_bad(c, "AntiquantScale must not be nullptr in antiquant, but now is nullptr.");
    }
    if (!pseudo && (a16f8 || nz4) && L->q[GMM_Q_AQ_OFFSET].n)
        return gmm_bad(c, "In weight quant case, antiquantOffsetOptional is not supported when weightDtype is fp8/fp4 or "
                          "xDtype-weightDtype is int8-int4.");
    /* CheckQuantParams */
    if (!s8s4 && L->q[GMM_Q_SCALE].n)
        return gmm_bad(c, "In weight quant case, scale must be null when xDtype-weightDtype is not int8-int4.");
    if (s8s4 && !L->q[GMM_Q_SCALE].n)
        return gmm_bad(c, "In weight quant case, scale must not be null when xDtype-weightDtype is int8-int4.");
    if (pseudo) {
        if (!L->B.n) return gmm_bad(c, "In S8S4, bias must not be null.");
    } else if (L->q[GMM_Q_OFFSET].n) {
        return gmm_bad(c, "In WeightQuant case, offset must be null.");
    }
    if (!mx_a8w4 && !s8s4 && L->q[GMM_Q_PER_TOKEN].n)
        return gmm_bad(c, "In WeightQuant case, perTokenScale must be null when xDtype-weightDtype is not "
                          "float8_e4m3fn-float4_e2m1 or int8-int4.");
    if ((mx_a8w4 || s8s4) && !L->q[GMM_Q_PER_TOKEN].n)
        return gmm_bad(c, "In WeightQuant case, perTokenScale must not be null when xDtype-weightDtype is "
                          "float8_e4m3fn-float4_e2m1 or int8-int4.");
    if (pseudo) return s8s4_checks(c, L, tx, tw);
    return gmm_bad(c, "x %s with weight %s: the 950's weight-quantised paths are not modelled by the emulator",
                   op_dtype_name(x, b1), op_dtype_name(w, b2));
}

/* ---- S8S4 per-group: the executor, the WeightNz entry's quantGroupSize check, the kernel ------------------------ */

/* After the checker passed (IsS8S4PseudoQuant only): CheckParamDifferentGroupType's group list
 * (CheckGroupListCommonTensor: E entries, INT64), CheckTuningConfig, then the executor of the L0 GroupedMatmul:
 * x, weight, scale, perTokenScale, groupList | y. The kernel does not read the bias (the Tensor API kernel's
 * BlockMmad runs with isBias false and its epilogue has no bias: gmm_s8s4_perchannel_tensor_api.h). */
aclnnStatus gmm_950_s8s4_plan(op_call *c, const gmm_lists *L, int64_t gltype) {
    aclnnStatus rc;
    const pyaclnn_stub_tensor *x = &L->X.t[0], *w = &L->W.t[0];
    int64_t wd[PYACLNN_STUB_MAX_DIMS];
    w_dims(c, w, wd);
    if ((rc = gmm_group_list(c, L->gl, wd[0], "weight dim 0", 0))) return rc;
    int ti = op_param_index(c->def, "tuningConfigOptional");
    if (ti >= 0 && c->ints[ti].n > 0) {
        int64_t t0 = c->ints[ti].v[0];
        if (t0 < 0 || t0 > x->shape[0])
            return gmm_bad(c, "Invalid tuningConfigOptional (%lld)! It should be a non-negative num, and less than or "
                              "equal to maxM: %lld", LL(t0), LL(x->shape[0]));
    }
    /* the emulator's limits */
    if (!weight_nz_entry(c))
        return gmm_bad(c, "x INT8 with weight INT4 (S8S4) through %s: the emulator models the FRACTAL_NZ weight of "
                          "aclnnGroupedMatmulWeightNz only", c->api);
    if (L->q[GMM_Q_OFFSET].n)
        return gmm_bad(c, "S8S4 with an offset (the per-channel mode): the emulator models the per-group mode only");
    if (s8s4_special(c))
        return gmm_bad(c, "S8S4 with tuningConfig[1] = 1 (the ENK-NZ weight): not modelled by the emulator");
    if (w->dtype != ACL_INT32)
        return gmm_bad(c, "S8S4 with an INT4 weight tensor: the emulator models the INT32-packed weight only");
    /* x, weight, scale, perTokenScale, groupList | y */
    size_t n_in = 5;
    unsigned char *blk = op_scratch(c, sizeof(pyaclnn_stub_tensor) * n_in + sizeof(aclTensor *) * (n_in + 1));
    if (!blk) {
        pyaclnn_stub_report(ACLNN_ERR_INNER_CREATE_EXECUTOR, c->api, "out of host memory");
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    }
    pyaclnn_stub_tensor *is = (pyaclnn_stub_tensor *)blk;
    const aclTensor **ih = (const aclTensor **)(blk + sizeof(pyaclnn_stub_tensor) * n_in), **oh = ih + n_in;
    const gmm_list *ls[4] = {&L->X, &L->W, &L->q[GMM_Q_SCALE], &L->q[GMM_Q_PER_TOKEN]};
    for (int k = 0; k < 4; k++) ih[k] = ls[k]->v[0], is[k] = ls[k]->t[0];
    int gi = op_param_index(c->def, "groupListOptional");
    ih[4] = c->arg[gi].p, is[4] = *L->gl;
    oh[0] = L->Y.v[0];
    c->in_handles = ih, c->in_snaps = is, c->n_in = n_in;
    c->out_handles = oh, c->out_snaps = L->Y.t, c->n_out = 1;
    gmm_params *p = op_params(c, sizeof *p);
    p->nx = 1, p->nw = 1, p->nb = 0, p->ns = 1, p->npt = 1, p->ny = 1;
    p->kase = GMM_CASE_SINGLE_W3, p->s8s4 = 1, p->y_dt = L->Y.t[0].dtype;
    p->scale_dt = ACL_UINT64, p->bias_dt = ACL_DT_UNDEFINED;
    p->has_group_list = 1, p->group_list_type = (int)gltype, p->groups = wd[0];
    p->s8s4_k = wd[1], p->s8s4_n = wd[2];
    return ACLNN_SUCCESS;
}

/* gmm_s8s4_group_size x weight scaleOptional offsetOptional quantGroupSize: aclnnGroupedMatmulWeightNz's
 * IsS8S4PseudoQuantWeightNz check, after the INT32 unpacking, before its split-K check. */
aclnnStatus opc_gmm_s8s4_group_size(op_call *c, const op_step *s) {
    if (!ew_soc_is_950()) return ACLNN_SUCCESS;
    pyaclnn_stub_tensor t[4];
    uint64_t n[4];
    for (int k = 0; k < 4; k++) {
        const aclTensorList *l = op_argument(c, s, k)->p;
        const aclTensor *const *items;
        t[k].present = 0, n[k] = 0;
        if (l == NULL || pyaclnn_stub_tensor_list_get(l, &items, &n[k]) != ACLNN_SUCCESS) {
            n[k] = 0;
            continue;
        }
        if (n[k] >= 1 && items[0] && pyaclnn_stub_tensor_get(items[0], &t[k]) != ACLNN_SUCCESS) t[k].present = 0;
    }
    int64_t qgs = op_argument(c, s, 4)->i;
    /* x INT8, weight INT4 (INT32 unpacked), scale UINT64 / INT64, one of each */
    int s8s4 = n[0] == 1 && t[0].present && t[0].dtype == ACL_INT8 && n[1] == 1 && t[1].present &&
               (t[1].dtype == ACL_INT32 || t[1].dtype == ACL_INT4) && n[2] == 1 && t[2].present &&
               (t[2].dtype == ACL_UINT64 || t[2].dtype == ACL_INT64);
    if (!s8s4) return ACLNN_SUCCESS;
    int has_offset = n[3] == 1 && t[3].present && !(t[3].ndim == 1 && t[3].shape[0] == 0);
    if (!((has_offset && qgs == 0) || (!has_offset && qgs == 256)))
        return gmm_bad(c, "In op [grouped_matmul], when S8S4 quant through the WeightNz interface, quantGroupSize must "
                          "be 0 for per-channel offset mode or 256 for symmetric per-group mode.");
    return ACLNN_SUCCESS;
}

/* a + b of two fp16 values rounded once to fp16 (RNE): the exact sum in double, through fp32 rounded to odd */
static uint16_t f16_add(uint16_t a, uint16_t b) {
    double d = (double)num_f16_to_f32(a) + (double)num_f16_to_f32(b);
    float f = (float)d;
    if ((double)f != d && !isinf(f)) {
        if (fabs((double)f) > fabs(d)) f = nextafterf(f, 0.0f);
        uint32_t u;
        memcpy(&u, &f, 4);
        u |= 1u;
        memcpy(&f, &u, 4);
    }
    return num_f32_to_f16(f);
}

/* The NZ storage's element count of one expert's (k, n) INT4 matrix in (ceil(n / c0), ceil(k / 16), 16, c0) blocks */
static int64_t s8s4_nz_count(int64_t k, int64_t n, int64_t c0) {
    return op_mul_sat(op_mul_sat((n + c0 - 1) / c0, (k + 15) / 16), 16 * c0);
}

/* the blocks' width in INT4 elements: the storage's last dim times 8 (INT32 words); 0 when it has fewer than 4 dims */
int64_t gmm_s8s4_c0(const pyaclnn_stub_tensor *w) {
    return w->storage_ndim >= 4 ? op_mul_sat(w->storage_shape[w->storage_ndim - 1], 8) : 0;
}

/* The kernel (recursion-ascend/ops-transformer a093e954, op_kernel/arch35/weight_quant_basic_block/
 * gmm_s8s4_perchannel_tensor_api.h with the Blaze KernelGmmFixpipeQuant / BlockMmad ProcessPerGroup /
 * BlockEpiloguePerTokenScale it instantiates): the INT4 weight expanded to INT8; per expert, per 256-wide K group,
 * the cube's int32 sum of the int8 products; the fixpipe writes it to the FLOAT16 workspace times the group's
 * UINT64 word (fp19 scale; the exact product rounded to fp32, then to fp16 RINT), the first group plainly, the others
 * by fp16 atomic add (the exact sum rounded to fp16); the vector epilogue: fp32(workspace) * perTokenScale[m] in
 * fp32, cast RINT to y. Rows past the group list's last group keep their bytes. */
void gmm_s8s4_kernel(const pyaclnn_stub_launch *launch, const gmm_params *p, const int64_t *gl) {
    const pyaclnn_stub_tensor *X = &launch->inputs[0], *W = &launch->inputs[1], *S = &launch->inputs[2],
                              *PT = &launch->inputs[3], *Y = &launch->outputs[0];
    int64_t m_all = X->shape[0], k = p->s8s4_k, n = p->s8s4_n, e_n = p->groups, q_n = S->shape[1];
    int64_t c0 = gmm_s8s4_c0(W), per = s8s4_nz_count(k, n, c0);
    int64_t gsz = q_n ? k / q_n : k;
    pyaclnn_stub_tensor store = *W;   /* the storage as a 1-D run of INT4 from the view's offset */
    store.dtype = ACL_INT4, store.ndim = 1, store.strides[0] = 1, store.offset = W->offset * 8;
    store.shape[0] = op_mul_sat(per, e_n);
    if (!op_view_in_device_memory(&store, 4)) {
        pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "%s: weight's FRACTAL_NZ storage (data %p, offset %lld) "
                               "is not in device memory", launch->op_name, W->data, LL(W->offset));
        return;
    }
    float *x = tv_load_float(X), *pt = tv_load_float(PT), *y = tv_load_float(Y);
    unsigned char *sw = tv_gather_bytes(S);
    int8_t *wt = tv_alloc(n * k, 1);   /* one expert's weight, (n, k): each column's k values contiguous */
    int8_t *xi = tv_alloc(m_all * k, 1);
    if (!x || !pt || !y || !sw || !wt || !xi) {
        tv_fail_oom(launch);
        goto done;
    }
    for (int64_t i = 0; i < m_all * k; i++) xi[i] = (int8_t)x[i];
    const unsigned char *base = W->data;
    int64_t start = 0;
    for (int64_t e = 0; e < e_n; e++) {
        int64_t end = p->group_list_type == 0 ? gl[e] : start + gl[e];
        end = end < start ? start : end > m_all ? m_all : end;   /* the emulator keeps inside x */
        if (end > start) {
            int64_t e0 = store.offset + e * per;
            for (int64_t q = 0; q < k; q++)
                for (int64_t j = 0; j < n; j++) {
                    int64_t at = e0 + nz_layout_index(0, q, j, k, n, 16, c0);
                    int v = (at & 1) ? base[at >> 1] >> 4 : base[at >> 1] & 0xF;
                    wt[j * k + q] = (int8_t)(v >= 8 ? v - 16 : v);
                }
            for (int64_t i = start; i < end; i++)
                for (int64_t j = 0; j < n; j++) {
                    uint16_t ws = 0;
                    for (int64_t g = 0; g < q_n; g++) {
                        int32_t acc = a8w8_dot(xi + i * k + g * gsz, 1, wt + j * k + g * gsz, 1, gsz);
                        uint64_t word;
                        memcpy(&word, sw + 8 * ((e * q_n + g) * n + j), 8);
                        uint16_t h = num_f32_to_f16(a8w8_fixpipe_float((double)acc, word));
                        ws = g == 0 ? h : f16_add(ws, h);
                    }
                    y[i * n + j] = num_f16_to_f32(ws) * pt[i];
                }
        }
        start = end;
    }
    tv_store_float(Y, y);   /* CAST_RINT to FLOAT16 / BFLOAT16 */
done:
    free(x), free(pt), free(y), free(sw), free(wt), free(xi);
}
