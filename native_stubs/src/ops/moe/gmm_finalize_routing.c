/*
 * aclnnGroupedMatmulFinalizeRoutingV2 / V3: the op_api's phase-1 checks for its ND-weight entries
 * (hicann/ops-transformer gmm/grouped_matmul_finalize_routing/op_host/op_api/aclnn_grouped_matmul_finalize_routing.cpp;
 * definition: gmm_finalize_routing.toml), in its order:
 *   gmmfr_scene (the entry's own checks, before CommonProcess)
 *     1. any of x1, x2, scale, pertokenScale, groupList, sharedInput, logit, rowIndex, bias NULL, or antiquantScale /
 *        antiquantOffset given                                                         -> 161001
 *     2. dtype != 0; x2's view rank < 2; transposeX1 or transposeX2                     -> 161002
 *     3. x2 not INT32 (the packed INT4 weight: the entries are the A8W4 path)           -> 161002
 *     4. PreMatmulCalcProcess: CheckNotNull (x1, x2, out)                               -> 161001
 *   gmmfr_check (after `read`)
 *     5. CheckDimRange: x2 storage rank in [3, 7] (FRACTAL_NZ [5, 9]), x1 and out at least 2 dims, scale 3 dims, offset 3, bias 2,
 *        pertokenScale 1, groupList 1, sharedInput 2, logit 1, rowIndex 1              -> 161002
 *     6. CheckDtypeValid, INT4 weight: x1 INT8, scale INT64, rowIndex INT64, offset / bias FLOAT, pertokenScale
 *        FLOAT, groupList INT64, sharedInput BFLOAT16, logit FLOAT, out FLOAT            -> 161002
 *   gmmfr_a8w4_check (gmm_finalize_routing_a8w4.c): CheckShape, CheckFormat, CheckTuningConfig, the tiling's K
 *     limit, then the A8W4 kernel.
 * The weight's INT32 -> INT4 view (last dim x 8) happens between 3 and 4; the checks here read x2's INT32 snapshot.
 */
#include <stdio.h>
#include <string.h>
#include "kernels/dtype.h"
#include "opbase/checks.h"
#include "ops/moe/gmmfr_routing.h"
#include "ops_decls.h"

int gmmfr_mx_owns(const op_call *c);   /* V3 on Ascend 950: gmm_finalize_routing_mx.c's steps */

/* The name the op_api's messages use: "aclnnGroupedMatmulFinalizeRoutingV3" (V2 writes "GroupedMatmulFinalizeRoutingV2"). */
static const char *gmmfr_label(const op_call *c) {
    return strcmp(c->def->name, "GroupedMatmulFinalizeRoutingV3") == 0 ? "aclnnGroupedMatmulFinalizeRoutingV3"
                                                                         : "GroupedMatmulFinalizeRoutingV2";
}

/* gmmfr_scene x1 x2 scale bias antiquantScale antiquantOffset pertoken groupList sharedInput logit rowIndex dtype
 * transposeX1 transposeX2 out */
aclnnStatus opc_gmmfr_scene(op_call *c, const op_step *s) {
    if (gmmfr_mx_owns(c)) return ACLNN_SUCCESS;
    const char *who = gmmfr_label(c);
    static const int required[] = {0, 1, 2, 3, 6, 7, 8, 9, 10};
    for (size_t k = 0; k < sizeof required / sizeof required[0]; k++)
        if (op_argument(c, s, required[k])->p == NULL)
            return op_failf(c->api, ACLNN_ERR_PARAM_NULLPTR, "%s weightNd do not support input nullptr.", who);
    if (op_argument(c, s, 4)->p != NULL || op_argument(c, s, 5)->p != NULL)
        return op_failf(c->api, ACLNN_ERR_PARAM_NULLPTR, "%s weightNd do not support input nullptr.", who);
    pyaclnn_stub_tensor x2;
    aclnnStatus st = op_tensor_arg(c->api, "x2", op_argument(c, s, 1)->p, &x2);
    if (st != ACLNN_SUCCESS) return st;
    int64_t dtype = op_argument(c, s, 11)->i;
    if (dtype != 0)
        return op_invalidf(c->api, "%s weightNd dtype must be 0, but is %lld.", who, (long long)dtype);
    if (x2.ndim < 2)
        return op_invalidf(c->api, "%s weightNd x2's view dimNum should greater than 1, but is %lld.", who,
                           (long long)x2.ndim);
    if (op_argument(c, s, 12)->i != 0 || op_argument(c, s, 13)->i != 0)
        return op_invalidf(c->api, "%s weightNd transpose should be false", who);
    if (x2.dtype != ACL_INT32) {
        char b[24];
        return op_invalidf(c->api, "%s weightNd weight type should be INT_32, but now is %s", who,
                           op_dtype_name(x2.dtype, b));
    }
    if (op_argument(c, s, 14)->p == NULL) return op_failf(c->api, ACLNN_ERR_PARAM_NULLPTR, "out is NULL");
    return ACLNN_SUCCESS;
}

