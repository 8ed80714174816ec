/*
 * aclnnGroupedMatmulWeightNz (hicann/ops-transformer gmm/grouped_matmul, op_host/op_api/aclnn_grouped_matmul.cpp):
 * GroupedMatmulV5's checks and kernel (grouped_matmul.c, grouped_matmul_quant.c) with the weights read as FRACTAL_NZ
 * storage. Definitions and the source notes: grouped_matmul.toml.
 *
 * The entry's own steps, around V5's (gmm_plan):
 *   gmm_nz_split_k: after CheckNotNull, before CheckCommonParam: groupType 2 refused;
 *   gmm_nz_weight: GetGMMResultByL0Api's, after CheckZeroShape (every x empty ends phase 1 first):
 *     ParamsWeightNzDtype (CheckWeightQuantGMMWeightNz, CheckQuantGMMWeightNz, CheckNoQuantGMMWeightNz: the first
 *     whose x / weight pair matches decides), then TransWeightToNz's alignment of every weight, each 161002.
 */
#include <stdlib.h>

#include "grouped_matmul.h"
#include "kernels/device.h"
#include "kernels/dtype.h"
#include "kernels/nz_layout.h"
#include "kernels/view.h"
#include "ops_decls.h"

#define NZ_N0 16   /* rows of a block */
#define NZ_C0 32   /* INT8 columns of a block: 32 bytes */

static const char *dname(aclDataType d, char b[24]) { return op_dtype_name(d, b); }

/* gmm_nz_split_k groupType */
aclnnStatus opc_gmm_nz_split_k(op_call *c, const op_step *s) {
    if (op_argument(c, s, 0)->i == GMM_SPLIT_K) return gmm_bad(c, "Not support split k dim now, groupType can not be "
                                                                  "2.");
    return ACLNN_SUCCESS;
}

/* ParamsWeightNzDtype: -1 when no pattern's x / weight pair matches, else 0 (passed) or 1 (refused, reported) */
static int nz_pattern(op_call *c, aclDataType xd, aclDataType wd, aclDataType yd) {
    char b1[24], b2[24], b3[24];
    int y16 = yd == ACL_FLOAT16 || yd == ACL_BF16;
    const char *what = NULL;
    int ok = 0;
    if (xd == ACL_INT8 && wd == ACL_INT4)
        ok = y16, what = "The x-weight-y of the antiquantcase[A8W4] only supports the following combinations: "
                         "INT8-INT4-BF16,INT8-INT4-Fp16";
    else if ((xd == ACL_FLOAT16 || xd == ACL_BF16) && wd == ACL_FLOAT4_E2M1)
        ok = y16, what = "The x-weight-y of the antiquantcase[A16mxFp4] only supports the following combinations: "
                         "Fp16-Fp4_e2m1-Fp16,BF16-Fp4_e2m1-BF16";
    else if (xd == ACL_INT8 && wd == ACL_INT8)
        ok = y16 || yd == ACL_INT32, what = "The x-weight-y of the quant caseonly supports the following combinations: "
                                            "INT8-INT8-BF16,INT8-INT8-Fp16,INT8-INT8-INT32";
    else if (xd == ACL_INT4 && wd == ACL_INT4)
        ok = y16, what = "The x-weight-y of the antiquantcase[A4W4] only supports the following combinations: "
                         "INT4-INT4-BF16,INT4-INT4-Fp16";
    else if (xd == ACL_BF16 && wd == ACL_BF16)
        ok = yd == ACL_BF16, what = "The x-weight-y of the antiquant case[BF16] only supports the following "
                                    "combinations: BF16-BF16-BF16";
    else if (xd == ACL_FLOAT16 && wd == ACL_FLOAT16)
        ok = yd == ACL_FLOAT16, what = " The x-weight-y of the antiquantcase[FLOAT16] only supports the following "
                                       "combinations: FLOAT16-FLOAT16-FLOAT16";
    if (!what) return -1;
    if (ok) return 0;
    gmm_bad(c, "The dtypes of x[%s]-weight[%s]-y[%s] do not match with required dtype.%s", dname(xd, b1),
            dname(wd, b2), dname(yd, b3), what);
    return 1;
}

