/*
 * Phase-1 helpers shared by the elementwise operators: argument snapshots, the vendor's checks
 * (dtype support lists, max rank, broadcasting, output shape) with its status codes and messages,
 * and executor creation around ew_kernel.
 */
#ifndef PYACLNN_EW_CHECK_H
#define PYACLNN_EW_CHECK_H

#include <stddef.h>

#include "aclnn/aclnn_base.h"
#include "kernels/elementwise.h"
#include "kernels/device.h"

#define EW_MAX_DIM 8   /* MAX_DIM_LEN of the vendor's elementwise op_apis */

/* A pointer argument for the null check, in the vendor's order. */
typedef struct {
    const char *name;
    const void *ptr;
} ew_ptr_arg;

/* Snapshot of a scalar argument (non-NULL): 161002 if it is not a live aclScalar or the engine
 * cannot read its dtype. */
aclnnStatus ew_scalar_arg(const char *api, const char *name, const aclScalar *s, aclDataType *dtype,
                          ew_value *value);

/* 1 if dt is in list[0..n). */
int ew_in_list(aclDataType dt, const aclDataType *list, size_t n);
/* op::IsPrivateFormat: a blocked layout (not ND, NCHW, NHWC, NCL, NCDHW, NDHWC or HWCN). */
int op_is_private_format(aclFormat f);

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

/* The SoC's generation: 1 on Ascend950 (regbase, "arch35"), 0 on Atlas A2/A3. */
int ew_soc_is_950(void);

/* "BOOL, INT8, ..." of a support list, for messages. */
const char *ew_dtype_list(const aclDataType *list, size_t n, char *buf, size_t size);

/* Snapshot of a tensor argument of a phase-1 function `api`. NULL -> reports and returns
 * ACLNN_ERR_PARAM_NULLPTR; a pointer that is not a live aclTensor (destroyed, foreign, another
 * kind of object) -> reports and returns ACLNN_ERR_PARAM_INVALID. */
aclnnStatus op_tensor_arg(const char *api, const char *param, const aclTensor *t, pyaclnn_stub_tensor *out);

/* Phase-1 helpers. */
/* "[2, 3]" */
const char *tv_shape_text(const int64_t *shape, int64_t ndim, char *buf, size_t size);
/* 161002 unless the two dtypes are equal ("<a> dtype X should be the same as <b> dtype Y"). */
aclnnStatus tv_check_same_dtype(const char *api, const char *na, aclDataType a, const char *nb, aclDataType b);

/* The vendor's EZ-coded parameter messages (OP_LOGE_FOR_INVALID_*), reported as 161002 (returned):
 *   op_ez_expected: "Parameter <param> of <api> has incorrect <what> <actual>. It should be <expected>."
 *   op_ez_reason:   "Parameter(s) <params> of <api> has (have) incorrect <what> <actual>. Reason: <reason>."
 * <what> is the message's noun ("dtype", "shape", "shape dim", "value", "element nums"; plural "shapes" ...). */
aclnnStatus op_ez_expected(const char *api, const char *param, const char *what, const char *actual,
                           const char *expected);
aclnnStatus op_ez_reason(const char *api, int plural, const char *params, const char *what, const char *actual,
                         const char *reason_fmt, ...) __attribute__((format(printf, 6, 7)));
/* "[1, 2]" of an int array. */
const char *op_ints_text(const int64_t *v, uint64_t n, char *buf, size_t size);

/* 161002 "Expected tensor for <name> to have same size as [..], but got [..]." unless t has that shape
 * (OP_CHECK_SHAPE_NOT_EQUAL_WITH_EXPECTED_SIZE). */
aclnnStatus op_expected_size(const char *api, const char *name, const pyaclnn_stub_tensor *t, const int64_t *shape,
                             int64_t ndim);

/* 161002 with a printf-formatted message (a family's own OP_LOGE text); returns ACLNN_ERR_PARAM_INVALID. */
aclnnStatus op_invalidf(const char *api, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* `code` with a printf-formatted message (e.g. a tiling's 561002); returns code. */
aclnnStatus op_failf(const char *api, aclnnStatus code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A rejection the vendor's L0 wrapper defers to the run (it drops the launcher's status): phase 1 succeeds with an
 * executor that runs nothing, has no parameters and asks for no workspace; phase 2 fails with `code` and the
 * message. Returns the status of building that executor. */
struct op_call;
aclnnStatus op_defer_to_run(struct op_call *c, aclnnStatus code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Shape arithmetic with a caller's int64 attribute (groups, strides, dilations, repeats ...): the vendor's int64
 * formula, saturated at INT64_MAX / INT64_MIN where it would overflow (undefined behaviour in C), so that the
 * check comparing it with a shape refuses the call as the vendor's does, and nothing wraps into a small size.
 * tests/test_opgen.py flags a raw `*` on op_argument(...)->i. */
static inline int64_t op_mul_sat(int64_t a, int64_t b) {
    int64_t r;
    return __builtin_mul_overflow(a, b, &r) ? ((a < 0) != (b < 0) ? INT64_MIN : INT64_MAX) : r;
}
static inline int64_t op_add_sat(int64_t a, int64_t b) {
    int64_t r;
    return __builtin_add_overflow(a, b, &r) ? (b < 0 ? INT64_MIN : INT64_MAX) : r;
}
static inline int64_t op_sub_sat(int64_t a, int64_t b) {
    int64_t r;
    return __builtin_sub_overflow(a, b, &r) ? (b < 0 ? INT64_MAX : INT64_MIN) : r;
}

#endif
