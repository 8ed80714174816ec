/*
 * Dynamic quantisation: aclnnDynamicQuant, V2, V3 and V4 (hicann/ops-nn quant/dynamic_quant: op_api
 * aclnn_dynamic_quant.cpp, the L0 ops DynamicQuant / DynamicQuantV2, their tilings and kernels). Definitions:
 * dynamic_quant.toml.
 *
 * Per row (pertoken) of v = x (* smoothScales, the group's row of them with groupIndex), in fp32 (x widened exactly):
 *   Atlas A2 / A3 (op_kernel/dynamic_quant_*.h), symmetric, M = 127 (INT8) or 7 (INT4):
 *     q = M / max|v| (fp32 division); y = Cast(v * q) with CAST_RINT, saturating (int32/int16 -> fp16 -> int8);
 *     scale = max|v| * fp32(1 / M) in the multi-row, double-buffer and special-last-dim templates (S1), or
 *     1 / q (the scalar unit) in the plain, large-shape and MoE templates (S2): the tiling's choice, modelled.
 *   Atlas A2 / A3, asymmetric (V2 with offsetOut), R = 255 / 15, O = 127 / 7:
 *     scale = max((max v - min v) / R, 1e-12); offset = O - max v / scale; y = Cast(v * (1 / scale) + offset).
 *   Ascend 950 (op_kernel/arch35, the full-load templates), M = 127, 7, 57344 (E5M2), 448 (E4M3FN) or dstTypeMax
 *   (HIFLOAT8, 0 meaning 32768):
 *     symmetric: scale = max|v| * fp32(1 / M); y = Cast(v / scale);
 *     asymmetric: scale = (max v - min v) * fp32(1 / 2M'), M' = M except INT8 255 / 2, INT4 15 / 2 (no floor);
 *       offset = M - max v / scale; y = Cast(v / scale + offset).
 *     Casts: integers as on A2; FP8 CAST_RINT saturating; HIFLOAT8 CAST_ROUND saturating; NaN -> 0.
 * groupIndex (MoE): cumulative row ends of each group, its smooth-scale row found as the kernel's GetSmoothIndex
 * walks them in one pass (the first later group whose end is >= the row number; none: the next group, which the
 * emulator clamps to the last one where the device would read past smoothScales).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/dtype.h"
#include "kernels/view.h"
#include "numerics/numerics.h"
#include "opbase/checks.h"
#include "ops_decls.h"

typedef struct {
    int64_t rows, n;        /* pertoken rows (x's leading dims) and row length                        */
    int64_t groups;         /* MoE: smoothScales' rows (groupIndex elements); 0: none                  */
    int smooth;             /* smoothScales given                                                      */
    int asym;               /* offset written                                                          */
    int soc950;
    int s1;                 /* A2 symmetric: scale = max * fp32(1/M) (else 1 / q)                       */
    int y_int32;            /* y is INT32: 8 INT4 codes per word                                       */
    int group64;            /* groupIndex INT64                                                        */
    aclDataType y;          /* the L0 output dtype (INT4 for INT32 y)                                  */
    float dst_max;          /* 950 HIFLOAT8's M                                                        */
    int mode;               /* DQ_PERTOKEN, DQ_PERTENSOR, DQ_PERCHANNEL (Ascend 950: V3 / V4)            */
    int64_t m;              /* perchannel: x's second-to-last dim (the rows each scale spans)          */
} dq_params;

enum { DQ_PERTOKEN = 0, DQ_PERTENSOR = 1, DQ_PERCHANNEL = 2 };

static const char *dq_mode(const op_call *c, const op_step *s, int k) {
    const char *m = k < s->np ? (const char *)op_argument(c, s, k)->p : "pertoken";
    return m;
}

/* ---- steps ---------------------------------------------------------------------------------- */

/* dq_soc: V3 / V4 run on Ascend 950 only (ACLNN_ERR_INNER before any other check). */
aclnnStatus opc_dq_soc(op_call *c, const op_step *s) {
    (void)s;
    if (ew_soc_is_950()) return ACLNN_SUCCESS;
    char name[64];
    snprintf(name, sizeof name, "%s", c->api);
    char *w = strstr(name, "GetWorkspaceSize");
    if (w) *w = 0;
    return op_failf(c->api, ACLNN_ERR_INNER, "%s only support socVersion Ascend950", name);
}

