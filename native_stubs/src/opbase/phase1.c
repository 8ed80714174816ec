/*
 * op_phase1: runs an operator's definition (opbase.h) -- its steps in order, then the executor.
 */
#include <stdlib.h>
#include <string.h>

#include "opbase/checks.h"
#include "opbase/opbase.h"

void *op_params(op_call *c, size_t size) {
    /* a programming error of a family (its parameter block outgrew OP_PARAMS_MAX): caught by its tests */
    if (size > sizeof c->params) return NULL;
    memset(c->params, 0, size);
    c->params_size = size;
    return c->params;
}

void *op_scratch(op_call *c, size_t size) {
    if (c->n_scratch >= OP_MAX_SCRATCH) return NULL;
    void *p = calloc(1, size ? size : 1);
    if (p != NULL) c->scratch[c->n_scratch++] = p;
    return p;
}

int op_param_index(const op_def *def, const char *name) {
    for (int i = 0; i < def->n_params; i++)
        if (strcmp(def->params[i].name, name) == 0) return i;
    return -1;
}

/* The handle the executor gets for tensor parameter i: NULL when it was read as absent (an optional NULL,
 * or an output the call leaves out, e.g. by an outputMask), or for a slot no parameter fills (i = -1). */
static const aclTensor *io_handle(const op_call *c, int i) {
    if (i < 0) return NULL;
    return (c->read >> i & 1u) && !c->t[i].present ? NULL : c->arg[i].p;
}

aclnnStatus op_make_executor(op_call *c, int with_tensors) {
    const op_def *d = c->def;
    const aclTensor *ins[OP_MAX_IO], *outs[OP_MAX_IO];
    const aclTensor *const *in = c->in_handles, *const *out = c->out_handles;
    size_t n_in = c->n_in, n_out = c->n_out;
    if (in == NULL) {
        for (size_t k = 0; k < d->n_inputs; k++) ins[k] = io_handle(c, d->inputs[k]);
        in = ins;
        n_in = d->n_inputs;
    }
    if (out == NULL) {
        for (size_t k = 0; k < d->n_outputs; k++) outs[k] = io_handle(c, d->outputs[k]);
        out = outs;
        n_out = d->n_outputs;
    }
    if (!with_tensors) n_in = n_out = 0;
    aclOpExecutor *e = pyaclnn_stub_executor_new(op_exec_name(c), c->nothing ? NULL : c->kernel, c->params,
                                                 c->params_size, in, n_in, out, n_out, c->workspace);
    if (e == NULL) {
        pyaclnn_stub_report(ACLNN_ERR_INNER_CREATE_EXECUTOR, c->api, "could not create the executor (out of memory)");
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    }
    if (c->shape_output >= 0 && !c->nothing && with_tensors &&
        pyaclnn_stub_executor_set_out_shape(e, (size_t)c->shape_output, (aclTensor *)out[c->shape_output]) != 0) {
        aclDestroyAclOpExecutor(e);
        pyaclnn_stub_report(ACLNN_ERR_INNER_CREATE_EXECUTOR, c->api, "could not create the executor (out of memory)");
        return ACLNN_ERR_INNER_CREATE_EXECUTOR;
    }
    c->made = e;
    return ACLNN_SUCCESS;
}

static aclnnStatus run(op_call *c) {
    const op_def *def = c->def;
    for (size_t i = 0; i < def->n_steps; i++) {
        aclnnStatus rc = def->steps[i].fn(c, &def->steps[i]);
        if (rc != ACLNN_SUCCESS) {
            if (c->made != NULL) aclDestroyAclOpExecutor(c->made);
            return rc;
        }
        if (c->done) break;
    }
    if (c->made == NULL) {
        aclnnStatus rc = op_make_executor(c, 1);
        if (rc != ACLNN_SUCCESS) return rc;
    }
    *c->workspace_size = c->workspace;
    *c->executor = c->made;
    return ACLNN_SUCCESS;
}

aclnnStatus op_phase1(const op_def *def, const op_arg *args, uint64_t *workspaceSize, aclOpExecutor **executor) {
    op_call c;
    /* Only the header is initialised: snapshots and the parameter block are written before they are read. */
    memset(&c, 0, offsetof(op_call, t));
    c.def = def;
    c.api = def->api;
    c.arg = args;
    c.workspace_size = workspaceSize;
    c.executor = executor;
    c.ndim = -1;
    c.compute = ACL_DT_UNDEFINED;
    c.kernel = def->kernel;
    c.nothing = 0;
    c.done = 0;
    c.workspace = 0;
    c.params_size = 0;
    c.in_handles = c.out_handles = NULL;
    c.n_in = c.n_out = 0;
    c.made = NULL;
    c.shape_output = -1;
    c.n_scratch = 0;
    aclnnStatus rc = run(&c);
    for (uint8_t k = 0; k < c.n_scratch; k++) free(c.scratch[k]);
    return rc;
}
