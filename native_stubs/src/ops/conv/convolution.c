/*
 * aclnnConvolution and aclnnConvolutionBackward (hicann/ops-nn conv/convolution_forward,
 * conv/convolution_backward): torch's conv1d/2d/3d and conv_transpose1d/2d/3d, forward and backward,
 * on the matmul engine (kernels/matmul.h mm_f32).
 *
 * Every convolution is written in the geometry of a plain one: X (N, Cx, xs...) is the large side,
 * Y (N, Cy, ys...) the small side, W (Cy, Cx/groups, ks...) the weight, and
 *   ys = (xs + pad_total - dilation * (ks - 1) - 1) / stride + 1.
 * Three products cover every case, each an im2col / col2im around mm_f32 per group:
 *   forward      Y[n, g] = W[g] @ im2col(X[n, g])                      (cy/g x cx/g*K) @ (cx/g*K x L)
 *   input grad   X[n, g] = col2im(W[g]^T @ Y[n, g])                    (the col2im adds in fp32)
 *   weight grad  W[g]    = sum over n of Y[n, g] @ im2col(X[n, g])^T   (one product, k = N * L)
 * A plain convolution's forward is `forward` (X = input); a transposed one's is `input grad` with Y =
 * input (X = output, whose extra outputPadding rows get no contribution). The backward swaps roles the
 * same way. The bias is added in fp32 after the sum; gradBias is a float64 sum rounded once.
 *
 * Arithmetic (class c): operands widened to fp32 exactly (fp16 first under cubeMathType USE_FP16; HF32
 * modes keep fp32), fp32 products and sums in k order, one rounding to the output dtype. The cube unit
 * accumulates in fp32 too, in an order that is not published.
 * Validation: convolution.toml, the vendor's checkers in its order, with its EZ messages (op_ez_*).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/matmul.h"
#include "kernels/parallel.h"
#include "opbase/checks.h"
#include "ops_decls.h"

#define CV_MAX_ND 3

typedef struct {
    int nd, transposed, fp16_inputs, has_bias, empty_backward;
    int64_t groups;
    int64_t stride[CV_MAX_ND], pad[CV_MAX_ND], dil[CV_MAX_ND];   /* pad: before the first element */
    bool mask[3];                                                /* backward: outputMask           */
} cv_params;

static int64_t numel(const pyaclnn_stub_tensor *t) { return pyaclnn_stub_numel(t); }

static cv_params *cv_block(op_call *c) {
    return c->params_size ? (cv_params *)c->params : op_params(c, sizeof(cv_params));
}

/* ---- geometry and the three products ---------------------------------------------------------- */

typedef struct {
    int64_t n, cx, cy, g, cxg, cyg, K, xsz, ysz;
    int64_t xs[CV_MAX_ND], ys[CV_MAX_ND], ks[CV_MAX_ND], st[CV_MAX_ND], pd[CV_MAX_ND], dl[CV_MAX_ND];
} cv_geom;

/* x: the X-role tensor, w: the weight, y: the Y-role tensor; missing spatial dims are 1. */
static void geom_make(cv_geom *G, const cv_params *p, const pyaclnn_stub_tensor *x, const pyaclnn_stub_tensor *w,
                      const pyaclnn_stub_tensor *y) {
    G->n = x->shape[0];
    G->cx = x->shape[1];
    G->cy = y->shape[1];
    G->g = p->groups;
    G->cxg = w->shape[1];
    G->cyg = G->cy / G->g;
    G->K = G->xsz = G->ysz = 1;
    for (int d = 0; d < CV_MAX_ND; d++) {
        int in = d < p->nd;
        G->xs[d] = in ? x->shape[2 + d] : 1;
        G->ys[d] = in ? y->shape[2 + d] : 1;
        G->ks[d] = in ? w->shape[2 + d] : 1;
        G->st[d] = in ? p->stride[d] : 1;
        G->pd[d] = in ? p->pad[d] : 0;
        G->dl[d] = in ? p->dil[d] : 1;
        G->K *= G->ks[d];
        G->xsz *= G->xs[d];
        G->ysz *= G->ys[d];
    }
}

typedef struct {
    const cv_geom *G;
    float *x;          /* X (im2col reads it, col2im adds into it) */
    float *col;        /* [n][g][cx/g * K][L]                      */
    int add;           /* col2im                                    */
} cv_col_job;

/* im2col (or col2im) of images*groups [begin, end): the element of X under kernel position k of output
 * position o, or 0 (padding). */
static void col_parts(void *ctx, size_t begin, size_t end) {
    const cv_col_job *j = ctx;
    const cv_geom *G = j->G;
    for (size_t ng = begin; ng < end; ng++) {
        int64_t n = (int64_t)ng / G->g, g = (int64_t)ng % G->g;
        float *x = j->x + (n * G->cx + g * G->cxg) * G->xsz;
        float *col = j->col + (int64_t)ng * G->cxg * G->K * G->ysz;
        for (int64_t c = 0; c < G->cxg; c++)
            for (int64_t k0 = 0; k0 < G->ks[0]; k0++)
                for (int64_t k1 = 0; k1 < G->ks[1]; k1++)
                    for (int64_t k2 = 0; k2 < G->ks[2]; k2++) {
                        float *row = col + (c * G->K + (k0 * G->ks[1] + k1) * G->ks[2] + k2) * G->ysz;
                        float *plane = x + c * G->xsz;
                        for (int64_t o0 = 0; o0 < G->ys[0]; o0++) {
                            int64_t i0 = o0 * G->st[0] - G->pd[0] + k0 * G->dl[0];
                            for (int64_t o1 = 0; o1 < G->ys[1]; o1++) {
                                int64_t i1 = o1 * G->st[1] - G->pd[1] + k1 * G->dl[1];
                                for (int64_t o2 = 0; o2 < G->ys[2]; o2++, row++) {
                                    int64_t i2 = o2 * G->st[2] - G->pd[2] + k2 * G->dl[2];
                                    int in = i0 >= 0 && i0 < G->xs[0] && i1 >= 0 && i1 < G->xs[1] && i2 >= 0 &&
                                             i2 < G->xs[2];
                                    float *at = plane + (i0 * G->xs[1] + i1) * G->xs[2] + i2;
                                    if (j->add) {
                                        if (in) *at += *row;
                                    } else {
                                        *row = in ? *at : 0.0f;
                                    }
                                }
                            }
                        }
                    }
    }
}

