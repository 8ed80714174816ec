/*
 * Grouped matmul, the A8W8 path (x and weight INT8) of aclnnGroupedMatmulV4 / V5 (hicann/ops-transformer
 * gmm/grouped_matmul). Definitions: grouped_matmul.toml; the shared checks and the float path: grouped_matmul.c.
 *
 * Checks (op_host/op_api/aclnn_grouped_matmul.cpp, CheckFunctionParams' INT8 x INT8 branch), each 161002:
 * CheckFunctionQuantParams (y's dtypes, the bias dtype; y INT32 stops there), CheckGroupedMatmulQuant (no split K,
 * no offset, a scale, CheckOptionalTensorList of the scale, CheckQuantParamsDtype, CheckPerTokenScale, no antiquant
 * inputs). An INT64 scale is read as UINT64 (the op_api relabels it before its checks).
 *
 * Kernel (op_kernel/grouped_matmul.cpp): per group, acc = x_g @ w_g in int32 on the cube (exact, wrapping), an INT32
 * bias added in L0C; then by y's dtype:
 *   INT32 (QUANT_A8W8O32, cube only): acc, the scale not applied;
 *   INT8 (QUANT_A8W8O8, cube only, SetQuantVector): the fixpipe's dequant of the UINT64 word, RINT saturating;
 *   FLOAT16 / BFLOAT16 (QUANT_A8W8O16, grouped_matmul_quant_mixcore.h): AscendDequant fp32(acc) * scale, then
 *     (per-token) * perTokenScale[row] and + a BFLOAT16 bias widened to fp32, Cast RINT.
 * The dequant steps are QuantMatmul's (quant/a8w8_dequant.h).
 */
#include <stdlib.h>
#include <string.h>

#include "grouped_matmul.h"
#include "kernels/dtype.h"
#include "kernels/view.h"
#include "ops_decls.h"
#include "quant/a8w8_dequant.h"

#define LL(v) ((long long)(v))
#define ULL(v) ((unsigned long long)(v))

/* the op_api relabels an INT64 scale UINT64 before any check */
static aclDataType seen(aclDataType d) { return d == ACL_INT64 ? ACL_UINT64 : d; }

static const char *dname(aclDataType d, char b[24]) { return op_dtype_name(d, b); }

/* CheckQuantParamsDtype */
static aclnnStatus quant_params_dtype(op_call *c, const gmm_lists *L, int pertoken) {
    char b1[24], b2[24];
    aclDataType yd = L->Y.t[0].dtype;
    const gmm_list *S = &L->q[GMM_Q_SCALE], *PT = &L->q[GMM_Q_PER_TOKEN];
    for (uint64_t i = 0; i < S->n; i++) {
        aclDataType sd = seen(S->t[i].dtype);
        int bf = sd == ACL_BF16 && yd == ACL_BF16, fp = sd == ACL_FLOAT && yd == ACL_FLOAT16;
        if (pertoken && !(bf || fp))
            return gmm_bad(c, "per-token quant case only supports scale data type bfloat16 with output data type "
                              "bfloat16,or scale with data type float32 when output is float16, but now scale[%llu] "
                              "has data type %s and output has data type %s!", ULL(i), dname(sd, b1), dname(yd, b2));
        if (!pertoken && !(bf || fp || (sd == ACL_UINT64 && yd == ACL_INT8)))
            return gmm_bad(c, "per-channel quant case only supports scale with data type int64/uint64 when output is "
                              "int8, or data type bfloat16 when output is bfloat16, or data type float32 when output "
                              "is float16, but scale[%llu] has data type %s and output has data type %s!", ULL(i),
                           dname(sd, b1), dname(yd, b2));
    }
    if (pertoken)
        for (uint64_t i = 0; i < PT->n; i++)
            if (PT->t[i].dtype != ACL_FLOAT)
                return gmm_bad(c, "per-token quant case only support perTokenScale with data type float32, but "
                                  "perTokenScale[%llu] has data type %s!", ULL(i), dname(PT->t[i].dtype, b1));
    return ACLNN_SUCCESS;
}

