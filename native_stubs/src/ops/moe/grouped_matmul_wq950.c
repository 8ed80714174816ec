/*
 * Grouped matmul on the Ascend 950, the weight-quantised pairs (x and weight of different element sizes: A8W4 /
 * S8S4, A16W8, A16W4, A16 FP8 / FP4 weights): the 950's CheckFunctionParams hands them to
 * AclnnGroupedMatmulWeightQuant91095Checker::CheckGroupedMatmulWeightQuant91095 (op_host/op_api/
 * aclnn_grouped_matmul_weight_quant_910_95_checker.cpp, in the ops-transformer tree that carries it). The emulator
 * runs its first checks in their order and words, each 161002: CheckGroupTypeScenario, CheckUnsupportedApi,
 * CheckGroupListAndSplitItem, CheckAntiQuantParams, CheckQuantParams; then refuses (161002): no weight-quantised
 * kernel of the 950 is modelled. aclnnGroupedMatmulWeightNz reads an INT32 x or weight as packed INT4
 * (UnpackInt32ToInt4, before any check); V4 / V5 do not.
 */
#include <string.h>

#include "grouped_matmul.h"
#include "kernels/dtype.h"
#include "ops_decls.h"

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

aclnnStatus gmm_950_weight_quant_params(op_call *c, const gmm_lists *L, int64_t act_type, int64_t split) {
    char b1[24], b2[24];
    if (act_type != 0) return gmm_bad(c, "Activation is not supported on Ascend910_95 platforms.");
    aclDataType x = seen_dtype(c, L->X.t[0].dtype), w = seen_dtype(c, L->W.t[0].dtype);
    int a16w8 = half_x(x) && w == ACL_INT8, a16w4 = half_x(x) && w == ACL_INT4;
    int a16f8 = half_x(x) && (w == ACL_FLOAT8_E4M3FN || w == ACL_FLOAT8_E5M2 || w == ACL_HIFLOAT8);
    int nz4 = (half_x(x) && w == ACL_FLOAT4_E2M1) || (x == ACL_FLOAT8_E4M3FN && w == ACL_FLOAT4_E2M1) ||
              (x == ACL_INT8 && w == ACL_INT4);
    int s8s4 = x == ACL_INT8 && w == ACL_INT4, mx_a8w4 = x == ACL_FLOAT8_E4M3FN && w == ACL_FLOAT4_E2M1;
    int nz = weight_nz_entry(c), v45 = !nz;   /* the emulator's entries: V4, V5, WeightNz */
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
    /* CheckAntiQuantParams (its null check is 161001 inside, 161002 from CheckFunctionParams) */
    if (!L->q[GMM_Q_AQ_SCALE].n) return gmm_bad(c, "AntiquantScale must not be nullptr in antiquant, but now is nullptr.");
    if ((a16f8 || nz4) && L->q[GMM_Q_AQ_OFFSET].n)
        return gmm_bad(c, "In weight quant case, antiquantOffsetOptional is not supported when weightDtype is fp8/fp4 or "
                          "xDtype-weightDtype is int8-int4.");
    /* CheckQuantParams */
    if (!s8s4 && L->q[GMM_Q_SCALE].n)
        return gmm_bad(c, "In weight quant case, scale must be null when xDtype-weightDtype is not int8-int4.");
    if (s8s4 && !L->q[GMM_Q_SCALE].n)
        return gmm_bad(c, "In weight quant case, scale must not be null when xDtype-weightDtype is int8-int4.");
    if (L->q[GMM_Q_OFFSET].n) return gmm_bad(c, "In WeightQuant case, offset must be null.");
    if (!mx_a8w4 && !s8s4 && L->q[GMM_Q_PER_TOKEN].n)
        return gmm_bad(c, "In WeightQuant case, perTokenScale must be null when xDtype-weightDtype is not "
                          "float8_e4m3fn-float4_e2m1 or int8-int4.");
    if ((mx_a8w4 || s8s4) && !L->q[GMM_Q_PER_TOKEN].n)
        return gmm_bad(c, "In WeightQuant case, perTokenScale must not be null when xDtype-weightDtype is "
                          "float8_e4m3fn-float4_e2m1 or int8-int4.");
    return gmm_bad(c, "x %s with weight %s: the 950's weight-quantised paths are not modelled by the emulator",
                   op_dtype_name(x, b1), op_dtype_name(w, b2));
}
