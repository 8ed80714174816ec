/*
 * aclnnGroupNorm and aclnnGroupNormBackward: torch's group_norm / nn.GroupNorm and its backward
 * (hicann/ops-nn norm/group_norm/op_host/op_api/aclnn_group_norm.cpp, norm/group_norm_grad).
 *
 * self [N, C, *] is [N, G, D] with D = C / G * HxW; per (n, g) over its D elements:
 *   mean = sum(x) / D, rstd = 1 / sqrt(sum((x - mean)^2) / D + eps), out = (x - mean) * rstd * gamma[c] + beta[c];
 *   backward: xhat = (x - mean) * rstd, g = dy * gamma[c],
 *     dx = rstd * (g - sum(g) / D - xhat * sum(g * xhat) / D), dgamma[c] = sum over n, HxW of dy * xhat,
 *     dbeta[c] = sum of dy.
 * Float64 throughout (inputs widened exactly), each result rounded once to fp32 then to its dtype: class (c).
 * Definitions: group_norm.toml (the vendor's checks in its order, with the steps below).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"

typedef struct {
    int64_t n, c, hw, group;
    double eps;
    int has_gamma, has_beta;
    bool mask[3];
} gn_params;

static gn_params *gn_block(op_call *c) {
    return c->params_size ? (gn_params *)c->params : op_params(c, sizeof(gn_params));
}

/* ---- kernels -------------------------------------------------------------------------------- */

static double *channel_values(const pyaclnn_stub_tensor *t, int present, int64_t ch, double fill) {
    if (present) return tv_load_double(t);
    double *v = malloc(((size_t)ch + 1) * sizeof(double));
    for (int64_t k = 0; v != NULL && k < ch; k++) v[k] = fill;
    return v;
}

void group_norm_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const gn_params *p = launch->params;
    int64_t N = p->n, C = p->c, G = p->group, HW = p->hw, cg = C / G, D = cg * HW;
    double *x = tv_load_double(&launch->inputs[0]), *gm = channel_values(&launch->inputs[1], p->has_gamma, C, 1.0);
    double *bt = channel_values(&launch->inputs[2], p->has_beta, C, 0.0);
    double *y = malloc(((size_t)(N * C * HW) + 1) * sizeof(double));
    double *mean = malloc(((size_t)(N * G) + 1) * sizeof(double)), *rstd = malloc(((size_t)(N * G) + 1) * sizeof(double));
    if (!x || !gm || !bt || !y || !mean || !rstd) {
        tv_fail_oom(launch);
    } else {
        for (int64_t r = 0; r < N * G; r++) {
            const double *row = x + r * D;
            double s = 0, v = 0;
            for (int64_t j = 0; j < D; j++) s += row[j];
            mean[r] = D ? s / (double)D : 0.0;
            for (int64_t j = 0; j < D; j++) v += (row[j] - mean[r]) * (row[j] - mean[r]);
            rstd[r] = D ? 1.0 / sqrt(v / (double)D + p->eps) : NAN;
            for (int64_t j = 0; j < D; j++) {
                int64_t ch = (r % G) * cg + j / HW;
                y[r * D + j] = (row[j] - mean[r]) * rstd[r] * gm[ch] + bt[ch];
            }
        }
        tv_store_double(&launch->outputs[0], y);
        tv_store_double(&launch->outputs[1], mean);
        tv_store_double(&launch->outputs[2], rstd);
    }
    free(x), free(gm), free(bt), free(y), free(mean), free(rstd);
}

void group_norm_backward_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const gn_params *p = launch->params;
    int64_t N = p->n, C = p->c, G = p->group, HW = p->hw, cg = C / G, D = cg * HW;
    double *dy = tv_load_double(&launch->inputs[0]), *x = tv_load_double(&launch->inputs[1]);
    double *mean = tv_load_double(&launch->inputs[2]), *rstd = tv_load_double(&launch->inputs[3]);
    double *gm = channel_values(&launch->inputs[4], p->has_gamma, C, 1.0);
    double *dx = calloc((size_t)(N * C * HW) + 1, sizeof(double));
    double *dg = calloc((size_t)C + 1, sizeof(double)), *db = calloc((size_t)C + 1, sizeof(double));
    if (!dy || !x || !mean || !rstd || !gm || !dx || !dg || !db) {
        tv_fail_oom(launch);
    } else {
        for (int64_t r = 0; r < N * G; r++) {
            double sg = 0, sgx = 0;
            for (int64_t j = 0; j < D; j++) {
                int64_t i = r * D + j, ch = (r % G) * cg + j / HW;
                double xhat = (x[i] - mean[r]) * rstd[r], g = dy[i] * gm[ch];
                sg += g;
                sgx += g * xhat;
                dg[ch] += dy[i] * xhat;
                db[ch] += dy[i];
            }
            for (int64_t j = 0; j < D; j++) {
                int64_t i = r * D + j, ch = (r % G) * cg + j / HW;
                double xhat = (x[i] - mean[r]) * rstd[r];
                dx[i] = rstd[r] * (dy[i] * gm[ch] - sg / (double)D - xhat * sgx / (double)D);
            }
        }
        if (p->mask[0]) tv_store_double(&launch->outputs[0], dx);
        if (p->mask[1]) tv_store_double(&launch->outputs[1], dg);
        if (p->mask[2]) tv_store_double(&launch->outputs[2], db);
    }
    free(dy), free(x), free(mean), free(rstd), free(gm), free(dx), free(dg), free(db);
}