/* dq_not_null x y scale: CheckNotNull's messages, then "One of the required inputs is nullptr." */
aclnnStatus opc_dq_not_null(op_call *c, const op_step *s) {
    for (int k = 0; k < s->np; k++) {
        if (op_argument(c, s, k)->p != NULL) continue;
        return op_failf(c->api, ACLNN_ERR_PARAM_NULLPTR, "%s must not be nullptr. One of the required inputs is nullptr.",
                        op_pname(c, s, k));
    }
    return ACLNN_SUCCESS;
}

static const pyaclnn_stub_tensor dq_absent;

/* Operand k's snapshot, or an absent tensor when the operator has no such parameter (V1). */
static const pyaclnn_stub_tensor *dq_opt(op_call *c, const op_step *s, int k) {
    return k < s->np ? op_tensor(c, s, k) : &dq_absent;
}

/* dq_attr [offset groupIndex [isSymmetrical quantMode]]: CheckAttr (V1 / V2: symmetric iff offset is NULL, pertoken). */
aclnnStatus opc_dq_attr(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *off = dq_opt(c, s, 0), *grp = dq_opt(c, s, 1);
    int sym = s->np > 2 ? op_argument(c, s, 2)->i != 0 : !off->present;
    if (sym && off->present) return op_invalidf(c->api, "If isSymmetrical is True, offset must be nullptr.");
    if (!sym && !off->present) return op_invalidf(c->api, "If isSymmetrical is False, offset can't be nullptr.");
    const char *mode = dq_mode(c, s, 3);
    if (mode == NULL) return op_failf(c->api, ACLNN_ERR_PARAM_NULLPTR, "quantMode must not be nullptr.");
    if (strcmp(mode, "pertensor") && strcmp(mode, "pertoken") && strcmp(mode, "perchannel"))
        return op_invalidf(c->api, "quantMode only support pertensor, pertoken and perchannel.");
    if (!strcmp(mode, "perchannel") && grp->present)
        return op_invalidf(c->api, "If quantMode is perchannel, groupIndexOptional must be nullptr.");
    return ACLNN_SUCCESS;
}

static aclnnStatus dq_not_supported(op_call *c, const char *name, aclDataType dt, const op_dtype_list *l) {
    size_t n;
    const aclDataType *list = op_list(l, &n);
    if (ew_in_list(dt, list, n)) return ACLNN_SUCCESS;
    char b[24], all[256];
    return op_invalidf(c->api, "Tensor %s not implemented for %s, should be in dtype support list [%s]. invalid dtype.",
                       name, op_dtype_name(dt, b), ew_dtype_list(list, n, all, sizeof all));
}

/* dq_dtype p LIST: OP_CHECK_DTYPE_NOT_SUPPORT (an absent optional operand passes). */
aclnnStatus opc_dq_dtype(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *t = op_tensor(c, s, 0);
    return t->present ? dq_not_supported(c, op_pname(c, s, 0), t->dtype, s->list) : ACLNN_SUCCESS;
}

/* dq_smooth smooth x LIST: a given smoothScales in LIST and of x's dtype. */
aclnnStatus opc_dq_smooth(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *sm = op_tensor(c, s, 0), *x = op_tensor(c, s, 1);
    if (!sm->present) return ACLNN_SUCCESS;
    aclnnStatus rc = dq_not_supported(c, op_pname(c, s, 0), sm->dtype, s->list);
    if (rc) return rc;
    if (sm->dtype != x->dtype) return op_invalidf(c->api, "The dtypes of x and smooth_scales are not equal. invalid dtype.");
    return ACLNN_SUCCESS;
}

/* dq_group group smooth LIST: groupIndex's dtype, checked only with smoothScales. */
aclnnStatus opc_dq_group(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *g = op_tensor(c, s, 0), *sm = op_tensor(c, s, 1);
    if (!sm->present || !g->present) return ACLNN_SUCCESS;
    return dq_not_supported(c, op_pname(c, s, 0), g->dtype, s->list);
}

