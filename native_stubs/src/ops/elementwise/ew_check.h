/*
 * Phase-1 helpers shared by the elementwise operators: argument snapshots, the vendor's checks
 * (dtype support lists, max rank, broadcasting, output shape) with its status codes and messages,
 * and executor creation around ew_kernel.
 */
#ifndef PYACLNN_EW_CHECK_H
#define PYACLNN_EW_CHECK_H

#include <stddef.h>

#include "aclnn/aclnn_base.h"
#include "elementwise/ew_engine.h"
#include "op_common.h"

#define EW_MAX_DIM 8   /* MAX_DIM_LEN of the vendor's elementwise op_apis */

/* A pointer argument for the null check, in the vendor's order. */
typedef struct {
    const char *name;
    const void *ptr;
} ew_ptr_arg;

/* 161001 naming the first NULL among args[0..n) (then workspaceSize, executor). */
aclnnStatus ew_check_not_null(const char *api, const ew_ptr_arg *args, size_t n, const uint64_t *workspaceSize,
                              aclOpExecutor *const *executor);

/* Snapshot of a scalar argument (non-NULL): 161002 if it is not a live aclScalar or the engine
 * cannot read its dtype. */
aclnnStatus ew_scalar_arg(const char *api, const char *name, const aclScalar *s, aclDataType *dtype,
                          ew_value *value);

/* 161002 "<name> dtype X is not supported (...)" unless t's dtype is in list[0..n). */
aclnnStatus ew_check_dtype_in(const char *api, const char *name, aclDataType dtype, const aclDataType *list,
                              size_t n);

/* 161002 if t has more than max_dim dimensions. */
aclnnStatus ew_check_max_dim(const char *api, const char *name, const pyaclnn_stub_tensor *t, int max_dim);

/* Broadcast shape of a and b (torch rules); 161002 naming both shapes if they do not broadcast. */
aclnnStatus ew_broadcast(const char *api, const char *na, const pyaclnn_stub_tensor *a, const char *nb,
                         const pyaclnn_stub_tensor *b, int64_t shape[PYACLNN_STUB_MAX_DIMS], int64_t *ndim);

/* 161002 "Shape of <name> should be [...], but current is [...]" unless t has that shape. */
aclnnStatus ew_check_shape(const char *api, const char *name, const pyaclnn_stub_tensor *t,
                           const int64_t *shape, int64_t ndim);

/* Creates the executor running ew_kernel with `plan` (or nothing when `empty`), reports the
 * workspace (0) and hands it out. 561101 if out of memory. */
aclnnStatus ew_make_executor(const char *api, const char *op_name, const ew_plan *plan, int empty,
                             const aclTensor *const *inputs, size_t n_inputs, const aclTensor *output,
                             uint64_t *workspaceSize, aclOpExecutor **executor);

/* Defines phase 2 of operator `fn`: runs its executor on the stream. */
#define EW_DEFINE_PHASE2(fn)                                                                              \
    aclnnStatus fn(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream) { \
        return pyaclnn_stub_executor_run(#fn, workspace, workspaceSize, executor, stream);                 \
    }

/* The SoC's generation: 1 on Ascend950 (regbase, "arch35"), 0 on Atlas A2/A3. */
int ew_soc_is_950(void);

/* "BOOL, INT8, ..." of a support list, for messages. */
const char *ew_dtype_list(const aclDataType *list, size_t n, char *buf, size_t size);

#endif
