/*
 * aclnnAddRmsNormDynamicQuant (V1): the op_api layer (hicann/ops-nn
 * norm/add_rms_norm_dynamic_quant/op_host/op_api/aclnn_add_rms_norm_dynamic_quant.cpp), validation
 * in the order of spec B.3, then the shared L0 op (arnq_l0.c).
 *
 * V1 has no beta and no outputMask: y1/scale1 are always produced, y2/scale2 only with both smooth
 * scales (B.2). Inactive outputs are left untouched (their content is unspecified, Q9).
 */
#include <stdio.h>
#include <string.h>

#include "aclnnop/aclnn_add_rms_norm_dynamic_quant.h"
#include "arnq.h"
#include "kernels/device.h"

static const char API[] = "aclnnAddRmsNormDynamicQuantGetWorkspaceSize";

static int is_x_type(aclDataType dt) { return dt == ACL_FLOAT16 || dt == ACL_BF16; }

static int is_v1_y_type(aclDataType dt) {
    return dt == ACL_FLOAT8_E4M3FN || dt == ACL_FLOAT8_E5M2 || dt == ACL_HIFLOAT8 || dt == ACL_INT8;
}

static aclnnStatus invalid_dtype(const char *name, aclDataType dt, const char *allowed) {
    char b[24];
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "%s dtype %s is not supported (%s)", name,
                        op_dtype_name(dt, b), allowed);
    return ACLNN_ERR_PARAM_INVALID;
}

/* B.3 row 2. */
static aclnnStatus check_dtypes(const arnq_call *c) {
    static const char *const X_NAMES[] = {"x1", "x2", "gamma", "smoothScale1Optional", "smoothScale2Optional"};
    const pyaclnn_stub_tensor *t = c->t;
    for (int i = ARNQ_X1; i <= ARNQ_SMOOTH2; i++)
        if (t[i].present && !is_x_type(t[i].dtype)) return invalid_dtype(X_NAMES[i], t[i].dtype, "FLOAT16, BFLOAT16");
    for (int k = 0; k < 2; k++) {
        const pyaclnn_stub_tensor *y = &t[ARNQ_OUT(ARNQ_Y1 + k)];
        if (!is_v1_y_type(y->dtype))
            return invalid_dtype(k ? "y2Out" : "y1Out", y->dtype, "FLOAT8_E4M3FN, FLOAT8_E5M2, HIFLOAT8, INT8");
    }
    if (t[ARNQ_OUT(ARNQ_Y1)].dtype != t[ARNQ_OUT(ARNQ_Y2)].dtype) {
        char b1[24], b2[24];
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "y1Out dtype %s and y2Out dtype %s must be the same",
                            op_dtype_name(t[ARNQ_OUT(ARNQ_Y1)].dtype, b1),
                            op_dtype_name(t[ARNQ_OUT(ARNQ_Y2)].dtype, b2));
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (!is_x_type(t[ARNQ_OUT(ARNQ_XOUT)].dtype))
        return invalid_dtype("xOut", t[ARNQ_OUT(ARNQ_XOUT)].dtype, "FLOAT16, BFLOAT16");
    for (int k = 0; k < 2; k++)
        if (t[ARNQ_OUT(ARNQ_SCALE1 + k)].dtype != ACL_FLOAT)
            return invalid_dtype(k ? "scale2Out" : "scale1Out", t[ARNQ_OUT(ARNQ_SCALE1 + k)].dtype, "FLOAT");
    return ACLNN_SUCCESS;
}

static aclnnStatus shape_error(const char *fmt, const pyaclnn_stub_tensor *a, const pyaclnn_stub_tensor *b) {
    char s1[96], s2[96];
    pyaclnn_stub_report(ACLNN_ERR_INNER_TILING_ERROR, API, fmt, arnq_shape_str(a, s1, sizeof s1),
                        b ? arnq_shape_str(b, s2, sizeof s2) : "");
    return ACLNN_ERR_INNER_TILING_ERROR;
}

/* B.3 row 3 (view shapes; 561002 although these are parameter errors). */
static aclnnStatus check_shapes(const arnq_call *c) {
    const pyaclnn_stub_tensor *x1 = &c->t[ARNQ_X1], *gamma = &c->t[ARNQ_GAMMA];
    if (!arnq_same_shape(x1, &c->t[ARNQ_X2])) return shape_error("x1 %s and x2 %s shape mismatch", x1, &c->t[ARNQ_X2]);
    if (gamma->ndim != 1) return shape_error("gamma %s shape dim num should be 1%s", gamma, NULL);
    if (x1->ndim == 0) /* the vendor would read dim -1 */
        return shape_error("x1 %s has rank 0: it needs a last dimension for gamma%s", x1, NULL);
    if (arnq_last_dim(x1) != gamma->shape[0])
        return shape_error("gamma shape %s isn't consistent with the last dimension of x1 %s", gamma, x1);
    for (int i = ARNQ_SMOOTH1; i <= ARNQ_SMOOTH2; i++)
        if (c->t[i].present && !arnq_same_shape(&c->t[i], gamma))
            return shape_error(i == ARNQ_SMOOTH1 ? "smoothScale1 shape %s mismatch with gamma %s"
                                                 : "smoothScale2 shape %s mismatch with gamma %s", &c->t[i], gamma);
    return ACLNN_SUCCESS;
}

