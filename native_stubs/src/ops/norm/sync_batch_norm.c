/*
 * The sync-batch-norm pieces (definitions: sync_batch_norm.toml):
 *   BatchNormStats                  mean, invstd = 1 / sqrt(biased var + eps) per channel
 *   BatchNormElemt                  (x - mean) / sqrt(var + eps) * w + b, var = 1 / invstd^2 - eps (fp32 steps)
 *   BatchNormElemtBackward          (dy - sumDy / n - (x - mean) * invstd^2 * sumDyXmu / n) * invstd * w
 *   BatchNormReduce                 sum(x), sum(x^2) per channel of a 4-D NCHW / NHWC x
 *   BatchNormReduceBackward         sumDy, sumDyXmu = sum(dy * x) - mean * sumDy, gradWeight = sumDyXmu * invstd
 *   BatchNormGatherStatsWithCounts  the count-weighted mean / variance of the devices' statistics
 *   SyncBatchNormGatherStats        the mean / invstd of the devices' sums (the vendor kernel's fp32 steps)
 * Statistics are float64 sums rounded once to fp32 (the NPU's reduction order is not published); the elementwise
 * steps the vendor's kernels publish are done in fp32 in their order.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/dtype.h"
#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"

typedef struct {
    int empty;                   /* fill the outputs (0 / NaN) instead of computing */
    double eps, momentum;
} sbn_params;

static sbn_params *sbn_block(op_call *c) {
    return c->params_size ? (sbn_params *)c->params : op_params(c, sizeof(sbn_params));
}

/* ---- kernels -------------------------------------------------------------------------------- */

/* [outer, C, inner] of t around its channel dim cdim. */
static void around(const pyaclnn_stub_tensor *t, int cdim, int64_t *outer, int64_t *ch, int64_t *inner) {
    *outer = tv_dims_product(t->shape, 0, cdim);
    *ch = t->shape[cdim];
    *inner = tv_dims_product(t->shape, cdim + 1, t->ndim);
}

static void fill(const pyaclnn_stub_tensor *t, float value) {
    if (!t->present) return;
    int64_t n = pyaclnn_stub_numel(t);
    float *v = tv_alloc(n, sizeof(float));
    if (v == NULL) return;
    for (int64_t i = 0; i < n; i++) v[i] = value;
    tv_store_float(t, v);
    free(v);
}

/* v rounded to FLOAT16 (the promote dtype of BatchNormElemtBackward's all-FLOAT16 calls) or kept. */
static float as_promote(float v, int half) {
    if (!half) return v;
    return (float)ew_value_to_double(ew_cast((ew_value){.f = v}, ACL_FLOAT, ACL_FLOAT16), ACL_FLOAT16);
}

void sbn_stats_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const sbn_params *p = launch->params;
    const pyaclnn_stub_tensor *x = &launch->inputs[0];
    if (p->empty) {
        fill(&launch->outputs[0], 0.0f);
        fill(&launch->outputs[1], NAN);
        return;
    }
    int64_t N, C, S;
    around(x, 1, &N, &C, &S);
    double *xv = tv_load_double(x), m = (double)(N * S), eps = (float)p->eps;
    float *mean = tv_alloc(C, sizeof(float)), *inv = tv_alloc(C, sizeof(float));
    if (!xv || !mean || !inv) {
        tv_fail_oom(launch);
        goto done;
    }
    for (int64_t c = 0; c < C; c++) {
        double s = 0, v = 0;
        for (int64_t n = 0; n < N; n++)
            for (int64_t k = 0; k < S; k++) s += xv[(n * C + c) * S + k];
        double mu = s / m;
        for (int64_t n = 0; n < N; n++)
            for (int64_t k = 0; k < S; k++) v += (xv[(n * C + c) * S + k] - mu) * (xv[(n * C + c) * S + k] - mu);
        mean[c] = (float)mu;
        inv[c] = (float)(1.0 / sqrt(v / m + eps));
    }
    tv_store_float(&launch->outputs[0], mean);
    tv_store_float(&launch->outputs[1], inv);
done:
    free(xv), free(mean), free(inv);
}

/* A per-channel input as float64, `value` for each channel when absent. */
static double *channel_values(const pyaclnn_stub_tensor *t, int64_t ch, double value) {
    if (t->present) return tv_load_double(t);
    double *v = tv_alloc(ch, sizeof(double));
    for (int64_t c = 0; v != NULL && c < ch; c++) v[c] = value;
    return v;
}

