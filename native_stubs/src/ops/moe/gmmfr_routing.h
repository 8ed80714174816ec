/*
 * The finalize-routing pieces every GroupedMatmulFinalizeRouting kernel shares (gmm_finalize_routing_nz.c, the A8W8
 * NZ kernel; gmm_finalize_routing_mx.c, the Ascend 950's MX one): the token counts and row indices a launch may
 * touch, the prologue (out = 0, the shared input's rows scaled) and the row index of a token; and the op_api's rank
 * check, which the ND entries (gmm_finalize_routing.c) run too.
 */
#ifndef PYACLNN_OPS_MOE_GMMFR_ROUTING_H
#define PYACLNN_OPS_MOE_GMMFR_ROUTING_H

#include <stdint.h>
#include <string.h>

#include "internal/pyaclnn_stub.h"
#include "opbase/checks.h"
#include "opbase/opbase.h"

#define GMMFR_TRY(e)                          \
    do {                                      \
        aclnnStatus st_ = (e);                \
        if (st_ != ACLNN_SUCCESS) return st_; \
    } while (0)

/* a given operand with no elements (the op_api's empty-tensor checks) */
static inline int gmmfr_empty(const pyaclnn_stub_tensor *t) { return t->present && pyaclnn_stub_numel(t) == 0; }

/* OP_CHECK_WRONG_DIMENSION (absent optional operands pass; the vendor's message names the expression): in
 * gmm_finalize_routing.c */
aclnnStatus gmmfr_rank(op_call *c, const char *name, const pyaclnn_stub_tensor *t, int64_t want);

/* The op_api's one CheckShape, as the ND A8W4 entries (gmm_finalize_routing_a8w4.c) and the NZ ones
 * (gmm_finalize_routing_nz.c) both run it, in gmm_finalize_routing.c: out 2-D of at most M rows (*bs) and N columns,
 * sharedInputOffset >= 0, groupListType 1; */
aclnnStatus gmmfr_check_out(op_call *c, const pyaclnn_stub_tensor *out, int64_t M, int64_t N, int64_t shared_offset,
                            int64_t list_type, int64_t *bs);
/* and, after the entry's own scale rules, CheckDimValue's routing operands (absent optional ones pass) and the
 * shared input's rows within out. */
aclnnStatus gmmfr_check_routing(op_call *c, const pyaclnn_stub_tensor *pt, const pyaclnn_stub_tensor *gl,
                                const pyaclnn_stub_tensor *shared, const pyaclnn_stub_tensor *logit,
                                const pyaclnn_stub_tensor *row, int64_t M, int64_t E, int64_t N, int64_t bs,
                                int64_t shared_offset);

static inline int64_t gmmfr_row(const unsigned char *rows, aclDataType dt, int64_t m) {
    return dt == ACL_INT32 ? ((const int32_t *)rows)[m] : ((const int64_t *)rows)[m];
}

/* Every expert's token count and every row index inside what the kernel may touch (m tokens, e experts, batch rows
 * of out); else records a device fault and returns 0. */
static inline int gmmfr_indices_ok(int64_t e, int64_t m, int64_t batch, const int64_t *counts,
                                   const unsigned char *rows, aclDataType row_dt) {
    int64_t total = 0;
    for (int64_t i = 0; i < e; i++) {
        if (counts[i] < 0 || counts[i] > m - total) {
            pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "GroupedMatmulFinalizeRouting: groupList[%lld] = "
                                   "%lld takes the tokens past x1's %lld rows", (long long)i, (long long)counts[i],
                                   (long long)m);
            return 0;
        }
        total += counts[i];
    }
    for (int64_t t = 0; t < total; t++) {
        int64_t r = gmmfr_row(rows, row_dt, t);
        if (r < 0 || r >= batch) {
            pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "GroupedMatmulFinalizeRouting: rowIndex[%lld] = %lld "
                                   "is not a row of out (0 .. %lld)", (long long)t, (long long)r,
                                   (long long)(batch - 1));
            return 0;
        }
    }
    return 1;
}

/* The prologue: out[batch, n] = 0, then rows [offset, offset + shared_rows) = fp32(sharedInput) * sharedInputWeight */
static inline void gmmfr_prologue(float *out, int64_t batch, int64_t n, const float *shared, int64_t shared_rows,
                                  int64_t offset, float weight) {
    memset(out, 0, (size_t)(batch * n) * sizeof(float));
    for (int64_t i = 0; i < shared_rows * n; i++) out[offset * n + i] = shared[i] * weight;
}

#endif