/* ---- steps ---------------------------------------------------------------------------------- */

#define invalid(c, ...) op_invalidf((c)->api, __VA_ARGS__)

/* gn_attrs self C group eps: group > 0 dividing C, eps > 0. */
aclnnStatus opc_gn_attrs(op_call *c, const op_step *s) {
    int64_t ch = op_argument(c, s, 1)->i, group = op_argument(c, s, 2)->i;
    double eps = op_argument(c, s, 3)->d;
    char b[200];
    if (group <= 0) return invalid(c, "Expected group to be greater than 0, got %lld.", (long long)group);
    if (ch % group != 0)
        return invalid(c, "Expected number of channels in input to be divisible by group, but got input of shape %s "
                       "and group=%lld.", tv_shape_text(op_tensor(c, s, 0)->shape, op_tensor(c, s, 0)->ndim, b, sizeof b),
                       (long long)group);
    if (!(eps > 0.0)) return invalid(c, "Expected eps to be greater than 0, got %f.", eps);
    return ACLNN_SUCCESS;
}

static int64_t numel_from(const pyaclnn_stub_tensor *t, int64_t from) {
    return tv_dims_product(t->shape, from, t->ndim);   /* (dims after a 0 may multiply past int64) */
}

static aclnnStatus channel_vector(op_call *c, const char *name, const pyaclnn_stub_tensor *t,
                                  const pyaclnn_stub_tensor *self, int64_t ch) {
    if (!t->present || (t->ndim == 1 && t->shape[0] == ch)) return ACLNN_SUCCESS;
    char a[200], b[200];
    return invalid(c, "Expected %s to be a vector of size equal to the number of channels in input, but got %s of "
                   "shape %s and input of shape %s.", name, name, tv_shape_text(t->shape, t->ndim, a, sizeof a),
                   tv_shape_text(self->shape, self->ndim, b, sizeof b));
}

/* numel == a * b (* c): false when the product leaves int64 (the attributes are the caller's integers). */
static int count_is(int64_t numel, int64_t a, int64_t b, int64_t c) {
    int64_t ab, abc;
    return !__builtin_mul_overflow(a, b, &ab) && !__builtin_mul_overflow(ab, c, &abc) && abc == numel;
}

/* gn_shapes self gamma beta N C HxW group meanOut rstdOut: meanOut and rstdOut [N, group]; self [N, C, ...] with
 * HxW elements after C; gamma and beta [C]. */
aclnnStatus opc_gn_shapes(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0);
    int64_t n = op_argument(c, s, 3)->i, ch = op_argument(c, s, 4)->i, hw = op_argument(c, s, 5)->i;
    int64_t mv[2] = {n, op_argument(c, s, 6)->i};
    aclnnStatus rc;
    if ((rc = op_expected_size(c->api, op_pname(c, s, 7), op_tensor(c, s, 7), mv, 2)) ||
        (rc = op_expected_size(c->api, op_pname(c, s, 8), op_tensor(c, s, 8), mv, 2)))
        return rc;
    if (self->shape[0] != n) return invalid(c, "Expected self.shape[0] == N to be true, but got false.");
    if (self->shape[1] != ch) return invalid(c, "Expected self.shape[1] == C to be true, but got false.");
    if (numel_from(self, 2) != hw)
        return invalid(c, "Expected the size of self outside the N and C dimensions == HxW to be true, but got false.");
    if (!count_is(numel_from(self, 0), n, ch, hw))
        return invalid(c, "Expected self.numel() == N * C * HxW to be true, but got false.");
    if ((rc = channel_vector(c, "gamma", op_tensor(c, s, 1), self, ch)) ||
        (rc = channel_vector(c, "beta", op_tensor(c, s, 2), self, ch)))
        return rc;
    return ACLNN_SUCCESS;
}