aclnnStatus aclnnAddRmsNormDynamicQuantGetWorkspaceSize(const aclTensor *x1, const aclTensor *x2,
                                                        const aclTensor *gamma, const aclTensor *smoothScale1Optional,
                                                        const aclTensor *smoothScale2Optional, double epsilon,
                                                        aclTensor *y1Out, aclTensor *y2Out, aclTensor *xOut,
                                                        aclTensor *scale1Out, aclTensor *scale2Out,
                                                        uint64_t *workspaceSize, aclOpExecutor **executor) {
    static const char *const REQUIRED[] = {"x1", "x2", "gamma", "y1Out", "y2Out", "xOut", "scale1Out", "scale2Out"};
    arnq_call c;
    memset(&c, 0, sizeof c);
    c.api = API;
    c.version = 1;
    c.epsilon = epsilon;
    const aclTensor *handles[ARNQ_N_TENSORS] = {x1, x2, gamma, smoothScale1Optional, smoothScale2Optional, NULL,
                                                y1Out, y2Out, xOut, scale1Out, scale2Out};
    memcpy(c.handles, handles, sizeof handles);

    if (workspaceSize == NULL || executor == NULL) { /* the vendor would write through them */
        pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, API, "%s is NULL", workspaceSize ? "executor" : "workspaceSize");
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    /* B.3 row 1: the required tensors, in this order */
    const aclTensor *required[] = {x1, x2, gamma, y1Out, y2Out, xOut, scale1Out, scale2Out};
    for (int i = 0; i < 8; i++) {
        if (required[i] == NULL) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, API, "%s is NULL", REQUIRED[i]);
            return ACLNN_ERR_PARAM_NULLPTR;
        }
    }
    aclnnStatus rc = arnq_snapshot_all(&c);
    if (rc == ACLNN_SUCCESS) rc = check_dtypes(&c);
    if (rc == ACLNN_SUCCESS) rc = check_shapes(&c);
    if (rc != ACLNN_SUCCESS) return rc;

    /* B.3 row 4 / B.11: empty x1, gamma or y2Out -> success, nothing computed or written */
    if (arnq_is_empty(&c.t[ARNQ_X1]) || arnq_is_empty(&c.t[ARNQ_GAMMA]) || arnq_is_empty(&c.t[ARNQ_OUT(ARNQ_Y2)]))
        return arnq_empty_success(API, workspaceSize, executor);

    c.out1 = 1;
    c.out2 = c.t[ARNQ_SMOOTH1].present && c.t[ARNQ_SMOOTH2].present;
    c.dst = c.t[ARNQ_OUT(ARNQ_Y1)].dtype;

    /* The L0 result (x1's shape) is ViewCopied into y1Out / y2Out. The vendor does not check their
     * shapes and the outcome of a mismatch is not pinned down: the emulator refuses. */
    for (int k = 0; k < 2; k++) {
        const pyaclnn_stub_tensor *y = &c.t[ARNQ_OUT(ARNQ_Y1 + k)];
        if ((k ? c.out2 : c.out1) && !arnq_same_shape(y, &c.t[ARNQ_X1])) {
            char s1[96], s2[96];
            pyaclnn_stub_report(ACLNN_ERR_INNER_NULLPTR, API,
                                "y%dOut shape %s differs from x1 %s: the result cannot be copied into it (the vendor "
                                "leaves this unchecked; the emulator refuses)", k + 1,
                                arnq_shape_str(y, s1, sizeof s1), arnq_shape_str(&c.t[ARNQ_X1], s2, sizeof s2));
            return ACLNN_ERR_INNER_NULLPTR;
        }
    }

    char why[240];
    if (arnq_options_read(&c.opt, why, sizeof why)) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "%s", why);
        return ACLNN_ERR_PARAM_INVALID;
    }
    return arnq_l0_run(&c, workspaceSize, executor);
}

aclnnStatus aclnnAddRmsNormDynamicQuant(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                        aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnAddRmsNormDynamicQuant", workspace, workspaceSize, executor, stream);
}