void sbn_elemt_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const sbn_params *p = launch->params;
    const pyaclnn_stub_tensor *x = &launch->inputs[0];
    int64_t N, C, S;
    around(x, 1, &N, &C, &S);
    double *xv = tv_load_double(x), *w = channel_values(&launch->inputs[1], C, 1.0);
    double *b = channel_values(&launch->inputs[2], C, 0.0), *mean = tv_load_double(&launch->inputs[3]);
    float *inv = tv_load_float(&launch->inputs[4]), *y = tv_alloc(N * C * S, sizeof(float));
    if (!xv || !w || !b || !mean || !inv || !y) {
        tv_fail_oom(launch);
        goto done;
    }
    for (int64_t c = 0; c < C; c++) {
        float var = inv[c] * inv[c];                         /* Mul, Div(1, .), Sub(eps) in fp32 */
        var = 1.0f / var;
        var = var - (float)p->eps;
        double scale = 1.0 / sqrt((double)var + p->eps);
        for (int64_t n = 0; n < N; n++)
            for (int64_t k = 0; k < S; k++) {
                int64_t i = (n * C + c) * S + k;
                y[i] = (float)((xv[i] - mean[c]) * scale * w[c] + b[c]);
            }
    }
    tv_store_float(&launch->outputs[0], y);
done:
    free(xv), free(w), free(b), free(mean), free(inv), free(y);
}

void sbn_elemt_backward_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const pyaclnn_stub_tensor *in = launch->inputs, *x = &in[1];
    int half = 1;
    for (int k = 0; k < 7; k++) half &= !in[k].present || in[k].dtype == ACL_FLOAT16;
    half &= in[4].present;                          /* an absent weight is filled as FLOAT */
    int64_t N, C, S;
    around(x, 1, &N, &C, &S);
    float *v[7] = {0};
    double *cnt = tv_load_double(&in[7]);
    float *out = tv_alloc(N * C * S, sizeof(float));
    int ok = cnt != NULL && out != NULL;
    for (int k = 0; k < 7; k++) {
        if (k == 4 && !in[4].present) v[4] = tv_alloc(C, sizeof(float));
        else v[k] = tv_load_float(&in[k]);
        ok &= v[k] != NULL;
    }
    if (!ok) {
        tv_fail_oom(launch);
        goto done;
    }
    if (!in[4].present)
        for (int64_t c = 0; c < C; c++) v[4][c] = 1.0f;
    double total64 = 0;
    for (int64_t i = 0; i < pyaclnn_stub_numel(&in[7]); i++) total64 += cnt[i];
    float total = (float)total64, *dy = v[0], *xs = v[1], *mean = v[2], *inv = v[3], *w = v[4];
    int a5 = ew_soc_is_950();
    for (int64_t c = 0; c < C; c++) {
        float mdy = as_promote(as_promote(v[5][c], half) / total, half);
        float mdyx = as_promote(as_promote(v[6][c], half) / total, half);
        float m = as_promote(mean[c], half), is = as_promote(inv[c], half), wc = as_promote(w[c], half);
        float m2 = mdyx * (is * is);
        for (int64_t n = 0; n < N; n++)
            for (int64_t k = 0; k < S; k++) {
                int64_t i = (n * C + c) * S + k;
                float s1 = as_promote(dy[i], half) - mdy, s2 = as_promote(xs[i], half) - m;
                float s3 = s1 - s2 * m2;
                out[i] = as_promote(a5 ? s3 * (is * wc) : (s3 * is) * wc, half);
            }
    }
    tv_store_float(&launch->outputs[0], out);
done:
    for (int k = 0; k < 7; k++) free(v[k]);
    free(cnt), free(out);
}

