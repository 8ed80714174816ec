/*
 * The L0 op's kernel selection and tiling checks (spec B.5), per SoC family, in the vendor's order.
 * The op_api layer discards their result, so the call is accepted at phase 1 and refused when the
 * executor runs (corrections box 1); arnq_l0.c decides how to surface a rejection.
 *
 * Rules marked "emulator" are not checked by the vendor code, whose kernel would then read or write
 * out of bounds; the emulator refuses them in the same way instead of guessing.
 *
 * The L0 op sees the user's inputs (made contiguous) and its own outputs: active y_k shaped like x1
 * with the dst dtype, inactive y_k / scale_k shaped [1], active scale_k shaped like the user's.
 */
#include <stdarg.h>
#include <stdio.h>

#include "arnq.h"
#include "kernels/device.h"

static int is_x_type(aclDataType dt) { return dt == ACL_FLOAT16 || dt == ACL_BF16; }

static int fail(char *why, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *why, size_t size, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, size, fmt, ap);
    va_end(ap);
    return 1;
}

#define T(slot) (&call->t[slot])
#define OUT(k) (&call->t[ARNQ_OUT(k)])

static int64_t rows_of(const pyaclnn_stub_tensor *x1) {
    int64_t rows = 1;
    for (int64_t k = 0; k + 1 < x1->ndim; k++) rows *= x1->shape[k];
    return rows;
}

/* OpDef kernel binaries: x1, x2, gamma, the smooth scales, beta and xOut share one dtype
 * (FLOAT16 or BFLOAT16); y is one of the chip's types. */
static int kernel_binary(const arnq_call *call, const aclDataType *y_types, int n_types, char *why, size_t size) {
    static const char *const NAMES[] = {"x1", "x2", "gamma", "smoothScale1", "smoothScale2", "beta"};
    char b1[24], b2[24];
    aclDataType x = T(ARNQ_X1)->dtype;
    for (int i = ARNQ_X2; i <= ARNQ_BETA; i++)
        if (T(i)->present && T(i)->dtype != x)
            return fail(why, size, "no kernel binary: %s dtype %s differs from x1 dtype %s", NAMES[i],
                        op_dtype_name(T(i)->dtype, b1), op_dtype_name(x, b2));
    if (!is_x_type(x))
        return fail(why, size, "no kernel binary for x1 dtype %s (FLOAT16 or BFLOAT16)", op_dtype_name(x, b1));
    if (OUT(ARNQ_XOUT)->dtype != x)
        return fail(why, size, "no kernel binary: xOut dtype %s differs from x1 dtype %s",
                    op_dtype_name(OUT(ARNQ_XOUT)->dtype, b1), op_dtype_name(x, b2));
    for (int i = 0; i < n_types; i++)
        if (call->dst == y_types[i]) return 0;
    return fail(why, size, "no kernel binary for y dtype %s on this SoC", op_dtype_name(call->dst, b1));
}

/* ---- Atlas A2/A3 (arch22 tiling) ------------------------------------------------------------- */

/* The 910B tiling treats an empty optional input as absent. */
static int present(const pyaclnn_stub_tensor *t) { return t->present && pyaclnn_stub_numel(t) > 0; }