static void run_cols(const cv_geom *G, float *x, float *col, int add) {
    cv_col_job job = {G, x, col, add};
    size_t parts = (size_t)(G->n * G->g);
    op_parallel_for(parts, op_thread_count(parts, 1), col_parts, &job);
}

static size_t col_floats(const cv_geom *G) { return (size_t)(G->n * G->g * G->cxg * G->K * G->ysz) + 1; }

/* Y = conv(X, W): Y [N, Cy, L]. */
static int conv_forward(const cv_geom *G, float *X, const float *W, float *Y) {
    float *col = malloc(col_floats(G) * sizeof(float));
    if (col == NULL) return 0;
    run_cols(G, X, col, 0);
    int64_t kk = G->cxg * G->K;
    for (int64_t g = 0; g < G->g; g++)
        mm_f32(W + g * G->cyg * kk, 0, col + g * kk * G->ysz, G->g * kk * G->ysz, Y + g * G->cyg * G->ysz,
               G->cy * G->ysz, G->n, G->cyg, kk, G->ysz);
    free(col);
    return 1;
}

/* X = the transposed convolution of Y (X zeroed first). */
static int conv_input_grad(const cv_geom *G, const float *Y, const float *W, float *X) {
    int64_t kk = G->cxg * G->K;
    float *col = malloc(col_floats(G) * sizeof(float));
    float *wt = malloc((size_t)(G->g * kk * G->cyg + 1) * sizeof(float));
    if (col == NULL || wt == NULL) {
        free(col);
        free(wt);
        return 0;
    }
    for (int64_t g = 0; g < G->g; g++)
        for (int64_t r = 0; r < kk; r++)
            for (int64_t o = 0; o < G->cyg; o++) wt[(g * kk + r) * G->cyg + o] = W[(g * G->cyg + o) * kk + r];
    for (int64_t g = 0; g < G->g; g++)
        mm_f32(wt + g * kk * G->cyg, 0, Y + g * G->cyg * G->ysz, G->cy * G->ysz, col + g * kk * G->ysz,
               G->g * kk * G->ysz, G->n, kk, G->cyg, G->ysz);
    memset(X, 0, (size_t)(G->n * G->cx * G->xsz) * sizeof(float));
    run_cols(G, X, col, 1);
    free(col);
    free(wt);
    return 1;
}

/* W = the weight gradient: sum over images of Y @ im2col(X)^T, one product per group with k = N * L. */
static int conv_weight_grad(const cv_geom *G, float *X, const float *Y, float *W) {
    int64_t kk = G->cxg * G->K, nl = G->n * G->ysz;
    float *col = malloc(col_floats(G) * sizeof(float));
    float *a = malloc((size_t)(G->cy * nl + 1) * sizeof(float)), *b = malloc(col_floats(G) * sizeof(float));
    int ok = col != NULL && a != NULL && b != NULL;
    if (ok) {
        run_cols(G, X, col, 0);
        for (int64_t g = 0; g < G->g; g++)
            for (int64_t n = 0; n < G->n; n++) {
                for (int64_t o = 0; o < G->cyg; o++)
                    memcpy(a + (g * G->cyg + o) * nl + n * G->ysz, Y + (n * G->cy + g * G->cyg + o) * G->ysz,
                           (size_t)G->ysz * sizeof(float));
                const float *cg = col + (n * G->g + g) * kk * G->ysz;
                float *bg = b + g * nl * kk + n * G->ysz * kk;
                for (int64_t r = 0; r < kk; r++)
                    for (int64_t l = 0; l < G->ysz; l++) bg[l * kk + r] = cg[r * G->ysz + l];
            }
        mm_f32(a, G->cyg * nl, b, nl * kk, W, G->cyg * kk, G->g, G->cyg, nl, kk);
    }
    free(col);
    free(a);
    free(b);
    return ok;
}

/* ---- kernels ---------------------------------------------------------------------------------- */

/* The view as fp32 (fp16 first under USE_FP16 for FLOAT operands). */
static float *load(const pyaclnn_stub_tensor *t, const cv_params *p) {
    float *v = tv_load_float(t);
    if (v != NULL && p->fp16_inputs && t->dtype == ACL_FLOAT) {
        int64_t n = pyaclnn_stub_numel(t);
        for (int64_t i = 0; i < n; i++) v[i] = (float)ew_cast((ew_value){v[i], 0}, ACL_FLOAT, ACL_FLOAT16).f;
    }
    return v;
}

static float *zeros_of(const pyaclnn_stub_tensor *t) {
    return calloc((size_t)pyaclnn_stub_numel(t) + 1, sizeof(float));
}

/* out[n, c, :] += bias[c] */
static void add_bias(float *out, const float *bias, int64_t n, int64_t ch, int64_t size) {
    for (int64_t i = 0; i < n * ch; i++)
        for (int64_t l = 0; l < size; l++) out[i * size + l] += bias[i % ch];
}

void conv_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const cv_params *p = launch->params;
    const pyaclnn_stub_tensor *in = &launch->inputs[0], *w = &launch->inputs[1], *out = &launch->outputs[0];
    float *I = load(in, p), *W = load(w, p), *B = p->has_bias ? tv_load_float(&launch->inputs[2]) : NULL;
    float *O = zeros_of(out);
    cv_geom G;
    int ok = I != NULL && W != NULL && O != NULL && (B != NULL || !p->has_bias);
    if (ok && !p->transposed) {
        geom_make(&G, p, in, w, out);
        ok = conv_forward(&G, I, W, O);
        if (ok && B) add_bias(O, B, G.n, G.cy, G.ysz);
    } else if (ok) {
        geom_make(&G, p, out, w, in);
        ok = conv_input_grad(&G, I, W, O);
        if (ok && B) add_bias(O, B, G.n, G.cx, G.xsz);
    }
    if (ok) tv_store_float(out, O);
    else tv_fail_oom(launch);
    free(I), free(W), free(B), free(O);
}

/* gradBias[c] = sum over n and positions of gradOutput[n, c, :] (dy NULL: 0), in float64, rounded once. */
static int store_bias_grad(const pyaclnn_stub_tensor *gb, const float *dy, const pyaclnn_stub_tensor *gy) {
    int64_t n = gy->shape[0], ch = gy->ndim > 1 ? gy->shape[1] : 0, nb = numel(gb);
    int64_t size = tv_dims_product(gy->shape, 2, gy->ndim);
    double *sum = calloc((size_t)nb + 1, sizeof(double));
    float *f = malloc(((size_t)nb + 1) * sizeof(float));
    if (sum != NULL && f != NULL) {
        for (int64_t i = 0; dy != NULL && ch == nb && i < n * ch; i++)
            for (int64_t l = 0; l < size; l++) sum[i % ch] += dy[i * size + l];
        for (int64_t k = 0; k < nb; k++) f[k] = (float)sum[k];
        tv_store_float(gb, f);
    }
    free(f);
    free(sum);
    return sum != NULL && f != NULL;
}