void sbn_reduce_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const sbn_params *p = launch->params;
    const pyaclnn_stub_tensor *x = &launch->inputs[0];
    if (p->empty) {
        fill(&launch->outputs[0], 0.0f);
        fill(&launch->outputs[1], 0.0f);
        return;
    }
    int64_t O, C, S;
    around(x, x->format == ACL_FORMAT_NHWC ? 3 : 1, &O, &C, &S);
    double *xv = tv_load_double(x);
    float *sum = tv_alloc(C, sizeof(float)), *sq = tv_alloc(C, sizeof(float));
    if (!xv || !sum || !sq) {
        tv_fail_oom(launch);
        goto done;
    }
    for (int64_t c = 0; c < C; c++) {
        double s = 0, q = 0;
        for (int64_t o = 0; o < O; o++)
            for (int64_t k = 0; k < S; k++) {
                double e = xv[(o * C + c) * S + k];
                s += e, q += e * e;
            }
        sum[c] = (float)s, sq[c] = (float)q;
    }
    tv_store_float(&launch->outputs[0], sum);
    tv_store_float(&launch->outputs[1], sq);
done:
    free(xv), free(sum), free(sq);
}

void sbn_reduce_backward_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const sbn_params *p = launch->params;
    const pyaclnn_stub_tensor *out = launch->outputs;
    if (p->empty) {
        for (int k = 0; k < 4; k++) fill(&out[k], 0.0f);
        return;
    }
    int64_t N, C, S;
    around(&launch->inputs[1], 1, &N, &C, &S);
    float *dy = tv_load_float(&launch->inputs[0]), *x = tv_load_float(&launch->inputs[1]);
    float *mean = tv_load_float(&launch->inputs[2]), *inv = tv_load_float(&launch->inputs[3]);
    float *r = tv_alloc(3 * C, sizeof(float));
    if (!dy || !x || !mean || !inv || !r) {
        tv_fail_oom(launch);
        goto done;
    }
    for (int64_t c = 0; c < C; c++) {
        double s = 0, sx = 0;
        for (int64_t n = 0; n < N; n++)
            for (int64_t k = 0; k < S; k++) {
                int64_t i = (n * C + c) * S + k;
                s += dy[i];
                sx += (float)(dy[i] * x[i]);               /* l0 Mul in fp32, then the reduction */
            }
        float sum_dy = (float)s, sum_dyx = (float)sx;
        float xmu = sum_dyx - mean[c] * sum_dy;
        r[c] = sum_dy, r[C + c] = xmu, r[2 * C + c] = xmu * inv[c];
    }
    if (out[0].present) tv_store_float(&out[0], r);
    if (out[1].present) tv_store_float(&out[1], r + C);
    if (out[2].present) tv_store_float(&out[2], r + 2 * C);
    if (out[3].present) tv_store_float(&out[3], r);
done:
    free(dy), free(x), free(mean), free(inv), free(r);
}

void sbn_gather_counts_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const sbn_params *p = launch->params;
    const pyaclnn_stub_tensor *in = launch->inputs, *out = launch->outputs;
    if (p->empty) {
        fill(&out[0], 0.0f);
        fill(&out[1], NAN);
        return;
    }
    int64_t D = in[0].shape[0], C = in[0].shape[1];
    double *mean = tv_load_double(&in[0]), *inv = tv_load_double(&in[1]), *cnt = tv_load_double(&in[2]);
    double *rm = in[3].present ? tv_load_double(&in[3]) : NULL, *rv = in[4].present ? tv_load_double(&in[4]) : NULL;
    float *r = tv_alloc(4 * C, sizeof(float));
    if (!mean || !inv || !cnt || !r || (in[3].present && !rm) || (in[4].present && !rv)) {
        tv_fail_oom(launch);
        goto done;
    }
    double n = 0, mo = p->momentum;
    for (int64_t d = 0; d < D; d++) n += cnt[d];
    for (int64_t c = 0; c < C; c++) {
        double mu = 0, var = 0;
        for (int64_t d = 0; d < D; d++) mu += cnt[d] * mean[d * C + c];
        mu /= n;
        for (int64_t d = 0; d < D; d++) {
            double dm = mean[d * C + c] - mu, is = inv[d * C + c];
            var += cnt[d] * (1.0 / (is * is) - p->eps + dm * dm);
        }
        r[c] = (float)mu;
        r[C + c] = (float)(1.0 / sqrt(var / n + p->eps));
        if (rm) r[2 * C + c] = (float)((1.0 - mo) * rm[c] + mo * mu);
        if (rv) r[3 * C + c] = (float)((1.0 - mo) * rv[c] + mo * var / (n - 1.0));
    }
    tv_store_float(&out[0], r);
    tv_store_float(&out[1], r + C);
    if (rm) tv_store_float(&out[2], r + 2 * C);
    if (rv) tv_store_float(&out[3], r + 3 * C);
