/*
 * Phase 1 of the binary arithmetic operators (Add/Sub/Mul/Div and their scalar and in-place
 * forms), following the vendor's op_api (hicann/ops-math math/{add,sub,mul,div}/op_api):
 *   1. every pointer argument non-NULL                                         -> 161001
 *   2. in-place forms: broadcast(selfRef, other) must be selfRef's shape        -> 161002
 *   3. self (and other) dtype in the SoC's support list                         -> 161002
 *   4. promoteType defined; alpha castable to it; promoteType castable to out   -> 161002
 *   5. at most 8 dimensions; shapes broadcast; out has the broadcast shape      -> 161002
 * then the compute dtype (promoteType; the scalar forms use the vendor's scalar rules) and, for
 * Add/Sub, the kernel alpha selects (see ew_alpha). Empty inputs give an executor that does nothing.
 */
#ifndef PYACLNN_EW_BINARY_H
#define PYACLNN_EW_BINARY_H

#include "aclnn/aclnn_base.h"
#include "kernels/elementwise.h"

typedef struct {
    const char *api;             /* "aclnnAddGetWorkspaceSize" ...                          */
    const char *op_name;         /* "Add" ... (executor name, messages)                     */
    ew_opcode op;                /* ADD SUB MUL DIV DIV_TRUNC DIV_FLOOR                      */
    const aclTensor *self;
    const aclTensor *other;      /* tensor second operand, or NULL when other_scalar is used */
    const aclScalar *other_scalar;
    int has_alpha;               /* the signature takes alpha (Add/Sub families)             */
    const aclScalar *alpha;
    const aclTensor *out;        /* == self for the in-place forms                           */
    int inplace;
} ew_binary_call;

aclnnStatus ew_binary_phase1(const ew_binary_call *call, uint64_t *workspaceSize, aclOpExecutor **executor);

#endif
