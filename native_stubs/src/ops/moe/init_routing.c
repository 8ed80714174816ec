/*
 * MoE init routing, the op_api forms: aclnnMoeInitRoutingV3 (hicann/ops-transformer moe/moe_init_routing_v3).
 * Definitions: init_routing.toml.
 *
 * The Atlas A2 kernel (op_kernel/moe_init_routing_v3.cpp, its generic templates):
 *  - sort (moe_v3_sort_one_core.h / _multi_core.h): the n * k experts as fp32 keys (CAST_ROUND from int32), a key
 *    below expertStart replaced by the lowest float (after negation), sorted descending on the negated keys, stable:
 *    ascending experts, equal ones in flattened order, those below expertStart last;
 *  - count (moe_v3_expert_tokens_count.h): the run of sorted experts in [start, end) from the first: count[e - start];
 *    m = their total; type 1 writes the actualExpertNum counts (int64), type 2 min(actual + 1, expertNum) pairs
 *    (expert, count) of the non-empty experts in order, then zeros;
 *  - row index: rowIdxType 1 (SCATTER) expandedRowIdx[i] = the sorted source of i for all n * k; 0 (GATHER) -1
 *    everywhere then expandedRowIdx[src_i] = i for i < m (moe_v3_row_idx_gather.h);
 *  - gather (moe_v3_gather_out.h): expandedX[i] = x[src_i / k], expandedScale[i] = scale[src_i / k] when a scale is
 *    given, for i < m; dynamic quant (moe_v3_gather_dynamic_quant.h): v = float(x) (* smooth[e - start]), scale =
 *    max|v| / 127, out = int8(CAST_ROUND(fp16(CAST_TRUNC(v / scale)))), expandedScale[i] = scale; x INT8 gathers
 *    nothing in that mode.
 *
 * The Ascend 950's INT4 dynamic quant (quantMode 13; op_kernel/arch35/moe_v3_gather_dynamic_quant_arch35.h and
 * moe_v3_full_load_dynamic_quant_arch35.h, the rows that fit the UB): v = float(x) (* the one smooth row), amax =
 * max|v|, factor = 7 / amax (0 when amax is 0), expandedScale[i] = amax * (1 / 7), out = int4(CAST_ROUND(fp16(
 * CAST_TRUNC(v * factor)))) saturating, two codes a byte, the even column in the low nibble.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/dtype.h"
#include "kernels/view.h"
#include "numerics/numerics.h"
#include "opbase/checks.h"
#include "ops_decls.h"
#include "ops/moe/moe.h"

typedef struct {
    int64_t n, k, cols, start, end, expert_num;
    int count_type, row_type, quant, has_scale;
    int64_t mx_bytes;   /* MX no-quant (FLOAT8 x, FLOAT8_E8M0 scale): the scale bytes per row, else 0 */
    aclDataType xdt;
} mir3_params;


typedef struct {
    float key;   /* the expert as the kernel's fp32 key; below expertStart: +inf (sorts last) */
    int64_t pos;
} mir3_item;

