/* The launch of the random fillers (InplaceUniform, InplaceNormal): selfRef must be device memory (else the
 * AI Core exception the NPU raises), then `one` writes every element from its Philox words. */
#ifndef PYACLNN_OPS_RANDOM_FILL_H
#define PYACLNN_OPS_RANDOM_FILL_H

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

#endif
