/*
 * aclnnDiv / Divs / InplaceDiv / InplaceDivs: true division (integer inputs compute in FLOAT), and
 * aclnnDivMod / DivMods / InplaceDivMod / InplaceDivMods with mode 0 (true division), 1 (quotient
 * rounded toward zero) or 2 (toward -inf) (hicann/ops-math math/div/op_api/aclnn_div.cpp).
 * Float division is IEEE and correctly rounded (the kernel's DivHighPrecision; fp16/bf16 through
 * fp32 and one RINT cast). Validation and promotion: elementwise/ew_binary.c.
 */
#include "aclnnop/aclnn_div.h"
#include "opbase/binary.h"
#include "aclnn/opdev/op_errno.h"
#include "pyaclnn_stub.h"

/* 161002 for a mode other than 0, 1, 2; otherwise the opcode. */
static aclnnStatus mode_op(const char *api, int mode, ew_opcode *op) {
    switch (mode) {
    case 0: *op = EW_OP_DIV; return ACLNN_SUCCESS;
    case 1: *op = EW_OP_DIV_TRUNC; return ACLNN_SUCCESS;
    case 2: *op = EW_OP_DIV_FLOOR; return ACLNN_SUCCESS;
    default:
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "mode %d is not supported (0: true division, 1: toward "
                            "zero, 2: toward -inf)", mode);
        return ACLNN_ERR_PARAM_INVALID;
    }
}

static aclnnStatus div_call(const char *api, const char *name, ew_opcode op, const aclTensor *self,
                            const aclTensor *other, const aclScalar *other_scalar, const aclTensor *out, int inplace,
                            uint64_t *workspaceSize, aclOpExecutor **executor) {
    ew_binary_call c = {api, name, op, self, other, other_scalar, 0, NULL, out, inplace};
    return ew_binary_phase1(&c, workspaceSize, executor);
}

aclnnStatus aclnnDivGetWorkspaceSize(const aclTensor *self, const aclTensor *other, aclTensor *out,
                                     uint64_t *workspaceSize, aclOpExecutor **executor) {
    return div_call("aclnnDivGetWorkspaceSize", "Div", EW_OP_DIV, self, other, NULL, out, 0, workspaceSize, executor);
}

aclnnStatus aclnnDivsGetWorkspaceSize(const aclTensor *self, const aclScalar *other, aclTensor *out,
                                      uint64_t *workspaceSize, aclOpExecutor **executor) {
    return div_call("aclnnDivsGetWorkspaceSize", "Divs", EW_OP_DIV, self, NULL, other, out, 0, workspaceSize,
                    executor);
}

aclnnStatus aclnnInplaceDivGetWorkspaceSize(aclTensor *selfRef, const aclTensor *other, uint64_t *workspaceSize,
                                            aclOpExecutor **executor) {
    return div_call("aclnnInplaceDivGetWorkspaceSize", "InplaceDiv", EW_OP_DIV, selfRef, other, NULL, selfRef, 1,
                    workspaceSize, executor);
}

aclnnStatus aclnnInplaceDivsGetWorkspaceSize(aclTensor *selfRef, const aclScalar *other, uint64_t *workspaceSize,
                                             aclOpExecutor **executor) {
    return div_call("aclnnInplaceDivsGetWorkspaceSize", "InplaceDivs", EW_OP_DIV, selfRef, NULL, other, selfRef, 1,
                    workspaceSize, executor);
}

#define DIVMOD(API, NAME, SELF, OTHER, OSCALAR, OUT, INPLACE)                                               \
    ew_opcode op;                                                                                           \
    aclnnStatus rc = mode_op(API, mode, &op);                                                               \
    if (rc != ACLNN_SUCCESS) return rc;                                                                     \
    return div_call(API, NAME, op, SELF, OTHER, OSCALAR, OUT, INPLACE, workspaceSize, executor)

aclnnStatus aclnnDivModGetWorkspaceSize(const aclTensor *self, const aclTensor *other, int mode, aclTensor *out,
                                        uint64_t *workspaceSize, aclOpExecutor **executor) {
    DIVMOD("aclnnDivModGetWorkspaceSize", "DivMod", self, other, NULL, out, 0);
}

aclnnStatus aclnnDivModsGetWorkspaceSize(const aclTensor *self, const aclScalar *other, int mode, aclTensor *out,
                                         uint64_t *workspaceSize, aclOpExecutor **executor) {
    DIVMOD("aclnnDivModsGetWorkspaceSize", "DivMods", self, NULL, other, out, 0);
}

aclnnStatus aclnnInplaceDivModGetWorkspaceSize(aclTensor *selfRef, const aclTensor *other, int mode,
                                               uint64_t *workspaceSize, aclOpExecutor **executor) {
    DIVMOD("aclnnInplaceDivModGetWorkspaceSize", "InplaceDivMod", selfRef, other, NULL, selfRef, 1);
}

aclnnStatus aclnnInplaceDivModsGetWorkspaceSize(aclTensor *selfRef, const aclScalar *other, int mode,
                                                uint64_t *workspaceSize, aclOpExecutor **executor) {
    DIVMOD("aclnnInplaceDivModsGetWorkspaceSize", "InplaceDivMods", selfRef, NULL, other, selfRef, 1);
}

aclnnStatus aclnnDiv(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnDiv", workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnDivs(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnDivs", workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnInplaceDiv(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnInplaceDiv", workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnInplaceDivs(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnInplaceDivs", workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnDivMod(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnDivMod", workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnDivMods(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnDivMods", workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnInplaceDivMod(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnInplaceDivMod", workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnInplaceDivMods(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnInplaceDivMods", workspace, workspaceSize, executor, stream);
}