/* dq_float p ...: OP_CHECK_DTYPE_NOT_MATCH against FLOAT (absent optional operands pass). */
aclnnStatus opc_dq_float(op_call *c, const op_step *s) {
    for (int k = 0; k < s->np; k++) {
        const pyaclnn_stub_tensor *t = op_tensor(c, s, k);
        if (!t->present || t->dtype == ACL_FLOAT) continue;
        char b[24];
        return op_invalidf(c->api, "Tensor %s expected dtype is FLOAT but found %s. invalid dtype.", op_pname(c, s, k),
                           op_dtype_name(t->dtype, b));
    }
    return ACLNN_SUCCESS;
}

static int dq_dims_equal(const pyaclnn_stub_tensor *a, const pyaclnn_stub_tensor *b, int64_t na, int64_t nb) {
    if (na != nb) return 0;
    for (int64_t i = 0; i < na; i++)
        if (a->shape[i] != b->shape[i]) return 0;
    return 1;
}

/* dq_shapes x smooth y scale [group offset [quantMode]]: CheckShape in its order. */
aclnnStatus opc_dq_shapes(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0), *sm = op_tensor(c, s, 1), *y = op_tensor(c, s, 2),
                              *sc = op_tensor(c, s, 3), *g = dq_opt(c, s, 4), *of = dq_opt(c, s, 5);
    const char *mode = dq_mode(c, s, 6);
    int64_t nd = x->ndim;
    if (nd <= 1) return op_invalidf(c->api, "The dimNum[%lld] of x should be greater than 1", (long long)nd);
    if (nd >= 9) return op_invalidf(c->api, "The dimNum[%lld] of x should be less than 9", (long long)nd);
    int64_t last = x->shape[nd - 1], second = x->shape[nd - 2];
    if (sm->present) {
        if (g->present) {
            if (g->ndim != 1)
                return op_invalidf(c->api, "The dimNum[%lld] of group_indexs should be equal to one.", (long long)g->ndim);
        } else {
            if (sm->ndim != 1)
                return op_invalidf(c->api, "The dimNum[%lld] of smooth_scales should be equal to one.", (long long)sm->ndim);
            int64_t sl = sm->shape[0];
            if (!strcmp(mode, "perchannel")) {
                if (sl != second)
                    return op_invalidf(c->api, "If quantMode is perchannel, the second to last dim[%lld] of x and the last "
                                       "dim[%lld] of smooth_scales shoule be equal.", (long long)second, (long long)sl);
            } else if (sl != last) {
                return op_invalidf(c->api, "The last dim[%lld] of x and the dim[%lld] of smooth_scales shoule be equal.",
                                   (long long)last, (long long)sl);
            }
        }
    }
    if (y->dtype != ACL_INT32) {
        if (!dq_dims_equal(x, y, nd, y->ndim)) return op_invalidf(c->api, "The shapes of x and y are inconsistent.");
    } else {
        if (y->ndim != nd) return op_invalidf(c->api, "The shapes of x and y are inconsistent (int32 y).");
        if (last != y->shape[nd - 1] * 8)
            return op_invalidf(c->api, "If output dtype is int32, the last dimension of output must be 1/8 of the last "
                               "dimension of input, the last dim of input is (%lld), the last dim of output is (%lld).",
                               (long long)last, (long long)y->shape[nd - 1]);
        for (int64_t i = 0; i < nd - 1; i++)
            if (x->shape[i] != y->shape[i])
                return op_invalidf(c->api, "The (%lld)-th dim of input must be the same as (%lld)-th dim of output, where "
                                   "input is (%lld) and output is (%lld).", (long long)i, (long long)i,
                                   (long long)x->shape[i], (long long)y->shape[i]);
    }
    if (y->dtype == ACL_INT4 && last % 2)
        return op_invalidf(c->api, "If y dtype is int4, the last dim of x must be divisible by 2, but the last dim is "
                           "(%lld).", (long long)last);
    if (!strcmp(mode, "pertoken")) {
        if (!dq_dims_equal(x, sc, nd - 1, sc->ndim))
            return op_invalidf(c->api, "The shapes of x and scale should be consistent except for the last dimension of x.");
    } else if (!strcmp(mode, "pertensor")) {
        if (sc->ndim != 1 || sc->shape[0] != 1)
            return op_invalidf(c->api, "If quantMode is pertensor, the shape of scale must be (1,).");
    } else {
        int ok = sc->ndim == nd - 1;
        for (int64_t i = 0; ok && i < nd - 2; i++) ok = x->shape[i] == sc->shape[i];
        if (!ok)
            return op_invalidf(c->api, "If quantMode is perchannel, the shapes of x excluding the last two dimensions must "
                               "be the same as the shape of scale excluding the last dimension.");
        if (sc->shape[sc->ndim - 1] != last)
            return op_invalidf(c->api, "If quantMode is perchannel, the last dim of scale must be equal to the last dim of x.");
    }
    if (of->present && !dq_dims_equal(of, sc, of->ndim, sc->ndim)) {
        char a[200], b[200];
        return op_invalidf(c->api, "Expected tensor for %s to have same size as tensor for %s, but %s does not equal %s.",
                           op_pname(c, s, 5), op_pname(c, s, 3), tv_shape_text(of->shape, of->ndim, a, sizeof a),
                           tv_shape_text(sc->shape, sc->ndim, b, sizeof b));
    }
    return ACLNN_SUCCESS;
}

