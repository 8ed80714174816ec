/*
 * aclnnTransQuantParamV2 / V3 (hicann/ops-nn quant/trans_quant_param_v2: op_api aclnn_trans_quant_param_v2.cpp, the
 * kernel op_kernel/trans_quant_param_v2.h). Definitions: trans_quant_param.toml.
 *
 * out[i] = S(scale[i]) | 1 << 46 | (clamp(rint(offset[i]), -256, 255) & 0x1FF) << 37, a length-1 scale or offset
 * broadcast over the other; S: roundMode 0 keeps the fp32 bits & 0xFFFFE000 (the top 19 bits), roundMode 1 (V3)
 * rounds the mantissa to 10 bits to nearest even (exponent 0: the sign alone; exponent 255 truncated; a carry past
 * exponent 254 gives exponent 255, mantissa 0), shifted back into place. The offset goes through the vector Cast
 * CAST_RINT to int32 (NaN -> 0, saturating) and Maxs / Mins.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/view.h"
#include "numerics/numerics.h"
#include "opbase/checks.h"
#include "ops_decls.h"

typedef struct {
    int64_t scale_len, offset_len, out_len;
    int round_mode;
} tqp_params;

static int64_t tqp_numel(const pyaclnn_stub_tensor *t) {
    int64_t n = 1;
    for (int64_t i = 0; i < t->ndim; i++) n *= t->shape[i];
    return n;
}

/* tqp_format scale offset out: every given tensor's storage format ND (CheckFormat: CHECK_RET, no message of its own). */
aclnnStatus opc_tqp_format(op_call *c, const op_step *s) {
    for (int k = 0; k < s->np; k++) {
        const pyaclnn_stub_tensor *t = op_tensor(c, s, k);
        if (t->present && t->format != ACL_FORMAT_ND)
            return op_invalidf(c->api, "the storage format of %s must be ND", op_pname(c, s, k));
    }
    return ACLNN_SUCCESS;
}

/* tqp_shapes scale offset [roundMode]: CheckShape (scale (n,) or (1, n); Ascend 950 also (g, n); offset (n,) or
 * (1, n), equal to scale's when both 1-D and longer than 1; roundMode 0 or 1). */
aclnnStatus opc_tqp_shapes(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *sc = op_tensor(c, s, 0), *of = op_tensor(c, s, 1);
    int64_t rm = s->np > 2 ? op_argument(c, s, 2)->i : 0;
    char b[200];
    int one = sc->ndim == 1 && sc->shape[0] > 0;
    if (ew_soc_is_950()) {
        if (!(one || (sc->ndim == 2 && sc->shape[0] > 0 && sc->shape[1] > 0)))
            return op_invalidf(c->api, "Dim value of scale should be greater than 0, but current is %s",
                               tv_shape_text(sc->shape, sc->ndim, b, sizeof b));
    } else if (!(one || (sc->ndim == 2 && sc->shape[0] == 1 && sc->shape[1] > 0))) {
        return op_invalidf(c->api, "shape of scale only support (n, ) and (1, n), but current is %s",
                           tv_shape_text(sc->shape, sc->ndim, b, sizeof b));
    }
    if (of->present) {
        if (!((of->ndim == 1 && of->shape[0] > 0) || (of->ndim == 2 && of->shape[0] == 1 && of->shape[1] > 0)))
            return op_invalidf(c->api, "shape of offset only support (n, ) and (1, n), but current is %s",
                               tv_shape_text(of->shape, of->ndim, b, sizeof b));
        if (of->ndim == 1 && sc->shape[0] > 1 && of->shape[0] > 1 && sc->shape[0] != of->shape[0])
            return op_invalidf(c->api, "scale and offset should be same when both greater than 1, but scale is %lld, "
                               "offset is %lld", (long long)sc->shape[0], (long long)of->shape[0]);
    }
    if (rm != 0 && rm != 1) return op_invalidf(c->api, "roundMode only support 0 and 1, but current is %lld", (long long)rm);
    return ACLNN_SUCCESS;
}

