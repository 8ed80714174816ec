/*
 * aclnnCat (hicann/ops-math conversion/concat_d/op_api/aclnn_cat.cpp): out = tensors joined along dim;
 * aclnnStack (conversion/pack/op_api/aclnn_stack.cpp): along a new dim. Inputs of any strides; each is
 * cast to out's dtype with the NPU's Cast (equal dtypes: bytes copied, so bit-exact, class a).
 * Validation in the vendor's order:
 *   Cat:   1. tensors, each element, out non-NULL -> 161001; 2. every dtype and out's in the SoC's list
 *          -> 161002; 3. the dtypes promote and the promoted type casts to out -> 161002; 4. tensor 0 at most
 *          8 dims, dim in range, every tensor of tensor 0's rank and shape off dim -> 161002 (torch's legacy
 *          empty 1-D [0] tensors are skipped); (emulator) out has the joined shape.
 *   Stack: 1. tensors or out NULL -> 561103 (ACLNN_ERR_INNER_NULLPTR: the vendor's CHECK_RET code);
 *          2. dtypes in the list -> 161002; 3. promotion -> 161002; 4. at most 8 dims, dim in [-(r+1), r],
 *          equal shapes -> 161002; (emulator) out has the stacked shape.
 */
#include <stdlib.h>
#include <string.h>

#include "aclnnop/aclnn_cat.h"
#include "aclnnop/aclnn_stack.h"
#include "opbase/checks.h"
#include "kernels/view.h"

#define N(a) (sizeof a / sizeof a[0])
#define CAT_MAX_TENSORS 4096

/* The vendor's lists without the complex and 4-bit dtypes (not emulated). */
static const aclDataType CAT_A2[] = {ACL_FLOAT, ACL_INT32, ACL_INT64, ACL_FLOAT16, ACL_INT16, ACL_INT8,
                                     ACL_UINT8, ACL_DOUBLE, ACL_BF16, ACL_BOOL};
static const aclDataType CAT_950[] = {ACL_FLOAT,  ACL_INT32,  ACL_INT64,  ACL_FLOAT16, ACL_INT16,
                                      ACL_INT8,   ACL_UINT8,  ACL_UINT16, ACL_UINT32,  ACL_UINT64,
                                      ACL_DOUBLE, ACL_BF16,   ACL_BOOL,   ACL_FLOAT8_E4M3FN, ACL_FLOAT8_E5M2,
                                      ACL_HIFLOAT8, ACL_FLOAT8_E8M0};
static const aclDataType STACK_DTYPES[] = {ACL_INT8,    ACL_INT16, ACL_INT32, ACL_INT64,  ACL_UINT8,
                                           ACL_UINT16,  ACL_UINT32, ACL_UINT64, ACL_FLOAT16, ACL_FLOAT,
                                           ACL_BOOL,    ACL_DOUBLE, ACL_BF16};

typedef struct {
    int64_t dim;
    int stack;
} cat_plan;

static int legacy_empty(const pyaclnn_stub_tensor *t) { return t->ndim == 1 && t->shape[0] == 0; }

