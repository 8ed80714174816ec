/*
 * aclnnIndexPutImpl (hicann/ops-nn index/index_put_v2/op_api/aclnn_index_put_impl.cpp):
 * selfRef[indices] = values, or += with accumulate (torch's index_put_; the backward of x[idx]). The
 * indexed positions follow idx_gather.h; values broadcast to the indexed result's shape.
 * Validation in the vendor's order:
 *   1. selfRef, values, indices and each of its elements non-NULL                     -> 161001
 *   2. selfRef and values dtypes in the list, non-empty indices INT32/INT64/BOOL      -> 161002
 *   3. values dtype == selfRef dtype                                                  -> 161002
 *   4. selfRef at most 8 dims, no more indices than selfRef's dims                    -> 161002
 *   (emulator) BOOL masks refused, values broadcast to the indexed shape              -> 161002
 * Fidelity: without accumulate, bytes are moved (class a; with repeated positions the last write wins,
 * which torch leaves undefined). With accumulate each addition is done in fp32 (integers: int64) and
 * rounded to selfRef's dtype, in index order; the NPU's order of atomic adds on repeated positions is not
 * published, so repeated positions in float dtypes are class c.
 */
#include <stdlib.h>
#include <string.h>

#include "aclnnop/aclnn_index_put_impl.h"
#include "opbase/checks.h"
#include "kernels/gather.h"

#define N(a) (sizeof a / sizeof a[0])

static const aclDataType PUT_DTYPES[] = {ACL_FLOAT, ACL_INT32, ACL_INT64, ACL_FLOAT16, ACL_INT16,
                                         ACL_INT8,  ACL_UINT8, ACL_DOUBLE, ACL_BOOL,   ACL_BF16};
static const aclDataType INDICES_DTYPES[] = {ACL_INT32, ACL_INT64, ACL_BOOL};

static void put_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const idx_plan *p = launch->params;
    const pyaclnn_stub_tensor *self = &launch->outputs[0], *values = &launch->inputs[0];
    pyaclnn_stub_tensor tensors[1 + IDX_MAX_SLOTS], idx[IDX_MAX_SLOTS];
    tensors[0] = *self;
    for (size_t i = 1; i < launch->n_inputs && i <= IDX_MAX_SLOTS; i++) tensors[i] = launch->inputs[i];
    idx_slot_views(p, tensors, idx);
    int64_t n = 1;
    for (int d = 0; d < p->out_ndim; d++) n *= p->out_shape[d];
    /* Every target offset first (a bad index faults before anything is written), and the values. */
    int64_t *offs = malloc(sizeof(int64_t) * (size_t)n + 1);
    unsigned char *vals = tv_gather_bytes(values);
    if (offs == NULL || vals == NULL) {
        free(offs);
        free(vals);
        tv_fail_oom(launch);
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        if (!idx_self_offset(p, self, idx, i, &offs[i])) {
            free(offs);
            free(vals);
            return;
        }
    }
    size_t isz = ew_itemsize(self->dtype);
    aclDataType dt = self->dtype, acc = ew_is_float(dt) ? (dt == ACL_DOUBLE ? ACL_DOUBLE : ACL_FLOAT) : ACL_INT64;
    for (int64_t i = 0; i < n; i++) {
        /* values element broadcast to out position i (right-aligned, size-1 dims repeat) */
        int64_t rem = i, vi = 0, vstride = 1;
        for (int d = p->out_ndim - 1, vd = (int)values->ndim - 1; d >= 0; d--, vd--) {
            int64_t o = rem % p->out_shape[d];
            rem /= p->out_shape[d];
            if (vd < 0) continue;
            if (values->shape[vd] != 1) vi += o * vstride;
            vstride *= values->shape[vd];
        }
        const unsigned char *src = vals + vi * (int64_t)isz;
        unsigned char *dst = tv_at(self, offs[i]);
        if (!p->accumulate) {
            memcpy(dst, src, isz);
            continue;
        }
        if (dt == ACL_BOOL) {
            *dst = (unsigned char)(*dst || *src);
            continue;
        }
        ew_value a = ew_cast(ew_load(dst, dt), dt, acc), b = ew_cast(ew_load(src, dt), dt, acc);
        ew_value r;
        if (acc == ACL_INT64) r = (ew_value){0, (int64_t)((uint64_t)a.i + (uint64_t)b.i)};
        else if (acc == ACL_FLOAT) r = (ew_value){(float)(a.f + b.f), 0};
        else r = (ew_value){a.f + b.f, 0};
        ew_store(dst, dt, ew_cast(r, acc, dt));
    }
    free(offs);
    free(vals);
}

