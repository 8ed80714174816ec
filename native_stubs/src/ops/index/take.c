/*
 * aclnnTake (take.toml): out[i] = self's element at flat position index[i] (negative: + n), bytes moved; an index
 * outside [-n, n) fails the task as the NPU's GatherV2 faults.
 */
#include <stdlib.h>
#include <string.h>

#include "kernels/view.h"
#include "opbase/checks.h"
#include "ops_decls.h"

/* inputs: self, index; output: out. */
void take_kernel(const pyaclnn_stub_launch *launch) {
    if (!tv_launch_views_ok(launch)) return;
    const pyaclnn_stub_tensor *self = &launch->inputs[0], *index = &launch->inputs[1], *out = &launch->outputs[0];
    int64_t n = pyaclnn_stub_numel(self), m = pyaclnn_stub_numel(index);
    size_t size = ew_itemsize(self->dtype);
    double *idx = tv_load_double(index);
    if (idx == NULL) {
        tv_fail_oom(launch);
        return;
    }
    tv_iter it;
    tv_iter_init(&it, out);
    for (int64_t i = 0; i < m; i++, tv_iter_next(&it)) {
        int64_t k = (int64_t)idx[i];
        if (k < -n || k >= n) {
            pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "%s: index %lld is out of bounds for %lld elements",
                                   launch->op_name, (long long)k, (long long)n);
            break;
        }
        memcpy(tv_at(out, it.off), tv_at(self, tv_offset(self, k < 0 ? k + n : k)), size);
    }
    free(idx);
}

/* take_nonempty self index: "tried to take from an empty tensor" when self is empty and index is not. */
aclnnStatus opc_take_nonempty(op_call *c, const op_step *s) {
    if (pyaclnn_stub_numel(op_tensor(c, s, 0)) != 0 || pyaclnn_stub_numel(op_tensor(c, s, 1)) == 0) return ACLNN_SUCCESS;
    return op_invalidf(c->api, "IndexError: take(): tried to take from an empty tensor");
}