static void cat_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const cat_plan *p = launch->params;
    const pyaclnn_stub_tensor *out = &launch->outputs[0];
    size_t osz = ew_itemsize(out->dtype);
    int64_t along = 0;
    for (size_t j = 0; j < launch->n_inputs; j++) {
        const pyaclnn_stub_tensor *t = &launch->inputs[j];
        if (!p->stack && legacy_empty(t) && out->ndim != 1) continue;
        int64_t n = pyaclnn_stub_numel(t);
        unsigned char *src = tv_gather_bytes(t);   /* read first: an input may overlap out */
        if (src == NULL) {
            tv_fail_oom(launch);
            return;
        }
        size_t isz = ew_itemsize(t->dtype);
        int raw = t->dtype == out->dtype;
        int64_t idx[PYACLNN_STUB_MAX_DIMS] = {0};
        for (int64_t i = 0; i < n; i++) {
            int64_t off = out->offset;
            for (int64_t d = 0, od = 0; od < out->ndim; od++) {
                int64_t v;
                if (p->stack && od == p->dim) v = (int64_t)j;
                else v = idx[d++] + (!p->stack && od == p->dim ? along : 0);
                off += v * out->strides[od];
            }
            unsigned char *dst = tv_at(out, off);
            if (raw) memcpy(dst, src + i * (int64_t)isz, osz);
            else ew_store(dst, out->dtype, ew_cast(ew_load(src + i * (int64_t)isz, t->dtype), t->dtype, out->dtype));
            for (int64_t d = t->ndim - 1; d >= 0; d--) {
                if (++idx[d] < t->shape[d]) break;
                idx[d] = 0;
            }
        }
        free(src);
        if (!p->stack) along += t->shape[p->dim];
    }
}

