/*
 * The aclop operator Quantize, which torch_npu's npu_quantize sends with its default div_mode=True (op-plugin
 * aclops/QuantizeKernelNpu.cpp; with div_mode=False it calls aclnnAscendQuantV3 instead):
 *
 *   Quantize(x, scales, zero_points) -> y, attrs dtype ("torch.qint8" / "torch.quint8" / "torch.qint32"),
 *   axis (default 1)
 *       x: FLOAT / FLOAT16 / BF16; scales: FLOAT / BF16, one value per element of x's dim `axis` (torch_npu
 *       reshapes them to 1 everywhere else) or one for the whole tensor; zero_points: optional (torch_npu passes an
 *       empty input without them), INT32 / INT8 / UINT8 / BF16 / FLOAT16 / FLOAT, as many as scales; y: INT8 /
 *       UINT8 / INT32 as dtype names, x's shape.
 *       y = sat(rint(fp32(x) / fp32(scale) + fp32(zero_point))): the steps of the vendor kernel
 *       (hicann/ops-nn quant/quantize/op_kernel/arch35/quantize_per_channel_regbase.h: both operands cast to fp32,
 *       Div, Add of the offset, then Cast with CAST_RINT -- int8 and uint8 through int16 and half, which
 *       saturates). NaN gives 0 (the emulator's choice: the vendor leaves a NaN's integer undefined). Class b.
 *       (Atlas A2 runs this operator as a TBE kernel that is not public; the emulator uses the arch35 kernel's
 *       steps for every SoC.)
 *
 * Inputs are checked when the call is made (aclop's compile step); the launch is queued on the stream.
 * Failures return ACL_ERROR_INVALID_PARAM with a message, as a refused aclop compile does.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aclop_ops.h"
#include "aclop_values.h"

static const char OP[] = "Quantize";

static size_t zp_item(aclDataType t) {
    switch (t) {
    case ACL_INT8: case ACL_UINT8: return 1;
    case ACL_BF16: case ACL_FLOAT16: return 2;
    case ACL_INT32: case ACL_FLOAT: return 4;
    default: return 0;
    }
}

static float zp_load(aclDataType t, const void *p, int64_t k) {
    switch (t) {
    case ACL_INT8: return (float)((const int8_t *)p)[k];
    case ACL_UINT8: return (float)((const uint8_t *)p)[k];
    case ACL_INT32: return (float)((const int32_t *)p)[k];     /* the vector Cast int32 -> fp32 rounds (RNE) */
    default: return float_load(t, p, k);
    }
}

typedef struct {
    const void *x, *scales, *zp;
    void *y;
    aclDataType xt, st, zt, yt;
    int64_t n, channels, inner;       /* element k's channel: (k / inner) % channels (channels 1: per tensor) */
} quant_task;

static void quant_run(void *arg) {
    const quant_task *t = arg;
    const double lo = t->yt == ACL_INT8 ? -128.0 : t->yt == ACL_UINT8 ? 0.0 : -2147483648.0;
    const double hi = t->yt == ACL_INT8 ? 127.0 : t->yt == ACL_UINT8 ? 255.0 : 2147483647.0;
    for (int64_t k = 0; k < t->n; k++) {
        int64_t ch = t->channels == 1 ? 0 : (k / t->inner) % t->channels;
        float v = float_load(t->xt, t->x, k) / float_load(t->st, t->scales, ch);
        if (t->zp) v += zp_load(t->zt, t->zp, ch);
        double r = isnan(v) ? 0.0 : rint((double)v);        /* fp32 -> integer, to nearest even */
        r = r < lo ? lo : r > hi ? hi : r;
        if (t->yt == ACL_INT8) ((int8_t *)t->y)[k] = (int8_t)r;
        else if (t->yt == ACL_UINT8) ((uint8_t *)t->y)[k] = (uint8_t)r;
        else ((int32_t *)t->y)[k] = (int32_t)r;
    }
}

