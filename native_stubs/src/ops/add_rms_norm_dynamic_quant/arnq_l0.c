/*
 * The L0 op AddRmsNormDynamicQuant shared by both op_api versions: kernel selection and tiling
 * checks (B.5), template choice (B.8.1 / B.9.1), workspace (B.13) and the executor.
 *
 * Where a rejection surfaces (open question Q8, corrections box 1): the vendor's L0 wrapper drops the
 * launcher's status, so GetWorkspaceSize returns 0 and the run fails with 561103 (default here). With
 * PYACLNN_STUB_ARNQ_TILING_REJECT=phase1 GetWorkspaceSize returns the documented 561002 instead.
 */
#include <stdio.h>
#include <string.h>

#include "opbase/checks.h"
#include "arnq.h"
#include "kernels/device.h"

/* ---- phase-1 helpers ------------------------------------------------------------------------ */

aclnnStatus arnq_snapshot_all(arnq_call *call) {
    static const char *const NAMES[ARNQ_N_TENSORS] = {
        "x1", "x2", "gamma", "smoothScale1Optional", "smoothScale2Optional", "betaOptional",
        "y1Out", "y2Out", "xOut", "scale1Out", "scale2Out"};
    for (int i = 0; i < ARNQ_N_TENSORS; i++) {
        memset(&call->t[i], 0, sizeof call->t[i]);
        if (call->handles[i] == NULL) continue;
        aclnnStatus rc = op_tensor_arg(call->api, NAMES[i], call->handles[i], &call->t[i]);
        if (rc != ACLNN_SUCCESS) return rc;
    }
    return ACLNN_SUCCESS;
}

int arnq_same_shape(const pyaclnn_stub_tensor *a, const pyaclnn_stub_tensor *b) {
    if (a->ndim != b->ndim) return 0;
    for (int64_t k = 0; k < a->ndim; k++)
        if (a->shape[k] != b->shape[k]) return 0;
    return 1;
}

int arnq_is_empty(const pyaclnn_stub_tensor *t) { return t->present && pyaclnn_stub_numel(t) == 0; }

int64_t arnq_last_dim(const pyaclnn_stub_tensor *t) { return t->ndim ? t->shape[t->ndim - 1] : -1; }

const char *arnq_shape_str(const pyaclnn_stub_tensor *t, char *buf, size_t size) {
    size_t used = (size_t)snprintf(buf, size, "[");
    for (int64_t k = 0; k < t->ndim && used < size; k++)
        used += (size_t)snprintf(buf + used, size - used, "%s%lld", k ? ", " : "", (long long)t->shape[k]);
    if (used < size) snprintf(buf + used, size - used, "]");
    return buf;
}

aclnnStatus arnq_empty_success(const char *api, uint64_t *workspaceSize, aclOpExecutor **executor) {
    aclOpExecutor *e = pyaclnn_stub_executor_new(ARNQ_OP_NAME, NULL, NULL, 0, NULL, 0, NULL, 0, 0);
    if (e == NULL) {
        pyaclnn_stub_report(ACLNN_ERR_INNER_CREATE_EXECUTOR, api, "could not create the executor (out of memory)");
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    }
    *workspaceSize = 0;
    *executor = e;
    return ACLNN_SUCCESS;
}

/* ---- the L0 op ------------------------------------------------------------------------------ */

static aclnnStatus new_executor(const arnq_call *call, pyaclnn_stub_kernel_fn kernel, const arnq_params *p,
                                uint64_t workspace, aclOpExecutor **out) {
    *out = pyaclnn_stub_executor_new(ARNQ_OP_NAME, kernel, p, p ? sizeof *p : 0, call->handles, ARNQ_N_INPUTS,
                                     call->handles + ARNQ_N_INPUTS, ARNQ_N_OUTPUTS, workspace);
    if (*out == NULL) {
        pyaclnn_stub_report(ACLNN_ERR_INNER_CREATE_EXECUTOR, call->api,
                            "could not create the executor (out of memory)");
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    }
    return ACLNN_SUCCESS;
}