int arnq_check_a2(const arnq_call *call, char *why, size_t size) {
    static const aclDataType Y_TYPES[] = {ACL_INT8, ACL_INT4};
    static const char *const OPT_NAMES[] = {"smoothScale1", "smoothScale2", "beta"};
    char b1[24], b2[24], s1[96], s2[96], s3[96];
    const pyaclnn_stub_tensor *x1 = T(ARNQ_X1), *x2 = T(ARNQ_X2), *gamma = T(ARNQ_GAMMA), *x = OUT(ARNQ_XOUT);
    float eps = (float)call->epsilon;

    if (eps <= 0.0f) return fail(why, size, "epsilon (%g as float) must be greater than zero", (double)eps);
    if (x1->ndim == 0 || x2->ndim == 0 || gamma->ndim == 0)
        return fail(why, size, "the shape dims of x1, x2 and gamma should be greater than 0 (got %lld, %lld, %lld)",
                    (long long)x1->ndim, (long long)x2->ndim, (long long)gamma->ndim);
    if (x1->ndim != x2->ndim)
        return fail(why, size, "the shape dims of x1 and x2 should be equal (got %lld and %lld)",
                    (long long)x1->ndim, (long long)x2->ndim);
    if (gamma->ndim != 1) return fail(why, size, "gamma shape dim num should be 1 (got %lld)", (long long)gamma->ndim);
    if (x->ndim == 0 || arnq_last_dim(x) != gamma->shape[0])
        return fail(why, size, "gamma shape %s isn't consistent with the last dimension of xOut %s",
                    arnq_shape_str(gamma, s1, sizeof s1), arnq_shape_str(x, s2, sizeof s2));
    for (int i = ARNQ_X1; i <= ARNQ_GAMMA; i++)
        if (!is_x_type(T(i)->dtype))
            return fail(why, size, "the dtypes of x1, x2 and gamma should be float16 or bfloat16 (%s is %s)",
                        i == ARNQ_X1 ? "x1" : i == ARNQ_X2 ? "x2" : "gamma", op_dtype_name(T(i)->dtype, b1));
    for (int i = ARNQ_SMOOTH1; i <= ARNQ_BETA; i++)
        if (present(T(i)) && !is_x_type(T(i)->dtype))
            return fail(why, size, "the dtype of optional input %s should be float16 or bfloat16 (got %s)",
                        OPT_NAMES[i - ARNQ_SMOOTH1], op_dtype_name(T(i)->dtype, b1));
    if (call->dst != ACL_INT8 && call->dst != ACL_INT4)
        return fail(why, size, "the dtypes of y1 and y2 should be int8 or int4 on this SoC (got %s)",
                    op_dtype_name(call->dst, b1));
    if (!is_x_type(x->dtype))
        return fail(why, size, "the dtype of xOut should be float16 or bfloat16 (got %s)", op_dtype_name(x->dtype, b1));
    if (OUT(ARNQ_SCALE1)->dtype != ACL_FLOAT || OUT(ARNQ_SCALE2)->dtype != ACL_FLOAT)
        return fail(why, size, "the dtypes of scale1 and scale2 should be float32 (got %s and %s)",
                    op_dtype_name(OUT(ARNQ_SCALE1)->dtype, b1), op_dtype_name(OUT(ARNQ_SCALE2)->dtype, b2));
    for (int i = ARNQ_SMOOTH1; i <= ARNQ_SMOOTH2; i++)
        if (present(T(i)) && !arnq_same_shape(T(i), gamma))
            return fail(why, size, "the shapes of %s %s and gamma %s should be the same", OPT_NAMES[i - ARNQ_SMOOTH1],
                        arnq_shape_str(T(i), s1, sizeof s1), arnq_shape_str(gamma, s2, sizeof s2));
    if (!call->has_mask && present(T(ARNQ_SMOOTH2)) && !present(T(ARNQ_SMOOTH1)))
        return fail(why, size, "smoothScale2 exists but smoothScale1 does not (without outputMask)");
    if (kernel_binary(call, Y_TYPES, 2, why, size)) return 1;

    /* emulator: the 910B tiling does not check these; its kernel would go out of bounds */
    if (!arnq_same_shape(x2, x1) || arnq_last_dim(x1) != gamma->shape[0] || !arnq_same_shape(x, x1))
        return fail(why, size, "x2 %s / xOut %s must have x1's shape %s with last dim = gamma's (not checked by the "
                    "910B tiling, whose kernel would read or write out of bounds; the emulator refuses)",
                    arnq_shape_str(x2, s1, sizeof s1), arnq_shape_str(x, s2, sizeof s2),
                    arnq_shape_str(x1, s3, sizeof s3));
    if (present(T(ARNQ_BETA)) && !arnq_same_shape(T(ARNQ_BETA), gamma))
        return fail(why, size, "beta %s must have gamma's shape (not checked by the 910B tiling, whose kernel would "
                    "read out of bounds; the emulator refuses)", arnq_shape_str(T(ARNQ_BETA), s1, sizeof s1));
    if (call->dst == ACL_INT4 && arnq_last_dim(x1) % 2)
        return fail(why, size, "INT4 output needs an even last dimension, got %lld (not checked by the 910B tiling; "
                    "rows would be misaligned; the emulator refuses)", (long long)arnq_last_dim(x1));
    int64_t rows = rows_of(x1);
    for (int k = 0; k < 2; k++)
        if ((k ? call->out2 : call->out1) && pyaclnn_stub_numel(OUT(ARNQ_SCALE1 + k)) != rows)
            return fail(why, size, "scale%dOut %s must hold one float per row (%lld) (not checked by the 910B "
                        "tiling; the emulator refuses)", k + 1, arnq_shape_str(OUT(ARNQ_SCALE1 + k), s1, sizeof s1),
                        (long long)rows);
    return 0;
}

/* ---- Ascend 950 (arch35 tiling) -------------------------------------------------------------- */

/* An active scale must be [rows], x1.shape[:-1] or x1.shape[:-1] + [1]. */
static int scale_shape_ok(const pyaclnn_stub_tensor *s, const pyaclnn_stub_tensor *x1) {
    if (s->ndim == 1) return s->shape[0] == rows_of(x1);
    if (s->ndim != x1->ndim - 1 && s->ndim != x1->ndim) return 0;
    for (int64_t k = 0; k + 1 < x1->ndim; k++)
        if (s->shape[k] != x1->shape[k]) return 0;
    return s->ndim == x1->ndim - 1 || s->shape[s->ndim - 1] == 1;
}

