/*
 * aclnnInplaceUniform: selfRef = uniform random numbers in [from, to) (hicann/ops-math
 * random/dsa_random_uniform/op_host/op_api/aclnn_uniform.cpp; torch's uniform_, rand, nn.init.*uniform_).
 *
 * Numbers (rnd_philox.h, element i): u = top 24 bits of word 0 * 2^-24, value = from + u * (to - from)
 * in fp32 (from and to rounded to fp32 first), then cast to selfRef's dtype with the NPU's Cast rules
 * (integers: toward zero); DOUBLE uses 53 bits and double arithmetic. A value that rounds up to `to`
 * becomes `from` (torch's rule), so the interval stays half-open. Statistical fidelity: the NPU's
 * stream is its own.
 */
#include "aclnnop/aclnn_uniform.h"
#include "opbase/checks.h"
#include "kernels/philox.h"

#define RND_MAX_DIM 8   /* MAX_SUPPORT_DIMS_NUMS */

static const aclDataType SELF[] = {ACL_FLOAT, ACL_INT32, ACL_INT64, ACL_FLOAT16, ACL_INT16,
                                   ACL_INT8,  ACL_UINT8, ACL_DOUBLE, ACL_BF16};

typedef struct {
    double from, to;
    uint64_t seed, offset;
    aclDataType dtype;
} uniform_params;

static void uniform_one(void *ctx, uint64_t i, unsigned char *p) {
    const uniform_params *prm = ctx;
    uint32_t w[4];
    rnd_philox(prm->seed, prm->offset, i, w);
    ew_value v = {0};
    if (prm->dtype == ACL_DOUBLE) {
        v.f = prm->from + rnd_u53(w[0], w[1]) * (prm->to - prm->from);
        if (v.f >= prm->to && prm->from < prm->to) v.f = prm->from;
        ew_store(p, ACL_DOUBLE, v);
        return;
    }
    float from = (float)prm->from, to = (float)prm->to;
    v.f = (double)(from + rnd_u24(w[0]) * (to - from));
    ew_value r = ew_cast(v, ACL_FLOAT, prm->dtype);
    ew_value top = ew_cast((ew_value){.f = (double)to}, ACL_FLOAT, prm->dtype);
    int at_top = ew_repr_of(prm->dtype) == EW_REPR_F && r.f >= top.f;   /* integers truncate: never up */
    if (at_top && from < to) r = ew_cast((ew_value){.f = (double)from}, ACL_FLOAT, prm->dtype);
    ew_store(p, prm->dtype, r);
}

static void uniform_kernel(const pyaclnn_stub_launch *launch) {
    const pyaclnn_stub_tensor *self = &launch->outputs[0];
    if (!op_view_in_device_memory(self, (int)(8 * ew_itemsize(self->dtype)))) {
        pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "%s: selfRef is not in device memory", launch->op_name);
        return;
    }
    rnd_for_each(self, uniform_one, (void *)launch->params);
}

aclnnStatus aclnnInplaceUniformGetWorkspaceSize(const aclTensor *selfRef, double from, double to, uint64_t seed,
                                                uint64_t offset, uint64_t *workspaceSize, aclOpExecutor **executor) {
    static const char API[] = "aclnnInplaceUniformGetWorkspaceSize";
    ew_ptr_arg ptrs[] = {{"selfRef", selfRef}};
    aclnnStatus rc = ew_check_not_null(API, ptrs, 1, workspaceSize, executor);
    pyaclnn_stub_tensor self;
    if (rc || (rc = op_tensor_arg(API, "selfRef", selfRef, &self))) return rc;
    if (self.dtype == ACL_BF16 && pyaclnn_stub_soc_family() == PYACLNN_SOC_OTHER) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "Input dtype of aclnnInplaceUniform does not support "
                            "bfloat16 in the current soc version.");
        return ACLNN_ERR_PARAM_INVALID;
    }
    if ((rc = ew_check_dtype_in(API, "selfRef", self.dtype, SELF, sizeof SELF / sizeof SELF[0])) ||
        (rc = ew_check_max_dim(API, "selfRef", &self, RND_MAX_DIM)))
        return rc;
    if (from > to) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "from cannot be greater than to, from is %f and to is %f.",
                            from, to);
        return ACLNN_ERR_PARAM_INVALID;
    }
    uniform_params prm = {from, to, seed, offset, self.dtype};
    aclOpExecutor *e = pyaclnn_stub_executor_new("InplaceUniform", pyaclnn_stub_numel(&self) ? uniform_kernel : NULL,
                                                 &prm, sizeof prm, NULL, 0, &selfRef, 1, 0);
    if (e == NULL) {
        pyaclnn_stub_report(ACLNN_ERR_INNER_CREATE_EXECUTOR, API, "could not create the executor (out of memory)");
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    }
    *workspaceSize = 0;
    *executor = e;
    return ACLNN_SUCCESS;
}

EW_DEFINE_PHASE2(aclnnInplaceUniform)
