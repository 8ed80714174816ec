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

#include "opbase/checks.h"
#include "kernels/philox.h"
#include "kernels/view.h"
#include "ops/random/fill.h"
#include "ops_decls.h"

#define MASK_ALIGN_BITS 128

static const aclDataType PROB_A2[] = {ACL_FLOAT16, ACL_BF16, ACL_FLOAT};

static int is_equal(double a, double b) { return fabs(a - b) <= DBL_EPSILON; }   /* the vendor's IsDoubleEqual */

/* rnd_prob prob: 0 <= prob <= 1. */
aclnnStatus opc_rnd_prob(op_call *c, const op_step *s) {
    double prob = op_argument(c, s, 0)->d;
    if (prob > 1 || prob < 0) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "The value of prob has to be between 0 and 1, but current "
                            "is %f.", prob);
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}

/* rnd_cast x out [1]: x's dtype casts to out's (with 1: and out's is one the engine stores). */
aclnnStatus opc_rnd_cast(op_call *c, const op_step *s) {
    aclDataType x = op_tensor(c, s, 0)->dtype, out = op_tensor(c, s, 1)->dtype;
    if (ew_can_cast(x, out) && !(s->n == 1 && ew_itemsize(out) == 0)) return ACLNN_SUCCESS;
    char b1[24], b2[24];
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "%s dtype %s can not cast to the %s dtype %s", op_pname(c, s, 0),
                        op_dtype_name(x, b1), op_pname(c, s, 1), op_dtype_name(out, b2));
    return ACLNN_ERR_PARAM_INVALID;
}

/* The mask of `elements` elements has this many bytes (bits padded to a multiple of 128). */
static int64_t mask_bytes(int64_t elements) {
    return (elements + MASK_ALIGN_BITS - 1) / MASK_ALIGN_BITS * MASK_ALIGN_BITS / 8;
}

/* The mask tensor `name` holds `have` bytes: exactly `need` (at_least: need or more). */
static aclnnStatus check_mask_size(op_call *c, const char *name, int64_t have, int64_t need, int at_least) {
    if (at_least ? have >= need : have == need) return ACLNN_SUCCESS;
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Size of %s has to be %lld, but current is %lld.", name,
                        (long long)need, (long long)have);
    return ACLNN_ERR_PARAM_INVALID;
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

void gen_mask_kernel(const pyaclnn_stub_launch *launch) {
    const pyaclnn_stub_tensor *out = &launch->outputs[0];
    if (!op_view_in_device_memory(out, 8)) {
        pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "%s: out is not in device memory", launch->op_name);
        return;
    }
    write_mask(launch->params, out);
}

/* gen_mask_plan shape prob seed offset probDataType out: shape's element count (padded to 128 bits) fits in
 * int64 (the emulator's check: the vendor's product wraps); out holds the mask of shape's elements; on Atlas A2/A3
 * probDataType is one the probability scalar can be built in (CreateDropout: other dtypes fail there, 561103
 * after the message). Nothing to launch for an empty mask. */
aclnnStatus opc_gen_mask_plan(op_call *c, const op_step *s) {
    const int64_t *dims = c->ints[s->p[0]].v;
    double prob = op_argument(c, s, 1)->d;
    const pyaclnn_stub_tensor *out = op_tensor(c, s, 5);
    uint64_t rank = c->ints[s->p[0]].n;
    int64_t numel = 1;
    int over = 0, empty = 0;
    for (uint64_t k = 0; k < rank; k++) empty |= dims[k] == 0;
    for (uint64_t k = 0; k < rank && !empty; k++) over |= __builtin_mul_overflow(numel, dims[k], &numel);
    if (empty) numel = 0;
    if (over || numel > INT64_MAX - (MASK_ALIGN_BITS - 1)) {   /* the mask's bit count must fit in int64 */
        char buf[200];
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "The element count of shape %s overflows int64.",
                            tv_shape_text(dims, (int64_t)rank, buf, sizeof buf));
        return ACLNN_ERR_PARAM_INVALID;
    }
    int64_t need = mask_bytes(numel);
    aclnnStatus rc = check_mask_size(c, op_pname(c, s, 5), pyaclnn_stub_numel(out), need, 0);
    if (rc) return rc;
    if (pyaclnn_stub_soc_family() == PYACLNN_SOC_A2 && !is_equal(prob, 0) && !is_equal(prob, 1) &&
        ew_check_dtype_in(c->api, op_pname(c, s, 4), (aclDataType)op_argument(c, s, 4)->i, PROB_A2, 3) != ACLNN_SUCCESS)
        return ACLNN_ERR_INNER_NULLPTR;
    gen_mask_params *prm = op_params(c, sizeof *prm);
    *prm = (gen_mask_params){prob, op_argument(c, s, 2)->i, op_argument(c, s, 3)->i};
    if (need == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}

