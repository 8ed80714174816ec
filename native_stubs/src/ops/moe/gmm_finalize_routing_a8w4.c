/*
 * aclnnGroupedMatmulFinalizeRoutingV2 / V3 on Atlas A2: the A8W4 computation of the ND-weight entries (x1 INT8, x2
 * INT32 holding eight INT4 each, lowest nibble first; hicann/ops-transformer gmm/grouped_matmul_finalize_routing:
 * op_api aclnn_grouped_matmul_finalize_routing.cpp, tiling grouped_matmul_finalize_routing_base_tiling.cpp's
 * W4A8TilingProcess, kernels op_kernel/grouped_matmul_finalize_routing_antiquant_a8w4_msd_pre.h and _msd.h;
 * definition: gmm_finalize_routing.toml). gmm_finalize_routing.c runs the checks up to CheckDtypeValid.
 *
 * gmmfr_a8w4_check (the rest of CheckParams, in the op_api's order):
 *   CheckShape: K of x1 and x2 equal; K % 64 == 0, N % 8 == 0, K > 128, N > 64; out 2-D, out rows in [0, M], out
 *     cols N; sharedInputOffset >= 0; groupListType 1; CheckDimValue (scale (E, 1, N), offset (E, 1, N), bias (E, N),
 *     pertokenScale, groupList, sharedInput, logit, rowIndex, offset + sharedInput rows <= out rows); empty tensors
 *   CheckFormat: out's storage ND (the others were relabelled ND by SetTensorToNDFormat)
 *   CheckTuningConfig (V3): its first value in [0, M]
 *   the tiling: K > 18432 -> 561002
 *   (emulator) V2 on Ascend 950 (the kernel's configs are Atlas A2 / A3 ones, refused first); x1 / x2 handed
 *   transposed by their strides (TensorContiguousProcess flips the transpose flag, which the A8W4 tiling never
 *   reads), x1 other than 2-D or x2 other than 3-D -> 161002.
 *
 * The kernel (scale (E, 1, N): the op_api leaves one K-group, quantGroupSize = K), per expert e and its tokens m
 * (groupList: counts; a count of 0 skipped, a negative one or tokens past x1 a device fault here):
 *   hi = floor(x / 16), lo = (x & 15) - 8 (GMMA8W4PreProcess: x = 16 hi + lo + 8); rowsum = sum x (fp32, exact);
 *   the cube: the int32 sums H = hi @ w[e][:, n], L = lo @ w[e][:, n] (exact); the fixpipe (SetQuantVector, fp16
 *   output): fp16(H * s), fp16(L * s), s the word's fp19 (bits 13..31 of its fp32; as a8w8_fixpipe_float: the exact
 *   product rounded to fp32, then to fp16 RNE; the fixpipe's own rounding is not published);
 *   the vector, fp32 each step: c = fp32(L') + 16 * fp32(H'); c = c + bias[e][n]; with offset:
 *   c = rowsum * offset[e][n] + c; y = c * (pertokenScale[m] * logit[m]);
 *   out = 0 except rows [sharedInputOffset, + rows) = fp32(sharedInput) * sharedInputWeight; out[rowIndex[m]] += y
 *   (fp32 atomic adds: token order here, the cores' order on the NPU).
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
#include "ops/quant/a8w8_dequant.h"
#include "ops/quant/quant_matmul.h"
#include "ops_decls.h"

#define A8W4_MAX_K 18432   /* MAX_K_A8W4_MSD: a row of x must fit the pre-process's UB */

typedef struct {
    int64_t m, k, n, e, batch, shared_rows, shared_offset;
    int has_offset;
    float shared_weight;
} gmmfr_a8w4_params;

int gmmfr_mx_owns(const op_call *c);   /* V3 on Ascend 950: gmm_finalize_routing_mx.c's steps */
void gmmfr_a8w4_kernel(const pyaclnn_stub_launch *launch);


/* IsLastTwoDimsTranspose: rank 2..6, the last two dims' strides (1, size of the second last), batch dims dense */
static int ga_transposed(const pyaclnn_stub_tensor *t) {
    int64_t d = t->ndim;
    if (d < 2 || d > 6 || !(t->strides[d - 2] == 1 && t->strides[d - 1] == t->shape[d - 2])) return 0;
    int64_t span = t->shape[d - 1] * t->shape[d - 2];
    for (int64_t b = d - 3; b >= 0; b--) {
        if (t->strides[b] != span) return 0;
        span *= t->shape[b];
    }
    return !(t->shape[d - 1] == 1 && t->shape[d - 2] == 1);
}

/* gmmfr_a8w4_check x1 x2 scale bias offset pertoken groupList sharedInput logit rowIndex sharedInputWeight
 * sharedInputOffset groupListType out [tuningConfig] */