/* A kernel-selection / tiling rejection: deferred to phase 2 (561103) or reported now (561002). */
static aclnnStatus reject(const arnq_call *call, const char *why, uint64_t *workspaceSize, aclOpExecutor **executor) {
    if (call->opt.reject_in_phase1) {
        pyaclnn_stub_report(ACLNN_ERR_INNER_TILING_ERROR, call->api, "%s tiling failed: %s", ARNQ_OP_NAME, why);
        return ACLNN_ERR_INNER_TILING_ERROR;
    }
    aclOpExecutor *e;
    aclnnStatus rc = new_executor(call, NULL, NULL, 0, &e);
    if (rc != ACLNN_SUCCESS) return rc;
    pyaclnn_stub_executor_defer_error(e, ACLNN_ERR_INNER_NULLPTR, "%s kernel selection / tiling failed: %s",
                                      ARNQ_OP_NAME, why);
    *workspaceSize = 0;
    *executor = e;
    return ACLNN_SUCCESS;
}

aclnnStatus arnq_l0_run(const arnq_call *call, uint64_t *workspaceSize, aclOpExecutor **executor) {
    char why[400];
    pyaclnn_soc_family soc = pyaclnn_stub_soc_family();
    if (soc == PYACLNN_SOC_OTHER) {
        const char *name = aclrtGetSocName();
        snprintf(why, sizeof why, "no kernel for SoC %s (supported: Atlas A2/A3 Ascend910B*, Ascend910_93*, and "
                 "Ascend950*)", name ? name : "(unknown)");
        return reject(call, why, workspaceSize, executor);
    }
    if ((soc == PYACLNN_SOC_A2 ? arnq_check_a2 : arnq_check_950)(call, why, sizeof why))
        return reject(call, why, workspaceSize, executor);

    const pyaclnn_stub_tensor *t = call->t;
    arnq_params p;
    memset(&p, 0, sizeof p);
    p.soc = soc;
    p.x_dtype = t[ARNQ_X1].dtype;
    p.y_dtype = call->dst;
    p.y_int32 = call->y_int32;
    p.out1 = call->out1;
    p.out2 = call->out2;
    p.mask_given = call->has_mask;
    p.n = t[ARNQ_GAMMA].shape[0];
    p.m = 1;
    for (int64_t k = 0; k + 1 < t[ARNQ_X1].ndim; k++) p.m *= t[ARNQ_X1].shape[k];
    p.eps = (float)call->epsilon;
    p.opt = call->opt;
    if (soc == PYACLNN_SOC_A2) {
        /* the 910B kernel only sees optional inputs that are not empty */
        p.has_smooth1 = t[ARNQ_SMOOTH1].present && pyaclnn_stub_numel(&t[ARNQ_SMOOTH1]) > 0;
        p.has_smooth2 = t[ARNQ_SMOOTH2].present && pyaclnn_stub_numel(&t[ARNQ_SMOOTH2]) > 0;
        p.has_beta = t[ARNQ_BETA].present && pyaclnn_stub_numel(&t[ARNQ_BETA]) > 0;
        p.avg = (float)(1.0 / (double)(float)p.n); /* double 1.0 / float N, stored as float */
        p.tmpl = arnq_select_a2(p.n, p.y_dtype == ACL_INT4, p.has_beta);
        p.slice_len = arnq_a2_slice_len(p.y_dtype == ACL_INT4);
    } else {
        p.has_smooth1 = t[ARNQ_SMOOTH1].present;
        p.has_smooth2 = t[ARNQ_SMOOTH2].present;
        p.has_beta = t[ARNQ_BETA].present;
        p.avg = p.n ? 1.0f / (float)p.n : 0.0f;
        if (arnq_select_950(p.n, p.m, p.out1, p.out2, p.has_smooth1 + p.has_smooth2, p.has_beta, p.opt.ub_950,
                            &p.tmpl)) {
            snprintf(why, sizeof why, "no template fits a unified buffer of %lld bytes", (long long)p.opt.ub_950);
            return reject(call, why, workspaceSize, executor);
        }
        if (p.tmpl == ARNQ_950_SPLIT) {
            p.split_chunk = arnq_split_chunk(p.out1, p.out2, p.has_smooth1 + p.has_smooth2, p.has_beta, p.opt.ub_950);
            p.split_loop = arnq_split_loop(p.n, p.split_chunk);
        }
    }
    uint64_t workspace = arnq_workspace_size(&p);
    aclOpExecutor *e;
    aclnnStatus rc = new_executor(call, p.m > 0 ? arnq_kernel : NULL, &p, workspace, &e);
    if (rc != ACLNN_SUCCESS) return rc;
    *workspaceSize = workspace;
    *executor = e;
    return ACLNN_SUCCESS;
}