static int dq_empty_t(const pyaclnn_stub_tensor *t) {
    for (int64_t i = 0; i < t->ndim; i++)
        if (t->shape[i] == 0) return 1;
    return 0;
}

/* dq_empty x y scale: an empty x, y or scale: success, nothing launched. */
aclnnStatus opc_dq_empty(op_call *c, const op_step *s) {
    for (int k = 0; k < s->np; k++)
        if (dq_empty_t(op_tensor(c, s, k))) {
            c->nothing = 1;
            c->done = 1;
            return ACLNN_SUCCESS;
        }
    return ACLNN_SUCCESS;
}

/* The L0 op's tiling refuses: the op_api's CHECK_RET on the L0 result returns ACLNN_ERR_INNER_NULLPTR. */
#define dq_reject(c, ...) op_failf((c)->api, ACLNN_ERR_INNER_NULLPTR, "DynamicQuant tiling failed: " __VA_ARGS__)

/* A2's template choice for a symmetric call without groups (dynamic_quant_tiling.cpp): S1 (scale = max * (1/M))
 * unless the large-shape or plain template runs. */
static int dq_a2_s1(int64_t rows, int64_t n, int smooth, int group_given, aclDataType y) {
    const int64_t ub = 196608, reserved = 1024;
    if (!group_given) {   /* a groupIndex (even without smooth scales) rules out keys 100 and 10 */
        if (y == ACL_INT8 && (n == 4096 || n == 5120 || n == 10240) && rows >= 4 && rows <= 384) return 1; /* 100 */
        int64_t max_ub_len = ub - reserved - (256 + 64 + 12 * 64 * 4);
        max_ub_len = max_ub_len / (smooth ? 15 : 11) / 64 * 64;
        if (max_ub_len > 255 * 64) max_ub_len = 255 * 64;
        if (n >= 128 && n <= max_ub_len && n % 8 == 0) return 1;                                        /* key 10 */
    }
    int64_t aligned = (n + 15) / 16 * 16, max_use = ub - reserved;
    int64_t per_row_new = (smooth ? 17 : 11) * aligned, per_row = (smooth ? 19 : 13) * aligned;
    if (max_use / per_row_new == 0) return 0;                                                           /* key 6 */
    return per_row < max_use;                                                                           /* keys 2/3 : 0/1 */
}

/* dq_plan x smooth y scale [group offset [quantMode [dstTypeMax]]]: the L0 op's tiling checks (DynamicQuant on A2
 * when symmetric, DynamicQuantV2 otherwise and always on Ascend 950) and the kernel's parameters. */
