/*
 * aclnnDropoutGenMaskV2, aclnnDropoutDoMask and aclnnDropoutV3: torch's dropout in training mode.
 * torch_npu's native_dropout calls GenMaskV2 (on a secondary stream) + DoMask on Atlas A2/A3 and the
 * fused DropoutV3 on Ascend 950 (aclnn-only); the backward is DoMask with the same mask on both
 * (hicann/ops-math random/dsa_gen_bit_mask/op_host/op_api/aclnn_dropout_gen_mask.cpp,
 * random/drop_out_do_mask/op_host/op_api/aclnn_dropout_do_mask.cpp, random/drop_out_v3/op_api/
 * aclnn_dropout_v3.cpp).
 *
 * GenMaskV2 writes one bit per element of `shape` (element i: byte i / 8, bit i % 8, low bit first),
 * padded to a multiple of 128 bits: 1 = keep, with probability 1 - prob: keep when the uniform number
 * of element i (rnd_philox.h: top 24 bits of word 0 * 2^-24) is below float(1 - prob). prob 0 fills
 * 0xFF, prob 1 fills 0 (as the vendor). DoMask: out = bit ? self / keep : 0 with keep = 1 - prob in
 * self's dtype, computed in fp32 and cast to out's dtype; prob 0 copies self, prob 1 writes zeros.
 * DropoutV3 writes the same mask GenMaskV2 would for (p, seed, offset) and out = bit ? x / keep : 0
 * with keep = float(1 - p).
 * The bit layout is the emulator's (only these two operators read it); statistical fidelity.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "aclnnop/aclnn_dropout_do_mask.h"
#include "aclnnop/aclnn_dropout_gen_mask.h"
#include "aclnnop/aclnn_dropout_v3.h"
#include "opbase/checks.h"
#include "kernels/philox.h"
#include "kernels/view.h"

#define RND_MAX_DIM 8
#define MASK_ALIGN_BITS 128

static const aclDataType MASK[] = {ACL_UINT8};
static const aclDataType PROB_A2[] = {ACL_FLOAT16, ACL_BF16, ACL_FLOAT};
static const aclDataType DO_MASK_SELF[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};   /* A2/A3 and 950 */

static int is_equal(double a, double b) { return fabs(a - b) <= DBL_EPSILON; }   /* the vendor's IsDoubleEqual */

static aclnnStatus check_prob(const char *api, double prob) {
    if (prob > 1 || prob < 0) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "The value of prob has to be between 0 and 1, but current "
                            "is %f.", prob);
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

static aclOpExecutor *make(const char *api, const char *op, pyaclnn_stub_kernel_fn kernel, const void *prm,
                           size_t size, const aclTensor *const *inputs, size_t n_inputs, const aclTensor *out,
                           uint64_t *workspaceSize, aclOpExecutor **executor, aclnnStatus *rc) {
    aclOpExecutor *e = pyaclnn_stub_executor_new(op, kernel, prm, size, inputs, n_inputs, &out, 1, 0);
    if (e == NULL) {
        pyaclnn_stub_report(ACLNN_ERR_INNER_CREATE_EXECUTOR, api, "could not create the executor (out of memory)");
        *rc = ACLNN_ERR_INNER_CREATE_EXECUTOR;
        return NULL;
    }
    *workspaceSize = 0;
    *executor = e;
    *rc = ACLNN_SUCCESS;
    return e;
}

/* ---- aclnnDropoutGenMaskV2 ------------------------------------------------------------------- */

typedef struct {
    double prob;
    int64_t seed, offset;
} gen_mask_params;

/* Byte b of the mask of (prob, seed, offset): bits 8b .. 8b+7, low bit first, 1 = keep. */
static unsigned char mask_byte(const gen_mask_params *prm, int64_t b) {
    if (is_equal(prm->prob, 0)) return 0xFF;
    if (is_equal(prm->prob, 1)) return 0;
    float keep = (float)(1 - prm->prob);
    unsigned char byte = 0;
    for (int bit = 0; bit < 8; bit++) {
        uint32_t w[4];
        rnd_philox((uint64_t)prm->seed, (uint64_t)prm->offset, (uint64_t)(b * 8 + bit), w);
        byte |= (unsigned char)((rnd_u24(w[0]) < keep) << bit);
    }
    return byte;
}