void conv_backward_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const cv_params *p = launch->params;
    const pyaclnn_stub_tensor *gy = &launch->inputs[0], *in = &launch->inputs[1], *w = &launch->inputs[2];
    const pyaclnn_stub_tensor *gi = &launch->outputs[0], *gw = &launch->outputs[1], *gb = &launch->outputs[2];
    float *DY = load(gy, p), *I = load(in, p), *W = load(w, p);
    float *GI = p->mask[0] ? zeros_of(gi) : NULL, *GW = p->mask[1] ? zeros_of(gw) : NULL;
    int ok = DY != NULL && I != NULL && W != NULL && (GI != NULL || !p->mask[0]) && (GW != NULL || !p->mask[1]);
    if (ok && !p->empty_backward) {
        cv_geom G;
        /* plain: X = input, Y = gradOutput; transposed: X = gradOutput, Y = input */
        const pyaclnn_stub_tensor *xt = p->transposed ? gy : in, *yt = p->transposed ? in : gy;
        float *X = p->transposed ? DY : I, *Y = p->transposed ? I : DY;
        geom_make(&G, p, xt, w, yt);
        if (ok && p->mask[0]) ok = p->transposed ? conv_forward(&G, X, W, GI) : conv_input_grad(&G, Y, W, GI);
        if (ok && p->mask[1]) ok = conv_weight_grad(&G, X, Y, GW);
    }
    if (ok) {
        if (p->mask[0] && !p->empty_backward) tv_store_float(gi, GI);
        if (p->mask[1]) tv_store_float(gw, GW);
        if (p->mask[2] && !store_bias_grad(gb, p->empty_backward ? NULL : DY, gy)) tv_fail_oom(launch);
    } else {
        tv_fail_oom(launch);
    }
    free(DY), free(I), free(W), free(GI), free(GW);
}

/* ---- steps: the forward (aclnn_convolution.cpp's checkers) ------------------------------------ */

/* The forward steps' operands, in this order. */
enum { F_X, F_W, F_Y, F_BIAS, F_STRIDE, F_PAD, F_DIL, F_OPAD, F_TRANSPOSED, F_GROUPS };

#define INTS(c, s, k) ((c)->ints[(s)->p[k]])
#define TXT(v, n, buf) op_ints_text((v), (n), (buf), sizeof(buf))
#define SHAPE(t, buf) tv_shape_text((t)->shape, (t)->ndim, (buf), sizeof(buf))

/* "DT_FLOAT" */
static const char *dt_name(aclDataType dt, char *buf) {
    char b[24];
    snprintf(buf, 32, "DT_%s", dt == ACL_BF16 ? "BF16" : op_dtype_name(dt, b));
    return buf;
}

/* Padding before the first element and in total of spatial dim d (nd dims; 1d: 1 or 2 values, 2d: 2 or
 * 4 values [top, bottom, left, right], 3d: 3 values). */
static void pad_of(const int64_t *pad, uint64_t n, int nd, int d, int64_t *before, int64_t *total) {
    if (nd == 1 && n == 2) {
        *before = pad[0], *total = op_add_sat(pad[0], pad[1]);
    } else if (nd == 2 && n == 4) {
        *before = pad[2 * d], *total = op_add_sat(pad[2 * d], pad[2 * d + 1]);
    } else if ((uint64_t)d < n) {
        *before = pad[d], *total = op_mul_sat(2, pad[d]);
    } else {
        *before = *total = 0;
    }
}

/* cv_null_output_padding transposed outputPadding: outputPadding may be NULL only when not transposed. */
aclnnStatus opc_cv_null_output_padding(op_call *c, const op_step *s) {
    if (!op_argument(c, s, 0)->i || op_argument(c, s, 1)->p != NULL) return ACLNN_SUCCESS;
    pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, c->api, "%s is NULL", op_pname(c, s, 1));
    return ACLNN_ERR_PARAM_NULLPTR;
}

static aclnnStatus dtype_one_of(op_call *c, const char *name, aclDataType dt, const op_dtype_list *l) {
    size_t n;
    const aclDataType *list = op_list(l, &n);
    if (ew_in_list(dt, list, n)) return ACLNN_SUCCESS;
    char b[32], all[256] = "one of [";
    for (size_t i = 0; i < n; i++) {
        strncat(all, dt_name(list[i], b), sizeof all - strlen(all) - 1);
        strncat(all, i + 1 < n ? ", " : "]", sizeof all - strlen(all) - 1);
    }
    return op_ez_expected(c->api, name, "dtype", dt_name(dt, b), all);
}

/* cv_bias_dtype bias LIST: a present bias's dtype in LIST (DtypeChecker, first). */
aclnnStatus opc_cv_bias_dtype(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *b = op_tensor(c, s, 0);
    return b->present ? dtype_one_of(c, op_pname(c, s, 0), b->dtype, s->list) : ACLNN_SUCCESS;
}