/* CheckPerTokenScale */
static aclnnStatus per_token_scale(op_call *c, const gmm_lists *L) {
    const gmm_list *PT = &L->q[GMM_Q_PER_TOKEN];
    if (L->X.n != 1 || L->Y.n != 1)
        return gmm_bad(c, "per-token quant case is only supported when x, weight and y are all single tensor, but now "
                          "x size is %llu, weight size is %llu, y size is %llu", ULL(L->X.n), ULL(L->W.n), ULL(L->Y.n));
    if (PT->n != 1)
        return gmm_bad(c, "perTokenScaleOptional size[%llu] must be 1 and equal with x size[%llu].", ULL(PT->n),
                       ULL(L->X.n));
    const pyaclnn_stub_tensor *t = &PT->t[0];
    if (t->ndim != 1)
        return gmm_bad(c, "perTokenScaleOptional dim num must be 1 when x is single tensor, but now is %lld.",
                       LL(t->ndim));
    if (t->shape[0] != L->X.t[0].shape[0])
        return gmm_bad(c, "MDim[%lld] of perTokenScaleOptional should be equal with MDim[%lld] of x.", LL(t->shape[0]),
                       LL(L->X.t[0].shape[0]));
    return ACLNN_SUCCESS;
}

aclnnStatus gmm_quant_function_params(op_call *c, const gmm_lists *L) {
    char b1[24], b2[24];
    aclnnStatus rc;
    /* the branch's activation check (isNoActivation || y != INT8 || y != INT32) cannot fail */
    /* CheckFunctionQuantParams */
    aclDataType y0 = L->Y.t[0].dtype;
    for (uint64_t i = 0; i < L->Y.n; i++) {
        aclDataType yd = L->Y.t[i].dtype;
        if (yd != y0)
            return gmm_bad(c, "output tensorlist has different data type, y[0] data type is %s, and y[%llu] data type "
                              "id %s.", dname(y0, b1), ULL(i), dname(yd, b2));
        if (!(yd == ACL_INT8 || yd == ACL_BF16 || yd == ACL_FLOAT16 || yd == ACL_INT32))
            return gmm_bad(c, "Expect yDtype is int8, int32, float16 or bfloat16 in quant case, but now y[%llu] dtype "
                              "is %s", ULL(i), dname(yd, b1));
    }
    if (L->B.n) {
        int i32 = 1, bf = 1;
        for (uint64_t i = 0; i < L->B.n; i++) i32 &= L->B.t[i].dtype == ACL_INT32, bf &= L->B.t[i].dtype == ACL_BF16;
        if (!i32 && !bf) return gmm_bad(c, "GMM: bias dtype does not match with required dtype int32 or bfloat16.");
    }
    if (y0 == ACL_INT32) return ACLNN_SUCCESS;
    /* CheckGroupedMatmulQuant */
    if (L->gtype == GMM_SPLIT_K) return gmm_bad(c, "GMM: quant cases do not support splited axis is K.");
    if (L->q[GMM_Q_OFFSET].n) return gmm_bad(c, "GMM: offset must be nullptr in quant, but now is not nullptr.");
    if (!L->q[GMM_Q_SCALE].n) return gmm_bad(c, "GMM: scale must not be nullptr in quant, but now is nullptr.");
    if ((rc = gmm_optional_list(c, L, &L->q[GMM_Q_SCALE], "scale"))) return rc;
    int pertoken = L->q[GMM_Q_PER_TOKEN].n > 0;
    if ((rc = quant_params_dtype(c, L, pertoken))) return rc;
    if (pertoken && (rc = per_token_scale(c, L))) return rc;
    if (L->q[GMM_Q_AQ_SCALE].n || L->q[GMM_Q_AQ_OFFSET].n)
        return gmm_bad(c, "Detected quant, but antiquant inputs is not empty!");
    return ACLNN_SUCCESS;
}