/* Writes the whole mask view (its bytes in row-major order). */
static void write_mask(const gen_mask_params *prm, const pyaclnn_stub_tensor *mask) {
    int64_t bytes = pyaclnn_stub_numel(mask);
    tv_iter it;
    tv_iter_init(&it, mask);
    for (int64_t b = 0; b < bytes; b++, tv_iter_next(&it)) *tv_at(mask, it.off) = mask_byte(prm, b);
}

static void gen_mask_kernel(const pyaclnn_stub_launch *launch) {
    const pyaclnn_stub_tensor *out = &launch->outputs[0];
    if (!op_view_in_device_memory(out, 8)) {
        pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "%s: out is not in device memory", launch->op_name);
        return;
    }
    write_mask(launch->params, out);
}

aclnnStatus aclnnDropoutGenMaskV2GetWorkspaceSize(const aclIntArray *shape, double prob, int64_t seed, int64_t offset,
                                                  aclDataType probDataType, aclTensor *outArg,
                                                  uint64_t *workspaceSize, aclOpExecutor **executor) {
    static const char API[] = "aclnnDropoutGenMaskV2GetWorkspaceSize";
    ew_ptr_arg ptrs[] = {{"shape", shape}, {"out", outArg}};
    aclnnStatus rc = ew_check_not_null(API, ptrs, 2, workspaceSize, executor);
    const int64_t *dims;
    uint64_t n_dims;
    pyaclnn_stub_tensor out;
    if (rc || (rc = tv_int_array_arg(API, "shape", shape, 0, &dims, &n_dims)) ||
        (rc = op_tensor_arg(API, "out", outArg, &out)))
        return rc;
    if ((rc = ew_check_dtype_in(API, "out", out.dtype, MASK, 1)) || (rc = check_prob(API, prob))) return rc;
    int64_t numel = 1;
    for (uint64_t k = 0; k < n_dims; k++) numel *= dims[k];
    int64_t need = (numel + MASK_ALIGN_BITS - 1) / MASK_ALIGN_BITS * MASK_ALIGN_BITS / 8;
    if (pyaclnn_stub_numel(&out) != need) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "Size of out has to be %lld, but current is %lld.",
                            (long long)need, (long long)pyaclnn_stub_numel(&out));
        return ACLNN_ERR_PARAM_INVALID;
    }
    /* Atlas A2/A3 build the probability scalar in probDataType (CreateDropout): other dtypes fail there */
    if (pyaclnn_stub_soc_family() == PYACLNN_SOC_A2 && !is_equal(prob, 0) && !is_equal(prob, 1) &&
        ew_check_dtype_in(API, "probDataType", probDataType, PROB_A2, 3) != ACLNN_SUCCESS)
        return ACLNN_ERR_INNER_NULLPTR;
    gen_mask_params prm = {prob, seed, offset};
    make(API, "DropoutGenMaskV2", need ? gen_mask_kernel : NULL, &prm, sizeof prm, NULL, 0, outArg, workspaceSize,
         executor, &rc);
    return rc;
}

EW_DEFINE_PHASE2(aclnnDropoutGenMaskV2)

/* ---- aclnnDropoutDoMask ---------------------------------------------------------------------- */

typedef struct {
    double prob;
} do_mask_params;

static void do_mask_kernel(const pyaclnn_stub_launch *launch) {
    const do_mask_params *prm = launch->params;
    const pyaclnn_stub_tensor *self = &launch->inputs[0], *mask = &launch->inputs[1], *out = &launch->outputs[0];
    if (!op_view_in_device_memory(self, (int)(8 * ew_itemsize(self->dtype))) || !op_view_in_device_memory(mask, 8) ||
        !op_view_in_device_memory(out, (int)(8 * ew_itemsize(out->dtype)))) {
        pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "%s: a view is not in device memory", launch->op_name);
        return;
    }
    /* keep = 1 - prob as a value of self's dtype (the vendor's ConvertToTensor), then fp32 */
    float keep = (float)ew_cast((ew_value){.f = (double)(float)(1 - prm->prob)}, ACL_FLOAT, self->dtype).f;
    int64_t n = pyaclnn_stub_numel(self);
    tv_iter si, oi, mi;
    tv_iter_init(&si, self);
    tv_iter_init(&oi, out);
    tv_iter_init(&mi, mask);
    int64_t byte_index = -1;
    unsigned char byte = 0;
    for (int64_t i = 0; i < n; i++, tv_iter_next(&si), tv_iter_next(&oi)) {
        while (byte_index < i / 8) {   /* the mask's bytes in row-major order */
            byte = *tv_at(mask, mi.off);
            tv_iter_next(&mi);
            byte_index++;
        }
        float x = (float)ew_load(tv_at(self, si.off), self->dtype).f, r;
        if (is_equal(prm->prob, 0)) r = x;
        else if (is_equal(prm->prob, 1)) r = 0.0f;
        else r = (byte >> (i % 8)) & 1 ? x / keep : 0.0f;
        ew_store(tv_at(out, oi.off), out->dtype, ew_cast((ew_value){.f = (double)r}, ACL_FLOAT, out->dtype));
    }
}