/* cv_dtype x filter y transposed T LIST: when transposed == T, each operand's dtype in LIST. */
aclnnStatus opc_cv_dtype(op_call *c, const op_step *s) {
    if ((op_argument(c, s, s->np - 1)->i != 0) != (s->n != 0)) return ACLNN_SUCCESS;
    for (int k = 0; k < s->np - 1; k++) {
        aclnnStatus rc = dtype_one_of(c, op_pname(c, s, k), op_tensor(c, s, k)->dtype, s->list);
        if (rc) return rc;
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus check_rank(op_call *c, const char *name, int64_t nd) {
    if (nd >= 3 && nd <= 5) return ACLNN_SUCCESS;
    char b[24];
    snprintf(b, sizeof b, "%lld", (long long)nd);
    return op_ez_expected(c->api, name, "shape dim", b, "one of {3, 4, 5}");
}

static aclnnStatus list_size(op_call *c, const char *name, uint64_t got, const char *want) {
    char b[24];
    snprintf(b, sizeof b, "%llu", (unsigned long long)got);
    return op_ez_expected(c->api, name, "element nums", b, want);
}

/* cv_dims x w y bias stride pad dil opad transposed groups (DimChecker): ranks 3..5 and equal, the bias
 * 1-D of the output channels, the attribute lists one value per spatial dim (pads: 2d also 4, 1d also 2). */
aclnnStatus opc_cv_dims(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, F_X), *w = op_tensor(c, s, F_W), *y = op_tensor(c, s, F_Y);
    const pyaclnn_stub_tensor *b = op_tensor(c, s, F_BIAS);
    int tr = op_argument(c, s, F_TRANSPOSED)->i != 0;
    int64_t groups = op_argument(c, s, F_GROUPS)->i;
    char b1[200], b2[200], want[48];
    aclnnStatus rc;
    if ((rc = check_rank(c, "x", x->ndim)) || (rc = check_rank(c, "filter", w->ndim)) || (rc = check_rank(c, "y", y->ndim)))
        return rc;
    if (w->ndim != x->ndim || y->ndim != x->ndim) {
        int wf = w->ndim != x->ndim;
        snprintf(b1, sizeof b1, "%lld, %lld", (long long)x->ndim, (long long)(wf ? w->ndim : y->ndim));
        return op_ez_reason(c->api, 1, wf ? "x, filter" : "x, y", "shape dims", b1,
                            wf ? "the shape dims of x and filter must be the same" : "the shape dims of x and y must be the same");
    }
    if (b->present) {
        if (b->ndim != 1) {
            snprintf(b1, sizeof b1, "%lld", (long long)b->ndim);
            return op_ez_expected(c->api, "bias", "shape dim", b1, "1");
        }
        snprintf(b1, sizeof b1, "%s, %s", SHAPE(b, b2), SHAPE(w, want));
        if (tr && b->shape[0] != op_mul_sat(w->shape[1], groups))
            return op_ez_reason(c->api, 1, "bias, filter", "shapes", b1, "When transposed is true, shape[0] of bias "
                                "must be equal to shape[1] of filter multiplied by attribute groups(%lld)", (long long)groups);
        if (!tr && b->shape[0] != w->shape[0])
            return op_ez_reason(c->api, 1, "bias, filter", "shapes", b1,
                                "When transposed is false, shape[0] of bias must be equal to shape[0] of filter");
    }
    uint64_t nd = (uint64_t)x->ndim - 2;
    snprintf(want, sizeof want, "%llu", (unsigned long long)nd);
    if (INTS(c, s, F_STRIDE).n != nd) return list_size(c, "strides", INTS(c, s, F_STRIDE).n, want);
    if (INTS(c, s, F_DIL).n != nd) return list_size(c, "dilations", INTS(c, s, F_DIL).n, want);
    uint64_t np = INTS(c, s, F_PAD).n;
    if ((nd == 1 && !tr) || nd == 2) {
        if (np != nd && np != 2 * nd) {
            snprintf(want, sizeof want, "%llu or %llu", (unsigned long long)nd, (unsigned long long)(2 * nd));
            return list_size(c, "pads", np, want);
        }
    } else if (np != nd) {
        return list_size(c, "pads", np, want);
    }
    if (tr && INTS(c, s, F_OPAD).n != nd) return list_size(c, "outputPadding", INTS(c, s, F_OPAD).n, want);
    return ACLNN_SUCCESS;
}

static aclnnStatus all_positive(op_call *c, const char *name, const int64_t *v, uint64_t n) {
    char b[200];
    for (uint64_t i = 0; i < n; i++)
        if (v[i] <= 0)
            return op_ez_reason(c->api, 0, name, "shape", TXT(v, n, b),
                                "shape[%llu] of this parameter must be greater than 0", (unsigned long long)i);
    return ACLNN_SUCCESS;
}

/* The 2^8 - 1 limit of the transposed kernels' backprop padding (Atlas A2/A3): (k - 1) * d - pad <= 255
 * per spatial dim (3d also >= 0); 1d and 2d take the first pad of a 2- or 4-value list. */
static aclnnStatus pad_binary(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *w = op_tensor(c, s, F_W);
    const int64_t *dil = INTS(c, s, F_DIL).v, *pad = INTS(c, s, F_PAD).v;
    uint64_t nd = (uint64_t)w->ndim - 2, np = INTS(c, s, F_PAD).n;
    char cond[400] = "These parameters must meet the following condition: ";
    int ok = 1;
    for (uint64_t i = 0; i < nd; i++) {
        uint64_t dpos = nd == 1 ? 0 : (nd == 2 ? 1 - i : 2 - i);   /* the vendor's order: last dim first */
        uint64_t pi = nd == 3 ? dpos : (np == 1 ? 0 : (nd == 2 && np == 4 ? 2 * dpos : dpos));
        int64_t v = op_sub_sat(op_mul_sat(w->shape[2 + dpos] - 1, dil[dpos]), pad[pi]);
        ok = ok && v <= 255 && (nd != 3 || v >= 0);
        char part[120];
        snprintf(part, sizeof part, "%s%s(filter[%llu] - 1) * dilations[%llu] - pads[%llu] <= 255", i ? " and " : "",
                 nd == 3 ? "0 <= " : "", (unsigned long long)(2 + dpos), (unsigned long long)dpos, (unsigned long long)pi);
        strncat(cond, part, sizeof cond - strlen(cond) - 1);
    }
    if (ok) return ACLNN_SUCCESS;
    char b1[200], b2[100], b3[100], all[420];
    snprintf(all, sizeof all, "%s, %s, %s", SHAPE(w, b1), TXT(dil, nd, b2), TXT(pad, np, b3));
    return op_ez_reason(c->api, 1, "filter, dilations, pads", "shapes", all, "%s", cond);
}

/* cv_values x w y bias stride pad dil opad transposed groups (ValueChecker): positive kernel dims, strides
 * and dilations; a plain convolution's padded input covers the dilated kernel; groups > 0 dividing the
 * channels; the bias of the output channels; a transposed input with channels; (A2) the backprop padding
 * limit. */
aclnnStatus opc_cv_values(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, F_X), *w = op_tensor(c, s, F_W), *y = op_tensor(c, s, F_Y);
    const pyaclnn_stub_tensor *b = op_tensor(c, s, F_BIAS);
    const int64_t *st = INTS(c, s, F_STRIDE).v, *dil = INTS(c, s, F_DIL).v, *pad = INTS(c, s, F_PAD).v;
    const int64_t *opad = INTS(c, s, F_OPAD).v;
    int tr = op_argument(c, s, F_TRANSPOSED)->i != 0, nd = (int)x->ndim - 2;
    int64_t groups = op_argument(c, s, F_GROUPS)->i;
    char b1[200], b2[200], b3[200], all[640];
    aclnnStatus rc;
    for (int d = 0; d < nd; d++)
        if (w->shape[2 + d] <= 0 && !(ew_soc_is_950() && tr && numel(w) == 0))
            return op_ez_reason(c->api, 0, "filter", "shape", SHAPE(w, b1),
                                "shape[%d] of filter must be greater than 0", 2 + d);
    if ((rc = all_positive(c, "strides", st, (uint64_t)nd)) || (rc = all_positive(c, "dilations", dil, (uint64_t)nd)))
        return rc;
    for (int d = 0; !tr && numel(x) > 0 && d < nd; d++) {
        int64_t before, total;
        pad_of(pad, INTS(c, s, F_PAD).n, nd, d, &before, &total);
        if (op_sub_sat(op_add_sat(x->shape[2 + d], total), op_add_sat(op_mul_sat(dil[d], w->shape[2 + d] - 1), 1)) < 0)
            return op_ez_reason(c->api, 0, "x", "shape", SHAPE(x, b1), "These parameters must meet the following "
                                "condition: x[%d] + pads[%d]%s - dilations[%d] * (filter[%d] - 1) - 1 >= 0", 2 + d, d,
                                nd == 3 ? " * 2" : "", d, 2 + d);
    }
    if (groups <= 0) {
        snprintf(b1, sizeof b1, "%lld", (long long)groups);
        return op_ez_reason(c->api, 0, "groups", "value", b1, "the value should be greater than 0");
    }
    snprintf(all, sizeof all, "%s, %s", SHAPE(x, b1), SHAPE(w, b2));
    int64_t out_channels = tr ? op_mul_sat(w->shape[1], groups) : w->shape[0];
    if (tr) {
        if (w->shape[0] != x->shape[1])
            return op_ez_reason(c->api, 1, "x, filter", "shapes", all,
                                "When transposed is true, shape[0] of filter must be equal to shape[1] of x");
        for (int d = 0; d < nd; d++) {
            if (opad[d] >= st[d] && opad[d] >= dil[d]) {
                snprintf(all, sizeof all, "%s, %s, %s", TXT(opad, (uint64_t)nd, b1), TXT(st, (uint64_t)nd, b2),
                         TXT(dil, (uint64_t)nd, b3));
                return op_ez_reason(c->api, 1, "outputPadding, strides, dilations", "values", all, "outputPadding[%d] "
                                    "must be less than both stride[%d] and dilation[%d]", d, d, d);
            }
            if (opad[d] < 0) {
                snprintf(b1, sizeof b1, "%lld", (long long)opad[d]);
                return op_ez_reason(c->api, 0, "outputPadding", "value", b1,
                                    "outputPadding[%d] must be greater than or equal to 0", d);
            }
        }
    } else if (op_mul_sat(w->shape[1], groups) != x->shape[1]) {
        return op_ez_reason(c->api, 1, "x, filter", "shapes", all, "shape[1] of x must be equal to shape[1] of filter "
                            "multiplied by attribute groups(%lld)", (long long)groups);
    }
    if (w->shape[0] % groups != 0)
        return op_ez_reason(c->api, 1, "filter", "shapes", SHAPE(w, b1),
                            "shape[0] of filter must be exactly divided by attribute groups(%lld)", (long long)groups);
    if (b->present && b->shape[0] != out_channels)
        return op_ez_reason(c->api, 1, "bias", "shapes", SHAPE(b, b1),
                            "shape[0] of bias must be equal to output channel(%lld)", (long long)out_channels);
    if (tr && x->shape[1] == 0)
        return op_ez_reason(c->api, 0, "x", "shape", SHAPE(x, b1),
                            "When transposed is true, shape[1] of this parameter must be greater than 0");
    if (tr && !ew_soc_is_950() && numel(x) > 0 && numel(w) > 0 && numel(y) > 0) return pad_binary(c, s);
    return ACLNN_SUCCESS;
}