aclnnStatus opc_gmmfr_a8w4_check(op_call *c, const op_step *s) {
    if (gmmfr_mx_owns(c)) return ACLNN_SUCCESS;
    const pyaclnn_stub_tensor *x1 = op_tensor(c, s, 0), *x2 = op_tensor(c, s, 1), *scale = op_tensor(c, s, 2),
                              *bias = op_tensor(c, s, 3), *offset = op_tensor(c, s, 4), *pt = op_tensor(c, s, 5),
                              *gl = op_tensor(c, s, 6), *shared = op_tensor(c, s, 7), *logit = op_tensor(c, s, 8),
                              *row = op_tensor(c, s, 9), *out = op_tensor(c, s, 13);
    if (ew_soc_is_950())   /* V2 there: the A8W4 MSD kernel ships for Atlas A2 / A3 (op_host/config) */
        return op_invalidf(c->api, "x2 INT4 (packed in INT32): the emulator does not implement the A8W4 computation of "
                           "%s on Ascend 950 (the vendor's A8W4 kernel ships for Atlas A2 / A3)", c->def->name);
    float shared_weight = (float)op_argument(c, s, 10)->d;
    int64_t shared_offset = op_argument(c, s, 11)->i, list_type = op_argument(c, s, 12)->i;
    if (ga_transposed(x1) || ga_transposed(x2))
        return op_invalidf(c->api, "%s given transposed by its strides: the A8W4 tiling of %s does not read the "
                           "transpose flag the op_api derives from them (not modelled)", ga_transposed(x1) ? "x1" : "x2",
                           c->def->name);
    /* CheckShape (GetX1X2DimValue: x2's INT4 view, its last dim times 8) */
    int64_t K = x1->shape[x1->ndim - 1], M = x1->shape[x1->ndim - 2], E = x2->shape[0];
    int64_t K2 = x2->shape[x2->ndim - 2], N = x2->shape[x2->ndim - 1] * 8;
    if (K != K2)
        return op_invalidf(c->api, "x1 k dim and x2 k dim should be same, but x1 is %lld, x2 is %lld.", (long long)K,
                           (long long)K2);
    if (!(N % 8 == 0 && K2 % 64 == 0 && N > 64 && K2 > 128))
        return op_invalidf(c->api, "Weight k dim %lld and n dim %lld do not support. In W4A8 mode, only support k mod "
                           "64 equal 0, n mod 8 equal 0, k should bigger than 128, n should bigger than 64.",
                           (long long)K2, (long long)N);
    int64_t bs;
    GMMFR_TRY(gmmfr_check_out(c, out, M, N, shared_offset, list_type, &bs));
    /* CheckDimValue, the INT4 branch */
    if (!(scale->shape[0] == E && scale->shape[1] == 1 && scale->shape[2] == N))
        return op_invalidf(c->api, "Scale fisrt dim should equal to weight EDim %lld, but actual is %lld, Scale second "
                           "dim should be 1, but actual is %lld, Scale last dim should equal to weight NDim %lld or 1, "
                           "but actual is %lld.", (long long)E, (long long)scale->shape[0], (long long)scale->shape[1],
                           (long long)N, (long long)scale->shape[2]);
    if (offset->present && !(offset->shape[0] == E && offset->shape[2] == N && offset->shape[1] == 1))
        return op_invalidf(c->api, "w4a8 offset's dim value should equal scale, which is (%lld, %lld, %lld)",
                           (long long)offset->shape[0], (long long)offset->shape[1], (long long)offset->shape[2]);
    if (!(bias->shape[0] == E && bias->shape[1] == N))
        return op_invalidf(c->api, "w4a8 bias's dim value should be (e, n), which is (%lld, %lld)",
                           (long long)bias->shape[0], (long long)bias->shape[1]);
    GMMFR_TRY(gmmfr_check_routing(c, pt, gl, shared, logit, row, M, E, N, bs, shared_offset));
    if (gmmfr_empty(pt))
        return op_invalidf(c->api, "GroupedMatmulFinalizeRouting do not support pertokenScaleOptional size is 0.");
    if (gmmfr_empty(x1) || gmmfr_empty(x2) || gmmfr_empty(scale) || gmmfr_empty(gl) || gmmfr_empty(shared) || gmmfr_empty(logit) ||
        gmmfr_empty(row))
        return op_invalidf(c->api, "GroupedMatmulFinalizeRouting WeightNz do not support input tensor size is 0.");
    /* CheckFormat: out keeps its own format (SetTensorToNDFormat relabelled the inputs) */
    if (out->format != ACL_FORMAT_ND) {
        char f[24];
        return op_invalidf(c->api, "out's format should be ND. actual is [%s].", op_format_name(out->format, f));
    }
    /* CheckTuningConfig (V3) */
    if (s->np > 14) {
        uint64_t nt = c->ints[s->p[14]].n;
        int64_t v = nt ? c->ints[s->p[14]].v[0] : 0;
        if (nt && (v < 0 || v > x1->shape[0]))
            return op_invalidf(c->api, "GroupedMatmulFinalizeRouting Invalid tuningConfigOptional (%lld)! It should be "
                               "a non-negative num and smaller than (%lld)", (long long)v, (long long)x1->shape[0]);
    }
    /* the emulator's limits: the op_api only logs other ranks (GetX1X2DimValue) */
    if (x1->ndim != 2 || x2->ndim != 3)
        return op_invalidf(c->api, "x1 of %lld dims, x2 of %lld: the emulator models x1 [M, K] and x2 [E, K, N / 8] "
                           "only", (long long)x1->ndim, (long long)x2->ndim);
    /* W4A8TilingProcess */
    if (K > A8W4_MAX_K)
        return op_failf(c->api, ACLNN_ERR_INNER_TILING_ERROR, "GMM_tiling: K should be less than 18432 on the A8W4 "
                        "scenario, but now is %lld", (long long)K);
    gmmfr_a8w4_params *p = op_params(c, sizeof *p);
    *p = (gmmfr_a8w4_params){M, K, N, E, bs, shared->shape[0], shared_offset, offset->present, shared_weight};
    c->kernel = gmmfr_a8w4_kernel;
    return ACLNN_SUCCESS;
}