aclnnStatus gmmfr_rank(op_call *c, const char *name, const pyaclnn_stub_tensor *t, int64_t want) {
    if (!t->present || t->ndim == want) return ACLNN_SUCCESS;
    char b[160];
    return op_invalidf(c->api, "Expected %lld dimension input, but got %s with sizes %s.", (long long)want, name,
                       tv_shape_text(t->shape, t->ndim, b, sizeof b));
}

aclnnStatus gmmfr_check_out(op_call *c, const pyaclnn_stub_tensor *out, int64_t M, int64_t N, int64_t shared_offset,
                            int64_t list_type, int64_t *bs) {
    if (out->ndim != 2)
        return op_invalidf(c->api, "Out dim num should be equal to 2, but is %lld.", (long long)out->ndim);
    *bs = out->shape[0];
    if (!(*bs <= M && *bs >= 0))
        return op_invalidf(c->api, "Out 1st dim should be less than or equal to x MDim , but out 1st dim is %lld",
                           (long long)*bs);
    if (out->shape[1] != N)
        return op_invalidf(c->api, "Out 2nd dim should be equal to weight NDim, but out 2nd dim is %lld, weight NDim "
                           "is %lld.", (long long)out->shape[1], (long long)N);
    if (shared_offset < 0) return op_invalidf(c->api, "sharedInputOffset should bigger than or equal to 0");
    if (list_type != 1) return op_invalidf(c->api, "groupListType is 1, but is %lld", (long long)list_type);
    return ACLNN_SUCCESS;
}

aclnnStatus gmmfr_check_routing(op_call *c, const pyaclnn_stub_tensor *pt, const pyaclnn_stub_tensor *gl,
                                const pyaclnn_stub_tensor *shared, const pyaclnn_stub_tensor *logit,
                                const pyaclnn_stub_tensor *row, int64_t M, int64_t E, int64_t N, int64_t bs,
                                int64_t shared_offset) {
    if (pt->present && pt->shape[0] != M)
        return op_invalidf(c->api, "pertokenScale fisrt dim should equal to x MDim %lld, but actual is %lld.",
                           (long long)M, (long long)pt->shape[0]);
    if (gl->shape[0] != E)
        return op_invalidf(c->api, "groupList fisrt dim should equal to weight EDim %lld, but actual is %lld.",
                           (long long)E, (long long)gl->shape[0]);
    if (shared->present && !(shared->shape[0] <= bs && shared->shape[1] == N))
        return op_invalidf(c->api, "shareInput fisrt dim should less than or equal to outputBS %lld, but actual is "
                           "%lld.        shareInput last dim should equal to weight NDim %lld, but actual is %lld.",
                           (long long)bs, (long long)shared->shape[0], (long long)N, (long long)shared->shape[1]);
    if (logit->present && logit->shape[0] != M)
        return op_invalidf(c->api, "logit fisrt dim should equal to x MDim %lld, but actual is %lld.", (long long)M,
                           (long long)logit->shape[0]);
    if (row->shape[0] != M)
        return op_invalidf(c->api, "rowIndex fisrt dim should equal to x MDim %lld, but actual is %lld.", (long long)M,
                           (long long)row->shape[0]);
    int64_t shared_rows = shared->present ? shared->shape[0] : 0;
    if (shared_offset + shared_rows > bs)
        return op_invalidf(c->api, "shareInputOffset add shareInputDim should be less than or equal to outputBS, but "
                           "shareInputOffset is %lld, weight is %lld.", (long long)(shared_offset + shared_rows),
                           (long long)bs);
    return ACLNN_SUCCESS;
}