aclnnStatus opc_dq_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0), *sm = op_tensor(c, s, 1), *y = op_tensor(c, s, 2),
                              *g = dq_opt(c, s, 4), *of = dq_opt(c, s, 5);
    double dmax = s->np > 7 ? op_argument(c, s, 7)->d : 0.0;
    const char *mode = dq_mode(c, s, 6);
    int perchannel = !strcmp(mode, "perchannel");
    int soc950 = ew_soc_is_950();
    int64_t nd = x->ndim, n = x->shape[nd - 1], rows = 1;
    for (int64_t i = 0; i < nd - 1; i++) rows *= x->shape[i];
    int64_t groups = 0;
    /* the tiling's dtype checks come before its shape checks */
    if (sm->present && g->present && g->dtype != ACL_INT32) return dq_reject(c, "group_index dtype must be DT_INT32.");
    if (sm->present) {
        if (g->present) {
            groups = g->ndim > 0 ? g->shape[g->ndim - 1] : 0;
            if (soc950 && groups <= 0)
                return dq_reject(c, "The value of group_index must be within the range [1, 1024] (groupNum %lld).",
                                 (long long)groups);
            if (groups > 1024)
                return dq_reject(c, "The value of groupNum must be less than or equal to 1024 (groupNum %lld).",
                                 (long long)groups);
        }
        if (groups >= 1) {
            if (sm->ndim != 2)
                return dq_reject(c, "When groupNum is more than 0, the shape dim of smooth_scales must be equal to 2.");
            if (sm->shape[0] != groups)
                return dq_reject(c, "The value of smooth_scales first dim (%lld) and group_num (%lld) must be the same.",
                                 (long long)sm->shape[0], (long long)groups);
        } else if (sm->ndim != 1) {
            return dq_reject(c, "The shape dim of smooth_scales must be 1.");
        }
        int64_t want = perchannel ? x->shape[nd - 2] : n;
        if (sm->shape[sm->ndim - 1] != want)
            return dq_reject(c, "The shapes of x and smooth_scales on the %s dim must be the same (%lld, %lld).",
                             perchannel ? "second-to-last" : "last", (long long)want, (long long)sm->shape[sm->ndim - 1]);
    }
    if (soc950 && (dmax > 32768.0 || dmax < 0))
        return dq_reject(c, "The value of dst_type_max must be within the range [0, 32768] (%g).", dmax);
    dq_params *p = op_params(c, sizeof *p);
    p->rows = rows;
    p->n = n;
    p->groups = groups;
    p->smooth = sm->present;
    p->asym = of->present;
    p->soc950 = soc950;
    p->y_int32 = y->dtype == ACL_INT32;
    p->y = p->y_int32 ? ACL_INT4 : y->dtype;
    p->group64 = 0;
    p->dst_max = fabs(dmax) < 1.1920929e-07 ? 32768.0f : (float)dmax;
    p->mode = !strcmp(mode, "pertensor") ? DQ_PERTENSOR : !strcmp(mode, "perchannel") ? DQ_PERCHANNEL : DQ_PERTOKEN;
    p->m = x->shape[nd - 2];
    p->s1 = !soc950 && !p->asym && groups == 0 && dq_a2_s1(rows, n, sm->present, g->present, p->y);
    return ACLNN_SUCCESS;
}

/* ---- kernel --------------------------------------------------------------------------------- */

static float dq_max_of(aclDataType y, float dst_max) {
    switch (y) {
    case ACL_INT4: return 7.0f;
    case ACL_FLOAT8_E5M2: return 57344.0f;
    case ACL_FLOAT8_E4M3FN: return 448.0f;
    case ACL_HIFLOAT8: return dst_max;
    default: return 127.0f;
    }
}

/* The 950 asymmetric range (the kernels' *_OFFSET_VALUE: 255, 15, 114688, 896, 2 * dstTypeMax). */
static float dq_range_of(aclDataType y, float dst_max) {
    switch (y) {
    case ACL_INT4: return 15.0f;
    case ACL_FLOAT8_E5M2: return 114688.0f;
    case ACL_FLOAT8_E4M3FN: return 896.0f;
    case ACL_HIFLOAT8: return dst_max * 2.0f;
    default: return 255.0f;
    }
}