aclnnStatus gmm_quant_limits(op_call *c, const gmm_lists *L, int64_t act_type) {
    char b1[24], b2[24];
    aclDataType yd = L->Y.t[0].dtype;
    if (act_type != 0 && yd != ACL_INT32)
        return gmm_bad(c, "the A8W8 path's activation (actType %lld) is not modelled by the emulator", LL(act_type));
    const gmm_list *xw[2] = {&L->X, &L->W};
    for (int k = 0; k < 2; k++)
        for (uint64_t i = 0; i < xw[k]->n; i++)
            if (xw[k]->t[i].dtype != ACL_INT8)   /* the op_api reads the first tensor's dtype only */
                return gmm_bad(c, "%s[%llu] is %s in the A8W8 path: the emulator needs every x and weight INT8",
                               k ? "weight" : "x", ULL(i), dname(xw[k]->t[i].dtype, b1));
    int pertoken = yd != ACL_INT32 && L->q[GMM_Q_PER_TOKEN].n > 0;
    if (L->B.n && L->B.t[0].dtype == ACL_BF16 && !pertoken)
        return gmm_bad(c, "a BFLOAT16 bias with y %s and no per-token scale is not modelled by the emulator (the "
                          "kernel adds it only in its per-token epilogue)", dname(yd, b2));
    if (pertoken && L->X.t[0].ndim != 2)
        return gmm_bad(c, "a per-token scale with a %lld-dim x is not modelled by the emulator", LL(L->X.t[0].ndim));
    return ACLNN_SUCCESS;
}

/* ---- the kernel ------------------------------------------------------------------------------------ */

/* One group's operands in host memory; y_at is the first element of y it writes (rows of n). */
typedef struct {
    const int8_t *x, *w;   /* x rows (m, k); w (k, n) */
    int64_t m, k, n;
    const unsigned char *s_u64;   /* n quant words, or */
    const float *s_f;             /* n scales (FLOAT / BFLOAT16 widened), or neither (y INT32) */
    const unsigned char *b_i32;   /* n INT32 bias values, or */
    const float *b_f;             /* n BFLOAT16 bias values widened (per-token epilogue) */
    const float *pt;              /* m per-token scales or NULL */
    int64_t y_at;
} gmm_qgroup;

static int q_group(const gmm_qgroup *g, aclDataType yd, unsigned char *yb, float *yf) {
    int64_t m = g->m, k = g->k, n = g->n;
    if (m == 0 || n == 0) return 1;
    int8_t *wt = tv_alloc(n * k, 1);   /* w's columns as rows: both dot operands contiguous */
    if (!wt) return 0;
    for (int64_t q = 0; q < k; q++)
        for (int64_t j = 0; j < n; j++) wt[j * k + q] = g->w[q * n + j];
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            int32_t acc = a8w8_dot(g->x + i * k, 1, wt + j * k, 1, k);
            if (g->b_i32) {
                int32_t bv;
                memcpy(&bv, g->b_i32 + 4 * j, 4);
                acc = a8w8_add_wrap(acc, bv);
            }
            int64_t e = g->y_at + i * n + j;
            if (yd == ACL_INT32) {
                memcpy(yb + 4 * e, &acc, 4);
            } else if (yd == ACL_INT8) {
                uint64_t word;
                memcpy(&word, g->s_u64 + 8 * j, 8);
                yb[e] = (unsigned char)a8w8_fixpipe_int8((double)acc, word, (double)a8w8_offset9(word));
            } else {
                yf[e] = a8w8_vector_dequant(acc, g->s_f[j], g->pt ? &g->pt[i] : NULL, g->b_f ? &g->b_f[j] : NULL);
            }
        }
    free(wt);
    return 1;
}

/* host copies of a list's tensors: raw bytes, or floats (widened exactly) */
static int q_load(const pyaclnn_stub_tensor *t, int64_t n, int as_float, void **out) {
    for (int64_t i = 0; i < n; i++) {
        out[i] = as_float ? (void *)tv_load_float(&t[i]) : (void *)tv_gather_bytes(&t[i]);
        if (!out[i]) return 0;
    }
    return 1;
}

/* the WeightNz entry's weights, untiled to row-major (.., k, n) */
static int q_load_nz(const pyaclnn_stub_tensor *t, int64_t n, int tw, void **out) {
    for (int64_t i = 0; i < n; i++)
        if (!(out[i] = gmm_nz_weight_load(&t[i], tw))) return 0;
    return 1;
}

static void q_free(void **v, int64_t n) {
    for (int64_t i = 0; i < n; i++) free(v[i]);
}