/* The inferred output shape of the forward (InferShape). */
static void infer(op_call *c, const op_step *s, int64_t *shape) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, F_X), *w = op_tensor(c, s, F_W);
    const int64_t *st = INTS(c, s, F_STRIDE).v, *dil = INTS(c, s, F_DIL).v, *pad = INTS(c, s, F_PAD).v;
    int tr = op_argument(c, s, F_TRANSPOSED)->i != 0, nd = (int)x->ndim - 2;
    shape[0] = x->shape[0];
    shape[1] = tr ? op_mul_sat(w->shape[1], op_argument(c, s, F_GROUPS)->i) : w->shape[0];
    for (int d = 0; d < nd; d++) {
        int64_t before, total, k = op_mul_sat(dil[d], w->shape[2 + d] - 1);
        pad_of(pad, INTS(c, s, F_PAD).n, nd, d, &before, &total);
        shape[2 + d] = tr ? op_add_sat(op_add_sat(op_mul_sat(x->shape[2 + d] - 1, st[d]), op_sub_sat(k, total)),
                                      op_add_sat(INTS(c, s, F_OPAD).v[d], 1))
                          : op_add_sat(op_sub_sat(op_add_sat(x->shape[2 + d], total), op_add_sat(k, 1)) / st[d], 1);
    }
}

/* cv_infer x w y bias stride pad dil opad transposed groups (ConvXdChecker): y has the inferred shape, and is
 * empty when x or the filter is. */
aclnnStatus opc_cv_infer(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, F_X), *w = op_tensor(c, s, F_W), *y = op_tensor(c, s, F_Y);
    int64_t shape[CV_MAX_ND + 2];
    char b1[200], b2[200], b3[200], all[640];
    infer(c, s, shape);
    for (int64_t d = 0; d < y->ndim; d++)
        if (shape[d] != y->shape[d])
            return op_ez_reason(c->api, 0, "y", "shape", SHAPE(y, b1),
                                "shape[%lld] of y must be equal to its inferred value(%lld)", (long long)d, (long long)shape[d]);
    if ((numel(x) == 0 || numel(w) == 0) && numel(y) != 0) {
        snprintf(all, sizeof all, "%s, %s, %s", SHAPE(x, b1), SHAPE(w, b2), SHAPE(y, b3));
        return op_ez_reason(c->api, 1, "x, filter, y", "shapes", all, "if x or filter is an empty tensor, output must "
                            "be an empty tensor. Empty tensor definition: A dimension in the shape is 0. ");
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus cube_range(op_call *c, int8_t cube, int max) {
    if (cube >= 0 && cube <= max) return ACLNN_SUCCESS;
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "The value of cubeMathType only support {0: KEEP_DTYPE, 1: "
                        "ALLOW_FP32_DOWN_PRECISION, 2: USE_FP16, 3: USE_HF32%s}, but got %d",
                        max == 4 ? ", 4: USE_FP32_ADD" : "", (int)cube);
    return ACLNN_ERR_PARAM_INVALID;
}

