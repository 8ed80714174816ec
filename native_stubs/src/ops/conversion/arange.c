/*
 * aclnnArange (hicann/ops-math math/range/op_api/aclnn_arange.cpp; definition: arange.toml): out[i] = start + i * step for every
 * element of out (its length is the caller's: the vendor's Range kernel fills out's shape). Validation in
 * the vendor's order:
 *   1. start, end, step, out non-NULL                                              -> 161001
 *   2. start, end, step dtypes in the input list, out dtype in the output list      -> 161002
 *   3. step != 0 and (end - start) has step's sign, compared in out's family (float for
 *      FLOAT/FLOAT16/BF16, double for DOUBLE, int64 for INT32/INT64)                  -> 161002
 * Arithmetic (class b, the vendor kernel's steps, op_kernel/arch35/range_float.h): for FLOAT, FLOAT16 and
 * BF16 outs, in fp32: t = round32(i * step), v = round32(start + t) (AscendC Axpy), then Cast RINT to out;
 * DOUBLE in double; INT32/INT64 in int64 (wrapping to out's width).
 */
#include "kernels/view.h"
#include "ops_decls.h"

typedef struct {
    double start, step;          /* float family: the fp32 values; double: the doubles   */
    int64_t istart, istep;       /* integer outs                                        */
} arange_plan;

void arange_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const arange_plan *p = launch->params;
    const pyaclnn_stub_tensor *out = &launch->outputs[0];
    int64_t n = pyaclnn_stub_numel(out);
    tv_iter it;
    tv_iter_init(&it, out);
    for (int64_t i = 0; i < n; i++, tv_iter_next(&it)) {
        ew_value v;
        aclDataType from;
        if (out->dtype == ACL_DOUBLE) {
            v = (ew_value){p->start + (double)i * p->step, 0};
            from = ACL_DOUBLE;
        } else if (ew_is_float(out->dtype)) {
            float t = (float)i * (float)p->step;
            v = (ew_value){(float)((float)p->start + t), 0};
            from = ACL_FLOAT;
        } else {
            v = (ew_value){0, (int64_t)((uint64_t)p->istart + (uint64_t)i * (uint64_t)p->istep)};
            from = ACL_INT64;
        }
        ew_store(tv_at(out, it.off), out->dtype, ew_cast(v, from, out->dtype));
    }
}

/* arange_plan start end step out: step != 0 and (end - start) has step's sign, compared in out's family
 * (float for FLOAT/FLOAT16/BF16, double for DOUBLE, int64 for INT32/INT64); the kernel's start and step. */
aclnnStatus opc_arange_plan(op_call *c, const op_step *s) {
    const op_scalar *sa = op_scalar_of(c, s, 0), *ea = op_scalar_of(c, s, 1), *pa = op_scalar_of(c, s, 2);
    aclDataType sd = sa->dtype, ed = ea->dtype, pd = pa->dtype, od = op_tensor(c, s, 3)->dtype;
    ew_value sv = sa->v, ev = ea->v, pv = pa->v;
    double s0 = ew_value_to_double(sv, sd), e = ew_value_to_double(ev, ed), st = ew_value_to_double(pv, pd);
    arange_plan *plan = op_params(c, sizeof *plan);
    int bad;
    if (od == ACL_DOUBLE) {
        bad = !(st > 0 || st < 0) || (st > 0 && s0 > e) || (st < 0 && s0 < e);
        plan->start = s0, plan->step = st;
    } else if (ew_is_float(od)) {
        float fs = (float)s0, fe = (float)e, fst = (float)st;   /* aclScalar::ToFloat */
        bad = !(fst > 0 || fst < 0) || (fst > 0 && fs > fe) || (fst < 0 && fs < fe);
        plan->start = fs, plan->step = fst;
    } else {
        int64_t is = ew_repr_of(sd) == EW_REPR_I ? sv.i : (int64_t)s0;
        int64_t ie = ew_repr_of(ed) == EW_REPR_I ? ev.i : (int64_t)e;
        int64_t ist = ew_repr_of(pd) == EW_REPR_I ? pv.i : (int64_t)st;
        bad = ist == 0 || (ist > 0 && is > ie) || (ist < 0 && is < ie);
        plan->istart = is, plan->istep = ist;
    }
    if (bad) {
        if ((od == ACL_DOUBLE || ew_is_float(od)) ? st == 0 : plan->istep == 0)
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "step must be nonzero.");
        else
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "upper bound and lower bound inconsistent with step "
                                "sign. start:%f, end:%f, step:%f.", s0, e, st);
        return ACLNN_ERR_PARAM_INVALID;
    }
    return ACLNN_SUCCESS;
}