static aclnnStatus join(const char *api, const char *op, int stack, const aclTensorList *tensors, int64_t dim,
                        aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor) {
    aclnnStatus rc;
    if (stack) {
        if (tensors == NULL || out == NULL) {
            pyaclnn_stub_report(ACLNN_ERR_INNER_NULLPTR, api, tensors == NULL ? "Input of aclnnStack should not be null."
                                                                              : "out is NULL");
            return ACLNN_ERR_INNER_NULLPTR;
        }
        const char *names[] = {"tensors"};
        const void *ptrs[] = {tensors};
        if ((rc = tv_check_not_null(api, names, ptrs, 1, workspaceSize, executor))) return rc;
    } else {
        const char *names[] = {"tensors", "out"};
        const void *ptrs[] = {tensors, out};
        if ((rc = tv_check_not_null(api, names, ptrs, 2, workspaceSize, executor))) return rc;
    }
    const aclTensor **items = malloc(sizeof *items * CAT_MAX_TENSORS);
    pyaclnn_stub_tensor *t = malloc(sizeof *t * CAT_MAX_TENSORS);
    size_t n = 0;
    pyaclnn_stub_tensor o;
    char b1[24], b2[24];
    if (items == NULL || t == NULL) {
        pyaclnn_stub_report(ACLNN_ERR_INNER_CREATE_EXECUTOR, api, "out of host memory");
        rc = ACLNN_ERR_INNER_CREATE_EXECUTOR;
        goto done;
    }
    if ((rc = tv_tensor_list_arg(api, "tensors", tensors, CAT_MAX_TENSORS, items, t, &n))) goto done;
    if ((rc = op_tensor_arg(api, "out", out, &o))) goto done;
    if (n == 0) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "tensors is empty: %s needs at least one tensor", op);
        rc = ACLNN_ERR_PARAM_INVALID;
        goto done;
    }
    int is950 = ew_soc_is_950();
    const aclDataType *list = stack ? STACK_DTYPES : is950 ? CAT_950 : CAT_A2;
    size_t nl = stack ? N(STACK_DTYPES) : is950 ? N(CAT_950) : N(CAT_A2);
    for (size_t i = 0; i < n; i++) {
        if ((rc = ew_check_dtype_in(api, "tensors", t[i].dtype, list, nl))) goto done;
    }
    if ((rc = ew_check_dtype_in(api, "out", o.dtype, list, nl))) goto done;
    aclDataType promoted = t[0].dtype;
    for (size_t i = 1; i < n; i++) {
        aclDataType next = t[i].dtype == promoted ? promoted : ew_promote(t[i].dtype, promoted);
        if (next == ACL_DT_UNDEFINED) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "tensor %zu dtype %s and dtype %s can not promote dtype.",
                                i, op_dtype_name(t[i].dtype, b1), op_dtype_name(promoted, b2));
            rc = ACLNN_ERR_PARAM_INVALID;
            goto done;
        }
        promoted = next;
    }
    if (promoted != o.dtype && !ew_can_cast(promoted, o.dtype)) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "Can not cast from %s to %s.", op_dtype_name(promoted, b1),
                            op_dtype_name(o.dtype, b2));
        rc = ACLNN_ERR_PARAM_INVALID;
        goto done;
    }
    /* The reference tensor for shapes: tensor 0 (Cat: the first that is not a legacy empty one). */
    size_t ref = 0;
    if (!stack)
        while (ref + 1 < n && legacy_empty(&t[ref])) ref++;
    int64_t rank = t[ref].ndim;
    if ((rc = ew_check_max_dim(api, "tensors[0]", &t[ref], EW_MAX_DIM))) goto done;
    int64_t d0 = dim;
    if (dim < 0) dim += rank + (stack ? 1 : 0);
    if (dim < 0 || dim > rank - (stack ? 0 : 1)) {
        if (stack)
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "dimnum %lld exceed the dim range of the [%lld, %lld].",
                                (long long)d0, (long long)-(rank + 1), (long long)rank);
        else
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "dimnum %lld exceed the dim range of the tensor %lld.",
                                (long long)d0, (long long)rank);
        rc = ACLNN_ERR_PARAM_INVALID;
        goto done;
    }
    int64_t shape[PYACLNN_STUB_MAX_DIMS], along = 0;
    for (size_t i = 0; i < n; i++) {
        if (!stack && legacy_empty(&t[i]) && rank != 1) continue;
        if (t[i].ndim != rank) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "dimnum of tensor %zu is [%lld], should be equal to "
                                "tensor 0 [%lld].", i, (long long)t[i].ndim, (long long)rank);
            rc = ACLNN_ERR_PARAM_INVALID;
            goto done;
        }
        for (int64_t j = 0; j < rank; j++) {
            if (!stack && j == dim) continue;
            if (t[i].shape[j] != t[ref].shape[j]) {
                pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "dim %lld of tensor %zu is [%lld], should be equal "
                                    "to tensor 0 [%lld].", (long long)j, i, (long long)t[i].shape[j],
                                    (long long)t[ref].shape[j]);
                rc = ACLNN_ERR_PARAM_INVALID;
                goto done;
            }
        }
        if (!stack) along += t[i].shape[dim];
    }
    int64_t ond = 0;
    for (int64_t j = 0; j < rank + (stack ? 1 : 0); j++) {
        if (stack) shape[ond++] = j == dim ? (int64_t)n : t[ref].shape[j - (j > dim)];
        else shape[ond++] = j == dim ? along : t[ref].shape[j];
    }
    if ((rc = ew_check_shape(api, "out", &o, shape, ond))) goto done;
    cat_plan plan = {dim, stack};
    const aclTensor *outs[1] = {out};
    rc = tv_make_executor(api, op, pyaclnn_stub_numel(&o) ? cat_kernel : NULL, &plan, sizeof plan, items, n, outs, 1,
                          workspaceSize, executor);
done:
    free(items);
    free(t);
    return rc;
}

aclnnStatus aclnnCatGetWorkspaceSize(const aclTensorList *tensors, int64_t dim, aclTensor *out, uint64_t *workspaceSize,
                                     aclOpExecutor **executor) {
    return join("aclnnCatGetWorkspaceSize", "Cat", 0, tensors, dim, out, workspaceSize, executor);
}

aclnnStatus aclnnCat(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, const aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnCat", workspace, workspaceSize, executor, stream);
}

aclnnStatus aclnnStackGetWorkspaceSize(const aclTensorList *tensors, int64_t dim, aclTensor *out,
                                       uint64_t *workspaceSize, aclOpExecutor **executor) {
    return join("aclnnStackGetWorkspaceSize", "Stack", 1, tensors, dim, out, workspaceSize, executor);
}

aclnnStatus aclnnStack(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, const aclrtStream stream) {
    return pyaclnn_stub_executor_run("aclnnStack", workspace, workspaceSize, executor, stream);
}