/* cv_cube cubeMathType (HardwareLimitChecker): 0..4 (the SoCs the emulator knows take fp32 and bf16). */
aclnnStatus opc_cv_cube(op_call *c, const op_step *s) { return cube_range(c, (int8_t)op_argument(c, s, 0)->i, 4); }

/* The attributes every kernel takes: spatial rank, stride, padding before, dilation, groups; USE_FP16 rounds
 * FLOAT operands (the calculation dtype is FLOAT when one of them is). */
static void plan_common(cv_params *p, int nd, const int64_t *st, const int64_t *pad, uint64_t np, const int64_t *dil,
                        int transposed, int64_t groups, int8_t cube, int any_float) {
    p->nd = nd;
    p->transposed = transposed;
    p->groups = groups;
    p->fp16_inputs = cube == MM_USE_FP16 && any_float;
    for (int d = 0; d < nd; d++) {
        int64_t total;
        pad_of(pad, np, nd, d, &p->pad[d], &total);
        p->stride[d] = st[d];
        p->dil[d] = dil[d];
    }
}

/* cv_plan x w y bias stride pad dil opad transposed groups cubeMathType: the kernel's attributes; nothing to
 * launch for an empty output. */
aclnnStatus opc_cv_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, F_X), *w = op_tensor(c, s, F_W), *y = op_tensor(c, s, F_Y);
    cv_params *p = cv_block(c);
    plan_common(p, (int)x->ndim - 2, INTS(c, s, F_STRIDE).v, INTS(c, s, F_PAD).v, INTS(c, s, F_PAD).n,
                INTS(c, s, F_DIL).v, op_argument(c, s, F_TRANSPOSED)->i != 0, op_argument(c, s, F_GROUPS)->i,
                (int8_t)op_argument(c, s, F_GROUPS + 1)->i, x->dtype == ACL_FLOAT || w->dtype == ACL_FLOAT);
    p->has_bias = op_tensor(c, s, F_BIAS)->present;
    if (numel(x) == 0 || numel(w) == 0 || numel(y) == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}

/* ---- steps: the backward (convolution_backward_checker.cpp) ----------------------------------- */

enum { B_GY, B_IN, B_W, B_GI, B_GW, B_GB, B_STRIDE, B_PAD, B_DIL, B_OPAD, B_TRANSPOSED, B_GROUPS };

/* cv_mask outputMask gradInput gradWeight gradBias: a live mask of 3 (161002), the outputs it asks for not
 * NULL (161001). */
aclnnStatus opc_cv_mask(op_call *c, const op_step *s) {
    const bool *mask;
    uint64_t n;
    char b[24];
    if (pyaclnn_stub_bool_array_get(op_argument(c, s, 0)->p, &mask, &n) != ACLNN_SUCCESS) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "%s is not a live aclBoolArray", op_pname(c, s, 0));
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (n != 3) {
        snprintf(b, sizeof b, "%llu", (unsigned long long)n);
        return op_ez_expected(c->api, op_pname(c, s, 0), "shape dim", b, "3");
    }
    cv_params *p = cv_block(c);
    for (int k = 0; k < 3; k++) {
        p->mask[k] = mask[k];
        if (mask[k] && op_argument(c, s, k + 1)->p == NULL) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, c->api, "%s is NULL", op_pname(c, s, k + 1));
            return ACLNN_ERR_PARAM_NULLPTR;
        }
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus same_dtypes(op_call *c, const char *names, aclDataType a, aclDataType b) {
    if (a == b || !ew_soc_is_950()) return ACLNN_SUCCESS;
    char b1[32], b2[32], all[80], why[120];
    snprintf(all, sizeof all, "%s,%s", dt_name(a, b1), dt_name(b, b2));
    snprintf(why, sizeof why, "the dtypes of [%s] must be the same", names);
    return op_ez_reason(c->api, 1, names, "dtypes", all, "%s", why);
}

/* cv_bp_dtypes gradOutput input weight gradInput gradWeight gradBias transposed T LIST: when transposed == T,
 * the tensors' dtypes in LIST, and (Ascend 950) each gradient of its tensor's dtype. */