done:
    free(mean), free(inv), free(cnt), free(rm), free(rv), free(r);
}

/* x rounded to the dtype t of the kernel's T tensors and back (StoreTensorForDtypeT / LoadTensorForDtypeT). */
static float as_t(float x, aclDataType t) {
    if (t == ACL_FLOAT) return x;
    return (float)ew_value_to_double(ew_cast((ew_value){.f = x}, ACL_FLOAT, t), t);
}

void sbn_sync_gather_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const sbn_params *p = launch->params;
    const pyaclnn_stub_tensor *in = launch->inputs, *out = launch->outputs;
    int64_t D = in[0].shape[0], C = in[0].shape[1];
    aclDataType T = in[0].dtype;
    double *sum = tv_load_double(&in[0]), *sq = tv_load_double(&in[1]);
    float *rm = tv_load_float(&in[3]), *rv = tv_load_float(&in[4]), *r = tv_alloc(4 * C, sizeof(float));
    int64_t *cnt = tv_alloc(D, sizeof(int64_t));
    if (!sum || !sq || !rm || !rv || !r || !cnt) {
        tv_fail_oom(launch);
        goto done;
    }
    int64_t all = 0;
    for (int64_t d = 0; d < D; d++) {               /* sampleCount cast to INT32 by the op_api */
        ew_value e = ew_load(tv_at(&in[2], tv_offset(&in[2], d)), in[2].dtype);
        all += ew_cast(e, in[2].dtype, ACL_INT32).i;
    }
    float fall = (float)all, reci = 1.0f / fall, mom = (float)p->momentum, eps = (float)p->eps;
    float inv_mom = fall / (fall - 1.0f) * mom, one_sub = 1.0f - mom;
    for (int64_t c = 0; c < C; c++) {
        double s = 0, q = 0;
        for (int64_t d = 0; d < D; d++) s += sum[d * C + c], q += sq[d * C + c];
        float mean = (float)s * reci;                           /* Muls(sumAll, 1 / n) */
        float mean2 = mean * mean;
        float rmean = as_t(rm[c], T) * one_sub + mean * mom;
        float var = (float)q * reci - mean2;
        float invstd = 1.0f / sqrtf(var + eps);
        float rvar = var * inv_mom + as_t(rv[c], T) * one_sub;
        r[c] = as_t(mean, T), r[C + c] = as_t(invstd, T), r[2 * C + c] = as_t(rmean, T), r[3 * C + c] = as_t(rvar, T);
    }
    for (int k = 0; k < 4; k++) tv_store_float(&out[k], r + k * C);
done:
    free(sum), free(sq), free(rm), free(rv), free(r), free(cnt);
}

/* ---- steps ---------------------------------------------------------------------------------- */

/* `tmpl` with its %s replaced by args[0], args[1] ... in turn. */
static void subst(char *buf, size_t size, const char *tmpl, const char *const *args, int n) {
    size_t used = 0;
    int k = 0;
    for (const char *t = tmpl; *t && used + 1 < size; t++) {
        if (t[0] == '%' && t[1] == 's' && k < n) {
            used += (size_t)snprintf(buf + used, size - used, "%s", args[k++]);
            if (used >= size) used = size - 1;
            t++;
        } else {
            buf[used++] = *t;
        }
    }
    buf[used] = '\0';
}

static aclnnStatus invalid_text(op_call *c, const char *tmpl, const char *const *args, int n) {
    char msg[512];
    subst(msg, sizeof msg, tmpl, args, n);
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "%s", msg);
    return ACLNN_ERR_PARAM_INVALID;
}

/* not_null_sbn_invalid p ...: as not_null, but 161002 (BatchNormElemt's CHECK_RET(CheckNotNull, PARAM_INVALID)). */
aclnnStatus opc_not_null_sbn_invalid(op_call *c, const op_step *s) {
    aclnnStatus rc = opc_not_null(c, s);
    return rc == ACLNN_ERR_PARAM_NULLPTR ? ACLNN_ERR_PARAM_INVALID : rc;
}