aclnnStatus aclnnIndexPutImplGetWorkspaceSize(aclTensor *selfRef, const aclTensorList *indices,
                                              const aclTensor *values, const bool accumulate, const bool unsafe,
                                              uint64_t *workspaceSize, aclOpExecutor **executor) {
    static const char API[] = "aclnnIndexPutImplGetWorkspaceSize";
    const char *names[] = {"selfRef", "values", "indices"};
    const void *ptrs[] = {selfRef, values, indices};
    aclnnStatus rc = tv_check_not_null(API, names, ptrs, 3, workspaceSize, executor);
    if (rc) return rc;
    const aclTensor *items[1 + IDX_MAX_SLOTS];
    pyaclnn_stub_tensor snaps[1 + IDX_MAX_SLOTS], s, v;
    size_t k;
    if ((rc = tv_tensor_list_arg(API, "indices", indices, IDX_MAX_SLOTS, items + 1, snaps + 1, &k))) return rc;
    if ((rc = op_tensor_arg(API, "selfRef", selfRef, &s))) return rc;
    if ((rc = op_tensor_arg(API, "values", values, &v))) return rc;
    if ((rc = ew_check_dtype_in(API, "selfRef", s.dtype, PUT_DTYPES, N(PUT_DTYPES)))) return rc;
    if ((rc = ew_check_dtype_in(API, "values", v.dtype, PUT_DTYPES, N(PUT_DTYPES)))) return rc;
    for (size_t i = 0; i < k; i++) {
        if (pyaclnn_stub_numel(&snaps[1 + i]) == 0) continue;
        if ((rc = ew_check_dtype_in(API, "indices", snaps[1 + i].dtype, INDICES_DTYPES, N(INDICES_DTYPES)))) return rc;
    }
    if ((rc = tv_check_same_dtype(API, "selfRef", s.dtype, "values", v.dtype))) return rc;
    if ((rc = ew_check_max_dim(API, "selfRef", &s, EW_MAX_DIM))) return rc;
    if ((int64_t)k > (s.ndim ? s.ndim : 1)) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "indicesSize must <= self DimSize.");
        return ACLNN_ERR_PARAM_INVALID;
    }
    for (size_t i = 0; i < k; i++) {
        if (pyaclnn_stub_numel(&snaps[1 + i]) != 0 && snaps[1 + i].dtype == ACL_BOOL) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "indices[%zu] is a BOOL mask: not supported by the "
                                "pyaclnn CPU emulator (pass INT64/INT32 indices, e.g. mask.nonzero())", i);
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    idx_plan plan = {.k = (int)k, .accumulate = accumulate};
    for (size_t i = 0; i < k; i++) plan.input_of[i] = 1 + (int)i;
    snaps[0] = s;
    if ((rc = idx_plan_make(API, snaps, &plan))) return rc;
    /* values must broadcast to the indexed shape */
    for (int64_t d = 0; d < v.ndim; d++) {
        int64_t od = plan.out_ndim - v.ndim + d;
        if (od < 0 ? v.shape[d] != 1 : (v.shape[d] != 1 && v.shape[d] != plan.out_shape[od])) {
            char a[200], b[200];
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "shape mismatch: value tensor of shape %s cannot be "
                                "broadcast to indexing result of shape %s",
                                tv_shape_text(v.shape, v.ndim, a, sizeof a),
                                tv_shape_text(plan.out_shape, plan.out_ndim, b, sizeof b));
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    int64_t n = 1;
    for (int d = 0; d < plan.out_ndim; d++) n *= plan.out_shape[d];
    items[0] = values;
    const aclTensor *outs[1] = {selfRef};
    return tv_make_executor(API, "IndexPutImpl", n && pyaclnn_stub_numel(&s) ? put_kernel : NULL, &plan, sizeof plan,
                            items, 1 + k, outs, 1, workspaceSize, executor);
}

aclnnStatus aclnnIndexPutImpl(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnIndexPutImpl", workspace, workspaceSize, executor, stream);
}
