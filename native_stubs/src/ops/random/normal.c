/*
 * aclnnInplaceNormal: selfRef = normal random numbers with mean and std (hicann/ops-math
 * random/dsa_random_normal/op_host/op_api/aclnn_normal.cpp; torch's normal_, randn, nn.init.normal_ /
 * xavier_normal_ / kaiming_normal_ / trunc_normal_).
 *
 * Numbers (rnd_philox.h, element i): Box-Muller on words 0 and 1, z = sqrt(-2 ln u1) cos(2 pi u2) with
 * u1 = (w0 + 1) 2^-32 in (0, 1] and u2 = w1 2^-32, in double (libm), rounded to fp32; then
 * z * std + mean in fp32 and one cast to selfRef's dtype (the arithmetic of the vendor's 950 kernel:
 * "z * float(std) + float(mean) in fp32, one fp32 -> T rounding"). Non-float dtypes are computed as
 * FLOAT and cast (toward zero; BOOL: != 0), as the vendor does; DOUBLE in double throughout.
 * Statistical fidelity: the NPU's stream is its own.
 */
#include <math.h>

#include "aclnnop/aclnn_normal.h"
#include "opbase/checks.h"
#include "kernels/philox.h"

#define RND_MAX_DIM 8   /* MAX_DIM_LEN */

/* The vendor's lists: with BF16 on Atlas A2/A3 and Ascend 950, without elsewhere. */
static const aclDataType SELF[] = {ACL_FLOAT16, ACL_FLOAT, ACL_DOUBLE, ACL_INT16, ACL_INT32,
                                   ACL_INT64,   ACL_INT8,  ACL_UINT8,  ACL_BOOL,  ACL_BF16};

typedef struct {
    float mean, std;
    int64_t seed, offset;
    aclDataType dtype;
} normal_params;

static void normal_one(void *ctx, uint64_t i, unsigned char *p) {
    const normal_params *prm = ctx;
    uint32_t w[4];
    rnd_philox((uint64_t)prm->seed, (uint64_t)prm->offset, i, w);
    double u1 = ((double)w[0] + 1.0) * 0x1p-32, u2 = (double)w[1] * 0x1p-32;
    double z = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2)   /* 2 pi */;
    ew_value v = {0};
    if (prm->dtype == ACL_DOUBLE) {
        v.f = z * (double)prm->std + (double)prm->mean;
        ew_store(p, ACL_DOUBLE, v);
        return;
    }
    float r = (float)z * prm->std + prm->mean;   /* fp32, no FMA (-ffp-contract=off) */
    v.f = (double)r;
    ew_store(p, prm->dtype, ew_cast(v, ACL_FLOAT, prm->dtype));
}

static void normal_kernel(const pyaclnn_stub_launch *launch) {
    const pyaclnn_stub_tensor *self = &launch->outputs[0];
    if (!op_view_in_device_memory(self, (int)(8 * ew_itemsize(self->dtype)))) {
        pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "%s: selfRef is not in device memory", launch->op_name);
        return;
    }
    rnd_for_each(self, normal_one, (void *)launch->params);
}

aclnnStatus aclnnInplaceNormalGetWorkspaceSize(const aclTensor *selfRef, float mean, float std, int64_t seed,
                                               int64_t offset, uint64_t *workspaceSize, aclOpExecutor **executor) {
    static const char API[] = "aclnnInplaceNormalGetWorkspaceSize";
    aclnnStatus rc = ew_check_not_null(API, NULL, 0, workspaceSize, executor);   /* OP_CHECK_COMM_INPUT */
    ew_ptr_arg ptrs[] = {{"selfRef", selfRef}};
    if (rc || (rc = ew_check_not_null(API, ptrs, 1, workspaceSize, executor))) return rc;
    if (std < 0) {   /* the vendor checks std with the NULL checks: 161001 */
        pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, API, "Normal expects std >= 0.0, but found std [%f].", std);
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    pyaclnn_stub_tensor self;
    if ((rc = op_tensor_arg(API, "selfRef", selfRef, &self))) return rc;
    if (self.dtype == ACL_BF16 && pyaclnn_stub_soc_family() == PYACLNN_SOC_OTHER) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "Self dtype DT_BF16 not support in current soc version.");
        return ACLNN_ERR_PARAM_INVALID;
    }
    if ((rc = ew_check_dtype_in(API, "selfRef", self.dtype, SELF, sizeof SELF / sizeof SELF[0])) ||
        (rc = ew_check_max_dim(API, "selfRef", &self, RND_MAX_DIM)))
        return rc;
    normal_params prm = {mean, std, seed, offset, self.dtype};
    aclOpExecutor *e = pyaclnn_stub_executor_new("InplaceNormal", pyaclnn_stub_numel(&self) ? normal_kernel : NULL,
                                                 &prm, sizeof prm, NULL, 0, &selfRef, 1, 0);
    if (e == NULL) {
        pyaclnn_stub_report(ACLNN_ERR_INNER_CREATE_EXECUTOR, API, "could not create the executor (out of memory)");
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    }
    *workspaceSize = 0;
    *executor = e;
    return ACLNN_SUCCESS;
}

EW_DEFINE_PHASE2(aclnnInplaceNormal)