/* not_null_sbn_proper p ...: 161001 "expected a proper Tensor but got null for argument <p>." */
aclnnStatus opc_not_null_sbn_proper(op_call *c, const op_step *s) {
    for (int k = 0; k < s->np; k++)
        if (op_argument(c, s, k)->p == NULL) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, c->api, "expected a proper Tensor but got null for argument %s.",
                                op_pname(c, s, k));
            return ACLNN_ERR_PARAM_NULLPTR;
        }
    return ACLNN_SUCCESS;
}

/* sbn_dtype_msg p ... LIST "text": each present operand's dtype in LIST, else 161002 with the op_api's own text
 * (three %s: name, dtype, list; two: dtype, list). */
aclnnStatus opc_sbn_dtype_msg(op_call *c, const op_step *s) {
    size_t n;
    const aclDataType *list = op_list(s->list, &n);
    for (int k = 0; k < s->np; k++) {
        const pyaclnn_stub_tensor *t = op_tensor(c, s, k);
        if (!t->present || ew_in_list(t->dtype, list, n)) continue;
        char d[24], all[256];
        const char *three[3] = {op_pname(c, s, k), op_dtype_name(t->dtype, d), ew_dtype_list(list, n, all, sizeof all)};
        int holes = 0;
        for (const char *h = strstr(s->text, "%s"); h != NULL; h = strstr(h + 2, "%s")) holes++;
        return invalid_text(c, s->text, holes == 3 ? three : three + 1, holes == 3 ? 3 : 2);
    }
    return ACLNN_SUCCESS;
}

/* sbn_not_private p ... "text": no operand in a private storage format (the text's %s: the operand's name). */
aclnnStatus opc_sbn_not_private(op_call *c, const op_step *s) {
    for (int k = 0; k < s->np; k++) {
        const pyaclnn_stub_tensor *t = op_tensor(c, s, k);
        if (!t->present || !op_is_private_format(t->format)) continue;
        const char *name = op_pname(c, s, k);
        char cap[64];
        snprintf(cap, sizeof cap, "%s", name);      /* "Input format ...": the op_api capitalises the name */
        if (strncmp(s->text, "%s", 2) == 0 && cap[0] >= 'a' && cap[0] <= 'z' && strcmp(c->def->name, "BatchNormStats") == 0)
            cap[0] = (char)(cap[0] - 'a' + 'A');
        const char *args[1] = {cap};
        return invalid_text(c, s->text, args, 1);
    }
    return ACLNN_SUCCESS;
}

/* sbn_same_format a b: one storage format. */
aclnnStatus opc_sbn_same_format(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *a = op_tensor(c, s, 0), *b = op_tensor(c, s, 1);
    if (a->format == b->format) return ACLNN_SUCCESS;
    char x[24], y[24];
    return op_invalidf(c->api, "Format of %s and %s should be equal, %s [%s], %s [%s].", op_pname(c, s, 0),
                       op_pname(c, s, 1) , op_pname(c, s, 0), op_format_name(a->format, x), op_pname(c, s, 1),
                       op_format_name(b->format, y));
}

/* sbn_channels x "text": x's dim 1 is not 0. */
aclnnStatus opc_sbn_channels(op_call *c, const op_step *s) {
    if (op_tensor(c, s, 0)->shape[1] != 0) return ACLNN_SUCCESS;
    return op_invalidf(c->api, "%s", s->text);
}

/* sbn_vectors x p ...: each present operand is [C] (C = x's dim 1; OP_CHECK_SHAPE_NOT_EQUAL_WITH_EXPECTED_SIZE). */
aclnnStatus opc_sbn_vectors(op_call *c, const op_step *s) {
    int64_t ch = op_tensor(c, s, 0)->shape[1];
    for (int k = 1; k < s->np; k++) {
        if (!op_tensor(c, s, k)->present) continue;
        aclnnStatus rc = op_expected_size(c->api, op_pname(c, s, k), op_tensor(c, s, k), &ch, 1);
        if (rc) return rc;
    }
    return ACLNN_SUCCESS;
}

/* sbn_elemt_shapes input weight bias mean invstd: 1-D, then C elements. */
aclnnStatus opc_sbn_elemt_shapes(op_call *c, const op_step *s) {
    int64_t ch = op_tensor(c, s, 0)->shape[1];
    for (int k = 1; k < 5; k++)
        if (op_tensor(c, s, k)->present && op_tensor(c, s, k)->ndim != 1)
            return op_invalidf(c->api, "Weight/bias/mean/invstd dim size should be one.");
    for (int k = 1; k < 5; k++)
        if (op_tensor(c, s, k)->present && op_tensor(c, s, k)->shape[0] != ch)
            return op_invalidf(c->api, "Weight/bias/mean/invstd shape should be same as the channel size of input.");
    return ACLNN_SUCCESS;
}

