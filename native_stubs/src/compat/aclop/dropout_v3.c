/*
 * The aclop operators of torch_npu's dropout_with_byte_mask (op-plugin aclops/DropoutWithByteMaskKernelNpu.cpp),
 * which Atlas A2 runs through aclopCompileAndExecute:
 *
 *   DropOutGenMaskV3(shape, prob) -> y, attrs seed, seed2
 *       shape: INT32 / INT64, 1-D, a host (compile-time) input; prob: the KEEP probability (torch_npu passes
 *       1 - p), FLOAT / FLOAT16 / BF16, one element, a host input, in [0, 1]; y: UINT8 with one byte per
 *       element of shape, 1 = keep, 0 = drop. Random bits from the emulator's Philox4x32-10 (the generator and
 *       word layout of src/kernels/philox.h: key = seed, counter = (element, offset)), a byte kept when the top
 *       24 bits of word 0, as a fraction of 2^24, are below prob (fp32) -- the rule of DropoutGenMaskV2. The
 *       kernel is stateful, as a seeded TensorFlow-style generator: offset = (seed2 << 32) + the number of
 *       DropOutGenMaskV3 launches before this one in the process, so that torch_npu's constant seed (the
 *       generator's initial seed) still gives a new mask per call; seed = seed2 = 0 ("seeded by a random
 *       seed") uses a seed from the same counter. Fidelity class s: the NPU's bits are its own.
 *   DropOutDoMaskV3(x, mask, keep_prob) -> y
 *       x, y: FLOAT / FLOAT16 / BF16, one shape; mask: UINT8 / BOOL, one byte per element of x (the vendor's
 *       kernel, hicann/ops-math random/drop_out_do_mask_v3/op_kernel/arch35, reads the mask bytes at the
 *       elements' own offsets and keeps element k when bit 0 of byte k is set; its proto comment, describing a
 *       bit mask of align(n, 128) / 8 bytes, disagrees: the source is followed); keep_prob: x's dtype, one
 *       element, a host input, in [0, 1] (the tiling's check). y = keep_prob == 0 ? 0 : keep_prob == 1 ? x :
 *       mask ? x * (1 / keep_prob) : 0, in fp32 (the reciprocal rounded to fp32 first, as the kernel's
 *       prob_reciprocal) and one rounding (RNE) to x's dtype. Class b (the kernel's steps).
 *
 * Inputs are checked when the call is made (aclop's compile step); the launch is queued on the stream.
 * Failures return ACL_ERROR_INVALID_PARAM with a message, as a refused aclop compile does.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aclop_ops.h"
#include "aclop_values.h"
#include "kernels/philox.h"

/* ---- checks --------------------------------------------------------------------------------------- */

static int is_float_type(aclDataType t) { return t == ACL_FLOAT || t == ACL_FLOAT16 || t == ACL_BF16; }

/* A host input of one float element of dtype t (prob / keep_prob): its value, or -1 after reporting. */
static int host_prob(const aclop_call *c, const char *op, int k, const char *name, float *out) {
    const pyaclnn_stub_aclop_desc *d = &c->in[k];
    if (!is_float_type(d->dtype)) return aclop_bad(c, op, "%s must be FLOAT, FLOAT16 or BF16 (dtype %d)", name, (int)d->dtype), -1;
    if (aclop_count(d) != 1) return aclop_bad(c, op, "%s must hold one element (it holds %lld)", name, (long long)aclop_count(d)), -1;
    if (d->placement == ACL_MEMTYPE_DEVICE || c->in_data[k] == NULL || c->in_size[k] < float_item(d->dtype))
        return aclop_bad(c, op, "%s must be a host (compile-time) input of one element (placement %d, %zu bytes)", name,
                   (int)d->placement, c->in_size[k]), -1;
    float v = float_load(d->dtype, c->in_data[k], 0);
    if (!(v >= 0.0f && v <= 1.0f))
        return aclop_bad(c, op, "%s must be in [0, 1], got %g", name, (double)v), -1;
    *out = v;
    return 0;
}


