/*
 * aclnnGroupedMatmulFinalizeRoutingWeightNz / WeightNzV2: the A8W8 grouped matmul with a FRACTAL_NZ INT8 weight, fused
 * with MoE finalize routing (hicann/ops-transformer gmm/grouped_matmul_finalize_routing: op_api
 * aclnn_grouped_matmul_finalize_routing.cpp, tiling grouped_matmul_finalize_routing_base_tiling.cpp, kernel
 * op_kernel/grouped_matmul_finalize_routing.h; definition: gmm_finalize_routing.toml).
 *
 * Checks, in the op_api's order:
 *   gmmfr_nz_scene (before CommonProcess)
 *     WeightNzV2: an INT32 weight is the packed INT4 one (A8W4); INT4 without pertokenScale -> 161001
 *     CheckSupportScene: x1, x2, scale, groupList, rowIndex given and sharedInput / logit both given or both absent
 *       -> else 161001; dtype != 0; x2's view rank < 2; a transpose flag; CheckWeightNzFormat (x1 ND, x2 FRACTAL_NZ;
 *       x2's storage holds the NZ shape's element count) -> 161002
 *     PreMatmulCalcProcess: CheckNotNull (x1, x2, out) -> 161001
 *   gmmfr_nz_check (after `read`)
 *     CheckDimRange (x2 storage rank [5, 9], x1 / out at least 2, scale 2, pertoken 1, groupList 1, sharedInput 2,
 *       logit 1, rowIndex 1), CheckDtypeValid, CheckShape (the NZ K1 alignment, K, k % 16 / n % 32 / n >= 256, out,
 *       sharedInputOffset, groupListType 1, CheckDimValue, empty tensors), CheckTuningConfig -> 161002
 *     (CheckFormat cannot fail here: SetTensorToNDFormat has relabelled every non-NZ tensor ND before it.)
 *   The emulator's limits after them (161002): the INT4 weight (A8W4), an INT64 scale (no kernel template reads one),
 *   the scene without sharedInput / logit given a bias or no pertokenScale (that kernel reads buffers it never
 *   filled), a bias of another size than E x N.
 *
 * Kernel (QuantGroupMatmul, combine): token rows in order of their expert's group (groupList: counts);
 *   acc[n] = the int32 dot product of x1[m] and weight[e][:, n] (the cube's wrapping accumulator);
 *   d = fp32(acc) * scale[e][n] (AscendDequant; a BFLOAT16 scale widened);
 *   with sharedInput / logit (scatter-add): s = pertoken[m] * logit[m] (or logit[m]); y = d * s, + logit[m] *
 *     fp32(bias[e][n]) when bias is given; out[rowIndex[m]] += y (fp32 atomic adds: in token order here, in the
 *     cores' order on the NPU); before them out = 0 except rows [sharedInputOffset, + sharedInput rows) =
 *     fp32(sharedInput) * sharedInputWeight;
 *   without them: out[rowIndex[m]] = d * pertoken[m] (the other rows are left as they were).
 * Out-of-range groupList counts (negative, or more tokens than x1 rows) and rowIndex values are a device fault.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal/pyaclnn_stub.h"
#include "kernels/dtype.h"
#include "kernels/view.h"
#include "numerics/numerics.h"
#include "opbase/checks.h"
#include "ops/moe/gmmfr_routing.h"
#include "ops/moe/grouped_matmul.h"
#include "ops/quant/a8w8_dequant.h"
#include "ops_decls.h"

typedef struct {
    int64_t m, k, n, e, batch, shared_rows, shared_offset;
    int scatter, has_bias, has_pertoken;
    float shared_weight;
} gmmfr_nz_params;

static int gmmfr_nz_v2(const op_call *c) { return strcmp(c->def->name, "GroupedMatmulFinalizeRoutingWeightNzV2") == 0; }

static int gmmfr_is_nz(aclFormat f) {
    return f == ACL_FORMAT_FRACTAL_NZ || f == ACL_FORMAT_FRACTAL_NZ_C0_16 || f == ACL_FORMAT_FRACTAL_NZ_C0_32;
}

static int64_t gmmfr_ceil(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* GetWeightNzShape's element count for an INT8 (or INT4) weight that is not transposed: (..., n1, k1, 16, 32 or 64). */
static int64_t gmmfr_nz_count(const pyaclnn_stub_tensor *w, int int4) {
    int64_t d = w->ndim, k = w->shape[d - 2], n = w->shape[d - 1];
    int64_t total = op_mul_sat(gmmfr_ceil(k, 16), gmmfr_ceil(n, int4 ? 64 : 32));
    for (int64_t i = 0; i < d - 2; i++) total = op_mul_sat(total, w->shape[i]);
    return op_mul_sat(total, 16 * (int4 ? 64 : 32));
}