/* One code per element (INT4: -8..7 in an int8). */
static void dq_encode(aclDataType y, const float *v, uint8_t *out, int64_t n) {
    for (int64_t j = 0; j < n; j++) {
        switch (y) {
        case ACL_INT8: out[j] = (uint8_t)num_f32_to_int8(v[j], NUM_RINT | NUM_SAT); break;
        case ACL_INT4: out[j] = (uint8_t)num_f32_to_int4(v[j], NUM_RINT | NUM_SAT); break;
        case ACL_FLOAT8_E4M3FN: out[j] = num_f32_to_fp8_e4m3fn(v[j], NUM_RINT | NUM_SAT | NUM_NAN_TO_ZERO); break;
        case ACL_FLOAT8_E5M2: out[j] = num_f32_to_fp8_e5m2(v[j], NUM_RINT | NUM_SAT | NUM_NAN_TO_ZERO); break;
        case ACL_HIFLOAT8: out[j] = num_f32_to_hif8(v[j], NUM_ROUND | NUM_SAT | NUM_NAN_TO_ZERO); break;
        default: out[j] = 0; break;
        }
    }
}

/* The smooth-scale row of each row: GetSmoothIndex's one pass over the cumulative ends. */
static void dq_group_rows(const dq_params *p, const unsigned char *gb, int64_t *grp) {
    int64_t idx = 0;
    int64_t gv = p->group64 ? ((const int64_t *)gb)[0] : ((const int32_t *)gb)[0];
    for (int64_t r = 0; r < p->rows; r++) {
        int64_t real = r + 1;
        if (gv < real) {
            int64_t start = idx + 1, found = start;
            for (int64_t k = start; k < p->groups; k++) {
                gv = p->group64 ? ((const int64_t *)gb)[k] : ((const int32_t *)gb)[k];
                if (gv >= real) {
                    found = k;
                    break;
                }
            }
            idx = found < p->groups ? found : p->groups - 1;
        }
        grp[r] = idx;
    }
}

/* y of INT4 dtype: the codes written nibble by nibble through the view (element units are 4-bit). */
static void dq_store_int4(const pyaclnn_stub_tensor *t, const uint8_t *codes, int64_t count) {
    int64_t idx[PYACLNN_STUB_MAX_DIMS] = {0};
    uint8_t *base = t->data;
    for (int64_t e = 0; e < count; e++) {
        int64_t off = t->offset;
        for (int64_t d = 0; d < t->ndim; d++) off += idx[d] * t->strides[d];
        uint8_t *b = base + off / 2, v = codes[e] & 0x0F;
        *b = off % 2 ? (uint8_t)((*b & 0x0F) | (v << 4)) : (uint8_t)((*b & 0xF0) | v);
        for (int64_t d = t->ndim - 1; d >= 0; d--) {
            if (++idx[d] < t->shape[d]) break;
            idx[d] = 0;
        }
    }
}

/* The scale / offset of one set of elements (v[idx0 + k * step], k < cnt), then the quantised values in place. */
static void dq_set(const dq_params *p, float *v, int64_t idx0, int64_t step, int64_t cnt, float *scale, float *offset) {
    float M = dq_max_of(p->y, p->dst_max);
    float mx = -INFINITY, mn = INFINITY, amax = -INFINITY;
    for (int64_t k = 0; k < cnt; k++) {
        float e = v[idx0 + k * step], a = fabsf(e);
        if (!(a <= amax)) amax = isnan(amax) ? amax : a;      /* NaN sticks */
        if (!(e <= mx)) mx = isnan(mx) ? mx : e;
        if (!(e >= mn)) mn = isnan(mn) ? mn : e;
    }
    float sc, of = 0.0f;
    if (p->soc950) {
        if (!p->asym) {
            sc = amax * (1.0f / M);
            for (int64_t k = 0; k < cnt; k++) v[idx0 + k * step] = v[idx0 + k * step] / sc;
        } else {
            sc = (mx - mn) * (1.0f / dq_range_of(p->y, p->dst_max));
            float d = mx / sc;
            of = M - d;
            for (int64_t k = 0; k < cnt; k++) {
                float t = v[idx0 + k * step] / sc;
                v[idx0 + k * step] = t + of;
            }
        }
    } else if (!p->asym) {
        float qm = M / amax;
        sc = p->s1 ? amax * (1.0f / M) : 1.0f / qm;
        for (int64_t k = 0; k < cnt; k++) v[idx0 + k * step] = v[idx0 + k * step] * qm;
    } else {
        float rng = p->y == ACL_INT4 ? 15.0f : 255.0f, o = p->y == ACL_INT4 ? 7.0f : 127.0f;
        float d = (mx - mn) / rng;
        sc = d > 1e-12f ? d : 1e-12f;
        of = o - mx / sc;
        float back = 1.0f / sc;
        for (int64_t k = 0; k < cnt; k++) {
            float t = v[idx0 + k * step] * back;
            v[idx0 + k * step] = t + of;
        }
    }
    *scale = sc;
    *offset = of;
}

