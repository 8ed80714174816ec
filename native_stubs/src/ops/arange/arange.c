/*
 * aclnnArange (hicann/ops-math math/range/op_api/aclnn_arange.cpp): out[i] = start + i * step for every
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
#include "aclnnop/aclnn_arange.h"
#include "opbase/checks.h"
#include "kernels/view.h"

#define N(a) (sizeof a / sizeof a[0])

static const aclDataType IN_DTYPES[] = {ACL_FLOAT, ACL_INT32, ACL_INT64, ACL_FLOAT16, ACL_INT16,
                                        ACL_INT8,  ACL_UINT8, ACL_DOUBLE, ACL_BOOL,   ACL_BF16};
static const aclDataType OUT_DTYPES[] = {ACL_FLOAT16, ACL_FLOAT, ACL_DOUBLE, ACL_INT64, ACL_INT32, ACL_BF16};

typedef struct {
    double start, step;          /* float family: the fp32 values; double: the doubles   */
    int64_t istart, istep;       /* integer outs                                        */
} arange_plan;

static void arange_kernel(const pyaclnn_stub_launch *launch) {
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

aclnnStatus aclnnArangeGetWorkspaceSize(const aclScalar *start, const aclScalar *end, const aclScalar *step,
                                        aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor) {
    static const char API[] = "aclnnArangeGetWorkspaceSize";
    const char *names[] = {"start", "end", "step", "out"};
    const void *ptrs[] = {start, end, step, out};
    aclnnStatus rc = tv_check_not_null(API, names, ptrs, 4, workspaceSize, executor);
    if (rc) return rc;
    aclDataType sd, ed, pd;
    ew_value sv, ev, pv;
    pyaclnn_stub_tensor o;
    if ((rc = ew_scalar_arg(API, "start", start, &sd, &sv))) return rc;
    if ((rc = ew_scalar_arg(API, "end", end, &ed, &ev))) return rc;
    if ((rc = ew_scalar_arg(API, "step", step, &pd, &pv))) return rc;
    if ((rc = op_tensor_arg(API, "out", out, &o))) return rc;
    if ((rc = ew_check_dtype_in(API, "start", sd, IN_DTYPES, N(IN_DTYPES)))) return rc;
    if ((rc = ew_check_dtype_in(API, "end", ed, IN_DTYPES, N(IN_DTYPES)))) return rc;
    if ((rc = ew_check_dtype_in(API, "step", pd, IN_DTYPES, N(IN_DTYPES)))) return rc;
    if ((rc = ew_check_dtype_in(API, "out", o.dtype, OUT_DTYPES, N(OUT_DTYPES)))) return rc;
    double s = ew_value_to_double(sv, sd), e = ew_value_to_double(ev, ed), st = ew_value_to_double(pv, pd);
    arange_plan plan = {0};
    int bad;
    if (o.dtype == ACL_DOUBLE) {
        bad = !(st > 0 || st < 0) || (st > 0 && s > e) || (st < 0 && s < e);
        plan.start = s, plan.step = st;
    } else if (ew_is_float(o.dtype)) {
        float fs = (float)s, fe = (float)e, fst = (float)st;   /* aclScalar::ToFloat */
        bad = !(fst > 0 || fst < 0) || (fst > 0 && fs > fe) || (fst < 0 && fs < fe);
        plan.start = fs, plan.step = fst;
    } else {
        int64_t is = ew_repr_of(sd) == EW_REPR_I ? sv.i : (int64_t)s;
        int64_t ie = ew_repr_of(ed) == EW_REPR_I ? ev.i : (int64_t)e;
        int64_t ist = ew_repr_of(pd) == EW_REPR_I ? pv.i : (int64_t)st;
        bad = ist == 0 || (ist > 0 && is > ie) || (ist < 0 && is < ie);
        plan.istart = is, plan.istep = ist;
    }
    if (bad) {
        if ((o.dtype == ACL_DOUBLE || ew_is_float(o.dtype)) ? st == 0 : plan.istep == 0)
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "step must be nonzero.");
        else
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "upper bound and lower bound inconsistent with step "
                                "sign. start:%f, end:%f, step:%f.", s, e, st);
        return ACLNN_ERR_PARAM_INVALID;
    }
    const aclTensor *outs[1] = {out};
    return tv_make_executor(API, "Arange", pyaclnn_stub_numel(&o) ? arange_kernel : NULL, &plan, sizeof plan, NULL, 0,
                            outs, 1, workspaceSize, executor);
}

aclnnStatus aclnnArange(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, const aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnArange", workspace, workspaceSize, executor, stream);
}
