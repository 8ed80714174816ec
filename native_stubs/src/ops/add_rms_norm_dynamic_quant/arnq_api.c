/*
 * AddRmsNormDynamicQuant: the op_api layers (hicann/ops-nn norm/add_rms_norm_dynamic_quant/op_host/op_api/
 * aclnn_add_rms_norm_dynamic_quant{,_v2}.cpp) as steps, which the definitions (add_rms_norm_dynamic_quant.toml)
 * run in the vendor's order (spec B.3 for V1, B.4 for V2) before the shared L0 op (arnq_l0.c).
 *
 * V1 has no beta and no outputMask: y1/scale1 are always produced, y2/scale2 only with both smooth
 * scales (B.2). V2 adds betaOptional and outputMask ([produce y1/scale1, produce y2/scale2]); an INT32 y is
 * the packed-INT4 result seen as little-endian words (8 elements per word, B.10). V2 has no dtype
 * whitelist of its own: unsupported dtypes are refused by kernel selection (phase 2). Inactive outputs
 * are left untouched (their content is unspecified, Q9).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "arnq.h"
#include "kernels/device.h"
#include "opbase/checks.h"
#include "ops_decls.h"

#define T(k) op_tensor(c, s, k)
#define N(k) op_pname(c, s, k)

/* ---- helpers ---------------------------------------------------------------------------------- */

int arnq_same_shape(const pyaclnn_stub_tensor *a, const pyaclnn_stub_tensor *b) {
    if (a->ndim != b->ndim) return 0;
    for (int64_t k = 0; k < a->ndim; k++)
        if (a->shape[k] != b->shape[k]) return 0;
    return 1;
}

int arnq_is_empty(const pyaclnn_stub_tensor *t) { return t->present && pyaclnn_stub_numel(t) == 0; }

int64_t arnq_last_dim(const pyaclnn_stub_tensor *t) { return t->ndim ? t->shape[t->ndim - 1] : -1; }

const char *arnq_shape_str(const pyaclnn_stub_tensor *t, char *buf, size_t size) {
    return tv_shape_text(t->shape, t->ndim, buf, size);
}

arnq_params *arnq_block(op_call *c) {
    if (c->params_size == sizeof(arnq_params)) return (arnq_params *)(void *)c->params;
    return op_params(c, sizeof(arnq_params));
}