/* ---- DropOutGenMaskV3 ----------------------------------------------------------------------------- */

typedef struct {
    uint8_t *y;
    int64_t n;
    float keep;
    uint64_t seed, offset;
} gen_task;

static void gen_run(void *arg) {
    const gen_task *t = arg;
    for (int64_t i = 0; i < t->n; i++) {
        uint32_t w[4];
        rnd_philox(t->seed, t->offset, (uint64_t)i, w);
        t->y[i] = (float)(w[0] >> 8) * 0x1p-24f < t->keep;
    }
}

static _Atomic uint64_t gen_launches;

aclError aclop_drop_out_gen_mask_v3(const aclop_call *c) {
    static const char op[] = "DropOutGenMaskV3";
    const pyaclnn_stub_aclop_desc *shape = &c->in[0], *y = &c->out[0];
    if (shape->dtype != ACL_INT32 && shape->dtype != ACL_INT64)
        return aclop_bad(c, op, "shape must be INT32 or INT64 (dtype %d)", (int)shape->dtype);
    int64_t rank = aclop_count(shape);
    size_t isz = shape->dtype == ACL_INT64 ? 8 : 4;
    if (shape->ndim > 1 || rank < 0 || rank > PYACLNN_STUB_MAX_DIMS)
        return aclop_bad(c, op, "shape must be a 1-D list of at most %d dims (it holds %lld)", (int)PYACLNN_STUB_MAX_DIMS,
                   (long long)rank);
    if (shape->placement == ACL_MEMTYPE_DEVICE || (rank && (c->in_data[0] == NULL || c->in_size[0] < (size_t)rank * isz)))
        return aclop_bad(c, op, "shape must be a host (compile-time) input (placement %d, %zu bytes)", (int)shape->placement,
                   c->in_size[0]);
    int64_t n = 1;
    for (int64_t k = 0; k < rank; k++) {
        int64_t d = isz == 8 ? ((const int64_t *)c->in_data[0])[k] : ((const int32_t *)c->in_data[0])[k];
        if (d < 0 || (d && n > INT64_MAX / d)) return aclop_bad(c, op, "shape dim %lld is invalid (%lld)", (long long)k, (long long)d);
        n *= d;
    }
    float keep;
    if (host_prob(c, op, 1, "prob", &keep)) return ACL_ERROR_INVALID_PARAM;
    if (y->dtype != ACL_UINT8) return aclop_bad(c, op, "y must be UINT8 (dtype %d)", (int)y->dtype);
    if (aclop_count(y) != n || c->out_size[0] < (size_t)n)
        return aclop_bad(c, op, "y must hold one byte per element of shape (%lld): it has %lld elements, its buffer %zu bytes",
                   (long long)n, (long long)aclop_count(y), c->out_size[0]);
    int kind;
    int64_t seed = 0, seed2 = 0;
    float unused;
    if (c->attr) {
        pyaclnn_stub_aclop_attr_scalar(c->attr, "seed", &kind, &seed, &unused);
        pyaclnn_stub_aclop_attr_scalar(c->attr, "seed2", &kind, &seed2, &unused);
    }
    uint64_t launch = atomic_fetch_add(&gen_launches, 1);
    if (n == 0) return ACL_SUCCESS;
    gen_task *t = malloc(sizeof *t);
    if (!t) {
        pyaclnn_stub_report(ACL_ERROR_BAD_ALLOC, c->func, "%s: out of host memory", op);
        return ACL_ERROR_BAD_ALLOC;
    }
    uint64_t s = (uint64_t)seed;
    if (seed == 0 && seed2 == 0) s = 0x9E3779B97F4A7C15ull * (launch + 1);   /* "a random seed" */
    *t = (gen_task){c->out_data[0], n, keep, s, ((uint64_t)seed2 << 32) + launch};
    pyaclnn_stub_access acc[1] = {{c->out_data[0], (uint64_t)n, 1}};
    return pyaclnn_stub_stream_submit_accesses(c->func, c->stream, gen_run, free, t, op, acc, 1);
}