aclnnStatus aclnnDropoutDoMaskGetWorkspaceSize(const aclTensor *selfArg, const aclTensor *maskArg, double prob,
                                               aclTensor *outArg, uint64_t *workspaceSize, aclOpExecutor **executor) {
    static const char API[] = "aclnnDropoutDoMaskGetWorkspaceSize";
    ew_ptr_arg ptrs[] = {{"self", selfArg}, {"mask", maskArg}, {"out", outArg}};
    aclnnStatus rc = ew_check_not_null(API, ptrs, 3, workspaceSize, executor);
    pyaclnn_stub_tensor self, mask, out;
    if (rc || (rc = op_tensor_arg(API, "self", selfArg, &self)) || (rc = op_tensor_arg(API, "mask", maskArg, &mask)) ||
        (rc = op_tensor_arg(API, "out", outArg, &out)))
        return rc;
    char b1[24], b2[24];
    if (!ew_can_cast(self.dtype, out.dtype)) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "self dtype %s can not cast to the out dtype %s",
                            op_dtype_name(self.dtype, b1), op_dtype_name(out.dtype, b2));
        return ACLNN_ERR_PARAM_INVALID;
    }
    size_t n_list = pyaclnn_stub_soc_family() == PYACLNN_SOC_OTHER ? 2 : 3;   /* BF16 on A2/A3 and 950 */
    if ((rc = ew_check_dtype_in(API, "self", self.dtype, DO_MASK_SELF, n_list)) ||
        (rc = ew_check_dtype_in(API, "mask", mask.dtype, MASK, 1)) || (rc = check_prob(API, prob)) ||
        (rc = ew_check_max_dim(API, "self", &self, RND_MAX_DIM)) ||
        (rc = ew_check_shape(API, "out", &out, self.shape, self.ndim)))
        return rc;
    int64_t n = pyaclnn_stub_numel(&self), need = (n + MASK_ALIGN_BITS - 1) / MASK_ALIGN_BITS * MASK_ALIGN_BITS / 8;
    if (pyaclnn_stub_numel(&mask) < need) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "Size of mask has to be %lld, but current is %lld.",
                            (long long)need, (long long)pyaclnn_stub_numel(&mask));
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (ew_itemsize(out.dtype) == 0) {   /* castable but not an element the engine stores (complex) */
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "out dtype %s is not supported by the emulator",
                            op_dtype_name(out.dtype, b1));
        return ACLNN_ERR_PARAM_INVALID;
    }
    do_mask_params prm = {prob};
    const aclTensor *inputs[2] = {selfArg, maskArg};
    make(API, "DropoutDoMask", n ? do_mask_kernel : NULL, &prm, sizeof prm, inputs, 2, outArg, workspaceSize,
         executor, &rc);
    return rc;
}

EW_DEFINE_PHASE2(aclnnDropoutDoMask)

/* ---- aclnnDropoutV3 -------------------------------------------------------------------------- */