aclnnStatus opc_cv_bp_dtypes(op_call *c, const op_step *s) {
    if ((op_argument(c, s, 6)->i != 0) != (s->n != 0)) return ACLNN_SUCCESS;
    size_t n;
    const aclDataType *list = op_list(s->list, &n);
    static const int of[6] = {-1, -1, -1, B_IN, B_W, B_GY};
    static const char *names[6] = {"", "", "", "gradInput, input", "gradWeight, weight", "gradBias, gradOutput"};
    for (int k = 0; k < 6; k++) {
        const pyaclnn_stub_tensor *t = op_tensor(c, s, k);
        if (!t->present) continue;
        aclnnStatus rc = ew_check_dtype_in(c->api, op_pname(c, s, k), t->dtype, list, n);
        if (rc == ACLNN_SUCCESS && of[k] >= 0 && !(k == B_GW && op_tensor(c, s, B_W)->dtype != ACL_FLOAT &&
                                                    op_tensor(c, s, B_W)->dtype != ACL_FLOAT16 &&
                                                    op_tensor(c, s, B_W)->dtype != ACL_BF16))
            rc = same_dtypes(c, names[k], t->dtype, op_tensor(c, s, of[k])->dtype);
        if (rc) return rc;
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus values_at_least(op_call *c, const char *name, const int64_t *v, uint64_t n, int64_t lo,
                                   const char *why) {
    char b[200];
    for (uint64_t i = 0; i < n; i++)
        if (v[i] < lo) return op_ez_reason(c->api, 0, name, "value", TXT(v, n, b), "%s", why);
    return ACLNN_SUCCESS;
}

/* cv_bp_params stride padding dilation outputPadding transposed groups input (CheckConvParams): stride and
 * dilation >= 1, padding >= 0, outputPadding >= 0 (3d transposed: below the stride) or all 0 (plain),
 * groups >= 1. */
aclnnStatus opc_cv_bp_params(op_call *c, const op_step *s) {
    const int64_t *st = INTS(c, s, 0).v, *pad = INTS(c, s, 1).v, *dil = INTS(c, s, 2).v, *opad = INTS(c, s, 3).v;
    uint64_t nop = INTS(c, s, 3).n;
    int tr = op_argument(c, s, 4)->i != 0;
    int64_t groups = op_argument(c, s, 5)->i;
    char b[200];
    aclnnStatus rc;
    if ((rc = values_at_least(c, "stride", st, INTS(c, s, 0).n, 1, "the value of stride must be greater than or equal to 1")) ||
        (rc = values_at_least(c, "padding", pad, INTS(c, s, 1).n, 0, "the value of padding must be greater than or equal to 0")) ||
        (rc = values_at_least(c, "dilation", dil, INTS(c, s, 2).n, 1, "the value of dilation must be greater than or equal to 1")))
        return rc;
    if (tr) {
        if ((rc = values_at_least(c, "outputPadding", opad, nop, 0, "when transposed=true, the value of outputPadding "
                                  "must be greater than or equal to 0")))
            return rc;
        for (uint64_t i = 0; op_tensor(c, s, 6)->ndim == 5 && i < nop; i++)
            if (i >= INTS(c, s, 0).n || opad[i] >= st[i])
                return op_ez_reason(c->api, 0, "outputPadding", "value", TXT(opad, nop, b), "when transposed=true, the "
                                    "value of outputPadding must be less than or equal to stride");
    } else {
        for (uint64_t i = 0; i < nop; i++)
            if (opad[i] != 0)
                return op_ez_reason(c->api, 0, "outputPadding", "value", TXT(opad, nop, b),
                                    "when transposed=false, the value of outputPadding must be 0");
    }
    if (groups < 1) {
        snprintf(b, sizeof b, "%lld", (long long)groups);
        return op_ez_reason(c->api, 0, "group", "value", b, "the value of groups must be greater than or equal to 1");
    }
    return ACLNN_SUCCESS;
}

/* cv_bp_cube cubeMathType: 0..3. */
aclnnStatus opc_cv_bp_cube(op_call *c, const op_step *s) { return cube_range(c, (int8_t)op_argument(c, s, 0)->i, 3); }

static aclnnStatus dims_reason(op_call *c, const char *names, int64_t a, int64_t b, const char *sep,
                               const char *why) {
    char all[64];
    snprintf(all, sizeof all, "%lld%s%lld", (long long)a, sep, (long long)b);
    return op_ez_reason(c->api, 1, names, "shape dims", all, "%s", why);
}

/* CheckConvShape: ranks, non-empty gradOutput and weight, the gradients' shapes, the attribute lists' sizes. */
static aclnnStatus bp_shape(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *gy = op_tensor(c, s, B_GY), *in = op_tensor(c, s, B_IN), *w = op_tensor(c, s, B_W);
    const pyaclnn_stub_tensor *gi = op_tensor(c, s, B_GI), *gw = op_tensor(c, s, B_GW), *gb = op_tensor(c, s, B_GB);
    char b[200], why[200];
    aclnnStatus rc;
    if (gy->ndim != in->ndim)
        return dims_reason(c, "gradOutput, input", gy->ndim, in->ndim, ",", "the shape dim of [gradOutput, input] must be the same");
    if (in->ndim != w->ndim)
        return dims_reason(c, "input, weight", in->ndim, w->ndim, ",", "the shape dim of [input, weight] must be the same");
    if ((rc = check_rank(c, "input", in->ndim))) return rc;   /* (emulator) the kernels take 1d, 2d and 3d */
    if (numel(gy) == 0 || numel(w) == 0) {
        snprintf(b, sizeof b, "%lld,%lld", (long long)numel(gy), (long long)numel(w));
        return op_ez_reason(c->api, 0, "gradOutput,weight", "shape size", b, "[gradOutput,weight] do not support empty tensors");
    }
    if (gi->present && (rc = ew_check_shape(c->api, op_pname(c, s, B_GI), gi, in->shape, in->ndim))) return rc;
    if (gw->present && (rc = ew_check_shape(c->api, op_pname(c, s, B_GW), gw, w->shape, w->ndim))) return rc;
    if (gb->present) {
        if (gb->ndim != 1) {
            snprintf(b, sizeof b, "%lld", (long long)gb->ndim);
            return op_ez_expected(c->api, "gradBias", "shape dim", b, "1");
        }
        if (gb->shape[0] != gy->shape[1]) {
            snprintf(b, sizeof b, "[%lld]", (long long)gb->shape[0]);
            return op_ez_reason(c->api, 0, "gradBias", "shape", b, "The gradBias shape should be equal [%lld]",
                                (long long)gy->shape[1]);
        }
    }
    int64_t nd = in->ndim - 2, ns = (int64_t)INTS(c, s, B_STRIDE).n, ndl = (int64_t)INTS(c, s, B_DIL).n;
    int64_t np = (int64_t)INTS(c, s, B_PAD).n, nop = (int64_t)INTS(c, s, B_OPAD).n;
    if (ns != nd)
        return dims_reason(c, "stride, input", ns, in->ndim, ", ", "the shape dim of [stride] must be 2 less than the shape dim of input");
    if (ndl != nd)
        return dims_reason(c, "dilation, input", ndl, in->ndim, ", ", "the shape dim of [dilation] must be 2 less the shape dim of input");
    if (in->ndim == 4) {
        snprintf(why, sizeof why, "the shape dim of [dilation] must be %lld or 4, when dim of input is 4", (long long)nd);
        if (np != nd && np != 4) return dims_reason(c, "padding, input", np, in->ndim, ",", why);
        snprintf(why, sizeof why, "the shape dim of [outputPadding] must be %lld or 4, when dim of input is 4", (long long)nd);
        if (nop != nd && nop != 4) return dims_reason(c, "outputPadding, input", nop, in->ndim, ",", why);
    } else {
        snprintf(why, sizeof why, "the shape dim of [paddingDim] must be %lld, when dim of input is %lld", (long long)nd,
                 (long long)in->ndim);
        if (np != nd) return dims_reason(c, "padding, input", np, in->ndim, ",", why);
        snprintf(why, sizeof why, "the shape dim of [outputPadding] must be %lld, when dim of input is %lld",
                 (long long)nd, (long long)in->ndim);
        if (nop != nd) return dims_reason(c, "outputPadding, input", nop, in->ndim, ",", why);
    }
    return ACLNN_SUCCESS;
}

/* CheckConvChannelAndGroup: in the plain geometry (X = input, Y = gradOutput; transposed swapped), Y's
 * channels are the weight's first dim, X's a multiple of its second, that multiple the groups. */
static aclnnStatus bp_channels(op_call *c, const op_step *s, const pyaclnn_stub_tensor *x,
                               const pyaclnn_stub_tensor *y) {
    const pyaclnn_stub_tensor *w = op_tensor(c, s, B_W);
    int64_t groups = op_argument(c, s, B_GROUPS)->i;
    char all[64], why[200];
    if (y->shape[1] != w->shape[0])
        return dims_reason(c, "gradOutShape[1], weight[0]", y->shape[1], w->shape[0], ", ",
                           "the shape dim of [gradOutShape[1], weight[0]] must be the same.");
    snprintf(all, sizeof all, "%lld,%lld", (long long)x->shape[1], (long long)w->shape[1]);
    if (w->shape[1] == 0 || x->shape[1] % w->shape[1] != 0)
        return op_ez_reason(c->api, 1, "inputShape[1], weight[1]", "shape dims", all, "the shape dim of inputShape[1] "
                            "must be divisable by the shape dim of weight[1]");
    if (x->shape[1] / w->shape[1] != groups)
        return op_ez_reason(c->api, 1, "inputShape[1], weight[1]", "shape dims", all, "The shape dim of inputShape[1] "
                            "must be equal to (the shape dim of weight[1] times the value of groups)");
    if (x->shape[1] == groups && !ew_soc_is_950()) {
        snprintf(why, sizeof why, "%lld,%lld", (long long)y->shape[1], (long long)x->shape[1]);
        if (y->shape[1] < groups)
            return op_ez_reason(c->api, 1, "gradOutShape[1], inputShape[1]", "shape dims", why, "the shape dim of "
                                "gradOutShape[1] must be greater than or equal to the value of groups,when the shape dim "
                                "of inputShape[1] == the value of groups");
        if (y->shape[1] % groups != 0)
            return op_ez_reason(c->api, 1, "gradOutShape[1], inputShape[1]", "shape dims", why, "the shape dim of "
                                "gradOutShape[1] must be divisible by the value of groups,when the shape dim of "
                                "inputShape[1] equals to the value of groups");
    }
    return ACLNN_SUCCESS;
}

/* CheckConvShapePlus (the vendor's for 3d; the emulator's kernels need it for every rank): X's padded extent
 * covers the dilated kernel and Y has the plain geometry's size, Y's batch X's. */
static aclnnStatus bp_extent(op_call *c, const op_step *s, const pyaclnn_stub_tensor *x,
                             const pyaclnn_stub_tensor *y) {
    const pyaclnn_stub_tensor *w = op_tensor(c, s, B_W);
    const int64_t *st = INTS(c, s, B_STRIDE).v, *dil = INTS(c, s, B_DIL).v, *pad = INTS(c, s, B_PAD).v;
    int nd = (int)x->ndim - 2, ok = y->shape[0] == x->shape[0];
    char want[200], b[200];
    int used = snprintf(want, sizeof want, "[%lld, %lld", (long long)x->shape[0], (long long)y->shape[1]);
    for (int d = 0; d < nd; d++) {
        int64_t before, total, kd = op_add_sat(op_mul_sat(w->shape[2 + d] - 1, dil[d]), 1);
        pad_of(pad, INTS(c, s, B_PAD).n, nd, d, &before, &total);
        int64_t rest = op_sub_sat(op_add_sat(x->shape[2 + d], total), kd);
        if (rest < 0) {
            snprintf(b, sizeof b, "%lld,%lld", (long long)x->shape[2 + d], (long long)before);
            return op_ez_reason(c->api, 1, "input, padding", "shape dims", b, "(in_dim + pad_dim * 2) should be greater "
                                "than or equal to ((weight_shape - 1) * dilation + 1), current in_dim=%lld, pad_dim=%lld, "
                                "weight_shape=%lld, dilation=%lld", (long long)x->shape[2 + d], (long long)before,
                                (long long)w->shape[2 + d], (long long)dil[d]);
        }
        int64_t expect = op_add_sat(rest / st[d], 1);
        ok = ok && expect == y->shape[2 + d];
        used += snprintf(want + used, sizeof want - (size_t)used, ",%lld", (long long)expect);
    }
    snprintf(want + used, sizeof want - (size_t)used, "]");
    if (ok) return ACLNN_SUCCESS;
    return op_ez_reason(c->api, 0, "gradOutput", "shape", SHAPE(y, b), "shape of gradOutput should equal to %s", want);
}

/* cv_bp_shapes gradOutput input weight gradInput gradWeight gradBias stride padding dilation outputPadding
 * transposed groups: the vendor's shape checks (skipped for an empty input or weight, whose gradients are
 * zeros). */
aclnnStatus opc_cv_bp_shapes(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *gy = op_tensor(c, s, B_GY), *in = op_tensor(c, s, B_IN);
    int tr = op_argument(c, s, B_TRANSPOSED)->i != 0;
    cv_params *p = cv_block(c);
    if (numel(in) == 0 || numel(op_tensor(c, s, B_W)) == 0) {
        p->empty_backward = 1;
        return ACLNN_SUCCESS;
    }
    aclnnStatus rc;
    const pyaclnn_stub_tensor *x = tr ? gy : in, *y = tr ? in : gy;
    if ((rc = bp_shape(c, s)) || (rc = bp_channels(c, s, x, y)) || (rc = bp_extent(c, s, x, y))) return rc;
    return ACLNN_SUCCESS;
}

/* cv_bp_plan gradOutput input weight stride padding dilation transposed groups cubeMathType: the kernel's
 * attributes; nothing to launch when no requested gradient has an element. */
aclnnStatus opc_cv_bp_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *gy = op_tensor(c, s, 0), *in = op_tensor(c, s, 1), *w = op_tensor(c, s, 2);
    cv_params *p = cv_block(c);
    if (!p->empty_backward)
        plan_common(p, (int)in->ndim - 2, INTS(c, s, 3).v, INTS(c, s, 4).v, INTS(c, s, 4).n, INTS(c, s, 5).v,
                    op_argument(c, s, 6)->i != 0, op_argument(c, s, 7)->i, (int8_t)op_argument(c, s, 8)->i,
                    gy->dtype == ACL_FLOAT || in->dtype == ACL_FLOAT || w->dtype == ACL_FLOAT);
    int64_t work = 0;
    for (int k = 0; k < 3; k++) {
        const pyaclnn_stub_tensor *t = &c->t[op_param_index(c->def, k == 0 ? "gradInput" : k == 1 ? "gradWeight" : "gradBias")];
        if (p->mask[k] && t->present) work += numel(t);
    }
    if (work == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}
