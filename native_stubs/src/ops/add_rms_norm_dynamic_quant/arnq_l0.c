/*
 * The L0 op AddRmsNormDynamicQuant shared by both op_api versions, as the last steps of their definitions:
 * the emulator's options (arnq_options), then kernel selection and tiling checks (B.5), template choice
 * (B.8.1 / B.9.1), workspace (B.13) and the executor (arnq_l0).
 *
 * Where a rejection surfaces (open question Q8, corrections box 1): the vendor's L0 wrapper drops the
 * launcher's status, so GetWorkspaceSize returns 0 and the run fails with 561103 (default here). With
 * PYACLNN_STUB_ARNQ_TILING_REJECT=phase1 GetWorkspaceSize returns the documented 561002 instead.
 */
#include <stdio.h>
#include <string.h>

#include "arnq.h"
#include "kernels/device.h"
#include "opbase/checks.h"
#include "ops_decls.h"

/* arnq_options: the PYACLNN_STUB_ARNQ_* switches (arnq_options.c, read once per process); 161002 for a value
 * they do not know. */
aclnnStatus opc_arnq_options(op_call *c, const op_step *s) {
    (void)s;
    char why[240];
    if (arnq_options_read(&arnq_block(c)->opt, why, sizeof why)) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "%s", why);
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

/* What the L0 op's checks see: the executor's tensors in kernel order (the definition's inputs and outputs; an
 * absent one, or a slot the operator lacks, as present = 0) and what the op_api steps decided. */
static void l0_call(const op_call *c, const arnq_params *p, double epsilon, arnq_call *call) {
    const op_def *d = c->def;
    memset(call, 0, sizeof *call);
    for (int k = 0; k < ARNQ_N_TENSORS; k++) {
        int i = k < ARNQ_N_INPUTS ? d->inputs[k] : d->outputs[k - ARNQ_N_INPUTS];
        if (i >= 0 && c->t[i].present) call->t[k] = c->t[i];
    }
    call->epsilon = epsilon;
    call->has_mask = p->mask_given;
    call->out1 = p->out1;
    call->out2 = p->out2;
    call->dst = p->y_dtype;
    call->y_int32 = p->y_int32;
    call->opt = p->opt;
}

/* A kernel-selection / tiling rejection: reported now (561002), or deferred to phase 2 (561103) on an executor
 * that runs nothing, has no parameters and asks for no workspace. */
static aclnnStatus reject(op_call *c, const char *why) {
    if (arnq_block(c)->opt.reject_in_phase1) {
        pyaclnn_stub_report(ACLNN_ERR_INNER_TILING_ERROR, c->api, "%s tiling failed: %s", ARNQ_OP_NAME, why);
        return ACLNN_ERR_INNER_TILING_ERROR;
    }
    return op_defer_to_run(c, ACLNN_ERR_INNER_NULLPTR, "%s kernel selection / tiling failed: %s", ARNQ_OP_NAME, why);
}

/* arnq_l0 epsilon: the L0 op -- its checks on this SoC family, then the template, the kernel's parameters and the
 * workspace (arnq_kernel runs unless there are no rows). */
aclnnStatus opc_arnq_l0(op_call *c, const op_step *s) {
    char why[400];
    arnq_params *p = arnq_block(c);
    arnq_call call;
    l0_call(c, p, op_argument(c, s, 0)->d, &call);
    pyaclnn_soc_family soc = pyaclnn_stub_soc_family();
    if (soc == PYACLNN_SOC_OTHER) {
        const char *name = aclrtGetSocName();
        snprintf(why, sizeof why, "no kernel for SoC %s (supported: Atlas A2/A3 Ascend910B*, Ascend910_93*, and "
                 "Ascend950*)", name ? name : "(unknown)");
        return reject(c, why);
    }
    if ((soc == PYACLNN_SOC_A2 ? arnq_check_a2 : arnq_check_950)(&call, why, sizeof why)) return reject(c, why);

    const pyaclnn_stub_tensor *t = call.t;
    p->soc = soc;
    p->x_dtype = t[ARNQ_X1].dtype;
    p->n = t[ARNQ_GAMMA].shape[0];
    p->m = 1;
    for (int64_t k = 0; k + 1 < t[ARNQ_X1].ndim; k++) p->m *= t[ARNQ_X1].shape[k];
    p->eps = (float)call.epsilon;
    if (soc == PYACLNN_SOC_A2) {
        /* the 910B kernel only sees optional inputs that are not empty */
        p->has_smooth1 = t[ARNQ_SMOOTH1].present && pyaclnn_stub_numel(&t[ARNQ_SMOOTH1]) > 0;
        p->has_smooth2 = t[ARNQ_SMOOTH2].present && pyaclnn_stub_numel(&t[ARNQ_SMOOTH2]) > 0;
        p->has_beta = t[ARNQ_BETA].present && pyaclnn_stub_numel(&t[ARNQ_BETA]) > 0;
        p->avg = (float)(1.0 / (double)(float)p->n); /* double 1.0 / float N, stored as float */
        p->tmpl = arnq_select_a2(p->n, p->y_dtype == ACL_INT4, p->has_beta);
        p->slice_len = arnq_a2_slice_len(p->y_dtype == ACL_INT4);
    } else {
        p->has_smooth1 = t[ARNQ_SMOOTH1].present;
        p->has_smooth2 = t[ARNQ_SMOOTH2].present;
        p->has_beta = t[ARNQ_BETA].present;
        p->avg = p->n ? 1.0f / (float)p->n : 0.0f;
        if (arnq_select_950(p->n, p->m, p->out1, p->out2, p->has_smooth1 + p->has_smooth2, p->has_beta,
                            p->opt.ub_950, &p->tmpl)) {
            snprintf(why, sizeof why, "no template fits a unified buffer of %lld bytes", (long long)p->opt.ub_950);
            return reject(c, why);
        }
        if (p->tmpl == ARNQ_950_SPLIT) {
            p->split_chunk = arnq_split_chunk(p->out1, p->out2, p->has_smooth1 + p->has_smooth2, p->has_beta,
                                              p->opt.ub_950);
            p->split_loop = arnq_split_loop(p->n, p->split_chunk);
        }
    }
    c->workspace = arnq_workspace_size(p);
    c->nothing = !(p->m > 0);
    return ACLNN_SUCCESS;
}