/* tqp_plan scale offset out [roundMode]: the kernel's lengths. It writes max(scale, offset) words and reads both
 * that far unless of length 1: the emulator refuses what would make it read or write past a tensor (561103). */
aclnnStatus opc_tqp_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *sc = op_tensor(c, s, 0), *of = op_tensor(c, s, 1), *out = op_tensor(c, s, 2);
    int64_t ls = tqp_numel(sc), lo = of->present ? tqp_numel(of) : 0, n = ls > lo ? ls : lo;
    if ((ls > 1 && ls < n) || (lo > 1 && lo < n))
        return op_failf(c->api, ACLNN_ERR_INNER_NULLPTR, "TransQuantParamV2: scale (%lld) and offset (%lld) elements "
                        "differ: the kernel would read past the shorter one", (long long)ls, (long long)lo);
    if (tqp_numel(out) < n)
        return op_failf(c->api, ACLNN_ERR_INNER_NULLPTR, "TransQuantParamV2: out has %lld elements, the kernel writes "
                        "%lld", (long long)tqp_numel(out), (long long)n);
    tqp_params *p = op_params(c, sizeof *p);
    p->scale_len = ls;
    p->offset_len = lo;
    p->out_len = tqp_numel(out);
    p->round_mode = s->np > 3 ? (int)op_argument(c, s, 3)->i : 0;
    return ACLNN_SUCCESS;
}

static uint64_t tqp_scale_bits(float f, int round_mode) {
    uint32_t u;
    memcpy(&u, &f, 4);
    if (round_mode == 0) return (uint64_t)(u & 0xFFFFE000u) | (1ull << 46);
    uint32_t sign = u >> 31 & 1, exp = u >> 23 & 0xFF, man = u & 0x7FFFFF, m19 = man >> 13;
    uint32_t round = man >> 12 & 1, sticky = man & 0xFFF, fp19;
    if (exp == 0) {
        fp19 = sign << 18;
    } else if (exp == 255) {
        fp19 = sign << 18 | exp << 10 | m19;
    } else {
        if (round && (sticky || (m19 & 1))) {
            if (++m19 >= 1u << 10) m19 = 0, exp++;
        }
        fp19 = exp > 255 ? (sign << 18 | 255u << 10) : (sign << 18 | exp << 10 | m19);
    }
    return (uint64_t)fp19 << 13 | (1ull << 46);
}

static uint64_t tqp_offset_bits(float f) {
    int32_t v = num_f32_to_int32(f, NUM_RINT | NUM_SAT);
    v = v < -256 ? -256 : v > 255 ? 255 : v;
    return ((uint64_t)(int64_t)v & 0x1FFull) << 37;
}

void trans_quant_param_kernel(const pyaclnn_stub_launch *launch) {
    const tqp_params *p = launch->params;
    if (!tv_launch_views_ok(launch)) return;
    float *sc = tv_load_float(&launch->inputs[0]);
    float *of = p->offset_len ? tv_load_float(&launch->inputs[1]) : NULL;
    const pyaclnn_stub_tensor *out = &launch->outputs[0];
    uint64_t *o = tv_alloc(p->out_len, sizeof(uint64_t));
    if (!sc || (p->offset_len && !of) || !o) {
        tv_fail_oom(launch);
    } else {
        unsigned char *cur = tv_gather_bytes(out);   /* the words past max(scale, offset) stay as they were */
        if (!cur) {
            tv_fail_oom(launch);
        } else {
            memcpy(o, cur, (size_t)p->out_len * sizeof(uint64_t));
            int64_t n = p->scale_len > p->offset_len ? p->scale_len : p->offset_len;
            for (int64_t i = 0; i < n; i++) {
                uint64_t w = tqp_scale_bits(sc[p->scale_len == 1 ? 0 : i], p->round_mode);
                if (p->offset_len) w |= tqp_offset_bits(of[p->offset_len == 1 ? 0 : i]);
                o[i] = w;
            }
            tv_scatter_bytes(out, (const unsigned char *)o);
            free(cur);
        }
    }
    free(sc), free(of), free(o);
}