/* sbn_empty_done a b: either empty ends phase 1 with a launch that does nothing. */
aclnnStatus opc_sbn_empty_done(op_call *c, const op_step *s) {
    for (int k = 0; k < s->np; k++)
        if (pyaclnn_stub_numel(op_tensor(c, s, k)) == 0) c->nothing = c->done = 1;
    return ACLNN_SUCCESS;
}

/* sbn_plan [eps [momentum]]: the kernel's attributes; an empty input (BatchNormStats) fills 0 / NaN. */
aclnnStatus opc_sbn_plan(op_call *c, const op_step *s) {
    sbn_params *p = sbn_block(c);
    if (s->np > 0) p->eps = op_argument(c, s, 0)->d;
    if (s->np > 1) p->momentum = op_argument(c, s, 1)->d;
    if (strcmp(c->def->name, "BatchNormStats") == 0) p->empty = pyaclnn_stub_numel(&c->t[0]) == 0;
    return ACLNN_SUCCESS;
}

/* sbn_reduce_empty x sum squareSum (before the op_api's checks): any of them empty fills sum and squareSum with 0. */
aclnnStatus opc_sbn_reduce_empty(op_call *c, const op_step *s) {
    for (int k = 0; k < 3; k++)
        if (pyaclnn_stub_numel(op_tensor(c, s, k)) == 0) {
            sbn_block(c)->empty = 1;
            c->done = 1;
            if (pyaclnn_stub_numel(op_tensor(c, s, 1)) == 0 && pyaclnn_stub_numel(op_tensor(c, s, 2)) == 0) c->nothing = 1;
            return ACLNN_SUCCESS;
        }
    sbn_block(c);
    return ACLNN_SUCCESS;
}

/* sbn_reduce_format x sum squareSum: x NCHW or NHWC, the outputs ND. */
aclnnStatus opc_sbn_reduce_format(op_call *c, const op_step *s) {
    char f[24];
    aclFormat xf = op_tensor(c, s, 0)->format;
    if (xf != ACL_FORMAT_NCHW && xf != ACL_FORMAT_NHWC)
        return op_invalidf(c->api, "Format of x only supports [NCHW, NHWC], but format is [%s].", op_format_name(xf, f));
    for (int k = 1; k < 3; k++)
        if (op_tensor(c, s, k)->format != ACL_FORMAT_ND)
            return op_invalidf(c->api, "Format of %s only supports [ND], but format is [%s].", op_pname(c, s, k),
                               op_format_name(op_tensor(c, s, k)->format, f));
    return ACLNN_SUCCESS;
}

/* sbn_reduce_shapes x sum squareSum: both 1-D with C elements (C: dim 3 for NHWC). The op_api prints sum's rank
 * in both rank messages. */
aclnnStatus opc_sbn_reduce_shapes(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0), *sum = op_tensor(c, s, 1), *sq = op_tensor(c, s, 2);
    if (sum->ndim != 1)
        return op_invalidf(c->api, "It is expected dimNum of sum equals to 1, but size is %lld", (long long)sum->ndim);
    if (sq->ndim != 1)
        return op_invalidf(c->api, "It is expected dimNum of squareSum equals to 1, but size is %lld", (long long)sum->ndim);
    int64_t ch = x->shape[x->format == ACL_FORMAT_NHWC ? 3 : 1];
    for (int k = 1; k < 3; k++)
        if (op_tensor(c, s, k)->shape[0] != ch)
            return op_invalidf(c->api, "It is expected size of %s equals to input_C(%lld), but size is %lld",
                               op_pname(c, s, k), (long long)ch, (long long)op_tensor(c, s, k)->shape[0]);
    return ACLNN_SUCCESS;
}

/* The mask entry of BatchNormReduceBackward's output k (sumDy, sumDyXmu: inputG; gradWeight; gradBias). */
static int bwr_mask(op_call *c, const op_step *s, int k) { return op_argument(c, s, k < 2 ? 0 : k - 1)->i != 0; }