static int mir3_cmp(const void *a, const void *b) {
    const mir3_item *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

/* One INT4 row (quantMode 13) written in place into the contiguous packed expandedXOut, its scale into *scale. */
static void mir3_int4_row(const mir3_params *p, const unsigned char *xrow, const float *smooth, float *v,
                          const pyaclnn_stub_tensor *out, int64_t row, float *scale) {
    int64_t cols = p->cols;
    size_t es = ew_itemsize(p->xdt);
    float amax = 0.0f;
    for (int64_t j = 0; j < cols; j++) {
        float t = (float)ew_value_to_double(ew_load(xrow + j * (int64_t)es, p->xdt), p->xdt);
        v[j] = smooth ? t * smooth[j] : t;   /* fp32 Mul by the one smooth row */
        float a = v[j] < 0 ? -v[j] : v[j];
        if (a > amax) amax = a;
    }
    float factor = amax == 0.0f ? 0.0f : 7.0f / amax;   /* Div, Select on amax == 0 */
    *scale = amax * (1.0f / 7.0f);                      /* Muls */
    for (int64_t j = 0; j < cols; j++) v[j] = num_f16_to_f32(num_f32_to_f16_mode(v[j] * factor, NUM_TRUNC));
    uint8_t *dst = (uint8_t *)out->data + (out->offset + row * cols) / 2;
    num_f32_to_int4_packed(v, dst, (size_t)cols, NUM_ROUND | NUM_SAT);
}

void moe_init_routing_v3_kernel(const pyaclnn_stub_launch *launch) {
    const mir3_params *p = launch->params;
    if (!tv_launch_views_ok(launch)) return;
    if (p->quant == 13 && !op_view_in_device_memory(&launch->outputs[0], 4)) {
        pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "%s: output 0 view (data %p) is not in device memory",
                               launch->op_name, launch->outputs[0].data);
        return;
    }
    int64_t total = p->n * p->k, cols = p->cols, A = p->end - p->start;
    size_t es = ew_itemsize(p->xdt);
    int32_t *eidx = (int32_t *)tv_gather_bytes(&launch->inputs[1]);
    unsigned char *x = tv_gather_bytes(&launch->inputs[0]);
    float *sc = p->has_scale && !p->mx_bytes ? tv_load_float(&launch->inputs[2]) : NULL;
    unsigned char *mxs = p->mx_bytes ? tv_gather_bytes(&launch->inputs[2]) : NULL;   /* E8M0 bytes, moved as such */
    /* rows not written keep their bytes; INT4 rows are written in place (packed: no byte view) */
    unsigned char *ex = p->quant == 13 ? (unsigned char *)launch->outputs[0].data : tv_gather_bytes(&launch->outputs[0]);
    int32_t *er = tv_alloc(total, sizeof(int32_t));
    int64_t cnt_n = pyaclnn_stub_numel(&launch->outputs[2]);
    int64_t *cnt = (int64_t *)tv_gather_bytes(&launch->outputs[2]);
    unsigned char *es_raw = tv_gather_bytes(&launch->outputs[3]);
    float *es_out = (float *)es_raw;
    mir3_item *it = tv_alloc(total, sizeof(mir3_item));
    int64_t *count = tv_alloc(A, sizeof(int64_t));
    float *v = tv_alloc(cols, sizeof(float));
    if (!eidx || !x || (p->has_scale && !sc && !mxs) || !ex || !er || !cnt || !es_out || !it || !count || !v) {
        tv_fail_oom(launch);
        goto done;
    }
    for (int64_t i = 0; i < total; i++) {
        int64_t e = eidx[i];
        it[i] = (mir3_item){e < p->start ? __builtin_inff() : moe_expert_key(e), i};
    }
    qsort(it, (size_t)total, sizeof *it, mir3_cmp);
    int64_t m = 0;   /* the sorted entries in [start, end): the first m */
    memset(count, 0, (size_t)A * sizeof(int64_t));
    while (m < total && it[m].key < (float)p->end) count[(int64_t)it[m].key - p->start]++, m++;
    if (p->count_type == 2) {
        int64_t w = (A + 1 < p->expert_num ? A + 1 : p->expert_num) * 2, o = 0;
        for (int64_t j = 0; j < w && j < cnt_n; j++) cnt[j] = 0;
        for (int64_t e = 0; e < A; e++)
            if (count[e] != 0 && o + 1 < cnt_n) cnt[o] = e + p->start, cnt[o + 1] = count[e], o += 2;
    } else {
        for (int64_t e = 0; e < A && e < cnt_n; e++) cnt[e] = count[e];
    }
    if (p->row_type == 1) {
        for (int64_t i = 0; i < total; i++) er[i] = (int32_t)it[i].pos;
    } else {
        for (int64_t i = 0; i < total; i++) er[i] = -1;
        for (int64_t i = 0; i < m; i++) er[it[i].pos] = (int32_t)i;
    }
    for (int64_t i = 0; i < m; i++) {
        int64_t src = it[i].pos / p->k;
        if (p->quant == 13) {
            mir3_int4_row(p, x + src * cols * (int64_t)es, sc, v, &launch->outputs[0], i, es_out + i);
            continue;
        }
        if (p->quant != 1) {
            memcpy(ex + i * cols * (int64_t)es, x + src * cols * (int64_t)es, (size_t)cols * es);
            if (p->mx_bytes) memcpy(es_raw + i * p->mx_bytes, mxs + src * p->mx_bytes, (size_t)p->mx_bytes);
            else if (p->has_scale) es_out[i] = sc[src];
            continue;
        }
        if (p->xdt == ACL_INT8) continue;   /* the kernel's dynamic-quant gather is compiled out for INT8 x */
        const float *sm = p->has_scale ? sc + ((int64_t)it[i].key - p->start) * cols : NULL;
        float amax = 0.0f;
        for (int64_t j = 0; j < cols; j++) {
            float t = (float)ew_value_to_double(ew_load(x + (src * cols + j) * (int64_t)es, p->xdt), p->xdt);
            v[j] = sm ? t * sm[j] : t;   /* fp32 Mul */
            float a = v[j] < 0 ? -v[j] : v[j];
            if (a > amax) amax = a;   /* ReduceMax */
        }
        float s = amax / 127.0f;
        int8_t *q = (int8_t *)(ex + i * cols);
        for (int64_t j = 0; j < cols; j++) {
            float h = num_f16_to_f32(num_f32_to_f16_mode(v[j] / s, NUM_TRUNC));
            q[j] = num_f32_to_int8(h, NUM_ROUND | NUM_SAT);
        }
        es_out[i] = s;
    }
    if (p->quant != 13) tv_scatter_bytes(&launch->outputs[0], ex);
    tv_scatter_bytes(&launch->outputs[1], (const unsigned char *)er);
    tv_scatter_bytes(&launch->outputs[2], (const unsigned char *)cnt);
    tv_scatter_bytes(&launch->outputs[3], (const unsigned char *)es_out);
done:
    if (p->quant == 13) ex = NULL;
    free(mxs);
    free(eidx), free(x), free(sc), free(ex), free(er), free(cnt), free(es_out), free(it), free(count), free(v);
}

/* ---- steps ----------------------------------------------------------------------------------------- */

/* the op_api's CheckShape: 161002 */
#define mir3_bad(c, ...) op_invalidf((c)->api, __VA_ARGS__)

/* The L0 op's kernel selection / tiling rejection: the L0 wrapper drops the launcher's status (phase 1 succeeds,
 * the run fails with 561103). */
