/*
 * aclnnAddRmsNormDynamicQuantV2: the op_api layer (hicann/ops-nn
 * norm/add_rms_norm_dynamic_quant/op_host/op_api/aclnn_add_rms_norm_dynamic_quant_v2.cpp), validation
 * in the order of spec B.4, then the shared L0 op (arnq_l0.c).
 *
 * V2 adds betaOptional and outputMaskOptional ([produce y1/scale1, produce y2/scale2]); an INT32 y is
 * the packed-INT4 result seen as little-endian words (8 elements per word, B.10). V2 has no dtype
 * whitelist of its own: unsupported dtypes are refused by kernel selection (phase 2).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "aclnnop/aclnn_add_rms_norm_dynamic_quant_v2.h"
#include "arnq.h"
#include "kernels/device.h"

static const char API[] = "aclnnAddRmsNormDynamicQuantV2GetWorkspaceSize";

static aclnnStatus invalid(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static aclnnStatus invalid(const char *fmt, ...) {
    char msg[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "%s", msg);
    return ACLNN_ERR_PARAM_INVALID;
}

/* B.4 rows 1-3: which outputs are active (CheckFlag). */
static aclnnStatus output_flags(arnq_call *c, const aclBoolArray *mask) {
    int s1 = c->handles[ARNQ_SMOOTH1] != NULL, s2 = c->handles[ARNQ_SMOOTH2] != NULL;
    const bool *values = NULL;
    uint64_t n = 0;
    if (pyaclnn_stub_bool_array_get(mask, &values, &n) != ACLNN_SUCCESS)
        return invalid("outputMaskOptional (%p) is not a live aclBoolArray", (const void *)mask);
    if (mask == NULL) {
        if (s2 && !s1)
            return invalid("when outputMask is unavailable, smoothScale2Optional is not supported without "
                           "smoothScale1Optional");
        c->out1 = 1;
        c->out2 = s1 && s2;
        return ACLNN_SUCCESS;
    }
    if (n != 2) return invalid("the length of outputMask must be 2, but got %llu", (unsigned long long)n);
    if (s1 && !values[0]) return invalid("smoothScale1Optional is not NULL but outputMask[0] is False");
    if (s2 && !values[1]) return invalid("smoothScale2Optional is not NULL but outputMask[1] is False");
    if (!values[0] && !values[1]) return invalid("outputMask[0] and outputMask[1] cannot both be False");
    c->has_mask = 1;
    c->out1 = values[0];
    c->out2 = values[1];
    return ACLNN_SUCCESS;
}

/* B.4 row 4: x1, x2, gamma, xOut always; y_k and scale_k when active. The vendor dereferences the
 * inactive y2Out (and reads the inactive y shapes) too: NULL there is refused as well. */
static aclnnStatus check_not_null(const arnq_call *c) {
    static const struct {
        int slot;
        const char *name;
    } ORDER[] = {{ARNQ_X1, "x1"}, {ARNQ_X2, "x2"}, {ARNQ_GAMMA, "gamma"}, {ARNQ_OUT(ARNQ_XOUT), "xOut"},
                 {ARNQ_OUT(ARNQ_Y1), "y1Out"}, {ARNQ_OUT(ARNQ_SCALE1), "scale1Out"},
                 {ARNQ_OUT(ARNQ_Y2), "y2Out"}, {ARNQ_OUT(ARNQ_SCALE2), "scale2Out"}};
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < 8; i++) {
            int active = i < 4 || (i < 6 ? c->out1 : c->out2);
            if (active != !pass || c->handles[ORDER[i].slot] != NULL) continue;
            pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, API,
                                pass ? "%s is NULL: pass a tensor (shape [1]) even for an inactive output, the "
                                       "operator reads it" : "%s is NULL", ORDER[i].name);
            return ACLNN_ERR_PARAM_NULLPTR;
        }
    }
    return ACLNN_SUCCESS;
}