static void dropout_v3_kernel(const pyaclnn_stub_launch *launch) {
    const gen_mask_params *prm = launch->params;
    const pyaclnn_stub_tensor *x = &launch->inputs[0], *out = &launch->outputs[0], *mask = &launch->outputs[1];
    if (!op_view_in_device_memory(x, (int)(8 * ew_itemsize(x->dtype))) || !op_view_in_device_memory(mask, 8) ||
        !op_view_in_device_memory(out, (int)(8 * ew_itemsize(out->dtype)))) {
        pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "%s: a view is not in device memory", launch->op_name);
        return;
    }
    float keep = (float)(1 - prm->prob);
    int64_t n = pyaclnn_stub_numel(x);
    tv_iter xi, oi;
    tv_iter_init(&xi, x);
    tv_iter_init(&oi, out);
    unsigned char byte = 0;
    for (int64_t i = 0; i < n; i++, tv_iter_next(&xi), tv_iter_next(&oi)) {
        if (i % 8 == 0) byte = mask_byte(prm, i / 8);
        float v = (float)ew_load(tv_at(x, xi.off), x->dtype).f, r;
        if (is_equal(prm->prob, 0)) r = v;
        else r = (byte >> (i % 8)) & 1 ? v / keep : 0.0f;
        ew_store(tv_at(out, oi.off), out->dtype, ew_cast((ew_value){.f = (double)r}, ACL_FLOAT, out->dtype));
    }
    write_mask(prm, mask);
}

aclnnStatus aclnnDropoutV3GetWorkspaceSize(const aclTensor *input, const aclTensor *optionalNoiseShape, double p,
                                           int64_t seed, int64_t offset, aclTensor *outArg, aclTensor *maskOut,
                                           uint64_t *workspaceSize, aclOpExecutor **executor) {
    static const char API[] = "aclnnDropoutV3GetWorkspaceSize";
    ew_ptr_arg ptrs[] = {{"input", input}, {"out", outArg}, {"maskOut", maskOut}};
    aclnnStatus rc = ew_check_not_null(API, ptrs, 3, workspaceSize, executor);
    pyaclnn_stub_tensor x, out, mask;
    if (rc || (rc = op_tensor_arg(API, "input", input, &x)) || (rc = op_tensor_arg(API, "out", outArg, &out)) ||
        (rc = op_tensor_arg(API, "maskOut", maskOut, &mask)))
        return rc;
    char b1[24], b2[24];
    if (!ew_can_cast(x.dtype, out.dtype) || ew_itemsize(out.dtype) == 0) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "input dtype %s can not cast to the out dtype %s",
                            op_dtype_name(x.dtype, b1), op_dtype_name(out.dtype, b2));
        return ACLNN_ERR_PARAM_INVALID;
    }
    size_t n_list = pyaclnn_stub_soc_family() == PYACLNN_SOC_OTHER ? 2 : 3;   /* BF16 on A2/A3 and 950 */
    if ((rc = ew_check_dtype_in(API, "input", x.dtype, DO_MASK_SELF, n_list)) ||
        (rc = ew_check_dtype_in(API, "maskOut", mask.dtype, MASK, 1)))
        return rc;
    if (optionalNoiseShape != NULL) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "currently, the input of noise_shape must be nullptr, "
                            "please check.");
        return ACLNN_ERR_PARAM_INVALID;
    }
    if ((rc = check_prob(API, p)) || (rc = ew_check_max_dim(API, "input", &x, RND_MAX_DIM)) ||
        (rc = ew_check_shape(API, "out", &out, x.shape, x.ndim)))
        return rc;
    int64_t n = pyaclnn_stub_numel(&x), need = (n + MASK_ALIGN_BITS - 1) / MASK_ALIGN_BITS * MASK_ALIGN_BITS / 8;
    if (pyaclnn_stub_numel(&mask) != need) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "Size of maskOut has to be %lld, but current is %lld.",
                            (long long)need, (long long)pyaclnn_stub_numel(&mask));
        return ACLNN_ERR_PARAM_INVALID;
    }
    gen_mask_params prm = {p, seed, offset};
    const aclTensor *outputs[2] = {outArg, maskOut};
    aclOpExecutor *e = pyaclnn_stub_executor_new("DropoutV3", n ? dropout_v3_kernel : NULL, &prm, sizeof prm, &input, 1,
                                                 outputs, 2, 0);
    if (e == NULL) {
        pyaclnn_stub_report(ACLNN_ERR_INNER_CREATE_EXECUTOR, API, "could not create the executor (out of memory)");
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    }
    *workspaceSize = 0;
    *executor = e;
    return ACLNN_SUCCESS;
}

EW_DEFINE_PHASE2(aclnnDropoutV3)