/* ---- aclnnDropoutGenMaskV2Tensor (random_tensor.toml) ----------------------------------------- */

/* The mask GenMaskV2 writes for (prob, *seedTensor, *offsetTensor + offset), read when the kernel runs. */
void gen_mask_tensor_kernel(const pyaclnn_stub_launch *launch) {
    gen_mask_params prm = *(const gen_mask_params *)launch->params;
    uint64_t seed, offset;
    if (!rnd_seed_offset(launch, (uint64_t)prm.offset, &seed, &offset)) return;
    prm.seed = (int64_t)seed;
    prm.offset = (int64_t)offset;
    const pyaclnn_stub_tensor *out = &launch->outputs[0];
    if (!op_view_in_device_memory(out, 8)) {
        pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "%s: out is not in device memory", launch->op_name);
        return;
    }
    write_mask(&prm, out);
}

/* ---- aclnnDropoutDoMask ---------------------------------------------------------------------- */

typedef struct {
    double prob;
} do_mask_params;

void do_mask_kernel(const pyaclnn_stub_launch *launch) {
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

/* do_mask_plan self mask prob out: mask holds at least self's mask bytes; out's dtype is one the engine stores;
 * nothing to launch for an empty self. */
aclnnStatus opc_do_mask_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *self = op_tensor(c, s, 0), *mask = op_tensor(c, s, 1), *out = op_tensor(c, s, 3);
    int64_t n = pyaclnn_stub_numel(self);
    aclnnStatus rc = check_mask_size(c, op_pname(c, s, 1), pyaclnn_stub_numel(mask), mask_bytes(n), 1);
    if (rc) return rc;
    if (ew_itemsize(out->dtype) == 0) {   /* castable but not an element the engine stores (complex) */
        char b1[24];
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "%s dtype %s is not supported by the emulator",
                            op_pname(c, s, 3), op_dtype_name(out->dtype, b1));
        return ACLNN_ERR_PARAM_INVALID;
    }
    do_mask_params *prm = op_params(c, sizeof *prm);
    prm->prob = op_argument(c, s, 2)->d;
    if (n == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}


/* ---- aclnnDropoutV3 -------------------------------------------------------------------------- */

void dropout_v3_kernel(const pyaclnn_stub_launch *launch) {
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

/* dropout_no_noise optionalNoiseShape: must be NULL. */
aclnnStatus opc_dropout_no_noise(op_call *c, const op_step *s) {
    if (op_argument(c, s, 0)->p == NULL) return ACLNN_SUCCESS;
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "currently, the input of noise_shape must be nullptr, please "
                        "check.");
    return ACLNN_ERR_PARAM_INVALID;
}

/* dropout_v3_plan input p seed offset maskOut: maskOut holds exactly input's mask bytes; nothing to launch for
 * an empty input. */
aclnnStatus opc_dropout_v3_plan(op_call *c, const op_step *s) {
    int64_t n = pyaclnn_stub_numel(op_tensor(c, s, 0));
    aclnnStatus rc = check_mask_size(c, op_pname(c, s, 4), pyaclnn_stub_numel(op_tensor(c, s, 4)), mask_bytes(n), 0);
    if (rc) return rc;
    gen_mask_params *prm = op_params(c, sizeof *prm);
    *prm = (gen_mask_params){op_argument(c, s, 1)->d, op_argument(c, s, 2)->i, op_argument(c, s, 3)->i};
    if (n == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}