/* gn_format self out: one storage format, channels first. */
aclnnStatus opc_gn_format(op_call *c, const op_step *s) {
    aclFormat a = op_tensor(c, s, 0)->format, b = op_tensor(c, s, 1)->format;
    char x[24], y[24];
    if (a != b)
        return invalid(c, "Format of self and out should be equal, but got self [%s], out [%s]", op_format_name(a, x),
                       op_format_name(b, y));
    if (a == ACL_FORMAT_NHWC || a == ACL_FORMAT_HWCN || a == ACL_FORMAT_NDHWC)
        return invalid(c, "Format only support ND、NCL、NCHW、NCDHW.");
    return ACLNN_SUCCESS;
}

/* gn_plan self gamma beta group eps: the kernel's sizes and attributes (an empty self still writes meanOut 0 and
 * rstdOut NaN). */
aclnnStatus opc_gn_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0);
    gn_params *p = gn_block(c);
    p->n = self->shape[0];
    p->c = self->shape[1];
    p->hw = numel_from(self, 2);
    p->group = op_argument(c, s, 3)->i;
    p->eps = op_argument(c, s, 4)->d;
    p->has_gamma = op_tensor(c, s, 1)->present;
    p->has_beta = op_tensor(c, s, 2)->present;
    if (p->n * p->group == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}

/* gn_mask outputMask gradInput gradGammaOut gradBetaOut (CheckMaskNotNull, every failure 161002): a live mask of
 * 3, the outputs it asks for given. */
aclnnStatus opc_gn_mask(op_call *c, const op_step *s) {
    const bool *mask;
    uint64_t n = 0;
    if (pyaclnn_stub_bool_array_get(op_argument(c, s, 0)->p, &mask, &n) != ACLNN_SUCCESS)
        return invalid(c, "%s is not a live aclBoolArray", op_pname(c, s, 0));
    if (n != 3) return invalid(c, "Expected aclnnGroupNormBackward outputMask len to be 3, but got %llu.", (unsigned long long)n);
    gn_params *p = gn_block(c);
    for (int k = 0; k < 3; k++) {
        p->mask[k] = mask[k];
        if (mask[k] && op_argument(c, s, k + 1)->p == NULL)
            return invalid(c, "Expected a proper Tensor but got null for argument %s.", op_pname(c, s, k + 1));
    }
    return ACLNN_SUCCESS;
}

static aclnnStatus match(op_call *c, const op_step *s, int k, aclDataType want) {
    const pyaclnn_stub_tensor *t = op_tensor(c, s, k);
    if (!t->present || t->dtype == want) return ACLNN_SUCCESS;
    char a[24], b[24];
    return invalid(c, "Tensor %s expected dtype is %s but found %s.", op_pname(c, s, k), op_dtype_name(want, a),
                   op_dtype_name(t->dtype, b));
}

/* gn_bw_dtypes gradOut input mean rstd gamma gradInput gradGammaOut gradBetaOut LIST: Atlas A2/A3, every tensor of
 * gradOut's dtype; Ascend 950 (mixed precision), mean in LIST, input and gradInput gradOut's, mean FLOAT or (for
 * FLOAT16 / BF16 gradients) gradOut's, rstd, gamma and the weight gradients mean's. */
aclnnStatus opc_gn_bw_dtypes(op_call *c, const op_step *s) {
    enum { GO, IN, MEAN, RSTD, GAMMA, GI, GG, GB };
    aclDataType go = op_tensor(c, s, GO)->dtype, m = op_tensor(c, s, MEAN)->dtype;
    aclnnStatus rc;
    if (!ew_soc_is_950()) {
        for (int k = IN; k <= GB; k++)
            if ((rc = match(c, s, k, go))) return rc;
        return ACLNN_SUCCESS;
    }
    size_t n;
    const aclDataType *list = op_list(s->list, &n);
    char b[24], all[200];
    if (!ew_in_list(m, list, n))
        return invalid(c, "Tensor %s not implemented for %s, should be in dtype support list [%s].", op_pname(c, s, MEAN),
                       op_dtype_name(m, b), ew_dtype_list(list, n, all, sizeof all));
    if ((rc = match(c, s, IN, go)) || (rc = match(c, s, GI, go))) return rc;
    if (go == ACL_FLOAT && (rc = match(c, s, MEAN, go))) return rc;
    if ((go == ACL_FLOAT16 || go == ACL_BF16) && m != ACL_FLOAT && m != go) {
        const aclDataType pair[2] = {ACL_FLOAT, go};
        return invalid(c, "Tensor %s not implemented for %s, should be in dtype support list [%s].", op_pname(c, s, MEAN),
                       op_dtype_name(m, b), ew_dtype_list(pair, 2, all, sizeof all));
    }
    for (int k = RSTD; k <= GB; k++)
        if (k != GI && (rc = match(c, s, k, m))) return rc;
    return ACLNN_SUCCESS;
}