int arnq_check_950(const arnq_call *call, char *why, size_t size) {
    static const aclDataType Y_TYPES[] = {ACL_INT8, ACL_INT4, ACL_HIFLOAT8, ACL_FLOAT8_E4M3FN, ACL_FLOAT8_E5M2};
    static const char *const NAMES[] = {"x1", "x2", "gamma", "smoothScale1", "smoothScale2", "beta"};
    char b1[24], b2[24], s1[96], s2[96];
    const pyaclnn_stub_tensor *x1 = T(ARNQ_X1), *x2 = T(ARNQ_X2), *gamma = T(ARNQ_GAMMA), *x = OUT(ARNQ_XOUT);

    if (!call->has_mask && T(ARNQ_SMOOTH2)->present && !T(ARNQ_SMOOTH1)->present)
        return fail(why, size, "smoothScale2 requires smoothScale1 when outputMask is unavailable");
    if (x1->ndim < 2 || x1->ndim > 8 || x2->ndim < 2 || x2->ndim > 8)
        return fail(why, size, "the shape dims of x1 and x2 should be in range [2, 8] (got %lld and %lld)",
                    (long long)x1->ndim, (long long)x2->ndim);
    for (int i = ARNQ_GAMMA; i <= ARNQ_BETA; i++)
        if (T(i)->present && T(i)->ndim != 1)
            return fail(why, size, "%s must be 1D (got rank %lld)", NAMES[i], (long long)T(i)->ndim);
    if (!arnq_same_shape(x2, x1))
        return fail(why, size, "x2 shape %s should be same as x1 %s", arnq_shape_str(x2, s1, sizeof s1),
                    arnq_shape_str(x1, s2, sizeof s2));
    if (arnq_last_dim(x1) != gamma->shape[0])
        return fail(why, size, "gamma %s should match the last dim of x1 %s", arnq_shape_str(gamma, s1, sizeof s1),
                    arnq_shape_str(x1, s2, sizeof s2));
    for (int i = ARNQ_SMOOTH1; i <= ARNQ_BETA; i++)
        if (T(i)->present && !arnq_same_shape(T(i), gamma))
            return fail(why, size, "%s shape %s should be same as gamma %s", NAMES[i],
                        arnq_shape_str(T(i), s1, sizeof s1), arnq_shape_str(gamma, s2, sizeof s2));
    if (call->dst == ACL_INT4 && arnq_last_dim(x1) % 2)
        return fail(why, size, "when dst_type is int4, the last dimension of x1 must be even (got %lld)",
                    (long long)arnq_last_dim(x1));
    if (!is_x_type(x1->dtype))
        return fail(why, size, "x1 dtype should be float16 or bf16 (got %s)", op_dtype_name(x1->dtype, b1));
    for (int i = ARNQ_X2; i <= ARNQ_SMOOTH2; i++)
        if (T(i)->present && T(i)->dtype != x1->dtype)
            return fail(why, size, "%s dtype %s should be same as x1 (%s)", NAMES[i], op_dtype_name(T(i)->dtype, b1),
                        op_dtype_name(x1->dtype, b2));
    if (T(ARNQ_BETA)->present && T(ARNQ_BETA)->dtype != gamma->dtype)
        return fail(why, size, "beta dtype %s should be same as gamma (%s)", op_dtype_name(T(ARNQ_BETA)->dtype, b1),
                    op_dtype_name(gamma->dtype, b2));
    if (!arnq_same_shape(x, x1))
        return fail(why, size, "output x shape %s should be same as x1 %s", arnq_shape_str(x, s1, sizeof s1),
                    arnq_shape_str(x1, s2, sizeof s2));
    for (int k = 0; k < 2; k++)
        if ((k ? call->out2 : call->out1) && !scale_shape_ok(OUT(ARNQ_SCALE1 + k), x1))
            return fail(why, size, "scale%d shape %s must be x1's shape %s without its last dim (or their product, "
                        "or with a last dim of 1)", k + 1, arnq_shape_str(OUT(ARNQ_SCALE1 + k), s1, sizeof s1),
                        arnq_shape_str(x1, s2, sizeof s2));
    for (int k = 0; k < 2; k++) {
        if (!(k ? call->out2 : call->out1)) continue;
        int known = 0;
        for (int i = 0; i < 5; i++) known |= call->dst == Y_TYPES[i];
        if (!known)
            return fail(why, size, "y%d dtype should be int8, int4, fp8e4m3, fp8e5m2 or hifp8 (got %s)", k + 1,
                        op_dtype_name(call->dst, b1));
        if (OUT(ARNQ_SCALE1 + k)->dtype != ACL_FLOAT)
            return fail(why, size, "scale%d dtype should be float32 (got %s)", k + 1,
                        op_dtype_name(OUT(ARNQ_SCALE1 + k)->dtype, b1));
    }
    if (x->dtype != x1->dtype)
        return fail(why, size, "output x dtype %s should be same as x1 (%s)", op_dtype_name(x->dtype, b1),
                    op_dtype_name(x1->dtype, b2));
    return kernel_binary(call, Y_TYPES, 5, why, size);
}