static int64_t gmmfr_storage_count(const pyaclnn_stub_tensor *w) {
    int64_t total = 1;
    for (int64_t i = 0; i < w->storage_ndim; i++) total = op_mul_sat(total, w->storage_shape[i]);
    return total;
}

/* gmmfr_nz_scene x1 x2 scale pertoken groupList sharedInput logit rowIndex dtype transposeX1 transposeX2 out */
aclnnStatus opc_gmmfr_nz_scene(op_call *c, const op_step *s) {
    const void *x1p = op_argument(c, s, 0)->p, *x2p = op_argument(c, s, 1)->p, *pt = op_argument(c, s, 3)->p;
    const void *shared = op_argument(c, s, 5)->p, *logit = op_argument(c, s, 6)->p;
    pyaclnn_stub_tensor x1, x2;
    aclnnStatus st;
    if (gmmfr_nz_v2(c) && x2p != NULL) {
        if ((st = op_tensor_arg(c->api, "x2", x2p, &x2)) != ACLNN_SUCCESS) return st;
        if (x2.dtype == ACL_INT32 && pt == NULL)
            return op_failf(c->api, ACLNN_ERR_PARAM_NULLPTR, "GroupedMatmulFinalizeRoutingWeightNz does not support "
                            "nullptr for pertokenScale.");
    }
    int base = x1p && x2p && op_argument(c, s, 2)->p && op_argument(c, s, 4)->p && op_argument(c, s, 7)->p;
    if (!base || (shared == NULL) != (logit == NULL))
        return op_failf(c->api, ACLNN_ERR_PARAM_NULLPTR, "GroupedMatmulFinalizeRoutingWeightNz do not support input "
                        "nullptr.");
    int64_t dtype = op_argument(c, s, 8)->i;
    if (dtype != 0) return op_invalidf(c->api, "GroupedMatmulFinalizeRoutingWeightNz dtype must be 0, but is %lld.",
                                       (long long)dtype);
    if ((st = op_tensor_arg(c->api, "x1", x1p, &x1)) != ACLNN_SUCCESS ||
        (st = op_tensor_arg(c->api, "x2", x2p, &x2)) != ACLNN_SUCCESS)
        return st;
    int int4 = x2.dtype == ACL_INT32;   /* WeightNzV2's INT32 -> INT4 view: its last dim times 8 */
    if (int4) x2.shape[x2.ndim - 1] *= 8;
    if (x2.ndim < 2)
        return op_invalidf(c->api, "GroupedMatmulFinalizeRoutingWeightNz w's view dimNum should greater than 1, but is "
                           "%lld.", (long long)x2.ndim);
    if (op_argument(c, s, 9)->i != 0 || op_argument(c, s, 10)->i != 0)
        return op_invalidf(c->api, "GroupedMatmulFinalizeRoutingWeightNz transpose should be false");
    if (x1.format != ACL_FORMAT_ND || !gmmfr_is_nz(x2.format)) {
        char a[24], b[24];
        return op_invalidf(c->api, "GroupedMatmulFinalizeRoutingWeightNzV2 do not support x1's format[%s],x2's "
                           "format[%s]. Only support x1: ND, x2: NZ", op_format_name(x1.format, a),
                           op_format_name(x2.format, b));
    }
    if (gmmfr_nz_count(&x2, int4) != gmmfr_storage_count(&x2))
        return op_invalidf(c->api, "GroupedMatmulFinalizeRoutingWeightNzV2 x2'format only support NZ, but now x2's "
                           "format is not NZ(Ascend affinity format). aclnnCalculateMatmulWeightSizeV2 and "
                           "aclnnTransMatmulWeight can be used to convert the input format from ND to Ascend affinity "
                           "format.");
    if (op_argument(c, s, 11)->p == NULL) return op_failf(c->api, ACLNN_ERR_PARAM_NULLPTR, "out is NULL");
    return ACLNN_SUCCESS;
}

