/*
 * aclnnInplaceUniform (random.toml): selfRef = uniform random numbers in [from, to) (hicann/ops-math
 * random/dsa_random_uniform/op_host/op_api/aclnn_uniform.cpp; torch's uniform_, rand, nn.init.*uniform_).
 *
 * Numbers (rnd_philox.h, element i): u = top 24 bits of word 0 * 2^-24, value = from + u * (to - from)
 * in fp32 (from and to rounded to fp32 first), then cast to selfRef's dtype with the NPU's Cast rules
 * (integers: toward zero); DOUBLE uses 53 bits and double arithmetic. A value that rounds up to `to`
 * becomes `from` (torch's rule), so the interval stays half-open. Statistical fidelity: the NPU's
 * stream is its own.
 */
#include "ops/random/fill.h"

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

void uniform_kernel(const pyaclnn_stub_launch *launch) {
    rnd_fill_self(launch, uniform_one);
}

/* uniform_plan selfRef from to seed offset: from <= to; the kernel's parameters. */
aclnnStatus opc_uniform_plan(op_call *c, const op_step *s) {
    double from = op_argument(c, s, 1)->d, to = op_argument(c, s, 2)->d;
    if (from > to) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "from cannot be greater than to, from is %f and to is %f.",
                            from, to);
        return ACLNN_ERR_PARAM_INVALID;
    }
    uniform_params *prm = op_params(c, sizeof *prm);
    *prm = (uniform_params){from, to, (uint64_t)op_argument(c, s, 3)->i, (uint64_t)op_argument(c, s, 4)->i,
                            op_tensor(c, s, 0)->dtype};
    return ACLNN_SUCCESS;
}

/* rnd_no_bf16 selfRef "message" (Uniform, Normal): on SoCs without bf16 a BF16 selfRef is refused with the
 * vendor's message. */
aclnnStatus opc_rnd_no_bf16(op_call *c, const op_step *s) {
    if (op_tensor(c, s, 0)->dtype != ACL_BF16 || pyaclnn_stub_soc_family() != PYACLNN_SOC_OTHER) return ACLNN_SUCCESS;
    pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "%s", s->text);
    return ACLNN_ERR_PARAM_INVALID;
}

/* ---- aclnnInplaceUniformTensor (random_tensor.toml) ------------------------------------------- */

/* uniform_tensor_plan selfRef from to offset: from <= to; the kernel's parameters (seed and base offset are
 * read when it runs: fill.h rnd_seed_offset). */
aclnnStatus opc_uniform_tensor_plan(op_call *c, const op_step *s) {
    double from = op_argument(c, s, 1)->d, to = op_argument(c, s, 2)->d;
    if (to < from) {   /* as uniform_plan (NaN passes) */
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "from cannot be greater than to, from is %f and to is %f.",
                            from, to);
        return ACLNN_ERR_PARAM_INVALID;
    }
    uniform_params *prm = op_params(c, sizeof *prm);
    *prm = (uniform_params){from, to, 0, (uint64_t)op_argument(c, s, 3)->i, op_tensor(c, s, 0)->dtype};
    return ACLNN_SUCCESS;
}

void uniform_tensor_kernel(const pyaclnn_stub_launch *launch) {
    uniform_params prm = *(const uniform_params *)launch->params;
    if (!rnd_seed_offset(launch, prm.offset, &prm.seed, &prm.offset)) return;
    const pyaclnn_stub_tensor *self = &launch->outputs[0];
    if (!op_view_in_device_memory(self, (int)(8 * ew_itemsize(self->dtype)))) {
        pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "%s: selfRef is not in device memory", launch->op_name);
        return;
    }
    rnd_for_each(self, uniform_one, &prm);
}