/* B.4 rows 7-9: y dtypes and shapes; sets the L0 dst dtype. */
static aclnnStatus check_outputs(arnq_call *c) {
    const pyaclnn_stub_tensor *x1 = &c->t[ARNQ_X1];
    const pyaclnn_stub_tensor *y[2] = {&c->t[ARNQ_OUT(ARNQ_Y1)], &c->t[ARNQ_OUT(ARNQ_Y2)]};
    int active[2] = {c->out1, c->out2};
    char b1[24], b2[24], s1[96], s2[96];
    if (c->out1 && c->out2 && y[0]->dtype != y[1]->dtype)
        return invalid("y1 and y2 dtype must be same when both are active, got y1=%s, y2=%s",
                       op_dtype_name(y[0]->dtype, b1), op_dtype_name(y[1]->dtype, b2));
    aclDataType dtype = c->out1 ? y[0]->dtype : y[1]->dtype;
    c->dst = dtype;
    if (dtype == ACL_INT32) {
        for (int k = 0; k < 2; k++)
            if (active[k] && (x1->ndim == 0 || y[k]->ndim == 0 || arnq_last_dim(x1) != 8 * arnq_last_dim(y[k])))
                return invalid("for INT32 (packed int4) output, y%dOut last dim (%lld) must be 1/8 of x1 last "
                               "dim (%lld)", k + 1, (long long)arnq_last_dim(y[k]), (long long)arnq_last_dim(x1));
        for (int k = 0; k < 2; k++) {
            if (!active[k]) continue;
            int same = y[k]->ndim == x1->ndim;
            for (int64_t d = 0; same && d + 1 < x1->ndim; d++) same = y[k]->shape[d] == x1->shape[d];
            if (!same) { /* ViewCopy of the packed result; not pinned down by the vendor */
                pyaclnn_stub_report(ACLNN_ERR_INNER_NULLPTR, API,
                                    "y%dOut shape %s: its leading dims must be x1's %s for the packed result to be "
                                    "copied into it (the vendor leaves this unchecked; the emulator refuses)", k + 1,
                                    arnq_shape_str(y[k], s1, sizeof s1), arnq_shape_str(x1, s2, sizeof s2));
                return ACLNN_ERR_INNER_NULLPTR;
            }
        }
        c->dst = ACL_INT4;
        c->y_int32 = 1;
        return ACLNN_SUCCESS;
    }
    for (int k = 0; k < 2; k++) {
        if (active[k] && !arnq_same_shape(y[k], x1)) {
            pyaclnn_stub_report(ACLNN_ERR_INNER_TILING_ERROR, API, "y%d shape %s must be same as x1 %s", k + 1,
                                arnq_shape_str(y[k], s1, sizeof s1), arnq_shape_str(x1, s2, sizeof s2));
            return ACLNN_ERR_INNER_TILING_ERROR;
        }
    }
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnAddRmsNormDynamicQuantV2GetWorkspaceSize(const aclTensor *x1, const aclTensor *x2,
                                                          const aclTensor *gamma,
                                                          const aclTensor *smoothScale1Optional,
                                                          const aclTensor *smoothScale2Optional,
                                                          const aclTensor *betaOptional, double epsilon,
                                                          const aclBoolArray *outputMask, aclTensor *y1Out,
                                                          aclTensor *y2Out, aclTensor *xOut, aclTensor *scale1Out,
                                                          aclTensor *scale2Out, uint64_t *workspaceSize,
                                                          aclOpExecutor **executor) {
    arnq_call c;
    memset(&c, 0, sizeof c);
    c.api = API;
    c.version = 2;
    c.epsilon = epsilon;
    const aclTensor *handles[ARNQ_N_TENSORS] = {x1, x2, gamma, smoothScale1Optional, smoothScale2Optional,
                                                betaOptional, y1Out, y2Out, xOut, scale1Out, scale2Out};
    memcpy(c.handles, handles, sizeof handles);

    if (workspaceSize == NULL || executor == NULL) { /* the vendor would write through them */
        pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, API, "%s is NULL", workspaceSize ? "executor" : "workspaceSize");
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    aclnnStatus rc = output_flags(&c, outputMask);
    if (rc == ACLNN_SUCCESS) rc = check_not_null(&c);
    if (rc == ACLNN_SUCCESS) rc = arnq_snapshot_all(&c);
    if (rc != ACLNN_SUCCESS) return rc;

    /* B.4 row 5 / B.11: empty tensors return at once, except an empty gamma on Ascend 950, which goes
     * on to the kernel's reduce-empty template (-inf scales). */
    int regbase = pyaclnn_stub_soc_family() == PYACLNN_SOC_950;
    if (!(regbase && arnq_is_empty(&c.t[ARNQ_GAMMA]))) {
        if (arnq_is_empty(&c.t[ARNQ_X1]) || arnq_is_empty(&c.t[ARNQ_X2]) || arnq_is_empty(&c.t[ARNQ_GAMMA]) ||
            arnq_is_empty(&c.t[ARNQ_OUT(ARNQ_Y2)]))
            return arnq_empty_success(API, workspaceSize, executor);
    }
    rc = check_outputs(&c);
    if (rc != ACLNN_SUCCESS) return rc;

    char why[240];
    if (arnq_options_read(&c.opt, why, sizeof why)) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "%s", why);
        return ACLNN_ERR_PARAM_INVALID;
    }
    return arnq_l0_run(&c, workspaceSize, executor);
}

aclnnStatus aclnnAddRmsNormDynamicQuantV2(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                          aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnAddRmsNormDynamicQuantV2", workspace, workspaceSize, executor, stream);
}