aclError aclop_quantize(const aclop_call *c) {
    const pyaclnn_stub_aclop_desc *x = &c->in[0], *s = &c->in[1], *z = &c->in[2], *y = &c->out[0];
    if (x->dtype != ACL_FLOAT && x->dtype != ACL_FLOAT16 && x->dtype != ACL_BF16)
        return aclop_bad(c, OP, "x must be FLOAT, FLOAT16 or BF16 (dtype %d)", (int)x->dtype);
    if (s->dtype != ACL_FLOAT && s->dtype != ACL_BF16)
        return aclop_bad(c, OP, "scales must be FLOAT or BF16 (dtype %d)", (int)s->dtype);
    /* torch_npu's empty input for absent zero_points: an UNDEFINED description without data */
    int has_zp = z->dtype != ACL_DT_UNDEFINED && c->in_data[2] != NULL;
    if (has_zp && zp_item(z->dtype) == 0)
        return aclop_bad(c, OP, "zero_points must be INT32, INT8, UINT8, BF16, FLOAT16 or FLOAT (dtype %d)", (int)z->dtype);
    char name[32] = "";
    if (!c->attr || !pyaclnn_stub_aclop_attr_string(c->attr, "dtype", name, sizeof name))
        return aclop_bad(c, OP, "the required attribute dtype (a string) is missing");
    aclDataType want = strcmp(name, "torch.qint8") == 0 ? ACL_INT8 : strcmp(name, "torch.quint8") == 0 ? ACL_UINT8
                     : strcmp(name, "torch.qint32") == 0 ? ACL_INT32 : ACL_DT_UNDEFINED;
    if (want == ACL_DT_UNDEFINED)
        return aclop_bad(c, OP, "dtype \"%s\" is not torch.qint8, torch.quint8 or torch.qint32", name);
    if (y->dtype != want)
        return aclop_bad(c, OP, "y's dtype %d is not the one dtype \"%s\" names (%d)", (int)y->dtype, name, (int)want);
    int kind;
    int64_t axis = 1;
    float unused;
    pyaclnn_stub_aclop_attr_scalar(c->attr, "axis", &kind, &axis, &unused);
    int64_t n = aclop_count(x);
    if (n < 0 || x->ndim < 1) return aclop_bad(c, OP, "x must have 1 to 8 dims of known size (%d dims)", x->ndim);
    if (axis < -(int64_t)x->ndim || axis >= x->ndim)
        return aclop_bad(c, OP, "axis %lld is out of range for x's %d dims", (long long)axis, x->ndim);
    if (axis < 0) axis += x->ndim;
    int64_t channels = aclop_count(s), dim = x->dims[axis];
    if (channels != 1 && channels != dim)
        return aclop_bad(c, OP, "scales must hold 1 or x.shape[axis] (%lld) values: it holds %lld", (long long)dim,
                   (long long)channels);
    if (has_zp && aclop_count(z) != channels)
        return aclop_bad(c, OP, "zero_points must hold as many values as scales (%lld): it holds %lld", (long long)channels,
                   (long long)aclop_count(z));
    if (aclop_count(y) != n) return aclop_bad(c, OP, "y must have x's element count %lld (it has %lld)", (long long)n, (long long)aclop_count(y));
    size_t xi = float_item(x->dtype), yi = y->dtype == ACL_INT32 ? 4 : 1, si = float_item(s->dtype);
    size_t zi = has_zp ? zp_item(z->dtype) : 0;
    if (c->in_size[0] < (size_t)n * xi || c->out_size[0] < (size_t)n * yi || c->in_size[1] < (size_t)channels * si ||
        (has_zp && c->in_size[2] < (size_t)channels * zi))
        return aclop_bad(c, OP, "the data buffers are smaller than the descriptions (x %zu, scales %zu, zero_points %zu, y %zu "
                   "bytes)", c->in_size[0], c->in_size[1], has_zp ? c->in_size[2] : 0, c->out_size[0]);
    if (n == 0) return ACL_SUCCESS;
    int64_t inner = 1;
    for (int i = (int)axis + 1; i < x->ndim; i++) inner *= x->dims[i];
    quant_task *t = malloc(sizeof *t);
    if (!t) {
        pyaclnn_stub_report(ACL_ERROR_BAD_ALLOC, c->func, "Quantize: out of host memory");
        return ACL_ERROR_BAD_ALLOC;
    }
    *t = (quant_task){c->in_data[0], c->in_data[1], has_zp ? c->in_data[2] : NULL, c->out_data[0], x->dtype, s->dtype,
                      has_zp ? z->dtype : ACL_DT_UNDEFINED, y->dtype, n, channels, inner};
    pyaclnn_stub_access acc[4] = {{c->in_data[0], (uint64_t)n * xi, 0}, {c->in_data[1], (uint64_t)channels * si, 0},
                                  {c->out_data[0], (uint64_t)n * yi, 1}, {c->in_data[2], (uint64_t)channels * zi, 0}};
    return pyaclnn_stub_stream_submit_accesses(c->func, c->stream, quant_run, free, t, "Quantize", acc, has_zp ? 4 : 3);
}