/* OP_CHECK_DTYPE_NOT_SUPPORT with a one-dtype list, in its words (absent optional operands pass) */
static aclnnStatus gmmfr_dtype(op_call *c, const char *name, const pyaclnn_stub_tensor *t, aclDataType want) {
    if (!t->present || t->dtype == want) return ACLNN_SUCCESS;
    char b[24], w[24];
    return op_invalidf(c->api, "Tensor %s not implemented for %s, should be in dtype support list [%s].", name,
                       op_dtype_name(t->dtype, b), op_dtype_name(want, w));
}

/* gmmfr_check x1 x2 scale bias offset pertoken groupList sharedInput logit rowIndex out */
aclnnStatus opc_gmmfr_check(op_call *c, const op_step *s) {
    if (gmmfr_mx_owns(c)) return ACLNN_SUCCESS;
    const pyaclnn_stub_tensor *x1 = op_tensor(c, s, 0), *x2 = op_tensor(c, s, 1), *scale = op_tensor(c, s, 2),
                              *bias = op_tensor(c, s, 3), *offset = op_tensor(c, s, 4), *pt = op_tensor(c, s, 5),
                              *gl = op_tensor(c, s, 6), *shared = op_tensor(c, s, 7), *logit = op_tensor(c, s, 8),
                              *row = op_tensor(c, s, 9), *out = op_tensor(c, s, 10);
    aclnnStatus st;
    /* CheckDimRange: x2's storage rank is checked with a bare CHECK_RET (no message of its own). An ND x2 has been
     * through TensorContiguousProcess by then (l0op::Contiguous: a contiguous tensor whose storage is its view;
     * torch_npu hands a 1-D storage shape for every ND tensor), so its view rank counts; NZ keeps its storage. */
    int nz = x2->format == ACL_FORMAT_FRACTAL_NZ || x2->format == ACL_FORMAT_FRACTAL_NZ_C0_16 ||
             x2->format == ACL_FORMAT_FRACTAL_NZ_C0_32;
    int64_t x2_storage = nz && x2->storage_ndim > 0 ? x2->storage_ndim : x2->ndim;
    int64_t lo = nz ? 5 : 3, hi = nz ? 9 : 7;   /* MIN/MAX_DIM_NUM_ND (2, 6) or _NZ (4, 8), plus one */
    if (x2_storage < lo || x2_storage > hi) /* the vendor logs nothing here: the message is the emulator's */
        return op_invalidf(c->api, "x2's storage dimNum should be in [%lld, %lld], but is %lld.", (long long)lo,
                           (long long)hi, (long long)x2_storage);
    /* OP_CHECK_MIN_DIM */
    if (x1->ndim < 2) return op_invalidf(c->api, "The params.x1 tensor must have at least 2 dimensions.");
    if (out->ndim < 2) return op_invalidf(c->api, "The params.out tensor must have at least 2 dimensions.");
    if ((st = gmmfr_rank(c, "params.scale", scale, 3)) || (st = gmmfr_rank(c, "params.offset", offset, 3)) ||
        (st = gmmfr_rank(c, "params.bias", bias, 2)) || (st = gmmfr_rank(c, "params.pertokenScaleOptional", pt, 1)) ||
        (st = gmmfr_rank(c, "params.groupList", gl, 1)) || (st = gmmfr_rank(c, "params.shareInput", shared, 2)) ||
        (st = gmmfr_rank(c, "params.logit", logit, 1)) || (st = gmmfr_rank(c, "params.rowIndex", row, 1)))
        return st;
    /* CheckDtypeValid, the INT4-weight lists (x2 is INT4 once viewed: its check passes) */
    if ((st = gmmfr_dtype(c, "params.x1", x1, ACL_INT8)) || (st = gmmfr_dtype(c, "params.scale", scale, ACL_INT64)) ||
        (st = gmmfr_dtype(c, "params.rowIndex", row, ACL_INT64)) || (st = gmmfr_dtype(c, "params.offset", offset, ACL_FLOAT)) ||
        (st = gmmfr_dtype(c, "params.bias", bias, ACL_FLOAT)) ||
        (st = gmmfr_dtype(c, "params.pertokenScaleOptional", pt, ACL_FLOAT)) ||
        (st = gmmfr_dtype(c, "params.groupList", gl, ACL_INT64)) || (st = gmmfr_dtype(c, "params.shareInput", shared, ACL_BF16)) ||
        (st = gmmfr_dtype(c, "params.logit", logit, ACL_FLOAT)) || (st = gmmfr_dtype(c, "params.out", out, ACL_FLOAT)))
        return st;
    return ACLNN_SUCCESS;   /* CheckShape onwards and the kernel: gmm_finalize_routing_a8w4.c */
}
