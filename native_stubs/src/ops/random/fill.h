/* The launch of the random fillers (InplaceUniform, InplaceNormal): selfRef must be device memory (else the
 * AI Core exception the NPU raises), then `one` writes every element from its Philox words. */
#ifndef PYACLNN_OPS_RANDOM_FILL_H
#define PYACLNN_OPS_RANDOM_FILL_H

#include <string.h>

#include "kernels/philox.h"
#include "ops_decls.h"

static inline void rnd_fill_self(const pyaclnn_stub_launch *launch,
                                 void (*one)(void *ctx, uint64_t i, unsigned char *p)) {
    const pyaclnn_stub_tensor *self = &launch->outputs[0];
    if (!op_view_in_device_memory(self, (int)(8 * ew_itemsize(self->dtype)))) {
        pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "%s: selfRef is not in device memory", launch->op_name);
        return;
    }
    rnd_for_each(self, one, (void *)launch->params);
}

/* The Tensor forms (InplaceNormalTensor, InplaceUniformTensor, DropoutGenMaskV2Tensor: torch_npu's RNG under
 * graph capture): seed and base offset are read from launch->inputs[0] and [1] (INT64, at least one element,
 * checked in phase 1) when the kernel runs, so a replayed capture uses the values they hold then; the
 * offset is base + the launch's own offset (the vendor's ProcessOffsetTensor / Add). 0 after failing the task
 * when either is not in device memory. */
static inline int rnd_seed_offset(const pyaclnn_stub_launch *launch, uint64_t add, uint64_t *seed, uint64_t *offset) {
    const pyaclnn_stub_tensor *st = &launch->inputs[0], *ot = &launch->inputs[1];
    if (!op_view_in_device_memory(st, 64) || !op_view_in_device_memory(ot, 64)) {
        pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "%s: seedTensor or offsetTensor is not in device memory",
                               launch->op_name);
        return 0;
    }
    int64_t sv, ov;
    memcpy(&sv, (const unsigned char *)st->data + st->offset * 8, 8);
    memcpy(&ov, (const unsigned char *)ot->data + ot->offset * 8, 8);
    *seed = (uint64_t)sv;
    *offset = (uint64_t)ov + add;
    return 1;
}

#endif