void dynamic_quant_kernel(const pyaclnn_stub_launch *launch) {
    const dq_params *p = launch->params;
    if (!tv_launch_views_ok(launch)) return;
    int64_t R = p->rows, N = p->n, total = R * N;
    int64_t ns = p->mode == DQ_PERTOKEN ? R : p->mode == DQ_PERTENSOR ? 1 : (R / p->m) * N;
    float *x = tv_load_float(&launch->inputs[0]);
    float *sm = p->smooth ? tv_load_float(&launch->inputs[1]) : NULL;
    unsigned char *gb = p->groups ? tv_gather_bytes(&launch->inputs[2]) : NULL;
    int64_t *grp = p->groups ? tv_alloc(R, sizeof(int64_t)) : NULL;
    uint8_t *codes = tv_alloc(total, 1);
    float *scale = tv_alloc(ns, sizeof(float)), *offset = tv_alloc(ns, sizeof(float));
    if (!x || (p->smooth && !sm) || (p->groups && (!gb || !grp)) || !codes || !scale || !offset) {
        tv_fail_oom(launch);
        goto out;
    }
    dq_params q = *p;
    q.group64 = p->groups && launch->inputs[2].dtype == ACL_INT64;
    if (p->groups) dq_group_rows(&q, gb, grp);
    if (sm) {
        for (int64_t r = 0; r < R; r++) {
            float *v = x + r * N;
            if (p->mode == DQ_PERCHANNEL) {
                float f = sm[r % p->m];
                for (int64_t j = 0; j < N; j++) v[j] = v[j] * f;
            } else {
                const float *srow = sm + (p->groups ? grp[r] * N : 0);
                for (int64_t j = 0; j < N; j++) v[j] = v[j] * srow[j];
            }
        }
    }
    if (p->mode == DQ_PERTOKEN) {
        for (int64_t r = 0; r < R; r++) dq_set(p, x, r * N, 1, N, &scale[r], &offset[r]);
    } else if (p->mode == DQ_PERTENSOR) {
        dq_set(p, x, 0, 1, total, &scale[0], &offset[0]);
    } else {
        for (int64_t b = 0; b < R / p->m; b++)
            for (int64_t j = 0; j < N; j++)
                dq_set(p, x, b * p->m * N + j, N, p->m, &scale[b * N + j], &offset[b * N + j]);
    }
    dq_encode(p->y, x, codes, total);
    const pyaclnn_stub_tensor *y = &launch->outputs[0];
    if (p->y_int32) {
        /* 8 codes per little-endian word: pairs into bytes (element 2k in the low nibble), bytes into words */
        for (int64_t i = 0; i < total / 2; i++)
            codes[i] = (uint8_t)((codes[2 * i] & 0x0F) | ((codes[2 * i + 1] & 0x0F) << 4));
        tv_scatter_bytes(y, codes);
    } else if (p->y == ACL_INT4) {
        dq_store_int4(y, codes, total);
    } else {
        tv_scatter_bytes(y, codes);
    }
    tv_store_float(&launch->outputs[1], scale);
    if (p->asym && launch->outputs[2].present) tv_store_float(&launch->outputs[2], offset);
out:
    free(x), free(sm), free(gb), free(grp), free(codes), free(scale), free(offset);
}