static aclnnStatus report(const op_call *c, aclnnStatus code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static aclnnStatus report(const op_call *c, aclnnStatus code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    pyaclnn_stub_vreport(code, c->api, fmt, ap);
    va_end(ap);
    return code;
}

/* 161002 with a message of at most 299 characters (how V2's op_api checks format theirs). */
static aclnnStatus invalid(const op_call *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static aclnnStatus invalid(const op_call *c, const char *fmt, ...) {
    char msg[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "%s", msg);
    return ACLNN_ERR_PARAM_INVALID;
}

/* ---- both versions ---------------------------------------------------------------------------- */

/* The vendor's early return (B.11): success, workspace 0 and an executor that runs nothing (over no tensors). */
static aclnnStatus end_empty(op_call *c) {
    c->nothing = 1;
    c->params_size = 0;
    c->workspace = 0;
    aclnnStatus rc = op_make_executor(c, 0);
    if (rc == ACLNN_SUCCESS) c->done = 1;
    return rc;
}

/* arnq_empty t ...: V1 (B.3 row 4): an empty operand ends phase 1 there, nothing computed or written. */
aclnnStatus opc_arnq_empty(op_call *c, const op_step *s) {
    for (int k = 0; k < s->np; k++)
        if (arnq_is_empty(T(k))) return end_empty(c);
    return ACLNN_SUCCESS;
}

/* arnq_empty_v2 gamma t ...: V2 (B.4 row 5): the same, except an empty gamma on Ascend 950, which goes on to the
 * kernel's reduce-empty template (-inf scales). */
aclnnStatus opc_arnq_empty_v2(op_call *c, const op_step *s) {
    if (pyaclnn_stub_soc_family() == PYACLNN_SOC_950 && arnq_is_empty(T(0))) return ACLNN_SUCCESS;
    return opc_arnq_empty(c, s);
}

/* ---- V1 (B.3) --------------------------------------------------------------------------------- */

/* arnq_same_dtype a b: B.3 row 2, y1Out and y2Out have one dtype. */
aclnnStatus opc_arnq_same_dtype(op_call *c, const op_step *s) {
    if (T(0)->dtype == T(1)->dtype) return ACLNN_SUCCESS;
    char b1[24], b2[24];
    return report(c, ACLNN_ERR_PARAM_INVALID, "%s dtype %s and %s dtype %s must be the same", N(0),
                  op_dtype_name(T(0)->dtype, b1), N(1), op_dtype_name(T(1)->dtype, b2));
}

/* arnq_v1_shapes x1 x2 gamma smoothScale1 smoothScale2: B.3 row 3, the view shapes (561002 although these are
 * parameter errors). */
aclnnStatus opc_arnq_v1_shapes(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x1 = T(0), *gamma = T(2);
    char s1[96], s2[96];
    if (!arnq_same_shape(x1, T(1)))
        return report(c, ACLNN_ERR_INNER_TILING_ERROR, "%s %s and %s %s shape mismatch", N(0),
                      arnq_shape_str(x1, s1, sizeof s1), N(1), arnq_shape_str(T(1), s2, sizeof s2));
    if (gamma->ndim != 1)
        return report(c, ACLNN_ERR_INNER_TILING_ERROR, "%s %s shape dim num should be 1", N(2),
                      arnq_shape_str(gamma, s1, sizeof s1));
    if (x1->ndim == 0) /* the vendor would read dim -1 */
        return report(c, ACLNN_ERR_INNER_TILING_ERROR, "%s %s has rank 0: it needs a last dimension for %s", N(0),
                      arnq_shape_str(x1, s1, sizeof s1), N(2));
    if (arnq_last_dim(x1) != gamma->shape[0])
        return report(c, ACLNN_ERR_INNER_TILING_ERROR, "%s shape %s isn't consistent with the last dimension of %s %s",
                      N(2), arnq_shape_str(gamma, s1, sizeof s1), N(0), arnq_shape_str(x1, s2, sizeof s2));
    for (int k = 3; k < 5; k++)
        if (T(k)->present && !arnq_same_shape(T(k), gamma))
            return report(c, ACLNN_ERR_INNER_TILING_ERROR, "%s shape %s mismatch with %s %s", N(k),
                          arnq_shape_str(T(k), s1, sizeof s1), N(2), arnq_shape_str(gamma, s2, sizeof s2));
    return ACLNN_SUCCESS;
}

/* The L0 result (x1's shape) is ViewCopied into y_k. The vendor does not check the shape and the outcome of a
 * mismatch is not pinned down: the emulator refuses (561103). */
static aclnnStatus y_copyable(op_call *c, const op_step *s, int k, int active) {
    char s1[96], s2[96];
    if (!active || arnq_same_shape(T(k), T(0))) return ACLNN_SUCCESS;
    return report(c, ACLNN_ERR_INNER_NULLPTR, "%s shape %s differs from %s %s: the result cannot be copied into it "
                  "(the vendor leaves this unchecked; the emulator refuses)", N(k), arnq_shape_str(T(k), s1, sizeof s1),
                  N(0), arnq_shape_str(T(0), s2, sizeof s2));
}

/* arnq_v1_outputs x1 y1Out y2Out smoothScale1 smoothScale2: V1's active outputs (y2/scale2 with both smooth scales)
 * and its L0 y dtype; the active y must take x1's shape. */
aclnnStatus opc_arnq_v1_outputs(op_call *c, const op_step *s) {
    arnq_params *p = arnq_block(c);
    p->out1 = 1;
    p->out2 = T(3)->present && T(4)->present;
    p->y_dtype = T(1)->dtype;
    aclnnStatus rc = y_copyable(c, s, 1, p->out1);
    return rc ? rc : y_copyable(c, s, 2, p->out2);
}

/* ---- V2 (B.4) --------------------------------------------------------------------------------- */

/* arnq_mask smoothScale1Optional smoothScale2Optional outputMask: B.4 rows 1-3, which outputs are active
 * (CheckFlag). Only the liveness message names the mask by its operand label (outputMaskOptional). */
aclnnStatus opc_arnq_mask(op_call *c, const op_step *s) {
    int s1 = op_argument(c, s, 0)->p != NULL, s2 = op_argument(c, s, 1)->p != NULL;
    const aclBoolArray *mask = op_argument(c, s, 2)->p;
    const bool *values = NULL;
    uint64_t n = 0;
    if (pyaclnn_stub_bool_array_get(mask, &values, &n) != ACLNN_SUCCESS)
        return invalid(c, "%s (%p) is not a live aclBoolArray", N(2), (const void *)mask);
    arnq_params *p = arnq_block(c);
    if (mask == NULL) {
        if (s2 && !s1)
            return invalid(c, "when outputMask is unavailable, %s is not supported without %s",
                          N(1), N(0));
        p->out1 = 1;
        p->out2 = s1 && s2;
        return ACLNN_SUCCESS;
    }
    if (n != 2)
        return invalid(c, "the length of outputMask must be 2, but got %llu",
                      (unsigned long long)n);
    if (s1 && !values[0]) return invalid(c, "%s is not NULL but outputMask[0] is False", N(0));
    if (s2 && !values[1]) return invalid(c, "%s is not NULL but outputMask[1] is False", N(1));
    if (!values[0] && !values[1])
        return invalid(c, "outputMask[0] and outputMask[1] cannot both be False");
    p->mask_given = 1;
    p->out1 = values[0];
    p->out2 = values[1];
    return ACLNN_SUCCESS;
}

/* arnq_v2_not_null x1 x2 gamma xOut y1Out scale1Out y2Out scale2Out: B.4 row 4, the first four always, y_k and
 * scale_k when active. The vendor dereferences the inactive y2Out (and reads the inactive y shapes) too: NULL
 * there is refused as well, after the active ones. */
aclnnStatus opc_arnq_v2_not_null(op_call *c, const op_step *s) {
    const arnq_params *p = arnq_block(c);
    for (int pass = 0; pass < 2; pass++) {
        for (int k = 0; k < s->np; k++) {
            int active = k < 4 || (k < 6 ? p->out1 : p->out2);
            if (active != !pass || op_argument(c, s, k)->p != NULL) continue;
            pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, c->api,
                                pass ? "%s is NULL: pass a tensor (shape [1]) even for an inactive output, the "
                                       "operator reads it" : "%s is NULL", N(k));
            return ACLNN_ERR_PARAM_NULLPTR;
        }
    }
    return ACLNN_SUCCESS;
}

/* arnq_v2_outputs x1 y1Out y2Out: B.4 rows 7-9, the y dtypes and shapes; the L0 y dtype (INT32: packed INT4). */
aclnnStatus opc_arnq_v2_outputs(op_call *c, const op_step *s) {
    arnq_params *p = arnq_block(c);
    const pyaclnn_stub_tensor *x1 = T(0);
    const pyaclnn_stub_tensor *y[2] = {T(1), T(2)};
    int active[2] = {p->out1, p->out2};
    char b1[24], b2[24], s1[96], s2[96];
    if (p->out1 && p->out2 && y[0]->dtype != y[1]->dtype)
        return invalid(c, "y1 and y2 dtype must be same when both are active, got y1=%s, y2=%s",
                      op_dtype_name(y[0]->dtype, b1), op_dtype_name(y[1]->dtype, b2));
    aclDataType dtype = p->out1 ? y[0]->dtype : y[1]->dtype;
    p->y_dtype = dtype;
    if (dtype == ACL_INT32) {
        for (int k = 0; k < 2; k++)
            if (active[k] && (x1->ndim == 0 || y[k]->ndim == 0 || arnq_last_dim(x1) != 8 * arnq_last_dim(y[k])))
                return invalid(c, "for INT32 (packed int4) output, y%dOut last dim (%lld) must be 1/8 of x1 last dim "
                               "(%lld)", k + 1, (long long)arnq_last_dim(y[k]), (long long)arnq_last_dim(x1));
        for (int k = 0; k < 2; k++) {
            if (!active[k]) continue;
            int same = y[k]->ndim == x1->ndim;
            for (int64_t d = 0; same && d + 1 < x1->ndim; d++) same = y[k]->shape[d] == x1->shape[d];
            if (!same) /* ViewCopy of the packed result; not pinned down by the vendor */
                return report(c, ACLNN_ERR_INNER_NULLPTR, "y%dOut shape %s: its leading dims must be x1's %s for the "
                              "packed result to be copied into it (the vendor leaves this unchecked; the emulator "
                              "refuses)", k + 1, arnq_shape_str(y[k], s1, sizeof s1), arnq_shape_str(x1, s2, sizeof s2));
        }
        p->y_dtype = ACL_INT4;
        p->y_int32 = 1;
        return ACLNN_SUCCESS;
    }
    for (int k = 0; k < 2; k++)
        if (active[k] && !arnq_same_shape(y[k], x1))
            return report(c, ACLNN_ERR_INNER_TILING_ERROR, "y%d shape %s must be same as x1 %s", k + 1,
                          arnq_shape_str(y[k], s1, sizeof s1), arnq_shape_str(x1, s2, sizeof s2));
    return ACLNN_SUCCESS;
}
