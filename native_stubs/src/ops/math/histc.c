/*
 * aclnnHistc: torch's histc on the NPU (hicann/ops-math math/histogram_v2; the arch35 SIMT kernel). min and max are
 * the scalars converted to self's dtype, or (when they coincide: equal integers, floats less than 1e-6 apart or
 * the same infinity) self's own minimum and maximum; the kernel widens an empty range to [min - 1, max + 1] and
 * counts each element v with min <= v <= max in bin (int32)((v - min) * bins / (max - min)) (bins - 1 for
 * v == max), in its compute type: fp32 (FLOAT, FLOAT16), int32 (INT8, UINT8, INT16), int64 (INT32, INT64). The
 * counts are then cast to out's dtype. Definitions: histc.toml.
 */
#include <math.h>
#include <stdlib.h>

#include "kernels/dtype.h"
#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"

typedef struct {
    int64_t bins;
    int own;                     /* min / max from self */
    ew_value lo, hi;             /* the scalars in self's dtype */
} histc_params;

enum { H_F32, H_I32, H_I64 };

static int compute_of(aclDataType dt) {
    return dt == ACL_FLOAT || dt == ACL_FLOAT16 ? H_F32 : dt == ACL_INT32 || dt == ACL_INT64 ? H_I64 : H_I32;
}

/* inputs: self; output: out */
void histc_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const histc_params *p = launch->params;
    const pyaclnn_stub_tensor *x = &launch->inputs[0];
    aclDataType dt = x->dtype;
    int ct = compute_of(dt);
    int64_t n = pyaclnn_stub_numel(x);
    unsigned char *xb = tv_gather_bytes(x);
    double *cnt = tv_alloc(p->bins, sizeof(double));
    if (xb == NULL || cnt == NULL) {
        tv_fail_oom(launch);
        goto done;
    }
    for (int64_t b = 0; b < p->bins; b++) cnt[b] = 0;
    size_t es = ew_itemsize(dt);
    ew_value lo = p->lo, hi = p->hi;
    if (p->own) {                                   /* ReduceMin / ReduceMax (NaN propagates) */
        for (int64_t i = 0; i < n; i++) {
            ew_value v = ew_load(xb + i * es, dt);
            if (i == 0) lo = hi = v;
            else if (ct == H_F32) {
                if (isnan(v.f) || v.f < lo.f) lo.f = isnan(lo.f) ? lo.f : v.f;
                if (isnan(v.f) || v.f > hi.f) hi.f = isnan(hi.f) ? hi.f : v.f;
            } else {
                if (v.i < lo.i) lo.i = v.i;
                if (v.i > hi.i) hi.i = v.i;
            }
        }
    }
    if (ct == H_F32) {
        float mn = (float)lo.f, mx = (float)hi.f;
        if (mn == mx) mn = mn - 1.0f, mx = mx + 1.0f;
        float len = mx - mn;
        for (int64_t i = 0; i < n; i++) {
            float v = (float)ew_load(xb + i * es, dt).f;
            if (!(v >= mn && v <= mx)) continue;
            float d = v - mn, q = d * (float)p->bins;
            int32_t b = (int32_t)(q / len);
            if (b == p->bins) b--;
            if (b >= 0 && b < p->bins) cnt[b]++;
        }
    } else {
        int64_t mn = lo.i, mx = hi.i;
        if (ct == H_I32) mn = (int32_t)mn, mx = (int32_t)mx;
        if (mn == mx) mn--, mx++;
        int64_t len = mx - mn;
        for (int64_t i = 0; i < n; i++) {
            int64_t v = ew_load(xb + i * es, dt).i;
            if (!(v >= mn && v <= mx)) continue;
            int32_t b = (int32_t)((v - mn) * p->bins / len);
            if (b == p->bins) b--;
            if (b >= 0 && b < p->bins) cnt[b]++;
        }
    }
    tv_store_double(&launch->outputs[0], cnt);
done:
    free(xb), free(cnt);
}

/* ---- steps ------------------------------------------------------------------------------------ */

#define invalid(c, ...) op_invalidf((c)->api, __VA_ARGS__)

static int is_int(aclDataType dt) { return !(dt == ACL_FLOAT || dt == ACL_FLOAT16); }
static float to_float(const op_scalar *s) { return (float)ew_value_to_double(s->v, s->dtype); }
static int both_inf(float a, float b) { return isinf(a) && isinf(b) && (a > 0) == (b > 0); }

/* histc_range self bins min max (CheckMinMaxIsInfNan, CheckValueRange) */
aclnnStatus opc_histc_range(op_call *c, const op_step *s) {
    float mn = to_float(op_scalar_of(c, s, 2)), mx = to_float(op_scalar_of(c, s, 3));
    if (!both_inf(mn, mx) && (isinf(mn) || isinf(mx) || isnan(mn) || isnan(mx)))
        return invalid(c, "range of [%f, %f] is not finite", mn, mx);
    if (op_argument(c, s, 1)->i <= 0) return invalid(c, "The value of bins can not less or equal 0.");
    int bad;
    if (is_int(op_tensor(c, s, 0)->dtype)) {
        int32_t a = (int32_t)ew_cast(op_scalar_of(c, s, 2)->v, op_scalar_of(c, s, 2)->dtype, ACL_INT32).i;
        int32_t b = (int32_t)ew_cast(op_scalar_of(c, s, 3)->v, op_scalar_of(c, s, 3)->dtype, ACL_INT32).i;
        bad = a > b;
    } else {
        bad = mn > mx;
    }
    if (bad) return invalid(c, "The value of max should greater than or equal to min.");
    return ACLNN_SUCCESS;
}

/* histc_size bins out: out has bins elements. */
aclnnStatus opc_histc_size(op_call *c, const op_step *s) {
    if (pyaclnn_stub_numel(op_tensor(c, s, 1)) != op_argument(c, s, 0)->i)
        return invalid(c, "The size of out tensor should be same as bins.");
    return ACLNN_SUCCESS;
}

/* histc_plan self bins min max: zeros for an empty self; else min / max in self's dtype, or self's own when the
 * range (nearly) vanishes (NeedComputeMinMax). */
aclnnStatus opc_histc_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *x = op_tensor(c, s, 0);
    const op_scalar *a = op_scalar_of(c, s, 2), *b = op_scalar_of(c, s, 3);
    histc_params *p = op_params(c, sizeof(histc_params));
    p->bins = op_argument(c, s, 1)->i;
    p->lo = ew_cast(a->v, a->dtype, x->dtype), p->hi = ew_cast(b->v, b->dtype, x->dtype);
    if (is_int(x->dtype)) {
        p->own = ew_cast(a->v, a->dtype, ACL_INT64).i == ew_cast(b->v, b->dtype, ACL_INT64).i;
    } else {
        float mn = to_float(a), mx = to_float(b);
        p->own = both_inf(mn, mx) || (mx - mn < 1e-6f && mx - mn > -1e-6f);
    }
    if (pyaclnn_stub_numel(x) == 0) p->own = 0, p->lo = p->hi = (ew_value){0};   /* counts all zero */
    return ACLNN_SUCCESS;
}