/* sbn_bwr_mask inputG weightG biasG sumDy sumDyXmu gradWeight gradBias: the outputs the masks ask for given. */
aclnnStatus opc_sbn_bwr_mask(op_call *c, const op_step *s) {
    for (int k = 0; k < 4; k++)
        if (bwr_mask(c, s, k) && op_argument(c, s, k + 3)->p == NULL) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, c->api, "expected a proper Tensor but got null for argument %s.",
                                op_pname(c, s, k + 3));
            return ACLNN_ERR_PARAM_NULLPTR;
        }
    return ACLNN_SUCCESS;
}

/* sbn_bwr_read inputG weightG biasG sumDy sumDyXmu gradWeight gradBias: snapshots of the asked-for outputs; the
 * others absent. */
aclnnStatus opc_sbn_bwr_read(op_call *c, const op_step *s) {
    for (int k = 0; k < 4; k++) {
        int i = s->p[k + 3];
        c->t[i].present = 0;
        c->read |= (uint64_t)1 << i;
        if (!bwr_mask(c, s, k)) continue;
        aclnnStatus rc = op_tensor_arg(c->api, op_pname(c, s, k + 3), op_argument(c, s, k + 3)->p, &c->t[i]);
        if (rc) return rc;
    }
    return ACLNN_SUCCESS;
}

/* sbn_bwr_format gradOut input mean invstd out ...: gradOut and input in one format, no private format. */
aclnnStatus opc_sbn_bwr_format(op_call *c, const op_step *s) {
    char a[24], b[24];
    const pyaclnn_stub_tensor *g = op_tensor(c, s, 0), *x = op_tensor(c, s, 1);
    if (g->format != x->format)
        return op_invalidf(c->api, "Format of gradOut and input should be equal. self [%s], out [%s].",
                           op_format_name(g->format, a), op_format_name(x->format, b));
    for (int k = 0; k < s->np; k++) {
        const pyaclnn_stub_tensor *t = op_tensor(c, s, k);
        if (t->present && op_is_private_format(t->format))
            return op_invalidf(c->api, "Format only support ND, NCHW, NHWC, HWCN, NDHWC, NCDHW;but %s format is %s, "
                               "please check.", op_pname(c, s, k), op_format_name(t->format, a));
    }
    return ACLNN_SUCCESS;
}

/* sbn_bwr_shapes input out ...: each asked-for output is [C]. */
aclnnStatus opc_sbn_bwr_shapes(op_call *c, const op_step *s) {
    int64_t ch = op_tensor(c, s, 0)->shape[1];
    for (int k = 1; k < s->np; k++) {
        const pyaclnn_stub_tensor *t = op_tensor(c, s, k);
        if (!t->present || (t->ndim == 1 && t->shape[0] == ch)) continue;
        char x[200], y[200];
        return op_invalidf(c->api, "expected tensor for %s to have same size as %s, but got %s.", op_pname(c, s, k),
                           tv_shape_text(&ch, 1, x, sizeof x), tv_shape_text(t->shape, t->ndim, y, sizeof y));
    }
    return ACLNN_SUCCESS;
}

/* sbn_bwr_empty gradOut input mean invstd: any empty ends phase 1; (Ascend 950) the asked-for outputs are zeroed. */
aclnnStatus opc_sbn_bwr_empty(op_call *c, const op_step *s) {
    for (int k = 0; k < 4; k++)
        if (pyaclnn_stub_numel(op_tensor(c, s, k)) == 0) {
            c->done = 1;
            if (ew_soc_is_950()) sbn_block(c)->empty = 1;
            else c->nothing = 1;
            return ACLNN_SUCCESS;
        }
    return ACLNN_SUCCESS;
}

/* sbn_bwr_operands gradOut input mean invstd: the op_api checks none of these shapes; its l0 Mul(gradOut, input)
 * and SyncBatchNormBackwardReduce(sumDy, sumDyX, mean, invstd) then fail (nullptr: 561103) on operands that do
 * not fit. The emulator asks for what its kernel reads: gradOut of input's shape, mean and invstd of C elements. */