/* TransWeightToNz (not on 310P): k and n of each weight whose storage format is FRACTAL_NZ, stopping at the first
 * that is not (the WeightNz entry relabels every weight NZ: `all`); transposeWeight is weight[0]'s. Returns how many
 * weights were NZ through `n_nz` when given. */
static aclnnStatus nz_alignment(op_call *c, const pyaclnn_stub_tensor *W, int64_t nw, int tw, int64_t *n_nz) {
    char b1[24];
    int64_t i = 0;
    for (; i < nw; i++) {
        const pyaclnn_stub_tensor *w = &W[i];
        if (n_nz && w->format != ACL_FORMAT_FRACTAL_NZ) break;
        int64_t k = w->shape[w->ndim - 2], n = w->shape[w->ndim - 1];
        int ka = 0, na = 0;
        if (w->dtype == ACL_INT8) ka = k % (tw ? 32 : 16) == 0, na = n % (tw ? 16 : 32) == 0;
        else if (w->dtype == ACL_BF16 || w->dtype == ACL_FLOAT16) ka = k % 16 == 0, na = n % 16 == 0;
        else if (w->dtype == ACL_INT4) ka = k % (tw ? 64 : 16) == 0, na = n % (tw ? 16 : 64) == 0;
        if (!ka || !na)
            return gmm_bad(c, "When weight(%s) format is FRACTAL_NZ, weight'shape(k[%lld], n[%lld]) should be "
                              "divisible by the following shape: INT8:[16, 32],BF16/FP16[16, 16],INT4[16, 64]). If the "
                              "weight is transposed,the k/n need to be reversed.", dname(w->dtype, b1), (long long)k,
                           (long long)n);
    }
    if (n_nz) *n_nz = i;
    return ACLNN_SUCCESS;
}

/* gmm_nz_weight: after gmm_plan (its executor tensors: x.., weight.., ...). */
aclnnStatus opc_gmm_nz_weight(op_call *c, const op_step *s) {
    (void)s;
    gmm_params *p = (gmm_params *)c->params;
    const pyaclnn_stub_tensor *X = c->in_snaps, *W = X + p->nx;
    char b1[24], b2[24];
    int every_x_empty = 1;
    for (int64_t i = 0; i < p->nx; i++) every_x_empty &= pyaclnn_stub_numel(&X[i]) == 0;
    if (every_x_empty) return ACLNN_SUCCESS;   /* CheckZeroShape returned before the NZ steps */
    aclDataType xd = X[0].dtype, wd = p->s8s4 ? ACL_INT4 : W[0].dtype;   /* S8S4: the INT32 weight unpacked */
    int r = nz_pattern(c, xd, wd, p->y_dt);
    if (r > 0) return ACLNN_ERR_PARAM_INVALID;
    if (r < 0)
        return gmm_bad(c, "The dtypes of x[%s]-weight[%s] do not match with required dtype.Only supported x-weight: "
                          "INT8-INT8,BF16-BF16,FP16-FP16,INT8-INT4, INT4-INT4,FP16/BF16-FP4_E2M1",
                       dname(xd, b1), dname(wd, b2));
    int tw = gmm_transposed(&W[0]);
    if (p->s8s4) {   /* TransWeightToNz's alignment on the unpacked (E, k, n) INT4 view; the storage's blocks */
        pyaclnn_stub_tensor w4 = W[0];
        w4.dtype = ACL_INT4, w4.shape[2] = p->s8s4_n;
        aclnnStatus rc = nz_alignment(c, &w4, 1, tw, 0);
        if (rc) return rc;
        if (gmm_s8s4_c0(&W[0]) != 32)   /* Int4WeightToInt8Preprocess's inputNzC032: the INT32 carrier's C0 4 */
            return gmm_bad(c, "weight FRACTAL_NZ: a storage of %lld dims whose blocks are %lld INT4 wide: the emulator "
                              "reads (E, n1, k1, 16, 32) INT4 blocks (an INT32 storage's last dim 4), as the kernel",
                           (long long)W[0].storage_ndim, (long long)gmm_s8s4_c0(&W[0]));
        p->nz = 1, p->nz_tw = tw;
        return ACLNN_SUCCESS;
    }
    aclnnStatus rc = nz_alignment(c, W, p->nw, tw, 0);
    if (rc) return rc;
    if (!p->quant && !p->a8w8_950)   /* the 950's A8W8 reads the NZ storage too (a8w8_950_kernel) */
        return gmm_bad(c, "a FRACTAL_NZ %s weight is not modelled by the emulator (its A8W8 path only)",
                       dname(wd, b1));
    p->nz = 1, p->nz_tw = tw;
    return ACLNN_SUCCESS;
}

