/*
 * aclnnInplaceNormal (random.toml): selfRef = normal random numbers with mean and std (hicann/ops-math
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

#include "ops/random/fill.h"

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

void normal_kernel(const pyaclnn_stub_launch *launch) {
    rnd_fill_self(launch, normal_one);
}

/* normal_std std: std >= 0 (the vendor checks it with the NULL checks: 161001). */
aclnnStatus opc_normal_std(op_call *c, const op_step *s) {
    float std = (float)op_argument(c, s, 0)->d;
    if (std < 0) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, c->api, "Normal expects std >= 0.0, but found std [%f].", std);
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    return ACLNN_SUCCESS;
}

/* normal_plan selfRef mean std seed offset: the kernel's parameters. */
aclnnStatus opc_normal_plan(op_call *c, const op_step *s) {
    normal_params *prm = op_params(c, sizeof *prm);
    *prm = (normal_params){(float)op_argument(c, s, 1)->d, (float)op_argument(c, s, 2)->d, op_argument(c, s, 3)->i,
                           op_argument(c, s, 4)->i, op_tensor(c, s, 0)->dtype};
    return ACLNN_SUCCESS;
}

/* ---- aclnnInplaceNormalTensor (random_tensor.toml) -------------------------------------------- */

/* normal_tensor_plan selfRef mean std offset: the kernel's parameters; seed and base offset come from the
 * executor's inputs when it runs (fill.h rnd_seed_offset). */
aclnnStatus opc_normal_tensor_plan(op_call *c, const op_step *s) {
    normal_params *prm = op_params(c, sizeof *prm);
    *prm = (normal_params){(float)op_argument(c, s, 1)->d, (float)op_argument(c, s, 2)->d, 0, op_argument(c, s, 3)->i,
                           op_tensor(c, s, 0)->dtype};
    return ACLNN_SUCCESS;
}

void normal_tensor_kernel(const pyaclnn_stub_launch *launch) {
    normal_params prm = *(const normal_params *)launch->params;
    uint64_t seed, offset;
    if (!rnd_seed_offset(launch, (uint64_t)prm.offset, &seed, &offset)) return;
    prm.seed = (int64_t)seed;
    prm.offset = (int64_t)offset;
    const pyaclnn_stub_tensor *self = &launch->outputs[0];
    if (!op_view_in_device_memory(self, (int)(8 * ew_itemsize(self->dtype)))) {
        pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "%s: selfRef is not in device memory", launch->op_name);
        return;
    }
    rnd_for_each(self, normal_one, &prm);
}

/* rnd_seed_tensors seedTensor offsetTensor [1]: both INT64 (OP_CHECK_DTYPE_NOT_MATCH); with the 1, both of shape
 * [1] (OP_CHECK_SHAPE_NOT_EQUAL_WITH_EXPECTED_SIZE, InplaceNormalTensor), else at least one element (the
 * emulator's check where the vendor leaves it to the kernel: the kernel reads one int64 of each; skipped after
 * an empty output, where the vendor has returned). */
aclnnStatus opc_rnd_seed_tensors(op_call *c, const op_step *s) {
    int shape_one = s->has_n && s->n == 1;
    if (!shape_one && c->nothing) return ACLNN_SUCCESS;   /* after the vendor's early return on an empty output */
    for (int k = 0; k < 2; k++) {
        const pyaclnn_stub_tensor *t = op_tensor(c, s, k);
        if (t->dtype != ACL_INT64) {
            char b[24];
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Tensor %s expected dtype is INT64 but found %s.",
                                op_pname(c, s, k), op_dtype_name(t->dtype, b));
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    for (int k = 0; k < 2; k++) {
        const pyaclnn_stub_tensor *t = op_tensor(c, s, k);
        static const int64_t one[1] = {1};
        if (shape_one) {
            aclnnStatus rc = op_expected_size(c->api, op_pname(c, s, k), t, one, 1);
            if (rc) return rc;
        } else if (pyaclnn_stub_numel(t) < 1) {
            pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "%s must hold one element, but it is empty.",
                                op_pname(c, s, k));
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    return ACLNN_SUCCESS;
}