aclnnStatus opc_sbn_bwr_operands(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *dy = op_tensor(c, s, 0), *x = op_tensor(c, s, 1);
    int same = dy->ndim == x->ndim;
    for (int64_t d = 0; same && d < x->ndim; d++) same = dy->shape[d] == x->shape[d];
    if (!same) return op_failf(c->api, ACLNN_ERR_INNER_NULLPTR, "gradOut's shape must be input's.");
    for (int k = 2; k < 4; k++)
        if (pyaclnn_stub_numel(op_tensor(c, s, k)) != x->shape[1])
            return op_failf(c->api, ACLNN_ERR_INNER_NULLPTR, "%s must have %lld elements, the channels of input.",
                            op_pname(c, s, k), (long long)x->shape[1]);
    return ACLNN_SUCCESS;
}

/* sbn_gather_shapes input mean invstd counts: mean, invstd, counts alike in dim 0; mean, invstd [., C]. */
aclnnStatus opc_sbn_gather_shapes(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0), *m = op_tensor(c, s, 1), *iv = op_tensor(c, s, 2);
    const pyaclnn_stub_tensor *n = op_tensor(c, s, 3);
    char a[200], b[200], d[200];
    tv_shape_text(m->shape, m->ndim, a, sizeof a);
    tv_shape_text(iv->shape, iv->ndim, b, sizeof b);
    tv_shape_text(n->shape, n->ndim, d, sizeof d);
    if (m->shape[0] != iv->shape[0] || n->ndim < 1 || n->shape[0] != m->shape[0])
        return op_invalidf(c->api, "first dimension of mean, invstd and count should be the same, but got mean: %s, "
                           "invstd: %s, counts: %s.", a, b, d);
    if (m->shape[1] != x->shape[1] || iv->shape[1] != x->shape[1])
        return op_invalidf(c->api, "second dimension of mean/invstd should be the channel size of input %lld, but got"
                           "mean: %s, invstd: %s.", (long long)x->shape[1], a, b);
    return ACLNN_SUCCESS;
}

/* sbn_counts_dim counts: 1-D. */
aclnnStatus opc_sbn_counts_dim(op_call *c, const op_step *s) {
    return op_tensor(c, s, 0)->ndim == 1 ? ACLNN_SUCCESS : op_invalidf(c->api, "dim of counts should be one.");
}

/* sbn_gather_empty mean: an empty mean ends phase 1: meanAll 0, invstdAll NaN. */
aclnnStatus opc_sbn_gather_empty(op_call *c, const op_step *s) {
    if (pyaclnn_stub_numel(op_tensor(c, s, 0)) != 0) return ACLNN_SUCCESS;
    sbn_block(c)->empty = 1;
    c->done = 1;
    return ACLNN_SUCCESS;
}

/* sbn_sync_shapes totalSum totalSquareSum sampleCount mean variance batchMean batchInvstd: the op_api's pairwise
 * dims, then totalSum's dim 0 not 0 (161002) and its dim 1 0 (nothing to do). */
aclnnStatus opc_sbn_sync_shapes(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *t[7];
    for (int k = 0; k < 7; k++) t[k] = op_tensor(c, s, k);
    static const char *const msg[] = {"totalSumShape dim0 not same totalSquareSumShape dim0",
                                      "totalSumShape dim1 not same totalSquareSumShape dim1",
                                      "totalSumShape dim0 not same sampleCountShape dim0",
                                      "totalSumShape dim1 not same meanShape dim0",
                                      "totalSumShape dim1 not same varianceShape dim0",
                                      "totalSumShape dim1 not same batchMeanShape dim0",
                                      "totalSumShape dim1 not same batchInvstdShape dim0"};
    int64_t want[7][2] = {{t[0]->shape[0], t[1]->shape[0]}, {t[0]->shape[1], t[1]->shape[1]},
                          {t[0]->shape[0], t[2]->shape[0]}, {t[0]->shape[1], t[3]->shape[0]},
                          {t[0]->shape[1], t[4]->shape[0]}, {t[0]->shape[1], t[5]->shape[0]},
                          {t[0]->shape[1], t[6]->shape[0]}};
    for (int k = 0; k < 7; k++)
        if (want[k][0] != want[k][1]) return op_invalidf(c->api, "%s", msg[k]);
    if (t[0]->shape[0] == 0) return op_invalidf(c->api, "totalSumShape dim0 is zero");
    if (t[0]->shape[1] == 0) c->nothing = c->done = 1;
    return ACLNN_SUCCESS;
}