void gmm_quant_kernel(const pyaclnn_stub_launch *launch, const gmm_params *p, const int64_t *gl) {
    const pyaclnn_stub_tensor *X = launch->inputs, *W = X + p->nx, *B = W + p->nw, *S = B + p->nb, *PT = S + p->ns;
    const pyaclnn_stub_tensor *Y = launch->outputs;
    if (p->nz && !gmm_nz_in_memory(launch, W, p->nw)) return;
    aclDataType yd = p->y_dt;
    int y_float = yd == ACL_FLOAT16 || yd == ACL_BF16, s_float = p->ns && seen(p->scale_dt) != ACL_UINT64;
    int64_t total = p->nx + p->nw + p->nb + p->ns + p->npt + p->ny;
    void **h = calloc((size_t)(total ? total : 1), sizeof *h);
    if (!h) {
        tv_fail_oom(launch);
        return;
    }
    void **xs = h, **ws = xs + p->nx, **bs = ws + p->nw, **ss = bs + p->nb, **pts = ss + p->ns, **ys = pts + p->npt;
    int ok = q_load(X, p->nx, 0, xs) && (p->nz ? q_load_nz(W, p->nw, p->nz_tw, ws) : q_load(W, p->nw, 0, ws)) &&
             q_load(B, p->nb, p->bias_dt == ACL_BF16, bs) && q_load(S, p->ns, s_float, ss) &&
             q_load(PT, p->npt, 1, pts) && q_load(Y, p->ny, y_float, ys);
    /* rows no group covers keep their values: y is read first */
    int64_t k = X[0].shape[X[0].ndim - 1], start = 0, at = 0;
    int x_list = p->kase == GMM_CASE_SEPARATED || p->kase == GMM_CASE_XLIST_WLIST;   /* a group per x, else by rows */
    for (int64_t g = 0; ok && g < (x_list ? p->nx : p->groups); g++) {
        gmm_qgroup q = {0};
        int64_t xi = 0, wi = g, si = g, yi = 0, woff = 0, soff = 0, row0 = 0;
        if (x_list) {
            xi = g;
            k = X[g].shape[X[g].ndim - 1];
            q.m = k ? pyaclnn_stub_numel(&X[g]) / k : 0;
            if (p->kase == GMM_CASE_SEPARATED) yi = g;
            else row0 = at, at += q.m;
        } else {
            int64_t rows = X[0].shape[0];
            int64_t end = !gl ? rows : p->group_list_type == 0 ? gl[g] : start + gl[g];
            end = end < start ? start : end > rows ? rows : end;   /* the emulator keeps inside x */
            row0 = start, q.m = end - start, start = end;
            if (p->kase == GMM_CASE_SINGLE_W3) wi = 0, si = 0;
        }
        q.k = k;
        q.n = W[wi].shape[W[wi].ndim - 1];
        if (p->kase == GMM_CASE_SINGLE_W3) woff = g * k * q.n, soff = g * q.n;
        q.x = (const int8_t *)xs[xi] + (x_list ? 0 : row0 * k);
        q.w = (const int8_t *)ws[wi] + woff;
        if (p->ns && seen(p->scale_dt) == ACL_UINT64) q.s_u64 = (const unsigned char *)ss[si] + 8 * soff;
        else if (p->ns) q.s_f = (const float *)ss[si] + soff;
        if (p->nb && p->bias_dt == ACL_INT32) q.b_i32 = (const unsigned char *)bs[si] + 4 * soff;
        else if (p->nb) q.b_f = (const float *)bs[si] + soff;
        if (p->npt) q.pt = (const float *)pts[0] + (p->kase == GMM_CASE_SEPARATED ? 0 : row0);
        q.y_at = p->kase == GMM_CASE_SEPARATED ? 0 : row0 * q.n;
        ok = q_group(&q, yd, y_float ? NULL : ys[yi], y_float ? ys[yi] : NULL);
    }
    if (!ok) tv_fail_oom(launch);
    else
        for (int64_t i = 0; i < p->ny; i++) y_float ? tv_store_float(&Y[i], ys[i]) : tv_scatter_bytes(&Y[i], ys[i]);
    q_free(h, total);
    free(h);
}