/* gmm_nz_format (V4 / V5): after gmm_plan and CheckZeroShape, TransWeightToNz on the weights stored FRACTAL_NZ;
 * the kernel then reads them as NZ. */
aclnnStatus opc_gmm_nz_format(op_call *c, const op_step *s) {
    (void)s;
    gmm_params *p = (gmm_params *)c->params;
    const pyaclnn_stub_tensor *X = c->in_snaps, *W = X + p->nx;
    char b1[24];
    int every_x_empty = 1;
    for (int64_t i = 0; i < p->nx; i++) every_x_empty &= pyaclnn_stub_numel(&X[i]) == 0;
    if (every_x_empty) return ACLNN_SUCCESS;
    int64_t n_nz = 0;
    aclnnStatus rc = nz_alignment(c, W, p->nw, gmm_transposed(&W[0]), &n_nz);
    if (rc) return rc;
    if (n_nz == 0) return rc;
    if (p->a8w8_950)   /* unreached: the 950 checker refused a FRACTAL_NZ weight (CheckQuantCasesFormat) */
        return gmm_bad(c, "FRACTAL_NZ INT8 weights on the Ascend 950 are not modelled by the emulator");
    if (n_nz != p->nw || !p->quant)
        return gmm_bad(c, "%s FRACTAL_NZ weights (%lld of %lld) are not modelled by the emulator (all INT8 only)",
                       dname(W[0].dtype, b1), (long long)n_nz, (long long)p->nw);
    p->nz = 1, p->nz_tw = gmm_transposed(&W[0]);
    return ACLNN_SUCCESS;
}

/* ---- the kernel's weight ------------------------------------------------------------------------------ */

int gmm_nz_in_memory(const pyaclnn_stub_launch *launch, const pyaclnn_stub_tensor *w, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        pyaclnn_stub_tensor store = w[i];
        store.ndim = 1, store.shape[0] = pyaclnn_stub_numel(&w[i]), store.strides[0] = 1;
        if (!op_view_in_device_memory(&store, 8)) {
            pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "%s: weight[%lld]'s FRACTAL_NZ storage (data %p, "
                                   "offset %lld) is not in device memory", launch->op_name, (long long)i, w[i].data,
                                   (long long)w[i].offset);
            return 0;
        }
    }
    return 1;
}

int8_t *gmm_nz_weight_load(const pyaclnn_stub_tensor *w, int stored_transposed) {
    int64_t k = w->shape[w->ndim - 2], n = w->shape[w->ndim - 1], total = pyaclnn_stub_numel(w);
    int64_t batch = k && n ? total / (k * n) : 0;
    int8_t *nd = tv_alloc(total ? total : 1, 1);
    if (!nd) return NULL;
    const int8_t *src = (const int8_t *)w->data + w->offset;
    /* the stored matrix: (k, n), or (n, k) for a transposed weight; element (q, j) of the logical (k, n) */
    for (int64_t b = 0; b < batch; b++)
        for (int64_t q = 0; q < k; q++)
            for (int64_t j = 0; j < n; j++)
                nd[(b * k + q) * n + j] = src[stored_transposed ? nz_layout_index(b, j, q, n, k, NZ_N0, NZ_C0)
                                                                : nz_layout_index(b, q, j, k, n, NZ_N0, NZ_C0)];
    return nd;
}