/* OP_CHECK_DTYPE_NOT_SUPPORT (absent optional operands pass) */
static aclnnStatus gmmfr_nz_dtype(op_call *c, const char *name, const pyaclnn_stub_tensor *t, const aclDataType *list,
                                  size_t n) {
    if (!t->present || ew_in_list(t->dtype, list, n)) return ACLNN_SUCCESS;
    char b[24], all[96];
    return op_invalidf(c->api, "Tensor %s not implemented for %s, should be in dtype support list [%s].", name,
                       op_dtype_name(t->dtype, b), ew_dtype_list(list, n, all, sizeof all));
}

/* gmmfr_nz_check x1 x2 scale bias pertoken groupList sharedInput logit rowIndex sharedInputWeight sharedInputOffset
 * groupListType out [tuningConfig] */
aclnnStatus opc_gmmfr_nz_check(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x1 = op_tensor(c, s, 0), *x2 = op_tensor(c, s, 1), *scale = op_tensor(c, s, 2),
                              *bias = op_tensor(c, s, 3), *pt = op_tensor(c, s, 4), *gl = op_tensor(c, s, 5),
                              *shared = op_tensor(c, s, 6), *logit = op_tensor(c, s, 7), *row = op_tensor(c, s, 8),
                              *out = op_tensor(c, s, 12);
    float shared_weight = (float)op_argument(c, s, 9)->d;
    int64_t shared_offset = op_argument(c, s, 10)->i, list_type = op_argument(c, s, 11)->i;
    int int4 = x2->dtype == ACL_INT32;
    /* CheckDimRange: the storage rank with a bare CHECK_RET (the message is the emulator's) */
    int64_t storage = x2->storage_ndim > 0 ? x2->storage_ndim : x2->ndim;
    if (storage < 5 || storage > 9)
        return op_invalidf(c->api, "x2's storage dimNum should be in [5, 9], but is %lld.", (long long)storage);
    if (x1->ndim < 2) return op_invalidf(c->api, "The params.x1 tensor must have at least 2 dimensions.");
    if (out->ndim < 2) return op_invalidf(c->api, "The params.out tensor must have at least 2 dimensions.");
    if (int4)   /* the A8W4 path: its own dims and dtype lists, then no arithmetic here */
        return op_invalidf(c->api, "x2 INT4 (packed in INT32): the emulator does not implement the A8W4 computation "
                           "of %s (its fixpipe dequant rounding of the INT64 scale is not published)", c->def->name);
    GMMFR_TRY(gmmfr_rank(c, "params.scale", scale, 2));
    GMMFR_TRY(gmmfr_rank(c, "params.pertokenScaleOptional", pt, 1));
    GMMFR_TRY(gmmfr_rank(c, "params.groupList", gl, 1));
    GMMFR_TRY(gmmfr_rank(c, "params.shareInput", shared, 2));
    GMMFR_TRY(gmmfr_rank(c, "params.logit", logit, 1));
    GMMFR_TRY(gmmfr_rank(c, "params.rowIndex", row, 1));
    /* CheckDtypeValid, the INT8 lists */
    static const aclDataType in[] = {ACL_INT8, ACL_INT4}, sc[] = {ACL_FLOAT, ACL_INT64, ACL_BF16},
                             ri[] = {ACL_INT64, ACL_INT32}, bf[] = {ACL_BF16}, f32[] = {ACL_FLOAT}, i64[] = {ACL_INT64};
    GMMFR_TRY(gmmfr_nz_dtype(c, "params.x1", x1, in, 2));
    GMMFR_TRY(gmmfr_nz_dtype(c, "params.x2", x2, in, 2));
    GMMFR_TRY(gmmfr_nz_dtype(c, "params.scale", scale, sc, 3));
    GMMFR_TRY(gmmfr_nz_dtype(c, "params.rowIndex", row, ri, 2));
    GMMFR_TRY(gmmfr_nz_dtype(c, "params.bias", bias, bf, 1));
    GMMFR_TRY(gmmfr_nz_dtype(c, "params.pertokenScaleOptional", pt, f32, 1));
    GMMFR_TRY(gmmfr_nz_dtype(c, "params.groupList", gl, i64, 1));
    GMMFR_TRY(gmmfr_nz_dtype(c, "params.shareInput", shared, bf, 1));
    GMMFR_TRY(gmmfr_nz_dtype(c, "params.logit", logit, f32, 1));
    GMMFR_TRY(gmmfr_nz_dtype(c, "params.out", out, f32, 1));
    if (x1->dtype != x2->dtype) {
        char a[24], b[24];
        return op_invalidf(c->api, "x1 and x2 dtype should be same, actual x1 dtype is %s and x2 dtype is %s.",
                           op_dtype_name(x1->dtype, a), op_dtype_name(x2->dtype, b));
    }
    /* CheckShape */
    int64_t K = x1->shape[x1->ndim - 1], M = x1->shape[x1->ndim - 2], E = x2->shape[0];
    int64_t K2 = x2->shape[x2->ndim - 2], N = x2->shape[x2->ndim - 1];
    int64_t k1 = x2->storage_ndim >= 3 ? x2->storage_shape[x2->storage_ndim - 3] : 0;
    if (gmmfr_ceil(K, 16) * 16 != k1 * 16)
        return op_invalidf(c->api, "AlignedK1 value %lld is not matched with k1 value times aligneValue, which is "
                           "%lld.", (long long)(gmmfr_ceil(K, 16) * 16), (long long)(k1 * 16));
    if (K != K2)
        return op_invalidf(c->api, "x1 k dim and x2 k dim should be same, but x1 is %lld, x2 is %lld.", (long long)K,
                           (long long)K2);
    if (!(K2 % 16 == 0 && N % 32 == 0 && N >= 256))
        return op_invalidf(c->api, "k dim %lld and n dim %lld do not support. only support k mod 16 equal 0, n mod 32 "
                           "equal 0 and n bigger or equal 256", (long long)K2, (long long)N);
    int64_t bs;
    GMMFR_TRY(gmmfr_check_out(c, out, M, N, shared_offset, list_type, &bs));
    /* CheckDimValue (the vendor's line continuations keep their indentation in the messages) */
    if (!(scale->shape[0] == E && scale->shape[1] == N))
        return op_invalidf(c->api, "Scale fisrt dim should equal to weight EDim %lld, but actual is %lld."
                           "            Scale last dim should equal to weight NDim %lld or 1, but actual is %lld.",
                           (long long)E, (long long)scale->shape[0], (long long)N, (long long)scale->shape[1]);
    GMMFR_TRY(gmmfr_check_routing(c, pt, gl, shared, logit, row, M, E, N, bs, shared_offset));
    if (gmmfr_empty(pt))
        return op_invalidf(c->api, "GroupedMatmulFinalizeRouting do not support pertokenScaleOptional size is 0.");
    if (gmmfr_empty(x1) || gmmfr_empty(x2) || gmmfr_empty(scale) || gmmfr_empty(gl) || gmmfr_empty(shared) ||
        gmmfr_empty(logit) || gmmfr_empty(row))
        return op_invalidf(c->api, "GroupedMatmulFinalizeRouting WeightNz do not support input tensor size is 0.");
    /* CheckTuningConfig (WeightNzV2) */
    if (s->np > 13) {
        uint64_t nt = c->ints[s->p[13]].n;
        int64_t v = nt ? c->ints[s->p[13]].v[0] : 0;
        if (nt && (v < 0 || v > x1->shape[0]))
            return op_invalidf(c->api, "GroupedMatmulFinalizeRouting Invalid tuningConfigOptional (%lld)! It should be "
                               "a non-negative num and smaller than (%lld)", (long long)v, (long long)x1->shape[0]);
    }
    /* the emulator's limits */
    int scatter = shared->present;   /* sharedInput and logit come together (the scene check) */
    if (x1->ndim != 2 || x2->ndim != 3)   /* the op_api only logs this (GetX1X2DimValue) */
        return op_invalidf(c->api, "x1 of %lld dims, x2 of %lld: the emulator models x1 [M, K] and x2 [E, K, N] only",
                           (long long)x1->ndim, (long long)x2->ndim);
    if (scale->dtype == ACL_INT64)
        return op_invalidf(c->api, "scale INT64: no kernel template of %s reads an INT64 scale (the emulator models "
                           "FLOAT and BFLOAT16)", c->def->name);
    if (!scatter && (bias->present || !pt->present))
        return op_invalidf(c->api, "%s without sharedInput / logit given %s: its kernel then reads a buffer it never "
                           "fills (not modelled)", c->def->name, bias->present ? "a bias" : "no pertokenScale");
    if (bias->present && pyaclnn_stub_numel(bias) != op_mul_sat(E, N))
        return op_invalidf(c->api, "bias of %lld elements: the kernel reads E x N = %lld (the emulator refuses "
                           "another size)", (long long)pyaclnn_stub_numel(bias), (long long)op_mul_sat(E, N));
    gmmfr_nz_params *p = op_params(c, sizeof *p);
    *p = (gmmfr_nz_params){M, K, N, E, bs, shared->present ? shared->shape[0] : 0, shared_offset, scatter, bias->present, pt->present,
                           shared_weight};
    return ACLNN_SUCCESS;
}