static aclnnStatus mir3_l0(op_call *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static aclnnStatus mir3_l0(op_call *c, const char *fmt, ...) {
    char why[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return op_defer_to_run(c, ACLNN_ERR_INNER_NULLPTR, "MoeInitRoutingV3 tiling failed: %s", why);
}

static aclnnStatus wrong_dim(op_call *c, const char *name, const pyaclnn_stub_tensor *t, int64_t want) {
    if (t->ndim == want) return ACLNN_SUCCESS;
    return mir3_bad(c, "%s dim should be %lld, but got %lld.", name, (long long)want, (long long)t->ndim);
}

#define LL(v) ((long long)(v))

/* The newer Ascend 950 tiling's input checks for quantMode 13 (CheckInputX, CheckInputScale with (1, H), the even
 * cols of CheckSetInputs), in its order; their log macros' words, not their exact layout. */
static aclnnStatus mir3_int4_inputs(op_call *c, const pyaclnn_stub_tensor *x, const pyaclnn_stub_tensor *sc) {
    char b[24];
    if (x->dtype != ACL_FLOAT && x->dtype != ACL_BF16)
        return mir3_l0(c, "dtype of x %s: unsupported under quant_mode 13", op_dtype_name(x->dtype, b));
    if (sc->present) {
        if (sc->ndim != 2) return mir3_l0(c, "scale rank %lld, expected 2", LL(sc->ndim));
        if (sc->shape[0] != 1) return mir3_l0(c, "scale dim[0] %lld, expected 1", LL(sc->shape[0]));
        if (sc->shape[1] != x->shape[1])
            return mir3_l0(c, "scale dim[1] %lld, expected %lld", LL(sc->shape[1]), LL(x->shape[1]));
    }
    if (x->shape[1] % 2) return mir3_l0(c, "cols %lld: For INT4 dynamic quantization, cols must be even.", LL(x->shape[1]));
    return ACLNN_SUCCESS;
}

static int mir3_fp8(aclDataType d) { return d == ACL_FLOAT8_E5M2 || d == ACL_FLOAT8_E4M3FN; }

/* The newer Ascend 950 tiling's checks of the MX no-quant rows (FLOAT8 x, quantMode -1: CheckInputX, then
 * CheckInputScale's GetExpectedInputScaleShape (n, ceil(h / 64), 2) and CheckInputScaleDtype), and its scale dtype
 * rule for the other rows (FLOAT); their log macros' words. */
static aclnnStatus mir3_mx_inputs(op_call *c, const pyaclnn_stub_tensor *x, const pyaclnn_stub_tensor *sc,
                                  int64_t quant) {
    char b1[24], b2[24];
    int mx = mir3_fp8(x->dtype);
    if (mx && quant != -1)
        return mir3_l0(c, "dtype of x %s: unsupported under quant_mode %lld", op_dtype_name(x->dtype, b1), LL(quant));
    if (!sc->present || quant == 0) return ACLNN_SUCCESS;
    if (mx) {
        int64_t want[3] = {x->shape[0], (x->shape[1] + 63) / 64, 2};
        if (sc->ndim != 3) return mir3_l0(c, "scale rank %lld, expected 3", LL(sc->ndim));
        for (int d = 0; d < 3; d++)
            if (sc->shape[d] != want[d])
                return mir3_l0(c, "scale dim[%d] %lld, expected %lld", d, LL(sc->shape[d]), LL(want[d]));
        if (sc->dtype != ACL_FLOAT8_E8M0)
            return mir3_l0(c, "x, scale %s, %s: scale should be DT_FLOAT8_E8M0 in no quant case",
                           op_dtype_name(x->dtype, b1), op_dtype_name(sc->dtype, b2));
    } else if (sc->dtype != ACL_FLOAT) {
        return mir3_l0(c, "scale dtype %s, expected DT_FLOAT", op_dtype_name(sc->dtype, b1));
    }
    return ACLNN_SUCCESS;
}

/* ValidateExpandedXDtype under quantMode 13, then the emulator's own need: it writes whole packed rows into a
 * contiguous expandedXOut. */
static aclnnStatus mir3_int4_out(op_call *c, const pyaclnn_stub_tensor *ex, int64_t nk, int64_t h) {
    char b[24];
    if (ex->dtype != ACL_INT4)
        return mir3_l0(c, "expanded_x %s: expected INT4 under quant_mode 13", op_dtype_name(ex->dtype, b));
    if (ex->strides[1] != 1 || (nk > 1 && ex->strides[0] != h) || ex->offset % 2)
        return mir3_l0(c, "quantMode 13: the emulator writes packed INT4 rows and needs a contiguous expandedXOut "
                          "starting on a byte");
    return ACLNN_SUCCESS;
}

/* mir3_plan x expertIdx scale activeNum expertNum dropPadMode expertTokensNumType expertTokensNumFlag quantMode
 * activeExpertRange rowIdxType expandedX expandedRowIdx expertTokensCount expandedScale: the op_api's CheckShape
 * (161002), then the L0 op: the definition's rows and the tiling's CheckAttr / CheckInputShape / CheckOutShape in the
 * SoC's order and words (561103 at the run), then the emulator's own needs of the kernel. */
aclnnStatus opc_mir3_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0), *ei = op_tensor(c, s, 1), *sc = op_tensor(c, s, 2),
                              *ex = op_tensor(c, s, 11), *er = op_tensor(c, s, 12), *ct = op_tensor(c, s, 13),
                              *es = op_tensor(c, s, 14);
    int64_t active = op_argument(c, s, 3)->i, E = op_argument(c, s, 4)->i, drop = op_argument(c, s, 5)->i,
            type = op_argument(c, s, 6)->i, quant = op_argument(c, s, 8)->i, rowt = op_argument(c, s, 10)->i;
    int flag = op_argument(c, s, 7)->i != 0, soc950 = ew_soc_is_950();
    const int64_t *rg = c->ints[s->p[9]].v;
    uint64_t rn = c->ints[s->p[9]].n;
    aclnnStatus rc;
    /* the op_api's CheckShape */
    int need_range = type == 1 || (sc->present && quant == 1);
    if (need_range && rn < 2)
        return mir3_bad(c, "activeExpertRangeOptional holds %llu values: the op_api reads [0] and [1] (out of bounds)",
                        (unsigned long long)rn);
    int64_t range = need_range ? op_sub_sat(rg[1], rg[0]) : 0;
    if ((rc = wrong_dim(c, "x", x, 2)) || (rc = wrong_dim(c, "expertIdx", ei, 2))) return rc;
    int64_t n = x->shape[0], h = x->shape[1], k = ei->shape[1], nk = op_mul_sat(n, k);
    if (ei->shape[0] != n) return mir3_bad(c, "expertIdx shape error");
    int mx = soc950 && quant == -1 && mir3_fp8(x->dtype);   /* the newer tiling checks its scale shapes */
    if (sc->present && quant != 0 && !mx) {
        if (quant == -1) {
            if ((rc = wrong_dim(c, "scaleOptional", sc, 1))) return rc;
            if (sc->shape[0] != n) return mir3_bad(c, "scale shape error");
        } else if (quant == 1) {
            if ((rc = wrong_dim(c, "scaleOptional", sc, 2))) return rc;
            if (sc->shape[0] != range) return mir3_bad(c, "scale shape error");
            if (sc->shape[1] != h) return mir3_bad(c, "scale shape error");
        }
        if ((rc = wrong_dim(c, "expandedScaleOut", es, 1))) return rc;
        if (es->shape[0] != nk) return mir3_bad(c, "expandedScaleOut shape error");
    }
    if ((rc = wrong_dim(c, "expandedXOut", ex, 2))) return rc;
    if (ex->shape[0] != nk) return mir3_bad(c, "expandedXOut shape error");
    if (ex->shape[1] != h) return mir3_bad(c, "expandedXOut shape error");
    if ((rc = wrong_dim(c, "expandedRowIdxOut", er, 1))) return rc;
    if (er->shape[0] != nk) return mir3_bad(c, "expandedRowIdxOut shape error");
    if (type == 1) {
        if ((rc = wrong_dim(c, "expertTokensCountOrCumsumOut", ct, 1))) return rc;
        if (ct->shape[0] != range) return mir3_bad(c, "expertTokensCountOrCumsumOut shape error");
    } else if (type == 2) {
        if ((rc = wrong_dim(c, "expertTokensCountOrCumsumOut", ct, 2))) return rc;
        if (ct->shape[0] != E) return mir3_bad(c, "expertTokensCountOrCumsumOut shape error");
        if (ct->shape[1] != 2) return mir3_bad(c, "expertTokensCountOrCumsumOut shape error");
    }
    /* the L0 op: the definition's rows (x, expanded_x: one dtype, or FLOAT16 / BF16 / FLOAT x with INT8 out; the
     * Ascend 950's also FLOAT / BF16 x with INT4 out) */
    int int4_row = soc950 && ex->dtype == ACL_INT4 && (x->dtype == ACL_FLOAT || x->dtype == ACL_BF16);
    if (ex->dtype != x->dtype && !(ex->dtype == ACL_INT8 && x->dtype != ACL_INT8) && !int4_row) {
        char b1[24], b2[24];
        return mir3_l0(c, "no kernel for x %s, expanded_x %s", op_dtype_name(x->dtype, b1), op_dtype_name(ex->dtype, b2));
    }
    /* the tiling: CheckAttr */
    if (rn != 2)
        return soc950 ? mir3_l0(c, "The list length of active_expert_range should be 2, current is %llu.",
                                (unsigned long long)rn)
                      : mir3_l0(c, "The dim number of expert_range should be 2.");
    int64_t start = rg[0], end = rg[1];
    if (active < -1)
        return soc950 ? mir3_l0(c, "Attr active_num should be equal or greater than -1, current is %lld.", LL(active))
                      : mir3_l0(c, "active_num should be greater than or equal to -1");
    if (soc950) {
        if (type != 1 && type != 2)
            return mir3_l0(c, "Attr expert_tokens_num_type currently supports: 1 or 2, but got %lld.", LL(type));
        if (E <= 0) return mir3_l0(c, "Attr expert_num should be greater than 0, current is %lld.", LL(E));
        int64_t emax = type == 2 ? 5120 : 10240;
        if (E > emax) return mir3_l0(c, "Attr expert_num should be equal or less than %lld, current is %lld.", LL(emax), LL(E));
        if (drop != 0) return mir3_l0(c, "Attr drop_pad_mode currently supports 0, but got %lld.", LL(drop));
        if (!flag) return mir3_l0(c, "Attr expert_tokens_num_flag currently supports True, but got False");
        if (start < 0)
            return mir3_l0(c, "Extracted attr expert_start should be equal or greater than 0, current is %lld.", LL(start));
        if (start >= end)
            return mir3_l0(c, "Extracted attr expert_start should be less than expert_end, current [expert_start, "
                              "expert_end) is [%lld, %lld).", LL(start), LL(end));
        if (end > E)
            return mir3_l0(c, "Extracted attr expert_end should equal or less than expert_num(%lld), current is %lld.",
                           LL(E), LL(end));
        if (type == 2 && end > 5120)
            return mir3_l0(c, "Extracted attr expert_end should be equal or less than 5120 in KEY_VALUE mode, current "
                              "is %lld.", LL(end));
        if (type != 2 && end > 10240)
            return mir3_l0(c, "expert_end should be equal or less than 10240, current is %lld.", LL(end));
        /* 13: the newer tiling's INT4 dynamic quant (its ValidateQuantMode), the one mode added here */
        if (quant != -1 && quant != 1 && quant != 13)
            return mir3_l0(c, "Attr quant_mode currently supports -1 or 1, but got %lld", LL(quant));
        if (rowt != 1 && rowt != 0)
            return mir3_l0(c, "row_idx_type currently supports 1 or 0, but got %lld.", LL(rowt));
    } else {
        if (E <= 0) return mir3_l0(c, "expert_num should be greater than 0");
        if (drop != 0) return mir3_l0(c, "drop_pad_mode currently support 0");
        if (type != 1 && type != 2) return mir3_l0(c, "expert_tokens_num_type currently not support %lld", LL(type));
        if (!flag) return mir3_l0(c, "expert_tokens_num_flag currently support True");
        if (start < 0) return mir3_l0(c, "expert_start should be greater than or equal to 0");
        if (start >= end) return mir3_l0(c, "expert_start should be less than expert_end");
        if (end > E) return mir3_l0(c, "expert_end should be less than or equal to %lld", LL(E));
        if (type == 2 && end > 5120) return mir3_l0(c, "expert_end should be less than or equal to 5120 in KEY_VALUE mode");
        if (type != 2 && end > 10240) return mir3_l0(c, "expert_end should be less than or equal to 10240");
        if (quant != -1 && quant != 1) return mir3_l0(c, "quant_mode currently support -1 or 1");
        if (rowt != 1 && rowt != 0) return mir3_l0(c, "row_idx_type currently support 1 or 0");
    }
    /* CheckInputShape (x, expert_idx 2-D and their rows: the op_api checked them) */
    if (active != -1 && active != nk)
        return soc950 ? mir3_l0(c, "Attr active_num should equal to bs*k(%lld), current is %lld.", LL(nk), LL(active))
                      : mir3_l0(c, "active_num currently should equal to %lld(bs*k)", LL(nk));
    if (quant == 13 && ((rc = mir3_int4_inputs(c, x, sc)) || c->made)) return rc;   /* made: deferred */
    if (soc950 && ((rc = mir3_mx_inputs(c, x, sc, quant)) || c->made)) return rc;
    if (quant == 1 && sc->present) {   /* the op_api's checks with the same range: cannot fail here */
        if (sc->ndim != 2 || sc->shape[0] != end - start || sc->shape[1] != h)
            return mir3_l0(c, "The first dim of scale should be %lld", LL(end - start));
    }
    /* CheckOutShape: expanded_x, expanded_row_idx (the op_api checked them), the counts */
    if (type == 2) {
        if (ct->ndim != 2) return mir3_l0(c, "The dim number of expert_tokens_count_or_cumsum should be 2 when in KEY_VALUE mode.");
        if (ct->shape[0] != E) return mir3_l0(c, "The first dim of expert_tokens_count_or_cumsum should be %lld.", LL(E));
    } else {
        if (ct->ndim != 1)
            return mir3_l0(c, "The dim number of expert_tokens_count_or_cumsum should be 1 when not in KEY_VALUE mode.");
        if (ct->shape[0] != end - start)
            return mir3_l0(c, "The first dim of expert_tokens_count_or_cumsum should be %lld.", LL(end - start));
    }
    /* the emulator's: what the kernel writes must fit */
    if (quant == 1 && x->dtype != ACL_INT8 && ex->dtype != ACL_INT8)
        return mir3_l0(c, "quantMode 1 writes int8 rows: expandedXOut must be INT8 (the emulator does not model the "
                          "kernel writing int8 into a %s tensor)", ex->dtype == ACL_FLOAT ? "FLOAT" : "16-bit");
    if (quant == 13 && ((rc = mir3_int4_out(c, ex, nk, h)) || c->made)) return rc;
    if (quant == -1 && ex->dtype != x->dtype)
        return mir3_l0(c, "quantMode -1 copies x's rows: expandedXOut of another dtype would be written past its end");
    int64_t mx_bytes = mx && sc->present ? (h + 63) / 64 * 2 : 0;
    if (mx_bytes && (es->dtype != ACL_FLOAT8_E8M0 || es->ndim != 3 || es->shape[0] < nk ||
                     es->shape[1] * es->shape[2] != mx_bytes))
        return mir3_l0(c, "expandedScaleOut must be FLOAT8_E8M0 [n * k = %lld, %lld, 2] (the kernel moves each routed "
                          "row's scales)", LL(nk), LL(mx_bytes / 2));
    if (!mx_bytes && (quant == 1 || quant == 13 || sc->present) && es->dtype != ACL_FLOAT)
        return mir3_l0(c, "expandedScaleOut must be FLOAT (the kernel writes one fp32 scale per routed row)");
    if (!mx_bytes && (quant == 1 || quant == 13 || sc->present) && (es->ndim != 1 || es->shape[0] < nk))
        return mir3_l0(c, "expandedScaleOut must hold n * k = %lld values (the kernel writes one per routed row)", LL(nk));
    mir3_params *p = op_params(c, sizeof *p);
    *p = (mir3_params){n, k, h, start, end, E, (int)type, (int)rowt, (int)quant, sc->present, mx_bytes, x->dtype};
    if (nk == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}

/* ---- MoeInitRoutingV2 ------------------------------------------------------------------------------ */

typedef struct {
    int64_t n, k, cols, active, capacity, experts;
    int drop, count_flag, before_flag;
    int quant;             /* MoeInitRoutingQuantV2: -1 none (MoeInitRoutingV2), 0 static, 1 dynamic */
    int64_t smooth_rows;   /* dynamic: 0 no smooth scale, 1 one row for every expert, else one per expert */
} mir2_params;

/* One expanded row of MoeInitRoutingQuantV2: static quant in the kernel's half steps (x to fp16 with RINT unless
 * it is fp16, Muls by scale and Adds offset each rounded to fp16, CAST_RINT to int8, saturating); dynamic quant as
 * MoeInitRoutingV3's (fp32 x * smooth, scale = max|v| / 127, fp16 CAST_TRUNC then int8 CAST_ROUND), its scale out. */
static void mir2_quant_row(const mir2_params *p, const unsigned char *xrow, aclDataType xdt, float sscale,
                           float soffset, const float *smooth, int8_t *out, float *dyn, float *v) {
    int64_t cols = p->cols;
    size_t es = ew_itemsize(xdt);
    for (int64_t j = 0; j < cols; j++) v[j] = (float)ew_value_to_double(ew_load(xrow + j * (int64_t)es, xdt), xdt);
    if (p->quant == 0) {
        float hs = num_f16_to_f32(num_f32_to_f16(sscale)), ho = num_f16_to_f32(num_f32_to_f16(soffset));
        for (int64_t j = 0; j < cols; j++) {
            float h = num_f16_to_f32(num_f32_to_f16(v[j]));   /* exact for fp16 x */
            h = num_f16_to_f32(num_f32_to_f16((float)((double)h * hs)));
            h = num_f16_to_f32(num_f32_to_f16((float)((double)h + ho)));
            out[j] = num_f32_to_int8(h, NUM_RINT | NUM_SAT);
        }
        return;
    }
    float amax = 0.0f;
    for (int64_t j = 0; j < cols; j++) {
        if (smooth) v[j] = v[j] * smooth[j];
        float a = v[j] < 0 ? -v[j] : v[j];
        if (a > amax) amax = a;
    }
    float s = amax / 127.0f;
    for (int64_t j = 0; j < cols; j++)
        out[j] = num_f32_to_int8(num_f16_to_f32(num_f32_to_f16_mode(v[j] / s, NUM_TRUNC)), NUM_ROUND | NUM_SAT);
    *dyn = s;
}

void moe_init_routing_v2_kernel(const pyaclnn_stub_launch *launch) {
    const mir2_params *p = launch->params;
    if (!tv_launch_views_ok(launch)) return;
    int64_t total = p->n * p->k, cols = p->cols, E = p->experts, C = p->capacity;
    aclDataType xdt = launch->inputs[0].dtype;
    size_t es = ew_itemsize(xdt), eo = ew_itemsize(launch->outputs[0].dtype);
    int q = p->quant >= 0, has_dyn = p->quant == 1 && launch->n_outputs > 4 && launch->outputs[4].present;
    unsigned char *x = tv_gather_bytes(&launch->inputs[0]);
    int32_t *eidx = (int32_t *)tv_gather_bytes(&launch->inputs[1]);
    float *sc = q && launch->inputs[2].present ? tv_load_float(&launch->inputs[2]) : NULL;
    float *of = q && p->quant == 0 && launch->inputs[3].present ? tv_load_float(&launch->inputs[3]) : NULL;
    float *dyn = has_dyn ? tv_load_float(&launch->outputs[4]) : NULL;   /* rows not written keep their values */
    float *v = q ? tv_alloc(cols ? cols : 1, sizeof(float)) : NULL;
    unsigned char *ex = tv_gather_bytes(&launch->outputs[0]);
    int32_t *er = tv_alloc(total, sizeof(int32_t));
    int32_t *cnt = tv_alloc(E > 0 ? E : 1, sizeof(int32_t));
    mir3_item *it = tv_alloc(total, sizeof(mir3_item));
    float dummy;
    if (!x || !eidx || !ex || !er || !cnt || !it || (q && !v) || (has_dyn && !dyn) ||
        (q && launch->inputs[2].present && !sc) || (p->quant == 0 && launch->inputs[3].present && !of)) {
        tv_fail_oom(launch);
        goto done;
    }
    for (int64_t i = 0; i < total; i++) it[i] = (mir3_item){moe_expert_key(eidx[i]), i};
    qsort(it, (size_t)total, sizeof *it, mir3_cmp);
    memset(cnt, 0, (size_t)(E > 0 ? E : 1) * sizeof(int32_t));
    for (int64_t i = 0; i < total; i++) {
        int64_t e = (int64_t)it[i].key;
        if (e >= 0 && e < E) cnt[e]++;
    }
    if (!p->drop) {
        for (int64_t i = 0; i < total; i++) {
            er[it[i].pos] = (int32_t)i;
            if (i >= p->active) continue;
            const unsigned char *row = x + (it[i].pos / p->k) * cols * (int64_t)es;
            if (!q) {
                memcpy(ex + i * cols * (int64_t)es, row, (size_t)cols * es);
                continue;
            }
            int64_t e = (int64_t)it[i].key;
            const float *sm = p->quant == 1 && sc ? sc + (p->smooth_rows == 1 ? 0 : e) * cols : NULL;
            if (sm && p->smooth_rows > 1 && (e < 0 || e >= p->smooth_rows)) sm = NULL;   /* an id outside: none */
            mir2_quant_row(p, row, xdt, sc ? sc[0] : 1.0f, of ? of[0] : 0.0f, sm, (int8_t *)(ex + i * cols * (int64_t)eo),
                           dyn ? &dyn[i] : &dummy, v);
        }
        if (p->count_flag && launch->outputs[2].present) {
            int32_t *o = tv_alloc(E, sizeof(int32_t));
            if (!o) {
                tv_fail_oom(launch);
                goto done;
            }
            for (int64_t e = 0, run = 0; e < E; e++) run += cnt[e], o[e] = p->count_flag == 1 ? (int32_t)run : cnt[e];
            tv_scatter_bytes(&launch->outputs[2], (const unsigned char *)o);
            free(o);
        }
    } else {
        memset(ex, 0, (size_t)(E * C * cols) * eo);   /* every slot no token fills is zero */
        int64_t slot = 0, last = -1;
        for (int64_t i = 0; i < total; i++) {
            int64_t e = (int64_t)it[i].key, src = it[i].pos;
            er[src] = -1;
            if (e < 0 || e >= E) continue;
            slot = e == last ? slot + 1 : 0;
            last = e;
            if (slot >= C) continue;
            er[src] = (int32_t)(e * C + slot);
            const unsigned char *row = x + (src / p->k) * cols * (int64_t)es;
            if (!q) {
                memcpy(ex + (e * C + slot) * cols * (int64_t)es, row, (size_t)cols * es);
                continue;
            }
            const float *sm = p->quant == 1 && sc ? sc + (p->smooth_rows == 1 ? 0 : e) * cols : NULL;
            if (sm && p->smooth_rows > 1 && e >= p->smooth_rows) sm = NULL;
            mir2_quant_row(p, row, xdt, sc ? sc[0] : 1.0f, of ? of[0] : 0.0f, sm,
                           (int8_t *)(ex + (e * C + slot) * cols * (int64_t)eo), dyn ? &dyn[e * C + slot] : &dummy, v);
        }
        if (p->before_flag && launch->outputs[3].present) tv_scatter_bytes(&launch->outputs[3], (const unsigned char *)cnt);
    }
    tv_scatter_bytes(&launch->outputs[0], ex);
    tv_scatter_bytes(&launch->outputs[1], (const unsigned char *)er);
    if (dyn) tv_store_float(&launch->outputs[4], dyn);
done:
    free(x), free(eidx), free(ex), free(er), free(cnt), free(it), free(sc), free(of), free(dyn), free(v);
}

#define mir2_reject(c, ...) op_failf((c)->api, ACLNN_ERR_INNER_TILING_ERROR, __VA_ARGS__)

/* GetShapeAttrsInfo's capacity, expert-count and mode attributes, the same steps in MoeInitRoutingV2's and
 * QuantV2's tilings (561002). */
static aclnnStatus mir2_attrs(op_call *c, const pyaclnn_stub_tensor *x, int64_t C, int64_t E, int64_t drop,
                              int64_t flag) {
    if (C < 0) return mir2_reject(c, "The expertCapacity cannot be less than 0.");
    if (E < 0) return mir2_reject(c, "The expertNum cannot be less than 0.");
    if (drop < 0 || drop > 1) return mir2_reject(c, "The dropPadMode should be 0 or 1.");
    if (drop > 0 && (C < 1 || E < 1))
        return mir2_reject(c, "The expertCapacity and expertNum should be greater than 0 when dropPadMode is 1");
    if (flag < 0 || flag > 2) return mir2_reject(c, "The expertTokensCountOrCumsumFlag should be 0, 1 or 2.");
    if (flag > 0 && E <= 0)
        return mir2_reject(c, "The expertNum should be greater than 0 when expertTokensCountOrCumsumFlag is greater than 0");
    if (drop > 0 && C > x->shape[0]) return mir2_reject(c, "The first dim of x cannot be less than expertCapacity");
    return ACLNN_SUCCESS;
}

/* CheckOutShape's expandedX in drop-pad mode: [expertNum, expertCapacity, cols] (561002). */
static aclnnStatus mir2_padded_x(op_call *c, const pyaclnn_stub_tensor *ex, int64_t E, int64_t C, int64_t cols) {
    if (ex->ndim != 3) return mir2_reject(c, "The dim number of expandedX should be 3.");
    if (ex->shape[0] != E) return mir2_reject(c, "The first dim of expandedX should be %lld.", LL(E));
    if (ex->shape[1] != C) return mir2_reject(c, "The second dim of expandedX should be %lld.", LL(C));
    if (ex->shape[2] != cols) return mir2_reject(c, "The third dim of expandedX should be %lld.", LL(cols));
    return ACLNN_SUCCESS;
}

static aclnnStatus mir2_token_count(op_call *c, const pyaclnn_stub_tensor *t, const char *tag, int64_t E) {
    if (!t->present) return mir2_reject(c, "%s is nullptr!", tag);
    if (t->dtype != ACL_INT32) return mir2_reject(c, "The data type of %s should be int32.", tag);
    if (t->ndim != 1) return mir2_reject(c, "The dim number of %s should be 1.", tag);
    if (t->shape[0] != E) return mir2_reject(c, "The first dim of %s should be %lld.", tag, LL(E));
    return ACLNN_SUCCESS;
}

/* mir2_plan x expertIdx activeNum expertCapacity expertNum dropPadMode countFlag beforeFlag expandedX expandedRowIdx
 * count before: the tiling's GetShapeAttrsInfo and CheckOutShape in their order and words (561002). */
aclnnStatus opc_mir2_plan(op_call *c, const op_step *s) {
    if (c->nothing) return ACLNN_SUCCESS;
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0), *ei = op_tensor(c, s, 1), *ex = op_tensor(c, s, 8),
                              *er = op_tensor(c, s, 9), *ct = op_tensor(c, s, 10), *bc = op_tensor(c, s, 11);
    int64_t active = op_argument(c, s, 2)->i, C = op_argument(c, s, 3)->i, E = op_argument(c, s, 4)->i,
            drop = op_argument(c, s, 5)->i, flag = op_argument(c, s, 6)->i;
    int before = op_argument(c, s, 7)->i != 0, regbase = ew_soc_is_950();
    if (x->ndim != 2) return mir2_reject(c, "The dim number of x should be 2.");
    if (ei->ndim < 1 || x->shape[0] != ei->shape[0]) return mir2_reject(c, "The first dim of x and expertIdx should be equal.");
    aclnnStatus attrs = mir2_attrs(c, x, C, E, drop, flag);
    if (attrs) return attrs;
    if (drop == 1) flag = 0;
    else before = 0;
    int64_t k;
    if (regbase) {
        if (ei->ndim != 1 && ei->ndim != 2) return mir2_reject(c, "The dim number of expertIdx should be 1 or 2.");
        k = ei->ndim == 2 ? ei->shape[1] : 1;
    } else {
        if (active < 0) return mir2_reject(c, "The activeNum cannot be less than 0.");
        if (ei->ndim != 2) return mir2_reject(c, "The dim number of expertIdx should be 2.");
        k = ei->shape[1];
    }
    int64_t n = ei->shape[0], cols = x->shape[1], total = op_mul_sat(n, k);
    if (drop > 0) {
        aclnnStatus padded = mir2_padded_x(c, ex, E, C, cols);
        if (padded) return padded;
    } else {
        if (ex->ndim != 2) return mir2_reject(c, "The dim number of expandedX should be 2.");
        if (!regbase) {
            active = active == 0 ? total : (total < active ? total : active);
        } else {
            active = active <= 0 ? active + total : active;
            active = active < total ? active : total;
            active = active > 0 ? active : 0;
        }
        if (ex->shape[0] != active) return mir2_reject(c, "The first dim of expandedX should be %lld.", LL(active));
        if (ex->shape[1] != cols) return mir2_reject(c, "The second dim of expandedX should be %lld.", LL(cols));
    }
    if (er->ndim != 1) return mir2_reject(c, "The dim number of expandedRowIdx should be 1.");
    if (er->shape[0] != total) return mir2_reject(c, "The first dim of expandedRowIdx should be %lld.", LL(total));
    aclnnStatus rc;
    if (drop == 0 && flag != 0 && (rc = mir2_token_count(c, ct, "expertTokensCountOrCumsum", E))) return rc;
    if (drop == 1 && before && (rc = mir2_token_count(c, bc, "expertTokensBeforeCapacity", E))) return rc;
    mir2_params *p = op_params(c, sizeof *p);
    *p = (mir2_params){n, k, cols, active, C, E, (int)drop, (int)flag, before, -1, 0};
    if (total == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}

/* ---- MoeInitRoutingQuantV2 ------------------------------------------------------------------------- */

/* mirq_plan x expertIdx scale offset activeNum expertCapacity expertNum dropPadMode countFlag beforeFlag quantMode
 * expandedX expandedRowIdx count before dynamicQuantScale: moe_init_routing_quant_v2_tiling.cpp's GetShapeAttrsInfo
 * (quantMode, the base's GetShapeAttrsInfo with its CheckOutShape and the dynamic scale's, then scale / offset) in its
 * order and words (561002); both SoCs run these (the regbase tiling is not modelled). */
aclnnStatus opc_mirq_plan(op_call *c, const op_step *s) {
    if (c->nothing) return ACLNN_SUCCESS;
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0), *ei = op_tensor(c, s, 1), *sc = op_tensor(c, s, 2),
                              *of = op_tensor(c, s, 3), *ex = op_tensor(c, s, 11), *er = op_tensor(c, s, 12),
                              *ct = op_tensor(c, s, 13), *bc = op_tensor(c, s, 14), *dq = op_tensor(c, s, 15);
    int64_t active = op_argument(c, s, 4)->i, C = op_argument(c, s, 5)->i, E = op_argument(c, s, 6)->i,
            drop = op_argument(c, s, 7)->i, flag = op_argument(c, s, 8)->i, quant = op_argument(c, s, 10)->i;
    int before = op_argument(c, s, 9)->i != 0;
    aclnnStatus rc;
    if (quant < 0 || quant > 1) return mir2_reject(c, "The quantMode should be 0 or 1.");
    if (x->ndim != 2 || ei->ndim != 2) return mir2_reject(c, "The dim number of x and expertIdx should be 2.");
    if (x->shape[0] != ei->shape[0]) return mir2_reject(c, "The first dim of x and expertIdx should be equal.");
    if (active < 0) return mir2_reject(c, "The activeNum cannot be less than 0.");
    aclnnStatus attrs = mir2_attrs(c, x, C, E, drop, flag);
    if (attrs) return attrs;
    if (drop == 1) flag = 0;
    else before = 0;
    int64_t n = ei->shape[0], k = ei->shape[1], cols = x->shape[1], total = op_mul_sat(n, k);
    /* CheckOutShape */
    if (drop > 0) {
        aclnnStatus padded = mir2_padded_x(c, ex, E, C, cols);
        if (padded) return padded;
    } else {
        if (ex->ndim != 2) return mir2_reject(c, "The dim number of expandedX should be 2.");
        active = active == 0 ? total : (total < active ? total : active);
        if (ex->shape[0] != active) return mir2_reject(c, "The first dim of expandedX should be %lld.", LL(active));
        if (ex->shape[1] != cols) return mir2_reject(c, "The second dim of expandedX should be %lld.", LL(cols));
    }
    if (er->ndim != 1) return mir2_reject(c, "The dim number of expandedRowIdx should be 1.");
    if (er->shape[0] != total) return mir2_reject(c, "The first dim of expandedRowIdx should be %lld.", LL(total));
    if (drop == 0 && flag != 0 && (rc = mir2_token_count(c, ct, "expertTokensCountOrCumsum", E))) return rc;
    if (drop == 1 && before && (rc = mir2_token_count(c, bc, "expertTokensBeforeCapacity", E))) return rc;
    if (quant != 0) {
        if (!dq->present) return mir2_reject(c, "DynamicQuantScale is nullptr!");
        if (dq->dtype != ACL_FLOAT) return mir2_reject(c, "The data type of dynamicQuantScale should be FLOAT.");
        if (dq->ndim != 1) return mir2_reject(c, "The dim number of dynamicQuantScale should be 1.");
        int64_t want = drop == 0 ? active : op_mul_sat(E, C);
        if (dq->shape[0] != want) return mir2_reject(c, "The first dim of dynamicQuantScale should be %lld.", LL(want));
    }
    /* scale / offset */
    int64_t smooth_rows = 0;
    if (quant == 0) {
        if (!sc->present) return mir2_reject(c, "scale is nullptr!");
        if (sc->dtype != ACL_FLOAT) return mir2_reject(c, "The data type of scale should be float.");
        if (!of->present) return mir2_reject(c, "offset is nullptr!");
        if (of->dtype != ACL_FLOAT) return mir2_reject(c, "The data type of offset should be float.");
        if (sc->ndim != 1) return mir2_reject(c, "The dim number of scale should be 1.");
        if (sc->shape[0] != 1) return mir2_reject(c, "The first dim of scale should be 1.");
        if (of->ndim != 1) return mir2_reject(c, "The dim number of offset should be 1.");
        if (of->shape[0] != 1) return mir2_reject(c, "The first dim of offset should be 1.");
    } else if (sc->present) {
        if (sc->dtype != ACL_FLOAT) return mir2_reject(c, "The data type of scale should be float.");
        if (sc->ndim != 2) return mir2_reject(c, "The dim number of scale should be 2.");
        if (sc->shape[0] != 1 && sc->shape[0] != E) return mir2_reject(c, "The first dim of scale should be 1 or expert_num.");
        if (sc->shape[1] != cols) return mir2_reject(c, "The second dim of scale should be %lld.", LL(cols));
        smooth_rows = sc->shape[0];
    }
    mir2_params *p = op_params(c, sizeof *p);
    *p = (mir2_params){n, k, cols, active, C, E, (int)drop, (int)flag, before, (int)quant, smooth_rows};
    if (total == 0) c->nothing = 1;
    return ACLNN_SUCCESS;
}