/* gn_bw_attrs C group: group > 0 dividing C; Atlas A2/A3: C / group <= 8000, C <= 240000. */
aclnnStatus opc_gn_bw_attrs(op_call *c, const op_step *s) {
    int64_t ch = op_argument(c, s, 0)->i, group = op_argument(c, s, 1)->i;
    if (group <= 0) return invalid(c, "Expected group to be greater than 0, got %lld.", (long long)group);
    if (ch % group != 0) return invalid(c, "Expected C can be divided by group, but got false.");
    if (!ew_soc_is_950() && ch / group > 8000) return invalid(c, "Expected C / group <= 8000 to be true, but got false.");
    if (!ew_soc_is_950() && ch > 240000) return invalid(c, "Expecting C to not exceed 240000, got %lld.", (long long)ch);
    return ACLNN_SUCCESS;
}

/* gn_bw_shapes gradOut input mean rstd gamma N C HxW group gradInput gradGammaOut gradBetaOut: element counts of
 * N * C * HxW and N * group, gamma of C, the gradients' shapes; (emulator) input [N, C, ...]. */
aclnnStatus opc_gn_bw_shapes(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *in = op_tensor(c, s, 1), *gamma = op_tensor(c, s, 4);
    int64_t n = op_argument(c, s, 5)->i, ch = op_argument(c, s, 6)->i, hw = op_argument(c, s, 7)->i;
    int64_t group = op_argument(c, s, 8)->i;
    aclnnStatus rc;
    if ((rc = ew_check_max_dim(c->api, op_pname(c, s, 0), op_tensor(c, s, 0), 8))) return rc;
    if (!count_is(pyaclnn_stub_numel(op_tensor(c, s, 0)), n, ch, hw))
        return invalid(c, "Expected gradOut.numel() == N * C * HxW to be true, but got false.");
    if (!count_is(pyaclnn_stub_numel(in), n, ch, hw))
        return invalid(c, "Expected input.numel() == N * C * HxW to be true, but got false.");
    if (!count_is(pyaclnn_stub_numel(op_tensor(c, s, 2)), n, group, 1))
        return invalid(c, "Expected mean.numel() == N * group to be true, but got false.");
    if (!count_is(pyaclnn_stub_numel(op_tensor(c, s, 3)), n, group, 1))
        return invalid(c, "Expected rstd.numel() == N * group to be true, but got false.");
    int64_t gshape[PYACLNN_STUB_MAX_DIMS] = {ch}, gnd = 1;
    if (gamma->present) {
        if (pyaclnn_stub_numel(gamma) != ch) return invalid(c, "Expected gamma.numel() == C to be true, but got false.");
        memcpy(gshape, gamma->shape, sizeof gshape);
        gnd = gamma->ndim;
    }
    const gn_params *p = gn_block(c);
    if ((p->mask[0] && (rc = op_expected_size(c->api, op_pname(c, s, 9), op_tensor(c, s, 9), in->shape, in->ndim))) ||
        (p->mask[1] && (rc = op_expected_size(c->api, op_pname(c, s, 10), op_tensor(c, s, 10), gshape, gnd))) ||
        (p->mask[2] && (rc = op_expected_size(c->api, op_pname(c, s, 11), op_tensor(c, s, 11), gshape, gnd))))
        return rc;
    if (in->ndim < 2 || in->shape[0] != n || in->shape[1] != ch)
        return invalid(c, "input must be [N, C, ...] = [%lld, %lld, ...] (the emulator's kernel reads it so)",
                       (long long)n, (long long)ch);
    return ACLNN_SUCCESS;
}

/* gn_bw_plan gradOut input gamma group: the kernel's sizes; an empty gradOut or input launches nothing (Atlas
 * A2/A3), or zero weight gradients (Ascend 950). */
aclnnStatus opc_gn_bw_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *in = op_tensor(c, s, 1);
    gn_params *p = gn_block(c);
    p->n = in->shape[0];
    p->c = in->shape[1];
    p->hw = numel_from(in, 2);
    p->group = op_argument(c, s, 3)->i;
    p->has_gamma = op_tensor(c, s, 2)->present;
    int empty = pyaclnn_stub_numel(op_tensor(c, s, 0)) == 0 || pyaclnn_stub_numel(in) == 0;
    if (empty && (!ew_soc_is_950() || p->c == 0)) c->nothing = 1;
    if (empty) p->mask[0] = 0;
    return ACLNN_SUCCESS;
}