void gmmfr_nz_kernel(const pyaclnn_stub_launch *launch) {
    const gmmfr_nz_params *p = launch->params;
    const pyaclnn_stub_tensor *in = launch->inputs, *out_t = &launch->outputs[0];
    if (!tv_launch_views_ok(launch) || !gmm_nz_in_memory(launch, &in[1], 1)) return;
    int64_t M = p->m, K = p->k, N = p->n, B = p->batch;
    int8_t *x = (int8_t *)tv_gather_bytes(&in[0]), *w = gmm_nz_weight_load(&in[1], 0);
    float *scale = tv_load_float(&in[2]), *bias = p->has_bias ? tv_load_float(&in[3]) : NULL;
    float *pt = p->has_pertoken ? tv_load_float(&in[4]) : NULL;
    int64_t *counts = (int64_t *)tv_gather_bytes(&in[5]);
    float *shared = p->scatter ? tv_load_float(&in[6]) : NULL, *logit = p->scatter ? tv_load_float(&in[7]) : NULL;
    unsigned char *rows = tv_gather_bytes(&in[8]);
    float *out = p->scatter ? tv_alloc(B * N, sizeof(float)) : tv_load_float(out_t);
    if (!x || !w || !scale || (p->has_bias && !bias) || (p->has_pertoken && !pt) || !counts ||
        (p->scatter && (!shared || !logit)) || !rows || !out) {
        tv_fail_oom(launch);
    } else if (gmmfr_indices_ok(p->e, p->m, p->batch, counts, rows, in[8].dtype)) {
        if (p->scatter)   /* PreProcess: zeros, and the shared input's rows scaled */
            gmmfr_prologue(out, B, N, shared, p->shared_rows, p->shared_offset, p->shared_weight);
        for (int64_t e = 0, m = 0; e < p->e; e++) {
            for (int64_t end = m + counts[e]; m < end; m++) {
                int64_t r = gmmfr_row(rows, in[8].dtype, m);
                float tok = p->scatter ? (pt ? pt[m] * logit[m] : logit[m]) : pt[m];
                for (int64_t j = 0; j < N; j++) {
                    int32_t acc = a8w8_dot(x + m * K, 1, w + e * K * N + j, N, K);
                    float y = a8w8_vector_dequant(acc, scale[e * N + j], &tok, NULL);
                    if (bias) y = y + logit[m] * bias[e * N + j];
                    if (p->scatter) out[r * N + j] += y;
                    else out[r * N + j] = y;
                }
            }
        }
        tv_store_float(out_t, out);
    }
    free(x), free(w), free(scale), free(bias), free(pt), free(counts), free(shared), free(logit), free(rows), free(out);
}