/* one half's int32 sum through the fixpipe to the fp16 workspace, read back as fp32 */
static float ga_fixpipe(int32_t acc, uint64_t word) {
    return num_f16_to_f32(num_f32_to_f16(a8w8_fixpipe_float((double)acc, word)));
}

void gmmfr_a8w4_kernel(const pyaclnn_stub_launch *launch) {
    const gmmfr_a8w4_params *p = launch->params;
    const pyaclnn_stub_tensor *in = launch->inputs, *out_t = &launch->outputs[0];
    if (!tv_launch_views_ok(launch)) return;
    int64_t K = p->k, N = p->n, E = p->e, B = p->batch;
    int8_t *x = (int8_t *)tv_gather_bytes(&in[0]), *w = qmm_int4_unpack(&in[1], 0);
    unsigned char *words = tv_gather_bytes(&in[2]);
    float *bias = tv_load_float(&in[3]), *off = p->has_offset ? tv_load_float(&in[4]) : NULL;
    float *pt = tv_load_float(&in[7]), *shared = tv_load_float(&in[9]), *logit = tv_load_float(&in[10]);
    int64_t *counts = (int64_t *)tv_gather_bytes(&in[8]);
    unsigned char *rows = tv_gather_bytes(&in[11]);
    float *out = tv_alloc(B * N, sizeof(float));
    int8_t *hi = tv_alloc(K, 1), *lo = tv_alloc(K, 1);
    if (!x || !w || !words || !bias || (p->has_offset && !off) || !pt || !shared || !logit || !counts || !rows ||
        !out || !hi || !lo) {
        tv_fail_oom(launch);
    } else if (gmmfr_indices_ok(E, p->m, B, counts, rows, in[11].dtype)) {
        gmmfr_prologue(out, B, N, shared, p->shared_rows, p->shared_offset, p->shared_weight);
        for (int64_t e = 0, m = 0; e < E; e++) {
            for (int64_t end = m + counts[e]; m < end; m++) {
                int64_t r = gmmfr_row(rows, in[11].dtype, m), sum = 0;
                for (int64_t q = 0; q < K; q++) {   /* GMMA8W4PreProcess */
                    int v = x[m * K + q];
                    hi[q] = (int8_t)((v - (v & 15)) / 16);   /* floor(v / 16) */
                    lo[q] = (int8_t)((v & 15) - 8);
                    sum += v;
                }
                float rowsum = (float)sum, tok = pt[m] * logit[m];
                for (int64_t j = 0; j < N; j++) {
                    const int8_t *wc = w + e * K * N + j;
                    uint64_t word;
                    memcpy(&word, words + 8 * (e * N + j), 8);
                    float fh = ga_fixpipe(a8w8_dot(hi, 1, wc, N, K), word);
                    float fl = ga_fixpipe(a8w8_dot(lo, 1, wc, N, K), word);
                    float f = fl + fh * 16.0f;
                    f = f + bias[e * N + j];
                    if (off) f = rowsum * off[e * N + j] + f;
                    out[r * N + j] += f * tok;
                }
            }
        }
        tv_store_float(out_t, out);
    }
    free(x), free(w), free(words), free(bias), free(off), free(pt), free(shared), free(logit), free(counts);
    free(rows), free(out), free(hi), free(lo);
}