/* ---- DropOutDoMaskV3 ------------------------------------------------------------------------------ */

typedef struct {
    const void *x;
    const uint8_t *mask;
    void *y;
    int64_t n;
    aclDataType dtype;
    float keep;
} do_task;

static void do_run(void *arg) {
    const do_task *t = arg;
    if (t->keep == 0.0f) {
        for (int64_t k = 0; k < t->n; k++) float_store(t->dtype, t->y, k, 0.0f);
        return;
    }
    if (t->keep == 1.0f) {
        memmove(t->y, t->x, (size_t)t->n * float_item(t->dtype));
        return;
    }
    float recip = 1.0f / t->keep;
    for (int64_t k = 0; k < t->n; k++)
        float_store(t->dtype, t->y, k, (t->mask[k] & 1) ? float_load(t->dtype, t->x, k) * recip : 0.0f);
}

aclError aclop_drop_out_do_mask_v3(const aclop_call *c) {
    static const char op[] = "DropOutDoMaskV3";
    const pyaclnn_stub_aclop_desc *x = &c->in[0], *mask = &c->in[1], *y = &c->out[0];
    if (!is_float_type(x->dtype)) return aclop_bad(c, op, "x must be FLOAT, FLOAT16 or BF16 (dtype %d)", (int)x->dtype);
    if (mask->dtype != ACL_UINT8 && mask->dtype != ACL_BOOL)
        return aclop_bad(c, op, "mask must be UINT8 or BOOL (dtype %d)", (int)mask->dtype);
    if (c->in[2].dtype != x->dtype)
        return aclop_bad(c, op, "keep_prob must have x's dtype %d (dtype %d)", (int)x->dtype, (int)c->in[2].dtype);
    float keep;
    if (host_prob(c, op, 2, "keep_prob", &keep)) return ACL_ERROR_INVALID_PARAM;
    int64_t n = aclop_count(x);
    size_t item = float_item(x->dtype);
    if (n < 0 || x->ndim > 8) return aclop_bad(c, op, "x must have 0 to 8 dims of known size (%d dims)", x->ndim);
    if (y->dtype != x->dtype || aclop_count(y) != n)
        return aclop_bad(c, op, "y must have x's dtype and element count %lld (dtype %d, %lld elements)", (long long)n,
                   (int)y->dtype, (long long)aclop_count(y));
    if (aclop_count(mask) < n)
        return aclop_bad(c, op, "mask must hold one byte per element of x: %lld bytes, but it holds %lld", (long long)n,
                   (long long)aclop_count(mask));
    if (c->in_size[0] < (size_t)n * item || c->in_size[1] < (size_t)n || c->out_size[0] < (size_t)n * item)
        return aclop_bad(c, op, "%lld elements do not fit the data buffers of x, mask or y (%zu, %zu, %zu bytes)",
                   (long long)n, c->in_size[0], c->in_size[1], c->out_size[0]);
    if (n == 0) return ACL_SUCCESS;
    do_task *t = malloc(sizeof *t);
    if (!t) {
        pyaclnn_stub_report(ACL_ERROR_BAD_ALLOC, c->func, "%s: out of host memory", op);
        return ACL_ERROR_BAD_ALLOC;
    }
    *t = (do_task){c->in_data[0], c->in_data[1], c->out_data[0], n, x->dtype, keep};
    pyaclnn_stub_access acc[3] = {{c->in_data[0], (uint64_t)n * item, 0}, {c->in_data[1], (uint64_t)n, 0},
                                  {c->out_data[0], (uint64_t)n * item, 1}};
    return pyaclnn_stub_stream_submit_accesses(c->func, c->stream, do_run, free, t, op, acc, 3);
}
